//! Options for opening a database, writing and reading; `registry` names them (one table
//! of name, kind, mutability, getter and setter) and `file` writes and reads them as an
//! OPTIONS file.

pub(crate) mod file;
pub mod registry;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::compaction::{CompactionStyle, FifoOptions, PickerOptions, UniversalOptions};
use crate::compaction_filter::ttl::{Clock, SystemClock};
use crate::compaction_filter::CompactionFilter;
use crate::comparator::{BytewiseComparator, Comparator, KeyOrder};
use crate::error::{Error, Result};
use crate::fs::{FileSystem, PosixFs, ReadMode};
use crate::histogram::StatsLevel;
use crate::listener::EventListener;
use crate::merge::MergeOperator;
use crate::prefix::PrefixExtractor;
use crate::snapshot::Snapshot;
#[cfg(doc)]
use crate::table::collector::TablePropertiesCollector;
use crate::table::collector::TablePropertiesCollectorFactory;
use crate::table::{
    ChecksumType, Compression, CompressionOptions, DataBlockIndexType, IndexType, TableOptions,
};

/// What recovery does with a torn or corrupt record in the write-ahead logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WalRecoveryMode {
    /// Drop a torn or corrupt tail of the newest WAL (what a crash mid-write leaves) and
    /// refuse to open with a corruption error anywhere else. For that, every WAL but the
    /// newest is synced when a memtable switch closes it, so damage in an older one is never
    /// a crash's doing.
    TolerateCorruptedTail,
    /// Keep everything before the first bad record of any WAL and drop everything after it,
    /// newer WALs included (they are set aside as `NNNNNN.log.dropped`, not deleted). The
    /// database opens as of a point in time; writes after that point are lost, and none of
    /// them was synced. The default, as in RocksDB: with one column family a memtable switch
    /// leaves the WAL it closes unsynced (a synced write or `sync_wal` syncs it first), so
    /// that a WAL whose memtable is flushed before the kernel writes it back is deleted
    /// without its pages ever reaching the disk.
    #[default]
    PointInTime,
}

/// Which tables' data blocks are put in the block cache as they are written (RocksDB's
/// `BlockBasedTableOptions::PrepopulateBlockCache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PrepopulateBlockCache {
    /// None: a block enters the cache when a read first needs it. The default.
    #[default]
    Disable,
    /// Those of the tables flushes write (level 0, the newest data).
    FlushOnly,
}

impl PrepopulateBlockCache {
    /// The name used by options and tools (`disable`, `flush_only`).
    pub fn name(self) -> &'static str {
        match self {
            PrepopulateBlockCache::Disable => "disable",
            PrepopulateBlockCache::FlushOnly => "flush_only",
        }
    }

    /// The setting with this name.
    pub fn from_name(name: &str) -> Option<PrepopulateBlockCache> {
        [
            PrepopulateBlockCache::Disable,
            PrepopulateBlockCache::FlushOnly,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

/// Options for [`crate::Db::open`].
///
/// Start from `Options::default()` and assign the fields to change. The struct is
/// `#[non_exhaustive]` so that options can be added in minor releases without breaking
/// anyone's code; the price is that outside this crate it cannot be written as a struct
/// literal, not even one ending in `..Options::default()`. The other options structs
/// ([`CfOptions`], [`ReadOptions`], [`WriteOptions`], [`IngestOptions`],
/// [`TransactionOptions`](crate::TransactionOptions),
/// [`UniversalOptions`](crate::UniversalOptions)) are built the same way.
///
/// # Examples
///
/// ```
/// use strata::{Compression, Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.write_buffer_size = 8 << 20; // 8 MiB memtables
/// options.bloom_bits_per_key = 10; // about 1% false positives
/// options.compression = Compression::Lz4; // upper levels
/// options.bottommost_compression = Some(Compression::Zstd);
/// options.max_background_jobs = 4; // a flush thread and three compaction threads
/// options.validate()?;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"key", b"value")?;
/// db.flush()?;
/// assert_eq!(db.get(b"key")?.as_deref(), Some(&b"value"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Options {
    /// Create the database if the directory holds none. Default: false.
    pub create_if_missing: bool,
    /// Fail if the database already exists. Default: false.
    pub error_if_exists: bool,
    /// Create the column families named to [`crate::Db::open_cf`] that the database does
    /// not have yet. Default: false (naming a family that does not exist is an error).
    pub create_missing_column_families: bool,
    /// Bytes of memtable memory after which the memtable becomes immutable and a new one
    /// (with a new WAL) starts. Default: 64 MiB. At least 4 KiB.
    pub write_buffer_size: usize,
    /// The most memtables (active plus immutable) held before writes stop to wait for a
    /// flush. Default: 2. At least 1; 1 acts as 2, as in RocksDB (a full memtable needs
    /// somewhere to go while it is flushed).
    pub max_write_buffer_number: usize,
    /// With `memtable_whole_key_filtering`, each memtable keeps a bloom filter over its user
    /// keys of this fraction of `write_buffer_size` bytes (counted in its memory), so that a
    /// get for a key the memtable does not hold skips its search: one probe of one cache line
    /// instead of a skiplist walk. 0 keeps no filter; at most 0.25. Default: 0.02, about 20
    /// bits per entry of 100-byte values (RocksDB's option of that name defaults to 0, no
    /// filter; a get right after a burst of writes reads 1.4x as fast with it).
    pub memtable_prefix_bloom_size_ratio: f64,
    /// Put every user key in the memtable's bloom filter (see
    /// `memtable_prefix_bloom_size_ratio`). Prefixes are not added: the filter serves gets.
    /// Default: true (RocksDB's: false).
    pub memtable_whole_key_filtering: bool,
    /// How recovery treats bad WAL records (and so whether a memtable switch syncs the WAL it
    /// closes). Default: [`WalRecoveryMode::PointInTime`].
    pub wal_recovery_mode: WalRecoveryMode,
    /// The most bytes of batches a group-commit leader joins into one WAL write (its own
    /// batch always goes in whole). Default: 1 MiB.
    pub max_write_group_bytes: usize,
    /// Target raw size of a table's data blocks, each block's 5-byte trailer included, so
    /// that a block read whole fits an allocation of this size (the block cache's memory is
    /// then what it is charged). Default: 4 KiB.
    pub block_size: usize,
    /// How far short of `block_size` (percent) a data block may be cut to keep its next
    /// entry from taking it past that size (RocksDB's `block_size_deviation`): with 10, a
    /// block at least 90% full ends before an entry that would not fit. 0 cuts a block only
    /// once it reaches `block_size`, so blocks end up to an entry past it. At most 100.
    /// Default: 10.
    pub block_size_deviation: u32,
    /// Entries between restart points in data blocks. Default: 16.
    pub block_restart_interval: usize,
    /// Bloom filter bits per key in tables; 0 builds no filters. Default: 10 (about 1%
    /// false positives).
    pub bloom_bits_per_key: u32,
    /// Compression of data blocks. Default: none.
    pub compression: Compression,
    /// Compression of data blocks written by compactions into the last level at the bottom of
    /// the tree; `None` means the same as `compression`. Default: `None`.
    pub bottommost_compression: Option<Compression>,
    /// Bytes of the shared block cache for data blocks; 0 disables it. Default: 8 MiB.
    pub block_cache_size: usize,
    /// Keep tables' index and filter blocks in the block cache (charged and evicted like data
    /// blocks) instead of pinned with each open table. Default: false (pinned).
    pub cache_index_and_filter_blocks: bool,
    /// The layout of each table's index (a column family field): one index block read
    /// whole when the table is opened ([`IndexType::BinarySearch`]), or index partitions of
    /// about `metadata_block_size` bytes read through the block cache when needed, under a
    /// small top-level index that the open table holds
    /// ([`IndexType::TwoLevelIndexSearch`], RocksDB's `kTwoLevelIndexSearch`). Partitions
    /// make an open table's memory small for a database much larger than memory, at the
    /// cost of a cache lookup (or a read) per partition on a read. Tables already written
    /// keep their layout; a database may hold both. Default: binary search.
    pub index_type: IndexType,
    /// Cut each table's filter into partitions where its index partitions are cut, under a
    /// top-level filter index (a column family field; RocksDB's `partition_filters`). Needs
    /// `index_type` [`IndexType::TwoLevelIndexSearch`]. Default: false.
    pub partition_filters: bool,
    /// Target raw size of an index partition and of a filter partition in bytes (a column
    /// family field; RocksDB's `metadata_block_size`). At least 1. Default: 4096.
    pub metadata_block_size: usize,
    /// How a point lookup finds its entry in a data block (a column family field; RocksDB's
    /// `data_block_index_type`): a binary search of the block's restart points
    /// ([`DataBlockIndexType::BinarySearch`]), or a small hash table after them mapping
    /// each user key to its restart interval ([`DataBlockIndexType::BinaryAndHash`],
    /// RocksDB's `kDataBlockBinaryAndHash`), which saves the binary search on a lookup of a
    /// cached block and ends a lookup of an absent key at once, for about one byte per
    /// 0.75 keys of space. Needs a built-in comparator (a family with an application's
    /// comparator refuses it: its equal keys may differ in bytes). Tables written with it
    /// have format version 4, which builds without it refuse; tables already written keep
    /// their blocks. Default: binary search.
    pub data_block_index_type: DataBlockIndexType,
    /// With [`DataBlockIndexType::BinaryAndHash`], the user keys per bucket of a data
    /// block's hash table (a column family field; RocksDB's
    /// `data_block_hash_table_util_ratio`): lower means more buckets, fewer collisions and
    /// more space. Above 0, as RocksDB requires. Default: 0.75.
    pub data_block_hash_table_util_ratio: f64,
    /// With `cache_index_and_filter_blocks`, still keep the top-level index and top-level
    /// filter index of a partitioned table with the open table, so that only partitions are
    /// evicted (RocksDB's `pin_top_level_index_and_filter`); without
    /// `cache_index_and_filter_blocks` they are kept with it anyway. Default: true.
    pub pin_top_level_index_and_filter: bool,
    /// With `cache_index_and_filter_blocks`, still keep the index and filter of a table
    /// first opened in level 0 with the open table, as without that option (RocksDB's
    /// `pin_l0_filter_and_index_blocks_in_cache`): every point lookup consults each L0
    /// table, so their blocks are the last that should be evicted. The table keeps them
    /// until it is closed, also after a move to a deeper level. Only the top level of a
    /// partitioned table is pinned so (`pin_top_level_index_and_filter`); its partitions
    /// stay in the cache. Default: false.
    pub pin_l0_filter_and_index_blocks_in_cache: bool,
    /// Which tables' data blocks go into the block cache as they are written (RocksDB's
    /// `prepopulate_block_cache`): with [`PrepopulateBlockCache::FlushOnly`], those of the
    /// tables flushes write, so that the reads of recent writes that follow a flush find
    /// their blocks cached instead of reading them back. At the cost of the cache entries
    /// they push out; no effect without a block cache. Default: disabled.
    pub prepopulate_block_cache: PrepopulateBlockCache,
    /// Compactions put in the block cache the data blocks they write from input blocks that
    /// readers found there, so that a compaction leaves the cache as warm as it found it
    /// instead of making the next reads of its keys read every block back
    /// (`db/warm_cache.rs`). Input blocks readers did not use add nothing, so cold data
    /// stays out and a workload that only writes caches nothing. No effect without a block
    /// cache. Default: true.
    pub warm_compaction_outputs: bool,
    /// How hard to erase a table's blocks from the block cache when a compaction has
    /// replaced it and its file is deleted (RocksDB's `uncache_aggressiveness`, with its
    /// meaning): 0 leaves them to the cache's eviction; otherwise the open table's data
    /// blocks are erased in index order while the share of them found cached stays at or
    /// above 0.99^(value - 1) (1 stops at the first one not cached, 10,000 tries them all),
    /// then its cached index and filter blocks; the values of a deleted blob file are swept
    /// from the cache by its number. Erased at once, dead blocks free their memory
    /// for the blocks reads want next instead of holding it until the clock reaches them,
    /// and the allocator hands that memory to the next blocks read rather than asking the
    /// system for more. Database-wide here (per column family in RocksDB). Default: 300 (a
    /// share of about 5%; RocksDB's default is 0, and 300 is the value its documentation
    /// names as the likely future one).
    pub uncache_aggressiveness: u32,
    /// The most table files held open at once. Default: 1000.
    ///
    /// [`Options::UNLIMITED_OPEN_FILES`] (RocksDB's -1) keeps every table open once read,
    /// with its reader beside the file's entry in the version, so that a lookup reaches it
    /// without the table cache. That costs a file handle and the pinned index and filter of
    /// every table in the tree.
    pub max_open_files: usize,
    /// Read tables and blob files for user reads with direct IO (`O_DIRECT`), around the
    /// operating system's page cache, so that the block cache is the only cache of their
    /// blocks and the memory reads use is its size. A file system that refuses direct IO
    /// fails the open, naming this option. Linux only. Default: false.
    pub use_direct_reads: bool,
    /// Write the tables and blob files of flushes and compactions, and read compaction
    /// inputs, with direct IO: compactions then neither fill the page cache with their
    /// outputs nor evict the pages reads use. A file system that refuses direct IO fails the
    /// open, naming this option. Linux only. Default: false.
    pub use_direct_io_for_flush_and_compaction: bool,
    /// Read tables and blob files for user reads through a read-only memory mapping of each
    /// (RocksDB's option): a block that misses the block cache is copied out of the page
    /// cache without a system call. Cannot be combined with `use_direct_reads`. Unix; where
    /// the file system has no mapping, files are read as without it. Default: false.
    pub allow_mmap_reads: bool,
    /// Bytes a compaction reads ahead in each input table when it reads with direct IO
    /// (which gets no readahead from the kernel); 0 reads block by block. Default: 2 MiB.
    pub compaction_readahead_size: usize,
    /// Bytes of the info log (`LOG`) after which it is closed and a new one started; 0 starts
    /// a new one only at open. Default: 16 MiB.
    pub max_log_file_size: u64,
    /// Old info logs (`LOG.old.N`) kept beside the current one; older ones are deleted.
    /// Default: 10.
    pub keep_log_file_num: usize,
    /// L0 files that trigger a compaction into the base level. Default: 4.
    pub level0_file_num_compaction_trigger: usize,
    /// L0 files at which writes are slowed down (a short delay per write group, growing with
    /// every file above). Default: 20.
    pub level0_slowdown_writes_trigger: usize,
    /// L0 files at which writes stop until compaction catches up. Default: 36.
    pub level0_stop_writes_trigger: usize,
    /// The smallest target size of the base level (dynamic level sizes). Default: 256 MiB.
    pub max_bytes_for_level_base: u64,
    /// Growth factor between adjacent levels. Default: 10.
    pub max_bytes_for_level_multiplier: f64,
    /// Levels of the tree, 2 to 7. Default: 7.
    pub num_levels: usize,
    /// The size of compaction output files: cut at a boundary of the files below them past
    /// half of it (90% at most), and wherever they are at twice it (at it when nothing lies
    /// below), always between two user keys. Default: 64 MiB.
    pub target_file_size_base: u64,
    /// How much larger each level's compaction outputs are than the level above's (RocksDB's
    /// `target_file_size_multiplier`): outputs into level L (L >= 1) are cut at
    /// `target_file_size_base * target_file_size_multiplier^(L-1)`. At least 1. Default: 1
    /// (every level's files are `target_file_size_base`).
    pub target_file_size_multiplier: u32,
    /// Run no compaction in the background (manual compaction still works). Default: false.
    pub disable_auto_compactions: bool,
    /// Leveled: merge L0 into the level below once reads have spent on its files about what
    /// the merge costs, even below `level0_file_num_compaction_trigger` (LevelDB's seek
    /// compaction, Pebble's read-triggered compactions). Each L0 file is a sorted run every
    /// seek positions a cursor in and every get checks; after a burst of writes the last
    /// flushes would otherwise stay there for as long as only reads come. Reads count their
    /// cost in bytes of compaction input that take as long (`version/read_charge.rs`), so a
    /// workload that reads little never pays for the merge. Default: true.
    pub read_triggered_compaction: bool,
    /// Leveled or universal compaction. Default: leveled.
    pub compaction_style: CompactionStyle,
    /// Options of universal compaction.
    pub universal: UniversalOptions,
    /// Key-value separation (RocksDB's integrated BlobDB; a column family field): flushes and
    /// compactions write values of at least `min_blob_size` bytes to blob files and keep a
    /// small reference in the tree, so that compactions rewrite references instead of values.
    /// Turning it off later is safe: values already in blob files stay readable. Default:
    /// false.
    pub enable_blob_files: bool,
    /// The smallest value kept in a blob file when `enable_blob_files` is on; smaller ones
    /// stay in the tables. Default: 0 (every value).
    pub min_blob_size: u64,
    /// Blob files are cut once they reach this many bytes. Default: 256 MiB.
    pub blob_file_size: u64,
    /// With `enable_blob_files`, a write that goes through the WAL puts each value of at
    /// least `min_blob_size` bytes straight into a blob file, and the WAL records the value's
    /// reference in its place: the value is written once, where without it the WAL takes it
    /// and the flush writes it again to a blob file. The memtable still holds the value, so
    /// reads are unchanged; recovery reads the values back from the blob files the WAL names.
    /// A synced write syncs the blob file before the WAL. Default: false.
    pub blob_separation_at_write: bool,
    /// Compactions move the live values of the oldest blob files (see
    /// `blob_garbage_collection_age_cutoff`) into new ones, so that the old files become all
    /// garbage and are deleted. Without it, a blob file goes only once every value in it is
    /// overwritten or deleted. Default: false.
    pub enable_blob_garbage_collection: bool,
    /// The oldest fraction of the family's blob files (by number) whose values compactions
    /// move, between 0 and 1. Default: 0.25.
    pub blob_garbage_collection_age_cutoff: f64,
    /// When the oldest blob files within the age cutoff hold at least this fraction of
    /// garbage, the tables that refer to the oldest of them are compacted, so that the space
    /// comes back without waiting for compactions to reach them. 1.0 turns it off.
    /// Default: 1.0.
    pub blob_garbage_collection_force_threshold: f64,
    /// Background threads: one flushes memtables, the others (at least one) compact. Several
    /// leveled compactions run at once when their files do not meet. Default: 2.
    pub max_background_jobs: usize,
    /// The most threads one compaction is split into, each merging one key range of its
    /// inputs. Default: 1 (no split).
    pub max_subcompactions: usize,
    /// Bytes of live WALs past which the families holding the oldest live WAL are flushed,
    /// so that it can be deleted (RocksDB's option): a family written rarely beside a busy
    /// one otherwise keeps every WAL since its first unflushed write alive. 0 means four
    /// times the memtable memory the families may hold (the sum of `write_buffer_size *
    /// max_write_buffer_number`), as in RocksDB. Changeable online
    /// ([`crate::Db::set_db_options`]). Default: 0.
    pub max_total_wal_size: u64,
    /// Flush the memtables of every column family together, recording all their new tables
    /// in one manifest edit (RocksDB's `atomic_flush`): with the WAL disabled, a crash then
    /// loses the same writes from every family (those after the last flush), never the
    /// writes of one family and not of another. Every flush, whatever triggered it, flushes
    /// all families. Default: false.
    pub atomic_flush: bool,
    /// A compaction output is cut early once it overlaps this many bytes of the level below
    /// its output level, so that a later compaction of it stays small. 0 means 25 times
    /// `target_file_size_base` (RocksDB's default). Default: 0.
    pub max_compaction_bytes: u64,
    /// Writes are delayed once the estimated bytes compaction still has to rewrite reach
    /// this; the delay grows toward the hard limit. 0 disables it. Default: 64 GiB.
    pub soft_pending_compaction_bytes_limit: u64,
    /// Writes stop once the estimated pending compaction bytes reach this, until compaction
    /// catches up. 0 disables it. Default: 256 GiB.
    pub hard_pending_compaction_bytes_limit: u64,
    /// The file system all IO goes through. Default: the real one ([`PosixFs`]).
    pub fs: Arc<dyn FileSystem>,
    /// Combines the operands of `Db::merge` into values, in reads, flushes and compactions
    /// (a column family field: each family has its own). A database holding merge records
    /// must be opened with the same operator (by meaning) every time. Default: none (merges
    /// are refused; a merge record met is an error naming the family).
    pub merge_operator: Option<Arc<dyn MergeOperator>>,
    /// Decides what compactions keep, entry by entry (RocksDB's `CompactionFilter`; a
    /// column family field). It sees the newest version of each key that no live snapshot
    /// can see, and never runs in flushes. Default: none.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
    /// Makes the family a TTL family (RocksDB's `DBWithTTL`; a column family field): every
    /// value written carries its expiry (the clock's time plus this ttl, or the ttl given to
    /// `Db::put_with_ttl`), reads hide expired values and compactions drop them. Whether a
    /// family has a ttl is recorded in the manifest when it is created; opening it with a
    /// ttl it was not created with, or without the one it was, is refused (the ttl's length
    /// may change). At least one second; not together with a merge operator. Default: none.
    pub ttl: Option<Duration>,
    /// The clock TTL families read. Default: the system clock ([`SystemClock`]).
    pub clock: Arc<dyn Clock>,
    /// Maps keys to prefixes (a column family field; RocksDB's `prefix_extractor`): each
    /// table's filter then also holds the prefixes of its keys, so that a seek skips the tables
    /// without the target's prefix (see [`ReadOptions::total_order_seek`] and
    /// [`ReadOptions::prefix_same_as_start`]). Recorded in the manifest when the family is
    /// created: opening a family with another extractor (or none, or one where it had none)
    /// is an error naming both. Default: none.
    pub prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
    /// The order of user keys (a column family field: each family has its own), as RocksDB's
    /// `comparator`: iteration, range bounds, range deletions and compaction ranges follow
    /// it. Keys are still equal only when their bytes are. A family's comparator name is
    /// recorded when the family is created, and opening it with a comparator of another name
    /// is refused. Default: [`BytewiseComparator`].
    pub comparator: Arc<dyn Comparator>,
    /// A memory budget for memtables shared with other column families and databases
    /// (RocksDB's `write_buffer_manager`): past it the largest memtable is flushed, and with
    /// its `allow_stall` writers wait for memory to be released. Default: none.
    pub write_buffer_manager: Option<Arc<crate::write_buffer_manager::WriteBufferManager>>,
    /// Without `write_buffer_manager`, a budget of this many bytes for the memtables of all
    /// this database's families (RocksDB's option; 0: none). Default: 0.
    pub db_write_buffer_size: usize,
    /// Limits the bytes per second flushes and compactions write, shared with the other
    /// databases given the same limiter (RocksDB's `rate_limiter`). Default: none.
    pub rate_limiter: Option<Arc<crate::rate_limiter::RateLimiter>>,
    /// Called when flushes and compactions begin and end, tables and WALs are created or
    /// deleted, write stalls change and background work fails (see [`EventListener`] for the
    /// threads they run in and what they may do). Shared by every column family. Default:
    /// none, and then the engine does no work for them.
    pub listeners: Vec<Arc<dyn EventListener>>,

    // The operations surface: file metadata, the change feed, moving data in and out.
    /// Each table a family writes gets one collector from each of these factories, whose
    /// properties are stored in the table (RocksDB's `table_properties_collector_factories`;
    /// a column family field; see [`TablePropertiesCollector`]). Read them back with
    /// `Db::live_files_metadata` or `Db::properties_of_all_tables`. Default: none.
    pub table_properties_collector_factories: Vec<Arc<dyn TablePropertiesCollectorFactory>>,
    /// Keep WALs no family needs any more for this many seconds after they become obsolete,
    /// in the `archive/` directory of the database, so that `Db::updates_since` can still
    /// read them (RocksDB's `WAL_ttl_seconds`). 0, with `wal_size_limit_mb` 0, keeps none.
    /// Default: 0.
    pub wal_ttl_seconds: u64,
    /// Keep archived WALs (see `wal_ttl_seconds`) up to this many MiB in all, the oldest
    /// deleted first (RocksDB's `WAL_size_limit_MB`). 0 sets no size limit. Default: 0.
    pub wal_size_limit_mb: u64,
    // Operations statistics, FIFO and periodic compaction (RocksDB's names).
    /// What the statistics record: at [`StatsLevel::ExceptDetailedTimers`] gets, writes,
    /// seeks and multi-gets are timed in the latency histograms ([`Db::histogram`]), two clock
    /// reads each. Database-wide. Default: [`StatsLevel::ExceptHistogramOrTimers`] (counters,
    /// and the histograms of flushes and compactions).
    ///
    /// [`Db::histogram`]: crate::Db::histogram
    pub stats_level: StatsLevel,
    /// Options of the FIFO compaction style ([`CompactionStyle::Fifo`]); a column family
    /// field.
    pub fifo: FifoOptions,
    /// Leveled: a table whose data was written more than this many seconds ago (its
    /// creation time, recorded in its properties by the [`Options::clock`]) is compacted
    /// (rewritten into its own level, the last level's in place), so that compaction filters
    /// and TTL expiry reach data nothing else would rewrite. 0 turns it off. A column family
    /// field. Default: 0.
    pub periodic_compaction_seconds: u64,
    /// RocksDB's `ttl` (Strata's [`Options::ttl`] is the TTL family's): a table older than
    /// this many seconds (by its creation time, as for `periodic_compaction_seconds`) is
    /// deleted under [`CompactionStyle::Fifo`], and compacted as by
    /// `periodic_compaction_seconds` under the leveled style. 0 turns it off. A column
    /// family field. Default: 0.
    pub table_ttl_seconds: u64,
    /// Options of `compression` (the level, RocksDB's `compression_opts`); a column family
    /// field. Default: the compressor's default level. A level the compressor does not have
    /// is refused at open.
    pub compression_opts: CompressionOptions,

    /// Reserve the last level (`num_levels - 1`) for files ingested behind all data
    /// ([`IngestOptions::ingest_behind`], for bulk backfills): compaction never writes there,
    /// keeps deletions and sequence numbers in the levels above (what they shadow may be
    /// ingested later), and a full compaction ends one level up. Refused with FIFO
    /// compaction and with fewer than 3 levels. A database-wide field, fixed at open.
    /// Default: false.
    pub allow_ingest_behind: bool,
    // Compression choices by level, and the block checksum.
    /// The compression of each level's tables (RocksDB's `compression_per_level`): when not
    /// empty, a table written into level L takes `compression_per_level[min(L, len - 1)]`,
    /// flushes (level 0) the first, and `compression` is not used;
    /// `bottommost_compression`, when set, still decides the bottommost level's. A column
    /// family field. Default: empty (`compression` everywhere).
    pub compression_per_level: Vec<Compression>,
    /// Options of `bottommost_compression` (RocksDB's `bottommost_compression_opts` with
    /// `enabled`): `None` compresses the bottommost level under `compression_opts`. Only
    /// used when `bottommost_compression` is set. A column family field. Default: `None`.
    pub bottommost_compression_opts: Option<CompressionOptions>,
    /// How the blocks of tables written from now on are checksummed (RocksDB's
    /// `BlockBasedTableOptions::checksum`): [`ChecksumType::Crc32c`] or
    /// [`ChecksumType::Xxh3`]. Each table records its own in its footer, so every table
    /// reads whatever this is now; a table checksummed by xxh3 has format version 6, which
    /// older builds refuse. A column family field. Default: crc32c.
    pub checksum: ChecksumType,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: false,
            error_if_exists: false,
            create_missing_column_families: false,
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            memtable_prefix_bloom_size_ratio: 0.02,
            memtable_whole_key_filtering: true,
            wal_recovery_mode: WalRecoveryMode::default(),
            max_write_group_bytes: 1 << 20,
            block_size: 4096,
            block_size_deviation: 10,
            block_restart_interval: 16,
            bloom_bits_per_key: 10,
            compression: Compression::None,
            bottommost_compression: None,
            block_cache_size: 8 << 20,
            cache_index_and_filter_blocks: false,
            index_type: IndexType::BinarySearch,
            partition_filters: false,
            metadata_block_size: 4096,
            data_block_index_type: DataBlockIndexType::BinarySearch,
            data_block_hash_table_util_ratio: crate::table::data_block_hash::DEFAULT_UTIL_RATIO,
            pin_top_level_index_and_filter: true,
            pin_l0_filter_and_index_blocks_in_cache: false,
            prepopulate_block_cache: PrepopulateBlockCache::Disable,
            warm_compaction_outputs: true,
            uncache_aggressiveness: 300,
            max_open_files: 1000,
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            allow_mmap_reads: false,
            compaction_readahead_size: 2 << 20,
            max_log_file_size: 16 << 20,
            keep_log_file_num: 10,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10.0,
            num_levels: 7,
            target_file_size_base: 64 << 20,
            target_file_size_multiplier: 1,
            disable_auto_compactions: false,
            read_triggered_compaction: true,
            compaction_style: CompactionStyle::Leveled,
            universal: UniversalOptions::default(),
            enable_blob_files: false,
            min_blob_size: 0,
            blob_file_size: 256 << 20,
            blob_separation_at_write: false,
            enable_blob_garbage_collection: false,
            blob_garbage_collection_age_cutoff: 0.25,
            blob_garbage_collection_force_threshold: 1.0,
            max_background_jobs: 2,
            max_subcompactions: 1,
            max_total_wal_size: 0,
            atomic_flush: false,
            max_compaction_bytes: 0,
            soft_pending_compaction_bytes_limit: 64 << 30,
            hard_pending_compaction_bytes_limit: 256 << 30,
            fs: Arc::new(PosixFs),
            merge_operator: None,
            compaction_filter: None,
            ttl: None,
            clock: Arc::new(SystemClock),
            prefix_extractor: None,
            comparator: Arc::new(BytewiseComparator),
            listeners: Vec::new(),
            table_properties_collector_factories: Vec::new(),
            wal_ttl_seconds: 0,
            wal_size_limit_mb: 0,
            stats_level: StatsLevel::default(),
            fifo: FifoOptions::default(),
            periodic_compaction_seconds: 0,
            table_ttl_seconds: 0,
            write_buffer_manager: None,
            db_write_buffer_size: 0,
            rate_limiter: None,
            compression_opts: CompressionOptions::default(),
            allow_ingest_behind: false,
            compression_per_level: Vec::new(),
            bottommost_compression_opts: None,
            checksum: ChecksumType::Crc32c,
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("create_if_missing", &self.create_if_missing)
            .field("error_if_exists", &self.error_if_exists)
            .field(
                "create_missing_column_families",
                &self.create_missing_column_families,
            )
            .field("write_buffer_size", &self.write_buffer_size)
            .field("max_write_buffer_number", &self.max_write_buffer_number)
            .field(
                "memtable_prefix_bloom_size_ratio",
                &self.memtable_prefix_bloom_size_ratio,
            )
            .field(
                "memtable_whole_key_filtering",
                &self.memtable_whole_key_filtering,
            )
            .field("wal_recovery_mode", &self.wal_recovery_mode)
            .field("max_write_group_bytes", &self.max_write_group_bytes)
            .field("block_size", &self.block_size)
            .field("block_size_deviation", &self.block_size_deviation)
            .field("block_restart_interval", &self.block_restart_interval)
            .field("bloom_bits_per_key", &self.bloom_bits_per_key)
            .field("compression", &self.compression)
            .field("bottommost_compression", &self.bottommost_compression)
            .field("block_cache_size", &self.block_cache_size)
            .field(
                "cache_index_and_filter_blocks",
                &self.cache_index_and_filter_blocks,
            )
            .field("index_type", &self.index_type)
            .field("partition_filters", &self.partition_filters)
            .field("metadata_block_size", &self.metadata_block_size)
            .field("data_block_index_type", &self.data_block_index_type)
            .field(
                "data_block_hash_table_util_ratio",
                &self.data_block_hash_table_util_ratio,
            )
            .field(
                "pin_top_level_index_and_filter",
                &self.pin_top_level_index_and_filter,
            )
            .field(
                "pin_l0_filter_and_index_blocks_in_cache",
                &self.pin_l0_filter_and_index_blocks_in_cache,
            )
            .field("prepopulate_block_cache", &self.prepopulate_block_cache)
            .field("warm_compaction_outputs", &self.warm_compaction_outputs)
            .field("uncache_aggressiveness", &self.uncache_aggressiveness)
            .field("max_open_files", &self.max_open_files)
            .field("use_direct_reads", &self.use_direct_reads)
            .field(
                "use_direct_io_for_flush_and_compaction",
                &self.use_direct_io_for_flush_and_compaction,
            )
            .field("allow_mmap_reads", &self.allow_mmap_reads)
            .field("compaction_readahead_size", &self.compaction_readahead_size)
            .field("max_log_file_size", &self.max_log_file_size)
            .field("keep_log_file_num", &self.keep_log_file_num)
            .field(
                "level0_file_num_compaction_trigger",
                &self.level0_file_num_compaction_trigger,
            )
            .field(
                "level0_slowdown_writes_trigger",
                &self.level0_slowdown_writes_trigger,
            )
            .field(
                "level0_stop_writes_trigger",
                &self.level0_stop_writes_trigger,
            )
            .field("max_bytes_for_level_base", &self.max_bytes_for_level_base)
            .field(
                "max_bytes_for_level_multiplier",
                &self.max_bytes_for_level_multiplier,
            )
            .field("num_levels", &self.num_levels)
            .field("target_file_size_base", &self.target_file_size_base)
            .field(
                "target_file_size_multiplier",
                &self.target_file_size_multiplier,
            )
            .field("disable_auto_compactions", &self.disable_auto_compactions)
            .field("read_triggered_compaction", &self.read_triggered_compaction)
            .field("compaction_style", &self.compaction_style)
            .field("universal", &self.universal)
            .field("enable_blob_files", &self.enable_blob_files)
            .field("min_blob_size", &self.min_blob_size)
            .field("blob_file_size", &self.blob_file_size)
            .field("blob_separation_at_write", &self.blob_separation_at_write)
            .field(
                "enable_blob_garbage_collection",
                &self.enable_blob_garbage_collection,
            )
            .field(
                "blob_garbage_collection_age_cutoff",
                &self.blob_garbage_collection_age_cutoff,
            )
            .field(
                "blob_garbage_collection_force_threshold",
                &self.blob_garbage_collection_force_threshold,
            )
            .field("max_background_jobs", &self.max_background_jobs)
            .field("max_subcompactions", &self.max_subcompactions)
            .field("max_total_wal_size", &self.max_total_wal_size)
            .field("atomic_flush", &self.atomic_flush)
            .field("max_compaction_bytes", &self.max_compaction_bytes)
            .field(
                "soft_pending_compaction_bytes_limit",
                &self.soft_pending_compaction_bytes_limit,
            )
            .field(
                "hard_pending_compaction_bytes_limit",
                &self.hard_pending_compaction_bytes_limit,
            )
            .field(
                "merge_operator",
                &self.merge_operator.as_ref().map(|m| m.name()),
            )
            .field(
                "compaction_filter",
                &self.compaction_filter.as_ref().map(|f| f.name()),
            )
            .field("ttl", &self.ttl)
            .field(
                "prefix_extractor",
                &self.prefix_extractor.as_ref().map(|e| e.name()),
            )
            .field("comparator", &self.comparator.name())
            .field("listeners", &self.listeners.len())
            .field(
                "table_properties_collector_factories",
                &self.table_properties_collector_factories,
            )
            .field("wal_ttl_seconds", &self.wal_ttl_seconds)
            .field("wal_size_limit_mb", &self.wal_size_limit_mb)
            .field("stats_level", &self.stats_level)
            .field("fifo", &self.fifo)
            .field(
                "periodic_compaction_seconds",
                &self.periodic_compaction_seconds,
            )
            .field("table_ttl_seconds", &self.table_ttl_seconds)
            .field("write_buffer_manager", &self.write_buffer_manager)
            .field("db_write_buffer_size", &self.db_write_buffer_size)
            .field("rate_limiter", &self.rate_limiter)
            .field("compression_opts", &self.compression_opts)
            .field("allow_ingest_behind", &self.allow_ingest_behind)
            .field("compression_per_level", &self.compression_per_level)
            .field(
                "bottommost_compression_opts",
                &self.bottommost_compression_opts,
            )
            .field("checksum", &self.checksum)
            .finish_non_exhaustive()
    }
}

impl Options {
    /// `max_open_files` without a limit: every table stays open once read.
    pub const UNLIMITED_OPEN_FILES: usize = usize::MAX;

    /// Checks the options against each other and their limits; the error names the option.
    pub fn validate(&self) -> Result<()> {
        if self.write_buffer_size < 4096 {
            return Err(Error::InvalidArgument(format!(
                "write_buffer_size is {}, it must be at least 4096",
                self.write_buffer_size
            )));
        }
        if !(0.0..=0.25).contains(&self.memtable_prefix_bloom_size_ratio) {
            return Err(Error::InvalidArgument(format!(
                "memtable_prefix_bloom_size_ratio is {}, it must be between 0 and 0.25",
                self.memtable_prefix_bloom_size_ratio
            )));
        }
        if self.allow_mmap_reads && self.use_direct_reads {
            return Err(Error::InvalidArgument(
                "allow_mmap_reads and use_direct_reads cannot both be set: a mapping reads \
                 through the page cache that direct reads bypass"
                    .into(),
            ));
        }
        if self.max_write_buffer_number < 1 {
            return Err(Error::InvalidArgument(
                "max_write_buffer_number must be at least 1".into(),
            ));
        }
        if self.block_size < 64 || self.block_size > (256 << 20) {
            return Err(Error::InvalidArgument(format!(
                "block_size is {}, it must be between 64 bytes and 256 MiB",
                self.block_size
            )));
        }
        if self.block_size_deviation > 100 {
            return Err(Error::InvalidArgument(format!(
                "block_size_deviation is {}, it must be a percentage between 0 and 100",
                self.block_size_deviation
            )));
        }
        if self.partition_filters && self.index_type != IndexType::TwoLevelIndexSearch {
            return Err(Error::InvalidArgument(format!(
                "partition_filters needs index_type {:?} (two_level_index_search), not {:?}",
                IndexType::TwoLevelIndexSearch,
                self.index_type
            )));
        }
        if self.data_block_index_type == DataBlockIndexType::BinaryAndHash {
            // RocksDB refuses a ratio at or below 0 with the hash index, and takes any other;
            // NaN and infinity too would make no table.
            let ratio = self.data_block_hash_table_util_ratio;
            if !(ratio > 0.0 && ratio.is_finite()) {
                return Err(Error::InvalidArgument(format!(
                    "data_block_hash_table_util_ratio is {ratio}, it must be above 0 (and \
                     finite) with data_block_index_type binary_and_hash"
                )));
            }
            if let KeyOrder::Custom(c) = self.key_order() {
                return Err(Error::InvalidArgument(format!(
                    "data_block_index_type binary_and_hash needs a built-in comparator (it \
                     finds keys by their bytes), not {:?}",
                    c.name()
                )));
            }
        }
        if self.metadata_block_size < 1 || self.metadata_block_size > (256 << 20) {
            return Err(Error::InvalidArgument(format!(
                "metadata_block_size is {}, it must be between 1 byte and 256 MiB",
                self.metadata_block_size
            )));
        }
        if self.block_restart_interval < 1 {
            return Err(Error::InvalidArgument(
                "block_restart_interval must be at least 1".into(),
            ));
        }
        if self.max_open_files < 1 {
            return Err(Error::InvalidArgument(
                "max_open_files must be at least 1".into(),
            ));
        }
        if !(2..=crate::version::NUM_LEVELS).contains(&self.num_levels) {
            return Err(Error::InvalidArgument(format!(
                "num_levels is {}, it must be between 2 and {}",
                self.num_levels,
                crate::version::NUM_LEVELS
            )));
        }
        if self.level0_file_num_compaction_trigger < 1
            || self.level0_slowdown_writes_trigger < self.level0_file_num_compaction_trigger
            || self.level0_stop_writes_trigger < self.level0_slowdown_writes_trigger
        {
            return Err(Error::InvalidArgument(format!(
                "level0 triggers must satisfy 1 <= level0_file_num_compaction_trigger ({}) <= \
                 level0_slowdown_writes_trigger ({}) <= level0_stop_writes_trigger ({})",
                self.level0_file_num_compaction_trigger,
                self.level0_slowdown_writes_trigger,
                self.level0_stop_writes_trigger
            )));
        }
        if self.max_bytes_for_level_multiplier.is_nan() || self.max_bytes_for_level_multiplier < 1.0
        {
            return Err(Error::InvalidArgument(
                "max_bytes_for_level_multiplier must be at least 1".into(),
            ));
        }
        if self.max_bytes_for_level_base < 1 || self.target_file_size_base < 1 {
            return Err(Error::InvalidArgument(
                "max_bytes_for_level_base and target_file_size_base must be at least 1".into(),
            ));
        }
        if self.target_file_size_multiplier < 1 {
            return Err(Error::InvalidArgument(
                "target_file_size_multiplier must be at least 1".into(),
            ));
        }
        if self.max_background_jobs < 1 || self.max_subcompactions < 1 {
            return Err(Error::InvalidArgument(format!(
                "max_background_jobs ({}) and max_subcompactions ({}) must be at least 1",
                self.max_background_jobs, self.max_subcompactions
            )));
        }
        let u = &self.universal;
        if u.min_merge_width < 2 || u.max_merge_width < u.min_merge_width {
            return Err(Error::InvalidArgument(format!(
                "universal merge widths must satisfy 2 <= min_merge_width ({}) <= \
                 max_merge_width ({})",
                u.min_merge_width, u.max_merge_width
            )));
        }
        if self.blob_file_size < 1 {
            return Err(Error::InvalidArgument(
                "blob_file_size must be at least 1".into(),
            ));
        }
        for (name, fraction) in [
            (
                "blob_garbage_collection_age_cutoff",
                self.blob_garbage_collection_age_cutoff,
            ),
            (
                "blob_garbage_collection_force_threshold",
                self.blob_garbage_collection_force_threshold,
            ),
        ] {
            if !(0.0..=1.0).contains(&fraction) {
                return Err(Error::InvalidArgument(format!(
                    "{name} is {fraction}, it must be between 0 and 1"
                )));
            }
        }
        if self.hard_pending_compaction_bytes_limit != 0
            && self.hard_pending_compaction_bytes_limit < self.soft_pending_compaction_bytes_limit
        {
            return Err(Error::InvalidArgument(format!(
                "hard_pending_compaction_bytes_limit ({}) is below \
                 soft_pending_compaction_bytes_limit ({})",
                self.hard_pending_compaction_bytes_limit, self.soft_pending_compaction_bytes_limit
            )));
        }
        if let Some(ttl) = self.ttl {
            if ttl < Duration::from_secs(1) {
                return Err(Error::InvalidArgument(format!(
                    "ttl is {ttl:?}, it must be at least 1 second"
                )));
            }
            if self.merge_operator.is_some() {
                return Err(Error::InvalidArgument(
                    "ttl and merge_operator cannot be combined: merge operands are not \
                     supported in a TTL family"
                        .into(),
                ));
            }
        }
        if self.max_write_group_bytes < 1 {
            return Err(Error::InvalidArgument(
                "max_write_group_bytes must be at least 1".into(),
            ));
        }
        self.validate_age_and_fifo()?;
        if let Some(e) = &self.prefix_extractor {
            // The empty name stands for "no extractor" in tables and the manifest.
            if e.name().is_empty() || e.name().chars().any(char::is_control) {
                return Err(Error::InvalidArgument(format!(
                    "prefix_extractor name {:?} is not valid: it must be non-empty, without \
                     control characters",
                    e.name()
                )));
            }
        }
        Ok(())
    }
}

impl Options {
    /// Checks the options of FIFO compaction and of the compactions by table age.
    fn validate_age_and_fifo(&self) -> Result<()> {
        let kinds = std::iter::once(self.compression).chain(self.compression_per_level.clone());
        for kind in kinds.chain(self.bottommost_compression) {
            self.compression_opts
                .check(kind)
                .map_err(|why| Error::InvalidArgument(format!("compression_opts: {why}")))?;
        }
        if self.allow_ingest_behind {
            if self.compaction_style == CompactionStyle::Fifo {
                return Err(Error::InvalidArgument(
                    "allow_ingest_behind is not supported with FIFO compaction (it has no \
                     levels to keep the ingested files under)"
                        .into(),
                ));
            }
            if self.num_levels < 3 {
                return Err(Error::InvalidArgument(format!(
                    "allow_ingest_behind reserves the last level, so num_levels must be at \
                     least 3 (it is {})",
                    self.num_levels
                )));
            }
        }
        if let (Some(kind), Some(opts)) = (
            self.bottommost_compression,
            self.bottommost_compression_opts,
        ) {
            opts.check(kind).map_err(|why| {
                Error::InvalidArgument(format!("bottommost_compression_opts: {why}"))
            })?;
        }
        let by_age = self.periodic_compaction_seconds > 0 || self.table_ttl_seconds > 0;
        match self.compaction_style {
            CompactionStyle::Fifo if self.fifo.max_table_files_size == 0 => {
                Err(Error::InvalidArgument(
                    "fifo.max_table_files_size is 0: FIFO compaction would delete every table \
                     as it is written"
                        .into(),
                ))
            }
            CompactionStyle::Fifo if self.periodic_compaction_seconds > 0 => {
                Err(Error::InvalidArgument(format!(
                    "periodic_compaction_seconds ({}) is not supported with FIFO compaction, \
                     which never rewrites tables: use table_ttl_seconds to delete old ones",
                    self.periodic_compaction_seconds
                )))
            }
            CompactionStyle::Universal if by_age => Err(Error::InvalidArgument(format!(
                "periodic_compaction_seconds ({}) and table_ttl_seconds ({}) are not supported \
                 with universal compaction (leveled and FIFO only)",
                self.periodic_compaction_seconds, self.table_ttl_seconds
            ))),
            _ => Ok(()),
        }
    }

    /// The options of the tables this database writes into level 0 (flushes, ingestion),
    /// or into the bottommost level when `bottommost`.
    pub(crate) fn table_options(&self, bottommost: bool) -> TableOptions {
        self.table_options_at(0, bottommost)
    }

    /// The compression, and its options, of a table written into `level`, the bottommost
    /// level when `bottommost` (RocksDB's choice: `bottommost_compression` there when set,
    /// else `compression_per_level` when not empty, else `compression`).
    pub(crate) fn compression_at(
        &self,
        level: usize,
        bottommost: bool,
    ) -> (Compression, CompressionOptions) {
        match (bottommost, self.bottommost_compression) {
            (true, Some(c)) => (
                c,
                self.bottommost_compression_opts
                    .unwrap_or(self.compression_opts),
            ),
            _ => {
                let per_level = &self.compression_per_level;
                let kind = match per_level.len() {
                    0 => self.compression,
                    n => per_level[level.min(n - 1)],
                };
                (kind, self.compression_opts)
            }
        }
    }

    /// The options of the tables this database writes into `level`, the bottommost level
    /// when `bottommost` (the compression by [`Options::compression_at`]).
    pub(crate) fn table_options_at(&self, level: usize, bottommost: bool) -> TableOptions {
        let (compression, compression_opts) = self.compression_at(level, bottommost);
        TableOptions {
            block_size: self.block_size,
            block_size_deviation: self.block_size_deviation,
            restart_interval: self.block_restart_interval,
            bloom_bits_per_key: self.bloom_bits_per_key,
            compression,
            prefix_extractor: self.prefix_extractor.clone(),
            comparator: crate::table::block::BlockOrder::Internal(self.key_order()),
            index_type: self.index_type,
            partition_filters: self.partition_filters,
            metadata_block_size: self.metadata_block_size,
            data_block_index_type: self.data_block_index_type,
            data_block_hash_table_util_ratio: self.data_block_hash_table_util_ratio,
            properties_collectors: self.table_properties_collector_factories.clone(),
            creation_time: Some(self.clock.now_secs()),
            compression_opts,
            checksum: self.checksum,
            ..TableOptions::for_internal_keys()
        }
    }

    /// How user reads open table and blob files (validated options ask for one mode at
    /// most).
    pub(crate) fn read_mode(&self) -> ReadMode {
        match (self.use_direct_reads, self.allow_mmap_reads) {
            (true, _) => ReadMode::Direct,
            (false, true) => ReadMode::Mmap,
            (false, false) => ReadMode::Buffered,
        }
    }

    /// Bytes of each memtable's bloom filter (0: none).
    pub(crate) fn memtable_bloom_bytes(&self) -> usize {
        match self.memtable_whole_key_filtering {
            true => {
                (self.write_buffer_size as f64 * self.memtable_prefix_bloom_size_ratio) as usize
            }
            false => 0,
        }
    }

    /// The order of user keys, as the engine holds it.
    pub(crate) fn key_order(&self) -> KeyOrder {
        KeyOrder::new(&self.comparator)
    }
}

impl Options {
    /// The levels compaction may write: all of them, or all but the last when
    /// [`Options::allow_ingest_behind`] reserves it.
    pub(crate) fn compaction_levels(&self) -> usize {
        match self.allow_ingest_behind {
            true => self.num_levels - 1,
            false => self.num_levels,
        }
    }

    /// The options the compaction picker reads.
    pub(crate) fn picker_options(&self) -> PickerOptions {
        PickerOptions {
            num_levels: self.compaction_levels(),
            level0_file_num_compaction_trigger: self.level0_file_num_compaction_trigger,
            max_bytes_for_level_base: self.max_bytes_for_level_base,
            max_bytes_for_level_multiplier: self.max_bytes_for_level_multiplier,
            style: self.compaction_style,
            universal: self.universal,
            read_triggered: self.read_triggered_compaction,
            blob_gc_force: (self.enable_blob_garbage_collection
                && self.blob_garbage_collection_force_threshold < 1.0)
                .then_some((
                    self.blob_garbage_collection_age_cutoff,
                    self.blob_garbage_collection_force_threshold,
                )),
            fifo: self.fifo,
            periodic_compaction_seconds: self.periodic_compaction_seconds,
            table_ttl_seconds: self.table_ttl_seconds,
        }
    }

    /// The grandparent overlap at which a compaction output is cut.
    pub(crate) fn max_compaction_bytes(&self) -> u64 {
        match self.max_compaction_bytes {
            0 => self.target_file_size_base.saturating_mul(25),
            n => n,
        }
    }

    /// The size at which compaction outputs into `level` are cut.
    pub(crate) fn target_file_size(&self, level: usize) -> u64 {
        let steps = level.saturating_sub(1).min(u32::MAX as usize) as u32;
        u64::from(self.target_file_size_multiplier)
            .checked_pow(steps)
            .map_or(u64::MAX, |m| self.target_file_size_base.saturating_mul(m))
    }

    /// Threads that run compactions (all background jobs but the flush thread).
    pub(crate) fn compaction_threads(&self) -> usize {
        self.max_background_jobs.saturating_sub(1).max(1)
    }
}

/// Declares [`CfOptions`] with the fields of [`Options`] that each column family sets for
/// itself, and the two conversions between them, from one list.
macro_rules! family_options {
    ($($(#[$doc:meta])* $field:ident: $ty:ty,)*) => {
        /// The options of one column family: the fields of [`Options`] that each family sets
        /// for itself (memtables, tables, compaction). Everything else (the WAL, the block
        /// cache, the background threads, the file system) is shared and set by `Options`.
        /// The default family takes these fields from the `Options` the database is opened
        /// with; `CfOptions::default()` is the defaults of `Options`.
        ///
        /// Built like [`Options`]: from `CfOptions::default()` (or [`Options::cf_options`]),
        /// then field by field.
        ///
        /// # Examples
        ///
        /// ```
        /// use std::sync::Arc;
        /// use strata::{CfOptions, Db, Options, UInt64Add};
        ///
        /// let dir = tempfile::tempdir()?;
        /// let mut options = Options::default();
        /// options.create_if_missing = true;
        /// let db = Db::open(dir.path(), options)?;
        /// let mut adding = CfOptions::default();
        /// adding.merge_operator = Some(Arc::new(UInt64Add));
        /// let counters = db.create_cf("counters", adding)?;
        /// db.merge_cf(&counters, b"hits", 2u64.to_le_bytes())?;
        /// db.merge_cf(&counters, b"hits", 3u64.to_le_bytes())?;
        /// assert_eq!(db.get_cf(&counters, b"hits")?, Some(5u64.to_le_bytes().to_vec()));
        /// db.close()?;
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub struct CfOptions {
            $($(#[$doc])* pub $field: $ty,)*
        }

        impl Options {
            /// The column family options these options give the default family.
            pub fn cf_options(&self) -> CfOptions {
                CfOptions { $($field: self.$field.clone(),)* }
            }

            /// These options with the family fields of `cf`: what a family's jobs read.
            pub(crate) fn for_family(&self, cf: &CfOptions) -> Options {
                Options { $($field: cf.$field.clone(),)* ..self.clone() }
            }

            /// These options with the column family fields of `cf` in place of their own
            /// (the database-wide fields kept): the whole of a family's options, as the
            /// option registry's getters read them.
            pub fn with_cf_options(&self, cf: &CfOptions) -> Options {
                self.for_family(cf)
            }
        }
    };
}

family_options! {
    /// See [`Options::write_buffer_size`].
    write_buffer_size: usize,
    /// See [`Options::max_write_buffer_number`].
    max_write_buffer_number: usize,
    /// See [`Options::memtable_prefix_bloom_size_ratio`].
    memtable_prefix_bloom_size_ratio: f64,
    /// See [`Options::memtable_whole_key_filtering`].
    memtable_whole_key_filtering: bool,
    /// See [`Options::block_size`].
    block_size: usize,
    /// See [`Options::block_size_deviation`].
    block_size_deviation: u32,
    /// See [`Options::block_restart_interval`].
    block_restart_interval: usize,
    /// See [`Options::bloom_bits_per_key`].
    bloom_bits_per_key: u32,
    /// See [`Options::index_type`].
    index_type: IndexType,
    /// See [`Options::partition_filters`].
    partition_filters: bool,
    /// See [`Options::metadata_block_size`].
    metadata_block_size: usize,
    /// See [`Options::data_block_index_type`].
    data_block_index_type: DataBlockIndexType,
    /// See [`Options::data_block_hash_table_util_ratio`].
    data_block_hash_table_util_ratio: f64,
    /// See [`Options::compression`].
    compression: Compression,
    /// See [`Options::bottommost_compression`].
    bottommost_compression: Option<Compression>,
    /// See [`Options::level0_file_num_compaction_trigger`].
    level0_file_num_compaction_trigger: usize,
    /// See [`Options::level0_slowdown_writes_trigger`].
    level0_slowdown_writes_trigger: usize,
    /// See [`Options::level0_stop_writes_trigger`].
    level0_stop_writes_trigger: usize,
    /// See [`Options::max_bytes_for_level_base`].
    max_bytes_for_level_base: u64,
    /// See [`Options::max_bytes_for_level_multiplier`].
    max_bytes_for_level_multiplier: f64,
    /// See [`Options::num_levels`].
    num_levels: usize,
    /// See [`Options::target_file_size_base`].
    target_file_size_base: u64,
    /// See [`Options::target_file_size_multiplier`].
    target_file_size_multiplier: u32,
    /// See [`Options::disable_auto_compactions`].
    disable_auto_compactions: bool,
    /// See [`Options::read_triggered_compaction`].
    read_triggered_compaction: bool,
    /// See [`Options::compaction_style`].
    compaction_style: CompactionStyle,
    /// See [`Options::universal`].
    universal: UniversalOptions,
    /// See [`Options::enable_blob_files`].
    enable_blob_files: bool,
    /// See [`Options::min_blob_size`].
    min_blob_size: u64,
    /// See [`Options::blob_file_size`].
    blob_file_size: u64,
    /// See [`Options::blob_separation_at_write`].
    blob_separation_at_write: bool,
    /// See [`Options::enable_blob_garbage_collection`].
    enable_blob_garbage_collection: bool,
    /// See [`Options::blob_garbage_collection_age_cutoff`].
    blob_garbage_collection_age_cutoff: f64,
    /// See [`Options::blob_garbage_collection_force_threshold`].
    blob_garbage_collection_force_threshold: f64,
    /// See [`Options::max_subcompactions`].
    max_subcompactions: usize,
    /// See the field of the same name of [`Options`].
    max_compaction_bytes: u64,
    /// See [`Options::soft_pending_compaction_bytes_limit`].
    soft_pending_compaction_bytes_limit: u64,
    /// See [`Options::hard_pending_compaction_bytes_limit`].
    hard_pending_compaction_bytes_limit: u64,
    /// See [`Options::merge_operator`].
    merge_operator: Option<Arc<dyn MergeOperator>>,
    /// See [`Options::compaction_filter`].
    compaction_filter: Option<Arc<dyn CompactionFilter>>,
    /// See [`Options::ttl`].
    ttl: Option<Duration>,
    /// See [`Options::prefix_extractor`].
    prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
    /// See [`Options::comparator`].
    comparator: Arc<dyn Comparator>,
    /// See [`Options::table_properties_collector_factories`].
    table_properties_collector_factories: Vec<Arc<dyn TablePropertiesCollectorFactory>>,
    /// See [`Options::fifo`].
    fifo: FifoOptions,
    /// See [`Options::periodic_compaction_seconds`].
    periodic_compaction_seconds: u64,
    /// See [`Options::table_ttl_seconds`].
    table_ttl_seconds: u64,
    /// See [`Options::compression_opts`].
    compression_opts: CompressionOptions,
    /// See [`Options::compression_per_level`].
    compression_per_level: Vec<Compression>,
    /// See [`Options::bottommost_compression_opts`].
    bottommost_compression_opts: Option<CompressionOptions>,
    /// See [`Options::checksum`].
    checksum: ChecksumType,
}

impl Default for CfOptions {
    fn default() -> Self {
        Options::default().cf_options()
    }
}

/// Options for one write.
///
/// Built like [`Options`]: from `WriteOptions::default()`, then field by field.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// let mut durable = WriteOptions::default();
/// durable.sync = true;
/// db.put_opt(b"order/17", b"paid", &durable)?; // on disk when it returns
/// assert_eq!(db.stats().wal_syncs, 1);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Return only once the write is durable (fdatasync of the WAL). Without it a write
    /// survives a process crash but may be lost in a power cut; recovery then yields a prefix
    /// of the acknowledged writes.
    pub sync: bool,
    /// Skip the WAL: the write lives only in memory until flushed, and a crash loses it.
    pub disable_wal: bool,
}

/// Options of [`Db::ingest`](crate::Db::ingest) (RocksDB's `IngestExternalFileOptions`).
///
/// RocksDB's `ingest_behind` (placing the files below all data, as the oldest versions) is
/// not offered: ingested keys are always newer than every write before the ingest.
///
/// Built like [`Options`]: from `IngestOptions::default()`, then field by field.
///
/// # Examples
///
/// ```
/// use strata::{Db, IngestOptions, Options, SstWriter};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path().join("db"), options)?;
/// let file = dir.path().join("bulk.sst");
/// let mut writer = SstWriter::create(&file, &Options::default())?;
/// writer.put(b"a", b"1")?;
/// writer.put(b"b", b"2")?;
/// let info = writer.finish()?;
/// assert_eq!(info.largest_key.as_deref(), Some(&b"b"[..]));
/// let mut moving = IngestOptions::default();
/// moving.move_files = true;
/// db.ingest(&[&file], &moving)?;
/// assert!(!file.exists()); // moved into the database
/// assert_eq!(db.get(b"b")?.as_deref(), Some(&b"2"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct IngestOptions {
    /// Move the files into the database instead of copying them: each is hard-linked (copied
    /// where the file system cannot link, as across file systems) and the source is removed
    /// once the ingest has succeeded. Without it the source files stay as they are. Default:
    /// false.
    pub move_files: bool,
    /// When a file overlaps keys still in the family's memtables, flush them first (writes
    /// wait meanwhile); without it such an ingest is refused. Default: true.
    pub allow_blocking_flush: bool,
    /// Accepted for RocksDB's sake, and always done: before anything changes, every entry
    /// of each file is read (to check its order, kind and sequence number), which checks the
    /// crc32c of every block. Default: false.
    pub verify_checksums_before_ingest: bool,
    /// Place the files under all the family's data (RocksDB's `ingest_behind`, for bulk
    /// backfills): in the last level, which [`Options::allow_ingest_behind`] must have
    /// reserved, at sequence number 0, so that every key already in the family, and every
    /// deletion, shadows them. No flush, no rewrite, and writes do not wait. Refused when a
    /// file overlaps a file already in the last level, or a file with sequence number 0 in
    /// the levels above (data written before the last level was reserved, whose deletions
    /// may have been dropped). Snapshots see the ingested keys, as data older than them.
    /// Default: false.
    pub ingest_behind: bool,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            move_files: false,
            allow_blocking_flush: true,
            verify_checksums_before_ingest: false,
            ingest_behind: false,
        }
    }
}

/// Options for reads and iterators.
///
/// Built like [`Options`]: from `ReadOptions::default()`, then field by field.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, ReadOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// for key in ["a", "b", "c", "d"] {
///     db.put(key, "v")?;
/// }
/// let before = db.snapshot();
/// db.put("bb", "v")?; // after the snapshot: not seen below
/// let mut read = ReadOptions::default();
/// read.snapshot = Some(before);
/// read.lower_bound = Some(b"b".to_vec()); // inclusive
/// read.upper_bound = Some(b"d".to_vec()); // exclusive
/// let mut iter = db.iter(&read);
/// iter.seek_to_first();
/// let mut keys = Vec::new();
/// while iter.valid() {
///     keys.push(String::from_utf8(iter.key().to_vec())?);
///     iter.next();
/// }
/// iter.status()?;
/// assert_eq!(keys, ["b", "c"]);
/// # drop(iter);
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Read as of this snapshot; by default, as of the start of the read.
    pub snapshot: Option<Snapshot>,
    /// Iterators see no key below this one (inclusive bound).
    pub lower_bound: Option<Vec<u8>>,
    /// Iterators see no key at or above this one (exclusive bound).
    pub upper_bound: Option<Vec<u8>>,
    /// With a prefix extractor: a seek (or `seek_for_prev`, or the first key found by
    /// `seek_to_first` / `seek_to_last`) sets the iterator's prefix, and it becomes invalid at
    /// the first key of another prefix, as RocksDB's option of that name. A seek to a key
    /// outside the extractor's domain sets no prefix. Ignored with `total_order_seek` and
    /// without an extractor. Default: false.
    pub prefix_same_as_start: bool,
    /// Ignore prefix filters: seeks read every table whatever the target's prefix. Without it
    /// (and with a prefix extractor), a seek skips the tables whose filter holds no key with
    /// the target's prefix, so keys of later prefixes are found only in the tables it read:
    /// as in RocksDB, iterating past the target's prefix without `prefix_same_as_start`
    /// may miss keys; set this to scan across prefixes. Default: false.
    pub total_order_seek: bool,
    /// Bytes an iterator reads from a table file at a time, from its first block read on, a
    /// seek's included (RocksDB's option of that name): for scans that read far and seek
    /// rarely. The blocks read ahead go to the block cache, so without one, reads go block
    /// by block. 0 lets each table's window grow on its own: a seek's block and the next are
    /// read alone, then windows of 16 KiB doubling to 256 KiB as the scan goes on.
    /// Point lookups ignore it. Default: 0.
    pub readahead_size: usize,
}
