//! `strata.Snapshot`: reads as of one moment.

use parking_lot::Mutex;
use pyo3::prelude::*;

use crate::db::{Db, View};
use crate::errors;
use crate::iter::{Kind, RangeIter};

/// A consistent, read-only view of the database as of the moment `db.snapshot()` was called:
/// `snap[key]`, `snap.get()`, `key in snap`, `items()`/`keys()`/`values()`. Release it with
/// `close()` or a `with` block; garbage collection releases it too. Iterators made from it
/// keep their view after it is closed.
#[pyclass(module = "strata", frozen)]
pub struct Snapshot {
    db: Py<Db>,
    cf: Option<strata::ColumnFamily>,
    snapshot: Mutex<Option<strata::Snapshot>>,
}

impl Snapshot {
    pub fn new(db: Py<Db>, cf: Option<strata::ColumnFamily>, snap: strata::Snapshot) -> Self {
        Snapshot {
            db,
            cf,
            snapshot: Mutex::new(Some(snap)),
        }
    }

    fn view(&self) -> PyResult<View> {
        match &*self.snapshot.lock() {
            Some(s) => Ok(View {
                cf: self.cf.clone(),
                snapshot: Some(s.clone()),
                ..View::default()
            }),
            None => Err(errors::Unavailable::new_err("the snapshot is closed")),
        }
    }
}

#[pymethods]
impl Snapshot {
    /// The value of `key` as of the snapshot; KeyError when absent.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.db.get().get_item(py, &self.view()?, key)
    }

    /// True when `key` was there at the snapshot.
    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.db.get().contains(py, &self.view()?, key)
    }

    /// The keys as of the snapshot, in order.
    fn __iter__(&self, py: Python<'_>) -> PyResult<RangeIter> {
        Db::iter(
            self.db.bind(py),
            &self.view()?,
            Kind::Keys,
            None,
            None,
            false,
        )
    }

    /// The value of `key` as of the snapshot, or `default`; see `Db.get()`.
    #[pyo3(signature = (key, default=None, *, fill_cache=true, verify_checksums=true))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<Py<PyAny>> {
        let view = self.view()?.with_blocks(fill_cache, verify_checksums);
        self.db.get().get_default(py, &view, key, default)
    }

    /// The values of `keys` as of the snapshot, in their order; see `Db.multi_get()`.
    #[pyo3(signature = (keys, default=None, *, fill_cache=true, verify_checksums=true))]
    fn multi_get(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        fill_cache: bool,
        verify_checksums: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let view = self.view()?.with_blocks(fill_cache, verify_checksums);
        self.db.get().multi_get_raw(py, &view, keys, default)
    }

    /// The (key, value) pairs with start <= key < end as of the snapshot; see `Db.items()`.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn items(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<RangeIter> {
        Db::iter(
            self.db.bind(py),
            &self.view()?,
            Kind::Items,
            start,
            end,
            reverse,
        )
    }

    /// The keys with start <= key < end as of the snapshot.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn keys(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<RangeIter> {
        Db::iter(
            self.db.bind(py),
            &self.view()?,
            Kind::Keys,
            start,
            end,
            reverse,
        )
    }

    /// The values of the keys with start <= key < end as of the snapshot.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn values(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<RangeIter> {
        Db::iter(
            self.db.bind(py),
            &self.view()?,
            Kind::Values,
            start,
            end,
            reverse,
        )
    }

    /// The same snapshot read through column family `name`.
    fn column_family(&self, py: Python<'_>, name: &str) -> PyResult<Snapshot> {
        let cf = self.db.get().family(name)?;
        let snapshot = self.snapshot.lock().clone();
        match snapshot {
            Some(snap) => Ok(Snapshot::new(self.db.clone_ref(py), Some(cf), snap)),
            None => Err(errors::Unavailable::new_err("the snapshot is closed")),
        }
    }

    /// The sequence number the snapshot reads at.
    #[getter]
    fn sequence(&self) -> PyResult<u64> {
        Ok(self.view()?.snapshot.map_or(0, |s| s.sequence()))
    }

    /// Releases the snapshot; later reads through it raise Unavailable. Closing twice is
    /// allowed.
    fn close(&self) {
        self.snapshot.lock().take();
    }

    /// Returns itself, for `with`.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Releases the snapshot at the end of a `with` block.
    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }
}
