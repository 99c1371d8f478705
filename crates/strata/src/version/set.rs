//! The version set: the current version of each column family, the manifest that records
//! their edits, and `CURRENT`, which names the live manifest. Opening reads the manifest back
//! ([`VersionSet::recover`]); each open writes a fresh manifest holding the whole current
//! state. Reading a manifest's records and `CURRENT` is `manifest.rs`'s, for this set and
//! for the tools.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::edit::{self, user_comparator_name, VersionEdit};
use super::manifest::{current_manifest, read_edits_from, set_current};
use super::Version;
use crate::comparator::KeyOrder;
use crate::error::{Error, Result};
use crate::filename::manifest_path;
use crate::fs::{CountedFile, FileSystem, IoClass, IoStats, ReadOnlyFile};
use crate::log::LogWriter;

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
    /// A read-only set: the offset in the manifest just past the last edit read, where
    /// [`VersionSet::follow_manifest`] reads on.
    read_to: u64,
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
        let (number, mut state, read_to) = read_current_state_to(fs.as_ref(), dir)?;
        state.set_orders(order_of)?;
        let refuse = ReadOnlyFile::new(manifest_path(dir, number));
        let manifest = LogWriter::new(Box::new(refuse));
        let mut set = VersionSet::with_state(fs, io, dir, manifest, number, state);
        set.read_to = read_to;
        Ok(set)
    }

    /// For a read-only set following a manifest another process writes (a secondary
    /// instance): reads the edits appended since the last read and applies them, or, when
    /// `CURRENT` names another manifest now, reads that one whole. A torn or partly written
    /// edit at the end is where the manifest's writer is: it is read again next time, as is
    /// an atomic group not finished yet. Families created by the edits get the key order
    /// `order_of` returns. Returns whether anything changed; on an error the set is as it was.
    pub fn follow_manifest(
        &mut self,
        order_of: impl Fn(&FamilyState) -> Result<KeyOrder>,
    ) -> Result<bool> {
        let (number, path) = current_manifest(self.fs.as_ref(), &self.dir)?;
        if number != self.manifest_number {
            let (mut state, read_to) = read_manifest_state(self.fs.as_ref(), &path, number, true)?;
            state.set_orders(order_of)?;
            self.state = state;
            self.manifest_number = number;
            self.read_to = read_to;
            self.manifest = LogWriter::new(Box::new(ReadOnlyFile::new(path)));
            return Ok(true);
        }
        let (edits, read_to) = read_edits_from(self.fs.as_ref(), &path, self.read_to, true)?;
        if edits.is_empty() {
            return Ok(false);
        }
        let mut next = self.state.clone();
        for (at, edit) in &edits {
            next.apply_read(&path, *at, edit)?;
        }
        for (id, family) in next.families.iter_mut() {
            if !self.state.families.contains_key(id) {
                let order = order_of(family)?;
                family.current = Arc::new(family.current.with_order(order));
            }
        }
        self.state = next;
        self.read_to = read_to;
        Ok(true)
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
            read_to: 0,
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

    /// Applies `edits` (each to its column family) as one: all are recorded in the manifest
    /// as an atomic group (tag 17) and synced once, and all new versions are installed, or,
    /// if any does not apply or the write fails, none is. Returns the new versions in the
    /// order of `edits`. (An atomic flush records its families' tables so.)
    pub fn log_and_apply_group(
        &mut self,
        mut edits: Vec<VersionEdit>,
    ) -> Result<Vec<Arc<Version>>> {
        if edits.len() <= 1 {
            return edits
                .pop()
                .map(|e| self.log_and_apply(e).map(|v| vec![v]))
                .unwrap_or_else(|| Ok(Vec::new()));
        }
        if self.manifest_failed {
            self.roll_over()?;
        }
        let path = manifest_path(&self.dir, self.manifest_number);
        let mut next = self.state.clone();
        let mut versions = Vec::with_capacity(edits.len());
        let count = edits.len() as u32;
        for (i, edit) in edits.iter_mut().enumerate() {
            if edit.add_column_family.is_some() {
                return Err(Error::InvalidArgument(
                    "a family cannot be created in an atomic group".into(),
                ));
            }
            let version = next
                .apply(edit, None)
                .map_err(|why| Error::corruption(&path, 0, format!("bad edit: {why}")))?;
            edit.next_file_number = Some(self.state.next_file_number);
            if edit.last_sequence.is_none() {
                edit.last_sequence = Some(self.state.last_sequence);
            }
            edit.atomic_group = Some(count - 1 - i as u32);
            versions.push(version);
        }
        let mut logged = Ok(());
        for edit in &edits {
            logged = self.manifest.add_record(&edit.encode());
            if logged.is_err() {
                break;
            }
        }
        if let Err(e) = logged.and_then(|()| self.manifest.sync()) {
            self.manifest_failed = true;
            return Err(e);
        }
        next.next_file_number = self.state.next_file_number;
        next.last_sequence = edits
            .iter()
            .filter_map(|e| e.last_sequence)
            .fold(self.state.last_sequence, u64::max);
        let old = std::mem::replace(&mut self.state, next);
        self.handed_out.retain(|w| w.strong_count() > 0);
        for (edit, version) in edits.iter().zip(&versions) {
            let before = old.families.get(&edit.column_family);
            if let Some(f) = before {
                self.handed_out.push(Arc::downgrade(&f.current));
            }
            if edit.drop_column_family {
                self.handed_out.push(Arc::downgrade(version));
            }
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
        }
        Ok(versions)
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
    read_current_state_to(fs, dir).map(|(number, state, _)| (number, state))
}

/// [`read_current_state`], with the offset just past the last edit read.
fn read_current_state_to(fs: &dyn FileSystem, dir: &Path) -> Result<(u64, State, u64)> {
    let (number, path) = current_manifest(fs, dir)?;
    let (state, read_to) = read_manifest_state(fs, &path, number, false)?;
    Ok((number, state, read_to))
}

/// The state manifest `number` at `path` describes, and the offset just past its last
/// edit read (`following` as for [`read_edits_from`]).
fn read_manifest_state(
    fs: &dyn FileSystem,
    path: &Path,
    number: u64,
    following: bool,
) -> Result<(State, u64)> {
    let mut state = State::empty();
    let (edits, read_to) = read_edits_from(fs, path, 0, following)?;
    for (at, edit) in &edits {
        state.apply_read(path, *at, edit)?;
    }
    state.next_file_number = state.next_file_number.max(number + 1);
    Ok((state, read_to))
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

    /// Applies `edit`, read at offset `at` of manifest `path`, with the counters it carries.
    fn apply_read(&mut self, path: &Path, at: u64, edit: &VersionEdit) -> Result<()> {
        self.apply(edit, None)
            .map_err(|why| Error::corruption(path, at, why))?;
        if let Some(n) = edit.next_file_number {
            self.next_file_number = n;
        }
        // Families flush in any order, so an edit may carry a smaller last sequence than an
        // earlier one: the state keeps the largest.
        if let Some(s) = edit.last_sequence {
            self.last_sequence = self.last_sequence.max(s);
        }
        let numbers = edit.new_files.iter().map(|(_, f)| f.number);
        for n in numbers.chain(edit.new_blob_files.iter().map(|b| b.number)) {
            self.next_file_number = self.next_file_number.max(n + 1);
        }
        Ok(())
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
