//! The flags of `strata bench`, with db_bench's names and defaults.

use std::path::PathBuf;

use clap::Args;

use super::engine::TxnMode;
use super::gen::KeyShape;
use crate::engine_flags::{parse_bool, EngineFlags};

/// The text after the flags: which engine uses which flags, built from
/// [`super::engine::unused_flags`] so that the list is written once.
fn engines_help() -> String {
    let lmdb = super::engine::unused_flags(super::engine::EngineKind::Lmdb);
    format!(
        "Defaults are db_bench's, which differ from the library's (strata::Options::default())
in two: no bloom filter (--bloom_bits=-1; the library has 10 bits per key) and snappy
compression (--compression_type=snappy; the library has none). Add --bloom_bits=10
--compression_type=none to measure Strata as a program using it by default would run.

Any flag not listed above is an error that names it. Every flag above has its effect on
--engine=strata and, mapped to RocksDB's option of the same name, on --engine=rocksdb (where
compact0 and compact1 are not available: the rocksdb crate has no CompactFiles).
With --engine=lmdb these flags are accepted and have no effect (LMDB is a copy-on-write
B-tree: no log, memtable, levels, compaction, compression, filter or cache of its own):
  {}
and flush is an fsync of the data file, the compaction steps do nothing. The blob flags
(--enable_blob_files, --min_blob_size, --blob_file_size, --enable_blob_garbage_collection,
--blob_garbage_collection_*) are refused there: LMDB keeps every value in its pages.

Transactions (--transaction_db, --optimistic_transaction_db, randomtransaction,
updaterandomcursor) use Strata's TransactionDb (deadlock detection on) or optimistic
transactions, RocksDB's TransactionDB or OptimisticTransactionDB, and on LMDB one write
transaction per operation (its single writer serializes them: nothing conflicts, both flags
mean the same). randomtransaction and updaterandomcursor without a flag use pessimistic
transactions. Merges, range tombstones and the writer of the *whilewriting steps write
outside transactions.
The rocksdb and lmdb engines are cargo features, off by default:
  cargo build --release -p strata-tools --features rocksdb,lmdb",
        lmdb.join("\n  ")
    )
}

/// `strata bench` flags. Names and defaults follow RocksDB's db_bench.
#[derive(Args, Debug, Clone)]
#[command(after_help = engines_help(), rename_all = "snake_case", args_override_self = true)]
pub struct BenchArgs {
    /// Comma-separated list of steps to run, in order. Writes: fillseq, fillrandom,
    /// filluniquerandom, overwrite, fillsync, deleteseq, deleterandom, fillseqingest (fillseq's
    /// keys written to one table file outside the database, then ingested; one thread). Reads: readrandom,
    /// readmissing, readseq, readreverse, seekrandom. Mixed: readwhilewriting,
    /// seekrandomwhilewriting (one extra writer thread), readrandomwriterandom
    /// (--readwritepercent), updaterandom (read-modify-write). Merges (with
    /// --merge_operator): mergerandom, readrandommergerandom (--mergereadpercent). Meta: flush,
    /// compact0,
    /// compact1, compactall (also "compact"), waitforcompaction, stats, levelstats,
    /// resetstats. Transactions: randomtransaction (--transaction_sets counters moved
    /// together, verified at the end), updaterandomcursor (read-modify-write through a
    /// transaction's updatable cursor). Workloads: ycsb_load, then ycsb_a (50% read, 50%
    /// update), ycsb_b (95/5 read/update), ycsb_c (read only), ycsb_d (95/5 read/insert,
    /// newest records most read), ycsb_e (95/5 scan/insert), ycsb_f (50/50
    /// read/read-modify-write): YCSB's core workloads (--ycsb_* flags); expandingrange
    /// (readrandom over a key range growing to --num keys, --expand_* flags); Linkbench:
    /// linkbench_load, then linkbench (LinkBench's request mix, --linkbench_nodes); the
    /// insert benchmark: insertbench_l_i0, insertbench_create_index, insertbench_l_i1,
    /// insertbench_l_i2, insertbench_qr100, insertbench_qr500, insertbench_qr1000.
    #[arg(
        long,
        default_value = "fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom"
    )]
    pub benchmarks: String,

    /// The engine under the benchmark loop: strata, rocksdb or lmdb (the last two need the
    /// cargo features of the same names; see the end of this help for the flags each uses).
    #[arg(long, value_enum, default_value = "strata")]
    pub engine: super::engine::EngineKind,

    /// Number of key/value pairs (per thread, as in db_bench).
    #[arg(long, default_value_t = 1_000_000)]
    pub num: u64,

    /// Number of writes per thread of each write step (fill*, delete*; fillsync writes a
    /// thousandth); -1 means --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub writes: i64,

    /// Puts per write batch in the fill steps (db_bench's entries_per_batch).
    #[arg(long, default_value_t = 1)]
    pub batch_size: usize,

    /// Column families the keys are spread over, the default one included: key k goes to
    /// family k % N, as in db_bench (whose family names are used: default,
    /// column_family_name_000001, ...).
    #[arg(long, default_value_t = 1)]
    pub num_column_families: usize,

    /// In the write steps (fill*, overwrite, fillsync), a range tombstone after every this
    /// many writes of a thread (db_bench's rule; 0 = none): it deletes
    /// --range_tombstone_width keys from a key drawn as the step draws its keys, in the
    /// column family of that key. It is its own write right after the write that reached the
    /// count (db_bench adds it to that write's batch; --batch_size batches are cut there).
    /// The step's output counts them. With --engine=lmdb, which has no range deletion, each
    /// is a transaction deleting every key present in the range.
    #[arg(long, default_value_t = 0)]
    pub writes_per_range_tombstone: u64,

    /// Keys each range tombstone spans: [key(b), key(b + width)).
    #[arg(long, default_value_t = 100)]
    pub range_tombstone_width: u64,

    /// Range tombstones per thread per write step at most (db_bench's default 0 writes
    /// none: set it with --writes_per_range_tombstone).
    #[arg(long, default_value_t = 0)]
    pub max_num_range_tombstones: u64,

    /// Writes of a thread before its range tombstones start being counted.
    #[arg(long, default_value_t = 0)]
    pub writes_before_delete_range: u64,

    /// Number of read operations per thread; -1 means --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub reads: i64,

    /// Number of concurrent threads running each step.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,

    /// Size of each key in bytes (at least 1; keys are db_bench's: 8-byte big-endian integer
    /// padded with '0').
    #[arg(long, default_value_t = 16)]
    pub key_size: usize,

    /// Size of each value in bytes.
    #[arg(long, default_value_t = 100)]
    pub value_size: usize,

    /// Fraction of a value left after compression (values are generated this compressible).
    #[arg(long, default_value_t = 0.5)]
    pub compression_ratio: f64,

    /// Seed for the key generators: the n-th thread started in the run uses seed + n, as in
    /// db_bench. 0 means the default base, 1000.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Database directory (default: a new directory under the system temp dir, removed at
    /// the end). Unless --use_existing_db, a database found there is deleted first: only
    /// the files an engine writes (CURRENT, LOG, MANIFEST-*, *.sst, *.log, data.mdb, ...);
    /// a directory holding anything else is refused.
    #[arg(long)]
    pub db: Option<PathBuf>,

    /// Use the existing database instead of destroying it first.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub use_existing_db: bool,

    /// Write without the write-ahead log.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub disable_wal: bool,

    /// Bytes per second the writer of the *whilewriting steps writes; 0 means no limit.
    #[arg(long, default_value_t = 0)]
    pub benchmark_write_rate_limit: u64,

    /// Number of next() calls after each seek in seekrandom.
    #[arg(long, default_value_t = 0)]
    pub seek_nexts: u64,

    /// Bytes of the key prefix: both engines get a fixed-length prefix extractor of this
    /// length (prefix bloom filters, prefix seeks); 0 means none. At most --key_size.
    #[arg(long, default_value_t = 0)]
    pub prefix_size: usize,

    /// Average keys per prefix: with it, keys start with a prefix of --prefix_size bytes
    /// derived from the key's integer (db_bench's key layout); 0 means the plain key layout.
    #[arg(long, default_value_t = 0)]
    pub keys_per_prefix: u64,

    /// seekrandom's iterators stop at the first key of another prefix than the seek's
    /// (RocksDB's ReadOptions::prefix_same_as_start). Default: true with --prefix_size, so
    /// that --seek_nexts stays within a prefix (db_bench's default is false).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub prefix_same_as_start: Option<bool>,

    /// seekrandom ignores prefix filters and reads every table (RocksDB's
    /// ReadOptions::total_order_seek).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub total_order_seek: bool,

    /// Bytes each iterator reads from a table file at a time, from its first read on
    /// (RocksDB's ReadOptions::readahead_size); 0 lets the window grow as a scan goes on.
    #[arg(long, default_value_t = 0)]
    pub readahead_size: usize,

    /// Reads and scans check the checksum of each data block they read from a table file
    /// (RocksDB's ReadOptions::verify_checksums, db_bench's flag); transactions' reads always
    /// do.
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub verify_checksum: bool,

    /// Reads and scans put the data blocks they read from table files into the block cache
    /// (RocksDB's ReadOptions::fill_cache); transactions' reads always do. Off, a scan
    /// leaves the cache as it was (Strata's iterators then read ahead into a window of
    /// their own).
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub fill_cache: bool,

    /// seekrandom seeks to keys of a prefix no key has (byte 8 of the key set to '1', as
    /// db_bench): what prefix filters save. Needs --prefix_size above 8.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub seek_missing_prefix: bool,

    /// Print latency percentiles per step.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub histogram: bool,

    /// Percent of operations that are reads in readrandomwriterandom.
    #[arg(long, default_value_t = 90)]
    pub readwritepercent: u32,

    /// Percent of operations that are merges in readrandommergerandom (the rest are reads).
    #[arg(long, default_value_t = 70)]
    pub mergereadpercent: u32,

    /// Distinct keys of mergerandom and readrandommergerandom; -1 means --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub merge_keys: i64,

    /// Seconds each step runs for, ignoring --num and --reads (0 = run by count).
    #[arg(long, default_value_t = 0)]
    pub duration: u64,

    /// Every this many seconds, append a line to --report_file: seconds, operations and
    /// operations per second in the interval, p99 latency, write stalls (0 = no report).
    #[arg(long, default_value_t = 0)]
    pub report_interval_seconds: u64,

    /// The CSV file of --report_interval_seconds.
    #[arg(long, default_value = "report.csv")]
    pub report_file: PathBuf,

    /// Draw throughput and p99 latency over time, one line per step, as an SVG picture
    /// (samples every --report_interval_seconds, or every second if that is 0).
    #[arg(long)]
    pub plot: Option<PathBuf>,

    /// Commit every write of the write steps (each put, or each --batch_size batch) as a
    /// pessimistic transaction that locks its keys, and read through a transaction in
    /// readrandom, readmissing, seekrandom, updaterandom (get_for_update, then put) and
    /// readrandomwriterandom (RocksDB's TransactionDB). Lock waits that time out or would
    /// deadlock are retried and counted.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub transaction_db: bool,

    /// As --transaction_db, with optimistic transactions (RocksDB's OptimisticTransactionDB):
    /// no locks, a commit fails on a conflict and is retried (and counted).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub optimistic_transaction_db: bool,

    /// Milliseconds a pessimistic transaction waits for a lock before giving up (and being
    /// retried).
    #[arg(long, default_value_t = 100)]
    pub transaction_lock_timeout: u64,

    /// Sets of counters randomtransaction moves together: each transaction adds one
    /// increment to a random key of every set (1 to 9999).
    #[arg(long, default_value_t = 2)]
    pub transaction_sets: u32,

    /// YCSB: records ycsb_load inserts (in all, over the threads); -1 means --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub ycsb_records: i64,

    /// YCSB: operations of each ycsb_a .. ycsb_f step (in all, over the threads); -1 means
    /// --num. With --duration the steps run for that long instead.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub ycsb_operations: i64,

    /// YCSB: fields per record (YCSB's fieldcount); a record is stored as one value of
    /// --ycsb_fieldcount times --ycsb_fieldlength bytes.
    #[arg(long, default_value_t = 10)]
    pub ycsb_fieldcount: usize,

    /// YCSB: bytes per field (YCSB's fieldlength).
    #[arg(long, default_value_t = 100)]
    pub ycsb_fieldlength: usize,

    /// YCSB: the longest scan of ycsb_e (YCSB's maxscanlength); lengths are uniform from 1.
    #[arg(long, default_value_t = 100)]
    pub ycsb_max_scan_length: u64,

    /// expandingrange: keys the read range starts with (keys 0 to N-1); -1 means 1% of --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub expand_start: i64,

    /// expandingrange: keys the range grows by at each interval; -1 means 10% of --num.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub expand_step: i64,

    /// expandingrange: seconds per interval (the range grows after each; at least 1).
    #[arg(long, default_value_t = 10)]
    pub expand_interval: u64,

    /// expandingrange: reads per interval, all threads together, instead of
    /// --expand_interval seconds (0 = intervals by time).
    #[arg(long, default_value_t = 0)]
    pub expand_interval_reads: u64,

    /// Print the engine's statistics (the stats step) after the last step, its latency
    /// histograms included: the engine times gets, writes, seeks and multi-gets for them
    /// (Strata's StatsLevel::ExceptDetailedTimers, RocksDB's kExceptDetailedTimers).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub statistics: bool,

    /// Per-operation statistics of each benchmark thread (RocksDB's PerfLevel numbers: 1
    /// off, 2 counts, 3 and 4 counts and times but mutex waits, 5 all), summed over the
    /// threads and printed after each step as `PERF_CONTEXT:`, as db_bench does.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=5))]
    pub perf_level: u32,

    /// Linkbench: nodes linkbench_load creates (LinkBench's maxid1 - 1; its default
    /// configuration has 10,000,000); each gets a power-law number of links.
    #[arg(long, default_value_t = 1_000_000)]
    pub linkbench_nodes: u64,

    /// After each step of Linkbench or the insert benchmark, check its invariants: the link
    /// counts and the time index against the links, the secondary indexes against the rows
    /// (reads every family of the workload; memory grows with the data).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub verify_workload: bool,

    /// The engine's options.
    #[command(flatten)]
    pub options: EngineFlags,
}

impl BenchArgs {
    /// Seconds between interval samples: --report_interval_seconds, or 1 for --plot alone;
    /// 0 = no sampling.
    pub fn report_interval(&self) -> u64 {
        match (self.report_interval_seconds, &self.plot) {
            (0, Some(_)) => 1,
            (n, _) => n,
        }
    }

    /// Distinct keys of the merge steps.
    pub fn merge_keys(&self) -> u64 {
        match self.merge_keys {
            n if n <= 0 => self.num,
            n => n as u64,
        }
    }

    /// Writes per thread of a write step.
    pub fn writes(&self) -> u64 {
        if self.writes < 0 {
            self.num
        } else {
            self.writes as u64
        }
    }

    /// db_bench's name of column family `i` (0 is the default family).
    pub fn column_family_name(i: usize) -> String {
        match i {
            0 => "default".to_string(),
            i => format!("column_family_name_{i:06}"),
        }
    }

    /// How keys are made from integers (`--prefix_size`, `--keys_per_prefix`).
    pub fn key_shape(&self) -> KeyShape {
        KeyShape {
            prefix_size: self.prefix_size,
            keys_per_prefix: self.keys_per_prefix,
            num: self.num,
            seek_missing_prefix: self.seek_missing_prefix,
        }
    }

    /// Whether seeks stop at the end of their prefix: `--prefix_same_as_start`, by default
    /// when there is a prefix.
    pub fn prefix_same_as_start(&self) -> bool {
        self.prefix_same_as_start.unwrap_or(self.prefix_size > 0)
    }

    /// The prefix flags that a run cannot use, as an error naming them.
    pub fn check_prefix_flags(&self) -> Result<(), String> {
        if self.prefix_size > self.key_size {
            return Err(format!(
                "--prefix_size ({}) must be at most --key_size ({})",
                self.prefix_size, self.key_size
            ));
        }
        if self.keys_per_prefix > 0 && self.prefix_size == 0 {
            return Err("--keys_per_prefix needs --prefix_size".into());
        }
        if self.keys_per_prefix > self.num {
            return Err(format!(
                "--keys_per_prefix ({}) must be at most --num ({})",
                self.keys_per_prefix, self.num
            ));
        }
        if self.seek_missing_prefix && self.prefix_size <= 8 {
            return Err("--seek_missing_prefix needs --prefix_size above 8".into());
        }
        Ok(())
    }

    /// The transactions of --transaction_db or --optimistic_transaction_db, if either.
    pub fn txn_mode(&self) -> Option<TxnMode> {
        match (self.transaction_db, self.optimistic_transaction_db) {
            (true, _) => Some(TxnMode::Pessimistic),
            (false, true) => Some(TxnMode::Optimistic),
            (false, false) => None,
        }
    }

    /// The transactions the engine must be opened for: those of the flags, else pessimistic
    /// ones when a step needs transactions of its own (randomtransaction,
    /// updaterandomcursor).
    pub fn open_txn_mode(&self) -> Option<TxnMode> {
        let needs = self
            .benchmarks
            .split(',')
            .any(|s| matches!(s.trim(), "randomtransaction" | "updaterandomcursor"));
        self.txn_mode().or(needs.then_some(TxnMode::Pessimistic))
    }

    /// The transaction flags that a run cannot use, as an error naming them.
    pub fn check_txn_flags(&self) -> Result<(), String> {
        if self.transaction_db && self.optimistic_transaction_db {
            return Err(
                "--transaction_db and --optimistic_transaction_db cannot be used \
                        together: choose pessimistic or optimistic transactions"
                    .into(),
            );
        }
        if !(1..=9999).contains(&self.transaction_sets) {
            return Err(format!(
                "--transaction_sets must be between 1 and 9999 (a set's number is a 4-digit \
                 key prefix), not {}",
                self.transaction_sets
            ));
        }
        Ok(())
    }

    /// The blob flags that the engine cannot use, as an error naming them. LMDB has no blob
    /// files: a run that asks for them is refused rather than measured without them.
    pub fn check_blob_flags(&self) -> Result<(), String> {
        let set = self.options.blob_flags_set();
        if self.engine == super::engine::EngineKind::Lmdb && !set.is_empty() {
            return Err(format!(
                "{} cannot be used with --engine=lmdb: LMDB keeps every value in its \
                 B-tree's pages and has no blob files",
                set.join(", ")
            ));
        }
        Ok(())
    }

    /// YCSB's record count of ycsb_load.
    pub fn ycsb_records(&self) -> u64 {
        match self.ycsb_records {
            n if n < 0 => self.num,
            n => n as u64,
        }
    }

    /// YCSB's operation count of a request step.
    pub fn ycsb_operations(&self) -> u64 {
        match self.ycsb_operations {
            n if n < 0 => self.num,
            n => n as u64,
        }
    }

    /// Keys the expanding range starts with.
    pub fn expand_start(&self) -> u64 {
        match self.expand_start {
            n if n < 0 => (self.num / 100).max(1),
            n => n as u64,
        }
    }

    /// Keys the expanding range grows by.
    pub fn expand_step(&self) -> u64 {
        match self.expand_step {
            n if n < 0 => (self.num / 10).max(1),
            n => n as u64,
        }
    }

    /// Reads per thread.
    pub fn reads(&self) -> u64 {
        if self.reads < 0 {
            self.num
        } else {
            self.reads as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(flags: &[&str]) -> Result<BenchArgs, clap::Error> {
        crate::engine_flags::parse_flags(flags)
    }

    #[test]
    fn db_bench_flag_forms_parse() {
        let a = parse(&[
            "--num=10",
            "--disable_wal=1",
            "--sync",
            "--use_existing_db=0",
            "--benchmarks=fillseq,readrandom",
            "--reads=-1",
            "--compression_type=none",
            "--bloom_bits=10",
        ])
        .unwrap();
        assert_eq!(a.num, 10);
        assert!(a.disable_wal && a.options.sync && !a.use_existing_db);
        assert_eq!(a.reads(), 10);
        // As with gflags, a repeated flag takes its last value.
        let a = parse(&["--num=10", "--disable_wal=1", "--num=20", "--disable_wal=0"]).unwrap();
        assert_eq!(a.num, 20);
        assert!(!a.disable_wal);
    }

    #[test]
    fn blob_flags_are_refused_on_lmdb_naming_them_and_taken_elsewhere() {
        for engine in ["strata", "rocksdb", "lmdb"] {
            let engine_flag = format!("--engine={engine}");
            let plain = parse(&[&engine_flag]).unwrap();
            assert_eq!(plain.check_blob_flags(), Ok(()), "{engine}");
            let blobs =
                parse(&[&engine_flag, "--enable_blob_files", "--min_blob_size=512"]).unwrap();
            match (engine, blobs.check_blob_flags()) {
                ("lmdb", Err(e)) => assert!(
                    e.contains("--enable_blob_files=true, --min_blob_size=512")
                        && e.contains("--engine=lmdb"),
                    "{e}"
                ),
                (_, result) => assert_eq!(result, Ok(()), "{engine}"),
            }
        }
    }

    #[test]
    fn unknown_flags_are_errors_that_name_them() {
        let e = parse(&["--max_sequential_skip_in_iterations=8"]).unwrap_err();
        assert!(
            e.to_string().contains("max_sequential_skip_in_iterations"),
            "{e}"
        );
    }
}
