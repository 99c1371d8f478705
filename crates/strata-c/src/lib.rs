//! Strata's C API, in the style of RocksDB's `c.h`: opaque handles created and destroyed by
//! pairs of functions, keys and values as pointer and length, errors through a `char**
//! errptr` argument. `include/strata.h` is generated from this crate by cbindgen.
//!
//! Ownership, for every function:
//!
//! - A handle returned by a `*_create`, `*_open*` or `strata_create_*` function belongs to the
//!   caller, who releases it with the matching `*_destroy`, `strata_close`,
//!   `strata_release_snapshot` or `strata_iter_destroy`, exactly once. Iterators, snapshots
//!   and column family handles may outlive nothing: release them before closing the database.
//! - Bytes passed in (keys, values, names, paths) are borrowed for the call only and copied
//!   if kept. A length of 0 allows a null pointer; a null pointer with a non-zero length is
//!   refused with an error (`*errptr`, or the batch's or iterator's error).
//! - Bytes returned by value (`strata_get`, `strata_property_value`, error messages, the
//!   names of `strata_list_column_families`) are malloc'd and belong to the caller: release
//!   them with `strata_free` (or `free`).
//! - Bytes returned by reference (`strata_iter_key`, `strata_iter_value`) belong to the
//!   iterator and stay valid until it moves or is destroyed.
//! - `errptr`: on failure, `*errptr` is set to a malloc'd NUL-terminated message (a message
//!   already there is freed first) and the function returns a null pointer, 0 or nothing; on
//!   success `*errptr` is left alone. `errptr` may be null to ignore errors.
//!
//! - Callback objects (merge operators, comparators, compaction filters, event listeners) are
//!   shared: see `callback.rs`. Transactions and cursors borrow: see `txn.rs`.
//!
//! Handles may be used from several threads at once, except iterators, write batches,
//! transactions, cursors, table file writers and backup engines, which belong to one thread
//! at a time. A panic inside Strata is caught at the boundary and
//! reported as an error; it never unwinds into C.

#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]

mod backup;
mod batch;
mod batch_read;
mod callback;
mod column_family;
mod compaction_filter;
mod comparator;
mod db;
mod error;
mod file_ops;
mod iterator;
mod listener;
mod livefiles;
mod merge_operator;
mod online_options;
mod options;
mod options_compression;
mod options_ext;
mod pinned;
mod rw_options;
mod sst;
mod stats;
mod transactiondb;
mod txn;
mod txn_cursor;
mod updates;

pub use backup::*;
pub use batch::*;
pub use batch_read::*;
pub use callback::strata_destructor_fn;
pub use column_family::*;
pub use compaction_filter::*;
pub use comparator::*;
pub use db::*;
pub use error::strata_free;
pub use file_ops::*;
pub use iterator::*;
pub use listener::*;
pub use livefiles::*;
pub use merge_operator::*;
pub use options::*;
pub use options_compression::*;
pub use options_ext::*;
pub use pinned::*;
pub use rw_options::*;
pub use sst::*;
pub use stats::*;
pub use txn::*;
pub use updates::*;

use std::ffi::{c_char, CStr};

/// The `count` elements at `ptr`: empty for a zero count (the pointer may then be null),
/// `None` for a null pointer with a non-zero count, which the callers refuse with their own
/// message.
///
/// # Safety
/// `ptr` must be null or point to `count` initialised elements that stay valid and
/// unchanged for `'a`.
unsafe fn slice<'a, T>(ptr: *const T, count: usize) -> Option<&'a [T]> {
    if count == 0 {
        return Some(&[]);
    }
    // SAFETY: the caller promises `count` elements at a non-null `ptr`.
    (!ptr.is_null()).then(|| unsafe { std::slice::from_raw_parts(ptr, count) })
}

/// The bytes at `ptr`, `len` long; empty for a zero length (the pointer may then be null).
/// A null pointer with a non-zero length is refused with an error naming `what`: treating
/// it as empty would write or look up a key the caller did not mean.
///
/// # Safety
/// `ptr` must be null or point to `len` readable bytes that stay valid and unchanged for
/// `'a`.
pub(crate) unsafe fn bytes<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a [u8], String> {
    // SAFETY: forwarded from the caller.
    unsafe { slice(ptr.cast::<u8>(), len) }
        .ok_or_else(|| format!("{what} is a null pointer with length {len}"))
}

/// An optional key such as a range bound: `None` for a null `ptr`, whatever `len` (how C
/// leaves a bound open), else the bytes as [`bytes`] reads them.
///
/// # Safety
/// As for [`bytes`].
pub(crate) unsafe fn optional_bytes<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a [u8]>, String> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded from the caller.
    unsafe { bytes(ptr, len, what) }.map(Some)
}

/// The `count` elements at `ptr` (an array C passes with its length); empty for a zero
/// count (the pointer may then be null). A null pointer with a non-zero count is refused
/// with an error naming `what` and the count of `items` (`file_list is a null pointer with
/// 2 files`).
///
/// # Safety
/// `ptr` must be null or point to `count` initialised elements that stay valid and
/// unchanged for `'a`.
pub(crate) unsafe fn array<'a, T>(
    ptr: *const T,
    count: usize,
    what: &str,
    items: &str,
) -> Result<&'a [T], String> {
    // SAFETY: forwarded from the caller.
    unsafe { slice(ptr, count) }
        .ok_or_else(|| format!("{what} is a null pointer with {count} {items}"))
}

/// The NUL-terminated string at `ptr` as UTF-8, or an error naming `what`.
///
/// # Safety
/// `ptr` must be null or point to a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn text<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, String> {
    if ptr.is_null() {
        return Err(format!("{what} is a null pointer"));
    }
    // SAFETY: the caller promises a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str()
        .map_err(|_| format!("{what} is not valid UTF-8: {:?}", s.to_string_lossy()))
}

/// A reference to the object behind a handle, or an error naming the handle.
///
/// # Safety
/// `ptr` must be null or a live handle of type `T` from this library.
pub(crate) unsafe fn handle<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, String> {
    // SAFETY: the caller promises a live handle or null.
    unsafe { ptr.as_ref() }.ok_or_else(|| format!("{what} is a null pointer"))
}

/// Whether a `_cf` function was given a family: a null `cf` is refused in `*errptr`
/// (`column family is a null pointer`), since the shared body of the `_cf` function and its
/// default-family twin reads null as the default family.
///
/// # Safety
/// `errptr` as for [`error::set_error`].
pub(crate) unsafe fn family_given<T>(cf: *const T, errptr: *mut *mut c_char) -> bool {
    if cf.is_null() {
        // SAFETY: forwarded from the caller.
        unsafe { error::set_error(errptr, "column family is a null pointer") };
    }
    !cf.is_null()
}

/// Moves `value` to the heap and hands C its pointer.
pub(crate) fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Takes back a handle from [`into_handle`] and drops it; null is ignored.
///
/// # Safety
/// `ptr` must be null or a handle from `into_handle::<T>` not yet released.
pub(crate) unsafe fn release<T>(ptr: *mut T) {
    if !ptr.is_null() {
        // SAFETY: the caller promises the pointer came from `Box::into_raw` and is released once.
        drop(unsafe { Box::from_raw(ptr) });
    }
}
