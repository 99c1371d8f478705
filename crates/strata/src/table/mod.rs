//! Sorted tables (SSTs): immutable files of sorted key-value entries.
//!
//! File layout (on disk; each block framed as in [`format`]):
//!
//! ```text
//! data block*         entries in key order, ~block_size bytes each, compressed per block
//! dictionary block    the zstd dictionary of the data blocks (absent without one; see
//!                     `compression_dict`)
//! filter block        bloom filter over filter keys (absent when bits_per_key is 0)
//! range-del block     range tombstones (absent without any; see `range_del`)
//! properties block    counts and sizes, name -> value
//! meta-index block    "strata.compression_dict" / "strata.filter" / "strata.properties" /
//!                     "strata.range_del" -> handle
//! index block         per data block a separator -> its handle: a key at or after the
//!                     block's last key and before the next block's first, shortened by
//!                     the comparator (the last block's by its successor rule)
//! footer              handles of meta-index and index, version, checksum, magic
//! ```
//!
//! With [`IndexType::TwoLevelIndexSearch`] the index block is cut into index partitions
//! under a top-level index (the footer's index), and with `partition_filters` the filter
//! block into filter partitions under a top-level filter index (`strata.partitioned_filter`
//! in the meta-index); the layout is in [`partitioned`].
//!
//! The table layer knows nothing of sequence numbers: a [`TableOptions`] gives it the key
//! order, the part of a key the filter indexes, and how to read a key's sequence number and
//! deletion flag for the properties. The properties record the user key order's name
//! (`strata.comparator`), and a reader of another order refuses the table. Range tombstones
//! are the exception: they are MVCC by nature, so the range-deletion block stores internal
//! keys (`crate::range_del`) whatever the table's comparator.
//!
//! With a prefix extractor the filter also holds the prefix of every filter key in the
//! extractor's domain, and the property `strata.prefix-extractor` names the extractor
//! (`properties.rs`); [`Table::may_contain_prefix`] answers only for a reader with the same
//! extractor. Neither changes a byte layout: an older build reads such a table as before
//! (its whole-key lookups see a filter with more entries), and this build reads older tables
//! without prefix filtering, so the table format version is not raised.
//!
//! A table written by the database records the column family it belongs to (id, name, and
//! the ttl of a TTL family: `strata.column-family*` in the properties) from
//! [`TableOptions::column_family`]. The table layer only stores them; repair reads them to
//! put each table back in its family when the manifest is lost.

mod approximate;
pub mod block;
pub mod builder;
pub mod collector;
pub(crate) use crate::compression;
pub mod compression_dict;
pub mod data_block_hash;
pub mod filter;
pub mod format;
mod incremental_sync;
pub mod iter;
pub mod partitioned;
pub mod pinned;
pub mod properties;
pub mod range_del;
pub mod reader;

use std::sync::Arc;

use crate::prefix::PrefixExtractor;
pub use builder::TableBuilder;
pub use compression::{Compression, CompressionOptions};
pub use format::ChecksumType;
pub use pinned::PinnedValue;

pub use reader::{BlockReads, Table};

/// How tables are built and read.
#[derive(Clone)]
pub struct TableOptions {
    /// Target raw size of a data block in bytes, its 5-byte trailer included (4 KiB by
    /// default): a block is cut once it reaches this size, or before an entry that would take
    /// it past it once it is `block_size_deviation` percent short of it or less. Counting the
    /// trailer, a block read whole from the file fits an allocation of `block_size` bytes.
    pub block_size: usize,
    /// How far short of `block_size` (percent) a data block may be cut to keep the next entry
    /// from taking it past that size (RocksDB's `block_size_deviation`; 10 by default, 0
    /// cuts only once the size is reached). At most 100.
    pub block_size_deviation: u32,
    /// Entries between restart points in data blocks (16 by default).
    pub restart_interval: usize,
    /// Bloom filter bits per key; 0 builds no filter (10 by default).
    pub bloom_bits_per_key: u32,
    /// Compression of data blocks.
    pub compression: Compression,
    /// The order of keys.
    pub comparator: block::BlockOrder,
    /// The part of a key the filter indexes (for internal keys: the user key).
    pub filter_key: fn(&[u8]) -> &[u8],
    /// A key's sequence number and whether it is a deletion, for the properties.
    pub key_info: fn(&[u8]) -> (u64, bool),
    /// With a filter, its entries include the prefix of each filter key (see the module
    /// documentation). Used when building; readers learn the extractor from the properties.
    pub prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
    /// The column family the table is written for, recorded in its properties; `None` for
    /// tables outside a database (tools, tests), which record none.
    pub column_family: Option<TableFamily>,
    /// The family's log number as of the table (`strata.log-number`): every record of the
    /// table's family in a WAL numbered below it is in this table or in one written before
    /// it. Flushes and compactions record it (0: none, as for tables outside a database).
    pub log_number: u64,
    /// One index block, or index partitions under a top-level index (`partitioned.rs`).
    /// Used when building; readers learn it from the table.
    pub index_type: IndexType,
    /// With [`IndexType::TwoLevelIndexSearch`] and a filter: the filter cut into partitions
    /// where the index partitions are cut, under a top-level filter index.
    pub partition_filters: bool,
    /// Target raw size of an index partition and of a filter partition, in bytes.
    pub metadata_block_size: usize,
    /// Whether data blocks carry a hash index of their user keys for point lookups
    /// (`data_block_hash.rs`): only tables of internal keys in a built-in order get one.
    /// Used when building; readers learn it from each block.
    pub data_block_index_type: DataBlockIndexType,
    /// User keys per bucket of a data block's hash index (above 0; RocksDB's
    /// `data_block_hash_table_util_ratio`).
    pub data_block_hash_table_util_ratio: f64,
    /// Each table built gets one collector from each of these (`collector.rs`), whose
    /// properties it stores. Used when building.
    pub properties_collectors: Vec<Arc<dyn collector::TablePropertiesCollectorFactory>>,
    /// The creation time recorded in the properties (seconds since the Unix epoch); `None`:
    /// the system clock's when the table is finished. A database gives its clock's, which
    /// the picks by age read.
    pub creation_time: Option<u64>,
    /// Options of data-block compression (the level, the dictionary).
    pub compression_opts: compression::CompressionOptions,
    /// How blocks are checksummed (recorded in the footer: any table reads whatever this
    /// is now).
    pub checksum: format::ChecksumType,
}

/// How a point lookup finds its entry in a data block (RocksDB's
/// `BlockBasedTableOptions::DataBlockIndexType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum DataBlockIndexType {
    /// A binary search of the block's restart points, then a scan of one interval.
    #[default]
    BinarySearch,
    /// A hash index after the restart points maps each user key to its restart interval;
    /// the binary search only where user keys collide (RocksDB's `kDataBlockBinaryAndHash`).
    /// Tables written with it have format version 4, which older builds refuse.
    BinaryAndHash,
}

impl DataBlockIndexType {
    /// The name used by options and tools (`binary_search`, `binary_and_hash`).
    pub fn name(self) -> &'static str {
        match self {
            DataBlockIndexType::BinarySearch => "binary_search",
            DataBlockIndexType::BinaryAndHash => "binary_and_hash",
        }
    }

    /// The type with this name.
    pub fn from_name(name: &str) -> Option<DataBlockIndexType> {
        [
            DataBlockIndexType::BinarySearch,
            DataBlockIndexType::BinaryAndHash,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }
}

/// How a table's index is laid out (RocksDB's `BlockBasedTableOptions::IndexType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum IndexType {
    /// One index block with an entry per data block, read whole at open.
    #[default]
    BinarySearch,
    /// Index partitions of about `metadata_block_size` bytes, each read through the block
    /// cache when needed, under a small top-level index read at open
    /// (RocksDB's `kTwoLevelIndexSearch`).
    TwoLevelIndexSearch,
}

impl IndexType {
    /// The name used by options and tools (`binary_search`, `two_level_index_search`).
    pub fn name(self) -> &'static str {
        match self {
            IndexType::BinarySearch => "binary_search",
            IndexType::TwoLevelIndexSearch => "two_level_index_search",
        }
    }

    /// The index type with this name.
    pub fn from_name(name: &str) -> Option<IndexType> {
        [IndexType::BinarySearch, IndexType::TwoLevelIndexSearch]
            .into_iter()
            .find(|t| t.name() == name)
    }
}

/// The column family a table belongs to, as its properties record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFamily {
    /// The family's id in the manifest.
    pub id: u32,
    /// The family's name.
    pub name: String,
    /// The ttl in seconds of a TTL family (its values end in an expiry), `None` otherwise.
    pub ttl: Option<u64>,
}

fn whole_key(k: &[u8]) -> &[u8] {
    k
}

fn no_key_info(_: &[u8]) -> (u64, bool) {
    (0, false)
}

impl Default for TableOptions {
    /// Bytewise keys, no sequence numbers: tables usable without a database.
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            block_size_deviation: 10,
            restart_interval: 16,
            bloom_bits_per_key: 10,
            compression: Compression::None,
            comparator: block::BlockOrder::BYTEWISE,
            filter_key: whole_key,
            key_info: no_key_info,
            prefix_extractor: None,
            column_family: None,
            log_number: 0,
            index_type: IndexType::BinarySearch,
            partition_filters: false,
            metadata_block_size: 4096,
            data_block_index_type: DataBlockIndexType::BinarySearch,
            data_block_hash_table_util_ratio: data_block_hash::DEFAULT_UTIL_RATIO,
            properties_collectors: Vec::new(),
            creation_time: None,
            compression_opts: compression::CompressionOptions::default(),
            checksum: format::ChecksumType::Crc32c,
        }
    }
}

impl TableOptions {
    /// Options for tables of internal keys (what the database writes).
    pub fn for_internal_keys() -> TableOptions {
        TableOptions {
            comparator: block::BlockOrder::Internal(crate::comparator::KeyOrder::Bytewise),
            filter_key: crate::key::user_key,
            key_info: |k| match crate::key::ParsedKey::parse(k) {
                Some(p) => (
                    p.seq,
                    matches!(
                        p.value_kind(),
                        Some(crate::key::ValueKind::Delete | crate::key::ValueKind::SingleDelete)
                    ),
                ),
                None => (0, false),
            },
            ..TableOptions::default()
        }
    }

    /// Options for reading tables of internal keys whose properties name the comparator
    /// `name` (`strata.comparator`; empty in tables older than the property, which are
    /// bytewise), when that is a built-in order; `None` for any other name, since an
    /// application's order cannot be rebuilt from its name. What tools reading a table
    /// without its database use.
    pub fn for_internal_keys_named(name: &str) -> Option<TableOptions> {
        let order = match name {
            "" => crate::comparator::KeyOrder::Bytewise,
            name => crate::comparator::KeyOrder::builtin(name)?,
        };
        Some(TableOptions {
            comparator: block::BlockOrder::Internal(order),
            ..TableOptions::for_internal_keys()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iterator::InternalIterator;
    use crate::testing::harness::{self, Constructor, Entries, Entry, Keys};
    use crate::testing::lsm::{open_table, table, write_table, Caching};
    use crate::util::Rng;
    use crate::ErrorKind;
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::sync::Arc;

    struct TableConstructor {
        dir: tempfile::TempDir,
        tables: u64,
        options: TableOptions,
        caching: Caching,
        keys: Keys,
    }

    impl Constructor for TableConstructor {
        fn name(&self) -> String {
            let o = &self.options;
            format!(
                "table ({:?}, {:?}, block size {}, restart interval {}, {} bloom bits, {:?} cached, \
                 {} index, partitioned filters {}, metadata block size {}, {} data blocks)",
                self.keys,
                o.compression,
                o.block_size,
                o.restart_interval,
                o.bloom_bits_per_key,
                self.caching,
                o.index_type.name(),
                o.partition_filters,
                o.metadata_block_size,
                o.data_block_index_type.name()
            )
        }
        fn keys(&self) -> Keys {
            self.keys
        }
        fn build(&mut self, entries: &Entries, _: &mut Rng) -> Box<dyn InternalIterator + '_> {
            self.tables += 1;
            let path = self.dir.path().join(format!("{}.sst", self.tables));
            Box::new(table(&path, entries, self.options.clone(), self.caching).iter())
        }
    }

    /// The index layouts the tests go through: (index type, partitioned filters, metadata
    /// block size). Tiny partitions force many of them: size 1 cuts one per data block.
    const LAYOUTS: [(IndexType, bool, usize); 4] = [
        (IndexType::BinarySearch, false, 4096),
        (IndexType::TwoLevelIndexSearch, true, 1),
        (IndexType::TwoLevelIndexSearch, false, 64),
        (IndexType::TwoLevelIndexSearch, true, 300),
    ];

    fn with_layout(options: TableOptions, layout: (IndexType, bool, usize)) -> TableOptions {
        let (index_type, partition_filters, metadata_block_size) = layout;
        TableOptions {
            index_type,
            partition_filters,
            metadata_block_size,
            ..options
        }
    }

    /// Data blocks end within `block_size` (their trailer counted) when the deviation lets
    /// the builder cut them before an entry that would not fit, and up to an entry past it
    /// when it does not: entries too large for the deviation, or a deviation of 0.
    #[test]
    fn data_blocks_are_cut_within_block_size_as_the_deviation_allows() {
        struct Case {
            block_size: usize,
            deviation: u32,
            value_len: usize,
            hash_index: bool,
            /// Whether every block must end within `block_size`; otherwise within it plus
            /// one entry, and some block past it.
            within: bool,
        }
        #[rustfmt::skip]
        let cases = [
            Case { block_size: 4096, deviation: 10, value_len: 100, hash_index: false, within: true },
            Case { block_size: 4096, deviation: 10, value_len: 100, hash_index: true, within: true },
            Case { block_size: 4096, deviation: 0, value_len: 100, hash_index: false, within: false },
            Case { block_size: 4096, deviation: 10, value_len: 1500, hash_index: false, within: false },
            Case { block_size: 4096, deviation: 100, value_len: 1000, hash_index: false, within: true },
            Case { block_size: 512, deviation: 10, value_len: 20, hash_index: true, within: true },
            Case { block_size: 100, deviation: 50, value_len: 200, hash_index: false, within: false },
        ];
        let dir = tempfile::tempdir().unwrap();
        for (i, c) in cases.iter().enumerate() {
            let model: Vec<Entry> = (0..3000u64)
                .map(|k| {
                    let mut key = Vec::new();
                    crate::key::append_internal_key(
                        &mut key,
                        format!("key{k:08}").as_bytes(),
                        k + 1,
                        crate::key::ValueKind::Put as u8,
                    );
                    (key, vec![b'v'; c.value_len])
                })
                .collect();
            let options = TableOptions {
                block_size: c.block_size,
                block_size_deviation: c.deviation,
                data_block_index_type: match c.hash_index {
                    true => DataBlockIndexType::BinaryAndHash,
                    false => DataBlockIndexType::BinarySearch,
                },
                ..TableOptions::for_internal_keys()
            };
            let path = dir.path().join(format!("{i}.sst"));
            let table = table(&path, &model, options, Caching::None);
            let handles = table.data_block_handles().unwrap();
            assert_eq!(
                handles.len() as u64,
                table.properties().data_blocks,
                "case {i}"
            );
            // An entry's most bytes: three length varints, the key, the value, a restart.
            let entry = 3 + 19 + c.value_len + 4;
            let on_disk = |h: &format::BlockHandle| h.size as usize + format::BLOCK_TRAILER_LEN;
            let largest = handles.iter().map(on_disk).max().unwrap();
            match c.within {
                true => assert!(largest <= c.block_size, "case {i}: a block of {largest}"),
                false => assert!(
                    largest > c.block_size && largest <= c.block_size + entry + 8,
                    "case {i}: largest block {largest}"
                ),
            }
            // Every block but the last holds what the deviation asks before it is cut.
            let fullest_cut = c.block_size * (100 - c.deviation as usize) / 100;
            let floor = fullest_cut.min(c.block_size.saturating_sub(entry + 8));
            for h in &handles[..handles.len() - 1] {
                assert!(
                    on_disk(h) >= floor,
                    "case {i}: a block of {} cut early",
                    on_disk(h)
                );
            }
        }
    }

    /// `Table::uncache` erases the data blocks the block cache holds while the share found
    /// stays at or above 0.99^(aggressiveness - 1), then the cached index and filter blocks.
    #[test]
    fn uncache_erases_cached_blocks_as_far_as_the_aggressiveness_says() {
        use crate::fs::FileSystem;
        struct Case {
            layout: (IndexType, bool, usize),
            cache_index_and_filter: bool,
            /// Data blocks read (so cached) from the first on: all of them when `None`.
            read: Option<usize>,
            aggressiveness: u32,
            /// Data blocks tried and erased, `None` for all of them.
            tried: Option<usize>,
            erased: Option<usize>,
        }
        #[rustfmt::skip]
        let cases = [
            Case { layout: LAYOUTS[0], cache_index_and_filter: false, read: None, aggressiveness: 0, tried: Some(0), erased: Some(0) },
            Case { layout: LAYOUTS[0], cache_index_and_filter: false, read: None, aggressiveness: 1, tried: None, erased: None },
            Case { layout: LAYOUTS[0], cache_index_and_filter: false, read: Some(10), aggressiveness: 1, tried: Some(11), erased: Some(10) },
            Case { layout: LAYOUTS[0], cache_index_and_filter: false, read: Some(10), aggressiveness: 10_000, tried: None, erased: Some(10) },
            // Nothing cached: 0.99^299 is about 1/20.2, so the walk gives up after 20 tries.
            Case { layout: LAYOUTS[0], cache_index_and_filter: false, read: Some(0), aggressiveness: 300, tried: Some(20), erased: Some(0) },
            Case { layout: LAYOUTS[0], cache_index_and_filter: true, read: None, aggressiveness: 300, tried: None, erased: None },
            Case { layout: LAYOUTS[1], cache_index_and_filter: true, read: None, aggressiveness: 300, tried: None, erased: None },
            Case { layout: LAYOUTS[3], cache_index_and_filter: true, read: Some(5), aggressiveness: 10_000, tried: None, erased: Some(5) },
        ];
        let dir = tempfile::tempdir().unwrap();
        let model: Vec<Entry> = (0..2000)
            .map(|i| (format!("key{i:06}").into_bytes(), vec![b'v'; 100]))
            .collect();
        for (i, c) in cases.iter().enumerate() {
            let path = dir.path().join(format!("{i}.sst"));
            let options = with_layout(TableOptions::default(), c.layout);
            write_table(&path, &model, options.clone());
            let cache = Arc::new(reader::new_block_cache(64 << 20, 4));
            let read = reader::TableReadOptions {
                block_cache: Some(cache.clone()),
                cache_id: 7,
                cache_index_and_filter: c.cache_index_and_filter,
                pin_top_level_index_and_filter: false,
                ..reader::TableReadOptions::uncached(options)
            };
            let file = crate::fs::PosixFs.open_random(&path).unwrap();
            let table = Arc::new(Table::open(file, &path, &read).unwrap());
            let blocks = table.data_block_handles().unwrap().len();
            assert!(blocks > 40, "case {i}: {blocks} data blocks");
            let usage_before_reads = cache.usage();
            // Point reads in key order, until the first blocks wanted are cached: each
            // caches the one block holding its key (a scan would read ahead).
            let wanted = table.data_block_handles().unwrap()[..c.read.unwrap_or(blocks)].to_vec();
            for (k, v) in &model {
                if wanted.iter().all(|h| cache.contains(&(7, h.offset))) {
                    break;
                }
                let got = table.get(k, |_, v| v.to_vec()).unwrap();
                assert_eq!(got.as_ref(), Some(v));
            }
            let done = table.uncache(c.aggressiveness);
            let expect = |n: Option<usize>| n.unwrap_or(blocks) as u64;
            assert_eq!(done.tried, expect(c.tried), "case {i}: tried");
            assert_eq!(done.erased, expect(c.erased), "case {i}: erased");
            if c.aggressiveness > 0 && c.read.is_none() {
                assert_eq!(cache.usage(), 0, "case {i}: something stayed cached");
            }
            if c.aggressiveness == 0 {
                assert!(cache.usage() > usage_before_reads, "case {i}");
            }
        }
    }

    /// Tables pass the iterator harness in every key order, for every compression, many
    /// restart intervals and block sizes, with and without filters and caches, with one
    /// index block and with partitioned indexes and filters, with and without data-block
    /// hash indexes (tables of internal keys).
    #[test]
    fn tables_pass_the_iterator_harness() {
        let mut case = 0;
        for layout in LAYOUTS {
            for compression in [
                Compression::None,
                Compression::Snappy,
                Compression::Lz4,
                Compression::Zstd,
            ] {
                for (restart_interval, block_size) in
                    [(1, 256), (4, 1024), (16, 4096), (128, 65536)]
                {
                    for keys in Keys::ALL {
                        case += 1;
                        let base = match keys {
                            Keys::Internal => TableOptions::for_internal_keys(),
                            _ => TableOptions {
                                comparator: keys.comparator(),
                                ..TableOptions::default()
                            },
                        };
                        let caching = match case % 3 {
                            0 => Caching::None,
                            1 => Caching::Data,
                            _ if case % 2 == 0 => Caching::AllUnpinned,
                            _ => Caching::All,
                        };
                        let options = TableOptions {
                            block_size,
                            restart_interval,
                            compression,
                            bloom_bits_per_key: if case % 3 == 0 { 0 } else { 10 },
                            data_block_index_type: match case % 2 {
                                0 => DataBlockIndexType::BinaryAndHash,
                                _ => DataBlockIndexType::BinarySearch,
                            },
                            ..base
                        };
                        let mut c = TableConstructor {
                            dir: tempfile::tempdir().unwrap(),
                            tables: 0,
                            options: with_layout(options, layout),
                            caching,
                            keys,
                        };
                        harness::check(&mut c, 8);
                    }
                }
            }
        }
    }

    type Model = BTreeMap<Vec<u8>, Vec<u8>>;

    fn random_model(rng: &mut Rng, n: usize) -> Vec<Entry> {
        let mut m = Model::new();
        for i in 0..n {
            let key = format!("key{:06}", rng.below(100_000)).into_bytes();
            let vlen = if rng.one_in(10) {
                5000
            } else {
                rng.below(120) as usize
            };
            let v = format!("value-{i}-").into_bytes().repeat(vlen / 8 + 1);
            m.insert(key, v[..vlen].to_vec());
        }
        m.into_iter().collect()
    }

    /// Point lookups find every key, whatever the filter, cache and index layout: no false
    /// negatives.
    #[test]
    fn point_gets_find_every_key() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng::new(42);
        for (case, bloom_bits_per_key) in [0, 1, 10].into_iter().enumerate() {
            for caching in [
                Caching::None,
                Caching::Data,
                Caching::All,
                Caching::AllUnpinned,
            ] {
                for (l, layout) in LAYOUTS.into_iter().enumerate() {
                    let n = 1 + rng.below(2000) as usize;
                    let model = random_model(&mut rng, n);
                    let options = TableOptions {
                        block_size: 256 << case,
                        bloom_bits_per_key,
                        compression: Compression::Lz4,
                        ..TableOptions::default()
                    };
                    let options = with_layout(options, layout);
                    let path = dir.path().join(format!("{case}-{caching:?}-{l}.sst"));
                    let table = table(&path, &model, options, caching);
                    let map: Model = model.into_iter().collect();
                    for _ in 0..400 {
                        let probe = match map.keys().nth(rng.below(map.len() as u64) as usize) {
                            Some(k) if rng.one_in(2) => k.clone(),
                            _ => format!("key{:06}", rng.below(100_000)).into_bytes(),
                        };
                        let got = table.get(&probe, |k, v| (k.to_vec(), v.to_vec())).unwrap();
                        match map.get(&probe) {
                            Some(v) => assert_eq!(got, Some((probe.clone(), v.clone()))),
                            None => assert!(got.is_none_or(|(k, _)| k > probe)),
                        }
                    }
                }
            }
        }
    }

    /// Point lookups in tables whose data blocks carry hash indexes find what a model finds
    /// (the newest version at or below the snapshot), for every user key and snapshot, in
    /// both built-in orders, over random block sizes, restart intervals, utilization ratios,
    /// caches and index layouts: keys with versions running over restart intervals and over
    /// blocks (a block's last user key starting the next block), absent keys between and
    /// beyond them. The tables have format version 4 and count their hashed blocks.
    #[test]
    fn point_gets_through_data_block_hash_indexes_find_what_a_model_finds() {
        use crate::key::{append_internal_key, seek_key, user_key, ValueKind};
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng::new(77);
        for round in 0..24 {
            let reverse = round % 2 == 1;
            let order = match reverse {
                true => crate::comparator::KeyOrder::Reverse,
                false => crate::comparator::KeyOrder::Bytewise,
            };
            let users = 1 + rng.below(300) as usize;
            let mut entries: Vec<Entry> = Vec::new();
            for u in 0..users {
                let user = format!("user{:05}", 2 * u).into_bytes();
                let most = if rng.one_in(4) { 30 } else { 3 };
                let versions = 1 + rng.below(most);
                for v in (1..=versions).rev() {
                    let kind = match rng.one_in(5) {
                        true => ValueKind::Delete,
                        false => ValueKind::Put,
                    };
                    let mut k = Vec::new();
                    append_internal_key(&mut k, &user, 4 * v, kind as u8);
                    entries.push((k, format!("{u}@{v}").into_bytes()));
                }
            }
            let cmp = block::BlockOrder::Internal(order);
            entries.sort_by(|a, b| cmp.compare(&a.0, &b.0));
            let ratio = [0.75, 0.25, 1.0, 3.0][rng.below(4) as usize];
            let options = TableOptions {
                block_size: [128, 512, 4096][rng.below(3) as usize],
                restart_interval: [1, 2, 4, 16][rng.below(4) as usize],
                compression: [Compression::None, Compression::Lz4][rng.below(2) as usize],
                comparator: cmp.clone(),
                data_block_index_type: DataBlockIndexType::BinaryAndHash,
                data_block_hash_table_util_ratio: ratio,
                ..TableOptions::for_internal_keys()
            };
            let options = with_layout(options, LAYOUTS[rng.below(4) as usize]);
            let caching = [Caching::None, Caching::Data, Caching::All][rng.below(3) as usize];
            let path = dir.path().join(format!("{round}.sst"));
            let t = table(&path, &entries, options.clone(), caching);
            let what = format!("round {round}, {} entries", entries.len());
            let footer = std::fs::read(&path).unwrap();
            let footer = format::Footer::decode(&footer[footer.len() - format::FOOTER_LEN..]);
            let props = t.properties();
            // 5 where no user key's versions span two blocks (the index holds user keys).
            let version = match props.index_key_is_user_key {
                0 => 4,
                _ => 5,
            };
            assert_eq!(footer.unwrap().version, version, "{what}");
            let small_blocks = options.restart_interval > 1 || options.block_size < 4096;
            if small_blocks {
                assert_eq!(props.data_block_hash_indexes, props.data_blocks, "{what}");
            }
            for u in 0..2 * users + 2 {
                let user = format!("user{u:05}").into_bytes();
                for snapshot in [0, 1, 3, 4, 5, 8, 9, 15, 40, 60, 121, u64::MAX >> 8] {
                    let target = seek_key(&user, snapshot);
                    let got = t.get(&target, |k, v| (k.to_vec(), v.to_vec())).unwrap();
                    let got = got.filter(|(k, _)| user_key(k) == user);
                    let first = entries.partition_point(|(k, _)| cmp.compare(k, &target).is_lt());
                    let want = entries
                        .get(first)
                        .filter(|(k, _)| user_key(k) == user)
                        .cloned();
                    assert_eq!(got, want, "{what}: user {u} at {snapshot}");
                }
            }
        }
    }

    /// An index holds user keys unless a user key's versions span two data blocks: every
    /// get and every seek either way, at every snapshot, for keys present and absent, finds
    /// what a model finds, in both forms and both built-in orders.
    #[test]
    fn index_keys_are_user_keys_unless_a_user_key_spans_two_blocks() {
        use crate::key::{append_internal_key, seek_key, user_key, ValueKind};
        let dir = tempfile::tempdir().unwrap();
        for (case, (spanning, reverse)) in [(1, false), (40, false), (1, true), (40, true)]
            .into_iter()
            .enumerate()
        {
            let order = match reverse {
                true => crate::comparator::KeyOrder::Reverse,
                false => crate::comparator::KeyOrder::Bytewise,
            };
            let cmp = block::BlockOrder::Internal(order);
            let mut entries: Vec<Entry> = Vec::new();
            for u in 0..400u64 {
                let user = format!("user{:05}", 2 * u).into_bytes();
                let versions = if u == 200 { spanning } else { 1 };
                for v in (1..=versions).rev() {
                    let mut k = Vec::new();
                    append_internal_key(&mut k, &user, 4 * v, ValueKind::Put as u8);
                    entries.push((k, format!("{u}@{v}").into_bytes()));
                }
            }
            entries.sort_by(|a, b| cmp.compare(&a.0, &b.0));
            let options = TableOptions {
                block_size: 128,
                restart_interval: 2,
                comparator: cmp.clone(),
                ..TableOptions::for_internal_keys()
            };
            let path = dir.path().join(format!("{case}.sst"));
            let t = table(&path, &entries, options, Caching::Data);
            let what = format!("{spanning} versions of user 200, reverse {reverse}");
            let user_keys = t.properties().index_key_is_user_key;
            assert_eq!(user_keys, u64::from(spanning == 1), "{what}");
            let bytes = std::fs::read(&path).unwrap();
            let footer = format::Footer::decode(&bytes[bytes.len() - format::FOOTER_LEN..]);
            let version = if spanning == 1 { 5 } else { 1 };
            assert_eq!(footer.unwrap().version, version, "{what}");

            let mut it = t.iter();
            for u in 0..802 {
                let user = format!("user{u:05}").into_bytes();
                for snapshot in [0, 3, 4, 5, 8, 100, 160, 161, u64::MAX >> 8] {
                    let target = seek_key(&user, snapshot);
                    let first = entries.partition_point(|(k, _)| cmp.compare(k, &target).is_lt());
                    let at_or_after = entries.get(first).cloned();
                    let at_or_before = entries
                        .get(first)
                        .filter(|(k, _)| cmp.compare(k, &target).is_eq())
                        .or_else(|| first.checked_sub(1).and_then(|i| entries.get(i)))
                        .cloned();
                    let got = t.get(&target, |k, v| (k.to_vec(), v.to_vec())).unwrap();
                    let mine = |e: &Option<Entry>| e.clone().filter(|(k, _)| user_key(k) == user);
                    assert_eq!(
                        mine(&got),
                        mine(&at_or_after),
                        "{what}: get {u} at {snapshot}"
                    );
                    it.seek(&target);
                    let here = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
                    assert_eq!(here, at_or_after, "{what}: seek {u} at {snapshot}");
                    it.seek_for_prev(&target);
                    let here = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
                    assert_eq!(
                        here, at_or_before,
                        "{what}: seek_for_prev {u} at {snapshot}"
                    );
                }
            }
        }
    }

    /// A table whose properties say its index holds user keys while its footer has a format
    /// version from before such indexes is refused as corrupt, naming the file and both.
    #[test]
    fn a_user_key_index_in_an_older_format_version_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let entries: Vec<Entry> = (0..200u64)
            .map(|i| {
                let mut k = Vec::new();
                crate::key::append_internal_key(&mut k, format!("k{i:04}").as_bytes(), 1, 1);
                (k, b"v".to_vec())
            })
            .collect();
        let options = TableOptions {
            block_size: 128,
            ..TableOptions::for_internal_keys()
        };
        let t = table(&path, &entries, options.clone(), Caching::None);
        assert_eq!(t.properties().index_key_is_user_key, 1);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - format::FOOTER_LEN;
        let mut footer = format::Footer::decode(&bytes[at..]).unwrap();
        footer.version = format::TABLE_FORMAT_VERSION_DATA_BLOCK_HASH;
        bytes[at..].copy_from_slice(&footer.encode());
        std::fs::write(&path, &bytes).unwrap();
        let err = open_table(&path, options, Caching::None).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
        let msg = err.to_string();
        assert!(msg.contains("t.sst"), "{msg}");
        assert!(
            msg.contains("the index holds user keys") && msg.contains("format version 4"),
            "{msg}"
        );
    }

    /// One index block is stored compressed with the table's compression (when that saves
    /// an eighth); the top level of a partitioned index is stored as it is. Either reads back.
    #[test]
    fn one_index_block_is_compressed_as_the_data_blocks_are() {
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<Entry> = (0..2000u64)
            .map(|i| {
                let mut k = Vec::new();
                let key = format!("user{:08}", i * 37);
                crate::key::append_internal_key(&mut k, key.as_bytes(), 1, 1);
                (k, b"value".to_vec())
            })
            .collect();
        let cases = [
            (Compression::None, IndexType::BinarySearch, false),
            (Compression::Snappy, IndexType::BinarySearch, true),
            (Compression::Zstd, IndexType::BinarySearch, true),
            (Compression::Snappy, IndexType::TwoLevelIndexSearch, false),
        ];
        for (i, (compression, index_type, compressed)) in cases.into_iter().enumerate() {
            let path = dir.path().join(format!("{i}.sst"));
            let options = TableOptions {
                block_size: 128,
                compression,
                index_type,
                metadata_block_size: 256,
                ..TableOptions::for_internal_keys()
            };
            let t = table(&path, &entries, options, Caching::None);
            let bytes = std::fs::read(&path).unwrap();
            let footer = format::Footer::decode(&bytes[bytes.len() - format::FOOTER_LEN..]);
            let stored = footer.unwrap().index.size;
            let p = t.properties();
            let raw = match p.index_partitions {
                0 => p.index_bytes,
                _ => p.top_level_index_bytes,
            };
            assert_eq!(
                stored < raw,
                compressed,
                "case {i}: {stored} stored of {raw}"
            );
            for (k, v) in entries.iter().step_by(97) {
                let got = t.get(k, |k, v| (k.to_vec(), v.to_vec())).unwrap();
                assert_eq!(got, Some((k.clone(), v.clone())), "case {i}");
            }
        }
    }

    /// Lookups of keys shorter and longer than a cursor builds in place (the longer ones
    /// take the thread's key buffer), also from inside another lookup's callback, which
    /// finds the buffer taken: each finds its own entry.
    #[test]
    fn gets_of_long_keys_find_them_also_when_nested() {
        let dir = tempfile::tempdir().unwrap();
        let key = |i: u64| {
            let len = [1, 20, block::INLINE_KEY - 1, block::INLINE_KEY + 1, 300][i as usize % 5];
            let mut k = vec![b'k'; len];
            k.extend_from_slice(format!("{i:05}").as_bytes());
            k
        };
        let model: Model = (0..500)
            .map(|i| (key(i), format!("v{i}").into_bytes()))
            .collect();
        let entries: Vec<Entry> = model.clone().into_iter().collect();
        let options = TableOptions {
            block_size: 512,
            ..TableOptions::default()
        };
        let table = table(
            &dir.path().join("long.sst"),
            &entries,
            options,
            Caching::Data,
        );
        let mut rng = Rng::new(9);
        for _ in 0..500 {
            let (outer, inner) = (key(rng.below(500)), key(rng.below(500)));
            let got = table
                .get(&outer, |k, v| {
                    let nested = table.get(&inner, |k, v| (k.to_vec(), v.to_vec())).unwrap();
                    (k.to_vec(), v.to_vec(), nested)
                })
                .unwrap();
            let want = |k: &Vec<u8>| (k.clone(), model[k].clone());
            let (k, v, nested) = got.unwrap();
            assert_eq!((k, v), want(&outer));
            assert_eq!(nested, Some(want(&inner)));
        }
    }

    /// A table file held in memory, so that thousands of damaged copies are cheap to read.
    pub(super) struct MemFile(pub(super) Vec<u8>);

    impl crate::fs::RandomAccessFile for MemFile {
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> crate::Result<()> {
            let at = offset as usize;
            match self.0.get(at..at + buf.len()) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    Ok(())
                }
                None => Err(crate::Error::io(
                    "read",
                    "bad.sst",
                    std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
                )),
            }
        }
        fn size(&self) -> u64 {
            self.0.len() as u64
        }
    }

    /// Flipping any single byte of a table makes open or verify fail with a corruption error
    /// naming the file; it never yields wrong data or a panic. Partitioned indexes and
    /// filters too: verify reads every index and filter partition; and data blocks carrying
    /// hash indexes (their buckets and bucket counts are under the block checksum).
    #[test]
    fn every_flipped_byte_is_reported_as_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let model: Vec<Entry> = (0..300u32)
            .map(|i| {
                (
                    format!("key{i:05}").into_bytes(),
                    format!("v{i}").repeat(i as usize % 9).into_bytes(),
                )
            })
            .collect();
        // The same entries as internal keys, for tables with data-block hash indexes.
        let internal: Vec<Entry> = model
            .iter()
            .map(|(k, v)| (crate::key::seek_key(k, 7), v.clone()))
            .collect();
        let hashed = TableOptions {
            data_block_index_type: DataBlockIndexType::BinaryAndHash,
            ..TableOptions::for_internal_keys()
        };
        for (compression, layout, base) in [
            (Compression::None, LAYOUTS[0], TableOptions::default()),
            (Compression::Lz4, LAYOUTS[0], TableOptions::default()),
            (Compression::None, LAYOUTS[1], TableOptions::default()),
            (Compression::Lz4, LAYOUTS[3], TableOptions::default()),
            (Compression::None, LAYOUTS[0], hashed.clone()),
            (Compression::Lz4, LAYOUTS[1], hashed),
        ] {
            let model = match base.data_block_index_type {
                DataBlockIndexType::BinaryAndHash => &internal,
                DataBlockIndexType::BinarySearch => &model,
            };
            let options = TableOptions {
                block_size: 512,
                compression,
                ..base
            };
            let options = with_layout(options, layout);
            let path = dir.path().join("t.sst");
            write_table(&path, model, options.clone());
            let good = std::fs::read(&path).unwrap();
            for i in 0..good.len() {
                let mut bytes = good.clone();
                bytes[i] ^= 1 << (i % 8);
                let result = Table::open(
                    Box::new(MemFile(bytes)),
                    Path::new("bad.sst"),
                    &reader::TableReadOptions::uncached(options.clone()),
                )
                .and_then(|t| Arc::new(t).verify());
                let err = result.expect_err(&format!("flip at {i} went unnoticed"));
                assert_eq!(err.kind(), ErrorKind::Corruption, "flip at {i}: {err}");
                assert!(err.to_string().contains("bad.sst"), "{err}");
            }
        }
    }

    /// A table built with a prefix extractor: its filter answers for every prefix of its
    /// keys (internal keys too, where the prefix is taken from the user key), rules out
    /// nearly every other prefix, and answers only a reader asking with the same extractor's
    /// name; a table without an extractor (or without a filter) never rules a prefix out.
    /// Point lookups keep their whole-key filter.
    #[test]
    fn prefix_filters_answer_only_for_their_extractor() {
        use crate::key::{append_internal_key, ValueKind};
        use crate::prefix::parse_prefix_extractor;
        let dir = tempfile::tempdir().unwrap();
        let ik = |k: &[u8], seq| {
            let mut v = Vec::new();
            append_internal_key(&mut v, k, seq, ValueKind::Put as u8);
            v
        };
        // Prefixes p000..p199 (3 keys and 2 versions each), and one key too short for fixed:4.
        let mut entries: Vec<Entry> = vec![(ik(b"abc", 1), b"short".to_vec())];
        for p in 0..200u32 {
            for k in 0..3u32 {
                for seq in [9, 3] {
                    let key = format!("p{p:03}-{k}").into_bytes();
                    entries.push((ik(&key, seq), format!("{p}{k}{seq}").into_bytes()));
                }
            }
        }
        let hash = |p: &str| filter::filter_hash(p.as_bytes());
        // (extractor the table is built with, bloom bits, asked with, prefix, answer)
        let cases: &[(Option<&str>, u32, &str, &str, bool)] = &[
            (Some("fixed:4"), 10, "fixed:4", "p007", true),
            (Some("fixed:4"), 10, "fixed:4", "p199", true),
            (Some("fixed:4"), 10, "fixed:4", "q000", false),
            (Some("fixed:4"), 10, "fixed:4", "p200", false),
            (Some("fixed:4"), 10, "capped:4", "q000", true), // another extractor: read it
            (Some("fixed:4"), 10, "", "q000", true),         // the reader has none
            (Some("fixed:4"), 0, "fixed:4", "q000", true),   // no filter at all
            (Some("capped:2"), 10, "capped:2", "p0", true),
            (Some("capped:2"), 10, "capped:2", "ab", true), // "abc" is in capped:2's domain
            (Some("capped:2"), 10, "capped:2", "zz", false),
            (None, 10, "fixed:4", "q000", true), // a table from before the extractor
        ];
        for (i, &(built, bits, asked, prefix, want)) in cases.iter().enumerate() {
            let options = TableOptions {
                bloom_bits_per_key: bits,
                prefix_extractor: built.map(|n| parse_prefix_extractor(n).unwrap()),
                ..TableOptions::for_internal_keys()
            };
            let t = table(
                &dir.path().join(format!("{i}.sst")),
                &entries,
                options,
                Caching::None,
            );
            let recorded = if bits > 0 { built.unwrap_or("") } else { "" };
            assert_eq!(t.properties().prefix_extractor, recorded, "case {i}");
            let got = t.may_contain_prefix(asked, hash(prefix)).unwrap();
            assert_eq!(
                got, want,
                "case {i}: {built:?} asked by {asked:?} for {prefix}"
            );
            // Whole keys still pass their filter.
            assert!(t.may_contain(b"p123-2").unwrap(), "case {i}");
        }
        // Over many absent prefixes the filter rules out nearly all (about 1% pass).
        let options = TableOptions {
            prefix_extractor: Some(parse_prefix_extractor("fixed:4").unwrap()),
            ..TableOptions::for_internal_keys()
        };
        let t = table(
            &dir.path().join("many.sst"),
            &entries,
            options,
            Caching::All,
        );
        let passed = (0..2000)
            .filter(|i| {
                t.may_contain_prefix("fixed:4", hash(&format!("x{i:03}")))
                    .unwrap()
            })
            .count();
        assert!(passed < 80, "{passed} of 2000 absent prefixes passed");
        assert!((0..200).all(|p| t
            .may_contain_prefix("fixed:4", hash(&format!("p{p:03}")))
            .unwrap()));
    }

    /// A table records its key order; a reader of another order refuses it by name, and a
    /// reader of the same order reads it.
    #[test]
    fn a_table_of_another_order_is_refused_naming_both() {
        use crate::comparator::KeyOrder;
        use block::BlockOrder;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let mut model = random_model(&mut Rng::new(3), 50);
        model.reverse();
        let reverse = TableOptions {
            comparator: BlockOrder::Plain(KeyOrder::Reverse),
            ..TableOptions::default()
        };
        write_table(&path, &model, reverse.clone());
        let err = open_table(&path, TableOptions::default(), Caching::None)
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
        let msg = err.to_string();
        for part in [
            "t.sst",
            "rocksdb.ReverseBytewiseComparator",
            "leveldb.BytewiseComparator",
        ] {
            assert!(msg.contains(part), "{msg} lacks {part}");
        }
        let table = open_table(&path, reverse, Caching::None).unwrap();
        assert_eq!(table.verify().unwrap(), model.len() as u64);
    }

    /// The comparator a table records is read from its properties alone (as tools do before
    /// choosing the order to open it in), and only the built-in names give read options.
    #[test]
    fn the_comparator_is_read_before_open_and_only_built_in_names_give_options() {
        use crate::comparator::KeyOrder;
        use crate::fs::FileSystem;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let reverse = TableOptions {
            comparator: block::BlockOrder::Plain(KeyOrder::Reverse),
            ..TableOptions::default()
        };
        let mut model = random_model(&mut Rng::new(4), 20);
        model.reverse();
        write_table(&path, &model, reverse);
        let file = crate::fs::PosixFs.open_random(&path).unwrap();
        let props = Table::read_properties(file.as_ref(), &path).unwrap();
        assert_eq!(props.comparator, crate::comparator::REVERSE_BYTEWISE_NAME);
        assert_eq!(props.entries, model.len() as u64);
        for (name, order) in [
            ("", Some(crate::comparator::BYTEWISE_NAME)),
            (
                crate::comparator::BYTEWISE_NAME,
                Some(crate::comparator::BYTEWISE_NAME),
            ),
            (
                crate::comparator::REVERSE_BYTEWISE_NAME,
                Some(crate::comparator::REVERSE_BYTEWISE_NAME),
            ),
            ("app.LengthFirst", None),
        ] {
            let options = TableOptions::for_internal_keys_named(name);
            let got = options.as_ref().map(|o| o.comparator.order().name());
            assert_eq!(got, order, "{name:?}");
            assert!(options.is_none_or(|o| matches!(o.comparator, block::BlockOrder::Internal(_))));
        }
        // A file too short to be a table is refused as at open.
        std::fs::write(&path, b"short").unwrap();
        let file = crate::fs::PosixFs.open_random(&path).unwrap();
        let err = Table::read_properties(file.as_ref(), &path).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
    }

    #[test]
    fn truncated_tables_are_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng::new(10);
        let model = random_model(&mut rng, 100);
        let path = dir.path().join("t.sst");
        let options = TableOptions::default();
        write_table(&path, &model, options.clone());
        let good = std::fs::read(&path).unwrap();
        for cut in [0, 1, 55, 56, good.len() / 2, good.len() - 1] {
            std::fs::write(&path, &good[..cut]).unwrap();
            let err = open_table(&path, options.clone(), Caching::None)
                .and_then(|t| t.verify())
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Corruption, "cut at {cut}: {err}");
        }
    }

    /// A table file in memory that counts the reads made of it, and notes whether one
    /// covered the byte at `watched`.
    struct CountedFile {
        bytes: Vec<u8>,
        reads: Arc<std::sync::atomic::AtomicUsize>,
        watched: usize,
        watched_read: Arc<std::sync::atomic::AtomicBool>,
    }

    impl crate::fs::RandomAccessFile for CountedFile {
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> crate::Result<()> {
            use std::sync::atomic::Ordering::Relaxed;
            self.reads.fetch_add(1, Relaxed);
            let at = offset as usize;
            if (at..at + buf.len()).contains(&self.watched) {
                self.watched_read.store(true, Relaxed);
            }
            buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
            Ok(())
        }
        fn size(&self) -> u64 {
            self.bytes.len() as u64
        }
    }

    impl CountedFile {
        /// `bytes` as a file that counts its reads and watches no byte.
        fn unwatched(bytes: Vec<u8>) -> CountedFile {
            CountedFile {
                bytes,
                reads: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
                watched: usize::MAX,
                watched_read: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            }
        }

        /// Opens this file as table `path` through a fresh 64 MiB block cache, and says how
        /// many reads the open made.
        fn open_cached(self, path: &Path, options: &TableOptions) -> (Arc<Table>, usize) {
            let reads = self.reads.clone();
            let read_options = reader::TableReadOptions {
                block_cache: Some(Arc::new(reader::new_block_cache(64 << 20, 16))),
                cache_id: 1,
                ..reader::TableReadOptions::uncached(options.clone())
            };
            let table = Arc::new(Table::open(Box::new(self), path, &read_options).unwrap());
            (table, reads.load(std::sync::atomic::Ordering::Relaxed))
        }
    }

    /// Scans read ahead: after a block read from the file, stepping on to the next block
    /// reads a window of adjacent blocks with one read (growing to 256 KiB), in both
    /// directions; every entry comes back once, in order. A damaged block inside a window is
    /// left out of it, so a scan that stops before it sees no error, and one that reaches it
    /// gets a corruption error naming the file, after exactly the entries before it. The
    /// same with a partitioned index, whose partitions the scan reads as it reaches them.
    #[test]
    fn scans_read_ahead_and_report_a_damaged_block_only_when_they_reach_it() {
        let two_level = (IndexType::TwoLevelIndexSearch, true, 1024);
        for layout in [LAYOUTS[0], two_level] {
            scans_read_ahead(layout);
        }
    }

    fn scans_read_ahead(layout: (IndexType, bool, usize)) {
        const N: usize = 3000;
        let model: Vec<Entry> = (0..N)
            .map(|i| {
                let value = format!("value{i:05}-").repeat(9);
                (format!("key{i:05}").into_bytes(), value.into_bytes())
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let options = TableOptions {
            block_size: 512,
            ..TableOptions::default()
        };
        let options = with_layout(options, layout);
        write_table(&path, &model, options.clone());
        let good = std::fs::read(&path).unwrap();
        let damaged_entry = 2000;
        let mut damaged = good.clone();
        let needle = format!("value{damaged_entry:05}-").into_bytes();
        let at = damaged
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap();
        damaged[at] ^= 1;

        struct Case {
            damaged: bool,
            reverse: bool,
            /// Entries read (all of them when `None`).
            limit: Option<usize>,
        }
        #[rustfmt::skip]
        let cases = [
            Case { damaged: false, reverse: false, limit: None },
            Case { damaged: false, reverse: true, limit: None },
            Case { damaged: true, reverse: false, limit: None },
            Case { damaged: true, reverse: true, limit: None },
            // Stop short of the damaged block, after reading the window that holds it.
            Case { damaged: true, reverse: false, limit: Some(1900) },
            Case { damaged: true, reverse: true, limit: Some(900) },
        ];
        for (i, case) in cases.iter().enumerate() {
            let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let watched_read = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let file = CountedFile {
                bytes: if case.damaged {
                    damaged.clone()
                } else {
                    good.clone()
                },
                reads: reads.clone(),
                watched: at,
                watched_read: watched_read.clone(),
            };
            let (table, reads_to_open) = file.open_cached(&path, &options);
            let mut it = table.iter();
            let mut seen = Vec::new();
            if case.reverse {
                it.seek_to_last();
            } else {
                it.seek_to_first();
            }
            while it.valid() && case.limit.is_none_or(|l| seen.len() < l) {
                seen.push((it.key().to_vec(), it.value().to_vec()));
                if case.reverse {
                    it.prev();
                } else {
                    it.next();
                }
            }
            if case.reverse {
                seen.reverse();
            }
            let expected: &[Entry] = match (case.damaged && case.limit.is_none(), case.reverse) {
                (false, false) => &model[..case.limit.unwrap_or(N)],
                (false, true) => &model[N - case.limit.unwrap_or(N)..],
                (true, false) => &model[..seen.len()],
                (true, true) => &model[N - seen.len()..],
            };
            assert!(seen == expected, "case {i}: entries differ from the model");
            if case.damaged && case.limit.is_none() {
                let err = it
                    .status()
                    .expect_err(&format!("case {i}: damage unnoticed"));
                assert_eq!(err.kind(), ErrorKind::Corruption, "case {i}: {err}");
                assert!(err.to_string().contains("t.sst"), "case {i}: {err}");
                // Only the damaged block is missing (a block holds a few entries).
                let before = if case.reverse {
                    N - damaged_entry - 1
                } else {
                    damaged_entry
                };
                assert!(
                    (before - 8..=before).contains(&seen.len()),
                    "case {i}: {}",
                    seen.len()
                );
            } else {
                it.status().unwrap();
                if case.damaged {
                    let read = watched_read.load(std::sync::atomic::Ordering::Relaxed);
                    assert!(read, "case {i}: the damaged block was not read ahead");
                }
                let blocks = good.len() / 512;
                let reads = reads.load(std::sync::atomic::Ordering::Relaxed) - reads_to_open;
                assert!(
                    reads < blocks / 20,
                    "case {i}: {reads} reads for {blocks} blocks"
                );
            }
        }
    }

    /// Every block a scan brings into the cache holds its own bytes and no more, whatever the
    /// compression, and whether it was read alone or in a readahead window: the cache charges
    /// a block for its bytes and evicts blocks one by one, so a block holding a larger buffer
    /// (the window it was read in, shared with its neighbours, or a decompression buffer
    /// allocated larger than the block) would keep memory the cache does not count.
    #[test]
    fn cached_blocks_hold_only_their_own_bytes() {
        const N: usize = 3000;
        let model: Vec<Entry> = (0..N)
            .map(|i| {
                (
                    format!("key{i:05}").into_bytes(),
                    format!("{i:x}").repeat(20).into(),
                )
            })
            .collect();
        let compressions = [
            Compression::None,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ];
        for compression in compressions {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.sst");
            let options = TableOptions {
                block_size: 512,
                compression,
                ..TableOptions::default()
            };
            write_table(&path, &model, options.clone());
            let file = CountedFile::unwatched(std::fs::read(&path).unwrap());
            let (table, _) = file.open_cached(&path, &options);
            // A whole scan: its first blocks are read alone, the rest in windows.
            let mut it = table.iter();
            it.seek_to_first();
            let mut seen = 0;
            while it.valid() {
                seen += 1;
                it.next();
            }
            it.status().unwrap();
            assert_eq!(seen, N, "{compression:?}");
            let mut index = partitioned::IndexIter::new(
                table.clone(),
                table.index_block().unwrap(),
                table.partitioned_index,
            );
            index.seek_to_first();
            let mut blocks = 0;
            while index.valid() {
                let handle = index.handle().unwrap();
                let block = table
                    .cached_data_block(handle)
                    .expect("a scanned block is cached");
                let (held, own) = (block.held_bytes(), block.bytes().len());
                assert!(
                    held <= own + format::BLOCK_TRAILER_LEN,
                    "{compression:?}: the block at {} holds {held} bytes for its {own}",
                    handle.offset
                );
                blocks += 1;
                index.next();
            }
            assert!(blocks > 100, "{compression:?}: {blocks} blocks");
        }
    }

    /// A fixed readahead (`ReadOptions::readahead_size`) reads that many bytes at a time from
    /// the first block a seek loads, in the seek's direction; without one the seek's block and
    /// the next are read alone, then windows of 16 KiB, doubling. An iterator that does not
    /// fill the cache reads the same windows into its own buffer and caches nothing.
    #[test]
    fn a_fixed_readahead_reads_its_size_from_the_seek_on() {
        const N: usize = 3000;
        let model: Vec<Entry> = (0..N)
            .map(|i| (format!("key{i:05}").into_bytes(), vec![b'v'; 90]))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let options = TableOptions {
            block_size: 512,
            ..TableOptions::default()
        };
        write_table(&path, &model, options.clone());
        let bytes = std::fs::read(&path).unwrap();
        // About 100 bytes an entry: 400 entries span about 40 KiB of blocks.
        struct Case {
            readahead: usize,
            reverse: bool,
            fill_cache: bool,
            reads: std::ops::RangeInclusive<usize>,
        }
        #[rustfmt::skip]
        let cases = [
            // Two blocks alone, then 16 KiB and 32 KiB windows.
            Case { readahead: 0, reverse: false, fill_cache: true, reads: 4..=4 },
            Case { readahead: 0, reverse: true, fill_cache: true, reads: 4..=4 },
            Case { readahead: 64 << 10, reverse: false, fill_cache: true, reads: 1..=1 },
            Case { readahead: 64 << 10, reverse: true, fill_cache: true, reads: 1..=1 },
            Case { readahead: 8 << 10, reverse: false, fill_cache: true, reads: 5..=7 },
            Case { readahead: 8 << 10, reverse: true, fill_cache: true, reads: 5..=7 },
            // The same windows, in the iterator's own buffer.
            Case { readahead: 0, reverse: false, fill_cache: false, reads: 4..=4 },
            Case { readahead: 0, reverse: true, fill_cache: false, reads: 4..=4 },
            Case { readahead: 64 << 10, reverse: false, fill_cache: false, reads: 1..=1 },
            Case { readahead: 64 << 10, reverse: true, fill_cache: false, reads: 1..=1 },
            Case { readahead: 8 << 10, reverse: false, fill_cache: false, reads: 5..=7 },
            Case { readahead: 8 << 10, reverse: true, fill_cache: false, reads: 5..=7 },
        ];
        for (i, case) in cases.iter().enumerate() {
            let file = CountedFile::unwatched(bytes.clone());
            let reads = file.reads.clone();
            let (table, reads_to_open) = file.open_cached(&path, &options);
            let block_reads = BlockReads {
                fill_cache: case.fill_cache,
                ..BlockReads::DEFAULT
            };
            let mut it = table.iter_for_read(case.readahead, block_reads);
            let start = 1500;
            if case.reverse {
                it.seek_for_prev(&model[start].0);
            } else {
                it.seek(&model[start].0);
            }
            let mut seen = Vec::new();
            while it.valid() && seen.len() < 400 {
                seen.push(it.key().to_vec());
                if case.reverse {
                    it.prev();
                } else {
                    it.next();
                }
            }
            it.status().unwrap();
            let expected: Vec<Vec<u8>> = match case.reverse {
                false => model[start..start + 400]
                    .iter()
                    .map(|e| e.0.clone())
                    .collect(),
                true => model[start - 399..=start]
                    .iter()
                    .rev()
                    .map(|e| e.0.clone())
                    .collect(),
            };
            assert!(seen == expected, "case {i}: entries differ from the model");
            let reads = reads.load(std::sync::atomic::Ordering::Relaxed) - reads_to_open;
            assert!(case.reads.contains(&reads), "case {i}: {reads} reads");
            let last = it.current_block_offset().expect("on a block");
            let handle = format::BlockHandle {
                offset: last,
                size: 0,
            };
            let cached = table.cached_data_block(handle).is_some();
            assert_eq!(
                cached, case.fill_cache,
                "case {i}: the last block's caching"
            );
        }
    }
}
