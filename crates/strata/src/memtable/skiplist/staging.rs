//! The skiplist's staging area (the invariants are in the parent module's doc): nodes
//! written but not linked yet, in slots with a tag of their user key for gets, and the
//! writer's calls that stage a node, step the staged nodes' searches and link them.

use std::cmp::Ordering;
use std::ptr;

use super::*;

/// The word and bit of [`Staged::summary`] for a tag.
fn summary_bit(tag: u32) -> (usize, u64) {
    let bit = (tag & 255) as usize;
    (bit / 64, 1 << (bit % 64))
}

/// Nodes written but not linked yet (module doc), on cache lines of their own: the writer
/// changes them at every insert, and gets read them.
#[repr(align(64))]
pub(super) struct Staged {
    /// Bit `i` set: slot `i` holds a staged node.
    pub(super) occupied: AtomicU64,
    /// Bit `t % 256` set while a staged node has tag `t`: most gets see in this one word
    /// that nothing staged can be theirs, without reading the slots' lines (which the
    /// writer changes, so a reader on another core misses on them).
    pub(super) summary: [AtomicU64; 4],
    /// The tag of each slot's user key ([`tag`]).
    pub(super) tags: [AtomicU32; STAGED],
    pub(super) nodes: [AtomicPtr<u8>; STAGED],
}

/// The staging area's tag of a user key: a mix of its first and last 8 bytes and its length.
/// Keys that differ only in between share a tag and cost a key comparison in a get; a full
/// hash of the key would cost every insert (a sequential load notices).
#[inline]
fn tag(user_key: &[u8]) -> u32 {
    let word = |bytes: &[u8]| {
        let mut w = [0u8; 8];
        w[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(w)
    };
    let n = user_key.len();
    let (head, tail) = match n {
        0..8 => (word(user_key), 0),
        _ => (word(&user_key[..8]), word(&user_key[n - 8..])),
    };
    let mixed = (head.rotate_left(29) ^ tail ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> 32) as u32
}

/// The slots whose bits are set in `mask`, lowest first.
fn slots(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let slot = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            slot
        })
    })
}

impl SkipList {
    /// Links every staged node (module doc), their searches walked to the end side by side:
    /// searches and walks then see every insert that returned before. For a memtable that
    /// takes no more inserts, so that its readers have nothing staged to merge.
    pub fn link_staged(&self) {
        if self.staged.occupied.load(AtomicOrdering::Acquire) == 0 {
            return;
        }
        let mut writer = self.writer.lock();
        match &self.order {
            KeyOrder::Bytewise => self.link_staged_in(bytewise_compare, &mut writer),
            KeyOrder::Reverse => self.link_staged_in(|a, b| bytewise_compare(b, a), &mut writer),
            KeyOrder::Custom(c) => self.link_staged_in(|a, b| c.compare(a, b), &mut writer),
        }
    }

    fn link_staged_in(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering + Copy,
        writer: &mut Writer,
    ) {
        while writer.occupied != 0 {
            self.step_searches(compare, writer, u64::MAX);
        }
    }

    /// The nodes in the staging area now (module doc), in no order. Some may be linked by
    /// the time the caller looks (a node's slot is freed after it is linked, and reused): a
    /// caller that also walks the list takes equal keys for one node.
    pub fn staged_nodes(&self) -> Vec<Node> {
        let occupied = self.staged.occupied.load(AtomicOrdering::Acquire);
        slots(occupied)
            .map(|i| self.staged.nodes[i].load(AtomicOrdering::Acquire) as Node)
            .collect()
    }

    /// The staged node (module doc) of `user_key` with the largest trailer at most
    /// `max_trailer` (null if none): for a get, the newest staged version at a sequence
    /// number. Looks at the nodes' tags, and at the keys of those whose tag matches.
    pub fn find_staged(&self, user_key: &[u8], max_trailer: u64) -> Node {
        let tag = tag(user_key);
        let (word, bit) = summary_bit(tag);
        if self.staged.summary[word].load(AtomicOrdering::Acquire) & bit == 0 {
            return ptr::null();
        }
        let occupied = self.staged.occupied.load(AtomicOrdering::Acquire);
        let mut best: Node = ptr::null();
        let mut best_trailer = 0;
        for i in slots(occupied) {
            if self.staged.tags[i].load(AtomicOrdering::Acquire) != tag {
                continue;
            }
            let node = self.staged.nodes[i].load(AtomicOrdering::Acquire) as Node;
            // SAFETY: a slot holds a node of this list, fully written before it was stored.
            let t = unsafe { node_target(node) };
            if t.user_key == user_key
                && t.trailer <= max_trailer
                && (best.is_null() || t.trailer > best_trailer)
            {
                best = node;
                best_trailer = t.trailer;
            }
        }
        best
    }

    /// Puts `node` in `slot` (free) and starts its search from the top (module doc).
    pub(super) fn stage(&self, writer: &mut Writer, slot: usize, node: Node, key: &Target<'_>) {
        let top = self.height() - 1;
        // SAFETY: the head reaches every level.
        let candidate = unsafe { tower(self.head, top).load(AtomicOrdering::Acquire) };
        prefetch_node(candidate, top);
        // SAFETY: the node is fully written.
        let user_key = unsafe { node_target(node) }.user_key;
        let tag = tag(key.user_key);
        writer.searches[slot] = Search {
            node,
            user_key: user_key.as_ptr(),
            user_key_len: user_key.len(),
            trailer: key.trailer,
            tag,
            at: self.head,
            level: top,
            candidate,
            place: Place {
                prev: [self.head as Node; MAX_HEIGHT],
                next: [ptr::null(); MAX_HEIGHT],
            },
        };
        writer.occupied |= 1 << slot;
        // The slot before its tag, the tag before its bits (module doc).
        self.staged.nodes[slot].store(node as *mut u8, AtomicOrdering::Release);
        self.staged.tags[slot].store(tag, AtomicOrdering::Release);
        let count = &mut writer.summary_counts[(tag & 255) as usize];
        *count += 1;
        if *count == 1 {
            let (word, bit) = summary_bit(tag);
            let summary = &self.staged.summary[word];
            summary.store(
                summary.load(AtomicOrdering::Relaxed) | bit,
                AtomicOrdering::Release,
            );
        }
        self.staged
            .occupied
            .store(writer.occupied, AtomicOrdering::Release);
    }

    /// Moves the searches in flight of the slots in `mask` one step each. A search that
    /// reaches level 0 links its node and frees its slot; the slot's bit is cleared only
    /// after the link (module doc).
    pub(super) fn step_searches(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering + Copy,
        writer: &mut Writer,
        mask: u64,
    ) {
        let pending = writer.occupied & mask;
        let Writer {
            splice,
            searches,
            occupied,
            summary_counts,
            ..
        } = writer;
        for slot in slots(pending) {
            let search = &mut searches[slot];
            // SAFETY: the slot is in use: its search is in flight.
            let target = unsafe { search.target() };
            let next = search.candidate;
            // SAFETY: `next` is a linked, non-head node when non-null.
            if !next.is_null()
                && compare_with(compare, unsafe { node_key(next) }, &target) == Ordering::Less
            {
                search.at = next;
            } else {
                search.place.prev[search.level] = search.at;
                search.place.next[search.level] = next;
                if search.level == 0 {
                    self.link(compare, search.node, &search.place, splice);
                    *occupied &= !(1 << slot);
                    // Linked first, then out of the area (module doc).
                    self.staged
                        .occupied
                        .store(*occupied, AtomicOrdering::Release);
                    let count = &mut summary_counts[(search.tag & 255) as usize];
                    *count -= 1;
                    if *count == 0 {
                        let (word, bit) = summary_bit(search.tag);
                        let summary = &self.staged.summary[word];
                        let cleared = summary.load(AtomicOrdering::Relaxed) & !bit;
                        summary.store(cleared, AtomicOrdering::Release);
                    }
                    continue;
                }
                search.level -= 1;
            }
            // SAFETY: `at` is the head or a linked node reached at `level` or above.
            let candidate = unsafe { tower(search.at, search.level).load(AtomicOrdering::Acquire) };
            search.candidate = candidate;
            prefetch_node(candidate, search.level);
        }
    }
}
