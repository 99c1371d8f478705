//! Reads a table: point lookups (filter first, then index, then one data block) and
//! iterators. Data blocks go through the shared block cache. The index and filter blocks are
//! read and checked at open, then either pinned with the open table (the default) or, with
//! `cache_index_and_filter_blocks` (RocksDB's option of that name), kept in the block cache,
//! where they compete with data blocks for memory and are read again after eviction.
//!
//! A table with a partitioned index or filter (`partitioned.rs`) has only its top-level
//! index and top-level filter index read at open; they are pinned with the table unless
//! `cache_index_and_filter_blocks` is set without `pin_top_level_index_and_filter`. Its
//! index and filter partitions go through the block cache like data blocks (counted as
//! index and filter blocks), read when a lookup or an iterator reaches them, so a point
//! lookup is: top-level filter index, filter partition, top-level index, index partition,
//! data block.
//!
//! The range-deletion block, if the table has one, is read, checked and fragmented once at
//! open and kept with the open table (not in the block cache): every read of a key in the
//! table's range consults it, and it is small next to the data it deletes.
//!
//! Iterators over a table (`TableIterator`) are in `iter.rs`; they read their blocks through
//! the cache here, and read ahead when they step from block to block (`readahead.rs`).
//!
//! Every error names the file and the offset of the block it concerns.

use crate::counter::StripedCounter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cache::{CacheValue, ClockCache};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iterator::InternalIterator;
use crate::perf_context::{perf_count, PerfTimer};
use crate::range_del::FragmentedList;
use crate::table::block::{Block, BlockIter, BlockOrder, INLINE_KEY};
use crate::table::compression::Compression;
use crate::table::compression_dict::{self, DecompressionDictionary};
use crate::table::filter::{filter_hash, Filter};
use crate::table::format::{
    check_block, checked_block_len, read_block_with, BlockDecoding, BlockHandle, ChecksumType,
    Footer, BLOCK_TRAILER_LEN, FOOTER_LEN, TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT,
    TABLE_FORMAT_VERSION_PARTITIONED, TABLE_FORMAT_VERSION_USER_KEY_INDEX,
};
use crate::table::partitioned::{self, IndexIter, IndexSource};
use crate::table::properties::TableProperties;
use crate::table::{range_del, TableOptions};

mod mapped;
mod open;
mod readahead;
pub use readahead::ReadWindow;
mod verify;

/// What the block cache holds: one reference count each, so that a hit costs one atomic
/// increment on the block's own allocation.
#[derive(Clone)]
pub enum CachedBlock {
    /// A data or index block.
    Block(Arc<Block>),
    /// A filter block.
    Filter(Arc<Filter>),
    /// A value read from a blob file, keyed by (blob file number, record offset).
    Blob(Arc<[u8]>),
}

impl CacheValue for CachedBlock {
    /// A block's restart array, which a search of a data block reads first (an index block
    /// of many restart points is searched by its restart words instead).
    fn first_read(&self) -> Option<*const u8> {
        match self {
            CachedBlock::Block(b) => Some(b.restarts_address()),
            CachedBlock::Filter(_) | CachedBlock::Blob(_) => None,
        }
    }
}

/// The block cache: (table cache id, block offset) -> block, charged by block size and
/// [`BLOCK_ENTRY_BYTES`] (made by [`new_block_cache`]).
pub type BlockCache = ClockCache<(u64, u64), CachedBlock>;

/// A block cache of `capacity` bytes over up to `shards` shards, charging each entry what it
/// holds beyond its block's bytes.
pub fn new_block_cache(capacity: usize, shards: usize) -> BlockCache {
    BlockCache::new(capacity, shards).charging_entries(BLOCK_ENTRY_BYTES)
}

/// Bytes a block cache entry holds beyond its block's bytes, charged with it: the cache's
/// own slot and ring key, and a block's `Arc` (its counts and the `Block` struct) with the
/// allocator's header on each of the block's two allocations (the struct and its bytes).
/// Filters and blob values hold a little less; the estimate is a block's. 1 GiB of 4 KiB
/// blocks held about 80 MiB of these uncharged.
pub const BLOCK_ENTRY_BYTES: usize = BlockCache::entry_metadata_bytes()
    + 2 * std::mem::size_of::<usize>()
    + std::mem::size_of::<Block>()
    + 2 * MALLOC_HEADER_BYTES;

/// The bytes a general-purpose allocator keeps beside each allocation (glibc's chunk
/// header; jemalloc's size classes waste about as much on average).
const MALLOC_HEADER_BYTES: usize = 16;

/// The kinds of blocks read through the cache, for the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// Data blocks.
    Data = 0,
    /// Index blocks.
    Index = 1,
    /// Filter blocks.
    Filter = 2,
}

/// Counters of table reads, shared by all tables of a database.
#[derive(Debug, Default)]
pub struct TableReadStats {
    /// Lookups that consulted a bloom filter.
    pub bloom_checks: StripedCounter,
    /// Lookups the filter answered "not here" (a table read saved).
    pub bloom_negatives: StripedCounter,
    /// Prefix seeks that consulted a table's filter for the target's prefix.
    pub prefix_checks: StripedCounter,
    /// Prefix seeks the filter answered "no key with this prefix here" (the table skipped).
    pub prefix_negatives: StripedCounter,
    /// Block cache hits by block kind (data, index, filter).
    pub cache_hits: [StripedCounter; 3],
    /// Block cache misses (blocks read from files) by block kind (data, index, filter).
    pub cache_misses: [StripedCounter; 3],
    /// Bytes of blocks read from files after open (trailers included).
    pub bytes_read: StripedCounter,
}

impl TableReadStats {
    /// Sets every count back to zero.
    pub fn reset(&self) {
        let all = [
            &self.bloom_checks,
            &self.bloom_negatives,
            &self.prefix_checks,
            &self.prefix_negatives,
            &self.bytes_read,
        ];
        let kinds = self.cache_hits.iter().chain(&self.cache_misses);
        all.into_iter().chain(kinds).for_each(StripedCounter::reset);
    }
}

/// A block held with the open table, or only its handle when it lives in the block cache.
enum Part<T> {
    Pinned(Arc<T>),
    Cached(BlockHandle),
}

/// How a table is read: its key order and filter, the block cache it shares and where its
/// reads are counted.
#[derive(Clone)]
pub struct TableReadOptions {
    /// Key order, filter key and entry decoding.
    pub table: TableOptions,
    /// The block cache shared with other tables; `None` reads every block from the file.
    pub block_cache: Option<Arc<BlockCache>>,
    /// This table's id in the block cache (its file number): unique among the tables that
    /// share `block_cache`.
    pub cache_id: u64,
    /// With a block cache, keep the index and filter blocks in it (evictable) instead of
    /// pinned with the table (RocksDB's `cache_index_and_filter_blocks`).
    pub cache_index_and_filter: bool,
    /// With `cache_index_and_filter`, still pin the top-level index and top-level filter
    /// index of a partitioned table with it (RocksDB's `pin_top_level_index_and_filter`);
    /// their partitions stay in the cache.
    pub pin_top_level_index_and_filter: bool,
    /// Where reads, cache hits and filter checks are counted.
    pub stats: Arc<TableReadStats>,
}

impl TableReadOptions {
    /// Reads with no block cache, counted in a fresh [`TableReadStats`].
    pub fn uncached(table: TableOptions) -> TableReadOptions {
        TableReadOptions {
            table,
            block_cache: None,
            cache_id: 0,
            cache_index_and_filter: false,
            pin_top_level_index_and_filter: true,
            stats: Arc::new(TableReadStats::default()),
        }
    }
}

/// A table's filter: one block, or partitions under a top-level filter index.
enum TableFilter {
    Whole(Part<Filter>),
    /// The top-level filter index and its offset.
    Partitioned(Part<Block>, u64),
}

/// What [`Table::uncache`] did: data blocks it looked for in the block cache, and how many
/// of them it found there and erased.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Uncached {
    /// Data blocks looked for.
    pub tried: u64,
    /// Data blocks found cached, and erased.
    pub erased: u64,
}

/// How one read treats the data blocks it reads from table files (RocksDB's
/// `ReadOptions::fill_cache` and `verify_checksums`). Index and filter blocks are read as
/// always: cached, and checked when read from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockReads {
    /// A data block read from the file goes into the block cache. Off, it is used for this
    /// read and dropped; a block the cache already holds is still taken from it.
    pub fill_cache: bool,
    /// A data block read from the file has its checksum checked (a block read in place from
    /// a mapped table: the first time it is read). Off, it is not, and a block read that way
    /// is not remembered as checked; a block it puts in the cache is served from there
    /// unchecked to later reads, as in RocksDB.
    pub verify_checksums: bool,
}

impl BlockReads {
    /// Cache every block read, check every checksum: a read's defaults.
    pub const DEFAULT: BlockReads = BlockReads {
        fill_cache: true,
        verify_checksums: true,
    };
}

impl Default for BlockReads {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How a kind of block goes into the block cache and comes out of it: what
/// [`Table::cached_block`] does with the bytes it reads.
struct CacheCodec<T> {
    unwrap: fn(CachedBlock) -> Option<Arc<T>>,
    wrap: fn(Arc<T>) -> CachedBlock,
    decode: fn(Vec<u8>) -> std::result::Result<T, String>,
    size: fn(&T) -> usize,
}

/// Index, data and top-level blocks.
const BLOCK_CODEC: CacheCodec<Block> = CacheCodec {
    unwrap: unwrap_block,
    wrap: CachedBlock::Block,
    decode: Block::new,
    size: Block::size,
};

/// Filter blocks and partitions.
const FILTER_CODEC: CacheCodec<Filter> = CacheCodec {
    unwrap: |c| match c {
        CachedBlock::Filter(f) => Some(f),
        CachedBlock::Block(_) | CachedBlock::Blob(_) => None,
    },
    wrap: CachedBlock::Filter,
    decode: Filter::new,
    size: Filter::size,
};

/// An open table.
pub struct Table {
    file: Box<dyn RandomAccessFile>,
    pub(super) path: PathBuf,
    cache_id: u64,
    pub(super) options: TableOptions,
    /// The index block, or the top-level index of a partitioned index.
    index: Part<Block>,
    /// Where `index` is in the file, for errors.
    index_at: u64,
    /// The index is a top-level index over index partitions.
    pub(super) partitioned_index: bool,
    /// How the index's keys order: the table's comparator, or its user key order when the
    /// index holds user keys (`strata.index-key-is-user-key`, see `builder.rs`).
    index_comparator: BlockOrder,
    filter: Option<TableFilter>,
    properties: TableProperties,
    range_tombstones: Arc<FragmentedList>,
    cache: Option<Arc<BlockCache>>,
    stats: Arc<TableReadStats>,
    /// How every block is checksummed (from the footer).
    checksum: ChecksumType,
    /// The dictionary the data blocks are compressed with, prepared once at open.
    dictionary: Option<Arc<DecompressionDictionary>>,
    /// The table's memory mapping, when its file is one: uncompressed data blocks are read
    /// from it in place (`mapped.rs`).
    mapped: Option<mapped::MappedTable>,
}

impl Table {
    /// How the table's blocks are checksummed.
    pub fn checksum_type(&self) -> ChecksumType {
        self.checksum
    }

    /// Bytes of the dictionary the table's data blocks are compressed with; 0 without one.
    pub fn compression_dictionary_bytes(&self) -> usize {
        self.dictionary.as_ref().map_or(0, |d| d.size())
    }

    /// How to check and decompress a block of `kind`: only data blocks take the dictionary.
    fn decoding(&self, kind: BlockKind) -> BlockDecoding<'_> {
        BlockDecoding {
            checksum: self.checksum,
            dictionary: match kind {
                BlockKind::Data => self.dictionary.as_deref(),
                BlockKind::Index | BlockKind::Filter => None,
            },
            skip_checksum: false,
        }
    }

    /// How to check and decompress a data block read as `reads` says.
    fn data_decoding(&self, reads: BlockReads) -> BlockDecoding<'_> {
        BlockDecoding {
            skip_checksum: !reads.verify_checksums,
            ..self.decoding(BlockKind::Data)
        }
    }

    /// The table's range deletions, fragmented (empty for a table without any, and for every
    /// table written before range deletions existed).
    pub fn range_tombstones(&self) -> Arc<FragmentedList> {
        self.range_tombstones.clone()
    }

    /// [`Table::range_tombstones`] borrowed: point lookups check it on every table they
    /// visit, and a shared reference count touched by every reader would cost them.
    pub fn range_tombstones_ref(&self) -> &FragmentedList {
        &self.range_tombstones
    }

    /// What the table holds.
    pub fn properties(&self) -> &TableProperties {
        &self.properties
    }

    /// Where the table's reads are counted.
    pub fn read_stats(&self) -> &TableReadStats {
        &self.stats
    }

    /// The table's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of memory pinned by the open table (index and filter, or the top-level blocks
    /// of a partitioned table, unless they are cached, the range deletions, and the bitmap
    /// of checked blocks of a mapped table).
    pub fn pinned_bytes(&self) -> usize {
        let range_dels = match self.range_tombstones.is_empty() {
            true => 0,
            false => self.range_tombstones.memory_size(),
        };
        let index = match &self.index {
            Part::Pinned(b) => b.size(),
            Part::Cached(_) => 0,
        };
        let filter = match &self.filter {
            Some(TableFilter::Whole(Part::Pinned(f))) => f.size(),
            Some(TableFilter::Partitioned(Part::Pinned(b), _)) => b.size(),
            _ => 0,
        };
        let bitmap = self.mapped.as_ref().map_or(0, |m| m.bitmap_bytes());
        index + filter + range_dels + bitmap
    }

    /// The block at `handle` of `kind`, from the cache or the file (then cached unless
    /// `reads` says not to, checked unless it says not to: data blocks only), and whether the
    /// file was read.
    fn cached_block<T>(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        reads: BlockReads,
        codec: &CacheCodec<T>,
    ) -> Result<(Arc<T>, bool)> {
        let key = (self.cache_id, handle.offset);
        if let Some(hit) = self.cache.as_ref().and_then(|c| c.get(&key)) {
            if let Some(v) = (codec.unwrap)(hit) {
                self.count_cache_hit(kind);
                return Ok((v, false));
            }
        }
        self.count_file_read(kind, handle.size + BLOCK_TRAILER_LEN as u64);
        let timer = PerfTimer::start();
        let (decoding, reads) = match kind {
            BlockKind::Data => (self.data_decoding(reads), reads),
            BlockKind::Index | BlockKind::Filter => (self.decoding(kind), BlockReads::DEFAULT),
        };
        let data = read_block_with(self.file.as_ref(), &self.path, handle, decoding)?;
        let value = Arc::new(
            (codec.decode)(data)
                .map_err(|why| Error::corruption(&self.path, handle.offset, why))?,
        );
        timer.stop(|c| &c.block_read_time);
        if let Some(cache) = self.cache.as_ref().filter(|_| reads.fill_cache) {
            cache.insert(key, (codec.wrap)(value.clone()), (codec.size)(&value));
        }
        Ok((value, true))
    }

    /// A block in the index block format held as `part` (an index block, a top-level index,
    /// or a top-level filter index), counted in the stats as a block of `kind`.
    fn index_kind_block(&self, part: &Part<Block>, kind: BlockKind) -> Result<Arc<Block>> {
        match part {
            Part::Pinned(b) => Ok(b.clone()),
            Part::Cached(h) => self.block_of_kind(*h, kind),
        }
    }

    /// The index block, or the top-level index of a partitioned index.
    pub(super) fn index_block(&self) -> Result<Arc<Block>> {
        self.index_kind_block(&self.index, BlockKind::Index)
    }

    /// The top-level filter index held as `part`.
    fn filter_top_level(&self, part: &Part<Block>) -> Result<Arc<Block>> {
        self.index_kind_block(part, BlockKind::Filter)
    }

    /// The block at `handle`, from the cache or the file, counted as a block of `kind`.
    fn block_of_kind(&self, handle: BlockHandle, kind: BlockKind) -> Result<Arc<Block>> {
        self.cached_block(handle, kind, BlockReads::DEFAULT, &BLOCK_CODEC)
            .map(|(b, _)| b)
    }

    /// The filter block (or filter partition) at `handle`, from the cache or the file.
    fn filter_at(&self, handle: BlockHandle) -> Result<Arc<Filter>> {
        self.cached_block(
            handle,
            BlockKind::Filter,
            BlockReads::DEFAULT,
            &FILTER_CODEC,
        )
        .map(|(f, _)| f)
    }

    /// The whole-table filter; `None` for a table without one or with a partitioned one.
    fn filter_block(&self) -> Result<Option<Arc<Filter>>> {
        match &self.filter {
            None | Some(TableFilter::Partitioned(..)) => Ok(None),
            Some(TableFilter::Whole(Part::Pinned(f))) => Ok(Some(f.clone())),
            Some(TableFilter::Whole(Part::Cached(h))) => self.filter_at(*h).map(Some),
        }
    }

    /// The filter partition covering `target` (the one whose keys the index partition that
    /// `target` seeks to holds), and where it is; `None` when `target` is past the table's
    /// last key, or the filter is not partitioned.
    fn filter_partition_for(&self, target: &[u8], backward: bool) -> Result<Option<Arc<Filter>>> {
        let Some(TableFilter::Partitioned(top, at)) = &self.filter else {
            return Ok(None);
        };
        let top = self.filter_top_level(top)?;
        let cmp = &self.options.comparator;
        let whose = (self.path.as_path(), *at, "top-level filter index");
        match partitioned::search(top, cmp, target, backward, whose)? {
            Some(h) => self.filter_at(h).map(Some),
            None => Ok(None),
        }
    }

    /// The table has a partitioned filter.
    pub fn has_partitioned_filter(&self) -> bool {
        matches!(self.filter, Some(TableFilter::Partitioned(..)))
    }

    /// False only if no key with this filter key is in the table (counted in the stats).
    /// A partitioned filter cannot be asked without the whole key (see
    /// [`Table::key_may_match`]) and says true.
    pub fn may_contain(&self, filter_key: &[u8]) -> Result<bool> {
        self.may_contain_hash(filter_hash(filter_key))
    }

    /// False only if no entry at or after `target` in this table has `target`'s filter key,
    /// whose [`filter_hash`] is `hash`, among the entries a point lookup of `target` can
    /// reach: the whole-table filter, or the filter partition of the index partition
    /// `target` falls in (counted in the stats).
    pub fn key_may_match(&self, target: &[u8], hash: u64) -> Result<bool> {
        if !self.has_partitioned_filter() {
            return self.may_contain_hash(hash);
        }
        let Some(f) = self.filter_partition_for(target, false)? else {
            // Past the last key: no entry to find, as the top-level filter index says.
            self.stats.bloom_checks.add(1);
            self.stats.bloom_negatives.add(1);
            perf_count!(bloom_sst_miss_count, 1);
            return Ok(false);
        };
        Ok(self.counted_filter_check(&f, hash))
    }

    fn counted_filter_check(&self, f: &Filter, hash: u64) -> bool {
        self.stats.bloom_checks.add(1);
        let timer = PerfTimer::start();
        let maybe = f.may_contain_hash(hash);
        timer.stop(|c| &c.filter_check_time);
        if maybe {
            perf_count!(bloom_sst_hit_count, 1);
        } else {
            self.stats.bloom_negatives.add(1);
            perf_count!(bloom_sst_miss_count, 1);
        }
        maybe
    }

    /// [`Table::may_contain`] for a key's precomputed [`filter_hash`], so that a read
    /// probing many tables hashes its key once.
    pub fn may_contain_hash(&self, hash: u64) -> Result<bool> {
        // A pinned filter is read in place: no reference count for every thread to bump.
        if let Some(TableFilter::Whole(Part::Pinned(f))) = &self.filter {
            return Ok(self.counted_filter_check(f, hash));
        }
        let Some(f) = self.filter_block()? else {
            return Ok(true);
        };
        Ok(self.counted_filter_check(&f, hash))
    }

    /// Starts loading the line of a pinned whole filter that [`Table::may_contain_hash`]
    /// will read for `hash` (nothing for other filters, which a lookup must find first).
    #[inline]
    pub fn prefetch_filter(&self, hash: u64) {
        if let Some(TableFilter::Whole(Part::Pinned(f))) = &self.filter {
            f.prefetch(hash);
        }
    }

    /// False only if no key with the prefix whose [`filter_hash`] is `prefix_hash` is in the
    /// table, by its filter's prefix entries. Only a table whose filter holds the prefixes of
    /// `extractor` (its properties name it) can answer; any other (another extractor, none,
    /// or no filter) says true, and is read. So does a partitioned filter, which needs the
    /// seek's target to find its partition ([`Table::prefix_may_match`]). Counted in the
    /// stats when the filter is asked.
    pub fn may_contain_prefix(&self, extractor: &str, prefix_hash: u64) -> Result<bool> {
        if extractor.is_empty() || self.properties.prefix_extractor != extractor {
            return Ok(true);
        }
        let Some(f) = self.filter_block()? else {
            return Ok(true);
        };
        self.stats.prefix_checks.add(1);
        let maybe = f.may_contain_hash(prefix_hash);
        if !maybe {
            self.stats.prefix_negatives.add(1);
        }
        Ok(maybe)
    }

    /// False only if a seek to `target` (`seek_for_prev` when `backward`), whose prefix has
    /// the [`filter_hash`] `prefix_hash`, finds no key of that prefix in this table: the
    /// whole-table filter ([`Table::may_contain_prefix`]), or the filter partition where
    /// `target` falls, which also holds the prefixes of the keys on either side of it (see
    /// `partitioned.rs`). Counted in the stats when a filter is asked.
    pub fn prefix_may_match(
        &self,
        extractor: &str,
        target: &[u8],
        prefix_hash: u64,
        backward: bool,
    ) -> Result<bool> {
        if !self.has_partitioned_filter() {
            return self.may_contain_prefix(extractor, prefix_hash);
        }
        if extractor.is_empty() || self.properties.prefix_extractor != extractor {
            return Ok(true);
        }
        // Past the last key, a backward seek's keys are in the last partition; a forward
        // seek has none to find, as the top-level filter index answers for the filter.
        let partition = self.filter_partition_for(target, backward)?;
        self.stats.prefix_checks.add(1);
        let maybe = partition.is_some_and(|f| f.may_contain_hash(prefix_hash));
        if !maybe {
            self.stats.prefix_negatives.add(1);
        }
        Ok(maybe)
    }

    /// The handle of the data block where the first entry at or after `target` is, if any:
    /// a search of the index block, or of the top-level index and then one index partition.
    fn seek_data_block(&self, target: &[u8]) -> Result<Option<BlockHandle>> {
        let cmp = &self.index_comparator;
        let target = self.index_target(target);
        let path = self.path.as_path();
        if !self.partitioned_index {
            let whose = (path, self.index_at, "index block");
            return partitioned::search(self.index_block()?, cmp, target, false, whose);
        }
        let whose = (path, self.index_at, "top-level index");
        let Some(h) = partitioned::search(self.index_block()?, cmp, target, false, whose)? else {
            return Ok(None);
        };
        let whose = (path, h.offset, "index partition");
        partitioned::search(self.index_partition(h)?, cmp, target, false, whose)
    }

    /// The data block at `handle`, from the cache or the file, read as `reads` says.
    pub(super) fn data_block(&self, handle: BlockHandle, reads: BlockReads) -> Result<Arc<Block>> {
        self.data_block_read(handle, reads).map(|(b, _)| b)
    }

    /// The data block at `handle`, from the cache or the file, read as `reads` says, and
    /// whether the file was read.
    fn data_block_read(
        &self,
        handle: BlockHandle,
        reads: BlockReads,
    ) -> Result<(Arc<Block>, bool)> {
        if let Some(block) = self.mapped_data_block(handle, reads)? {
            return Ok((block, false));
        }
        self.cached_block(handle, BlockKind::Data, reads, &BLOCK_CODEC)
    }

    /// Calls `f` with the first entry at or after `target`, if the filter and index allow
    /// one in this table. The caller checks that the entry is the key it wants.
    pub fn get<R>(&self, target: &[u8], f: impl FnOnce(&[u8], &[u8]) -> R) -> Result<Option<R>> {
        let hash = filter_hash((self.options.filter_key)(target));
        self.get_hashed(target, hash, f)
    }

    /// [`Table::get`] with the [`filter_hash`] of the target's filter key precomputed.
    pub fn get_hashed<R>(
        &self,
        target: &[u8],
        hash: u64,
        f: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        self.get_hashed_entry(target, hash, BlockReads::DEFAULT, |entry| {
            f(entry.key(), entry.value())
        })
    }

    /// [`Table::get_hashed`] handing `f` the data block's cursor at the entry, for a caller
    /// that keeps the block (a pinned value), its data block read as `reads` says.
    pub fn get_hashed_entry<R>(
        &self,
        target: &[u8],
        hash: u64,
        reads: BlockReads,
        f: impl FnOnce(&BlockIter) -> R,
    ) -> Result<Option<R>> {
        if !self.key_may_match(target, hash)? {
            return Ok(None);
        }
        let timer = PerfTimer::start();
        let handle = self.seek_data_block(target)?;
        timer.stop(|c| &c.index_seek_time);
        let Some(handle) = handle else {
            return Ok(None);
        };
        // The index cursor reads keys where the block stores them whole (every index entry
        // is), and the data cursor builds keys of up to `INLINE_KEY` bytes in itself: only
        // a longer target takes this thread's key buffer, out and back, so that a
        // reentrant call (from `f`) allocates instead of failing.
        let long = target.len() > INLINE_KEY;
        let data_buf = match long {
            true => GET_BUFFER.with(|b| b.take()),
            false => Vec::new(),
        };
        let (found, data_buf) = self.get_in_block(handle, target, hash, reads, data_buf, f)?;
        if long {
            GET_BUFFER.with(|b| *b.borrow_mut() = data_buf);
        }
        Ok(found)
    }

    /// The data-block half of [`Table::get_hashed_entry`]; returns the data key buffer for reuse.
    fn get_in_block<R>(
        &self,
        handle: BlockHandle,
        target: &[u8],
        filter_hash: u64,
        reads: BlockReads,
        data_buf: Vec<u8>,
        f: impl FnOnce(&BlockIter) -> R,
    ) -> Result<(Option<R>, Vec<u8>)> {
        let mut data = BlockIter::with_buffer(
            self.data_block(handle, reads)?,
            self.options.comparator.clone(),
            data_buf,
        );
        // When the filter key is the target's user key (a table of internal keys), its hash
        // is the one a data block's hash index takes.
        let filter_key = (self.options.filter_key)(target);
        let user_key = crate::key::user_key(target);
        let same = std::ptr::eq(filter_key, user_key);
        let user_key_hash = same.then_some(filter_hash);
        let timer = PerfTimer::start();
        data.seek_for_get_hashed(target, user_key_hash);
        timer.stop(|c| &c.block_seek_nanos);
        if let Some(why) = data.corrupt() {
            return Err(Error::corruption(&self.path, handle.offset, why));
        }
        let found = data.valid().then(|| f(&data));
        Ok((found, data.into_buffer()))
    }
}

impl Table {
    /// Counts a block of `kind` found without reading the file (in the block cache, or a
    /// mapped block checked before), in the table's stats and the thread's
    /// [`PerfContext`](crate::PerfContext).
    #[inline]
    fn count_cache_hit(&self, kind: BlockKind) {
        self.stats.cache_hits[kind as usize].add(1);
        perf_count!(block_cache_hit_count, 1);
    }

    /// Counts a block of `kind` and `bytes` (trailer included) read from the file, in the
    /// table's stats and the thread's [`PerfContext`](crate::PerfContext).
    #[inline]
    fn count_file_read(&self, kind: BlockKind, bytes: u64) {
        self.stats.cache_misses[kind as usize].add(1);
        self.stats.bytes_read.add(bytes);
        perf_count!(block_read_count, 1);
        perf_count!(block_read_byte, bytes);
        match kind {
            BlockKind::Index => perf_count!(index_block_read_count, 1),
            BlockKind::Filter => perf_count!(filter_block_read_count, 1),
            BlockKind::Data => {}
        }
    }

    /// The data block at `handle` if the block cache holds it, counted as a hit.
    fn data_block_from_cache(&self, handle: BlockHandle) -> Option<Arc<Block>> {
        let hit = self.cache.as_ref()?.get(&(self.cache_id, handle.offset))?;
        let block = unwrap_block(hit)?;
        self.count_cache_hit(BlockKind::Data);
        Some(block)
    }
}

thread_local! {
    /// The data block key buffer of point lookups of long keys, reused by each thread.
    static GET_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The two-level index cursor reads index partitions through the table's block cache.
impl IndexSource for Table {
    fn index_context(&self) -> (&Path, &BlockOrder, u64) {
        (&self.path, &self.index_comparator, self.index_at)
    }

    fn index_partition(&self, handle: BlockHandle) -> Result<Arc<Block>> {
        self.block_of_kind(handle, BlockKind::Index)
    }

    fn index_target<'a>(&self, target: &'a [u8]) -> &'a [u8] {
        match self.properties.index_key_is_user_key {
            0 => target,
            _ => crate::key::user_key(target),
        }
    }
}

impl Table {
    /// The data block at `handle` if the cache holds it.
    #[cfg(test)]
    pub(super) fn cached_data_block(&self, handle: BlockHandle) -> Option<Arc<Block>> {
        let cache = self.cache.as_ref()?;
        cache
            .get(&(self.cache_id, handle.offset))
            .and_then(unwrap_block)
    }
}

fn unwrap_block(c: CachedBlock) -> Option<Arc<Block>> {
    match c {
        CachedBlock::Block(b) => Some(b),
        CachedBlock::Filter(_) | CachedBlock::Blob(_) => None,
    }
}
