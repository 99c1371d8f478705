//! Event listeners: callbacks an application registers in [`crate::Options::listeners`] to
//! learn what the engine does in the background (RocksDB's `EventListener`): flushes and
//! compactions as they begin and end, tables created and deleted, WALs deleted, write-stall
//! changes and background errors.
//!
//! The contract, which [`EventListener`]'s documentation states for users:
//!
//! - Each callback runs in the thread that did the work (the flush thread, a compaction or
//!   subcompaction thread, or the caller of a manual compaction, `drop_cf` or `close`), except
//!   write-stall changes, which a thread of their own (`strata-events`) delivers: the writer
//!   that sees a change holds the write lock, and a stopped writer waits under it.
//! - No lock of the database is held during a callback. A file an event names as created
//!   (a flushed table, a compaction's outputs) exists until the callback returns: the job
//!   holds the version that names it.
//! - A panic in a callback is caught and written to `LOG` (and the `log` facade) as an
//!   error; the job goes on as if the callback had returned.
//! - Event records are `#[non_exhaustive]`: fields may be added without breaking listeners.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Error;

/// Callbacks for what a database does in the background. Every method has an empty default
/// body: implement the ones you need. Register listeners in [`crate::Options::listeners`];
/// all of them are called, in the order given, for every column family.
///
/// # Threads and locks
///
/// A callback runs in the thread that did the work: flush events in the flush thread,
/// compaction events in a compaction thread (or in the thread that called a manual
/// compaction such as [`crate::Db::compact_range`]; a table written by a subcompaction is
/// announced from that subcompaction's thread), deletions in whichever thread deleted the
/// file (a background thread, or one calling `drop_cf`, `compact_range` or `close`).
/// Write-stall changes are the exception: they are delivered in order by a thread of the
/// database's own, `strata-events`, a moment after the change, since the writer that sees a
/// change is inside the write path.
///
/// No lock of the database is held while a callback runs, so a callback may read: `get`,
/// iterators, snapshots, `property` and `stats` are safe. It must not wait for the background
/// work it is part of: a write (which may stall until a flush or compaction finishes),
/// `flush`, `compact_range`, `wait_for_compactions` or `close` called from a flush or
/// compaction callback can wait for the very thread it runs on, forever. Hand such calls to
/// another thread. A callback also delays the job that calls it: keep it short.
///
/// A listener that needs the database keeps a [`std::sync::Weak`] to an `Arc<Db>`, set after
/// open (a strong `Arc` would keep the database from ever being dropped). If a callback holds
/// the last handle when the application lets go of its own, the database closes in that
/// callback's thread as the handle drops.
///
/// # Panics
///
/// A panicking callback is caught: the panic is written to `LOG` as an error (and to the
/// `log` facade) and the database goes on as if the callback had returned.
///
/// # Example
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use strata::{Db, EventListener, FlushJobInfo, Options};
///
/// /// Remembers the tables flushes wrote.
/// #[derive(Default)]
/// struct Flushes(Mutex<Vec<u64>>);
///
/// impl EventListener for Flushes {
///     fn on_flush_completed(&self, info: &FlushJobInfo) {
///         self.0.lock().unwrap().push(info.file_number);
///     }
/// }
///
/// let flushes = Arc::new(Flushes::default());
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.listeners = vec![flushes.clone()];
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"key", b"value")?;
/// db.flush()?; // returns once the flush is done, its callbacks included
/// let tables = flushes.0.lock().unwrap().clone();
/// assert_eq!(tables.len(), 1);
/// assert!(dir.path().join(format!("{:06}.sst", tables[0])).exists());
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait EventListener: Send + Sync {
    /// A flush is about to write a memtable to a table. Empty memtables write nothing and
    /// are not announced.
    fn on_flush_begin(&self, info: &FlushJobInfo) {
        let _ = info;
    }

    /// A flush wrote its table, recorded it in the manifest and made it visible to reads.
    /// A flush that fails is reported by [`EventListener::on_background_error`] instead.
    fn on_flush_completed(&self, info: &FlushJobInfo) {
        let _ = info;
    }

    /// A compaction is about to merge (or move) its input files.
    fn on_compaction_begin(&self, info: &CompactionJobInfo) {
        let _ = info;
    }

    /// A compaction ended: installed, or failed (see [`CompactionJobInfo::status`]).
    fn on_compaction_completed(&self, info: &CompactionJobInfo) {
        let _ = info;
    }

    /// A column family's write-stall condition or its cause changed.
    fn on_stall_conditions_changed(&self, info: &WriteStallInfo) {
        let _ = info;
    }

    /// A flush or compaction failed.
    fn on_background_error(&self, info: &BackgroundErrorInfo) {
        let _ = info;
    }

    /// A flush or compaction finished writing a table file (synced, not yet in the
    /// manifest).
    fn on_table_file_created(&self, info: &TableFileCreationInfo) {
        let _ = info;
    }

    /// A table file was deleted while the database was open.
    fn on_table_file_deleted(&self, info: &TableFileDeletionInfo) {
        let _ = info;
    }

    /// A write-ahead log was deleted: the data of every family it held is in tables.
    fn on_wal_file_deleted(&self, info: &WalFileDeletionInfo) {
        let _ = info;
    }
}

/// Why a memtable was flushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FlushReason {
    /// The memtable reached `write_buffer_size`.
    WriteBufferFull,
    /// [`crate::Db::flush`] or [`crate::Db::flush_cf`].
    Manual,
    /// A manual compaction flushes the memtables first ([`crate::Db::compact_range`]).
    ManualCompaction,
    /// A checkpoint flushes when the WALs are larger than it allows.
    Checkpoint,
    /// Close flushes writes made without the WAL.
    Shutdown,
    /// The memtable was rebuilt from a WAL when the database opened.
    Recovery,
    /// An ingest whose files overlap the memtable flushes it first ([`crate::Db::ingest`]).
    ExternalFileIngestion,
    /// The memtables of the databases sharing a `WriteBufferManager` used up its budget.
    WriteBufferManager,
    /// The live WALs passed `max_total_wal_size`: the memtables holding the oldest one are
    /// flushed so that it can be deleted.
    WalFull,
}

/// A flush of one memtable, as it begins and as it completes.
///
/// The example of [`EventListener`] reads one.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FlushJobInfo {
    /// The column family flushed.
    pub cf_name: String,
    /// The number of the table file written (`NNNNNN.sst`).
    pub file_number: u64,
    /// The path of that file.
    pub file_path: PathBuf,
    /// The WAL that holds the memtable's writes (deleted once no family needs it).
    pub wal_number: u64,
    /// Entries in the memtable, every version and deletion counted.
    pub memtable_entries: u64,
    /// Bytes of memory the memtable uses.
    pub memtable_bytes: u64,
    /// Entries in the table: the memtable's less the versions no reader could see. 0 when
    /// the flush begins.
    pub table_entries: u64,
    /// Bytes of the table file. 0 when the flush begins.
    pub table_bytes: u64,
    /// From the beginning of the flush to its end. Zero when the flush begins.
    pub duration: Duration,
    /// Why the memtable was flushed.
    pub reason: FlushReason,
}

/// Why a compaction ran.
///
/// The example of [`CompactionJobInfo`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompactionReason {
    /// Leveled: level 0 reached `level0_file_num_compaction_trigger` files.
    LevelL0FilesNum,
    /// Leveled: a level outgrew its target size.
    LevelMaxLevelSize,
    /// Universal: the newer sorted runs outgrew `max_size_amplification_percent` of the
    /// oldest.
    UniversalSizeAmplification,
    /// Universal: a window of sorted runs of similar size.
    UniversalSizeRatio,
    /// Universal: too many sorted runs.
    UniversalSortedRunNum,
    /// Asked for through the API ([`crate::Db::compact_range`] and the like).
    Manual,
    /// Leveled: the oldest blob files passed `blob_garbage_collection_force_threshold`, and
    /// the tables referring to the oldest one are rewritten in their level.
    ForcedBlobGc,
    /// Leveled: reads spent on level 0's files about what merging them into the level below
    /// costs (`Options::read_triggered_compaction`).
    ReadTriggered,
    /// Leveled: level 0's oldest files overlap nothing in the base level and move into it
    /// unchanged (a trivial move), below the file-count trigger.
    Level0Move,
    /// Leveled: writes stopped (every write flushed) with files left in level 0 below the
    /// file-count trigger, and they merge into the base level.
    Level0Idle,
    /// FIFO: the tables passed `fifo.max_table_files_size`; the oldest were deleted
    /// (RocksDB's `kFIFOMaxSize`).
    FifoMaxSize,
    /// FIFO: the oldest tables passed `table_ttl_seconds`; they were deleted (`kFIFOTtl`).
    FifoTtl,
    /// FIFO: small tables merged into one (`kFIFOReduceNumFiles`).
    FifoReduceNumFiles,
    /// Leveled: a table passed `periodic_compaction_seconds` or `table_ttl_seconds` and was
    /// rewritten (`kPeriodicCompaction`).
    PeriodicCompaction,
}

/// One file a compaction read or wrote.
///
/// The example of [`CompactionJobInfo`] counts them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactionFileInfo {
    /// The level the file is in: an input's before, an output's after the compaction.
    pub level: usize,
    /// The file's number (`NNNNNN.sst`).
    pub file_number: u64,
    /// The file's path.
    pub path: PathBuf,
    /// The file's size in bytes.
    pub bytes: u64,
}

/// A compaction, as it begins and as it completes.
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use strata::{CompactionJobInfo, CompactionReason, Db, EventListener, Options};
///
/// /// Counts the compactions that rewrote files, and the bytes they wrote.
/// #[derive(Default)]
/// struct Rewrites(Mutex<(u32, u64)>);
///
/// impl EventListener for Rewrites {
///     fn on_compaction_completed(&self, info: &CompactionJobInfo) {
///         if info.status.is_ok() && !info.trivial_move {
///             let mut seen = self.0.lock().unwrap();
///             seen.0 += 1;
///             seen.1 += info.bytes_written;
///             assert_eq!(info.reason, CompactionReason::Manual);
///             assert_eq!(info.input_files.len(), 2);
///         }
///     }
/// }
///
/// let rewrites = Arc::new(Rewrites::default());
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.listeners = vec![rewrites.clone()];
/// let db = Db::open(dir.path(), options)?;
/// for round in 0..2 {
///     db.put(b"key", format!("version {round}"))?;
///     db.flush()?; // two L0 tables holding the key
/// }
/// db.compact_range(None, None)?; // returns after the callbacks
/// let (count, bytes) = *rewrites.0.lock().unwrap();
/// assert_eq!(count, 1);
/// assert!(bytes > 0);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct CompactionJobInfo {
    /// The column family compacted.
    pub cf_name: String,
    /// Why it ran.
    pub reason: CompactionReason,
    /// The level its first input files come from.
    pub base_input_level: usize,
    /// The level its outputs go to.
    pub output_level: usize,
    /// Its input files, by level. Those of a merge are deleted once no reader needs them
    /// ([`EventListener::on_table_file_deleted`]); those of a trivial move are the outputs.
    pub input_files: Vec<CompactionFileInfo>,
    /// Its output files. Empty when the compaction begins, or when it failed.
    pub output_files: Vec<CompactionFileInfo>,
    /// True when the inputs were moved to the output level without being rewritten.
    pub trivial_move: bool,
    /// Bytes of the input files read (0 for a trivial move).
    pub bytes_read: u64,
    /// Bytes of the output files written (0 when the compaction begins, and for a trivial
    /// move).
    pub bytes_written: u64,
    /// From the beginning of the compaction to its end. Zero when it begins.
    pub duration: Duration,
    /// `Ok` when it begins and when it completed; the error that ended it otherwise
    /// (cancelled by close, or failed: then [`EventListener::on_background_error`] follows).
    pub status: Result<(), Error>,
}

/// How far writes are held back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WriteStallCondition {
    /// Writes go ahead.
    Normal,
    /// Each write group waits a moment (1 to 20 ms) before it goes ahead.
    Delayed,
    /// Writes wait until background work clears the cause.
    Stopped,
}

/// What holds writes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WriteStallCause {
    /// The memtables wait for flushes: `max_write_buffer_number` reached (stops).
    MemtableLimit,
    /// Level 0 reached `level0_slowdown_writes_trigger` (delays) or
    /// `level0_stop_writes_trigger` (stops) files.
    L0FileCountLimit,
    /// The bytes compaction still has to rewrite reached
    /// `soft_pending_compaction_bytes_limit` (delays) or `hard_pending_compaction_bytes_limit`
    /// (stops).
    PendingCompactionBytes,
}

/// A change of a column family's write-stall condition. Each family's changes form a chain:
/// a change's `previous` is the `current` of the one before it (the first starts from
/// `Normal`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteStallInfo {
    /// The column family whose state holds writes back (writes are shared: one family's
    /// stall holds back writes to all).
    pub cf_name: String,
    /// The condition before the change.
    pub previous: WriteStallCondition,
    /// The condition now.
    pub current: WriteStallCondition,
    /// The cause of the current condition; `None` when it is `Normal`. When two causes hold,
    /// the stricter (then the first listed in [`WriteStallCause`]'s order of checks: L0 files,
    /// pending bytes, memtables for stops; L0 files, pending bytes for delays).
    pub cause: Option<WriteStallCause>,
}

/// Which job failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BackgroundErrorReason {
    /// A flush.
    Flush,
    /// A compaction run by a background thread.
    Compaction,
    /// A compaction asked for through the API; its caller gets the error too.
    ManualCompaction,
}

/// A failed flush or compaction.
#[derive(Debug)]
#[non_exhaustive]
pub struct BackgroundErrorInfo {
    /// Which job failed.
    pub reason: BackgroundErrorReason,
    /// Why.
    pub error: Error,
    /// True when background work has stopped and writes are refused until
    /// [`crate::Db::resume`] (a failed flush or background compaction); false when only the
    /// caller of a manual compaction is told.
    pub writes_stopped: bool,
}

/// Why a table file was written.
///
/// The example of [`TableFileCreationInfo`] counts tables by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TableFileCreationReason {
    /// A flush of a memtable.
    Flush,
    /// A compaction's output.
    Compaction,
    /// An ingested file rewritten with the sequence number of its ingest
    /// ([`crate::Db::ingest`]), announced in the caller's thread. A rewrite made again after
    /// a write took its number is announced while writes wait for the ingest: a callback
    /// may read then, and must not write.
    Ingest,
}

/// A table file written, synced and about to be recorded in the manifest.
///
/// # Examples
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::{Arc, Mutex};
/// use strata::{Db, EventListener, Options, TableFileCreationInfo, TableFileCreationReason};
///
/// /// Counts the tables written, by why they were written.
/// #[derive(Default)]
/// struct Tables(Mutex<HashMap<TableFileCreationReason, u32>>);
///
/// impl EventListener for Tables {
///     fn on_table_file_created(&self, info: &TableFileCreationInfo) {
///         assert!(info.entries > 0 && info.path.exists());
///         *self.0.lock().unwrap().entry(info.reason).or_default() += 1;
///     }
/// }
///
/// let tables = Arc::new(Tables::default());
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.listeners = vec![tables.clone()];
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"a", b"1")?;
/// db.flush()?;
/// db.put(b"a", b"2")?;
/// db.flush()?;
/// db.compact_range(None, None)?;
/// let counts = tables.0.lock().unwrap().clone();
/// assert_eq!(counts.get(&TableFileCreationReason::Flush), Some(&2));
/// assert_eq!(counts.get(&TableFileCreationReason::Compaction), Some(&1));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableFileCreationInfo {
    /// The column family the table belongs to.
    pub cf_name: String,
    /// Its number (`NNNNNN.sst`).
    pub file_number: u64,
    /// Its path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its entries.
    pub entries: u64,
    /// What wrote it.
    pub reason: TableFileCreationReason,
}

/// Why a table file was deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TableFileDeletionReason {
    /// No version in use names it: a compaction replaced it, or its family was dropped.
    Obsolete,
    /// The job writing it failed or was cancelled, or its family was dropped meanwhile: it was
    /// never in the manifest.
    Abandoned,
}

/// A table file deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableFileDeletionInfo {
    /// Its number (`NNNNNN.sst`).
    pub file_number: u64,
    /// Its path.
    pub path: PathBuf,
    /// Why it was deleted.
    pub reason: TableFileDeletionReason,
}

/// A write-ahead log deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalFileDeletionInfo {
    /// Its number (`NNNNNN.log`).
    pub log_number: u64,
    /// Its path.
    pub path: PathBuf,
}
