//! `strata.WriteBatch`: writes applied together, atomically; also how a batch of the change
//! feed (`updates.rs`) is read back, through `entries()` and `log_data()`.

use parking_lot::Mutex;
use pyo3::prelude::*;

use pyo3::types::PyBytes;

use crate::column_family::family_arg;
use crate::convert::bytes_arg;
use crate::db::Db;
use crate::errors;
use strata::ValueKind;

/// One update of a batch as `entries()` gives it: `(kind, cf_id, key, value)`.
type Entry<'py> = (&'static str, u32, Bound<'py, PyBytes>, Bound<'py, PyBytes>);

/// Writes collected in memory and applied atomically by `write()`: after a crash, all of
/// them are there or none. As a context manager it writes on leaving the block normally and
/// discards everything on an exception:
///
/// ```python
/// with db.write_batch() as batch:
///     batch[b"a"] = b"1"
///     del batch[b"b"]
/// ```
///
/// Each method takes an optional `column_family` (a ColumnFamily or its name). After
/// `write()` the batch is empty and can be used again.
#[pyclass(module = "strata", frozen)]
pub struct WriteBatch {
    db: Py<Db>,
    /// Where writes without a `column_family` go: None is the default family.
    cf: Option<strata::ColumnFamily>,
    batch: Mutex<strata::WriteBatch>,
}

impl WriteBatch {
    pub fn new(db: Py<Db>, cf: Option<strata::ColumnFamily>) -> WriteBatch {
        WriteBatch {
            db,
            cf,
            batch: Mutex::new(strata::WriteBatch::new()),
        }
    }

    /// A batch holding `batch`'s updates, writing to the default family unless told
    /// otherwise: a batch read back from the change feed.
    pub fn with_updates(db: Py<Db>, batch: strata::WriteBatch) -> WriteBatch {
        WriteBatch {
            db,
            cf: None,
            batch: Mutex::new(batch),
        }
    }

    fn target(
        &self,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<strata::ColumnFamily>> {
        match column_family {
            Some(obj) if !obj.is_none() => Ok(Some(family_arg(self.db.get(), obj)?)),
            _ => Ok(self.cf.clone()),
        }
    }
}

#[pymethods]
impl WriteBatch {
    /// Adds: set `key` to `value`.
    #[pyo3(signature = (key, value, column_family=None))]
    fn put(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let cf = self.target(column_family)?;
        let (key, value) = (bytes_arg(key, "key")?, bytes_arg(value, "value")?);
        let mut batch = self.batch.lock();
        match &cf {
            Some(cf) => batch.put_cf(cf, &key, &value),
            None => batch.put(&key, &value),
        };
        Ok(())
    }

    /// Adds: remove `key`.
    #[pyo3(signature = (key, column_family=None))]
    fn delete(
        &self,
        key: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let cf = self.target(column_family)?;
        let key = bytes_arg(key, "key")?;
        let mut batch = self.batch.lock();
        match &cf {
            Some(cf) => batch.delete_cf(cf, &key),
            None => batch.delete(&key),
        };
        Ok(())
    }

    /// Adds: remove every key with begin <= key < end (one record). A begin after the end
    /// makes `write()` fail with InvalidArgument naming both keys, writing nothing of the
    /// batch.
    #[pyo3(signature = (begin, end, column_family=None))]
    fn delete_range(
        &self,
        begin: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let cf = self.target(column_family)?;
        let (begin, end) = (bytes_arg(begin, "begin")?, bytes_arg(end, "end")?);
        let mut batch = self.batch.lock();
        match &cf {
            Some(cf) => batch.delete_range_cf(cf, &begin, &end),
            None => batch.delete_range(&begin, &end),
        };
        Ok(())
    }

    /// Adds: merge `operand` into `key` (needs a merge operator).
    #[pyo3(signature = (key, operand, column_family=None))]
    fn merge(
        &self,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let cf = self.target(column_family)?;
        let (key, operand) = (bytes_arg(key, "key")?, bytes_arg(operand, "operand")?);
        let mut batch = self.batch.lock();
        match &cf {
            Some(cf) => batch.merge_cf(cf, &key, &operand),
            None => batch.merge(&key, &operand),
        };
        Ok(())
    }

    /// `batch[key] = value`: the same as `put`.
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(key, value, None)
    }

    /// `del batch[key]`: the same as `delete`.
    fn __delitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(key, None)
    }

    /// The number of writes in the batch.
    fn __len__(&self) -> usize {
        self.batch.lock().len()
    }

    /// Applies the batch atomically (durably first with `sync=True`), then empties it.
    #[pyo3(signature = (*, sync=false))]
    fn write(&self, py: Python<'_>, sync: bool) -> PyResult<()> {
        let batch = std::mem::take(&mut *self.batch.lock());
        self.db.get().write_raw(py, batch, sync)
    }

    /// The updates of the batch, in order, as `(kind, cf_id, key, value)` tuples: `kind` is
    /// the name of the method that adds it (`"put"`, `"merge"`, `"delete"`,
    /// `"single_delete"`, `"delete_range"`), `cf_id` the family's `ColumnFamily.id` (0: the
    /// default family), `value` empty for deletions and the end key for `"delete_range"`.
    /// A malformed batch raises `Corruption`.
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Vec<Entry<'py>>> {
        let batch = self.batch.lock();
        let mut out = Vec::with_capacity(batch.len());
        for entry in batch.iter() {
            let entry =
                entry.map_err(|e| errors::Corruption::new_err(format!("write batch: {e}")))?;
            let kind = match entry.kind {
                ValueKind::Put => "put",
                ValueKind::Merge => "merge",
                ValueKind::Delete => "delete",
                ValueKind::SingleDelete => "single_delete",
                ValueKind::RangeDeletion => "delete_range",
                other => {
                    return Err(errors::Corruption::new_err(format!(
                        "write batch: an update of kind {other:?} cannot be read back"
                    )))
                }
            };
            out.push((
                kind,
                entry.cf,
                PyBytes::new(py, entry.key),
                PyBytes::new(py, entry.value),
            ));
        }
        Ok(out)
    }

    /// The log-data blobs of the batch (RocksDB's `PutLogData`: written to the WAL only),
    /// in order.
    fn log_data<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        let batch = self.batch.lock();
        batch.log_data().map(|b| PyBytes::new(py, b)).collect()
    }

    /// Discards the writes collected so far.
    fn clear(&self) {
        self.batch.lock().clear();
    }

    /// Returns itself, for `with`.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Writes the batch when the block ended normally; discards it on an exception (which
    /// then propagates).
    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        _exc_value: &Bound<'_, PyAny>,
        _traceback: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        if exc_type.is_none() {
            self.write(py, false)?;
        } else {
            self.clear();
        }
        Ok(false)
    }
}
