//! The files of a database directory, by name: which ones an engine writes, so that a new
//! benchmark run may delete them, as RocksDB's DestroyDB does, and nothing else; and the
//! numbered ones (tables, write-ahead logs) that the inspection commands look at.

use std::path::{Path, PathBuf};

/// The names of the files the other engines `strata bench` drives write in their directory
/// (Strata's own are told by `strata::internals::is_strata_file`): `#` stands for a file
/// number (one or more digits), `*` for any text.
const OTHER_ENGINE_FILES: &[&str] = &[
    // RocksDB: the files it names as Strata does, older info logs, options files, blob
    // files, files being written.
    "CURRENT",
    "IDENTITY",
    "LOCK",
    "LOG",
    "MANIFEST-#",
    "#.log",
    "#.sst",
    "LOG.old.#",
    "OPTIONS-#",
    "#.blob",
    "#.dbtmp",
    "OPTIONS-#.dbtmp",
    // LMDB.
    "data.mdb",
    "lock.mdb",
    // The workload marker of `strata bench` (see bench::workload), and its replacement
    // being written.
    "WORKLOAD",
    "WORKLOAD.tmp",
];

/// Whether `name` matches `pattern` (`#`: one or more digits, `*`: anything; one of them at
/// most).
fn matches(pattern: &str, name: &str) -> bool {
    let Some(at) = pattern.find(['#', '*']) else {
        return pattern == name;
    };
    let (prefix, suffix) = (&pattern[..at], &pattern[at + 1..]);
    let Some(middle) = name
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(suffix))
    else {
        return false;
    };
    match &pattern[at..=at] {
        "#" => !middle.is_empty() && middle.bytes().all(|b| b.is_ascii_digit()),
        _ => true,
    }
}

/// Whether a file named `name` is one an engine writes in its directory.
pub fn is_engine_file(name: &str) -> bool {
    strata::internals::is_strata_file(name) || OTHER_ENGINE_FILES.iter().any(|p| matches(p, name))
}

/// Deletes the database at `dir` as RocksDB's DestroyDB does: the engines' own files, then the
/// directory if that left it empty. Refuses, deleting nothing, when `dir` is not a directory
/// or holds anything else (named in the error). A missing `dir` is no error.
pub fn destroy(dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{shown}: {e}")),
        Ok(m) if !m.is_dir() => return Err(format!("{shown} is a file, not a directory")),
        Ok(_) => {}
    }
    let mut ours = Vec::new();
    let mut foreign = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{shown}: {e}"))? {
        let entry = entry.map_err(|e| format!("{shown}: {e}"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            foreign.push(format!("{name}/"));
        } else if is_engine_file(&name) {
            ours.push(entry.path());
        } else {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        return Err(format!(
            "{shown} holds entries that are no database's: {}; refusing to delete anything \
             there (move them away, or choose another --db)",
            foreign.join(", ")
        ));
    }
    for path in ours {
        remove_file(&path)?;
    }
    match std::fs::remove_dir(dir) {
        Ok(()) => Ok(()),
        // Something appeared meanwhile: it is not ours to delete.
        Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => Ok(()),
        Err(e) => Err(format!("{shown}: {e}")),
    }
}

fn remove_file(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("deleting {}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

/// A numbered file of a database directory (`NNNNNN.sst`, `NNNNNN.log`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberedFile {
    pub number: u64,
    pub path: PathBuf,
    pub bytes: u64,
}

/// The files `NNNNNN{suffix}` in `dir` (tables: `.sst`; write-ahead logs: `.log`), in
/// number order.
pub fn numbered_files(dir: &Path, suffix: &str) -> std::io::Result<Vec<NumberedFile>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let number = name.strip_suffix(suffix).filter(|n| matches("#", n));
        if let Some(number) = number.and_then(|n| n.parse().ok()) {
            files.push(NumberedFile {
                number,
                path: entry.path(),
                bytes: entry.metadata()?.len(),
            });
        }
    }
    files.sort_by_key(|f| f.number);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_files_are_told_from_others_by_name() {
        for (name, ours) in [
            ("CURRENT", true),
            ("IDENTITY", true),
            ("LOCK", true),
            ("LOG", true),
            ("LOG.old", true),
            ("LOG.old.1732356900123456", true),
            ("MANIFEST-000001", true),
            ("OPTIONS-000007", true),
            ("OPTIONS-000007.dbtmp", true),
            ("000012.log", true),
            ("12345678.log", true),
            ("000012.log.dropped", true),
            ("000009.sst", true),
            ("000010.blob", true),
            ("000011.dbtmp", true),
            ("CURRENT.tmp", true),
            ("IDENTITY.tmp", true),
            ("data.mdb", true),
            ("lock.mdb", true),
            // Not an engine's: no number where one belongs, other names, other cases.
            ("marker", false),
            ("notes.txt", false),
            ("app.log", false),
            (".log", false),
            ("000012.log.bak", false),
            ("x000009.sst", false),
            ("MANIFEST-", false),
            ("MANIFEST-00000a", false),
            ("LOG.old.", false),
            ("LOG.older", false),
            ("current", false),
            ("data.mdb.bak", false),
            ("OPTIONS", false),
        ] {
            assert_eq!(is_engine_file(name), ours, "{name}");
        }
    }

    #[test]
    fn destroy_deletes_an_engine_s_files_and_refuses_anything_else() {
        let root = tempfile::tempdir().unwrap();
        let db = root.path().join("db");
        std::fs::create_dir(&db).unwrap();
        for f in [
            "CURRENT",
            "MANIFEST-000001",
            "000002.log",
            "LOG",
            "data.mdb",
        ] {
            std::fs::write(db.join(f), "x").unwrap();
        }
        std::fs::write(db.join("keep.txt"), "mine").unwrap();
        let e = destroy(&db).unwrap_err();
        assert!(
            e.contains("keep.txt") && e.contains(&db.display().to_string()),
            "{e}"
        );
        assert_eq!(
            std::fs::read_dir(&db).unwrap().count(),
            6,
            "nothing deleted"
        );

        std::fs::remove_file(db.join("keep.txt")).unwrap();
        destroy(&db).unwrap();
        assert!(!db.exists(), "the emptied directory is removed");
        destroy(&db).unwrap();

        let file = root.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let e = destroy(&file).unwrap_err();
        assert!(e.contains(&file.display().to_string()) && e.contains("not a directory"));
    }

    #[test]
    fn numbered_files_are_listed_in_number_order_with_their_sizes() {
        let dir = tempfile::tempdir().unwrap();
        for (name, len) in [
            ("1000000.log", 1),
            ("000009.log", 3),
            ("000003.log", 5),
            ("000004.sst", 7),
            ("x000005.log", 9),
            ("000006.log.dropped", 9),
        ] {
            std::fs::write(dir.path().join(name), vec![0; len]).unwrap();
        }
        let listed = |suffix| -> Vec<(String, u64, u64)> {
            numbered_files(dir.path(), suffix)
                .unwrap()
                .into_iter()
                .map(|f| {
                    let name = f.path.file_name().unwrap().to_string_lossy().into();
                    (name, f.number, f.bytes)
                })
                .collect()
        };
        let owned = |rows: &[(&str, u64, u64)]| -> Vec<(String, u64, u64)> {
            rows.iter()
                .map(|&(n, k, b)| (n.to_string(), k, b))
                .collect()
        };
        assert_eq!(
            listed(".log"),
            owned(&[
                ("000003.log", 3, 5),
                ("000009.log", 9, 3),
                ("1000000.log", 1_000_000, 1)
            ])
        );
        assert_eq!(listed(".sst"), owned(&[("000004.sst", 4, 7)]));
    }
}
