//! Snapshots: handles that pin a sequence number so reads see the database as of one moment.
//!
//! The database keeps a count per pinned sequence number; flushes and compactions keep, for
//! each live snapshot, the newest version of each key at or below it (see
//! `compaction::visibility`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::key::SequenceNumber;

/// The live snapshots of one database: sequence number -> number of handles.
#[derive(Debug, Default)]
pub(crate) struct SnapshotList {
    live: Mutex<BTreeMap<SequenceNumber, usize>>,
}

impl SnapshotList {
    /// The oldest pinned sequence number, if any snapshot is live.
    pub fn oldest(&self) -> Option<SequenceNumber> {
        self.live.lock().keys().next().copied()
    }

    /// The pinned sequence numbers, ascending.
    pub fn all(&self) -> Vec<SequenceNumber> {
        self.live.lock().keys().copied().collect()
    }

    /// Number of live snapshot handles.
    pub fn count(&self) -> usize {
        self.live.lock().values().sum()
    }

    /// Holds the list if no snapshot is live (`None` otherwise): no snapshot can be taken or
    /// released until the guard is dropped. An ingest at sequence number 0 holds it from its
    /// check to its install, since such keys are visible to every snapshot.
    pub fn hold_if_none(&self) -> Option<impl Sized + '_> {
        let live = self.live.lock();
        live.is_empty().then_some(live)
    }
}

struct Pin {
    seq: SequenceNumber,
    list: Arc<SnapshotList>,
}

impl Drop for Pin {
    fn drop(&mut self) {
        let mut live = self.list.live.lock();
        if let Some(n) = live.get_mut(&self.seq) {
            *n -= 1;
            if *n == 0 {
                live.remove(&self.seq);
            }
        }
    }
}

/// A consistent view of the database as of one sequence number. Cheap to clone; the view is
/// released when the last clone is dropped.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, ReadOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"config", b"v1")?;
/// let snapshot = db.snapshot();
/// db.put(b"config", b"v2")?;
/// db.flush()?; // flushes and compactions keep what a live snapshot sees
/// assert_eq!(db.get_at(&snapshot, b"config")?.as_deref(), Some(&b"v1"[..]));
/// let mut read = ReadOptions::default();
/// read.snapshot = Some(snapshot.clone());
/// assert_eq!(db.get_opt(b"config", &read)?.as_deref(), Some(&b"v1"[..]));
/// assert_eq!(db.get(b"config")?.as_deref(), Some(&b"v2"[..]));
/// drop((snapshot, read)); // lets compactions drop v1
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Snapshot {
    pin: Arc<Pin>,
}

impl Snapshot {
    #[cfg(test)]
    pub(crate) fn new(list: &Arc<SnapshotList>, seq: SequenceNumber) -> Snapshot {
        Snapshot::latest(list, || seq)
    }

    /// A snapshot at the sequence number `latest` returns, read with the list locked. A flush
    /// or compaction reads the list once its inputs are fixed, so either it sees this
    /// snapshot, or the snapshot's number is at or above every sequence number of its
    /// inputs. Without the lock a write, its flush and a compaction could fall between the
    /// read and the registration, and drop (or zero the sequence number of) what the
    /// snapshot was to see.
    pub(crate) fn latest(
        list: &Arc<SnapshotList>,
        latest: impl FnOnce() -> SequenceNumber,
    ) -> Snapshot {
        let mut live = list.live.lock();
        let seq = latest();
        *live.entry(seq).or_insert(0) += 1;
        drop(live);
        Snapshot {
            pin: Arc::new(Pin {
                seq,
                list: list.clone(),
            }),
        }
    }

    /// The sequence number this snapshot reads at.
    pub fn sequence(&self) -> SequenceNumber {
        self.pin.seq
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Snapshot(seq {})", self.pin.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_counted_and_released() {
        let list = Arc::new(SnapshotList::default());
        let a = Snapshot::new(&list, 5);
        let b = Snapshot::new(&list, 3);
        let c = b.clone();
        let d = Snapshot::new(&list, 3);
        assert_eq!(list.oldest(), Some(3));
        assert_eq!(list.count(), 3);
        drop(b);
        drop(c);
        assert_eq!(list.oldest(), Some(3));
        drop(d);
        assert_eq!(list.oldest(), Some(5));
        assert_eq!(a.sequence(), 5);
        drop(a);
        assert_eq!(list.oldest(), None);
    }
}
