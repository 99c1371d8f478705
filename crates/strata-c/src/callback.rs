//! What every callback object shares: the caller's `void* state` and its destructor.
//!
//! Merge operators, comparators, compaction filters and event listeners made from C
//! functions (RocksDB's `*_create(state, destructor, ...)` functions) keep the state pointer
//! and hand it to each call. Invariants:
//!
//! - The destructor runs exactly once, when the last user of the object lets it go: the C
//!   handle (`*_destroy`) and every options or database that took a share of it. So it may
//!   run on a background thread, after `strata_close`.
//! - The engine calls the functions from its own threads (flushes and compactions run in the
//!   background), possibly several at once: the caller promises that its state and functions
//!   may be used so. That promise is what makes [`State`] `Send` and `Sync`.
//! - A callback that unwinds or longjmps out is undefined behaviour, as in RocksDB: C
//!   functions cannot unwind into Rust here (`extern "C"` aborts on a foreign unwind).

use std::ffi::{c_char, c_void, CStr};

/// The destructor of a callback object's state; may be null.
pub type strata_destructor_fn = Option<unsafe extern "C" fn(state: *mut c_void)>;

/// A caller's state pointer and destructor, released once when dropped.
pub(crate) struct State {
    state: *mut c_void,
    destructor: strata_destructor_fn,
}

// SAFETY: the header asks that a callback object's state and functions be usable from any
// thread, concurrently (the module's invariants); the pointer itself is never dereferenced
// by Rust.
unsafe impl Send for State {}
// SAFETY: as for `Send`.
unsafe impl Sync for State {}

impl State {
    pub(crate) fn new(state: *mut c_void, destructor: strata_destructor_fn) -> State {
        State { state, destructor }
    }

    /// The pointer to pass to the caller's functions.
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.state
    }
}

impl Drop for State {
    fn drop(&mut self) {
        if let Some(destroy) = self.destructor {
            // SAFETY: the caller gave this destructor for this state; it runs once, here.
            unsafe { destroy(self.state) }
        }
    }
}

/// The name a callback object was given, copied; an error naming `what` for a null or
/// non-UTF-8 one.
///
/// # Safety
/// `name` null or a NUL-terminated string.
pub(crate) unsafe fn name_of(name: *const c_char, what: &str) -> Result<String, String> {
    if name.is_null() {
        return Err(format!("the name of the {what} is a null pointer"));
    }
    // SAFETY: the caller promises a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(name) };
    name.to_str()
        .map(str::to_owned)
        .map_err(|_| format!("the name of the {what} is not valid UTF-8"))
}

/// The bytes a C callback returned (`ptr`, `len`): empty for a zero length; `None` for a null
/// pointer with a non-zero length, which the caller reports as the callback's error.
///
/// # Safety
/// `ptr` null or pointing to `len` readable bytes.
pub(crate) unsafe fn returned<'a>(ptr: *const c_char, len: usize) -> Option<&'a [u8]> {
    // SAFETY: forwarded from the caller.
    unsafe { crate::bytes(ptr, len, "") }.ok()
}
