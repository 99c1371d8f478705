//! The `char** errptr` convention and the guard that keeps panics out of C.
//!
//! Every exported function runs its body through [`guard`]: an `Err(message)` or a panic
//! becomes a malloc'd message in `*errptr` and the function's failure value.

use std::ffi::{c_char, c_void};
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Copies `bytes` into a malloc'd buffer with a NUL after them (so that text can be read as a
/// C string); null only if malloc fails.
pub(crate) fn malloc_copy(bytes: &[u8]) -> *mut c_char {
    // SAFETY: malloc of a non-zero size; the result is checked before use.
    let out = unsafe { libc::malloc(bytes.len() + 1) }.cast::<u8>();
    if !out.is_null() {
        // SAFETY: `out` has room for `bytes.len() + 1` bytes and does not overlap `bytes`.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
            *out.add(bytes.len()) = 0;
        }
    }
    out.cast()
}

/// Stores `message` in `*errptr` (freeing a message already there); nothing if `errptr` is
/// null.
///
/// # Safety
/// `errptr` must be null or point to a `char*` that is null or a message from this library.
pub(crate) unsafe fn set_error(errptr: *mut *mut c_char, message: impl Display) {
    if errptr.is_null() {
        return;
    }
    let text = message.to_string().replace('\0', "\\0");
    // SAFETY: the caller promises `errptr` points to a valid `char*`, null or ours.
    unsafe {
        if !(*errptr).is_null() {
            libc::free((*errptr).cast());
        }
        *errptr = malloc_copy(text.as_bytes());
    }
}

/// Runs `body`; on an error or a panic, sets `*errptr` and returns `failed`.
///
/// # Safety
/// `errptr` as for [`set_error`].
pub(crate) unsafe fn guard<T>(
    errptr: *mut *mut c_char,
    failed: T,
    body: impl FnOnce() -> Result<T, String>,
) -> T {
    let message = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => return value,
        Ok(Err(message)) => message,
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            format!("internal error in Strata (a panic, please report it): {what}")
        }
    };
    // SAFETY: forwarded from the caller.
    unsafe { set_error(errptr, message) };
    failed
}

/// Runs `body` in a function without an `errptr`: a panic is swallowed and `failed`
/// returned, since it must not unwind into C.
pub(crate) fn guard_quiet<T>(failed: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(failed)
}

/// Releases memory that Strata returned: values, property texts, error messages and names.
/// Null is ignored.
///
/// # Safety
/// `ptr` must be null or a pointer this library returned for the caller to release, not yet
/// released.
#[no_mangle]
pub unsafe extern "C" fn strata_free(ptr: *mut c_void) {
    // SAFETY: the caller promises a malloc'd pointer from this library, or null.
    unsafe { libc::free(ptr) }
}
