//! Options for opening a database and creating column families (the read and write
//! options are in rw_options.rs).
//!
//! `strata_options_t` holds both the database's options and the column family fields (as
//! RocksDB's `rocksdb_options_t`): passed to `strata_create_column_family`, its family fields
//! are the new family's. A setter given a null handle does nothing; a bad value is reported
//! by the open or creation that uses it, naming the option.

use std::ffi::{c_int, c_uchar};

use strata::{
    CompactionStyle, Compression, DataBlockIndexType, IndexType, Options, PrepopulateBlockCache,
    WalRecoveryMode,
};

use crate::error::guard_quiet;
use crate::{into_handle, release};

/// Options for opening a database and for new column families.
pub struct strata_options_t {
    pub(crate) options: Options,
}

/// Applies `set` to the options behind `opt`; a null handle is ignored.
///
/// # Safety
/// `opt` must be null or a live handle not used by another thread during the call.
pub(crate) unsafe fn update(opt: *mut strata_options_t, set: impl FnOnce(&mut Options)) {
    // SAFETY: the caller promises a live, unshared handle or null.
    if let Some(o) = unsafe { opt.as_mut() } {
        guard_quiet((), || set(&mut o.options));
    }
}

/// Applies `set` with the value `known` names, if it names one: the setters of enumerations
/// leave the setting unchanged for a number outside them.
///
/// # Safety
/// As for [`update`].
pub(crate) unsafe fn update_if_known<T>(
    opt: *mut strata_options_t,
    known: Option<T>,
    set: impl FnOnce(&mut Options, T),
) {
    if let Some(value) = known {
        // SAFETY: the pointers are as the function's `# Safety` section requires.
        unsafe { update(opt, |o| set(o, value)) }
    }
}

/// New options with Strata's defaults.
#[no_mangle]
pub extern "C" fn strata_options_create() -> *mut strata_options_t {
    into_handle(strata_options_t {
        options: Options::default(),
    })
}

/// Releases options from `strata_options_create`.
///
/// # Safety
/// `opt` must be null or a handle from `strata_options_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_options_destroy(opt: *mut strata_options_t) {
    // SAFETY: forwarded from the caller.
    unsafe { release(opt) }
}

/// Create the database if it does not exist (0 or 1).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_create_if_missing(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.create_if_missing = v != 0) }
}

/// Fail to open if the database exists (0 or 1).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_error_if_exists(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.error_if_exists = v != 0) }
}

/// Create the column families named to `strata_open_column_families` that do not exist yet
/// (0 or 1).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_create_missing_column_families(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.create_missing_column_families = v != 0) }
}

/// Bytes of a memtable before it is flushed (at least 4096).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_write_buffer_size(
    opt: *mut strata_options_t,
    v: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.write_buffer_size = v) }
}

/// Memtables (active and immutable) held before writes wait for a flush.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_max_write_buffer_number(
    opt: *mut strata_options_t,
    v: c_int,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.max_write_buffer_number = v.max(0) as usize) }
}

/// Each memtable's bloom filter over its keys, as a fraction of the write buffer size (0 to
/// 0.25; 0 keeps none). Used with `memtable_whole_key_filtering`.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_memtable_prefix_bloom_size_ratio(
    opt: *mut strata_options_t,
    v: f64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.memtable_prefix_bloom_size_ratio = v) }
}

/// Each memtable's point index (a hash index of its keys that gets use instead of a search),
/// as a fraction of the write buffer size (0 to 0.5; 0 keeps none; default 0.125).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_memtable_point_index_ratio(
    opt: *mut strata_options_t,
    v: f64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.memtable_point_index_ratio = v) }
}

/// Put whole keys in the memtables' bloom filters, so that gets skip memtables without the key.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_memtable_whole_key_filtering(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.memtable_whole_key_filtering = v != 0) }
}

/// Target size of table data blocks, in bytes.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_block_size(opt: *mut strata_options_t, v: usize) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.block_size = v) }
}

/// How far short of the block size (percent, at most 100) a data block may be cut to keep
/// its next entry from taking it past that size (`block_size_deviation`; 10 by default).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_block_size_deviation(
    opt: *mut strata_options_t,
    v: u32,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.block_size_deviation = v) }
}

/// Bloom filter bits per key in tables; 0 builds no filters.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_bloom_bits_per_key(
    opt: *mut strata_options_t,
    v: c_int,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.bloom_bits_per_key = v.max(0) as u32) }
}

/// The compression RocksDB's C API numbers `v` (0 none, 1 snappy, 4 lz4, 7 zstd), if any.
pub(crate) fn compression_of(v: c_int) -> Option<Compression> {
    match v {
        0 => Some(Compression::None),
        1 => Some(Compression::Snappy),
        4 => Some(Compression::Lz4),
        7 => Some(Compression::Zstd),
        _ => None,
    }
}

/// Compression of table blocks, numbered as RocksDB's C API: 0 none, 1 snappy, 4 lz4,
/// 7 zstd. Another number leaves the setting unchanged.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_compression(opt: *mut strata_options_t, v: c_int) {
    let compression = compression_of(v);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, compression, |o, value| o.compression = value) }
}

/// Key-value separation (RocksDB's `rocksdb_options_set_enable_blob_files`): values of at
/// least the minimum blob size go to blob files, the tables keep references.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_enable_blob_files(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.enable_blob_files = v != 0) }
}

/// The smallest value kept in a blob file, in bytes.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_min_blob_size(opt: *mut strata_options_t, v: u64) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.min_blob_size = v) }
}

/// With blob files on, writes put large values straight into blob files and the WAL records
/// their references, so that each value is written once.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_blob_separation_at_write(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.blob_separation_at_write = v != 0) }
}

/// Blob files are cut at this many bytes.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_blob_file_size(opt: *mut strata_options_t, v: u64) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.blob_file_size = v) }
}

/// Blob garbage collection: compactions move the live values out of the oldest blob files.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_enable_blob_garbage_collection(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.enable_blob_garbage_collection = v != 0) }
}

/// The oldest fraction of the blob files garbage collection moves values out of (0 to 1).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_blob_garbage_collection_age_cutoff(
    opt: *mut strata_options_t,
    v: f64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.blob_garbage_collection_age_cutoff = v) }
}

/// The garbage fraction of the oldest blob files at which the tables referring to the oldest
/// one are compacted (0 to 1; 1 turns it off).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_blob_garbage_collection_force_threshold(
    opt: *mut strata_options_t,
    v: f64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.blob_garbage_collection_force_threshold = v) }
}

/// The layout of each table's index, numbered as RocksDB's C API
/// (`rocksdb_block_based_options_set_index_type`): 0 one index block (binary search), 2
/// index partitions under a top-level index (two-level index search). Another number
/// leaves the setting unchanged.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_index_type(opt: *mut strata_options_t, v: c_int) {
    let index_type = match v {
        0 => Some(IndexType::BinarySearch),
        2 => Some(IndexType::TwoLevelIndexSearch),
        _ => None,
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, index_type, |o, value| o.index_type = value) }
}

/// How a point lookup finds its entry in a data block, numbered as RocksDB's C API
/// (`rocksdb_block_based_options_set_data_block_index_type`): 0 a binary search of the
/// block's restart points, 1 a hash index of the block's user keys beside it (binary and
/// hash; refused at open with an application's comparator). Another number leaves the
/// setting unchanged.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_data_block_index_type(
    opt: *mut strata_options_t,
    v: c_int,
) {
    let index_type = match v {
        0 => Some(DataBlockIndexType::BinarySearch),
        1 => Some(DataBlockIndexType::BinaryAndHash),
        _ => None,
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, index_type, |o, value| o.data_block_index_type = value) }
}

/// With the data-block hash index, user keys per bucket of each data block's hash index
/// (RocksDB's `rocksdb_block_based_options_set_data_block_hash_ratio`; 0.75 by default;
/// above 0, or the open that uses it is refused).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_data_block_hash_table_util_ratio(
    opt: *mut strata_options_t,
    v: f64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.data_block_hash_table_util_ratio = v) }
}

/// Cut each table's filter into partitions where its index partitions are cut (0 or 1);
/// needs the two-level index, and the open that uses it is refused otherwise.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_partition_filters(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.partition_filters = v != 0) }
}

/// Target size of index and filter partitions, in bytes.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_metadata_block_size(
    opt: *mut strata_options_t,
    v: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.metadata_block_size = v) }
}

/// Nonzero (the default): compactions put in the block cache the data blocks they write from
/// input blocks that readers found there (`warm_compaction_outputs`).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_warm_compaction_outputs(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.warm_compaction_outputs = v != 0) }
}

/// How hard to erase a deleted table's blocks from the block cache
/// (`uncache_aggressiveness`, RocksDB's meaning): 0 never; N erases while at least
/// 0.99^(N-1) of the blocks tried were cached. Default 300.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_uncache_aggressiveness(
    opt: *mut strata_options_t,
    v: u32,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.uncache_aggressiveness = v) }
}

/// Which tables' data blocks are put in the block cache as they are written, numbered as
/// RocksDB's `PrepopulateBlockCache`: 0 none, 1 those flushes write. Another number leaves
/// the setting unchanged.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_prepopulate_block_cache(
    opt: *mut strata_options_t,
    v: c_int,
) {
    let setting = match v {
        0 => Some(PrepopulateBlockCache::Disable),
        1 => Some(PrepopulateBlockCache::FlushOnly),
        _ => None,
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, setting, |o, value| o.prepopulate_block_cache = value) }
}

/// What opening does with a bad WAL record, numbered as RocksDB's `WALRecoveryMode`: 0
/// (`kTolerateCorruptedTailRecords`) drops a torn tail of the newest WAL only and refuses
/// damage elsewhere, syncing each WAL as a memtable switch closes it; 2
/// (`kPointInTimeRecovery`, the default) keeps what precedes the first bad record of any WAL,
/// and with one column family leaves a closed WAL unsynced until a synced write needs it.
/// Another number leaves the setting unchanged.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_wal_recovery_mode(
    opt: *mut strata_options_t,
    v: c_int,
) {
    let mode = match v {
        0 => Some(WalRecoveryMode::TolerateCorruptedTail),
        2 => Some(WalRecoveryMode::PointInTime),
        _ => None,
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, mode, |o, value| o.wal_recovery_mode = value) }
}

/// Hold each write's WAL record in memory (RocksDB's `manual_wal_flush`; 0 or 1, 0 by
/// default) until `strata_flush_wal`, a synced write or `strata_sync_wal`, a memtable
/// switch, a checkpoint or backup, a megabyte of them, or close: a write then makes no
/// system call, and a killed process loses the writes still held (what it leaves is a
/// prefix of the writes).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_manual_wal_flush(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.manual_wal_flush = v != 0) }
}

/// Compression of WAL records (RocksDB's `rocksdb_options_set_wal_compression`), numbered
/// as table compression: 0 none (the default), 1 snappy, 4 lz4, 7 zstd. A record is stored
/// compressed when that saves an eighth of it; every reader of the WAL undoes it. Another
/// number leaves the setting unchanged.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_wal_compression(opt: *mut strata_options_t, v: c_int) {
    let compression = compression_of(v);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, compression, |o, value| o.wal_compression = value) }
}

/// Keep tables' index and filter blocks in the block cache, charged and evicted like data
/// blocks, instead of pinned with each open table (0 or 1; 0 by default).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_cache_index_and_filter_blocks(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.cache_index_and_filter_blocks = v != 0) }
}

/// With index and filter blocks in the block cache, keep the top-level blocks of
/// partitioned tables with the open table (0 or 1; 1 by default).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_pin_top_level_index_and_filter(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.pin_top_level_index_and_filter = v != 0) }
}

/// With index and filter blocks in the block cache, keep those of level-0 tables with the
/// open table (0 or 1; 0 by default).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_pin_l0_filter_and_index_blocks_in_cache(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.pin_l0_filter_and_index_blocks_in_cache = v != 0) }
}

/// Bytes of the shared block cache; 0 disables it.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_block_cache_size(opt: *mut strata_options_t, v: usize) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.block_cache_size = v) }
}

/// The most table files held open at once; -1 (any negative value), as in RocksDB, keeps
/// every table open once read. 0 is refused at open.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_max_open_files(opt: *mut strata_options_t, v: c_int) {
    let files = usize::try_from(v).unwrap_or(Options::UNLIMITED_OPEN_FILES);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.max_open_files = files) }
}

/// Read tables and blob files for user reads with direct IO (O_DIRECT), around the page
/// cache. An open on a file system without direct IO fails naming the option.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_use_direct_reads(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.use_direct_reads = v != 0) }
}

/// Write flush and compaction outputs, and read compaction inputs, with direct IO.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_use_direct_io_for_flush_and_compaction(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.use_direct_io_for_flush_and_compaction = v != 0) }
}

/// Read tables and blob files through read-only memory mappings (not with direct reads).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_allow_mmap_reads(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.allow_mmap_reads = v != 0) }
}

/// Bytes a compaction reads ahead in each input table when it reads with direct IO.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_compaction_readahead_size(
    opt: *mut strata_options_t,
    v: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.compaction_readahead_size = v) }
}

/// Background threads: one flushes, the others compact.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_max_background_jobs(
    opt: *mut strata_options_t,
    v: c_int,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.max_background_jobs = v.max(0) as usize) }
}

/// L0 files that trigger a compaction.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_level0_file_num_compaction_trigger(
    opt: *mut strata_options_t,
    v: c_int,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(opt, |o| {
            o.level0_file_num_compaction_trigger = v.max(0) as usize
        })
    }
}

/// The smallest target size of the base level, in bytes.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_max_bytes_for_level_base(
    opt: *mut strata_options_t,
    v: u64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.max_bytes_for_level_base = v) }
}

/// Size at which compaction outputs are cut, in bytes.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_target_file_size_base(
    opt: *mut strata_options_t,
    v: u64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.target_file_size_base = v) }
}

/// Levels of the tree, 2 to 7.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_num_levels(opt: *mut strata_options_t, v: c_int) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.num_levels = v.max(0) as usize) }
}

/// Run no compaction in the background (0 or 1).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_disable_auto_compactions(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.disable_auto_compactions = v != 0) }
}

/// Leveled: merge L0 into the level below once reads have spent on its files about what the
/// merge costs, below the file-count trigger (0 or 1; default 1).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_read_triggered_compaction(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.read_triggered_compaction = v != 0) }
}

/// Compaction style, numbered as RocksDB's C API: 0 leveled, 1 universal. Another number
/// leaves the setting unchanged.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_compaction_style(opt: *mut strata_options_t, v: c_int) {
    let style = match v {
        0 => Some(CompactionStyle::Leveled),
        1 => Some(CompactionStyle::Universal),
        _ => None,
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, style, |o, value| o.compaction_style = value) }
}

/// Keep WALs no longer needed for recovery this many seconds, in the database's `archive/`
/// directory, for the change feed (`strata_get_updates_since`; RocksDB's
/// `WAL_ttl_seconds`). 0, with `strata_options_set_WAL_size_limit_MB` 0 (the default),
/// keeps none.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn strata_options_set_WAL_ttl_seconds(opt: *mut strata_options_t, v: u64) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.wal_ttl_seconds = v) }
}

/// Keep archived WALs (see `strata_options_set_WAL_ttl_seconds`) up to this many MiB in
/// all, the oldest going first (RocksDB's `WAL_size_limit_MB`); 0: no size limit.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
#[allow(non_snake_case)]
pub unsafe extern "C" fn strata_options_set_WAL_size_limit_MB(opt: *mut strata_options_t, v: u64) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.wal_size_limit_mb = v) }
}
