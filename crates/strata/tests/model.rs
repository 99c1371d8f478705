//! The database against a `BTreeMap` model: random puts, merges (string append with `.`),
//! deletes, single-deletes, range deletions, batches,
//! gets, snapshot reads, iterations in both directions with bounds, flushes and reopens, over
//! many seeds, with tiny memtables and level targets so that many flushes and compactions
//! happen (automatic and manual, with snapshots alive), and random table options
//! (compression, block size, restart interval, filters, caches), leveled and universal
//! compaction (the style may change at a reopen), several background jobs and
//! subcompactions. Debug builds check the version invariants after every compaction.
//!
//! Each run draws operations from its seed, writes each to an operation log, then applies it
//! to the database and the model and checks them. When a run fails, its log (the seed in a
//! comment, the options of every open and reopen, every operation up to the failing one) is
//! written to `target/model-failures/seed-<n>.txt`, or to the directory named by
//! `STRATA_MODEL_FAILURES`, and the failure names the file. Replay it, with the same checks
//! and without the generator, with
//!
//! ```text
//! STRATA_MODEL_REPLAY=target/model-failures/seed-12.txt cargo test -p strata --test model
//! ```
//!
//! A log is text, one operation a line, and may be cut down by hand to the lines that
//! matter (the first line must stay an `open`). `STRATA_MODEL_SEED=<n>` reruns one seed;
//! `STRATA_MODEL_SEEDS=<n>` runs seeds 0 to n-1 (40 by default).
//!
//! A second test runs the same operations on databases whose keys are in reverse bytewise
//! order (`reverse=true` in the options of the log: `ReverseBytewiseComparator`), against a
//! model read in that order: iteration, bounds, ranges and range deletions all go the other
//! way. `STRATA_MODEL_REVERSE=1` makes `STRATA_MODEL_SEED` run a seed that way.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use std::sync::Arc;
use strata::internals::Rng;
use strata::{
    CompactionStyle, Compression, DataBlockIndexType, Db, IndexType, Options,
    PrepopulateBlockCache, ReadOptions, ReverseBytewiseComparator, Snapshot, StringAppend,
    WriteBatch, WriteOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// The key order of a run: bytewise, or reversed. The model map is bytewise; whatever
/// depends on the order reads it through this.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Order {
    reverse: bool,
}

impl Order {
    fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        match self.reverse {
            false => a.cmp(b),
            true => b.cmp(a),
        }
    }
    fn lt(self, a: &[u8], b: &[u8]) -> bool {
        self.cmp(a, b) == Ordering::Less
    }
    fn le(self, a: &[u8], b: &[u8]) -> bool {
        self.cmp(a, b) != Ordering::Greater
    }
}

/// Bytes as one token of a log: `""` when empty, `\xNN` for a byte that is not printable
/// or would break the token.
fn token(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "\"\"".into();
    }
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x21..0x7f).contains(&b) && b != b'\\' && b != b'"' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// Undoes [`token`].
fn untoken(s: &str) -> Vec<u8> {
    if s == "\"\"" {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        match (b, tail) {
            (b'\\', [b'x', h, l, tail @ ..]) => {
                let hex = std::str::from_utf8(&[*h, *l]).unwrap().to_string();
                out.push(u8::from_str_radix(&hex, 16).expect("a \\xNN escape"));
                rest = tail;
            }
            _ => {
                out.push(b);
                rest = tail;
            }
        }
    }
    out
}

/// The options a run opens the database with: written to logs as `name=value` pairs. Every
/// field is listed once; the macro derives the text form both ways.
macro_rules! knobs {
    ($($field:ident: $ty:ty),* $(,)?) => {
        #[derive(Debug, Clone, PartialEq)]
        struct Knobs {
            $($field: $ty,)*
        }

        impl fmt::Display for Knobs {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let pairs = [$(format!("{}={}", stringify!($field), self.$field),)*];
                f.write_str(&pairs.join(" "))
            }
        }

        impl FromStr for Knobs {
            type Err = String;
            fn from_str(s: &str) -> Result<Knobs, String> {
                let mut pairs: HashMap<&str, &str> = HashMap::new();
                for pair in s.split_whitespace() {
                    let (k, v) = pair.split_once('=').ok_or(format!("{pair:?}: not name=value"))?;
                    pairs.insert(k, v);
                }
                let knobs = Knobs {
                    $($field: pairs
                        .remove(stringify!($field))
                        .ok_or(concat!("no ", stringify!($field)))?
                        .parse()
                        .map_err(|e| format!("{}: {e}", stringify!($field)))?,)*
                };
                match pairs.keys().next() {
                    Some(unknown) => Err(format!("unknown option {unknown:?}")),
                    None => Ok(knobs),
                }
            }
        }
    };
}

knobs! {
    compression: String,
    wal_compression: String,
    write_buffer_size: usize,
    max_write_buffer_number: usize,
    memtable_bloom_size_ratio: f64,
    memtable_point_index_ratio: f64,
    block_size: usize,
    block_restart_interval: usize,
    bloom_bits_per_key: u32,
    block_cache_size: usize,
    cache_index_and_filter_blocks: bool,
    two_level_index: bool,
    partition_filters: bool,
    metadata_block_size: usize,
    pin_top_level_index_and_filter: bool,
    pin_l0_filter_and_index_blocks_in_cache: bool,
    prepopulate_block_cache: bool,
    warm_compaction_outputs: bool,
    data_block_hash: bool,
    data_block_hash_ratio: f64,
    max_open_files: usize,
    use_direct_reads: bool,
    use_direct_io_for_flush_and_compaction: bool,
    allow_mmap_reads: bool,
    compaction_readahead_size: usize,
    readahead_size: usize,
    level0_file_num_compaction_trigger: usize,
    max_bytes_for_level_base: u64,
    max_bytes_for_level_multiplier: f64,
    num_levels: usize,
    target_file_size_base: u64,
    disable_auto_compactions: bool,
    universal: bool,
    size_ratio: u32,
    max_size_amplification_percent: u32,
    max_merge_width: usize,
    max_background_jobs: usize,
    max_subcompactions: usize,
    max_compaction_bytes: u64,
    enable_blob_files: bool,
    min_blob_size: u64,
    blob_file_size: u64,
    enable_blob_garbage_collection: bool,
    blob_garbage_collection_age_cutoff: f64,
    blob_separation_at_write: bool,
    read_triggered_compaction: bool,
    block_size_deviation: u32,
    uncache_aggressiveness: u32,
    reverse: bool,
}

const COMPRESSIONS: [(&str, Compression); 4] = [
    ("none", Compression::None),
    ("snappy", Compression::Snappy),
    ("lz4", Compression::Lz4),
    ("zstd", Compression::Zstd),
];

impl Knobs {
    fn random(rng: &mut Rng, num_levels: usize) -> Knobs {
        Knobs {
            compression: COMPRESSIONS[rng.below(4) as usize].0.to_string(),
            // Drawn last (`with_wal_compression`).
            wal_compression: "none".to_string(),
            write_buffer_size: 4096 << rng.below(5),
            max_write_buffer_number: 2 + rng.below(3) as usize,
            // 0.001 of a small buffer is one line: every key shares it.
            memtable_bloom_size_ratio: [0.0, 0.001, 0.1][rng.below(3) as usize],
            // 0.02 of these buffers is no index or one of 64-128 slots, full before the
            // memtable is: gets then search the list for keys it left out.
            memtable_point_index_ratio: [0.0, 0.02, 0.125][rng.below(3) as usize],
            block_size: 128 << rng.below(6),
            block_restart_interval: 1 + rng.below(16) as usize,
            bloom_bits_per_key: [0, 1, 10][rng.below(3) as usize],
            block_cache_size: [0, 4096, 1 << 20][rng.below(3) as usize],
            cache_index_and_filter_blocks: rng.one_in(2),
            // Mostly a small limit, so that tables are evicted and opened again; sometimes
            // none, with readers kept in the version.
            max_open_files: match rng.below(4) {
                0 => Options::UNLIMITED_OPEN_FILES,
                _ => 1 + rng.below(20) as usize,
            },
            use_direct_reads: rng.one_in(4),
            use_direct_io_for_flush_and_compaction: rng.one_in(4),
            allow_mmap_reads: rng.one_in(4),
            compaction_readahead_size: [0, 4096, 2 << 20][rng.below(3) as usize],
            level0_file_num_compaction_trigger: 1 + rng.below(4) as usize,
            max_bytes_for_level_base: 8192 << rng.below(5),
            max_bytes_for_level_multiplier: [2.0, 4.0, 10.0][rng.below(3) as usize],
            num_levels,
            target_file_size_base: 2048 << rng.below(5),
            disable_auto_compactions: rng.one_in(8),
            universal: rng.one_in(3),
            size_ratio: [1, 10, 50][rng.below(3) as usize],
            max_size_amplification_percent: [25, 200][rng.below(2) as usize],
            max_merge_width: [3, usize::MAX][rng.below(2) as usize],
            max_background_jobs: 1 + rng.below(4) as usize,
            max_subcompactions: 1 + rng.below(3) as usize,
            max_compaction_bytes: [0, 4096][rng.below(2) as usize],
            enable_blob_files: rng.one_in(3),
            min_blob_size: [0, 16, 200][rng.below(3) as usize],
            blob_file_size: [512, 64 << 10][rng.below(2) as usize],
            enable_blob_garbage_collection: rng.one_in(2),
            blob_garbage_collection_age_cutoff: [0.25, 1.0][rng.below(2) as usize],
            // Fixed per database: the generator sets it.
            reverse: false,
            // Drawn last, so that the other options of a seed are what they were before
            // partitioned indexes existed.
            two_level_index: false,
            partition_filters: false,
            metadata_block_size: 4096,
            pin_top_level_index_and_filter: true,
            data_block_hash: false,
            data_block_hash_ratio: 0.75,
            // And after them, the pinning of L0 blocks and the iterators' readahead.
            pin_l0_filter_and_index_blocks_in_cache: false,
            readahead_size: 0,
            prepopulate_block_cache: false,
            warm_compaction_outputs: true,
            // And after them, when blob values are separated, then read-triggered compaction.
            blob_separation_at_write: false,
            read_triggered_compaction: true,
            // And last, where blocks are cut and whether deleted tables leave the cache.
            block_size_deviation: 10,
            uncache_aggressiveness: 300,
        }
        .with_partitions(rng)
        .with_data_block_hash(rng)
        .with_read_knobs(rng)
        .with_blob_separation_at_write(rng)
        .with_read_triggered_compaction(rng)
        .with_block_cut_and_uncaching(rng)
        .with_wal_compression(rng)
    }

    /// Draws the WAL's compression; a reopen replays the WAL whatever the new options say of
    /// it.
    fn with_wal_compression(mut self, rng: &mut Rng) -> Knobs {
        self.wal_compression = COMPRESSIONS[rng.below(4) as usize].0.to_string();
        self
    }

    /// Draws the data blocks' cut (0: at the size; 100: before any entry that would not
    /// fit) and how hard deleted tables' blocks are erased from the cache.
    fn with_block_cut_and_uncaching(mut self, rng: &mut Rng) -> Knobs {
        self.block_size_deviation = [0, 10, 100][rng.below(3) as usize];
        self.uncache_aggressiveness = [0, 1, 300, 10_000][rng.below(4) as usize];
        self
    }

    /// Draws whether writes put large values in blob files themselves.
    fn with_blob_separation_at_write(mut self, rng: &mut Rng) -> Knobs {
        self.blob_separation_at_write = rng.one_in(2);
        self
    }

    /// Draws whether reads may merge L0 (off in a quarter of the runs: the default is on).
    fn with_read_triggered_compaction(mut self, rng: &mut Rng) -> Knobs {
        self.read_triggered_compaction = !rng.one_in(4);
        self
    }

    /// Draws the data-block hash index (after the others, so that their draws are what
    /// they were before it existed); a high ratio makes collisions common.
    fn with_data_block_hash(mut self, rng: &mut Rng) -> Knobs {
        self.data_block_hash = rng.one_in(2);
        self.data_block_hash_ratio = [0.75, 0.2, 4.0][rng.below(3) as usize];
        self
    }

    /// Draws the pinning of L0 tables' index and filter, and the iterators' readahead.
    fn with_read_knobs(mut self, rng: &mut Rng) -> Knobs {
        self.pin_l0_filter_and_index_blocks_in_cache = rng.one_in(2);
        self.readahead_size = [0, 0, 1024, 64 << 10][rng.below(4) as usize];
        self.prepopulate_block_cache = rng.one_in(2);
        self.warm_compaction_outputs = rng.one_in(2);
        self
    }

    /// Draws the partitioned index and filter options (tiny partitions force many).
    fn with_partitions(mut self, rng: &mut Rng) -> Knobs {
        self.two_level_index = rng.one_in(3);
        self.partition_filters = self.two_level_index && rng.one_in(2);
        self.metadata_block_size = [1, 64, 4096][rng.below(3) as usize];
        self.pin_top_level_index_and_filter = !rng.one_in(3);
        self
    }

    fn options(&self) -> Options {
        let compression = COMPRESSIONS
            .iter()
            .find(|(name, _)| *name == self.compression)
            .unwrap_or_else(|| panic!("unknown compression {:?}", self.compression))
            .1;
        let wal_compression = COMPRESSIONS
            .iter()
            .find(|(name, _)| *name == self.wal_compression)
            .unwrap_or_else(|| panic!("unknown compression {:?}", self.wal_compression))
            .1;
        let mut options = Options::default();
        options.create_if_missing = true;
        options.wal_compression = wal_compression;
        options.write_buffer_size = self.write_buffer_size;
        options.max_write_buffer_number = self.max_write_buffer_number;
        options.memtable_whole_key_filtering = self.memtable_bloom_size_ratio > 0.0;
        options.memtable_prefix_bloom_size_ratio = self.memtable_bloom_size_ratio;
        options.memtable_point_index_ratio = self.memtable_point_index_ratio;
        options.block_size = self.block_size;
        options.block_restart_interval = self.block_restart_interval;
        options.bloom_bits_per_key = self.bloom_bits_per_key;
        options.block_cache_size = self.block_cache_size;
        options.cache_index_and_filter_blocks = self.cache_index_and_filter_blocks;
        options.index_type = match self.two_level_index {
            true => IndexType::TwoLevelIndexSearch,
            false => IndexType::BinarySearch,
        };
        options.partition_filters = self.partition_filters;
        options.metadata_block_size = self.metadata_block_size;
        options.pin_top_level_index_and_filter = self.pin_top_level_index_and_filter;
        options.pin_l0_filter_and_index_blocks_in_cache =
            self.pin_l0_filter_and_index_blocks_in_cache;
        options.warm_compaction_outputs = self.warm_compaction_outputs;
        options.block_size_deviation = self.block_size_deviation;
        options.uncache_aggressiveness = self.uncache_aggressiveness;
        if self.prepopulate_block_cache {
            options.prepopulate_block_cache = PrepopulateBlockCache::FlushOnly;
        }
        options.data_block_index_type = match self.data_block_hash {
            true => DataBlockIndexType::BinaryAndHash,
            false => DataBlockIndexType::BinarySearch,
        };
        options.data_block_hash_table_util_ratio = self.data_block_hash_ratio;
        options.max_open_files = self.max_open_files;
        options.use_direct_reads = self.use_direct_reads;
        options.use_direct_io_for_flush_and_compaction =
            self.use_direct_io_for_flush_and_compaction;
        options.compaction_readahead_size = self.compaction_readahead_size;
        // The two cannot be combined: direct reads win the draw.
        options.allow_mmap_reads = self.allow_mmap_reads && !self.use_direct_reads;
        options.level0_file_num_compaction_trigger = self.level0_file_num_compaction_trigger;
        options.level0_slowdown_writes_trigger = 8;
        options.level0_stop_writes_trigger = 12;
        options.max_bytes_for_level_base = self.max_bytes_for_level_base;
        options.max_bytes_for_level_multiplier = self.max_bytes_for_level_multiplier;
        options.num_levels = self.num_levels;
        options.target_file_size_base = self.target_file_size_base;
        options.disable_auto_compactions = self.disable_auto_compactions;
        options.read_triggered_compaction = self.read_triggered_compaction;
        options.compaction_style = match self.universal {
            true => CompactionStyle::Universal,
            false => CompactionStyle::Leveled,
        };
        options.universal.size_ratio = self.size_ratio;
        options.universal.max_size_amplification_percent = self.max_size_amplification_percent;
        options.universal.max_merge_width = self.max_merge_width;
        options.max_background_jobs = self.max_background_jobs;
        options.max_subcompactions = self.max_subcompactions;
        options.max_compaction_bytes = self.max_compaction_bytes;
        options.enable_blob_files = self.enable_blob_files;
        options.min_blob_size = self.min_blob_size;
        options.blob_file_size = self.blob_file_size;
        options.enable_blob_garbage_collection = self.enable_blob_garbage_collection;
        options.blob_garbage_collection_age_cutoff = self.blob_garbage_collection_age_cutoff;
        options.blob_separation_at_write = self.blob_separation_at_write;
        options.compression = compression;
        options.merge_operator = Some(Arc::new(StringAppend::new(MERGE_DELIMITER)));
        options.comparator = match self.reverse {
            true => Arc::new(ReverseBytewiseComparator),
            false => Options::default().comparator,
        };
        options
    }
}

/// The delimiter of the model's merge operator (string append).
const MERGE_DELIMITER: &[u8] = b".";

/// The model's effect of merging `operand` into `key`.
fn model_merge(model: &mut Model, key: &[u8], operand: &[u8]) {
    let value = match model.get(key) {
        Some(old) => [old.as_slice(), MERGE_DELIMITER, operand].concat(),
        None => operand.to_vec(),
    };
    model.insert(key.to_vec(), value);
}

/// One update of a batch.
#[derive(Debug, Clone, PartialEq)]
enum Update {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    SingleDelete(Vec<u8>),
    Merge(Vec<u8>, Vec<u8>),
    /// Deletes the keys in `[begin, end)`.
    DeleteRange(Vec<u8>, Vec<u8>),
}

/// Where a walk starts.
#[derive(Debug, Clone, PartialEq)]
enum Start {
    Seek(Vec<u8>),
    SeekForPrev(Vec<u8>),
    First,
    Last,
}

/// An iterator walk: a start, then steps (`n` next, `p` prev), checked after each until the
/// iterator ends.
#[derive(Debug, Clone, PartialEq)]
struct Walk {
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    start: Start,
    steps: String,
}

/// One operation of a run, as written to its log (one line).
#[derive(Debug, Clone, PartialEq)]
enum Op {
    /// Opens the database (the first operation of every log).
    Open(Knobs),
    /// Closes and opens the database again, dropping the snapshots; checks every key.
    Reopen(Knobs),
    Write(Vec<Update>),
    Get(Vec<u8>),
    /// Takes a snapshot, first dropping the one at `replace` if given.
    Snapshot {
        replace: Option<usize>,
    },
    /// A get and a walk at the snapshot at `index`.
    SnapshotRead {
        index: usize,
        key: Vec<u8>,
        walk: Walk,
    },
    Walk(Walk),
    Range(Vec<u8>, Vec<u8>),
    CompactRange(Vec<u8>, Vec<u8>),
    CompactLevel(usize),
    CompactAll,
    WaitForCompactions,
    Flush,
}

impl fmt::Display for Walk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = &self.lower {
            write!(f, "lower {} ", token(l))?;
        }
        if let Some(u) = &self.upper {
            write!(f, "upper {} ", token(u))?;
        }
        match &self.start {
            Start::Seek(k) => write!(f, "seek {}", token(k))?,
            Start::SeekForPrev(k) => write!(f, "seek-for-prev {}", token(k))?,
            Start::First => f.write_str("first")?,
            Start::Last => f.write_str("last")?,
        }
        match self.steps.is_empty() {
            true => f.write_str(" steps -"),
            false => write!(f, " steps {}", self.steps),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Open(k) => write!(f, "open {k}"),
            Op::Reopen(k) => write!(f, "reopen {k}"),
            Op::Write(updates) => {
                f.write_str("write")?;
                for u in updates {
                    match u {
                        Update::Put(k, v) => write!(f, " put {} {}", token(k), token(v))?,
                        Update::Delete(k) => write!(f, " delete {}", token(k))?,
                        Update::SingleDelete(k) => write!(f, " single-delete {}", token(k))?,
                        Update::Merge(k, v) => write!(f, " merge {} {}", token(k), token(v))?,
                        Update::DeleteRange(b, e) => {
                            write!(f, " delete-range {} {}", token(b), token(e))?
                        }
                    }
                }
                Ok(())
            }
            Op::Get(k) => write!(f, "get {}", token(k)),
            Op::Snapshot { replace: None } => f.write_str("snapshot"),
            Op::Snapshot { replace: Some(i) } => write!(f, "snapshot replace {i}"),
            Op::SnapshotRead { index, key, walk } => {
                write!(f, "snapshot-read {index} {} {walk}", token(key))
            }
            Op::Walk(walk) => write!(f, "walk {walk}"),
            Op::Range(a, b) => write!(f, "range {} {}", token(a), token(b)),
            Op::CompactRange(a, b) => write!(f, "compact-range {} {}", token(a), token(b)),
            Op::CompactLevel(l) => write!(f, "compact-level {l}"),
            Op::CompactAll => f.write_str("compact-all"),
            Op::WaitForCompactions => f.write_str("wait-for-compactions"),
            Op::Flush => f.write_str("flush"),
        }
    }
}

/// The words of one log line, read in order.
struct Words<'a> {
    line: &'a str,
    words: std::iter::Peekable<std::str::SplitWhitespace<'a>>,
}

impl<'a> Words<'a> {
    fn word(&mut self) -> &'a str {
        let line = self.line;
        self.words
            .next()
            .unwrap_or_else(|| panic!("log line {line:?} ends early"))
    }
    fn bytes(&mut self) -> Vec<u8> {
        untoken(self.word())
    }
    fn number(&mut self) -> usize {
        let w = self.word();
        w.parse()
            .unwrap_or_else(|e| panic!("log line {:?}: {w:?}: {e}", self.line))
    }
    /// Takes the next word if it is `w`.
    fn take(&mut self, w: &str) -> bool {
        self.words.next_if_eq(&w).is_some()
    }
    fn walk(&mut self) -> Walk {
        let lower = self.take("lower").then(|| self.bytes());
        let upper = self.take("upper").then(|| self.bytes());
        let start = match self.word() {
            "seek" => Start::Seek(self.bytes()),
            "seek-for-prev" => Start::SeekForPrev(self.bytes()),
            "first" => Start::First,
            "last" => Start::Last,
            other => panic!("log line {:?}: unknown walk start {other:?}", self.line),
        };
        assert!(self.take("steps"), "log line {:?}: no steps", self.line);
        let steps = match self.word() {
            "-" => String::new(),
            s => s.to_string(),
        };
        Walk {
            lower,
            upper,
            start,
            steps,
        }
    }
    fn rest(&mut self) -> String {
        self.words.by_ref().collect::<Vec<_>>().join(" ")
    }
}

impl Op {
    fn parse(line: &str) -> Op {
        let mut w = Words {
            line,
            words: line.split_whitespace().peekable(),
        };
        let knobs = |s: String| {
            s.parse::<Knobs>()
                .unwrap_or_else(|e| panic!("log line {line:?}: {e}"))
        };
        let op = match w.word() {
            "open" => Op::Open(knobs(w.rest())),
            "reopen" => Op::Reopen(knobs(w.rest())),
            "write" => {
                let mut updates = Vec::new();
                while let Some(kind) = w.words.next() {
                    updates.push(match kind {
                        "put" => Update::Put(w.bytes(), w.bytes()),
                        "delete" => Update::Delete(w.bytes()),
                        "single-delete" => Update::SingleDelete(w.bytes()),
                        "merge" => Update::Merge(w.bytes(), w.bytes()),
                        "delete-range" => Update::DeleteRange(w.bytes(), w.bytes()),
                        other => panic!("log line {line:?}: unknown update {other:?}"),
                    });
                }
                Op::Write(updates)
            }
            "get" => Op::Get(w.bytes()),
            "snapshot" => Op::Snapshot {
                replace: w.take("replace").then(|| w.number()),
            },
            "snapshot-read" => Op::SnapshotRead {
                index: w.number(),
                key: w.bytes(),
                walk: w.walk(),
            },
            "walk" => Op::Walk(w.walk()),
            "range" => Op::Range(w.bytes(), w.bytes()),
            "compact-range" => Op::CompactRange(w.bytes(), w.bytes()),
            "compact-level" => Op::CompactLevel(w.number()),
            "compact-all" => Op::CompactAll,
            "wait-for-compactions" => Op::WaitForCompactions,
            "flush" => Op::Flush,
            other => panic!("log line {line:?}: unknown operation {other:?}"),
        };
        assert!(
            w.words.next().is_none(),
            "log line {line:?}: words left over"
        );
        op
    }
}

/// Draws a run's operations from its seed.
struct Generator {
    /// Draws the options of each open.
    options_rng: Rng,
    /// Draws the operations.
    rng: Rng,
    num_levels: usize,
    universal: bool,
    keyspace: u64,
    /// Puts and merges since the last delete, per key: single-delete is only legal when this
    /// is <= 1 (RocksDB leaves a single-delete over several merges undefined).
    puts_since_delete: HashMap<Vec<u8>, u32>,
    /// The key order, fixed per database: ranges are drawn with their begin first in it.
    order: Order,
}

impl Generator {
    /// The generator of `seed` in `order`, its first operation (the open) and how many
    /// follow.
    fn new(seed: u64, order: Order) -> (Generator, Op, u64) {
        let mut options_rng = Rng::new(seed);
        // Fixed per database: a database cannot be reopened with fewer levels than it uses.
        let num_levels = 2 + options_rng.below(6) as usize;
        let mut knobs = Knobs::random(&mut options_rng, num_levels);
        knobs.reverse = order.reverse;
        let keyspace = 50 + options_rng.below(200);
        let ops = 1500 + options_rng.below(1500);
        let g = Generator {
            options_rng,
            rng: Rng::new(seed ^ 0xabcdef),
            num_levels,
            universal: knobs.universal,
            keyspace,
            puts_since_delete: HashMap::new(),
            order,
        };
        (g, Op::Open(knobs), ops)
    }

    fn key(&mut self) -> Vec<u8> {
        if self.rng.one_in(50) {
            return Vec::new();
        }
        format!("k{:04}", self.rng.below(self.keyspace)).into_bytes()
    }

    /// A key of the walks and ranges, which reach past the keys written.
    fn wide_key(&mut self) -> Vec<u8> {
        format!("k{:04}", self.rng.below(220)).into_bytes()
    }

    fn value(&mut self) -> Vec<u8> {
        let max = if self.rng.one_in(20) { 3000 } else { 40 };
        let len = self.rng.below(max);
        (0..len).map(|_| b'a' + self.rng.below(26) as u8).collect()
    }

    fn update(&mut self) -> Update {
        if self.rng.one_in(30) {
            // Spans of up to 30 keys; an empty one now and then. The single-delete counts are
            // left as they are: the puts a range deletion hides stay in the tree until a
            // compaction drops them, so a single-delete must still find at most one.
            let a = self.rng.below(self.keyspace);
            let b = a + self.rng.below(30);
            let k = |n: u64| format!("k{n:04}").into_bytes();
            return match self.order.reverse {
                false => Update::DeleteRange(k(a), k(b)),
                true => Update::DeleteRange(k(b), k(a)),
            };
        }
        let key = self.key();
        let roll = self.rng.below(10);
        let puts = self.puts_since_delete.get(&key).copied().unwrap_or(0);
        if roll < 5 {
            let v = self.value();
            self.puts_since_delete.insert(key.clone(), puts + 1);
            Update::Put(key, v)
        } else if roll < 7 {
            let len = self.rng.below(8);
            let operand = (0..len).map(|_| b'a' + self.rng.below(26) as u8).collect();
            self.puts_since_delete.insert(key.clone(), puts + 1);
            Update::Merge(key, operand)
        } else if roll < 9 || puts > 1 {
            self.puts_since_delete.insert(key.clone(), 0);
            Update::Delete(key)
        } else {
            self.puts_since_delete.insert(key.clone(), 0);
            Update::SingleDelete(key)
        }
    }

    fn walk(&mut self, lower: Option<Vec<u8>>, upper: Option<Vec<u8>>) -> Walk {
        let target = self.wide_key();
        let start = match self.rng.below(4) {
            0 => Start::Seek(target),
            1 => Start::SeekForPrev(target),
            2 => Start::First,
            _ => Start::Last,
        };
        let steps = (0..self.rng.below(30))
            .map(|_| if self.rng.one_in(2) { 'n' } else { 'p' })
            .collect();
        Walk {
            lower,
            upper,
            start,
            steps,
        }
    }

    /// The next operation, given how many snapshots are alive.
    fn next(&mut self, snapshots: usize) -> Op {
        match self.rng.below(100) {
            0..=34 => Op::Write(vec![self.update()]),
            35..=44 => Op::Write((0..1 + self.rng.below(10)).map(|_| self.update()).collect()),
            45..=64 => Op::Get(self.key()),
            65..=69 => Op::Snapshot {
                replace: (snapshots >= 4).then(|| self.rng.below(4) as usize),
            },
            70..=79 if snapshots > 0 => {
                let index = self.rng.below(snapshots as u64) as usize;
                let key = self.key();
                Op::SnapshotRead {
                    index,
                    key,
                    walk: self.walk(None, None),
                }
            }
            80..=94 => {
                let mut bound = || self.rng.one_in(2).then(|| self.wide_key());
                let (lower, upper) = (bound(), bound());
                Op::Walk(self.walk(lower, upper))
            }
            95 => Op::Range(self.wide_key(), self.wide_key()),
            96 => {
                let (a, b) = (self.wide_key(), self.wide_key());
                match self.rng.below(3) {
                    0 => Op::CompactRange(a, b),
                    1 if !self.universal => {
                        Op::CompactLevel(self.rng.below(self.num_levels as u64 - 1) as usize)
                    }
                    1 => Op::CompactAll,
                    _ => Op::WaitForCompactions,
                }
            }
            97 => Op::Flush,
            _ => {
                let mut knobs = Knobs::random(&mut self.options_rng, self.num_levels);
                knobs.reverse = self.order.reverse;
                self.universal = knobs.universal;
                Op::Reopen(knobs)
            }
        }
    }
}

/// Applies operations to a database and to the model, checking one against the other.
struct Runner {
    dir: tempfile::TempDir,
    db: Option<Db>,
    model: Model,
    snapshots: Vec<(Snapshot, Model)>,
    /// The key order, from the options of the open.
    order: Order,
    /// The iterators' `ReadOptions::readahead_size`, from the knobs of the open.
    readahead_size: usize,
}

impl Runner {
    fn new() -> Runner {
        Runner {
            dir: tempfile::tempdir().unwrap(),
            db: None,
            model: Model::new(),
            snapshots: Vec::new(),
            order: Order { reverse: false },
            readahead_size: 0,
        }
    }

    fn db(&self) -> &Db {
        self.db.as_ref().expect("a log starts with open")
    }

    fn apply(&mut self, op: &Op, ctx: &str) {
        match op {
            Op::Open(knobs) => {
                assert!(self.db.is_none(), "{ctx}: open of an open database");
                self.order = Order {
                    reverse: knobs.reverse,
                };
                self.readahead_size = knobs.readahead_size;
                self.db = Some(Db::open(self.dir.path(), knobs.options()).unwrap());
            }
            Op::Reopen(knobs) => self.reopen(knobs, ctx),
            Op::Write(updates) => {
                let mut batch = WriteBatch::new();
                let mut model = self.model.clone();
                for u in updates {
                    match u {
                        Update::Put(k, v) => {
                            batch.put(k, v);
                            model.insert(k.clone(), v.clone());
                        }
                        Update::Delete(k) => {
                            batch.delete(k);
                            model.remove(k);
                        }
                        Update::SingleDelete(k) => {
                            batch.single_delete(k);
                            model.remove(k);
                        }
                        Update::Merge(k, v) => {
                            batch.merge(k, v);
                            model_merge(&mut model, k, v);
                        }
                        Update::DeleteRange(b, e) => {
                            batch.delete_range(b, e);
                            let order = self.order;
                            model.retain(|k, _| !(order.le(b, k) && order.lt(k, e)));
                        }
                    }
                }
                self.db().write(batch, &WriteOptions::default()).unwrap();
                self.model = model;
            }
            Op::Get(key) => {
                let got = self.db().get(key).unwrap();
                assert_eq!(got.as_ref(), self.model.get(key), "{ctx}");
                let pinned = self.db().get_pinned(key).unwrap();
                assert_eq!(pinned.as_deref(), got.as_deref(), "{ctx} get_pinned");
                let keys = multi_get_keys(key, &self.model);
                let got = self.db().multi_get(&keys);
                check_multi_get(&keys, got, &self.model, ctx);
            }
            Op::Snapshot { replace } => {
                if let Some(i) = replace {
                    self.snapshots.swap_remove(*i);
                }
                let snapshot = self.db().snapshot();
                self.snapshots.push((snapshot, self.model.clone()));
            }
            Op::SnapshotRead { index, key, walk } => {
                let (snap, model) = &self.snapshots[*index];
                assert_eq!(
                    self.db().get_at(snap, key).unwrap().as_ref(),
                    model.get(key),
                    "{ctx} snapshot read"
                );
                let mut at_snapshot = ReadOptions::default();
                at_snapshot.snapshot = Some(snap.clone());
                at_snapshot.readahead_size = self.readahead_size;
                let keys = multi_get_keys(key, model);
                let got = self.db().multi_get_opt(&keys, &at_snapshot);
                check_multi_get(&keys, got, model, ctx);
                let mut it = self.db().iter(&at_snapshot);
                check_walk(&mut it, walk, model, self.order, ctx);
            }
            Op::Walk(walk) => {
                let mut bounds = ReadOptions::default();
                bounds.lower_bound = walk.lower.clone();
                bounds.upper_bound = walk.upper.clone();
                bounds.readahead_size = self.readahead_size;
                let mut it = self.db().iter(&bounds);
                check_walk(&mut it, walk, &self.model, self.order, ctx);
            }
            Op::Range(a, b) => {
                let got: Vec<_> = self
                    .db()
                    .range(a.clone()..=b.clone())
                    .collect::<Result<_, _>>()
                    .unwrap();
                let order = self.order;
                let mut want: Vec<_> = self
                    .model
                    .iter()
                    .filter(|(k, _)| order.le(a, k) && order.le(k, b))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                want.sort_by(|x, y| order.cmp(&x.0, &y.0));
                assert_eq!(got, want, "{ctx} range");
            }
            Op::CompactRange(a, b) => self.db().compact_range(Some(a), Some(b)).unwrap(),
            Op::CompactLevel(level) => self.db().compact_level(*level).unwrap(),
            Op::CompactAll => self.db().compact_all().unwrap(),
            Op::WaitForCompactions => self.db().wait_for_compactions().unwrap(),
            Op::Flush => self.db().flush().unwrap(),
        }
    }

    /// Every acknowledged write must come back from tables and WALs.
    fn reopen(&mut self, knobs: &Knobs, ctx: &str) {
        self.snapshots.clear();
        self.db
            .take()
            .expect("a log starts with open")
            .close()
            .unwrap();
        let db = Db::open(self.dir.path(), knobs.options()).unwrap();
        self.readahead_size = knobs.readahead_size;
        assert_eq!(db.recovery_report().dropped_records, 0, "{ctx}");
        let all: Model = db.range::<&[u8], _>(..).collect::<Result<_, _>>().unwrap();
        self.db = Some(db);
        if all != self.model {
            let diff: Vec<String> = all
                .keys()
                .chain(self.model.keys())
                .filter(|k| all.get(*k) != self.model.get(*k))
                .map(|k| {
                    let show =
                        |v: Option<&Vec<u8>>| v.map(|v| String::from_utf8_lossy(v).into_owned());
                    format!(
                        "{}: db {:?} model {:?}",
                        String::from_utf8_lossy(k),
                        show(all.get(k)),
                        show(self.model.get(k))
                    )
                })
                .collect();
            panic!("{ctx} after reopen, differences:\n{}", diff.join("\n"));
        }
    }

    /// Closes the database; returns the model.
    fn finish(mut self) -> Model {
        self.snapshots.clear();
        if let Some(db) = self.db.take() {
            db.close().unwrap();
        }
        self.model
    }
}

/// Checks `walk` on `it` against `model` restricted to the walk's bounds.
/// The keys a get also reads through `multi_get`: the key, the model's keys that follow it
/// in byte order (present keys, found in the tables and memtables near the first), the key
/// again (a repeated key gets the same answer) and a missing key, in no sorted order.
fn multi_get_keys(key: &[u8], model: &Model) -> Vec<Vec<u8>> {
    let mut keys = vec![key.to_vec()];
    keys.extend(
        model
            .range(key.to_vec()..)
            .skip(1)
            .take(4)
            .map(|(k, _)| k.clone()),
    );
    keys.push(key.to_vec());
    keys.push(b"~missing".to_vec());
    keys.reverse();
    keys
}

fn check_multi_get(
    keys: &[Vec<u8>],
    got: Vec<strata::Result<Option<Vec<u8>>>>,
    model: &Model,
    ctx: &str,
) {
    assert_eq!(got.len(), keys.len(), "{ctx} multi_get");
    for (key, got) in keys.iter().zip(got) {
        assert_eq!(
            got.unwrap().as_ref(),
            model.get(key),
            "{ctx} multi_get of {}",
            token(key)
        );
    }
}

fn check_walk(it: &mut strata::DbIterator, walk: &Walk, model: &Model, o: Order, ctx: &str) {
    let (lower, upper) = (walk.lower.as_deref(), walk.upper.as_deref());
    let in_bounds = |k: &[u8]| lower.is_none_or(|l| o.le(l, k)) && upper.is_none_or(|u| o.lt(k, u));
    let mut view: Vec<(&Vec<u8>, &Vec<u8>)> = model.iter().filter(|(k, _)| in_bounds(k)).collect();
    if o.reverse {
        view.reverse();
    }
    let mut pos: Option<usize> = match &walk.start {
        Start::Seek(target) => {
            it.seek(target);
            let i = view.partition_point(|(k, _)| o.lt(k, target));
            (i < view.len()).then_some(i)
        }
        Start::SeekForPrev(target) => {
            it.seek_for_prev(target);
            let i = view.partition_point(|(k, _)| o.le(k, target));
            i.checked_sub(1)
        }
        Start::First => {
            it.seek_to_first();
            (!view.is_empty()).then_some(0)
        }
        Start::Last => {
            it.seek_to_last();
            view.len().checked_sub(1)
        }
    };
    for (step, dir) in walk.steps.chars().enumerate() {
        let Some(i) = pos else {
            assert!(
                !it.valid(),
                "{ctx}: step {step}: expected the end, got {:?}",
                String::from_utf8_lossy(it.key())
            );
            it.status().unwrap();
            return;
        };
        assert!(it.valid(), "{ctx}: step {step}: iterator ended early");
        assert_eq!(it.key(), view[i].0.as_slice(), "{ctx}: step {step}");
        assert_eq!(it.value(), view[i].1.as_slice(), "{ctx}: step {step}");
        if dir == 'n' {
            it.next();
            pos = (i + 1 < view.len()).then_some(i + 1);
        } else {
            it.prev();
            pos = i.checked_sub(1);
        }
    }
}

/// The operations of a run as it goes; written to a file if the run fails.
struct Log {
    path: PathBuf,
    text: String,
}

impl Log {
    fn new(path: PathBuf, seed: u64) -> Log {
        let text = format!(
            "# The operations of a failed model run (seed {seed}), up to the failing one.\n\
             # Replay: STRATA_MODEL_REPLAY=<this file> cargo test -p strata --test model\n"
        );
        Log { path, text }
    }

    fn push(&mut self, op: &Op) {
        self.text.push_str(&op.to_string());
        self.text.push('\n');
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let written = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&self.path, &self.text));
        match written {
            Ok(()) => eprintln!(
                "model test: operation log written to {0}; replay with \
                 STRATA_MODEL_REPLAY={0} cargo test -p strata --test model",
                self.path.display()
            ),
            Err(e) => eprintln!("model test: cannot write {}: {e}", self.path.display()),
        }
    }
}

/// Where failed runs write their logs.
fn failure_dir() -> PathBuf {
    match std::env::var_os("STRATA_MODEL_FAILURES") {
        Some(dir) => PathBuf::from(dir),
        // CARGO_TARGET_TMPDIR is <target>/tmp.
        None => Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .unwrap_or(Path::new(env!("CARGO_TARGET_TMPDIR")))
            .join("model-failures"),
    }
}

/// How a run ends.
#[derive(Clone, Copy)]
enum End {
    /// After all of its seed's operations.
    Complete,
    /// After this many operations (past the open).
    After(u64),
    /// With a failure after this many operations, to test the failure path.
    FailAfter(u64),
}

/// Runs the operations of `seed`, logging them to `log_dir` if the run fails; returns the
/// model at the end.
fn run_seed(seed: u64, order: Order, end: End, log_dir: &Path) -> Model {
    let (mut generator, open, ops) = Generator::new(seed, order);
    let ops = match end {
        End::Complete => ops,
        End::After(n) | End::FailAfter(n) => n,
    };
    let mut log = Log::new(log_dir.join(format!("seed-{seed}.txt")), seed);
    let mut runner = Runner::new();
    log.push(&open);
    runner.apply(&open, &format!("seed {seed} open"));
    for i in 0..ops {
        let op = generator.next(runner.snapshots.len());
        log.push(&op);
        runner.apply(&op, &format!("seed {seed} op {i}"));
    }
    if let End::FailAfter(n) = end {
        panic!("seed {seed}: stopped on purpose after {n} operations");
    }
    runner.finish()
}

/// Runs the operations of a log (comments and blank lines aside); returns the model at the
/// end.
fn replay(log: &str) -> Model {
    let mut runner = Runner::new();
    let lines = log
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    for (i, line) in lines.enumerate() {
        runner.apply(&Op::parse(line), &format!("replayed line {}", i + 1));
    }
    runner.finish()
}

#[test]
fn database_matches_btreemap_model_across_reopens() {
    if let Some(path) = std::env::var_os("STRATA_MODEL_REPLAY") {
        let log = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("STRATA_MODEL_REPLAY={}: {e}", Path::new(&path).display()));
        replay(&log);
        return;
    }
    if let Ok(seed) = std::env::var("STRATA_MODEL_SEED") {
        let seed = seed.parse().expect("STRATA_MODEL_SEED is a number");
        let reverse = std::env::var_os("STRATA_MODEL_REVERSE").is_some();
        run_seed(seed, Order { reverse }, End::Complete, &failure_dir());
        return;
    }
    let seeds: u64 = std::env::var("STRATA_MODEL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    for seed in 0..seeds {
        run_seed(seed, FORWARD, End::Complete, &failure_dir());
    }
}

const FORWARD: Order = Order { reverse: false };

/// The model test with keys in reverse bytewise order: gets, iterators both ways with
/// bounds, ranges, range deletions, flushes, compactions and reopens, all in that order.
/// Seeds 1000 and up (their own operations), a quarter as many as the forward test runs.
#[test]
fn database_in_reverse_order_matches_btreemap_model() {
    if std::env::var_os("STRATA_MODEL_REPLAY").is_some()
        || std::env::var_os("STRATA_MODEL_SEED").is_some()
    {
        return; // the forward test runs those
    }
    let seeds: u64 = std::env::var("STRATA_MODEL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    for seed in 1000..1000 + seeds.div_ceil(4) {
        run_seed(seed, Order { reverse: true }, End::Complete, &failure_dir());
    }
}

/// A failing run writes its log; replaying the log runs the same operations (the model at
/// the end is the one the run had), and every line reads back as it was written.
#[test]
fn a_failed_run_writes_a_log_that_replays_it() {
    let logs = tempfile::tempdir().unwrap();
    let seed = 3;
    let ops = 400;
    let failed =
        std::panic::catch_unwind(|| run_seed(seed, FORWARD, End::FailAfter(ops), logs.path()));
    assert!(failed.is_err(), "the run was to fail");
    let log = std::fs::read_to_string(logs.path().join(format!("seed-{seed}.txt"))).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len() as u64, 1 + ops, "the open and every operation");
    assert!(lines[0].starts_with("open "), "{}", lines[0]);
    for line in &lines {
        assert_eq!(Op::parse(line).to_string(), *line);
    }
    let replayed = replay(&log);
    let unlogged = tempfile::tempdir().unwrap();
    assert_eq!(
        replayed,
        run_seed(seed, FORWARD, End::After(ops), unlogged.path())
    );
    assert!(!replayed.is_empty());
    assert_eq!(
        std::fs::read_dir(unlogged.path()).unwrap().count(),
        0,
        "a run that passes writes no log"
    );
}

#[test]
fn log_tokens_and_options_read_back_as_written() {
    for bytes in [&b""[..], b"k0001", b"a b\"c\\d\x00\xff", b"\"\"", b"-"] {
        assert_eq!(untoken(&token(bytes)), bytes);
        assert!(!token(bytes).contains(char::is_whitespace));
    }
    let mut rng = Rng::new(9);
    for _ in 0..20 {
        let knobs = Knobs::random(&mut rng, 4);
        assert_eq!(knobs.to_string().parse::<Knobs>(), Ok(knobs));
    }
}
