//! `strata wal dump DIR|FILE`: the records of WAL files (RocksDB's `ldb dump_wal`). Each
//! record is a batch: a line with its first sequence number, its count of updates, its size
//! and its offset in the file (and, for a record stored compressed, the bytes it takes in the
//! file), then a line per update (`PUT`, `DELETE`, `SINGLE_DELETE`,
//! `MERGE`, `RANGE_DELETE`, `BLOB` for a value written to a blob file at put) with its
//! column family id, its key and its value printed safely (printable ASCII as is, other
//! bytes as `\xNN`; hex with `--hex`). Log-data blobs (two-phase commit markers) are shown
//! as `LOG_DATA`. A damaged record ends the file's dump with the reason and its offset;
//! the command then fails.
//!
//! Given a database directory, it dumps every WAL in it and in its `archive/` (the WALs kept
//! for `Db::updates_since`), oldest first.

use std::io::Write;
use std::path::{Path, PathBuf};

use strata::fs::{FileSystem, PosixFs};
use strata::internals::{DecodedBatch, LogReader, ReadError, ValueKind};

use super::db_dir::numbered_files;
use super::inspect::show_bytes;
use crate::cli::BoxError;

/// The WALs at `path`: the file itself, or those of a database directory and its archive.
fn wals_at(path: &Path) -> Result<Vec<PathBuf>, BoxError> {
    if !path.is_dir() {
        if !path.exists() {
            return Err(format!("{}: no such file", path.display()).into());
        }
        return Ok(vec![path.to_path_buf()]);
    }
    let mut all = Vec::new();
    let archive = path.join(strata::WAL_ARCHIVE_DIR);
    if archive.is_dir() {
        all.extend(numbered_files(&archive, ".log")?);
    }
    all.extend(numbered_files(path, ".log")?);
    all.sort_by_key(|f| f.number);
    if all.is_empty() {
        return Err(format!(
            "{}: no WAL (NNNNNN.log) in it or in its archive",
            path.display()
        )
        .into());
    }
    Ok(all.into_iter().map(|f| f.path).collect())
}

/// Prints the records of the WALs at `path`.
pub fn dump(path: &Path, hex: bool) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    let mut failed = None;
    for wal in wals_at(path)? {
        if let Err(e) = dump_wal(&mut out, &wal, hex) {
            writeln!(out, "error: {e}")?;
            failed.get_or_insert(e);
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn dump_wal(out: &mut impl Write, path: &Path, hex: bool) -> Result<(), BoxError> {
    writeln!(out, "wal: {}", path.display())?;
    let mut reader = LogReader::new(PosixFs.open_sequential(path)?);
    let (mut records, mut updates) = (0u64, 0u64);
    loop {
        let offset = reader.end_of_last_record();
        let record = match reader.read_record() {
            // Owned, so that the reader can say how the record was stored.
            Ok(Some(r)) => r.to_vec(),
            Ok(None) => break,
            Err(ReadError::Bad(bad)) => return Err(bad.into_error(path).into()),
            Err(ReadError::Io(e)) => return Err(e.into()),
        };
        let size = record.len();
        let compressed = match reader.last_record_compressed() {
            true => format!(
                ", compressed to {} in the file",
                reader.end_of_last_record() - offset
            ),
            false => String::new(),
        };
        let batch = DecodedBatch::parse(&record)
            .map_err(|why| format!("{}: record at {offset}: {why}", path.display()))?;
        records += 1;
        updates += u64::from(batch.count);
        writeln!(
            out,
            "#{} count {} ({size} bytes at {offset}{compressed})",
            batch.seq, batch.count
        )?;
        for blob in batch.log_data() {
            writeln!(out, "  LOG_DATA {}", show_bytes(blob, hex))?;
        }
        for entry in batch.iter() {
            let e =
                entry.map_err(|why| format!("{}: record at {offset}: {why}", path.display()))?;
            let key = show_bytes(e.key, hex);
            let value = show_bytes(e.value, hex);
            let line = match e.kind {
                ValueKind::Put => format!("PUT({}) {key} => {value}", e.cf),
                ValueKind::Merge => format!("MERGE({}) {key} => {value}", e.cf),
                ValueKind::Delete => format!("DELETE({}) {key}", e.cf),
                ValueKind::SingleDelete => format!("SINGLE_DELETE({}) {key}", e.cf),
                ValueKind::RangeDeletion => format!("RANGE_DELETE({}) {key} .. {value}", e.cf),
                ValueKind::BlobIndex => format!("BLOB({}) {key} => reference {value}", e.cf),
            };
            writeln!(out, "  {line}")?;
        }
    }
    writeln!(out, "{records} records, {updates} updates")?;
    Ok(())
}
