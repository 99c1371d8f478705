//! What the write path separated into blob files, kept per family and memtable until the
//! memtable's flush takes it (`at_write` adds to it; the flush and open read it).

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::blob::BlobIndex;
use crate::key::SequenceNumber;
use crate::version::BlobFileMeta;

/// What the write path separated into one memtable's blob files: for its flush.
#[derive(Default)]
pub(crate) struct MemtableBlobs {
    /// The reference given to each separated put, by sequence number, ascending.
    pub refs: Vec<(SequenceNumber, BlobIndex)>,
    /// The memtable's blob files, finished and synced (set by the switch that made the
    /// memtable immutable).
    pub files: Vec<BlobFileMeta>,
    /// Why one of its files could not be finished: its flush is refused.
    pub lost: Option<crate::error::Error>,
}

/// A family's [`MemtableBlobs`], by memtable id.
#[derive(Default)]
pub(crate) struct SeparatedAtWrite {
    by_memtable: Mutex<HashMap<u64, MemtableBlobs>>,
}

impl SeparatedAtWrite {
    /// Takes what memtable `id` has (for its flush).
    pub fn take(&self, id: u64) -> Option<MemtableBlobs> {
        self.by_memtable.lock().remove(&id)
    }

    /// Gives back what [`SeparatedAtWrite::take`] took, for a flush that failed.
    pub fn put_back(&self, id: u64, blobs: MemtableBlobs) {
        self.by_memtable.lock().insert(id, blobs);
    }

    /// The numbers of the finished files of memtables not yet flushed.
    pub fn file_numbers(&self) -> Vec<u64> {
        let by_memtable = self.by_memtable.lock();
        by_memtable
            .values()
            .flat_map(|m| m.files.iter().map(|f| f.number))
            .collect()
    }

    pub(super) fn add_refs(
        &self,
        id: u64,
        refs: impl Iterator<Item = (SequenceNumber, BlobIndex)>,
    ) {
        self.by_memtable
            .lock()
            .entry(id)
            .or_default()
            .refs
            .extend(refs);
    }

    pub(super) fn add_lost(&self, id: u64, why: crate::error::Error) {
        self.by_memtable.lock().entry(id).or_default().lost = Some(why);
    }

    pub(super) fn add_file(&self, id: u64, meta: BlobFileMeta) {
        self.by_memtable
            .lock()
            .entry(id)
            .or_default()
            .files
            .push(meta);
    }
}
