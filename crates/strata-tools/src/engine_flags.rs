//! The engine's options as command-line flags, shared by `strata bench` and `strata stress`:
//! db_bench's names, one parser for booleans, and one function from the flags to
//! [`strata::Options`].
//!
//! The defaults written here are db_bench's (the bench's). A command that wants others sets
//! them with `mut_arg` on its own flag struct (`strata stress` starts from tiny sizes so that
//! flushes and compactions happen all the time).

use std::sync::Arc;

use clap::Args;
use strata::{ChecksumType, Compression, DataBlockIndexType, IndexType, PrepopulateBlockCache};
use strata::{CompactionStyle, Options, WriteOptions};
use strata::{MergeOperator, StringAppend, UInt64Add};

/// Parses a gflags-style boolean: `1`, `0`, `true`, `false` (a bare `--flag` means true).
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "false" | "FALSE" | "False" => Ok(false),
        other => Err(format!("expected 0, 1, true or false, got {other:?}")),
    }
}

/// The merge operators `--merge_operator` names, as db_bench spells them.
pub const MERGE_OPERATORS: [&str; 2] = ["uint64add", "stringappend"];

/// The merge operator named `name` (`""`: none); `stringappend` uses db_bench's `,`.
pub fn merge_operator(name: &str) -> Result<Option<Arc<dyn MergeOperator>>, String> {
    Ok(match name {
        "" => None,
        "uint64add" => Some(Arc::new(UInt64Add)),
        "stringappend" => Some(Arc::new(StringAppend::new(b","))),
        other => {
            return Err(format!(
                "--merge_operator={other} is not supported ({})",
                MERGE_OPERATORS.join(", ")
            ))
        }
    })
}

/// Checks a `--merge_operator` value.
fn parse_merge_operator(s: &str) -> Result<String, String> {
    merge_operator(s).map(|_| s.to_string())
}

/// Parses a `--data_block_index_type` value, db_bench's numbers: 0 binary search, 1 binary
/// search and hash.
fn parse_data_block_index_type(s: &str) -> Result<DataBlockIndexType, String> {
    match s {
        "0" => Ok(DataBlockIndexType::BinarySearch),
        "1" => Ok(DataBlockIndexType::BinaryAndHash),
        other => Err(format!(
            "expected 0 (binary search) or 1 (binary search and hash), got {other:?}"
        )),
    }
}

/// Parses a `--checksum_type` value, db_bench's numbers (RocksDB's `ChecksumType`): 1
/// crc32c, 4 xxh3.
fn parse_checksum_type(s: &str) -> Result<ChecksumType, String> {
    s.parse::<u8>()
        .ok()
        .and_then(ChecksumType::from_byte)
        .ok_or_else(|| format!("checksum type {s:?} is not supported (1 = crc32c, 4 = xxh3)"))
}

/// Checks a `--compression_type` value: a name [`Compression::from_name`] knows.
fn parse_compression(s: &str) -> Result<String, String> {
    match Compression::from_name(s) {
        Some(_) => Ok(s.to_string()),
        None => Err(format!(
            "compression {s:?} is not supported (none, snappy, lz4, zstd)"
        )),
    }
}

/// Flags that set the engine's options (and `--sync`, the one write option both commands
/// take). Names and defaults follow RocksDB's db_bench.
#[derive(Args, Debug, Clone)]
#[command(rename_all = "snake_case", next_help_heading = "Engine options")]
pub struct EngineFlags {
    /// fdatasync the WAL on every write.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub sync: bool,

    /// Memtable size in bytes before it is switched.
    #[arg(long, default_value_t = 64 << 20)]
    pub write_buffer_size: usize,

    /// Most memtables held in memory.
    #[arg(long, default_value_t = 2)]
    pub max_write_buffer_number: usize,

    /// Bytes of each memtable's bloom filter as a fraction of --write_buffer_size (0: none);
    /// the filter holds whole keys with --memtable_whole_key_filtering.
    #[arg(long, default_value_t = 0.0)]
    pub memtable_bloom_size_ratio: f64,

    /// Bytes of each memtable's point index (a hash index of its user keys, which gets use
    /// instead of a skiplist search) as a fraction of --write_buffer_size (0: none). Strata
    /// only; the library's default.
    #[arg(long, default_value_t = 0.125)]
    pub memtable_point_index_ratio: f64,

    /// Put whole keys in the memtable bloom filter, so gets skip memtables without the key.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub memtable_whole_key_filtering: bool,

    /// The merge operator of `Merge` writes: uint64add (8-byte little-endian integers added)
    /// or stringappend (operands joined with `,`); empty for none.
    #[arg(long, default_value = "", value_parser = parse_merge_operator)]
    pub merge_operator: String,

    /// Compression of table data blocks: none, snappy, lz4, zstd.
    #[arg(long, default_value = "snappy", value_parser = parse_compression)]
    pub compression_type: String,

    /// Bloom filter bits per key; negative or 0 means no filter.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub bloom_bits: i64,

    /// Bytes of block cache; 0 or negative disables it.
    #[arg(long, default_value_t = 8 << 20, allow_negative_numbers = true)]
    pub cache_size: i64,

    /// Keep index and filter blocks in the block cache instead of pinned with open tables.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub cache_index_and_filter_blocks: bool,

    /// Partitioned index and filters: the two-level index (as --partition_index) and the
    /// filter cut into partitions with it (db_bench's flag).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub partition_index_and_filters: bool,

    /// A two-level index: index partitions of --metadata_block_size bytes, read through the
    /// block cache, under a top-level index kept with each open table.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub partition_index: bool,

    /// Target size in bytes of index and filter partitions.
    #[arg(long, default_value_t = 4096)]
    pub metadata_block_size: usize,

    /// With --cache_index_and_filter_blocks, keep the top-level index and filter blocks of
    /// partitioned tables pinned with the open table instead of in the cache.
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub pin_top_level_index_and_filter: bool,

    /// How a lookup finds its entry in a data block: 0 binary search of the restart points,
    /// 1 a hash index of the block's user keys beside it (db_bench's numbers).
    #[arg(long, default_value = "0", value_parser = parse_data_block_index_type)]
    pub data_block_index_type: DataBlockIndexType,

    /// With --data_block_index_type=1, user keys per bucket of each data block's hash index.
    #[arg(long, default_value_t = 0.75)]
    pub data_block_hash_table_util_ratio: f64,
    /// With --cache_index_and_filter_blocks, keep the index and filter blocks of level-0
    /// tables pinned with the open table instead of in the cache.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub pin_l0_filter_and_index_blocks_in_cache: bool,

    /// 1: flushes put the data blocks they write in the block cache (RocksDB's
    /// prepopulate_block_cache kFlushOnly); 0: they do not.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub prepopulate_block_cache: u8,

    /// Compactions put in the block cache the blocks they write from input blocks readers
    /// found there (Strata's `warm_compaction_outputs`).
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub warm_compaction_outputs: bool,

    /// The most table files held open at once; -1 (the default, as in db_bench) keeps every
    /// file open once read, in both engines.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub open_files: i64,

    /// Read tables for user reads with direct IO (O_DIRECT), around the page cache.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub use_direct_reads: bool,

    /// Write flush and compaction outputs and read compaction inputs with direct IO.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub use_direct_io_for_flush_and_compaction: bool,

    /// Read tables through read-only memory mappings (allow_mmap_reads).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub mmap_read: bool,

    /// Bytes a compaction reads ahead in each input (Strata: with direct IO only).
    #[arg(long, default_value_t = 2 << 20)]
    pub compaction_readahead_size: usize,

    /// Target size of table data blocks in bytes.
    #[arg(long, default_value_t = 4096)]
    pub block_size: usize,

    /// Percent short of --block_size a data block may be cut so that its next entry does not
    /// take it past that size (0: cut only once the size is reached). Strata only: the
    /// rocksdb crate has no setter, and RocksDB keeps its default, also 10.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub block_size_deviation: u32,

    /// How hard to erase a deleted table's blocks from the block cache: 0 never; N erases
    /// while at least 0.99^(N-1) of the blocks tried were cached (RocksDB's
    /// uncache_aggressiveness). Unset: each engine's default (Strata 300, RocksDB 0).
    #[arg(long)]
    pub uncache_aggressiveness: Option<u32>,

    /// Keys between restart points of data blocks (each restart key is stored whole and
    /// found by binary search; the ones between are prefix-compressed and scanned).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub block_restart_interval: u32,

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

    /// L0 files (leveled) or sorted runs (universal) that trigger a compaction.
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

    /// Leveled: merge L0 into the level below once reads have spent on its files about what
    /// the merge costs, below the file-count trigger (Strata only: RocksDB has no such rule).
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub read_triggered_compaction: bool,

    /// Background threads: one flushes, the others compact.
    #[arg(long, default_value_t = 2)]
    pub max_background_jobs: usize,

    /// Threads one compaction may be split into (key ranges merged in parallel).
    #[arg(long, default_value_t = 1)]
    pub max_subcompactions: usize,

    /// Bytes per second flushes and compactions may write (a rate limiter); 0 = no limit.
    #[arg(long, default_value_t = 0)]
    pub rate_limiter_bytes_per_sec: u64,

    /// One memory budget for the memtables of all column families; 0 = none.
    #[arg(long, default_value_t = 0)]
    pub db_write_buffer_size: usize,

    /// Bytes of live WALs past which the families holding the oldest are flushed; 0 = four
    /// times the memtable memory.
    #[arg(long, default_value_t = 0)]
    pub max_total_wal_size: u64,

    /// Keep what open replays from the WALs in the active memtable instead of flushing it
    /// (when it fits one memtable): a restart then writes nothing.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub avoid_flush_during_recovery: bool,

    /// Hold each write's WAL record in memory until a megabyte of them, a synced write, a
    /// memtable switch or close (RocksDB's manual_wal_flush): a write makes no system call,
    /// and a killed process loses the writes held.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub manual_wal_flush: bool,

    /// Compression of WAL records (RocksDB's wal_compression): none, snappy, lz4, zstd. A
    /// record is stored compressed when that saves an eighth of it. RocksDB takes zstd only.
    #[arg(long, default_value = "none", value_parser = parse_compression)]
    pub wal_compression: String,

    /// 0 = leveled, 1 = universal, 2 = FIFO (every table in L0, the oldest deleted past
    /// --fifo_compaction_max_table_files_size_mb).
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

    /// Key-value separation: flushes and compactions write values of at least
    /// --min_blob_size bytes to blob files and keep a reference in the tables (RocksDB's
    /// integrated BlobDB).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub enable_blob_files: bool,

    /// With --enable_blob_files, the smallest value kept in a blob file (smaller ones stay
    /// in the tables).
    #[arg(long, default_value_t = 0)]
    pub min_blob_size: u64,

    /// Blob files are cut at this size.
    #[arg(long, default_value_t = 256 << 20)]
    pub blob_file_size: u64,

    /// With --enable_blob_files, writes put large values straight into blob files and the
    /// WAL records their references: each value is written once (Strata only).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub blob_separation_at_write: bool,

    /// Compactions move the live values of the oldest blob files into new ones, so that the
    /// old files can be deleted.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub enable_blob_garbage_collection: bool,

    /// The oldest fraction of the blob files whose values garbage collection moves (0 to 1).
    #[arg(long, default_value_t = 0.25)]
    pub blob_garbage_collection_age_cutoff: f64,

    /// Garbage fraction of the oldest blob files at which the tables referring to them are
    /// compacted (0 to 1; 1 turns it off).
    #[arg(long, default_value_t = 1.0)]
    pub blob_garbage_collection_force_threshold: f64,

    /// FIFO (--compaction_style=2): megabytes of table files past which the oldest are
    /// deleted. Default 1024, the library's (db_bench's 0 would delete every table; Strata
    /// refuses 0).
    #[arg(long, default_value_t = 1024)]
    pub fifo_compaction_max_table_files_size_mb: u64,

    /// FIFO: merge small tables in a row into one (db_bench's default, true).
    #[arg(long, default_value = "true", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub fifo_compaction_allow_compaction: bool,

    /// FIFO: tables older than this many seconds are deleted (RocksDB's `ttl`); 0 never.
    #[arg(long, default_value_t = 0)]
    pub fifo_compaction_ttl: u64,

    /// Leveled: tables older than this many seconds are rewritten; 0 never.
    #[arg(long, default_value_t = 0)]
    pub periodic_compaction_seconds: u64,

    /// The compressor's level (zstd: -131072 to 22); 32767, db_bench's default, is the
    /// compressor's own default.
    #[arg(long, default_value_t = 32767, allow_negative_numbers = true)]
    pub compression_level: i32,

    /// Bytes of the zstd dictionary of each table (RocksDB's `max_dict_bytes`); 0 none.
    #[arg(long, default_value_t = 0)]
    pub compression_max_dict_bytes: u32,

    /// Bytes of samples a zstd dictionary is trained on (RocksDB's `zstd_max_train_bytes`);
    /// 0 takes the samples as the dictionary, untrained.
    #[arg(long, default_value_t = 0)]
    pub compression_zstd_max_train_bytes: u32,

    /// Block checksums, RocksDB's numbers: 1 crc32c (the library's default, kept here so
    /// that runs compare with earlier ones), 4 xxh3.
    #[arg(long, default_value = "1", value_parser = parse_checksum_type)]
    pub checksum_type: ChecksumType,
}

impl EngineFlags {
    /// Strata's options for these flags (`create_if_missing` is left to the caller).
    pub fn options(&self) -> Result<Options, String> {
        let compaction_style = match self.compaction_style {
            0 => CompactionStyle::Leveled,
            1 => CompactionStyle::Universal,
            2 => CompactionStyle::Fifo,
            other => {
                return Err(format!(
                    "--compaction_style={other} is not supported (0 = leveled, 1 = universal, \
                     2 = FIFO)"
                ))
            }
        };
        let compression = Compression::from_name(&self.compression_type).ok_or_else(|| {
            format!(
                "--compression_type={} is not supported",
                self.compression_type
            )
        })?;
        let mut options = Options::default();
        options.write_buffer_size = self.write_buffer_size;
        options.max_write_buffer_number = self.max_write_buffer_number;
        options.memtable_prefix_bloom_size_ratio = self.memtable_bloom_size_ratio;
        options.memtable_whole_key_filtering = self.memtable_whole_key_filtering;
        options.memtable_point_index_ratio = self.memtable_point_index_ratio;
        options.compression = compression;
        options.bloom_bits_per_key = self.bloom_bits.clamp(0, 100) as u32;
        options.block_cache_size = self.cache_size.max(0) as usize;
        options.cache_index_and_filter_blocks = self.cache_index_and_filter_blocks;
        options.index_type = match self.partition_index || self.partition_index_and_filters {
            true => IndexType::TwoLevelIndexSearch,
            false => IndexType::BinarySearch,
        };
        options.partition_filters = self.partition_index_and_filters;
        options.metadata_block_size = self.metadata_block_size;
        options.pin_top_level_index_and_filter = self.pin_top_level_index_and_filter;
        options.data_block_index_type = self.data_block_index_type;
        options.data_block_hash_table_util_ratio = self.data_block_hash_table_util_ratio;
        options.pin_l0_filter_and_index_blocks_in_cache =
            self.pin_l0_filter_and_index_blocks_in_cache;
        options.prepopulate_block_cache = match self.prepopulate_block_cache {
            1 => PrepopulateBlockCache::FlushOnly,
            _ => PrepopulateBlockCache::Disable,
        };
        options.block_size = self.block_size;
        options.block_size_deviation = self.block_size_deviation;
        if let Some(a) = self.uncache_aggressiveness {
            options.uncache_aggressiveness = a;
        }
        options.block_restart_interval = self.block_restart_interval as usize;
        options.warm_compaction_outputs = self.warm_compaction_outputs;
        options.max_open_files = match self.open_files {
            n if n < 0 => Options::UNLIMITED_OPEN_FILES,
            n => n.max(1) as usize,
        };
        options.use_direct_reads = self.use_direct_reads;
        options.use_direct_io_for_flush_and_compaction =
            self.use_direct_io_for_flush_and_compaction;
        options.compaction_readahead_size = self.compaction_readahead_size;
        options.allow_mmap_reads = self.mmap_read;
        options.target_file_size_base = self.target_file_size_base;
        options.max_bytes_for_level_base = self.max_bytes_for_level_base;
        options.max_bytes_for_level_multiplier = self.max_bytes_for_level_multiplier;
        options.num_levels = self.num_levels;
        options.level0_file_num_compaction_trigger = self.level0_file_num_compaction_trigger;
        options.level0_slowdown_writes_trigger = self.level0_slowdown_writes_trigger;
        options.level0_stop_writes_trigger = self.level0_stop_writes_trigger;
        options.disable_auto_compactions = self.disable_auto_compactions;
        options.read_triggered_compaction = self.read_triggered_compaction;
        options.compaction_style = compaction_style;
        options.universal.size_ratio = self.universal_size_ratio;
        options.universal.min_merge_width = self.universal_min_merge_width;
        options.universal.max_merge_width = match self.universal_max_merge_width {
            0 => usize::MAX,
            n => n,
        };
        options.universal.max_size_amplification_percent =
            self.universal_max_size_amplification_percent;
        options.max_background_jobs = self.max_background_jobs;
        options.max_subcompactions = self.max_subcompactions;
        if self.rate_limiter_bytes_per_sec > 0 {
            options.rate_limiter = Some(Arc::new(strata::RateLimiter::new(
                self.rate_limiter_bytes_per_sec,
            )));
        }
        options.db_write_buffer_size = self.db_write_buffer_size;
        options.max_total_wal_size = self.max_total_wal_size;
        options.avoid_flush_during_recovery = self.avoid_flush_during_recovery;
        options.manual_wal_flush = self.manual_wal_flush;
        options.wal_compression =
            Compression::from_name(&self.wal_compression).ok_or_else(|| {
                format!(
                    "--wal_compression={} is not supported",
                    self.wal_compression
                )
            })?;
        options.max_compaction_bytes = self.max_compaction_bytes;
        options.soft_pending_compaction_bytes_limit = self.soft_pending_compaction_bytes_limit;
        options.hard_pending_compaction_bytes_limit = self.hard_pending_compaction_bytes_limit;
        options.merge_operator = merge_operator(&self.merge_operator)?;
        options.enable_blob_files = self.enable_blob_files;
        options.min_blob_size = self.min_blob_size;
        options.blob_file_size = self.blob_file_size;
        options.blob_separation_at_write = self.blob_separation_at_write;
        options.enable_blob_garbage_collection = self.enable_blob_garbage_collection;
        options.blob_garbage_collection_age_cutoff = self.blob_garbage_collection_age_cutoff;
        options.blob_garbage_collection_force_threshold =
            self.blob_garbage_collection_force_threshold;
        options.fifo.max_table_files_size = self
            .fifo_compaction_max_table_files_size_mb
            .saturating_mul(1 << 20);
        options.fifo.allow_compaction = self.fifo_compaction_allow_compaction;
        options.table_ttl_seconds = self.fifo_compaction_ttl;
        options.periodic_compaction_seconds = self.periodic_compaction_seconds;
        options.compression_opts.level = self.compression_level;
        options.compression_opts.max_dict_bytes = self.compression_max_dict_bytes;
        options.compression_opts.zstd_max_train_bytes = self.compression_zstd_max_train_bytes;
        options.checksum = self.checksum_type;
        Ok(options)
    }

    /// The blob flags given other values than their defaults (which are the library's and
    /// db_bench's), as `--name=value`: what an engine without blob files must refuse.
    pub fn blob_flags_set(&self) -> Vec<String> {
        let d = Options::default();
        let text = |v: &dyn ToString| v.to_string();
        [
            (
                "enable_blob_files",
                text(&self.enable_blob_files),
                text(&d.enable_blob_files),
            ),
            (
                "min_blob_size",
                text(&self.min_blob_size),
                text(&d.min_blob_size),
            ),
            (
                "blob_file_size",
                text(&self.blob_file_size),
                text(&d.blob_file_size),
            ),
            (
                "blob_separation_at_write",
                text(&self.blob_separation_at_write),
                text(&d.blob_separation_at_write),
            ),
            (
                "enable_blob_garbage_collection",
                text(&self.enable_blob_garbage_collection),
                text(&d.enable_blob_garbage_collection),
            ),
            (
                "blob_garbage_collection_age_cutoff",
                text(&self.blob_garbage_collection_age_cutoff),
                text(&d.blob_garbage_collection_age_cutoff),
            ),
            (
                "blob_garbage_collection_force_threshold",
                text(&self.blob_garbage_collection_force_threshold),
                text(&d.blob_garbage_collection_force_threshold),
            ),
        ]
        .into_iter()
        .filter(|(_, value, default)| value != default)
        .map(|(name, value, _)| format!("--{name}={value}"))
        .collect()
    }

    /// The index settings in a line (the header's `Index:`), when the index is partitioned
    /// or the data blocks carry hash indexes.
    pub fn index_settings(&self) -> Option<String> {
        let hash = (self.data_block_index_type == DataBlockIndexType::BinaryAndHash).then(|| {
            format!(
                "data-block hash index (util ratio {})",
                self.data_block_hash_table_util_ratio
            )
        });
        let parts: Vec<String> = [self.partition_settings(), hash]
            .into_iter()
            .flatten()
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// The partitioned index and filter settings in a line, when the index is partitioned.
    pub fn partition_settings(&self) -> Option<String> {
        if !(self.partition_index || self.partition_index_and_filters) {
            return None;
        }
        let filters = match self.partition_index_and_filters {
            true => "partitioned filters",
            false => "whole filters",
        };
        let top = match (
            self.cache_index_and_filter_blocks,
            self.pin_top_level_index_and_filter,
        ) {
            (true, false) => "top level in the block cache",
            _ => "top level pinned",
        };
        Some(format!(
            "two-level index, {filters}, {}-byte partitions, {top}",
            self.metadata_block_size
        ))
    }

    /// The blob settings in a line, when `--enable_blob_files` is on.
    pub fn blob_settings(&self) -> Option<String> {
        if !self.enable_blob_files {
            return None;
        }
        let gc = if self.enable_blob_garbage_collection {
            format!(
                "garbage collection of the oldest {}% of the files, forced at {}% garbage",
                self.blob_garbage_collection_age_cutoff * 100.0,
                self.blob_garbage_collection_force_threshold * 100.0
            )
        } else {
            "no garbage collection".to_string()
        };
        let when = match self.blob_separation_at_write {
            true => "as they are written (not in the WAL)",
            false => "at flush",
        };
        Some(format!(
            "values of {} bytes or more, separated {when}, files cut at {} bytes, {gc}",
            self.min_blob_size, self.blob_file_size
        ))
    }

    /// The write options of `--sync`, with or without the WAL.
    pub fn write_options(&self, disable_wal: bool) -> WriteOptions {
        let mut write_options = WriteOptions::default();
        write_options.sync = self.sync;
        write_options.disable_wal = disable_wal;
        write_options
    }
}

/// Parses `flags` (the words after the command's name) into the flag struct `T`.
#[cfg(test)]
pub fn parse_flags<T, S>(flags: &[S]) -> Result<T, clap::Error>
where
    T: Args + clap::FromArgMatches,
    S: Into<std::ffi::OsString> + Clone,
{
    let command = T::augment_args(clap::Command::new("strata"));
    let argv = std::iter::once("strata".into()).chain(flags.iter().cloned().map(Into::into));
    T::from_arg_matches(&command.try_get_matches_from(argv)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(flags: &[&str]) -> Result<EngineFlags, clap::Error> {
        parse_flags(flags)
    }

    #[test]
    fn booleans_parse_as_gflags_does() {
        for (text, want) in [
            ("1", Some(true)),
            ("true", Some(true)),
            ("TRUE", Some(true)),
            ("True", Some(true)),
            ("0", Some(false)),
            ("false", Some(false)),
            ("FALSE", Some(false)),
            ("False", Some(false)),
            ("yes", None),
            ("", None),
            ("2", None),
        ] {
            assert_eq!(parse_bool(text).ok(), want, "{text:?}");
        }
        assert!(parse(&["--sync"]).unwrap().sync, "a bare flag means true");
        assert!(!parse(&[]).unwrap().sync);
    }

    #[test]
    fn every_flag_reaches_its_option() {
        let f = parse(&[
            "--write_buffer_size=1000",
            "--max_write_buffer_number=3",
            "--memtable_bloom_size_ratio=0.1",
            "--memtable_whole_key_filtering",
            "--memtable_point_index_ratio=0.25",
            "--compression_type=zstd",
            "--bloom_bits=7",
            "--cache_size=-1",
            "--cache_index_and_filter_blocks",
            "--partition_index_and_filters",
            "--metadata_block_size=512",
            "--pin_top_level_index_and_filter=false",
            "--pin_l0_filter_and_index_blocks_in_cache",
            "--prepopulate_block_cache=1",
            "--block_size=1024",
            "--block_size_deviation=20",
            "--uncache_aggressiveness=7",
            "--block_restart_interval=4",
            "--warm_compaction_outputs=false",
            "--use_direct_reads",
            "--use_direct_io_for_flush_and_compaction=1",
            "--mmap_read",
            "--compaction_readahead_size=65536",
            "--target_file_size_base=2000",
            "--max_bytes_for_level_base=3000",
            "--max_bytes_for_level_multiplier=8",
            "--num_levels=5",
            "--level0_file_num_compaction_trigger=6",
            "--level0_slowdown_writes_trigger=7",
            "--level0_stop_writes_trigger=9",
            "--disable_auto_compactions=1",
            "--read_triggered_compaction=0",
            "--max_background_jobs=4",
            "--max_subcompactions=3",
            "--rate_limiter_bytes_per_sec=1048576",
            "--db_write_buffer_size=2097152",
            "--max_total_wal_size=16",
            "--avoid_flush_during_recovery",
            "--wal_compression=lz4",
            "--compaction_style=1",
            "--universal_size_ratio=5",
            "--universal_min_merge_width=3",
            "--universal_max_merge_width=0",
            "--universal_max_size_amplification_percent=150",
            "--soft_pending_compaction_bytes_limit=11",
            "--hard_pending_compaction_bytes_limit=12",
            "--max_compaction_bytes=13",
            "--merge_operator=uint64add",
            "--enable_blob_files",
            "--min_blob_size=14",
            "--blob_file_size=15",
            "--enable_blob_garbage_collection=1",
            "--blob_garbage_collection_age_cutoff=0.5",
            "--blob_garbage_collection_force_threshold=0.75",
        ])
        .unwrap();
        let o = f.options().unwrap();
        assert_eq!(o.write_buffer_size, 1000);
        assert_eq!(o.max_write_buffer_number, 3);
        assert_eq!(o.memtable_prefix_bloom_size_ratio, 0.1);
        assert!(o.memtable_whole_key_filtering);
        assert_eq!(o.memtable_point_index_ratio, 0.25);
        assert_eq!(o.wal_compression, Compression::Lz4);
        assert_eq!(o.compression, Compression::Zstd);
        assert_eq!(o.bloom_bits_per_key, 7);
        assert_eq!(o.block_cache_size, 0);
        assert!(o.cache_index_and_filter_blocks);
        assert_eq!(o.index_type, IndexType::TwoLevelIndexSearch);
        assert!(o.partition_filters);
        assert_eq!(o.metadata_block_size, 512);
        assert!(!o.pin_top_level_index_and_filter);
        assert!(o.pin_l0_filter_and_index_blocks_in_cache);
        assert_eq!(o.prepopulate_block_cache, PrepopulateBlockCache::FlushOnly);
        assert_eq!(o.block_size, 1024);
        assert_eq!(o.block_size_deviation, 20);
        assert_eq!(o.uncache_aggressiveness, 7);
        assert_eq!(o.block_restart_interval, 4);
        assert!(!o.warm_compaction_outputs);
        assert!(o.use_direct_reads && o.use_direct_io_for_flush_and_compaction);
        assert!(o.allow_mmap_reads);
        assert_eq!(o.compaction_readahead_size, 65536);
        assert_eq!(o.target_file_size_base, 2000);
        assert_eq!(o.max_bytes_for_level_base, 3000);
        assert_eq!(o.max_bytes_for_level_multiplier, 8.0);
        assert_eq!(o.num_levels, 5);
        assert_eq!(o.level0_file_num_compaction_trigger, 6);
        assert_eq!(o.level0_slowdown_writes_trigger, 7);
        assert_eq!(o.level0_stop_writes_trigger, 9);
        assert!(o.disable_auto_compactions);
        assert!(!o.read_triggered_compaction);
        assert_eq!(o.max_background_jobs, 4);
        assert_eq!(
            o.rate_limiter.as_ref().map(|r| r.bytes_per_second()),
            Some(1 << 20)
        );
        assert_eq!(o.db_write_buffer_size, 2 << 20);
        assert_eq!(o.max_total_wal_size, 16);
        assert!(o.avoid_flush_during_recovery);
        assert_eq!(o.max_subcompactions, 3);
        assert_eq!(o.compaction_style, CompactionStyle::Universal);
        assert_eq!(o.universal.size_ratio, 5);
        assert_eq!(o.universal.min_merge_width, 3);
        assert_eq!(o.universal.max_merge_width, usize::MAX);
        assert_eq!(o.universal.max_size_amplification_percent, 150);
        assert_eq!(o.soft_pending_compaction_bytes_limit, 11);
        assert_eq!(o.hard_pending_compaction_bytes_limit, 12);
        assert_eq!(o.max_compaction_bytes, 13);
        assert_eq!(
            o.merge_operator.map(|m| m.name().to_string()).as_deref(),
            Some("uint64add")
        );
        assert!(o.enable_blob_files);
        assert_eq!(o.min_blob_size, 14);
        assert_eq!(o.blob_file_size, 15);
        assert!(o.enable_blob_garbage_collection);
        assert_eq!(o.blob_garbage_collection_age_cutoff, 0.5);
        assert_eq!(o.blob_garbage_collection_force_threshold, 0.75);
    }

    /// `--partition_index` alone partitions the index only; `--partition_index_and_filters`
    /// both; neither keeps one index block, as the library does by default.
    #[test]
    fn partition_flags_choose_the_index_layout() {
        let layout = |flags: &[&str]| {
            let o = parse(flags).unwrap().options().unwrap();
            (o.index_type, o.partition_filters, o.metadata_block_size)
        };
        let two_level = IndexType::TwoLevelIndexSearch;
        /// The flags, and the index type, partition_filters and metadata_block_size.
        type Case<'a> = (&'a [&'a str], (IndexType, bool, usize));
        #[rustfmt::skip]
        let cases: [Case; 4] = [
            (&[], (IndexType::BinarySearch, false, 4096)),
            (&["--partition_index"], (two_level, false, 4096)),
            (&["--partition_index_and_filters"], (two_level, true, 4096)),
            (&["--partition_index=true", "--metadata_block_size=100"], (two_level, false, 100)),
        ];
        for (flags, want) in cases {
            assert_eq!(layout(flags), want, "{flags:?}");
        }
        assert_eq!(parse(&[]).unwrap().partition_settings(), None);
        let line = parse(&["--partition_index_and_filters"])
            .unwrap()
            .partition_settings()
            .unwrap();
        assert!(line.contains("partitioned filters"), "{line}");
        let o = parse(&["--partition_index_and_filters"])
            .unwrap()
            .options()
            .unwrap();
        assert!(o.pin_top_level_index_and_filter);
        o.validate().unwrap();
    }

    /// `--data_block_index_type` takes db_bench's numbers and sets the library's option with
    /// the ratio; the header's index line names it; another number is refused naming both.
    #[test]
    fn data_block_index_flags_set_the_hash_index() {
        let hash = DataBlockIndexType::BinaryAndHash;
        /// The flags, and the data block index type and ratio.
        type Case<'a> = (&'a [&'a str], (DataBlockIndexType, f64));
        #[rustfmt::skip]
        let cases: [Case; 4] = [
            (&[], (DataBlockIndexType::BinarySearch, 0.75)),
            (&["--data_block_index_type=0"], (DataBlockIndexType::BinarySearch, 0.75)),
            (&["--data_block_index_type=1"], (hash, 0.75)),
            (&["--data_block_index_type=1", "--data_block_hash_table_util_ratio=0.5"], (hash, 0.5)),
        ];
        for (flags, want) in cases {
            let o = parse(flags).unwrap().options().unwrap();
            let got = (o.data_block_index_type, o.data_block_hash_table_util_ratio);
            assert_eq!(got, want, "{flags:?}");
            o.validate().unwrap();
        }
        assert_eq!(parse(&[]).unwrap().index_settings(), None);
        let line = parse(&["--data_block_index_type=1", "--partition_index"])
            .unwrap()
            .index_settings()
            .unwrap();
        assert!(
            line.starts_with("two-level index")
                && line.ends_with("data-block hash index (util ratio 0.75)"),
            "{line}"
        );
        let err = parse(&["--data_block_index_type=2"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("data_block_index_type") && err.contains("got \"2\""),
            "{err}"
        );
    }

    #[test]
    fn defaults_are_db_bench_s_which_differ_from_the_library_s_in_filters_compression_and_files() {
        let o = parse(&[]).unwrap().options().unwrap();
        let library = Options::default();
        assert_eq!((o.bloom_bits_per_key, library.bloom_bits_per_key), (0, 10));
        assert_eq!(
            (o.compression, library.compression),
            (Compression::Snappy, Compression::None)
        );
        assert_eq!(
            (
                o.memtable_whole_key_filtering,
                library.memtable_whole_key_filtering
            ),
            (false, true)
        );
        let mut same = o;
        same.bloom_bits_per_key = library.bloom_bits_per_key;
        same.compression = library.compression;
        same.memtable_whole_key_filtering = library.memtable_whole_key_filtering;
        same.memtable_prefix_bloom_size_ratio = library.memtable_prefix_bloom_size_ratio;
        // db_bench's `--open_files` is -1: every table stays open.
        assert_eq!(
            (same.max_open_files, library.max_open_files),
            (Options::UNLIMITED_OPEN_FILES, 1000)
        );
        same.max_open_files = library.max_open_files;
        // db_bench's `--fifo_compaction_allow_compaction` is true; the library's is false.
        assert_eq!(
            (same.fifo.allow_compaction, library.fifo.allow_compaction),
            (true, false)
        );
        same.fifo.allow_compaction = library.fifo.allow_compaction;
        assert_eq!(format!("{same:?}"), format!("{library:?}"));
    }

    #[test]
    fn blob_flags_away_from_their_defaults_are_named_and_described() {
        let f = parse(&[]).unwrap();
        assert!(f.blob_flags_set().is_empty());
        assert_eq!(f.blob_settings(), None);
        // The default written out is no change.
        let f = parse(&["--enable_blob_files=0", "--blob_file_size=268435456"]).unwrap();
        assert!(f.blob_flags_set().is_empty(), "{:?}", f.blob_flags_set());
        let f = parse(&[
            "--min_blob_size=64",
            "--blob_garbage_collection_age_cutoff=0.5",
        ])
        .unwrap();
        assert_eq!(
            f.blob_flags_set(),
            [
                "--min_blob_size=64",
                "--blob_garbage_collection_age_cutoff=0.5"
            ]
        );
        assert_eq!(f.blob_settings(), None, "off without --enable_blob_files");
        for (flags, settings) in [
            (
                &["--enable_blob_files"][..],
                "values of 0 bytes or more, separated at flush, files cut at 268435456 bytes, no garbage collection",
            ),
            (
                &[
                    "--enable_blob_files",
                    "--min_blob_size=1024",
                    "--blob_file_size=1000000",
                    "--enable_blob_garbage_collection",
                    "--blob_garbage_collection_force_threshold=0.5",
                ][..],
                "values of 1024 bytes or more, separated at flush, files cut at 1000000 bytes, garbage collection \
                 of the oldest 25% of the files, forced at 50% garbage",
            ),
            (
                &["--enable_blob_files", "--blob_separation_at_write"][..],
                "values of 0 bytes or more, separated as they are written (not in the WAL), files cut \
                 at 268435456 bytes, no garbage collection",
            ),
        ] {
            let f = parse(flags).unwrap();
            assert_eq!(f.blob_settings().as_deref(), Some(settings), "{flags:?}");
            assert!(f
                .blob_flags_set()
                .contains(&"--enable_blob_files=true".to_string()));
        }
    }

    #[test]
    fn bad_values_are_errors_that_name_them() {
        for (flag, named) in [
            ("--compression_type=zlib", "zlib"),
            ("--wal_compression=zlib", "zlib"),
            ("--sync=maybe", "maybe"),
            ("--no_such_option=1", "no_such_option"),
            ("--merge_operator=max", "max"),
        ] {
            let e = parse(&[flag]).unwrap_err().to_string();
            assert!(e.contains(named), "{flag}: {e}");
        }
        let e = parse(&["--compaction_style=3"])
            .unwrap()
            .options()
            .unwrap_err();
        assert!(e.contains("--compaction_style=3"), "{e}");
    }

    /// db_bench's dictionary and checksum flags map to RocksDB's option names; a checksum
    /// number Strata does not write is refused by number.
    #[test]
    fn dictionary_and_checksum_flags_map_to_their_options() {
        let o = parse(&[
            "--compression_type=zstd",
            "--compression_max_dict_bytes=16384",
            "--compression_zstd_max_train_bytes=1638400",
            "--checksum_type=4",
        ])
        .unwrap()
        .options()
        .unwrap();
        assert_eq!(o.compression_opts.max_dict_bytes, 16384);
        assert_eq!(o.compression_opts.zstd_max_train_bytes, 1_638_400);
        assert_eq!(o.checksum, strata::ChecksumType::Xxh3);
        let d = parse(&[]).unwrap().options().unwrap();
        assert_eq!(d.checksum, strata::ChecksumType::Crc32c);
        assert_eq!(d.compression_opts.max_dict_bytes, 0);
        for bad in ["--checksum_type=2", "--checksum_type=xxh3"] {
            let e = parse(&[bad]).unwrap_err().to_string();
            assert!(e.contains("checksum type"), "{bad}: {e}");
        }
    }

    #[test]
    fn fifo_and_age_flags_map_to_their_options() {
        let o = parse(&[
            "--compaction_style=2",
            "--fifo_compaction_max_table_files_size_mb=64",
            "--fifo_compaction_allow_compaction=0",
            "--fifo_compaction_ttl=3600",
        ])
        .unwrap()
        .options()
        .unwrap();
        assert_eq!(o.compaction_style, CompactionStyle::Fifo);
        assert_eq!(o.fifo.max_table_files_size, 64 << 20);
        assert!(!o.fifo.allow_compaction);
        assert_eq!(o.table_ttl_seconds, 3600);
        let o = parse(&["--periodic_compaction_seconds=86400"])
            .unwrap()
            .options()
            .unwrap();
        assert_eq!(o.periodic_compaction_seconds, 86400);
        let o = parse(&["--compression_type=zstd", "--compression_level=-3"])
            .unwrap()
            .options()
            .unwrap();
        assert_eq!(o.compression_opts.level, -3);
        let o = parse(&["--compression_type=zstd", "--compression_level=99"])
            .unwrap()
            .options()
            .unwrap();
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("compression level 99"), "{e}");
        // FIFO's size of 0 is refused when the database opens, naming the option.
        let o = parse(&[
            "--compaction_style=2",
            "--fifo_compaction_max_table_files_size_mb=0",
        ])
        .unwrap()
        .options()
        .unwrap();
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("max_table_files_size"), "{e}");
    }
}
