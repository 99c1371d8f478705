//! The write path's side of a shared memtable budget (`Options::write_buffer_manager`,
//! `crate::write_buffer_manager`): each write group reports the database's memtable memory,
//! switches the largest active memtable when the budget is used up (one flush at a time per
//! database), and with `allow_stall` waits while the database's pending flush has memory to
//! release. Flushes report the memory they free.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::db::families::{ColumnFamilyData, Families};
use crate::db::DbInner;

impl DbInner {
    /// Bytes the memtables of every family hold now, active and immutable.
    fn memtable_bytes(&self) -> usize {
        self.families()
            .values()
            .map(|cf| {
                let sv = cf.sv.read();
                sv.active.memory_usage()
                    + sv.immutables
                        .iter()
                        .map(|m| m.memory_usage())
                        .sum::<usize>()
            })
            .sum()
    }

    /// Tells the budget, if there is one, what the memtables hold now.
    pub(in crate::db) fn report_memtable_memory(&self) {
        if let Some((budget, client)) = &self.write_buffers {
            budget.report(*client, self.memtable_bytes());
        }
    }

    /// With the budget used up and no flush of this database pending, adds its largest
    /// non-empty active memtable's family to `switch`; returns whether it added one.
    pub(in crate::db) fn over_memory_budget(
        &self,
        families: &Families,
        switch: &mut Vec<Arc<ColumnFamilyData>>,
    ) -> bool {
        let Some((budget, _)) = &self.write_buffers else {
            return false;
        };
        self.report_memtable_memory();
        if !budget.should_flush() || flush_pending(families) {
            return false;
        }
        let largest = families
            .values()
            .map(|cf| (cf.sv.read().active.memory_usage(), cf))
            .filter(|(_, cf)| !cf.sv.read().active.is_empty())
            .max_by_key(|(bytes, _)| *bytes);
        match largest {
            Some((_, cf)) if !switch.iter().any(|f| Arc::ptr_eq(f, cf)) => {
                switch.push(cf.clone());
                true
            }
            _ => false,
        }
    }

    /// With a budget that stalls, waits while it is used up and this database has a flush
    /// pending that will release memory (and background work has not failed).
    pub(in crate::db) fn stall_for_memory_budget(&self, families: &Families) {
        if let Some((budget, _)) = &self.write_buffers {
            let may_wait = || {
                flush_pending(families)
                    && !self.bg.failed.load(Ordering::Acquire)
                    && !self.closed.load(Ordering::Acquire)
            };
            if budget.stall_while_full(&may_wait) {
                self.counters.add(crate::db::stats::Counter::WriteStalls, 1);
            }
        }
    }
}

/// Whether a family has an immutable memtable waiting for its flush.
fn flush_pending(families: &Families) -> bool {
    families
        .values()
        .any(|cf| !cf.sv.read().immutables.is_empty())
}
