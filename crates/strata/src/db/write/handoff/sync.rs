//! The group commit handoff's atomics, locks and spin, in one place so that a model checker
//! can stand in for them: std's atomic and parking_lot's mutex and condition variable in
//! every build, loom's under `--cfg loom` (`scripts/loom.sh`), which then runs the handoff's
//! threads in every interleaving its bounds allow (see the `loom` test module). The names
//! are re-exports or thin wrappers, inlined: a normal build compiles to the same code as with
//! parking_lot's types named directly.
//!
//! The one difference is the spin before a waiter sleeps ([`spin_until`]): in a normal build
//! it looks at a flag for `SPIN_FOR` of the clock; under loom, which has no clock and makes
//! every look at an atomic a point where its search may switch threads, it looks
//! [`LOOM_SPINS`] times and no more. That keeps both of the waiter's paths (the flag seen
//! while spinning, and the sleep on the condition variable after it) in every model without
//! a state space that grows with each spin. It does not call loom's spin hint between looks:
//! that is a yield, after which loom runs the other threads first, so the waiter would reach
//! its sleep only when every other thread was blocked, and a wake-up lost while it sleeps
//! (the slot set without a notify) went unseen by the two-writer model.

#[cfg(not(loom))]
use std::time::Instant;

#[cfg(loom)]
pub(super) use loom::sync::atomic::AtomicBool;
#[cfg(not(loom))]
pub(super) use std::sync::atomic::AtomicBool;
/// loom takes std's orderings.
pub(super) use std::sync::atomic::Ordering as AtomicOrdering;

#[cfg(not(loom))]
pub(super) use parking_lot::MutexGuard;

/// parking_lot's mutex in a normal build, loom's under `--cfg loom`, with parking_lot's
/// interface (a guard, no poisoning): a panic in a model fails the model, so a poisoned lock
/// is only ever seen on the way out.
pub(super) struct Mutex<T>(
    #[cfg(not(loom))] parking_lot::Mutex<T>,
    #[cfg(loom)] loom::sync::Mutex<T>,
);

#[cfg(loom)]
pub(super) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    #[inline(always)]
    pub(super) fn new(value: T) -> Mutex<T> {
        #[cfg(not(loom))]
        return Mutex(parking_lot::Mutex::new(value));
        #[cfg(loom)]
        return Mutex(loom::sync::Mutex::new(value));
    }

    #[inline(always)]
    pub(super) fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(not(loom))]
        return self.0.lock();
        #[cfg(loom)]
        return self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}

/// A condition variable that takes and gives back its guard (std's and loom's way), over
/// parking_lot's (which borrows it) in a normal build.
pub(super) struct Condvar(
    #[cfg(not(loom))] parking_lot::Condvar,
    #[cfg(loom)] loom::sync::Condvar,
);

impl Condvar {
    #[inline(always)]
    pub(super) fn new() -> Condvar {
        #[cfg(not(loom))]
        return Condvar(parking_lot::Condvar::new());
        #[cfg(loom)]
        return Condvar(loom::sync::Condvar::new());
    }

    /// Lets go of `guard`'s lock until notified (or woken spuriously), then takes it again.
    #[inline(always)]
    pub(super) fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        #[cfg(not(loom))]
        {
            let mut guard = guard;
            self.0.wait(&mut guard);
            guard
        }
        #[cfg(loom)]
        self.0
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[inline(always)]
    pub(super) fn notify_one(&self) {
        self.0.notify_one();
    }
}

/// How long a waiting writer spins before it sleeps: a small group commit (a WAL append and a
/// memtable insert of a few entries) takes a few microseconds. `inserting` is tried as long
/// (`write/group.rs`).
#[cfg_attr(loom, allow(dead_code))]
pub(in crate::db) const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(20);
/// Spins between two looks at the clock.
#[cfg(not(loom))]
const SPINS_PER_CLOCK_READ: u32 = 32;
/// Looks at the flag under loom before the waiter sleeps (module doc).
#[cfg(loom)]
pub(super) const LOOM_SPINS: u32 = 2;

/// Returns when `done` says so, or once the spin's budget is spent (module doc).
#[inline(always)]
pub(super) fn spin_until(done: impl Fn() -> bool) {
    #[cfg(not(loom))]
    {
        let start = Instant::now();
        loop {
            for _ in 0..SPINS_PER_CLOCK_READ {
                if done() {
                    return;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= SPIN_FOR {
                return;
            }
        }
    }
    #[cfg(loom)]
    for _ in 0..LOOM_SPINS {
        if done() {
            return;
        }
    }
}
