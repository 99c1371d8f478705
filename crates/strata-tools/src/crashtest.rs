//! `strata crashtest`: RocksDB's db_crashtest in spirit. It runs `strata stress --crash`
//! children one after another on one database, each with options drawn afresh (compaction
//! style, compression, block and index layout, filters, blob files, direct IO and mmap reads,
//! memtable and level sizes, background jobs, sync, ...) and one of three ways to end its
//! runs: kills (SIGKILL), power cuts (`--sync_fault_injection`, with `--disable_wal` now and
//! then) and kills under transient faults (read, write, sync, metadata errors and ENOSPC).
//! Each child's command line is printed before it starts, so a failure can be replayed; the
//! last lines sum up what the children did.
//!
//! What stays the same across children, because the expected state depends on it: the key
//! count, the threads and the column families (one or three, drawn once from the seed), and
//! the prefix extractor (none, or 7 or 8 bytes: the database records it).
//!
//! The operation mix is drawn too (`--ops`, printed in each child's command line): the
//! weights of iterators (with bounds, prefix modes, readahead and snapshots drawn per walk),
//! flushes, compactions, WAL syncs, checkpoints, column families created and dropped, and
//! ingested tables.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use strata::internals::Rng;

use crate::cli::BoxError;

/// `strata crashtest` flags.
#[derive(Args, Debug, Clone)]
#[command(rename_all = "snake_case")]
pub struct CrashtestArgs {
    /// Database directory (created if missing; kept across the children).
    #[arg(long)]
    pub db: PathBuf,

    /// Seconds to run in all.
    #[arg(long, default_value_t = 300)]
    pub duration: u64,

    /// Seed of the draws (0: from the clock; printed).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Seconds each child runs its crash loop (the last one gets what is left).
    #[arg(long, default_value_t = 30)]
    pub child_duration: u64,

    /// Size of the key space.
    #[arg(long, default_value_t = 5000)]
    pub keys: u64,

    /// Worker threads of each child.
    #[arg(long, default_value_t = 4)]
    pub threads: u64,
}

/// How a child's runs end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Kill,
    PowerCut,
    Faults,
}

/// The flags of one child, drawn from `rng`.
fn draw(rng: &mut Rng, mode: Mode, families: usize, direct_io: bool) -> Vec<String> {
    let mut f = Vec::new();
    pick(&mut f, rng, "compaction_style", &["0", "1"]);
    pick(
        &mut f,
        rng,
        "compression_type",
        &["none", "snappy", "lz4", "zstd"],
    );
    pick(&mut f, rng, "block_size", &["256", "1024", "4096", "16384"]);
    pick(&mut f, rng, "block_restart_interval", &["1", "4", "16"]);
    pick(&mut f, rng, "block_size_deviation", &["0", "10"]);
    pick(&mut f, rng, "read_triggered_compaction", &["0", "1"]);
    pick(&mut f, rng, "warm_compaction_outputs", &["0", "1"]);
    pick(
        &mut f,
        rng,
        "pin_l0_filter_and_index_blocks_in_cache",
        &["0", "1"],
    );
    pick(&mut f, rng, "bloom_bits", &["0", "4", "10"]);
    pick(&mut f, rng, "partition_index_and_filters", &["0", "1"]);
    pick(&mut f, rng, "partition_index", &["0", "1"]);
    pick(&mut f, rng, "metadata_block_size", &["256", "4096"]);
    pick(&mut f, rng, "data_block_index_type", &["0", "1"]);
    pick(&mut f, rng, "cache_index_and_filter_blocks", &["0", "1"]);
    pick(&mut f, rng, "cache_size", &["1048576", "8388608"]);
    let blobs = pick(&mut f, rng, "enable_blob_files", &["0", "0", "1"]);
    if blobs == "1" {
        pick(&mut f, rng, "min_blob_size", &["16", "64", "256"]);
        pick(&mut f, rng, "blob_file_size", &["4096", "65536"]);
        pick(&mut f, rng, "blob_separation_at_write", &["0", "1"]);
        pick(&mut f, rng, "enable_blob_garbage_collection", &["0", "1"]);
        pick(
            &mut f,
            rng,
            "blob_garbage_collection_age_cutoff",
            &["0.25", "0.5", "1.0"],
        );
        pick(
            &mut f,
            rng,
            "blob_garbage_collection_force_threshold",
            &["0.5", "1.0"],
        );
    }
    // FaultFs has no direct IO; mmap and direct reads exclude each other.
    let direct = direct_io && mode == Mode::Kill && rng.one_in(4);
    if direct {
        pick(&mut f, rng, "use_direct_reads", &["0", "1"]);
        pick(
            &mut f,
            rng,
            "use_direct_io_for_flush_and_compaction",
            &["0", "1"],
        );
    } else {
        pick(&mut f, rng, "mmap_read", &["0", "0", "1"]);
    }
    pick(
        &mut f,
        rng,
        "write_buffer_size",
        &["16384", "65536", "262144"],
    );
    pick(&mut f, rng, "max_write_buffer_number", &["2", "3", "4"]);
    pick(&mut f, rng, "avoid_flush_during_recovery", &["0", "1"]);
    let trigger: u64 = pick(
        &mut f,
        rng,
        "level0_file_num_compaction_trigger",
        &["2", "4", "8"],
    )
    .parse()
    .unwrap_or(4);
    f.push(format!("--level0_slowdown_writes_trigger={}", trigger * 3));
    f.push(format!("--level0_stop_writes_trigger={}", trigger * 5));
    pick(
        &mut f,
        rng,
        "target_file_size_base",
        &["16384", "65536", "262144"],
    );
    pick(
        &mut f,
        rng,
        "max_bytes_for_level_base",
        &["65536", "262144", "1048576"],
    );
    pick(&mut f, rng, "max_bytes_for_level_multiplier", &["4", "10"]);
    pick(&mut f, rng, "max_subcompactions", &["1", "2", "4"]);
    pick(&mut f, rng, "max_background_jobs", &["1", "2", "4"]);
    pick(
        &mut f,
        rng,
        "memtable_bloom_size_ratio",
        &["0", "0.02", "0.1"],
    );
    pick(&mut f, rng, "memtable_whole_key_filtering", &["0", "1"]);
    // 0.01 of the small memtables here is an index of 64 slots, full after a few dozen
    // keys: the path where the index no longer answers for absent keys.
    pick(
        &mut f,
        rng,
        "memtable_point_index_ratio",
        &["0", "0.01", "0.125"],
    );
    // Compressed WAL records replayed after kills and power cuts, beside plain ones (a
    // record that compresses by less than an eighth is stored plain).
    pick(
        &mut f,
        rng,
        "wal_compression",
        &["none", "none", "lz4", "zstd"],
    );
    pick(&mut f, rng, "sync", &["0", "0", "0", "1"]);
    pick(&mut f, rng, "kill_interval_ms", &["500", "2000", "5000"]);
    // Read faults need FaultFs, which has no direct IO.
    match direct {
        true => f.push("--read_fault_one_in=0".into()),
        false => {
            pick(&mut f, rng, "read_fault_one_in", &["0", "0", "100", "1000"]);
        }
    }
    // Weights out of about 1300: the rare operations (flushes, compactions, checkpoints,
    // families created and dropped, ingests) from 0 to a few in a thousand.
    let mut rare = |choices: &[u64]| choices[rng.below(choices.len() as u64) as usize];
    let (flush, compact, sync_wal) = (rare(&[0, 5, 10]), rare(&[0, 5, 10]), rare(&[0, 5, 10]));
    let (checkpoint, column_family, ingest) =
        (rare(&[0, 1, 2]), rare(&[0, 2, 10]), rare(&[0, 5, 20]));
    let iter = rare(&[40, 80, 200]);
    f.push(format!(
        "--ops=put=400,merge=80,delete=80,single_delete=40,delete_range=30,batch=100,get=250,\
         iter={iter},snapshot=50,multi_get=50,flush={flush},compact={compact},\
         sync_wal={sync_wal},checkpoint={checkpoint},column_family={column_family},\
         ingest={ingest}"
    ));
    match mode {
        Mode::Kill => {}
        Mode::PowerCut => {
            f.push("--sync_fault_injection".into());
            if families == 1 && rng.one_in(4) {
                f.push("--disable_wal".into());
            }
        }
        Mode::Faults => {
            pick(&mut f, rng, "write_fault_one_in", &["50", "200", "1000"]);
            pick(
                &mut f,
                rng,
                "metadata_write_fault_one_in",
                &["0", "100", "1000"],
            );
        }
    }
    f
}

/// Adds `--name=` one of `choices` to `f`; returns the value.
fn pick(f: &mut Vec<String>, rng: &mut Rng, name: &str, choices: &[&str]) -> String {
    let v = choices[rng.below(choices.len() as u64) as usize];
    f.push(format!("--{name}={v}"));
    v.to_string()
}

/// True when the file system of `dir` takes direct IO.
fn direct_io_works(dir: &std::path::Path) -> bool {
    use strata::fs::{FileSystem, PosixFs};
    let probe = dir.join("direct-io-probe");
    let works = PosixFs
        .create_writable_direct(&probe)
        .and_then(|mut f| {
            f.append(&[0u8; 4096])?;
            f.sync()
        })
        .is_ok();
    let _ = std::fs::remove_file(probe);
    works
}

/// What the children did, summed from their summary lines.
#[derive(Debug, Default)]
struct Totals {
    children: u64,
    counts: std::collections::BTreeMap<String, u64>,
}

/// Runs `strata crashtest`.
pub fn run(a: &CrashtestArgs) -> Result<ExitCode, BoxError> {
    let seed = match a.seed {
        0 => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
        s => s,
    };
    let mut rng = Rng::new(seed);
    let families = if rng.one_in(2) { 1 } else { 3 };
    // A database keeps the prefix extractor it was created with: drawn once too.
    let prefix_size = [0, 0, 7, 8][rng.below(4) as usize];
    let mut out = std::io::stdout();
    writeln!(
        out,
        "crashtest: seed {seed}, {families} column families, prefix size {prefix_size}, {} \
         keys, {} threads; database {}",
        a.keys,
        a.threads,
        a.db.display()
    )?;
    if let Some(parent) = a.db.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let direct =
        a.db.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .is_some_and(direct_io_works);
    let exe = std::env::current_exe()?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(a.duration);
    let mut totals = Totals::default();
    while Instant::now() + Duration::from_secs(2) < deadline {
        let left = deadline.saturating_duration_since(Instant::now()).as_secs();
        let duration = a.child_duration.min(left).max(1);
        let mode = match rng.below(3) {
            0 => Mode::Kill,
            1 => Mode::PowerCut,
            _ => Mode::Faults,
        };
        let mut flags: Vec<String> = vec![
            format!("--db={}", a.db.display()),
            "--crash".into(),
            format!("--duration={duration}"),
            format!("--seed={}", rng.next_u64().max(1)),
            format!("--keys={}", a.keys),
            format!("--threads={}", a.threads),
            format!("--column_families={families}"),
            format!("--prefix_size={prefix_size}"),
        ];
        flags.extend(draw(&mut rng, mode, families, direct));
        totals.children += 1;
        writeln!(
            out,
            "child {} ({mode:?}): {} stress {}",
            totals.children,
            exe.display(),
            flags.join(" ")
        )?;
        let output = Command::new(&exe)
            .arg("stress")
            .args(flags.iter().map(OsString::from))
            .stderr(Stdio::inherit())
            .output()?;
        let text = String::from_utf8_lossy(&output.stdout);
        let summary = text.lines().find_map(|l| l.strip_prefix("summary "));
        match (output.status.success(), summary) {
            (true, Some(summary)) => {
                for pair in summary.split_whitespace() {
                    if let Some((name, n)) = pair.split_once('=') {
                        *totals.counts.entry(name.to_string()).or_default() +=
                            n.parse::<u64>().unwrap_or(0);
                    }
                }
                if let Some(line) = text.lines().find(|l| l.starts_with("crash test passed")) {
                    writeln!(out, "  {line}")?;
                }
            }
            _ => {
                write!(out, "{text}")?;
                writeln!(
                    out,
                    "crashtest FAILED in child {} (seed {seed}); replay it with the command \
                     above",
                    totals.children
                )?;
                print_totals(&totals, started, 1)?;
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    print_totals(&totals, started, 0)?;
    Ok(ExitCode::SUCCESS)
}

fn print_totals(t: &Totals, started: Instant, failures: u64) -> std::io::Result<()> {
    let n = |name: &str| t.counts.get(name).copied().unwrap_or(0);
    let secs = started.elapsed().as_secs_f64().max(1.0);
    let recoveries = n("kills") + n("power_cuts") + n("reopens");
    writeln!(
        std::io::stdout(),
        "crashtest summary: {} children, {} runs, {} kills, {} power cuts, {} reopens after \
         faults, {} key checks; faults: {} read, {} write, {} sync, {} ENOSPC, {} metadata; \
         {failures} failures; {:.0} recoveries per hour in {:.0} s",
        t.children,
        n("runs"),
        n("kills"),
        n("power_cuts"),
        n("reopens"),
        n("checks"),
        n("read_errors"),
        n("write_errors"),
        n("sync_errors"),
        n("enospc"),
        n("metadata_errors"),
        recoveries as f64 * 3600.0 / secs,
        secs
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine_flags::parse_flags;
    use crate::stress::StressArgs;

    /// Every draw is a command line `strata stress` takes, with at least 30 options drawn.
    #[test]
    fn every_draw_parses_as_stress_flags() {
        let mut rng = Rng::new(5);
        for i in 0..200 {
            let mode = [Mode::Kill, Mode::PowerCut, Mode::Faults][i % 3];
            let families = 1 + 2 * (i % 2);
            let flags = draw(&mut rng, mode, families, true);
            assert!(flags.len() >= 30, "{flags:?}");
            let mut argv = vec!["--db=/x".to_string(), "--crash".into()];
            argv.push(format!("--column_families={families}"));
            argv.extend(flags.iter().cloned());
            let a: StressArgs = parse_flags(&argv).unwrap_or_else(|e| panic!("{flags:?}: {e}"));
            if let Err(e) = a.options.options() {
                panic!("{flags:?}: {e}");
            }
            assert!(!(a.disable_wal && a.column_families != 1));
            // A child on FaultFs (read faults, power cuts, write faults) cannot open files
            // for direct IO.
            let direct =
                a.options.use_direct_reads || a.options.use_direct_io_for_flush_and_compaction;
            let fault_fs = a.read_fault_one_in > 0 || mode != Mode::Kill;
            assert!(!(direct && fault_fs), "{flags:?}");
            for op in ["checkpoint=", "column_family=", "ingest=", "iter="] {
                assert!(a.ops.contains(op), "{}", a.ops);
            }
            assert_eq!(a.sync_fault_injection, mode == Mode::PowerCut);
        }
    }
}
