//! db_bench's range tombstones in the write steps (`--writes_per_range_tombstone`,
//! `--range_tombstone_width`, `--max_num_range_tombstones`, `--writes_before_delete_range`).
//!
//! Rule, as db_bench's `DoWrite` has it, per thread: after its `n`-th write (1-based), when
//! `n > before`, `(n - before) % every == 0` and `(n - before) / every <= max`, the thread
//! draws one more key `b` from the step's key generator (the next sequential key in fillseq,
//! a random one in fillrandom) and deletes `[key(b), key(b + width))` with one range
//! deletion. So each thread writes at most `max` tombstones, and none when `every` or `max`
//! is 0 (db_bench's defaults). The deletion goes to the column family of its begin key.
//!
//! One difference from db_bench, which adds the range deletion to the batch of the write
//! that reached the count: here it is its own write, made right after that write. With
//! `--batch_size` the batch is cut there (written, then the tombstone, then a new batch), so
//! every write before the tombstone precedes it and every write after it follows it, as in
//! db_bench; only the atomicity of the batch with its tombstone differs. Range deletions
//! count neither as operations of the step nor as user bytes.

use super::BenchArgs;

/// When a write thread adds a range tombstone, and how wide it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeTombstones {
    every: u64,
    /// Width in keys: the tombstone of begin key `b` ends at key `b + width`, excluded.
    pub width: u64,
    max: u64,
    before: u64,
}

impl RangeTombstones {
    /// The rule of `args`, or `None` when it adds no tombstone at all.
    pub fn of(args: &BenchArgs) -> Option<RangeTombstones> {
        let rule = RangeTombstones {
            every: args.writes_per_range_tombstone,
            width: args.range_tombstone_width,
            max: args.max_num_range_tombstones,
            before: args.writes_before_delete_range,
        };
        (rule.every > 0 && rule.max > 0).then_some(rule)
    }

    /// True when a thread's `written`-th write (1-based) is followed by a range tombstone.
    pub fn due(&self, written: u64) -> bool {
        match written.checked_sub(self.before) {
            Some(n) if n > 0 => n % self.every == 0 && n / self.every <= self.max,
            _ => false,
        }
    }

    /// The header line: the rule in words.
    pub fn describe(&self) -> String {
        let after = match self.before {
            0 => String::new(),
            n => format!(" after the first {n}"),
        };
        format!(
            "one of {} keys every {} writes{after}, at most {} per thread",
            self.width, self.every, self.max
        )
    }
}

/// The check of the flags: a tombstone rule that the run cannot follow.
pub fn check_flags(args: &BenchArgs) -> Result<(), String> {
    if args.writes_per_range_tombstone > 0 && args.range_tombstone_width == 0 {
        return Err(
            "--range_tombstone_width must be at least 1 with --writes_per_range_tombstone \
             (a tombstone of width 0 deletes nothing)"
                .into(),
        );
    }
    if args.writes_per_range_tombstone > 0 && args.keys_per_prefix > 0 {
        // A tombstone deletes a run of consecutive key numbers; with --keys_per_prefix
        // consecutive numbers are not consecutive keys.
        return Err(
            "--writes_per_range_tombstone cannot be combined with --keys_per_prefix (a range \
             of key numbers is not a range of keys in that layout)"
                .into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(every: u64, max: u64, before: u64) -> RangeTombstones {
        RangeTombstones {
            every,
            width: 10,
            max,
            before,
        }
    }

    /// Which of the first 30 writes are followed by a tombstone, for rules worked out by
    /// hand from db_bench's condition.
    #[test]
    fn tombstones_follow_every_nth_write_up_to_the_maximum() {
        for (r, expected) in [
            // Every 10th write, at most 2: writes 10 and 20, not 30.
            (rule(10, 2, 0), vec![10, 20]),
            // Every 7th, at most 100: 7, 14, 21, 28.
            (rule(7, 100, 0), vec![7, 14, 21, 28]),
            // After 5 writes, every 10th: 15 and 25.
            (rule(10, 5, 5), vec![15, 25]),
            // Every write, at most 3.
            (rule(1, 3, 0), vec![1, 2, 3]),
            // Before is beyond the step: none.
            (rule(1, 3, 30), vec![]),
        ] {
            let got: Vec<u64> = (0..=30).filter(|&n| r.due(n)).collect();
            assert_eq!(got, expected, "{r:?}");
        }
    }

    #[test]
    fn no_rule_without_a_rate_or_a_maximum() {
        let parse =
            |flags: &[&str]| -> BenchArgs { crate::engine_flags::parse_flags(flags).unwrap() };
        assert_eq!(RangeTombstones::of(&parse(&[])), None);
        // db_bench's default maximum is 0: a rate alone writes no tombstone.
        assert_eq!(
            RangeTombstones::of(&parse(&["--writes_per_range_tombstone=5"])),
            None
        );
        let r = RangeTombstones::of(&parse(&[
            "--writes_per_range_tombstone=5",
            "--max_num_range_tombstones=2",
        ]))
        .unwrap();
        assert_eq!(r.width, 100, "db_bench's default width");
        assert_eq!(
            r.describe(),
            "one of 100 keys every 5 writes, at most 2 per thread"
        );
        let e = check_flags(&parse(&[
            "--writes_per_range_tombstone=5",
            "--range_tombstone_width=0",
        ]))
        .unwrap_err();
        assert!(e.contains("--range_tombstone_width"), "{e}");
    }
}
