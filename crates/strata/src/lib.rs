//! Strata: a persistent, ordered key-value store in the LevelDB and RocksDB family.
//!
//! Writes go to a write-ahead log (group-committed across threads) and an in-memory skiplist;
//! reads see a consistent snapshot without waiting for writers. See [`Db`] for the API
//! ([`repair`] rebuilds a database whose manifest is lost), `docs/design.md` for how it
//! works and `docs/formats.md` for the bytes on disk.
//!
//! Limits: keys up to [`MAX_KEY_LEN`] bytes (1 MiB), values up to [`MAX_VALUE_LEN`] (64 MiB),
//! batches up to [`MAX_BATCH_LEN`] (1 GiB); larger ones are refused with
//! [`ErrorKind::InvalidArgument`].
//!
//! Options structs ([`Options`], [`CfOptions`], [`ReadOptions`], [`WriteOptions`],
//! [`IngestOptions`], [`TransactionOptions`], [`UniversalOptions`]) are built from `default()`
//! and then assigned field by field:
//!
//! ```
//! let mut options = strata::Options::default();
//! options.create_if_missing = true;
//! options.write_buffer_size = 16 << 20;
//! # let dir = tempfile::tempdir()?;
//! let db = strata::Db::open(dir.path(), options)?;
//! # db.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! They are `#[non_exhaustive]`, so new options can come in minor versions without breaking
//! code that builds them; the same attribute forbids struct literals outside this crate.
//!
//! The public API is what this page lists. [`fs`] is public so that an application can plug in
//! its own file system ([`Options::fs`]); everything else is internal. The hidden
//! `internals` module opens some of it to the `strata` command and the fuzz targets, and
//! promises nothing.
//!
//! Modules form layers that import one way: the order is kept once, in `tests/layering.rs`,
//! which fails on an import against it.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub(crate) mod backup;
pub(crate) mod blob;
pub(crate) mod cache;
pub(crate) mod codec;
pub(crate) mod column_family;
pub(crate) mod compaction;
pub(crate) mod compaction_filter;
pub(crate) mod comparator;
pub(crate) mod compression;
pub(crate) mod counter;
pub(crate) mod db;
pub(crate) mod error;
pub(crate) mod filename;
pub mod fs;
pub(crate) mod histogram;
#[doc(hidden)]
pub mod internals;
pub(crate) mod iterator;
pub(crate) mod key;
pub(crate) mod listener;
pub(crate) mod log;
pub(crate) mod memtable;
pub(crate) mod merge;
pub(crate) mod options;
pub(crate) mod perf_context;
pub(crate) mod prefix;
pub(crate) mod range_del;
pub(crate) mod rate_limiter;
pub(crate) mod snapshot;
pub(crate) mod sst_writer;
pub(crate) mod table;
#[cfg(test)]
mod testing;
pub(crate) mod txn;
pub(crate) mod util;
pub(crate) mod version;
pub(crate) mod write_batch;
pub(crate) mod write_buffer_manager;

pub use backup::{BackupEngine, BackupInfo};
pub use column_family::ColumnFamily;
pub use compaction::{CompactionStyle, FifoOptions, UniversalOptions};
pub use compaction_filter::ttl::{Clock, ManualClock, SystemClock};
pub use compaction_filter::{CompactionFilter, EntryKind, FilterDecision};
pub use comparator::{BytewiseComparator, Comparator, ReverseBytewiseComparator};
pub use db::{
    repair, repair_cf, Db, DbIterator, DbStats, ExportImportFilesMetaData, KeyRange,
    LevelCompactionStats, LevelShape, LiveFileMetadata, Range, RecoveryReport, RepairReport,
    SizeApproximationOptions, TreeShape, LOST_DIR, PROPERTY_NAMES, WAL_ARCHIVE_DIR,
};
pub use error::{Error, ErrorKind, Result, TxnFailure};
pub use filename::FORMAT_VERSION;
pub use histogram::{Histogram, HistogramData, StatsLevel};
pub use listener::{
    BackgroundErrorInfo, BackgroundErrorReason, CompactionFileInfo, CompactionJobInfo,
    CompactionReason, EventListener, FlushJobInfo, FlushReason, TableFileCreationInfo,
    TableFileCreationReason, TableFileDeletionInfo, TableFileDeletionReason, WalFileDeletionInfo,
    WriteStallCause, WriteStallCondition, WriteStallInfo,
};
pub use merge::{MergeOperator, StringAppend, UInt64Add};
pub use options::registry as option_registry;
pub use options::{
    CfOptions, IngestOptions, Options, PrepopulateBlockCache, ReadOptions, WalRecoveryMode,
    WriteOptions,
};
pub use perf_context::{
    perf_context, perf_level, reset_perf_context, set_perf_level, PerfContext, PerfLevel,
};
pub use prefix::{parse_prefix_extractor, CappedPrefix, FixedPrefix, PrefixExtractor};
pub use rate_limiter::{IoPriority, RateLimiter};
pub use snapshot::Snapshot;
pub use sst_writer::{SstFileInfo, SstWriter};
pub use table::collector::{
    CollectedEntry, CollectorContext, EntryType, TablePropertiesCollector,
    TablePropertiesCollectorFactory,
};
pub use table::properties::TableProperties;
pub use table::{
    ChecksumType, Compression, CompressionOptions, DataBlockIndexType, IndexType, PinnedValue,
    TableFamily,
};
pub use txn::{
    IndexedBatch, OptimisticTransaction, Transaction, TransactionBase, TransactionDb,
    TransactionOptions, TxnCursor, TxnIterator, UpdatableCursor,
};
// `ValueKind` names what each `BatchEntry` of a batch does (a batch of the change feed,
// `Db::updates_since`, read back with `WriteBatch::iter`).
pub use key::ValueKind;
pub use write_batch::{
    BatchEntry, BatchIter, WriteBatch, MAX_BATCH_LEN, MAX_KEY_LEN, MAX_VALUE_LEN,
};
pub use write_buffer_manager::WriteBufferManager;
