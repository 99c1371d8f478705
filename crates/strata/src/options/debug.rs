//! How [`Options`] prints: every field by name, in the order of the struct, so that a log
//! line or a test failure shows the whole configuration. Kept apart from the struct, whose
//! file is the list of fields, their defaults and the checks.

use std::fmt;

use super::Options;

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
                "memtable_point_index_ratio",
                &self.memtable_point_index_ratio,
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
            .field(
                "avoid_flush_during_recovery",
                &self.avoid_flush_during_recovery,
            )
            .field("manual_wal_flush", &self.manual_wal_flush)
            .field("wal_compression", &self.wal_compression)
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
