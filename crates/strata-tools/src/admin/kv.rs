//! Data commands in the manner of RocksDB's `ldb`: `strata get`, `put`, `delete`, `scan`,
//! `dump` and `load`.
//!
//! Reads (`get`, `scan`, `dump`) open the database read-only, so they work beside a process
//! that has it open (`get` and `scan` with `--secondary DIR` open it as a secondary
//! instance instead, whose `LOG` goes to DIR: the way to read a database another process
//! keeps writing, RocksDB's `ldb --secondary_path`); writes (`put`, `delete`, `load`) open it with every column family and
//! need its lock. Keys and values given on the command line are text, or hex with `--hex`.
//! Output is one record a line; a closed pipe ends it quietly. `get` of an absent key exits
//! with status 1 (and says so on stderr), so scripts can test for it.
//!
//! The dump format, one JSON object a line, round-trips through `load`:
//!
//! ```text
//! {"cf":"default","key":"apple","value":"red"}
//! {"cf":"index","key_hex":"00ff","value":""}
//! ```
//!
//! `key` and `value` hold the bytes as a JSON string when they are UTF-8; otherwise
//! `key_hex` and `value_hex` hold them in hex.

use std::io::{BufRead, Write};
use std::path::Path;

use strata::{ColumnFamily, Db, Options, ReadOptions, WriteBatch, WriteOptions};

use super::recorded::families_as_recorded;
use crate::cli::BoxError;

/// How keys and values are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `key => value`, bytes other than printable ASCII as `\xNN`.
    Text,
    /// `hexkey hexvalue`.
    Hex,
    /// The dump format (a JSON object a line).
    Json,
}

/// Bytes from a command-line argument: the text, or hex with `hex`.
pub fn arg_bytes(arg: &str, hex: bool) -> Result<Vec<u8>, BoxError> {
    if !hex {
        return Ok(arg.as_bytes().to_vec());
    }
    from_hex(arg).ok_or_else(|| format!("{arg:?} is not hex (two digits a byte)").into())
}

pub(crate) fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn opening(dir: &Path) -> impl Fn(strata::Error) -> String + '_ {
    move |e| format!("opening {}: {e}", dir.display())
}

/// The database at `dir` opened read-only, or as a secondary instance with its own files in
/// `secondary`.
fn open_for_reading(dir: &Path, secondary: Option<&Path>) -> Result<Db, BoxError> {
    let opened = match secondary {
        None => Db::open_read_only(dir, Options::default()),
        Some(own) => Db::open_as_secondary(dir, own, Options::default()),
    };
    Ok(opened.map_err(opening(dir))?)
}

/// The database at `dir` opened for writing with every column family (created, with
/// `create`, if missing).
pub(crate) fn open_for_writing(dir: &Path, create: bool) -> Result<Db, BoxError> {
    let mut options = Options::default();
    options.create_if_missing = create;
    options.create_missing_column_families = create;
    let families = match options.fs.exists(&dir.join("CURRENT")) {
        true => families_as_recorded(dir, &mut options)?,
        false => Vec::new(),
    };
    Ok(Db::open_cf(dir, options.clone(), families).map_err(opening(dir))?)
}

/// The family named `cf` (the default with `None`).
pub(crate) fn family(db: &Db, cf: Option<&str>) -> Result<ColumnFamily, BoxError> {
    match cf {
        None => Ok(db.default_cf()),
        Some(name) => db.cf(name).ok_or_else(|| {
            format!(
                "no column family {name:?} (the database has: {})",
                db.cf_names().join(", ")
            )
            .into()
        }),
    }
}

/// `strata get DIR KEY`: prints the value; `Ok(false)` when the key is absent. Opens the
/// database as a secondary instance with its files in `secondary`, if given.
pub fn get(
    dir: &Path,
    cf: Option<&str>,
    key: &str,
    hex: bool,
    secondary: Option<&Path>,
) -> Result<bool, BoxError> {
    let db = open_for_reading(dir, secondary)?;
    let cf = family(&db, cf)?;
    let key = arg_bytes(key, hex)?;
    let Some(value) = db.get_cf(&cf, &key)? else {
        eprintln!("not found: {}", strata::internals::printable(&key));
        return Ok(false);
    };
    let mut out = std::io::stdout().lock();
    if hex {
        writeln!(out, "{}", to_hex(&value))?;
    } else {
        out.write_all(&value)?;
        writeln!(out)?;
    }
    Ok(true)
}

/// `strata put DIR KEY VALUE`.
pub fn put(
    dir: &Path,
    cf: Option<&str>,
    key: &str,
    value: &str,
    hex: bool,
) -> Result<(), BoxError> {
    let (key, value) = (arg_bytes(key, hex)?, arg_bytes(value, hex)?);
    write_one(dir, cf, |batch, cf| {
        batch.put_cf(cf, &key, &value);
    })
}

/// `strata delete DIR KEY`.
pub fn delete(dir: &Path, cf: Option<&str>, key: &str, hex: bool) -> Result<(), BoxError> {
    let key = arg_bytes(key, hex)?;
    write_one(dir, cf, |batch, cf| {
        batch.delete_cf(cf, &key);
    })
}

/// Writes the batch `fill` makes for family `cf` of the database at `dir`, synced.
fn write_one(
    dir: &Path,
    cf: Option<&str>,
    fill: impl FnOnce(&mut WriteBatch, &ColumnFamily),
) -> Result<(), BoxError> {
    let db = open_for_writing(dir, false)?;
    let cf = family(&db, cf)?;
    let mut batch = WriteBatch::new();
    fill(&mut batch, &cf);
    let mut synced = WriteOptions::default();
    synced.sync = true;
    db.write(batch, &synced)?;
    db.close()?;
    Ok(())
}

/// What `strata scan` reads.
pub struct ScanArgs<'a> {
    pub cf: Option<&'a str>,
    pub from: Option<&'a str>,
    pub to: Option<&'a str>,
    pub limit: Option<u64>,
    pub reverse: bool,
    pub hex: bool,
    pub format: Format,
    /// Open the database as a secondary instance with its files here.
    pub secondary: Option<&'a Path>,
}

/// `strata scan DIR`: the pairs in [from, to), in key order (or reversed), one a line.
pub fn scan(dir: &Path, a: &ScanArgs) -> Result<(), BoxError> {
    let db = open_for_reading(dir, a.secondary)?;
    let cf = family(&db, a.cf)?;
    let mut options = ReadOptions::default();
    options.lower_bound = a.from.map(|k| arg_bytes(k, a.hex)).transpose()?;
    options.upper_bound = a.to.map(|k| arg_bytes(k, a.hex)).transpose()?;
    let mut it = db.iter_cf(&cf, &options)?;
    if a.reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut n = 0;
    while it.valid() && a.limit.is_none_or(|l| n < l) {
        write_record(&mut out, a.format, cf.name(), it.key(), it.value())?;
        n += 1;
        if a.reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status()?;
    out.flush()?;
    Ok(())
}

fn write_record(
    out: &mut impl Write,
    format: Format,
    cf: &str,
    key: &[u8],
    value: &[u8],
) -> std::io::Result<()> {
    match format {
        Format::Text => writeln!(
            out,
            "{} => {}",
            strata::internals::printable(key),
            strata::internals::printable(value)
        ),
        Format::Hex => writeln!(out, "{} {}", to_hex(key), to_hex(value)),
        Format::Json => {
            let mut record = serde_json::Map::new();
            record.insert("cf".into(), cf.into());
            for (name, bytes) in [("key", key), ("value", value)] {
                match std::str::from_utf8(bytes) {
                    Ok(text) => record.insert(name.into(), text.into()),
                    Err(_) => record.insert(format!("{name}_hex"), to_hex(bytes).into()),
                };
            }
            writeln!(out, "{}", serde_json::Value::Object(record))
        }
    }
}

/// `strata dump DIR`: every pair of every family (or of `cf`), in the dump format.
pub fn dump(dir: &Path, cf: Option<&str>) -> Result<(), BoxError> {
    let db = open_for_reading(dir, None)?;
    let names = match cf {
        Some(name) => vec![family(&db, Some(name))?.name().to_string()],
        None => db.cf_names(),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for name in names {
        let cf = family(&db, Some(&name))?;
        let mut it = db.iter_cf(&cf, &ReadOptions::default())?;
        it.seek_to_first();
        while it.valid() {
            write_record(&mut out, Format::Json, &name, it.key(), it.value())?;
            it.next();
        }
        it.status()?;
    }
    out.flush()?;
    Ok(())
}

/// One record of the dump format: (family, key, value); the error names what is wrong.
pub(crate) fn parse_record(line: &str) -> Result<(String, Vec<u8>, Vec<u8>), String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
    let object = value.as_object().ok_or("not a JSON object")?;
    let cf = match object.get("cf") {
        None => "default".to_string(),
        Some(v) => v.as_str().ok_or("\"cf\" is not a string")?.to_string(),
    };
    let bytes = |name: &str| -> Result<Vec<u8>, String> {
        if let Some(v) = object.get(name) {
            return Ok(v
                .as_str()
                .ok_or(format!("\"{name}\" is not a string"))?
                .as_bytes()
                .to_vec());
        }
        let hex_name = format!("{name}_hex");
        let v = object
            .get(&hex_name)
            .ok_or(format!("no \"{name}\" or \"{hex_name}\""))?;
        let s = v
            .as_str()
            .ok_or(format!("\"{hex_name}\" is not a string"))?;
        from_hex(s).ok_or(format!("\"{hex_name}\" is not hex"))
    };
    Ok((cf, bytes("key")?, bytes("value")?))
}

/// `strata load DIR < FILE`: writes the records of the dump format from `input` (creating
/// the database and its families if missing), in batches of 1,000; returns the count.
pub fn load(dir: &Path, input: impl BufRead) -> Result<u64, BoxError> {
    let db = open_for_writing(dir, true)?;
    let mut batch = WriteBatch::new();
    let mut count = 0u64;
    for (n, line) in input.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let (cf, key, value) = parse_record(&line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let cf = match db.cf(&cf) {
            Some(cf) => cf,
            None => db.create_cf(&cf, strata::CfOptions::default())?,
        };
        batch.put_cf(&cf, &key, &value);
        count += 1;
        if batch.len() >= 1000 {
            db.write(std::mem::take(&mut batch), &WriteOptions::default())?;
        }
    }
    db.write(batch, &WriteOptions::default())?;
    db.flush()?;
    db.close()?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_the_dump_format() {
        let cases: [(&str, &[u8], &[u8]); 4] = [
            ("default", b"apple", b"red"),
            ("index", b"\x00\xff", b""),
            ("x", b"quote\"and\\slash\n", "caf\u{e9}".as_bytes()),
            ("default", b"k", b"\xc3"),
        ];
        for (cf, key, value) in cases {
            let mut line = Vec::new();
            write_record(&mut line, Format::Json, cf, key, value).unwrap();
            let text = String::from_utf8(line).unwrap();
            assert_eq!(text.lines().count(), 1, "{text}");
            let parsed = parse_record(text.trim_end()).unwrap();
            assert_eq!(
                parsed,
                (cf.to_string(), key.to_vec(), value.to_vec()),
                "{text}"
            );
        }
    }

    #[test]
    fn bad_records_say_what_is_wrong() {
        let cases = [
            ("nonsense", "not a JSON object"),
            ("[1]", "not a JSON object"),
            (r#"{"key":"k"}"#, "no \"value\" or \"value_hex\""),
            (r#"{"key":1,"value":"v"}"#, "\"key\" is not a string"),
            (r#"{"key_hex":"zz","value":"v"}"#, "\"key_hex\" is not hex"),
            (
                r#"{"cf":3,"key":"k","value":"v"}"#,
                "\"cf\" is not a string",
            ),
        ];
        for (line, says) in cases {
            let e = parse_record(line).unwrap_err();
            assert!(e.contains(says), "{line}: {e}");
        }
        assert!(arg_bytes("0g", true).is_err());
        assert_eq!(arg_bytes("00ff", true).unwrap(), [0, 255]);
    }
}
