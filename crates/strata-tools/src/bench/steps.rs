//! The db_bench steps of `strata bench` (fillseq, readrandom, seekrandom, ...): their names,
//! and what each thread of one does, run on the workloads' runner
//! ([`workload::run_step_threads`]) with a [`Recorder`] per thread. A step does `--num`
//! writes or `--reads` reads per thread (or runs for `--duration` seconds); the *whilewriting
//! steps run a writer beside their readers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use strata::internals::Rng;

use super::engine::{self, Engine, EngineResult, TxnMode, TxnOp};
use super::gen::{fill_key, KeyShape, LiveKeys, ValueGen};
use super::range_tombstones::RangeTombstones;
use super::workload::{self, Ctx, Outcome, Progress, Recorder, Threads, WriterStats};
use super::{thread_generators, BenchArgs, BoxError};

/// What kind of work a step does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Step {
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
pub enum FillOrder {
    Sequential,
    Random,
    UniqueRandom,
}

/// The steps of --benchmarks by name, in the order --help lists them.
pub const STEPS: &[(&str, Step)] = &[
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

pub fn parse_step(name: &str) -> Result<Step, String> {
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

/// The transactions `step` runs: those of the flags in the steps that read or write through
/// them, and always some in the steps made of transactions.
pub fn step_txn_mode(args: &BenchArgs, step: Step) -> Option<TxnMode> {
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

/// Runs the threads of db_bench step `step` (not one of the steps that run no threads:
/// flush, compact, stats, ...) and returns what they did; the caller reports it.
pub fn run(ctx: &Ctx<'_>, live: &LiveKeys, step: Step) -> Result<Outcome, BoxError> {
    let args = ctx.args;
    // In the *whilewriting steps the threads read (as readrandom or seekrandom) and one more
    // thread writes until they are done; as in db_bench, only the readers are reported.
    let (reader_step, with_writer) = match step {
        Step::WhileWriting { seek: false } => (Step::ReadRandom { missing: false }, true),
        Step::WhileWriting { seek: true } => (Step::SeekRandom, true),
        other => (other, false),
    };
    let writer =
        |done: &AtomicBool, number: u64| background_writer(args, ctx.db, live, done, number);
    let threads = Threads {
        count: args.threads,
        op_names: &[],
        progress: progress(args, reader_step),
        writer: with_writer.then_some(&writer as workload::Writer<'_>),
    };
    workload::run_step_threads(ctx, threads, |_, number, rec| {
        StepThread::new(args, ctx.db, live, reader_step, number).run(rec)
    })
}

/// A step's progress bar: operations out of the step's total, or seconds out of --duration.
fn progress(args: &BenchArgs, step: Step) -> Progress {
    let threads = args.threads as u64;
    let (total, by_time) = match step {
        _ if args.duration > 0 => (args.duration, true),
        Step::Fill(_) | Step::Delete(_) => (args.writes() * threads, false),
        Step::FillSync => ((args.writes() / 1000).max(1) * threads, false),
        Step::FillSeqIngest => (args.writes() * threads, false),
        _ => (args.reads() * threads, false),
    };
    Progress::Bar { total, by_time }
}

/// One thread's share of a step; its number counts the threads of the whole run (it seeds
/// the thread's generators). With `--duration` a step runs until the time is up instead of
/// for `--num` or `--reads` operations.
struct StepThread<'a> {
    args: &'a BenchArgs,
    db: &'a dyn Engine,
    live: &'a LiveKeys,
    step: Step,
    rng: Rng,
    values: ValueGen,
    key: Vec<u8>,
    key_size: usize,
    shape: KeyShape,
    sync: bool,
    num: u64,
    txn: Option<TxnMode>,
}

impl<'a> StepThread<'a> {
    fn new(
        args: &'a BenchArgs,
        db: &'a dyn Engine,
        live: &'a LiveKeys,
        step: Step,
        thread_number: u64,
    ) -> StepThread<'a> {
        let (rng, values) = thread_generators(args, thread_number);
        let key_size = match step {
            Step::ReadRandom { missing: true } => args.key_size + 1, // as db_bench: never found
            _ => args.key_size,
        };
        StepThread {
            args,
            db,
            live,
            step,
            rng,
            values,
            key: vec![0u8; key_size],
            key_size,
            shape: args.key_shape(),
            sync: args.options.sync || step == Step::FillSync,
            num: args.num.max(1),
            txn: step_txn_mode(args, step),
        }
    }

    fn run(mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        match self.step {
            Step::Fill(order) | Step::Delete(order) => self.fill_or_delete(order, rec),
            Step::FillSync => self.fill_sync(rec),
            Step::FillSeqIngest => self.fill_seq_ingest(rec),
            Step::ReadRandom { .. } => self.read_random(rec),
            Step::ReadRandomWriteRandom | Step::UpdateRandom => self.read_write_random(rec),
            Step::MergeRandom | Step::ReadRandomMergeRandom => self.merge_random(rec),
            Step::ReadSeq { reverse } => self.read_seq(reverse, rec),
            Step::SeekRandom => self.seek_random(rec),
            Step::RandomTransaction => self.random_transaction(rec),
            Step::UpdateRandomCursor => self.update_random_cursor(rec),
            Step::WaitForCompaction
            | Step::WhileWriting { .. }
            | Step::Compact(_)
            | Step::Stats
            | Step::LevelStats
            | Step::ResetStats
            | Step::Workload(_)
            | Step::Flush => Ok(()),
        }
    }

    /// The start of an operation, when the recorder times them.
    fn clock(rec: &Recorder<'_>) -> Option<Instant> {
        rec.timing().then(Instant::now)
    }

    /// Bytes of a key and a value of the step.
    fn pair_bytes(&self) -> u64 {
        (self.key_size + self.args.value_size) as u64
    }

    fn fill_or_delete(&mut self, order: FillOrder, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let (args, db, live, num) = (self.args, self.db, self.live, self.num);
        let permutation = (order == FillOrder::UniqueRandom).then(|| shuffled(num, &mut self.rng));
        let deleting = matches!(self.step, Step::Delete(_));
        let tombstones = RangeTombstones::of(args).filter(|_| !deleting);
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
        while rec.more(i, args.writes()) {
            let k = draw(&mut self.rng);
            i += 1;
            self.shape.fill(k, &mut self.key);
            if tombstones.is_some_and(|t| t.due(i)) {
                tombstones_due.push(draw(&mut self.rng));
            }
            let t = Self::clock(rec);
            if deleting {
                match self.txn {
                    None => db.delete(&self.key, self.sync)?,
                    Some(m) => {
                        rec.txn_op(db, m, TxnOp::Delete(&self.key), self.sync)?;
                    }
                }
                live.delete(k);
                rec.stats.bytes += self.key_size as u64;
                rec.stats.written += self.key_size as u64;
            } else if args.batch_size > 1 {
                // One batch of --batch_size puts, timed as one operation per put when
                // it is written (db_bench counts entries, not batches).
                batch.push((self.key.clone(), self.values.next(args.value_size).to_vec()));
                live.put(k);
                rec.stats.bytes += self.pair_bytes();
                rec.stats.written += self.pair_bytes();
                // A tombstone due cuts the batch: it must follow the writes before it and
                // precede those after it, as it does inside db_bench's batch.
                if batch.len() < args.batch_size
                    && rec.more(i, args.writes())
                    && tombstones_due.is_empty()
                {
                    continue;
                }
                match self.txn {
                    None => db.put_batch(&batch, self.sync)?,
                    Some(m) => {
                        rec.txn_op(db, m, TxnOp::Put(&batch), self.sync)?;
                    }
                }
                for _ in 1..batch.len() {
                    rec.tick(None);
                }
                batch.clear();
            } else {
                let value = self.values.next(args.value_size);
                put(db, self.txn, (&self.key, value), self.sync, rec)?;
                live.put(k);
                rec.stats.bytes += self.pair_bytes();
                rec.stats.written += self.pair_bytes();
            }
            rec.tick(t);
            if let Some(rule) = tombstones {
                for begin in std::mem::take(&mut tombstones_due) {
                    let written = delete_range(args, db, live, rule, begin, self.sync)?;
                    rec.stats.range_tombstones += u64::from(written);
                }
            }
        }
        Ok(())
    }

    fn fill_sync(&mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let (args, db, live, num) = (self.args, self.db, self.live, self.num);
        let tombstones = RangeTombstones::of(args);
        while rec.more(rec.stats.done, (args.writes() / 1000).max(1)) {
            let k = self.rng.below(num);
            self.shape.fill(k, &mut self.key);
            let value = self.values.next(args.value_size);
            let t = Self::clock(rec);
            put(db, self.txn, (&self.key, value), self.sync, rec)?;
            live.put(k);
            rec.stats.bytes += self.pair_bytes();
            rec.stats.written += self.pair_bytes();
            rec.tick(t);
            if let Some(rule) = tombstones.filter(|t| t.due(rec.stats.done)) {
                let begin = self.rng.below(num);
                let written = delete_range(args, db, live, rule, begin, self.sync)?;
                rec.stats.range_tombstones += u64::from(written);
            }
        }
        Ok(())
    }

    fn fill_seq_ingest(&mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let (args, live) = (self.args, self.live);
        let (key_size, shape, values) = (self.key_size, &self.shape, &mut self.values);
        let mut k = 0;
        let limit = args.writes().min(self.num);
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
        rec.stats.ingest = Some(self.db.ingest_sorted(&mut next)?);
        rec.stats.done = k;
        rec.stats.bytes = k * (key_size + args.value_size) as u64;
        rec.stats.written = rec.stats.bytes;
        Ok(())
    }

    fn read_random(&mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        while rec.more(rec.stats.done, self.args.reads()) {
            self.shape.fill(self.rng.below(self.num), &mut self.key);
            let t = Self::clock(rec);
            if let Some(len) = get(self.db, self.txn, &self.key, rec)? {
                rec.stats.found += 1;
                rec.stats.bytes += (self.key.len() + len) as u64;
            }
            rec.tick(t);
        }
        Ok(())
    }

    /// db_bench's loops: a read, then (by --readwritepercent, or always for an update) a
    /// write of the same key.
    fn read_write_random(&mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let (args, db, live) = (self.args, self.db, self.live);
        let update = self.step == Step::UpdateRandom;
        while rec.more(rec.stats.done, args.reads()) {
            let k = self.rng.below(self.num);
            self.shape.fill(k, &mut self.key);
            let read = update || self.rng.below(100) < u64::from(args.readwritepercent);
            let t = Self::clock(rec);
            if let (Some(m), true) = (self.txn, update) {
                // get_for_update and put in one transaction.
                let value = self.values.next(args.value_size);
                let r = rec.txn_op(db, m, TxnOp::Update(&self.key, value), self.sync)?;
                rec.stats.found += u64::from(r.found);
                rec.stats.bytes += r.bytes + self.pair_bytes();
                rec.stats.written += self.pair_bytes();
                live.put(k);
                rec.tick(t);
                continue;
            }
            if read {
                if let Some(len) = get(db, self.txn, &self.key, rec)? {
                    rec.stats.found += 1;
                    rec.stats.bytes += (self.key.len() + len) as u64;
                }
                rec.stats.reads += 1;
            }
            if !read || update {
                let value = self.values.next(args.value_size);
                put(db, self.txn, (&self.key, value), self.sync, rec)?;
                live.put(k);
                rec.stats.bytes += self.pair_bytes();
                rec.stats.written += self.pair_bytes();
            }
            rec.tick(t);
        }
        if update {
            rec.stats.reads = 0;
        }
        Ok(())
    }

    /// db_bench's loops: a random key of --merge_keys, then a merge (always, or by
    /// --mergereadpercent) or a get. Operands of uint64add are 8 bytes, as its integers;
    /// others --value_size.
    fn merge_random(&mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let (args, db) = (self.args, self.db);
        let operand_size = match args.options.merge_operator.as_str() {
            "uint64add" => 8,
            _ => args.value_size,
        };
        let keys = args.merge_keys().max(1);
        while rec.more(rec.stats.done, args.reads()) {
            let k = self.rng.below(keys);
            self.shape.fill(k, &mut self.key);
            let merge = self.step == Step::MergeRandom
                || self.rng.below(100) < u64::from(args.mergereadpercent);
            let t = Self::clock(rec);
            if merge {
                db.merge(&self.key, self.values.next(operand_size), self.sync)?;
                self.live.put(k);
                rec.stats.bytes += (self.key_size + operand_size) as u64;
                rec.stats.written += (self.key_size + operand_size) as u64;
            } else {
                if let Some(len) = db.get(&self.key)? {
                    rec.stats.found += 1;
                    rec.stats.bytes += (self.key.len() + len) as u64;
                }
                rec.stats.reads += 1;
            }
            rec.tick(t);
        }
        Ok(())
    }

    /// One pass over the database; with --duration, passes until the time is up.
    fn read_seq(&mut self, reverse: bool, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let reads = self.args.reads();
        while rec.more(rec.stats.done, reads) {
            let mut t = Self::clock(rec);
            let mut visited = false;
            self.db.scan(reverse, &mut |k, v| {
                visited = true;
                rec.stats.bytes += (k.len() + v.len()) as u64;
                rec.tick(t);
                t = Self::clock(rec);
                rec.more(rec.stats.done, reads)
            })?;
            if self.args.duration == 0 || !visited {
                break;
            }
        }
        Ok(())
    }

    fn seek_random(&mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let (args, db) = (self.args, self.db);
        while rec.more(rec.stats.done, args.reads()) {
            self.shape
                .fill_for_seek(self.rng.below(self.num), &mut self.key);
            let t = Self::clock(rec);
            let (found, bytes) = match self.txn {
                None => db.seek(&self.key, args.seek_nexts)?,
                Some(m) => {
                    let op = TxnOp::Seek(&self.key, args.seek_nexts);
                    let r = rec.txn_op(db, m, op, false)?;
                    (r.found, r.bytes)
                }
            };
            rec.stats.found += u64::from(found);
            rec.stats.bytes += bytes;
            rec.tick(t);
        }
        Ok(())
    }

    /// As db_bench's RandomTransactionInserter: one increment, 1 to 100, added to a random
    /// key of every set.
    fn random_transaction(&mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let args = self.args;
        let mode = self.txn.unwrap_or(TxnMode::Pessimistic);
        let sets = args.transaction_sets as usize;
        let mut keys = vec![vec![0u8; SET_PREFIX_LEN + self.key_size]; sets];
        while rec.more(rec.stats.done, args.reads()) {
            let increment = self.rng.below(100) + 1;
            for (i, set_key) in keys.iter_mut().enumerate() {
                let prefix = format!("{:04}", i + 1);
                set_key[..SET_PREFIX_LEN].copy_from_slice(prefix.as_bytes());
                self.shape
                    .fill(self.rng.below(self.num), &mut set_key[SET_PREFIX_LEN..]);
            }
            let t = Self::clock(rec);
            let op = TxnOp::AddToEach(&keys, increment);
            let r = rec.txn_op(self.db, mode, op, self.sync)?;
            rec.stats.found += u64::from(r.found);
            rec.stats.increments = rec.stats.increments.wrapping_add(increment);
            let bytes = (sets * (SET_PREFIX_LEN + self.key_size + 8)) as u64;
            rec.stats.bytes += bytes;
            rec.stats.written += bytes;
            rec.tick(t);
        }
        Ok(())
    }

    fn update_random_cursor(&mut self, rec: &mut Recorder<'_>) -> EngineResult<()> {
        let mode = self.txn.unwrap_or(TxnMode::Pessimistic);
        while rec.more(rec.stats.done, self.args.reads()) {
            let k = self.rng.below(self.num);
            self.shape.fill(k, &mut self.key);
            let value = self.values.next(self.args.value_size);
            let t = Self::clock(rec);
            let op = TxnOp::CursorUpdate(&self.key, value);
            let r = rec.txn_op(self.db, mode, op, self.sync)?;
            if r.found {
                rec.stats.found += 1;
                rec.stats.bytes += r.bytes + self.pair_bytes();
                rec.stats.written += self.pair_bytes();
            }
            rec.tick(t);
        }
        Ok(())
    }
}

/// A put, in a transaction of `mode` if there is one.
fn put(
    db: &dyn Engine,
    mode: Option<TxnMode>,
    (key, value): (&[u8], &[u8]),
    sync: bool,
    rec: &mut Recorder<'_>,
) -> EngineResult<()> {
    match mode {
        None => db.put(key, value, sync),
        Some(m) => {
            let entry = [(key.to_vec(), value.to_vec())];
            rec.txn_op(db, m, TxnOp::Put(&entry), sync).map(|_| ())
        }
    }
}

/// A get (the length of the value found), in a transaction of `mode` if there is one.
fn get(
    db: &dyn Engine,
    mode: Option<TxnMode>,
    key: &[u8],
    rec: &mut Recorder<'_>,
) -> EngineResult<Option<usize>> {
    match mode {
        None => db.get(key),
        Some(m) => {
            let read = rec.txn_op(db, m, TxnOp::Get(key), false)?;
            Ok(read.found.then(|| read.bytes as usize - key.len()))
        }
    }
}

/// Bytes of randomtransaction's set prefix: the set's number, from 1, in decimal digits.
pub const SET_PREFIX_LEN: usize = 4;

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

/// 0..n in a random order (Fisher-Yates).
fn shuffled(n: u64, rng: &mut Rng) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}
