//! Syncing the WAL in the background as it grows.
//!
//! Where a memtable switch syncs the old WAL before the new one exists (so that every WAL but
//! the newest is complete on disk: under `WalRecoveryMode::TolerateCorruptedTail`, or with
//! several column families, see `write/group.rs`), that sync would write a whole memtable's worth of
//! WAL under the writer lock: with 64 MiB memtables of 16 KiB values, the writes waited a
//! third of their time there. So each time the WAL has grown by [`BACKGROUND_SYNC_BYTES`]
//! since the last time, the write leader hands a second descriptor of it to the
//! `strata-wal-sync` thread, which syncs it while writes go on; the switch's sync then has
//! little left to write. The invariant is the switch's, unchanged: the background sync only
//! makes it cheaper. Where the switch does not sync, neither does this thread: it would only
//! write WAL pages that nothing asked to be durable.
//!
//! The same thread syncs the blob files writes put values in as they are written
//! (`blob/at_write.rs`), each time one has grown by [`BACKGROUND_SYNC_BYTES`]: a switch
//! finishes and syncs the replaced memtable's file under the writer lock, which stalled every
//! write for about 40 ms a switch with 1 KiB values (a sixth of a YCSB load).
//!
//! At most one sync runs; a request made meanwhile replaces the one of its kind (WAL or blob
//! file) waiting (the newer descriptor covers the older's bytes, or the older file was already
//! synced by a switch).
//! A failed background sync is kept and fails the next sync of the write path: an error an
//! fdatasync reported once is not reported again by the next one, so it must not be lost.

use parking_lot::{Condvar, Mutex};

use crate::error::Error;
use crate::fs::BackgroundSync;
use crate::log::LogWriter;

/// WAL bytes appended between two background syncs.
pub(in crate::db) const BACKGROUND_SYNC_BYTES: u64 = 4 << 20;

#[derive(Default)]
struct State {
    waiting: Option<BackgroundSync>,
    waiting_blob: Option<BackgroundSync>,
    error: Option<Error>,
    shutdown: bool,
}

/// The requests to the `strata-wal-sync` thread.
#[derive(Default)]
pub(crate) struct WalSyncQueue {
    state: Mutex<State>,
    cv: Condvar,
}

impl WalSyncQueue {
    /// Asks for `file` to be synced.
    pub fn request(&self, file: BackgroundSync) {
        let mut state = self.state.lock();
        state.waiting = Some(file);
        self.cv.notify_one();
    }

    /// Asks for `file`, an active blob file, to be synced.
    pub fn request_blob(&self, file: BackgroundSync) {
        let mut state = self.state.lock();
        state.waiting_blob = Some(file);
        self.cv.notify_one();
    }

    /// The error of a failed background sync, taken: the write path stops on it.
    pub fn take_error(&self) -> Option<Error> {
        self.state.lock().error.take()
    }

    /// Ends [`WalSyncQueue::run`] once the sync running and the one waiting, if any, are done.
    pub fn shut_down(&self) {
        self.state.lock().shutdown = true;
        self.cv.notify_one();
    }

    /// The thread's loop: syncs what is asked until shut down.
    pub fn run(&self) {
        let mut state = self.state.lock();
        loop {
            match state.waiting.take().or_else(|| state.waiting_blob.take()) {
                Some(file) => {
                    drop(state);
                    let synced = file.sync();
                    state = self.state.lock();
                    if let Err(e) = synced {
                        state.error.get_or_insert(e);
                    }
                }
                None if state.shutdown => return,
                None => self.cv.wait(&mut state),
            }
        }
    }
}

/// The WALs a memtable switch closed without a sync (see `write/group.rs`), oldest first, with
/// their numbers, still open: the next synced write, WAL sync, checkpoint or close syncs them
/// (with the writer lock held), and the deletion of an obsolete WAL lets go of its handle
/// first (outside the writer lock: closing the last descriptor of a large unlinked file frees
/// its cached pages, which takes milliseconds).
#[derive(Default)]
pub(crate) struct ClosedWals(Mutex<Vec<(u64, LogWriter)>>);

impl ClosedWals {
    /// Adds WAL `number`, just closed unsynced.
    pub fn push(&self, number: u64, wal: LogWriter) {
        self.0.lock().push((number, wal));
    }

    /// True when no WAL waits for a sync.
    pub fn is_empty(&self) -> bool {
        self.0.lock().is_empty()
    }

    /// Syncs every WAL waiting, oldest first; those synced no longer wait.
    pub fn sync_all(&self) -> Result<(), Error> {
        let mut wals = self.0.lock();
        while let Some((_, wal)) = wals.first_mut() {
            wal.sync()?;
            wals.remove(0);
        }
        Ok(())
    }

    /// Takes the handle of WAL `number` (being deleted), if it waits for a sync.
    pub fn take(&self, number: u64) -> Option<LogWriter> {
        let mut wals = self.0.lock();
        let at = wals.iter().position(|(n, _)| *n == number)?;
        Some(wals.remove(at).1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;
    use std::path::PathBuf;

    /// The queue's thread, run until the queue is shut down.
    fn with_thread(queue: &WalSyncQueue, work: impl FnOnce()) {
        std::thread::scope(|s| {
            let thread = s.spawn(|| queue.run());
            work();
            queue.shut_down();
            thread.join().unwrap();
        });
    }

    #[test]
    fn a_requested_sync_runs_and_a_failed_one_is_kept_for_the_write_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000007.log");
        std::fs::write(&path, b"records").unwrap();
        let queue = WalSyncQueue::default();
        with_thread(&queue, || {
            let file = std::fs::File::open(&path).unwrap();
            queue.request(BackgroundSync::new(file, path.clone()));
        });
        assert!(
            queue.take_error().is_none(),
            "the request ran before the shutdown"
        );

        // fdatasync of a pipe fails (EINVAL): the error waits for the write path, once.
        let (reader, _writer) = std::io::pipe().unwrap();
        let pipe = std::fs::File::from(OwnedFd::from(reader));
        let named = PathBuf::from("000008.log");
        let queue = WalSyncQueue::default();
        with_thread(&queue, || {
            queue.request(BackgroundSync::new(pipe, named));
        });
        let error = queue.take_error().expect("the failed sync's error");
        assert!(error.to_string().contains("000008.log"), "{error}");
        assert!(queue.take_error().is_none());
    }

    #[test]
    fn a_blob_file_sync_and_a_wal_sync_waiting_together_both_run() {
        let dir = tempfile::tempdir().unwrap();
        // One of the two fails (a pipe): its error shows that it ran.
        for failing in ["000008.log", "000009.blob"] {
            let file = |name: &str| {
                let path = dir.path().join(name);
                let file = if name == failing {
                    let (reader, _writer) = std::io::pipe().unwrap();
                    std::fs::File::from(OwnedFd::from(reader))
                } else {
                    std::fs::write(&path, b"records").unwrap();
                    std::fs::File::open(&path).unwrap()
                };
                BackgroundSync::new(file, path)
            };
            let queue = WalSyncQueue::default();
            queue.request(file("000008.log"));
            queue.request_blob(file("000009.blob"));
            with_thread(&queue, || {});
            let error = queue.take_error().expect("the failing sync ran");
            assert!(error.to_string().contains(failing), "{error}");
        }
    }
}
