//! `strata`: the command-line tools of the Strata storage engine.
//!
//! - `strata bench`: a benchmark that takes RocksDB `db_bench`'s flags and prints its result
//!   lines, plus the figures that explain them.
//! - `strata stress [--crash]`: random operations checked against an expected state, and
//!   kills at random moments followed by verification.
//! - `strata sst dump|verify FILE|DIR`, `strata manifest dump DIR`, `strata stats DIR`:
//!   inspection; `strata flush DIR`: write a database's memtables to tables;
//!   `strata checkpoint DIR OUT`: an openable copy of a database, made beside its writer.

mod admin;
mod bench;
mod db_dir;
mod engine_flags;
mod sim;
mod stress;

use std::process::ExitCode;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "strata",
    version,
    about = "Tools for the Strata storage engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run db_bench-style benchmarks (same flags and result lines as RocksDB's db_bench).
    Bench(Box<bench::BenchArgs>),
    /// Random operations on many threads checked against an expected state; with --crash,
    /// kill the process at random moments and verify what recovery brings back.
    Stress(Box<stress::StressArgs>),
    /// Simulate compaction (the real pickers on a simulated tree) and print its write-amp.
    Sim(Box<sim::SimArgs>),
    /// Inspect a table file.
    Sst {
        #[command(subcommand)]
        command: SstCommand,
    },
    /// Inspect a database's manifest.
    Manifest {
        #[command(subcommand)]
        command: ManifestCommand,
    },
    /// Open a database (recovering its WALs, as any open does) and print its tree shape,
    /// counters and per-level compaction table.
    Stats {
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
}

#[derive(Subcommand)]
enum SstCommand {
    /// Print a table's properties and entries (`key#seq,KIND => value`; bytes other than
    /// printable ASCII as \xNN).
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
}

#[derive(Subcommand)]
enum ManifestCommand {
    /// Print the version edits of the live manifest and the files they make up.
    Dump {
        /// The database directory.
        dir: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench::run(&args).map_err(|e| e as Box<dyn std::error::Error>),
        Command::Stress(args) => match stress::run(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Sim(args) => sim::run(&args),
        Command::Sst { command } => match command {
            SstCommand::Dump {
                path,
                hex,
                keys_only,
                limit,
            } => admin::sst_dump(&path, hex, keys_only, limit),
            SstCommand::Verify { path } => admin::sst_verify(&path),
        },
        Command::Manifest {
            command: ManifestCommand::Dump { dir },
        } => admin::manifest_dump(&dir),
        Command::Stats { dir } => admin::stats(&dir),
        Command::Flush { dir } => admin::flush(&dir),
        Command::Checkpoint { dir, out } => admin::checkpoint(&dir, &out),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`strata sst dump F | head`) is the reader's choice, not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("strata: {e}");
            ExitCode::FAILURE
        }
    }
}
