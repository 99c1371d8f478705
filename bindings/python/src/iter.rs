//! `strata.Iterator`: a lazy Python iterator over a key range, of a database (a column
//! family, a snapshot) or of a transaction.
//!
//! Entries are fetched in batches with the GIL released, so a long scan lets other threads
//! run; batches start small (a loop that stops after a few keys reads few) and grow. A batch
//! is read under the lock of what the iterator came from (the database's handle, or the
//! transaction), so it stops with an error once that is closed or ended.

use std::collections::VecDeque;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use strata::{DbIterator, TxnIterator};

use crate::db::Db;
use crate::txn::Transaction;

/// What each step of the iteration yields.
#[derive(Clone, Copy)]
pub enum Kind {
    Keys,
    Values,
    Items,
}

const FIRST_BATCH: usize = 16;
const MAX_BATCH: usize = 1024;
/// A batch also stops at this many bytes of keys and values, to bound memory for big values.
const MAX_BATCH_BYTES: usize = 4 << 20;

/// The engine's cursor: over a database, or over a transaction's writes laid over it.
#[expect(
    clippy::large_enum_variant,
    reason = "one per Python iterator, never in a collection: its size does not matter"
)]
enum Cursor {
    /// A database's iterator, and whether it reads a snapshot (which `refresh` would drop).
    Db(DbIterator, bool),
    Txn(TxnIterator),
}

/// The same call on either cursor.
macro_rules! cursor {
    ($cursor:expr, $c:ident => $call:expr) => {
        match $cursor {
            Cursor::Db($c, _) => $call,
            Cursor::Txn($c) => $call,
        }
    };
}

/// What the iterator reads from; a batch is read under its lock.
enum Source {
    Db(Py<Db>),
    Txn(Py<Transaction>),
}

struct State {
    iter: Cursor,
    started: bool,
    done: bool,
    batch: usize,
    buffer: VecDeque<(Vec<u8>, Vec<u8>)>,
}

/// A lazy iterator over a key range of a database, column family, snapshot or transaction,
/// from `items()`, `keys()`, `values()` or `iter(db)`. It reads as of the moment it was made.
#[pyclass(module = "strata", name = "Iterator", frozen)]
pub struct RangeIter {
    source: Source,
    kind: Kind,
    reverse: bool,
    state: Mutex<State>,
}

impl RangeIter {
    /// An iterator over `db`, `of_snapshot` when it reads a snapshot.
    pub fn new(
        db: Py<Db>,
        iter: DbIterator,
        of_snapshot: bool,
        kind: Kind,
        reverse: bool,
    ) -> RangeIter {
        RangeIter::with(Source::Db(db), Cursor::Db(iter, of_snapshot), kind, reverse)
    }

    pub fn over_transaction(
        txn: Py<Transaction>,
        iter: TxnIterator,
        kind: Kind,
        reverse: bool,
    ) -> RangeIter {
        RangeIter::with(Source::Txn(txn), Cursor::Txn(iter), kind, reverse)
    }

    fn with(source: Source, iter: Cursor, kind: Kind, reverse: bool) -> RangeIter {
        RangeIter {
            source,
            kind,
            reverse,
            state: Mutex::new(State {
                iter,
                started: false,
                done: false,
                batch: FIRST_BATCH,
                buffer: VecDeque::new(),
            }),
        }
    }

    /// Reads the next batch into the buffer, with the GIL released, under the lock of the
    /// source: the database cannot be closed, nor the transaction end, in the middle of it.
    fn fill(&self, py: Python<'_>) -> PyResult<()> {
        match &self.source {
            Source::Db(db) => db.get().run(py, |_db| self.fill_locked()),
            Source::Txn(txn) => txn.get().run(py, None, |_txn, _cf| self.fill_locked()),
        }
    }

    fn fill_locked(&self) -> strata::Result<()> {
        let reverse = self.reverse;
        let kind = self.kind;
        let mut st = self.state.lock();
        let st = &mut *st;
        let mut bytes = 0;
        while !st.done && st.buffer.len() < st.batch && bytes < MAX_BATCH_BYTES {
            let iter = &mut st.iter;
            if !st.started {
                st.started = true;
                if reverse {
                    cursor!(iter, c => c.seek_to_last());
                } else {
                    cursor!(iter, c => c.seek_to_first());
                }
            } else if reverse {
                cursor!(iter, c => c.prev());
            } else {
                cursor!(iter, c => c.next());
            }
            if !cursor!(iter, c => c.valid()) {
                st.done = true;
                cursor!(iter, c => c.status())?;
                break;
            }
            let key = match kind {
                Kind::Values => Vec::new(),
                _ => cursor!(iter, c => c.key().to_vec()),
            };
            let value = match kind {
                Kind::Keys => Vec::new(),
                _ => cursor!(iter, c => c.value().to_vec()),
            };
            bytes += key.len() + value.len();
            st.buffer.push_back((key, value));
        }
        st.batch = (st.batch * 4).min(MAX_BATCH);
        Ok(())
    }
}

#[pymethods]
impl RangeIter {
    /// Moves the iterator to the database as it is now (RocksDB's `Iterator::Refresh`;
    /// on a secondary, as of its last catch-up with the primary) and starts it again from
    /// the beginning of its range (the end, for a reverse one): the next entry is the
    /// first of the range as the database holds it now. `InvalidArgument` for an iterator
    /// of a snapshot or of a transaction, which read one fixed view.
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let refresh = || -> strata::Result<()> {
            let mut st = self.state.lock();
            match &mut st.iter {
                Cursor::Db(iter, false) => iter.refresh()?,
                Cursor::Db(_, true) => {
                    return Err(strata::Error::InvalidArgument(
                        "an iterator of a snapshot reads the snapshot's view: it cannot be \
                         refreshed (iterate the database, or a newer snapshot)"
                            .into(),
                    ))
                }
                Cursor::Txn(_) => {
                    return Err(strata::Error::InvalidArgument(
                        "an iterator of a transaction reads the transaction's view: it \
                         cannot be refreshed"
                            .into(),
                    ))
                }
            }
            st.started = false;
            st.done = false;
            st.batch = FIRST_BATCH;
            st.buffer.clear();
            Ok(())
        };
        match &self.source {
            Source::Db(db) => db.get().run(py, |_db| refresh()),
            Source::Txn(txn) => txn.get().run(py, None, |_txn, _cf| refresh()),
        }
    }

    /// Returns itself: an iterator is iterable once.
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The next entry, read in batches with the GIL released.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let next = self.state.lock().buffer.pop_front();
        let next = match next {
            Some(e) => Some(e),
            None => {
                if self.state.lock().done {
                    return Ok(None);
                }
                self.fill(py)?;
                self.state.lock().buffer.pop_front()
            }
        };
        let Some((key, value)) = next else {
            return Ok(None);
        };
        Ok(Some(match self.kind {
            Kind::Keys => PyBytes::new(py, &key).into_any().unbind(),
            Kind::Values => PyBytes::new(py, &value).into_any().unbind(),
            Kind::Items => PyTuple::new(py, [PyBytes::new(py, &key), PyBytes::new(py, &value)])?
                .into_any()
                .unbind(),
        }))
    }
}
