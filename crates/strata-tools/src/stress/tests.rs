use super::crash::child_args;
use super::iterate::{IterPlan, PrefixMode};
use super::worker::{Worker, Writes};
use super::*;
use crate::engine_flags::parse_flags;

fn args(flags: &[&str]) -> StressArgs {
    let mut argv = vec!["--db=/nonexistent"];
    argv.extend_from_slice(flags);
    parse_flags(&argv).unwrap()
}

#[test]
fn values_identify_their_key_and_id_and_nothing_else() {
    let a = args(&["--min_value_size=1", "--max_value_size=40"]);
    for k in [0, 7, 123_456] {
        for id in [1, 2, u32::MAX] {
            let v = value(k, id, &a);
            assert_eq!(value_id(k, &v, &a), Some(id));
            assert_eq!(value_id(k + 1, &v, &a), None);
            let mut bad = v.clone();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            assert_eq!(
                value_id(k, &bad, &a),
                None,
                "{:?}",
                String::from_utf8_lossy(&v)
            );
        }
    }
    assert_eq!(key_index(&key(42)), Some(42));
    assert_eq!(key_index(b"x42"), None);
}

#[test]
fn the_child_gets_every_setting_of_the_parent() {
    // As .ci/run starts it.
    let parent: Vec<OsString> = [
        "--db",
        "/tmp/d",
        "--crash",
        "--duration",
        "60",
        "--compaction_style=1",
        "--sync=1",
        "--compression_type=zstd",
        "--keys=77",
        "--ops=put=1",
        "--bloom_bits=3",
        "--enable_blob_files",
        "--min_blob_size=100",
        "--blob_file_size=5000",
        "--enable_blob_garbage_collection=1",
        "--blob_garbage_collection_age_cutoff=0.5",
        "--blob_garbage_collection_force_threshold=0.8",
    ]
    .map(OsString::from)
    .to_vec();
    let child: StressArgs = parse_flags(&child_args(&parent, Path::new("/tmp/o"), 9)).unwrap();
    assert_eq!(child.db, Path::new("/tmp/d"));
    assert_eq!(child.options.compaction_style, 1);
    assert_eq!(child.options.compression_type, "zstd");
    assert_eq!(child.options.bloom_bits, 3);
    let o = options(&child).unwrap();
    assert!(o.enable_blob_files && o.enable_blob_garbage_collection);
    assert_eq!((o.min_blob_size, o.blob_file_size), (100, 5000));
    assert_eq!(
        (
            o.blob_garbage_collection_age_cutoff,
            o.blob_garbage_collection_force_threshold
        ),
        (0.5, 0.8)
    );
    assert!(child.options.sync && child.child && !child.crash);
    assert_eq!((child.keys, child.ops.as_str()), (77, "put=1"));
    assert_eq!((child.duration, child.seed), (1_000_000, 9));
    assert_eq!(child.expected_state.as_deref(), Some(Path::new("/tmp/o")));
}

#[test]
fn engine_defaults_are_the_library_s_but_for_tiny_sizes_more_threads_and_uint64add() {
    let o = options(&args(&[])).unwrap();
    let library = Options::default();
    assert_eq!(
        (
            o.write_buffer_size,
            o.target_file_size_base,
            o.max_bytes_for_level_base
        ),
        (64 << 10, 64 << 10, 256 << 10)
    );
    assert_eq!((o.enable_blob_files, o.blob_file_size), (false, 64 << 10));
    assert_eq!((o.max_background_jobs, o.max_subcompactions), (3, 2));
    assert_eq!(
        o.merge_operator.as_ref().map(|m| m.name()),
        Some("uint64add")
    );
    let mut same = o;
    same.merge_operator = None;
    same.create_if_missing = library.create_if_missing;
    same.write_buffer_size = library.write_buffer_size;
    same.target_file_size_base = library.target_file_size_base;
    same.max_bytes_for_level_base = library.max_bytes_for_level_base;
    same.max_background_jobs = library.max_background_jobs;
    same.max_subcompactions = library.max_subcompactions;
    same.blob_file_size = library.blob_file_size;
    // `--open_files` is -1 by default, as in db_bench: every table stays open.
    assert_eq!(same.max_open_files, Options::UNLIMITED_OPEN_FILES);
    same.max_open_files = library.max_open_files;
    // db_bench's `--fifo_compaction_allow_compaction` is true; the library's is false.
    assert_eq!(
        (same.fifo.allow_compaction, library.fifo.allow_compaction),
        (true, false)
    );
    same.fifo.allow_compaction = library.fifo.allow_compaction;
    assert_eq!(format!("{same:?}"), format!("{library:?}"));
}

#[test]
fn a_batch_found_applied_in_part_is_a_violation() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(&["--threads=2", "--keys=10"]);
    let oracle = Oracle::open(&dir.path().join("expected"), 10).unwrap();
    let db = Store::open(&dir.path().join("db"), options(&a).unwrap(), 3).unwrap();
    let put = |k: u64| {
        let mut batch = WriteBatch::new();
        db.batch_put(&mut batch, k, &key(k), &value(k, 1, &a));
        db.write(batch, &WriteOptions::default()).unwrap();
    };
    // Thread 0 (keys 0-4) had a batch writing id 1 to keys 2 and 4 (two families) in
    // flight.
    oracle.begin(2, 1).unwrap();
    oracle.begin(4, 1).unwrap();
    put(2);
    let e = verify(&db, &oracle, &a).unwrap_err();
    assert!(e.contains("applied in part"), "{e}");
    // Both applied (or neither) is fine, and the oracle then holds what the db holds.
    put(4);
    assert_eq!(verify(&db, &oracle, &a), Ok(10));
    assert_eq!(oracle.state(4).committed, 1);
}

/// Every key has exactly one owner, whose block holds it; blocks are contiguous, in
/// thread order, and differ in size by at most one.
#[test]
fn blocks_give_every_key_one_owner() {
    for keys in 1..40 {
        for threads in 1..=keys.min(9) {
            let b = Blocks { keys, threads };
            let mut next = 0;
            for t in 0..threads {
                let block = b.of_thread(t);
                assert_eq!(block.start, next, "{b:?} thread {t}");
                let size = block.end - block.start;
                assert!(
                    size == keys / threads || size == keys / threads + 1,
                    "{b:?}"
                );
                for k in block.clone() {
                    assert_eq!(b.owner(k), t, "{b:?} key {k}");
                }
                next = block.end;
            }
            assert_eq!(next, keys, "{b:?}");
        }
    }
    // The key format sorts as the indexes up to MAX_KEYS, so a block is a key range.
    assert!(key(9) < key(10) && key(MAX_KEYS - 2) < key(MAX_KEYS - 1));
}

/// A batch whose range deletion precedes a put keeps the put; one that follows it
/// deletes it; the oracle's finals say the same as the database.
#[test]
fn range_deletions_delete_their_family_s_keys_of_the_block_and_batches_keep_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = args(&["--threads=2", "--keys=100", "--ops=put=1,delete_range=1"]);
    let oracle = Oracle::open(&dir.path().join("expected"), 100).unwrap();
    let db = Store::open(&dir.path().join("db"), options(&a).unwrap(), 3).unwrap();
    let mut w = Worker::new(&a, &db, &oracle, 1, 5, Mix::parse(&a.ops).unwrap());
    assert_eq!(w.own, 50..100);
    for k in 50..100 {
        w.put(k).unwrap();
    }
    for _ in 0..200 {
        w.step().unwrap();
        w.batch().unwrap();
    }
    // Thread 0's keys were never written; thread 1's hold what the oracle says.
    assert_eq!(verify(&db, &oracle, &a), Ok(100));
    let live = (50..100)
        .filter(|&k| oracle.state(k).committed != 0)
        .count();
    assert!(live > 0 && live < 50, "{live} live keys left");
    // The order inside one batch: put then range deletion, range deletion then put.
    let mut both = Writes::default();
    db.batch_put(&mut both.batch, 60, &key(60), &value(60, 7, &a));
    db.batch_delete_range(&mut both.batch, db.family_of(60), &key(60), &key(61));
    db.batch_delete_range(&mut both.batch, db.family_of(61), &key(61), &key(62));
    db.batch_put(&mut both.batch, 61, &key(61), &value(61, 8, &a));
    db.write(both.batch, &WriteOptions::default()).unwrap();
    assert_eq!(db.get(60, &key(60), None).unwrap(), None);
    assert_eq!(db.get(61, &key(61), None).unwrap(), Some(value(61, 8, &a)));
}

#[test]
fn operation_mixes_parse_and_bad_ones_are_named() {
    assert_eq!(Mix::parse("put=3,get=1").unwrap().total(), 4);
    assert!(Mix::parse("put=1,scan=2").unwrap_err().contains("scan"));
    assert!(Mix::parse("put=0").is_err());
    assert_eq!(Mix::parse("merge=2").unwrap().merge, 2);
    assert_eq!(Mix::parse("delete_range=3").unwrap().delete_range, 3);
    let m = Mix::parse("checkpoint=1,column_family=2,ingest=3").unwrap();
    assert_eq!((m.checkpoint, m.column_family, m.ingest), (1, 2, 3));
    let default = Mix::parse(&args(&[]).ops).unwrap();
    assert!(default.delete_range > 0 && default.merge > 0, "{default:?}");
}

#[test]
fn counters_are_every_fourth_key_and_their_values_are_their_ids() {
    let a = args(&["--threads=2"]);
    let counters: Vec<u64> = (0..16).filter(|&k| is_counter(k, &a)).collect();
    assert_eq!(counters, [3, 7, 11, 15]);
    assert_eq!(value(7, 42, &a), 42u64.to_le_bytes());
    assert_eq!(value_id(7, &42u64.to_le_bytes(), &a), Some(42));
    for bad in [&0u64.to_le_bytes()[..], &(1u64 << 40).to_le_bytes(), b"42"] {
        assert_eq!(value_id(7, bad, &a), None, "{bad:?}");
    }
    // Without merges in the mix there are no counters.
    let a = args(&["--threads=2", "--ops=put=1,get=1"]);
    assert!((0..16).all(|k| !is_counter(k, &a)));
    let e = options(&args(&["--merge_operator=stringappend"])).unwrap_err();
    assert!(e.to_string().contains("uint64add"), "{e}");
}

/// Thread 1's worker of a 2-thread, 100-key run (keys 50..100) over a fresh database in
/// `dir`, with `flags`.
fn run_args(dir: &Path, flags: &[&str]) -> StressArgs {
    let db = format!("--db={}", dir.join("db").display());
    let mut argv = vec![db.as_str(), "--threads=2", "--keys=100"];
    argv.extend_from_slice(flags);
    parse_flags(&argv).unwrap()
}

/// Writes every key of thread 1 (50..100), then deletes every seventh.
fn fill(w: &mut Worker<'_>) {
    for k in 50..100 {
        w.put(k).unwrap();
    }
    for k in (50..100).step_by(7) {
        w.delete(k, false).unwrap();
    }
}

fn plan(start: u64, forward: bool, lower: Option<u64>, upper: Option<u64>) -> IterPlan {
    IterPlan {
        start,
        forward,
        lower,
        upper,
        prefix: PrefixMode::None,
        snapshot: false,
        readahead_size: 0,
        fill_cache: true,
        steps: 100,
    }
}

/// Walks with bounds, prefixes and snapshots pass on a right oracle; a wrong value, a key
/// skipped, a key outside the walk's domain and a snapshot read of a newer value fail.
#[test]
fn iterator_walks_check_bounds_prefixes_and_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let a = run_args(dir.path(), &["--prefix_size=8", "--ops=put=1,iter=1"]);
    let oracle = Oracle::open(&dir.path().join("expected"), 100).unwrap();
    let db = Store::open(&a.db, options(&a).unwrap(), 3).unwrap();
    let mut w = Worker::new(&a, &db, &oracle, 1, 7, Mix::parse(&a.ops).unwrap());
    fill(&mut w);
    for _ in 0..300 {
        w.iterate().unwrap();
    }
    // Bounds both ways, and prefix_same_as_start (prefixes of 10 keys) from within them.
    let family = db.family_of(60);
    for p in [
        plan(60, true, Some(55), Some(90)),
        plan(60, false, Some(55), Some(90)),
        plan(40, true, Some(55), None),
        plan(99, false, None, Some(70)),
        IterPlan {
            prefix: PrefixMode::SameAsStart,
            ..plan(63, true, None, None)
        },
        IterPlan {
            prefix: PrefixMode::TotalOrder,
            snapshot: true,
            ..plan(63, false, Some(52), None)
        },
    ] {
        w.iterate_with(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
    // A wrong value in the oracle.
    let k = (56..90).find(|&k| db.family_of(k) == family && oracle.state(k).committed != 0);
    let k = k.unwrap();
    let right = oracle.state(k).committed;
    oracle.commit(k, right + 1).unwrap();
    let e = w
        .iterate_with(plan(k, true, Some(55), Some(90)))
        .unwrap_err();
    assert!(e.contains(&format!("key {k} has value id {right}")), "{e}");
    // Through a snapshot taken while the oracle was wrong: the walk sees the database's.
    let e = w
        .iterate_with(IterPlan {
            snapshot: true,
            ..plan(k, false, Some(k), Some(k + 1))
        })
        .unwrap_err();
    assert!(e.contains("expected"), "{e}");
    // (The walk's put left the oracle right again.)
    w.iterate_with(plan(k, true, Some(55), Some(90))).unwrap();
    // A live key missing from the database: the walk skips it.
    let mut batch = WriteBatch::new();
    db.batch_delete(&mut batch, k, &key(k), false);
    db.write(batch, &WriteOptions::default()).unwrap();
    let e = w
        .iterate_with(plan(k - 3, true, None, Some(90)))
        .unwrap_err();
    assert!(e.contains(&format!("skipped live key {k}")), "{e}");
    // A walk whose domain the engine does not keep to (its database has no extractor, so
    // prefix_same_as_start does nothing): the key past the prefix is refused.
    drop(w);
    let lying = run_args(dir.path(), &["--prefix_size=8", "--ops=put=1,iter=1"]);
    let plain = run_args(dir.path(), &["--ops=put=1,iter=1"]);
    let dir2 = tempfile::tempdir().unwrap();
    let db2 = Store::open(&dir2.path().join("db"), options(&plain).unwrap(), 3).unwrap();
    let oracle2 = Oracle::open(&dir2.path().join("expected"), 100).unwrap();
    let mut w = Worker::new(
        &lying,
        &db2,
        &oracle2,
        1,
        7,
        Mix::parse(&plain.ops).unwrap(),
    );
    fill(&mut w);
    let e = w
        .iterate_with(IterPlan {
            prefix: PrefixMode::SameAsStart,
            ..plan(60, true, None, None)
        })
        .unwrap_err();
    assert!(e.contains("outside the keys left to walk"), "{e}");
}

/// A checkpoint holds the thread's keys as the oracle has them; a value the oracle does not
/// have is found in it.
#[test]
fn checkpoints_are_checked_against_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let a = run_args(dir.path(), &["--ops=put=1,checkpoint=1"]);
    let oracle = Oracle::open(&dir.path().join("expected"), 100).unwrap();
    let db = Store::open(&a.db, options(&a).unwrap(), 3).unwrap();
    let mut w = Worker::new(&a, &db, &oracle, 1, 3, Mix::parse(&a.ops).unwrap());
    fill(&mut w);
    for _ in 0..3 {
        w.checkpoint().unwrap();
    }
    assert!(!checkpoint::checkpoint_dir(&a, 1).exists());
    let mut batch = WriteBatch::new();
    db.batch_put(&mut batch, 77, &key(77), &value(77, 999, &a));
    db.write(batch, &WriteOptions::default()).unwrap();
    let e = w.checkpoint().unwrap_err();
    assert!(e.contains("key 77 has value id 999"), "{e}");
}

/// A thread's own family is created, written, read back and dropped; it is reopened with
/// the database; a wrong key in it, a live one gone and a dropped one back are found.
#[test]
fn families_created_and_dropped_are_checked_and_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let a = run_args(dir.path(), &["--ops=put=1,column_family=1"]);
    let oracle = Oracle::open(&dir.path().join("expected"), 100).unwrap();
    let db = Store::open(&a.db, options(&a).unwrap(), 3).unwrap();
    let mut w = Worker::new(&a, &db, &oracle, 1, 3, Mix::parse(&a.ops).unwrap());
    let mut stages = std::collections::BTreeSet::new();
    for _ in 0..20 {
        w.column_family().unwrap();
        stages.insert(format!("{:?}", oracle.family(1).stage));
        verify(&db, &oracle, &a).unwrap();
    }
    assert_eq!(stages.len(), 2, "{stages:?}");
    while oracle.family(1).stage != oracle::FamilyStage::Live {
        w.column_family().unwrap();
    }
    // Reopened (as after a kill): the live family is there with its keys.
    drop(w);
    db.close().unwrap();
    let db = Store::open(&a.db, options(&a).unwrap(), 3).unwrap();
    verify(&db, &oracle, &a).unwrap();
    let cf = db.db().cf("churn_1").unwrap();
    db.db().put_cf(&cf, key(3), value(3, 12345, &a)).unwrap();
    let mut w = Worker::new(&a, &db, &oracle, 1, 3, Mix::parse(&a.ops).unwrap());
    let e = w.column_family().unwrap_err();
    assert!(e.contains("not its value of generation"), "{e}");
    let e = verify(&db, &oracle, &a).unwrap_err();
    assert!(e.contains("churn_1"), "{e}");
    // Dropped behind the oracle's back: a live family gone.
    db.db().drop_cf(&cf).unwrap();
    let e = verify(&db, &oracle, &a).unwrap_err();
    assert!(e.contains("gone"), "{e}");
    // Created behind its back: a family back after its drop.
    let live = oracle.family(1);
    oracle
        .set_family(
            1,
            oracle::FamilyState {
                stage: oracle::FamilyStage::Absent,
                ..live
            },
        )
        .unwrap();
    db.db()
        .create_cf("churn_1", options(&a).unwrap().cf_options())
        .unwrap();
    let e = verify(&db, &oracle, &a).unwrap_err();
    assert!(e.contains("exists, but its drop returned"), "{e}");
}

/// Ingested tables of owned keys land as the oracle records them; an oracle that missed
/// one is found out.
#[test]
fn ingested_tables_are_recorded_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let a = run_args(dir.path(), &["--ops=put=1,ingest=1"]);
    let oracle = Oracle::open(&dir.path().join("expected"), 100).unwrap();
    let db = Store::open(&a.db, options(&a).unwrap(), 3).unwrap();
    let mut w = Worker::new(&a, &db, &oracle, 1, 11, Mix::parse(&a.ops).unwrap());
    fill(&mut w);
    let before: Vec<u32> = (50..100).map(|k| oracle.state(k).committed).collect();
    for _ in 0..20 {
        w.ingest().unwrap();
        w.put(60).unwrap();
    }
    let after: Vec<u32> = (50..100).map(|k| oracle.state(k).committed).collect();
    let changed = before.iter().zip(&after).filter(|(b, a)| b != a).count();
    assert!(changed > 10, "{changed} keys changed");
    assert_eq!(verify(&db, &oracle, &a), Ok(100));
    // The oracle without the last ingest: its keys hold values it does not allow.
    w.ingest().unwrap();
    let k = (50..100)
        .find(|&k| oracle.state(k).committed != after[(k - 50) as usize] && k != 60)
        .unwrap();
    oracle.commit(k, after[(k - 50) as usize]).unwrap();
    let e = verify(&db, &oracle, &a).unwrap_err();
    assert!(e.contains(&format!("key {k} holds value id")), "{e}");
}
