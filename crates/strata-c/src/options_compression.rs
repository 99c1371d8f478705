//! Compression and checksum choices of `strata_options_t`, named as RocksDB's C API:
//! per-level compression, the compressor's level and zstd dictionary
//! (`rocksdb_options_set_compression_options`), the bottommost level's own compression and
//! options, and the block checksum (`rocksdb_block_based_options_set_checksum`, flattened
//! onto the options here as every table option is).
//!
//! Numbers are RocksDB's: compressions 0 none, 1 snappy, 4 lz4, 7 zstd; checksums 1 crc32c,
//! 4 xxh3. A setter given a number outside them leaves the setting unchanged, as the other
//! setters of enumerations do (they have no `errptr`); a negative byte count is taken as 0.

use std::ffi::{c_char, c_int, c_uchar};

use strata::{ChecksumType, Compression, CompressionOptions};

use crate::options::{compression_of, update, update_if_known};
use crate::strata_options_t;

/// A byte count C passed as an `int`: a negative one is 0.
fn byte_count(v: c_int) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// Compression of the tables written into the last level, numbered as
/// `strata_options_set_compression`; -1 (RocksDB's `kDisableCompressionOption`) takes
/// `compression` (or `compression_per_level`) there too. Another number leaves the setting
/// unchanged.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_bottommost_compression(
    opt: *mut strata_options_t,
    v: c_int,
) {
    let bottommost = match v {
        -1 => Some(None),
        _ => compression_of(v).map(Some),
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, bottommost, |o, value| o.bottommost_compression = value) }
}

/// The compression of each level's tables (RocksDB's `compression_per_level`):
/// `level_values[L]` for level L (the last for the levels beyond), numbered as
/// `strata_options_set_compression`; 0 levels goes back to `compression` everywhere. A
/// number outside the known ones, or a null `level_values` with a non-zero `num_levels`,
/// leaves the setting unchanged.
///
/// # Safety
/// `opt` must be null or a live handle; `level_values` null or `num_levels` readable ints.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_compression_per_level(
    opt: *mut strata_options_t,
    level_values: *const c_int,
    num_levels: usize,
) {
    // SAFETY: the caller promises `num_levels` ints at a non-null `level_values`.
    let levels = unsafe { crate::array(level_values, num_levels, "level_values", "levels") }
        .ok()
        .and_then(|values| values.iter().map(|&v| compression_of(v)).collect());
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update_if_known(opt, levels, |o, levels: Vec<Compression>| {
            o.compression_per_level = levels
        })
    }
}

/// Options of `compression` (RocksDB's `rocksdb_options_set_compression_options`): the
/// compressor's `level` (32767, RocksDB's `kDefaultCompressionLevel`, for its default) and
/// `max_dict_bytes`, the size of the zstd dictionary each table is compressed with (0: none).
/// `w_bits` and `strategy` are zlib's, which Strata does not have: they are ignored. A level
/// the compressor does not have is refused by the open.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_compression_options(
    opt: *mut strata_options_t,
    w_bits: c_int,
    level: c_int,
    strategy: c_int,
    max_dict_bytes: c_int,
) {
    let _zlib_only = (w_bits, strategy);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(opt, |o| {
            set_level_and_dict(&mut o.compression_opts, level, max_dict_bytes)
        })
    }
}

/// Bytes of samples the zstd dictionary of `compression` is trained on (RocksDB's
/// `rocksdb_options_set_compression_options_zstd_max_train_bytes`); 0 takes the first
/// `max_dict_bytes` of a table's data as the dictionary, untrained.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_compression_options_zstd_max_train_bytes(
    opt: *mut strata_options_t,
    zstd_max_train_bytes: c_int,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(opt, |o| {
            o.compression_opts.zstd_max_train_bytes = byte_count(zstd_max_train_bytes)
        })
    }
}

/// The options of the bottommost level's compression, as
/// `strata_options_set_compression_options` (RocksDB's
/// `rocksdb_options_set_bottommost_compression_options`); `enabled` 0 compresses the
/// bottommost level under `compression`'s options instead. Used only with
/// `strata_options_set_bottommost_compression`.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_bottommost_compression_options(
    opt: *mut strata_options_t,
    w_bits: c_int,
    level: c_int,
    strategy: c_int,
    max_dict_bytes: c_int,
    enabled: c_uchar,
) {
    let _zlib_only = (w_bits, strategy);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(opt, |o| {
            let bottommost = bottommost_options(&mut o.bottommost_compression_opts);
            set_level_and_dict(bottommost, level, max_dict_bytes);
            if enabled == 0 {
                o.bottommost_compression_opts = None;
            }
        })
    }
}

/// Bytes of samples the bottommost level's zstd dictionary is trained on (RocksDB's
/// `rocksdb_options_set_bottommost_compression_options_zstd_max_train_bytes`); `enabled` as
/// for `strata_options_set_bottommost_compression_options`.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_bottommost_compression_options_zstd_max_train_bytes(
    opt: *mut strata_options_t,
    zstd_max_train_bytes: c_int,
    enabled: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(opt, |o| {
            bottommost_options(&mut o.bottommost_compression_opts).zstd_max_train_bytes =
                byte_count(zstd_max_train_bytes);
            if enabled == 0 {
                o.bottommost_compression_opts = None;
            }
        })
    }
}

/// The two fields `rocksdb_options_set_compression_options` and its bottommost twin set.
fn set_level_and_dict(o: &mut CompressionOptions, level: c_int, max_dict_bytes: c_int) {
    o.level = level;
    o.max_dict_bytes = byte_count(max_dict_bytes);
}

/// The bottommost options, made from the defaults if there are none yet.
fn bottommost_options(slot: &mut Option<CompressionOptions>) -> &mut CompressionOptions {
    slot.get_or_insert_with(CompressionOptions::default)
}

/// How the blocks of tables written from now on are checksummed (RocksDB's
/// `rocksdb_block_based_options_set_checksum`): 1 crc32c (the default), 4 xxh3. Another
/// number leaves the setting unchanged. A table records its checksum, so a database reads
/// its tables whatever this is; tables checksummed by xxh3 are not readable by builds before
/// it.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_checksum(opt: *mut strata_options_t, v: c_char) {
    let checksum = u8::try_from(v).ok().and_then(ChecksumType::from_byte);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update_if_known(opt, checksum, |o, value| o.checksum = value) }
}

/// Reserve the last level for files ingested behind all data
/// (`strata_ingestexternalfileoptions_set_ingest_behind`, RocksDB's
/// `rocksdb_options_set_allow_ingest_behind`; 0 or 1): compactions never write there. Needs
/// at least 3 levels and a style other than FIFO; fixed at open.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_allow_ingest_behind(
    opt: *mut strata_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { update(opt, |o| o.allow_ingest_behind = v != 0) }
}
