//! `ReadOptions::fill_cache` and `ReadOptions::verify_checksums`: every read kind returns
//! what a map of the writes holds whichever way it reads blocks; a read that does not fill
//! the cache leaves it as it was; a read that does not verify checksums returns a damaged
//! value where a verifying read reports the damage, and leaves a mapped block unchecked for
//! the next read.

use std::collections::BTreeMap;
use std::path::Path;

use strata::{Db, ErrorKind, Options, ReadOptions, TransactionBase, WriteOptions};

/// Keys and values of the test database: `key{i:05}` to a value that names its key and
/// repeats a marker, so that one value's bytes can be found in a table file.
fn entry(i: usize) -> (Vec<u8>, Vec<u8>) {
    let key = format!("key{i:05}").into_bytes();
    let value = format!("value-of-{i:05}-{}", "v".repeat(80)).into_bytes();
    (key, value)
}

const KEYS: usize = 3_000;

fn options(mapped: bool) -> Options {
    let mut o = Options::default();
    o.create_if_missing = true;
    o.compression = strata::Compression::None;
    o.allow_mmap_reads = mapped;
    o.block_cache_size = 64 << 20;
    // Keep the flushes apart: the reads then cross L0 tables and a deeper level.
    o.disable_auto_compactions = true;
    o
}

/// A database of `KEYS` entries in four tables (one compacted into L6, three in L0, some
/// keys overwritten in the later ones), and the map of what it holds.
fn build(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let db = Db::open(dir, options(false)).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..4 {
        for i in (round..KEYS).step_by(round + 1) {
            let (key, mut value) = entry(i);
            value.extend_from_slice(format!("-round{round}").as_bytes());
            db.put(&key, &value).unwrap();
            model.insert(key, value);
        }
        db.flush().unwrap();
        if round == 0 {
            db.compact_range(None, None).unwrap();
        }
    }
    db.close().unwrap();
    model
}

fn read_options(fill_cache: bool, verify_checksums: bool) -> ReadOptions {
    let mut r = ReadOptions::default();
    r.fill_cache = fill_cache;
    r.verify_checksums = verify_checksums;
    r
}

/// Every read kind under every combination of the two options (and mapped tables or not)
/// returns the map's answers.
#[test]
fn every_read_kind_returns_the_writes_whichever_way_it_reads_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let model = build(dir.path());
    let keys: Vec<&Vec<u8>> = model.keys().step_by(7).collect();
    for mapped in [false, true] {
        for (fill_cache, verify) in [(true, true), (false, true), (true, false), (false, false)] {
            let case = format!("mapped {mapped}, fill_cache {fill_cache}, verify {verify}");
            let db = Db::open(dir.path(), options(mapped)).unwrap();
            let r = read_options(fill_cache, verify);
            for &key in &keys {
                assert_eq!(
                    db.get_opt(key, &r).unwrap().as_ref(),
                    model.get(key),
                    "{case}"
                );
                let pinned = db.get_pinned_opt(key, &r).unwrap();
                assert_eq!(
                    pinned.as_deref(),
                    model.get(key).map(Vec::as_slice),
                    "{case}"
                );
            }
            let missing = db.get_opt(b"key99999x", &r).unwrap();
            assert_eq!(missing, None, "{case}");
            let answers = db.multi_get_opt(keys.iter().copied(), &r);
            for (key, answer) in keys.iter().zip(answers) {
                assert_eq!(answer.unwrap().as_ref(), model.get(*key), "{case}");
            }
            for readahead in [0, 64 << 10] {
                let mut scan = r.clone();
                scan.readahead_size = readahead;
                let mut it = db.iter(&scan);
                it.seek_to_first();
                let mut seen = BTreeMap::new();
                while it.valid() {
                    seen.insert(it.key().to_vec(), it.value().to_vec());
                    it.next();
                }
                it.status().unwrap();
                assert!(
                    seen == model,
                    "{case}, readahead {readahead}: the scan differs"
                );
            }
            db.close().unwrap();
        }
    }
}

/// Reads that do not fill the cache leave its usage where it was; the same reads with the
/// default fill it.
#[test]
fn reads_that_do_not_fill_the_cache_leave_it_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let model = build(dir.path());
    let db = Db::open(dir.path(), options(false)).unwrap();
    let usage = || db.property_int("strata.block-cache-usage").unwrap();
    let before = usage();
    let r = read_options(false, true);
    for key in model.keys().step_by(5) {
        db.get_opt(key, &r).unwrap().unwrap();
    }
    let mut it = db.iter(&r);
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    it.status().unwrap();
    drop(it);
    assert_eq!(
        usage(),
        before,
        "reads without fill_cache changed the cache"
    );
    for key in model.keys().step_by(5) {
        db.get(key).unwrap().unwrap();
    }
    assert!(usage() > before, "default reads left the cache empty");
    db.close().unwrap();
}

/// The table file holding `needle`, and where in it.
fn find_in_tables(dir: &Path, needle: &[u8]) -> (std::path::PathBuf, usize) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sst") {
            let bytes = std::fs::read(&path).unwrap();
            if let Some(at) = bytes.windows(needle.len()).position(|w| w == needle) {
                return (path, at);
            }
        }
    }
    panic!("no table holds {}", String::from_utf8_lossy(needle));
}

/// One byte of one value damaged in its table: a verifying read reports it, one that does
/// not verify returns the damaged value, and a mapped block read without its check is
/// checked by the next read that asks.
#[test]
fn a_damaged_value_is_reported_only_by_reads_that_verify() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    // Key 0 was written in round 0 only (round r writes every (r+1)th key from key r), so
    // its one version is in the compacted table.
    let (key, value) = entry(0);
    let mut damaged = value.clone();
    damaged.extend_from_slice(b"-round0");
    let (table, at) = find_in_tables(dir.path(), &damaged);
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[at + 3] ^= 0x20; // "value" becomes "vaLue"
    std::fs::write(&table, &bytes).unwrap();
    damaged[3] ^= 0x20;

    for mapped in [false, true] {
        let db = Db::open(dir.path(), options(mapped)).unwrap();
        let case = format!("mapped {mapped}");
        let unchecked = read_options(false, false);
        assert_eq!(
            db.get_opt(&key, &unchecked).unwrap(),
            Some(damaged.clone()),
            "{case}"
        );
        // The unchecked read left nothing behind that a checking read would trust.
        let err = db.get(&key).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "{case}: {err}");
        assert!(
            err.to_string().contains("checksum mismatch"),
            "{case}: {err}"
        );
        let err = db.get_opt(&key, &read_options(false, true)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "{case}: {err}");

        // A scan over the damaged block: an error when it verifies, the damaged value when
        // it does not.
        let scan = |r: &ReadOptions| {
            let mut it = db.iter(r);
            it.seek(&key);
            let found = it.valid().then(|| it.value().to_vec());
            (found, it.status())
        };
        let (_, status) = scan(&ReadOptions::default());
        assert_eq!(status.unwrap_err().kind(), ErrorKind::Corruption, "{case}");
        let (found, status) = scan(&unchecked);
        status.unwrap();
        assert_eq!(found, Some(damaged.clone()), "{case}");
        // Read ahead into the iterator's own window (not the cache): checked there too.
        for verify in [true, false] {
            let mut windowed = read_options(false, verify);
            windowed.readahead_size = 64 << 10;
            let (found, status) = scan(&windowed);
            match verify {
                true => assert_eq!(status.unwrap_err().kind(), ErrorKind::Corruption, "{case}"),
                false => assert_eq!(found, Some(damaged.clone()), "{case}"),
            }
        }

        // A transaction's reads take the options the caller gives them.
        let txn = db.optimistic_transaction(&WriteOptions::default());
        let family = db.default_cf();
        let read = txn.get_cf_opt(&family, &key, &unchecked).unwrap();
        assert_eq!(read, Some(damaged.clone()), "{case}");
        let err = txn.get_cf_opt(&family, &key, &ReadOptions::default());
        assert_eq!(err.unwrap_err().kind(), ErrorKind::Corruption, "{case}");
        drop(txn);
        db.close().unwrap();
    }

    // As in RocksDB, a block read unchecked into the cache is served from it to later reads
    // unchecked (tables not mapped: mapped blocks are read in place, not cached).
    let db = Db::open(dir.path(), options(false)).unwrap();
    let cached_unchecked = read_options(true, false);
    assert_eq!(
        db.get_opt(&key, &cached_unchecked).unwrap(),
        Some(damaged.clone())
    );
    assert_eq!(db.get(&key).unwrap(), Some(damaged));
    db.close().unwrap();
}
