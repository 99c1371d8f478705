//! Atomic flush: with the WAL disabled, a crash must leave every column family cut at the
//! same write. A workload writes each key to two families in one batch without the WAL,
//! with memtables small enough to switch often and a manual flush now and then; it is
//! crashed at each of its file operations (the fault-injecting file system, with and without
//! a power cut). The reopened database must hold each key in both families or in neither,
//! the keys held must be a prefix of those written, and every key written before the last
//! flush that returned must be there. The same workload without atomic flush is shown to
//! break the first rule at some crash point, so the test can fail.

use std::path::Path;
use std::sync::Arc;

use strata::fs::fault::FaultFs;
use strata::{CfOptions, Db, Options, WriteBatch, WriteOptions};

const KEYS: usize = 120;
const FAMILIES: [&str; 2] = ["left", "right"];

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn options(fs: &FaultFs, atomic: bool) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.atomic_flush = atomic;
    options.write_buffer_size = 4096;
    options.disable_auto_compactions = true;
    options.fs = Arc::new(fs.clone());
    options
}

fn families() -> Vec<(&'static str, CfOptions)> {
    let mut small = CfOptions::default();
    small.write_buffer_size = 4096;
    small.disable_auto_compactions = true;
    FAMILIES.iter().map(|n| (*n, small.clone())).collect()
}

/// Runs the workload; returns the number of keys written before the last flush that
/// returned.
fn workload(dir: &Path, fs: &FaultFs, atomic: bool) -> usize {
    let mut flushed = 0;
    let Ok(db) = Db::open_cf(dir, options(fs, atomic), families()) else {
        return flushed;
    };
    let handles: Vec<_> = FAMILIES.iter().map(|n| db.cf(n).expect("family")).collect();
    let mut no_wal = WriteOptions::default();
    no_wal.disable_wal = true;
    for i in 0..KEYS {
        let mut batch = WriteBatch::new();
        for cf in &handles {
            batch.put_cf(cf, key(i), format!("value-{i}-").repeat(8));
        }
        if db.write(batch, &no_wal).is_err() {
            break;
        }
        if i % 40 == 39 {
            if db.flush().is_err() {
                break;
            }
            flushed = i + 1;
        }
    }
    // Closes (a close flushes what skipped the WAL); after the crash every operation
    // fails, as in a dying process.
    drop(db);
    flushed
}

/// Which keys each family holds after reopening `dir`.
fn held(dir: &Path, context: &str) -> Vec<Vec<bool>> {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    let db = Db::open_cf(dir, options, families())
        .unwrap_or_else(|e| panic!("{context}: reopen failed: {e}"));
    let held = FAMILIES
        .iter()
        .map(|n| {
            let cf = db.cf(n).expect("family");
            (0..KEYS)
                .map(|i| db.get_cf(&cf, key(i)).expect("get").is_some())
                .collect()
        })
        .collect();
    db.close().expect("close");
    held
}

/// Crashes the workload at every operation; returns how many crash points left the
/// families cut at different writes. Panics on any other broken rule.
fn crash_at_every_operation(atomic: bool) -> usize {
    let clean = tempfile::tempdir().expect("tempdir");
    let fs = FaultFs::new();
    assert_eq!(workload(&clean.path().join("db"), &fs, atomic), KEYS);
    let total = fs.ops();
    assert!(total > 50, "{total} operations");
    let mut split = 0;
    let mut crashes = 0;
    for n in 1..=total {
        for power_cut in [true, false] {
            if !power_cut && n % 3 != 0 {
                continue;
            }
            let root = tempfile::tempdir().expect("tempdir");
            let dir = root.path().join("db");
            let fs = FaultFs::new();
            fs.crash_at(n);
            let flushed = workload(&dir, &fs, atomic);
            if !fs.has_crashed() {
                continue;
            }
            crashes += 1;
            if power_cut {
                fs.power_loss().expect("power loss");
            }
            if !dir.join("IDENTITY").exists() {
                continue;
            }
            let context =
                format!("atomic {atomic}, crash at op {n} of {total}, power cut {power_cut}");
            let held = held(&dir, &context);
            if held[0] != held[1] {
                split += 1;
                continue;
            }
            let count = held[0].iter().filter(|h| **h).count();
            assert!(
                held[0][..count].iter().all(|h| *h),
                "{context}: not a prefix: {held:?}"
            );
            assert!(
                count >= flushed,
                "{context}: {count} keys, {flushed} were flushed"
            );
        }
    }
    assert!(
        crashes as u64 >= total,
        "{crashes} crashes of {total} operations"
    );
    split
}

#[test]
fn a_crash_leaves_every_family_cut_at_the_same_write() {
    assert_eq!(crash_at_every_operation(true), 0);
}

#[test]
fn without_atomic_flush_a_crash_can_split_a_batch_between_families() {
    let split = crash_at_every_operation(false);
    assert!(
        split > 0,
        "no crash point split the families: the test above shows nothing"
    );
}
