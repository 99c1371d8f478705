//! Opening a database: checking the directory and its identity, taking the lock, recovering
//! the manifest, removing obsolete files, replaying the WALs into memtables, starting a new
//! WAL and the background threads. A read-only open does the reading half of that and writes
//! nothing.
//!
//! The `IDENTITY` file (whether a directory holds a database, and in which format) is
//! `open/identity.rs`'s; what an open refuses before it changes anything (a lost manifest,
//! another comparator or prefix extractor, too few levels, direct IO the file system lacks)
//! is `open/checks.rs`'s.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::background::{self, BgState};
use super::families::{self, ColumnFamilyData, Families};
use super::info_log::InfoLog;
use super::lock_order::{Rank, Ranked};
use super::obsolete::{remove_obsolete_files, LiveFiles};
use super::recovery;
use super::stats::Counters;
use super::table_cache::TableCache;
use super::write::group::{WriteQueue, WriterState};
use super::{Background, BlobsAtWrite, CommitPath, Db, DbInner, ObsoleteFiles, WalSet};
use crate::column_family::ColumnFamily;
use crate::comparator::{Comparator, KeyOrder};
use crate::error::{Error, Result};
use crate::filename::{self, parse_file_name, FileKind};
use crate::fs::{CountedFile, FileLock, FileSystem, IoClass, IoStats, ReadOnlyFile};
use crate::log::LogWriter;
use crate::memtable::MemTable;
use crate::options::{CfOptions, Options};
use crate::prefix::{self, PrefixExtractor};
use crate::snapshot::SnapshotList;
use crate::version::{FamilyState, VersionSet, DEFAULT_FAMILY_ID, DEFAULT_FAMILY_NAME, NUM_LEVELS};

mod checks;
mod identity;

use checks::{
    check_comparator, check_direct_io, check_num_levels, check_prefix_extractors,
    record_prefix_extractors, refuse_lost_manifest,
};
pub(super) use identity::{create_identity, identify};

impl Db {
    /// Opens (or, with `create_if_missing`, creates) the database in directory `path`, and
    /// recovers every write in its WALs. See [`Db::recovery_report`] for what recovery found.
    /// A database with column families other than the default must be opened with
    /// [`Db::open_cf`], naming them all.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        Db::open_cf(path, options, std::iter::empty::<(&str, CfOptions)>())
    }

    /// Opens the database in `path` with its column families, each named with its options
    /// (the default family may be named too; otherwise it takes the family fields of
    /// `options`). Every family the database has must be named: the error lists the missing
    /// ones ([`Db::list_cfs`] tells them). A named family the database does not have is
    /// created with `create_missing_column_families`, and an error otherwise.
    pub fn open_cf<N: AsRef<str>>(
        path: impl AsRef<Path>,
        options: Options,
        families: impl IntoIterator<Item = (N, CfOptions)>,
    ) -> Result<Db> {
        options.validate()?;
        let named = named_families(&options, families)?;
        let path = path.as_ref().to_path_buf();
        let fs = options.fs.clone();
        let io = Arc::new(IoStats::default());

        let exists = identify(fs.as_ref(), &path)?;
        if exists && options.error_if_exists {
            return Err(Error::InvalidArgument(format!(
                "database {} already exists and error_if_exists is set",
                path.display()
            )));
        }
        if !exists && !options.create_if_missing {
            return Err(Error::NotFound(format!(
                "no database in {} (set create_if_missing to create one)",
                path.display()
            )));
        }
        if !exists {
            // A new directory's name is durable only once its parent is synced: without
            // this, a power cut could take the whole database after its first synced write.
            let created: Vec<PathBuf> = path
                .ancestors()
                .take_while(|p| !p.as_os_str().is_empty() && !fs.exists(p))
                .map(Path::to_path_buf)
                .collect();
            fs.create_dir_all(&path)?;
            for dir in &created {
                if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs.sync_dir(parent)?;
                }
            }
        }
        let lock = fs.lock(&path.join(filename::LOCK))?;
        if !exists {
            create_identity(fs.as_ref(), &path)?;
        }
        check_direct_io(fs.as_ref(), &path, &options)?;

        let names = fs.list_dir(&path)?;
        let max_number = names
            .iter()
            .filter_map(|n| match parse_file_name(n)? {
                FileKind::Wal(n)
                | FileKind::DroppedWalTail(n)
                | FileKind::Table(n)
                | FileKind::Blob(n)
                | FileKind::Manifest(n) => Some(n),
                FileKind::Temp => None,
            })
            .max()
            .unwrap_or(0);
        // The ttl each family is opened with; a family not named takes that of `options`.
        let opened_ttl = |name: &str| named.get(name).map_or(options.ttl, |cf| cf.ttl);
        let mut versions = if fs.exists(&path.join(filename::CURRENT)) {
            // Families not named keep the recorded order (the open fails on them below).
            let order_of = |f: &FamilyState| match named.get(&f.name) {
                Some(cf) => check_comparator(f, &cf.comparator),
                None if f.name == DEFAULT_FAMILY_NAME => check_comparator(f, &options.comparator),
                None => Ok(KeyOrder::builtin(&f.comparator).unwrap_or_default()),
            };
            // A family opened with a ttl it was not created with (or without the one it was),
            // or with another prefix extractor or comparator, is refused before recovery
            // writes anything.
            VersionSet::recover_checked(fs.clone(), &path, io.clone(), order_of, |found| {
                for f in found.values() {
                    if f.name == DEFAULT_FAMILY_NAME || named.contains_key(&f.name) {
                        families::check_ttl(&f.name, f.ttl, opened_ttl(&f.name))?;
                    }
                }
                // A family not named (other than the default) is refused below.
                check_prefix_extractors(&path, found, |name| match named.get(name) {
                    Some(cf) => Some(&cf.prefix_extractor),
                    None if name == DEFAULT_FAMILY_NAME => Some(&options.prefix_extractor),
                    None => None,
                })
            })?
        } else {
            // A new database, or one written before manifests existed (WALs only). Tables
            // without CURRENT mean the manifest is lost: a new one would make every table an
            // orphan to delete. (A manifest alone is a first open that crashed before CURRENT.)
            refuse_lost_manifest(&path, &names)?;
            let ttl =
                opened_ttl(DEFAULT_FAMILY_NAME).map(crate::compaction_filter::ttl::whole_secs);
            let order = options.key_order();
            VersionSet::create(fs.clone(), &path, max_number + 1, io.clone(), &order, ttl)?
        };
        versions.mark_file_number_used(max_number);
        let missing: Vec<&str> = versions
            .families()
            .values()
            .map(|f| f.name.as_str())
            .filter(|&n| n != DEFAULT_FAMILY_NAME && !named.contains_key(n))
            .collect();
        if !missing.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{} has column families that were not named to open: {} (open it with \
                 Db::open_cf naming all of them; Db::list_cfs lists them)",
                path.display(),
                missing.join(", ")
            )));
        }
        let to_create: Vec<String> = named
            .keys()
            .filter(|n| !versions.families().values().any(|f| &f.name == *n))
            .cloned()
            .collect();
        if !to_create.is_empty() && !options.create_missing_column_families {
            return Err(Error::InvalidArgument(format!(
                "{} has no column family {} (set create_missing_column_families to create \
                 them at open)",
                path.display(),
                to_create.join(", ")
            )));
        }
        let family_options = family_options(&options, &named, &versions);
        check_num_levels(&family_options, &path, &versions)?;
        record_prefix_extractors(&mut versions, &family_options)?;
        // Listed again: recovery wrote a new manifest and CURRENT.
        let live = LiveFiles {
            tables: versions.live_files(),
            blobs: versions.live_blob_files(),
            log_number: versions.min_log_number(),
            manifest_number: versions.manifest_number(),
        };
        let (wals, blobs_for_wals) = remove_obsolete_files(fs.as_ref(), &path, &live)?;
        let mut recovered = recovery::replay_wals(
            fs.as_ref(),
            &path,
            &wals,
            options.wal_recovery_mode,
            &replay_families(
                &versions,
                &family_options,
                may_keep_replayed(&options, false),
            ),
            &io,
            false,
        )?;
        let committed_prepared = std::mem::take(&mut recovered.committed_prepared);
        // Blob files no version names: kept, with the newest WAL that names them, if a
        // replayed record named them; orphans otherwise.
        let mut kept_for_wals = Vec::new();
        for n in blobs_for_wals {
            match recovered.blob_files_read.get(&n) {
                Some(&wal) => kept_for_wals.push((n, wal)),
                None => fs.remove_file(&filename::blob_path(&path, n))?,
            }
        }
        // The replayed WALs stay until their memtables are flushed, no longer the newest: make
        // what a crashed process left unsynced in them durable before a new WAL exists, or a
        // power cut could take it while keeping later synced writes (or tear an older WAL).
        for &number in &recovered.kept_wals {
            fs.sync_file(&filename::wal_path(&path, number))?;
        }

        let log_number = versions.new_file_number();
        let wal_file = fs.create_writable(&filename::wal_path(&path, log_number))?;
        fs.sync_dir(&path)?;
        let wal = LogWriter::new(Box::new(CountedFile::new(
            wal_file,
            io.clone(),
            IoClass::Wal,
        )))
        .holding(options.manual_wal_flush)
        .compressing(options.wal_compression);
        let info_log = InfoLog::open(
            fs.clone(),
            &path,
            options.max_log_file_size,
            options.keep_log_file_num,
        );
        let inner = assemble(Parts {
            path,
            options,
            family_options,
            fs,
            io,
            versions,
            recovered,
            wal,
            log_number,
            lock: Some(lock),
            info_log,
            read_only: false,
        });
        *inner.blobs_at_write.for_wals.lock() = kept_for_wals;
        *inner.prepared.lock() = inner.recover_prepared(&committed_prepared, false)?;
        for name in &to_create {
            inner.create_family(name, named[name].clone())?;
        }
        inner.persist_options()?;
        inner.info_log.info(format_args!(
            "opened {} ({} WALs replayed, last sequence {}); {:?}",
            inner.path.display(),
            wals.len(),
            inner
                .last_sequence
                .load(std::sync::atomic::Ordering::Relaxed),
            inner.options
        ));
        for cf in inner.families().values() {
            let active = cf.super_version().active.clone();
            if active.log_number() < log_number {
                inner.info_log.info(format_args!(
                    "family '{}' goes on in the memtable replayed from WAL {} ({} entries, \
                     avoid_flush_during_recovery)",
                    cf.name(),
                    active.log_number(),
                    active.num_entries()
                ));
            }
        }
        inner.restore_read_charges();
        *inner.bg.threads.lock() = background::spawn(&inner)?;
        inner.wake_background();
        Ok(Db { inner })
    }

    /// Opens the database in directory `path` for reading only, as RocksDB's
    /// `OpenForReadOnly`: it writes nothing (no manifest, no WAL, no `LOG`, no file deleted,
    /// no torn WAL tail cut), takes no lock (so it works beside a process that has the
    /// database open for writing), and runs no background work. It reads the tables the
    /// manifest names and replays the WALs into memory, as of the moment it opens; later
    /// writes of another handle are not seen. Every call that would write (`put`, `write`,
    /// `flush`, compactions, `sync_wal`, `resume`) fails with [`ErrorKind::Unavailable`]
    /// naming the database. A table that a live writer's compaction deletes afterwards makes
    /// reads of it fail with an IO error: reopen to see the current tree. Every column family
    /// is opened, with the family fields of `options`.
    ///
    /// [`ErrorKind::Unavailable`]: crate::ErrorKind::Unavailable
    pub fn open_read_only(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let inner = open_read_only_inner(path.as_ref(), options, true, InfoLog::disabled())?;
        Ok(Db { inner })
    }
}

/// The database in `path` opened read-only (see [`Db::open_read_only`]), its WALs replayed
/// into memtables if `replay` (a secondary instance replays them itself), with `info_log`.
pub(super) fn open_read_only_inner(
    path: &Path,
    options: Options,
    replay: bool,
    info_log: InfoLog,
) -> Result<Arc<DbInner>> {
    {
        options.validate()?;
        let path = path.to_path_buf();
        let fs = options.fs.clone();
        let io = Arc::new(IoStats::default());
        if !identify(fs.as_ref(), &path)? {
            return Err(Error::NotFound(format!(
                "no database in {}",
                path.display()
            )));
        }
        if !fs.exists(&path.join(filename::CURRENT)) {
            refuse_lost_manifest(&path, &fs.list_dir(&path)?)?;
            return Err(Error::NotFound(format!(
                "no database in {} (no {} file)",
                path.display(),
                filename::CURRENT
            )));
        }
        check_direct_io(fs.as_ref(), &path, &options)?;
        let order_of = read_only_order(&options);
        let versions = VersionSet::open_read_only(fs.clone(), &path, io.clone(), order_of)?;
        // Every family is opened with the fields of `options`: only the default family's
        // extractor is named, so only its is checked, and only if one is given (without one
        // every read is in total order, which any tables answer rightly).
        let default_only: BTreeMap<u32, FamilyState> = versions
            .families()
            .iter()
            .filter(|(&id, _)| id == DEFAULT_FAMILY_ID)
            .map(|(&id, f)| (id, f.clone()))
            .collect();
        check_prefix_extractors(&path, &default_only, |_| {
            options
                .prefix_extractor
                .is_some()
                .then_some(&options.prefix_extractor)
        })?;
        let mut family_options = family_options(&options, &BTreeMap::new(), &versions);
        // Every family is opened with the same options here, so each reads with the ttl the
        // manifest records for it (the ttl's length does not matter to reads).
        for (id, f) in versions.families() {
            if let Some(o) = family_options.get_mut(id) {
                o.ttl = f.ttl.map(std::time::Duration::from_secs);
                if o.ttl.is_some() {
                    o.merge_operator = None;
                }
            }
        }
        check_num_levels(&family_options, &path, &versions)?;
        let min_log = versions.min_log_number();
        let mut wals: Vec<u64> = fs
            .list_dir(&path)?
            .iter()
            .filter_map(|n| match parse_file_name(n)? {
                FileKind::Wal(n) if n >= min_log && replay => Some(n),
                _ => None,
            })
            .collect();
        wals.sort_unstable();
        let mut recovered = recovery::replay_wals(
            fs.as_ref(),
            &path,
            &wals,
            options.wal_recovery_mode,
            &replay_families(&versions, &family_options, false),
            &io,
            true,
        )?;
        let committed_prepared = std::mem::take(&mut recovered.committed_prepared);
        let log_number = wals.last().map_or(min_log, |n| n + 1);
        let wal = LogWriter::new(Box::new(ReadOnlyFile::new(filename::wal_path(
            &path, log_number,
        ))));
        let inner = assemble(Parts {
            path,
            options,
            family_options,
            fs,
            io,
            versions,
            recovered,
            wal,
            log_number,
            lock: None,
            info_log,
            read_only: true,
        });
        *inner.prepared.lock() = inner.recover_prepared(&committed_prepared, true)?;
        Ok(inner)
    }
}

/// The key order of each family of a read-only open with `options`: every family takes
/// the family fields of `options`, so its comparator too; a family created with one of the
/// built-in orders is read in that order.
pub(super) fn read_only_order(options: &Options) -> impl Fn(&FamilyState) -> Result<KeyOrder> + '_ {
    |f: &FamilyState| match KeyOrder::builtin(&f.comparator) {
        Some(order) if f.name != DEFAULT_FAMILY_NAME => Ok(order),
        _ => check_comparator(f, &options.comparator),
    }
}

/// The column families named with their options, by name, each name and its options
/// checked; an error names a family named twice.
pub(super) fn named_families<N: AsRef<str>>(
    options: &Options,
    families: impl IntoIterator<Item = (N, CfOptions)>,
) -> Result<BTreeMap<String, CfOptions>> {
    let mut named: BTreeMap<String, CfOptions> = BTreeMap::new();
    for (name, cf_options) in families {
        let name = name.as_ref();
        families::check_name(name)?;
        families::check_options(name, &options.for_family(&cf_options))?;
        if named.insert(name.to_string(), cf_options).is_some() {
            return Err(Error::InvalidArgument(format!(
                "column family '{name}' is named twice"
            )));
        }
    }
    Ok(named)
}

/// What an open has recovered and created, to be put together into a database.
struct Parts {
    path: PathBuf,
    options: Options,
    /// The options of each family in the manifest, by id.
    family_options: BTreeMap<u32, Options>,
    fs: Arc<dyn FileSystem>,
    io: Arc<IoStats>,
    versions: VersionSet,
    recovered: recovery::Recovered,
    /// The WAL of the new active memtable, numbered `log_number`.
    wal: LogWriter,
    log_number: u64,
    lock: Option<Box<dyn FileLock>>,
    info_log: InfoLog,
    read_only: bool,
}

/// The options each family of the manifest gets: those named for it, else (the default
/// family, or any family of a read-only open) the family fields of `options`.
fn family_options(
    options: &Options,
    named: &BTreeMap<String, CfOptions>,
    versions: &VersionSet,
) -> BTreeMap<u32, Options> {
    versions
        .families()
        .iter()
        .map(|(&id, f)| {
            let own = match named.get(&f.name) {
                Some(cf) => options.for_family(cf),
                None => options.clone(),
            };
            (id, own)
        })
        .collect()
}

/// What WAL replay needs of the manifest's families. With `with_blooms` (an open that may
/// keep a replayed memtable as the active one) the memtables get their family's bloom
/// filter and point index, as the write path's do; otherwise none, since they are flushed
/// at once.
fn replay_families(
    versions: &VersionSet,
    family_options: &BTreeMap<u32, Options>,
    with_blooms: bool,
) -> recovery::ReplayFamilies {
    recovery::ReplayFamilies {
        families: versions
            .families()
            .iter()
            .map(|(&id, f)| {
                let replay = recovery::FamilyReplay {
                    log_number: f.log_number,
                    write_buffer_size: family_options[&id].write_buffer_size,
                    order: f.current.order.clone(),
                    bloom_bytes: match with_blooms {
                        true => family_options[&id].memtable_bloom_bytes(),
                        false => 0,
                    },
                    point_index_bytes: match with_blooms {
                        true => family_options[&id].memtable_point_index_bytes(),
                        false => 0,
                    },
                };
                (id, replay)
            })
            .collect(),
        max_column_family: versions.max_column_family(),
    }
}

/// The database made of `parts`: per family, the recovered memtables as immutables (newest
/// first) under a new, empty active memtable, and the manifest's version.
fn assemble(parts: Parts) -> Arc<DbInner> {
    let Parts {
        path,
        options,
        family_options,
        fs,
        io,
        versions,
        mut recovered,
        wal,
        log_number,
        lock,
        info_log,
        read_only,
    } = parts;
    let last_sequence = recovered.last_sequence.max(versions.last_sequence());
    let mut families = Families::new();
    for (&id, f) in versions.families() {
        let cf_options = family_options[&id].clone();
        let mut immutables = recovered.mems.remove(&id).unwrap_or_default();
        immutables.reverse();
        let active = match keeps_replayed_memtable(&options, read_only, &cf_options, &immutables) {
            true => immutables.remove(0),
            false => Arc::new(
                MemTable::with_order(
                    log_number,
                    cf_options.write_buffer_size,
                    f.current.order.clone(),
                )
                .with_bloom(cf_options.memtable_bloom_bytes())
                .with_point_index(cf_options.memtable_point_index_bytes()),
            ),
        };
        let cf = ColumnFamilyData::new(
            ColumnFamily::new(id, &f.name),
            cf_options,
            active,
            immutables,
            f.current.clone(),
        );
        families.insert(id, Arc::new(cf));
    }
    // OPTIONS files are numbered on from the newest one there (a directory that cannot be
    // listed here will fail the write of the first one).
    let next_options_file = crate::options::file::numbers(fs.as_ref(), &path)
        .ok()
        .and_then(|n| n.last().copied())
        .map_or(1, |n| n + 1);
    let wal_sizes = recovered
        .kept_wals
        .iter()
        .map(|&n| (n, fs.file_size(&filename::wal_path(&path, n)).unwrap_or(0)))
        .collect();
    let mut wals: BTreeSet<u64> = recovered.kept_wals.iter().copied().collect();
    wals.insert(log_number);
    let tables = TableCache::new(path.clone(), fs.clone(), &options);
    let blobs = Arc::new(super::blob::source::BlobSource::new(
        path.clone(),
        fs.clone(),
        options.max_open_files,
        tables.block_cache(),
        options.read_mode(),
        options.uncache_aggressiveness > 0,
    ));
    let wal_sync = Arc::new(super::write::wal_sync::WalSyncQueue::default());
    let sync_at_switch = super::write::switch::switch_syncs(&options, families.len());
    let closed_wals = Arc::new(super::write::wal_sync::ClosedWals::default());
    let blobs_at_write = Arc::new(Ranked::mutex(
        Rank::BlobsAtWrite,
        super::blob::at_write::ActiveBlobFiles::new(wal_sync.clone()),
    ));
    let writer = WriterState::new(
        wal,
        last_sequence,
        wal_sync.clone(),
        sync_at_switch,
        closed_wals.clone(),
        blobs_at_write.clone(),
    );
    Arc::new(DbInner {
        path,
        fs,
        io,
        last_sequence: AtomicU64::new(last_sequence),
        default_cf: families[&DEFAULT_FAMILY_ID].clone(),
        blobs_at_write: BlobsAtWrite {
            separating: AtomicBool::new(super::blob::at_write::any_separates_at_write(&families)),
            active: blobs_at_write,
            for_wals: Ranked::mutex(Rank::BlobsForWals, Vec::new()),
        },
        families: Ranked::rw(Rank::Families, Arc::new(families)),
        wal: WalSet {
            wals: Ranked::mutex(Rank::Wals, wals),
            closed: closed_wals,
            sync: wal_sync,
            unpersisted: AtomicBool::new(false),
            sizes: Mutex::new(wal_sizes),
        },
        commit: CommitPath {
            queue: Ranked::mutex(Rank::Queue, WriteQueue::default()),
            writer: Ranked::mutex(Rank::Writer, writer),
            inserting: Ranked::new(Rank::Inserting, std::sync::Mutex::new(())),
        },
        versions: Ranked::mutex(Rank::Versions, versions),
        tables,
        blobs,
        bg: Background {
            state: Ranked::mutex(Rank::Background, BgState::default()),
            cv: Condvar::new(),
            failed: AtomicBool::new(false),
            threads: Ranked::mutex(Rank::BackgroundThreads, Vec::new()),
            compaction_reserved: AtomicU64::new(0),
            shutting_down: AtomicBool::new(false),
        },
        info_log,
        events: super::events::Events::new(options.listeners.clone()),
        obsolete: ObsoleteFiles {
            tables: Ranked::mutex(Rank::ObsoleteTables, Vec::new()),
            blobs: Ranked::mutex(Rank::ObsoleteBlobs, Vec::new()),
        },
        snapshots: Arc::new(SnapshotList::default()),
        closed: AtomicBool::new(false),
        counters: Counters::default(),
        histograms: Default::default(),
        recovery: recovered.report,
        lock: Ranked::mutex(Rank::DirLock, lock),
        read_only,
        online: super::online_options::OnlineOptions::new(&options, next_options_file),
        write_buffers: memory_budget(&options).map(|b| {
            let client = b.register();
            (b, client)
        }),
        options,
        prepared: Ranked::mutex(Rank::Prepared, Vec::new()),
        wal_archive: Default::default(),
        secondary: std::sync::OnceLock::new(),
    })
}

/// Whether a family goes on writing into the one memtable its WALs were replayed into
/// (`replayed`, newest first) instead of flushing it (`avoid_flush_during_recovery`).
///
/// The memtable keeps its log number, that of the oldest WAL with its writes, while the
/// writes after open go to the new WAL: a memtable's log number is the oldest WAL it needs,
/// so every WAL from it on stays until the memtable is flushed, and a crash before then
/// replays them all. With more than one replayed memtable, or a full one, the family flushes
/// as without the option (the writes after open need a memtable of their own, and memtables
/// waiting for a flush that nothing triggers would hold writes back); with atomic flush too,
/// whose cut between flushed and unflushed writes is the oldest active memtable's WAL.
fn keeps_replayed_memtable(
    options: &Options,
    read_only: bool,
    family_options: &Options,
    replayed: &[Arc<MemTable>],
) -> bool {
    may_keep_replayed(options, read_only)
        && matches!(replayed, [only] if !only.is_full(family_options.write_buffer_size))
}

/// Whether an open with `options` may keep a replayed memtable at all (see
/// [`keeps_replayed_memtable`]).
fn may_keep_replayed(options: &Options, read_only: bool) -> bool {
    options.avoid_flush_during_recovery && !options.atomic_flush && !read_only
}

/// The memtable budget of a database opened with `options`: the shared one, or one of
/// `db_write_buffer_size` for this database alone.
fn memory_budget(
    options: &Options,
) -> Option<Arc<crate::write_buffer_manager::WriteBufferManager>> {
    options.write_buffer_manager.clone().or_else(|| {
        (options.db_write_buffer_size > 0).then(|| {
            Arc::new(crate::write_buffer_manager::WriteBufferManager::new(
                options.db_write_buffer_size,
                false,
            ))
        })
    })
}
