//! Running compactions: the merge job (`compact/merge_job.rs`), installing its result,
//! deleting files no reader needs, and manual control (`compact/manual.rs`: `compact_range`,
//! `compact_level`).
//!
//! A job reads its inputs through table readers of its own (they never read through the block
//! cache, so a compaction's reads evict nothing; with `warm_compaction_outputs` it puts in the
//! cache the output blocks of input blocks readers used, `warm_cache.rs`): one cursor per L0
//! file and one per deeper level (a [`ConcatIterator`] that opens the level's files in
//! turn), merged by a heap. Entries pass through the family's compaction filter and TTL
//! expiry (`compaction::filter_stage`, never in flushes) and a [`VisibilityFilter`]; outputs are cut on user-key boundaries (no user key
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

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::families::ColumnFamilyData;
use super::stats::Counter;
use super::table_writer::delete_table;
use super::DbInner;
use crate::compaction::fifo::TableAges;
use crate::compaction::picker::{self, Busy, CompactionTask, Reason, Writes};
use crate::error::Result;
use crate::filename::{blob_path, table_path};
use crate::histogram::Histogram;
use crate::key::user_key;
use crate::listener::{CompactionFileInfo, CompactionJobInfo, CompactionReason};
use crate::options::Options;
use crate::range_del::RangeDelAggregator;
use crate::table::TableOptions;
use crate::version::{BlobFileMeta, FileMeta, Version, VersionEdit};

mod manual;
mod merge_job;

use merge_job::{gc_cutoff, is_bottommost, JobOutputs, MergeJob};

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
            .filter_map(|cf| {
                let options = cf.current_options();
                if options.disable_auto_compactions {
                    return None;
                }
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
                let o = options.picker_options();
                let ages = match o.reads_ages() {
                    true => self.table_ages(cf, &version),
                    false => TableAges::default(),
                };
                let task = picker::pick_aged(&version, &o, busy, writes, &ages)?;
                Some((cf.clone(), task))
            })
            .max_by(|a, b| a.1.score.total_cmp(&b.1.score))
    }

    /// Whether some family's compactions are picked by the age of its tables, which grows
    /// with nothing else happening.
    pub(super) fn picks_by_age(&self) -> bool {
        self.families().values().any(|cf| {
            let options = cf.current_options();
            !options.disable_auto_compactions && options.picker_options().reads_ages()
        })
    }

    /// The clock's time and the creation times of `version`'s tables (from their properties;
    /// a table that fails to open has no known age).
    fn table_ages(&self, cf: &ColumnFamilyData, version: &Version) -> TableAges {
        let created = version
            .levels
            .iter()
            .enumerate()
            .flat_map(|(level, files)| files.iter().map(move |f| (level, f)))
            .filter_map(|(level, f)| {
                let table = self.tables.get_for(f, &version.order, level).ok()?;
                Some((f.number, table.properties().creation_time))
            })
            .collect();
        TableAges {
            now: cf.options.clock.now_secs(),
            created,
        }
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
        let _reserved = match trivial || task.deletes_inputs() {
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
        let options = cf.current_options();
        let relocate_below = gc_cutoff(&options, &cf.sv.read().version, task);
        let moved: u64 = task
            .all_inputs()
            .flat_map(|f| f.blob_refs.iter())
            .filter(|r| r.number < relocate_below)
            .map(|r| r.bytes)
            .sum();
        let bytes_read = task.input_bytes() + moved;
        // A file system that cannot say is assumed to have room.
        let available = self.fs.available_space(&self.path).unwrap_or(u64::MAX);
        let for_writes = (options.write_buffer_size as u64)
            .saturating_mul(options.max_write_buffer_number as u64 * 2);
        let reserved = self
            .bg
            .compaction_reserved
            .fetch_add(bytes_read, Ordering::Relaxed);
        let release = ReleaseOnDrop(&self.bg.compaction_reserved, bytes_read);
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
        if task.deletes_inputs() {
            // FIFO: the inputs go, nothing is written.
        } else if trivial {
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
            self.obsolete.tables.lock().extend(inputs);
        }
        let micros = started.elapsed().as_micros() as u64;
        self.histograms.record(Histogram::Compaction, micros);
        {
            let mut stats = cf.compaction_stats.lock();
            let s = &mut stats[task.output_level];
            s.count += 1;
            s.moves += u64::from(trivial);
            s.bytes_read += if trivial || task.deletes_inputs() {
                0
            } else {
                bytes_read
            };
            s.bytes_written += written;
            s.micros += micros;
        }
        self.info_log.info(format_args!(
            "compaction of family '{}' {} {}: {} files, {written} bytes written in {} ms",
            cf.name(),
            describe(),
            match (trivial, task.deletes_inputs()) {
                (_, true) => "deleted",
                (true, false) => "moved",
                (false, false) => "merged",
            },
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
        // With the last level reserved, what an output shadows may be ingested under it
        // later: no output is the bottom of its keys.
        let bottommost = !cf.options.allow_ingest_behind && is_bottommost(&version, task);
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
        // The family's options as they are when the job starts (`Db::set_cf_options` may
        // change them while it runs).
        let options = cf.current_options();
        let job = MergeJob {
            db: self,
            table_options: TableOptions {
                log_number,
                ..cf.table_options_at(task.output_level, false)
            },
            bottommost_table_options: TableOptions {
                log_number,
                ..cf.table_options_at(task.output_level, true)
            },
            options: &options,
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
            relocate_below: gc_cutoff(&options, &version, task),
        };
        let ranges = subcompaction_ranges(&options, task);
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
            Reason::FifoMaxSize => CompactionReason::FifoMaxSize,
            Reason::FifoTtl => CompactionReason::FifoTtl,
            Reason::FifoIntraL0 => CompactionReason::FifoReduceNumFiles,
            Reason::Periodic => CompactionReason::PeriodicCompaction,
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
