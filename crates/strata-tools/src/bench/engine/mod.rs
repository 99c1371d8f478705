//! The engines `strata bench` drives: one client loop (key and value generation, threads,
//! timing, reporting) on Strata, RocksDB (cargo feature `rocksdb`) or LMDB (feature `lmdb`),
//! so that a comparison differs only in the engine.
//!
//! Each engine maps every bench flag to its own option where it has one; the flags it has no
//! use for are listed by [`unused_flags`] (printed by `--help` and at the start of a run).
//! What an engine counts about itself comes back as [`Counters`]; a figure it does not keep is
//! `None` and the report says so or falls back to /proc (bytes written).

mod strata;

#[cfg(feature = "lmdb")]
mod lmdb;
#[cfg(feature = "rocksdb")]
mod rocksdb;

use std::path::Path;

use super::BenchArgs;
use crate::cli::BoxError;

pub type EngineResult<T> = Result<T, BoxError>;

/// The engine named by `--engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineKind {
    Strata,
    Rocksdb,
    Lmdb,
}

/// Which transactions a transactional step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnMode {
    /// Keys locked as they are touched (`--transaction_db`).
    Pessimistic,
    /// Conflicts found at commit (`--optimistic_transaction_db`).
    Optimistic,
}

impl TxnMode {
    pub fn name(self) -> &'static str {
        match self {
            TxnMode::Pessimistic => "pessimistic",
            TxnMode::Optimistic => "optimistic",
        }
    }
}

/// Why a transaction was rolled back to be run again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// An optimistic commit found a key written since the transaction's snapshot.
    Conflict,
    /// A lock wait would have closed a cycle of waiting transactions.
    Deadlock,
    /// A lock wait ran out of --transaction_lock_timeout.
    Timeout,
}

/// The work of one transaction.
#[derive(Clone, Copy, Debug)]
pub enum TxnOp<'a> {
    /// The puts of a write step (one put, or one --batch_size batch).
    Put(&'a [(Vec<u8>, Vec<u8>)]),
    Delete(&'a [u8]),
    /// A read (readrandom, readrandomwriterandom); the transaction writes nothing.
    Get(&'a [u8]),
    /// seekrandom's seek and `nexts` entries through the transaction's iterator.
    Seek(&'a [u8], u64),
    /// updaterandom: get_for_update of the key, then a put of the value.
    Update(&'a [u8], &'a [u8]),
    /// randomtransaction: for each key, get_for_update of its 8-byte big-endian counter
    /// (0 when missing), plus the increment, written back.
    AddToEach(&'a [Vec<u8>], u64),
    /// updaterandomcursor: a cursor seeks the key, reads the entry it lands on and replaces
    /// its value in place.
    CursorUpdate(&'a [u8], &'a [u8]),
}

impl TxnOp<'_> {
    /// True when the transaction only reads (it is ended without a commit).
    pub fn read_only(&self) -> bool {
        matches!(self, TxnOp::Get(_) | TxnOp::Seek(..))
    }
}

/// What a finished transaction read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxnRead {
    /// The key (or, for a cursor, an entry at or after it) was there.
    pub found: bool,
    /// Bytes of the keys and values read.
    pub bytes: u64,
}

/// A transaction's outcome: done, or rolled back to be retried.
pub type Attempt = Result<TxnRead, Retry>;

/// The 8-byte big-endian counter of randomtransaction, from a stored value (`None`: missing).
pub fn counter_of(key: &[u8], value: Option<&[u8]>) -> EngineResult<u64> {
    match value {
        None => Ok(0),
        Some(v) => match <[u8; 8]>::try_from(v) {
            Ok(b) => Ok(u64::from_be_bytes(b)),
            Err(_) => Err(format!(
                "randomtransaction: key {} holds a {}-byte value, not an 8-byte counter (was \
                 the database written by another step with these keys?)",
                String::from_utf8_lossy(key),
                v.len()
            )
            .into()),
        },
    }
}

/// One write of a workload's batch or transaction, on family `cf`: an index into the
/// families the engine was opened with (0 is always "default", see [`open_with_families`]).
#[derive(Clone, Copy, Debug)]
#[allow(
    dead_code,
    reason = "part of the workload interface: YCSB puts only, Linkbench deletes and merges"
)]
pub enum WriteOp<'a> {
    Put {
        cf: usize,
        key: &'a [u8],
        value: &'a [u8],
    },
    Delete {
        cf: usize,
        key: &'a [u8],
    },
    /// A merge with the run's `--merge_operator` (an error on an engine without merges).
    Merge {
        cf: usize,
        key: &'a [u8],
        operand: &'a [u8],
    },
}

impl WriteOp<'_> {
    /// The family the write goes to.
    pub fn cf(&self) -> usize {
        match *self {
            WriteOp::Put { cf, .. } | WriteOp::Delete { cf, .. } | WriteOp::Merge { cf, .. } => cf,
        }
    }
}

/// Why an operation inside a transaction of [`Engine::run_transaction`] stopped it.
#[derive(Debug)]
pub enum TxnError {
    /// A conflict, deadlock or lock timeout: the transaction is rolled back and the caller
    /// runs it again.
    Retry(Retry),
    /// Any other failure: the transaction is rolled back and the error ends the step.
    Failed(BoxError),
}

impl From<BoxError> for TxnError {
    fn from(e: BoxError) -> Self {
        TxnError::Failed(e)
    }
}

impl From<String> for TxnError {
    fn from(e: String) -> Self {
        TxnError::Failed(e.into())
    }
}

/// What a visitor of [`TxnOps::scan`] and [`Engine::scan_range`] is given: each entry's key
/// and value, in order; it returns false to stop.
pub type Visitor<'a> = &'a mut dyn FnMut(&[u8], &[u8]) -> bool;

/// The operations of one transaction of [`Engine::run_transaction`]; its reads see its own
/// writes.
pub trait TxnOps {
    /// The value of `key` in family `cf`. `for_update`: lock the key (pessimistic) or have
    /// the commit check that nobody else wrote it since (optimistic).
    fn get(&mut self, cf: usize, key: &[u8], for_update: bool)
        -> Result<Option<Vec<u8>>, TxnError>;
    fn write(&mut self, op: WriteOp<'_>) -> Result<(), TxnError>;
    /// The entries of `cf` in `[lower, upper)` ascending, or (`reverse`) descending from the
    /// last key below `upper` (or the last key), while `visit` returns true.
    #[allow(
        dead_code,
        reason = "part of the workload interface: YCSB scans outside transactions"
    )]
    fn scan(
        &mut self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: Visitor<'_>,
    ) -> Result<(), TxnError>;
}

/// The body of a transaction of [`Engine::run_transaction`].
pub type TxnBody<'a> = &'a mut dyn FnMut(&mut dyn TxnOps) -> Result<(), TxnError>;

/// The error for family index `cf` when the engine has `opened` families.
pub fn no_family(cf: usize, opened: usize) -> BoxError {
    format!(
        "column family index {cf} is out of range: the database was opened with {opened} families"
    )
    .into()
}

/// The operations of the benchmark steps, on one open database.
pub trait Engine: Send + Sync {
    /// Name and version of the engine, as `rocksdb 11.8.1`.
    fn version(&self) -> String;
    /// The database directory.
    fn path(&self) -> &Path;
    /// Writes one key (`sync`: durable before returning, as fillsync's writes).
    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> EngineResult<()>;
    /// Writes several keys atomically, in one batch (`--batch_size`).
    fn put_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) -> EngineResult<()>;
    fn delete(&self, key: &[u8], sync: bool) -> EngineResult<()>;
    /// Deletes every key in `[begin, end)` of the column family of `begin`
    /// (`--writes_per_range_tombstone`).
    fn delete_range(&self, begin: &[u8], end: &[u8], sync: bool) -> EngineResult<()>;
    /// How the engine does [`Engine::delete_range`] when it has no range deletion of its
    /// own (printed beside the count of range tombstones); `None` for a native one.
    fn range_deletion_emulated(&self) -> Option<&'static str> {
        None
    }
    /// Merges `operand` into the key with the engine's `--merge_operator`.
    fn merge(&self, key: &[u8], operand: &[u8], sync: bool) -> EngineResult<()>;
    /// The length of the key's value, if the key is there.
    fn get(&self, key: &[u8]) -> EngineResult<Option<usize>>;
    /// Visits the entries from the first (or, `reverse`, from the last) while `visit` returns
    /// true.
    fn scan(&self, reverse: bool, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> EngineResult<()>;
    /// As db_bench's seekrandom: a new iterator seeks to `key`, then reads up to `nexts`
    /// entries. Returns whether `key` itself was found and the bytes of the entries read.
    fn seek(&self, key: &[u8], nexts: u64) -> EngineResult<(bool, u64)>;
    /// Writes the memtable out (what that means for the engine).
    fn flush(&self) -> EngineResult<()>;
    /// Compacts level `level` into the next (compact0, compact1), or everything (`None`).
    fn compact(&self, level: Option<usize>) -> EngineResult<()>;
    fn wait_for_compactions(&self) -> EngineResult<()>;
    fn counters(&self) -> Counters;
    /// Starts the engine's own statistics (the `stats` step's text) afresh.
    fn reset_stats(&self);
    /// Starts counting the calling thread's per-operation statistics at `--perf_level`
    /// `level` (RocksDB's numbers), from 0; engines without them ignore it.
    fn start_perf_context(&self, _level: u32) {}
    /// The calling thread's per-operation statistics since [`Engine::start_perf_context`],
    /// by name, and stops counting (empty when off or without them).
    fn take_perf_context(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// The `stats` step: the engine's statistics as it prints them.
    fn stats_text(&self) -> String;
    /// The `levelstats` step: per level (or per tree) sizes and work.
    fn level_stats_text(&self) -> String;
    /// One line: memtable, files and bytes per level (or the B-tree's pages).
    fn shape(&self) -> String;
    /// What opening the database recovered, if anything.
    fn recovery(&self) -> Option<String>;
    fn close(self: Box<Self>) -> EngineResult<()>;
    /// Runs `op` as one transaction of `mode` and commits it (`sync`: durably). A conflict,
    /// deadlock or lock timeout rolls it back and comes back as `Ok(Err(why))`, for the
    /// caller to retry; any other failure is an error.
    fn transaction(&self, mode: TxnMode, op: TxnOp<'_>, sync: bool) -> EngineResult<Attempt>;
    /// How updaterandomcursor's in-place update is done when the engine has no updatable
    /// cursor (printed with the step); `None` for a native one.
    fn cursor_update_emulated(&self) -> Option<&'static str> {
        None
    }
    /// What the transactions are on this engine, when not what the flags say (printed with
    /// the transactional steps).
    fn transactions_note(&self) -> Option<&'static str> {
        None
    }
    /// fillseqingest: writes the entries `next` fills in (sorted, until it returns false)
    /// into one new table file outside the database with the engine's table writer, then
    /// ingests that file (moved in). Returns the seconds spent writing the file and those
    /// spent ingesting it. An engine without external table files refuses.
    fn ingest_sorted(
        &self,
        next: &mut dyn FnMut(&mut Vec<u8>, &mut Vec<u8>) -> bool,
    ) -> EngineResult<(f64, f64)> {
        let _ = next;
        Err("this engine has no external table files to ingest".into())
    }

    // The workloads' operations (`bench::workload`): on the families the engine was opened
    // with, by index (see [`open_with_families`]), whatever --num_column_families says.

    /// The value of `key` in family `cf`.
    fn get_value(&self, cf: usize, key: &[u8]) -> EngineResult<Option<Vec<u8>>>;
    /// Writes `ops` atomically, as one batch (`sync`: durably).
    fn write_ops(&self, ops: &[WriteOp<'_>], sync: bool) -> EngineResult<()>;
    /// As [`TxnOps::scan`], outside a transaction: an iterator on the current state.
    fn scan_range(
        &self,
        cf: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        visit: Visitor<'_>,
    ) -> EngineResult<()>;
    /// Runs `body` as one transaction of `mode` and commits it (`sync`: durably). A conflict,
    /// deadlock or lock timeout, from the body's operations or from the commit, rolls it back
    /// and comes back as `Ok(Err(why))`, for the caller to run again; so does a body that
    /// returns [`TxnError::Retry`]. An engine without transaction modes (LMDB) runs the body
    /// as its own write transaction.
    fn run_transaction(
        &self,
        mode: TxnMode,
        sync: bool,
        body: TxnBody<'_>,
    ) -> EngineResult<Result<(), Retry>>;
}

/// A snapshot of an engine's cumulative counters; a step reports the difference of two.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Bytes the engine wrote to its files (log, tables, manifest) by its own accounting;
    /// `None` when it keeps none (the report then uses /proc/self/io's wchar).
    pub bytes_written: Option<u64>,
    /// Write groups (a leader's commit for itself and the writers queued behind it) and the
    /// batches they held.
    pub write_groups: u64,
    pub batches: u64,
    pub wal_syncs: u64,
    pub bloom_checks: u64,
    pub bloom_negatives: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Bytes read from table files for reads (not compactions), where counted.
    pub table_bytes_read: Option<u64>,
    /// Bytes of blob file records read for reads (values kept apart from the tables), where
    /// counted.
    pub blob_bytes_read: Option<u64>,
    /// Write stalls by cause: (cause, times if counted, microseconds).
    pub stalls: Vec<(&'static str, Option<u64>, u64)>,
    /// Compactions finished, where counted; the bytes are then those of the finished ones,
    /// else whatever the engine counts (RocksDB: running compactions' bytes too).
    pub compactions: Option<u64>,
    pub compaction_bytes_read: u64,
    pub compaction_bytes_written: u64,
    /// Compactions running now (not a counter), where known.
    pub compactions_running: Option<u64>,
    /// Compaction debt now (not a counter).
    pub pending_compaction_bytes: u64,
    pub compactions_skipped_for_space: u64,
}

impl Counters {
    /// The counts between `before` and `self` (gauges keep their value of `self`).
    pub fn since(&self, before: &Counters) -> Counters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let dopt = |a: Option<u64>, b: Option<u64>| Some(d(a?, b.unwrap_or(0)));
        Counters {
            bytes_written: dopt(self.bytes_written, before.bytes_written),
            write_groups: d(self.write_groups, before.write_groups),
            batches: d(self.batches, before.batches),
            wal_syncs: d(self.wal_syncs, before.wal_syncs),
            bloom_checks: d(self.bloom_checks, before.bloom_checks),
            bloom_negatives: d(self.bloom_negatives, before.bloom_negatives),
            cache_hits: d(self.cache_hits, before.cache_hits),
            cache_misses: d(self.cache_misses, before.cache_misses),
            table_bytes_read: dopt(self.table_bytes_read, before.table_bytes_read),
            blob_bytes_read: dopt(self.blob_bytes_read, before.blob_bytes_read),
            stalls: self
                .stalls
                .iter()
                .map(|&(what, n, micros)| {
                    let was = before.stalls.iter().find(|s| s.0 == what);
                    (
                        what,
                        n.map(|n| d(n, was.and_then(|s| s.1).unwrap_or(0))),
                        d(micros, was.map_or(0, |s| s.2)),
                    )
                })
                .collect(),
            compactions: dopt(self.compactions, before.compactions),
            compaction_bytes_read: d(self.compaction_bytes_read, before.compaction_bytes_read),
            compaction_bytes_written: d(
                self.compaction_bytes_written,
                before.compaction_bytes_written,
            ),
            compactions_running: self.compactions_running,
            pending_compaction_bytes: self.pending_compaction_bytes,
            compactions_skipped_for_space: d(
                self.compactions_skipped_for_space,
                before.compactions_skipped_for_space,
            ),
        }
    }

    /// Write stalls begun, of every cause (0 where the engine counts only their time).
    pub fn stall_count(&self) -> u64 {
        self.stalls.iter().filter_map(|s| s.1).sum()
    }
}

/// The blob files of a tree for its shape line, ` | blob N files X MiB, Y MiB garbage`
/// (garbage: bytes of records no table refers to any more); empty without blob files.
pub fn blob_shape(files: u64, bytes: u64, garbage: u64) -> String {
    let mib = |b: u64| b as f64 / 1048576.0;
    match files {
        0 => String::new(),
        n => format!(
            " | blob {n} files {:.1} MiB, {:.1} MiB garbage",
            mib(bytes),
            mib(garbage)
        ),
    }
}

/// The column family of key `key` among `n`: key k (its first 8 bytes, big-endian, as the
/// bench writes them) goes to family k % n, as in db_bench.
pub fn family_of(key: &[u8], n: usize) -> usize {
    let mut k = 0u64;
    for &b in key.iter().take(8) {
        k = (k << 8) | u64::from(b);
    }
    (k % n as u64) as usize
}

/// The flags that mean nothing to `kind` (accepted, without effect).
pub fn unused_flags(kind: EngineKind) -> &'static [&'static str] {
    match kind {
        EngineKind::Strata => &[],
        EngineKind::Rocksdb => &[
            "--prepopulate_block_cache (the rocksdb crate has no setter for it)",
            "--blob_separation_at_write (RocksDB writes values to blob files at flush)",
            "--warm_compaction_outputs (RocksDB has no such option)",
            "--read_triggered_compaction (RocksDB has no such rule)",
            "--block_size_deviation (the rocksdb crate has no setter; RocksDB's default is 10)",
            "--fifo_compaction_allow_compaction (the rocksdb crate has no setter; RocksDB's \
             default, false, stays)",
            "--memtable_point_index_ratio (RocksDB has no such index)",
        ],
        EngineKind::Lmdb => &[
            "--disable_wal (LMDB has no log: a commit writes the B-tree's pages)",
            "--write_buffer_size",
            "--max_write_buffer_number",
            "--memtable_bloom_size_ratio",
            "--memtable_whole_key_filtering",
            "--memtable_point_index_ratio",
            "--compression_type (LMDB does not compress)",
            "--compression_max_dict_bytes",
            "--compression_zstd_max_train_bytes",
            "--checksum_type (LMDB checksums no page)",
            "--bloom_bits",
            "--cache_size (LMDB reads through the OS page cache)",
            "--cache_index_and_filter_blocks",
            "--partition_index_and_filters",
            "--partition_index",
            "--metadata_block_size",
            "--pin_top_level_index_and_filter",
            "--data_block_index_type",
            "--data_block_hash_table_util_ratio",
            "--pin_l0_filter_and_index_blocks_in_cache",
            "--prepopulate_block_cache",
            "--warm_compaction_outputs",
            "--block_size (pages are the OS page size)",
            "--block_restart_interval",
            "--block_size_deviation",
            "--uncache_aggressiveness",
            "--target_file_size_base",
            "--max_bytes_for_level_base",
            "--max_bytes_for_level_multiplier",
            "--num_levels",
            "--level0_file_num_compaction_trigger",
            "--level0_slowdown_writes_trigger",
            "--level0_stop_writes_trigger",
            "--disable_auto_compactions",
            "--read_triggered_compaction",
            "--max_background_jobs",
            "--max_subcompactions",
            "--rate_limiter_bytes_per_sec",
            "--db_write_buffer_size",
            "--max_total_wal_size",
            "--avoid_flush_during_recovery (LMDB has no memtable)",
            "--manual_wal_flush (LMDB has no WAL)",
            "--wal_compression (LMDB has no WAL)",
            "--compaction_style",
            "--universal_*",
            "--fifo_compaction_*",
            "--periodic_compaction_seconds",
            "--perf_level (LMDB has no per-operation statistics)",
            "--soft_pending_compaction_bytes_limit",
            "--hard_pending_compaction_bytes_limit",
            "--open_files",
            "--use_direct_reads (LMDB reads through its memory map)",
            "--use_direct_io_for_flush_and_compaction",
            "--compaction_readahead_size",
            "--readahead_size",
            "--verify_checksum (LMDB keeps no checksums)",
            "--fill_cache (LMDB has no block cache)",
            "--mmap_read (LMDB always reads through its memory map)",
            "--max_compaction_bytes",
            "--transaction_lock_timeout (one writer at a time: no key locks to wait for)",
        ],
    }
}

/// Opens (or creates, unless --use_existing_db) the database at `path` with `args`' options,
/// with the --num_column_families families that the db_bench steps spread their keys over.
pub fn open(kind: EngineKind, args: &BenchArgs, path: &Path) -> EngineResult<Box<dyn Engine>> {
    let names: Vec<String> = (0..args.num_column_families.max(1))
        .map(BenchArgs::column_family_name)
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    open_families(kind, args, path, &names, Families::SpreadKeys)
}

/// Opens the database as [`open`] does, with the named families (index 0 must be
/// "default"), each with the run's options. The db_bench steps' operations (put, get, ...)
/// then use the default family alone; the workloads' ones name a family by its index here.
pub fn open_with_families(
    kind: EngineKind,
    args: &BenchArgs,
    path: &Path,
    families: &[&str],
) -> EngineResult<Box<dyn Engine>> {
    if families.first() != Some(&"default") {
        return Err(format!(
            "the first column family must be \"default\", not {:?}",
            families.first()
        )
        .into());
    }
    open_families(kind, args, path, families, Families::DefaultOnly)
}

/// Which families the db_bench steps' operations use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Families {
    /// Key k goes to family k % n ([`family_of`]).
    SpreadKeys,
    /// Every key goes to the default family.
    DefaultOnly,
}

fn open_families(
    kind: EngineKind,
    args: &BenchArgs,
    path: &Path,
    names: &[&str],
    use_: Families,
) -> EngineResult<Box<dyn Engine>> {
    match kind {
        EngineKind::Strata => Ok(Box::new(strata::StrataEngine::open(
            args, path, names, use_,
        )?)),
        #[cfg(feature = "rocksdb")]
        EngineKind::Rocksdb => Ok(Box::new(rocksdb::RocksDbEngine::open(
            args, path, names, use_,
        )?)),
        #[cfg(feature = "lmdb")]
        EngineKind::Lmdb => Ok(Box::new(lmdb::LmdbEngine::open(args, path, names, use_)?)),
        #[allow(unreachable_patterns)]
        other => {
            let _ = (args, path, names, use_);
            Err(not_built(other).into())
        }
    }
}

fn not_built(kind: EngineKind) -> String {
    let (name, cost) = match kind {
        EngineKind::Rocksdb => (
            "rocksdb",
            "it compiles RocksDB's C++, about 25 minutes on 2 cores, and needs libclang-dev",
        ),
        _ => ("lmdb", "it compiles LMDB's C in seconds"),
    };
    format!(
        "--engine={name}: this strata was built without the `{name}` feature; build it with \
         `cargo build --release -p strata-tools --features {name}` ({cost})"
    )
}

#[cfg(test)]
mod tests;
