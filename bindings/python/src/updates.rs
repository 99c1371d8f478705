//! `Db.updates_since(seq)`: the change feed, the write batches written since a sequence
//! number read back from the WALs (RocksDB's `GetUpdatesSince`), as an iterator of
//! `(seq, batch)` pairs: `seq` the batch's first sequence number, `batch` a `WriteBatch`
//! whose `entries()` list its updates.
//!
//! The iterator reads the WAL files it opened when made, with the GIL released. Once its
//! database is closed it raises `Unavailable`, as every other handle on a closed database.

use parking_lot::Mutex;
use pyo3::prelude::*;

use crate::batch::WriteBatch;
use crate::convert::to_py;
use crate::db::Db;

/// The feed's batches, read lazily.
pub type Feed = Box<dyn Iterator<Item = strata::Result<(u64, strata::WriteBatch)>> + Send>;

/// The change feed from `Db.updates_since(seq)`: yields `(seq, batch)` for each write
/// batch, oldest first, up to the last write published when it was made.
#[pyclass(module = "strata", frozen)]
pub struct UpdatesIterator {
    db: Py<Db>,
    feed: Mutex<Feed>,
}

impl UpdatesIterator {
    pub fn new(db: Py<Db>, feed: Feed) -> UpdatesIterator {
        UpdatesIterator {
            db,
            feed: Mutex::new(feed),
        }
    }
}

#[pymethods]
impl UpdatesIterator {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The next `(seq, batch)`; a read error raises (`Corruption`, `IOError`, ...).
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<(u64, WriteBatch)>> {
        // Refuse once the database is closed, even though the open WAL files could still
        // be read: the feed is the database's.
        self.db.get().run(py, |_| Ok(()))?;
        let next = py.detach(|| self.feed.lock().next());
        match next {
            None => Ok(None),
            Some(Err(e)) => Err(to_py(e)),
            Some(Ok((seq, batch))) => Ok(Some((
                seq,
                WriteBatch::with_updates(self.db.clone_ref(py), batch),
            ))),
        }
    }
}
