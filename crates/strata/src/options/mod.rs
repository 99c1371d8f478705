//! Options for opening a database, writing and reading.
//!
//! This file holds [`Options`], its fields in one list with their defaults, and
//! [`Options::validate`], which checks one group of options after another. Each group's
//! checks, and what the engine derives from its fields, are in the group's module, as
//! RocksDB's users know the groups:
//!
//! - `memtable`: the write buffers and each memtable's bloom filter.
//! - `wal`: [`WalRecoveryMode`] and the write group.
//! - `table`: block-based tables (blocks, the block cache and [`PrepopulateBlockCache`],
//!   bloom and prefix filters, the index and its partitions, the data block hash index, the
//!   table cache) and the `TableOptions` a table is written with.
//! - `compression`: the compression of each level and the compressors' options.
//! - `blob`: blob files (key-value separation) and their garbage collection.
//! - `io`: direct IO and memory-mapped reads.
//! - `compaction`: styles and their sub-options, triggers, level and file sizes, threads,
//!   stall limits; the `PickerOptions` the compaction picker reads.
//! - `family`: [`CfOptions`], the fields each column family sets for itself.
//! - `operation`: the options given with each call ([`ReadOptions`], [`WriteOptions`],
//!   [`IngestOptions`]).
//! - `debug`: how [`Options`] prints (every field but the handles' contents).
//! - `registry` names every option (one table of name, kind, mutability, getter and setter)
//!   and `file` writes and reads them as an OPTIONS file.

mod blob;
mod compaction;
mod compression;
mod debug;
mod family;
pub(crate) mod file;
mod io;
mod memtable;
mod operation;
pub mod registry;
mod table;
mod wal;

use std::sync::Arc;
use std::time::Duration;

pub use family::CfOptions;
pub use operation::{IngestOptions, ReadOptions, WriteOptions};
pub use table::PrepopulateBlockCache;
pub use wal::WalRecoveryMode;

use crate::compaction::{CompactionStyle, FifoOptions, UniversalOptions};
use crate::compaction_filter::ttl::{Clock, SystemClock};
use crate::compaction_filter::CompactionFilter;
use crate::comparator::{BytewiseComparator, Comparator, KeyOrder};
use crate::error::{Error, Result};
use crate::fs::{FileSystem, PosixFs};
use crate::histogram::StatsLevel;
use crate::listener::EventListener;
use crate::merge::MergeOperator;
use crate::prefix::PrefixExtractor;
#[cfg(doc)]
use crate::table::collector::TablePropertiesCollector;
use crate::table::collector::TablePropertiesCollectorFactory;
use crate::table::{ChecksumType, Compression, CompressionOptions, DataBlockIndexType, IndexType};

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
    /// Each memtable keeps a hash index from each user key to its newest entry, of this
    /// fraction of `write_buffer_size` bytes (rounded down to a power of two of 8-byte slots,
    /// counted in its memory), so that a get of a key the memtable holds finds it by one
    /// probe instead of a skiplist search: in a 64 MiB memtable of 100-byte values the
    /// search is about 30 nodes, most of them cache misses. 0 keeps no index; at most 0.5.
    /// Keep it above about 12 bytes of index per entry the memtable holds (the default
    /// suits entries of 100 bytes or more); a full index still answers the keys it holds,
    /// and the others are searched for. A custom comparator gets no index. Default: 0.125
    /// (RocksDB has no such index).
    pub memtable_point_index_ratio: f64,
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
    /// workload that reads little never pays for the merge. What reads paid is kept across
    /// a close for the next process (`db/read_charges.rs`). Default: true.
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
    /// Keep what open replays from the WALs in memory instead of flushing it to level 0
    /// (RocksDB's `avoid_flush_during_recovery`): a family whose replayed writes fit one
    /// memtable below `write_buffer_size` takes that memtable as its active one, and its WALs
    /// stay until the memtable is flushed as any other is (when it fills, by `flush`, or by
    /// `max_total_wal_size`). A restart then writes nothing and leaves the tree as it was. A
    /// family whose replay filled more than one memtable, or more than `write_buffer_size`,
    /// is flushed at open as without the option; so is every family with `atomic_flush`.
    /// Default: false.
    pub avoid_flush_during_recovery: bool,
    /// Hold each write's WAL record in memory instead of appending it to the WAL file at
    /// once (RocksDB's `manual_wal_flush`): the records go to the file a megabyte at a time,
    /// at [`Db::flush_wal`](crate::Db::flush_wal), at a synced write or WAL sync, at a
    /// memtable switch, a checkpoint, a backup, `updates_since` and close. A write then costs
    /// no system call, and writes acknowledged since the last of those are lost if the
    /// process ends (a crash, a kill), not only if the machine does: the durability of
    /// TuplDB's `NO_FLUSH`. Default: false.
    pub manual_wal_flush: bool,
    /// The algorithm each WAL record is compressed with (RocksDB's `wal_compression`, which
    /// takes zstd only): a record is stored compressed when that saves at least an eighth of
    /// it, and as written otherwise, so a WAL may hold both (zstd runs in its fast mode, level -1). Fewer
    /// bytes written and synced for values that compress, for the CPU of compressing each
    /// write group on the write path (`docs/guide.md` has measurements). Every reader of
    /// the WAL (recovery, secondaries, `updates_since`, the tools) undoes it. A build older
    /// than the option takes a compressed record for the torn end of its log and, under
    /// point-in-time recovery, opens without the writes from there on: flush with the option
    /// off before going back to one (`docs/guide.md`). Only the WAL is compressed, not the
    /// manifest. Default: [`Compression::None`](crate::Compression).
    pub wal_compression: crate::table::Compression,
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
            memtable_point_index_ratio: 0.125,
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
            avoid_flush_during_recovery: false,
            manual_wal_flush: false,
            wal_compression: crate::table::Compression::None,
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

impl Options {
    /// `max_open_files` without a limit: every table stays open once read.
    pub const UNLIMITED_OPEN_FILES: usize = usize::MAX;

    /// Checks the options against each other and their limits; the error names the option.
    pub fn validate(&self) -> Result<()> {
        self.validate_memtable()?;
        self.validate_io()?;
        self.validate_table()?;
        self.validate_compaction()?;
        self.validate_blob()?;
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
        self.validate_wal()?;
        self.validate_compression()
    }

    /// The order of user keys, as the engine holds it.
    pub(crate) fn key_order(&self) -> KeyOrder {
        KeyOrder::new(&self.comparator)
    }
}
