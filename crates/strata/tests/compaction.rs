//! Compaction end to end: universal and leveled trees keep their shape under load, a
//! nearly full disk skips compactions instead of failing them, subcompactions and the
//! grandparent cut split work as configured, write stalls on pending compaction bytes, and
//! the tree shape agrees with the stats.

use std::collections::BTreeMap;
use std::sync::Arc;

use strata::fs::fault::FaultFs;
use strata::{CompactionStyle, Db, ErrorKind, Options, TreeShape};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:07}").into_bytes()
}

fn value(i: u64, round: u64) -> Vec<u8> {
    format!("value-{i}-{round}-").repeat(4).into_bytes()
}

fn small(style: CompactionStyle) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 32 << 10;
    options.max_write_buffer_number = 3;
    options.block_size = 1024;
    options.level0_file_num_compaction_trigger = 4;
    options.max_bytes_for_level_base = 128 << 10;
    options.target_file_size_base = 64 << 10;
    options.compaction_style = style;
    options
}

/// Writes `rounds` overwrites of keys 0..n, returning the expected contents.
fn write_rounds(db: &Db, n: u64, rounds: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    for round in 0..rounds {
        for i in 0..n {
            // A scattered order, so that every flush overlaps every other.
            let k = (i * 7919) % n;
            db.put(key(k), value(k, round)).unwrap();
            model.insert(key(k), value(k, round));
        }
    }
    model
}

/// Sorted runs in tables (L0 files and non-empty levels below).
fn table_runs(shape: &TreeShape) -> u64 {
    shape.sorted_runs() - 1 - shape.immutable_memtables
}

/// Table files in directory `dir`.
fn sst_files(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "sst")
        })
        .count() as u64
}

/// Tables the current version names.
fn live_tables(db: &Db) -> u64 {
    db.tree_shape().levels.iter().map(|l| l.files).sum()
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let all: BTreeMap<Vec<u8>, Vec<u8>> =
        db.range::<&[u8], _>(..).collect::<Result<_, _>>().unwrap();
    assert!(all == *model, "database differs from the model");
    for (k, v) in model.iter().step_by(97) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
}

#[test]
fn universal_compaction_keeps_few_sorted_runs_and_uses_the_bottom_levels() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small(CompactionStyle::Universal);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let model = write_rounds(&db, 4000, 5);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let shape = db.tree_shape();
    let stats = db.stats();
    // Settled, the runs are at most the trigger: a merge by run count waits until they
    // outnumber it.
    assert!(
        table_runs(&shape) <= opts.level0_file_num_compaction_trigger as u64,
        "{shape}"
    );
    assert!(
        shape.levels[6].files > 0,
        "the oldest run is in the last level: {shape}"
    );
    let compactions: u64 = stats.compactions.iter().map(|c| c.count).sum();
    assert!(compactions >= 3, "{stats:?}");
    check(&db, &model);
    // A full merge leaves one run; the data survives a reopen as leveled.
    db.compact_all().unwrap();
    assert_eq!(table_runs(&db.tree_shape()), 1, "{}", db.tree_shape());
    db.close().unwrap();
    let db = Db::open(dir.path(), small(CompactionStyle::Leveled)).unwrap();
    check(&db, &model);
}

#[test]
fn universal_size_amplification_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = small(CompactionStyle::Universal);
    opts.universal.max_size_amplification_percent = 50;
    let db = Db::open(dir.path(), opts).unwrap();
    let model = write_rounds(&db, 3000, 6);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let shape = db.tree_shape();
    let last = shape
        .levels
        .iter()
        .rev()
        .find(|l| l.files > 0)
        .unwrap()
        .bytes;
    let newer = shape.table_bytes() - last;
    assert!(
        newer * 100 <= last * 50 || table_runs(&shape) < 4,
        "newer runs hold {newer} bytes over a {last}-byte oldest run: {shape}"
    );
    check(&db, &model);
}

#[test]
fn a_nearly_full_disk_skips_compactions_and_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut opts = small(CompactionStyle::Universal);
    opts.fs = Arc::new(fs.clone());
    // Every merge would be a full one (the runs above the oldest are large).
    opts.universal.max_size_amplification_percent = 1;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut model = write_rounds(&db, 6000, 2);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    db.close().unwrap();
    // A second copy of every key in newer runs, written with compactions paused so that the
    // runs are all there when compaction looks (not merged one by one as they come).
    let mut paused = opts.clone();
    paused.disable_auto_compactions = true;
    let db = Db::open(dir.path(), paused).unwrap();
    for i in 0..6000u64 {
        db.put(key(i), value(i, 9)).unwrap();
        model.insert(key(i), value(i, 9));
    }
    db.flush().unwrap();
    db.close().unwrap();
    // Room for a small flush, not for a merge of everything.
    let used = fs.used_space();
    let limit = used + used / 4;
    fs.set_space_limit(Some(limit));
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    db.put(b"reopened", b"1").unwrap();
    model.insert(b"reopened".to_vec(), b"1".to_vec());
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    assert!(
        stats.compactions_skipped_for_space > 0,
        "no compaction was skipped: {stats:?}"
    );
    assert_eq!(
        fs.enospc_errors(),
        0,
        "a write hit the full disk: {used} used before, limit {limit}"
    );
    // Reads and writes go on.
    check(&db, &model);
    db.put(b"after", b"full").unwrap();
    model.insert(b"after".to_vec(), b"full".to_vec());
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("skipped: its output may take"), "{log}");
    // With room again, compaction catches up, and nothing was damaged.
    fs.set_space_limit(None);
    db.flush().unwrap();
    db.compact_all().unwrap();
    check(&db, &model);
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    check(&db, &model);
}

#[test]
fn a_manual_compaction_without_room_is_an_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut opts = small(CompactionStyle::Leveled);
    opts.fs = Arc::new(fs.clone());
    opts.disable_auto_compactions = true;
    let db = Db::open(dir.path(), opts).unwrap();
    let model = write_rounds(&db, 2000, 2);
    db.flush().unwrap();
    let shape = db.tree_shape();
    fs.set_space_limit(Some(fs.used_space() + 1000));
    let err = db.compact_all().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.to_string().contains("free disk space"), "{err}");
    assert_eq!(db.tree_shape(), shape);
    check(&db, &model);
}

#[test]
fn subcompactions_split_a_big_compaction_into_key_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = small(CompactionStyle::Leveled);
    opts.max_subcompactions = 4;
    opts.target_file_size_base = 16 << 10;
    opts.disable_auto_compactions = true;
    let db = Db::open(dir.path(), opts).unwrap();
    let mut model = write_rounds(&db, 4000, 1);
    db.compact_all().unwrap();
    assert_eq!(
        db.stats().subcompactions,
        0,
        "a first compaction has no files below L0"
    );
    for i in (0..4000).step_by(3) {
        db.put(key(i), value(i, 7)).unwrap();
        model.insert(key(i), value(i, 7));
    }
    db.compact_all().unwrap();
    let stats = db.stats();
    assert!(stats.subcompactions >= 2, "{stats:?}");
    check(&db, &model);
}

#[test]
fn outputs_are_cut_where_they_overlap_too_much_of_the_level_below() {
    let dir = tempfile::tempdir().unwrap();
    let mut base = small(CompactionStyle::Leveled);
    base.num_levels = 3;
    base.max_bytes_for_level_base = 64 << 10;
    base.max_bytes_for_level_multiplier = 2.0;
    base.disable_auto_compactions = true;
    // A last level of many small files.
    let mut small_files = base.clone();
    small_files.target_file_size_base = 4 << 10;
    let db = Db::open(dir.path(), small_files).unwrap();
    let mut model = write_rounds(&db, 3000, 1);
    db.compact_all().unwrap();
    let l2_files = db.tree_shape().levels[2].files;
    assert!(l2_files >= 20, "{}", db.tree_shape());
    db.close().unwrap();
    // Big output files, but cut at 8 KiB of overlap with L2.
    let mut big_files = base;
    big_files.target_file_size_base = 1 << 20;
    big_files.max_compaction_bytes = 8 << 10;
    let db = Db::open(dir.path(), big_files).unwrap();
    for i in (0..3000).step_by(2) {
        db.put(key(i), value(i, 5)).unwrap();
        model.insert(key(i), value(i, 5));
    }
    db.flush().unwrap();
    db.compact_level(0).unwrap();
    let shape = db.tree_shape();
    assert!(
        shape.levels[1].files >= 5,
        "L0 went to L1 in few files: {shape}"
    );
    check(&db, &model);
}

#[test]
fn pending_compaction_bytes_slow_and_stop_writes_until_compaction_catches_up() {
    // L0 at its trigger is well over 64 KiB of pending bytes.
    for (soft, hard) in [(1, 0), (1, 64 << 10)] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = small(CompactionStyle::Leveled);
        opts.soft_pending_compaction_bytes_limit = soft;
        opts.hard_pending_compaction_bytes_limit = hard;
        opts.max_background_jobs = 3;
        let db = Db::open(dir.path(), opts).unwrap();
        let model = write_rounds(&db, 2000, 2);
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
        let stats = db.stats();
        if hard == 0 {
            assert!(stats.pending_slowdowns > 0, "{stats:?}");
        } else {
            assert!(stats.pending_stops > 0, "{stats:?}");
            assert!(stats.pending_compaction_bytes < hard, "{stats:?}");
        }
        let text = db.property("strata.stats").unwrap();
        assert!(text.contains("pending-bytes stop"), "{text}");
        check(&db, &model);
    }
}

#[test]
fn tree_shape_agrees_with_stats() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small(CompactionStyle::Leveled)).unwrap();
    write_rounds(&db, 2000, 2);
    db.wait_for_compactions().unwrap();
    let shape = db.tree_shape();
    let stats = db.stats();
    for (level, l) in shape.levels.iter().enumerate() {
        assert_eq!(l.files, stats.level_files[level]);
        assert_eq!(l.bytes, stats.level_bytes[level]);
    }
    assert_eq!(shape.immutable_memtables, stats.immutable_memtables);
    let text = shape.to_string();
    assert!(text.starts_with("mem "), "{text}");
}

#[test]
fn sequential_writes_move_down_without_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small(CompactionStyle::Leveled)).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..20_000 {
        db.put(key(i), value(i, 0)).unwrap();
        model.insert(key(i), value(i, 0));
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    let moves: u64 = stats.compactions.iter().map(|c| c.moves).sum();
    let rewritten: u64 = stats.compactions.iter().map(|c| c.bytes_written).sum();
    assert!(moves >= 1, "{stats:?}");
    assert_eq!(rewritten, 0, "sequential data needs no merge: {stats:?}");
    check(&db, &model);
}

/// The sequence number ranges (smallest, largest) of the tables in directory `dir`.
fn table_seqs(dir: &std::path::Path) -> Vec<(u64, u64)> {
    use strata::fs::{FileSystem, PosixFs};
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sst") {
            let file = PosixFs.open_random(&path).unwrap();
            let p = strata::internals::Table::read_properties(file.as_ref(), &path).unwrap();
            out.push((p.smallest_seq, p.largest_seq));
        }
    }
    out
}

#[test]
fn the_bottom_writes_puts_below_every_snapshot_with_sequence_number_zero() {
    let dir = tempfile::tempdir().unwrap();
    let options = small(CompactionStyle::Leveled);
    let db = Db::open(dir.path(), options.clone()).unwrap();
    let n = 2000;
    let old = write_rounds(&db, n, 1);
    let snapshot = db.snapshot();
    let mut model = old.clone();
    for i in (0..n).step_by(2) {
        db.put(key(i), value(i, 1)).unwrap();
        model.insert(key(i), value(i, 1));
    }
    // The writes after the snapshot keep their numbers; those it sees become 0.
    db.compact_range(None, None).unwrap();
    let seqs = table_seqs(dir.path());
    assert!(seqs.iter().all(|&(lo, _)| lo == 0), "{seqs:?}");
    assert!(
        seqs.iter().any(|&(_, hi)| hi > snapshot.sequence()),
        "{seqs:?}"
    );
    check(&db, &model);
    for (k, v) in old.iter().step_by(37) {
        assert_eq!(db.get_at(&snapshot, k).unwrap().as_ref(), Some(v));
    }
    let mut at_snapshot = strata::ReadOptions::default();
    at_snapshot.snapshot = Some(snapshot.clone());
    let mut it = db.iter(&at_snapshot); // holds the snapshot until dropped
    let mut seen = BTreeMap::new();
    it.seek_to_first();
    while it.valid() {
        seen.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    assert!(seen == old, "the snapshot's view changed");

    // Without the snapshot every put a compaction writes at the bottom is numbered 0.
    drop((it, snapshot, at_snapshot));
    for i in (0..n).step_by(5) {
        db.put(key(i), value(i, 2)).unwrap();
        model.insert(key(i), value(i, 2));
    }
    db.compact_range(None, None).unwrap();
    let seqs = table_seqs(dir.path());
    assert!(seqs.iter().all(|&s| s == (0, 0)), "{seqs:?}");
    check(&db, &model);

    // Later writes are newer than the zeroed versions, after a reopen too.
    db.close().unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    for i in (0..n).step_by(3) {
        db.put(key(i), value(i, 3)).unwrap();
        model.insert(key(i), value(i, 3));
    }
    check(&db, &model);
    db.compact_range(None, None).unwrap();
    check(&db, &model);
}

#[test]
fn close_cancels_a_running_compaction_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = small(CompactionStyle::Leveled);
    opts.disable_auto_compactions = true;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let model = write_rounds(&db, 20_000, 2);
    db.flush().unwrap();
    db.close().unwrap();
    // Reopen with compaction on: it starts at once on many L0 files; close at once.
    let db = Db::open(dir.path(), small(CompactionStyle::Leveled)).unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    check(&db, &model);
}

#[test]
fn tables_a_reader_held_are_deleted_once_it_lets_go() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = small(CompactionStyle::Leveled);
    opts.disable_auto_compactions = true;
    let db = Db::open(dir.path(), opts).unwrap();
    write_rounds(&db, 3000, 2);
    db.flush().unwrap();
    let mut it = db.iter(&strata::ReadOptions::default());
    it.seek_to_first();
    db.compact_all().unwrap();
    assert!(
        sst_files(dir.path()) > live_tables(&db),
        "the reader's tables stay while it reads"
    );
    assert!(it.valid());
    drop(it);
    db.put(b"x", b"y").unwrap();
    db.flush().unwrap();
    assert_eq!(
        sst_files(dir.path()),
        live_tables(&db),
        "the next flush deletes them"
    );
}

#[test]
fn manual_compactions_delete_the_tables_they_replace_before_they_return() {
    // A manual compaction once held the version it started from through its own purge, so
    // its inputs stayed on disk until the next flush or compaction: space-amp 2 after
    // compact_all on a database no reader held.
    for style in [CompactionStyle::Leveled, CompactionStyle::Universal] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), small(style)).unwrap();
        let model = write_rounds(&db, 3000, 3);
        db.compact_all().unwrap();
        db.wait_for_compactions().unwrap();
        assert_eq!(
            sst_files(dir.path()),
            live_tables(&db),
            "{style:?}: compact_all"
        );
        check(&db, &model);
    }
    let dir = tempfile::tempdir().unwrap();
    let mut options = small(CompactionStyle::Leveled);
    options.disable_auto_compactions = true;
    let db = Db::open(dir.path(), options).unwrap();
    let model = write_rounds(&db, 3000, 1);
    db.flush().unwrap();
    let l0 = |db: &Db| db.tree_shape().levels[0].files;
    assert!(l0(&db) > 1);
    db.compact_level(0).unwrap();
    assert_eq!(l0(&db), 0);
    assert_eq!(sst_files(dir.path()), live_tables(&db), "compact_level(0)");
    check(&db, &model);
}

/// With `warm_compaction_outputs` a compaction leaves its outputs' blocks in the block cache
/// where readers had its inputs' blocks, so reading every key again after it reads no data
/// block from the files; without it, or when nobody read the inputs, every block is read.
#[test]
fn compaction_outputs_can_take_their_inputs_place_in_the_block_cache() {
    #[rustfmt::skip]
    let cases = [
        // (warm_compaction_outputs, keys read before the compaction, data blocks read after)
        (true, true, false),
        (false, true, true),
        // Outputs of blocks nobody read stay out.
        (true, false, true),
    ];
    for (warm, read_before, misses_expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut options = small(CompactionStyle::Leveled);
        options.disable_auto_compactions = true;
        options.block_cache_size = 64 << 20;
        options.warm_compaction_outputs = warm;
        let db = Db::open(dir.path(), options).unwrap();
        let model = write_rounds(&db, 2000, 2);
        db.flush().unwrap();
        let read_all = || {
            for (k, v) in &model {
                assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
            }
        };
        if read_before {
            read_all();
        }
        db.compact_all().unwrap();
        let before = db.stats().block_cache_by_kind[0].1;
        read_all();
        let misses = db.stats().block_cache_by_kind[0].1 - before;
        let case = format!("warm {warm}, read before {read_before}: {misses} data blocks read");
        assert_eq!(misses > 0, misses_expected, "{case}");
        db.close().unwrap();
    }
}

/// With `uncache_aggressiveness`, the blocks of the tables a compaction replaced leave the
/// block cache when the tables are deleted, so that the cache holds the outputs' blocks
/// (warmed by the compaction) and little else; with 0 the dead blocks stay until evicted.
#[test]
fn deleted_tables_leave_the_block_cache_as_the_aggressiveness_says() {
    let usage_after_compaction = |aggressiveness: u32| {
        let dir = tempfile::tempdir().unwrap();
        let mut options = small(CompactionStyle::Leveled);
        options.disable_auto_compactions = true;
        options.block_cache_size = 64 << 20;
        options.uncache_aggressiveness = aggressiveness;
        let db = Db::open(dir.path(), options).unwrap();
        let model = write_rounds(&db, 2000, 2);
        db.flush().unwrap();
        for (k, v) in &model {
            assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
        }
        let before = db.stats().block_cache_usage;
        db.compact_all().unwrap();
        // The replaced tables go once no version names them: at the latest at close.
        let after = db.stats().block_cache_usage;
        let property: u64 = db
            .property("strata.block-cache-usage")
            .unwrap()
            .parse()
            .unwrap();
        assert!(property > 0);
        for (k, v) in &model {
            assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
        }
        db.close().unwrap();
        (before, after)
    };
    // The gets read the blocks of each key's newest version; the compaction's outputs hold
    // those entries, and their blocks come in warm beside the dead ones, or in their place.
    let (kept_before, kept_after) = usage_after_compaction(0);
    let (erased_before, erased_after) = usage_after_compaction(300);
    assert!(
        kept_after > kept_before * 3 / 2,
        "kept: {kept_before} cached before, {kept_after} after"
    );
    assert!(
        erased_after < erased_before * 5 / 4,
        "erased: {erased_before} cached before, {erased_after} after"
    );
}

/// A get consults the tables a key may be in newest first, the first several opened (and
/// their filters asked for) before any is read and the rest after: with more L0 files than
/// that, a key in every file reads its newest version, a key in one file only is found in
/// whichever file holds it, and a key in none is missing, with the table cache bounded or not.
#[test]
fn gets_read_past_the_first_tables_opened_for_them() {
    for max_open_files in [2, Options::UNLIMITED_OPEN_FILES] {
        let dir = tempfile::tempdir().unwrap();
        let mut options = small(CompactionStyle::Leveled);
        options.disable_auto_compactions = true;
        options.level0_slowdown_writes_trigger = 100;
        options.level0_stop_writes_trigger = 100;
        options.max_open_files = max_open_files;
        let db = Db::open(dir.path(), options).unwrap();
        let files = 12u32;
        for i in 0..files {
            db.put(b"every", i.to_string()).unwrap();
            db.put(format!("only-{i:02}"), i.to_string()).unwrap();
            db.flush().unwrap();
        }
        assert_eq!(db.stats().level_files[0], u64::from(files));
        assert_eq!(db.get(b"every").unwrap(), Some(b"11".to_vec()));
        for i in 0..files {
            let got = db.get(format!("only-{i:02}")).unwrap();
            assert_eq!(got, Some(i.to_string().into_bytes()), "only-{i:02}");
        }
        assert_eq!(db.get(b"none").unwrap(), None);
        db.close().unwrap();
    }
}

/// A database of keys `0..n` in its last level, with one key in 20 overwritten in one L0
/// file: merging that file rewrites 20 times its bytes below, more than an idle family's L0
/// is merged for (`an_idle_family_merges_the_flushes_left_in_l0`), so only reads merge it.
fn one_l0_file_over_the_last_level(dir: &std::path::Path, options: Options, n: u64) -> Db {
    let db = Db::open(dir, options).unwrap();
    for i in 0..n {
        db.put(key(i), value(i, 0)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in (0..n).step_by(20) {
        db.put(key(i), value(i, 1)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    db
}

/// Read-triggered compaction: one L0 file over the last level, below the file-count trigger,
/// stays there while reads are few; once seeks (or gets that pass it) have charged it about
/// what merging it reads, it merges into the level below. With the option off it stays
/// whatever the reads. Every key reads its newest value before and after.
#[test]
fn reads_merge_l0_once_they_have_paid_for_the_merge() {
    #[derive(Debug, Clone, Copy)]
    enum Reads {
        Seeks,
        Gets,
    }
    let cases = [
        (true, Reads::Seeks, 0),
        (true, Reads::Gets, 0),
        (false, Reads::Seeks, 1),
        (false, Reads::Gets, 1),
    ];
    for (enabled, reads, l0_after) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut options = small(CompactionStyle::Leveled);
        options.read_triggered_compaction = enabled;
        // The last level is the base level: L0 merges into it, not into an empty one above.
        options.max_bytes_for_level_base = 1 << 20;
        let n = 2000;
        let db = one_l0_file_over_the_last_level(dir.path(), options, n);
        let newest = |i: u64| value(i, u64::from(i.is_multiple_of(20)));
        let l0 = |db: &Db| db.stats().level_files[0];
        assert_eq!(l0(&db), 1, "{reads:?}: one L0 file to start with");
        // A few reads charge far less than the merge reads (the L0 file and the whole last
        // level it overlaps, about 250 KB here): nothing changes.
        for i in 0..20 {
            assert_eq!(db.get(key(i * 20 + 1)).unwrap(), Some(newest(i * 20 + 1)));
        }
        db.wait_for_compactions().unwrap();
        assert_eq!(l0(&db), 1, "{reads:?}: a few reads leave L0 alone");
        for round in 0..20_000u64 {
            let i = round * 7 % n;
            match reads {
                Reads::Seeks => {
                    let mut it = db.iter(&strata::ReadOptions::default());
                    it.seek(key(i));
                    assert!(it.valid(), "{reads:?} seek {i}");
                    assert_eq!(it.key(), &key(i)[..], "{reads:?} seek {i}");
                    assert_eq!(it.value(), &newest(i)[..], "{reads:?} seek {i}");
                }
                Reads::Gets => assert_eq!(db.get(key(i)).unwrap(), Some(newest(i)), "get {i}"),
            }
        }
        db.wait_for_compactions().unwrap();
        assert_eq!(l0(&db), l0_after, "enabled {enabled}, {reads:?}");
        for i in 0..n {
            assert_eq!(db.get(key(i)).unwrap(), Some(newest(i)), "after: {i}");
        }
        db.close().unwrap();
    }
}

/// What gets charge an L0 file they pass: a table without a filter is searched (an index
/// and a data block), a table with one is mostly ruled out by its filter, so the same gets
/// pay more for the first. And what they paid stays with the L0 files when a flush adds
/// another: gets before a flush and gets after it together merge L0, where those after it
/// alone do not. Each case: bloom bits, gets of keys L0 lacks before a flush of one more
/// small L0 file (none: no flush), gets after it, and the L0 files left.
#[test]
fn gets_charge_what_they_cost_and_keep_it_across_a_flush() {
    struct Case {
        name: &'static str,
        bloom_bits: u32,
        gets_before: u64,
        flush: bool,
        gets_after: u64,
        l0_after: u64,
    }
    let cases = [
        Case {
            name: "filters rule the L0 file out cheaply",
            bloom_bits: 10,
            gets_before: 2000,
            flush: false,
            gets_after: 0,
            l0_after: 1,
        },
        Case {
            name: "the same gets search it without filters",
            bloom_bits: 0,
            gets_before: 2000,
            flush: false,
            gets_after: 0,
            l0_after: 0,
        },
        Case {
            name: "gets before a flush count after it",
            bloom_bits: 0,
            gets_before: 500,
            flush: true,
            gets_after: 200,
            l0_after: 0,
        },
        Case {
            name: "gets after the flush alone",
            bloom_bits: 0,
            gets_before: 0,
            flush: true,
            gets_after: 200,
            l0_after: 2,
        },
    ];
    for case in cases {
        let name = case.name;
        let dir = tempfile::tempdir().unwrap();
        let mut options = small(CompactionStyle::Leveled);
        options.read_triggered_compaction = true;
        options.bloom_bits_per_key = case.bloom_bits;
        options.max_bytes_for_level_base = 1 << 20;
        let n = 2000;
        let db = one_l0_file_over_the_last_level(dir.path(), options, n);
        let l0 = |db: &Db| db.stats().level_files[0];
        // Keys the L0 file lacks (it holds every 20th), found in the last level.
        let get = |db: &Db, round: u64| {
            let i = (round * 7 % (n / 20)) * 20 + 1;
            assert_eq!(
                db.get(key(i)).unwrap(),
                Some(value(i, 0)),
                "{name}: get {i}"
            );
        };
        for round in 0..case.gets_before {
            get(&db, round);
        }
        db.wait_for_compactions().unwrap();
        if case.flush {
            assert_eq!(l0(&db), 1, "{name}: before the flush");
            db.put(key(n + 1), value(n + 1, 0)).unwrap();
            db.flush().unwrap();
            db.wait_for_compactions().unwrap();
            assert_eq!(l0(&db), 2, "{name}: after the flush");
        }
        for round in 0..case.gets_after {
            get(&db, round);
        }
        db.wait_for_compactions().unwrap();
        assert_eq!(l0(&db), case.l0_after, "{name}");
        for i in 0..n {
            let newest = value(i, u64::from(i.is_multiple_of(20)));
            assert_eq!(db.get(key(i)).unwrap(), Some(newest), "{name}: after, {i}");
        }
        db.close().unwrap();
    }
}

/// Read charges outlive the process: a closed database leaves what reads paid for its L0 file
/// in `READ_CHARGES`, and the next open of the same L0 starts from it, so reads spread over
/// several processes, none of which reads enough alone, merge L0 as one process would. A
/// file removed, damaged or about other L0 files starts each process from nothing, and L0
/// stays. Every key reads its newest value after.
#[test]
fn reads_in_several_processes_pay_for_the_merge_together() {
    /// What happens to `READ_CHARGES` between two processes.
    #[derive(Debug, Clone, Copy)]
    enum Between {
        Kept,
        Removed,
        Damaged,
        OtherFiles,
    }
    let cases = [
        (Between::Kept, 0),
        (Between::Removed, 1),
        (Between::Damaged, 1),
        (Between::OtherFiles, 1),
    ];
    // The masked crc32c of the file's checksum line (LevelDB's mask).
    let masked = |bytes: &[u8]| {
        let crc = crc32c::crc32c(bytes);
        crc.rotate_right(15).wrapping_add(0xa282_ead8)
    };
    for (between, l0_after) in cases {
        let dir = tempfile::tempdir().unwrap();
        let charges = dir.path().join("READ_CHARGES");
        let mut options = small(CompactionStyle::Leveled);
        options.max_bytes_for_level_base = 1 << 20;
        let n = 2000;
        let db = one_l0_file_over_the_last_level(dir.path(), options.clone(), n);
        assert_eq!(db.stats().level_files[0], 1, "{between:?}: one L0 file");
        db.close().unwrap();
        let newest = |i: u64| value(i, u64::from(i.is_multiple_of(20)));
        // Five processes of 200 seeks: each charges about 90 KB of the merge's 250 KB.
        for process in 0..5 {
            let db = Db::open(dir.path(), options.clone()).unwrap();
            for round in 0..200u64 {
                let i = (process * 200 + round) * 7 % n;
                let mut it = db.iter(&strata::ReadOptions::default());
                it.seek(key(i));
                assert_eq!(it.key(), &key(i)[..], "{between:?} seek {i}");
                assert_eq!(it.value(), &newest(i)[..], "{between:?} seek {i}");
            }
            db.close().unwrap();
            if !charges.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&charges).unwrap();
            match between {
                Between::Kept => {}
                Between::Removed => std::fs::remove_file(&charges).unwrap(),
                Between::Damaged => std::fs::write(&charges, text.replacen(" 1", " 9", 1)).unwrap(),
                Between::OtherFiles => {
                    // The same charge under its right checksum, for a file L0 does not hold.
                    let mut lines: Vec<&str> = text.lines().collect();
                    lines.pop();
                    let body = lines.join("\n") + "1\n";
                    let body = format!("{body}crc32c {:08x}\n", masked(body.as_bytes()));
                    std::fs::write(&charges, body).unwrap();
                }
            }
        }
        let db = Db::open(dir.path(), options).unwrap();
        db.wait_for_compactions().unwrap();
        assert_eq!(db.stats().level_files[0], l0_after, "{between:?}");
        for i in 0..n {
            assert_eq!(db.get(key(i)).unwrap(), Some(newest(i)), "{between:?}: {i}");
        }
        db.close().unwrap();
    }
}

/// Idle L0 merges: a flush left in L0 below the trigger merges into the level below once every
/// write is flushed, unless the merge would rewrite more than ten times L0's bytes there (the
/// multiplier). Every key reads its newest value after. (That a write waiting in the memtable
/// holds the merge back is a picker case, `writes=idle` in `compaction/testdata/leveled.txt`:
/// here the merge may start before such a write arrives.)
#[test]
fn an_idle_family_merges_the_flushes_left_in_l0() {
    // (every how many keys the second round overwrites, L0 files after the wait)
    let cases = [(5, 0), (40, 1)];
    for (every, l0_after) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut options = small(CompactionStyle::Leveled);
        // The second round in one flush, and the last level the base level (into an empty
        // level above it, any merge costs only L0's bytes).
        options.write_buffer_size = 256 << 10;
        options.max_bytes_for_level_base = 1 << 20;
        options.read_triggered_compaction = false;
        let db = Db::open(dir.path(), options).unwrap();
        let n = 2000;
        for i in 0..n {
            db.put(key(i), value(i, 0)).unwrap();
        }
        db.compact_range(None, None).unwrap();
        for i in (0..n).step_by(every as usize) {
            db.put(key(i), value(i, 1)).unwrap();
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
        let l0 = db.stats().level_files[0];
        assert_eq!(
            l0, l0_after,
            "one key in {every} overwritten: L0 files after the wait"
        );
        for i in 0..n {
            let round = u64::from(i.is_multiple_of(every));
            assert_eq!(
                db.get(key(i)).unwrap(),
                Some(value(i, round)),
                "{every}: {i}"
            );
        }
        db.close().unwrap();
    }
}
