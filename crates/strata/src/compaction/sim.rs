//! A compaction simulator: the real pickers run on a simulated tree, so that a question of
//! compaction policy (how many bytes does it write, what shape does the tree take) can be
//! answered in seconds and deterministically, without running the engine.
//!
//! What it does: a workload of puts (`fillrandom`/`overwrite`: keys drawn uniformly from
//! `num` keys, as db_bench does, so a fill leaves about 63% of them; `fillseq`: in order;
//! optionally drawn from a scrambled zipfian distribution instead) fills a memtable of
//! `write_buffer_size` bytes at `memtable_entry_bytes` per put; a full memtable is flushed
//! into an L0 file holding its distinct keys. A `flush` step leaves writes idle until the
//! next put (the engine's memtables are then empty), so the picker's idle L0 merges run in a
//! settle that follows it. Compaction has one thread, as the engine's
//! default (`max_background_jobs` 2: one flush thread, one compaction thread): whenever it is
//! idle the policy is asked for a task, and each task is applied as `db::compact` applies it:
//! a trivial move (`CompactionTask::is_trivial_move`) relinks the files; a merge keeps the
//! newest version of each key (all older ones are dropped, as the engine does without
//! snapshots) and cuts its outputs with the engine's cutter (`compaction::cut`; outputs to L0
//! are never cut, each L0 file being one sorted run). Every version is built with
//! `Version::apply`, and under the `strata` policy the engine's pickers (`picker::pick`,
//! `universal::pick`) choose the tasks.
//! Files hold their keys (`u32`s) and every entry is `entry_bytes` long (key plus value), so
//! file and level sizes, write-amp and space-amp follow from the keys themselves.
//!
//! Time: with `compaction_speed` 0 a compaction takes no time, so after each flush every
//! compaction the policy wants runs before the next put. With a speed, a compaction takes
//! (bytes read + bytes written) / speed, counted in bytes put: puts go on meanwhile, so L0
//! collects several flushes before the next L0 compaction takes them all at once, as in the
//! engine under load; a flush that finds L0 at `level0_stop_writes_trigger` waits for the
//! running compaction. The speed is a free parameter: the engine's ratio of compaction
//! throughput to write throughput depends on the machine and the workload.
//!
//! Experimental policies (`Policy`) change what is picked or how outputs are cut, to test
//! what another engine does differently, or (`lazy`) the shape of the tree itself: sorted
//! runs above the last level, which the engine's versions do not have. They live only here;
//! the engine never runs them.
//!
//! What it does not model, so read its figures as the policy's, not the engine's:
//! - Concurrency beyond that one thread: never two compactions at once (the engine runs
//!   several with `max_background_jobs` above 2), no subcompactions; flushes take no time
//!   and never wait for a free memtable; compaction speed is constant; writes are never
//!   slowed down (L0 slowdown trigger, pending-bytes limits), only stopped at the L0 stop
//!   trigger.
//! - Per-entry overheads: tables hold exactly `entry_bytes` per entry (no block, index,
//!   filter, or compression), and the memtable a fixed `memtable_entry_bytes` per put.
//! - Deletes, snapshots, and the WAL: none are simulated (write-amp counts table writes
//!   only: flushes and compactions).
//! - Manual compactions and the disk-space check of the engine.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

mod policies;
mod tree;

use policies::*;
pub use policies::{rocksdb_scores, rocksdb_targets};
use tree::*;

use super::cut::OutputCutter;
use super::picker::{self, Busy, CompactionTask, LevelTargets, PickerOptions, Reason, Writes};
use super::style::CompactionStyle;
use crate::comparator::KeyOrder;
use crate::key::{append_internal_key, user_key, ValueKind};
use crate::util::Rng;
use crate::version::{FileMeta, Version, VersionEdit};

/// What the simulator runs.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// The key space: keys are `0..num`; each fill step writes `num` keys.
    pub num: u64,
    /// Bytes of one entry in a table (key plus value; db_bench's 16 + 100 by default).
    pub entry_bytes: u64,
    /// Bytes one put takes in the memtable (the engine measured 141 for 116-byte entries).
    pub memtable_entry_bytes: u64,
    /// Memtable bytes at which it is flushed.
    pub write_buffer_size: u64,
    /// Compaction outputs are cut at this size.
    pub target_file_size_base: u64,
    /// Outputs are cut once they overlap this many bytes in the level below; 0 means 25 times
    /// `target_file_size_base`, as the engine's default.
    pub max_compaction_bytes: u64,
    /// The picker's options (levels, trigger, level sizes, style).
    pub picker: PickerOptions,
    /// The compaction policy: the engine's, or an experimental one.
    pub policy: Policy,
    /// How random steps draw their keys.
    pub distribution: Distribution,
    /// Compaction speed: bytes a compaction reads and writes in the time the workload puts
    /// one byte. 0 means compactions take no time (each runs to completion before the next
    /// put).
    pub compaction_speed: f64,
    /// With a compaction speed: L0 files at which writes wait for the running compaction to
    /// end (0 = never).
    pub level0_stop_writes_trigger: usize,
    /// Seed of the key generator.
    pub seed: u64,
}

impl SimOptions {
    fn max_compaction_bytes(&self) -> u64 {
        match self.max_compaction_bytes {
            0 => self.target_file_size_base.saturating_mul(25),
            n => n,
        }
    }
}

/// How random keys are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Every key equally likely (db_bench's fillrandom and overwrite).
    Uniform,
    /// Zipfian with this exponent (YCSB's 0.99 is the usual), the ranks scattered over the
    /// key space so that hot keys are not neighbours.
    Zipfian(f64),
}

/// One step of a workload, named as db_bench names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `fillrandom`, `overwrite`: `num` puts of random keys.
    Random,
    /// `fillseq`: `num` puts of keys in order.
    Sequential,
    /// `flush`: the memtable is flushed even if not full.
    Flush,
    /// `waitforcompaction`: compactions run until the policy picks none.
    WaitForCompaction,
}

impl Step {
    /// The step db_bench calls `name`.
    pub fn parse(name: &str) -> Result<Step, String> {
        match name {
            "fillrandom" | "overwrite" => Ok(Step::Random),
            "fillseq" => Ok(Step::Sequential),
            "flush" => Ok(Step::Flush),
            "waitforcompaction" => Ok(Step::WaitForCompaction),
            other => Err(format!(
                "unknown step {other:?}: the simulator runs fillrandom, overwrite, fillseq, \
                 flush, waitforcompaction"
            )),
        }
    }
}

/// A compaction policy: the engine's (`strata`) with or without experimental features, each
/// modelling something RocksDB does differently (leveled compaction only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// `floor`: level targets as RocksDB computes them (`CalculateBaseBytes`): the base level
    /// is sized from the largest level, and no level from the base down gets a target below
    /// `max_bytes_for_level_base` (the engine's pickers apply the same floor, so `strata` and
    /// `strata+floor` agree on these workloads; the feature swaps in RocksDB's computation).
    pub floor: bool,
    /// `scores`: RocksDB's dynamic-level scores: L0 also scores its bytes against the base
    /// level (at least 1.01 once it holds `max_bytes_for_level_base`); a level over its target
    /// is scored against its target plus the bytes still to come down from above.
    pub scores: bool,
    /// `expand`: a compaction from level n takes more level-n files when that adds no file in
    /// level n+1 (RocksDB's `SetupOtherInputs`), and a trivial move takes up to 4 adjacent
    /// files.
    pub expand: bool,
    /// `cut`: outputs are also cut at file boundaries of the level below the output, as the
    /// engine does (`compaction::cut`, after RocksDB's `ShouldStopBefore`): once the output
    /// reaches 50% of the target size (+5% per boundary passed, at most 90%), or when the next
    /// key would skip a large enough file there, and the overlap limit counts the output's own
    /// size. `strata-cut` is the engine's rule before it: the target size and the overlap
    /// limit only.
    pub cut: bool,
    /// `roundrobin`: the file compacted from a level is the one after the previous one in key
    /// order (RocksDB's `kRoundRobin`), not the one with the least overlap per byte.
    pub round_robin: bool,
    /// `tier`: L0 gathers bytes before it merges into the base level (an experiment, after
    /// RocksDB's intra-L0 compaction). At the trigger, while L0 holds less than twice the
    /// bytes of the base level, its newest files are merged into one L0 file instead, as
    /// universal compaction merges runs of similar size (each older file taken while it is
    /// no larger than the newer ones taken so far); only when no two files qualify, or L0
    /// has outgrown the base level twice over, does L0 merge into the base level.
    pub tier: bool,
    /// `lazy`: lazy leveling (Dostoevsky's), tiers above a leveled last level. The levels
    /// from the base level to the second-to-last hold sorted runs that are never merged with
    /// one another's data in place: at the L0 trigger, L0's flushes merge into one new run of
    /// the base level; a level over its target merges all its runs into one new run of the
    /// level below; the second-to-last level, over its target, merges into the last level one
    /// slice at a time: the slice (one last-level file's key range, widened until no run's
    /// file crosses its ends) holding the most run bytes per last-level byte. Runs written to
    /// the second-to-last level are cut at the last level's file boundaries as well as at
    /// the target size, so that slices stay one file wide. The runs live in L0 of the
    /// simulated version, each file tagged with its level (the engine has no such levels):
    /// the L0 stop trigger counts only the flushes.
    pub lazy: bool,
}

const FEATURES: [&str; 7] = [
    "floor",
    "scores",
    "expand",
    "cut",
    "roundrobin",
    "tier",
    "lazy",
];

impl Policy {
    /// The engine's policy.
    pub const STRATA: Policy = Policy {
        floor: false,
        scores: false,
        expand: false,
        cut: true,
        round_robin: false,
        tier: false,
        lazy: false,
    };

    /// Everything RocksDB does differently that is modelled here, with its default priority
    /// (least overlap per byte).
    pub const ROCKSDB: Policy = Policy {
        floor: true,
        scores: true,
        expand: true,
        cut: true,
        round_robin: false,
        tier: false,
        lazy: false,
    };

    /// Parses `strata` or `rocksdb` followed by `+feature` or `-feature` changes, for example
    /// `strata+floor` or `rocksdb-cut` (features: floor, scores, expand, cut, roundrobin,
    /// tier, lazy).
    pub fn parse(spec: &str) -> Result<Policy, String> {
        let split = spec.find(['+', '-']).unwrap_or(spec.len());
        let mut policy = match &spec[..split] {
            "strata" => Policy::STRATA,
            "rocksdb" => Policy::ROCKSDB,
            other => return Err(format!("unknown policy {other:?}: strata or rocksdb")),
        };
        let mut rest = &spec[split..];
        while let Some(sign) = rest.chars().next() {
            let end = rest[1..].find(['+', '-']).map_or(rest.len(), |i| i + 1);
            let on = sign == '+';
            match &rest[1..end] {
                "floor" => policy.floor = on,
                "scores" => policy.scores = on,
                "expand" => policy.expand = on,
                "cut" => policy.cut = on,
                "roundrobin" => policy.round_robin = on,
                "tier" => policy.tier = on,
                "lazy" => policy.lazy = on,
                other => {
                    return Err(format!(
                        "unknown policy feature {other:?}: one of {}",
                        FEATURES.join(", ")
                    ))
                }
            }
            rest = &rest[end..];
        }
        Ok(policy)
    }

    /// The policy's name in the notation `parse` reads (the shorter of the two spellings).
    pub fn name(&self) -> String {
        let on = [
            self.floor,
            self.scores,
            self.expand,
            self.cut,
            self.round_robin,
            self.tier,
            self.lazy,
        ];
        let from = |base: &str, reference: &Policy| {
            let theirs = [
                reference.floor,
                reference.scores,
                reference.expand,
                reference.cut,
                reference.round_robin,
                reference.tier,
                reference.lazy,
            ];
            let mut s = base.to_string();
            for (i, feature) in FEATURES.iter().enumerate() {
                if on[i] != theirs[i] {
                    s.push(if on[i] { '+' } else { '-' });
                    s.push_str(feature);
                }
            }
            s
        };
        let a = from("strata", &Policy::STRATA);
        let b = from("rocksdb", &Policy::ROCKSDB);
        if b.len() < a.len() {
            b
        } else {
            a
        }
    }

    /// True when picking is the engine's own (`picker::pick`).
    fn picks_as_engine(&self) -> bool {
        !(self.floor || self.scores || self.expand || self.round_robin || self.tier || self.lazy)
    }
}

/// Compaction work into one level.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LevelStats {
    /// Compactions whose output went to this level (moves included; L0: not the flushes).
    pub count: u64,
    /// Of those, moves without a rewrite.
    pub moves: u64,
    /// Bytes read from the start level of those compactions (for L0: 0).
    pub read_upper: u64,
    /// Bytes read from this level by them (the bytes rewritten in place).
    pub read_lower: u64,
    /// Bytes written into this level: flushes (L0) and compaction outputs.
    pub written: u64,
}

/// The result of a simulation.
#[derive(Debug, Clone)]
pub struct SimReport {
    /// The policy that ran.
    pub policy: Policy,
    /// Bytes of the puts (`entry_bytes` each).
    pub user_bytes: u64,
    /// Bytes of the distinct keys written (`entry_bytes` each).
    pub live_bytes: u64,
    /// Memtable flushes.
    pub flushes: u64,
    /// Work per level.
    pub levels: Vec<LevelStats>,
    /// The tree at the end.
    pub version: Version,
    /// The policy's compaction score of each level at the end.
    pub scores: Vec<f64>,
    /// Entries still in the memtable at the end (not flushed).
    pub memtable_entries: u64,
    /// A compaction was still running at the end (its work is not counted).
    pub running: bool,
    /// Time writes waited on the L0 stop trigger, as a fraction of the run's time.
    pub stalled: f64,
    /// Files and bytes per level as reported: the version's, except under the `lazy`
    /// policy, whose runs (in the version's L0) are shown at their levels.
    pub shown: Vec<(usize, u64)>,
}

impl SimReport {
    /// Bytes written by flushes and compactions.
    pub fn written(&self) -> u64 {
        self.levels.iter().map(|l| l.written).sum()
    }

    /// Bytes written per user byte.
    pub fn write_amp(&self) -> f64 {
        self.written() as f64 / self.user_bytes.max(1) as f64
    }

    /// Bytes in the tree's files.
    pub fn disk_bytes(&self) -> u64 {
        (0..self.version.levels.len())
            .map(|l| self.version.level_bytes(l))
            .sum()
    }

    /// Bytes on disk per byte of distinct keys written.
    pub fn space_amp(&self) -> f64 {
        self.disk_bytes() as f64 / self.live_bytes.max(1) as f64
    }
}

impl fmt::Display for SimReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mb = |b: u64| b as f64 / 1048576.0;
        let user = self.user_bytes.max(1) as f64;
        writeln!(
            f,
            "Level Files   Size(MB)  Score  Count  Moves   Rn(MB) Rn+1(MB)  Write(MB)  W-Amp"
        )?;
        for (level, s) in self.levels.iter().enumerate() {
            let (files, bytes) = self.shown[level];
            if files == 0 && s.count == 0 && s.written == 0 {
                continue;
            }
            writeln!(
                f,
                "L{level:<4} {files:>5} {:>10.1} {:>6.2} {:>6} {:>6} {:>8.1} {:>8.1} {:>10.1} {:>6.2}",
                mb(bytes),
                self.scores.get(level).copied().unwrap_or(0.0),
                s.count,
                s.moves,
                mb(s.read_upper),
                mb(s.read_lower),
                mb(s.written),
                s.written as f64 / user,
            )?;
        }
        let sum = |g: fn(&LevelStats) -> u64| self.levels.iter().map(g).sum::<u64>();
        writeln!(
            f,
            "Sum   {:>5} {:>10.1} {:>6} {:>6} {:>6} {:>8.1} {:>8.1} {:>10.1} {:>6.2}",
            self.version.levels.iter().map(Vec::len).sum::<usize>(),
            mb(self.disk_bytes()),
            "",
            sum(|s| s.count),
            sum(|s| s.moves),
            mb(sum(|s| s.read_upper)),
            mb(sum(|s| s.read_lower)),
            mb(self.written()),
            self.write_amp(),
        )?;
        writeln!(
            f,
            "policy {}: user {:.1} MB, {} flushes, write-amp {:.2}, space-amp {:.2} \
             ({:.1} MB on disk, {:.1} MB live){}",
            self.policy.name(),
            mb(self.user_bytes),
            self.flushes,
            self.write_amp(),
            self.space_amp(),
            mb(self.disk_bytes()),
            mb(self.live_bytes),
            match self.memtable_entries {
                0 => String::new(),
                n => format!(", {n} entries left in the memtable"),
            }
        )?;
        if self.stalled > 0.0 {
            writeln!(
                f,
                "writes stopped on L0 for {:.1}% of the time",
                self.stalled * 100.0
            )?;
        }
        if self.running {
            writeln!(f, "a compaction was still running at the end (not counted)")?;
        }
        Ok(())
    }
}

/// Runs `steps` and reports what compaction did.
pub fn run(o: &SimOptions, steps: &[Step]) -> SimReport {
    let mut sim = Sim::new(o);
    for &step in steps {
        sim.step(step);
    }
    sim.report()
}

#[cfg(test)]
mod tests;
