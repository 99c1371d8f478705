//! Options of single reads, iterators and writes: `strata_readoptions_t` (a snapshot,
//! iteration bounds, readahead) and `strata_writeoptions_t` (sync, skipping the WAL). A
//! setter given a null handle does nothing.

use std::ffi::{c_char, c_uchar};

use strata::{ReadOptions, WriteOptions};

use crate::{bytes, into_handle, release};

/// Options for reads and iterators: a snapshot and iteration bounds.
pub struct strata_readoptions_t {
    pub(crate) options: ReadOptions,
}

/// Options for writes: sync, and skipping the WAL.
pub struct strata_writeoptions_t {
    pub(crate) options: WriteOptions,
}

/// An iteration bound: none for a null `key` (which is how C removes a bound, whatever
/// `len`), else a copy of its `len` bytes.
///
/// # Safety
/// `key` null or pointing to `len` readable bytes.
unsafe fn bound(key: *const c_char, len: usize) -> Option<Vec<u8>> {
    // SAFETY: forwarded; `bytes` fails only for a null pointer, excluded here.
    (!key.is_null())
        .then(|| unsafe { bytes(key, len, "bound") }.ok().map(<[u8]>::to_vec))
        .flatten()
}

/// New read options: no snapshot (reads see the latest data), no bounds.
#[no_mangle]
pub extern "C" fn strata_readoptions_create() -> *mut strata_readoptions_t {
    into_handle(strata_readoptions_t {
        options: ReadOptions::default(),
    })
}

/// Releases read options (and their hold on a snapshot).
///
/// # Safety
/// `opt` must be null or a handle from `strata_readoptions_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_destroy(opt: *mut strata_readoptions_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(opt) }
}

/// Reads through these options see the database as of `snapshot`; null reads the latest.
///
/// # Safety
/// `opt` must be null or a live handle; `snapshot` null or a live snapshot.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_set_snapshot(
    opt: *mut strata_readoptions_t,
    snapshot: *const crate::strata_snapshot_t,
) {
    // SAFETY: the caller promises live handles or nulls.
    let (Some(o), snap) = (unsafe { opt.as_mut() }, unsafe { snapshot.as_ref() }) else {
        return;
    };
    o.options.snapshot = snap.map(|s| s.snapshot.clone());
}

/// Iterators see no key below `key` (inclusive); a null `key` removes the bound.
///
/// # Safety
/// `opt` must be null or a live handle; `key` null or `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_set_iterate_lower_bound(
    opt: *mut strata_readoptions_t,
    key: *const c_char,
    len: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.lower_bound = unsafe { bound(key, len) };
    }
}

/// Iterators see no key at or above `key` (exclusive); a null `key` removes the bound.
///
/// # Safety
/// `opt` must be null or a live handle; `key` null or `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_set_iterate_upper_bound(
    opt: *mut strata_readoptions_t,
    key: *const c_char,
    len: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.upper_bound = unsafe { bound(key, len) };
    }
}

/// Bytes each iterator reads from a table file at a time, from its first read on (RocksDB's
/// `readahead_size`); 0, the default, lets the window grow as a scan goes on.
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_set_readahead_size(
    opt: *mut strata_readoptions_t,
    bytes: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.readahead_size = bytes;
    }
}

/// Whether the data blocks reads bring in from table files go into the block cache
/// (RocksDB's `fill_cache`; nonzero, the default, yes).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_set_fill_cache(
    opt: *mut strata_readoptions_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.fill_cache = v != 0;
    }
}

/// Whether reads check the checksum of each data block they bring in from a table file
/// (RocksDB's `verify_checksums`; nonzero, the default, yes).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_set_verify_checksums(
    opt: *mut strata_readoptions_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.verify_checksums = v != 0;
    }
}

/// New write options: no sync, WAL on.
#[no_mangle]
pub extern "C" fn strata_writeoptions_create() -> *mut strata_writeoptions_t {
    into_handle(strata_writeoptions_t {
        options: WriteOptions::default(),
    })
}

/// Releases write options.
///
/// # Safety
/// `opt` must be null or a handle from `strata_writeoptions_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_writeoptions_destroy(opt: *mut strata_writeoptions_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(opt) }
}

/// Writes return only once durable (fdatasync of the WAL) (0 or 1).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_writeoptions_set_sync(opt: *mut strata_writeoptions_t, v: c_uchar) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.sync = v != 0;
    }
}

/// Writes skip the WAL: a crash loses them until they are flushed (0 or 1).
///
/// # Safety
/// `opt` must be null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_writeoptions_disable_wal(
    opt: *mut strata_writeoptions_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.disable_wal = v != 0;
    }
}
