//! `strata`: the command-line tools of the Strata storage engine.
//!
//! - `strata bench`: a benchmark that takes RocksDB `db_bench`'s flags and prints its result
//!   lines, plus the figures that explain them.
//! - `strata stress [--crash]`: random operations checked against an expected state, and
//!   kills at random moments followed by verification; `strata crashtest`: stress children
//!   with options drawn afresh, ended by kills, power cuts and transient faults.
//! - `strata sst dump|verify FILE|DIR`, `strata blob dump|verify FILE|DIR...`,
//!   `strata manifest dump DIR`, `strata stats DIR`: inspection; `strata flush DIR`: write a database's memtables to tables;
//!   `strata checkpoint DIR OUT`: an openable copy of a database; `strata repair DIR`: a
//!   new manifest rebuilt from the tables and WALs; `strata backup ...`:
//!   incremental backups of a database and their restores.
//! - `strata get|put|delete|scan|dump|load`: reading and writing data (RocksDB's `ldb`).
//! - `strata sst write OUT.sst`, `strata ingest DIR FILE.sst...`: bulk loading through
//!   tables built outside the database.
//! - `strata server`, `strata cluster up|down|bench`, `strata client`: a replicated keyspace
//!   on Raft (the `strata-raft` crate): one node over HTTP, a local cluster and its
//!   benchmark against etcd, a client.

mod admin;
mod bench;
mod cli;
mod crashtest;
mod engine_flags;
mod sim;
mod stress;

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
    /// Incremental backups of a database: create, list, verify, restore, delete, purge.
    Backup(admin::backup::BackupArgs),
    /// Run db_bench-style benchmarks (same flags and result lines as RocksDB's db_bench).
    Bench(Box<bench::BenchArgs>),
    /// Random operations on many threads checked against an expected state; with --crash,
    /// kill the process at random moments and verify what recovery brings back.
    Stress(Box<stress::StressArgs>),
    /// db_crashtest: `strata stress --crash` children with options drawn afresh for each,
    /// ended by kills, power cuts and transient faults; prints each child's command line.
    Crashtest(Box<crashtest::CrashtestArgs>),
    /// Simulate compaction (the real pickers on a simulated tree) and print its write-amp.
    Sim(Box<sim::SimArgs>),
    /// Run one node of a replicated keyspace (Raft) over HTTP.
    Server(Box<strata_raft::cli::ServerArgs>),
    /// Start (`up`) or stop (`down`) a replicated cluster on this machine's loopback ports, or
    /// benchmark one (`bench`, against a Strata or an etcd cluster).
    Cluster(strata_raft::cli::ClusterArgs),
    /// Talk to a replicated cluster: get, put, delete, scan, txn, status.
    Client(strata_raft::cli::ClientArgs),
    // The commands on a database and its files (`strata sst`, `strata get`, ...).
    #[command(flatten)]
    Admin(admin::Command),
}

/// With the `jemalloc` feature the process allocates with jemalloc, at its default options:
/// its size classes and per-thread caches serve the block cache's many block-sized
/// allocations better than the C library's malloc. Its heap is not put on transparent huge
/// pages: on the virtual machines we measure on, a fresh huge page costs milliseconds to
/// fault in, so a cold block cache filling up (a first scan, the reads after a compaction)
/// ran 2-4x slower than on 4 KiB pages, while reads from a warm cache gained nothing
/// measurable (`docs/benchmarks.md`). The library itself leaves the allocator to the
/// application, as any Rust library does.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Backup(args) => admin::backup::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Stress(args) => match stress::run(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Crashtest(args) => match crashtest::run(&args) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Sim(args) => sim::run(&args),
        Command::Server(args) => strata_raft::cli::run_server(&args).map_err(Into::into),
        Command::Cluster(args) => strata_raft::cli::run_cluster(&args).map_err(Into::into),
        Command::Client(args) => strata_raft::cli::run_client(&args).map_err(Into::into),
        Command::Admin(command) => match admin::run(command) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
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
