//! Values read in place (RocksDB's `rocksdb_get_pinned`): `strata_get_pinned` returns a
//! `strata_pinnableslice_t` that holds the value where the engine read it (a table block in
//! the block cache, or a copy when it came from a memtable), without copying it to a malloc'd
//! buffer.
//!
//! Ownership: the slice is the caller's, released with `strata_pinnableslice_destroy`; the
//! bytes `strata_pinnableslice_value` returns belong to it and stay valid until then. A slice
//! may outlive its database's handle (it keeps its block alive), but is best released first.

use std::ffi::c_char;

use strata::PinnedValue;

use crate::error::guard;
use crate::{bytes, handle, into_handle, release, strata_readoptions_t, strata_t};

/// A value held in place.
pub struct strata_pinnableslice_t {
    value: PinnedValue,
}

/// The value of `key`, pinned; null when the key is absent or on an error (then `*errptr`
/// is set). Release it with `strata_pinnableslice_destroy`.
///
/// # Safety
/// Live `db` and `options`; `key` readable for `keylen`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_get_pinned(
    db: *mut strata_t,
    options: *const strata_readoptions_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) -> *mut strata_pinnableslice_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "read options")?.options;
            let value = db
                .get_pinned_opt(bytes(key, keylen, "key")?, options)
                .map_err(|e| e.to_string())?;
            Ok(value.map_or(std::ptr::null_mut(), |value| {
                into_handle(strata_pinnableslice_t { value })
            }))
        })
    }
}

/// The pinned bytes and their length in `*vlen`, valid until the slice is destroyed; null
/// with `*vlen` 0 for a null slice.
///
/// # Safety
/// `slice` null or a live slice; `vlen` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn strata_pinnableslice_value(
    slice: *const strata_pinnableslice_t,
    vlen: *mut usize,
) -> *const c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let value = unsafe { slice.as_ref() }.map(|s| &*s.value);
    unsafe { crate::iterator::borrowed_out(value, vlen) }
}

/// Releases a pinned value.
///
/// # Safety
/// `slice` null or from `strata_get_pinned`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_pinnableslice_destroy(slice: *mut strata_pinnableslice_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(slice) }
}
