//! The database iterator: user keys and values as of a sequence number (a snapshot's, or the
//! last one), over one merging iterator of the memtables, the L0 tables and a concatenating
//! cursor per deeper level (see `Db::iter`). It reads any [`MergingIterator`]: the tests
//! build one over trees of their own.
//!
//! The merged internal stream holds, per user key, every version newest first. Moving
//! forward, the iterator stops at the first version visible at its snapshot and skips the
//! rest of that key; a visible delete hides the key. Moving backward it scans a key's
//! versions oldest to newest and keeps the last visible one, so it stands *before* the key's
//! entries in the stream (it then holds the key and value in its own buffers). This is the
//! scheme of LevelDB's DBIter.
//!
//! Merge operands (RocksDB's DBIter does the same): moving forward, a key whose first visible
//! version is a merge operand is resolved by reading on through its older versions to the
//! first put or delete (or the next key), and merging; the internal iterator is then past the
//! current entry (`merged`), and the key and value are in the buffers. Moving backward, the
//! scan of a key's versions oldest to newest keeps the operands after the newest put or
//! delete, and merges them when the key is done.
//!
//! Range deletions: the iterator holds a [`RangeDelAggregator`] at its sequence number with
//! the tombstones of every source of its view (see `DbInner::iter`), and treats a visible
//! version that a tombstone deletes as a delete of its key, in both directions and when
//! collecting merge operands. A tombstone deleting a version deletes every older version of
//! the key too, so the rule for a point delete carries over unchanged. Without tombstones the
//! aggregator is absent and the checks cost one branch.
//!
//! Prefix seeks (a column family with a prefix extractor, RocksDB's prefix mode): a seek or
//! `seek_for_prev` whose target is in the extractor's domain arms the [`SeekHint`] with the
//! hash of the target's prefix for the length of the internal seek, so that each table and
//! each level cursor (wrapped as [`FilteredSeek`] by [`prefix_filtered_table`](super::prefix::prefix_filtered_table) and
//! [`prefix_filtered_level`](super::prefix::prefix_filtered_level)) asks its filter and is skipped without reading when no key of
//! that prefix is there; `total_order_seek` leaves the hint out. Keys with one prefix are
//! contiguous, so every key of the target's prefix after the target is in a source the seek
//! kept; keys of later prefixes may be in skipped ones, which is why
//! `prefix_same_as_start` (the iterator stops at the first key of another prefix, a bound
//! like the upper bound) or `total_order_seek` is how to read past a prefix.

use std::ops::Bound;

use super::prefix::PrefixSeek;
use crate::comparator::KeyOrder;
use crate::db::blob::source::BlobSource;
use crate::db::DbInner;
use crate::db::Snapshot;
use crate::error::{Error, Result};
use crate::histogram::{Histogram, Histograms};
use crate::iterator::{InternalIterator, MergingIterator};
use crate::key::{
    append_internal_key, pack_trailer, seek_key, ParsedKey, SequenceNumber, ValueKind,
    KIND_FOR_SEEK, MAX_SEQUENCE,
};
use crate::merge::MergeOperator;
use crate::options::ReadOptions;
use crate::prefix::prefix_of;
use crate::range_del::RangeDelAggregator;
use crate::table::filter::filter_hash;
use crate::version::read_charge::SEEK_CHARGE;
use crate::version::Version;
use std::sync::Arc;

/// Bytes of a seek key built on the stack: a seek to a user key of up to this length less
/// the trailer allocates nothing.
const SEEK_KEY_ON_STACK: usize = 128;

/// [`seek_key`] of `user_key` at `seq`, built in `on_stack` when it fits, else in `on_heap`.
fn seek_key_in<'a>(
    user_key: &[u8],
    seq: SequenceNumber,
    on_stack: &'a mut [u8; SEEK_KEY_ON_STACK],
    on_heap: &'a mut Vec<u8>,
) -> &'a [u8] {
    let trailer = pack_trailer(seq, KIND_FOR_SEEK).to_le_bytes();
    let len = user_key.len() + trailer.len();
    match on_stack.get_mut(..len) {
        Some(key) => {
            let (user, rest) = key.split_at_mut(user_key.len());
            user.copy_from_slice(user_key);
            rest.copy_from_slice(&trailer);
            key
        }
        None => {
            *on_heap = seek_key(user_key, seq);
            on_heap
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// The internal iterator is on the current entry, or, when the current value was merged,
    /// past it (on an older version of the key or on a later key); `saved_key` and
    /// `saved_value` then hold the current entry.
    Forward,
    /// The internal iterator is before all entries of the current key; `saved_key` and
    /// `saved_value` hold the current entry.
    Reverse,
}

/// A cursor over the database as of one snapshot. Position it with a seek, then step with
/// `next` / `prev` while `valid()`; check `status()` when it becomes invalid.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, ReadOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// let entries = [("log/001", "boot"), ("log/002", "login"), ("log/003", "logout"), ("z", "")];
/// for (key, value) in entries {
///     db.put(key, value)?;
/// }
/// let mut iter = db.iter(&ReadOptions::default());
/// iter.seek(b"log/002"); // the first key at or after the target
/// let mut walked = Vec::new();
/// while iter.valid() && iter.key().starts_with(b"log/") {
///     walked.push(String::from_utf8(iter.value().to_vec())?);
///     iter.next();
/// }
/// iter.status()?; // an error, if one ended the walk
/// assert_eq!(walked, ["login", "logout"]);
///
/// iter.seek_for_prev(b"log/0025"); // the last key at or before it
/// assert_eq!(iter.key(), b"log/002");
/// iter.prev();
/// assert_eq!(iter.value(), b"boot");
/// # drop(iter);
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DbIterator {
    iter: MergingIterator,
    /// The sequence number the iterator reads at.
    sequence: SequenceNumber,
    /// The caller's snapshot, held for as long as the iterator lives. Without one the
    /// iterator needs no registered snapshot: it reads only the memtables and files of the
    /// version it holds, which no flush or compaction changes.
    _snapshot: Option<Snapshot>,
    /// The version the iterator reads, held so that no table or blob file it names is
    /// deleted while the iterator lives: its L0 cursors hold open tables, but a blob file a
    /// reference points to is opened only when the iterator reaches it.
    _version: Option<Arc<Version>>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    direction: Direction,
    valid: bool,
    saved_key: Vec<u8>,
    saved_value: Vec<u8>,
    error: Option<Error>,
    /// Forward only: the current value was merged and is in `saved_value`.
    merged: bool,
    /// Forward only: the current entry (under the internal iterator) is a blob reference,
    /// and its value is in `saved_value`.
    blob_forward: bool,
    /// Reads the values of blob references; `None` over sources that hold none.
    blobs: Option<Arc<BlobSource>>,
    merge_operator: Option<Arc<dyn MergeOperator>>,
    /// The column family's name, for errors.
    family: Arc<str>,
    /// The range deletions of the view; `None` when there are none.
    range_del: Option<RangeDelAggregator>,
    /// The column family's user key order (the merging iterator's): bounds and steps follow
    /// it.
    order: KeyOrder,
    /// Prefix seeking; `None` without a prefix extractor.
    prefix: Option<PrefixSeek>,
    /// With `prefix_same_as_start`: the prefix the iterator stays within, set by the last
    /// positioning call (`None`: no bound).
    prefix_bound: Option<Vec<u8>>,
    /// In a TTL family, the clock's time when the iterator was made: values carry an expiry
    /// suffix, and an expired newest version hides its key.
    ttl_now: Option<u64>,
    /// See [`IterContext::l0_charge`].
    l0_charge: Option<(Arc<DbInner>, usize)>,
    /// See [`IterContext::seek_histograms`].
    seek_histograms: Option<Arc<Histograms>>,
    /// See [`IterContext::refresh`].
    refresh: Option<RefreshSource>,
}

/// What [`DbIterator::refresh`] makes a new view from: the database, the column family and
/// the read options besides the snapshot and bounds (which the iterator keeps itself).
pub(crate) struct RefreshSource {
    pub inner: Arc<DbInner>,
    pub family: crate::column_family::ColumnFamily,
    pub prefix_same_as_start: bool,
    pub total_order_seek: bool,
    pub readahead_size: usize,
    pub fill_cache: bool,
    pub verify_checksums: bool,
}

/// What the expiry suffix of a TTL family's value says.
enum TtlCheck {
    Live,
    Expired,
    /// The value is too short to hold a suffix (its length).
    Short(usize),
}

/// What a database iterator reads with besides its merged sources; all of it is optional.
#[derive(Default)]
pub(crate) struct IterContext {
    /// Resolves merge operands (without one, a merge operand met is an error).
    pub merge_operator: Option<Arc<dyn MergeOperator>>,
    /// The column family's name, for errors; `None` is the default family.
    pub family: Option<Arc<str>>,
    /// The version the sources belong to, held for the iterator's life.
    pub version: Option<Arc<Version>>,
    /// Reads the values of blob references.
    pub blobs: Option<Arc<BlobSource>>,
    /// The range deletions of the view.
    pub range_del: Option<RangeDelAggregator>,
    /// In a TTL family, the clock's time now.
    pub ttl_now: Option<u64>,
    /// Prefix seeking (see the module documentation).
    pub prefix: Option<PrefixSeek>,
    /// The database and the number of L0 tables the iterator merges, when its seeks are to
    /// charge them (read-triggered compaction, `version::read_charge`).
    pub l0_charge: Option<(Arc<DbInner>, usize)>,
    /// The database's histograms, when seeks are to be timed in them
    /// ([`StatsLevel::ExceptDetailedTimers`](crate::StatsLevel)).
    pub seek_histograms: Option<Arc<Histograms>>,
    /// The database and family the iterator reads, for [`DbIterator::refresh`] (`None`: an
    /// iterator over sources of a test's own, which cannot be refreshed).
    pub refresh: Option<RefreshSource>,
}

impl DbIterator {
    /// An iterator over `iter` at `sequence`, within `lower..upper`, with `context`. Built in
    /// one piece: the iterator is a few hundred bytes, and one is made for every seek of a
    /// short scan, so a chain of builder calls (one move of it each) was a measurable share
    /// of such a seek.
    pub(crate) fn new(
        iter: MergingIterator,
        (sequence, snapshot): (SequenceNumber, Option<Snapshot>),
        (lower, upper): (Option<Vec<u8>>, Option<Vec<u8>>),
        context: IterContext,
    ) -> DbIterator {
        let order = iter.order().clone();
        let IterContext {
            merge_operator,
            family,
            version,
            blobs,
            range_del,
            ttl_now,
            prefix,
            l0_charge,
            seek_histograms,
            refresh,
        } = context;
        DbIterator {
            iter,
            sequence,
            _snapshot: snapshot,
            _version: version,
            lower,
            upper,
            direction: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            error: None,
            merged: false,
            blob_forward: false,
            blobs,
            merge_operator,
            family: family.unwrap_or_else(|| crate::version::DEFAULT_FAMILY_NAME.into()),
            range_del: range_del.filter(|agg| !agg.is_empty()),
            order,
            ttl_now,
            prefix,
            prefix_bound: None,
            l0_charge,
            seek_histograms,
            refresh,
        }
    }

    /// Re-pins the iterator to the current state of its database (the last sequence number,
    /// the current tables and memtables of its column family), as RocksDB's
    /// `Iterator::Refresh`: afterwards it sees the writes made since it was created, or, on
    /// a secondary instance, what the last [`Db::try_catch_up_with_primary`] brought in. It
    /// keeps its bounds and read options, but not a snapshot it was made with (it reads the
    /// latest state, as RocksDB's `Refresh()` does), and lets go of the view it held. It is
    /// left unpositioned: seek again. Fails, leaving the iterator as it was, for a dropped
    /// column family or a closed database.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let mut options = strata::Options::default();
    /// # options.create_if_missing = true;
    /// let db = strata::Db::open(dir.path(), options)?;
    /// db.put(b"a", b"1")?;
    /// let mut iter = db.iter(&strata::ReadOptions::default());
    /// db.put(b"b", b"2")?;
    /// iter.seek(b"b");
    /// assert!(!iter.valid()); // made before the write
    /// iter.refresh()?;
    /// iter.seek(b"b");
    /// assert_eq!(iter.value(), b"2");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// [`Db::try_catch_up_with_primary`]: crate::Db::try_catch_up_with_primary
    pub fn refresh(&mut self) -> Result<()> {
        let Some(source) = &self.refresh else {
            return Err(Error::InvalidArgument(
                "this iterator does not read a database, so it cannot be refreshed".into(),
            ));
        };
        let cf = source.inner.family(&source.family)?;
        let options = ReadOptions {
            snapshot: None,
            lower_bound: self.lower.clone(),
            upper_bound: self.upper.clone(),
            prefix_same_as_start: source.prefix_same_as_start,
            total_order_seek: source.total_order_seek,
            readahead_size: source.readahead_size,
            fill_cache: source.fill_cache,
            verify_checksums: source.verify_checksums,
        };
        *self = source.inner.iter(&cf, options);
        Ok(())
    }

    /// Before a seek to user key `target`: sets the prefix bound (with
    /// `prefix_same_as_start`) and, with `filter`, arms the hint with the target's prefix.
    /// Call [`DbIterator::end_prefix_seek`] after the internal seek.
    fn start_prefix_seek(&mut self, target: &[u8], filter: bool) {
        let Some(ps) = &self.prefix else {
            return;
        };
        let prefix = prefix_of(ps.extractor.as_ref(), target);
        if let (Some(p), true, Some(hint)) = (prefix, filter, &ps.hint) {
            hint.arm(filter_hash(p));
        }
        self.prefix_bound = match prefix {
            Some(p) if ps.same_as_start => {
                let mut bound = self.prefix_bound.take().unwrap_or_default();
                bound.clear();
                bound.extend_from_slice(p);
                Some(bound)
            }
            _ => None,
        };
    }

    /// After the internal seek: later internal seeks read every source.
    fn end_prefix_seek(&self) {
        if let Some(hint) = self.prefix.as_ref().and_then(|p| p.hint.as_ref()) {
            hint.disarm();
        }
    }

    /// After `seek_to_first` / `seek_to_last`: with `prefix_same_as_start` the prefix of the
    /// key found bounds the iteration (as RocksDB).
    fn bound_to_current_prefix(&mut self) {
        self.prefix_bound = None;
        if !self.valid {
            return;
        }
        if let Some(ps) = &self.prefix {
            if ps.same_as_start {
                let key = self.key();
                self.prefix_bound = prefix_of(ps.extractor.as_ref(), key).map(<[u8]>::to_vec);
            }
        }
    }

    /// True when `user_key` is outside the prefix bound (never without one).
    #[inline]
    fn outside_prefix(&self, user_key: &[u8]) -> bool {
        match (&self.prefix_bound, &self.prefix) {
            (Some(bound), Some(ps)) => {
                prefix_of(ps.extractor.as_ref(), user_key) != Some(bound.as_slice())
            }
            _ => false,
        }
    }

    /// The state of a stored value of a TTL family (always live in other families, where
    /// the value is not read: fetching it is a call through every level of the merge).
    #[inline]
    fn ttl_check<'a>(ttl_now: Option<u64>, value: impl FnOnce() -> &'a [u8]) -> TtlCheck {
        let Some(now) = ttl_now else {
            return TtlCheck::Live;
        };
        let value = value();
        match crate::compaction_filter::ttl::split(value) {
            None => TtlCheck::Short(value.len()),
            Some((_, expiry)) if crate::compaction_filter::ttl::is_expired(expiry, now) => {
                TtlCheck::Expired
            }
            Some(_) => TtlCheck::Live,
        }
    }

    /// The kind of a visible version as the iterator treats it: a version a range deletion
    /// deletes acts as a delete.
    #[inline]
    fn kind_of(range_del: &Option<RangeDelAggregator>, p: &ParsedKey<'_>) -> Option<ValueKind> {
        // A blob reference is a put whose value is elsewhere.
        let kind = match p.value_kind() {
            Some(ValueKind::BlobIndex) => Some(ValueKind::Put),
            other => other,
        };
        match range_del {
            Some(agg) if agg.should_delete(p.user_key, p.seq) => Some(ValueKind::Delete),
            _ => kind,
        }
    }

    /// The value of the blob reference `reference` of `user_key`, into `out`.
    fn read_blob(
        blobs: &Option<Arc<BlobSource>>,
        user_key: &[u8],
        reference: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let Some(blobs) = blobs else {
            return Err(Error::Unavailable(format!(
                "internal error: key {} holds a blob reference and the iterator reads no \
                 blob files",
                crate::util::printable(user_key)
            )));
        };
        *out = blobs.get(user_key, reference)?;
        Ok(())
    }

    /// Replaces the blob reference in `saved_value` (of `saved_key`) with its value.
    fn read_saved_blob(&mut self) -> Result<()> {
        let reference = std::mem::take(&mut self.saved_value);
        Self::read_blob(
            &self.blobs,
            &self.saved_key,
            &reference,
            &mut self.saved_value,
        )
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
            Direction::Forward if !self.merged => crate::key::user_key(self.iter.key()),
            _ => &self.saved_key,
        }
    }

    /// The current value (empty when not valid).
    pub fn value(&self) -> &[u8] {
        if !self.valid {
            return &[];
        }
        let stored = match self.direction {
            Direction::Forward if !self.merged && !self.blob_forward => self.iter.value(),
            _ => &self.saved_value,
        };
        match self.ttl_now {
            // Values of a TTL family were checked to hold the suffix when found.
            Some(_) => {
                &stored[..stored
                    .len()
                    .saturating_sub(crate::compaction_filter::ttl::SUFFIX_LEN)]
            }
            None => stored,
        }
    }

    /// The first error met, if any: a corrupt entry, or an error of a table below.
    pub fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.duplicate()),
            None => self.iter.status(),
        }
    }

    /// Moves to the first key at or after `target` (and at or after the lower bound). With a
    /// prefix extractor this is a prefix seek (see [`ReadOptions::prefix_same_as_start`] and
    /// [`ReadOptions::total_order_seek`]).
    pub fn seek(&mut self, target: impl AsRef<[u8]>) {
        let target = target.as_ref();
        let started = self.seek_histograms.is_some().then(std::time::Instant::now);
        self.seek_forward(target, true);
        if let (Some(h), Some(started)) = (&self.seek_histograms, started) {
            h.record(Histogram::Seek, started.elapsed().as_micros() as u64);
        }
    }

    /// [`DbIterator::seek`]; `prefix_mode` false for a seek standing in for `seek_to_first`.
    fn seek_forward(&mut self, target: &[u8], prefix_mode: bool) {
        let below_lower = matches!(&self.lower, Some(lower) if self.order.lt(target, lower));
        let lower;
        let target = match below_lower {
            true => {
                lower = self.lower.clone().unwrap_or_default();
                &lower[..]
            }
            false => target,
        };
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.saved_key.clear();
        if let (Some((db, tables)), Some(version)) = (&self.l0_charge, &self._version) {
            db.charge_l0_reads(version, *tables as u64 * SEEK_CHARGE);
        }
        if prefix_mode {
            self.start_prefix_seek(target, true);
        }
        let (mut on_stack, mut on_heap) = ([0; SEEK_KEY_ON_STACK], Vec::new());
        self.iter
            .seek(seek_key_in(target, self.seq(), &mut on_stack, &mut on_heap));
        self.end_prefix_seek();
        self.find_next_user_entry(false);
    }

    /// Moves to the last key at or before `target` (and below the upper bound).
    pub fn seek_for_prev(&mut self, target: impl AsRef<[u8]>) {
        let target = target.as_ref();
        if matches!(&self.upper, Some(upper) if self.order.le(upper, target)) {
            // The internal seek goes to the bound, not into the target's prefix.
            self.start_prefix_seek(target, false);
            self.seek_before_upper();
            return;
        }
        // The internal key (target, 0, 0) sorts after every version of `target`.
        let mut last_of_target = Vec::with_capacity(target.len() + 8);
        append_internal_key(&mut last_of_target, target, 0, 0);
        self.start_prefix_seek(target, true);
        self.iter.seek_for_prev(&last_of_target);
        self.end_prefix_seek();
        self.start_reverse();
    }

    /// Moves to the first key.
    pub fn seek_to_first(&mut self) {
        self.prefix_bound = None;
        match self.lower.clone() {
            Some(lower) => self.seek_forward(&lower, false),
            None => {
                self.direction = Direction::Forward;
                self.saved_value.clear();
                self.saved_key.clear();
                self.iter.seek_to_first();
                self.find_next_user_entry(false);
            }
        }
        self.bound_to_current_prefix();
    }

    /// Moves to the last key.
    pub fn seek_to_last(&mut self) {
        self.prefix_bound = None;
        if self.upper.is_some() {
            self.seek_before_upper();
        } else {
            self.iter.seek_to_last();
            self.start_reverse();
        }
        self.bound_to_current_prefix();
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
        } else if !self.merged {
            self.saved_key.clear();
            self.saved_key
                .extend_from_slice(crate::key::user_key(self.iter.key()));
            self.iter.next();
        }
        // (After a merge the internal iterator is already past the entry and `saved_key`
        // holds the key to skip.)
        self.find_next_user_entry(true);
    }

    /// Moves to the previous key.
    pub fn prev(&mut self) {
        if !self.valid {
            return;
        }
        if self.direction == Direction::Forward {
            // Step back over the current key's entries, so the reverse scan starts before it.
            // After a merge `saved_key` holds the key, and the internal iterator is past its
            // entries, or at the end of the stream.
            let mut past_the_end = self.merged && !self.iter.valid();
            if !self.merged {
                self.saved_key.clear();
                self.saved_key
                    .extend_from_slice(crate::key::user_key(self.iter.key()));
            }
            self.merged = false;
            self.blob_forward = false;
            loop {
                if std::mem::take(&mut past_the_end) {
                    self.iter.seek_to_last();
                } else {
                    self.iter.prev();
                }
                if !self.iter.valid() {
                    self.valid = false;
                    self.saved_key.clear();
                    self.saved_value.clear();
                    return;
                }
                if (self.order).lt(crate::key::user_key(self.iter.key()), &self.saved_key) {
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
}

/// The key-value pairs of a key range, as a Rust iterator (from [`crate::Db::range`]).
///
/// # Examples
///
/// ```
/// use strata::{Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// for (user, name) in [("user/1", "ann"), ("user/2", "bo"), ("user/3", "cy")] {
///     db.put(user, name)?;
/// }
/// let names: Vec<Vec<u8>> = db
///     .range("user/2"..) // any bounds of keys: `a..b`, `a..=b`, `..`
///     .map(|entry| entry.map(|(_key, value)| value))
///     .collect::<strata::Result<_>>()?;
/// assert_eq!(names, [b"bo".to_vec(), b"cy".to_vec()]);
/// let last = db.range("user/".."user0").last().transpose()?;
/// assert_eq!(last.map(|(key, _)| key), Some(b"user/3".to_vec()));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Range {
    iter: DbIterator,
    started: bool,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
}

impl Range {
    /// The pairs of `range`, read through the iterator `make_iter` returns for its bounds.
    pub(crate) fn new<K, R>(make_iter: impl FnOnce(ReadOptions) -> DbIterator, range: R) -> Range
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
            // A range runs across prefixes: prefix filters would hide keys of later ones.
            total_order_seek: true,
            ..ReadOptions::default()
        };
        Range {
            iter: make_iter(options),
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
            if self.iter.order.lt(end, self.iter.key()) {
                return None;
            }
        }
        Some(Ok((self.iter.key().to_vec(), self.iter.value().to_vec())))
    }
}

mod backward;
mod forward;

#[cfg(test)]
mod tests;
