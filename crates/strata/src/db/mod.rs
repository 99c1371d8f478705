//! The database: open and recovery, the write path, the read path, snapshots, statistics.
//!
//! Concurrency, in one place:
//!
//! - Writers queue their batches; the first in line leads a group commit (`write`): one WAL
//!   append and at most one fdatasync for the group, then memtable inserts, then the new last
//!   sequence is published. Only the leader touches the WAL and inserts into the memtable
//!   (it holds `writer`).
//! - Readers load the published sequence first, then the current set of memtables (`mems`,
//!   an `Arc` swapped under a short lock), and never wait for writers: every entry at or below
//!   the published sequence is already in a memtable of that set.
//! - Snapshots pin a sequence number; iterators hold their memtables alive by `Arc`.

mod filename;
mod iter;
mod recovery;
mod snapshot;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};
use crate::fs::{CountedFile, FileLock, FileSystem, IoClass, IoSnapshot, IoStats};
use crate::iterator::{InternalIterator, MergingIterator};
use crate::key::SequenceNumber;
use crate::log::LogWriter;
use crate::memtable::{Lookup, MemTable};
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::write_batch::WriteBatch;

pub use filename::FORMAT_VERSION;
pub use iter::{DbIterator, Range};
pub use recovery::RecoveryReport;
pub use snapshot::Snapshot;

use filename::{parse_file_name, FileKind};
use snapshot::SnapshotList;
use write::{WriteQueue, WriterState};

/// The memtables a read must consult: the active one and the immutable ones, newest first.
pub(crate) struct MemSet {
    pub active: Arc<MemTable>,
    /// Immutable memtables, newest first.
    pub immutables: Vec<Arc<MemTable>>,
}

/// Counters of the database's work since open (cheap relaxed atomics).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub batches: AtomicU64,
    pub write_groups: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub keys_written: AtomicU64,
    pub user_bytes_written: AtomicU64,
    pub gets: AtomicU64,
    pub gets_found: AtomicU64,
    pub memtable_switches: AtomicU64,
}

/// A snapshot of the database's counters and memory state, from [`Db::stats`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbStats {
    /// Write batches committed (each `put` and `delete` is one).
    pub batches: u64,
    /// Group commits: WAL writes that carried one or more batches.
    pub write_groups: u64,
    /// fdatasync calls on the WAL.
    pub wal_syncs: u64,
    /// Updates written.
    pub keys_written: u64,
    /// Bytes of user keys and values written (the denominator of write-amp).
    pub user_bytes_written: u64,
    /// Point lookups served.
    pub gets: u64,
    /// Point lookups that found a value.
    pub gets_found: u64,
    /// Times the active memtable became immutable.
    pub memtable_switches: u64,
    /// Entries in the active memtable.
    pub active_memtable_entries: u64,
    /// Bytes of memory used by the active memtable.
    pub active_memtable_bytes: u64,
    /// Number of immutable memtables.
    pub immutable_memtables: u64,
    /// Bytes of memory used by the immutable memtables.
    pub immutable_memtable_bytes: u64,
    /// Live snapshot handles.
    pub live_snapshots: u64,
    /// The sequence number of the oldest live snapshot, if any.
    pub oldest_snapshot: Option<u64>,
    /// The last published sequence number.
    pub last_sequence: u64,
    /// Bytes read and written by the engine, by purpose.
    pub io: IoSnapshot,
}

pub(crate) struct DbInner {
    path: PathBuf,
    options: Options,
    fs: Arc<dyn FileSystem>,
    io: Arc<IoStats>,
    /// The last sequence number whose writes are all in a memtable (what readers see).
    last_sequence: AtomicU64,
    mems: RwLock<Arc<MemSet>>,
    queue: Mutex<WriteQueue>,
    writer: Mutex<WriterState>,
    snapshots: Arc<SnapshotList>,
    closed: AtomicBool,
    counters: Counters,
    recovery: RecoveryReport,
    lock: Mutex<Option<Box<dyn FileLock>>>,
}

/// An open database. `Send + Sync`: share it between threads with `Arc<Db>` or by reference.
///
/// ```
/// use strata::{Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let db = Db::open(dir.path(), Options { create_if_missing: true, ..Options::default() })?;
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

        let mut wals = Vec::new();
        let mut max_number = 0;
        for name in fs.list_dir(&path)? {
            match parse_file_name(&name) {
                Some(FileKind::Wal(n)) => {
                    wals.push(n);
                    max_number = max_number.max(n);
                }
                Some(FileKind::DroppedWalTail(n)) => max_number = max_number.max(n),
                None => {}
            }
        }
        wals.sort_unstable();
        let recovered = recovery::replay_wals(
            fs.as_ref(),
            &path,
            &wals,
            options.wal_recovery_mode,
            options.write_buffer_size,
            &io,
        )?;

        let log_number = max_number + 1;
        let wal_file = fs.create_writable(&filename::wal_path(&path, log_number))?;
        fs.sync_dir(&path)?;
        let wal = LogWriter::new(Box::new(CountedFile::new(
            wal_file,
            io.clone(),
            IoClass::Wal,
        )));
        let mut immutables = recovered.mems;
        immutables.reverse();
        let mems = MemSet {
            active: Arc::new(MemTable::new(log_number, options.write_buffer_size)),
            immutables,
        };
        let inner = DbInner {
            path,
            fs,
            io,
            last_sequence: AtomicU64::new(recovered.last_sequence),
            mems: RwLock::new(Arc::new(mems)),
            queue: Mutex::new(WriteQueue::default()),
            writer: Mutex::new(WriterState::new(
                wal,
                log_number + 1,
                recovered.last_sequence,
            )),
            snapshots: Arc::new(SnapshotList::default()),
            closed: AtomicBool::new(false),
            counters: Counters::default(),
            recovery: recovered.report,
            lock: Mutex::new(Some(lock)),
            options,
        };
        Ok(Db {
            inner: Arc::new(inner),
        })
    }

    /// The directory of the database.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// What recovery found when this handle opened the database.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.inner.recovery
    }

    /// Sets `key` to `value`.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// Sets `key` to `value` with write options.
    pub fn put_opt(&self, key: &[u8], value: &[u8], options: &WriteOptions) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.put(key, value);
        self.write(batch, options)
    }

    /// Removes `key`.
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    /// Removes `key` with write options.
    pub fn delete_opt(&self, key: &[u8], options: &WriteOptions) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.delete(key);
        self.write(batch, options)
    }

    /// Removes the single put of `key` (see [`WriteBatch::single_delete`]).
    pub fn single_delete(&self, key: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.single_delete(key);
        self.write(batch, &WriteOptions::default())
    }

    /// Applies `batch` atomically: after a crash all of it is there or none of it.
    pub fn write(&self, batch: WriteBatch, options: &WriteOptions) -> Result<()> {
        self.inner.write(batch, options)
    }

    /// The value of `key`, or `None`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` as of `snapshot`.
    pub fn get_at(&self, snapshot: &Snapshot, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get(key, snapshot.sequence())
    }

    /// The value of `key` with read options (a snapshot, if given).
    pub fn get_opt(&self, key: &[u8], options: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let seq = match &options.snapshot {
            Some(s) => s.sequence(),
            None => self.inner.last_sequence.load(Ordering::Acquire),
        };
        self.inner.get(key, seq)
    }

    /// A snapshot of the database now: reads through it ignore later writes.
    pub fn snapshot(&self) -> Snapshot {
        let seq = self.inner.last_sequence.load(Ordering::Acquire);
        Snapshot::new(&self.inner.snapshots, seq)
    }

    /// A cursor over the database, unpositioned: call a seek first.
    pub fn iter(&self, options: ReadOptions) -> DbIterator {
        let snapshot = match options.snapshot {
            Some(s) => s,
            None => self.snapshot(),
        };
        let mems = self.inner.mems.read().clone();
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        children.push(Box::new(mems.active.iter()));
        for m in &mems.immutables {
            children.push(Box::new(m.iter()));
        }
        DbIterator::new(
            MergingIterator::new(children),
            snapshot,
            options.lower_bound,
            options.upper_bound,
        )
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
        Range::new(self, range)
    }

    /// Counters and memory state.
    pub fn stats(&self) -> DbStats {
        self.inner.stats()
    }

    /// A named property as text, as RocksDB's `GetProperty`; `None` for an unknown name.
    ///
    /// Known names: `strata.stats` (a readable report), `strata.num-immutable-mem-table`,
    /// `strata.cur-size-active-mem-table`, `strata.num-entries-active-mem-table`,
    /// `strata.num-snapshots`, `strata.last-sequence`.
    pub fn property(&self, name: &str) -> Option<String> {
        let s = self.stats();
        Some(match name {
            "strata.stats" => format_stats(&s),
            "strata.num-immutable-mem-table" => s.immutable_memtables.to_string(),
            "strata.cur-size-active-mem-table" => s.active_memtable_bytes.to_string(),
            "strata.num-entries-active-mem-table" => s.active_memtable_entries.to_string(),
            "strata.num-snapshots" => s.live_snapshots.to_string(),
            "strata.last-sequence" => s.last_sequence.to_string(),
            _ => return None,
        })
    }

    /// Makes every write so far durable (fdatasync of the WAL), as a `sync` write would.
    pub fn sync_wal(&self) -> Result<()> {
        self.inner.sync_wal()
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
    fn get(&self, key: &[u8], seq: SequenceNumber) -> Result<Option<Vec<u8>>> {
        self.check_open()?;
        self.counters.gets.fetch_add(1, Ordering::Relaxed);
        let mems = self.mems.read().clone();
        let found = std::iter::once(&mems.active)
            .chain(mems.immutables.iter())
            .map(|m| m.get(key, seq))
            .find(|l| *l != Lookup::Missing);
        match found {
            Some(Lookup::Found(v)) => {
                self.counters.gets_found.fetch_add(1, Ordering::Relaxed);
                Ok(Some(v.to_vec()))
            }
            _ => Ok(None),
        }
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

    fn stats(&self) -> DbStats {
        let c = &self.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let mems = self.mems.read().clone();
        DbStats {
            batches: load(&c.batches),
            write_groups: load(&c.write_groups),
            wal_syncs: load(&c.wal_syncs),
            keys_written: load(&c.keys_written),
            user_bytes_written: load(&c.user_bytes_written),
            gets: load(&c.gets),
            gets_found: load(&c.gets_found),
            memtable_switches: load(&c.memtable_switches),
            active_memtable_entries: mems.active.num_entries(),
            active_memtable_bytes: mems.active.memory_usage() as u64,
            immutable_memtables: mems.immutables.len() as u64,
            immutable_memtable_bytes: mems
                .immutables
                .iter()
                .map(|m| m.memory_usage() as u64)
                .sum(),
            live_snapshots: self.snapshots.count() as u64,
            oldest_snapshot: self.snapshots.oldest(),
            last_sequence: self.last_sequence.load(Ordering::Acquire),
            io: self.io.snapshot(),
        }
    }

    fn close(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let result = self.writer.lock().sync_wal();
        self.lock.lock().take();
        result
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
    let mut content = Vec::new();
    let mut file = fs.open_sequential(&id_path)?;
    let mut buf = [0u8; 256];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 || content.len() > 4096 {
            break;
        }
        content.extend_from_slice(&buf[..n]);
    }
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
    let tmp = path.join("IDENTITY.tmp");
    let id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
        ^ u64::from(std::process::id()).rotate_left(32);
    let mut f = fs.create_writable(&tmp)?;
    f.append(filename::identity_line(id).as_bytes())?;
    f.sync()?;
    drop(f);
    fs.rename(&tmp, &path.join(filename::IDENTITY))?;
    fs.sync_dir(path)
}

fn format_stats(s: &DbStats) -> String {
    let wal = s.io.written(IoClass::Wal);
    let wamp = if s.user_bytes_written > 0 {
        s.io.total_written() as f64 / s.user_bytes_written as f64
    } else {
        0.0
    };
    format!(
        "** Strata stats **\n\
         writes: {} batches, {} keys, {} user bytes, {} groups ({:.2} batches/group), {} WAL syncs\n\
         WAL: {} bytes written; write-amp {:.2}\n\
         reads: {} gets, {} found\n\
         memtables: active {} entries / {} bytes, {} immutable / {} bytes, {} switches\n\
         snapshots: {} live; last sequence {}\n",
        s.batches,
        s.keys_written,
        s.user_bytes_written,
        s.write_groups,
        if s.write_groups > 0 { s.batches as f64 / s.write_groups as f64 } else { 0.0 },
        s.wal_syncs,
        wal,
        wamp,
        s.gets,
        s.gets_found,
        s.active_memtable_entries,
        s.active_memtable_bytes,
        s.immutable_memtables,
        s.immutable_memtable_bytes,
        s.memtable_switches,
        s.live_snapshots,
        s.last_sequence,
    )
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
    }
}
