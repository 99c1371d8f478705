//! Versions: which table files make up the database, and the manifest that records them.
//!
//! A [`Version`] is an immutable set of files per level, shared by `Arc`: readers hold the
//! version they started with while flushes and compactions install new ones. Each column
//! family has its own tree, hence its own current version and log number. The [`VersionSet`]
//! owns the current versions and the manifest, a log (in the WAL's record format) of
//! [`VersionEdit`]s, each about one family; `CURRENT` names the live manifest and is switched
//! by an atomic rename.
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
pub mod read_charge;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::comparator::KeyOrder;
use crate::error::{Error, Result};
use crate::filename::{manifest_name, manifest_path, parse_file_name, FileKind, CURRENT};
use crate::fs::{CountedFile, FileSystem, IoClass, IoStats, ReadOnlyFile};
use crate::key::user_key;
use crate::log::{LogReader, LogWriter, ReadError};
use read_charge::ReadCharge;

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
    /// at none.
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
        Ok(Version::from_parts(levels, order, blob_files))
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

/// What the version set holds of one column family.
#[derive(Debug, Clone)]
pub struct FamilyState {
    /// The family's name.
    pub name: String,
    /// The name of its user key order, as the manifest records it.
    pub comparator: String,
    /// Its current version.
    pub current: Arc<Version>,
    /// WALs below this number hold nothing of the family that is not in its tables.
    pub log_number: u64,
    /// The ttl in seconds of a TTL family (version edit tag 12), `None` for other families.
    pub ttl: Option<u64>,
    /// The name of the family's prefix extractor (empty: none); `None` when no edit recorded
    /// one (a manifest written before prefix extractors existed).
    pub prefix_extractor: Option<String>,
}

/// The current version of each column family, the manifest, and the numbers recorded with
/// them.
pub struct VersionSet {
    fs: Arc<dyn FileSystem>,
    io: Arc<IoStats>,
    dir: PathBuf,
    manifest: LogWriter,
    /// A write or sync of the manifest failed: it may end in part of a record, so the next
    /// edit goes to a new manifest.
    manifest_failed: bool,
    manifest_number: u64,
    state: State,
    /// Versions handed out and maybe still held by readers.
    handed_out: Vec<std::sync::Weak<Version>>,
    /// Blob files that left their family's version (no table refers to them, or the family
    /// was dropped), to delete once no version in use names them.
    dropped_blob_files: Vec<u64>,
}

impl VersionSet {
    /// Creates the manifest of a new (or manifest-less) database, whose files numbered below
    /// `next_file_number` may already exist (WALs of an older format). It holds the default
    /// column family only, whose keys are in `order`, a TTL family of `ttl` seconds if given
    /// (tag 12).
    pub fn create(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        next_file_number: u64,
        io: Arc<IoStats>,
        order: &KeyOrder,
        ttl: Option<u64>,
    ) -> Result<VersionSet> {
        let mut state = State {
            next_file_number: next_file_number.max(1),
            ..State::empty()
        };
        if let Some(default) = state.families.get_mut(&edit::DEFAULT_FAMILY_ID) {
            default.comparator = order.name().to_string();
            default.current = Arc::new(default.current.with_order(order.clone()));
            default.ttl = ttl;
        }
        VersionSet::start(fs, dir, io, state)
    }

    /// Reads `CURRENT` and its manifest, then starts a fresh manifest with the state found,
    /// each family in the key order `order_of` returns for it.
    #[cfg(test)]
    pub fn recover(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        io: Arc<IoStats>,
        order_of: impl Fn(&FamilyState) -> Result<KeyOrder>,
    ) -> Result<VersionSet> {
        VersionSet::recover_checked(fs, dir, io, order_of, |_| Ok(()))
    }

    /// Reads `CURRENT` and its manifest, runs `check` on the families found and gives each
    /// the key order `order_of` returns for it (an error from either, such as a comparator,
    /// ttl or prefix extractor other than the family was created with, leaves the directory
    /// as it was), then starts a fresh manifest with the state found.
    pub fn recover_checked(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        io: Arc<IoStats>,
        order_of: impl Fn(&FamilyState) -> Result<KeyOrder>,
        check: impl FnOnce(&BTreeMap<u32, FamilyState>) -> Result<()>,
    ) -> Result<VersionSet> {
        let (_, mut state) = read_current_state(fs.as_ref(), dir)?;
        check(&state.families)?;
        state.set_orders(order_of)?;
        VersionSet::start(fs, dir, io, state)
    }

    /// Reads `CURRENT` and its manifest and writes nothing: the version set of a database
    /// opened read-only, whose every edit fails. Key orders as for [`VersionSet::recover`].
    pub fn open_read_only(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        io: Arc<IoStats>,
        order_of: impl Fn(&FamilyState) -> Result<KeyOrder>,
    ) -> Result<VersionSet> {
        let (number, mut state) = read_current_state(fs.as_ref(), dir)?;
        state.set_orders(order_of)?;
        let refuse = ReadOnlyFile::new(manifest_path(dir, number));
        let manifest = LogWriter::new(Box::new(refuse));
        Ok(VersionSet::with_state(fs, io, dir, manifest, number, state))
    }

    /// The column families of the database in `dir` as its manifest describes them, by id.
    pub fn read_families(fs: &dyn FileSystem, dir: &Path) -> Result<BTreeMap<u32, FamilyState>> {
        let (_, state) = read_current_state(fs, dir)?;
        Ok(state.families)
    }

    /// Writes the manifest of a repaired database (whose manifest was lost or damaged):
    /// `families` by id, each with its name, comparator, ttl, log number and tree, and the
    /// counters; then points CURRENT at it. The manifest takes number `next_file_number`;
    /// the manifest records the number after it as the next file number. Returns the
    /// manifest's number.
    pub fn write_repaired(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        io: Arc<IoStats>,
        families: BTreeMap<u32, FamilyState>,
        next_file_number: u64,
        last_sequence: u64,
    ) -> Result<u64> {
        let state = State {
            max_column_family: families.keys().copied().max().unwrap_or(0),
            families,
            next_file_number,
            last_sequence,
        };
        Ok(VersionSet::start(fs, dir, io, state)?.manifest_number)
    }

    /// Writes a new manifest holding `state`, points CURRENT at it.
    fn start(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        io: Arc<IoStats>,
        mut state: State,
    ) -> Result<VersionSet> {
        let number = state.next_file_number;
        state.next_file_number += 1;
        let manifest = write_manifest(fs.as_ref(), dir, &io, number, &state)?;
        Ok(VersionSet::with_state(fs, io, dir, manifest, number, state))
    }

    /// A version set writing to manifest `number` through `manifest`, holding `state`.
    fn with_state(
        fs: Arc<dyn FileSystem>,
        io: Arc<IoStats>,
        dir: &Path,
        manifest: LogWriter,
        number: u64,
        state: State,
    ) -> VersionSet {
        VersionSet {
            fs,
            io,
            dir: dir.to_path_buf(),
            manifest,
            manifest_failed: false,
            manifest_number: number,
            state,
            handed_out: Vec::new(),
            dropped_blob_files: Vec::new(),
        }
    }

    /// The current version of the default column family.
    #[cfg(test)]
    pub fn current(&self) -> Arc<Version> {
        self.state.families[&edit::DEFAULT_FAMILY_ID]
            .current
            .clone()
    }

    /// The column families by id, the default (0) first.
    pub fn families(&self) -> &BTreeMap<u32, FamilyState> {
        &self.state.families
    }

    /// The largest column family id ever used.
    pub fn max_column_family(&self) -> u32 {
        self.state.max_column_family
    }

    /// The oldest WAL some family still needs: the smallest of the families' log numbers.
    pub fn min_log_number(&self) -> u64 {
        self.state.min_log_number()
    }

    /// The last sequence number recorded in the manifest.
    pub fn last_sequence(&self) -> u64 {
        self.state.last_sequence
    }

    /// The live manifest's number.
    pub fn manifest_number(&self) -> u64 {
        self.manifest_number
    }

    /// Takes a new file number.
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.state.next_file_number;
        self.state.next_file_number += 1;
        n
    }

    /// Makes sure future file numbers are at least `n`.
    pub fn mark_file_number_used(&mut self, n: u64) {
        self.state.next_file_number = self.state.next_file_number.max(n + 1);
    }

    /// Applies `edit` to its column family, makes it durable in the manifest, and installs
    /// the new version, which it returns (for a dropped family, its last version). Nothing is
    /// installed if the edit does not apply or the manifest write or sync fails; the next edit
    /// then starts a new manifest (see [`VersionSet::roll_over`]).
    pub fn log_and_apply(&mut self, edit: VersionEdit) -> Result<Arc<Version>> {
        self.log_and_apply_with(edit, None)
    }

    /// Creates a column family whose keys are in `order`: [`VersionSet::log_and_apply`] of
    /// `edit` (which adds the family) with the order's name recorded in it.
    pub fn add_family(&mut self, mut edit: VersionEdit, order: KeyOrder) -> Result<Arc<Version>> {
        edit.comparator = Some(order.name().to_string());
        self.log_and_apply_with(edit, Some(order))
    }

    fn log_and_apply_with(
        &mut self,
        mut edit: VersionEdit,
        new_order: Option<KeyOrder>,
    ) -> Result<Arc<Version>> {
        if self.manifest_failed {
            self.roll_over()?;
        }
        let path = manifest_path(&self.dir, self.manifest_number);
        let mut next = self.state.clone();
        let version = next
            .apply(&edit, new_order)
            .map_err(|why| Error::corruption(&path, 0, format!("bad edit: {why}")))?;
        edit.next_file_number = Some(self.state.next_file_number);
        if edit.last_sequence.is_none() {
            edit.last_sequence = Some(self.state.last_sequence);
        }
        if edit.add_column_family.is_some() {
            edit.max_column_family = Some(next.max_column_family);
        }
        let logged = self
            .manifest
            .add_record(&edit.encode())
            .and_then(|()| self.manifest.sync());
        if let Err(e) = logged {
            self.manifest_failed = true;
            return Err(e);
        }
        next.next_file_number = self.state.next_file_number;
        next.last_sequence = self
            .state
            .last_sequence
            .max(edit.last_sequence.unwrap_or(0));
        let old = std::mem::replace(&mut self.state, next);
        self.handed_out.retain(|w| w.strong_count() > 0);
        if let Some(f) = old.families.get(&edit.column_family) {
            self.handed_out.push(Arc::downgrade(&f.current));
        }
        if edit.drop_column_family {
            // The dropped family's files stay while a reader holds its last version.
            self.handed_out.push(Arc::downgrade(&version));
        }
        let before = old.families.get(&edit.column_family);
        let had = before
            .iter()
            .flat_map(|f| f.current.blob_files.keys().copied());
        let added = edit.new_blob_files.iter().map(|b| b.number);
        let kept = match edit.drop_column_family {
            true => &BTreeMap::new(),
            false => &*version.blob_files,
        };
        self.dropped_blob_files
            .extend(had.chain(added).filter(|n| !kept.contains_key(n)));
        Ok(version)
    }

    /// The blob files that left their family's version since the last call. Their files are
    /// deleted once [`VersionSet::files_in_use`] no longer names them.
    pub fn take_dropped_blob_files(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.dropped_blob_files)
    }

    /// Moves to a new manifest holding the current state, after a failed write to the old
    /// one (which may end in part of a record, or in a record whose sync failed and that may
    /// or may not be on disk). CURRENT switches to the new manifest, so the old one is never
    /// read again; it is deleted (or, if that fails, at the next open).
    fn roll_over(&mut self) -> Result<()> {
        // The number is used up even if this fails: a retry must not truncate a manifest that
        // CURRENT may already name.
        let number = self.new_file_number();
        let manifest = write_manifest(self.fs.as_ref(), &self.dir, &self.io, number, &self.state)?;
        let old = std::mem::replace(&mut self.manifest_number, number);
        self.manifest = manifest;
        self.manifest_failed = false;
        let _ = self.fs.remove_file(&manifest_path(&self.dir, old));
        Ok(())
    }

    /// The files of every version still in use (the current ones and any a reader holds).
    pub fn files_in_use(&mut self) -> HashSet<u64> {
        self.handed_out.retain(|w| w.strong_count() > 0);
        let mut live: HashSet<u64> = self
            .state
            .families
            .values()
            .flat_map(|f| {
                f.current
                    .live_files()
                    .into_iter()
                    .chain(f.current.live_blob_files())
            })
            .collect();
        for v in self.handed_out.iter().filter_map(|w| w.upgrade()) {
            live.extend(v.live_files());
            live.extend(v.live_blob_files());
        }
        live
    }

    /// Writes a manifest holding the current state, and a `CURRENT` naming it, into
    /// directory `dir` (a checkpoint's): the state of this database without changing it.
    pub fn write_manifest_into(&self, dir: &Path) -> Result<()> {
        let number = self.state.next_file_number;
        write_manifest(self.fs.as_ref(), dir, &self.io, number, &self.state).map(drop)
    }

    /// The blob files the current versions of all families name.
    pub fn live_blob_files(&self) -> HashSet<u64> {
        self.state
            .families
            .values()
            .flat_map(|f| f.current.live_blob_files())
            .collect()
    }

    /// The tables the current versions of all families name.
    pub fn live_files(&self) -> HashSet<u64> {
        self.state
            .families
            .values()
            .flat_map(|f| f.current.live_files())
            .collect()
    }
}

/// The number of the manifest `CURRENT` names and the state it describes.
fn read_current_state(fs: &dyn FileSystem, dir: &Path) -> Result<(u64, State)> {
    let (number, path) = current_manifest(fs, dir)?;
    let mut state = State::empty();
    for (at, edit) in read_edits(fs, &path)? {
        state
            .apply(&edit, None)
            .map_err(|why| Error::corruption(&path, at, why))?;
        if let Some(n) = edit.next_file_number {
            state.next_file_number = n;
        }
        // Families flush in any order, so an edit may carry a smaller last sequence than an
        // earlier one: the state keeps the largest.
        if let Some(s) = edit.last_sequence {
            state.last_sequence = state.last_sequence.max(s);
        }
        let numbers = edit.new_files.iter().map(|(_, f)| f.number);
        for n in numbers.chain(edit.new_blob_files.iter().map(|b| b.number)) {
            state.next_file_number = state.next_file_number.max(n + 1);
        }
    }
    state.next_file_number = state.next_file_number.max(number + 1);
    Ok((number, state))
}

/// Writes manifest `number` holding `state`, one edit per column family, each with the
/// family's comparator (the first also carries the counters), and points CURRENT at it: the
/// manifest is synced and its name made durable before CURRENT changes.
fn write_manifest(
    fs: &dyn FileSystem,
    dir: &Path,
    io: &Arc<IoStats>,
    number: u64,
    state: &State,
) -> Result<LogWriter> {
    let path = manifest_path(dir, number);
    let file = fs.create_writable(&path)?;
    let mut manifest = LogWriter::new(Box::new(CountedFile::new(file, io.clone(), IoClass::Meta)));
    for (&id, family) in &state.families {
        let mut edit = family.current.snapshot_edit();
        edit.column_family = id;
        edit.log_number = Some(family.log_number);
        edit.family_ttl = family.ttl;
        edit.prefix_extractor = family.prefix_extractor.clone();
        edit.comparator = Some(family.comparator.clone());
        if id == edit::DEFAULT_FAMILY_ID {
            edit.next_file_number = Some(state.next_file_number);
            edit.last_sequence = Some(state.last_sequence);
            edit.max_column_family = Some(state.max_column_family);
        } else {
            edit.add_column_family = Some(family.name.clone());
        }
        manifest.add_record(&edit.encode())?;
    }
    manifest.sync()?;
    // The manifest's name must be durable before CURRENT can point at it.
    fs.sync_dir(dir)?;
    set_current(fs, dir, number)?;
    Ok(manifest)
}

/// The state a manifest describes.
#[derive(Clone)]
struct State {
    families: BTreeMap<u32, FamilyState>,
    max_column_family: u32,
    next_file_number: u64,
    last_sequence: u64,
}

impl State {
    /// A database with an empty default family.
    fn empty() -> State {
        let default = FamilyState {
            name: edit::DEFAULT_FAMILY_NAME.to_string(),
            comparator: crate::comparator::BYTEWISE_NAME.to_string(),
            current: Arc::new(Version::default()),
            log_number: 0,
            ttl: None,
            prefix_extractor: None,
        };
        State {
            families: [(edit::DEFAULT_FAMILY_ID, default)].into_iter().collect(),
            max_column_family: edit::DEFAULT_FAMILY_ID,
            next_file_number: 1,
            last_sequence: 0,
        }
    }

    fn min_log_number(&self) -> u64 {
        self.families
            .values()
            .map(|f| f.log_number)
            .min()
            .unwrap_or(0)
    }

    /// Gives each family the key order `order_of` returns for it.
    fn set_orders(&mut self, order_of: impl Fn(&FamilyState) -> Result<KeyOrder>) -> Result<()> {
        for family in self.families.values_mut() {
            let order = order_of(family)?;
            family.current = Arc::new(family.current.with_order(order));
        }
        Ok(())
    }

    /// Applies the family part of `edit` (creation, drop, comparator, files, log number);
    /// returns the family's new version. A family it creates gets `new_order` (bytewise if
    /// `None`: recovery sets the orders once the manifest is read). Fails if the edit names a
    /// family that does not exist, creates one twice, or its files do not apply.
    fn apply(
        &mut self,
        edit: &VersionEdit,
        new_order: Option<KeyOrder>,
    ) -> std::result::Result<Arc<Version>, String> {
        let id = edit.column_family;
        if let Some(max) = edit.max_column_family {
            self.max_column_family = self.max_column_family.max(max);
        }
        if let Some(name) = &edit.add_column_family {
            if self.families.contains_key(&id) {
                return Err(format!("edit creates column family {id} ({name:?}) twice"));
            }
            if self.families.values().any(|f| &f.name == name) {
                return Err(format!(
                    "edit creates a second column family named {name:?}"
                ));
            }
            let order = new_order.unwrap_or_default();
            self.families.insert(
                id,
                FamilyState {
                    name: name.clone(),
                    comparator: order.name().to_string(),
                    current: Arc::new(Version::default().with_order(order)),
                    log_number: 0,
                    ttl: None,
                    prefix_extractor: None,
                },
            );
            self.max_column_family = self.max_column_family.max(id);
        }
        let family = self
            .families
            .get_mut(&id)
            .ok_or_else(|| format!("edit names column family {id}, which does not exist"))?;
        if let Some(c) = &edit.comparator {
            family.comparator = user_comparator_name(c).to_string();
        }
        let version = Arc::new(family.current.apply(edit)?);
        family.current = version.clone();
        if edit.family_ttl.is_some() {
            family.ttl = edit.family_ttl;
        }
        if let Some(n) = edit.log_number {
            family.log_number = n;
        }
        if let Some(name) = &edit.prefix_extractor {
            family.prefix_extractor = Some(name.clone());
        }
        if edit.drop_column_family {
            if id == edit::DEFAULT_FAMILY_ID {
                return Err("edit drops the default column family".into());
            }
            self.families.remove(&id);
        }
        Ok(version)
    }
}

/// The number and path of the manifest `CURRENT` names.
pub fn current_manifest(fs: &dyn FileSystem, dir: &Path) -> Result<(u64, PathBuf)> {
    let current_path = dir.join(CURRENT);
    let name = crate::fs::read_small_file(fs, &current_path, 256)?;
    let name = String::from_utf8_lossy(&name);
    let number = name
        .strip_suffix('\n')
        .and_then(|n| match parse_file_name(n) {
            Some(FileKind::Manifest(number)) => Some(number),
            _ => None,
        })
        .ok_or_else(|| {
            Error::corruption(
                &current_path,
                0,
                format!("CURRENT holds {name:?}, not a manifest name"),
            )
        })?;
    let path = manifest_path(dir, number);
    if !fs.exists(&path) {
        return Err(Error::corruption(
            &current_path,
            0,
            format!("CURRENT names {}, which does not exist", path.display()),
        ));
    }
    Ok((number, path))
}

/// The edits of a manifest with the offset of each, checked for a comparator. A torn last
/// edit (its sync never returned, so it was never acknowledged) ends the list; any other bad
/// record is a corruption error.
pub fn read_edits(fs: &dyn FileSystem, path: &Path) -> Result<Vec<(u64, VersionEdit)>> {
    let mut reader = LogReader::new(fs.open_sequential(path)?);
    let mut edits = Vec::new();
    let mut saw_comparator = false;
    loop {
        let at = reader.end_of_last_record();
        let record = match reader.read_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(ReadError::Bad(b)) if b.reason.contains("ends inside") => break,
            Err(ReadError::Bad(b)) => return Err(b.into_error(path)),
            Err(ReadError::Io(e)) => return Err(e),
        };
        let edit = VersionEdit::decode(record).map_err(|why| Error::corruption(path, at, why))?;
        saw_comparator |= edit.comparator.is_some();
        edits.push((at, edit));
    }
    if !saw_comparator {
        return Err(Error::corruption(
            path,
            0,
            "manifest has no comparator record",
        ));
    }
    Ok(edits)
}

/// Points CURRENT at manifest `number`: temp file, sync, atomic rename, sync of the directory.
fn set_current(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<()> {
    let line = format!("{}\n", manifest_name(number));
    crate::fs::write_file_atomically(fs, dir, CURRENT, line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::PosixFs;
    use crate::key::{append_internal_key, ValueKind};
    use crate::version::edit::testdata;

    fn file(number: u64, a: &str, b: &str, seq: u64) -> FileMeta {
        let ik = |k: &str| {
            let mut v = Vec::new();
            append_internal_key(&mut v, k.as_bytes(), seq, ValueKind::Put as u8);
            v
        };
        FileMeta {
            number,
            size: 100,
            smallest: ik(a),
            largest: ik(b),
            smallest_seq: seq,
            largest_seq: seq,
            entries: 1,
            deletions: 0,
            blob_refs: Vec::new(),
            reader: Default::default(),
        }
    }

    /// A file whose largest key is a range deletion's end sentinel `m#MAX,RANGEDEL` holds
    /// nothing of `m`: the next file of its level may start at `m`, and a lookup of `m`
    /// reads that next file (a lookup stopping at the first would miss `m`'s value).
    #[test]
    fn a_largest_key_at_the_end_sentinel_excludes_that_key() {
        let tombstone = crate::range_del::Tombstone::new(b"c", b"m", 9);
        let mut left = file(1, "a", "b", 9);
        left.largest = tombstone.largest_key();
        let right = file(2, "m", "z", 5);
        let mut v = Version::default();
        v.levels[1] = vec![Arc::new(left), Arc::new(right)];
        assert_eq!(v.check(), Ok(()));
        let numbers = |k: &[u8]| {
            v.files_for_key(k)
                .map(|(_, f)| f.number)
                .collect::<Vec<_>>()
        };
        assert_eq!(numbers(b"m"), [2]);
        assert_eq!(numbers(b"l"), [1]);
        // A real entry of `m` as the largest key does overlap a file starting at `m`.
        let mut v = Version::default();
        v.levels[1] = vec![
            Arc::new(file(1, "a", "m", 9)),
            Arc::new(file(2, "m", "z", 5)),
        ];
        assert!(v.check().is_err());
    }

    /// The edit an `apply` input describes: lines `add Ln: FILE ...` and `delete Ln: N ...`.
    fn parse_edit(input: &str) -> std::result::Result<VersionEdit, String> {
        let mut edit = VersionEdit::default();
        for line in input.lines().filter(|l| !l.trim().is_empty()) {
            let bad = || format!("bad edit line {line:?}");
            match line.split_once(' ').ok_or_else(bad)? {
                ("add", rest) => {
                    let (level, files) = testdata::parse_level(rest)?;
                    edit.new_files.extend(files.into_iter().map(|f| (level, f)));
                }
                ("delete", rest) => {
                    let (level, numbers) = rest.split_once(':').ok_or_else(bad)?;
                    let level = level.trim().trim_start_matches('L');
                    let level: usize = level.parse().map_err(|_| bad())?;
                    for n in numbers.split_whitespace() {
                        edit.deleted_files
                            .push((level, n.parse().map_err(|_| bad())?));
                    }
                }
                _ => return Err(bad()),
            }
        }
        Ok(edit)
    }

    /// The levels of `v`, and what `Version::check` finds wrong with it, if anything.
    fn checked(v: &Version) -> String {
        let mut out = testdata::format_version(v);
        if let Err(why) = v.check() {
            out.push_str(&format!("check: {why}\n"));
        }
        out
    }

    /// Runs one case of `testdata/apply.txt` against the current version `v`.
    fn run_case(
        case: &mut datadriven::TestCase,
        v: &mut Version,
    ) -> std::result::Result<String, String> {
        let out = match case.directive.as_str() {
            "define" => {
                *v = testdata::parse_version(&case.input)?;
                checked(v)
            }
            "apply" => {
                let edit = parse_edit(&case.input)?;
                assert_eq!(VersionEdit::decode(&edit.encode()).as_ref(), Ok(&edit));
                match v.apply(&edit) {
                    Err(why) => format!("error: {why}\n"),
                    Ok(next) => {
                        *v = next;
                        checked(v)
                    }
                }
            }
            "find" => {
                let key: String = case.take_arg("key").map_err(|e| e.to_string())?;
                let found: Vec<String> = v
                    .files_for_key(key.as_bytes())
                    .map(|(_, f)| f.number.to_string())
                    .collect();
                match found.is_empty() {
                    true => "none\n".to_string(),
                    false => format!("{}\n", found.join(" ")),
                }
            }
            other => return Err(format!("unknown directive {other}")),
        };
        Ok(out)
    }

    /// Version edits applied in sequence, from `testdata/apply.txt` (data-driven: directive,
    /// input, `----`, expected output). `define` sets the version from `Ln: FILE ...` lines
    /// (files in the notation of `edit::testdata`: `12:a-f:100`) and prints it as `apply` does;
    /// `apply` applies an edit of
    /// `add Ln: FILE ...` and `delete Ln: NUMBER ...` lines and prints the levels, or
    /// `error: ...` (the version is then unchanged), and `check: ...` when the result breaks
    /// the invariants `Version::check` tests; `find key=K` lists the files a read of K
    /// consults, in order. Every edit must also survive an encode/decode round trip.
    /// `REWRITE=1 cargo test -p strata --lib version::tests` rewrites the expected outputs.
    #[test]
    fn edits_apply_in_sequence() {
        let ran = testdata::run("src/version/testdata/apply.txt", run_case);
        assert!(ran >= 10);
    }

    fn bytewise(_: &FamilyState) -> Result<KeyOrder> {
        Ok(KeyOrder::Bytewise)
    }

    /// A version set created in a new temporary directory, with what reopening it needs.
    fn new_version_set() -> (
        tempfile::TempDir,
        Arc<dyn FileSystem>,
        Arc<IoStats>,
        VersionSet,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn FileSystem> = Arc::new(PosixFs);
        let io = Arc::new(IoStats::default());
        let set = VersionSet::create(
            fs.clone(),
            dir.path(),
            1,
            io.clone(),
            &KeyOrder::Bytewise,
            None,
        )
        .unwrap();
        (dir, fs, io, set)
    }

    #[test]
    fn manifest_survives_reopen_and_starts_fresh() {
        let (dir, fs, io, mut set) = new_version_set();
        let n = set.new_file_number();
        set.log_and_apply(VersionEdit {
            new_files: vec![(0, file(n, "a", "b", 5))],
            log_number: Some(4),
            last_sequence: Some(5),
            ..VersionEdit::default()
        })
        .unwrap();
        let first_manifest = set.manifest_number();
        drop(set);
        let set = VersionSet::recover(fs.clone(), dir.path(), io.clone(), bytewise).unwrap();
        assert_eq!(set.min_log_number(), 4);
        assert_eq!(set.last_sequence(), 5);
        assert_eq!(set.current().live_files(), [n].into_iter().collect());
        assert!(set.manifest_number() > first_manifest);

        // A damaged CURRENT is a corruption error naming it.
        std::fs::write(dir.path().join(CURRENT), "MANIFEST-999999\n").unwrap();
        let err = VersionSet::recover(fs.clone(), dir.path(), io.clone(), bytewise)
            .err()
            .unwrap();
        assert!(err.to_string().contains("does not exist"), "{err}");
        std::fs::write(dir.path().join(CURRENT), "garbage").unwrap();
        let err = VersionSet::recover(fs, dir.path(), io, bytewise)
            .err()
            .unwrap();
        assert!(err.to_string().contains("CURRENT"), "{err}");
    }

    /// Blob file `number` of `records` records of 100 bytes each.
    fn blob(number: u64, records: u64) -> BlobFileMeta {
        let header_and_footer = (crate::blob::HEADER_LEN + crate::blob::FOOTER_LEN) as u64;
        BlobFileMeta {
            number,
            records,
            file_size: header_and_footer + 100 * records,
            value_bytes: 90 * records,
            ..BlobFileMeta::default()
        }
    }

    /// Table `number` in L1 on keys `a`-`b`, referring to `refs` records (100 bytes each) of
    /// the blob files `(blob file, records)`.
    fn referring(number: u64, refs: &[(u64, u64)]) -> FileMeta {
        FileMeta {
            blob_refs: refs
                .iter()
                .map(|&(blob, records)| BlobCount {
                    number: blob,
                    records,
                    bytes: 100 * records,
                })
                .collect(),
            ..file(number, "a", "b", 1)
        }
    }

    /// A blob file's garbage is what no table refers to: new files start all garbage, the
    /// tables added with them take their references, tables removed give them back, a move
    /// changes nothing, and a file no table refers to leaves the version. Impossible edits
    /// are refused; the version is rebuilt by its own snapshot edit, and the manifest carries
    /// it across a reopen.
    #[test]
    fn blob_files_and_their_garbage_follow_the_tables() {
        // Each step: an edit, then the blob files as "number:garbage records/records" or the
        // error's start.
        let edit =
            |deleted: &[(usize, u64)], new: Vec<(usize, FileMeta)>, blobs: Vec<BlobFileMeta>| {
                VersionEdit {
                    deleted_files: deleted.to_vec(),
                    new_files: new,
                    new_blob_files: blobs,
                    ..VersionEdit::default()
                }
            };
        let steps: Vec<(VersionEdit, &str)> = vec![
            // A flush: a table and the two blob files it refers to.
            (
                edit(
                    &[],
                    vec![(0, referring(5, &[(6, 10), (7, 2)]))],
                    vec![blob(6, 10), blob(7, 2)],
                ),
                "6:0/10 7:0/2",
            ),
            // A move to L1 changes no garbage.
            (
                edit(
                    &[(0, 5)],
                    vec![(1, referring(5, &[(6, 10), (7, 2)]))],
                    vec![],
                ),
                "6:0/10 7:0/2",
            ),
            // A compaction keeps 6 of 10 and 1 of 2.
            (
                edit(
                    &[(1, 5)],
                    vec![(1, referring(8, &[(6, 6), (7, 1)]))],
                    vec![],
                ),
                "6:4/10 7:1/2",
            ),
            // Another drops the last reference to 7, and moves 6's into a new file 9.
            (
                edit(
                    &[(1, 8)],
                    vec![(1, referring(10, &[(9, 6)]))],
                    vec![blob(9, 6)],
                ),
                "9:0/6",
            ),
            (
                edit(&[], vec![(2, referring(11, &[(9, 1)]))], vec![]),
                "error: the tables refer to 7 records",
            ),
            (
                edit(&[], vec![(2, referring(11, &[(6, 1)]))], vec![]),
                "error: table 11 refers to blob file 6, which is not there",
            ),
            (
                edit(&[], vec![], vec![blob(9, 1)]),
                "error: edit adds blob file 9 twice",
            ),
            (
                edit(&[], vec![], vec![blob(10, 1)]),
                "error: edit adds blob file 10 twice",
            ),
            (
                VersionEdit {
                    deleted_blob_files: vec![6],
                    ..VersionEdit::default()
                },
                "error: edit deletes blob file 6, which is not there",
            ),
            // A blob file no table refers to does not stay.
            (edit(&[], vec![], vec![blob(12, 3)]), "9:0/6"),
            (
                edit(&[], vec![(2, referring(13, &[(12, 3)]))], vec![blob(12, 3)]),
                "9:0/6 12:0/3",
            ),
        ];
        let show = |v: &Version| {
            let files: Vec<String> = v
                .blob_files
                .values()
                .map(|b| format!("{}:{}/{}", b.number, b.garbage_records, b.records))
                .collect();
            files.join(" ")
        };
        let mut v = Version::default();
        for (i, (edit, want)) in steps.iter().enumerate() {
            match v.apply(edit) {
                Ok(next) => {
                    assert_eq!(show(&next), *want, "step {i}");
                    v = next;
                }
                Err(e) => assert!(
                    want.strip_prefix("error: ")
                        .is_some_and(|w| e.starts_with(w)),
                    "step {i}: {e}, want {want}"
                ),
            }
        }
        let rebuilt = Version::default().apply(&v.snapshot_edit()).unwrap();
        assert_eq!(rebuilt.blob_files, v.blob_files);
        assert_eq!(v.blob_files[&9].garbage_bytes, 0);

        // Through a manifest: written, reopened (which writes a fresh one from the state).
        let (dir, fs, io, mut set) = new_version_set();
        let n = set.new_file_number();
        let t = set.new_file_number();
        let flushed = edit(&[], vec![(0, referring(t, &[(n, 10)]))], vec![blob(n, 10)]);
        set.log_and_apply(flushed).unwrap();
        let t2 = set.new_file_number();
        set.log_and_apply(edit(&[(0, t)], vec![(1, referring(t2, &[(n, 7)]))], vec![]))
            .unwrap();
        drop(set);
        for _ in 0..2 {
            let mut set =
                VersionSet::recover(fs.clone(), dir.path(), io.clone(), bytewise).unwrap();
            assert_eq!(show(&set.current()), format!("{n}:3/10"));
            assert_eq!(set.current().blob_files[&n].garbage_bytes, 300);
            assert!(set.new_file_number() > t2);
        }
    }
}
