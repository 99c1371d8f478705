use super::teller::Teller;
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

/// Copies the database directory `from` (flat) to `to`, as a power cut's image of it.
fn copy_image(from: &Path, to: &Path) {
    if to.exists() {
        std::fs::remove_dir_all(to).unwrap();
    }
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// After a power cut the image is checked as after a kill (every transfer synced): an image
/// from before acknowledged transfers is refused, one with all of them passes.
#[test]
fn a_power_cut_image_without_acknowledged_transfers_is_refused() {
    use super::super::power_cut::CutFiles;
    use super::super::{AfterKill, CrashChecks as _};
    let dir = tempfile::tempdir().unwrap();
    let a = args(
        dir.path(),
        &[
            "--accounts=6",
            "--threads=2",
            "--sync_fault_injection",
            "--sync=1",
        ],
    );
    let path = dir.path().join("ledger");
    let files = CutFiles::of(&a.db);
    {
        let (bank, ledger) = open_bank(&a, &path).unwrap();
        let mut w = Teller::new(&a, &bank, &ledger, 1, 3, TxnKind::Mixed).unwrap();
        w.pessimistic(0, 2, false).unwrap();
        copy_image(&a.db, &files.image);
        for _ in 0..5 {
            w.pessimistic(0, 2, false).unwrap();
        }
    }
    let mut checks = CrashChecks {
        a: &a,
        ledger_path: &path,
        rng: Rng::new(1),
        before: Default::default(),
        resolved: Default::default(),
    };
    match checks.after_power_cut(&files) {
        Err(AfterKill::Violation(e)) => assert!(e.contains("sequence"), "{e}"),
        Err(AfterKill::Reopen(e)) => panic!("reopen: {e}"),
        Ok(_) => panic!("five acknowledged transfers lost, and the check passed"),
    }
    // The same run again, its image taken after the last transfer.
    let dir = tempfile::tempdir().unwrap();
    let a = args(
        dir.path(),
        &[
            "--accounts=6",
            "--threads=2",
            "--sync_fault_injection",
            "--sync=1",
        ],
    );
    let path = dir.path().join("ledger");
    let files = CutFiles::of(&a.db);
    {
        let (bank, ledger) = open_bank(&a, &path).unwrap();
        let mut w = Teller::new(&a, &bank, &ledger, 1, 3, TxnKind::Mixed).unwrap();
        for _ in 0..5 {
            w.pessimistic(0, 2, false).unwrap();
        }
        copy_image(&a.db, &files.image);
    }
    let mut checks = CrashChecks {
        a: &a,
        ledger_path: &path,
        rng: Rng::new(1),
        before: Default::default(),
        resolved: Default::default(),
    };
    assert!(checks.after_power_cut(&files).is_ok());
}
