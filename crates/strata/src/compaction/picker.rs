//! The leveled compaction picker: a pure function of a [`Version`] and the options, so it can
//! be tested from a text description of a tree.
//!
//! Level targets are dynamic (RocksDB's `level_compaction_dynamic_level_bytes`): the last
//! level's target is its actual size (at least `max_bytes_for_level_base`); each level above
//! has the target of the one below divided by the multiplier, stopping at the first level
//! whose target would fall below the base. That level is the *base level*: L0 compacts into
//! it, and the levels between L0 and it stay empty, so a small tree never has a level more
//! than its size needs.
//!
//! Scores: L0's is its file count over `level0_file_num_compaction_trigger`; a level from the
//! base level down to the second-to-last has its bytes over its target. The highest score at
//! or above 1 is compacted: L0 merges all its files with what they overlap in the base level;
//! another level merges its largest file with what it overlaps in the next level, or moves
//! the file down unchanged when nothing there overlaps.

use std::collections::HashSet;
use std::sync::Arc;

use crate::key::user_key;
use crate::version::{FileMeta, Version};

/// The options the picker reads.
#[derive(Debug, Clone, Copy)]
pub struct PickerOptions {
    /// Levels in the tree.
    pub num_levels: usize,
    /// L0 files that trigger an L0 compaction.
    pub level0_file_num_compaction_trigger: usize,
    /// The smallest target of the base level.
    pub max_bytes_for_level_base: u64,
    /// Growth factor between adjacent levels.
    pub max_bytes_for_level_multiplier: f64,
}

/// One compaction to run.
#[derive(Debug, Clone)]
pub struct CompactionTask {
    /// The level of the files being compacted.
    pub level: usize,
    /// The level the outputs go to.
    pub output_level: usize,
    /// Input files at `level` (L0: newest first).
    pub inputs: Vec<Arc<FileMeta>>,
    /// Input files at `output_level` that overlap them.
    pub output_inputs: Vec<Arc<FileMeta>>,
    /// The score that chose it (0 for manual compactions).
    pub score: f64,
}

impl CompactionTask {
    /// True when the task moves one file down without rewriting it.
    pub fn is_trivial_move(&self) -> bool {
        self.level > 0 && self.inputs.len() == 1 && self.output_inputs.is_empty()
    }

    /// Every input file.
    pub fn all_inputs(&self) -> impl Iterator<Item = &Arc<FileMeta>> {
        self.inputs.iter().chain(self.output_inputs.iter())
    }
}

/// Level targets and the base level of a version.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelTargets {
    /// The level L0 compacts into.
    pub base_level: usize,
    /// Target bytes per level (0 for L0 and for levels above the base level).
    pub targets: Vec<u64>,
}

/// Computes the dynamic level targets.
pub fn level_targets(version: &Version, o: &PickerOptions) -> LevelTargets {
    let last = o.num_levels - 1;
    let base = o.max_bytes_for_level_base.max(1);
    let mut targets = vec![0u64; o.num_levels];
    let mut level = last;
    let mut target = version.level_bytes(last).max(base);
    targets[last] = target;
    while level > 1 && (target as f64 / o.max_bytes_for_level_multiplier) as u64 >= base {
        target = (target as f64 / o.max_bytes_for_level_multiplier) as u64;
        level -= 1;
        targets[level] = target;
    }
    // L0 must never compact past a level that holds data (its older versions would then
    // shadow the newer ones below them): the base level is at most the first non-empty
    // level. Levels above the size-based base have no target, so they score high and drain.
    let first_nonempty = (1..o.num_levels).find(|&l| !version.levels[l].is_empty());
    LevelTargets {
        base_level: first_nonempty.map_or(level, |l| l.min(level)),
        targets,
    }
}

/// Compaction scores per level (L0 and base level..last-1); levels without a score get 0.
/// A non-empty level without a target (above the size-based base) scores at least 1.
pub fn scores(version: &Version, o: &PickerOptions, targets: &LevelTargets) -> Vec<f64> {
    let mut s = vec![0.0; o.num_levels];
    s[0] = version.levels[0].len() as f64 / o.level0_file_num_compaction_trigger.max(1) as f64;
    for (level, score) in s
        .iter_mut()
        .enumerate()
        .take(o.num_levels - 1)
        .skip(targets.base_level)
    {
        let bytes = version.level_bytes(level) as f64;
        *score = match targets.targets[level] {
            0 if bytes > 0.0 => 1.0 + bytes,
            0 => 0.0,
            t => bytes / t as f64,
        };
    }
    s
}

/// The files of `files` (a sorted, non-overlapping level) overlapping user keys [lo, hi].
pub fn overlapping(files: &[Arc<FileMeta>], lo: &[u8], hi: &[u8]) -> Vec<Arc<FileMeta>> {
    files
        .iter()
        .filter(|f| user_key(&f.largest) >= lo && user_key(&f.smallest) <= hi)
        .cloned()
        .collect()
}

/// The user-key range covered by `files`.
pub fn key_range(files: &[Arc<FileMeta>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let lo = files.iter().map(|f| user_key(&f.smallest)).min()?;
    let hi = files.iter().map(|f| user_key(&f.largest)).max()?;
    Some((lo.to_vec(), hi.to_vec()))
}

/// Picks the most urgent compaction, skipping any that would touch a file in `busy`.
pub fn pick(version: &Version, o: &PickerOptions, busy: &HashSet<u64>) -> Option<CompactionTask> {
    let targets = level_targets(version, o);
    let scores = scores(version, o, &targets);
    let mut order: Vec<usize> = (0..o.num_levels - 1)
        .filter(|&l| scores[l] >= 1.0)
        .collect();
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
    for level in order {
        let task = if level == 0 {
            compact_level0(version, targets.base_level, scores[0])
        } else {
            compact_level(version, level, scores[level], busy)
        };
        if let Some(t) = task {
            if t.all_inputs().all(|f| !busy.contains(&f.number)) {
                return Some(t);
            }
        }
    }
    None
}

/// All L0 files into the base level.
pub fn compact_level0(version: &Version, base_level: usize, score: f64) -> Option<CompactionTask> {
    let inputs = version.levels[0].clone();
    let (lo, hi) = key_range(&inputs)?;
    Some(CompactionTask {
        level: 0,
        output_level: base_level,
        output_inputs: overlapping(&version.levels[base_level], &lo, &hi),
        inputs,
        score,
    })
}

/// The largest file of `level` not in `busy`, with what it overlaps in the next level.
pub fn compact_level(
    version: &Version,
    level: usize,
    score: f64,
    busy: &HashSet<u64>,
) -> Option<CompactionTask> {
    let file = version.levels[level]
        .iter()
        .filter(|f| !busy.contains(&f.number))
        .max_by_key(|f| f.size)?
        .clone();
    let next = &version.levels[level + 1];
    Some(CompactionTask {
        level,
        output_level: level + 1,
        output_inputs: overlapping(next, user_key(&file.smallest), user_key(&file.largest)),
        inputs: vec![file],
        score,
    })
}

#[cfg(test)]
mod tests;
