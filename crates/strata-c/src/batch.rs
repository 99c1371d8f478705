//! Write batches: updates, in any column families, applied atomically by `strata_write`.
//! A batch belongs to one thread at a time.
//!
//! The adding functions have no `errptr` (as RocksDB's): an update refused at the boundary
//! (a null pointer with a non-zero length) is kept as the batch's error, the first one only,
//! and `strata_write` (or a transaction's write of the batch) refuses the whole batch with
//! it, so that a batch is never applied without one of its updates. `strata_writebatch_clear`
//! forgets the error with the updates.

use std::ffi::c_char;

use strata::WriteBatch;

use crate::error::guard_quiet;
use crate::{bytes, into_handle, release, strata_column_family_t};

/// Updates applied together by `strata_write`.
pub struct strata_writebatch_t {
    pub(crate) batch: WriteBatch,
    /// The first update refused since the batch was created or cleared.
    pub(crate) error: Option<String>,
}

impl strata_writebatch_t {
    /// The batch to apply, or the error of an update it refused.
    pub(crate) fn to_apply(&self) -> Result<WriteBatch, String> {
        match &self.error {
            Some(e) => Err(format!("write batch refused: {e}")),
            None => Ok(self.batch.clone()),
        }
    }
}

/// Applies `update` to the batch behind `b` (and, for the `_cf` variants, the family); a
/// null handle is ignored.
///
/// # Safety
/// `b` must be null or a live batch used by no other thread during the call.
unsafe fn update(
    b: *mut strata_writebatch_t,
    update: impl FnOnce(&mut WriteBatch) -> Result<(), String>,
) {
    // SAFETY: the caller promises a live, unshared handle or null.
    if let Some(b) = unsafe { b.as_mut() } {
        let result = guard_quiet(Err("internal error in Strata (a panic)".into()), || {
            update(&mut b.batch)
        });
        if let Err(e) = result {
            b.error.get_or_insert(e);
        }
    }
}

/// A new, empty batch.
#[no_mangle]
pub extern "C" fn strata_writebatch_create() -> *mut strata_writebatch_t {
    into_handle(strata_writebatch_t {
        batch: WriteBatch::new(),
        error: None,
    })
}

/// Releases a batch.
///
/// # Safety
/// `b` must be null or a handle from `strata_writebatch_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_destroy(b: *mut strata_writebatch_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(b) }
}

/// Removes every update.
///
/// # Safety
/// `b` null or a live batch.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_clear(b: *mut strata_writebatch_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(b) = unsafe { b.as_mut() } {
        b.batch.clear();
        b.error = None;
    }
}

/// The number of updates in the batch (0 for null).
///
/// # Safety
/// `b` null or a live batch.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_count(b: *const strata_writebatch_t) -> usize {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { b.as_ref() }.map_or(0, |b| b.batch.len())
}

/// Adds: set `key` to `value`. A key or value over Strata's limits makes the batch invalid:
/// `strata_write` then refuses it with an error naming the limit.
///
/// # Safety
/// `b` null or a live batch; `key` and `value` readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_put(
    b: *mut strata_writebatch_t,
    key: *const c_char,
    klen: usize,
    value: *const c_char,
    vlen: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.put(bytes(key, klen, "key")?, bytes(value, vlen, "value")?);
            Ok(())
        })
    }
}

/// Adds: set `key` to `value` in column family `cf` (a null `cf` is ignored).
///
/// # Safety
/// As `strata_writebatch_put`; `cf` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_put_cf(
    b: *mut strata_writebatch_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    klen: usize,
    value: *const c_char,
    vlen: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let Some(cf) = (unsafe { cf.as_ref() }) else {
        return;
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.put_cf(
                &cf.handle,
                bytes(key, klen, "key")?,
                bytes(value, vlen, "value")?,
            );
            Ok(())
        })
    }
}

/// Adds: remove `key`.
///
/// # Safety
/// `b` null or a live batch; `key` readable for `klen`.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_delete(
    b: *mut strata_writebatch_t,
    key: *const c_char,
    klen: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.delete(bytes(key, klen, "key")?);
            Ok(())
        })
    }
}

/// Adds: remove `key` from column family `cf` (a null `cf` is ignored).
///
/// # Safety
/// As `strata_writebatch_delete`; `cf` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_delete_cf(
    b: *mut strata_writebatch_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    klen: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let Some(cf) = (unsafe { cf.as_ref() }) else {
        return;
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.delete_cf(&cf.handle, bytes(key, klen, "key")?);
            Ok(())
        })
    }
}

/// Adds: remove every key in [`begin`, `end`) (one range tombstone, whatever the number of
/// keys). `begin` after `end` makes the batch invalid: `strata_write` refuses it naming both.
///
/// # Safety
/// `b` null or a live batch; `begin` and `end` readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_delete_range(
    b: *mut strata_writebatch_t,
    begin: *const c_char,
    begin_len: usize,
    end: *const c_char,
    end_len: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.delete_range(
                bytes(begin, begin_len, "begin key")?,
                bytes(end, end_len, "end key")?,
            );
            Ok(())
        })
    }
}

/// Adds a blob to the batch's WAL record only (RocksDB's `rocksdb_writebatch_put_log_data`):
/// no sequence number, not counted, never applied; the change feed gives it back
/// (`strata_writebatch_iterate_log_data`).
///
/// # Safety
/// `b` null or a live batch; `blob` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_put_log_data(
    b: *mut strata_writebatch_t,
    blob: *const c_char,
    len: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.put_log_data(bytes(blob, len, "log data")?);
            Ok(())
        })
    }
}

/// Adds: remove every key in [`begin`, `end`) of column family `cf` (a null `cf` is ignored).
///
/// # Safety
/// As `strata_writebatch_delete_range`; `cf` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_delete_range_cf(
    b: *mut strata_writebatch_t,
    cf: *const strata_column_family_t,
    begin: *const c_char,
    begin_len: usize,
    end: *const c_char,
    end_len: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let Some(cf) = (unsafe { cf.as_ref() }) else {
        return;
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.delete_range_cf(
                &cf.handle,
                bytes(begin, begin_len, "begin key")?,
                bytes(end, end_len, "end key")?,
            );
            Ok(())
        })
    }
}

/// Adds: remove the single put of `key` (the caller promises `key` was put at most once
/// since it was last deleted).
///
/// # Safety
/// `b` null or a live batch; `key` readable for `klen`.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_single_delete(
    b: *mut strata_writebatch_t,
    key: *const c_char,
    klen: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.single_delete(bytes(key, klen, "key")?);
            Ok(())
        })
    }
}

/// Adds: merge `operand` into `key` with the family's merge operator.
///
/// # Safety
/// `b` null or a live batch; `key` and `operand` readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_merge(
    b: *mut strata_writebatch_t,
    key: *const c_char,
    klen: usize,
    operand: *const c_char,
    oplen: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.merge(bytes(key, klen, "key")?, bytes(operand, oplen, "operand")?);
            Ok(())
        })
    }
}

/// Adds: merge `operand` into `key` of column family `cf` (a null `cf` is ignored).
///
/// # Safety
/// As `strata_writebatch_merge`; `cf` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_merge_cf(
    b: *mut strata_writebatch_t,
    cf: *const strata_column_family_t,
    key: *const c_char,
    klen: usize,
    operand: *const c_char,
    oplen: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    let Some(cf) = (unsafe { cf.as_ref() }) else {
        return;
    };
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        update(b, |batch| {
            batch.merge_cf(
                &cf.handle,
                bytes(key, klen, "key")?,
                bytes(operand, oplen, "operand")?,
            );
            Ok(())
        })
    }
}
