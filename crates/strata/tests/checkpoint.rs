//! Checkpoints: an openable copy of a running database as of one moment, with its column
//! families, sharing its tables by hard links.

use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::{CfOptions, Db, ErrorKind, Options, WriteBatch, WriteOptions};

fn options() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    options
}

fn families() -> [(&'static str, CfOptions); 1] {
    [("index", CfOptions::default())]
}

#[test]
fn a_checkpoint_holds_the_database_as_of_its_moment() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    let index = db.create_cf("index", CfOptions::default()).unwrap();
    for i in 0..3000u32 {
        db.put(format!("k{i:05}").as_bytes(), [1; 100]).unwrap();
        db.put_cf(&index, format!("i{i:05}").as_bytes(), b"x")
            .unwrap();
    }
    db.flush().unwrap();
    // Some writes only in the WAL and memtables, one that skipped the WAL.
    db.put(b"wal-only", b"1").unwrap();
    let mut write_options = WriteOptions::default();
    write_options.disable_wal = true;
    db.put_opt(b"no-wal", b"2", &write_options).unwrap();
    db.delete(b"k00000").unwrap();

    let cp = dir.path().join("checkpoint");
    db.checkpoint(&cp).unwrap();
    assert!(!dir.path().join("checkpoint.tmp").exists());
    // Later writes are not in it.
    db.put(b"after", b"3").unwrap();
    db.delete(b"k00001").unwrap();

    // Its tables are the database's, linked.
    let mut linked = 0;
    for entry in std::fs::read_dir(&cp).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sst") {
            let original = dir.path().join("db").join(path.file_name().unwrap());
            if original.exists() {
                assert_eq!(
                    std::fs::metadata(&path).unwrap().ino(),
                    std::fs::metadata(&original).unwrap().ino()
                );
                linked += 1;
            }
        }
    }
    assert!(linked > 0);

    let copy = Db::open_cf(&cp, options(), families()).unwrap();
    let copy_index = copy.cf("index").unwrap();
    assert_eq!(copy.get(b"wal-only").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(copy.get(b"no-wal").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(copy.get(b"k00000").unwrap(), None);
    assert!(copy.get(b"k00001").unwrap().is_some());
    assert_eq!(copy.get(b"after").unwrap(), None);
    assert_eq!(
        copy.range_cf::<&[u8], _>(&copy_index, ..).unwrap().count(),
        3000
    );
    // The copy is a database of its own: writing to it leaves the original alone.
    copy.put(b"only-in-copy", b"4").unwrap();
    copy.compact_all().unwrap();
    copy.close().unwrap();
    assert_eq!(db.get(b"only-in-copy").unwrap(), None);
    assert_eq!(db.range::<&[u8], _>(..).count(), 3000 + 2 - 2 + 1);
}

#[test]
fn a_checkpoint_beside_a_writer_has_whole_batches_across_families() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path().join("db"), options()).unwrap());
    let index = db.create_cf("index", CfOptions::default()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, index, stop) = (db.clone(), index.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let key = format!("b{i:07}");
                let mut batch = WriteBatch::new();
                batch
                    .put(key.as_bytes(), [7; 200])
                    .put_cf(&index, key.as_bytes(), b"");
                db.write(batch, &WriteOptions::default()).unwrap();
                i += 1;
            }
            i
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    let cps: Vec<_> = (0..3).map(|n| dir.path().join(format!("cp{n}"))).collect();
    for cp in &cps {
        db.checkpoint(cp).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    let mut previous = 0;
    for cp in &cps {
        let copy = Db::open_cf(cp, options(), families()).unwrap();
        let index = copy.cf("index").unwrap();
        let keys: Vec<Vec<u8>> = copy.range::<&[u8], _>(..).map(|kv| kv.unwrap().0).collect();
        let indexed: Vec<Vec<u8>> = copy
            .range_cf::<&[u8], _>(&index, ..)
            .unwrap()
            .map(|kv| kv.unwrap().0)
            .collect();
        // A prefix of the batches, each whole in both families, growing from one
        // checkpoint to the next.
        assert_eq!(keys, indexed, "{}", cp.display());
        let expected: Vec<Vec<u8>> = (0..keys.len() as u32)
            .map(|i| format!("b{i:07}").into_bytes())
            .collect();
        assert_eq!(keys, expected, "{}", cp.display());
        assert!(keys.len() >= previous && keys.len() <= written as usize);
        previous = keys.len();
    }
    assert!(previous > 0);
}

#[test]
fn without_a_flush_the_checkpoint_replays_the_copied_wals() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    let index = db.create_cf("index", CfOptions::default()).unwrap();
    db.put(b"flushed", b"1").unwrap();
    db.flush().unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"in-wal", b"2").put_cf(&index, b"in-wal", b"3");
    db.write(batch, &WriteOptions::default()).unwrap();
    let cp = dir.path().join("cp");
    db.checkpoint_opt(&cp, u64::MAX).unwrap();
    assert!(
        std::fs::read_dir(&cp).unwrap().any(|e| e
            .unwrap()
            .path()
            .extension()
            .is_some_and(|x| x == "log")),
        "the WAL was copied"
    );
    let copy = Db::open_cf(&cp, options(), families()).unwrap();
    let copy_index = copy.cf("index").unwrap();
    assert_eq!(copy.get(b"flushed").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(copy.get(b"in-wal").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(
        copy.get_cf(&copy_index, b"in-wal").unwrap().as_deref(),
        Some(&b"3"[..])
    );
    assert_eq!(copy.recovery_report().entries, 2);
}

#[test]
fn a_checkpoint_into_an_existing_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    let cases = [
        (dir.path().to_path_buf(), "already exists"),
        (dir.path().join("db"), "already exists"),
    ];
    for (target, says) in cases {
        let e = db.checkpoint(&target).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains(says), "{e}");
    }
    std::fs::create_dir(dir.path().join("cp.tmp")).unwrap();
    let e = db.checkpoint(dir.path().join("cp")).unwrap_err();
    assert!(e.to_string().contains("interrupted checkpoint"), "{e}");
    let ro = {
        db.close().unwrap();
        Db::open_read_only(dir.path().join("db"), options()).unwrap()
    };
    let e = ro.checkpoint(dir.path().join("cp2")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
}
