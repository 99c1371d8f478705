//! The `iter` operation of the workers: a walk of one family with read options drawn at
//! random (db_stress's iterator checks), checked against the oracle.
//!
//! A walk is an [`IterPlan`]: a start key and a direction; `lower_bound` / `upper_bound`
//! (each present or not); with a prefix extractor (`--prefix_size`), either
//! `prefix_same_as_start` or `total_order_seek` (without one of them a walk across prefixes
//! may miss keys by design); a `readahead_size`; `fill_cache` off one walk in four (its
//! blocks read and dropped, the cache left to the other threads); and, one walk in four, a
//! snapshot taken before the thread writes a few of its keys in the walk's range, so that
//! the walk must see the values its keys had when the snapshot was taken, not the new ones.
//!
//! The check: the keys the walk may return are its *domain*, the key space cut to the bounds
//! (and, with `prefix_same_as_start`, to the start key's prefix). Every key returned lies in
//! the domain, in the walk's order, and is well formed and of the family; an owned key holds
//! its expected value (the oracle's committed one, or the one recorded at the snapshot); no
//! owned key of the family that is live (then) lies in the domain between two keys returned,
//! nor past the last one when the walk ran off the end.

use super::worker::Worker;
use super::*;
use strata::ReadOptions;

/// How the walk treats prefixes (with a prefix extractor only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PrefixMode {
    /// No prefix extractor: plain walks.
    None,
    /// `prefix_same_as_start`: the walk ends at the first key of another prefix.
    SameAsStart,
    /// `total_order_seek`: the prefix filters are ignored.
    TotalOrder,
}

/// One walk's read options and start.
#[derive(Debug, Clone, Copy)]
pub(super) struct IterPlan {
    pub(super) start: u64,
    pub(super) forward: bool,
    /// Key indexes of the bounds: lower inclusive, upper exclusive.
    pub(super) lower: Option<u64>,
    pub(super) upper: Option<u64>,
    pub(super) prefix: PrefixMode,
    pub(super) snapshot: bool,
    pub(super) readahead_size: usize,
    pub(super) fill_cache: bool,
    /// Entries to walk at most.
    pub(super) steps: u32,
}

/// The keys a key of index `k` shares its prefix with, for a prefix of `len` bytes of the
/// key format (`k` and 8 digits).
pub(super) fn prefix_range(k: u64, len: usize) -> std::ops::Range<u64> {
    let digits = len.saturating_sub(1).min(8) as u32;
    let group = 10u64.pow(8 - digits);
    let first = k - k % group;
    first..first + group
}

impl Worker<'_> {
    /// Draws a walk's plan.
    pub(super) fn draw_iter_plan(&mut self) -> IterPlan {
        let keys = self.a.keys;
        let mut start = self.rng.below(keys);
        let near = |rng: &mut Rng, k: u64| {
            let span = 1 + rng.below(200);
            if rng.one_in(2) {
                k.saturating_sub(span)
            } else {
                (k + span).min(keys)
            }
        };
        let mut lower = self.rng.one_in(2).then(|| near(&mut self.rng, start));
        let mut upper = self.rng.one_in(2).then(|| near(&mut self.rng, start));
        if let (Some(l), Some(u)) = (lower, upper) {
            if l > u {
                (lower, upper) = (Some(u), Some(l));
            }
        }
        let prefix = match (self.a.prefix_size, self.rng.one_in(2)) {
            (0, _) => PrefixMode::None,
            (_, true) => PrefixMode::SameAsStart,
            (_, false) => PrefixMode::TotalOrder,
        };
        if prefix == PrefixMode::SameAsStart {
            // The prefix is the seek target's: keep the target inside the bounds, where the
            // engine seeks to it as it is.
            let lo = lower.unwrap_or(0);
            let hi = upper.unwrap_or(keys);
            if lo < hi {
                start = start.clamp(lo, hi - 1);
            }
        }
        IterPlan {
            start,
            forward: self.rng.one_in(2),
            lower,
            upper,
            prefix,
            snapshot: self.rng.one_in(4),
            readahead_size: [0, 0, 16 << 10, 256 << 10][self.rng.below(4) as usize],
            fill_cache: !self.rng.one_in(4),
            steps: 50,
        }
    }

    /// A walk with a random plan.
    pub(super) fn iterate(&mut self) -> Result<(), String> {
        let plan = self.draw_iter_plan();
        self.iterate_with(plan)
    }

    /// The walk of `plan`, checked (see the module's doc).
    pub(super) fn iterate_with(&mut self, plan: IterPlan) -> Result<(), String> {
        let family = self.db.family_of(plan.start);
        let mut lo = plan.lower.unwrap_or(0);
        let mut hi = plan.upper.unwrap_or(self.a.keys).min(self.a.keys);
        if plan.prefix == PrefixMode::SameAsStart {
            let same = prefix_range(plan.start, self.a.prefix_size);
            lo = lo.max(same.start);
            hi = hi.min(same.end);
        }
        let mut options = ReadOptions::default();
        options.lower_bound = plan.lower.map(key);
        options.upper_bound = plan.upper.map(key);
        options.prefix_same_as_start = plan.prefix == PrefixMode::SameAsStart;
        options.total_order_seek = plan.prefix == PrefixMode::TotalOrder;
        options.readahead_size = plan.readahead_size;
        options.fill_cache = plan.fill_cache;
        // With a snapshot: the thread's keys as they are now, then a few of them written.
        let mut at_snapshot = None;
        if plan.snapshot {
            options.snapshot = Some(self.db.snapshot());
            let ids: Vec<u32> = self
                .own
                .clone()
                .map(|k| self.oracle.state(k).committed)
                .collect();
            at_snapshot = Some(ids);
            let first = lo.max(self.own.start);
            let last = hi.min(self.own.end);
            for _ in 0..1 + self.rng.below(3) {
                if first < last {
                    let k = first + self.rng.below(last - first);
                    match self.rng.one_in(4) {
                        true => self.delete(k, false)?,
                        false => self.put(k)?,
                    }
                }
            }
        }
        let expected = |w: &Self, k: u64| match &at_snapshot {
            Some(ids) => ids[(k - w.own.start) as usize],
            None => w.oracle.state(k).committed,
        };
        let mut it = match self.db.iter_opt(family, &options) {
            Ok(it) => it,
            Err(e) => return self.read_error(e, "iterator"),
        };
        if plan.forward {
            it.seek(key(plan.start));
        } else {
            it.seek_for_prev(key(plan.start));
        }
        // The keys of the domain not yet passed: [next, hi) going forward, [lo, next) going
        // backward.
        let mut next = if plan.forward {
            plan.start.max(lo)
        } else {
            (plan.start + 1).min(hi)
        };
        let what = format!("iterator {plan:?}");
        let mut steps = 0;
        while it.valid() && steps < plan.steps {
            let k = key_index(it.key())
                .filter(|&k| self.db.family_of(k) == family)
                .ok_or_else(|| format!("{what}: a key outside the family's key space"))?;
            let in_order = match plan.forward {
                true => k >= next && k < hi,
                false => k < next && k >= lo,
            };
            if !in_order {
                return Err(format!(
                    "{what}: returned key {k}, outside the keys left to walk (the bounds and \
                     prefix allow [{lo}, {hi}), the walk is at {next})"
                ));
            }
            let passed = if plan.forward { next..k } else { k + 1..next };
            self.check_none_live_by(passed, family, &expected, &what)?;
            let id = value_id(k, it.value(), self.a)
                .ok_or_else(|| format!("{what}: key {k} holds a value that is no value of it"))?;
            if self.owns(k) && id != expected(self, k) {
                // The status too: an iterator that met a read error must say so and stop.
                return Err(format!(
                    "{what}: key {k} has value id {id}, expected {} (iterator status: {:?})",
                    expected(self, k),
                    it.status()
                ));
            }
            next = if plan.forward { k + 1 } else { k };
            steps += 1;
            if plan.forward {
                it.next();
            } else {
                it.prev();
            }
        }
        if let Err(e) = it.status() {
            return self.read_error(e, "iterator");
        }
        if !it.valid() {
            // The walk reached the end of its domain: nothing live may lie beyond.
            let rest = if plan.forward { next..hi } else { lo..next };
            self.check_none_live_by(rest, family, &expected, &what)?;
        }
        Ok(())
    }

    /// Fails if an owned key of `family` in `keys` is live by `expected` (a walk passed
    /// over it).
    fn check_none_live_by(
        &self,
        keys: std::ops::Range<u64>,
        family: usize,
        expected: &dyn Fn(&Self, u64) -> u32,
        what: &str,
    ) -> Result<(), String> {
        match keys
            .filter(|&k| self.owns(k) && self.db.family_of(k) == family)
            .find(|&k| expected(self, k) != 0)
        {
            Some(k) => Err(format!("{what}: skipped live key {k}")),
            None => Ok(()),
        }
    }
}
