//! The internal iterator interface, and the iterators built of others: merging and
//! concatenating.
//!
//! Internal iterators walk encoded internal keys (see [`crate::key`]) in internal-key order.
//! Memtables and tables implement [`InternalIterator`]; a [`ConcatIterator`] walks the tables
//! of one level as one sorted run; a [`MergingIterator`] merges several of them into one
//! ordered stream (for reads and compactions); the database iterator on top
//! (`db::iter`) hides old versions and deleted keys. A [`FilteredSeek`] wraps a source that a
//! seek may skip by its filter (prefix seeks): the skip is decided from a [`SeekHint`] the
//! database iterator arms for its own seeks only.

use std::cmp::Ordering;

use crate::comparator::KeyOrder;
use crate::error::Result;

mod concat;
mod filtered_seek;

pub use concat::{ConcatIterator, FileBounds};
pub use filtered_seek::{FilteredSeek, SeekHint};

/// A cursor over internal keys. Positioning calls leave it either on an entry (`valid()`) or
/// past either end. `key` and `value` may only be called while valid.
pub trait InternalIterator: Send {
    /// True when positioned on an entry.
    fn valid(&self) -> bool;
    /// Moves to the first entry.
    fn seek_to_first(&mut self);
    /// Moves to the last entry.
    fn seek_to_last(&mut self);
    /// Moves to the first entry at or after internal key `target`.
    fn seek(&mut self, target: &[u8]);
    /// Begins a seek to `target`, for a merge that seeks several iterators at once: finds
    /// where the target is and asks for the memory the seek reads next without waiting for
    /// it, so that the cache misses of the children's seeks overlap instead of following
    /// one another. `seek(target)`, with the same target, must be the next call; it does the
    /// rest. The default does nothing.
    fn prepare_seek(&mut self, _target: &[u8]) {}
    /// Moves to the last entry at or before internal key `target`.
    fn seek_for_prev(&mut self, target: &[u8]);
    /// Moves to the next entry.
    fn next(&mut self);
    /// Moves to the next entry and returns its key, or `None` when past the end (or
    /// stopped on an error): `next`, `valid` and `key` in one call. A merge steps one child
    /// per entry and reads its key right after; through a box each of those is a dynamic
    /// call down the child's layers, where one is enough. The default makes the three
    /// calls; a cursor whose step is its hot path answers it directly. (The value is left
    /// to `value`: a compaction's input reports the entries whose values the merge takes,
    /// `db::warm_cache`, so reading it is not free of effects.)
    #[inline]
    fn next_key(&mut self) -> Option<&[u8]> {
        self.next();
        match self.valid() {
            true => Some(self.key()),
            false => None,
        }
    }
    /// Moves to the previous entry.
    fn prev(&mut self);
    /// The encoded internal key of the current entry.
    fn key(&self) -> &[u8];
    /// The value of the current entry.
    fn value(&self) -> &[u8];
    /// The first error met (for example a corrupt block), or `Ok`.
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

/// A boxed cursor is a cursor: a merge's children and a level's files are boxes of any kind.
impl<T: InternalIterator + ?Sized> InternalIterator for Box<T> {
    #[inline]
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) {
        (**self).seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        (**self).seek(target)
    }
    fn prepare_seek(&mut self, target: &[u8]) {
        (**self).prepare_seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        (**self).seek_for_prev(target)
    }
    #[inline]
    fn next(&mut self) {
        (**self).next()
    }
    #[inline]
    fn next_key(&mut self) -> Option<&[u8]> {
        (**self).next_key()
    }
    fn prev(&mut self) {
        (**self).prev()
    }
    #[inline]
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    #[inline]
    fn value(&self) -> &[u8] {
        (**self).value()
    }
    fn status(&self) -> Result<()> {
        (**self).status()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// Merges children into one stream in internal-key order. Ties (equal internal keys, which
/// the engine never produces) go to the child listed first.
///
/// The valid children sit in a binary heap ordered by their current key (smallest on top
/// going forward, largest going back), so a step costs O(log n) key comparisons: compaction
/// merges one child per L0 file and per level, reads one per memtable, L0 file and level.
pub struct MergingIterator {
    /// The order of user keys (the column family's).
    order: KeyOrder,
    children: Vec<Child>,
    /// Indexes of the valid children, a heap whose top is the current entry.
    heap: Vec<usize>,
    direction: Direction,
}

impl MergingIterator {
    /// A merge of `children` (bytewise user keys), unpositioned.
    #[cfg(test)]
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        MergingIterator::with_order(children, KeyOrder::Bytewise)
    }

    /// A merge of `children`, whose user keys are in `order`, unpositioned.
    pub fn with_order(children: Vec<Box<dyn InternalIterator>>, order: KeyOrder) -> Self {
        MergingIterator {
            order,
            heap: Vec::with_capacity(children.len()),
            children: children.into_iter().map(Child::new).collect(),
            direction: Direction::Forward,
        }
    }

    /// The order of user keys.
    pub fn order(&self) -> &KeyOrder {
        &self.order
    }

    /// True when child `a` comes before child `b` in the current direction.
    fn before(&self, a: usize, b: usize) -> bool {
        let order = (self.order).compare_internal(self.children[a].key(), self.children[b].key());
        match (self.direction, order) {
            (_, Ordering::Equal) => a < b,
            (Direction::Forward, o) => o == Ordering::Less,
            (Direction::Reverse, o) => o == Ordering::Greater,
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut first = i;
            if l < n && self.before(self.heap[l], self.heap[first]) {
                first = l;
            }
            if r < n && self.before(self.heap[r], self.heap[first]) {
                first = r;
            }
            if first == i {
                return;
            }
            self.heap.swap(i, first);
            i = first;
        }
    }

    /// Rebuilds the heap from the valid children, in `direction`. A child that stopped on
    /// an error stops the merge: going on without it would skip its keys, or surface older
    /// versions of them from other children (a wrong answer, where an error is the right
    /// one).
    fn rebuild(&mut self, direction: Direction) {
        self.direction = direction;
        self.heap.clear();
        if self
            .children
            .iter()
            .any(|c| !c.valid && c.iter.status().is_err())
        {
            return;
        }
        self.heap
            .extend((0..self.children.len()).filter(|&i| self.children[i].valid));
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
    }

    /// Restores the heap after the top child moved.
    fn fix_top(&mut self) {
        let Some(&top) = self.heap.first() else {
            return;
        };
        if !self.children[top].valid {
            if self.children[top].iter.status().is_err() {
                // Stopped on an error: the merge stops with it (see `rebuild`).
                self.heap.clear();
                return;
            }
            self.heap.swap_remove(0);
        }
        if !self.heap.is_empty() {
            self.sift_down(0);
        }
    }

    fn current(&self) -> Option<usize> {
        self.heap.first().copied()
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }

    fn seek_to_first(&mut self) {
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.rebuild(Direction::Forward);
    }

    fn seek_to_last(&mut self) {
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.rebuild(Direction::Reverse);
    }

    fn seek(&mut self, target: &[u8]) {
        if self.children.len() > 1 {
            for c in &mut self.children {
                c.prepare_seek(target);
            }
        }
        for c in &mut self.children {
            c.seek(target);
        }
        self.rebuild(Direction::Forward);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        for c in &mut self.children {
            c.seek_for_prev(target);
        }
        self.rebuild(Direction::Reverse);
    }

    fn next(&mut self) {
        let Some(cur) = self.current() else { return };
        if self.direction != Direction::Forward {
            // Put every other child on the first entry after the current key. Keys are
            // unique across children, so "after" is strict.
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek(&key);
                    if c.valid && c.key() == key.as_slice() {
                        c.next();
                    }
                }
            }
            self.children[cur].next();
            self.rebuild(Direction::Forward);
            return;
        }
        self.children[cur].next();
        self.fix_top();
    }

    fn prev(&mut self) {
        let Some(cur) = self.current() else { return };
        if self.direction != Direction::Reverse {
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek_for_prev(&key);
                    if c.valid && c.key() == key.as_slice() {
                        c.prev();
                    }
                }
            }
            self.children[cur].prev();
            self.rebuild(Direction::Reverse);
            return;
        }
        self.children[cur].prev();
        self.fix_top();
    }

    fn key(&self) -> &[u8] {
        match self.current() {
            Some(i) => self.children[i].key(),
            None => &[],
        }
    }

    fn value(&self) -> &[u8] {
        match self.current() {
            Some(i) => self.children[i].iter.value(),
            None => &[],
        }
    }

    fn status(&self) -> Result<()> {
        self.children.iter().try_for_each(|c| c.iter.status())
    }
}

/// A child of a [`MergingIterator`], with its validity and current key as of its last move
/// (RocksDB's `IteratorWrapper`): the heap compares children's keys at every step, and the
/// database iterator reads the current key several times per step, where each `key()` of a
/// child is a chain of dynamic calls down its layers (a level's cursor, a table's, a
/// block's). Kept here, a comparison reads two slices. Every move of the child goes through
/// the methods below, which take the key again after it; a step takes it in the same call
/// ([`InternalIterator::next_key`]). The value is read from the child when asked for.
struct Child {
    iter: Box<dyn InternalIterator>,
    /// `iter.valid()` after the last move.
    valid: bool,
    /// Start and length of `iter.key()` after the last move (empty when not valid).
    ///
    /// Invariant: the bytes lie in memory that `iter` owns or holds (a cursor's key buffer
    /// behind the box, a block it holds, the arena of a memtable it holds), as every
    /// `InternalIterator::key` returns, and they stay valid and unchanged until the next
    /// call on `iter` that takes `&mut` (a move): the slice's borrow of `iter` would end
    /// there. Every such call is made by a method of `Child` that sets `key` again after it,
    /// and `iter` is behind a box, so moving the `Child` moves none of those bytes.
    key: (*const u8, usize),
}

// SAFETY: `key` only points into memory reachable through `iter`, which is `Send`; it is
// read only through `&self` (see the field's invariant), as `iter.key()` would be.
unsafe impl Send for Child {}

/// The start and length of a slice: a [`Child`]'s key, kept past the borrow it came from.
fn raw(bytes: &[u8]) -> (*const u8, usize) {
    (bytes.as_ptr(), bytes.len())
}

/// What a [`Child`] keeps when it is on no entry.
const NO_BYTES: (*const u8, usize) = (std::ptr::NonNull::<u8>::dangling().as_ptr(), 0);

impl Child {
    /// `iter`, unpositioned: a merge positions every child before it reads any.
    fn new(iter: Box<dyn InternalIterator>) -> Child {
        Child {
            iter,
            valid: false,
            key: NO_BYTES,
        }
    }

    /// Takes the validity and the key again, after a move.
    #[inline]
    fn moved(&mut self) {
        self.valid = self.iter.valid();
        self.key = match self.valid {
            true => raw(self.iter.key()),
            false => NO_BYTES,
        };
    }

    /// The child's current key (empty when not valid).
    #[inline]
    fn key(&self) -> &[u8] {
        // SAFETY: `key` is the slice `iter.key()` returned after the last move, still valid
        // and unchanged (the field's invariant), and this borrows `self`, so no move can
        // happen while the slice returned lives.
        unsafe { std::slice::from_raw_parts(self.key.0, self.key.1) }
    }

    fn seek_to_first(&mut self) {
        self.iter.seek_to_first();
        self.moved();
    }

    fn seek_to_last(&mut self) {
        self.iter.seek_to_last();
        self.moved();
    }

    /// Begins a seek (see [`InternalIterator::prepare_seek`]); the seek that must follow
    /// takes the key. Until then the child reads as not valid.
    fn prepare_seek(&mut self, target: &[u8]) {
        self.iter.prepare_seek(target);
        self.valid = false;
        self.key = NO_BYTES;
    }

    fn seek(&mut self, target: &[u8]) {
        self.iter.seek(target);
        self.moved();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.iter.seek_for_prev(target);
        self.moved();
    }

    #[inline]
    fn next(&mut self) {
        let key = self.iter.next_key().map(raw);
        (self.valid, self.key) = match key {
            Some(key) => (true, key),
            None => (false, NO_BYTES),
        };
    }

    #[inline]
    fn prev(&mut self) {
        self.iter.prev();
        self.moved();
    }
}

/// An iterator that holds nothing and reports an error: stands in for a source that could
/// not be opened, so the error surfaces through `status()`.
pub struct FailedIterator {
    error: crate::error::Error,
}

impl FailedIterator {
    /// An iterator reporting `error`.
    pub fn new(error: crate::error::Error) -> FailedIterator {
        FailedIterator { error }
    }
}

impl InternalIterator for FailedIterator {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _: &[u8]) {}
    fn seek_for_prev(&mut self, _: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        Err(self.error.duplicate())
    }
}

#[cfg(test)]
mod tests {
    use super::concat::OpenFile;
    use super::filtered_seek::MayMatch;
    use super::*;
    use crate::key::{append_internal_key, ValueKind};
    use crate::table::iter::TableIterator;
    use crate::table::reader::Table;
    use crate::testing::harness::{self, Constructor, Entries, Keys};
    use crate::testing::lsm::{self, Caching, FailingAfter, RunFile, VecIter};
    use crate::util::Rng;
    use std::path::PathBuf;
    use std::sync::Arc;

    /// Builds iterators over parts of a data set: sorted vectors, memtables, tables, and
    /// sorted runs of files (each a table or in memory).
    struct Parts {
        dir: tempfile::TempDir,
        files: u64,
    }

    impl Parts {
        fn new() -> Parts {
            Parts {
                dir: tempfile::tempdir().unwrap(),
                files: 0,
            }
        }

        fn path(&mut self) -> PathBuf {
            self.files += 1;
            self.dir.path().join(format!("{}.sst", self.files))
        }

        /// `entries` as a sorted run split into files at random points.
        fn run(&mut self, entries: &Entries, rng: &mut Rng) -> ConcatIterator<Arc<RunFile>> {
            let file_len = 1 + rng.below(60);
            let mut files = Vec::new();
            let mut rest = entries;
            while !rest.is_empty() {
                let (file, tail) =
                    rest.split_at(1 + rng.below(file_len).min(rest.len() as u64 - 1) as usize);
                let path = rng.one_in(2).then(|| self.path());
                files.push(RunFile::new(file.to_vec(), path.as_deref()));
                rest = tail;
            }
            lsm::concat(files)
        }

        /// An iterator of a random kind over `entries`.
        fn any(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator> {
            match rng.below(4) {
                0 => Box::new(VecIter::new(entries.to_vec())),
                1 => Box::new(lsm::memtable(entries, rng, 1 << 16).iter()),
                2 => {
                    let path = self.path();
                    let options = lsm::internal_table_options();
                    Box::new(lsm::table(&path, entries, options, Caching::Data).iter())
                }
                _ => Box::new(self.run(entries, rng)),
            }
        }
    }

    /// A merge of up to `max_children` children of every kind, each holding a random part of
    /// the data set.
    struct MergingConstructor {
        parts: Parts,
        max_children: u64,
    }

    impl Constructor for MergingConstructor {
        fn name(&self) -> String {
            format!("merging iterator (up to {} children)", self.max_children)
        }
        fn keys(&self) -> Keys {
            Keys::Internal
        }
        fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
            let mut parts = vec![Vec::new(); 1 + rng.below(self.max_children) as usize];
            let n = parts.len() as u64;
            for e in entries {
                parts[rng.below(n) as usize].push(e.clone());
            }
            let children = parts.iter().map(|p| self.parts.any(p, rng)).collect();
            Box::new(MergingIterator::new(children))
        }
    }

    /// A child failing a read (the one with the newer versions of `b` and `d`) stops the
    /// merge with an error: going on would skip its keys, and a reader would find `d`'s
    /// older version from the other child as the latest.
    #[test]
    fn a_failed_child_stops_the_merge() {
        let entry = |k: &str, seq: u64, v: &str| {
            let mut key = Vec::new();
            append_internal_key(&mut key, k.as_bytes(), seq, ValueKind::Put as u8);
            (key, v.as_bytes().to_vec())
        };
        let newer = vec![entry("b", 9, "new"), entry("d", 9, "new")];
        let older = vec![
            entry("a", 1, "old"),
            entry("c", 1, "old"),
            entry("d", 1, "old"),
        ];
        for forward in [true, false] {
            // Fails at its second step: the first positioning, then one move.
            let failing = FailingAfter::new(VecIter::new(newer.clone()), 2);
            let mut m = MergingIterator::new(vec![
                Box::new(failing),
                Box::new(VecIter::new(older.clone())),
            ]);
            let mut seen = Vec::new();
            match forward {
                true => m.seek_to_first(),
                false => m.seek_to_last(),
            }
            for _ in 0..10 {
                if !m.valid() {
                    break;
                }
                seen.push((m.key().to_vec(), m.value().to_vec()));
                match forward {
                    true => m.next(),
                    false => m.prev(),
                }
            }
            assert!(m.status().is_err(), "forward={forward}");
            // Up to the failure, and nothing after it.
            let want = match forward {
                true => vec![entry("a", 1, "old"), entry("b", 9, "new")],
                false => vec![entry("d", 1, "old"), entry("d", 9, "new")],
            };
            assert_eq!(seen, want, "forward={forward}");
        }
    }

    /// A sorted run of files (tables and files in memory), concatenated.
    struct ConcatConstructor {
        parts: Parts,
    }

    impl Constructor for ConcatConstructor {
        fn name(&self) -> String {
            "concatenating iterator".into()
        }
        fn keys(&self) -> Keys {
            Keys::Internal
        }
        fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
            Box::new(self.parts.run(entries, rng))
        }
    }

    /// A sorted run of tables, concatenated over their table cursors themselves (no boxes),
    /// as a read's level cursor is.
    struct TableRunConstructor {
        parts: Parts,
    }

    impl Constructor for TableRunConstructor {
        fn name(&self) -> String {
            "concatenating iterator over table cursors".into()
        }
        fn keys(&self) -> Keys {
            Keys::Internal
        }
        fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
            let mut tables = Vec::new();
            let mut rest = entries;
            while !rest.is_empty() {
                let (file, tail) = rest.split_at(1 + rng.below(rest.len() as u64) as usize);
                let path = self.parts.path();
                let options = lsm::internal_table_options();
                let table = lsm::table(&path, file, options, Caching::Data);
                let bounds = (file[0].0.clone(), file[file.len() - 1].0.clone());
                tables.push(TableFile { table, bounds });
                rest = tail;
            }
            let open: OpenFile<TableFile, TableIterator> = Box::new(|f| Ok(f.table.iter()));
            Box::new(ConcatIterator::with_order(tables, open, KeyOrder::Bytewise))
        }
    }

    /// A table as a file of a sorted run, with its smallest and largest keys.
    struct TableFile {
        table: Arc<Table>,
        bounds: (Vec<u8>, Vec<u8>),
    }

    impl FileBounds for TableFile {
        fn smallest(&self) -> &[u8] {
            &self.bounds.0
        }
        fn largest(&self) -> &[u8] {
            &self.bounds.1
        }
    }

    #[test]
    fn merging_iterators_pass_the_iterator_harness() {
        for max_children in [1, 3, 8] {
            let mut c = MergingConstructor {
                parts: Parts::new(),
                max_children,
            };
            harness::check(&mut c, 16);
        }
    }

    #[test]
    fn concatenating_iterators_pass_the_iterator_harness() {
        harness::check(
            &mut ConcatConstructor {
                parts: Parts::new(),
            },
            16,
        );
        harness::check(
            &mut TableRunConstructor {
                parts: Parts::new(),
            },
            16,
        );
    }

    /// A filtered source over a few keys, its hint armed or not, its filter saying yes or
    /// no: a seek, prepared or not, finds the keys unless the armed filter says no.
    #[test]
    fn a_filtered_seek_skips_the_source_only_when_the_armed_filter_says_no() {
        // (armed, the filter's verdict, seek prepared first, valid after the seek)
        let cases = [
            (false, false, false, true),
            (false, false, true, true),
            (true, true, false, true),
            (true, true, true, true),
            (true, false, false, false),
            (true, false, true, false),
        ];
        for (armed, verdict, prepared, valid) in cases {
            let entries: Vec<(Vec<u8>, Vec<u8>)> =
                (0..4).map(|i| (ikey(i, 1), b"v".to_vec())).collect();
            let hint = Arc::new(SeekHint::default());
            let may_match: MayMatch = Box::new(move |_, _, _| Ok(verdict));
            let mut it =
                FilteredSeek::new(Box::new(VecIter::new(entries)), hint.clone(), may_match);
            if armed {
                hint.arm(7);
            }
            let target = ikey(2, 1);
            if prepared {
                it.prepare_seek(&target);
            }
            it.seek(&target);
            let case = format!("armed {armed}, filter {verdict}, prepared {prepared}");
            assert_eq!(it.valid(), valid, "{case}");
            if valid {
                assert_eq!(it.key(), &target[..], "{case}");
            }
            // A preparation does not outlive its seek: disarmed, the next seek reads.
            hint.disarm();
            it.seek(&ikey(1, 1));
            assert!(it.valid(), "{case}: the disarmed seek after");
        }
    }

    fn ikey(n: u64, seq: u64) -> Vec<u8> {
        let mut k = Vec::new();
        append_internal_key(
            &mut k,
            format!("k{n:04}").as_bytes(),
            seq,
            ValueKind::Put as u8,
        );
        k
    }

    #[test]
    fn a_file_that_cannot_be_opened_ends_the_walk_with_its_error() {
        let files: Vec<Arc<RunFile>> = (1..=3u64)
            .map(|n| {
                let entries = (0..6).map(|i| (ikey(n * 10 + i, 1), b"v".to_vec()));
                RunFile::new(entries.collect(), None)
            })
            .collect();
        let mut it = ConcatIterator::new(
            files,
            Box::new(|f: &Arc<RunFile>| {
                if f.smallest() == ikey(20, 1) {
                    return Err(crate::error::Error::Corruption {
                        file: "000002.sst".into(),
                        offset: 0,
                        reason: "bad".into(),
                    });
                }
                Ok(f.open())
            }),
        );
        it.seek_to_first();
        let mut seen = 0;
        while it.valid() {
            seen += 1;
            it.next();
        }
        assert_eq!(seen, 6, "the first file, then the error");
        let err = it.status().unwrap_err();
        assert!(err.to_string().contains("000002.sst"), "{err}");
    }
}
