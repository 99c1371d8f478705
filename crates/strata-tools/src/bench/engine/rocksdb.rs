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

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rocksdb::merge_operator::MergeOperands;
use rocksdb::perf::{PerfContext, PerfStatsLevel};
use rocksdb::statistics::{StatsLevel, Ticker};
use rocksdb::FifoCompactOptions;
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, BottommostLevelCompaction, Cache, ChecksumType,
    ColumnFamily, ColumnFamilyDescriptor, CompactOptions, DBCompactionStyle, DBCompressionType,
    ErrorKind, OptimisticTransactionDB, OptimisticTransactionOptions, Options, ReadOptions,
    SliceTransform, Transaction, TransactionDB, TransactionDBOptions, TransactionOptions,
    UniversalCompactOptions, WaitForCompactOptions, WriteBatchWithTransaction, WriteOptions, DB,
};

use super::{
    blob_shape, counter_of, family_of, no_family, Attempt, Counters, Engine, EngineResult,
    Families, Retry, TxnBody, TxnError, TxnMode, TxnOp, TxnOps, TxnRead, Visitor, WriteOp,
};
use crate::bench::BenchArgs;

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
    path: PathBuf,
    version: String,
}

thread_local! {
    /// Each thread's write options (sync, disable_wal, options), as db_bench keeps one per
    /// thread: creating them per write would cost an allocation in the C API.
    static WRITE_OPTIONS: RefCell<Option<(bool, bool, WriteOptions)>> = const { RefCell::new(None) };
    static READ_OPTIONS: ReadOptions = ReadOptions::default();
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

fn int(v: usize, flag: &str) -> EngineResult<i32> {
    i32::try_from(v).map_err(|_| format!("{flag}={v} is too large for RocksDB").into())
}

/// RocksDB's options for the bench flags.
fn options(args: &BenchArgs) -> EngineResult<Options> {
    let mut o = Options::default();
    o.create_if_missing(!args.use_existing_db);
    if args.prefix_size > 0 {
        o.set_prefix_extractor(SliceTransform::create_fixed_prefix(args.prefix_size));
    }
    // `--merge_operator`: Strata's operator, called through the C API's callbacks (db_bench
    // uses RocksDB's own C++ operators of the same names and meaning).
    if let Some(op) = crate::engine_flags::merge_operator(&args.options.merge_operator)? {
        let name = op.name().to_string();
        let full = op.clone();
        let partial = op;
        o.set_merge_operator(
            name.as_str(),
            move |key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands| {
                let operands: Vec<&[u8]> = operands.iter().collect();
                full.full_merge(key, existing, &operands).ok()
            },
            move |key: &[u8], _: Option<&[u8]>, operands: &MergeOperands| {
                let operands: Vec<&[u8]> = operands.iter().collect();
                partial.partial_merge(key, &operands)
            },
        );
    }
    o.set_write_buffer_size(args.options.write_buffer_size);
    o.set_max_write_buffer_number(int(
        args.options.max_write_buffer_number,
        "--max_write_buffer_number",
    )?);
    o.set_memtable_prefix_bloom_ratio(args.options.memtable_bloom_size_ratio);
    o.set_memtable_whole_key_filtering(args.options.memtable_whole_key_filtering);
    let compression = match args.options.compression_type.as_str() {
        "none" => DBCompressionType::None,
        "snappy" => DBCompressionType::Snappy,
        "lz4" => DBCompressionType::Lz4,
        "zstd" => DBCompressionType::Zstd,
        other => return Err(format!("--compression_type={other} is not supported").into()),
    };
    o.set_compression_type(compression);
    // db_bench's --compression_level and --compression_max_dict_bytes (window bits and
    // strategy at RocksDB's defaults), and --compression_zstd_max_train_bytes.
    o.set_compression_options(
        -14,
        args.options.compression_level,
        0,
        int(
            args.options.compression_max_dict_bytes as usize,
            "--compression_max_dict_bytes",
        )?,
    );
    o.set_zstd_max_train_bytes(int(
        args.options.compression_zstd_max_train_bytes as usize,
        "--compression_zstd_max_train_bytes",
    )?);
    // Strata compresses blob files as its tables: so does RocksDB here (db_bench's own
    // --blob_compression_type defaults to none).
    o.set_blob_compression_type(compression);
    o.set_target_file_size_base(args.options.target_file_size_base);
    o.set_max_bytes_for_level_base(args.options.max_bytes_for_level_base);
    o.set_max_bytes_for_level_multiplier(args.options.max_bytes_for_level_multiplier);
    o.set_level_compaction_dynamic_level_bytes(true);
    o.set_num_levels(int(args.options.num_levels, "--num_levels")?);
    o.set_level_zero_file_num_compaction_trigger(int(
        args.options.level0_file_num_compaction_trigger,
        "--level0_file_num_compaction_trigger",
    )?);
    o.set_level_zero_slowdown_writes_trigger(int(
        args.options.level0_slowdown_writes_trigger,
        "--level0_slowdown_writes_trigger",
    )?);
    o.set_level_zero_stop_writes_trigger(int(
        args.options.level0_stop_writes_trigger,
        "--level0_stop_writes_trigger",
    )?);
    o.set_disable_auto_compactions(args.options.disable_auto_compactions);
    o.set_max_open_files(i32::try_from(args.options.open_files.max(-1)).unwrap_or(i32::MAX));
    o.set_use_direct_reads(args.options.use_direct_reads);
    o.set_use_direct_io_for_flush_and_compaction(
        args.options.use_direct_io_for_flush_and_compaction,
    );
    o.set_compaction_readahead_size(args.options.compaction_readahead_size);
    o.set_allow_mmap_reads(args.options.mmap_read);
    o.create_missing_column_families(true);
    o.set_compaction_style(match args.options.compaction_style {
        0 => DBCompactionStyle::Level,
        1 => DBCompactionStyle::Universal,
        2 => DBCompactionStyle::Fifo,
        other => {
            return Err(format!(
                "--compaction_style={other} is not supported (0 = leveled, 1 = universal, \
                 2 = FIFO)"
            )
            .into())
        }
    });
    // FIFO as db_bench sets it (the crate has no setter for allow_compaction: RocksDB's
    // default, false, stays), and the ages: db_bench's --fifo_compaction_ttl is `ttl`.
    let mut fifo = FifoCompactOptions::default();
    fifo.set_max_table_files_size(
        args.options
            .fifo_compaction_max_table_files_size_mb
            .saturating_mul(1 << 20),
    );
    o.set_fifo_compaction_options(&fifo);
    if args.options.fifo_compaction_ttl > 0 {
        o.set_ttl(args.options.fifo_compaction_ttl);
    }
    if args.options.periodic_compaction_seconds > 0 {
        o.set_periodic_compaction_seconds(args.options.periodic_compaction_seconds);
    }
    let mut universal = UniversalCompactOptions::default();
    universal.set_size_ratio(args.options.universal_size_ratio as i32);
    universal.set_min_merge_width(int(
        args.options.universal_min_merge_width,
        "--universal_min_merge_width",
    )?);
    if args.options.universal_max_merge_width > 0 {
        universal.set_max_merge_width(int(
            args.options.universal_max_merge_width,
            "--universal_max_merge_width",
        )?);
    }
    universal.set_max_size_amplification_percent(
        args.options.universal_max_size_amplification_percent as i32,
    );
    o.set_universal_compaction_options(&universal);
    o.set_max_background_jobs(int(
        args.options.max_background_jobs,
        "--max_background_jobs",
    )?);
    o.set_max_subcompactions(args.options.max_subcompactions as u32);
    if args.options.rate_limiter_bytes_per_sec > 0 {
        // RocksDB's defaults for the refill period (100 ms) and fairness (10).
        let rate = args.options.rate_limiter_bytes_per_sec;
        if rate > i64::MAX as u64 {
            return Err(
                format!("--rate_limiter_bytes_per_sec={rate} is too large for RocksDB").into(),
            );
        }
        o.set_ratelimiter(rate as i64, 100_000, 10);
    }
    o.set_db_write_buffer_size(args.options.db_write_buffer_size);
    o.set_max_total_wal_size(args.options.max_total_wal_size);
    if args.options.max_compaction_bytes > 0 {
        o.set_max_compaction_bytes(args.options.max_compaction_bytes);
    }
    o.set_soft_pending_compaction_bytes_limit(
        args.options.soft_pending_compaction_bytes_limit as usize,
    );
    o.set_hard_pending_compaction_bytes_limit(
        args.options.hard_pending_compaction_bytes_limit as usize,
    );
    o.set_enable_blob_files(args.options.enable_blob_files);
    o.set_min_blob_size(args.options.min_blob_size);
    o.set_blob_file_size(args.options.blob_file_size);
    o.set_enable_blob_gc(args.options.enable_blob_garbage_collection);
    o.set_blob_gc_age_cutoff(args.options.blob_garbage_collection_age_cutoff);
    o.set_blob_gc_force_threshold(args.options.blob_garbage_collection_force_threshold);

    let mut table = BlockBasedOptions::default();
    table.set_block_size(args.options.block_size);
    // db_bench's --checksum_type (1 kCRC32c, 4 kXXH3; the flag parser takes no other).
    table.set_checksum_type(match args.options.checksum_type {
        strata::ChecksumType::Xxh3 => ChecksumType::XXH3,
        _ => ChecksumType::CRC32c,
    });
    table.set_block_restart_interval(args.options.block_restart_interval as i32);
    if args.options.cache_size > 0 {
        table.set_block_cache(&Cache::new_lru_cache(args.options.cache_size as usize));
    } else {
        table.disable_cache();
    }
    table.set_cache_index_and_filter_blocks(args.options.cache_index_and_filter_blocks);
    // db_bench's partition flags: --partition_index_and_filters sets the two-level index
    // and partitioned filters, --partition_index the two-level index alone.
    if args.options.partition_index || args.options.partition_index_and_filters {
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    }
    table.set_partition_filters(args.options.partition_index_and_filters);
    table.set_metadata_block_size(args.options.metadata_block_size);
    table.set_pin_top_level_index_and_filter(args.options.pin_top_level_index_and_filter);
    // db_bench's --data_block_index_type (1: kDataBlockBinaryAndHash) and its ratio.
    if args.options.data_block_index_type == strata::DataBlockIndexType::BinaryAndHash {
        table.set_data_block_index_type(rocksdb::DataBlockIndexType::BinaryAndHash);
        table.set_data_block_hash_ratio(args.options.data_block_hash_table_util_ratio);
    }
    table.set_pin_l0_filter_and_index_blocks_in_cache(
        args.options.pin_l0_filter_and_index_blocks_in_cache,
    );
    if args.options.bloom_bits > 0 {
        table.set_bloom_filter(args.options.bloom_bits as f64, false);
    }
    o.set_block_based_table_factory(&table);

    o.enable_statistics();
    // --statistics prints the histograms, which need the operations timed.
    o.set_statistics_level(match args.statistics {
        true => StatsLevel::ExceptDetailedTimers,
        false => StatsLevel::ExceptHistogramOrTimers,
    });
    Ok(o)
}

/// RocksDB's version, from the OPTIONS file it writes at open (`rocksdb_version=11.8.1`).
fn version_of(path: &Path) -> Option<String> {
    std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .find_map(|text| {
            text.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("rocksdb_version=")
                    .map(str::to_string)
            })
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

    /// A workload's transaction: `body` in `txn`, then the commit; `Ok(Err(why))` for a
    /// retry (the transaction rolled back).
    fn run_body<D>(
        &self,
        txn: Transaction<'_, D>,
        body: TxnBody<'_>,
    ) -> EngineResult<Result<(), Retry>> {
        let stopped = body(&mut BodyTxn {
            engine: self,
            txn: &txn,
        })
        .err();
        match stopped {
            None => match txn.commit() {
                Ok(()) => Ok(Ok(())),
                Err(e) => match retry_of(&e) {
                    Some(why) => Ok(Err(why)),
                    None => Err(e.into()),
                },
            },
            Some(stopped) => {
                txn.rollback()?;
                match stopped {
                    TxnError::Retry(why) => Ok(Err(why)),
                    TxnError::Failed(e) => Err(e),
                }
            }
        }
    }

    fn property(&self, name: &str) -> u64 {
        on_base_db!(&self.db, d => d.property_int_value(name).ok().flatten().unwrap_or(0), 0)
    }

    /// Runs `op` in `txn` and commits it (rolls it back for a read-only one).
    fn run_txn<D>(&self, txn: Transaction<'_, D>, op: TxnOp<'_>) -> EngineResult<Attempt> {
        let mut read = TxnRead::default();
        let result: EngineResult<()> = (|| {
            match op {
                TxnOp::Put(entries) => {
                    for (key, value) in entries {
                        txn.put_cf(self.txn_family(key)?, key, value)?;
                    }
                }
                TxnOp::Delete(key) => txn.delete_cf(self.txn_family(key)?, key)?,
                TxnOp::Get(key) => {
                    let cf = self.txn_family(key)?;
                    let v = READ_OPTIONS.with(|o| txn.get_pinned_cf_opt(cf, key, o))?;
                    if let Some(v) = v {
                        read.found = true;
                        read.bytes = (key.len() + v.len()) as u64;
                    }
                }
                TxnOp::Seek(key, nexts) => {
                    let mut it =
                        txn.raw_iterator_cf_opt(self.txn_family(key)?, self.seek_options());
                    it.seek(key);
                    read.found = it.key() == Some(key);
                    for _ in 0..nexts {
                        let (Some(k), Some(v)) = (it.key(), it.value()) else {
                            break;
                        };
                        read.bytes += (k.len() + v.len()) as u64;
                        it.next();
                    }
                    it.status()?;
                }
                TxnOp::Update(key, value) => {
                    let cf = self.txn_family(key)?;
                    if let Some(v) =
                        READ_OPTIONS.with(|o| txn.get_pinned_for_update_cf_opt(cf, key, true, o))?
                    {
                        read.found = true;
                        read.bytes = (key.len() + v.len()) as u64;
                    }
                    txn.put_cf(cf, key, value)?;
                }
                TxnOp::AddToEach(keys, increment) => {
                    for key in keys {
                        let cf = self.txn_family(key)?;
                        let old = READ_OPTIONS
                            .with(|o| txn.get_pinned_for_update_cf_opt(cf, key, true, o))?;
                        read.found |= old.is_some();
                        let counter = counter_of(key, old.as_deref())?;
                        txn.put_cf(cf, key, counter.wrapping_add(increment).to_be_bytes())?;
                    }
                }
                TxnOp::CursorUpdate(key, value) => {
                    // No updatable cursor: the iterator finds the entry, then the key is
                    // read for update (locked, or tracked for the commit's check) and put.
                    let cf = self.txn_family(key)?;
                    let mut it = txn.raw_iterator_cf_opt(cf, self.scan_options());
                    it.seek(key);
                    let landed = it.key().map(<[u8]>::to_vec);
                    it.status()?;
                    drop(it);
                    if let Some(k) = landed {
                        let v = READ_OPTIONS
                            .with(|o| txn.get_pinned_for_update_cf_opt(cf, &k, true, o))?;
                        read.found = true;
                        read.bytes = (k.len() + v.map_or(0, |v| v.len())) as u64;
                        txn.put_cf(cf, &k, value)?;
                    }
                }
            }
            Ok(())
        })();
        let result = result.and_then(|()| {
            if op.read_only() {
                txn.rollback()?;
            } else {
                txn.commit()?;
            }
            Ok(())
        });
        match result {
            Ok(()) => Ok(Ok(read)),
            Err(e) => match e.downcast_ref::<rocksdb::Error>().and_then(retry_of) {
                Some(why) => Ok(Err(why)),
                None => Err(e),
            },
        }
    }

    /// The read options of every iterator but seekrandom's.
    fn scan_options(&self) -> ReadOptions {
        let mut o = ReadOptions::default();
        if self.readahead_size > 0 {
            o.set_readahead_size(self.readahead_size);
        }
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

/// A failed call inside a transaction: a retry when RocksDB's error is one.
fn txn_error(e: rocksdb::Error) -> TxnError {
    match retry_of(&e) {
        Some(why) => TxnError::Retry(why),
        None => TxnError::Failed(e.into()),
    }
}

/// A workload's transaction on RocksDB: the [`TxnOps`] of a transaction of either kind.
struct BodyTxn<'e, 't, 'db, D> {
    engine: &'e RocksDbEngine,
    txn: &'t Transaction<'db, D>,
}

impl<D> TxnOps for BodyTxn<'_, '_, '_, D> {
    fn get(
        &mut self,
        cf: usize,
        key: &[u8],
        for_update: bool,
    ) -> Result<Option<Vec<u8>>, TxnError> {
        let family = self.engine.family_at(cf)?;
        let value = READ_OPTIONS.with(|o| {
            if for_update {
                self.txn.get_pinned_for_update_cf_opt(family, key, true, o)
            } else {
                self.txn.get_pinned_cf_opt(family, key, o)
            }
            .map(|v| v.map(|v| v.to_vec()))
        });
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
        let it = self
            .txn
            .raw_iterator_cf_opt(family, self.engine.bounds(lower, upper));
        visit_range(it, reverse, visit).map_err(txn_error)
    }
}

/// Which retry a failed transaction call is: a lock wait that timed out, a deadlock
/// (RocksDB's `Busy` naming it), an optimistic conflict (`Busy`, or `TryAgain` when the
/// memtables no longer hold the history the check needs); `None` for a real failure.
fn retry_of(e: &rocksdb::Error) -> Option<Retry> {
    match e.kind() {
        ErrorKind::TimedOut => Some(Retry::Timeout),
        ErrorKind::Busy if e.as_ref().contains("Deadlock") => Some(Retry::Deadlock),
        ErrorKind::Busy | ErrorKind::TryAgain => Some(Retry::Conflict),
        _ => None,
    }
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
        let len = READ_OPTIONS.with(|o| {
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
        let value = READ_OPTIONS.with(|o| {
            on_db!(&self.db, d => d.get_pinned_cf_opt(family, key, o).map(|v| v.map(|v| v.to_vec())))
        })?;
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
