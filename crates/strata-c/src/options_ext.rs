//! The options that take objects rather than numbers: merge operator, comparator,
//! compaction filter, event listeners, prefix extractor, TTL; the read options of prefix
//! seeks; and universal compaction's settings.
//!
//! Ownership: a setter takes its own share of the object; the caller's handle stays the
//! caller's, to be destroyed when it likes. A null object clears the setting (for the
//! comparator: back to bytewise order). Setters without `errptr` ignore a null options
//! handle.

use std::ffi::{c_char, c_uchar};
use std::sync::Arc;
use std::time::Duration;

use strata::BytewiseComparator;

use crate::error::guard;
use crate::{
    handle, strata_compactionfilter_t, strata_comparator_t, strata_eventlistener_t,
    strata_mergeoperator_t, strata_options_t, strata_readoptions_t, text,
};

/// The options behind `opt`, if any.
///
/// # Safety
/// `opt` null or a live handle used by no other thread during the call.
unsafe fn options<'a>(opt: *mut strata_options_t) -> Option<&'a mut strata::Options> {
    // SAFETY: forwarded from the caller.
    unsafe { opt.as_mut() }.map(|o| &mut o.options)
}

/// Merge operands are combined by `op` (null: no merge operator; merges then fail).
///
/// # Safety
/// `opt` null or a live handle; `op` null or a live merge operator.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_merge_operator(
    opt: *mut strata_options_t,
    op: *const strata_mergeoperator_t,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { options(opt) } {
        o.merge_operator = unsafe { op.as_ref() }.map(|op| Arc::clone(&op.op));
    }
}

/// Keys are ordered by `cmp` (null: bytewise). A database must be reopened with a comparator
/// of the same name.
///
/// # Safety
/// `opt` null or a live handle; `cmp` null or a live comparator.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_comparator(
    opt: *mut strata_options_t,
    cmp: *const strata_comparator_t,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { options(opt) } {
        o.comparator = match unsafe { cmp.as_ref() } {
            Some(c) => Arc::clone(&c.cmp),
            None => Arc::new(BytewiseComparator),
        };
    }
}

/// Compactions ask `filter` what to keep (null: no filter).
///
/// # Safety
/// `opt` null or a live handle; `filter` null or a live compaction filter.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_compaction_filter(
    opt: *mut strata_options_t,
    filter: *const strata_compactionfilter_t,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { options(opt) } {
        o.compaction_filter = unsafe { filter.as_ref() }.map(|f| Arc::clone(&f.filter));
    }
}

/// Adds `listener` to those told of the database's events (a null listener is ignored).
///
/// # Safety
/// `opt` null or a live handle; `listener` null or a live event listener.
#[no_mangle]
pub unsafe extern "C" fn strata_options_add_eventlistener(
    opt: *mut strata_options_t,
    listener: *const strata_eventlistener_t,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let (Some(o), Some(l)) = (unsafe { options(opt) }, unsafe { listener.as_ref() }) {
        o.listeners.push(Arc::clone(&l.listener));
    }
}

/// Keys have prefixes as `spec` says, `fixed:N` (the first N bytes; shorter keys have
/// none) or `capped:N` (at most N bytes); tables then keep prefix filters. A null `spec`
/// removes the extractor. An invalid spec sets `*errptr` naming it, and changes nothing.
///
/// # Safety
/// `opt` a live handle; `spec` null or NUL-terminated; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_prefix_extractor(
    opt: *mut strata_options_t,
    spec: *const c_char,
    errptr: *mut *mut c_char,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, (), || {
            handle(opt, "options")?;
            let extractor = if spec.is_null() {
                None
            } else {
                let spec = text(spec, "prefix extractor")?;
                Some(strata::parse_prefix_extractor(spec).map_err(|e| e.to_string())?)
            };
            if let Some(o) = options(opt) {
                o.prefix_extractor = extractor;
            }
            Ok(())
        })
    }
}

/// Values expire `seconds` after they are written (a TTL family: reads hide expired
/// values, compactions drop them); 0 means no TTL. A family keeps the TTL it was created
/// with: reopening with another one is refused.
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_ttl(opt: *mut strata_options_t, seconds: u64) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { options(opt) } {
        o.ttl = (seconds > 0).then(|| Duration::from_secs(seconds));
    }
}

/// Iterators stop at the first key whose prefix differs from the seek target's (0 or 1).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_set_prefix_same_as_start(
    opt: *mut strata_readoptions_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.prefix_same_as_start = v != 0;
    }
}

/// Seeks ignore prefix filters and see every key in order (0 or 1).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_readoptions_set_total_order_seek(
    opt: *mut strata_readoptions_t,
    v: c_uchar,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { opt.as_mut() } {
        o.options.total_order_seek = v != 0;
    }
}

/// Universal compaction: percent of slack in the size comparison of runs (`size_ratio`, 1
/// by default).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_universal_size_ratio(
    opt: *mut strata_options_t,
    v: u32,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { options(opt) } {
        o.universal.size_ratio = v;
    }
}

/// Universal compaction: the fewest runs merged at once by size ratio (2 by default).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_universal_min_merge_width(
    opt: *mut strata_options_t,
    v: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { options(opt) } {
        o.universal.min_merge_width = v;
    }
}

/// Universal compaction: the most runs merged at once by size ratio (unlimited by default).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_universal_max_merge_width(
    opt: *mut strata_options_t,
    v: usize,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { options(opt) } {
        o.universal.max_merge_width = v;
    }
}

/// Universal compaction: bytes of newer runs, as a percent of the oldest run, that trigger a
/// full merge (200 by default).
///
/// # Safety
/// `opt` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_options_set_universal_max_size_amplification_percent(
    opt: *mut strata_options_t,
    v: u32,
) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(o) = unsafe { options(opt) } {
        o.universal.max_size_amplification_percent = v;
    }
}
