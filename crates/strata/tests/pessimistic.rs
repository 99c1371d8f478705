//! Pessimistic transactions: locks, deadlocks (a two-transaction and a four-transaction
//! cycle, each detected, the survivors committing), timeouts, expiration, snapshots, and
//! concurrent transfers that keep their total.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use strata::TransactionBase;
use strata::{
    ErrorKind, Options, TransactionDb, TransactionOptions, TxnFailure, WriteBatch, WriteOptions,
};

fn open(dir: &std::path::Path) -> TransactionDb {
    let mut options = Options::default();
    options.create_if_missing = true;
    TransactionDb::open(dir, options).unwrap()
}

fn options(timeout_ms: u64) -> TransactionOptions {
    let mut txn_options = TransactionOptions::default();
    txn_options.lock_timeout = Duration::from_millis(timeout_ms);
    txn_options
}

/// `n` transactions in a ring: each locks key i, then waits for key i+1. Exactly one lock
/// request must be refused as a deadlock naming the cycle's length; the others commit.
fn ring(n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(dir.path());
    let barrier = Barrier::new(n);
    let results: Vec<(bool, Option<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (tdb, barrier) = (&tdb, &barrier);
                s.spawn(move || {
                    let mut t = tdb.transaction(&WriteOptions::default(), &options(10_000));
                    t.put(format!("k{i}").as_bytes(), b"mine").unwrap();
                    barrier.wait();
                    // The last one waits a little so that the others are all waiting: it
                    // closes the cycle.
                    if i == n - 1 {
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    match t.put(format!("k{}", (i + 1) % n).as_bytes(), b"next") {
                        Ok(()) => {
                            t.commit().unwrap();
                            (true, None)
                        }
                        Err(e) => {
                            assert_eq!(e.txn_failure(), Some(TxnFailure::Deadlock), "{e}");
                            t.rollback().unwrap();
                            (false, Some(e.to_string()))
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let refused: Vec<&String> = results.iter().filter_map(|(_, e)| e.as_ref()).collect();
    assert_eq!(refused.len(), 1, "{results:?}");
    assert!(
        refused[0].contains("deadlock") && refused[0].contains(&format!("cycle of {n}")),
        "{}",
        refused[0]
    );
    assert_eq!(results.iter().filter(|(ok, _)| *ok).count(), n - 1);
    assert_eq!(tdb.locked_keys(), 0);
}

#[test]
fn a_two_transaction_deadlock_is_detected_and_the_survivor_commits() {
    ring(2);
}

#[test]
fn a_four_transaction_deadlock_is_detected_and_the_survivors_commit() {
    ring(4);
}

#[test]
fn a_lock_wait_times_out_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(dir.path());
    let mut holder = tdb.transaction(&WriteOptions::default(), &options(50));
    holder.get_for_update(b"k").unwrap();
    let mut waiter = tdb.transaction(&WriteOptions::default(), &options(50));
    let e = waiter.put(b"k", b"v").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    assert_eq!(e.txn_failure(), Some(TxnFailure::LockTimeout));
    assert!(
        e.to_string().contains("timed out after 50 ms") && e.to_string().contains("key 'k'"),
        "{e}"
    );
    // A plain write through the TransactionDb waits for the lock too.
    let plain = {
        let mut b = WriteBatch::new();
        b.put(b"k", b"plain");
        b
    };
    let (tdb_ref, holder_ref) = (&tdb, &mut holder);
    std::thread::scope(|s| {
        let writer = s.spawn(move || tdb_ref.write(plain, &WriteOptions::default()));
        std::thread::sleep(Duration::from_millis(100));
        holder_ref.put(b"k", b"holder").unwrap();
        holder_ref.commit().unwrap();
        writer.join().unwrap().unwrap();
    });
    assert_eq!(tdb.db().get(b"k").unwrap().as_deref(), Some(&b"plain"[..]));
    // The waiter is still usable after a timeout: it locks and commits once the key is free.
    waiter.put(b"k", b"waiter").unwrap();
    waiter.commit().unwrap();
    assert_eq!(tdb.db().get(b"k").unwrap().as_deref(), Some(&b"waiter"[..]));
}

#[test]
fn an_expired_transaction_loses_its_locks_and_cannot_commit() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(dir.path());
    let mut short = TransactionOptions::default();
    short.expiration = Some(Duration::from_millis(20));
    let mut old = tdb.transaction(&WriteOptions::default(), &short);
    old.put(b"k", b"old").unwrap();
    std::thread::sleep(Duration::from_millis(40));
    let mut new = tdb.transaction(&WriteOptions::default(), &options(1000));
    new.put(b"k", b"new").unwrap();
    new.commit().unwrap();
    let e = old.commit().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    assert_eq!(e.txn_failure(), Some(TxnFailure::Expired));
    assert!(e.to_string().contains("expired"), "{e}");
    assert_eq!(tdb.db().get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
}

#[test]
fn with_a_snapshot_a_key_written_since_cannot_be_locked() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(dir.path());
    tdb.put(b"k", b"1").unwrap();
    let mut with_snapshot = TransactionOptions::default();
    with_snapshot.set_snapshot = true;
    let mut t = tdb.transaction(&WriteOptions::default(), &with_snapshot);
    tdb.put(b"k", b"2").unwrap();
    assert_eq!(t.get(b"k").unwrap().as_deref(), Some(&b"1"[..]));
    let e = t.get_for_update(b"k").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Busy);
    assert_eq!(e.txn_failure(), Some(TxnFailure::Conflict));
    assert!(
        e.to_string().contains("after the transaction's snapshot"),
        "{e}"
    );
    // The refused key is not left locked.
    assert_eq!(tdb.locked_keys(), 0);
    t.put(b"other", b"x").unwrap();
    t.commit().unwrap();
}

#[test]
fn save_points_release_the_locks_taken_after_them_and_drop_releases_all() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(dir.path());
    let mut t = tdb.transaction(&WriteOptions::default(), &options(10));
    t.put(b"a", b"1").unwrap();
    t.set_save_point().unwrap();
    t.put(b"b", b"2").unwrap();
    t.get_for_update(b"c").unwrap();
    assert_eq!(tdb.locked_keys(), 3);
    t.rollback_to_save_point().unwrap();
    assert_eq!(tdb.locked_keys(), 1);
    assert_eq!(t.get(b"b").unwrap(), None);
    drop(t);
    assert_eq!(tdb.locked_keys(), 0);
    assert_eq!(tdb.db().get(b"a").unwrap(), None);
    let mut t = tdb.transaction(&WriteOptions::default(), &options(10));
    t.put(b"a", b"1").unwrap();
    t.commit().unwrap();
    let e = t.put(b"a", b"2").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("already committed"), "{e}");
}

#[test]
fn a_range_deletion_is_refused_by_the_transaction_db() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(dir.path());
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.delete_range(b"a", b"z");
    let e = tdb.write(b, &WriteOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("range deletion"), "{e}");
    assert_eq!(tdb.db().get(b"a").unwrap(), None);
}

#[test]
fn concurrent_transfers_keep_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = Arc::new(open(dir.path()));
    const ACCOUNTS: u64 = 4;
    for a in 0..ACCOUNTS {
        tdb.put(format!("acct{a}").as_bytes(), 100u64.to_le_bytes())
            .unwrap();
    }
    let balance = |v: Option<Vec<u8>>| u64::from_le_bytes(v.unwrap().try_into().unwrap());
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let tdb = &tdb;
            s.spawn(move || {
                let mut rng = strata::internals::Rng::new(thread);
                for _ in 0..200 {
                    let from = format!("acct{}", rng.below(ACCOUNTS)).into_bytes();
                    let to = format!("acct{}", rng.below(ACCOUNTS)).into_bytes();
                    if from == to {
                        continue;
                    }
                    loop {
                        let mut t = tdb.transaction(&WriteOptions::default(), &options(1000));
                        let attempt = (|| {
                            let a = balance(t.get_for_update(&from)?);
                            std::thread::yield_now();
                            let b = balance(t.get_for_update(&to)?);
                            let amount = a.min(rng.below(10));
                            t.put(&from, (a - amount).to_le_bytes())?;
                            t.put(&to, (b + amount).to_le_bytes())?;
                            t.commit()
                        })();
                        match attempt {
                            Ok(()) => break,
                            // Opposite transfers deadlock: one side retries.
                            Err(e) => assert_eq!(e.kind(), ErrorKind::Busy, "{e}"),
                        }
                    }
                }
            });
        }
    });
    let total: u64 = (0..ACCOUNTS)
        .map(|a| balance(tdb.db().get(format!("acct{a}").as_bytes()).unwrap()))
        .sum();
    assert_eq!(total, ACCOUNTS * 100);
    assert_eq!(tdb.locked_keys(), 0);
}

#[test]
fn a_cursor_updates_in_place_under_locks() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(dir.path());
    for i in 0..10u64 {
        tdb.put(format!("k{i}").as_bytes(), i.to_le_bytes())
            .unwrap();
    }
    let mut t = tdb.transaction(&WriteOptions::default(), &options(10));
    {
        let cf = tdb.db().default_cf();
        let mut c = t.cursor_cf(&cf, &strata::ReadOptions::default()).unwrap();
        c.seek_to_first();
        while c.valid() {
            let n = u64::from_le_bytes(c.value().try_into().unwrap());
            if n % 3 == 0 {
                c.delete().unwrap();
            } else {
                c.update((n * 10).to_le_bytes()).unwrap();
                assert_eq!(c.value(), (n * 10).to_le_bytes());
            }
            c.next();
        }
        c.status().unwrap();
        // Backward over the same range sees the changes.
        c.seek_to_last();
        let mut back = Vec::new();
        while c.valid() {
            back.push(u64::from_le_bytes(c.value().try_into().unwrap()));
            c.prev();
        }
        assert_eq!(back, vec![80, 70, 50, 40, 20, 10]);
    }
    assert_eq!(tdb.locked_keys(), 10);
    let mut other = tdb.transaction(&WriteOptions::default(), &options(10));
    assert_eq!(other.put(b"k1", b"x").unwrap_err().kind(), ErrorKind::Busy);
    t.commit().unwrap();
    assert_eq!(tdb.db().get(b"k3").unwrap(), None);
    assert_eq!(
        tdb.db().get(b"k4").unwrap(),
        Some(40u64.to_le_bytes().to_vec())
    );
}

/// `multi_get` in a pessimistic transaction answers each key as `get` does: the
/// transaction's own puts and deletes over the database (a memtable and a table), keys
/// repeated, keys nowhere, and a snapshot that hides later writes.
#[test]
fn multi_get_reads_through_the_transactions_writes() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(dir.path());
    tdb.put(b"in-table", b"t").unwrap();
    tdb.put(b"deleted-by-txn", b"d").unwrap();
    tdb.db().flush().unwrap();
    tdb.put(b"in-memtable", b"m").unwrap();
    let mut snapshot_options = options(100);
    snapshot_options.set_snapshot = true;
    let mut txn = tdb.transaction(&WriteOptions::default(), &snapshot_options);
    txn.put(b"put-by-txn", b"p").unwrap();
    txn.delete(b"deleted-by-txn").unwrap();
    tdb.put(b"after-snapshot", b"late").unwrap();
    let cases: [(&[u8], Option<&[u8]>); 7] = [
        (b"in-table", Some(b"t")),
        (b"in-memtable", Some(b"m")),
        (b"put-by-txn", Some(b"p")),
        (b"deleted-by-txn", None),
        (b"nowhere", None),
        (b"after-snapshot", None),
        (b"in-table", Some(b"t")),
    ];
    let keys: Vec<&[u8]> = cases.iter().map(|(k, _)| *k).collect();
    let got = txn.multi_get(&keys);
    for ((key, want), got) in cases.iter().zip(got) {
        let got = got.unwrap();
        assert_eq!(got.as_deref(), *want, "{}", String::from_utf8_lossy(key));
        assert_eq!(got, txn.get(key).unwrap(), "get and multi_get agree");
    }
    txn.rollback().unwrap();
    let refused = txn.multi_get([b"in-table"]);
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].is_err(),
        "a rolled-back transaction refuses reads"
    );
}
