//! LMDB under the bench loop (feature `lmdb`, through `heed`): a copy-on-write B+tree in one
//! memory-mapped file, the reference for read speed.
//!
//! Each put or delete is one write transaction, as each is one write batch in an LSM. With
//! `--sync=0` the environment is opened with MDB_NOSYNC (commits reach the page cache, not
//! the disk, as an LSM's unsynced WAL writes); fillsync's writes then sync the file after
//! their commit. LMDB has no log, memtable, levels, compression, filter or cache: the flags
//! for those have no effect (listed in `strata bench --help`). It keeps no count of bytes
//! written, so write-amp comes from /proc/self/io's wchar: LMDB writes its dirty pages with
//! write system calls at each commit.
//!
//! Transactions: each transactional operation is one LMDB transaction (a write transaction
//! if it writes). LMDB has a single writer: write transactions run one after another, so
//! they are serializable, never conflict and never wait on a lock that could time out; the
//! transaction flags mean the same here and nothing is retried. updaterandomcursor replaces
//! the value under a write transaction's cursor (`put_current`).
//!
//! Column families of the workloads ([`super::open_with_families`]) are LMDB's named
//! databases in the one environment, "default" among them: the unnamed main database then
//! holds only their names. (One family alone is the main database, as in the db_bench
//! steps.) A workload's transaction is one write transaction whatever its mode; LMDB has no
//! merge, so a merge is an error naming the engine.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use heed::types::Bytes;
use heed::{Database, Env, EnvFlags, EnvOpenOptions, WithoutTls};

use super::{
    counter_of, no_family, Attempt, Counters, Engine, EngineResult, Families, Retry, TxnBody,
    TxnError, TxnMode, TxnOp, TxnOps, TxnRead, Visitor, WriteOp,
};
use crate::bench::BenchArgs;

/// Address space reserved for the map: the file grows only as pages are written.
const MAP_SIZE: usize = 1 << 40;

/// The error of a merge on LMDB.
const NO_MERGE: &str = "merge is not available with --engine=lmdb: LMDB has no merge operator";

pub struct LmdbEngine {
    env: Env<WithoutTls>,
    /// The default family: the database of the db_bench steps.
    db: Database<Bytes, Bytes>,
    /// The families opened, by index (the default first).
    families: Vec<Database<Bytes, Bytes>>,
    /// Opened with MDB_NOSYNC: a synced write must sync the file itself.
    no_sync: bool,
    path: PathBuf,
}

impl LmdbEngine {
    pub fn open(
        args: &BenchArgs,
        path: &Path,
        names: &[&str],
        use_: Families,
    ) -> EngineResult<Self> {
        if use_ == Families::SpreadKeys && names.len() > 1 {
            return Err(
                "--num_column_families above 1 is not supported with --engine=lmdb (one \
                 B-tree holds every key)"
                    .into(),
            );
        }
        if args.use_existing_db {
            if !path.join("data.mdb").exists() {
                return Err(format!(
                    "--use_existing_db: no database at {} (no data.mdb)",
                    path.display()
                )
                .into());
            }
        } else {
            std::fs::create_dir_all(path)
                .map_err(|e| format!("creating {}: {e}", path.display()))?;
        }
        let mut options = EnvOpenOptions::new().read_txn_without_tls();
        options
            .map_size(MAP_SIZE)
            .max_readers(args.threads as u32 + 126)
            .max_dbs(names.len() as u32);
        let no_sync = !args.options.sync;
        if no_sync {
            // SAFETY: MDB_NOSYNC trades durability of the last commits for speed, as an
            // unsynced log does; the environment is opened once in this process.
            unsafe {
                options.flags(EnvFlags::NO_SYNC);
            }
        }
        // SAFETY: the directory is this run's; no other process or environment maps it.
        let env = unsafe { options.open(path) }
            .map_err(|e| format!("opening {} with LMDB: {e}", path.display()))?;
        let mut txn = env.write_txn()?;
        let families = match names {
            [_] => vec![env.create_database(&mut txn, None)?],
            _ => names
                .iter()
                .map(|&name| env.create_database(&mut txn, Some(name)))
                .collect::<Result<_, _>>()?,
        };
        txn.commit()?;
        Ok(LmdbEngine {
            env,
            db: families[0],
            families,
            no_sync,
            path: path.to_path_buf(),
        })
    }

    /// Commits a write transaction, syncing the file after it for a `sync` one.
    fn commit(&self, txn: heed::RwTxn<'_>, sync: bool) -> EngineResult<()> {
        txn.commit()?;
        if sync && self.no_sync {
            self.env.force_sync()?;
        }
        Ok(())
    }

    /// Family number `cf` of the workloads' operations.
    fn family_at(&self, cf: usize) -> EngineResult<Database<Bytes, Bytes>> {
        self.families
            .get(cf)
            .copied()
            .ok_or_else(|| no_family(cf, self.families.len()))
    }

    fn stat(&self) -> Option<heed::DatabaseStat> {
        let txn = self.env.read_txn().ok()?;
        self.db.stat(&txn).ok()
    }
}

impl Engine for LmdbEngine {
    fn version(&self) -> String {
        let v = heed::lmdb_version();
        format!("lmdb {}.{}.{} (mdb.master)", v.major, v.minor, v.patch)
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> EngineResult<()> {
        let mut txn = self.env.write_txn()?;
        self.db.put(&mut txn, key, value)?;
        txn.commit()?;
        if sync && self.no_sync {
            self.env.force_sync()?;
        }
        Ok(())
    }

    fn put_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) -> EngineResult<()> {
        let mut txn = self.env.write_txn()?;
        for (key, value) in entries {
            self.db.put(&mut txn, key, value)?;
        }
        txn.commit()?;
        if sync && self.no_sync {
            self.env.force_sync()?;
        }
        Ok(())
    }

    fn merge(&self, _key: &[u8], _operand: &[u8], _sync: bool) -> EngineResult<()> {
        Err("LMDB has no merge operator".into())
    }

    fn delete(&self, key: &[u8], sync: bool) -> EngineResult<()> {
        let mut txn = self.env.write_txn()?;
        self.db.delete(&mut txn, key)?;
        txn.commit()?;
        if sync && self.no_sync {
            self.env.force_sync()?;
        }
        Ok(())
    }

    /// LMDB has no range deletion: one write transaction deletes every key present in the
    /// range, so its cost grows with the keys it finds (a range tombstone's does not).
    fn delete_range(&self, begin: &[u8], end: &[u8], sync: bool) -> EngineResult<()> {
        let mut txn = self.env.write_txn()?;
        let range: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(begin), Bound::Excluded(end));
        self.db.delete_range(&mut txn, &range)?;
        txn.commit()?;
        if sync && self.no_sync {
            self.env.force_sync()?;
        }
        Ok(())
    }

    fn range_deletion_emulated(&self) -> Option<&'static str> {
        Some("LMDB has no range deletion: each is one transaction deleting every key present in its range")
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        let txn = self.env.read_txn()?;
        Ok(self.db.get(&txn, key)?.map(<[u8]>::len))
    }

    fn scan(&self, reverse: bool, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> EngineResult<()> {
        let txn = self.env.read_txn()?;
        if reverse {
            for entry in self.db.rev_iter(&txn)? {
                let (k, v) = entry?;
                if !visit(k, v) {
                    break;
                }
            }
        } else {
            for entry in self.db.iter(&txn)? {
                let (k, v) = entry?;
                if !visit(k, v) {
                    break;
                }
            }
        }
        Ok(())
    }

    fn seek(&self, key: &[u8], nexts: u64) -> EngineResult<(bool, u64)> {
        let txn = self.env.read_txn()?;
        let range: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(key), Bound::Unbounded);
        let mut entries = self.db.range(&txn, &range)?;
        let Some(first) = entries.next().transpose()? else {
            return Ok((false, 0));
        };
        let found = first.0 == key;
        let mut bytes = 0;
        if nexts > 0 {
            bytes += (first.0.len() + first.1.len()) as u64;
            for entry in entries.take(nexts as usize - 1) {
                let (k, v) = entry?;
                bytes += (k.len() + v.len()) as u64;
            }
        }
        Ok((found, bytes))
    }

    fn flush(&self) -> EngineResult<()> {
        // No memtable: the closest thing is making the committed pages durable.
        Ok(self.env.force_sync()?)
    }

    fn compact(&self, _level: Option<usize>) -> EngineResult<()> {
        Ok(())
    }

    fn wait_for_compactions(&self) -> EngineResult<()> {
        Ok(())
    }

    fn counters(&self) -> Counters {
        Counters::default()
    }

    fn reset_stats(&self) {}

    fn stats_text(&self) -> String {
        let info = self.env.info();
        let mut text = format!(
            "** LMDB stats **\nmap size {} MiB, last page {}, last transaction {}, readers {} of {}\n",
            info.map_size >> 20,
            info.last_page_number,
            info.last_txn_id,
            info.number_of_readers,
            info.maximum_number_of_readers
        );
        text.push_str(&self.level_stats_text());
        text
    }

    fn level_stats_text(&self) -> String {
        match self.stat() {
            Some(s) => format!(
                "B+tree: depth {}, {} branch pages, {} leaf pages, {} overflow pages of {} bytes, {} entries\n",
                s.depth, s.branch_pages, s.leaf_pages, s.overflow_pages, s.page_size, s.entries
            ),
            None => String::new(),
        }
    }

    fn shape(&self) -> String {
        match self.stat() {
            Some(s) => {
                let pages = s.branch_pages + s.leaf_pages + s.overflow_pages;
                format!(
                    "B+tree depth {}, {} pages ({:.1} MiB in use), {} entries",
                    s.depth,
                    pages,
                    (pages as u64 * u64::from(s.page_size)) as f64 / 1048576.0,
                    s.entries
                )
            }
            None => "B+tree (no stat)".into(),
        }
    }

    fn recovery(&self) -> Option<String> {
        None
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        let LmdbEngine { env, .. } = *self;
        env.prepare_for_closing().wait();
        Ok(())
    }

    fn transaction(&self, _mode: TxnMode, op: TxnOp<'_>, sync: bool) -> EngineResult<Attempt> {
        let mut read = TxnRead::default();
        match op {
            TxnOp::Get(key) => {
                if let Some(len) = self.get(key)? {
                    read.found = true;
                    read.bytes = (key.len() + len) as u64;
                }
                return Ok(Ok(read));
            }
            TxnOp::Seek(key, nexts) => {
                (read.found, read.bytes) = self.seek(key, nexts)?;
                return Ok(Ok(read));
            }
            _ => {}
        }
        let mut txn = self.env.write_txn()?;
        match op {
            TxnOp::Get(_) | TxnOp::Seek(..) => unreachable!("handled above"),
            TxnOp::Put(entries) => {
                for (key, value) in entries {
                    self.db.put(&mut txn, key, value)?;
                }
            }
            TxnOp::Delete(key) => {
                self.db.delete(&mut txn, key)?;
            }
            TxnOp::Update(key, value) => {
                if let Some(old) = self.db.get(&txn, key)? {
                    read.found = true;
                    read.bytes = (key.len() + old.len()) as u64;
                }
                self.db.put(&mut txn, key, value)?;
            }
            TxnOp::AddToEach(keys, increment) => {
                for key in keys {
                    let old = self.db.get(&txn, key)?;
                    read.found |= old.is_some();
                    let counter = counter_of(key, old)?;
                    self.db.put(
                        &mut txn,
                        key,
                        &counter.wrapping_add(increment).to_be_bytes(),
                    )?;
                }
            }
            TxnOp::CursorUpdate(key, value) => {
                let range: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(key), Bound::Unbounded);
                let mut cursor = self.db.range_mut(&mut txn, &range)?;
                if let Some(entry) = cursor.next() {
                    let (k, v) = entry?;
                    read.found = true;
                    read.bytes = (k.len() + v.len()) as u64;
                    // put_current must not be given bytes borrowed from the map.
                    let k = k.to_vec();
                    // SAFETY: the key is the cursor's current key, copied out of the map; no
                    // reference into the map is held across the write.
                    unsafe { cursor.put_current(&k, value)? };
                }
            }
        }
        self.commit(txn, sync)?;
        Ok(Ok(read))
    }

    fn transactions_note(&self) -> Option<&'static str> {
        Some("LMDB: one write transaction per operation, serialized by its single writer")
    }

    fn get_value(&self, cf: usize, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        let db = self.family_at(cf)?;
        let txn = self.env.read_txn()?;
        Ok(db.get(&txn, key)?.map(<[u8]>::to_vec))
    }

    fn write_ops(&self, ops: &[WriteOp<'_>], sync: bool) -> EngineResult<()> {
        let mut txn = self.env.write_txn()?;
        for op in ops {
            write_op(self, &mut txn, *op)?;
        }
        self.commit(txn, sync)
    }

    fn scan_range(
        &self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: Visitor<'_>,
    ) -> EngineResult<()> {
        let db = self.family_at(cf)?;
        let txn = self.env.read_txn()?;
        scan(db, &txn, lower, upper, reverse, visit)
    }

    fn run_transaction(
        &self,
        _mode: TxnMode,
        sync: bool,
        body: TxnBody<'_>,
    ) -> EngineResult<Result<(), Retry>> {
        let mut ops = BodyTxn {
            engine: self,
            txn: self.env.write_txn()?,
        };
        match body(&mut ops) {
            Ok(()) => {
                self.commit(ops.txn, sync)?;
                Ok(Ok(()))
            }
            Err(stopped) => {
                ops.txn.abort();
                match stopped {
                    TxnError::Retry(why) => Ok(Err(why)),
                    TxnError::Failed(e) => Err(e),
                }
            }
        }
    }
}

/// Applies one write of a workload in `txn`.
fn write_op(engine: &LmdbEngine, txn: &mut heed::RwTxn<'_>, op: WriteOp<'_>) -> EngineResult<()> {
    let db = engine.family_at(op.cf())?;
    match op {
        WriteOp::Put { key, value, .. } => db.put(txn, key, value)?,
        WriteOp::Delete { key, .. } => {
            db.delete(txn, key)?;
        }
        WriteOp::Merge { .. } => return Err(NO_MERGE.into()),
    }
    Ok(())
}

/// The entries of `db` in `[lower, upper)`, ascending or descending, while `visit` says so.
fn scan(
    db: Database<Bytes, Bytes>,
    txn: &heed::RoTxn<'_, WithoutTls>,
    lower: &[u8],
    upper: Option<&[u8]>,
    reverse: bool,
    visit: Visitor<'_>,
) -> EngineResult<()> {
    // LMDB refuses an empty key, even as a bound: the empty lower bound is no bound, and
    // nothing lies below an empty upper one.
    if upper == Some(&[]) {
        return Ok(());
    }
    let lower = match lower {
        [] => Bound::Unbounded,
        lower => Bound::Included(lower),
    };
    let range: (Bound<&[u8]>, Bound<&[u8]>) =
        (lower, upper.map_or(Bound::Unbounded, Bound::Excluded));
    if reverse {
        for entry in db.rev_range(txn, &range)? {
            let (k, v) = entry?;
            if !visit(k, v) {
                break;
            }
        }
    } else {
        for entry in db.range(txn, &range)? {
            let (k, v) = entry?;
            if !visit(k, v) {
                break;
            }
        }
    }
    Ok(())
}

/// A workload's transaction on LMDB: one write transaction.
struct BodyTxn<'e> {
    engine: &'e LmdbEngine,
    txn: heed::RwTxn<'e>,
}

impl TxnOps for BodyTxn<'_> {
    fn get(
        &mut self,
        cf: usize,
        key: &[u8],
        _for_update: bool,
    ) -> Result<Option<Vec<u8>>, TxnError> {
        let db = self.engine.family_at(cf)?;
        let value = db
            .get(&self.txn, key)
            .map_err(|e| TxnError::Failed(e.into()))?;
        Ok(value.map(<[u8]>::to_vec))
    }

    fn write(&mut self, op: WriteOp<'_>) -> Result<(), TxnError> {
        Ok(write_op(self.engine, &mut self.txn, op)?)
    }

    fn scan(
        &mut self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: Visitor<'_>,
    ) -> Result<(), TxnError> {
        let db = self.engine.family_at(cf)?;
        Ok(scan(db, &self.txn, lower, upper, reverse, visit)?)
    }
}
