//! The skiplist's splice (the invariants are in the parent module's doc): where the last
//! insert went, how a node is linked there, how a staged node links elsewhere without
//! moving it, and how a key a little out of order is placed from its low brackets.

use std::cmp::Ordering;
use std::ptr;

use super::*;

impl SkipList {
    /// Links `node` at `place`, found by its search before nodes linked since: at each level
    /// where the place's next node is no longer the previous node's successor, the node goes
    /// after the ones linked in between. A node the splice brackets takes the splice's place
    /// instead, and the splice moves onto it (keys inserted in order). Any other node leaves
    /// the splice where it is (a run of keys in order goes on there while nodes staged before
    /// it link elsewhere), but for the levels at which it lands inside the splice's bracket:
    /// it becomes the bracket's nearer end there.
    pub(super) fn link(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering + Copy,
        node: Node,
        place: &Place,
        splice: &mut Splice,
    ) {
        // SAFETY: a staged node, fully written.
        let target = unsafe { node_target(node) };
        if self.brackets(compare, splice, &target) {
            self.link_at_splice(node, splice);
            return;
        }
        // Outside the level-0 bracket: before it, or else after it.
        let before = splice.prev[0] != self.head;
        // SAFETY: a linked node of this list when not the head.
        let before = before
            && compare_with(compare, unsafe { node_key(splice.prev[0]) }, &target)
                == Ordering::Greater;
        // SAFETY: a staged node, fully written; its height byte follows its level-0 link.
        let height = usize::from(unsafe { *node.add(PTR) });
        let mut at = Splice {
            prev: [self.head as Node; MAX_HEIGHT],
            next: [ptr::null(); MAX_HEIGHT],
        };
        let list_height = self.height();
        for level in 0..height.min(list_height) {
            let mut prev = place.prev[level];
            // SAFETY: `prev` is the head or a linked node that reaches `level` (the search
            // stood on it there); links only this writer makes.
            let mut next = unsafe { tower(prev, level).load(AtomicOrdering::Relaxed) };
            if !std::ptr::eq(next, place.next[level]) {
                // SAFETY: as above, for each node passed.
                while !next.is_null()
                    && compare_with(compare, unsafe { node_key(next) }, &target) == Ordering::Less
                {
                    prev = next;
                    next = unsafe { tower(prev, level).load(AtomicOrdering::Relaxed) };
                }
            }
            at.prev[level] = prev;
            at.next[level] = next;
        }
        // Where the node lands inside the splice's bracket (right after its previous node:
        // the bracket is tight), it is the bracket's nearer end.
        for level in 0..height {
            if at.prev[level] == splice.prev[level] {
                if before {
                    splice.prev[level] = node;
                } else {
                    splice.next[level] = node;
                }
            }
        }
        self.link_at_splice(node, &mut at);
    }

    /// Links `node` at the splice, which must bracket it, and moves the splice onto it.
    pub(super) fn link_at_splice(&self, node: Node, splice: &mut Splice) {
        // SAFETY: a staged node, fully written; its height byte follows its level-0 link.
        let height = usize::from(unsafe { *node.add(PTR) });
        let list_height = self.max_height.load(AtomicOrdering::Relaxed);
        if height > list_height {
            // The splice holds the head and null for the new levels. A reader that sees the
            // new height before the links sees null next pointers at those levels: harmless.
            self.max_height.store(height, AtomicOrdering::Relaxed);
        }
        let node = node as *mut u8;
        // SAFETY: the node's tower has `height` slots; the splice's nodes reach every level
        // below the list's height (module doc).
        unsafe {
            for level in 0..height {
                tower(node, level).store(splice.next[level] as *mut u8, AtomicOrdering::Relaxed);
                // Publish: the node's contents happen-before any Acquire load that sees it.
                tower(splice.prev[level], level).store(node, AtomicOrdering::Release);
                // The splice moves onto the new node: the place just after it.
                splice.prev[level] = node;
            }
        }
    }

    /// True when `target` falls between the splice's nodes at level 0, and so at every level
    /// (the brackets nest): an insert there can link its node without a search.
    #[inline(always)]
    pub(super) fn brackets(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering + Copy,
        splice: &Splice,
        target: &Target<'_>,
    ) -> bool {
        let (prev, next) = (splice.prev[0], splice.next[0]);
        // SAFETY: the splice holds the head and linked nodes of this list (module doc).
        let after_prev = prev == self.head
            || compare_with(compare, unsafe { node_key(prev) }, target) == Ordering::Less;
        after_prev
            && (next.is_null()
                // SAFETY: as above.
                || compare_with(compare, unsafe { node_key(next) }, target) == Ordering::Greater)
    }

    /// The lowest level from 1 below [`NEARBY_LEVELS`] whose splice bracket holds `target`
    /// (none if none does).
    #[inline(always)]
    pub(super) fn nearby_level(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering + Copy,
        splice: &Splice,
        target: &Target<'_>,
    ) -> Option<usize> {
        (1..NEARBY_LEVELS.min(self.height())).find(|&level| {
            let (prev, next) = (splice.prev[level], splice.next[level]);
            // SAFETY: the splice holds the head and linked nodes of this list (module doc).
            (prev == self.head
                || compare_with(compare, unsafe { node_key(prev) }, target) == Ordering::Less)
                && (next.is_null()
                    // SAFETY: as above.
                    || compare_with(compare, unsafe { node_key(next) }, target)
                        == Ordering::Greater)
        })
    }

    /// Places the splice around `target` at the levels below `level`, whose bracket holds it,
    /// by a walk down from that bracket's previous node. The brackets stay tight and nested:
    /// each level's walk starts from the node the level above ends on, and stops at or before
    /// the level above's next node.
    pub(super) fn descend_from(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering + Copy,
        splice: &mut Splice,
        level: usize,
        target: &Target<'_>,
    ) {
        for l in (0..level).rev() {
            let mut prev = splice.prev[l + 1];
            // SAFETY: `prev` is the head or a linked node that reaches `l + 1`, so `l`; so is
            // every node the walk passes at `l`.
            let mut next = unsafe { tower(prev, l).load(AtomicOrdering::Acquire) };
            while !next.is_null()
                // SAFETY: as above.
                && compare_with(compare, unsafe { node_key(next) }, target) == Ordering::Less
            {
                prev = next;
                // SAFETY: as above.
                next = unsafe { tower(prev, l).load(AtomicOrdering::Acquire) };
            }
            splice.prev[l] = prev;
            splice.next[l] = next;
        }
    }
}
