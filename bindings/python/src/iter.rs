//! `strata.Iterator`: a lazy Python iterator over a key range.
//!
//! Entries are fetched in batches with the GIL released, so a long scan lets other threads
//! run; batches start small (a loop that stops after a few keys reads few) and grow.

use std::collections::VecDeque;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use strata::DbIterator;

use crate::db::Db;

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

struct State {
    iter: DbIterator,
    started: bool,
    done: bool,
    batch: usize,
    buffer: VecDeque<(Vec<u8>, Vec<u8>)>,
}

/// A lazy iterator over a key range of a database, column family or snapshot, from
/// `items()`, `keys()`, `values()` or `iter(db)`. It reads as of the moment it was made.
#[pyclass(module = "strata", name = "Iterator", frozen)]
pub struct RangeIter {
    db: Py<Db>,
    kind: Kind,
    reverse: bool,
    state: Mutex<State>,
}

impl RangeIter {
    pub fn new(db: Py<Db>, iter: DbIterator, kind: Kind, reverse: bool) -> RangeIter {
        RangeIter {
            db,
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

    /// Reads the next batch into the buffer, with the GIL released.
    fn fill(&self, py: Python<'_>) -> PyResult<()> {
        let reverse = self.reverse;
        let kind = self.kind;
        // The closure runs under the database's read lock (`Db::run`), so the database
        // cannot be closed in the middle of a batch.
        self.db.get().run(py, |_db| {
            let mut st = self.state.lock();
            let st = &mut *st;
            let mut bytes = 0;
            while !st.done && st.buffer.len() < st.batch && bytes < MAX_BATCH_BYTES {
                if !st.started {
                    st.started = true;
                    if reverse {
                        st.iter.seek_to_last();
                    } else {
                        st.iter.seek_to_first();
                    }
                } else if reverse {
                    st.iter.prev();
                } else {
                    st.iter.next();
                }
                if !st.iter.valid() {
                    st.done = true;
                    st.iter.status()?;
                    break;
                }
                let key = match kind {
                    Kind::Values => Vec::new(),
                    _ => st.iter.key().to_vec(),
                };
                let value = match kind {
                    Kind::Keys => Vec::new(),
                    _ => st.iter.value().to_vec(),
                };
                bytes += key.len() + value.len();
                st.buffer.push_back((key, value));
            }
            st.batch = (st.batch * 4).min(MAX_BATCH);
            Ok(())
        })
    }
}

#[pymethods]
impl RangeIter {
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
