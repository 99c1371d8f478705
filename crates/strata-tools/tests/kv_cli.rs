//! `strata get|put|delete|scan|dump|load`: data in and out from the shell, in every column
//! family, with their errors and exit statuses.

mod common;

use std::process::Command;

use common::{strata, strata_with_input};
use strata::{CfOptions, Db, Options};

#[test]
fn data_goes_in_and_out_of_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(&path, options).unwrap();
    db.create_cf("index", CfOptions::default()).unwrap();
    db.close().unwrap();
    let db_arg = path.to_str().unwrap();

    for (key, value) in [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")] {
        let (ok, _, err) = strata(&["put", db_arg, key, value]);
        assert!(ok, "{err}");
    }
    let (ok, _, err) = strata(&["put", db_arg, "--cf", "index", "x", "in index"]);
    assert!(ok, "{err}");
    let (ok, _, err) = strata(&["put", db_arg, "--hex", "00ff", "c3"]);
    assert!(ok, "{err}");
    let (ok, _, err) = strata(&["delete", db_arg, "d"]);
    assert!(ok, "{err}");

    let (ok, out, _) = strata(&["get", db_arg, "b"]);
    assert!(ok && out == "2\n", "{out}");
    let (ok, out, _) = strata(&["get", db_arg, "--cf", "index", "x"]);
    assert!(ok && out == "in index\n", "{out}");
    let (ok, out, _) = strata(&["get", db_arg, "--hex", "00ff"]);
    assert!(ok && out == "c3\n", "{out}");
    // Absent: exit status 1, a word on stderr, nothing on stdout.
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["get", db_arg, "d"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found: d"));

    let cases: [(&[&str], &str); 5] = [
        (
            &["scan", db_arg],
            "\\x00\\xff => \\xc3\na => 1\nb => 2\nc => 3\n",
        ),
        (&["scan", db_arg, "--from", "b", "--to", "c"], "b => 2\n"),
        (
            &["scan", db_arg, "--reverse", "--limit", "2"],
            "c => 3\nb => 2\n",
        ),
        (
            &["scan", db_arg, "--hex", "--from", "61", "--limit", "1"],
            "61 31\n",
        ),
        (
            &["scan", db_arg, "--cf", "index", "--json"],
            "{\"cf\":\"index\",\"key\":\"x\",\"value\":\"in index\"}\n",
        ),
    ];
    for (args, want) in cases {
        let (ok, out, err) = strata(args);
        assert!(ok, "{args:?}: {err}");
        assert_eq!(out, want, "{args:?}");
    }

    // dump | load into a new database | dump: the same lines.
    let (ok, dumped, err) = strata(&["dump", db_arg]);
    assert!(ok, "{err}");
    assert_eq!(dumped.lines().count(), 5, "{dumped}");
    assert!(dumped.contains("\"key_hex\":\"00ff\""), "{dumped}");
    let copy = dir.path().join("copy");
    let (ok, _, err) = strata_with_input(&["load", copy.to_str().unwrap()], &dumped);
    assert!(ok && err.contains("loaded 5 records"), "{err}");
    let (ok, again, err) = strata(&["dump", copy.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(again, dumped);

    // A closed pipe ends the output quietly.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} scan {db_arg} | head -1",
            env!("CARGO_BIN_EXE_strata")
        ))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_input_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db_arg = path.to_str().unwrap();
    let (ok, _, err) = strata_with_input(&["load", db_arg], "{\"key\":\"k\",\"value\":\"v\"}\n");
    assert!(ok, "{err}");
    let cases: [(&[&str], &str); 5] = [
        (
            &["get", db_arg, "--cf", "nope", "k"],
            "no column family \"nope\" (the database has: default)",
        ),
        (&["get", db_arg, "--hex", "0g"], "\"0g\" is not hex"),
        (
            &["put", db_arg, "--cf", "nope", "k", "v"],
            "no column family \"nope\"",
        ),
        (&["scan", db_arg, "--hex", "--json"], "cannot be used with"),
        (&["get", "/no/such/db", "k"], "no database"),
    ];
    for (args, says) in cases {
        let (ok, _, err) = strata(args);
        assert!(!ok && err.contains(says), "{args:?}: {err}");
    }
    let (ok, _, err) = strata_with_input(
        &["load", db_arg],
        "{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"b\"}\n",
    );
    assert!(
        !ok && err.contains("line 2: no \"value\" or \"value_hex\""),
        "{err}"
    );
    // Nothing of it was written, not even the good first line.
    let (ok, _, _) = strata(&["get", db_arg, "a"]);
    assert!(!ok);
}

#[test]
fn reads_answer_beside_a_writer_and_change_none_of_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(&path, options).unwrap();
    let index = db.create_cf("index", CfOptions::default()).unwrap();
    for i in 0..200u32 {
        db.put(format!("k{i:03}").as_bytes(), b"v").unwrap();
        db.put_cf(&index, format!("i{i:03}").as_bytes(), b"w")
            .unwrap();
    }
    db.flush().unwrap();
    db.put(b"in-the-wal", b"x").unwrap();
    let files = || {
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| !e.file_name().to_string_lossy().starts_with("LOG"))
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect();
        out.sort();
        out
    };
    let before = files();
    let db_arg = path.to_str().unwrap();
    let (ok, out, err) = strata(&["scan", db_arg, "--limit", "3"]);
    assert!(ok && out.lines().count() == 3, "{err}");
    let (ok, out, err) = strata(&["dump", db_arg]);
    assert!(ok && out.lines().count() == 401, "{err}");
    let (ok, out, err) = strata(&["get", db_arg, "in-the-wal"]);
    assert!(ok && out == "x\n", "{err}");
    let (ok, _, err) = strata(&["stats", db_arg]);
    assert!(ok, "{err}");
    assert!(before == files(), "the writer's files changed");
    // Writes need the lock the writer holds.
    let (ok, _, err) = strata(&["put", db_arg, "k", "v"]);
    assert!(!ok && err.contains("lock"), "{err}");
    drop(db);
}

/// `get` and `scan` with `--secondary DIR` read a database a writer has open as a secondary
/// instance: they see its WAL's writes, write their LOG into DIR and nothing into the
/// database; a missing database is refused naming it.
#[test]
fn reads_as_a_secondary_keep_their_files_in_their_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (path, own) = (dir.path().join("db"), dir.path().join("follower"));
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(&path, options).unwrap();
    for i in 0..50u32 {
        db.put(format!("k{i:03}").as_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
    db.put(b"in-the-wal", b"x").unwrap();
    let names = || {
        let mut names: Vec<String> = std::fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = names();
    let (db_arg, own_arg) = (path.to_str().unwrap(), own.to_str().unwrap());
    let (ok, out, err) = strata(&["get", db_arg, "in-the-wal", "--secondary", own_arg]);
    assert!(ok && out == "x\n", "{err}");
    let (ok, out, err) = strata(&["scan", db_arg, "--secondary", own_arg, "--from", "k04"]);
    assert!(ok && out.lines().count() == 10, "{out}{err}");
    assert!(own.join("LOG").exists(), "the secondary's LOG");
    assert_eq!(names(), before, "files appeared in or left the database");

    let missing = dir.path().join("nothing-here");
    let (ok, _, err) = strata(&["scan", missing.to_str().unwrap(), "--secondary", own_arg]);
    assert!(!ok && err.contains("nothing-here"), "{err}");
    drop(db);
}
