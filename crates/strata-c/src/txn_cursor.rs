//! Updatable cursors of transactions (`strata_txn_cursor_*`): the cursor's moves, its
//! current entry, and the update or delete of that entry through its transaction. A cursor
//! is made by `strata_transaction_create_cursor` (`txn.rs`), whose rules it keeps: while it
//! lives its transaction is used only through it, and it is destroyed before the
//! transaction.

use std::ffi::{c_char, c_uchar};

use strata::UpdatableCursor;

use crate::error::guard;
use crate::{bytes, release};

/// A cursor whose current entry can be updated or deleted through its transaction.
pub struct strata_txn_cursor_t {
    pub(crate) cursor: Box<dyn UpdatableCursor>,
}

/// Releases a cursor; its transaction may be used again.
///
/// # Safety
/// `cursor` null or from `strata_transaction_create_cursor`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_destroy(cursor: *mut strata_txn_cursor_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(cursor) }
}

/// Applies `step` to the cursor behind `c`; a null handle is ignored.
///
/// # Safety
/// `c` null or a live cursor used by no other thread during the call.
unsafe fn step(c: *mut strata_txn_cursor_t, step: impl FnOnce(&mut dyn UpdatableCursor)) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(c) = unsafe { c.as_mut() } {
        crate::error::guard_quiet((), || step(c.cursor.as_mut()));
    }
}

/// 1 if the cursor is at an entry, else 0.
///
/// # Safety
/// `c` null or a live cursor.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_valid(c: *const strata_txn_cursor_t) -> c_uchar {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { c.as_ref() }.is_some_and(|c| c.cursor.valid()) as c_uchar
}

/// Moves to the first entry.
///
/// # Safety
/// `c` null or a live cursor.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_seek_to_first(c: *mut strata_txn_cursor_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { step(c, |c| c.seek_to_first()) }
}

/// Moves to the last entry.
///
/// # Safety
/// `c` null or a live cursor.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_seek_to_last(c: *mut strata_txn_cursor_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { step(c, |c| c.seek_to_last()) }
}

/// Moves to the first entry at or after `key`. A null `key` with a non-zero length is
/// refused with `*errptr`, and the cursor does not move.
///
/// # Safety
/// `c` null or a live cursor; `key` readable for `klen`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_seek(
    c: *mut strata_txn_cursor_t,
    key: *const c_char,
    klen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let key = bytes(key, klen, "seek key")?;
            step(c, |c| c.seek(key));
            Ok(())
        })
    }
}

/// Moves to the last entry at or before `key`; errors as `strata_txn_cursor_seek`.
///
/// # Safety
/// As `strata_txn_cursor_seek`.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_seek_for_prev(
    c: *mut strata_txn_cursor_t,
    key: *const c_char,
    klen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let key = bytes(key, klen, "seek key")?;
            step(c, |c| c.seek_for_prev(key));
            Ok(())
        })
    }
}

/// Moves to the next entry (if valid).
///
/// # Safety
/// `c` null or a live cursor.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_next(c: *mut strata_txn_cursor_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        step(c, |c| {
            if c.valid() {
                c.next()
            }
        })
    }
}

/// Moves to the previous entry (if valid).
///
/// # Safety
/// `c` null or a live cursor.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_prev(c: *mut strata_txn_cursor_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        step(c, |c| {
            if c.valid() {
                c.prev()
            }
        })
    }
}

/// The current key, length in `*klen`, valid until the cursor moves or changes the entry;
/// null with `*klen` 0 when not valid.
///
/// # Safety
/// `c` null or a live cursor; `klen` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_key(
    c: *const strata_txn_cursor_t,
    klen: *mut usize,
) -> *const c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let key = unsafe { c.as_ref() }
        .filter(|c| c.cursor.valid())
        .map(|c| c.cursor.key());
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { crate::iterator::borrowed_out(key, klen) }
}

/// The current value, length in `*vlen`, valid as the key of `strata_txn_cursor_key`.
///
/// # Safety
/// `c` null or a live cursor; `vlen` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_value(
    c: *const strata_txn_cursor_t,
    vlen: *mut usize,
) -> *const c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let value = unsafe { c.as_ref() }
        .filter(|c| c.cursor.valid())
        .map(|c| c.cursor.value());
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { crate::iterator::borrowed_out(value, vlen) }
}

/// Sets the current entry's value in the transaction; the cursor stays on the entry and
/// shows the new value. An error if the cursor is not valid.
///
/// # Safety
/// Live `c`; `value` readable for `vallen`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_update(
    c: *mut strata_txn_cursor_t,
    value: *const c_char,
    vallen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let c = c.as_mut().ok_or("cursor is a null pointer")?;
            // The engine's cursor requires an entry; say so rather than reach its assertion.
            if !c.cursor.valid() {
                return Err("the cursor is not at an entry".into());
            }
            let value = bytes(value, vallen, "value")?;
            c.cursor.update(value).map_err(|e| e.to_string())
        })
    }
}

/// Deletes the current entry in the transaction; the cursor stays on its key, with an empty
/// value, until it moves. An error if the cursor is not valid.
///
/// # Safety
/// Live `c`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_delete(
    c: *mut strata_txn_cursor_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let c = c.as_mut().ok_or("cursor is a null pointer")?;
            // The engine's cursor requires an entry; say so rather than reach its assertion.
            if !c.cursor.valid() {
                return Err("the cursor is not at an entry".into());
            }
            c.cursor.delete().map_err(|e| e.to_string())
        })
    }
}

/// Sets `*errptr` if the cursor stopped on a read error.
///
/// # Safety
/// `c` null or a live cursor; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_txn_cursor_get_error(
    c: *const strata_txn_cursor_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(c) = unsafe { c.as_ref() } {
        if let Err(e) = c.cursor.status() {
            unsafe { crate::error::set_error(errptr, e) };
        }
    }
}
