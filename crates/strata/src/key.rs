//! Internal keys: a user key plus the sequence number and kind of the entry.
//!
//! Byte layout (what memtables, logs and tables store):
//!
//! ```text
//! +----------------+------------------------------------+
//! | user key bytes | trailer: fixed64 LE (seq << 8)|kind |
//! +----------------+------------------------------------+
//! ```
//!
//! Order: user key ascending in the column family's order ([`KeyOrder`]; bytewise by
//! default), then trailer descending, so for one user key the newest entry comes first, and a seek to `(key, seq)` lands on the newest entry visible at
//! `seq`. Sequence numbers are 56 bits.
//!
//! Text notation (Debug output, tools, data-driven tests): `key#seq,KIND`, e.g. `a#5,PUT`.

use std::cmp::Ordering;
use std::fmt;

use crate::comparator::KeyOrder;

/// A sequence number: the order of writes. 56 bits are usable.
pub type SequenceNumber = u64;

/// The largest sequence number that fits in a trailer.
pub const MAX_SEQUENCE: SequenceNumber = (1 << 56) - 1;

/// Bytes of the trailer after the user key.
pub const TRAILER_LEN: usize = 8;

/// What an entry does to its key. The numbers are on disk: do not change them, and do not
/// reuse a retired one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ValueKind {
    /// Removes every older version of the key.
    Delete = 0,
    /// Sets the key to the value.
    Put = 1,
    /// Applies the value, a merge operand, to the key's older value (RocksDB's kTypeMerge).
    Merge = 2,
    /// Removes the one older put of the key (the caller promises there is at most one).
    SingleDelete = 7,
    /// Removes every older version of every key from this key (the user key) up to the value,
    /// exclusive (RocksDB's kTypeRangeDeletion). Never stored among point entries: memtables
    /// keep these in their `MemTombstones`, tables in their range-deletion block.
    /// `range_del::RANGE_DELETION_KIND` is defined from this one (that layer sits above
    /// this), so the two cannot disagree.
    RangeDeletion = 15,
    /// Sets the key to a value kept in a blob file: the stored value is a
    /// `blob::BlobIndex` naming it (RocksDB's kTypeBlobIndex). Only flushes and compactions
    /// write these, into tables; reads resolve them to the value, so users see a put. A WAL
    /// record may carry one for a value written at put (`write_batch`); replay turns it back
    /// into a put, so memtables never hold one.
    BlobIndex = 17,
}

/// The kind byte used in seek keys: larger than every stored kind, so that a seek key with
/// sequence `s` sorts before every stored entry of the same user key with sequence `<= s`.
pub(crate) const KIND_FOR_SEEK: u8 = 0xff;

impl ValueKind {
    /// The kind stored as `byte`, if it is one.
    pub fn from_byte(byte: u8) -> Option<ValueKind> {
        match byte {
            0 => Some(ValueKind::Delete),
            1 => Some(ValueKind::Put),
            2 => Some(ValueKind::Merge),
            7 => Some(ValueKind::SingleDelete),
            15 => Some(ValueKind::RangeDeletion),
            17 => Some(ValueKind::BlobIndex),
            _ => None,
        }
    }

    /// The short name used in the text notation.
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Delete => "DEL",
            ValueKind::Put => "PUT",
            ValueKind::Merge => "MERGE",
            ValueKind::SingleDelete => "SINGLEDEL",
            ValueKind::RangeDeletion => "RANGEDEL",
            ValueKind::BlobIndex => "BLOB",
        }
    }
}

/// Packs a sequence number and a kind byte into a trailer.
#[inline]
pub fn pack_trailer(seq: SequenceNumber, kind: u8) -> u64 {
    debug_assert!(seq <= MAX_SEQUENCE);
    (seq << 8) | u64::from(kind)
}

/// Appends the internal key `(user_key, seq, kind)` to `dst`.
pub fn append_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SequenceNumber, kind: u8) {
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&pack_trailer(seq, kind).to_le_bytes());
}

/// An internal key that seeks to the newest version of `user_key` visible at `seq`.
pub fn seek_key(user_key: &[u8], seq: SequenceNumber) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    append_internal_key(&mut k, user_key, seq, KIND_FOR_SEEK);
    k
}

/// An internal key decoded without copying.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// The sequence number of the write.
    pub seq: SequenceNumber,
    /// The raw kind byte (a [`ValueKind`] for stored entries).
    pub kind: u8,
}

impl<'a> ParsedKey<'a> {
    /// Splits an encoded internal key; `None` if it is shorter than the trailer.
    #[inline]
    pub fn parse(ikey: &'a [u8]) -> Option<ParsedKey<'a>> {
        let split = ikey.len().checked_sub(TRAILER_LEN)?;
        let (user_key, trailer) = ikey.split_at(split);
        let t = u64::from_le_bytes(trailer.try_into().ok()?);
        Some(ParsedKey {
            user_key,
            seq: t >> 8,
            kind: t as u8,
        })
    }

    /// The kind, if the kind byte names one.
    pub fn value_kind(&self) -> Option<ValueKind> {
        ValueKind::from_byte(self.kind)
    }
}

impl fmt::Debug for ParsedKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.value_kind() {
            Some(k) => k.name().to_string(),
            None => format!("KIND{}", self.kind),
        };
        write!(
            f,
            "{}#{},{}",
            crate::util::printable(self.user_key),
            self.seq,
            kind
        )
    }
}

/// The user-key part of an encoded internal key (all of it if too short to have a trailer).
#[inline]
pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(TRAILER_LEN)]
}

/// The trailer of an encoded internal key (0 if too short).
#[inline]
fn trailer(ikey: &[u8]) -> u64 {
    match ikey.len().checked_sub(TRAILER_LEN) {
        Some(at) => ikey[at..]
            .try_into()
            .map(u64::from_le_bytes)
            .unwrap_or_default(),
        None => 0,
    }
}

/// Orders encoded internal keys with bytewise user keys: user key ascending, then trailer
/// descending. A family's own order is [`KeyOrder::compare_internal`].
#[inline]
#[cfg(test)]
pub fn compare_internal(a: &[u8], b: &[u8]) -> Ordering {
    match user_key(a).cmp(user_key(b)) {
        Ordering::Equal => trailer(b).cmp(&trailer(a)),
        other => other,
    }
}

impl KeyOrder {
    /// Orders encoded internal keys: user key ascending in this order, then trailer
    /// descending.
    #[inline]
    pub fn compare_internal(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self.compare(user_key(a), user_key(b)) {
            Ordering::Equal => trailer(b).cmp(&trailer(a)),
            other => other,
        }
    }

    /// Shortens `start`, an internal key, to one in `[start, limit)` (internal-key order)
    /// for a table's index: the user key is shortened by the order and, when that changed
    /// it, given the trailer that sorts first among its entries. Otherwise unchanged.
    pub fn shorten_internal_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let (start_user, limit_user) = (user_key(start), user_key(limit));
        let mut short = start_user.to_vec();
        self.find_shortest_separator(&mut short, limit_user);
        if short.len() < start_user.len() && self.compare(start_user, &short) == Ordering::Less {
            short.extend_from_slice(&pack_trailer(MAX_SEQUENCE, KIND_FOR_SEEK).to_le_bytes());
            debug_assert!(self.compare_internal(start, &short) == Ordering::Less);
            debug_assert!(self.compare_internal(&short, limit) == Ordering::Less);
            *start = short;
        }
    }

    /// Shortens `key`, an internal key, to a key at or after it (internal-key order): the
    /// last key of a table's index.
    pub fn shorten_internal_successor(&self, key: &mut Vec<u8>) {
        let user = user_key(key);
        let mut short = user.to_vec();
        self.find_short_successor(&mut short);
        if short.len() < user.len() && self.compare(user, &short) == Ordering::Less {
            short.extend_from_slice(&pack_trailer(MAX_SEQUENCE, KIND_FOR_SEEK).to_le_bytes());
            *key = short;
        }
    }
}

/// The hash of a filter key (a user key, or a prefix of one) that bloom filters take: the
/// tables' filters (`table/filter.rs`) and the memtables' (`memtable/bloom.rs`), so that a
/// lookup hashes its key once for both.
#[inline]
pub fn filter_hash(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ik(k: &[u8], seq: u64, kind: ValueKind) -> Vec<u8> {
        let mut v = Vec::new();
        append_internal_key(&mut v, k, seq, kind as u8);
        v
    }

    #[test]
    fn order_is_user_key_then_newest_first() {
        let keys = [
            ik(b"", 3, ValueKind::Put),
            ik(b"a", 9, ValueKind::Put),
            ik(b"a", 5, ValueKind::Delete),
            ik(b"a", 5, ValueKind::Put.min(ValueKind::Delete)),
            ik(b"a", 1, ValueKind::Put),
            ik(b"ab", 100, ValueKind::Put),
            ik(b"b", 0, ValueKind::Put),
        ];
        for w in keys.windows(2) {
            assert_ne!(compare_internal(&w[0], &w[1]), Ordering::Greater);
        }
        let seek = seek_key(b"a", 5);
        assert_eq!(compare_internal(&seek, &keys[1]), Ordering::Greater);
        assert_eq!(compare_internal(&seek, &keys[2]), Ordering::Less);
    }

    #[test]
    fn parse_round_trips_and_rejects_short_keys() {
        let k = ik(b"key", MAX_SEQUENCE, ValueKind::SingleDelete);
        let p = ParsedKey::parse(&k).unwrap();
        assert_eq!(p.user_key, b"key");
        assert_eq!(p.seq, MAX_SEQUENCE);
        assert_eq!(p.value_kind(), Some(ValueKind::SingleDelete));
        assert_eq!(format!("{p:?}"), format!("key#{MAX_SEQUENCE},SINGLEDEL"));
        assert!(ParsedKey::parse(b"short").is_none());
    }
}
