//! Transactions over a [`Db`](crate::Db).
//!
//! - [`IndexedBatch`] (`indexed_batch.rs`): a write batch whose own writes can be read back,
//!   alone or laid over the database (RocksDB's WriteBatchWithIndex).
//! - [`TxnIterator`] (`overlay.rs`): a cursor over such a batch laid over a database cursor.
//! - [`OptimisticTransaction`] (`optimistic.rs`): snapshot isolation without locks; the
//!   commit checks for write-write conflicts under the writer lock and writes atomically.
//!
//! This layer sits above `db` and uses only what a `Db` offers, plus one crate-internal
//! hook: `Db::write_checked`, a write that runs a check first with the writer lock held.

mod indexed_batch;
mod optimistic;
mod overlay;

pub use indexed_batch::IndexedBatch;
pub use optimistic::OptimisticTransaction;
pub use overlay::TxnIterator;
