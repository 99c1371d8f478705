//! `Options::manual_wal_flush`: WAL records held in memory until `flush_wal`, a synced
//! write, a memtable switch, a checkpoint, the hold limit or close. A process that ends
//! leaves the WAL file as the OS has it; a copy of the directory taken while the database is
//! open is that state (once its background work is idle, so that no file changes during the
//! copy), and opening the copy is what a restart after a kill finds.

use std::path::Path;

use strata::{Db, Options, WriteOptions};

fn options(manual_wal_flush: bool) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.manual_wal_flush = manual_wal_flush;
    options
}

/// The keys a restart after a kill of `db` right now would find: a copy of its directory
/// (the lock file left out) taken once its flushes and compactions are done, opened.
fn keys_after_a_kill(db: &Db, dir: &Path, copy: &Path) -> Vec<String> {
    db.wait_for_compactions().unwrap();
    let _ = std::fs::remove_dir_all(copy);
    std::fs::create_dir_all(copy).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name != "LOCK" && entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), copy.join(&name)).unwrap();
        }
    }
    let db = Db::open(copy, options(false)).unwrap();
    let mut it = db.iter(&strata::ReadOptions::default());
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() {
        keys.push(String::from_utf8(it.key().to_vec()).unwrap());
        it.next();
    }
    db.close().unwrap();
    keys
}

fn names(keys: &[&str]) -> Vec<String> {
    keys.iter().map(|k| k.to_string()).collect()
}

/// What a kill leaves after each step, with the option on and off: held writes are lost, and
/// each way of appending them keeps every write before it.
#[test]
fn a_kill_loses_only_the_writes_still_held() {
    enum Step {
        Put(&'static str),
        SyncedPut(&'static str),
        FlushWal,
        Checkpoint,
    }
    use Step::*;
    // (step, keys a kill leaves with the option on, with it off)
    let steps: [(Step, &[&str], &[&str]); 7] = [
        (Put("a"), &[], &["a"]),
        (Put("b"), &[], &["a", "b"]),
        (FlushWal, &["a", "b"], &["a", "b"]),
        (Put("c"), &["a", "b"], &["a", "b", "c"]),
        (SyncedPut("d"), &["a", "b", "c", "d"], &["a", "b", "c", "d"]),
        (Put("e"), &["a", "b", "c", "d"], &["a", "b", "c", "d", "e"]),
        (
            Checkpoint,
            &["a", "b", "c", "d", "e"],
            &["a", "b", "c", "d", "e"],
        ),
    ];
    for manual in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path().join("db"), options(manual)).unwrap();
        for (i, (step, held_on, held_off)) in steps.iter().enumerate() {
            match step {
                Put(k) => db.put(k, "v").unwrap(),
                SyncedPut(k) => {
                    let mut sync = WriteOptions::default();
                    sync.sync = true;
                    db.put_opt(k, "v", &sync).unwrap();
                }
                FlushWal => db.flush_wal(false).unwrap(),
                Checkpoint => db.checkpoint(dir.path().join(format!("cp{i}"))).unwrap(),
            }
            let expected = if manual { held_on } else { held_off };
            assert_eq!(
                keys_after_a_kill(&db, &dir.path().join("db"), &dir.path().join("copy")),
                names(expected),
                "manual_wal_flush {manual}, after step {i}"
            );
        }
        db.close().unwrap();
        let db = Db::open(dir.path().join("db"), options(manual)).unwrap();
        assert_eq!(
            db.get("e").unwrap(),
            Some(b"v".to_vec()),
            "close appends them"
        );
        db.close().unwrap();
    }
}

/// Held records go to the file by themselves past the hold limit and at memtable switches,
/// in order: whatever a kill leaves is a prefix of the writes.
#[test]
fn a_kill_leaves_a_prefix_of_the_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = options(true);
    options.write_buffer_size = 256 << 10;
    let db = Db::open(dir.path().join("db"), options).unwrap();
    let n = 20_000;
    let mut seen_some = false;
    for round in 0..4 {
        for i in 0..n / 4 {
            let k = round * (n / 4) + i;
            db.put(format!("k{k:06}"), [b'v'; 100]).unwrap();
        }
        let keys = keys_after_a_kill(&db, &dir.path().join("db"), &dir.path().join("copy"));
        let expected: Vec<String> = (0..keys.len()).map(|k| format!("k{k:06}")).collect();
        assert_eq!(keys, expected, "round {round}: a prefix");
        assert!(keys.len() <= (round + 1) * (n / 4));
        seen_some |= !keys.is_empty();
    }
    assert!(
        seen_some,
        "2 MB of records: the limit and the switches appended some"
    );
    db.flush_wal(false).unwrap();
    let keys = keys_after_a_kill(&db, &dir.path().join("db"), &dir.path().join("copy"));
    assert_eq!(keys.len(), n);
    db.close().unwrap();
}

/// Holds every flush at its start until opened, and tells how many entries the first held
/// memtable had.
#[derive(Default)]
struct FlushGate {
    state: std::sync::Mutex<(bool, Option<u64>)>,
    changed: std::sync::Condvar,
}

impl strata::EventListener for FlushGate {
    fn on_flush_begin(&self, info: &strata::FlushJobInfo) {
        let mut state = self.state.lock().unwrap();
        state.1.get_or_insert(info.memtable_entries);
        self.changed.notify_all();
        while !state.0 {
            state = self.changed.wait(state).unwrap();
        }
    }
}

/// A memtable switch appends the held records to the WAL it closes: with the switched
/// memtable's flush held back, a kill finds every write of that memtable in the old WAL.
#[test]
fn a_memtable_switch_appends_the_held_records_to_the_old_wal() {
    let dir = tempfile::tempdir().unwrap();
    let gate = std::sync::Arc::new(FlushGate::default());
    let mut options = options(true);
    options.write_buffer_size = 64 << 10;
    // Room for the writes that come while the first flush is held, so that none stalls.
    options.max_write_buffer_number = 16;
    options.listeners.push(gate.clone());
    let db = Db::open(dir.path().join("db"), options).unwrap();
    let mut written = 0u64;
    let switched = loop {
        db.put(format!("k{written:06}"), [b'v'; 100]).unwrap();
        written += 1;
        if let Some(entries) = gate.state.lock().unwrap().1 {
            break entries;
        }
        assert!(written < 20_000, "no flush began");
    };
    // The flush is held: nothing in the directory changes while it is copied.
    let copy = dir.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(dir.path().join("db")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "LOCK" {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
    }
    gate.state.lock().unwrap().0 = true;
    gate.changed.notify_all();
    let reopened = Db::open(&copy, self::options(false)).unwrap();
    let mut found = 0u64;
    while reopened.get(format!("k{found:06}")).unwrap().is_some() {
        found += 1;
    }
    assert!(
        found >= switched && found <= written,
        "a kill after the switch: {found} writes kept, the switched memtable held {switched}, \
         {written} written"
    );
    reopened.close().unwrap();
    db.close().unwrap();
}
