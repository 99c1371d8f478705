//! The internal iterator interface and the merging iterator.
//!
//! Internal iterators walk encoded internal keys (see [`crate::key`]) in internal-key order.
//! Memtables (and, later, tables and levels) implement [`InternalIterator`]; a
//! [`MergingIterator`] merges several of them into one ordered stream; the database iterator
//! on top (`db::iter`) hides old versions and deleted keys.

use std::cmp::Ordering;

use crate::error::Result;
use crate::key::compare_internal;

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
    /// Moves to the last entry at or before internal key `target`.
    fn seek_for_prev(&mut self, target: &[u8]);
    /// Moves to the next entry.
    fn next(&mut self);
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
    children: Vec<Box<dyn InternalIterator>>,
    /// Indexes of the valid children, a heap whose top is the current entry.
    heap: Vec<usize>,
    direction: Direction,
}

impl MergingIterator {
    /// A merge of `children`, unpositioned.
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        MergingIterator {
            heap: Vec::with_capacity(children.len()),
            children,
            direction: Direction::Forward,
        }
    }

    /// True when child `a` comes before child `b` in the current direction.
    fn before(&self, a: usize, b: usize) -> bool {
        let order = compare_internal(self.children[a].key(), self.children[b].key());
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

    /// Rebuilds the heap from the valid children, in `direction`.
    fn rebuild(&mut self, direction: Direction) {
        self.direction = direction;
        self.heap.clear();
        self.heap
            .extend((0..self.children.len()).filter(|&i| self.children[i].valid()));
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
    }

    /// Restores the heap after the top child moved.
    fn fix_top(&mut self) {
        let Some(&top) = self.heap.first() else {
            return;
        };
        if !self.children[top].valid() {
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
                    if c.valid() && compare_internal(c.key(), &key) == Ordering::Equal {
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
                    if c.valid() && compare_internal(c.key(), &key) == Ordering::Equal {
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
            Some(i) => self.children[i].value(),
            None => &[],
        }
    }

    fn status(&self) -> Result<()> {
        self.children.iter().try_for_each(|c| c.status())
    }
}

/// Opens the iterator of one file of a level (see [`ConcatIterator`]).
pub type OpenFile<F> = Box<dyn Fn(&F) -> Result<Box<dyn InternalIterator>> + Send>;

/// A file of a sorted run, as [`ConcatIterator`] sees it: its key bounds.
pub trait FileBounds {
    /// The smallest internal key in the file.
    fn smallest(&self) -> &[u8];
    /// The largest internal key in the file.
    fn largest(&self) -> &[u8];
}

impl<T: FileBounds> FileBounds for std::sync::Arc<T> {
    fn smallest(&self) -> &[u8] {
        (**self).smallest()
    }
    fn largest(&self) -> &[u8] {
        (**self).largest()
    }
}

/// The entries of a sorted run of files (one level below L0: sorted by key, no two sharing a
/// key), opening one file at a time as the cursor reaches it.
pub struct ConcatIterator<F> {
    files: Vec<F>,
    open: OpenFile<F>,
    index: usize,
    current: Option<Box<dyn InternalIterator>>,
    error: Option<crate::error::Error>,
}

impl<F: FileBounds + Send> ConcatIterator<F> {
    /// A cursor over `files`, opened by `open`.
    pub fn new(files: Vec<F>, open: OpenFile<F>) -> Self {
        ConcatIterator {
            files,
            open,
            index: 0,
            current: None,
            error: None,
        }
    }

    /// Positions on file `i` (none if out of range or it cannot be opened). The open file
    /// is kept when it is the one asked for: repeated seeks into one file open it once.
    fn open_file(&mut self, i: usize) -> bool {
        if i == self.index && self.current.is_some() {
            return true;
        }
        self.current = None;
        self.index = i;
        if i >= self.files.len() || self.error.is_some() {
            return false;
        }
        match (self.open)(&self.files[i]) {
            Ok(it) => {
                self.current = Some(it);
                true
            }
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// True (with the error kept) when the current file's iterator stopped on an error.
    fn current_failed(&mut self) -> bool {
        let Some(Err(e)) = self.current.as_ref().map(|c| c.status()) else {
            return false;
        };
        self.error = Some(e);
        self.current = None;
        true
    }

    /// Moves forward over files whose iterator is exhausted.
    fn skip_forward(&mut self) {
        while self.current.as_ref().is_some_and(|c| !c.valid()) {
            if self.current_failed() {
                return;
            }
            if !self.open_file(self.index + 1) {
                return;
            }
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first();
            }
        }
    }

    /// Moves backward over files whose iterator is exhausted.
    fn skip_backward(&mut self) {
        while self.current.as_ref().is_some_and(|c| !c.valid()) {
            if self.current_failed() {
                return;
            }
            if self.index == 0 || !self.open_file(self.index - 1) {
                self.current = None;
                return;
            }
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last();
            }
        }
    }
}

impl<F: FileBounds + Send> InternalIterator for ConcatIterator<F> {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }

    fn seek_to_first(&mut self) {
        if self.open_file(0) {
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first();
            }
        }
        self.skip_forward();
    }

    fn seek_to_last(&mut self) {
        if !self.files.is_empty() && self.open_file(self.files.len() - 1) {
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last();
            }
        }
        self.skip_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        let i = self
            .files
            .partition_point(|f| compare_internal(f.largest(), target) == Ordering::Less);
        if self.open_file(i) {
            if let Some(c) = self.current.as_mut() {
                c.seek(target);
            }
        }
        self.skip_forward();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        let i = self
            .files
            .partition_point(|f| compare_internal(f.smallest(), target) != Ordering::Greater);
        if i == 0 {
            self.current = None;
            return;
        }
        if self.open_file(i - 1) {
            if let Some(c) = self.current.as_mut() {
                c.seek_for_prev(target);
            }
        }
        self.skip_backward();
    }

    fn next(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.next();
        }
        self.skip_forward();
    }

    fn prev(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.prev();
        }
        self.skip_backward();
    }

    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |c| c.key())
    }

    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |c| c.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.duplicate());
        }
        self.current.as_ref().map_or(Ok(()), |c| c.status())
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
    use super::*;
    use crate::key::{append_internal_key, ValueKind};
    use crate::util::Rng;
    use std::collections::BTreeMap;

    /// A sorted vector of entries as an internal iterator.
    struct VecIter {
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        pos: Option<usize>,
    }

    impl VecIter {
        fn new(entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
            VecIter { entries, pos: None }
        }
        fn set(&mut self, i: usize) {
            self.pos = (i < self.entries.len()).then_some(i);
        }
    }

    impl InternalIterator for VecIter {
        fn valid(&self) -> bool {
            self.pos.is_some()
        }
        fn seek_to_first(&mut self) {
            self.set(0);
        }
        fn seek_to_last(&mut self) {
            self.pos = self.entries.len().checked_sub(1);
        }
        fn seek(&mut self, target: &[u8]) {
            let i = self
                .entries
                .partition_point(|(k, _)| compare_internal(k, target) == Ordering::Less);
            self.set(i);
        }
        fn seek_for_prev(&mut self, target: &[u8]) {
            let i = self
                .entries
                .partition_point(|(k, _)| compare_internal(k, target) != Ordering::Greater);
            self.pos = i.checked_sub(1);
        }
        fn next(&mut self) {
            if let Some(i) = self.pos {
                self.set(i + 1);
            }
        }
        fn prev(&mut self) {
            self.pos = self.pos.and_then(|i| i.checked_sub(1));
        }
        fn key(&self) -> &[u8] {
            &self.entries[self.pos.unwrap()].0
        }
        fn value(&self) -> &[u8] {
            &self.entries[self.pos.unwrap()].1
        }
    }

    /// A file of a sorted run held in memory (never empty).
    struct MemFile(Vec<(Vec<u8>, Vec<u8>)>);

    impl FileBounds for MemFile {
        fn smallest(&self) -> &[u8] {
            &self.0[0].0
        }
        fn largest(&self) -> &[u8] {
            &self.0[self.0.len() - 1].0
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

    /// Merges of plain children and of runs split into files (concatenated) walk like a
    /// sorted model under random seeks, nexts and prevs, switching direction at will.
    #[test]
    fn merging_and_concat_iterators_match_a_sorted_model() {
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
            let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
            let mut seq = 1;
            for _ in 0..1 + rng.below(6) {
                let mut entries = BTreeMap::new();
                for _ in 0..rng.below(40) {
                    let k = ikey(rng.below(100), seq);
                    seq += 1;
                    let v = format!("v{seq}").into_bytes();
                    entries.insert(k, v);
                }
                let mut entries: Vec<_> = entries.into_iter().collect();
                entries.sort_by(|a, b| compare_internal(&a.0, &b.0));
                model.extend(entries.iter().cloned());
                if rng.below(2) == 0 {
                    children.push(Box::new(VecIter::new(entries)));
                    continue;
                }
                // Split the run into files at random points.
                let mut files: Vec<MemFile> = Vec::new();
                for e in entries {
                    if files.is_empty() || rng.below(5) == 0 {
                        files.push(MemFile(Vec::new()));
                    }
                    files.last_mut().unwrap().0.push(e);
                }
                children.push(Box::new(ConcatIterator::new(
                    files,
                    Box::new(|f: &MemFile| {
                        Ok(Box::new(VecIter::new(f.0.clone())) as Box<dyn InternalIterator>)
                    }),
                )));
            }
            let mut sorted: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
            sorted.sort_by(|a, b| compare_internal(&a.0, &b.0));
            let mut it = MergingIterator::new(children);
            let mut pos: Option<usize> = None;
            for op in 0..300 {
                match rng.below(6) {
                    0 => {
                        it.seek_to_first();
                        pos = (!sorted.is_empty()).then_some(0);
                    }
                    1 => {
                        it.seek_to_last();
                        pos = sorted.len().checked_sub(1);
                    }
                    2 => {
                        let t = ikey(rng.below(110), rng.below(seq + 2));
                        it.seek(&t);
                        let i = sorted
                            .partition_point(|(k, _)| compare_internal(k, &t) == Ordering::Less);
                        pos = (i < sorted.len()).then_some(i);
                    }
                    3 => {
                        let t = ikey(rng.below(110), rng.below(seq + 2));
                        it.seek_for_prev(&t);
                        let i = sorted
                            .partition_point(|(k, _)| compare_internal(k, &t) != Ordering::Greater);
                        pos = i.checked_sub(1);
                    }
                    4 if pos.is_some() => {
                        it.next();
                        pos = pos.map(|i| i + 1).filter(|&i| i < sorted.len());
                    }
                    _ if pos.is_some() => {
                        it.prev();
                        pos = pos.and_then(|i| i.checked_sub(1));
                    }
                    _ => continue,
                }
                match pos {
                    Some(i) => {
                        assert!(it.valid(), "seed {seed} op {op}: ended early");
                        assert_eq!(it.key(), sorted[i].0.as_slice(), "seed {seed} op {op}");
                        assert_eq!(it.value(), sorted[i].1.as_slice(), "seed {seed} op {op}");
                    }
                    None => assert!(!it.valid(), "seed {seed} op {op}: should have ended"),
                }
            }
        }
    }

    #[test]
    fn a_file_that_cannot_be_opened_ends_the_walk_with_its_error() {
        let files: Vec<MemFile> = (1..=3u64)
            .map(|n| {
                MemFile(
                    (0..6)
                        .map(|i| (ikey(n * 10 + i, 1), b"v".to_vec()))
                        .collect(),
                )
            })
            .collect();
        let mut it = ConcatIterator::new(
            files,
            Box::new(|f: &MemFile| {
                if f.0[0].0 == ikey(20, 1) {
                    return Err(crate::error::Error::Corruption {
                        file: "000002.sst".into(),
                        offset: 0,
                        reason: "bad".into(),
                    });
                }
                Ok(Box::new(VecIter::new(f.0.clone())) as Box<dyn InternalIterator>)
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
