//! `strata wal dump` on a database's WALs (live and archived) and on a damaged WAL, and
//! `strata sst dump` showing the properties of a table properties collector.

mod common;
use std::collections::BTreeMap;
use std::sync::Arc;

use common::strata;
use strata::{
    CollectedEntry, CollectorContext, Db, Options, TablePropertiesCollector,
    TablePropertiesCollectorFactory, WriteBatch, WriteOptions,
};

struct Tagging;

impl TablePropertiesCollector for Tagging {
    fn add(&mut self, _: &CollectedEntry<'_>) {}
    fn finish(&mut self) -> BTreeMap<String, Vec<u8>> {
        BTreeMap::from([("app.region".to_string(), b"r\x017".to_vec())])
    }
}

struct TaggingFactory;

impl TablePropertiesCollectorFactory for TaggingFactory {
    fn create(&self, _: &CollectorContext<'_>) -> Box<dyn TablePropertiesCollector> {
        Box::new(Tagging)
    }
    fn name(&self) -> &str {
        "Tagging"
    }
}

#[test]
fn wal_dump_prints_each_batch_and_update_safely() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.wal_ttl_seconds = 3600;
    options.table_properties_collector_factories = vec![Arc::new(TaggingFactory)];
    let db = Db::open(dir.path(), options).unwrap();
    db.put(b"first", b"archived").unwrap();
    db.flush().unwrap(); // its WAL goes to archive/
    let mut batch = WriteBatch::new();
    batch.put(b"k\x00\xff", b"v\n");
    batch.delete(b"gone");
    batch.delete_range(b"a", b"b");
    db.write(batch, &WriteOptions::default()).unwrap();
    let path = dir.path().to_str().unwrap();
    let (ok, out, err) = strata(&["wal", "dump", path]);
    assert!(ok, "{err}");
    assert!(out.contains("archive/"), "{out}");
    assert!(
        out.contains("#1 count 1") && out.contains("PUT(0) first => archived"),
        "{out}"
    );
    assert!(out.contains("#2 count 3"), "{out}");
    assert!(out.contains(r"PUT(0) k\x00\xff => v\x0a"), "{out}");
    assert!(
        out.contains("DELETE(0) gone") && out.contains("RANGE_DELETE(0) a .. b"),
        "{out}"
    );
    let (ok, hex, _) = strata(&["wal", "dump", "--hex", path]);
    assert!(ok && hex.contains("PUT(0) 0x6b00ff => 0x760a"), "{hex}");

    // sst dump shows the collector's property, printed safely.
    let (ok, out, err) = strata(&["sst", "dump", "--limit", "0", path]);
    assert!(ok, "{err}");
    assert!(
        out.contains(r"user-property: app.region => r\x017"),
        "{out}"
    );
    drop(db);

    // A damaged WAL: the dump says where, and fails.
    let wal = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap();
    let mut bytes = std::fs::read(&wal).unwrap();
    if bytes.len() > 20 {
        bytes[10] ^= 0xff;
        std::fs::write(&wal, &bytes).unwrap();
        let (ok, out, err) = strata(&["wal", "dump", wal.to_str().unwrap()]);
        assert!(!ok, "{out}");
        assert!(
            err.contains("checksum") || out.contains("checksum") || err.contains("corrupt"),
            "{out}{err}"
        );
    }
    let (ok, _, err) = strata(&["wal", "dump", dir.path().join("none.log").to_str().unwrap()]);
    assert!(!ok && err.contains("no such file"), "{err}");
}

/// A WAL of compressed records (`wal_compression`) dumps as a plain one, each compressed
/// record saying what it takes in the file; a record that did not compress says nothing.
#[test]
fn wal_dump_reads_compressed_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.wal_compression = strata::Compression::Lz4;
    let db = Db::open(dir.path(), options).unwrap();
    db.put(b"repeats", "a value that repeats, ".repeat(20))
        .unwrap();
    db.put(b"short", b"v").unwrap();
    let (ok, out, err) = strata(&["wal", "dump", dir.path().to_str().unwrap()]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("#1 count 1 (") && lines[0].contains(", compressed to "),
        "{out}"
    );
    assert!(!lines[1].contains("compressed"), "{out}");
    assert!(
        out.contains(&format!(
            "PUT(0) repeats => {}",
            "a value that repeats, ".repeat(20)
        )),
        "{out}"
    );
    drop(db);
}
