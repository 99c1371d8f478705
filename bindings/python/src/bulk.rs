//! Bulk loading and copies: `strata.SstWriter` (a table file written outside any database,
//! keys in increasing order, for `Db.ingest()`), and `strata.BackupEngine` (incremental
//! backups with a crc32c per file). `Db.checkpoint()` and `Db.ingest()` are in db.rs.
//!
//! Both objects belong to one thread at a time (a Mutex makes sharing them safe, not
//! useful); the GIL is released while they do IO.

use std::path::PathBuf;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use strata::{BackupEngine as Engine, BackupInfo};

use crate::convert::{bytes_arg, open_options, to_py};
use crate::db::Db;

fn finished() -> strata::Error {
    strata::Error::InvalidArgument("the table file writer is already finished".into())
}

/// Writes a table file for `Db.ingest()`: `SstWriter(path, **options)` with the family
/// options of `strata.open` (comparator, block size, compression, merge operator...), then
/// `put`/`merge`/`delete` in increasing key order (`delete_range` in any order), then
/// `finish()`.
#[pyclass(module = "strata", frozen)]
pub struct SstWriter {
    writer: Mutex<Option<strata::SstWriter>>,
}

impl SstWriter {
    fn run<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut strata::SstWriter) -> strata::Result<R> + Send,
    ) -> PyResult<R> {
        py.detach(|| match self.writer.lock().as_mut() {
            Some(w) => f(w),
            None => Err(finished()),
        })
        .map_err(to_py)
    }
}

#[pymethods]
impl SstWriter {
    /// Creates the table file `path` (replacing a file of that name).
    #[new]
    #[pyo3(signature = (path, **options))]
    fn new(py: Python<'_>, path: PathBuf, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let options = open_options(options)?.options;
        let writer = py
            .detach(|| strata::SstWriter::create(&path, &options))
            .map_err(to_py)?;
        Ok(SstWriter {
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Adds `key` = `value` (keys in increasing order, each once).
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (key, value) = (bytes_arg(key, "key")?, bytes_arg(value, "value")?);
        self.run(py, |w| w.put(&key, &value))
    }

    /// Adds a merge operand for `key`.
    fn merge(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (key, operand) = (bytes_arg(key, "key")?, bytes_arg(operand, "operand")?);
        self.run(py, |w| w.merge(&key, &operand))
    }

    /// Adds a deletion of `key`.
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let key = bytes_arg(key, "key")?;
        self.run(py, |w| w.delete(&key))
    }

    /// Adds a deletion of every key in [begin, end).
    fn delete_range(
        &self,
        py: Python<'_>,
        begin: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (begin, end) = (bytes_arg(begin, "begin")?, bytes_arg(end, "end")?);
        self.run(py, |w| w.delete_range(&begin, &end))
    }

    /// Bytes written to the file so far (0 once finished).
    #[getter]
    fn file_size(&self) -> u64 {
        self.writer
            .lock()
            .as_ref()
            .map_or(0, strata::SstWriter::file_size)
    }

    /// Completes and syncs the file; returns a dict: path, smallest_key, largest_key,
    /// entries, range_deletions, file_size. Later calls raise InvalidArgument.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let info = py
            .detach(|| match self.writer.lock().take() {
                Some(w) => w.finish(),
                None => Err(finished()),
            })
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("path", info.path)?;
        d.set_item(
            "smallest_key",
            info.smallest_key.map(|k| pyo3::types::PyBytes::new(py, &k)),
        )?;
        d.set_item(
            "largest_key",
            info.largest_key.map(|k| pyo3::types::PyBytes::new(py, &k)),
        )?;
        d.set_item("entries", info.entries)?;
        d.set_item("range_deletions", info.range_deletions)?;
        d.set_item("file_size", info.file_size)?;
        Ok(d)
    }
}

/// The backups kept in one directory: `BackupEngine(path)` opens (creating) it.
#[pyclass(module = "strata", frozen)]
pub struct BackupEngine {
    engine: Mutex<Engine>,
}

/// A backup's description as a dict: id, timestamp (seconds since the epoch), num_files,
/// size, shared_bytes, copied_bytes.
fn info_dict<'py>(py: Python<'py>, b: &BackupInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", b.id)?;
    d.set_item("timestamp", b.timestamp)?;
    d.set_item("num_files", b.num_files)?;
    d.set_item("size", b.size)?;
    d.set_item("shared_bytes", b.shared_bytes)?;
    d.set_item("copied_bytes", b.copied_bytes)?;
    Ok(d)
}

#[pymethods]
impl BackupEngine {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let engine = py.detach(|| Engine::open(&path)).map_err(to_py)?;
        Ok(BackupEngine {
            engine: Mutex::new(engine),
        })
    }

    /// Backs up `db` (copying only tables not already in an earlier backup); returns the new
    /// backup's dict.
    fn create_backup<'py>(
        &self,
        py: Python<'py>,
        db: &Bound<'py, Db>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let engine = &self.engine;
        let info = db.get().run(py, |db| engine.lock().create_backup(db))?;
        info_dict(py, &info)
    }

    /// The backups, oldest first, as dicts.
    fn list_backups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let backups = self.engine.lock().list_backups();
        let dicts = backups
            .iter()
            .map(|b| info_dict(py, b))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, dicts)
    }

    /// Checks every file of backup `id` against its size and crc32c; Corruption if one
    /// differs, NotFound for an unknown id.
    fn verify(&self, py: Python<'_>, id: u64) -> PyResult<()> {
        py.detach(|| self.engine.lock().verify_backup(id))
            .map_err(to_py)
    }

    /// Restores backup `id` into directory `path` (which must hold no database).
    fn restore(&self, py: Python<'_>, id: u64, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.engine.lock().restore(id, &path))
            .map_err(to_py)
    }

    /// Deletes backup `id`.
    fn delete(&self, py: Python<'_>, id: u64) -> PyResult<()> {
        py.detach(|| self.engine.lock().delete_backup(id))
            .map_err(to_py)
    }

    /// Deletes all but the newest `keep` backups; returns the ids deleted.
    fn purge_old_backups(&self, py: Python<'_>, keep: usize) -> PyResult<Vec<u64>> {
        py.detach(|| self.engine.lock().purge_old_backups(keep))
            .map_err(to_py)
    }
}
