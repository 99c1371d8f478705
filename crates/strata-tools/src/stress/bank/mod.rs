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
//! Power cuts (`--sync_fault_injection`, with `--sync=1`): the child runs on the fault file
//! system and cuts its power at a random moment; every acknowledged transfer being synced,
//! the image is checked as after a kill.
//!
//! The transfer threads are in [`teller`]. The expected state is the
//! [`ledger`](super::ledger). Checks:
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
use teller::run_workers;

mod teller;

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
    if a.sync_fault_injection && !a.options.sync {
        return Err(
            "--txn with --sync_fault_injection needs --sync=1 (the check after a power \
                    cut is the one after a kill: every acknowledged transfer is there)"
                .into(),
        );
    }
    if a.disable_wal {
        return Err(
            "--txn does not take --disable_wal (transactions commit through the WAL)".into(),
        );
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
    super::crash::say_ready(a);
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

    /// With `--sync=1` every acknowledged transfer is durable, so the image a power cut left
    /// is checked as a database after a kill.
    fn after_power_cut(
        &mut self,
        files: &super::power_cut::CutFiles,
    ) -> Result<u64, super::AfterKill> {
        let io =
            |what: &str, e: std::io::Error| super::AfterKill::Violation(format!("{what}: {e}"));
        std::fs::remove_dir_all(&self.a.db).map_err(|e| io("removing the database", e))?;
        std::fs::rename(&files.image, &self.a.db).map_err(|e| io("swapping in the image", e))?;
        super::CrashChecks::after_kill(self)
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

#[cfg(test)]
mod tests;
