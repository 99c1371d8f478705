//! `strata`: the command-line tools of the Strata storage engine.
//!
//! - `strata bench`: a benchmark that takes RocksDB `db_bench`'s flags and prints its result
//!   lines, plus the figures that explain them.

mod bench;

use std::process::ExitCode;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(args) => bench::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("strata: {e}");
            ExitCode::FAILURE
        }
    }
}
