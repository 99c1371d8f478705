//! Options changed on an open database: RocksDB's `rocksdb_set_options` and
//! `rocksdb_set_options_cf`, over `Db::set_options` and `Db::set_cf_options` (all or nothing;
//! the error names a bad option).

use std::ffi::{c_char, c_int};

use crate::error::guard;
use crate::{array, handle, strata_column_family_t, strata_t, text};

/// The `count` pairs of `keys` and `values`, as text.
///
/// # Safety
/// `keys` and `values` readable for `count` NUL-terminated strings each.
unsafe fn pairs<'a>(
    count: c_int,
    keys: *const *const c_char,
    values: *const *const c_char,
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let count = usize::try_from(count).map_err(|_| format!("count {count} is negative"))?;
    // SAFETY: the caller promises `count` readable strings in each array.
    unsafe {
        let keys = array(keys, count, "keys", "options")?;
        let values = array(values, count, "values", "options")?;
        keys.iter()
            .zip(values)
            .map(|(&k, &v)| Ok((text(k, "option name")?, text(v, "option value")?)))
            .collect()
    }
}

/// Changes options of the default column family (`rocksdb_set_options`): `count` option
/// names in `keys` with their values in `values`, as the OPTIONS file writes them.
///
/// # Safety
/// Live `db`; `keys` and `values` readable for `count` NUL-terminated strings each;
/// `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_set_options(
    db: *mut strata_t,
    count: c_int,
    keys: *const *const c_char,
    values: *const *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            db.set_options(&pairs(count, keys, values)?)
                .map_err(|e| e.to_string())
        })
    }
}

/// Changes options of column family `cf` (`rocksdb_set_options_cf`); see
/// `strata_set_options`.
///
/// # Safety
/// Live `db` and `cf`; `keys` and `values` readable for `count` NUL-terminated strings
/// each; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_set_options_cf(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    count: c_int,
    keys: *const *const c_char,
    values: *const *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let cf = &handle(cf, "column family")?.handle;
            db.set_cf_options(cf, &pairs(count, keys, values)?)
                .map_err(|e| e.to_string())
        })
    }
}

/// Changes database-wide options (`rocksdb_set_db_options`); see `strata_set_options`.
///
/// # Safety
/// As `strata_set_options`.
#[no_mangle]
pub unsafe extern "C" fn strata_set_db_options(
    db: *mut strata_t,
    count: c_int,
    keys: *const *const c_char,
    values: *const *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            db.set_db_options(&pairs(count, keys, values)?)
                .map_err(|e| e.to_string())
        })
    }
}
