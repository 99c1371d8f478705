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
//! and [`ledger`]); the crash loop is the same, and so are power cuts (with `--sync=1`, so
//! that every acknowledged transfer must survive them as it survives a kill).

mod bank;
mod checkpoint;
mod churn;
mod crash;
mod ingest;
mod iterate;
mod ledger;
mod oracle;
mod power_cut;
mod store;
mod worker;

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
use crash::{crash_loop, AfterKill, CrashChecks, PlainChecks};
use worker::run_workers;

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
    /// get, iter, snapshot, multi_get, flush (every family), compact (a range of one
    /// family), sync_wal, checkpoint (made, opened and checked), column_family (the thread's
    /// own family created, written, read back or dropped), ingest (a table of owned keys).
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

    /// Crash mode: each child runs on a fault-injecting file system and cuts its own power at
    /// a random moment (up to `--kill_interval_ms`): everything not yet synced is lost (file
    /// tails cut or left as garbage, names not made durable by a directory sync undone). The
    /// recovered state must be one point of the write order, no earlier than the last write
    /// acknowledged as durable. With `--txn` (and `--sync=1`): every acknowledged transfer
    /// must survive, as after a kill.
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool)]
    pub sync_fault_injection: bool,

    /// Writes skip the WAL (only with `--sync_fault_injection` and one column family: then
    /// what was flushed must survive, and a kill would lose acknowledged writes).
    #[arg(long, default_value = "false", num_args = 0..=1, default_missing_value = "true", value_parser = parse_bool, requires = "sync_fault_injection")]
    pub disable_wal: bool,

    /// One read in N (of the worker threads' gets, multi_gets and iterators) fails: it must
    /// return an error or the right answer (0: never).
    #[arg(long, default_value_t = 0, conflicts_with = "txn")]
    pub read_fault_one_in: u64,

    /// One append or sync in N of the table and blob files fails (EIO or ENOSPC): the
    /// database stops background work and refuses writes until `resume` (0: never).
    #[arg(long, default_value_t = 0, conflicts_with_all = ["txn", "sync_fault_injection"])]
    pub write_fault_one_in: u64,

    /// One create, rename or remove of a table or blob file, or directory sync, in N fails
    /// (0: never).
    #[arg(long, default_value_t = 0, conflicts_with_all = ["txn", "sync_fault_injection"])]
    pub metadata_write_fault_one_in: u64,

    /// Keys map to prefixes of this many bytes (a fixed prefix extractor; 0: none): walks
    /// then use `prefix_same_as_start` or `total_order_seek`. A database keeps the extractor
    /// it was created with.
    #[arg(long, default_value_t = 0, conflicts_with = "txn")]
    pub prefix_size: usize,

    /// Set on a child of `--sync_fault_injection`: when to cut the power.
    #[arg(long, hide = true, default_value_t = 0)]
    pub power_cut_after_ms: u64,

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
    multi_get: u64,
    flush: u64,
    compact: u64,
    sync_wal: u64,
    checkpoint: u64,
    column_family: u64,
    ingest: u64,
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
                "multi_get" => m.multi_get = w,
                "flush" => m.flush = w,
                "compact" => m.compact = w,
                "sync_wal" => m.sync_wal = w,
                "checkpoint" => m.checkpoint = w,
                "column_family" => m.column_family = w,
                "ingest" => m.ingest = w,
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
            + self.multi_get
            + self.flush
            + self.compact
            + self.sync_wal
            + self.checkpoint
            + self.column_family
            + self.ingest
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
    if args.disable_wal && args.column_families != 1 {
        return Err(
            "--disable_wal needs --column_families=1 (the families' flushes are not \
                    atomic, so a power cut could keep one family's writes and not another's)"
                .into(),
        );
    }
    if args.sync_fault_injection && !args.crash && !args.child {
        return Err("--sync_fault_injection is a mode of --crash".into());
    }
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
    let fault_fs = args.child.then(|| install_faults(args)).flatten();
    let db = open_store(args)?;
    let mut trace = None;
    if let Some(fs) = fault_fs {
        start_faults(args, fs, seed);
        let cut = args.power_cut_after_ms > 0;
        if cut {
            trace = Some(&*Box::leak(Box::new(power_cut::Trace::new(args.threads))));
        }
        power_cut::start_cut_timer(
            fs,
            trace,
            args.db.clone(),
            power_cut::CutFiles::of(&args.db),
            cut.then(|| Instant::now() + Duration::from_millis(args.power_cut_after_ms)),
            seed,
        );
    }
    if !args.child {
        writeln!(
            std::io::stdout(),
            "seed {seed}; expected state in {}",
            oracle_path.display()
        )?;
        let checked = verify(&db, &oracle, args)?;
        writeln!(std::io::stdout(), "verified {checked} keys before the run")?;
    }
    crash::say_ready(args);
    let ops = match run_workers(args, &db, &oracle, seed, trace) {
        Ok(ops) => ops,
        Err(e) if args.child && e.to_string().contains(worker::NEEDS_REOPEN) => {
            let _ = writeln!(std::io::stderr(), "{e}");
            std::process::exit(crash::EXIT_REOPEN);
        }
        Err(e) => return Err(e),
    };
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

/// Puts a crash-mode child on a fault file system when it injects faults or cuts its power.
fn install_faults(a: &StressArgs) -> Option<&'static strata::fs::fault::FaultFs> {
    use strata::fs::fault::FaultFs;
    let faults = a.read_fault_one_in + a.write_fault_one_in + a.metadata_write_fault_one_in;
    if faults == 0 && a.power_cut_after_ms == 0 {
        return None;
    }
    Some(power_cut::install_fault_fs(FaultFs::new()))
}

/// Starts the faults of `--*_fault_one_in` on the child's file system (after the open, which
/// they would fail).
fn start_faults(a: &StressArgs, fs: &strata::fs::fault::FaultFs, seed: u64) {
    use strata::fs::fault::FaultRates;
    fs.set_fault_rates(FaultRates {
        read_fault_one_in: a.read_fault_one_in,
        write_fault_one_in: a.write_fault_one_in,
        metadata_write_fault_one_in: a.metadata_write_fault_one_in,
        write_fault_files: vec![".sst".into(), ".blob".into()],
        seed: seed ^ 0xfa17,
    });
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
    if args.child && args.power_cut_after_ms > 0 {
        // On the fault file system before the bank opens its database on it; the power is
        // cut from here on, so a failure once it is off is the cut's, not the bank's.
        let fs = power_cut::install_fault_fs(strata::fs::fault::FaultFs::new());
        power_cut::start_cut_timer(
            fs,
            None,
            args.db.clone(),
            power_cut::CutFiles::of(&args.db),
            Some(Instant::now() + Duration::from_millis(args.power_cut_after_ms)),
            seed_of(args),
        );
        return match bank::run(args, &path, seed_of(args)) {
            Err(_) if power_cut::power_is_off() => power_cut::wait_for_the_end(),
            done => done,
        };
    }
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
    if let Some(fs) = power_cut::fault_fs() {
        options.fs = Arc::new(fs.clone());
    }
    if merge {
        options.merge_operator = Some(Arc::new(UInt64Add));
    }
    if a.prefix_size > 0 {
        options.prefix_extractor = Some(Arc::new(strata::FixedPrefix::new(a.prefix_size)?));
    }
    Ok(options)
}

/// Checks every key of the database against the oracle, then makes the oracle what the
/// database holds (no write in flight any more). Returns the keys checked.
fn verify(db: &Store, oracle: &Oracle, a: &StressArgs) -> Result<u64, String> {
    let observed = observe(db, oracle, a, true)?;
    check_in_flight(oracle, &observed, a)?;
    churn::verify_families(db, oracle, a)?;
    for (k, &id) in observed.iter().enumerate() {
        let state = oracle.state(k as u64);
        if state.pending.is_some() || state.committed != id {
            oracle.commit(k as u64, id)?;
        }
    }
    Ok(oracle.keys())
}

/// The value id of every key of the database (0: absent), each checked to be one the oracle
/// allows when `check` is set; a full scan of each family must agree with the point reads.
fn observe(db: &Store, oracle: &Oracle, a: &StressArgs, check: bool) -> Result<Vec<u32>, String> {
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
        if check && !state.allows(id) {
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
    Ok(observed)
}

/// Checks that the writes in flight at a kill were applied whole or not at all.
fn check_in_flight(oracle: &Oracle, observed: &[u32], a: &StressArgs) -> Result<(), String> {
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
    Ok(())
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
mod tests;
