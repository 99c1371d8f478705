//! `Options::avoid_flush_during_recovery`: what open replays from the WALs stays in the
//! family's active memtable instead of going to level 0, and the WALs it came from stay
//! until that memtable is flushed.
//!
//! The model test runs two families through rounds of writes, flushes of one family, and
//! reopens with and without the option (close does not flush, so every reopen replays), and
//! checks every key against a map after each reopen: a WAL deleted while a kept memtable
//! still needed it shows as lost writes there.

use std::collections::BTreeMap;
use std::path::Path;

use strata::internals::Rng;
use strata::{CfOptions, ColumnFamily, Db, Options, ReadOptions};

fn options(avoid_flush: bool) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.avoid_flush_during_recovery = avoid_flush;
    options
}

fn open(dir: &Path, avoid_flush: bool, write_buffer_size: usize) -> Db {
    let mut cf = CfOptions::default();
    cf.write_buffer_size = write_buffer_size;
    Db::open_cf(
        dir,
        options(avoid_flush),
        [("default", cf.clone()), ("b", cf)],
    )
    .expect("open")
}

fn count_files(dir: &Path, suffix: &str) -> usize {
    std::fs::read_dir(dir)
        .expect("list")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(suffix))
        })
        .count()
}

fn int(db: &Db, cf: &ColumnFamily, name: &str) -> u64 {
    db.property_cf(cf, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("property {name}"))
}

/// (level-0 tables, immutable memtables, active memtable entries) of `cf`.
fn shape(db: &Db, cf: &ColumnFamily) -> (u64, u64, u64) {
    (
        int(db, cf, "strata.num-files-at-level0"),
        int(db, cf, "strata.num-immutable-mem-table"),
        int(db, cf, "strata.num-entries-active-mem-table"),
    )
}

fn write_keys(db: &Db, cf: &ColumnFamily, from: u32, count: u32) {
    for i in from..from + count {
        db.put_cf(cf, format!("k{i:05}"), format!("v{i}"))
            .expect("put");
    }
}

fn check_keys(db: &Db, cf: &ColumnFamily, from: u32, count: u32) {
    for i in from..from + count {
        let got = db.get_cf(cf, format!("k{i:05}")).expect("get");
        assert_eq!(got.as_deref(), Some(format!("v{i}").as_bytes()), "k{i:05}");
    }
}

/// With the option, a reopen writes no table: the replayed writes are the active memtable,
/// new writes join them, and the WAL they came from stays until a flush. Without it, the
/// same reopen flushes them to level 0.
#[test]
fn replayed_writes_stay_in_the_active_memtable_until_a_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path(), false, 1 << 20);
    let cf = db.cf("default").expect("default");
    write_keys(&db, &cf, 0, 100);
    db.close().expect("close");
    let wals_before = count_files(dir.path(), ".log");

    let db = open(dir.path(), true, 1 << 20);
    let cf = db.cf("default").expect("default");
    db.wait_for_compactions().expect("wait");
    assert_eq!(shape(&db, &cf), (0, 0, 100), "kept as the active memtable");
    assert_eq!(count_files(dir.path(), ".sst"), 0, "open wrote no table");
    // The replayed WAL stays beside the new one.
    assert_eq!(count_files(dir.path(), ".log"), wals_before + 1);
    check_keys(&db, &cf, 0, 100);
    write_keys(&db, &cf, 100, 50);
    assert_eq!(shape(&db, &cf), (0, 0, 150), "new writes join it");
    db.flush().expect("flush");
    assert_eq!(shape(&db, &cf), (1, 0, 0));
    // Every WAL before the flush is gone: only the one after it is left.
    assert_eq!(count_files(dir.path(), ".log"), 1);
    check_keys(&db, &cf, 0, 150);
    db.close().expect("close");

    // The control: without the option the same reopen flushes.
    let db = open(dir.path(), false, 1 << 20);
    let cf = db.cf("default").expect("default");
    write_keys(&db, &cf, 150, 10);
    db.close().expect("close");
    let db = open(dir.path(), false, 1 << 20);
    let cf = db.cf("default").expect("default");
    db.wait_for_compactions().expect("wait");
    assert_eq!(
        shape(&db, &cf),
        (2, 0, 0),
        "flushed at open without the option"
    );
    check_keys(&db, &cf, 0, 160);
    db.close().expect("close");
}

/// A family whose replay filled more than one memtable (writes in two WALs), or more than a
/// memtable's size, is flushed at open with the option too; so is every family with atomic
/// flush.
#[test]
fn families_it_does_not_apply_to_are_flushed_at_open() {
    // (case, write buffer at the reopen, atomic flush, reopens with writes before the last)
    let cases: [(&str, usize, bool, usize); 4] = [
        ("one memtable that fits", 1 << 20, false, 1),
        ("two WALs with writes", 1 << 20, false, 2),
        ("more than a memtable", 32 << 10, false, 1),
        ("atomic flush", 1 << 20, true, 1),
    ];
    for (case, write_buffer_size, atomic_flush, reopens) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut written = 0;
        for round in 0..reopens {
            // The first opens keep the replayed memtable, so the next WAL adds a second one.
            let db = open(dir.path(), round > 0, 1 << 20);
            let cf = db.cf("default").expect("default");
            write_keys(&db, &cf, written, 1000);
            written += 1000;
            db.close().expect("close");
        }
        let mut cf_options = CfOptions::default();
        cf_options.write_buffer_size = write_buffer_size;
        let mut options = options(true);
        options.atomic_flush = atomic_flush;
        let db = Db::open_cf(
            dir.path(),
            options,
            [("default", cf_options.clone()), ("b", cf_options)],
        )
        .expect("open");
        let cf = db.cf("default").expect("default");
        db.wait_for_compactions().expect("wait");
        let (l0, immutables, active) = shape(&db, &cf);
        let kept = case == "one memtable that fits";
        assert_eq!(immutables, 0, "{case}");
        assert_eq!(l0 == 0, kept, "{case}: level-0 tables {l0}");
        assert_eq!(active, if kept { 1000 } else { 0 }, "{case}");
        check_keys(&db, &cf, 0, written);
        db.close().expect("close");
    }
}

/// Two families, one kept in memory across reopens while the other is flushed: the WALs
/// the kept memtable needs must outlive the other family's flushes. Checked against a map
/// after every reopen, with the WALs on disk bounded.
#[test]
fn kept_memtables_lose_nothing_across_reopens_and_flushes_of_other_families() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng = Rng::new(0x5eed_f1a5);
    let names = ["default", "b"];
    let mut model: [BTreeMap<String, String>; 2] = [BTreeMap::new(), BTreeMap::new()];
    let mut db = open(dir.path(), true, 64 << 10);
    let mut most_wals = 0;
    for round in 0..60u32 {
        let families: Vec<ColumnFamily> = names.iter().map(|n| db.cf(n).expect("cf")).collect();
        // Family "default" takes writes every round; "b" only some rounds, and is flushed
        // alone some rounds (its flush deletes WALs only up to what "default" needs).
        for _ in 0..rng.below(200) {
            let f = usize::from(rng.below(4) == 0);
            let key = format!("k{:04}", rng.below(500));
            if rng.below(8) == 0 {
                db.delete_cf(&families[f], &key).expect("delete");
                model[f].remove(&key);
            } else {
                let value = format!("r{round}-{}", "x".repeat(rng.below(300) as usize));
                db.put_cf(&families[f], &key, &value).expect("put");
                model[f].insert(key, value);
            }
        }
        if rng.below(3) == 0 {
            db.flush_cf(&families[1]).expect("flush b");
        }
        if rng.below(10) == 0 {
            db.flush_cf(&families[0]).expect("flush default");
        }
        drop(families);
        db.close().expect("close");
        most_wals = most_wals.max(count_files(dir.path(), ".log"));
        db = open(dir.path(), rng.below(4) != 0, 64 << 10);
        for (f, name) in names.iter().enumerate() {
            let cf = db.cf(name).expect("cf");
            let mut it = db.iter_cf(&cf, &ReadOptions::default()).expect("iter");
            let mut got = BTreeMap::new();
            it.seek_to_first();
            while it.valid() {
                let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("utf8");
                got.insert(text(it.key()), text(it.value()));
                it.next();
            }
            it.status().expect("scan");
            assert_eq!(got, model[f], "family {name} after reopen {round}");
        }
    }
    db.close().expect("close");
    // A kept memtable holds its WALs until it fills or is flushed: a few, not one per reopen.
    assert!(most_wals <= 12, "{most_wals} WALs at once");
}
