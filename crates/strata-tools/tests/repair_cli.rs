//! `strata repair DIR` (its report and exit status) and `strata stats DIR --json` (one JSON
//! object, parsed here).

mod common;
use std::path::Path;
use std::process::Command;

use common::strata;

/// Runs `strata ARGS`; returns (exit status, stdout, stderr).
fn strata_status(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A database of two families with three tables each in level 0 (three flushes, with
/// overwrites and deletes) and writes only in its WAL.
fn make_db(dir: &Path) {
    let mut options = strata::Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.disable_auto_compactions = true;
    let db = strata::Db::open_cf(dir, options, [("users", strata::CfOptions::default())]).unwrap();
    let users = db.cf("users").unwrap();
    for round in 0..3 {
        for i in 0..400u32 {
            let value = format!("v{round}-{i}-{}", "x".repeat(30));
            db.put(format!("k{i:04}").as_bytes(), value.as_bytes())
                .unwrap();
            db.put_cf(&users, format!("u{i:04}").as_bytes(), value.as_bytes())
                .unwrap();
        }
        for i in (0..400u32).step_by(7 + round) {
            db.delete(format!("k{i:04}").as_bytes()).unwrap();
        }
        db.flush().unwrap();
    }
    db.put(b"only-in-the-wal", b"1").unwrap();
    db.put_cf(&users, b"u0001", b"newest").unwrap();
    db.close().unwrap();
}

fn lose_the_manifest(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("MANIFEST-") || name == "CURRENT" {
            std::fs::remove_file(dir.join(name)).unwrap();
        }
    }
}

/// Repair after the manifest is deleted: exit status 0, a report naming what it did, and
/// `strata dump` prints exactly what it printed before.
#[test]
fn repair_brings_back_what_dump_printed() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("db");
    make_db(&db);
    let db_arg = db.to_str().unwrap();
    let (ok, before, err) = strata(&["dump", db_arg]);
    assert!(ok, "{err}");
    assert!(before.contains("only-in-the-wal") && before.contains("newest"));
    lose_the_manifest(&db);

    let (status, out, err) = strata_status(&["repair", db_arg]);
    assert_eq!(status, 0, "{out}\n{err}");
    assert!(
        out.contains("repaired") && out.contains("column families: default, users"),
        "{out}"
    );
    assert!(out.contains("WALs converted: 1"), "{out}");
    assert!(out.contains("tables moved to lost/: 0"), "{out}");
    let (ok, after, err) = strata(&["dump", db_arg]);
    assert!(ok, "{err}");
    assert_eq!(after, before);
}

/// A damaged table: repair still succeeds, with exit status 2 and the table named as moved
/// to lost/; an open database is refused with status 1 naming its LOCK; a directory that
/// is not a database too.
#[test]
fn repair_reports_losses_with_status_2_and_refusals_with_1() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("db");
    make_db(&db);
    let db_arg = db.to_str().unwrap();
    let mut tables: Vec<String> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    tables.sort();
    let damaged = db.join(&tables[0]);
    let mut bytes = std::fs::read(&damaged).unwrap();
    bytes[10] ^= 0x01;
    std::fs::write(&damaged, bytes).unwrap();
    lose_the_manifest(&db);

    let open = strata::Db::open_cf(
        &db,
        strata::Options::default(),
        [("users", strata::CfOptions::default())],
    );
    assert!(open.is_err(), "no CURRENT: the open is refused");

    let (status, out, err) = strata_status(&["repair", db_arg]);
    assert_eq!(status, 2, "{out}\n{err}");
    assert!(out.contains("tables moved to lost/: 1"), "{out}");
    assert!(out.contains(&tables[0]), "{out}");
    assert!(db.join("lost").join(&tables[0]).exists());
    let (ok, out, err) = strata(&["get", db_arg, "only-in-the-wal"]);
    assert!(ok && out.trim() == "1", "{out}{err}");

    let live = strata::Db::open_cf(
        &db,
        strata::Options::default(),
        [("users", strata::CfOptions::default())],
    )
    .unwrap();
    let (status, _, err) = strata_status(&["repair", db_arg]);
    assert_eq!(status, 1);
    assert!(err.contains("LOCK") && err.contains("busy"), "{err}");
    live.close().unwrap();

    let (status, _, err) = strata_status(&["repair", root.path().to_str().unwrap()]);
    assert_eq!(status, 1);
    assert!(err.contains("not a Strata database"), "{err}");
}

/// `strata stats --json` prints one JSON object whose figures are those of `strata stats`:
/// each family's levels, the counters, the last sequence number.
#[test]
fn stats_json_is_one_object_with_the_figures_of_stats() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("db");
    make_db(&db);
    let db_arg = db.to_str().unwrap();
    let (ok, out, err) = strata(&["stats", "--json", db_arg]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let families = json["families"].as_array().unwrap();
    let names: Vec<&str> = families
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["default", "users"]);
    for f in families {
        let levels = f["tree"]["levels"].as_array().unwrap();
        assert_eq!(levels[0]["level"], 0);
        assert_eq!(levels[0]["files"], 3, "three flushes: {f}");
        assert!(levels[0]["bytes"].as_u64().unwrap() > 0);
        let compaction = f["compaction"].as_array().unwrap();
        assert_eq!(compaction[0]["files"], 3, "{f}");
    }
    // The WAL's write to each family is replayed into a memtable of the read-only open.
    for f in families {
        assert_eq!(f["tree"]["immutable_memtables"], 1, "{f}");
    }
    let sequence = json["last_sequence"].as_u64().unwrap();
    let (ok, text, _) = strata(&["stats", db_arg]);
    assert!(ok);
    assert!(
        text.contains(&format!("last sequence {sequence}")),
        "{text}"
    );
    for key in [
        "writes",
        "reads",
        "memtables",
        "stalls",
        "compaction",
        "bloom",
        "block_cache",
    ] {
        assert!(json[key].is_object(), "{key} in {out}");
    }
    assert!(json["note"].is_null());

    // The keys are those the help lists, no more, no fewer.
    fn keys_of(v: &serde_json::Value, into: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, inner) in map {
                    into.insert(k.clone());
                    keys_of(inner, into);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| keys_of(i, into)),
            _ => {}
        }
    }
    let mut found = std::collections::BTreeSet::new();
    keys_of(&json, &mut found);
    let (ok, help, _) = strata(&["stats", "--help"]);
    assert!(ok);
    let listed: std::collections::BTreeSet<String> = help
        .split_once("With --json")
        .unwrap()
        .1
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert_eq!(found, listed, "keys of the JSON vs keys listed in the help");

    // A database without tables says why, in the note.
    let empty = root.path().join("empty");
    let mut created = strata::Options::default();
    created.create_if_missing = true;
    let fresh = strata::Db::open(&empty, created).unwrap();
    fresh.put(b"k", b"v").unwrap();
    fresh.close().unwrap();
    let (ok, out, err) = strata(&["stats", "--json", empty.to_str().unwrap()]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        json["note"].as_str().unwrap().contains("no tables yet"),
        "{out}"
    );

    let (ok, _, err) = strata(&[
        "stats",
        "--json",
        root.path().join("missing").to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("no database"), "{err}");
}

/// A default family in reverse bytewise order: the command repairs it in the order its
/// tables record, and the keys come back in that order.
#[test]
fn repair_takes_the_default_familys_order_from_its_tables() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("db");
    let mut options = strata::Options::default();
    options.create_if_missing = true;
    options.comparator = std::sync::Arc::new(strata::ReverseBytewiseComparator);
    let handle = strata::Db::open(&db, options.clone()).unwrap();
    for key in ["a", "b", "c"] {
        handle.put(key.as_bytes(), b"v").unwrap();
    }
    handle.flush().unwrap();
    handle.close().unwrap();
    lose_the_manifest(&db);

    let (status, out, err) = strata_status(&["repair", db.to_str().unwrap()]);
    assert_eq!(status, 0, "{out}\n{err}");
    let handle = strata::Db::open(&db, options).unwrap();
    let keys: Vec<Vec<u8>> = handle.range::<&[u8], _>(..).map(|e| e.unwrap().0).collect();
    assert_eq!(keys, [b"c", b"b", b"a"]);
}

/// A database whose values live in blob files: repair keeps the blob files the tables refer
/// to (status 0, every value back); a damaged blob file is set aside, named with its error,
/// and the status is 2.
#[test]
fn repair_keeps_the_blob_files_and_sets_aside_a_damaged_one() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("db");
    let mut options = strata::Options::default();
    options.create_if_missing = true;
    options.enable_blob_files = true;
    options.min_blob_size = 20;
    options.blob_file_size = 4000;
    let opened = strata::Db::open(&db, options).unwrap();
    for i in 0..100u32 {
        opened
            .put(format!("k{i:03}"), format!("value {i} {}", "b".repeat(40)))
            .unwrap();
    }
    opened.flush().unwrap();
    opened.close().unwrap();
    let mut blobs: Vec<String> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".blob"))
        .collect();
    blobs.sort();
    assert!(blobs.len() >= 2, "blob files cut at 4000 bytes: {blobs:?}");
    let db_arg = db.to_str().unwrap();
    let (ok, before, err) = strata(&["dump", db_arg]);
    assert!(ok, "{err}");

    lose_the_manifest(&db);
    let (status, out, err) = strata_status(&["repair", db_arg]);
    assert_eq!(status, 0, "{out}\n{err}");
    let numbers: Vec<&str> = blobs.iter().map(|n| n.trim_end_matches(".blob")).collect();
    assert!(
        out.contains(&format!(
            "blob files kept: {} [{}]",
            blobs.len(),
            numbers.join(" ")
        )),
        "{out}"
    );
    let (ok, after, err) = strata(&["dump", db_arg]);
    assert!(ok, "{err}");
    assert_eq!(after, before);

    // A flipped byte in the first blob file's header (its column family, under the header's
    // checksum).
    lose_the_manifest(&db);
    let first = db.join(&blobs[0]);
    let mut bytes = std::fs::read(&first).unwrap();
    bytes[12] ^= 0x01;
    std::fs::write(&first, &bytes).unwrap();
    let (status, out, err) = strata_status(&["repair", db_arg]);
    assert_eq!(status, 2, "{out}\n{err}");
    assert!(out.contains("blob files moved to lost/: 1"), "{out}");
    assert!(
        out.contains(&format!("  {}: corruption in ", blobs[0])),
        "{out}"
    );
    assert!(db.join("lost").join(&blobs[0]).exists());
}
