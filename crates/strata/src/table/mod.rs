//! Sorted tables (SSTs): immutable files of sorted key-value entries.
//!
//! File layout (on disk; each block framed as in [`format`]):
//!
//! ```text
//! data block*         entries in key order, ~block_size bytes each, compressed per block
//! filter block        bloom filter over filter keys (absent when bits_per_key is 0)
//! properties block    counts and sizes, name -> value
//! meta-index block    "strata.filter" / "strata.properties" -> block handle
//! index block         last key of each data block -> its handle
//! footer              handles of meta-index and index, version, checksum, magic
//! ```
//!
//! The table layer knows nothing of sequence numbers: a [`TableOptions`] gives it the key
//! order, the part of a key the filter indexes, and how to read a key's sequence number and
//! deletion flag for the properties.

pub mod block;
pub mod builder;
pub mod filter;
pub mod format;
pub mod properties;
pub mod reader;

use std::cmp::Ordering;

pub use builder::TableBuilder;
pub use format::Compression;
pub use reader::Table;

/// How tables are built and read.
#[derive(Clone, Copy)]
pub struct TableOptions {
    /// Target raw size of a data block in bytes (4 KiB by default).
    pub block_size: usize,
    /// Entries between restart points in data blocks (16 by default).
    pub restart_interval: usize,
    /// Bloom filter bits per key; 0 builds no filter (10 by default).
    pub bloom_bits_per_key: u32,
    /// Compression of data blocks.
    pub compression: Compression,
    /// The order of keys.
    pub comparator: block::Comparator,
    /// The part of a key the filter indexes (for internal keys: the user key).
    pub filter_key: fn(&[u8]) -> &[u8],
    /// A key's sequence number and whether it is a deletion, for the properties.
    pub key_info: fn(&[u8]) -> (u64, bool),
}

fn bytewise(a: &[u8], b: &[u8]) -> Ordering {
    a.cmp(b)
}

fn whole_key(k: &[u8]) -> &[u8] {
    k
}

fn no_key_info(_: &[u8]) -> (u64, bool) {
    (0, false)
}

impl Default for TableOptions {
    /// Bytewise keys, no sequence numbers: tables usable without a database.
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            restart_interval: 16,
            bloom_bits_per_key: 10,
            compression: Compression::None,
            comparator: bytewise,
            filter_key: whole_key,
            key_info: no_key_info,
        }
    }
}

impl TableOptions {
    /// Options for tables of internal keys (what the database writes).
    pub fn for_internal_keys() -> TableOptions {
        TableOptions {
            comparator: crate::key::compare_internal,
            filter_key: crate::key::user_key,
            key_info: |k| match crate::key::ParsedKey::parse(k) {
                Some(p) => (p.seq, p.kind != crate::key::ValueKind::Put as u8),
                None => (0, false),
            },
            ..TableOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FileSystem, PosixFs};
    use crate::iterator::InternalIterator;
    use crate::util::Rng;
    use crate::ErrorKind;
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::sync::Arc;

    type Model = BTreeMap<Vec<u8>, Vec<u8>>;

    fn write_table(path: &Path, model: &Model, options: TableOptions) -> u64 {
        let file = PosixFs.create_writable(path).unwrap();
        let mut b = TableBuilder::new(file, options);
        for (k, v) in model {
            b.add(k, v).unwrap();
        }
        let (size, props) = b.finish().unwrap();
        assert_eq!(props.entries, model.len() as u64);
        size
    }

    /// Opens a table; `cache`: 0 none, 1 a block cache, 2 a small cache that also holds the
    /// index and filter blocks (so they are evicted and read again).
    fn open(path: &Path, options: TableOptions, cache: u8) -> crate::Result<Arc<Table>> {
        let size = if cache == 2 { 8 << 10 } else { 1 << 20 };
        let block_cache = (cache > 0).then(|| Arc::new(reader::BlockCache::new(size, 4)));
        let read = reader::TableReadOptions {
            block_cache,
            cache_id: 1,
            cache_index_and_filter: cache == 2,
            ..reader::TableReadOptions::uncached(options)
        };
        Table::open(PosixFs.open_random(path)?, path, &read).map(Arc::new)
    }

    fn random_model(rng: &mut Rng, n: usize, odd_keys: bool) -> Model {
        let mut m = Model::new();
        for i in 0..n {
            let key = if odd_keys && i % 50 == 0 {
                match rng.below(3) {
                    0 => Vec::new(),
                    1 => vec![rng.below(256) as u8],
                    _ => vec![b'k'; 65536 + rng.below(3) as usize],
                }
            } else {
                format!("key{:06}", rng.below(100_000)).into_bytes()
            };
            let vlen = if rng.one_in(10) {
                5000
            } else {
                rng.below(120) as usize
            };
            let v = format!("value-{i}-").into_bytes().repeat(vlen / 8 + 1);
            m.insert(key, v[..vlen].to_vec());
        }
        m
    }

    /// Tables against a BTreeMap, for every compression, many restart intervals and block
    /// sizes, odd key sizes (empty, 1 byte, 64 KiB): scans both ways, seeks, point gets.
    #[test]
    fn tables_match_a_btreemap() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng::new(42);
        let mut case = 0;
        for compression in [
            Compression::None,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for (restart_interval, block_size) in [(1, 256), (4, 1024), (16, 4096), (128, 65536)] {
                case += 1;
                let n = 1 + rng.below(2000) as usize;
                let model = random_model(&mut rng, n, case % 2 == 0);
                let options = TableOptions {
                    block_size,
                    restart_interval,
                    compression,
                    bloom_bits_per_key: if case % 3 == 0 { 0 } else { 10 },
                    ..TableOptions::default()
                };
                let path = dir.path().join(format!("{case}.sst"));
                write_table(&path, &model, options);
                let table = open(&path, options, (case % 3) as u8).unwrap();
                assert_eq!(table.verify().unwrap(), model.len() as u64);
                let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                let mut it = table.iter();
                it.seek_to_first();
                let mut got = Vec::new();
                while it.valid() {
                    got.push((it.key().to_vec(), it.value().to_vec()));
                    it.next();
                }
                assert_eq!(got, want, "case {case}");
                it.seek_to_last();
                let mut back = Vec::new();
                while it.valid() {
                    back.push((it.key().to_vec(), it.value().to_vec()));
                    it.prev();
                }
                back.reverse();
                assert_eq!(back, want, "case {case} backwards");
                for _ in 0..200 {
                    let probe = format!("key{:06}", rng.below(100_000)).into_bytes();
                    it.seek(&probe);
                    let expect = model.range(probe.clone()..).next().map(|e| e.0.clone());
                    assert_eq!(it.valid().then(|| it.key().to_vec()), expect);
                    it.seek_for_prev(&probe);
                    let expect = model
                        .range(..=probe.clone())
                        .next_back()
                        .map(|e| e.0.clone());
                    assert_eq!(it.valid().then(|| it.key().to_vec()), expect);
                    let got = table.get(&probe, |k, v| (k.to_vec(), v.to_vec())).unwrap();
                    if let Some(v) = model.get(&probe) {
                        assert_eq!(
                            got,
                            Some((probe.clone(), v.clone())),
                            "filter false negative?"
                        );
                    }
                }
                it.status().unwrap();
            }
        }
    }

    /// A table file held in memory, so that thousands of damaged copies are cheap to read.
    struct MemFile(Vec<u8>);

    impl crate::fs::RandomAccessFile for MemFile {
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> crate::Result<()> {
            let at = offset as usize;
            match self.0.get(at..at + buf.len()) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    Ok(())
                }
                None => Err(crate::Error::io(
                    "read",
                    "bad.sst",
                    std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
                )),
            }
        }
        fn size(&self) -> u64 {
            self.0.len() as u64
        }
    }

    /// Flipping any single byte of a table makes open or verify fail with a corruption error
    /// naming the file; it never yields wrong data or a panic.
    #[test]
    fn every_flipped_byte_is_reported_as_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let model: Model = (0..300u32)
            .map(|i| {
                (
                    format!("key{i:05}").into_bytes(),
                    format!("v{i}").repeat(i as usize % 9).into_bytes(),
                )
            })
            .collect();
        for compression in [Compression::None, Compression::Lz4] {
            let options = TableOptions {
                block_size: 512,
                compression,
                ..TableOptions::default()
            };
            let path = dir.path().join("t.sst");
            write_table(&path, &model, options);
            let good = std::fs::read(&path).unwrap();
            for i in 0..good.len() {
                let mut bytes = good.clone();
                bytes[i] ^= 1 << (i % 8);
                let result = Table::open(
                    Box::new(MemFile(bytes)),
                    Path::new("bad.sst"),
                    &reader::TableReadOptions::uncached(options),
                )
                .and_then(|t| Arc::new(t).verify());
                let err = result.expect_err(&format!("flip at {i} went unnoticed"));
                assert_eq!(err.kind(), ErrorKind::Corruption, "flip at {i}: {err}");
                assert!(err.to_string().contains("bad.sst"), "{err}");
            }
        }
    }

    #[test]
    fn truncated_tables_are_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng::new(10);
        let model = random_model(&mut rng, 100, false);
        let path = dir.path().join("t.sst");
        let options = TableOptions::default();
        write_table(&path, &model, options);
        let good = std::fs::read(&path).unwrap();
        for cut in [0, 1, 55, 56, good.len() / 2, good.len() - 1] {
            std::fs::write(&path, &good[..cut]).unwrap();
            let err = open(&path, options, 0)
                .and_then(|t| t.verify())
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Corruption, "cut at {cut}: {err}");
        }
    }
}
