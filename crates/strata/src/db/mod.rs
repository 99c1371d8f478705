//! The database: open and recovery, the write path, the read path, snapshots, statistics.
//!
//! Concurrency, in one place:
//!
//! - Writers queue their batches; the first in line leads a group commit (`write`): one WAL
//!   append and at most one fdatasync for the group, then memtable inserts, then the new last
//!   sequence is published. Only the leader touches the WAL and inserts into the memtable
//!   (it holds `writer`).
//! - Readers load the current [`SuperVersion`] (memtables and table files, one `Arc` swapped
//!   under a short lock), then, without a snapshot, the published sequence, and never wait for
//!   writers or flushes (see `DbInner::get` for why in that order).
//! - One background thread flushes immutable memtables to L0 tables (`flush`); the manifest
//!   records each table before the flushed memtable leaves the super version and its WAL is
//!   deleted. Other background threads compact (`background`, `compact`).
//! - Snapshots pin a sequence number; iterators hold their memtables alive by `Arc`.
//!
//! Files: `open` (open and recovery order), `recovery` (WAL replay), `write` (group commit)
//! with `stall` (the pure write-stall decision), `flush`, `compact` and `background` (the
//! jobs and their threads), `table_writer` (tables written by flush and compaction alike),
//! `obsolete` (deleting files no longer needed), `table_cache`, `iter` (the user iterator),
//! `stats` (counters and reports), `info_log` (the `LOG` file).

mod background;
mod compact;
mod flush;
mod info_log;
mod iter;
mod lookup;
mod obsolete;
mod open;
mod recovery;
mod stall;
mod stats;
mod table_cache;
mod table_writer;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::error::{Error, Result};
use crate::fs::{FileLock, FileSystem, IoStats};
use crate::iterator::{ConcatIterator, InternalIterator, MergingIterator};
use crate::key::{ParsedKey, SequenceNumber, ValueKind};
use crate::memtable::{Lookup, MemTable};
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::version::{FileMeta, Version, VersionSet, NUM_LEVELS};
use crate::write_batch::WriteBatch;

pub use iter::{DbIterator, Range};
pub use recovery::RecoveryReport;
pub use stats::{DbStats, LevelCompactionStats, LevelShape, TreeShape};

use crate::snapshot::{Snapshot, SnapshotList};
use background::BgState;
use info_log::InfoLog;
use stats::{format_compaction_table, format_stats, Counter, Counters};
use table_cache::TableCache;
use write::{WriteQueue, WriterState};

/// Everything a read consults, swapped as one `Arc`: the active memtable, the immutable ones
/// (newest first) and the version of table files. A flush installs the new table and drops
/// the flushed memtable in one swap, so no read sees the data twice or not at all.
pub(crate) struct SuperVersion {
    pub active: Arc<MemTable>,
    /// Immutable memtables, newest first.
    pub immutables: Vec<Arc<MemTable>>,
    pub version: Arc<Version>,
}

pub(crate) struct DbInner {
    path: PathBuf,
    options: Options,
    fs: Arc<dyn FileSystem>,
    io: Arc<IoStats>,
    /// The last sequence number whose writes are all in a memtable (what readers see).
    last_sequence: AtomicU64,
    sv: RwLock<Arc<SuperVersion>>,
    queue: Mutex<WriteQueue>,
    writer: Mutex<WriterState>,
    versions: Mutex<VersionSet>,
    tables: TableCache,
    bg: Mutex<BgState>,
    bg_cv: Condvar,
    bg_failed: AtomicBool,
    bg_threads: Mutex<Vec<JoinHandle<()>>>,
    /// Estimated bytes compaction still has to rewrite, updated with each new version.
    pending_compaction_bytes: AtomicU64,
    /// Set by close: running compactions stop and discard their outputs.
    shutting_down: AtomicBool,
    /// Disk bytes the running compactions may still write (see `compact`).
    compaction_reserved: AtomicU64,
    info_log: InfoLog,
    compaction_stats: Mutex<Vec<LevelCompactionStats>>,
    /// Tables compacted away, deleted once no version in use names them.
    obsolete_tables: Mutex<Vec<u64>>,
    /// True when a write skipped the WAL since the last full flush: close must flush.
    unpersisted: AtomicBool,
    snapshots: Arc<SnapshotList>,
    closed: AtomicBool,
    counters: Counters,
    recovery: RecoveryReport,
    lock: Mutex<Option<Box<dyn FileLock>>>,
    /// Opened with `Db::open_read_only`: every call that writes is refused.
    read_only: bool,
    /// The options the write-stall decision reads, taken once from `options`.
    stall_limits: stall::StallLimits,
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

    /// Records `operand` for `key`, to be combined with the key's older value by
    /// [`Options::merge_operator`] (RocksDB's `Merge`). Refused with `InvalidArgument` when
    /// the database has no merge operator.
    pub fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        self.merge_opt(key, operand, &WriteOptions::default())
    }

    /// [`Db::merge`] with write options.
    pub fn merge_opt(&self, key: &[u8], operand: &[u8], options: &WriteOptions) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.merge(key, operand);
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
        self.inner.check_writable()?;
        self.inner.write(batch, options)
    }

    /// The value of `key`, or `None`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` as of `snapshot`.
    pub fn get_at(&self, snapshot: &Snapshot, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get(key, Some(snapshot.sequence()))
    }

    /// The value of `key` with read options (a snapshot, if given).
    pub fn get_opt(&self, key: &[u8], options: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.inner
            .get(key, options.snapshot.as_ref().map(Snapshot::sequence))
    }

    /// A snapshot of the database now: reads through it ignore later writes.
    pub fn snapshot(&self) -> Snapshot {
        let seq = self.inner.last_sequence.load(Ordering::Acquire);
        Snapshot::new(&self.inner.snapshots, seq)
    }

    /// A cursor over the database, unpositioned: call a seek first.
    pub fn iter(&self, options: ReadOptions) -> DbIterator {
        // Without a snapshot: the super version first, then the sequence number (see
        // `DbInner::get`).
        let sv = self.inner.sv.read().clone();
        let at = match options.snapshot {
            Some(s) => (s.sequence(), Some(s)),
            None => (self.inner.last_sequence.load(Ordering::Acquire), None),
        };
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        children.push(Box::new(sv.active.iter()));
        for m in &sv.immutables {
            children.push(Box::new(m.iter()));
        }
        for f in &sv.version.levels[0] {
            match self.inner.tables.get(f.number) {
                Ok(t) => children.push(Box::new(t.iter())),
                Err(e) => children.push(Box::new(crate::iterator::FailedIterator::new(e))),
            }
        }
        // One cursor per deeper level, opening its files as it reaches them. Each holds the
        // version, so that no compaction deletes a file before the cursor has opened it.
        for files in sv.version.levels[1..].iter().filter(|f| !f.is_empty()) {
            let inner = self.inner.clone();
            let version = sv.version.clone();
            children.push(Box::new(ConcatIterator::new(
                files.clone(),
                Box::new(move |f: &Arc<FileMeta>| {
                    let _pinned = &version;
                    Ok(Box::new(inner.tables.get(f.number)?.iter()) as Box<dyn InternalIterator>)
                }),
            )));
        }
        DbIterator::new(
            MergingIterator::new(children),
            at,
            options.lower_bound,
            options.upper_bound,
        )
        .with_merge_operator(self.inner.options.merge_operator.clone())
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

    /// The shape of the tree now: memtables, L0 runs, files and bytes per level.
    pub fn tree_shape(&self) -> TreeShape {
        let sv = self.inner.sv.read().clone();
        TreeShape {
            active_memtable_entries: sv.active.num_entries(),
            active_memtable_bytes: sv.active.memory_usage() as u64,
            immutable_memtables: sv.immutables.len() as u64,
            immutable_memtable_bytes: sv.immutables.iter().map(|m| m.memory_usage() as u64).sum(),
            levels: sv
                .version
                .levels
                .iter()
                .take(self.inner.options.num_levels)
                .enumerate()
                .map(|(level, files)| LevelShape {
                    files: files.len() as u64,
                    bytes: sv.version.level_bytes(level),
                })
                .collect(),
        }
    }

    /// Sets the counters, the IO accounting and the compaction stats back to zero (db_bench's
    /// `resetstats`); the tree and memory state are unaffected.
    pub fn reset_stats(&self) {
        let inner = &self.inner;
        inner.counters.reset();
        inner.io.reset();
        inner.tables.stats().reset();
        for s in inner.compaction_stats.lock().iter_mut() {
            *s = LevelCompactionStats::default();
        }
    }

    /// Counters and memory state.
    pub fn stats(&self) -> DbStats {
        self.inner.stats()
    }

    /// A named property as text, as RocksDB's `GetProperty`; `None` for an unknown name.
    ///
    /// Known names: `strata.stats` (a readable report), `strata.num-immutable-mem-table`,
    /// `strata.cur-size-active-mem-table`, `strata.num-entries-active-mem-table`,
    /// `strata.num-snapshots`, `strata.last-sequence`, `strata.num-files-at-level<N>`,
    /// `strata.compaction-stats` (per level: files, size, compactions, bytes read and
    /// written, write-amp, seconds).
    pub fn property(&self, name: &str) -> Option<String> {
        let s = self.stats();
        if let Some(level) = name.strip_prefix("strata.num-files-at-level") {
            let level: usize = level.parse().ok()?;
            return s.level_files.get(level).map(|n| n.to_string());
        }
        Some(match name {
            "strata.stats" => format_stats(&s) + &format_compaction_table(&s),
            "strata.compaction-stats" => format_compaction_table(&s),
            "strata.num-immutable-mem-table" => s.immutable_memtables.to_string(),
            "strata.cur-size-active-mem-table" => s.active_memtable_bytes.to_string(),
            "strata.num-entries-active-mem-table" => s.active_memtable_entries.to_string(),
            "strata.num-snapshots" => s.live_snapshots.to_string(),
            "strata.last-sequence" => s.last_sequence.to_string(),
            _ => return None,
        })
    }

    /// Writes the memtables to tables and waits until that is done (RocksDB's `Flush` with
    /// `wait = true`). Afterwards no WAL is needed to recover the data written so far.
    pub fn flush(&self) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.flush_memtables()
    }

    /// Compacts the keys in [begin, end] (`None` = open bound) down to the last level,
    /// flushing the memtables first (RocksDB's `CompactRange`).
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.compact_range(begin, end)
    }

    /// Compacts all of level `level` into the next one (L0 into the base level), as
    /// db_bench's `compact0` and `compact1` steps.
    pub fn compact_level(&self, level: usize) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.compact_level_range(level, None, None)
    }

    /// Compacts the whole database down to the last level.
    pub fn compact_all(&self) -> Result<()> {
        self.compact_range(None, None)
    }

    /// Waits until no flush is pending and no compaction is needed.
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
                .log(format_args!("resuming background work after: {e}"));
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
    fn get(&self, key: &[u8], snapshot: Option<SequenceNumber>) -> Result<Option<Vec<u8>>> {
        self.check_open()?;
        self.counters.add(Counter::Gets, 1);
        let sv = self.sv.read().clone();
        let seq = snapshot.unwrap_or_else(|| self.last_sequence.load(Ordering::Acquire));
        for mem in std::iter::once(&sv.active).chain(sv.immutables.iter()) {
            match mem.get(key, seq) {
                Lookup::Found(v) => {
                    self.counters.add(Counter::GetsFound, 1);
                    return Ok(Some(v.to_vec()));
                }
                Lookup::Deleted => return Ok(None),
                Lookup::Merge => return self.get_merged(&sv, key, seq),
                Lookup::Missing => {}
            }
        }
        let mut target = SEEK_KEY.with(|b| std::mem::take(&mut *b.borrow_mut()));
        target.clear();
        crate::key::append_internal_key(&mut target, key, seq, crate::key::KIND_FOR_SEEK);
        let result = self.get_from_tables(&sv, key, &target, seq);
        SEEK_KEY.with(|b| *b.borrow_mut() = target);
        result
    }

    /// The table half of a point lookup; `target` is the seek key for `(key, seq)`.
    fn get_from_tables(
        &self,
        sv: &SuperVersion,
        key: &[u8],
        target: &[u8],
        seq: SequenceNumber,
    ) -> Result<Option<Vec<u8>>> {
        let hash = crate::table::filter::filter_hash(key);
        for f in sv.version.files_for_key(key) {
            if f.smallest_seq > seq {
                continue; // everything in it is newer than the read
            }
            let table = self.tables.get(f.number)?;
            let hit = table
                .get_hashed(target, hash, |k, v| {
                    let p = ParsedKey::parse(k)?;
                    (p.user_key == key).then(|| (p.kind, v.to_vec()))
                })?
                .flatten();
            match hit {
                Some((kind, v)) if kind == ValueKind::Put as u8 => {
                    self.counters.add(Counter::GetsFound, 1);
                    return Ok(Some(v));
                }
                Some((kind, _)) if kind == ValueKind::Merge as u8 => {
                    return self.get_merged(sv, key, seq);
                }
                Some(_) => return Ok(None),
                None => {}
            }
        }
        Ok(None)
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

    fn stats(&self) -> DbStats {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let sv = self.sv.read().clone();
        let t = self.tables.stats();
        DbStats {
            active_memtable_entries: sv.active.num_entries(),
            active_memtable_bytes: sv.active.memory_usage() as u64,
            immutable_memtables: sv.immutables.len() as u64,
            immutable_memtable_bytes: sv.immutables.iter().map(|m| m.memory_usage() as u64).sum(),
            live_snapshots: self.snapshots.count() as u64,
            oldest_snapshot: self.snapshots.oldest(),
            last_sequence: self.last_sequence.load(Ordering::Acquire),
            pending_compaction_bytes: load(&self.pending_compaction_bytes),
            compactions_running: self.bg.lock().compactions_running as u64,
            compactions: self.compaction_stats.lock().clone(),
            level_files: (0..NUM_LEVELS)
                .map(|l| sv.version.levels[l].len() as u64)
                .collect(),
            level_bytes: (0..NUM_LEVELS).map(|l| sv.version.level_bytes(l)).collect(),
            level_scores: crate::compaction::picker::level_scores(
                &sv.version,
                &self.options.picker_options(),
            ),
            bloom_checks: load(&t.bloom_checks),
            bloom_negatives: load(&t.bloom_negatives),
            block_cache_hits: t.cache_hits.iter().map(load).sum(),
            block_cache_misses: t.cache_misses.iter().map(load).sum(),
            block_cache_by_kind: std::array::from_fn(|k| {
                (load(&t.cache_hits[k]), load(&t.cache_misses[k]))
            }),
            table_bytes_read: load(&t.bytes_read),
            open_tables: self.tables.open_tables() as u64,
            table_opens: self.tables.opens(),
            io: self.io.snapshot(),
            ..DbStats::from_counters(&self.counters)
        }
    }

    /// Updates what is derived from the current version (for write stalls).
    fn note_new_version(&self, version: &Version) {
        let pending = crate::compaction::picker::pending_compaction_bytes(
            version,
            &self.options.picker_options(),
        );
        self.pending_compaction_bytes
            .store(pending, Ordering::Relaxed);
    }

    fn close(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        // Writes that skipped the WAL exist only in memory: flush them, as RocksDB does.
        let flushed = if self.unpersisted.load(Ordering::Acquire) {
            self.flush_memtables()
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
        let threads = std::mem::take(&mut *self.bg_threads.lock());
        for handle in threads {
            let _ = handle.join();
        }
        if !self.read_only {
            self.purge_obsolete_files();
        }
        let synced = self.writer.lock().sync_wal();
        self.lock.lock().take();
        flushed.and(synced)
    }
}

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
    }
}
