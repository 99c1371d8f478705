//! Transactions: optimistic ones on a plain database (conflicts checked at commit) and
//! pessimistic ones on a `strata_transactiondb_t` (key locks, timeouts, deadlock detection,
//! two-phase commit), both behind `strata_transaction_t`; save points; iterators over a
//! transaction's writes and the database; updatable cursors.
//!
//! Ownership and lifetimes. The engine's transactions borrow their database
//! (`OptimisticTransaction<'db>`, `Transaction<'db>`) and a cursor borrows its transaction;
//! C has no borrows, so these handles hold them with the lifetime erased, and the header
//! states the rule that makes that sound, as RocksDB's does:
//!
//! - A transaction must be destroyed (`strata_transaction_destroy`) before its database is
//!   closed. Destroying a running transaction rolls it back; destroying a prepared one parks
//!   it in its `strata_transactiondb_t`, locks held, for
//!   `strata_transactiondb_get_prepared_transactions` (or the next open) to hand out again.
//! - While a cursor is alive, its transaction is used only through the cursor; the cursor
//!   is destroyed before the transaction.
//! - A transaction, like a cursor, belongs to one thread at a time.
//!
//! Iterators from `strata_transaction_create_iterator` own what they read (a snapshot of the
//! transaction's writes) and follow the ordinary iterator rules.

use std::ffi::{c_char, c_uchar};

use strata::{
    ColumnFamily, Db, OptimisticTransaction, ReadOptions, Transaction, TransactionBase,
    TransactionDb, UpdatableCursor,
};

use crate::error::{guard, malloc_copy};
use crate::iterator::Iter;
use crate::{
    bytes, handle, into_handle, release, strata_column_family_t, strata_iterator_t,
    strata_readoptions_t, strata_t, strata_writeoptions_t, text,
};

/// The engine's transaction, its database's borrow erased (see the module's rules).
pub(crate) enum Txn {
    Optimistic(OptimisticTransaction<'static>),
    Pessimistic(Transaction<'static>),
}

/// The same call on either kind of transaction.
macro_rules! either {
    ($txn:expr, $t:ident => $call:expr) => {
        match $txn {
            Txn::Optimistic($t) => $call,
            Txn::Pessimistic($t) => $call,
        }
    };
}

/// A transaction, optimistic or pessimistic.
pub struct strata_transaction_t {
    txn: Txn,
    /// The family of cursors made without one.
    default_cf: ColumnFamily,
}

pub use crate::transactiondb::{strata_transaction_options_t, strata_transactiondb_t};
pub use crate::txn_cursor::strata_txn_cursor_t;

/// The transaction behind a handle.
///
/// # Safety
/// `txn` null or a live handle used by no other thread during the call.
unsafe fn txn_mut<'a>(txn: *mut strata_transaction_t) -> Result<&'a mut Txn, String> {
    // SAFETY: forwarded from the caller.
    unsafe { txn.as_mut() }
        .map(|t| &mut t.txn)
        .ok_or_else(|| "transaction is a null pointer".into())
}

/// Hands a transaction to C.
pub(crate) fn txn_out(txn: Txn, db: &Db) -> *mut strata_transaction_t {
    into_handle(strata_transaction_t {
        txn,
        default_cf: db.default_cf(),
    })
}

/// Begins an optimistic transaction on `db`: it reads at a snapshot taken now and its
/// commit fails (Busy) if a key it read for update or wrote was written by another since.
/// Release it with `strata_transaction_destroy` before closing `db`. Null for a null handle.
///
/// # Safety
/// Live `db` and `options`; `db` stays open until the transaction is destroyed.
#[no_mangle]
pub unsafe extern "C" fn strata_optimistictransaction_begin(
    db: *mut strata_t,
    options: *const strata_writeoptions_t,
) -> *mut strata_transaction_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            // SAFETY: the caller keeps the database open, at this address (it is boxed),
            // until the transaction is destroyed: the module's first rule.
            let db: &'static Db = &db.cast_const().as_ref().ok_or("database is null")?.db;
            let options = &handle(options, "write options")?.options;
            Ok(txn_out(
                Txn::Optimistic(db.optimistic_transaction(options)),
                db,
            ))
        })
    }
}

/// Begins a pessimistic transaction on `tdb`: each write locks its key until the
/// transaction ends. Release it with `strata_transaction_destroy` before closing `tdb`. Null
/// for a null handle.
///
/// # Safety
/// Live `tdb`, `options` and `txn_options`; `tdb` stays open until the transaction is
/// destroyed.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_begin(
    tdb: *mut strata_transactiondb_t,
    options: *const strata_writeoptions_t,
    txn_options: *const strata_transaction_options_t,
) -> *mut strata_transaction_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            // SAFETY: the caller keeps the database open, at this address (it is boxed),
            // until the transaction is destroyed: the module's first rule.
            let tdb: &'static TransactionDb = &tdb
                .cast_const()
                .as_ref()
                .ok_or("transaction database is null")?
                .tdb;
            let options = &handle(options, "write options")?.options;
            let txn_options = &handle(txn_options, "transaction options")?.options;
            Ok(txn_out(
                Txn::Pessimistic(tdb.transaction(options, txn_options)),
                tdb.db(),
            ))
        })
    }
}

/// Releases a transaction: a running one is rolled back, a prepared one is parked (see the
/// rules at the top of the header section).
///
/// # Safety
/// `txn` null or a transaction handle, released once, with no live cursor.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_destroy(txn: *mut strata_transaction_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(txn) }
}

/// Sets `key` to `value` in the transaction (a pessimistic one locks `key` first, and may
/// fail with Busy or a deadlock).
///
/// # Safety
/// Live `txn`; `key` and `value` readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_put(
    txn: *mut strata_transaction_t,
    key: *const c_char,
    keylen: usize,
    value: *const c_char,
    vallen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let (k, v) = (bytes(key, keylen, "key")?, bytes(value, vallen, "value")?);
            either!(txn_mut(txn)?, t => t.put(k, v)).map_err(|e| e.to_string())
        })
    }
}

/// Removes `key` in the transaction.
///
/// # Safety
/// Live `txn`; `key` readable for `keylen`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_delete(
    txn: *mut strata_transaction_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let k = bytes(key, keylen, "key")?;
            either!(txn_mut(txn)?, t => t.delete(k)).map_err(|e| e.to_string())
        })
    }
}

/// Merges `operand` into `key` in the transaction.
///
/// # Safety
/// Live `txn`; `key` and `operand` readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_merge(
    txn: *mut strata_transaction_t,
    key: *const c_char,
    keylen: usize,
    operand: *const c_char,
    oplen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let (k, v) = (
                bytes(key, keylen, "key")?,
                bytes(operand, oplen, "operand")?,
            );
            either!(txn_mut(txn)?, t => t.merge(k, v)).map_err(|e| e.to_string())
        })
    }
}

/// The value of `key` as the transaction sees it (its own writes over the database), as
/// `strata_get`: malloc'd, length in `*vallen`, null when absent.
///
/// # Safety
/// Live `txn`; `key` readable for `keylen`; `vallen` valid; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_get(
    txn: *mut strata_transaction_t,
    key: *const c_char,
    keylen: usize,
    vallen: *mut usize,
    errptr: *mut *mut c_char,
) -> *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            *vallen = 0;
            let k = bytes(key, keylen, "key")?;
            let value = either!(txn_mut(txn)?, t => t.get(k)).map_err(|e| e.to_string())?;
            Ok(crate::db::value_out(value, vallen))
        })
    }
}

/// As `strata_transaction_get`, and marks `key` as read for update: a pessimistic
/// transaction locks it; an optimistic one's commit fails if another writes it meanwhile.
///
/// # Safety
/// As `strata_transaction_get`.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_get_for_update(
    txn: *mut strata_transaction_t,
    key: *const c_char,
    keylen: usize,
    vallen: *mut usize,
    errptr: *mut *mut c_char,
) -> *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            *vallen = 0;
            let k = bytes(key, keylen, "key")?;
            let value =
                either!(txn_mut(txn)?, t => t.get_for_update(k)).map_err(|e| e.to_string())?;
            Ok(crate::db::value_out(value, vallen))
        })
    }
}

/// The number of writes in the transaction (0 for null).
///
/// # Safety
/// `txn` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_count(txn: *mut strata_transaction_t) -> usize {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { txn.as_ref() }.map_or(0, |t| either!(&t.txn, t => t.len()))
}

/// Marks the transaction's state; `strata_transaction_rollback_to_savepoint` returns to it.
///
/// # Safety
/// Live `txn`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_set_savepoint(
    txn: *mut strata_transaction_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            either!(txn_mut(txn)?, t => t.set_save_point()).map_err(|e| e.to_string())
        })
    }
}

/// Undoes the writes since the newest save point, and forgets it; an error if there is none.
///
/// # Safety
/// Live `txn`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_rollback_to_savepoint(
    txn: *mut strata_transaction_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            either!(txn_mut(txn)?, t => t.rollback_to_save_point()).map_err(|e| e.to_string())
        })
    }
}

/// Commits: the writes become visible atomically (an optimistic transaction first checks
/// for conflicts; nothing is written if it fails).
///
/// # Safety
/// Live `txn`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_commit(
    txn: *mut strata_transaction_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            either!(txn_mut(txn)?, t => t.commit()).map_err(|e| e.to_string())
        })
    }
}

/// Discards the transaction's writes (and a pessimistic one's locks; a prepared one's
/// prepare record is rolled back too).
///
/// # Safety
/// Live `txn`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_rollback(
    txn: *mut strata_transaction_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || match txn_mut(txn)? {
            Txn::Optimistic(t) => t.rollback().map_err(|e| e.to_string()),
            Txn::Pessimistic(t) => t.rollback().map_err(|e| e.to_string()),
        })
    }
}

/// The pessimistic transaction behind a handle, or an error saying two-phase commit needs
/// one.
///
/// # Safety
/// As [`txn_mut`].
unsafe fn pessimistic<'a>(
    txn: *mut strata_transaction_t,
) -> Result<&'a mut Transaction<'static>, String> {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    match unsafe { txn_mut(txn) }? {
        Txn::Pessimistic(t) => Ok(t),
        Txn::Optimistic(_) => Err(
            "two-phase commit needs a pessimistic transaction (strata_transaction_begin); \
             this one is optimistic"
                .into(),
        ),
    }
}

/// Names a pessimistic transaction for two-phase commit (a name no other transaction of the
/// database holds); required before `strata_transaction_prepare`.
///
/// # Safety
/// Live `txn`; `name` NUL-terminated; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_set_name(
    txn: *mut strata_transaction_t,
    name: *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let name = text(name, "transaction name")?;
            pessimistic(txn)?.set_name(name).map_err(|e| e.to_string())
        })
    }
}

/// The transaction's name, malloc'd and NUL-terminated (release with `strata_free`), or
/// null if it has none.
///
/// # Safety
/// `txn` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_get_name(
    txn: *mut strata_transaction_t,
) -> *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            Ok(match txn_mut(txn)? {
                Txn::Pessimistic(t) => t.name().map_or(std::ptr::null_mut(), malloc_copy),
                Txn::Optimistic(_) => std::ptr::null_mut(),
            })
        })
    }
}

/// The first phase of two-phase commit: writes the transaction's batch to the WAL as
/// prepared, keeping its locks; after a crash it is recovered prepared, for
/// `strata_transactiondb_get_prepared_transactions`. Then commit or roll back.
///
/// # Safety
/// Live `txn`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_prepare(
    txn: *mut strata_transaction_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            pessimistic(txn)?.prepare().map_err(|e| e.to_string())
        })
    }
}

/// An iterator over the transaction's view: its own writes over the database (as of its
/// snapshot, if it has one), with the bounds of `options`. It follows the ordinary iterator
/// rules (`strata_iter_*`, released with `strata_iter_destroy`) and does not see writes the
/// transaction makes after it was created. Null and `*errptr` set on failure.
///
/// # Safety
/// Live `txn` and `options`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_create_iterator(
    txn: *mut strata_transaction_t,
    options: *const strata_readoptions_t,
    errptr: *mut *mut c_char,
) -> *mut strata_iterator_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options: ReadOptions = handle(options, "read options")?.options.clone();
            let iter = either!(txn_mut(txn)?, t => t.iter(&options)).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_iterator_t {
                iter: Iter::Txn(iter),
                refused: None,
            }))
        })
    }
}

/// An updatable cursor over family `cf` (the default family for a null `cf`) as the
/// transaction sees it, unpositioned. While it lives, use the transaction only through it;
/// destroy it with `strata_txn_cursor_destroy` before the transaction. Null and `*errptr`
/// set on failure.
///
/// # Safety
/// Live `txn` and `options`; `cf` null or live; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_create_cursor(
    txn: *mut strata_transaction_t,
    options: *const strata_readoptions_t,
    cf: *const strata_column_family_t,
    errptr: *mut *mut c_char,
) -> *mut strata_txn_cursor_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options: ReadOptions = handle(options, "read options")?.options.clone();
            // SAFETY: the caller uses the transaction only through the cursor while it lives,
            // and destroys the cursor first (the module's second rule), so this exclusive
            // borrow is the only use of the transaction for the cursor's life.
            let txn: &'static mut strata_transaction_t =
                txn.as_mut().ok_or("transaction is a null pointer")?;
            let cf = match cf.as_ref() {
                Some(cf) => cf.handle.clone(),
                None => txn.default_cf.clone(),
            };
            let cursor: Box<dyn UpdatableCursor> = match &mut txn.txn {
                Txn::Optimistic(t) => {
                    Box::new(t.cursor_cf(&cf, &options).map_err(|e| e.to_string())?)
                }
                Txn::Pessimistic(t) => {
                    Box::new(t.cursor_cf(&cf, &options).map_err(|e| e.to_string())?)
                }
            };
            Ok(into_handle(strata_txn_cursor_t { cursor }))
        })
    }
}

/// The family behind `cf`, or an error naming the missing handle.
///
/// # Safety
/// `cf` null or a live handle.
unsafe fn family<'a>(cf: *const strata_column_family_t) -> Result<&'a ColumnFamily, String> {
    // SAFETY: forwarded from the caller.
    unsafe { cf.as_ref() }
        .map(|cf| &cf.handle)
        .ok_or_else(|| "column family is a null pointer".into())
}

/// As `strata_transaction_put`, in column family `cf`.
///
/// # Safety
/// As `strata_transaction_put`; `cf` a live family handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_put_cf(
    txn: *mut strata_transaction_t,
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
            let cf = family(cf)?;
            let (k, v) = (bytes(key, keylen, "key")?, bytes(value, vallen, "value")?);
            either!(txn_mut(txn)?, t => t.put_cf(cf, k, v)).map_err(|e| e.to_string())
        })
    }
}

/// As `strata_transaction_delete`, in column family `cf`.
///
/// # Safety
/// As `strata_transaction_delete`; `cf` a live family handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_delete_cf(
    txn: *mut strata_transaction_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let cf = family(cf)?;
            let k = bytes(key, keylen, "key")?;
            either!(txn_mut(txn)?, t => t.delete_cf(cf, k)).map_err(|e| e.to_string())
        })
    }
}

/// As `strata_transaction_merge`, in column family `cf`.
///
/// # Safety
/// As `strata_transaction_merge`; `cf` a live family handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_merge_cf(
    txn: *mut strata_transaction_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    operand: *const c_char,
    oplen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let cf = family(cf)?;
            let (k, v) = (
                bytes(key, keylen, "key")?,
                bytes(operand, oplen, "operand")?,
            );
            either!(txn_mut(txn)?, t => t.merge_cf(cf, k, v)).map_err(|e| e.to_string())
        })
    }
}

/// As `strata_transaction_get` (or, with `for_update` 1, `strata_transaction_get_for_update`),
/// in column family `cf`.
///
/// # Safety
/// As `strata_transaction_get`; `cf` a live family handle.
#[no_mangle]
pub unsafe extern "C" fn strata_transaction_get_cf(
    txn: *mut strata_transaction_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    keylen: usize,
    for_update: c_uchar,
    vallen: *mut usize,
    errptr: *mut *mut c_char,
) -> *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            *vallen = 0;
            let cf = family(cf)?;
            let k = bytes(key, keylen, "key")?;
            let value = if for_update != 0 {
                either!(txn_mut(txn)?, t => t.get_for_update_cf(cf, k))
            } else {
                either!(txn_mut(txn)?, t => t.get_cf(cf, k))
            }
            .map_err(|e| e.to_string())?;
            Ok(crate::db::value_out(value, vallen))
        })
    }
}
