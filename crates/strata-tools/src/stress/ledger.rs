//! The expected state of a `--txn` run (the bank of `bank.rs`), kept in a file outside the
//! database so that it survives the process being killed.
//!
//! Layout, all integers little-endian:
//! - header, 64 bytes: `STRATATX`; accounts (u64); threads (u64); column families (u64); the
//!   balance every account starts with (u64); prepared transactions the verifier committed
//!   (u64) and rolled back (u64) after recoveries; 8 bytes reserved (0).
//! - one 128-byte slot per thread: the last acknowledged sequence (u64); the transfer in
//!   flight: its sequence (u64, 0 = none), from, to, amount (u64 each) and kind (u64: 1
//!   pessimistic, 2 optimistic, 3 two-phase); then the thread's counters (9 x u64: transfers
//!   committed per kind, conflicts, deadlocks, lock timeouts, transfers refused for want of
//!   funds, audits, 8 bytes reserved).
//! - per thread, per account, 16 bytes: the net amount the thread's acknowledged transfers
//!   moved into the account (i64) and the sequence of the last one that touched it (u64).
//!
//! Only thread `t` writes its slot and its entries while a run goes on; the verifier writes
//! them while no run does. A transfer's protocol, each step one `pwrite`: record it in flight,
//! commit it in the database, then for its two accounts add the amount to the entry and stamp
//! it with the sequence, then mark the sequence acknowledged. A stamp says the step happened,
//! so [`Ledger::settle`] can finish a transfer half recorded at a kill, and a stamped entry
//! proves the commit was acknowledged even if the slot does not say so yet.
//!
//! So the expected balance of account `a` is the starting balance plus the sum over threads
//! of their entries for `a`, plus the transfers in flight that the database applied, which
//! its per-thread sequence keys tell (see [`judge`]).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"STRATATX";
const HEADER: u64 = 64;
const SLOT: u64 = 128;
const ENTRY: u64 = 16;

/// The shape of a bank: what the flags of a run must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub accounts: u64,
    pub threads: u64,
    pub families: u64,
    /// The balance every account starts with.
    pub initial: u64,
}

/// Which kind of transaction moved the money.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pessimistic = 1,
    Optimistic = 2,
    TwoPhase = 3,
}

impl Kind {
    fn decode(v: u64) -> Option<Kind> {
        match v {
            1 => Some(Kind::Pessimistic),
            2 => Some(Kind::Optimistic),
            3 => Some(Kind::TwoPhase),
            _ => None,
        }
    }
}

/// One transfer of a thread: `amount` from account `from` to account `to`, the thread's
/// `seq`-th.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    pub seq: u64,
    pub from: u64,
    pub to: u64,
    pub amount: u64,
    pub kind: Kind,
}

/// What a thread did, summed over runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Transfers committed, per kind (pessimistic, optimistic, two-phase).
    pub committed: [u64; 3],
    /// Optimistic commits refused because another transaction wrote a key first.
    pub conflicts: u64,
    /// Lock requests refused because they would close a cycle of waiting transactions.
    pub deadlocks: u64,
    /// Lock requests that waited past the lock timeout.
    pub timeouts: u64,
    /// Transfers rolled back because the account had less than the amount.
    pub refused: u64,
    /// Consistent reads of every account at a snapshot.
    pub audits: u64,
}

impl Counts {
    fn fields(&self) -> [u64; 8] {
        let [p, o, t] = self.committed;
        [
            p,
            o,
            t,
            self.conflicts,
            self.deadlocks,
            self.timeouts,
            self.refused,
            self.audits,
        ]
    }

    fn from_fields(f: [u64; 8]) -> Counts {
        Counts {
            committed: [f[0], f[1], f[2]],
            conflicts: f[3],
            deadlocks: f[4],
            timeouts: f[5],
            refused: f[6],
            audits: f[7],
        }
    }

    pub fn add(&mut self, o: &Counts) {
        let sum: Vec<u64> = self
            .fields()
            .iter()
            .zip(o.fields())
            .map(|(a, b)| a + b)
            .collect();
        *self = Counts::from_fields(sum.try_into().expect("8 fields"));
    }

    pub fn minus(&self, o: &Counts) -> Counts {
        let diff: Vec<u64> = self
            .fields()
            .iter()
            .zip(o.fields())
            .map(|(a, b)| a.saturating_sub(b))
            .collect();
        Counts::from_fields(diff.try_into().expect("8 fields"))
    }

    pub fn total_committed(&self) -> u64 {
        self.committed.iter().sum()
    }
}

/// A thread's slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slot {
    /// The last sequence whose transfer the database acknowledged and the ledger recorded.
    pub acked: u64,
    pub in_flight: Option<Transfer>,
    pub counts: Counts,
}

impl Slot {
    fn encode(&self) -> [u8; SLOT as usize] {
        let mut b = [0u8; SLOT as usize];
        let mut words = vec![self.acked];
        match self.in_flight {
            Some(t) => words.extend([t.seq, t.from, t.to, t.amount, t.kind as u64]),
            None => words.extend([0; 5]),
        }
        words.extend(self.counts.fields());
        for (i, w) in words.iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    fn decode(b: &[u8]) -> Result<Slot, String> {
        let w = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let in_flight = match w(1) {
            0 => None,
            seq => Some(Transfer {
                seq,
                from: w(2),
                to: w(3),
                amount: w(4),
                kind: Kind::decode(w(5)).ok_or_else(|| format!("transfer kind {}", w(5)))?,
            }),
        };
        let mut counts = [0u64; 8];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = w(6 + i);
        }
        Ok(Slot {
            acked: w(0),
            in_flight,
            counts: Counts::from_fields(counts),
        })
    }
}

/// A thread's entry for one account.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Entry {
    /// Net amount moved into the account by the thread's recorded transfers.
    pub delta: i64,
    /// The sequence of the last of them.
    pub seq: u64,
}

/// What the database shows of a thread's transfer in flight, by [`judge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The database holds the acknowledged state; nothing in flight is applied.
    NotApplied,
    /// The transfer in flight is applied.
    Applied,
    /// The transfer in flight is a recovered prepared transaction, not applied.
    Prepared,
}

/// Judges thread `thread`'s sequence key after a recovery: `acked` and `in_flight` from its
/// slot, `stamped` when an entry bears the in-flight sequence (so its commit was
/// acknowledged), `db_seq` the sequence the database holds, `prepared` the sequence of a
/// recovered prepared transaction of the thread. An acknowledged transfer must be there; a
/// transfer in flight may be there or not, but a prepared one must not be applied yet.
pub fn judge(
    thread: u64,
    acked: u64,
    in_flight: Option<(u64, Kind)>,
    stamped: bool,
    db_seq: u64,
    prepared: Option<u64>,
) -> Result<Verdict, String> {
    if let Some((seq, _)) = in_flight.filter(|&(seq, _)| seq != acked + 1) {
        return Err(format!(
            "thread {thread}: the ledger has transfer {seq} in flight after {acked}: damaged"
        ));
    }
    let acked = match in_flight {
        Some((seq, _)) if stamped => seq,
        _ => acked,
    };
    if let Some(p) = prepared {
        return match in_flight {
            Some((seq, Kind::TwoPhase)) if seq == p && !stamped && db_seq == seq - 1 => {
                Ok(Verdict::Prepared)
            }
            Some((seq, Kind::TwoPhase)) if seq == p && db_seq == seq => Err(format!(
                "thread {thread}: transfer {p} is both applied and offered as prepared"
            )),
            _ => Err(format!(
                "thread {thread}: a prepared transaction of transfer {p} was recovered, but the \
                 transfer in flight is {in_flight:?} (acknowledged: {acked}, database: {db_seq})"
            )),
        };
    }
    match in_flight {
        Some((seq, _)) if db_seq == seq => Ok(Verdict::Applied),
        _ if db_seq == acked => Ok(Verdict::NotApplied),
        _ if db_seq < acked => Err(format!(
            "thread {thread}: acknowledged transfer {acked} is missing: the database's \
             sequence is {db_seq}"
        )),
        _ => Err(format!(
            "thread {thread}: the database's sequence {db_seq} is past every transfer begun \
             (acknowledged {acked}, in flight {:?})",
            in_flight.map(|(s, _)| s)
        )),
    }
}

/// The expected state file of a bank.
pub struct Ledger {
    file: File,
    path: PathBuf,
    pub shape: Shape,
}

impl Ledger {
    fn err(&self, e: std::io::Error) -> String {
        format!("expected-state file {}: {e}", self.path.display())
    }

    /// Creates the file at `path` for a new bank (written whole to a temporary file, then
    /// renamed, so that a file at `path` is always a whole one).
    pub fn create(path: &Path, shape: Shape) -> Result<Ledger, String> {
        let what = |e: std::io::Error| format!("expected-state file {}: {e}", path.display());
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(what)?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        {
            let file = File::create(&tmp).map_err(what)?;
            let mut header = Vec::with_capacity(HEADER as usize);
            header.extend_from_slice(MAGIC);
            for w in [shape.accounts, shape.threads, shape.families, shape.initial] {
                header.extend_from_slice(&w.to_le_bytes());
            }
            header.resize(HEADER as usize, 0);
            file.write_all_at(&header, 0).map_err(what)?;
            let len = HEADER + shape.threads * SLOT + shape.threads * shape.accounts * ENTRY;
            file.set_len(len).map_err(what)?;
            file.sync_all().map_err(what)?;
        }
        std::fs::rename(&tmp, path).map_err(what)?;
        Ledger::open(path, shape)
    }

    /// Opens the file at `path`, which must be one of a bank of `shape`.
    pub fn open(path: &Path, shape: Shape) -> Result<Ledger, String> {
        let what = |e: std::io::Error| format!("expected-state file {}: {e}", path.display());
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(what)?;
        let mut header = [0u8; HEADER as usize];
        let len = file.metadata().map_err(what)?.len();
        if len < HEADER || {
            file.read_exact_at(&mut header, 0).map_err(what)?;
            &header[..8] != MAGIC
        } {
            return Err(format!(
                "expected-state file {} is not one of a --txn run: remove it, or pass another \
                 --expected_state",
                path.display()
            ));
        }
        let w = |i: usize| u64::from_le_bytes(header[i * 8..i * 8 + 8].try_into().expect("8"));
        let stored = Shape {
            accounts: w(1),
            threads: w(2),
            families: w(3),
            initial: w(4),
        };
        if stored != shape {
            return Err(format!(
                "expected-state file {} is one of a bank with --accounts={} --threads={} \
                 --column_families={}; this run has --accounts={} --threads={} \
                 --column_families={}: pass the same flags, or remove the database and the file",
                path.display(),
                stored.accounts,
                stored.threads,
                stored.families,
                shape.accounts,
                shape.threads,
                shape.families
            ));
        }
        let need = HEADER + shape.threads * SLOT + shape.threads * shape.accounts * ENTRY;
        if len != need {
            return Err(format!(
                "expected-state file {} has {len} bytes, not {need}: damaged",
                path.display()
            ));
        }
        Ok(Ledger {
            file,
            path: path.to_path_buf(),
            shape,
        })
    }

    /// Prepared transactions the verifier committed and rolled back, over all runs.
    pub fn resolved(&self) -> Result<(u64, u64), String> {
        let mut b = [0u8; 16];
        self.file
            .read_exact_at(&mut b, 40)
            .map_err(|e| self.err(e))?;
        Ok((
            u64::from_le_bytes(b[..8].try_into().expect("8")),
            u64::from_le_bytes(b[8..].try_into().expect("8")),
        ))
    }

    fn add_resolved(&self, committed: bool) -> Result<(), String> {
        let (c, r) = self.resolved()?;
        let (at, v) = if committed { (40, c + 1) } else { (48, r + 1) };
        self.file
            .write_all_at(&u64::to_le_bytes(v), at)
            .map_err(|e| self.err(e))
    }

    pub fn slot(&self, t: u64) -> Result<Slot, String> {
        let mut b = [0u8; SLOT as usize];
        self.file
            .read_exact_at(&mut b, HEADER + t * SLOT)
            .map_err(|e| self.err(e))?;
        Slot::decode(&b).map_err(|e| format!("{}: slot of thread {t}: {e}", self.path.display()))
    }

    pub fn write_slot(&self, t: u64, slot: &Slot) -> Result<(), String> {
        self.file
            .write_all_at(&slot.encode(), HEADER + t * SLOT)
            .map_err(|e| self.err(e))
    }

    fn entry_at(&self, t: u64, a: u64) -> u64 {
        HEADER + self.shape.threads * SLOT + (t * self.shape.accounts + a) * ENTRY
    }

    pub fn entry(&self, t: u64, a: u64) -> Result<Entry, String> {
        let mut b = [0u8; ENTRY as usize];
        self.file
            .read_exact_at(&mut b, self.entry_at(t, a))
            .map_err(|e| self.err(e))?;
        Ok(Entry {
            delta: i64::from_le_bytes(b[..8].try_into().expect("8")),
            seq: u64::from_le_bytes(b[8..].try_into().expect("8")),
        })
    }

    fn write_entry(&self, t: u64, a: u64, e: Entry) -> Result<(), String> {
        let mut b = [0u8; ENTRY as usize];
        b[..8].copy_from_slice(&e.delta.to_le_bytes());
        b[8..].copy_from_slice(&e.seq.to_le_bytes());
        self.file
            .write_all_at(&b, self.entry_at(t, a))
            .map_err(|e| self.err(e))
    }

    /// True when an entry of thread `t` bears the sequence of `transfer`: its commit was
    /// acknowledged.
    pub fn stamped(&self, t: u64, transfer: &Transfer) -> Result<bool, String> {
        Ok(self.entry(t, transfer.from)?.seq == transfer.seq
            || self.entry(t, transfer.to)?.seq == transfer.seq)
    }

    /// Records that thread `t` is about to commit `transfer` (its slot otherwise `slot`).
    pub fn begin(&self, t: u64, slot: &mut Slot, transfer: Transfer) -> Result<(), String> {
        slot.in_flight = Some(transfer);
        self.write_slot(t, slot)
    }

    /// Records the transfer in flight of thread `t` as applied: each entry not yet stamped
    /// with its sequence gets its amount, then the slot marks it acknowledged. Finishes a
    /// record a kill cut short; a second call changes nothing.
    pub fn settle(&self, t: u64, slot: &mut Slot) -> Result<(), String> {
        let Some(tr) = slot.in_flight else {
            return Ok(());
        };
        let amount = i64::try_from(tr.amount).map_err(|_| "amount above i64".to_string())?;
        for (a, d) in [(tr.from, -amount), (tr.to, amount)] {
            let e = self.entry(t, a)?;
            if e.seq < tr.seq {
                self.write_entry(
                    t,
                    a,
                    Entry {
                        delta: e.delta + d,
                        seq: tr.seq,
                    },
                )?;
            }
        }
        slot.acked = tr.seq;
        slot.in_flight = None;
        self.write_slot(t, slot)
    }

    /// Forgets the transfer in flight of thread `t`: it was not applied.
    pub fn forget(&self, t: u64, slot: &mut Slot) -> Result<(), String> {
        slot.in_flight = None;
        self.write_slot(t, slot)
    }

    /// Records the verifier's decision on a recovered prepared transaction of thread `t`.
    pub fn resolve(&self, t: u64, slot: &mut Slot, committed: bool) -> Result<(), String> {
        if committed {
            self.settle(t, slot)?;
        } else {
            self.forget(t, slot)?;
        }
        self.add_resolved(committed)
    }

    /// The expected balance of every account: the starting balance plus every thread's
    /// recorded transfers.
    pub fn balances(&self) -> Result<Vec<i64>, String> {
        let n = self.shape.accounts;
        let mut balances = vec![self.shape.initial as i64; n as usize];
        let mut buf = vec![0u8; (n * ENTRY) as usize];
        for t in 0..self.shape.threads {
            self.file
                .read_exact_at(&mut buf, self.entry_at(t, 0))
                .map_err(|e| self.err(e))?;
            for (a, b) in balances.iter_mut().enumerate() {
                let at = a * ENTRY as usize;
                *b += i64::from_le_bytes(buf[at..at + 8].try_into().expect("8"));
            }
        }
        Ok(balances)
    }

    /// Every thread's counters, summed.
    pub fn counts(&self) -> Result<Counts, String> {
        let mut c = Counts::default();
        for t in 0..self.shape.threads {
            c.add(&self.slot(t)?.counts);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: Shape = Shape {
        accounts: 5,
        threads: 2,
        families: 3,
        initial: 100,
    };

    #[test]
    fn transfers_settle_once_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger");
        let l = Ledger::create(&path, SHAPE).unwrap();
        let mut slot = l.slot(1).unwrap();
        assert_eq!(slot, Slot::default());
        let tr = Transfer {
            seq: 1,
            from: 0,
            to: 4,
            amount: 30,
            kind: Kind::TwoPhase,
        };
        l.begin(1, &mut slot, tr).unwrap();
        assert!(!l.stamped(1, &tr).unwrap());
        slot.counts.refused = 7;
        l.settle(1, &mut slot).unwrap();
        l.settle(1, &mut slot).unwrap();
        assert!(l.stamped(1, &tr).unwrap());
        drop(l);
        let l = Ledger::open(&path, SHAPE).unwrap();
        assert_eq!(l.balances().unwrap(), [70, 100, 100, 100, 130]);
        let slot = l.slot(1).unwrap();
        assert_eq!(
            (slot.acked, slot.in_flight, slot.counts.refused),
            (1, None, 7)
        );
        // A kill after the first entry was stamped: settling again finishes the second only.
        let mut slot = l.slot(0).unwrap();
        let tr = Transfer {
            seq: 1,
            from: 2,
            to: 0,
            amount: 5,
            kind: Kind::Optimistic,
        };
        l.begin(0, &mut slot, tr).unwrap();
        l.write_entry(0, 2, Entry { delta: -5, seq: 1 }).unwrap();
        let mut slot = l.slot(0).unwrap();
        l.settle(0, &mut slot).unwrap();
        assert_eq!(l.balances().unwrap(), [75, 100, 95, 100, 130]);
        l.resolve(0, &mut slot, false).unwrap();
        assert_eq!(l.resolved().unwrap(), (0, 1));
        let other = Shape {
            threads: 3,
            ..SHAPE
        };
        let e = Ledger::open(&path, other).err().unwrap();
        assert!(
            e.contains("--threads=2") && e.contains("--threads=3"),
            "{e}"
        );
        std::fs::write(
            dir.path().join("plain"),
            b"STRATAOR and more bytes than a header has",
        )
        .unwrap();
        let e = Ledger::open(&dir.path().join("plain"), SHAPE)
            .err()
            .unwrap();
        assert!(e.contains("not one of a --txn run"), "{e}");
    }

    /// The verdicts on a thread's sequence after a recovery. Columns: acknowledged, the
    /// transfer in flight (sequence, kind), whether an entry bears its sequence, the
    /// database's sequence, a recovered prepared transaction's sequence, and the verdict (or
    /// a word of the error).
    #[test]
    fn sequences_after_a_recovery_are_judged() {
        use Kind::*;
        use Verdict::*;
        type Case = (
            u64,
            Option<(u64, Kind)>,
            bool,
            u64,
            Option<u64>,
            Result<Verdict, &'static str>,
        );
        let cases: &[Case] = &[
            // Nothing in flight: the database holds the acknowledged sequence, no other.
            (5, None, false, 5, None, Ok(NotApplied)),
            (
                5,
                None,
                false,
                4,
                None,
                Err("acknowledged transfer 5 is missing"),
            ),
            (5, None, false, 6, None, Err("past every transfer begun")),
            // In flight: applied or not.
            (5, Some((6, Pessimistic)), false, 5, None, Ok(NotApplied)),
            (5, Some((6, Optimistic)), false, 6, None, Ok(Applied)),
            (
                5,
                Some((6, TwoPhase)),
                false,
                7,
                None,
                Err("past every transfer begun"),
            ),
            // A stamped entry: the commit was acknowledged, so it must be applied.
            (5, Some((6, Pessimistic)), true, 6, None, Ok(Applied)),
            (
                5,
                Some((6, Pessimistic)),
                true,
                5,
                None,
                Err("acknowledged transfer 6 is missing"),
            ),
            // Prepared: it must be the two-phase transfer in flight, not applied.
            (5, Some((6, TwoPhase)), false, 5, Some(6), Ok(Prepared)),
            (
                5,
                Some((6, TwoPhase)),
                false,
                6,
                Some(6),
                Err("both applied and offered"),
            ),
            (
                5,
                Some((6, Pessimistic)),
                false,
                5,
                Some(6),
                Err("transfer in flight is"),
            ),
            (5, None, false, 5, Some(6), Err("transfer in flight is")),
            (
                5,
                Some((6, TwoPhase)),
                false,
                5,
                Some(5),
                Err("transfer in flight is"),
            ),
            (
                5,
                Some((6, TwoPhase)),
                true,
                5,
                Some(6),
                Err("transfer in flight is"),
            ),
            // A ledger whose transfer in flight does not follow the acknowledged one.
            (5, Some((8, Optimistic)), false, 5, None, Err("damaged")),
        ];
        for (i, &(acked, in_flight, stamped, db_seq, prepared, want)) in cases.iter().enumerate() {
            let got = judge(3, acked, in_flight, stamped, db_seq, prepared);
            match (want, &got) {
                (Ok(v), Ok(g)) => assert_eq!(v, *g, "case {i}"),
                (Err(word), Err(e)) => assert!(e.contains(word), "case {i}: {e}"),
                _ => panic!("case {i}: want {want:?}, got {got:?}"),
            }
        }
    }
}
