//! The `strata._strata` extension module: Python bindings of the Strata key-value store.
//! `strata/__init__.py` re-exports it; the README describes the Python API.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use strata::{CfOptions, Options};

mod batch;
mod bulk;
mod callbacks;
mod column_family;
mod convert;
mod cursor;
mod db;
mod errors;
mod iter;
mod snapshot;
mod stats;
mod txn;
mod updates;

use convert::{cf_options, open_options, to_py};

/// Opens the database in directory `path`, creating it if missing unless
/// `create_if_missing=False`, and returns a `Db`.
///
/// Options are keywords named as the fields of the engine's `Options` (`write_buffer_size`,
/// `compression="none|snappy|lz4|zstd"`, `bloom_bits_per_key`, `block_cache_size`,
/// `max_background_jobs`, `compaction_style="leveled|universal"`,
/// `merge_operator="uint64add"|"stringappend"|None` or a Python callable
/// `full_merge(key, existing, operands) -> bytes`, `compaction_filter=` a callable
/// `filter(level, key, value, is_merge_operand)` returning None/False (keep), True (remove)
/// or bytes (new value), `prefix_extractor="fixed:N"|"capped:N"`, `ttl` in seconds, ...), plus `read_only=True` to open
/// without writing or locking, and `transaction_db=True` for pessimistic transactions
/// (`lock_timeout` in seconds: how long their lock requests wait by default, 1 s unless set);
/// without it `db.transaction()` is optimistic.
///
/// `column_families` maps family names to dicts of their options; families named there are
/// created if missing. Families the database has but that are not named are opened too, with
/// the family options given here (the engine requires opening every family).
#[pyfunction]
#[pyo3(signature = (path, *, column_families=None, **options))]
fn open(
    py: Python<'_>,
    path: PathBuf,
    column_families: Option<&Bound<'_, PyDict>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<db::Db> {
    let parsed = open_options(options)?;
    let base = parsed.options.cf_options();
    let mut named: Vec<(String, CfOptions)> = Vec::new();
    if let Some(families) = column_families {
        for (name, opts) in families.iter() {
            let name: String = name.extract()?;
            let opts = if opts.is_none() {
                None
            } else {
                Some(opts.cast_into::<PyDict>()?)
            };
            named.push((name, cf_options(&base, opts.as_ref())?));
        }
    }
    let options = parsed.options;
    let read_only = parsed.read_only;
    let locking = parsed.transactions.is_some();
    let engine = py
        .detach(move || -> strata::Result<db::Engine> {
            if read_only {
                return strata::Db::open_read_only(&path, options).map(db::Engine::Plain);
            }
            // Open every family the database has, as the engine requires: those not named
            // take the family options of `options`.
            let existing = match strata::Db::list_cfs(&path, &options) {
                Ok(names) => names,
                Err(e) if e.kind() == strata::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(e),
            };
            for name in existing {
                if !named.iter().any(|(n, _)| *n == name) {
                    named.push((name, options.cf_options()));
                }
            }
            let db = strata::Db::open_cf(&path, options, named)?;
            if locking {
                return Ok(db::Engine::Locking(strata::TransactionDb::new(db)?));
            }
            Ok(db::Engine::Plain(db))
        })
        .map_err(to_py)?;
    Ok(db::Db::new(engine, read_only, base, parsed.transactions))
}

/// Opens a secondary instance of the database in `path`, which another process (the
/// primary) may be writing (RocksDB's `OpenAsSecondary`): a read-only `Db` that writes
/// nothing in `path`, keeps its own `LOG` in `secondary_path` (created if missing), and
/// sees the primary as of the open until `try_catch_up_with_primary()`. Every column family
/// is opened, with the family options given. Writes raise `Unavailable`. Takes `open`'s
/// options, except `read_only`, `transaction_db` and `column_families`.
#[pyfunction]
#[pyo3(signature = (path, secondary_path, **options))]
fn open_as_secondary(
    py: Python<'_>,
    path: PathBuf,
    secondary_path: PathBuf,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<db::Db> {
    let parsed = open_options(options)?;
    if parsed.read_only || parsed.transactions.is_some() {
        return Err(PyValueError::new_err(
            "open_as_secondary takes neither read_only nor transaction_db: a secondary is \
             read-only and has no transactions",
        ));
    }
    let base = parsed.options.cf_options();
    let options = parsed.options;
    let engine = py
        .detach(move || strata::Db::open_as_secondary(&path, &secondary_path, options))
        .map_err(to_py)?;
    Ok(db::Db::new(db::Engine::Plain(engine), true, base, None))
}

/// The names of the column families of the database in `path`, "default" first (what
/// `open(..., column_families=...)` may name). NotFound when there is no database there.
#[pyfunction]
fn list_column_families(py: Python<'_>, path: PathBuf) -> PyResult<Vec<String>> {
    py.detach(|| strata::Db::list_cfs(&path, &Options::default()))
        .map_err(to_py)
}

/// Rebuilds the manifest of the (closed) database in `path` from its tables and logs
/// (RocksDB's RepairDB); unreadable files go to `path/lost/`. Returns True when every file
/// was kept (no table lost, no log entry dropped). Takes `open`'s options (comparator, merge operator...).
#[pyfunction]
#[pyo3(signature = (path, **options))]
fn repair(py: Python<'_>, path: PathBuf, options: Option<&Bound<'_, PyDict>>) -> PyResult<bool> {
    let options = open_options(options)?.options;
    let report = py
        .detach(|| strata::repair(&path, &options))
        .map_err(to_py)?;
    Ok(report.tables_lost.is_empty() && report.wal_entries_dropped == 0)
}

/// Python bindings of Strata, a persistent ordered key-value store.
#[pymodule]
fn _strata(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(list_column_families, m)?)?;
    m.add_function(wrap_pyfunction!(repair, m)?)?;
    m.add_function(wrap_pyfunction!(open_as_secondary, m)?)?;
    m.add_class::<db::Db>()?;
    m.add_class::<column_family::ColumnFamily>()?;
    m.add_class::<snapshot::Snapshot>()?;
    m.add_class::<batch::WriteBatch>()?;
    m.add_class::<updates::UpdatesIterator>()?;
    m.add_class::<iter::RangeIter>()?;
    m.add_class::<txn::Transaction>()?;
    m.add_class::<cursor::Cursor>()?;
    m.add_class::<bulk::SstWriter>()?;
    m.add_class::<bulk::BackupEngine>()?;
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("NotFound", py.get_type::<errors::NotFound>())?;
    m.add("Corruption", py.get_type::<errors::Corruption>())?;
    m.add("InvalidArgument", py.get_type::<errors::InvalidArgument>())?;
    m.add("Busy", py.get_type::<errors::Busy>())?;
    m.add("Unavailable", py.get_type::<errors::Unavailable>())?;
    m.add("IOError", py.get_type::<errors::IOError>())?;
    m.add(
        "TransactionError",
        py.get_type::<errors::TransactionError>(),
    )?;
    m.add(
        "TransactionConflict",
        py.get_type::<errors::TransactionConflict>(),
    )?;
    m.add("Deadlock", py.get_type::<errors::Deadlock>())?;
    m.add("LockTimeout", py.get_type::<errors::LockTimeout>())?;
    m.add(
        "TransactionExpired",
        py.get_type::<errors::TransactionExpired>(),
    )?;
    m.add("FORMAT_VERSION", strata::FORMAT_VERSION)?;
    Ok(())
}
