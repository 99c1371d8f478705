//! The Raft log on Strata (openraft's `RaftLogStorage`).
//!
//! One database (a node's `log/` directory) with two column families:
//!
//! - `log`: key = the entry's index as 8 big-endian bytes, value = the entry (JSON). Byte order
//!   is index order, so the last entry is the last key and a range of indexes is a key range.
//! - `meta`: `vote`, `committed` and `purged` (JSON of openraft's `Vote` and `LogId`).
//!
//! Durability order, which is what openraft's correctness rests on:
//!
//! - `append` writes the entries in one synced batch and only then tells openraft they are
//!   flushed; `save_vote` returns only after its synced write.
//! - `truncate` removes `[index, end)` with one synced range delete, so entries of an older
//!   term cannot reappear after a crash behind a shorter, newer log.
//! - `purge` persists the new `purged` id (synced) before the range delete of `[0, index]`.
//!   A crash in between leaves entries at or below `purged`; opening removes them again, and
//!   readers never see them because `get_log_state` starts the log after `purged`.
//! - `committed` is written without a sync: openraft treats it as a hint (a lost value only
//!   means re-applying entries that the state machine then finds already applied).
//!
//! The most recent entries are also kept decoded in memory (at most [`RECENT_ENTRIES`]): the
//! leader's replication reads each entry back right after appending it, once per follower,
//! and decoding it from the database each time showed in the leader's profile. Invariant:
//! when not empty, the kept entries are a contiguous run of indexes ending at the log's last
//! entry (`append` adds after the synced write, `truncate` and `purge` remove what they
//! remove before they write), so a bounded read inside the run reads the same entries the
//! database holds; any other read goes to the database.

use std::collections::VecDeque;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use openraft::storage::{LogFlushed, RaftLogStorage};
use openraft::{LogId, LogState, OptionalSend, RaftLogId, RaftLogReader, StorageError, Vote};
use strata::{CfOptions, ColumnFamily, Db, Options, ReadOptions, WriteBatch, WriteOptions};

use crate::codec::{self, decode, encode, index_key, key_index};
use crate::error::Error;
use crate::types::TypeConfig;

/// Column family of the entries.
pub const LOG_CF: &str = "log";
/// Column family of the vote, committed and purged ids.
pub const META_CF: &str = "meta";

const VOTE: &[u8] = b"vote";
const COMMITTED: &[u8] = b"committed";
const PURGED: &[u8] = b"purged";

type Entry = openraft::Entry<TypeConfig>;

/// How many of the last appended entries are kept decoded in memory.
pub const RECENT_ENTRIES: usize = 4096;

/// The log of one node. Cloning shares the database and the recent entries (the clone is
/// openraft's log reader).
#[derive(Clone)]
pub struct LogStore {
    db: Arc<Db>,
    log: ColumnFamily,
    meta: ColumnFamily,
    recent: Arc<Mutex<VecDeque<Entry>>>,
}

fn synced() -> WriteOptions {
    let mut options = WriteOptions::default();
    options.sync = true;
    options
}

impl LogStore {
    /// Opens (creating if missing) the log in directory `dir`, finishing a purge that a crash
    /// interrupted.
    pub fn open(dir: &Path) -> Result<LogStore, Error> {
        let mut options = Options::default();
        options.create_if_missing = true;
        options.create_missing_column_families = true;
        let db = Db::open_cf(
            dir,
            options,
            [
                (LOG_CF, CfOptions::default()),
                (META_CF, CfOptions::default()),
            ],
        )?;
        let missing = |name: &str| Error::Corrupt(format!("log without column family {name}"));
        let log = db.cf(LOG_CF).ok_or_else(|| missing(LOG_CF))?;
        let meta = db.cf(META_CF).ok_or_else(|| missing(META_CF))?;
        let store = LogStore {
            db: Arc::new(db),
            log,
            meta,
            recent: Arc::new(Mutex::new(VecDeque::new())),
        };
        if let Some(purged) = store.read_meta::<LogId<u64>>(PURGED)? {
            store.delete_through(purged.index, false)?;
        }
        Ok(store)
    }

    fn read_meta<T: serde::de::DeserializeOwned>(&self, key: &[u8]) -> Result<Option<T>, Error> {
        match self.db.get_cf(&self.meta, key)? {
            None => Ok(None),
            Some(bytes) => decode(&bytes)
                .map(Some)
                .map_err(|e| corrupt(format!("meta {}: {e}", String::from_utf8_lossy(key)))),
        }
    }

    fn write_meta<T: serde::Serialize>(
        &self,
        key: &[u8],
        value: &T,
        sync: bool,
    ) -> Result<(), Error> {
        let bytes = encode(value).map_err(|e| corrupt(e.to_string()))?;
        let mut batch = WriteBatch::new();
        batch.put_cf(&self.meta, key, bytes);
        let options = if sync {
            synced()
        } else {
            WriteOptions::default()
        };
        Ok(self.db.write(batch, &options)?)
    }

    /// Removes the entries at indexes `0..=index`.
    fn delete_through(&self, index: u64, sync: bool) -> Result<(), Error> {
        let mut batch = WriteBatch::new();
        match index.checked_add(1) {
            Some(end) => batch.delete_range_cf(&self.log, index_key(0), index_key(end)),
            None => batch.delete_range_cf(&self.log, index_key(0), [0xff; 9]),
        };
        let options = if sync {
            synced()
        } else {
            WriteOptions::default()
        };
        Ok(self.db.write(batch, &options)?)
    }

    /// The id of the last entry in the log, if any.
    fn last_entry_id(&self) -> Result<Option<LogId<u64>>, Error> {
        let mut iter = self.db.iter_cf(&self.log, &ReadOptions::default())?;
        iter.seek_to_last();
        if !iter.valid() {
            iter.status()?;
            return Ok(None);
        }
        let entry: Entry = decode(iter.value()).map_err(|e| corrupt(format!("log entry: {e}")))?;
        Ok(Some(*entry.get_log_id()))
    }

    fn recent(&self) -> MutexGuard<'_, VecDeque<Entry>> {
        match self.recent.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The entries from `start` to `end` (exclusive), if all of them are among the recent
    /// ones.
    fn recent_entries(&self, start: u64, end: Option<u64>) -> Option<Vec<Entry>> {
        let end = end?;
        let recent = self.recent();
        let first = recent.front()?.get_log_id().index;
        let last = recent.back()?.get_log_id().index;
        if start < first || end > last.saturating_add(1) {
            return None;
        }
        if start >= end {
            return Some(Vec::new());
        }
        let from = usize::try_from(start - first).ok()?;
        let to = usize::try_from(end - first).ok()?;
        Some(recent.range(from..to).cloned().collect())
    }

    /// The entries with indexes in `range`, in order.
    pub fn entries(&self, range: impl RangeBounds<u64>) -> Result<Vec<Entry>, Error> {
        let start = match range.start_bound() {
            Bound::Included(&i) => i,
            Bound::Excluded(&i) => match i.checked_add(1) {
                Some(i) => i,
                None => return Ok(Vec::new()),
            },
            Bound::Unbounded => 0,
        };
        let end_exclusive = match range.end_bound() {
            Bound::Included(&i) => Some(i.saturating_add(1)),
            Bound::Excluded(&i) => Some(i),
            Bound::Unbounded => None,
        };
        if let Some(entries) = self.recent_entries(start, end_exclusive) {
            return Ok(entries);
        }
        let end = match range.end_bound() {
            Bound::Included(&i) => Bound::Included(index_key(i).to_vec()),
            Bound::Excluded(&i) => Bound::Excluded(index_key(i).to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let bounds = (Bound::Included(index_key(start).to_vec()), end);
        let mut entries = Vec::new();
        for item in self.db.range_cf(&self.log, bounds)? {
            let (key, value) = item?;
            let index = key_index(&key).map_err(corrupt)?;
            let entry: Entry =
                decode(&value).map_err(|e| corrupt(format!("log entry {index}: {e}")))?;
            entries.push(entry);
        }
        Ok(entries)
    }

    /// The database, for statistics.
    pub fn db(&self) -> &Db {
        &self.db
    }
}

fn corrupt(message: impl Into<String>) -> Error {
    Error::Corrupt(message.into())
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + std::fmt::Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError<u64>> {
        self.entries(range).map_err(codec::read_logs)
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError<u64>> {
        let last_purged_log_id = self
            .read_meta::<LogId<u64>>(PURGED)
            .map_err(codec::read_logs)?;
        let last = self.last_entry_id().map_err(codec::read_logs)?;
        Ok(LogState {
            last_purged_log_id,
            last_log_id: last.or(last_purged_log_id),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<u64>) -> Result<(), StorageError<u64>> {
        self.write_meta(VOTE, vote, true).map_err(codec::write_vote)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<u64>>, StorageError<u64>> {
        self.read_meta(VOTE).map_err(codec::read_vote)
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogId<u64>>,
    ) -> Result<(), StorageError<u64>> {
        self.write_meta(COMMITTED, &committed, false)
            .map_err(codec::write_logs)
    }

    async fn read_committed(&mut self) -> Result<Option<LogId<u64>>, StorageError<u64>> {
        Ok(self
            .read_meta::<Option<LogId<u64>>>(COMMITTED)
            .map_err(codec::read_logs)?
            .flatten())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError<u64>>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        let mut batch = WriteBatch::new();
        for entry in &entries {
            let bytes = encode(entry).map_err(codec::write_logs)?;
            batch.put_cf(&self.log, index_key(entry.get_log_id().index), bytes);
        }
        // Synced before openraft hears of it: a flushed entry counts toward a quorum.
        let result = self.db.write(batch, &synced()).map_err(Error::from);
        match result {
            Ok(()) => {
                {
                    let mut recent = self.recent();
                    for entry in entries {
                        let index = entry.get_log_id().index;
                        // Appends follow the last entry (after a truncate if need be); a
                        // gap means the kept run no longer ends at the log's end.
                        let follows = recent
                            .back()
                            .is_some_and(|b| b.get_log_id().index.checked_add(1) == Some(index));
                        if !follows {
                            recent.clear();
                        }
                        recent.push_back(entry);
                    }
                    while recent.len() > RECENT_ENTRIES {
                        recent.pop_front();
                    }
                }
                callback.log_io_completed(Ok(()));
                Ok(())
            }
            Err(e) => {
                callback.log_io_completed(Err(std::io::Error::other(e.to_string())));
                Err(codec::write_logs(e))
            }
        }
    }

    async fn truncate(&mut self, log_id: LogId<u64>) -> Result<(), StorageError<u64>> {
        {
            let mut recent = self.recent();
            while recent
                .back()
                .is_some_and(|e| e.get_log_id().index >= log_id.index)
            {
                recent.pop_back();
            }
        }
        let mut batch = WriteBatch::new();
        batch.delete_range_cf(&self.log, index_key(log_id.index), [0xff; 9]);
        self.db
            .write(batch, &synced())
            .map_err(|e| codec::write_logs(Error::from(e)))
    }

    async fn purge(&mut self, log_id: LogId<u64>) -> Result<(), StorageError<u64>> {
        {
            let mut recent = self.recent();
            while recent
                .front()
                .is_some_and(|e| e.get_log_id().index <= log_id.index)
            {
                recent.pop_front();
            }
        }
        // The purged id first, synced: after a crash the log starts after it whatever the
        // range delete below got to.
        self.write_meta(PURGED, &log_id, true)
            .map_err(codec::write_logs)?;
        self.delete_through(log_id.index, false)
            .map_err(codec::write_logs)
    }
}
