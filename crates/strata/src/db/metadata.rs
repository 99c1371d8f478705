//! What the tree is made of, file by file, and how big a key range is: RocksDB's
//! `GetLiveFilesMetaData`, `GetPropertiesOfAllTables`, `GetApproximateSizes` and
//! `GetApproximateMemTableStats`, which systems built on the engine read to split and move
//! key ranges (a region's size, where to cut it) and to find the files to drop or compact.
//!
//! Everything here reads one super version per family (the memtables and files as they
//! stood at the call) and takes no lock a write waits for. Table sizes come from the
//! manifest; user properties and range sizes from each table's properties block and index
//! (`table/approximate.rs`), through the table cache: no data block is read.
//!
//! A range's size in the tables: for each file it meets, the bytes from where the range
//! starts in the file (0 if before the file's first key) to where it ends (the file's size
//! if after its last key), each found by one seek of the file's index. The memtables' share
//! is counted entry by entry over the range (a memtable is in memory and at most
//! `write_buffer_size` bytes).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::families::ColumnFamilyData;
use super::{Db, DbInner};
use crate::column_family::ColumnFamily;
use crate::comparator::KeyOrder;
use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::key::{seek_key, user_key, MAX_SEQUENCE};
use crate::table::properties::TableProperties;
use crate::version::FileMeta;

/// One table of the tree, as [`Db::live_files_metadata`] reports it (RocksDB's
/// `LiveFileMetaData`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LiveFileMetadata {
    /// The column family's name.
    pub column_family_name: String,
    /// The level the file is in.
    pub level: usize,
    /// The file's name in the database directory, `NNNNNN.sst` (what
    /// [`Db::compact_files`] takes).
    pub name: String,
    /// The file's number (the `NNNNNN` of its name).
    pub file_number: u64,
    /// The directory the file is in (the database's).
    pub directory: PathBuf,
    /// Bytes in the file.
    pub size: u64,
    /// The smallest user key of the file (of an entry or of a range deletion's start).
    pub smallest_key: Vec<u8>,
    /// The largest user key of the file (of an entry, or a range deletion's end).
    pub largest_key: Vec<u8>,
    /// The smallest sequence number in the file.
    pub smallest_seqno: u64,
    /// The largest sequence number in the file.
    pub largest_seqno: u64,
    /// Entries in the file (all kinds, range deletions aside).
    pub num_entries: u64,
    /// Deletions among them.
    pub num_deletions: u64,
    /// The blob files the table's entries refer to, by number, ascending.
    pub blob_file_references: Vec<u64>,
    /// The properties the family's collectors stored in the table (see
    /// [`TablePropertiesCollector`](crate::TablePropertiesCollector)); empty without
    /// collectors, and for a table that could not be opened (the `LOG` names it).
    pub user_properties: BTreeMap<String, Vec<u8>>,
}

/// A range of user keys, `[start, limit)` in the family's key order (RocksDB's `Range`; the
/// name `Range` is the iterator's here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRange<'a> {
    /// The first key of the range.
    pub start: &'a [u8],
    /// The first key after the range.
    pub limit: &'a [u8],
}

impl<'a> KeyRange<'a> {
    /// The keys `[start, limit)`.
    pub fn new(start: &'a [u8], limit: &'a [u8]) -> KeyRange<'a> {
        KeyRange { start, limit }
    }
}

/// What [`Db::approximate_sizes_opt`] counts (RocksDB's `SizeApproximationOptions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SizeApproximationOptions {
    /// Count the bytes of the memtables' entries in the range. Default: false.
    pub include_memtables: bool,
    /// Count the bytes of the tables' data in the range. Default: true.
    pub include_files: bool,
}

impl Default for SizeApproximationOptions {
    fn default() -> Self {
        SizeApproximationOptions {
            include_memtables: false,
            include_files: true,
        }
    }
}

impl Db {
    /// Every table of every column family, with its level, key range, sequence numbers,
    /// counts and user properties (RocksDB's `GetLiveFilesMetaData`): the tree as it stands
    /// at the call. Ordered by family, then level, then as the level orders its files (L0
    /// newest first, other levels by key).
    pub fn live_files_metadata(&self) -> Vec<LiveFileMetadata> {
        let families = self.inner.families();
        let mut all = Vec::new();
        for cf in families.values() {
            all.extend(self.inner.family_files_metadata(cf));
        }
        all
    }

    /// The tables of column family `cf`, as [`Db::live_files_metadata`] gives them.
    pub fn live_files_metadata_cf(&self, cf: &ColumnFamily) -> Result<Vec<LiveFileMetadata>> {
        let cf = self.inner.family(cf)?;
        Ok(self.inner.family_files_metadata(&cf))
    }

    /// The properties of every table of column family `cf`, by file name (RocksDB's
    /// `GetPropertiesOfAllTables`): counts, sizes, sequence numbers, compression and the
    /// user properties of [`TablePropertiesCollector`](crate::TablePropertiesCollector)s.
    /// Fails if a table cannot be opened, naming it.
    pub fn properties_of_all_tables(
        &self,
        cf: &ColumnFamily,
    ) -> Result<BTreeMap<String, TableProperties>> {
        let cf = self.inner.family(cf)?;
        let version = cf.super_version().version.clone();
        let mut all = BTreeMap::new();
        for (level, files) in version.levels.iter().enumerate() {
            for f in files {
                let table = self.inner.tables.get(f.number, &version.order, level)?;
                all.insert(file_name(f.number), table.properties().clone());
            }
        }
        Ok(all)
    }

    /// The bytes of column family `cf`'s tables that hold keys of each of `ranges`, one
    /// figure per range (RocksDB's `GetApproximateSizes`): read from the tables' indexes,
    /// not by scanning, so each figure is within about a data block per table of the truth.
    /// Memtables are not counted (see [`Db::approximate_sizes_opt`]). A range whose limit
    /// is not after its start is 0 bytes.
    pub fn approximate_sizes(
        &self,
        cf: &ColumnFamily,
        ranges: &[KeyRange<'_>],
    ) -> Result<Vec<u64>> {
        self.approximate_sizes_opt(cf, ranges, &SizeApproximationOptions::default())
    }

    /// [`Db::approximate_sizes`], counting the tables, the memtables or both as `options`
    /// say.
    pub fn approximate_sizes_opt(
        &self,
        cf: &ColumnFamily,
        ranges: &[KeyRange<'_>],
        options: &SizeApproximationOptions,
    ) -> Result<Vec<u64>> {
        let cf = self.inner.family(cf)?;
        let sv = cf.super_version();
        let order = &sv.version.order;
        let mut sizes = Vec::with_capacity(ranges.len());
        for range in ranges {
            if !order.lt(range.start, range.limit) {
                sizes.push(0);
                continue;
            }
            let mut bytes = 0;
            if options.include_files {
                for (level, files) in sv.version.levels.iter().enumerate() {
                    for f in files {
                        bytes += self.inner.file_bytes_in(f, level, order, range)?;
                    }
                }
            }
            if options.include_memtables {
                bytes += memtable_stats(&cf, range).1;
            }
            sizes.push(bytes);
        }
        Ok(sizes)
    }

    /// How many entries the memtables of column family `cf` hold in `range`, and their
    /// bytes (keys and values as written) (RocksDB's `GetApproximateMemTableStats`). Every
    /// version of a key counts, deletions included.
    pub fn approximate_memtable_stats(
        &self,
        cf: &ColumnFamily,
        range: KeyRange<'_>,
    ) -> Result<(u64, u64)> {
        let cf = self.inner.family(cf)?;
        Ok(memtable_stats(&cf, &range))
    }
}

/// The name of table `number` in the database directory.
pub(crate) fn file_name(number: u64) -> String {
    format!("{number:06}.sst")
}

/// The entries and their bytes in `range` over every memtable of `cf`.
fn memtable_stats(cf: &ColumnFamilyData, range: &KeyRange<'_>) -> (u64, u64) {
    let sv = cf.super_version();
    let order = &sv.version.order;
    let (mut count, mut bytes) = (0, 0);
    if !order.lt(range.start, range.limit) {
        return (0, 0);
    }
    for mem in std::iter::once(&sv.active).chain(sv.immutables.iter()) {
        let mut it = mem.iter();
        it.seek(&seek_key(range.start, MAX_SEQUENCE));
        while it.valid() && order.lt(user_key(it.key()), range.limit) {
            count += 1;
            bytes += (it.key().len() + it.value().len()) as u64;
            it.next();
        }
    }
    (count, bytes)
}

impl DbInner {
    pub(super) fn family_files_metadata(&self, cf: &ColumnFamilyData) -> Vec<LiveFileMetadata> {
        let version = cf.super_version().version.clone();
        let mut all = Vec::new();
        for (level, files) in version.levels.iter().enumerate() {
            for f in files {
                let user_properties = match self.tables.get(f.number, &version.order, level) {
                    Ok(t) => t.properties().user_properties.clone(),
                    Err(e) => {
                        self.info_log.info(format_args!(
                            "live_files_metadata: table {} of family '{}' not opened: {e}",
                            f.number,
                            cf.name()
                        ));
                        BTreeMap::new()
                    }
                };
                let mut blob_file_references: Vec<u64> =
                    f.blob_refs.iter().map(|b| b.number).collect();
                blob_file_references.sort_unstable();
                all.push(LiveFileMetadata {
                    column_family_name: cf.name().to_string(),
                    level,
                    name: file_name(f.number),
                    file_number: f.number,
                    directory: self.path.clone(),
                    size: f.size,
                    smallest_key: user_key(&f.smallest).to_vec(),
                    largest_key: user_key(&f.largest).to_vec(),
                    smallest_seqno: f.smallest_seq,
                    largest_seqno: f.largest_seq,
                    num_entries: f.entries,
                    num_deletions: f.deletions,
                    blob_file_references,
                    user_properties,
                });
            }
        }
        all
    }

    /// The bytes of file `f` (at `level`) holding keys of `range`, from its index.
    fn file_bytes_in(
        &self,
        f: &Arc<FileMeta>,
        level: usize,
        order: &KeyOrder,
        range: &KeyRange<'_>,
    ) -> Result<u64> {
        let (smallest, largest) = (user_key(&f.smallest), user_key(&f.largest));
        if !order.lt(smallest, range.limit) || order.lt(largest, range.start) {
            return Ok(0); // the file is all before or all after the range
        }
        let starts_before = order.le(range.start, smallest);
        let ends_after = order.lt(largest, range.limit);
        if starts_before && ends_after {
            return Ok(f.size);
        }
        let table = self.tables.get_for(f, order, level)?;
        let start = match starts_before {
            true => 0,
            false => table
                .approximate_offset_of(&seek_key(range.start, MAX_SEQUENCE))?
                .unwrap_or(f.size),
        };
        let end = match ends_after {
            true => f.size,
            false => table
                .approximate_offset_of(&seek_key(range.limit, MAX_SEQUENCE))?
                .unwrap_or(f.size),
        };
        Ok(end.saturating_sub(start))
    }
}
