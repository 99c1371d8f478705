//! The database's column families: each has its own memtables, tree of tables (a version in
//! the version set), options, compaction statistics and write-stall limits; all share the
//! WAL, the manifest, the table and block caches and the background threads.
//!
//! Invariants:
//!
//! - Family 0 is the default family; it always exists and cannot be dropped.
//! - The family set is copied on change (create, drop) and read as one `Arc`, so the write
//!   path and the background threads see a consistent set without holding a lock.
//! - A family's memtables each carry the number of the WAL that was current when they
//!   started: every entry of a memtable is in that WAL or a later one. The oldest WAL a family
//!   still needs is the log number of its oldest memtable ([`ColumnFamilyData::needed_wal`]);
//!   a WAL is deleted once it is older than every family's. When the WAL switches, families
//!   whose active memtable is empty get a fresh one on the new WAL, so that a family nobody
//!   writes to does not keep old WALs alive.
//! - A dropped family leaves the set and its handles report it dropped; its tables are
//!   deleted once no reader holds its last version.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::blob::separated::SeparatedAtWrite;
use super::stats::LevelCompactionStats;
use super::write::stall::{decide, Stall, StallLimits, TreeState};
use super::SuperVersion;
use crate::column_family::ColumnFamily;
use crate::error::{Error, Result};
use crate::listener::FlushReason;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::table::{TableFamily, TableOptions};
use crate::version::{Version, NUM_LEVELS};

/// One column family of an open database.
pub(crate) struct ColumnFamilyData {
    /// The handle given to users: id, name, dropped flag.
    pub handle: ColumnFamily,
    /// The database's options with this family's fields, as the family was opened: read
    /// only the options that cannot change here (see `options/registry.rs`); the mutable
    /// ones are in [`ColumnFamilyData::current_options`].
    pub options: Options,
    /// `options` with the changes made since open (`Db::set_cf_options`), swapped whole.
    current: RwLock<Arc<Options>>,
    /// What reads of this family consult, swapped as one `Arc`.
    pub sv: RwLock<Arc<SuperVersion>>,
    /// Estimated bytes compaction still has to rewrite, updated with each new version.
    pub pending_compaction_bytes: AtomicU64,
    /// Compactions per output level.
    pub compaction_stats: Mutex<Vec<LevelCompactionStats>>,
    /// Why each immutable memtable is to be flushed, by its WAL number (a family has one
    /// memtable per WAL), for the flush's events.
    flush_reasons: Mutex<HashMap<u64, FlushReason>>,
    /// The values the write path put in blob files, per memtable, for the flushes.
    pub separated_at_write: SeparatedAtWrite,
}

impl ColumnFamilyData {
    /// A family with `version` and the given memtables (immutables newest first).
    pub fn new(
        handle: ColumnFamily,
        options: Options,
        active: Arc<MemTable>,
        immutables: Vec<Arc<MemTable>>,
        version: Arc<Version>,
    ) -> ColumnFamilyData {
        let cf = ColumnFamilyData {
            handle,
            current: RwLock::new(Arc::new(options.clone())),
            options,
            sv: RwLock::new(Arc::new(SuperVersion::new(
                active,
                immutables,
                version.clone(),
            ))),
            pending_compaction_bytes: AtomicU64::new(0),
            compaction_stats: Mutex::new(vec![LevelCompactionStats::default(); NUM_LEVELS]),
            flush_reasons: Mutex::new(HashMap::new()),
            separated_at_write: SeparatedAtWrite::default(),
        };
        for mem in &cf.sv.read().immutables {
            cf.note_flush_reason(mem, FlushReason::Recovery);
        }
        cf.note_new_version(&version);
        cf
    }

    pub fn id(&self) -> u32 {
        self.handle.id()
    }

    pub fn name(&self) -> &str {
        self.handle.name()
    }

    /// The family's options now, with the changes made since open.
    pub fn current_options(&self) -> Arc<Options> {
        self.current.read().clone()
    }

    /// Replaces the family's options (`Db::set_cf_options`, which checked them).
    pub fn set_current_options(&self, options: Arc<Options>) {
        *self.current.write() = options;
    }

    /// The current super version.
    pub fn super_version(&self) -> Arc<SuperVersion> {
        self.sv.read().clone()
    }

    /// The oldest WAL this family still needs: that of its oldest memtable.
    pub fn needed_wal(&self) -> u64 {
        let sv = self.sv.read();
        sv.immutables.last().unwrap_or(&sv.active).log_number()
    }

    /// Records why memtable `mem`, becoming immutable, is to be flushed.
    pub fn note_flush_reason(&self, mem: &MemTable, reason: FlushReason) {
        self.flush_reasons.lock().insert(mem.log_number(), reason);
    }

    /// Why memtable `mem` is flushed, forgotten as it is asked.
    pub fn take_flush_reason(&self, mem: &MemTable) -> FlushReason {
        let reason = self.flush_reasons.lock().remove(&mem.log_number());
        // Every memtable is noted as it becomes immutable (at a switch, or at open).
        reason.unwrap_or(FlushReason::WriteBufferFull)
    }

    /// The options of the tables this family writes: its own, with the family recorded in
    /// each table's properties (what repair reads when the manifest is lost).
    pub fn table_options(&self, bottommost: bool) -> TableOptions {
        self.table_options_at(0, bottommost)
    }

    /// [`Self::table_options`] of a table written into `level` (its compression by level).
    pub fn table_options_at(&self, level: usize, bottommost: bool) -> TableOptions {
        TableOptions {
            column_family: Some(TableFamily {
                id: self.id(),
                name: self.name().to_string(),
                ttl: self.options.ttl.map(|t| t.as_secs()),
            }),
            ..self.current_options().table_options_at(level, bottommost)
        }
    }

    /// Updates what is derived from the current version (for write stalls).
    pub fn note_new_version(&self, version: &Version) {
        let pending = crate::compaction::picker::pending_compaction_bytes(
            version,
            &self.current_options().picker_options(),
        );
        self.pending_compaction_bytes
            .store(pending, Ordering::Relaxed);
    }

    /// Installs `version` for readers, keeping the memtables.
    pub fn install_version(&self, version: Arc<Version>) {
        self.note_new_version(&version);
        let mut current = self.sv.write();
        *current = Arc::new(SuperVersion::new(
            current.active.clone(),
            current.immutables.clone(),
            version,
        ));
    }
}

/// The live column families by id; the default (0) is always there.
pub(crate) type Families = BTreeMap<u32, Arc<ColumnFamilyData>>;

/// The error for a handle whose family was dropped (or belongs to no family of this
/// database).
pub(crate) fn dropped_error(handle: &ColumnFamily) -> Error {
    Error::InvalidArgument(format!(
        "column family '{}' (id {}) was dropped",
        handle.name(),
        handle.id()
    ))
}

/// The family of `handle` in `families`, or an error naming it.
pub(crate) fn lookup(families: &Families, handle: &ColumnFamily) -> Result<Arc<ColumnFamilyData>> {
    match families.get(&handle.id()) {
        Some(cf) if !handle.is_dropped() && cf.name() == handle.name() => Ok(cf.clone()),
        _ => Err(dropped_error(handle)),
    }
}

/// Checks the options of family `name`; the error names the family and the option.
pub(crate) fn check_options(name: &str, options: &Options) -> Result<()> {
    options.validate().map_err(|e| match e {
        Error::InvalidArgument(why) => {
            Error::InvalidArgument(format!("options of column family '{name}': {why}"))
        }
        other => other,
    })
}

/// Checks that family `name`, recorded in the manifest with ttl `recorded` (seconds), is
/// opened with a ttl exactly when it was created with one: the stored values of a TTL family
/// carry an expiry suffix that reads must strip, and those of other families do not.
pub(crate) fn check_ttl(
    name: &str,
    recorded: Option<u64>,
    opened: Option<std::time::Duration>,
) -> Result<()> {
    let setting = |ttl: Option<String>| match ttl {
        Some(t) => format!("with ttl {t}"),
        None => "without a ttl".to_string(),
    };
    if recorded.is_some() == opened.is_some() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "column family '{name}' was created {} but is opened {}: whether a family has a ttl \
         cannot change",
        setting(recorded.map(|s| format!("{s}s"))),
        setting(opened.map(|d| format!("{d:?}")))
    )))
}

/// Checks a family name: not empty, at most 255 bytes, no control characters (names end up
/// in the manifest, the `LOG` and tools' output).
pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 255 || name.chars().any(char::is_control) {
        return Err(Error::InvalidArgument(format!(
            "column family name {name:?} is not valid: it must be 1 to 255 bytes with no \
             control characters"
        )));
    }
    Ok(())
}

impl super::DbInner {
    /// Creates family `name`: recorded in the manifest, then added to the live set, under
    /// the writer lock so that no write group sees half of it.
    pub(super) fn create_family(
        &self,
        name: &str,
        cf_options: crate::options::CfOptions,
    ) -> Result<ColumnFamily> {
        self.create_family_with_files(name, cf_options, Vec::new(), 0, || {})
    }

    /// [`Self::create_family`] with `files` at their levels in the same manifest edit (an
    /// import, `export.rs`), raising the last sequence number to `last_sequence` if it is
    /// below; `logged` runs once the edit is in the manifest.
    pub(super) fn create_family_with_files(
        &self,
        name: &str,
        cf_options: crate::options::CfOptions,
        files: Vec<(usize, crate::version::FileMeta)>,
        last_sequence: u64,
        logged: impl FnOnce(),
    ) -> Result<ColumnFamily> {
        check_name(name)?;
        let options = self.options.for_family(&cf_options);
        check_options(name, &options)?;
        let mut writer = self.commit.writer.lock();
        let families = self.families();
        if families.values().any(|cf| cf.name() == name) {
            return Err(Error::InvalidArgument(format!(
                "column family '{name}' already exists"
            )));
        }
        // With several families every WAL but the newest is synced (`write::switch_syncs` says
        // why): the WALs one family left unsynced are synced before a second exists.
        writer.sync_wal()?;
        writer.sync_at_switch = true;
        // Its records can only be in the WAL being written now or later ones.
        let wal = *self
            .wal
            .wals
            .lock()
            .last()
            .expect("the current WAL is listed");
        let (id, version) = {
            let mut versions = self.versions.lock();
            let id = versions.max_column_family() + 1;
            let edit = crate::version::VersionEdit {
                column_family: id,
                add_column_family: Some(name.to_string()),
                family_ttl: options.ttl.map(crate::compaction_filter::ttl::whole_secs),
                prefix_extractor: Some(crate::prefix::name_of(&options.prefix_extractor).into()),
                log_number: Some(wal),
                new_files: files,
                last_sequence: (last_sequence > writer.last_sequence()).then_some(last_sequence),
                ..Default::default()
            };
            let version = versions.add_family(edit, options.key_order())?;
            logged();
            (id, version)
        };
        self.raise_last_sequence(&mut writer, last_sequence);
        let handle = ColumnFamily::new(id, name);
        let active = Arc::new(
            MemTable::with_order(wal, options.write_buffer_size, version.order.clone())
                .with_bloom(options.memtable_bloom_bytes())
                .with_point_index(options.memtable_point_index_bytes()),
        );
        let cf = ColumnFamilyData::new(handle.clone(), options, active, Vec::new(), version);
        let mut next = Families::clone(&families);
        next.insert(id, Arc::new(cf));
        self.note_families(&next);
        *self.families.write() = Arc::new(next);
        self.info_log
            .info(format_args!("created column family '{name}' (id {id})"));
        Ok(handle)
    }

    /// Drops the family of `handle`: recorded in the manifest, then removed from the live
    /// set; its tables join the obsolete ones (deleted once no reader holds them) and its
    /// memtables stop holding WALs.
    pub(super) fn drop_family(&self, handle: &ColumnFamily) -> Result<()> {
        if handle.id() == crate::version::DEFAULT_FAMILY_ID {
            return Err(Error::InvalidArgument(
                "the default column family cannot be dropped".into(),
            ));
        }
        let last_version = {
            let _writer = self.commit.writer.lock();
            let families = self.families();
            let cf = lookup(&families, handle)?;
            let version = {
                let mut versions = self.versions.lock();
                let edit = crate::version::VersionEdit {
                    column_family: cf.id(),
                    drop_column_family: true,
                    ..Default::default()
                };
                let version = versions.log_and_apply(edit)?;
                // Under the versions lock: a flush or compaction of the family checks the
                // flag under it before installing.
                cf.handle.mark_dropped();
                version
            };
            let mut next = Families::clone(&families);
            next.remove(&cf.id());
            *self.families.write() = Arc::new(next);
            version
        };
        self.obsolete
            .tables
            .lock()
            .extend(last_version.live_files());
        self.purge_obsolete_files();
        self.delete_obsolete_wals()?;
        self.info_log.info(format_args!(
            "dropped column family '{}' (id {})",
            handle.name(),
            handle.id()
        ));
        self.wake_background();
        Ok(())
    }
}

/// The stall decision over every family, the worst of theirs; with `full`, also collects the
/// families whose active memtable is full (this group switches them); and hands each
/// family's decision to `note` (which reports it to event listeners, if any). One look at each
/// family's super version: this runs for every write group.
pub(crate) fn survey_families(
    families: &Families,
    mut full: Option<&mut Vec<Arc<ColumnFamilyData>>>,
    note: &mut dyn FnMut(&ColumnFamilyData, &Stall),
) -> Stall {
    let mut worst = Stall::default();
    for cf in families.values() {
        let sv = cf.sv.read();
        let (write_buffer_size, limits) = {
            let current = cf.current.read();
            (current.write_buffer_size, StallLimits::new(&current))
        };
        let memtable_full = sv.active.is_full(write_buffer_size);
        if memtable_full {
            if let Some(full) = full.as_deref_mut() {
                full.push(Arc::clone(cf));
            }
        }
        let state = TreeState {
            l0_files: sv.version.levels[0].len(),
            pending_compaction_bytes: cf.pending_compaction_bytes.load(Ordering::Relaxed),
            immutable_memtables: sv.immutables.len(),
            memtable_full,
        };
        let decision = decide(&state, &limits);
        note(cf, &decision);
        worst = worst.combine(decision);
    }
    worst
}
