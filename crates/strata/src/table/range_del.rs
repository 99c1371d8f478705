//! The range-deletion block of a table: the table's range tombstones, written by the builder
//! and fragmented once when the table is opened.
//!
//! Byte layout (on disk; do not change): an ordinary block (`block.rs`, restart interval 16),
//! stored uncompressed with the usual trailer, named `strata.range_del` in the meta-index.
//! One entry per tombstone:
//!
//! ```text
//! key   := begin user key | trailer: fixed64 LE = (seq << 8) | 15    (15: range deletion)
//! value := end user key (exclusive)
//! ```
//!
//! Entries are in internal-key order (begin ascending, then sequence descending; equal keys
//! by end ascending), each with `begin < end`. The builder stores the tombstones as given,
//! not fragmented, as RocksDB does: fragmenting can multiply their number (`n` nested ranges
//! give fragments carrying up to `n` sequence numbers each), and the reader fragments anyway.
//! Flushes and compactions are expected to hand the builder tombstones already reduced for
//! their snapshots (`FragmentedList::for_compaction`). The reader accepts any set of valid
//! entries in order, fragmented or not.
//!
//! A table without range deletions has no such block and no meta-index entry, byte for byte
//! as before range deletions existed. A table with one is written with footer format version
//! 2, so that a build that does not know the block refuses the table instead of returning
//! keys it deletes.

use std::sync::Arc;

use crate::comparator::KeyOrder;
use crate::key::{append_internal_key, ParsedKey};
use crate::range_del::{FragmentedList, Tombstone, RANGE_DELETION_KIND};
use crate::table::block::{Block, BlockBuilder, BlockIter, BlockOrder};

/// The block's name in the meta-index.
pub const META_NAME: &[u8] = b"strata.range_del";

/// Restart interval of the block: tombstones of one fragment share their begin key.
const RESTART_INTERVAL: usize = 16;

/// Sorts `tombstones` into block order (user keys in `order`) and drops repeats. Empty
/// ranges must be gone already.
pub fn sort_for_block(tombstones: &mut Vec<Tombstone>, order: &KeyOrder) {
    tombstones.sort_unstable_by(|a, b| {
        order
            .compare(&a.begin, &b.begin)
            .then(b.seq.cmp(&a.seq))
            .then(order.compare(&a.end, &b.end))
    });
    tombstones.dedup();
}

/// The block contents for `tombstones`, which are in the order of `sort_for_block`.
pub fn encode(tombstones: &[Tombstone]) -> Vec<u8> {
    let mut b = BlockBuilder::new(RESTART_INTERVAL);
    let mut key = Vec::new();
    for t in tombstones {
        debug_assert!(
            t.begin != t.end,
            "the builder drops ranges empty in its order"
        );
        key.clear();
        append_internal_key(&mut key, &t.begin, t.seq, RANGE_DELETION_KIND);
        b.add(&key, &t.end);
    }
    b.finish().to_vec()
}

/// Decodes block contents into the tombstones they hold, user keys in `order`; the error
/// says what is wrong (the caller names the file and the block).
pub fn decode(data: Vec<u8>, order: &KeyOrder) -> Result<Vec<Tombstone>, String> {
    let block = Block::new(data)?;
    let cmp = BlockOrder::Internal(order.clone());
    let mut it = BlockIter::new(Arc::new(block), cmp.clone());
    it.seek_to_first();
    let mut out = Vec::new();
    let mut prev: Vec<u8> = Vec::new();
    while it.valid() {
        let n = out.len();
        let key = it.key();
        let p = ParsedKey::parse(key)
            .ok_or_else(|| format!("entry {n}: key of {} bytes has no trailer", key.len()))?;
        if p.kind != RANGE_DELETION_KIND {
            return Err(format!(
                "entry {n}: kind {} is not a range deletion",
                p.kind
            ));
        }
        let end = it.value();
        if order.le(end, p.user_key) {
            return Err(format!(
                "entry {n}: empty range {}-{}",
                crate::util::printable(p.user_key),
                crate::util::printable(end)
            ));
        }
        if n > 0 && cmp.compare(&prev, key).is_gt() {
            return Err(format!("entry {n}: keys out of order"));
        }
        prev.clear();
        prev.extend_from_slice(key);
        out.push(Tombstone::new(p.user_key, end, p.seq));
        it.next();
    }
    if let Some(why) = it.corrupt() {
        return Err(why.to_string());
    }
    Ok(out)
}

/// Decodes block contents and fragments them; also returns the number of entries.
pub fn decode_fragmented(data: Vec<u8>, order: &KeyOrder) -> Result<(FragmentedList, u64), String> {
    let tombstones = decode(data, order)?;
    Ok((
        FragmentedList::new_in(order, &tombstones),
        tombstones.len() as u64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::fs::{FileSystem, PosixFs};
    use crate::key::{ValueKind, MAX_SEQUENCE};
    use crate::table::compression::Compression;
    use crate::table::format::{
        block_trailer, BlockHandle, Footer, FOOTER_LEN, TABLE_FORMAT_VERSION_USER_KEY_INDEX,
    };
    use crate::table::properties::TableProperties;
    use crate::table::reader::TableReadOptions;
    use crate::table::{Table, TableBuilder, TableOptions};
    use crate::testing::lsm::{open_table, Caching};
    use crate::util::Rng;
    use std::path::Path;

    /// The internal keys bounding a table's tombstones.
    type Bounds = (Vec<u8>, Vec<u8>);

    fn ikey(k: &[u8], seq: u64) -> Vec<u8> {
        let mut v = Vec::new();
        append_internal_key(&mut v, k, seq, ValueKind::Put as u8);
        v
    }

    /// Builds a table at `path` with point entries `k000..` (every third) and `tombstones`
    /// added in the given order; returns the builder's tombstone bounds.
    fn build(
        path: &Path,
        points: u64,
        tombstones: &[Tombstone],
    ) -> (Option<Bounds>, TableProperties) {
        let mut b = TableBuilder::new(
            PosixFs.create_writable(path).unwrap(),
            TableOptions {
                block_size: 256,
                ..TableOptions::for_internal_keys()
            },
        );
        for t in tombstones {
            b.add_range_tombstone(&t.begin, &t.end, t.seq).unwrap();
        }
        for i in 0..points {
            b.add(
                &ikey(format!("k{:03}", i * 3).as_bytes(), 100 + i),
                b"value",
            )
            .unwrap();
        }
        let bounds = b.range_tombstone_bounds();
        let (_, props) = b.finish().unwrap();
        (bounds, props)
    }

    fn random_tombstones(rng: &mut Rng, n: usize) -> Vec<Tombstone> {
        (0..n)
            .map(|_| {
                let a = rng.below(300);
                let b = a + 1 + rng.below(60);
                Tombstone::new(
                    format!("k{a:03}").as_bytes(),
                    format!("k{b:03}").as_bytes(),
                    1 + rng.below(1000),
                )
            })
            .collect()
    }

    /// Tables with tombstones (in any order) and points round-trip: the reopened table's
    /// fragmented list is the tombstones fragmented, its points are all there, its
    /// properties count both, and the builder's bounds cover the tombstones.
    #[test]
    fn tables_round_trip_their_range_tombstones() {
        let dir = tempfile::tempdir().unwrap();
        for seed in 0..20 {
            let mut rng = Rng::new(seed);
            let n = rng.below(40) as usize + usize::from(seed == 0);
            let points = if seed % 4 == 3 { 0 } else { rng.below(200) };
            let mut ts = random_tombstones(&mut rng, n);
            ts.push(ts[0].clone()); // a repeat is stored once
            ts.push(Tombstone::new(b"k5", b"k5", 7)); // empty: not stored
            let path = dir.path().join(format!("{seed}.sst"));
            let (bounds, props) = build(&path, points, &ts);
            let table =
                open_table(&path, TableOptions::for_internal_keys(), Caching::Data).unwrap();
            let want = FragmentedList::new(&ts);
            assert_eq!(
                format!("{:?}", table.range_tombstones()),
                format!("{want:?}")
            );
            let mut distinct = ts[..n].to_vec();
            sort_for_block(&mut distinct, &KeyOrder::Bytewise);
            assert_eq!(props.range_deletions, distinct.len() as u64);
            assert_eq!(table.properties().range_deletions, distinct.len() as u64);
            assert_eq!(table.properties().entries, points);
            assert_eq!(table.verify().unwrap(), points);
            let seqs = distinct
                .iter()
                .map(|t| t.seq)
                .chain((0..points).map(|i| 100 + i));
            assert_eq!(props.largest_seq, seqs.clone().max().unwrap());
            assert_eq!(props.smallest_seq, seqs.min().unwrap());
            for i in 0..points {
                let k = ikey(format!("k{:03}", i * 3).as_bytes(), MAX_SEQUENCE);
                let got = table.get(&k, |k, _| k.to_vec()).unwrap().unwrap();
                assert_eq!(ParsedKey::parse(&got).unwrap().seq, 100 + i);
            }
            let (lo, hi) = bounds.unwrap();
            let min_begin = distinct.iter().map(|t| &t.begin).min().unwrap();
            let max_end = distinct.iter().map(|t| &t.end).max().unwrap();
            let top_seq = distinct
                .iter()
                .filter(|t| &t.begin == min_begin)
                .map(|t| t.seq);
            assert_eq!(
                lo,
                Tombstone::new(min_begin, b"", top_seq.max().unwrap()).smallest_key()
            );
            assert_eq!(hi, Tombstone::new(b"", max_end, 0).largest_key());
            assert!(table.pinned_bytes() >= table.range_tombstones().memory_size() / 2);
        }
    }

    /// The hand-off a flush makes, end to end through these layers: tombstones appended to a
    /// memtable's list, reduced for the live snapshots, written with point entries to a table
    /// whose recorded bounds are widened to cover them, read back. Every reader (each snapshot
    /// and "now") decides about every point entry as it did against the memtable.
    #[test]
    fn a_flushed_memtable_list_reads_the_same_from_the_table() {
        use crate::range_del::{widen_bounds, MemTombstones, RangeDelAggregator};
        let dir = tempfile::tempdir().unwrap();
        for seed in 0..10 {
            let mut rng = Rng::new(100 + seed);
            let mem = MemTombstones::new();
            let n = 1 + rng.below(30) as usize;
            for t in random_tombstones(&mut rng, n) {
                mem.add(&t.begin, &t.end, t.seq);
            }
            let mut snapshots: Vec<u64> = (0..rng.below(4)).map(|_| rng.below(1000)).collect();
            snapshots.sort_unstable();
            snapshots.dedup();
            let mut flush = RangeDelAggregator::for_compaction(snapshots.clone());
            flush.add(mem.fragmented());
            let path = dir.path().join(format!("{seed}.sst"));
            let mut b = TableBuilder::new(
                PosixFs.create_writable(&path).unwrap(),
                TableOptions::for_internal_keys(),
            );
            b.add_range_tombstones(&flush.compaction_output(false))
                .unwrap();
            let (mut smallest, mut largest) = (Vec::new(), Vec::new());
            for i in (0..300).step_by(7) {
                let k = ikey(format!("k{i:03}").as_bytes(), 2000);
                b.add(&k, b"v").unwrap();
                if smallest.is_empty() {
                    smallest = k.clone();
                }
                largest = k;
            }
            let (lo, hi) = b.range_tombstone_bounds().unwrap();
            widen_bounds(&KeyOrder::Bytewise, &mut smallest, &mut largest, (&lo, &hi));
            b.finish().unwrap();
            let table =
                open_table(&path, TableOptions::for_internal_keys(), Caching::None).unwrap();
            let on_disk = table.range_tombstones();
            let first = on_disk.get(0);
            let last = on_disk.get(on_disk.len() - 1);
            assert!(crate::key::user_key(&smallest) <= first.begin);
            assert!(crate::key::user_key(&largest) >= last.end);
            for &reader in snapshots.iter().chain([&MAX_SEQUENCE]) {
                let mut before = RangeDelAggregator::for_read(reader);
                before.add(mem.fragmented());
                let mut after = RangeDelAggregator::for_read(reader);
                after.add(on_disk.clone());
                for i in 0..400 {
                    let key = format!("k{i:03}").into_bytes();
                    for seq in [0, 1, 250, 500, 999, 1000] {
                        if seq <= reader {
                            assert_eq!(
                                after.should_delete(&key, seq),
                                before.should_delete(&key, seq),
                                "seed {seed} reader {reader} {key:?}#{seq}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// A table without tombstones is written as before (no meta-index entry, and footer
    /// version 5 for its index of user keys, not 2) and opens with an empty list; so do tables
    /// earlier builds wrote.
    #[test]
    fn tables_without_tombstones_keep_the_old_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.sst");
        let (bounds, props) = build(&path, 50, &[]);
        assert!(bounds.is_none());
        assert_eq!(props.range_deletions, 0);
        let bytes = std::fs::read(&path).unwrap();
        let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..]).unwrap();
        assert_eq!(footer.version, TABLE_FORMAT_VERSION_USER_KEY_INDEX);
        assert!(!bytes.windows(META_NAME.len()).any(|w| w == META_NAME));
        let table = open_table(&path, TableOptions::for_internal_keys(), Caching::None).unwrap();
        assert!(table.range_tombstones().is_empty());

        // The table fuzzer's corpus holds tables written by earlier builds (and variants of
        // them): those that open have no range deletions.
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/table_reader");
        let mut opened = 0;
        for entry in std::fs::read_dir(corpus).unwrap() {
            let path = entry.unwrap().path();
            if let Ok(t) = open_table(&path, TableOptions::for_internal_keys(), Caching::None) {
                assert!(t.range_tombstones().is_empty(), "{}", path.display());
                opened += 1;
            }
        }
        assert!(opened > 0, "no table of the corpus opens");

        let path = dir.path().join("with.sst");
        build(&path, 5, &[Tombstone::new(b"a", b"b", 1)]);
        let bytes = std::fs::read(&path).unwrap();
        let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..]).unwrap();
        // At least 2, which a build reading only version 1 refuses (5 for the index).
        assert_eq!(footer.version, TABLE_FORMAT_VERSION_USER_KEY_INDEX);
    }

    /// A table file held in memory, so that many damaged copies are cheap to open.
    struct MemFile(Vec<u8>);

    impl crate::fs::RandomAccessFile for MemFile {
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> crate::Result<()> {
            let at = offset as usize;
            match self.0.get(at..at + buf.len()) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    Ok(())
                }
                None => Err(crate::Error::corruption("bad.sst", offset, "past the end")),
            }
        }
        fn size(&self) -> u64 {
            self.0.len() as u64
        }
    }

    fn open_bytes(bytes: Vec<u8>) -> crate::Result<Table> {
        Table::open(
            Box::new(MemFile(bytes)),
            Path::new("dir/000042.sst"),
            &TableReadOptions::uncached(TableOptions::for_internal_keys()),
        )
    }

    /// Where the range-deletion block of a table file is, from its meta-index.
    fn range_del_handle(bytes: &[u8]) -> BlockHandle {
        let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..]).unwrap();
        let m = footer.metaindex;
        let meta = Block::new(bytes[m.offset as usize..][..m.size as usize].to_vec()).unwrap();
        let mut it = BlockIter::new(Arc::new(meta), BlockOrder::BYTEWISE);
        it.seek(META_NAME);
        assert_eq!(it.key(), META_NAME);
        BlockHandle::decode_from(&mut it.value()).unwrap()
    }

    /// Damage to the range-deletion block is a corruption error naming the file and the
    /// block's offset, at open, never a panic or a table that opens without its deletions:
    /// every flipped byte of the block (caught by the checksum), and every flipped byte with
    /// the checksum made to match (caught by the decoder or harmless: a different valid set).
    #[test]
    fn a_corrupt_range_deletion_block_is_corruption_naming_the_file_and_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let mut rng = Rng::new(3);
        build(&path, 30, &random_tombstones(&mut rng, 25));
        let good = std::fs::read(&path).unwrap();
        let h = range_del_handle(&good);
        let (start, len) = (h.offset as usize, h.size as usize);
        let mut decoder_errors = 0;
        for i in start..start + len + 5 {
            for fix_checksum in [false, true] {
                let mut bytes = good.clone();
                bytes[i] ^= 1 << (i % 8);
                if fix_checksum {
                    if i >= start + len {
                        continue;
                    }
                    let trailer = block_trailer(&bytes[start..start + len], Compression::None);
                    bytes[start + len..start + len + 5].copy_from_slice(&trailer);
                }
                match open_bytes(bytes) {
                    Err(e) => {
                        assert_eq!(e.kind(), ErrorKind::Corruption, "flip at {i}: {e}");
                        let msg = e.to_string();
                        assert!(msg.contains("dir/000042.sst"), "{msg}");
                        assert!(msg.contains(&format!("at offset {start}")), "{msg}");
                        assert!(msg.contains("range-deletion block"), "{msg}");
                        decoder_errors += usize::from(fix_checksum);
                    }
                    Ok(t) => {
                        assert!(fix_checksum, "flip at {i} went unnoticed");
                        crate::range_del::fragment::tests::check(&t.range_tombstones());
                    }
                }
            }
        }
        assert!(decoder_errors > len / 4, "{decoder_errors} decoder errors");
    }

    /// Block contents that decode but break the block's rules are refused by name.
    #[test]
    fn bad_entries_are_refused_with_a_reason() {
        let entry = |k: &[u8], seq: u64, kind: u8, end: &[u8]| {
            let mut key = Vec::new();
            append_internal_key(&mut key, k, seq, kind);
            (key, end.to_vec())
        };
        let block = |entries: &[(Vec<u8>, Vec<u8>)]| {
            let mut b = BlockBuilder::new(1);
            for (k, v) in entries {
                b.add(k, v);
            }
            b.finish().to_vec()
        };
        let cases: [(Vec<u8>, &str); 5] = [
            (
                block(&[entry(b"a", 1, 1, b"b")]),
                "kind 1 is not a range deletion",
            ),
            (block(&[entry(b"b", 1, 15, b"b")]), "empty range b-b"),
            (block(&[entry(b"c", 1, 15, b"b")]), "empty range c-b"),
            (
                block(&[entry(b"a", 1, 15, b"b"), entry(b"a", 2, 15, b"b")]),
                "entry 1: keys out of order",
            ),
            (
                block(&[(b"short".to_vec(), b"z".to_vec())]),
                "has no trailer",
            ),
        ];
        for (data, want) in cases {
            let err = decode(data, &KeyOrder::Bytewise).unwrap_err();
            assert!(err.contains(want), "{err:?} lacks {want:?}");
        }
        assert!(decode(vec![1, 2, 3], &KeyOrder::Bytewise).is_err());
        assert_eq!(decode(block(&[]), &KeyOrder::Bytewise).unwrap(), Vec::new());
    }

    /// The properties' count of range deletions must match the block.
    #[test]
    fn the_properties_count_must_match_the_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let ts = [
            Tombstone::new(b"k001", b"k009", 5),
            Tombstone::new(b"k004", b"k200", 9),
        ];
        build(&path, 10, &ts);
        let good = std::fs::read(&path).unwrap();
        let h = range_del_handle(&good);
        // Replace the block with one holding a single tombstone, of the same length (its end
        // key padded), with a matching checksum. One entry with a 4-byte begin key takes
        // 3 length bytes + 12 key bytes + the end key + 4 restart + 4 count bytes.
        let (start, len) = (h.offset as usize, h.size as usize);
        let end = [b"k002".as_slice(), &vec![b'z'; len - 23 - 4]].concat();
        let one = encode(&[Tombstone::new(b"k001", &end, 5)]);
        assert_eq!(one.len(), len);
        let mut bytes = good.clone();
        bytes[start..start + len].copy_from_slice(&one);
        let t = block_trailer(&one, Compression::None);
        bytes[start + len..start + len + 5].copy_from_slice(&t);
        let err = open_bytes(bytes).err().expect("a count mismatch opens");
        assert!(err.to_string().contains("the properties say 2"), "{err}");
        assert!(open_bytes(good).is_ok());
    }
}
