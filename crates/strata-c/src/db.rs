//! The database handle: open and close, point reads and writes, snapshots, flushes,
//! compactions and properties.

use std::ffi::{c_char, c_int, c_uchar};

use strata::{Db, Snapshot};

use crate::error::{guard, malloc_copy};
use crate::{
    array, bytes, handle, into_handle, optional_bytes, release, strata_options_t,
    strata_readoptions_t, strata_writebatch_t, strata_writeoptions_t, text,
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options = handle(options, "options")?.options.clone();
            let path = text(name, "database path")?;
            let db = Db::open_read_only(path, options).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_t { db }))
        })
    }
}

/// Opens a secondary instance of the database in `name`, which another process (the primary)
/// may be writing, as RocksDB's `rocksdb_open_as_secondary`: it writes nothing into `name`
/// and takes no lock there; its own files (its LOG) go to `secondary_path`, created if
/// missing. It sees the primary as of the open; `strata_try_catch_up_with_primary` brings it
/// up to date. Writes through it fail.
///
/// # Safety
/// As `strata_open`; `secondary_path` a NUL-terminated path.
#[no_mangle]
pub unsafe extern "C" fn strata_open_as_secondary(
    options: *const strata_options_t,
    name: *const c_char,
    secondary_path: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options = handle(options, "options")?.options.clone();
            let path = text(name, "database path")?;
            let own = text(secondary_path, "secondary path")?;
            let db = Db::open_as_secondary(path, own, options).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_t { db }))
        })
    }
}

/// Reads what the primary wrote since the last catch-up into a secondary instance (RocksDB's
/// `rocksdb_try_catch_up_with_primary`); `*errptr` set on failure, and for a database not
/// opened with `strata_open_as_secondary`.
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_try_catch_up_with_primary(
    db: *mut strata_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            db.try_catch_up_with_primary().map_err(|e| e.to_string())
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            db.put_opt(
                bytes(key, keylen, "key")?,
                bytes(value, vallen, "value")?,
                options,
            )
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            db.delete_opt(bytes(key, keylen, "key")?, options)
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            let mut batch = strata::WriteBatch::new();
            batch.delete_range(
                bytes(begin, begin_len, "begin key")?,
                bytes(end, end_len, "end key")?,
            );
            db.write(batch, options).map_err(|e| e.to_string())
        })
    }
}

/// Applies the batch atomically (it stays the caller's, unchanged, and may be written again).
/// A batch that refused one of its updates is refused whole, with that update's error.
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            let batch = handle(batch, "write batch")?.to_apply()?;
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            *vallen = 0;
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "read options")?.options;
            let value = db
                .get_opt(bytes(key, keylen, "key")?, options)
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(snapshot.cast_mut()) }
}

/// Writes the memtables of every column family to tables and waits (afterwards no WAL is
/// needed to recover what was written).
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_flush(db: *mut strata_t, errptr: *mut *mut c_char) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            handle(db, "database")?
                .db
                .sync_wal()
                .map_err(|e| e.to_string())
        })
    }
}

/// Appends the WAL records held in memory under `strata_options_set_manual_wal_flush` to the
/// WAL file, and with `sync` (0 or 1) makes every write so far durable too (RocksDB's
/// `rocksdb_flush_wal`). Without the option every write's record is in the file already,
/// and only `sync` does anything. `*errptr` set on failure, and for a read-only or secondary
/// database.
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_flush_wal(
    db: *mut strata_t,
    sync: c_uchar,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            handle(db, "database")?
                .db
                .flush_wal(sync != 0)
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let start = optional_bytes(start, start_len, "start key")?;
            let limit = optional_bytes(limit, limit_len, "limit key")?;
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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

/// Merges `operand` into `key` with the merge operator of the options the database was
/// opened with.
///
/// # Safety
/// Live `db` and `options`; `key` and `operand` readable for their lengths; `errptr` as
/// usual.
#[no_mangle]
pub unsafe extern "C" fn strata_merge(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    key: *const c_char,
    keylen: usize,
    operand: *const c_char,
    oplen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            db.merge_opt(
                bytes(key, keylen, "key")?,
                bytes(operand, oplen, "operand")?,
                options,
            )
            .map_err(|e| e.to_string())
        })
    }
}

/// Sets `key` to `value` in a TTL database, expiring after `ttl_seconds` (instead of the
/// family's TTL). Refused in a database without a TTL.
///
/// # Safety
/// As `strata_put`.
#[no_mangle]
pub unsafe extern "C" fn strata_put_with_ttl(
    db: *mut strata_t,
    key: *const c_char,
    keylen: usize,
    value: *const c_char,
    vallen: usize,
    ttl_seconds: u64,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            db.put_with_ttl(
                bytes(key, keylen, "key")?,
                bytes(value, vallen, "value")?,
                std::time::Duration::from_secs(ttl_seconds),
            )
            .map_err(|e| e.to_string())
        })
    }
}

/// Reads `num_keys` keys in one view of the database (RocksDB's `MultiGet`). For key `i`,
/// `values_list[i]` gets its value, malloc'd (release each with `strata_free`), and
/// `values_list_sizes[i]` its length; an absent key gets null and 0; a key that could not be
/// read gets null and a malloc'd message in `errs[i]` (null otherwise). A null key pointer
/// with a non-zero size is refused for that key alone, in `errs[i]`.
///
/// # Safety
/// Live `db` and `options`; `keys_list` and `keys_list_sizes` of `num_keys` entries, each
/// key readable for its size; `values_list`, `values_list_sizes` and `errs` writable for
/// `num_keys` entries.
#[no_mangle]
pub unsafe extern "C" fn strata_multi_get(
    db: *mut strata_t,
    options: *const strata_readoptions_t,
    num_keys: usize,
    keys_list: *const *const c_char,
    keys_list_sizes: *const usize,
    values_list: *mut *mut c_char,
    values_list_sizes: *mut usize,
    errs: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        multi_get(
            db,
            options,
            std::ptr::null(),
            num_keys,
            keys_list,
            keys_list_sizes,
            values_list,
            values_list_sizes,
            errs,
        )
    }
}

/// As `strata_multi_get`, in column family `cf`.
///
/// # Safety
/// As `strata_multi_get`; `cf` a live family handle.
#[no_mangle]
pub unsafe extern "C" fn strata_multi_get_cf(
    db: *mut strata_t,
    options: *const strata_readoptions_t,
    cf: *const crate::strata_column_family_t,
    num_keys: usize,
    keys_list: *const *const c_char,
    keys_list_sizes: *const usize,
    values_list: *mut *mut c_char,
    values_list_sizes: *mut usize,
    errs: *mut *mut c_char,
) {
    if cf.is_null() {
        // Every key fails alike, naming the missing handle.
        for i in 0..num_keys {
            // SAFETY: the pointers are as the function's `# Safety` section requires.
            unsafe {
                *values_list.add(i) = std::ptr::null_mut();
                *values_list_sizes.add(i) = 0;
                *errs.add(i) = malloc_copy(b"column family is a null pointer");
            }
        }
        return;
    }
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        multi_get(
            db,
            options,
            cf,
            num_keys,
            keys_list,
            keys_list_sizes,
            values_list,
            values_list_sizes,
            errs,
        )
    }
}

/// What `strata_multi_get` found for one key: its value (None: absent) or an error.
type KeyResult = Result<Option<Vec<u8>>, String>;

/// The body of `strata_multi_get` and `strata_multi_get_cf` (the default family for a null
/// `cf`).
///
/// # Safety
/// As `strata_multi_get_cf`, `cf` null allowed.
#[allow(clippy::too_many_arguments)]
unsafe fn multi_get(
    db: *mut strata_t,
    options: *const strata_readoptions_t,
    cf: *const crate::strata_column_family_t,
    num_keys: usize,
    keys_list: *const *const c_char,
    keys_list_sizes: *const usize,
    values_list: *mut *mut c_char,
    values_list_sizes: *mut usize,
    errs: *mut *mut c_char,
) {
    // Every output slot is written, whatever fails, so that C can release them uniformly.
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let whole: Result<Vec<KeyResult>, String> = unsafe {
        let failed = Err("internal error in Strata (a panic, please report it)".into());
        guard(std::ptr::null_mut(), failed, || {
            Ok((|| {
                let db = &handle(db, "database")?.db;
                let options = &handle(options, "read options")?.options;
                let keys_list = array(keys_list, num_keys, "keys_list", "keys")?;
                let keys_list_sizes = array(keys_list_sizes, num_keys, "keys_list_sizes", "keys")?;
                let mut keys = Vec::with_capacity(num_keys);
                let mut refused = Vec::new();
                for (i, (&key, &size)) in keys_list.iter().zip(keys_list_sizes).enumerate() {
                    match bytes(key, size, "key") {
                        Ok(k) => keys.push(k),
                        Err(e) => {
                            keys.push(&[][..]);
                            refused.push((i, e));
                        }
                    }
                }
                let found = match cf.as_ref() {
                    None => db.multi_get_opt(&keys, options),
                    Some(cf) => db.multi_get_cf_opt(&cf.handle, &keys, options),
                };
                let mut out: Vec<KeyResult> = found
                    .into_iter()
                    .map(|r| r.map_err(|e| e.to_string()))
                    .collect();
                for (i, e) in refused {
                    out[i] = Err(e);
                }
                Ok(out)
            })())
        })
    };
    for i in 0..num_keys {
        let result = match &whole {
            Ok(results) => results
                .get(i)
                .cloned()
                .unwrap_or_else(|| Err("no result for this key".into())),
            Err(e) => Err(e.clone()),
        };
        // SAFETY: the pointers are as the function's `# Safety` section requires.
        unsafe {
            *values_list_sizes.add(i) = 0;
            *errs.add(i) = std::ptr::null_mut();
            *values_list.add(i) = std::ptr::null_mut();
            match result {
                Ok(v) => *values_list.add(i) = value_out(v, values_list_sizes.add(i)),
                Err(e) => *errs.add(i) = malloc_copy(e.as_bytes()),
            }
        }
    }
}

/// After a background error stopped writes, clears it and lets writes and background work
/// go on (RocksDB's `Resume`); fails if the database cannot resume.
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_resume(db: *mut strata_t, errptr: *mut *mut c_char) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            handle(db, "database")?
                .db
                .resume()
                .map_err(|e| e.to_string())
        })
    }
}

/// Rebuilds the manifest of the database in `name` from its tables and WALs (RocksDB's
/// `RepairDB`); unreadable files go to `name/lost/`. The database must not be open.
///
/// # Safety
/// `options` a live handle, `name` a NUL-terminated path, `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_repair_db(
    options: *const strata_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let options = &handle(options, "options")?.options;
            let path = text(name, "database path")?;
            strata::repair(path, options)
                .map(drop)
                .map_err(|e| e.to_string())
        })
    }
}

/// As `strata_merge`, in column family `cf` (with that family's merge operator).
///
/// # Safety
/// As `strata_merge`; `cf` a live family handle.
#[no_mangle]
pub unsafe extern "C" fn strata_merge_cf(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
    cf: *const crate::strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    operand: *const c_char,
    oplen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "write options")?.options;
            let cf = &handle(cf, "column family")?.handle;
            // A batch of one: the engine has no merge_cf taking write options.
            let mut batch = strata::WriteBatch::new();
            batch.merge_cf(
                cf,
                bytes(key, keylen, "key")?,
                bytes(operand, oplen, "operand")?,
            );
            db.write(batch, options).map_err(|e| e.to_string())
        })
    }
}

/// Compacts all of level `level` of the default family into the next one (L0 into the base
/// level: db_bench's `compact0` and `compact1`), and waits for it.
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_compact_level(
    db: *mut strata_t,
    level: c_int,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let level = usize::try_from(level).map_err(|_| format!("level {level} is negative"))?;
            handle(db, "database")?
                .db
                .compact_level(level)
                .map_err(|e| e.to_string())
        })
    }
}

/// Compacts every column family down to its last level, and waits for it.
///
/// # Safety
/// Live `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_compact_all(db: *mut strata_t, errptr: *mut *mut c_char) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            handle(db, "database")?
                .db
                .compact_all()
                .map_err(|e| e.to_string())
        })
    }
}
