//! Range deletions (`Db::delete_range`) end to end: one record whatever the span, reads and
//! iterators that hide the range, snapshots that keep seeing it, flushes, compactions and
//! reopens that keep the deletion, column families kept apart.

use strata::{CfOptions, Db, Options, ReadOptions};

fn options() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:07}").into_bytes()
}

fn keys(db: &Db, options: ReadOptions) -> Vec<Vec<u8>> {
    let mut it = db.iter(&options);
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push(it.key().to_vec());
        it.next();
    }
    it.status().unwrap();
    out
}

fn keys_backward(db: &Db) -> Vec<Vec<u8>> {
    let mut it = db.iter(&ReadOptions::default());
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push(it.key().to_vec());
        it.prev();
    }
    it.status().unwrap();
    out.reverse();
    out
}

fn wal_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

/// One deletion over a million keys is one WAL record of a few bytes, not a million.
#[test]
fn one_delete_range_over_a_million_keys_writes_one_entry() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut batch = strata::WriteBatch::new();
    for i in (0..1_000_000).step_by(100) {
        batch.put(key(i), b"v");
    }
    db.write(batch, &Default::default()).unwrap();
    let (written, wal) = (db.stats().keys_written, wal_bytes(dir.path()));
    db.delete_range(key(0), key(1_000_000)).unwrap();
    assert_eq!(db.stats().keys_written - written, 1);
    let grew = wal_bytes(dir.path()) - wal;
    assert!(grew < 64, "the WAL grew by {grew} bytes");
    assert!(keys(&db, ReadOptions::default()).is_empty());
    assert_eq!(db.get(key(500_000)).unwrap(), None);
}

/// The end key is not deleted, the begin key is; an empty range deletes nothing; both
/// directions of the iterator agree with `get`.
#[test]
fn reads_hide_the_range_and_only_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..20 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.delete_range(key(5), key(10)).unwrap();
    db.delete_range(key(12), key(12)).unwrap();
    db.put(key(7), b"again").unwrap();
    let want: Vec<Vec<u8>> = (0..20)
        .filter(|i| !(5..10).contains(i) || *i == 7)
        .map(key)
        .collect();
    let check = |db: &Db| {
        assert_eq!(keys(db, ReadOptions::default()), want);
        assert_eq!(keys_backward(db), want);
        for i in 0..20 {
            assert_eq!(
                db.get(key(i)).unwrap().is_some(),
                want.contains(&key(i)),
                "{i}"
            );
        }
        assert_eq!(db.get(key(7)).unwrap().as_deref(), Some(&b"again"[..]));
        let mut it = db.iter(&ReadOptions::default());
        it.seek(key(5));
        assert_eq!(it.key(), key(7));
        it.seek_for_prev(key(9));
        assert_eq!(it.key(), key(7));
        it.prev();
        assert_eq!(it.key(), key(4));
    };
    check(&db);
    db.flush().unwrap();
    check(&db);
    db.compact_all().unwrap();
    check(&db);
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    check(&db);
}

/// A snapshot taken before the deletion keeps reading the keys through flushes and
/// compactions; once it is gone, a compaction drops the keys and the tombstone.
#[test]
fn snapshots_keep_seeing_what_a_later_range_deletion_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..100 {
        db.put(key(i), b"old").unwrap();
    }
    let snap = db.snapshot();
    db.delete_range(key(10), key(90)).unwrap();
    let at_snap = || {
        let mut read = ReadOptions::default();
        read.snapshot = Some(snap.clone());
        read
    };
    for step in ["memtable", "flush", "compact"] {
        match step {
            "flush" => db.flush().unwrap(),
            "compact" => db.compact_all().unwrap(),
            _ => {}
        }
        assert_eq!(keys(&db, at_snap()).len(), 100, "{step}");
        assert_eq!(keys(&db, ReadOptions::default()).len(), 20, "{step}");
        assert!(db.get_opt(key(50), &at_snap()).unwrap().is_some(), "{step}");
        assert_eq!(db.get(key(50)).unwrap(), None, "{step}");
    }
    drop(snap);
    db.compact_all().unwrap();
    assert_eq!(keys(&db, ReadOptions::default()).len(), 20);
    let shape = db.tree_shape();
    let files: u64 = shape.levels.iter().map(|l| l.files).sum();
    assert_eq!(files, 1, "the 20 remaining keys in one table");
}

/// A memtable holding only a range deletion is flushed into a table of tombstones only,
/// which deletes the keys of the tables below it, across a reopen.
#[test]
fn a_flush_of_only_a_range_deletion_writes_a_table_of_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..50 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.delete_range(key(0), key(40)).unwrap();
    db.flush().unwrap();
    assert_eq!(db.tree_shape().levels[0].files, 2);
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()).len(), 10);
    assert_eq!(db.get(key(3)).unwrap(), None);
}

/// A deletion in one family leaves the same keys of another alone, before and after a
/// reopen that replays the WAL.
#[test]
fn a_range_deletion_stays_in_its_column_family() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let users = db.create_cf("users", CfOptions::default()).unwrap();
    for i in 0..10 {
        db.put(key(i), b"default").unwrap();
        db.put_cf(&users, key(i), b"users").unwrap();
    }
    db.delete_range_cf(&users, key(0), key(5)).unwrap();
    let check = |db: &Db, users: &strata::ColumnFamily| {
        assert_eq!(db.get_cf(users, key(2)).unwrap(), None);
        assert!(db.get_cf(users, key(6)).unwrap().is_some());
        assert!(db.get(key(2)).unwrap().is_some());
    };
    check(&db, &users);
    db.close().unwrap();
    let db = Db::open_cf(dir.path(), options(), [("users", CfOptions::default())]).unwrap();
    let users = db.cf("users").unwrap();
    check(&db, &users);
    db.flush().unwrap();
    db.compact_all().unwrap();
    check(&db, &users);
}

#[test]
fn a_get_under_a_memtable_tombstone_looks_at_no_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..1000 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.delete_range(key(0), key(500)).unwrap();
    db.put(key(10), b"after").unwrap();
    let checks = db.stats().bloom_checks;
    for i in 0..500 {
        let want = (i == 10).then(|| b"after".to_vec());
        assert_eq!(db.get(key(i)).unwrap(), want, "key {i}");
    }
    // Every table version is older than the tombstone: no table was asked.
    assert_eq!(db.stats().bloom_checks, checks);
    // Outside the range the tables answer as before.
    assert_eq!(db.get(key(700)).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.stats().bloom_checks, checks + 1);
}
