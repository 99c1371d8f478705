//! What reads have paid for a version's L0 files: the measure behind read-triggered
//! compaction (LevelDB's seek compaction and Pebble's read-triggered compactions do the
//! same for their own reasons).
//!
//! L0 files below the compaction trigger stay where they are until more flushes come, and
//! each one is a sorted run that every read passes: a seek positions a cursor in each L0
//! file, and a get that does not find its key in one has at least checked its filter. After
//! a burst of writes the last few flushes can sit there for as long as reads go on. Reads
//! add what those runs cost them to the version's [`ReadCharge`], counted in bytes of
//! compaction input that take as long to merge ([`SEEK_CHARGE`], [`GET_CHARGE`] and
//! [`SEARCH_CHARGE`], measured:
//! docs/benchmarks.md, "The read charges behind read-triggered compaction"). Once the charge
//! reaches what merging L0 into the level below would read
//! ([`Version::l0_merge_input_bytes`]), the reads have paid for that merge, and the leveled
//! picker schedules it (a rent-or-buy rule: the reads never pay more than twice what the
//! better of the two choices would have cost them).
//!
//! Reads on many threads share a version: each thread adds only every
//! [`SAMPLE_EVERY`]th charge, times that many, so that they meet on the shared counter once
//! in that many reads. A new version that keeps every L0 file of the one before (a flush
//! added one, or a compaction ran below L0) starts from that one's charge: the files still
//! cost what reads paid for them, and the merge is still to be done. Any other new version
//! starts at zero: its L0 is another set of files. A database
//! closed with a charge leaves it for the next process to open it (`db/read_charges.rs`).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::Version;

/// A seek's charge for each L0 table it positions a cursor in, in bytes of compaction input
/// (the measurement behind it: docs/benchmarks.md, "The read charges behind read-triggered
/// compaction").
pub const SEEK_CHARGE: u64 = 460;
/// A get's charge for each L0 table whose filter it checks without finding its key there.
pub const GET_CHARGE: u64 = 64;
/// A get's charge for each L0 table without a filter that it searches without finding its
/// key there: an index and a data block looked up, about half a seek's work (measured:
/// docs/benchmarks.md, "The read charges behind read-triggered compaction").
pub const SEARCH_CHARGE: u64 = 230;
/// One charge in this many (per thread) reaches the shared counter, multiplied by it.
pub const SAMPLE_EVERY: u32 = 16;

thread_local! {
    /// Charges this thread has made, for the sampling.
    static CHARGES: Cell<u32> = const { Cell::new(0) };
}

/// The read charge of one version (see the module doc).
#[derive(Default)]
pub struct ReadCharge {
    bytes: AtomicU64,
    /// Set by the charge that reached the version's threshold, so that one reader, once,
    /// wakes the background threads.
    announced: AtomicBool,
}

impl ReadCharge {
    /// Adds `bytes` of read cost (sampled, see the module doc). True for the one call that
    /// brings the charge to `threshold()` (asked for only when the charge is sampled) or past
    /// it: its caller wakes the background threads so that the picker sees the compaction
    /// due.
    pub fn add(&self, bytes: u64, threshold: impl FnOnce() -> u64) -> bool {
        let sampled = CHARGES.with(|c| {
            let n = c.get().wrapping_add(1);
            c.set(n);
            n.is_multiple_of(SAMPLE_EVERY)
        });
        if !sampled || bytes == 0 {
            return false;
        }
        let threshold = threshold();
        let add = bytes * u64::from(SAMPLE_EVERY);
        let total = self.bytes.fetch_add(add, Ordering::Relaxed) + add;
        total >= threshold && !self.announced.swap(true, Ordering::Relaxed)
    }

    /// Bytes charged so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Starts the charge at `bytes` that reads of the same L0 files paid in an earlier
    /// process (`db/read_charges.rs`), before any read of this version.
    pub fn restore(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Sets the charge, for tests of the rule that reads it.
    #[cfg(test)]
    pub fn set(&self, bytes: u64) {
        self.bytes.store(bytes, Ordering::Relaxed);
    }
}

impl ReadCharge {
    /// The charge of a version made from one charged `before`: what reads paid carries over
    /// when the new version keeps every L0 file of the old (a flush added one, or a
    /// compaction below L0 ran), since those files still cost the reads what they paid and
    /// the merge they paid towards is still to be done (larger now, so the rule waits for
    /// more); a version without some of them starts at zero. Without this, a flush every few
    /// seconds would let no charge grow past what reads pay between two flushes.
    pub fn carry_over(&self, before: &ReadCharge) {
        self.restore(before.bytes());
    }
}

/// A clone is the charge of a new version: none.
impl Clone for ReadCharge {
    fn clone(&self) -> Self {
        ReadCharge::default()
    }
}

impl std::fmt::Debug for ReadCharge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReadCharge({})", self.bytes())
    }
}

impl Version {
    /// What merging L0 into the level below would read: the L0 files, and the files of the
    /// first non-empty level below that overlap their key range (the level they would merge
    /// into, or one deeper when the base level is empty: an overestimate then, which only
    /// makes the rule wait longer). 0 when L0 is empty.
    pub fn l0_merge_input_bytes(&self) -> u64 {
        *self.l0_merge_input.get_or_init(|| {
            let l0 = &self.levels[0];
            let order = &self.order;
            let user = crate::key::user_key;
            let Some(lo) = l0
                .iter()
                .map(|f| user(&f.smallest))
                .reduce(|a, b| order.min(a, b))
            else {
                return 0;
            };
            let hi = l0
                .iter()
                .map(|f| user(&f.largest))
                .fold(lo, |a, f| order.max(a, f));
            let below = self.levels.iter().skip(1).find(|files| !files.is_empty());
            let overlapping: u64 = below.map_or(0, |files| {
                super::overlapping_files(order, files, lo, hi)
                    .iter()
                    .map(|f| f.size)
                    .sum()
            });
            self.level_bytes(0) + overlapping
        })
    }

    /// Charges this version's L0 files for `bytes` of read cost (see the module doc); true
    /// when this brought the charge to what merging them would cost.
    pub fn charge_l0_reads(&self, bytes: u64) -> bool {
        if bytes == 0 {
            return false;
        }
        self.read_charge.add(bytes, || self.l0_merge_input_bytes())
    }

    /// True when reads have paid for merging L0 into the level below.
    pub fn l0_reads_paid_for_merge(&self) -> bool {
        !self.levels[0].is_empty() && self.read_charge.bytes() >= self.l0_merge_input_bytes()
    }
}
