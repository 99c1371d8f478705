//! Options changed on an open database (`Db::set_options`, `set_cf_options`,
//! `set_db_options`) and the OPTIONS file (`Options::load_latest`): changes take effect for
//! the next flush, compaction pick and stall decision; bad changes are refused whole; the
//! file is written at open and at every change, the newest two kept, and reads back.

use std::path::Path;
use std::time::{Duration, Instant};

use strata::option_registry::{self, Section};
use strata::{CfOptions, Db, ErrorKind, Options};

fn open(dir: &Path) -> Db {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    Db::open(dir, options).expect("open")
}

fn options_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("OPTIONS-"))
        .collect();
    names.sort();
    names
}

fn l0_files(db: &Db) -> usize {
    db.property("strata.num-files-at-level0")
        .expect("property")
        .parse()
        .expect("number")
}

#[test]
fn every_mutable_family_option_set_online_is_in_force_and_in_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path());
    // A TTL family, so that its ttl may change length.
    let mut ttl_family = CfOptions::default();
    ttl_family.ttl = Some(Duration::from_secs(60));
    let cf = db.create_cf("other", ttl_family).expect("create");
    for o in option_registry::all() {
        let got = match o.section {
            Section::Db => db.set_db_options(&[(o.name, o.example)]),
            Section::Family | Section::Table => db.set_cf_options(&cf, &[(o.name, o.example)]),
        };
        if !o.mutable {
            let e = got.expect_err(o.name);
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}", o.name);
            assert!(e.to_string().contains(o.name), "{e}");
            continue;
        }
        if let Err(e) = got {
            // A value valid alone may contradict another option's value: set the pair.
            panic!("{}={}: {e}", o.name, o.example);
        }
        let now = match o.section {
            Section::Db => db.get_options(),
            _ => db
                .get_options()
                .with_cf_options(&db.get_cf_options(&cf).expect("cf")),
        };
        assert_eq!((o.get)(&now), o.example, "{}", o.name);
        let (loaded, families) = Options::load_latest(dir.path()).expect("load");
        let in_file = match o.section {
            Section::Db => loaded,
            _ => loaded.with_cf_options(&families[1].1),
        };
        assert_eq!(
            (o.get)(&in_file),
            o.example,
            "{} in the OPTIONS file",
            o.name
        );
    }
    db.close().expect("close");
}

#[test]
fn a_smaller_write_buffer_set_online_makes_the_next_memtables_flush_sooner() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path());
    db.set_options(&[("disable_auto_compactions", "true")])
        .expect("set");
    let value = vec![b'v'; 1000];
    for i in 0..200u32 {
        db.put(i.to_be_bytes(), &value).expect("put");
    }
    db.wait_for_compactions().expect("wait");
    let before = l0_files(&db);
    // About 200 KB at 64 KiB memtables: 3 flushes; at 16 KiB: about 12.
    db.set_options(&[("write_buffer_size", "16384")])
        .expect("set");
    for i in 200..400u32 {
        db.put(i.to_be_bytes(), &value).expect("put");
    }
    db.wait_for_compactions().expect("wait");
    let after = l0_files(&db) - before;
    assert!(after >= 2 * before.max(1), "before {before}, after {after}");
    db.close().expect("close");
}

#[test]
fn compression_per_level_set_online_is_what_the_next_flush_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path());
    db.set_options(&[("disable_auto_compactions", "true")])
        .expect("set");
    let value = b"a compressible value, a compressible value, ".repeat(20);
    let mut flushed_with = Vec::new();
    for (round, levels) in ["zstd:none", "", "snappy"].into_iter().enumerate() {
        db.set_options(&[("compression_per_level", levels), ("compression", "lz4")])
            .expect("set");
        for i in 0..50u32 {
            db.put(format!("{round}-{i:04}"), &value).expect("put");
        }
        db.flush().expect("flush");
        let tables = db
            .properties_of_all_tables(&db.default_cf())
            .expect("tables");
        let newest = tables.keys().max().expect("a table").clone();
        flushed_with.push(tables[&newest].compression.clone());
    }
    // A flush writes L0: the list's first entry, `compression` when the list is empty.
    assert_eq!(flushed_with, ["zstd", "lz4", "snappy"]);
    db.close().expect("close");
}

#[test]
fn compactions_stop_and_resume_with_disable_auto_compactions_online() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path());
    db.set_options(&[("disable_auto_compactions", "true")])
        .expect("set");
    for round in 0..6u32 {
        db.put(round.to_be_bytes(), b"v").expect("put");
        db.flush().expect("flush");
    }
    db.wait_for_compactions().expect("wait");
    assert_eq!(l0_files(&db), 6, "no compaction while disabled");
    db.set_options(&[
        ("disable_auto_compactions", "false"),
        ("level0_file_num_compaction_trigger", "2"),
    ])
    .expect("set");
    let deadline = Instant::now() + Duration::from_secs(30);
    db.wait_for_compactions().expect("wait");
    assert!(Instant::now() < deadline);
    assert!(
        l0_files(&db) < 2,
        "L0 compacted once enabled: {}",
        l0_files(&db)
    );
    db.close().expect("close");
}

#[test]
fn max_background_jobs_can_grow_and_shrink_online() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path());
    db.set_db_options(&[("max_background_jobs", "4")])
        .expect("grow");
    assert_eq!(db.get_options().max_background_jobs, 4);
    db.set_db_options(&[("max_background_jobs", "1")])
        .expect("shrink");
    // One job still compacts (a flush thread and one compaction thread at least).
    for round in 0..8u32 {
        db.put(round.to_be_bytes(), b"v").expect("put");
        db.flush().expect("flush");
    }
    db.wait_for_compactions().expect("wait");
    assert!(l0_files(&db) < 4);
    db.close().expect("close");
}

#[test]
fn bad_changes_are_refused_whole_and_change_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path());
    let files = options_files(dir.path());
    let before = format!("{:?}", db.get_options());
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("write_buffer_size", "1048576"), ("no_such_option", "1")],
            "unknown option \"no_such_option\"",
        ),
        (
            &[("write_buffer_size", "1048576"), ("num_levels", "3")],
            "\"num_levels\" cannot be changed",
        ),
        (
            &[
                ("write_buffer_size", "1048576"),
                ("level0_stop_writes_trigger", "x"),
            ],
            "\"level0_stop_writes_trigger\": value \"x\"",
        ),
        (&[("write_buffer_size", "100")], "write_buffer_size is 100"),
        (
            &[("level0_slowdown_writes_trigger", "50")],
            "level0 triggers",
        ),
        (&[("max_background_jobs", "3")], "set_db_options"),
    ];
    for (changes, says) in cases {
        let e = db.set_options(changes).expect_err(says);
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains(says), "{says}: {e}");
    }
    let e = db
        .set_db_options(&[("write_buffer_size", "1048576")])
        .expect_err("family option");
    assert!(e.to_string().contains("column family option"), "{e}");
    assert_eq!(format!("{:?}", db.get_options()), before);
    assert_eq!(
        options_files(dir.path()),
        files,
        "no OPTIONS file for a refused change"
    );
    db.close().expect("close");
}

#[test]
fn options_files_are_written_at_open_and_each_change_keeping_the_newest_two() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = open(dir.path());
    assert_eq!(options_files(dir.path()), ["OPTIONS-000001"]);
    db.set_options(&[("max_write_buffer_number", "3")])
        .expect("set");
    db.set_db_options(&[("max_total_wal_size", "1000000")])
        .expect("set");
    db.create_cf("extra", CfOptions::default()).expect("create");
    assert_eq!(
        options_files(dir.path()),
        ["OPTIONS-000003", "OPTIONS-000004"]
    );
    db.close().expect("close");
    let (options, families) = Options::load_latest(dir.path()).expect("load");
    assert_eq!(options.max_write_buffer_number, 3);
    assert_eq!(options.max_total_wal_size, 1_000_000);
    assert_eq!(options.write_buffer_size, 64 << 10);
    let names: Vec<&str> = families.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["default", "extra"]);
    // Reopened with what was read, numbering goes on.
    let db = Db::open_cf(dir.path(), options, families).expect("reopen");
    assert_eq!(
        options_files(dir.path()),
        ["OPTIONS-000004", "OPTIONS-000005"]
    );
    db.close().expect("close");
}

#[test]
fn a_corrupt_options_file_is_reported_and_does_not_stop_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    open(dir.path()).close().expect("close");
    let path = dir.path().join("OPTIONS-000001");
    let text = std::fs::read_to_string(&path).expect("read");
    std::fs::write(
        &path,
        text.replace("write_buffer_size=65536", "write_buffer_size=6x5536"),
    )
    .expect("write");
    let e = Options::load_latest(dir.path()).expect_err("corrupt");
    assert_eq!(e.kind(), ErrorKind::Corruption);
    let message = e.to_string();
    assert!(
        message.contains("OPTIONS-000001") && message.contains("write_buffer_size"),
        "{message}"
    );
    // The engine never reads it: open works and writes a good one.
    open(dir.path()).close().expect("close");
    let (options, _) = Options::load_latest(dir.path()).expect("the new file reads");
    assert_eq!(options.write_buffer_size, 64 << 10);
    let e = Options::load_latest(dir.path().join("missing")).expect_err("no dir");
    assert!(e.to_string().contains("missing"), "{e}");
}
