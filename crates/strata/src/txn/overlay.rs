//! A cursor over a batch's own writes laid over a database cursor (RocksDB's
//! BaseDeltaIterator): what a transaction's iterator shows.
//!
//! Invariants:
//! - `delta` is the batch's entries of one family within the bounds, in the family's key
//!   order (`order`, which the database cursor follows too), copied
//!   when the cursor was made (later writes of the transaction are not seen by it).
//! - When positioned, `current` is the smallest (forward) or largest (backward) key of the
//!   two sources whose resolved value exists: a delta entry hides the base's version of the
//!   same key, and a delta delete hides the key altogether.
//! - Moving forward, both sources sit at or after `current`; moving backward, at or before.
//!   A change of direction seeks both sources around `current` again.
//! - Placed (`placed`, by [`TxnIterator::place`], the updatable cursor's exact-key seek that
//!   a point read answered): the cursor stands on `key` with `value` (source `Delta`) and
//!   neither source has moved; `pos` and `forward` mean nothing. The next movement seeks
//!   the sources to `key` first, which gives the positions a seek to `key` would have, so
//!   the cursor then moves on exactly as if it had been positioned by a seek. A patch while
//!   placed goes into `delta` at the key's place in the order.

use std::sync::Arc;

use crate::column_family::ColumnFamily;
use crate::comparator::KeyOrder;
use crate::db::{Db, DbIterator};
use crate::error::{Error, Result};
use crate::merge::MergeOperator;
use crate::options::ReadOptions;

use super::indexed_batch::{IndexedBatch, Pending};

/// Which source the current entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The database cursor, untouched by the batch: key and value read from it.
    Base,
    /// The batch (alone, or resolved over the base's value): key and value in `key`/`value`.
    Delta,
}

/// A cursor over a transaction's writes over the database. Position it with a seek, then
/// step with `next` / `prev` while `valid()`; check `status()` when it becomes invalid.
///
/// # Examples
///
/// ```
/// use strata::TransactionBase;
/// use strata::{Db, Options, ReadOptions, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"a", b"1")?;
/// db.put(b"c", b"3")?;
/// let mut txn = db.optimistic_transaction(&WriteOptions::default());
/// txn.put(b"b", b"2")?;
/// txn.delete(b"c")?;
/// let mut iter = txn.iter(&ReadOptions::default())?; // the database with the writes over it
/// iter.seek_to_first();
/// let mut seen = Vec::new();
/// while iter.valid() {
///     seen.push((iter.key().to_vec(), iter.value().to_vec()));
///     iter.next();
/// }
/// iter.status()?;
/// assert_eq!(seen, [(b"a".to_vec(), b"1".to_vec()), (b"b".to_vec(), b"2".to_vec())]);
/// # drop(iter);
/// # drop(txn);
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TxnIterator {
    base: DbIterator,
    delta: Vec<(Vec<u8>, Pending)>,
    /// The delta cursor: `delta[pos]` when `pos < delta.len()`; moving backward, `pos` is one
    /// past the entry it stands on (0: before the first).
    pos: usize,
    forward: bool,
    current: Option<Source>,
    key: Vec<u8>,
    value: Vec<u8>,
    merge_operator: Option<Arc<dyn MergeOperator>>,
    family: Arc<str>,
    /// The family's user key order: both sources are in it.
    order: KeyOrder,
    error: Option<Error>,
    /// See the invariants: on `key` without the sources positioned.
    placed: bool,
    /// The bounds the cursor was made with (the base applies them itself), for `place`.
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
}

impl TxnIterator {
    pub(crate) fn new(
        base: DbIterator,
        delta: Vec<(Vec<u8>, Pending)>,
        merge_operator: Option<Arc<dyn MergeOperator>>,
        family: Arc<str>,
        order: KeyOrder,
    ) -> TxnIterator {
        TxnIterator {
            base,
            delta,
            pos: 0,
            forward: true,
            current: None,
            key: Vec::new(),
            value: Vec::new(),
            merge_operator,
            family,
            order,
            error: None,
            placed: false,
            lower: None,
            upper: None,
        }
    }

    /// A cursor over `batch`'s entries of family `cf` laid over `db` read with `options`
    /// (bounds and snapshot), unpositioned.
    pub(crate) fn over(
        batch: &IndexedBatch,
        db: &Db,
        cf: &ColumnFamily,
        options: ReadOptions,
    ) -> Result<TxnIterator> {
        let order = db.key_order_of(cf)?;
        let delta = batch.entries_in(
            cf.id(),
            options.lower_bound.as_deref(),
            options.upper_bound.as_deref(),
            &order,
        );
        let merge_operator = db.merge_operator_of(cf)?;
        let base = db.iter_cf(cf, &options)?;
        let mut iter = TxnIterator::new(base, delta, merge_operator, cf.name_arc(), order);
        iter.lower = options.lower_bound;
        iter.upper = options.upper_bound;
        Ok(iter)
    }

    /// True when `key` is within the cursor's bounds, where [`TxnIterator::place`] may put
    /// it.
    pub(crate) fn within_bounds(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|l| self.order.le(l, key))
            && self.upper.as_deref().is_none_or(|u| self.order.lt(key, u))
    }

    /// Stands on `key` with `value` without moving the sources, as a seek to `key` would
    /// stand when `key` has that value in this cursor's view (the caller read it there: the
    /// batch's entry, or the database at this cursor's snapshot) and is within the bounds.
    /// The next movement positions the sources first (see the invariants).
    pub(crate) fn place(&mut self, key: &[u8], value: Vec<u8>) {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.value = value;
        self.current = Some(Source::Delta);
        self.placed = true;
    }

    /// Ends a placement: positions both sources as a forward seek to the current key
    /// leaves them, the cursor on that key.
    fn unplace(&mut self) {
        if !std::mem::take(&mut self.placed) {
            return;
        }
        let key = std::mem::take(&mut self.key);
        self.base.seek(&key);
        self.pos = self.delta.partition_point(|(k, _)| self.order.lt(k, &key));
        self.forward = true;
        let in_delta = self.delta.get(self.pos).is_some_and(|(k, _)| *k == key);
        let on_base = self.base.valid() && self.base.key() == key.as_slice();
        self.key = key;
        if in_delta {
            // The delta stands on the key, the base on it or after: as `settle_forward`
            // leaves a delta entry (its value is the one placed, or patched since).
            self.current = Some(Source::Delta);
        } else if on_base {
            self.current = Some(Source::Base);
        } else {
            // The view changed under the point read (it cannot, at one snapshot): go on
            // from what the seek found.
            self.settle_forward();
        }
    }

    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        self.current.is_some()
    }

    /// The current key. Panics unless `valid()`.
    pub fn key(&self) -> &[u8] {
        match self
            .current
            .expect("TxnIterator::key called while not valid")
        {
            Source::Base => self.base.key(),
            Source::Delta => &self.key,
        }
    }

    /// The current value. Panics unless `valid()`.
    pub fn value(&self) -> &[u8] {
        match self
            .current
            .expect("TxnIterator::value called while not valid")
        {
            Source::Base => self.base.value(),
            Source::Delta => &self.value,
        }
    }

    /// The error that ended the iteration, if one did.
    pub fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.duplicate()),
            // Placed: the last positioning read no source, so it met no error.
            None if self.placed => Ok(()),
            None => self.base.status(),
        }
    }

    /// Positions at the first key at or after `target`.
    pub fn seek(&mut self, target: &[u8]) {
        self.placed = false;
        self.base.seek(target);
        self.pos = self
            .delta
            .partition_point(|(k, _)| self.order.lt(k, target));
        self.settle_forward();
    }

    /// Positions at the last key at or before `target`.
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.placed = false;
        self.base.seek_for_prev(target);
        self.pos = self
            .delta
            .partition_point(|(k, _)| self.order.le(k, target));
        self.settle_backward();
    }

    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        self.placed = false;
        self.base.seek_to_first();
        self.pos = 0;
        self.settle_forward();
    }

    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        self.placed = false;
        self.base.seek_to_last();
        self.pos = self.delta.len();
        self.settle_backward();
    }

    /// Moves to the next key. Panics unless `valid()`.
    pub fn next(&mut self) {
        self.unplace();
        let source = self
            .current
            .expect("TxnIterator::next called while not valid");
        if self.forward {
            // No copy of the key on this path, the one every scan takes: the base stands on
            // the current key when it is the source (the delta then stands after it), and
            // the delta does when it is (the base on the same key, or after it).
            match source {
                Source::Base => self.base.next(),
                Source::Delta => {
                    if self.base.valid() && self.base.key() == self.key.as_slice() {
                        self.base.next();
                    }
                    self.pos += 1;
                }
            }
        } else {
            let current = self.key().to_vec();
            self.base.seek(&current);
            if self.base.valid() && self.base.key() == current.as_slice() {
                self.base.next();
            }
            self.pos = self
                .delta
                .partition_point(|(k, _)| self.order.le(k, &current));
        }
        self.settle_forward();
    }

    /// Moves to the previous key. Panics unless `valid()`.
    pub fn prev(&mut self) {
        self.unplace();
        let source = self
            .current
            .expect("TxnIterator::prev called while not valid");
        if !self.forward {
            // As in `next`, mirrored: the delta cursor is one past the entry it stands on.
            match source {
                Source::Base => self.base.prev(),
                Source::Delta => {
                    if self.base.valid() && self.base.key() == self.key.as_slice() {
                        self.base.prev();
                    }
                    self.pos -= 1;
                }
            }
        } else {
            let current = self.key().to_vec();
            self.base.seek_for_prev(&current);
            if self.base.valid() && self.base.key() == current.as_slice() {
                self.base.prev();
            }
            self.pos = self
                .delta
                .partition_point(|(k, _)| self.order.lt(k, &current));
        }
        self.settle_backward();
    }

    /// Records `pending` as the batch's entry for the current key and shows it: the value
    /// for a put, an empty value for a delete (the cursor stays on the key). Keeps the
    /// positions' invariants: the entry goes where the delta cursor stands on the key.
    pub(crate) fn patch_current(&mut self, pending: Pending) {
        let key = self.key().to_vec();
        if self.placed {
            let at = self.delta.partition_point(|(k, _)| self.order.lt(k, &key));
            if self.delta.get(at).is_some_and(|(k, _)| *k == key) {
                self.delta[at].1 = pending.clone();
            } else {
                self.delta.insert(at, (key.clone(), pending.clone()));
            }
        } else if self.forward {
            if self.delta.get(self.pos).is_some_and(|(k, _)| *k == key) {
                self.delta[self.pos].1 = pending.clone();
            } else {
                self.delta.insert(self.pos, (key.clone(), pending.clone()));
            }
        } else if self.pos > 0 && self.delta[self.pos - 1].0 == key {
            self.delta[self.pos - 1].1 = pending.clone();
        } else {
            self.delta.insert(self.pos, (key.clone(), pending.clone()));
            self.pos += 1;
        }
        self.value = match pending {
            Pending::Value(v) => v,
            Pending::Deleted | Pending::Merges { .. } => Vec::new(),
        };
        self.key = key;
        self.current = Some(Source::Delta);
    }

    /// Resolves a delta entry over the base value (if the base stands on the same key) into
    /// `key`/`value`; false when the batch deletes the key.
    fn take_delta(&mut self, index: usize, base_same_key: bool) -> bool {
        let base_value = base_same_key.then(|| self.base.value());
        let (key, pending) = &self.delta[index];
        match pending.resolve(
            key,
            base_value,
            self.merge_operator.as_deref(),
            &self.family,
        ) {
            Ok(Some(v)) => {
                self.key.clear();
                self.key.extend_from_slice(key);
                self.value = v;
                true
            }
            Ok(None) => false,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    fn settle_forward(&mut self) {
        self.forward = true;
        self.current = None;
        loop {
            if self.error.is_some() {
                return;
            }
            let delta_key = self.delta.get(self.pos).map(|(k, _)| k.as_slice());
            let order = match (self.base.valid(), delta_key) {
                (false, None) => return,
                (true, None) => std::cmp::Ordering::Less,
                (false, Some(_)) => std::cmp::Ordering::Greater,
                (true, Some(d)) => self.order.compare(self.base.key(), d),
            };
            match order {
                std::cmp::Ordering::Less => {
                    self.current = Some(Source::Base);
                    return;
                }
                std::cmp::Ordering::Greater => {
                    let i = self.pos;
                    if self.take_delta(i, false) {
                        self.current = Some(Source::Delta);
                        return;
                    }
                    self.pos += 1;
                }
                std::cmp::Ordering::Equal => {
                    let i = self.pos;
                    if self.take_delta(i, true) {
                        self.current = Some(Source::Delta);
                        return;
                    }
                    self.pos += 1;
                    self.base.next();
                }
            }
        }
    }

    fn settle_backward(&mut self) {
        self.forward = false;
        self.current = None;
        loop {
            if self.error.is_some() {
                return;
            }
            let delta_key = self.pos.checked_sub(1).map(|i| self.delta[i].0.as_slice());
            let order = match (self.base.valid(), delta_key) {
                (false, None) => return,
                (true, None) => std::cmp::Ordering::Greater,
                (false, Some(_)) => std::cmp::Ordering::Less,
                (true, Some(d)) => self.order.compare(self.base.key(), d),
            };
            match order {
                std::cmp::Ordering::Greater => {
                    self.current = Some(Source::Base);
                    return;
                }
                std::cmp::Ordering::Less => {
                    let i = self.pos - 1;
                    if self.take_delta(i, false) {
                        self.current = Some(Source::Delta);
                        return;
                    }
                    self.pos -= 1;
                }
                std::cmp::Ordering::Equal => {
                    let i = self.pos - 1;
                    if self.take_delta(i, true) {
                        self.current = Some(Source::Delta);
                        return;
                    }
                    self.pos -= 1;
                    self.base.prev();
                }
            }
        }
    }
}
