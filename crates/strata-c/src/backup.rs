//! Checkpoints (an openable copy of a running database) and backups (`BackupEngine`:
//! incremental backups with a crc32c per file, listed, verified, restored, deleted, purged).
//!
//! Ownership: `strata_backup_engine_t` is the caller's, released with
//! `strata_backup_engine_close`; it belongs to one thread at a time (its changes are not
//! synchronized). `strata_backup_engine_info_t` from `strata_backup_engine_get_backup_info`
//! is a copy of the list at that moment, released with `strata_backup_engine_info_destroy`.

use std::ffi::{c_char, c_int};

use strata::{BackupEngine, BackupInfo};

use crate::error::guard;
use crate::{handle, into_handle, release, strata_t, text};

/// Writes an openable copy of the database to directory `dir`, which must not exist: tables
/// hard-linked (copied across file systems), WALs copied. With `log_size_for_flush` > 0, the
/// memtables are flushed first if the WALs hold at least that many bytes (0: never flush).
///
/// # Safety
/// Live `db`; `dir` a NUL-terminated path; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_checkpoint_create(
    db: *mut strata_t,
    dir: *const c_char,
    log_size_for_flush: u64,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let dir = text(dir, "checkpoint directory")?;
            db.checkpoint_opt(dir, log_size_for_flush)
                .map_err(|e| e.to_string())
        })
    }
}

/// The backups kept in one directory.
pub struct strata_backup_engine_t {
    engine: BackupEngine,
}

/// The list of backups at one moment.
pub struct strata_backup_engine_info_t {
    backups: Vec<BackupInfo>,
}

/// Opens (creating if needed) the backup directory `path`. Null and `*errptr` set on failure.
///
/// # Safety
/// `path` a NUL-terminated path; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_open(
    path: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_backup_engine_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let path = text(path, "backup directory")?;
            let engine = BackupEngine::open(path).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_backup_engine_t { engine }))
        })
    }
}

/// Releases a backup engine (the backups stay on disk).
///
/// # Safety
/// `be` null or from `strata_backup_engine_open`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_close(be: *mut strata_backup_engine_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(be) }
}

/// The engine behind a handle, for a change.
///
/// # Safety
/// `be` null or a live handle used by no other thread during the call.
unsafe fn engine_mut<'a>(be: *mut strata_backup_engine_t) -> Result<&'a mut BackupEngine, String> {
    // SAFETY: forwarded from the caller.
    unsafe { be.as_mut() }
        .map(|b| &mut b.engine)
        .ok_or_else(|| "backup engine is a null pointer".into())
}

/// Backs up the database (only files not already in an earlier backup are copied); returns
/// the new backup's id, 0 on failure.
///
/// # Safety
/// Live `be` (this thread's) and `db`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_create_new_backup(
    be: *mut strata_backup_engine_t,
    db: *mut strata_t,
    errptr: *mut *mut c_char,
) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, 0, || {
            let db = &handle(db, "database")?.db;
            let info = engine_mut(be)?
                .create_backup(db)
                .map_err(|e| e.to_string())?;
            Ok(info.id)
        })
    }
}

/// Checks every file of backup `id` against its recorded size and crc32c.
///
/// # Safety
/// Live `be`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_verify_backup(
    be: *mut strata_backup_engine_t,
    id: u64,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            handle(be.cast_const(), "backup engine")?
                .engine
                .verify_backup(id)
                .map_err(|e| e.to_string())
        })
    }
}

/// Restores backup `id` into directory `db_dir` (which must hold no database), checking
/// each file as it is copied.
///
/// # Safety
/// Live `be`; `db_dir` a NUL-terminated path; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_restore_db_from_backup(
    be: *mut strata_backup_engine_t,
    id: u64,
    db_dir: *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let engine = &handle(be.cast_const(), "backup engine")?.engine;
            let dir = text(db_dir, "restore directory")?;
            engine.restore(id, dir).map_err(|e| e.to_string())
        })
    }
}

/// Deletes backup `id` (files no other backup shares are removed).
///
/// # Safety
/// Live `be` (this thread's); `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_delete_backup(
    be: *mut strata_backup_engine_t,
    id: u64,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            engine_mut(be)?.delete_backup(id).map_err(|e| e.to_string())
        })
    }
}

/// Deletes all but the newest `num_backups_to_keep` backups.
///
/// # Safety
/// Live `be` (this thread's); `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_purge_old_backups(
    be: *mut strata_backup_engine_t,
    num_backups_to_keep: u32,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            engine_mut(be)?
                .purge_old_backups(num_backups_to_keep as usize)
                .map(drop)
                .map_err(|e| e.to_string())
        })
    }
}

/// The backups now, oldest first; release the list with `strata_backup_engine_info_destroy`.
/// Null for a null engine.
///
/// # Safety
/// `be` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_get_backup_info(
    be: *mut strata_backup_engine_t,
) -> *const strata_backup_engine_info_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null(), || {
            let engine = &handle(be.cast_const(), "backup engine")?.engine;
            Ok(into_handle(strata_backup_engine_info_t {
                backups: engine.list_backups(),
            })
            .cast_const())
        })
    }
}

/// Releases a backup list.
///
/// # Safety
/// `info` null or from `strata_backup_engine_get_backup_info`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_info_destroy(
    info: *const strata_backup_engine_info_t,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(info.cast_mut()) }
}

/// The number of backups in the list (0 for null).
///
/// # Safety
/// `info` null or a live list.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_info_count(
    info: *const strata_backup_engine_info_t,
) -> c_int {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { info.as_ref() }.map_or(0, |i| {
        c_int::try_from(i.backups.len()).unwrap_or(c_int::MAX)
    })
}

/// Backup `index` of the list, if there is one.
///
/// # Safety
/// `info` null or a live list.
unsafe fn nth<'a>(
    info: *const strata_backup_engine_info_t,
    index: c_int,
) -> Option<&'a BackupInfo> {
    let index = usize::try_from(index).ok()?;
    // SAFETY: forwarded from the caller.
    unsafe { info.as_ref() }?.backups.get(index)
}

/// The id of backup `index` (0 when out of range).
///
/// # Safety
/// `info` null or a live list.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_info_backup_id(
    info: *const strata_backup_engine_info_t,
    index: c_int,
) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { nth(info, index) }.map_or(0, |b| b.id)
}

/// When backup `index` was made, in seconds since the Unix epoch (0 when out of range).
///
/// # Safety
/// `info` null or a live list.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_info_timestamp(
    info: *const strata_backup_engine_info_t,
    index: c_int,
) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { nth(info, index) }.map_or(0, |b| b.timestamp)
}

/// The bytes of backup `index`'s files (0 when out of range).
///
/// # Safety
/// `info` null or a live list.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_info_size(
    info: *const strata_backup_engine_info_t,
    index: c_int,
) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { nth(info, index) }.map_or(0, |b| b.size)
}

/// The number of files of backup `index` (0 when out of range).
///
/// # Safety
/// `info` null or a live list.
#[no_mangle]
pub unsafe extern "C" fn strata_backup_engine_info_number_files(
    info: *const strata_backup_engine_info_t,
    index: c_int,
) -> u32 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { nth(info, index) }.map_or(0, |b| u32::try_from(b.num_files).unwrap_or(u32::MAX))
}
