//! The tables of a database, file by file (RocksDB's `rocksdb_livefiles`, over
//! `Db::live_files_metadata`): a snapshot of the metadata taken by `strata_livefiles`, read
//! by index, released with `strata_livefiles_destroy`.
//!
//! An index outside `0..strata_livefiles_count` reads as null, or 0 (these functions have no
//! `errptr`, as in RocksDB). Names and keys returned belong to the handle and stay valid
//! until it is destroyed.

use std::ffi::{c_char, c_int, CString};

use strata::LiveFileMetadata;

use crate::error::guard_quiet;
use crate::{into_handle, release, strata_t};

/// The metadata of the tables of a database, as they stood when it was taken.
pub struct strata_livefiles_t {
    files: Vec<LiveFile>,
}

/// One table, with its names made NUL-terminated for C.
struct LiveFile {
    meta: LiveFileMetadata,
    name: CString,
    column_family_name: CString,
}

/// A C string of `text`, which holds no NUL (file and family names do not).
fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "")).unwrap_or_default()
}

/// The table at `index` of `files`, if both are there.
///
/// # Safety
/// `files` null or a live handle.
unsafe fn file<'a>(files: *const strata_livefiles_t, index: c_int) -> Option<&'a LiveFile> {
    // SAFETY: the caller promises a live handle or null.
    let files = unsafe { files.as_ref() }?;
    files.files.get(usize::try_from(index).ok()?)
}

/// Every table of every column family (RocksDB's `rocksdb_livefiles`): its family, level,
/// name, size, key range, sequence numbers, entries and deletions, ordered by family, then
/// level. Null for a null `db`. Release it with `strata_livefiles_destroy`.
///
/// # Safety
/// `db` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles(db: *mut strata_t) -> *mut strata_livefiles_t {
    // SAFETY: the caller promises a live handle or null.
    let Some(db) = (unsafe { db.as_ref() }) else {
        return std::ptr::null_mut();
    };
    guard_quiet(std::ptr::null_mut(), || {
        let files = db
            .db
            .live_files_metadata()
            .into_iter()
            .map(|meta| LiveFile {
                name: c_string(&meta.name),
                column_family_name: c_string(&meta.column_family_name),
                meta,
            })
            .collect();
        into_handle(strata_livefiles_t { files })
    })
}

/// Releases what `strata_livefiles` returned; null is ignored.
///
/// # Safety
/// `files` null or from `strata_livefiles`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_destroy(files: *mut strata_livefiles_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(files) }
}

/// How many tables `files` holds (0 for null).
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_count(files: *const strata_livefiles_t) -> c_int {
    // SAFETY: the caller promises a live handle or null.
    unsafe { files.as_ref() }.map_or(0, |f| c_int::try_from(f.files.len()).unwrap_or(c_int::MAX))
}

/// The file name of table `index` (`NNNNNN.sst`, in the database's directory).
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_name(
    files: *const strata_livefiles_t,
    index: c_int,
) -> *const c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { file(files, index) }.map_or(std::ptr::null(), |f| f.name.as_ptr())
}

/// The column family name of table `index`.
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_column_family_name(
    files: *const strata_livefiles_t,
    index: c_int,
) -> *const c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { file(files, index) }.map_or(std::ptr::null(), |f| f.column_family_name.as_ptr())
}

/// The level of table `index` (-1 for an index out of range).
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_level(
    files: *const strata_livefiles_t,
    index: c_int,
) -> c_int {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { file(files, index) }.map_or(-1, |f| c_int::try_from(f.meta.level).unwrap_or(-1))
}

/// The bytes of table `index`.
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_size(
    files: *const strata_livefiles_t,
    index: c_int,
) -> usize {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { file(files, index) }.map_or(0, |f| usize::try_from(f.meta.size).unwrap_or(usize::MAX))
}

/// The smallest user key of table `index`, `*size` bytes long (null and 0 out of range).
///
/// # Safety
/// `files` null or a live handle; `size` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_smallestkey(
    files: *const strata_livefiles_t,
    index: c_int,
    size: *mut usize,
) -> *const c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        key_out(
            file(files, index).map(|f| f.meta.smallest_key.as_slice()),
            size,
        )
    }
}

/// The largest user key of table `index`, `*size` bytes long (null and 0 out of range).
///
/// # Safety
/// `files` null or a live handle; `size` a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_largestkey(
    files: *const strata_livefiles_t,
    index: c_int,
    size: *mut usize,
) -> *const c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        key_out(
            file(files, index).map(|f| f.meta.largest_key.as_slice()),
            size,
        )
    }
}

/// `key`'s bytes, with its length in `*size`; null and 0 for none.
///
/// # Safety
/// `size` null or a valid pointer.
unsafe fn key_out(key: Option<&[u8]>, size: *mut usize) -> *const c_char {
    let key = key.unwrap_or_default();
    // SAFETY: the caller promises a valid pointer or null.
    if let Some(size) = unsafe { size.as_mut() } {
        *size = key.len();
    }
    if key.is_empty() {
        std::ptr::null()
    } else {
        key.as_ptr().cast()
    }
}

/// The entries of table `index` (all kinds, range deletions aside).
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_entries(
    files: *const strata_livefiles_t,
    index: c_int,
) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { file(files, index) }.map_or(0, |f| f.meta.num_entries)
}

/// The deletions among the entries of table `index`.
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_deletions(
    files: *const strata_livefiles_t,
    index: c_int,
) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { file(files, index) }.map_or(0, |f| f.meta.num_deletions)
}

/// The smallest sequence number in table `index`.
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_smallest_seqno(
    files: *const strata_livefiles_t,
    index: c_int,
) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { file(files, index) }.map_or(0, |f| f.meta.smallest_seqno)
}

/// The largest sequence number in table `index`.
///
/// # Safety
/// `files` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_livefiles_largest_seqno(
    files: *const strata_livefiles_t,
    index: c_int,
) -> u64 {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { file(files, index) }.map_or(0, |f| f.meta.largest_seqno)
}
