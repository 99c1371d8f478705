//! Crash at every operation of the manifest edits the operations surface makes:
//! `delete_files_in_range` (one edit dropping tables), `export_column_family` (links into a
//! directory renamed into place) and `create_column_family_with_import` (tables linked in,
//! one edit creating the family with them). After each crash (with and without a power cut)
//! the database reopens either before or after each step, never between: the default family
//! holds all its keys or none, the imported family is whole or absent, and a step that
//! returned is durable.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use strata::fs::fault::FaultFs;
use strata::{CfOptions, Db, Options, ReadOptions, WriteOptions};

const KEYS: usize = 60;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: usize) -> Vec<u8> {
    format!("value-{i}-").repeat(3).into_bytes()
}

/// Runs the workload; returns how many of its steps returned: 1 the data written and flushed
/// (synced), 2 the export, 3 the files dropped, 4 the import.
fn workload(root: &Path, fs: &FaultFs) -> usize {
    let mut opts = Options::default();
    opts.create_if_missing = true;
    opts.disable_auto_compactions = true;
    opts.target_file_size_base = 1024;
    opts.fs = Arc::new(fs.clone());
    let Ok(db) = Db::open(root.join("db"), opts) else {
        return 0;
    };
    let mut sync = WriteOptions::default();
    sync.sync = true;
    for i in 0..KEYS {
        if db.put_opt(key(i), value(i), &sync).is_err() {
            return 0;
        }
    }
    if db.compact_range(None, None).is_err() {
        return 0;
    }
    let cf = db.default_cf();
    let Ok(metadata) = db.export_column_family(&cf, root.join("export")) else {
        return 1;
    };
    if db.delete_files_in_range(&cf, None, None).is_err() {
        return 2;
    }
    if db
        .create_column_family_with_import(CfOptions::default(), "moved", &metadata)
        .is_err()
    {
        return 3;
    }
    4
}

fn read(db: &Db, cf: &strata::ColumnFamily) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut it = db.iter_cf(cf, &ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut all = BTreeMap::new();
    while it.valid() {
        all.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    all
}

fn check(root: &Path, done: usize, context: &str) {
    let dir = root.join("db");
    if !dir.join("CURRENT").exists() {
        assert_eq!(done, 0, "{context}");
        return;
    }
    let full: BTreeMap<Vec<u8>, Vec<u8>> = (0..KEYS).map(|i| (key(i), value(i))).collect();
    let mut options = Options::default();
    options.create_if_missing = true;
    let names = Db::list_cfs(&dir, &options).unwrap();
    let families: Vec<(String, CfOptions)> = names
        .iter()
        .filter(|n| *n != "default")
        .map(|n| (n.clone(), CfOptions::default()))
        .collect();
    let db = Db::open_cf(&dir, options, families)
        .unwrap_or_else(|e| panic!("{context}: reopen failed: {e}"));
    let default = read(&db, &db.default_cf());
    match done {
        // Crashed while writing (each put synced) or compacting: a prefix of the keys.
        0 => {
            let prefix: BTreeMap<Vec<u8>, Vec<u8>> =
                (0..default.len()).map(|i| (key(i), value(i))).collect();
            assert_eq!(default, prefix, "{context}: not a prefix of the writes");
        }
        // Crashed while exporting, which leaves the family as it is.
        1 => assert_eq!(default, full, "{context}"),
        // Crashed while dropping the files: all of them or none.
        2 => assert!(
            default.is_empty() || default == full,
            "{context}: the default family holds {} of {KEYS} keys",
            default.len()
        ),
        _ => assert!(default.is_empty(), "{context}: the dropped files came back"),
    }
    match db.cf("moved") {
        Some(moved) => assert_eq!(read(&db, &moved), full, "{context}: a partial import"),
        None => assert!(done < 4, "{context}: the import was lost"),
    }
    drop(db);
    // No table left behind that the manifest does not name (open deleted the orphans). The
    // reopened database flushes its replayed WALs in the background: wait for that (and
    // start no compaction) so that every table in the directory is one the version names.
    let mut quiet = Options::default();
    quiet.disable_auto_compactions = true;
    let db = Db::open_cf(
        &dir,
        quiet,
        Db::list_cfs(&dir, &Options::default())
            .unwrap()
            .into_iter()
            .filter(|n| n != "default")
            .map(|n| (n, CfOptions::default())),
    )
    .unwrap();
    db.flush().unwrap();
    let live: std::collections::BTreeSet<String> = db
        .live_files_metadata()
        .into_iter()
        .map(|f| f.name)
        .collect();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".sst") {
            assert!(live.contains(&name), "{context}: orphan table {name}");
        }
    }
}

#[test]
fn crash_at_every_operation_of_dropping_exporting_and_importing() {
    let clean = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    assert_eq!(workload(clean.path(), &fs), 4);
    let total = fs.ops();
    check(clean.path(), 4, "clean run");
    let mut crashes = 0;
    for n in 1..=total {
        for power_cut in [true, false] {
            if !power_cut && n % 3 != 0 {
                continue;
            }
            let root = tempfile::tempdir().unwrap();
            let fs = FaultFs::new();
            fs.crash_at(n);
            let done = workload(root.path(), &fs);
            if !fs.has_crashed() {
                continue;
            }
            crashes += 1;
            if power_cut {
                fs.power_loss().unwrap();
            }
            check(
                root.path(),
                done,
                &format!("crash at op {n} of {total}, power cut {power_cut}"),
            );
        }
    }
    assert!(
        crashes as u64 > total,
        "{crashes} crashes of {total} operations"
    );
}
