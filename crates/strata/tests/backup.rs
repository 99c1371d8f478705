//! Incremental backups: each backup restores to exactly the database of its moment (column
//! families, prepared transactions and blob files included), a later backup copies only new
//! tables and blob files,
//! damage is found and refused naming the file, deletes keep what other backups use, and a
//! crash at any file operation of a backup leaves only whole backups.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::fs::fault::FaultFs;
use strata::fs::FileSystem;
use strata::TransactionBase;
use strata::{
    BackupEngine, CfOptions, Db, ErrorKind, Options, TransactionDb, TransactionOptions, WriteBatch,
    WriteOptions,
};

/// The contents of a database: family name to its pairs.
type Model = BTreeMap<String, BTreeMap<Vec<u8>, Vec<u8>>>;

const FAMILIES: [&str; 2] = ["default", "index"];

fn options() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.write_buffer_size = 32 << 10;
    // The larger values in blob files, which backups share like tables.
    options.enable_blob_files = true;
    options.min_blob_size = 32;
    // No merge on L0's file count between the rounds of a test: a background compaction
    // finishing just before a backup would rewrite the tables it means to find shared.
    options.level0_file_num_compaction_trigger = 64;
    options.level0_slowdown_writes_trigger = 80;
    options.level0_stop_writes_trigger = 100;
    options
}

fn open_with_families(dir: &Path, options: Options) -> Db {
    Db::open_cf(dir, options, [("index", CfOptions::default())]).unwrap()
}

/// Every pair of every family of `db`.
fn contents(db: &Db) -> Model {
    let mut out = Model::new();
    for name in FAMILIES {
        let cf = db.cf(name).unwrap();
        let mut pairs = BTreeMap::new();
        for kv in db.range_cf::<&[u8], _>(&cf, ..).unwrap() {
            let (k, v) = kv.unwrap();
            pairs.insert(k, v);
        }
        out.insert(name.to_string(), pairs);
    }
    out
}

/// Sizes of the files of directory `dir` by name (empty if it does not exist).
fn sizes(dir: &Path) -> BTreeMap<String, u64> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                e.metadata().unwrap().len(),
            )
        })
        .collect()
}

/// A deterministic stream of numbers (the tests need variety, not randomness).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % bound
    }
}

/// What happens between two backups, one row each: writes (puts and deletes over both
/// families), then what is done to the tree before the backup.
struct Round {
    writes: u64,
    then: &'static str,
}

const ROUNDS: &[Round] = &[
    // Tables from flushes, then the memtable's rest (the checkpoint flushes it).
    Round {
        writes: 3000,
        then: "flush",
    },
    // A few writes: the second backup must copy only the table they make.
    Round {
        writes: 50,
        then: "nothing",
    },
    // No writes at all: nothing but the small private files is copied.
    Round {
        writes: 0,
        then: "nothing",
    },
    // A compaction replaces the tables: the backup copies the new ones.
    Round {
        writes: 1500,
        then: "compact",
    },
    Round {
        writes: 200,
        then: "nothing",
    },
];

#[test]
fn each_backup_restores_the_database_of_its_moment_and_copies_only_new_tables() {
    let root = tempfile::tempdir().unwrap();
    let db = open_with_families(&root.path().join("db"), options());
    let index = db.cf("index").unwrap();
    let backup_dir = root.path().join("backups");
    let mut engine = BackupEngine::open(&backup_dir).unwrap();
    let mut rng = Lcg(7);
    let mut model = Model::new();
    let mut moments: Vec<(u64, Model)> = Vec::new();
    for (round, r) in ROUNDS.iter().enumerate() {
        for _ in 0..r.writes {
            let (cf, name) = if rng.next(3) == 0 {
                (&index, "index")
            } else {
                (&db.default_cf(), "default")
            };
            let key = format!("k{:05}", rng.next(4000)).into_bytes();
            let family = model.entry(name.to_string()).or_default();
            if rng.next(5) == 0 {
                db.delete_cf(cf, &key).unwrap();
                family.remove(&key);
            } else {
                let value = format!("{round}-{}", "v".repeat(rng.next(200) as usize));
                db.put_cf(cf, &key, value.as_bytes()).unwrap();
                family.insert(key, value.into_bytes());
            }
        }
        match r.then {
            "flush" => db.flush().unwrap(),
            "compact" => db.compact_all().unwrap(),
            _ => {}
        }
        for name in FAMILIES {
            model.entry(name.to_string()).or_default();
        }
        assert_eq!(contents(&db), model, "round {round}: the model drifted");

        let shared_before = sizes(&backup_dir.join("shared"));
        let info = engine.create_backup(&db).unwrap();
        assert_eq!(info.id, round as u64 + 1, "ids count up from 1");
        // What was copied: the tables new in shared/, and the private files.
        let shared_after = sizes(&backup_dir.join("shared"));
        let new_tables: u64 = shared_after
            .iter()
            .filter(|(name, _)| !shared_before.contains_key(*name))
            .map(|(_, size)| size)
            .sum();
        let private = sizes(&backup_dir.join(format!("private/{:06}", info.id)));
        let private_bytes: u64 = private.values().sum();
        assert_eq!(
            info.copied_bytes,
            new_tables + private_bytes,
            "round {round}: {info:?}"
        );
        assert!(private.contains_key("CURRENT") && private.contains_key("IDENTITY"));
        assert!(
            private
                .keys()
                .all(|n| !n.ends_with(".sst") && !n.ends_with(".blob")),
            "{private:?}"
        );
        if round > 0 && r.then != "compact" {
            // An incremental backup: most of the tables were there already (a compaction
            // rewrites them all).
            assert!(info.copied_bytes < info.size, "round {round}: {info:?}");
        }
        if r.writes == 0 {
            assert_eq!(new_tables, 0, "round {round}: nothing new to copy");
        }
        assert!(!backup_dir.join("staging").exists());
        moments.push((info.id, model.clone()));
    }

    let listed = engine.list_backups();
    assert_eq!(
        listed.iter().map(|b| b.id).collect::<Vec<_>>(),
        (1..=ROUNDS.len() as u64).collect::<Vec<_>>()
    );
    let shared = sizes(&backup_dir.join("shared"));
    assert!(shared.keys().any(|n| n.ends_with(".blob")), "{shared:?}");
    // Backups 2 and 3 hold the same tables (no writes between), so they share all of them.
    assert!(listed[1].shared_bytes > 0 && listed[2].shared_bytes > 0);
    db.put(b"after-every-backup", b"x").unwrap();
    for (id, want) in &moments {
        engine.verify_backup(*id).unwrap();
        let target = root.path().join(format!("restored-{id}"));
        engine.restore(*id, &target).unwrap();
        let restored = open_with_families(&target, Options::default());
        assert_eq!(&contents(&restored), want, "backup {id}");
        restored.close().unwrap();
    }
}

#[test]
fn a_backup_taken_while_another_thread_writes_holds_whole_batches_only() {
    let root = tempfile::tempdir().unwrap();
    let db = Arc::new(open_with_families(&root.path().join("db"), options()));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let index = db.cf("index").unwrap();
            let mut n = 0u64;
            // Batch n writes 8 keys across both families, each holding n.
            while !stop.load(Ordering::Relaxed) || n < 200 {
                let mut batch = WriteBatch::new();
                for k in 0..8 {
                    let key = format!("key{k}");
                    if k % 2 == 0 {
                        batch.put(key.as_bytes(), n.to_be_bytes());
                    } else {
                        batch.put_cf(&index, key.as_bytes(), n.to_be_bytes());
                    }
                }
                batch.put(format!("batch{n:08}").as_bytes(), b"");
                db.write(batch, &WriteOptions::default()).unwrap();
                n += 1;
            }
            n
        })
    };
    let mut engine = BackupEngine::open(root.path().join("backups")).unwrap();
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(engine.create_backup(&db).unwrap().id);
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    for id in ids {
        let target = root.path().join(format!("r{id}"));
        engine.restore(id, &target).unwrap();
        let r = open_with_families(&target, Options::default());
        let index = r.cf("index").unwrap();
        let batches = r.range(&b"batch"[..]..&b"batci"[..]).count() as u64;
        assert!(batches <= written);
        // A prefix of the batches, and every key holds the last one's number.
        for n in 0..batches {
            assert!(r.get(format!("batch{n:08}").as_bytes()).unwrap().is_some());
        }
        for k in 0..8 {
            let key = format!("key{k}");
            let got = if k % 2 == 0 {
                r.get(key.as_bytes()).unwrap()
            } else {
                r.get_cf(&index, key.as_bytes()).unwrap()
            };
            let want = batches.checked_sub(1).map(|n| n.to_be_bytes().to_vec());
            assert_eq!(got, want, "backup {id}, {key}: batch {batches} split");
        }
    }
}

#[test]
fn a_prepared_transaction_is_backed_up_and_offered_after_restore() {
    let root = tempfile::tempdir().unwrap();
    let tdb = TransactionDb::open(root.path().join("db"), options()).unwrap();
    tdb.db().put(b"plain", b"1").unwrap();
    let mut t = tdb.transaction(&WriteOptions::default(), &TransactionOptions::default());
    t.put(b"in-flight", b"2").unwrap();
    t.set_name("xid-7").unwrap();
    t.prepare().unwrap();
    let mut engine = BackupEngine::open(root.path().join("backups")).unwrap();
    let info = engine.create_backup(tdb.db()).unwrap();
    t.commit().unwrap();
    let target = root.path().join("restored");
    engine.restore(info.id, &target).unwrap();
    let restored = TransactionDb::open(&target, Options::default()).unwrap();
    assert_eq!(
        restored.db().get(b"plain").unwrap().as_deref(),
        Some(&b"1"[..])
    );
    assert_eq!(restored.db().get(b"in-flight").unwrap(), None);
    let mut prepared = restored.prepared_transactions();
    assert_eq!(prepared.len(), 1);
    assert_eq!(prepared[0].name(), Some(&b"xid-7"[..]));
    prepared.pop().unwrap().commit().unwrap();
    assert_eq!(
        restored.db().get(b"in-flight").unwrap().as_deref(),
        Some(&b"2"[..])
    );
}

/// Two databases make tables of the same names with different contents: backed up into one
/// directory, neither takes the other's table for its own.
#[test]
fn tables_of_one_name_from_two_databases_are_kept_apart() {
    let root = tempfile::tempdir().unwrap();
    let mut engine = BackupEngine::open(root.path().join("backups")).unwrap();
    let mut want = Vec::new();
    // One memtable and no compaction: each database's only table comes from the flush, so
    // both number it alike whatever the machine's timing.
    let mut one_table = options();
    one_table.write_buffer_size = 4 << 20;
    one_table.disable_auto_compactions = true;
    for (n, name) in ["a", "b"].into_iter().enumerate() {
        let db = open_with_families(&root.path().join(name), one_table.clone());
        for i in 0..500u32 {
            db.put(format!("k{i:04}").as_bytes(), name.repeat(30).as_bytes())
                .unwrap();
        }
        db.flush().unwrap();
        let info = engine.create_backup(&db).unwrap();
        // The same file names, but nothing in common.
        assert_eq!(info.copied_bytes, info.size, "database {name}");
        assert_eq!(info.id, n as u64 + 1);
        want.push((info.id, contents(&db)));
    }
    let tables = |id: u64| -> BTreeSet<String> {
        stored_files(&root.path().join("backups"), id)
            .iter()
            .filter(|p| p.starts_with("shared"))
            .map(|p| p.to_str().unwrap()[7..13].to_string())
            .collect()
    };
    assert_eq!(tables(1), tables(2), "the table numbers are the same");
    for (id, model) in want {
        let target = root.path().join(format!("restored-{id}"));
        engine.restore(id, &target).unwrap();
        let restored = open_with_families(&target, Options::default());
        assert_eq!(contents(&restored), model, "backup {id}");
    }
}

#[test]
fn a_database_opened_read_only_cannot_be_backed_up_and_nothing_is_left() {
    let root = tempfile::tempdir().unwrap();
    let db_dir = root.path().join("db");
    open_with_families(&db_dir, options()).close().unwrap();
    let db = Db::open_read_only(&db_dir, Options::default()).unwrap();
    let backups = root.path().join("backups");
    let mut engine = BackupEngine::open(&backups).unwrap();
    let err = engine.create_backup(&db).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.to_string().contains("read-only"), "{err}");
    assert!(engine.list_backups().is_empty());
    let mut left: Vec<String> = sizes(&backups).into_keys().collect();
    left.sort();
    assert_eq!(left, ["BACKUP", "LOCK", "meta", "private", "shared"]);
}

/// A database with two backups, the second sharing tables with the first.
fn two_backups(root: &Path) -> (Db, BackupEngine) {
    let db = open_with_families(&root.join("db"), options());
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), [7; 50]).unwrap();
    }
    db.flush().unwrap();
    let mut engine = BackupEngine::open(root.join("backups")).unwrap();
    engine.create_backup(&db).unwrap();
    db.put(b"more", b"x").unwrap();
    engine.create_backup(&db).unwrap();
    (db, engine)
}

/// The stored files of backup `id`, relative to the backup directory, from its metadata.
fn stored_files(backup_dir: &Path, id: u64) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(backup_dir.join(format!("meta/{id:06}"))).unwrap();
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            match f.as_slice() {
                ["shared", name, size, crc] => {
                    let (stem, ext) = name.rsplit_once('.').unwrap();
                    Some(PathBuf::from(format!("shared/{stem}_{crc}_{size}.{ext}")))
                }
                ["private", name, _, _] => Some(PathBuf::from(format!("private/{id:06}/{name}"))),
                _ => None,
            }
        })
        .collect()
}

/// Ways to damage a file of a backup, each with what verify must say.
const DAMAGE: &[(&str, &str)] = &[
    ("flip a byte", "crc32c"),
    ("truncate", "bytes, the backup's metadata says"),
    ("remove", "is missing"),
];

fn damage(path: &Path, how: &str) {
    match how {
        "flip a byte" => {
            let mut bytes = std::fs::read(path).unwrap();
            let at = bytes.len() / 2;
            bytes[at] ^= 0x40;
            std::fs::write(path, bytes).unwrap();
        }
        "truncate" => {
            let len = std::fs::metadata(path).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .unwrap()
                .set_len(len - 1)
                .unwrap();
        }
        "remove" => std::fs::remove_file(path).unwrap(),
        _ => unreachable!("{how}"),
    }
}

#[test]
fn a_damaged_file_is_found_by_verify_and_refused_by_restore_naming_it() {
    for which in ["a shared table", "a private file"] {
        for (how, says) in DAMAGE {
            let root = tempfile::tempdir().unwrap();
            let (_db, engine) = two_backups(root.path());
            let backups = root.path().join("backups");
            let files = stored_files(&backups, 2);
            let victim = files
                .iter()
                .find(|p| match which {
                    "a shared table" => p.starts_with("shared"),
                    _ => p.to_str().unwrap().contains("MANIFEST-"),
                })
                .unwrap();
            let path = backups.join(victim);
            damage(&path, how);
            let context = format!("{how} {which} ({})", victim.display());
            let err = engine.verify_backup(2).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains(&path.display().to_string()) && msg.contains(says),
                "{context}: {msg}"
            );
            let target = root.path().join("restored");
            let err = engine.restore(2, &target).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains(&path.display().to_string()),
                "{context}: {msg}"
            );
            assert!(
                !target.exists(),
                "{context}: a refused restore leaves nothing"
            );
            // An empty target made by the caller stays, empty.
            std::fs::create_dir(&target).unwrap();
            engine.restore(2, &target).unwrap_err();
            assert!(sizes(&target).is_empty(), "{context}");
            // Backup 1 does not hold the damaged file unless it shares it.
            if !stored_files(&backups, 1).contains(victim) {
                engine.verify_backup(1).unwrap();
            }
        }
    }
}

#[test]
fn restore_into_a_directory_that_is_not_empty_is_refused_and_changes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let (_db, engine) = two_backups(root.path());
    let target = root.path().join("target");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("precious"), b"keep me").unwrap();
    let err = engine.restore(1, &target).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        err.to_string(),
        format!(
            "invalid argument: restore target {} is not empty: restore into a new or empty directory",
            target.display()
        )
    );
    assert_eq!(
        sizes(&target),
        BTreeMap::from([("precious".to_string(), 7)])
    );
    // An id that does not exist.
    let err = engine.restore(9, root.path().join("other")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("backup 9 does not exist"), "{err}");
    assert_eq!(
        engine.verify_backup(9).unwrap_err().kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn delete_and_purge_keep_the_files_other_backups_use_and_remove_the_rest() {
    let root = tempfile::tempdir().unwrap();
    let (db, mut engine) = two_backups(root.path());
    let backups = root.path().join("backups");
    // A third backup after a compaction that replaces every table.
    db.put(b"third", b"y").unwrap();
    db.compact_all().unwrap();
    engine.create_backup(&db).unwrap();
    let used_by = |ids: &[u64]| -> BTreeSet<PathBuf> {
        ids.iter()
            .flat_map(|&id| stored_files(&backups, id))
            .filter(|p| p.starts_with("shared"))
            .collect()
    };
    let in_shared = || -> BTreeSet<PathBuf> {
        sizes(&backups.join("shared"))
            .into_keys()
            .map(|n| Path::new("shared").join(n))
            .collect()
    };
    assert_eq!(in_shared(), used_by(&[1, 2, 3]));
    assert!(
        !used_by(&[1]).is_disjoint(&used_by(&[2])),
        "1 and 2 share tables"
    );

    engine.delete_backup(1).unwrap();
    assert_eq!(in_shared(), used_by(&[2, 3]));
    assert!(!backups.join("meta/000001").exists());
    assert!(!backups.join("private/000001").exists());
    engine.verify_backup(2).unwrap();
    assert_eq!(
        engine.delete_backup(1).unwrap_err().kind(),
        ErrorKind::NotFound
    );

    // A fourth, then keep the newest two.
    db.put(b"fourth", b"z").unwrap();
    engine.create_backup(&db).unwrap();
    assert_eq!(engine.purge_old_backups(2).unwrap(), vec![2]);
    assert_eq!(
        engine
            .list_backups()
            .iter()
            .map(|b| b.id)
            .collect::<Vec<_>>(),
        [3, 4]
    );
    assert_eq!(in_shared(), used_by(&[3, 4]));
    for id in [3, 4] {
        engine.verify_backup(id).unwrap();
    }
    // Ids go on from the newest.
    assert_eq!(engine.create_backup(&db).unwrap().id, 5);
    assert_eq!(engine.purge_old_backups(0).unwrap(), vec![3, 4, 5]);
    assert!(in_shared().is_empty());
    assert!(sizes(&backups.join("private")).is_empty());
}

#[test]
fn damaged_metadata_is_reported_and_keeps_every_shared_table_until_deleted() {
    let root = tempfile::tempdir().unwrap();
    let (_db, engine) = two_backups(root.path());
    drop(engine);
    let backups = root.path().join("backups");
    let meta = backups.join("meta/000001");
    let text = std::fs::read_to_string(&meta).unwrap();
    std::fs::write(&meta, text.replace("timestamp", "timestamq")).unwrap();
    let shared = sizes(&backups.join("shared"));
    let mut engine = BackupEngine::open(&backups).unwrap();
    assert_eq!(engine.damaged_backups(), [1]);
    assert_eq!(
        engine
            .list_backups()
            .iter()
            .map(|b| b.id)
            .collect::<Vec<_>>(),
        [2]
    );
    let err = engine.verify_backup(1).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(
        err.to_string().contains(&meta.display().to_string())
            && err.to_string().contains("checksum mismatch"),
        "{err}"
    );
    // Deleting backup 2 must not remove tables backup 1 may name.
    engine.delete_backup(2).unwrap();
    assert_eq!(sizes(&backups.join("shared")), shared);
    engine.delete_backup(1).unwrap();
    assert!(sizes(&backups.join("shared")).is_empty());
    assert!(engine.damaged_backups().is_empty());
}

#[test]
fn a_directory_that_is_not_a_backup_directory_is_refused_and_a_busy_one_too() {
    let root = tempfile::tempdir().unwrap();
    let other = root.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), b"mine").unwrap();
    let err = BackupEngine::open(&other).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        err.to_string(),
        format!(
            "invalid argument: {} is not empty and is not a Strata backup directory (no BACKUP file)",
            other.display()
        )
    );
    assert_eq!(sizes(&other).len(), 1, "nothing written into it");

    let dir = root.path().join("backups");
    let engine = BackupEngine::open(&dir).unwrap();
    let err = BackupEngine::open(&dir).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert!(err.to_string().contains("in use"), "{err}");
    drop(engine);
    BackupEngine::open(&dir).unwrap();

    std::fs::write(dir.join("BACKUP"), b"something else\n").unwrap();
    let err = BackupEngine::open(&dir).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(
        err.to_string().contains("not a Strata backup marker"),
        "{err}"
    );
}

/// Writes the data of backup 1 and of backup 2 through `fs`, makes backup 1, and returns
/// the database and engine ready for backup 2 with the expected contents of both.
fn crash_setup(root: &Path, fs: &FaultFs) -> (Db, BackupEngine, Model, Model) {
    let mut through_fs = options();
    through_fs.fs = Arc::new(fs.clone());
    // No background compaction: the same operations on every run.
    through_fs.disable_auto_compactions = true;
    let db = open_with_families(&root.join("db"), through_fs);
    let index = db.cf("index").unwrap();
    for i in 0..300u32 {
        db.put(format!("k{i:04}").as_bytes(), [1; 40]).unwrap();
        db.put_cf(&index, format!("i{i:04}").as_bytes(), b"1")
            .unwrap();
    }
    db.flush().unwrap();
    let mut engine =
        BackupEngine::open_with_fs(root.join("backups"), Arc::new(fs.clone())).unwrap();
    engine.create_backup(&db).unwrap();
    let first = contents(&db);
    for i in 0..50u32 {
        db.put(format!("k{i:04}").as_bytes(), b"2").unwrap();
    }
    db.delete_cf(&index, b"i0001").unwrap();
    let second = contents(&db);
    (db, engine, first, second)
}

#[test]
fn a_crash_at_any_operation_of_a_backup_leaves_only_whole_backups() {
    let clean = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let (db, mut engine, _, _) = crash_setup(clean.path(), &fs);
    let before = fs.ops();
    engine.create_backup(&db).unwrap();
    let total = fs.ops() - before;
    assert!(total > 10, "{total} operations");
    drop((db, engine));

    for n in 1..=total {
        for power_cut in [false, true] {
            let root = tempfile::tempdir().unwrap();
            let fs = FaultFs::new();
            let (db, mut engine, first, second) = crash_setup(root.path(), &fs);
            fs.crash_at(n);
            let result = engine.create_backup(&db);
            let context = format!("crash at operation {n} of {total}, power cut {power_cut}");
            assert!(fs.has_crashed(), "{context}");
            drop((db, engine));
            if power_cut {
                fs.power_loss().unwrap();
            }
            fs.restart();
            let backups = root.path().join("backups");
            let mut engine = BackupEngine::open(&backups).unwrap();
            assert!(engine.damaged_backups().is_empty(), "{context}");
            let ids: Vec<u64> = engine.list_backups().iter().map(|b| b.id).collect();
            // The second backup exists only once its metadata is in place, which is the
            // last step (what follows, removing the staging checkpoint, may fail without
            // failing the backup); a failure once it is there is the sync of `meta/`.
            match (ids.as_slice(), &result) {
                ([1], Err(_)) => {}
                ([1, 2], Ok(_)) => {}
                ([1, 2], Err(e)) => assert!(
                    e.to_string().contains("sync directory") && e.to_string().contains("meta"),
                    "{context}: {e}"
                ),
                (other, _) => panic!("{context}: backups {other:?} after {result:?}"),
            }
            for (&id, want) in ids.iter().zip([&first, &second]) {
                engine
                    .verify_backup(id)
                    .unwrap_or_else(|e| panic!("{context}: backup {id}: {e}"));
                let target = root.path().join(format!("restored-{id}"));
                engine.restore(id, &target).unwrap();
                let restored = open_with_families(&target, Options::default());
                assert_eq!(&contents(&restored), want, "{context}: backup {id}");
            }
            // The next backup clears what the crash left and works.
            let db = open_with_families(&root.path().join("db"), options());
            let next = engine.create_backup(&db).unwrap();
            assert_eq!(next.id, ids.len() as u64 + 1, "{context}");
            let mut used = BTreeSet::new();
            for b in engine.list_backups() {
                engine.verify_backup(b.id).unwrap();
                used.extend(stored_files(&backups, b.id));
            }
            let mut present = BTreeSet::new();
            for sub in ["shared", "private", "meta"] {
                for (name, _) in sizes(&backups.join(sub)) {
                    let p = Path::new(sub).join(&name);
                    if sub == "private" {
                        for (f, _) in sizes(&backups.join(&p)) {
                            present.insert(p.join(f));
                        }
                    } else if sub == "shared" {
                        present.insert(p);
                    }
                }
            }
            assert_eq!(present, used, "{context}: files no backup names");
            assert!(!backups.join("staging").exists() && !backups.join("staging.tmp").exists());
        }
    }
}

/// When the rename of a backup's metadata is done but the sync after it fails, the backup is
/// there on disk: the same engine's next backup must keep it, not take its id or files.
#[test]
fn a_backup_whose_metadata_sync_failed_is_kept_by_the_next_one() {
    let clean = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let (db, mut engine, _, _) = crash_setup(clean.path(), &fs);
    let before = fs.ops();
    engine.create_backup(&db).unwrap();
    let total = fs.ops() - before;
    drop((db, engine));
    let mut found = false;
    for n in (1..=total).rev() {
        let root = tempfile::tempdir().unwrap();
        let fs = FaultFs::new();
        let (db, mut engine, _, second) = crash_setup(root.path(), &fs);
        fs.crash_at(n);
        let Err(e) = engine.create_backup(&db) else {
            continue; // a failure after the backup was whole (removing the staging)
        };
        if !(e.to_string().contains("sync directory") && e.to_string().contains("meta")) {
            continue;
        }
        found = true;
        fs.restart();
        let third = engine.create_backup(&db).unwrap();
        assert_eq!(third.id, 3, "{e}");
        let ids: Vec<u64> = engine.list_backups().iter().map(|b| b.id).collect();
        assert_eq!(ids, [1, 2, 3]);
        engine.verify_backup(2).unwrap();
        let target = root.path().join("restored");
        engine.restore(2, &target).unwrap();
        let restored = open_with_families(&target, Options::default());
        assert_eq!(contents(&restored), second);
        break;
    }
    assert!(found, "no operation was the sync of meta/");
}

/// The fault-injecting file system is used by the engine itself, not only by the database.
#[test]
fn the_engine_does_its_io_through_the_file_system_it_is_given() {
    let root = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let engine = BackupEngine::open_with_fs(root.path().join("b"), Arc::new(fs.clone()));
    assert!(engine.is_ok());
    assert!(fs.ops() > 0);
    assert!(fs.exists(&root.path().join("b/BACKUP")));
}
