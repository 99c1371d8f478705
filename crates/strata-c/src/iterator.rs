//! Iterators: a cursor over a database or a column family, in both directions. An iterator
//! belongs to one thread at a time; the key and value it returns stay valid until it moves.
//! A read error makes it invalid; `strata_iter_get_error` then says what it was.

use std::ffi::{c_char, c_uchar};

use strata::DbIterator;

use crate::error::{guard, guard_quiet, set_error};
use crate::{
    bytes, handle, into_handle, release, strata_column_family_t, strata_readoptions_t, strata_t,
};

/// A cursor over a database or one of its column families.
pub struct strata_iterator_t {
    iter: DbIterator,
}

/// A cursor over the default family, unpositioned: seek it first. Null for a null handle.
///
/// # Safety
/// Live `db` and `options`.
#[no_mangle]
pub unsafe extern "C" fn strata_create_iterator(
    db: *mut strata_t,
    options: *const strata_readoptions_t,
) -> *mut strata_iterator_t {
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let options = handle(options, "read options")?.options.clone();
            Ok(into_handle(strata_iterator_t {
                iter: db.iter(&options),
            }))
        })
    }
}

/// A cursor over column family `cf`, unpositioned; null and `*errptr` set for a dropped
/// family.
///
/// # Safety
/// Live `db`, `options` and `cf`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_create_iterator_cf(
    db: *mut strata_t,
    options: *const strata_readoptions_t,
    cf: *const strata_column_family_t,
    errptr: *mut *mut c_char,
) -> *mut strata_iterator_t {
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let options = handle(options, "read options")?.options.clone();
            let cf = &handle(cf, "column family")?.handle;
            let iter = db.iter_cf(cf, &options).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_iterator_t { iter }))
        })
    }
}

/// Releases an iterator.
///
/// # Safety
/// `it` null or from a `strata_create_iterator*` function, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_destroy(it: *mut strata_iterator_t) {
    unsafe { release(it) }
}

/// Moves the iterator behind `it` with `step`; a null handle is ignored.
///
/// # Safety
/// `it` null or a live iterator used by no other thread during the call.
unsafe fn step(it: *mut strata_iterator_t, step: impl FnOnce(&mut DbIterator)) {
    if let Some(it) = unsafe { it.as_mut() } {
        guard_quiet((), || step(&mut it.iter));
    }
}

/// 1 if the iterator is at an entry, else 0.
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_valid(it: *const strata_iterator_t) -> c_uchar {
    unsafe { it.as_ref() }.is_some_and(|it| it.iter.valid()) as c_uchar
}

/// Moves to the first entry.
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_seek_to_first(it: *mut strata_iterator_t) {
    unsafe { step(it, DbIterator::seek_to_first) }
}

/// Moves to the last entry.
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_seek_to_last(it: *mut strata_iterator_t) {
    unsafe { step(it, DbIterator::seek_to_last) }
}

/// Moves to the first entry at or after `key`.
///
/// # Safety
/// `it` null or a live iterator; `key` readable for `klen`.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_seek(
    it: *mut strata_iterator_t,
    key: *const c_char,
    klen: usize,
) {
    unsafe { step(it, |i| i.seek(bytes(key, klen))) }
}

/// Moves to the last entry at or before `key`.
///
/// # Safety
/// `it` null or a live iterator; `key` readable for `klen`.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_seek_for_prev(
    it: *mut strata_iterator_t,
    key: *const c_char,
    klen: usize,
) {
    unsafe { step(it, |i| i.seek_for_prev(bytes(key, klen))) }
}

/// Moves to the next entry (the iterator must be valid).
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_next(it: *mut strata_iterator_t) {
    unsafe {
        step(it, |i| {
            if i.valid() {
                i.next()
            }
        })
    }
}

/// Moves to the previous entry (the iterator must be valid).
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_prev(it: *mut strata_iterator_t) {
    unsafe {
        step(it, |i| {
            if i.valid() {
                i.prev()
            }
        })
    }
}

/// The current key and its length in `*klen`, valid until the iterator moves; null with
/// `*klen` 0 when the iterator is not valid.
///
/// # Safety
/// `it` null or a live iterator; `klen` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_key(
    it: *const strata_iterator_t,
    klen: *mut usize,
) -> *const c_char {
    let key = unsafe { it.as_ref() }
        .filter(|it| it.iter.valid())
        .map(|it| it.iter.key());
    unsafe { borrowed_out(key, klen) }
}

/// The current value and its length in `*vlen`, valid until the iterator moves; null with
/// `*vlen` 0 when the iterator is not valid.
///
/// # Safety
/// `it` null or a live iterator; `vlen` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_value(
    it: *const strata_iterator_t,
    vlen: *mut usize,
) -> *const c_char {
    let value = unsafe { it.as_ref() }
        .filter(|it| it.iter.valid())
        .map(|it| it.iter.value());
    unsafe { borrowed_out(value, vlen) }
}

/// Hands C bytes the iterator owns.
///
/// # Safety
/// `len` a valid pointer.
unsafe fn borrowed_out(bytes: Option<&[u8]>, len: *mut usize) -> *const c_char {
    let (ptr, n) = bytes.map_or((std::ptr::null(), 0), |b| (b.as_ptr().cast(), b.len()));
    unsafe { *len = n };
    ptr
}

/// Sets `*errptr` if the iterator stopped on an error (a corrupt or unreadable table).
///
/// # Safety
/// `it` null or a live iterator; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_get_error(
    it: *const strata_iterator_t,
    errptr: *mut *mut c_char,
) {
    if let Some(it) = unsafe { it.as_ref() } {
        if let Err(e) = it.iter.status() {
            unsafe { set_error(errptr, e) };
        }
    }
}
