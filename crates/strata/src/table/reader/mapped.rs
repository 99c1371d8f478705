//! Reading a memory-mapped table in place (`Options::allow_mmap_reads`).
//!
//! When the table's file is a mapping ([`RandomAccessFile::mapped`]), a data block stored
//! uncompressed is not copied into the block cache: the block borrows its bytes from the
//! mapping ([`Block::borrowing`]) and holds the mapping alive, so a read is the index search
//! and the data block's own bytes, out of the page cache, with no cache probe, no copy and
//! no allocation of the block's bytes. A compressed block still goes through the block cache
//! (its raw bytes must live somewhere).
//!
//! Checksums: a block's checksum is checked the first time the open table reads it, as a
//! block read from the file into the cache is, and a bit remembers that it passed, so that
//! later reads of it do not check it again (as later reads of a cached block do not). A read
//! with `ReadOptions::verify_checksums` off skips the check and sets no bit. The
//! mapping is read-only and the engine never changes a table while it is open (see
//! `fs/mmap.rs`), so bytes that passed their check once are still the bytes that passed.
//! A corrupt block is reported at every read of it, with the file and the block's offset,
//! as without the mapping.
//!
//! The bits: one per [`CHECK_GRANULE`] bytes of the file, set for the block that starts in
//! that granule. Two blocks could start in one granule only if the first spans fewer bytes
//! than a granule, so blocks that small (rare: a table's last data block, a table of tiny
//! blocks) are checked at every read instead, which costs them little. 1 bit per 256 bytes
//! is 4 KiB of bits for an 8 MiB table.
//!
//! Reference counts: a block holds the mapping through one of several owners, each its own
//! `Arc` on its own cache line, chosen by the reading thread, so that threads reading the
//! same table do not all increment one shared count for every block.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::*;
use crate::fs::MappedBytes;

/// Bytes of file per bit of the "checksum checked" bitmap.
pub(super) const CHECK_GRANULE: u64 = 256;

/// Owners of the mapping handed to blocks: enough that two threads rarely share one.
const OWNERS: usize = 16;

/// The mapping, behind an `Arc` of its own that blocks hold: aligned so that each owner's
/// reference counts (at the start of its `Arc` allocation) sit on a cache line of their own.
#[repr(align(64))]
pub(super) struct MappingOwner(Arc<dyn MappedBytes>);

fn owner_bytes(owner: &MappingOwner) -> &[u8] {
    owner.0.bytes()
}

/// A mapped table's mapping, and which of its blocks passed their checksum check.
pub(super) struct MappedTable {
    owners: Box<[Arc<MappingOwner>]>,
    /// Bytes in the mapping.
    len: u64,
    /// Bit `offset / CHECK_GRANULE`: the block at `offset` passed its check.
    checked: Box<[AtomicU64]>,
}

impl MappedTable {
    /// The mapping of `file`, if it is one.
    pub(super) fn of(file: &dyn RandomAccessFile) -> Option<MappedTable> {
        let mapping = file.mapped()?;
        let len = mapping.bytes().len() as u64;
        let words = len.div_ceil(CHECK_GRANULE).div_ceil(64) as usize;
        Some(MappedTable {
            owners: (0..OWNERS)
                .map(|_| Arc::new(MappingOwner(mapping.clone())))
                .collect(),
            len,
            checked: (0..words).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// Bytes the table holds in memory for the bitmap.
    pub(super) fn bitmap_bytes(&self) -> usize {
        8 * self.checked.len()
    }

    fn owner(&self) -> &Arc<MappingOwner> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        thread_local! {
            static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
        }
        &self.owners[SLOT.with(|s| *s) % OWNERS]
    }

    /// The bit of the block at `offset`, spanning `span` bytes; `None` when it is too short
    /// to have one of its own.
    fn bit(offset: u64, span: u64) -> Option<(usize, u64)> {
        (span >= CHECK_GRANULE).then(|| {
            let g = offset / CHECK_GRANULE;
            ((g / 64) as usize, 1u64 << (g % 64))
        })
    }

    fn was_checked(&self, offset: u64, span: u64) -> bool {
        Self::bit(offset, span)
            .is_some_and(|(w, b)| self.checked[w].load(Ordering::Relaxed) & b != 0)
    }

    fn mark_checked(&self, offset: u64, span: u64) {
        if let Some((w, b)) = Self::bit(offset, span) {
            self.checked[w].fetch_or(b, Ordering::Relaxed);
        }
    }
}

impl Table {
    /// The data block at `handle` read in place from the table's mapping, its checksum
    /// checked at the first read (counted then as a read from the file, later as a cache
    /// hit), unless `reads` says not to check it (then it is counted as a read from the file
    /// and left unchecked for the next read); `None` when the table is not mapped or the
    /// block is compressed (the caller reads it through the block cache).
    pub(super) fn mapped_data_block(
        &self,
        handle: BlockHandle,
        reads: BlockReads,
    ) -> Result<Option<Arc<Block>>> {
        let Some(mapped) = &self.mapped else {
            return Ok(None);
        };
        let span = handle.size.saturating_add(BLOCK_TRAILER_LEN as u64);
        let end = handle.offset.checked_add(span).filter(|&e| e <= mapped.len);
        let (Some(end), true) = (end, handle.size as usize <= MAX_BLOCK_IN_PLACE) else {
            // The checked read reports what is wrong with the handle.
            return Ok(None);
        };
        let owner = mapped.owner();
        let stored = &owner_bytes(owner)[handle.offset as usize..end as usize];
        // The trailer check below is the block's first touch: ask for its other pages too.
        crate::util::prefetch_block(stored);
        if stored[handle.size as usize] != Compression::None as u8 {
            return Ok(None);
        }
        if mapped.was_checked(handle.offset, span) {
            self.count_cache_hit(BlockKind::Data);
        } else {
            check_block(&self.path, handle, stored, self.data_decoding(reads))?;
            if reads.verify_checksums {
                mapped.mark_checked(handle.offset, span);
            }
            self.count_file_read(BlockKind::Data, span);
        }
        let start = handle.offset as usize;
        Block::borrowing(
            owner.clone(),
            owner_bytes,
            start..start + handle.size as usize,
        )
        .map(|b| Some(Arc::new(b)))
        .map_err(|why| Error::corruption(&self.path, handle.offset, why))
    }
}

/// The largest block read in place: the largest a table may hold (`format.rs`).
const MAX_BLOCK_IN_PLACE: usize = crate::table::compression::MAX_RAW_BLOCK;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FileSystem, PosixFs};
    use crate::table::{IndexType, TableOptions};
    use crate::testing::harness::Entry;
    use crate::testing::lsm::write_table;
    use crate::util::Rng;
    use crate::ErrorKind;

    /// Opens `path` mapped (`mapped`) or read by copies, with a block cache.
    fn open(path: &Path, options: &TableOptions, mapped: bool) -> Result<Table> {
        let read = TableReadOptions {
            block_cache: Some(Arc::new(super::new_block_cache(1 << 20, 4))),
            cache_id: 1,
            ..TableReadOptions::uncached(options.clone())
        };
        let file = match mapped {
            true => PosixFs.open_random_mmap(path)?,
            false => PosixFs.open_random(path)?,
        };
        Table::open(file, path, &read)
    }

    fn model(rng: &mut Rng, n: usize) -> Vec<Entry> {
        let mut m = std::collections::BTreeMap::new();
        for i in 0..n {
            let key = format!("key{:06}", rng.below(100_000)).into_bytes();
            let len = if rng.one_in(20) {
                3000
            } else {
                rng.below(100) as usize
            };
            m.insert(key, format!("v{i}-").repeat(len / 3 + 1).into_bytes());
        }
        m.into_iter().collect()
    }

    /// A mapped table reads what the same table read by copies reads (point lookups, and
    /// scans both ways), over block sizes below and above the checked-bit granule and
    /// compressed and uncompressed blocks, twice (the second time from checked blocks); its
    /// uncompressed data blocks are read in place and never enter the block cache.
    #[test]
    fn mapped_reads_match_copied_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng::new(7);
        for (case, (block_size, compression, index_type)) in [
            (64, Compression::None, IndexType::BinarySearch),
            (256, Compression::None, IndexType::BinarySearch),
            (4096, Compression::None, IndexType::TwoLevelIndexSearch),
            (1024, Compression::Lz4, IndexType::BinarySearch),
        ]
        .into_iter()
        .enumerate()
        {
            let n = 1 + rng.below(3000) as usize;
            let entries = model(&mut rng, n);
            let options = TableOptions {
                block_size,
                compression,
                index_type,
                metadata_block_size: 128,
                ..TableOptions::default()
            };
            let path = dir.path().join(format!("{case}.sst"));
            write_table(&path, &entries, options.clone());
            let mapped = Arc::new(open(&path, &options, true).unwrap());
            let copied = Arc::new(open(&path, &options, false).unwrap());
            assert!(mapped.mapped.is_some() && copied.mapped.is_none());
            for round in 0..2 {
                for _ in 0..500 {
                    let probe = match rng.one_in(2) {
                        true => entries[rng.below(entries.len() as u64) as usize].0.clone(),
                        false => format!("key{:06}", rng.below(100_000)).into_bytes(),
                    };
                    let read = |t: &Table| t.get(&probe, |k, v| (k.to_vec(), v.to_vec())).unwrap();
                    assert_eq!(read(&mapped), read(&copied), "case {case} round {round}");
                }
                let scan = |t: &Arc<Table>, backward: bool| {
                    let mut it = t.iter();
                    let mut out = Vec::new();
                    match backward {
                        true => it.seek_to_last(),
                        false => it.seek_to_first(),
                    }
                    while it.valid() {
                        out.push((it.key().to_vec(), it.value().to_vec()));
                        match backward {
                            true => it.prev(),
                            false => it.next(),
                        }
                    }
                    assert!(it.status().is_ok());
                    out
                };
                for backward in [false, true] {
                    let got = scan(&mapped, backward);
                    assert_eq!(got, scan(&copied, backward), "case {case} round {round}");
                    assert_eq!(got.len(), entries.len());
                }
            }
            // Only index partitions (of a two-level index) and compressed blocks are cached.
            let cached = mapped.cache.as_ref().unwrap().usage();
            match (compression, index_type) {
                (Compression::None, IndexType::BinarySearch) => {
                    assert_eq!(cached, 0, "case {case}: in place, not cached")
                }
                _ => assert!(cached > 0, "case {case}: partitions or compressed blocks"),
            }
        }
    }

    /// A damaged data block of a mapped table is reported as corruption, naming the file,
    /// at every read of it, not only the first; the other blocks read as before.
    #[test]
    fn a_damaged_block_is_reported_at_every_read() {
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<Entry> = (0..2000u32)
            .map(|i| (format!("key{i:06}").into_bytes(), vec![b'v'; 100]))
            .collect();
        let options = TableOptions {
            block_size: 1024,
            ..TableOptions::default()
        };
        let path = dir.path().join("t.sst");
        write_table(&path, &entries, options.clone());
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 0x10; // inside the first data block
        std::fs::write(&path, &bytes).unwrap();
        let table = open(&path, &options, true).unwrap();
        for _ in 0..3 {
            let err = table.get(b"key000000", |_, _| ()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
            assert!(err.to_string().contains("t.sst"), "{err}");
            let far = b"key001900";
            assert!(table.get(far, |k, _| k == far).unwrap().unwrap());
        }
    }
}
