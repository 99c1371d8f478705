//! The file-level operations surface: `live_files_metadata` and table property collectors,
//! `approximate_sizes` and `approximate_memtable_stats`, `delete_files_in_range` and
//! `compact_files`, each checked against a model of what the database holds.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use strata::{
    CollectedEntry, CollectorContext, Db, EntryType, ErrorKind, KeyRange, Options, ReadOptions,
    SizeApproximationOptions, TablePropertiesCollector, TablePropertiesCollectorFactory,
};

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

fn key(i: u64) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Tiny memtables, files and levels: a few thousand writes make a tree of several levels.
fn small_tree() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 16 << 10;
    options.target_file_size_base = 8 << 10;
    options.max_bytes_for_level_base = 16 << 10;
    options.max_bytes_for_level_multiplier = 2.0;
    options.level0_file_num_compaction_trigger = 2;
    options.block_size = 512;
    options
}

/// Counts puts and deletes, and records the largest key, per table.
#[derive(Default)]
struct Counting {
    puts: u64,
    deletes: u64,
    largest: Vec<u8>,
}

impl TablePropertiesCollector for Counting {
    fn add(&mut self, entry: &CollectedEntry<'_>) {
        match entry.entry_type {
            EntryType::Put => self.puts += 1,
            EntryType::Delete => self.deletes += 1,
            _ => {}
        }
        self.largest = entry.key.to_vec();
    }

    fn finish(&mut self) -> BTreeMap<String, Vec<u8>> {
        BTreeMap::from([
            ("test.puts".to_string(), self.puts.to_string().into_bytes()),
            (
                "test.deletes".to_string(),
                self.deletes.to_string().into_bytes(),
            ),
            ("test.largest".to_string(), self.largest.clone()),
        ])
    }
}

struct CountingFactory {
    made: AtomicU64,
}

impl TablePropertiesCollectorFactory for CountingFactory {
    fn create(&self, context: &CollectorContext<'_>) -> Box<dyn TablePropertiesCollector> {
        assert!(
            context.column_family.is_some(),
            "a database table names its family"
        );
        self.made.fetch_add(1, Ordering::Relaxed);
        Box::<Counting>::default()
    }

    fn name(&self) -> &str {
        "Counting"
    }
}

fn number(bytes: &[u8]) -> u64 {
    std::str::from_utf8(bytes).unwrap().parse().unwrap()
}

#[test]
fn collectors_see_every_entry_and_metadata_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(CountingFactory {
        made: AtomicU64::new(0),
    });
    let mut options = small_tree();
    options.table_properties_collector_factories = vec![factory.clone()];
    let db = Db::open(dir.path(), options).unwrap();
    let mut model = BTreeMap::new();
    let mut rng = Rng(7);
    for _ in 0..4000 {
        let k = key(rng.below(500));
        if rng.below(5) == 0 {
            db.delete(&k).unwrap();
            model.remove(&k);
        } else {
            db.put(&k, b"value-value-value").unwrap();
            model.insert(k, ());
        }
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert!(factory.made.load(Ordering::Relaxed) > 0);
    let files = db.live_files_metadata();
    assert!(files.len() > 1, "{files:?}");
    let properties = db.properties_of_all_tables(&db.default_cf()).unwrap();
    assert_eq!(properties.len(), files.len());
    let shape = db.tree_shape();
    for f in &files {
        assert_eq!(f.column_family_name, "default");
        assert_eq!(f.name, format!("{:06}.sst", f.file_number));
        assert!(f.directory.join(&f.name).exists(), "{}", f.name);
        assert_eq!(
            std::fs::metadata(f.directory.join(&f.name)).unwrap().len(),
            f.size
        );
        assert!(f.smallest_key <= f.largest_key);
        assert!(f.smallest_seqno <= f.largest_seqno);
        let puts = number(&f.user_properties["test.puts"]);
        let deletes = number(&f.user_properties["test.deletes"]);
        // Every entry of the table was shown to the collector, each once.
        assert_eq!(puts + deletes, f.num_entries, "{}", f.name);
        assert_eq!(deletes, f.num_deletions, "{}", f.name);
        assert_eq!(f.user_properties["test.largest"], f.largest_key);
        let p = &properties[&f.name];
        assert_eq!(p.entries, f.num_entries);
        assert_eq!(p.user_properties, f.user_properties);
        assert!(shape.levels[f.level].files > 0);
    }
    let per_level: usize = shape.levels.iter().map(|l| l.files as usize).sum();
    assert_eq!(per_level, files.len());
    // The properties survive a reopen (they are in the tables, not in memory).
    drop(db);
    let db = Db::open(dir.path(), small_tree()).unwrap();
    let again = db.live_files_metadata();
    assert_eq!(again, files);
}

#[test]
fn a_collector_may_not_take_an_engine_property_name() {
    struct Reserved;
    impl TablePropertiesCollector for Reserved {
        fn add(&mut self, _: &CollectedEntry<'_>) {}
        fn finish(&mut self) -> BTreeMap<String, Vec<u8>> {
            BTreeMap::from([("strata.entries".to_string(), b"0".to_vec())])
        }
    }
    struct ReservedFactory;
    impl TablePropertiesCollectorFactory for ReservedFactory {
        fn create(&self, _: &CollectorContext<'_>) -> Box<dyn TablePropertiesCollector> {
            Box::new(Reserved)
        }
        fn name(&self) -> &str {
            "Reserved"
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.table_properties_collector_factories = vec![Arc::new(ReservedFactory)];
    let db = Db::open(dir.path(), options).unwrap();
    db.put(b"k", b"v").unwrap();
    let err = db.flush().unwrap_err();
    assert!(
        err.to_string().contains("Reserved") && err.to_string().contains("strata.entries"),
        "{err}"
    );
}

#[test]
fn approximate_sizes_follow_the_data_and_memtable_stats_count_entries() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = small_tree();
    options.disable_auto_compactions = true;
    let db = Db::open(dir.path(), options).unwrap();
    let cf = db.default_cf();
    for i in 0..4000 {
        db.put(key(i), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let (k0, k1000, k2000, k4000, end) = (key(0), key(1000), key(2000), key(4000), key(9999));
    let sizes = db
        .approximate_sizes(
            &cf,
            &[
                KeyRange::new(&k0, &k4000),
                KeyRange::new(&k0, &k2000),
                KeyRange::new(&k1000, &k2000),
                KeyRange::new(&k4000, &end),
                KeyRange::new(&k2000, &k1000),
            ],
        )
        .unwrap();
    let total: u64 = db.live_files_metadata().iter().map(|f| f.size).sum();
    assert_eq!(sizes[0], total, "every file lies in the whole range");
    // Half the keys are half the data, a quarter a quarter, within a few blocks per file.
    let files = db.live_files_metadata().len() as u64;
    let slack = files * 2 * 1024 + total / 50;
    assert!(sizes[1].abs_diff(total / 2) < slack, "{sizes:?} of {total}");
    assert!(sizes[2].abs_diff(total / 4) < slack, "{sizes:?} of {total}");
    assert_eq!(sizes[3], 0, "no key at or after {:?}", "key004000");
    assert_eq!(sizes[4], 0, "an empty range");

    // Memtables: counted only when asked, entry by entry.
    let mut written = BTreeMap::new();
    for i in (0..300).step_by(3) {
        db.put(key(i), b"x").unwrap();
        written.insert(key(i), ());
    }
    let (k100, k200) = (key(100), key(200));
    let in_range = written.range(k100.clone()..k200.clone()).count() as u64;
    let (count, bytes) = db
        .approximate_memtable_stats(&cf, KeyRange::new(&k100, &k200))
        .unwrap();
    assert_eq!(count, in_range);
    assert!(bytes >= in_range * (k100.len() as u64 + 1), "{bytes}");
    let files_only = db
        .approximate_sizes(&cf, &[KeyRange::new(&k100, &k200)])
        .unwrap();
    let mut with_memtables = SizeApproximationOptions::default();
    with_memtables.include_memtables = true;
    let both = db
        .approximate_sizes_opt(&cf, &[KeyRange::new(&k100, &k200)], &with_memtables)
        .unwrap();
    assert_eq!(both[0], files_only[0] + bytes);
}

/// What a read of `k` gives now.
fn read_all(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.range::<&[u8], _>(..).map(|kv| kv.unwrap()).collect()
}

#[test]
fn delete_files_in_range_drops_whole_files_and_never_brings_old_versions_back() {
    let mut dropped_in_all = 0;
    for seed in 1..=6u64 {
        let dir = tempfile::tempdir().unwrap();
        let mut options = small_tree();
        options.disable_auto_compactions = true;
        options.target_file_size_base = 2 << 10; // about 200 keys a file
        let db = Db::open(dir.path(), options.clone()).unwrap();
        let cf = db.default_cf();
        let mut rng = Rng(seed * 0x9e37_79b9);
        // Rounds of overwrites, each compacted into its own level (the oldest deepest), the
        // last left in L0: the versions of a key spread over the levels.
        for round in 0..4usize {
            for _ in 0..1500 {
                let k = key(rng.below(2000));
                if rng.below(10) == 0 {
                    db.delete(&k).unwrap();
                } else {
                    db.put(&k, format!("v{round}-{}", rng.below(1000))).unwrap();
                }
            }
            db.flush().unwrap();
            if round < 3 {
                let l0: Vec<String> = db
                    .live_files_metadata()
                    .into_iter()
                    .filter(|f| f.level == 0)
                    .map(|f| f.name)
                    .collect();
                db.compact_files(&cf, &l0, 6 - round).unwrap();
            }
        }
        for _ in 0..50 {
            db.put(key(rng.below(2000)), b"in-memtable").unwrap();
        }
        let before = read_all(&db);
        let lo = rng.below(1500);
        let (begin, end) = (key(lo), key(lo + 300 + rng.below(600)));
        let files_before = db.live_files_metadata();
        let mut open_iter = db.iter(&ReadOptions::default());
        let dropped = db
            .delete_files_in_range(&cf, Some(&begin), Some(&end))
            .unwrap();
        let after = read_all(&db);
        // Outside the range nothing changed; inside, a key reads as before or is gone.
        for (k, v) in &before {
            let inside = *k >= begin && *k <= end;
            match after.get(k) {
                Some(now) => assert_eq!(now, v, "seed {seed}: {k:?} changed"),
                None => assert!(inside, "seed {seed}: {k:?} outside the range is gone"),
            }
        }
        for k in after.keys() {
            assert!(before.contains_key(k), "seed {seed}: {k:?} came back");
        }
        // Exactly the files named went, none from L0, each inside the range.
        let live: BTreeSet<String> = db
            .live_files_metadata()
            .into_iter()
            .map(|f| f.name)
            .collect();
        for name in &dropped {
            assert!(!live.contains(name));
            let f = files_before.iter().find(|f| &f.name == name).unwrap();
            assert!(f.level > 0, "seed {seed}: L0 file {name} dropped");
            assert!(f.smallest_key >= begin && f.largest_key <= end, "{f:?}");
        }
        assert_eq!(live.len() + dropped.len(), files_before.len());
        dropped_in_all += dropped.len();
        // The iterator opened before reads the tree it started with.
        open_iter.seek_to_first();
        let mut seen = BTreeMap::new();
        while open_iter.valid() {
            seen.insert(open_iter.key().to_vec(), open_iter.value().to_vec());
            open_iter.next();
        }
        open_iter.status().unwrap();
        assert_eq!(seen, before, "seed {seed}");
        drop(open_iter);
        // The edit is durable.
        drop(db);
        let db = Db::open(dir.path(), options).unwrap();
        assert_eq!(read_all(&db), after, "seed {seed}");
    }
    assert!(
        dropped_in_all > 0,
        "no seed dropped a file: the test tests nothing"
    );
}

#[test]
fn compact_files_compacts_the_files_named_and_keeps_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = small_tree();
    options.disable_auto_compactions = true;
    let db = Db::open(dir.path(), options).unwrap();
    let cf = db.default_cf();
    let mut rng = Rng(99);
    for _ in 0..4 {
        for _ in 0..600 {
            let k = key(rng.below(1000));
            db.put(&k, format!("{}", rng.below(100))).unwrap();
        }
        db.flush().unwrap();
    }
    let model = read_all(&db);
    let l0: Vec<String> = db
        .live_files_metadata()
        .into_iter()
        .filter(|f| f.level == 0)
        .map(|f| f.name)
        .collect();
    assert!(l0.len() >= 4, "{l0:?}");
    db.compact_files(&cf, &l0, 2).unwrap();
    let files = db.live_files_metadata();
    assert!(files.iter().all(|f| f.level == 2), "{files:?}");
    assert!(files.iter().all(|f| !l0.contains(&f.name)));
    assert_eq!(read_all(&db), model);
    // Some of L2 into L3: the rest of L2 stays.
    let some: Vec<String> = files.iter().take(2).map(|f| f.name.clone()).collect();
    db.compact_files(&cf, &some, 3).unwrap();
    let after = db.live_files_metadata();
    assert!(after.iter().any(|f| f.level == 3));
    assert!(after.iter().any(|f| f.level == 2) || files.len() <= 2);
    assert_eq!(read_all(&db), model);
}

#[test]
fn compact_files_refuses_what_would_break_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = small_tree();
    options.disable_auto_compactions = true;
    let db = Db::open(dir.path(), options).unwrap();
    let cf = db.default_cf();
    for round in 0..3 {
        for i in 0..300 {
            db.put(key(i), format!("{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    let l0: Vec<String> = db
        .live_files_metadata()
        .into_iter()
        .map(|f| f.name)
        .collect();
    // Newest first: l0[0] is the newest, l0[2] the oldest.
    assert_eq!(l0.len(), 3);
    let cases: &[(&[&str], usize, &str)] = &[
        (&[], 1, "no file given"),
        (&["junk.txt"], 1, "is not a table file name"),
        (&["999999.sst"], 1, "999999.sst is not a live table"),
        (&[l0[0].as_str()], 0, "output level 0"),
        (&[l0[0].as_str()], 7, "output level 7"),
        (&[l0[0].as_str()], 1, "older than an L0 file given"),
    ];
    for (files, level, expect) in cases {
        let err = db.compact_files(&cf, files, *level).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{files:?}");
        assert!(err.to_string().contains(expect), "{files:?}: {err}");
    }
    // Nothing changed; the oldest alone is fine (newer files stay above it).
    assert_eq!(db.live_files_metadata().len(), 3);
    db.compact_files(&cf, &[format!("/{}", l0[2])], 1).unwrap();
    let l1: Vec<String> = db
        .live_files_metadata()
        .into_iter()
        .filter(|f| f.level == 1)
        .map(|f| f.name)
        .collect();
    assert_eq!(l1.len(), 1);
    // A file of L1 into L1 is allowed; into L0's output, no; L1 under an L3 output with
    // nothing in between is fine, but an input level below the output is refused.
    db.compact_files(&cf, &l1, 3).unwrap();
    let l3: Vec<String> = db
        .live_files_metadata()
        .into_iter()
        .filter(|f| f.level == 3)
        .map(|f| f.name)
        .collect();
    let err = db.compact_files(&cf, &l3, 2).unwrap_err();
    assert!(err.to_string().contains("above level 3"), "{err}");
    // A level between the inputs and the output holding overlapping data is refused.
    db.compact_files(&cf, &[l0[1].as_str()], 2).unwrap();
    let err = db.compact_files(&cf, &[l0[0].as_str()], 3).unwrap_err();
    assert!(err.to_string().contains("its level lies between"), "{err}");
    for i in 0..300 {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&b"2"[..]));
    }
}

/// The case the rule about lower levels is for: new versions in a file fully inside the
/// range, old versions below in a file reaching past it. Dropping the upper file alone would
/// bring the old values back.
#[test]
fn delete_files_in_range_keeps_a_file_whose_older_versions_reach_past_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = small_tree();
    options.disable_auto_compactions = true;
    options.target_file_size_base = 1 << 20; // one file per compaction
    let db = Db::open(dir.path(), options).unwrap();
    let cf = db.default_cf();
    for i in 0..1000 {
        db.put(key(i), b"old").unwrap();
    }
    db.compact_range(None, None).unwrap(); // one file of keys 0..1000 at the bottom
    for i in 400..500 {
        db.put(key(i), b"new").unwrap();
    }
    db.flush().unwrap();
    let l0: Vec<String> = db
        .live_files_metadata()
        .into_iter()
        .filter(|f| f.level == 0)
        .map(|f| f.name)
        .collect();
    db.compact_files(&cf, &l0, 5).unwrap();
    let (begin, end) = (key(300), key(600));
    let l5: Vec<String> = db
        .live_files_metadata()
        .into_iter()
        .filter(|f| f.level == 5)
        .map(|f| f.name)
        .collect();
    let dropped = db
        .delete_files_in_range(&cf, Some(&begin), Some(&end))
        .unwrap();
    assert!(!dropped.contains(&l5[0]), "{dropped:?}");
    for i in 300..=600 {
        let expect: &[u8] = if (400..500).contains(&i) {
            b"new"
        } else {
            b"old"
        };
        match db.get(key(i)).unwrap() {
            Some(v) => assert_eq!(v, expect, "{i}"),
            None => assert!(!(400..500).contains(&i), "{i} gone"),
        }
    }
    assert_eq!(db.get(key(450)).unwrap().as_deref(), Some(&b"new"[..]));
    // With the whole range covered every file goes, and the keys are gone.
    let (all_begin, all_end) = (key(0), key(999));
    let dropped = db
        .delete_files_in_range(&cf, Some(&all_begin), Some(&all_end))
        .unwrap();
    assert!(dropped.contains(&l5[0]), "{dropped:?}");
    assert_eq!(db.get(key(450)).unwrap(), None);
    assert!(db.live_files_metadata().is_empty());
}
