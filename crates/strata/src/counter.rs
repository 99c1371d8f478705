//! A statistics counter that many threads add to at once, without sharing a cache line.
//!
//! A plain `AtomicU64` that every lookup increments is one cache line written by every core:
//! each add has to take the line from the core that added last, and two threads reading
//! different keys spend their time passing the line back and forth (a get added to five
//! such counters). A [`StripedCounter`] is split into [`STRIPES`] atomics, each on a line
//! of its own; a thread always adds to the same stripe (chosen round-robin when it first
//! adds to any counter), so a thread's adds stay in its core's cache. Reading sums the
//! stripes.
//!
//! The sum is not a snapshot: adds that race with a read may or may not be in it, as with
//! one relaxed atomic. Threads beyond [`STRIPES`] share stripes, which is correct and only
//! slower.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The stripes of each counter: more than the threads that read at once in practice.
pub const STRIPES: usize = 16;

/// One stripe: 128 bytes, since x86 processors fetch lines in adjacent pairs and a stripe
/// sharing a pair with another thread's would still bounce.
#[repr(align(128))]
#[derive(Default)]
struct Stripe(AtomicU64);

/// A counter for many threads; see the module doc.
pub struct StripedCounter {
    stripes: [Stripe; STRIPES],
}

impl Default for StripedCounter {
    fn default() -> StripedCounter {
        StripedCounter {
            stripes: std::array::from_fn(|_| Stripe::default()),
        }
    }
}

impl std::fmt::Debug for StripedCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.get())
    }
}

impl StripedCounter {
    /// Adds `n`.
    #[inline]
    pub fn add(&self, n: u64) {
        self.stripes[stripe()].0.fetch_add(n, Ordering::Relaxed);
    }

    /// The sum of every add since creation or the last reset.
    pub fn get(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }

    /// Sets the counter back to zero (adds racing with it may survive, as with one atomic
    /// stored to).
    pub fn reset(&self) {
        for s in &self.stripes {
            s.0.store(0, Ordering::Relaxed);
        }
    }
}

/// The calling thread's stripe.
#[inline]
fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    STRIPE.with(|s| match s.get() {
        usize::MAX => {
            let chosen = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
            s.set(chosen);
            chosen
        }
        chosen => chosen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_from_many_threads_sum_up() {
        let c = std::sync::Arc::new(StripedCounter::default());
        // More threads than stripes, so that some share one.
        let threads: Vec<_> = (0..STRIPES + 4)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        c.add(t as u64 + 1);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let n = (STRIPES + 4) as u64;
        assert_eq!(c.get(), 1000 * n * (n + 1) / 2);
        c.reset();
        assert_eq!(c.get(), 0);
        c.add(3);
        assert_eq!(c.get(), 3);
    }

    #[test]
    fn threads_take_stripes_in_turn() {
        let mine = stripe();
        assert_eq!(stripe(), mine, "a thread keeps its stripe");
        let others: Vec<usize> = (0..4)
            .map(|_| std::thread::spawn(stripe).join().unwrap())
            .collect();
        // Other tests' threads may take stripes in between; four threads in a row still
        // differ somewhere unless a multiple of STRIPES threads started between each.
        assert!(others.windows(2).any(|w| w[0] != w[1]));
    }
}
