//! The database under the stress test, its keys spread over `--column_families` families:
//! key `k` lives in family `k % N` (family 0 is the default one). Every read and write of a
//! key goes to its family; a batch may write several families and must stay atomic across
//! them; an iteration walks one family. The bank of `--txn` (`bank.rs`) spreads its accounts
//! the same way over the same families.
//!
//! Besides them, the families a worker creates and drops (`column_family` in the mix: see
//! [`super::churn`]) are named `churn_T` for thread `T`; the ones the database holds are
//! opened with it (the engine must be given every family), and are no part of the key space.

use std::path::Path;

use strata::{
    ColumnFamily, Db, DbIterator, IngestOptions, Options, ReadOptions, Result, Snapshot,
    WriteBatch, WriteOptions,
};

/// An open database with the stress test's families.
pub struct Store {
    db: Db,
    /// Family `i` holds the keys `k % len == i`; `[0]` is the default family.
    families: Vec<ColumnFamily>,
}

/// The name of family `i`.
fn family_name(i: usize) -> String {
    match i {
        0 => "default".to_string(),
        i => format!("stress_{i}"),
    }
}

/// Opens (creating what is missing) the database at `path` with `count` families, each with
/// the family fields of `options`; returns it with the families' handles, `[0]` the default.
pub fn open_families(
    path: &Path,
    mut options: Options,
    count: usize,
) -> Result<(Db, Vec<ColumnFamily>)> {
    let cf_options = options.cf_options();
    options.create_missing_column_families = true;
    let mut names: Vec<String> = (0..count.max(1)).map(family_name).collect();
    // The families a worker created and did not drop (the engine must be given them all).
    if let Ok(found) = Db::list_cfs(path, &options) {
        names.extend(found.into_iter().filter(|n| is_churn_family(n)));
    }
    let db = Db::open_cf(
        path,
        options,
        names.iter().map(|n| (n.as_str(), cf_options.clone())),
    )?;
    let families = names
        .iter()
        .take(count.max(1))
        .map(|n| db.cf(n).expect("named at open"))
        .collect();
    Ok((db, families))
}

/// The name of the family thread `t` creates and drops.
pub fn churn_family_name(t: u64) -> String {
    format!("churn_{t}")
}

fn is_churn_family(name: &str) -> bool {
    name.strip_prefix("churn_")
        .is_some_and(|t| t.parse::<u64>().is_ok())
}

impl Store {
    /// Opens (creating what is missing) the database at `path` with `count` families, each
    /// with the family fields of `options`.
    pub fn open(path: &Path, options: Options, count: usize) -> Result<Store> {
        let (db, families) = open_families(path, options, count)?;
        Ok(Store { db, families })
    }

    /// The number of families.
    pub fn family_count(&self) -> u64 {
        self.families.len() as u64
    }

    /// The family of key index `k`.
    pub fn family_of(&self, k: u64) -> usize {
        (k % self.family_count()) as usize
    }

    fn cf(&self, k: u64) -> &ColumnFamily {
        &self.families[self.family_of(k)]
    }

    pub fn batch_put(&self, batch: &mut WriteBatch, k: u64, key: &[u8], value: &[u8]) {
        batch.put_cf(self.cf(k), key, value);
    }

    pub fn batch_delete(&self, batch: &mut WriteBatch, k: u64, key: &[u8], single: bool) {
        match single {
            true => batch.single_delete_cf(self.cf(k), key),
            false => batch.delete_cf(self.cf(k), key),
        };
    }

    /// Deletes the keys in `[begin, end)` of family `family`.
    pub fn batch_delete_range(
        &self,
        batch: &mut WriteBatch,
        family: usize,
        begin: &[u8],
        end: &[u8],
    ) {
        batch.delete_range_cf(&self.families[family], begin, end);
    }

    pub fn batch_merge(&self, batch: &mut WriteBatch, k: u64, key: &[u8], operand: &[u8]) {
        batch.merge_cf(self.cf(k), key, operand);
    }

    pub fn write(&self, batch: WriteBatch, options: &WriteOptions) -> Result<()> {
        self.db.write(batch, options)
    }

    /// The value of key index `k` (whose bytes are `key`), as of `snapshot` if given.
    pub fn get(&self, k: u64, key: &[u8], snapshot: Option<&Snapshot>) -> Result<Option<Vec<u8>>> {
        let mut options = ReadOptions::default();
        options.snapshot = snapshot.cloned();
        self.db.get_cf_opt(self.cf(k), key, &options)
    }

    /// The values of key indexes `ks` (all of one family, `family`), in one `multi_get`.
    pub fn multi_get(&self, family: usize, ks: &[u64]) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<Vec<u8>> = ks.iter().map(|&k| super::key(k)).collect();
        self.db.multi_get_cf(&self.families[family], &keys)
    }

    /// Flushes every family's memtables.
    pub fn flush(&self) -> Result<()> {
        self.db.flush()
    }

    /// Makes every write so far durable.
    pub fn sync_wal(&self) -> Result<()> {
        self.db.sync_wal()
    }

    /// Compacts `[begin, end]` of family `family`.
    pub fn compact_range(&self, family: usize, begin: &[u8], end: &[u8]) -> Result<()> {
        self.db
            .compact_range_cf(&self.families[family], Some(begin), Some(end))
    }

    /// Restarts background work after an error.
    pub fn resume(&self) -> Result<()> {
        self.db.resume()
    }

    pub fn snapshot(&self) -> Snapshot {
        self.db.snapshot()
    }

    /// A cursor over family `family`, in total order (prefix filters ignored).
    pub fn iter(&self, family: usize) -> Result<DbIterator> {
        let mut options = ReadOptions::default();
        options.total_order_seek = true;
        self.iter_opt(family, &options)
    }

    /// A cursor over family `family` with read options `options` (bounds, snapshot, ...).
    pub fn iter_opt(&self, family: usize, options: &ReadOptions) -> Result<DbIterator> {
        self.db.iter_cf(&self.families[family], options)
    }

    /// Ingests the table `file` into family `family`.
    pub fn ingest(&self, family: usize, file: &Path, options: &IngestOptions) -> Result<()> {
        self.db.ingest_cf(&self.families[family], &[file], options)
    }

    /// The database itself (checkpoints, families created and dropped).
    pub fn db(&self) -> &Db {
        &self.db
    }

    pub fn close(self) -> Result<()> {
        self.db.close()
    }
}
