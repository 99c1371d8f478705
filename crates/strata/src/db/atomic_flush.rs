//! Atomic flush (`Options::atomic_flush`, RocksDB's option): the memtables of every column
//! family flushed together, their tables recorded in one group of manifest edits (tag 17,
//! `version/edit.rs`) that recovery applies whole or not at all.
//!
//! Why: with the WAL disabled, what survives a crash is what the flushes recorded. Families
//! flushed one by one record their tables one edit at a time, so a crash between two edits
//! keeps a write in one family and loses the same batch's write in another. With atomic
//! flush the families are cut at one point:
//!
//! 1. Every memtable switch switches every family with writes (`write/switch.rs`), under the
//!    writer lock, so that the immutable memtables of all families end at the same write.
//! 2. The flush takes every family's immutable memtables that ended at or before the last
//!    switch all families have seen (so a switch half done is not taken), writes each to a
//!    level-0 table, then records all the tables and each family's new log number as one
//!    atomic group, and installs the new versions.
//! 3. A crash before the group's sync returned leaves none of it (its tables are orphans,
//!    deleted at open); after it, all of it.
//!
//! Memtables are written one after the other by the flush thread. A failure deletes every
//! table and blob file the flush wrote, and stops background work as any failed flush does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::families::ColumnFamilyData;
use super::stats::Counter;
use super::table_writer::delete_table;
use super::{DbInner, SuperVersion};
use crate::error::Result;
use crate::filename::{blob_path, table_path};
use crate::listener::FlushJobInfo;
use crate::memtable::MemTable;
use crate::version::VersionEdit;

/// One family's part of an atomic flush.
struct FamilyFlush {
    cf: Arc<ColumnFamilyData>,
    /// Its immutable memtables, oldest first.
    mems: Vec<Arc<MemTable>>,
    /// The oldest WAL the family needs once they are in tables: that of the memtable after
    /// the last of them.
    next_log: u64,
}

impl DbInner {
    /// Flushes the immutable memtables of every family together (see the module comment).
    pub(super) fn flush_all_atomically(&self) -> Result<()> {
        // The cut: the last switch every family has seen. A switch makes every family's
        // active memtable start on the new WAL, one family after the other, so the smallest
        // log number of the active memtables is that of the last switch done for all; the
        // memtables that ended at or before it end at the same write in every family. (Read
        // without the writer lock: a leader stalled for memory holds it while it waits for
        // this flush.)
        let families = self.families();
        let svs: Vec<_> = families
            .values()
            .map(|cf| (cf.clone(), cf.super_version()))
            .collect();
        let Some(cut) = svs.iter().map(|(_, sv)| sv.active.log_number()).min() else {
            return Ok(());
        };
        let parts: Vec<FamilyFlush> = svs
            .into_iter()
            .filter_map(|(cf, sv)| {
                // Oldest first, each with the log number of the memtable after it.
                let oldest_first: Vec<Arc<MemTable>> =
                    sv.immutables.iter().rev().cloned().collect();
                let mut mems = Vec::new();
                let mut next_log = None;
                for (i, mem) in oldest_first.iter().enumerate() {
                    let end = oldest_first
                        .get(i + 1)
                        .map_or(sv.active.log_number(), |m| m.log_number());
                    if end > cut {
                        break;
                    }
                    mems.push(mem.clone());
                    next_log = Some(end);
                }
                Some(FamilyFlush {
                    cf,
                    mems,
                    next_log: next_log?,
                })
            })
            .collect();
        if parts.is_empty() {
            // A switch is under way: the flush thread tries again once it is done.
            std::thread::yield_now();
            return Ok(());
        }
        let mut written_tables: Vec<u64> = Vec::new();
        let mut written_blobs: Vec<u64> = Vec::new();
        let mut edits = Vec::with_capacity(parts.len());
        let mut jobs = Vec::new();
        let started = Instant::now();
        let undo = |tables: &[u64], blobs: &[u64]| {
            for &n in tables {
                delete_table(self, n);
            }
            for &n in blobs {
                let _ = self.fs.remove_file(&blob_path(&self.path, n));
            }
        };
        for part in &parts {
            let mut edit = VersionEdit {
                column_family: part.cf.id(),
                log_number: Some(part.next_log),
                ..VersionEdit::default()
            };
            for (i, mem) in part.mems.iter().enumerate() {
                // The oldest WAL needed once `mem` is in a table: the next memtable's.
                let next_log = part
                    .mems
                    .get(i + 1)
                    .map_or(part.next_log, |m| m.log_number());
                let reason = part.cf.take_flush_reason(mem);
                if mem.is_empty() {
                    continue;
                }
                let number = self.versions.lock().new_file_number();
                let job = self.events.enabled().then(|| FlushJobInfo {
                    cf_name: part.cf.name().to_string(),
                    file_number: number,
                    file_path: table_path(&self.path, number),
                    wal_number: mem.log_number(),
                    memtable_entries: mem.num_entries(),
                    memtable_bytes: mem.memory_usage() as u64,
                    table_entries: 0,
                    table_bytes: 0,
                    duration: Duration::ZERO,
                    reason,
                });
                if let Some(info) = &job {
                    self.notify("on_flush_begin", |l| l.on_flush_begin(info));
                }
                match self.write_level0_table(&part.cf, mem, number, next_log) {
                    Ok(Some((meta, blobs))) => {
                        written_tables.push(meta.number);
                        written_blobs.extend(blobs.iter().map(|b| b.number));
                        if let Some(mut info) = job {
                            info.table_entries = meta.entries;
                            info.table_bytes = meta.size;
                            jobs.push(info);
                        }
                        edit.last_sequence = edit.last_sequence.max(Some(meta.largest_seq));
                        edit.new_files.push((0, meta));
                        edit.new_blob_files.extend(blobs);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        delete_table(self, number);
                        undo(&written_tables, &written_blobs);
                        return Err(e);
                    }
                }
            }
            self.info_log.info(format_args!(
                "atomic flush: {} memtables of family '{}' to {} tables",
                part.mems.len(),
                part.cf.name(),
                edit.new_files.len()
            ));
            edits.push(edit);
        }
        let installed = {
            let mut versions = self.versions.lock();
            // Families dropped while their tables were written (drops are recorded under
            // this lock) leave the group; their tables are deleted.
            let mut kept_parts = Vec::new();
            let mut kept_edits = Vec::new();
            for (part, edit) in parts.iter().zip(edits) {
                if part.cf.handle.is_dropped() {
                    for (_, f) in &edit.new_files {
                        delete_table(self, f.number);
                    }
                    for b in &edit.new_blob_files {
                        let _ = self.fs.remove_file(&blob_path(&self.path, b.number));
                    }
                } else {
                    kept_parts.push(part);
                    kept_edits.push(edit);
                }
            }
            let versions_now = match versions.log_and_apply_group(kept_edits) {
                Ok(v) => v,
                Err(e) => {
                    drop(versions);
                    undo(&written_tables, &written_blobs);
                    return Err(e);
                }
            };
            for (part, version) in kept_parts.iter().zip(&versions_now) {
                part.cf.note_new_version(version);
                let mut current = part.cf.sv.write();
                let immutables = current
                    .immutables
                    .iter()
                    .filter(|m| !part.mems.iter().any(|f| Arc::ptr_eq(f, m)))
                    .cloned()
                    .collect();
                *current = Arc::new(SuperVersion::new(
                    current.active.clone(),
                    immutables,
                    version.clone(),
                ));
            }
            versions_now
        };
        for mut info in jobs {
            info.duration = started.elapsed();
            self.notify("on_flush_completed", |l| l.on_flush_completed(&info));
        }
        drop(installed);
        self.report_memtable_memory();
        self.delete_obsolete_wals()?;
        self.counters.add(Counter::Flushes, 1);
        self.purge_obsolete_files();
        Ok(())
    }
}
