//! Sorted tables (SSTs): immutable files of sorted key-value entries.
//!
//! File layout (on disk; each block framed as in [`format`]):
//!
//! ```text
//! data block*         entries in key order, ~block_size bytes each, compressed per block
//! filter block        bloom filter over filter keys (absent when bits_per_key is 0)
//! range-del block     range tombstones (absent without any; see `range_del`)
//! properties block    counts and sizes, name -> value
//! meta-index block    "strata.filter" / "strata.properties" / "strata.range_del" -> handle
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

pub mod block;
pub mod builder;
pub mod data_block_hash;
pub mod filter;
pub mod format;
pub mod iter;
pub mod partitioned;
pub mod pinned;
pub mod properties;
pub mod range_del;
pub mod reader;

use std::sync::Arc;

use crate::prefix::PrefixExtractor;
pub use builder::TableBuilder;
pub use format::Compression;
pub use pinned::PinnedValue;

pub use reader::Table;

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
mod tests;
