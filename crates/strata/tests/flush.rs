//! Flushes: memtables become level-0 tables, WALs go away, reads go through tables, and a
//! crash after any completed flush (a copy of the directory) recovers everything.

use std::fs;
use std::path::Path;

use strata::{Db, ErrorKind, Options, PrepopulateBlockCache, ReadOptions, WriteOptions};

/// Small memtables; compaction off, so that flushed tables stay in L0 where the tests look.
fn small(dir: &Path) -> (Db, Options) {
    let mut opts = Options::default();
    opts.create_if_missing = true;
    opts.write_buffer_size = 32 << 10;
    opts.block_size = 512;
    opts.disable_auto_compactions = true;
    (Db::open(dir, opts.clone()).unwrap(), opts)
}

fn files(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(ext))
        .collect();
    v.sort();
    v
}

/// Copies a live database directory (all but LOCK), as a crash would leave it.
fn crash_copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

#[test]
fn writes_flow_into_level0_tables_and_old_wals_are_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let (db, opts) = small(dir.path());
    for i in 0..5000 {
        db.put(key(i), format!("value{i}").repeat(5).as_bytes())
            .unwrap();
    }
    db.flush().unwrap();
    let stats = db.stats();
    assert!(stats.flushes >= 5, "{stats:?}");
    assert_eq!(
        db.property("strata.num-files-at-level0"),
        Some(stats.level_files[0].to_string())
    );
    assert!(stats.level_files[0] >= 5);
    assert_eq!(files(dir.path(), ".sst").len() as u64, stats.level_files[0]);
    assert_eq!(
        files(dir.path(), ".log").len(),
        1,
        "only the active WAL remains"
    );
    assert!(stats.io.written(strata::fs::IoClass::Flush) > 0);
    for i in (0..5000).step_by(7) {
        assert_eq!(
            db.get(key(i)).unwrap().unwrap(),
            format!("value{i}").repeat(5).into_bytes()
        );
    }
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.recovery_report().batches, 0, "nothing left to replay");
    let n = db.range::<&[u8], _>(..).count();
    assert_eq!(n, 5000);
}

#[test]
fn deletes_in_newer_tables_hide_older_values() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = small(dir.path());
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"2").unwrap();
    db.flush().unwrap();
    let snap = db.snapshot();
    db.delete(b"a").unwrap();
    db.put(b"b", b"3").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"3"[..]));
    assert_eq!(db.get_at(&snap, b"a").unwrap().as_deref(), Some(&b"1"[..]));
    let all: Vec<_> = db.range::<&[u8], _>(..).map(|kv| kv.unwrap()).collect();
    assert_eq!(all, vec![(b"b".to_vec(), b"3".to_vec())]);
    let mut at_snap = ReadOptions::default();
    at_snap.snapshot = Some(snap);
    let mut it = db.iter(&at_snap);
    it.seek_to_last();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"2"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"a"[..], &b"1"[..]));
}

#[test]
fn a_crash_after_flush_keeps_writes_that_skipped_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (db, opts) = small(dir.path());
    let mut no_wal = WriteOptions::default();
    no_wal.disable_wal = true;
    for i in 0..300 {
        db.put_opt(key(i), b"unlogged", &no_wal).unwrap();
    }
    db.flush().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("crashed");
    crash_copy(dir.path(), &copy);
    let crashed = Db::open(&copy, opts.clone()).unwrap();
    assert_eq!(crashed.range::<&[u8], _>(..).count(), 300);
    drop(crashed);
    drop(db);
}

#[test]
fn close_flushes_writes_that_skipped_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (db, opts) = small(dir.path());
    let mut no_wal = WriteOptions::default();
    no_wal.disable_wal = true;
    db.put_opt(b"k", b"v", &no_wal).unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn orphan_tables_and_stale_files_are_removed_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let (db, opts) = small(dir.path());
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    fs::write(dir.path().join("000999.sst"), b"half-written table").unwrap();
    fs::write(dir.path().join("CURRENT.tmp"), b"MANIFEST-000001").unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    assert!(!dir.path().join("000999.sst").exists());
    assert!(!dir.path().join("CURRENT.tmp").exists());
    assert_eq!(
        files(dir.path(), "")
            .iter()
            .filter(|n| n.starts_with("MANIFEST-"))
            .count(),
        1
    );
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn missing_keys_are_answered_by_bloom_filters() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = small(dir.path());
    for i in 0..2000 {
        db.put(key(i * 2), b"v").unwrap();
    }
    db.flush().unwrap();
    let before = db.stats();
    for i in 0..2000 {
        assert_eq!(db.get(key(i * 2 + 1)).unwrap(), None);
    }
    let after = db.stats();
    let checks = after.bloom_checks - before.bloom_checks;
    let negatives = after.bloom_negatives - before.bloom_negatives;
    // Keys past the last table key skip the table without a filter check.
    assert!(checks >= 1990, "{checks}");
    assert!(
        negatives as f64 >= checks as f64 * 0.95,
        "{negatives} of {checks}"
    );
}

#[test]
fn a_damaged_table_is_reported_with_its_name_never_as_wrong_data() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing = true;
    opts.block_cache_size = 0;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..500 {
        db.put(key(i), b"the value").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let table = dir.path().join(&files(dir.path(), ".sst")[0]);
    let mut bytes = fs::read(&table).unwrap();
    bytes[100] ^= 0x40; // inside the first data block
    fs::write(&table, &bytes).unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    let err = db.get(key(0)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(err.to_string().contains(".sst"), "{err}");
    assert!(err.to_string().contains("offset 0"), "{err}");
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
}

/// Reads every third key and some missing ones twice; returns the block cache's
/// (hits, misses) for data, index and filter blocks.
fn read_with_cache(cache_bytes: usize) -> [(u64, u64); 3] {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing = true;
    opts.write_buffer_size = 64 << 10;
    opts.block_cache_size = cache_bytes;
    opts.cache_index_and_filter_blocks = true;
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..5000 {
        db.put(key(i), format!("value{i}").as_bytes()).unwrap();
    }
    db.flush().unwrap();
    for round in 0..2 {
        for i in (0..5000).step_by(3) {
            let got = db.get(key(i)).unwrap();
            assert_eq!(got, Some(format!("value{i}").into_bytes()), "round {round}");
            assert_eq!(db.get(key(i + 100_000)).unwrap(), None);
        }
    }
    assert!(db.property("strata.stats").unwrap().contains("index"));
    db.stats().block_cache_by_kind
}

#[test]
fn index_and_filter_blocks_can_live_in_the_block_cache() {
    // 2 KiB over 16 shards holds no index or filter block: every use reads it again.
    let [_, index, filter] = read_with_cache(2 << 10);
    assert!(index.1 > 1000 && filter.1 > 1000, "{index:?} {filter:?}");
    // 64 MiB holds everything: after open put them in the cache, every use is a hit.
    let [_, index, filter] = read_with_cache(64 << 20);
    assert_eq!((index.1, filter.1), (0, 0));
    assert!(index.0 > 1000 && filter.0 > 1000, "{index:?} {filter:?}");
}

/// With `prepopulate_block_cache = FlushOnly` a flush leaves the data blocks it wrote in the
/// block cache: reading every key back then reads no data block from the file. Without it
/// (or without a block cache, where there is nothing to fill) the reads miss.
#[test]
fn a_flush_can_leave_its_blocks_in_the_block_cache() {
    #[rustfmt::skip]
    let cases = [
        // (prepopulate, block cache bytes, data blocks read after the flush)
        (PrepopulateBlockCache::FlushOnly, 8 << 20, false),
        (PrepopulateBlockCache::Disable, 8 << 20, true),
        (PrepopulateBlockCache::FlushOnly, 0, true),
    ];
    for (prepopulate, cache, misses_expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (db, mut opts) = small(dir.path());
        db.close().unwrap();
        opts.prepopulate_block_cache = prepopulate;
        opts.block_cache_size = cache;
        opts.write_buffer_size = 4 << 20;
        let db = Db::open(dir.path(), opts).unwrap();
        for i in 0..2000u32 {
            db.put(format!("key{i:05}"), format!("value{i}")).unwrap();
        }
        db.flush().unwrap();
        let before = db.stats().block_cache_by_kind[0].1;
        for i in 0..2000u32 {
            let got = db.get(format!("key{i:05}")).unwrap();
            assert_eq!(got, Some(format!("value{i}").into_bytes()));
        }
        let misses = db.stats().block_cache_by_kind[0].1 - before;
        let case = format!("{prepopulate:?}, cache {cache}: {misses} data blocks read");
        assert_eq!(misses > 0, misses_expected, "{case}");
        db.close().unwrap();
    }
}
