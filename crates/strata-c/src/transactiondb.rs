//! The database for pessimistic transactions (`strata_transactiondb_t`): opening and
//! closing it, its locked single writes and reads, the prepared transactions it hands out
//! again after a restart, and the options of the transactions begun on it
//! (`strata_transaction_options_t`). The transactions themselves are in txn.rs, under the
//! ownership rules stated there.

use std::ffi::{c_char, c_uchar};
use std::time::Duration;

use strata::{TransactionDb, TransactionOptions};

use crate::error::guard;
use crate::txn::{txn_out, Txn};
use crate::{
    bytes, handle, into_handle, release, strata_options_t, strata_readoptions_t,
    strata_transaction_t, strata_writebatch_t, strata_writeoptions_t, text,
};

/// A database whose writes go through key locks, for pessimistic transactions.
pub struct strata_transactiondb_t {
    pub(crate) tdb: TransactionDb,
}

/// Options of a pessimistic transaction.
pub struct strata_transaction_options_t {
    pub(crate) options: TransactionOptions,
}

/// Opens (or, with `create_if_missing`, creates) the database in `name` for pessimistic
/// transactions, recovering transactions that were prepared and not yet committed. Release
/// it with `strata_transactiondb_close`. Null and `*errptr` set on failure.
///
/// # Safety
/// `options` a live handle, `name` a NUL-terminated path, `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transactiondb_open(
    options: *const strata_options_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_transactiondb_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options = handle(options, "options")?.options.clone();
            let path = text(name, "database path")?;
            let tdb = TransactionDb::open(path, options).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_transactiondb_t { tdb }))
        })
    }
}

/// Closes the database. Destroy its transactions first; prepared ones stay prepared on
/// disk, offered again at the next open.
///
/// # Safety
/// `tdb` null or from `strata_transactiondb_open`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_transactiondb_close(tdb: *mut strata_transactiondb_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(tdb) }
}

/// Sets `key` to `value`, waiting for a transaction's lock on it if needed.
///
/// # Safety
/// Live `tdb`; `key` and `value` readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transactiondb_put(
    tdb: *mut strata_transactiondb_t,
    key: *const c_char,
    keylen: usize,
    value: *const c_char,
    vallen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            handle(tdb, "transaction database")?
                .tdb
                .put(bytes(key, keylen, "key")?, bytes(value, vallen, "value")?)
                .map_err(|e| e.to_string())
        })
    }
}

/// Removes `key`, waiting for a transaction's lock on it if needed.
///
/// # Safety
/// Live `tdb`; `key` readable for `keylen`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transactiondb_delete(
    tdb: *mut strata_transactiondb_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            handle(tdb, "transaction database")?
                .tdb
                .delete(bytes(key, keylen, "key")?)
                .map_err(|e| e.to_string())
        })
    }
}

/// Applies the batch atomically under the locks of its keys (the batch stays the caller's).
///
/// # Safety
/// Live `tdb`, `options` and `batch`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transactiondb_write(
    tdb: *mut strata_transactiondb_t,
    options: *const strata_writeoptions_t,
    batch: *const strata_writebatch_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let tdb = &handle(tdb, "transaction database")?.tdb;
            let options = &handle(options, "write options")?.options;
            let batch = handle(batch, "write batch")?.to_apply()?;
            tdb.write(batch, options).map_err(|e| e.to_string())
        })
    }
}

/// The committed value of `key` (as `strata_get`: malloc'd, length in `*vallen`, null when
/// absent).
///
/// # Safety
/// Live `tdb` and `options`; `key` readable for `keylen`; `vallen` valid; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transactiondb_get(
    tdb: *mut strata_transactiondb_t,
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
            let tdb = &handle(tdb, "transaction database")?.tdb;
            let options = &handle(options, "read options")?.options;
            let value = tdb
                .db()
                .get_opt(bytes(key, keylen, "key")?, options)
                .map_err(|e| e.to_string())?;
            Ok(crate::db::value_out(value, vallen))
        })
    }
}

/// The transactions that were prepared and not yet committed or rolled back (recovered at
/// open, or destroyed while prepared), handed out once each: an array of `*count` handles,
/// malloc'd (release it with `strata_free`), each handle the caller's, to commit or roll
/// back and then destroy. Null with `*count` 0 when there are none.
///
/// # Safety
/// Live `tdb`, open until the handles are destroyed; `count` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn strata_transactiondb_get_prepared_transactions(
    tdb: *mut strata_transactiondb_t,
    count: *mut usize,
) -> *mut *mut strata_transaction_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            *count = 0;
            // SAFETY: the caller keeps the database open until the handles are destroyed.
            let tdb: &'static TransactionDb = &tdb
                .cast_const()
                .as_ref()
                .ok_or("transaction database is null")?
                .tdb;
            let txns = tdb.prepared_transactions();
            if txns.is_empty() {
                return Ok(std::ptr::null_mut());
            }
            let size = txns.len() * std::mem::size_of::<*mut strata_transaction_t>();
            let array = libc::malloc(size).cast::<*mut strata_transaction_t>();
            if array.is_null() {
                return Err("out of memory for the list of prepared transactions".into());
            }
            for (i, t) in txns.into_iter().enumerate() {
                *array.add(i) = txn_out(Txn::Pessimistic(t), tdb.db());
                *count = i + 1;
            }
            Ok(array)
        })
    }
}

/// New transaction options: lock timeout 1 s, deadlock detection on, no expiration, no
/// snapshot.
#[no_mangle]
pub extern "C" fn strata_transaction_options_create() -> *mut strata_transaction_options_t {
    into_handle(strata_transaction_options_t {
        options: TransactionOptions::default(),
    })
}

/// Releases transaction options.
///
/// # Safety
/// `opt` null or from `strata_transaction_options_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_options_destroy(
    opt: *mut strata_transaction_options_t,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(opt) }
}

/// How long a lock request waits before failing with Busy, in milliseconds.
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_options_set_lock_timeout(
    opt: *mut strata_transaction_options_t,
    ms: u64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.lock_timeout = Duration::from_millis(ms);
    }
}

/// Refuse at once a lock wait that would close a cycle of waiting transactions (0 or 1).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_options_set_deadlock_detect(
    opt: *mut strata_transaction_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.deadlock_detect = v != 0;
    }
}

/// After `ms` milliseconds the transaction's locks may be taken by others and its commit
/// fails; 0 means never.
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_options_set_expiration(
    opt: *mut strata_transaction_options_t,
    ms: u64,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.expiration = (ms > 0).then(|| Duration::from_millis(ms));
    }
}

/// Read at a snapshot taken when the transaction begins, and refuse to lock a key written
/// after it (0 or 1).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_options_set_set_snapshot(
    opt: *mut strata_transaction_options_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.set_snapshot = v != 0;
    }
}
