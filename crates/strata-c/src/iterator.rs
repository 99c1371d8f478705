//! Iterators: a cursor over a database or a column family, in both directions. An iterator
//! belongs to one thread at a time; the key and value it returns stay valid until it moves.
//! A read error makes it invalid; `strata_iter_get_error` then says what it was. A seek
//! refused at the boundary (a null key with a non-zero length) does the same: the iterator
//! is invalid, and stays so until a seek that is accepted.

use std::ffi::{c_char, c_uchar};

use strata::{DbIterator, TxnIterator};

use crate::error::{guard, guard_quiet, set_error};
use crate::{
    bytes, handle, into_handle, release, strata_column_family_t, strata_readoptions_t, strata_t,
};

/// The engine's iterator behind a handle: over a database, or over a transaction (its own
/// writes over the database's).
#[expect(
    clippy::large_enum_variant,
    reason = "one iterator per handle, and the handle is boxed already"
)]
pub(crate) enum Iter {
    Db(DbIterator),
    Txn(TxnIterator),
}

/// The same call on either kind of iterator.
macro_rules! either {
    ($iter:expr, $i:ident => $call:expr) => {
        match $iter {
            Iter::Db($i) => $call,
            Iter::Txn($i) => $call,
        }
    };
}

impl Iter {
    fn valid(&self) -> bool {
        either!(self, i => i.valid())
    }
    fn key(&self) -> &[u8] {
        either!(self, i => i.key())
    }
    fn value(&self) -> &[u8] {
        either!(self, i => i.value())
    }
    fn status(&self) -> strata::Result<()> {
        either!(self, i => i.status())
    }
    fn seek(&mut self, target: &[u8]) {
        either!(self, i => i.seek(target))
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        either!(self, i => i.seek_for_prev(target))
    }
    fn seek_to_first(&mut self) {
        either!(self, i => i.seek_to_first())
    }
    fn seek_to_last(&mut self) {
        either!(self, i => i.seek_to_last())
    }
    fn next(&mut self) {
        either!(self, i => i.next())
    }
    fn prev(&mut self) {
        either!(self, i => i.prev())
    }
}

/// A cursor over a database, one of its column families, or a transaction.
pub struct strata_iterator_t {
    pub(crate) iter: Iter,
    /// The last seek refused at the boundary, cleared by the next accepted move.
    pub(crate) refused: Option<String>,
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let options = handle(options, "read options")?.options.clone();
            Ok(into_handle(strata_iterator_t {
                iter: Iter::Db(db.iter(&options)),
                refused: None,
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let options = handle(options, "read options")?.options.clone();
            let cf = &handle(cf, "column family")?.handle;
            let iter = db.iter_cf(cf, &options).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_iterator_t {
                iter: Iter::Db(iter),
                refused: None,
            }))
        })
    }
}

/// Releases an iterator.
///
/// # Safety
/// `it` null or from a `strata_create_iterator*` function, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_destroy(it: *mut strata_iterator_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(it) }
}

/// Moves the iterator behind `it` with `step`; a null handle is ignored.
///
/// # Safety
/// `it` null or a live iterator used by no other thread during the call.
unsafe fn step(it: *mut strata_iterator_t, step: impl FnOnce(&mut Iter)) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        seek(it, |i| {
            step(i);
            Ok(())
        })
    }
}

/// As [`step`], for a move that may be refused before it reaches the iterator.
///
/// # Safety
/// As for [`step`].
unsafe fn seek(it: *mut strata_iterator_t, seek: impl FnOnce(&mut Iter) -> Result<(), String>) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(it) = unsafe { it.as_mut() } {
        let result = guard_quiet(Err("internal error in Strata (a panic)".into()), || {
            seek(&mut it.iter)
        });
        it.refused = result.err();
    }
}

/// 1 if the iterator is at an entry, else 0.
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_valid(it: *const strata_iterator_t) -> c_uchar {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { it.as_ref() }.is_some_and(|it| it.refused.is_none() && it.iter.valid()) as c_uchar
}

/// Moves to the first entry.
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_seek_to_first(it: *mut strata_iterator_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { step(it, Iter::seek_to_first) }
}

/// Moves to the last entry.
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_seek_to_last(it: *mut strata_iterator_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { step(it, Iter::seek_to_last) }
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        seek(it, |i| {
            i.seek(bytes(key, klen, "seek key")?);
            Ok(())
        })
    }
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        seek(it, |i| {
            i.seek_for_prev(bytes(key, klen, "seek key")?);
            Ok(())
        })
    }
}

/// Moves to the next entry (the iterator must be valid).
///
/// # Safety
/// `it` null or a live iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_next(it: *mut strata_iterator_t) {
    // A refused seek left the iterator invalid: it does not move until a seek is accepted.
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if unsafe { it.as_ref() }.is_some_and(|it| it.refused.is_some()) {
        return;
    }
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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
    // A refused seek left the iterator invalid: it does not move until a seek is accepted.
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if unsafe { it.as_ref() }.is_some_and(|it| it.refused.is_some()) {
        return;
    }
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let key = unsafe { it.as_ref() }
        .filter(|it| it.refused.is_none() && it.iter.valid())
        .map(|it| it.iter.key());
    // SAFETY: the pointers are as the function's `# Safety` section requires.
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let value = unsafe { it.as_ref() }
        .filter(|it| it.refused.is_none() && it.iter.valid())
        .map(|it| it.iter.value());
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { borrowed_out(value, vlen) }
}

/// Hands C bytes the iterator owns.
///
/// # Safety
/// `len` a valid pointer.
pub(crate) unsafe fn borrowed_out(bytes: Option<&[u8]>, len: *mut usize) -> *const c_char {
    let (ptr, n) = bytes.map_or((std::ptr::null(), 0), |b| (b.as_ptr().cast(), b.len()));
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { *len = n };
    ptr
}

/// Re-pins a database iterator to the current state of its database (RocksDB's
/// `rocksdb_iter_refresh`): it then sees the writes made (or, on a secondary, caught up)
/// since it was created, keeps its bounds and read options, and is unpositioned. `*errptr`
/// set, the iterator unchanged, for a transaction's iterator or a dropped column family.
///
/// # Safety
/// `it` null or a live iterator; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_iter_refresh(it: *mut strata_iterator_t, errptr: *mut *mut c_char) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let it = it.as_mut().ok_or("iterator is a null pointer")?;
            match &mut it.iter {
                Iter::Db(i) => i.refresh().map_err(|e| e.to_string())?,
                Iter::Txn(_) => {
                    return Err("a transaction's iterator cannot be refreshed".to_string())
                }
            }
            it.refused = None;
            Ok(())
        })
    }
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
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(it) = unsafe { it.as_ref() } {
        if let Some(refused) = &it.refused {
            unsafe { set_error(errptr, refused) };
        } else if let Err(e) = it.iter.status() {
            // SAFETY: the pointers are as the function's `# Safety` section requires.
            unsafe { set_error(errptr, e) };
        }
    }
}
