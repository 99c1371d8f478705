//! Strata under the bench loop: every flag maps to an option of [`strata::Options`].
//! `--prefix_size` sets a `fixed:N` prefix extractor; seekrandom's iterators take
//! `--prefix_same_as_start` and `--total_order_seek`, every iterator `--readahead_size`, and
//! every read outside transactions `--verify_checksum` and `--fill_cache`.
//! With `--num_column_families` > 1 the keys are spread over the families as db_bench does
//! (see [`super::family_of`]), each family with the same options.
//!
//! Transactions: when the run needs pessimistic ones (`--transaction_db`, or a step of its
//! own such as randomtransaction) the database is wrapped in a [`TransactionDb`] and the
//! plain operations go to its inner [`Db`] (they take no locks: no transaction runs beside
//! them in one step). Optimistic transactions need no wrapper. Every transaction runs on the
//! family of each key it touches; a `Busy` error is a retry, told apart by its message
//! (the library has one error kind for conflicts, deadlocks and lock timeouts).
//!
//! The workloads' operations ([`Engine::get_value`], [`Engine::write_ops`],
//! [`Engine::scan_range`], [`Engine::run_transaction`]) name the family by its index among
//! those opened; scans are iterators with the range as their bounds.

use std::path::Path;

use std::sync::Arc;

use std::time::{Duration, Instant};

use strata::TransactionBase;
use strata::{
    ColumnFamily, Db, DbIterator, FixedPrefix, IngestOptions, Options, PrefixExtractor,
    ReadOptions, SstWriter, TransactionDb, TransactionOptions, TxnFailure, WriteBatch,
    WriteOptions,
};

use super::{
    blob_shape, counter_of, family_of, no_family, Attempt, Counters, Engine, EngineResult,
    Families, Retry, TxnBody, TxnError, TxnMode, TxnOp, TxnOps, TxnRead, Visitor, WriteOp,
};
use crate::bench::units::mb;
use crate::bench::BenchArgs;

/// The database, wrapped for pessimistic transactions when the run has them.
enum Handle {
    Plain(Db),
    Locking(TransactionDb),
}

pub struct StrataEngine {
    handle: Handle,
    /// Lock wait of pessimistic transactions (--transaction_lock_timeout).
    txn_options: TransactionOptions,
    /// The families opened, the default first.
    families: Vec<ColumnFamily>,
    /// How many of them (from the first) the db_bench steps spread their keys over: all
    /// with --num_column_families, else the default alone.
    spread: usize,
    disable_wal: bool,
    /// How seekrandom's iterators seek (prefix flags, and `scan_options`' readahead).
    seek_options: ReadOptions,
    /// The read options of every other iterator (--readahead_size, and those of
    /// `point_options`).
    scan_options: ReadOptions,
    /// The read options of point reads (--verify_checksum, --fill_cache).
    point_options: ReadOptions,
    /// The options the database was opened with: fillseqingest's table writer takes them.
    options: Options,
}

impl StrataEngine {
    pub fn open(
        args: &BenchArgs,
        path: &Path,
        names: &[&str],
        use_: Families,
    ) -> EngineResult<Self> {
        let prefix_extractor: Option<Arc<dyn PrefixExtractor>> = match args.prefix_size {
            0 => None,
            n => Some(Arc::new(FixedPrefix::new(n)?)),
        };
        let mut options = args.options.options()?;
        if args.statistics {
            options.stats_level = strata::StatsLevel::ExceptDetailedTimers;
        }
        options.create_if_missing = !args.use_existing_db;
        options.create_missing_column_families = true;
        options.prefix_extractor = prefix_extractor;
        let cf_options = options.cf_options();
        let db = Db::open_cf(
            path,
            options.clone(),
            names.iter().map(|&n| (n, cf_options.clone())),
        )
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
        let families: Vec<ColumnFamily> = names
            .iter()
            .map(|n| {
                db.cf(n)
                    .ok_or_else(|| format!("no column family {n} after open"))
            })
            .collect::<Result<_, _>>()?;
        let handle = match args.open_txn_mode() {
            Some(TxnMode::Pessimistic) => Handle::Locking(TransactionDb::new(db)?),
            _ => Handle::Plain(db),
        };
        let mut txn_options = TransactionOptions::default();
        txn_options.lock_timeout = Duration::from_millis(args.transaction_lock_timeout);
        txn_options.deadlock_detect = true;
        let mut point_options = ReadOptions::default();
        point_options.verify_checksums = args.verify_checksum;
        point_options.fill_cache = args.fill_cache;
        let mut scan_options = point_options.clone();
        scan_options.readahead_size = args.readahead_size;
        let mut seek_options = scan_options.clone();
        seek_options.prefix_same_as_start = args.prefix_same_as_start();
        seek_options.total_order_seek = args.total_order_seek;
        Ok(StrataEngine {
            handle,
            txn_options,
            spread: match use_ {
                Families::SpreadKeys => families.len(),
                Families::DefaultOnly => 1,
            },
            families,
            disable_wal: args.disable_wal,
            seek_options,
            scan_options,
            point_options,
            options,
        })
    }

    /// The database the plain operations use.
    fn db(&self) -> &Db {
        match &self.handle {
            Handle::Plain(db) => db,
            Handle::Locking(tdb) => tdb.db(),
        }
    }

    /// The family of `key` for a transaction (which always names one).
    fn txn_family(&self, key: &[u8]) -> &ColumnFamily {
        &self.families[family_of(key, self.spread.max(1))]
    }

    /// Family number `cf` of the workloads' operations.
    fn family_at(&self, cf: usize) -> EngineResult<&ColumnFamily> {
        self.families
            .get(cf)
            .ok_or_else(|| no_family(cf, self.families.len()))
    }

    /// A workload's transaction: `body` in `txn`, then the commit; `Ok(Err(why))` for a
    /// retry (the transaction rolled back).
    fn run_body<T: TransactionBase>(
        &self,
        txn: T,
        body: TxnBody<'_>,
    ) -> EngineResult<Result<(), Retry>> {
        let mut ops = BodyTxn { engine: self, txn };
        match body(&mut ops) {
            Ok(()) => match ops.txn.commit() {
                Ok(()) => Ok(Ok(())),
                Err(e) => match e.txn_failure() {
                    Some(failure) => Ok(Err(retry_of(failure))),
                    None => Err(e.into()),
                },
            },
            Err(stopped) => {
                ops.txn.rollback()?;
                match stopped {
                    TxnError::Retry(why) => Ok(Err(why)),
                    TxnError::Failed(e) => Err(e),
                }
            }
        }
    }

    /// Runs `op` in `txn` and commits it (rolls it back for a read-only one).
    fn run_txn<T: TransactionBase>(&self, mut txn: T, op: TxnOp<'_>) -> strata::Result<TxnRead> {
        let mut read = TxnRead::default();
        match op {
            TxnOp::Put(entries) => {
                for (key, value) in entries {
                    txn.put_cf(self.txn_family(key), key, value)?;
                }
            }
            TxnOp::Delete(key) => txn.delete_cf(self.txn_family(key), key)?,
            TxnOp::Get(key) => {
                if let Some(v) = txn.get_cf(self.txn_family(key), key)? {
                    read.found = true;
                    read.bytes = (key.len() + v.len()) as u64;
                }
            }
            TxnOp::Seek(key, nexts) => {
                let mut it = txn.iter_cf(self.txn_family(key), &self.seek_options)?;
                it.seek(key);
                read.found = it.valid() && it.key() == key;
                for _ in 0..nexts {
                    if !it.valid() {
                        break;
                    }
                    read.bytes += (it.key().len() + it.value().len()) as u64;
                    it.next();
                }
                it.status()?;
            }
            TxnOp::Update(key, value) => {
                let cf = self.txn_family(key);
                if let Some(v) = txn.get_for_update_cf(cf, key)? {
                    read.found = true;
                    read.bytes = (key.len() + v.len()) as u64;
                }
                txn.put_cf(cf, key, value)?;
            }
            TxnOp::AddToEach(keys, increment) => {
                for key in keys {
                    let cf = self.txn_family(key);
                    let old = txn.get_for_update_cf(cf, key)?;
                    read.found |= old.is_some();
                    let counter = counter_of(key, old.as_deref())
                        .map_err(|e| strata::Error::InvalidArgument(e.to_string()))?;
                    txn.put_cf(cf, key, counter.wrapping_add(increment).to_be_bytes())?;
                }
            }
            TxnOp::CursorUpdate(key, value) => {
                let mut cursor = txn.cursor_cf(self.txn_family(key), &self.scan_options)?;
                cursor.seek(key);
                if cursor.valid() {
                    read.found = true;
                    read.bytes = (cursor.key().len() + cursor.value().len()) as u64;
                    cursor.update(value)?;
                }
                cursor.status()?;
            }
        }
        if op.read_only() {
            txn.rollback()?;
        } else {
            txn.commit()?;
        }
        Ok(read)
    }

    /// The family of `key`, or `None` for the default one (the plain calls are used then).
    fn family(&self, key: &[u8]) -> Option<&ColumnFamily> {
        match self.spread {
            0 | 1 => None,
            n => Some(&self.families[family_of(key, n)]).filter(|cf| cf.id() != 0),
        }
    }

    fn write_options(&self, sync: bool) -> WriteOptions {
        let mut write_options = WriteOptions::default();
        write_options.sync = sync;
        write_options.disable_wal = self.disable_wal;
        write_options
    }

    /// A cursor over the family of `key` (or the default family), reading with `options`.
    /// Read options of a scan of `[lower, upper)`.
    fn bounds(&self, lower: &[u8], upper: Option<&[u8]>) -> ReadOptions {
        let mut scan = self.scan_options.clone();
        scan.lower_bound = Some(lower.to_vec());
        scan.upper_bound = upper.map(<[u8]>::to_vec);
        scan
    }

    fn iter_for(
        &self,
        family: Option<&ColumnFamily>,
        options: ReadOptions,
    ) -> EngineResult<DbIterator> {
        Ok(match family {
            Some(cf) => self.db().iter_cf(cf, &options)?,
            None => self.db().iter(&options),
        })
    }
}

impl Engine for StrataEngine {
    fn version(&self) -> String {
        format!("strata {}", env!("CARGO_PKG_VERSION"))
    }

    fn path(&self) -> &Path {
        self.db().path()
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> EngineResult<()> {
        let options = self.write_options(sync);
        match self.family(key) {
            None => Ok(self.db().put_opt(key, value, &options)?),
            Some(cf) => Ok(self.db().put_cf_opt(cf, key, value, &options)?),
        }
    }

    fn put_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) -> EngineResult<()> {
        let mut batch = WriteBatch::new();
        for (key, value) in entries {
            match self.family(key) {
                None => batch.put(key, value),
                Some(cf) => batch.put_cf(cf, key, value),
            };
        }
        Ok(self.db().write(batch, &self.write_options(sync))?)
    }

    fn delete(&self, key: &[u8], sync: bool) -> EngineResult<()> {
        let options = self.write_options(sync);
        match self.family(key) {
            None => Ok(self.db().delete_opt(key, &options)?),
            Some(cf) => Ok(self.db().delete_cf_opt(cf, key, &options)?),
        }
    }

    fn delete_range(&self, begin: &[u8], end: &[u8], sync: bool) -> EngineResult<()> {
        let mut batch = WriteBatch::new();
        match self.family(begin) {
            None => batch.delete_range(begin, end),
            Some(cf) => batch.delete_range_cf(cf, begin, end),
        };
        Ok(self.db().write(batch, &self.write_options(sync))?)
    }

    fn merge(&self, key: &[u8], operand: &[u8], sync: bool) -> EngineResult<()> {
        let options = self.write_options(sync);
        match self.family(key) {
            None => Ok(self.db().merge_opt(key, operand, &options)?),
            Some(cf) => {
                let mut batch = WriteBatch::new();
                batch.merge_cf(cf, key, operand);
                Ok(self.db().write(batch, &options)?)
            }
        }
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        // Pinned, as db_bench reads (a `PinnableSlice`) and as the RocksDB engine here does:
        // a value in a table block is not copied out of it.
        let value = match self.family(key) {
            None => self.db().get_pinned_opt(key, &self.point_options)?,
            Some(cf) => self.db().get_pinned_cf_opt(cf, key, &self.point_options)?,
        };
        Ok(value.map(|v| v.len()))
    }

    fn scan(&self, reverse: bool, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> EngineResult<()> {
        // Family after family (in reverse order for a reverse scan), as one sequence.
        let mut order: Vec<Option<&ColumnFamily>> = match self.spread {
            0 | 1 => vec![None],
            _ => std::iter::once(None)
                .chain(self.families[1..self.spread].iter().map(Some))
                .collect(),
        };
        if reverse {
            order.reverse();
        }
        for family in order {
            let mut it = self.iter_for(family, self.scan_options.clone())?;
            if reverse {
                it.seek_to_last();
            } else {
                it.seek_to_first();
            }
            while it.valid() {
                if !visit(it.key(), it.value()) {
                    return Ok(it.status()?);
                }
                if reverse {
                    it.prev();
                } else {
                    it.next();
                }
            }
            it.status()?;
        }
        Ok(())
    }

    fn seek(&self, key: &[u8], nexts: u64) -> EngineResult<(bool, u64)> {
        let mut it = self.iter_for(self.family(key), self.seek_options.clone())?;
        it.seek(key);
        let found = it.valid() && it.key() == key;
        let mut bytes = 0;
        for _ in 0..nexts {
            if !it.valid() {
                break;
            }
            bytes += (it.key().len() + it.value().len()) as u64;
            it.next();
        }
        it.status()?;
        Ok((found, bytes))
    }

    fn flush(&self) -> EngineResult<()> {
        Ok(self.db().flush()?)
    }

    fn compact(&self, level: Option<usize>) -> EngineResult<()> {
        match level {
            Some(_) if self.families.len() > 1 => {
                return Err(
                    "compact0 and compact1 compact the default family only: with several column \
                     families (--num_column_families above 1, or a workload's) use compactall"
                        .into(),
                )
            }
            Some(level) => self.db().compact_level(level)?,
            None => self.db().compact_all()?,
        }
        Ok(())
    }

    fn wait_for_compactions(&self) -> EngineResult<()> {
        Ok(self.db().wait_for_compactions()?)
    }

    fn counters(&self) -> Counters {
        let s = self.db().stats();
        // Compactions of every family (the stats above hold the default family's).
        let compactions: Vec<strata::LevelCompactionStats> = match self.families.len() {
            0 | 1 => s.compactions.clone(),
            _ => self
                .families
                .iter()
                .filter_map(|cf| self.db().stats_cf(cf).ok())
                .flat_map(|s| s.compactions)
                .collect(),
        };
        let pending = match self.families.len() {
            0 | 1 => s.pending_compaction_bytes,
            _ => self
                .families
                .iter()
                .filter_map(|cf| self.db().stats_cf(cf).ok())
                .map(|s| s.pending_compaction_bytes)
                .sum(),
        };
        Counters {
            bytes_written: Some(s.io.total_written()),
            write_groups: s.write_groups,
            batches: s.batches,
            wal_syncs: s.wal_syncs,
            bloom_checks: s.bloom_checks,
            bloom_negatives: s.bloom_negatives,
            cache_hits: s.block_cache_hits,
            cache_misses: s.block_cache_misses,
            table_bytes_read: Some(s.table_bytes_read),
            blob_bytes_read: Some(s.blob_bytes_read),
            stalls: vec![
                ("L0 slowdowns", Some(s.l0_slowdowns), s.l0_slowdown_micros),
                ("L0 stops", Some(s.l0_stops), s.l0_stop_micros),
                (
                    "pending-bytes slowdowns",
                    Some(s.pending_slowdowns),
                    s.pending_slowdown_micros,
                ),
                (
                    "pending-bytes stops",
                    Some(s.pending_stops),
                    s.pending_stop_micros,
                ),
                ("memtable waits", Some(s.write_stalls), s.stall_micros),
            ],
            // Count and bytes of the finished compactions, from one source: the IO counters
            // (IoClass::Compaction) also hold what running compactions wrote so far.
            compactions: Some(compactions.iter().map(|c| c.count).sum()),
            compaction_bytes_read: compactions.iter().map(|c| c.bytes_read).sum(),
            compaction_bytes_written: compactions.iter().map(|c| c.bytes_written).sum(),
            compactions_running: Some(s.compactions_running),
            pending_compaction_bytes: pending,
            compactions_skipped_for_space: s.compactions_skipped_for_space,
        }
    }

    fn reset_stats(&self) {
        self.db().reset_stats();
    }

    fn stats_text(&self) -> String {
        self.db().property("strata.stats").unwrap_or_default()
    }

    fn start_perf_context(&self, level: u32) {
        let level = strata::PerfLevel::from_number(level).unwrap_or(strata::PerfLevel::Disable);
        strata::set_perf_level(level);
        strata::reset_perf_context();
    }

    fn take_perf_context(&self) -> Vec<(String, u64)> {
        if strata::perf_level() == strata::PerfLevel::Disable {
            return Vec::new();
        }
        let perf = strata::perf_context();
        strata::set_perf_level(strata::PerfLevel::Disable);
        perf.iter().map(|(n, v)| (n.to_string(), v)).collect()
    }

    fn level_stats_text(&self) -> String {
        self.db()
            .property("strata.compaction-stats")
            .unwrap_or_default()
    }

    fn shape(&self) -> String {
        let blobs =
            |s: &strata::DbStats| blob_shape(s.blob_files, s.blob_file_bytes, s.blob_garbage_bytes);
        match self.families.len() {
            0 | 1 => format!("{}{}", self.db().tree_shape(), blobs(&self.db().stats())),
            _ => self
                .families
                .iter()
                .filter_map(|cf| {
                    Some(format!(
                        "{}: {}{}",
                        cf.name(),
                        self.db().tree_shape_cf(cf).ok()?,
                        blobs(&self.db().stats_cf(cf).ok()?)
                    ))
                })
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    fn recovery(&self) -> Option<String> {
        let r = self.db().recovery_report();
        (r.wal_files > 0).then(|| {
            format!(
                "{} entries from {} WAL files ({} read)",
                r.entries,
                r.wal_files,
                mb(r.bytes_read)
            )
        })
    }

    fn ingest_sorted(
        &self,
        next: &mut dyn FnMut(&mut Vec<u8>, &mut Vec<u8>) -> bool,
    ) -> EngineResult<(f64, f64)> {
        let file = self.db().path().join("fillseqingest.sst");
        let start = Instant::now();
        let mut writer = SstWriter::create(&file, &self.options)?;
        let (mut key, mut value) = (Vec::new(), Vec::new());
        while next(&mut key, &mut value) {
            writer.put(&key, &value)?;
        }
        writer.finish()?;
        let written = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let mut moved = IngestOptions::default();
        moved.move_files = true;
        self.db().ingest(&[&file], &moved)?;
        Ok((written, start.elapsed().as_secs_f64()))
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        match self.handle {
            Handle::Plain(db) => Ok(db.close()?),
            // A TransactionDb cannot hand its Db back to be closed: make the log durable
            // (reporting a failure), then dropping it closes the database.
            Handle::Locking(tdb) => Ok(tdb.db().sync_wal()?),
        }
    }

    fn transaction(&self, mode: TxnMode, op: TxnOp<'_>, sync: bool) -> EngineResult<Attempt> {
        let options = self.write_options(sync);
        let result = match (mode, &self.handle) {
            (TxnMode::Pessimistic, Handle::Locking(tdb)) => {
                self.run_txn(tdb.transaction(&options, &self.txn_options), op)
            }
            (TxnMode::Pessimistic, Handle::Plain(_)) => {
                return Err(
                    "pessimistic transactions need the database opened for them \
                            (--transaction_db)"
                        .into(),
                )
            }
            (TxnMode::Optimistic, _) => {
                self.run_txn(self.db().optimistic_transaction(&options), op)
            }
        };
        match result {
            Ok(read) => Ok(Ok(read)),
            Err(e) => match e.txn_failure() {
                Some(failure) => Ok(Err(retry_of(failure))),
                None => Err(e.into()),
            },
        }
    }

    fn get_value(&self, cf: usize, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        let family = self.family_at(cf)?;
        Ok(self.db().get_cf_opt(family, key, &self.point_options)?)
    }

    fn write_ops(&self, ops: &[WriteOp<'_>], sync: bool) -> EngineResult<()> {
        // Room for every update at once (its key, its value, and at most 16 bytes of tags
        // and lengths): a batch of a thousand rows grown by doubling copies itself ten times.
        let bytes = ops
            .iter()
            .map(|op| match *op {
                WriteOp::Put { key, value, .. } => key.len() + value.len() + 16,
                WriteOp::Delete { key, .. } => key.len() + 16,
                WriteOp::Merge { key, operand, .. } => key.len() + operand.len() + 16,
            })
            .sum();
        let mut batch = WriteBatch::with_capacity(bytes);
        for op in ops {
            let family = self.family_at(op.cf())?;
            match *op {
                WriteOp::Put { key, value, .. } => batch.put_cf(family, key, value),
                WriteOp::Delete { key, .. } => batch.delete_cf(family, key),
                WriteOp::Merge { key, operand, .. } => batch.merge_cf(family, key, operand),
            };
        }
        Ok(self.db().write(batch, &self.write_options(sync))?)
    }

    fn scan_range(
        &self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: Visitor<'_>,
    ) -> EngineResult<()> {
        let mut it = self
            .db()
            .iter_cf(self.family_at(cf)?, &self.bounds(lower, upper))?;
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        while it.valid() && visit(it.key(), it.value()) {
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        Ok(it.status()?)
    }

    fn run_transaction(
        &self,
        mode: TxnMode,
        sync: bool,
        body: TxnBody<'_>,
    ) -> EngineResult<Result<(), Retry>> {
        let options = self.write_options(sync);
        match (mode, &self.handle) {
            (TxnMode::Pessimistic, Handle::Locking(tdb)) => {
                self.run_body(tdb.transaction(&options, &self.txn_options), body)
            }
            (TxnMode::Pessimistic, Handle::Plain(_)) => Err(
                "pessimistic transactions need the database opened for them (--transaction_db)"
                    .into(),
            ),
            (TxnMode::Optimistic, _) => {
                self.run_body(self.db().optimistic_transaction(&options), body)
            }
        }
    }
}

/// A workload's transaction on Strata: the [`TxnOps`] of a transaction of either kind.
struct BodyTxn<'e, T> {
    engine: &'e StrataEngine,
    txn: T,
}

/// A failed call inside a transaction: a retry when the library says it is one.
fn txn_error(e: strata::Error) -> TxnError {
    match e.txn_failure() {
        Some(failure) => TxnError::Retry(retry_of(failure)),
        None => TxnError::Failed(e.into()),
    }
}

impl<T: TransactionBase> TxnOps for BodyTxn<'_, T> {
    fn get(
        &mut self,
        cf: usize,
        key: &[u8],
        for_update: bool,
    ) -> Result<Option<Vec<u8>>, TxnError> {
        let family = self.engine.family_at(cf)?;
        let value = if for_update {
            self.txn.get_for_update_cf(family, key)
        } else {
            self.txn.get_cf(family, key)
        };
        value.map_err(txn_error)
    }

    fn write(&mut self, op: WriteOp<'_>) -> Result<(), TxnError> {
        let family = self.engine.family_at(op.cf())?;
        match op {
            WriteOp::Put { key, value, .. } => self.txn.put_cf(family, key, value),
            WriteOp::Delete { key, .. } => self.txn.delete_cf(family, key),
            WriteOp::Merge { key, operand, .. } => self.txn.merge_cf(family, key, operand),
        }
        .map_err(txn_error)
    }

    fn scan(
        &mut self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: Visitor<'_>,
    ) -> Result<(), TxnError> {
        let family = self.engine.family_at(cf)?;
        let mut it = self
            .txn
            .iter_cf(family, &self.engine.bounds(lower, upper))
            .map_err(txn_error)?;
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        while it.valid() && visit(it.key(), it.value()) {
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status().map_err(txn_error)
    }
}

/// Which retry a failed transaction counts as.
fn retry_of(failure: TxnFailure) -> Retry {
    match failure {
        TxnFailure::Conflict => Retry::Conflict,
        TxnFailure::Deadlock => Retry::Deadlock,
        TxnFailure::LockTimeout | TxnFailure::Expired => Retry::Timeout,
        // A cause the library may add later: counted with the timeouts.
        _ => Retry::Timeout,
    }
}
