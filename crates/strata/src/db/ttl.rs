//! TTL column families in the write and read paths (the value layout is in
//! `compaction_filter::ttl`).
//!
//! - Writes: every put into a TTL family gets the expiry suffix before the batch reaches the
//!   write queue ([`DbInner::stamp_ttl`]), so the WAL, the memtables and the tables hold the
//!   stored form and recovery replays it unchanged. A batch touching no TTL family is passed
//!   on untouched; the check costs one option read for batches of the default family only.
//! - Point reads: the stored value is split; an expired newest version reads as absent (as
//!   RocksDB's `DBWithTTL`: an expired value hides the key, whatever lies below it). A value
//!   shorter than the suffix is a corruption error naming the family.
//! - Iterators do the same in `db::iter` (`IterContext::ttl_now`).
//!
//! Expiry is judged with the clock of `Options::clock` at the moment of the read.

use std::time::Duration;

use super::families::ColumnFamilyData;
use super::DbInner;
use crate::column_family::ColumnFamily;
use crate::compaction_filter::ttl;
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, ValueKind};
use crate::table::pinned::LookupValue;
use crate::table::BlockReads;
use crate::write_batch::WriteBatch;

impl DbInner {
    /// `batch` with the expiry appended to the value of every put into a TTL family: the
    /// family's ttl, or `ttl` when given. A batch that is invalid, cannot be read or names a
    /// family the database does not have is returned as it is, for the write path to refuse.
    pub(super) fn stamp_ttl(&self, batch: WriteBatch, ttl: Option<Duration>) -> Result<WriteBatch> {
        if batch.invalid_reason().is_some() || batch.is_empty() {
            return Ok(batch);
        }
        if !batch.has_families() && ttl.is_none() && self.default_cf.options.ttl.is_none() {
            return Ok(batch);
        }
        let families = self.families();
        if ttl.is_none() && families.values().all(|cf| cf.options.ttl.is_none()) {
            return Ok(batch);
        }
        let entries: Vec<_> = match batch.iter().collect::<std::result::Result<_, _>>() {
            Ok(entries) => entries,
            Err(_) => return Ok(batch),
        };
        let now = self.options.clock.now_secs();
        let mut stamped = WriteBatch::new();
        let mut value = Vec::new();
        for e in entries {
            let Some(cf) = families.get(&e.cf) else {
                return Ok(batch);
            };
            let handle = ColumnFamily::new(e.cf, cf.name());
            match e.kind {
                // The ttl now: `Db::set_cf_options` may have changed its length.
                ValueKind::Put => match ttl.or(cf.current_options().ttl) {
                    Some(ttl) if cf.options.ttl.is_some() => {
                        value.clear();
                        value.extend_from_slice(e.value);
                        ttl::append_expiry(&mut value, now, ttl);
                        stamped.put_cf(&handle, e.key, &value);
                    }
                    _ => {
                        stamped.put_cf(&handle, e.key, e.value);
                    }
                },
                ValueKind::Merge => {
                    stamped.merge_cf(&handle, e.key, e.value);
                }
                ValueKind::Delete => {
                    stamped.delete_cf(&handle, e.key);
                }
                ValueKind::SingleDelete => {
                    stamped.single_delete_cf(&handle, e.key);
                }
                ValueKind::RangeDeletion => {
                    stamped.delete_range_cf(&handle, e.key, e.value);
                }
                ValueKind::BlobIndex => unreachable!("a decoded batch holds no blob reference"),
            }
        }
        Ok(stamped)
    }

    /// The value of `key` in family `cf` at `snapshot` (or now), as the user wrote it: in a
    /// TTL family without its expiry, and absent once expired. Table data blocks are read as
    /// `reads` says.
    pub(super) fn get<V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        key: &[u8],
        snapshot: Option<SequenceNumber>,
        reads: BlockReads,
    ) -> Result<Option<V>> {
        let stored = self.get_stored(cf, key, snapshot, reads)?;
        self.user_value(cf, key, stored)
    }

    /// A value as stored (by [`DbInner::get_stored`]) as the user wrote it: in a TTL family
    /// without its expiry, and absent once expired.
    pub(super) fn user_value<V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        key: &[u8],
        stored: Option<V>,
    ) -> Result<Option<V>> {
        if cf.options.ttl.is_none() {
            return Ok(stored);
        }
        let Some(mut value) = stored else {
            return Ok(None);
        };
        let Some((user, expiry)) = ttl::split(value.as_ref()) else {
            return Err(short_value_error(cf.name(), key, value.as_ref().len()));
        };
        if ttl::is_expired(expiry, self.options.clock.now_secs()) {
            return Ok(None);
        }
        let user_len = user.len();
        value.truncate(user_len);
        Ok(Some(value))
    }

    /// Refuses `put_with_ttl` into a family without a ttl: its reads would not strip the
    /// expiry.
    pub(super) fn check_ttl_family(&self, cf: &ColumnFamilyData) -> Result<()> {
        match cf.options.ttl {
            Some(_) => Ok(()),
            None => Err(Error::InvalidArgument(format!(
                "put_with_ttl into column family '{}', which has no ttl (set ttl in its \
                 options when it is created)",
                cf.name()
            ))),
        }
    }
}

/// The error for a stored value of a TTL family that is too short to hold its expiry.
pub(super) fn short_value_error(family: &str, key: &[u8], len: usize) -> Error {
    Error::corruption(
        format!("<column family '{family}'>"),
        0,
        ttl::short_value_reason(key, len),
    )
}

#[cfg(test)]
mod tests {
    use super::super::read::iter::IterContext;
    use super::super::DbIterator;
    use crate::iterator::{InternalIterator, MergingIterator};
    use crate::key::append_internal_key;
    use crate::testing::lsm::VecIter;

    fn put(key: &str, seq: u64, value: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut k = Vec::new();
        append_internal_key(
            &mut k,
            key.as_bytes(),
            seq,
            crate::key::ValueKind::Put as u8,
        );
        (k, value.to_vec())
    }

    fn stored(value: &str, expiry: u64) -> Vec<u8> {
        let mut v = value.as_bytes().to_vec();
        v.extend_from_slice(&expiry.to_le_bytes());
        v
    }

    fn iter(entries: Vec<(Vec<u8>, Vec<u8>)>, now: u64) -> DbIterator {
        let children: Vec<Box<dyn InternalIterator>> = vec![Box::new(VecIter::new(entries))];
        let context = IterContext {
            family: Some("ttl-family".into()),
            ttl_now: Some(now),
            ..IterContext::default()
        };
        DbIterator::new(
            MergingIterator::new(children),
            (100, None),
            (None, None),
            context,
        )
    }

    #[test]
    fn iterators_strip_the_expiry_and_hide_expired_keys_both_ways() {
        let entries = || {
            vec![
                put("a", 3, &stored("va", 10)),
                put("b", 4, &stored("vb", 5)),
                put("b", 2, &stored("old", 50)),
                put("c", 5, &stored("vc", 10)),
            ]
        };
        let mut it = iter(entries(), 6);
        it.seek_to_first();
        let mut forward = Vec::new();
        while it.valid() {
            forward.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().unwrap();
        assert_eq!(
            forward,
            [
                (b"a".to_vec(), b"va".to_vec()),
                (b"c".to_vec(), b"vc".to_vec())
            ],
            "b's newest version expired at 5 hides the key"
        );
        let mut it = iter(entries(), 6);
        it.seek_to_last();
        let mut backward = Vec::new();
        while it.valid() {
            backward.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        it.status().unwrap();
        forward.reverse();
        assert_eq!(backward, forward);
    }

    #[test]
    fn a_short_value_in_a_ttl_family_is_corruption_naming_the_family() {
        for reverse in [false, true] {
            let mut it = iter(vec![put("a", 3, b"abc")], 6);
            if reverse {
                it.seek_to_last();
            } else {
                it.seek_to_first();
            }
            assert!(!it.valid());
            let err = it.status().unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::Corruption);
            assert_eq!(
                err.to_string(),
                "corruption in <column family 'ttl-family'> at offset 0: value of key 'a' is \
                 3 bytes, shorter than the 8-byte expiry timestamp every value of a TTL family \
                 carries"
            );
        }
    }
}
