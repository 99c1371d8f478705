//! The workload marker: a file `WORKLOAD` in the database directory names the workload that
//! built the database (first line) and holds what its later steps need to know (`name=value`
//! lines, e.g. YCSB's record count). A load step claims the database ([`claim`]); the other
//! steps require it ([`require`]), so that a step run on a database built by another
//! workload is refused with a message naming both.

use std::collections::BTreeMap;
use std::path::Path;

use super::{WorkloadStep, STEPS};
use crate::bench::engine::Engine;
/// The file in the database directory naming the workload that built the database.
pub const MARKER_FILE: &str = "WORKLOAD";

/// The contents of the workload marker: the workload's name and its `name=value` facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub workload: String,
    pub facts: BTreeMap<String, String>,
}

impl Marker {
    pub fn new(workload: &str) -> Marker {
        Marker {
            workload: workload.to_string(),
            facts: BTreeMap::new(),
        }
    }

    /// The marker of the database at `dir`, if it has one.
    pub fn read(dir: &Path) -> Result<Option<Marker>, String> {
        let path = dir.join(MARKER_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut lines = text.lines();
        let workload = lines.next().unwrap_or("").trim();
        if workload.is_empty() {
            return Err(format!(
                "{}: empty workload marker (its first line names a workload)",
                path.display()
            ));
        }
        let mut facts = BTreeMap::new();
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let Some((name, value)) = line.split_once('=') else {
                return Err(format!(
                    "{}: the line {line:?} of the workload marker is not name=value",
                    path.display()
                ));
            };
            facts.insert(name.trim().to_string(), value.trim().to_string());
        }
        Ok(Some(Marker {
            workload: workload.to_string(),
            facts,
        }))
    }

    /// Writes the marker into `dir` (replacing the file whole: a crash leaves the old one or
    /// the new one).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let mut text = format!("{}\n", self.workload);
        for (name, value) in &self.facts {
            text.push_str(&format!("{name}={value}\n"));
        }
        let path = dir.join(MARKER_FILE);
        let temp = dir.join(format!("{MARKER_FILE}.tmp"));
        std::fs::write(&temp, text)
            .and_then(|()| std::fs::rename(&temp, &path))
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The fact `name` as a number.
    pub fn number(&self, name: &str) -> Result<u64, String> {
        let value = self.facts.get(name).ok_or_else(|| {
            format!(
                "the {} workload marker has no {name} (was the load step interrupted?)",
                self.workload
            )
        })?;
        value.parse().map_err(|_| {
            format!(
                "the {} workload marker's {name} is {value:?}, not a number",
                self.workload
            )
        })
    }
}

/// The load step `step` of `workload` takes the database: refused when another workload
/// built it. Returns the marker to fill and [`Marker::write`].
pub fn claim(db: &dyn Engine, workload: &str, step: &str) -> Result<Marker, String> {
    match Marker::read(db.path())? {
        Some(m) if m.workload != workload => Err(format!(
            "{step}: the database at {} was built by the {} workload (its {MARKER_FILE} file \
             says so); {step} loads {workload} only into a new database or one of its own",
            db.path().display(),
            m.workload
        )),
        Some(m) => Ok(m),
        None => Ok(Marker::new(workload)),
    }
}

/// The step `step` of `workload` runs on a database its load step built: refused when
/// another workload built it, or none did.
pub fn require(db: &dyn Engine, workload: &str, step: &str, load: &str) -> Result<Marker, String> {
    match Marker::read(db.path())? {
        Some(m) if m.workload == workload => Ok(m),
        Some(m) => Err(format!(
            "{step}: the database at {} was built by the {} workload, not {workload} (its \
             {MARKER_FILE} file says so): run {load} on a new database first",
            db.path().display(),
            m.workload
        )),
        None => Err(format!(
            "{step}: the database at {} was not loaded by {load} (it has no {MARKER_FILE} \
             file): run {load} first, in this run or an earlier one with --use_existing_db",
            db.path().display()
        )),
    }
}

/// A step on db_bench's key layout (not a workload's) refuses a database a workload built.
pub fn refuse_workload_db(db: &dyn Engine, step: &str) -> Result<(), String> {
    match Marker::read(db.path())? {
        Some(m) => Err(format!(
            "{step}: the database at {} was built by the {} workload (its {MARKER_FILE} file \
             says so); {step} reads db_bench's keys, written by fillseq or fillrandom",
            db.path().display(),
            m.workload
        )),
        None => Ok(()),
    }
}

/// Before the database is opened, a database another workload built is refused naming that
/// workload, where opening would fail or change it: a step of a workload with column
/// families of its own (opening would add them), any workload step on a database whose
/// builder has families of its own, and a run with none of that builder's steps (only they
/// open its families). `steps`: each step's name, and its workload step if it is one.
pub fn refuse_foreign_database(
    dir: &Path,
    steps: &[(&str, Option<WorkloadStep>)],
) -> Result<(), String> {
    let Some(marker) = Marker::read(dir)? else {
        return Ok(());
    };
    let built_by = marker.workload.as_str();
    let families = STEPS
        .iter()
        .find(|(_, s)| s.workload() == Some(built_by))
        .and_then(|(_, s)| s.families());
    let refused = |name: &str| {
        format!(
            "{name}: the database at {} was built by the {built_by} workload (its \
             {MARKER_FILE} file says so): run {name} on a new database",
            dir.display()
        )
    };
    let mut its_own = false;
    for &(name, step) in steps {
        match step.map(|s| s.workload()) {
            Some(Some(w)) if w == built_by => its_own = true,
            // Another workload with families of its own would add them to this database.
            Some(Some(_)) => return Err(refused(name)),
            // Any other workload's step cannot open this one's families.
            Some(None) if families.is_some() => return Err(refused(name)),
            Some(None) | None => {}
        }
    }
    match (families, steps.first()) {
        (Some(families), Some(&(name, _))) if !its_own => Err(format!(
            "{name}: the database at {} was built by the {built_by} workload (its {MARKER_FILE} \
             file says so); only that workload's steps open its column families ({})",
            dir.display(),
            families.join(", ")
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_bad_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Marker::read(dir.path()).unwrap(), None);
        let mut m = Marker::new("ycsb");
        m.facts.insert("records".into(), "1000".into());
        m.write(dir.path()).unwrap();
        let back = Marker::read(dir.path()).unwrap().unwrap();
        assert_eq!(back, m);
        assert_eq!(back.number("records").unwrap(), 1000);
        assert!(back.number("fields").unwrap_err().contains("no fields"));
        for (text, error) in [
            ("\n", "empty workload marker"),
            ("ycsb\nrecords\n", "not name=value"),
        ] {
            std::fs::write(dir.path().join(MARKER_FILE), text).unwrap();
            let e = Marker::read(dir.path()).unwrap_err();
            assert!(e.contains(error), "{text:?}: {e}");
        }
    }
}
