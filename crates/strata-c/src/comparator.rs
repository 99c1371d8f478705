//! User comparators: a key order made of a C function, set on options with
//! `strata_options_set_comparator`.
//!
//! Ownership as for merge operators: the handle is a share; options and databases keep
//! their own; the state's destructor runs when the last share goes. The order's name is
//! recorded in the manifest and in every table, so a database must be reopened with a
//! comparator of the same name (and the same order: Strata cannot check that part).
//! The function must be a strict weak order and must not fail; it is called very often,
//! from any thread.

use std::cmp::Ordering;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use strata::Comparator;

use crate::callback::{name_of, strata_destructor_fn, State};
use crate::error::guard;
use crate::{into_handle, release};

/// A key order; see `strata_options_set_comparator`.
pub struct strata_comparator_t {
    pub(crate) cmp: Arc<dyn Comparator>,
}

/// A C comparator's order: negative if `a` sorts before `b`, 0 if they are equal, positive
/// after.
pub type strata_compare_fn = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        a: *const c_char,
        alen: usize,
        b: *const c_char,
        blen: usize,
    ) -> c_int,
>;

struct CComparator {
    name: String,
    state: State,
    compare: unsafe extern "C" fn(*mut c_void, *const c_char, usize, *const c_char, usize) -> c_int,
}

impl Comparator for CComparator {
    fn name(&self) -> &str {
        &self.name
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        // SAFETY: both keys are valid for the call; the state is used as the header allows.
        let c = unsafe {
            (self.compare)(
                self.state.ptr(),
                a.as_ptr().cast(),
                a.len(),
                b.as_ptr().cast(),
                b.len(),
            )
        };
        c.cmp(&0)
    }
}

/// A key order of the C function `compare`, called with `state`; `destructor` (may be null)
/// releases `state` once the order is no longer used, also when creation fails. `name` is
/// copied. Null and `*errptr` set for a null `compare` or name. Release the handle with
/// `strata_comparator_destroy`.
///
/// # Safety
/// `compare` and `state` usable from any thread, concurrently; `name` NUL-terminated;
/// `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_comparator_create(
    state: *mut c_void,
    destructor: strata_destructor_fn,
    compare: strata_compare_fn,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_comparator_t {
    let state = State::new(state, destructor);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let name = name_of(name, "comparator")?;
            let compare = compare.ok_or("the compare function is a null pointer")?;
            let cmp = CComparator {
                name,
                state,
                compare,
            };
            Ok(into_handle(strata_comparator_t { cmp: Arc::new(cmp) }))
        })
    }
}

/// Releases the caller's share of a comparator (options and databases keep theirs).
///
/// # Safety
/// `cmp` null or from `strata_comparator_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_comparator_destroy(cmp: *mut strata_comparator_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(cmp) }
}
