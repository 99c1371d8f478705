//! The files of a database directory and their names.
//!
//! - `IDENTITY`: marks the directory as a Strata database; one line
//!   `strata format=<version> id=<hex>`. Written once at creation (via a temporary file and
//!   an atomic rename).
//! - `LOCK`: held with `flock` while the database is open.
//! - `LOG`, `LOG.old.N`: the info log (text) and earlier ones, numbered oldest first
//!   (`LOG.old`, from an earlier build, counts as the oldest).
//! - `NNNNNN.log`: write-ahead logs, numbered in creation order from one counter shared by
//!   every numbered file (tables and manifests take numbers from it too).
//! - `NNNNNN.log.dropped`: bytes that recovery cut from a WAL (a torn or corrupt tail), kept
//!   for diagnosis, never read by the engine.
//! - `NNNNNN.sst`: sorted tables.
//! - `NNNNNN.blob`: blob files, the values kept apart from the tables (`crate::blob`).
//! - `MANIFEST-NNNNNN`: the log of version edits; `CURRENT` names the live one (one line,
//!   the manifest's name and a newline).
//! - `OPTIONS-NNNNNN`: the options in force, as text (`options/file.rs`); the two newest
//!   are kept.
//! - `READ_CHARGES`: what reads paid for each family's L0 files in the last process, for
//!   the next one (`db/read_charges.rs`); a hint, ignored when damaged.
//! - `*.tmp`: files being written for an atomic rename; left over only by a crash.

use std::path::{Path, PathBuf};

/// The on-disk format version this build writes and reads. Do not lower it.
pub const FORMAT_VERSION: u32 = 1;

/// Name of the identity file.
pub const IDENTITY: &str = "IDENTITY";
/// Name of the lock file.
pub const LOCK: &str = "LOCK";
/// Name of the file that names the live manifest.
pub const CURRENT: &str = "CURRENT";
/// Name of the file of read charges left by the last close (`db/read_charges.rs`).
pub const READ_CHARGES: &str = "READ_CHARGES";
/// Name of the info log.
pub const LOG: &str = "LOG";
/// Name an earlier build kept the previous info log under; now the oldest of the old logs.
pub const LOG_OLD: &str = "LOG.old";

/// What a file in the database directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A write-ahead log with its number.
    Wal(u64),
    /// Bytes cut from a WAL by recovery, with the WAL's number.
    DroppedWalTail(u64),
    /// A sorted table with its number.
    Table(u64),
    /// A blob file with its number.
    Blob(u64),
    /// A manifest with its number.
    Manifest(u64),
    /// A temporary file (`*.tmp`).
    Temp,
}

/// Path of WAL number `n` in `dir`.
pub fn wal_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.log"))
}

/// Path where recovery keeps the bytes it cut from WAL `n`.
pub fn dropped_wal_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.log.dropped"))
}

/// Path of table number `n` in `dir`.
pub fn table_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.sst"))
}

/// Path of blob file number `n` in `dir`.
pub fn blob_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:06}.blob"))
}

/// Path of manifest number `n` in `dir`.
pub fn manifest_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(manifest_name(n))
}

/// File name of manifest number `n`, as `CURRENT` holds it.
pub fn manifest_name(n: u64) -> String {
    format!("MANIFEST-{n:06}")
}

/// File name of old info log number `n` (higher is newer).
pub fn old_log_name(n: u64) -> String {
    format!("{LOG_OLD}.{n}")
}

/// The number of an old info log's name (`LOG.old` is 0, the oldest); `None` for others.
pub fn parse_old_log(name: &str) -> Option<u64> {
    if name == LOG_OLD {
        return Some(0);
    }
    parse_number(name.strip_prefix(LOG_OLD)?.strip_prefix('.')?)
}

/// Classifies a file name; `None` for files the engine does not number.
pub fn parse_file_name(name: &str) -> Option<FileKind> {
    if name.ends_with(".tmp") {
        return Some(FileKind::Temp);
    }
    if let Some(n) = name.strip_prefix("MANIFEST-") {
        return parse_number(n).map(FileKind::Manifest);
    }
    if let Some(stem) = name.strip_suffix(".sst") {
        return parse_number(stem).map(FileKind::Table);
    }
    if let Some(stem) = name.strip_suffix(".blob") {
        return parse_number(stem).map(FileKind::Blob);
    }
    if let Some(stem) = name.strip_suffix(".log.dropped") {
        return parse_number(stem).map(FileKind::DroppedWalTail);
    }
    if let Some(stem) = name.strip_suffix(".log") {
        return parse_number(stem).map(FileKind::Wal);
    }
    None
}

/// Whether a file named `name` is one the engine writes in a database directory (numbered
/// or named), so that a tool may delete it with the database.
pub fn is_engine_file(name: &str) -> bool {
    parse_file_name(name).is_some()
        || parse_old_log(name).is_some()
        || (name.starts_with("PREPARED-") && name.ends_with(".txn"))
        || parse_options_file(name).is_some()
        || [CURRENT, IDENTITY, LOCK, LOG].contains(&name)
}

/// Name of OPTIONS file `n`.
pub fn options_file_name(n: u64) -> String {
    format!("OPTIONS-{n:06}")
}

/// The number of the OPTIONS file named `name`, if it is one.
pub fn parse_options_file(name: &str) -> Option<u64> {
    parse_number(name.strip_prefix("OPTIONS-")?)
}

fn parse_number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The content of a new identity file.
pub fn identity_line(id: u64) -> String {
    format!("strata format={FORMAT_VERSION} id={id:016x}\n")
}

/// The format version named by an identity file's content.
pub fn parse_identity(content: &str) -> Option<u32> {
    let rest = content.strip_prefix("strata format=")?;
    let version: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    version.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let dir = Path::new("/d");
        assert_eq!(wal_path(dir, 7), Path::new("/d/000007.log"));
        assert_eq!(parse_file_name("000007.log"), Some(FileKind::Wal(7)));
        assert_eq!(
            parse_file_name("12345678.log"),
            Some(FileKind::Wal(12345678))
        );
        assert_eq!(
            parse_file_name("000007.log.dropped"),
            Some(FileKind::DroppedWalTail(7))
        );
        assert_eq!(parse_file_name("000009.sst"), Some(FileKind::Table(9)));
        assert_eq!(parse_file_name("000010.blob"), Some(FileKind::Blob(10)));
        assert_eq!(blob_path(dir, 10), Path::new("/d/000010.blob"));
        assert_eq!(
            parse_file_name("MANIFEST-000003"),
            Some(FileKind::Manifest(3))
        );
        assert_eq!(parse_file_name("CURRENT.tmp"), Some(FileKind::Temp));
        for other in [
            "LOCK",
            "IDENTITY",
            "CURRENT",
            ".log",
            "x1.log",
            "-1.log",
            "MANIFEST-",
        ] {
            assert_eq!(parse_file_name(other), None, "{other}");
        }
        assert_eq!(parse_identity(&identity_line(5)), Some(FORMAT_VERSION));
        assert_eq!(parse_identity("strata format=12 id=0\n"), Some(12));
        assert_eq!(parse_identity("rocksdb"), None);
    }
}
