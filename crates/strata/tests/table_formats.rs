//! Databases whose one table is of each table format version (`tests/fixtures/table-vN/`, see
//! `table/format.rs` for what each version adds), checked in so that a change that stops
//! reading one is caught: each opens, its table's footer names its version, and it reads back
//! the entries it was written with, old versions included.
//!
//! The fixtures were written by `write_fixtures` below (`STRATA_WRITE_FIXTURES=1 cargo test
//! -p strata --test table_formats write_fixtures`, or `STRATA_WRITE_FIXTURES=table-v6` for
//! that one alone); they are not rewritten in ordinary runs.

use std::path::{Path, PathBuf};

use strata::{ChecksumType, Compression, DataBlockIndexType, Db, IndexType, Options, ReadOptions};

/// Versions of the key every fixture keeps (one snapshot each, so that the flush keeps them
/// all and, in 256-byte blocks, they span several data blocks).
const VERSIONS: u32 = 24;
/// Other keys: `key000` to `key059`.
const KEYS: u32 = 60;

/// The fixtures: directory, the format version of its table, and how it was written.
const FIXTURES: [(&str, u32, Kind); 6] = [
    // A user key's versions span data blocks, so the index keeps internal keys.
    ("table-v1", 1, Kind::Plain),
    ("table-v2", 2, Kind::RangeDeletion),
    ("table-v3", 3, Kind::Partitioned),
    ("table-v4", 4, Kind::PartitionedHashed),
    // One version of each key: the index holds user keys.
    ("table-v5", 5, Kind::UserKeyIndex),
    // Zstd with a dictionary of the first data blocks, xxh3 checksums.
    ("table-v6", 6, Kind::DictionaryXxh3),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    RangeDeletion,
    Partitioned,
    PartitionedHashed,
    UserKeyIndex,
    DictionaryXxh3,
}

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn options(kind: Kind) -> Options {
    let mut o = Options::default();
    o.block_size = 256;
    o.disable_auto_compactions = true;
    if matches!(kind, Kind::Partitioned | Kind::PartitionedHashed) {
        o.index_type = IndexType::TwoLevelIndexSearch;
        o.metadata_block_size = 128;
    }
    if kind == Kind::PartitionedHashed {
        o.data_block_index_type = DataBlockIndexType::BinaryAndHash;
    }
    if kind == Kind::DictionaryXxh3 {
        o.compression = Compression::Zstd;
        o.compression_opts.max_dict_bytes = 1024;
        o.checksum = ChecksumType::Xxh3;
    }
    o
}

fn key(i: u32) -> String {
    format!("key{i:03}")
}

fn value(i: u32) -> String {
    format!("value of {} written with the fixture", key(i))
}

fn versioned(v: u32) -> String {
    format!("version {v:02} of the versioned key, padded to fill blocks")
}

/// Whether key `i` survives the fixture's writes (its range deletion takes keys 10 to 19).
fn live(kind: Kind, i: u32) -> bool {
    kind != Kind::RangeDeletion || !(10..20).contains(&i)
}

/// Writes the fixture of `kind` into the empty directory `dir`.
fn write(dir: &Path, kind: Kind) {
    let mut o = options(kind);
    o.create_if_missing = true;
    let db = Db::open(dir, o).unwrap();
    for i in 0..KEYS {
        db.put(key(i), value(i)).unwrap();
    }
    let mut snapshots = Vec::new();
    if kind != Kind::UserKeyIndex {
        for v in 0..VERSIONS {
            db.put("versioned", versioned(v)).unwrap();
            snapshots.push(db.snapshot());
        }
    }
    if kind == Kind::RangeDeletion {
        db.delete_range(key(10), key(20)).unwrap();
    }
    db.flush().unwrap();
    drop(snapshots);
    drop(db);
}

/// The one table of the database in `dir`.
fn the_table(dir: &Path) -> PathBuf {
    let tables: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    assert_eq!(tables.len(), 1, "{}: {tables:?}", dir.display());
    tables.into_iter().next().unwrap()
}

/// The format version a table's footer records (bytes 40..44 of its 56-byte footer).
fn footer_version(table: &Path) -> u32 {
    let bytes = std::fs::read(table).unwrap();
    let footer = &bytes[bytes.len() - 56..];
    u32::from_le_bytes(footer[40..44].try_into().unwrap())
}

#[test]
fn a_table_of_each_format_version_opens_and_reads_back() {
    for (name, version, kind) in FIXTURES {
        let from = fixture_dir(name);
        let dir = tempfile::tempdir().unwrap();
        for e in std::fs::read_dir(&from).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
        }
        assert_eq!(footer_version(&the_table(dir.path())), version, "{name}");
        // Read with today's default checksum: each table's footer names its own.
        let mut read_options = options(kind);
        read_options.checksum = ChecksumType::Crc32c;
        let db = Db::open(dir.path(), read_options).unwrap();
        for i in 0..KEYS {
            let want = live(kind, i).then(|| value(i).into_bytes());
            assert_eq!(db.get(key(i)).unwrap(), want, "{name}: {}", key(i));
        }
        let mut it = db.iter(&ReadOptions::default());
        it.seek_to_first();
        let mut seen = 0;
        while it.valid() {
            seen += 1;
            it.next();
        }
        it.status().unwrap();
        let versioned_key = u32::from(kind != Kind::UserKeyIndex);
        let live_keys = (0..KEYS).filter(|&i| live(kind, i)).count() as u32;
        assert_eq!(seen, live_keys + versioned_key, "{name}");
        if kind != Kind::UserKeyIndex {
            assert_eq!(
                db.get("versioned").unwrap(),
                Some(versioned(VERSIONS - 1).into_bytes()),
                "{name}"
            );
        }
    }
}

/// Writes the fixtures again (only with `STRATA_WRITE_FIXTURES` set): each is a fresh
/// database whose one table must be of its version.
#[test]
fn write_fixtures() {
    let Some(which) = std::env::var_os("STRATA_WRITE_FIXTURES") else {
        return;
    };
    for (name, version, kind) in FIXTURES {
        if which != "1" && which != name {
            continue;
        }
        let dir = fixture_dir(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        write(&dir, kind);
        // The info log and the lock are not part of the fixture.
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name == "LOCK" || name.starts_with("LOG") {
                std::fs::remove_file(&p).unwrap();
            }
        }
        assert_eq!(footer_version(&the_table(&dir)), version, "{name}");
    }
}
