//! Secondary instances (`Db::open_as_secondary`, `Db::try_catch_up_with_primary`) and
//! iterator refresh: a secondary follows a primary writing in the same process (it takes no
//! lock in the primary's directory, so both open it at once), and after each catch-up reads
//! what the primary wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use strata::internals::Rng;
use strata::{CfOptions, Db, ErrorKind, Options, ReadOptions, StringAppend, WriteBatch};

const MERGE_DELIMITER: &[u8] = b".";

/// A primary's options: small memtables, so that flushes and compactions run often.
fn primary_options() -> Options {
    let mut options = secondary_options();
    options.create_if_missing = true;
    options.write_buffer_size = 16 << 10;
    options.level0_file_num_compaction_trigger = 2;
    options.target_file_size_base = 16 << 10;
    options.max_bytes_for_level_base = 64 << 10;
    options
}

/// What a secondary is opened with: the primary's merge operator.
fn secondary_options() -> Options {
    let mut options = Options::default();
    options.merge_operator = Some(Arc::new(StringAppend::new(MERGE_DELIMITER)));
    options
}

/// The directories of one test: the primary's and the secondary's.
struct Dirs {
    _root: tempfile::TempDir,
    primary: PathBuf,
    secondary: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    Dirs {
        primary: root.path().join("primary"),
        secondary: root.path().join("secondary"),
        _root: root,
    }
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Every key and value of the default family, by a forward scan.
fn scan(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut out = BTreeMap::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    out
}

/// Fails naming the keys where `got` and `want` differ.
fn assert_same(got: &BTreeMap<Vec<u8>, Vec<u8>>, want: &BTreeMap<Vec<u8>, Vec<u8>>, what: &str) {
    let shown = |v: Option<&Vec<u8>>| v.map(|v| String::from_utf8_lossy(v).into_owned());
    let differ: Vec<String> = got
        .keys()
        .chain(want.keys())
        .filter(|k| got.get(*k) != want.get(*k))
        .map(|k| {
            let (g, w) = (shown(got.get(k)), shown(want.get(k)));
            format!("{}: {g:?}, want {w:?}", String::from_utf8_lossy(k))
        })
        .collect();
    assert!(differ.is_empty(), "{what}: {differ:?}");
}

/// The primary's files other than its info logs, each with its size and modification time.
fn files_with_times(dir: &Path) -> BTreeMap<String, (u64, SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_name().to_string_lossy().starts_with("LOG"))
        .map(|e| {
            let meta = e.metadata().unwrap();
            let name = e.file_name().into_string().unwrap();
            (name, (meta.len(), meta.modified().unwrap()))
        })
        .collect()
}

/// The model of the primary's default family after each operation of a random workload:
/// puts, deletes, merges and range deletions over a few hundred keys, with flushes and
/// compactions in between; the secondary catches up at random points and must then read
/// exactly the model, by scan and by point gets.
#[test]
fn a_secondary_reads_what_the_primary_wrote_after_each_catch_up() {
    for seed in [1u64, 7, 42] {
        let d = dirs();
        let primary = Db::open(&d.primary, primary_options()).unwrap();
        let secondary = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options())
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let mut rng = Rng::new(seed);
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let mut catch_ups = 0;
        for step in 0..4000u64 {
            let k = key(rng.below(300));
            match rng.below(100) {
                0..=54 => {
                    let value = format!("v{step}").into_bytes();
                    primary.put(&k, &value).unwrap();
                    model.insert(k, value);
                }
                55..=69 => {
                    primary.delete(&k).unwrap();
                    model.remove(&k);
                }
                70..=84 => {
                    let operand = format!("m{step}").into_bytes();
                    primary.merge(&k, &operand).unwrap();
                    let merged = match model.get(&k) {
                        Some(old) => [old.as_slice(), MERGE_DELIMITER, &operand].concat(),
                        None => operand,
                    };
                    model.insert(k, merged);
                }
                85..=87 => {
                    let end = key(rng.below(300));
                    let (begin, end) = if k <= end { (k, end) } else { (end, k) };
                    primary.delete_range(&begin, &end).unwrap();
                    let doomed: Vec<Vec<u8>> =
                        model.range(begin..end).map(|(k, _)| k.clone()).collect();
                    for k in doomed {
                        model.remove(&k);
                    }
                }
                88..=89 => {
                    let mut batch = WriteBatch::new();
                    let value = format!("b{step}").into_bytes();
                    batch.put(&k, &value);
                    let deleted = key(rng.below(300));
                    batch.delete(&deleted);
                    primary.write(batch, &Default::default()).unwrap();
                    model.insert(k, value);
                    model.remove(&deleted);
                }
                90 => primary.flush().unwrap(),
                91 => primary.compact_range(None, None).unwrap(),
                _ => {
                    secondary
                        .try_catch_up_with_primary()
                        .unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
                    catch_ups += 1;
                    assert_same(
                        &scan(&primary),
                        &model,
                        &format!("seed {seed} step {step}: primary"),
                    );
                    assert_same(
                        &scan(&secondary),
                        &model,
                        &format!("seed {seed} step {step}: scan"),
                    );
                    for i in 0..300 {
                        let k = key(i);
                        assert_eq!(
                            secondary.get(&k).unwrap(),
                            model.get(&k).cloned(),
                            "seed {seed} step {step}: get {}",
                            String::from_utf8_lossy(&k)
                        );
                    }
                }
            }
        }
        secondary.try_catch_up_with_primary().unwrap();
        assert_eq!(scan(&secondary), model, "seed {seed}: final scan");
        assert!(catch_ups > 100, "seed {seed}: {catch_ups} catch-ups");
        let tree = primary.tree_shape();
        assert!(
            tree.levels.iter().skip(1).any(|l| l.files > 0),
            "seed {seed}: the workload compacted nothing: {tree:?}"
        );
    }
}

/// A single writer puts keys in order while the secondary catches up as fast as it can and
/// another thread reads the secondary meanwhile: every catch-up succeeds (flushes and
/// compactions delete WALs and tables under it), and every read, during a catch-up or after
/// it, shows a prefix of the writes; after each catch-up, never a shorter one than before.
#[test]
fn catch_ups_beside_a_busy_primary_see_growing_prefixes() {
    let d = dirs();
    let primary = Arc::new(Db::open(&d.primary, primary_options()).unwrap());
    let secondary =
        Arc::new(Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap());
    const KEYS: u64 = 20_000;
    let writer = {
        let primary = primary.clone();
        std::thread::spawn(move || {
            for i in 0..KEYS {
                primary.put(key(i), [b'x'; 64]).unwrap();
            }
        })
    };
    let is_prefix =
        |got: &BTreeMap<Vec<u8>, Vec<u8>>| got.keys().enumerate().all(|(i, k)| *k == key(i as u64));
    let reader = {
        let secondary = secondary.clone();
        std::thread::spawn(move || {
            let mut reads = 0;
            let deadline = Instant::now() + Duration::from_secs(120);
            while Instant::now() < deadline {
                let got = scan(&secondary);
                assert!(is_prefix(&got), "a read during catch-ups saw a hole");
                reads += 1;
                if got.len() as u64 == KEYS {
                    break;
                }
            }
            reads
        })
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = 0;
    loop {
        let done = writer.is_finished();
        secondary.try_catch_up_with_primary().unwrap();
        let got = scan(&secondary);
        let n = got.len() as u64;
        assert!(n >= seen, "went back from {seen} to {n} keys");
        assert!(is_prefix(&got), "not a prefix of the writes");
        seen = n;
        if done {
            break;
        }
        assert!(Instant::now() < deadline, "writer still running");
    }
    writer.join().unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(scan(&secondary).len() as u64, KEYS);
    assert!(reader.join().unwrap() > 0);
}

/// A primary closed and reopened writes a new manifest and points CURRENT at it (the old one
/// is deleted): the secondary follows it, and keeps reading the tables of its old view that
/// the reopened primary's compaction deleted until it catches up.
#[test]
fn a_catch_up_follows_the_primary_to_a_new_manifest() {
    let d = dirs();
    let primary = Db::open(&d.primary, primary_options()).unwrap();
    for i in 0..500 {
        primary.put(key(i), b"first").unwrap();
    }
    primary.flush().unwrap();
    let secondary = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap();
    let manifests = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("MANIFEST"))
            .collect();
        names.sort();
        names
    };
    let before = manifests(&d.primary);
    primary.close().unwrap();

    let primary = Db::open(&d.primary, primary_options()).unwrap();
    assert_ne!(
        manifests(&d.primary),
        before,
        "the reopen started no new manifest"
    );
    for i in 0..500 {
        primary.put(key(i), b"second").unwrap();
    }
    primary.compact_range(None, None).unwrap();
    // Its view still names the compacted-away tables, read through the handles it holds.
    assert_eq!(
        secondary.get(key(7)).unwrap().as_deref(),
        Some(&b"first"[..])
    );
    assert_eq!(scan(&secondary).len(), 500);

    secondary.try_catch_up_with_primary().unwrap();
    let got = scan(&secondary);
    assert_eq!(got.len(), 500);
    assert!(got.values().all(|v| v == b"second"));
    primary.put(key(900), b"after").unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(
        secondary.get(key(900)).unwrap().as_deref(),
        Some(&b"after"[..])
    );
}

/// Families the primary creates appear at a catch-up, by name; dropped ones are reported
/// dropped; a family created again under the same name is a new family.
#[test]
fn a_catch_up_sees_families_created_and_dropped() {
    let d = dirs();
    let primary = Db::open(&d.primary, primary_options()).unwrap();
    let secondary = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap();
    let logs = primary.create_cf("logs", CfOptions::default()).unwrap();
    primary.put_cf(&logs, b"k", b"v1").unwrap();
    assert!(secondary.cf("logs").is_none());

    secondary.try_catch_up_with_primary().unwrap();
    let seen = secondary.cf("logs").expect("created by the primary");
    assert_eq!(
        secondary.get_cf(&seen, b"k").unwrap().as_deref(),
        Some(&b"v1"[..])
    );
    assert_eq!(secondary.cf_names(), ["default", "logs"]);
    primary.flush_cf(&logs).unwrap();
    primary.put_cf(&logs, b"k2", b"v2").unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(
        secondary.get_cf(&seen, b"k").unwrap().as_deref(),
        Some(&b"v1"[..])
    );
    assert_eq!(
        secondary.get_cf(&seen, b"k2").unwrap().as_deref(),
        Some(&b"v2"[..])
    );

    primary.drop_cf(&logs).unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert!(seen.is_dropped());
    let err = secondary.get_cf(&seen, b"k").unwrap_err();
    assert!(err.to_string().contains("dropped"), "{err}");
    assert!(secondary.cf("logs").is_none());

    let again = primary.create_cf("logs", CfOptions::default()).unwrap();
    primary.put_cf(&again, b"k", b"new").unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    let seen_again = secondary.cf("logs").expect("created again");
    assert_ne!(seen_again.id(), seen.id());
    assert_eq!(
        secondary.get_cf(&seen_again, b"k").unwrap().as_deref(),
        Some(&b"new"[..])
    );
}

/// The newest WAL ending in half a record (the primary is writing it) is not corruption: the
/// open and the catch-up read up to it and show nothing of it, and once the rest of the
/// record is there the next catch-up reads it. Garbage where the record should be is read
/// the same way.
#[test]
fn a_torn_record_at_the_wal_tail_is_read_once_whole() {
    let d = dirs();
    let primary = Db::open(&d.primary, primary_options()).unwrap();
    primary.put(b"a", b"1").unwrap();
    primary.put(b"b", [b'2'; 200]).unwrap();
    primary.close().unwrap();
    let wal = newest_wal(&d.primary);
    let whole = std::fs::read(&wal).unwrap();
    // The second record's length: its header and payload end the file.
    let cut = whole.len() - 100;
    std::fs::write(&wal, &whole[..cut]).unwrap();

    let secondary = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap();
    assert_eq!(secondary.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(secondary.get(b"b").unwrap(), None);
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(secondary.get(b"b").unwrap(), None);

    // Garbage after the cut: still a record not written whole.
    let mut garbage = whole[..cut].to_vec();
    garbage.extend_from_slice(&[0xAB; 60]);
    std::fs::write(&wal, &garbage).unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(secondary.get(b"b").unwrap(), None);
    assert_eq!(scan(&secondary).len(), 1);

    std::fs::write(&wal, &whole).unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(
        secondary.get(b"b").unwrap().as_deref(),
        Some(&[b'2'; 200][..])
    );
    assert_eq!(secondary.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

fn newest_wal(dir: &Path) -> PathBuf {
    let mut wals: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    wals.sort();
    wals.pop().expect("a WAL")
}

/// Every call that writes fails on a secondary, naming it; reads work.
#[test]
fn writes_on_a_secondary_are_refused() {
    let d = dirs();
    let primary = Db::open(&d.primary, primary_options()).unwrap();
    primary.put(b"a", b"1").unwrap();
    let secondary = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap();
    let cf = secondary.default_cf();
    let sst = d.secondary.join("x.sst");
    let refused: Vec<(&str, strata::Result<()>)> = vec![
        ("put", secondary.put(b"k", b"v")),
        ("delete", secondary.delete(b"k")),
        ("merge", secondary.merge(b"k", b"v")),
        ("delete_range", secondary.delete_range(b"a", b"z")),
        (
            "write",
            secondary.write(WriteBatch::new(), &Default::default()),
        ),
        ("flush", secondary.flush()),
        ("compact_range", secondary.compact_range(None, None)),
        ("compact_all", secondary.compact_all()),
        ("sync_wal", secondary.sync_wal()),
        ("resume", secondary.resume()),
        (
            "create_cf",
            secondary.create_cf("x", CfOptions::default()).map(drop),
        ),
        ("drop_cf", secondary.drop_cf(&cf)),
        ("ingest", secondary.ingest(&[sst], &Default::default())),
    ];
    for (call, result) in refused {
        let err = result.expect_err(call);
        assert_eq!(err.kind(), ErrorKind::Unavailable, "{call}: {err}");
        assert!(err.to_string().contains("secondary"), "{call}: {err}");
    }
    assert_eq!(secondary.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(secondary.get(b"k").unwrap(), None);
    assert_eq!(primary.get(b"k").unwrap(), None);
}

/// Opening, catching up and reading never touch the primary's directory: no file is
/// created, removed or modified there (the secondary's LOG is in its own directory).
#[test]
fn a_secondary_leaves_the_primary_directory_unchanged() {
    let d = dirs();
    let primary = Db::open(&d.primary, primary_options()).unwrap();
    for i in 0..2000 {
        primary.put(key(i), [b'v'; 50]).unwrap();
    }
    primary.close().unwrap();
    let before = files_with_times(&d.primary);

    let secondary = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(scan(&secondary).len(), 2000);
    assert_eq!(secondary.secondary_path(), Some(d.secondary.as_path()));
    drop(secondary);
    assert_eq!(files_with_times(&d.primary), before);
    assert!(d.secondary.join("LOG").exists(), "the secondary's LOG");
}

/// A secondary of a directory holding no database, or given the primary's own directory,
/// is refused with a message naming it; catching up a database that is no secondary is too.
#[test]
fn bad_secondary_opens_are_refused() {
    let d = dirs();
    let err = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.to_string().contains(&*d.primary.to_string_lossy()),
        "{err}"
    );
    assert!(!d.secondary.exists(), "created for a missing primary");

    let primary = Db::open(&d.primary, primary_options()).unwrap();
    let err = Db::open_as_secondary(&d.primary, &d.primary, secondary_options()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");

    let err = primary.try_catch_up_with_primary().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("not open as a secondary"), "{err}");
    assert_eq!(primary.secondary_path(), None);
}

/// An iterator reads the view it was made with; `refresh` moves it to the current one,
/// keeping its bounds: on the primary after its writes, on a secondary after a catch-up.
#[test]
fn a_refreshed_iterator_sees_new_writes() {
    let d = dirs();
    let primary = Db::open(&d.primary, primary_options()).unwrap();
    primary.put(b"b", b"1").unwrap();
    let secondary = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap();
    let mut bounded = ReadOptions::default();
    bounded.lower_bound = Some(b"b".to_vec());
    bounded.upper_bound = Some(b"y".to_vec());
    let keys = |it: &mut strata::DbIterator| {
        it.seek_to_first();
        let mut out = Vec::new();
        while it.valid() {
            out.push(String::from_utf8(it.key().to_vec()).unwrap());
            it.next();
        }
        it.status().unwrap();
        out
    };
    let mut on_primary = primary.iter(&bounded);
    let mut on_secondary = secondary.iter(&bounded);
    for k in ["a", "c", "z"] {
        primary.put(k, b"2").unwrap();
    }
    primary.flush().unwrap();
    primary.put(b"d", b"3").unwrap();
    secondary.try_catch_up_with_primary().unwrap();

    assert_eq!(keys(&mut on_primary), ["b"]);
    assert_eq!(keys(&mut on_secondary), ["b"]);
    on_primary.refresh().unwrap();
    on_secondary.refresh().unwrap();
    assert!(!on_primary.valid(), "unpositioned after refresh");
    assert_eq!(keys(&mut on_primary), ["b", "c", "d"]);
    assert_eq!(keys(&mut on_secondary), ["b", "c", "d"]);

    // A snapshot iterator refreshed reads the latest state, as RocksDB's Refresh().
    let snapshot = primary.snapshot();
    let mut at_snapshot_options = ReadOptions::default();
    at_snapshot_options.snapshot = Some(snapshot);
    let mut at_snapshot = primary.iter(&at_snapshot_options);
    primary.delete(b"b").unwrap();
    assert_eq!(keys(&mut at_snapshot), ["a", "b", "c", "d", "z"]);
    at_snapshot.refresh().unwrap();
    assert_eq!(keys(&mut at_snapshot), ["a", "c", "d", "z"]);

    // A family dropped under an iterator: refresh fails and leaves it readable.
    let cf = primary.create_cf("gone", CfOptions::default()).unwrap();
    primary.put_cf(&cf, b"k", b"v").unwrap();
    let mut in_family = primary.iter_cf(&cf, &ReadOptions::default()).unwrap();
    primary.drop_cf(&cf).unwrap();
    let err = in_family.refresh().unwrap_err();
    assert!(err.to_string().contains("dropped"), "{err}");
    assert_eq!(keys(&mut in_family), ["k"]);
}

/// A secondary opens the blob files of the view it installs, as it opens the tables: the
/// primary's garbage collection may delete a blob file after the catch-up, and the
/// secondary's reads of that view must still find the values (without the files opened at
/// the catch-up, the first read opened the file and found it missing).
#[test]
fn values_in_blob_files_stay_readable_after_the_primary_deletes_them() {
    let d = dirs();
    let mut options = primary_options();
    options.enable_blob_files = true;
    options.min_blob_size = 64;
    options.blob_file_size = 16 << 10;
    options.disable_auto_compactions = true;
    options.enable_blob_garbage_collection = true;
    options.blob_garbage_collection_age_cutoff = 1.0;
    let primary = Db::open(&d.primary, options).unwrap();
    let value = |k: u64, version: u8| vec![b'a' + version; 200 + k as usize % 50];
    let mut want = BTreeMap::new();
    for k in 0..200 {
        primary.put(key(k), value(k, 0)).unwrap();
        want.insert(key(k), value(k, 0));
    }
    primary.flush().unwrap();
    let blob_files = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".blob"))
            .collect();
        names.sort();
        names
    };
    let first = blob_files(&d.primary);
    assert!(first.len() > 1, "values spread over blob files: {first:?}");

    let secondary = Db::open_as_secondary(&d.primary, &d.secondary, secondary_options()).unwrap();
    // Every value rewritten, then compacted: the collection leaves the first blob files
    // without a live value, and the primary deletes them.
    for k in 0..200 {
        primary.put(key(k), value(k, 1)).unwrap();
    }
    primary.flush().unwrap();
    primary.compact_range(None, None).unwrap();
    let now = blob_files(&d.primary);
    assert!(
        first.iter().all(|n| !now.contains(n)),
        "the first blob files are deleted: {first:?} -> {now:?}"
    );
    assert_same(&scan(&secondary), &want, "the view of the first catch-up");
    for k in 0..200 {
        assert_eq!(secondary.get(key(k)).unwrap(), Some(value(k, 0)));
    }
    // The next catch-up moves to the new files and closes the old ones.
    secondary.try_catch_up_with_primary().unwrap();
    for k in 0..200 {
        assert_eq!(secondary.get(key(k)).unwrap(), Some(value(k, 1)));
    }
}
