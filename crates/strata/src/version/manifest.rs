//! Manifest files and `CURRENT`, read as records: which manifest `CURRENT` names
//! ([`current_manifest`]), the edits of a manifest ([`read_edits`], or from an offset for a
//! manifest being written: [`read_edits_from`]), and pointing `CURRENT` at a new manifest
//! ([`set_current`]). The version set (`set.rs`) writes manifests and applies their edits;
//! the tools read them through these.

use std::path::{Path, PathBuf};

use super::edit::VersionEdit;
use crate::error::{Error, Result};
use crate::filename::{manifest_name, manifest_path, parse_file_name, FileKind, CURRENT};
use crate::fs::FileSystem;
use crate::log::{FileFrom, LogReader, ReadError};

/// The number and path of the manifest `CURRENT` names.
pub fn current_manifest(fs: &dyn FileSystem, dir: &Path) -> Result<(u64, PathBuf)> {
    let current_path = dir.join(CURRENT);
    let name = crate::fs::read_small_file(fs, &current_path, 256)?;
    let name = String::from_utf8_lossy(&name);
    let number = name
        .strip_suffix('\n')
        .and_then(|n| match parse_file_name(n) {
            Some(FileKind::Manifest(number)) => Some(number),
            _ => None,
        })
        .ok_or_else(|| {
            Error::corruption(
                &current_path,
                0,
                format!("CURRENT holds {name:?}, not a manifest name"),
            )
        })?;
    let path = manifest_path(dir, number);
    if !fs.exists(&path) {
        return Err(Error::corruption(
            &current_path,
            0,
            format!("CURRENT names {}, which does not exist", path.display()),
        ));
    }
    Ok((number, path))
}

/// The edits of a manifest with the offset of each, checked for a comparator. A torn last
/// edit (its sync never returned, so it was never acknowledged) ends the list, and so does
/// an atomic group the manifest ends inside (tag 17: none of its edits is returned); any
/// other bad record is a corruption error.
pub fn read_edits(fs: &dyn FileSystem, path: &Path) -> Result<Vec<(u64, VersionEdit)>> {
    read_edits_from(fs, path, 0, false).map(|(edits, _)| edits)
}

/// The edits of a manifest from offset `from` (0, or the end of an edit read before), as
/// [`read_edits`] reads them, with the offset just past the last one returned (before an
/// atomic group the manifest ends inside). With `following` (the manifest's writer may be
/// appending to it now), any bad record ends the list instead of failing: it is an edit
/// being written, read whole next time.
pub(super) fn read_edits_from(
    fs: &dyn FileSystem,
    path: &Path,
    from: u64,
    following: bool,
) -> Result<(Vec<(u64, VersionEdit)>, u64)> {
    let mut reader = match from {
        0 => LogReader::new(fs.open_sequential(path)?),
        from => LogReader::resume(Box::new(FileFrom::open(fs, path, from)?), from)?,
    };
    let mut read_to = from;
    let mut edits = Vec::new();
    // The edits of an atomic group read so far, applied only once its last one is read.
    let mut group: Vec<(u64, VersionEdit)> = Vec::new();
    let mut saw_comparator = false;
    loop {
        let at = reader.end_of_last_record();
        let record = match reader.read_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(ReadError::Bad(b)) if following || b.reason.contains("ends inside") => break,
            Err(ReadError::Bad(b)) => return Err(b.into_error(path)),
            Err(ReadError::Io(e)) => return Err(e),
        };
        let edit = VersionEdit::decode(record).map_err(|why| Error::corruption(path, at, why))?;
        saw_comparator |= edit.comparator.is_some();
        match edit.atomic_group {
            None if !group.is_empty() => {
                return Err(Error::corruption(
                    path,
                    at,
                    "an edit outside its atomic group before the group's last edit",
                ))
            }
            None => {
                edits.push((at, edit));
                read_to = reader.end_of_last_record();
            }
            Some(remaining) => {
                let expected = group.last().and_then(|(_, e): &(u64, VersionEdit)| {
                    e.atomic_group.and_then(|r| r.checked_sub(1))
                });
                if expected.is_some_and(|r| r != remaining) {
                    return Err(Error::corruption(
                        path,
                        at,
                        "atomic group count out of order",
                    ));
                }
                group.push((at, edit));
                if remaining == 0 {
                    edits.append(&mut group);
                    read_to = reader.end_of_last_record();
                }
            }
        }
    }
    // A group the manifest ends inside was never acknowledged (its one sync is after its
    // last edit): none of it happened.
    if !saw_comparator && from == 0 {
        return Err(Error::corruption(
            path,
            0,
            "manifest has no comparator record",
        ));
    }
    Ok((edits, read_to))
}

/// Points CURRENT at manifest `number`: temp file, sync, atomic rename, sync of the directory.
pub(super) fn set_current(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<()> {
    let line = format!("{}\n", manifest_name(number));
    crate::fs::write_file_atomically(fs, dir, CURRENT, line.as_bytes())
}
