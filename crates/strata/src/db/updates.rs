//! The change feed: the batches written since a sequence number, read back from the WALs
//! (RocksDB's `GetUpdatesSince`), and the archive of obsolete WALs kept for it (RocksDB's
//! `WAL_ttl_seconds` and `WAL_size_limit_MB`).
//!
//! Reading. [`Db::updates_since`] lists the WALs at the call, the archived ones
//! (`archive/NNNNNN.log`) and the live ones, oldest first, opens them all then (an archived
//! WAL pruned later, or a live one archived meanwhile, stays readable through the open
//! handle), and fixes the last sequence number to report: that published at the call. Each
//! WAL record is one batch (a group commit's batches together), whose header gives its
//! first sequence number and its count. The iterator yields, in sequence order, the batches
//! whose last sequence number is at or after the one asked for, so the first holds it
//! (sequence numbers taken by no WAL record, such as those of an ingest or of writes that
//! skipped the WAL, are not in the feed). A torn record at the end of the newest WAL is
//! a batch still being written: the feed ends there.
//!
//! A sequence number older than the oldest WAL available is an error (`NotFound`) naming it
//! and the oldest sequence number that is available: its batch was in a WAL deleted once the
//! memtables holding it were flushed.
//!
//! Archive. With `wal_ttl_seconds` or `wal_size_limit_mb` set, a WAL no family needs is moved
//! to `archive/` instead of deleted (the hook in `flush.rs`). After each move the archive is
//! pruned: WALs archived longer than the ttl ago go (the time of the move, as this process
//! saw it; WALs found in the archive at open count from their first sight), then the oldest
//! while the archive is over the size limit. WALs recovery deletes at open (left obsolete
//! by a crash) are not archived.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::{Db, DbInner};
use crate::error::{Error, Result};
use crate::filename::{parse_file_name, wal_path, FileKind};
use crate::key::SequenceNumber;
use crate::log::{LogReader, ReadError};
use crate::write_batch::{DecodedBatch, WriteBatch};

/// The directory, in the database's, that archived WALs are kept in.
pub const WAL_ARCHIVE_DIR: &str = "archive";

/// When each archived WAL was archived, as this process saw it.
#[derive(Default)]
pub(super) struct WalArchive {
    archived_at: Mutex<BTreeMap<u64, Instant>>,
}

impl Db {
    /// The sequence number of the last write published (RocksDB's
    /// `GetLatestSequenceNumber`): a reader tailing the change feed asks
    /// [`Db::updates_since`] for the one after it next time. An ingest at a new sequence
    /// number takes one too (it is in no WAL, so the feed skips it).
    pub fn latest_sequence_number(&self) -> SequenceNumber {
        self.inner.last_sequence.load(Ordering::Acquire)
    }

    /// The batches written from sequence number `seq` on, read from the WALs, in sequence
    /// order (RocksDB's `GetUpdatesSince`): the first is the batch holding `seq` (or the
    /// first after it, if no WAL record holds `seq`), each with its first sequence number.
    /// The feed ends at the last write published when it was made. Keep WALs for it with
    /// [`Options::wal_ttl_seconds`](crate::Options::wal_ttl_seconds) or
    /// [`Options::wal_size_limit_mb`](crate::Options::wal_size_limit_mb): without them a
    /// WAL is deleted as soon as its memtables are flushed.
    ///
    /// Fails with [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) when `seq` is older
    /// than every WAL left, naming the oldest sequence number available. A batch whose
    /// values were written to blob files at put cannot be given back and ends the feed with
    /// an error.
    pub fn updates_since(
        &self,
        seq: SequenceNumber,
    ) -> Result<impl Iterator<Item = Result<(SequenceNumber, WriteBatch)>>> {
        self.inner.check_open()?;
        self.inner.updates_since(seq)
    }
}

/// One WAL to read.
struct WalToRead {
    path: PathBuf,
    reader: LogReader,
}

/// The iterator [`Db::updates_since`] returns.
struct Updates {
    wals: std::vec::IntoIter<WalToRead>,
    current: Option<WalToRead>,
    /// The first sequence number wanted.
    from: SequenceNumber,
    /// The last sequence number to report.
    last: SequenceNumber,
    done: bool,
}

impl Iterator for Updates {
    type Item = Result<(SequenceNumber, WriteBatch)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let Some(wal) = &mut self.current else {
                self.current = self.wals.next();
                if self.current.is_none() {
                    self.done = true;
                }
                continue;
            };
            let newest = self.wals.len() == 0;
            let record = match wal.reader.read_record() {
                Ok(Some(r)) => r,
                Ok(None) => {
                    self.current = None;
                    continue;
                }
                // The newest WAL's torn tail is a batch still being written.
                Err(ReadError::Bad(_)) if newest => {
                    self.done = true;
                    return None;
                }
                Err(ReadError::Bad(bad)) => {
                    self.done = true;
                    return Some(Err(bad.into_error(&wal.path)));
                }
                Err(ReadError::Io(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            let batch = match DecodedBatch::parse(record) {
                Ok(b) => b,
                Err(why) => {
                    self.done = true;
                    return Some(Err(Error::corruption(&wal.path, 0, why)));
                }
            };
            if batch.count == 0 {
                continue; // log data only (a two-phase commit's marker)
            }
            if batch.seq > self.last {
                self.done = true;
                return None;
            }
            let end = batch.seq + u64::from(batch.count) - 1;
            if end < self.from {
                continue;
            }
            let seq = batch.seq;
            return Some(
                WriteBatch::from_records(batch.records, batch.count)
                    .map(|b| (seq, b))
                    .map_err(|why| {
                        self.done = true;
                        Error::InvalidArgument(format!(
                            "updates_since: the batch at sequence {seq} in {} cannot be given \
                             back: {why} (values written to blob files at put are not \
                             resolved)",
                            wal.path.display()
                        ))
                    }),
            );
        }
        None
    }
}

impl DbInner {
    fn updates_since(&self, from: SequenceNumber) -> Result<Updates> {
        // Sequence numbers start at 1: 0 asks for everything, as 1 does.
        let from = from.max(1);
        // Records held under `manual_wal_flush` go to the file first: the feed reads the
        // files and ends at the last write published.
        if self.options.manual_wal_flush && !self.read_only && self.secondary.get().is_none() {
            self.flush_wal()?;
        }
        let last = self.last_sequence.load(Ordering::Acquire);
        let archive = self.path.join(WAL_ARCHIVE_DIR);
        let mut numbers: BTreeMap<u64, PathBuf> = BTreeMap::new();
        if self.fs.exists(&archive) {
            for name in self.fs.list_dir(&archive)? {
                if let Some(FileKind::Wal(n)) = parse_file_name(&name) {
                    numbers.insert(n, archive.join(name));
                }
            }
        }
        for &n in self.wal.wals.lock().iter() {
            numbers.insert(n, wal_path(&self.path, n));
        }
        let mut wals = Vec::new();
        for (n, path) in numbers {
            // Archived meanwhile: it is in the archive now.
            let file = match self.fs.open_sequential(&path) {
                Ok(f) => f,
                Err(_) => match self.fs.open_sequential(&wal_path(&archive, n)) {
                    Ok(f) => f,
                    Err(_) => continue, // pruned meanwhile: the check below tells
                },
            };
            wals.push(WalToRead {
                path,
                reader: LogReader::new(file),
            });
        }
        // The oldest sequence number the WALs hold: the first batch of the oldest WAL
        // with one (read through a second handle, so the feed starts at its beginning).
        let oldest = self.oldest_sequence_in(&wals)?.unwrap_or(last + 1);
        if from < oldest && from <= last {
            return Err(Error::NotFound(format!(
                "updates_since: sequence {from} is no longer in the WALs; the oldest sequence \
                 available is {oldest} (keep WALs longer with wal_ttl_seconds or \
                 wal_size_limit_mb)"
            )));
        }
        Ok(Updates {
            wals: wals.into_iter(),
            current: None,
            from,
            last,
            done: false,
        })
    }

    /// The first sequence number of the first batch in `wals`, if any holds one.
    fn oldest_sequence_in(&self, wals: &[WalToRead]) -> Result<Option<SequenceNumber>> {
        for wal in wals {
            let Ok(file) = self.fs.open_sequential(&wal.path) else {
                continue;
            };
            let mut reader = LogReader::new(file);
            while let Ok(Some(record)) = reader.read_record() {
                if let Ok(b) = DecodedBatch::parse(record) {
                    if b.count > 0 {
                        return Ok(Some(b.seq));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Whether obsolete WALs are archived instead of deleted.
    fn archives_wals(&self) -> bool {
        self.options.wal_ttl_seconds > 0 || self.options.wal_size_limit_mb > 0
    }

    /// Removes WAL `number`, which no family needs any more: moved to the archive when
    /// WALs are kept for [`Db::updates_since`], deleted otherwise.
    pub(super) fn retire_wal(&self, number: u64) -> Result<()> {
        let path = wal_path(&self.path, number);
        if !self.archives_wals() {
            return self.fs.remove_file(&path);
        }
        let archive = self.path.join(WAL_ARCHIVE_DIR);
        self.fs.create_dir_all(&archive)?;
        self.fs.rename(&path, &wal_path(&archive, number))?;
        self.wal_archive
            .archived_at
            .lock()
            .insert(number, Instant::now());
        self.prune_wal_archive(&archive);
        Ok(())
    }

    /// Deletes the archived WALs past the ttl, then the oldest while over the size limit. A
    /// failure leaves the file for the next prune.
    fn prune_wal_archive(&self, archive: &Path) {
        let Ok(names) = self.fs.list_dir(archive) else {
            return;
        };
        let mut files: Vec<(u64, u64)> = names
            .iter()
            .filter_map(|name| match parse_file_name(name) {
                Some(FileKind::Wal(n)) => {
                    let size = self.fs.file_size(&wal_path(archive, n)).unwrap_or(0);
                    Some((n, size))
                }
                _ => None,
            })
            .collect();
        files.sort_unstable();
        let now = Instant::now();
        let ttl = Duration::from_secs(self.options.wal_ttl_seconds);
        let limit = self.options.wal_size_limit_mb.saturating_mul(1 << 20);
        let mut archived_at = self.wal_archive.archived_at.lock();
        let mut total: u64 = files.iter().map(|&(_, size)| size).sum();
        for (n, size) in files {
            let at = *archived_at.entry(n).or_insert(now);
            let expired = self.options.wal_ttl_seconds > 0 && now.duration_since(at) >= ttl;
            let over = limit > 0 && total > limit;
            if (expired || over) && self.fs.remove_file(&wal_path(archive, n)).is_ok() {
                archived_at.remove(&n);
                total -= size;
            }
        }
    }
}
