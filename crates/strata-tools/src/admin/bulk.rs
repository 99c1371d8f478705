//! Bulk loading from the shell: `strata sst write OUT.sst` builds a table from a sorted dump
//! (RocksDB's `SstFileWriter`), and `strata ingest DIR FILE.sst...` adds tables to a database
//! (`IngestExternalFile`).
//!
//! `sst write` reads the JSON lines `strata dump` prints (one family's records: those of
//! `--cf`, the default family without it), or with `--hex` the `hexkey hexvalue` lines of
//! `strata scan --hex`, from standard input or `--input FILE`. Keys must come in increasing
//! order of the table's comparator (`--comparator`, bytewise by default), each once, as a
//! dump of one family prints them. Every error names the input and the line; a table left
//! unfinished by an error is deleted.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use strata::{IngestOptions, Options, SstWriter};

use super::kv::{family, from_hex, open_for_writing, parse_record};
use super::recorded::builtin_comparator;
use crate::cli::BoxError;

/// What `strata sst write` is told.
pub struct SstWriteArgs<'a> {
    pub out: &'a Path,
    /// The input file; standard input without it.
    pub input: Option<&'a Path>,
    /// The family whose records are written (`default` without it).
    pub cf: Option<&'a str>,
    /// The lines are `hexkey hexvalue`.
    pub hex: bool,
    /// The built-in comparator to write the table in (bytewise without it).
    pub comparator: Option<&'a str>,
}

/// `strata sst write OUT`: returns the number of entries written.
pub fn sst_write(a: &SstWriteArgs) -> Result<u64, BoxError> {
    let (name, input): (String, Box<dyn BufRead>) = match a.input {
        Some(path) => {
            let file = std::fs::File::open(path)
                .map_err(|e| format!("opening {}: {e}", path.display()))?;
            (
                path.display().to_string(),
                Box::new(std::io::BufReader::new(file)),
            )
        }
        None => (
            "standard input".to_string(),
            Box::new(std::io::stdin().lock()),
        ),
    };
    let mut options = Options::default();
    if let Some(c) = a.comparator {
        options.comparator = builtin_comparator(c).ok_or_else(|| {
            format!(
                "--comparator {c:?} is not a built-in comparator (leveldb.BytewiseComparator, \
                 rocksdb.ReverseBytewiseComparator)"
            )
        })?;
    }
    let wanted = a.cf.unwrap_or("default");
    let mut writer = SstWriter::create(a.out, &options)?;
    let mut count = 0u64;
    for (n, line) in input.lines().enumerate() {
        let at = |e: &dyn std::fmt::Display| format!("{name} line {}: {e}", n + 1);
        let line = line.map_err(|e| at(&e))?;
        if line.trim().is_empty() {
            continue;
        }
        let (cf, key, value) = match a.hex {
            true => parse_hex_line(&line)
                .map(|(k, v)| (wanted.to_string(), k, v))
                .map_err(|e| at(&e))?,
            false => parse_record(&line).map_err(|e| at(&e))?,
        };
        if cf != wanted {
            return Err(at(&format!(
                "a record of column family {cf:?}; this table is for {wanted:?} (choose one with \
                 --cf, or dump one family with `strata dump --cf`)"
            ))
            .into());
        }
        writer.put(&key, &value).map_err(|e| at(&e))?;
        count += 1;
    }
    if count == 0 {
        return Err(format!("{name}: no record of column family {wanted:?} to write").into());
    }
    writer.finish()?;
    Ok(count)
}

/// A line of `strata scan --hex`: `hexkey hexvalue`.
fn parse_hex_line(line: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut parts = line.split_whitespace();
    let (Some(key), value, None) = (parts.next(), parts.next(), parts.next()) else {
        return Err("not a `hexkey hexvalue` line".into());
    };
    let key = from_hex(key).ok_or("the key is not hex")?;
    let value = from_hex(value.unwrap_or("")).ok_or("the value is not hex")?;
    Ok((key, value))
}

/// `strata ingest DIR FILE...`: adds the tables to family `cf` (the default without it).
pub fn ingest(
    dir: &Path,
    files: &[PathBuf],
    cf: Option<&str>,
    move_files: bool,
) -> Result<(), BoxError> {
    let db = open_for_writing(dir, false)?;
    let handle = family(&db, cf)?;
    let mut options = IngestOptions::default();
    options.move_files = move_files;
    db.ingest_cf(&handle, files, &options)
        .map_err(|e| format!("ingesting into {}: {e}", dir.display()))?;
    writeln!(
        std::io::stderr(),
        "ingested {} files into column family {:?}; tree: {}",
        files.len(),
        handle.name(),
        db.tree_shape_cf(&handle)?
    )?;
    db.close()?;
    Ok(())
}
