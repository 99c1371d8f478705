//! What a compaction picker returns and what it reads, shared by the leveled picker
//! ([`super::picker`]) and the universal one ([`super::universal`]): the options, the task
//! (input files per level, the output level, why it was chosen), and the running tasks a new
//! one must not collide with ([`Busy`]).

use std::collections::HashSet;
use std::sync::Arc;

use crate::compaction::style::{CompactionStyle, FifoOptions, UniversalOptions};
use crate::comparator::KeyOrder;
use crate::key::user_key;
use crate::version::FileMeta;

/// The options the picker reads.
#[derive(Debug, Clone, Copy)]
pub struct PickerOptions {
    /// Levels in the tree.
    pub num_levels: usize,
    /// L0 files (leveled) or sorted runs (universal) that trigger a compaction.
    pub level0_file_num_compaction_trigger: usize,
    /// The smallest target of the base level.
    pub max_bytes_for_level_base: u64,
    /// Growth factor between adjacent levels.
    pub max_bytes_for_level_multiplier: f64,
    /// Leveled or universal.
    pub style: CompactionStyle,
    /// Universal compaction's options.
    pub universal: UniversalOptions,
    /// Leveled: merge L0 into the level below once reads have paid for it
    /// (`Options::read_triggered_compaction`).
    pub read_triggered: bool,
    /// Forced blob garbage collection, when on: the age cutoff (the oldest fraction of the
    /// blob files) and the garbage ratio of those files that forces it.
    pub blob_gc_force: Option<(f64, f64)>,
    /// FIFO compaction's options.
    pub fifo: FifoOptions,
    /// Leveled: tables older than this many seconds are rewritten (0: never).
    pub periodic_compaction_seconds: u64,
    /// FIFO: tables older than this many seconds are deleted; leveled: as
    /// `periodic_compaction_seconds` (0: never).
    pub table_ttl_seconds: u64,
}

impl PickerOptions {
    /// Whether the picks read the tables' ages ([`super::fifo::TableAges`]).
    pub fn reads_ages(&self) -> bool {
        match self.style {
            CompactionStyle::Fifo => self.table_ttl_seconds > 0,
            CompactionStyle::Leveled => {
                self.periodic_compaction_seconds > 0 || self.table_ttl_seconds > 0
            }
            CompactionStyle::Universal => false,
        }
    }
}

/// Why a compaction was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Leveled: L0 reached its file-count trigger.
    Level0FileCount,
    /// Leveled: a level outgrew its target.
    LevelSize,
    /// Universal: the newer runs outgrew `max_size_amplification_percent` of the oldest.
    SizeAmplification,
    /// Universal: a window of runs of similar size.
    SizeRatio,
    /// Universal: too many sorted runs and no better choice.
    RunCount,
    /// Asked for through the API.
    Manual,
    /// Leveled: reads have spent on L0's files about what merging them into the level
    /// below costs.
    ReadTriggered,
    /// Leveled: L0's oldest files overlap nothing in the base level and move into it
    /// unchanged.
    Level0Move,
    /// Leveled: writes stopped with flushes left in L0 below the trigger; they merge into the
    /// base level.
    Level0Idle,
    /// Leveled: the oldest blob files hold enough garbage that the tables referring to the
    /// oldest one are rewritten in their level, moving its live values out.
    BlobGarbage,
    /// FIFO: the tables hold more than `max_table_files_size`; the oldest are deleted.
    FifoMaxSize,
    /// FIFO: the oldest tables are older than `table_ttl_seconds`; they are deleted.
    FifoTtl,
    /// FIFO: small tables in a row merged into one (`allow_compaction`).
    FifoIntraL0,
    /// Leveled: a table older than `periodic_compaction_seconds` (or `table_ttl_seconds`)
    /// is rewritten in its level.
    Periodic,
}

impl Reason {
    /// A short name for logs and tests.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Level0FileCount => "l0-files",
            Reason::ReadTriggered => "read-triggered",
            Reason::Level0Move => "l0-move",
            Reason::Level0Idle => "l0-idle",
            Reason::LevelSize => "level-size",
            Reason::SizeAmplification => "size-amp",
            Reason::SizeRatio => "size-ratio",
            Reason::RunCount => "run-count",
            Reason::Manual => "manual",
            Reason::BlobGarbage => "blob-garbage",
            Reason::FifoMaxSize => "fifo-max-size",
            Reason::FifoTtl => "fifo-ttl",
            Reason::FifoIntraL0 => "fifo-intra-l0",
            Reason::Periodic => "periodic",
        }
    }
}

/// The input files of one level.
#[derive(Debug, Clone)]
pub struct LevelInputs {
    /// The level.
    pub level: usize,
    /// Its files in the compaction (L0: newest first; other levels: in key order).
    pub files: Vec<Arc<FileMeta>>,
}

/// One compaction to run.
#[derive(Debug, Clone)]
pub struct CompactionTask {
    /// Inputs by level, the upper (newer) levels first; no group is empty.
    pub inputs: Vec<LevelInputs>,
    /// The level the outputs go to.
    pub output_level: usize,
    /// The score that chose it (0 for manual compactions).
    pub score: f64,
    /// Why it was chosen.
    pub reason: Reason,
    /// The column family's user key order.
    pub order: KeyOrder,
}

impl CompactionTask {
    /// A task merging `files` of `level` with `output_inputs` of `output_level`, user keys
    /// in `order`.
    pub fn between(
        order: &KeyOrder,
        level: usize,
        files: Vec<Arc<FileMeta>>,
        output_level: usize,
        output_inputs: Vec<Arc<FileMeta>>,
        score: f64,
        reason: Reason,
    ) -> CompactionTask {
        let mut inputs = vec![LevelInputs { level, files }];
        if !output_inputs.is_empty() {
            inputs.push(LevelInputs {
                level: output_level,
                files: output_inputs,
            });
        }
        CompactionTask {
            inputs,
            output_level,
            score,
            reason,
            order: order.clone(),
        }
    }

    /// Whether the task deletes its inputs and writes nothing (FIFO's deletions).
    pub fn deletes_inputs(&self) -> bool {
        matches!(self.reason, Reason::FifoMaxSize | Reason::FifoTtl)
    }

    /// The level of the newest inputs.
    pub fn start_level(&self) -> usize {
        self.inputs.first().map_or(self.output_level, |g| g.level)
    }

    /// The input files at `level`.
    #[cfg(test)]
    pub fn files_at(&self, level: usize) -> &[Arc<FileMeta>] {
        self.inputs
            .iter()
            .find(|g| g.level == level)
            .map_or(&[], |g| &g.files)
    }

    /// True when the task can move its files into the output level without rewriting them:
    /// no two input files share a user key (as after sequential writes, or a file with
    /// nothing below it), and some input is above the output level. Files already in the
    /// output level stay where they are.
    pub fn is_trivial_move(&self) -> bool {
        if self.inputs.iter().all(|g| g.level == self.output_level) {
            return false;
        }
        let mut files: Vec<&Arc<FileMeta>> = self.all_inputs().collect();
        let order = &self.order;
        files.sort_by(|a, b| order.compare(user_key(&a.smallest), user_key(&b.smallest)));
        files
            .windows(2)
            .all(|w| crate::range_del::ends_before(order, &w[0].largest, user_key(&w[1].smallest)))
    }

    /// Every input file.
    pub fn all_inputs(&self) -> impl Iterator<Item = &Arc<FileMeta>> {
        self.inputs.iter().flat_map(|g| g.files.iter())
    }

    /// Every input file with its level.
    pub fn inputs_by_level(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> {
        self.inputs
            .iter()
            .flat_map(|g| g.files.iter().map(move |f| (g.level, f)))
    }

    /// Bytes of all input files.
    pub fn input_bytes(&self) -> u64 {
        self.all_inputs().map(|f| f.size).sum()
    }

    /// The user-key range of all inputs.
    pub fn key_range(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let files: Vec<Arc<FileMeta>> = self.all_inputs().cloned().collect();
        key_range(&self.order, &files)
    }
}

/// The user-key range covered by `files`, user keys in `order`.
pub fn key_range(order: &KeyOrder, files: &[Arc<FileMeta>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let smallest = files.iter().map(|f| user_key(&f.smallest));
    let largest = files.iter().map(|f| user_key(&f.largest));
    let lo = smallest.reduce(|a, b| order.min(a, b))?;
    let hi = largest.reduce(|a, b| order.max(a, b))?;
    Some((lo.to_vec(), hi.to_vec()))
}

/// Whether a family has writes not yet flushed, as the picker sees it: L0's leftover flushes
/// merge into the base level only while it has none (`picker::compact_level0_when_idle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// The memtables hold entries: more flushes are coming.
    Pending,
    /// Every write is flushed: the active memtable is empty and none waits to be flushed.
    Idle,
}

/// What running compactions hold: their input files and the key range of their output.
#[derive(Debug, Default, Clone)]
pub struct Busy {
    /// Numbers of the files being compacted.
    pub files: HashSet<u64>,
    /// (output level, smallest, largest user key) of each running compaction.
    pub outputs: Vec<(usize, Vec<u8>, Vec<u8>)>,
}

impl Busy {
    /// True when no compaction runs.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.outputs.is_empty()
    }

    /// True when `task` can run beside the running compactions.
    pub fn allows(&self, task: &CompactionTask) -> bool {
        if task.all_inputs().any(|f| self.files.contains(&f.number)) {
            return false;
        }
        let Some((lo, hi)) = task.key_range() else {
            return true;
        };
        !self.outputs.iter().any(|(level, a, b)| {
            *level == task.output_level && task.order.le(a, &hi) && task.order.le(&lo, b)
        })
    }

    /// Records `task` as running.
    pub fn add(&mut self, task: &CompactionTask) {
        self.files.extend(task.all_inputs().map(|f| f.number));
        if let Some((lo, hi)) = task.key_range() {
            self.outputs.push((task.output_level, lo, hi));
        }
    }

    /// Records `task` as finished.
    pub fn remove(&mut self, task: &CompactionTask) {
        for f in task.all_inputs() {
            self.files.remove(&f.number);
        }
        if let Some((lo, hi)) = task.key_range() {
            if let Some(i) = self
                .outputs
                .iter()
                .position(|(l, a, b)| *l == task.output_level && *a == lo && *b == hi)
            {
                self.outputs.swap_remove(i);
            }
        }
    }
}
