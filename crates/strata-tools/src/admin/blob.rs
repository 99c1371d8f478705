//! `strata blob dump|verify PATH...`: the blob files that hold the values kept apart from the
//! tree (layout in `crates/strata/src/blob/mod.rs`), as `strata sst dump|verify` shows tables.
//!
//! A dump prints the header (column family, compression), one line per record, then the
//! footer's summary. A record shows as the reference a table holds for it
//! (`blob 000012 at 24 (40 bytes)`, what `strata sst dump` prints for a BLOB entry), so that a
//! line of one dump finds its line in the other. Values are shown by a printable prefix of
//! [`VALUE_PREFIX`] bytes, whole with `--values`.
//!
//! Every record is checked as it is read (checksum, bounds, lengths), and the records must
//! add up to what the footer says: a damaged or cut file is an error naming the file and the
//! offset, after the records before the damage have been printed.

use std::io::Write;
use std::path::{Path, PathBuf};

use strata::fs::{FileSystem, PosixFs};
use strata::internals::{BlobFileReader, BlobRecord};
use strata::Compression;

use super::db_dir::numbered_files;
use super::inspect::show_bytes;
use crate::cli::BoxError;

/// Bytes of a value a dump shows without `--values`.
pub const VALUE_PREFIX: usize = 32;

/// Byte 16 of a blob file's header: the compression its writer was asked for (records say
/// their own). The reader checks the header's checksum at open; this is read after that.
const HEADER_COMPRESSION_AT: u64 = 16;

/// What `strata blob dump` prints of each record.
#[derive(Debug, Clone, Copy, Default)]
pub struct DumpOptions {
    /// Keys and values as hex.
    pub hex: bool,
    /// Whole values instead of a prefix.
    pub values: bool,
}

/// The blob files `path` names: itself, or every `NNNNNN.blob` of a directory (an error if
/// it has none).
fn blob_files_at(path: &Path) -> Result<Vec<PathBuf>, BoxError> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let files = numbered_files(path, ".blob")?;
    if files.is_empty() {
        return Err(format!(
            "{}: no blob files (NNNNNN.blob) in this directory",
            path.display()
        )
        .into());
    }
    Ok(files.into_iter().map(|f| f.path).collect())
}

/// The file number in a blob file's name (`000012.blob`), if it has one.
fn number_of(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    let digits = name.strip_suffix(".blob")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Opens the blob file at `path`, checking its header and footer. A file not named
/// `NNNNNN.blob` is read as number 0.
fn open(path: &Path) -> Result<BlobFileReader, BoxError> {
    let file = PosixFs.open_random(path)?;
    Ok(BlobFileReader::open(
        file,
        path,
        number_of(path).unwrap_or(0),
    )?)
}

/// The compression recorded in the header of the blob file at `path` (already opened, so
/// the header is whole and checked).
fn header_compression(path: &Path) -> Result<String, BoxError> {
    let byte = PosixFs
        .open_random(path)?
        .read_vec_at(HEADER_COMPRESSION_AT, 1)?[0];
    Ok(Compression::from_byte(byte)
        .map_or_else(|| format!("unknown ({byte})"), |c| c.name().to_string()))
}

/// Prints every blob file `paths` name (files, or directories of them), as the module doc
/// says.
pub fn dump(paths: &[PathBuf], options: DumpOptions) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    for path in paths {
        for file in blob_files_at(path)? {
            dump_file(&mut out, &file, options)?;
        }
    }
    Ok(())
}

fn dump_file(out: &mut impl Write, path: &Path, options: DumpOptions) -> Result<(), BoxError> {
    let reader = open(path)?;
    let number = match number_of(path) {
        Some(n) => format!("number {n}"),
        None => "number unknown: the name is not NNNNNN.blob; shown as 0".to_string(),
    };
    writeln!(out, "blob file: {} ({number})", path.display())?;
    writeln!(
        out,
        "header: column family {}, compression {}",
        reader.column_family(),
        header_compression(path)?
    )?;
    let mut value_bytes = 0u64;
    for record in reader.records() {
        let record = record?;
        value_bytes += record.value.len() as u64;
        writeln!(out, "{}", record_line(&record, options))?;
    }
    let summary = reader.summary();
    if value_bytes != summary.value_bytes {
        // The records are whole but do not add up to the footer: the reader's own check
        // says so, naming the file and the offset.
        reader.verify()?;
        return Err(format!(
            "{}: the records hold {value_bytes} bytes of values, the footer says {}",
            path.display(),
            summary.value_bytes
        )
        .into());
    }
    writeln!(
        out,
        "footer: {} records, {} bytes of values (before compression), file {} bytes",
        summary.records, summary.value_bytes, summary.file_size
    )?;
    Ok(())
}

/// One record: `blob NNNNNN at OFFSET (SIZE bytes): key K, value N bytes: V`.
fn record_line(record: &BlobRecord, options: DumpOptions) -> String {
    let value = &record.value;
    let shown = if options.values || value.len() <= VALUE_PREFIX {
        show_bytes(value, options.hex)
    } else {
        format!(
            "{}... ({} more bytes)",
            show_bytes(&value[..VALUE_PREFIX], options.hex),
            value.len() - VALUE_PREFIX
        )
    };
    format!(
        "{}: key {}, value {} bytes: {shown}",
        record.index,
        show_bytes(&record.key, options.hex),
        value.len()
    )
}

/// Reads and checks every record of every blob file `paths` name; one line per file.
pub fn verify(paths: &[PathBuf]) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    for path in paths {
        for file in blob_files_at(path)? {
            let summary = open(&file)?.verify()?;
            writeln!(
                out,
                "{}: OK, {} records, {} bytes of values, every record checksummed",
                file.display(),
                summary.records,
                summary.value_bytes
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata::internals::BlobIndex;

    #[test]
    fn numbers_come_from_names_of_the_engine_s_form() {
        for (name, number) in [
            ("000012.blob", Some(12)),
            ("/db/7.blob", Some(7)),
            ("000012.sst", None),
            (".blob", None),
            ("x12.blob", None),
            ("copy of 000012.blob", None),
        ] {
            assert_eq!(number_of(Path::new(name)), number, "{name}");
        }
    }

    #[test]
    fn a_record_shows_as_its_reference_with_a_prefix_of_its_value() {
        let record = |value: &[u8]| BlobRecord {
            index: BlobIndex {
                file_number: 12,
                offset: 24,
                size: 40,
            },
            key: b"k\x001".to_vec(),
            value: value.to_vec(),
        };
        let long = [b'v'; VALUE_PREFIX + 8];
        let prefix = "v".repeat(VALUE_PREFIX);
        for (value, options, line) in [
            (
                &b"short"[..],
                DumpOptions::default(),
                "blob 000012 at 24 (40 bytes): key k\\x001, value 5 bytes: short".to_string(),
            ),
            (
                &b""[..],
                DumpOptions::default(),
                "blob 000012 at 24 (40 bytes): key k\\x001, value 0 bytes: ".to_string(),
            ),
            (
                &long[..],
                DumpOptions::default(),
                format!(
                    "blob 000012 at 24 (40 bytes): key k\\x001, value 40 bytes: {prefix}... \
                     (8 more bytes)"
                ),
            ),
            (
                &long[..],
                DumpOptions {
                    values: true,
                    ..Default::default()
                },
                format!(
                    "blob 000012 at 24 (40 bytes): key k\\x001, value 40 bytes: {prefix}vvvvvvvv"
                ),
            ),
            (
                &b"\xff"[..],
                DumpOptions {
                    hex: true,
                    ..Default::default()
                },
                "blob 000012 at 24 (40 bytes): key 0x6b0031, value 1 bytes: 0xff".to_string(),
            ),
        ] {
            assert_eq!(record_line(&record(value), options), line);
        }
    }
}
