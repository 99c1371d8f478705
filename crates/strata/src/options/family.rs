//! Column family options: [`CfOptions`] holds the fields of [`Options`] that each family sets
//! for itself, declared once with the conversions between the two structs.

use std::sync::Arc;
use std::time::Duration;

use super::Options;
use crate::compaction::{CompactionStyle, FifoOptions, UniversalOptions};
use crate::compaction_filter::CompactionFilter;
use crate::comparator::Comparator;
use crate::merge::MergeOperator;
use crate::prefix::PrefixExtractor;
use crate::table::collector::TablePropertiesCollectorFactory;
use crate::table::{ChecksumType, Compression, CompressionOptions, DataBlockIndexType, IndexType};

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
    /// See [`Options::memtable_point_index_ratio`].
    memtable_point_index_ratio: f64,
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
