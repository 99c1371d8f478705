//! Key ranges measured and dropped file by file (RocksDB's `rocksdb_approximate_sizes` and
//! `rocksdb_delete_file_in_range`, over `Db::approximate_sizes` and
//! `Db::delete_files_in_range`), and single deletes (`rocksdb_singledelete`). Each takes a
//! column family in its `_cf` form, the default family otherwise.

use std::ffi::{c_char, c_int};

use strata::{ColumnFamily, Db, KeyRange};

use crate::error::guard;
use crate::{
    array, bytes, family_given, handle, optional_bytes, strata_column_family_t, strata_t,
    strata_writeoptions_t,
};

/// The database behind `db` and the family behind `cf` (the default one for a null `cf`).
///
/// # Safety
/// `db` null or a live handle; `cf` null or a live handle.
unsafe fn db_and_family<'a>(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
) -> Result<(&'a Db, ColumnFamily), String> {
    // SAFETY: the caller promises live handles or null.
    let db = &unsafe { handle(db, "database") }?.db;
    // SAFETY: as above.
    let cf = match unsafe { cf.as_ref() } {
        Some(cf) => cf.handle.clone(),
        None => db.default_cf(),
    };
    Ok((db, cf))
}

/// Removes `key`, written once since its last removal (RocksDB's `rocksdb_singledelete`):
/// the deletion and the put it meets both vanish at compaction. Undefined which version
/// reads if the key was put more than once.
///
/// # Safety
/// As `strata_delete`.
#[no_mangle]
pub unsafe extern "C" fn strata_singledelete(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { single_delete(db, options, std::ptr::null(), key, keylen, errptr) }
}

/// As `strata_singledelete`, in column family `cf`.
///
/// # Safety
/// As `strata_delete_cf`.
#[no_mangle]
pub unsafe extern "C" fn strata_singledelete_cf(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if !unsafe { family_given(cf, errptr) } {
        return;
    }
    // SAFETY: as above.
    unsafe { single_delete(db, options, cf, key, keylen, errptr) }
}

/// The body of the single deletes (the default family for a null `cf`).
///
/// # Safety
/// As `strata_singledelete_cf`, `cf` null allowed.
unsafe fn single_delete(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the caller's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let (db, cf) = db_and_family(db, cf)?;
            let options = &handle(options, "write options")?.options;
            db.single_delete_cf_opt(&cf, bytes(key, keylen, "key")?, options)
                .map_err(|e| e.to_string())
        })
    }
}

/// The approximate bytes of the tables' data in each of `num_ranges` key ranges
/// [`range_start_key[i]`, `range_limit_key[i]`) of the default family, into `sizes[i]`
/// (RocksDB's `rocksdb_approximate_sizes`): within about a data block per table, memtables
/// not counted. On an error every size is 0.
///
/// # Safety
/// Live `db`; each array `num_ranges` long (keys readable for their lengths); `sizes`
/// writable for `num_ranges` values; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_approximate_sizes(
    db: *mut strata_t,
    num_ranges: c_int,
    range_start_key: *const *const c_char,
    range_start_key_len: *const usize,
    range_limit_key: *const *const c_char,
    range_limit_key_len: *const usize,
    sizes: *mut u64,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        approximate_sizes(
            db,
            std::ptr::null(),
            num_ranges,
            range_start_key,
            range_start_key_len,
            range_limit_key,
            range_limit_key_len,
            sizes,
            errptr,
        )
    }
}

/// As `strata_approximate_sizes`, in column family `cf`.
///
/// # Safety
/// As `strata_approximate_sizes`; `cf` a live handle.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn strata_approximate_sizes_cf(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    num_ranges: c_int,
    range_start_key: *const *const c_char,
    range_start_key_len: *const usize,
    range_limit_key: *const *const c_char,
    range_limit_key_len: *const usize,
    sizes: *mut u64,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if !unsafe { family_given(cf, errptr) } {
        return;
    }
    // SAFETY: as above.
    unsafe {
        approximate_sizes(
            db,
            cf,
            num_ranges,
            range_start_key,
            range_start_key_len,
            range_limit_key,
            range_limit_key_len,
            sizes,
            errptr,
        )
    }
}

/// The body of the approximate sizes (the default family for a null `cf`).
///
/// # Safety
/// As `strata_approximate_sizes_cf`, `cf` null allowed.
#[allow(clippy::too_many_arguments)]
unsafe fn approximate_sizes(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    num_ranges: c_int,
    range_start_key: *const *const c_char,
    range_start_key_len: *const usize,
    range_limit_key: *const *const c_char,
    range_limit_key_len: *const usize,
    sizes: *mut u64,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the caller's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let count = usize::try_from(num_ranges)
                .map_err(|_| format!("num_ranges {num_ranges} is negative"))?;
            // The output array, checked as the inputs are, then written (the caller
            // promises it writable); an empty one is a dangling, aligned pointer, not null.
            let out = array(sizes.cast_const(), count, "sizes", "ranges")?;
            let out = std::slice::from_raw_parts_mut(out.as_ptr().cast_mut(), out.len());
            out.fill(0);
            let (db, cf) = db_and_family(db, cf)?;
            let start = array(range_start_key, count, "range_start_key", "ranges")?;
            let start_len = array(range_start_key_len, count, "range_start_key_len", "ranges")?;
            let limit = array(range_limit_key, count, "range_limit_key", "ranges")?;
            let limit_len = array(range_limit_key_len, count, "range_limit_key_len", "ranges")?;
            let ranges = (0..count)
                .map(|i| {
                    Ok(KeyRange::new(
                        bytes(start[i], start_len[i], "range start key")?,
                        bytes(limit[i], limit_len[i], "range limit key")?,
                    ))
                })
                .collect::<Result<Vec<_>, String>>()?;
            let found = db
                .approximate_sizes(&cf, &ranges)
                .map_err(|e| e.to_string())?;
            out.copy_from_slice(&found);
            Ok(())
        })
    }
}

/// Drops the tables of levels 1 and up whose keys all lie in [`start_key`, `limit_key`] of
/// the default family, without reading them (RocksDB's `rocksdb_delete_file_in_range`); a
/// null key is an open bound. Keys in memtables, level 0 and tables reaching past the range
/// remain: follow with `strata_delete_range`.
///
/// # Safety
/// Live `db`; the keys null or readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_delete_file_in_range(
    db: *mut strata_t,
    start_key: *const c_char,
    start_key_len: usize,
    limit_key: *const c_char,
    limit_key_len: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        delete_files_in_range(
            db,
            std::ptr::null(),
            (start_key, start_key_len),
            (limit_key, limit_key_len),
            errptr,
        )
    }
}

/// As `strata_delete_file_in_range`, in column family `cf`.
///
/// # Safety
/// As `strata_delete_file_in_range`; `cf` a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_delete_file_in_range_cf(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    start_key: *const c_char,
    start_key_len: usize,
    limit_key: *const c_char,
    limit_key_len: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if !unsafe { family_given(cf, errptr) } {
        return;
    }
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        delete_files_in_range(
            db,
            cf,
            (start_key, start_key_len),
            (limit_key, limit_key_len),
            errptr,
        )
    }
}

/// The body of the file deletions (the default family for a null `cf`).
///
/// # Safety
/// As `strata_delete_file_in_range_cf`, `cf` null allowed.
unsafe fn delete_files_in_range(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    (start, start_len): (*const c_char, usize),
    (limit, limit_len): (*const c_char, usize),
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the caller's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let (db, cf) = db_and_family(db, cf)?;
            let start = optional_bytes(start, start_len, "start key")?;
            let limit = optional_bytes(limit, limit_len, "limit key")?;
            db.delete_files_in_range(&cf, start, limit)
                .map(drop)
                .map_err(|e| e.to_string())
        })
    }
}
