//! Latency histograms of the statistics (RocksDB's histograms): how long gets, writes, seeks,
//! multi-gets, flushes and compactions took, as count, sum, max and percentiles.
//!
//! A [`LatencyHistogram`] has fixed buckets, so recording is a few relaxed atomic adds and no
//! allocation or lock. Bucket bounds grow geometrically: values below 16 microseconds have a
//! bucket each; above, every power of two is split into [`SUB_BUCKETS`] equal buckets, so a
//! bucket's width is at most 1/8 of its lower bound and a percentile read from the buckets
//! (linearly interpolated inside its bucket) is within 12.5% of the true value. 64 powers of
//! two from 2^4 to 2^63, times 8, cover every `u64`.
//!
//! Which histograms record is the database's [`StatsLevel`]: flushes and compactions always
//! (one record per job), the read and write paths only from
//! [`StatsLevel::ExceptDetailedTimers`], since they then read the clock twice per operation.

use std::sync::atomic::{AtomicU64, Ordering};

/// Sub-buckets per power of two.
const SUB_BUCKETS: u64 = 8;
/// Values with a bucket each (below the first power of two that is split).
const LINEAR: u64 = 2 * SUB_BUCKETS;
/// Buckets in all: the linear ones, then 8 for each power of two from 2^4 to 2^63.
const BUCKETS: usize = (LINEAR + 60 * SUB_BUCKETS) as usize;

/// How much the statistics record (RocksDB's `StatsLevel`, the levels Strata tells apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum StatsLevel {
    /// Counters, and the histograms of flushes and compactions; no clock reads on the read
    /// and write paths. The default.
    #[default]
    ExceptHistogramOrTimers,
    /// Also the histograms of gets, writes, seeks and multi-gets (RocksDB's default level
    /// once statistics are enabled).
    ExceptDetailedTimers,
}

/// The operations timed, each a histogram of the statistics, named as RocksDB names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Histogram {
    /// `Db::get` and its variants (`rocksdb.db.get.micros`).
    Get,
    /// `Db::write`, `put`, `delete`, `merge` (`rocksdb.db.write.micros`).
    Write,
    /// Iterator seeks (`rocksdb.db.seek.micros`).
    Seek,
    /// `Db::multi_get` calls, whole (`rocksdb.db.multiget.micros`).
    MultiGet,
    /// Flush jobs (`rocksdb.db.flush.micros`).
    Flush,
    /// Compaction jobs (`rocksdb.compaction.times.micros`).
    Compaction,
}

impl Histogram {
    /// Every histogram, in the order of [`Histogram::ALL`]'s reports.
    pub const ALL: [Histogram; 6] = [
        Histogram::Get,
        Histogram::Write,
        Histogram::Seek,
        Histogram::MultiGet,
        Histogram::Flush,
        Histogram::Compaction,
    ];

    /// RocksDB's name of the histogram.
    pub fn name(self) -> &'static str {
        match self {
            Histogram::Get => "rocksdb.db.get.micros",
            Histogram::Write => "rocksdb.db.write.micros",
            Histogram::Seek => "rocksdb.db.seek.micros",
            Histogram::MultiGet => "rocksdb.db.multiget.micros",
            Histogram::Flush => "rocksdb.db.flush.micros",
            Histogram::Compaction => "rocksdb.compaction.times.micros",
        }
    }
}

/// A summary of one histogram, from [`Db::histogram`](crate::Db::histogram). Times are
/// microseconds; percentiles are within 12.5% (see the bucket bounds in `histogram.rs`).
///
/// # Examples
///
/// ```
/// use strata::{Db, Histogram, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"k", b"v")?;
/// db.flush()?;
/// let flushes = db.histogram(Histogram::Flush);
/// assert_eq!(flushes.count, 1);
/// assert!(flushes.p50 <= flushes.max as f64 * 1.125);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct HistogramData {
    /// Values recorded.
    pub count: u64,
    /// Their sum.
    pub sum: u64,
    /// The largest.
    pub max: u64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl HistogramData {
    /// The mean (0 when empty).
    pub fn average(&self) -> f64 {
        match self.count {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }
}

impl std::fmt::Display for HistogramData {
    /// RocksDB's one-line form: `P50 : 1.2 P95 : 3.4 P99 : 5.6 P100 : 7 COUNT : 8 SUM : 9`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "P50 : {:.6} P95 : {:.6} P99 : {:.6} P100 : {} COUNT : {} SUM : {}",
            self.p50, self.p95, self.p99, self.max, self.count, self.sum
        )
    }
}

/// One histogram: fixed buckets of relaxed atomics (see the module doc).
pub(crate) struct LatencyHistogram {
    buckets: Box<[AtomicU64; BUCKETS]>,
    count: AtomicU64,
    sum: AtomicU64,
    max: AtomicU64,
}

impl std::fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LatencyHistogram")
            .field(&self.data())
            .finish()
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            buckets: Box::new(std::array::from_fn(|_| AtomicU64::new(0))),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }
}

/// The bucket of `v`.
fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    // v >= 16: its top bit `msb` >= 4; the 3 bits below it choose the sub-bucket.
    let msb = 63 - u64::from(v.leading_zeros());
    let sub = (v >> (msb - 3)) & (SUB_BUCKETS - 1);
    ((msb - 3) * SUB_BUCKETS + SUB_BUCKETS + sub) as usize
}

/// The smallest value of bucket `b` and the one past its largest (saturating at the top).
fn bucket_bounds(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < LINEAR {
        return (b, b + 1);
    }
    let msb = (b - SUB_BUCKETS) / SUB_BUCKETS + 3;
    let sub = b % SUB_BUCKETS;
    let width = 1u64 << (msb - 3);
    let low = (1u64 << msb) + sub * width;
    (low, low.saturating_add(width))
}

impl LatencyHistogram {
    /// Records `v`.
    pub(crate) fn record(&self, v: u64) {
        self.buckets[bucket_of(v)].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(v, Ordering::Relaxed);
        self.max.fetch_max(v, Ordering::Relaxed);
    }

    /// Empties the histogram.
    pub(crate) fn reset(&self) {
        for b in self.buckets.iter() {
            b.store(0, Ordering::Relaxed);
        }
        self.count.store(0, Ordering::Relaxed);
        self.sum.store(0, Ordering::Relaxed);
        self.max.store(0, Ordering::Relaxed);
    }

    /// The summary now (not a snapshot: records racing with it may be half in it).
    pub(crate) fn data(&self) -> HistogramData {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        let count: u64 = counts.iter().sum();
        let max = self.max.load(Ordering::Relaxed);
        let percentile = |p: f64| -> f64 {
            if count == 0 {
                return 0.0;
            }
            let rank = p / 100.0 * count as f64;
            let mut below = 0u64;
            for (b, &n) in counts.iter().enumerate() {
                if n == 0 {
                    continue;
                }
                if (below + n) as f64 >= rank {
                    let (low, high) = bucket_bounds(b);
                    let high = high.min(max.saturating_add(1)).max(low + 1);
                    let into = (rank - below as f64) / n as f64;
                    return (low as f64 + into * (high - low) as f64).min(max as f64);
                }
                below += n;
            }
            max as f64
        };
        HistogramData {
            count,
            sum: self.sum.load(Ordering::Relaxed),
            max,
            p50: percentile(50.0),
            p95: percentile(95.0),
            p99: percentile(99.0),
        }
    }
}

/// The database's histograms, one per [`Histogram`].
#[derive(Debug, Default)]
pub(crate) struct Histograms([LatencyHistogram; 6]);

impl Histograms {
    /// Records `micros` in histogram `h`.
    pub(crate) fn record(&self, h: Histogram, micros: u64) {
        self.0[h as usize].record(micros);
    }

    /// The summary of histogram `h`.
    pub(crate) fn data(&self, h: Histogram) -> HistogramData {
        self.0[h as usize].data()
    }

    /// Empties every histogram.
    pub(crate) fn reset(&self) {
        self.0.iter().for_each(LatencyHistogram::reset);
    }

    /// The histograms recorded so far, as RocksDB prints them (`name P50 : ... SUM : ...`,
    /// one a line), the empty ones left out.
    pub(crate) fn report(&self) -> String {
        let mut out = String::new();
        for h in Histogram::ALL {
            let d = self.data(h);
            if d.count > 0 {
                out.push_str(&format!("{} {d}\n", h.name()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_its_bucket_and_buckets_are_ordered() {
        let mut values: Vec<u64> = (0..2000).collect();
        values.extend((0..64).flat_map(|s| [1u64 << s, (1u64 << s) - 1, (1u64 << s) + 1]));
        values.push(u64::MAX);
        for v in values {
            let b = bucket_of(v);
            assert!(b < BUCKETS, "{v}");
            let (low, high) = bucket_bounds(b);
            assert!(
                low <= v && (v < high || high == u64::MAX),
                "{v} in {low}..{high}"
            );
            // Width at most 1/8 of the lower bound above the linear range.
            if v >= LINEAR {
                assert!((high - low) * SUB_BUCKETS <= low, "{v}: {low}..{high}");
            }
        }
        for b in 1..BUCKETS {
            assert_eq!(bucket_bounds(b - 1).1, bucket_bounds(b).0, "bucket {b}");
        }
    }

    #[test]
    fn percentiles_are_within_an_eighth_of_the_exact_ones() {
        let h = LatencyHistogram::default();
        // 1..=10000: p50 5000, p95 9500, p99 9900.
        for v in 1..=10_000u64 {
            h.record(v);
        }
        let d = h.data();
        assert_eq!((d.count, d.sum, d.max), (10_000, 50_005_000, 10_000));
        for (got, exact) in [(d.p50, 5000.0), (d.p95, 9500.0), (d.p99, 9900.0)] {
            assert!((got - exact).abs() <= exact / 8.0, "{got} vs {exact}");
        }
        h.reset();
        assert_eq!(h.data(), HistogramData::default());
    }

    #[test]
    fn a_single_value_is_every_percentile() {
        let h = LatencyHistogram::default();
        h.record(1234);
        let d = h.data();
        for p in [d.p50, d.p95, d.p99] {
            assert!((p - 1234.0).abs() <= 1234.0 / 8.0 && p <= 1234.0, "{p}");
        }
        assert_eq!(d.average(), 1234.0);
    }
}
