//! Two-phase commit: prepared transactions survive handles being dropped, reopens and
//! crashes at every file operation, and a committed one is never offered again.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use strata::fs::fault::FaultFs;
use strata::TransactionBase;
use strata::{ErrorKind, Options, TransactionDb, TransactionOptions, WriteOptions};

fn open(dir: &Path) -> TransactionDb {
    let mut options = Options::default();
    options.create_if_missing = true;
    TransactionDb::open(dir, options).unwrap()
}

fn quick() -> TransactionOptions {
    let mut txn_options = TransactionOptions::default();
    txn_options.lock_timeout = Duration::from_millis(20);
    txn_options
}

#[test]
fn a_prepared_transaction_survives_a_reopen_and_commits_once() {
    let dir = tempfile::tempdir().unwrap();
    {
        let tdb = open(dir.path());
        let mut t = tdb.transaction(&WriteOptions::default(), &quick());
        t.put(b"a", b"1").unwrap();
        t.delete(b"b").unwrap();
        t.set_name("xid-1").unwrap();
        t.prepare().unwrap();
        let e = t.put(b"c", b"3").unwrap_err();
        assert!(e.to_string().contains("prepared"), "{e}");
        // Not applied yet.
        assert_eq!(tdb.db().get(b"a").unwrap(), None);
    }
    {
        let tdb = open(dir.path());
        let mut prepared = tdb.prepared_transactions();
        assert_eq!(prepared.len(), 1);
        assert_eq!(prepared[0].name(), Some(&b"xid-1"[..]));
        // Its keys are locked again.
        let mut other = tdb.transaction(&WriteOptions::default(), &quick());
        assert_eq!(other.put(b"a", b"x").unwrap_err().kind(), ErrorKind::Busy);
        // And its name is taken.
        let mut named = tdb.transaction(&WriteOptions::default(), &quick());
        assert!(named.set_name("xid-1").is_err());
        prepared[0].commit().unwrap();
        assert_eq!(tdb.db().get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
        other.put(b"a", b"2").unwrap();
        other.commit().unwrap();
    }
    let tdb = open(dir.path());
    assert!(tdb.prepared_transactions().is_empty());
    assert_eq!(tdb.db().get(b"a").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn a_dropped_prepared_handle_is_parked_and_a_rollback_forgets_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let tdb = open(dir.path());
        let mut t = tdb.transaction(&WriteOptions::default(), &quick());
        t.put(b"k", b"v").unwrap();
        let e = t.prepare().unwrap_err();
        assert!(e.to_string().contains("set_name"), "{e}");
        t.set_name("xid-2").unwrap();
        t.prepare().unwrap();
        drop(t);
        assert_eq!(tdb.locked_keys(), 1);
        let mut again = tdb.prepared_transactions();
        assert_eq!(again.len(), 1);
        drop(again.pop());
        drop(again);
        let mut again = tdb.prepared_transactions();
        again[0].rollback().unwrap();
        assert_eq!(tdb.locked_keys(), 0);
        drop(again);
        tdb.close().unwrap();
    }
    let tdb = open(dir.path());
    assert!(tdb.prepared_transactions().is_empty());
    assert_eq!(tdb.db().get(b"k").unwrap(), None);
}

/// Prepares and commits two named transactions on a fault-injecting file system.
#[test]
fn a_checkpoint_holds_the_transactions_prepared_at_its_moment() {
    let dir = tempfile::tempdir().unwrap();
    let tdb = open(&dir.path().join("db"));
    let mut kept = tdb.transaction(&WriteOptions::default(), &quick());
    kept.put(b"a", b"1").unwrap();
    kept.set_name("kept").unwrap();
    kept.prepare().unwrap();
    let mut done = tdb.transaction(&WriteOptions::default(), &quick());
    done.put(b"b", b"2").unwrap();
    done.set_name("done").unwrap();
    done.prepare().unwrap();
    done.commit().unwrap();
    let cp = dir.path().join("checkpoint");
    tdb.db().checkpoint(&cp).unwrap();
    // Committed in the database after the checkpoint: still prepared in the checkpoint.
    kept.commit().unwrap();
    assert_eq!(tdb.db().get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    drop(kept);
    drop(done);
    drop(tdb);

    let copy = open(&cp);
    assert_eq!(copy.db().get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(copy.db().get(b"a").unwrap(), None);
    let mut prepared = copy.prepared_transactions();
    assert_eq!(prepared.len(), 1);
    assert_eq!(prepared[0].name(), Some(&b"kept"[..]));
    prepared[0].rollback().unwrap();
    drop(prepared);
    drop(copy);
    assert!(open(&cp).prepared_transactions().is_empty());
    // The database itself kept its own commit.
    let tdb = open(&dir.path().join("db"));
    assert!(tdb.prepared_transactions().is_empty());
    assert_eq!(tdb.db().get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
}

fn workload(dir: &Path, fs: &FaultFs) {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.fs = Arc::new(fs.clone());
    let Ok(tdb) = TransactionDb::open(dir, options) else {
        return;
    };
    for (name, key) in [("one", b"k1"), ("two", b"k2")] {
        let mut t = tdb.transaction(&WriteOptions::default(), &quick());
        let ok = t.put(key, name.as_bytes()).is_ok()
            && t.put(b"shared-with-one", name.as_bytes()).is_ok()
            && t.set_name(name).is_ok()
            && t.prepare().is_ok()
            && t.commit().is_ok();
        if !ok {
            return;
        }
    }
}

#[test]
fn crash_at_every_operation_of_prepare_and_commit() {
    let clean = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    workload(&clean.path().join("db"), &fs);
    let total = fs.ops();
    assert!(total > 10, "{total} operations");
    for n in 1..=total {
        for power_cut in [true, false] {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("db");
            let fs = FaultFs::new();
            fs.crash_at(n);
            workload(&dir, &fs);
            if power_cut {
                fs.power_loss().unwrap();
            }
            let context = format!("crash at operation {n} of {total}, power cut {power_cut}");
            if !dir.join("CURRENT").exists() {
                continue; // crashed before the database existed
            }
            let tdb = open(&dir);
            let prepared = tdb.prepared_transactions();
            for (name, key) in [("one", &b"k1"[..]), ("two", b"k2")] {
                let offered = prepared.iter().any(|t| t.name() == Some(name.as_bytes()));
                let applied = tdb.db().get(key).unwrap().is_some();
                assert!(
                    !(offered && applied),
                    "{context}: '{name}' both applied and offered as prepared"
                );
            }
            // A prepared transaction recovered commits whole.
            for mut t in prepared {
                let name = String::from_utf8(t.name().unwrap().to_vec()).unwrap();
                t.commit().unwrap();
                let key = if name == "one" { &b"k1"[..] } else { b"k2" };
                assert_eq!(
                    tdb.db().get(key).unwrap().as_deref(),
                    Some(name.as_bytes()),
                    "{context}"
                );
            }
        }
    }
}
