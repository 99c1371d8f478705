//! Bulk loading: tables written by `SstWriter` and added with `Db::ingest`. Ingested keys read
//! as newer than every earlier write and older than every later one, snapshots taken before
//! do not see them, every refusal leaves the database and its directory as they were, and
//! an ingest survives reopens, crashes at each of its file operations, and compactions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::fs::fault::FaultFs;
use strata::internals::Rng;
use strata::{
    CfOptions, CompactionStyle, Comparator, Db, ErrorKind, IngestOptions, Options, ReadOptions,
    ReverseBytewiseComparator, Snapshot, SstWriter, UniversalOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options
}

/// One entry of a file to write.
#[derive(Clone, Debug)]
enum Op {
    Put(&'static str, &'static str),
    Delete(&'static str),
    DeleteRange(&'static str, &'static str),
}

fn write_sst(path: &Path, options: &Options, ops: &[Op]) -> PathBuf {
    let mut w = SstWriter::create(path, options).unwrap();
    for op in ops {
        match op {
            Op::Put(k, v) => w.put(k.as_bytes(), v.as_bytes()).unwrap(),
            Op::Delete(k) => w.delete(k.as_bytes()).unwrap(),
            Op::DeleteRange(b, e) => w.delete_range(b.as_bytes(), e.as_bytes()).unwrap(),
        }
    }
    w.finish().unwrap();
    path.to_path_buf()
}

fn contents(db: &Db, snapshot: Option<&Snapshot>) -> Model {
    let mut read = ReadOptions::default();
    read.snapshot = snapshot.cloned();
    let mut it = db.iter(&read);
    it.seek_to_first();
    let mut out = Model::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    out
}

fn model(pairs: &[(&str, &str)]) -> Model {
    pairs
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

/// The `.sst` files of a directory, sorted.
fn tables(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    names.sort();
    names
}

fn files_per_level(db: &Db) -> Vec<u64> {
    db.tree_shape().levels.iter().map(|l| l.files).collect()
}

#[test]
fn ingested_keys_are_newer_than_earlier_writes_and_older_than_later_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    db.put(b"a", b"old").unwrap();
    db.put(b"c", b"old").unwrap();
    db.put(b"x", b"untouched").unwrap();
    db.flush().unwrap();
    db.put(b"b", b"in memtable").unwrap();
    let before = db.snapshot();
    let sst = write_sst(
        &dir.path().join("1.sst"),
        &options(),
        &[
            Op::Put("a", "new"),
            Op::Put("b", "new"),
            Op::Delete("c"),
            Op::DeleteRange("d", "z"),
            Op::Put("e", "new"),
        ],
    );
    db.ingest(&[&sst], &IngestOptions::default()).unwrap();
    db.put(b"e", b"later").unwrap();
    // "e" is in the file and deleted by its own range deletion only if that covered it: it
    // does not (same sequence number); "x" is covered, being older.
    assert_eq!(
        contents(&db, None),
        model(&[("a", "new"), ("b", "new"), ("e", "later")])
    );
    assert_eq!(
        contents(&db, Some(&before)),
        model(&[
            ("a", "old"),
            ("b", "in memtable"),
            ("c", "old"),
            ("x", "untouched")
        ])
    );
    assert_eq!(db.get(b"x").unwrap(), None);
    assert_eq!(
        db.get_at(&before, b"a").unwrap().as_deref(),
        Some(&b"old"[..])
    );
    assert!(sst.exists(), "without move_files the source stays");
}

/// Placement: a file overlapping nothing goes to the last level as it is; one overlapping
/// the data goes to the level above the overlap (L0 when L0 overlaps), with its keys
/// rewritten at a new sequence number.
#[test]
fn files_go_to_the_lowest_level_they_fit() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.disable_auto_compactions = true;
    let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
    let first = write_sst(&dir.path().join("1.sst"), &o, &[Op::Put("m", "1")]);
    db.ingest(&[&first], &IngestOptions::default()).unwrap();
    assert_eq!(files_per_level(&db), [0, 0, 0, 0, 0, 0, 1]);
    let above = write_sst(&dir.path().join("2.sst"), &o, &[Op::Put("m", "2")]);
    db.ingest(&[&above], &IngestOptions::default()).unwrap();
    assert_eq!(files_per_level(&db), [0, 0, 0, 0, 0, 1, 1]);
    db.put(b"n", b"mem").unwrap();
    db.flush().unwrap();
    let l0 = write_sst(
        &dir.path().join("3.sst"),
        &o,
        &[Op::Put("a", "3"), Op::Put("n", "3")],
    );
    db.ingest(&[&l0], &IngestOptions::default()).unwrap();
    assert_eq!(files_per_level(&db), [2, 0, 0, 0, 0, 1, 1]);
    let elsewhere = write_sst(&dir.path().join("4.sst"), &o, &[Op::Put("q", "4")]);
    db.ingest(&[&elsewhere], &IngestOptions::default()).unwrap();
    assert_eq!(files_per_level(&db), [2, 0, 0, 0, 0, 1, 2]);
    assert_eq!(
        contents(&db, None),
        model(&[("a", "3"), ("m", "2"), ("n", "3"), ("q", "4")])
    );
}

/// A memtable overlapping a file is flushed first, unless that is forbidden.
#[test]
fn an_overlapping_memtable_is_flushed_first_or_the_ingest_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    db.put(b"k", b"mem").unwrap();
    let sst = write_sst(
        &dir.path().join("1.sst"),
        &options(),
        &[Op::Put("k", "file")],
    );
    let mut no_flush = IngestOptions::default();
    no_flush.allow_blocking_flush = false;
    let e = db.ingest(&[&sst], &no_flush).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("allow_blocking_flush"), "{e}");
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"mem"[..]));
    db.ingest(&[&sst], &IngestOptions::default()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"file"[..]));
    assert_eq!(db.tree_shape().active_memtable_entries, 0);
}

#[test]
fn move_files_removes_the_sources_and_a_reopen_keeps_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Db::open(&path, options()).unwrap();
    let a = write_sst(&dir.path().join("a.sst"), &options(), &[Op::Put("a", "1")]);
    let b = write_sst(&dir.path().join("b.sst"), &options(), &[Op::Put("b", "2")]);
    let mut moving = IngestOptions::default();
    moving.move_files = true;
    db.ingest(&[&b, &a], &moving).unwrap();
    assert!(!a.exists() && !b.exists());
    db.close().unwrap();
    let db = Db::open(&path, options()).unwrap();
    assert_eq!(contents(&db, None), model(&[("a", "1"), ("b", "2")]));
    db.put(b"c", b"3").unwrap();
    // The sequence number an ingest takes is kept across a reopen: later writes are newer.
    let over = write_sst(
        &dir.path().join("c.sst"),
        &options(),
        &[Op::Put("c", "file")],
    );
    db.ingest(&[&over], &IngestOptions::default()).unwrap();
    db.close().unwrap();
    let db = Db::open(&path, options()).unwrap();
    db.put(b"c", b"after").unwrap();
    db.flush().unwrap();
    db.compact_all().unwrap();
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"after"[..]));
}

/// An application's order under a name: two of one name but opposite orders make a table
/// that passes the comparator check of a family and has keys out of its order.
struct Named(bool);

impl Comparator for Named {
    fn name(&self) -> &str {
        "test.SometimesReversed"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        match self.0 {
            true => b.cmp(a),
            false => a.cmp(b),
        }
    }
}

/// Every refusal names what is wrong, changes nothing in the database, and leaves no
/// table behind.
#[test]
fn bad_files_are_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let path = root.join("db");
    let db = Db::open(&path, options()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    let o = options();
    let good = write_sst(
        &root.join("good.sst"),
        &o,
        &[Op::Put("a", "1"), Op::Put("m", "1")],
    );
    let overlapping = write_sst(&root.join("overlap.sst"), &o, &[Op::Put("c", "2")]);
    let reversed = {
        let mut cf = CfOptions::default();
        cf.comparator = Arc::new(ReverseBytewiseComparator);
        let p = root.join("reverse.sst");
        let mut w = SstWriter::create_cf(&p, &o, &cf).unwrap();
        w.put(b"b", b"1").unwrap();
        w.put(b"a", b"1").unwrap();
        w.finish().unwrap();
        p
    };
    // In a family of an application's comparator, a file of another order under its name.
    let mut family = CfOptions::default();
    family.comparator = Arc::new(Named(true));
    let named = db.create_cf("named", family.clone()).unwrap();
    let unsorted = {
        let mut cf = CfOptions::default();
        cf.comparator = Arc::new(Named(false));
        let p = root.join("unsorted.sst");
        let mut w = SstWriter::create_cf(&p, &o, &cf).unwrap();
        w.put(b"y", b"1").unwrap();
        w.put(b"z", b"1").unwrap();
        w.finish().unwrap();
        p
    };
    let e = db
        .ingest_cf(&named, &[&unsorted], &IngestOptions::default())
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("key z is not after the key before it, y"),
        "{e}"
    );
    let mut it = db.iter_cf(&named, &ReadOptions::default()).unwrap();
    it.seek_to_first();
    assert!(!it.valid(), "nothing was ingested");
    drop(it);
    db.drop_cf(&named).unwrap();
    let corrupt = {
        let p = root.join("corrupt.sst");
        write_sst(&p, &o, &[Op::Put("q", "value of q")]);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[3] ^= 0x40; // inside the first data block
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let truncated = {
        let p = root.join("truncated.sst");
        write_sst(&p, &o, &[Op::Put("r", "1")]);
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() - 5]).unwrap();
        p
    };
    // A table the database wrote itself: its keys carry sequence numbers.
    let from_a_database = {
        let other = root.join("other");
        let db2 = Db::open(&other, options()).unwrap();
        db2.put(b"s", b"1").unwrap();
        db2.flush().unwrap();
        db2.close().unwrap();
        let name = tables(&other).pop().unwrap();
        other.join(name)
    };
    let missing = root.join("missing.sst");
    let cases: Vec<(&str, Vec<&PathBuf>, &str)> = vec![
        ("overlapping files", vec![&good, &overlapping], "overlap"),
        (
            "wrong comparator",
            vec![&reversed],
            "rocksdb.ReverseBytewiseComparator",
        ),
        ("corrupt block", vec![&good, &corrupt], "corrupt.sst"),
        ("truncated file", vec![&truncated], "truncated.sst"),
        ("missing file", vec![&good, &missing], "missing.sst"),
        (
            "sequence numbers",
            vec![&from_a_database],
            "sequence number",
        ),
    ];
    let before = tables(&path);
    for (name, files, message) in cases {
        let e = db.ingest(&files, &IngestOptions::default()).unwrap_err();
        assert!(e.to_string().contains(message), "{name}: {e}");
        assert_eq!(tables(&path), before, "{name}: a table was left behind");
        assert_eq!(contents(&db, None), model(&[("k", "v")]), "{name}");
    }
    let e = db
        .ingest(&[] as &[&Path], &IngestOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("no file"), "{e}");
    db.close().unwrap();
    let db = Db::open(&path, options()).unwrap();
    assert_eq!(contents(&db, None), model(&[("k", "v")]));
}

#[test]
fn a_family_ingests_in_its_own_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    let mut cf_options = CfOptions::default();
    cf_options.comparator = Arc::new(ReverseBytewiseComparator);
    let cf = db.create_cf("rev", cf_options.clone()).unwrap();
    db.put_cf(&cf, b"b", b"old").unwrap();
    let p = dir.path().join("rev.sst");
    let mut w = SstWriter::create_cf(&p, &options(), &cf_options).unwrap();
    w.put(b"c", b"file").unwrap();
    w.put(b"b", b"file").unwrap();
    w.put(b"a", b"file").unwrap();
    w.finish().unwrap();
    let bytewise = write_sst(
        &dir.path().join("fwd.sst"),
        &options(),
        &[Op::Put("a", "x")],
    );
    let e = db
        .ingest_cf(&cf, &[&bytewise], &IngestOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("column family 'rev'"), "{e}");
    db.ingest_cf(&cf, &[&p], &IngestOptions::default()).unwrap();
    let mut it = db.iter_cf(&cf, &ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() {
        assert_eq!(it.value(), b"file");
        keys.push(it.key().to_vec());
        it.next();
    }
    assert_eq!(keys, [b"c", b"b", b"a"]);
    assert_eq!(
        db.get(b"a").unwrap(),
        None,
        "the default family is untouched"
    );
}

/// Many ingested files, overlapping each other's levels and the data, compacted together:
/// the result is what the writes said.
#[test]
fn ingested_files_compact_with_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.write_buffer_size = 16 << 10;
    o.max_bytes_for_level_base = 64 << 10;
    o.target_file_size_base = 16 << 10;
    let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
    let mut expected = Model::new();
    for round in 0..12u32 {
        for i in (0..400u32).step_by(3) {
            let k = format!("key{:05}", (i * 7 + round) % 1000);
            let v = format!("db{round}-{i}");
            db.put(k.as_bytes(), v.as_bytes()).unwrap();
            expected.insert(k.into_bytes(), v.into_bytes());
        }
        let p = dir.path().join(format!("{round}.sst"));
        let mut w = SstWriter::create(&p, &o).unwrap();
        for i in 0..200u32 {
            let k = format!("key{:05}", round * 50 + i);
            if i % 10 == 0 {
                w.delete(k.as_bytes()).unwrap();
                expected.remove(k.as_bytes());
            } else {
                let v = format!("file{round}-{i}");
                w.put(k.as_bytes(), v.as_bytes()).unwrap();
                expected.insert(k.into_bytes(), v.into_bytes());
            }
        }
        w.finish().unwrap();
        db.ingest(&[&p], &IngestOptions::default()).unwrap();
    }
    assert_eq!(contents(&db, None), expected);
    db.compact_all().unwrap();
    assert_eq!(contents(&db, None), expected);
    let shape = files_per_level(&db);
    assert_eq!(shape[0], 0, "{shape:?}");
}

/// The model test: random puts and deletes, some of them through ingested files (with range
/// deletions), against a `BTreeMap`, with reads at snapshots taken before and after ingests, flushes, compactions
/// and reopens; leveled and universal compaction.
#[test]
fn random_writes_and_ingests_match_a_model() {
    let seeds: u64 = std::env::var("STRATA_INGEST_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    for seed in 0..seeds {
        run_model(seed);
    }
}

fn run_model(seed: u64) {
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut o = options();
    o.write_buffer_size = 8 << 10;
    o.max_bytes_for_level_base = 32 << 10;
    o.target_file_size_base = 8 << 10;
    o.compaction_style = match seed % 3 {
        2 => CompactionStyle::Universal,
        _ => CompactionStyle::Leveled,
    };
    o.universal = UniversalOptions::default();
    let key = |rng: &mut Rng| format!("k{:04}", rng.below(600)).into_bytes();
    let mut db = Db::open(&path, o.clone()).unwrap();
    let mut now = Model::new();
    let mut snapshots: Vec<(Snapshot, Model)> = Vec::new();
    let mut files = 0;
    for step in 0..400 {
        let context = format!("seed {seed} step {step}");
        match rng.below(100) {
            0..=49 => {
                let k = key(&mut rng);
                let v = format!("db{step}").into_bytes();
                db.put(&k, &v).unwrap();
                now.insert(k, v);
            }
            50..=59 => {
                let k = key(&mut rng);
                db.delete(&k).unwrap();
                now.remove(&k);
            }
            60..=74 => {
                // A few files of sorted, distinct keys in disjoint ranges.
                let count = 1 + rng.below(3);
                let mut paths = Vec::new();
                let mut changes = Vec::new();
                let mut erased: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
                let start = rng.below(500);
                for part in 0..count {
                    files += 1;
                    let p = dir.path().join(format!("{files}.sst"));
                    let mut w = SstWriter::create(&p, &o).unwrap();
                    let lo = start + part * 40;
                    let mut written = 0;
                    if rng.one_in(4) {
                        // A range deletion, up to the next file's first key (exclusive).
                        let b = lo + rng.below(40);
                        let e = b + 1 + rng.below(lo + 40 - b);
                        let (b, e) = (format!("k{b:04}"), format!("k{e:04}"));
                        w.delete_range(b.as_bytes(), e.as_bytes()).unwrap();
                        erased.push((b.into_bytes(), e.into_bytes()));
                        written += 1;
                    }
                    for i in lo..lo + 40 {
                        if !rng.one_in(3) {
                            continue;
                        }
                        let k = format!("k{i:04}").into_bytes();
                        if rng.one_in(4) {
                            w.delete(&k).unwrap();
                            changes.push((k, None));
                        } else {
                            let v = format!("file{step}").into_bytes();
                            w.put(&k, &v).unwrap();
                            changes.push((k, Some(v)));
                        }
                        written += 1;
                    }
                    if written == 0 {
                        continue; // an empty table is refused by finish
                    }
                    w.finish().unwrap();
                    paths.push(p);
                }
                if paths.is_empty() {
                    continue;
                }
                let mut ingest = IngestOptions::default();
                ingest.move_files = rng.one_in(2);
                db.ingest(&paths, &ingest).expect(&context);
                // The files' range deletions delete what was there before, not their own keys.
                for (b, e) in erased {
                    now.retain(|k, _| !(b <= *k && *k < e));
                }
                for (k, v) in changes {
                    match v {
                        Some(v) => now.insert(k, v),
                        None => now.remove(&k),
                    };
                }
            }
            75..=81 => snapshots.push((db.snapshot(), now.clone())),
            82..=84 => {
                if !snapshots.is_empty() {
                    let i = rng.below(snapshots.len() as u64) as usize;
                    snapshots.swap_remove(i);
                }
            }
            85..=89 => db.flush().unwrap(),
            90..=92 => db.compact_all().unwrap(),
            93..=94 => {
                snapshots.clear();
                drop(db);
                db = Db::open(&path, o.clone()).unwrap();
            }
            _ => {
                let k = key(&mut rng);
                assert_eq!(db.get(&k).unwrap(), now.get(&k).cloned(), "{context}");
            }
        }
        if step % 25 == 0 {
            assert_eq!(contents(&db, None), now, "{context}");
            for (i, (s, expected)) in snapshots.iter().enumerate() {
                assert_eq!(&contents(&db, Some(s)), expected, "{context}: snapshot {i}");
            }
        }
    }
    assert_eq!(contents(&db, None), now, "seed {seed} at the end");
    for (s, expected) in &snapshots {
        assert_eq!(&contents(&db, Some(s)), expected, "seed {seed} at the end");
    }
    drop(snapshots);
    drop(db);
    let db = Db::open(&path, o).unwrap();
    assert_eq!(contents(&db, None), now, "seed {seed} after a reopen");
}

/// A crash at each file operation of an ingest (with and without a power cut after it):
/// the reopened database holds every key of the files or none, the writes made before, and
/// no table its manifest does not name.
#[test]
fn a_crash_at_any_step_of_an_ingest_leaves_all_or_nothing() {
    let root = tempfile::tempdir().unwrap();
    let o = options();
    let overlapping = write_sst(
        &root.path().join("over.sst"),
        &o,
        &[Op::Put("a", "file"), Op::Put("b", "file"), Op::Delete("c")],
    );
    let apart = write_sst(&root.path().join("apart.sst"), &o, &[Op::Put("x", "file")]);
    let workload = |dir: &Path, fs: &FaultFs| -> bool {
        let mut through_fs = options();
        through_fs.fs = Arc::new(fs.clone());
        let Ok(db) = Db::open(dir, through_fs) else {
            return false;
        };
        let mut sync = strata::WriteOptions::default();
        sync.sync = true;
        let ok = db.put_opt(b"c", b"db", &sync).is_ok()
            && db.flush().is_ok()
            && db.put_opt(b"a", b"db", &sync).is_ok();
        if !ok {
            return false;
        }
        // Dropped without close: after a crash every file operation fails, so nothing more
        // reaches the disk.
        db.ingest(&[&overlapping, &apart], &IngestOptions::default())
            .is_ok()
    };
    let clean = root.path().join("clean");
    let fs = FaultFs::new();
    assert!(workload(&clean, &fs));
    let total = fs.ops();
    let after = model(&[("a", "file"), ("b", "file"), ("x", "file")]);
    let before = model(&[("a", "db"), ("c", "db")]);
    for n in 1..=total {
        for power_cut in [false, true] {
            let dir = root.path().join(format!("crash-{n}-{power_cut}"));
            let fs = FaultFs::new();
            fs.crash_at(n);
            let acknowledged = workload(&dir, &fs);
            if power_cut {
                fs.power_loss().unwrap();
            }
            let context = format!("crash at operation {n} of {total}, power cut {power_cut}");
            if !dir.join("CURRENT").exists() {
                continue;
            }
            let db = Db::open(&dir, options()).unwrap();
            // The recovered WAL is flushed in the background: wait for it before counting.
            db.flush().unwrap();
            let got = contents(&db, None);
            let before_ingest = !got.contains_key(&b"x"[..]);
            if acknowledged {
                assert_eq!(got, after, "{context}");
            } else if before_ingest {
                // What the writes before it left: a prefix of them, all synced.
                for (k, v) in &got {
                    assert_eq!(before.get(k), Some(v), "{context}");
                }
            } else {
                assert_eq!(got, after, "{context}");
            }
            // Compactions (a merge of L0 once the flush leaves the family idle) settle first,
            // or the count would race them.
            db.wait_for_compactions().unwrap();
            let live = db.tree_shape().levels.iter().map(|l| l.files).sum::<u64>();
            db.close().unwrap();
            assert_eq!(tables(&dir).len() as u64, live, "{context}: a stray table");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// A family with a ttl (its values carry an expiry the writer's do not) and a database
/// opened read-only refuse ingests, naming why; the file stays.
#[test]
fn a_ttl_family_and_a_read_only_database_refuse_ingests() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let sst = write_sst(&dir.path().join("1.sst"), &options(), &[Op::Put("a", "1")]);
    let db = Db::open(&path, options()).unwrap();
    let mut ttl = CfOptions::default();
    ttl.ttl = Some(std::time::Duration::from_secs(60));
    let cf = db.create_cf("expiring", ttl).unwrap();
    let e = db
        .ingest_cf(&cf, &[&sst], &IngestOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.to_string().contains("column family 'expiring' has a ttl"),
        "{e}"
    );
    db.drop_cf(&cf).unwrap();
    db.close().unwrap();
    let db = Db::open_read_only(&path, Options::default()).unwrap();
    let e = db.ingest(&[&sst], &IngestOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable);
    assert!(e.to_string().contains("read-only"), "{e}");
    assert!(sst.exists());
    assert!(tables(&path).is_empty());
}

/// The messages of the refusals, as docs/reliability.md quotes them.
#[test]
fn refusal_messages_name_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options()).unwrap();
    let a = write_sst(
        &dir.path().join("a.sst"),
        &options(),
        &[Op::Put("a", "1"), Op::Put("m", "1")],
    );
    let c = write_sst(&dir.path().join("c.sst"), &options(), &[Op::Put("c", "1")]);
    let e = db.ingest(&[&a, &c], &IngestOptions::default()).unwrap_err();
    let expected = format!(
        "invalid argument: ingest: files {} and {} overlap (keys a..m and c..c)",
        a.display(),
        c.display()
    );
    assert_eq!(e.to_string(), expected);
    let missing = dir.path().join("missing.sst");
    let e = db
        .ingest(&[&missing], &IngestOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(
        e.to_string().contains(&missing.display().to_string()),
        "{e}"
    );
}

/// Ingests while other threads write keys between the files' keys (so that every ingest
/// must flush the memtable first and rewrite its file) and read through snapshots: nothing
/// hangs, every acknowledged write and every ingested key is there, and a snapshot taken
/// before an ingest never sees its keys.
#[test]
fn ingests_beside_writers_and_readers() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.write_buffer_size = 32 << 10;
    let db = Arc::new(Db::open(dir.path().join("db"), o.clone()).unwrap());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2u32)
        .map(|t| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // Odd keys: the files hold even ones.
                    let k = format!("k{:05}", (n * 2 + 1 + t * 1000) % 20000);
                    db.put(k.as_bytes(), format!("w{t}-{n}").as_bytes())
                        .unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    let reader = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let s = db.snapshot();
                let first = contents(&db, Some(&s));
                assert_eq!(
                    contents(&db, Some(&s)),
                    first,
                    "a snapshot changed under a reader"
                );
            }
        })
    };
    for round in 0..10u32 {
        let p = dir.path().join(format!("{round}.sst"));
        let mut w = SstWriter::create(&p, &o).unwrap();
        for i in 0..200u32 {
            let k = format!("k{:05}", (round * 1000 + i * 2) % 20000);
            w.put(k.as_bytes(), format!("file{round}").as_bytes())
                .unwrap();
        }
        w.finish().unwrap();
        let before = db.snapshot();
        db.ingest(&[&p], &IngestOptions::default()).unwrap();
        let k = format!("k{:05}", round * 1000);
        assert_eq!(
            db.get_at(&before, k.as_bytes()).unwrap(),
            None,
            "round {round}"
        );
        assert_eq!(
            db.get(k.as_bytes()).unwrap(),
            Some(format!("file{round}").into_bytes()),
            "round {round}"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written: Vec<u32> = writers.into_iter().map(|h| h.join().unwrap()).collect();
    reader.join().unwrap();
    let all = contents(&db, None);
    for round in 0..10u32 {
        for i in 0..200u32 {
            let k = format!("k{:05}", (round * 1000 + i * 2) % 20000);
            assert_eq!(
                all.get(k.as_bytes()).map(Vec::as_slice),
                Some(format!("file{round}").as_bytes())
            );
        }
    }
    for (t, &n) in written.iter().enumerate() {
        // Each writer's last write of each of its keys is there.
        let mut last = BTreeMap::new();
        for i in 0..n {
            let k = format!("k{:05}", (i * 2 + 1 + t as u32 * 1000) % 20000);
            last.insert(k, format!("w{t}-{i}"));
        }
        for (k, v) in last {
            let got = all
                .get(k.as_bytes())
                .map(|v| String::from_utf8_lossy(v).into_owned());
            // The other writer may have written the key later.
            assert!(
                got.as_deref() == Some(&v) || got.as_deref().is_some_and(|g| g.starts_with('w')),
                "{k}: {got:?} {v}"
            );
        }
    }
}

/// Merge operands in a file apply over what the database held; a family with a prefix
/// extractor reads ingested tables by prefix; universal compaction takes a file at a new
/// sequence number into L0.
#[test]
fn merges_prefixes_and_universal_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.merge_operator = Some(Arc::new(strata::StringAppend::new(b",")));
    o.prefix_extractor = Some(strata::parse_prefix_extractor("fixed:2").unwrap());
    o.compaction_style = CompactionStyle::Universal;
    o.disable_auto_compactions = true;
    let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
    db.put(b"aa1", b"base").unwrap();
    db.flush().unwrap();
    let p = dir.path().join("1.sst");
    let mut w = SstWriter::create(&p, &o).unwrap();
    w.merge(b"aa1", b"more").unwrap();
    w.put(b"ab1", b"x").unwrap();
    w.finish().unwrap();
    db.ingest(&[&p], &IngestOptions::default()).unwrap();
    assert_eq!(db.get(b"aa1").unwrap().as_deref(), Some(&b"base,more"[..]));
    assert_eq!(
        files_per_level(&db)[0],
        2,
        "universal: a file at a new sequence goes to L0"
    );
    let mut read = ReadOptions::default();
    read.prefix_same_as_start = true;
    let mut it = db.iter(&read);
    it.seek(b"ab");
    assert!(it.valid());
    assert_eq!(it.key(), b"ab1");
    it.next();
    assert!(!it.valid());
    db.compact_all().unwrap();
    assert_eq!(db.get(b"aa1").unwrap().as_deref(), Some(&b"base,more"[..]));
}

/// A file ingested into L0 at a new sequence number goes above every write before it, the
/// memtables' included: they are flushed first, so that L0 stays ordered by age (each table's
/// sequence numbers above the ones under it). A table spanning the file's number would let a
/// compaction of adjacent L0 tables, joined meanwhile by a flush, put older versions above
/// newer ones (a crash test found keys brought back from deletion that way). A file going to
/// a deeper level leaves the memtables alone.
#[test]
fn an_ingest_into_l0_keeps_l0_ordered_by_age() {
    for (style, to_l0) in [
        (CompactionStyle::Universal, true),
        (CompactionStyle::Leveled, true),
        (CompactionStyle::Leveled, false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options();
        o.compaction_style = style;
        o.disable_auto_compactions = true;
        let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
        db.put(b"a", b"1").unwrap();
        db.put(b"z", b"1").unwrap();
        db.flush().unwrap();
        if !to_l0 {
            db.compact_all().unwrap(); // L0 empty: the file fits above the last level
        }
        db.put(b"b", b"mem").unwrap(); // not the file's key
        let sst = write_sst(&dir.path().join("1.sst"), &o, &[Op::Put("m", "file")]);
        let mut no_flush = IngestOptions::default();
        no_flush.allow_blocking_flush = false;
        match to_l0 {
            true => {
                let e = db.ingest(&[&sst], &no_flush).unwrap_err();
                assert!(e.to_string().contains("goes to L0"), "{style:?}: {e}");
                db.ingest(&[&sst], &IngestOptions::default()).unwrap();
                assert_eq!(db.tree_shape().active_memtable_entries, 0, "{style:?}");
            }
            false => {
                db.ingest(&[&sst], &no_flush).unwrap();
                assert_eq!(db.tree_shape().active_memtable_entries, 1, "{style:?}");
            }
        }
        db.put(b"c", b"later").unwrap();
        db.flush().unwrap();
        let mut l0: Vec<(u64, u64)> = db
            .live_files_metadata()
            .iter()
            .filter(|f| f.level == 0)
            .map(|f| (f.smallest_seqno, f.largest_seqno))
            .collect();
        l0.sort_by_key(|t| std::cmp::Reverse(t.1));
        for pair in l0.windows(2) {
            assert!(
                pair[0].0 > pair[1].1,
                "{style:?}: L0 tables' sequence numbers interleave: {l0:?}"
            );
        }
        let want = model(&[
            ("a", "1"),
            ("b", "mem"),
            ("c", "later"),
            ("m", "file"),
            ("z", "1"),
        ]);
        assert_eq!(contents(&db, None), want, "{style:?}");
    }
}

/// Listeners hear of an ingest's flush and of its rewritten tables, with their reasons.
#[test]
fn listeners_hear_the_ingest_flush_and_tables() {
    #[derive(Default)]
    struct Recorder(std::sync::Mutex<Vec<String>>);
    impl strata::EventListener for Recorder {
        fn on_flush_completed(&self, info: &strata::FlushJobInfo) {
            self.0
                .lock()
                .unwrap()
                .push(format!("flush {:?}", info.reason));
        }
        fn on_table_file_created(&self, info: &strata::TableFileCreationInfo) {
            let line = format!("table {} {:?}", info.file_number, info.reason);
            self.0.lock().unwrap().push(line);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let recorder = Arc::new(Recorder::default());
    let mut o = options();
    o.listeners = vec![recorder.clone()];
    let db = Db::open(dir.path().join("db"), o.clone()).unwrap();
    db.put(b"k", b"v").unwrap();
    let sst = write_sst(&dir.path().join("1.sst"), &o, &[Op::Put("k", "file")]);
    db.ingest(&[&sst], &IngestOptions::default()).unwrap();
    let events = recorder.0.lock().unwrap().clone();
    assert!(
        events.contains(&"flush ExternalFileIngestion".to_string()),
        "{events:?}"
    );
    assert!(events.iter().any(|e| e.ends_with(" Ingest")), "{events:?}");
}
