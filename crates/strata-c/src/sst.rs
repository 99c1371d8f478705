//! Bulk loading: `strata_sstfilewriter_t` writes a table file outside any database (keys in
//! increasing order), and `strata_ingest_external_file` adds such files to a database
//! atomically (RocksDB's `SstFileWriter` and `IngestExternalFile`).
//!
//! Ownership: a writer is the caller's, released with `strata_sstfilewriter_destroy`
//! (destroying one that was not finished leaves an incomplete file behind); it belongs to one
//! thread at a time. Ingest options likewise, with `strata_ingestexternalfileoptions_destroy`.

use std::ffi::{c_char, c_uchar};

use strata::{IngestOptions, SstWriter};

use crate::error::guard;
use crate::{
    array, bytes, family_given, handle, into_handle, release, strata_column_family_t,
    strata_options_t, strata_t, text,
};

/// A table file being written.
pub struct strata_sstfilewriter_t {
    /// `None` once finished: a finished writer refuses further calls.
    writer: Option<SstWriter>,
}

/// Creates the table file `path` (replacing a file of that name), written with the table
/// options, comparator and merge operator of `options`. Null and `*errptr` set on failure.
///
/// # Safety
/// `options` a live handle; `path` NUL-terminated; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_sstfilewriter_create(
    options: *const strata_options_t,
    path: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_sstfilewriter_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let options = &handle(options, "options")?.options;
            let path = text(path, "table file path")?;
            let writer = SstWriter::create(path, options).map_err(|e| e.to_string())?;
            Ok(into_handle(strata_sstfilewriter_t {
                writer: Some(writer),
            }))
        })
    }
}

/// The unfinished writer behind a handle.
///
/// # Safety
/// `w` null or a live writer used by no other thread during the call.
unsafe fn writer<'a>(w: *mut strata_sstfilewriter_t) -> Result<&'a mut SstWriter, String> {
    // SAFETY: forwarded from the caller.
    let w = unsafe { w.as_mut() }.ok_or("table file writer is a null pointer")?;
    w.writer
        .as_mut()
        .ok_or_else(|| "the table file writer is already finished".into())
}

/// Adds `key` = `value`; keys must come in increasing order, each once.
///
/// # Safety
/// Live `w`; `key` and `value` readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_sstfilewriter_put(
    w: *mut strata_sstfilewriter_t,
    key: *const c_char,
    keylen: usize,
    value: *const c_char,
    vallen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            writer(w)?
                .put(bytes(key, keylen, "key")?, bytes(value, vallen, "value")?)
                .map_err(|e| e.to_string())
        })
    }
}

/// Adds a merge operand for `key` (in key order with the other entries).
///
/// # Safety
/// As `strata_sstfilewriter_put`.
#[no_mangle]
pub unsafe extern "C" fn strata_sstfilewriter_merge(
    w: *mut strata_sstfilewriter_t,
    key: *const c_char,
    keylen: usize,
    operand: *const c_char,
    oplen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            writer(w)?
                .merge(
                    bytes(key, keylen, "key")?,
                    bytes(operand, oplen, "operand")?,
                )
                .map_err(|e| e.to_string())
        })
    }
}

/// Adds a deletion of `key` (in key order with the other entries).
///
/// # Safety
/// Live `w`; `key` readable for `keylen`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_sstfilewriter_delete(
    w: *mut strata_sstfilewriter_t,
    key: *const c_char,
    keylen: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            writer(w)?
                .delete(bytes(key, keylen, "key")?)
                .map_err(|e| e.to_string())
        })
    }
}

/// Adds a deletion of every key in [`begin`, `end`) (in any order with the other entries).
///
/// # Safety
/// Live `w`; `begin` and `end` readable for their lengths; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_sstfilewriter_delete_range(
    w: *mut strata_sstfilewriter_t,
    begin: *const c_char,
    begin_len: usize,
    end: *const c_char,
    end_len: usize,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            writer(w)?
                .delete_range(
                    bytes(begin, begin_len, "begin key")?,
                    bytes(end, end_len, "end key")?,
                )
                .map_err(|e| e.to_string())
        })
    }
}

/// The bytes written to the file so far (0 for a null or finished writer).
///
/// # Safety
/// `w` null or a live writer.
#[no_mangle]
pub unsafe extern "C" fn strata_sstfilewriter_file_size(w: *mut strata_sstfilewriter_t) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { w.as_ref() }
        .and_then(|w| w.writer.as_ref())
        .map_or(0, SstWriter::file_size)
}

/// Completes and syncs the file; afterwards the writer refuses further entries (it must
/// still be destroyed). A file with no entry is refused.
///
/// # Safety
/// Live `w`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_sstfilewriter_finish(
    w: *mut strata_sstfilewriter_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let w = w.as_mut().ok_or("table file writer is a null pointer")?;
            let writer = w
                .writer
                .take()
                .ok_or("the table file writer is already finished")?;
            writer.finish().map(drop).map_err(|e| e.to_string())
        })
    }
}

/// Releases a writer.
///
/// # Safety
/// `w` null or from `strata_sstfilewriter_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_sstfilewriter_destroy(w: *mut strata_sstfilewriter_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(w) }
}

/// How files are ingested.
pub struct strata_ingestexternalfileoptions_t {
    options: IngestOptions,
}

/// Ingest options with Strata's defaults (copy the files; flush overlapping memtables).
#[no_mangle]
pub extern "C" fn strata_ingestexternalfileoptions_create(
) -> *mut strata_ingestexternalfileoptions_t {
    into_handle(strata_ingestexternalfileoptions_t {
        options: IngestOptions::default(),
    })
}

/// Releases ingest options.
///
/// # Safety
/// `opt` null or from `strata_ingestexternalfileoptions_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_ingestexternalfileoptions_destroy(
    opt: *mut strata_ingestexternalfileoptions_t,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(opt) }
}

/// Move the files into the database (hard links; the sources removed on success) instead of
/// copying them (0 or 1).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_ingestexternalfileoptions_set_move_files(
    opt: *mut strata_ingestexternalfileoptions_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.move_files = v != 0;
    }
}

/// Flush memtables that overlap a file before ingesting it; without it such an ingest is
/// refused (0 or 1).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_ingestexternalfileoptions_set_allow_blocking_flush(
    opt: *mut strata_ingestexternalfileoptions_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.allow_blocking_flush = v != 0;
    }
}

/// Place the files under all the family's data (RocksDB's
/// `rocksdb_ingestexternalfileoptions_set_ingest_behind`; 0 or 1): in the last level, at
/// sequence number 0, so every key already there shadows them. The database must have been
/// opened with `strata_options_set_allow_ingest_behind`; the ingest is refused otherwise,
/// and when a file overlaps one already in the last level.
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_ingestexternalfileoptions_set_ingest_behind(
    opt: *mut strata_ingestexternalfileoptions_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.ingest_behind = v != 0;
    }
}

/// Adds the `num_files` table files at `file_list` to the default family (or, with the
/// `_cf` variant, to `cf`) atomically: all or none.
///
/// # Safety
/// Live `db` and `options`; `file_list` of `num_files` NUL-terminated paths; `errptr` as
/// usual.
#[no_mangle]
pub unsafe extern "C" fn strata_ingest_external_file(
    db: *mut strata_t,
    file_list: *const *const c_char,
    num_files: usize,
    options: *const strata_ingestexternalfileoptions_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { ingest(db, std::ptr::null(), file_list, num_files, options, errptr) }
}

/// As `strata_ingest_external_file`, into column family `cf`.
///
/// # Safety
/// As `strata_ingest_external_file`; `cf` a live family handle.
#[no_mangle]
pub unsafe extern "C" fn strata_ingest_external_file_cf(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    file_list: *const *const c_char,
    num_files: usize,
    options: *const strata_ingestexternalfileoptions_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if !unsafe { family_given(cf, errptr) } {
        return;
    }
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { ingest(db, cf, file_list, num_files, options, errptr) }
}

/// The body of both ingest functions (the default family for a null `cf`).
///
/// # Safety
/// As `strata_ingest_external_file_cf`, `cf` null allowed.
unsafe fn ingest(
    db: *mut strata_t,
    cf: *const strata_column_family_t,
    file_list: *const *const c_char,
    num_files: usize,
    options: *const strata_ingestexternalfileoptions_t,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            let db = &handle(db, "database")?.db;
            let options = &handle(options, "ingest options")?.options;
            let files = array(file_list, num_files, "file_list", "files")?
                .iter()
                .map(|&path| text(path, "file path"))
                .collect::<Result<Vec<_>, _>>()?;
            match cf.as_ref() {
                None => db.ingest(&files, options),
                Some(cf) => db.ingest_cf(&cf.handle, &files, options),
            }
            .map_err(|e| e.to_string())
        })
    }
}
