//! `libstrata_jni`: the native side of the Java binding of Strata (package `io.strata`).
//!
//! Each Java class that owns engine state (`Strata`, `ColumnFamily`, `Snapshot`,
//! `WriteBatch`, `StrataIterator`, `Transaction`, `TransactionCursor`, `BackupEngine`) holds
//! a `long` handle made by [`handle::into_handle`]: a pointer to a reference-counted shell
//! whose content `close()` takes out. `handle.rs` states who frees what; `error.rs` how
//! engine errors, bad arguments and panics become Java exceptions. One module per Java
//! class (`db.rs` for `Strata`, with its point reads in `db/reads.rs` and its writes in
//! `db/writes.rs`; `txn.rs` for `Transaction`, its reads in `txn/reads.rs`; `family.rs` for
//! `ColumnFamily`, `iter.rs` for `StrataIterator`, `cursor.rs` for `TransactionCursor`, the
//! others by their names), with
//! `stats.rs` for `Strata`'s statistics and `convert.rs` for arguments and options. The native
//! methods on the hot path (gets, puts, a short transaction's begin, get, write and commit)
//! take the `JNIEnv` as the JVM passes it, through `raw.rs`, instead of the jni crate's guard.

/// The engine's memory comes from jemalloc, not from the C library's malloc that the JVM
/// shares: in the three-engine benchmark (bindings/java/bench) a JVM with a 192 MiB heap and
/// a 341 MiB block cache grew to 3 GB of anonymous memory under glibc's malloc, its
/// per-thread arenas keeping what the engine freed (blocks evicted, readahead windows,
/// compaction buffers), and stayed under 0.75 GB with jemalloc. jemalloc's symbols are
/// prefixed, so the JVM's own malloc is untouched.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod backup;
mod batch;
mod convert;
mod cursor;
mod db;
mod error;
mod family;
mod handle;
mod iter;
mod raw;
mod snapshot;
mod stats;
mod txn;

/// Java calls a native method from any thread, and its Cleaner frees handles from its own:
/// every shell must be `Send` and `Sync`.
#[cfg(test)]
mod thread_safety {
    fn send_and_sync<T: Send + Sync>() {}

    #[test]
    fn every_shell_can_be_used_from_any_thread() {
        use crate::handle::Closable;
        send_and_sync::<crate::db::DbShell>();
        send_and_sync::<crate::iter::IterShell>();
        send_and_sync::<crate::txn::TxnShell>();
        send_and_sync::<crate::cursor::CursorShell>();
        send_and_sync::<Closable<strata::ColumnFamily>>();
        send_and_sync::<Closable<strata::Snapshot>>();
        send_and_sync::<Closable<strata::WriteBatch>>();
        send_and_sync::<Closable<strata::BackupEngine>>();
    }
}
