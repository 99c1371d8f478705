//! The inspection commands on a database with column families: `strata manifest dump` shows
//! each family's creation, edits and tree; `strata stats` each family's tree and compactions;
//! `strata flush` opens every family and flushes them all.

mod common;

use common::strata;
use strata::{CfOptions, Db, Options};

#[test]
fn inspection_commands_show_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(&path, options).unwrap();
    let index = db.create_cf("index", CfOptions::default()).unwrap();
    let dropped = db.create_cf("dropped", CfOptions::default()).unwrap();
    for i in 0..100u32 {
        db.put(format!("d{i}").as_bytes(), b"v").unwrap();
        db.put_cf(&index, format!("i{i}").as_bytes(), b"v").unwrap();
    }
    db.flush_cf(&index).unwrap();
    db.drop_cf(&dropped).unwrap();
    db.put_cf(&index, b"in-the-wal", b"v").unwrap();
    db.close().unwrap();
    let db_arg = path.to_str().unwrap();

    let (ok, out, err) = strata(&["manifest", "dump", db_arg]);
    assert!(ok, "{err}");
    for want in [
        "creates family \"index\"",
        "creates family \"dropped\"",
        "drops the family",
        "family 0 \"default\"",
        "family 1 \"index\"",
        "add L0 ",
    ] {
        assert!(out.contains(want), "no {want:?} in:\n{out}");
    }
    assert!(!out.contains("family 2 \"dropped\""), "{out}");

    let (ok, out, err) = strata(&["stats", db_arg]);
    assert!(ok, "{err}");
    // A read-only open: what the WAL holds is in immutable memtables.
    assert!(out.contains("family \"default\" tree: mem"), "{out}");
    assert!(out.contains("(0 entries) + 1 imm\n"), "{out}");
    assert!(out.contains("(0 entries) + 1 imm | L0 1 files"), "{out}");
    assert!(out.contains("family \"index\":"), "{out}");

    let (ok, out, err) = strata(&["flush", db_arg]);
    assert!(ok, "{err}");
    assert!(out.contains("flushed"), "{out}");
    let (ok, out, err) = strata(&["stats", db_arg]);
    assert!(ok, "{err}");
    let tree = |name: &str| {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("family \"{name}\" tree:")));
        line.unwrap_or_else(|| panic!("no tree of {name} in {out}"))
            .to_string()
    };
    assert!(
        tree("default").ends_with("+ 0 imm | L0 1 files 0.0 MiB"),
        "{out}"
    );
    assert!(
        tree("index").ends_with("+ 0 imm | L0 2 files 0.0 MiB"),
        "{out}"
    );
}

#[test]
fn checkpoint_copies_a_database_with_its_families() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(&path, options.clone()).unwrap();
    let index = db.create_cf("index", CfOptions::default()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.put_cf(&index, b"b", b"2").unwrap();
    db.close().unwrap();
    let out = dir.path().join("copy");
    let (ok, stdout, err) = strata(&["checkpoint", path.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(ok && stdout.contains("checkpoint of"), "{err}");
    let copy = Db::open_cf(&out, options, [("index", CfOptions::default())]).unwrap();
    assert_eq!(copy.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    let index = copy.cf("index").unwrap();
    assert_eq!(
        copy.get_cf(&index, b"b").unwrap().as_deref(),
        Some(&b"2"[..])
    );
    drop(copy);
    // A second checkpoint into the same place is refused, naming it.
    let (ok, _, err) = strata(&["checkpoint", path.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(!ok && err.contains("already exists"), "{err}");
}
