//! RocksDB under the bench loop (feature `rocksdb`: the `rocksdb` crate, a release build of
//! RocksDB's C++ compiled from source).
//!
//! Every flag maps to RocksDB's option of the same name, as db_bench sets it. Two settings
//! are made beside the flags: dynamic level sizing (RocksDB's default since 8.4, and Strata's
//! rule) and statistics at their cheapest level (tickers only, no timers or histograms), which
//! give the counters of the report. Only compact0 and compact1 are missing: the crate has no
//! CompactFiles. `--merge_operator` installs Strata's operator of that name through the C
//! API's merge callbacks. `--prefix_size` sets RocksDB's fixed prefix extractor (as db_bench;
//! whole-key filtering stays on), and seekrandom's iterators take `--prefix_same_as_start` and
//! `--total_order_seek`, and every iterator `--readahead_size`. The blob flags set the integrated BlobDB's options of the same
//! meaning (`enable_blob_files`, `min_blob_size`, `blob_file_size`, `enable_blob_gc`,
//! `blob_gc_age_cutoff`, `blob_gc_force_threshold`); blob files are compressed as
//! `--compression_type` says, as Strata compresses them (db_bench has a
//! `--blob_compression_type` of its own, none by default).
//!
//! Transactions: with `--transaction_db` (or a step made of transactions, such as
//! randomtransaction) the database is opened as a `TransactionDB`, with
//! `--optimistic_transaction_db` as an `OptimisticTransactionDB`; the plain operations go to
//! the same handle (the calls have the same names on the three kinds, see [`on_db`]). The
//! crate's TransactionDB has no range deletion, CompactRange, WaitForCompact or live-file
//! list, and (single-threaded, as the other handles here) no property reads: range
//! tombstones and the compaction steps are refused there, and the report goes without the
//! tree shape, rocksdb.stats and the compaction gauges (the statistics tickers remain). RocksDB has no updatable cursor:
//! updaterandomcursor seeks a transaction's iterator, then does get_for_update and put of
//! the key it landed on.
//!
//! The workloads' operations name a family by its index among those opened; their scans are
//! raw iterators bounded by the range (`iterate_lower_bound`, `iterate_upper_bound`), and
//! their transactions are the handle's own, as above.
//!
//! Here: the handle and the `Engine` calls; `flags.rs` turns the flags into RocksDB's
//! options; `txn.rs` runs transactions and tells retries from failures.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rocksdb::perf::{PerfContext, PerfStatsLevel};
use rocksdb::statistics::Ticker;
use rocksdb::{
    BottommostLevelCompaction, ColumnFamily, ColumnFamilyDescriptor, CompactOptions,
    OptimisticTransactionDB, OptimisticTransactionOptions, Options, ReadOptions, TransactionDB,
    TransactionDBOptions, TransactionOptions, WaitForCompactOptions, WriteBatchWithTransaction,
    WriteOptions, DB,
};

use super::{
    blob_shape, family_of, no_family, Attempt, Counters, Engine, EngineResult, Families, Retry,
    TxnBody, TxnMode, TxnOp, Visitor, WriteOp,
};
use crate::bench::BenchArgs;

mod flags;
mod txn;

use flags::{options, version_of};

/// The database, of the kind the run's transactions need.
enum Handle {
    Plain(DB),
    Optimistic(OptimisticTransactionDB),
    Locking(TransactionDB),
}

/// Evaluates `$body` with `$d` bound to the database of `$handle`, whichever kind it is: the
/// calls used here have the same names and meaning on the three.
macro_rules! on_db {
    ($handle:expr, $d:ident => $body:expr) => {
        match $handle {
            Handle::Plain($d) => $body,
            Handle::Optimistic($d) => $body,
            Handle::Locking($d) => $body,
        }
    };
}

/// As [`on_db`] for the calls the crate's TransactionDB lacks: `$locking` then.
macro_rules! on_base_db {
    ($handle:expr, $d:ident => $body:expr, $locking:expr) => {
        match $handle {
            Handle::Plain($d) => $body,
            Handle::Optimistic($d) => $body,
            Handle::Locking(_) => $locking,
        }
    };
}

pub struct RocksDbEngine {
    db: Handle,
    /// Lock wait of pessimistic transactions (--transaction_lock_timeout).
    lock_timeout_ms: i64,
    /// The families opened, the default first.
    families: Vec<String>,
    /// How many of them (from the first) the db_bench steps spread their keys over: all
    /// with --num_column_families (db_bench's names), else the default alone (used through
    /// the plain calls).
    spread: usize,
    /// The options the database was opened with: they hold its statistics.
    options: Mutex<Options>,
    disable_wal: bool,
    /// seekrandom's `prefix_same_as_start` and `total_order_seek`.
    seek_flags: (bool, bool),
    /// Every iterator's `readahead_size` (--readahead_size).
    readahead_size: usize,
    /// How reads and scans treat data blocks (--verify_checksum, --fill_cache).
    blocks: BlockFlags,
    path: PathBuf,
    version: String,
}

thread_local! {
    /// Each thread's write options (sync, disable_wal, options), as db_bench keeps one per
    /// thread: creating them per write would cost an allocation in the C API.
    static WRITE_OPTIONS: RefCell<Option<(bool, bool, WriteOptions)>> = const { RefCell::new(None) };
    /// Each thread's point read options, as db_bench keeps them: how they read blocks
    /// (--verify_checksum, --fill_cache), and the options.
    static READ_OPTIONS: RefCell<Option<(BlockFlags, ReadOptions)>> = const { RefCell::new(None) };
}

/// How reads treat the data blocks they read: whether they verify checksums
/// (--verify_checksum) and fill the block cache (--fill_cache).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct BlockFlags {
    pub verify_checksums: bool,
    pub fill_cache: bool,
}

impl BlockFlags {
    /// What transactions' reads use: the defaults.
    pub const DEFAULT: BlockFlags = BlockFlags {
        verify_checksums: true,
        fill_cache: true,
    };
}

fn with_read_options<T>(blocks: BlockFlags, f: impl FnOnce(&ReadOptions) -> T) -> T {
    READ_OPTIONS.with(|cell| {
        let mut cached = cell.borrow_mut();
        if !matches!(&*cached, Some((b, _)) if *b == blocks) {
            let mut o = ReadOptions::default();
            o.set_verify_checksums(blocks.verify_checksums);
            o.fill_cache(blocks.fill_cache);
            *cached = Some((blocks, o));
        }
        let (_, options) = cached.as_ref().expect("just set");
        f(options)
    })
}

fn with_write_options<T>(sync: bool, disable_wal: bool, f: impl FnOnce(&WriteOptions) -> T) -> T {
    WRITE_OPTIONS.with(|cell| {
        let mut cached = cell.borrow_mut();
        if !matches!(&*cached, Some((s, d, _)) if *s == sync && *d == disable_wal) {
            let mut o = WriteOptions::default();
            o.set_sync(sync);
            o.disable_wal(disable_wal);
            *cached = Some((sync, disable_wal, o));
        }
        let (_, _, options) = cached.as_ref().expect("just set");
        f(options)
    })
}

impl RocksDbEngine {
    pub fn open(
        args: &BenchArgs,
        path: &Path,
        names: &[&str],
        use_: Families,
    ) -> EngineResult<Self> {
        if args.use_existing_db && !path.join("CURRENT").exists() {
            return Err(format!(
                "--use_existing_db: no database at {} (no CURRENT file)",
                path.display()
            )
            .into());
        }
        let options = options(args)?;
        let families: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let descriptors = families
            .iter()
            .map(|n| ColumnFamilyDescriptor::new(n, options.clone()));
        let opened = match args.open_txn_mode() {
            None => DB::open_cf_descriptors(&options, path, descriptors).map(Handle::Plain),
            Some(TxnMode::Optimistic) => {
                OptimisticTransactionDB::open_cf_descriptors(&options, path, descriptors)
                    .map(Handle::Optimistic)
            }
            Some(TxnMode::Pessimistic) => TransactionDB::open_cf_descriptors(
                &options,
                &TransactionDBOptions::default(),
                path,
                descriptors,
            )
            .map(Handle::Locking),
        };
        let db = opened.map_err(|e| format!("opening {} with RocksDB: {e}", path.display()))?;
        if let Some(a) = args.options.uncache_aggressiveness {
            // A mutable column family option the crate sets only through SetOptions.
            let value = a.to_string();
            for name in &families {
                on_base_db!(&db, d => {
                    let cf = d.cf_handle(name).ok_or_else(|| format!("no column family {name}"))?;
                    d.set_options_cf(cf, &[("uncache_aggressiveness", &value)])
                        .map_err(|e| format!("--uncache_aggressiveness with RocksDB: {e}"))?;
                }, return Err("--uncache_aggressiveness: the rocksdb crate's TransactionDB cannot \
                    set it (no SetOptions)".into()));
            }
        }
        let version = format!(
            "rocksdb {}",
            version_of(path).unwrap_or_else(|| "(version unknown)".into())
        );
        Ok(RocksDbEngine {
            db,
            lock_timeout_ms: i64::try_from(args.transaction_lock_timeout).unwrap_or(i64::MAX),
            spread: match use_ {
                Families::SpreadKeys => families.len(),
                Families::DefaultOnly => 1,
            },
            families,
            options: Mutex::new(options),
            disable_wal: args.disable_wal,
            seek_flags: (args.prefix_same_as_start(), args.total_order_seek),
            readahead_size: args.readahead_size,
            blocks: BlockFlags {
                verify_checksums: args.verify_checksum,
                fill_cache: args.fill_cache,
            },
            path: path.to_path_buf(),
            version,
        })
    }

    /// The family of `key`, or `None` for the default one (the plain calls are used then).
    fn family(&self, key: &[u8]) -> Option<&ColumnFamily> {
        match self.spread {
            0 | 1 => None,
            n => match family_of(key, n) {
                0 => None,
                i => self.cf_handle(&self.families[i]),
            },
        }
    }

    fn cf_handle(&self, name: &str) -> Option<&ColumnFamily> {
        on_db!(&self.db, d => d.cf_handle(name))
    }

    /// The family of `key` for a transaction (which always names one).
    fn txn_family(&self, key: &[u8]) -> EngineResult<&ColumnFamily> {
        let name = &self.families[family_of(key, self.spread.max(1))];
        self.cf_handle(name)
            .ok_or_else(|| format!("no column family {name}").into())
    }

    /// Family number `cf` of the workloads' operations.
    fn family_at(&self, cf: usize) -> EngineResult<&ColumnFamily> {
        let name = self
            .families
            .get(cf)
            .ok_or_else(|| no_family(cf, self.families.len()))?;
        self.cf_handle(name)
            .ok_or_else(|| format!("no column family {name}").into())
    }

    fn property(&self, name: &str) -> u64 {
        on_base_db!(&self.db, d => d.property_int_value(name).ok().flatten().unwrap_or(0), 0)
    }

    /// The read options of every iterator but seekrandom's.
    fn scan_options(&self) -> ReadOptions {
        let mut o = ReadOptions::default();
        if self.readahead_size > 0 {
            o.set_readahead_size(self.readahead_size);
        }
        o.set_verify_checksums(self.blocks.verify_checksums);
        o.fill_cache(self.blocks.fill_cache);
        o
    }

    /// Read options of a scan of `[lower, upper)`.
    fn bounds(&self, lower: &[u8], upper: Option<&[u8]>) -> ReadOptions {
        let mut o = self.scan_options();
        o.set_iterate_lower_bound(lower);
        if let Some(upper) = upper {
            o.set_iterate_upper_bound(upper);
        }
        o
    }

    /// seekrandom's read options.
    fn seek_options(&self) -> ReadOptions {
        let (prefix_same_as_start, total_order_seek) = self.seek_flags;
        let mut o = self.scan_options();
        o.set_prefix_same_as_start(prefix_same_as_start);
        o.set_total_order_seek(total_order_seek);
        o
    }
}

/// Visits the entries of a bounded raw iterator, ascending or descending, while `visit` says
/// so.
fn visit_range<D: rocksdb::DBAccess>(
    mut it: rocksdb::DBRawIteratorWithThreadMode<'_, D>,
    reverse: bool,
    visit: Visitor<'_>,
) -> Result<(), rocksdb::Error> {
    if reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    while let (Some(k), Some(v)) = (it.key(), it.value()) {
        if !visit(k, v) {
            break;
        }
        if reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status()
}

impl Engine for RocksDbEngine {
    fn version(&self) -> String {
        self.version.clone()
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> EngineResult<()> {
        with_write_options(sync, self.disable_wal, |o| {
            on_db!(&self.db, d => match self.family(key) {
                None => d.put_opt(key, value, o),
                Some(cf) => d.put_cf_opt(cf, key, value, o),
            })
        })?;
        Ok(())
    }

    fn put_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) -> EngineResult<()> {
        with_write_options(sync, self.disable_wal, |o| {
            on_db!(&self.db, d => {
                // The batch type each kind writes (with or without transaction support).
                let mut batch = WriteBatchWithTransaction::default();
                for (key, value) in entries {
                    match self.family(key) {
                        None => batch.put(key, value),
                        Some(cf) => batch.put_cf(cf, key, value),
                    }
                }
                d.write_opt(batch, o)
            })
        })?;
        Ok(())
    }

    fn merge(&self, key: &[u8], operand: &[u8], sync: bool) -> EngineResult<()> {
        with_write_options(sync, self.disable_wal, |o| {
            on_db!(&self.db, d => match self.family(key) {
                None => d.merge_opt(key, operand, o),
                Some(cf) => d.merge_cf_opt(cf, key, operand, o),
            })
        })?;
        Ok(())
    }

    fn delete_range(&self, begin: &[u8], end: &[u8], sync: bool) -> EngineResult<()> {
        let cf = self.txn_family(begin)?;
        with_write_options(sync, self.disable_wal, |o| {
            on_base_db!(&self.db, d => Ok(d.delete_range_cf_opt(cf, begin, end, o)?), Err(
                "range tombstones (--writes_per_range_tombstone) are not available with \
                 --engine=rocksdb and --transaction_db: the rocksdb crate's TransactionDB has \
                 no DeleteRange"
                    .into()
            ))
        })
    }

    fn delete(&self, key: &[u8], sync: bool) -> EngineResult<()> {
        with_write_options(sync, self.disable_wal, |o| {
            on_db!(&self.db, d => match self.family(key) {
                None => d.delete_opt(key, o),
                Some(cf) => d.delete_cf_opt(cf, key, o),
            })
        })?;
        Ok(())
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        let len = with_read_options(self.blocks, |o| {
            on_db!(&self.db, d => match self.family(key) {
                None => d.get_pinned_opt(key, o),
                Some(cf) => d.get_pinned_cf_opt(cf, key, o),
            }
            .map(|v| v.map(|v| v.len())))
        })?;
        Ok(len)
    }

    fn scan(&self, reverse: bool, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> EngineResult<()> {
        // Family after family (in reverse order for a reverse scan), as one sequence.
        let mut order: Vec<Option<&ColumnFamily>> = std::iter::once(None)
            .chain(
                self.families[..self.spread.max(1)]
                    .iter()
                    .skip(1)
                    .map(|n| self.cf_handle(n)),
            )
            .collect();
        if reverse {
            order.reverse();
        }
        for family in order {
            let stopped = on_db!(&self.db, d => {
                let mut it = match family {
                    None => d.raw_iterator_opt(self.scan_options()),
                    Some(cf) => d.raw_iterator_cf_opt(cf, self.scan_options()),
                };
                if reverse {
                    it.seek_to_last();
                } else {
                    it.seek_to_first();
                }
                let mut stopped = false;
                while let (Some(k), Some(v)) = (it.key(), it.value()) {
                    if !visit(k, v) {
                        stopped = true;
                        break;
                    }
                    if reverse {
                        it.prev();
                    } else {
                        it.next();
                    }
                }
                it.status().map(|()| stopped)
            })?;
            if stopped {
                break;
            }
        }
        Ok(())
    }

    fn seek(&self, key: &[u8], nexts: u64) -> EngineResult<(bool, u64)> {
        on_db!(&self.db, d => {
            let mut it = match self.family(key) {
                None => d.raw_iterator_opt(self.seek_options()),
                Some(cf) => d.raw_iterator_cf_opt(cf, self.seek_options()),
            };
            it.seek(key);
            let found = it.key() == Some(key);
            let mut bytes = 0;
            for _ in 0..nexts {
                let (Some(k), Some(v)) = (it.key(), it.value()) else {
                    break;
                };
                bytes += (k.len() + v.len()) as u64;
                it.next();
            }
            it.status()?;
            Ok((found, bytes))
        })
    }

    fn flush(&self) -> EngineResult<()> {
        on_db!(&self.db, d => {
            d.flush()?;
            for name in self.families.iter().skip(1) {
                if let Some(cf) = d.cf_handle(name) {
                    d.flush_cf(cf)?;
                }
            }
        });
        Ok(())
    }

    fn compact(&self, level: Option<usize>) -> EngineResult<()> {
        if let Some(level) = level {
            return Err(format!(
                "compact{level} is not available with --engine=rocksdb (the rocksdb crate has \
                 no CompactFiles); use compactall"
            )
            .into());
        }
        // As db_bench's compactall: everything, the last level included.
        let mut o = CompactOptions::default();
        o.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
        on_base_db!(&self.db, d => {
            d.compact_range_opt(None::<&[u8]>, None::<&[u8]>, &o);
            for name in self.families.iter().skip(1) {
                if let Some(cf) = d.cf_handle(name) {
                    d.compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &o);
                }
            }
            Ok(())
        }, Err(NO_COMPACT_RANGE.into()))
    }

    fn wait_for_compactions(&self) -> EngineResult<()> {
        on_base_db!(&self.db, d => Ok(d.wait_for_compact(&WaitForCompactOptions::default())?),
            Err(NO_COMPACT_RANGE.into()))
    }

    fn counters(&self) -> Counters {
        let Ok(o) = self.options.lock() else {
            return Counters::default();
        };
        let t = |ticker| o.get_ticker_count(ticker);
        let leaders = t(Ticker::WriteDoneBySelf);
        Counters {
            // None: write-amp counts the bytes the process passed to write calls (wchar), as
            // for LMDB. RocksDB's tickers do not add up to what it writes:
            // `rocksdb.wal.bytes` counts the write batches without the log format around them
            // (a 7-byte header per record, which Strata's WAL of the same format counts), and
            // on a 2M-key fill and overwrite with 8 MiB memtables and snappy, wal + flush +
            // compaction write bytes came to 1,677 MB where the process wrote 1,627 MB (and
            // the flush ticker read 193 MB in one run, 270 MB in the next three). Strata's
            // own count equals its wchar to the megabyte on the same run.
            bytes_written: None,
            write_groups: leaders,
            batches: leaders + t(Ticker::WriteDoneByOther),
            wal_syncs: t(Ticker::WalFileSynced),
            bloom_checks: t(Ticker::BloomFilterUseful) + t(Ticker::BloomFilterFullPositive),
            bloom_negatives: t(Ticker::BloomFilterUseful),
            cache_hits: t(Ticker::BlockCacheHit),
            cache_misses: t(Ticker::BlockCacheMiss),
            table_bytes_read: None,
            blob_bytes_read: Some(t(Ticker::BlobDbBlobFileBytesRead)),
            stalls: vec![("stall time", None, t(Ticker::StallMicros))],
            compactions: None,
            compaction_bytes_read: t(Ticker::CompactReadBytes),
            compaction_bytes_written: t(Ticker::CompactWriteBytes),
            compactions_running: Some(self.property("rocksdb.num-running-compactions")),
            pending_compaction_bytes: self.property("rocksdb.estimate-pending-compaction-bytes"),
            compactions_skipped_for_space: 0,
        }
    }

    fn reset_stats(&self) {
        // The tickers are cumulative and each step reports differences, so only the text of
        // the stats step starts afresh: RocksDB's own "stats" property has no reset in the C
        // API, so it goes on counting from the open.
    }

    fn start_perf_context(&self, level: u32) {
        let level = match level {
            2 => PerfStatsLevel::EnableCount,
            3 => PerfStatsLevel::EnableTimeExceptForMutex,
            4 => PerfStatsLevel::EnableTimeAndCPUTimeExceptForMutex,
            5 => PerfStatsLevel::EnableTime,
            _ => PerfStatsLevel::Disable,
        };
        rocksdb::perf::set_perf_stats(level);
        PerfContext::default().reset();
    }

    fn take_perf_context(&self) -> Vec<(String, u64)> {
        // RocksDB's report: `name = value, name = value, ...` (the counts not 0).
        let report = PerfContext::default().report(true);
        rocksdb::perf::set_perf_stats(PerfStatsLevel::Disable);
        report
            .split(',')
            .filter_map(|part| {
                let (name, value) = part.split_once('=')?;
                Some((name.trim().to_string(), value.trim().parse().ok()?))
            })
            .collect()
    }

    fn stats_text(&self) -> String {
        let mut text = on_base_db!(&self.db, d => d.property_value("rocksdb.stats"), Ok(None))
            .ok()
            .flatten()
            .unwrap_or_default();
        if let Ok(o) = self.options.lock() {
            if let Some(s) = o.get_statistics() {
                text.push_str(&s);
            }
        }
        text
    }

    fn level_stats_text(&self) -> String {
        on_base_db!(&self.db, d => d.property_value("rocksdb.levelstats"), Ok(None))
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    fn shape(&self) -> String {
        if matches!(self.db, Handle::Locking(_)) {
            return NO_PROPERTIES.into();
        }
        let mib = |b: u64| b as f64 / 1048576.0;
        let mut line = format!(
            "mem {:.1} MiB ({} entries) + {} imm",
            mib(self.property("rocksdb.cur-size-active-mem-table")),
            self.property("rocksdb.num-entries-active-mem-table"),
            self.property("rocksdb.num-immutable-mem-table"),
        );
        let files = on_base_db!(&self.db, d => d.live_files().unwrap_or_default(), Vec::new());
        let deepest = files.iter().map(|f| f.level).max().unwrap_or(-1);
        for level in 0..=deepest {
            let (n, bytes) = files
                .iter()
                .filter(|f| f.level == level)
                .fold((0, 0u64), |(n, b), f| (n + 1, b + f.size as u64));
            if n > 0 {
                line.push_str(&format!(" | L{level} {n} files {:.1} MiB", mib(bytes)));
            }
        }
        line.push_str(&blob_shape(
            self.property("rocksdb.num-blob-files"),
            self.property("rocksdb.live-blob-file-size"),
            self.property("rocksdb.live-blob-file-garbage-size"),
        ));
        line
    }

    fn recovery(&self) -> Option<String> {
        None
    }

    fn ingest_sorted(
        &self,
        next: &mut dyn FnMut(&mut Vec<u8>, &mut Vec<u8>) -> bool,
    ) -> EngineResult<(f64, f64)> {
        let file = self.path.join("fillseqingest.sst");
        let start = std::time::Instant::now();
        {
            let options = self
                .options
                .lock()
                .map_err(|_| "rocksdb options lock poisoned")?;
            let mut writer = rocksdb::SstFileWriter::create(&options);
            writer.open(&file)?;
            let (mut key, mut value) = (Vec::new(), Vec::new());
            while next(&mut key, &mut value) {
                writer.put(&key, &value)?;
            }
            writer.finish()?;
        }
        let written = start.elapsed().as_secs_f64();
        let start = std::time::Instant::now();
        let mut moved = rocksdb::IngestExternalFileOptions::default();
        moved.set_move_files(true);
        on_base_db!(
            &self.db,
            d => d.ingest_external_file_opts(&moved, vec![&file])?,
            return Err(
                "fillseqingest: the rocksdb crate's TransactionDB has no IngestExternalFile \
                 (use --optimistic_transaction_db or no transaction flag)"
                    .into()
            )
        );
        Ok((written, start.elapsed().as_secs_f64()))
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        drop(self.db);
        Ok(())
    }

    fn transaction(&self, mode: TxnMode, op: TxnOp<'_>, sync: bool) -> EngineResult<Attempt> {
        with_write_options(sync, self.disable_wal, |o| match (&self.db, mode) {
            (Handle::Locking(d), TxnMode::Pessimistic) => {
                let mut t = TransactionOptions::default();
                t.set_lock_timeout(self.lock_timeout_ms);
                t.set_deadlock_detect(true);
                self.run_txn(d.transaction_opt(o, &t), op)
            }
            (Handle::Optimistic(d), TxnMode::Optimistic) => self.run_txn(
                d.transaction_opt(o, &OptimisticTransactionOptions::default()),
                op,
            ),
            _ => Err(format!(
                "{} transactions need the database opened for them (--transaction_db or \
                 --optimistic_transaction_db)",
                mode.name()
            )
            .into()),
        })
    }

    fn cursor_update_emulated(&self) -> Option<&'static str> {
        Some("RocksDB has no updatable cursor: a transaction's iterator seeks, then get_for_update and put of the key found")
    }

    fn get_value(&self, cf: usize, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        let family = self.family_at(cf)?;
        let value = with_read_options(
            self.blocks,
            |o| on_db!(&self.db, d => d.get_pinned_cf_opt(family, key, o).map(|v| v.map(|v| v.to_vec()))),
        )?;
        Ok(value)
    }

    fn write_ops(&self, ops: &[WriteOp<'_>], sync: bool) -> EngineResult<()> {
        let families = ops
            .iter()
            .map(|op| self.family_at(op.cf()))
            .collect::<EngineResult<Vec<_>>>()?;
        with_write_options(sync, self.disable_wal, |o| {
            on_db!(&self.db, d => {
                // The batch type each kind writes (with or without transaction support).
                let mut batch = WriteBatchWithTransaction::default();
                for (op, family) in ops.iter().zip(&families) {
                    match *op {
                        WriteOp::Put { key, value, .. } => batch.put_cf(*family, key, value),
                        WriteOp::Delete { key, .. } => batch.delete_cf(*family, key),
                        WriteOp::Merge { key, operand, .. } => {
                            batch.merge_cf(*family, key, operand)
                        }
                    }
                }
                d.write_opt(batch, o)
            })
        })?;
        Ok(())
    }

    fn scan_range(
        &self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: Visitor<'_>,
    ) -> EngineResult<()> {
        let family = self.family_at(cf)?;
        on_db!(&self.db, d => {
            visit_range(d.raw_iterator_cf_opt(family, self.bounds(lower, upper)), reverse, visit)
        })?;
        Ok(())
    }

    fn run_transaction(
        &self,
        mode: TxnMode,
        sync: bool,
        body: TxnBody<'_>,
    ) -> EngineResult<Result<(), Retry>> {
        with_write_options(sync, self.disable_wal, |o| match (&self.db, mode) {
            (Handle::Locking(d), TxnMode::Pessimistic) => {
                let mut t = TransactionOptions::default();
                t.set_lock_timeout(self.lock_timeout_ms);
                t.set_deadlock_detect(true);
                self.run_body(d.transaction_opt(o, &t), body)
            }
            (Handle::Optimistic(d), TxnMode::Optimistic) => self.run_body(
                d.transaction_opt(o, &OptimisticTransactionOptions::default()),
                body,
            ),
            _ => Err(format!(
                "{} transactions need the database opened for them (--transaction_db or \
                 --optimistic_transaction_db)",
                mode.name()
            )
            .into()),
        })
    }
}

/// What the report lacks on a TransactionDB.
const NO_PROPERTIES: &str = "shape unknown: the rocksdb crate's single-threaded TransactionDB \
     reads no properties and lists no files";

/// Why the compaction steps are refused on a TransactionDB.
const NO_COMPACT_RANGE: &str = "compactall and waitforcompaction are not available with \
     --engine=rocksdb and --transaction_db: the rocksdb crate's TransactionDB has no \
     CompactRange or WaitForCompact (use --optimistic_transaction_db, whose database has them)";
