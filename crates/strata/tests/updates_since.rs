//! The change feed: `updates_since` replays the writes from any sequence number to the
//! state a model reached, across flushes (WALs kept in the archive), and says clearly when
//! the WAL it needs is gone.

use std::collections::BTreeMap;

use strata::{Db, ErrorKind, Options, ValueKind, WriteBatch, WriteOptions, WAL_ARCHIVE_DIR};

/// A small deterministic generator (xorshift64*), so that a failure replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Applies `batch` to `model` as the database would.
fn apply(model: &mut Model, batch: &WriteBatch) {
    for entry in batch.iter() {
        let e = entry.unwrap();
        assert_eq!(e.cf, 0);
        match e.kind {
            ValueKind::Put => {
                model.insert(e.key.to_vec(), e.value.to_vec());
            }
            ValueKind::Delete => {
                model.remove(e.key);
            }
            ValueKind::RangeDeletion => {
                let doomed: Vec<Vec<u8>> = model
                    .range(e.key.to_vec()..e.value.to_vec())
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in doomed {
                    model.remove(&k);
                }
            }
            other => panic!("unexpected kind {other:?}"),
        }
    }
}

fn keeping_wals() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 16 << 10;
    options.wal_ttl_seconds = 3600;
    options
}

#[test]
fn updates_since_any_sequence_replays_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), keeping_wals()).unwrap();
    let mut rng = Rng(42);
    let mut model = Model::new();
    // The model's state before each batch, by the batch's first sequence number.
    let mut before: BTreeMap<u64, Model> = BTreeMap::new();
    for step in 0..600 {
        let mut batch = WriteBatch::new();
        for _ in 0..1 + rng.below(4) {
            let k = format!("key{:03}", rng.below(200)).into_bytes();
            match rng.below(10) {
                0 => {
                    batch.delete(&k);
                }
                1 => {
                    let end = format!("key{:03}", rng.below(200)).into_bytes();
                    if k < end {
                        batch.delete_range(&k, &end);
                    }
                }
                _ => {
                    batch.put(&k, format!("v{step}").repeat(1 + rng.below(20) as usize));
                }
            }
        }
        if batch.is_empty() {
            continue;
        }
        let first = db.latest_sequence_number() + 1;
        assert_eq!(first, db.snapshot().sequence() + 1);
        before.insert(first, model.clone());
        db.write(batch.clone(), &WriteOptions::default()).unwrap();
        assert_eq!(
            db.latest_sequence_number(),
            first + batch.len() as u64 - 1,
            "a batch takes one number per update"
        );
        apply(&mut model, &batch);
        if rng.below(50) == 0 {
            db.flush().unwrap();
        }
    }
    assert!(
        dir.path().join(WAL_ARCHIVE_DIR).exists(),
        "flushes archived WALs"
    );
    let last = db.snapshot().sequence();
    for _ in 0..40 {
        let from = 1 + rng.below(last);
        let mut updates = db.updates_since(from).unwrap();
        let (first_seq, first) = updates.next().unwrap().unwrap();
        assert!(
            first_seq <= from && from < first_seq + first.len() as u64,
            "{from}"
        );
        let mut state = before[&first_seq].clone();
        apply(&mut state, &first);
        let mut expect_seq = first_seq + first.len() as u64;
        for item in updates {
            let (seq, batch) = item.unwrap();
            assert_eq!(seq, expect_seq, "batches in order, none missing");
            expect_seq += batch.len() as u64;
            apply(&mut state, &batch);
        }
        assert_eq!(expect_seq, last + 1);
        assert_eq!(state, model, "replay from {from}");
    }
    // Past the end: nothing.
    assert_eq!(db.updates_since(last + 1).unwrap().count(), 0);
}

#[test]
fn updates_since_a_deleted_wal_names_the_oldest_sequence_available() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = keeping_wals();
    options.wal_ttl_seconds = 0; // WALs are deleted once flushed
    let db = Db::open(dir.path(), options).unwrap();
    for i in 0..100 {
        db.put(format!("k{i}"), b"v").unwrap();
    }
    db.flush().unwrap();
    db.put(b"after", b"flush").unwrap();
    let last = db.snapshot().sequence();
    let err = db.updates_since(5).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let text = err.to_string();
    assert!(
        text.contains("sequence 5 is no longer in the WALs")
            && text.contains(&format!("the oldest sequence available is {last}")),
        "{text}"
    );
    let got: Vec<u64> = db
        .updates_since(last)
        .unwrap()
        .map(|u| u.unwrap().0)
        .collect();
    assert_eq!(got, vec![last]);
}

#[test]
fn the_archive_keeps_wals_within_the_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = keeping_wals();
    options.wal_ttl_seconds = 0;
    options.wal_size_limit_mb = 1;
    let db = Db::open(dir.path(), options).unwrap();
    for round in 0..12 {
        for i in 0..200 {
            db.put(format!("k{i}"), vec![round as u8; 1000]).unwrap();
        }
        db.flush().unwrap();
    }
    let archive = dir.path().join(WAL_ARCHIVE_DIR);
    let bytes: u64 = std::fs::read_dir(&archive)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(bytes > 0 && bytes <= 1 << 20, "{bytes}");
    // What is left replays from its oldest batch; older ones are refused.
    assert_eq!(
        db.updates_since(1).err().map(|e| e.kind()),
        Some(ErrorKind::NotFound)
    );
}
