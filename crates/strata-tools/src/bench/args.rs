//! The flags of `strata bench`, with db_bench's names and defaults.

use std::path::PathBuf;

use clap::Args;

/// Parses a gflags-style boolean: `1`, `0`, `true`, `false` (a bare `--flag` means true).
fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "false" | "FALSE" | "False" => Ok(false),
        other => Err(format!("expected 0, 1, true or false, got {other:?}")),
    }
}

/// The text after the flags: which engine uses which flags, built from
/// [`super::engine::unused_flags`] so that the list is written once.
fn engines_help() -> String {
    let lmdb = super::engine::unused_flags(super::engine::EngineKind::Lmdb);
    format!(
        "Any flag not listed above is an error that names it. Every flag above has its effect on
--engine=strata and, mapped to RocksDB's option of the same name, on --engine=rocksdb (where
compact0 and compact1 are not available: the rocksdb crate has no CompactFiles).
With --engine=lmdb these flags are accepted and have no effect (LMDB is a copy-on-write
B-tree: no log, memtable, levels, compaction, compression, filter or cache of its own):
  {}
and flush is an fsync of the data file, the compaction steps do nothing.
The rocksdb and lmdb engines are cargo features, off by default:
  cargo build --release -p strata-tools --features rocksdb,lmdb",
        lmdb.join("\n  ")
    )
}

fn parse_compression(s: &str) -> Result<String, String> {
    match s {
        "none" | "snappy" | "lz4" | "zstd" => Ok(s.to_string()),
        other => Err(format!(
            "compression {other:?} is not supported (none, snappy, lz4, zstd)"
        )),
    }
}

/// `strata bench` flags. Names and defaults follow RocksDB's db_bench.
#[derive(Args, Debug, Clone)]
#[command(after_help = engines_help(), rename_all = "snake_case", args_override_self = true)]
pub struct BenchArgs {
    /// Comma-separated list of steps to run, in order. Writes: fillseq, fillrandom,
    /// filluniquerandom, overwrite, fillsync, deleteseq, deleterandom. Reads: readrandom,
    /// readmissing, readseq, readreverse, seekrandom. Mixed: readwhilewriting,
    /// seekrandomwhilewriting (one extra writer thread), readrandomwriterandom
    /// (--readwritepercent), updaterandom (read-modify-write). Meta: flush, compact0,
    /// compact1, compactall (also "compact"), waitforcompaction, stats, levelstats,
    /// resetstats.
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
    /// the end).
    #[arg(long)]
    pub db: Option<PathBuf>,

    /// Use the existing database instead of destroying it first.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub use_existing_db: bool,

    /// Write without the write-ahead log.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub disable_wal: bool,

    /// fdatasync the WAL on every write.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub sync: bool,

    /// Memtable size in bytes before it is switched.
    #[arg(long, default_value_t = 64 << 20)]
    pub write_buffer_size: usize,

    /// Most memtables held in memory.
    #[arg(long, default_value_t = 2)]
    pub max_write_buffer_number: usize,

    /// Bytes per second the writer of the *whilewriting steps writes; 0 means no limit.
    #[arg(long, default_value_t = 0)]
    pub benchmark_write_rate_limit: u64,

    /// Number of next() calls after each seek in seekrandom.
    #[arg(long, default_value_t = 0)]
    pub seek_nexts: u64,

    /// Print latency percentiles per step.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub histogram: bool,

    /// Compression of table data blocks: none, snappy, lz4, zstd.
    #[arg(long, default_value = "snappy", value_parser = parse_compression)]
    pub compression_type: String,

    /// Bloom filter bits per key; negative or 0 means no filter (db_bench's default, -1).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub bloom_bits: i64,

    /// Bytes of block cache; 0 or negative disables it.
    #[arg(long, default_value_t = 8 << 20, allow_negative_numbers = true)]
    pub cache_size: i64,

    /// Keep index and filter blocks in the block cache instead of pinned with open tables.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub cache_index_and_filter_blocks: bool,

    /// Target size of table data blocks in bytes.
    #[arg(long, default_value_t = 4096)]
    pub block_size: usize,

    /// Compaction output files are cut at this size.
    #[arg(long, default_value_t = 64 << 20)]
    pub target_file_size_base: u64,

    /// Smallest target size of the base level (levels are sized dynamically).
    #[arg(long, default_value_t = 256 << 20)]
    pub max_bytes_for_level_base: u64,

    /// Growth factor between levels.
    #[arg(long, default_value_t = 10.0)]
    pub max_bytes_for_level_multiplier: f64,

    /// Levels of the tree (2 to 7).
    #[arg(long, default_value_t = 7)]
    pub num_levels: usize,

    /// L0 files that trigger a compaction.
    #[arg(long, default_value_t = 4)]
    pub level0_file_num_compaction_trigger: usize,

    /// L0 files at which writes slow down.
    #[arg(long, default_value_t = 20)]
    pub level0_slowdown_writes_trigger: usize,

    /// L0 files at which writes stop.
    #[arg(long, default_value_t = 36)]
    pub level0_stop_writes_trigger: usize,

    /// Run no compaction in the background.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub disable_auto_compactions: bool,

    /// Background threads: one flushes, the others compact.
    #[arg(long, default_value_t = 2)]
    pub max_background_jobs: usize,

    /// Threads one compaction may be split into (key ranges merged in parallel).
    #[arg(long, default_value_t = 1)]
    pub max_subcompactions: usize,

    /// 0 = leveled, 1 = universal (2, FIFO, is not supported).
    #[arg(long, default_value_t = 0)]
    pub compaction_style: u32,

    /// Universal: percent of slack when comparing run sizes.
    #[arg(long, default_value_t = 1)]
    pub universal_size_ratio: u32,

    /// Universal: fewest runs merged at once.
    #[arg(long, default_value_t = 2)]
    pub universal_min_merge_width: usize,

    /// Universal: most runs merged at once (0 = no limit).
    #[arg(long, default_value_t = 0)]
    pub universal_max_merge_width: usize,

    /// Universal: newer runs' bytes, in percent of the oldest run, that force a full merge.
    #[arg(long, default_value_t = 200)]
    pub universal_max_size_amplification_percent: u32,

    /// Pending compaction bytes at which writes are delayed (0 = never).
    #[arg(long, default_value_t = 64 << 30)]
    pub soft_pending_compaction_bytes_limit: u64,

    /// Pending compaction bytes at which writes stop (0 = never).
    #[arg(long, default_value_t = 256 << 30)]
    pub hard_pending_compaction_bytes_limit: u64,

    /// Overlap with the level below at which a compaction output is cut (0 = 25 times
    /// --target_file_size_base).
    #[arg(long, default_value_t = 0)]
    pub max_compaction_bytes: u64,

    /// Percent of operations that are reads in readrandomwriterandom.
    #[arg(long, default_value_t = 90)]
    pub readwritepercent: u32,

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

    /// Print the engine's statistics (the stats step) after the last step.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub statistics: bool,
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
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: BenchArgs,
    }

    fn parse(flags: &[&str]) -> Result<BenchArgs, clap::Error> {
        let mut argv = vec!["bench"];
        argv.extend_from_slice(flags);
        Wrap::try_parse_from(argv).map(|w| w.args)
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
        assert!(a.disable_wal && a.sync && !a.use_existing_db);
        assert_eq!(a.reads(), 10);
        // As with gflags, a repeated flag takes its last value.
        let a = parse(&["--num=10", "--disable_wal=1", "--num=20", "--disable_wal=0"]).unwrap();
        assert_eq!(a.num, 20);
        assert!(!a.disable_wal);
    }

    #[test]
    fn unknown_flags_and_bad_values_are_errors_that_name_them() {
        let e = parse(&["--max_sequential_skip_in_iterations=8"]).unwrap_err();
        assert!(
            e.to_string().contains("max_sequential_skip_in_iterations"),
            "{e}"
        );
        let e = parse(&["--compression_type=zlib"]).unwrap_err();
        assert!(e.to_string().contains("zlib"), "{e}");
        let e = parse(&["--sync=maybe"]).unwrap_err();
        assert!(e.to_string().contains("maybe"), "{e}");
    }
}
