//! Point locks for pessimistic transactions: an exclusive lock per (family, key), waits with
//! a timeout, deadlock detection on the wait-for graph, and expiration of abandoned holders.
//!
//! Invariants:
//! - A key is locked by at most one transaction; the lock is in the stripe its hash picks,
//!   and only that stripe's mutex guards it. Stripes let threads locking different keys run
//!   without meeting on one mutex.
//! - `waits` holds an edge `waiter -> holder` exactly while `waiter` sleeps on a lock held by
//!   `holder`. A waiter adds its edge, then follows the edges from the holder: coming back to
//!   itself is a deadlock, and the waiter that closes the cycle is the one refused.
//! - A holder whose expiration has passed may lose its lock to a waiter: the waiter marks it
//!   expired (its commit then fails) and takes the lock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result, TxnFailure};

/// A transaction's id within one [`LockTable`].
pub(crate) type TxnId = u64;

/// A locked key: the family id and the user key.
pub(crate) type LockKey = (u32, Vec<u8>);

const STRIPES: usize = 32;

/// Who holds a lock.
struct Holder {
    txn: TxnId,
    /// When the holder's locks may be taken by others (`None`: never).
    expires: Option<Instant>,
    /// Set by the waiter that takes an expired holder's lock.
    expired: Arc<AtomicBool>,
}

#[derive(Default)]
struct Stripe {
    locks: Mutex<HashMap<LockKey, Holder>>,
    released: Condvar,
}

/// What a transaction brings to a lock request.
pub(crate) struct Locker<'a> {
    pub id: TxnId,
    pub timeout: Duration,
    pub deadlock_detect: bool,
    pub expires: Option<Instant>,
    pub expired: &'a Arc<AtomicBool>,
}

/// The locks of one database's pessimistic transactions.
pub(crate) struct LockTable {
    stripes: Vec<Stripe>,
    waits: Mutex<HashMap<TxnId, TxnId>>,
}

impl Default for LockTable {
    fn default() -> Self {
        LockTable {
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
            waits: Mutex::new(HashMap::new()),
        }
    }
}

impl LockTable {
    fn stripe(&self, key: &LockKey) -> &Stripe {
        let hash = xxhash_rust::xxh3::xxh3_64_with_seed(&key.1, u64::from(key.0));
        &self.stripes[(hash as usize) % STRIPES]
    }

    /// Locks `key` for `locker`, waiting up to its timeout. Re-locking a key it holds is a
    /// no-op. `describe` names the key in errors.
    pub fn lock(
        &self,
        locker: &Locker<'_>,
        key: &LockKey,
        describe: &dyn Fn() -> String,
    ) -> Result<()> {
        let stripe = self.stripe(key);
        let deadline = Instant::now() + locker.timeout;
        let mut locks = stripe.locks.lock();
        loop {
            let now = Instant::now();
            let (holder, holder_expires) = match locks.get(key) {
                None => break,
                Some(h) if h.txn == locker.id => {
                    self.stop_waiting(locker.id);
                    return Ok(());
                }
                Some(h) if h.expires.is_some_and(|e| now >= e) => {
                    h.expired.store(true, Ordering::Release);
                    break;
                }
                Some(h) => (h.txn, h.expires),
            };
            if locker.deadlock_detect {
                let mut waits = self.waits.lock();
                waits.insert(locker.id, holder);
                if let Some(length) = cycle_through(&waits, locker.id) {
                    waits.remove(&locker.id);
                    return Err(Error::txn(
                        TxnFailure::Deadlock,
                        format!(
                            "deadlock: waiting for the lock on {} would close a cycle of {length} \
                         transactions waiting for each other; this lock request was refused, \
                         the transaction may retry or roll back",
                            describe()
                        ),
                    ));
                }
            }
            if now >= deadline {
                self.stop_waiting(locker.id);
                return Err(Error::txn(
                    TxnFailure::LockTimeout,
                    format!(
                        "lock wait timed out after {} ms: {} is locked by another transaction",
                        locker.timeout.as_millis(),
                        describe()
                    ),
                ));
            }
            let wake = holder_expires.map_or(deadline, |e| e.min(deadline));
            stripe.released.wait_until(&mut locks, wake);
        }
        self.stop_waiting(locker.id);
        locks.insert(
            key.clone(),
            Holder {
                txn: locker.id,
                expires: locker.expires,
                expired: locker.expired.clone(),
            },
        );
        Ok(())
    }

    fn stop_waiting(&self, txn: TxnId) {
        self.waits.lock().remove(&txn);
    }

    /// Releases the locks `txn` holds on `keys` (those taken from it by expiration stay
    /// with their new holder) and wakes their waiters.
    pub fn unlock(&self, txn: TxnId, keys: &[LockKey]) {
        for key in keys {
            let stripe = self.stripe(key);
            let mut locks = stripe.locks.lock();
            if locks.get(key).is_some_and(|h| h.txn == txn) {
                locks.remove(key);
                stripe.released.notify_all();
            }
        }
    }

    /// The number of keys locked now (for tests and stats).
    pub fn locked_keys(&self) -> usize {
        self.stripes.iter().map(|s| s.locks.lock().len()).sum()
    }
}

/// The length of the cycle of waits through `start`, if the edges from it lead back to it.
fn cycle_through(waits: &HashMap<TxnId, TxnId>, start: TxnId) -> Option<usize> {
    let mut length = 1;
    let mut at = *waits.get(&start)?;
    while at != start {
        at = *waits.get(&at)?;
        length += 1;
        if length > waits.len() {
            return None; // a cycle not through `start`: someone else's to find
        }
    }
    Some(length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_found_only_through_the_start() {
        /// Wait-for edges, the waiter to start from, the cycle length through it.
        type Case = (&'static [(u64, u64)], u64, Option<usize>);
        let cases: &[Case] = &[
            (&[], 1, None),
            (&[(1, 2)], 1, None),
            (&[(1, 2), (2, 1)], 1, Some(2)),
            (&[(1, 2), (2, 3), (3, 4), (4, 1)], 1, Some(4)),
            (&[(1, 2), (2, 3), (3, 2)], 1, None),
            (&[(1, 1)], 1, Some(1)),
        ];
        for (edges, start, want) in cases {
            let waits: HashMap<u64, u64> = edges.iter().copied().collect();
            assert_eq!(cycle_through(&waits, *start), *want, "{edges:?}");
        }
    }

    fn locker(id: TxnId, flag: &Arc<AtomicBool>, timeout_ms: u64) -> Locker<'_> {
        Locker {
            id,
            timeout: Duration::from_millis(timeout_ms),
            deadlock_detect: true,
            expires: None,
            expired: flag,
        }
    }

    #[test]
    fn a_held_lock_times_out_then_is_granted_after_release() {
        let table = LockTable::default();
        let flag = Arc::new(AtomicBool::new(false));
        let key = (0, b"k".to_vec());
        table
            .lock(&locker(1, &flag, 10), &key, &|| "k".into())
            .unwrap();
        table
            .lock(&locker(1, &flag, 10), &key, &|| "k".into())
            .unwrap();
        let e = table
            .lock(&locker(2, &flag, 10), &key, &|| "k".into())
            .unwrap_err();
        assert!(e.to_string().contains("timed out after 10 ms"), "{e}");
        table.unlock(1, std::slice::from_ref(&key));
        table
            .lock(&locker(2, &flag, 10), &key, &|| "k".into())
            .unwrap();
        assert_eq!(table.locked_keys(), 1);
    }

    #[test]
    fn an_expired_holder_loses_its_lock() {
        let table = LockTable::default();
        let old = Arc::new(AtomicBool::new(false));
        let key = (0, b"k".to_vec());
        let holder = Locker {
            expires: Some(Instant::now()),
            ..locker(1, &old, 10)
        };
        table.lock(&holder, &key, &|| "k".into()).unwrap();
        let new = Arc::new(AtomicBool::new(false));
        table
            .lock(&locker(2, &new, 1000), &key, &|| "k".into())
            .unwrap();
        assert!(old.load(Ordering::Acquire));
        // The old holder's release leaves the new holder's lock alone.
        table.unlock(1, std::slice::from_ref(&key));
        assert_eq!(table.locked_keys(), 1);
    }
}
