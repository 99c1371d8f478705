//! Statistics: the database's counters by name (RocksDB's tickers), and their reset; the
//! tree's shape as text. The readable report is the `strata.stats` property
//! (`strata_property_value`).

use std::ffi::{c_char, c_uchar};

use strata::DbStats;

use crate::error::guard;
use crate::{handle, strata_t, text};

/// Reads one statistic from a snapshot of the database's statistics.
type Reader = fn(&DbStats) -> u64;

/// The counters and gauges of `DbStats` reachable by name, in the order of its fields. The
/// names are the fields' names: keep them as they are, programs spell them.
pub(crate) const STATISTICS: &[(&str, Reader)] = &[
    ("batches", |s| s.batches),
    ("write_groups", |s| s.write_groups),
    ("wal_syncs", |s| s.wal_syncs),
    ("keys_written", |s| s.keys_written),
    ("user_bytes_written", |s| s.user_bytes_written),
    ("gets", |s| s.gets),
    ("gets_found", |s| s.gets_found),
    ("memtable_switches", |s| s.memtable_switches),
    ("flushes", |s| s.flushes),
    ("write_stalls", |s| s.write_stalls),
    ("stall_micros", |s| s.stall_micros),
    ("l0_slowdowns", |s| s.l0_slowdowns),
    ("l0_slowdown_micros", |s| s.l0_slowdown_micros),
    ("l0_stops", |s| s.l0_stops),
    ("l0_stop_micros", |s| s.l0_stop_micros),
    ("pending_slowdowns", |s| s.pending_slowdowns),
    ("pending_slowdown_micros", |s| s.pending_slowdown_micros),
    ("pending_stops", |s| s.pending_stops),
    ("pending_stop_micros", |s| s.pending_stop_micros),
    ("compactions_skipped_for_space", |s| {
        s.compactions_skipped_for_space
    }),
    ("subcompactions", |s| s.subcompactions),
    ("active_memtable_entries", |s| s.active_memtable_entries),
    ("active_memtable_bytes", |s| s.active_memtable_bytes),
    ("immutable_memtables", |s| s.immutable_memtables),
    ("immutable_memtable_bytes", |s| s.immutable_memtable_bytes),
    ("live_snapshots", |s| s.live_snapshots),
    ("last_sequence", |s| s.last_sequence),
    ("pending_compaction_bytes", |s| s.pending_compaction_bytes),
    ("compactions_running", |s| s.compactions_running),
];

/// Sets `*value` to the statistic `name` (`keys_written`, `gets`, `flushes`,
/// `stall_micros`, ... : the fields of Rust's `DbStats` that are numbers) and returns 1; an
/// unknown name sets `*errptr` listing the known ones, and returns 0.
///
/// # Safety
/// Live `db`; `name` NUL-terminated; `value` a valid pointer; `errptr` as usual.
#[no_mangle]
pub unsafe extern "C" fn strata_statistics_get(
    db: *mut strata_t,
    name: *const c_char,
    value: *mut u64,
    errptr: *mut *mut c_char,
) -> c_uchar {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(errptr, 0, || {
            let db = &handle(db, "database")?.db;
            let name = text(name, "statistic name")?;
            let Some((_, read)) = STATISTICS.iter().find(|(n, _)| *n == name) else {
                let known: Vec<&str> = STATISTICS.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "no statistic is named {name:?}; known: {}",
                    known.join(", ")
                ));
            };
            if value.is_null() {
                return Err("value is a null pointer".into());
            }
            *value = read(&db.stats());
            Ok(1)
        })
    }
}

/// Sets the database's counters back to 0 (the gauges, such as memtable sizes, are not
/// counters and stay as they are).
///
/// # Safety
/// `db` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_statistics_reset(db: *mut strata_t) {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    if let Some(db) = unsafe { db.as_ref() } {
        db.db.reset_stats();
    }
}

/// The shape of the default family's tree (memtables, then each level's files and bytes),
/// as text, malloc'd and NUL-terminated (release it with `strata_free`); null for a null
/// handle.
///
/// # Safety
/// `db` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_tree_shape(db: *mut strata_t) -> *mut c_char {
    // SAFETY: the pointers are as the function's `# Safety` section requires.
    unsafe {
        guard(std::ptr::null_mut(), std::ptr::null_mut(), || {
            let db = &handle(db, "database")?.db;
            Ok(crate::error::malloc_copy(
                db.tree_shape().to_string().as_bytes(),
            ))
        })
    }
}
