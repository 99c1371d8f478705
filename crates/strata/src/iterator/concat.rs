//! A sorted run of files as one cursor: [`ConcatIterator`] walks the files of a level (sorted
//! by key, no two sharing a key) in order, opening each file's cursor only when it reaches
//! it, so a read that touches one file of a level opens one.
//!
//! Invariant: `current` is the cursor of `files[index]` when it is `Some`; moving past a
//! file's end (or before its start) opens the next (previous) file and positions it at its
//! first (last) entry, so the concatenation is never left on an exhausted file while a later
//! file has entries. An error opening a file, or one a file's cursor reports, ends the walk
//! and is kept for `status`.

use std::cmp::Ordering;

use super::InternalIterator;
use crate::comparator::KeyOrder;
use crate::error::Result;

/// Opens the iterator of one file of a level (see [`ConcatIterator`]).
pub type OpenFile<F, I = Box<dyn InternalIterator>> = Box<dyn Fn(&F) -> Result<I> + Send>;

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
/// key), opening one file at a time as the cursor reaches it. The files are any list that
/// derefs to a slice: a `Vec`, or a version's level held through the version
/// (`version::LevelFiles`), which a read cursor takes so that making one does not clone the
/// level's list. The files' cursors are boxes of any kind, or one concrete kind (`I`): a read
/// cursor's are table iterators, so that a step through the level is one dynamic call (the
/// merge's, into the level), not two.
pub struct ConcatIterator<F, L = Vec<F>, I = Box<dyn InternalIterator>> {
    /// The order of user keys (the column family's).
    order: KeyOrder,
    files: L,
    open: OpenFile<F, I>,
    index: usize,
    current: Option<I>,
    error: Option<crate::error::Error>,
    /// `prepare_seek` opened the target's file and began its seek.
    prepared: bool,
}

impl<F: FileBounds + Send> ConcatIterator<F> {
    /// A cursor over `files` (bytewise user keys), opened by `open`.
    #[cfg(test)]
    pub fn new(files: Vec<F>, open: OpenFile<F>) -> Self {
        ConcatIterator::with_order(files, open, KeyOrder::Bytewise)
    }
}

impl<F, L, I> ConcatIterator<F, L, I>
where
    F: FileBounds + Send,
    L: std::ops::Deref<Target = [F]> + Send,
    I: InternalIterator,
{
    /// A cursor over `files`, whose user keys are in `order`, opened by `open`.
    pub fn with_order(files: L, open: OpenFile<F, I>, order: KeyOrder) -> Self {
        ConcatIterator {
            order,
            files,
            open,
            index: 0,
            current: None,
            error: None,
            prepared: false,
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

    /// The first file whose largest key is at or after `target`.
    fn file_for(&self, target: &[u8]) -> usize {
        self.files
            .partition_point(|f| self.order.compare_internal(f.largest(), target) == Ordering::Less)
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

impl<F, L, I> InternalIterator for ConcatIterator<F, L, I>
where
    F: FileBounds + Send,
    L: std::ops::Deref<Target = [F]> + Send,
    I: InternalIterator,
{
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }

    fn seek_to_first(&mut self) {
        self.prepared = false;
        if self.open_file(0) {
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first();
            }
        }
        self.skip_forward();
    }

    fn seek_to_last(&mut self) {
        self.prepared = false;
        if !self.files.is_empty() && self.open_file(self.files.len() - 1) {
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last();
            }
        }
        self.skip_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        // After `prepare_seek` the target's file is open and its seek begun.
        let prepared = std::mem::take(&mut self.prepared);
        if prepared || self.open_file(self.file_for(target)) {
            if let Some(c) = self.current.as_mut() {
                c.seek(target);
            }
        }
        self.skip_forward();
    }

    fn prepare_seek(&mut self, target: &[u8]) {
        if self.open_file(self.file_for(target)) {
            if let Some(c) = self.current.as_mut() {
                c.prepare_seek(target);
            }
        }
        self.prepared = true;
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.prepared = false;
        let i = self.files.partition_point(|f| {
            self.order.compare_internal(f.smallest(), target) != Ordering::Greater
        });
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
        self.prepared = false;
        if let Some(c) = self.current.as_mut() {
            c.next();
        }
        self.skip_forward();
    }

    #[inline]
    fn next_key(&mut self) -> Option<&[u8]> {
        self.prepared = false;
        let stepped = match self.current.as_mut() {
            Some(c) => c.next_key().is_some(),
            None => false,
        };
        if !stepped {
            self.skip_forward();
        }
        let c = self.current.as_ref().filter(|c| c.valid())?;
        Some(c.key())
    }

    fn prev(&mut self) {
        self.prepared = false;
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
