//! `strata stress`: random operations on many threads checked against an expected state kept
//! outside the database (RocksDB's db_stress in spirit), and a crash mode that kills the
//! process at random moments and verifies what comes back.
//!
//! Each thread owns one contiguous block of the key space (see [`Blocks`]), so the expected
//! value of an owned key is known exactly between the thread's own operations: gets,
//! iterations and snapshot reads of owned keys are checked against it while the run goes on.
//! Writes go through the [`oracle`]: pending before, committed after the acknowledgement.
//! Keys are `k` and 8 digits, so their bytes sort as their indexes and a block is a range of
//! the key space: a range deletion inside a thread's block deletes only keys it owns.
//!
//! Verification after a run or a kill: for every key, the database holds its committed value
//! or the one of a write that was in flight; a full scan agrees with point reads and holds
//! no key outside the key space. With or without `--sync`, a killed process loses no
//! acknowledged write (the WAL is written before a write is acknowledged, and the kernel
//! keeps what a killed process wrote). A batch in flight at the kill is all there or not at
//! all: a thread has one write in flight, so its keys still marked pending are one batch.
//!
//! Range deletions (`delete_range`, alone or in a batch): from an owned key over up to 32
//! keys of the thread's block, in one column family, so they delete the keys of that family
//! in the range. The oracle marks each of those keys pending (a delete) before the write and
//! commits it after, as for any other write; a batch's keys get the value its last write to
//! them leaves (a put after a range deletion in the same batch survives it).
//!
//! Merges (`uint64add`): when the mix has merges, every fourth key (`k % 4 == 3`) is a
//! *counter*, whose values are 8-byte little-endian integers and whose value id is the
//! integer itself. A put writes the next id; a merge adds 1 to 16, so that the id after it is
//! the sum. The oracle then models merges as any other write: pending before, committed after.
//!
//! Column families (`--column_families`, default 3): key `k` lives in family `k % N` (see
//! [`store`]), so batches span families and must stay atomic across them, one family's
//! flushes and compactions run beside the others', and a kill must lose no acknowledged write
//! in any of them.
//!
//! `--txn` runs a bank instead: transfers between accounts in pessimistic, optimistic and
//! two-phase transactions, checked against a ledger of acknowledged transfers (see [`bank`]
//! and [`ledger`]); the crash loop is the same.

mod bank;
mod ledger;
mod oracle;
mod store;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use std::sync::Arc;
use strata::internals::Rng;
use strata::{Options, UInt64Add, WriteBatch, WriteOptions};

use crate::engine_flags::{parse_bool, EngineFlags};
use oracle::Oracle;
use store::Store;

use crate::cli::BoxError;

/// `strata stress` flags. The engine's options are the bench's, with other defaults: the
/// library's (a bloom filter, memtable filters, no compression), and sizes so small that flushes and
/// compactions happen all the time (and, with `--enable_blob_files`, blob files are cut
/// often).
#[derive(Args, Debug, Clone)]
#[command(
    rename_all = "snake_case",
    args_override_self = true,
    mut_arg("write_buffer_size", |a| a.default_value("65536")),
    mut_arg("target_file_size_base", |a| a.default_value("65536")),
    mut_arg("max_bytes_for_level_base", |a| a.default_value("262144")),
    mut_arg("compression_type", |a| a.default_value("none")),
    mut_arg("bloom_bits", |a| a.default_value("10")),
    mut_arg("memtable_bloom_size_ratio", |a| a.default_value("0.02")),
    mut_arg("memtable_whole_key_filtering", |a| a.default_value("true")),
    mut_arg("max_background_jobs", |a| a.default_value("3")),
    mut_arg("max_subcompactions", |a| a.default_value("2")),
    mut_arg("blob_file_size", |a| a.default_value("65536"))
)]
pub struct StressArgs {
    /// Database directory (created if missing; an existing one is verified first).
    #[arg(long)]
    pub db: PathBuf,

    /// The expected-state file (default: the database path with `.expected` appended).
    #[arg(long)]
    pub expected_state: Option<PathBuf>,

    /// Seconds to run (in crash mode: the whole loop of runs and kills).
    #[arg(long, default_value_t = 60)]
    pub duration: u64,

    /// Worker threads.
    #[arg(long, default_value_t = 4)]
    pub threads: u64,

    /// Size of the key space.
    #[arg(long, default_value_t = 10_000, conflicts_with = "txn")]
    pub keys: u64,

    /// Column families the keys are spread over (key k in family k % N; 1: the default
    /// family alone).
    #[arg(long, default_value_t = 3)]
    pub column_families: usize,

    /// Smallest value in bytes.
    #[arg(long, default_value_t = 16, conflicts_with = "txn")]
    pub min_value_size: usize,

    /// Largest value in bytes.
    #[arg(long, default_value_t = 300, conflicts_with = "txn")]
    pub max_value_size: usize,

    /// Operation mix as weights: put, merge, delete, single_delete, delete_range, batch,
    /// get, iter, snapshot.
    #[arg(
        long,
        conflicts_with = "txn",
        default_value = "put=40,merge=8,delete=8,single_delete=4,delete_range=3,batch=10,get=25,iter=8,snapshot=5"
    )]
    pub ops: String,

    /// Seed of the operations (0: from the clock; printed).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Crash mode: run the stress test as a child process, kill it (SIGKILL) at a random
    /// moment, verify the database against the expected state, and repeat.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub crash: bool,

    /// Crash mode: a child is killed after a random time up to this many milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub kill_interval_ms: u64,

    /// Run a bank instead of the operation mix: transfers between accounts in transactions,
    /// checked against a ledger of acknowledged transfers (`--keys`, `--ops`, the value sizes
    /// and `--merge_operator` do not apply).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool, conflicts_with = "merge_operator")]
    pub txn: bool,

    /// `--txn`: accounts, each with an 8-byte balance, spread over the column families.
    #[arg(long, default_value_t = 1000, requires = "txn")]
    pub accounts: u64,

    /// `--txn`: the transactions used: mixed (pessimistic on the lower half of the accounts,
    /// optimistic on the upper half), pessimistic or optimistic.
    #[arg(long, default_value = "mixed", requires = "txn")]
    pub txn_kind: String,

    /// `--txn`: one pessimistic transfer in N is named, prepared, then committed.
    #[arg(long, default_value_t = 4, requires = "txn")]
    pub two_phase_one_in: u64,

    /// Set on the child processes of crash mode.
    #[arg(long, hide = true, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub child: bool,

    /// The engine's options (defaults: the library's, with tiny sizes).
    #[command(flatten)]
    pub options: EngineFlags,
}

/// Operation weights.
#[derive(Debug, Clone, Copy, Default)]
struct Mix {
    put: u64,
    merge: u64,
    delete: u64,
    single_delete: u64,
    delete_range: u64,
    batch: u64,
    get: u64,
    iter: u64,
    snapshot: u64,
}

impl Mix {
    fn parse(s: &str) -> Result<Mix, String> {
        let mut m = Mix::default();
        for part in s.split(',').filter(|p| !p.is_empty()) {
            let (name, w) = part
                .split_once('=')
                .ok_or_else(|| format!("--ops: {part:?} is not name=weight"))?;
            let w: u64 = w
                .parse()
                .map_err(|_| format!("--ops: weight of {name} is not a number"))?;
            match name {
                "put" => m.put = w,
                "merge" => m.merge = w,
                "delete" => m.delete = w,
                "single_delete" => m.single_delete = w,
                "delete_range" => m.delete_range = w,
                "batch" => m.batch = w,
                "get" => m.get = w,
                "iter" => m.iter = w,
                "snapshot" => m.snapshot = w,
                other => return Err(format!("--ops: unknown operation {other:?}")),
            }
        }
        if m.total() == 0 {
            return Err("--ops: all weights are 0".into());
        }
        Ok(m)
    }

    fn total(&self) -> u64 {
        self.put
            + self.merge
            + self.delete
            + self.single_delete
            + self.delete_range
            + self.batch
            + self.get
            + self.iter
            + self.snapshot
    }
}

/// Keys the key format sorts in index order: `k` and 8 digits.
const MAX_KEYS: u64 = 100_000_000;

/// The key of index `k`.
fn key(k: u64) -> Vec<u8> {
    format!("k{k:08}").into_bytes()
}

/// The threads' blocks of keys: thread `t` owns `[t * keys / threads, (t + 1) * keys /
/// threads)`, so every key has one owner and the blocks differ in size by at most one.
#[derive(Debug, Clone, Copy)]
struct Blocks {
    keys: u64,
    threads: u64,
}

impl Blocks {
    fn of(a: &StressArgs) -> Blocks {
        Blocks {
            keys: a.keys,
            threads: a.threads,
        }
    }

    /// The keys of thread `t`.
    fn of_thread(&self, t: u64) -> std::ops::Range<u64> {
        t * self.keys / self.threads..(t + 1) * self.keys / self.threads
    }

    /// The thread that owns key `k`: the last `t` whose block starts at or before `k`
    /// (`t * keys / threads <= k` holds exactly when `t * keys < (k + 1) * threads`).
    fn owner(&self, k: u64) -> u64 {
        ((k + 1) * self.threads - 1) / self.keys
    }
}

/// The index of a key, if it is one of ours.
fn key_index(key: &[u8]) -> Option<u64> {
    std::str::from_utf8(key.strip_prefix(b"k")?)
        .ok()?
        .parse()
        .ok()
}

/// True when the run has merges and `k` is a counter (every fourth key).
fn is_counter(k: u64, a: &StressArgs) -> bool {
    k % 4 == 3 && Mix::parse(&a.ops).is_ok_and(|m| m.merge > 0)
}

/// The value with id `id` of key `k`: its length and bytes follow from (k, id); a counter's
/// is `id` as an 8-byte little-endian integer.
fn value(k: u64, id: u32, a: &StressArgs) -> Vec<u8> {
    if is_counter(k, a) {
        return u64::from(id).to_le_bytes().to_vec();
    }
    let mut rng = Rng::new(k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(id));
    let span = (a.max_value_size - a.min_value_size + 1) as u64;
    let mut v = format!("{k}:{id}:").into_bytes();
    let len = (a.min_value_size + rng.below(span) as usize).max(v.len());
    while v.len() < len {
        v.push(b'a' + rng.below(26) as u8);
    }
    v
}

/// The id of `v` as a value of key `k`, if it is a well-formed one.
fn value_id(k: u64, v: &[u8], a: &StressArgs) -> Option<u32> {
    if is_counter(k, a) {
        let n = u64::from_le_bytes(v.try_into().ok()?);
        return u32::try_from(n).ok().filter(|&id| id != 0);
    }
    let text = std::str::from_utf8(v).ok()?;
    let mut parts = text.splitn(3, ':');
    let vk: u64 = parts.next()?.parse().ok()?;
    let id: u32 = parts.next()?.parse().ok()?;
    (vk == k && id != 0 && value(k, id, a) == v).then_some(id)
}

/// Runs `strata stress`.
pub fn run(args: &StressArgs) -> Result<ExitCode, BoxError> {
    if let (false, Some(blobs)) = (args.child, args.options.blob_settings()) {
        writeln!(std::io::stdout(), "blob files: {blobs}")?;
    }
    if args.txn {
        return run_bank(args);
    }
    if args.threads == 0 || args.keys < args.threads {
        return Err("--threads must be at least 1 and --keys at least --threads".into());
    }
    if args.keys > MAX_KEYS {
        return Err(format!(
            "--keys must be at most {MAX_KEYS} (keys are k and 8 digits, sorted as their \
             indexes)"
        )
        .into());
    }
    if args.min_value_size > args.max_value_size {
        return Err("--min_value_size is above --max_value_size".into());
    }
    Mix::parse(&args.ops)?;
    let oracle_path = expected_state_path(args);
    if args.crash {
        let mut checks = PlainChecks {
            a: args,
            oracle_path: &oracle_path,
            ops_before: 0,
        };
        return crash_loop(args, &oracle_path, &mut checks);
    }
    let oracle = Oracle::open(&oracle_path, args.keys)?;
    let seed = seed_of(args);
    let db = open_store(args)?;
    if !args.child {
        writeln!(
            std::io::stdout(),
            "seed {seed}; expected state in {}",
            oracle_path.display()
        )?;
        let checked = verify(&db, &oracle, args)?;
        writeln!(std::io::stdout(), "verified {checked} keys before the run")?;
    }
    let ops = run_workers(args, &db, &oracle, seed)?;
    db.close()?;
    let db = open_store(args)?;
    let checked = verify(&db, &oracle, args)?;
    writeln!(
        std::io::stdout(),
        "{ops} operations on {} threads in {} s; reopened and verified {checked} keys",
        args.threads,
        args.duration
    )?;
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// The path of the expected-state file.
fn expected_state_path(a: &StressArgs) -> PathBuf {
    a.expected_state.clone().unwrap_or_else(|| {
        let mut p = a.db.clone().into_os_string();
        p.push(".expected");
        PathBuf::from(p)
    })
}

/// The seed of the run: `--seed`, or one from the clock.
fn seed_of(a: &StressArgs) -> u64 {
    match a.seed {
        0 => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
        s => s,
    }
}

/// `strata stress --txn`.
fn run_bank(args: &StressArgs) -> Result<ExitCode, BoxError> {
    bank::check_args(args)?;
    let path = expected_state_path(args);
    if args.crash {
        let mut checks = bank::CrashChecks {
            a: args,
            ledger_path: &path,
            rng: Rng::new(seed_of(args) ^ 0x5eed),
            before: Default::default(),
            resolved: Default::default(),
        };
        return crash_loop(args, &path, &mut checks);
    }
    bank::run(args, &path, seed_of(args))
}

/// The database of the run, with its families.
fn open_store(a: &StressArgs) -> Result<Store, BoxError> {
    if a.column_families == 0 {
        return Err("--column_families must be at least 1".into());
    }
    Ok(Store::open(&a.db, options(a)?, a.column_families)?)
}

fn options(a: &StressArgs) -> Result<Options, BoxError> {
    options_for(a, true)
}

/// The engine's options of the run; with `merge`, the `uint64add` operator the plain test's
/// counters use.
fn options_for(a: &StressArgs, merge: bool) -> Result<Options, BoxError> {
    // The oracle models merges as uint64add.
    if merge && !matches!(a.options.merge_operator.as_str(), "" | "uint64add") {
        return Err(format!(
            "--merge_operator={}: the stress test models uint64add only",
            a.options.merge_operator
        )
        .into());
    }
    let mut options = a.options.options()?;
    options.create_if_missing = true;
    if merge {
        options.merge_operator = Some(Arc::new(UInt64Add));
    }
    Ok(options)
}

/// Checks every key of the database against the oracle, then makes the oracle what the
/// database holds (no write in flight any more). Returns the keys checked.
fn verify(db: &Store, oracle: &Oracle, a: &StressArgs) -> Result<u64, String> {
    let mut observed = Vec::with_capacity(oracle.keys() as usize);
    for k in 0..oracle.keys() {
        let got = db
            .get(k, &key(k), None)
            .map_err(|e| format!("get {k}: {e}"))?;
        let id = match &got {
            None => 0,
            Some(v) => value_id(k, v, a).ok_or_else(|| {
                format!(
                    "key {k} holds a value that is no value of it: {:?}",
                    String::from_utf8_lossy(v)
                )
            })?,
        };
        let state = oracle.state(k);
        if !state.allows(id) {
            return Err(format!(
                "key {k} holds value id {id}; expected {} (or {:?} in flight)",
                state.committed, state.pending
            ));
        }
        observed.push(id);
    }
    // A scan of each family agrees with the point reads and holds nothing else.
    let mut seen = 0u64;
    for family in 0..db.family_count() as usize {
        let mut it = db.iter(family).map_err(|e| format!("scan: {e}"))?;
        it.seek_to_first();
        while it.valid() {
            let k = key_index(it.key())
                .filter(|&k| k < oracle.keys() && db.family_of(k) == family)
                .ok_or_else(|| {
                    format!(
                        "the scan of family {family} found a key outside its key space: {:?}",
                        String::from_utf8_lossy(it.key())
                    )
                })?;
            if value_id(k, it.value(), a) != Some(observed[k as usize]) || observed[k as usize] == 0
            {
                return Err(format!("the scan disagrees with a get for key {k}"));
            }
            seen += 1;
            it.next();
        }
        it.status().map_err(|e| format!("scan: {e}"))?;
    }
    let live = observed.iter().filter(|&&id| id != 0).count() as u64;
    if seen != live {
        return Err(format!("the scan found {seen} keys, point reads {live}"));
    }
    // A thread has one write in flight at a time, so its keys still marked pending belong to
    // one batch: all of them hold the new value or none does.
    let blocks = Blocks {
        keys: oracle.keys(),
        threads: a.threads.min(oracle.keys()),
    };
    // Per thread: the keys in flight found with their new value, and those without.
    let mut in_flight = vec![(Vec::new(), Vec::new()); blocks.threads as usize];
    for k in 0..oracle.keys() {
        let state = oracle.state(k);
        match state.pending {
            Some(p) if p != state.committed => {
                let (applied, not_applied) = &mut in_flight[blocks.owner(k) as usize];
                if observed[k as usize] == p {
                    applied.push(k);
                } else {
                    not_applied.push(k);
                }
            }
            _ => {}
        }
    }
    for (thread, (applied, not_applied)) in in_flight.iter().enumerate() {
        if !applied.is_empty() && !not_applied.is_empty() {
            return Err(format!(
                "a batch of thread {thread} was applied in part: keys {applied:?} hold their \
                 new values, keys {not_applied:?} their old ones"
            ));
        }
    }
    for (k, &id) in observed.iter().enumerate() {
        let state = oracle.state(k as u64);
        if state.pending.is_some() || state.committed != id {
            oracle.commit(k as u64, id)?;
        }
    }
    Ok(oracle.keys())
}

/// Runs the worker threads for `--duration` seconds (or until a check fails).
fn run_workers(a: &StressArgs, db: &Store, oracle: &Oracle, seed: u64) -> Result<u64, BoxError> {
    let mix = Mix::parse(&a.ops)?;
    let stop = AtomicBool::new(false);
    let ops = AtomicU64::new(0);
    let deadline = Instant::now() + Duration::from_secs(a.duration);
    let failure = std::thread::scope(|s| {
        let handles: Vec<_> = (0..a.threads)
            .map(|t| {
                let (stop, ops) = (&stop, &ops);
                s.spawn(move || {
                    let mut w = Worker::new(a, db, oracle, t, seed.wrapping_add(t), mix);
                    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                        if let Err(e) = w.step() {
                            stop.store(true, Ordering::Relaxed);
                            return Some(format!("thread {t}: {e}"));
                        }
                        if ops.fetch_add(1, Ordering::Relaxed) % 1000 == 999 {
                            if let Err(e) = oracle.add_ops(1000) {
                                return Some(e);
                            }
                        }
                    }
                    None
                })
            })
            .collect();
        first_failure(handles)
    });
    if let Some(f) = failure {
        return Err(format!("verification failed: {f}").into());
    }
    Ok(ops.load(Ordering::Relaxed))
}

/// The writes of one batch, as the oracle sees them.
#[derive(Default)]
struct Writes {
    batch: WriteBatch,
    /// The value id each key written holds after the batch (0: absent).
    finals: std::collections::BTreeMap<u64, u32>,
    /// Each write in batch order (key, id), for the count of puts since a delete.
    order: Vec<(u64, u32)>,
}

impl Writes {
    /// Key `k` holds `id` after the writes so far.
    fn record(&mut self, k: u64, id: u32) {
        self.finals.insert(k, id);
        self.order.push((k, id));
    }
}

/// One worker thread: random operations on its own keys (and reads of any key).
struct Worker<'a> {
    a: &'a StressArgs,
    db: &'a Store,
    oracle: &'a Oracle,
    /// The keys this thread owns.
    own: std::ops::Range<u64>,
    rng: Rng,
    mix: Mix,
    /// Puts since the last delete of each owned key (single-delete needs at most one).
    puts_since_delete: std::collections::HashMap<u64, u32>,
    write_options: WriteOptions,
}

impl<'a> Worker<'a> {
    fn new(
        a: &'a StressArgs,
        db: &'a Store,
        oracle: &'a Oracle,
        thread: u64,
        seed: u64,
        mix: Mix,
    ) -> Self {
        Worker {
            a,
            db,
            oracle,
            own: Blocks::of(a).of_thread(thread),
            rng: Rng::new(seed),
            mix,
            puts_since_delete: Default::default(),
            write_options: a.options.write_options(false),
        }
    }

    /// A random key this thread owns.
    fn own_key(&mut self) -> u64 {
        self.own.start + self.rng.below(self.own.end - self.own.start)
    }

    /// A random counter this thread owns, or another owned key when it has none.
    fn own_counter(&mut self) -> u64 {
        let k = self.own_key();
        let counter = k - k % 4 + 3;
        if self.owns(counter) {
            counter
        } else {
            k
        }
    }

    /// The id a merge of `operand` into `k` leaves: the counter's sum (the operand alone
    /// onto an absent key).
    fn merged_id(&self, k: u64, operand: u32) -> u32 {
        self.oracle.state(k).committed + operand
    }

    /// Adds 1 to 16 to counter `k`; on any other key, a put.
    fn merge(&mut self, k: u64) -> Result<(), String> {
        // Past u32 ids the sum would not name a value id: start the counter again.
        if !is_counter(k, self.a) || self.oracle.state(k).committed > u32::MAX - 16 {
            return self.put(k);
        }
        let operand = 1 + self.rng.below(16) as u32;
        let id = self.merged_id(k, operand);
        self.oracle.begin(k, id)?;
        let mut batch = WriteBatch::new();
        self.db
            .batch_merge(&mut batch, k, &key(k), &u64::from(operand).to_le_bytes());
        self.db
            .write(batch, &self.write_options)
            .map_err(|e| format!("merge {k}: {e}"))?;
        self.oracle.commit(k, id)?;
        *self.puts_since_delete.entry(k).or_insert(u32::MAX / 2) += 1;
        Ok(())
    }

    fn owns(&self, k: u64) -> bool {
        self.own.contains(&k)
    }

    /// The next id to write to `k` (never its current one, never 0).
    fn next_id(&self, k: u64) -> u32 {
        self.oracle.state(k).committed.wrapping_add(1).max(1)
    }

    fn step(&mut self) -> Result<(), String> {
        let mut pick = self.rng.below(self.mix.total());
        let m = self.mix;
        for (weight, op) in [
            (m.put, 0),
            (m.merge, 7),
            (m.delete, 1),
            (m.single_delete, 2),
            (m.delete_range, 8),
            (m.batch, 3),
            (m.get, 4),
            (m.iter, 5),
            (m.snapshot, 6),
        ] {
            if pick < weight {
                return match op {
                    0 => {
                        let k = self.own_key();
                        self.put(k)
                    }
                    1 => {
                        let k = self.own_key();
                        self.delete(k, false)
                    }
                    2 => {
                        let k = self.own_key();
                        let single =
                            self.puts_since_delete.get(&k).copied().unwrap_or(u32::MAX) <= 1;
                        self.delete(k, single)
                    }
                    3 => self.batch(),
                    4 => self.get(),
                    5 => self.iterate(),
                    7 => {
                        let k = self.own_counter();
                        self.merge(k)
                    }
                    8 => self.delete_range(),
                    _ => self.snapshot_read(),
                };
            }
            pick -= weight;
        }
        Ok(())
    }

    fn put(&mut self, k: u64) -> Result<(), String> {
        let id = self.next_id(k);
        self.oracle.begin(k, id)?;
        let mut batch = WriteBatch::new();
        self.db
            .batch_put(&mut batch, k, &key(k), &value(k, id, self.a));
        self.db
            .write(batch, &self.write_options)
            .map_err(|e| format!("put {k}: {e}"))?;
        self.oracle.commit(k, id)?;
        *self.puts_since_delete.entry(k).or_insert(u32::MAX / 2) += 1;
        Ok(())
    }

    fn delete(&mut self, k: u64, single: bool) -> Result<(), String> {
        self.oracle.begin(k, 0)?;
        let mut batch = WriteBatch::new();
        self.db.batch_delete(&mut batch, k, &key(k), single);
        self.db
            .write(batch, &self.write_options)
            .map_err(|e| format!("delete {k}: {e}"))?;
        self.oracle.commit(k, 0)?;
        self.puts_since_delete.insert(k, 0);
        Ok(())
    }

    /// A batch of 1 to 5 writes to owned keys (puts, deletes, merges into counters), one in
    /// four times with a range deletion before or after them.
    fn batch(&mut self) -> Result<(), String> {
        let mut keys: Vec<u64> = (0..2 + self.rng.below(4)).map(|_| self.own_key()).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut w = Writes::default();
        let range_first = self.rng.one_in(4).then(|| self.rng.one_in(2));
        if range_first == Some(true) {
            self.add_range_deletion(&mut w);
        }
        for &k in &keys {
            // The value the key holds at this point of the batch.
            let current = w
                .finals
                .get(&k)
                .copied()
                .unwrap_or_else(|| self.oracle.state(k).committed);
            let id = if self.rng.one_in(4) {
                0
            } else {
                current.wrapping_add(1).max(1)
            };
            if id != 0 && is_counter(k, self.a) && current <= u32::MAX - 16 && self.rng.one_in(2) {
                let operand = 1 + self.rng.below(16) as u32;
                self.db
                    .batch_merge(&mut w.batch, k, &key(k), &u64::from(operand).to_le_bytes());
                w.record(k, current + operand);
                continue;
            }
            if id == 0 {
                self.db.batch_delete(&mut w.batch, k, &key(k), false);
            } else {
                self.db
                    .batch_put(&mut w.batch, k, &key(k), &value(k, id, self.a));
            }
            w.record(k, id);
        }
        if range_first == Some(false) {
            self.add_range_deletion(&mut w);
        }
        self.apply(w, "batch")
    }

    /// A range deletion alone, then a get of one of the keys it deleted.
    fn delete_range(&mut self) -> Result<(), String> {
        let mut w = Writes::default();
        let deleted = self.add_range_deletion(&mut w);
        self.apply(w, "delete_range")?;
        if deleted.is_empty() {
            return Ok(());
        }
        let k = deleted[self.rng.below(deleted.len() as u64) as usize];
        let got = self
            .db
            .get(k, &key(k), None)
            .map_err(|e| format!("get {k}: {e}"))?;
        self.check(k, got.as_deref(), "get after delete_range")
    }

    /// Adds to `w` a range deletion from an owned key over 1 to 32 keys, inside this
    /// thread's block, in the family of its begin key or a random one. Returns the keys it
    /// deletes: those of the family in the range.
    fn add_range_deletion(&mut self, w: &mut Writes) -> Vec<u64> {
        let begin = self.own_key();
        let end = (begin + 1 + self.rng.below(32)).min(self.own.end);
        let family = if self.rng.one_in(2) {
            self.db.family_of(begin)
        } else {
            self.rng.below(self.db.family_count()) as usize
        };
        self.db
            .batch_delete_range(&mut w.batch, family, &key(begin), &key(end));
        let deleted: Vec<u64> = (begin..end)
            .filter(|&k| self.db.family_of(k) == family)
            .collect();
        for &k in &deleted {
            w.record(k, 0);
        }
        deleted
    }

    /// Writes `w` through the oracle: the keys whose value changes pending before, every key
    /// committed after.
    fn apply(&mut self, w: Writes, what: &str) -> Result<(), String> {
        for (&k, &id) in &w.finals {
            if id != self.oracle.state(k).committed {
                self.oracle.begin(k, id)?;
            }
        }
        self.db
            .write(w.batch, &self.write_options)
            .map_err(|e| format!("{what}: {e}"))?;
        for (&k, &id) in &w.finals {
            self.oracle.commit(k, id)?;
        }
        for (k, id) in w.order {
            if id == 0 {
                self.puts_since_delete.insert(k, 0);
            } else {
                *self.puts_since_delete.entry(k).or_insert(u32::MAX / 2) += 1;
            }
        }
        Ok(())
    }

    /// Checks what the database returned for `k` (`got` as a value id).
    fn check(&self, k: u64, got: Option<&[u8]>, what: &str) -> Result<(), String> {
        let id = match got {
            None => 0,
            Some(v) => value_id(k, v, self.a)
                .ok_or_else(|| format!("{what}: key {k} holds a value that is no value of it"))?,
        };
        if self.owns(k) {
            let expected = self.oracle.state(k).committed;
            if id != expected {
                return Err(format!(
                    "{what}: key {k} has value id {id}, expected {expected}"
                ));
            }
        }
        Ok(())
    }

    fn get(&mut self) -> Result<(), String> {
        let k = if self.rng.one_in(2) {
            self.own_key()
        } else {
            self.rng.below(self.a.keys)
        };
        let got = self
            .db
            .get(k, &key(k), None)
            .map_err(|e| format!("get {k}: {e}"))?;
        self.check(k, got.as_deref(), "get")
    }

    /// A walk of up to 50 entries of one family forward or backward from a random key: every
    /// entry is well formed and of that family, owned keys hold their expected values, and no
    /// live owned key of the family is skipped.
    fn iterate(&mut self) -> Result<(), String> {
        let start = self.rng.below(self.a.keys);
        let forward = self.rng.one_in(2);
        let family = self.db.family_of(start);
        let mut it = self.db.iter(family).map_err(|e| format!("iterator: {e}"))?;
        if forward {
            it.seek(key(start));
        } else {
            it.seek_for_prev(key(start));
        }
        // The keys not yet passed: [next, end of the key space) going forward, [0, next]
        // going backward (as u64 + 1, so that "nothing left" is 0).
        let mut next = if forward { start } else { start + 1 };
        let mut steps = 0;
        while it.valid() && steps < 50 {
            let k = key_index(it.key())
                .filter(|&k| self.db.family_of(k) == family)
                .ok_or("iterator: a key outside the family's key space")?;
            let passed = if forward { next..k } else { k + 1..next };
            self.check_none_live(passed, family)?;
            self.check(k, Some(it.value()), "iterator")?;
            next = if forward { k + 1 } else { k };
            steps += 1;
            if forward {
                it.next();
            } else {
                it.prev();
            }
        }
        it.status().map_err(|e| format!("iterator: {e}"))?;
        if !it.valid() {
            // The walk reached the end: nothing live may lie beyond it.
            let rest = if forward { next..self.a.keys } else { 0..next };
            self.check_none_live(rest, family)?;
        }
        Ok(())
    }

    /// Fails if an owned key of `family` in `keys` is live (an iterator passed over it).
    fn check_none_live(&self, keys: std::ops::Range<u64>, family: usize) -> Result<(), String> {
        match keys
            .filter(|&k| self.owns(k) && self.db.family_of(k) == family)
            .find(|&k| self.oracle.state(k).committed != 0)
        {
            Some(k) => Err(format!("iterator skipped live key {k}")),
            None => Ok(()),
        }
    }

    /// Reads an owned key through a snapshot taken before it was overwritten.
    fn snapshot_read(&mut self) -> Result<(), String> {
        let k = self.own_key();
        let before = self.oracle.state(k).committed;
        let snapshot = self.db.snapshot();
        self.put(k)?;
        let got = self
            .db
            .get(k, &key(k), Some(&snapshot))
            .map_err(|e| format!("snapshot get {k}: {e}"))?;
        let id = got.as_deref().map_or(Some(0), |v| value_id(k, v, self.a));
        if id != Some(before) {
            return Err(format!(
                "snapshot read of key {k}: value id {id:?}, expected {before}"
            ));
        }
        Ok(())
    }
}

/// What the crash loop checks, for the plain test or the bank.
trait CrashChecks {
    /// Checks the database before the first run.
    fn before_first_run(&mut self) -> Result<(), BoxError>;
    /// Reopens and checks the database after a kill; returns the checks made.
    fn after_kill(&mut self) -> Result<u64, AfterKill>;
    /// What the runs did, for the last line.
    fn summary(&mut self) -> Result<String, BoxError>;
    /// What the checks counted are.
    fn what(&self) -> &'static str;
}

/// Why a check after a kill failed.
enum AfterKill {
    Reopen(String),
    Violation(String),
}

/// The plain test's checks: every key against the oracle.
struct PlainChecks<'a> {
    a: &'a StressArgs,
    oracle_path: &'a Path,
    ops_before: u64,
}

impl CrashChecks for PlainChecks<'_> {
    fn before_first_run(&mut self) -> Result<(), BoxError> {
        let oracle = Oracle::open(self.oracle_path, self.a.keys)?;
        let db = open_store(self.a)?;
        verify(&db, &oracle, self.a).map_err(|e| format!("before the first run: {e}"))?;
        db.close()?;
        self.ops_before = oracle.ops();
        Ok(())
    }

    fn after_kill(&mut self) -> Result<u64, AfterKill> {
        let oracle = Oracle::open(self.oracle_path, self.a.keys).map_err(AfterKill::Violation)?;
        let db = open_store(self.a).map_err(|e| AfterKill::Reopen(e.to_string()))?;
        let n = verify(&db, &oracle, self.a).map_err(AfterKill::Violation)?;
        db.close()
            .map_err(|e| AfterKill::Violation(format!("close: {e}")))?;
        Ok(n)
    }

    fn summary(&mut self) -> Result<String, BoxError> {
        let ops = Oracle::open(self.oracle_path, self.a.keys)?.ops() - self.ops_before;
        Ok(format!("about {ops} operations"))
    }

    fn what(&self) -> &'static str {
        "key checks"
    }
}

/// Crash mode: children run the stress test and are killed; the parent verifies each time.
fn crash_loop(
    a: &StressArgs,
    oracle_path: &Path,
    checks: &mut dyn CrashChecks,
) -> Result<ExitCode, BoxError> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(a.duration);
    let seed = seed_of(a);
    let mut rng = Rng::new(seed);
    writeln!(
        std::io::stdout(),
        "crash test: seed {seed}; database {}, expected state {}",
        a.db.display(),
        oracle_path.display()
    )?;
    checks.before_first_run()?;
    let exe = std::env::current_exe()?;
    // This process's flags: the ones after the `stress` subcommand.
    let parent: Vec<OsString> = std::env::args_os()
        .skip_while(|a| a != "stress")
        .skip(1)
        .collect();
    let (mut runs, mut kills, mut verified) = (0u64, 0u64, 0u64);
    while Instant::now() < deadline {
        runs += 1;
        let mut child = Command::new(&exe)
            .arg("stress")
            .args(child_args(&parent, oracle_path, rng.next_u64()))
            .stdout(Stdio::null())
            .spawn()?;
        let wait = Duration::from_millis(1 + rng.below(a.kill_interval_ms.max(1)));
        let kill_at = (Instant::now() + wait).min(deadline);
        let mut exited = None;
        while Instant::now() < kill_at {
            if let Some(status) = child.try_wait()? {
                exited = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        match exited {
            Some(status) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: the child exited on its own ({status})"),
                ));
            }
            None => {
                child.kill()?;
                child.wait()?;
                kills += 1;
            }
        }
        match checks.after_kill() {
            Ok(n) => verified += n,
            Err(AfterKill::Reopen(e)) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: reopening after the kill failed: {e}"),
                ));
            }
            Err(AfterKill::Violation(e)) => {
                return Ok(keep_evidence(
                    a,
                    oracle_path,
                    &format!("run {runs}: VIOLATION after the kill: {e}"),
                ));
            }
        }
    }
    let summary = checks.summary()?;
    writeln!(
        std::io::stdout(),
        "crash test passed: {runs} runs, {kills} kills, {summary}, {verified} {} in {:.0} s",
        checks.what(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Reports a failed crash run; the database and the expected state stay for diagnosis.
fn keep_evidence(a: &StressArgs, oracle_path: &Path, what: &str) -> ExitCode {
    let _ = writeln!(
        std::io::stdout(),
        "{what}; keeping {} and {}",
        a.db.display(),
        oracle_path.display()
    );
    ExitCode::FAILURE
}

/// The flags of a crash-mode child: the parent's own (`parent`, as given after `stress`),
/// then those that make it a plain run that outlives the kill (a repeated flag takes its last
/// value).
fn child_args(parent: &[OsString], oracle_path: &Path, seed: u64) -> Vec<OsString> {
    let mut expected_state = OsString::from("--expected_state=");
    expected_state.push(oracle_path);
    let mut args = parent.to_vec();
    args.extend([
        expected_state,
        "--duration=1000000".into(),
        format!("--seed={}", seed.max(1)).into(),
        "--crash=0".into(),
        "--child".into(),
    ]);
    args
}

/// The first failure the verifying threads of `handles` report (a panic counts as one), after
/// every thread has ended.
fn first_failure(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Option<String>>>,
) -> Option<String> {
    let failures: Vec<String> = handles
        .into_iter()
        .filter_map(|h| {
            h.join()
                .unwrap_or_else(|_| Some("a thread panicked".into()))
        })
        .collect();
    failures.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine_flags::parse_flags;

    fn args(flags: &[&str]) -> StressArgs {
        let mut argv = vec!["--db=/nonexistent"];
        argv.extend_from_slice(flags);
        parse_flags(&argv).unwrap()
    }

    #[test]
    fn values_identify_their_key_and_id_and_nothing_else() {
        let a = args(&["--min_value_size=1", "--max_value_size=40"]);
        for k in [0, 7, 123_456] {
            for id in [1, 2, u32::MAX] {
                let v = value(k, id, &a);
                assert_eq!(value_id(k, &v, &a), Some(id));
                assert_eq!(value_id(k + 1, &v, &a), None);
                let mut bad = v.clone();
                let last = bad.len() - 1;
                bad[last] ^= 1;
                assert_eq!(
                    value_id(k, &bad, &a),
                    None,
                    "{:?}",
                    String::from_utf8_lossy(&v)
                );
            }
        }
        assert_eq!(key_index(&key(42)), Some(42));
        assert_eq!(key_index(b"x42"), None);
    }

    #[test]
    fn the_child_gets_every_setting_of_the_parent() {
        // As .ci/run starts it.
        let parent: Vec<OsString> = [
            "--db",
            "/tmp/d",
            "--crash",
            "--duration",
            "60",
            "--compaction_style=1",
            "--sync=1",
            "--compression_type=zstd",
            "--keys=77",
            "--ops=put=1",
            "--bloom_bits=3",
            "--enable_blob_files",
            "--min_blob_size=100",
            "--blob_file_size=5000",
            "--enable_blob_garbage_collection=1",
            "--blob_garbage_collection_age_cutoff=0.5",
            "--blob_garbage_collection_force_threshold=0.8",
        ]
        .map(OsString::from)
        .to_vec();
        let child: StressArgs = parse_flags(&child_args(&parent, Path::new("/tmp/o"), 9)).unwrap();
        assert_eq!(child.db, Path::new("/tmp/d"));
        assert_eq!(child.options.compaction_style, 1);
        assert_eq!(child.options.compression_type, "zstd");
        assert_eq!(child.options.bloom_bits, 3);
        let o = options(&child).unwrap();
        assert!(o.enable_blob_files && o.enable_blob_garbage_collection);
        assert_eq!((o.min_blob_size, o.blob_file_size), (100, 5000));
        assert_eq!(
            (
                o.blob_garbage_collection_age_cutoff,
                o.blob_garbage_collection_force_threshold
            ),
            (0.5, 0.8)
        );
        assert!(child.options.sync && child.child && !child.crash);
        assert_eq!((child.keys, child.ops.as_str()), (77, "put=1"));
        assert_eq!((child.duration, child.seed), (1_000_000, 9));
        assert_eq!(child.expected_state.as_deref(), Some(Path::new("/tmp/o")));
    }

    #[test]
    fn engine_defaults_are_the_library_s_but_for_tiny_sizes_more_threads_and_uint64add() {
        let o = options(&args(&[])).unwrap();
        let library = Options::default();
        assert_eq!(
            (
                o.write_buffer_size,
                o.target_file_size_base,
                o.max_bytes_for_level_base
            ),
            (64 << 10, 64 << 10, 256 << 10)
        );
        assert_eq!((o.enable_blob_files, o.blob_file_size), (false, 64 << 10));
        assert_eq!((o.max_background_jobs, o.max_subcompactions), (3, 2));
        assert_eq!(
            o.merge_operator.as_ref().map(|m| m.name()),
            Some("uint64add")
        );
        let mut same = o;
        same.merge_operator = None;
        same.create_if_missing = library.create_if_missing;
        same.write_buffer_size = library.write_buffer_size;
        same.target_file_size_base = library.target_file_size_base;
        same.max_bytes_for_level_base = library.max_bytes_for_level_base;
        same.max_background_jobs = library.max_background_jobs;
        same.max_subcompactions = library.max_subcompactions;
        same.blob_file_size = library.blob_file_size;
        // `--open_files` is -1 by default, as in db_bench: every table stays open.
        assert_eq!(same.max_open_files, Options::UNLIMITED_OPEN_FILES);
        same.max_open_files = library.max_open_files;
        assert_eq!(format!("{same:?}"), format!("{library:?}"));
    }

    #[test]
    fn a_batch_found_applied_in_part_is_a_violation() {
        let dir = tempfile::tempdir().unwrap();
        let a = args(&["--threads=2", "--keys=10"]);
        let oracle = Oracle::open(&dir.path().join("expected"), 10).unwrap();
        let db = Store::open(&dir.path().join("db"), options(&a).unwrap(), 3).unwrap();
        let put = |k: u64| {
            let mut batch = WriteBatch::new();
            db.batch_put(&mut batch, k, &key(k), &value(k, 1, &a));
            db.write(batch, &WriteOptions::default()).unwrap();
        };
        // Thread 0 (keys 0-4) had a batch writing id 1 to keys 2 and 4 (two families) in
        // flight.
        oracle.begin(2, 1).unwrap();
        oracle.begin(4, 1).unwrap();
        put(2);
        let e = verify(&db, &oracle, &a).unwrap_err();
        assert!(e.contains("applied in part"), "{e}");
        // Both applied (or neither) is fine, and the oracle then holds what the db holds.
        put(4);
        assert_eq!(verify(&db, &oracle, &a), Ok(10));
        assert_eq!(oracle.state(4).committed, 1);
    }

    /// Every key has exactly one owner, whose block holds it; blocks are contiguous, in
    /// thread order, and differ in size by at most one.
    #[test]
    fn blocks_give_every_key_one_owner() {
        for keys in 1..40 {
            for threads in 1..=keys.min(9) {
                let b = Blocks { keys, threads };
                let mut next = 0;
                for t in 0..threads {
                    let block = b.of_thread(t);
                    assert_eq!(block.start, next, "{b:?} thread {t}");
                    let size = block.end - block.start;
                    assert!(
                        size == keys / threads || size == keys / threads + 1,
                        "{b:?}"
                    );
                    for k in block.clone() {
                        assert_eq!(b.owner(k), t, "{b:?} key {k}");
                    }
                    next = block.end;
                }
                assert_eq!(next, keys, "{b:?}");
            }
        }
        // The key format sorts as the indexes up to MAX_KEYS, so a block is a key range.
        assert!(key(9) < key(10) && key(MAX_KEYS - 2) < key(MAX_KEYS - 1));
    }

    /// A batch whose range deletion precedes a put keeps the put; one that follows it
    /// deletes it; the oracle's finals say the same as the database.
    #[test]
    fn range_deletions_delete_their_family_s_keys_of_the_block_and_batches_keep_order() {
        let dir = tempfile::tempdir().unwrap();
        let a = args(&["--threads=2", "--keys=100", "--ops=put=1,delete_range=1"]);
        let oracle = Oracle::open(&dir.path().join("expected"), 100).unwrap();
        let db = Store::open(&dir.path().join("db"), options(&a).unwrap(), 3).unwrap();
        let mut w = Worker::new(&a, &db, &oracle, 1, 5, Mix::parse(&a.ops).unwrap());
        assert_eq!(w.own, 50..100);
        for k in 50..100 {
            w.put(k).unwrap();
        }
        for _ in 0..200 {
            w.step().unwrap();
            w.batch().unwrap();
        }
        // Thread 0's keys were never written; thread 1's hold what the oracle says.
        assert_eq!(verify(&db, &oracle, &a), Ok(100));
        let live = (50..100)
            .filter(|&k| oracle.state(k).committed != 0)
            .count();
        assert!(live > 0 && live < 50, "{live} live keys left");
        // The order inside one batch: put then range deletion, range deletion then put.
        let mut both = Writes::default();
        db.batch_put(&mut both.batch, 60, &key(60), &value(60, 7, &a));
        db.batch_delete_range(&mut both.batch, db.family_of(60), &key(60), &key(61));
        db.batch_delete_range(&mut both.batch, db.family_of(61), &key(61), &key(62));
        db.batch_put(&mut both.batch, 61, &key(61), &value(61, 8, &a));
        db.write(both.batch, &WriteOptions::default()).unwrap();
        assert_eq!(db.get(60, &key(60), None).unwrap(), None);
        assert_eq!(db.get(61, &key(61), None).unwrap(), Some(value(61, 8, &a)));
    }

    #[test]
    fn operation_mixes_parse_and_bad_ones_are_named() {
        assert_eq!(Mix::parse("put=3,get=1").unwrap().total(), 4);
        assert!(Mix::parse("put=1,scan=2").unwrap_err().contains("scan"));
        assert!(Mix::parse("put=0").is_err());
        assert_eq!(Mix::parse("merge=2").unwrap().merge, 2);
        assert_eq!(Mix::parse("delete_range=3").unwrap().delete_range, 3);
        let default = Mix::parse(&args(&[]).ops).unwrap();
        assert!(default.delete_range > 0 && default.merge > 0, "{default:?}");
    }

    #[test]
    fn counters_are_every_fourth_key_and_their_values_are_their_ids() {
        let a = args(&["--threads=2"]);
        let counters: Vec<u64> = (0..16).filter(|&k| is_counter(k, &a)).collect();
        assert_eq!(counters, [3, 7, 11, 15]);
        assert_eq!(value(7, 42, &a), 42u64.to_le_bytes());
        assert_eq!(value_id(7, &42u64.to_le_bytes(), &a), Some(42));
        for bad in [&0u64.to_le_bytes()[..], &(1u64 << 40).to_le_bytes(), b"42"] {
            assert_eq!(value_id(7, bad, &a), None, "{bad:?}");
        }
        // Without merges in the mix there are no counters.
        let a = args(&["--threads=2", "--ops=put=1,get=1"]);
        assert!((0..16).all(|k| !is_counter(k, &a)));
        let e = options(&args(&["--merge_operator=stringappend"])).unwrap_err();
        assert!(e.to_string().contains("uint64add"), "{e}");
    }
}
