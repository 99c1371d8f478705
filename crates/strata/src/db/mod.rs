//! The database: the [`Db`] handle and the state it shares with its background threads
//! (`DbInner`). This file is the map of `db/`: the modules, the concurrency rules and the lock
//! order; the work is in the modules.
//!
//! Modules:
//!
//! - `open` (open and its order of steps), `recovery` (WAL replay), `repair` (a new manifest
//!   from the files left; `repair/families.rs`, `repair/wal.rs`), `checkpoint` (openable
//!   copies of a running database), `secondary` (a read-only instance following a primary's
//!   manifest and WALs).
//! - `online_options`: options changed on the open database, and the OPTIONS file.
//! - `families`: the column families and what each holds; the stall survey over them.
//! - `write/`: `Db`'s writing methods, group commit (`group`), the memtable switch
//!   (`switch`), the write-stall decision (`stall`), background WAL syncs (`wal_sync`),
//!   conditional writes (`conflict`), two-phase commit (`two_phase`).
//! - `read/`: `Db`'s reading methods, point lookups (`get`, `lookup` for merges, `multi_get`),
//!   the iterator's sources (`sources`), the user iterator (`iter`) and prefix seeks
//!   (`prefix`).
//! - `blob/`: blob files read (`source`), written by jobs (`output`) and at put
//!   (`at_write`).
//! - `atomic_flush` (every family's memtables flushed together, `Options::atomic_flush`),
//!   `flush`, `compact` (with `compact/merge_job.rs` and `compact/manual.rs`) and
//!   `background` (the jobs and their threads); `table_writer` (tables written by flush and
//!   compaction alike), `warm_cache` (compaction outputs warming the block cache),
//!   `obsolete` (deleting files no longer needed), `ingest` (tables written outside the
//!   database).
//! - The operations surface: `metadata` (file metadata, approximate sizes), `file_ops`
//!   (`delete_files_in_range`, `compact_files`), `updates` (`updates_since`, the WAL
//!   archive), `export` (moving a family between databases).
//! - `table_cache` (open tables), `ttl` (TTL families in the write and read paths), `stats`
//!   (counters and reports), `properties` (the figures gathered for `stats` and
//!   `property`), `info_log` (the `LOG` file), `events` (calling the
//!   application's event listeners), `lock_order` (the ranks below, checked in tests).
//!
//! Concurrency:
//!
//! - Writers queue their batches; the first in line leads a group commit (`write/group.rs`):
//!   one WAL append and at most one fdatasync for the group, then memtable inserts, then the
//!   new last sequence is published. Only the leader touches the WAL and inserts into the
//!   memtable (it holds `writer`).
//! - Readers load the current [`SuperVersion`] of their column family (memtables and table
//!   files, one `Arc` swapped under a short lock), then, without a snapshot, the published
//!   sequence, and never wait for writers or flushes (see `DbInner::get_stored` for why in
//!   that order).
//! - One background thread flushes immutable memtables to L0 tables (`flush`), the oldest
//!   WAL's first across families; the manifest records each table before the flushed memtable
//!   leaves the super version, and a WAL is deleted once no family needs it. Other background
//!   threads compact (`background`, `compact`), the family with the highest score first.
//! - Snapshots pin a sequence number; iterators hold their memtables alive by `Arc`.
//!
//! Lock order. A thread holding one of these locks takes only locks further down the list
//! (`lock_order::Rank`; in a build with debug assertions, the tests, taking one out of order
//! panics):
//!
//! 1. `commit.writer`: the write leader's state. Families are created and dropped, memtables
//!    switched, files ingested and checkpoints begun under it.
//! 2. `commit.inserting`: a write group's memtable inserts, taken before `writer` is let go.
//! 3. `commit.queue`: the writers' queue (the lead is passed on under `inserting`).
//! 4. `blobs_at_write.active`: the blob files writes put values in.
//! 5. `versions`: the version set and the manifest.
//! 6. `wal.wals`: the WALs on disk.
//! 7. `blobs_at_write.for_wals`: blob files kept for the WALs that name them.
//! 8. `obsolete.tables`, then `obsolete.blobs`: files waiting to be deleted.
//! 9. `bg.state`: background work (its condition variable `bg.cv` waits on it).
//! 10. `bg.threads`, `prepared`, `lock`: the threads' handles, prepared transactions found
//!     at open, the directory's lock file.
//! 11. `families`: the set of live families, read under any of the others (the background
//!     threads read it holding `bg.state`); nothing is taken while it is held.
//!
//! The locks of one family (`ColumnFamilyData::sv`, its compaction statistics), of the
//! caches and of the WAL sync queue are not ranked: each guards one short step.

mod atomic_flush;
mod background;
mod blob;
mod checkpoint;
mod compact;
mod events;
mod export;
mod families;
mod file_ops;
mod flush;
mod info_log;
mod ingest;
mod lock_order;
mod metadata;
mod obsolete;
mod online_options;
mod open;
mod properties;
mod read;
mod read_charges;
mod recovery;
mod repair;
mod secondary;
mod stats;
mod table_cache;
mod table_writer;
mod ttl;
mod updates;
mod warm_cache;
mod write;
#[cfg(feature = "fuzzing")]
pub(crate) use read_charges::{decode as decode_read_charges, encode as encode_read_charges};
#[cfg(feature = "fuzzing")]
pub(crate) use write::two_phase::{decode as decode_prepared_file, encode as encode_prepared_file};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::column_family::ColumnFamily;
use crate::error::{Error, Result};
use crate::fs::{FileLock, FileSystem, IoStats};
use crate::listener::FlushReason;
use crate::memtable::MemTable;
use crate::options::{CfOptions, Options};
use crate::range_del::FragmentedList;
use crate::version::{Version, VersionSet};

pub use export::ExportImportFilesMetaData;
pub use metadata::{KeyRange, LiveFileMetadata, SizeApproximationOptions};
pub use properties::PROPERTY_NAMES;
pub use read::iter::{DbIterator, Range};
pub use recovery::RecoveryReport;
pub use repair::{repair, repair_cf, RepairReport, LOST_DIR};
pub use stats::{DbStats, LevelCompactionStats, LevelShape, TreeShape};
pub use updates::WAL_ARCHIVE_DIR;
pub use write::conflict::{WriteHistory, WriteSource};

use crate::histogram::{Histogram, HistogramData, Histograms};
use crate::snapshot::{Snapshot, SnapshotList};
use background::BgState;
use families::{ColumnFamilyData, Families};
use info_log::InfoLog;
use lock_order::Ranked;
use properties::property_of;
use stats::Counters;
use table_cache::TableCache;
use write::group::{WriteQueue, WriterState};

/// Everything a read consults, swapped as one `Arc`: the active memtable, the immutable ones
/// (newest first) and the version of table files. A flush installs the new table and drops
/// the flushed memtable in one swap, so no read sees the data twice or not at all.
pub(crate) struct SuperVersion {
    pub active: Arc<MemTable>,
    /// Immutable memtables, newest first.
    pub immutables: Vec<Arc<MemTable>>,
    pub version: Arc<Version>,
    /// The range deletions of the version's tables below L0 (the lists that hold any),
    /// gathered by the first iterator that needs them and shared by the super versions of
    /// one version: an iterator then opens no table it does not read, where gathering them
    /// each time would look up every table of the tree in the table cache.
    deeper_tombstones: Arc<OnceLock<Vec<Arc<FragmentedList>>>>,
}

impl SuperVersion {
    /// The memtables and `version`.
    pub fn new(
        active: Arc<MemTable>,
        immutables: Vec<Arc<MemTable>>,
        version: Arc<Version>,
    ) -> SuperVersion {
        SuperVersion {
            active,
            immutables,
            version,
            deeper_tombstones: Arc::default(),
        }
    }

    /// Other memtables over this super version's version.
    pub fn with_memtables(
        &self,
        active: Arc<MemTable>,
        immutables: Vec<Arc<MemTable>>,
    ) -> SuperVersion {
        SuperVersion {
            active,
            immutables,
            version: self.version.clone(),
            deeper_tombstones: self.deeper_tombstones.clone(),
        }
    }
}

/// The WALs: the set on disk, the ones closed unsynced, the background syncs.
struct WalSet {
    /// WALs on disk that may still be needed, ascending; the last is the one being written.
    wals: Ranked<Mutex<BTreeSet<u64>>>,
    /// The WALs closed without a sync (shared with the writer state): a WAL's handle is let go
    /// before the WAL is deleted.
    closed: Arc<write::wal_sync::ClosedWals>,
    /// The WAL syncs handed to the `strata-wal-sync` thread.
    sync: Arc<write::wal_sync::WalSyncQueue>,
    /// True when a write skipped the WAL since the last full flush: close must flush.
    unpersisted: AtomicBool,
    /// The bytes of each WAL in `wals` but the current one (`write/wal_limit.rs`). Not
    /// ranked: taken alone, or last, for one step.
    sizes: Mutex<std::collections::BTreeMap<u64, u64>>,
}

/// Group commit (`write/group.rs`): the writers' queue, the leader's state, the inserts.
struct CommitPath {
    queue: Ranked<Mutex<WriteQueue>>,
    writer: Ranked<Mutex<WriterState>>,
    /// Held by a write group while it inserts into the memtables, taken before it lets go of
    /// `writer` (see `write/group.rs`): whoever holds `writer` and takes this finds no insert
    /// in flight, and none can start. The standard library's lock, which spins and then
    /// sleeps, where parking_lot's yields its core in between (`write/group.rs` says why that
    /// matters).
    inserting: Ranked<std::sync::Mutex<()>>,
}

/// The blob files values are put in as they are written (`blob/at_write.rs`).
struct BlobsAtWrite {
    /// Whether any family has had `blob_separation_at_write`: writes look for values to put
    /// in blob files only then.
    separating: AtomicBool,
    /// The files being written, also the writer state's.
    active: Arc<Ranked<Mutex<blob::at_write::ActiveBlobFiles>>>,
    /// Blob files no version names that open kept for the WALs that name them (values
    /// written at put), each with the newest such WAL: deleted with it.
    for_wals: Ranked<Mutex<Vec<(u64, u64)>>>,
}

/// Files no longer in the tree, deleted once no version in use names them (`obsolete.rs`).
struct ObsoleteFiles {
    /// Tables compacted away.
    tables: Ranked<Mutex<Vec<u64>>>,
    /// Blob files no table refers to any more.
    blobs: Ranked<Mutex<Vec<u64>>>,
}

/// Background work (`background.rs`): its state and threads.
struct Background {
    state: Ranked<Mutex<BgState>>,
    /// Signalled on every change of `state`, and when a job ends.
    cv: Condvar,
    /// Set when a background job failed: writes check `state`'s error then.
    failed: AtomicBool,
    threads: Ranked<Mutex<Vec<JoinHandle<()>>>>,
    /// Set by close: running compactions stop and discard their outputs.
    shutting_down: AtomicBool,
    /// Disk bytes the running compactions may still write (see `compact`).
    compaction_reserved: AtomicU64,
}

pub(crate) struct DbInner {
    path: PathBuf,
    /// The options the database was opened with (the default family's are among them; each
    /// family's jobs read `ColumnFamilyData::options`).
    options: Options,
    fs: Arc<dyn FileSystem>,
    io: Arc<IoStats>,
    /// The last sequence number whose writes are all in a memtable (what readers see).
    last_sequence: AtomicU64,
    /// The default family, also in `families`: the plain (not `_cf`) methods use it.
    default_cf: Arc<ColumnFamilyData>,
    /// The live families, replaced as a whole when one is created or dropped (under the
    /// writer lock, so a write group sees one set throughout).
    families: Ranked<RwLock<Arc<Families>>>,
    wal: WalSet,
    commit: CommitPath,
    blobs_at_write: BlobsAtWrite,
    versions: Ranked<Mutex<VersionSet>>,
    tables: TableCache,
    /// Open blob files and their cached values.
    blobs: Arc<blob::source::BlobSource>,
    bg: Background,
    info_log: InfoLog,
    /// The application's event listeners.
    events: events::Events,
    obsolete: ObsoleteFiles,
    snapshots: Arc<SnapshotList>,
    closed: AtomicBool,
    counters: Counters,
    /// Latency histograms (`crate::histogram`), shared with iterators that time their seeks.
    histograms: Arc<Histograms>,
    recovery: RecoveryReport,
    lock: Ranked<Mutex<Option<Box<dyn FileLock>>>>,
    /// Opened with `Db::open_read_only`: every call that writes is refused.
    read_only: bool,
    /// The database-wide options changed since open and the OPTIONS files
    /// (`online_options.rs`).
    online: online_options::OnlineOptions,
    /// The shared memtable budget and this database's client number in it
    /// (`write/memory_budget.rs`).
    write_buffers: Option<(Arc<crate::write_buffer_manager::WriteBufferManager>, u64)>,
    /// Prepared transactions found at open, not yet handed to a `TransactionDb`.
    prepared: Ranked<Mutex<Vec<write::two_phase::PreparedRecord>>>,
    /// The WALs kept for `updates_since` (`updates.rs`).
    wal_archive: updates::WalArchive,
    /// Set for a secondary instance (`Db::open_as_secondary`): where it follows the
    /// primary's manifest and WALs (`secondary.rs`).
    secondary: OnceLock<secondary::Secondary>,
}

/// An open database. `Send + Sync`: share it between threads with `Arc<Db>` or by reference.
///
/// ```
/// use strata::{Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"apple", b"red")?;
/// db.put(b"banana", b"yellow")?;
/// assert_eq!(db.get(b"apple")?.as_deref(), Some(&b"red"[..]));
///
/// let snapshot = db.snapshot();
/// db.delete(b"apple")?;
/// assert_eq!(db.get(b"apple")?, None);
/// assert_eq!(db.get_at(&snapshot, b"apple")?.as_deref(), Some(&b"red"[..]));
///
/// let keys: Vec<Vec<u8>> = db.range(&b"a"[..]..&b"c"[..]).map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
/// assert_eq!(keys, vec![b"banana".to_vec()]);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Db {
    inner: Arc<DbInner>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.inner.path)
            .finish()
    }
}

impl Db {
    /// The directory of the database.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// What recovery found when this handle opened the database.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.inner.recovery
    }

    /// Creates column family `name` with `options`, durably (recorded in the manifest before
    /// this returns). Fails if a family of that name exists.
    pub fn create_cf(&self, name: &str, options: CfOptions) -> Result<ColumnFamily> {
        self.inner.check_writable()?;
        let handle = self.inner.create_family(name, options)?;
        self.inner.persist_options()?;
        Ok(handle)
    }

    /// Drops column family `cf`: its data is no longer readable through any handle, and its
    /// files are deleted once no iterator or read in progress holds them. The default family
    /// cannot be dropped.
    pub fn drop_cf(&self, cf: &ColumnFamily) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.drop_family(cf)?;
        self.inner.persist_options()
    }

    /// The handle of column family `name`, if the database has it.
    pub fn cf(&self, name: &str) -> Option<ColumnFamily> {
        let families = self.inner.families.read().clone();
        families
            .values()
            .find(|cf| cf.name() == name)
            .map(|cf| cf.handle.clone())
    }

    /// The handle of the default column family.
    pub fn default_cf(&self) -> ColumnFamily {
        self.inner.default_cf.handle.clone()
    }

    /// The names of the column families, the default first, then by creation.
    pub fn cf_names(&self) -> Vec<String> {
        let families = self.inner.families.read().clone();
        families.values().map(|cf| cf.name().to_string()).collect()
    }

    /// The names of the column families of the database in `path`, the default first, as
    /// RocksDB's `ListColumnFamilies`: what [`Db::open_cf`] must be given.
    pub fn list_cfs(path: impl AsRef<Path>, options: &Options) -> Result<Vec<String>> {
        let path = path.as_ref();
        if !options.fs.exists(&path.join(crate::filename::CURRENT)) {
            return Err(Error::NotFound(format!(
                "no database in {}",
                path.display()
            )));
        }
        let families = VersionSet::read_families(options.fs.as_ref(), path)?;
        Ok(families.into_values().map(|f| f.name).collect())
    }

    /// The shape of the default family's tree now: memtables, L0 runs, files and bytes per
    /// level.
    pub fn tree_shape(&self) -> TreeShape {
        self.inner.default_cf.tree_shape()
    }

    /// The shape of column family `cf`'s tree now.
    pub fn tree_shape_cf(&self, cf: &ColumnFamily) -> Result<TreeShape> {
        Ok(self.inner.family(cf)?.tree_shape())
    }

    /// Sets the counters, the IO accounting and the compaction stats back to zero (db_bench's
    /// `resetstats`); the tree and memory state are unaffected.
    pub fn reset_stats(&self) {
        let inner = &self.inner;
        inner.counters.reset();
        inner.histograms.reset();
        inner.io.reset();
        inner.tables.stats().reset();
        for cf in inner.families.read().values() {
            for s in cf.compaction_stats.lock().iter_mut() {
                *s = LevelCompactionStats::default();
            }
        }
    }

    /// The summary of latency histogram `h` since open (or the last
    /// [`Db::reset_stats`]). Gets, writes, seeks and multi-gets are timed only at
    /// [`Options::stats_level`]
    /// [`StatsLevel::ExceptDetailedTimers`](crate::StatsLevel::ExceptDetailedTimers); flushes
    /// and compactions always. The example of [`HistogramData`] reads one.
    pub fn histogram(&self, h: Histogram) -> HistogramData {
        self.inner.histograms.data(h)
    }

    /// Counters and memory state; the tree and compaction figures are the default family's.
    pub fn stats(&self) -> DbStats {
        self.inner.stats(&self.inner.default_cf)
    }

    /// Counters and memory state, with the tree and compaction figures of family `cf`.
    pub fn stats_cf(&self, cf: &ColumnFamily) -> Result<DbStats> {
        let cf = self.inner.family(cf)?;
        Ok(self.inner.stats(&cf))
    }

    /// A named property as text, as RocksDB's `GetProperty`; `None` for an unknown name.
    ///
    /// Names are RocksDB's, with the prefix `rocksdb.` or `strata.` (the same property
    /// either way); [`PROPERTY_NAMES`] lists them. Among them: `rocksdb.stats` (a readable
    /// report: counters, the per-level compaction table and the latency histograms),
    /// `rocksdb.num-files-at-level<N>`, `rocksdb.compaction-stats` (per level: files, size,
    /// compactions, bytes read and written, write-amp, seconds), `rocksdb.estimate-num-keys`,
    /// `rocksdb.estimate-live-data-size`, `rocksdb.cur-size-all-mem-tables`,
    /// `rocksdb.num-running-compactions`, `rocksdb.num-running-flushes`,
    /// `rocksdb.block-cache-usage` (bytes the block cache holds, database-wide). Memtable,
    /// level and compaction figures are the default family's; see [`Db::property_cf`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let mut options = strata::Options::default();
    /// # options.create_if_missing = true;
    /// let db = strata::Db::open(dir.path(), options)?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"b", b"2")?;
    /// db.flush()?;
    /// assert_eq!(db.property("rocksdb.estimate-num-keys").as_deref(), Some("2"));
    /// assert_eq!(db.property("strata.num-files-at-level0").as_deref(), Some("1"));
    /// assert_eq!(db.property_int("rocksdb.num-running-compactions"), Some(0));
    /// assert_eq!(db.property("rocksdb.no-such-property"), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn property(&self, name: &str) -> Option<String> {
        property_of(&self.stats(), &self.inner.histograms.report(), name)
    }

    /// A named property that is a number (RocksDB's `GetIntProperty`); `None` for an
    /// unknown name or one whose value is text (such as `rocksdb.stats`).
    pub fn property_int(&self, name: &str) -> Option<u64> {
        self.property(name)?.parse().ok()
    }

    /// A named property of column family `cf` (see [`Db::property`]); `None` for an unknown
    /// name or a dropped family.
    pub fn property_cf(&self, cf: &ColumnFamily, name: &str) -> Option<String> {
        let histograms = self.inner.histograms.report();
        property_of(&self.stats_cf(cf).ok()?, &histograms, name)
    }

    /// Writes the memtables of every column family to tables and waits until that is done
    /// (RocksDB's `Flush` with `wait = true`, for all families). Afterwards no WAL is needed
    /// to recover the data written so far.
    pub fn flush(&self) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.flush_memtables(None, FlushReason::Manual)
    }

    /// Writes the memtables of column family `cf` to tables and waits until that is done.
    pub fn flush_cf(&self, cf: &ColumnFamily) -> Result<()> {
        self.inner.check_writable()?;
        let cf = self.inner.family(cf)?;
        self.inner.flush_memtables(Some(&cf), FlushReason::Manual)
    }

    /// Compacts the keys in [begin, end] (`None` = open bound) of the default family down to
    /// the last level, flushing its memtables first (RocksDB's `CompactRange`).
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.compact_range(&self.inner.default_cf, begin, end)
    }

    /// Compacts the keys in [begin, end] of column family `cf` down to the last level.
    pub fn compact_range_cf(
        &self,
        cf: &ColumnFamily,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.inner.check_writable()?;
        let cf = self.inner.family(cf)?;
        self.inner.compact_range(&cf, begin, end)
    }

    /// Compacts all of level `level` of the default family into the next one (L0 into the
    /// base level), as db_bench's `compact0` and `compact1` steps.
    pub fn compact_level(&self, level: usize) -> Result<()> {
        self.inner.check_writable()?;
        self.inner
            .compact_level_range(&self.inner.default_cf, level, None, None)
    }

    /// Compacts every column family down to its last level.
    pub fn compact_all(&self) -> Result<()> {
        self.inner.check_writable()?;
        let families = self.inner.families.read().clone();
        for cf in families.values() {
            self.inner.compact_range(cf, None, None)?;
        }
        Ok(())
    }

    /// Waits until no flush is pending and no compaction is needed, in any column family.
    pub fn wait_for_compactions(&self) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.wait_for_compactions()
    }

    /// Restarts background work after the error that stopped it (a failed flush or
    /// compaction, say for a full disk), once the cause is cleared, as RocksDB's `Resume`.
    /// The failed job left nothing behind and is retried; if it fails again, background work
    /// stops again and writes report the new error. A failed WAL write is not resumable: the
    /// database must be reopened, so that recovery can cut the log at its last whole record.
    pub fn resume(&self) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.commit.writer.lock().check_stopped()?;
        let mut bg = self.inner.bg.state.lock();
        if let Some(e) = bg.error.take() {
            self.inner
                .info_log
                .info(format_args!("resuming background work after: {e}"));
        }
        self.inner.bg.failed.store(false, Ordering::Release);
        self.inner.bg.cv.notify_all();
        Ok(())
    }

    /// Makes every write so far durable (fdatasync of the WAL), as a `sync` write would.
    pub fn sync_wal(&self) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.sync_wal()
    }

    /// With [`Options::manual_wal_flush`], appends the WAL records held in memory to the WAL
    /// file, and with `sync` makes them durable too (RocksDB's `FlushWAL`). Without the
    /// option every write's record is in the file already, and only `sync` does anything.
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        self.inner.check_writable()?;
        match sync {
            true => self.inner.sync_wal(),
            false => self.inner.flush_wal(),
        }
    }

    /// Closes the database: makes the WAL durable and releases the lock. Reports the first
    /// error met. Dropping a `Db` closes it too, ignoring errors.
    pub fn close(self) -> Result<()> {
        self.inner.close()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = self.inner.close();
    }
}

impl DbInner {
    /// The live family of `handle`, or an error naming it.
    fn family(&self, handle: &ColumnFamily) -> Result<Arc<ColumnFamilyData>> {
        self.check_open()?;
        if handle.id() == 0 {
            return Ok(self.default_cf.clone());
        }
        families::lookup(&self.families.read(), handle)
    }

    /// The live families now.
    fn families(&self) -> Arc<Families> {
        self.families.read().clone()
    }

    fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Unavailable(format!(
                "database {} is closed",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Fails for a closed database or one opened read-only.
    fn check_writable(&self) -> Result<()> {
        self.check_open()?;
        if self.secondary.get().is_some() {
            return Err(Error::Unavailable(format!(
                "database {} is open as a secondary instance (read-only): writes, flushes \
                 and compactions are refused; write through the primary",
                self.path.display()
            )));
        }
        if self.read_only {
            return Err(Error::Unavailable(format!(
                "database {} is open read-only: writes, flushes and compactions are refused",
                self.path.display()
            )));
        }
        Ok(())
    }

    fn close(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        // Writes that skipped the WAL exist only in memory: flush them, as RocksDB does.
        let flushed = if self.wal.unpersisted.load(Ordering::Acquire) {
            self.flush_memtables(None, FlushReason::Shutdown)
        } else {
            Ok(())
        };
        self.closed.store(true, Ordering::Release);
        self.bg.shutting_down.store(true, Ordering::Release);
        {
            let mut bg = self.bg.state.lock();
            bg.shutdown = true;
            self.bg.cv.notify_all();
        }
        self.wal.sync.shut_down();
        // The events thread ends once the stall changes queued are delivered.
        self.events.close();
        let threads = std::mem::take(&mut *self.bg.threads.lock());
        for handle in threads {
            // A listener's callback may drop the last handle, closing the database in a
            // background thread: that thread ends by itself once the callback returns.
            if handle.thread().id() != std::thread::current().id() {
                let _ = handle.join();
            }
        }
        if !self.read_only && self.secondary.get().is_none() {
            self.save_read_charges();
        }
        if !self.read_only {
            self.purge_obsolete_files();
        }
        let synced = self.commit.writer.lock().sync_wal();
        if let Some((budget, client)) = &self.write_buffers {
            budget.unregister(*client);
        }
        self.lock.lock().take();
        flushed.and(synced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}

    #[test]
    fn handles_can_cross_threads() {
        assert_send_sync::<Db>();
        assert_send_sync::<Snapshot>();
        assert_send::<DbIterator>();
        assert_send::<Range>();
        assert_send_sync::<ColumnFamily>();
    }
}
