//! `strata sst dump` and `strata sst verify` read each table in the order its properties
//! name: a reverse-bytewise family's tables are dumped in that order and verified clean; a
//! table of an application's comparator is refused naming it, and left as it was.

mod common;

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::strata;
use strata::{CfOptions, Comparator, Db, Options, ReverseBytewiseComparator};

/// The tables of the database in `dir`.
fn tables(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    v.sort();
    v
}

/// A database with a family of `comparator` holding keys `k0`..`k9` and a range deletion,
/// flushed to one table: the directory, the database path and that table.
fn one_table_in(comparator: Arc<dyn Comparator>) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(&path, options).unwrap();
    let mut ordered = CfOptions::default();
    ordered.comparator = comparator;
    let cf = db.create_cf("ordered", ordered).unwrap();
    for i in 0..10 {
        db.put_cf(&cf, format!("k{i}").as_bytes(), format!("v{i}").as_bytes())
            .unwrap();
    }
    db.flush_cf(&cf).unwrap();
    db.close().unwrap();
    let tables = tables(&path);
    assert_eq!(tables.len(), 1, "{tables:?}");
    let table = tables[0].clone();
    (dir, path, table)
}

#[test]
fn a_reverse_bytewise_table_is_dumped_in_its_order_and_verified() {
    let (_dir, db, table) = one_table_in(Arc::new(ReverseBytewiseComparator));
    let table_arg = table.to_str().unwrap();
    let (ok, out, err) = strata(&["sst", "dump", table_arg]);
    assert!(ok, "{err}");
    assert!(
        out.contains("\ncomparator: rocksdb.ReverseBytewiseComparator\n"),
        "{out}"
    );
    let keys: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(" => "))
        .map(|l| l.split('#').next().unwrap())
        .collect();
    let want: Vec<String> = (0..10).rev().map(|i| format!("k{i}")).collect();
    assert_eq!(keys, want, "{out}");
    assert!(out.contains("k9#10,PUT => v9"), "{out}");

    let (ok, out, err) = strata(&["sst", "verify", table_arg]);
    assert!(ok, "{err}");
    assert!(out.contains("OK, 10 entries"), "{out}");
    // The same through the directory, and the database itself opens as it was.
    let (ok, out, err) = strata(&["sst", "verify", db.to_str().unwrap()]);
    assert!(ok && out.contains("OK, 10 entries"), "{out}{err}");
}

/// `strata flush` and `strata checkpoint` open every family as its manifest records it: a
/// reverse-bytewise family in that order, a TTL family with its ttl.
#[test]
fn flush_and_checkpoint_open_each_family_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut options = Options::default();
    options.create_if_missing = true;
    let mut reverse = CfOptions::default();
    reverse.comparator = Arc::new(ReverseBytewiseComparator);
    let mut ttl = CfOptions::default();
    ttl.ttl = Some(Duration::from_secs(3600));
    let db = Db::open(&path, options.clone()).unwrap();
    let rev = db.create_cf("reverse", reverse.clone()).unwrap();
    let expiring = db.create_cf("expiring", ttl.clone()).unwrap();
    for i in 0..5 {
        let k = format!("k{i}");
        db.put_cf(&rev, k.as_bytes(), b"r").unwrap();
        db.put_cf(&expiring, k.as_bytes(), b"t").unwrap();
    }
    db.close().unwrap();
    assert!(tables(&path).is_empty(), "all in the WAL");

    let (ok, out, err) = strata(&["flush", path.to_str().unwrap()]);
    assert!(ok && out.contains("flushed"), "{out}{err}");
    assert_eq!(tables(&path).len(), 2);
    let (ok, out, err) = strata(&["sst", "dump", "--keys-only", path.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("k4#9,PUT\nk3#7,PUT\nk2#5,PUT"), "{out}");

    let copy = dir.path().join("copy");
    let (ok, out, err) = strata(&["checkpoint", path.to_str().unwrap(), copy.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    let families = [("reverse", reverse.clone()), ("expiring", ttl.clone())];
    let copy = Db::open_cf(&copy, options, families).unwrap();
    assert_eq!(
        keys_of(&copy, "reverse"),
        [b"k4", b"k3", b"k2", b"k1", b"k0"]
    );
    let expiring = copy.cf("expiring").unwrap();
    assert_eq!(
        copy.get_cf(&expiring, b"k3").unwrap().as_deref(),
        Some(&b"t"[..])
    );
    drop(copy);

    // put and delete open the families as recorded too; what they write reads back in its
    // family's order, a put into the ttl family stamped with its expiry.
    let db_arg = path.to_str().unwrap();
    for args in [
        ["put", db_arg, "--cf", "reverse", "k9", "r"],
        ["put", db_arg, "--cf", "expiring", "k9", "t9"],
        ["delete", db_arg, "--cf", "reverse", "k0", ""],
    ] {
        let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
        let (ok, out, err) = strata(&args);
        assert!(ok, "{args:?}: {out}{err}");
    }
    let db = Db::open_cf(
        &path,
        Options::default(),
        [("reverse", reverse), ("expiring", ttl)],
    )
    .unwrap();
    assert_eq!(keys_of(&db, "reverse"), [b"k9", b"k4", b"k3", b"k2", b"k1"]);
    let expiring = db.cf("expiring").unwrap();
    assert_eq!(
        db.get_cf(&expiring, b"k9").unwrap().as_deref(),
        Some(&b"t9"[..])
    );
}

/// Every key of family `name`, in its order.
fn keys_of(db: &Db, name: &str) -> Vec<Vec<u8>> {
    let cf = db.cf(name).unwrap();
    db.range_cf::<&[u8], _>(&cf, ..)
        .unwrap()
        .map(|kv| kv.unwrap().0)
        .collect()
}

#[test]
fn a_bytewise_table_dump_names_its_comparator() {
    let (_dir, _db, table) = one_table_in(Arc::new(strata::BytewiseComparator));
    let (ok, out, err) = strata(&["sst", "dump", "--keys-only", table.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(
        out.contains("\ncomparator: leveldb.BytewiseComparator\n"),
        "{out}"
    );
    let keys: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("#"))
        .map(|l| l.split('#').next().unwrap())
        .collect();
    let want: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
    assert_eq!(keys, want, "{out}");
}

/// An application's order: shorter keys first, then bytewise.
struct LengthFirst;

impl Comparator for LengthFirst {
    fn name(&self) -> &str {
        "app.LengthFirst"
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.len().cmp(&b.len()).then_with(|| a.cmp(b))
    }
}

#[test]
fn a_table_of_an_unknown_comparator_is_refused_naming_it() {
    let (_dir, db, table) = one_table_in(Arc::new(LengthFirst));
    let before = std::fs::read(&table).unwrap();
    for command in ["dump", "verify"] {
        for at in [&table, &db] {
            let (ok, out, err) = strata(&["sst", command, at.to_str().unwrap()]);
            assert!(!ok, "sst {command} read it:\n{out}");
            for part in [
                table.to_str().unwrap(),
                "comparator \"app.LengthFirst\", which is not built in",
                "can only read tables of the built-in comparators \
                 (leveldb.BytewiseComparator, rocksdb.ReverseBytewiseComparator)",
                "a custom comparator cannot be reconstructed from its name",
            ] {
                assert!(err.contains(part), "sst {command}: {part:?} not in {err}");
            }
        }
    }
    // Nor can `strata flush` open its family.
    let (ok, _, err) = strata(&["flush", db.to_str().unwrap()]);
    assert!(!ok, "flushed");
    assert!(
        err.contains("column family 'ordered' orders keys by comparator \"app.LengthFirst\", which is not built in")
            && err.contains("cannot be reconstructed from its name"),
        "{err}"
    );
    assert_eq!(std::fs::read(&table).unwrap(), before, "the table changed");
}
