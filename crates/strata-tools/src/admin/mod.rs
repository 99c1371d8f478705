//! The commands on a database and its files, in the manner of RocksDB's `sst_dump` and
//! `ldb`: inspection (`sst`, `blob`, `manifest`, `stats`), upkeep (`repair`, `flush`,
//! `checkpoint`, `backup`), data in and out (`get`, `put`, `delete`, `scan`, `dump`, `load`)
//! and bulk loading (`sst write`, `ingest`).
//!
//! - `inspect`: `sst`, `manifest`, `stats`, `repair`, `flush`, `checkpoint`.
//! - `blob`: `blob dump|verify`.
//! - `kv`: `get`, `put`, `delete`, `scan`, `dump`, `load`.
//! - `bulk`: `sst write`, `ingest`.
//! - `backup`: `backup create|list|verify|restore|delete|purge`.
//! - `recorded`: a database or table opened as its files record it (comparators, families).
//! - `wal`: `wal dump`.
//! - `db_dir`: the files of a database directory, by name (also used by the bench).
//!
//! [`Command`] is flattened into the binary's own list of subcommands: a new admin command is
//! a variant here and an arm of [`run`].

pub mod backup;
mod blob;
mod bulk;
pub mod db_dir;
mod inspect;
mod kv;
mod recorded;
mod wal;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::cli::BoxError;

/// The admin subcommands of `strata`.
#[derive(Subcommand)]
pub enum Command {
    /// Inspect a table file, or write one for `strata ingest`.
    Sst {
        #[command(subcommand)]
        command: SstCommand,
    },
    /// Inspect a blob file (values kept apart from the tree with --enable_blob_files).
    Blob {
        #[command(subcommand)]
        command: BlobCommand,
    },
    /// Inspect WAL files.
    Wal {
        #[command(subcommand)]
        command: WalCommand,
    },
    /// Inspect a database's manifest.
    Manifest {
        #[command(subcommand)]
        command: ManifestCommand,
    },
    /// Open a database read-only (replaying its WALs in memory, writing nothing) and print
    /// its tree shape, counters and per-level compaction table.
    #[command(after_help = concat!(
        "With --json the output is one JSON object with these keys (stable: keys may be \
         added, never renamed or removed; sizes in bytes, times in seconds or microseconds \
         as named):\n",
        "{\"families\": [{\"name\", \"tree\": {\"active_memtable_entries\", \
         \"active_memtable_bytes\", \"immutable_memtables\", \"immutable_memtable_bytes\", \
         \"levels\": [{\"level\", \"files\", \"bytes\"}]}, \"compaction\": [{\"level\", \
         \"files\", \"bytes\", \"score\", \"count\", \"moves\", \"read_bytes\", \
         \"write_bytes\", \"write_amp\", \"seconds\"}], \"blob_files\": {\"files\", \
         \"bytes\", \"garbage_bytes\"}}], \"writes\": {\"batches\", \
         \"keys\", \"user_bytes\", \"groups\", \"wal_syncs\", \"wal_bytes\", \"write_amp\"}, \
         \"reads\": {\"gets\", \"found\"}, \"memtables\": {\"active_entries\", \
         \"active_bytes\", \"immutable\", \"immutable_bytes\", \"switches\"}, \
         \"snapshots\": {\"live\", \"oldest\"}, \"last_sequence\", \"flushes\", \
         \"stalls\": {\"memtable\", \"l0_slowdown\", \"l0_stop\", \"pending_slowdown\", \
         \"pending_stop\": each {\"count\", \"micros\"}}, \"compaction\": \
         {\"pending_bytes\", \"running\", \"skipped_for_space\", \"subcompactions\"}, \
         \"tables\": {\"open\", \"opens\"}, \"bloom\": {\"checks\", \"negatives\"}, \
         \"block_cache\": {\"data\", \"index\", \"filter\": each {\"hits\", \"misses\"}}, \
         \"table_bytes_read\", \"blob_reads\": {\"values\", \"bytes\", \"cache_hits\"}, \
         \"note\" (why there are no tables, or null)}"
    ))]
    Stats {
        /// The database directory.
        dir: PathBuf,
        /// Print the figures as one JSON object (keys listed below).
        #[arg(long)]
        json: bool,
    },
    /// Rebuild a lost or damaged manifest from the tables and WALs in DIR (RocksDB's
    /// `ldb repair`): every readable table goes to level 0 of the column family its
    /// properties name, each WAL becomes tables (up to a bad record), unreadable tables,
    /// the WALs and the old manifests move to DIR/lost/. Refused while the database is open.
    #[command(
        after_help = "Exit status: 0 when repaired with every table, blob file and WAL \
        record kept; 2 when repaired but something could not be kept (a table or blob file \
        moved to lost/, a WAL's damaged tail, WAL updates of a column family whose name only \
        the lost manifest held); 1 when refused (the database is open, not a database) or failed."
    )]
    Repair {
        /// The database directory.
        dir: PathBuf,
    },
    /// Open a database and write what its WALs hold to tables (closing a database does not:
    /// a small one may have no table until a memtable fills).
    Flush {
        /// The database directory.
        dir: PathBuf,
    },
    /// Make an openable copy of a database in OUT (which must not exist), its tables hard
    /// links to the database's. Needs the database's lock: use it on a database no process
    /// has open (a program checkpoints its own open database with `Db::checkpoint`).
    Checkpoint {
        /// The database directory.
        dir: PathBuf,
        /// Where the copy goes.
        out: PathBuf,
    },
    /// Print the value of KEY (exit status 1 if it is absent). Opens the database read-only.
    Get {
        dir: PathBuf,
        key: String,
        /// Column family (default: the default family).
        #[arg(long)]
        cf: Option<String>,
        /// KEY is hex, and the value is printed in hex.
        #[arg(long)]
        hex: bool,
        /// Open the database as a secondary instance keeping its own files (its LOG) in
        /// this directory: for a database another process is writing.
        #[arg(long, value_name = "DIR")]
        secondary: Option<PathBuf>,
    },
    /// Set KEY to VALUE (a synced write).
    Put {
        dir: PathBuf,
        key: String,
        value: String,
        #[arg(long)]
        cf: Option<String>,
        /// KEY and VALUE are hex.
        #[arg(long)]
        hex: bool,
    },
    /// Remove KEY (a synced write).
    Delete {
        dir: PathBuf,
        key: String,
        #[arg(long)]
        cf: Option<String>,
        /// KEY is hex.
        #[arg(long)]
        hex: bool,
    },
    /// Print the pairs in [--from, --to), one a line. Opens the database read-only.
    Scan {
        dir: PathBuf,
        #[arg(long)]
        cf: Option<String>,
        /// First key (inclusive).
        #[arg(long)]
        from: Option<String>,
        /// End key (exclusive).
        #[arg(long)]
        to: Option<String>,
        /// At most this many pairs.
        #[arg(long)]
        limit: Option<u64>,
        /// From the last key down.
        #[arg(long)]
        reverse: bool,
        /// Keys given and printed in hex (`hexkey hexvalue`).
        #[arg(long, conflicts_with = "json")]
        hex: bool,
        /// Print the dump format (a JSON object a line).
        #[arg(long)]
        json: bool,
        /// Open the database as a secondary instance keeping its own files (its LOG) in
        /// this directory: for a database another process is writing.
        #[arg(long, value_name = "DIR")]
        secondary: Option<PathBuf>,
    },
    /// Print every pair (of every family, or of --cf) as JSON lines that `strata load` reads.
    Dump {
        dir: PathBuf,
        #[arg(long)]
        cf: Option<String>,
    },
    /// Write the JSON lines of `strata dump` from standard input (creating the database and
    /// its families if missing).
    Load { dir: PathBuf },
    /// Add tables written by `strata sst write` (or `SstWriter`) to a database, atomically:
    /// their keys read as newer than everything written before.
    Ingest {
        dir: PathBuf,
        /// The tables, none overlapping another.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Column family (default: the default family).
        #[arg(long)]
        cf: Option<String>,
        /// Move the files in (hard links; the sources are removed once ingested) instead of
        /// copying them.
        #[arg(long = "move")]
        move_files: bool,
    },
}

#[derive(Subcommand)]
pub enum SstCommand {
    /// Print a table's properties and entries (`key#seq,KIND => value`; bytes other than
    /// printable ASCII as \xNN; a BLOB entry's value as its reference,
    /// `blob NNNNNN at OFFSET (SIZE bytes)`, which `strata blob dump` shows).
    Dump {
        /// The table file, or a database directory (every table in it).
        path: PathBuf,
        /// Print keys and values as hex.
        #[arg(long)]
        hex: bool,
        /// Print keys only.
        #[arg(long)]
        keys_only: bool,
        /// Print at most N entries of each table (default: all of them, as sst_dump's
        /// --read_num; 0 prints the properties only).
        #[arg(long, value_name = "N", visible_alias = "read_num")]
        limit: Option<u64>,
    },
    /// Read and checksum every block of a table.
    Verify {
        /// The table file, or a database directory (every table in it).
        path: PathBuf,
    },
    /// Write a table for `strata ingest` from a sorted dump: the JSON lines of `strata dump`
    /// (one family's), or with --hex the lines of `strata scan --hex`.
    Write {
        /// The table to write (replaced if it exists).
        out: PathBuf,
        /// Read this file instead of standard input.
        #[arg(long)]
        input: Option<PathBuf>,
        /// The column family whose records are written (default: the default family).
        #[arg(long)]
        cf: Option<String>,
        /// Input lines are `hexkey hexvalue`.
        #[arg(long)]
        hex: bool,
        /// The key order of the table: leveldb.BytewiseComparator (the default) or
        /// rocksdb.ReverseBytewiseComparator; that of the family it will be ingested into.
        #[arg(long)]
        comparator: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum BlobCommand {
    /// Print a blob file's header, its records (`blob NNNNNN at OFFSET (SIZE bytes): key K,
    /// value N bytes: V`, as `strata sst dump` shows a table's reference to one) and its
    /// footer; every record is checked as it is read.
    Dump {
        /// Blob files, or database directories (every NNNNNN.blob in them).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print keys and values as hex.
        #[arg(long)]
        hex: bool,
        /// Print whole values (default: the first 32 bytes of each).
        #[arg(long)]
        values: bool,
    },
    /// Read and checksum every record of blob files, and check them against the footer.
    Verify {
        /// Blob files, or database directories (every NNNNNN.blob in them).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

#[derive(Subcommand)]
pub enum WalCommand {
    /// Print the records of WAL files (as RocksDB's `ldb dump_wal`): each batch's first
    /// sequence number, count, size and offset, then its updates (`PUT(cf) key => value`,
    /// `DELETE(cf) key`, ...), bytes other than printable ASCII as \xNN.
    Dump {
        /// A WAL file, or a database directory (its WALs and those of its archive/).
        path: PathBuf,
        /// Print keys and values as hex.
        #[arg(long)]
        hex: bool,
    },
}

#[derive(Subcommand)]
pub enum ManifestCommand {
    /// Print the version edits of the live manifest and the files they make up.
    Dump {
        /// The database directory.
        dir: PathBuf,
    },
}

/// Runs an admin command; the exit status of a command that ended, or its error.
pub fn run(command: Command) -> Result<ExitCode, BoxError> {
    let result = match command {
        Command::Sst { command } => match command {
            SstCommand::Dump {
                path,
                hex,
                keys_only,
                limit,
            } => inspect::sst_dump(&path, hex, keys_only, limit),
            SstCommand::Verify { path } => inspect::sst_verify(&path),
            SstCommand::Write {
                out,
                input,
                cf,
                hex,
                comparator,
            } => bulk::sst_write(&bulk::SstWriteArgs {
                out: &out,
                input: input.as_deref(),
                cf: cf.as_deref(),
                hex,
                comparator: comparator.as_deref(),
            })
            .and_then(|n| {
                use std::io::Write;
                writeln!(std::io::stderr(), "wrote {n} entries to {}", out.display())
                    .map_err(Into::into)
            }),
        },
        Command::Blob { command } => match command {
            BlobCommand::Dump { paths, hex, values } => {
                blob::dump(&paths, blob::DumpOptions { hex, values })
            }
            BlobCommand::Verify { paths } => blob::verify(&paths),
        },
        Command::Wal {
            command: WalCommand::Dump { path, hex },
        } => wal::dump(&path, hex),
        Command::Manifest {
            command: ManifestCommand::Dump { dir },
        } => inspect::manifest_dump(&dir),
        Command::Stats { dir, json } => inspect::stats(&dir, json),
        Command::Repair { dir } => match inspect::repair(&dir) {
            Ok(inspect::Repaired::Whole) => Ok(()),
            Ok(inspect::Repaired::WithLosses) => return Ok(ExitCode::from(2)),
            Err(e) => Err(e),
        },
        Command::Flush { dir } => inspect::flush(&dir),
        Command::Checkpoint { dir, out } => inspect::checkpoint(&dir, &out),
        Command::Get {
            dir,
            key,
            cf,
            hex,
            secondary,
        } => match kv::get(&dir, cf.as_deref(), &key, hex, secondary.as_deref()) {
            Ok(true) => Ok(()),
            Ok(false) => return Ok(ExitCode::from(1)),
            Err(e) => Err(e),
        },
        Command::Put {
            dir,
            key,
            value,
            cf,
            hex,
        } => kv::put(&dir, cf.as_deref(), &key, &value, hex),
        Command::Delete { dir, key, cf, hex } => kv::delete(&dir, cf.as_deref(), &key, hex),
        Command::Scan {
            dir,
            cf,
            from,
            to,
            limit,
            reverse,
            hex,
            json,
            secondary,
        } => kv::scan(
            &dir,
            &kv::ScanArgs {
                cf: cf.as_deref(),
                from: from.as_deref(),
                to: to.as_deref(),
                limit,
                reverse,
                hex,
                format: match (hex, json) {
                    (_, true) => kv::Format::Json,
                    (true, _) => kv::Format::Hex,
                    _ => kv::Format::Text,
                },
                secondary: secondary.as_deref(),
            },
        ),
        Command::Dump { dir, cf } => kv::dump(&dir, cf.as_deref()),
        Command::Ingest {
            dir,
            files,
            cf,
            move_files,
        } => bulk::ingest(&dir, &files, cf.as_deref(), move_files),
        Command::Load { dir } => kv::load(&dir, std::io::stdin().lock()).and_then(|n| {
            use std::io::Write;
            writeln!(std::io::stderr(), "loaded {n} records").map_err(Into::into)
        }),
    };
    result.map(|()| ExitCode::SUCCESS)
}
