//! The change feed (RocksDB's `rocksdb_get_updates_since` and `rocksdb_wal_iter_*`): the
//! write batches written since a sequence number, read back from the WALs, each with its
//! first sequence number. Keep WALs for it with `strata_options_set_WAL_ttl_seconds` or
//! `strata_options_set_WAL_size_limit_MB`: without them a WAL is deleted once its memtables
//! are flushed, and the feed can only start after the last flush.
//!
//! A WAL iterator belongs to one thread at a time. It is positioned on its first batch when
//! made (or invalid if there is none); `strata_wal_iter_get_batch` hands out a copy of the
//! current batch, the caller's to destroy. A read error makes the iterator invalid and
//! `strata_wal_iter_status` then reports it. The iterator reads the WAL files it opened when
//! made, not the database: it must still be destroyed before the database is closed, as
//! every other handle.

use std::ffi::{c_char, c_uchar};

use strata::WriteBatch;

/// A sequence number, as the engine numbers writes.
type SequenceNumber = u64;

use crate::error::{guard, set_error};
use crate::{handle, into_handle, release, strata_t, strata_writebatch_t};

/// Options of `strata_get_updates_since` (RocksDB's `rocksdb_wal_readoptions_t`). Strata has
/// none yet and gives no way to make one: pass null.
pub struct strata_wal_readoptions_t {
    _none: (),
}

/// The feed's batches, read lazily.
type Feed = Box<dyn Iterator<Item = strata::Result<(SequenceNumber, WriteBatch)>> + Send>;

/// A position in the change feed.
pub struct strata_wal_iterator_t {
    feed: Feed,
    /// The batch the iterator is on, with its first sequence number; None once the feed is
    /// over or failed.
    current: Option<(SequenceNumber, WriteBatch)>,
    /// The read error that ended the feed.
    error: Option<String>,
}

impl strata_wal_iterator_t {
    /// Moves to the next batch of the feed.
    fn advance(&mut self) {
        self.current = match self.feed.next() {
            Some(Ok(entry)) => Some(entry),
            Some(Err(e)) => {
                self.error = Some(e.to_string());
                None
            }
            None => None,
        };
    }
}

/// The batches written from sequence number `seq_number` on, oldest first, the first being
/// the batch holding `seq_number` (or the first after it); the feed ends at the last write
/// published at the call. `options` must be null. A `seq_number` older than every WAL kept
/// fails (`NotFound`) naming the oldest sequence number still available; a closed or null
/// database fails too. Destroy the iterator with `strata_wal_iter_destroy`.
///
/// # Safety
/// `db` null or a live handle; `options` null; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_get_updates_since(
    db: *mut strata_t,
    seq_number: u64,
    options: *const strata_wal_readoptions_t,
    errptr: *mut *mut c_char,
) -> *mut strata_wal_iterator_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            if !options.is_null() {
                return Err("WAL read options must be null: Strata has none".into());
            }
            let feed = db.updates_since(seq_number).map_err(|e| e.to_string())?;
            let mut iter = strata_wal_iterator_t {
                feed: Box::new(feed),
                current: None,
                error: None,
            };
            iter.advance();
            Ok(into_handle(iter))
        })
    }
}

/// Whether the iterator is on a batch: 0 at the end of the feed, after a read error (see
/// `strata_wal_iter_status`) and for a null iterator.
///
/// # Safety
/// `iter` null or a live WAL iterator.
#[no_mangle]
pub unsafe extern "C" fn strata_wal_iter_valid(iter: *const strata_wal_iterator_t) -> c_uchar {
    // SAFETY: the caller promises a live handle or null.
    unsafe { iter.as_ref() }.is_some_and(|i| i.current.is_some()) as c_uchar
}

/// Moves to the next batch; nothing for a null or invalid iterator.
///
/// # Safety
/// `iter` null or a live WAL iterator used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn strata_wal_iter_next(iter: *mut strata_wal_iterator_t) {
    // SAFETY: the caller promises a live, unshared handle or null.
    let Some(iter) = (unsafe { iter.as_mut() }) else {
        return;
    };
    if iter.current.is_some() {
        crate::error::guard_quiet((), || iter.advance());
    }
}

/// Sets `*errptr` to the read error that ended the feed, if any (or to an error for a null
/// iterator); leaves it alone otherwise.
///
/// # Safety
/// `iter` null or a live WAL iterator; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_wal_iter_status(
    iter: *const strata_wal_iterator_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        match iter.as_ref() {
            None => set_error(errptr, "WAL iterator is a null pointer"),
            Some(i) => {
                if let Some(e) = &i.error {
                    set_error(errptr, format!("change feed: {e}"));
                }
            }
        }
    }
}

/// A copy of the batch the iterator is on, the caller's to destroy with
/// `strata_writebatch_destroy`; `*seq` (if `seq` is not null) gets its first sequence
/// number. Null, with `*seq` 0, for a null or invalid iterator.
///
/// # Safety
/// `iter` null or a live WAL iterator; `seq` null or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_wal_iter_get_batch(
    iter: *const strata_wal_iterator_t,
    seq: *mut u64,
) -> *mut strata_writebatch_t {
    // SAFETY: the caller promises a live handle or null.
    let current = unsafe { iter.as_ref() }.and_then(|i| i.current.as_ref());
    if !seq.is_null() {
        // SAFETY: the caller promises a writable `seq` when it is not null.
        unsafe { *seq = current.map_or(0, |(s, _)| *s) };
    }
    match current {
        Some((_, batch)) => into_handle(strata_writebatch_t {
            batch: batch.clone(),
            error: None,
        }),
        None => std::ptr::null_mut(),
    }
}

/// Releases a WAL iterator (and the WAL files it holds open).
///
/// # Safety
/// `iter` null or a handle from `strata_get_updates_since`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_wal_iter_destroy(iter: *mut strata_wal_iterator_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(iter) }
}
