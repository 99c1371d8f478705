//! Manual compactions: `compact_range` and `compact_level`, which take the tree for
//! themselves (see `background`) and compact a key range down level by level.

use super::Ran;
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::compaction::picker::{self, CompactionTask, Reason};
use crate::compaction::universal;
use crate::compaction::CompactionStyle;
use crate::db::families::ColumnFamilyData;
use crate::db::DbInner;
use crate::error::{Error, Result};
use crate::key::user_key;
use crate::listener::BackgroundErrorReason;
use crate::version::FileMeta;

impl DbInner {
    /// Compacts every file of `level` whose keys meet [begin, end] into the next level (L0
    /// into the base level), as db_bench's compact0 and compact1; `None` bounds are open.
    pub(in crate::db) fn compact_level_range(
        &self,
        cf: &Arc<ColumnFamilyData>,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        if level + 1 >= cf.options.compaction_levels() {
            return Err(Error::InvalidArgument(format!(
                "cannot compact level {level}: the tree has {} levels{}",
                cf.options.num_levels,
                match cf.options.allow_ingest_behind {
                    true => ", the last reserved for ingest_behind",
                    false => "",
                }
            )));
        }
        if cf.options.compaction_style == CompactionStyle::Universal {
            return Err(Error::InvalidArgument(
                "compacting one level is for leveled compaction; with universal compaction \
                 use compact_range or compact_all"
                    .into(),
            ));
        }
        let _exclusive = self.begin_manual_compaction()?;
        let version = cf.sv.read().version.clone();
        let order = &version.order;
        let in_range = |f: &Arc<FileMeta>| {
            begin.is_none_or(|b| order.le(b, user_key(&f.largest)))
                && end.is_none_or(|e| order.le(user_key(&f.smallest), e))
        };
        let inputs: Vec<Arc<FileMeta>> = if level == 0 {
            // Overlapping L0 files must move together to keep newer data above older.
            if version.levels[0].iter().any(in_range) {
                version.levels[0].clone()
            } else {
                Vec::new()
            }
        } else {
            version.levels[level]
                .iter()
                .filter(|f| in_range(f))
                .cloned()
                .collect()
        };
        let Some((lo, hi)) = picker::key_range(order, &inputs) else {
            return Ok(());
        };
        let output_level = if level == 0 {
            picker::level_targets(&version, &cf.current_options().picker_options())
                .base_level
                .max(1)
        } else {
            level + 1
        };
        let output_inputs = picker::overlapping(order, &version.levels[output_level], &lo, &hi);
        let task = CompactionTask::between(
            order,
            level,
            inputs,
            output_level,
            output_inputs,
            0.0,
            Reason::Manual,
        );
        // A version held here would keep the inputs on disk past the compaction's purge.
        drop(version);
        self.run_manual(cf, &task)
    }

    /// Runs a manual compaction; a skip for lack of space is an error here. A failure is the
    /// caller's to handle (background work goes on), and the listeners hear of it.
    pub(in crate::db) fn run_manual(
        &self,
        cf: &Arc<ColumnFamilyData>,
        task: &CompactionTask,
    ) -> Result<()> {
        let ran = self.run_compaction(cf, task).inspect_err(|e| {
            if self.events.enabled() && !self.bg.shutting_down.load(Ordering::Acquire) {
                let job = BackgroundErrorReason::ManualCompaction;
                self.report_background_error(job, e.duplicate(), false);
            }
        });
        match ran? {
            Ran::Done => Ok(()),
            Ran::SkippedForSpace => Err(Error::Unavailable(format!(
                "compaction of {} bytes not started: not enough free disk space in {}",
                task.input_bytes(),
                self.path.display()
            ))),
        }
    }

    /// Flushes the memtables, then compacts every level that holds files meeting
    /// [begin, end] into the next, top to bottom, so those keys end in the last level.
    /// Universal compaction merges every sorted run into the last level (as RocksDB's
    /// universal `CompactRange` does), whatever the bounds.
    pub(in crate::db) fn compact_range(
        &self,
        cf: &Arc<ColumnFamilyData>,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.flush_memtables(Some(cf), crate::listener::FlushReason::ManualCompaction)?;
        if cf.options.compaction_style == CompactionStyle::Universal {
            let _exclusive = self.begin_manual_compaction()?;
            let version = cf.sv.read().version.clone();
            let last = cf.options.compaction_levels() - 1;
            let runs = universal::compactable_runs(&version, last + 1);
            if runs.is_empty() || (runs.len() == 1 && runs[0].level == last) {
                return Ok(());
            }
            let mut task = CompactionTask {
                inputs: Vec::new(),
                output_level: last,
                score: 0.0,
                reason: Reason::Manual,
                order: version.order.clone(),
            };
            for run in runs {
                match task.inputs.last_mut() {
                    Some(g) if g.level == run.level => g.files.extend(run.files),
                    _ => task.inputs.push(picker::LevelInputs {
                        level: run.level,
                        files: run.files,
                    }),
                }
            }
            drop(version);
            return self.run_manual(cf, &task);
        }
        let last = cf.options.compaction_levels() - 1;
        let before: HashSet<u64> = cf.sv.read().version.levels[last]
            .iter()
            .map(|f| f.number)
            .collect();
        for level in 0..last {
            self.compact_level_range(cf, level, begin, end)?;
        }
        if cf.options.compaction_filter.is_some() || cf.options.ttl.is_some() {
            // The files of the last level that no compaction above rewrote have not been
            // shown to the filter: compact the level's files in the range into the level
            // itself (RocksDB's `BottommostLevelCompaction::kIfHaveCompactionFilter`).
            let _exclusive = self.begin_manual_compaction()?;
            let version = cf.sv.read().version.clone();
            // Every file of the level in the range goes in, if any of them is old: a file
            // written just now may lie between old ones, and the output must not overlap it.
            let files: Vec<Arc<FileMeta>> = version.levels[last]
                .iter()
                .filter(|f| {
                    let order = &version.order;
                    begin.is_none_or(|b| !order.lt(user_key(&f.largest), b))
                        && end.is_none_or(|e| !order.lt(e, user_key(&f.smallest)))
                })
                .cloned()
                .collect();
            if files.iter().any(|f| before.contains(&f.number)) {
                let task = CompactionTask::between(
                    &version.order,
                    last,
                    files,
                    last,
                    Vec::new(),
                    0.0,
                    Reason::Manual,
                );
                drop(version);
                return self.run_manual(cf, &task);
            }
        }
        Ok(())
    }
}
