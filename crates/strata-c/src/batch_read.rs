//! Reading a write batch back, update by update, through callbacks: RocksDB's
//! `rocksdb_writebatch_iterate` (puts and deletes of every family),
//! `rocksdb_writebatch_iterate_cf` (with the family id and merges), and
//! `strata_writebatch_iterate_entries`, which reports every kind of update (range deletions
//! and single deletes too) with a `STRATA_BATCH_*` code, and
//! `strata_writebatch_iterate_log_data` for the blobs of `strata_writebatch_put_log_data`. A
//! batch of the change feed (`strata_wal_iter_get_batch`) is read this way.
//!
//! Callbacks are called on the calling thread, in the batch's order, with bytes valid for the
//! call only; they must not unwind. A null callback skips the updates it would get. Family
//! ids are those of `strata_column_family_handle_get_id` (0: the default family).

use std::ffi::{c_char, c_int, c_void};

use strata::{BatchEntry, ValueKind};

use crate::error::guard;
use crate::{handle, strata_writebatch_t};

/// `strata_writebatch_iterate_entries`' kind: set the key to the value.
pub const STRATA_BATCH_PUT: c_int = 0;
/// Remove the key.
pub const STRATA_BATCH_DELETE: c_int = 1;
/// Remove the key's one older put (the writer promised there is at most one).
pub const STRATA_BATCH_SINGLE_DELETE: c_int = 2;
/// Merge the value, an operand, into the key.
pub const STRATA_BATCH_MERGE: c_int = 3;
/// Remove every key from the key (included) to the value (excluded).
pub const STRATA_BATCH_RANGE_DELETION: c_int = 4;

/// A put: `(state, key, klen, value, vlen)`.
pub type strata_batch_put_fn =
    Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize)>;
/// A deletion: `(state, key, klen)`.
pub type strata_batch_delete_fn = Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize)>;
/// A put or merge in a family: `(state, cf_id, key, klen, value, vlen)`.
pub type strata_batch_put_cf_fn =
    Option<unsafe extern "C" fn(*mut c_void, u32, *const c_char, usize, *const c_char, usize)>;
/// A deletion in a family: `(state, cf_id, key, klen)`.
pub type strata_batch_delete_cf_fn =
    Option<unsafe extern "C" fn(*mut c_void, u32, *const c_char, usize)>;
/// Any update: `(state, kind, cf_id, key, klen, value, vlen)`, `kind` a `STRATA_BATCH_*`;
/// the value is empty for deletions and the end key for a range deletion.
pub type strata_batch_entry_fn = Option<
    unsafe extern "C" fn(*mut c_void, c_int, u32, *const c_char, usize, *const c_char, usize),
>;

/// A log-data blob: `(state, blob, len)`.
pub type strata_batch_log_data_fn = Option<unsafe extern "C" fn(*mut c_void, *const c_char, usize)>;

/// The `STRATA_BATCH_*` code of an update's kind; None for a kind a batch read back never
/// holds (a blob reference: the change feed refuses those batches).
fn kind_code(kind: ValueKind) -> Option<c_int> {
    match kind {
        ValueKind::Put => Some(STRATA_BATCH_PUT),
        ValueKind::Delete => Some(STRATA_BATCH_DELETE),
        ValueKind::SingleDelete => Some(STRATA_BATCH_SINGLE_DELETE),
        ValueKind::Merge => Some(STRATA_BATCH_MERGE),
        ValueKind::RangeDeletion => Some(STRATA_BATCH_RANGE_DELETION),
        ValueKind::BlobIndex => None,
    }
}

/// Calls `each` on the updates of the batch behind `b`, in order; a malformed record ends
/// the walk with its message. Nothing for a null batch.
///
/// # Safety
/// `b` null or a live batch.
unsafe fn each_entry(
    b: *const strata_writebatch_t,
    mut each: impl FnMut(&BatchEntry<'_>),
) -> Result<(), String> {
    // SAFETY: forwarded from the caller.
    let Some(b) = (unsafe { b.as_ref() }) else {
        return Ok(());
    };
    for entry in b.batch.iter() {
        each(&entry.map_err(|e| format!("write batch: {e}"))?);
    }
    Ok(())
}

/// Calls `put` for each put and `deleted` for each deletion (single deletions too) of the
/// batch, in any family, in order (RocksDB's `rocksdb_writebatch_iterate`). Merges and range
/// deletions are not reported: read those with `strata_writebatch_iterate_cf` or
/// `strata_writebatch_iterate_entries`. A malformed batch stops the walk.
///
/// # Safety
/// `b` null or a live batch; the callbacks null or callable with `state`.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_iterate(
    b: *const strata_writebatch_t,
    state: *mut c_void,
    put: strata_batch_put_fn,
    deleted: strata_batch_delete_fn,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires; the bytes
    // passed live in the batch, unchanged during the call.
    unsafe {
        guard(std::ptr::null_mut(), (), || {
            each_entry(b, |e| match (e.kind, put, deleted) {
                (ValueKind::Put, Some(put), _) => {
                    put(state, ptr(e.key), e.key.len(), ptr(e.value), e.value.len())
                }
                (ValueKind::Delete | ValueKind::SingleDelete, _, Some(deleted)) => {
                    deleted(state, ptr(e.key), e.key.len())
                }
                _ => {}
            })
        })
    }
}

/// As `strata_writebatch_iterate`, with each update's family id, and merges given to
/// `merge_cf` (RocksDB's `rocksdb_writebatch_iterate_cf`). Range deletions are not
/// reported: read those with `strata_writebatch_iterate_entries`.
///
/// # Safety
/// `b` null or a live batch; the callbacks null or callable with `state`.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_iterate_cf(
    b: *const strata_writebatch_t,
    state: *mut c_void,
    put_cf: strata_batch_put_cf_fn,
    deleted_cf: strata_batch_delete_cf_fn,
    merge_cf: strata_batch_put_cf_fn,
) {
    // SAFETY: as in `strata_writebatch_iterate`.
    unsafe {
        guard(std::ptr::null_mut(), (), || {
            each_entry(b, |e| {
                let (k, kl, v, vl) = (ptr(e.key), e.key.len(), ptr(e.value), e.value.len());
                match (e.kind, put_cf, deleted_cf, merge_cf) {
                    (ValueKind::Put, Some(f), _, _) | (ValueKind::Merge, _, _, Some(f)) => {
                        f(state, e.cf, k, kl, v, vl)
                    }
                    (ValueKind::Delete | ValueKind::SingleDelete, _, Some(f), _) => {
                        f(state, e.cf, k, kl)
                    }
                    _ => {}
                }
            })
        })
    }
}

/// Calls `entry` for every update of the batch, in order, with its `STRATA_BATCH_*` kind
/// and family id (a range deletion's value is its end key). A malformed batch stops the
/// walk and sets `*errptr`; so does a null batch.
///
/// # Safety
/// `b` null or a live batch; `entry` null or callable with `state`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_iterate_entries(
    b: *const strata_writebatch_t,
    state: *mut c_void,
    entry: strata_batch_entry_fn,
    errptr: *mut *mut c_char,
) {
    // SAFETY: as in `strata_writebatch_iterate`.
    unsafe {
        guard(errptr, (), || {
            handle(b, "write batch")?;
            each_entry(b, |e| {
                if let (Some(f), Some(kind)) = (entry, kind_code(e.kind)) {
                    f(
                        state,
                        kind,
                        e.cf,
                        ptr(e.key),
                        e.key.len(),
                        ptr(e.value),
                        e.value.len(),
                    )
                }
            })
        })
    }
}

/// Calls `log_data` for each log-data blob of the batch (`strata_writebatch_put_log_data`),
/// in order; the updates are not reported (read them with `strata_writebatch_iterate_entries`).
/// A null batch sets `*errptr`.
///
/// # Safety
/// `b` null or a live batch; `log_data` null or callable with `state`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_writebatch_iterate_log_data(
    b: *const strata_writebatch_t,
    state: *mut c_void,
    log_data: strata_batch_log_data_fn,
    errptr: *mut *mut c_char,
) {
    // SAFETY: as in `strata_writebatch_iterate`.
    unsafe {
        guard(errptr, (), || {
            let b = handle(b, "write batch")?;
            if let Some(f) = log_data {
                for blob in b.batch.log_data() {
                    f(state, ptr(blob), blob.len());
                }
            }
            Ok(())
        })
    }
}

/// `bytes` as C's `const char*`.
fn ptr(bytes: &[u8]) -> *const c_char {
    bytes.as_ptr().cast()
}
