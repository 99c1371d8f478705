//! Flush: writing immutable memtables to level-0 tables (run by the flush thread, see
//! `background`).
//!
//! Order of a flush, each step durable before the next:
//! 1. build `NNNNNN.sst` from the oldest immutable memtable, fsync it and the directory;
//! 2. record the table and the new log number (the oldest WAL still needed) in the
//!    manifest, fsync;
//! 3. install a super version with the table and without the memtable;
//! 4. delete the memtable's WAL.
//!
//! A crash between steps leaves either an orphan table (deleted at the next open, the WAL
//! replays the data) or a WAL that is no longer needed (deleted at the next open). A failed
//! flush stops background work: writes then fail with the cause, reads go on.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::background::background_error;
use super::stats::Counter;
use super::table_writer::{delete_table, write_visible, TableOutput};
use super::{DbInner, SuperVersion};
use crate::compaction::VisibilityFilter;
use crate::error::{Error, Result};
use crate::filename::wal_path;
use crate::fs::IoClass;
use crate::iterator::InternalIterator;
use crate::memtable::MemTable;
use crate::version::{FileMeta, VersionEdit};

impl DbInner {
    /// Flushes the oldest immutable memtable, if there is one.
    pub(super) fn flush_oldest_immutable(&self) -> Result<()> {
        let sv = self.sv.read().clone();
        let Some(imm) = sv.immutables.last().cloned() else {
            return Ok(());
        };
        // The oldest WAL still needed once `imm` is in a table: that of the next memtable.
        let next_log = match sv.immutables.len() {
            1 => sv.active.log_number(),
            n => sv.immutables[n - 2].log_number(),
        };
        let number = self.versions.lock().new_file_number();
        let meta = match self.write_level0_table(&imm, number) {
            Ok(meta) => meta,
            Err(e) => {
                delete_table(self, number);
                return Err(e);
            }
        };
        let mut edit = VersionEdit {
            log_number: Some(next_log),
            ..VersionEdit::default()
        };
        match &meta {
            Some(m) => self.info_log.log(format_args!(
                "flush: memtable of WAL {} to table {} ({} entries, {} bytes)",
                imm.log_number(),
                m.number,
                m.entries,
                m.size
            )),
            None => self.info_log.log(format_args!(
                "flush: memtable of WAL {} was empty",
                imm.log_number()
            )),
        }
        if let Some(meta) = meta {
            edit.last_sequence = Some(meta.largest_seq);
            edit.new_files.push((0, meta));
        }
        {
            let mut versions = self.versions.lock();
            let version = versions.log_and_apply(edit)?;
            self.note_new_version(&version);
            let mut current = self.sv.write();
            let immutables = current
                .immutables
                .iter()
                .filter(|m| !Arc::ptr_eq(m, &imm))
                .cloned()
                .collect();
            *current = Arc::new(SuperVersion {
                active: current.active.clone(),
                immutables,
                version,
            });
        }
        match self.fs.remove_file(&wal_path(&self.path, imm.log_number())) {
            Ok(()) => {}
            // Already gone (the memtable came from a WAL that recovery removed).
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        self.counters.add(Counter::Flushes, 1);
        // Tables a compaction could not delete while this flush held an older version.
        self.purge_obsolete_files();
        Ok(())
    }

    /// Writes `mem` to table `number`; `None` if the memtable is empty.
    fn write_level0_table(&self, mem: &Arc<MemTable>, number: u64) -> Result<Option<FileMeta>> {
        if mem.is_empty() {
            return Ok(None);
        }
        let options = self.options.table_options(false);
        let mut table = TableOutput::create(self, number, IoClass::Flush, options)?;
        // Versions a newer write in this memtable hides from every reader are dropped here,
        // as a compaction would (never as the bottom of the tree: older data lies below).
        let mut filter = VisibilityFilter::new(self.snapshots.all(), false);
        let mut it = mem.iter();
        it.seek_to_first();
        let op = self.options.merge_operator.as_deref();
        write_visible(
            &mut it,
            &mut filter,
            op,
            |_| Ok(false),
            |k, v| table.add(k, v),
        )?;
        table.finish(self).map(Some)
    }

    /// Switches the active memtable if it holds anything, then waits until every immutable
    /// memtable is flushed.
    pub(super) fn flush_memtables(&self) -> Result<()> {
        self.check_open()?;
        {
            let mut w = self.writer.lock();
            w.check_stopped()?;
            if !self.sv.read().active.is_empty() {
                self.switch_memtable(&mut w)?;
            }
        }
        let mut bg = self.bg.lock();
        loop {
            if let Some(e) = &bg.error {
                return Err(background_error(e));
            }
            if self.sv.read().immutables.is_empty() {
                break;
            }
            self.bg_cv.wait(&mut bg);
        }
        self.unpersisted.store(false, Ordering::Release);
        Ok(())
    }
}
