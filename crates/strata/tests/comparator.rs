//! Column families ordered by comparators other than bytewise: the built-in reverse order
//! and an application's own (little-endian u64 keys ordered as numbers, an order unlike the
//! bytewise one). Iteration both ways with bounds, point reads, range deletions, flushes,
//! compactions and reopens follow the family's order; a family reopened with another
//! comparator is refused, naming the family and both comparators, with nothing written.

use std::cmp::Ordering;
use std::sync::Arc;

use strata::{
    BytewiseComparator, CfOptions, Comparator, Db, ErrorKind, Options, ReadOptions,
    ReverseBytewiseComparator,
};

/// Keys of 8 bytes are little-endian u64s ordered as numbers, before every other key; other
/// keys follow bytewise. Different byte strings never compare equal.
struct U64Le;

impl Comparator for U64Le {
    fn name(&self) -> &str {
        "test.U64LittleEndian"
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let num = |k: &[u8]| <[u8; 8]>::try_from(k).ok().map(u64::from_le_bytes);
        match (num(a), num(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => a.cmp(b),
        }
    }
}

fn le(n: u64) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

/// Options that make many small tables and blocks, so that the index separators, level
/// ordering and output cutting of the order all take part.
fn small(comparator: Arc<dyn Comparator>) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 4096;
    options.block_size = 256;
    options.target_file_size_base = 4096;
    options.max_bytes_for_level_base = 16 << 10;
    options.level0_file_num_compaction_trigger = 2;
    options.comparator = comparator;
    options
}

fn keys(db: &Db, options: ReadOptions) -> Vec<Vec<u8>> {
    let mut it = db.iter(&options);
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push(it.key().to_vec());
        it.next();
    }
    it.status().unwrap();
    out
}

fn keys_backward(db: &Db, options: ReadOptions) -> Vec<Vec<u8>> {
    let mut it = db.iter(&options);
    it.seek_to_last();
    let mut out = Vec::new();
    while it.valid() {
        out.push(it.key().to_vec());
        it.prev();
    }
    it.status().unwrap();
    out
}

fn strs(keys: &[&str]) -> Vec<Vec<u8>> {
    keys.iter().map(|k| k.as_bytes().to_vec()).collect()
}

#[test]
fn reverse_order_iterates_gets_and_bounds_the_other_way() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small(Arc::new(ReverseBytewiseComparator))).unwrap();
    for (i, k) in ["b", "d", "a", "e", "c"].iter().enumerate() {
        db.put(k.as_bytes(), format!("v{i}").as_bytes()).unwrap();
        if i == 2 {
            db.flush().unwrap();
        }
    }
    assert_eq!(db.get(b"d").unwrap(), Some(b"v1".to_vec()));
    assert_eq!(db.get(b"z").unwrap(), None);
    let all = strs(&["e", "d", "c", "b", "a"]);
    assert_eq!(keys(&db, ReadOptions::default()), all);
    let mut back = all.clone();
    back.reverse();
    assert_eq!(keys_backward(&db, ReadOptions::default()), back);
    // Bounds in the family's order: from "d" down to "b" (exclusive).
    let bounded = || {
        let mut bounds = ReadOptions::default();
        bounds.lower_bound = Some(b"d".to_vec());
        bounds.upper_bound = Some(b"b".to_vec());
        bounds
    };
    assert_eq!(keys(&db, bounded()), strs(&["d", "c"]));
    assert_eq!(keys_backward(&db, bounded()), strs(&["c", "d"]));
    let mut it = db.iter(&ReadOptions::default());
    it.seek(b"cc");
    assert_eq!(
        it.key(),
        b"c",
        "the first key at or after cc in reverse order"
    );
    it.seek_for_prev(b"cc");
    assert_eq!(it.key(), b"d");
    let range: Vec<Vec<u8>> = db
        .range(&b"d"[..]..=&b"b"[..])
        .map(|kv| kv.unwrap().0)
        .collect();
    assert_eq!(range, strs(&["d", "c", "b"]));
    db.compact_all().unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), all);
    db.close().unwrap();
    let db = Db::open(dir.path(), small(Arc::new(ReverseBytewiseComparator))).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), all);
}

#[test]
fn range_deletions_and_compact_range_follow_the_family_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small(Arc::new(ReverseBytewiseComparator))).unwrap();
    let key = |n: u32| format!("k{n:03}").into_bytes();
    for n in 0..300 {
        db.put(key(n), [b'x'; 40]).unwrap();
    }
    db.flush().unwrap();
    // [k200, k100) in reverse order: k200 down to k101.
    db.delete_range(key(200), key(100)).unwrap();
    let err = db.delete_range(key(10), key(20)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let msg = err.to_string();
    for part in [
        "'k010'",
        "'k020'",
        "'default'",
        "rocksdb.ReverseBytewiseComparator",
    ] {
        assert!(msg.contains(part), "{msg} lacks {part}");
    }
    let expect: Vec<Vec<u8>> = (0..300)
        .rev()
        .filter(|n| !(101..=200).contains(n))
        .map(key)
        .collect();
    assert_eq!(keys(&db, ReadOptions::default()), expect);
    assert_eq!(db.get(key(150)).unwrap(), None);
    assert_eq!(db.get(key(100)).unwrap(), Some(vec![b'x'; 40]));
    // A range in the family's order: the files holding it leave L0.
    db.compact_range(Some(&key(299)), Some(&key(0))).unwrap();
    let shape = db.tree_shape();
    assert_eq!(shape.levels[0].files, 0, "{shape:?}");
    assert_eq!(keys(&db, ReadOptions::default()), expect);
    let mut back = expect.clone();
    back.reverse();
    assert_eq!(keys_backward(&db, ReadOptions::default()), back);
    db.close().unwrap();
    let db = Db::open(dir.path(), small(Arc::new(ReverseBytewiseComparator))).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), expect);
}

#[test]
fn an_application_comparator_orders_u64_keys_as_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let open = || Db::open(dir.path(), small(Arc::new(U64Le))).unwrap();
    let db = open();
    // Written in an order that is neither numeric nor bytewise.
    let mut numbers: Vec<u64> = (0..2000).map(|i| (i * 7919) % 2000 * 300).collect();
    for &n in &numbers {
        db.put(le(n), n.to_be_bytes()).unwrap();
    }
    db.put(b"not a number", b"last").unwrap();
    db.delete_range(le(3000), le(6000)).unwrap();
    db.wait_for_compactions().unwrap();
    numbers.sort_unstable();
    numbers.retain(|n| !(3000..6000).contains(n));
    let mut expect: Vec<Vec<u8>> = numbers.iter().map(|&n| le(n)).collect();
    expect.push(b"not a number".to_vec());
    assert_eq!(keys(&db, ReadOptions::default()), expect);
    let mut bounds = ReadOptions::default();
    bounds.lower_bound = Some(le(1000));
    bounds.upper_bound = Some(le(2200));
    let mut it = db.iter(&bounds);
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        got.push(u64::from_le_bytes(it.key().try_into().unwrap()));
        it.next();
    }
    assert_eq!(got, [1200, 1500, 1800, 2100]);
    // Below the upper bound (2200), not below the target.
    it.seek_for_prev(le(2999));
    assert_eq!(it.key(), le(2100).as_slice());
    let mut it = db.iter(&ReadOptions::default());
    it.seek_for_prev(le(2999));
    assert_eq!(it.key(), le(2700).as_slice());
    it.seek(le(3001));
    assert_eq!(it.key(), le(6000).as_slice(), "3300 to 5700 are deleted");
    db.compact_all().unwrap();
    assert_eq!(db.get(le(4500)).unwrap(), None);
    assert_eq!(
        db.get(le(6000)).unwrap(),
        Some(6000u64.to_be_bytes().to_vec())
    );
    assert_eq!(keys(&db, ReadOptions::default()), expect);
    db.close().unwrap();
    let db = open();
    assert_eq!(keys(&db, ReadOptions::default()), expect);
}

/// The names of the files in `dir` with their contents' lengths, and CURRENT's contents.
fn snapshot_dir(dir: &std::path::Path) -> (Vec<(String, u64)>, Vec<u8>) {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                e.metadata().unwrap().len(),
            )
        })
        .filter(|(name, _)| !name.starts_with("LOG"))
        .collect();
    files.sort();
    (files, std::fs::read(dir.join("CURRENT")).unwrap())
}

/// (default family's comparator, `numbers`' comparator, the family the error names, the
/// comparator recorded, the comparator given).
type Mismatch = (
    Arc<dyn Comparator>,
    Arc<dyn Comparator>,
    &'static str,
    &'static str,
    &'static str,
);

#[test]
fn reopening_a_family_with_another_comparator_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let reverse: Arc<dyn Comparator> = Arc::new(ReverseBytewiseComparator);
    let numbers: Arc<dyn Comparator> = Arc::new(U64Le);
    let cf_with = |c: &Arc<dyn Comparator>| {
        let mut cf_options = CfOptions::default();
        cf_options.comparator = c.clone();
        cf_options
    };
    {
        let mut options = small(reverse.clone());
        options.create_missing_column_families = true;
        let db = Db::open_cf(dir.path(), options, [("numbers", cf_with(&numbers))]).unwrap();
        db.put(b"a", b"1").unwrap();
        let cf = db.cf("numbers").unwrap();
        db.put_cf(&cf, le(5), b"5").unwrap();
        db.flush().unwrap();
        db.flush_cf(&cf).unwrap();
        db.close().unwrap();
    }
    let before = snapshot_dir(dir.path());
    let bytewise: Arc<dyn Comparator> = Arc::new(BytewiseComparator);
    let cases: Vec<Mismatch> = vec![
        (
            bytewise.clone(),
            numbers.clone(),
            "'default'",
            "rocksdb.ReverseBytewiseComparator",
            "leveldb.BytewiseComparator",
        ),
        (
            reverse.clone(),
            bytewise.clone(),
            "'numbers'",
            "test.U64LittleEndian",
            "leveldb.BytewiseComparator",
        ),
        (
            reverse.clone(),
            reverse.clone(),
            "'numbers'",
            "test.U64LittleEndian",
            "rocksdb.ReverseBytewiseComparator",
        ),
    ];
    for (default, family, name, recorded, given) in cases {
        let err = Db::open_cf(dir.path(), small(default), [("numbers", cf_with(&family))])
            .expect_err("a mismatched comparator must be refused");
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        let msg = err.to_string();
        for part in [name, recorded, given] {
            assert!(msg.contains(part), "{msg} lacks {part}");
        }
        assert_eq!(
            snapshot_dir(dir.path()),
            before,
            "the refused open wrote something"
        );
    }
    // Read-only: the default family takes the options' comparator.
    let err = Db::open_read_only(dir.path(), small(bytewise))
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("rocksdb.ReverseBytewiseComparator"),
        "{err}"
    );
    // The right comparators open it, with everything in place.
    let db = Db::open_cf(dir.path(), small(reverse), [("numbers", cf_with(&numbers))]).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    let cf = db.cf("numbers").unwrap();
    assert_eq!(db.get_cf(&cf, le(5)).unwrap(), Some(b"5".to_vec()));
}

#[test]
fn families_of_one_database_keep_their_own_orders() {
    let dir = tempfile::tempdir().unwrap();
    let options = || {
        let mut options = small(Arc::new(BytewiseComparator));
        options.create_missing_column_families = true;
        options
    };
    let reverse = || {
        let mut reverse = CfOptions::default();
        reverse.comparator = Arc::new(ReverseBytewiseComparator);
        reverse
    };
    let names = ["a", "b", "c"];
    {
        let db = Db::open_cf(dir.path(), options(), [("rev", reverse())]).unwrap();
        let rev = db.cf("rev").unwrap();
        for k in names {
            db.put(k.as_bytes(), b"").unwrap();
            db.put_cf(&rev, k.as_bytes(), b"").unwrap();
        }
        db.flush().unwrap();
        db.flush_cf(&rev).unwrap();
        db.close().unwrap();
    }
    let db = Db::open_cf(dir.path(), options(), [("rev", reverse())]).unwrap();
    let rev = db.cf("rev").unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), strs(&names));
    let mut it = db.iter_cf(&rev, &ReadOptions::default()).unwrap();
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        got.push(it.key().to_vec());
        it.next();
    }
    assert_eq!(got, strs(&["c", "b", "a"]));
    let families = strata::internals::read_families(dir.path()).unwrap();
    let recorded: Vec<(&str, &str)> = families
        .values()
        .map(|f| (f.name.as_str(), f.comparator.as_str()))
        .collect();
    assert_eq!(
        recorded,
        [
            ("default", "leveldb.BytewiseComparator"),
            ("rev", "rocksdb.ReverseBytewiseComparator")
        ]
    );
}
