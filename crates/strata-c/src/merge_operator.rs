//! Merge operators: the built-in ones (`uint64add`, `stringappend`) and operators made of C
//! functions, set on options with `strata_options_set_merge_operator`.
//!
//! Ownership: `strata_mergeoperator_t` is a share of the operator. The options given it take
//! their own share (and a database opened with them another), so the handle may be destroyed
//! at once; the state's destructor runs when the last share goes (see `callback.rs`).
//!
//! A C operator's functions return values allocated with `malloc`: Strata copies them and
//! releases them with `free`. A function that reports failure (`*success = 0`) fails the read,
//! flush or compaction that needed the value, with an error naming the operator and the key.

use std::ffi::{c_char, c_int, c_uchar, c_void};
use std::sync::Arc;

use strata::{MergeOperator, StringAppend, UInt64Add};

use crate::callback::{name_of, returned, strata_destructor_fn, State};
use crate::error::guard;
use crate::{bytes, into_handle, release};

/// A merge operator; see `strata_options_set_merge_operator`.
pub struct strata_mergeoperator_t {
    pub(crate) op: Arc<dyn MergeOperator>,
}

/// A C operator's full merge: the value of `key` after `num_operands` operands (oldest
/// first) applied to `existing_value` (null when the key has no value). Returns a malloc'd
/// value and its length in `*new_value_length`, with `*success` set to 1; `*success` 0 fails.
pub type strata_full_merge_fn = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        key: *const c_char,
        key_length: usize,
        existing_value: *const c_char,
        existing_value_length: usize,
        operands_list: *const *const c_char,
        operands_list_length: *const usize,
        num_operands: c_int,
        success: *mut c_uchar,
        new_value_length: *mut usize,
    ) -> *mut c_char,
>;

/// A C operator's partial merge: one operand with the effect of `num_operands` (two or more,
/// oldest first), malloc'd, with `*success` 1; `*success` 0 keeps the operands as they are.
pub type strata_partial_merge_fn = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        key: *const c_char,
        key_length: usize,
        operands_list: *const *const c_char,
        operands_list_length: *const usize,
        num_operands: c_int,
        success: *mut c_uchar,
        new_value_length: *mut usize,
    ) -> *mut c_char,
>;

/// An operator whose merges are C functions.
struct CMergeOperator {
    name: String,
    state: State,
    full_merge: unsafe extern "C" fn(
        *mut c_void,
        *const c_char,
        usize,
        *const c_char,
        usize,
        *const *const c_char,
        *const usize,
        c_int,
        *mut c_uchar,
        *mut usize,
    ) -> *mut c_char,
    partial_merge: strata_partial_merge_fn,
}

/// Takes a malloc'd buffer a callback returned: copies it and frees it. `None` if the
/// callback returned null with a non-zero length.
///
/// # Safety
/// `ptr` null or a malloc'd buffer of at least `len` bytes, owned by the caller.
unsafe fn take_malloced(ptr: *mut c_char, len: usize) -> Option<Vec<u8>> {
    // SAFETY: forwarded from the caller.
    let value = unsafe { returned(ptr, len) }.map(<[u8]>::to_vec);
    // SAFETY: the header says the callback's buffer is malloc'd and becomes Strata's.
    unsafe { libc::free(ptr.cast()) };
    value
}

impl MergeOperator for CMergeOperator {
    fn name(&self) -> &str {
        &self.name
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, String> {
        let ptrs: Vec<*const c_char> = operands.iter().map(|o| o.as_ptr().cast()).collect();
        let lens: Vec<usize> = operands.iter().map(|o| o.len()).collect();
        let count = c_int::try_from(operands.len()).map_err(|_| "too many operands")?;
        let (existing_ptr, existing_len) =
            existing.map_or((std::ptr::null(), 0), |v| (v.as_ptr().cast(), v.len()));
        let mut success: c_uchar = 0;
        let mut len = 0usize;
        // SAFETY: every pointer passed is valid for the call, with its length beside it; the
        // state is the caller's, used as the header allows.
        let out = unsafe {
            (self.full_merge)(
                self.state.ptr(),
                key.as_ptr().cast(),
                key.len(),
                existing_ptr,
                existing_len,
                ptrs.as_ptr(),
                lens.as_ptr(),
                count,
                &mut success,
                &mut len,
            )
        };
        // SAFETY: the callback returns a malloc'd buffer of `len` bytes, or null.
        let value = unsafe { take_malloced(out, len) };
        match (success, value) {
            (0, _) => Err("the merge function reported failure".into()),
            (_, Some(value)) => Ok(value),
            (_, None) => Err(format!(
                "the merge function returned a null value with length {len}"
            )),
        }
    }

    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let partial = self.partial_merge?;
        let ptrs: Vec<*const c_char> = operands.iter().map(|o| o.as_ptr().cast()).collect();
        let lens: Vec<usize> = operands.iter().map(|o| o.len()).collect();
        let count = c_int::try_from(operands.len()).ok()?;
        let mut success: c_uchar = 0;
        let mut len = 0usize;
        // SAFETY: as in `full_merge`.
        let out = unsafe {
            partial(
                self.state.ptr(),
                key.as_ptr().cast(),
                key.len(),
                ptrs.as_ptr(),
                lens.as_ptr(),
                count,
                &mut success,
                &mut len,
            )
        };
        // SAFETY: as in `full_merge`.
        let value = unsafe { take_malloced(out, len) };
        // A failed partial merge only means the operands stay apart.
        value.filter(|_| success != 0)
    }
}

/// A merge operator of C functions: `full_merge` (required) and `partial_merge` (may be
/// null), called with `state`; `destructor` (may be null) releases `state` once the
/// operator is no longer used, also when creation fails. `name` is copied. Null and `*errptr` set for a null
/// `full_merge` or name. Release the handle with `strata_mergeoperator_destroy`.
///
/// # Safety
/// The functions and `state` usable from any thread, concurrently; `name` NUL-terminated;
/// `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_mergeoperator_create(
    state: *mut c_void,
    destructor: strata_destructor_fn,
    full_merge: strata_full_merge_fn,
    partial_merge: strata_partial_merge_fn,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_mergeoperator_t {
    // The state is the operator's from here on, even if creation fails.
    let state = State::new(state, destructor);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let name = name_of(name, "merge operator")?;
            let full_merge = full_merge.ok_or("the full merge function is a null pointer")?;
            let op = CMergeOperator {
                name,
                state,
                full_merge,
                partial_merge,
            };
            Ok(into_handle(strata_mergeoperator_t { op: Arc::new(op) }))
        })
    }
}

/// The built-in `uint64add`: adds 8-byte little-endian unsigned integers (an operand or
/// value of another length counts as 0). Release it with `strata_mergeoperator_destroy`.
#[no_mangle]
pub extern "C" fn strata_mergeoperator_create_uint64add() -> *mut strata_mergeoperator_t {
    into_handle(strata_mergeoperator_t {
        op: Arc::new(UInt64Add),
    })
}

/// The built-in `stringappend`: joins the value and operands, oldest first, with
/// `delimiter` (copied; may be empty). Null and `*errptr` set for a null `delimiter` with a
/// non-zero length. Release it with `strata_mergeoperator_destroy`.
///
/// # Safety
/// `delimiter` readable for `delimiter_len`; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_mergeoperator_create_stringappend(
    delimiter: *const c_char,
    delimiter_len: usize,
    errptr: *mut *mut c_char,
) -> *mut strata_mergeoperator_t {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let delimiter = bytes(delimiter, delimiter_len, "delimiter")?;
            Ok(into_handle(strata_mergeoperator_t {
                op: Arc::new(StringAppend::new(delimiter)),
            }))
        })
    }
}

/// Releases the caller's share of a merge operator (options and databases keep theirs).
///
/// # Safety
/// `op` null or from a `strata_mergeoperator_create*` function, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_mergeoperator_destroy(op: *mut strata_mergeoperator_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(op) }
}
