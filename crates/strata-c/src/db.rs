//! The database handle: open and close, point reads and writes, snapshots, flushes,
//! compactions and properties.

use std::ffi::{c_char, c_uchar};

use strata::{Db, Snapshot};

use crate::error::{guard, malloc_copy};
use crate::{
    bytes, handle, into_handle, release, strata_options_t, strata_readoptions_t,
    strata_writebatch_t, strata_writeoptions_t, text,
};

/// An open database.
pub struct strata_t {
    pub(crate) db: Db,
}

/// A snapshot of a database: reads through it ignore later writes.
pub struct strata_snapshot_t {
    pub(crate) snapshot: Snapshot,
}

/// Opens (or, with `create_if_missing`, creates) the database in directory `name`. Null and
/// `*errptr` set on failure.
///
/// # Safety
/// `options` a live handle, `name` a NUL-terminated path, `errptr` null or a valid `char**`.
#[no_mangle]
pub unsafe extern "C" fn strata_open(
    options: *const strata_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_t {
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options = handle(options, "options")?.options.clone();
            let path = text(name, "database path")?;
            let db = Db::open(path, options).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_t { db }))
        })
    }
}

/// Opens the database in `name` for reading only: it writes nothing, takes no lock and sees
/// the database as of the open (every column family, with the family fields of `options`).
///
/// # Safety
/// As `strata_open`.
#[no_mangle]
pub unsafe extern "C" fn strata_open_for_read_only(
    options: *const strata_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_t {
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options = handle(options, "options")?.options.clone();
            let path = text(name, "database path")?;
            let db = Db::open_read_only(path, options).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_t { db }))
        })
    }
}

/// Closes the database (making the WAL durable) and releases the handle. Release its
/// iterators, snapshots and column family handles first.
///
/// # Safety
/// `db` must be null or a handle from an open function, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_close(db: *mut strata_t) {
    unsafe { release(db) }
}

/// Sets `key` to `value`.
///
/// # Safety
/// Live `db` and `options`; `key` and `value` readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_put(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    value: *const c_char,
    vallen: usize,
    errptr: *mut *mut c_char,
) {
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            db.put_opt(bytes(key, keylen), bytes(value, vallen), options)
                .map_err(|e| e.to_string())
        })
    }
}

/// Removes `key`.
///
/// # Safety
/// As `strata_put`.
#[no_mangle]
pub unsafe extern "C" fn strata_delete(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            db.delete_opt(bytes(key, keylen), options)
                .map_err(|e| e.to_string())
        })
    }
}

/// Removes every key in [`begin`, `end`) with one range tombstone; `begin` after `end` is an
/// error naming both keys, and nothing is written.
///
/// # Safety
/// Live `db` and `options`; `begin` and `end` readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_delete_range(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    begin: *const c_char,
    begin_len: usize,
    end: *const c_char,
    end_len: usize,
    errptr: *mut *mut c_char,
) {
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            let mut batch = strata::WriteBatch::new();
            batch.delete_range(bytes(begin, begin_len), bytes(end, end_len));
            db.write(batch, options).map_err(|e| e.to_string())
        })
    }
}

/// Applies the batch atomically (it stays the caller's, unchanged, and may be written again).
///
/// # Safety
/// Live `db`, `options` and `batch`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_write(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    batch: *const strata_writebatch_t,
    errptr: *mut *mut c_char,
) {
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            let batch = handle(batch, "write batch")?.batch.clone();
            db.write(batch, options).map_err(|e| e.to_string())
        })
    }
}

/// The value of `key`, malloc'd (release it with `strata_free`), its length in `*vallen`;
/// null with `*vallen` 0 when the key is absent or on an error (then `*errptr` is set).
///
/// # Safety
/// Live `db` and `options`; `key` readable for `keylen`; `vallen` a valid pointer; `errptr`
/// as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_get(
    db: *mut strata_t,
    options: *const strata_readoptions_t,
    key: *const c_char,
    keylen: usize,
    vallen: *mut usize,
    errptr: *mut *mut c_char,
) -> *mut c_char {
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            *vallen = 0;
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "read options")?.options;
            let value = db
                .get_opt(bytes(key, keylen), options)
                .map_err(|e| e.to_string())?;
            Ok(value_out(value, vallen))
        })
    }
}

/// Hands a found value to C: malloc'd, its length in `*vallen`; null when absent.
///
/// # Safety
/// `vallen` must be a valid pointer.
pub(crate) unsafe fn value_out(value: Option<Vec<u8>>, vallen: *mut usize) -> *mut c_char {
    match value {
        None => std::ptr::null_mut(),
        Some(v) => {
            // SAFETY: the caller promises a valid pointer.
            unsafe { *vallen = v.len() };
            malloc_copy(&v)
        }
    }
}

/// A snapshot of the database now, for `strata_readoptions_set_snapshot`; release it with
/// `strata_release_snapshot`. Null for a null `db`.
///
/// # Safety
/// `db` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_create_snapshot(db: *mut strata_t) -> *const strata_snapshot_t {
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null(), || {
            let db = &handle(db, "database")?.db;
            Ok(into_handle(strata_snapshot_t {
                snapshot: db.snapshot(),
            })
            .cast_const())
        })
    }
}

/// Releases a snapshot (read options that were given it keep it alive until they are
/// destroyed or given another).
///
/// # Safety
/// `snapshot` null or from `strata_create_snapshot`, released once; `db` is not used.
#[no_mangle]
pub unsafe extern "C" fn strata_release_snapshot(
    _db: *mut strata_t,
    snapshot: *const strata_snapshot_t,
) {
    unsafe { release(snapshot.cast_mut()) }
}

/// Writes the memtables of every column family to tables and waits (afterwards no WAL is
/// needed to recover what was written).
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_flush(db: *mut strata_t, errptr: *mut *mut c_char) {
    unsafe {
        guard(errptr, (), || {
            handle(db, "database")?
                .db
                .flush()
                .map_err(|e| e.to_string())
        })
    }
}

/// Makes every write so far durable (fdatasync of the WAL).
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_sync_wal(db: *mut strata_t, errptr: *mut *mut c_char) {
    unsafe {
        guard(errptr, (), || {
            handle(db, "database")?
                .db
                .sync_wal()
                .map_err(|e| e.to_string())
        })
    }
}

/// Compacts the keys in [start, limit] of the default family down to the last level; a null
/// `start` or `limit` is an open bound.
///
/// # Safety
/// Live `db`; `start` and `limit` null or readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_compact_range(
    db: *mut strata_t,
    start: *const c_char,
    start_len: usize,
    limit: *const c_char,
    limit_len: usize,
    errptr: *mut *mut c_char,
) {
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let start = (!start.is_null()).then(|| bytes(start, start_len));
            let limit = (!limit.is_null()).then(|| bytes(limit, limit_len));
            db.compact_range(start, limit).map_err(|e| e.to_string())
        })
    }
}

/// Waits until no flush is pending and no compaction is needed (0 or 1 for whether to wait;
/// 0 returns at once).
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_wait_for_compactions(
    db: *mut strata_t,
    wait: c_uchar,
    errptr: *mut *mut c_char,
) {
    if wait == 0 {
        return;
    }
    unsafe {
        guard(errptr, (), || {
            handle(db, "database")?
                .db
                .wait_for_compactions()
                .map_err(|e| e.to_string())
        })
    }
}

/// The text of property `name` (as `Db::property`: `strata.stats`,
/// `strata.num-files-at-level0`, ...), malloc'd and NUL-terminated; null for an unknown name.
///
/// # Safety
/// Live `db`; `name` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn strata_property_value(
    db: *mut strata_t,
    name: *const c_char,
) -> *mut c_char {
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let name = text(name, "property name")?;
            Ok(db
                .property(name)
                .map_or(std::ptr::null_mut(), |v| malloc_copy(v.as_bytes())))
        })
    }
}
