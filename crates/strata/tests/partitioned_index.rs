//! Partitioned index and filters through the database: each column family's tables take
//! its own index layout, and a database holding both layouts (and reopened with other
//! options) reads every key through gets, scans both ways and seeks, with a block cache
//! small enough that partitions are evicted and read again.

use strata::fs::{FileSystem, PosixFs};
use strata::internals::Table;
use strata::{CfOptions, Db, IndexType, Options, ReadOptions};

const N: u32 = 4000;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(family: &str, i: u32) -> Vec<u8> {
    format!("{family}-{i}-")
        .repeat(1 + i as usize % 4)
        .into_bytes()
}

/// The index partitions of each table in `dir`, by the column family its properties name.
fn partitions_by_family(dir: &std::path::Path) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sst") {
            let file = PosixFs.open_random(&path).unwrap();
            let p = Table::read_properties(file.as_ref(), &path).unwrap();
            let family = p.column_family.map(|f| f.name).unwrap_or_default();
            out.push((family, p.index_partitions, p.filter_partitions));
        }
    }
    out.sort();
    out
}

fn small_cache(mut options: Options) -> Options {
    options.block_cache_size = 64 << 10;
    options.cache_index_and_filter_blocks = true;
    options.pin_top_level_index_and_filter = false;
    options.block_size = 256;
    options
}

fn check_reads(db: &Db) {
    for name in ["default", "partitioned"] {
        let cf = db.cf(name).unwrap();
        for i in (0..N).step_by(7) {
            let got = db.get_cf(&cf, key(i)).unwrap();
            assert_eq!(got, Some(value(name, i)), "{name}: key {i}");
            let absent = format!("key{i:06}x");
            assert_eq!(db.get_cf(&cf, absent).unwrap(), None, "{name}");
        }
        let mut it = db.iter_cf(&cf, &ReadOptions::default()).unwrap();
        it.seek_to_first();
        let mut count = 0;
        while it.valid() {
            assert_eq!(it.key(), key(count), "{name}");
            count += 1;
            it.next();
        }
        it.status().unwrap();
        assert_eq!(count, N, "{name}: forward scan");
        it.seek_to_last();
        while it.valid() {
            count -= 1;
            assert_eq!(it.key(), key(count), "{name}");
            it.prev();
        }
        it.status().unwrap();
        assert_eq!(count, 0, "{name}: backward scan");
        for i in (0..N).step_by(97) {
            it.seek(format!("key{i:06}!"));
            let next = (i + 1).min(N);
            match next < N {
                true => assert_eq!(it.key(), key(next), "{name}: seek after {i}"),
                false => assert!(!it.valid()),
            }
            it.seek_for_prev(format!("key{i:06}!"));
            assert_eq!(it.key(), key(i), "{name}: seek_for_prev after {i}");
        }
    }
}

#[test]
fn each_family_writes_its_own_index_layout_and_both_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = small_cache(Options::default());
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    let mut partitioned = small_cache(Options::default()).cf_options();
    partitioned.index_type = IndexType::TwoLevelIndexSearch;
    partitioned.partition_filters = true;
    partitioned.metadata_block_size = 256;
    let families = [
        ("default", options.cf_options()),
        ("partitioned", partitioned.clone()),
    ];
    let db = Db::open_cf(dir.path(), options.clone(), families.clone()).unwrap();
    for name in ["default", "partitioned"] {
        let cf = db.cf(name).unwrap();
        for i in 0..N {
            db.put_cf(&cf, key(i), value(name, i)).unwrap();
        }
        db.flush_cf(&cf).unwrap();
    }
    let tables = partitions_by_family(dir.path());
    assert_eq!(tables.len(), 2, "{tables:?}");
    assert_eq!(tables[0].0, "default");
    assert_eq!((tables[0].1, tables[0].2), (0, 0), "{tables:?}");
    assert_eq!(tables[1].0, "partitioned");
    assert!(tables[1].1 > 5 && tables[1].2 == tables[1].1, "{tables:?}");
    check_reads(&db);
    let stats = db.stats();
    assert!(stats.block_cache_misses > 0);
    db.close().unwrap();

    // Reopened with the layouts swapped: the tables keep theirs and read the same; new
    // tables take the new layout.
    let mut flat = partitioned;
    flat.index_type = IndexType::BinarySearch;
    flat.partition_filters = false;
    let mut two_level: CfOptions = options.cf_options();
    two_level.index_type = IndexType::TwoLevelIndexSearch;
    let families = [("default", two_level), ("partitioned", flat)];
    let db = Db::open_cf(dir.path(), options, families).unwrap();
    check_reads(&db);
    let cf = db.cf("default").unwrap();
    db.put_cf(&cf, key(N), b"new").unwrap();
    db.flush_cf(&cf).unwrap();
    let tables = partitions_by_family(dir.path());
    let default_partitioned = tables
        .iter()
        .filter(|(f, index, filter)| f == "default" && *index > 0 && *filter == 0)
        .count();
    assert_eq!(default_partitioned, 1, "{tables:?}");
    db.close().unwrap();
}
