//! The database iterator: user keys and values as of a snapshot, over a merge of every
//! memtable (and, later, table).
//!
//! The merged internal stream holds, per user key, every version newest first. Moving
//! forward, the iterator stops at the first version visible at its snapshot and skips the
//! rest of that key; a visible delete hides the key. Moving backward it scans a key's
//! versions oldest to newest and keeps the last visible one, so it stands *before* the key's
//! entries in the stream (it then holds the key and value in its own buffers). This is the
//! scheme of LevelDB's DBIter.

use std::ops::Bound;

use crate::db::{Db, Snapshot};
use crate::error::{Error, Result};
use crate::iterator::{InternalIterator, MergingIterator};
use crate::key::{
    append_internal_key, seek_key, ParsedKey, SequenceNumber, ValueKind, MAX_SEQUENCE,
};
use crate::options::ReadOptions;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// The internal iterator is on the current entry.
    Forward,
    /// The internal iterator is before all entries of the current key; `saved_key` and
    /// `saved_value` hold the current entry.
    Reverse,
}

/// A cursor over the database as of one snapshot. Position it with a seek, then step with
/// `next` / `prev` while `valid()`; check `status()` when it becomes invalid.
pub struct DbIterator {
    iter: MergingIterator,
    /// The sequence number the iterator reads at.
    sequence: SequenceNumber,
    /// The caller's snapshot, held for as long as the iterator lives. Without one the
    /// iterator needs no registered snapshot: it reads only the memtables and files of the
    /// version it holds, which no flush or compaction changes.
    _snapshot: Option<Snapshot>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    direction: Direction,
    valid: bool,
    saved_key: Vec<u8>,
    saved_value: Vec<u8>,
    error: Option<Error>,
}

impl DbIterator {
    pub(crate) fn new(
        iter: MergingIterator,
        (sequence, snapshot): (SequenceNumber, Option<Snapshot>),
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> DbIterator {
        DbIterator {
            iter,
            sequence,
            _snapshot: snapshot,
            lower,
            upper,
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            error: None,
        }
    }

    fn seq(&self) -> u64 {
        self.sequence
    }

    /// True when positioned on a key.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key (empty when not valid).
    pub fn key(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        match self.direction {
            Direction::Forward => crate::key::user_key(self.iter.key()),
            Direction::Reverse => &self.saved_key,
        }
    }

    /// The current value (empty when not valid).
    pub fn value(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        match self.direction {
            Direction::Forward => self.iter.value(),
            Direction::Reverse => &self.saved_value,
        }
    }

    /// The first error met, if any: a corrupt entry, or an error of a table below.
    pub fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.duplicate()),
            None => self.iter.status(),
        }
    }

    /// Moves to the first key at or after `target` (and at or after the lower bound).
    pub fn seek(&mut self, target: &[u8]) {
        let target = match &self.lower {
            Some(lower) if lower.as_slice() > target => lower.clone(),
            _ => target.to_vec(),
        };
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.saved_key.clear();
        self.iter.seek(&seek_key(&target, self.seq()));
        self.find_next_user_entry(false);
    }

    /// Moves to the last key at or before `target` (and below the upper bound).
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        if matches!(&self.upper, Some(upper) if upper.as_slice() <= target) {
            self.seek_before_upper();
            return;
        }
        // The internal key (target, 0, 0) sorts after every version of `target`.
        let mut last_of_target = Vec::with_capacity(target.len() + 8);
        append_internal_key(&mut last_of_target, target, 0, 0);
        self.iter.seek_for_prev(&last_of_target);
        self.start_reverse();
    }

    /// Moves to the first key.
    pub fn seek_to_first(&mut self) {
        match self.lower.clone() {
            Some(lower) => self.seek(&lower),
            None => {
                self.direction = Direction::Forward;
                self.saved_value.clear();
                self.saved_key.clear();
                self.iter.seek_to_first();
                self.find_next_user_entry(false);
            }
        }
    }

    /// Moves to the last key.
    pub fn seek_to_last(&mut self) {
        if self.upper.is_some() {
            self.seek_before_upper();
        } else {
            self.iter.seek_to_last();
            self.start_reverse();
        }
    }

    /// Positions the internal iterator on the last entry below the upper bound.
    fn seek_before_upper(&mut self) {
        let upper = self.upper.clone().unwrap_or_default();
        self.iter.seek(&seek_key(&upper, MAX_SEQUENCE));
        if self.iter.valid() {
            self.iter.prev();
        } else {
            self.iter.seek_to_last();
        }
        self.start_reverse();
    }

    fn start_reverse(&mut self) {
        self.direction = Direction::Reverse;
        self.saved_key.clear();
        self.saved_value.clear();
        self.find_prev_user_entry();
    }

    /// Moves to the next key.
    pub fn next(&mut self) {
        if !self.valid {
            return;
        }
        if self.direction == Direction::Reverse {
            // The internal iterator is before the current key's entries: step into them,
            // then skip them as below. `saved_key` holds the key to skip.
            self.direction = Direction::Forward;
            if self.iter.valid() {
                self.iter.next();
            } else {
                self.iter.seek_to_first();
            }
        } else {
            self.saved_key.clear();
            self.saved_key
                .extend_from_slice(crate::key::user_key(self.iter.key()));
            self.iter.next();
        }
        self.find_next_user_entry(true);
    }

    /// Moves to the previous key.
    pub fn prev(&mut self) {
        if !self.valid {
            return;
        }
        if self.direction == Direction::Forward {
            // Step back over the current key's entries, so the reverse scan starts before it.
            self.saved_key.clear();
            self.saved_key
                .extend_from_slice(crate::key::user_key(self.iter.key()));
            loop {
                self.iter.prev();
                if !self.iter.valid() {
                    self.valid = false;
                    self.saved_key.clear();
                    self.saved_value.clear();
                    return;
                }
                if crate::key::user_key(self.iter.key()) < self.saved_key.as_slice() {
                    break;
                }
            }
            self.direction = Direction::Reverse;
        }
        self.find_prev_user_entry();
    }

    fn parse_current(&mut self) -> Option<ParsedKey<'_>> {
        match ParsedKey::parse(self.iter.key()) {
            Some(p) => Some(p),
            None => {
                self.error = Some(Error::corruption(
                    "<memtable>",
                    0,
                    "internal key shorter than its trailer",
                ));
                None
            }
        }
    }

    /// Forward: stops at the first visible, undeleted key; with `skipping`, keys up to
    /// `saved_key` are hidden.
    fn find_next_user_entry(&mut self, mut skipping: bool) {
        let seq = self.seq();
        while self.iter.valid() {
            let upper = self.upper.as_deref();
            let Some(p) = ParsedKey::parse(self.iter.key()) else {
                self.parse_current();
                break;
            };
            if upper.is_some_and(|u| p.user_key >= u) {
                break;
            }
            if p.seq <= seq {
                match p.value_kind() {
                    Some(ValueKind::Delete | ValueKind::SingleDelete) => {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        skipping = true;
                    }
                    Some(ValueKind::Put)
                        if !(skipping && p.user_key <= self.saved_key.as_slice()) =>
                    {
                        self.valid = true;
                        self.saved_key.clear();
                        return;
                    }
                    Some(ValueKind::Put) => {} // hidden by a newer delete or already returned
                    None => {}
                }
            }
            self.iter.next();
        }
        self.valid = false;
        self.saved_key.clear();
    }

    /// Backward: keeps the newest visible version of the key before the current position.
    fn find_prev_user_entry(&mut self) {
        let seq = self.seq();
        let mut found_kind = ValueKind::Delete;
        while self.iter.valid() {
            let lower = self.lower.as_deref();
            let Some(p) = ParsedKey::parse(self.iter.key()) else {
                self.parse_current();
                break;
            };
            if lower.is_some_and(|l| p.user_key < l) {
                break;
            }
            if p.seq <= seq {
                if found_kind != ValueKind::Delete && p.user_key < self.saved_key.as_slice() {
                    break; // the previous key's newest visible version is found
                }
                match p.value_kind() {
                    Some(ValueKind::Put) => {
                        found_kind = ValueKind::Put;
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        let v = self.iter.value();
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(v);
                    }
                    Some(ValueKind::Delete | ValueKind::SingleDelete) => {
                        found_kind = ValueKind::Delete;
                        self.saved_key.clear();
                        self.saved_value.clear();
                    }
                    None => {}
                }
            }
            self.iter.prev();
        }
        if found_kind == ValueKind::Delete {
            self.valid = false;
            self.saved_key.clear();
            self.saved_value.clear();
            self.direction = Direction::Forward;
        } else {
            self.valid = true;
        }
    }
}

/// The key-value pairs of a key range, as a Rust iterator (from [`Db::range`]).
pub struct Range {
    iter: DbIterator,
    started: bool,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
}

impl Range {
    pub(crate) fn new<K, R>(db: &Db, range: R) -> Range
    where
        K: AsRef<[u8]>,
        R: std::ops::RangeBounds<K>,
    {
        let own = |b: Bound<&K>| match b {
            Bound::Included(k) => Bound::Included(k.as_ref().to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.as_ref().to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let start = own(range.start_bound());
        let end = own(range.end_bound());
        let options = ReadOptions {
            lower_bound: match &start {
                Bound::Included(k) | Bound::Excluded(k) => Some(k.clone()),
                Bound::Unbounded => None,
            },
            upper_bound: match &end {
                Bound::Excluded(k) => Some(k.clone()),
                _ => None,
            },
            ..ReadOptions::default()
        };
        Range {
            iter: db.iter(options),
            started: false,
            start,
            end,
        }
    }
}

impl Iterator for Range {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.started = true;
            self.iter.seek_to_first();
            if let Bound::Excluded(start) = &self.start {
                if self.iter.valid() && self.iter.key() == start.as_slice() {
                    self.iter.next();
                }
            }
        } else {
            self.iter.next();
        }
        if !self.iter.valid() {
            return self.iter.status().err().map(Err);
        }
        if let Bound::Included(end) = &self.end {
            if self.iter.key() > end.as_slice() {
                return None;
            }
        }
        Some(Ok((self.iter.key().to_vec(), self.iter.value().to_vec())))
    }
}
