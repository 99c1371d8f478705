//! `WriteBatch`: a set of updates applied atomically, and the payload of one WAL record.
//!
//! Byte layout (on disk in the WAL; do not change):
//!
//! ```text
//! +-------------------+----------------+-----------------------------------------+
//! | seq: fixed64 LE   | count: fixed32 | count records                            |
//! +-------------------+----------------+-----------------------------------------+
//! record := tag: u8 | (tag & 0x80) column family id: varint32
//!           | key: varint32 len + bytes | (Put, Merge) value: varint32 len + bytes
//! ```
//!
//! The tag is the entry's kind byte; its high bit says a column family id follows (without
//! it the record is for the default family, id 0, so batches written before families existed
//! read the same). Kinds are those of internal keys (`key::ValueKind`): 0 delete, 1 put,
//! 2 merge (the value is the merge operand), 7 single-delete, 15 range deletion (the key is
//! the range's first key, the value its exclusive end; framed like a put).
//!
//! `seq` is the sequence number of the first record; record `i` gets `seq + i`. A group
//! commit concatenates the records of several batches behind one header.
//!
//! In the WAL, a put whose value was written to a blob file as the batch was written
//! (`Options::blob_separation_at_write`) is a record of kind 17 (a blob reference), framed
//! like a put, whose value is the reference (`blob::BlobIndex`). Batches built through the API
//! never hold one, and only WAL records are read with them allowed.
//!
//! One more tag, 0x3f, marks a log-data record (RocksDB's PutLogData): a length-prefixed
//! blob that travels in the WAL with the batch but is not an update. It takes no sequence
//! number, is not counted in `count`, and is never applied to a memtable; recovery reads
//! it (two-phase commit records a prepared transaction's commit this way).

use crate::codec::{
    decode_fixed32, decode_fixed64, get_length_prefixed, get_varint32, put_length_prefixed,
    put_varint32,
};
use crate::column_family::ColumnFamily;
use crate::key::{SequenceNumber, ValueKind};

/// Bytes of the batch header (sequence and count).
pub const HEADER_LEN: usize = 12;

/// The bit of a record's tag that says a column family id follows.
const FAMILY_BIT: u8 = 0x80;

/// The tag of a log-data record (see the layout above).
const LOG_DATA: u8 = 0x3f;

/// The largest key Strata accepts, in bytes (1 MiB).
pub const MAX_KEY_LEN: usize = 1 << 20;

/// The largest value Strata accepts, in bytes (64 MiB).
pub const MAX_VALUE_LEN: usize = 64 << 20;

/// The largest encoded batch Strata accepts, in bytes (1 GiB).
pub const MAX_BATCH_LEN: usize = 1 << 30;

/// Updates applied together: after a crash either all of them are there or none is.
///
/// ```
/// let mut batch = strata::WriteBatch::new();
/// batch.put(b"k1", b"v1");
/// batch.delete(b"k0");
/// assert_eq!(batch.len(), 2);
/// ```
#[derive(Clone)]
pub struct WriteBatch {
    rep: Vec<u8>,
    count: u32,
    /// Set when an update broke a size limit; `Db::write` refuses the batch with it.
    invalid: Option<String>,
    /// The families other than the default that records name, each once, in the order of
    /// their first record: the write path checks that they exist without decoding the batch.
    families: Vec<u32>,
    /// True when the batch holds a merge: a family without a merge operator refuses it.
    has_merge: bool,
    /// True when the batch holds a log-data blob.
    has_log_data: bool,
    /// True when the batch holds a range deletion: its family's key order must have its
    /// begin before its end.
    has_range_deletion: bool,
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

impl std::fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteBatch")
            .field("count", &self.count)
            .field("bytes", &self.rep.len())
            .finish()
    }
}

/// A batch's state at one point: a save point to truncate back to.
#[derive(Debug, Clone)]
pub(crate) struct BatchMark {
    len: usize,
    count: u32,
    invalid: Option<String>,
    /// How many of the batch's `families` were named then: those named first later follow.
    families: usize,
    has_merge: bool,
    has_log_data: bool,
}

/// One decoded update of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    /// The column family's id (0: the default family).
    pub cf: u32,
    /// What the update does.
    pub kind: ValueKind,
    /// The user key.
    pub key: &'a [u8],
    /// The value (empty for deletes).
    pub value: &'a [u8],
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch::with_capacity(0)
    }

    /// An empty batch with room for `bytes` bytes of updates before it grows (each update
    /// takes its key, its value and up to 16 bytes of tags and lengths), as RocksDB's
    /// `reserved_bytes`: a batch built for one known update allocates once.
    pub fn with_capacity(bytes: usize) -> WriteBatch {
        let mut rep = Vec::with_capacity(HEADER_LEN + bytes);
        rep.resize(HEADER_LEN, 0);
        WriteBatch {
            rep,
            count: 0,
            invalid: None,
            families: Vec::new(),
            has_merge: false,
            has_log_data: false,
            has_range_deletion: false,
        }
    }

    /// Sets `key` to `value`.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> &mut Self {
        let key = key.as_ref();
        let value = value.as_ref();
        self.push(0, ValueKind::Put, key, Some(value))
    }

    /// Sets `key` to `value` in column family `cf`.
    pub fn put_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> &mut Self {
        let key = key.as_ref();
        let value = value.as_ref();
        self.push(cf.id(), ValueKind::Put, key, Some(value))
    }

    /// Records `operand` for `key`, to be combined with the key's older value by the
    /// database's merge operator ([`crate::Options::merge_operator`]) when the key is read
    /// or compacted. A database without a merge operator refuses a batch holding a merge.
    pub fn merge(&mut self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> &mut Self {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.push(0, ValueKind::Merge, key, Some(operand))
    }

    /// Records `operand` for `key` in column family `cf` (see [`WriteBatch::merge`]).
    pub fn merge_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> &mut Self {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.push(cf.id(), ValueKind::Merge, key, Some(operand))
    }

    /// Removes `key`.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> &mut Self {
        let key = key.as_ref();
        self.push(0, ValueKind::Delete, key, None)
    }

    /// Removes `key` from column family `cf`.
    pub fn delete_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> &mut Self {
        let key = key.as_ref();
        self.push(cf.id(), ValueKind::Delete, key, None)
    }

    /// Removes the single put of `key`. The caller promises `key` was put at most once since
    /// it was last deleted or single-deleted; otherwise the result is undefined (RocksDB's
    /// contract). In return, compaction drops the put as soon as the two meet, and the
    /// single-delete itself at the bottom of the tree.
    pub fn single_delete(&mut self, key: impl AsRef<[u8]>) -> &mut Self {
        let key = key.as_ref();
        self.push(0, ValueKind::SingleDelete, key, None)
    }

    /// Removes the single put of `key` in column family `cf` (see [`WriteBatch::single_delete`]).
    pub fn single_delete_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> &mut Self {
        let key = key.as_ref();
        self.push(cf.id(), ValueKind::SingleDelete, key, None)
    }

    /// Removes every key in `[begin, end)` (RocksDB's `DeleteRange`): one record, whatever
    /// the number of keys in the range. `begin == end` is an empty range and adds nothing;
    /// `Db::write` refuses a batch with `begin` after `end` in the family's key order (see
    /// [`crate::Options::comparator`]), naming both keys.
    pub fn delete_range(&mut self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> &mut Self {
        let begin = begin.as_ref();
        let end = end.as_ref();
        self.push_range(0, begin, end)
    }

    /// Removes every key in `[begin, end)` of column family `cf` (see
    /// [`WriteBatch::delete_range`]).
    pub fn delete_range_cf(
        &mut self,
        cf: &ColumnFamily,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) -> &mut Self {
        let begin = begin.as_ref();
        let end = end.as_ref();
        self.push_range(cf.id(), begin, end)
    }

    fn push_range(&mut self, cf: u32, begin: &[u8], end: &[u8]) -> &mut Self {
        if begin == end {
            return self;
        }
        self.has_range_deletion = true;
        self.push(cf, ValueKind::RangeDeletion, begin, Some(end))
    }

    /// Appends a blob that is written to the WAL with the batch but is not an update: no
    /// sequence number, not counted, never applied (RocksDB's PutLogData).
    pub fn put_log_data(&mut self, blob: impl AsRef<[u8]>) -> &mut Self {
        let blob = blob.as_ref();
        if self.check(b"", blob.len()) {
            self.rep.push(LOG_DATA);
            put_length_prefixed(&mut self.rep, blob);
            self.has_log_data = true;
        }
        self
    }

    /// A batch from encoded `records` (without header) holding `count` updates, checked:
    /// the reason if they do not decode.
    pub(crate) fn from_records(records: &[u8], count: u32) -> Result<WriteBatch, String> {
        let mut batch = WriteBatch::new();
        batch.rep.extend_from_slice(records);
        batch.count = count;
        let (mut families, mut has_merge) = (Vec::new(), false);
        for entry in batch.iter() {
            let e = entry?;
            note_family(&mut families, e.cf);
            has_merge |= e.kind == ValueKind::Merge;
        }
        let has_log_data = batch.log_data().next().is_some();
        batch.families = families;
        batch.has_merge = has_merge;
        batch.has_log_data = has_log_data;
        Ok(batch)
    }

    /// The log-data blobs of the batch, in order.
    pub fn log_data(&self) -> impl Iterator<Item = &[u8]> {
        log_data_in(self.records())
    }

    /// True when the batch holds a log-data blob: such a batch is written even when it
    /// holds no update.
    pub(crate) fn has_log_data(&self) -> bool {
        self.has_log_data
    }

    /// Appends one update of family `cf` (the value is ignored for deletes). Crate-internal:
    /// the public methods take family handles.
    pub(crate) fn push_entry(&mut self, cf: u32, kind: ValueKind, key: &[u8], value: &[u8]) {
        let value = match kind {
            ValueKind::Delete | ValueKind::SingleDelete => None,
            ValueKind::Put | ValueKind::Merge | ValueKind::RangeDeletion => Some(value),
            ValueKind::BlobIndex => unreachable!("blob references are never written in batches"),
        };
        self.push(cf, kind, key, value);
    }

    /// The batch's state now, to return to with [`WriteBatch::truncate_to`].
    pub(crate) fn mark(&self) -> BatchMark {
        BatchMark {
            len: self.rep.len(),
            count: self.count,
            invalid: self.invalid.clone(),
            families: self.families.len(),
            has_merge: self.has_merge,
            has_log_data: self.has_log_data,
        }
    }

    /// Drops every update made since `mark` was taken.
    pub(crate) fn truncate_to(&mut self, mark: &BatchMark) {
        self.rep.truncate(mark.len);
        self.count = mark.count;
        self.invalid = mark.invalid.clone();
        self.families.truncate(mark.families);
        self.has_merge = mark.has_merge;
        self.has_log_data = mark.has_log_data;
    }

    /// Appends one record, unless the batch is invalid or the record breaks a limit.
    fn push(&mut self, cf: u32, kind: ValueKind, key: &[u8], value: Option<&[u8]>) -> &mut Self {
        if !self.check(key, value.map_or(0, <[u8]>::len)) {
            return self;
        }
        // One reservation for the whole record: growing field by field reallocates up to
        // three times for a small batch.
        self.rep.reserve(record_size(key, value));
        if cf == 0 {
            self.rep.push(kind as u8);
        } else {
            self.rep.push(kind as u8 | FAMILY_BIT);
            put_varint32(&mut self.rep, cf);
            note_family(&mut self.families, cf);
        }
        put_length_prefixed(&mut self.rep, key);
        if let Some(value) = value {
            put_length_prefixed(&mut self.rep, value);
        }
        self.count += 1;
        self.has_merge |= kind == ValueKind::Merge;
        self
    }

    fn check(&mut self, key: &[u8], value_len: usize) -> bool {
        if self.invalid.is_some() {
            return false;
        }
        let problem = if key.len() > MAX_KEY_LEN {
            Some(format!(
                "key of {} bytes is over the limit of {MAX_KEY_LEN}",
                key.len()
            ))
        } else if value_len > MAX_VALUE_LEN {
            Some(format!(
                "value of {value_len} bytes is over the limit of {MAX_VALUE_LEN}"
            ))
        } else if self.rep.len() + 16 + key.len() + value_len > MAX_BATCH_LEN {
            Some(format!(
                "write batch would grow over the limit of {MAX_BATCH_LEN} bytes"
            ))
        } else {
            None
        };
        self.invalid = problem;
        self.invalid.is_none()
    }

    /// Number of updates.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True when the batch holds no update.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Removes every update.
    pub fn clear(&mut self) {
        self.rep.truncate(HEADER_LEN);
        self.count = 0;
        self.invalid = None;
        self.families.clear();
        self.has_merge = false;
        self.has_log_data = false;
    }

    /// True when a record names a column family other than the default.
    pub(crate) fn has_families(&self) -> bool {
        !self.families.is_empty()
    }

    /// The families other than the default that the batch's records name, each once.
    pub(crate) fn families(&self) -> &[u32] {
        &self.families
    }

    /// Bytes of the encoded batch, header included.
    pub fn encoded_len(&self) -> usize {
        self.rep.len()
    }

    /// Bytes of user keys and values in the batch (what write-amp divides by).
    pub fn payload_len(&self) -> usize {
        self.rep.len() - HEADER_LEN
    }

    pub(crate) fn invalid_reason(&self) -> Option<&str> {
        self.invalid.as_deref()
    }

    /// True when the batch holds a merge.
    pub(crate) fn has_merge(&self) -> bool {
        self.has_merge
    }

    /// The range deletions of the batch, as (family id, begin, end), in order; none unless
    /// the batch holds one.
    pub(crate) fn range_deletions(&self) -> impl Iterator<Item = (u32, &[u8], &[u8])> {
        let records = match self.has_range_deletion {
            true => self.iter(),
            false => BatchIter {
                records: &[],
                remaining: 0,
                blob_references: false,
            },
        };
        records
            .filter_map(|e| e.ok())
            .filter(|e| e.kind == ValueKind::RangeDeletion)
            .map(|e| (e.cf, e.key, e.value))
    }

    /// The merges of the batch, as (family id, key), in order.
    pub(crate) fn merges(&self) -> impl Iterator<Item = (u32, &[u8])> {
        self.iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.kind == ValueKind::Merge)
            .map(|e| (e.cf, e.key))
    }

    /// The encoded batch, header included (the write path fills in the header).
    pub(crate) fn rep_mut(&mut self) -> &mut [u8] {
        &mut self.rep
    }

    /// The records without the header.
    pub(crate) fn records(&self) -> &[u8] {
        &self.rep[HEADER_LEN..]
    }

    /// Decoded updates, in order.
    pub fn iter(&self) -> BatchIter<'_> {
        BatchIter {
            records: self.records(),
            remaining: self.count,
            blob_references: false,
        }
    }
}

/// Adds `cf` to `families` (the non-default families named so far) if it is new there.
fn note_family(families: &mut Vec<u32>, cf: u32) {
    // Records mostly come in runs of one family: the last one named is checked first.
    if cf != 0 && families.last() != Some(&cf) && !families.contains(&cf) {
        families.push(cf);
    }
}

/// Appends the header of a group record: `seq` and `count`.
pub(crate) fn encode_header(dst: &mut Vec<u8>, seq: SequenceNumber, count: u32) {
    dst.extend_from_slice(&seq.to_le_bytes());
    dst.extend_from_slice(&count.to_le_bytes());
}

/// Appends `records` (a batch's records, without header) to `dst`, each update given to
/// `separate` in order with a buffer: where it returns true, the update goes to `dst` as a
/// blob-reference record of the same family and key with the buffer as its value;
/// otherwise, and for log-data records, the bytes are copied as they are. The error is the
/// first one `separate` returned, or why `records` do not decode (an invalid argument).
pub(crate) fn copy_records_separating(
    records: &[u8],
    dst: &mut Vec<u8>,
    mut separate: impl FnMut(&BatchEntry, &mut Vec<u8>) -> crate::error::Result<bool>,
) -> crate::error::Result<()> {
    let undecodable = |reason: String| crate::error::Error::InvalidArgument(reason);
    let mut rest = records;
    let mut reference = Vec::new();
    while let Some((&tag, after)) = rest.split_first() {
        let start = rest;
        rest = after;
        if tag == LOG_DATA {
            get_length_prefixed(&mut rest)
                .ok_or_else(|| undecodable("bad log-data record in batch".into()))?;
        } else {
            let entry = decode_record(tag, &mut rest, false).map_err(undecodable)?;
            reference.clear();
            if separate(&entry, &mut reference)? {
                if entry.cf == 0 {
                    dst.push(ValueKind::BlobIndex as u8);
                } else {
                    dst.push(ValueKind::BlobIndex as u8 | FAMILY_BIT);
                    put_varint32(dst, entry.cf);
                }
                put_length_prefixed(dst, entry.key);
                put_length_prefixed(dst, &reference);
                continue;
            }
        }
        dst.extend_from_slice(&start[..start.len() - rest.len()]);
    }
    Ok(())
}

/// A batch as found in a WAL record: its first sequence number and its updates.
#[derive(Debug)]
pub struct DecodedBatch<'a> {
    /// The sequence number of its first update.
    pub seq: SequenceNumber,
    /// The number of updates, as the header says.
    pub count: u32,
    /// The encoded updates after the header.
    pub records: &'a [u8],
}

impl<'a> DecodedBatch<'a> {
    /// Checks the header of `data`; the records are checked by iterating.
    pub fn parse(data: &'a [u8]) -> Result<DecodedBatch<'a>, String> {
        let seq = decode_fixed64(data).ok_or("batch shorter than its header")?;
        let count = decode_fixed32(&data[8..]).ok_or("batch shorter than its header")?;
        Ok(DecodedBatch {
            seq,
            count,
            records: &data[HEADER_LEN..],
        })
    }

    /// The log-data blobs of the batch, in order (a malformed tail ends them; iterating the
    /// updates reports it).
    pub fn log_data(&self) -> impl Iterator<Item = &'a [u8]> {
        log_data_in(self.records)
    }

    /// The updates; each item fails if the bytes do not decode or the count is off.
    pub fn iter(&self) -> BatchIter<'a> {
        BatchIter {
            records: self.records,
            remaining: self.count,
            blob_references: true,
        }
    }
}

/// Iterates the updates of an encoded batch.
pub struct BatchIter<'a> {
    records: &'a [u8],
    remaining: u32,
    /// Whether blob-reference records are updates here (a WAL's batches) or a corruption
    /// (a batch built through the API or read from a prepared transaction's file).
    blob_references: bool,
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<BatchEntry<'a>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.records.first() == Some(&LOG_DATA) {
            let mut rest = &self.records[1..];
            if get_length_prefixed(&mut rest).is_none() {
                self.remaining = 0;
                self.records = &[];
                return Some(Err("bad log-data record in batch".into()));
            }
            self.records = rest;
        }
        if self.remaining == 0 {
            if self.records.is_empty() {
                return None;
            }
            self.records = &[];
            return Some(Err("batch has bytes after its last record".into()));
        }
        self.remaining -= 1;
        let Some((&kind_byte, rest)) = self.records.split_first() else {
            self.remaining = 0;
            return Some(Err("batch ends before its record count".into()));
        };
        self.records = rest;
        let entry = decode_record(kind_byte, &mut self.records, self.blob_references);
        if entry.is_err() {
            self.remaining = 0;
            self.records = &[];
        }
        Some(entry)
    }
}

/// The log-data blobs among `records`, skipping the updates between them.
fn log_data_in(records: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = records;
    std::iter::from_fn(move || loop {
        let (&tag, after) = rest.split_first()?;
        rest = after;
        if tag == LOG_DATA {
            return get_length_prefixed(&mut rest);
        }
        if decode_record(tag, &mut rest, true).is_err() {
            rest = &[];
            return None;
        }
    })
}

fn decode_record<'a>(
    tag: u8,
    src: &mut &'a [u8],
    blob_references: bool,
) -> Result<BatchEntry<'a>, String> {
    let kind_byte = tag & !FAMILY_BIT;
    let kind = ValueKind::from_byte(kind_byte)
        .ok_or_else(|| format!("unknown record kind {kind_byte} in batch"))?;
    let cf = match tag & FAMILY_BIT {
        0 => 0,
        _ => get_varint32(src).ok_or("bad column family id in batch record")?,
    };
    let key = get_length_prefixed(src).ok_or("bad key in batch record")?;
    let value = match kind {
        ValueKind::Put | ValueKind::Merge | ValueKind::RangeDeletion => {
            get_length_prefixed(src).ok_or("bad value in batch record")?
        }
        ValueKind::BlobIndex if blob_references => {
            get_length_prefixed(src).ok_or("bad blob reference in batch record")?
        }
        ValueKind::Delete | ValueKind::SingleDelete => &[],
        ValueKind::BlobIndex => return Err("a blob reference in a batch record".into()),
    };
    Ok(BatchEntry {
        cf,
        kind,
        key,
        value,
    })
}

/// The most bytes one record of `key` and `value` takes: a tag, a family id and two
/// lengths (varints of at most 5 bytes each), the key and the value.
pub(crate) fn record_size(key: &[u8], value: Option<&[u8]>) -> usize {
    1 + 5 + 5 + key.len() + value.map_or(0, |v| 5 + v.len())
}

#[cfg(test)]
mod tests;
