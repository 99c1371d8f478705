//! Table options (RocksDB's `BlockBasedTableOptions`, and the column family fields that
//! shape tables): block size and restart points, the block cache and what it holds
//! ([`PrepopulateBlockCache`]), bloom and prefix filters, the index and its partitions, the
//! data block hash index, the table cache; and the `TableOptions` a table is written with.

use super::Options;
use crate::comparator::KeyOrder;
use crate::error::{Error, Result};
use crate::table::{DataBlockIndexType, IndexType, TableOptions};

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

impl Options {
    /// Checks the options of blocks, filters, indexes and the table cache.
    pub(super) fn validate_table(&self) -> Result<()> {
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

    /// The options of the tables this database writes into level 0 (flushes, ingestion),
    /// or into the bottommost level when `bottommost`.
    pub(crate) fn table_options(&self, bottommost: bool) -> TableOptions {
        self.table_options_at(0, bottommost)
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
}
