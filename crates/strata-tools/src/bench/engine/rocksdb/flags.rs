//! RocksDB's options for the bench flags: each flag set as RocksDB's option of the same name,
//! as db_bench sets it; and RocksDB's version, read back from the OPTIONS file it writes.

use std::path::Path;

use rocksdb::merge_operator::MergeOperands;
use rocksdb::statistics::StatsLevel;
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ChecksumType, DBCompactionStyle,
    DBCompressionType, FifoCompactOptions, Options, SliceTransform, UniversalCompactOptions,
};

use crate::bench::engine::EngineResult;
use crate::bench::BenchArgs;

fn int(v: usize, flag: &str) -> EngineResult<i32> {
    i32::try_from(v).map_err(|_| format!("{flag}={v} is too large for RocksDB").into())
}

/// RocksDB's options for the bench flags.
pub(super) fn options(args: &BenchArgs) -> EngineResult<Options> {
    // The rocksdb crate has no setter for `avoid_flush_during_recovery`: it is set through
    // RocksDB's options string, into options that nothing has been given to keep alive yet.
    let mut o = match args.options.avoid_flush_during_recovery {
        true => Options::default()
            .get_options_from_string("avoid_flush_during_recovery=true")
            .map_err(|e| format!("--avoid_flush_during_recovery: {e}"))?,
        false => Options::default(),
    };
    o.create_if_missing(!args.use_existing_db);
    if args.prefix_size > 0 {
        o.set_prefix_extractor(SliceTransform::create_fixed_prefix(args.prefix_size));
    }
    // `--merge_operator`: Strata's operator, called through the C API's callbacks (db_bench
    // uses RocksDB's own C++ operators of the same names and meaning).
    if let Some(op) = crate::engine_flags::merge_operator(&args.options.merge_operator)? {
        let name = op.name().to_string();
        let full = op.clone();
        let partial = op;
        o.set_merge_operator(
            name.as_str(),
            move |key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands| {
                let operands: Vec<&[u8]> = operands.iter().collect();
                full.full_merge(key, existing, &operands).ok()
            },
            move |key: &[u8], _: Option<&[u8]>, operands: &MergeOperands| {
                let operands: Vec<&[u8]> = operands.iter().collect();
                partial.partial_merge(key, &operands)
            },
        );
    }
    o.set_write_buffer_size(args.options.write_buffer_size);
    o.set_max_write_buffer_number(int(
        args.options.max_write_buffer_number,
        "--max_write_buffer_number",
    )?);
    o.set_memtable_prefix_bloom_ratio(args.options.memtable_bloom_size_ratio);
    o.set_memtable_whole_key_filtering(args.options.memtable_whole_key_filtering);
    let compression = match args.options.compression_type.as_str() {
        "none" => DBCompressionType::None,
        "snappy" => DBCompressionType::Snappy,
        "lz4" => DBCompressionType::Lz4,
        "zstd" => DBCompressionType::Zstd,
        other => return Err(format!("--compression_type={other} is not supported").into()),
    };
    o.set_compression_type(compression);
    // db_bench's --compression_level and --compression_max_dict_bytes (window bits and
    // strategy at RocksDB's defaults), and --compression_zstd_max_train_bytes.
    o.set_compression_options(
        -14,
        args.options.compression_level,
        0,
        int(
            args.options.compression_max_dict_bytes as usize,
            "--compression_max_dict_bytes",
        )?,
    );
    o.set_zstd_max_train_bytes(int(
        args.options.compression_zstd_max_train_bytes as usize,
        "--compression_zstd_max_train_bytes",
    )?);
    // Strata compresses blob files as its tables: so does RocksDB here (db_bench's own
    // --blob_compression_type defaults to none).
    o.set_blob_compression_type(compression);
    o.set_target_file_size_base(args.options.target_file_size_base);
    o.set_max_bytes_for_level_base(args.options.max_bytes_for_level_base);
    o.set_max_bytes_for_level_multiplier(args.options.max_bytes_for_level_multiplier);
    o.set_level_compaction_dynamic_level_bytes(true);
    o.set_num_levels(int(args.options.num_levels, "--num_levels")?);
    o.set_level_zero_file_num_compaction_trigger(int(
        args.options.level0_file_num_compaction_trigger,
        "--level0_file_num_compaction_trigger",
    )?);
    o.set_level_zero_slowdown_writes_trigger(int(
        args.options.level0_slowdown_writes_trigger,
        "--level0_slowdown_writes_trigger",
    )?);
    o.set_level_zero_stop_writes_trigger(int(
        args.options.level0_stop_writes_trigger,
        "--level0_stop_writes_trigger",
    )?);
    o.set_disable_auto_compactions(args.options.disable_auto_compactions);
    o.set_max_open_files(i32::try_from(args.options.open_files.max(-1)).unwrap_or(i32::MAX));
    o.set_use_direct_reads(args.options.use_direct_reads);
    o.set_use_direct_io_for_flush_and_compaction(
        args.options.use_direct_io_for_flush_and_compaction,
    );
    o.set_compaction_readahead_size(args.options.compaction_readahead_size);
    o.set_allow_mmap_reads(args.options.mmap_read);
    o.create_missing_column_families(true);
    o.set_compaction_style(match args.options.compaction_style {
        0 => DBCompactionStyle::Level,
        1 => DBCompactionStyle::Universal,
        2 => DBCompactionStyle::Fifo,
        other => {
            return Err(format!(
                "--compaction_style={other} is not supported (0 = leveled, 1 = universal, \
                 2 = FIFO)"
            )
            .into())
        }
    });
    // FIFO as db_bench sets it (the crate has no setter for allow_compaction: RocksDB's
    // default, false, stays), and the ages: db_bench's --fifo_compaction_ttl is `ttl`.
    let mut fifo = FifoCompactOptions::default();
    fifo.set_max_table_files_size(
        args.options
            .fifo_compaction_max_table_files_size_mb
            .saturating_mul(1 << 20),
    );
    o.set_fifo_compaction_options(&fifo);
    if args.options.fifo_compaction_ttl > 0 {
        o.set_ttl(args.options.fifo_compaction_ttl);
    }
    if args.options.periodic_compaction_seconds > 0 {
        o.set_periodic_compaction_seconds(args.options.periodic_compaction_seconds);
    }
    let mut universal = UniversalCompactOptions::default();
    universal.set_size_ratio(args.options.universal_size_ratio as i32);
    universal.set_min_merge_width(int(
        args.options.universal_min_merge_width,
        "--universal_min_merge_width",
    )?);
    if args.options.universal_max_merge_width > 0 {
        universal.set_max_merge_width(int(
            args.options.universal_max_merge_width,
            "--universal_max_merge_width",
        )?);
    }
    universal.set_max_size_amplification_percent(
        args.options.universal_max_size_amplification_percent as i32,
    );
    o.set_universal_compaction_options(&universal);
    o.set_max_background_jobs(int(
        args.options.max_background_jobs,
        "--max_background_jobs",
    )?);
    o.set_max_subcompactions(args.options.max_subcompactions as u32);
    if args.options.rate_limiter_bytes_per_sec > 0 {
        // RocksDB's defaults for the refill period (100 ms) and fairness (10).
        let rate = args.options.rate_limiter_bytes_per_sec;
        if rate > i64::MAX as u64 {
            return Err(
                format!("--rate_limiter_bytes_per_sec={rate} is too large for RocksDB").into(),
            );
        }
        o.set_ratelimiter(rate as i64, 100_000, 10);
    }
    o.set_db_write_buffer_size(args.options.db_write_buffer_size);
    o.set_max_total_wal_size(args.options.max_total_wal_size);
    o.set_manual_wal_flush(args.options.manual_wal_flush);
    match args.options.wal_compression.as_str() {
        "none" => {}
        "zstd" => o.set_wal_compression_type(DBCompressionType::Zstd),
        other => {
            return Err(format!(
                "--wal_compression={other}: RocksDB compresses its WAL with zstd only"
            )
            .into())
        }
    }
    if args.options.max_compaction_bytes > 0 {
        o.set_max_compaction_bytes(args.options.max_compaction_bytes);
    }
    o.set_soft_pending_compaction_bytes_limit(
        args.options.soft_pending_compaction_bytes_limit as usize,
    );
    o.set_hard_pending_compaction_bytes_limit(
        args.options.hard_pending_compaction_bytes_limit as usize,
    );
    o.set_enable_blob_files(args.options.enable_blob_files);
    o.set_min_blob_size(args.options.min_blob_size);
    o.set_blob_file_size(args.options.blob_file_size);
    o.set_enable_blob_gc(args.options.enable_blob_garbage_collection);
    o.set_blob_gc_age_cutoff(args.options.blob_garbage_collection_age_cutoff);
    o.set_blob_gc_force_threshold(args.options.blob_garbage_collection_force_threshold);

    let mut table = BlockBasedOptions::default();
    table.set_block_size(args.options.block_size);
    // db_bench's --checksum_type (1 kCRC32c, 4 kXXH3; the flag parser takes no other).
    table.set_checksum_type(match args.options.checksum_type {
        strata::ChecksumType::Xxh3 => ChecksumType::XXH3,
        _ => ChecksumType::CRC32c,
    });
    table.set_block_restart_interval(args.options.block_restart_interval as i32);
    if args.options.cache_size > 0 {
        table.set_block_cache(&Cache::new_lru_cache(args.options.cache_size as usize));
    } else {
        table.disable_cache();
    }
    table.set_cache_index_and_filter_blocks(args.options.cache_index_and_filter_blocks);
    // db_bench's partition flags: --partition_index_and_filters sets the two-level index
    // and partitioned filters, --partition_index the two-level index alone.
    if args.options.partition_index || args.options.partition_index_and_filters {
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    }
    table.set_partition_filters(args.options.partition_index_and_filters);
    table.set_metadata_block_size(args.options.metadata_block_size);
    table.set_pin_top_level_index_and_filter(args.options.pin_top_level_index_and_filter);
    // db_bench's --data_block_index_type (1: kDataBlockBinaryAndHash) and its ratio.
    if args.options.data_block_index_type == strata::DataBlockIndexType::BinaryAndHash {
        table.set_data_block_index_type(rocksdb::DataBlockIndexType::BinaryAndHash);
        table.set_data_block_hash_ratio(args.options.data_block_hash_table_util_ratio);
    }
    table.set_pin_l0_filter_and_index_blocks_in_cache(
        args.options.pin_l0_filter_and_index_blocks_in_cache,
    );
    if args.options.bloom_bits > 0 {
        table.set_bloom_filter(args.options.bloom_bits as f64, false);
    }
    o.set_block_based_table_factory(&table);

    o.enable_statistics();
    // --statistics prints the histograms, which need the operations timed.
    o.set_statistics_level(match args.statistics {
        true => StatsLevel::ExceptDetailedTimers,
        false => StatsLevel::ExceptHistogramOrTimers,
    });
    Ok(o)
}

/// RocksDB's version, from the OPTIONS file it writes at open (`rocksdb_version=11.8.1`).
pub(super) fn version_of(path: &Path) -> Option<String> {
    std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .find_map(|text| {
            text.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("rocksdb_version=")
                    .map(str::to_string)
            })
        })
}
