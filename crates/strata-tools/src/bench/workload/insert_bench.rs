//! The insert benchmark (Mark Callaghan's iibench, as MyRocks lays its table out): a table
//! `purchases_index` with an auto-increment primary key and three secondary indexes, each a
//! column family.
//!
//! | family | key | value |
//! | --- | --- | --- |
//! | `insertbench_pk` | transactionid (8) | dateandtime (4) · cashregisterid (4) · customerid (4) · productid (4) · price (4) · data |
//! | `insertbench_marketsegment` | price (4) · customerid (4) · transactionid (8) | empty |
//! | `insertbench_registersegment` | cashregisterid (4) · price (4) · customerid (4) · transactionid (8) | empty |
//! | `insertbench_pdc` | price (4) · dateandtime (4) · customerid (4) · transactionid (8) | empty |
//!
//! Integers are big-endian; dateandtime is Unix seconds; price, a `float` column, is its
//! IEEE-754 bits made to sort as the numbers do (sign bit flipped for positive numbers, all
//! bits for negative ones), as MyRocks encodes floats in index keys. An index key is the
//! index's columns and then the primary key (MyRocks's layout), so that it is unique.
//!
//! Rows are iibench.py's: cashregisterid below 1,000, productid below 10,000, customerid
//! below 100,000, price = (uniform(0, 500) + customerid) / 100, data of 10 bytes, half of
//! it ('a's) compressible and the rest random (`data_length_min` = `data_length_max` = 10,
//! `data_random_pct` 50, the random part 0.75 of it for base64's overhead). Queries are
//! iibench's index-only range scans of 10 rows: marketsegment from `price >= p`,
//! registersegment from `cashregisterid > c`, pdc from `price >= p`, with p drawn as a
//! row's price and c as a row's cash register.
//!
//! Invariant, checked by [`IndexVerifier`]: each index holds exactly the keys derived from
//! the primary rows: no orphan entry, none missing.
//!
//! Steps (Mark Callaghan's sequence): `insertbench_l_i0` inserts rows into the table
//! without indexes; `insertbench_create_index` reads the rows in key order and writes the
//! three indexes; `insertbench_l_i1` inserts rows with their index entries; `_l_i2` also
//! deletes as many of the oldest rows (lowest keys) with theirs, so that the table keeps
//! its size; `_qr100`, `_qr500` and `_qr1000` run the range queries on `--threads` threads
//! while one more thread inserts and deletes as l_i2 does at that many rows per second,
//! and tell whether it kept the rate. New keys continue after the largest key of the table,
//! deletes start at its smallest. Each batch of `--batch_size` rows (and its deletes) is
//! one write batch, or one transaction with `--transaction_db` or
//! `--optimistic_transaction_db` (the deletes then read their rows `for_update`). The
//! marker's fact `indexes` says whether the indexes are built, which orders the steps.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use strata::internals::Rng;

use super::super::engine::{Engine, EngineResult, TxnError, TxnOps, WriteOp};
use super::super::{thread_generators, BenchArgs, BoxError};
use super::batch::{RowLocks, Writes};
use super::{claim, require, run_threads, Ctx, Outcome, Recorder};

/// The column families of the workload, index 0 first (the interface's "default").
pub const FAMILIES: [&str; 5] = [
    "default",
    "insertbench_pk",
    "insertbench_marketsegment",
    "insertbench_registersegment",
    "insertbench_pdc",
];
pub const PK_CF: usize = 1;
/// The families of the secondary indexes, in [`Index`] order.
pub const INDEX_CFS: [usize; 3] = [2, 3, 4];

const CASH_REGISTERS: u32 = 1_000;
const PRODUCTS: u32 = 10_000;
const CUSTOMERS: u32 = 100_000;
const MAX_PRICE: f64 = 500.0;
const DATA_LENGTH: usize = 10;
const DATA_RANDOM_PERCENT: usize = 50;
/// Index entries a range query reads (iibench's `rows_per_query`).
pub const ROWS_PER_QUERY: usize = 10;

/// The secondary indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    MarketSegment,
    RegisterSegment,
    Pdc,
}

impl Index {
    pub const ALL: [Index; 3] = [Index::MarketSegment, Index::RegisterSegment, Index::Pdc];

    pub fn name(self) -> &'static str {
        match self {
            Index::MarketSegment => "marketsegment",
            Index::RegisterSegment => "registersegment",
            Index::Pdc => "pdc",
        }
    }

    pub fn cf(self) -> usize {
        INDEX_CFS[self as usize]
    }
}

/// One row of `purchases_index`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub transactionid: u64,
    pub dateandtime: u32,
    pub cashregisterid: u32,
    pub customerid: u32,
    pub productid: u32,
    pub price: f32,
    pub data: Vec<u8>,
}

/// Bytes of a row's value before its data.
const ROW_FIXED: usize = 20;

impl Row {
    /// A new row with primary key `transactionid`, written at `dateandtime`.
    pub fn generate(rng: &mut Rng, transactionid: u64, dateandtime: u32) -> Row {
        let cashregisterid = rng.below(u64::from(CASH_REGISTERS)) as u32;
        let productid = rng.below(u64::from(PRODUCTS)) as u32;
        let customerid = rng.below(u64::from(CUSTOMERS)) as u32;
        let price = random_price(rng, customerid);
        let random_len = DATA_LENGTH * 3 * DATA_RANDOM_PERCENT / 400;
        let mut data = vec![b'a'; DATA_LENGTH - random_len];
        const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        data.extend((0..random_len).map(|_| BASE64[rng.below(64) as usize]));
        Row {
            transactionid,
            dateandtime,
            cashregisterid,
            customerid,
            productid,
            price,
            data,
        }
    }

    pub fn key(&self) -> [u8; 8] {
        self.transactionid.to_be_bytes()
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(ROW_FIXED + self.data.len());
        v.extend_from_slice(&self.dateandtime.to_be_bytes());
        v.extend_from_slice(&self.cashregisterid.to_be_bytes());
        v.extend_from_slice(&self.customerid.to_be_bytes());
        v.extend_from_slice(&self.productid.to_be_bytes());
        v.extend_from_slice(&self.price.to_bits().to_be_bytes());
        v.extend_from_slice(&self.data);
        v
    }

    /// The row stored under `key` as `value`, or an error naming what does not parse.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<Row, String> {
        let (Ok(k), true) = (<[u8; 8]>::try_from(key), value.len() >= ROW_FIXED) else {
            return Err(format!(
                "insertbench: a primary row that is not the workload's: key {key:02x?}, {} value bytes",
                value.len()
            ));
        };
        let word =
            |i: usize| u32::from_be_bytes([value[i], value[i + 1], value[i + 2], value[i + 3]]);
        Ok(Row {
            transactionid: u64::from_be_bytes(k),
            dateandtime: word(0),
            cashregisterid: word(4),
            customerid: word(8),
            productid: word(12),
            price: f32::from_bits(word(16)),
            data: value[ROW_FIXED..].to_vec(),
        })
    }

    /// The row's key in `index`.
    pub fn index_key(&self, index: Index) -> Vec<u8> {
        let mut k = Vec::with_capacity(20);
        let price = sortable_price(self.price);
        match index {
            Index::MarketSegment => {
                k.extend_from_slice(&price);
                k.extend_from_slice(&self.customerid.to_be_bytes());
            }
            Index::RegisterSegment => {
                k.extend_from_slice(&self.cashregisterid.to_be_bytes());
                k.extend_from_slice(&price);
                k.extend_from_slice(&self.customerid.to_be_bytes());
            }
            Index::Pdc => {
                k.extend_from_slice(&price);
                k.extend_from_slice(&self.dateandtime.to_be_bytes());
                k.extend_from_slice(&self.customerid.to_be_bytes());
            }
        }
        k.extend_from_slice(&self.key());
        k
    }
}

/// iibench's price for a customer: (uniform(0, max_price) + customerid) / 100.
fn random_price(rng: &mut Rng, customerid: u32) -> f32 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    ((u * MAX_PRICE + f64::from(customerid)) / 100.0) as f32
}

/// A float's bytes in an order that sorts as the numbers do.
pub fn sortable_price(price: f32) -> [u8; 4] {
    let bits = price.to_bits();
    let sortable = if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    };
    sortable.to_be_bytes()
}

/// Where a query of `index` starts (its lower bound, included), drawn as iibench draws it.
pub fn query_start(rng: &mut Rng, index: Index) -> Vec<u8> {
    match index {
        Index::MarketSegment | Index::Pdc => {
            let customerid = rng.below(u64::from(CUSTOMERS)) as u32;
            sortable_price(random_price(rng, customerid)).to_vec()
        }
        // cashregisterid > c: from c + 1 on.
        Index::RegisterSegment => (rng.below(u64::from(CASH_REGISTERS)) as u32 + 1)
            .to_be_bytes()
            .to_vec(),
    }
}

/// Seconds since the Unix epoch, as a row's dateandtime.
pub fn now_seconds() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

/// Checks the invariant of the module's doc: feed it the primary rows and every index's
/// entries (in any order), then [`IndexVerifier::finish`].
#[derive(Default)]
pub struct IndexVerifier {
    expected: [HashSet<Vec<u8>>; 3],
    rows: u64,
    entries: [u64; 3],
    orphans: [u64; 3],
    found: [Vec<Vec<u8>>; 3],
    problems: Vec<String>,
}

impl IndexVerifier {
    /// A primary row; `with_indexes` false when the indexes are not built yet (l_i0).
    pub fn row(&mut self, key: &[u8], value: &[u8], with_indexes: bool) {
        self.rows += 1;
        match Row::decode(key, value) {
            Ok(row) if with_indexes => {
                for index in Index::ALL {
                    self.expected[index as usize].insert(row.index_key(index));
                }
            }
            Ok(_) => {}
            Err(e) if self.problems.len() < 10 => self.problems.push(e),
            Err(_) => {}
        }
    }

    pub fn index_entry(&mut self, index: Index, key: &[u8], value: &[u8]) {
        let i = index as usize;
        self.entries[i] += 1;
        if !value.is_empty() && self.problems.len() < 10 {
            self.problems
                .push(format!("{} entry {key:02x?} has a value", index.name()));
        }
        self.found[i].push(key.to_vec());
    }

    /// "N rows, each index N entries", or what is wrong.
    pub fn finish(mut self) -> Result<String, String> {
        for index in Index::ALL {
            let i = index as usize;
            for key in std::mem::take(&mut self.found[i]) {
                if !self.expected[i].remove(&key) {
                    self.orphans[i] += 1;
                }
            }
            let missing = self.expected[i].len();
            if self.orphans[i] > 0 || missing > 0 {
                self.problems.push(format!(
                    "{}: {} entries without a row, {missing} rows without an entry",
                    index.name(),
                    self.orphans[i]
                ));
            }
        }
        if self.problems.is_empty() {
            Ok(format!(
                "{} rows; marketsegment {}, registersegment {}, pdc {} entries",
                self.rows, self.entries[0], self.entries[1], self.entries[2]
            ))
        } else {
            Err(format!(
                "insertbench: the indexes do not match the rows: {}",
                self.problems.join("; ")
            ))
        }
    }
}

/// Keeps a writer at `rows_per_second`: how long to wait before writing more, given the
/// rows written so far.
#[derive(Clone, Copy, Debug)]
pub struct Pacer {
    started: Instant,
    rows_per_second: u64,
}

impl Pacer {
    pub fn new(rows_per_second: u64) -> Pacer {
        Pacer {
            started: Instant::now(),
            rows_per_second: rows_per_second.max(1),
        }
    }

    /// The wait before the next write, after `rows` rows, at `now`.
    pub fn wait(&self, rows: u64, now: Instant) -> Duration {
        let due = Duration::from_secs_f64(rows as f64 / self.rows_per_second as f64);
        (self.started + due).saturating_duration_since(now)
    }

    /// Whether `rows` rows in `seconds` kept the rate (within 5%).
    pub fn kept(&self, rows: u64, seconds: f64) -> bool {
        rows as f64 >= 0.95 * self.rows_per_second as f64 * seconds
    }
}

// The steps.

/// The workload's name in the database's marker; its fact `indexes` is 1 once
/// insertbench_create_index built them.
pub const WORKLOAD: &str = "insertbench";

/// The steps of the insert benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `insertbench_l_i0`: inserts into the table without secondary indexes.
    LoadWithoutIndexes,
    /// `insertbench_create_index`: builds the three indexes from the rows.
    CreateIndexes,
    /// `insertbench_l_i1`: inserts maintaining the indexes.
    Insert,
    /// `insertbench_l_i2`: inserts, and deletes as many of the oldest rows.
    InsertDelete,
    /// `insertbench_qr100` and the like: range queries while one writer inserts (and
    /// deletes, as l_i2) this many rows per second.
    Query { rows_per_second: u64 },
}

/// The operation types of the report, by index: a write batch of inserts (and deletes), a
/// batch of index entries built, and a query of each index.
const OPS: &[&str] = &[
    "insert_batch",
    "index_batch",
    "query_marketsegment",
    "query_registersegment",
    "query_pdc",
];
const INSERT_OP: usize = 0;
const INDEX_OP: usize = 1;
/// Rows per batch of insertbench_create_index.
const INDEX_BATCH_ROWS: usize = 1000;

/// The flags the steps cannot run with (none beyond the run's own checks).
pub fn check_flags(_name: &str, _args: &BenchArgs) -> Result<(), String> {
    Ok(())
}

/// The run's header line: rows per thread of the insert steps, their batches, the queries.
pub fn header(args: &BenchArgs) -> String {
    let (rows, queries) = match args.duration {
        0 => (
            format!(
                "l_i0 {} rows per thread, l_i1 and l_i2 {}",
                args.num,
                args.writes()
            ),
            format!("{} queries per thread", args.reads()),
        ),
        s => (
            format!(
                "l_i0 {} rows per thread, then {s} seconds per step",
                args.num
            ),
            format!("{s} seconds of queries"),
        ),
    };
    format!(
        "Insertbench: {rows}, in batches of {}; qr steps: {queries} of {ROWS_PER_QUERY} rows",
        args.batch_size
    )
}

/// Runs `step`.
pub fn run(ctx: &Ctx<'_>, step: Step) -> Result<Outcome, BoxError> {
    let (db, name) = (ctx.db, ctx.name);
    let mut marker = match step {
        Step::LoadWithoutIndexes => claim(db, WORKLOAD, name)?,
        _ => require(db, WORKLOAD, name, "insertbench_l_i0")?,
    };
    let indexed = marker.facts.get("indexes").is_some_and(|v| v == "1");
    match step {
        Step::LoadWithoutIndexes if indexed => {
            return Err(format!(
                "{name}: the secondary indexes are built already: insertbench_l_i1 inserts \
                 maintaining them"
            )
            .into())
        }
        Step::LoadWithoutIndexes => {
            marker.facts.insert("indexes".into(), "0".into());
            marker.write(db.path())?;
        }
        Step::CreateIndexes if indexed => {
            return Err(format!("{name}: the secondary indexes are built already").into())
        }
        Step::CreateIndexes => {}
        _ if !indexed => {
            return Err(format!(
                "{name}: the secondary indexes are not built: run insertbench_create_index \
                 after insertbench_l_i0"
            )
            .into())
        }
        _ => {}
    }
    let mut outcome = match step {
        Step::CreateIndexes => {
            let outcome = create_indexes(ctx)?;
            marker.facts.insert("indexes".into(), "1".into());
            marker.write(db.path())?;
            outcome
        }
        Step::Query { rows_per_second } => query(ctx, rows_per_second)?,
        _ => insert(ctx, step)?,
    };
    if ctx.args.verify_workload {
        let checked = verify(db, step != Step::LoadWithoutIndexes)?;
        outcome.notes.push(format!("verified: {checked}"));
    }
    Ok(outcome)
}

/// The smallest and largest primary keys (0, 0 for an empty table).
fn key_bounds(db: &dyn Engine) -> EngineResult<(u64, u64)> {
    let mut bounds = [0u64; 2];
    for (i, reverse) in [(0, false), (1, true)] {
        db.scan_range(PK_CF, b"", None, reverse, &mut |key, _| {
            if let Ok(k) = <[u8; 8]>::try_from(key) {
                bounds[i] = u64::from_be_bytes(k);
            }
            false
        })?;
    }
    Ok((bounds[0], bounds[1]))
}

/// Where the writers of a step take their primary keys: new rows from `next`, rows to
/// delete from `oldest`.
struct Keys {
    next: AtomicU64,
    oldest: AtomicU64,
    inserted: AtomicU64,
    deleted: AtomicU64,
}

impl Keys {
    fn of(db: &dyn Engine) -> EngineResult<Keys> {
        let (first, last) = key_bounds(db)?;
        Ok(Keys {
            next: AtomicU64::new(last + 1),
            oldest: AtomicU64::new(first.max(1)),
            inserted: AtomicU64::new(0),
            deleted: AtomicU64::new(0),
        })
    }
}

/// A new row as written: its key, value and index keys (none before the indexes exist).
struct EncodedRow {
    key: [u8; 8],
    value: Vec<u8>,
    index_keys: Vec<Vec<u8>>,
}

/// One write of `n` new rows (with their index entries when `indexed`) and, when `delete`,
/// of as many of the oldest rows gone (with theirs), atomically. Records it.
fn insert_batch(
    writes: &Writes<'_>,
    keys: &Keys,
    rng: &mut Rng,
    n: u64,
    (indexed, delete): (bool, bool),
    rec: &mut Recorder<'_>,
) -> EngineResult<()> {
    let first = keys.next.fetch_add(n, Ordering::Relaxed);
    let when = now_seconds();
    let rows: Vec<EncodedRow> = (0..n)
        .map(|i| {
            let row = Row::generate(rng, first + i, when);
            EncodedRow {
                key: row.key(),
                value: row.encode(),
                index_keys: if indexed {
                    Index::ALL.iter().map(|&x| row.index_key(x)).collect()
                } else {
                    Vec::new()
                },
            }
        })
        .collect();
    // The oldest rows, never one this batch or a later one inserts.
    let victims = if delete {
        let from = keys.oldest.fetch_add(n, Ordering::Relaxed);
        from..(from + n).min(first)
    } else {
        0..0
    };
    let mut deleted = 0;
    let start = Instant::now();
    writes.run(rec, None, &mut |t: &mut dyn TxnOps| {
        deleted = 0;
        for row in &rows {
            t.write(WriteOp::Put {
                cf: PK_CF,
                key: &row.key,
                value: &row.value,
            })?;
            for (index, ikey) in Index::ALL.iter().zip(&row.index_keys) {
                t.write(WriteOp::Put {
                    cf: index.cf(),
                    key: ikey,
                    value: b"",
                })?;
            }
        }
        for pk in victims.clone() {
            let key = pk.to_be_bytes();
            let Some(value) = t.get(PK_CF, &key, true)? else {
                continue;
            };
            let row = Row::decode(&key, &value).map_err(|e| TxnError::Failed(e.into()))?;
            t.write(WriteOp::Delete {
                cf: PK_CF,
                key: &key,
            })?;
            for index in Index::ALL {
                t.write(WriteOp::Delete {
                    cf: index.cf(),
                    key: &row.index_key(index),
                })?;
            }
            deleted += 1;
        }
        Ok(())
    })?;
    rec.record(INSERT_OP, start, true);
    let bytes: usize = rows
        .iter()
        .map(|r| r.key.len() + r.value.len() + r.index_keys.iter().map(Vec::len).sum::<usize>())
        .sum();
    rec.wrote_bytes(bytes);
    keys.inserted.fetch_add(n, Ordering::Relaxed);
    keys.deleted.fetch_add(deleted, Ordering::Relaxed);
    Ok(())
}

/// insertbench_l_i0, _l_i1 and _l_i2: each thread inserts its rows (`--num` in l_i0,
/// `--writes` in the others, or for `--duration` seconds) in `--batch_size` batches.
fn insert(ctx: &Ctx<'_>, step: Step) -> Result<Outcome, BoxError> {
    let (args, db) = (ctx.args, ctx.db);
    let keys = Keys::of(db)?;
    let locks = RowLocks::new();
    let writes = Writes {
        db,
        mode: args.txn_mode(),
        sync: args.options.sync,
        locks: &locks,
    };
    let indexed = step != Step::LoadWithoutIndexes;
    let delete = step == Step::InsertDelete;
    let per_thread = match step {
        Step::LoadWithoutIndexes => args.num,
        _ => args.writes(),
    };
    let batch = args.batch_size as u64;
    let mut outcome = run_threads(ctx, args.threads, OPS, |_, number, rec| {
        let (mut rng, _) = thread_generators(args, number);
        let mut done = 0;
        while rec.more(done, per_thread) {
            let n = if args.duration > 0 {
                batch
            } else {
                batch.min(per_thread - done)
            };
            insert_batch(&writes, &keys, &mut rng, n, (indexed, delete), rec)?;
            done += n;
        }
        Ok(())
    })?;
    let (inserted, deleted) = (keys.inserted.into_inner(), keys.deleted.into_inner());
    // The result line counts rows, as the insert benchmark reports inserts per second.
    outcome.total.done = inserted;
    outcome.message = format!("( rows inserted:{inserted} deleted:{deleted} )");
    let how = match writes.mode {
        Some(m) => format!("one {} transaction per batch", m.name()),
        None => "one write batch per batch".into(),
    };
    outcome.notes.push(format!(
        "{:.0} rows inserted per second in batches of {batch} rows ({how}){}",
        inserted as f64 / outcome.elapsed.max(1e-9),
        if indexed {
            ", each with its 3 index entries"
        } else {
            ", no secondary index"
        }
    ));
    Ok(outcome)
}

/// insertbench_create_index: reads the rows in key order and writes their index entries,
/// INDEX_BATCH_ROWS rows per batch.
fn create_indexes(ctx: &Ctx<'_>) -> Result<Outcome, BoxError> {
    let (args, db) = (ctx.args, ctx.db);
    let indexed = AtomicU64::new(0);
    let mut outcome = run_threads(ctx, 1, OPS, |_, _, rec| {
        let mut from: Vec<u8> = Vec::new();
        loop {
            let mut rows = Vec::with_capacity(INDEX_BATCH_ROWS);
            let mut bad = None;
            db.scan_range(PK_CF, &from, None, false, &mut |key, value| {
                match Row::decode(key, value) {
                    Ok(row) => rows.push(row),
                    Err(e) => bad = Some(e),
                }
                bad.is_none() && rows.len() < INDEX_BATCH_ROWS
            })?;
            if let Some(e) = bad {
                return Err(e.into());
            }
            let Some(last) = rows.last() else {
                return Ok(());
            };
            // The next scan starts just after the last row read.
            from = last.key().to_vec();
            from.push(0);
            let keys: Vec<(usize, Vec<u8>)> = rows
                .iter()
                .flat_map(|row| Index::ALL.map(|i| (i.cf(), row.index_key(i))))
                .collect();
            let ops: Vec<WriteOp<'_>> = keys
                .iter()
                .map(|(cf, key)| WriteOp::Put {
                    cf: *cf,
                    key,
                    value: b"",
                })
                .collect();
            let start = Instant::now();
            db.write_ops(&ops, args.options.sync)?;
            rec.record(INDEX_OP, start, true);
            rec.wrote_bytes(keys.iter().map(|(_, k)| k.len()).sum());
            indexed.fetch_add(rows.len() as u64, Ordering::Relaxed);
        }
    })?;
    let rows = indexed.into_inner();
    outcome.total.done = rows;
    outcome.message = format!("( rows indexed:{rows} )");
    outcome.notes.push(format!(
        "{:.0} rows indexed per second: 3 index entries each, {INDEX_BATCH_ROWS} rows per batch",
        rows as f64 / outcome.elapsed.max(1e-9)
    ));
    Ok(outcome)
}

/// insertbench_qr*: `--threads` threads each run `--reads` queries (or for `--duration`
/// seconds), going round the three indexes, while one more thread inserts and deletes
/// `rows_per_second` rows per second in `--batch_size` batches.
fn query(ctx: &Ctx<'_>, rows_per_second: u64) -> Result<Outcome, BoxError> {
    let (args, db) = (ctx.args, ctx.db);
    let keys = Keys::of(db)?;
    let locks = RowLocks::new();
    let writes = Writes {
        db,
        mode: args.txn_mode(),
        sync: args.options.sync,
        locks: &locks,
    };
    let readers = args.threads;
    let readers_left = AtomicUsize::new(readers);
    let batch = args.batch_size as u64;
    let pacer = Pacer::new(rows_per_second);
    let mut outcome = run_threads(ctx, readers + 1, OPS, |i, number, rec| {
        let (mut rng, _) = thread_generators(args, number);
        if i == readers {
            // The writer, until the readers are done.
            while readers_left.load(Ordering::Acquire) > 0 && rec.in_time() {
                let wait = pacer.wait(keys.inserted.load(Ordering::Relaxed), Instant::now());
                if !wait.is_zero() {
                    std::thread::sleep(wait.min(Duration::from_millis(10)));
                    continue;
                }
                insert_batch(&writes, &keys, &mut rng, batch, (true, true), rec)?;
            }
            return Ok(());
        }
        let mut done = 0u64;
        let result = (|| {
            while rec.more(done, args.reads()) {
                let index = Index::ALL[(i + done as usize) % Index::ALL.len()];
                let lower = query_start(&mut rng, index);
                let (mut entries, mut bytes) = (0, 0);
                let start = Instant::now();
                db.scan_range(index.cf(), &lower, None, false, &mut |key, _| {
                    entries += 1;
                    bytes += key.len();
                    entries < ROWS_PER_QUERY
                })?;
                rec.record(OPS.len() - 3 + index as usize, start, entries > 0);
                rec.read_bytes(bytes);
                done += 1;
            }
            EngineResult::Ok(())
        })();
        readers_left.fetch_sub(1, Ordering::Release);
        result
    })?;
    let queries: u64 = (0..Index::ALL.len())
        .map(|i| outcome.ops.get(OPS.len() - 3 + i).count)
        .sum();
    let inserted = keys.inserted.load(Ordering::Relaxed);
    let rate = inserted as f64 / outcome.elapsed.max(1e-9);
    // The result line counts queries, as the insert benchmark reports queries per second.
    outcome.total.done = queries;
    outcome.message = format!("( queries:{queries} rows inserted:{inserted} )");
    outcome.notes.push(format!(
        "writer: {rate:.0} rows/s inserted and as many oldest deleted, target {rows_per_second}: {}",
        if pacer.kept(inserted, outcome.elapsed) {
            "kept its rate"
        } else {
            "fell behind"
        }
    ));
    Ok(outcome)
}

/// The check of the module's doc over the whole table; `indexed`: the indexes are built.
fn verify(db: &dyn Engine, indexed: bool) -> Result<String, BoxError> {
    let mut v = IndexVerifier::default();
    db.scan_range(PK_CF, b"", None, false, &mut |k, val| {
        v.row(k, val, indexed);
        true
    })?;
    for index in Index::ALL {
        db.scan_range(index.cf(), b"", None, false, &mut |k, val| {
            v.index_entry(index, k, val);
            true
        })?;
    }
    Ok(v.finish()?)
}

#[cfg(test)]
mod tests;
