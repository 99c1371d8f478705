//! Versions: which table files make up the database, and the manifest that records them.
//!
//! A [`Version`] is an immutable set of files per level, shared by `Arc`: readers hold the
//! version they started with while flushes and compactions install new ones. Each column
//! family has its own tree, hence its own current version and log number. The [`VersionSet`]
//! owns the current versions and the manifest, a log (in the WAL's record format) of
//! [`VersionEdit`]s, each about one family; `CURRENT` names the live manifest and is switched
//! by an atomic rename. The version set and the manifest's reading and writing are in `set`;
//! this file holds the version itself.
//!
//! Invariants: L0 files are ordered newest first (by largest sequence number, then file
//! number) and may overlap; in levels 1 and up files are sorted by key (in the family's user
//! key order) and do not overlap. Each family's comparator name is in the manifest (see
//! `edit`); the version set learns the order itself from the database when it opens
//! ([`VersionSet::recover`]), which refuses a family opened with another comparator before
//! anything is written.
//! Each open writes a fresh manifest holding one edit with the whole current state, so a
//! manifest never grows past one session's edits.
//!
//! A version also lists its family's blob files (values kept apart from the tree, see
//! `crate::blob`) with their garbage: the records no table references any more. A blob file
//! leaves the version when an edit deletes it or when all of its records are garbage. Blob
//! file numbers come from the counter table numbers use, so the two never share a number.

pub mod edit;
mod manifest;
pub mod read_charge;
mod set;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, OnceLock};

use crate::comparator::KeyOrder;
use crate::key::user_key;
use read_charge::ReadCharge;

pub use manifest::{current_manifest, read_edits};
pub use set::{FamilyState, VersionSet};

pub use edit::{
    user_comparator_name, BlobCount, BlobFileMeta, BlobRefCounter, FileMeta, VersionEdit,
    DEFAULT_FAMILY_ID, DEFAULT_FAMILY_NAME,
};

/// Levels of the tree.
pub const NUM_LEVELS: usize = 7;

/// An immutable set of table files per level.
#[derive(Debug, Clone)]
pub struct Version {
    /// Files per level; L0 newest first, other levels sorted by smallest key.
    pub levels: Vec<Vec<Arc<FileMeta>>>,
    /// The family's user key order.
    pub order: KeyOrder,
    /// The family's blob files by number, each with its garbage so far. Shared between
    /// versions until an edit changes them (most edits do not).
    pub blob_files: Arc<BTreeMap<u64, BlobFileMeta>>,
    /// What reads have paid for the L0 files so far (`read_charge`): a new version starts
    /// at none, or at its parent's when it keeps every L0 file of it
    /// (`ReadCharge::carry_over`).
    pub read_charge: ReadCharge,
    /// [`Version::l0_merge_input_bytes`], worked out at its first call.
    pub(crate) l0_merge_input: OnceLock<u64>,
}

/// The files of `files` (a sorted, non-overlapping level) overlapping user keys [lo, hi], in
/// the order `order`: a contiguous slice, found by binary search. A file whose largest key is
/// a range deletion's end at `lo` (exclusive) does not overlap it.
pub fn overlapping_files<'a>(
    order: &KeyOrder,
    files: &'a [Arc<FileMeta>],
    lo: &[u8],
    hi: &[u8],
) -> &'a [Arc<FileMeta>] {
    let start = files.partition_point(|f| crate::range_del::ends_before(order, &f.largest, lo));
    let end = start + files[start..].partition_point(|f| order.le(user_key(&f.smallest), hi));
    &files[start..end]
}

/// The files of one level of a version, kept alive by holding the version: what a read
/// cursor over the level takes, for one reference count taken instead of one per file (a
/// clone of the level's list takes one for each file, on as many cache lines, for every
/// iterator made).
pub struct LevelFiles {
    version: Arc<Version>,
    level: usize,
}

impl LevelFiles {
    /// Level `level` of `version`.
    pub fn new(version: Arc<Version>, level: usize) -> LevelFiles {
        LevelFiles { version, level }
    }
}

impl std::ops::Deref for LevelFiles {
    type Target = [Arc<FileMeta>];

    fn deref(&self) -> &[Arc<FileMeta>] {
        &self.version.levels[self.level]
    }
}

impl Default for Version {
    fn default() -> Self {
        Version::from_parts(
            vec![Vec::new(); NUM_LEVELS],
            KeyOrder::Bytewise,
            Arc::default(),
        )
    }
}

impl Version {
    /// A version of these files, with nothing charged to it by reads yet.
    fn from_parts(
        levels: Vec<Vec<Arc<FileMeta>>>,
        order: KeyOrder,
        blob_files: Arc<BTreeMap<u64, BlobFileMeta>>,
    ) -> Version {
        Version {
            levels,
            order,
            blob_files,
            read_charge: ReadCharge::default(),
            l0_merge_input: OnceLock::new(),
        }
    }

    /// A new version: this one with `edit` applied. Fails if the edit names a level out of
    /// range, removes a file that is not there, adds one twice (a table and a blob file
    /// cannot share a number either), or leaves a table referring to a blob file the version
    /// does not hold, or to more of one than it holds.
    pub fn apply(&self, edit: &VersionEdit) -> std::result::Result<Version, String> {
        let mut levels = self.levels.clone();
        let mut removed = Vec::new();
        for &(level, number) in &edit.deleted_files {
            let files = levels
                .get_mut(level)
                .ok_or_else(|| format!("edit deletes a file at level {level}"))?;
            let Some(at) = files.iter().position(|f| f.number == number) else {
                return Err(format!("edit deletes file {number} not in level {level}"));
            };
            removed.push(files.remove(at));
        }
        let mut present: HashSet<u64> = levels.iter().flatten().map(|f| f.number).collect();
        for (level, f) in &edit.new_files {
            if !present.insert(f.number) {
                return Err(format!("edit adds file {} twice", f.number));
            }
            levels
                .get_mut(*level)
                .ok_or_else(|| format!("edit adds a file at level {level}"))?
                .push(Arc::new(f.clone()));
        }
        levels[0].sort_by(|a, b| {
            b.largest_seq
                .cmp(&a.largest_seq)
                .then(b.number.cmp(&a.number))
        });
        let order = self.order.clone();
        for files in levels.iter_mut().skip(1) {
            files.sort_by(|a, b| order.compare_internal(&a.smallest, &b.smallest));
        }
        let blob_files = self.apply_blob_files(edit, &removed, &present)?;
        let version = Version::from_parts(levels, order, blob_files);
        if !edit.deleted_files.iter().any(|&(level, _)| level == 0) {
            version.read_charge.carry_over(&self.read_charge);
        }
        Ok(version)
    }

    /// The blob files once `edit` is applied, given the tables it removed and the new
    /// version's table numbers. A blob file's garbage is what no table refers to: a new file
    /// starts all garbage and the tables added with it take their references off; a table
    /// removed gives its references back as garbage (a table moved to another level takes
    /// them off again in the same edit). A file left all garbage leaves the version.
    fn apply_blob_files(
        &self,
        edit: &VersionEdit,
        removed: &[Arc<FileMeta>],
        tables: &HashSet<u64>,
    ) -> std::result::Result<Arc<BTreeMap<u64, BlobFileMeta>>, String> {
        let refs_change = removed.iter().any(|f| !f.blob_refs.is_empty())
            || edit.new_files.iter().any(|(_, f)| !f.blob_refs.is_empty());
        if edit.deleted_blob_files.is_empty() && edit.new_blob_files.is_empty() && !refs_change {
            return Ok(self.blob_files.clone());
        }
        let mut blobs = (*self.blob_files).clone();
        for number in &edit.deleted_blob_files {
            if blobs.remove(number).is_none() {
                return Err(format!(
                    "edit deletes blob file {number}, which is not there"
                ));
            }
        }
        for b in &edit.new_blob_files {
            if tables.contains(&b.number) || blobs.contains_key(&b.number) {
                return Err(format!("edit adds blob file {} twice", b.number));
            }
            let fresh = BlobFileMeta {
                garbage_records: b.records,
                garbage_bytes: b.record_bytes(),
                ..*b
            };
            blobs.insert(b.number, fresh);
        }
        // Net change of each file's garbage: references given back minus references taken.
        let mut delta: BTreeMap<u64, (i128, i128)> = BTreeMap::new();
        for r in removed.iter().flat_map(|f| &f.blob_refs) {
            let d = delta.entry(r.number).or_default();
            d.0 += i128::from(r.records);
            d.1 += i128::from(r.bytes);
        }
        for (table, r) in edit
            .new_files
            .iter()
            .flat_map(|(_, f)| f.blob_refs.iter().map(move |r| (f.number, r)))
        {
            if !blobs.contains_key(&r.number) {
                return Err(format!(
                    "table {table} refers to blob file {}, which is not there",
                    r.number
                ));
            }
            let d = delta.entry(r.number).or_default();
            d.0 -= i128::from(r.records);
            d.1 -= i128::from(r.bytes);
        }
        for (number, (records, bytes)) in delta {
            let Some(m) = blobs.get_mut(&number) else {
                // Referred to only by tables the edit removes, and deleted by it too.
                continue;
            };
            let garbage_records = i128::from(m.garbage_records) + records;
            let garbage_bytes = i128::from(m.garbage_bytes) + bytes;
            if garbage_records < 0
                || garbage_bytes < 0
                || garbage_records > i128::from(m.records)
                || garbage_bytes > i128::from(m.record_bytes())
            {
                return Err(format!(
                    "the tables refer to {} records and {} bytes of blob file {number}, which \
                     holds {} records in {} bytes",
                    i128::from(m.records) - garbage_records,
                    i128::from(m.record_bytes()) - garbage_bytes,
                    m.records,
                    m.record_bytes()
                ));
            }
            m.garbage_records = garbage_records as u64;
            m.garbage_bytes = garbage_bytes as u64;
        }
        blobs.retain(|_, m| m.garbage_records < m.records);
        Ok(Arc::new(blobs))
    }

    /// This version with user keys in `order`: its levels sorted again in it.
    pub fn with_order(&self, order: KeyOrder) -> Version {
        let empty = Version::from_parts(self.levels.clone(), order, self.blob_files.clone());
        // Applying an empty edit only sorts.
        empty.apply(&VersionEdit::default()).unwrap_or(empty)
    }

    /// Checks the invariants: levels 1 and up sorted by key with no two files sharing a
    /// user key; every file's smallest key not above its largest.
    pub fn check(&self) -> std::result::Result<(), String> {
        for (level, files) in self.levels.iter().enumerate() {
            for f in files {
                if self.order.compare_internal(&f.smallest, &f.largest) == Ordering::Greater {
                    return Err(format!("L{level} {f:?}: smallest key above largest"));
                }
            }
            if level == 0 {
                continue;
            }
            for w in files.windows(2) {
                let (largest, next) = (&w[0].largest, user_key(&w[1].smallest));
                if !crate::range_del::ends_before(&self.order, largest, next) {
                    return Err(format!("L{level}: {:?} overlaps {:?}", w[0], w[1]));
                }
            }
        }
        Ok(())
    }

    /// Every table file number in the version.
    pub fn live_files(&self) -> HashSet<u64> {
        self.levels.iter().flatten().map(|f| f.number).collect()
    }

    /// Every blob file number in the version.
    pub fn live_blob_files(&self) -> impl Iterator<Item = u64> + '_ {
        self.blob_files.keys().copied()
    }

    /// Bytes of the files of `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels[level].iter().map(|f| f.size).sum()
    }

    /// The files whose key range holds `key` (a user key), with their levels, in the order a
    /// read must consult them: L0 newest first, then at most one file per deeper level.
    pub fn files_for_key<'a>(
        &'a self,
        key: &'a [u8],
    ) -> impl Iterator<Item = (usize, &'a Arc<FileMeta>)> {
        // A largest key at a range deletion's end sentinel does not hold that user key: the
        // next file of the level may start there, and it is the one to read.
        let order = &self.order;
        let covers = move |f: &&Arc<FileMeta>| {
            order.le(user_key(&f.smallest), key)
                && !crate::range_del::ends_before(order, &f.largest, key)
        };
        let l0 = self.levels[0].iter().filter(covers).map(|f| (0, f));
        let deeper = self
            .levels
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(move |(level, files)| {
                let i = files
                    .partition_point(|f| crate::range_del::ends_before(order, &f.largest, key));
                files
                    .get(i)
                    .filter(|f| order.le(user_key(&f.smallest), key))
                    .map(|f| (level, f))
            });
        l0.chain(deeper)
    }

    /// The edit that recreates this version from nothing.
    fn snapshot_edit(&self) -> VersionEdit {
        VersionEdit {
            new_files: self
                .levels
                .iter()
                .enumerate()
                .flat_map(|(level, files)| files.iter().map(move |f| (level, (**f).clone())))
                .collect(),
            // Their garbage follows from the tables' references.
            new_blob_files: self.blob_files.values().copied().collect(),
            ..VersionEdit::default()
        }
    }
}

#[cfg(test)]
mod tests;
