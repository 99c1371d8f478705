//! The lock order of the database, checked in debug builds.
//!
//! Every lock of [`DbInner`](super::DbInner) has a [`Rank`]; a thread takes locks in
//! increasing rank only, so that no two threads can each wait for a lock the other holds.
//! The ranks, outermost first, are the order written in `db/mod.rs`'s concurrency notes.
//!
//! [`Ranked`] wraps a lock with its rank. In a build with debug assertions (the tests) each
//! thread keeps the ranks it holds, and taking a lock ranked at or below one it holds panics,
//! naming both: an order broken on any path the tests run fails them, where a deadlock would
//! need two threads to meet at the wrong moment. Without debug assertions the wrapper is the
//! bare lock.

use std::ops::{Deref, DerefMut};

use parking_lot::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The place of a lock in the order: a thread holding a lock takes only locks of a higher
/// rank. Locks of one rank are never held together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Rank {
    /// The write leader's state (`CommitPath::writer`): families are created and dropped,
    /// memtables switched, files ingested and checkpoints taken under it.
    Writer,
    /// A write group's memtable inserts (`CommitPath::inserting`), taken before `writer` is
    /// let go; the lead is passed on under it.
    Inserting,
    /// The writers' queue (`CommitPath::queue`): the leader takes its group from it.
    Queue,
    /// The blob files writes put values in (`BlobsAtWrite::active`).
    BlobsAtWrite,
    /// The version set and its manifest (`DbInner::versions`).
    Versions,
    /// The WALs on disk (`WalSet::wals`).
    Wals,
    /// Blob files kept for the WALs that name them (`BlobsAtWrite::for_wals`).
    BlobsForWals,
    /// Tables waiting to be deleted (`ObsoleteFiles::tables`).
    ObsoleteTables,
    /// Blob files waiting to be deleted (`ObsoleteFiles::blobs`).
    ObsoleteBlobs,
    /// The background work's state (`Background::state`), which its condition variable
    /// waits on.
    Background,
    /// The background threads' handles (`Background::threads`).
    BackgroundThreads,
    /// Prepared transactions found at open (`DbInner::prepared`).
    Prepared,
    /// The directory's lock file (`DbInner::lock`).
    DirLock,
    /// The set of live families (`DbInner::families`), replaced whole: read by every
    /// thread, under any other lock, and no lock is taken while it is held.
    Families,
}

/// A lock with its rank.
pub(crate) struct Ranked<L> {
    #[cfg(debug_assertions)]
    rank: Rank,
    lock: L,
}

/// A guard of a [`Ranked`] lock: the rank is let go with the lock.
pub(crate) struct Held<G> {
    guard: G,
    #[cfg(debug_assertions)]
    rank: Rank,
}

/// The guard of a ranked mutex.
pub(crate) type Guard<'a, T> = Held<MutexGuard<'a, T>>;

impl<L> Ranked<L> {
    /// `lock`, ranked `rank`.
    #[cfg_attr(
        not(debug_assertions),
        expect(unused_variables, reason = "the rank is kept only where it is checked")
    )]
    pub fn new(rank: Rank, lock: L) -> Ranked<L> {
        Ranked {
            #[cfg(debug_assertions)]
            rank,
            lock,
        }
    }

    fn hold<'a, G>(&'a self, take: impl FnOnce(&'a L) -> G) -> Held<G> {
        #[cfg(debug_assertions)]
        held::acquire(self.rank);
        Held {
            guard: take(&self.lock),
            #[cfg(debug_assertions)]
            rank: self.rank,
        }
    }
}

impl<T> Ranked<Mutex<T>> {
    /// A mutex holding `value`, ranked `rank`.
    pub fn mutex(rank: Rank, value: T) -> Ranked<Mutex<T>> {
        Ranked::new(rank, Mutex::new(value))
    }

    pub fn lock(&self) -> Guard<'_, T> {
        self.hold(|m| m.lock())
    }
}

impl<T> Ranked<RwLock<T>> {
    /// A read-write lock holding `value`, ranked `rank`.
    pub fn rw(rank: Rank, value: T) -> Ranked<RwLock<T>> {
        Ranked::new(rank, RwLock::new(value))
    }

    pub fn read(&self) -> Held<RwLockReadGuard<'_, T>> {
        self.hold(|l| l.read())
    }

    pub fn write(&self) -> Held<RwLockWriteGuard<'_, T>> {
        self.hold(|l| l.write())
    }
}

impl<T> Ranked<std::sync::Mutex<T>> {
    /// The lock (the standard library's mutex), whose guard comes back even when a holder panicked (what it guards is left
    /// whole by every holder), tried for up to `spin` before the thread sleeps: for a lock
    /// held for about a microsecond at a time, where the standard library's own short spin
    /// gives up and the sleep and the wake-up cost many times the wait (two writers taking
    /// turns at `inserting` slept and woke at almost every write).
    pub fn lock_std_spinning(
        &self,
        spin: std::time::Duration,
    ) -> Held<std::sync::MutexGuard<'_, T>> {
        use std::sync::{PoisonError, TryLockError};
        self.hold(|m| {
            // The clock is read only once the lock was found taken: most takes (one writer)
            // find it free at the first try.
            let mut start = None;
            loop {
                for _ in 0..32 {
                    match m.try_lock() {
                        Ok(guard) => return guard,
                        Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                        Err(TryLockError::WouldBlock) => std::hint::spin_loop(),
                    }
                }
                if start.get_or_insert_with(std::time::Instant::now).elapsed() >= spin {
                    return m.lock().unwrap_or_else(PoisonError::into_inner);
                }
            }
        })
    }
}

impl<T> Guard<'_, T> {
    /// Waits on `cv`, letting go of the lock meanwhile (the rank stays: the thread takes no
    /// other lock while it waits).
    pub fn wait(&mut self, cv: &Condvar) {
        cv.wait(&mut self.guard);
    }

    /// [`Guard::wait`] until `at` at the latest.
    pub fn wait_until(&mut self, cv: &Condvar, at: std::time::Instant) {
        cv.wait_until(&mut self.guard, at);
    }
}

impl<G: Deref> Deref for Held<G> {
    type Target = G::Target;

    fn deref(&self) -> &G::Target {
        &self.guard
    }
}

impl<G: DerefMut> DerefMut for Held<G> {
    fn deref_mut(&mut self) -> &mut G::Target {
        &mut self.guard
    }
}

#[cfg(debug_assertions)]
impl<G> Drop for Held<G> {
    fn drop(&mut self) {
        held::release(self.rank);
    }
}

/// The ranks each thread holds.
#[cfg(debug_assertions)]
mod held {
    use std::cell::RefCell;

    use super::Rank;

    thread_local! {
        static HELD: RefCell<Vec<Rank>> = const { RefCell::new(Vec::new()) };
    }

    /// Notes `rank` taken; panics if the thread holds a lock of that rank or a higher one.
    pub fn acquire(rank: Rank) {
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if let Some(&top) = held.iter().max() {
                assert!(
                    top < rank,
                    "lock order broken: {rank:?} taken while {top:?} is held (see db/mod.rs)"
                );
            }
            held.push(rank);
        });
    }

    /// Notes `rank` let go.
    pub fn release(rank: Rank) {
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if let Some(i) = held.iter().rposition(|&r| r == rank) {
                held.remove(i);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_taken_in_rank_order_pass() {
        let outer = Ranked::mutex(Rank::Writer, ());
        let inner = Ranked::mutex(Rank::Versions, ());
        let _a = outer.lock();
        let _b = inner.lock();
    }

    #[test]
    fn a_lock_let_go_no_longer_counts() {
        let outer = Ranked::mutex(Rank::Writer, ());
        let inner = Ranked::mutex(Rank::Versions, ());
        drop(inner.lock());
        let _a = outer.lock();
        let _b = inner.lock();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "lock order broken: Writer taken while Versions is held")]
    fn a_lock_taken_out_of_order_panics() {
        let outer = Ranked::mutex(Rank::Writer, ());
        let inner = Ranked::mutex(Rank::Versions, ());
        let _b = inner.lock();
        let _a = outer.lock();
    }
}
