//! The universal (tiered) compaction picker, as RocksDB's: a pure function of a version.
//!
//! The tree is a list of *sorted runs*, newest first: each L0 file is one run, and each
//! non-empty level below is one run (its files sorted and non-overlapping). Runs hold
//! disjoint, decreasing sequence ranges, so merging a window of adjacent runs never puts
//! older data above newer.
//!
//! Nothing happens below `level0_file_num_compaction_trigger` runs. At or above it, the first
//! of these that applies is picked:
//!
//! 1. Size amplification: the runs above the oldest together exceed
//!    `max_size_amplification_percent` of its size; all runs merge into the last level.
//! 2. Size ratio: starting from each run in turn (newest first), the window grows while the
//!    next run is at most `size_ratio`% larger than the window so far, up to
//!    `max_merge_width` runs; the first window of at least `min_merge_width` runs is merged.
//! 3. Run count: with more runs than the trigger, the newest runs, enough to bring the count
//!    back to the trigger, are merged. At exactly the trigger nothing is: merging the two
//!    newest runs there, as this picker once did, rewrote about 1.5x the bytes over a
//!    fill (`testdata/sim.txt`).
//!
//! Where the output goes: a merge that includes the oldest run goes to the last level.
//! Otherwise it goes to the level just above the next older run (L0 if that run is in L0 or
//! L1), which is free: levels between two runs are empty.
//!
//! Universal compactions run one at a time: the picker returns nothing while one runs.

use std::sync::Arc;

use super::task::{Busy, CompactionTask, LevelInputs, PickerOptions, Reason};
use crate::comparator::KeyOrder;
use crate::version::{FileMeta, Version};

/// One sorted run of the tree.
#[derive(Debug, Clone)]
pub struct SortedRun {
    /// The level it lives in (several runs may be in L0).
    pub level: usize,
    /// Its files (one for an L0 run).
    pub files: Vec<Arc<FileMeta>>,
    /// Bytes of its files.
    pub size: u64,
}

/// The sorted runs compaction may take, newest first: those of the first `levels` levels
/// (the last level is left out when it is reserved for files ingested behind the data).
pub fn compactable_runs(version: &Version, levels: usize) -> Vec<SortedRun> {
    let mut runs = sorted_runs(version);
    runs.retain(|run| run.level < levels);
    runs
}

/// The sorted runs of `version`, newest first.
pub fn sorted_runs(version: &Version) -> Vec<SortedRun> {
    let l0 = version.levels[0].iter().map(|f| SortedRun {
        level: 0,
        files: vec![f.clone()],
        size: f.size,
    });
    let deeper = version
        .levels
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, files)| !files.is_empty())
        .map(|(level, files)| SortedRun {
            level,
            files: files.clone(),
            size: files.iter().map(|f| f.size).sum(),
        });
    l0.chain(deeper).collect()
}

/// The universal pick (see the module doc).
pub fn pick(version: &Version, o: &PickerOptions, busy: &Busy) -> Option<CompactionTask> {
    if !busy.is_empty() {
        return None;
    }
    let runs = compactable_runs(version, o.num_levels);
    let trigger = o.level0_file_num_compaction_trigger.max(1);
    if runs.len() < trigger || runs.len() < 2 {
        return None;
    }
    let score = runs.len() as f64 / trigger as f64;
    let u = &o.universal;
    let oldest = runs[runs.len() - 1].size;
    let newer: u64 = runs[..runs.len() - 1].iter().map(|r| r.size).sum();
    if newer as u128 * 100 > oldest as u128 * u.max_size_amplification_percent as u128 {
        return Some(task(
            &version.order,
            &runs,
            0,
            runs.len(),
            o,
            score,
            Reason::SizeAmplification,
        ));
    }
    for start in 0..runs.len() {
        let mut window = runs[start].size as f64;
        let mut end = start + 1;
        while end < runs.len()
            && end - start < u.max_merge_width
            && window * (100.0 + u.size_ratio as f64) / 100.0 >= runs[end].size as f64
        {
            window += runs[end].size as f64;
            end += 1;
        }
        if end - start >= u.min_merge_width {
            return Some(task(
                &version.order,
                &runs,
                start,
                end,
                o,
                score,
                Reason::SizeRatio,
            ));
        }
    }
    // Only past the trigger: at exactly the trigger, with no window of similar runs, the
    // runs stay as they are (RocksDB's `max_read_amp` left at its default, the trigger).
    if runs.len() <= trigger {
        return None;
    }
    let count = runs.len() + 1 - trigger;
    Some(task(
        &version.order,
        &runs,
        0,
        count,
        o,
        score,
        Reason::RunCount,
    ))
}

/// The task merging runs `start..end`.
fn task(
    order: &KeyOrder,
    runs: &[SortedRun],
    start: usize,
    end: usize,
    o: &PickerOptions,
    score: f64,
    reason: Reason,
) -> CompactionTask {
    let output_level = match runs.get(end) {
        None => o.num_levels - 1,
        Some(next) => next.level.saturating_sub(1).max(runs[end - 1].level),
    };
    let mut inputs: Vec<LevelInputs> = Vec::new();
    for run in &runs[start..end] {
        match inputs.last_mut() {
            Some(g) if g.level == run.level => g.files.extend(run.files.iter().cloned()),
            _ => inputs.push(LevelInputs {
                level: run.level,
                files: run.files.clone(),
            }),
        }
    }
    CompactionTask {
        inputs,
        output_level,
        score,
        reason,
        order: order.clone(),
    }
}

/// Pending compaction bytes under universal compaction: once the runs reach the trigger,
/// everything above the oldest run is due for a rewrite.
pub fn pending_bytes(version: &Version, o: &PickerOptions) -> u64 {
    let runs = compactable_runs(version, o.num_levels);
    if runs.len() < o.level0_file_num_compaction_trigger.max(2) {
        return 0;
    }
    runs[..runs.len() - 1].iter().map(|r| r.size).sum()
}
