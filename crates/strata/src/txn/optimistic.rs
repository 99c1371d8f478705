//! Optimistic transactions (RocksDB's OptimisticTransactionDB): no locks while the
//! transaction runs; its commit checks that no key it wrote or read for update was written
//! by anyone else since its snapshot, and writes its batch only then.
//!
//! Invariants:
//! - A transaction reads at the snapshot taken when it began, its own writes over it
//!   (snapshot isolation). The snapshot is held until the transaction ends, so flush and
//!   compaction keep the sequence numbers of every later write, which the commit check reads.
//! - `tracked` holds every key written or read for update; the commit fails with `Busy` if
//!   the newest write of any of them is newer than the snapshot. The check and the write
//!   happen under the writer lock (`Db::write_checked`): nothing falls between them.
//! - After `commit` (either outcome) or `rollback`, every call but `rollback` fails.
//!
//! Write skew remains possible, as under any snapshot isolation: two transactions that each
//! read (without `get_for_update`) what the other writes both commit.

use crate::column_family::ColumnFamily;
use crate::db::{Db, WriteSource};
use crate::error::{Error, Result, TxnFailure};
use crate::options::{ReadOptions, WriteOptions};
use crate::snapshot::Snapshot;

use super::base::{point_read, TransactionBase};
use super::checks::{check_active, check_family, check_merge, State};
use super::indexed_batch::IndexedBatch;
use super::overlay::TxnIterator;

/// The keys a transaction tracks, appended as they come to one buffer (tracking a key
/// allocates nothing of its own); duplicates are skipped at commit. Each record:
/// `family id: u32 LE | key length: u32 LE | key`.
#[derive(Default)]
struct TrackedKeys {
    records: Vec<u8>,
    count: usize,
    /// The handle of each family but the default tracked, once.
    families: Vec<ColumnFamily>,
}

/// What was tracked when a save point was set: a rollback to it forgets the rest.
#[derive(Clone, Copy)]
struct TrackedMark {
    bytes: usize,
    count: usize,
}

/// Up to this many tracked keys, duplicates are found by comparing each with those before it
/// (no allocation); above, by sorting.
const COMPARE_PAIRWISE_UP_TO: usize = 16;

impl TrackedKeys {
    fn add(&mut self, cf: &ColumnFamily, key: &[u8]) {
        if cf.id() != 0 && !self.families.iter().any(|f| f.id() == cf.id()) {
            self.families.push(cf.clone());
        }
        self.records.reserve(8 + key.len());
        self.records.extend_from_slice(&cf.id().to_le_bytes());
        self.records
            .extend_from_slice(&(key.len() as u32).to_le_bytes());
        self.records.extend_from_slice(key);
        self.count += 1;
    }

    fn mark(&self) -> TrackedMark {
        TrackedMark {
            bytes: self.records.len(),
            count: self.count,
        }
    }

    fn truncate_to(&mut self, mark: TrackedMark) {
        self.records.truncate(mark.bytes);
        self.count = mark.count;
    }

    fn clear(&mut self) {
        self.records.clear();
        self.count = 0;
        self.families.clear();
    }

    /// The tracked (family id, key) records, in the order they were tracked.
    fn iter(&self) -> impl Iterator<Item = (u32, &[u8])> {
        let mut rest = self.records.as_slice();
        std::iter::from_fn(move || {
            let (head, tail) = rest.split_first_chunk::<8>()?;
            let id = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
            let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
            let (key, tail) = tail.split_at(len);
            rest = tail;
            Some((id, key))
        })
    }

    /// Calls `check` with each tracked key once, with its family's handle (`default` for the
    /// default family), stopping at its first error.
    fn for_each_distinct(
        &self,
        default: &ColumnFamily,
        mut check: impl FnMut(&ColumnFamily, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let family = |id: u32| match id {
            0 => Some(default),
            _ => self.families.iter().find(|f| f.id() == id),
        };
        if self.count <= COMPARE_PAIRWISE_UP_TO {
            for (i, (id, key)) in self.iter().enumerate() {
                if self.iter().take(i).any(|earlier| earlier == (id, key)) {
                    continue;
                }
                if let Some(cf) = family(id) {
                    check(cf, key)?;
                }
            }
            return Ok(());
        }
        let mut keys: Vec<(u32, &[u8])> = self.iter().collect();
        keys.sort_unstable();
        keys.dedup();
        for (id, key) in keys {
            if let Some(cf) = family(id) {
                check(cf, key)?;
            }
        }
        Ok(())
    }
}

/// An optimistic transaction over a [`Db`]. Begin one with [`Db::optimistic_transaction`].
///
/// # Examples
///
/// ```
/// use strata::TransactionBase;
/// use strata::{Db, ErrorKind, Options, TxnFailure, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// let mut txn = db.optimistic_transaction(&WriteOptions::default());
/// assert_eq!(txn.get_for_update(b"seat-12A")?, None); // free: book it
/// txn.put(b"seat-12A", b"alice")?;
/// db.put(b"seat-12A", b"bob")?; // someone else books it first
/// let err = txn.commit().unwrap_err(); // writes nothing
/// assert_eq!(err.kind(), ErrorKind::Busy);
/// assert_eq!(err.txn_failure(), Some(TxnFailure::Conflict));
/// assert_eq!(db.get(b"seat-12A")?.as_deref(), Some(&b"bob"[..]));
/// # drop(txn);
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct OptimisticTransaction<'db> {
    db: &'db Db,
    snapshot: Snapshot,
    write_options: WriteOptions,
    batch: IndexedBatch,
    tracked: TrackedKeys,
    tracked_at_save_points: Vec<TrackedMark>,
    state: State,
}

impl Db {
    /// Begins an optimistic transaction reading at a snapshot taken now, committed with
    /// `write_options`.
    pub fn optimistic_transaction(
        &self,
        write_options: &WriteOptions,
    ) -> OptimisticTransaction<'_> {
        OptimisticTransaction {
            db: self,
            snapshot: self.snapshot(),
            write_options: *write_options,
            batch: IndexedBatch::new(),
            tracked: TrackedKeys::default(),
            tracked_at_save_points: Vec::new(),
            state: State::Active,
        }
    }
}

impl<'db> OptimisticTransaction<'db> {
    /// The snapshot the transaction reads at.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    fn check_active(&self) -> Result<()> {
        check_active(self.state)
    }

    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            snapshot: Some(self.snapshot.clone()),
            ..ReadOptions::default()
        }
    }

    fn track(&mut self, cf: &ColumnFamily, key: &[u8]) {
        self.tracked.add(cf, key);
    }
}

impl TransactionBase for OptimisticTransaction<'_> {
    fn default_cf(&self) -> ColumnFamily {
        self.db.default_cf()
    }

    /// The value of `key` in family `cf`: the transaction's own writes over its snapshot.
    fn multi_get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        if let Err(e) = self.check_active().and_then(|()| check_family(cf)) {
            return keys.iter().map(|_| Err(e.duplicate())).collect();
        }
        self.batch
            .multi_get_from_batch_and_db(self.db, cf, &keys, &self.read_options())
    }

    fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.check_active()?;
        check_family(cf)?;
        let read = point_read(options, Some(self.snapshot.clone()));
        self.batch.get_from_batch_and_db(self.db, cf, key, &read)
    }

    fn read_snapshot(&self) -> Snapshot {
        self.snapshot.clone()
    }

    /// As [`OptimisticTransaction::get_cf`], and the commit fails if someone else writes
    /// `key` of `cf` after the snapshot.
    fn get_for_update_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        let value = self.get_cf(cf, key)?;
        self.track(cf, key);
        Ok(value)
    }

    /// Sets `key` to `value` in family `cf` when the transaction commits.
    fn put_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        self.check_active()?;
        check_family(cf)?;
        self.batch.put_cf(cf, key, value);
        self.track(cf, key);
        Ok(())
    }

    /// Deletes `key` in family `cf` when the transaction commits.
    fn delete_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        self.check_active()?;
        check_family(cf)?;
        self.batch.delete_cf(cf, key);
        self.track(cf, key);
        Ok(())
    }

    /// Merges `operand` into `key` of family `cf` when the transaction commits. The family
    /// must have a merge operator.
    fn merge_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()> {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.check_active()?;
        check_family(cf)?;
        check_merge(self.db, cf, key)?;
        self.batch.merge_cf(cf, key, operand);
        self.track(cf, key);
        Ok(())
    }

    fn check_readable(&self, cf: &ColumnFamily) -> Result<()> {
        self.check_active()?;
        check_family(cf)
    }

    /// A cursor over family `cf`, as [`OptimisticTransaction::iter`]. It shows the writes
    /// the transaction made before it was created.
    fn iter_cf(&self, cf: &ColumnFamily, options: &ReadOptions) -> Result<TxnIterator> {
        let mut options = options.clone();
        self.check_readable(cf)?;
        if options.snapshot.is_none() {
            options.snapshot = Some(self.snapshot.clone());
        }
        TxnIterator::over(&self.batch, self.db, cf, options)
    }

    /// Marks the transaction's state; [`OptimisticTransaction::rollback_to_save_point`]
    /// returns to it.
    fn set_save_point(&mut self) -> Result<()> {
        self.check_active()?;
        self.batch.set_save_point();
        self.tracked_at_save_points.push(self.tracked.mark());
        Ok(())
    }

    /// Undoes the writes (and the tracking of keys read for update) since the last save
    /// point, and removes it. `NotFound` if there is none.
    fn rollback_to_save_point(&mut self) -> Result<()> {
        self.check_active()?;
        self.batch.rollback_to_save_point()?;
        if let Some(mark) = self.tracked_at_save_points.pop() {
            self.tracked.truncate_to(mark);
        }
        Ok(())
    }

    /// The number of writes the transaction holds.
    fn len(&self) -> usize {
        self.batch.len()
    }

    /// Writes the transaction's writes atomically if no key it wrote or read for update was
    /// written by someone else since its snapshot. A conflict is a `Busy` error naming the
    /// key; then nothing is written. Either way the transaction ends.
    fn commit(&mut self) -> Result<()> {
        self.check_active()?;
        let since = self.snapshot.sequence();
        let tracked = std::mem::take(&mut self.tracked);
        let default = self.db.default_cf();
        let batch = self.batch.take_write_batch();
        let result = self
            .db
            .write_checked(batch, &self.write_options, &mut |history| {
                tracked.for_each_distinct(&default, |cf, key| {
                    match history.write_after(cf, key, since)? {
                        Some((seq, source)) => Err(conflict(cf, key, seq, since, source)),
                        None => Ok(()),
                    }
                })
            });
        self.state = if result.is_ok() {
            State::Committed
        } else {
            State::Failed
        };
        result
    }

    /// Drops the transaction's writes. Allowed in any state (a second call does nothing).
    fn rollback(&mut self) -> Result<()> {
        self.batch.clear();
        self.tracked.clear();
        self.tracked_at_save_points.clear();
        if self.state == State::Active {
            self.state = State::RolledBack;
        }
        Ok(())
    }
}

fn conflict(cf: &ColumnFamily, key: &[u8], seq: u64, since: u64, source: WriteSource) -> Error {
    let found = match source {
        WriteSource::Memtable => "in a memtable",
        WriteSource::Table => "in a table file, the memtables no longer holding the key's history",
    };
    Error::txn(
        TxnFailure::Conflict,
        format!(
            "transaction conflict: key '{}' of column family '{}' was written at sequence {seq} \
         (found {found}), after the transaction's snapshot at {since}; nothing was written",
            crate::util::printable(key),
            cf.name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CfOptions, Options};
    use std::collections::BTreeSet;

    /// Each key is checked once whatever the repeats, below and above the pairwise limit,
    /// across families, and a rollback to a mark forgets what came after it.
    #[test]
    fn tracked_keys_are_checked_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            create_if_missing: true,
            ..Options::default()
        };
        let db = Db::open(dir.path(), options).unwrap();
        let other = db.create_cf("other", CfOptions::default()).unwrap();
        let default = db.default_cf();
        for distinct in [1, 3, COMPARE_PAIRWISE_UP_TO, COMPARE_PAIRWISE_UP_TO * 3] {
            let mut tracked = TrackedKeys::default();
            let mut want = BTreeSet::new();
            for i in 0..distinct * 2 {
                let cf = if i % 3 == 0 { &other } else { &default };
                let key = format!("k{}", i % distinct).into_bytes();
                tracked.add(cf, &key);
                want.insert((cf.id(), key));
            }
            let mark = tracked.mark();
            tracked.add(&other, b"after the mark");
            tracked.truncate_to(mark);
            let mut got = Vec::new();
            tracked
                .for_each_distinct(&default, |cf, key| {
                    got.push((cf.id(), key.to_vec()));
                    Ok(())
                })
                .unwrap();
            assert_eq!(got.len(), want.len(), "{distinct} keys: duplicates checked");
            assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), want);
        }
    }
}
