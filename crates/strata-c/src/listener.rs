//! Event listeners made of a C function, added to options with
//! `strata_options_add_eventlistener`: flushes, compactions, table and WAL files, write-stall
//! changes and background errors, each as one `strata_event_t`.
//!
//! Ownership as for merge operators: the handle is a share; options and databases keep
//! their own; the state's destructor runs when the last share goes. The event and every
//! string in it are valid during the call only. The function is called from the engine's
//! background threads (and, for stalls, from writers), possibly several at once, and must not
//! call back into the database that reports the event (as in RocksDB: a flush waits on it).

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;
use std::sync::Arc;

use strata::{
    BackgroundErrorInfo, CompactionJobInfo, EventListener, FlushJobInfo, TableFileCreationInfo,
    TableFileDeletionInfo, WalFileDeletionInfo, WriteStallInfo,
};

use crate::callback::{strata_destructor_fn, State};
use crate::error::guard;
use crate::{into_handle, release};

/// `strata_event_t.kind`: a flush began.
pub const STRATA_EVENT_FLUSH_BEGIN: c_int = 0;
/// A flush wrote its table.
pub const STRATA_EVENT_FLUSH_COMPLETED: c_int = 1;
/// A compaction began.
pub const STRATA_EVENT_COMPACTION_BEGIN: c_int = 2;
/// A compaction ended (`message` set if it failed).
pub const STRATA_EVENT_COMPACTION_COMPLETED: c_int = 3;
/// A column family's write-stall condition changed.
pub const STRATA_EVENT_STALL_CONDITIONS_CHANGED: c_int = 4;
/// A background job failed (`message` says how).
pub const STRATA_EVENT_BACKGROUND_ERROR: c_int = 5;
/// A table file was created.
pub const STRATA_EVENT_TABLE_FILE_CREATED: c_int = 6;
/// A table file was deleted.
pub const STRATA_EVENT_TABLE_FILE_DELETED: c_int = 7;
/// A WAL file was deleted.
pub const STRATA_EVENT_WAL_FILE_DELETED: c_int = 8;

/// One event. Fields an event kind does not fill are 0 or null; strings are valid during the
/// call only.
#[repr(C)]
pub struct strata_event_t {
    /// One of the `STRATA_EVENT_*` values.
    pub kind: c_int,
    /// The column family (not NUL-terminated); null for file deletions and background
    /// errors.
    pub cf_name: *const c_char,
    /// The length of `cf_name`.
    pub cf_name_len: usize,
    /// The table written by a flush, the table created or deleted, or the WAL deleted.
    pub file_number: u64,
    /// The path of that file, NUL-terminated; null for compactions and stalls.
    pub path: *const c_char,
    /// A compaction's base input level.
    pub input_level: c_int,
    /// A compaction's output level.
    pub output_level: c_int,
    /// Bytes a compaction read.
    pub bytes_read: u64,
    /// Bytes a compaction wrote; the bytes of a flushed or created table.
    pub bytes_written: u64,
    /// Entries of a flushed or created table.
    pub entries: u64,
    /// Why, as the engine names it (`Manual`, `LevelL0FilesNum`, `Flush`, `Obsolete`, ...),
    /// NUL-terminated; for a stall change, the cause (null if none).
    pub reason: *const c_char,
    /// A stall change's condition before and after: `Normal`, `Delayed` or `Stopped`.
    pub previous_condition: *const c_char,
    /// See `previous_condition`.
    pub current_condition: *const c_char,
    /// A background error, or a failed compaction's error, NUL-terminated; else null.
    pub message: *const c_char,
}

/// An event listener's function.
pub type strata_event_fn =
    Option<unsafe extern "C" fn(state: *mut c_void, event: *const strata_event_t)>;

/// An event listener; see `strata_options_add_eventlistener`.
pub struct strata_eventlistener_t {
    pub(crate) listener: Arc<dyn EventListener>,
}

struct CListener {
    state: State,
    on_event: unsafe extern "C" fn(*mut c_void, *const strata_event_t),
}

/// A string for the duration of a call (interior NULs, impossible in the names used, are
/// replaced so that the text survives).
fn c_text(s: impl Into<String>) -> CString {
    CString::new(s.into().replace('\0', "\\0")).unwrap_or_default()
}

fn c_path(p: &Path) -> CString {
    c_text(p.display().to_string())
}

fn opt_ptr(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())
}

impl CListener {
    fn blank(kind: c_int) -> strata_event_t {
        strata_event_t {
            kind,
            cf_name: std::ptr::null(),
            cf_name_len: 0,
            file_number: 0,
            path: std::ptr::null(),
            input_level: 0,
            output_level: 0,
            bytes_read: 0,
            bytes_written: 0,
            entries: 0,
            reason: std::ptr::null(),
            previous_condition: std::ptr::null(),
            current_condition: std::ptr::null(),
            message: std::ptr::null(),
        }
    }

    fn send(&self, event: &strata_event_t) {
        // SAFETY: the event and its strings live until the call returns; the state is used as
        // the header allows.
        unsafe { (self.on_event)(self.state.ptr(), event) }
    }

    fn flush(&self, kind: c_int, info: &FlushJobInfo) {
        let path = c_path(&info.file_path);
        let reason = c_text(format!("{:?}", info.reason));
        let mut e = Self::blank(kind);
        e.cf_name = info.cf_name.as_ptr().cast();
        e.cf_name_len = info.cf_name.len();
        e.file_number = info.file_number;
        e.path = path.as_ptr();
        e.bytes_written = info.table_bytes;
        e.entries = info.table_entries;
        e.reason = reason.as_ptr();
        self.send(&e);
    }

    fn compaction(&self, kind: c_int, info: &CompactionJobInfo) {
        let reason = c_text(format!("{:?}", info.reason));
        let message = info.status.as_ref().err().map(|e| c_text(e.to_string()));
        let mut e = Self::blank(kind);
        e.cf_name = info.cf_name.as_ptr().cast();
        e.cf_name_len = info.cf_name.len();
        e.input_level = c_int::try_from(info.base_input_level).unwrap_or(c_int::MAX);
        e.output_level = c_int::try_from(info.output_level).unwrap_or(c_int::MAX);
        e.bytes_read = info.bytes_read;
        e.bytes_written = info.bytes_written;
        e.reason = reason.as_ptr();
        e.message = opt_ptr(&message);
        self.send(&e);
    }
}

impl EventListener for CListener {
    fn on_flush_begin(&self, info: &FlushJobInfo) {
        self.flush(STRATA_EVENT_FLUSH_BEGIN, info);
    }

    fn on_flush_completed(&self, info: &FlushJobInfo) {
        self.flush(STRATA_EVENT_FLUSH_COMPLETED, info);
    }

    fn on_compaction_begin(&self, info: &CompactionJobInfo) {
        self.compaction(STRATA_EVENT_COMPACTION_BEGIN, info);
    }

    fn on_compaction_completed(&self, info: &CompactionJobInfo) {
        self.compaction(STRATA_EVENT_COMPACTION_COMPLETED, info);
    }

    fn on_stall_conditions_changed(&self, info: &WriteStallInfo) {
        let previous = c_text(format!("{:?}", info.previous));
        let current = c_text(format!("{:?}", info.current));
        let cause = info.cause.map(|c| c_text(format!("{c:?}")));
        let mut e = Self::blank(STRATA_EVENT_STALL_CONDITIONS_CHANGED);
        e.cf_name = info.cf_name.as_ptr().cast();
        e.cf_name_len = info.cf_name.len();
        e.previous_condition = previous.as_ptr();
        e.current_condition = current.as_ptr();
        e.reason = opt_ptr(&cause);
        self.send(&e);
    }

    fn on_background_error(&self, info: &BackgroundErrorInfo) {
        let reason = c_text(format!("{:?}", info.reason));
        let message = c_text(info.error.to_string());
        let mut e = Self::blank(STRATA_EVENT_BACKGROUND_ERROR);
        e.reason = reason.as_ptr();
        e.message = message.as_ptr();
        self.send(&e);
    }

    fn on_table_file_created(&self, info: &TableFileCreationInfo) {
        let path = c_path(&info.path);
        let reason = c_text(format!("{:?}", info.reason));
        let mut e = Self::blank(STRATA_EVENT_TABLE_FILE_CREATED);
        e.cf_name = info.cf_name.as_ptr().cast();
        e.cf_name_len = info.cf_name.len();
        e.file_number = info.file_number;
        e.path = path.as_ptr();
        e.bytes_written = info.bytes;
        e.entries = info.entries;
        e.reason = reason.as_ptr();
        self.send(&e);
    }

    fn on_table_file_deleted(&self, info: &TableFileDeletionInfo) {
        let path = c_path(&info.path);
        let reason = c_text(format!("{:?}", info.reason));
        let mut e = Self::blank(STRATA_EVENT_TABLE_FILE_DELETED);
        e.file_number = info.file_number;
        e.path = path.as_ptr();
        e.reason = reason.as_ptr();
        self.send(&e);
    }

    fn on_wal_file_deleted(&self, info: &WalFileDeletionInfo) {
        let path = c_path(&info.path);
        let mut e = Self::blank(STRATA_EVENT_WAL_FILE_DELETED);
        e.file_number = info.log_number;
        e.path = path.as_ptr();
        self.send(&e);
    }
}

/// An event listener calling `on_event` with `state` for every event; `destructor` (may be
/// null) releases `state` once the listener is no longer used, also when creation fails.
/// Null and `*errptr` set for a null `on_event`. Release the handle with
/// `strata_eventlistener_destroy`.
///
/// # Safety
/// `on_event` and `state` usable from any thread, concurrently; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_eventlistener_create(
    state: *mut c_void,
    destructor: strata_destructor_fn,
    on_event: strata_event_fn,
    errptr: *mut *mut c_char,
) -> *mut strata_eventlistener_t {
    let state = State::new(state, destructor);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let on_event = on_event.ok_or("the event function is a null pointer")?;
            Ok(into_handle(strata_eventlistener_t {
                listener: Arc::new(CListener { state, on_event }),
            }))
        })
    }
}

/// Releases the caller's share of an event listener (options and databases keep theirs).
///
/// # Safety
/// `listener` null or from `strata_eventlistener_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_eventlistener_destroy(listener: *mut strata_eventlistener_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(listener) }
}
