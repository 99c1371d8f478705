//! What the experimental policies compute apart from the engine's pickers: the lazy tree's
//! scores, outputs cut at the last level's boundaries, and RocksDB's level targets and scores.

use super::*;

/// The `lazy` policy's scores: L0's flushes over the trigger; a level of runs, its bytes over
/// its target (a level above the base level, left by a tree that shrank, drains first).
pub(super) fn lazy_scores(
    runs: &[Vec<Arc<FileMeta>>],
    o: &PickerOptions,
    targets: &LevelTargets,
) -> Vec<f64> {
    let mut scores = vec![0.0; o.num_levels];
    scores[0] = runs[0].len() as f64 / o.level0_file_num_compaction_trigger.max(1) as f64;
    for level in 1..o.num_levels - 1 {
        let bytes: u64 = runs[level].iter().map(|f| f.size).sum();
        scores[level] = match targets.targets[level] {
            _ if bytes == 0 => 0.0,
            0 => f64::INFINITY,
            t => bytes as f64 / t as f64,
        };
    }
    scores
}

/// The smallest key of each last-level file but the first: the ends of the `lazy` policy's
/// slices.
pub(super) fn last_level_boundaries(files: &[Arc<FileMeta>]) -> Vec<u32> {
    files[1..].iter().map(|f| sim_key(&f.smallest)).collect()
}

/// Where a compaction's outputs are cut.
pub(super) struct Cutter<'a> {
    o: &'a SimOptions,
    /// The files of the level below the output level (none for outputs to L0).
    gps: &'a [Arc<FileMeta>],
    /// False for outputs to L0, which are never cut.
    may_cut: bool,
    /// The engine's rule: grandparents passed, and the bytes of those the output overlaps.
    index: usize,
    overlap: u64,
    seen_key: bool,
    /// The engine's cutter at grandparent boundaries (the `cut` feature).
    boundaries: OutputCutter<'a>,
}

impl<'a> Cutter<'a> {
    pub(super) fn new(o: &'a SimOptions, gps: &'a [Arc<FileMeta>], may_cut: bool) -> Cutter<'a> {
        Cutter {
            o,
            gps,
            may_cut,
            index: 0,
            overlap: 0,
            seen_key: false,
            boundaries: OutputCutter::new(
                gps,
                o.target_file_size_base,
                o.max_compaction_bytes(),
                Default::default(),
            ),
        }
    }

    /// True when the output holding `size` bytes so far is to be finished before key `k`.
    pub(super) fn cut_before(&mut self, k: u32, size: u64) -> bool {
        if self.o.policy.cut {
            let may_cut = self.may_cut && size > 0;
            return self.boundaries.cut_before(&k.to_be_bytes(), size, may_cut);
        }
        // The engine's rule before it cut at grandparent boundaries: the target size and the
        // overlap limit only.
        while self.index < self.gps.len() && sim_key(&self.gps[self.index].largest) < k {
            if self.seen_key {
                self.overlap += self.gps[self.index].size;
            }
            self.index += 1;
        }
        self.seen_key = true;
        let overlap_full = self.overlap > self.o.max_compaction_bytes();
        let cut =
            self.may_cut && size > 0 && (size >= self.o.target_file_size_base || overlap_full);
        if cut {
            self.overlap = 0;
        }
        cut
    }
}

/// RocksDB's dynamic level targets (`VersionStorageInfo::CalculateBaseBytes`), in the form
/// of `LevelTargets` (0: no target): the base level is sized from the largest level below
/// L0 divided by the multiplier per level, and every level from the base down gets a target
/// of at least `max_bytes_for_level_base`. Also returns the lowest level holding data above
/// where the levels would start if sized from the largest one (RocksDB drains those).
pub fn rocksdb_targets(v: &Version, o: &PickerOptions) -> (LevelTargets, Option<usize>) {
    let n = o.num_levels;
    let mult = o.max_bytes_for_level_multiplier;
    let base_max = o.max_bytes_for_level_base.max(1);
    let base_min = (base_max as f64 / mult) as u64;
    let mut targets = vec![0u64; n];
    let largest = (1..n).map(|l| v.level_bytes(l)).max().unwrap_or(0);
    let Some(first) = (1..n).find(|&l| !v.levels[l].is_empty()) else {
        return (
            LevelTargets {
                base_level: n - 1,
                targets,
            },
            None,
        );
    };
    let mut unnecessary = None;
    let mut size = largest;
    for l in (first..n - 1).rev() {
        size = (size as f64 / mult) as u64;
        if unnecessary.is_none() && size <= base_min {
            unnecessary = Some(l);
        }
    }
    let mut base_level = first;
    let base_size = if size <= base_min {
        base_min + 1
    } else {
        while base_level > 1 && size > base_max {
            base_level -= 1;
            size = (size as f64 / mult) as u64;
        }
        size.clamp(1, base_max)
    };
    let mut raw = base_size;
    for (l, t) in targets.iter_mut().enumerate().skip(base_level) {
        if l > base_level {
            raw = (raw as f64 * mult) as u64;
        }
        *t = raw.max(base_max);
    }
    (
        LevelTargets {
            base_level,
            targets,
        },
        unnecessary,
    )
}

/// RocksDB's dynamic-level compaction scores (`VersionStorageInfo::ComputeCompactionScore`,
/// leveled, nothing being compacted): L0's file count over the trigger, raised to 1.01 once
/// L0 holds `max_bytes_for_level_base` and to its bytes over the base level's (size or
/// target) when larger than the base level's target, then scaled by 10 when over 1; a level
/// under its target, its bytes over the target; over it, 10 times its bytes over the target
/// plus the bytes still to come down from above (L0's, and each level's excess); a level with
/// data above the base level (at or above `unnecessary`) at least 10.01.
pub fn rocksdb_scores(
    v: &Version,
    o: &PickerOptions,
    t: &LevelTargets,
    unnecessary: Option<usize>,
) -> Vec<f64> {
    const SCALE: f64 = 10.0;
    let n = o.num_levels;
    let mut s = vec![0.0; n];
    let l0 = v.level_bytes(0);
    let mut score = v.levels[0].len() as f64 / o.level0_file_num_compaction_trigger.max(1) as f64;
    let base_target = match t.targets[t.base_level] {
        0 => u64::MAX,
        t => t,
    };
    if l0 >= o.max_bytes_for_level_base {
        score = score.max(1.01);
    }
    if l0 > base_target {
        let base_bytes = v.level_bytes(t.base_level).max(base_target);
        score = score.max(l0 as f64 / base_bytes as f64);
    }
    s[0] = if score > 1.0 { score * SCALE } else { score };
    let mut coming_down = l0 as f64;
    let lowest_above_base = unnecessary.or(t.base_level.checked_sub(1));
    for (level, slot) in s.iter_mut().enumerate().take(n - 1).skip(1) {
        let bytes = v.level_bytes(level);
        let above_base = lowest_above_base.is_some_and(|u| level <= u);
        let target = match t.targets[level] {
            0 => u64::MAX,
            t => t,
        };
        let mut score = if bytes < target {
            bytes as f64 / target as f64
        } else {
            bytes as f64 / (target as f64 + coming_down) * SCALE
        };
        if above_base && bytes > 0 {
            let depth = lowest_above_base.unwrap_or(level) - level;
            score = score.max(SCALE * (1.001 + 0.001 * depth as f64));
        }
        if above_base {
            coming_down += bytes as f64;
        } else if bytes > target {
            coming_down += (bytes - target) as f64;
        }
        *slot = score;
    }
    s
}
