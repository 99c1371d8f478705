//! One memory budget for the memtables of several column families and databases (RocksDB's
//! `WriteBufferManager`), shared by giving each database the same `Arc`
//! (`Options::write_buffer_manager`; `Options::db_write_buffer_size` makes one for a single
//! database).
//!
//! Each database reports the memory its memtables hold (active and immutable, all
//! families) as a client of the manager: at each write group and after each flush. When the
//! total reaches `buffer_size`, a database's next write group switches its largest active
//! memtable to be flushed, if it has no flush pending already (so a database sends one flush
//! at a time for the budget, not one per write). With `allow_stall`, writers then wait while
//! the total stays at or above the budget and their database has a flush pending that will
//! release memory (a database with nothing to flush goes on: waiting would wait for
//! nothing).
//!
//! Invariant: `total` is the sum of the clients' last reports; every change of it wakes the
//! stalled writers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

/// How long a stalled writer waits before it looks again (a close, say, wakes nobody).
const STALL_SLICE: Duration = Duration::from_millis(10);

#[derive(Default)]
struct Usage {
    by_client: HashMap<u64, usize>,
    total: usize,
}

/// A memory budget for memtables shared by column families and databases; see the module
/// comment.
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, Options, WriteBufferManager};
///
/// // 64 MiB for the memtables of both databases; writers wait when it is used up.
/// let budget = Arc::new(WriteBufferManager::new(64 << 20, true));
/// let (a, b) = (tempfile::tempdir()?, tempfile::tempdir()?);
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.write_buffer_manager = Some(budget.clone());
/// let first = Db::open(a.path(), options.clone())?;
/// let second = Db::open(b.path(), options)?;
/// first.put(b"k", b"v")?;
/// second.put(b"k", b"v")?;
/// assert!(budget.memory_usage() > 0);
/// # first.close()?;
/// # second.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct WriteBufferManager {
    buffer_size: AtomicUsize,
    allow_stall: bool,
    usage: Mutex<Usage>,
    released: Condvar,
    next_client: AtomicU64,
}

impl std::fmt::Debug for WriteBufferManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteBufferManager")
            .field("buffer_size", &self.buffer_size())
            .field("memory_usage", &self.memory_usage())
            .field("allow_stall", &self.allow_stall)
            .finish()
    }
}

impl WriteBufferManager {
    /// A budget of `buffer_size` bytes of memtables (0: no budget, memory only counted);
    /// with `allow_stall`, writers wait while it is used up (see the module comment).
    pub fn new(buffer_size: usize, allow_stall: bool) -> WriteBufferManager {
        WriteBufferManager {
            buffer_size: AtomicUsize::new(buffer_size),
            allow_stall,
            usage: Mutex::new(Usage::default()),
            released: Condvar::new(),
            next_client: AtomicU64::new(1),
        }
    }

    /// The budget in bytes (0: none).
    pub fn buffer_size(&self) -> usize {
        self.buffer_size.load(Ordering::Relaxed)
    }

    /// Changes the budget; stalled writers look again.
    pub fn set_buffer_size(&self, buffer_size: usize) {
        self.buffer_size.store(buffer_size, Ordering::Relaxed);
        let _usage = self.usage.lock();
        self.released.notify_all();
    }

    /// Bytes the memtables of every database using it hold now (as last reported).
    pub fn memory_usage(&self) -> usize {
        self.usage.lock().total
    }

    /// Whether writers wait while the budget is used up.
    pub fn allow_stall(&self) -> bool {
        self.allow_stall
    }

    /// Whether the budget is used up: a database should flush.
    pub fn should_flush(&self) -> bool {
        let limit = self.buffer_size();
        limit > 0 && self.memory_usage() >= limit
    }

    /// A new client (a database) with nothing reported.
    pub(crate) fn register(&self) -> u64 {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }

    /// Client `client` now holds `bytes`.
    pub(crate) fn report(&self, client: u64, bytes: usize) {
        let mut usage = self.usage.lock();
        let before = usage.by_client.insert(client, bytes).unwrap_or(0);
        usage.total = usage.total - before + bytes;
        if bytes < before {
            self.released.notify_all();
        }
    }

    /// Client `client` holds nothing any more (its database closed).
    pub(crate) fn unregister(&self, client: u64) {
        let mut usage = self.usage.lock();
        if let Some(bytes) = usage.by_client.remove(&client) {
            usage.total -= bytes;
        }
        self.released.notify_all();
    }

    /// With `allow_stall`, waits while the budget is used up and `may_wait` says the
    /// caller's database has a flush coming that will release memory; returns whether it
    /// waited.
    pub(crate) fn stall_while_full(&self, may_wait: &dyn Fn() -> bool) -> bool {
        if !self.allow_stall {
            return false;
        }
        let mut waited = false;
        let mut usage = self.usage.lock();
        loop {
            let limit = self.buffer_size();
            if limit == 0 || usage.total < limit {
                return waited;
            }
            // Asked without the lock: `may_wait` reads the database's state.
            let wait = parking_lot::MutexGuard::unlocked(&mut usage, may_wait);
            if !wait {
                return waited;
            }
            waited = true;
            self.released.wait_for(&mut usage, STALL_SLICE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_the_sum_of_the_clients_last_reports() {
        let m = WriteBufferManager::new(1000, false);
        let (a, b) = (m.register(), m.register());
        m.report(a, 300);
        m.report(b, 500);
        m.report(a, 600);
        assert_eq!(m.memory_usage(), 1100);
        assert!(m.should_flush());
        m.unregister(b);
        assert_eq!(m.memory_usage(), 600);
        assert!(!m.should_flush());
    }

    #[test]
    fn a_stall_ends_when_memory_is_released_or_nothing_will_release_it() {
        let m = std::sync::Arc::new(WriteBufferManager::new(1000, true));
        let a = m.register();
        m.report(a, 2000);
        assert!(!m.stall_while_full(&|| false), "nothing to wait for");
        let releaser = {
            let m = m.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                m.report(a, 10);
            })
        };
        assert!(m.stall_while_full(&|| true));
        assert_eq!(m.memory_usage(), 10);
        releaser.join().expect("thread");
    }
}
