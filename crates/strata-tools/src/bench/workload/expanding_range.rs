//! `expandingrange`: readrandom whose key range grows, to watch reads leave the cache as
//! the working set outgrows it.
//!
//! The threads read random keys of db_bench's layout (written before by fillseq or
//! fillrandom) among the first `range` keys. The range starts at `--expand_start` keys and
//! grows by `--expand_step` at the end of each interval (`--expand_interval` seconds, or
//! `--expand_interval_reads` reads of all threads) until it covers the `--num` keys; the
//! interval at the full range is the last. Each interval prints its range, its throughput,
//! the share of keys found, and how many reads went to the disk per get: the engine's block
//! cache misses (and, where it counts them, table bytes read) and the bytes the process read
//! from the block layer (/proc/self/io `read_bytes`), all divided by the interval's gets.
//! With `--plot FILE.svg` the intervals are drawn beside it, in FILE-expandingrange.svg:
//! throughput and disk bytes read per get against the range.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{refuse_workload_db, run_threads, Ctx, Outcome};
use crate::bench::engine::{Counters, EngineKind};
use crate::bench::plot::{self, Axes, Sample};
use crate::bench::report::{Histogram, ProcSample};
use crate::bench::{thread_generators, BenchArgs, BoxError};

const OP_NAMES: &[&str] = &["READ"];
const READ: usize = 0;

/// The flags expandingrange cannot run with.
pub fn check_flags(name: &str, args: &BenchArgs) -> Result<(), String> {
    let problems = [
        (
            args.expand_start() == 0,
            "--expand_start must be at least 1".to_string(),
        ),
        (
            args.expand_start() > args.num,
            format!(
                "--expand_start ({}) must be at most --num ({})",
                args.expand_start(),
                args.num
            ),
        ),
        (
            args.expand_step() == 0,
            "--expand_step must be at least 1".to_string(),
        ),
        (
            args.expand_interval == 0 && args.expand_interval_reads == 0,
            "--expand_interval must be at least 1 second (or set --expand_interval_reads)"
                .to_string(),
        ),
        (
            args.duration > 0,
            "--duration does not apply: the step ends after the interval that covers --num keys"
                .to_string(),
        ),
    ];
    match problems.iter().find(|(bad, _)| *bad) {
        Some((_, why)) => Err(format!("{name}: {why}")),
        None => Ok(()),
    }
}

/// The run's header line.
pub fn header(args: &BenchArgs) -> String {
    let every = match args.expand_interval_reads {
        0 => format!("{} s", args.expand_interval),
        n => format!("{n} reads"),
    };
    format!(
        "Expanding:  read range from {} keys, {} more every {every}, to --num ({})",
        args.expand_start(),
        args.expand_step(),
        args.num
    )
}

/// What one interval saw.
#[derive(Clone, Debug)]
struct Interval {
    /// Keys 0 to range-1 were read.
    range: u64,
    reads: u64,
    found: u64,
    seconds: f64,
    cache_misses: u64,
    table_bytes_read: Option<u64>,
    disk_read: u64,
    p99_us: f64,
}

impl Interval {
    fn per_get(&self, n: u64) -> f64 {
        n as f64 / self.reads.max(1) as f64
    }

    fn line(&self, number: usize, num: u64, engine: EngineKind) -> String {
        let cache = match engine {
            EngineKind::Lmdb => "no block cache (LMDB reads through the page cache)".to_string(),
            _ => format!(
                "{:.2} block cache misses/get",
                self.per_get(self.cache_misses)
            ),
        };
        let table = match self.table_bytes_read {
            Some(b) => format!(", {:.0} table bytes read/get", self.per_get(b)),
            None => String::new(),
        };
        format!(
            "interval {number}: keys 0..{} ({:.1}% of --num), {} reads in {:.2} s = {:.0} reads/s, \
             {:.1}% found, p99 {:.1} us | {cache}{table}, disk read {:.0} B/get (/proc/self/io)",
            self.range,
            100.0 * self.range as f64 / num as f64,
            self.reads,
            self.seconds,
            self.reads as f64 / self.seconds.max(1e-9),
            100.0 * self.found as f64 / self.reads.max(1) as f64,
            self.p99_us,
            self.per_get(self.disk_read),
        )
    }
}

/// What the intervals measure from, taken at the start of each.
struct Mark {
    at: Instant,
    counters: Counters,
    proc: ProcSample,
    reads: u64,
    missed: u64,
}

/// The sizes of the ranges, interval by interval: start, then a step more each time, the
/// last one `num`.
fn ranges(start: u64, step: u64, num: u64) -> Vec<u64> {
    let mut ranges = vec![start.min(num)];
    while let Some(&last) = ranges.last().filter(|&&r| r < num) {
        ranges.push(last.saturating_add(step).min(num));
    }
    ranges
}

pub fn run(ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
    let args = ctx.args;
    let db = ctx.db;
    refuse_workload_db(db, ctx.name)?;
    let num = args.num.max(1);
    let plan = ranges(args.expand_start(), args.expand_step(), num);
    let range = AtomicU64::new(plan[0]);
    let reads = AtomicU64::new(0);
    // Misses, not finds: the controller reads the two counters one after the other, so a
    // read in flight may be in one and not the other; counting misses keeps a range whose
    // every key exists at exactly 100% found, and no interval above it.
    let missed = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let readers_done = AtomicBool::new(false);
    let hists: Vec<Mutex<Histogram>> = (0..args.threads)
        .map(|_| Mutex::new(Histogram::default()))
        .collect();

    let (outcome, intervals) = std::thread::scope(|s| {
        let controller = s.spawn(|| {
            let mark = || Mark {
                at: Instant::now(),
                counters: db.counters(),
                proc: ProcSample::now(),
                reads: reads.load(Ordering::Relaxed),
                missed: missed.load(Ordering::Relaxed),
            };
            let mut intervals = Vec::new();
            let mut begin = mark();
            for (i, &size) in plan.iter().enumerate() {
                range.store(size, Ordering::Release);
                loop {
                    if readers_done.load(Ordering::Acquire) {
                        return intervals;
                    }
                    let over = match args.expand_interval_reads {
                        0 => begin.at.elapsed() >= Duration::from_secs(args.expand_interval),
                        n => reads.load(Ordering::Relaxed) - begin.reads >= n,
                    };
                    if over {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                if i + 1 == plan.len() {
                    stop.store(true, Ordering::Release);
                }
                let end = mark();
                let mut hist = Histogram::default();
                for h in &hists {
                    if let Ok(mut h) = h.lock() {
                        hist.merge(&h);
                        *h = Histogram::default();
                    }
                }
                let step = end.counters.since(&begin.counters);
                let interval = Interval {
                    range: size,
                    reads: end.reads - begin.reads,
                    found: (end.reads - begin.reads).saturating_sub(end.missed - begin.missed),
                    seconds: end.at.duration_since(begin.at).as_secs_f64(),
                    cache_misses: step.cache_misses,
                    table_bytes_read: step.table_bytes_read,
                    disk_read: end.proc.disk_read.saturating_sub(begin.proc.disk_read),
                    p99_us: hist.percentile_us(0.99),
                };
                // Printed as it ends: a long step shows its progress.
                let _ = writeln!(
                    std::io::stdout(),
                    "{:<12} : {}",
                    ctx.name,
                    interval.line(i + 1, num, args.engine)
                );
                intervals.push(interval);
                begin = end;
            }
            intervals
        });
        let shape = args.key_shape();
        let outcome = run_threads(ctx, args.threads, OP_NAMES, |index, number, rec| {
            let (mut rng, _) = thread_generators(args, number);
            let mut key = vec![0u8; args.key_size];
            while !stop.load(Ordering::Acquire) {
                shape.fill(rng.below(range.load(Ordering::Acquire)), &mut key);
                let start = Instant::now();
                let value = match db.get(&key) {
                    Ok(v) => v,
                    Err(e) => {
                        // The other readers stop too: the step has failed.
                        stop.store(true, Ordering::Release);
                        return Err(e);
                    }
                };
                rec.record(READ, start, value.is_some());
                if let Ok(mut h) = hists[index].lock() {
                    h.record(start.elapsed());
                }
                match value {
                    Some(len) => rec.read_bytes(key.len() + len),
                    None => {
                        missed.fetch_add(1, Ordering::Relaxed);
                    }
                }
                reads.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        });
        readers_done.store(true, Ordering::Release);
        let intervals = controller.join().expect("interval thread panicked");
        (outcome, intervals)
    });
    let mut outcome = outcome?;
    let t = &outcome.total;
    outcome.message = format!(
        "({} of {} found, {} intervals from {} to {} keys)",
        t.found,
        t.done,
        intervals.len(),
        plan[0],
        num
    );
    if let Some(path) = &args.plot {
        let chart = chart_path(path, ctx.name);
        let samples = intervals
            .iter()
            .map(|i| Sample {
                x: 100.0 * i.range as f64 / num as f64,
                top: i.reads as f64 / i.seconds.max(1e-9),
                bottom: i.per_get(i.disk_read),
            })
            .collect();
        let title = format!(
            "strata bench {} --engine={} --num={} --threads={}",
            ctx.name,
            db.version(),
            args.num,
            args.threads
        );
        let axes = Axes {
            x: "keys in the read range (% of --num)",
            top: "reads/s",
            bottom: "disk bytes read per get (/proc/self/io)",
        };
        plot::write_chart(&chart, &title, axes, &[(ctx.name.to_string(), samples)])
            .map_err(|e| format!("{}: {e}", chart.display()))?;
        outcome.notes.push(format!("plot: {}", chart.display()));
    }
    Ok(outcome)
}

/// The expanding range's chart beside the run's `--plot` file: `run.svg` gives
/// `run-expandingrange.svg`.
fn chart_path(plot: &Path, step: &str) -> PathBuf {
    let stem = plot
        .file_stem()
        .map_or("plot".into(), |s| s.to_string_lossy());
    plot.with_file_name(format!("{stem}-{step}.svg"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_grows_by_steps_to_the_whole_key_space() {
        for (start, step, num, expected) in [
            (10, 30, 100, vec![10, 40, 70, 100]),
            (10, 45, 100, vec![10, 55, 100]),
            (100, 10, 100, vec![100]),
            (1, u64::MAX, 5, vec![1, 5]),
            (7, 1, 9, vec![7, 8, 9]),
        ] {
            assert_eq!(ranges(start, step, num), expected, "{start} {step} {num}");
        }
    }

    #[test]
    fn the_chart_goes_beside_the_plot() {
        assert_eq!(
            chart_path(Path::new("out/run.svg"), "expandingrange"),
            Path::new("out/run-expandingrange.svg")
        );
    }
}
