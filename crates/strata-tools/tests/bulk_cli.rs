//! `strata sst write` and `strata ingest`: a dump becomes a table, the table is ingested into
//! another database, and a scan of that database equals one of the source; bad input is
//! refused naming the file and the line.

mod common;

use common::{strata, strata_with_input};
use strata::{CfOptions, Db, Options, ReverseBytewiseComparator};

fn create(path: &std::path::Path) -> Db {
    let mut options = Options::default();
    options.create_if_missing = true;
    Db::open(path, options).unwrap()
}

#[test]
fn a_dump_written_to_a_table_and_ingested_scans_as_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    let db = create(&source);
    for i in 0..500u32 {
        db.put(
            format!("key{i:04}").as_bytes(),
            format!("value {i}").as_bytes(),
        )
        .unwrap();
    }
    db.put(b"\x00\xffbinary", b"\x01\x02").unwrap();
    db.delete(b"key0007").unwrap();
    db.close().unwrap();
    let src = source.to_str().unwrap();
    let (ok, dump, err) = strata(&["dump", src]);
    assert!(ok, "{err}");
    let dump_file = dir.path().join("dump.jsonl");
    std::fs::write(&dump_file, &dump).unwrap();

    // From a file, and (the same) from standard input.
    let sst = dir.path().join("bulk.sst");
    let sst_arg = sst.to_str().unwrap();
    let (ok, _, err) = strata(&[
        "sst",
        "write",
        sst_arg,
        "--input",
        dump_file.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("wrote 500 entries"), "{err}");
    let piped = dir.path().join("piped.sst");
    let (ok, _, err) = strata_with_input(&["sst", "write", piped.to_str().unwrap()], &dump);
    assert!(ok, "{err}");
    let (ok, _, err) = strata(&["sst", "verify", sst_arg]);
    assert!(ok, "{err}");

    // Into a database that holds older values of some keys, and keys of its own.
    let target = dir.path().join("target");
    let db = create(&target);
    db.put(b"key0001", b"older").unwrap();
    db.put(b"zzz", b"own").unwrap();
    db.close().unwrap();
    let tgt = target.to_str().unwrap();
    let (ok, _, err) = strata(&["ingest", tgt, sst_arg]);
    assert!(ok, "{err}");
    assert!(err.contains("ingested 1 files"), "{err}");
    assert!(sst.exists(), "without --move the table stays");
    let (ok, scanned, err) = strata(&["scan", tgt, "--json", "--to", "zzz"]);
    assert!(ok, "{err}");
    assert_eq!(scanned, dump);

    // --move into a fresh database: the table goes.
    let fresh = dir.path().join("fresh");
    create(&fresh).close().unwrap();
    let (ok, _, err) = strata(&[
        "ingest",
        fresh.to_str().unwrap(),
        "--move",
        piped.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(!piped.exists());
    let (ok, scanned, _) = strata(&["scan", fresh.to_str().unwrap(), "--json"]);
    assert!(ok);
    assert_eq!(scanned, dump);
}

/// A family in reverse order: its dump is in that order, written in it with --comparator,
/// and --hex takes the lines of `scan --hex`.
#[test]
fn a_family_of_another_order_and_hex_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = create(&path);
    let mut reverse = CfOptions::default();
    reverse.comparator = std::sync::Arc::new(ReverseBytewiseComparator);
    let cf = db.create_cf("rev", reverse).unwrap();
    db.put_cf(&cf, b"a", b"1").unwrap();
    db.close().unwrap();
    let db_arg = path.to_str().unwrap();
    let sst = dir.path().join("rev.sst");
    let sst_arg = sst.to_str().unwrap();
    let input = "{\"cf\":\"rev\",\"key\":\"c\",\"value\":\"3\"}\n{\"cf\":\"rev\",\"key\":\"b\",\"value\":\"2\"}\n";
    let (ok, _, err) = strata_with_input(&["sst", "write", sst_arg, "--cf", "rev"], input);
    assert!(!ok);
    assert!(err.contains("standard input line 2: "), "{err}");
    assert!(
        err.contains("key b comes before the previous key c"),
        "{err}"
    );
    assert!(!sst.exists(), "a failed table is deleted");
    let write = [
        "sst",
        "write",
        sst_arg,
        "--cf",
        "rev",
        "--comparator",
        "rocksdb.ReverseBytewiseComparator",
    ];
    let (ok, _, err) = strata_with_input(&write, input);
    assert!(ok, "{err}");
    // The default family orders bytewise: refused, naming both orders.
    let (ok, _, err) = strata(&["ingest", db_arg, sst_arg]);
    assert!(!ok);
    assert!(err.contains("rocksdb.ReverseBytewiseComparator"), "{err}");
    let (ok, _, err) = strata(&["ingest", db_arg, sst_arg, "--cf", "rev"]);
    assert!(ok, "{err}");
    let (ok, out, _) = strata(&["scan", db_arg, "--cf", "rev"]);
    assert!(ok);
    assert_eq!(out, "c => 3\nb => 2\na => 1\n");

    let hex = dir.path().join("hex.sst");
    let (ok, _, err) = strata_with_input(
        &["sst", "write", hex.to_str().unwrap(), "--hex"],
        "00ff 01\n0100 \n",
    );
    assert!(ok, "{err}");
    let (ok, _, err) = strata(&["ingest", db_arg, hex.to_str().unwrap()]);
    assert!(ok, "{err}");
    let (ok, out, _) = strata(&["scan", db_arg, "--hex"]);
    assert!(ok);
    assert_eq!(out, "00ff 01\n0100 \n");
}

/// Bad input: each message names the input and the line, or the file.
#[test]
fn bad_input_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let sst = dir.path().join("t.sst");
    let sst_arg = sst.to_str().unwrap();
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &[],
            "{\"key\":\"a\",\"value\":\"1\"}\nnot json\n",
            "standard input line 2: not a JSON object",
        ),
        (
            &[],
            "{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"a\",\"value\":\"2\"}\n",
            "line 2: invalid argument: table",
        ),
        (
            &[],
            "{\"cf\":\"other\",\"key\":\"a\",\"value\":\"1\"}\n",
            "line 1: a record of column family \"other\"",
        ),
        (&[], "", "no record of column family \"default\""),
        (&["--hex"], "zz 00\n", "line 1: the key is not hex"),
        (
            &["--comparator", "my.Order"],
            "{\"key\":\"a\",\"value\":\"1\"}\n",
            "not a built-in comparator",
        ),
    ];
    for (flags, input, message) in cases {
        let mut args = vec!["sst", "write", sst_arg];
        args.extend_from_slice(flags);
        let (ok, _, err) = strata_with_input(&args, input);
        assert!(!ok, "{input:?} was accepted");
        assert!(err.contains(message), "{input:?}: {err}");
        assert!(!sst.exists(), "{input:?}: a table was left");
    }
    let (ok, _, err) = strata(&["sst", "write", sst_arg, "--input", "/nonexistent/dump"]);
    assert!(!ok && err.contains("/nonexistent/dump"), "{err}");

    let path = dir.path().join("db");
    create(&path).close().unwrap();
    let missing = dir.path().join("missing.sst");
    let (ok, _, err) = strata(&["ingest", path.to_str().unwrap(), missing.to_str().unwrap()]);
    assert!(!ok && err.contains("missing.sst"), "{err}");
    let (ok, _, err) = strata(&[
        "ingest",
        path.to_str().unwrap(),
        "--cf",
        "nope",
        missing.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("no column family \"nope\""), "{err}");
}
