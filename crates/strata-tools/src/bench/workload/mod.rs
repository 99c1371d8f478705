//! The workloads of `strata bench`: steps of `--benchmarks` that model an application rather
//! than one db_bench loop (YCSB's core workloads, the expanding-range read, Linkbench, the
//! insert benchmark), one module each, on the engine's workload operations ([`Engine::get_value`], [`Engine::write_ops`],
//! [`Engine::scan_range`], [`Engine::run_transaction`]).
//!
//! What they share lives here:
//!
//! - The step table ([`STEPS`]) and what each step needs before the database is opened: its
//!   column families ([`WorkloadStep::families`]) and a check of the flags against the
//!   engine ([`WorkloadStep::check`]), whose error names the step, the flag and the engine.
//! - The threads of a step ([`run_threads`], and [`run_step_threads`], which the db_bench
//!   steps of `steps.rs` run on too, with a writer beside them and a progress bar): each
//!   thread gets a [`Recorder`] that times
//!   every operation under its operation type (READ, UPDATE, ...), counts what it read and
//!   wrote, retries transactions ([`Recorder::transaction`]) and feeds the
//!   `--report_interval_seconds` sampler and `--plot`. The step's [`Outcome`] goes through
//!   the same reporting as the db_bench steps (result line, write-amp, IO and CPU per
//!   operation, the tree, the database size), with a table of the operation types before
//!   it: count, share, ops/s, p50/p99/p99.9/max latency.
//! - The workload marker: a file `WORKLOAD` in the database directory names the workload that
//!   built the database (first line) and holds what its later steps need to know
//!   (`name=value` lines, e.g. YCSB's record count). A load step claims the database
//!   ([`claim`]); the other steps require it ([`require`]), so that a step run on a
//!   database built by another workload is refused with a message naming both.

mod batch;
mod expanding_range;
mod insert_bench;
mod linkbench;
mod linkbench_data;
mod linkbench_gen;
mod ycsb;
mod zipfian;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::engine::{Engine, EngineResult, Retry, TxnBody, TxnMode, TxnOp, TxnRead};
use super::report::{Histogram, IntervalReporter, Intervals, Meter, ThreadStats};
use super::{BenchArgs, BoxError};

pub use ycsb::YcsbMix;

/// A workload step of `--benchmarks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadStep {
    /// YCSB's load phase: `--ycsb_records` records inserted.
    YcsbLoad,
    /// One of YCSB's core workloads A to F.
    Ycsb(YcsbMix),
    /// readrandom over a key range that grows until it covers `--num` keys.
    ExpandingRange,
    /// Linkbench's load phase: `--linkbench_nodes` nodes and their links.
    LinkbenchLoad,
    /// Linkbench's request phase.
    Linkbench,
    /// A step of the insert benchmark.
    InsertBench(insert_bench::Step),
}

/// The workload steps by name, in the order `--help` lists them.
pub const STEPS: &[(&str, WorkloadStep)] = &[
    ("ycsb_load", WorkloadStep::YcsbLoad),
    ("ycsb_a", WorkloadStep::Ycsb(YcsbMix::A)),
    ("ycsb_b", WorkloadStep::Ycsb(YcsbMix::B)),
    ("ycsb_c", WorkloadStep::Ycsb(YcsbMix::C)),
    ("ycsb_d", WorkloadStep::Ycsb(YcsbMix::D)),
    ("ycsb_e", WorkloadStep::Ycsb(YcsbMix::E)),
    ("ycsb_f", WorkloadStep::Ycsb(YcsbMix::F)),
    ("expandingrange", WorkloadStep::ExpandingRange),
    ("linkbench_load", WorkloadStep::LinkbenchLoad),
    ("linkbench", WorkloadStep::Linkbench),
    (
        "insertbench_l_i0",
        WorkloadStep::InsertBench(insert_bench::Step::LoadWithoutIndexes),
    ),
    (
        "insertbench_create_index",
        WorkloadStep::InsertBench(insert_bench::Step::CreateIndexes),
    ),
    (
        "insertbench_l_i1",
        WorkloadStep::InsertBench(insert_bench::Step::Insert),
    ),
    (
        "insertbench_l_i2",
        WorkloadStep::InsertBench(insert_bench::Step::InsertDelete),
    ),
    (
        "insertbench_qr100",
        WorkloadStep::InsertBench(insert_bench::Step::Query {
            rows_per_second: 100,
        }),
    ),
    (
        "insertbench_qr500",
        WorkloadStep::InsertBench(insert_bench::Step::Query {
            rows_per_second: 500,
        }),
    ),
    (
        "insertbench_qr1000",
        WorkloadStep::InsertBench(insert_bench::Step::Query {
            rows_per_second: 1000,
        }),
    ),
];

impl WorkloadStep {
    /// The column families the step's workload keeps its data in (the first is "default"),
    /// or `None` for a workload on db_bench's key layout (the families of
    /// `--num_column_families`).
    pub fn families(self) -> Option<&'static [&'static str]> {
        match self {
            WorkloadStep::YcsbLoad | WorkloadStep::Ycsb(_) | WorkloadStep::ExpandingRange => None,
            WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench => {
                Some(&linkbench_data::FAMILIES)
            }
            WorkloadStep::InsertBench(_) => Some(&insert_bench::FAMILIES),
        }
    }

    /// The flags (and the engine) the step cannot run with, as an error naming the step,
    /// the flag and the engine.
    pub fn check(self, name: &str, args: &BenchArgs) -> Result<(), String> {
        match self {
            WorkloadStep::YcsbLoad | WorkloadStep::Ycsb(_) => ycsb::check_flags(name, args),
            WorkloadStep::ExpandingRange => expanding_range::check_flags(name, args),
            WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench => {
                linkbench::check_flags(name, args)
            }
            WorkloadStep::InsertBench(_) => insert_bench::check_flags(name, args),
        }
    }

    /// Runs the step.
    fn run(self, ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
        match self {
            WorkloadStep::YcsbLoad => ycsb::load(ctx),
            WorkloadStep::Ycsb(mix) => ycsb::run(ctx, mix),
            WorkloadStep::ExpandingRange => expanding_range::run(ctx),
            WorkloadStep::LinkbenchLoad => linkbench::load(ctx),
            WorkloadStep::Linkbench => linkbench::run(ctx),
            WorkloadStep::InsertBench(step) => insert_bench::run(ctx, step),
        }
    }

    /// The workload whose data the step reads and writes, when it has column families of
    /// its own.
    pub fn workload(self) -> Option<&'static str> {
        match self {
            WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench => Some(linkbench::WORKLOAD),
            WorkloadStep::InsertBench(_) => Some(insert_bench::WORKLOAD),
            _ => None,
        }
    }

    /// The merge operator the step's writes need, set for the run when `--merge_operator`
    /// is not given.
    pub fn merge_operator(self, args: &BenchArgs) -> Option<&'static str> {
        match self {
            WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench => {
                linkbench::merge_operator(args)
            }
            _ => None,
        }
    }
}

/// The families to open the database with for the workload steps of a run: those of its
/// workloads (which must agree), or `None` when none has families of its own.
pub fn families_of_run<'a>(
    steps: impl IntoIterator<Item = (&'a str, WorkloadStep)>,
    args: &BenchArgs,
) -> Result<Option<&'static [&'static str]>, String> {
    let mut chosen: Option<(&str, &'static [&'static str])> = None;
    for (name, step) in steps {
        let Some(families) = step.families() else {
            continue;
        };
        if args.num_column_families > 1 {
            return Err(format!(
                "{name}: --num_column_families={} does not fit: the workload has column \
                 families of its own ({})",
                args.num_column_families,
                families.join(", ")
            ));
        }
        match chosen {
            Some((other, f)) if f != families => {
                return Err(format!(
                    "{name} and {other} cannot run on one database: their column families \
                     differ ({} against {})",
                    families.join(", "),
                    f.join(", ")
                ))
            }
            Some(_) => {}
            None => chosen = Some((name, families)),
        }
    }
    Ok(chosen.map(|(_, f)| f))
}

/// The header lines of a run's workloads (after db_bench's header): what their flags make.
pub fn header_lines(steps: &[WorkloadStep], args: &BenchArgs) -> Vec<String> {
    let mut lines = Vec::new();
    if steps
        .iter()
        .any(|s| matches!(s, WorkloadStep::YcsbLoad | WorkloadStep::Ycsb(_)))
    {
        lines.push(ycsb::header(args));
    }
    if steps.contains(&WorkloadStep::ExpandingRange) {
        lines.push(expanding_range::header(args));
    }
    if steps
        .iter()
        .any(|s| matches!(s, WorkloadStep::LinkbenchLoad | WorkloadStep::Linkbench))
    {
        lines.push(linkbench::header(args));
    }
    if steps
        .iter()
        .any(|s| matches!(s, WorkloadStep::InsertBench(_)))
    {
        lines.push(insert_bench::header(args));
    }
    lines
}

/// What a workload step is given.
pub struct Ctx<'a> {
    pub args: &'a BenchArgs,
    pub db: &'a dyn Engine,
    /// The step's name in `--benchmarks`.
    pub name: &'a str,
    /// When the run began (the interval samples count from there).
    pub run_started: Instant,
}

/// What a workload step did, for the report.
pub struct Outcome {
    /// Operations per type, every thread's.
    pub ops: OpStats,
    /// The counts the db_bench report uses: operations done, bytes read and written, the
    /// threads' busy seconds, transactions and their retries.
    pub total: ThreadStats,
    /// Wall-clock seconds of the step.
    pub elapsed: f64,
    /// The end of the result line, e.g. `( records:1000 )`.
    pub message: String,
    /// Lines printed after the result line and the table of operation types.
    pub notes: Vec<String>,
    /// The interval samples (with `--report_interval_seconds` or `--plot`).
    pub intervals: Option<Intervals>,
    /// What the writer beside the threads did ([`Threads::writer`]), if there was one.
    pub writer: Option<WriterStats>,
}

/// The statistics of one operation type.
#[derive(Clone, Default)]
pub struct OpTypeStats {
    pub count: u64,
    /// Operations that found nothing to read (a missing key, an empty scan).
    pub not_found: u64,
    pub hist: Histogram,
}

/// Statistics per operation type, in the order of the workload's list of types.
#[derive(Clone)]
pub struct OpStats {
    names: &'static [&'static str],
    types: Vec<OpTypeStats>,
}

impl OpStats {
    pub fn new(names: &'static [&'static str]) -> OpStats {
        OpStats {
            names,
            types: vec![OpTypeStats::default(); names.len()],
        }
    }

    /// The statistics of type number `op` of the list.
    pub fn get(&self, op: usize) -> &OpTypeStats {
        &self.types[op]
    }

    /// Operations of every type.
    pub fn total(&self) -> u64 {
        self.types.iter().map(|t| t.count).sum()
    }

    pub fn merge(&mut self, other: &OpStats) {
        for (a, b) in self.types.iter_mut().zip(&other.types) {
            a.count += b.count;
            a.not_found += b.not_found;
            a.hist.merge(&b.hist);
        }
    }

    /// The table of the report: one line per type that ran, with its share of the
    /// operations, its rate over the step's `elapsed` seconds and its latencies.
    pub fn table(&self, elapsed: f64) -> Vec<String> {
        let total = self.total().max(1) as f64;
        let width = self
            .names
            .iter()
            .map(|n| n.len())
            .chain(["operation".len()])
            .max()
            .unwrap_or(0);
        let mut lines = vec![format!(
            "{:<width$} {:>10} {:>6} {:>10} {:>9} {:>9} {:>9} {:>9}",
            "operation", "count", "share", "ops/s", "p50 us", "p99 us", "p99.9 us", "max us"
        )];
        for (name, t) in self.names.iter().zip(&self.types) {
            if t.count == 0 {
                continue;
            }
            let mut line = format!(
                "{name:<width$} {:>10} {:>5.1}% {:>10.0} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
                t.count,
                100.0 * t.count as f64 / total,
                t.count as f64 / elapsed.max(1e-9),
                t.hist.percentile_us(0.5),
                t.hist.percentile_us(0.99),
                t.hist.percentile_us(0.999),
                t.hist.max_us()
            );
            if t.not_found > 0 {
                line.push_str(&format!(" ({} found nothing)", t.not_found));
            }
            lines.push(line);
        }
        lines
    }
}

/// What one thread of a workload step records: every operation timed under its type, the
/// bytes it moved, its transactions.
pub struct Recorder<'a> {
    pub ops: OpStats,
    /// Operations done, bytes read and written (the denominator of write-amp), transactions
    /// and their retries, as the db_bench steps count them.
    pub stats: ThreadStats,
    meter: Option<Meter<'a>>,
    progress: Option<&'a AtomicU64>,
    deadline: Option<Instant>,
    /// `--histogram`: [`Recorder::tick`] records latencies in `stats.hist`.
    histogram: bool,
}

impl Recorder<'_> {
    /// True while the thread should do operation number `done` of its `limit` (with
    /// `--duration`: until the time is up, whatever the limit).
    pub fn more(&self, done: u64, limit: u64) -> bool {
        match self.deadline {
            Some(_) => self.in_time(),
            None => done < limit,
        }
    }

    /// False once `--duration` is up (always true without it).
    pub fn in_time(&self) -> bool {
        self.deadline.is_none_or(|d| Instant::now() < d)
    }

    /// Records one operation of type `op` that began at `start`; `found`: it found what it
    /// read (false counts it as found nothing).
    pub fn record(&mut self, op: usize, start: Instant, found: bool) {
        let latency = start.elapsed();
        let t = &mut self.ops.types[op];
        t.count += 1;
        t.not_found += u64::from(!found);
        t.hist.record(latency);
        self.stats.done += 1;
        self.stats.found += u64::from(found);
        self.stats.hist.record(latency);
        if let Some(m) = &self.meter {
            m.record(Some(latency));
        }
        if let Some(p) = self.progress {
            p.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts bytes read (keys and values).
    pub fn read_bytes(&mut self, bytes: usize) {
        self.stats.bytes += bytes as u64;
    }

    /// Counts bytes written (keys and values): what write-amp divides by.
    pub fn wrote_bytes(&mut self, bytes: usize) {
        self.stats.bytes += bytes as u64;
        self.stats.written += bytes as u64;
    }

    /// Whether [`Recorder::tick`] wants the operations' start times: with `--histogram` or
    /// interval samples. Without them a db_bench step reads no clock per operation.
    pub fn timing(&self) -> bool {
        self.histogram || self.meter.is_some()
    }

    /// Counts one operation of a db_bench step that began at `start` (`None` when not
    /// [`Recorder::timing`], or for the operations of a batch after its first): its latency
    /// goes to the histogram with `--histogram` and to the interval samples.
    pub fn tick(&mut self, start: Option<Instant>) {
        self.stats.done += 1;
        let latency = start.map(|t| t.elapsed());
        if let (Some(d), true) = (latency, self.histogram) {
            self.stats.hist.record(d);
        }
        if let Some(m) = &self.meter {
            m.record(latency);
        }
        if let Some(p) = self.progress {
            p.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Runs `body` as a transaction of `mode` until it commits, counting its retries by
    /// cause; gives up after [`MAX_RETRIES`] in a row.
    pub fn transaction(
        &mut self,
        db: &dyn Engine,
        mode: TxnMode,
        sync: bool,
        body: TxnBody<'_>,
    ) -> EngineResult<()> {
        retrying(&mut self.stats, || {
            db.run_transaction(mode, sync, &mut *body)
        })?;
        self.stats.commits += 1;
        Ok(())
    }

    /// Runs the one operation `op` of a db_bench step as a transaction of `mode` until it
    /// commits (or, reading only, ends), counting its retries by cause.
    pub fn txn_op(
        &mut self,
        db: &dyn Engine,
        mode: TxnMode,
        op: TxnOp<'_>,
        sync: bool,
    ) -> EngineResult<TxnRead> {
        let read = retrying(&mut self.stats, || db.transaction(mode, op, sync))?;
        match op.read_only() {
            true => self.stats.read_only_txns += 1,
            false => self.stats.commits += 1,
        }
        Ok(read)
    }
}

/// Runs `attempt` until it is not rolled back, counting the rollbacks in `stats` by cause;
/// gives up after [`MAX_RETRIES`] in a row.
fn retrying<T>(
    stats: &mut ThreadStats,
    mut attempt: impl FnMut() -> EngineResult<Result<T, Retry>>,
) -> EngineResult<T> {
    let mut retries = 0;
    loop {
        match attempt()? {
            Ok(done) => return Ok(done),
            Err(why) => {
                match why {
                    Retry::Conflict => stats.conflicts += 1,
                    Retry::Deadlock => stats.deadlocks += 1,
                    Retry::Timeout => stats.timeouts += 1,
                }
                retries += 1;
                if retries >= MAX_RETRIES {
                    return Err(format!(
                        "a transaction was rolled back {retries} times in a row (last: \
                         {why:?}); giving up"
                    )
                    .into());
                }
            }
        }
    }
}

/// The most times one transaction is run again before the step gives up.
pub const MAX_RETRIES: u64 = 100_000;

/// How a step shows its progress on stderr (when it is a terminal).
pub enum Progress {
    /// A spinner with the operations done and their rate (a workload's steps do not all
    /// know their count ahead).
    Spinner,
    /// A bar of `total` operations, or of `total` seconds when `by_time` (`--duration`).
    Bar { total: u64, by_time: bool },
}

/// What the writer beside a step's threads did.
pub struct WriterStats {
    pub puts: u64,
    pub bytes: u64,
}

/// A thread run beside a step's threads until they are done (the writer of the
/// *whilewriting steps), given the flag that says so and its thread number.
pub type Writer<'a> = &'a (dyn Fn(&AtomicBool, u64) -> EngineResult<WriterStats> + Sync);

/// The threads of a step.
pub struct Threads<'a> {
    pub count: usize,
    /// The operation types the recorders time operations under (none for a db_bench step,
    /// whose operations are of one kind).
    pub op_names: &'static [&'static str],
    pub progress: Progress,
    pub writer: Option<Writer<'a>>,
}

/// Runs `work` on `threads` threads (thread index, the run's thread number for seeding as
/// the db_bench steps do, and the thread's recorder), timing the step; the recorders of
/// every thread are merged into the outcome, whose message and notes the caller fills in.
pub fn run_threads<F>(
    ctx: &Ctx<'_>,
    threads: usize,
    op_names: &'static [&'static str],
    work: F,
) -> Result<Outcome, BoxError>
where
    F: Fn(usize, u64, &mut Recorder<'_>) -> EngineResult<()> + Sync,
{
    let threads = Threads {
        count: threads,
        op_names,
        progress: Progress::Spinner,
        writer: None,
    };
    run_step_threads(ctx, threads, work)
}

/// The one runner of `strata bench`'s steps, db_bench's and the workloads': runs `work` on
/// `threads.count` threads as [`run_threads`] does, with the writer beside them if there is
/// one (started first, so that it takes the first thread number), the interval reporter and
/// the progress display on stderr.
pub fn run_step_threads<F>(
    ctx: &Ctx<'_>,
    threads: Threads<'_>,
    work: F,
) -> Result<Outcome, BoxError>
where
    F: Fn(usize, u64, &mut Recorder<'_>) -> EngineResult<()> + Sync,
{
    let args = ctx.args;
    let op_names = threads.op_names;
    let start = Instant::now();
    let deadline = (args.duration > 0).then(|| start + Duration::from_secs(args.duration));
    let done = AtomicBool::new(false);
    let reporter = (args.report_interval() > 0)
        .then(|| IntervalReporter::new(args, ctx.name, threads.count, ctx.run_started));
    // Operations are counted for the progress display only when it is drawn.
    let progress = std::io::stderr().is_terminal().then(|| AtomicU64::new(0));
    let (results, writer, intervals) = std::thread::scope(|s| {
        let writer = threads.writer.map(|w| {
            let number = super::THREADS_STARTED.fetch_add(1, Ordering::Relaxed) + 1;
            let done = &done;
            s.spawn(move || w(done, number))
        });
        let reporting = reporter.as_ref().map(|r| {
            let done = &done;
            s.spawn(move || r.run(ctx.db, done))
        });
        let ticker = progress.as_ref().map(|p| {
            let (done, how) = (&done, &threads.progress);
            s.spawn(move || show_progress(ctx.name, how, p, done))
        });
        let handles: Vec<_> = (0..threads.count)
            .map(|i| {
                let number = super::THREADS_STARTED.fetch_add(1, Ordering::Relaxed) + 1;
                let mut recorder = Recorder {
                    ops: OpStats::new(op_names),
                    stats: ThreadStats::default(),
                    meter: reporter.as_ref().map(|r| r.meter(i)),
                    progress: progress.as_ref(),
                    deadline,
                    histogram: args.histogram,
                };
                let work = &work;
                s.spawn(move || {
                    let began = Instant::now();
                    ctx.db.start_perf_context(args.perf_level);
                    let result = work(i, number, &mut recorder);
                    recorder.stats.perf = ctx.db.take_perf_context();
                    recorder.stats.seconds = began.elapsed().as_secs_f64();
                    result.map(|()| (recorder.ops, recorder.stats))
                })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect();
        done.store(true, Ordering::Release);
        if let Some(t) = ticker {
            t.join().expect("progress thread panicked");
        }
        let writer = writer.map(|w| w.join().expect("writer thread panicked"));
        let intervals = reporting.map(|r| r.join().expect("report thread panicked"));
        (results, writer, intervals)
    });
    let writer = match writer {
        Some(r) => Some(r.map_err(|e| format!("{}: writer: {e}", ctx.name))?),
        None => None,
    };
    let elapsed = start.elapsed().as_secs_f64();
    let mut ops = OpStats::new(op_names);
    let mut total = ThreadStats::default();
    for r in results {
        let (o, t) = r.map_err(|e| format!("{}: {e}", ctx.name))?;
        ops.merge(&o);
        total.merge(&t);
    }
    Ok(Outcome {
        ops,
        total,
        elapsed,
        message: String::new(),
        notes: Vec::new(),
        intervals,
        writer,
    })
}

/// Draws a step's progress on stderr until `done`: a spinner with the operations done and
/// their rate, or a bar of operations (or seconds) out of the step's total.
fn show_progress(name: &str, how: &Progress, ops: &AtomicU64, done: &AtomicBool) {
    let (bar, by_time) = match *how {
        Progress::Spinner => {
            let bar = indicatif::ProgressBar::new_spinner();
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{msg:>12} {spinner} {pos} ops, {per_sec}")
            {
                bar.set_style(style);
            }
            (bar, false)
        }
        Progress::Bar { total, by_time } => {
            let bar = indicatif::ProgressBar::new(total);
            let template = if by_time {
                "{msg:>12} [{bar:40}] {pos}/{len} s"
            } else {
                "{msg:>12} [{bar:40}] {pos}/{len} ops, {per_sec}, eta {eta}"
            };
            if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            (bar, by_time)
        }
    };
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

/// Runs a workload step and returns what it did.
pub fn run_step(step: WorkloadStep, ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
    step.run(ctx)
}

/// The file in the database directory naming the workload that built the database.
pub const MARKER_FILE: &str = "WORKLOAD";

/// The contents of the workload marker: the workload's name and its `name=value` facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub workload: String,
    pub facts: BTreeMap<String, String>,
}

impl Marker {
    pub fn new(workload: &str) -> Marker {
        Marker {
            workload: workload.to_string(),
            facts: BTreeMap::new(),
        }
    }

    /// The marker of the database at `dir`, if it has one.
    pub fn read(dir: &Path) -> Result<Option<Marker>, String> {
        let path = dir.join(MARKER_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut lines = text.lines();
        let workload = lines.next().unwrap_or("").trim();
        if workload.is_empty() {
            return Err(format!(
                "{}: empty workload marker (its first line names a workload)",
                path.display()
            ));
        }
        let mut facts = BTreeMap::new();
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let Some((name, value)) = line.split_once('=') else {
                return Err(format!(
                    "{}: the line {line:?} of the workload marker is not name=value",
                    path.display()
                ));
            };
            facts.insert(name.trim().to_string(), value.trim().to_string());
        }
        Ok(Some(Marker {
            workload: workload.to_string(),
            facts,
        }))
    }

    /// Writes the marker into `dir` (replacing the file whole: a crash leaves the old one or
    /// the new one).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let mut text = format!("{}\n", self.workload);
        for (name, value) in &self.facts {
            text.push_str(&format!("{name}={value}\n"));
        }
        let path = dir.join(MARKER_FILE);
        let temp = dir.join(format!("{MARKER_FILE}.tmp"));
        std::fs::write(&temp, text)
            .and_then(|()| std::fs::rename(&temp, &path))
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The fact `name` as a number.
    pub fn number(&self, name: &str) -> Result<u64, String> {
        let value = self.facts.get(name).ok_or_else(|| {
            format!(
                "the {} workload marker has no {name} (was the load step interrupted?)",
                self.workload
            )
        })?;
        value.parse().map_err(|_| {
            format!(
                "the {} workload marker's {name} is {value:?}, not a number",
                self.workload
            )
        })
    }
}

/// The load step `step` of `workload` takes the database: refused when another workload
/// built it. Returns the marker to fill and [`Marker::write`].
pub fn claim(db: &dyn Engine, workload: &str, step: &str) -> Result<Marker, String> {
    match Marker::read(db.path())? {
        Some(m) if m.workload != workload => Err(format!(
            "{step}: the database at {} was built by the {} workload (its {MARKER_FILE} file \
             says so); {step} loads {workload} only into a new database or one of its own",
            db.path().display(),
            m.workload
        )),
        Some(m) => Ok(m),
        None => Ok(Marker::new(workload)),
    }
}

/// The step `step` of `workload` runs on a database its load step built: refused when
/// another workload built it, or none did.
pub fn require(db: &dyn Engine, workload: &str, step: &str, load: &str) -> Result<Marker, String> {
    match Marker::read(db.path())? {
        Some(m) if m.workload == workload => Ok(m),
        Some(m) => Err(format!(
            "{step}: the database at {} was built by the {} workload, not {workload} (its \
             {MARKER_FILE} file says so): run {load} on a new database first",
            db.path().display(),
            m.workload
        )),
        None => Err(format!(
            "{step}: the database at {} was not loaded by {load} (it has no {MARKER_FILE} \
             file): run {load} first, in this run or an earlier one with --use_existing_db",
            db.path().display()
        )),
    }
}

/// A step on db_bench's key layout (not a workload's) refuses a database a workload built.
pub fn refuse_workload_db(db: &dyn Engine, step: &str) -> Result<(), String> {
    match Marker::read(db.path())? {
        Some(m) => Err(format!(
            "{step}: the database at {} was built by the {} workload (its {MARKER_FILE} file \
             says so); {step} reads db_bench's keys, written by fillseq or fillrandom",
            db.path().display(),
            m.workload
        )),
        None => Ok(()),
    }
}

/// Before the database is opened, a database another workload built is refused naming that
/// workload, where opening would fail or change it: a step of a workload with column
/// families of its own (opening would add them), any workload step on a database whose
/// builder has families of its own, and a run with none of that builder's steps (only they
/// open its families). `steps`: each step's name, and its workload step if it is one.
pub fn refuse_foreign_database(
    dir: &Path,
    steps: &[(&str, Option<WorkloadStep>)],
) -> Result<(), String> {
    let Some(marker) = Marker::read(dir)? else {
        return Ok(());
    };
    let built_by = marker.workload.as_str();
    let families = STEPS
        .iter()
        .find(|(_, s)| s.workload() == Some(built_by))
        .and_then(|(_, s)| s.families());
    let refused = |name: &str| {
        format!(
            "{name}: the database at {} was built by the {built_by} workload (its \
             {MARKER_FILE} file says so): run {name} on a new database",
            dir.display()
        )
    };
    let mut its_own = false;
    for &(name, step) in steps {
        match step.map(|s| s.workload()) {
            Some(Some(w)) if w == built_by => its_own = true,
            // Another workload with families of its own would add them to this database.
            Some(Some(_)) => return Err(refused(name)),
            // Any other workload's step cannot open this one's families.
            Some(None) if families.is_some() => return Err(refused(name)),
            Some(None) | None => {}
        }
    }
    match (families, steps.first()) {
        (Some(families), Some(&(name, _))) if !its_own => Err(format!(
            "{name}: the database at {} was built by the {built_by} workload (its {MARKER_FILE} \
             file says so); only that workload's steps open its column families ({})",
            dir.display(),
            families.join(", ")
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_bad_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Marker::read(dir.path()).unwrap(), None);
        let mut m = Marker::new("ycsb");
        m.facts.insert("records".into(), "1000".into());
        m.write(dir.path()).unwrap();
        let back = Marker::read(dir.path()).unwrap().unwrap();
        assert_eq!(back, m);
        assert_eq!(back.number("records").unwrap(), 1000);
        assert!(back.number("fields").unwrap_err().contains("no fields"));
        for (text, error) in [
            ("\n", "empty workload marker"),
            ("ycsb\nrecords\n", "not name=value"),
        ] {
            std::fs::write(dir.path().join(MARKER_FILE), text).unwrap();
            let e = Marker::read(dir.path()).unwrap_err();
            assert!(e.contains(error), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_table_lists_the_types_that_ran_with_their_share() {
        let mut ops = OpStats::new(&["READ", "UPDATE", "SCAN"]);
        for (op, n) in [(0, 3), (1, 1)] {
            for _ in 0..n {
                ops.types[op].count += 1;
                ops.types[op].hist.record(Duration::from_micros(10));
            }
        }
        ops.types[0].not_found = 1;
        let table = ops.table(2.0);
        assert_eq!(table.len(), 3, "{table:?}");
        assert!(table[1].starts_with("READ  "), "{}", table[1]);
        assert!(table[1].contains(" 75.0% "), "{}", table[1]);
        assert!(table[1].ends_with("(1 found nothing)"), "{}", table[1]);
        assert!(table[2].contains(" 25.0% "), "{}", table[2]);
        assert_eq!(ops.get(1).count, 1);
        assert_eq!(ops.total(), 4);
    }
}
