use super::*;

/// The engines of this build.
fn engines() -> Vec<EngineKind> {
    let mut engines = vec![EngineKind::Strata];
    if cfg!(feature = "rocksdb") {
        engines.push(EngineKind::Rocksdb);
    }
    if cfg!(feature = "lmdb") {
        engines.push(EngineKind::Lmdb);
    }
    engines
}

fn open_in(dir: &Path, kind: EngineKind, flags: &[&str], families: &[&str]) -> Box<dyn Engine> {
    let args: BenchArgs = crate::engine_flags::parse_flags(flags).unwrap();
    open_with_families(kind, &args, dir, families).unwrap()
}

/// The entries of a scan, as text.
fn scanned(
    db: &dyn Engine,
    cf: usize,
    (lower, upper): (&str, Option<&str>),
    reverse: bool,
    limit: usize,
) -> Vec<String> {
    let mut seen = Vec::new();
    let upper = upper.map(str::as_bytes);
    db.scan_range(cf, lower.as_bytes(), upper, reverse, &mut |k, v| {
        seen.push(format!(
            "{}={}",
            String::from_utf8_lossy(k),
            String::from_utf8_lossy(v)
        ));
        seen.len() < limit
    })
    .unwrap();
    seen
}

fn put<'a>(cf: usize, key: &'a str, value: &'a str) -> WriteOp<'a> {
    WriteOp::Put {
        cf,
        key: key.as_bytes(),
        value: value.as_bytes(),
    }
}

#[test]
fn workload_operations_keep_families_apart_and_scan_in_bounds() {
    for kind in engines() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_in(dir.path(), kind, &[], &["default", "links"]);
        let ops = [
            put(0, "a", "1"),
            put(0, "b", "2"),
            put(0, "c", "3"),
            put(0, "d", "4"),
            put(1, "b", "links-b"),
            WriteOp::Delete { cf: 0, key: b"c" },
        ];
        db.write_ops(&ops, false).unwrap();
        assert_eq!(db.get_value(0, b"b").unwrap().as_deref(), Some(&b"2"[..]));
        assert_eq!(
            db.get_value(1, b"b").unwrap().as_deref(),
            Some(&b"links-b"[..])
        );
        assert_eq!(db.get_value(1, b"a").unwrap(), None, "{kind:?}");
        assert_eq!(db.get_value(0, b"c").unwrap(), None, "{kind:?}");
        assert_eq!(
            scanned(db.as_ref(), 0, ("b", None), false, 10),
            ["b=2", "d=4"]
        );
        assert_eq!(
            scanned(db.as_ref(), 0, ("a", Some("d")), false, 10),
            ["a=1", "b=2"]
        );
        assert_eq!(
            scanned(db.as_ref(), 0, ("a", Some("d")), true, 10),
            ["b=2", "a=1"]
        );
        assert_eq!(scanned(db.as_ref(), 0, ("", None), true, 1), ["d=4"]);
        assert_eq!(
            scanned(db.as_ref(), 1, ("", None), false, 10),
            ["b=links-b"]
        );
        let e = db.get_value(2, b"a").unwrap_err().to_string();
        assert!(
            e.contains("index 2 is out of range") && e.contains("2 families"),
            "{e}"
        );
        db.close().unwrap();
    }
}

#[test]
fn a_workload_transaction_sees_its_writes_and_commits_or_rolls_back_whole() {
    for kind in engines() {
        for mode in [TxnMode::Optimistic, TxnMode::Pessimistic] {
            let dir = tempfile::tempdir().unwrap();
            let flags: &[&str] = match mode {
                TxnMode::Optimistic => &["--optimistic_transaction_db"],
                TxnMode::Pessimistic => &["--transaction_db"],
            };
            let db = open_in(dir.path(), kind, flags, &["default", "counts"]);
            db.write_ops(&[put(0, "k", "old")], false).unwrap();
            // A body that writes, reads its write back and scans it.
            let done = db
                .run_transaction(mode, false, &mut |txn| {
                    assert_eq!(txn.get(0, b"k", true)?.as_deref(), Some(&b"old"[..]));
                    txn.write(put(0, "k", "new"))?;
                    txn.write(put(1, "n", "1"))?;
                    assert_eq!(txn.get(0, b"k", false)?.as_deref(), Some(&b"new"[..]));
                    let mut keys = Vec::new();
                    txn.scan(1, b"", None, false, &mut |k, _| {
                        keys.push(k.to_vec());
                        true
                    })?;
                    assert_eq!(keys, [b"n".to_vec()]);
                    Ok(())
                })
                .unwrap();
            assert_eq!(done, Ok(()), "{kind:?} {mode:?}");
            assert_eq!(db.get_value(0, b"k").unwrap().as_deref(), Some(&b"new"[..]));
            assert_eq!(db.get_value(1, b"n").unwrap().as_deref(), Some(&b"1"[..]));
            // A body that asks for a retry, or fails, leaves nothing behind.
            let retried = db
                .run_transaction(mode, false, &mut |txn| {
                    txn.write(put(0, "k", "lost"))?;
                    Err(TxnError::Retry(Retry::Conflict))
                })
                .unwrap();
            assert_eq!(retried, Err(Retry::Conflict));
            let failed = db.run_transaction(mode, false, &mut |txn| {
                txn.write(put(0, "k", "lost"))?;
                Err(TxnError::Failed("the body's own error".into()))
            });
            assert!(failed
                .unwrap_err()
                .to_string()
                .contains("the body's own error"));
            assert_eq!(db.get_value(0, b"k").unwrap().as_deref(), Some(&b"new"[..]));
            db.close().unwrap();
        }
    }
}

/// An optimistic transaction whose key was written by someone else after it read it for
/// update is rolled back for a retry (LMDB's single writer makes this impossible there).
#[test]
fn an_optimistic_conflict_comes_back_as_a_retry() {
    for kind in engines().into_iter().filter(|&k| k != EngineKind::Lmdb) {
        let dir = tempfile::tempdir().unwrap();
        let db = open_in(
            dir.path(),
            kind,
            &["--optimistic_transaction_db"],
            &["default"],
        );
        let outcome = db
            .run_transaction(TxnMode::Optimistic, false, &mut |txn| {
                txn.get(0, b"k", true)?;
                db.write_ops(&[put(0, "k", "theirs")], false)?;
                txn.write(put(0, "k", "mine"))
            })
            .unwrap();
        assert_eq!(outcome, Err(Retry::Conflict), "{kind:?}");
        assert_eq!(
            db.get_value(0, b"k").unwrap().as_deref(),
            Some(&b"theirs"[..])
        );
        db.close().unwrap();
    }
}

#[test]
fn the_first_family_must_be_the_default_one() {
    let dir = tempfile::tempdir().unwrap();
    let args: BenchArgs = crate::engine_flags::parse_flags::<BenchArgs, &str>(&[]).unwrap();
    let e = open_with_families(EngineKind::Strata, &args, dir.path(), &["links"])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("must be \"default\""), "{e}");
}

#[cfg(feature = "lmdb")]
#[test]
fn lmdb_refuses_merges_naming_itself() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_in(dir.path(), EngineKind::Lmdb, &[], &["default"]);
    let merge = WriteOp::Merge {
        cf: 0,
        key: b"k",
        operand: b"1",
    };
    let e = db.write_ops(&[merge], false).unwrap_err().to_string();
    assert!(e.contains("--engine=lmdb") && e.contains("no merge"), "{e}");
}

#[test]
fn blob_files_show_in_the_shape_line_only_when_there_are_some() {
    assert_eq!(blob_shape(0, 0, 0), "");
    assert_eq!(
        blob_shape(3, 3 << 20, 1 << 19),
        " | blob 3 files 3.0 MiB, 0.5 MiB garbage"
    );
}

#[test]
fn since_subtracts_counters_and_keeps_gauges() {
    let before = Counters {
        bytes_written: Some(100),
        batches: 5,
        table_bytes_read: None,
        stalls: vec![("L0 stops", Some(1), 10), ("time", None, 7)],
        pending_compaction_bytes: 50,
        compactions_running: Some(2),
        ..Counters::default()
    };
    let after = Counters {
        bytes_written: Some(160),
        batches: 9,
        table_bytes_read: None,
        blob_bytes_read: Some(30),
        stalls: vec![("L0 stops", Some(3), 25), ("time", None, 9)],
        pending_compaction_bytes: 20,
        compactions_running: Some(1),
        ..Counters::default()
    };
    let d = after.since(&before);
    assert_eq!(d.bytes_written, Some(60));
    assert_eq!(d.batches, 4);
    assert_eq!(d.table_bytes_read, None);
    assert_eq!(
        d.blob_bytes_read,
        Some(30),
        "counted since, from nothing before"
    );
    assert_eq!(d.stalls, vec![("L0 stops", Some(2), 15), ("time", None, 2)]);
    assert_eq!(d.stall_count(), 2);
    assert_eq!(d.pending_compaction_bytes, 20);
    assert_eq!(d.compactions_running, Some(1));
}
