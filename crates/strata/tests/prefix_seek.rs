//! Prefix seeks (RocksDB's prefix mode): a column family with a prefix extractor, read with
//! `prefix_same_as_start` and `total_order_seek`, against a `BTreeMap` model; seeks for absent
//! prefixes skipping every table by its filter (counted in the stats); the extractor recorded
//! in the manifest and checked at open; tables written before the family had an extractor.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use strata::{
    parse_prefix_extractor, CfOptions, Db, DbIterator, DbStats, ErrorKind, Options,
    PrefixExtractor, ReadOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn extractor(name: &str) -> Option<Arc<dyn PrefixExtractor>> {
    Some(parse_prefix_extractor(name).unwrap())
}

/// Options with small buffers and levels, so that a few hundred keys make a tree of L0
/// tables over a deeper level of several files.
fn options(prefix: Option<&str>) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    options.target_file_size_base = 2 << 10;
    options.max_bytes_for_level_base = 16 << 10;
    options.disable_auto_compactions = true;
    options.prefix_extractor = prefix.and_then(extractor);
    options
}

/// Key `p{prefix:03}-{n}`: the first 4 bytes are the prefix under `fixed:4`.
fn key(prefix: u32, n: u32) -> Vec<u8> {
    format!("p{prefix:03}-{n}").into_bytes()
}

/// Writes keys of the even prefixes below 100 in rounds: the first three compacted into the
/// deeper levels, the next two as L0 tables, the last left in the memtable. Returns the
/// model of what the database holds.
fn build_tree(db: &Db) -> Model {
    let mut model = Model::new();
    for round in 0..6u32 {
        for p in (0..100).step_by(2) {
            for n in 0..4 {
                if (p + n + round) % 3 == 0 {
                    let (k, v) = (key(p, n), format!("v{round}-{p}-{n}").into_bytes());
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                }
            }
        }
        // A few deletes, so that hidden versions sit in the tables too.
        let gone = key(2 * (round * 7 % 50), round % 4);
        db.delete(&gone).unwrap();
        model.remove(&gone);
        if round < 5 {
            db.flush().unwrap();
        }
        if round == 2 {
            db.compact_range(None, None).unwrap();
        }
    }
    let stats = db.stats();
    assert_eq!(stats.level_files[0], 2, "two L0 tables");
    assert!(
        stats.level_files[1..].iter().sum::<u64>() >= 2,
        "several deeper files: {:?}",
        stats.level_files
    );
    model
}

/// The keys the iterator walks forward from its position, at most `limit`.
fn walk(it: &mut DbIterator, limit: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while it.valid() && out.len() < limit {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

/// The model's pairs from `target` on whose key starts with `prefix`.
fn model_from(model: &Model, target: &[u8], prefix: Option<&[u8]>) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .range(target.to_vec()..)
        .take_while(|(k, _)| prefix.is_none_or(|p| k.starts_with(p)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn same_prefix() -> ReadOptions {
    let mut read_options = ReadOptions::default();
    read_options.prefix_same_as_start = true;
    read_options
}

fn total_order() -> ReadOptions {
    let mut read_options = ReadOptions::default();
    read_options.total_order_seek = true;
    read_options
}

/// Table reads so far: filter checks for prefixes, and data blocks read (cache or file).
fn reads(s: &DbStats) -> (u64, u64, u64) {
    let (hits, misses) = s.block_cache_by_kind[0];
    (s.prefix_checks, s.prefix_negatives, hits + misses)
}

#[test]
fn prefix_same_as_start_stops_at_the_next_prefix_in_both_directions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(Some("fixed:4"))).unwrap();
    let model = build_tree(&db);
    let mut it = db.iter(&same_prefix());
    for p in 0..101u32 {
        for (n, tail) in [(0, ""), (2, ""), (9, ""), (0, "x")] {
            let mut target = key(p, n);
            target.extend_from_slice(tail.as_bytes());
            it.seek(&target);
            let want = model_from(&model, &target, Some(&target[..4]));
            assert_eq!(walk(&mut it, usize::MAX), want, "seek {target:?}");
            // Backward from the last key at or before the target, within the prefix.
            it.seek_for_prev(&target);
            let mut back = Vec::new();
            while it.valid() {
                back.push(it.key().to_vec());
                it.prev();
            }
            let want_back: Vec<Vec<u8>> = model
                .range(..=target.clone())
                .rev()
                .take_while(|(k, _)| k.starts_with(&target[..4]))
                .map(|(k, _)| k.clone())
                .collect();
            assert_eq!(back, want_back, "seek_for_prev {target:?}");
        }
    }
    // Turning around inside the prefix: next, prev, next.
    it.seek(key(10, 1));
    let first = it.key().to_vec();
    it.next();
    it.prev();
    assert_eq!(it.key(), &first[..]);
    // seek_to_first bounds the walk to the first key's prefix (as RocksDB).
    it.seek_to_first();
    let first_prefix = model.keys().next().unwrap()[..4].to_vec();
    assert_eq!(
        walk(&mut it, usize::MAX),
        model_from(&model, b"", Some(&first_prefix))
    );
    // A target outside the domain (shorter than 4 bytes) is a total-order seek, unbounded.
    it.seek(b"p0");
    assert_eq!(walk(&mut it, usize::MAX), model_from(&model, b"p0", None));
}

#[test]
fn total_order_seek_reads_across_prefixes_and_checks_no_filter() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(Some("fixed:4"))).unwrap();
    let model = build_tree(&db);
    let before = reads(&db.stats());
    let mut it = db.iter(&total_order());
    for p in [0u32, 1, 33, 98, 99] {
        let target = key(p, 0);
        it.seek(&target);
        assert_eq!(walk(&mut it, 50), {
            let mut w = model_from(&model, &target, None);
            w.truncate(50);
            w
        });
    }
    assert_eq!(reads(&db.stats()).0, before.0, "no prefix filter checked");
    // With both options the walk is bounded by the prefix but reads every table.
    let mut both = ReadOptions::default();
    both.total_order_seek = true;
    both.prefix_same_as_start = true;
    let mut it = db.iter(&both);
    it.seek(key(40, 0));
    assert_eq!(
        walk(&mut it, usize::MAX),
        model_from(&model, &key(40, 0), Some(b"p040"))
    );
    assert_eq!(reads(&db.stats()).0, before.0);
}

/// The point of prefix filters: a seek for a prefix no table holds reads no data block. Each
/// L0 table and each deeper level is asked once and says no; only the memtable is searched.
/// With `total_order_seek` the same seek reads data blocks.
#[test]
fn a_seek_for_an_absent_prefix_skips_every_table_by_its_filter() {
    for partitioned in [false, true] {
        absent_prefixes_skip_every_table(partitioned);
    }
}

/// Options whose tables have a partitioned index and filters, cut in partitions of
/// `metadata_block_size` bytes over blocks of 128 bytes (so that prefixes span partitions).
fn partitioned(mut options: Options, metadata_block_size: usize) -> Options {
    options.index_type = strata::IndexType::TwoLevelIndexSearch;
    options.partition_filters = true;
    options.metadata_block_size = metadata_block_size;
    options.block_size = 128;
    options
}

/// `a_seek_for_an_absent_prefix_skips_every_table_by_its_filter`, with partitioned filters
/// or not.
fn absent_prefixes_skip_every_table(partitioned_filters: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(Some("fixed:4"));
    if partitioned_filters {
        opts = partitioned(opts, 64);
    }
    let db = Db::open(dir.path(), opts).unwrap();
    let model = build_tree(&db);
    let stats = db.stats();
    let sources =
        stats.level_files[0] + stats.level_files[1..].iter().filter(|&&n| n > 0).count() as u64;
    for it_options in [same_prefix(), ReadOptions::default()] {
        let mut it = db.iter(&it_options.clone());
        for p in (1..99).step_by(2) {
            let before = reads(&db.stats());
            let target = key(p, 0);
            it.seek(&target);
            let after = reads(&db.stats());
            assert_eq!(
                after.0 - before.0,
                sources,
                "prefix {p}: one filter check per L0 table and per level"
            );
            assert_eq!(after.1 - before.1, sources, "prefix {p}: every one says no");
            assert_eq!(after.2, before.2, "prefix {p}: no data block read");
            if it_options.prefix_same_as_start {
                assert!(!it.valid(), "prefix {p} has no key");
            }
            it.status().unwrap();
        }
    }
    // The same seek in total order reads the tables.
    let before = reads(&db.stats());
    let mut it = db.iter(&total_order());
    it.seek(key(51, 0));
    assert_eq!(
        it.key(),
        model_from(&model, &key(51, 0), None)[0].0.as_slice()
    );
    let after = reads(&db.stats());
    assert_eq!(after.0, before.0);
    assert!(after.2 > before.2, "total order reads data blocks");
    // A present prefix is found whatever the filters skipped.
    let mut it = db.iter(&same_prefix());
    it.seek(key(52, 0));
    assert_eq!(
        walk(&mut it, 10),
        model_from(&model, &key(52, 0), Some(b"p052"))
    );
}

/// Every file of the directory, by name, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .filter(|(name, _)| !name.starts_with("LOG"))
        .collect()
}

#[test]
fn opening_a_family_with_another_prefix_extractor_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cf_with = |name: Option<&str>| {
        let mut cf_options = CfOptions::default();
        cf_options.prefix_extractor = name.and_then(extractor);
        cf_options
    };
    {
        let db = Db::open(dir.path(), options(Some("fixed:4"))).unwrap();
        db.create_cf("plain", cf_with(None)).unwrap();
        db.create_cf("capped", cf_with(Some("capped:2"))).unwrap();
        db.put(b"p001-1", b"v").unwrap();
        db.close().unwrap();
    }
    let open = |default: Option<&str>, plain: Option<&str>, capped: Option<&str>| {
        Db::open_cf(
            dir.path(),
            options(default),
            [("plain", cf_with(plain)), ("capped", cf_with(capped))],
        )
    };
    // The extractors of the default, `plain` and `capped` families, and the error.
    type Case<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>, &'a str);
    let cases: &[Case] = &[
        (
            Some("capped:4"),
            None,
            Some("capped:2"),
            "column family 'default' of DIR was created with prefix extractor 'fixed:4' and is \
             opened with 'capped:4': open it with the prefix extractor it was created with",
        ),
        (
            None,
            None,
            Some("capped:2"),
            "column family 'default' of DIR was created with prefix extractor 'fixed:4' and is \
             opened with none",
        ),
        (
            Some("fixed:4"),
            Some("fixed:1"),
            Some("capped:2"),
            "column family 'plain' of DIR was created with prefix extractor none and is opened \
             with 'fixed:1'",
        ),
        (
            Some("fixed:4"),
            None,
            Some("capped:3"),
            "column family 'capped' of DIR was created with prefix extractor 'capped:2' and is \
             opened with 'capped:3'",
        ),
    ];
    let before = files(dir.path());
    for (default, plain, capped, want) in cases {
        let err = open(*default, *plain, *capped).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        let msg = err
            .to_string()
            .replace(&dir.path().display().to_string(), "DIR");
        assert!(msg.contains(want), "{msg}\nwant: {want}");
        assert_eq!(
            files(dir.path()),
            before,
            "nothing written by a refused open"
        );
    }
    // The extractors it was created with open it, and the data is there.
    let db = open(Some("fixed:4"), None, Some("capped:2")).unwrap();
    assert_eq!(db.get(b"p001-1").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    // A read-only open checks the default family's.
    let err = Db::open_read_only(dir.path(), options(Some("fixed:5")))
        .err()
        .unwrap();
    assert!(err.to_string().contains("'fixed:5'"), "{err}");
}

/// Copies the fixture database `name` (written by a build before prefix extractors, so its
/// manifest records none and its tables' filters hold whole keys only) into `to`.
fn copy_fixture(name: &str, to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// `fixtures/before-prefix`: one table of keys `p{000..038 even}-{0,1,2}` -> `old-P-N`,
/// written before prefix extractors existed. Opened with one, the old table is read by every
/// seek (its filter knows no prefixes: not asked), new tables are skipped by theirs, and the
/// extractor is recorded from then on.
#[test]
fn tables_from_before_the_extractor_are_read_and_new_ones_filtered() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture("before-prefix", dir.path());
    let mut model = Model::new();
    for p in (0..40).step_by(2) {
        for n in 0..3 {
            model.insert(key(p, n), format!("old-{p}-{n}").into_bytes());
        }
    }
    let db = Db::open(dir.path(), options(Some("fixed:4"))).unwrap();
    assert_eq!(db.stats().level_files[0], 1);
    let mut it = db.iter(&same_prefix());
    let before = reads(&db.stats());
    it.seek(key(3, 0));
    assert!(!it.valid());
    let after = reads(&db.stats());
    assert_eq!(
        (after.0, after.1),
        (before.0, before.1),
        "the old table is not asked"
    );
    assert!(after.2 > before.2, "the old table is read");
    // New writes in a new table, whose filter holds prefixes.
    for p in (40..60).step_by(2) {
        db.put(key(p, 0), b"new").unwrap();
        model.insert(key(p, 0), b"new".to_vec());
    }
    db.flush().unwrap();
    let before = reads(&db.stats());
    let mut it = db.iter(&same_prefix());
    it.seek(key(3, 0));
    assert!(!it.valid());
    let after = reads(&db.stats());
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (1, 1),
        "the new table says no"
    );
    for p in [0u32, 2, 38, 40, 58] {
        it.seek(key(p, 0));
        assert_eq!(
            walk(&mut it, usize::MAX),
            model_from(&model, &key(p, 0), Some(&key(p, 0)[..4])),
            "prefix {p}"
        );
    }
    db.close().unwrap();
    // The first open recorded the extractor: another one is refused now.
    let err = Db::open(dir.path(), options(Some("capped:4")))
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("created with prefix extractor 'fixed:4'"),
        "{err}"
    );
    let db = Db::open(dir.path(), options(Some("fixed:4"))).unwrap();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    assert_eq!(walk(&mut it, usize::MAX), model_from(&model, b"", None));
}

/// Compaction keeps the prefix filters: after everything is compacted into the last level,
/// absent prefixes are still skipped by the level's filter, and the data reads back whole.
#[test]
fn compacted_tables_keep_their_prefix_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(Some("capped:4"))).unwrap();
    let model = build_tree(&db);
    db.compact_range(None, None).unwrap();
    let stats = db.stats();
    assert_eq!(stats.level_files[0], 0);
    let mut it = db.iter(&same_prefix());
    let before = reads(&db.stats());
    for p in (1..99).step_by(2) {
        it.seek(key(p, 0));
        assert!(!it.valid(), "prefix {p} has no key");
    }
    let after = reads(&db.stats());
    assert!(after.1 - before.1 >= 49, "{after:?} {before:?}");
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    assert_eq!(walk(&mut it, usize::MAX), model_from(&model, b"", None));
}

/// An extractor whose name is empty (the name recorded for "none") or holds control
/// characters is refused at open, naming the option; nothing is created.
#[test]
fn an_extractor_with_an_unusable_name_is_refused() {
    struct Named(&'static str);
    impl PrefixExtractor for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn in_domain(&self, _: &[u8]) -> bool {
            true
        }
        fn transform<'a>(&self, key: &'a [u8]) -> &'a [u8] {
            &key[..key.len().min(1)]
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for name in ["", "bad\nname"] {
        let mut named = options(None);
        named.prefix_extractor = Some(Arc::new(Named(name)));
        let err = Db::open(dir.path().join("db"), named).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(
            err.to_string()
                .contains(&format!("prefix_extractor name {name:?} is not valid")),
            "{err}"
        );
        assert!(!dir.path().join("db").exists());
    }
    // A name of its own works like the built-ins.
    let mut named = options(None);
    named.prefix_extractor = Some(Arc::new(Named("first-byte")));
    let db = Db::open(dir.path().join("db"), named).unwrap();
    db.put(b"apple", b"1").unwrap();
    db.put(b"banana", b"2").unwrap();
    db.flush().unwrap();
    let mut it = db.iter(&same_prefix());
    it.seek(b"a");
    assert_eq!(walk(&mut it, 10), vec![(b"apple".to_vec(), b"1".to_vec())]);
    it.seek(b"c");
    assert!(!it.valid());
    assert_eq!(db.stats().prefix_negatives, 1);
}

/// `Db::range` runs in total order over a family with an extractor (a range crosses
/// prefixes), and a read-only open without an extractor reads everything in total order.
#[test]
fn ranges_and_read_only_opens_without_an_extractor_see_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(Some("fixed:4"))).unwrap();
    let model = build_tree(&db);
    let from = key(1, 0);
    let got: Vec<(Vec<u8>, Vec<u8>)> = db.range(from.clone()..).map(|r| r.unwrap()).collect();
    assert_eq!(got, model_from(&model, &from, None));
    db.close().unwrap();
    let db = Db::open_read_only(dir.path(), options(None)).unwrap();
    let mut it = db.iter(&ReadOptions::default());
    it.seek(&from);
    assert_eq!(walk(&mut it, usize::MAX), model_from(&model, &from, None));
}

/// Random trees (puts, deletes, range deletions, flushes and compactions at random points)
/// under both built-in extractors, read by random prefix seeks in both directions against a
/// `BTreeMap`: prefix filters and level skipping never hide a key of the target's prefix,
/// range deletions included, and total-order seeks see everything.
#[test]
fn random_trees_read_by_prefix_seeks_match_a_model() {
    use strata::internals::Rng;
    // Seeds 6 and up write partitioned filters, with partitions of one to a few blocks.
    for seed in 0..12u64 {
        let mut rng = Rng::new(seed);
        let extractor = ["fixed:3", "capped:3"][seed as usize % 2];
        let dir = tempfile::tempdir().unwrap();
        let mut small = options(Some(extractor));
        small.write_buffer_size = 8 << 10;
        small.target_file_size_base = 1 << 10;
        if seed >= 6 {
            small = partitioned(small, [1, 64, 200][seed as usize % 3]);
        }
        let db = Db::open(dir.path(), small).unwrap();
        // Prefixes k00..k19, with gaps (odd ones are rare) and short keys ("k", "k1").
        let random_key = |rng: &mut Rng| -> Vec<u8> {
            let p = rng.below(20);
            let p = if p % 2 == 1 && !rng.one_in(4) {
                p - 1
            } else {
                p
            };
            match rng.below(30) {
                0 => b"k".to_vec(),
                1 => format!("k{}", p % 10).into_bytes(),
                _ => format!("k{p:02}{}", rng.below(40)).into_bytes(),
            }
        };
        let mut model = Model::new();
        for op in 0..2500u32 {
            let k = random_key(&mut rng);
            match rng.below(20) {
                0 => {
                    db.delete(&k).unwrap();
                    model.remove(&k);
                }
                1 => {
                    // Mostly narrow ranges (one key's extensions), sometimes wide ones.
                    let mut end = random_key(&mut rng);
                    if end < k || !rng.one_in(4) {
                        end.clone_from(&k);
                        end.push(b'~');
                    }
                    db.delete_range(&k, &end).unwrap();
                    let gone: Vec<Vec<u8>> = model
                        .range(k.clone()..end)
                        .map(|(k, _)| k.clone())
                        .collect();
                    for g in gone {
                        model.remove(&g);
                    }
                }
                _ => {
                    let v = format!("{seed}-{op}").into_bytes();
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                }
            }
            if rng.one_in(150) {
                db.flush().unwrap();
            }
            if rng.one_in(500) {
                db.compact_range(None, None).unwrap();
            }
        }
        // Something in L0 above the compacted levels.
        db.compact_range(None, None).unwrap();
        for _ in 0..100 {
            let k = random_key(&mut rng);
            db.put(&k, b"last").unwrap();
            model.insert(k, b"last".to_vec());
        }
        db.flush().unwrap();
        let e = parse_prefix_extractor(extractor).unwrap();
        let prefix_of = |k: &[u8]| e.in_domain(k).then(|| e.transform(k).to_vec());
        let mut bounded = db.iter(&same_prefix());
        let mut total = db.iter(&total_order());
        for _ in 0..300 {
            let target = match rng.below(5) {
                0 => format!("k{}", rng.below(25)).into_bytes(),
                1 => format!("j{}", rng.below(9)).into_bytes(),
                _ => random_key(&mut rng),
            };
            let prefix = prefix_of(&target);
            let in_prefix = |k: &[u8]| {
                prefix
                    .as_ref()
                    .is_none_or(|p| prefix_of(k).as_ref() == Some(p))
            };
            bounded.seek(&target);
            let want: Vec<(Vec<u8>, Vec<u8>)> = model
                .range(target.clone()..)
                .take_while(|(k, _)| in_prefix(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(
                walk(&mut bounded, usize::MAX),
                want,
                "seed {seed}: seek {target:?}"
            );
            bounded.seek_for_prev(&target);
            let mut back = Vec::new();
            while bounded.valid() {
                back.push(bounded.key().to_vec());
                bounded.prev();
            }
            bounded.status().unwrap();
            let want_back: Vec<Vec<u8>> = model
                .range(..=target.clone())
                .rev()
                .take_while(|(k, _)| in_prefix(k))
                .map(|(k, _)| k.clone())
                .collect();
            assert_eq!(back, want_back, "seed {seed}: seek_for_prev {target:?}");
            total.seek(&target);
            assert_eq!(walk(&mut total, 30), {
                let mut w = model_from(&model, &target, None);
                w.truncate(30);
                w
            });
        }
        // The trees had tables in several levels, and the filters skipped some of them.
        let s = db.stats();
        assert!(
            s.level_files[0] > 0 && s.level_files[6] >= 2,
            "seed {seed}: {:?}",
            s.level_files
        );
        assert!(s.prefix_negatives > 0 && s.prefix_checks > s.prefix_negatives);
    }
}

/// Found by `random_trees_read_by_prefix_seeks_match_a_model`: a level was skipped by
/// `seek_for_prev` after asking the file *after* the target (the first whose largest key is at
/// or after it, the forward rule) when the keys of the prefix sat in the file before it. Here
/// the level holds `[k0700..k0733]` and `[k0800..k0830]`; `seek_for_prev(k074)` must ask the
/// first file (the last whose smallest key is at or before the target) and find `k0733`.
#[test]
fn seek_for_prev_asks_the_file_before_the_target_in_a_level() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(Some("fixed:3"))).unwrap();
    for (first, last) in [(700, 733), (800, 830)] {
        for n in first..=last {
            db.put(format!("k0{n}").as_bytes(), b"v").unwrap();
        }
        db.compact_range(None, None).unwrap();
    }
    let files = db.stats().level_files;
    assert_eq!((files[0], files[6]), (0, 2), "{files:?}");
    let mut it = db.iter(&same_prefix());
    it.seek_for_prev(b"k074");
    assert_eq!(it.key(), b"k0733");
    it.seek(b"k074");
    assert!(!it.valid(), "no key of k07 at or after k074");
    it.seek_for_prev(b"k079");
    assert_eq!(it.key(), b"k0733");
    it.prev();
    assert_eq!(it.key(), b"k0732");
}
