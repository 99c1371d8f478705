//! Key-value separation through the public API: large values go to blob files at flush and
//! compaction and read back through gets, iterators (both directions), snapshots, merges and
//! compaction filters; overwritten values become garbage and their blob files go once no
//! table refers to them; garbage collection moves live values out of the oldest files; a
//! damaged or missing blob file is a corruption error naming it, never a wrong value; a
//! checkpoint carries the blob files. Values put in blob files as they are written are
//! written once, come back after a crash (a torn file ends the replay), and go with a
//! checkpoint and through a repair.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use strata::{
    CompactionFilter, Db, EntryKind, ErrorKind, FilterDecision, Options, ReadOptions, StringAppend,
};

/// Options that separate values of `min` bytes or more, with small blob files.
fn separating(min: u64) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.enable_blob_files = true;
    options.min_blob_size = min;
    options.blob_file_size = 16 << 10;
    options.disable_auto_compactions = true;
    options
}

/// [`separating`], with garbage collection moving the live values of every blob file a
/// compaction meets.
fn collecting_all(min: u64) -> Options {
    let mut options = separating(min);
    options.enable_blob_garbage_collection = true;
    options.blob_garbage_collection_age_cutoff = 1.0;
    options
}

/// The numbers of the blob files in `dir`, ascending.
fn blob_files(dir: &Path) -> Vec<u64> {
    let mut numbers: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".blob")?.parse().ok()
        })
        .collect();
    numbers.sort_unstable();
    numbers
}

/// A value of `len` bytes that names its key and version.
fn value(key: u32, version: u32, len: usize) -> Vec<u8> {
    let stem = format!("k{key:05}v{version}-");
    stem.bytes().cycle().take(len.max(stem.len())).collect()
}

fn key(k: u32) -> Vec<u8> {
    format!("k{k:05}").into_bytes()
}

/// Every key and value, read forward and backward, against `want`.
fn check_scans(db: &Db, want: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut forward = Vec::new();
    while it.valid() {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    let expected: Vec<_> = want.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(forward.len(), expected.len());
    assert!(forward == expected, "forward scan differs");
    it.seek_to_last();
    let mut backward = Vec::new();
    while it.valid() {
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    backward.reverse();
    assert!(backward == expected, "backward scan differs");
    for (k, v) in want {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "get {k:?}");
    }
}

#[test]
fn large_values_live_in_blob_files_and_read_back_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), separating(100)).unwrap();
    let mut want = BTreeMap::new();
    for k in 0..400 {
        // Every third value stays in the table.
        let len = if k % 3 == 0 {
            20
        } else {
            100 + (k as usize * 37) % 900
        };
        want.insert(key(k), value(k, 0, len));
        db.put(key(k), value(k, 0, len)).unwrap();
    }
    check_scans(&db, &want); // from the memtable
    db.flush().unwrap();
    let files = blob_files(dir.path());
    assert!(files.len() >= 2, "blob files cut at 16 KiB: {files:?}");
    let property = |name: &str| db.property(name).unwrap().parse::<u64>().unwrap();
    assert_eq!(property("strata.num-blob-files"), files.len() as u64);
    let on_disk: u64 = files
        .iter()
        .map(|n| {
            std::fs::metadata(dir.path().join(format!("{n:06}.blob")))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(property("strata.total-blob-file-size"), on_disk);
    assert_eq!(property("strata.live-blob-file-garbage-size"), 0);
    check_scans(&db, &want);
    // Turning to the other direction in the middle of the keys.
    let mut it = db.iter(&ReadOptions::default());
    it.seek(key(200));
    assert_eq!(it.value(), want[&key(200)].as_slice());
    it.prev();
    assert_eq!(it.value(), want[&key(199)].as_slice());
    it.next();
    it.next();
    assert_eq!(it.value(), want[&key(201)].as_slice());
    drop(it);
    db.compact_range(None, None).unwrap();
    // A compaction that drops nothing and moves nothing keeps the references.
    assert_eq!(blob_files(dir.path()), files);
    check_scans(&db, &want);
    db.close().unwrap();
    let db = Db::open(dir.path(), separating(100)).unwrap();
    check_scans(&db, &want);
    // Separation off: the values already separated still read back.
    db.close().unwrap();
    let mut plain = separating(100);
    plain.enable_blob_files = false;
    let db = Db::open(dir.path(), plain).unwrap();
    check_scans(&db, &want);
    db.close().unwrap();
}

#[test]
fn overwritten_values_leave_their_blob_files_once_no_table_refers_to_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), separating(64)).unwrap();
    for k in 0..200 {
        db.put(key(k), value(k, 0, 500)).unwrap();
    }
    db.flush().unwrap();
    let first = blob_files(dir.path());
    let snapshot = db.snapshot();
    let mut want = BTreeMap::new();
    for k in 0..200 {
        db.put(key(k), value(k, 1, 300)).unwrap();
        want.insert(key(k), value(k, 1, 300));
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    // The snapshot keeps the old versions, and so their files.
    for k in [0, 99, 199] {
        assert_eq!(
            db.get_at(&snapshot, key(k)).unwrap(),
            Some(value(k, 0, 500))
        );
    }
    let garbage = db.property("strata.live-blob-file-garbage-size").unwrap();
    assert_eq!(
        garbage, "0",
        "the snapshot's versions are still referred to"
    );
    assert!(first.iter().all(|n| blob_files(dir.path()).contains(n)));
    drop(snapshot);
    // A table across the whole range brings the bottom level's file into a compaction.
    for k in [0, 199] {
        db.put(key(k), value(k, 2, 300)).unwrap();
        want.insert(key(k), value(k, 2, 300));
    }
    settle(&db, &mut want);
    let now = blob_files(dir.path());
    assert!(
        first.iter().all(|n| !now.contains(n)),
        "old files {first:?} still there: {now:?}"
    );
    check_scans(&db, &want);
    // Deleted keys drop their references too.
    for k in 0..200 {
        db.delete(key(k)).unwrap();
    }
    settle(&db, &mut want);
    assert_eq!(blob_files(dir.path()), Vec::<u64>::new());
    db.close().unwrap();
}

/// Flushes, compacts everything, and flushes once more: a compaction deletes what it made
/// obsolete only once no version in use names it, and the manual compaction's caller holds
/// one until it returns; the next job's purge (or the close) deletes them.
fn settle(db: &Db, want: &mut BTreeMap<Vec<u8>, Vec<u8>>) {
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.put(b"~", b"").unwrap();
    want.insert(b"~".to_vec(), Vec::new());
    db.flush().unwrap();
}

#[test]
fn garbage_collection_moves_live_values_out_of_the_oldest_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = collecting_all(64);
    let db = Db::open(dir.path(), options.clone()).unwrap();
    let mut want = BTreeMap::new();
    for k in 0..300 {
        db.put(key(k), value(k, 0, 400)).unwrap();
        want.insert(key(k), value(k, 0, 400));
    }
    db.flush().unwrap();
    // Overwrite one key in ten: without collection, the old files would stay (90% live).
    for k in (0..300).step_by(10) {
        db.put(key(k), value(k, 1, 400)).unwrap();
        want.insert(key(k), value(k, 1, 400));
    }
    db.flush().unwrap();
    let before = blob_files(dir.path());
    settle(&db, &mut want);
    let after = blob_files(dir.path());

    let newest_before = *before.last().unwrap();
    assert!(
        after.iter().all(|&n| n > newest_before),
        "every value moved to new files: {before:?} -> {after:?}"
    );
    check_scans(&db, &want);
    db.close().unwrap();
    // With separation turned off, collection brings the values back into the tables.
    options.enable_blob_files = false;
    let db = Db::open(dir.path(), options).unwrap();
    // Puts at both ends bring the whole bottom level into the compaction.
    for k in [0, 299] {
        db.put(key(k), &want[&key(k)]).unwrap();
    }
    settle(&db, &mut want);
    assert_eq!(blob_files(dir.path()), Vec::<u64>::new());
    check_scans(&db, &want);
    db.close().unwrap();
}

/// A compaction that reads set off (merging L0 once gets paid for it) moves no values out of
/// old blob files, however old: its cost was judged on the tables alone.
#[test]
fn a_read_triggered_compaction_moves_no_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = collecting_all(64);
    options.disable_auto_compactions = false;
    options.read_triggered_compaction = true;
    let db = Db::open(dir.path(), options).unwrap();
    let mut want = BTreeMap::new();
    for k in 0..3000 {
        db.put(key(k), value(k, 0, 400)).unwrap();
        want.insert(key(k), value(k, 0, 400));
    }
    db.compact_range(None, None).unwrap();
    // One key in 20: merging the L0 file would rewrite 20 times its bytes below, more than
    // an idle family's L0 is merged for, so only reads merge it.
    for k in (0..3000).step_by(20) {
        db.put(key(k), value(k, 1, 400)).unwrap();
        want.insert(key(k), value(k, 1, 400));
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let l0 = |db: &Db| db.stats().level_files[0];
    assert_eq!(l0(&db), 1, "one L0 file over the bottom level");
    let before = blob_files(dir.path());

    let mut round = 0;
    while l0(&db) > 0 {
        assert!(round < 50_000, "reads never merged L0");
        for i in 0..1000u32 {
            let k = (round + i) * 7 % 3000;
            assert_eq!(db.get(key(k)).unwrap().as_ref(), want.get(&key(k)));
        }
        round += 1000;
        db.wait_for_compactions().unwrap();
    }
    let after = blob_files(dir.path());
    assert!(
        after.iter().all(|n| before.contains(n)),
        "the read-triggered compaction wrote blob files: {before:?} -> {after:?}"
    );
    check_scans(&db, &want);
}

/// The values of blob files that garbage collection deleted leave the block cache with them
/// (`uncache_aggressiveness` above 0), and stay there until evicted at 0.
#[test]
fn values_of_deleted_blob_files_leave_the_cache() {
    let usage_after_collection = |aggressiveness: u32| {
        let dir = tempfile::tempdir().unwrap();
        let mut options = collecting_all(64);
        options.block_cache_size = 64 << 20;
        options.uncache_aggressiveness = aggressiveness;
        let db = Db::open(dir.path(), options).unwrap();
        let mut want = BTreeMap::new();
        for k in 0..300 {
            db.put(key(k), value(k, 0, 4000)).unwrap();
            want.insert(key(k), value(k, 0, 4000));
        }
        db.flush().unwrap();
        for (k, v) in &want {
            assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
        }
        // Some garbage, so that the collection has a reason to run.
        for k in (0..300).step_by(10) {
            db.put(key(k), value(k, 1, 4000)).unwrap();
            want.insert(key(k), value(k, 1, 4000));
        }
        db.flush().unwrap();
        let before = blob_files(dir.path());
        let cached = db.stats().block_cache_usage;
        assert!(cached >= 300 * 4000, "{cached} bytes cached");
        settle(&db, &mut want);
        let after = blob_files(dir.path());
        assert!(
            before.iter().all(|n| !after.contains(n)),
            "{before:?} -> {after:?}"
        );
        let usage = db.stats().block_cache_usage;
        check_scans(&db, &want);
        db.close().unwrap();
        usage
    };
    let kept = usage_after_collection(0);
    let erased = usage_after_collection(300);
    // The 1.2 MB of values read before the collection moved them: kept at 0, gone at 300.
    assert!(kept >= 300 * 4000, "{kept} bytes cached without erasing");
    assert!(erased < 300 * 4000 / 4, "{erased} bytes still cached");
}

#[test]
fn merges_onto_separated_values_read_and_compact() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = separating(32);
    options.merge_operator = Some(Arc::new(StringAppend::new(b",")));
    let db = Db::open(dir.path(), options).unwrap();
    let base = value(1, 0, 200);
    db.put(key(1), &base).unwrap();
    db.flush().unwrap();
    db.merge(key(1), b"x").unwrap();
    db.merge(key(1), b"y").unwrap();
    let merged = [base.as_slice(), b",x,y"].concat();
    assert_eq!(db.get(key(1)).unwrap(), Some(merged.clone()));
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    assert_eq!(it.value(), merged.as_slice());
    it.seek_to_last();
    assert_eq!(it.value(), merged.as_slice());
    drop(it);
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(key(1)).unwrap(), Some(merged));
    db.close().unwrap();
}

/// Upper-cases every value it sees and removes keys ending in 7.
struct Shout;

impl CompactionFilter for Shout {
    fn name(&self) -> &str {
        "shout"
    }
    fn filter(
        &self,
        _level: usize,
        key: &[u8],
        _kind: EntryKind,
        value: &[u8],
    ) -> Result<FilterDecision, String> {
        Ok(match key.last() {
            Some(b'7') => FilterDecision::Remove,
            _ if value.starts_with(b"k") => FilterDecision::ChangeValue(value.to_ascii_uppercase()),
            _ => FilterDecision::Keep,
        })
    }
}

#[test]
fn a_compaction_filter_sees_separated_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = separating(64);
    options.compaction_filter = Some(Arc::new(Shout));
    let db = Db::open(dir.path(), options).unwrap();
    for k in 0..50 {
        db.put(key(k), value(k, 0, 300)).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    for k in 0..50 {
        let got = db.get(key(k)).unwrap();
        match k % 10 {
            7 => assert_eq!(got, None),
            _ => assert_eq!(got, Some(value(k, 0, 300).to_ascii_uppercase())),
        }
    }
    db.close().unwrap();
}

#[test]
fn a_damaged_or_missing_blob_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), separating(64)).unwrap();
    for k in 0..20 {
        db.put(key(k), value(k, 0, 300)).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let files = blob_files(dir.path());
    assert_eq!(files.len(), 1);
    let path = dir.path().join(format!("{:06}.blob", files[0]));
    let mut bytes = std::fs::read(&path).unwrap();
    // A byte in the middle of the records: one value's checksum fails.
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let db = Db::open(dir.path(), separating(64)).unwrap();
    let mut failed = 0;
    for k in 0..20 {
        match db.get(key(k)) {
            Ok(v) => assert_eq!(v, Some(value(k, 0, 300)), "never a wrong value"),
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
                assert!(e.to_string().contains(".blob"), "{e}");
                failed += 1;
            }
        }
    }
    assert_eq!(failed, 1);
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
    drop(it);
    db.close().unwrap();
    std::fs::remove_file(&path).unwrap();
    let db = Db::open(dir.path(), separating(64)).unwrap();
    let e = db.get(key(3)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("missing") && text.contains("k00003"),
        "{text}"
    );
    db.close().unwrap();
}

#[test]
fn a_checkpoint_carries_the_blob_files() {
    let dir = tempfile::tempdir().unwrap();
    let copy = tempfile::tempdir().unwrap();
    let target = copy.path().join("cp");
    let db = Db::open(dir.path(), separating(64)).unwrap();
    let mut want = BTreeMap::new();
    for k in 0..100 {
        db.put(key(k), value(k, 0, 250)).unwrap();
        want.insert(key(k), value(k, 0, 250));
    }
    db.flush().unwrap();
    db.checkpoint(&target).unwrap();
    db.close().unwrap();
    assert_eq!(blob_files(&target), blob_files(dir.path()));
    let db = Db::open(&target, separating(64)).unwrap();
    check_scans(&db, &want);
    db.close().unwrap();
}

#[test]
fn orphan_blob_files_are_removed_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), separating(64)).unwrap();
    db.put(key(1), value(1, 0, 100)).unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let live = blob_files(dir.path());
    // A blob file a crashed job left behind, numbered below the next file number.
    let orphan = dir.path().join(format!("{:06}.blob", live[0] + 1));
    std::fs::write(&orphan, b"half a blob file").unwrap();
    let db = Db::open(dir.path(), separating(64)).unwrap();
    assert!(!orphan.exists());
    assert_eq!(blob_files(dir.path()), live);
    assert_eq!(db.get(key(1)).unwrap(), Some(value(1, 0, 100)));
    db.close().unwrap();
}

/// [`separating`] with values put in blob files as they are written.
fn separating_at_write(min: u64) -> Options {
    let mut options = separating(min);
    options.blob_separation_at_write = true;
    options.blob_file_size = 1 << 20;
    options
}

/// Copies a live database directory (all but LOCK), as a crash of the process would leave it
/// (a file that background work deleted meanwhile is not copied).
fn crash_copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            match std::fs::copy(e.path(), to.join(e.file_name())) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                copied => {
                    copied.unwrap();
                }
            }
        }
    }
}

/// Bytes of the WALs in `dir`.
fn wal_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

/// Puts keys `keys` at `version` with 500-byte values (every tenth a small one).
fn put_versions(
    db: &Db,
    keys: std::ops::Range<u32>,
    version: u32,
    want: &mut BTreeMap<Vec<u8>, Vec<u8>>,
) {
    for k in keys {
        let len = if k % 10 == 0 { 40 } else { 500 };
        db.put(key(k), value(k, version, len)).unwrap();
        want.insert(key(k), value(k, version, len));
    }
}

#[test]
fn values_separated_at_write_are_written_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), separating_at_write(100)).unwrap();
    let mut want = BTreeMap::new();
    put_versions(&db, 0..200, 0, &mut want);
    // The WAL holds references, the values are in the one blob file, not yet in the tree.
    let written = blob_files(dir.path());
    assert_eq!(written.len(), 1);
    assert!(
        wal_bytes(dir.path()) < 200 * 100,
        "{}",
        wal_bytes(dir.path())
    );
    assert_eq!(db.property("strata.num-blob-files").unwrap(), "0");
    check_scans(&db, &want);
    // A version overwritten in the memtable is the file's garbage once it is flushed.
    put_versions(&db, 1..2, 1, &mut want);
    db.flush().unwrap();
    assert_eq!(
        blob_files(dir.path()),
        written,
        "the flush wrote no value again"
    );
    assert_eq!(db.property("strata.num-blob-files").unwrap(), "1");
    assert_eq!(
        db.property("strata.live-blob-file-garbage-size").unwrap(),
        "514",
        "the overwritten 500-byte value's record"
    );
    check_scans(&db, &want);
    put_versions(&db, 100..300, 2, &mut want);
    settle(&db, &mut want);
    check_scans(&db, &want);
    db.close().unwrap();
    let db = Db::open(dir.path(), separating_at_write(100)).unwrap();
    check_scans(&db, &want);
    db.close().unwrap();
}

/// Writers put their values in blob files before they queue, concurrently with the WAL
/// stage of the group ahead; a memtable switch in between (a 64 KiB write buffer switches
/// every hundred or so puts) makes the leader write the value again into the new memtable's
/// file. Every value stays right through that, synced writes, batches, flushes, a crash,
/// compactions with garbage collection (those of the settle: compactions are manual here, so
/// that the crash copy is not taken while one deletes files), and a reopen.
#[test]
fn values_written_ahead_by_many_writers_stay_right_across_memtable_switches() {
    const THREADS: u32 = 4;
    const KEYS: u32 = 300;
    const VERSIONS: u32 = 3;
    let dir = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    let mut options = separating_at_write(100);
    options.write_buffer_size = 64 << 10;
    options.blob_file_size = 32 << 10;
    options.enable_blob_garbage_collection = true;
    let db = Arc::new(Db::open(dir.path(), options.clone()).unwrap());
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut want = BTreeMap::new();
                for version in 0..VERSIONS {
                    for i in 0..KEYS {
                        let k = t * 10_000 + i;
                        let len = if k % 10 == 0 {
                            40
                        } else {
                            300 + (k % 7) as usize * 50
                        };
                        let mut batch = strata::WriteBatch::new();
                        batch.put(key(k), value(k, version, len));
                        want.insert(key(k), value(k, version, len));
                        // Every fifth write is a batch with a second, large, value.
                        if i % 5 == 0 {
                            let other = k + 5_000;
                            batch.put(key(other), value(other, version, 700));
                            want.insert(key(other), value(other, version, 700));
                        }
                        let mut write = strata::WriteOptions::default();
                        write.sync = i % 50 == 0;
                        db.write(batch, &write).unwrap();
                    }
                }
                want
            })
        })
        .collect();
    let mut want = BTreeMap::new();
    for writer in writers {
        want.extend(writer.join().unwrap());
    }
    check_scans(&db, &want);
    // The copy stands for a crash only while no background work deletes files (a flush
    // deletes the WAL an older manifest in the copy still needs): the flushes of the
    // memtables the writers filled end first; the active one keeps its values' references.
    db.wait_for_compactions().unwrap();
    let crashed = copies.path().join("crashed");
    crash_copy(dir.path(), &crashed);
    settle(&db, &mut want);
    check_scans(&db, &want);
    let db = Arc::into_inner(db).unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), options.clone()).unwrap();
    check_scans(&db, &want);
    db.close().unwrap();

    want.remove(b"~".as_slice());
    let db = Db::open(&crashed, options).unwrap();
    assert!(db.recovery_report().corruption.is_none());
    check_scans(&db, &want);
    db.close().unwrap();
}

#[test]
fn values_separated_at_write_come_back_after_a_crash_and_a_torn_file_ends_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    let (db, mut want) = flushed_and_not(dir.path());
    let crashed = copies.path().join("crashed");
    crash_copy(dir.path(), &crashed);
    db.close().unwrap();

    let unflushed = *blob_files(&crashed).last().unwrap();
    // A read-only open replays the same references, and deletes nothing.
    let db = Db::open_read_only(&crashed, separating_at_write(100)).unwrap();
    check_scans(&db, &want);
    db.close().unwrap();
    assert!(blob_files(&crashed).contains(&unflushed));
    let db = Db::open(&crashed, separating_at_write(100)).unwrap();
    assert_eq!(db.recovery_report().entries, 100);
    assert!(db.recovery_report().corruption.is_none());
    check_scans(&db, &want);
    // The recovered memtable's flush writes its values anew; the file the WAL named goes
    // with the WAL.
    db.flush().unwrap();
    assert!(!blob_files(&crashed).contains(&unflushed));
    check_scans(&db, &want);
    db.close().unwrap();

    // The machine stopped before the last value reached the blob file, but after its WAL
    // record did: the replay ends at that record.
    let torn = copies.path().join("torn");
    let db = Db::open(dir.path(), separating_at_write(100)).unwrap();
    db.flush().unwrap();
    let before = blob_files(dir.path());
    put_versions(&db, 200..210, 0, &mut want);
    crash_copy(dir.path(), &torn);
    db.close().unwrap();
    let new: Vec<u64> = blob_files(&torn)
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect();
    assert_eq!(new.len(), 1, "one file of values written at put");
    let file = blob_path_in(&torn, new[0]);
    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    let db = Db::open(&torn, separating_at_write(100)).unwrap();
    let report = db.recovery_report();
    let corruption = report.corruption.clone().unwrap();
    assert!(corruption.contains(".blob"), "{corruption}");
    assert_eq!(report.dropped_records, 1);
    want.remove(&key(209));
    check_scans(&db, &want);
    db.close().unwrap();
}

/// A database in `dir` separating at write with 100 keys flushed and 100 more (half of them
/// overwrites) in its memtable; what it holds.
fn flushed_and_not(dir: &Path) -> (Db, BTreeMap<Vec<u8>, Vec<u8>>) {
    let db = Db::open(dir, separating_at_write(100)).unwrap();
    let mut want = BTreeMap::new();
    put_versions(&db, 0..100, 0, &mut want);
    db.flush().unwrap();
    put_versions(&db, 50..150, 1, &mut want);
    (db, want)
}

fn blob_path_in(dir: &Path, number: u64) -> std::path::PathBuf {
    dir.join(format!("{number:06}.blob"))
}

#[test]
fn a_checkpoint_and_a_repair_carry_values_separated_at_write() {
    let dir = tempfile::tempdir().unwrap();
    let copies = tempfile::tempdir().unwrap();
    let (db, want) = flushed_and_not(dir.path());
    let target = copies.path().join("cp");
    // Flushing only if the WALs hold a megabyte: the checkpoint copies them, and the blob
    // file they name.
    db.checkpoint_opt(&target, 1 << 20).unwrap();
    let crashed = copies.path().join("crashed");
    crash_copy(dir.path(), &crashed);
    db.close().unwrap();
    let db = Db::open(&target, separating_at_write(100)).unwrap();
    assert_eq!(db.recovery_report().entries, 100);
    check_scans(&db, &want);
    db.close().unwrap();

    strata::repair(&crashed, &separating_at_write(100)).unwrap();
    let db = Db::open(&crashed, separating_at_write(100)).unwrap();
    check_scans(&db, &want);
    db.close().unwrap();
}

#[test]
fn a_synced_write_makes_the_values_other_families_put_before_it_durable() {
    use strata::fs::fault::FaultFs;
    use strata::WriteOptions;
    // The synced write's own value separated too, or small enough to stay in the WAL record.
    for synced_len in [500, 40] {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultFs::new();
        let mut options = separating_at_write(100);
        options.fs = Arc::new(fs.clone());
        let db = Db::open(dir.path(), options.clone()).unwrap();
        let other = db.create_cf("other", options.cf_options()).unwrap();
        db.put(key(1), value(1, 0, 500)).unwrap();
        let mut synced = WriteOptions::default();
        synced.sync = true;
        db.put_cf_opt(&other, key(2), value(2, 0, synced_len), &synced)
            .unwrap();
        // The process dies here, then the machine: what was not synced is gone.
        fs.crash_at(fs.ops() + 1);
        drop(other);
        drop(db);
        fs.power_loss().unwrap();
        fs.restart();
        let mut reopen = separating_at_write(100);
        reopen.fs = Arc::new(fs.clone());
        let families = [("other", reopen.cf_options())];
        let db = Db::open_cf(dir.path(), reopen, families).unwrap();
        assert!(
            db.recovery_report().corruption.is_none(),
            "{synced_len}: {:?}",
            db.recovery_report()
        );
        assert_eq!(db.get(key(1)).unwrap(), Some(value(1, 0, 500)));
        let other = db.cf("other").unwrap();
        assert_eq!(
            db.get_cf(&other, key(2)).unwrap(),
            Some(value(2, 0, synced_len))
        );
        db.close().unwrap();
    }
}
