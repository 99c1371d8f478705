//! Merge operators through the whole engine: operands written, flushed and compacted (with
//! snapshots held) read back as the model says at every snapshot; and what a user sees when
//! the operator is missing or fails.

use std::collections::BTreeMap;
use std::sync::Arc;

use strata::internals::Rng;
use strata::{
    CompactionStyle, Db, ErrorKind, MergeOperator, Options, ReadOptions, Snapshot, UInt64Add,
    WriteBatch, WriteOptions,
};

type Model = BTreeMap<Vec<u8>, u64>;

fn options(op: Option<Arc<dyn MergeOperator>>) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 8 << 10;
    options.target_file_size_base = 8 << 10;
    options.max_bytes_for_level_base = 32 << 10;
    options.level0_file_num_compaction_trigger = 2;
    options.merge_operator = op;
    options
}

fn uint64add() -> Option<Arc<dyn MergeOperator>> {
    Some(Arc::new(UInt64Add))
}

fn le(n: u64) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

/// Every key of `model` (and no other) at `snapshot`, by point reads and by iterating in both
/// directions.
fn check(db: &Db, snapshot: Option<&Snapshot>, model: &Model, keys: u64, ctx: &str) {
    let mut read = ReadOptions::default();
    read.snapshot = snapshot.cloned();
    for i in 0..keys {
        let k = format!("k{i:03}").into_bytes();
        let got = db.get_opt(&k, &read).unwrap();
        assert_eq!(got, model.get(&k).map(|&n| le(n)), "{ctx}: get k{i:03}");
    }
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, &n)| (k.clone(), le(n))).collect();
    let mut it = db.iter(&read.clone());
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    assert_eq!(forward, want, "{ctx}: forward scan");
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    backward.reverse();
    assert_eq!(backward, want, "{ctx}: reverse scan");
}

/// Merges, puts and deletes on few keys, with snapshots taken all along and flushes and
/// compactions (automatic and manual, leveled and universal) in between: every snapshot
/// must go on reading what it saw, and the operands must end up combined.
#[test]
fn merges_read_correctly_at_every_snapshot_through_flushes_and_compactions() {
    for (seed, style) in [
        (1, CompactionStyle::Leveled),
        (2, CompactionStyle::Universal),
        (3, CompactionStyle::Leveled),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut with_style = options(uint64add());
        with_style.compaction_style = style;
        let db = Db::open(dir.path(), with_style).unwrap();
        let mut rng = Rng::new(seed);
        let keys = 40;
        let mut model = Model::new();
        let mut snapshots: Vec<(Snapshot, Model)> = Vec::new();
        for step in 0..3000u64 {
            let k = format!("k{:03}", rng.below(keys)).into_bytes();
            match rng.below(20) {
                0 => {
                    db.delete(&k).unwrap();
                    model.remove(&k);
                }
                1 => {
                    let n = rng.below(1000);
                    db.put(&k, le(n)).unwrap();
                    model.insert(k, n);
                }
                _ => {
                    let n = rng.below(100);
                    db.merge(&k, le(n)).unwrap();
                    *model.entry(k).or_default() += n;
                }
            }
            if step % 150 == 0 {
                snapshots.push((db.snapshot(), model.clone()));
            }
            if step % 400 == 399 {
                // Release an older snapshot so that stripes join.
                snapshots.remove(rng.below(snapshots.len() as u64) as usize);
            }
            match step % 500 {
                250 => db.flush().unwrap(),
                499 => db.compact_all().unwrap(),
                _ => {}
            }
        }
        db.wait_for_compactions().unwrap();
        let ctx = format!("seed {seed} {style:?}");
        check(&db, None, &model, keys, &ctx);
        for (i, (s, m)) in snapshots.iter().enumerate() {
            check(&db, Some(s), m, keys, &format!("{ctx} snapshot {i}"));
        }
        db.compact_all().unwrap();
        for (i, (s, m)) in snapshots.iter().enumerate() {
            check(
                &db,
                Some(s),
                m,
                keys,
                &format!("{ctx} snapshot {i} compacted"),
            );
        }
        // Without snapshots, a full compaction leaves one put per key.
        snapshots.clear();
        db.compact_all().unwrap();
        check(&db, None, &model, keys, &format!("{ctx} at the end"));
        db.close().unwrap();
        // And after a reopen.
        let db = Db::open(dir.path(), options(uint64add())).unwrap();
        check(&db, None, &model, keys, &format!("{ctx} reopened"));
    }
}

/// A full compaction without snapshots combines every key's operands into one put: what is
/// left in the tables is one entry per live key.
#[test]
fn a_full_compaction_leaves_one_entry_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(uint64add())).unwrap();
    for round in 0..50u64 {
        for i in 0..20u64 {
            db.merge(format!("k{i:03}").as_bytes(), le(round)).unwrap();
        }
        if round % 10 == 9 {
            db.flush().unwrap();
        }
    }
    db.compact_all().unwrap();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        assert_eq!(it.value(), le((0..50).sum()));
        n += 1;
        it.next();
    }
    assert_eq!(n, 20);
    let shape = db.tree_shape();
    assert_eq!(shape.active_memtable_entries, 0);
    let entries = count_table_entries(dir.path());
    assert_eq!(entries, 20, "{shape:?}");
}

/// Entries in the tables of the database at `dir`, from their properties.
fn count_table_entries(dir: &std::path::Path) -> u64 {
    let fs = strata::fs::PosixFs;
    let (_, manifest) = strata::internals::current_manifest(&fs, dir).unwrap();
    let mut live = BTreeMap::new();
    for (_, edit) in strata::internals::read_edits(&fs, &manifest).unwrap() {
        for (_, number) in edit.deleted_files {
            live.remove(&number);
        }
        for (_, f) in edit.new_files {
            live.insert(f.number, f.entries);
        }
    }
    live.values().sum()
}

#[test]
fn a_merge_without_a_merge_operator_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(None)).unwrap();
    let err = db.merge(b"k", le(1)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        err.to_string(),
        "invalid argument: merge of key 'k' refused: no merge operator is configured for \
         column family 'default' (set merge_operator in its options)"
    );
    let mut batch = WriteBatch::new();
    batch.put(b"a", b"1").merge(b"b", b"2");
    let err = db.write(batch, &WriteOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        db.get(b"a").unwrap(),
        None,
        "nothing of the batch is applied"
    );
    assert_eq!(db.stats().last_sequence, 0);
}

#[test]
fn a_merge_record_read_without_a_merge_operator_is_an_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options(uint64add())).unwrap();
        db.put(b"base", le(5)).unwrap();
        db.flush().unwrap();
        db.merge(b"base", le(1)).unwrap();
        db.merge(b"wal", le(2)).unwrap();
        db.put(b"plain", b"v").unwrap();
        db.close().unwrap();
    }
    let want = |key: &str| {
        format!(
            "invalid argument: a merge record was found for key '{key}' but no merge operator \
             is configured for column family 'default'"
        )
    };
    let db = Db::open(dir.path(), options(None)).unwrap();
    assert_eq!(db.get(b"plain").unwrap().as_deref(), Some(&b"v"[..]));
    let err = db.get(b"wal").unwrap_err();
    assert_eq!(
        (err.kind(), err.to_string()),
        (ErrorKind::InvalidArgument, want("wal"))
    );
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    assert!(!it.valid());
    assert_eq!(it.status().unwrap_err().to_string(), want("base"));
    // Flushes and compactions keep the operands as they are: nothing is lost.
    db.flush().unwrap();
    db.compact_all().unwrap();
    let err = db.get(b"base").unwrap_err();
    assert_eq!(err.to_string(), want("base"));
    db.close().unwrap();
    let db = Db::open(dir.path(), options(uint64add())).unwrap();
    assert_eq!(db.get(b"base").unwrap(), Some(le(6)));
    assert_eq!(db.get(b"wal").unwrap(), Some(le(2)));
}

/// Fails every full merge; cannot merge partially.
struct Failing;

impl MergeOperator for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    fn full_merge(&self, _: &[u8], _: Option<&[u8]>, _: &[&[u8]]) -> Result<Vec<u8>, String> {
        Err("operand rejected".into())
    }
}

#[test]
fn a_failing_merge_operator_fails_the_read_and_the_flush_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options(Some(Arc::new(Failing)))).unwrap();
        db.put(b"k", b"base").unwrap();
        db.merge(b"k", b"x").unwrap();
        let err = db.get(b"k").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption);
        assert_eq!(
            err.to_string(),
            "corruption: merge operator 'failing' failed for key 'k': operand rejected"
        );
        let mut it = db.iter(&ReadOptions::default());
        it.seek_to_last();
        assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
        // The flush must merge the put and the operand, fails, and installs nothing; then
        // background work stops and writes are refused, as for any background error.
        let err = db.flush().unwrap_err();
        assert!(
            err.to_string().contains("merge operator 'failing'"),
            "{err}"
        );
        assert_eq!(db.tree_shape().levels[0].files, 0);
        assert!(db.put(b"other", b"v").is_err());
    }
    // The write is still in the WAL; with a working operator it reads back.
    let db = Db::open(
        dir.path(),
        options(Some(Arc::new(strata::StringAppend::new(b"+")))),
    )
    .unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"base+x"[..]));
}

/// Adds like `uint64add`, and panics on the operand `boom`.
struct PanicsOnBoom;

impl MergeOperator for PanicsOnBoom {
    fn name(&self) -> &str {
        "panics-on-boom"
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, String> {
        assert!(!operands.contains(&&b"boom"[..]), "boom");
        UInt64Add.full_merge(key, existing, operands)
    }
}

#[test]
fn an_operator_that_panics_in_a_flush_stops_background_work_without_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), options(Some(Arc::new(PanicsOnBoom)))).unwrap());
    db.put(b"k", le(1)).unwrap();
    db.merge(b"k", b"boom").unwrap();
    // The flush merges the two: it panics in the flush thread. The caller gets an error
    // naming the panic, where it used to wait forever (hence a thread and a time limit).
    let (tx, rx) = std::sync::mpsc::channel();
    let flusher = db.clone();
    std::thread::spawn(move || {
        let result = flusher.flush();
        // Let go of the database before answering: the test reopens it.
        drop(flusher);
        tx.send(result)
    });
    let e = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("flush returns")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
    assert!(
        e.to_string().contains("background flush panicked: boom"),
        "{e}"
    );
    // Writes are refused from now on; reads go on.
    assert_eq!(
        db.put(b"j", b"x").unwrap_err().kind(),
        ErrorKind::Unavailable
    );
    drop(db);
    // Nothing was lost: reopened with an operator that does not panic, the WAL replays.
    let db = Db::open(dir.path(), options(uint64add())).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(le(1)));
}
