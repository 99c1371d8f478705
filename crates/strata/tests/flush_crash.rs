//! Crash at every step of a workload that flushes and compacts, with and without a power cut.
//!
//! A workload writes keys in order (every fifth with `sync`), with memtables small enough to
//! flush several times (table written, synced, manifest edit, CURRENT, WAL removal), and
//! compacts everything twice (output tables, manifest edit, input tables deleted). For each
//! operation N that changes a file, the fault file system crashes at N; then, in power-cut
//! mode, unsynced bytes and unsynced file names are dropped. The reopened database must hold
//! every write acknowledged before the last acknowledged sync write (a sync makes the WAL
//! durable through it), no value it was not given, and, after the reopen, no file that its
//! manifest does not name. The same again with key-value separation and blob garbage
//! collection on: blob files written by flushes and compactions, and moved by them; and once
//! more with the values put in blob files as they are written (`blob_separation_at_write`),
//! which recovery reads back through the WAL's references.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use strata::fs::fault::FaultFs;
use strata::fs::PosixFs;
use strata::internals::{current_manifest, read_edits, Version};
use strata::{Db, Options, WriteOptions};

const KEYS: usize = 150;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: usize) -> Vec<u8> {
    format!("value-{i}-").repeat(6).into_bytes()
}

/// Where values go.
#[derive(Clone, Copy, PartialEq)]
enum Separation {
    None,
    AtFlush,
    AtWrite,
}

/// Runs the workload; returns (index of the last acknowledged sync write, acknowledged).
/// With separation, values of 58 bytes and more (those of keys from 10 on) go to blob files,
/// and compactions move the values of the oldest half of the blob files.
fn workload(dir: &Path, fs: &FaultFs, separation: Separation) -> (Option<usize>, Vec<usize>) {
    let mut opts = Options::default();
    if separation != Separation::None {
        opts.blob_separation_at_write = separation == Separation::AtWrite;
        opts.enable_blob_files = true;
        opts.min_blob_size = 58;
        opts.blob_file_size = 256;
        opts.enable_blob_garbage_collection = true;
        opts.blob_garbage_collection_age_cutoff = 0.5;
    }
    opts.create_if_missing = true;
    opts.write_buffer_size = 4096;
    // Compactions run in this thread at fixed points, so every run does the same
    // operations in the same order, but for the syncs of WALs closed unsynced (see
    // `crash_at_every_operation`).
    opts.disable_auto_compactions = true;
    opts.target_file_size_base = 8192;
    opts.fs = Arc::new(fs.clone());
    let mut acked = Vec::new();
    let mut last_sync = None;
    let Ok(db) = Db::open(dir, opts) else {
        return (last_sync, acked);
    };
    for i in 0..KEYS {
        let sync = i % 5 == 4;
        let mut w = WriteOptions::default();
        w.sync = sync;
        if db.put_opt(key(i), value(i), &w).is_err() {
            break;
        }
        acked.push(i);
        if sync {
            last_sync = Some(i);
        }
        if i == KEYS / 2 && db.flush().is_err() {
            break;
        }
        if (i == KEYS / 3 || i == KEYS * 3 / 4) && db.compact_all().is_err() {
            break;
        }
    }
    drop(db); // closes; errors after the crash are ignored, as in a dying process
    (last_sync, acked)
}

fn check(dir: &Path, last_sync: Option<usize>, acked: &[usize], context: &str) {
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(dir, options).unwrap_or_else(|e| panic!("{context}: reopen failed: {e}"));
    let acked: HashSet<usize> = acked.iter().copied().collect();
    for i in 0..KEYS {
        let got = db.get(key(i)).unwrap();
        if let Some(v) = &got {
            assert_eq!(v, &value(i), "{context}: wrong value for key {i}");
        }
        if last_sync.is_some_and(|s| i <= s) && acked.contains(&i) {
            assert!(
                got.is_some(),
                "{context}: acknowledged key {i} lost (last sync {last_sync:?})"
            );
        }
    }
    // The recovered memtables go to tables, and the WALs with them (and the blob files that
    // only a WAL named, values written at put).
    db.flush().unwrap();
    db.close().unwrap();

    // No orphans: the tables on disk are exactly the manifest's.
    let (_, manifest) = current_manifest(&PosixFs, dir).unwrap();
    let mut version = Version::default();
    for (_, edit) in read_edits(&PosixFs, &manifest).unwrap() {
        version = version.apply(&edit).unwrap();
    }
    let live = version.live_files();
    let live_blobs: HashSet<u64> = version.live_blob_files().collect();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(n) = name.strip_suffix(".sst") {
            assert!(
                live.contains(&n.parse().unwrap()),
                "{context}: orphan table {name}"
            );
        }
        if let Some(n) = name.strip_suffix(".blob") {
            assert!(
                live_blobs.contains(&n.parse().unwrap()),
                "{context}: orphan blob file {name}"
            );
        }
        assert!(!name.ends_with(".tmp"), "{context}: leftover {name}");
    }
}

#[test]
fn crash_at_every_operation_of_a_flushing_workload() {
    crash_at_every_operation(Separation::None);
}

#[test]
fn crash_at_every_operation_of_a_workload_writing_blob_files() {
    crash_at_every_operation(Separation::AtFlush);
}

#[test]
fn crash_at_every_operation_of_a_workload_writing_blob_files_at_write() {
    crash_at_every_operation(Separation::AtWrite);
}

fn crash_at_every_operation(separation: Separation) {
    // A clean run counts the operations.
    let clean = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let (_, acked) = workload(&clean.path().join("db"), &fs, separation);
    if separation != Separation::None {
        let written = std::fs::read_dir(clean.path().join("db"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".blob")
            })
            .count();
        assert!(written > 2, "{written} blob files");
    }
    assert_eq!(acked.len(), KEYS);
    let total = fs.ops();
    assert!(total > 100, "{total} operations");

    let mut crashes = 0;
    for n in 1..=total {
        for power_cut in [true, false] {
            if !power_cut && n % 4 != 0 {
                continue;
            }
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("db");
            let fs = FaultFs::new();
            fs.crash_at(n);
            let (last_sync, acked) = workload(&dir, &fs, separation);
            if !fs.has_crashed() {
                // A synced write syncs the WALs closed unsynced that no flush has deleted yet,
                // which the background flush's pace decides: a run may do a few operations
                // fewer than the clean one did.
                assert!(n + 16 > total, "crash point {n} of {total} not reached");
                continue;
            }
            crashes += 1;
            if power_cut {
                fs.power_loss().unwrap();
            }
            let context = format!("crash at op {n} of {total}, power cut {power_cut}");
            if !dir.join("IDENTITY").exists() {
                assert!(
                    last_sync.is_none(),
                    "{context}: sync acknowledged before creation"
                );
                continue;
            }
            check(&dir, last_sync, &acked, &context);
        }
    }
    assert!(crashes as u64 > total);
}
