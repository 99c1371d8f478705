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
use crate::{ColumnFamily, Db, Options, UInt64Add, WriteBatch};

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
    // The prefix filter, asked with the extractor the properties name.
    let extractor = table.properties().prefix_extractor.clone();
    let _ = table.may_contain_prefix(&extractor, crate::table::filter::filter_hash(b"k"));
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

/// A column family's contents in the model.
type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// The names of the API target's column families: slot 0 is the default family.
const FAMILIES: [&str; 4] = ["default", "f1", "f2", "f3"];

/// The API target's column families: the handle and the model of each live slot.
struct Families {
    handles: [Option<ColumnFamily>; 4],
    models: [Option<Model>; 4],
}

impl Families {
    /// The default family alone, empty.
    fn new(db: &Db) -> Families {
        Families {
            handles: [Some(db.default_cf()), None, None, None],
            models: [Some(Model::new()), None, None, None],
        }
    }

    /// The live slots, in order.
    fn live(&self) -> Vec<usize> {
        (0..FAMILIES.len())
            .filter(|&i| self.handles[i].is_some())
            .collect()
    }

    fn handle(&self, slot: usize) -> &ColumnFamily {
        self.handles[slot].as_ref().expect("a live family")
    }

    fn model(&mut self, slot: usize) -> &mut Model {
        self.models[slot].as_mut().expect("a live family")
    }

    /// Opens the database with every live family, and takes their new handles.
    fn open(&mut self, dir: &std::path::Path, options: &Options) -> Db {
        let names: Vec<&str> = self.live().into_iter().map(|i| FAMILIES[i]).collect();
        let db = Db::open_cf(
            dir,
            options.clone(),
            names.iter().map(|n| (*n, options.cf_options())),
        )
        .expect("open");
        for i in self.live() {
            self.handles[i] = Some(db.cf(FAMILIES[i]).expect("a family named at open"));
        }
        db
    }
}

/// Every live family of `db` holds what its model holds.
fn check_all(db: &Db, families: &Families, what: &str) {
    for i in families.live() {
        let all: Model = db
            .range_cf::<&[u8], _>(families.handle(i), ..)
            .expect("range_cf")
            .collect::<Result<_>>()
            .expect("scan");
        assert!(
            Some(&all) == families.models[i].as_ref(),
            "{what} of family {} differs from the model",
            FAMILIES[i]
        );
    }
}

/// A sequence of API operations read from the bytes on a real database with tiny memtables
/// and the `uint64add` merge operator, against a `BTreeMap` per column family.
///
/// Each operation is one byte (`op`), then its arguments; `op % 10` picks it:
///
/// | `op % 10` | operation (on the current family unless said) |
/// | --- | --- |
/// | 0-2 | put (merge of a u64 operand when `op >= 160`) |
/// | 3 | delete (range deletion when `op >= 200`) |
/// | 4 | batch of 0-3 writes, each to a live family picked by its key byte |
/// | 5 | get |
/// | 6 | scan |
/// | 7 | flush of every family; when `op >= 200`, a family operation: select (creating it if missing), create, drop, or flush the current family |
/// | 8 | compaction of every family |
/// | 9 | close and reopen with every live family |
///
/// An input without family operations runs on the default family alone, as inputs did
/// before families were added.
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
    let mut families = Families::new(&db);
    // The slot of the family the single-key operations go to.
    let mut cur = 0;
    let mut bytes = data.iter().copied();
    let mut next = || bytes.next();
    while let Some(op) = next() {
        let key = |b: Option<u8>| format!("k{:02}", b.unwrap_or(0) % 32).into_bytes();
        let cf = families.handle(cur).clone();
        match op % 10 {
            0..=2 if op >= 160 => {
                let k = key(next());
                let operand = u64::from(next().unwrap_or(0));
                db.merge_cf(&cf, &k, &operand.to_le_bytes()).expect("merge");
                model_add(families.model(cur), k, operand);
            }
            0..=2 => {
                let k = key(next());
                let v = vec![b'v'; usize::from(next().unwrap_or(0)) * 4];
                match cur {
                    0 => db.put(&k, &v).expect("put"),
                    _ => db.put_cf(&cf, &k, &v).expect("put_cf"),
                }
                families.model(cur).insert(k, v);
            }
            3 if op >= 200 => {
                // A begin after the end is refused and changes nothing.
                let (b, e) = (key(next()), key(next()));
                let done = match cur {
                    0 => db.delete_range(&b, &e),
                    _ => db.delete_range_cf(&cf, &b, &e),
                };
                match done {
                    Ok(()) => families.model(cur).retain(|k, _| !(&b <= k && k < &e)),
                    Err(err) => {
                        assert!(b > e, "delete_range refused: {err}");
                        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
                    }
                }
            }
            3 => {
                let k = key(next());
                match cur {
                    0 => db.delete(&k).expect("delete"),
                    _ => db.delete_cf(&cf, &k).expect("delete_cf"),
                }
                families.model(cur).remove(&k);
            }
            4 => {
                let mut batch = WriteBatch::new();
                let live = families.live();
                for _ in 0..next().unwrap_or(0) % 4 {
                    let at = next().unwrap_or(0);
                    // The key byte's high bits pick the family: with the default family
                    // alone, every write goes to it.
                    let slot = live[usize::from(at / 32) % live.len()];
                    let (family, model) = (
                        families.handles[slot].clone().expect("live"),
                        families.model(slot),
                    );
                    let at = at % 32;
                    let k = key(Some(at));
                    let what = next().unwrap_or(0);
                    if what % 16 == 14 {
                        // A span of up to 7 keys from `k` (never begin after end).
                        let e = key(Some((at + what / 32).min(31)));
                        batch.delete_range_cf(&family, &k, &e);
                        model.retain(|m, _| !(&k <= m && m < &e));
                    } else if what % 2 == 0 {
                        batch.delete_cf(&family, &k);
                        model.remove(&k);
                    } else if what % 4 == 3 {
                        batch.merge_cf(&family, &k, &u64::from(what).to_le_bytes());
                        model_add(model, k, u64::from(what));
                    } else {
                        batch.put_cf(&family, &k, b"batch");
                        model.insert(k, b"batch".to_vec());
                    }
                }
                db.write(batch, &Default::default()).expect("batch");
            }
            5 => {
                let k = key(next());
                let got = match cur {
                    0 => db.get(&k).expect("get"),
                    _ => db.get_cf(&cf, &k).expect("get_cf"),
                };
                assert_eq!(got, families.model(cur).get(&k).cloned(), "get");
            }
            6 => {
                let all: Model = db
                    .range_cf::<&[u8], _>(&cf, ..)
                    .expect("range_cf")
                    .collect::<Result<_>>()
                    .expect("scan");
                assert!(
                    &all == families.model(cur),
                    "a scan of family {} differs from the model",
                    FAMILIES[cur]
                );
            }
            7 if op >= 200 => {
                let sub = next().unwrap_or(0);
                let slot = usize::from(sub / 4) % FAMILIES.len();
                let cf_options = options.cf_options();
                family_op(&db, &cf_options, &mut families, &mut cur, (sub % 4, slot));
            }
            7 => db.flush().expect("flush"),
            8 => db.compact_all().expect("compact"),
            _ => {
                db.close().expect("close");
                db = families.open(&dir, &options);
            }
        }
    }
    check_all(&db, &families, "the final scan");
    db.close().expect("close");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The family operation `kind` of the API target on `slot`: 0 selects it as the current
/// family (creating it if missing), 1 creates it (refused when it exists), 2 drops it
/// (refused for the default family; a dropped handle is then refused), 3 flushes the
/// current family.
fn family_op(
    db: &Db,
    cf_options: &crate::CfOptions,
    families: &mut Families,
    cur: &mut usize,
    (kind, slot): (u8, usize),
) {
    let name = FAMILIES[slot];
    let exists = families.handles[slot].is_some();
    match kind {
        0 | 1 if !exists => {
            let cf = db.create_cf(name, cf_options.clone()).expect("create_cf");
            families.handles[slot] = Some(cf);
            families.models[slot] = Some(Model::new());
            if kind == 0 {
                *cur = slot;
            }
        }
        0 => *cur = slot,
        1 => {
            let err = db
                .create_cf(name, cf_options.clone())
                .expect_err("a family created twice");
            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{err}");
            assert!(err.to_string().contains("already exists"), "{err}");
        }
        2 if slot == 0 => {
            let err = db.drop_cf(&db.default_cf()).expect_err("default dropped");
            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{err}");
        }
        2 if exists => {
            let cf = families.handles[slot].take().expect("exists");
            families.models[slot] = None;
            db.drop_cf(&cf).expect("drop_cf");
            // Its handle now refuses reads and writes; nothing reaches another family.
            let err = db.put_cf(&cf, b"k00", b"v").expect_err("a dropped family");
            assert!(err.to_string().contains("was dropped"), "{err}");
            assert!(
                db.get_cf(&cf, b"k00").is_err(),
                "a read of a dropped family"
            );
            if *cur == slot {
                *cur = 0;
            }
        }
        2 => {}
        _ => db.flush_cf(families.handle(*cur)).expect("flush_cf"),
    }
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

    /// The API target with many family operations (ops 207-247: select, create, drop,
    /// flush), so that writes, merges, range deletions and reads go to several families
    /// created and dropped among flushes, compactions and reopens.
    #[test]
    fn api_ops_over_column_families_agree_with_the_model() {
        let mut rng = crate::util::Rng::new(31);
        for _ in 0..6 {
            let data: Vec<u8> = (0..400)
                .map(|_| match rng.below(12) {
                    0..=2 => 207 + 10 * rng.below(5) as u8,
                    3 => 203 + 10 * rng.below(5) as u8,
                    4 => 160 + rng.below(3) as u8,
                    _ => rng.below(256) as u8,
                })
                .collect();
            api_ops(&data);
        }
    }

    /// Hand-written sequences whose family operations must take the paths they name.
    #[test]
    fn family_operations_take_every_path() {
        // Select (create) f1, put k01 there; the default family does not see it.
        // 207 0b0000_0100 = select slot 1; 0 = put; 5 = get.
        api_ops(&[207, 4, 0, 1, 9, 5, 1, 207, 0, 5, 1, 6]);
        // Create f2 twice (refused), drop it, drop it again (nothing), drop default
        // (refused), flush the current family, reopen, final scans.
        api_ops(&[207, 9, 207, 9, 207, 10, 207, 10, 207, 2, 207, 3, 9, 6]);
        // A batch across two families, a drop of one, a reopen without it.
        api_ops(&[207, 4, 207, 0, 4, 3, 1, 1, 33, 1, 65, 3, 6, 207, 6, 9, 6]);
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
