//! Range deletions for the tools and the fuzz targets: the types of `crate::range_del` and
//! the table builder that writes them, and the entry point of the `range_del_block` fuzz
//! target (`fuzz/fuzz_targets/range_del_block.rs`), whose checked-in corpus is replayed by
//! this module's tests.
//!
//! The database's write, read and compaction paths are the users-to-be of this API; until
//! they exist, the fuzz target and the tests are.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::Result;
use crate::fs::{RandomAccessFile, WritableFile};
use crate::key::SequenceNumber;
use crate::table::reader::TableReadOptions;
use crate::table::{Table, TableOptions};

pub use crate::range_del::{
    widen_bounds, Fragment, FragmentCursor, FragmentedList, MemTombstones, RangeDelAggregator,
    Tombstone, RANGE_DELETION_KIND,
};
pub use crate::table::range_del::{
    decode as decode_range_del_block, encode as encode_range_del_block,
};
pub use crate::table::TableBuilder;

/// A file in memory, shared between the builder that writes it and the table that reads it.
#[derive(Clone, Default)]
struct MemFile(Arc<Mutex<Vec<u8>>>);

impl WritableFile for MemFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().extend_from_slice(data);
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.0.lock().len() as u64
    }
}

impl RandomAccessFile for MemFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let data = self.0.lock();
        let range = usize::try_from(offset)
            .ok()
            .and_then(|at| Some(at..at.checked_add(buf.len())?))
            .filter(|r| r.end <= data.len());
        match range {
            Some(r) => {
                buf.copy_from_slice(&data[r]);
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
        self.0.lock().len() as u64
    }
}

/// Checks the invariants of a fragmented list (`range_del::fragment`); the error names the
/// first fragment that breaks one.
pub fn check_fragments(list: &FragmentedList) -> std::result::Result<(), String> {
    let mut prev: Option<Fragment<'_>> = None;
    for f in list.fragments() {
        if f.begin >= f.end || f.seqs.is_empty() || f.seqs.windows(2).any(|w| w[0] <= w[1]) {
            return Err(format!("bad fragment {f:?}"));
        }
        if let Some(p) = prev {
            if p.end > f.begin || (p.end == f.begin && p.seqs == f.seqs) {
                return Err(format!("{p:?} then {f:?}"));
            }
        }
        prev = Some(f);
    }
    Ok(())
}

/// The contents of a range-deletion block: decoded; fragmented, with the fragments checked
/// and every query compared with a scan of the decoded tombstones at the keys they name;
/// reduced for snapshots taken from the input; and written to a table in memory and read
/// back, which must give the same fragments.
pub fn range_del_block(data: &[u8]) {
    let Ok(tombstones) =
        decode_range_del_block(data.to_vec(), &crate::comparator::KeyOrder::Bytewise)
    else {
        return;
    };
    let list = Arc::new(FragmentedList::new(&tombstones));
    if let Err(why) = check_fragments(&list) {
        panic!("fragmenting {tombstones:?}: {why}");
    }
    let mut probes: Vec<Vec<u8>> = Vec::new();
    for t in tombstones.iter().take(32) {
        for k in [&t.begin, &t.end] {
            probes.push(k.clone());
            probes.push([k.as_slice(), &[0]].concat());
        }
    }
    probes.push(Vec::new());
    let reads: Vec<SequenceNumber> = tombstones
        .iter()
        .take(8)
        .flat_map(|t| [t.seq, t.seq.saturating_sub(1)])
        .chain([0, SequenceNumber::MAX])
        .collect();
    for key in &probes {
        for &read in &reads {
            let naive = tombstones
                .iter()
                .filter(|t| t.contains(key) && t.seq <= read)
                .map(|t| t.seq)
                .max();
            assert_eq!(list.max_covering_seq(key, read), naive, "{key:?} at {read}");
        }
    }
    let mut cursor = list.cursor();
    let mut n = 0;
    cursor.seek_to_last();
    while cursor.valid() {
        n += 1;
        cursor.prev();
    }
    assert_eq!(n, list.len());
    let mut snapshots: Vec<SequenceNumber> = reads.iter().copied().step_by(3).collect();
    snapshots.sort_unstable();
    snapshots.dedup();
    for bottommost in [false, true] {
        let reduced = list.for_compaction(&snapshots, bottommost);
        if let Err(why) = check_fragments(&reduced) {
            panic!("reducing for {snapshots:?}: {why}");
        }
    }

    let file = MemFile::default();
    let mut builder = TableBuilder::new(Box::new(file.clone()), TableOptions::for_internal_keys());
    for t in &tombstones {
        if builder
            .add_range_tombstone(&t.begin, &t.end, t.seq)
            .is_err()
        {
            return; // a sequence number above 56 bits: refused, as it must be
        }
    }
    builder.finish().expect("a table in memory is written");
    let table = Table::open(
        Box::new(file),
        std::path::Path::new("fuzz.sst"),
        &TableReadOptions::uncached(TableOptions::for_internal_keys()),
    )
    .expect("a table just written opens");
    assert_eq!(
        format!("{:?}", table.range_tombstones()),
        format!("{list:?}"),
        "the table's tombstones differ from the block's"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn corpus_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/range_del_block")
    }

    /// A block of overlapping tombstones, as the seed of the corpus.
    fn seed() -> Vec<u8> {
        let mut ts: Vec<Tombstone> = (0..40u64)
            .map(|i| {
                let b = (i * 7) % 50;
                Tombstone::new(
                    format!("key{b:03}").as_bytes(),
                    format!("key{:03}", b + 1 + i % 13).as_bytes(),
                    i + 1,
                )
            })
            .collect();
        crate::table::range_del::sort_for_block(&mut ts, &crate::comparator::KeyOrder::Bytewise);
        encode_range_del_block(&ts)
    }

    /// Every input of the checked-in corpus passes the target, as do random and empty
    /// inputs. `STRATA_WRITE_SEEDS=1` (re)writes the seed input.
    #[test]
    fn the_range_del_block_target_passes_its_corpus() {
        let dir = corpus_dir();
        if std::env::var_os("STRATA_WRITE_SEEDS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("seed-block"), seed()).unwrap();
        }
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{} has no inputs", dir.display());
        for input in inputs {
            range_del_block(&std::fs::read(&input).unwrap());
        }
        range_del_block(&seed());
        let mut rng = crate::util::Rng::new(11);
        let good = seed();
        for len in [0, 1, 7, 12, 100] {
            let data: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            range_del_block(&data);
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 1 << (i % 8);
            range_del_block(&bad);
        }
    }
}
