//! The `IDENTITY` file: whether a directory holds a Strata database, and of which format
//! version ([`identify`]); writing it into a new one ([`create_identity`]).

use std::path::Path;

use crate::error::{Error, Result};
use crate::filename::{self, FORMAT_VERSION};
use crate::fs::FileSystem;

/// Whether `path` holds a database: `Ok(false)` if missing or empty, an error if it holds
/// something else or a newer format.
pub(in crate::db) fn identify(fs: &dyn FileSystem, path: &Path) -> Result<bool> {
    if !fs.exists(path) {
        return Ok(false);
    }
    let id_path = path.join(filename::IDENTITY);
    if !fs.exists(&id_path) {
        let names = fs.list_dir(path)?;
        if names.iter().all(|n| n == filename::LOCK) {
            return Ok(false);
        }
        return Err(Error::InvalidArgument(format!(
            "{} is not empty and is not a Strata database (no {} file)",
            path.display(),
            filename::IDENTITY
        )));
    }
    let content = crate::fs::read_small_file(fs, &id_path, 4096)?;
    let text = String::from_utf8_lossy(&content);
    match filename::parse_identity(&text) {
        Some(v) if v <= FORMAT_VERSION => Ok(true),
        Some(v) => Err(Error::InvalidArgument(format!(
            "{} was written in format version {v}; this build reads up to {FORMAT_VERSION}",
            path.display()
        ))),
        None => Err(Error::corruption(&id_path, 0, "not a Strata identity file")),
    }
}

/// Writes `IDENTITY` into the new database at `path`: the format version and an id made of
/// the clock and the process id.
pub(in crate::db) fn create_identity(fs: &dyn FileSystem, path: &Path) -> Result<()> {
    let id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
        ^ u64::from(std::process::id()).rotate_left(32);
    crate::fs::write_file_atomically(
        fs,
        path,
        filename::IDENTITY,
        filename::identity_line(id).as_bytes(),
    )
}
