//! Choosing what to compact: a pure function of a [`Version`] and the options, so it can be
//! tested from a text description of a tree (`testdata/*.txt`). The leveled picker is here;
//! the universal one is in [`super::universal`].
//!
//! Leveled level targets are dynamic (RocksDB's `level_compaction_dynamic_level_bytes`): the
//! last level's target is its actual size (at least `max_bytes_for_level_base`); each level
//! above has the target of the one below divided by the multiplier, up to the first level
//! whose quotient is at most `max_bytes_for_level_base`, as RocksDB chooses it. That level is
//! the *base level*: L0 compacts into it, and the levels between L0 and it stay empty. Its
//! target is never below `max_bytes_for_level_base` (RocksDB's floor): a base level held to
//! a fraction of it compacts into the level below with less data per byte rewritten there.
//! Most of the data sits in the last level (about `1 - 1/multiplier` of it), which bounds
//! space-amp, and L0 merges into a level of about the base size, which bounds their cost.
//!
//! Leveled scores: L0's is its file count over `level0_file_num_compaction_trigger`; a level
//! from the base level down to the second-to-last has its bytes over its target. The highest
//! score at or above 1 is compacted: L0 merges all its files with what they overlap in the
//! base level; another level merges the file whose overlap in the next level is smallest for
//! its size (RocksDB's `kMinOverlappingRatio`: the least rewriting per byte moved down), or
//! moves a file down unchanged when nothing there overlaps it. When no level is due, L0 may
//! still move down unchanged, merge once reads have paid for it, or merge once every write is
//! flushed, and old blob files may be collected (each rule at its function).
//!
//! Several compactions may run at once (see [`Busy`]): a task is only picked if none of its
//! files is being compacted and its key range does not meet the output of a running task in
//! the same output level.

use std::sync::Arc;

pub use super::task::{
    key_range, Busy, CompactionTask, LevelInputs, PickerOptions, Reason, Writes,
};
use crate::compaction::fifo::TableAges;
use crate::compaction::style::CompactionStyle;
use crate::comparator::KeyOrder;
use crate::key::user_key;
use crate::version::{FileMeta, Version};

/// Picks the most urgent compaction that can run beside the `busy` ones, for a family whose
/// `writes` are all flushed or not.
#[cfg(any(test, feature = "sim"))]
pub fn pick(
    version: &Version,
    o: &PickerOptions,
    busy: &Busy,
    writes: Writes,
) -> Option<CompactionTask> {
    pick_aged(version, o, busy, writes, &TableAges::default())
}

/// [`pick`] with the tables' ages, which the picks by age read (FIFO's ttl, leveled
/// periodic compaction: see [`super::fifo`]); without them no table's age is known.
pub fn pick_aged(
    version: &Version,
    o: &PickerOptions,
    busy: &Busy,
    writes: Writes,
    ages: &TableAges,
) -> Option<CompactionTask> {
    match o.style {
        CompactionStyle::Leveled => pick_leveled(version, o, busy, writes)
            .or_else(|| super::fifo::pick_periodic(version, o, busy, ages)),
        CompactionStyle::Universal => super::universal::pick(version, o, busy),
        CompactionStyle::Fifo => super::fifo::pick(version, o, busy, ages),
    }
}

/// The compaction score of each level, as the picker sees it: leveled, L0 files over the
/// trigger and other levels' bytes over their targets; universal, sorted runs over the
/// trigger (shown at L0). At 1 or more a level is due for compaction.
pub fn level_scores(version: &Version, o: &PickerOptions) -> Vec<f64> {
    match o.style {
        CompactionStyle::Leveled => scores(version, o, &level_targets(version, o)),
        CompactionStyle::Universal => {
            let mut s = vec![0.0; o.num_levels];
            s[0] = super::universal::sorted_runs(version).len() as f64
                / o.level0_file_num_compaction_trigger.max(1) as f64;
            s
        }
        CompactionStyle::Fifo => {
            let mut s = vec![0.0; o.num_levels];
            s[0] = version.level_bytes(0) as f64 / o.fifo.max_table_files_size.max(1) as f64;
            s
        }
    }
}

/// The bytes compaction is estimated to still have to rewrite to bring the tree in shape
/// (RocksDB's estimate): what write stalls on pending compaction bytes look at.
pub fn pending_compaction_bytes(version: &Version, o: &PickerOptions) -> u64 {
    match o.style {
        CompactionStyle::Leveled => pending_leveled(version, o),
        CompactionStyle::Universal => super::universal::pending_bytes(version, o),
        // Deletions rewrite nothing.
        CompactionStyle::Fifo => 0,
    }
}

/// Leveled estimate: L0 once at its trigger (with the base level it merges into), then each
/// level's excess over its target, rewritten once into the next level along with about
/// `multiplier` times as many bytes there, carried down level by level.
fn pending_leveled(version: &Version, o: &PickerOptions) -> u64 {
    let targets = level_targets(version, o);
    let mut pending = 0u64;
    let mut incoming = 0u64;
    if version.levels[0].len() >= o.level0_file_num_compaction_trigger {
        incoming = version.level_bytes(0);
        pending += incoming + version.level_bytes(targets.base_level);
    }
    for level in targets.base_level..o.num_levels - 1 {
        let size = version.level_bytes(level) + incoming;
        let target = targets.targets[level];
        incoming = size.saturating_sub(target);
        pending += (incoming as f64 * (o.max_bytes_for_level_multiplier + 1.0)) as u64;
    }
    pending
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
    let mut target = version.level_bytes(last);
    targets[last] = target.max(base);
    while level > 1 && target > base {
        target = ((target as f64 / o.max_bytes_for_level_multiplier) as u64).max(1);
        level -= 1;
        // No level from the base level down gets a target under the base size, as in
        // RocksDB: a base level held to a fraction of it (as low as base / multiplier)
        // compacts into the last level with less data per byte it rewrites there.
        targets[level] = target.max(base);
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

/// The files of `files` (a sorted, non-overlapping level) overlapping user keys [lo, hi], in
/// `order`, as an owned list ([`crate::version::overlapping_files`] gives the slice).
pub fn overlapping(
    order: &KeyOrder,
    files: &[Arc<FileMeta>],
    lo: &[u8],
    hi: &[u8],
) -> Vec<Arc<FileMeta>> {
    crate::version::overlapping_files(order, files, lo, hi).to_vec()
}

/// The leveled pick: levels by score, most urgent first.
fn pick_leveled(
    version: &Version,
    o: &PickerOptions,
    busy: &Busy,
    writes: Writes,
) -> Option<CompactionTask> {
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
        if let Some(t) = task.filter(|t| busy.allows(t)) {
            return Some(t);
        }
    }
    // When no level is due, in turn (each looked at only if the one before has nothing
    // that can run): moves, read-triggered merges, merges of an idle family's L0, blob
    // garbage collection.
    let allowed = |t: &CompactionTask| busy.allows(t);
    move_level0_down(version, targets.base_level)
        .filter(allowed)
        .or_else(|| compact_for_reads(version, o, targets.base_level).filter(allowed))
        .or_else(|| {
            compact_level0_when_idle(version, o, targets.base_level, writes).filter(allowed)
        })
        .or_else(|| compact_for_blob_garbage(version, o).filter(allowed))
}

/// When no level is due: L0's oldest files that overlap nothing in the base level (nor one
/// another) move into it unchanged, below the file-count trigger, once the base level holds
/// data. A move rewrites nothing; after a sequential load, whose flushes each cover keys
/// beyond all before them, L0 then holds no leftover flushes for reads to look in. Files go
/// oldest first and stop at the first that overlaps the level below or a file moving with it:
/// an older L0 file never stays above a newer one it shares keys with. Into an empty tree
/// nothing moves: L0's files then wait for the trigger, as RocksDB's do.
pub fn move_level0_down(version: &Version, base_level: usize) -> Option<CompactionTask> {
    let order = &version.order;
    let below = &version.levels[base_level];
    if below.is_empty() {
        return None;
    }
    let mut moving: Vec<Arc<FileMeta>> = Vec::new();
    for f in version.levels[0].iter().rev() {
        let (lo, hi) = (user_key(&f.smallest), user_key(&f.largest));
        let meets = |g: &Arc<FileMeta>| {
            order.le(user_key(&g.smallest), hi) && order.le(lo, user_key(&g.largest))
        };
        let overlaps_below = !crate::version::overlapping_files(order, below, lo, hi).is_empty();
        if overlaps_below || moving.iter().any(meets) {
            break;
        }
        moving.push(f.clone());
    }
    if moving.is_empty() {
        return None;
    }
    Some(CompactionTask::between(
        order,
        0,
        moving,
        base_level,
        Vec::new(),
        1.0,
        Reason::Level0Move,
    ))
}

/// Read-triggered compaction (`Options::read_triggered_compaction`), when no level needs
/// compacting: once reads have spent on L0's files about what merging them into the base
/// level costs (`version::read_charge`), they merge as at the file-count trigger.
pub fn compact_for_reads(
    version: &Version,
    o: &PickerOptions,
    base_level: usize,
) -> Option<CompactionTask> {
    if !o.read_triggered || !version.l0_reads_paid_for_merge() {
        return None;
    }
    let mut task = compact_level0(version, base_level, 1.0)?;
    task.reason = Reason::ReadTriggered;
    Some(task)
}

/// When no level is due and every write is flushed (the writer stopped, or flushed and
/// paused): L0's leftover flushes, fewer than the trigger, merge into the base level, so that
/// a database at rest keeps no L0 files for reads to look in and no overwritten versions in
/// them. Under a steady load the memtable is never empty and L0 waits for its trigger, which
/// lets it gather flushes so that each merge into the base level carries more new bytes.
/// Only when the merge costs no more per byte than a level's merge into the next one: the
/// base-level files L0 overlaps hold at most `max_bytes_for_level_multiplier` times L0's
/// bytes (a family flushed a little at a time leaves its flushes to the trigger). Into an
/// empty tree nothing merges: a fresh database's flushes wait for the trigger, as with
/// `move_level0_down`. A write that arrives once the merge has begun finds it running, as
/// any merge at the trigger.
pub fn compact_level0_when_idle(
    version: &Version,
    o: &PickerOptions,
    base_level: usize,
    writes: Writes,
) -> Option<CompactionTask> {
    let tree_below = version.levels[1..].iter().any(|files| !files.is_empty());
    if writes != Writes::Idle || !tree_below {
        return None;
    }
    let mut task = compact_level0(version, base_level, 1.0)?;
    let l0_bytes = version.level_bytes(0);
    let below_bytes = task.input_bytes() - l0_bytes;
    if (l0_bytes as f64) * o.max_bytes_for_level_multiplier < below_bytes as f64 {
        return None;
    }
    task.reason = Reason::Level0Idle;
    Some(task)
}

/// Forced blob garbage collection (RocksDB's `blob_garbage_collection_force_threshold`), when
/// no level needs compacting: if the blob files within the age cutoff (the oldest fraction
/// of them by number) hold at least the threshold's share of garbage bytes, the tables of
/// the deepest level (below L0) that refer to the oldest blob file are rewritten in their
/// level. The rewrite moves the values of the files within the cutoff into new ones, so the
/// oldest file loses these references. L0's tables are left to their own compactions.
pub fn compact_for_blob_garbage(version: &Version, o: &PickerOptions) -> Option<CompactionTask> {
    let (cutoff, threshold) = o.blob_gc_force?;
    let files = &version.blob_files;
    let within = (files.len() as f64 * cutoff) as usize;
    if within == 0 {
        return None;
    }
    let (garbage, total) = files.values().take(within).fold((0u64, 0u64), |(g, t), b| {
        (g + b.garbage_bytes, t + b.record_bytes())
    });
    if total == 0 || (garbage as f64) < threshold * total as f64 {
        return None;
    }
    let oldest = *files.keys().next()?;
    let (level, inputs) = version
        .levels
        .iter()
        .enumerate()
        .take(o.num_levels)
        .skip(1)
        .rev()
        .map(|(level, tables)| {
            let referring: Vec<Arc<FileMeta>> = tables
                .iter()
                .filter(|t| t.blob_refs.iter().any(|r| r.number == oldest))
                .cloned()
                .collect();
            (level, referring)
        })
        .find(|(_, referring)| !referring.is_empty())?;
    Some(CompactionTask::between(
        &version.order,
        level,
        inputs,
        level,
        Vec::new(),
        garbage as f64 / total as f64,
        Reason::BlobGarbage,
    ))
}

/// All L0 files into the base level.
pub fn compact_level0(version: &Version, base_level: usize, score: f64) -> Option<CompactionTask> {
    let inputs = version.levels[0].clone();
    let order = &version.order;
    let (lo, hi) = key_range(order, &inputs)?;
    let output_inputs = overlapping(order, &version.levels[base_level], &lo, &hi);
    Some(CompactionTask::between(
        order,
        0,
        inputs,
        base_level,
        output_inputs,
        score,
        Reason::Level0FileCount,
    ))
}

/// The file of `level` with the least overlap in the next level per byte of its own (a file
/// with none moves down as it is) whose compaction can run beside the `busy` ones, with what
/// it overlaps.
pub fn compact_level(
    version: &Version,
    level: usize,
    score: f64,
    busy: &Busy,
) -> Option<CompactionTask> {
    let next = &version.levels[level + 1];
    type Candidate<'a> = (u128, &'a Arc<FileMeta>, Vec<Arc<FileMeta>>);
    let mut candidates: Vec<Candidate> = version.levels[level]
        .iter()
        .filter(|f| !busy.files.contains(&f.number))
        .map(|f| {
            let (lo, hi) = (user_key(&f.smallest), user_key(&f.largest));
            let below = overlapping(&version.order, next, lo, hi);
            let overlap: u64 = below.iter().map(|g| g.size).sum();
            // Overlap per byte, scaled to stay an integer; ties go to the first in key order.
            (
                u128::from(overlap) * 1024 / u128::from(f.size.max(1)),
                f,
                below,
            )
        })
        .collect();
    candidates.sort_by_key(|(ratio, _, _)| *ratio);
    candidates.into_iter().find_map(|(_, file, output_inputs)| {
        let task = CompactionTask::between(
            &version.order,
            level,
            vec![file.clone()],
            level + 1,
            output_inputs,
            score,
            Reason::LevelSize,
        );
        busy.allows(&task).then_some(task)
    })
}

#[cfg(test)]
mod tests;
