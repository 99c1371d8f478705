//! Repair (`strata::repair`, `strata::repair_cf`): a database whose manifest is lost gets a
//! new one from its tables and WALs, and reads back every key they held, newest version
//! winning; a table that cannot be read goes to `lost/`; an open database is refused.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use strata::fs::fault::FaultFs;
use strata::TransactionBase;
use strata::{
    repair, repair_cf, CfOptions, Comparator, Db, ErrorKind, Options, ReadOptions,
    ReverseBytewiseComparator, UInt64Add, WriteBatch, WriteOptions,
};

/// Keys of the model test: `key0000` up to this.
const KEYS: u64 = 2000;

/// A small deterministic generator (xorshift64*), so that a failure replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// Tiny memtables, files and levels, so that a few thousand writes make a tree of several
/// levels through flushes and compactions.
fn small_tree() -> Options {
    let mut options = create();
    options.create_missing_column_families = true;
    options.write_buffer_size = 8 << 10;
    options.target_file_size_base = 8 << 10;
    options.max_bytes_for_level_base = 8 << 10;
    options.max_bytes_for_level_multiplier = 2.0;
    options.level0_file_num_compaction_trigger = 2;
    options.merge_operator = Some(Arc::new(UInt64Add));
    options
}

/// Options that create the database if it is missing, the defaults otherwise.
fn create() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options
}

fn reverse() -> Arc<dyn Comparator> {
    Arc::new(ReverseBytewiseComparator)
}

/// The families of the model test with their options: `users` (bytewise, with range
/// deletions), `rev` (reverse bytewise) and `logins` (a TTL family of one day).
fn families(options: &Options) -> Vec<(&'static str, CfOptions)> {
    let base = options.cf_options();
    let mut rev = base.clone();
    rev.comparator = reverse();
    let mut logins = base.clone();
    logins.ttl = Some(Duration::from_secs(86_400));
    logins.merge_operator = None;
    vec![("users", base), ("rev", rev), ("logins", logins)]
}

/// What each family should hold: key -> value (the default family's values are 8-byte
/// little-endian counters, merged by `uint64add`).
type Model = BTreeMap<&'static str, BTreeMap<Vec<u8>, Vec<u8>>>;

/// Random puts, overwrites, deletes, merges (default family) and range deletions (`users`)
/// into every family, mirrored in `model`.
fn write_some(db: &Db, rng: &mut Rng, model: &mut Model, ops: usize) {
    let names = ["default", "users", "rev", "logins"];
    for _ in 0..ops {
        let name = names[rng.below(4) as usize];
        let cf = db.cf(name).unwrap();
        let index = rng.below(KEYS);
        let key = format!("key{index:04}").into_bytes();
        let entries = model.entry(name).or_default();
        match (name, rng.below(10)) {
            ("default", 0..=3) => {
                let n = rng.below(100);
                db.merge_cf(&cf, &key, n.to_le_bytes()).unwrap();
                let old = entries
                    .get(&key)
                    .map_or(0, |v| u64::from_le_bytes(v[..8].try_into().unwrap()));
                entries.insert(key, (old + n).to_le_bytes().to_vec());
            }
            ("users", 0) => {
                let end = format!("key{:04}", index + 1 + rng.below(20)).into_bytes();
                db.delete_range_cf(&cf, &key, &end).unwrap();
                let doomed: Vec<_> = entries.range(key..end).map(|(k, _)| k.clone()).collect();
                for k in doomed {
                    entries.remove(&k);
                }
            }
            (_, 1..=2) => {
                db.delete_cf(&cf, &key).unwrap();
                entries.remove(&key);
            }
            _ => {
                let value = format!("{name}-{}-{}", rng.below(1_000_000), "v".repeat(40));
                let value = match name {
                    // A counter's base value is 8 bytes, as uint64add reads it.
                    "default" => rng.below(1000).to_le_bytes().to_vec(),
                    _ => value.into_bytes(),
                };
                db.put_cf(&cf, &key, &value).unwrap();
                entries.insert(key, value);
            }
        }
    }
}

/// Checks that every family of `db` holds exactly what `model` says, by a full scan and by
/// point reads of every key ever used (absent ones included).
fn check(db: &Db, model: &Model, context: &str) {
    for (&name, entries) in model {
        let cf = db.cf(name).unwrap();
        let mut it = db.iter_cf(&cf, &ReadOptions::default()).unwrap();
        it.seek_to_first();
        let mut found = BTreeMap::new();
        while it.valid() {
            found.insert(it.key().to_vec(), it.value().to_vec());
            it.next();
        }
        it.status().unwrap();
        assert_eq!(found.len(), entries.len(), "{context}: family {name}");
        assert!(
            found == *entries,
            "{context}: family {name} differs from the model"
        );
        for i in 0..KEYS {
            let key = format!("key{i:04}").into_bytes();
            let got = db.get_cf(&cf, &key).unwrap();
            assert_eq!(
                got.as_ref(),
                entries.get(&key),
                "{context}: family {name}, get {}",
                String::from_utf8_lossy(&key)
            );
        }
    }
}

/// The `MANIFEST-*` files and `CURRENT` of `dir` removed: the manifest is lost.
fn lose_the_manifest(dir: &Path) {
    for entry in fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("MANIFEST-") || name == "CURRENT" {
            fs::remove_file(dir.join(name)).unwrap();
        }
    }
}

fn files_named(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

/// Flushes, compactions over several levels, overwrites, deletes, merges and range
/// deletions in four families (one in reverse order, one with a ttl), the last writes only
/// in the WAL; the manifest is deleted; repair must bring back every family with exactly its
/// keys, the newest version of each winning, and the database then opens and reopens.
#[test]
fn repair_after_losing_the_manifest_recovers_every_key_of_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let options = small_tree();
    let mut model = Model::new();
    let mut rng = Rng(0x5eed_1234);
    let db = Db::open_cf(dir.path(), options.clone(), families(&options)).unwrap();
    // A snapshot held from the first round keeps the later writes' sequence numbers in the
    // deep tables (the bottom writes those below every snapshot as 0), so that whatever
    // shape the tree takes, deep tables overlap newer ones in sequence numbers.
    let mut pin = None;
    for round in 0..6 {
        write_some(&db, &mut rng, &mut model, 2000);
        if round == 0 {
            pin = Some(db.snapshot());
        }
        if round == 1 {
            db.compact_range_cf(&db.cf("users").unwrap(), None, None)
                .unwrap();
        }
    }
    db.wait_for_compactions().unwrap();
    db.flush().unwrap();
    // These stay in the WAL only: overwrites and deletes of keys in tables, new keys.
    write_some(&db, &mut rng, &mut model, 300);
    drop(pin);
    check(&db, &model, "before repair");
    let levels_used = db
        .tree_shape_cf(&db.cf("users").unwrap())
        .unwrap()
        .levels
        .iter()
        .filter(|l| l.files > 0)
        .count();
    assert!(levels_used >= 2, "the workload should make several levels");
    db.close().unwrap();

    lose_the_manifest(dir.path());
    let tables_before = files_named(dir.path(), ".sst");
    let wals_before = files_named(dir.path(), ".log");
    assert!(!wals_before.is_empty());
    // `rev` and `logins` are not named: their order and ttl come from their tables.
    let named = families(&options)
        .into_iter()
        .filter(|(n, _)| *n == "users");
    let report = repair_cf(dir.path(), &options, named).unwrap();

    assert!(report.tables_lost.is_empty(), "{report:?}");
    // Every table is kept, or merged into one table of its family.
    assert_eq!(
        report.tables_kept.len() + report.tables_merged.len(),
        tables_before.len() + report.tables_from_wals.len() + report.families_merged.len(),
        "{report:?}"
    );
    assert_eq!(report.wals_converted.len(), wals_before.len());
    assert!(report.wal_entries >= 300, "{report:?}");
    assert!(report.wal_corruptions.is_empty() && report.wal_entries_dropped == 0);
    let mut names: Vec<&str> = report.families.values().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["default", "logins", "rev", "users"]);
    for wal in &wals_before {
        assert!(
            !dir.path().join(wal).exists(),
            "{wal} converted, not replayed again"
        );
        assert!(
            dir.path().join("lost").join(wal).exists(),
            "{wal} kept in lost/"
        );
    }
    // A tree of several levels put in level 0 has tables that a read would take in the
    // wrong order: those families were merged.
    assert!(
        report.families_merged.contains(&"users".to_string()),
        "{report:?}"
    );

    for reopen in 0..2 {
        let db = Db::open_cf(dir.path(), options.clone(), families(&options)).unwrap();
        check(&db, &model, &format!("after repair, open {reopen}"));
        db.close().unwrap();
    }
}

/// A table with a flipped byte in a data block goes to `lost/`, named in the report; the
/// keys of the other tables are all there.
#[test]
fn repair_moves_a_corrupt_table_to_lost_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let options = create();
    let db = Db::open(dir.path(), options.clone()).unwrap();
    for i in 0..200 {
        db.put(format!("a{i:03}").as_bytes(), b"kept").unwrap();
    }
    db.flush().unwrap();
    for i in 0..200 {
        db.put(format!("b{i:03}").as_bytes(), b"damaged").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let tables = files_named(dir.path(), ".sst");
    assert_eq!(tables.len(), 2);
    let damaged = dir.path().join(&tables[1]);
    let mut bytes = fs::read(&damaged).unwrap();
    bytes[20] ^= 0x40;
    fs::write(&damaged, &bytes).unwrap();
    lose_the_manifest(dir.path());

    let report = repair(dir.path(), &options).unwrap();
    let damaged_number: u64 = tables[1].trim_end_matches(".sst").parse().unwrap();
    assert_eq!(report.tables_lost.len(), 1, "{report:?}");
    assert_eq!(report.tables_lost[0].0, damaged_number);
    assert!(
        report.tables_lost[0].1.contains("corruption")
            && report.tables_lost[0].1.contains(&tables[1]),
        "{report:?}"
    );
    assert!(!damaged.exists());
    assert_eq!(
        fs::read(dir.path().join("lost").join(&tables[1])).unwrap(),
        bytes
    );
    assert_eq!(report.entries, 200);

    let db = Db::open(dir.path(), options).unwrap();
    for i in 0..200 {
        assert_eq!(
            db.get(format!("a{i:03}").as_bytes()).unwrap().as_deref(),
            Some(&b"kept"[..])
        );
        assert_eq!(db.get(format!("b{i:03}").as_bytes()).unwrap(), None);
    }
}

/// Separated values: repair counts each table's blob references again and keeps the blob
/// files they name; a blob file cut short goes to `lost/` (its keys then read as a corruption
/// error naming it), and so does the blob file of a table set aside.
#[test]
fn repair_keeps_the_blob_files_the_tables_refer_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = create();
    options.enable_blob_files = true;
    options.min_blob_size = 50;
    let db = Db::open(dir.path(), options.clone()).unwrap();
    let value = |i: u32| format!("value {i:04} ").repeat(8).into_bytes();
    for batch in 0..3 {
        for i in 0..100 {
            db.put(format!("{batch}-{i:03}").as_bytes(), value(i))
                .unwrap();
        }
        db.flush().unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in 0..100 {
        db.put(format!("3-{i:03}").as_bytes(), value(i)).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let blobs = files_named(dir.path(), ".blob");
    assert!(blobs.len() >= 2, "{blobs:?}");
    // The newest blob file (the last flush's) loses its footer.
    let cut = dir.path().join(blobs.last().unwrap());
    let bytes = fs::read(&cut).unwrap();
    fs::write(&cut, &bytes[..bytes.len() - 5]).unwrap();
    lose_the_manifest(dir.path());

    let report = repair(dir.path(), &options).unwrap();
    assert_eq!(report.blob_files_lost.len(), 1, "{report:?}");
    assert_eq!(report.blob_files_kept.len(), blobs.len() - 1, "{report:?}");
    assert!(dir.path().join("lost").join(blobs.last().unwrap()).exists());
    let db = Db::open(dir.path(), options).unwrap();
    for batch in 0..3 {
        for i in 0..100 {
            let got = db.get(format!("{batch}-{i:03}").as_bytes()).unwrap();
            assert_eq!(got, Some(value(i)), "{batch}-{i:03}");
        }
    }
    let e = db.get(b"3-000").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("missing"), "{e}");
    db.close().unwrap();
}

/// A WAL cut inside its last batch: repair keeps every batch before the cut, and reports
/// where the damage starts.
#[test]
fn repair_keeps_what_precedes_a_wals_damaged_tail() {
    let dir = tempfile::tempdir().unwrap();
    let options = create();
    let db = Db::open(dir.path(), options.clone()).unwrap();
    for i in 0..50 {
        db.put(format!("k{i:02}").as_bytes(), [b'v'; 100]).unwrap();
    }
    db.close().unwrap();
    let wals = files_named(dir.path(), ".log");
    let wal = dir.path().join(wals.last().unwrap());
    let len = fs::metadata(&wal).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&wal)
        .unwrap()
        .set_len(len - 50)
        .unwrap();
    lose_the_manifest(dir.path());

    let report = repair(dir.path(), &options).unwrap();
    assert_eq!(report.wal_entries, 49, "{report:?}");
    assert_eq!(report.wal_corruptions.len(), 1, "{report:?}");
    assert!(report.wal_corruptions[0].contains(wals.last().unwrap()));
    let db = Db::open(dir.path(), options).unwrap();
    for i in 0..49 {
        assert!(
            db.get(format!("k{i:02}").as_bytes()).unwrap().is_some(),
            "k{i:02}"
        );
    }
    assert_eq!(db.get(b"k49").unwrap(), None);
}

/// Repair of a database that a handle has open is refused naming the LOCK file, and changes
/// nothing; a missing database is not found.
#[test]
fn repair_of_an_open_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let options = create();
    let db = Db::open(dir.path(), options.clone()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    let current = fs::read(dir.path().join("CURRENT")).unwrap();
    let err = repair(dir.path(), &options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert!(err.to_string().contains("LOCK"), "{err}");
    assert_eq!(fs::read(dir.path().join("CURRENT")).unwrap(), current);
    assert!(!dir.path().join("lost").exists());
    db.close().unwrap();

    let err = repair(dir.path().join("missing"), &options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("no database"), "{err}");
}

/// A family named with another comparator than its tables record is refused before any
/// file moves; so is a ttl other than theirs.
#[test]
fn repair_with_another_order_or_ttl_than_the_tables_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = create();
    options.create_missing_column_families = true;
    let mut rev = CfOptions::default();
    rev.comparator = reverse();
    let db = Db::open_cf(dir.path(), options.clone(), [("rev", rev)]).unwrap();
    db.put_cf(&db.cf("rev").unwrap(), b"k", b"v").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    lose_the_manifest(dir.path());
    let before = files_named(dir.path(), "");

    let err = repair_cf(dir.path(), &options, [("rev", CfOptions::default())]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(
        err.to_string()
            .contains("rocksdb.ReverseBytewiseComparator")
            && err.to_string().contains("'rev'"),
        "{err}"
    );
    let mut ttl = CfOptions::default();
    ttl.comparator = reverse();
    ttl.ttl = Some(Duration::from_secs(60));
    let err = repair_cf(dir.path(), &options, [("rev", ttl)]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("ttl 60s"), "{err}");
    assert_eq!(files_named(dir.path(), ""), before, "nothing may change");
}

/// An open of a database whose manifest is lost (tables, no CURRENT) is refused and deletes
/// nothing: a new manifest would have made every table an orphan.
#[test]
fn opening_a_database_whose_manifest_is_lost_is_refused_and_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let options = create();
    let db = Db::open(dir.path(), options.clone()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    lose_the_manifest(dir.path());
    let before = files_named(dir.path(), "");
    let err = Db::open(dir.path(), options.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(err.to_string().contains("strata repair"), "{err}");
    let err = Db::open_read_only(dir.path(), options.clone()).unwrap_err();
    assert!(err.to_string().contains("the manifest is lost"), "{err}");
    assert_eq!(files_named(dir.path(), ""), before);

    repair(dir.path(), &options).unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// Two-phase commit: a prepared transaction whose commit is in a converted WAL is not
/// offered as prepared again after repair (its file goes to `lost/`), and its writes are
/// there.
#[test]
fn a_committed_prepared_transaction_is_not_offered_again_after_repair() {
    let dir = tempfile::tempdir().unwrap();
    let options = create();
    let tdb = strata::TransactionDb::open(dir.path(), options.clone()).unwrap();
    let mut txn = tdb.transaction(&WriteOptions::default(), &Default::default());
    txn.set_name("t1").unwrap();
    txn.put(b"k", b"v").unwrap();
    txn.prepare().unwrap();
    // The commit's file removal is what a crash could miss: put the file back.
    let prepared = files_named(dir.path(), ".txn");
    let saved: Vec<_> = prepared
        .iter()
        .map(|n| (n.clone(), fs::read(dir.path().join(n)).unwrap()))
        .collect();
    txn.commit().unwrap();
    drop(txn);
    drop(tdb);
    for (name, bytes) in saved {
        fs::write(dir.path().join(name), bytes).unwrap();
    }
    lose_the_manifest(dir.path());

    let report = repair(dir.path(), &options).unwrap();
    assert!(files_named(dir.path(), ".txn").is_empty(), "{report:?}");
    let tdb = strata::TransactionDb::open(dir.path(), options).unwrap();
    assert!(tdb.prepared_transactions().is_empty());
    assert_eq!(tdb.db().get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// Writes in a batch across families, only in the WAL, come back in their families; WAL
/// records a family already flushed (the WAL stayed for another family) are not written
/// twice, which `uint64add` counters would show. Also once the flushed table went down to
/// the bottom of the tree, which writes its sequence numbers as 0: the table's log number
/// still says that the WAL's records of its family are in it.
#[test]
fn a_wal_comes_back_once_in_every_family() {
    for to_the_bottom in [false, true] {
        a_wal_comes_back_once_in_every_family_case(to_the_bottom);
    }
}

fn a_wal_comes_back_once_in_every_family_case(to_the_bottom: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = create();
    options.create_missing_column_families = true;
    options.merge_operator = Some(Arc::new(UInt64Add));
    let mut counters = CfOptions::default();
    counters.merge_operator = Some(Arc::new(UInt64Add));
    let db = Db::open_cf(dir.path(), options.clone(), [("a", counters.clone())]).unwrap();
    let a = db.cf("a").unwrap();
    db.put(b"first", b"0").unwrap();
    for _ in 0..3 {
        db.merge_cf(&a, b"count", 1u64.to_le_bytes()).unwrap();
    }
    // `a` is flushed, the default family not: the WAL stays, holding `a`'s merges too. Twice,
    // so that a compaction to the bottom merges two tables instead of moving one.
    db.flush_cf(&a).unwrap();
    db.merge_cf(&a, b"count", 1u64.to_le_bytes()).unwrap();
    db.flush_cf(&a).unwrap();
    if to_the_bottom {
        db.compact_range_cf(&a, None, None).unwrap();
        let shape = db.tree_shape_cf(&a).unwrap();
        let last = shape.levels.last().unwrap();
        assert_eq!(last.files, 1, "a's table is at the bottom: {shape:?}");
    }
    let mut batch = WriteBatch::new();
    batch
        .merge_cf(&a, b"count", 10u64.to_le_bytes())
        .put(b"second", b"0");
    db.write(batch, &WriteOptions::default()).unwrap();
    db.close().unwrap();
    lose_the_manifest(dir.path());

    let report = repair(dir.path(), &options).unwrap();
    assert_eq!(
        report.wal_entries_in_tables, 4,
        "at the bottom {to_the_bottom}: {report:?}"
    );
    assert_eq!(report.wal_entries, 3, "{report:?}");
    assert_eq!(report.wal_entries_dropped, 0, "{report:?}");
    let db = Db::open_cf(dir.path(), options, [("a", counters)]).unwrap();
    let a = db.cf("a").unwrap();
    assert_eq!(
        db.get_cf(&a, b"count").unwrap(),
        Some(14u64.to_le_bytes().to_vec())
    );
    for key in [&b"first"[..], b"second"] {
        assert_eq!(db.get(key).unwrap().as_deref(), Some(&b"0"[..]));
    }
}

/// A family whose data is only in the WAL has no table to name it: its records are dropped
/// and counted, with the family's id, and the rest comes back.
#[test]
fn wal_records_of_a_family_no_table_names_are_dropped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = create();
    options.create_missing_column_families = true;
    let db = Db::open_cf(
        dir.path(),
        options.clone(),
        [("unflushed", CfOptions::default())],
    )
    .unwrap();
    let unflushed = db.cf("unflushed").unwrap();
    db.put(b"kept", b"1").unwrap();
    db.put_cf(&unflushed, b"a", b"1").unwrap();
    db.put_cf(&unflushed, b"b", b"2").unwrap();
    db.close().unwrap();
    lose_the_manifest(dir.path());

    let report = repair(dir.path(), &options).unwrap();
    assert_eq!(report.wal_entries_dropped, 2, "{report:?}");
    assert_eq!(report.unknown_families, [unflushed.id()], "{report:?}");
    assert_eq!(report.wal_entries, 1, "{report:?}");
    let db = Db::open(dir.path(), options).unwrap();
    assert_eq!(db.get(b"kept").unwrap().as_deref(), Some(&b"1"[..]));
}

/// Copies the files of `from` (a database directory, no subdirectories) into a new `to`.
fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// A repair crashed at each of its file operations (a sample of them, spread over the run),
/// with and without a power cut, then run again: the database holds exactly the model's
/// keys. The tree has several levels, so the runs include the merge of a family.
#[test]
fn an_interrupted_repair_run_again_recovers_every_key() {
    let root = tempfile::tempdir().unwrap();
    let template = root.path().join("template");
    let options = small_tree();
    let mut model = Model::new();
    let mut rng = Rng(0xc0ff_ee00);
    let db = Db::open_cf(&template, options.clone(), families(&options)).unwrap();
    // A snapshot held from the second round keeps the later writes' sequence numbers in the
    // deep tables (the bottom writes those below every snapshot as 0), so that deep tables
    // overlap newer ones in sequence numbers and the repair merges a family.
    let mut pin = None;
    for round in 0..4 {
        write_some(&db, &mut rng, &mut model, 1500);
        if round == 0 {
            pin = Some(db.snapshot());
        }
        if round == 1 {
            db.compact_range_cf(&db.cf("users").unwrap(), None, None)
                .unwrap();
        }
    }
    db.wait_for_compactions().unwrap();
    db.flush().unwrap();
    write_some(&db, &mut rng, &mut model, 200);
    drop(pin);
    db.close().unwrap();
    lose_the_manifest(&template);

    let with_fs = |fs: &FaultFs| {
        let mut options = options.clone();
        options.fs = Arc::new(fs.clone());
        options
    };
    let whole = root.path().join("whole");
    copy_dir(&template, &whole);
    let counting = FaultFs::new();
    let report = repair_cf(&whole, &with_fs(&counting), families(&options)).unwrap();
    assert!(!report.families_merged.is_empty(), "{report:?}");
    let total = counting.ops();
    let stride = (total / 30).max(1);
    for n in (1..=total).step_by(stride as usize) {
        for power_cut in [false, true] {
            let context = format!("crash at operation {n} of {total}, power cut {power_cut}");
            let dir = root.path().join(format!("run-{n}-{power_cut}"));
            copy_dir(&template, &dir);
            let fs = FaultFs::new();
            fs.crash_at(n);
            let first = repair_cf(&dir, &with_fs(&fs), families(&options));
            assert!(first.is_err(), "{context}: the crash point was not reached");
            if power_cut {
                fs.power_loss().unwrap();
            }
            repair_cf(&dir, &options, families(&options))
                .unwrap_or_else(|e| panic!("{context}: the second repair failed: {e}"));
            let db = Db::open_cf(&dir, options.clone(), families(&options))
                .unwrap_or_else(|e| panic!("{context}: open failed: {e}"));
            check(&db, &model, &context);
            db.close().unwrap();
            fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// Keys ordered by their length, then bytewise: an application's comparator.
struct ByLength;

impl Comparator for ByLength {
    fn name(&self) -> &str {
        "test.by-length"
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        a.len().cmp(&b.len()).then_with(|| a.cmp(b))
    }
}

/// A family of an application's comparator cannot be read without it: repair refuses until
/// it is named with it, and then brings the keys back in that order.
#[test]
fn a_family_of_an_applications_comparator_must_be_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = create();
    options.create_missing_column_families = true;
    let mut custom = CfOptions::default();
    custom.comparator = Arc::new(ByLength);
    let db = Db::open_cf(dir.path(), options.clone(), [("custom", custom.clone())]).unwrap();
    for key in ["bbb", "a", "cc"] {
        db.put_cf(&db.cf("custom").unwrap(), key.as_bytes(), b"v")
            .unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    lose_the_manifest(dir.path());
    let before = files_named(dir.path(), "");

    let err = repair(dir.path(), &options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(
        err.to_string()
            .contains("\"test.by-length\", which is not built in"),
        "{err}"
    );
    assert_eq!(files_named(dir.path(), ""), before, "nothing may change");

    repair_cf(dir.path(), &options, [("custom", custom.clone())]).unwrap();
    let db = Db::open_cf(dir.path(), options, [("custom", custom)]).unwrap();
    let keys: Vec<Vec<u8>> = db
        .range_cf::<&[u8], _>(&db.cf("custom").unwrap(), ..)
        .unwrap()
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(keys, [&b"a"[..], b"cc", b"bbb"]);
}

/// When the manifest is still readable (only `CURRENT` is lost, or the manifest is damaged
/// after the records that name the families), a family whose data is only in the WAL is
/// named by it, and its records come back.
#[test]
fn a_readable_manifest_names_the_families_only_in_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = create();
    options.create_missing_column_families = true;
    let mut rev = CfOptions::default();
    rev.comparator = reverse();
    let db = Db::open_cf(dir.path(), options.clone(), [("unflushed", rev.clone())]).unwrap();
    let unflushed = db.cf("unflushed").unwrap();
    db.put(b"kept", b"1").unwrap();
    db.flush().unwrap();
    for key in ["a", "b", "c"] {
        db.put_cf(&unflushed, key.as_bytes(), b"2").unwrap();
    }
    db.close().unwrap();
    fs::remove_file(dir.path().join("CURRENT")).unwrap();

    let report = repair(dir.path(), &options).unwrap();
    assert_eq!(report.wal_entries_dropped, 0, "{report:?}");
    assert_eq!(report.wal_entries, 3, "{report:?}");
    assert_eq!(
        report.families.get(&unflushed.id()).map(String::as_str),
        Some("unflushed")
    );
    let db = Db::open_cf(dir.path(), options, [("unflushed", rev)]).unwrap();
    let keys: Vec<Vec<u8>> = db
        .range_cf::<&[u8], _>(&db.cf("unflushed").unwrap(), ..)
        .unwrap()
        .map(|e| e.unwrap().0)
        .collect();
    assert_eq!(
        keys,
        [&b"c"[..], b"b", b"a"],
        "in the order the manifest records"
    );
    assert_eq!(db.get(b"kept").unwrap().as_deref(), Some(&b"1"[..]));
}
