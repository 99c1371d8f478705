//! Column families: open with them, list, create and drop them, and read and write in one.
//! A handle names a family; after `strata_drop_column_family` every use of it fails with an
//! error naming the family, and it must still be released with
//! `strata_column_family_handle_destroy`.

use std::ffi::{c_char, c_int};

use strata::{CfOptions, ColumnFamily, Db};

use crate::db::value_out;
use crate::error::{guard, malloc_copy};
use crate::{
    bytes, handle, into_handle, optional_bytes, release, strata_options_t, strata_readoptions_t,
    strata_t, strata_writeoptions_t, text,
};

/// A handle of a column family of an open database.
pub struct strata_column_family_t {
    pub(crate) handle: ColumnFamily,
}

fn new_handle(handle: ColumnFamily) -> *mut strata_column_family_t {
    into_handle(strata_column_family_t { handle })
}

/// Opens the database in `name` with its column families: `num_column_families` names and
/// options (the family fields of each `strata_options_t` are used), every family the
/// database has among them. On success `column_family_handles[i]` is the handle of family
/// `i`; on failure null is returned, `*errptr` says why (listing the families not named, if
/// that is it) and no handle is written.
///
/// # Safety
/// `options` live; `name` a NUL-terminated path; the two arrays hold `num_column_families`
/// valid entries and `column_family_handles` has room for as many; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_open_column_families(
    options: *const strata_options_t,
    name: *const c_char,
    num_column_families: c_int,
    column_family_names: *const *const c_char,
    column_family_options: *const *const strata_options_t,
    column_family_handles: *mut *mut strata_column_family_t,
    errptr: *mut *mut c_char,
) -> *mut strata_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options = handle(options, "options")?.options.clone();
            let path = text(name, "database path")?;
            let n = usize::try_from(num_column_families)
                .map_err(|_| format!("num_column_families is {num_column_families}"))?;
            let mut families: Vec<(String, CfOptions)> = Vec::with_capacity(n);
            for i in 0..n {
                let name = text(*column_family_names.add(i), "column family name")?;
                let cf_options = handle(*column_family_options.add(i), "column family options")?;
                families.push((name.to_string(), cf_options.options.cf_options()));
            }
            let names: Vec<String> = families.iter().map(|(n, _)| n.clone()).collect();
            let db = Db::open_cf(path, options, families).map_err(|e| e.to_string())?;
            for (i, name) in names.iter().enumerate() {
                let cf = db
                    .cf(name)
                    .ok_or_else(|| format!("column family '{name}' missing after open"))?;
                *column_family_handles.add(i) = new_handle(cf);
            }
            Ok(into_handle(strata_t { db }))
        })
    }
}

/// The names of the column families of the database in `name` (the default first), as a
/// malloc'd array of `*lencf` malloc'd strings: release it with
/// `strata_list_column_families_destroy`. Null and `*errptr` set on failure.
///
/// # Safety
/// `options` live; `name` a NUL-terminated path; `lencf` a valid pointer; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_list_column_families(
    options: *const strata_options_t,
    name: *const c_char,
    lencf: *mut usize,
    errptr: *mut *mut c_char,
) -> *mut *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            *lencf = 0;
            let options = &handle(options, "options")?.options;
            let path = text(name, "database path")?;
            let names = Db::list_cfs(path, options).map_err(|e| e.to_string())?;
            let list = libc::malloc(names.len().max(1) * std::mem::size_of::<*mut c_char>())
                .cast::<*mut c_char>();
            if list.is_null() {
                return Err("out of memory".into());
            }
            for (i, n) in names.iter().enumerate() {
                *list.add(i) = malloc_copy(n.as_bytes());
            }
            *lencf = names.len();
            Ok(list)
        })
    }
}

/// Releases what `strata_list_column_families` returned.
///
/// # Safety
/// `list` null or from `strata_list_column_families` with its `len`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_list_column_families_destroy(list: *mut *mut c_char, len: usize) {
    if list.is_null() {
        return;
    }
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        for i in 0..len {
            libc::free((*list.add(i)).cast());
        }
        libc::free(list.cast());
    }
}

/// Creates column family `name` with the family fields of `options`; its handle, or null
/// and `*errptr` set (a family of that name exists, a bad name or option).
///
/// # Safety
/// Live `db` and `options`; `name` a NUL-terminated string; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_create_column_family(
    db: *mut strata_t,
    options: *const strata_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_column_family_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let cf_options = handle(options, "options")?.options.cf_options();
            let name = text(name, "column family name")?;
            let cf = db.create_cf(name, cf_options).map_err(|e| e.to_string())?;
            Ok(new_handle(cf))
        })
    }
}

/// Drops column family `cf` (its handle stays to be released).
///
/// # Safety
/// Live `db` and `cf`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_drop_column_family(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let cf = &handle(cf, "column family")?.handle;
            db.drop_cf(cf).map_err(|e| e.to_string())
        })
    }
}

/// The handle of column family `name`, or null if the database has none of that name.
///
/// # Safety
/// Live `db`; `name` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn strata_get_column_family(
    db: *mut strata_t,
    name: *const c_char,
) -> *mut strata_column_family_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let name = text(name, "column family name")?;
            Ok(db.cf(name).map_or(std::ptr::null_mut(), new_handle))
        })
    }
}

/// The family's name, malloc'd and NUL-terminated (release it with `strata_free`); null for
/// a null handle.
///
/// # Safety
/// `cf` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_column_family_name(
    cf: *const strata_column_family_t,
) -> *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { cf.as_ref() }.map_or(std::ptr::null_mut(), |cf| {
        malloc_copy(cf.handle.name().as_bytes())
    })
}

/// The family's id (RocksDB's `rocksdb_column_family_handle_get_id`): 0 for the default
/// family; the id a batch read back (`strata_writebatch_iterate_cf`) names it by. 0 for a
/// null handle.
///
/// # Safety
/// `cf` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_column_family_handle_get_id(
    cf: *const strata_column_family_t,
) -> u32 {
    // SAFETY: the caller promises a live handle or null.
    unsafe { cf.as_ref() }.map_or(0, |cf| cf.handle.id())
}

/// Releases a column family handle (the family itself stays).
///
/// # Safety
/// `cf` null or a handle from this library, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_column_family_handle_destroy(cf: *mut strata_column_family_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(cf) }
}

/// Sets `key` to `value` in column family `cf`.
///
/// # Safety
/// Live `db`, `options` and `cf`; `key` and `value` readable for their lengths; `errptr` as
/// usual.
#[no_mangle]
pub unsafe extern "C" fn strata_put_cf(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    value: *const c_char,
    vallen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            let cf = &handle(cf, "column family")?.handle;
            db.put_cf_opt(
                cf,
                bytes(key, keylen, "key")?,
                bytes(value, vallen, "value")?,
                options,
            )
            .map_err(|e| e.to_string())
        })
    }
}

/// Removes `key` from column family `cf`.
///
/// # Safety
/// Live `db`, `options` and `cf`; `key` readable for `keylen`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_delete_cf(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            let cf = &handle(cf, "column family")?.handle;
            db.delete_cf_opt(cf, bytes(key, keylen, "key")?, options)
                .map_err(|e| e.to_string())
        })
    }
}

/// The value of `key` in column family `cf`, as `strata_get`.
///
/// # Safety
/// Live `db`, `options` and `cf`; `key` readable for `keylen`; `vallen` a valid pointer;
/// `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_get_cf(
    db: *mut strata_t,
    options: *const strata_readoptions_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    vallen: *mut usize,
    errptr: *mut *mut c_char,
) -> *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            *vallen = 0;
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "read options")?.options;
            let cf = &handle(cf, "column family")?.handle;
            let value = db
                .get_cf_opt(cf, bytes(key, keylen, "key")?, options)
                .map_err(|e| e.to_string())?;
            Ok(value_out(value, vallen))
        })
    }
}

/// Writes the memtables of column family `cf` to tables and waits.
///
/// # Safety
/// Live `db` and `cf`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_flush_cf(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let cf = &handle(cf, "column family")?.handle;
            db.flush_cf(cf).map_err(|e| e.to_string())
        })
    }
}

/// Compacts the keys in [start, limit] of column family `cf` (null bounds are open).
///
/// # Safety
/// Live `db` and `cf`; bounds null or readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_compact_range_cf(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    start: *const c_char,
    start_len: usize,
    limit: *const c_char,
    limit_len: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let cf = &handle(cf, "column family")?.handle;
            let start = optional_bytes(start, start_len, "start key")?;
            let limit = optional_bytes(limit, limit_len, "limit key")?;
            db.compact_range_cf(cf, start, limit)
                .map_err(|e| e.to_string())
        })
    }
}

/// The text of property `name` of column family `cf`; null for an unknown name or a dropped
/// family.
///
/// # Safety
/// Live `db` and `cf`; `name` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn strata_property_value_cf(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    name: *const c_char,
) -> *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let cf = &handle(cf, "column family")?.handle;
            let name = text(name, "property name")?;
            Ok(db
                .property_cf(cf, name)
                .map_or(std::ptr::null_mut(), |v| malloc_copy(v.as_bytes())))
        })
    }
}
