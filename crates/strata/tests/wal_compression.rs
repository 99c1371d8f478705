//! `Options::wal_compression`: WAL records stored compressed when that saves an eighth of
//! them. Every reader of the WAL undoes it, whatever the reader's own options say: the
//! replay after a kill, `updates_since` and a secondary instance following the primary.
//! A copy of the directory taken while the database is open (its background work idle) is
//! what a restart after a kill finds.

use std::collections::BTreeMap;
use std::path::Path;

use strata::{Compression, Db, Options, ReadOptions};

fn options(wal_compression: Compression) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.wal_compression = wal_compression;
    options
}

/// Writes of values that compress (a phrase repeated) and of values that do not (random
/// bytes), with deletes among them, applied to `model` as well.
fn write(db: &Db, model: &mut BTreeMap<Vec<u8>, Vec<u8>>, round: u64) {
    let mut state = round.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut random_byte = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u8
    };
    for i in 0..3_000u64 {
        let key = format!("key-{:05}", (i * 7 + round) % 2_500).into_bytes();
        if i % 11 == 0 {
            db.delete(&key).unwrap();
            model.remove(&key);
            continue;
        }
        let value: Vec<u8> = match i % 3 {
            0 => (0..300).map(|_| random_byte()).collect(),
            _ => format!("value {i} of round {round}, ")
                .repeat(12)
                .into_bytes(),
        };
        db.put(&key, &value).unwrap();
        model.insert(key, value);
    }
}

fn contents(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
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

/// A copy of `dir` (the lock file left out) once `db`'s background work is idle: what a
/// restart after a kill finds. Returns the bytes of its WAL files.
fn copy_after_a_kill(db: &Db, dir: &Path, copy: &Path) -> u64 {
    db.wait_for_compactions().unwrap();
    std::fs::create_dir_all(copy).unwrap();
    let mut wal_bytes = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name != "LOCK" && entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), copy.join(&name)).unwrap();
            if name.to_string_lossy().ends_with(".log") {
                wal_bytes += entry.metadata().unwrap().len();
            }
        }
    }
    wal_bytes
}

/// The same writes under each algorithm, into the WAL made at open and then into the one
/// made at a memtable switch: a restart after a kill (opened without the option, since
/// readers need nothing of it) replays them all, and each WAL is smaller than the
/// uncompressed one by what the compressible values save.
#[test]
fn a_kill_replays_a_compressed_wal_whole() {
    let mut uncompressed_wals = Vec::new();
    for compression in [
        Compression::None,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let db = Db::open(&path, options(compression)).unwrap();
        let mut model = BTreeMap::new();
        let mut wals = Vec::new();
        for round in 1..=2 {
            // Round 1 goes to the WAL made at open; the flush after it switches the memtable,
            // and round 2 goes to the WAL made then.
            write(&db, &mut model, round);
            let copy = dir.path().join(format!("copy{round}"));
            wals.push(copy_after_a_kill(&db, &path, &copy));
            let reopened = Db::open(&copy, options(Compression::None)).unwrap();
            assert_eq!(contents(&reopened), model, "{compression:?}, round {round}");
            reopened.close().unwrap();
            db.flush().unwrap();
        }
        db.close().unwrap();
        if compression == Compression::None {
            uncompressed_wals = wals;
            continue;
        }
        // Two thirds of the values are a phrase repeated twelve times.
        for (wal, uncompressed) in wals.iter().zip(&uncompressed_wals) {
            assert!(
                *wal < uncompressed * 6 / 10,
                "{compression:?}: a WAL of {wal} bytes against {uncompressed}"
            );
        }
    }
}

/// `updates_since` reads the compressed WAL's batches as they were written, and a secondary
/// instance replays it into the same contents as the primary's.
#[test]
fn updates_since_and_a_secondary_read_a_compressed_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (path, secondary_path) = (dir.path().join("db"), dir.path().join("secondary"));
    let db = Db::open(&path, options(Compression::Zstd)).unwrap();
    let mut model = BTreeMap::new();
    write(&db, &mut model, 3);

    let mut replayed = 0;
    let mut expect_seq = 1;
    for item in db.updates_since(1).unwrap() {
        let (seq, batch) = item.unwrap();
        assert_eq!(seq, expect_seq, "batches in order, none missing");
        expect_seq += batch.len() as u64;
        replayed += batch.len();
    }
    assert_eq!(replayed, 3_000);

    let secondary = Db::open_as_secondary(&path, &secondary_path, Options::default()).unwrap();
    assert_eq!(contents(&secondary), model);
    write(&db, &mut model, 4);
    db.flush_wal(false).unwrap();
    secondary.try_catch_up_with_primary().unwrap();
    assert_eq!(contents(&secondary), model);
    drop(secondary);
    db.close().unwrap();
}
