//! `strata bench`: db_bench's benchmarks on a Strata database (or, with `--engine`, on
//! RocksDB or LMDB through the same client loop).
//!
//! Each step of `--benchmarks` runs on `--threads` threads, each doing `--num` (writes) or
//! `--reads` (reads) operations as in db_bench, and prints db_bench's result line followed by
//! lines that explain it: write-amp from the engine's IO accounting, disk IO and CPU time of
//! the process from /proc, latency percentiles with `--histogram`, and the memory state.
//!
//! Transactions (`--transaction_db`, `--optimistic_transaction_db`): each write of a write
//! step and each read of the read steps is one transaction of the engine's; one that is
//! rolled back for a conflict, a deadlock or a lock timeout is run again, and the step counts
//! the commits and the retries by cause. randomtransaction keeps `--transaction_sets` sets of
//! 8-byte counters (key: the set's number in 4 digits, then the step's key); every
//! transaction adds one increment to a random counter of each set, so every set sums to the
//! same total, which the step checks at its end.

mod args;
mod engine;
mod gen;
mod plot;
mod range_tombstones;
mod report;
mod steps;
mod temp_db;
mod units;
mod workload;

use std::io::Write;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use strata::internals::Rng;

pub use args::BenchArgs;
use engine::{Counters, Engine, TxnMode};
use gen::{LiveKeys, ValueGen};
use range_tombstones::RangeTombstones;
use report::{dir_size, result_line, ProcSample, ThreadStats};
use steps::{parse_step, step_txn_mode, Step, SET_PREFIX_LEN};
use units::mb;

use crate::cli::BoxError;

/// `println!` that hands back a failed write (stdout closed by its reader, as in
/// `strata bench | head`) instead of panicking, so that the run ends and cleans up.
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout(), $($arg)*)
    };
}

/// `print!`, likewise.
macro_rules! out {
    ($($arg:tt)*) => {
        write!(std::io::stdout(), $($arg)*)
    };
}

/// Threads started so far in this process. As in db_bench, thread seeds are
/// `--seed + (number of threads started, this one included)`, so successive steps of one run
/// draw different keys (readrandom after fillrandom finds about 63% of its keys, not all).
static THREADS_STARTED: AtomicU64 = AtomicU64::new(0);

/// The key and value generators of the `thread_number`-th thread of the run, seeded with
/// `--seed + thread_number` as in db_bench.
fn thread_generators(args: &BenchArgs, thread_number: u64) -> (Rng, ValueGen) {
    let base = if args.seed == 0 { 1000 } else { args.seed };
    let seed = base.wrapping_add(thread_number);
    (
        Rng::new(seed),
        ValueGen::new(seed, args.compression_ratio, args.value_size),
    )
}

/// Checks the flags whose values clap lets through but a run cannot use.
fn check_flags(args: &BenchArgs) -> Result<(), String> {
    let problems = [
        (args.num == 0, "--num must be at least 1"),
        (args.batch_size == 0, "--batch_size must be at least 1"),
        (
            args.num_column_families == 0,
            "--num_column_families must be at least 1",
        ),
        (args.key_size == 0, "--key_size must be at least 1"),
        (args.value_size == 0, "--value_size must be at least 1"),
        (args.threads == 0, "--threads must be at least 1"),
        (
            args.threads > 1 && args.benchmarks.split(',').any(|s| s == "fillseqingest"),
            "fillseqingest writes one table file: run it with --threads=1",
        ),
        (
            !(0.0..=1.0).contains(&args.compression_ratio),
            "--compression_ratio must be between 0 and 1",
        ),
        (
            args.readwritepercent > 100,
            "--readwritepercent must be between 0 and 100",
        ),
        (
            args.mergereadpercent > 100,
            "--mergereadpercent must be between 0 and 100",
        ),
    ];
    match problems.iter().find(|(bad, _)| *bad) {
        Some((_, why)) => Err(why.to_string()),
        None => range_tombstones::check_flags(args)
            .and_then(|()| args.check_prefix_flags())
            .and_then(|()| args.check_txn_flags())
            .and_then(|()| args.check_blob_flags()),
    }
}

/// Runs the benchmarks named in `args`.
pub fn run(args: &BenchArgs) -> Result<(), BoxError> {
    check_flags(args)?;
    let steps: Vec<(String, Step)> = args
        .benchmarks
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|name| parse_step(name).map(|s| (name.to_string(), s)))
        .collect::<Result<_, _>>()?;
    let merges = steps
        .iter()
        .find(|(_, s)| matches!(s, Step::MergeRandom | Step::ReadRandomMergeRandom));
    if let Some((name, _)) = merges {
        if args.options.merge_operator.is_empty() {
            return Err(format!(
                "{name} needs a merge operator: --merge_operator={}",
                crate::engine_flags::MERGE_OPERATORS.join(" or ")
            )
            .into());
        }
    }

    for (name, step) in &steps {
        if let Step::Workload(w) = step {
            w.check(name, args)?;
        }
    }
    // A workload whose writes merge sets the merge operator it needs for the run.
    let with_merge_operator;
    let needed = steps.iter().find_map(|(_, step)| match step {
        Step::Workload(w) => w.merge_operator(args),
        _ => None,
    });
    let args = match needed {
        Some(operator) if args.options.merge_operator.is_empty() => {
            let mut set = args.clone();
            set.options.merge_operator = operator.to_string();
            with_merge_operator = set;
            &with_merge_operator
        }
        _ => args,
    };
    let families = workload::families_of_run(
        steps.iter().filter_map(|(name, step)| match step {
            Step::Workload(w) => Some((name.as_str(), *w)),
            _ => None,
        }),
        args,
    )?;

    let path = args.db.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("strata-bench-{}", std::process::id()))
    });
    if path.exists() && !path.is_dir() {
        return Err(format!("--db {} is a file, not a directory", path.display()).into());
    }
    if !args.use_existing_db {
        crate::admin::db_dir::destroy(&path)?;
    }
    // Declared before the database, so dropped after it is closed.
    let _temp = match args.db {
        None => Some(temp_db::TempDb::new(path.clone())?),
        Some(_) => None,
    };
    if args.report_interval_seconds > 0 {
        std::fs::write(&args.report_file, format!("{}\n", report::INTERVAL_HEADER))
            .map_err(|e| format!("--report_file {}: {e}", args.report_file.display()))?;
    }
    let step_kinds: Vec<(&str, Option<workload::WorkloadStep>)> = steps
        .iter()
        .map(|(name, step)| match step {
            Step::Workload(w) => (name.as_str(), Some(*w)),
            _ => (name.as_str(), None),
        })
        .collect();
    workload::refuse_foreign_database(&path, &step_kinds)?;
    // Opening can write (RocksDB flushes the WALs it replays before open returns; Strata
    // flushes them in the background after): reported apart, as the steps start after it.
    let (open_started, before_open) = (Instant::now(), ProcSample::now());
    let opened = match families {
        Some(families) => engine::open_with_families(args.engine, args, &path, families)?,
        None => engine::open(args.engine, args, &path)?,
    };
    let db = opened.as_ref();
    let open_cost = OpenCost {
        seconds: open_started.elapsed().as_secs_f64(),
        disk_written: ProcSample::now()
            .disk_written
            .saturating_sub(before_open.disk_written),
    };
    let workload_steps: Vec<workload::WorkloadStep> = steps
        .iter()
        .filter_map(|(_, step)| match step {
            Step::Workload(w) => Some(*w),
            _ => None,
        })
        .collect();
    print_header(
        args,
        &path,
        db,
        &open_cost,
        &workload::header_lines(&workload_steps, args),
    )?;

    let started = Instant::now();
    let live = LiveKeys::new(args.num, !args.use_existing_db);
    let mut series = Vec::new();
    let run_before = (db.counters(), ProcSample::now());
    let mut run_user_bytes = 0;
    for (name, step) in steps {
        run_user_bytes += run_step(args, db, &live, &name, step, started, &mut series)?;
    }
    // The whole run, background work included: what a step leaves to later steps (the
    // compactions its writes set off) is counted here.
    let (counters, proc) = (db.counters(), ProcSample::now());
    let (amp, written) = write_amp(
        &counters.since(&run_before.0),
        (&run_before.1, &proc),
        run_user_bytes,
    );
    // Bytes passed to write calls by the whole process, beside the engine's own count: the
    // one measure every engine shares (an engine's count may leave out some of its files).
    let wchar = proc
        .syscall_written
        .saturating_sub(run_before.1.syscall_written);
    outln!(
        "{:<12} : write-amp {amp} ({written} for {} of user data, every step and its background work; process wrote {}, wchar) | {}",
        "run total",
        mb(run_user_bytes),
        mb(wchar),
        space_amp(args, db, &live)
    )?;
    if let Some(path) = &args.plot {
        let title = format!(
            "strata bench --engine={} --num={} --threads={} ({}s samples)",
            db.version(),
            args.num,
            args.threads,
            args.report_interval()
        );
        let debt = plot::write_svg(path, &title, &series)
            .map_err(|e| format!("--plot {}: {e}", path.display()))?;
        outln!("plot: {} and {}", path.display(), debt.display())?;
    }
    if args.statistics {
        out!("{}", db.stats_text())?;
    }
    opened.close()?;
    Ok(())
}

/// What opening the database took, before the first step.
struct OpenCost {
    seconds: f64,
    /// Bytes the process sent to the disk while opening (/proc/self/io).
    disk_written: u64,
}

/// db_bench's header, then `more` lines (the workloads').
fn print_header(
    args: &BenchArgs,
    path: &std::path::Path,
    db: &dyn Engine,
    open: &OpenCost,
    more: &[String],
) -> std::io::Result<()> {
    let entry = (args.key_size + args.value_size) as u64;
    outln!("Engine:     {}", db.version())?;
    outln!("Database:   {}", path.display())?;
    outln!("Keys:       {} bytes each", args.key_size)?;
    if args.prefix_size > 0 {
        outln!("Prefix:     {} bytes", args.prefix_size)?;
        outln!("Keys per prefix:    {}", args.keys_per_prefix)?;
    }
    outln!(
        "Values:     {} bytes each ({} bytes after compression)",
        args.value_size,
        (args.value_size as f64 * args.compression_ratio) as u64
    )?;
    outln!("Entries:    {}", args.num)?;
    outln!("Threads:    {}", args.threads)?;
    outln!("RawSize:    {} (estimated)", mb(entry * args.num))?;
    outln!(
        "WAL:        {}, sync {}",
        if args.engine == engine::EngineKind::Lmdb {
            "none (LMDB writes its pages at each commit)"
        } else if args.disable_wal {
            "disabled"
        } else {
            "enabled"
        },
        if args.options.sync { "on" } else { "off" }
    )?;
    outln!(
        "Memtable:   {} write buffer",
        mb(args.options.write_buffer_size as u64)
    )?;
    if let Some(index) = args.options.index_settings() {
        outln!("Index:      {index}")?;
    }
    if args.readahead_size > 0 {
        outln!(
            "Readahead:  {} bytes per iterator read",
            args.readahead_size
        )?;
    }
    if let Some(blobs) = args.options.blob_settings() {
        outln!("Blob files: {blobs}")?;
    }
    let unused = engine::unused_flags(args.engine);
    if !unused.is_empty() {
        outln!("Unused:     {} (no meaning here)", unused.join(", "))?;
    }
    if let Some(r) = db.recovery() {
        outln!("Recovered:  {r}")?;
    }
    outln!(
        "Opened:     in {:.3} s, disk write {} (/proc/self/io; work deferred past open counts in the steps)",
        open.seconds,
        mb(open.disk_written)
    )?;
    if let Some(rule) = RangeTombstones::of(args) {
        outln!("RangeDel:   {} (in the write steps)", rule.describe())?;
    }
    match args.txn_mode() {
        Some(TxnMode::Pessimistic) => outln!(
            "Txn:        pessimistic (--transaction_db), lock timeout {} ms",
            args.transaction_lock_timeout
        )?,
        Some(TxnMode::Optimistic) => {
            outln!("Txn:        optimistic (--optimistic_transaction_db)")?
        }
        None => {}
    }
    for line in more {
        outln!("{line}")?;
    }
    outln!("------------------------------------------------")
}

fn run_step(
    args: &BenchArgs,
    db: &dyn Engine,
    live: &LiveKeys,
    name: &str,
    step: Step,
    run_started: Instant,
    series: &mut Vec<(String, Vec<plot::Point>)>,
) -> Result<u64, BoxError> {
    match step {
        Step::WaitForCompaction | Step::Compact(_) => {
            let start = Instant::now();
            match step {
                Step::Compact(level) => db.compact(level)?,
                _ => db.wait_for_compactions()?,
            }
            outln!(
                "{:<12} : done in {:.3} seconds; {}",
                name,
                start.elapsed().as_secs_f64(),
                db.shape()
            )?;
            return Ok(0);
        }
        Step::Stats => {
            out!("{}", db.stats_text())?;
            return Ok(0);
        }
        Step::LevelStats => {
            out!("{}", db.level_stats_text())?;
            return Ok(0);
        }
        Step::ResetStats => {
            db.reset_stats();
            outln!("{name:<12} : counters and compaction stats reset")?;
            return Ok(0);
        }
        Step::Workload(w) => {
            return run_workload_step(args, db, name, w, run_started, series);
        }
        Step::Flush => {
            let start = Instant::now();
            db.flush()?;
            outln!(
                "{:<12} : flushed in {:.3} seconds; {}",
                "flush",
                start.elapsed().as_secs_f64(),
                db.shape()
            )?;
            return Ok(0);
        }
        _ => {}
    }
    let before_db = db.counters();
    let before_proc = ProcSample::now();
    let ctx = workload::Ctx {
        args,
        db,
        name,
        run_started,
    };
    let outcome = steps::run(&ctx, live, step)?;
    let after_proc = ProcSample::now();
    let after_db = db.counters();
    let (total, elapsed, writer) = (outcome.total, outcome.elapsed, outcome.writer);
    let intervals = outcome.intervals;
    // The *whilewriting steps report their readers as readrandom or seekrandom.
    let reader_step = match step {
        Step::WhileWriting { seek: false } => Step::ReadRandom { missing: false },
        Step::WhileWriting { seek: true } => Step::SeekRandom,
        other => other,
    };
    let user_bytes_written = total.written + writer.as_ref().map_or(0, |w| w.bytes);
    let message = match reader_step {
        Step::ReadRandom { .. } | Step::SeekRandom => {
            format!("({} of {} found)", total.found, total.done)
        }
        Step::ReadRandomWriteRandom => format!(
            "( reads:{} writes:{} total:{} found:{})",
            total.reads,
            total.done - total.reads,
            total.done,
            total.found
        ),
        Step::UpdateRandom => format!("( updates:{} found:{})", total.done, total.found),
        Step::FillSeqIngest => match total.ingest {
            Some((write, ingest)) => {
                format!("(table file written in {write:.3} s, ingested in {ingest:.3} s)")
            }
            None => String::new(),
        },
        Step::MergeRandom => format!("( updates:{})", total.done),
        Step::RandomTransaction => format!(
            "( transactions:{} sets:{})",
            total.done, args.transaction_sets
        ),
        Step::UpdateRandomCursor => format!("( updates:{} found:{})", total.done, total.found),
        Step::ReadRandomMergeRandom => format!(
            "(reads:{} merges:{} total:{} hits:{})",
            total.reads,
            total.done - total.reads,
            total.done,
            total.found
        ),
        _ => String::new(),
    };
    outln!("{}", result_line(name, &total, elapsed, &message))?;
    if matches!(reader_step, Step::Fill(_) | Step::FillSync) {
        if let Some(rule) = RangeTombstones::of(args) {
            let how = db
                .range_deletion_emulated()
                .map_or(String::new(), |how| format!(" ({how})"));
            outln!(
                "             : range tombstones: {} written, {} keys wide{how}",
                total.range_tombstones,
                rule.width
            )?;
        }
    }
    if let Some(mode) = step_txn_mode(args, reader_step) {
        let mut how = format!("{} transactions", mode.name());
        if args.txn_mode().is_none() {
            how.push_str(", as no transaction flag was given");
        }
        if let Some(note) = db.transactions_note() {
            how = format!("{how}; {note}");
        }
        if reader_step == Step::UpdateRandomCursor {
            match db.cursor_update_emulated() {
                Some(e) => how = format!("{how}; cursor update emulated: {e}"),
                None => how.push_str("; cursor updated in place"),
            }
        }
        outln!(
            "             : transactions: {} commits, {} read-only; retries: {} conflicts, {} deadlocks, {} timeouts ({how})",
            total.commits,
            total.read_only_txns,
            total.conflicts,
            total.deadlocks,
            total.timeouts
        )?;
    }
    if reader_step == Step::RandomTransaction {
        outln!("             : {}", verify_sets(args, db, &total)?)?;
    }
    if let Some(w) = writer {
        outln!(
            "             : writer: {} puts ({:.0}/s) beside the readers",
            w.puts,
            w.puts as f64 / elapsed.max(1e-9)
        )?;
    }
    if let Some(intervals) = intervals {
        if let Some(summary) = intervals.summary() {
            outln!("             : {summary}")?;
        }
        series.push((name.to_string(), intervals.points));
    }
    print_explanation(
        args,
        db,
        live,
        (&total, user_bytes_written),
        &after_db.since(&before_db),
        (&before_proc, &after_proc),
    )?;
    Ok(user_bytes_written)
}

/// Runs a workload's step and reports it as the db_bench steps are reported: the result
/// line, the table of its operation types and its notes, then the same explanation lines.
fn run_workload_step(
    args: &BenchArgs,
    db: &dyn Engine,
    name: &str,
    step: workload::WorkloadStep,
    run_started: Instant,
    series: &mut Vec<(String, Vec<plot::Point>)>,
) -> Result<u64, BoxError> {
    let before_db = db.counters();
    let before_proc = ProcSample::now();
    let ctx = workload::Ctx {
        args,
        db,
        name,
        run_started,
    };
    let outcome = workload::run_step(step, &ctx)?;
    let after_proc = ProcSample::now();
    let after_db = db.counters();
    outln!(
        "{}",
        result_line(name, &outcome.total, outcome.elapsed, &outcome.message)
    )?;
    for line in outcome.ops.table(outcome.elapsed) {
        outln!("             : {line}")?;
    }
    let t = &outcome.total;
    if t.commits + t.conflicts + t.deadlocks + t.timeouts > 0 {
        outln!(
            "             : transactions: {} commits; retries: {} conflicts, {} deadlocks, {} timeouts",
            t.commits,
            t.conflicts,
            t.deadlocks,
            t.timeouts
        )?;
    }
    for note in &outcome.notes {
        outln!("             : {note}")?;
    }
    if let Some(intervals) = outcome.intervals {
        if let Some(summary) = intervals.summary() {
            outln!("             : {summary}")?;
        }
        series.push((name.to_string(), intervals.points));
    }
    // The workloads' keys are not db_bench's: the report gives the size on disk.
    let unknown = LiveKeys::new(0, false);
    print_explanation(
        args,
        db,
        &unknown,
        (&outcome.total, outcome.total.written),
        &after_db.since(&before_db),
        (&before_proc, &after_proc),
    )?;
    Ok(outcome.total.written)
}

fn print_explanation(
    args: &BenchArgs,
    db: &dyn Engine,
    live: &LiveKeys,
    (total, user_bytes): (&ThreadStats, u64),
    step: &Counters,
    (before_proc, after_proc): (&ProcSample, &ProcSample),
) -> std::io::Result<()> {
    let ops = total.done.max(1) as f64;
    let (write_amp, written) = write_amp(step, (before_proc, after_proc), user_bytes);
    outln!(
        "             : write-amp {write_amp} ({written} for {} of user data) | disk write {}, disk read {:.0} B/op (/proc/self/io) | cpu {:.3} us/op",
        mb(user_bytes),
        mb(after_proc.disk_written.saturating_sub(before_proc.disk_written)),
        after_proc.disk_read.saturating_sub(before_proc.disk_read) as f64 / ops,
        (after_proc.cpu_seconds - before_proc.cpu_seconds) * 1e6 / ops,
    )?;
    if step.write_groups > 0 {
        outln!(
            "             : group commit {:.2} batches/group, {} WAL syncs",
            step.batches as f64 / step.write_groups as f64,
            step.wal_syncs
        )?;
    }
    outln!(
        "             : tree: {} | {}",
        db.shape(),
        space_amp(args, db, live)
    )?;
    if step.bloom_checks + step.cache_hits + step.cache_misses > 0 {
        let table_read = match step.table_bytes_read {
            Some(b) => format!(", {:.0} table bytes read/op", b as f64 / ops),
            None => String::new(),
        };
        let blob_read = match step.blob_bytes_read {
            Some(b) if b > 0 => format!(", {:.0} blob bytes read/op", b as f64 / ops),
            _ => String::new(),
        };
        // Pages the kernel read from the disk for this process (not those the page cache
        // served): with the database larger than memory, the reads that cost.
        let pages_read = after_proc.disk_read.saturating_sub(before_proc.disk_read) as f64 / 4096.0;
        outln!(
            "             : reads: {:.2} bloom checks/op ({:.1}% negative), block cache {} hits {} misses ({:.2} misses/op){table_read}{blob_read}, {:.2} pages from disk/op",
            step.bloom_checks as f64 / ops,
            100.0 * step.bloom_negatives as f64 / step.bloom_checks.max(1) as f64,
            step.cache_hits,
            step.cache_misses,
            step.cache_misses as f64 / ops,
            pages_read / ops,
        )?;
    }
    if step
        .stalls
        .iter()
        .any(|&(_, n, micros)| n.unwrap_or(0) > 0 || micros > 0)
    {
        let parts: Vec<String> = step
            .stalls
            .iter()
            .map(|&(what, n, micros)| match n {
                Some(n) => format!("{n} {what} ({:.1} ms)", micros as f64 / 1000.0),
                None => format!("{what} {:.1} ms", micros as f64 / 1000.0),
            })
            .collect();
        outln!("             : write stalls: {}", parts.join(", "))?;
    }
    if let Some(line) = compaction_line(step) {
        outln!("             : {line}")?;
    }
    if let Some(report) = report::perf_context_report(&total.perf) {
        outln!("{report}")?;
    }
    if args.histogram && total.hist.count() > 0 {
        let h = &total.hist;
        outln!(
            "             : latency us: p50 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
            h.percentile_us(0.5),
            h.percentile_us(0.99),
            h.percentile_us(0.999),
            h.max_us()
        )?;
    }
    Ok(())
}

/// The compactions of a step, if it saw any: those finished, with their bytes (where the
/// engine counts them: else the bytes it counts), those running at its end, the compaction
/// debt left, and those skipped for lack of disk space.
fn compaction_line(step: &Counters) -> Option<String> {
    let running = step.compactions_running.unwrap_or(0);
    let skipped = step.compactions_skipped_for_space;
    let (read, written) = (
        mb(step.compaction_bytes_read),
        mb(step.compaction_bytes_written),
    );
    let mut parts = vec![match step.compactions {
        Some(n) => format!("{n} finished ({read} read, {written} written)"),
        None => format!("{read} read, {written} written"),
    }];
    if running > 0 {
        parts.push(format!("{running} running"));
    }
    parts.push(format!(
        "{} pending bytes after",
        mb(step.pending_compaction_bytes)
    ));
    if skipped > 0 {
        parts.push(format!("{skipped} skipped for disk space"));
    }
    let any = step.compactions.unwrap_or(0) + running + skipped + step.compaction_bytes_written;
    (any > 0).then(|| format!("compactions: {}", parts.join(", ")))
}

/// Write-amp over some interval, and what it counts: the engine's own count of the bytes it
/// wrote, or else (an engine that keeps none) every byte the process passed to write calls.
fn write_amp(
    counters: &Counters,
    (before, after): (&ProcSample, &ProcSample),
    user_bytes: u64,
) -> (String, String) {
    let (engine, source) = match counters.bytes_written {
        Some(b) => (b, "engine wrote"),
        None => (
            after.syscall_written.saturating_sub(before.syscall_written),
            "process wrote (wchar)",
        ),
    };
    let amp = if user_bytes > 0 {
        format!("{:.2}", engine as f64 / user_bytes as f64)
    } else {
        "-".into()
    };
    (amp, format!("{source} {}", mb(engine)))
}

/// `space-amp S (size on disk / live user data)` where the run knows the live keys, else the
/// size on disk. The size on disk is the whole directory's, blob files included; when there
/// are any, their share follows.
fn space_amp(args: &BenchArgs, db: &dyn Engine, live: &LiveKeys) -> String {
    let on_disk = dir_size(db.path());
    let blobs = match report::blob_files(db.path()) {
        (0, _) => String::new(),
        (n, bytes) => format!(", of which {} in {n} blob files", mb(bytes)),
    };
    let live_bytes = live
        .count()
        .map(|n| n * (args.key_size + args.value_size) as u64);
    match live_bytes {
        Some(b) if b > 0 => format!(
            "space-amp {:.2} ({} on disk{blobs} / {} live user data)",
            on_disk as f64 / b as f64,
            mb(on_disk),
            mb(b)
        ),
        _ => format!("{} on disk{blobs}", mb(on_disk)),
    }
}

/// db_bench's RandomTransactionInserter::Verify: the counters of each of the
/// --transaction_sets sets sum to the same total. The line to print, or the error that
/// fails the run.
fn verify_sets(args: &BenchArgs, db: &dyn Engine, step: &ThreadStats) -> Result<String, BoxError> {
    let sets = args.transaction_sets as usize;
    let mut sums = vec![0u64; sets];
    let mut keys = vec![0u64; sets];
    let key_len = SET_PREFIX_LEN + args.key_size;
    db.scan(false, &mut |k, v| {
        if k.len() == key_len && v.len() == 8 && k[..SET_PREFIX_LEN].iter().all(u8::is_ascii_digit)
        {
            let set = k[..SET_PREFIX_LEN]
                .iter()
                .fold(0usize, |n, d| n * 10 + usize::from(d - b'0'));
            if (1..=sets).contains(&set) {
                let counter = u64::from_be_bytes(v.try_into().unwrap_or_default());
                sums[set - 1] = sums[set - 1].wrapping_add(counter);
                keys[set - 1] += 1;
            }
        }
        true
    })?;
    if sums.iter().any(|&s| s != sums[0]) {
        let each: Vec<String> = sums
            .iter()
            .enumerate()
            .map(|(i, s)| format!("set {}: {s} over {} keys", i + 1, keys[i]))
            .collect();
        return Err(format!(
            "randomtransaction: verification failed: the sets' sums differ ({}); every \
             transaction adds the same increment to each set",
            each.join(", ")
        )
        .into());
    }
    Ok(format!(
        "verified: {sets} sets, sums equal ({} each over {} keys; this step added {})",
        sums[0],
        keys.iter().sum::<u64>(),
        step.increments
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compaction_line_counts_and_measures_the_same_compactions() {
        const MB: u64 = 1 << 20;
        let strata = |finished, read, written, running, pending, skipped| Counters {
            compactions: Some(finished),
            compaction_bytes_read: read * MB,
            compaction_bytes_written: written * MB,
            compactions_running: Some(running),
            pending_compaction_bytes: pending * MB,
            compactions_skipped_for_space: skipped,
            ..Counters::default()
        };
        let rocksdb = Counters {
            compactions: None,
            compaction_bytes_read: 3 * MB,
            compaction_bytes_written: 2 * MB,
            compactions_running: Some(1),
            ..Counters::default()
        };
        for (counters, line) in [
            (strata(0, 0, 0, 0, 0, 0), None),
            (Counters::default(), None),
            (
                strata(0, 0, 0, 1, 5, 0),
                Some("0 finished (0.0 MB read, 0.0 MB written), 1 running, 5.0 MB pending bytes after"),
            ),
            (
                strata(3, 10, 9, 0, 0, 0),
                Some("3 finished (10.0 MB read, 9.0 MB written), 0.0 MB pending bytes after"),
            ),
            (
                strata(0, 0, 0, 0, 7, 2),
                Some("0 finished (0.0 MB read, 0.0 MB written), 7.0 MB pending bytes after, 2 skipped for disk space"),
            ),
            (
                rocksdb,
                Some("3.0 MB read, 2.0 MB written, 1 running, 0.0 MB pending bytes after"),
            ),
        ] {
            assert_eq!(
                compaction_line(&counters),
                line.map(|l| format!("compactions: {l}")),
                "{counters:?}"
            );
        }
    }

    #[test]
    fn unknown_steps_are_errors_that_list_the_known_ones() {
        let e = parse_step("fillsequential").unwrap_err();
        assert!(e.contains("'fillsequential'"), "{e}");
        for (name, _) in steps::STEPS {
            assert!(e.contains(name), "{name} missing from: {e}");
            assert!(parse_step(name).is_ok());
        }
    }
}
