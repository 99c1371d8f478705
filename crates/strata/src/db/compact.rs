//! Running compactions: the merge job, installing its result, deleting files no reader
//! needs, and manual control (`compact_range`, `compact_level`, `compact_all`,
//! `wait_for_compactions`).
//!
//! One compaction runs at a time (`compaction_lock`), in the background thread or in the
//! caller of a manual compaction. A job reads its inputs through table readers of its own
//! (no block cache, so a compaction does not evict what user reads need), merges them in
//! internal-key order through a [`CompactionFilter`], and cuts outputs at
//! `target_file_size_base` on user-key boundaries, so no user key spans two files of a level.
//! The manifest edit deletes the inputs and adds the outputs; the input files are deleted
//! once no version that a reader may hold names them.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::filename::table_path;
use super::{DbInner, SuperVersion};
use crate::compaction::picker::{self, CompactionTask};
use crate::compaction::{CompactionFilter, Decision};
use crate::error::{Error, Result};
use crate::fs::{CountedFile, IoClass};
use crate::iterator::{InternalIterator, MergingIterator};
use crate::key::user_key;
use crate::table::reader::TableReadStats;
use crate::table::{Table, TableBuilder};
use crate::version::{FileMeta, Version, VersionEdit};

/// Compaction work per output level, for the stats table.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LevelCompactionStats {
    /// Compactions whose output went to this level (moves included).
    pub count: u64,
    /// Of those, files moved down without a rewrite.
    pub moves: u64,
    /// Bytes of input files read.
    pub bytes_read: u64,
    /// Bytes of output files written.
    pub bytes_written: u64,
    /// Microseconds spent.
    pub micros: u64,
}

/// A table being written by a compaction.
struct Output {
    builder: TableBuilder,
    number: u64,
    smallest: Vec<u8>,
    largest: Vec<u8>,
}

impl DbInner {
    /// The compaction the picker wants now, if any.
    pub(super) fn pick_compaction(&self) -> Option<CompactionTask> {
        let version = self.sv.read().version.clone();
        picker::pick(
            &version,
            &self.options.picker_options(),
            &Default::default(),
        )
    }

    /// Runs one picked compaction (under the compaction lock, re-picking on the current
    /// version); returns false if there was nothing to do.
    pub(super) fn compact_once(&self) -> Result<bool> {
        let _one_at_a_time = self.compaction_lock.lock();
        match self.pick_compaction() {
            Some(task) => self.run_compaction(task).map(|()| true),
            None => Ok(false),
        }
    }

    /// Runs `task` and installs its result.
    fn run_compaction(&self, task: CompactionTask) -> Result<()> {
        let started = Instant::now();
        let bytes_read: u64 = task.all_inputs().map(|f| f.size).sum();
        let mut edit = VersionEdit::default();
        for f in &task.inputs {
            edit.deleted_files.push((task.level, f.number));
        }
        for f in &task.output_inputs {
            edit.deleted_files.push((task.output_level, f.number));
        }
        let mut written = 0;
        if task.is_trivial_move() {
            edit.new_files
                .push((task.output_level, (*task.inputs[0]).clone()));
        } else {
            let outputs = self.merge(&task)?;
            written = outputs.iter().map(|f| f.size).sum();
            for f in outputs {
                edit.new_files.push((task.output_level, f));
            }
        }
        self.install(edit)?;
        if !task.is_trivial_move() {
            let inputs = task.all_inputs().map(|f| f.number);
            self.obsolete_tables.lock().extend(inputs);
        }
        let mut stats = self.compaction_stats.lock();
        let s = &mut stats[task.output_level];
        s.count += 1;
        s.moves += u64::from(task.is_trivial_move());
        s.bytes_read += if task.is_trivial_move() {
            0
        } else {
            bytes_read
        };
        s.bytes_written += written;
        s.micros += started.elapsed().as_micros() as u64;
        drop(stats);
        self.purge_obsolete_files();
        Ok(())
    }

    /// Applies a compaction's edit and installs the new version for readers.
    fn install(&self, edit: VersionEdit) -> Result<()> {
        let mut versions = self.versions.lock();
        let version = versions.log_and_apply(edit)?;
        if cfg!(debug_assertions) {
            if let Err(why) = version.check() {
                panic!("compaction broke the version invariants: {why}\n{version:?}");
            }
        }
        let mut current = self.sv.write();
        *current = Arc::new(SuperVersion {
            active: current.active.clone(),
            immutables: current.immutables.clone(),
            version,
        });
        Ok(())
    }

    /// Deletes table files that no version in use names any more.
    fn purge_obsolete_files(&self) {
        let in_use = self.versions.lock().files_in_use();
        let mut pending = self.obsolete_tables.lock();
        pending.retain(|&n| {
            if in_use.contains(&n) {
                return true;
            }
            self.tables.evict(n);
            // A failed delete leaves an orphan that the next open removes.
            let _ = self.fs.remove_file(&table_path(&self.path, n));
            false
        });
    }

    /// Merges the task's inputs into new tables.
    fn merge(&self, task: &CompactionTask) -> Result<Vec<FileMeta>> {
        let stats = Arc::new(TableReadStats::default());
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for f in task.all_inputs() {
            let path = table_path(&self.path, f.number);
            let table = Table::open(
                self.fs.open_random(&path)?,
                &path,
                f.number,
                self.options.table_options(false),
                None,
                false,
                stats.clone(),
            )?;
            children.push(Box::new(Arc::new(table).iter()));
        }
        let version = self.sv.read().version.clone();
        let bottommost = is_bottommost(&version, task);
        let mut filter = CompactionFilter::new(self.snapshots.all(), bottommost);
        let mut it = MergingIterator::new(children);
        let mut outputs = Vec::new();
        let mut current: Option<Output> = None;
        let result = (|| -> Result<()> {
            it.seek_to_first();
            while it.valid() {
                let (released, decision) = filter.decide(it.key());
                if let Some((k, v)) = released {
                    self.emit(&mut current, &mut outputs, task, &k, &v, bottommost)?;
                }
                if decision == Decision::Keep {
                    let (k, v) = (it.key().to_vec(), it.value().to_vec());
                    self.emit(&mut current, &mut outputs, task, &k, &v, bottommost)?;
                }
                it.next();
            }
            it.status()?;
            if let Some((k, v)) = filter.release() {
                self.emit(&mut current, &mut outputs, task, &k, &v, bottommost)?;
            }
            if let Some(out) = current.take() {
                outputs.push(self.finish_output(out)?);
            }
            Ok(())
        })();
        self.io.add_read(
            IoClass::Compaction,
            stats.bytes_read.load(Ordering::Relaxed),
        );
        if let Err(e) = result {
            for f in &outputs {
                let _ = self.fs.remove_file(&table_path(&self.path, f.number));
            }
            if let Some(out) = current {
                let _ = self.fs.remove_file(&table_path(&self.path, out.number));
            }
            return Err(e);
        }
        Ok(outputs)
    }

    /// Adds an entry to the current output, starting a new table at a user-key boundary once
    /// the current one reaches the target size.
    fn emit(
        &self,
        current: &mut Option<Output>,
        outputs: &mut Vec<FileMeta>,
        task: &CompactionTask,
        key: &[u8],
        value: &[u8],
        bottommost: bool,
    ) -> Result<()> {
        let full = current.as_ref().is_some_and(|o| {
            o.builder.file_size() >= self.options.target_file_size_base
                && user_key(&o.largest) != user_key(key)
        });
        if full {
            if let Some(out) = current.take() {
                outputs.push(self.finish_output(out)?);
            }
        }
        if current.is_none() {
            let number = self.versions.lock().new_file_number();
            let path = table_path(&self.path, number);
            let file = CountedFile::new(
                self.fs.create_writable(&path)?,
                self.io.clone(),
                IoClass::Compaction,
            );
            let last_level = task.output_level + 1 == self.options.num_levels;
            *current = Some(Output {
                builder: TableBuilder::new(
                    Box::new(file),
                    self.options.table_options(bottommost && last_level),
                ),
                number,
                smallest: key.to_vec(),
                largest: Vec::new(),
            });
        }
        if let Some(out) = current.as_mut() {
            out.builder.add(key, value)?;
            out.largest.clear();
            out.largest.extend_from_slice(key);
        }
        Ok(())
    }

    fn finish_output(&self, out: Output) -> Result<FileMeta> {
        let (size, props) = out.builder.finish()?;
        self.fs.sync_dir(&self.path)?;
        Ok(FileMeta {
            number: out.number,
            size,
            smallest: out.smallest,
            largest: out.largest,
            smallest_seq: props.smallest_seq,
            largest_seq: props.largest_seq,
            entries: props.entries,
            deletions: props.deletions,
        })
    }

    /// Compacts every file of `level` whose keys meet [begin, end] into the next level (L0
    /// into the base level), as db_bench's compact0 and compact1; `None` bounds are open.
    pub(super) fn compact_level_range(
        &self,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        if level + 1 >= self.options.num_levels {
            return Err(Error::InvalidArgument(format!(
                "cannot compact level {level}: the tree has {} levels",
                self.options.num_levels
            )));
        }
        let _one_at_a_time = self.compaction_lock.lock();
        let version = self.sv.read().version.clone();
        let in_range = |f: &Arc<FileMeta>| {
            begin.is_none_or(|b| user_key(&f.largest) >= b)
                && end.is_none_or(|e| user_key(&f.smallest) <= e)
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
        let Some((lo, hi)) = picker::key_range(&inputs) else {
            return Ok(());
        };
        let output_level = if level == 0 {
            picker::level_targets(&version, &self.options.picker_options())
                .base_level
                .max(1)
        } else {
            level + 1
        };
        let task = CompactionTask {
            level,
            output_level,
            output_inputs: picker::overlapping(&version.levels[output_level], &lo, &hi),
            inputs,
            score: 0.0,
        };
        self.run_compaction(task)
    }

    /// Flushes the memtables, then compacts every level that holds files meeting
    /// [begin, end] into the next, top to bottom, so those keys end in the last level.
    pub(super) fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.flush_memtables()?;
        for level in 0..self.options.num_levels - 1 {
            self.compact_level_range(level, begin, end)?;
        }
        Ok(())
    }

    /// Waits until no flush is pending and the picker finds nothing to compact.
    pub(super) fn wait_for_compactions(&self) -> Result<()> {
        let mut bg = self.bg.lock();
        loop {
            if let Some(e) = &bg.error {
                return Err(super::flush::background_error(e));
            }
            let idle = !bg.busy
                && self.sv.read().immutables.is_empty()
                && (self.options.disable_auto_compactions || self.pick_compaction().is_none());
            if idle {
                return Ok(());
            }
            self.bg_cv.wait(&mut bg);
        }
    }
}

/// True when no level below the task's output holds keys in its range.
fn is_bottommost(version: &Version, task: &CompactionTask) -> bool {
    let inputs: Vec<Arc<FileMeta>> = task.all_inputs().cloned().collect();
    let Some((lo, hi)) = picker::key_range(&inputs) else {
        return true;
    };
    version.levels[task.output_level + 1..]
        .iter()
        .all(|files| picker::overlapping(files, &lo, &hi).is_empty())
}
