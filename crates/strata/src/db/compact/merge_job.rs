//! One merge of a compaction (one key range of it, with subcompactions): its inputs read
//! through table readers of its own, its entries filtered and cut into output tables and
//! blob files.

use super::KeyRange;
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::compaction::covered::SkipCovered;
use crate::compaction::cut::OutputCutter;
use crate::compaction::filter_stage::FilterStage;
use crate::compaction::operands::write_visible_filtered;
use crate::compaction::picker::{CompactionTask, Reason};
use crate::compaction::VisibilityFilter;
use crate::db::blob::output::BlobOutput;
use crate::db::table_writer::{delete_table, TableOutput};
use crate::db::warm_cache::{ProbedInput, WarmInputs};
use crate::db::DbInner;
use crate::error::{Error, Result};
use crate::filename::table_path;
use crate::fs::direct::ReadaheadFile;
use crate::fs::IoClass;
use crate::iterator::{ConcatIterator, InternalIterator, MergingIterator};
use crate::key::{append_internal_key, user_key, SequenceNumber, KIND_FOR_SEEK, MAX_SEQUENCE};
use crate::options::Options;
use crate::range_del::{FragmentedList, RangeDelAggregator};
use crate::table::reader::{BlockCache, TableReadOptions, TableReadStats};
use crate::table::{Table, TableOptions};
use crate::version::{BlobFileMeta, FileMeta, Version};

/// One merge: the task, what the compaction filter needs, and the level below the output.
pub(super) struct MergeJob<'a> {
    pub(super) db: &'a DbInner,
    /// The options of the outputs: the family's, with the family recorded in them.
    pub(super) table_options: TableOptions,
    /// The same for outputs in the bottommost level (`bottommost_compression`).
    pub(super) bottommost_table_options: TableOptions,
    /// The options of the family being compacted.
    pub(super) options: &'a Options,
    /// The family's name, for errors.
    pub(super) family: &'a str,
    /// The clock's time when the job started, in a TTL family.
    pub(super) ttl_now: Option<u64>,
    pub(super) task: &'a CompactionTask,
    pub(super) bottommost: bool,
    pub(super) snapshots: Vec<SequenceNumber>,
    /// The range deletions of the inputs.
    pub(super) range_del: RangeDelAggregator,
    /// The range deletions the outputs keep, each output taking those within its key range.
    pub(super) output_tombstones: FragmentedList,
    /// Files of the level below the output level, where outputs are cut by overlap.
    pub(super) grandparents: Vec<Arc<FileMeta>>,
    /// The family's id, recorded in its blob files.
    pub(super) family_id: u32,
    /// References into blob files numbered below this are moved (blob garbage collection);
    /// 0 for none.
    pub(super) relocate_below: u64,
}

/// What one key range of a merge wrote: tables and blob files.
pub(super) type JobOutputs = (Vec<FileMeta>, Vec<BlobFileMeta>);

/// The blob files a compaction moves values out of: those below the returned number, the
/// oldest `blob_garbage_collection_age_cutoff` of the family's blob files (0: none). A
/// read-triggered compaction moves none: it is paid for by the reads it saves, judged on the
/// tables it rewrites, and moving values too (a few hundred MiB after an overwrite of 1 GiB of
/// 16 KiB values) would cost many times that; the compactions writes set off collect them.
pub(super) fn gc_cutoff(options: &Options, version: &Version, task: &CompactionTask) -> u64 {
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
    pub(super) fn run(&self, range: &KeyRange) -> Result<JobOutputs> {
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
                self.options.target_file_size(self.task.output_level),
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
                if entries.is_multiple_of(1024) && db.bg.shutting_down.load(Ordering::Acquire) {
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
    let readahead = db.online.db().compaction_readahead_size;
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
pub(super) fn is_bottommost(version: &Version, task: &CompactionTask) -> bool {
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
