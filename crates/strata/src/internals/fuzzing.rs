//! Entry points of the fuzz targets in `fuzz/` (run with `cargo fuzz`), also replayed over
//! the checked-in corpora by `tests/fuzz_corpus.rs` in every test run.
//!
//! Each takes arbitrary bytes. The readers must return data or an error, never panic, loop
//! or allocate without bound; the API target must also agree with a `BTreeMap` model.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::fs::{RandomAccessFile, SequentialFile};
use crate::iterator::InternalIterator;
use crate::key::{append_internal_key, KIND_FOR_SEEK, MAX_SEQUENCE};
use crate::log::LogReader;
use crate::table::block::{Block, BlockIter, Comparator};
use crate::table::filter::Filter;
use crate::table::reader::TableReadOptions;
use crate::table::{Table, TableOptions};
use crate::version::{Version, VersionEdit};
use crate::write_batch::DecodedBatch;
use crate::{Db, Options, UInt64Add, WriteBatch};

/// Bytes as a file, for the readers.
struct MemFile {
    data: Vec<u8>,
    pos: usize,
}

impl SequentialFile for MemFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = buf.len().min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl RandomAccessFile for MemFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&e| e <= self.data.len() as u64);
        match end {
            Some(end) => {
                buf.copy_from_slice(&self.data[offset as usize..end as usize]);
                Ok(())
            }
            None => Err(crate::Error::corruption(
                "fuzz.sst",
                offset,
                "read past the end",
            )),
        }
    }

    fn size(&self) -> u64 {
        self.data.len() as u64
    }
}

/// WAL bytes: every record the reader returns is parsed as a write batch.
pub fn wal_reader(data: &[u8]) {
    let mut reader = LogReader::new(Box::new(MemFile {
        data: data.to_vec(),
        pos: 0,
    }));
    // Reading stops at the end or at the first bad record.
    while let Ok(Some(record)) = reader.read_record() {
        if let Ok(batch) = DecodedBatch::parse(record) {
            for entry in batch.iter() {
                if entry.is_err() {
                    break;
                }
            }
        }
    }
}

/// A data block (internal keys): walks forward and backward, and seeks.
pub fn block_reader(data: &[u8]) {
    let Ok(block) = Block::new(data.to_vec()) else {
        return;
    };
    let mut it = BlockIter::new(Arc::new(block), Comparator::Internal(Default::default()));
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() && keys.len() < 100_000 {
        keys.push(it.key().to_vec());
        it.next();
    }
    it.seek_to_last();
    let mut back = 0;
    while it.valid() && back < 100_000 {
        back += 1;
        it.prev();
    }
    for k in keys.iter().take(16) {
        it.seek(k);
        it.seek_for_prev(k);
    }
}

/// A whole table: open, verify, walk, and look up the keys found.
pub fn table_reader(data: &[u8]) {
    let file = MemFile {
        data: data.to_vec(),
        pos: 0,
    };
    let Ok(table) = Table::open(
        Box::new(file),
        std::path::Path::new("fuzz.sst"),
        &TableReadOptions::uncached(TableOptions::for_internal_keys()),
    ) else {
        return;
    };
    let table = Arc::new(table);
    let _ = table.verify();
    let mut it = table.iter();
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() && keys.len() < 100_000 {
        keys.push(it.key().to_vec());
        it.next();
    }
    let _ = it.status();
    for k in keys.iter().take(16) {
        let _ = table.get(k, |_, v| v.len());
        let mut seek = Vec::new();
        append_internal_key(&mut seek, k, MAX_SEQUENCE, KIND_FOR_SEEK);
        it.seek(&seek);
        it.prev();
    }
}

/// A filter block: probed with a few keys.
pub fn filter_reader(data: &[u8]) {
    if let Ok(filter) = Filter::new(data.to_vec()) {
        for k in [&b""[..], b"a", b"key", data] {
            let _ = filter.may_contain(k);
        }
    }
}

/// A manifest record: decoded, applied to an empty version, and its invariants checked.
pub fn manifest_decoder(data: &[u8]) {
    if let Ok(edit) = VersionEdit::decode(data) {
        let round_trip = VersionEdit::decode(&edit.encode()).expect("an encoded edit decodes");
        assert_eq!(round_trip.encode(), edit.encode(), "edits round-trip");
        if let Ok(v) = Version::default().apply(&edit) {
            let _ = v.check();
        }
    }
}

static API_RUNS: AtomicU64 = AtomicU64::new(0);

/// A sequence of API operations read from the bytes (put, merge, delete, range deletion,
/// batch, get, scan, flush, compaction, reopen) on a real database with tiny memtables and the `uint64add`
/// merge operator, against a `BTreeMap`.
pub fn api_ops(data: &[u8]) {
    let dir = std::env::temp_dir().join(format!(
        "strata-fuzz-{}-{}",
        std::process::id(),
        API_RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let options = Options {
        create_if_missing: true,
        write_buffer_size: 4096,
        target_file_size_base: 2048,
        max_bytes_for_level_base: 8192,
        level0_file_num_compaction_trigger: 2,
        merge_operator: Some(Arc::new(UInt64Add)),
        ..Options::default()
    };
    let mut db = Db::open(&dir, options.clone()).expect("open");
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut bytes = data.iter().copied();
    let mut next = || bytes.next();
    while let Some(op) = next() {
        let key = |b: Option<u8>| format!("k{:02}", b.unwrap_or(0) % 32).into_bytes();
        match op % 10 {
            0..=2 if op >= 160 => {
                let k = key(next());
                let operand = u64::from(next().unwrap_or(0));
                db.merge(&k, &operand.to_le_bytes()).expect("merge");
                model_add(&mut model, k, operand);
            }
            0..=2 => {
                let k = key(next());
                let v = vec![b'v'; usize::from(next().unwrap_or(0)) * 4];
                db.put(&k, &v).expect("put");
                model.insert(k, v);
            }
            3 if op >= 200 => {
                // A begin after the end is refused and changes nothing.
                let (b, e) = (key(next()), key(next()));
                match db.delete_range(&b, &e) {
                    Ok(()) => model.retain(|k, _| !(&b <= k && k < &e)),
                    Err(err) => {
                        assert!(b > e, "delete_range refused: {err}");
                        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
                    }
                }
            }
            3 => {
                let k = key(next());
                db.delete(&k).expect("delete");
                model.remove(&k);
            }
            4 => {
                let mut batch = WriteBatch::new();
                for _ in 0..next().unwrap_or(0) % 4 {
                    let at = next().unwrap_or(0) % 32;
                    let k = key(Some(at));
                    let what = next().unwrap_or(0);
                    if what % 16 == 14 {
                        // A span of up to 7 keys from `k` (never begin after end).
                        let e = key(Some((at + what / 32).min(31)));
                        batch.delete_range(&k, &e);
                        model.retain(|m, _| !(&k <= m && m < &e));
                    } else if what % 2 == 0 {
                        batch.delete(&k);
                        model.remove(&k);
                    } else if what % 4 == 3 {
                        batch.merge(&k, &u64::from(what).to_le_bytes());
                        model_add(&mut model, k, u64::from(what));
                    } else {
                        batch.put(&k, b"batch");
                        model.insert(k, b"batch".to_vec());
                    }
                }
                db.write(batch, &Default::default()).expect("batch");
            }
            5 => {
                let k = key(next());
                assert_eq!(db.get(&k).expect("get"), model.get(&k).cloned(), "get");
            }
            6 => {
                let all: BTreeMap<Vec<u8>, Vec<u8>> = db
                    .range::<&[u8], _>(..)
                    .collect::<Result<_>>()
                    .expect("scan");
                assert!(all == model, "a scan differs from the model");
            }
            7 => db.flush().expect("flush"),
            8 => db.compact_all().expect("compact"),
            _ => {
                db.close().expect("close");
                db = Db::open(&dir, options.clone()).expect("reopen");
            }
        }
    }
    let all: BTreeMap<Vec<u8>, Vec<u8>> = db
        .range::<&[u8], _>(..)
        .collect::<Result<_>>()
        .expect("scan");
    assert!(all == model, "the final scan differs from the model");
    db.close().expect("close");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The model of a `uint64add` merge: a value that is not 8 bytes long counts as 0.
fn model_add(model: &mut BTreeMap<Vec<u8>, Vec<u8>>, key: Vec<u8>, operand: u64) {
    let old = model
        .get(&key)
        .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
        .map_or(0, u64::from_le_bytes);
    model.insert(key, old.wrapping_add(operand).to_le_bytes().to_vec());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_take_empty_and_random_input() {
        let mut rng = crate::util::Rng::new(5);
        for len in [0, 1, 7, 12, 56, 100, 5000] {
            let data: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            wal_reader(&data);
            block_reader(&data);
            table_reader(&data);
            filter_reader(&data);
            manifest_decoder(&data);
        }
        api_ops(&[0, 1, 2, 5, 1, 7, 6, 9, 5, 1, 3, 1, 8, 6]);
    }

    /// The API target with many merges (ops at or above 160 ending in 0-2), so that its
    /// merge paths are exercised without the fuzzer: merges onto puts of other lengths,
    /// onto deletes, in batches, across flushes, compactions and reopens.
    /// The API target with many range deletions (ops at or above 200 ending in 3), some with
    /// begin after end, among puts, merges, flushes, compactions and reopens.
    #[test]
    fn api_ops_with_range_deletions_agree_with_the_model() {
        let mut rng = crate::util::Rng::new(23);
        for _ in 0..6 {
            let data: Vec<u8> = (0..400)
                .map(|_| match rng.below(10) {
                    0..=1 => 203 + 10 * rng.below(5) as u8,
                    2..=3 => 160 + rng.below(3) as u8,
                    _ => rng.below(256) as u8,
                })
                .collect();
            api_ops(&data);
        }
    }

    #[test]
    fn api_ops_with_merges_agree_with_the_model() {
        let mut rng = crate::util::Rng::new(11);
        for _ in 0..6 {
            let data: Vec<u8> = (0..400)
                .map(|_| match rng.below(10) {
                    0..=4 => 160 + rng.below(3) as u8,
                    _ => rng.below(256) as u8,
                })
                .collect();
            api_ops(&data);
        }
    }
}
