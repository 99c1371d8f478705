//! `strata.Db`: the mapping API over the engine's `Db` (its column families, the same API
//! with the family named, are in `column_family.rs`).
//!
//! Every call that touches the engine releases the GIL (`Python::detach`), so Python threads
//! run while one of them waits on IO. The engine's handle sits in a `RwLock<Option<..>>`:
//! calls share it, `close()` takes it out, after waiting for the calls in flight. Locks are
//! only ever taken with the GIL released, so a thread waiting for one never blocks another
//! that needs the GIL to finish.
//!
//! The handle is an `Arc<Engine>` because transactions (`txn.rs`) own a share of it: the
//! engine's transactions borrow the database. `close()` first ends the transactions still
//! open (rolls them back), which drops their shares, so that it closes the engine whole.

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use strata::{CfOptions, IngestOptions, ReadOptions, TransactionOptions, WriteOptions};

use crate::batch::WriteBatch;
use crate::column_family::{family_or_default, ColumnFamily};
use crate::convert::{bound_arg, bytes_arg, cf_options, keys_arg, seconds, to_py};
use crate::errors;
use crate::iter::{Kind, RangeIter};
use crate::snapshot::Snapshot;
use crate::txn::{self, Transaction, TxnSlot};
use crate::updates::{Feed, UpdatesIterator};

/// The engine behind a `Db`: a plain database (optimistic transactions), or one whose writes
/// take key locks (`strata.open(..., transaction_db=True)`: pessimistic transactions).
pub enum Engine {
    Plain(strata::Db),
    Locking(strata::TransactionDb),
}

impl Engine {
    /// The database, for reads, families and maintenance.
    pub fn db(&self) -> &strata::Db {
        match self {
            Engine::Plain(db) => db,
            Engine::Locking(tdb) => tdb.db(),
        }
    }

    /// Writes `batch`; on a `TransactionDb`, under the locks of its keys, so that a plain
    /// write never lands on a key a transaction holds.
    fn write(&self, batch: strata::WriteBatch, options: &WriteOptions) -> strata::Result<()> {
        match self {
            Engine::Plain(db) => db.write(batch, options),
            Engine::Locking(tdb) => tdb.write(batch, options),
        }
    }

    fn close(self) -> strata::Result<()> {
        match self {
            Engine::Plain(db) => db.close(),
            Engine::Locking(tdb) => tdb.close(),
        }
    }
}

/// What a read sees: a column family (None: the default one) as of a snapshot (None: now).
#[derive(Clone)]
pub struct View {
    pub cf: Option<strata::ColumnFamily>,
    pub snapshot: Option<strata::Snapshot>,
    /// Iterators stop at the end of the first key's prefix (`ReadOptions::prefix_same_as_start`).
    pub prefix_same_as_start: bool,
    /// Iterators ignore prefix filters (`ReadOptions::total_order_seek`).
    pub total_order_seek: bool,
    /// Data blocks read from files go into the block cache (`ReadOptions::fill_cache`).
    pub fill_cache: bool,
    /// Data blocks read from files have their checksums checked
    /// (`ReadOptions::verify_checksums`).
    pub verify_checksums: bool,
}

impl Default for View {
    fn default() -> Self {
        View {
            cf: None,
            snapshot: None,
            prefix_same_as_start: false,
            total_order_seek: false,
            fill_cache: true,
            verify_checksums: true,
        }
    }
}

impl View {
    /// This view with the prefix options of an iteration.
    pub fn with_prefix(&self, prefix_same_as_start: bool, total_order_seek: bool) -> View {
        View {
            prefix_same_as_start,
            total_order_seek,
            ..self.clone()
        }
    }

    /// This view with the block options of an iteration.
    pub fn with_blocks(&self, fill_cache: bool, verify_checksums: bool) -> View {
        View {
            fill_cache,
            verify_checksums,
            ..self.clone()
        }
    }

    /// Read options at this view's snapshot, reading blocks as it says.
    fn read_options(&self) -> ReadOptions {
        let mut options = ReadOptions::default();
        options.snapshot = self.snapshot.clone();
        options.fill_cache = self.fill_cache;
        options.verify_checksums = self.verify_checksums;
        options
    }
}

/// An open database. Get one from `strata.open()`.
///
/// A mapping from bytes to bytes, in key order: `db[key]`, `db[key] = value`,
/// `del db[key]`, `key in db`, `db.get(key)`, iteration over keys and lazy
/// `items()`/`keys()`/`values()` over key ranges, `multi_get()`, and `transaction()`. There
/// is no `len()`: an LSM tree does not know its number of keys without reading them all.
///
/// Safe to share between threads; the GIL is released during reads, writes, flushes,
/// compactions and while iterators fetch their next entries.
#[pyclass(module = "strata", frozen)]
pub struct Db {
    inner: RwLock<Option<Arc<Engine>>>,
    path: PathBuf,
    read_only: bool,
    /// The family options given to `open`: where new column families' options start.
    family_defaults: CfOptions,
    /// With `transaction_db=True`: the options of a pessimistic transaction not told
    /// otherwise. None: transactions are optimistic.
    transaction_defaults: Option<TransactionOptions>,
    /// The transactions begun, registered while the engine's read lock is held so that
    /// `close()` finds every one (a transaction no longer referenced is a dead `Weak`).
    transactions: Mutex<Vec<Weak<TxnSlot>>>,
}

impl Drop for Db {
    /// A `Db` collected without `close()` closes its engine here, with the GIL released:
    /// closing waits for background flushes and compactions, which may be waiting for the
    /// GIL to call a Python merge operator or compaction filter (see callbacks.rs).
    fn drop(&mut self) {
        if let Some(engine) = self.inner.get_mut().take() {
            Python::attach(|py| py.detach(move || drop(engine)));
        }
    }
}

fn closed_error(path: &std::path::Path) -> strata::Error {
    strata::Error::Unavailable(format!("database {} is closed", path.display()))
}

fn write_options(sync: bool) -> WriteOptions {
    let mut write_options = WriteOptions::default();
    write_options.sync = sync;
    write_options
}

impl Db {
    pub fn new(
        engine: Engine,
        read_only: bool,
        family_defaults: CfOptions,
        transaction_defaults: Option<TransactionOptions>,
    ) -> Db {
        Db {
            path: engine.db().path().to_path_buf(),
            inner: RwLock::new(Some(Arc::new(engine))),
            read_only,
            family_defaults,
            transaction_defaults,
            transactions: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` on the engine with the GIL released; Unavailable once the database is closed.
    pub fn run<R, F>(&self, py: Python<'_>, f: F) -> PyResult<R>
    where
        R: Send,
        F: FnOnce(&strata::Db) -> strata::Result<R> + Send,
    {
        self.run_engine(py, |engine| f(engine.db()))
    }

    /// As `run`, with the whole engine.
    fn run_engine<R, F>(&self, py: Python<'_>, f: F) -> PyResult<R>
    where
        R: Send,
        F: FnOnce(&Arc<Engine>) -> strata::Result<R> + Send,
    {
        py.detach(|| {
            let guard = self.inner.read();
            match guard.as_ref() {
                Some(engine) => f(engine),
                None => Err(closed_error(&self.path)),
            }
        })
        .map_err(to_py)
    }

    /// Runs `f` on the engine, holding the GIL: for calls that do no IO.
    fn run_attached<R>(&self, f: impl FnOnce(&strata::Db) -> R) -> PyResult<R> {
        let guard = self.inner.read();
        match guard.as_ref() {
            Some(engine) => Ok(f(engine.db())),
            None => Err(to_py(closed_error(&self.path))),
        }
    }

    /// Begins a transaction (optimistic or pessimistic, as the engine is) and registers it
    /// for `close()`.
    fn begin(
        &self,
        py: Python<'_>,
        write_options: WriteOptions,
        options: TransactionOptions,
    ) -> PyResult<Arc<TxnSlot>> {
        self.run_engine(py, |engine| {
            let slot = txn::begin(Arc::clone(engine), &write_options, &options);
            let mut open = self.transactions.lock();
            open.retain(|t| t.strong_count() > 0);
            open.push(Arc::downgrade(&slot));
            Ok(slot)
        })
    }

    /// The values of `keys` (an iterable of keys) in `view`, `default` for those missing;
    /// one lookup at one sequence for all of them.
    pub fn multi_get_raw(
        &self,
        py: Python<'_>,
        view: &View,
        keys: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let keys = keys_arg(keys)?;
        let results = self.run(py, |db| {
            let options = view.read_options();
            Ok(match &view.cf {
                Some(cf) => db.multi_get_cf_opt(cf, &keys, &options),
                None => db.multi_get_opt(&keys, &options),
            })
        })?;
        let mut values = Vec::with_capacity(results.len());
        for result in results {
            values.push(match result.map_err(to_py)? {
                Some(v) => PyBytes::new(py, &v).into_any().unbind(),
                None => default
                    .as_ref()
                    .map_or_else(|| py.None(), |d| d.clone_ref(py)),
            });
        }
        Ok(values)
    }

    pub fn get_raw(
        &self,
        py: Python<'_>,
        view: &View,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Vec<u8>>> {
        let key = bytes_arg(key, "key")?;
        self.run(py, |db| {
            let options = view.read_options();
            match &view.cf {
                Some(cf) => db.get_cf_opt(cf, &key, &options),
                None => db.get_opt(&key, &options),
            }
        })
    }

    pub fn get_item(
        &self,
        py: Python<'_>,
        view: &View,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        match self.get_raw(py, view, key)? {
            Some(v) => Ok(PyBytes::new(py, &v).into_any().unbind()),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    pub fn get_default(
        &self,
        py: Python<'_>,
        view: &View,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match self.get_raw(py, view, key)? {
            Some(v) => Ok(PyBytes::new(py, &v).into_any().unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    pub fn contains(&self, py: Python<'_>, view: &View, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.get_raw(py, view, key)?.is_some())
    }

    pub fn iter(
        slf: &Bound<'_, Db>,
        view: &View,
        kind: Kind,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<RangeIter> {
        let mut options = view.read_options();
        options.prefix_same_as_start = view.prefix_same_as_start;
        options.total_order_seek = view.total_order_seek;
        options.lower_bound = bound_arg(start, "start")?;
        options.upper_bound = bound_arg(end, "end")?;
        let cf = view.cf.clone();
        let iter = slf.get().run(slf.py(), |db| match &cf {
            Some(cf) => db.iter_cf(cf, &options),
            None => Ok(db.iter(&options)),
        })?;
        let of_snapshot = view.snapshot.is_some();
        Ok(RangeIter::new(
            slf.clone().unbind(),
            iter,
            of_snapshot,
            kind,
            reverse,
        ))
    }

    pub fn put_raw(
        &self,
        py: Python<'_>,
        cf: Option<&strata::ColumnFamily>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        let key = bytes_arg(key, "key")?;
        let value = bytes_arg(value, "value")?;
        let mut batch = strata::WriteBatch::new();
        match cf {
            Some(cf) => batch.put_cf(cf, &key, &value),
            None => batch.put(&key, &value),
        };
        self.write_raw(py, batch, sync)
    }

    pub fn delete_raw(
        &self,
        py: Python<'_>,
        cf: Option<&strata::ColumnFamily>,
        key: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        self.deletion_raw(py, cf, key, sync, false)
    }

    /// A deletion of `key` in `cf` (None: the default family), single (RocksDB's
    /// SingleDelete) or not.
    pub fn deletion_raw(
        &self,
        py: Python<'_>,
        cf: Option<&strata::ColumnFamily>,
        key: &Bound<'_, PyAny>,
        sync: bool,
        single: bool,
    ) -> PyResult<()> {
        let key = bytes_arg(key, "key")?;
        let mut batch = strata::WriteBatch::new();
        match (cf, single) {
            (Some(cf), false) => batch.delete_cf(cf, &key),
            (None, false) => batch.delete(&key),
            (Some(cf), true) => batch.single_delete_cf(cf, &key),
            (None, true) => batch.single_delete(&key),
        };
        self.write_raw(py, batch, sync)
    }

    /// One range deletion of `[begin, end)`: `begin > end` is InvalidArgument naming both
    /// keys (nothing written), `begin == end` writes nothing.
    pub fn delete_range_raw(
        &self,
        py: Python<'_>,
        cf: Option<&strata::ColumnFamily>,
        (begin, end): (&Bound<'_, PyAny>, &Bound<'_, PyAny>),
        sync: bool,
    ) -> PyResult<()> {
        let (begin, end) = (bytes_arg(begin, "begin")?, bytes_arg(end, "end")?);
        let mut batch = strata::WriteBatch::new();
        match cf {
            Some(cf) => batch.delete_range_cf(cf, &begin, &end),
            None => batch.delete_range(&begin, &end),
        };
        self.write_raw(py, batch, sync)
    }

    pub fn merge_raw(
        &self,
        py: Python<'_>,
        cf: Option<&strata::ColumnFamily>,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        let key = bytes_arg(key, "key")?;
        let operand = bytes_arg(operand, "operand")?;
        let mut batch = strata::WriteBatch::new();
        match cf {
            Some(cf) => batch.merge_cf(cf, &key, &operand),
            None => batch.merge(&key, &operand),
        };
        self.write_raw(py, batch, sync)
    }

    /// Writes `batch` atomically: under its keys' locks with `transaction_db=True`.
    pub fn write_raw(&self, py: Python<'_>, batch: strata::WriteBatch, sync: bool) -> PyResult<()> {
        self.run_engine(py, |engine| engine.write(batch, &write_options(sync)))
    }

    pub fn compact_raw(
        &self,
        py: Python<'_>,
        cf: Option<&strata::ColumnFamily>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let start = bound_arg(start, "start")?;
        let end = bound_arg(end, "end")?;
        self.run(py, |db| match cf {
            Some(cf) => db.compact_range_cf(cf, start.as_deref(), end.as_deref()),
            None => db.compact_range(start.as_deref(), end.as_deref()),
        })
    }

    pub fn property_raw(
        &self,
        cf: Option<&strata::ColumnFamily>,
        name: &str,
    ) -> PyResult<Option<String>> {
        self.run_attached(|db| match cf {
            Some(cf) => db.property_cf(cf, name),
            None => db.property(name),
        })
    }

    /// The engine's handle of family `name`; NotFound when the database has none.
    pub fn family(&self, name: &str) -> PyResult<strata::ColumnFamily> {
        self.run_attached(|db| db.cf(name))?
            .ok_or_else(|| errors::NotFound::new_err(format!("no column family named '{name}'")))
    }

    pub fn take_snapshot(&self) -> PyResult<strata::Snapshot> {
        self.run_attached(|db| db.snapshot())
    }
}

#[pymethods]
impl Db {
    /// The value of `key`; KeyError when the database does not have it.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.get_item(py, &View::default(), key)
    }

    /// Sets `key` to `value`.
    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.put_raw(py, None, key, value, false)
    }

    /// Removes `key`; removing a key that is not there is not an error (as in RocksDB).
    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete_raw(py, None, key, false)
    }

    /// True when the database has `key`.
    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.contains(py, &View::default(), key)
    }

    /// The keys, in order.
    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<RangeIter> {
        Db::iter(slf, &View::default(), Kind::Keys, None, None, false)
    }

    /// The value of `key`, or `default` when the database does not have it. With
    /// `fill_cache=False` the data block read from a file is not kept in the block cache;
    /// with `verify_checksums=False` its checksum is not checked (RocksDB's `ReadOptions`).
    #[pyo3(signature = (key, default=None, *, fill_cache=true, verify_checksums=true))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<Py<PyAny>> {
        let view = View::default().with_blocks(fill_cache, verify_checksums);
        self.get_default(py, &view, key, default)
    }

    /// Sets `key` to `value`; with `sync=True`, returns once the write is on disk.
    #[pyo3(signature = (key, value, *, sync=false))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        self.put_raw(py, None, key, value, sync)
    }

    /// Removes `key` (not an error when it is absent).
    #[pyo3(signature = (key, *, sync=false))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        self.delete_raw(py, None, key, sync)
    }

    /// Removes `key`, written at most once since it was last removed (RocksDB's
    /// SingleDelete): the deletion and the put it meets vanish together at compaction.
    /// Which version reads is undefined if the key was put more than once: use `delete`
    /// then.
    #[pyo3(signature = (key, *, sync=false))]
    fn single_delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        self.deletion_raw(py, None, key, sync, true)
    }

    /// The approximate bytes of the tables' data in each key range `(start, limit)`
    /// (`start <= key < limit`) of a column family (None: the default one), as RocksDB's
    /// GetApproximateSizes: within about a data block per table; memtables are not counted.
    #[pyo3(signature = (ranges, *, column_family=None))]
    fn approximate_sizes(
        &self,
        py: Python<'_>,
        ranges: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<u64>> {
        let cf = family_or_default(self, column_family)?;
        let mut pairs = Vec::new();
        let items = ranges.try_iter().map_err(|_| {
            PyTypeError::new_err("ranges must be an iterable of (start, limit) pairs of bytes")
        })?;
        for (i, item) in items.enumerate() {
            let item = item?;
            let (start, limit): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                item.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "ranges[{i}] must be a (start, limit) pair of bytes"
                    ))
                })?;
            pairs.push((
                bytes_arg(&start, &format!("ranges[{i}] start"))?.into_owned(),
                bytes_arg(&limit, &format!("ranges[{i}] limit"))?.into_owned(),
            ));
        }
        self.run(py, |db| {
            let cf = cf.unwrap_or_else(|| db.default_cf());
            let ranges: Vec<strata::KeyRange<'_>> = pairs
                .iter()
                .map(|(start, limit)| strata::KeyRange::new(start, limit))
                .collect();
            db.approximate_sizes(&cf, &ranges)
        })
    }

    /// Drops the tables of levels 1 and up whose keys all lie in `[begin, end]` (None: open)
    /// of a column family, without reading them (RocksDB's DeleteFilesInRange), and returns
    /// their names. Keys in memtables, level 0 and tables reaching past the range remain:
    /// follow with `delete_range`.
    #[pyo3(signature = (begin=None, end=None, *, column_family=None))]
    fn delete_files_in_range(
        &self,
        py: Python<'_>,
        begin: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<String>> {
        let cf = family_or_default(self, column_family)?;
        let begin = bound_arg(begin, "begin")?;
        let end = bound_arg(end, "end")?;
        self.run(py, |db| {
            let cf = cf.unwrap_or_else(|| db.default_cf());
            db.delete_files_in_range(&cf, begin.as_deref(), end.as_deref())
        })
    }

    /// Removes every key with begin <= key < end, with one record whatever the number of
    /// keys (RocksDB's DeleteRange). InvalidArgument, naming both keys, when begin > end;
    /// nothing when they are equal.
    #[pyo3(signature = (begin, end, *, sync=false))]
    fn delete_range(
        &self,
        py: Python<'_>,
        begin: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        self.delete_range_raw(py, None, (begin, end), sync)
    }

    /// Records `operand` for `key`, combined with its value by the merge operator given to
    /// `open` (`merge_operator="uint64add"` or `"stringappend"`). InvalidArgument without one.
    #[pyo3(signature = (key, operand, *, sync=false))]
    fn merge(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        self.merge_raw(py, None, key, operand, sync)
    }

    /// The (key, value) pairs with start <= key < end, in key order (descending with
    /// `reverse=True`); None leaves that side open. Lazy: entries are read in batches as the
    /// loop asks for them, as of the moment `items()` was called. With `fill_cache=False`
    /// the data blocks the walk reads from files are used and dropped, not cached (a one-off
    /// scan then leaves the block cache to the other reads); `verify_checksums=False` skips
    /// their checksum checks (RocksDB's read options of those names).
    #[pyo3(signature = (start=None, end=None, reverse=false, *, prefix_same_as_start=false, total_order_seek=false, fill_cache=true, verify_checksums=true))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the walk's keyword arguments, as Python passes them"
    )]
    fn items(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        prefix_same_as_start: bool,
        total_order_seek: bool,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<RangeIter> {
        let view = View::default()
            .with_prefix(prefix_same_as_start, total_order_seek)
            .with_blocks(fill_cache, verify_checksums);
        Db::iter(slf, &view, Kind::Items, start, end, reverse)
    }

    /// The keys with start <= key < end; see `items()`.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, prefix_same_as_start=false, total_order_seek=false, fill_cache=true, verify_checksums=true))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the walk's keyword arguments, as Python passes them"
    )]
    fn keys(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        prefix_same_as_start: bool,
        total_order_seek: bool,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<RangeIter> {
        let view = View::default()
            .with_prefix(prefix_same_as_start, total_order_seek)
            .with_blocks(fill_cache, verify_checksums);
        Db::iter(slf, &view, Kind::Keys, start, end, reverse)
    }

    /// The values of the keys with start <= key < end; see `items()`.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, prefix_same_as_start=false, total_order_seek=false, fill_cache=true, verify_checksums=true))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the walk's keyword arguments, as Python passes them"
    )]
    fn values(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        prefix_same_as_start: bool,
        total_order_seek: bool,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<RangeIter> {
        let view = View::default()
            .with_prefix(prefix_same_as_start, total_order_seek)
            .with_blocks(fill_cache, verify_checksums);
        Db::iter(slf, &view, Kind::Values, start, end, reverse)
    }

    /// The values of `keys` (an iterable of keys), in their order, `default` for a key the
    /// database does not have: all read at one moment. `fill_cache` and `verify_checksums`
    /// as for `get()`.
    #[pyo3(signature = (keys, default=None, *, fill_cache=true, verify_checksums=true))]
    fn multi_get(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let view = View::default().with_blocks(fill_cache, verify_checksums);
        self.multi_get_raw(py, &view, keys, default)
    }

    /// Begins a transaction, committed with `sync` (durable when `commit()` returns).
    ///
    /// On a database opened as usual the transaction is optimistic: it takes no lock, reads
    /// at a snapshot taken now with its own writes over it, and `commit()` raises
    /// TransactionConflict, writing nothing, if another writer changed a key it wrote or read
    /// with `for_update=True` since. With `open(..., transaction_db=True)` it is pessimistic:
    /// keys are locked as it writes them or reads them for update, waiting at most
    /// `lock_timeout` seconds (default: `open`'s, else 1) for another transaction's lock
    /// (LockTimeout; Deadlock at once for a cycle, with `deadlock_detect`), and its commit
    /// cannot conflict. `expiration` (seconds) lets others take its locks after that long,
    /// failing its commit (TransactionExpired); `set_snapshot=True` reads at a snapshot taken
    /// now and refuses to lock a key written since (TransactionConflict). Those four apply
    /// to pessimistic transactions only (ValueError otherwise).
    ///
    /// `with db.transaction() as txn:` commits on leaving the block normally and rolls back
    /// if it raises.
    #[pyo3(signature = (*, sync=false, lock_timeout=None, deadlock_detect=None, expiration=None, set_snapshot=None))]
    fn transaction(
        slf: &Bound<'_, Self>,
        sync: bool,
        lock_timeout: Option<&Bound<'_, PyAny>>,
        deadlock_detect: Option<bool>,
        expiration: Option<&Bound<'_, PyAny>>,
        set_snapshot: Option<bool>,
    ) -> PyResult<Transaction> {
        let this = slf.get();
        let lock_timeout = lock_timeout.filter(|v| !v.is_none());
        let expiration = expiration.filter(|v| !v.is_none());
        let options = match &this.transaction_defaults {
            Some(defaults) => {
                let mut options = defaults.clone();
                if let Some(v) = lock_timeout {
                    options.lock_timeout = seconds(v, "lock_timeout")?;
                }
                if let Some(detect) = deadlock_detect {
                    options.deadlock_detect = detect;
                }
                options.expiration = expiration.map(|v| seconds(v, "expiration")).transpose()?;
                if let Some(set) = set_snapshot {
                    options.set_snapshot = set;
                }
                options
            }
            None => {
                let given = [
                    ("lock_timeout", lock_timeout.is_some()),
                    ("deadlock_detect", deadlock_detect.is_some()),
                    ("expiration", expiration.is_some()),
                    ("set_snapshot", set_snapshot.is_some()),
                ];
                if let Some((name, _)) = given.iter().find(|(_, set)| *set) {
                    return Err(PyValueError::new_err(format!(
                        "{name} applies to pessimistic transactions only: open the database \
                         with transaction_db=True"
                    )));
                }
                if this.read_only {
                    return Err(errors::Unavailable::new_err(format!(
                        "database {} is open read-only: transactions are refused",
                        this.path.display()
                    )));
                }
                TransactionOptions::default()
            }
        };
        let slot = this.begin(slf.py(), write_options(sync), options)?;
        Ok(Transaction::new(
            slf.clone().unbind(),
            slot,
            this.transaction_defaults.is_some(),
        ))
    }

    /// True when opened with `transaction_db=True`: transactions are pessimistic, and plain
    /// writes wait for the locks transactions hold.
    #[getter]
    fn transaction_db(&self) -> bool {
        self.transaction_defaults.is_some()
    }

    /// A new, empty batch of writes applied atomically by `write()`, or on leaving a `with`
    /// block without an exception (an exception discards it).
    fn write_batch(slf: &Bound<'_, Self>) -> WriteBatch {
        WriteBatch::new(slf.clone().unbind(), None)
    }

    /// A consistent view of every column family as of now: later writes do not change what it
    /// reads. Release it with `close()` or a `with` block (or let it be garbage collected):
    /// while it lives, compactions keep the versions it can see.
    fn snapshot(slf: &Bound<'_, Self>) -> PyResult<Snapshot> {
        let snap = slf.get().take_snapshot()?;
        Ok(Snapshot::new(slf.clone().unbind(), None, snap))
    }

    /// Creates column family `name` (options as keywords, the column family fields of
    /// `open`'s options; unset ones are those given to `open`) and returns it.
    #[pyo3(signature = (name, **options))]
    fn create_column_family(
        slf: &Bound<'_, Self>,
        name: &str,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<ColumnFamily> {
        let this = slf.get();
        let cf_opts = cf_options(&this.family_defaults, options)?;
        let cf = this.run(slf.py(), |db| db.create_cf(name, cf_opts))?;
        Ok(ColumnFamily::new(slf.clone().unbind(), cf))
    }

    /// Drops column family `name` and its data. NotFound when there is none.
    fn drop_column_family(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let cf = self.family(name)?;
        self.run(py, |db| db.drop_cf(&cf))
    }

    /// The names of the column families, "default" first.
    fn column_families(&self) -> PyResult<Vec<String>> {
        self.run_attached(|db| db.cf_names())
    }

    /// Column family `name`, with the same mapping API as the database. NotFound when there
    /// is none.
    fn column_family(slf: &Bound<'_, Self>, name: &str) -> PyResult<ColumnFamily> {
        let cf = slf.get().family(name)?;
        Ok(ColumnFamily::new(slf.clone().unbind(), cf))
    }

    /// Writes the memtables of every column family to table files and waits for it.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |db| db.flush())
    }

    /// Compacts all of `level` of the default family into the next one (L0 into the base
    /// level), and waits for it.
    fn compact_level(&self, py: Python<'_>, level: usize) -> PyResult<()> {
        self.run(py, |db| db.compact_level(level))
    }

    /// Compacts every column family down to its last level, and waits for it.
    fn compact_all(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |db| db.compact_all())
    }

    /// The shape of the default family's tree (memtables, then each level's files and
    /// bytes), as text.
    fn tree_shape(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, |db| Ok(db.tree_shape().to_string()))
    }

    /// Waits until no flush is pending and no compaction is needed.
    fn wait_for_compactions(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |db| db.wait_for_compactions())
    }

    /// Compacts the keys in [start, end] (both inclusive, None: open) down to the last level,
    /// flushing first, and waits for it.
    #[pyo3(signature = (start=None, end=None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        self.compact_raw(py, None, start, end)
    }

    /// A property as text (RocksDB's GetProperty), None for an unknown name: "strata.stats",
    /// "strata.compaction-stats", "strata.num-files-at-level<N>", "strata.last-sequence",
    /// "strata.num-snapshots", "strata.num-immutable-mem-table",
    /// "strata.cur-size-active-mem-table", "strata.num-entries-active-mem-table".
    fn property(&self, name: &str) -> PyResult<Option<String>> {
        self.property_raw(None, name)
    }

    /// The readable statistics report (the "strata.stats" property).
    fn stats(&self) -> PyResult<String> {
        Ok(self.property_raw(None, "strata.stats")?.unwrap_or_default())
    }

    /// Makes every write so far durable (fdatasync of the write-ahead log).
    fn sync_wal(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |db| db.sync_wal())
    }

    /// With `manual_wal_flush=True`, appends the WAL records held in memory to the WAL file;
    /// `sync=True` makes every write so far durable too (RocksDB's `FlushWAL`). Without the
    /// option every write's record is in the file already, and only `sync` does anything.
    #[pyo3(signature = (sync=false))]
    fn flush_wal(&self, py: Python<'_>, sync: bool) -> PyResult<()> {
        self.run(py, |db| db.flush_wal(sync))
    }

    /// The database's statistics as a dict of numbers: counters (`keys_written`, `gets`,
    /// `gets_found`, `flushes`, `write_stalls`, `stall_micros`, ...) and gauges
    /// (`active_memtable_bytes`, `live_snapshots`, `last_sequence`, ...), named as the
    /// engine's `DbStats::iter` names them. `stats()` is the same as a readable report.
    fn statistics(
        &self,
        py: Python<'_>,
    ) -> PyResult<std::collections::BTreeMap<&'static str, u64>> {
        let stats = self.run(py, |db| Ok(db.stats()))?;
        Ok(crate::stats::statistics(&stats))
    }

    /// Sets `key` to `value` in a database opened with `ttl=`, expiring `ttl` seconds from
    /// now instead of after the database's TTL. InvalidArgument without a TTL.
    fn put_with_ttl(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        ttl: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (key, value) = (bytes_arg(key, "key")?, bytes_arg(value, "value")?);
        let ttl = seconds(ttl, "ttl")?;
        self.run(py, |db| db.put_with_ttl(&key, &value, ttl))
    }

    /// After a background error stopped writes (a full disk, say), clears it and lets
    /// writes and background work go on (RocksDB's Resume).
    fn resume(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |db| db.resume())
    }

    /// Sets the counters of `statistics()` back to 0 (gauges stay as they are).
    fn reset_statistics(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |db| {
            db.reset_stats();
            Ok(())
        })
    }

    /// Writes an openable copy of the database to directory `path`, which must not exist:
    /// tables hard-linked (copied across file systems), logs copied. With
    /// `log_size_for_flush` > 0 the memtables are flushed first when the logs hold at least
    /// that many bytes.
    #[pyo3(signature = (path, *, log_size_for_flush=0))]
    fn checkpoint(&self, py: Python<'_>, path: PathBuf, log_size_for_flush: u64) -> PyResult<()> {
        self.run(py, |db| db.checkpoint_opt(&path, log_size_for_flush))
    }

    /// Adds table files written by `SstWriter` to a column family (None: the default one),
    /// atomically: their keys read as newer than everything written before. `move_files`
    /// hard-links them in and removes the sources; `allow_blocking_flush=False` refuses files
    /// that overlap the memtables instead of flushing them first.
    ///
    /// `ingest_behind=True` places the files under all the family's data instead (in the
    /// last level, at sequence number 0: every key already there shadows them), for bulk
    /// backfills; the database must be opened with `allow_ingest_behind=True`.
    #[pyo3(signature = (paths, *, move_files=false, allow_blocking_flush=true, column_family=None, ingest_behind=false))]
    fn ingest(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        move_files: bool,
        allow_blocking_flush: bool,
        column_family: Option<&Bound<'_, PyAny>>,
        ingest_behind: bool,
    ) -> PyResult<()> {
        let cf = family_or_default(self, column_family)?;
        let mut options = IngestOptions::default();
        options.move_files = move_files;
        options.allow_blocking_flush = allow_blocking_flush;
        options.ingest_behind = ingest_behind;
        self.run(py, |db| match &cf {
            None => db.ingest(&paths, &options),
            Some(cf) => db.ingest_cf(cf, &paths, &options),
        })
    }

    /// Every table of the database (or of `column_family`), as RocksDB's
    /// `GetLiveFilesMetaData`: a list of dicts with `column_family_name`, `level`, `name`,
    /// `file_number`, `directory`, `size`, `smallest_key`, `largest_key`, `smallest_seqno`,
    /// `largest_seqno`, `num_entries`, `num_deletions`, `blob_file_references` and
    /// `user_properties` (a dict of bytes), ordered by family, then level.
    #[pyo3(signature = (*, column_family=None))]
    fn live_files_metadata<'py>(
        &self,
        py: Python<'py>,
        column_family: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let cf = family_or_default(self, column_family)?;
        let files = self.run(py, |db| match &cf {
            None => Ok(db.live_files_metadata()),
            Some(cf) => db.live_files_metadata_cf(cf),
        })?;
        files.iter().map(|f| file_metadata(py, f)).collect()
    }

    /// Brings a database opened with `strata.open_as_secondary` up to date with its
    /// primary (RocksDB's `TryCatchUpWithPrimary`): reads and new iterators see the
    /// primary's writes so far; an iterator already made sees them after its `refresh()`.
    /// `InvalidArgument` on a database not opened as a secondary.
    fn try_catch_up_with_primary(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |db| db.try_catch_up_with_primary())
    }

    /// The sequence number of the last write published (RocksDB's
    /// `GetLatestSequenceNumber`); on a secondary, the last one it has caught up to. A
    /// reader of the change feed asks `updates_since` for the one after it next time.
    fn latest_sequence_number(&self) -> PyResult<u64> {
        self.run_attached(strata::Db::latest_sequence_number)
    }

    /// The change feed (RocksDB's `GetUpdatesSince`): an iterator of `(seq, batch)` for the
    /// write batches from sequence number `seq` on, oldest first, read from the WALs; the
    /// first holds `seq` (or is the first after it), `seq` is each batch's first sequence
    /// number, and `batch.entries()` lists its updates. The feed ends at the last write
    /// published at the call. Keep WALs for it with `wal_ttl_seconds` or
    /// `wal_size_limit_mb` at open: without them a WAL is deleted once its memtables are
    /// flushed. A `seq` older than every WAL kept raises `NotFound` naming the oldest
    /// sequence number still available.
    fn updates_since(slf: &Bound<'_, Self>, seq: u64) -> PyResult<UpdatesIterator> {
        let feed = slf.get().run(slf.py(), |db| {
            db.updates_since(seq).map(|feed| Box::new(feed) as Feed)
        })?;
        Ok(UpdatesIterator::new(slf.clone().unbind(), feed))
    }

    /// The secondary's own directory (where its `LOG` goes) for a database opened with
    /// `strata.open_as_secondary`; None for any other.
    #[getter]
    fn secondary_path(&self) -> PyResult<Option<PathBuf>> {
        self.run_attached(|db| db.secondary_path().map(std::path::Path::to_path_buf))
    }

    /// The transactions prepared by two-phase commit and not yet committed or rolled back:
    /// those recovered at open, and those dropped while prepared. Each is handed out once;
    /// commit or roll back each. Always empty without `transaction_db=True`.
    fn prepared_transactions(slf: &Bound<'_, Self>) -> PyResult<Vec<Transaction>> {
        let this = slf.get();
        let slots = this.run_engine(slf.py(), |engine| {
            let mut slots = Vec::new();
            while let Some(slot) = txn::take_prepared(engine) {
                slots.push(slot);
            }
            let mut open = this.transactions.lock();
            open.retain(|t| t.strong_count() > 0);
            open.extend(slots.iter().map(Arc::downgrade));
            Ok(slots)
        })?;
        Ok(slots
            .into_iter()
            .map(|slot| Transaction::new(slf.clone().unbind(), slot, true))
            .collect())
    }

    /// Closes the database: waits for calls in flight, rolls back the transactions still
    /// open (using them later raises Unavailable), makes the log durable and releases the
    /// lock. Later calls raise Unavailable. Closing twice is allowed.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let Some(engine) = py.detach(|| self.inner.write().take()) else {
            return Ok(());
        };
        py.detach(|| {
            // No transaction can begin now (the handle is gone): end those registered, which
            // drops their shares of the engine.
            let open = std::mem::take(&mut *self.transactions.lock());
            for slot in open.iter().filter_map(Weak::upgrade) {
                txn::end_at_close(&slot);
            }
            match Arc::try_unwrap(engine) {
                Ok(engine) => engine.close(),
                // Every share is a registered transaction's, ended above.
                Err(_) => Err(strata::Error::Unavailable(format!(
                    "database {} is still in use by a transaction and was not closed",
                    self.path.display()
                ))),
            }
        })
        .map_err(to_py)
    }

    /// True once `close()` has been called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.read().is_none()
    }

    /// The directory of the database.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// True when opened with `read_only=True`, or with `strata.open_as_secondary`.
    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// Returns itself, for `with`.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the database at the end of a `with` block.
    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { " closed" } else { "" };
        format!("<strata.Db {:?}{state}>", self.path.display().to_string())
    }
}

/// One table's metadata as a dict (see `Db.live_files_metadata`).
fn file_metadata<'py>(
    py: Python<'py>,
    f: &strata::LiveFileMetadata,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("column_family_name", &f.column_family_name)?;
    d.set_item("level", f.level)?;
    d.set_item("name", &f.name)?;
    d.set_item("file_number", f.file_number)?;
    d.set_item("directory", &f.directory)?;
    d.set_item("size", f.size)?;
    d.set_item("smallest_key", PyBytes::new(py, &f.smallest_key))?;
    d.set_item("largest_key", PyBytes::new(py, &f.largest_key))?;
    d.set_item("smallest_seqno", f.smallest_seqno)?;
    d.set_item("largest_seqno", f.largest_seqno)?;
    d.set_item("num_entries", f.num_entries)?;
    d.set_item("num_deletions", f.num_deletions)?;
    d.set_item("blob_file_references", f.blob_file_references.clone())?;
    let properties = PyDict::new(py);
    for (k, v) in &f.user_properties {
        properties.set_item(k, PyBytes::new(py, v))?;
    }
    d.set_item("user_properties", properties)?;
    Ok(d)
}
