//! Conditional writes: a batch written only if a check, run under the writer lock, passes.
//! What optimistic transactions commit through.
//!
//! Invariant: the check and the write happen with the writer lock held throughout, so no
//! other write (plain or transactional) can fall between them. The check asks for each key
//! the sequence number of the newest write that touched it ([`WriteHistory::newest_write`]):
//! the memtables first, newest first, then the tables of the current version. Range deletions
//! covering the key count as writes to it. Sequence numbers above the oldest live snapshot are
//! never rewritten by flush or compaction, so a caller that holds a snapshot at `s` reads
//! every write after `s` with its own sequence number.

use std::sync::Arc;

use crate::column_family::ColumnFamily;
use crate::db::families::{ColumnFamilyData, Families};
use crate::db::DbInner;
use crate::error::{Error, Result};
use crate::key::{ParsedKey, SequenceNumber, MAX_SEQUENCE};
use crate::memtable::Lookup;
use crate::options::WriteOptions;
use crate::write_batch::WriteBatch;

/// Where the newest write of a key was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteSource {
    /// A memtable (active or immutable).
    Memtable,
    /// A table file: the memtables no longer hold the key's history.
    Table,
}

/// The history a conditional write's check reads, fixed while the check runs.
pub struct WriteHistory<'a> {
    db: &'a DbInner,
    /// The family set; a family's super version is loaded when a key of it is asked about
    /// (under the writer lock, no write lands meanwhile; a flush may install a new version,
    /// which holds the same writes).
    families: Arc<Families>,
    /// The sequence number of the newest write in the database when the history was taken.
    last_sequence: SequenceNumber,
}

impl WriteHistory<'_> {
    /// The newest write of `key` in family `cf`, as [`WriteHistory::newest_write`], if it
    /// is newer than `since`. When nothing at all was written after `since` (a transaction
    /// that no other write overlapped) the answer needs no lookup.
    pub fn write_after(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        since: SequenceNumber,
    ) -> Result<Option<(SequenceNumber, WriteSource)>> {
        // A dropped family is refused either way.
        self.family(cf)?;
        if self.last_sequence <= since {
            return Ok(None);
        }
        Ok(self.newest_write(cf, key)?.filter(|&(seq, _)| seq > since))
    }

    /// The family of handle `cf`; an error if it was dropped.
    fn family(&self, cf: &ColumnFamily) -> Result<&Arc<ColumnFamilyData>> {
        self.families.get(&cf.id()).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "column family '{}' was dropped: nothing can be written to it",
                cf.name()
            ))
        })
    }

    /// The sequence number of the newest write of `key` in family `cf` (a put, delete, merge
    /// or a range deletion covering it) and where it was found; `None` if nothing in the
    /// database ever touched it.
    pub fn newest_write(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
    ) -> Result<Option<(SequenceNumber, WriteSource)>> {
        let sv = self.family(cf)?.super_version();
        for mem in std::iter::once(&sv.active).chain(sv.immutables.iter()) {
            let mut newest = None;
            if mem.has_range_tombstones() {
                newest = mem.range_tombstones().max_covering_seq(key, MAX_SEQUENCE);
            }
            let (lookup, seq) = mem.get_with_seq(key, MAX_SEQUENCE);
            if !matches!(lookup, Lookup::Missing) {
                newest = newest.max(Some(seq));
            }
            if let Some(seq) = newest {
                return Ok(Some((seq, WriteSource::Memtable)));
            }
        }
        let target = crate::key::seek_key(key, MAX_SEQUENCE);
        let hash = crate::table::filter::filter_hash(key);
        for (level, f) in sv.version.files_for_key(key) {
            let table = self.db.tables.get_for(f, &sv.version.order, level)?;
            let mut newest = table
                .range_tombstones_ref()
                .max_covering_seq(key, MAX_SEQUENCE);
            let found = table
                .get_hashed(&target, hash, |k, _| {
                    let p = ParsedKey::parse(k)?;
                    (p.user_key == key).then_some(p.seq)
                })?
                .flatten();
            newest = newest.max(found);
            if let Some(seq) = newest {
                return Ok(Some((seq, WriteSource::Table)));
            }
        }
        Ok(None)
    }
}

impl DbInner {
    /// The write history as of now. Without the writer lock, a write may land just after
    /// it: callers that need more hold something that keeps the keys they ask about from
    /// being written (a transaction's key locks).
    pub(in crate::db) fn write_history(&self) -> WriteHistory<'_> {
        WriteHistory {
            db: self,
            // Under the writer lock nothing is written while the check runs; without it, a
            // write that lands after this load counts as made after the check.
            last_sequence: self
                .last_sequence
                .load(std::sync::atomic::Ordering::Acquire),
            families: self.families(),
        }
    }

    /// Writes `batch` if `check` passes; `check` runs with the writer lock held, so nothing is
    /// written between it and the batch. An error from `check` is returned and nothing is
    /// written.
    pub(in crate::db) fn write_checked(
        &self,
        batch: WriteBatch,
        options: &WriteOptions,
        check: &mut dyn FnMut(&WriteHistory<'_>) -> Result<()>,
    ) -> Result<()> {
        self.write_checked_then(batch, options, check, &mut || Ok(()))
    }

    /// As [`DbInner::write_checked`], and runs `after` once the batch is written, with the
    /// writer lock still held (nothing else is written, and no memtable switches, between
    /// the batch and `after`). A failure of `after` stops the write path.
    pub(in crate::db) fn write_checked_then(
        &self,
        batch: WriteBatch,
        options: &WriteOptions,
        check: &mut dyn FnMut(&WriteHistory<'_>) -> Result<()>,
        after: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        self.check_open()?;
        if let Some(reason) = batch.invalid_reason() {
            return Err(Error::InvalidArgument(reason.to_string()));
        }
        self.check_batch_for_families(&batch)?;
        let empty = batch.is_empty() && !batch.has_log_data();
        let mut group = [self.request(batch, options)];
        let mut w = self.commit.writer.lock();
        // The check must see every write given a sequence number before it.
        self.wait_for_inserts(&w);
        let history = self.write_history();
        check(&history)?;
        drop(history);
        if !empty {
            self.commit_locked(&mut w, &mut group)?;
        }
        // What `after` does must not be undone by a later write (two-phase commit removes a
        // prepared file whose commit marker is in this WAL): if it fails, writes stop, so no
        // memtable switch can let this WAL be deleted before a reopen replays it.
        if let Err(e) = after() {
            w.stop(&e);
            return Err(e);
        }
        Ok(())
    }
}
