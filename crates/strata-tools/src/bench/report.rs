//! Measuring a step and printing it: db_bench's result line, then Strata's lines with the
//! figures that explain it (write-amp, disk IO per operation, CPU per operation, latency
//! percentiles, the tree's shape).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::engine::Engine;

use super::BenchArgs;

/// The columns of `--report_file`.
pub const INTERVAL_HEADER: &str =
    "step,secs_elapsed,interval_ops,interval_qps,p99_us,stalls,stall_ms,pending_compaction_bytes";

/// Samples a step every `--report_interval_seconds`: operations done in the interval (all
/// threads), their p99 latency, the write stalls that began and the milliseconds writes spent
/// stalled, and the compaction debt at the end of the interval, appended to the report file.
pub struct IntervalReporter {
    step: String,
    interval: Duration,
    /// `--report_file`, when `--report_interval_seconds` asks for it (the intervals also
    /// serve `--plot` and the workloads' own per-interval lines, which write no file).
    file: Option<PathBuf>,
    run_started: Instant,
    ops: AtomicU64,
    /// One histogram per thread for the current interval (uncontended but for the swap).
    hists: Vec<Mutex<Histogram>>,
}

/// What a thread records into the reporter.
pub struct Meter<'a> {
    reporter: &'a IntervalReporter,
    index: usize,
}

impl Meter<'_> {
    /// Counts one operation and, if timed, its latency.
    pub fn record(&self, latency: Option<Duration>) {
        self.reporter.ops.fetch_add(1, Ordering::Relaxed);
        if let Some(d) = latency {
            if let Ok(mut h) = self.reporter.hists[self.index].lock() {
                h.record(d);
            }
        }
    }
}

/// The samples of each full interval of a step.
pub struct Intervals {
    seconds: f64,
    qps: Vec<f64>,
    /// (seconds since the run began, ops/s, p99 us) per interval, for --plot.
    pub points: Vec<super::plot::Point>,
}

impl Intervals {
    /// `per 1 s: mean X ops/s, min, max, cv` (the coefficient of variation: steadiness).
    pub fn summary(&self) -> Option<String> {
        let n = self.qps.len();
        if n == 0 {
            return None;
        }
        let mean = self.qps.iter().sum::<f64>() / n as f64;
        let var = self.qps.iter().map(|q| (q - mean).powi(2)).sum::<f64>() / n as f64;
        let min = self.qps.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self.qps.iter().copied().fold(0.0, f64::max);
        Some(format!(
            "throughput per {}s interval: mean {mean:.0} ops/s, min {min:.0}, max {max:.0}, cv {:.1}% ({n} intervals)",
            self.seconds,
            100.0 * var.sqrt() / mean.max(1e-9)
        ))
    }
}

impl IntervalReporter {
    pub fn new(args: &BenchArgs, step: &str, threads: usize, run_started: Instant) -> Self {
        IntervalReporter {
            step: step.to_string(),
            interval: Duration::from_secs(args.report_interval().max(1)),
            file: (args.report_interval_seconds > 0).then(|| args.report_file.clone()),
            run_started,
            ops: AtomicU64::new(0),
            hists: (0..threads)
                .map(|_| Mutex::new(Histogram::default()))
                .collect(),
        }
    }

    /// The meter of thread `index`.
    pub fn meter(&self, index: usize) -> Meter<'_> {
        Meter {
            reporter: self,
            index,
        }
    }

    /// Reports every interval until `done`; returns the throughput of each full interval.
    pub fn run(&self, db: &dyn Engine, done: &AtomicBool) -> Intervals {
        let mut qps = Vec::new();
        let mut points = Vec::new();
        let mut last_ops = 0;
        let first = db.counters();
        let stall_micros = |c: &super::engine::Counters| c.stalls.iter().map(|s| s.2).sum::<u64>();
        let mut last_stalls = first.stall_count();
        let mut last_stall_micros = stall_micros(&first);
        let mut next = Instant::now() + self.interval;
        'outer: loop {
            while Instant::now() < next {
                if done.load(Ordering::Acquire) {
                    break 'outer;
                }
                std::thread::sleep(Duration::from_millis(20).min(next - Instant::now()));
            }
            next += self.interval;
            let ops = self.ops.load(Ordering::Relaxed);
            let mut hist = Histogram::default();
            for h in &self.hists {
                if let Ok(mut h) = h.lock() {
                    hist.merge(&h);
                    *h = Histogram::default();
                }
            }
            let counters = db.counters();
            let now_stalls = counters.stall_count();
            let now_stall_micros = stall_micros(&counters);
            let stall_ms = now_stall_micros.saturating_sub(last_stall_micros) as f64 / 1000.0;
            let rate = (ops - last_ops) as f64 / self.interval.as_secs_f64();
            qps.push(rate);
            points.push(super::plot::Point {
                seconds: self.run_started.elapsed().as_secs_f64(),
                ops_per_sec: rate,
                p99_us: hist.percentile_us(0.99),
                stall_ms,
                pending_bytes: counters.pending_compaction_bytes,
            });
            let line = format!(
                "{},{:.1},{},{:.0},{:.1},{},{:.1},{}\n",
                self.step,
                self.run_started.elapsed().as_secs_f64(),
                ops - last_ops,
                rate,
                hist.percentile_us(0.99),
                now_stalls - last_stalls,
                stall_ms,
                counters.pending_compaction_bytes
            );
            if let Some(file) = &self.file {
                let appended = std::fs::OpenOptions::new()
                    .append(true)
                    .open(file)
                    .and_then(|mut f| f.write_all(line.as_bytes()));
                if let Err(e) = appended {
                    eprintln!("--report_file {}: {e}", file.display());
                }
            }
            last_ops = ops;
            last_stalls = now_stalls;
            last_stall_micros = now_stall_micros;
        }
        Intervals {
            seconds: self.interval.as_secs_f64(),
            qps,
            points,
        }
    }
}

/// A latency histogram with buckets 1/16 of a power of two wide (relative error under 7%).
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max_ns: u64,
}

const SUB_BUCKETS: usize = 16;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; 64 * SUB_BUCKETS],
            total: 0,
            max_ns: 0,
        }
    }
}

impl Histogram {
    fn bucket(ns: u64) -> usize {
        if ns < SUB_BUCKETS as u64 {
            return ns as usize;
        }
        let exp = 63 - ns.leading_zeros() as usize; // >= 4
        let sub = ((ns >> (exp - 4)) & (SUB_BUCKETS as u64 - 1)) as usize;
        (exp - 3) * SUB_BUCKETS + sub
    }

    /// The upper edge of a bucket, in nanoseconds.
    fn bucket_limit(b: usize) -> u64 {
        if b < SUB_BUCKETS {
            return b as u64;
        }
        let exp = b / SUB_BUCKETS + 3;
        let sub = (b % SUB_BUCKETS) as u64;
        ((SUB_BUCKETS as u64 + sub + 1) << (exp - 4)) - 1
    }

    /// Records one latency.
    pub fn record(&mut self, d: Duration) {
        let ns = d.as_nanos().min(u128::from(u64::MAX)) as u64;
        self.counts[Self::bucket(ns)] += 1;
        self.total += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    /// Adds `other`'s counts to this one.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// The latency at quantile `q` (0..=1), in microseconds.
    pub fn percentile_us(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::bucket_limit(b).min(self.max_ns) as f64 / 1000.0;
            }
        }
        self.max_ns as f64 / 1000.0
    }

    /// Recorded latencies.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest latency, in microseconds.
    pub fn max_us(&self) -> f64 {
        self.max_ns as f64 / 1000.0
    }
}

/// What one thread did in a step.
#[derive(Default, Clone)]
pub struct ThreadStats {
    pub done: u64,
    /// Of `done`, the reads (readrandomwriterandom).
    pub reads: u64,
    pub bytes: u64,
    /// Bytes of keys and values the thread wrote (the denominator of write-amp).
    pub written: u64,
    pub found: u64,
    /// Range tombstones written (--writes_per_range_tombstone).
    pub range_tombstones: u64,
    /// Transactions committed, and those that only read (ended without a commit).
    pub commits: u64,
    pub read_only_txns: u64,
    /// Transactions rolled back and run again, by cause.
    pub conflicts: u64,
    pub deadlocks: u64,
    pub timeouts: u64,
    /// Sum of randomtransaction's committed increments (what each set's sum grew by).
    pub increments: u64,
    /// fillseqingest: seconds writing the table file, then ingesting it.
    pub ingest: Option<(f64, f64)>,
    pub seconds: f64,
    pub hist: Histogram,
    /// The thread's per-operation statistics (`--perf_level`), by name; empty when off.
    pub perf: Vec<(String, u64)>,
}

impl ThreadStats {
    pub fn merge(&mut self, o: &ThreadStats) {
        for (name, value) in &o.perf {
            match self.perf.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => *v += value,
                None => self.perf.push((name.clone(), *value)),
            }
        }
        self.done += o.done;
        self.ingest = self.ingest.or(o.ingest);
        self.reads += o.reads;
        self.bytes += o.bytes;
        self.written += o.written;
        self.found += o.found;
        self.range_tombstones += o.range_tombstones;
        self.commits += o.commits;
        self.read_only_txns += o.read_only_txns;
        self.conflicts += o.conflicts;
        self.deadlocks += o.deadlocks;
        self.timeouts += o.timeouts;
        self.increments = self.increments.wrapping_add(o.increments);
        self.seconds += o.seconds;
        self.hist.merge(&o.hist);
    }
}

/// db_bench's `PERF_CONTEXT:` report of a step's summed per-operation statistics: `name =
/// value` of the ones not 0, comma-separated; `None` when none is.
pub fn perf_context_report(perf: &[(String, u64)]) -> Option<String> {
    let parts: Vec<String> = perf
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(n, v)| format!("{n} = {v}"))
        .collect();
    (!parts.is_empty()).then(|| format!("PERF_CONTEXT:\n{}", parts.join(", ")))
}

/// db_bench's result line: `name : X micros/op Y ops/sec Z seconds N operations; M MB/s msg`.
/// micros/op is the sum of the threads' time per operation, ops/sec the wall-clock rate.
pub fn result_line(name: &str, s: &ThreadStats, elapsed: f64, message: &str) -> String {
    let done = s.done.max(1);
    let elapsed = elapsed.max(1e-9);
    let mut extra = String::new();
    if s.bytes > 0 {
        extra = format!("{:6.1} MB/s", s.bytes as f64 / 1048576.0 / elapsed);
    }
    if !message.is_empty() {
        if !extra.is_empty() {
            extra.push(' ');
        }
        extra.push_str(message);
    }
    format!(
        "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{}",
        name,
        s.seconds * 1e6 / done as f64,
        (done as f64 / elapsed) as i64,
        elapsed,
        done,
        if extra.is_empty() { "" } else { " " },
        extra
    )
}

/// The unit of /proc's CPU times (`sysconf(_SC_CLK_TCK)`): 100 on common Linux systems, but
/// the kernel's choice, so it is asked.
fn clock_ticks_per_second() -> f64 {
    #[cfg(unix)]
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    #[cfg(not(unix))]
    let ticks = 100.0;
    ticks
}

/// Process-wide counters from /proc: CPU time and bytes that reached the block layer.
#[derive(Default, Clone, Copy)]
pub struct ProcSample {
    pub cpu_seconds: f64,
    pub disk_read: u64,
    pub disk_written: u64,
    /// Bytes passed to write system calls (wchar), whether or not they reached a disk.
    pub syscall_written: u64,
}

impl ProcSample {
    /// Reads /proc/self/stat and /proc/self/io (zeros where they cannot be read).
    pub fn now() -> ProcSample {
        let mut s = ProcSample::default();
        if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
            // Fields after the command name (which may hold spaces) start after ')'.
            if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
                let f: Vec<&str> = rest.split_whitespace().collect();
                // utime and stime are fields 14 and 15 of the whole line: 11 and 12 here.
                let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
                s.cpu_seconds = (ticks(11) + ticks(12)) / clock_ticks_per_second();
            }
        }
        if let Ok(io) = std::fs::read_to_string("/proc/self/io") {
            for line in io.lines() {
                let mut parts = line.split(':');
                let (Some(k), Some(v)) = (parts.next(), parts.next()) else {
                    continue;
                };
                let v = v.trim().parse().unwrap_or(0);
                match k {
                    "read_bytes" => s.disk_read = v,
                    "write_bytes" => s.disk_written = v,
                    "wchar" => s.syscall_written = v,
                    _ => {}
                }
            }
        }
        s
    }
}

/// Total bytes of the files under `dir`.
pub fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// The blob files directly in `dir` (`NNNNNN.blob`, as both Strata and RocksDB name them):
/// how many, and their bytes. They are part of [`dir_size`] already.
pub fn blob_files(dir: &Path) -> (u64, u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".blob"))
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .fold((0, 0), |(n, bytes), m| (n + 1, bytes + m.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_line_matches_db_bench_format() {
        let s = ThreadStats {
            done: 1000,
            bytes: 116_000,
            seconds: 0.5,
            ..ThreadStats::default()
        };
        let line = result_line("fillseq", &s, 0.5, "");
        assert_eq!(
            line,
            "fillseq      :     500.000 micros/op 2000 ops/sec 0.500 seconds 1000 operations;    0.2 MB/s"
        );
        let line = result_line("readrandom", &s, 0.5, "(10 of 1000 found)");
        assert!(line.ends_with("MB/s (10 of 1000 found)"), "{line}");
    }

    #[test]
    fn histogram_percentiles_are_within_bucket_error() {
        let mut h = Histogram::default();
        for us in 1..=1000u64 {
            h.record(Duration::from_micros(us));
        }
        let p50 = h.percentile_us(0.5);
        let p99 = h.percentile_us(0.99);
        assert!((470.0..=540.0).contains(&p50), "{p50}");
        assert!((930.0..=1000.0).contains(&p99), "{p99}");
        assert_eq!(h.max_us(), 1000.0);
        for ns in [0u64, 1, 15, 16, 17, 1000, 123_456_789] {
            let b = Histogram::bucket(ns);
            assert!(Histogram::bucket_limit(b) >= ns, "{ns}");
            if b > 0 {
                assert!(Histogram::bucket_limit(b - 1) < ns, "{ns}");
            }
        }
    }

    #[test]
    fn blob_files_are_counted_apart_and_within_the_directory_size() {
        let dir = tempfile::tempdir().unwrap();
        for (name, len) in [
            ("000007.blob", 100),
            ("000009.blob", 50),
            ("000008.sst", 70),
            ("MANIFEST-000001", 5),
        ] {
            std::fs::write(dir.path().join(name), vec![0u8; len]).unwrap();
        }
        std::fs::create_dir(dir.path().join("x.blob")).unwrap();
        assert_eq!(blob_files(dir.path()), (2, 150));
        assert_eq!(dir_size(dir.path()), 225);
        assert_eq!(blob_files(&dir.path().join("missing")), (0, 0));
    }
}
