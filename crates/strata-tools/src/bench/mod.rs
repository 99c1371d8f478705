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
mod temp_db;
mod units;
mod workload;

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use strata::internals::Rng;

pub use args::BenchArgs;
use engine::{Counters, Engine, EngineResult, Retry, TxnMode, TxnOp, TxnRead};
use gen::{fill_key, LiveKeys, ValueGen};
use range_tombstones::RangeTombstones;
use report::{dir_size, result_line, Histogram, IntervalReporter, ProcSample, ThreadStats};
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

/// What kind of work a step does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    Fill(FillOrder),
    FillSync,
    /// fillseq through one table file written outside the database, then ingested.
    FillSeqIngest,
    Delete(FillOrder),
    ReadRandom {
        missing: bool,
    },
    ReadSeq {
        reverse: bool,
    },
    SeekRandom,
    /// Readers (random gets, or seeks) while one more thread writes.
    WhileWriting {
        seek: bool,
    },
    /// Random gets and puts mixed by --readwritepercent.
    ReadRandomWriteRandom,
    /// Read-modify-write of random keys.
    UpdateRandom,
    /// Merges into random keys (db_bench's mergerandom).
    MergeRandom,
    /// Random gets and merges mixed by --mergereadpercent.
    ReadRandomMergeRandom,
    /// db_bench's randomtransaction: counters of --transaction_sets sets moved together.
    RandomTransaction,
    /// Read-modify-write of random keys through a transaction's updatable cursor.
    UpdateRandomCursor,
    Flush,
    Compact(Option<usize>),
    WaitForCompaction,
    Stats,
    LevelStats,
    ResetStats,
    /// A workload's step (YCSB, the expanding range, ...): see [`workload`].
    Workload(workload::WorkloadStep),
}

/// The order in which a fill or delete step visits the keys (db_bench's sequential, random
/// and unique random write orders), not the order of the keys themselves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FillOrder {
    Sequential,
    Random,
    UniqueRandom,
}

/// The steps of --benchmarks by name, in the order --help lists them.
const STEPS: &[(&str, Step)] = &[
    ("fillseq", Step::Fill(FillOrder::Sequential)),
    ("fillrandom", Step::Fill(FillOrder::Random)),
    ("filluniquerandom", Step::Fill(FillOrder::UniqueRandom)),
    ("overwrite", Step::Fill(FillOrder::Random)),
    ("fillsync", Step::FillSync),
    ("fillseqingest", Step::FillSeqIngest),
    ("deleteseq", Step::Delete(FillOrder::Sequential)),
    ("deleterandom", Step::Delete(FillOrder::Random)),
    ("readrandom", Step::ReadRandom { missing: false }),
    ("readmissing", Step::ReadRandom { missing: true }),
    ("readseq", Step::ReadSeq { reverse: false }),
    ("readreverse", Step::ReadSeq { reverse: true }),
    ("seekrandom", Step::SeekRandom),
    ("readwhilewriting", Step::WhileWriting { seek: false }),
    ("seekrandomwhilewriting", Step::WhileWriting { seek: true }),
    ("readrandomwriterandom", Step::ReadRandomWriteRandom),
    ("updaterandom", Step::UpdateRandom),
    ("mergerandom", Step::MergeRandom),
    ("readrandommergerandom", Step::ReadRandomMergeRandom),
    ("randomtransaction", Step::RandomTransaction),
    ("updaterandomcursor", Step::UpdateRandomCursor),
    ("flush", Step::Flush),
    ("compact0", Step::Compact(Some(0))),
    ("compact1", Step::Compact(Some(1))),
    ("compactall", Step::Compact(None)),
    ("compact", Step::Compact(None)),
    ("waitforcompaction", Step::WaitForCompaction),
    ("stats", Step::Stats),
    ("levelstats", Step::LevelStats),
    ("resetstats", Step::ResetStats),
];

fn parse_step(name: &str) -> Result<Step, String> {
    let workloads = workload::STEPS.iter().map(|&(n, w)| (n, Step::Workload(w)));
    let mut all = STEPS.iter().copied().chain(workloads);
    match all.clone().find(|(n, _)| *n == name) {
        Some((_, step)) => Ok(step),
        None => Err(format!(
            "unknown benchmark '{name}'; the known ones are {}",
            all.by_ref().map(|(n, _)| n).collect::<Vec<_>>().join(", ")
        )),
    }
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
    let start = Instant::now();
    // In the *whilewriting steps the threads read (as readrandom or seekrandom) and one more
    // thread writes until they are done; as in db_bench, only the readers are reported.
    let (reader_step, with_writer) = match step {
        Step::WhileWriting { seek: false } => (Step::ReadRandom { missing: false }, true),
        Step::WhileWriting { seek: true } => (Step::SeekRandom, true),
        other => (other, false),
    };
    let readers_done = AtomicBool::new(false);
    // A progress bar on stderr when it is a terminal, nothing otherwise.
    let progress = std::io::stderr().is_terminal().then(|| AtomicU64::new(0));
    let reporter = (args.report_interval() > 0)
        .then(|| IntervalReporter::new(args, name, args.threads, run_started));
    let (results, writer_result, intervals) = std::thread::scope(|s| {
        let writer = with_writer.then(|| {
            let n = THREADS_STARTED.fetch_add(1, Ordering::Relaxed) + 1;
            let done = &readers_done;
            s.spawn(move || background_writer(args, db, live, done, n))
        });
        let reporting = reporter.as_ref().map(|r| {
            let done = &readers_done;
            s.spawn(move || r.run(db, done))
        });
        let ticker = progress.as_ref().map(|p| {
            let done = &readers_done;
            s.spawn(move || show_progress(args, name, reader_step, p, done))
        });
        let handles: Vec<_> = (0..args.threads)
            .map(|i| {
                let n = THREADS_STARTED.fetch_add(1, Ordering::Relaxed) + 1;
                let meter = reporter.as_ref().map(|r| r.meter(i));
                let progress = progress.as_ref();
                s.spawn(move || run_thread(args, db, live, reader_step, n, (meter, progress)))
            })
            .collect();
        let results: Vec<EngineResult<ThreadStats>> = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect();
        readers_done.store(true, Ordering::Release);
        if let Some(t) = ticker {
            t.join().expect("progress thread panicked");
        }
        let writer_result = writer.map(|w| w.join().expect("writer thread panicked"));
        let intervals = reporting.map(|r| r.join().expect("report thread panicked"));
        (results, writer_result, intervals)
    });
    let writer = match writer_result {
        Some(r) => Some(r.map_err(|e| format!("{name}: writer: {e}"))?),
        None => None,
    };
    let elapsed = start.elapsed().as_secs_f64();
    let after_proc = ProcSample::now();
    let after_db = db.counters();

    let mut total = ThreadStats::default();
    for r in results {
        total.merge(&r.map_err(|e| format!("{name}: {e}"))?);
    }
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
        "             : write-amp {write_amp} ({written} for {} of user data) | disk write {}, disk read {:.0} B/op (/proc/self/io) | cpu {:.2} us/op",
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

/// One thread's share of a step; `thread_number` counts the threads of the whole run.
/// With `--duration` a step runs until the time is up instead of for `--num` or `--reads`
/// operations.
fn run_thread(
    args: &BenchArgs,
    db: &dyn Engine,
    live: &LiveKeys,
    step: Step,
    thread_number: u64,
    (meter, progress): (Option<report::Meter<'_>>, Option<&AtomicU64>),
) -> EngineResult<ThreadStats> {
    let (mut rng, mut values) = thread_generators(args, thread_number);
    let key_size = match step {
        Step::ReadRandom { missing: true } => args.key_size + 1, // as db_bench: never found
        _ => args.key_size,
    };
    let mut key = vec![0u8; key_size];
    let shape = args.key_shape();
    let mut stats = ThreadStats::default();
    let mut hist = Histogram::default();
    let sync = args.options.sync || step == Step::FillSync;
    let num = args.num.max(1);
    let txn = step_txn_mode(args, step);
    let start = Instant::now();
    let deadline = (args.duration > 0).then(|| start + Duration::from_secs(args.duration));
    // True while the thread should do operation number `done` of `limit`.
    let more = |done: u64, limit: u64| match deadline {
        Some(d) => Instant::now() < d,
        None => done < limit,
    };
    let timing = args.histogram || meter.is_some();
    let clock = || timing.then(Instant::now);
    let mut timed = |stats: &mut ThreadStats, op_start: Option<Instant>| {
        stats.done += 1;
        let latency = op_start.map(|t| t.elapsed());
        if let Some(d) = latency {
            if args.histogram {
                hist.record(d);
            }
        }
        if let Some(m) = &meter {
            m.record(latency);
        }
        if let Some(p) = progress {
            p.fetch_add(1, Ordering::Relaxed);
        }
    };

    match step {
        Step::Fill(order) | Step::Delete(order) => {
            let permutation = (order == FillOrder::UniqueRandom).then(|| shuffled(num, &mut rng));
            let tombstones = RangeTombstones::of(args).filter(|_| matches!(step, Step::Fill(_)));
            // Keys drawn from the step's generator: the writes' and the tombstones' begin
            // keys, as db_bench draws both from one generator.
            let mut drawn = 0;
            let mut draw = |rng: &mut Rng| {
                let k = match order {
                    FillOrder::Sequential => drawn % num,
                    FillOrder::Random => rng.below(num),
                    FillOrder::UniqueRandom => permutation
                        .as_ref()
                        .map_or(drawn, |p| p[(drawn % num) as usize]),
                };
                drawn += 1;
                k
            };
            // The begin key of a tombstone due and not yet written: drawn when due, as
            // db_bench draws it, and written right after the write (or the batch, cut there)
            // that reached the count.
            let mut tombstones_due = Vec::new();
            let mut i = 0;
            let mut batch: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            while more(i, args.writes()) {
                let k = draw(&mut rng);
                i += 1;
                shape.fill(k, &mut key);
                if tombstones.is_some_and(|t| t.due(i)) {
                    tombstones_due.push(draw(&mut rng));
                }
                let t = clock();
                if matches!(step, Step::Delete(_)) {
                    match txn {
                        None => db.delete(&key, sync)?,
                        Some(m) => {
                            in_txn(db, m, TxnOp::Delete(&key), sync, &mut stats)?;
                        }
                    }
                    live.delete(k);
                    stats.bytes += key_size as u64;
                    stats.written += key_size as u64;
                } else if args.batch_size > 1 {
                    // One batch of --batch_size puts, timed as one operation per put when
                    // it is written (db_bench counts entries, not batches).
                    batch.push((key.clone(), values.next(args.value_size).to_vec()));
                    live.put(k);
                    stats.bytes += (key_size + args.value_size) as u64;
                    stats.written += (key_size + args.value_size) as u64;
                    // A tombstone due cuts the batch: it must follow the writes before it and
                    // precede those after it, as it does inside db_bench's batch.
                    if batch.len() < args.batch_size
                        && more(i, args.writes())
                        && tombstones_due.is_empty()
                    {
                        continue;
                    }
                    match txn {
                        None => db.put_batch(&batch, sync)?,
                        Some(m) => {
                            in_txn(db, m, TxnOp::Put(&batch), sync, &mut stats)?;
                        }
                    }
                    for _ in 1..batch.len() {
                        timed(&mut stats, None);
                    }
                    batch.clear();
                } else {
                    let value = values.next(args.value_size);
                    put(db, txn, (&key, value), sync, &mut stats)?;
                    live.put(k);
                    stats.bytes += (key_size + args.value_size) as u64;
                    stats.written += (key_size + args.value_size) as u64;
                }
                timed(&mut stats, t);
                if let Some(rule) = tombstones {
                    for begin in std::mem::take(&mut tombstones_due) {
                        let written = delete_range(args, db, live, rule, begin, sync)?;
                        stats.range_tombstones += u64::from(written);
                    }
                }
            }
        }
        Step::FillSync => {
            let tombstones = RangeTombstones::of(args);
            while more(stats.done, (args.writes() / 1000).max(1)) {
                let k = rng.below(num);
                shape.fill(k, &mut key);
                let value = values.next(args.value_size);
                let t = clock();
                put(db, txn, (&key, value), sync, &mut stats)?;
                live.put(k);
                stats.bytes += (key_size + args.value_size) as u64;
                stats.written += (key_size + args.value_size) as u64;
                timed(&mut stats, t);
                if let Some(rule) = tombstones.filter(|t| t.due(stats.done)) {
                    let begin = rng.below(num);
                    let written = delete_range(args, db, live, rule, begin, sync)?;
                    stats.range_tombstones += u64::from(written);
                }
            }
        }
        Step::FillSeqIngest => {
            let mut k = 0;
            let limit = args.writes().min(num);
            let mut next = |key: &mut Vec<u8>, value: &mut Vec<u8>| {
                if k >= limit {
                    return false;
                }
                key.resize(key_size, 0);
                shape.fill(k, key);
                value.clear();
                value.extend_from_slice(values.next(args.value_size));
                live.put(k);
                k += 1;
                true
            };
            stats.ingest = Some(db.ingest_sorted(&mut next)?);
            stats.done = k;
            stats.bytes = k * (key_size + args.value_size) as u64;
            stats.written = stats.bytes;
        }
        Step::ReadRandom { .. } => {
            while more(stats.done, args.reads()) {
                shape.fill(rng.below(num), &mut key);
                let t = clock();
                if let Some(len) = get(db, txn, &key, &mut stats)? {
                    stats.found += 1;
                    stats.bytes += (key.len() + len) as u64;
                }
                timed(&mut stats, t);
            }
        }
        Step::ReadRandomWriteRandom | Step::UpdateRandom => {
            // db_bench's loops: a read, then (by --readwritepercent, or always for an
            // update) a write of the same key.
            while more(stats.done, args.reads()) {
                let k = rng.below(num);
                shape.fill(k, &mut key);
                let read =
                    step == Step::UpdateRandom || rng.below(100) < u64::from(args.readwritepercent);
                let t = clock();
                if let (Some(m), Step::UpdateRandom) = (txn, step) {
                    // get_for_update and put in one transaction.
                    let value = values.next(args.value_size);
                    let r = in_txn(db, m, TxnOp::Update(&key, value), sync, &mut stats)?;
                    stats.found += u64::from(r.found);
                    stats.bytes += r.bytes + (key_size + args.value_size) as u64;
                    stats.written += (key_size + args.value_size) as u64;
                    live.put(k);
                    timed(&mut stats, t);
                    continue;
                }
                if read {
                    if let Some(len) = get(db, txn, &key, &mut stats)? {
                        stats.found += 1;
                        stats.bytes += (key.len() + len) as u64;
                    }
                    stats.reads += 1;
                }
                if !read || step == Step::UpdateRandom {
                    put(
                        db,
                        txn,
                        (&key, values.next(args.value_size)),
                        sync,
                        &mut stats,
                    )?;
                    live.put(k);
                    stats.bytes += (key_size + args.value_size) as u64;
                    stats.written += (key_size + args.value_size) as u64;
                }
                timed(&mut stats, t);
            }
            if step == Step::UpdateRandom {
                stats.reads = 0;
            }
        }
        Step::MergeRandom | Step::ReadRandomMergeRandom => {
            // db_bench's loops: a random key of --merge_keys, then a merge (always, or by
            // --mergereadpercent) or a get. Operands of uint64add are 8 bytes, as its
            // integers; others --value_size.
            let operand_size = match args.options.merge_operator.as_str() {
                "uint64add" => 8,
                _ => args.value_size,
            };
            let keys = args.merge_keys().max(1);
            while more(stats.done, args.reads()) {
                let k = rng.below(keys);
                shape.fill(k, &mut key);
                let merge =
                    step == Step::MergeRandom || rng.below(100) < u64::from(args.mergereadpercent);
                let t = clock();
                if merge {
                    db.merge(&key, values.next(operand_size), sync)?;
                    live.put(k);
                    stats.bytes += (key_size + operand_size) as u64;
                    stats.written += (key_size + operand_size) as u64;
                } else {
                    if let Some(len) = db.get(&key)? {
                        stats.found += 1;
                        stats.bytes += (key.len() + len) as u64;
                    }
                    stats.reads += 1;
                }
                timed(&mut stats, t);
            }
        }
        Step::ReadSeq { reverse } => {
            // One pass over the database; with --duration, passes until the time is up.
            while more(stats.done, args.reads()) {
                let mut t = clock();
                let mut visited = false;
                db.scan(reverse, &mut |k, v| {
                    visited = true;
                    stats.bytes += (k.len() + v.len()) as u64;
                    timed(&mut stats, t);
                    t = clock();
                    more(stats.done, args.reads())
                })?;
                if deadline.is_none() || !visited {
                    break;
                }
            }
        }
        Step::SeekRandom => {
            while more(stats.done, args.reads()) {
                shape.fill_for_seek(rng.below(num), &mut key);
                let t = clock();
                let (found, bytes) = match txn {
                    None => db.seek(&key, args.seek_nexts)?,
                    Some(m) => {
                        let op = TxnOp::Seek(&key, args.seek_nexts);
                        let r = in_txn(db, m, op, false, &mut stats)?;
                        (r.found, r.bytes)
                    }
                };
                stats.found += u64::from(found);
                stats.bytes += bytes;
                timed(&mut stats, t);
            }
        }
        Step::RandomTransaction => {
            // As db_bench's RandomTransactionInserter: one increment, 1 to 100, added to a
            // random key of every set.
            let mode = txn.unwrap_or(TxnMode::Pessimistic);
            let sets = args.transaction_sets as usize;
            let mut keys = vec![vec![0u8; SET_PREFIX_LEN + key_size]; sets];
            while more(stats.done, args.reads()) {
                let increment = rng.below(100) + 1;
                for (i, set_key) in keys.iter_mut().enumerate() {
                    let prefix = format!("{:04}", i + 1);
                    set_key[..SET_PREFIX_LEN].copy_from_slice(prefix.as_bytes());
                    shape.fill(rng.below(num), &mut set_key[SET_PREFIX_LEN..]);
                }
                let t = clock();
                let r = in_txn(
                    db,
                    mode,
                    TxnOp::AddToEach(&keys, increment),
                    sync,
                    &mut stats,
                )?;
                stats.found += u64::from(r.found);
                stats.increments = stats.increments.wrapping_add(increment);
                let bytes = (sets * (SET_PREFIX_LEN + key_size + 8)) as u64;
                stats.bytes += bytes;
                stats.written += bytes;
                timed(&mut stats, t);
            }
        }
        Step::UpdateRandomCursor => {
            let mode = txn.unwrap_or(TxnMode::Pessimistic);
            while more(stats.done, args.reads()) {
                let k = rng.below(num);
                shape.fill(k, &mut key);
                let value = values.next(args.value_size);
                let t = clock();
                let r = in_txn(db, mode, TxnOp::CursorUpdate(&key, value), sync, &mut stats)?;
                if r.found {
                    stats.found += 1;
                    stats.bytes += r.bytes + (key_size + args.value_size) as u64;
                    stats.written += (key_size + args.value_size) as u64;
                }
                timed(&mut stats, t);
            }
        }
        Step::WaitForCompaction
        | Step::WhileWriting { .. }
        | Step::Compact(_)
        | Step::Stats
        | Step::LevelStats
        | Step::ResetStats
        | Step::Workload(_)
        | Step::Flush => {}
    }
    stats.seconds = start.elapsed().as_secs_f64();
    stats.hist = hist;
    Ok(stats)
}

/// The transactions `step` runs: those of the flags in the steps that read or write through
/// them, and always some in the steps made of transactions.
fn step_txn_mode(args: &BenchArgs, step: Step) -> Option<TxnMode> {
    match step {
        Step::RandomTransaction | Step::UpdateRandomCursor => args.open_txn_mode(),
        Step::Fill(_)
        | Step::FillSync
        | Step::Delete(_)
        | Step::ReadRandom { .. }
        | Step::SeekRandom
        | Step::ReadRandomWriteRandom
        | Step::UpdateRandom => args.txn_mode(),
        _ => None,
    }
}

/// The most times one operation's transaction is run again before the step gives up.
const MAX_RETRIES: u64 = 100_000;

/// Runs `op` as a transaction of `mode` until it commits, counting the retries in `stats`.
fn in_txn(
    db: &dyn Engine,
    mode: TxnMode,
    op: TxnOp<'_>,
    sync: bool,
    stats: &mut ThreadStats,
) -> EngineResult<TxnRead> {
    let mut retries = 0;
    loop {
        match db.transaction(mode, op, sync)? {
            Ok(read) => {
                if op.read_only() {
                    stats.read_only_txns += 1;
                } else {
                    stats.commits += 1;
                }
                return Ok(read);
            }
            Err(why) => {
                match why {
                    Retry::Conflict => stats.conflicts += 1,
                    Retry::Deadlock => stats.deadlocks += 1,
                    Retry::Timeout => stats.timeouts += 1,
                }
                retries += 1;
                if retries >= MAX_RETRIES {
                    return Err(format!(
                        "a transaction was rolled back {retries} times in a row (last: {why:?}); \
                         giving up"
                    )
                    .into());
                }
            }
        }
    }
}

/// A put, in a transaction of `mode` if there is one.
fn put(
    db: &dyn Engine,
    mode: Option<TxnMode>,
    (key, value): (&[u8], &[u8]),
    sync: bool,
    stats: &mut ThreadStats,
) -> EngineResult<()> {
    match mode {
        None => db.put(key, value, sync),
        Some(m) => {
            let entry = [(key.to_vec(), value.to_vec())];
            in_txn(db, m, TxnOp::Put(&entry), sync, stats).map(|_| ())
        }
    }
}

/// A get (the length of the value found), in a transaction of `mode` if there is one.
fn get(
    db: &dyn Engine,
    mode: Option<TxnMode>,
    key: &[u8],
    stats: &mut ThreadStats,
) -> EngineResult<Option<usize>> {
    match mode {
        None => db.get(key),
        Some(m) => {
            let read = in_txn(db, m, TxnOp::Get(key), false, stats)?;
            Ok(read.found.then(|| read.bytes as usize - key.len()))
        }
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

/// Bytes of randomtransaction's set prefix: the set's number, from 1, in decimal digits.
const SET_PREFIX_LEN: usize = 4;

/// Writes the range tombstone of `rule` that begins at key number `begin`, and marks the
/// keys it deletes (those of its column family) as gone. Returns false, writing nothing,
/// when the range would wrap past the largest key of --key_size (keys under 8 bytes).
fn delete_range(
    args: &BenchArgs,
    db: &dyn Engine,
    live: &LiveKeys,
    rule: RangeTombstones,
    begin: u64,
    sync: bool,
) -> EngineResult<bool> {
    let end = begin.saturating_add(rule.width);
    let (mut b, mut e) = (vec![0u8; args.key_size], vec![0u8; args.key_size]);
    fill_key(begin, &mut b);
    fill_key(end, &mut e);
    if e <= b {
        return Ok(false);
    }
    db.delete_range(&b, &e, sync)?;
    let families = args.num_column_families.max(1);
    let family = engine::family_of(&b, families);
    for k in begin..end.min(args.num) {
        fill_key(k, &mut e);
        if engine::family_of(&e, families) == family {
            live.delete(k);
        }
    }
    Ok(true)
}

/// Draws a step's progress bar until `done`: operations out of the step's total, or seconds
/// out of --duration.
fn show_progress(args: &BenchArgs, name: &str, step: Step, ops: &AtomicU64, done: &AtomicBool) {
    let threads = args.threads as u64;
    let (total, by_time) = match step {
        _ if args.duration > 0 => (args.duration, true),
        Step::Fill(_) | Step::Delete(_) => (args.writes() * threads, false),
        Step::FillSync => ((args.writes() / 1000).max(1) * threads, false),
        Step::FillSeqIngest => (args.writes() * threads, false),
        _ => (args.reads() * threads, false),
    };
    let bar = indicatif::ProgressBar::new(total);
    let template = if by_time {
        "{msg:>12} [{bar:40}] {pos}/{len} s"
    } else {
        "{msg:>12} [{bar:40}] {pos}/{len} ops, {per_sec}, eta {eta}"
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(name.to_string());
    let start = Instant::now();
    while !done.load(Ordering::Acquire) {
        bar.set_position(if by_time {
            start.elapsed().as_secs()
        } else {
            ops.load(Ordering::Relaxed)
        });
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}

/// The writer of the *whilewriting steps: random puts, at most
/// `--benchmark_write_rate_limit` bytes per second, until `done`.
fn background_writer(
    args: &BenchArgs,
    db: &dyn Engine,
    live: &LiveKeys,
    done: &AtomicBool,
    thread_number: u64,
) -> EngineResult<WriterStats> {
    let (mut rng, mut values) = thread_generators(args, thread_number);
    let mut key = vec![0u8; args.key_size];
    let shape = args.key_shape();
    let start = Instant::now();
    let mut bytes = 0u64;
    let mut puts = 0;
    while !done.load(Ordering::Acquire) {
        let k = rng.below(args.num.max(1));
        shape.fill(k, &mut key);
        db.put(&key, values.next(args.value_size), args.options.sync)?;
        live.put(k);
        puts += 1;
        bytes += (args.key_size + args.value_size) as u64;
        if args.benchmark_write_rate_limit > 0 {
            let due = bytes as f64 / args.benchmark_write_rate_limit as f64;
            let ahead = due - start.elapsed().as_secs_f64();
            if ahead > 0.0 {
                std::thread::sleep(std::time::Duration::from_secs_f64(ahead.min(0.1)));
            }
        }
    }
    Ok(WriterStats { puts, bytes })
}

/// What the writer of a *whilewriting step did.
struct WriterStats {
    puts: u64,
    bytes: u64,
}

/// 0..n in a random order (Fisher-Yates).
fn shuffled(n: u64, rng: &mut Rng) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
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
        for (name, _) in STEPS {
            assert!(e.contains(name), "{name} missing from: {e}");
            assert!(parse_step(name).is_ok());
        }
    }
}
