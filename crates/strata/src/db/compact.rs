//! Running compactions: the merge job, installing its result, deleting files no reader
//! needs, and manual control (`compact_range`, `compact_level`, `compact_all`).
//!
//! A job reads its inputs through table readers of its own (they never read through the block
//! cache, so a compaction's reads evict nothing; with `warm_compaction_outputs` it puts in the
//! cache the output blocks of input blocks readers used, `warm_cache.rs`): one cursor per L0
//! file and one per deeper level (a [`ConcatIterator`] that opens the level's files in
//! turn), merged by a heap. Entries pass through the family's compaction filter and TTL
//! expiry (`compaction::filter`, never in flushes) and a [`VisibilityFilter`]; outputs are cut on user-key boundaries (no user key
//! spans two files of a level) once they reach `target_file_size_base` or overlap more than
//! `max_compaction_bytes` of the level below the output (so that compacting them later
//! stays small). Universal compactions writing to L0 produce one file: each L0 file is a
//! sorted run.
//!
//! With `max_subcompactions` > 1, a job is split into key ranges at the first keys of its
//! input files below L0 (those files are sorted and disjoint, so their sizes tell where the
//! bytes are), merged by scoped threads; each range's outputs are disjoint from the others'.
//!
//! Before a rewrite starts, the free space of the file system is checked against the bytes
//! of the inputs (what the outputs may take at most, before compression), plus what running
//! compactions have reserved the same way, plus room for the writes that go on meanwhile
//! (a WAL and a flushed table for each memtable allowed): a job that may not fit is skipped,
//! logged and counted, so a nearly full disk keeps serving reads and writes instead of
//! failing a compaction half-way.
//!
//! The manifest edit deletes the inputs and adds the outputs; the input files are deleted
//! once no version that a reader may hold names them.
//!
//! Event listeners hear of a job as it begins (after the space check: a skipped job is not
//! announced) and as it ends, with its outputs or its error, before its inputs are deleted;
//! the version the job installed is held until then, so the outputs exist while they are
//! told of.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::blob::output::BlobOutput;
use super::families::ColumnFamilyData;
use super::stats::Counter;
use super::table_writer::{delete_table, TableOutput};
use super::warm_cache::{ProbedInput, WarmInputs};
use super::DbInner;
use crate::compaction::covered::SkipCovered;
use crate::compaction::cut::OutputCutter;
use crate::compaction::filter::FilterStage;
use crate::compaction::operands::write_visible_filtered;
use crate::compaction::picker::{self, Busy, CompactionTask, Reason, Writes};
use crate::compaction::universal;
use crate::compaction::{CompactionStyle, VisibilityFilter};
use crate::error::{Error, Result};
use crate::filename::{blob_path, table_path};
use crate::fs::direct::ReadaheadFile;
use crate::fs::IoClass;
use crate::iterator::{ConcatIterator, InternalIterator, MergingIterator};
use crate::key::{append_internal_key, user_key, SequenceNumber, KIND_FOR_SEEK, MAX_SEQUENCE};
use crate::listener::{
    BackgroundErrorReason, CompactionFileInfo, CompactionJobInfo, CompactionReason,
};
use crate::options::Options;
use crate::range_del::{FragmentedList, RangeDelAggregator};
use crate::table::reader::{BlockCache, TableReadOptions, TableReadStats};
use crate::table::{Table, TableOptions};
use crate::version::{BlobFileMeta, FileMeta, Version, VersionEdit};

/// How a compaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ran {
    /// Its result is installed.
    Done,
    /// It was not started: its output might not fit in the free disk space.
    SkippedForSpace,
}

/// A user-key range of a subcompaction: [start, end), `None` = open.
type KeyRange = (Option<Vec<u8>>, Option<Vec<u8>>);

impl DbInner {
    /// The compaction the picker wants now beside the `busy` ones, if any: of all families
    /// with automatic compactions, the task with the highest score.
    pub(super) fn pick_compaction(
        &self,
        busy: &HashMap<u32, Busy>,
    ) -> Option<(Arc<ColumnFamilyData>, CompactionTask)> {
        let idle = Busy::default();
        self.families()
            .values()
            .filter(|cf| !cf.options.disable_auto_compactions)
            .filter_map(|cf| {
                let (version, writes) = {
                    let sv = cf.sv.read();
                    let flushed = sv.active.is_empty() && sv.immutables.is_empty();
                    let writes = if flushed {
                        Writes::Idle
                    } else {
                        Writes::Pending
                    };
                    (sv.version.clone(), writes)
                };
                let busy = busy.get(&cf.id()).unwrap_or(&idle);
                let task = picker::pick(&version, &cf.options.picker_options(), busy, writes)?;
                Some((cf.clone(), task))
            })
            .max_by(|a, b| a.1.score.total_cmp(&b.1.score))
    }

    /// Runs `task` on family `cf` and installs its result, telling the event listeners as it
    /// begins (once its space is reserved) and as it ends, successful or not.
    pub(super) fn run_compaction(
        &self,
        cf: &Arc<ColumnFamilyData>,
        task: &CompactionTask,
    ) -> Result<Ran> {
        let started = Instant::now();
        // A manual compaction of a family with a filter (or a ttl) rewrites what it would
        // otherwise move, so that the filter sees every entry, as RocksDB does.
        let filtered = cf.options.compaction_filter.is_some() || cf.options.ttl.is_some();
        let trivial = task.is_trivial_move() && !(filtered && task.reason == Reason::Manual);
        // Each level's inputs too: what a merge reads of the level it writes is its cost.
        let describe = || {
            let per_level: Vec<String> = task
                .inputs
                .iter()
                .map(|g| {
                    let bytes: u64 = g.files.iter().map(|f| f.size).sum();
                    format!("L{} {} files {bytes} bytes", g.level, g.files.len())
                })
                .collect();
            format!(
                "{} L{}->L{} (score {:.2}, {} files, {} bytes: {})",
                task.reason.name(),
                task.start_level(),
                task.output_level,
                task.score,
                task.all_inputs().count(),
                task.input_bytes(),
                per_level.join(" + ")
            )
        };
        // Held until the job ends: what its outputs may take, counted by the jobs beside it.
        let _reserved = match trivial {
            true => None,
            false => match self.reserve_space(cf, task, &describe) {
                Some(reserved) => Some(reserved),
                None => return Ok(Ran::SkippedForSpace),
            },
        };
        let mut job = self
            .events
            .enabled()
            .then(|| compaction_info(&self.path, cf, task, trivial));
        if let Some(info) = &job {
            self.notify("on_compaction_begin", |l| l.on_compaction_begin(info));
        }
        let result = self.compact_and_install(cf, task, trivial, started, &describe);
        if let Some(info) = job.as_mut() {
            info.duration = started.elapsed();
            match &result {
                Ok(Some((outputs, _))) => {
                    info.output_files = outputs
                        .iter()
                        .map(|f| file_info(&self.path, task.output_level, f))
                        .collect();
                    if !trivial {
                        info.bytes_written = outputs.iter().map(|f| f.size).sum();
                    }
                }
                // The family was dropped meanwhile: nothing was installed.
                Ok(None) => {}
                Err(e) => info.status = Err(e.duplicate()),
            }
            // The installed version, still held, names the outputs: they exist until the
            // listeners have seen them.
            self.notify("on_compaction_completed", |l| {
                l.on_compaction_completed(info)
            });
        }
        drop(result?);
        self.purge_obsolete_files();
        Ok(Ran::Done)
    }

    /// Reserves the disk space a rewrite of `task` may need, or, if the file system has not
    /// that much free beside what running compactions reserved and room for the writes that
    /// go on meanwhile, logs and counts the skip and returns `None`.
    fn reserve_space(
        &self,
        cf: &ColumnFamilyData,
        task: &CompactionTask,
        describe: &dyn Fn() -> String,
    ) -> Option<ReleaseOnDrop<'_>> {
        // The values garbage collection may move into new blob files count too.
        let relocate_below = gc_cutoff(&cf.options, &cf.sv.read().version, task);
        let moved: u64 = task
            .all_inputs()
            .flat_map(|f| f.blob_refs.iter())
            .filter(|r| r.number < relocate_below)
            .map(|r| r.bytes)
            .sum();
        let bytes_read = task.input_bytes() + moved;
        // A file system that cannot say is assumed to have room.
        let available = self.fs.available_space(&self.path).unwrap_or(u64::MAX);
        let for_writes = (cf.options.write_buffer_size as u64)
            .saturating_mul(cf.options.max_write_buffer_number as u64 * 2);
        let reserved = self
            .compaction_reserved
            .fetch_add(bytes_read, Ordering::Relaxed);
        let release = ReleaseOnDrop(&self.compaction_reserved, bytes_read);
        if available
            < bytes_read
                .saturating_add(reserved)
                .saturating_add(for_writes)
        {
            self.counters.add(Counter::CompactionsSkippedForSpace, 1);
            self.info_log.warn(format_args!(
                "compaction {} skipped: its output may take {bytes_read} bytes, running \
                 compactions {reserved} and writes meanwhile {for_writes}, and the disk \
                 has {available} free",
                describe()
            ));
            return None;
        }
        Some(release)
    }

    /// Merges (or moves) the task's inputs and installs the result: the files now in the
    /// output level and the version installed (which names them), or `None` if the family
    /// was dropped meanwhile.
    fn compact_and_install(
        &self,
        cf: &Arc<ColumnFamilyData>,
        task: &CompactionTask,
        trivial: bool,
        started: Instant,
        describe: &dyn Fn() -> String,
    ) -> Result<Option<(Vec<FileMeta>, Arc<Version>)>> {
        let mut edit = VersionEdit::default();
        for (level, f) in task.inputs_by_level() {
            if !(trivial && level == task.output_level) {
                edit.deleted_files.push((level, f.number));
            }
        }
        let bytes_read = task.input_bytes();
        let mut written = 0;
        if trivial {
            for (level, f) in task.inputs_by_level() {
                if level != task.output_level {
                    edit.new_files.push((task.output_level, (**f).clone()));
                }
            }
        } else {
            let (outputs, blob_files) = self.merge(cf, task)?;
            written = outputs.iter().map(|f| f.size).sum::<u64>()
                + blob_files.iter().map(|b| b.file_size).sum::<u64>();
            for f in outputs {
                edit.new_files.push((task.output_level, f));
            }
            edit.new_blob_files = blob_files;
        }
        let outputs: Vec<FileMeta> = edit.new_files.iter().map(|(_, f)| f.clone()).collect();
        let blob_numbers: Vec<u64> = edit.new_blob_files.iter().map(|b| b.number).collect();
        edit.column_family = cf.id();
        let Some(version) = self.install(cf, edit)? else {
            // The family was dropped meanwhile: the outputs are nobody's.
            if !trivial {
                for f in &outputs {
                    delete_table(self, f.number);
                }
                for b in &blob_numbers {
                    let _ = self.fs.remove_file(&blob_path(&self.path, *b));
                }
            }
            return Ok(None);
        };
        if !trivial {
            let inputs = task.all_inputs().map(|f| f.number);
            self.obsolete_tables.lock().extend(inputs);
        }
        let micros = started.elapsed().as_micros() as u64;
        {
            let mut stats = cf.compaction_stats.lock();
            let s = &mut stats[task.output_level];
            s.count += 1;
            s.moves += u64::from(trivial);
            s.bytes_read += if trivial { 0 } else { bytes_read };
            s.bytes_written += written;
            s.micros += micros;
        }
        self.info_log.info(format_args!(
            "compaction of family '{}' {} {}: {} files, {written} bytes written in {} ms",
            cf.name(),
            describe(),
            if trivial { "moved" } else { "merged" },
            outputs.len(),
            micros / 1000
        ));
        Ok(Some((outputs, version)))
    }

    /// Applies a compaction's edit to family `cf` and installs the new version for readers;
    /// `None` if the family was dropped meanwhile (nothing is applied).
    fn install(&self, cf: &ColumnFamilyData, edit: VersionEdit) -> Result<Option<Arc<Version>>> {
        let mut versions = self.versions.lock();
        if cf.handle.is_dropped() {
            return Ok(None);
        }
        let version = versions.log_and_apply(edit)?;
        if cfg!(debug_assertions) {
            if let Err(why) = version.check() {
                panic!("compaction broke the version invariants: {why}\n{version:?}");
            }
        }
        cf.install_version(version.clone());
        Ok(Some(version))
    }

    /// Merges the task's inputs into new tables (and blob files), in one or several key
    /// ranges.
    fn merge(
        &self,
        cf: &ColumnFamilyData,
        task: &CompactionTask,
    ) -> Result<(Vec<FileMeta>, Vec<BlobFileMeta>)> {
        let version = cf.sv.read().version.clone();
        let snapshots = self.snapshots.all();
        let bottommost = is_bottommost(&version, task);
        // Every input's range deletions: the points are judged against these, and the outputs
        // receive them reduced for the snapshots (see `range_del`). The outputs hold what the
        // inputs held, so their log number is the largest of the inputs'.
        let mut range_del = RangeDelAggregator::for_compaction(snapshots.clone());
        let mut log_number = 0;
        for (level, f) in task.inputs_by_level() {
            let table = self.tables.get(f.number, &version.order, level)?;
            range_del.add(table.range_tombstones());
            log_number = log_number.max(table.properties().log_number);
        }
        let output_tombstones = range_del.compaction_output(bottommost);
        let job = MergeJob {
            db: self,
            table_options: TableOptions {
                log_number,
                ..cf.table_options(false)
            },
            bottommost_table_options: TableOptions {
                log_number,
                ..cf.table_options(true)
            },
            options: &cf.options,
            family: cf.name(),
            // One time for the whole job, so that every subcompaction judges expiry alike.
            ttl_now: cf.options.ttl.map(|_| cf.options.clock.now_secs()),
            task,
            bottommost,
            snapshots,
            range_del,
            output_tombstones,
            grandparents: version
                .levels
                .get(task.output_level + 1)
                .filter(|_| task.output_level > 0)
                .cloned()
                .unwrap_or_default(),
            family_id: cf.id(),
            relocate_below: gc_cutoff(&cf.options, &version, task),
        };
        let ranges = subcompaction_ranges(&cf.options, task);
        let results: Vec<Result<JobOutputs>> = if ranges.len() == 1 {
            vec![job.run(&ranges[0])]
        } else {
            self.counters
                .add(Counter::Subcompactions, ranges.len() as u64);
            std::thread::scope(|s| {
                let handles: Vec<_> = ranges
                    .iter()
                    .map(|range| {
                        let job = &job;
                        s.spawn(move || job.run(range))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        let mut outputs = Vec::new();
        let mut blob_files = Vec::new();
        let mut failure = None;
        for result in results {
            match result {
                Ok((files, blobs)) => {
                    outputs.extend(files);
                    blob_files.extend(blobs);
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        if let Some(e) = failure {
            for f in &outputs {
                delete_table(self, f.number);
            }
            for b in &blob_files {
                let _ = self.fs.remove_file(&blob_path(&self.path, b.number));
            }
            return Err(e);
        }
        Ok((outputs, blob_files))
    }

    /// Compacts every file of `level` whose keys meet [begin, end] into the next level (L0
    /// into the base level), as db_bench's compact0 and compact1; `None` bounds are open.
    pub(super) fn compact_level_range(
        &self,
        cf: &Arc<ColumnFamilyData>,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        if level + 1 >= cf.options.num_levels {
            return Err(Error::InvalidArgument(format!(
                "cannot compact level {level}: the tree has {} levels",
                cf.options.num_levels
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
            picker::level_targets(&version, &cf.options.picker_options())
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
    fn run_manual(&self, cf: &Arc<ColumnFamilyData>, task: &CompactionTask) -> Result<()> {
        let ran = self.run_compaction(cf, task).inspect_err(|e| {
            if self.events.enabled() && !self.shutting_down.load(Ordering::Acquire) {
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
    pub(super) fn compact_range(
        &self,
        cf: &Arc<ColumnFamilyData>,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.flush_memtables(Some(cf), crate::listener::FlushReason::ManualCompaction)?;
        if cf.options.compaction_style == CompactionStyle::Universal {
            let _exclusive = self.begin_manual_compaction()?;
            let version = cf.sv.read().version.clone();
            let runs = universal::sorted_runs(&version);
            let last = cf.options.num_levels - 1;
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
        let last = cf.options.num_levels - 1;
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

/// The key ranges a task is split into (one unless `max_subcompactions` > 1).
fn subcompaction_ranges(options: &Options, task: &CompactionTask) -> Vec<KeyRange> {
    let n = options.max_subcompactions as u64;
    if n <= 1 || task.output_level == 0 {
        return vec![(None, None)];
    }
    let mut files: Vec<&Arc<FileMeta>> = task
        .inputs
        .iter()
        .filter(|g| g.level > 0)
        .flat_map(|g| g.files.iter())
        .collect();
    let order = &task.order;
    files.sort_by(|a, b| order.compare(user_key(&a.smallest), user_key(&b.smallest)));
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut bounds: Vec<Vec<u8>> = Vec::new();
    let mut before = 0u64;
    for f in files {
        let next_share = total * (bounds.len() as u64 + 1) / n;
        let key = user_key(&f.smallest);
        if before > 0 && before >= next_share && bounds.last().is_none_or(|b| order.lt(b, key)) {
            bounds.push(key.to_vec());
            if bounds.len() as u64 + 1 == n {
                break;
            }
        }
        before += f.size;
    }
    let mut ranges = Vec::with_capacity(bounds.len() + 1);
    let mut start = None;
    for b in bounds {
        ranges.push((start, Some(b.clone())));
        start = Some(b);
    }
    ranges.push((start, None));
    ranges
}

/// The event record of `task` on family `cf` as it begins.
fn compaction_info(
    dir: &Path,
    cf: &ColumnFamilyData,
    task: &CompactionTask,
    trivial: bool,
) -> CompactionJobInfo {
    CompactionJobInfo {
        cf_name: cf.name().to_string(),
        reason: match task.reason {
            Reason::Level0FileCount => CompactionReason::LevelL0FilesNum,
            Reason::LevelSize => CompactionReason::LevelMaxLevelSize,
            Reason::SizeAmplification => CompactionReason::UniversalSizeAmplification,
            Reason::SizeRatio => CompactionReason::UniversalSizeRatio,
            Reason::RunCount => CompactionReason::UniversalSortedRunNum,
            Reason::Manual => CompactionReason::Manual,
            Reason::BlobGarbage => CompactionReason::ForcedBlobGc,
            Reason::ReadTriggered => CompactionReason::ReadTriggered,
            Reason::Level0Move => CompactionReason::Level0Move,
            Reason::Level0Idle => CompactionReason::Level0Idle,
        },
        base_input_level: task.start_level(),
        output_level: task.output_level,
        input_files: task
            .inputs_by_level()
            .map(|(level, f)| file_info(dir, level, f))
            .collect(),
        output_files: Vec::new(),
        trivial_move: trivial,
        bytes_read: if trivial { 0 } else { task.input_bytes() },
        bytes_written: 0,
        duration: Duration::ZERO,
        status: Ok(()),
    }
}

/// File `f` of `level` as an event names it.
fn file_info(dir: &Path, level: usize, f: &FileMeta) -> CompactionFileInfo {
    CompactionFileInfo {
        level,
        file_number: f.number,
        path: table_path(dir, f.number),
        bytes: f.size,
    }
}

/// Gives back bytes reserved in a counter when dropped.
struct ReleaseOnDrop<'a>(&'a std::sync::atomic::AtomicU64, u64);

impl Drop for ReleaseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::Relaxed);
    }
}

/// One merge: the task, what the compaction filter needs, and the level below the output.
struct MergeJob<'a> {
    db: &'a DbInner,
    /// The options of the outputs: the family's, with the family recorded in them.
    table_options: TableOptions,
    /// The same for outputs in the bottommost level (`bottommost_compression`).
    bottommost_table_options: TableOptions,
    /// The options of the family being compacted.
    options: &'a Options,
    /// The family's name, for errors.
    family: &'a str,
    /// The clock's time when the job started, in a TTL family.
    ttl_now: Option<u64>,
    task: &'a CompactionTask,
    bottommost: bool,
    snapshots: Vec<SequenceNumber>,
    /// The range deletions of the inputs.
    range_del: RangeDelAggregator,
    /// The range deletions the outputs keep, each output taking those within its key range.
    output_tombstones: FragmentedList,
    /// Files of the level below the output level, where outputs are cut by overlap.
    grandparents: Vec<Arc<FileMeta>>,
    /// The family's id, recorded in its blob files.
    family_id: u32,
    /// References into blob files numbered below this are moved (blob garbage collection);
    /// 0 for none.
    relocate_below: u64,
}

/// What one key range of a merge wrote: tables and blob files.
type JobOutputs = (Vec<FileMeta>, Vec<BlobFileMeta>);

/// The blob files a compaction moves values out of: those below the returned number, the
/// oldest `blob_garbage_collection_age_cutoff` of the family's blob files (0: none). A
/// read-triggered compaction moves none: it is paid for by the reads it saves, judged on the
/// tables it rewrites, and moving values too (a few hundred MiB after an overwrite of 1 GiB of
/// 16 KiB values) would cost many times that; the compactions writes set off collect them.
fn gc_cutoff(options: &Options, version: &Version, task: &CompactionTask) -> u64 {
    if !options.enable_blob_garbage_collection || task.reason == Reason::ReadTriggered {
        return 0;
    }
    let files = &version.blob_files;
    let oldest = (files.len() as f64 * options.blob_garbage_collection_age_cutoff) as usize;
    match oldest {
        0 => 0,
        n => files.keys().nth(n).copied().unwrap_or(u64::MAX),
    }
}

/// The outputs of one key range as they are written.
struct Outputs<'a> {
    job: &'a MergeJob<'a>,
    /// The blob files, when values are separated or moved.
    blobs: Option<BlobOutput<'a>>,
    done: Vec<FileMeta>,
    current: Option<TableOutput>,
    /// Where the outputs are cut, given the level below the output level.
    cutter: OutputCutter<'a>,
    /// The first user key the current (or next) output owns: where the previous one was cut,
    /// or the start of the key range. Range deletions from here to the next cut go into it.
    lower: Option<Vec<u8>>,
    /// The end of the key range (exclusive), `None` for no end.
    upper: Option<Vec<u8>>,
    /// With `warm_compaction_outputs` and a block cache: what the inputs tell of the cache.
    warm: Option<Arc<WarmInputs>>,
}

impl MergeJob<'_> {
    /// Merges the entries in `range` into tables.
    fn run(&self, range: &KeyRange) -> Result<JobOutputs> {
        let db = self.db;
        let stats = Arc::new(TableReadStats::default());
        let warm = db
            .tables
            .block_cache()
            .filter(|_| db.options.warm_compaction_outputs)
            .map(|cache| (cache, Arc::new(WarmInputs::default())));
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for group in &self.task.inputs {
            let open = || open_input(db, self.options, &stats, warm.clone());
            if group.level == 0 {
                for f in &group.files {
                    children.push(open()(f)?);
                }
            } else {
                children.push(Box::new(ConcatIterator::with_order(
                    group.files.clone(),
                    Box::new(open()),
                    self.task.order.clone(),
                )));
            }
        }
        let merged = MergingIterator::with_order(children, self.task.order.clone());
        let mut it = SkipCovered::new(merged, self.range_del.clone());
        let mut filter = VisibilityFilter::new(self.snapshots.clone(), self.bottommost);
        let mut out = Outputs {
            job: self,
            blobs: BlobOutput::new(
                db,
                self.family_id,
                self.options,
                IoClass::Compaction,
                self.relocate_below,
            ),
            done: Vec::new(),
            current: None,
            cutter: OutputCutter::new(
                &self.grandparents,
                self.options.target_file_size_base,
                self.options.max_compaction_bytes(),
                self.task.order.clone(),
            ),
            lower: range.0.clone(),
            upper: range.1.clone(),
            warm: warm.map(|(_, inputs)| inputs),
        };
        let result = (|| -> Result<()> {
            match &range.0 {
                Some(start) => {
                    let mut target = Vec::new();
                    append_internal_key(&mut target, start, MAX_SEQUENCE, KIND_FOR_SEEK);
                    it.seek(&target);
                }
                None => it.seek_to_first(),
            }
            let mut entries = 0u32;
            let end = range.1.as_deref();
            let stop = |key: &[u8]| {
                entries = entries.wrapping_add(1);
                if entries.is_multiple_of(1024) && db.shutting_down.load(Ordering::Acquire) {
                    return Err(Error::Unavailable(
                        "compaction cancelled: the database is closing".into(),
                    ));
                }
                Ok(end.is_some_and(|end| self.task.order.le(end, user_key(key))))
            };
            let op = self.options.merge_operator.as_deref();
            let mut stage = FilterStage::new(
                self.options.compaction_filter.clone(),
                self.ttl_now,
                self.task.output_level,
                &self.snapshots,
                self.family,
            );
            let resolve = |key: &[u8], reference: &[u8]| db.blobs.get_uncached(key, reference);
            write_visible_filtered(
                &mut it,
                &mut filter,
                op,
                stage.as_mut(),
                Some(&resolve),
                stop,
                |k, v| out.add(k, v),
            )?;
            out.finish_last()
        })();
        db.io.add_read(IoClass::Compaction, stats.bytes_read.get());
        let result = result.and_then(|()| match out.blobs.take() {
            Some(blobs) => blobs.finish(),
            None => Ok(Vec::new()),
        });
        match result {
            Ok(blob_files) => Ok((out.done, blob_files)),
            Err(e) => {
                let written = out.done.iter().map(|f| f.number);
                for n in written.chain(out.current.as_ref().map(|o| o.number())) {
                    delete_table(db, n);
                }
                Err(e)
            }
        }
    }
}

impl Outputs<'_> {
    /// Adds an entry, first cutting the current output where the cutter says (see
    /// `compaction::cut`).
    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut blobs = self.blobs.take();
        let result = match blobs.as_mut().map(|b| b.separate(key, value)).transpose() {
            Ok(Some(Some((key, value)))) => self.add_to_table(key, value),
            Ok(_) => self.add_to_table(key, value),
            Err(e) => Err(e),
        };
        self.blobs = blobs;
        result
    }

    /// Adds an entry to the current table.
    fn add_to_table(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let job = self.job;
        let (size, may_cut) = match &self.current {
            Some(o) => (
                o.file_size(),
                job.task.output_level > 0 && user_key(o.largest()) != user_key(key),
            ),
            None => (0, false),
        };
        if self.cutter.cut_before(user_key(key), size, may_cut) {
            self.finish_current(Some(user_key(key)))?;
        }
        self.current_output()?.add(key, value)
    }

    /// The output being written, created if there is none.
    fn current_output(&mut self) -> Result<&mut TableOutput> {
        let job = self.job;
        let options = job.options;
        let out = match self.current.take() {
            Some(out) => out,
            None => {
                let db = job.db;
                let number = db.versions.lock().new_file_number();
                let last_level = job.task.output_level + 1 == options.num_levels;
                let table_options = match job.bottommost && last_level {
                    true => job.bottommost_table_options.clone(),
                    false => job.table_options.clone(),
                };
                let mut out = TableOutput::create(
                    db,
                    job.family,
                    number,
                    IoClass::Compaction,
                    table_options,
                )?;
                if let Some(inputs) = &self.warm {
                    let inputs = inputs.clone();
                    out.cache_data_blocks(db, move || inputs.judge_block());
                }
                out
            }
        };
        Ok(self.current.insert(out))
    }

    /// Finishes the table being written, if any, cut before user key `cut` (`None`: at the
    /// end of the key range). It receives the range deletions from the previous cut to this
    /// one, clipped to them; where no point entry is written, they make an output of their
    /// own, so that no tombstone is lost in a gap between outputs.
    fn finish_current(&mut self, cut: Option<&[u8]>) -> Result<()> {
        let list = &self.job.output_tombstones;
        if !list.is_empty() {
            let upper = cut.or(self.upper.as_deref());
            let within: Vec<_> = list
                .tombstones_within(self.lower.as_deref(), upper)
                .collect();
            if !within.is_empty() {
                self.current_output()?.add_range_tombstones(within)?;
            }
        }
        if let Some(out) = self.current.take() {
            self.done.push(out.finish(self.job.db)?);
        }
        if let Some(cut) = cut {
            self.lower = Some(cut.to_vec());
        }
        Ok(())
    }

    /// Finishes the last output of the key range.
    fn finish_last(&mut self) -> Result<()> {
        self.finish_current(None)
    }
}

/// Opens an input table of a compaction (no block cache) as an iterator; with `warm`, one
/// that tells the tally which of its blocks the block cache holds.
fn open_input(
    db: &DbInner,
    options: &Options,
    stats: &Arc<TableReadStats>,
    warm: Option<(Arc<BlockCache>, Arc<WarmInputs>)>,
) -> impl Fn(&Arc<FileMeta>) -> Result<Box<dyn InternalIterator>> + Send + 'static {
    let fs = db.fs.clone();
    let dir = db.path.clone();
    let mut read = TableReadOptions::uncached(options.table_options(false));
    read.stats = stats.clone();
    let direct = db.options.use_direct_io_for_flush_and_compaction;
    let readahead = db.options.compaction_readahead_size;
    move |f: &Arc<FileMeta>| {
        let path = table_path(&dir, f.number);
        let read = TableReadOptions {
            cache_id: f.number,
            ..read.clone()
        };
        let file = match direct {
            // Direct reads get no readahead from the kernel: the compaction brings its own.
            true if readahead > 0 => {
                Box::new(ReadaheadFile::new(fs.open_random_direct(&path)?, readahead))
            }
            true => fs.open_random_direct(&path)?,
            false => fs.open_random(&path)?,
        };
        let it = Arc::new(Table::open(file, &path, &read)?).iter();
        Ok(match &warm {
            Some((cache, inputs)) => Box::new(ProbedInput::new(
                it,
                cache.clone(),
                f.number,
                inputs.clone(),
            )),
            None => Box::new(it) as Box<dyn InternalIterator>,
        })
    }
}

/// True when no file outside the task may hold older versions of keys in its range: none
/// in the levels below the output, and (for an output in L0) no older L0 file.
fn is_bottommost(version: &Version, task: &CompactionTask) -> bool {
    let Some((lo, hi)) = task.key_range() else {
        return true;
    };
    let inputs: HashSet<u64> = task.all_inputs().map(|f| f.number).collect();
    let oldest_input = task.all_inputs().map(|f| f.smallest_seq).min().unwrap_or(0);
    version.levels.iter().enumerate().all(|(level, files)| {
        files.iter().all(|f| {
            let older = if level == 0 {
                f.largest_seq < oldest_input
            } else {
                level >= task.output_level
            };
            let order = &task.order;
            let meets = order.le(&lo, user_key(&f.largest)) && order.le(user_key(&f.smallest), &hi);
            inputs.contains(&f.number) || !older || !meets
        })
    })
}
