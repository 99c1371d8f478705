//! `strata stress --txn`: a bank. Accounts `0..--accounts` (key `k` and 8 digits, in family
//! `a % --column_families`, as the plain test spreads its keys) each hold an 8-byte balance
//! (i64 LE), all starting at [`INITIAL`]; thread `t` also has a sequence key `s` and 8 digits
//! (u64 LE) in the default family. Threads run transfers: a transaction reads two accounts
//! with `get_for_update`, moves an amount no larger than the balance, writes both, and
//! writes its thread's sequence key plus one, all in one commit.
//!
//! Kinds of transaction. Pessimistic ones (`TransactionDb`) lock as they go; optimistic ones
//! (`Db::optimistic_transaction` on the same database) take no lock and check at commit for
//! writes after their snapshot. An optimistic commit would not see a pessimistic transaction
//! that locked and read an account and is about to write it, so the two kinds must never
//! share an account: with `--txn_kind=mixed` the lower half of the accounts is the pessimistic
//! one's and the upper half the optimistic one's, each transfer staying in one half (the sum
//! of each half is kept, so the total is). Sequence keys are written by their own thread
//! only. One pessimistic transfer in `--two_phase_one_in` is named, prepared, then committed.
//!
//! Contention on purpose: one transfer in four is between the first four accounts of its
//! half, and the accounts are locked in the order (from, to), so two transfers between the
//! same accounts in opposite directions lock in opposite orders: deadlocks, refused at once
//! (or, for one pessimistic transaction in eight, which does not detect them, ended by a short
//! lock timeout), and conflicts at optimistic commits. Each is retried and counted.
//!
//! The expected state is the [`ledger`](super::ledger). Checks:
//! - while running: a transaction reads its thread's sequence key as the last acknowledged
//!   one; every balance read is 8 bytes and not negative; an audit reads every account at one
//!   snapshot, through point reads and a scan of each family: the sum is the starting total.
//! - after a kill (or a run): every account and sequence key is there and well formed, and
//!   nothing else is; the sum is the starting total and no balance is negative; each thread's
//!   sequence is the acknowledged one, or the one in flight (see [`ledger::judge`]); every
//!   recovered prepared transaction is its thread's transfer in flight and not applied; then
//!   every balance is exactly what the ledger's transfers make of it. Each recovered prepared
//!   transaction is then committed or rolled back at random, and everything checked again.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use strata::internals::Rng;
use strata::TransactionBase;
use strata::{
    ColumnFamily, ErrorKind, ReadOptions, Snapshot, TransactionDb, TransactionOptions, WriteBatch,
    WriteOptions,
};

use super::ledger::{self, Counts, Kind, Ledger, Shape, Slot, Transfer, Verdict};
use super::store::open_families;
use super::{first_failure, key, key_index, options_for, BoxError, StressArgs};

/// The balance every account starts with.
pub const INITIAL: u64 = 1_000_000;

/// Accounts of a half that take part in the contended transfers.
const HOT: u64 = 4;

/// Which transactions a run uses (`--txn_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnKind {
    Mixed,
    Pessimistic,
    Optimistic,
}

impl TxnKind {
    pub fn parse(s: &str) -> Result<TxnKind, String> {
        match s {
            "mixed" => Ok(TxnKind::Mixed),
            "pessimistic" => Ok(TxnKind::Pessimistic),
            "optimistic" => Ok(TxnKind::Optimistic),
            other => Err(format!(
                "--txn_kind={other} is not one of mixed, pessimistic, optimistic"
            )),
        }
    }

    /// The accounts each kind may use: (pessimistic, optimistic).
    fn ranges(self, accounts: u64) -> (std::ops::Range<u64>, std::ops::Range<u64>) {
        match self {
            TxnKind::Mixed => (0..accounts / 2, accounts / 2..accounts),
            TxnKind::Pessimistic => (0..accounts, 0..0),
            TxnKind::Optimistic => (0..0, 0..accounts),
        }
    }
}

/// The key of thread `t`'s sequence.
fn seq_key(t: u64) -> Vec<u8> {
    format!("s{t:08}").into_bytes()
}

/// The thread a sequence key names.
fn seq_index(key: &[u8]) -> Option<u64> {
    std::str::from_utf8(key.strip_prefix(b"s")?)
        .ok()?
        .parse()
        .ok()
}

/// The name of thread `t`'s two-phase transfer `seq`, and back.
fn txn_name(t: u64, seq: u64) -> String {
    format!("stress-t{t}-s{seq}")
}

fn parse_txn_name(name: &[u8]) -> Option<(u64, u64)> {
    let rest = std::str::from_utf8(name).ok()?.strip_prefix("stress-t")?;
    let (t, s) = rest.split_once("-s")?;
    Some((t.parse().ok()?, s.parse().ok()?))
}

/// A balance as stored, or why it is not one.
fn balance(what: &str, v: Option<&[u8]>) -> Result<i64, String> {
    let v = v.ok_or_else(|| format!("{what} is missing"))?;
    let b = i64::from_le_bytes(
        v.try_into()
            .map_err(|_| format!("{what} holds {} bytes, not an 8-byte balance", v.len()))?,
    );
    if b < 0 {
        return Err(format!("{what} holds a negative balance, {b}"));
    }
    Ok(b)
}

/// A sequence as stored.
fn sequence(what: &str, v: Option<&[u8]>) -> Result<u64, String> {
    let v = v.ok_or_else(|| format!("{what} is missing"))?;
    Ok(u64::from_le_bytes(v.try_into().map_err(|_| {
        format!("{what} holds {} bytes, not an 8-byte sequence", v.len())
    })?))
}

/// The flags' checks, before anything is created.
pub fn check_args(a: &StressArgs) -> Result<(), String> {
    let kind = TxnKind::parse(&a.txn_kind)?;
    let need = if kind == TxnKind::Mixed { 4 } else { 2 };
    if a.accounts < need || a.accounts > super::MAX_KEYS {
        return Err(format!(
            "--accounts must be from {need} to {} with --txn_kind={} (a transfer needs two \
             accounts{})",
            super::MAX_KEYS,
            a.txn_kind,
            if need == 4 {
                ", in each half: pessimistic and optimistic transactions use separate halves"
            } else {
                ""
            }
        ));
    }
    if a.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if a.two_phase_one_in == 0 {
        return Err("--two_phase_one_in must be at least 1".into());
    }
    if a.column_families == 0 {
        return Err("--column_families must be at least 1".into());
    }
    Ok(())
}

/// An open bank: the database and its families.
pub struct Bank {
    tdb: TransactionDb,
    families: Vec<ColumnFamily>,
}

impl Bank {
    fn cf(&self, a: u64) -> &ColumnFamily {
        &self.families[(a % self.families.len() as u64) as usize]
    }
}

fn shape(a: &StressArgs) -> Shape {
    Shape {
        accounts: a.accounts,
        threads: a.threads,
        families: a.column_families as u64,
        initial: INITIAL,
    }
}

/// Opens the bank, creating it (accounts, sequence keys, then the ledger) when the ledger
/// does not exist yet; a database that holds anything then is refused.
fn open_bank(a: &StressArgs, ledger_path: &Path) -> Result<(Bank, Ledger), BoxError> {
    let exists = ledger_path.exists();
    if exists {
        // Check the file before the database is opened (or created).
        Ledger::open(ledger_path, shape(a))?;
    }
    if !exists && a.db.join("CURRENT").exists() {
        // Looked at with the plain run's merge operator: a database of the plain run may
        // still hold merges in its WAL, which an open without it refuses before this check.
        let (db, families) = open_families(&a.db, options_for(a, true)?, a.column_families)?;
        for cf in &families {
            let mut it = db.iter_cf(cf, &ReadOptions::default())?;
            it.seek_to_first();
            if it.valid() {
                return Err(format!(
                    "{} holds data (column family '{}') but {} does not exist: a --txn run \
                     starts from an empty database or from its own expected state",
                    a.db.display(),
                    cf.name(),
                    ledger_path.display()
                )
                .into());
            }
            it.status()?;
        }
    }
    let (db, families) = open_families(&a.db, options_for(a, false)?, a.column_families)?;
    let bank = Bank {
        tdb: TransactionDb::new(db)?,
        families,
    };
    if exists {
        return Ok((bank, Ledger::open(ledger_path, shape(a))?));
    }
    let mut write = WriteOptions::default();
    write.sync = true;
    for chunk in (0..a.accounts).collect::<Vec<_>>().chunks(10_000) {
        let mut batch = WriteBatch::new();
        for &k in chunk {
            batch.put_cf(bank.cf(k), key(k), (INITIAL as i64).to_le_bytes());
        }
        bank.tdb.db().write(batch, &write)?;
    }
    let mut batch = WriteBatch::new();
    for t in 0..a.threads {
        batch.put_cf(&bank.families[0], seq_key(t), 0u64.to_le_bytes());
    }
    bank.tdb.db().write(batch, &write)?;
    let ledger = Ledger::create(ledger_path, shape(a))?;
    Ok((bank, ledger))
}

/// What a verification found.
#[derive(Debug, Default, Clone, Copy)]
pub struct Checked {
    /// Accounts checked (each pass counts them all).
    pub accounts: u64,
    pub prepared_committed: u64,
    pub prepared_rolled_back: u64,
}

/// Every account's balance and every thread's sequence, read from the database; a scan of
/// each family must hold exactly those keys, with the same values.
fn read_state(bank: &Bank, shape: &Shape) -> Result<(Vec<i64>, Vec<u64>), String> {
    let db = bank.tdb.db();
    let mut balances = Vec::with_capacity(shape.accounts as usize);
    for a in 0..shape.accounts {
        let v = db
            .get_cf(bank.cf(a), key(a))
            .map_err(|e| format!("get account {a}: {e}"))?;
        balances.push(balance(&format!("account {a}"), v.as_deref())?);
    }
    let mut seqs = Vec::with_capacity(shape.threads as usize);
    for t in 0..shape.threads {
        let v = db
            .get_cf(&bank.families[0], seq_key(t))
            .map_err(|e| format!("get the sequence of thread {t}: {e}"))?;
        seqs.push(sequence(
            &format!("the sequence key of thread {t}"),
            v.as_deref(),
        )?);
    }
    let mut seen = 0;
    for (f, cf) in bank.families.iter().enumerate() {
        let mut it = db
            .iter_cf(cf, &ReadOptions::default())
            .map_err(|e| format!("scan: {e}"))?;
        it.seek_to_first();
        while it.valid() {
            let agrees = match (key_index(it.key()), seq_index(it.key())) {
                (Some(a), _)
                    if a < shape.accounts && a % bank.families.len() as u64 == f as u64 =>
                {
                    it.value() == balances[a as usize].to_le_bytes()
                }
                (_, Some(t)) if t < shape.threads && f == 0 => {
                    it.value() == seqs[t as usize].to_le_bytes()
                }
                _ => {
                    return Err(format!(
                        "the scan of family {f} found a key that is no account or sequence of \
                         it: {:?}",
                        String::from_utf8_lossy(it.key())
                    ))
                }
            };
            if !agrees {
                return Err(format!(
                    "the scan disagrees with a get for key {:?}",
                    String::from_utf8_lossy(it.key())
                ));
            }
            seen += 1;
            it.next();
        }
        it.status().map_err(|e| format!("scan: {e}"))?;
    }
    if seen != shape.accounts + shape.threads {
        return Err(format!(
            "the scans found {seen} keys, point reads {}",
            shape.accounts + shape.threads
        ));
    }
    Ok((balances, seqs))
}

/// Checks the bank against the ledger (see the module's doc), settles the ledger to what the
/// database holds, and resolves each recovered prepared transaction at random.
pub fn verify(bank: &Bank, ledger: &Ledger, rng: &mut Rng) -> Result<Checked, String> {
    let shape = ledger.shape;
    let mut prepared = BTreeMap::new();
    for t in bank.tdb.prepared_transactions() {
        let name = t.name().unwrap_or_default().to_vec();
        let (thread, seq) = parse_txn_name(&name)
            .filter(|&(thread, _)| thread < shape.threads)
            .ok_or_else(|| {
                format!(
                    "a prepared transaction named {:?} was recovered: no thread of the run \
                     names one so",
                    String::from_utf8_lossy(&name)
                )
            })?;
        if prepared.insert(thread, (seq, t)).is_some() {
            return Err(format!(
                "two prepared transactions of thread {thread} were recovered"
            ));
        }
    }
    let mut checked = Checked::default();
    check_against_ledger(
        bank,
        ledger,
        &prepared.iter().map(|(&t, (s, _))| (t, *s)).collect(),
    )?;
    checked.accounts += shape.accounts;
    if prepared.is_empty() {
        return Ok(checked);
    }
    for (thread, (_, mut t)) in prepared {
        let mut slot = ledger.slot(thread)?;
        let commit = rng.one_in(2);
        if commit {
            t.commit()
                .map_err(|e| format!("commit of a recovered prepared transaction: {e}"))?;
            checked.prepared_committed += 1;
        } else {
            t.rollback()
                .map_err(|e| format!("rollback of a recovered prepared transaction: {e}"))?;
            checked.prepared_rolled_back += 1;
        }
        ledger.resolve(thread, &mut slot, commit)?;
    }
    check_against_ledger(bank, ledger, &BTreeMap::new())
        .map_err(|e| format!("after resolving the prepared transactions: {e}"))?;
    checked.accounts += shape.accounts;
    Ok(checked)
}

/// One pass of the checks; `prepared` maps a thread to its recovered prepared sequence.
fn check_against_ledger(
    bank: &Bank,
    ledger: &Ledger,
    prepared: &BTreeMap<u64, u64>,
) -> Result<(), String> {
    let shape = ledger.shape;
    let (balances, seqs) = read_state(bank, &shape)?;
    let total: i128 = balances.iter().map(|&b| i128::from(b)).sum();
    let want = i128::from(shape.initial) * i128::from(shape.accounts);
    if total != want {
        return Err(format!(
            "the balances sum to {total}, not {want}: money was made or lost"
        ));
    }
    for t in 0..shape.threads {
        let mut slot = ledger.slot(t)?;
        let stamped = match &slot.in_flight {
            Some(tr) => ledger.stamped(t, tr)?,
            None => false,
        };
        let verdict = ledger::judge(
            t,
            slot.acked,
            slot.in_flight.map(|tr| (tr.seq, tr.kind)),
            stamped,
            seqs[t as usize],
            prepared.get(&t).copied(),
        )?;
        match verdict {
            Verdict::Applied => ledger.settle(t, &mut slot)?,
            Verdict::NotApplied if slot.in_flight.is_some() => ledger.forget(t, &mut slot)?,
            Verdict::NotApplied | Verdict::Prepared => {}
        }
    }
    let expected = ledger.balances()?;
    for (a, (&got, &want)) in balances.iter().zip(&expected).enumerate() {
        if got != want {
            return Err(format!(
                "account {a} holds {got}; the acknowledged transfers (and those in flight the \
                 sequence keys show applied) make it {want}"
            ));
        }
    }
    Ok(())
}

/// Runs `strata stress --txn` (not in crash mode).
pub fn run(a: &StressArgs, ledger_path: &Path, seed: u64) -> Result<ExitCode, BoxError> {
    let mut rng = Rng::new(seed);
    let (bank, ledger) = open_bank(a, ledger_path)?;
    if a.child {
        // The parent verified just before and resolved what was prepared.
        if let Some(t) = bank.tdb.prepared_transactions().first() {
            return Err(format!(
                "a prepared transaction {:?} is left unresolved",
                String::from_utf8_lossy(t.name().unwrap_or_default())
            )
            .into());
        }
    } else {
        writeln!(
            std::io::stdout(),
            "seed {seed}; expected state in {}",
            ledger_path.display()
        )?;
        let c = verify(&bank, &ledger, &mut rng)?;
        writeln!(
            std::io::stdout(),
            "verified {} accounts before the run{}",
            a.accounts,
            resolved_text(&c)
        )?;
    }
    let before = ledger.counts()?;
    run_workers(a, &bank, &ledger, seed)?;
    let done = ledger.counts()?.minus(&before);
    drop(bank);
    let (bank, ledger) = open_bank(a, ledger_path)?;
    let c = verify(&bank, &ledger, &mut rng)?;
    writeln!(
        std::io::stdout(),
        "{} on {} threads in {} s; reopened and verified {} accounts{}",
        counts_text(&done),
        a.threads,
        a.duration,
        a.accounts,
        resolved_text(&c)
    )?;
    Ok(ExitCode::SUCCESS)
}

fn resolved_text(c: &Checked) -> String {
    match c.prepared_committed + c.prepared_rolled_back {
        0 => String::new(),
        _ => format!(
            " (recovered prepared transactions: {} committed, {} rolled back)",
            c.prepared_committed, c.prepared_rolled_back
        ),
    }
}

/// The counters as the output shows them.
pub fn counts_text(c: &Counts) -> String {
    let [p, o, t] = c.committed;
    format!(
        "{} transfers committed (pessimistic {p}, optimistic {o}, two-phase {t}); retried after \
         {} conflicts, {} deadlocks, {} lock timeouts; {} refused for want of funds; {} audits",
        c.total_committed(),
        c.conflicts,
        c.deadlocks,
        c.timeouts,
        c.refused,
        c.audits
    )
}

/// The crash loop's checks for a bank: before the first run, and after each kill.
pub struct CrashChecks<'a> {
    pub a: &'a StressArgs,
    pub ledger_path: &'a Path,
    pub rng: Rng,
    pub before: Counts,
    pub resolved: Checked,
}

impl super::CrashChecks for CrashChecks<'_> {
    fn before_first_run(&mut self) -> Result<(), BoxError> {
        let (bank, ledger) = open_bank(self.a, self.ledger_path)?;
        let c = verify(&bank, &ledger, &mut self.rng)
            .map_err(|e| format!("before the first run: {e}"))?;
        self.add(&c);
        self.before = ledger.counts()?;
        Ok(())
    }

    fn after_kill(&mut self) -> Result<u64, super::AfterKill> {
        let (bank, ledger) = open_bank(self.a, self.ledger_path)
            .map_err(|e| super::AfterKill::Reopen(e.to_string()))?;
        let c = verify(&bank, &ledger, &mut self.rng).map_err(super::AfterKill::Violation)?;
        self.add(&c);
        Ok(c.accounts)
    }

    fn summary(&mut self) -> Result<String, BoxError> {
        let ledger = Ledger::open(self.ledger_path, shape(self.a))?;
        let done = ledger.counts()?.minus(&self.before);
        Ok(format!(
            "{}; {} prepared transactions recovered ({} committed, {} rolled back)",
            counts_text(&done),
            self.resolved.prepared_committed + self.resolved.prepared_rolled_back,
            self.resolved.prepared_committed,
            self.resolved.prepared_rolled_back
        ))
    }

    fn what(&self) -> &'static str {
        "account checks"
    }
}

impl CrashChecks<'_> {
    fn add(&mut self, c: &Checked) {
        self.resolved.prepared_committed += c.prepared_committed;
        self.resolved.prepared_rolled_back += c.prepared_rolled_back;
    }
}

/// Runs the transfer threads for `--duration` seconds (or until a check fails).
fn run_workers(a: &StressArgs, bank: &Bank, ledger: &Ledger, seed: u64) -> Result<(), BoxError> {
    let stop = AtomicBool::new(false);
    let deadline = Instant::now() + Duration::from_secs(a.duration);
    let kind = TxnKind::parse(&a.txn_kind)?;
    let failure = std::thread::scope(|s| {
        let handles: Vec<_> = (0..a.threads)
            .map(|t| {
                let stop = &stop;
                s.spawn(move || {
                    let run = || -> Result<(), String> {
                        let mut w = Teller::new(a, bank, ledger, t, seed.wrapping_add(t), kind)?;
                        while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                            w.step(stop, deadline)?;
                        }
                        // The counters since the last acknowledged transfer; nothing is in
                        // flight between transfers.
                        w.slot.in_flight = None;
                        w.ledger.write_slot(t, &w.slot)
                    };
                    run().err().map(|e| {
                        stop.store(true, Ordering::Relaxed);
                        format!("thread {t}: {e}")
                    })
                })
            })
            .collect();
        first_failure(handles)
    });
    if let Some(f) = failure {
        return Err(format!("verification failed: {f}").into());
    }
    Ok(())
}

/// How a transfer attempt ended.
enum Attempt {
    Committed,
    /// Rolled back: the account had less than the amount.
    Refused,
    /// Busy: retry (the counter was bumped).
    Retry,
}

/// One transfer thread.
struct Teller<'a> {
    a: &'a StressArgs,
    bank: &'a Bank,
    ledger: &'a Ledger,
    t: u64,
    rng: Rng,
    slot: Slot,
    ranges: (std::ops::Range<u64>, std::ops::Range<u64>),
    write_options: WriteOptions,
}

impl<'a> Teller<'a> {
    fn new(
        a: &'a StressArgs,
        bank: &'a Bank,
        ledger: &'a Ledger,
        t: u64,
        seed: u64,
        kind: TxnKind,
    ) -> Result<Self, String> {
        let slot = ledger.slot(t)?;
        if slot.in_flight.is_some() {
            return Err("the expected state has a transfer in flight: verify first".into());
        }
        Ok(Teller {
            a,
            bank,
            ledger,
            t,
            rng: Rng::new(seed),
            slot,
            ranges: kind.ranges(a.accounts),
            write_options: a.options.write_options(false),
        })
    }

    /// Two distinct accounts of `range`, one time in four among its first [`HOT`].
    fn pick(&mut self, range: &std::ops::Range<u64>) -> (u64, u64) {
        let span = if self.rng.one_in(4) {
            HOT.min(range.end - range.start)
        } else {
            range.end - range.start
        };
        let from = range.start + self.rng.below(span);
        let to = range.start + (from - range.start + 1 + self.rng.below(span - 1)) % span;
        (from, to)
    }

    /// One transfer (retried until it commits or is refused), or one in 64 times an audit.
    fn step(&mut self, stop: &AtomicBool, deadline: Instant) -> Result<(), String> {
        if self.rng.one_in(64) {
            return self.audit();
        }
        let (pess, opt) = self.ranges.clone();
        let optimistic = pess.is_empty() || (!opt.is_empty() && self.rng.one_in(2));
        let (from, to) = self.pick(if optimistic { &opt } else { &pess });
        let two_phase = !optimistic && self.rng.one_in(self.a.two_phase_one_in);
        loop {
            if stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
                return Ok(());
            }
            let attempt = if optimistic {
                self.optimistic(from, to)?
            } else {
                self.pessimistic(from, to, two_phase)?
            };
            match attempt {
                Attempt::Committed => return Ok(()),
                Attempt::Refused => {
                    self.slot.counts.refused += 1;
                    return Ok(());
                }
                Attempt::Retry => std::thread::yield_now(),
            }
        }
    }

    /// Counts a `Busy` as a reason to retry; any other error ends the run.
    fn busy(&mut self, e: strata::Error, what: &str) -> Result<Attempt, String> {
        if e.kind() != ErrorKind::Busy {
            return Err(format!("{what}: {e}"));
        }
        let text = e.to_string();
        if text.contains("deadlock") {
            self.slot.counts.deadlocks += 1;
        } else if text.contains("timed out") {
            self.slot.counts.timeouts += 1;
        } else if text.contains("transaction conflict") {
            self.slot.counts.conflicts += 1;
        } else {
            return Err(format!("{what}: {e}"));
        }
        Ok(Attempt::Retry)
    }

    /// Checks the sequence a transaction read for this thread, and the two balances; picks
    /// the amount (up to a quarter more than the balance, so that some are refused).
    fn amount(
        &mut self,
        seq: Option<Vec<u8>>,
        from_b: Option<Vec<u8>>,
        to: u64,
        to_b: Option<Vec<u8>>,
        from: u64,
    ) -> Result<(u64, i64, i64), String> {
        let seq = sequence("this thread's sequence key", seq.as_deref())?;
        if seq != self.slot.acked {
            return Err(format!(
                "a transaction read this thread's sequence as {seq}; its last acknowledged \
                 transfer is {}",
                self.slot.acked
            ));
        }
        let fb = balance(&format!("account {from}"), from_b.as_deref())?;
        let tb = balance(&format!("account {to}"), to_b.as_deref())?;
        let amount = 1 + self.rng.below(fb as u64 + fb as u64 / 4 + 1);
        Ok((amount, fb, tb))
    }

    fn transfer(&self, from: u64, to: u64, amount: u64, kind: Kind) -> Transfer {
        Transfer {
            seq: self.slot.acked + 1,
            from,
            to,
            amount,
            kind,
        }
    }

    /// Records an acknowledged transfer and counts it.
    fn acknowledged(&mut self, kind: Kind) -> Result<Attempt, String> {
        self.slot.counts.committed[kind as usize - 1] += 1;
        self.ledger.settle(self.t, &mut self.slot)?;
        Ok(Attempt::Committed)
    }

    fn pessimistic(&mut self, from: u64, to: u64, two_phase: bool) -> Result<Attempt, String> {
        let tdb = &self.bank.tdb;
        // One in eight does not detect deadlocks: a short lock timeout ends them.
        let mut options = TransactionOptions::default();
        if self.rng.one_in(8) {
            options.lock_timeout = Duration::from_millis(10);
            options.deadlock_detect = false;
        } else {
            options.lock_timeout = Duration::from_millis(500);
        }
        let mut txn = tdb.transaction(&self.write_options, &options);
        let default = &self.bank.families[0];
        let seq = match txn.get_for_update_cf(default, seq_key(self.t)) {
            Ok(v) => v,
            Err(e) => return self.busy(e, "get_for_update of the sequence"),
        };
        // Locked in the order (from, to): opposite transfers lock in opposite orders.
        let from_b = match txn.get_for_update_cf(self.bank.cf(from), key(from)) {
            Ok(v) => v,
            Err(e) => return self.busy(e, "get_for_update"),
        };
        let to_b = match txn.get_for_update_cf(self.bank.cf(to), key(to)) {
            Ok(v) => v,
            Err(e) => return self.busy(e, "get_for_update"),
        };
        let (amount, fb, tb) = self.amount(seq, from_b, to, to_b, from)?;
        if amount > fb as u64 {
            txn.rollback().map_err(|e| format!("rollback: {e}"))?;
            return Ok(Attempt::Refused);
        }
        let kind = if two_phase {
            Kind::TwoPhase
        } else {
            Kind::Pessimistic
        };
        let tr = self.transfer(from, to, amount, kind);
        let put = |txn: &mut strata::Transaction<'_>| -> strata::Result<()> {
            txn.put_cf(
                self.bank.cf(from),
                key(from),
                (fb - amount as i64).to_le_bytes(),
            )?;
            txn.put_cf(
                self.bank.cf(to),
                key(to),
                (tb + amount as i64).to_le_bytes(),
            )?;
            txn.put_cf(default, seq_key(self.t), tr.seq.to_le_bytes())
        };
        put(&mut txn).map_err(|e| format!("put: {e}"))?;
        self.ledger.begin(self.t, &mut self.slot, tr)?;
        if two_phase {
            txn.set_name(&txn_name(self.t, tr.seq))
                .map_err(|e| format!("set_name: {e}"))?;
            txn.prepare().map_err(|e| format!("prepare: {e}"))?;
        }
        txn.commit().map_err(|e| format!("commit: {e}"))?;
        self.acknowledged(kind)
    }

    fn optimistic(&mut self, from: u64, to: u64) -> Result<Attempt, String> {
        let db = self.bank.tdb.db();
        let mut txn = db.optimistic_transaction(&self.write_options);
        let default = &self.bank.families[0];
        let read = |txn: &mut strata::OptimisticTransaction<'_>, cf: &ColumnFamily, k: &[u8]| {
            txn.get_for_update_cf(cf, k)
                .map_err(|e| format!("get_for_update: {e}"))
        };
        let seq = read(&mut txn, default, &seq_key(self.t))?;
        let from_b = read(&mut txn, self.bank.cf(from), &key(from))?;
        let to_b = read(&mut txn, self.bank.cf(to), &key(to))?;
        let (amount, fb, tb) = self.amount(seq, from_b, to, to_b, from)?;
        if amount > fb as u64 {
            txn.rollback().map_err(|e| format!("rollback: {e}"))?;
            return Ok(Attempt::Refused);
        }
        let tr = self.transfer(from, to, amount, Kind::Optimistic);
        txn.put_cf(
            self.bank.cf(from),
            key(from),
            (fb - amount as i64).to_le_bytes(),
        )
        .and_then(|()| {
            txn.put_cf(
                self.bank.cf(to),
                key(to),
                (tb + amount as i64).to_le_bytes(),
            )
        })
        .and_then(|()| txn.put_cf(default, seq_key(self.t), tr.seq.to_le_bytes()))
        .map_err(|e| format!("put: {e}"))?;
        self.ledger.begin(self.t, &mut self.slot, tr)?;
        match txn.commit() {
            Ok(()) => self.acknowledged(Kind::Optimistic),
            Err(e) => {
                // Nothing was written: the transfer is no longer in flight.
                let r = self.busy(e, "commit")?;
                self.slot.in_flight = None;
                Ok(r)
            }
        }
    }

    /// Reads every account at one snapshot, by point reads and by a scan of each family:
    /// the same balances, none negative, summing to the starting total.
    fn audit(&mut self) -> Result<(), String> {
        let db = self.bank.tdb.db();
        let snapshot: Snapshot = db.snapshot();
        let mut options = ReadOptions::default();
        options.snapshot = Some(snapshot);
        let mut sum: i128 = 0;
        let mut balances = Vec::with_capacity(self.a.accounts as usize);
        for a in 0..self.a.accounts {
            let v = db
                .get_cf_opt(self.bank.cf(a), key(a), &options)
                .map_err(|e| format!("audit: get {a}: {e}"))?;
            let b = balance(&format!("audit: account {a}"), v.as_deref())?;
            sum += i128::from(b);
            balances.push(b);
        }
        let mut scanned: i128 = 0;
        for cf in &self.bank.families {
            let mut it = db
                .iter_cf(cf, &options)
                .map_err(|e| format!("audit: scan: {e}"))?;
            it.seek_to_first();
            while it.valid() {
                if let Some(a) = key_index(it.key()) {
                    let b = balance(&format!("audit: scanned account {a}"), Some(it.value()))?;
                    if balances.get(a as usize) != Some(&b) {
                        return Err(format!(
                            "audit: the scan disagrees with a get for account {a}"
                        ));
                    }
                    scanned += i128::from(b);
                }
                it.next();
            }
            it.status().map_err(|e| format!("audit: scan: {e}"))?;
        }
        let want = i128::from(INITIAL) * i128::from(self.a.accounts);
        if sum != want || scanned != want {
            return Err(format!(
                "audit: at one snapshot the balances sum to {sum} (point reads) and {scanned} \
                 (scans), not {want}"
            ));
        }
        self.slot.counts.audits += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine_flags::parse_flags;

    fn args(dir: &Path, flags: &[&str]) -> StressArgs {
        let db = format!("--db={}", dir.join("db").display());
        let mut argv = vec![db.as_str(), "--txn"];
        argv.extend_from_slice(flags);
        parse_flags(&argv).unwrap()
    }

    #[test]
    fn names_and_keys_round_trip() {
        assert_eq!(parse_txn_name(txn_name(3, 77).as_bytes()), Some((3, 77)));
        assert_eq!(parse_txn_name(b"xid-1"), None);
        assert_eq!(seq_index(&seq_key(12)), Some(12));
        assert_eq!(key_index(&seq_key(12)), None);
        assert_eq!(TxnKind::Mixed.ranges(10), (0..5, 5..10));
        assert!(TxnKind::parse("both")
            .unwrap_err()
            .contains("--txn_kind=both"));
    }

    /// A prepared transfer found at recovery is accepted, resolved, and the ledger follows;
    /// money moved behind the ledger's back is found, in the sum and in one account.
    #[test]
    fn prepared_transfers_are_resolved_and_tampering_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let a = args(dir.path(), &["--accounts=6", "--threads=2"]);
        let path = dir.path().join("ledger");
        let mut rng = Rng::new(7);
        {
            let (bank, ledger) = open_bank(&a, &path).unwrap();
            let mut w = Teller::new(&a, &bank, &ledger, 1, 3, TxnKind::Mixed).unwrap();
            for _ in 0..20 {
                w.pessimistic(0, 2, false).unwrap();
                w.optimistic(4, 5).unwrap();
            }
            // Thread 1 prepares a transfer and dies before its commit.
            let tr = w.transfer(1, 0, 10, Kind::TwoPhase);
            w.ledger.begin(1, &mut w.slot, tr).unwrap();
            let mut txn = bank
                .tdb
                .transaction(&WriteOptions::default(), &TransactionOptions::default());
            txn.put_cf(bank.cf(1), key(1), ((INITIAL - 10) as i64).to_le_bytes())
                .unwrap();
            let to = balance(
                "",
                bank.tdb.db().get_cf(bank.cf(0), key(0)).unwrap().as_deref(),
            )
            .unwrap();
            txn.put_cf(bank.cf(0), key(0), (to + 10).to_le_bytes())
                .unwrap();
            txn.put_cf(&bank.families[0], seq_key(1), tr.seq.to_le_bytes())
                .unwrap();
            txn.set_name(&txn_name(1, tr.seq)).unwrap();
            txn.prepare().unwrap();
            drop(txn); // parked, then lost with the handle: as a kill leaves it
        }
        let (bank, ledger) = open_bank(&a, &path).unwrap();
        let c = verify(&bank, &ledger, &mut rng).unwrap();
        assert_eq!(
            (c.prepared_committed + c.prepared_rolled_back, c.accounts),
            (1, 12)
        );
        assert!(ledger.slot(1).unwrap().in_flight.is_none());
        assert_eq!(verify(&bank, &ledger, &mut rng).unwrap().accounts, 6);
        // Move 5 from account 3 to 4 without the ledger: the sum holds, the balances do not.
        let get = |k: u64| {
            balance(
                "",
                bank.tdb.db().get_cf(bank.cf(k), key(k)).unwrap().as_deref(),
            )
            .unwrap()
        };
        let (b3, b4) = (get(3), get(4));
        let mut batch = WriteBatch::new();
        batch.put_cf(bank.cf(3), key(3), (b3 - 5).to_le_bytes());
        batch.put_cf(bank.cf(4), key(4), (b4 + 5).to_le_bytes());
        bank.tdb
            .db()
            .write(batch, &WriteOptions::default())
            .unwrap();
        let e = verify(&bank, &ledger, &mut rng).unwrap_err();
        assert!(e.contains("account 3 holds"), "{e}");
        bank.tdb
            .db()
            .put_cf(bank.cf(4), key(4), (b4 + 6).to_le_bytes())
            .unwrap();
        let e = verify(&bank, &ledger, &mut rng).unwrap_err();
        assert!(e.contains("money was made or lost"), "{e}");
    }
}
