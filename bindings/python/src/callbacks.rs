//! Merge operators and compaction filters written in Python: the engine calls them from its
//! own threads (reads in the caller's thread, flushes and compactions in the background),
//! with the GIL released; each call takes the GIL for the Python call only.
//!
//! Invariants:
//! - The GIL is taken inside the callback and nowhere else on these paths: every engine
//!   call that may run a merge or a compaction (reads, writes, flushes, compactions, close)
//!   is made with the GIL released (`Db::run`, `Db.close`, and `Drop for Db`), so a
//!   background thread waiting for the GIL here never waits on a thread that holds it while
//!   waiting for that background work.
//! - A Python exception in a callback becomes the engine's error for that merge or
//!   compaction (a failed read, or a failed compaction the database reports and retries),
//!   naming the operator and carrying the exception's text; it is never lost.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyList};

use strata::{CompactionFilter, EntryKind, FilterDecision, MergeOperator};

/// The callable's `__name__`, or `default` for one without a name.
fn name_of(obj: &Bound<'_, PyAny>, default: &str) -> String {
    obj.getattr("__name__")
        .and_then(|n| n.extract::<String>())
        .unwrap_or_else(|_| default.to_string())
}

/// The text of a Python exception, for the engine's error.
fn describe(py: Python<'_>, e: PyErr) -> String {
    let text = e
        .value(py)
        .str()
        .map_or_else(|_| String::new(), |s| s.to_string());
    let kind = e
        .get_type(py)
        .name()
        .map_or_else(|_| "Exception".to_string(), |n| n.to_string());
    format!("{kind}: {text}")
}

/// A merge operator of Python callables: `full_merge(key, existing, operands) -> bytes`
/// (`existing` None when the key has no value; `operands` a list, oldest first) and,
/// optionally, `partial_merge(key, operands) -> bytes | None`.
pub struct PyMergeOperator {
    name: String,
    full_merge: Py<PyAny>,
    partial_merge: Option<Py<PyAny>>,
}

impl PyMergeOperator {
    /// The operator `obj` describes: a callable (the full merge), or an object with a
    /// `full_merge` method and optionally `partial_merge` and `name`.
    pub fn from_py(obj: &Bound<'_, PyAny>, option: &str) -> PyResult<PyMergeOperator> {
        if let Ok(full) = obj.getattr("full_merge") {
            let partial = obj.getattr("partial_merge").ok().filter(|p| !p.is_none());
            let name = obj
                .getattr("name")
                .and_then(|n| n.extract::<String>())
                .unwrap_or_else(|_| name_of(&obj.get_type().into_any(), "python"));
            return Ok(PyMergeOperator {
                name,
                full_merge: full.unbind(),
                partial_merge: partial.map(Bound::unbind),
            });
        }
        if obj.is_callable() {
            return Ok(PyMergeOperator {
                name: name_of(obj, "python"),
                full_merge: obj.clone().unbind(),
                partial_merge: None,
            });
        }
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "option {option}: want \"uint64add\", \"stringappend\", None, a callable \
             full_merge(key, existing, operands) or an object with a full_merge method"
        )))
    }
}

impl MergeOperator for PyMergeOperator {
    fn name(&self) -> &str {
        &self.name
    }

    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, String> {
        Python::attach(|py| {
            let call = || -> PyResult<Vec<u8>> {
                let ops = PyList::new(py, operands.iter().map(|o| PyBytes::new(py, o)))?;
                let existing = existing.map(|e| PyBytes::new(py, e));
                let out = self
                    .full_merge
                    .call1(py, (PyBytes::new(py, key), existing, ops))?;
                let out = out.bind(py);
                let bytes = out.cast::<PyBytes>().map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "full_merge must return bytes, not {}",
                        out.get_type()
                            .name()
                            .map_or_else(|_| "?".to_string(), |n| n.to_string())
                    ))
                })?;
                Ok(bytes.as_bytes().to_vec())
            };
            call().map_err(|e| describe(py, e))
        })
    }

    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let partial = self.partial_merge.as_ref()?;
        Python::attach(|py| {
            let ops = PyList::new(py, operands.iter().map(|o| PyBytes::new(py, o))).ok()?;
            // An exception or a None only means the operands stay apart: a partial merge is
            // an optimization, never needed for a correct value.
            let out = partial.call1(py, (PyBytes::new(py, key), ops)).ok()?;
            let out = out.bind(py);
            out.cast::<PyBytes>().ok().map(|b| b.as_bytes().to_vec())
        })
    }
}

/// A compaction filter of a Python callable `filter(level, key, value, is_merge_operand)`
/// returning None or False (keep), True (remove) or bytes (the new value).
pub struct PyCompactionFilter {
    name: String,
    filter: Py<PyAny>,
}

impl PyCompactionFilter {
    pub fn from_py(obj: &Bound<'_, PyAny>, option: &str) -> PyResult<PyCompactionFilter> {
        if !obj.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "option {option}: want None or a callable filter(level, key, value, \
                 is_merge_operand)"
            )));
        }
        Ok(PyCompactionFilter {
            name: name_of(obj, "python"),
            filter: obj.clone().unbind(),
        })
    }
}

impl CompactionFilter for PyCompactionFilter {
    fn name(&self) -> &str {
        &self.name
    }

    fn filter(
        &self,
        level: usize,
        key: &[u8],
        kind: EntryKind,
        value: &[u8],
    ) -> Result<FilterDecision, String> {
        Python::attach(|py| {
            let call = || -> PyResult<FilterDecision> {
                let is_operand = matches!(kind, EntryKind::MergeOperand);
                let out = self.filter.call1(
                    py,
                    (
                        level,
                        PyBytes::new(py, key),
                        PyBytes::new(py, value),
                        is_operand,
                    ),
                )?;
                let out = out.bind(py);
                if out.is_none() {
                    return Ok(FilterDecision::Keep);
                }
                if let Ok(b) = out.cast::<PyBool>() {
                    return Ok(if b.is_true() {
                        FilterDecision::Remove
                    } else {
                        FilterDecision::Keep
                    });
                }
                if let Ok(b) = out.cast::<PyBytes>() {
                    return Ok(FilterDecision::ChangeValue(b.as_bytes().to_vec()));
                }
                Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "a compaction filter returns None, a bool or bytes, not {}",
                    out.get_type()
                        .name()
                        .map_or_else(|_| "?".to_string(), |n| n.to_string())
                )))
            };
            call().map_err(|e| describe(py, e))
        })
    }
}

/// A key order of a Python callable `compare(a, b) -> int` (negative, 0 or positive), named
/// by its `name` attribute, else its `__name__` (the name is recorded in the database: reopen
/// with a comparator of the same name).
/// It is called for every key comparison, under the GIL: expect writes and reads to be
/// several times slower than in bytewise order. An exception cannot fail a comparison (the
/// engine's order must be total), so it is printed (`sys.unraisablehook`) and the keys
/// compare bytewise.
pub struct PyComparator {
    name: String,
    compare: Py<PyAny>,
}

impl PyComparator {
    pub fn from_py(obj: &Bound<'_, PyAny>, option: &str) -> PyResult<PyComparator> {
        let name = obj
            .getattr("name")
            .and_then(|n| n.extract::<String>())
            .unwrap_or_else(|_| name_of(obj, "python"));
        if !obj.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "option {option}: want None or a callable compare(a, b) -> int"
            )));
        }
        Ok(PyComparator {
            name,
            compare: obj.clone().unbind(),
        })
    }
}

impl strata::Comparator for PyComparator {
    fn name(&self) -> &str {
        &self.name
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        Python::attach(|py| {
            let out = self
                .compare
                .call1(py, (PyBytes::new(py, a), PyBytes::new(py, b)))
                .and_then(|o| o.extract::<i64>(py));
            match out {
                Ok(c) => c.cmp(&0),
                Err(e) => {
                    e.write_unraisable(py, None);
                    a.cmp(b)
                }
            }
        })
    }
}

/// An event listener of a Python callable `listener(event: dict)`, called for flushes,
/// compactions, table and log file changes, write-stall changes and background errors. The
/// dict has `kind` (`"flush_begin"`, `"flush_completed"`, `"compaction_begin"`,
/// `"compaction_completed"`, `"stall_conditions_changed"`, `"background_error"`,
/// `"table_file_created"`, `"table_file_deleted"`, `"wal_file_deleted"`) and the fields of
/// the engine's info for it. An exception is printed (`sys.unraisablehook`) and the job goes
/// on. The listener must not use the database that reports the event.
pub struct PyListener {
    listener: Py<PyAny>,
}

impl PyListener {
    pub fn from_py(obj: &Bound<'_, PyAny>, option: &str) -> PyResult<PyListener> {
        if !obj.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "option {option}: want a list of callables listener(event)"
            )));
        }
        Ok(PyListener {
            listener: obj.clone().unbind(),
        })
    }

    /// Calls the listener with a dict of `kind` and `fields`.
    fn send(
        &self,
        kind: &str,
        fields: impl FnOnce(&Bound<'_, pyo3::types::PyDict>) -> PyResult<()>,
    ) {
        Python::attach(|py| {
            let event = pyo3::types::PyDict::new(py);
            let result = event
                .set_item("kind", kind)
                .and_then(|()| fields(&event))
                .and_then(|()| self.listener.call1(py, (event,)).map(drop));
            if let Err(e) = result {
                e.write_unraisable(py, None);
            }
        })
    }
}

impl strata::EventListener for PyListener {
    fn on_flush_begin(&self, info: &strata::FlushJobInfo) {
        self.send("flush_begin", |d| flush_fields(d, info));
    }

    fn on_flush_completed(&self, info: &strata::FlushJobInfo) {
        self.send("flush_completed", |d| flush_fields(d, info));
    }

    fn on_compaction_begin(&self, info: &strata::CompactionJobInfo) {
        self.send("compaction_begin", |d| compaction_fields(d, info));
    }

    fn on_compaction_completed(&self, info: &strata::CompactionJobInfo) {
        self.send("compaction_completed", |d| compaction_fields(d, info));
    }

    fn on_stall_conditions_changed(&self, info: &strata::WriteStallInfo) {
        self.send("stall_conditions_changed", |d| {
            d.set_item("cf_name", &info.cf_name)?;
            d.set_item("previous", format!("{:?}", info.previous))?;
            d.set_item("current", format!("{:?}", info.current))?;
            d.set_item("cause", info.cause.map(|c| format!("{c:?}")))
        });
    }

    fn on_background_error(&self, info: &strata::BackgroundErrorInfo) {
        self.send("background_error", |d| {
            d.set_item("reason", format!("{:?}", info.reason))?;
            d.set_item("error", info.error.to_string())?;
            d.set_item("writes_stopped", info.writes_stopped)
        });
    }

    fn on_table_file_created(&self, info: &strata::TableFileCreationInfo) {
        self.send("table_file_created", |d| {
            d.set_item("cf_name", &info.cf_name)?;
            d.set_item("file_number", info.file_number)?;
            d.set_item("path", &info.path)?;
            d.set_item("bytes", info.bytes)?;
            d.set_item("entries", info.entries)?;
            d.set_item("reason", format!("{:?}", info.reason))
        });
    }

    fn on_table_file_deleted(&self, info: &strata::TableFileDeletionInfo) {
        self.send("table_file_deleted", |d| {
            d.set_item("file_number", info.file_number)?;
            d.set_item("path", &info.path)?;
            d.set_item("reason", format!("{:?}", info.reason))
        });
    }

    fn on_wal_file_deleted(&self, info: &strata::WalFileDeletionInfo) {
        self.send("wal_file_deleted", |d| {
            d.set_item("log_number", info.log_number)?;
            d.set_item("path", &info.path)
        });
    }
}

fn flush_fields(d: &Bound<'_, pyo3::types::PyDict>, info: &strata::FlushJobInfo) -> PyResult<()> {
    d.set_item("cf_name", &info.cf_name)?;
    d.set_item("file_number", info.file_number)?;
    d.set_item("path", &info.file_path)?;
    d.set_item("table_entries", info.table_entries)?;
    d.set_item("table_bytes", info.table_bytes)?;
    d.set_item("reason", format!("{:?}", info.reason))
}

fn compaction_fields(
    d: &Bound<'_, pyo3::types::PyDict>,
    info: &strata::CompactionJobInfo,
) -> PyResult<()> {
    d.set_item("cf_name", &info.cf_name)?;
    d.set_item("reason", format!("{:?}", info.reason))?;
    d.set_item("input_level", info.base_input_level)?;
    d.set_item("output_level", info.output_level)?;
    d.set_item("bytes_read", info.bytes_read)?;
    d.set_item("bytes_written", info.bytes_written)?;
    d.set_item("error", info.status.as_ref().err().map(|e| e.to_string()))
}
