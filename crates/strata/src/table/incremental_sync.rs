//! Syncing a table file in the background while it is being written, so that the sync that
//! makes it durable at the end has little left to write.
//!
//! Without it the operating system holds a new table in its page cache until the builder's
//! final fdatasync, which then writes the whole file (tens of milliseconds for a 64 MiB
//! memtable's table) while the flush thread waits: writers waiting for that flush wait with
//! it. RocksDB starts the write-back as it goes (`bytes_per_sync`, by `sync_file_range`);
//! here a helper thread of the table's own calls fdatasync on its own descriptor
//! ([`WritableFile::background_sync`]) each time [`SYNC_EVERY`] more bytes have been appended,
//! and the write-back overlaps the building of the rest of the table. Only flushes ask for it
//! (`TableBuilder::sync_in_background`): with it on for compactions too, a load with 8 MiB
//! memtables and the WAL on ran 7-16% slower, their extra journal commits delaying the
//! WAL's writes and the flushes' own syncs.
//!
//! Invariants:
//! - Nothing is taken as durable because of a background sync: the builder still syncs the
//!   file itself in `finish`, after the helper has ended.
//! - A background sync that fails fails the table: [`IncrementalSync::finish`] returns its
//!   error (the caller deletes the table, as after any failed write).
//! - Requests made while a sync runs are merged into one: at most one sync runs and one
//!   waits, whatever the disk's speed.
//! - A table abandoned before `finish` drops the request channel; the helper ends after the
//!   sync it is running, on its own descriptor, and nothing waits for it.
//!
//! [`WritableFile::background_sync`]: crate::fs::WritableFile::background_sync

use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::fs::BackgroundSync;

/// Bytes appended between two background syncs. Each fdatasync of a growing file commits
/// the file system's journal, which the process's other syncs (the WAL's, the manifest's)
/// then queue behind; at 8 MiB a 64 MiB memtable's table is synced a few times while it is
/// built and its last sync waits for at most 8 MiB, and a table smaller than that is synced
/// once, at its end, as before.
pub(crate) const SYNC_EVERY: u64 = 8 << 20;

/// The background syncs of one table file.
pub(crate) struct IncrementalSync {
    /// The file's sync handle, until the helper thread takes it.
    handle: Option<BackgroundSync>,
    /// Requests to the helper; `None` before it starts (or if it could not start).
    requests: Option<mpsc::Sender<()>>,
    helper: Option<JoinHandle<Result<()>>>,
    /// File size at the last request.
    requested_at: u64,
}

impl IncrementalSync {
    /// Syncs of a file with sync handle `handle`; `None` for a file without one.
    pub fn new(handle: Option<BackgroundSync>) -> Option<IncrementalSync> {
        handle.map(|handle| IncrementalSync {
            handle: Some(handle),
            requests: None,
            helper: None,
            requested_at: 0,
        })
    }

    /// Notes that the file now holds `size` bytes, and asks for a sync if [`SYNC_EVERY`] were
    /// appended since the last request.
    pub fn appended(&mut self, size: u64) {
        if size.saturating_sub(self.requested_at) < SYNC_EVERY {
            return;
        }
        self.requested_at = size;
        if self.requests.is_none() {
            self.start();
        }
        if let Some(requests) = &self.requests {
            // A helper that stopped on an error has dropped its end: `finish` reports it.
            let _ = requests.send(());
        }
    }

    /// Starts the helper thread (once). If the thread cannot start the file is only synced
    /// at the end, as without a handle.
    fn start(&mut self) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        let (tx, rx) = mpsc::channel::<()>();
        let helper = std::thread::Builder::new()
            .name("strata-table-sync".into())
            .spawn(move || -> Result<()> {
                while rx.recv().is_ok() {
                    while rx.try_recv().is_ok() {} // requests made meanwhile: one sync serves all
                    handle.sync()?;
                }
                Ok(())
            });
        if let Ok(helper) = helper {
            self.requests = Some(tx);
            self.helper = Some(helper);
        }
    }

    /// Ends the helper once its last sync is done: the first error of the background syncs.
    pub fn finish(mut self) -> Result<()> {
        drop(self.requests.take());
        match self.helper.take().map(JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            Some(Err(_)) => Err(Error::Unavailable(
                "the background sync of a table file panicked".into(),
            )),
        }
    }

    /// Whether the helper thread has started (for tests).
    #[cfg(test)]
    pub fn started(&self) -> bool {
        self.helper.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn counting(fail: bool) -> (BackgroundSync, Arc<AtomicUsize>) {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let sync = BackgroundSync::from_fn(move || {
            c.fetch_add(1, Ordering::SeqCst);
            if fail {
                Err(Error::Unavailable("disk gone".into()))
            } else {
                Ok(())
            }
        });
        (sync, count)
    }

    #[test]
    fn no_sync_before_enough_bytes() {
        let (handle, count) = counting(false);
        let mut s = IncrementalSync::new(Some(handle)).unwrap();
        s.appended(SYNC_EVERY - 1);
        assert!(!s.started());
        s.finish().unwrap();
        assert_eq!(count.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn syncs_as_the_file_grows() {
        let (handle, count) = counting(false);
        let mut s = IncrementalSync::new(Some(handle)).unwrap();
        for i in 1..=10 {
            s.appended(i * SYNC_EVERY);
        }
        s.finish().unwrap();
        // Each request is served by a sync that starts after it; merged requests share one.
        let n = count.load(Ordering::SeqCst);
        assert!((1..=10).contains(&n), "{n} syncs");
    }

    #[test]
    fn a_failed_sync_fails_finish() {
        let (handle, count) = counting(true);
        let mut s = IncrementalSync::new(Some(handle)).unwrap();
        s.appended(SYNC_EVERY);
        s.appended(2 * SYNC_EVERY);
        let e = s.finish().unwrap_err();
        assert!(e.to_string().contains("disk gone"), "{e}");
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }

    /// A table several times [`SYNC_EVERY`] long, written to a file of the operating
    /// system's (whose builder syncs in the background), reads back whole.
    #[test]
    fn a_table_synced_in_the_background_reads_back() {
        use crate::fs::{FileSystem, PosixFs};
        use crate::iterator::InternalIterator;
        use crate::table::TableBuilder;
        use crate::table::TableOptions;
        use crate::testing::lsm::{open_table, Caching};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.sst");
        let value = vec![b'v'; 1000];
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..(3 * SYNC_EVERY / 1000) as u32)
            .map(|i| (format!("key{i:08}").into_bytes(), value.clone()))
            .collect();
        let mut b = TableBuilder::new(
            PosixFs.create_writable(&path).unwrap(),
            TableOptions::default(),
        );
        b.sync_in_background();
        for (k, v) in &entries {
            b.add(k, v).unwrap();
        }
        b.finish().unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 3 * SYNC_EVERY);
        let table = open_table(&path, TableOptions::default(), Caching::None).unwrap();
        let mut it = table.iter();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            assert_eq!(
                (it.key(), it.value()),
                (&entries[n].0[..], &entries[n].1[..])
            );
            n += 1;
            it.next();
        }
        assert!(it.status().is_ok());
        assert_eq!(n, entries.len());
    }

    #[test]
    fn a_file_without_a_handle_has_none() {
        assert!(IncrementalSync::new(None).is_none());
    }
}
