//! Inspection commands (the roles of RocksDB's `sst_dump` and `ldb manifest_dump`):
//! `strata sst dump|verify FILE` and `strata manifest dump DIR`.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use strata::fs::{FileSystem, PosixFs};
use strata::internals::ParsedKey;
use strata::internals::TableReadOptions;
use strata::internals::{current_manifest, read_edits, Version};
use strata::internals::{Table, TableOptions};

type BoxError = Box<dyn std::error::Error>;

fn open_table(path: &Path) -> Result<Arc<Table>, BoxError> {
    let file = PosixFs.open_random(path)?;
    let read = TableReadOptions::uncached(TableOptions::for_internal_keys());
    Ok(Arc::new(Table::open(file, path, &read)?))
}

/// Bytes as text when printable, else as hex.
fn show(bytes: &[u8], hex: bool) -> String {
    if !hex && bytes.iter().all(|&b| (0x20..0x7f).contains(&b)) {
        String::from_utf8_lossy(bytes).into_owned()
    } else {
        format!(
            "0x{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    }
}

/// Prints a table's properties, then every entry as `key#seq,KIND => value`.
pub fn sst_dump(path: &Path, hex: bool, keys_only: bool) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    use strata::internals::InternalIterator;
    let table = open_table(path)?;
    let p = table.properties();
    writeln!(out, "table: {}", path.display())?;
    writeln!(
        out,
        "properties: entries {} deletions {} raw keys {} B raw values {} B seq {}..{} \
         compression {} data blocks {} ({} B) index {} B filter {} B created {}",
        p.entries,
        p.deletions,
        p.raw_key_bytes,
        p.raw_value_bytes,
        p.smallest_seq,
        p.largest_seq,
        p.compression,
        p.data_blocks,
        p.data_bytes,
        p.index_bytes,
        p.filter_bytes,
        p.creation_time
    )?;
    let mut it = table.iter();
    it.seek_to_first();
    while it.valid() {
        let key = match ParsedKey::parse(it.key()) {
            Some(k) => format!("{}#{},{}", show(k.user_key, hex), k.seq, kind_name(k.kind)),
            None => show(it.key(), true),
        };
        if keys_only {
            writeln!(out, "{key}")?;
        } else {
            writeln!(out, "{key} => {}", show(it.value(), hex))?;
        }
        it.next();
    }
    it.status()?;
    Ok(())
}

fn kind_name(kind: u8) -> String {
    strata::internals::ValueKind::from_byte(kind)
        .map_or_else(|| format!("KIND{kind}"), |k| k.name().to_string())
}

/// Reads and checks every block of a table.
pub fn sst_verify(path: &Path) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    let table = open_table(path)?;
    let entries = table.verify()?;
    writeln!(
        out,
        "{}: OK, {entries} entries, every block checksummed",
        path.display()
    )?;
    Ok(())
}

/// Prints the edits of the live manifest and the version they build.
pub fn manifest_dump(dir: &Path) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    let (_, path) = current_manifest(&PosixFs, dir)?;
    writeln!(out, "manifest: {}", path.display())?;
    let mut version = Version::default();
    for (at, edit) in read_edits(&PosixFs, &path)? {
        let mut parts = Vec::new();
        if let Some(c) = &edit.comparator {
            parts.push(format!("comparator {c}"));
        }
        if let Some(n) = edit.log_number {
            parts.push(format!("log number {n}"));
        }
        if let Some(n) = edit.next_file_number {
            parts.push(format!("next file {n}"));
        }
        if let Some(n) = edit.last_sequence {
            parts.push(format!("last sequence {n}"));
        }
        writeln!(out, "edit at offset {at}: {}", parts.join(", "))?;
        for (level, f) in &edit.new_files {
            writeln!(
                out,
                "  add L{level} {f:?} {} bytes, {} entries",
                f.size, f.entries
            )?;
        }
        for (level, n) in &edit.deleted_files {
            writeln!(out, "  delete L{level} {n:06}")?;
        }
        version = version.apply(&edit)?;
    }
    writeln!(out, "version:")?;
    for (level, files) in version.levels.iter().enumerate() {
        if !files.is_empty() {
            let bytes: u64 = files.iter().map(|f| f.size).sum();
            writeln!(
                out,
                "  L{level}: {} files, {bytes} bytes: {files:?}",
                files.len()
            )?;
        }
    }
    Ok(())
}

/// `strata stats DIR`: the tree shape and `strata.stats` of a database.
pub fn stats(dir: &Path) -> Result<(), BoxError> {
    // No background compaction: looking must not reshape the tree.
    let options = strata::Options {
        disable_auto_compactions: true,
        ..strata::Options::default()
    };
    let db =
        strata::Db::open(dir, options).map_err(|e| format!("opening {}: {e}", dir.display()))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "tree: {}", db.tree_shape())?;
    write!(out, "{}", db.property("strata.stats").unwrap_or_default())?;
    db.close()?;
    Ok(())
}
