//! The write-stall decision: whether a write group goes ahead, waits a moment, or stops until
//! background work catches up. A pure function of the tree's state and the options, tested
//! from `testdata/stall.txt`; the write path (`write/group.rs`) acts on it and counts it.
//!
//! Causes, in the order they are checked:
//!
//! - L0 at `level0_stop_writes_trigger` files: writes stop until compaction brings L0 below.
//! - Pending compaction bytes at `hard_pending_compaction_bytes_limit` (0 = none): writes stop.
//! - The active memtable is full and the immutable ones already number
//!   `max_write_buffer_number - 1` (at least 1): writes stop until a flush makes room.
//! - L0 at `level0_slowdown_writes_trigger` files: a delay of 1 ms per file at or above the
//!   trigger, at most 20 ms.
//! - Pending compaction bytes at `soft_pending_compaction_bytes_limit` (0 = none): a delay
//!   growing from 1 ms to 20 ms as they approach the hard limit (1 ms with no hard limit
//!   above the soft one).
//!
//! Each column family is decided on its own and the write group follows the strictest
//! ([`Stall::combine`]): writes are shared, so one family's debt slows them all, as in RocksDB.
//! Both delays may apply to one group. Without automatic compactions nothing would bring L0
//! or the pending bytes down, so those causes are off; the memtable cause stays, since
//! flushes go on.

use std::fmt;
use std::time::Duration;

use crate::options::Options;

/// The longest delay of one slowdown cause.
const MAX_DELAY: Duration = Duration::from_millis(20);
/// The shortest delay of one slowdown cause.
const MIN_DELAY: Duration = Duration::from_millis(1);

/// What the decision looks at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TreeState {
    /// Files in L0.
    pub l0_files: usize,
    /// Estimated bytes compaction still has to rewrite.
    pub pending_compaction_bytes: u64,
    /// Immutable memtables waiting for a flush.
    pub immutable_memtables: usize,
    /// The active memtable is full: this group must switch to a new one.
    pub memtable_full: bool,
}

/// The options the decision reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StallLimits {
    pub auto_compactions: bool,
    pub level0_slowdown_writes_trigger: usize,
    pub level0_stop_writes_trigger: usize,
    pub soft_pending_compaction_bytes_limit: u64,
    pub hard_pending_compaction_bytes_limit: u64,
    pub max_write_buffer_number: usize,
}

impl StallLimits {
    pub fn new(o: &Options) -> StallLimits {
        StallLimits {
            auto_compactions: !o.disable_auto_compactions,
            level0_slowdown_writes_trigger: o.level0_slowdown_writes_trigger,
            level0_stop_writes_trigger: o.level0_stop_writes_trigger,
            soft_pending_compaction_bytes_limit: o.soft_pending_compaction_bytes_limit,
            hard_pending_compaction_bytes_limit: o.hard_pending_compaction_bytes_limit,
            max_write_buffer_number: o.max_write_buffer_number,
        }
    }
}

/// Why writes stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopCause {
    L0Files,
    PendingBytes,
    Memtables,
}

/// The decision for one write group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stall {
    /// Writes wait until this cause clears (the delays are then decided again).
    pub stop: Option<StopCause>,
    /// Delay for L0 at or above the slowdown trigger.
    pub l0_delay: Option<Duration>,
    /// Delay for pending compaction bytes at or above the soft limit.
    pub pending_delay: Option<Duration>,
}

impl Stall {
    /// The decision that satisfies both `self` and `other` (each for one column family): a
    /// stop if either stops, else the longer of each delay.
    pub fn combine(self, other: Stall) -> Stall {
        Stall {
            stop: self.stop.or(other.stop),
            l0_delay: self.l0_delay.max(other.l0_delay),
            pending_delay: self.pending_delay.max(other.pending_delay),
        }
    }
}

/// Decides what a write group does in state `s`.
pub(crate) fn decide(s: &TreeState, limits: &StallLimits) -> Stall {
    let l = limits;
    let hard = l.hard_pending_compaction_bytes_limit;
    let soft = l.soft_pending_compaction_bytes_limit;
    let pending = s.pending_compaction_bytes;
    let memtables_full = s.memtable_full
        && s.immutable_memtables >= l.max_write_buffer_number.saturating_sub(1).max(1);
    let stop = if l.auto_compactions && s.l0_files >= l.level0_stop_writes_trigger {
        Some(StopCause::L0Files)
    } else if l.auto_compactions && hard > 0 && pending >= hard {
        Some(StopCause::PendingBytes)
    } else if memtables_full {
        Some(StopCause::Memtables)
    } else {
        None
    };
    if stop.is_some() || !l.auto_compactions {
        return Stall {
            stop,
            ..Stall::default()
        };
    }
    let l0_delay = (s.l0_files >= l.level0_slowdown_writes_trigger).then(|| {
        let over = (s.l0_files - l.level0_slowdown_writes_trigger + 1) as u32;
        (MIN_DELAY * over).min(MAX_DELAY)
    });
    let pending_delay = (soft > 0 && pending >= soft).then(|| {
        let share = if hard > soft {
            ((pending - soft) as f64 / (hard - soft) as f64).min(1.0)
        } else {
            0.0
        };
        MIN_DELAY + (MAX_DELAY - MIN_DELAY).mul_f64(share)
    });
    Stall {
        stop: None,
        l0_delay,
        pending_delay,
    }
}

impl fmt::Display for Stall {
    /// `go`, `stop: L0Files`, or `delay: l0 3ms, pending 1.5ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(cause) = self.stop {
            return write!(f, "stop: {cause:?}");
        }
        let delays: Vec<String> = [("l0", self.l0_delay), ("pending", self.pending_delay)]
            .into_iter()
            .filter_map(|(name, d)| d.map(|d| format!("{name} {d:?}")))
            .collect();
        if delays.is_empty() {
            write!(f, "go")
        } else {
            write!(f, "delay: {}", delays.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    //! Cases in `testdata/stall.txt`: `limits` sets the options for the cases after it
    //! (`auto=0`, `slowdown=N`, `stop=N`, `soft=N`, `hard=N`, `buffers=N`); `decide`
    //! takes the state (`l0=N pending=N imm=N full`) and prints the decision.
    //! `REWRITE=1 cargo test -p strata --lib stall` rewrites the expected outputs.

    use super::*;

    #[test]
    fn stall_decisions() {
        let mut limits = StallLimits::new(&Options::default());
        datadriven::walk("src/db/testdata/stall.txt", |f| {
            f.run(|case| -> String {
                let mut args = case.clone();
                let mut take = |name: &str| args.try_take_arg::<u64>(name).unwrap();
                match case.directive.as_str() {
                    "limits" => {
                        let d = StallLimits::new(&Options::default());
                        let count =
                            |v: Option<u64>, default: usize| v.map_or(default, |v| v as usize);
                        limits = StallLimits {
                            auto_compactions: take("auto") != Some(0),
                            level0_slowdown_writes_trigger: count(
                                take("slowdown"),
                                d.level0_slowdown_writes_trigger,
                            ),
                            level0_stop_writes_trigger: count(
                                take("stop"),
                                d.level0_stop_writes_trigger,
                            ),
                            soft_pending_compaction_bytes_limit: take("soft")
                                .unwrap_or(d.soft_pending_compaction_bytes_limit),
                            hard_pending_compaction_bytes_limit: take("hard")
                                .unwrap_or(d.hard_pending_compaction_bytes_limit),
                            max_write_buffer_number: count(
                                take("buffers"),
                                d.max_write_buffer_number,
                            ),
                        };
                        format!("{limits:?}\n")
                    }
                    "decide" => {
                        let mut state = TreeState {
                            l0_files: take("l0").unwrap_or(0) as usize,
                            pending_compaction_bytes: take("pending").unwrap_or(0),
                            immutable_memtables: take("imm").unwrap_or(0) as usize,
                            memtable_full: false,
                        };
                        state.memtable_full = args.take_flag("full").unwrap();
                        format!("{}\n", decide(&state, &limits))
                    }
                    other => panic!("unknown directive {other}"),
                }
            })
        });
    }
}
