//! The read path: `Db`'s reading methods, and what they go through.
//!
//! Point reads have four forms, as RocksDB's: `get` (the default family, default options),
//! `get_opt` (with [`ReadOptions`]: a snapshot, ...), `get_cf` (in a column family) and
//! `get_cf_opt` (both); so do `get_pinned` and `multi_get`. `get_at` and `get_at_cf` read at
//! a snapshot. Cursors take the options always: `iter(&ReadOptions)`,
//! `iter_cf(cf, &ReadOptions)`; `range` and `range_cf` are Rust iterators over a key range.
//!
//! - `get`: point lookups, the memtables then the tables level by level.
//! - `lookup`: point lookups whose newest visible version is a merge operand.
//! - `multi_get`: many keys read in one view of the database.
//! - `sources`: the merging iterator over a super version's memtables and tables.
//! - `iter`: the user iterator, [`DbIterator`], and [`Range`] over it.
//! - `prefix`: skipping tables whose prefix filter rules out a seek's prefix.

mod get;
pub(super) mod iter;
mod lookup;
mod multi_get;
mod prefix;
mod sources;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::Db;
use crate::column_family::ColumnFamily;
use crate::error::Result;
use crate::options::ReadOptions;
use crate::snapshot::Snapshot;
use crate::table::pinned::PinnedValue;
use crate::table::BlockReads;
use iter::{DbIterator, Range};

/// How a read with `options` treats the table data blocks it reads.
fn block_reads(options: &ReadOptions) -> BlockReads {
    BlockReads {
        fill_cache: options.fill_cache,
        verify_checksums: options.verify_checksums,
    }
}

impl Db {
    /// The value of `key`, or `None`.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` as of `snapshot`.
    pub fn get_at(&self, snapshot: &Snapshot, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        let at = Some(snapshot.sequence());
        self.inner
            .get(&self.inner.default_cf, key, at, BlockReads::DEFAULT)
    }

    /// The value of `key` in column family `cf` as of `snapshot`.
    pub fn get_at_cf(
        &self,
        cf: &ColumnFamily,
        snapshot: &Snapshot,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>> {
        let cf = self.inner.family(cf)?;
        let at = Some(snapshot.sequence());
        self.inner.get(&cf, key.as_ref(), at, BlockReads::DEFAULT)
    }

    /// The value of `key` with read options (a snapshot, if given).
    pub fn get_opt(&self, key: impl AsRef<[u8]>, options: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        let reads = block_reads(options);
        self.inner.get(&self.inner.default_cf, key, snapshot, reads)
    }

    /// The value of `key` in column family `cf`, or `None`.
    pub fn get_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    /// The value of `key` in column family `cf` with read options (a snapshot, if given).
    pub fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        let cf = self.inner.family(cf)?;
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner.get(&cf, key, snapshot, block_reads(options))
    }

    /// The value of `key` without a copy where it can: a value found in a table block is
    /// handed back in place, keeping the block in memory while the [`PinnedValue`] lives
    /// (RocksDB's `PinnableSlice`); one found in a memtable or made by a merge is copied once.
    /// Reads as a `&[u8]`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let mut options = strata::Options::default();
    /// options.create_if_missing = true;
    /// let db = strata::Db::open(dir.path(), options)?;
    /// db.put(b"key", b"a value read in place")?;
    /// db.flush()?; // now in a table
    /// let value = db.get_pinned(b"key")?.expect("written above");
    /// assert!(value.is_pinned());
    /// assert_eq!(&value[..], b"a value read in place");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_pinned(&self, key: impl AsRef<[u8]>) -> Result<Option<PinnedValue>> {
        self.get_pinned_opt(key, &ReadOptions::default())
    }

    /// [`Db::get_pinned`] with read options (a snapshot, if given).
    pub fn get_pinned_opt(
        &self,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<PinnedValue>> {
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        let reads = block_reads(options);
        self.inner
            .get(&self.inner.default_cf, key.as_ref(), snapshot, reads)
    }

    /// [`Db::get_pinned`] in column family `cf`.
    pub fn get_pinned_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<PinnedValue>> {
        self.get_pinned_cf_opt(cf, key, &ReadOptions::default())
    }

    /// [`Db::get_pinned`] in column family `cf`, with read options.
    pub fn get_pinned_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<PinnedValue>> {
        let cf = self.inner.family(cf)?;
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner
            .get(&cf, key.as_ref(), snapshot, block_reads(options))
    }

    /// The values of `keys` (in their order), read together: in one view of the database, as
    /// through one snapshot, and in key order, so that keys near one another share the
    /// table blocks they read. Each key has its own answer: a corrupt block fails only the
    /// keys that needed it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let mut options = strata::Options::default();
    /// options.create_if_missing = true;
    /// let db = strata::Db::open(dir.path(), options)?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"c", b"3")?;
    /// let values = db.multi_get([b"c", b"b", b"a"]);
    /// let values: Vec<Option<Vec<u8>>> = values.into_iter().collect::<Result<_, _>>()?;
    /// assert_eq!(values, [Some(b"3".to_vec()), None, Some(b"1".to_vec())]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// [`Db::multi_get`] with read options (a snapshot, if given).
    pub fn multi_get_opt<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
        options: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        let reads = block_reads(options);
        self.inner
            .multi_get(&self.inner.default_cf, &keys, snapshot, reads)
    }

    /// [`Db::multi_get`] in column family `cf`.
    pub fn multi_get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_cf_opt(cf, keys, &ReadOptions::default())
    }

    /// [`Db::multi_get`] in column family `cf` with read options (a snapshot, if given). A
    /// dropped family fails every key.
    pub fn multi_get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        keys: impl IntoIterator<Item = K>,
        options: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        let family = match self.inner.family(cf) {
            Ok(family) => family,
            Err(_) => {
                return keys
                    .iter()
                    .map(|_| self.inner.family(cf).map(|_| None))
                    .collect()
            }
        };
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner
            .multi_get(&family, &keys, snapshot, block_reads(options))
    }

    /// A snapshot of the database now, every column family: reads through it ignore later
    /// writes.
    pub fn snapshot(&self) -> Snapshot {
        let last_sequence = &self.inner.last_sequence;
        Snapshot::latest(&self.inner.snapshots, || {
            last_sequence.load(Ordering::Acquire)
        })
    }

    /// A cursor over the database, unpositioned: call a seek first.
    pub fn iter(&self, options: &ReadOptions) -> DbIterator {
        self.inner.iter(&self.inner.default_cf, options.clone())
    }

    /// A cursor over column family `cf`, unpositioned: call a seek first.
    pub fn iter_cf(&self, cf: &ColumnFamily, options: &ReadOptions) -> Result<DbIterator> {
        let cf = self.inner.family(cf)?;
        Ok(self.inner.iter(&cf, options.clone()))
    }

    /// The key-value pairs in `range`, in key order, as of now.
    ///
    /// Bounds are anything that can be viewed as bytes: `db.range(&b"a"[..]..&b"m"[..])`,
    /// `db.range::<&[u8], _>(..)`.
    pub fn range<K, R>(&self, range: R) -> Range
    where
        K: AsRef<[u8]>,
        R: std::ops::RangeBounds<K>,
    {
        Range::new(
            |options| self.inner.iter(&self.inner.default_cf, options),
            range,
        )
    }

    /// The key-value pairs in `range` of column family `cf`, in key order, as of now.
    pub fn range_cf<K, R>(&self, cf: &ColumnFamily, range: R) -> Result<Range>
    where
        K: AsRef<[u8]>,
        R: std::ops::RangeBounds<K>,
    {
        let cf = self.inner.family(cf)?;
        Ok(Range::new(|options| self.inner.iter(&cf, options), range))
    }

    /// The user key order of family `cf`.
    pub(crate) fn key_order_of(&self, cf: &ColumnFamily) -> Result<crate::comparator::KeyOrder> {
        Ok(self.inner.family(cf)?.sv.read().version.order.clone())
    }

    /// The merge operator of family `cf` (`None`: none configured), for reads that resolve
    /// merges outside the engine's own read paths.
    pub(crate) fn merge_operator_of(
        &self,
        cf: &ColumnFamily,
    ) -> Result<Option<Arc<dyn crate::merge::MergeOperator>>> {
        Ok(self.inner.family(cf)?.options.merge_operator.clone())
    }
}
