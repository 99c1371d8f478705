//! Compaction filters made of a C function, set on options with
//! `strata_options_set_compaction_filter`.
//!
//! Ownership as for merge operators: the handle is a share; options and databases keep
//! their own; the state's destructor runs when the last share goes. The function is called
//! by compactions, on background threads, possibly several at once; it must decide the same
//! way for the same entry (a failed compaction shows it again).

use std::ffi::{c_char, c_int, c_uchar, c_void};
use std::sync::Arc;

use strata::{CompactionFilter, EntryKind, FilterDecision};

use crate::callback::{name_of, returned, strata_destructor_fn, State};
use crate::error::guard;
use crate::{into_handle, release};

/// A compaction filter; see `strata_options_set_compaction_filter`.
pub struct strata_compactionfilter_t {
    pub(crate) filter: Arc<dyn CompactionFilter>,
}

/// A C filter's decision on the newest version of `key`, which no snapshot sees, in a
/// compaction writing to `level`. `is_merge_operand` is 1 for a merge operand not yet
/// combined with a value, 0 for a value. Return 1 to remove the entry; or return 0 and, to
/// change its value, set `*value_changed` to 1 and `*new_value` to a malloc'd buffer of
/// `*new_value_length` bytes (Strata frees it); return 0 alone to keep it.
pub type strata_compaction_filter_fn = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        level: c_int,
        key: *const c_char,
        key_length: usize,
        is_merge_operand: c_uchar,
        existing_value: *const c_char,
        value_length: usize,
        new_value: *mut *mut c_char,
        new_value_length: *mut usize,
        value_changed: *mut c_uchar,
    ) -> c_uchar,
>;

type FilterFn = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    *const c_char,
    usize,
    c_uchar,
    *const c_char,
    usize,
    *mut *mut c_char,
    *mut usize,
    *mut c_uchar,
) -> c_uchar;

struct CCompactionFilter {
    name: String,
    state: State,
    filter: FilterFn,
}

impl CompactionFilter for CCompactionFilter {
    fn name(&self) -> &str {
        &self.name
    }

    fn filter(
        &self,
        level: usize,
        key: &[u8],
        kind: EntryKind,
        value: &[u8],
    ) -> Result<FilterDecision, String> {
        let is_operand = c_uchar::from(matches!(kind, EntryKind::MergeOperand));
        let mut new_value: *mut c_char = std::ptr::null_mut();
        let mut new_len = 0usize;
        let mut changed: c_uchar = 0;
        // SAFETY: the key and value are valid for the call, the out-pointers are locals; the
        // state is used as the header allows.
        let remove = unsafe {
            (self.filter)(
                self.state.ptr(),
                c_int::try_from(level).unwrap_or(c_int::MAX),
                key.as_ptr().cast(),
                key.len(),
                is_operand,
                value.as_ptr().cast(),
                value.len(),
                &mut new_value,
                &mut new_len,
                &mut changed,
            )
        };
        // SAFETY: a changed value is a malloc'd buffer of `new_len` bytes, now Strata's.
        let changed_value =
            (changed != 0).then(|| unsafe { returned(new_value, new_len) }.map(<[u8]>::to_vec));
        if !new_value.is_null() {
            // SAFETY: as above; freed whether or not the filter said it changed the value.
            unsafe { libc::free(new_value.cast()) };
        }
        Ok(match (remove, changed_value) {
            (0, None) => FilterDecision::Keep,
            (0, Some(Some(v))) => FilterDecision::ChangeValue(v),
            (0, Some(None)) => {
                return Err(format!(
                    "the filter changed the value to a null pointer with length {new_len}"
                ))
            }
            _ => FilterDecision::Remove,
        })
    }
}

/// A compaction filter of the C function `filter`, called with `state`; `destructor` (may be
/// null) releases `state` once the filter is no longer used, also when creation fails.
/// `name` is copied. Null and `*errptr` set for a null `filter` or name. Release the handle
/// with `strata_compactionfilter_destroy`.
///
/// # Safety
/// `filter` and `state` usable from any thread, concurrently; `name` NUL-terminated;
/// `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_compactionfilter_create(
    state: *mut c_void,
    destructor: strata_destructor_fn,
    filter: strata_compaction_filter_fn,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut strata_compactionfilter_t {
    let state = State::new(state, destructor);
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, std::ptr::null_mut(), || {
            let name = name_of(name, "compaction filter")?;
            let filter = filter.ok_or("the filter function is a null pointer")?;
            let f = CCompactionFilter {
                name,
                state,
                filter,
            };
            Ok(into_handle(strata_compactionfilter_t {
                filter: Arc::new(f),
            }))
        })
    }
}

/// Releases the caller's share of a compaction filter (options and databases keep theirs).
///
/// # Safety
/// `filter` null or from `strata_compactionfilter_create`, released once.
#[no_mangle]
pub unsafe extern "C" fn strata_compactionfilter_destroy(filter: *mut strata_compactionfilter_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe { release(filter) }
}
