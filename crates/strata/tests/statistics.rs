//! Operations statistics end to end: the thread's `PerfContext` counts one lookup's work at
//! the levels that count and nothing when disabled; latency histograms record at the stats
//! level that asks for them; properties answer under RocksDB's and Strata's prefixes and
//! refuse unknown names; the named statistics list is complete and agrees with the fields.

use std::sync::Arc;

use strata::{
    perf_context, reset_perf_context, set_perf_level, Db, Histogram, Options, PerfContext,
    PerfLevel, StatsLevel, PROPERTY_NAMES,
};

fn open(dir: &std::path::Path, stats_level: StatsLevel) -> Db {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.stats_level = stats_level;
    options.block_cache_size = 1 << 20;
    Db::open(dir, options).unwrap()
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

#[test]
fn perf_context_counts_one_lookups_work_by_level() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), StatsLevel::default());
    for i in 0..1000 {
        db.put(key(i), vec![b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.put(b"in-memtable", b"m").unwrap();

    // Disabled (the default): nothing is counted.
    reset_perf_context();
    db.get(key(5)).unwrap().unwrap();
    assert_eq!(perf_context(), PerfContext::default());

    // Counts: a table lookup reads the filter, the index and a data block.
    set_perf_level(PerfLevel::EnableCount);
    reset_perf_context();
    assert_eq!(db.get(key(500)).unwrap().unwrap().len(), 100);
    let c = perf_context();
    assert_eq!(c.get_from_memtable_count, 1);
    assert_eq!(c.bloom_memtable_hit_count + c.bloom_memtable_miss_count, 1);
    assert_eq!(c.get_from_table_count, 1);
    assert_eq!(c.bloom_sst_hit_count, 1);
    assert_eq!(c.block_read_count + c.block_cache_hit_count, 1, "{c}");
    assert_eq!(c.get_read_bytes, 100);
    assert!(c.user_key_comparison_count > 0);
    assert_eq!(c.get_from_memtable_time, 0, "counts only: no times");
    // The same key again: the block comes from the cache.
    reset_perf_context();
    db.get(key(500)).unwrap().unwrap();
    let c = perf_context();
    assert_eq!((c.block_read_count, c.block_cache_hit_count), (0, 1));
    // A key in the table's range that its filter rules out: no block at all.
    reset_perf_context();
    assert_eq!(db.get(b"key000500x").unwrap(), None);
    let c = perf_context();
    assert_eq!(c.bloom_sst_miss_count, 1);
    assert_eq!(c.block_read_count + c.block_cache_hit_count, 0);
    // In the memtable: no table is searched.
    reset_perf_context();
    db.get(b"in-memtable").unwrap().unwrap();
    assert_eq!(perf_context().get_from_table_count, 0);

    // Times: each stage of a table lookup is timed.
    set_perf_level(PerfLevel::EnableTime);
    reset_perf_context();
    db.get(key(900)).unwrap().unwrap();
    let c = perf_context();
    assert!(c.get_from_memtable_time > 0);
    assert!(c.get_from_output_files_time > 0);
    assert!(c.index_seek_time > 0);
    assert!(c.block_seek_nanos > 0);
    assert!(c.filter_check_time > 0);
    // Multi-get counts the bytes it returns.
    reset_perf_context();
    let got = db.multi_get([key(1), key(2)]);
    assert_eq!(got.len(), 2);
    assert_eq!(perf_context().multiget_read_bytes, 200);
    set_perf_level(PerfLevel::Disable);
    db.close().unwrap();
}

#[test]
fn a_lookup_of_a_block_read_from_the_file_counts_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.block_cache_size = 0; // every block from the file
    let db = Db::open(dir.path(), options).unwrap();
    for i in 0..100 {
        db.put(key(i), b"value").unwrap();
    }
    db.flush().unwrap();
    set_perf_level(PerfLevel::EnableTime);
    reset_perf_context();
    db.get(key(50)).unwrap().unwrap();
    let c = perf_context();
    assert_eq!(c.block_read_count, 1, "{c}");
    assert!(c.block_read_byte > 100);
    assert!(c.block_read_time > 0);
    assert!(c.block_checksum_time > 0);
    set_perf_level(PerfLevel::Disable);
}

#[test]
fn histograms_record_at_the_level_that_asks_for_them() {
    for level in [
        StatsLevel::ExceptHistogramOrTimers,
        StatsLevel::ExceptDetailedTimers,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path(), level);
        for i in 0..100 {
            db.put(key(i), b"v").unwrap();
        }
        db.flush().unwrap();
        for i in 0..50 {
            db.get(key(i)).unwrap();
        }
        db.multi_get([key(1), key(2)]);
        let mut it = db.iter(&Default::default());
        it.seek(key(10));
        assert!(it.valid());
        drop(it);
        db.compact_range(None, None).unwrap();
        let timed = level == StatsLevel::ExceptDetailedTimers;
        let expected = [
            (Histogram::Get, if timed { 50 } else { 0 }),
            (Histogram::Write, if timed { 100 } else { 0 }),
            (Histogram::Seek, u64::from(timed)),
            (Histogram::MultiGet, u64::from(timed)),
            (Histogram::Flush, 1),
            (Histogram::Compaction, 1),
        ];
        for (h, count) in expected {
            let d = db.histogram(h);
            assert_eq!(d.count, count, "{level:?} {}", h.name());
            assert!(
                d.p50 <= d.p95 && d.p95 <= d.p99 && d.p99 <= d.max as f64,
                "{d}"
            );
        }
        let report = db.property("rocksdb.stats").unwrap();
        assert!(
            report.contains("rocksdb.db.flush.micros P50 : "),
            "{report}"
        );
        assert_eq!(report.contains("rocksdb.db.get.micros"), timed);
        db.reset_stats();
        assert_eq!(db.histogram(Histogram::Flush).count, 0);
    }
}

#[test]
fn properties_answer_under_both_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), StatsLevel::default());
    for i in 0..10 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.delete(key(0)).unwrap();
    db.flush().unwrap();
    db.put(b"z", b"in memory").unwrap();
    // (name, expected value; None: only checked to be there)
    let cases: &[(&str, Option<&str>)] = &[
        ("num-files-at-level0", Some("2")),
        ("num-files-at-level1", Some("0")),
        // 10 puts + 1 deletion in tables, 1 entry in the memtable; a deletion counts -2.
        ("estimate-num-keys", Some("10")),
        ("num-running-compactions", Some("0")),
        ("num-running-flushes", Some("0")),
        ("num-immutable-mem-table", Some("0")),
        ("num-entries-active-mem-table", Some("1")),
        ("mem-table-flush-pending", Some("0")),
        ("num-snapshots", Some("0")),
        ("last-sequence", Some("12")),
        ("cur-size-all-mem-tables", None),
        ("estimate-live-data-size", None),
        ("total-sst-files-size", None),
        ("block-cache-usage", None),
        ("stats", None),
        ("compaction-stats", None),
    ];
    for (name, want) in cases {
        let rocksdb = db.property(&format!("rocksdb.{name}"));
        let strata = db.property(&format!("strata.{name}"));
        assert!(rocksdb.is_some(), "rocksdb.{name}");
        if !name.contains("stats") {
            assert_eq!(rocksdb, strata, "{name}");
        }
        if let Some(want) = want {
            assert_eq!(rocksdb.as_deref(), Some(*want), "{name}");
        }
    }
    let live: u64 = db.property_int("rocksdb.estimate-live-data-size").unwrap();
    assert_eq!(live, db.tree_shape().table_bytes());
    let mem = db.property_int("rocksdb.cur-size-all-mem-tables").unwrap();
    assert!(mem > 0);
    // Every listed name answers (a level number after num-files-at-level).
    for name in PROPERTY_NAMES {
        let full = match *name {
            "num-files-at-level" => "rocksdb.num-files-at-level0".to_string(),
            n => format!("rocksdb.{n}"),
        };
        assert!(db.property(&full).is_some(), "{full}");
    }
    // Unknown names, prefixes and levels: None, never a panic.
    for bad in [
        "rocksdb.no-such-property",
        "estimate-num-keys",
        "leveldb.stats",
        "rocksdb.num-files-at-level99",
        "rocksdb.num-files-at-levelx",
        "rocksdb.",
        "",
    ] {
        assert_eq!(db.property(bad), None, "{bad:?}");
    }
    assert_eq!(db.property_int("rocksdb.stats"), None);
}

#[test]
fn named_statistics_cover_every_counter_and_agree_with_the_fields() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), StatsLevel::default());
    db.put(b"a", b"1").unwrap();
    db.get(b"a").unwrap();
    db.flush().unwrap();
    let s = db.stats();
    let named: Vec<(&str, u64)> = s.iter().collect();
    let names: std::collections::HashSet<&str> = named.iter().map(|(n, _)| *n).collect();
    assert_eq!(names.len(), named.len(), "names are unique");
    // The names programs already spell through the C API and Python.
    for name in [
        "batches",
        "keys_written",
        "gets",
        "gets_found",
        "flushes",
        "stall_micros",
        "active_memtable_entries",
        "last_sequence",
        "compactions_running",
    ] {
        assert!(names.contains(name), "{name}");
    }
    assert_eq!(s.get("keys_written"), Some(s.keys_written));
    assert_eq!(s.get("gets"), Some(1));
    assert_eq!(s.get("flushes"), Some(1));
    assert_eq!(s.get("estimated_keys"), Some(s.estimated_keys));
    assert_eq!(s.get("no_such_statistic"), None);
    let _ = Arc::new(db);
}
