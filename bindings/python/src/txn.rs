//! `strata.Transaction`: an optimistic or a pessimistic transaction of a `Db`.
//!
//! The engine's transactions borrow their database (`OptimisticTransaction<'db>`,
//! `Transaction<'db>`), while a Python object must own what it uses. So a transaction is a
//! `TxnCell`: a share of the database's handle (`Arc<Engine>`) owned together with the
//! transaction borrowing it (self_cell checks the borrow without unsafe code of ours).
//!
//! Invariants:
//! - A transaction's slot holds its cell while it runs. Commit (whether or not it succeeds)
//!   and rollback replace the cell by how the transaction ended; that drops the engine's
//!   transaction (a pessimistic one releases its locks) and its share of the engine.
//! - Every slot is registered with its `Db` when it begins (`Db::begin`, under the Db's read
//!   lock). `Db.close()` takes the handle out, then ends each registered slot still running
//!   (`end_at_close`: a rollback), so that afterwards it holds the only share and closes the
//!   engine whole.
//! - A slot is locked only with the GIL released, as the Db's lock, so a thread waiting for
//!   a transaction another thread is using (a pessimistic one may wait for a lock) does not
//!   hold the GIL.

use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use self_cell::self_cell;

use strata::TransactionBase;
use strata::{ReadOptions, TransactionOptions, TxnIterator, WriteOptions};

use crate::column_family::family_or_default;
use crate::convert::{bound_arg, bytes_arg, to_py};
use crate::cursor::Cursor;
use crate::db::{Db, Engine};
use crate::iter::{Kind, RangeIter};

/// The engine's transaction: optimistic on a plain database, pessimistic on a
/// `TransactionDb`.
pub enum Txn<'db> {
    Optimistic(strata::OptimisticTransaction<'db>),
    Pessimistic(strata::Transaction<'db>),
}

/// The same call on either kind of transaction.
macro_rules! either {
    ($txn:expr, $t:ident => $call:expr) => {
        match $txn {
            Txn::Optimistic($t) => $call,
            Txn::Pessimistic($t) => $call,
        }
    };
}

impl Txn<'_> {
    fn commit(&mut self) -> strata::Result<()> {
        either!(self, t => t.commit())
    }

    fn rollback(&mut self) -> strata::Result<()> {
        either!(self, t => t.rollback())
    }
}

self_cell!(
    /// A share of the engine and the transaction that borrows it.
    pub struct TxnCell {
        owner: Arc<Engine>,
        #[covariant]
        dependent: Txn,
    }
);

/// How a transaction ended.
#[derive(Clone, Copy)]
pub enum Ended {
    Committed,
    /// Its commit failed (a conflict, an expiration, an IO error): nothing was written.
    Failed,
    RolledBack,
    /// Rolled back by `Db.close()`.
    DbClosed,
}

impl Ended {
    /// The error of a call on a transaction that ended so.
    fn error(self) -> strata::Error {
        let what = match self {
            Ended::Committed => "committed",
            Ended::Failed => "ended by a failed commit",
            Ended::RolledBack => "rolled back",
            Ended::DbClosed => {
                return strata::Error::Unavailable(
                    "the transaction was rolled back when its database was closed".into(),
                )
            }
        };
        strata::Error::InvalidArgument(format!(
            "the transaction was already {what}: begin a new one"
        ))
    }
}

pub enum Slot {
    Running(TxnCell),
    Ended(Ended),
}

/// A transaction's state, shared by its Python object and its database's registry.
pub type TxnSlot = Mutex<Slot>;

/// Begins a transaction of `engine`: optimistic, or pessimistic with `options` on a
/// `TransactionDb`.
pub fn begin(
    engine: Arc<Engine>,
    write_options: &WriteOptions,
    options: &TransactionOptions,
) -> Arc<TxnSlot> {
    let cell = TxnCell::new(engine, |engine| match &**engine {
        Engine::Plain(db) => Txn::Optimistic(db.optimistic_transaction(write_options)),
        Engine::Locking(tdb) => Txn::Pessimistic(tdb.transaction(write_options, options)),
    });
    Arc::new(Mutex::new(Slot::Running(cell)))
}

/// Takes one prepared transaction (two-phase commit) of a `TransactionDb` that no handle
/// holds: recovered at open, or dropped while prepared. None when there is none left (or the
/// engine is a plain database).
pub fn take_prepared(engine: &Arc<Engine>) -> Option<Arc<TxnSlot>> {
    let cell = TxnCell::try_new(Arc::clone(engine), |engine| match &**engine {
        Engine::Locking(tdb) => {
            let mut prepared = tdb.prepared_transactions();
            if prepared.is_empty() {
                return Err(());
            }
            let first = prepared.remove(0);
            // The others park again as they drop, in order, for the next call.
            drop(prepared);
            Ok(Txn::Pessimistic(first))
        }
        Engine::Plain(_) => Err(()),
    })
    .ok()?;
    Some(Arc::new(Mutex::new(Slot::Running(cell))))
}

/// The error of two-phase commit on an optimistic transaction.
fn needs_pessimistic() -> strata::Error {
    strata::Error::InvalidArgument(
        "two-phase commit needs a pessimistic transaction: open the database with \
         transaction_db=True"
            .into(),
    )
}

/// Rolls back a transaction still running when its database closes (call with the GIL
/// released).
pub fn end_at_close(slot: &TxnSlot) {
    let mut slot = slot.lock();
    if let Slot::Running(_) = &*slot {
        // Dropping the engine's transaction rolls back a running one and parks a prepared
        // one in its TransactionDb, which keeps it prepared on disk for the next open (an
        // explicit rollback would undo a prepare the caller meant to keep).
        *slot = Slot::Ended(Ended::DbClosed);
    }
}

/// A transaction, from `db.transaction()`: reads see its own writes over the database, and
/// `commit()` applies its writes atomically (`rollback()` drops them).
///
/// ```python
/// with db.transaction() as txn:        # commits at the end, rolls back on an exception
///     balance = txn.get(b"alice", for_update=True)
///     txn[b"alice"] = b"..."
/// ```
///
/// Optimistic on a database opened as usual, pessimistic with `transaction_db=True` (see
/// `Db.transaction()`). Each method takes an optional `column_family` (a ColumnFamily or its
/// name). After the transaction ends (commit, failed commit, rollback) its methods raise
/// InvalidArgument, except `rollback()`, which then does nothing; after `db.close()` they
/// raise Unavailable.
#[pyclass(module = "strata", frozen)]
pub struct Transaction {
    db: Py<Db>,
    slot: Arc<TxnSlot>,
    pessimistic: bool,
}

impl Transaction {
    pub fn new(db: Py<Db>, slot: Arc<TxnSlot>, pessimistic: bool) -> Transaction {
        Transaction {
            db,
            slot,
            pessimistic,
        }
    }

    /// Runs `f` on the running transaction (with the database and the column family given,
    /// the default one for None) with the GIL released.
    pub fn run<R, F>(&self, py: Python<'_>, cf: Option<strata::ColumnFamily>, f: F) -> PyResult<R>
    where
        R: Send,
        F: for<'db> FnOnce(&mut Txn<'db>, &strata::ColumnFamily) -> strata::Result<R> + Send,
    {
        py.detach(|| {
            let mut slot = self.slot.lock();
            match &mut *slot {
                Slot::Running(cell) => cell.with_dependent_mut(|engine, txn| {
                    let cf = cf.unwrap_or_else(|| engine.db().default_cf());
                    f(txn, &cf)
                }),
                Slot::Ended(how) => Err(how.error()),
            }
        })
        .map_err(to_py)
    }

    /// The family named by `column_family` (None: the default one).
    fn family(
        &self,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<strata::ColumnFamily>> {
        family_or_default(self.db.get(), column_family)
    }

    fn get_raw(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        for_update: bool,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Vec<u8>>> {
        let cf = self.family(column_family)?;
        let key = bytes_arg(key, "key")?;
        self.run(py, cf, |txn, cf| match (txn, for_update) {
            (Txn::Optimistic(t), false) => t.get_cf(cf, &key),
            (Txn::Optimistic(t), true) => t.get_for_update_cf(cf, &key),
            (Txn::Pessimistic(t), false) => t.get_cf(cf, &key),
            (Txn::Pessimistic(t), true) => t.get_for_update_cf(cf, &key),
        })
    }

    fn iter(
        slf: &Bound<'_, Self>,
        kind: Kind,
        (start, end): (Option<&Bound<'_, PyAny>>, Option<&Bound<'_, PyAny>>),
        reverse: bool,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RangeIter> {
        let this = slf.get();
        let cf = this.family(column_family)?;
        let mut options = ReadOptions::default();
        options.lower_bound = bound_arg(start, "start")?;
        options.upper_bound = bound_arg(end, "end")?;
        let iter: TxnIterator = this.run(
            slf.py(),
            cf,
            |txn, cf| either!(txn, t => t.iter_cf(cf, &options)),
        )?;
        Ok(RangeIter::over_transaction(
            slf.clone().unbind(),
            iter,
            kind,
            reverse,
        ))
    }
}

#[pymethods]
impl Transaction {
    /// The value of `key` as the transaction sees it (its own writes over the database), or
    /// `default`. With `for_update=True` the key is also guarded: an optimistic commit fails
    /// if someone else writes it meanwhile; a pessimistic transaction locks it first (which
    /// may raise LockTimeout or Deadlock).
    #[pyo3(signature = (key, default=None, *, for_update=false, column_family=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        for_update: bool,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match self.get_raw(py, key, for_update, column_family)? {
            Some(v) => Ok(PyBytes::new(py, &v).into_any().unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    /// `txn[key]`: the value as the transaction sees it; KeyError when absent.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match self.get_raw(py, key, false, None)? {
            Some(v) => Ok(PyBytes::new(py, &v).into_any().unbind()),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// `key in txn`: True when the transaction sees `key`.
    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.get_raw(py, key, false, None)?.is_some())
    }

    /// Sets `key` to `value` at commit (a pessimistic transaction locks it first).
    #[pyo3(signature = (key, value, column_family=None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let cf = self.family(column_family)?;
        let (key, value) = (bytes_arg(key, "key")?, bytes_arg(value, "value")?);
        self.run(
            py,
            cf,
            |txn, cf| either!(txn, t => t.put_cf(cf, &key, &value)),
        )
    }

    /// Removes `key` at commit (a pessimistic transaction locks it first).
    #[pyo3(signature = (key, column_family=None))]
    fn delete(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let cf = self.family(column_family)?;
        let key = bytes_arg(key, "key")?;
        self.run(py, cf, |txn, cf| either!(txn, t => t.delete_cf(cf, &key)))
    }

    /// Merges `operand` into `key` at commit; InvalidArgument at once when the family has no
    /// merge operator.
    #[pyo3(signature = (key, operand, column_family=None))]
    fn merge(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let cf = self.family(column_family)?;
        let (key, operand) = (bytes_arg(key, "key")?, bytes_arg(operand, "operand")?);
        self.run(
            py,
            cf,
            |txn, cf| either!(txn, t => t.merge_cf(cf, &key, &operand)),
        )
    }

    /// `txn[key] = value`: the same as `put`.
    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.put(py, key, value, None)
    }

    /// `del txn[key]`: the same as `delete` (not an error when absent).
    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(py, key, None)
    }

    /// The (key, value) pairs with start <= key < end as the transaction sees them: its
    /// writes made before this call over the database (at its snapshot when it has one).
    /// Takes no lock. The iterator raises once the transaction has ended.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, column_family=None))]
    fn items(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RangeIter> {
        Transaction::iter(slf, Kind::Items, (start, end), reverse, column_family)
    }

    /// The keys with start <= key < end as the transaction sees them; see `items()`.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, column_family=None))]
    fn keys(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RangeIter> {
        Transaction::iter(slf, Kind::Keys, (start, end), reverse, column_family)
    }

    /// The values of the keys with start <= key < end; see `items()`.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, column_family=None))]
    fn values(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RangeIter> {
        Transaction::iter(slf, Kind::Values, (start, end), reverse, column_family)
    }

    /// An updatable cursor (`strata.TxnCursor`) over the transaction's view of a column
    /// family, keys in [start, end): move it with `seek()`, `next()`, ..., and change the
    /// entry it is on with `update(value)` or `delete()`, through the transaction.
    #[pyo3(signature = (start=None, end=None, *, column_family=None))]
    fn cursor(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Cursor> {
        let cf = slf.get().family(column_family)?;
        let mut options = ReadOptions::default();
        options.lower_bound = bound_arg(start, "start")?;
        options.upper_bound = bound_arg(end, "end")?;
        Ok(Cursor::new(slf.clone().unbind(), cf, options))
    }

    /// Names a pessimistic transaction for two-phase commit (a name no other transaction of
    /// the database holds); required before `prepare()`. InvalidArgument on an optimistic
    /// transaction.
    fn set_name(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.run(py, None, |txn, _| match txn {
            Txn::Pessimistic(t) => t.set_name(name),
            Txn::Optimistic(_) => Err(needs_pessimistic()),
        })
    }

    /// The name given by `set_name()`, or None.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.run(py, None, |txn, _| {
            Ok(match txn {
                Txn::Pessimistic(t) => t.name().map(|n| String::from_utf8_lossy(n).into_owned()),
                Txn::Optimistic(_) => None,
            })
        })
    }

    /// The first phase of two-phase commit (needs a name): the writes go to the log as
    /// prepared and the locks stay held; then `commit()` or `rollback()`. A prepared
    /// transaction survives a crash or `close()`: `db.prepared_transactions()` hands it out
    /// after the next open.
    fn prepare(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, None, |txn, _| match txn {
            Txn::Pessimistic(t) => t.prepare(),
            Txn::Optimistic(_) => Err(needs_pessimistic()),
        })
    }

    /// Marks the transaction's state; `rollback_to_savepoint()` returns to it.
    fn set_savepoint(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, None, |txn, _| either!(txn, t => t.set_save_point()))
    }

    /// Undoes the writes (and, pessimistic, releases the locks) since the last save point,
    /// and removes it. NotFound when there is none.
    fn rollback_to_savepoint(&self, py: Python<'_>) -> PyResult<()> {
        self.run(
            py,
            None,
            |txn, _| either!(txn, t => t.rollback_to_save_point()),
        )
    }

    /// Applies the transaction's writes atomically, and ends it. An optimistic transaction
    /// raises TransactionConflict, writing nothing, when a key it wrote or read for update
    /// was written by someone else since it began; a pessimistic one raises
    /// TransactionExpired, writing nothing, when it outlived its expiration and lost its
    /// locks. It ends either way.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut slot = self.slot.lock();
            let result = match &mut *slot {
                Slot::Running(cell) => cell.with_dependent_mut(|_, txn| txn.commit()),
                Slot::Ended(how) => return Err(how.error()),
            };
            let how = if result.is_ok() {
                Ended::Committed
            } else {
                Ended::Failed
            };
            *slot = Slot::Ended(how);
            result
        })
        .map_err(to_py)
    }

    /// Drops the transaction's writes (and releases its locks), and ends it. Does nothing
    /// when it has ended already.
    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut slot = self.slot.lock();
            let Slot::Running(cell) = &mut *slot else {
                return Ok(());
            };
            cell.with_dependent_mut(|_, txn| txn.rollback())?;
            *slot = Slot::Ended(Ended::RolledBack);
            Ok(())
        })
        .map_err(to_py)
    }

    /// True until the transaction commits, fails to commit or rolls back.
    #[getter]
    fn active(&self, py: Python<'_>) -> bool {
        py.detach(|| matches!(*self.slot.lock(), Slot::Running(_)))
    }

    /// True for a pessimistic transaction (of a database opened with `transaction_db=True`).
    #[getter]
    fn pessimistic(&self) -> bool {
        self.pessimistic
    }

    /// Returns itself, for `with`.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Commits when the block ended normally (unless the transaction has ended already);
    /// rolls back on an exception, which then propagates.
    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if exc_type.is_none() && self.active(py) {
            self.commit(py)?;
        } else {
            self.rollback(py)?;
        }
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let kind = if self.pessimistic {
            "pessimistic"
        } else {
            "optimistic"
        };
        let state = py.detach(|| match &*self.slot.lock() {
            Slot::Running(_) => "active",
            Slot::Ended(Ended::Committed) => "committed",
            Slot::Ended(Ended::Failed) => "failed",
            Slot::Ended(Ended::RolledBack) => "rolled back",
            Slot::Ended(Ended::DbClosed) => "rolled back at close",
        });
        format!("<strata.Transaction {kind} {state}>")
    }
}
