//! The threads of a step: [`run_threads`] for a workload's threads, [`run_step_threads`]
//! (which the db_bench steps of `steps.rs` run on too) with a writer beside them and a
//! progress bar on stderr when it is a terminal. Each thread gets a [`Recorder`]; the
//! recorders are merged into the step's [`Outcome`].

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Ctx, OpStats, Outcome, Recorder};
use crate::bench::engine::EngineResult;
use crate::bench::report::{IntervalReporter, ThreadStats};
use crate::bench::BoxError;
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
            let number = crate::bench::THREADS_STARTED.fetch_add(1, Ordering::Relaxed) + 1;
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
                let number = crate::bench::THREADS_STARTED.fetch_add(1, Ordering::Relaxed) + 1;
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
