//! Entry points of the fuzz targets in `fuzz/` (run with `cargo fuzz`), also replayed over
//! the checked-in corpora by `tests/fuzz_corpus.rs` in every test run.
//!
//! Each takes arbitrary bytes. The readers must return data or an error, never panic, loop
//! or allocate without bound; the API target must also agree with a `BTreeMap` model.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::blob::reader::BlobFileReader;
use crate::compaction_filter::ttl::{Clock, ManualClock};
use crate::comparator::KeyOrder;
use crate::error::Result;
use crate::fs::{RandomAccessFile, SequentialFile};
use crate::iterator::InternalIterator;
use crate::key::{append_internal_key, KIND_FOR_SEEK, MAX_SEQUENCE};
use crate::log::LogReader;
use crate::table::block::{Block, BlockIter, BlockOrder};
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

/// A blob file: open, verify, every record in order, and each record again by its reference.
pub fn blob_reader(data: &[u8]) {
    let file = MemFile {
        data: data.to_vec(),
        pos: 0,
    };
    let path = std::path::Path::new("000001.blob");
    let Ok(reader) = BlobFileReader::open(Box::new(file), path, 1) else {
        return;
    };
    let _ = reader.verify();
    for record in reader.records().take(100_000) {
        let Ok(record) = record else { break };
        let again = reader.get(&record.key, &record.index);
        assert_eq!(
            again.as_ref().ok(),
            Some(&record.value),
            "a record read twice differs"
        );
    }
}

/// A data block (internal keys): walks forward and backward, seeks, and point lookups (by
/// the block's hash index when it carries one), in both built-in orders.
pub fn block_reader(data: &[u8]) {
    let Ok(block) = Block::new(data.to_vec()) else {
        return;
    };
    let block = Arc::new(block);
    for order in [KeyOrder::Bytewise, KeyOrder::Reverse] {
        let mut it = BlockIter::new(block.clone(), BlockOrder::Internal(order));
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
            // Arbitrary buckets may send a lookup anywhere (a table's checksums keep them
            // as written): it must end on an entry, past the end or corrupt, never panic.
            it.seek_for_get(k);
            let mut absent = k.clone();
            absent.insert(0, b'~');
            it.seek_for_get(&absent);
        }
    }
}

/// A whole table: open, verify, walk both ways, and look up the keys found. Read without a
/// block cache, then (for partitioned tables, whose partitions and top-level blocks then go
/// through it) with a small one holding the index and filter blocks.
pub fn table_reader(data: &[u8]) {
    for cached in [false, true] {
        let read = TableReadOptions {
            block_cache: cached.then(|| Arc::new(crate::table::reader::new_block_cache(4096, 1))),
            cache_id: 1,
            cache_index_and_filter: cached,
            pin_top_level_index_and_filter: !cached,
            ..TableReadOptions::uncached(TableOptions::for_internal_keys())
        };
        let file = MemFile {
            data: data.to_vec(),
            pos: 0,
        };
        let Ok(table) = Table::open(Box::new(file), std::path::Path::new("fuzz.sst"), &read) else {
            return;
        };
        read_table(Arc::new(table));
    }
}

fn read_table(table: Arc<Table>) {
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
    it.seek_to_last();
    let mut back = 0;
    while it.valid() && back < 100_000 {
        back += 1;
        it.prev();
    }
    for k in keys.iter().take(16) {
        let _ = table.get(k, |_, v| v.len());
        for backward in [false, true] {
            let _ = table.prefix_may_match(
                &extractor,
                k,
                crate::table::filter::filter_hash(k),
                backward,
            );
        }
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

/// The names of the API target's column families: slot 0 is the default family, the last
/// slot the TTL family.
const FAMILIES: [&str; 5] = ["default", "f1", "f2", "f3", "ttl"];

/// The family slots the family operations (`sub < 16` or `sub >= 128`) pick from: the TTL
/// family has operations of its own, so inputs written before it decode as they did.
const PLAIN_FAMILIES: usize = 4;

/// The slot of the TTL family.
const TTL_SLOT: usize = 4;

/// The TTL family's own ttl: what a plain put into it (alone or in a batch) expires after.
const FAMILY_TTL_SECS: u64 = 10;

/// Where the manual clock starts (seconds since the epoch).
const CLOCK_START: u64 = 1_000_000;

/// The API target's column families: the handle and the model of each live slot, and the
/// expiry of each value of the TTL family's model.
struct Families {
    handles: [Option<ColumnFamily>; 5],
    models: [Option<Model>; 5],
    /// Expiry (seconds) of each key of the TTL family's model: a value is read as absent once
    /// the clock is past it (`now > expiry`, as `compaction_filter::ttl::is_expired`).
    expiries: BTreeMap<Vec<u8>, u64>,
}

impl Families {
    /// The default family alone, empty.
    fn new(db: &Db) -> Families {
        Families {
            handles: [Some(db.default_cf()), None, None, None, None],
            models: [Some(Model::new()), None, None, None, None],
            expiries: BTreeMap::new(),
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

    /// What reads of `slot` must return when the clock reads `now`: in the TTL family, the
    /// values not yet expired.
    fn visible(&self, slot: usize, now: u64) -> Model {
        let mut m = self.models[slot].clone().expect("a live family");
        if slot == TTL_SLOT {
            m.retain(|k, _| self.expiries.get(k).is_some_and(|&e| now <= e));
        }
        m
    }

    /// A put of `k` into `slot`; in the TTL family it expires `ttl` seconds after `now`.
    fn put(&mut self, slot: usize, k: Vec<u8>, v: Vec<u8>, now: u64, ttl: u64) {
        if slot == TTL_SLOT {
            self.expiries.insert(k.clone(), now + ttl);
        }
        self.model(slot).insert(k, v);
    }

    fn delete(&mut self, slot: usize, k: &[u8]) {
        self.model(slot).remove(k);
        if slot == TTL_SLOT {
            self.expiries.remove(k);
        }
    }

    /// A range deletion of `[b, e)` in `slot`.
    fn delete_range(&mut self, slot: usize, b: &[u8], e: &[u8]) {
        let outside = |k: &Vec<u8>| !(b <= k.as_slice() && k.as_slice() < e);
        self.model(slot).retain(|k, _| outside(k));
        if slot == TTL_SLOT {
            self.expiries.retain(|k, _| outside(k));
        }
    }

    /// Opens the database with every live family (each with its options), and takes their
    /// new handles.
    fn open(&mut self, dir: &std::path::Path, options: &Options) -> Db {
        let names: Vec<usize> = self.live();
        let db = Db::open_cf(
            dir,
            options.clone(),
            names
                .iter()
                .map(|&i| (FAMILIES[i], family_options(options, i))),
        )
        .expect("open");
        for i in self.live() {
            self.handles[i] = Some(db.cf(FAMILIES[i]).expect("a family named at open"));
        }
        db
    }
}

/// The options of the family in `slot`: the database's, and for the TTL family a ttl and no
/// merge operator (the two cannot be combined).
fn family_options(options: &Options, slot: usize) -> crate::CfOptions {
    let mut cf = options.cf_options();
    if slot == TTL_SLOT {
        cf.ttl = Some(std::time::Duration::from_secs(FAMILY_TTL_SECS));
        cf.merge_operator = None;
    }
    cf
}

/// The whole family `cf` read by an iterator from the first key forward (`range_cf`), or
/// from the last key backward; either way the keys must come in their order.
fn scan(db: &Db, cf: &ColumnFamily, reverse: bool) -> Model {
    if !reverse {
        return db
            .range_cf::<&[u8], _>(cf, ..)
            .expect("range_cf")
            .collect::<Result<_>>()
            .expect("scan");
    }
    let mut it = db.iter_cf(cf, &Default::default()).expect("iter_cf");
    let mut out = Model::new();
    let mut last: Option<Vec<u8>> = None;
    it.seek_to_last();
    while it.valid() {
        assert!(
            last.as_deref().is_none_or(|l| it.key() < l),
            "a backward scan out of order"
        );
        last = Some(it.key().to_vec());
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.prev();
    }
    it.status().expect("backward scan");
    out
}

/// Family `slot` of `db`, scanned both ways, holds what its model shows at `now`.
fn check_family(db: &Db, families: &Families, slot: usize, now: u64, what: &str) {
    let want = families.visible(slot, now);
    for reverse in [false, true] {
        let got = scan(db, families.handle(slot), reverse);
        assert!(
            got == want,
            "{what} of family {} ({}) differs from the model at time {now}",
            FAMILIES[slot],
            if reverse { "backward" } else { "forward" }
        );
    }
}

/// Every live family of `db` holds what its model shows at `now`.
fn check_all(db: &Db, families: &Families, now: u64, what: &str) {
    for i in families.live() {
        check_family(db, families, i, now, what);
    }
}

/// A sequence of API operations read from the bytes on a real database with tiny memtables
/// and the `uint64add` merge operator, against a `BTreeMap` per column family. The TTL
/// family (created by its own operations) has a ttl of 10 seconds and no merge operator; the
/// database reads a [`ManualClock`] that only the input moves, and the model keeps the expiry
/// of each value of that family.
///
/// Each operation is one byte (`op`), then its arguments; `op % 10` picks it:
///
/// | `op % 10` | operation (on the current family unless said) |
/// | --- | --- |
/// | 0-2 | put (merge of a u64 operand when `op >= 160`; refused in the TTL family) |
/// | 3 | delete (range deletion when `op >= 200`) |
/// | 4 | batch of 0-3 writes, each to a live family picked by its key byte |
/// | 5 | get |
/// | 6 | scan forward and backward |
/// | 7 | flush of every family; when `op >= 200`, a family operation chosen by the byte `sub` after it (below) |
/// | 8 | compaction of every family |
/// | 9 | close and reopen with every live family |
///
/// | `sub` | family operation |
/// | --- | --- |
/// | below 16, or 128 and above | on family slot `sub / 4 % 4`, by `sub % 4`: select (creating it if missing), create, drop, or flush the current family |
/// | 16-127, `(sub - 16) % 4` = 0 | select the TTL family (creating it if missing) |
/// | ... = 1 | `put_with_ttl` into the current family (refused unless it is the TTL family), then a key byte, a length byte and a ttl byte (`% 32` seconds) |
/// | ... = 2 | advance the clock by `(sub - 16) / 4` seconds (0-27) |
/// | ... = 3 | drop the TTL family (nothing when it does not exist) |
///
/// An input without family operations runs on the default family alone, as inputs did
/// before families were added. The TTL operations took `sub` values 16-127, which the
/// family operations only read as aliases of 0-15 and no corpus input held, so every older
/// input decodes to the operations it did.
pub fn api_ops(data: &[u8]) {
    let dir = std::env::temp_dir().join(format!(
        "strata-fuzz-{}-{}",
        std::process::id(),
        API_RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let clock = Arc::new(ManualClock::new(CLOCK_START));
    let options = Options {
        create_if_missing: true,
        write_buffer_size: 4096,
        target_file_size_base: 2048,
        max_bytes_for_level_base: 8192,
        level0_file_num_compaction_trigger: 2,
        merge_operator: Some(Arc::new(UInt64Add)),
        clock: clock.clone(),
        // Values of 8 bytes and more (the counters' bases, TTL values) go to small blob
        // files, which compactions move.
        enable_blob_files: true,
        min_blob_size: 8,
        blob_file_size: 1024,
        enable_blob_garbage_collection: true,
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
        let now = clock.now_secs();
        match op % 10 {
            0..=2 if op >= 160 => {
                let k = key(next());
                let operand = u64::from(next().unwrap_or(0));
                let done = db.merge_cf(&cf, &k, operand.to_le_bytes());
                if cur == TTL_SLOT {
                    let err = done.expect_err("a merge into a TTL family");
                    assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{err}");
                    assert!(err.to_string().contains("no merge operator"), "{err}");
                } else {
                    done.expect("merge");
                    model_add(families.model(cur), k, operand);
                }
            }
            0..=2 => {
                let k = key(next());
                let v = vec![b'v'; usize::from(next().unwrap_or(0)) * 4];
                match cur {
                    0 => db.put(&k, &v).expect("put"),
                    _ => db.put_cf(&cf, &k, &v).expect("put_cf"),
                }
                families.put(cur, k, v, now, FAMILY_TTL_SECS);
            }
            3 if op >= 200 => {
                // A begin after the end is refused and changes nothing.
                let (b, e) = (key(next()), key(next()));
                let done = match cur {
                    0 => db.delete_range(&b, &e),
                    _ => db.delete_range_cf(&cf, &b, &e),
                };
                match done {
                    Ok(()) => families.delete_range(cur, &b, &e),
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
                families.delete(cur, &k);
            }
            4 => {
                let mut batch = WriteBatch::new();
                let live = families.live();
                // A merge into the TTL family refuses the whole batch: the model goes back.
                let before = (families.models.clone(), families.expiries.clone());
                let mut refused = false;
                for _ in 0..next().unwrap_or(0) % 4 {
                    let at = next().unwrap_or(0);
                    // The key byte's high bits pick the family: with the default family
                    // alone, every write goes to it.
                    let slot = live[usize::from(at / 32) % live.len()];
                    let family = families.handles[slot].clone().expect("live");
                    let at = at % 32;
                    let k = key(Some(at));
                    let what = next().unwrap_or(0);
                    if what % 16 == 14 {
                        // A span of up to 7 keys from `k` (never begin after end).
                        let e = key(Some((at + what / 32).min(31)));
                        batch.delete_range_cf(&family, &k, &e);
                        families.delete_range(slot, &k, &e);
                    } else if what % 2 == 0 {
                        batch.delete_cf(&family, &k);
                        families.delete(slot, &k);
                    } else if what % 4 == 3 {
                        batch.merge_cf(&family, &k, u64::from(what).to_le_bytes());
                        refused |= slot == TTL_SLOT;
                        if slot != TTL_SLOT {
                            model_add(families.model(slot), k, u64::from(what));
                        }
                    } else {
                        batch.put_cf(&family, &k, b"batch");
                        families.put(slot, k, b"batch".to_vec(), now, FAMILY_TTL_SECS);
                    }
                }
                match db.write(batch, &Default::default()) {
                    Ok(()) => assert!(!refused, "a batch merging into a TTL family written"),
                    Err(err) => {
                        assert!(refused, "batch: {err}");
                        assert!(err.to_string().contains("no merge operator"), "{err}");
                        (families.models, families.expiries) = before;
                    }
                }
            }
            5 => {
                let k = key(next());
                let got = match cur {
                    0 => db.get(&k).expect("get"),
                    _ => db.get_cf(&cf, &k).expect("get_cf"),
                };
                assert_eq!(got, families.visible(cur, now).get(&k).cloned(), "get");
            }
            6 => check_family(&db, &families, cur, now, "a scan"),
            7 if op >= 200 => {
                let sub = next().unwrap_or(0);
                match (16..128).contains(&sub).then(|| (sub - 16) % 4) {
                    Some(1) => {
                        let k = key(next());
                        let v = vec![b'v'; usize::from(next().unwrap_or(0)) * 4];
                        let ttl = u64::from(next().unwrap_or(0) % 32);
                        let done =
                            db.put_with_ttl_cf(&cf, &k, &v, std::time::Duration::from_secs(ttl));
                        if cur == TTL_SLOT {
                            done.expect("put_with_ttl_cf");
                            families.put(cur, k, v, now, ttl);
                        } else {
                            let err = done.expect_err("put_with_ttl into a family without ttl");
                            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{err}");
                            assert!(err.to_string().contains("which has no ttl"), "{err}");
                        }
                    }
                    Some(2) => {
                        clock.advance(std::time::Duration::from_secs(u64::from(sub - 16) / 4))
                    }
                    Some(kind) => ttl_family_op(&db, &options, &mut families, &mut cur, kind),
                    None => {
                        let slot = usize::from(sub / 4) % PLAIN_FAMILIES;
                        let cf_options = options.cf_options();
                        family_op(&db, &cf_options, &mut families, &mut cur, (sub % 4, slot));
                    }
                }
            }
            7 => db.flush().expect("flush"),
            8 => db.compact_all().expect("compact"),
            _ => {
                db.close().expect("close");
                db = families.open(&dir, &options);
            }
        }
    }
    check_all(&db, &families, clock.now_secs(), "the final scan");
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

/// The TTL family operation `kind` of the API target: 0 selects the TTL family as the
/// current family (creating it, empty, if missing); 3 drops it (a `put_with_ttl` through
/// the dropped handle is then refused).
fn ttl_family_op(db: &Db, options: &Options, families: &mut Families, cur: &mut usize, kind: u8) {
    let exists = families.handles[TTL_SLOT].is_some();
    match kind {
        0 if !exists => {
            let cf = db
                .create_cf(FAMILIES[TTL_SLOT], family_options(options, TTL_SLOT))
                .expect("create_cf of the TTL family");
            families.handles[TTL_SLOT] = Some(cf);
            families.models[TTL_SLOT] = Some(Model::new());
            families.expiries.clear();
            *cur = TTL_SLOT;
        }
        0 => *cur = TTL_SLOT,
        _ if exists => {
            let cf = families.handles[TTL_SLOT].take().expect("exists");
            families.models[TTL_SLOT] = None;
            families.expiries.clear();
            db.drop_cf(&cf).expect("drop_cf of the TTL family");
            let err = db
                .put_with_ttl_cf(&cf, b"k00", b"v", std::time::Duration::from_secs(1))
                .expect_err("put_with_ttl into a dropped family");
            assert!(err.to_string().contains("was dropped"), "{err}");
            if *cur == TTL_SLOT {
                *cur = 0;
            }
        }
        _ => {}
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

/// A compressed block's stored contents (raw length, compressed bytes): the first byte picks
/// the algorithm (snappy, lz4, zstd), the rest is the contents. They decompress to exactly
/// the raw length they claim or give an error, never a panic or an allocation the bytes
/// cannot fill (`compression.rs`); and the rest, compressed as a table builder would,
/// decompresses back to itself.
pub fn compressed_block(data: &[u8]) {
    use crate::table::compression::{compress_block, decompress_block, Compression};
    let [pick, contents @ ..] = data else {
        return;
    };
    let kind = [Compression::Snappy, Compression::Lz4, Compression::Zstd][usize::from(*pick) % 3];
    let _ = decompress_block(kind, contents);
    let mut out = Vec::new();
    let stored = compress_block(kind, contents, &mut out);
    let back = match stored {
        Compression::None => Ok(contents.to_vec()),
        _ => decompress_block(stored, &out),
    };
    assert_eq!(
        back.as_deref(),
        Ok(contents),
        "a block compressed by {kind:?}"
    );
}

/// A compression dictionary block and a data block compressed with it: two bytes (little
/// endian) give the dictionary's length, the dictionary follows, then the block's stored
/// contents (raw length, zstd frame). The dictionary is refused or prepared; the block
/// decompresses to data or an error; and the block's bytes, compressed with the dictionary
/// as a table builder would, must decompress back to themselves.
pub fn compression_dict(data: &[u8]) {
    use crate::table::compression::{Compression, CompressionOptions};
    use crate::table::compression_dict::{
        BlockCompressor, CompressionDictionary, DecompressionDictionary,
    };
    use crate::table::format::decompress_block_with;
    let [a, b, rest @ ..] = data else {
        return;
    };
    let len = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
    let (dict, block) = rest.split_at(len);
    let Ok(decoder) = DecompressionDictionary::decode(dict) else {
        return;
    };
    let _ = decompress_block_with(Compression::Zstd, block, Some(&decoder));
    let Some(encoder) = CompressionDictionary::new(dict.to_vec(), 3) else {
        return;
    };
    let mut compressor = BlockCompressor::new(Compression::Zstd, CompressionOptions::default());
    compressor.set_dictionary(encoder);
    let mut out = Vec::new();
    if compressor.compress(Compression::Zstd, block, &mut out, true) == Compression::Zstd {
        let back = decompress_block_with(Compression::Zstd, &out, Some(&decoder));
        assert_eq!(
            back.as_deref(),
            Ok(block),
            "a block compressed with the dictionary"
        );
    }
}

/// A prepared transaction's file (`db/write/two_phase.rs`): decoded to a name and a batch or
/// refused; a decoded one encodes back to a file that decodes to the same name and updates.
pub fn prepared_file(data: &[u8]) {
    let Ok(record) = crate::db::decode_prepared_file(data) else {
        return;
    };
    let again = crate::db::decode_prepared_file(&crate::db::encode_prepared_file(
        &record.name,
        &record.batch,
    ))
    .expect("an encoded prepared file decodes");
    assert_eq!(again.name, record.name);
    assert!(
        again.batch.iter().eq(record.batch.iter()),
        "the updates round-trip"
    );
}

/// The read charges a close leaves (`db/read_charges.rs`): decoded or refused; a decoded
/// file encodes back to bytes that decode to the same charges.
pub fn read_charges_file(data: &[u8]) {
    let Ok(charges) = crate::db::decode_read_charges(data) else {
        return;
    };
    let again = crate::db::decode_read_charges(&crate::db::encode_read_charges(&charges));
    assert_eq!(again, Ok(charges), "the charges round-trip");
}

/// A backup's metadata file (`backup/meta.rs`): parsed or refused as corrupt; a parsed one
/// encodes back to a file that parses to the same metadata.
pub fn backup_meta(data: &[u8]) {
    let path = std::path::Path::new("meta/1");
    let Ok(meta) = crate::backup::Meta::decode(path, data) else {
        return;
    };
    let again = crate::backup::Meta::decode(path, &meta.encode()).expect("encoded metadata parses");
    assert_eq!(again, meta, "metadata round-trips");
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

    /// Hand-written sequences through the TTL family's operations (207 then `sub`: 16
    /// selects it, 17 is `put_with_ttl`, `18 + 4n` advances the clock `n` seconds, 19 drops
    /// it), each path named.
    #[test]
    fn ttl_operations_take_every_path() {
        // A put (expiry now + 10) read at its expiry second and hidden one second later,
        // across a flush, a compaction that drops it, and a reopen.
        api_ops(&[
            207, 16, 0, 1, 1, 7, 207, 58, 5, 1, 6, 207, 22, 5, 1, 8, 6, 9, 6, 5, 1,
        ]);
        // put_with_ttl with ttl 0 lives for the current second only; ttl 31 outlives the
        // family's ttl; a plain put after it takes the family's ttl again.
        api_ops(&[
            207, 16, 207, 17, 2, 2, 0, 207, 17, 3, 1, 31, 5, 2, 207, 22, 5, 2, 6, 207, 58, 0, 3, 1,
            207, 82, 6, 9, 6,
        ]);
        // Refusals: a merge into the TTL family, a batch with a merge into it (live slots 0
        // and 4: key byte 35 picks the TTL family, `what` 3 a merge), and put_with_ttl into
        // the default family; none changes anything.
        api_ops(&[
            207, 16, 0, 1, 1, 160, 1, 9, 4, 2, 35, 3, 36, 1, 6, 207, 0, 207, 17, 1, 1, 5, 6, 5, 1,
        ]);
        // A range deletion and a delete in the TTL family, a drop of it (put_with_ttl through
        // the dropped handle refused), a reopen without it, and a new empty one.
        api_ops(&[
            207, 16, 0, 1, 1, 0, 2, 1, 0, 5, 1, 203, 1, 3, 3, 5, 6, 207, 19, 9, 207, 19, 207, 16, 6,
        ]);
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
