//! Partitioned index and filters (RocksDB's `kTwoLevelIndexSearch` and `partition_filters`):
//! the index, and optionally the filter, cut into partitions of about `metadata_block_size`
//! bytes under a small top-level block, so that an open table holds only the top-level
//! blocks and the partitions compete for the block cache like data blocks.
//!
//! Byte layout (on disk; every block framed as in `format.rs`, stored uncompressed):
//!
//! ```text
//! data block*
//! filter partition*         filter blocks (`filter.rs`), each over the filter keys (and
//!                           prefixes) of the data blocks of one index partition
//! top-level filter index    per filter partition: the top-level index key of its index
//!                           partition -> the filter partition's handle
//! index partition*          ordinary index blocks: per data block a separator -> handle
//! range-del block, properties block, meta-index block
//! top-level index           per index partition: the separator of its last data block
//!                           -> the partition's handle (the footer's index handle)
//! footer                    format version 3
//! ```
//!
//! The meta-index names the top-level filter index `strata.partitioned_filter` (in place of
//! `strata.filter`). The properties record the partition counts and top-level sizes
//! (`properties.rs`); `strata.index-partitions` above 0 tells a reader that the footer's
//! index is a top-level index. The format version is 3 so that an older build refuses the
//! table instead of reading index partitions as data blocks.
//!
//! Invariants:
//! - Partitions are cut after a data block, when the index partition reaches
//!   `metadata_block_size` or the filter partition's bits do; the filter partition is cut at
//!   the same data block as the index partition. The two top-level blocks therefore have the
//!   same keys, and one search of either finds the partitions of the same data blocks.
//! - A top-level key is a data block's separator (at or after its last key, before the next
//!   block's first), so seeking `target` in the top-level index and then in the partition it
//!   names finds the block a flat index would: the first whose separator is at or after
//!   `target`. A point lookup of `target` reads only entries of that block, all covered by
//!   the filter partition a seek of the top-level filter index finds.
//! - With a prefix extractor, a filter partition also holds the prefix of the first key after
//!   it and of the last key before it (RocksDB adds the first): a prefix's keys may span
//!   partitions, and a prefix seek checks only the partition where its target falls. Going
//!   forward, the first key at or after the target is in that partition or is the first key
//!   of the next; going backward (`seek_for_prev`), the last key at or before the target is
//!   in it or is the last key of the one before (`Table::prefix_may_match`).
//!
//! [`IndexIter`] walks a table's index, flat or two-level, in both directions: the table
//! iterator uses it in place of an index block cursor.

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::table::block::{Block, BlockBuilder, BlockIter, BlockOrder};
use crate::table::filter::FilterBuilder;
use crate::table::format::BlockHandle;

/// The meta-index name of the top-level filter index. On disk.
pub const FILTER_META_NAME: &[u8] = b"strata.partitioned_filter";

/// Decodes the block handle `value` of an entry of the index-kind block `what` at `at`.
pub(crate) fn decode_handle(
    mut value: &[u8],
    path: &Path,
    at: u64,
    what: &str,
) -> Result<BlockHandle> {
    BlockHandle::decode_from(&mut value)
        .ok_or_else(|| Error::corruption(path, at, format!("bad block handle in the {what}")))
}

/// Where a search of an index-format block finds `target`: the handle of the first entry at
/// or after it (with `last_if_past`, the last entry's when `target` is past them all), or
/// `None` past the end. `block` is at `at` in `path`; `what` names it in errors.
pub(crate) fn search(
    block: Arc<Block>,
    cmp: &BlockOrder,
    target: &[u8],
    last_if_past: bool,
    (path, at, what): (&Path, u64, &str),
) -> Result<Option<BlockHandle>> {
    let mut it = BlockIter::new(block, cmp.clone());
    it.seek(target);
    if last_if_past && !it.valid() && it.corrupt().is_none() {
        it.seek_to_last();
    }
    match (it.valid(), it.corrupt()) {
        (true, _) => decode_handle(it.value(), path, at, what).map(Some),
        (false, Some(why)) => Err(Error::corruption(path, at, format!("{what}: {why}"))),
        (false, None) => Ok(None),
    }
}

/// The index and filter partitions of a table being built, held in memory until the table
/// is finished (they are written after the data blocks, so that the data blocks stay
/// adjacent for scans' readahead).
pub(crate) struct PartitionBuilder {
    metadata_block_size: usize,
    bits_per_key: u32,
    /// The index partition being filled.
    index: BlockBuilder,
    /// The key of the last entry added to `index`.
    last_key: Vec<u8>,
    /// Finished index partitions: (top-level key, contents).
    pub(crate) index_partitions: Vec<(Vec<u8>, Vec<u8>)>,
    /// Finished filter partitions, one per index partition (with a partitioned filter).
    pub(crate) filter_partitions: Vec<Vec<u8>>,
}

impl PartitionBuilder {
    pub(crate) fn new(metadata_block_size: usize, bits_per_key: u32) -> PartitionBuilder {
        PartitionBuilder {
            metadata_block_size: metadata_block_size.max(1),
            bits_per_key,
            index: BlockBuilder::new(1),
            last_key: Vec::new(),
            index_partitions: Vec::new(),
            filter_partitions: Vec::new(),
        }
    }

    /// Adds the index entry of a data block, then cuts the partitions when the index
    /// partition or the filter partition (`filter`, holding the keys of the data blocks
    /// since the last cut) is full. `next_prefix` is the hash of the prefix of the next
    /// block's first key, if it has one.
    pub(crate) fn add(
        &mut self,
        key: &[u8],
        handle: &[u8],
        filter: Option<&mut FilterBuilder>,
        next_prefix: Option<u64>,
    ) {
        self.index.add(key, handle);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        let filter_bytes = filter
            .as_ref()
            .map_or(0, |f| f.len() * self.bits_per_key as usize / 8);
        if self.index.estimated_size() >= self.metadata_block_size
            || filter_bytes >= self.metadata_block_size
        {
            self.cut(filter, next_prefix);
        }
    }

    /// Ends the partitions being filled (nothing if they are empty); `filter` starts over,
    /// holding the prefix of the last key of the partition ended. `next_prefix` (the hash of
    /// the next key's prefix) goes into the filter partition ended.
    pub(crate) fn cut(&mut self, filter: Option<&mut FilterBuilder>, next_prefix: Option<u64>) {
        if self.index.is_empty() {
            return;
        }
        let contents = self.index.finish().to_vec();
        self.index.reset();
        self.index_partitions
            .push((std::mem::take(&mut self.last_key), contents));
        if let Some(f) = filter {
            let last_prefix = f.last_prefix_hash();
            if let Some(h) = next_prefix {
                f.add_prefix_hash(h);
            }
            self.filter_partitions.push(f.finish());
            *f = FilterBuilder::new(self.bits_per_key);
            if let Some(h) = last_prefix {
                f.add_prefix_hash(h);
            }
        }
    }
}

/// A top-level block: per partition its top-level key -> its handle.
pub(crate) fn top_level_block<'a>(
    entries: impl IntoIterator<Item = (&'a [u8], BlockHandle)>,
) -> Vec<u8> {
    let mut b = BlockBuilder::new(1);
    let mut handle = Vec::new();
    for (key, h) in entries {
        handle.clear();
        h.encode_to(&mut handle);
        b.add(key, &handle);
    }
    b.finish().to_vec()
}

/// Where an index cursor reads its blocks: LevelDB's two-level iterator takes a function
/// that loads the block an index entry names; [`IndexIter`] takes the table as this trait,
/// which loads an index partition (from the block cache or the file) and tells what an error
/// names.
pub trait IndexSource {
    /// The table's path, the order of its index's keys and the index's offset.
    fn index_context(&self) -> (&Path, &BlockOrder, u64);

    /// The index partition at `handle`, from the cache or the file.
    fn index_partition(&self, handle: BlockHandle) -> Result<Arc<Block>>;

    /// What a seek of the index looks for, given the internal key `target` a seek of the
    /// table looks for (its user key when the index holds user keys).
    fn index_target<'a>(&self, target: &'a [u8]) -> &'a [u8];
}

/// A cursor over a table's index, flat (one index block) or two-level (a top-level index
/// over index partitions, each read from the block cache or the file when the cursor
/// reaches it). An error reading a partition makes the cursor invalid for good and is
/// returned by [`IndexIter::error`].
pub struct IndexIter<S> {
    table: Arc<S>,
    /// The cursor of the index block, or of the top-level index.
    top: BlockIter,
    /// With a two-level index: the cursor of the partition `top` is on, and its offset.
    partition: Option<(BlockIter, u64)>,
    two_level: bool,
    error: Option<Error>,
}

impl<S> Clone for IndexIter<S> {
    fn clone(&self) -> Self {
        IndexIter {
            table: self.table.clone(),
            top: self.top.clone(),
            partition: self.partition.clone(),
            two_level: self.two_level,
            error: self.error.as_ref().map(Error::duplicate),
        }
    }
}

impl<S: IndexSource> IndexIter<S> {
    /// An unpositioned cursor over `table`'s index, whose index block (top-level index when
    /// `two_level`) is `top`.
    pub(crate) fn new(table: Arc<S>, top: Arc<Block>, two_level: bool) -> IndexIter<S> {
        let cmp = table.index_context().1.clone();
        IndexIter {
            table,
            top: BlockIter::new(top, cmp),
            partition: None,
            two_level,
            error: None,
        }
    }

    /// The cursor on the data blocks' index entries.
    fn cursor(&self) -> Option<&BlockIter> {
        match self.two_level {
            true => self.partition.as_ref().map(|(c, _)| c),
            false => Some(&self.top),
        }
    }

    /// True when on a data block's index entry.
    pub fn valid(&self) -> bool {
        self.error.is_none() && self.cursor().is_some_and(BlockIter::valid)
    }

    /// The handle of the data block the cursor is on.
    pub fn handle(&self) -> Result<BlockHandle> {
        let (path, _, index_at) = self.table.index_context();
        match (&self.partition, self.two_level) {
            (Some((c, at)), true) => decode_handle(c.value(), path, *at, "index partition"),
            _ => decode_handle(self.top.value(), path, index_at, "index block"),
        }
    }

    /// Why the cursor stopped, if not at an end: a damaged index block, top-level index or
    /// partition, or a partition that could not be read.
    pub fn error(&self) -> Option<Error> {
        if let Some(e) = &self.error {
            return Some(e.duplicate());
        }
        let (path, _, index_at) = self.table.index_context();
        if let Some(why) = self.top.corrupt() {
            let what = match self.two_level {
                true => "top-level index",
                false => "index block",
            };
            return Some(Error::corruption(path, index_at, format!("{what}: {why}")));
        }
        match &self.partition {
            Some((c, at)) if self.two_level => c
                .corrupt()
                .map(|why| Error::corruption(path, *at, format!("index partition: {why}"))),
            _ => None,
        }
    }

    /// Points the partition cursor at the partition `top` is on (unpositioned), or at none.
    fn load_partition(&mut self) {
        if !self.top.valid() || self.error.is_some() {
            self.partition = None;
            return;
        }
        let (path, cmp, index_at) = self.table.index_context();
        let loaded = decode_handle(self.top.value(), path, index_at, "top-level index")
            .and_then(|h| Ok((self.table.index_partition(h)?, h.offset)));
        match loaded {
            Ok((block, at)) => match &mut self.partition {
                // The cursor left behind reads the next partition, with its buffers.
                Some((c, offset)) => {
                    c.set_block(block);
                    *offset = at;
                }
                None => self.partition = Some((BlockIter::new(block, cmp.clone()), at)),
            },
            Err(e) => {
                self.error = Some(e);
                self.partition = None;
            }
        }
    }

    /// Whether the partition cursor has run off its partition's end (not on a damaged one):
    /// the walk goes on to the next partition.
    fn partition_exhausted(&self) -> bool {
        self.error.is_none()
            && self
                .partition
                .as_ref()
                .is_some_and(|(c, _)| !c.valid() && c.corrupt().is_none())
    }

    fn skip_forward(&mut self) {
        while self.partition_exhausted() {
            self.top.next();
            self.load_partition();
            if let Some((c, _)) = &mut self.partition {
                c.seek_to_first();
            }
        }
    }

    fn skip_backward(&mut self) {
        while self.partition_exhausted() {
            self.top.prev();
            self.load_partition();
            if let Some((c, _)) = &mut self.partition {
                c.seek_to_last();
            }
        }
    }

    /// Moves to the first data block.
    pub fn seek_to_first(&mut self) {
        self.top.seek_to_first();
        if self.two_level {
            self.load_partition();
            if let Some((c, _)) = &mut self.partition {
                c.seek_to_first();
            }
            self.skip_forward();
        }
    }

    /// Moves to the last data block.
    pub fn seek_to_last(&mut self) {
        self.top.seek_to_last();
        if self.two_level {
            self.load_partition();
            if let Some((c, _)) = &mut self.partition {
                c.seek_to_last();
            }
            self.skip_backward();
        }
    }

    /// Moves to the first data block whose separator is at or after `target` (for an index
    /// of user keys, at or after its user key).
    pub fn seek(&mut self, target: &[u8]) {
        let target = self.table.index_target(target);
        self.top.seek(target);
        if self.two_level {
            self.load_partition();
            if let Some((c, _)) = &mut self.partition {
                c.seek(target);
            }
            self.skip_forward();
        }
    }

    /// Moves to the next data block.
    pub fn next(&mut self) {
        match self.two_level {
            false => self.top.next(),
            true => {
                if let Some((c, _)) = &mut self.partition {
                    c.next();
                }
                self.skip_forward();
            }
        }
    }

    /// Moves to the previous data block.
    pub fn prev(&mut self) {
        match self.two_level {
            false => self.top.prev(),
            true => {
                if let Some((c, _)) = &mut self.partition {
                    c.prev();
                }
                self.skip_backward();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FileSystem, PosixFs};
    use crate::iterator::InternalIterator;
    use crate::table::format::{read_block, Footer, FOOTER_LEN, TABLE_FORMAT_VERSION_PARTITIONED};
    use crate::table::reader::{BlockKind, Table};
    use crate::table::{IndexType, TableOptions};
    use crate::testing::harness::Entry;
    use crate::testing::lsm::{open_table, table, write_table, Caching};
    use crate::ErrorKind;

    const N: usize = 4000;

    fn entries() -> Vec<Entry> {
        (0..N)
            .map(|i| {
                let key = format!("key{i:06}").into_bytes();
                (key, format!("value{i}-").repeat(1 + i % 5).into_bytes())
            })
            .collect()
    }

    fn partitioned(partition_filters: bool) -> TableOptions {
        TableOptions {
            block_size: 256,
            index_type: IndexType::TwoLevelIndexSearch,
            partition_filters,
            metadata_block_size: 256,
            ..TableOptions::default()
        }
    }

    /// The footer and the (top-level key, handle) entries of the top-level block at `h`.
    fn top_level(path: &Path, h: BlockHandle) -> Vec<(Vec<u8>, BlockHandle)> {
        let file = PosixFs.open_random(path).unwrap();
        let block = Arc::new(Block::new(read_block(file.as_ref(), path, h).unwrap()).unwrap());
        let mut it = BlockIter::new(block, crate::table::block::BlockOrder::BYTEWISE);
        it.seek_to_first();
        let mut out = Vec::new();
        while it.valid() {
            let mut v = it.value();
            out.push((it.key().to_vec(), BlockHandle::decode_from(&mut v).unwrap()));
            it.next();
        }
        out
    }

    fn footer(path: &Path) -> Footer {
        let bytes = std::fs::read(path).unwrap();
        Footer::decode(&bytes[bytes.len() - FOOTER_LEN..]).unwrap()
    }

    /// The handle of the top-level filter index, from the meta-index.
    fn filter_top_level(path: &Path) -> BlockHandle {
        let meta = top_level(path, footer(path).metaindex);
        meta.into_iter()
            .find(|(name, _)| name == FILTER_META_NAME)
            .map(|(_, h)| h)
            .unwrap()
    }

    /// A partitioned table records its partitions (format version 3, the counts and sizes in
    /// its properties, one filter partition per index partition under the same keys), pins
    /// only its top-level blocks (or nothing when they are cached), and reads a point lookup
    /// as one filter partition, one index partition and one data block, each from the cache
    /// once read.
    #[test]
    fn partitioned_tables_pin_only_their_top_level_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let model = entries();
        let flat_path = dir.path().join("flat.sst");
        let flat = TableOptions {
            block_size: 256,
            ..TableOptions::default()
        };
        let flat = table(&flat_path, &model, flat, Caching::Data);
        let path = dir.path().join("p.sst");
        let t = table(&path, &model, partitioned(true), Caching::Data);
        let p = t.properties().clone();
        assert_eq!(footer(&path).version, TABLE_FORMAT_VERSION_PARTITIONED);
        assert!(p.index_partitions > 10, "{p:?}");
        assert_eq!(p.filter_partitions, p.index_partitions);
        let index_top = top_level(&path, footer(&path).index);
        let filter_top = top_level(&path, filter_top_level(&path));
        assert_eq!(index_top.len() as u64, p.index_partitions);
        let keys =
            |top: &[(Vec<u8>, BlockHandle)]| top.iter().map(|e| e.0.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&index_top), keys(&filter_top));
        assert!(p.index_bytes > p.top_level_index_bytes * 5, "{p:?}");
        assert!(p.filter_bytes > p.top_level_filter_bytes * 5, "{p:?}");
        let pinned = (p.top_level_index_bytes + p.top_level_filter_bytes) as usize;
        assert!(
            t.pinned_bytes() <= pinned + 64,
            "{} pinned",
            t.pinned_bytes()
        );
        assert!(
            t.pinned_bytes() * 5 < flat.pinned_bytes(),
            "{} vs {}",
            t.pinned_bytes(),
            flat.pinned_bytes()
        );
        // Unpinned top-level blocks live in the cache; pinned ones (the default) do not.
        let unpinned = open_table(&path, partitioned(true), Caching::AllUnpinned).unwrap();
        assert_eq!(unpinned.pinned_bytes(), 0);
        let pinned_top = open_table(&path, partitioned(true), Caching::All).unwrap();
        assert_eq!(pinned_top.pinned_bytes(), t.pinned_bytes());

        // A lookup: filter partition, index partition, data block, each read once.
        let stats = |t: &Table, kind: BlockKind| {
            (
                t_stats(t).cache_misses[kind as usize].get(),
                t_stats(t).cache_hits[kind as usize].get(),
            )
        };
        // (A fresh open: `table` verified the first one, reading every block.)
        let t = open_table(&path, partitioned(true), Caching::Data).unwrap();
        let key = b"key002500";
        for round in 0..2u64 {
            let got = t.get(key, |k, _| k.to_vec()).unwrap();
            assert_eq!(got.as_deref(), Some(&key[..]));
            for kind in [BlockKind::Data, BlockKind::Index, BlockKind::Filter] {
                assert_eq!(stats(&t, kind), (1, round), "round {round}, {kind:?}");
            }
        }
        // Absent keys are mostly stopped by their filter partition.
        let before = t_stats(&t).bloom_negatives.get();
        for i in 0..1000 {
            let absent = format!("key{:06}x", i * 4);
            assert!(
                t.get(absent.as_bytes(), |k, _| k == absent.as_bytes())
                    .unwrap()
                    != Some(true)
            );
        }
        assert!(t_stats(&t).bloom_negatives.get() - before > 950);
    }

    fn t_stats(t: &Table) -> &crate::table::reader::TableReadStats {
        t.read_stats()
    }

    /// Which partitioned block a case damages.
    #[derive(Debug, Clone, Copy)]
    enum Damaged {
        TopLevelIndex,
        TopLevelFilter,
        IndexPartition,
        FilterPartition,
    }

    /// A damaged top-level block fails the open; a damaged partition fails only the reads
    /// that reach it, with a corruption error naming the file and the partition's offset,
    /// while reads of other partitions go on, and a scan yields exactly the entries before
    /// the partition.
    #[test]
    fn a_damaged_partition_fails_the_reads_that_reach_it() {
        let dir = tempfile::tempdir().unwrap();
        let model = entries();
        let path = dir.path().join("p.sst");
        write_table(&path, &model, partitioned(true));
        let good = std::fs::read(&path).unwrap();
        let index_top = top_level(&path, footer(&path).index);
        let filter_top = top_level(&path, filter_top_level(&path));
        let middle = index_top.len() / 2;
        // The first key of the middle partition: the one after the previous partition's
        // separator (keys are key000000.. and separators are shortened).
        let first_in_middle = model
            .iter()
            .position(|(k, _)| k.as_slice() > index_top[middle - 1].0.as_slice())
            .unwrap();
        for damaged in [
            Damaged::TopLevelIndex,
            Damaged::TopLevelFilter,
            Damaged::IndexPartition,
            Damaged::FilterPartition,
        ] {
            let at = match damaged {
                Damaged::TopLevelIndex => footer(&path).index,
                Damaged::TopLevelFilter => filter_top_level(&path),
                Damaged::IndexPartition => index_top[middle].1,
                Damaged::FilterPartition => filter_top[middle].1,
            };
            let mut bytes = good.clone();
            bytes[at.offset as usize + 1] ^= 0x10;
            std::fs::write(&path, &bytes).unwrap();
            let opened = open_table(&path, partitioned(true), Caching::Data);
            if matches!(damaged, Damaged::TopLevelIndex | Damaged::TopLevelFilter) {
                let err = opened.err().expect("a damaged top-level block opened");
                assert_eq!(err.kind(), ErrorKind::Corruption, "{damaged:?}: {err}");
                assert!(err.to_string().contains("p.sst"), "{err}");
                continue;
            }
            let t = opened.unwrap();
            let in_middle = &model[first_in_middle].0;
            let err = t.get(in_middle, |_, _| ()).unwrap_err();
            match &err {
                crate::Error::Corruption { file, offset, .. } => {
                    assert!(file.ends_with("p.sst"), "{err}");
                    assert_eq!(*offset, at.offset, "{damaged:?}: {err}");
                }
                other => panic!("{damaged:?}: {other}"),
            }
            // Other partitions read on.
            for (k, v) in [&model[0], &model[N - 1]] {
                let got = t.get(k, |k, v| (k.to_vec(), v.to_vec())).unwrap();
                assert_eq!(got, Some((k.clone(), v.clone())), "{damaged:?}");
            }
            let err = t.verify().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Corruption, "{damaged:?}: {err}");
            if let Damaged::IndexPartition = damaged {
                let mut it = t.iter();
                it.seek_to_first();
                let mut seen = 0;
                while it.valid() {
                    assert_eq!(it.key(), model[seen].0, "entry {seen}");
                    seen += 1;
                    it.next();
                }
                assert_eq!(seen, first_in_middle);
                assert_eq!(it.status().unwrap_err().kind(), ErrorKind::Corruption);
            }
        }
    }

    /// A table whose properties count index partitions but whose footer has an older format
    /// version is refused at open, naming both.
    #[test]
    fn a_partitioned_table_with_an_older_format_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.sst");
        write_table(&path, &entries(), partitioned(false));
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - FOOTER_LEN;
        let old = Footer {
            version: crate::table::format::TABLE_FORMAT_VERSION_RANGE_DEL,
            ..footer(&path)
        };
        bytes[at..].copy_from_slice(&old.encode());
        std::fs::write(&path, &bytes).unwrap();
        let err = open_table(&path, partitioned(false), Caching::None)
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("index partitions") && msg.contains("version is 2"),
            "{msg}"
        );
    }
}
