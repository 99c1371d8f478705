//! A limit on the bytes per second flushes and compactions write (RocksDB's `RateLimiter`),
//! shared by every database given the same `Arc` (`Options::rate_limiter`).
//!
//! A token bucket refilled in small intervals: every `refill_period` (10 ms) the bucket is
//! topped up to one period's worth of bytes (`bytes_per_second * refill_period`), never more,
//! so what is not used in a period is not saved for a burst later. A write asks for its bytes
//! before it is made ([`RateLimiter::request`]) and waits until the bucket holds them; a
//! request larger than one period's worth is served in pieces of that size.
//!
//! Invariant (checked by the tests): the bytes granted from the limiter's creation up to
//! any moment `t` never exceed `bytes_per_second * t + refill_bytes` (one period's burst),
//! whatever the number of threads asking.
//!
//! Fairness between the two priorities: requests of each priority are served in the order
//! they came; a flush's (high priority) goes before a compaction's (low), since flushes free
//! the memory writers wait for, except that after `FAIRNESS - 1` high-priority grants in a
//! row a waiting low-priority request is served, so compactions are never starved.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::Result;
use crate::fs::{BackgroundSync, IoClass, WritableFile};

/// How often the bucket is refilled.
const REFILL_PERIOD: Duration = Duration::from_millis(10);
/// Out of this many grants while both priorities wait, one goes to the low priority.
const FAIRNESS: u64 = 10;

/// The priority of a write asking the limiter (RocksDB's `Env::IOPriority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoPriority {
    /// Compaction writes.
    Low,
    /// Flush writes.
    High,
}

impl IoPriority {
    fn index(self) -> usize {
        match self {
            IoPriority::Low => 0,
            IoPriority::High => 1,
        }
    }
}

struct State {
    bytes_per_second: u64,
    /// Bytes that may be granted now.
    available: u64,
    /// When the bucket is next topped up.
    next_refill: Instant,
    /// Per priority: the next ticket to hand out and the ticket being served.
    next_ticket: [u64; 2],
    serving: [u64; 2],
    /// High-priority grants since a low-priority request was last served while waiting.
    high_in_a_row: u64,
    /// Bytes granted, per priority.
    granted: [u64; 2],
    /// Requests served (pieces counted apart), per priority.
    requests: [u64; 2],
}

impl State {
    fn refill_bytes(&self) -> u64 {
        (self.bytes_per_second as u128 * REFILL_PERIOD.as_nanos() / 1_000_000_000).max(1) as u64
    }

    fn waiting(&self, priority: usize) -> bool {
        self.next_ticket[priority] > self.serving[priority]
    }
}

/// Limits the bytes per second of the writes that ask it; see the module comment.
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, Options, RateLimiter};
///
/// let limiter = Arc::new(RateLimiter::new(64 << 20)); // 64 MiB/s for flushes and compactions
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.rate_limiter = Some(limiter.clone()); // share it with other databases too
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"k", b"v")?;
/// db.flush()?;
/// assert!(limiter.total_bytes_through(None) > 0);
/// limiter.set_bytes_per_second(16 << 20); // retuned while it runs
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RateLimiter {
    state: Mutex<State>,
    /// Signalled at every grant and refill.
    changed: Condvar,
    created: Instant,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("bytes_per_second", &self.bytes_per_second())
            .finish_non_exhaustive()
    }
}

impl RateLimiter {
    /// A limiter of `bytes_per_second` (at least 1).
    pub fn new(bytes_per_second: u64) -> RateLimiter {
        let now = Instant::now();
        let mut state = State {
            bytes_per_second: bytes_per_second.max(1),
            available: 0,
            next_refill: now + REFILL_PERIOD,
            next_ticket: [0; 2],
            serving: [0; 2],
            high_in_a_row: 0,
            granted: [0; 2],
            requests: [0; 2],
        };
        state.available = state.refill_bytes();
        RateLimiter {
            state: Mutex::new(state),
            changed: Condvar::new(),
            created: now,
        }
    }

    /// The limit now.
    pub fn bytes_per_second(&self) -> u64 {
        self.state.lock().bytes_per_second
    }

    /// Changes the limit (at least 1); it applies from the next refill.
    pub fn set_bytes_per_second(&self, bytes_per_second: u64) {
        self.state.lock().bytes_per_second = bytes_per_second.max(1);
        self.changed.notify_all();
    }

    /// The most bytes granted at once: one refill period's worth.
    pub fn single_burst_bytes(&self) -> u64 {
        self.state.lock().refill_bytes()
    }

    /// Bytes granted so far, of one priority or (`None`) of both.
    pub fn total_bytes_through(&self, priority: Option<IoPriority>) -> u64 {
        let s = self.state.lock();
        match priority {
            Some(p) => s.granted[p.index()],
            None => s.granted.iter().sum(),
        }
    }

    /// Requests served so far (a large request counts once per piece), of one priority or
    /// (`None`) of both.
    pub fn total_requests(&self, priority: Option<IoPriority>) -> u64 {
        let s = self.state.lock();
        match priority {
            Some(p) => s.requests[p.index()],
            None => s.requests.iter().sum(),
        }
    }

    /// How long since the limiter was made (the time the invariant is stated over).
    pub fn age(&self) -> Duration {
        self.created.elapsed()
    }

    /// Waits until `bytes` may be written at `priority`, then counts them as written.
    pub fn request(&self, bytes: u64, priority: IoPriority) {
        let mut left = bytes;
        while left > 0 {
            let piece = left.min(self.single_burst_bytes());
            self.request_piece(piece, priority);
            left -= piece;
        }
    }

    fn request_piece(&self, bytes: u64, priority: IoPriority) {
        let p = priority.index();
        let mut s = self.state.lock();
        let ticket = s.next_ticket[p];
        s.next_ticket[p] += 1;
        loop {
            let now = Instant::now();
            if now >= s.next_refill {
                let refill = s.refill_bytes();
                s.available = s.available.max(refill);
                // Whole periods from creation: a late refill does not shift the schedule.
                let periods = (now - s.next_refill).as_nanos() / REFILL_PERIOD.as_nanos() + 1;
                s.next_refill += REFILL_PERIOD * periods as u32;
                self.changed.notify_all();
            }
            let my_turn = s.serving[p] == ticket;
            let other = 1 - p;
            let yield_to_other = match priority {
                // A flush waits only for a low-priority request owed its turn.
                IoPriority::High => s.waiting(other) && s.high_in_a_row >= FAIRNESS - 1,
                IoPriority::Low => s.waiting(other) && s.high_in_a_row < FAIRNESS - 1,
            };
            // A piece never exceeds a refill, but the limit may have dropped since it was cut.
            let fits = s.available >= bytes.min(s.refill_bytes());
            if my_turn && !yield_to_other && fits {
                s.available = s.available.saturating_sub(bytes);
                s.serving[p] += 1;
                s.granted[p] += bytes;
                s.requests[p] += 1;
                s.high_in_a_row = match priority {
                    IoPriority::High => s.high_in_a_row + 1,
                    IoPriority::Low => 0,
                };
                self.changed.notify_all();
                return;
            }
            let until = s.next_refill;
            self.changed.wait_until(&mut s, until);
        }
    }
}

/// A file whose appends ask a rate limiter first.
struct RateLimitedFile {
    inner: Box<dyn WritableFile>,
    limiter: Arc<RateLimiter>,
    priority: IoPriority,
}

impl WritableFile for RateLimitedFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.limiter.request(data.len() as u64, self.priority);
        self.inner.append(data)
    }

    fn sync(&mut self) -> Result<()> {
        self.inner.sync()
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn background_sync(&self) -> Option<BackgroundSync> {
        self.inner.background_sync()
    }
}

/// `file`, written by `class`, with its appends limited by `limiter` if there is one: a
/// flush's at high priority, a compaction's at low; other writes are not limited.
pub(crate) fn limit_writes(
    file: Box<dyn WritableFile>,
    limiter: Option<&Arc<RateLimiter>>,
    class: IoClass,
) -> Box<dyn WritableFile> {
    let priority = match class {
        IoClass::Flush => IoPriority::High,
        IoClass::Compaction => IoPriority::Low,
        _ => return file,
    };
    match limiter {
        Some(limiter) => Box::new(RateLimitedFile {
            inner: file,
            limiter: limiter.clone(),
            priority,
        }),
        None => file,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_never_pass_the_rate_plus_one_burst() {
        let limiter = Arc::new(RateLimiter::new(1 << 20));
        let burst = limiter.single_burst_bytes();
        let deadline = Instant::now() + Duration::from_millis(600);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let limiter = limiter.clone();
                std::thread::spawn(move || {
                    let priority = if t % 2 == 0 {
                        IoPriority::High
                    } else {
                        IoPriority::Low
                    };
                    while Instant::now() < deadline {
                        limiter.request(7000, priority);
                        let granted = limiter.total_bytes_through(None) as f64;
                        let allowed = (1 << 20) as f64 * limiter.age().as_secs_f64() + burst as f64;
                        assert!(granted <= allowed, "{granted} granted, {allowed} allowed");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        // Both priorities were served.
        assert!(limiter.total_bytes_through(Some(IoPriority::Low)) > 0);
        assert!(limiter.total_bytes_through(Some(IoPriority::High)) > 0);
    }

    #[test]
    fn a_request_larger_than_a_burst_is_served_in_pieces() {
        let limiter = RateLimiter::new(100_000);
        let burst = limiter.single_burst_bytes();
        assert_eq!(burst, 1000);
        limiter.request(2500, IoPriority::Low);
        assert_eq!(limiter.total_requests(None), 3);
        assert_eq!(limiter.total_bytes_through(Some(IoPriority::Low)), 2500);
    }
}
