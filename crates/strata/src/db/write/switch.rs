//! The memtable switch: a new WAL, and the full memtables made immutable for the flush
//! thread, done by a write group's leader under the writer lock.

use std::sync::Arc;

use super::group::WriterState;
use crate::db::families::{ColumnFamilyData, Families};
use crate::db::stats::Counter;
use crate::db::DbInner;
use crate::error::Result;
use crate::filename::wal_path;
use crate::fs::{CountedFile, IoClass};
use crate::listener::FlushReason;
use crate::log::LogWriter;
use crate::memtable::MemTable;
use crate::options::WalRecoveryMode;

impl DbInner {
    /// Starts a new WAL; the active memtables of the families in `full` become immutable
    /// (to be flushed for `reason`) and each gets a new one on the new WAL, as does every
    /// other family whose active memtable is empty (so that it does not hold on to the old
    /// WAL). Then wakes the flush thread. The old WAL is synced first, or kept open unsynced
    /// for a later synced write to sync (see the comment at the sync).
    pub(in crate::db) fn switch_memtable(
        &self,
        w: &mut WriterState,
        families: &Families,
        full: &[Arc<ColumnFamilyData>],
        reason: FlushReason,
    ) -> Result<()> {
        // With atomic flush every family with writes switches with the others, so that the
        // memtables the flush takes end at one point for all (see `flush.rs`).
        let every_family: Vec<Arc<ColumnFamilyData>>;
        let full = match self.options.atomic_flush {
            true => {
                every_family = families
                    .values()
                    .filter(|cf| {
                        full.iter().any(|f| Arc::ptr_eq(f, cf)) || !cf.sv.read().active.is_empty()
                    })
                    .cloned()
                    .collect();
                &every_family[..]
            }
            false => full,
        };
        // A group still inserting into the memtable being made immutable would add to it
        // after the flush may have read it.
        self.wait_for_inserts(w);
        // Blob files the write path put values in: those of the memtables replaced here are
        // finished for their flush, the others synced with the WAL that names them.
        let replaced: Vec<u32> = families
            .values()
            .filter(|cf| full.iter().any(|f| Arc::ptr_eq(f, cf)) || cf.sv.read().active.is_empty())
            .map(|cf| cf.id())
            .collect();
        let sealed =
            self.seal_blobs_at_write(&mut self.blobs_at_write.active.lock(), families, &replaced);
        if let Err(e) = sealed {
            w.stop(&e);
            return Err(e);
        }
        // The old WAL is synced before the new one exists, or kept open unsynced
        // (`switch_syncs` says when and why).
        w.sync_at_switch = switch_syncs(&self.options, families.len());
        if w.sync_at_switch {
            w.sync_wal()?;
        } else {
            // Records held under `manual_wal_flush` go to the old WAL before the new one
            // exists: recovery reads the WALs in order.
            w.flush_held()?;
        }
        let number = self.versions.lock().new_file_number();
        let path = wal_path(&self.path, number);
        let file = self.fs.create_writable(&path)?;
        self.fs.sync_dir(&self.path)?;
        let old = std::mem::replace(
            &mut w.wal,
            LogWriter::new(Box::new(CountedFile::new(
                file,
                self.io.clone(),
                IoClass::Wal,
            )))
            .holding(self.options.manual_wal_flush)
            .compressing(self.options.wal_compression),
        );
        let mut wals = self.wal.wals.lock();
        if let Some(&old_number) = wals.last() {
            self.wal.sizes.lock().insert(old_number, w.wal_bytes);
        }
        w.wal_bytes = 0;
        if let Some(&old_number) = wals.last().filter(|_| w.wal_dirty) {
            w.closed_unsynced.push(old_number, old);
        }
        w.wal_dirty = false;
        w.appended_since_sync = 0;
        wals.insert(number);
        drop(wals);
        for cf in families.values() {
            let switch = full.iter().any(|f| Arc::ptr_eq(f, cf));
            let mut current = cf.sv.write();
            if !switch && !current.active.is_empty() {
                continue;
            }
            if current.active.is_empty() {
                self.drop_blobs_of_empty_memtable(cf, current.active.id());
            }
            let options = cf.current_options();
            let fresh = Arc::new(
                MemTable::with_order(
                    number,
                    options.write_buffer_size,
                    current.version.order.clone(),
                )
                .with_bloom(options.memtable_bloom_bytes())
                .with_point_index(options.memtable_point_index_bytes()),
            );
            let mut immutables = Vec::with_capacity(current.immutables.len() + 1);
            if switch && !current.active.is_empty() {
                current.active.link_staged();
                cf.note_flush_reason(&current.active, reason);
                immutables.push(current.active.clone());
            }
            immutables.extend(current.immutables.iter().cloned());
            *current = Arc::new(current.with_memtables(fresh, immutables));
        }
        self.counters.add(Counter::MemtableSwitches, 1);
        self.wake_background();
        Ok(())
    }
}

/// Whether a memtable switch syncs the WAL it closes. With
/// `WalRecoveryMode::TolerateCorruptedTail`, recovery takes a torn tail only in the newest WAL,
/// so the old WAL is made durable before the new one exists (background syncs as it grew,
/// `write/wal_sync.rs`, left little for this one to write). So it is too with several families: one
/// family's flush may make its writes in a newer WAL durable while another's in this one are
/// not yet, and a point-in-time recovery stopping in this one would then not give a prefix of
/// the writes. Otherwise (point-in-time, one family, RocksDB's rule) the old WAL is kept open
/// unsynced: a synced write or WAL sync syncs it first, recovery stops at a torn tail in it and
/// keeps what precedes, and most often its flush comes first and it is deleted with its pages
/// never written.
pub(in crate::db) fn switch_syncs(options: &crate::options::Options, families: usize) -> bool {
    options.wal_recovery_mode == WalRecoveryMode::TolerateCorruptedTail || families > 1
}
