//! `strata.ColumnFamily`: a named keyspace of a database, with the mapping API of `Db`
//! (`db.rs`), each call reading or writing through the database's engine with the family
//! named; and the arguments that name a family (`column_family=`), as a `ColumnFamily` or a
//! name.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::batch::WriteBatch;
use crate::db::{Db, View};
use crate::iter::{Kind, RangeIter};
use crate::snapshot::Snapshot;

/// A column family: a named keyspace of the database, with its own options and the same
/// mapping API as `Db`. From `db.column_family(name)` or `db.create_column_family(name)`.
/// Using it after it is dropped raises InvalidArgument.
#[pyclass(module = "strata", frozen)]
pub struct ColumnFamily {
    db: Py<Db>,
    cf: strata::ColumnFamily,
}

impl ColumnFamily {
    /// Family `cf` of database `db`.
    pub fn new(db: Py<Db>, cf: strata::ColumnFamily) -> ColumnFamily {
        ColumnFamily { db, cf }
    }

    fn view(&self) -> View {
        View {
            cf: Some(self.cf.clone()),
            ..View::default()
        }
    }
}

#[pymethods]
impl ColumnFamily {
    /// The value of `key`; KeyError when absent.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.db.get().get_item(py, &self.view(), key)
    }

    /// Sets `key` to `value`.
    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.db.get().put_raw(py, Some(&self.cf), key, value, false)
    }

    /// Removes `key` (not an error when absent).
    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.db.get().delete_raw(py, Some(&self.cf), key, false)
    }

    /// True when the family has `key`.
    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.db.get().contains(py, &self.view(), key)
    }

    /// The keys, in order.
    fn __iter__(&self, py: Python<'_>) -> PyResult<RangeIter> {
        Db::iter(
            self.db.bind(py),
            &self.view(),
            Kind::Keys,
            None,
            None,
            false,
        )
    }

    /// The value of `key`, or `default`; see `Db.get()`.
    #[pyo3(signature = (key, default=None, *, fill_cache=true, verify_checksums=true))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<Py<PyAny>> {
        let view = self.view().with_blocks(fill_cache, verify_checksums);
        self.db.get().get_default(py, &view, key, default)
    }

    /// Sets `key` to `value`.
    #[pyo3(signature = (key, value, *, sync=false))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        self.db.get().put_raw(py, Some(&self.cf), key, value, sync)
    }

    /// Removes `key` (not an error when absent).
    #[pyo3(signature = (key, *, sync=false))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        self.db.get().delete_raw(py, Some(&self.cf), key, sync)
    }

    /// A single deletion of `key` in the family; see `Db.single_delete()`.
    #[pyo3(signature = (key, *, sync=false))]
    fn single_delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        self.db
            .get()
            .deletion_raw(py, Some(&self.cf), key, sync, true)
    }

    /// Removes every key of the family with begin <= key < end; see `Db.delete_range()`.
    #[pyo3(signature = (begin, end, *, sync=false))]
    fn delete_range(
        &self,
        py: Python<'_>,
        begin: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        self.db
            .get()
            .delete_range_raw(py, Some(&self.cf), (begin, end), sync)
    }

    /// Records `operand` for `key`, combined by the family's merge operator.
    #[pyo3(signature = (key, operand, *, sync=false))]
    fn merge(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        self.db
            .get()
            .merge_raw(py, Some(&self.cf), key, operand, sync)
    }

    /// The (key, value) pairs with start <= key < end; see `Db.items()`.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, prefix_same_as_start=false, total_order_seek=false, fill_cache=true, verify_checksums=true))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the walk's keyword arguments, as Python passes them"
    )]
    fn items(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        prefix_same_as_start: bool,
        total_order_seek: bool,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<RangeIter> {
        Db::iter(
            self.db.bind(py),
            &self
                .view()
                .with_prefix(prefix_same_as_start, total_order_seek)
                .with_blocks(fill_cache, verify_checksums),
            Kind::Items,
            start,
            end,
            reverse,
        )
    }

    /// The keys with start <= key < end; see `Db.items()`.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, prefix_same_as_start=false, total_order_seek=false, fill_cache=true, verify_checksums=true))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the walk's keyword arguments, as Python passes them"
    )]
    fn keys(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        prefix_same_as_start: bool,
        total_order_seek: bool,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<RangeIter> {
        Db::iter(
            self.db.bind(py),
            &self
                .view()
                .with_prefix(prefix_same_as_start, total_order_seek)
                .with_blocks(fill_cache, verify_checksums),
            Kind::Keys,
            start,
            end,
            reverse,
        )
    }

    /// The values of the keys with start <= key < end; see `Db.items()`.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, prefix_same_as_start=false, total_order_seek=false, fill_cache=true, verify_checksums=true))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the walk's keyword arguments, as Python passes them"
    )]
    fn values(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        prefix_same_as_start: bool,
        total_order_seek: bool,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<RangeIter> {
        Db::iter(
            self.db.bind(py),
            &self
                .view()
                .with_prefix(prefix_same_as_start, total_order_seek)
                .with_blocks(fill_cache, verify_checksums),
            Kind::Values,
            start,
            end,
            reverse,
        )
    }

    /// The values of `keys` in this family, in their order; see `Db.multi_get()`.
    #[pyo3(signature = (keys, default=None, *, fill_cache=true, verify_checksums=true))]
    fn multi_get(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let view = self.view().with_blocks(fill_cache, verify_checksums);
        self.db.get().multi_get_raw(py, &view, keys, default)
    }

    /// A batch whose writes go to this family unless told otherwise; see `Db.write_batch()`.
    fn write_batch(&self, py: Python<'_>) -> WriteBatch {
        WriteBatch::new(self.db.clone_ref(py), Some(self.cf.clone()))
    }

    /// A snapshot of the database, read through this family; see `Db.snapshot()`.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        let snap = self.db.get().take_snapshot()?;
        Ok(Snapshot::new(
            self.db.clone_ref(py),
            Some(self.cf.clone()),
            snap,
        ))
    }

    /// Writes this family's memtables to table files and waits for it.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let cf = &self.cf;
        self.db.get().run(py, |db| db.flush_cf(cf))
    }

    /// Compacts the keys in [start, end] (inclusive, None: open) of this family.
    #[pyo3(signature = (start=None, end=None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        self.db.get().compact_raw(py, Some(&self.cf), start, end)
    }

    /// A property of this family as text; see `Db.property()`.
    fn property(&self, name: &str) -> PyResult<Option<String>> {
        self.db.get().property_raw(Some(&self.cf), name)
    }

    /// The statistics report, with this family's tree and compaction figures.
    fn stats(&self) -> PyResult<String> {
        Ok(self
            .db
            .get()
            .property_raw(Some(&self.cf), "strata.stats")?
            .unwrap_or_default())
    }

    /// The family's name.
    #[getter]
    fn name(&self) -> String {
        self.cf.name().to_string()
    }

    /// The family's id (0 for the default family): how a batch's `entries()` name it.
    #[getter]
    fn id(&self) -> u32 {
        self.cf.id()
    }

    /// True once the family has been dropped.
    #[getter]
    fn dropped(&self) -> bool {
        self.cf.is_dropped()
    }

    fn __repr__(&self) -> String {
        format!("<strata.ColumnFamily {:?}>", self.cf.name())
    }
}

/// The engine's handle named by `obj`: a `ColumnFamily` or a family name.
/// The family a `column_family=` keyword names, None for the default one (absent or None).
pub fn family_or_default(
    db: &Db,
    column_family: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<strata::ColumnFamily>> {
    match column_family {
        Some(obj) if !obj.is_none() => Some(family_arg(db, obj)).transpose(),
        _ => Ok(None),
    }
}

pub fn family_arg(db: &Db, obj: &Bound<'_, PyAny>) -> PyResult<strata::ColumnFamily> {
    if let Ok(cf) = obj.cast::<ColumnFamily>() {
        return Ok(cf.get().cf.clone());
    }
    let name: String = obj
        .extract()
        .map_err(|_| PyTypeError::new_err("column_family must be a ColumnFamily or a name"))?;
    db.family(&name)
}
