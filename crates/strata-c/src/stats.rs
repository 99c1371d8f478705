//! Statistics: the database's counters by name (RocksDB's tickers), and their reset; the
//! tree's shape as text. The readable report is the `strata.stats` property
//! (`strata_property_value`).

use std::ffi::{c_char, c_uchar};

use strata::DbStats;

use crate::error::guard;
use crate::{handle, strata_t, text};

/// The names of the statistics `strata_statistics_get` knows: the engine's one list
/// (`DbStats::iter`), so that the C API cannot drift from it.
pub(crate) fn statistic_names() -> Vec<&'static str> {
    DbStats::default().iter().map(|(name, _)| name).collect()
}

/// The sequence number of the last write the database has published (RocksDB's
/// `rocksdb_get_latest_sequence_number`): on a secondary instance, the last one it has
/// caught up to. 0 for a null `db`. A reader of the change feed asks
/// `strata_get_updates_since` for the one after it next time.
///
/// # Safety
/// `db` null or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_get_latest_sequence_number(db: *mut strata_t) -> u64 {
    // SAFETY: the caller promises a live handle or null.
    let Some(db) = (unsafe { db.as_ref() }) else {
        return 0;
    };
    crate::error::guard_quiet(0, || db.db.latest_sequence_number())
}

/// Sets `*value` to the statistic `name` (`keys_written`, `gets`, `flushes`,
/// `stall_micros`, ... : the numbers Rust's `DbStats::iter` names) and returns 1; an unknown
/// name sets `*errptr` listing the known ones, and returns 0.
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
            let Some(read) = db.stats().get(name) else {
                return Err(format!(
                    "no statistic is named {name:?}; known: {}",
                    statistic_names().join(", ")
                ));
            };
            if value.is_null() {
                return Err("value is a null pointer".into());
            }
            *value = read;
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

#[cfg(test)]
mod tests {
    use std::ffi::CString;

    use super::*;

    /// Every statistic the engine names is readable through the C API with the value the
    /// engine gives, and nothing else is.
    #[test]
    fn every_engine_statistic_is_readable_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut options = strata::Options::default();
        options.create_if_missing = true;
        let engine = strata::Db::open(dir.path(), options).unwrap();
        engine.put(b"k", b"v").unwrap();
        engine.flush().unwrap();
        let db = Box::into_raw(Box::new(crate::strata_t { db: engine }));
        let names = statistic_names();
        assert!(names.contains(&"keys_written") && names.contains(&"estimated_keys"));
        // SAFETY: `db` is live until destroyed below; the strings outlive the calls.
        unsafe {
            let stats = (*db).db.stats();
            for (name, expected) in stats.iter() {
                let c = CString::new(name).unwrap();
                let (mut value, mut err) = (u64::MAX, std::ptr::null_mut());
                assert_eq!(
                    strata_statistics_get(db, c.as_ptr(), &mut value, &mut err),
                    1
                );
                assert!(err.is_null(), "{name}");
                assert_eq!(value, expected, "{name}");
            }
            let c = CString::new("no_such_statistic").unwrap();
            let (mut value, mut err) = (0, std::ptr::null_mut());
            assert_eq!(
                strata_statistics_get(db, c.as_ptr(), &mut value, &mut err),
                0
            );
            let message = std::ffi::CStr::from_ptr(err).to_string_lossy().into_owned();
            assert!(message.contains("estimated_keys"), "{message}");
            crate::strata_free(err.cast());
            crate::strata_close(db);
        }
    }
}
