//! `strata backup create|list|verify|restore|delete|purge` on a database with two column
//! families: the restored copies hold each backup's data, and every bad input ends with a
//! non-zero exit status and a message naming what is wrong.

mod common;

use std::path::Path;

use common::strata;
use strata::{CfOptions, Db, Options};

fn open(dir: &Path) -> Db {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    Db::open_cf(dir, options, [("index", CfOptions::default())]).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The fields of a `strata backup list` line: `backup ID TIME N files B bytes S shared C
/// copied`, as (id, files, bytes, shared, copied).
fn fields(line: &str) -> (u64, u64, u64, u64, u64) {
    let f: Vec<&str> = line.split(' ').collect();
    assert_eq!(
        (f[0], f[4], f[6], f[8], f[10]),
        ("backup", "files", "bytes", "shared", "copied"),
        "{line}"
    );
    let n = |i: usize| f[i].parse::<u64>().unwrap();
    (n(1), n(3), n(5), n(7), n(9))
}

#[test]
fn backups_are_made_listed_verified_restored_and_deleted() {
    let root = tempfile::tempdir().unwrap();
    let (db_dir, backups) = (root.path().join("db"), root.path().join("backups"));
    {
        let db = open(&db_dir);
        let index = db.cf("index").unwrap();
        for i in 0..2000u32 {
            db.put(format!("k{i:05}").as_bytes(), [3; 60]).unwrap();
            db.put_cf(&index, format!("i{i:05}").as_bytes(), b"1")
                .unwrap();
        }
        db.close().unwrap();
    }
    let (ok, out, err) = strata(&["backup", "create", s(&db_dir), s(&backups)]);
    assert!(ok, "{err}");
    assert_eq!(fields(out.trim()).0, 1, "{out}");
    {
        let db = open(&db_dir);
        db.put(b"second", b"2").unwrap();
        db.delete_cf(&db.cf("index").unwrap(), b"i00000").unwrap();
        db.close().unwrap();
    }
    let (ok, _, err) = strata(&["backup", "create", s(&db_dir), s(&backups)]);
    assert!(ok, "{err}");

    let (ok, out, err) = strata(&["backup", "list", s(&backups)]);
    assert!(ok, "{err}");
    let lines: Vec<_> = out.lines().map(fields).collect();
    assert_eq!(lines.len(), 2, "{out}");
    let (first, second) = (lines[0], lines[1]);
    assert_eq!((first.0, second.0), (1, 2));
    assert_eq!(first.4, first.2, "the first backup copies everything");
    assert!(second.3 > 0 && second.4 < second.2, "incremental: {out}");

    for id in ["1", "2"] {
        let (ok, out, err) = strata(&["backup", "verify", s(&backups), id]);
        assert!(ok && out.trim() == format!("backup {id} OK"), "{out}{err}");
        let target = root.path().join(format!("restored-{id}"));
        let (ok, _, err) = strata(&["backup", "restore", s(&backups), id, s(&target)]);
        assert!(ok, "{err}");
        let db = open(&target);
        let index = db.cf("index").unwrap();
        assert_eq!(db.get(b"k01999").unwrap().as_deref(), Some(&[3; 60][..]));
        let later = id == "2";
        assert_eq!(db.get(b"second").unwrap().is_some(), later);
        assert_eq!(db.get_cf(&index, b"i00000").unwrap().is_none(), later);
    }

    // Bad input: each refused with a message naming what is wrong.
    let not_empty = root.path().join("restored-1");
    let missing = root.path().join("missing");
    let cases: &[(&[&str], &str)] = &[
        (
            &["backup", "restore", s(&backups), "1", s(&not_empty)],
            "is not empty",
        ),
        (
            &["backup", "verify", s(&backups), "7"],
            "backup 7 does not exist",
        ),
        (
            &["backup", "delete", s(&backups), "7"],
            "backup 7 does not exist",
        ),
        (&["backup", "list", s(&missing)], "no backup directory"),
        (
            &["backup", "create", s(&missing), s(&backups)],
            "no database in",
        ),
        (
            &["backup", "list", s(&db_dir)],
            "is not a Strata backup directory",
        ),
        (&["backup", "verify", s(&backups), "x"], "invalid value 'x'"),
    ];
    for (args, want) in cases {
        let (ok, _, err) = strata(args);
        assert!(!ok && err.contains(want), "{args:?}: {err}");
    }
    assert!(!missing.exists(), "a refused command creates nothing");

    // A damaged table is found by verify and refused by restore, both naming it.
    let shared = backups.join("shared");
    let table = std::fs::read_dir(&shared)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&table, bytes).unwrap();
    let (ok, _, err) = strata(&["backup", "verify", s(&backups), "2"]);
    assert!(
        !ok && err.contains(s(&table)) && err.contains("crc32c"),
        "{err}"
    );
    let target = root.path().join("refused");
    let (ok, _, err) = strata(&["backup", "restore", s(&backups), "2", s(&target)]);
    assert!(!ok && err.contains(s(&table)), "{err}");
    assert!(!target.exists());

    let (ok, out, err) = strata(&["backup", "delete", s(&backups), "1"]);
    assert!(ok && out.trim() == "backup 1 deleted", "{out}{err}");
    let (ok, out, _) = strata(&["backup", "list", s(&backups)]);
    assert!(
        ok && out.lines().count() == 1 && out.starts_with("backup 2 "),
        "{out}"
    );
    let (ok, out, err) = strata(&["backup", "purge", s(&backups), "0"]);
    assert!(ok && out.trim() == "backup 2 deleted", "{out}{err}");
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
}
