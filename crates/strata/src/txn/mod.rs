//! Transactions over a [`Db`](crate::Db).
//!
//! - [`TransactionBase`] (`base.rs`): the interface both kinds of transaction share, and
//!   [`TxnCursor`], a transaction's cursor that updates or deletes its current entry in place.
//! - [`IndexedBatch`] (`indexed_batch.rs`): a write batch whose own writes can be read back,
//!   alone or laid over the database (RocksDB's WriteBatchWithIndex).
//! - [`TxnIterator`] (`overlay.rs`): a cursor over such a batch laid over a database cursor.
//! - [`OptimisticTransaction`] (`optimistic.rs`): snapshot isolation without locks; the
//!   commit checks for write-write conflicts under the writer lock and writes atomically.
//! - [`TransactionDb`] and [`Transaction`] (`pessimistic.rs`): key locks taken as the
//!   transaction goes (`lock_table.rs`: striped, with timeouts, deadlock detection and
//!   expiration), so that commits never conflict.
//! - `checks.rs`: the refusals both kinds share.
//!
//! This layer sits above `db` and uses only what a `Db` offers, plus one crate-internal
//! hook: `Db::write_checked`, a write that runs a check first with the writer lock held.

mod base;
mod checks;
mod indexed_batch;
mod lock_table;
mod optimistic;
mod overlay;
mod pessimistic;

pub use base::{TransactionBase, TxnCursor, UpdatableCursor};
pub use indexed_batch::IndexedBatch;
pub use optimistic::OptimisticTransaction;
pub use overlay::TxnIterator;
pub use pessimistic::{Transaction, TransactionDb, TransactionOptions};
