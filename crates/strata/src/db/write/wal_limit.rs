//! The bound on live WALs (`max_total_wal_size`, RocksDB's option): when the WALs that may
//! still be needed hold more than it, the families whose active memtable holds writes in
//! the oldest of them are switched (and so flushed), so that it can be deleted.
//!
//! Why it is needed: a WAL is deleted only once every family has flushed what it holds. A
//! family written rarely beside a busy one keeps its first unflushed write's WAL, and every
//! WAL after it, alive: without a bound they grow without end, and so does the time to
//! replay them at open.
//!
//! Sizes: the leader counts the bytes it appends to the current WAL
//! (`WriterState::wal_bytes`); a switch records the closed WAL's count in
//! `WalSet::sizes`, and the deletion of a WAL removes it. WALs kept at open are counted
//! at their size on disk. As in RocksDB, the bound applies with several column families
//! only: with one, its memtables (bounded by `max_write_buffer_number`) bound the WALs.

use std::sync::Arc;

use super::group::WriterState;
use crate::db::families::{ColumnFamilyData, Families};
use crate::db::DbInner;

impl DbInner {
    /// The bound on live WAL bytes now: `max_total_wal_size`, or with 0 four times the
    /// memtable memory the families may hold.
    pub(in crate::db) fn max_total_wal_size(&self, families: &Families) -> u64 {
        match self.online.db().max_total_wal_size {
            0 => families
                .values()
                .map(|cf| {
                    let o = cf.current_options();
                    (o.write_buffer_size as u64).saturating_mul(o.max_write_buffer_number as u64)
                })
                .fold(0u64, u64::saturating_add)
                .saturating_mul(4),
            n => n,
        }
    }

    /// With live WALs past the bound, adds to `switch` the families whose active memtable
    /// holds writes in the oldest live WAL (those not in it already); returns whether it
    /// added any. A family whose immutable memtables hold that WAL is being flushed already.
    pub(in crate::db) fn families_holding_oldest_wal(
        &self,
        w: &WriterState,
        families: &Families,
        switch: &mut Vec<Arc<ColumnFamilyData>>,
    ) -> bool {
        if families.len() < 2 {
            return false;
        }
        let closed: u64 = self.wal.sizes.lock().values().sum();
        if closed.saturating_add(w.wal_bytes) <= self.max_total_wal_size(families) {
            return false;
        }
        let Some(oldest) = self.wal.wals.lock().first().copied() else {
            return false;
        };
        let mut added = false;
        for cf in families.values() {
            let holds = {
                let sv = cf.sv.read();
                !sv.active.is_empty() && sv.active.log_number() <= oldest
            };
            if holds && !switch.iter().any(|f| Arc::ptr_eq(f, cf)) {
                switch.push(cf.clone());
                added = true;
            }
        }
        added
    }
}
