//! YCSB's core workloads (Cooper et al., "Benchmarking cloud serving systems with YCSB",
//! SoCC 2010, and the `workloads/workload[a-f]` files of YCSB's repository), as YCSB's
//! `CoreWorkload` runs them against its RocksDB binding.
//!
//! - `ycsb_load` inserts `--ycsb_records` records, key numbers 0 to N-1 taken from one
//!   counter by all threads (YCSB's load phase).
//! - `ycsb_a` .. `ycsb_f` run `--ycsb_operations` operations (or `--duration` seconds) of the
//!   published mixes:
//!
//!   | step | mix | key chosen |
//!   | --- | --- | --- |
//!   | ycsb_a | 50% READ, 50% UPDATE | scrambled zipfian |
//!   | ycsb_b | 95% READ, 5% UPDATE | scrambled zipfian |
//!   | ycsb_c | 100% READ | scrambled zipfian |
//!   | ycsb_d | 95% READ, 5% INSERT | latest |
//!   | ycsb_e | 95% SCAN, 5% INSERT | scrambled zipfian, scans of 1 to --ycsb_max_scan_length records (uniform) |
//!   | ycsb_f | 50% READ, 50% READ-MODIFY-WRITE | scrambled zipfian |
//!
//! Keys are YCSB's: `user` followed by the decimal FNV hash of the key number
//! (`insertorder=hashed`), so records lie in the key space in no order of insertion. The
//! zipfian choosers are YCSB's (see [`super::zipfian`]), with constant 0.99; as in YCSB a
//! chosen key number not inserted yet is drawn again, and the scrambled generator's key space
//! is the records plus twice the inserts the mix expects. Inserts of the request steps take
//! the next key numbers after the records, and "latest" favours the newest record whose
//! insert (and every one before it) is done, as YCSB's acknowledged counter.
//!
//! A record is `--ycsb_fieldcount` fields of `--ycsb_fieldlength` bytes, stored as one value
//! (the fields concatenated: 1000 bytes by default). READ reads the record. UPDATE changes
//! one field (YCSB's `writeallfields=false`) as YCSB's RocksDB binding does: it reads the
//! record, replaces the field and writes the whole record back (a missing record is not
//! written, and counts as found nothing). READ-MODIFY-WRITE is YCSB's: a READ then an UPDATE
//! of the same key, timed as one operation (and counted only as READ-MODIFY-WRITE). SCAN
//! reads that many records from the chosen key on. With `--transaction_db` or
//! `--optimistic_transaction_db` every write is a transaction of the engine's, an update's
//! read a read for update inside it (conflicts are retried and counted).
//!
//! The database records what the steps need in its workload marker: `records` (the record
//! count, grown by inserts), `fieldcount` and `fieldlength`; the request steps refuse a
//! database another workload built, or one whose record layout differs from the flags.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use strata::internals::Rng;

use super::zipfian::{fnv_hash64, ScrambledZipfian, SkewedLatest};
use super::{claim, require, run_threads, Ctx, Marker, Outcome, Recorder};
use crate::bench::engine::{Engine, EngineResult, TxnError, TxnMode, TxnOps, WriteOp};
use crate::bench::gen::ValueGen;
use crate::bench::{thread_generators, BenchArgs, BoxError};

/// The workload's name in the database's marker.
const WORKLOAD: &str = "ycsb";
const LOAD_STEP: &str = "ycsb_load";

/// The operation types, as YCSB names them in its report.
const OP_NAMES: &[&str] = &["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"];
const READ: usize = 0;
const UPDATE: usize = 1;
const INSERT: usize = 2;
const SCAN: usize = 3;
const READ_MODIFY_WRITE: usize = 4;

/// YCSB's core workloads A to F.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YcsbMix {
    A,
    B,
    C,
    D,
    E,
    F,
}

/// How a mix chooses the key of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Distribution {
    Zipfian,
    Latest,
}

impl YcsbMix {
    /// Percent of the operations of each type, in the order of [`OP_NAMES`] (the workload
    /// files' readproportion, updateproportion, insertproportion, scanproportion,
    /// readmodifywriteproportion).
    fn proportions(self) -> [u64; 5] {
        match self {
            YcsbMix::A => [50, 50, 0, 0, 0],
            YcsbMix::B => [95, 5, 0, 0, 0],
            YcsbMix::C => [100, 0, 0, 0, 0],
            YcsbMix::D => [95, 0, 5, 0, 0],
            YcsbMix::E => [0, 0, 5, 95, 0],
            YcsbMix::F => [50, 0, 0, 0, 50],
        }
    }

    fn distribution(self) -> Distribution {
        match self {
            YcsbMix::D => Distribution::Latest,
            _ => Distribution::Zipfian,
        }
    }

    /// The operation type for a draw `d` in 0..100.
    fn op_for(self, d: u64) -> usize {
        let mut below = 0;
        for (op, p) in self.proportions().into_iter().enumerate() {
            below += p;
            if d < below {
                return op;
            }
        }
        READ
    }
}

/// The flags a YCSB step cannot run with.
pub fn check_flags(name: &str, args: &BenchArgs) -> Result<(), String> {
    if args.num_column_families > 1 {
        return Err(format!(
            "{name}: --num_column_families={} does not fit YCSB, which keeps its records in \
             one table (the default column family)",
            args.num_column_families
        ));
    }
    let problems = [
        (
            args.ycsb_fieldcount == 0,
            "--ycsb_fieldcount must be at least 1",
        ),
        (
            args.ycsb_fieldlength == 0,
            "--ycsb_fieldlength must be at least 1",
        ),
        (
            args.ycsb_records() == 0,
            "--ycsb_records must be at least 1",
        ),
        (
            args.ycsb_max_scan_length == 0,
            "--ycsb_max_scan_length must be at least 1",
        ),
    ];
    match problems.iter().find(|(bad, _)| *bad) {
        Some((_, why)) => Err(format!("{name}: {why}")),
        None => Ok(()),
    }
}

/// The run's header line.
pub fn header(args: &BenchArgs) -> String {
    let operations = match args.duration {
        0 => format!("{} operations per step", args.ycsb_operations()),
        s => format!("{s} seconds per step"),
    };
    format!(
        "YCSB:       {} records to load, of {} fields x {} bytes; {operations}",
        args.ycsb_records(),
        args.ycsb_fieldcount,
        args.ycsb_fieldlength
    )
}

/// The key of record number `n`: `user` and the decimal hash of `n`.
pub fn key_of(n: u64) -> Vec<u8> {
    format!("user{}", fnv_hash64(n)).into_bytes()
}

/// The record layout of the flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    fields: usize,
    field_len: usize,
}

impl Layout {
    fn of(args: &BenchArgs) -> Layout {
        Layout {
            fields: args.ycsb_fieldcount,
            field_len: args.ycsb_fieldlength,
        }
    }

    fn record_len(self) -> usize {
        self.fields * self.field_len
    }

    /// A new record: every field from `values`.
    fn record(self, values: &mut ValueGen) -> Vec<u8> {
        let mut record = Vec::with_capacity(self.record_len());
        for _ in 0..self.fields {
            record.extend_from_slice(values.next(self.field_len));
        }
        record
    }

    /// `record` with field `field` replaced by `value`; an error naming the key when the
    /// stored record does not have this layout.
    fn with_field(
        self,
        key: &[u8],
        mut record: Vec<u8>,
        field: usize,
        value: &[u8],
    ) -> EngineResult<Vec<u8>> {
        if record.len() != self.record_len() {
            return Err(format!(
                "YCSB record {} holds {} bytes, not {} fields of {} bytes",
                String::from_utf8_lossy(key),
                record.len(),
                self.fields,
                self.field_len
            )
            .into());
        }
        let at = field * self.field_len;
        record[at..at + self.field_len].copy_from_slice(value);
        Ok(record)
    }

    fn record_in(self, marker: &mut Marker) {
        marker
            .facts
            .insert("fieldcount".into(), self.fields.to_string());
        marker
            .facts
            .insert("fieldlength".into(), self.field_len.to_string());
    }

    /// The flags' layout must be the database's.
    fn check_against(self, marker: &Marker, step: &str) -> Result<(), String> {
        let stored = Layout {
            fields: marker.number("fieldcount")? as usize,
            field_len: marker.number("fieldlength")? as usize,
        };
        if stored != self {
            return Err(format!(
                "{step}: the database's records have {} fields of {} bytes (from {LOAD_STEP}), \
                 but --ycsb_fieldcount={} --ycsb_fieldlength={}: give the flags of the load",
                stored.fields, stored.field_len, self.fields, self.field_len
            ));
        }
        Ok(())
    }
}

/// The operations thread `index` of `threads` does of `total`.
fn share(total: u64, threads: usize, index: usize) -> u64 {
    let threads = threads as u64;
    total / threads + u64::from((index as u64) < total % threads)
}

/// `ycsb_load`: inserts the records.
pub fn load(ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
    let args = ctx.args;
    let db = ctx.db;
    let layout = Layout::of(args);
    let records = args.ycsb_records();
    let mut marker = claim(db, WORKLOAD, ctx.name)?;
    if marker.facts.contains_key("fieldcount") {
        layout.check_against(&marker, ctx.name)?;
    }
    layout.record_in(&mut marker);
    let had = marker.number("records").unwrap_or(0);
    marker.facts.insert("records".into(), had.to_string());
    marker.write(db.path())?;

    let next = AtomicU64::new(0);
    let mode = args.txn_mode();
    let sync = args.options.sync;
    let mut outcome = run_threads(ctx, args.threads, OP_NAMES, |_, number, rec| {
        let (_, mut values) = thread_generators(args, number);
        while rec.in_time() {
            let n = next.fetch_add(1, Ordering::Relaxed);
            if n >= records {
                break;
            }
            let key = key_of(n);
            let record = layout.record(&mut values);
            let start = Instant::now();
            insert(db, rec, mode, sync, &key, &record)?;
            rec.record(INSERT, start, true);
        }
        Ok(())
    })?;
    let inserted = outcome.ops.get(INSERT).count;
    // With --duration the load may stop early: the records are then those inserted (key
    // numbers 0 to inserted-1, each thread's last one done before it stopped).
    marker
        .facts
        .insert("records".into(), had.max(inserted).to_string());
    marker.write(db.path())?;
    outcome.message = format!(
        "( records:{inserted} of {} fields x {} bytes )",
        layout.fields, layout.field_len
    );
    Ok(outcome)
}

/// The key numbers inserted so far, as YCSB's acknowledged counter: `limit` is one past the
/// highest number below which every insert is done; numbers done above it wait in `done`.
struct Acknowledged {
    limit: AtomicU64,
    done: Mutex<BTreeSet<u64>>,
}

impl Acknowledged {
    fn new(records: u64) -> Acknowledged {
        Acknowledged {
            limit: AtomicU64::new(records),
            done: Mutex::new(BTreeSet::new()),
        }
    }

    /// The highest key number that may be read (every one up to it is inserted).
    fn last(&self) -> u64 {
        self.limit.load(Ordering::Acquire).saturating_sub(1)
    }

    /// Insert `n` is done.
    fn acknowledge(&self, n: u64) {
        let mut done = match self.done.lock() {
            Ok(d) => d,
            Err(poisoned) => poisoned.into_inner(),
        };
        done.insert(n);
        let mut limit = self.limit.load(Ordering::Acquire);
        while done.remove(&limit) {
            limit += 1;
        }
        self.limit.store(limit, Ordering::Release);
    }
}

/// A thread's key chooser.
enum Chooser {
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
}

impl Chooser {
    /// A key number already inserted (YCSB's `nextKeynum`).
    fn next(&mut self, acked: &Acknowledged, rng: &mut Rng) -> u64 {
        match self {
            Chooser::Zipfian(z) => loop {
                let n = z.next(rng);
                if n <= acked.last() {
                    return n;
                }
            },
            Chooser::Latest(l) => l.next(acked.last(), rng),
        }
    }
}

/// `ycsb_a` .. `ycsb_f`: the mix's operations on the loaded records.
pub fn run(ctx: &Ctx<'_>, mix: YcsbMix) -> Result<Outcome, BoxError> {
    let args = ctx.args;
    let db = ctx.db;
    let layout = Layout::of(args);
    let mut marker = require(db, WORKLOAD, ctx.name, LOAD_STEP)?;
    layout.check_against(&marker, ctx.name)?;
    let records = marker.number("records")?;
    if records == 0 {
        return Err(format!("{}: the database holds no YCSB record yet", ctx.name).into());
    }
    let operations = args.ycsb_operations();
    let inserts = mix.proportions()[INSERT];
    // YCSB's key space for the scrambled zipfian: the records and twice the inserts expected.
    let expected_new = operations * inserts * 2 / 100;
    let next_insert = AtomicU64::new(records);
    let acked = Acknowledged::new(records);
    let mode = args.txn_mode();
    let sync = args.options.sync;
    let threads = args.threads;
    let mut outcome = run_threads(ctx, threads, OP_NAMES, |index, number, rec| {
        let (mut rng, mut values) = thread_generators(args, number);
        let mut chooser = match mix.distribution() {
            Distribution::Zipfian => {
                Chooser::Zipfian(ScrambledZipfian::new(records + expected_new + 1))
            }
            Distribution::Latest => Chooser::Latest(SkewedLatest::new(records)),
        };
        let mine = share(operations, threads, index);
        let mut done = 0;
        while rec.more(done, mine) {
            done += 1;
            let op = mix.op_for(rng.below(100));
            if op == INSERT {
                let n = next_insert.fetch_add(1, Ordering::Relaxed);
                let key = key_of(n);
                let record = layout.record(&mut values);
                let start = Instant::now();
                insert(db, rec, mode, sync, &key, &record)?;
                rec.record(INSERT, start, true);
                acked.acknowledge(n);
                continue;
            }
            let key = key_of(chooser.next(&acked, &mut rng));
            match op {
                READ => {
                    let start = Instant::now();
                    let value = db.get_value(0, &key)?;
                    rec.record(READ, start, value.is_some());
                    rec.read_bytes(key.len() + value.map_or(0, |v| v.len()));
                }
                SCAN => {
                    let length = 1 + rng.below(args.ycsb_max_scan_length);
                    let (mut seen, mut bytes) = (0, 0);
                    let start = Instant::now();
                    db.scan_range(0, &key, None, false, &mut |k, v| {
                        seen += 1;
                        bytes += k.len() + v.len();
                        seen < length
                    })?;
                    rec.record(SCAN, start, seen > 0);
                    rec.read_bytes(bytes);
                }
                UPDATE | READ_MODIFY_WRITE => {
                    let field = rng.below(layout.fields as u64) as usize;
                    let value = values.next(layout.field_len).to_vec();
                    let start = Instant::now();
                    let found = if op == READ_MODIFY_WRITE {
                        // YCSB's read of the whole record, then its update.
                        let read = db.get_value(0, &key)?;
                        rec.read_bytes(key.len() + read.map_or(0, |v| v.len()));
                        update(db, rec, (mode, sync), layout, &key, (field, &value))?
                    } else {
                        update(db, rec, (mode, sync), layout, &key, (field, &value))?
                    };
                    rec.record(op, start, found);
                }
                _ => unreachable!("insert handled above"),
            }
        }
        Ok(())
    })?;
    let inserted = outcome.ops.get(INSERT).count;
    if inserted > 0 {
        marker
            .facts
            .insert("records".into(), (records + inserted).to_string());
        marker.write(db.path())?;
    }
    let distribution = match mix.distribution() {
        Distribution::Zipfian => "scrambled zipfian",
        Distribution::Latest => "latest",
    };
    outcome.message = format!("( records:{} {distribution} )", records + inserted);
    Ok(outcome)
}

/// Writes a new record (in a transaction with a transaction flag).
fn insert(
    db: &dyn Engine,
    rec: &mut Recorder<'_>,
    mode: Option<TxnMode>,
    sync: bool,
    key: &[u8],
    record: &[u8],
) -> EngineResult<()> {
    let put = WriteOp::Put {
        cf: 0,
        key,
        value: record,
    };
    match mode {
        None => db.write_ops(&[put], sync)?,
        Some(mode) => {
            rec.transaction(db, mode, sync, &mut |txn: &mut dyn TxnOps| txn.write(put))?
        }
    }
    rec.wrote_bytes(key.len() + record.len());
    Ok(())
}

/// UPDATE of one field, as YCSB's RocksDB binding: the record read, the field replaced, the
/// record written back. Returns whether the record was there (a missing one is not written).
fn update(
    db: &dyn Engine,
    rec: &mut Recorder<'_>,
    (mode, sync): (Option<TxnMode>, bool),
    layout: Layout,
    key: &[u8],
    (field, value): (usize, &[u8]),
) -> EngineResult<bool> {
    let written = match mode {
        None => match db.get_value(0, key)? {
            None => None,
            Some(record) => {
                let read = record.len();
                let record = layout.with_field(key, record, field, value)?;
                db.write_ops(
                    &[WriteOp::Put {
                        cf: 0,
                        key,
                        value: &record,
                    }],
                    sync,
                )?;
                Some((read, record.len()))
            }
        },
        Some(mode) => {
            let mut written = None;
            rec.transaction(db, mode, sync, &mut |txn: &mut dyn TxnOps| {
                written = None;
                let Some(record) = txn.get(0, key, true)? else {
                    return Ok(());
                };
                let read = record.len();
                let record = layout
                    .with_field(key, record, field, value)
                    .map_err(TxnError::Failed)?;
                txn.write(WriteOp::Put {
                    cf: 0,
                    key,
                    value: &record,
                })?;
                written = Some((read, record.len()));
                Ok(())
            })?;
            written
        }
    };
    match written {
        Some((read, wrote)) => {
            rec.read_bytes(key.len() + read);
            rec.wrote_bytes(key.len() + wrote);
            Ok(true)
        }
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_have_the_published_proportions() {
        for (mix, read, update, insert, scan, rmw) in [
            (YcsbMix::A, 50, 50, 0, 0, 0),
            (YcsbMix::B, 95, 5, 0, 0, 0),
            (YcsbMix::C, 100, 0, 0, 0, 0),
            (YcsbMix::D, 95, 0, 5, 0, 0),
            (YcsbMix::E, 0, 0, 5, 95, 0),
            (YcsbMix::F, 50, 0, 0, 0, 50),
        ] {
            let mut counts = [0u64; 5];
            for d in 0..100 {
                counts[mix.op_for(d)] += 1;
            }
            assert_eq!(counts, [read, update, insert, scan, rmw], "{mix:?}");
        }
        assert_eq!(YcsbMix::D.distribution(), Distribution::Latest);
        assert_eq!(YcsbMix::E.distribution(), Distribution::Zipfian);
    }

    #[test]
    fn keys_are_user_and_the_hashed_number() {
        assert_eq!(key_of(0), format!("user{}", fnv_hash64(0)).into_bytes());
        assert!(key_of(1).starts_with(b"user"));
        assert_ne!(key_of(1), key_of(2));
    }

    #[test]
    fn an_update_replaces_one_field_and_checks_the_layout() {
        let layout = Layout {
            fields: 3,
            field_len: 2,
        };
        let record = b"aabbcc".to_vec();
        let updated = layout.with_field(b"user1", record, 1, b"XY").unwrap();
        assert_eq!(updated, b"aaXYcc");
        let e = layout
            .with_field(b"user1", b"short".to_vec(), 0, b"XY")
            .unwrap_err();
        assert!(e.to_string().contains("user1 holds 5 bytes"), "{e}");
    }

    #[test]
    fn operations_are_shared_among_threads() {
        assert_eq!(
            (0..3).map(|i| share(10, 3, i)).collect::<Vec<_>>(),
            [4, 3, 3]
        );
        assert_eq!((0..4).map(|i| share(2, 4, i)).sum::<u64>(), 2);
    }

    #[test]
    fn acknowledged_inserts_advance_in_order() {
        let acked = Acknowledged::new(10);
        assert_eq!(acked.last(), 9);
        acked.acknowledge(11);
        assert_eq!(acked.last(), 9, "10 is not done yet");
        acked.acknowledge(10);
        assert_eq!(acked.last(), 11);
    }
}
