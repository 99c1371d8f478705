//! Batched point lookups (`Db::multi_get`): many keys read in one view of the database.
//!
//! All the keys are read in one super version at one sequence number, so the answers are
//! consistent with one another (as if read through one snapshot) and the super version is
//! loaded once instead of once per key. The keys are looked up in the family's key order, so
//! that keys near one another meet the same memtable nodes, the same table files and the same
//! data blocks one after the other: a block the previous key read is then in the block cache
//! (or, without one, in the page cache) for the next. Answers come back in the caller's order.

use std::sync::atomic::Ordering;

use crate::db::families::ColumnFamilyData;
use crate::db::DbInner;
use crate::error::Result;
use crate::histogram::Histogram;
use crate::key::SequenceNumber;
use crate::perf_context::perf_count;
use crate::table::BlockReads;

impl DbInner {
    /// The values of `keys` in family `cf` at `snapshot` (or now), in the order of `keys`,
    /// table data blocks read as `reads` says.
    pub(in crate::db) fn multi_get(
        &self,
        cf: &ColumnFamilyData,
        keys: &[&[u8]],
        snapshot: Option<SequenceNumber>,
        reads: BlockReads,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        if self.check_open().is_err() {
            return keys
                .iter()
                .map(|_| self.check_open().map(|()| None))
                .collect();
        }
        let started = self.times_operations().then(std::time::Instant::now);
        // The super version before the sequence number: see `DbInner::get_stored`.
        let sv = cf.super_version();
        let seq = snapshot.unwrap_or_else(|| self.last_sequence.load(Ordering::Acquire));
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| sv.version.order.compare(keys[a], keys[b]));
        let mut answers: Vec<Option<Result<Option<Vec<u8>>>>> = keys.iter().map(|_| None).collect();
        for i in order {
            let key = keys[i];
            let answer: Result<Option<Vec<u8>>> = self
                .get_stored_at(cf, &sv, key, seq, reads)
                .and_then(|stored| self.user_value(cf, key, stored));
            if let Ok(Some(v)) = &answer {
                perf_count!(multiget_read_bytes, v.len());
            }
            answers[i] = Some(answer);
        }
        if let Some(started) = started {
            let micros = started.elapsed().as_micros() as u64;
            self.histograms.record(Histogram::MultiGet, micros);
        }
        answers
            .into_iter()
            .map(|a| a.expect("every key answered"))
            .collect()
    }
}
