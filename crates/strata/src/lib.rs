//! Strata: a persistent, ordered key-value store in the LevelDB and RocksDB family.
//!
//! Writes go to a write-ahead log (group-committed across threads) and an in-memory skiplist;
//! reads see a consistent snapshot without waiting for writers. See [`Db`] for the API and
//! `docs/formats.md` for the bytes on disk.
//!
//! Limits: keys up to [`write_batch::MAX_KEY_LEN`] bytes (1 MiB), values up to
//! [`write_batch::MAX_VALUE_LEN`] (64 MiB), batches up to [`write_batch::MAX_BATCH_LEN`]
//! (1 GiB); larger ones are refused with [`ErrorKind::InvalidArgument`].
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod cache;
pub mod codec;
pub mod compaction;
pub mod db;
pub mod error;
pub mod fs;
#[doc(hidden)]
pub mod fuzzing;
pub mod iterator;
pub mod key;
pub mod log;
pub mod memtable;
pub mod options;
pub mod table;
pub mod util;
pub mod version;
pub mod write_batch;

pub use db::{Db, DbIterator, DbStats, LevelShape, Range, RecoveryReport, Snapshot, TreeShape};
pub use error::{Error, ErrorKind, Result};
pub use options::{
    CompactionStyle, Options, ReadOptions, UniversalOptions, WalRecoveryMode, WriteOptions,
};
pub use write_batch::WriteBatch;
