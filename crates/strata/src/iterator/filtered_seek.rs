//! Seeks that may skip a source by its filter: a [`FilteredSeek`] wraps one table or level
//! cursor, and a seek skips it without reading when the armed [`SeekHint`] (the hash of the
//! seek target's prefix) fails the source's filter. The database iterator arms the hint for
//! its own seeks only, so internal re-seeks (a merge changing direction) read every source.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use super::InternalIterator;
use crate::error::Result;

/// What the current seek lets sources check against their filters: a hash (of the seek
/// target's prefix, for prefix seeks), set only while one seek runs. Shared by the database
/// iterator, which arms it around its own seeks, and the [`FilteredSeek`] children of its
/// merging iterator; internal re-seeks (a merging iterator changing direction) find it
/// disarmed and read every source.
#[derive(Debug, Default)]
pub struct SeekHint {
    hash: AtomicU64,
    armed: AtomicBool,
}

impl SeekHint {
    /// Lets the seeks from now on check `hash`.
    pub fn arm(&self, hash: u64) {
        self.hash.store(hash, AtomicOrdering::Relaxed);
        self.armed.store(true, AtomicOrdering::Relaxed);
    }

    /// Seeks from now on check nothing.
    pub fn disarm(&self) {
        self.armed.store(false, AtomicOrdering::Relaxed);
    }

    /// The hash to check, if armed.
    fn get(&self) -> Option<u64> {
        self.armed
            .load(AtomicOrdering::Relaxed)
            .then(|| self.hash.load(AtomicOrdering::Relaxed))
    }
}

/// Whether a source may hold what a seek to `target` (an internal key) looks for, given the
/// armed hash and the direction (true for `seek_for_prev`): false skips the source.
pub type MayMatch = Box<dyn Fn(&[u8], u64, bool) -> Result<bool> + Send>;

/// A source (one table, one level) that a seek skips without reading when its filter says it
/// holds nothing the seek looks for. Skipped, it is not valid until the next positioning
/// call; every call but `seek` and `seek_for_prev`, and those when the hint is disarmed, goes
/// to the source as is. A filter that fails to read makes the source fail.
pub struct FilteredSeek {
    inner: Box<dyn InternalIterator>,
    may_match: MayMatch,
    hint: Arc<SeekHint>,
    skipped: bool,
    /// A `prepare_seek` checked the filter (its verdict is `skipped`) for the `seek` that
    /// must follow; every other move clears it.
    prepared: bool,
    error: Option<crate::error::Error>,
}

impl FilteredSeek {
    /// `inner`, skipped by seeks when the armed `hint` fails `may_match`.
    pub fn new(
        inner: Box<dyn InternalIterator>,
        hint: Arc<SeekHint>,
        may_match: MayMatch,
    ) -> FilteredSeek {
        FilteredSeek {
            inner,
            may_match,
            hint,
            skipped: false,
            prepared: false,
            error: None,
        }
    }

    /// True when the seek to `target` (`backward` for `seek_for_prev`) must skip the source.
    fn skips(&mut self, target: &[u8], backward: bool) -> bool {
        self.skipped = match self.hint.get() {
            None => false,
            Some(hash) => match (self.may_match)(target, hash, backward) {
                Ok(maybe) => !maybe,
                Err(e) => {
                    self.error.get_or_insert(e);
                    true
                }
            },
        };
        self.skipped
    }
}

impl InternalIterator for FilteredSeek {
    fn valid(&self) -> bool {
        !self.skipped && self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.prepared = false;
        self.skipped = false;
        self.inner.seek_to_first();
    }
    fn seek_to_last(&mut self) {
        self.prepared = false;
        self.skipped = false;
        self.inner.seek_to_last();
    }
    /// Checks the filter now, so that its miss overlaps the other children's, and passes the
    /// preparation on unless the source is skipped.
    fn prepare_seek(&mut self, target: &[u8]) {
        if !self.skips(target, false) {
            self.inner.prepare_seek(target);
        }
        self.prepared = true;
    }
    fn seek(&mut self, target: &[u8]) {
        let skipped = match std::mem::take(&mut self.prepared) {
            true => self.skipped,
            false => self.skips(target, false),
        };
        if !skipped {
            self.inner.seek(target);
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.prepared = false;
        if !self.skips(target, true) {
            self.inner.seek_for_prev(target);
        }
    }
    fn next(&mut self) {
        self.prepared = false;
        self.inner.next();
    }
    fn prev(&mut self) {
        self.prepared = false;
        self.inner.prev();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.duplicate()),
            None => self.inner.status(),
        }
    }
}
