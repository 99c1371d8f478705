//! The recorder each thread of a workload step times its operations with: per operation type
//! (READ, UPDATE, ...) a count, what found nothing and a latency histogram ([`OpStats`],
//! printed as the table before the result line), the bytes read and written, and
//! transactions retried until they are not rolled back ([`Recorder::transaction`], at most
//! [`MAX_RETRIES`] times in a row).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::bench::engine::{Engine, EngineResult, Retry, TxnBody, TxnMode, TxnOp, TxnRead};
use crate::bench::report::{Histogram, Meter, ThreadStats};
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
    pub(super) meter: Option<Meter<'a>>,
    pub(super) progress: Option<&'a AtomicU64>,
    pub(super) deadline: Option<Instant>,
    /// `--histogram`: [`Recorder::tick`] records latencies in `stats.hist`.
    pub(super) histogram: bool,
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

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
