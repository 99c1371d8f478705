//! Opening a database: checking the directory and its identity, taking the lock, recovering
//! the manifest, removing obsolete files, replaying the WALs into memtables, starting a new
//! WAL and the background threads.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, RwLock};

use super::background::{self, BgState};
use super::info_log::InfoLog;
use super::obsolete::{remove_obsolete_files, LiveFiles};
use super::recovery;
use super::stats::{Counters, LevelCompactionStats};
use super::table_cache::TableCache;
use super::write::{WriteQueue, WriterState};
use super::{Db, DbInner, SuperVersion};
use crate::error::{Error, Result};
use crate::filename::{self, parse_file_name, FileKind, FORMAT_VERSION};
use crate::fs::{CountedFile, FileSystem, IoClass, IoStats};
use crate::log::LogWriter;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::snapshot::SnapshotList;
use crate::version::{VersionSet, NUM_LEVELS};

impl Db {
    /// Opens (or, with `create_if_missing`, creates) the database in directory `path`, and
    /// recovers every write in its WALs. See [`Db::recovery_report`] for what recovery found.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        options.validate()?;
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
            fs.create_dir_all(&path)?;
        }
        let lock = fs.lock(&path.join(filename::LOCK))?;
        if !exists {
            create_identity(fs.as_ref(), &path)?;
        }

        let names = fs.list_dir(&path)?;
        let max_number = names
            .iter()
            .filter_map(|n| match parse_file_name(n)? {
                FileKind::Wal(n)
                | FileKind::DroppedWalTail(n)
                | FileKind::Table(n)
                | FileKind::Manifest(n) => Some(n),
                FileKind::Temp => None,
            })
            .max()
            .unwrap_or(0);
        let mut versions = if fs.exists(&path.join(filename::CURRENT)) {
            VersionSet::recover(fs.clone(), &path, io.clone())?
        } else {
            // A new database, or one written before manifests existed (WALs only).
            VersionSet::create(fs.clone(), &path, max_number + 1, io.clone())?
        };
        versions.mark_file_number_used(max_number);
        let version = versions.current();
        if let Some(level) =
            (options.num_levels..NUM_LEVELS).find(|&l| !version.levels[l].is_empty())
        {
            return Err(Error::InvalidArgument(format!(
                "num_levels is {} but {} has files in level {level}; open it with num_levels \
                 of at least {}",
                options.num_levels,
                path.display(),
                level + 1
            )));
        }
        // Listed again: recovery wrote a new manifest and CURRENT.
        let live = LiveFiles {
            tables: version.live_files(),
            log_number: versions.log_number,
            manifest_number: versions.manifest_number(),
        };
        let wals = remove_obsolete_files(fs.as_ref(), &path, &live)?;
        let recovered = recovery::replay_wals(
            fs.as_ref(),
            &path,
            &wals,
            options.wal_recovery_mode,
            options.write_buffer_size,
            &io,
        )?;
        let last_sequence = recovered.last_sequence.max(versions.last_sequence);

        let log_number = versions.new_file_number();
        let wal_file = fs.create_writable(&filename::wal_path(&path, log_number))?;
        fs.sync_dir(&path)?;
        let wal = LogWriter::new(Box::new(CountedFile::new(
            wal_file,
            io.clone(),
            IoClass::Wal,
        )));
        let mut immutables = recovered.mems;
        immutables.reverse();
        let pending_flush = !immutables.is_empty();
        let sv = SuperVersion {
            active: Arc::new(MemTable::new(log_number, options.write_buffer_size)),
            immutables,
            version,
        };
        let info_log = InfoLog::open(fs.as_ref(), &path);
        let tables = TableCache::new(
            path.clone(),
            fs.clone(),
            options.table_options(false),
            options.block_cache_size,
            options.cache_index_and_filter_blocks,
            options.max_open_files,
        );
        let inner = Arc::new(DbInner {
            path,
            fs,
            io,
            last_sequence: AtomicU64::new(last_sequence),
            sv: RwLock::new(Arc::new(sv)),
            queue: Mutex::new(WriteQueue::default()),
            writer: Mutex::new(WriterState::new(wal, last_sequence)),
            versions: Mutex::new(versions),
            tables,
            bg: Mutex::new(BgState::default()),
            bg_cv: Condvar::new(),
            bg_failed: AtomicBool::new(false),
            bg_threads: Mutex::new(Vec::new()),
            pending_compaction_bytes: AtomicU64::new(0),
            compaction_reserved: AtomicU64::new(0),
            shutting_down: AtomicBool::new(false),
            info_log,
            compaction_stats: Mutex::new(vec![LevelCompactionStats::default(); NUM_LEVELS]),
            obsolete_tables: Mutex::new(Vec::new()),
            unpersisted: AtomicBool::new(false),
            snapshots: Arc::new(SnapshotList::default()),
            closed: AtomicBool::new(false),
            counters: Counters::default(),
            recovery: recovered.report,
            lock: Mutex::new(Some(lock)),
            options,
        });
        inner.info_log.log(format_args!(
            "opened {} ({} WALs replayed, last sequence {last_sequence}); {:?}",
            inner.path.display(),
            wals.len(),
            inner.options
        ));
        inner.note_new_version(&inner.sv.read().version.clone());
        *inner.bg_threads.lock() = background::spawn(&inner)?;
        if pending_flush {
            inner.wake_background();
        }
        Ok(Db { inner })
    }
}

/// Whether `path` holds a database: `Ok(false)` if missing or empty, an error if it holds
/// something else or a newer format.
fn identify(fs: &dyn FileSystem, path: &Path) -> Result<bool> {
    if !fs.exists(path) {
        return Ok(false);
    }
    let id_path = path.join(filename::IDENTITY);
    if !fs.exists(&id_path) {
        let names = fs.list_dir(path)?;
        if names.iter().all(|n| n == filename::LOCK) {
            return Ok(false);
        }
        return Err(Error::InvalidArgument(format!(
            "{} is not empty and is not a Strata database (no {} file)",
            path.display(),
            filename::IDENTITY
        )));
    }
    let content = crate::fs::read_small_file(fs, &id_path, 4096)?;
    let text = String::from_utf8_lossy(&content);
    match filename::parse_identity(&text) {
        Some(v) if v <= FORMAT_VERSION => Ok(true),
        Some(v) => Err(Error::InvalidArgument(format!(
            "{} was written in format version {v}; this build reads up to {FORMAT_VERSION}",
            path.display()
        ))),
        None => Err(Error::corruption(&id_path, 0, "not a Strata identity file")),
    }
}

fn create_identity(fs: &dyn FileSystem, path: &Path) -> Result<()> {
    let id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
        ^ u64::from(std::process::id()).rotate_left(32);
    crate::fs::write_file_atomically(
        fs,
        path,
        filename::IDENTITY,
        filename::identity_line(id).as_bytes(),
    )
}
