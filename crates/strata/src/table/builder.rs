//! Writes a table: entries in key order in, a checksummed file out (layout in [`super`]).
//!
//! Output is gathered in a 1 MiB buffer and appended in large writes (flushes and
//! compactions are sequential IO); `finish` syncs the file. A flush's table is also synced
//! in the background every few MiB while it is built, where the file system can sync from
//! another thread (`incremental_sync.rs`), so that the final sync has little to write.
//!
//! With a prefix extractor (and a filter), the prefix of each key in the extractor's domain
//! is added to the filter beside the key, and the properties name the extractor.
//!
//! With [`IndexType::TwoLevelIndexSearch`] the index entries go into index partitions, and
//! with `partition_filters` the filter keys into filter partitions cut at the same data
//! blocks; both are held in memory and written at `finish` after the data blocks, then their
//! top-level blocks (layout in `partitioned.rs`).
//!
//! With [`DataBlockIndexType::BinaryAndHash`], in a table of internal keys in a built-in
//! order, each data block of at most 253 restart points carries a hash index of its user
//! keys (`data_block_hash.rs`); the properties count them, and the table gets format version
//! 4 (even if no block ended up with one), so that a build that cannot read them refuses it.
//!
//! In a table of internal keys with one index block, the index keys are user keys (RocksDB's
//! `index_key_is_user_key`) when no user key's versions span two data blocks: each entry's key
//! `u` is then a user key with `user_key(last key of its block) <= u < user_key(first key of
//! the next)`, so a seek for `(k, seq)` finds the first block whose key is at or after `k`,
//! and every version of `k` is in that block. The 8-byte trailer of each entry is saved.
//! Both forms are built as blocks are cut; a boundary inside one user key drops the user-key
//! form, and `finish` writes the one that holds. The properties record
//! `strata.index-key-is-user-key` and the table gets format version 5.
//!
//! Range tombstones arrive in any order ([`TableBuilder::add_range_tombstone`]), are held in
//! memory and written at `finish` as the range-deletion block (`range_del.rs`). The table's
//! key range must cover them: [`TableBuilder::range_tombstone_bounds`] gives the internal
//! keys the caller merges into the bounds it records for the file.

use std::sync::Arc;

use crate::comparator::KeyOrder;
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::key::{SequenceNumber, MAX_SEQUENCE};
use crate::prefix::PrefixExtractor;
use crate::range_del::{FragmentedList, Tombstone};
use crate::table::block::{self, Block, BlockBuilder, BlockIter, BlockOrder};
use crate::table::collector::Collectors;
use crate::table::compression::Compression;
use crate::table::compression_dict::{self, BlockCompressor, CompressionDictionary};
use crate::table::filter::FilterBuilder;
use crate::table::format::{
    block_trailer_with, BlockHandle, ChecksumType, Footer, BLOCK_TRAILER_LEN, TABLE_FORMAT_VERSION,
    TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT, TABLE_FORMAT_VERSION_DATA_BLOCK_HASH,
    TABLE_FORMAT_VERSION_PARTITIONED, TABLE_FORMAT_VERSION_RANGE_DEL,
    TABLE_FORMAT_VERSION_USER_KEY_INDEX,
};
use crate::table::incremental_sync::IncrementalSync;
use crate::table::partitioned::{self, PartitionBuilder};
use crate::table::properties::TableProperties;
use crate::table::{range_del, DataBlockIndexType, IndexType, TableOptions};

const WRITE_BUFFER: usize = 1 << 20;

/// Builds one table file.
pub struct TableBuilder {
    file: Box<dyn WritableFile>,
    options: TableOptions,
    out: Vec<u8>,
    offset: u64,
    data_block: BlockBuilder,
    /// Data blocks carry hash indexes (the options ask for them and the keys suit).
    hashed: bool,
    index_block: BlockBuilder,
    /// The index block with user keys, while every data block boundary falls between two
    /// user keys (see the module notes); `None` once one does not, and for tables with a
    /// partitioned index or of whole keys.
    user_key_index: Option<BlockBuilder>,
    /// With a two-level index: the index (and filter) partitions, in place of `index_block`.
    partitions: Option<PartitionBuilder>,
    /// The filter partitions are cut with the index partitions (`filter` holds only the
    /// keys since the last cut).
    partition_filters: bool,
    filter: Option<FilterBuilder>,
    props: TableProperties,
    compressed: Vec<u8>,
    handle_buf: Vec<u8>,
    range_tombstones: Vec<Tombstone>,
    /// Bytes of the range tombstones' keys, for [`TableBuilder::file_size`].
    range_tombstone_bytes: u64,
    /// The extractor whose prefixes go into the filter (only with a filter).
    prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
    /// The last key and handle of the data block written last, whose index entry waits for
    /// the next block's first key: the entry's key is then shortened to a separator between
    /// the two (RocksDB's `FindShortestSeparator`), which keeps the index small.
    pending_index: Option<(Vec<u8>, BlockHandle)>,
    /// Told of each data block as it is written (see [`TableBuilder::set_data_block_sink`]).
    data_block_sink: Option<DataBlockSink>,
    /// The user's property collectors (`collector.rs`); `None` without any.
    collectors: Option<Collectors>,
    /// Compresses the blocks (one zstd context per table; the dictionary once made).
    compressor: BlockCompressor,
    /// The data blocks held until the dictionary is made (`compression_dict.rs`); `None`
    /// once it is, and for tables without one.
    held: Option<HeldBlocks>,
    /// Syncs what was appended in the background; `None` unless asked for
    /// ([`TableBuilder::sync_in_background`]) and where the file cannot.
    background_sync: Option<IncrementalSync>,
}

/// Data blocks held in memory, uncompressed, until they are enough samples to make the
/// table's dictionary from.
#[derive(Default)]
struct HeldBlocks {
    /// Each block's contents and last key, in order.
    blocks: Vec<(Vec<u8>, Vec<u8>)>,
    /// Bytes of their contents.
    bytes: usize,
}

/// Takes each data block a builder writes: its offset in the file and its contents,
/// uncompressed, as a reader would cache them.
pub type DataBlockSink = Box<dyn FnMut(u64, Vec<u8>) + Send>;

impl TableBuilder {
    /// A builder writing to `file` (empty, freshly created).
    pub fn new(file: Box<dyn WritableFile>, options: TableOptions) -> TableBuilder {
        let prefix_extractor = options
            .prefix_extractor
            .clone()
            .filter(|_| options.bloom_bits_per_key > 0);
        let two_level = options.index_type == IndexType::TwoLevelIndexSearch;
        // A hash index finds a user key by its bytes: only orders where equal keys are equal
        // bytes (the built-in ones), and only internal keys, whose user key it strips.
        let hashed = options.data_block_index_type == DataBlockIndexType::BinaryAndHash
            && matches!(
                options.comparator,
                BlockOrder::Internal(KeyOrder::Bytewise | KeyOrder::Reverse)
            );
        let collectors = Collectors::new(
            &options.properties_collectors,
            options.column_family.as_ref(),
            matches!(options.comparator, BlockOrder::Internal(_)),
        );
        let (options_compression, options_compression_opts) =
            (options.compression, options.compression_opts);
        TableBuilder {
            file,
            background_sync: None,
            data_block: match hashed {
                true => BlockBuilder::with_hash_index(
                    options.restart_interval,
                    options.data_block_hash_table_util_ratio,
                ),
                false => BlockBuilder::new(options.restart_interval),
            },
            hashed,
            index_block: BlockBuilder::new(1),
            user_key_index: (!two_level && matches!(options.comparator, BlockOrder::Internal(_)))
                .then(|| BlockBuilder::new(1)),
            partitions: two_level.then(|| {
                PartitionBuilder::new(options.metadata_block_size, options.bloom_bits_per_key)
            }),
            partition_filters: two_level
                && options.partition_filters
                && options.bloom_bits_per_key > 0,
            filter: (options.bloom_bits_per_key > 0)
                .then(|| FilterBuilder::new(options.bloom_bits_per_key)),
            props: TableProperties {
                smallest_seq: u64::MAX,
                compression: options.compression.name().to_string(),
                prefix_extractor: crate::prefix::name_of(&prefix_extractor).to_string(),
                comparator: options.comparator.order().name().to_string(),
                column_family: options.column_family.clone(),
                log_number: options.log_number,
                ..TableProperties::default()
            },
            options,
            out: Vec::with_capacity(WRITE_BUFFER),
            offset: 0,
            compressed: Vec::new(),
            handle_buf: Vec::new(),
            range_tombstones: Vec::new(),
            range_tombstone_bytes: 0,
            prefix_extractor,
            pending_index: None,
            data_block_sink: None,
            collectors,
            compressor: BlockCompressor::new(options_compression, options_compression_opts),
            held: options_compression_opts
                .uses_dictionary(options_compression)
                .then(HeldBlocks::default),
        }
    }

    /// Syncs what is appended in the background as the table grows, where the file system
    /// can (`incremental_sync.rs`): for a flush, whose end writers may be waiting for.
    pub fn sync_in_background(&mut self) {
        self.background_sync = IncrementalSync::new(self.file.background_sync());
    }

    /// Hands each data block written from now on to `sink` (a flush warming the block
    /// cache with the table it writes: `prepopulate_block_cache`).
    pub fn set_data_block_sink(&mut self, sink: DataBlockSink) {
        self.data_block_sink = Some(sink);
    }

    /// Adds an entry; keys must be added in increasing order.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        debug_assert!(
            self.props.entries == 0
                || self
                    .options
                    .comparator
                    .compare(self.data_block.last_key(), key)
                    .is_lt()
                || self.data_block.is_empty(),
            "keys out of order"
        );
        if self.block_almost_full(key.len(), value.len()) {
            self.flush_data_block()?;
        }
        // While data blocks are held for the dictionary, their entries are noted when the
        // blocks are written (`write_held_blocks`), where the index entries can be made.
        if self.held.is_none() {
            self.note_entry(key, value);
        }
        self.data_block.add(key, value);
        if self.data_block.estimated_size() + BLOCK_TRAILER_LEN >= self.options.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Notes an entry of the data block being built, in key order: the index entry of the
    /// block before it if it is the block's first, the filter, the properties and the
    /// collectors.
    fn note_entry(&mut self, key: &[u8], value: &[u8]) {
        if let Some((mut separator, handle)) = self.pending_index.take() {
            let order = self.options.comparator.order();
            if self.user_key_index.is_some()
                && order
                    .compare(crate::key::user_key(&separator), crate::key::user_key(key))
                    .is_eq()
            {
                self.user_key_index = None; // this key's versions span the boundary
            }
            self.options
                .comparator
                .shorten_separator(&mut separator, key);
            let next_prefix = self.prefix_extractor.as_ref().and_then(|e| {
                let filter_key = (self.options.filter_key)(key);
                e.in_domain(filter_key)
                    .then(|| crate::table::filter::filter_hash(e.transform(filter_key)))
            });
            self.add_index_entry(&separator, handle, next_prefix);
        }
        if let Some(f) = &mut self.filter {
            let filter_key = (self.options.filter_key)(key);
            f.add(filter_key);
            if let Some(e) = &self.prefix_extractor {
                if e.in_domain(filter_key) {
                    f.add_prefix(e.transform(filter_key));
                }
            }
        }
        let (seq, deletion) = (self.options.key_info)(key);
        let p = &mut self.props;
        p.entries += 1;
        p.deletions += u64::from(deletion);
        p.raw_key_bytes += key.len() as u64;
        p.raw_value_bytes += value.len() as u64;
        p.smallest_seq = p.smallest_seq.min(seq);
        p.largest_seq = p.largest_seq.max(seq);
        if let Some(c) = &mut self.collectors {
            c.add(key, value, self.offset + self.out.len() as u64);
        }
    }

    /// Whether the data block should be cut before an entry of `key_len` and `value_len`
    /// bytes: it would take the block (with its trailer) past `block_size`, and the block is
    /// already within `block_size_deviation` percent of that size. Cut there, blocks stay
    /// within `block_size` instead of ending up to an entry beyond it, so that a block read
    /// into memory takes an allocation of `block_size` bytes, not the next size class up
    /// (4,101 bytes take 5,120 from jemalloc: a quarter of the block cache wasted).
    fn block_almost_full(&self, key_len: usize, value_len: usize) -> bool {
        if self.data_block.is_empty() || self.options.block_size_deviation == 0 {
            return false;
        }
        let block_size = self.options.block_size;
        let now = self.data_block.estimated_size() + BLOCK_TRAILER_LEN;
        let deviation = self.options.block_size_deviation.min(100) as usize;
        let limit = (block_size * (100 - deviation)).div_ceil(100);
        now >= limit && now + self.data_block.entry_growth_bound(key_len, value_len) > block_size
    }

    /// Adds the deletion of the user keys `[begin, end)` at `seq`, in any order relative to
    /// other tombstones and to entries. An empty range (`begin >= end`) deletes nothing and is
    /// not stored; a repeat of a tombstone is stored once. Only tables of internal keys hold
    /// range deletions: the block stores internal keys whatever the table's comparator.
    pub fn add_range_tombstone(
        &mut self,
        begin: &[u8],
        end: &[u8],
        seq: SequenceNumber,
    ) -> Result<()> {
        if seq > MAX_SEQUENCE {
            return Err(Error::InvalidArgument(format!(
                "range deletion sequence number {seq} is above {MAX_SEQUENCE}"
            )));
        }
        if self.options.comparator.order().le(end, begin) {
            return Ok(());
        }
        let p = &mut self.props;
        p.smallest_seq = p.smallest_seq.min(seq);
        p.largest_seq = p.largest_seq.max(seq);
        self.range_tombstone_bytes += (begin.len() + end.len() + 12) as u64;
        self.range_tombstones.push(Tombstone::new(begin, end, seq));
        Ok(())
    }

    /// Adds every tombstone of `list` (as [`FragmentedList::tombstones`] gives them): what a
    /// flush or compaction writes after reducing its tombstones for the live snapshots.
    pub fn add_range_tombstones(&mut self, list: &FragmentedList) -> Result<()> {
        for t in list.tombstones() {
            self.add_range_tombstone(&t.begin, &t.end, t.seq)?;
        }
        Ok(())
    }

    /// The internal keys bounding the range tombstones added so far, `None` without any:
    /// the smallest begin key at the newest sequence number starting there
    /// (`begin#seq,RANGEDEL`), and the largest end key as the sentinel
    /// `end#MAX_SEQUENCE,RANGEDEL` (see [`Tombstone::largest_key`]). The file's recorded key
    /// range is the union of these and its point entries' first and last keys
    /// (`range_del::widen_bounds`), so that a read or compaction of any key a tombstone
    /// covers finds the file.
    pub fn range_tombstone_bounds(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        crate::range_del::tombstone_bounds(
            self.options.comparator.order(),
            self.range_tombstones.iter(),
        )
    }

    /// The order of the table's user keys.
    pub fn order(&self) -> &crate::comparator::KeyOrder {
        self.options.comparator.order()
    }

    /// Bytes the file will have if finished now (roughly).
    pub fn file_size(&self) -> u64 {
        self.offset
            + self.out.len() as u64
            + self.data_block.estimated_size() as u64
            + self.held.as_ref().map_or(0, |h| h.bytes as u64)
            + self.range_tombstone_bytes
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let last_key = self.data_block.last_key().to_vec();
        let contents = self.data_block.finish().to_vec();
        self.data_block.reset();
        match &mut self.held {
            Some(held) => {
                held.bytes += contents.len();
                held.blocks.push((contents, last_key));
                if held.bytes >= self.options.compression_opts.dictionary_sample_bytes() {
                    self.write_held_blocks()?;
                }
                Ok(())
            }
            None => self.write_data_block(contents, last_key),
        }
    }

    /// Makes the dictionary from the held data blocks, then notes their entries and writes
    /// them, compressed with it (without one if none could be made), in order: from here on
    /// the table is written as one without holding would be.
    fn write_held_blocks(&mut self) -> Result<()> {
        let Some(held) = self.held.take() else {
            return Ok(());
        };
        let samples: Vec<Vec<u8>> = held.blocks.iter().map(|(b, _)| b.clone()).collect();
        let opts = &self.options.compression_opts;
        let dictionary = compression_dict::make_dictionary(&samples, opts)
            .and_then(|bytes| CompressionDictionary::new(bytes, opts.zstd_level()));
        if let Some(d) = dictionary {
            self.compressor.set_dictionary(d);
        }
        for (contents, last_key) in held.blocks {
            let block = Arc::new(Block::new(contents.clone()).map_err(Error::InvalidArgument)?);
            let mut it = BlockIter::new(block, self.options.comparator.clone());
            it.seek_to_first();
            while it.valid() {
                self.note_entry(it.key(), it.value());
                it.next();
            }
            if let Some(why) = it.corrupt() {
                return Err(Error::InvalidArgument(format!("held data block: {why}")));
            }
            self.write_data_block(contents, last_key)?;
        }
        Ok(())
    }

    /// Writes a data block whose last key is `last_key`; its index entry waits for the next
    /// block's first key.
    fn write_data_block(&mut self, contents: Vec<u8>, last_key: Vec<u8>) -> Result<()> {
        let handle = self.write_block_of(&contents, self.options.compression, true)?;
        self.props.data_blocks += 1;
        self.props.data_block_hash_indexes += u64::from(block::has_hash_index(&contents));
        self.props.data_bytes += handle.size;
        self.pending_index = Some((last_key, handle));
        if let Some(sink) = &mut self.data_block_sink {
            sink(handle.offset, contents);
        }
        Ok(())
    }

    /// Adds a data block's index entry; `next_prefix` is the hash of the prefix of the next
    /// block's first key, for a filter partition cut after this block.
    fn add_index_entry(&mut self, key: &[u8], handle: BlockHandle, next_prefix: Option<u64>) {
        self.handle_buf.clear();
        handle.encode_to(&mut self.handle_buf);
        match &mut self.partitions {
            Some(p) => {
                let filter = self.filter.as_mut().filter(|_| self.partition_filters);
                p.add(key, &self.handle_buf, filter, next_prefix);
            }
            None => {
                self.index_block.add(key, &self.handle_buf);
                if let Some(b) = &mut self.user_key_index {
                    b.add(crate::key::user_key(key), &self.handle_buf);
                }
            }
        }
    }

    /// Writes a block that is not a data block with its trailer and returns its handle.
    fn write_block(&mut self, raw: &[u8], compression: Compression) -> Result<BlockHandle> {
        self.write_block_of(raw, compression, false)
    }

    /// Writes a block with its trailer and returns its handle; a `data_block` is compressed
    /// with the table's dictionary, if it has one.
    fn write_block_of(
        &mut self,
        raw: &[u8],
        compression: Compression,
        data_block: bool,
    ) -> Result<BlockHandle> {
        let kind = self
            .compressor
            .compress(compression, raw, &mut self.compressed, data_block);
        let contents: &[u8] = if kind == Compression::None {
            raw
        } else {
            &self.compressed
        };
        let handle = BlockHandle {
            offset: self.offset + self.out.len() as u64,
            size: contents.len() as u64,
        };
        let trailer = block_trailer_with(contents, kind, self.options.checksum);
        self.out.extend_from_slice(contents);
        self.out.extend_from_slice(&trailer);
        if self.out.len() >= WRITE_BUFFER {
            self.flush_output()?;
        }
        Ok(handle)
    }

    fn flush_output(&mut self) -> Result<()> {
        if !self.out.is_empty() {
            self.file.append(&self.out)?;
            self.offset += self.out.len() as u64;
            self.out.clear();
            if let Some(s) = &mut self.background_sync {
                s.appended(self.offset);
            }
        }
        Ok(())
    }

    /// Writes the filter, range-deletion, properties, meta-index and index blocks and the
    /// footer, and syncs the file. Returns the file's size and the table's properties.
    pub fn finish(mut self) -> Result<(u64, TableProperties)> {
        self.flush_data_block()?;
        self.write_held_blocks()?;
        if let Some((mut last, handle)) = self.pending_index.take() {
            match &self.options.comparator {
                BlockOrder::Plain(o) => o.find_short_successor(&mut last),
                BlockOrder::Internal(o) => o.shorten_internal_successor(&mut last),
            }
            self.add_index_entry(&last, handle, None);
        }
        if self.props.smallest_seq == u64::MAX {
            self.props.smallest_seq = 0; // no entry and no range deletion
        }
        self.props.creation_time = self.options.creation_time.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default()
        });
        let mut meta = BlockBuilder::new(1);
        let mut handle_bytes = Vec::new();
        // Meta-index entries must be added in name order: compression_dict first.
        let dictionary = self.compressor.dictionary().map(|d| d.bytes().to_vec());
        if let Some(bytes) = &dictionary {
            let h = self.write_block(bytes, Compression::None)?;
            h.encode_to(&mut handle_bytes);
            meta.add(compression_dict::META_NAME, &handle_bytes);
            handle_bytes.clear();
        }
        let mut partitions = self.partitions.take();
        if let Some(p) = &mut partitions {
            let filter = self.filter.as_mut().filter(|_| self.partition_filters);
            p.cut(filter, None);
        }
        // Meta-index entries must be added in name order: filter or partitioned_filter,
        // properties, range_del.
        match (self.filter.take(), &partitions) {
            (Some(_), Some(p)) if self.partition_filters => {
                let mut handles = Vec::with_capacity(p.filter_partitions.len());
                for data in &p.filter_partitions {
                    self.props.filter_bytes += data.len() as u64;
                    handles.push(self.write_block(data, Compression::None)?);
                }
                let keys = p.index_partitions.iter().map(|(k, _)| k.as_slice());
                let top = partitioned::top_level_block(keys.zip(handles));
                self.props.filter_partitions = p.filter_partitions.len() as u64;
                self.props.top_level_filter_bytes = top.len() as u64;
                self.props.filter_bytes += top.len() as u64;
                let h = self.write_block(&top, Compression::None)?;
                h.encode_to(&mut handle_bytes);
                meta.add(partitioned::FILTER_META_NAME, &handle_bytes);
            }
            (Some(f), _) => {
                let data = f.finish();
                self.props.filter_bytes = data.len() as u64;
                let h = self.write_block(&data, Compression::None)?;
                h.encode_to(&mut handle_bytes);
                meta.add(b"strata.filter", &handle_bytes);
            }
            (None, _) => {}
        }
        // Index partitions, and the top-level index that takes the index block's place.
        let index_contents = match &partitions {
            Some(p) if !p.index_partitions.is_empty() => {
                let mut handles = Vec::with_capacity(p.index_partitions.len());
                for (_, data) in &p.index_partitions {
                    self.props.index_bytes += data.len() as u64;
                    handles.push(self.write_block(data, Compression::None)?);
                }
                let keys = p.index_partitions.iter().map(|(k, _)| k.as_slice());
                let top = partitioned::top_level_block(keys.zip(handles));
                self.props.index_partitions = p.index_partitions.len() as u64;
                self.props.top_level_index_bytes = top.len() as u64;
                top
            }
            _ => match &mut self.user_key_index {
                Some(b) if !b.is_empty() => {
                    self.props.index_key_is_user_key = 1;
                    b.finish().to_vec()
                }
                _ => self.index_block.finish().to_vec(),
            },
        };
        let mut tombstones = std::mem::take(&mut self.range_tombstones);
        let range_del = match tombstones.is_empty() {
            true => None,
            false => {
                range_del::sort_for_block(&mut tombstones, self.options.comparator.order());
                self.props.range_deletions = tombstones.len() as u64;
                Some(self.write_block(&range_del::encode(&tombstones), Compression::None)?)
            }
        };
        self.props.index_bytes += index_contents.len() as u64;
        if let Some(c) = self.collectors.take() {
            self.props.user_properties = c.finish().map_err(Error::InvalidArgument)?;
        }
        let props = self.props.clone();
        let h = self.write_block(&props.encode(), Compression::None)?;
        handle_bytes.clear();
        h.encode_to(&mut handle_bytes);
        meta.add(b"strata.properties", &handle_bytes);
        if let Some(h) = range_del {
            handle_bytes.clear();
            h.encode_to(&mut handle_bytes);
            meta.add(range_del::META_NAME, &handle_bytes);
        }
        let metaindex = self.write_block(meta.finish(), Compression::None)?;
        // One index block is compressed as the data blocks are (RocksDB's
        // `enable_index_compression`): read once at open, it saves its share of every table's
        // bytes. The top level of a partitioned index is not, nor are its partitions.
        let index_compression = match props.index_partitions {
            0 => self.options.compression,
            _ => Compression::None,
        };
        let index = self.write_block(&index_contents, index_compression)?;
        let version = match (self.hashed, range_del, props.index_partitions) {
            _ if dictionary.is_some() || self.options.checksum != ChecksumType::Crc32c => {
                TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT
            }
            _ if props.index_key_is_user_key != 0 => TABLE_FORMAT_VERSION_USER_KEY_INDEX,
            (true, _, _) => TABLE_FORMAT_VERSION_DATA_BLOCK_HASH,
            (false, _, 1..) => TABLE_FORMAT_VERSION_PARTITIONED,
            (false, Some(_), 0) => TABLE_FORMAT_VERSION_RANGE_DEL,
            (false, None, 0) => TABLE_FORMAT_VERSION,
        };
        let footer = Footer {
            metaindex,
            index,
            version,
            checksum: self.options.checksum,
        };
        self.out.extend_from_slice(&footer.encode());
        self.flush_output()?;
        if let Some(s) = self.background_sync.take() {
            s.finish()?;
        }
        self.file.sync()?;
        Ok((self.offset, props))
    }
}
