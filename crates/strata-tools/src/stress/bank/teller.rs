//! The transfer threads of the bank: each a [`Teller`] running transfers between two
//! accounts in one transaction (pessimistic, optimistic or two-phase), recorded in the ledger
//! before the commit and after the acknowledgement (see the module `bank`'s doc).

use super::*;

/// Runs the transfer threads for `--duration` seconds (or until a check fails).
pub(super) fn run_workers(
    a: &StressArgs,
    bank: &Bank,
    ledger: &Ledger,
    seed: u64,
) -> Result<(), BoxError> {
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
pub(super) enum Attempt {
    Committed,
    /// Rolled back: the account had less than the amount.
    Refused,
    /// Busy: retry (the counter was bumped).
    Retry,
}

/// One transfer thread.
pub(super) struct Teller<'a> {
    a: &'a StressArgs,
    bank: &'a Bank,
    pub(super) ledger: &'a Ledger,
    t: u64,
    rng: Rng,
    pub(super) slot: Slot,
    ranges: (std::ops::Range<u64>, std::ops::Range<u64>),
    write_options: WriteOptions,
}

impl<'a> Teller<'a> {
    pub(super) fn new(
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

    pub(super) fn transfer(&self, from: u64, to: u64, amount: u64, kind: Kind) -> Transfer {
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

    pub(super) fn pessimistic(
        &mut self,
        from: u64,
        to: u64,
        two_phase: bool,
    ) -> Result<Attempt, String> {
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

    pub(super) fn optimistic(&mut self, from: u64, to: u64) -> Result<Attempt, String> {
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
