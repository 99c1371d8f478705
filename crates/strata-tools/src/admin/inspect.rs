//! Inspection commands (the roles of RocksDB's `sst_dump` and `ldb manifest_dump`):
//! `strata sst dump|verify PATH`, `strata manifest dump DIR`, `strata stats DIR [--json]`,
//! `strata flush DIR`, and `strata repair DIR` (RocksDB's `ldb repair`).
//!
//! Keys are shown one way in all of them, as the engine's own messages show them:
//! `user_key#seq,KIND`, printable ASCII as is and other bytes as `\xNN` (see [`show_key`]).
//! A database without tables says why: what its write-ahead logs hold (see [`no_tables`]).
//! A BLOB entry (a value kept in a blob file) shows its reference as `strata blob dump`
//! shows the record (see [`show_value`]).
//!
//! A table is read in the key order its properties name (`strata.comparator`), and a database
//! is opened with each family's recorded comparator and ttl; only the built-in orders can be
//! rebuilt from a name, so a table or family of an application's comparator is refused naming
//! it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use strata::fs::{FileSystem, PosixFs};
use strata::internals::{
    current_manifest, printable, read_edits, read_families, utc_datetime, BlobIndex, DecodedBatch,
    FamilyState, FileMeta, LogReader, ParsedKey, ReadError, Table, TableOptions, TableReadOptions,
    ValueKind, Version, VersionEdit,
};
use strata::{BytewiseComparator, Comparator};

use super::db_dir::numbered_files;
use super::recorded::{builtin_comparator, families_as_recorded, BUILT_IN_ONLY};
use crate::cli::BoxError;

/// Opens the table at `path` in the order its properties name (`strata.comparator`), if that
/// is a built-in one. A table of an application's comparator is refused by name: the tool
/// cannot rebuild an order from its name, and reading in another order would misplace keys.
fn open_table(path: &Path) -> Result<Arc<Table>, BoxError> {
    let file = PosixFs.open_random(path)?;
    let name = Table::read_properties(file.as_ref(), path)?.comparator;
    let options = TableOptions::for_internal_keys_named(&name).ok_or_else(|| {
        format!(
            "{}: the table orders keys by comparator {name:?}, which is not built in; \
             {BUILT_IN_ONLY}",
            path.display()
        )
    })?;
    let read = TableReadOptions::uncached(options);
    Ok(Arc::new(Table::open(file, path, &read)?))
}

/// The comparator a table was written in: the name its properties record, or the bytewise
/// order for tables older than that property.
fn comparator_name(recorded: &str) -> String {
    match recorded {
        "" => BytewiseComparator.name().to_string(),
        name => name.to_string(),
    }
}

/// Bytes for humans: printable ASCII as is, other bytes as `\xNN`; all as hex (`0x...`)
/// with `hex`.
pub(crate) fn show_bytes(bytes: &[u8], hex: bool) -> String {
    if hex {
        let digits: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("0x{digits}")
    } else {
        printable(bytes)
    }
}

/// An internal key as `user_key#seq,KIND` (a key that does not parse as one: its bytes).
pub fn show_key(key: &[u8], hex: bool) -> String {
    match ParsedKey::parse(key) {
        Some(k) => format!(
            "{}#{},{}",
            show_bytes(k.user_key, hex),
            k.seq,
            kind_name(k.kind)
        ),
        None => show_bytes(key, hex),
    }
}

/// The value of the entry `key` for humans: a BLOB entry's reference as the blob file's
/// dump shows it (`blob 000012 at 24 (40 bytes)`, see `strata blob dump`), any other value
/// as [`show_bytes`]. A reference that does not decode is shown raw after a note.
fn show_value(key: &[u8], value: &[u8], hex: bool) -> String {
    let blob = ParsedKey::parse(key).is_some_and(|k| k.kind == ValueKind::BlobIndex as u8);
    if !blob {
        return show_bytes(value, hex);
    }
    match BlobIndex::decode(value) {
        Some(index) => index.to_string(),
        None => format!("bad blob reference {}", show_bytes(value, hex)),
    }
}

fn kind_name(kind: u8) -> String {
    ValueKind::from_byte(kind).map_or_else(|| format!("KIND{kind}"), |k| k.name().to_string())
}

/// A table of the manifest as `NNNNNN:[smallest-largest]`.
fn show_file(f: &FileMeta) -> String {
    format!(
        "{:06}:[{}-{}]",
        f.number,
        show_key(&f.smallest, false),
        show_key(&f.largest, false)
    )
}

/// Updates in the write-ahead log at `path`, up to its end or to a torn or corrupt record
/// (where recovery stops too).
fn wal_writes(path: &Path) -> Result<u64, BoxError> {
    let mut reader = LogReader::new(PosixFs.open_sequential(path)?);
    let mut writes = 0;
    loop {
        match reader.read_record() {
            Ok(Some(record)) => match DecodedBatch::parse(record) {
                Ok(batch) => writes += u64::from(batch.count),
                Err(_) => break,
            },
            Ok(None) | Err(ReadError::Bad(_)) => break,
            Err(ReadError::Io(e)) => return Err(e.into()),
        }
    }
    Ok(writes)
}

/// Why the database at `dir` has no tables: what its write-ahead logs hold. A table is
/// written only when a memtable fills or on a flush; closing a database with its WAL does
/// not flush (as in RocksDB), so a small one keeps everything in its WAL.
pub fn no_tables(dir: &Path) -> Result<String, BoxError> {
    let mut total = 0;
    let mut holding = Vec::new();
    for wal in numbered_files(dir, ".log")? {
        let writes = wal_writes(&wal.path)?;
        if writes > 0 {
            total += writes;
            let name = wal.path.file_name().unwrap_or_default().to_string_lossy();
            holding.push(format!("{name}, {} bytes", wal.bytes));
        }
    }
    Ok(if total == 0 {
        "no tables yet, and no writes in the WAL: the database is empty".to_string()
    } else {
        format!(
            "no tables yet: {total} writes are in the WAL ({}) and not flushed; a table is \
             written when a memtable fills (write_buffer_size) or by `strata flush {}`",
            holding.join("; "),
            dir.display()
        )
    })
}

/// The tables `path` names: itself, or every table of a directory. A directory without
/// tables, or a missing file in such a database directory (`DIR/*.sst` that the shell did
/// not expand), is an error that says why there are none.
fn tables_at(path: &Path) -> Result<Vec<PathBuf>, BoxError> {
    if path.is_dir() {
        let tables = numbered_files(path, ".sst")?;
        if tables.is_empty() {
            return Err(format!("{}: {}", path.display(), no_tables(path)?).into());
        }
        return Ok(tables.into_iter().map(|t| t.path).collect());
    }
    if let Some(dir) = path
        .parent()
        .filter(|d| !path.exists() && d.join("CURRENT").exists())
    {
        if numbered_files(dir, ".sst")?.is_empty() {
            return Err(format!("{}: no such file; {}", path.display(), no_tables(dir)?).into());
        }
    }
    Ok(vec![path.to_path_buf()])
}

/// Prints the properties and then the entries (`key#seq,KIND => value`, at most `limit` of
/// them) of the table at `path`, or of every table in that directory.
pub fn sst_dump(
    path: &Path,
    hex: bool,
    keys_only: bool,
    limit: Option<u64>,
) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    for table in tables_at(path)? {
        dump_table(&mut out, &table, hex, keys_only, limit)?;
    }
    Ok(())
}

fn dump_table(
    out: &mut impl Write,
    path: &Path,
    hex: bool,
    keys_only: bool,
    limit: Option<u64>,
) -> Result<(), BoxError> {
    use strata::internals::InternalIterator;
    let table = open_table(path)?;
    let p = table.properties();
    writeln!(out, "table: {}", path.display())?;
    writeln!(
        out,
        "properties: entries {} deletions {} raw keys {} B raw values {} B seq {}..{} \
         compression {} data blocks {} ({} B) index {} B filter {} B range-deletions {} \
         created {}",
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
        p.range_deletions,
        utc_datetime(p.creation_time)
    )?;
    writeln!(out, "comparator: {}", comparator_name(&p.comparator))?;
    writeln!(out, "checksum: {}", table.checksum_type().name())?;
    match table.compression_dictionary_bytes() {
        0 => writeln!(out, "compression-dictionary: none")?,
        n => writeln!(out, "compression-dictionary: {n} B")?,
    }
    if p.index_partitions > 0 {
        writeln!(
            out,
            "index: two-level, {} partitions, top level {} B",
            p.index_partitions, p.top_level_index_bytes
        )?;
    }
    if p.index_key_is_user_key > 0 {
        writeln!(out, "index: user keys")?;
    }
    if p.log_number > 0 {
        writeln!(out, "log number: {}", p.log_number)?;
    }
    if p.filter_partitions > 0 {
        writeln!(
            out,
            "filter: partitioned, {} partitions, top level {} B",
            p.filter_partitions, p.top_level_filter_bytes
        )?;
    }
    if p.data_block_hash_indexes > 0 {
        writeln!(
            out,
            "data-block-index: binary_and_hash, {} of {} data blocks carry a hash index",
            p.data_block_hash_indexes, p.data_blocks
        )?;
    }
    if !p.prefix_extractor.is_empty() {
        writeln!(out, "prefix-extractor: {}", p.prefix_extractor)?;
    }
    if let Some(f) = &p.column_family {
        let ttl = f.ttl.map(|t| format!(" ttl {t}s")).unwrap_or_default();
        writeln!(out, "column-family: {:?} (id {}){ttl}", f.name, f.id)?;
    }
    // The properties of the user's collectors, name and value printed safely.
    for (name, value) in &p.user_properties {
        writeln!(
            out,
            "user-property: {} => {}",
            show_bytes(name.as_bytes(), hex),
            show_bytes(value, hex)
        )?;
    }
    let mut it = table.iter();
    it.seek_to_first();
    let mut shown = 0;
    while it.valid() {
        if limit.is_some_and(|n| shown >= n) {
            writeln!(
                out,
                "... {} more entries (--limit {shown})",
                p.entries.saturating_sub(shown)
            )?;
            break;
        }
        let key = show_key(it.key(), hex);
        if keys_only {
            writeln!(out, "{key}")?;
        } else {
            writeln!(out, "{key} => {}", show_value(it.key(), it.value(), hex))?;
        }
        shown += 1;
        it.next();
    }
    it.status()?;
    // The range-deletion block, fragmented as readers use it: `begin-end#seq`, one a line.
    let tombstones = table.range_tombstones();
    if !tombstones.is_empty() {
        writeln!(out, "range tombstones:")?;
        for t in tombstones.tombstones() {
            let (b, e) = (show_bytes(&t.begin, hex), show_bytes(&t.end, hex));
            writeln!(out, "{b}-{e}#{}", t.seq)?;
        }
    }
    Ok(())
}

/// Reads and checks every block of the table at `path`, or of every table in that
/// directory.
pub fn sst_verify(path: &Path) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    for path in tables_at(path)? {
        let entries = open_table(&path)?.verify()?;
        writeln!(
            out,
            "{}: OK, {entries} entries, every block checksummed",
            path.display()
        )?;
    }
    Ok(())
}

/// The live manifest of `dir`: its path, its edits (with their offsets), and the column
/// families they build.
type Manifest = (PathBuf, Vec<(u64, VersionEdit)>, BTreeMap<u32, FamilyState>);

fn read_manifest(dir: &Path) -> Result<Manifest, BoxError> {
    let (_, path) = current_manifest(&PosixFs, dir)?;
    let edits = read_edits(&PosixFs, &path)?;
    let families = read_families(dir)?;
    Ok((path, edits, families))
}

/// Prints the edits of the live manifest and the version they build.
pub fn manifest_dump(dir: &Path) -> Result<(), BoxError> {
    let mut out = std::io::stdout().lock();
    let (path, edits, families) = read_manifest(dir)?;
    writeln!(out, "manifest: {}", path.display())?;
    for (at, edit) in edits {
        let mut parts = Vec::new();
        if let Some(c) = &edit.comparator {
            parts.push(format!("comparator {c}"));
        }
        parts.push(format!("family {}", edit.column_family));
        if let Some(name) = &edit.add_column_family {
            parts.push(format!("creates family {name:?}"));
        }
        if edit.drop_column_family {
            parts.push("drops the family".to_string());
        }
        if let Some(n) = edit.max_column_family {
            parts.push(format!("max family {n}"));
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
                "  add L{level} {} {} bytes, {} entries",
                show_file(f),
                f.size,
                f.entries
            )?;
            for r in &f.blob_refs {
                writeln!(
                    out,
                    "    refers to blob {:06}: {} records, {} bytes",
                    r.number, r.records, r.bytes
                )?;
            }
        }
        for (level, n) in &edit.deleted_files {
            writeln!(out, "  delete L{level} {n:06}")?;
        }
        for b in &edit.new_blob_files {
            writeln!(
                out,
                "  add blob {:06}.blob {} bytes, {} records, {} bytes of values",
                b.number, b.file_size, b.records, b.value_bytes
            )?;
        }
        for n in &edit.deleted_blob_files {
            writeln!(out, "  delete blob {n:06}")?;
        }
    }
    for (id, family) in &families {
        writeln!(
            out,
            "family {id} {:?} (log number {}, comparator {}):",
            family.name, family.log_number, family.comparator
        )?;
        for (level, files) in family.current.levels.iter().enumerate() {
            if !files.is_empty() {
                let bytes: u64 = files.iter().map(|f| f.size).sum();
                let shown: Vec<String> = files.iter().map(|f| show_file(f)).collect();
                writeln!(
                    out,
                    "  L{level}: {} files, {bytes} bytes: [{}]",
                    files.len(),
                    shown.join(", ")
                )?;
            }
        }
        for b in family.current.blob_files.values() {
            writeln!(
                out,
                "  blob {:06}.blob: {} records, {} bytes; garbage {} records, {} bytes",
                b.number, b.records, b.file_size, b.garbage_records, b.garbage_bytes
            )?;
        }
    }
    if let Some(note) = note_if_no_tables(dir, &families)? {
        writeln!(out, "  {note}")?;
    }
    Ok(())
}

/// [`no_tables`] for a database whose families have no tables.
fn note_if_no_tables(
    dir: &Path,
    families: &BTreeMap<u32, FamilyState>,
) -> Result<Option<String>, BoxError> {
    let empty = |v: &Version| v.levels.iter().all(|files| files.is_empty());
    if families.values().all(|f| empty(&f.current)) {
        Ok(Some(no_tables(dir)?))
    } else {
        Ok(None)
    }
}

/// Opens the database at `dir` with all its column families to flush it, with no background
/// compaction, so that the flush does not reshape the rest of the tree. Each family is opened
/// as its manifest records it: its prefix extractor, its ttl, and its comparator when that is
/// a built-in one (an open with any other is refused); a family of an application's
/// comparator is refused by name.
fn open_to_flush(dir: &Path) -> Result<strata::Db, BoxError> {
    let mut options = strata::Options::default();
    options.disable_auto_compactions = true;
    let opening = |e: strata::Error| format!("opening {}: {e}", dir.display());
    let families = families_as_recorded(dir, &mut options)?;
    Ok(strata::Db::open_cf(dir, options.clone(), families).map_err(opening)?)
}

/// `strata stats DIR`: the tree shape and `strata.stats` of a database, opened read-only, so
/// that looking changes no file and works beside a process that has it open for writing.
/// With `json`, the same figures as one JSON object ([`stats_json`]).
pub fn stats(dir: &Path, json: bool) -> Result<(), BoxError> {
    let note = match read_manifest(dir) {
        Ok((_, _, families)) => note_if_no_tables(dir, &families)?,
        Err(_) => None, // the open says what is wrong
    };
    let db = strata::Db::open_read_only(dir, strata::Options::default())
        .map_err(|e| format!("opening {}: {e}", dir.display()))?;
    let mut out = std::io::stdout().lock();
    if json {
        let value = stats_json(&db, note)?;
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        db.close()?;
        return Ok(());
    }
    let names = db.cf_names();
    if names.len() == 1 {
        writeln!(out, "tree: {}", db.tree_shape())?;
    } else {
        for name in &names {
            let cf = db.cf(name).ok_or("family vanished")?;
            writeln!(out, "family {name:?} tree: {}", db.tree_shape_cf(&cf)?)?;
        }
    }
    if let Some(note) = note {
        writeln!(out, "{note}")?;
    }
    write!(out, "{}", db.property("strata.stats").unwrap_or_default())?;
    for name in names.iter().skip(1) {
        let cf = db.cf(name).ok_or("family vanished")?;
        writeln!(out, "family {name:?}:")?;
        write!(
            out,
            "{}",
            db.property_cf(&cf, "strata.compaction-stats")
                .unwrap_or_default()
        )?;
    }
    db.close()?;
    Ok(())
}

/// The figures of `strata stats` as one JSON object: per family its tree shape and
/// compaction table; the database's counters once. `note` is the line `stats` prints for a
/// database without tables (`null` otherwise). Its keys are listed in the command's help
/// (`strata stats --help`); a test checks that the two name the same keys.
pub fn stats_json(db: &strata::Db, note: Option<String>) -> Result<serde_json::Value, BoxError> {
    use serde_json::json;
    use strata::fs::IoClass;
    let mut families = Vec::new();
    for name in db.cf_names() {
        let cf = db.cf(&name).ok_or("family vanished")?;
        let shape = db.tree_shape_cf(&cf)?;
        let s = db.stats_cf(&cf)?;
        let user = s.user_bytes_written.max(1) as f64;
        let levels: Vec<_> = shape
            .levels
            .iter()
            .enumerate()
            .map(|(level, l)| json!({"level": level, "files": l.files, "bytes": l.bytes}))
            .collect();
        // The rows of the text table: levels that hold files or had compactions.
        let compaction: Vec<_> = s
            .compactions
            .iter()
            .enumerate()
            .filter_map(|(level, c)| {
                let files = s.level_files.get(level).copied().unwrap_or(0);
                if files == 0 && c.count == 0 {
                    return None;
                }
                let written = match level {
                    0 => s.io.written(IoClass::Flush),
                    _ => c.bytes_written,
                };
                Some(json!({
                    "level": level,
                    "files": files,
                    "bytes": s.level_bytes.get(level).copied().unwrap_or(0),
                    "score": s.level_scores.get(level).copied().unwrap_or(0.0),
                    "count": c.count,
                    "moves": c.moves,
                    "read_bytes": c.bytes_read,
                    "write_bytes": written,
                    "write_amp": written as f64 / user,
                    "seconds": c.micros as f64 / 1e6,
                }))
            })
            .collect();
        families.push(json!({
            "name": name,
            "tree": {
                "active_memtable_entries": shape.active_memtable_entries,
                "active_memtable_bytes": shape.active_memtable_bytes,
                "immutable_memtables": shape.immutable_memtables,
                "immutable_memtable_bytes": shape.immutable_memtable_bytes,
                "levels": levels,
            },
            "compaction": compaction,
            "blob_files": {
                "files": s.blob_files,
                "bytes": s.blob_file_bytes,
                "garbage_bytes": s.blob_garbage_bytes,
            },
        }));
    }
    let s = db.stats();
    let write_amp = match s.user_bytes_written {
        0 => 0.0,
        user => s.io.total_written() as f64 / user as f64,
    };
    let stall = |count: u64, micros: u64| json!({"count": count, "micros": micros});
    let cache = |(hits, misses): (u64, u64)| json!({"hits": hits, "misses": misses});
    Ok(json!({
        "families": families,
        "writes": {
            "batches": s.batches,
            "keys": s.keys_written,
            "user_bytes": s.user_bytes_written,
            "groups": s.write_groups,
            "wal_syncs": s.wal_syncs,
            "wal_bytes": s.io.written(IoClass::Wal),
            "write_amp": write_amp,
        },
        "reads": {"gets": s.gets, "found": s.gets_found},
        "memtables": {
            "active_entries": s.active_memtable_entries,
            "active_bytes": s.active_memtable_bytes,
            "immutable": s.immutable_memtables,
            "immutable_bytes": s.immutable_memtable_bytes,
            "switches": s.memtable_switches,
        },
        "snapshots": {"live": s.live_snapshots, "oldest": s.oldest_snapshot},
        "last_sequence": s.last_sequence,
        "flushes": s.flushes,
        "stalls": {
            "memtable": stall(s.write_stalls, s.stall_micros),
            "l0_slowdown": stall(s.l0_slowdowns, s.l0_slowdown_micros),
            "l0_stop": stall(s.l0_stops, s.l0_stop_micros),
            "pending_slowdown": stall(s.pending_slowdowns, s.pending_slowdown_micros),
            "pending_stop": stall(s.pending_stops, s.pending_stop_micros),
        },
        "compaction": {
            "pending_bytes": s.pending_compaction_bytes,
            "running": s.compactions_running,
            "skipped_for_space": s.compactions_skipped_for_space,
            "subcompactions": s.subcompactions,
        },
        "tables": {"open": s.open_tables, "opens": s.table_opens},
        "bloom": {"checks": s.bloom_checks, "negatives": s.bloom_negatives},
        "block_cache": {
            "data": cache(s.block_cache_by_kind[0]),
            "index": cache(s.block_cache_by_kind[1]),
            "filter": cache(s.block_cache_by_kind[2]),
        },
        "table_bytes_read": s.table_bytes_read,
        "blob_reads": {
            "values": s.blob_reads,
            "bytes": s.blob_bytes_read,
            "cache_hits": s.blob_cache_hits,
        },
        "note": note,
    }))
}

/// Options whose default-family fields are what the default family's tables record: their
/// comparator (a built-in one; bytewise if they record an application's, which repair then
/// refuses by name) and ttl. Without such a table, the defaults. A table whose properties
/// cannot be read is skipped: repair sets it aside. A directory that cannot be listed (or a
/// file that goes while it is) leaves the defaults too: repair, which lists it again, says
/// what is wrong, naming the path.
fn default_family_as_recorded(dir: &Path) -> Result<strata::Options, BoxError> {
    let mut options = strata::Options::default();
    let Ok(tables) = numbered_files(dir, ".sst") else {
        return Ok(options);
    };
    for table in tables.iter().rev() {
        let Ok(file) = PosixFs.open_random(&table.path) else {
            continue;
        };
        let Ok(props) = Table::read_properties(file.as_ref(), &table.path) else {
            continue;
        };
        if props.column_family.as_ref().is_some_and(|f| f.id != 0) {
            continue;
        }
        if let Some(comparator) = builtin_comparator(&props.comparator) {
            options.comparator = comparator;
        }
        let ttl = props.column_family.and_then(|f| f.ttl);
        options.ttl = ttl.map(std::time::Duration::from_secs);
        break;
    }
    Ok(options)
}

/// How `strata repair` ended, as its exit status says: 0 when every table, blob file and WAL
/// record was kept, 2 when the database was repaired but something could not be kept
/// (tables or blob files moved to `lost/`, a WAL's bad tail, updates of a family whose name
/// was lost);
/// 1 (an error) when it was refused or failed.
pub enum Repaired {
    /// Everything kept.
    Whole,
    /// Repaired, with losses the report lists.
    WithLosses,
}

/// `strata repair DIR`: rebuilds the manifest from the tables and WALs (`strata::repair`)
/// and prints the report. The default family is repaired in the order and with the ttl its
/// tables record ([`default_family_as_recorded`]); the other families take theirs from
/// their tables in any case.
pub fn repair(dir: &Path) -> Result<Repaired, BoxError> {
    let options = default_family_as_recorded(dir)?;
    let report =
        strata::repair(dir, &options).map_err(|e| format!("repairing {}: {e}", dir.display()))?;
    let mut out = std::io::stdout().lock();
    let numbers = |ns: &[u64]| {
        ns.iter()
            .map(|n| format!("{n:06}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    writeln!(
        out,
        "repaired {}: MANIFEST-{:06}, last sequence {}, {} entries",
        dir.display(),
        report.manifest_number,
        report.last_sequence,
        report.entries
    )?;
    let families: Vec<&str> = report.families.values().map(String::as_str).collect();
    writeln!(out, "column families: {}", families.join(", "))?;
    writeln!(
        out,
        "tables kept: {} [{}], all in level 0",
        report.tables_kept.len(),
        numbers(&report.tables_kept)
    )?;
    if !report.blob_files_kept.is_empty() {
        writeln!(
            out,
            "blob files kept: {} [{}]",
            report.blob_files_kept.len(),
            numbers(&report.blob_files_kept)
        )?;
    }
    writeln!(
        out,
        "WALs converted: {} [{}] into {} tables [{}]: {} updates written, {} already in \
         tables",
        report.wals_converted.len(),
        numbers(&report.wals_converted),
        report.tables_from_wals.len(),
        numbers(&report.tables_from_wals),
        report.wal_entries,
        report.wal_entries_in_tables
    )?;
    for bad in &report.wal_corruptions {
        writeln!(out, "WAL damage, the rest of that WAL dropped: {bad}")?;
    }
    if report.wal_entries_dropped > 0 {
        writeln!(
            out,
            "WAL updates dropped: {} of column family ids {:?}, which no table or readable \
             manifest names",
            report.wal_entries_dropped, report.unknown_families
        )?;
    }
    writeln!(
        out,
        "tables moved to {}/: {}",
        strata::LOST_DIR,
        report.tables_lost.len()
    )?;
    for (number, why) in &report.tables_lost {
        writeln!(out, "  {number:06}.sst: {why}")?;
    }
    if !report.blob_files_lost.is_empty() {
        writeln!(
            out,
            "blob files moved to {}/: {}",
            strata::LOST_DIR,
            report.blob_files_lost.len()
        )?;
        for (number, why) in &report.blob_files_lost {
            writeln!(out, "  {number:06}.blob: {why}")?;
        }
    }
    if !report.families_merged.is_empty() {
        writeln!(
            out,
            "merged into one table each (tables overlapping in keys and sequence numbers, \
             which level 0 would read in the wrong order): {} ({} tables)",
            report.families_merged.join(", "),
            report.tables_merged.len()
        )?;
    }
    for path in &report.moved_to_lost {
        writeln!(out, "moved: {}", path.display())?;
    }
    // A blob file set aside counts even when no kept table refers to it: one of the tables
    // set aside may have.
    let lossy = !report.tables_lost.is_empty()
        || !report.blob_files_lost.is_empty()
        || !report.wal_corruptions.is_empty()
        || report.wal_entries_dropped > 0;
    Ok(if lossy {
        Repaired::WithLosses
    } else {
        Repaired::Whole
    })
}

/// `strata flush DIR`: writes what the database's WALs hold to tables.
pub fn flush(dir: &Path) -> Result<(), BoxError> {
    let db = open_to_flush(dir)?;
    db.flush()?;
    writeln!(
        std::io::stdout().lock(),
        "flushed; tree: {}",
        db.tree_shape()
    )?;
    db.close()?;
    Ok(())
}

/// `strata checkpoint DIR OUT`: an openable copy of the database in `out`.
pub fn checkpoint(dir: &Path, out: &Path) -> Result<(), BoxError> {
    let db = open_to_flush(dir)?;
    db.checkpoint(out).map_err(|e| {
        format!(
            "checkpoint of {} into {}: {e}",
            dir.display(),
            out.display()
        )
    })?;
    writeln!(
        std::io::stdout().lock(),
        "checkpoint of {} made in {}",
        dir.display(),
        out.display()
    )?;
    db.close()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times_are_rfc_3339_utc() {
        for (secs, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (946_684_799, "1999-12-31T23:59:59Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_234_567_890, "2009-02-13T23:31:30Z"),
            (1_700_000_000, "2023-11-14T22:13:20Z"),
            (1_709_251_199, "2024-02-29T23:59:59Z"),
            (4_102_444_800, "2100-01-01T00:00:00Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
        ] {
            assert_eq!(utc_datetime(secs), text, "{secs}");
        }
    }

    #[test]
    fn keys_show_as_user_key_seq_kind_with_escapes() {
        let key = |user: &[u8], seq: u64, kind: u8| {
            let mut k = user.to_vec();
            k.extend_from_slice(&((seq << 8) | u64::from(kind)).to_le_bytes());
            k
        };
        for (k, hex, text) in [
            (key(b"apple", 7, 1), false, "apple#7,PUT"),
            (key(b"apple", 7, 0), false, "apple#7,DEL"),
            (key(b"apple", 7, 9), false, "apple#7,KIND9"),
            (key(b"a\x00\\", 1, 1), false, "a\\x00\\x5c#1,PUT"),
            (key(b"ab", 2, 1), true, "0x6162#2,PUT"),
            (b"short".to_vec(), false, "short"),
        ] {
            assert_eq!(show_key(&k, hex), text);
        }
    }
}
