//! Crash and corruption tests of WAL recovery.
//!
//! A database writes numbered batches; each batch sets `counter` to its number and adds keys
//! of its own. The WAL is then cut at many byte offsets (every offset in its last records)
//! or has bytes flipped, and reopened. Every open must either succeed with exactly a prefix
//! of the batches, each whole or absent, or fail with a corruption error naming the WAL.

use std::fs;
use std::path::{Path, PathBuf};

use strata::internals::Rng;
use strata::{Db, ErrorKind, Options, WalRecoveryMode, WriteBatch, WriteOptions};

const BATCHES: usize = 60;

fn batch_keys(i: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let n = 1 + i % 4;
    (0..n)
        .map(|j| {
            let len = if i == BATCHES - 3 && j == 0 {
                70_000
            } else {
                10 + (i * 7 + j) % 50
            };
            (
                format!("b{i:03}-{j}").into_bytes(),
                vec![b'a' + (i % 26) as u8; len],
            )
        })
        .collect()
}

fn open_options() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options
}

/// Writes the batches into a new database and returns its directory and the WAL's path.
fn write_database(root: &Path) -> (PathBuf, PathBuf) {
    let dir = root.join("origin");
    let db = Db::open(&dir, open_options()).unwrap();
    for i in 0..BATCHES {
        let mut b = WriteBatch::new();
        b.put(b"counter", i.to_string().as_bytes());
        for (k, v) in batch_keys(i) {
            b.put(&k, &v);
        }
        if i % 10 == 9 {
            b.delete(format!("b{:03}-0", i - 1).as_bytes());
        }
        db.write(b, &WriteOptions::default()).unwrap();
    }
    db.close().unwrap();
    let wal = largest_wal(&dir);
    (dir, wal)
}

fn largest_wal(dir: &Path) -> PathBuf {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .max_by_key(|p| fs::metadata(p).unwrap().len())
        .unwrap()
}

/// Checks that `db` holds exactly batches `0..p` for some `p`, and returns `p`.
fn check_prefix(db: &Db, context: &str) -> usize {
    let p = match db.get(b"counter").unwrap() {
        None => 0,
        Some(v) => String::from_utf8(v).unwrap().parse::<usize>().unwrap() + 1,
    };
    for i in 0..BATCHES {
        for (j, (k, v)) in batch_keys(i).into_iter().enumerate() {
            let deleted_later = j == 0 && i % 10 == 8 && i + 1 < p;
            let expect = (i < p && !deleted_later).then_some(v);
            assert_eq!(
                db.get(&k).unwrap(),
                expect,
                "{context}: prefix {p}, batch {i} key {j}"
            );
        }
    }
    p
}

/// Makes a copy of database `origin` in `dst` with its WAL replaced by `wal_bytes`.
fn copy_with_wal(origin: &Path, wal: &Path, dst: &Path, wal_bytes: &[u8]) {
    let _ = fs::remove_dir_all(dst);
    fs::create_dir_all(dst).unwrap();
    fs::copy(origin.join("IDENTITY"), dst.join("IDENTITY")).unwrap();
    fs::write(dst.join(wal.file_name().unwrap()), wal_bytes).unwrap();
}

#[test]
fn truncated_wal_recovers_a_prefix_of_whole_batches() {
    let root = tempfile::tempdir().unwrap();
    let (origin, wal) = write_database(root.path());
    let bytes = fs::read(&wal).unwrap();
    let case = root.path().join("case");
    // Every offset in the last 3,000 bytes (the last dozen records), then a stride through
    // the rest, including the 70 KB record that spans three log blocks.
    let mut cuts: Vec<usize> = (bytes.len().saturating_sub(3000)..=bytes.len()).collect();
    cuts.extend((0..bytes.len()).step_by(331));
    let mut last_prefix = 0;
    let mut prefixes = std::collections::BTreeSet::new();
    for cut in cuts {
        copy_with_wal(&origin, &wal, &case, &bytes[..cut]);
        let db = Db::open(&case, open_options()).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        let report = db.recovery_report().clone();
        let p = check_prefix(&db, &format!("cut at {cut}"));
        if cut == bytes.len() {
            assert_eq!(p, BATCHES);
            assert_eq!(report.dropped_bytes, 0);
        }
        assert!(report.dropped_bytes <= cut as u64);
        prefixes.insert(p);
        last_prefix = last_prefix.max(p);
        db.close().unwrap();
    }
    assert_eq!(last_prefix, BATCHES);
    assert!(prefixes.len() > 20, "cuts should land in many records");
}

#[test]
fn flipped_bytes_give_a_prefix_never_wrong_data() {
    let root = tempfile::tempdir().unwrap();
    let (origin, wal) = write_database(root.path());
    let bytes = fs::read(&wal).unwrap();
    let case = root.path().join("case");
    let mut rng = Rng::new(2024);
    for round in 0..400 {
        let mut damaged = bytes.clone();
        // Half the flips land in the last records, where a torn write would be.
        let at = if round % 2 == 0 {
            bytes.len() - 1 - rng.below(2000) as usize
        } else {
            rng.below(bytes.len() as u64) as usize
        };
        damaged[at] ^= 1 << rng.below(8);
        copy_with_wal(&origin, &wal, &case, &damaged);
        match Db::open(&case, open_options()) {
            Ok(db) => {
                let p = check_prefix(&db, &format!("flip at {at}"));
                assert!(
                    p < BATCHES || damaged == bytes,
                    "flip at {at} went unnoticed"
                );
                let report = db.recovery_report();
                assert!(report.dropped_records >= 1, "flip at {at}: {report:?}");
                let what = report.corruption.clone().unwrap_or_default();
                assert!(what.contains(".log"), "{what}");
                db.close().unwrap();
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Corruption, "flip at {at}: {e}");
                assert!(e.to_string().contains(".log"), "{e}");
            }
        }
    }
}

#[test]
fn recovered_torn_tail_is_cut_so_later_opens_stay_clean() {
    let root = tempfile::tempdir().unwrap();
    let (origin, wal) = write_database(root.path());
    let bytes = fs::read(&wal).unwrap();
    let case = root.path().join("case");
    copy_with_wal(&origin, &wal, &case, &bytes[..bytes.len() - 5]);

    let db = Db::open(&case, open_options()).unwrap();
    let p = check_prefix(&db, "first open");
    assert_eq!(p, BATCHES - 1);
    let report = db.recovery_report().clone();
    assert_eq!(report.dropped_records, 1);
    assert!(report.dropped_bytes > 0);
    assert!(report.set_aside[0]
        .to_string_lossy()
        .ends_with(".log.dropped"));
    db.put(b"after", b"crash").unwrap();
    db.close().unwrap();

    // The cut WAL is now an older WAL: it must read cleanly.
    let db = Db::open(&case, open_options()).unwrap();
    assert_eq!(db.recovery_report().dropped_records, 0);
    assert_eq!(check_prefix(&db, "second open"), BATCHES - 1);
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"crash"[..]));
}

/// Builds a database directory with two WALs: 000001.log holds old0..old9, 000002.log holds
/// `newest`. They are cut from one session's WAL at a record boundary inside its first block,
/// so both read as logs of their own (the flush thread would otherwise race to remove the
/// older WAL of a real two-WAL database).
fn two_wal_database(root: &Path) -> PathBuf {
    let session = root.join("session");
    let db = Db::open(&session, open_options()).unwrap();
    for i in 0..10 {
        db.put(format!("old{i}").as_bytes(), b"v").unwrap();
    }
    db.sync_wal().unwrap();
    let wal = largest_wal(&session);
    let split = fs::metadata(&wal).unwrap().len() as usize;
    db.put(b"newest", b"v").unwrap();
    db.close().unwrap();
    let bytes = fs::read(&wal).unwrap();
    assert!(
        bytes.len() < 32 * 1024,
        "both parts must lie in the first log block"
    );

    let dir = root.join("two-wals");
    fs::create_dir_all(&dir).unwrap();
    fs::copy(session.join("IDENTITY"), dir.join("IDENTITY")).unwrap();
    fs::write(dir.join("000001.log"), &bytes[..split]).unwrap();
    fs::write(dir.join("000002.log"), &bytes[split..]).unwrap();
    dir
}

#[test]
fn two_wals_replay_in_order() {
    let root = tempfile::tempdir().unwrap();
    let dir = two_wal_database(root.path());
    let db = Db::open(&dir, open_options()).unwrap();
    assert_eq!(db.recovery_report().wal_files, 2);
    assert_eq!(db.recovery_report().batches, 11);
    assert_eq!(db.get(b"old9").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"newest").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn corruption_in_an_older_wal_is_an_error_unless_recovering_to_a_point_in_time() {
    let root = tempfile::tempdir().unwrap();
    let dir = two_wal_database(root.path());
    // Damage the last record of the older WAL (old9).
    let older = dir.join("000001.log");
    let mut old = fs::read(&older).unwrap();
    let len = old.len();
    old[len - 3] ^= 0x01;
    fs::write(&older, &old).unwrap();

    let mut strict = open_options();
    strict.wal_recovery_mode = WalRecoveryMode::TolerateCorruptedTail;
    let err = Db::open(&dir, strict).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(err.to_string().contains("000001.log"), "{err}");
    assert!(err.to_string().contains("PointInTime"), "{err}");

    // The default recovers to a point in time.
    assert_eq!(
        open_options().wal_recovery_mode,
        WalRecoveryMode::PointInTime
    );
    let db = Db::open(&dir, open_options()).unwrap();
    let report = db.recovery_report().clone();
    assert_eq!(report.dropped_records, 1, "{report:?}");
    assert!(report
        .set_aside
        .iter()
        .any(|p| p.to_string_lossy().ends_with("000002.log.dropped")));
    // Writes before the damaged record survive; the damaged one and the newer WAL's are gone,
    // and the newer WAL is kept aside, not deleted.
    assert_eq!(db.get(b"old8").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"old9").unwrap(), None);
    assert_eq!(db.get(b"newest").unwrap(), None);
    assert!(report.set_aside.iter().all(|p| p.exists()));
}

/// Holds every flush at its start until opened, so that memtables (and their WALs) stay.
#[derive(Default)]
struct FlushGate {
    open: std::sync::Mutex<bool>,
    cv: std::sync::Condvar,
}

impl FlushGate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }
}

impl strata::EventListener for FlushGate {
    fn on_flush_begin(&self, _: &strata::FlushJobInfo) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }
}

/// Writes `n` numbered keys (unsynced) through a database whose flushes are held, so every
/// memtable stays and each switch closes a WAL no flush deletes; with `sync_last`, the last
/// write is synced. Then the power fails. Returns how many of the keys the reopened database
/// holds (always a prefix of them) and how many WALs the writes went through.
fn write_through_wals_and_cut_power(
    mode: WalRecoveryMode,
    n: usize,
    sync_last: bool,
    second_family: bool,
) -> (usize, usize) {
    use strata::fs::fault::FaultFs;
    let dir = tempfile::tempdir().unwrap();
    let fault = FaultFs::new();
    let gate = std::sync::Arc::new(FlushGate::default());
    let mut options = open_options();
    options.fs = std::sync::Arc::new(fault.clone());
    options.wal_recovery_mode = mode;
    options.write_buffer_size = 64 << 10;
    options.max_write_buffer_number = 16;
    options.listeners = vec![gate.clone()];
    options.create_missing_column_families = true;
    let families = match second_family {
        true => vec![("other", strata::CfOptions::default())],
        false => vec![],
    };
    let db = Db::open_cf(dir.path(), options.clone(), families.clone()).unwrap();
    let value = [b'v'; 200];
    for i in 0..n {
        let mut write = WriteOptions::default();
        write.sync = sync_last && i + 1 == n;
        db.put_opt(format!("k{i:06}").as_bytes(), value, &write)
            .unwrap();
    }
    let is_wal = |e: &fs::DirEntry| e.path().extension().is_some_and(|x| x == "log");
    let wals = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| is_wal(e))
        .count();
    fault.crash_at(1);
    gate.open(); // the held flush fails on the crashed file system
    drop(db);
    fault.power_loss().unwrap();
    fault.restart();

    options.listeners.clear();
    let db = Db::open_cf(dir.path(), options, families).unwrap();
    let held: Vec<bool> = (0..n)
        .map(|i| db.get(format!("k{i:06}").as_bytes()).unwrap().is_some())
        .collect();
    let kept = held.iter().take_while(|&&h| h).count();
    assert!(
        held[kept..].iter().all(|&h| !h),
        "{mode:?}: the keys recovered are not a prefix of the writes"
    );
    (kept, wals)
}

/// Under point-in-time recovery (one family) a memtable switch leaves the WAL it closes
/// unsynced: a power cut may take every unsynced write, closed WALs' included, and what
/// stays is a prefix. A synced write syncs the closed WALs first, so that everything before
/// it stays. With `TolerateCorruptedTail`, or a second family, each switch syncs the WAL it
/// closes.
#[test]
fn closed_wals_are_synced_by_the_next_synced_write_or_at_the_switch_when_tolerating_only_a_tail() {
    use WalRecoveryMode::{PointInTime, TolerateCorruptedTail};
    let n = 2000; // about 500 KiB of WAL: several switches at 64 KiB memtables
    let (kept, wals) = write_through_wals_and_cut_power(PointInTime, n, false, false);
    assert!(wals >= 3, "the writes went through {wals} WALs");
    assert_eq!(
        kept, 0,
        "nothing was synced, and nothing survives a power cut"
    );

    let (kept, _) = write_through_wals_and_cut_power(PointInTime, n, true, false);
    assert_eq!(kept, n, "the synced write made every earlier one durable");

    for (mode, second_family) in [(TolerateCorruptedTail, false), (PointInTime, true)] {
        let (kept, _) = write_through_wals_and_cut_power(mode, n, false, second_family);
        assert!(
            kept > n / 2 && kept < n,
            "{mode:?}, second family {second_family}: the WALs closed were synced, the \
             newest was not: {kept} of {n} kept"
        );
    }
}

/// A crashed process leaves writes in its WAL that were never synced. The next open replays
/// them and starts a new WAL; a synced write there must not outlive them in a power cut (the
/// recovered database is a prefix of what was acknowledged), so the open makes them durable.
#[test]
fn writes_replayed_after_a_crash_are_durable_before_later_synced_writes() {
    use strata::fs::fault::FaultFs;
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.fs = std::sync::Arc::new(fs.clone());
    let db = Db::open(dir.path(), options.clone()).unwrap();
    db.put(b"before", b"1").unwrap(); // not synced
    fs.crash_at(1);
    drop(db); // the process dies: the WAL is never synced
    fs.restart();

    let db = Db::open(dir.path(), options).unwrap();
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"1"[..]));
    let mut sync = strata::WriteOptions::default();
    sync.sync = true;
    db.put_opt(b"after", b"2", &sync).unwrap();
    fs.crash_at(1);
    drop(db);
    fs.power_loss().unwrap();

    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(
        db.get(b"before").unwrap().as_deref(),
        Some(&b"1"[..]),
        "a write acknowledged before the synced one was lost"
    );
}

/// A WAL closed unsynced stays open for a later sync only until its memtable is flushed: the
/// deletion lets go of it, so that the unlink frees its pages (no descriptor of the process
/// is left on a deleted WAL).
#[cfg(target_os = "linux")]
#[test]
fn deleted_wals_are_not_held_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = open_options();
    options.write_buffer_size = 64 << 10;
    let db = Db::open(dir.path(), options).unwrap();
    for i in 0..2000 {
        db.put(format!("k{i:06}").as_bytes(), [b'v'; 200]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let held: Vec<String> = fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| fs::read_link(e.ok()?.path()).ok())
        .map(|target| target.to_string_lossy().into_owned())
        .filter(|t| t.starts_with(&*dir.path().to_string_lossy()) && t.contains(".log"))
        .collect();
    assert!(
        held.iter().all(|t| !t.ends_with("(deleted)")),
        "deleted WALs held open: {held:?}"
    );
    assert!(held.len() <= 1, "only the current WAL is open: {held:?}");
}
