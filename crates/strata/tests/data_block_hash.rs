//! Data-block hash indexes through the database: gets at every snapshot of keys with many
//! versions (running over blocks) answer as without the index, in both built-in orders, and
//! a database reopened with the option switched reads the tables of both kinds.

use std::sync::Arc;

use strata::fs::{FileSystem, PosixFs};
use strata::internals::Table;
use strata::{DataBlockIndexType, Db, Options, ReadOptions, ReverseBytewiseComparator};

const KEYS: u32 = 300;
const VERSIONS: u32 = 6;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: u32, version: u32) -> Vec<u8> {
    format!("v{i}.{version}").into_bytes()
}

/// (tables, data blocks, data blocks with a hash index) of the tables in `dir`.
fn hashed_blocks(dir: &std::path::Path) -> (u64, u64, u64) {
    let mut out = (0, 0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sst") {
            let file = PosixFs.open_random(&path).unwrap();
            let p = Table::read_properties(file.as_ref(), &path).unwrap();
            out.0 += 1;
            out.1 += p.data_blocks;
            out.2 += p.data_block_hash_indexes;
        }
    }
    out
}

fn options(hash: bool, reverse: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing = true;
    o.block_size = 256;
    o.block_restart_interval = 2;
    o.disable_auto_compactions = true;
    if hash {
        o.data_block_index_type = DataBlockIndexType::BinaryAndHash;
    }
    if reverse {
        o.comparator = Arc::new(ReverseBytewiseComparator);
    }
    o
}

/// Every key at each snapshot (taken after `rounds` rounds of writes), and keys never
/// written, read what was written last before the snapshot.
fn check_snapshots(db: &Db, snapshots: &[(usize, strata::Snapshot)], what: &str) {
    for (rounds, snapshot) in snapshots {
        let mut read = ReadOptions::default();
        read.snapshot = Some(snapshot.clone());
        for i in 0..KEYS {
            // Key i gets a version at every round up to i % VERSIONS.
            let want = (*rounds > 0).then(|| value(i, (*rounds as u32 - 1).min(i % VERSIONS)));
            let got = db.get_opt(key(i), &read).unwrap();
            assert_eq!(got, want, "{what}: key {i} after {rounds} rounds");
            let absent = [key(i), b"-".to_vec()].concat();
            assert_eq!(db.get_opt(&absent, &read).unwrap(), None, "{what}");
        }
    }
}

#[test]
fn gets_at_every_snapshot_read_the_same_with_and_without_hash_indexes() {
    for reverse in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options(true, reverse)).unwrap();
        let mut snapshots = vec![(0, db.snapshot())];
        for version in 0..VERSIONS {
            for i in 0..KEYS {
                if version <= i % VERSIONS {
                    db.put(key(i), value(i, version)).unwrap();
                }
            }
            snapshots.push((version as usize + 1, db.snapshot()));
        }
        db.flush().unwrap();
        let what = format!("reverse {reverse}");
        let (tables, blocks, hashed) = hashed_blocks(dir.path());
        assert_eq!((tables, hashed), (1, blocks), "{what}");
        check_snapshots(&db, &snapshots, &what);
        drop(snapshots);
        db.close().unwrap();
        // Reopened without the option: the hashed table reads as before, and the next
        // flush writes a table without hash indexes beside it.
        let db = Db::open(dir.path(), options(false, reverse)).unwrap();
        let newest = db.snapshot();
        check_snapshots(&db, &[(VERSIONS as usize, newest.clone())], &what);
        for i in 0..KEYS {
            db.put(format!("new{i}"), value(i, 0)).unwrap();
        }
        db.flush().unwrap();
        let (tables, _, after) = hashed_blocks(dir.path());
        assert_eq!((tables, after), (2, hashed), "{what}");
        check_snapshots(&db, &[(VERSIONS as usize, newest.clone())], &what);
        for i in 0..KEYS {
            let got = db.get(format!("new{i}")).unwrap();
            assert_eq!(got, Some(value(i, 0)), "{what}");
        }
        drop(newest);
        db.close().unwrap();
    }
}
