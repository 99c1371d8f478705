//! Dropping the point entries that range deletions delete, in flushes and compactions.
//!
//! [`SkipCovered`] wraps the merged input of a job and steps over every entry that the
//! aggregator of the *input* tombstones (`RangeDelAggregator::for_compaction` with the live
//! snapshots) says no reader can see: a tombstone `t > s` covers `key#s` and no snapshot
//! lies in `[s, t)`. What follows (the visibility filter, the merge-operand collapse) sees
//! the stream as if those entries had never been written. That is sound for both: an entry
//! dropped here has every older version of its key in the same snapshot stripe dropped as
//! well (the same tombstone covers them and their stripe is not older), so no later rule
//! loses the entry that shadowed them; a merge run then ends where its covered base was, as
//! it would at a delete.
//!
//! Only forward steps are supported: jobs read their input once, in order.

use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::key::ParsedKey;
use crate::range_del::RangeDelAggregator;

/// The entries of `inner` that the range deletions of `agg` do not drop.
pub struct SkipCovered<I> {
    inner: I,
    agg: RangeDelAggregator,
}

impl<I: InternalIterator> SkipCovered<I> {
    /// Wraps `inner`; with no tombstones in `agg` it passes every entry.
    pub fn new(inner: I, agg: RangeDelAggregator) -> SkipCovered<I> {
        SkipCovered { inner, agg }
    }

    fn skip(&mut self) {
        if self.agg.is_empty() {
            return;
        }
        while self.inner.valid() {
            match ParsedKey::parse(self.inner.key()) {
                Some(p) if self.agg.should_delete(p.user_key, p.seq) => self.inner.next(),
                _ => break,
            }
        }
    }
}

impl<I: InternalIterator> InternalIterator for SkipCovered<I> {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.skip();
    }
    fn seek_to_last(&mut self) {
        // Jobs read forward only; a backward position is the caller's own business.
        self.inner.seek_to_last();
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.skip();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target);
    }
    fn next(&mut self) {
        self.inner.next();
        self.skip();
    }
    fn prev(&mut self) {
        self.inner.prev();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}
