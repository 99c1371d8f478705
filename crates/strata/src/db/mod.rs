//! The database: open and recovery, the write path, the read path, snapshots, statistics.
//!
//! Concurrency, in one place:
//!
//! - Writers queue their batches; the first in line leads a group commit (`write`): one WAL
//!   append and at most one fdatasync for the group, then memtable inserts, then the new last
//!   sequence is published. Only the leader touches the WAL and inserts into the memtable
//!   (it holds `writer`).
//! - Readers load the current [`SuperVersion`] of their column family (memtables and table
//!   files, one `Arc` swapped under a short lock), then, without a snapshot, the published
//!   sequence, and never wait for writers or flushes (see `DbInner::get` for why in that
//!   order).
//! - One background thread flushes immutable memtables to L0 tables (`flush`), the oldest
//!   WAL's first across families; the manifest records each table before the flushed memtable
//!   leaves the super version, and a WAL is deleted once no family needs it. Other background
//!   threads compact (`background`, `compact`), the family with the highest score first.
//! - Snapshots pin a sequence number; iterators hold their memtables alive by `Arc`.
//!
//! Files: `families` (the families and what each holds), `checkpoint` (copies of a
//! running database), `open` (open and recovery
//! order), `recovery` (WAL replay), `write` (group commit)
//! with `stall` (the pure write-stall decision), `flush`, `compact` and `background` (the
//! jobs and their threads), `ingest` (adding tables written outside the database), `table_writer` (tables written by flush and compaction alike),
//! `obsolete` (deleting files no longer needed), `table_cache`, `iter` (the user iterator),
//! `stats` (counters and reports), `info_log` (the `LOG` file), `events` (calling the
//! application's event listeners).

mod background;
mod blob;
mod checkpoint;
mod compact;
mod events;
mod families;
mod flush;
mod info_log;
mod ingest;
mod iter;
mod lookup;
mod multi_get;
mod obsolete;
mod open;
mod recovery;
mod repair;
mod stats;
mod table_cache;
mod table_writer;
mod ttl;
mod warm_cache;
mod write;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::column_family::ColumnFamily;
use crate::counter::StripedCounter;
use crate::error::{Error, Result};
use crate::fs::{FileLock, FileSystem, IoStats};
use crate::iterator::{ConcatIterator, InternalIterator, MergingIterator};
use crate::key::{ParsedKey, SequenceNumber, ValueKind};
use crate::listener::FlushReason;
use crate::memtable::{Lookup, MemTable};
use crate::options::{CfOptions, Options, ReadOptions};
use crate::range_del::{FragmentedList, RangeDelAggregator};
use crate::table::pinned::{LookupValue, PinnedValue};
use crate::table::Table;
use crate::version::read_charge::GET_CHARGE;
use crate::version::{FileMeta, LevelFiles, Version, VersionSet, NUM_LEVELS};

pub use iter::{DbIterator, Range};
pub use recovery::RecoveryReport;
pub use repair::{repair, repair_cf, RepairReport, LOST_DIR};
pub use stats::{DbStats, LevelCompactionStats, LevelShape, TreeShape};
pub use write::conflict::{WriteHistory, WriteSource};

use crate::snapshot::{Snapshot, SnapshotList};
use background::BgState;
use families::{ColumnFamilyData, Families};
use info_log::InfoLog;
use stats::{format_compaction_table, format_stats, Counter, Counters};
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
    families: RwLock<Arc<Families>>,
    /// WALs on disk that may still be needed, ascending; the last is the one being written.
    wals: Mutex<BTreeSet<u64>>,
    /// The WALs closed without a sync (shared with the writer state): a WAL's handle is let go
    /// before the WAL is deleted.
    closed_wals: Arc<write::wal_sync::ClosedWals>,
    queue: Mutex<WriteQueue>,
    writer: Mutex<WriterState>,
    /// Whether any family has had `blob_separation_at_write`: writes look for values to put
    /// in blob files only then.
    separating_at_write: AtomicBool,
    /// The blob files writes put values in (`blob/at_write.rs`), also the writer state's.
    blobs_at_write: Arc<Mutex<blob::at_write::ActiveBlobFiles>>,
    /// Held by a write group while it inserts into the memtables, taken before it lets go of
    /// `writer` (see `write/group.rs`): whoever holds `writer` and takes this finds no insert in
    /// flight, and none can start. The standard library's lock, which spins and then sleeps,
    /// where parking_lot's yields its core in between (`write/group.rs` says why that matters).
    inserting: std::sync::Mutex<()>,
    versions: Mutex<VersionSet>,
    tables: TableCache,
    /// Open blob files and their cached values.
    blobs: Arc<blob::source::BlobSource>,
    bg: Mutex<BgState>,
    bg_cv: Condvar,
    bg_failed: AtomicBool,
    bg_threads: Mutex<Vec<JoinHandle<()>>>,
    /// Set by close: running compactions stop and discard their outputs.
    shutting_down: AtomicBool,
    /// Disk bytes the running compactions may still write (see `compact`).
    compaction_reserved: AtomicU64,
    info_log: InfoLog,
    /// The application's event listeners.
    events: events::Events,
    /// Tables compacted away, deleted once no version in use names them.
    obsolete_tables: Mutex<Vec<u64>>,
    /// Blob files no table refers to any more, deleted once no version in use names them.
    obsolete_blobs: Mutex<Vec<u64>>,
    /// The WAL syncs handed to the `strata-wal-sync` thread.
    wal_sync: Arc<write::wal_sync::WalSyncQueue>,
    /// Blob files no version names that open kept for the WALs that name them (values
    /// written at put), each with the newest such WAL: deleted with it.
    blobs_for_wals: Mutex<Vec<(u64, u64)>>,
    /// True when a write skipped the WAL since the last full flush: close must flush.
    unpersisted: AtomicBool,
    snapshots: Arc<SnapshotList>,
    closed: AtomicBool,
    counters: Counters,
    recovery: RecoveryReport,
    lock: Mutex<Option<Box<dyn FileLock>>>,
    /// Opened with `Db::open_read_only`: every call that writes is refused.
    read_only: bool,
    /// Prepared transactions found at open, not yet handed to a `TransactionDb`.
    prepared: Mutex<Vec<write::two_phase::PreparedRecord>>,
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

    /// The value of `key`, or `None`.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` as of `snapshot`.
    pub fn get_at(&self, snapshot: &Snapshot, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.inner
            .get(&self.inner.default_cf, key, Some(snapshot.sequence()))
    }

    /// The value of `key` with read options (a snapshot, if given).
    pub fn get_opt(&self, key: impl AsRef<[u8]>, options: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner.get(&self.inner.default_cf, key, snapshot)
    }

    /// The value of `key` in column family `cf`, or `None`.
    pub fn get_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    /// The value of `key` in column family `cf` with read options (a snapshot, if given).
    pub fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        let cf = self.inner.family(cf)?;
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner.get(&cf, key, snapshot)
    }

    /// The value of `key` without a copy where it can: a value found in a table block is
    /// handed back in place, keeping the block in memory while the [`PinnedValue`] lives
    /// (RocksDB's `PinnableSlice`); one found in a memtable or made by a merge is copied once.
    /// Reads as a `&[u8]`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let mut options = strata::Options::default();
    /// options.create_if_missing = true;
    /// let db = strata::Db::open(dir.path(), options)?;
    /// db.put(b"key", b"a value read in place")?;
    /// db.flush()?; // now in a table
    /// let value = db.get_pinned(b"key")?.expect("written above");
    /// assert!(value.is_pinned());
    /// assert_eq!(&value[..], b"a value read in place");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_pinned(&self, key: impl AsRef<[u8]>) -> Result<Option<PinnedValue>> {
        self.get_pinned_opt(key, &ReadOptions::default())
    }

    /// [`Db::get_pinned`] with read options (a snapshot, if given).
    pub fn get_pinned_opt(
        &self,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<PinnedValue>> {
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner
            .get(&self.inner.default_cf, key.as_ref(), snapshot)
    }

    /// [`Db::get_pinned`] in column family `cf`, with read options.
    pub fn get_pinned_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<PinnedValue>> {
        let cf = self.inner.family(cf)?;
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner.get(&cf, key.as_ref(), snapshot)
    }

    /// The values of `keys` (in their order), read together: in one view of the database, as
    /// through one snapshot, and in key order, so that keys near one another share the
    /// table blocks they read. Each key has its own answer: a corrupt block fails only the
    /// keys that needed it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let mut options = strata::Options::default();
    /// options.create_if_missing = true;
    /// let db = strata::Db::open(dir.path(), options)?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"c", b"3")?;
    /// let values = db.multi_get([b"c", b"b", b"a"]);
    /// let values: Vec<Option<Vec<u8>>> = values.into_iter().collect::<Result<_, _>>()?;
    /// assert_eq!(values, [Some(b"3".to_vec()), None, Some(b"1".to_vec())]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// [`Db::multi_get`] with read options (a snapshot, if given).
    pub fn multi_get_opt<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
        options: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner
            .multi_get(&self.inner.default_cf, &keys, snapshot)
    }

    /// [`Db::multi_get`] in column family `cf`.
    pub fn multi_get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_cf_opt(cf, keys, &ReadOptions::default())
    }

    /// [`Db::multi_get`] in column family `cf` with read options (a snapshot, if given). A
    /// dropped family fails every key.
    pub fn multi_get_cf_opt<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        keys: impl IntoIterator<Item = K>,
        options: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        let family = match self.inner.family(cf) {
            Ok(family) => family,
            Err(_) => {
                return keys
                    .iter()
                    .map(|_| self.inner.family(cf).map(|_| None))
                    .collect()
            }
        };
        let snapshot = options.snapshot.as_ref().map(Snapshot::sequence);
        self.inner.multi_get(&family, &keys, snapshot)
    }

    /// A snapshot of the database now, every column family: reads through it ignore later
    /// writes.
    pub fn snapshot(&self) -> Snapshot {
        let last_sequence = &self.inner.last_sequence;
        Snapshot::latest(&self.inner.snapshots, || {
            last_sequence.load(Ordering::Acquire)
        })
    }

    /// A cursor over the database, unpositioned: call a seek first.
    pub fn iter(&self, options: ReadOptions) -> DbIterator {
        self.inner.iter(&self.inner.default_cf, options)
    }

    /// A cursor over column family `cf`, unpositioned: call a seek first.
    pub fn iter_cf(&self, cf: &ColumnFamily, options: ReadOptions) -> Result<DbIterator> {
        let cf = self.inner.family(cf)?;
        Ok(self.inner.iter(&cf, options))
    }

    /// The key-value pairs in `range`, in key order, as of now.
    ///
    /// Bounds are anything that can be viewed as bytes: `db.range(&b"a"[..]..&b"m"[..])`,
    /// `db.range::<&[u8], _>(..)`.
    pub fn range<K, R>(&self, range: R) -> Range
    where
        K: AsRef<[u8]>,
        R: std::ops::RangeBounds<K>,
    {
        Range::new(|options| self.iter(options), range)
    }

    /// The key-value pairs in `range` of column family `cf`, in key order, as of now.
    pub fn range_cf<K, R>(&self, cf: &ColumnFamily, range: R) -> Result<Range>
    where
        K: AsRef<[u8]>,
        R: std::ops::RangeBounds<K>,
    {
        let cf = self.inner.family(cf)?;
        Ok(Range::new(|options| self.inner.iter(&cf, options), range))
    }

    /// Creates column family `name` with `options`, durably (recorded in the manifest before
    /// this returns). Fails if a family of that name exists.
    pub fn create_cf(&self, name: &str, options: CfOptions) -> Result<ColumnFamily> {
        self.inner.check_writable()?;
        self.inner.create_family(name, options)
    }

    /// Drops column family `cf`: its data is no longer readable through any handle, and its
    /// files are deleted once no iterator or read in progress holds them. The default family
    /// cannot be dropped.
    pub fn drop_cf(&self, cf: &ColumnFamily) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.drop_family(cf)
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
        inner.io.reset();
        inner.tables.stats().reset();
        for cf in inner.families.read().values() {
            for s in cf.compaction_stats.lock().iter_mut() {
                *s = LevelCompactionStats::default();
            }
        }
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
    /// Known names: `strata.stats` (a readable report), `strata.num-immutable-mem-table`,
    /// `strata.cur-size-active-mem-table`, `strata.num-entries-active-mem-table`,
    /// `strata.num-snapshots`, `strata.last-sequence`, `strata.num-files-at-level<N>`,
    /// `strata.compaction-stats` (per level: files, size, compactions, bytes read and
    /// written, write-amp, seconds), `strata.num-blob-files`, `strata.total-blob-file-size`,
    /// `strata.live-blob-file-garbage-size`, `strata.block-cache-usage` (bytes the block
    /// cache holds, database-wide). Memtable, level and compaction figures are the default
    /// family's; see [`Db::property_cf`].
    pub fn property(&self, name: &str) -> Option<String> {
        property_of(&self.stats(), name)
    }

    /// A named property of column family `cf` (see [`Db::property`]); `None` for an unknown
    /// name or a dropped family.
    pub fn property_cf(&self, cf: &ColumnFamily, name: &str) -> Option<String> {
        property_of(&self.stats_cf(cf).ok()?, name)
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
        self.inner.writer.lock().check_stopped()?;
        let mut bg = self.inner.bg.lock();
        if let Some(e) = bg.error.take() {
            self.inner
                .info_log
                .info(format_args!("resuming background work after: {e}"));
        }
        self.inner.bg_failed.store(false, Ordering::Release);
        self.inner.bg_cv.notify_all();
        Ok(())
    }

    /// Makes every write so far durable (fdatasync of the WAL), as a `sync` write would.
    pub fn sync_wal(&self) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.sync_wal()
    }

    /// Closes the database: makes the WAL durable and releases the lock. Reports the first
    /// error met. Dropping a `Db` closes it too, ignoring errors.
    pub fn close(self) -> Result<()> {
        self.inner.close()
    }
}

/// Property `name` read from `s` (see [`Db::property`]).
fn property_of(s: &DbStats, name: &str) -> Option<String> {
    if let Some(level) = name.strip_prefix("strata.num-files-at-level") {
        let level: usize = level.parse().ok()?;
        return s.level_files.get(level).map(|n| n.to_string());
    }
    Some(match name {
        "strata.stats" => format_stats(s) + &format_compaction_table(s),
        "strata.compaction-stats" => format_compaction_table(s),
        "strata.num-immutable-mem-table" => s.immutable_memtables.to_string(),
        "strata.cur-size-active-mem-table" => s.active_memtable_bytes.to_string(),
        "strata.num-entries-active-mem-table" => s.active_memtable_entries.to_string(),
        "strata.num-snapshots" => s.live_snapshots.to_string(),
        "strata.block-cache-usage" => s.block_cache_usage.to_string(),
        "strata.last-sequence" => s.last_sequence.to_string(),
        "strata.num-blob-files" => s.blob_files.to_string(),
        "strata.total-blob-file-size" => s.blob_file_bytes.to_string(),
        "strata.live-blob-file-garbage-size" => s.blob_garbage_bytes.to_string(),
        _ => return None,
    })
}

impl ColumnFamilyData {
    /// The shape of this family's tree now.
    fn tree_shape(&self) -> TreeShape {
        let sv = self.super_version();
        TreeShape {
            active_memtable_entries: sv.active.num_entries(),
            active_memtable_bytes: sv.active.memory_usage() as u64,
            immutable_memtables: sv.immutables.len() as u64,
            immutable_memtable_bytes: sv.immutables.iter().map(|m| m.memory_usage() as u64).sum(),
            levels: sv
                .version
                .levels
                .iter()
                .take(self.options.num_levels)
                .enumerate()
                .map(|(level, files)| LevelShape {
                    files: files.len() as u64,
                    bytes: sv.version.level_bytes(level),
                })
                .collect(),
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = self.inner.close();
    }
}

impl DbInner {
    /// The value of `key` at `snapshot`, or as of now.
    ///
    /// Without a snapshot the super version is loaded before the sequence number. The other
    /// order loses data: a newer version of the key published in between, then flushed or
    /// compacted with no snapshot registered, drops the version the read should see from the
    /// tables of the super version it then loads. In this order the super version holds every
    /// write up to some sequence at or below the one loaded (a memtable switch falls between
    /// write groups), its memtables and files are not changed by later jobs, and the read sees
    /// that consistent prefix, including every write acknowledged before it began.
    ///
    /// The value as stored: `get` (in `ttl`) strips a TTL family's expiry.
    fn get_stored<V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        key: &[u8],
        snapshot: Option<SequenceNumber>,
    ) -> Result<Option<V>> {
        self.check_open()?;
        let sv = cf.super_version();
        let seq = snapshot.unwrap_or_else(|| self.last_sequence.load(Ordering::Acquire));
        self.get_stored_at(cf, &sv, key, seq)
    }

    /// [`DbInner::get_stored`] in super version `sv` at sequence `seq` (`sv` loaded first, as
    /// that function's doc says).
    fn get_stored_at<V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        sv: &SuperVersion,
        key: &[u8],
        seq: SequenceNumber,
    ) -> Result<Option<V>> {
        self.counters.add(Counter::Gets, 1);
        // The newest range deletion at or below `seq` covering `key` in the sources read so
        // far (0: none). A version older than it is deleted; sources are newest first, so a
        // tombstone in an older source never hides a version found in a newer one.
        let mut covered = 0;
        // The tables' filter hash of the key, which the memtables' filters take too.
        let hash = crate::table::filter::filter_hash(key);
        let memtables = || std::iter::once(&sv.active).chain(sv.immutables.iter());
        // Every filter line the lookup may read is asked for before any is read, the
        // memtables' and the first tables' (`open_first_tables`), so that their misses
        // overlap with each other and with the memtables' searches. A lookup the memtables
        // answer has opened tables it does not read: cheap next to a skiplist search.
        memtables().for_each(|mem| mem.prefetch_filter(hash));
        let first = self.open_first_tables(sv, key, hash, seq);
        for mem in memtables() {
            if mem.has_range_tombstones() {
                let t = mem.range_tombstones().max_covering_seq(key, seq);
                covered = covered.max(t.unwrap_or(0));
            }
            let (lookup, found) = match mem.may_contain(hash) {
                true => mem.get_with_seq(key, seq),
                false => (Lookup::Missing, 0),
            };
            if !matches!(lookup, Lookup::Missing) && found < covered {
                return Ok(None);
            }
            match lookup {
                Lookup::Found(v) => {
                    self.counters.add(Counter::GetsFound, 1);
                    return Ok(Some(V::from_slice(v)));
                }
                Lookup::Deleted => return Ok(None),
                Lookup::Merge => return Ok(self.get_merged(cf, sv, key, seq)?.map(V::from_vec)),
                // Every older source holds only versions older than the covering tombstone,
                // which lies in this memtable or a newer one: the key is deleted, and nothing
                // older needs a look (RocksDB stops there too).
                Lookup::Missing if covered > 0 => return Ok(None),
                Lookup::Missing => {}
            }
        }
        let mut target = SEEK_KEY.with(|b| std::mem::take(&mut *b.borrow_mut()));
        target.clear();
        crate::key::append_internal_key(&mut target, key, seq, crate::key::KIND_FOR_SEEK);
        let result = self.get_from_tables(cf, sv, key, hash, &target, seq, covered, first);
        SEEK_KEY.with(|b| *b.borrow_mut() = target);
        result
    }

    /// The tables a point lookup of `key` at `seq` may read, in the order it reads them: a
    /// table whose every entry is newer than the read is skipped.
    fn table_candidates<'a>(
        sv: &'a SuperVersion,
        key: &'a [u8],
        seq: SequenceNumber,
    ) -> impl Iterator<Item = (usize, &'a Arc<FileMeta>)> {
        let files = sv.version.files_for_key(key);
        files.filter(move |(_, f)| f.smallest_seq <= seq)
    }

    /// The first [`PREFETCHED_TABLES`] tables a point lookup of `key` may read, opened, each
    /// asked to start loading the line of its filter the lookup will read (`hash` is the
    /// key's filter hash): most lookups read such a line in every table they consult, and
    /// their misses then overlap instead of adding up. A table that fails to open here is
    /// opened again (and its error returned) only if the lookup gets to it.
    fn open_first_tables<'a>(
        &self,
        sv: &'a SuperVersion,
        key: &'a [u8],
        hash: u64,
        seq: SequenceNumber,
    ) -> FirstTables<'a> {
        let mut candidates = Self::table_candidates(sv, key, seq);
        let mut first: FirstTables = [const { None }; PREFETCHED_TABLES];
        for slot in &mut first {
            let Some((level, f)) = candidates.next() else {
                break;
            };
            let table = self.tables.get_for(f, &sv.version.order, level).ok();
            if let Some(t) = &table {
                t.prefetch_filter(hash);
            }
            *slot = Some((level, f, table));
        }
        first
    }

    /// The table half of a point lookup; `hash` is the key's filter hash, `target` the seek
    /// key for `(key, seq)`, `covered` the newest range deletion covering `key` in the
    /// memtables (0: none), and `first` the first tables to read, from
    /// [`DbInner::open_first_tables`].
    #[allow(clippy::too_many_arguments)]
    fn get_from_tables<'a, V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        sv: &'a SuperVersion,
        key: &'a [u8],
        hash: u64,
        target: &[u8],
        seq: SequenceNumber,
        mut covered: SequenceNumber,
        first: FirstTables<'a>,
    ) -> Result<Option<V>> {
        if covered > 0 {
            // A memtable's tombstone covers the key: every table version is older.
            return Ok(None);
        }
        // The candidates after the first ones (none unless `first` is full).
        let taken = first.iter().flatten().count();
        let rest = Self::table_candidates(sv, key, seq).skip(taken);
        let rest = rest.map(|(level, f)| (level, f, None));
        // L0 tables consulted without finding the key: what the read charges them for
        // (`version::read_charge`) once it goes past L0 without an answer there.
        let charging = usize::from(cf.options.read_triggered_compaction);
        let mut l0_passed = 0;
        for (level, f, opened) in first.into_iter().flatten().chain(rest) {
            if level > 0 && l0_passed > 0 {
                self.charge_l0_reads(&sv.version, std::mem::take(&mut l0_passed), GET_CHARGE);
            }
            let table = match opened {
                Some(t) => t,
                None => self.tables.get_for(f, &sv.version.order, level)?,
            };
            // Before the filter: a table's tombstones cover keys its filter knows nothing of.
            let tombstones = table.range_tombstones_ref();
            if !tombstones.is_empty() {
                covered = covered.max(tombstones.max_covering_seq(key, seq).unwrap_or(0));
            }
            let hit = table
                .get_hashed_entry(target, hash, |entry| {
                    let p = ParsedKey::parse(entry.key())?;
                    let value = || V::from_block(entry.block(), entry.value_range());
                    (p.user_key == key).then(|| (p.kind, p.seq, value()))
                })?
                .flatten();
            match hit {
                Some((_, found, _)) if found < covered => return Ok(None),
                Some((kind, _, v)) if kind == ValueKind::Put as u8 => {
                    self.counters.add(Counter::GetsFound, 1);
                    return Ok(Some(v));
                }
                Some((kind, _, _)) if kind == ValueKind::Merge as u8 => {
                    return Ok(self.get_merged(cf, sv, key, seq)?.map(V::from_vec));
                }
                Some((kind, _, reference)) if kind == ValueKind::BlobIndex as u8 => {
                    let value = self.blobs.get(key, reference.as_ref())?;
                    self.counters.add(Counter::GetsFound, 1);
                    return Ok(Some(V::from_vec(value)));
                }
                Some(_) => return Ok(None),
                None if covered > 0 => {
                    // Every older version of the key, in the levels below, is older than the
                    // covering tombstone: deleted.
                    return Ok(None);
                }
                None => l0_passed += charging * usize::from(level == 0),
            }
        }
        self.charge_l0_reads(&sv.version, l0_passed, GET_CHARGE);
        Ok(None)
    }

    /// Charges `version`'s L0 files for a read that passed `tables` of them (see
    /// `version::read_charge`), and wakes the background threads when that makes their
    /// merge due.
    pub(super) fn charge_l0_reads(&self, version: &Version, tables: usize, per_table: u64) {
        if version.charge_l0_reads(tables, per_table) {
            self.wake_background();
        }
    }

    /// The range deletions of `sv`'s tables below L0, gathered (opening every table) once
    /// per version; an error if a table fails to open, and then gathered again next time.
    fn deeper_range_tombstones<'a>(
        &self,
        sv: &'a SuperVersion,
    ) -> Result<&'a [Arc<FragmentedList>]> {
        if let Some(lists) = sv.deeper_tombstones.get() {
            return Ok(lists);
        }
        let mut lists = Vec::new();
        let deeper = sv.version.levels.iter().enumerate().skip(1);
        for (level, f) in deeper.flat_map(|(l, files)| files.iter().map(move |f| (l, f))) {
            let tombstones = self
                .tables
                .get_for(f, &sv.version.order, level)?
                .range_tombstones();
            if !tombstones.is_empty() {
                lists.push(tombstones);
            }
        }
        Ok(sv.deeper_tombstones.get_or_init(|| lists))
    }

    /// A cursor over family `cf`, unpositioned.
    fn iter(self: &Arc<Self>, cf: &ColumnFamilyData, options: ReadOptions) -> DbIterator {
        // Without a snapshot: the super version first, then the sequence number (see
        // `DbInner::get`).
        let sv = cf.super_version();
        let at = match options.snapshot {
            Some(s) => (s.sequence(), Some(s)),
            None => (self.last_sequence.load(Ordering::Acquire), None),
        };
        // A child per memtable, L0 table and deeper level (and a failing one at most).
        let capacity = 2 + sv.immutables.len() + sv.version.levels[0].len() + NUM_LEVELS;
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::with_capacity(capacity);
        // The tombstones of every source, gathered eagerly: the memtables' and those of every
        // table of the version, deeper levels included (gathered once per version, see
        // `deeper_range_tombstones`, so a level cursor opens only the tables it reaches). A
        // table that fails to open becomes a failing child, which the iterator reports.
        let mut range_del = RangeDelAggregator::for_read(at.0);
        children.push(Box::new(sv.active.iter()));
        for m in std::iter::once(&sv.active).chain(sv.immutables.iter()) {
            if m.has_range_tombstones() {
                range_del.add(m.range_tombstones());
            }
        }
        for m in &sv.immutables {
            children.push(Box::new(m.iter()));
        }
        let order = &sv.version.order;
        // With a prefix extractor and without `total_order_seek`, each table and level cursor
        // may be skipped by a seek whose prefix its filter rules out (`iter::PrefixSeek`).
        let prefix = iter::PrefixSeek::new(
            &cf.options.prefix_extractor,
            options.total_order_seek,
            options.prefix_same_as_start,
        );
        let filtered = prefix
            .as_ref()
            .and_then(|p| Some((p.hint()?.clone(), p.name())));
        let readahead = options.readahead_size;
        match self.deeper_range_tombstones(&sv) {
            Ok(lists) => lists.iter().for_each(|l| range_del.add(l.clone())),
            Err(e) => children.push(Box::new(crate::iterator::FailedIterator::new(e))),
        }
        for f in &sv.version.levels[0] {
            match self.tables.get_for(f, order, 0) {
                Ok(t) => {
                    let t = t.into_owned();
                    range_del.add(t.range_tombstones());
                    children.push(match &filtered {
                        Some((hint, name)) => {
                            let it = Box::new(t.iter_with_readahead(readahead));
                            iter::prefix_filtered_table(it, hint, name.clone(), t)
                        }
                        None => Box::new(t.iter_with_readahead(readahead)),
                    });
                }
                Err(e) => children.push(Box::new(crate::iterator::FailedIterator::new(e))),
            }
        }
        // One cursor per deeper level, opening its files as it reaches them. The iterator
        // holds the version (`IterContext::version` below), so that no compaction deletes a file
        // before the cursor has opened it.
        let deeper = sv.version.levels.iter().enumerate().skip(1);
        for (level_number, files) in deeper.filter(|(_, f)| !f.is_empty()) {
            let (inner, table_order) = (self.clone(), order.clone());
            let level = Box::new(ConcatIterator::with_order(
                LevelFiles::new(sv.version.clone(), level_number),
                Box::new(move |f: &Arc<FileMeta>| {
                    let table = inner.tables.get_for(f, &table_order, level_number)?;
                    let it = table.iter_with_readahead(readahead);
                    Ok(Box::new(it) as Box<dyn InternalIterator>)
                }),
                order.clone(),
            ));
            children.push(match &filtered {
                Some((hint, name)) => {
                    let (inner, table_order) = (self.clone(), order.clone());
                    let open = move |f: &FileMeta| {
                        let table = inner.tables.get_for(f, &table_order, level_number)?;
                        Ok(table.into_owned())
                    };
                    iter::prefix_filtered_level(
                        level,
                        hint,
                        name.clone(),
                        files.clone(),
                        order.clone(),
                        open,
                    )
                }
                None => level,
            });
        }
        let context = iter::IterContext {
            merge_operator: cf.options.merge_operator.clone(),
            family: Some(cf.handle.name_arc()),
            version: Some(sv.version.clone()),
            blobs: Some(self.blobs.clone()),
            range_del: Some(range_del),
            ttl_now: cf.options.ttl.map(|_| cf.options.clock.now_secs()),
            prefix,
            l0_charge: (cf.options.read_triggered_compaction && !sv.version.levels[0].is_empty())
                .then(|| (self.clone(), sv.version.levels[0].len())),
        };
        DbIterator::new(
            MergingIterator::with_order(children, order.clone()),
            at,
            (options.lower_bound, options.upper_bound),
            context,
        )
    }

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
        if self.read_only {
            return Err(Error::Unavailable(format!(
                "database {} is open read-only: writes, flushes and compactions are refused",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// The database's counters with the tree and compaction figures of family `cf`.
    fn stats(&self, cf: &ColumnFamilyData) -> DbStats {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let sv = cf.super_version();
        let t = self.tables.stats();
        DbStats {
            active_memtable_entries: sv.active.num_entries(),
            active_memtable_bytes: sv.active.memory_usage() as u64,
            immutable_memtables: sv.immutables.len() as u64,
            immutable_memtable_bytes: sv.immutables.iter().map(|m| m.memory_usage() as u64).sum(),
            live_snapshots: self.snapshots.count() as u64,
            oldest_snapshot: self.snapshots.oldest(),
            last_sequence: self.last_sequence.load(Ordering::Acquire),
            pending_compaction_bytes: load(&cf.pending_compaction_bytes),
            compactions_running: self.bg.lock().compactions_running as u64,
            compactions: cf.compaction_stats.lock().clone(),
            level_files: (0..NUM_LEVELS)
                .map(|l| sv.version.levels[l].len() as u64)
                .collect(),
            level_bytes: (0..NUM_LEVELS).map(|l| sv.version.level_bytes(l)).collect(),
            level_scores: crate::compaction::picker::level_scores(
                &sv.version,
                &cf.options.picker_options(),
            ),
            bloom_checks: t.bloom_checks.get(),
            bloom_negatives: t.bloom_negatives.get(),
            prefix_checks: t.prefix_checks.get(),
            prefix_negatives: t.prefix_negatives.get(),
            block_cache_hits: t.cache_hits.iter().map(StripedCounter::get).sum(),
            block_cache_misses: t.cache_misses.iter().map(StripedCounter::get).sum(),
            block_cache_by_kind: std::array::from_fn(|k| {
                (t.cache_hits[k].get(), t.cache_misses[k].get())
            }),
            table_bytes_read: t.bytes_read.get(),
            block_cache_usage: self.tables.block_cache().map_or(0, |c| c.usage() as u64),
            open_tables: self.tables.open_tables() as u64,
            table_opens: self.tables.opens(),
            blob_files: sv.version.blob_files.len() as u64,
            blob_file_bytes: sv.version.blob_files.values().map(|b| b.file_size).sum(),
            blob_garbage_bytes: sv
                .version
                .blob_files
                .values()
                .map(|b| b.garbage_bytes)
                .sum(),
            blob_reads: self.blobs.stats.reads.get(),
            blob_bytes_read: self.blobs.stats.bytes_read.get(),
            blob_cache_hits: self.blobs.stats.cache_hits.get(),
            io: self.io.snapshot(),
            ..DbStats::from_counters(&self.counters)
        }
    }

    fn close(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        // Writes that skipped the WAL exist only in memory: flush them, as RocksDB does.
        let flushed = if self.unpersisted.load(Ordering::Acquire) {
            self.flush_memtables(None, FlushReason::Shutdown)
        } else {
            Ok(())
        };
        self.closed.store(true, Ordering::Release);
        self.shutting_down.store(true, Ordering::Release);
        {
            let mut bg = self.bg.lock();
            bg.shutdown = true;
            self.bg_cv.notify_all();
        }
        self.wal_sync.shut_down();
        // The events thread ends once the stall changes queued are delivered.
        self.events.close();
        let threads = std::mem::take(&mut *self.bg_threads.lock());
        for handle in threads {
            // A listener's callback may drop the last handle, closing the database in a
            // background thread: that thread ends by itself once the callback returns.
            if handle.thread().id() != std::thread::current().id() {
                let _ = handle.join();
            }
        }
        if !self.read_only {
            self.purge_obsolete_files();
        }
        let synced = self.writer.lock().sync_wal();
        self.lock.lock().take();
        flushed.and(synced)
    }
}

/// How many of the tables a point lookup may read are opened before it reads any, to load
/// their filters' lines together (`DbInner::open_first_tables`).
const PREFETCHED_TABLES: usize = 8;

/// The first tables of a point lookup (`DbInner::open_first_tables`): level, file, and the
/// table if it opened.
type FirstTables<'a> =
    [Option<(usize, &'a Arc<FileMeta>, Option<Cow<'a, Arc<Table>>>)>; PREFETCHED_TABLES];

thread_local! {
    /// The seek key of point lookups, reused by each thread.
    static SEEK_KEY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
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
