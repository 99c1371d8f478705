//! `Db::open_read_only`: reads a database another handle has open for writing, and writes
//! nothing.

use std::collections::BTreeMap;
use std::path::Path;

use strata::{Db, ErrorKind, Options, ReadOptions, WriteBatch, WriteOptions};

/// Every file of the directory but the info logs, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|name| !name.starts_with("LOG"))
        .map(|name| {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            (name, bytes)
        })
        .collect()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

#[test]
fn a_read_only_open_beside_a_writer_reads_everything_and_changes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    let writer = Db::open(dir.path(), options).unwrap();
    // Tables in several levels and writes still in the WAL.
    for i in 0..3000 {
        writer.put(key(i), [b'v'; 100]).unwrap();
    }
    writer.flush().unwrap();
    writer.compact_all().unwrap();
    for i in 3000..4000 {
        writer.put(key(i), format!("late{i}").as_bytes()).unwrap();
    }
    writer.delete(key(5)).unwrap();
    writer.sync_wal().unwrap();
    let before = files(dir.path());

    let reader = Db::open_read_only(dir.path(), Options::default()).unwrap();
    assert_eq!(
        reader.get(key(4)).unwrap().as_deref(),
        Some(&[b'v'; 100][..])
    );
    assert_eq!(reader.get(key(5)).unwrap(), None);
    assert_eq!(
        reader.get(key(3999)).unwrap().as_deref(),
        Some(&b"late3999"[..])
    );
    let mut it = reader.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut count = 0;
    while it.valid() {
        count += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(count, 3999);
    assert!(reader.stats().level_files.iter().sum::<u64>() > 0);
    assert!(reader.property("strata.stats").is_some());
    reader.close().unwrap();

    assert_eq!(
        files(dir.path()),
        before,
        "the read-only open changed a file"
    );
    // The writer goes on; a new read-only open sees its later writes.
    writer.put(b"after", b"x").unwrap();
    let reader = Db::open_read_only(dir.path(), Options::default()).unwrap();
    assert_eq!(reader.get(b"after").unwrap().as_deref(), Some(&b"x"[..]));
    drop(reader);
    writer.close().unwrap();
}

#[test]
fn every_write_is_refused_naming_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(dir.path(), options).unwrap();
    db.put(b"k", b"v").unwrap();
    db.close().unwrap();
    let before = files(dir.path());

    let db = Db::open_read_only(dir.path(), Options::default()).unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"a", b"b");
    let calls: Vec<(&str, strata::Result<()>)> = vec![
        ("put", db.put(b"k", b"w")),
        ("delete", db.delete(b"k")),
        ("write", db.write(batch, &WriteOptions::default())),
        ("flush", db.flush()),
        ("compact_all", db.compact_all()),
        ("compact_level", db.compact_level(0)),
        ("wait_for_compactions", db.wait_for_compactions()),
        ("sync_wal", db.sync_wal()),
        ("resume", db.resume()),
    ];
    for (name, result) in calls {
        let err = result.expect_err(name);
        assert_eq!(err.kind(), ErrorKind::Unavailable, "{name}: {err}");
        assert!(err.to_string().contains("read-only"), "{name}: {err}");
        assert!(
            err.to_string().contains(&dir.path().display().to_string()),
            "{name}: {err}"
        );
    }
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    db.close().unwrap();
    assert_eq!(files(dir.path()), before);
}

#[test]
fn a_missing_database_is_not_found_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none");
    let err = Db::open_read_only(&path, Options::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(!path.exists());
}
