//! `strata.TxnCursor`: an updatable cursor of a transaction (the engine's `TxnCursor`), from
//! `txn.cursor()`.
//!
//! The engine's cursor borrows its transaction mutably, and a transaction is used only
//! inside `Transaction::run` (under its slot's lock, with the GIL released), so a Python
//! cursor cannot hold one between calls. It holds a position instead, the current key and
//! value, and each call makes an engine cursor, seeks it to that key, does its step or its
//! change, and reads the new position: every update and delete goes through the engine's
//! `TxnCursor::update` / `delete`, and each step sees the transaction's writes so far.
//!
//! Invariant: `current` is None (not positioned, or past either end) or the entry the last
//! call left the cursor on. A deleted entry stays current (with an empty value, as in the
//! engine) until the next move, which goes on from its key.

use parking_lot::Mutex;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use strata::{ColumnFamily, ReadOptions, TransactionBase, UpdatableCursor};

use crate::convert::bytes_arg;
use crate::txn::{Transaction, Txn};

/// Where a cursor is: its entry, or None.
type Position = Option<(Vec<u8>, Vec<u8>)>;

/// An updatable cursor over a transaction's view of one column family, within the bounds it
/// was made with: `seek(key)`, `seek_for_prev(key)`, `seek_to_first()`, `seek_to_last()`,
/// `next()`, `prev()`, `valid`, `key`, `value`, and `update(value)` / `delete()` of the
/// current entry through the transaction.
#[pyclass(module = "strata", name = "TxnCursor", frozen)]
pub struct Cursor {
    txn: Py<Transaction>,
    cf: Option<ColumnFamily>,
    options: ReadOptions,
    current: Mutex<Position>,
}

/// The entry an engine cursor is at.
fn position(c: &dyn UpdatableCursor) -> strata::Result<Position> {
    c.status()?;
    Ok(c.valid().then(|| (c.key().to_vec(), c.value().to_vec())))
}

impl Cursor {
    pub fn new(txn: Py<Transaction>, cf: Option<ColumnFamily>, options: ReadOptions) -> Self {
        Cursor {
            txn,
            cf,
            options,
            current: Mutex::new(None),
        }
    }

    /// Makes an engine cursor, applies `f` to it and stores where it is after.
    fn step<F>(&self, py: Python<'_>, f: F) -> PyResult<()>
    where
        F: FnOnce(&mut dyn UpdatableCursor, &Position) -> strata::Result<Position> + Send,
    {
        let here = self.current.lock().clone();
        let options = self.options.clone();
        let next = self
            .txn
            .get()
            .run(py, self.cf.clone(), move |txn, cf| match txn {
                Txn::Optimistic(t) => f(&mut t.cursor_cf(cf, &options)?, &here),
                Txn::Pessimistic(t) => f(&mut t.cursor_cf(cf, &options)?, &here),
            })?;
        *self.current.lock() = next;
        Ok(())
    }

    /// The current key, or ValueError when the cursor is not at an entry.
    fn current_key(&self) -> PyResult<Vec<u8>> {
        self.current
            .lock()
            .as_ref()
            .map(|(k, _)| k.clone())
            .ok_or_else(|| PyValueError::new_err("the cursor is not at an entry"))
    }
}

/// Seeks `c` to `key` and says whether it is there (the entry was not deleted since).
fn at(c: &mut dyn UpdatableCursor, key: &[u8]) -> bool {
    c.seek(key);
    c.valid() && c.key() == key
}

#[pymethods]
impl Cursor {
    /// Moves to the first entry at or after `key`.
    fn seek(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let key = bytes_arg(key, "key")?.into_owned();
        self.step(py, move |c, _| {
            c.seek(&key);
            position(c)
        })
    }

    /// Moves to the last entry at or before `key`.
    fn seek_for_prev(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let key = bytes_arg(key, "key")?.into_owned();
        self.step(py, move |c, _| {
            c.seek_for_prev(&key);
            position(c)
        })
    }

    /// Moves to the first entry.
    fn seek_to_first(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |c, _| {
            c.seek_to_first();
            position(c)
        })
    }

    /// Moves to the last entry.
    fn seek_to_last(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |c, _| {
            c.seek_to_last();
            position(c)
        })
    }

    /// Moves to the next entry (past the end: `valid` becomes False).
    fn next(&self, py: Python<'_>) -> PyResult<()> {
        self.current_key()?;
        self.step(py, |c, here| {
            if let Some((key, _)) = here {
                // A deleted current key is not found again: the seek is already past it.
                if at(c, key) {
                    c.next();
                }
            }
            position(c)
        })
    }

    /// Moves to the previous entry (past the start: `valid` becomes False).
    fn prev(&self, py: Python<'_>) -> PyResult<()> {
        self.current_key()?;
        self.step(py, |c, here| {
            if let Some((key, _)) = here {
                c.seek_for_prev(key);
                if c.valid() && c.key() == key.as_slice() {
                    c.prev();
                }
            }
            position(c)
        })
    }

    /// True when the cursor is at an entry.
    #[getter]
    fn valid(&self) -> bool {
        self.current.lock().is_some()
    }

    /// The current key; ValueError when not at an entry.
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.current_key()?))
    }

    /// The current value (empty after `delete()`); ValueError when not at an entry.
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        match self.current.lock().as_ref() {
            Some((_, v)) => Ok(PyBytes::new(py, v)),
            None => Err(PyValueError::new_err("the cursor is not at an entry")),
        }
    }

    /// Sets the current entry's value through the transaction (a pessimistic one locks the
    /// key); the cursor stays on it and shows the new value.
    fn update(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.current_key()?;
        let value = bytes_arg(value, "value")?.into_owned();
        self.step(py, move |c, here| {
            let key = here.as_ref().map(|(k, _)| k.clone()).unwrap_or_default();
            if !at(c, &key) {
                return Err(strata::Error::InvalidArgument(
                    "the cursor's entry was deleted: move the cursor first".into(),
                ));
            }
            c.update(&value)?;
            position(c)
        })
    }

    /// Deletes the current entry through the transaction; the cursor stays on its key with
    /// an empty value until it moves.
    fn delete(&self, py: Python<'_>) -> PyResult<()> {
        self.current_key()?;
        self.step(py, |c, here| {
            let key = here.as_ref().map(|(k, _)| k.clone()).unwrap_or_default();
            if !at(c, &key) {
                return Err(strata::Error::InvalidArgument(
                    "the cursor's entry was deleted: move the cursor first".into(),
                ));
            }
            c.delete()?;
            Ok(Some((key, Vec::new())))
        })
    }
}
