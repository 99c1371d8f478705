//! Flush: writing immutable memtables to level-0 tables (run by the flush thread, see
//! `background`).
//!
//! Order of a flush, each step durable before the next:
//! 1. build `NNNNNN.sst` from the oldest immutable memtable, fsync it and the directory;
//! 2. record the table and the new log number (the oldest WAL still needed) in the
//!    manifest, fsync;
//! 3. install a super version with the table and without the memtable;
//! 4. delete the WALs no family needs any more (a WAL holds the writes of every family, so
//!    one family's flush frees a WAL only if the others have flushed theirs or had nothing
//!    in it).
//!
//! Event listeners hear of the flush as it begins (before step 1) and completes (after step
//! 3, the table installed and pinned by the flush's version until the callbacks return), and
//! of each WAL step 4 deletes. An empty memtable writes no table and is not announced.
//!
//! Each family flushes on its own: the flush thread takes the family whose oldest immutable
//! memtable is on the oldest WAL, so WALs are freed in order. A crash between steps leaves
//! either an orphan table (deleted at the next open, the WAL replays the data) or a WAL that
//! is no longer needed (deleted at the next open). A failed
//! flush stops background work: writes then fail with the cause, reads go on.

use crate::compaction::covered::SkipCovered;
use crate::histogram::Histogram;
use crate::range_del::RangeDelAggregator;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::background::background_error;
use super::blob::output::BlobOutput;
use super::families::ColumnFamilyData;
use super::stats::Counter;
use super::table_writer::{delete_table, write_visible, TableOutput};
use super::{DbInner, SuperVersion};
use crate::blob::BlobIndex;
use crate::compaction::VisibilityFilter;
use crate::error::{Error, Result};
use crate::filename::{blob_path, table_path, wal_path};
use crate::fs::IoClass;
use crate::iterator::InternalIterator;
use crate::key::SequenceNumber;
use crate::listener::{FlushJobInfo, FlushReason, WalFileDeletionInfo};
use crate::memtable::MemTable;
use crate::table::TableOptions;
use crate::version::{BlobFileMeta, FileMeta, VersionEdit};

impl DbInner {
    /// The family whose oldest immutable memtable is on the oldest WAL, if any family has
    /// one.
    pub(super) fn family_to_flush(&self) -> Option<Arc<ColumnFamilyData>> {
        self.families()
            .values()
            .filter_map(|cf| {
                let oldest = cf.sv.read().immutables.last()?.log_number();
                Some((oldest, cf.clone()))
            })
            .min_by_key(|(log, _)| *log)
            .map(|(_, cf)| cf)
    }

    /// Flushes the oldest immutable memtable of family `cf`, if it has one.
    pub(super) fn flush_oldest_immutable(&self, cf: &ColumnFamilyData) -> Result<()> {
        let sv = cf.super_version();
        let Some(imm) = sv.immutables.last().cloned() else {
            return Ok(());
        };
        // The oldest WAL still needed once `imm` is in a table: that of the next memtable.
        let next_log = match sv.immutables.len() {
            1 => sv.active.log_number(),
            n => sv.immutables[n - 2].log_number(),
        };
        let reason = cf.take_flush_reason(&imm);
        let number = self.versions.lock().new_file_number();
        let started = Instant::now();
        // The flush's event record, when there are listeners and a table to write.
        let mut job = (self.events.enabled() && !imm.is_empty()).then(|| FlushJobInfo {
            cf_name: cf.name().to_string(),
            file_number: number,
            file_path: table_path(&self.path, number),
            wal_number: imm.log_number(),
            memtable_entries: imm.num_entries(),
            memtable_bytes: imm.memory_usage() as u64,
            table_entries: 0,
            table_bytes: 0,
            duration: Duration::ZERO,
            reason,
        });
        if let Some(info) = &job {
            self.notify("on_flush_begin", |l| l.on_flush_begin(info));
        }
        let (meta, blob_files) = match self.write_level0_table(cf, &imm, number, next_log) {
            Ok(Some((meta, blobs))) => (Some(meta), blobs),
            Ok(None) => (None, Vec::new()),
            Err(e) => {
                delete_table(self, number);
                return Err(e);
            }
        };
        let mut edit = VersionEdit {
            column_family: cf.id(),
            log_number: Some(next_log),
            ..VersionEdit::default()
        };
        match &meta {
            Some(m) => self.info_log.info(format_args!(
                "flush: memtable of family '{}' on WAL {} to table {} ({} entries, {} bytes)",
                cf.name(),
                imm.log_number(),
                m.number,
                m.entries,
                m.size
            )),
            None => self.info_log.info(format_args!(
                "flush: memtable of family '{}' on WAL {} was empty",
                cf.name(),
                imm.log_number()
            )),
        }
        let table = meta.as_ref().map(|m| (m.number, m.entries, m.size));
        let blob_numbers: Vec<u64> = blob_files.iter().map(|b| b.number).collect();
        if let Some(meta) = meta {
            edit.last_sequence = Some(meta.largest_seq);
            edit.new_files.push((0, meta));
        }
        edit.new_blob_files = blob_files;
        // Blob files an edit that fails (or a dropped family) leaves unnamed.
        let delete_blobs = || {
            for &n in &blob_numbers {
                let _ = self.fs.remove_file(&blob_path(&self.path, n));
            }
        };
        let installed = {
            let mut versions = self.versions.lock();
            // Dropped while the table was written (drops are recorded under this lock).
            if cf.handle.is_dropped() {
                drop(versions);
                if let Some((n, _, _)) = table {
                    delete_table(self, n);
                }
                delete_blobs();
                return Ok(());
            }
            let version = versions.log_and_apply(edit)?;
            cf.note_new_version(&version);
            let mut current = cf.sv.write();
            let immutables = current
                .immutables
                .iter()
                .filter(|m| !Arc::ptr_eq(m, &imm))
                .cloned()
                .collect();
            *current = Arc::new(SuperVersion::new(
                current.active.clone(),
                immutables,
                version.clone(),
            ));
            version
        };
        if let (Some(info), Some((_, entries, bytes))) = (job.as_mut(), table) {
            info.table_entries = entries;
            info.table_bytes = bytes;
            info.duration = started.elapsed();
            // `installed` names the table: no compaction's purge deletes it before the
            // listeners have seen it.
            self.notify("on_flush_completed", |l| l.on_flush_completed(info));
        }
        drop(installed);
        self.report_memtable_memory();
        self.delete_obsolete_wals()?;
        self.counters.add(Counter::Flushes, 1);
        let micros = started.elapsed().as_micros() as u64;
        self.histograms.record(Histogram::Flush, micros);
        // Tables a compaction could not delete while this flush held an older version.
        self.purge_obsolete_files();
        Ok(())
    }

    /// Deletes the WALs older than every live family's oldest memtable. Their data is in
    /// tables the manifest records (or belongs to dropped families); recovery would not replay
    /// them.
    /// Event listeners hear of each WAL deleted, once the lock on the list is let go.
    pub(super) fn delete_obsolete_wals(&self) -> Result<()> {
        let Some(needed) = self.families().values().map(|cf| cf.needed_wal()).min() else {
            return Ok(());
        };
        // Taken off the list under its lock, deleted outside it: unlinking a WAL of a large
        // memtable frees its pages in the page cache (about 20 ms for 64 MiB), and a write
        // group switching memtables takes the same lock to list its new WAL. A WAL whose
        // deletion fails goes back on the list, to be tried again by the next flush (or
        // deleted at the next open: it is older than the manifest's log number).
        let obsolete: Vec<u64> = {
            let mut wals = self.wal.wals.lock();
            let newer = wals.split_off(&needed);
            std::mem::replace(&mut *wals, newer).into_iter().collect()
        };
        {
            let mut sizes = self.wal.sizes.lock();
            for number in &obsolete {
                sizes.remove(number);
            }
        }
        let mut deleted = Vec::new();
        let mut result = Ok(());
        for (i, &number) in obsolete.iter().enumerate() {
            // A WAL closed unsynced is still open for a sync no one will need now: closed
            // here, so that the unlink frees its pages.
            drop(self.wal.closed.take(number));
            match self.retire_wal(number) {
                Ok(()) => deleted.push(number),
                // Already gone (recovery removed it: it held nothing).
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    self.wal.wals.lock().extend(obsolete[i..].iter().copied());
                    result = Err(e);
                    break;
                }
            }
        }
        // Once the newest WAL that named a blob file kept for them is gone, none does.
        self.blobs_at_write.for_wals.lock().retain(|&(n, wal)| {
            if wal >= needed {
                return true;
            }
            let _ = self.fs.remove_file(&blob_path(&self.path, n));
            false
        });
        if self.events.enabled() {
            for log_number in deleted {
                let info = WalFileDeletionInfo {
                    log_number,
                    path: wal_path(&self.path, log_number),
                };
                self.notify("on_wal_file_deleted", |l| l.on_wal_file_deleted(&info));
            }
        }
        result
    }

    /// Writes `mem` of family `cf` to table `number`, and its large values to blob files if
    /// the family separates them; `None` if the memtable is empty. The values the write path
    /// put in blob files already (`blob::at_write`) are written as their references, and their
    /// files go with the table.
    pub(super) fn write_level0_table(
        &self,
        cf: &ColumnFamilyData,
        mem: &Arc<MemTable>,
        number: u64,
        next_log: u64,
    ) -> Result<Option<(FileMeta, Vec<BlobFileMeta>)>> {
        if mem.is_empty() {
            return Ok(None);
        }
        let at_write = cf.separated_at_write.take(mem.id());
        if let Some(lost) = at_write.as_ref().and_then(|a| a.lost.as_ref()) {
            let e = lost.duplicate();
            if let Some(at_write) = at_write {
                cf.separated_at_write.put_back(mem.id(), at_write);
            }
            return Err(e);
        }
        let refs = at_write.as_ref().map_or(&[][..], |a| &a.refs[..]);
        match self.write_memtable(cf, mem, number, next_log, refs) {
            Ok(Some((meta, mut blob_files))) => {
                blob_files.extend(at_write.into_iter().flat_map(|a| a.files));
                Ok(Some((meta, blob_files)))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                // A later try needs them again; the WAL still names their files.
                if let Some(at_write) = at_write {
                    cf.separated_at_write.put_back(mem.id(), at_write);
                }
                Err(e)
            }
        }
    }

    /// The table of [`DbInner::write_level0_table`] and the blob files the flush writes
    /// itself; `next_log` is the WAL of the memtable after `mem` (the table's log number),
    /// `refs` the references the write path gave the puts it separated, by sequence number.
    fn write_memtable(
        &self,
        cf: &ColumnFamilyData,
        mem: &Arc<MemTable>,
        number: u64,
        next_log: u64,
        refs: &[(SequenceNumber, BlobIndex)],
    ) -> Result<Option<(FileMeta, Vec<BlobFileMeta>)>> {
        let options = TableOptions {
            log_number: next_log,
            ..cf.table_options(false)
        };
        let mut table = TableOutput::create(self, cf.name(), number, IoClass::Flush, options)?;
        table.prepopulate_block_cache(self);
        // Versions a newer write in this memtable hides from every reader are dropped here,
        // as a compaction would (never as the bottom of the tree: older data lies below).
        let snapshots = self.snapshots.all();
        let mut filter = VisibilityFilter::new(snapshots.clone(), false);
        // Points the memtable's range deletions delete for every reader are dropped; the
        // tombstones themselves are kept (reduced per snapshot stripe): older data lies below.
        let mut range_del = RangeDelAggregator::for_compaction(snapshots);
        if mem.has_range_tombstones() {
            range_del.add(mem.range_tombstones());
            table.add_range_tombstones(range_del.compaction_output(false).tombstones())?;
        }
        let mut it = SkipCovered::new(mem.iter(), range_del);
        it.seek_to_first();
        let op = cf.options.merge_operator.as_deref();
        let mut blobs = BlobOutput::new(self, cf.id(), &cf.current_options(), IoClass::Flush, 0)
            .map(|b| b.with_references_at_put(refs));
        write_visible(
            &mut it,
            &mut filter,
            op,
            |_| Ok(false),
            |k, v| match blobs.as_mut().map(|b| b.separate(k, v)).transpose()? {
                Some(Some((k, v))) => table.add(k, v),
                _ => table.add(k, v),
            },
        )?;
        let blob_files = match blobs {
            Some(b) => b.finish()?,
            None => Vec::new(),
        };
        match table.finish(self) {
            Ok(meta) => Ok(Some((meta, blob_files))),
            Err(e) => {
                for b in &blob_files {
                    let _ = self.fs.remove_file(&blob_path(&self.path, b.number));
                }
                Err(e)
            }
        }
    }

    /// Switches the active memtable of family `cf` (of every family with `None`) if it holds
    /// anything, to be flushed for `reason`, then waits until those families have no
    /// immutable memtable left (and, with event listeners, until the flush that took the
    /// last one has called them).
    pub(super) fn flush_memtables(
        &self,
        cf: Option<&Arc<ColumnFamilyData>>,
        reason: FlushReason,
    ) -> Result<()> {
        self.check_open()?;
        let targets: Vec<Arc<ColumnFamilyData>> = {
            let mut w = self.commit.writer.lock();
            w.check_stopped()?;
            let families = self.families();
            // With atomic flush every flush is of all families (`atomic_flush.rs`).
            let targets: Vec<_> = match cf.filter(|_| !self.options.atomic_flush) {
                Some(cf) => vec![cf.clone()],
                None => families.values().cloned().collect(),
            };
            let nonempty: Vec<_> = targets
                .iter()
                .filter(|cf| !cf.sv.read().active.is_empty())
                .cloned()
                .collect();
            if !nonempty.is_empty() {
                self.switch_memtable(&mut w, &families, &nonempty, reason)?;
            }
            targets
        };
        let mut bg = self.bg.state.lock();
        // With listeners: the count of finished flushes that means the flush running when the
        // memtables were gone has ended too.
        let mut wait_for: Option<u64> = None;
        loop {
            if let Some(e) = &bg.error {
                return Err(background_error(e));
            }
            let pending = targets
                .iter()
                .any(|cf| !cf.handle.is_dropped() && !cf.sv.read().immutables.is_empty());
            if !pending {
                // The flush that took the last of them may still be telling the listeners:
                // wait for the one running now (one flush, whosever it is) to end.
                let told = !self.events.enabled()
                    || !bg.flushing
                    || wait_for.is_some_and(|n| bg.flushes_finished >= n);
                if told {
                    break;
                }
                wait_for.get_or_insert(bg.flushes_finished + 1);
            }
            bg.wait(&self.bg.cv);
        }
        if cf.is_none() {
            self.wal.unpersisted.store(false, Ordering::Release);
        }
        Ok(())
    }
}
