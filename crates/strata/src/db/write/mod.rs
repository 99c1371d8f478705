//! The write path: `Db`'s writing methods, and what they go through.
//!
//! Every write has four forms, as RocksDB's: `put` (the default family, default options),
//! `put_opt` (with [`WriteOptions`]), `put_cf` (in a column family) and `put_cf_opt` (both);
//! so do `merge`, `delete`, `single_delete` and `delete_range`.
//!
//! - `group`: group commit, the one way into the WAL and the memtables (the queue, the
//!   leader's WAL append and memtable inserts, memtable switches).
//! - `handoff`: the queue, the slots writers wait on, and the order of the locks around a
//!   group's two stages (model-checked under loom).
//! - `stall`: the pure write-stall decision the leader acts on.
//! - `switch`: the memtable switch (a new WAL; full memtables made immutable).
//! - `wal_sync`: syncing the WAL in the background as it grows, and closing old WALs.
//! - `conflict`: writes made only if a check under the writer lock passes (optimistic
//!   transactions commit through it).
//! - `two_phase`: prepared transactions' files and the WAL's commit marker.

pub(super) mod conflict;
pub(super) mod group;
pub(super) mod handoff;
pub(super) mod memory_budget;
pub(super) mod stall;
pub(super) mod switch;
pub(super) mod two_phase;
pub(super) mod wal_limit;
pub(super) mod wal_sync;

use super::{Db, WriteHistory, WriteSource};
use crate::column_family::ColumnFamily;
use crate::error::Result;
use crate::options::WriteOptions;
use crate::write_batch::{record_size, WriteBatch};

impl Db {
    /// Sets `key` to `value`.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// Sets `key` to `value` with write options.
    pub fn put_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        options: &WriteOptions,
    ) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        self.write_one(None, record_size(key, Some(value)), options, |batch| {
            batch.put(key, value);
        })
    }

    /// Sets `key` to `value` in column family `cf`.
    pub fn put_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        self.put_cf_opt(cf, key, value, &WriteOptions::default())
    }

    /// Sets `key` to `value` in column family `cf` with write options.
    pub fn put_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        options: &WriteOptions,
    ) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        self.write_one(Some(cf), record_size(key, Some(value)), options, |batch| {
            batch.put_cf(cf, key, value);
        })
    }

    /// Records `operand` for `key`, to be combined with the key's older value by the default
    /// family's [`Options::merge_operator`](crate::Options::merge_operator) (RocksDB's `Merge`). Refused with
    /// `InvalidArgument` when the family has no merge operator.
    pub fn merge(&self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.merge_opt(key, operand, &WriteOptions::default())
    }

    /// [`Db::merge`] with write options.
    pub fn merge_opt(
        &self,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
        options: &WriteOptions,
    ) -> Result<()> {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.write_one(None, record_size(key, Some(operand)), options, |batch| {
            batch.merge(key, operand);
        })
    }

    /// Records `operand` for `key` in column family `cf`, combined by that family's merge
    /// operator ([`CfOptions::merge_operator`](crate::CfOptions::merge_operator)).
    pub fn merge_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.merge_cf_opt(cf, key, operand, &WriteOptions::default())
    }

    /// [`Db::merge_cf`] with write options.
    pub fn merge_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
        options: &WriteOptions,
    ) -> Result<()> {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.write_one(
            Some(cf),
            record_size(key, Some(operand)),
            options,
            |batch| {
                batch.merge_cf(cf, key, operand);
            },
        )
    }

    /// Removes `key`.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        self.delete_opt(key, &WriteOptions::default())
    }

    /// Removes `key` with write options.
    pub fn delete_opt(&self, key: impl AsRef<[u8]>, options: &WriteOptions) -> Result<()> {
        let key = key.as_ref();
        self.write_one(None, record_size(key, None), options, |batch| {
            batch.delete(key);
        })
    }

    /// Removes `key` from column family `cf`.
    pub fn delete_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        self.delete_cf_opt(cf, key, &WriteOptions::default())
    }

    /// Removes `key` from column family `cf` with write options.
    pub fn delete_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &WriteOptions,
    ) -> Result<()> {
        let key = key.as_ref();
        self.write_one(Some(cf), record_size(key, None), options, |batch| {
            batch.delete_cf(cf, key);
        })
    }

    /// Removes every key in `[begin, end)` with one record (see [`WriteBatch::delete_range`]).
    /// `begin > end` is refused with `InvalidArgument`; `begin == end` does nothing.
    pub fn delete_range(&self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        self.delete_range_opt(begin, end, &WriteOptions::default())
    }

    /// [`Db::delete_range`] with write options.
    pub fn delete_range_opt(
        &self,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
        options: &WriteOptions,
    ) -> Result<()> {
        let begin = begin.as_ref();
        let end = end.as_ref();
        self.write_one(None, 0, options, |batch| {
            batch.delete_range(begin, end);
        })
    }

    /// Removes every key in `[begin, end)` of column family `cf`.
    pub fn delete_range_cf(
        &self,
        cf: &ColumnFamily,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.delete_range_cf_opt(cf, begin, end, &WriteOptions::default())
    }

    /// [`Db::delete_range_cf`] with write options.
    pub fn delete_range_cf_opt(
        &self,
        cf: &ColumnFamily,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
        options: &WriteOptions,
    ) -> Result<()> {
        let begin = begin.as_ref();
        let end = end.as_ref();
        self.write_one(Some(cf), 0, options, |batch| {
            batch.delete_range_cf(cf, begin, end);
        })
    }

    /// Removes the single put of `key` (see [`WriteBatch::single_delete`]).
    pub fn single_delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.single_delete_opt(key, &WriteOptions::default())
    }

    /// [`Db::single_delete`] with write options.
    pub fn single_delete_opt(&self, key: impl AsRef<[u8]>, options: &WriteOptions) -> Result<()> {
        let key = key.as_ref();
        self.write_one(None, 0, options, |batch| {
            batch.single_delete(key);
        })
    }

    /// Removes the single put of `key` in column family `cf`.
    pub fn single_delete_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()> {
        self.single_delete_cf_opt(cf, key, &WriteOptions::default())
    }

    /// [`Db::single_delete_cf`] with write options.
    pub fn single_delete_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &WriteOptions,
    ) -> Result<()> {
        let key = key.as_ref();
        self.write_one(Some(cf), 0, options, |batch| {
            batch.single_delete_cf(cf, key);
        })
    }

    /// Writes a batch of one update, added by `add` (`capacity`: the bytes it takes, see
    /// [`WriteBatch::with_capacity`]). A family `cf` is checked here, not left to `write`: a
    /// batch names families by id only, so its error could not name a dropped one.
    fn write_one(
        &self,
        cf: Option<&ColumnFamily>,
        capacity: usize,
        options: &WriteOptions,
        add: impl FnOnce(&mut WriteBatch),
    ) -> Result<()> {
        if let Some(cf) = cf {
            self.inner.family(cf)?;
        }
        let mut batch = WriteBatch::with_capacity(capacity);
        add(&mut batch);
        self.write(batch, options)
    }

    /// Applies `batch` atomically: after a crash all of it is there or none of it, across
    /// the column families it writes to. A batch naming a dropped family is refused whole.
    pub fn write(&self, batch: WriteBatch, options: &WriteOptions) -> Result<()> {
        self.inner.check_writable()?;
        let started = self.inner.times_operations().then(std::time::Instant::now);
        let batch = self.inner.stamp_ttl(batch, None)?;
        let written = self.inner.write(batch, options);
        if let Some(started) = started {
            let micros = started.elapsed().as_micros() as u64;
            self.inner
                .histograms
                .record(crate::histogram::Histogram::Write, micros);
        }
        written
    }

    /// Writes `batch` if `check` passes, with nothing written between the check and the
    /// batch (see `write/conflict.rs`). What transactions commit through.
    pub(crate) fn write_checked(
        &self,
        batch: WriteBatch,
        options: &WriteOptions,
        check: &mut dyn FnMut(&WriteHistory<'_>) -> Result<()>,
    ) -> Result<()> {
        self.inner.check_writable()?;
        let batch = self.inner.stamp_ttl(batch, None)?;
        self.inner.write_checked(batch, options, check)
    }

    /// The newest write of `key` in family `cf` if it is newer than `since`, and where it
    /// was found (see `write/conflict.rs`); not synchronized with writes in flight.
    pub(crate) fn write_after(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        since: crate::key::SequenceNumber,
    ) -> Result<Option<(crate::key::SequenceNumber, WriteSource)>> {
        self.inner.check_open()?;
        self.inner.write_history().write_after(cf, key, since)
    }

    /// Makes prepared transaction `name` with `batch` durable (see `write/two_phase.rs`).
    pub(crate) fn persist_prepared(&self, name: &[u8], batch: &WriteBatch) -> Result<()> {
        self.inner.persist_prepared(name, batch)
    }

    /// Commits prepared transaction `name`: its batch with a commit marker, synced.
    pub(crate) fn commit_prepared(
        &self,
        name: &[u8],
        batch: WriteBatch,
        options: &WriteOptions,
    ) -> Result<()> {
        self.inner.check_writable()?;
        let batch = self.inner.stamp_ttl(batch, None)?;
        self.inner.commit_prepared(name, batch, options)
    }

    /// Forgets prepared transaction `name` (rolled back).
    pub(crate) fn rollback_prepared(&self, name: &[u8]) -> Result<()> {
        self.inner.rollback_prepared(name)
    }

    /// The prepared transactions found at open, as (name, batch); each is handed out once.
    pub(crate) fn take_prepared(&self) -> Vec<(Vec<u8>, WriteBatch)> {
        std::mem::take(&mut *self.inner.prepared.lock())
            .into_iter()
            .map(|p| (p.name, p.batch))
            .collect()
    }

    /// Sets `key` to `value` in the default family, a TTL family (see [`Options::ttl`](crate::Options::ttl)),
    /// expiring `ttl` after now instead of after the family's ttl. Refused with
    /// `InvalidArgument` when the family has no ttl.
    pub fn put_with_ttl(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        ttl: std::time::Duration,
    ) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        self.put_with_ttl_cf(&self.inner.default_cf.handle, key, value, ttl)
    }

    /// [`Db::put_with_ttl`] into column family `cf`.
    pub fn put_with_ttl_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        ttl: std::time::Duration,
    ) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        self.inner.check_writable()?;
        let family = self.inner.family(cf)?;
        self.inner.check_ttl_family(&family)?;
        let mut batch = WriteBatch::with_capacity(record_size(key, Some(value)));
        batch.put_cf(cf, key, value);
        let batch = self.inner.stamp_ttl(batch, Some(ttl))?;
        self.inner.write(batch, &WriteOptions::default())
    }
}
