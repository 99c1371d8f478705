//! `strata stress` end to end: a plain run and a crash run pass, and a database that lost a
//! write is caught.

mod common;

fn stress(flags: &[&str]) -> (bool, String, String) {
    let mut args = vec!["stress"];
    args.extend_from_slice(flags);
    common::strata(&args)
}

#[test]
fn a_plain_run_verifies_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    // In a directory that does not exist yet: it is made, with the expected-state file.
    let db = format!("--db={}", dir.path().join("new/db").display());
    let (ok, out, err) = stress(&[&db, "--duration=2", "--keys=2000", "--threads=3"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("reopened and verified 2000 keys"), "{out}");
}

#[test]
fn runs_with_blob_files_verify_with_values_on_both_sides_of_the_blob_size() {
    // Values of 16 to 300 bytes: with --min_blob_size=150 about half go to blob files.
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let blobs = [
        "--enable_blob_files",
        "--min_blob_size=150",
        "--blob_file_size=20000",
        "--enable_blob_garbage_collection",
        "--blob_garbage_collection_age_cutoff=0.5",
    ];
    let mut flags = vec![db.as_str(), "--duration=2", "--keys=2000", "--threads=3"];
    flags.extend(blobs);
    let (ok, out, err) = stress(&flags);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains(
            "blob files: values of 150 bytes or more, separated at flush, files cut at 20000 bytes, garbage \
             collection of the oldest 50% of the files, forced at 100% garbage\n"
        ),
        "{out}"
    );
    assert!(out.contains("reopened and verified 2000 keys"), "{out}");
    let blob_files = std::fs::read_dir(dir.path().join("db"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "blob")
        })
        .count();
    assert!(blob_files > 0, "the run wrote no blob file");

    let db = format!("--db={}", dir.path().join("crash").display());
    let mut flags = vec![
        db.as_str(),
        "--crash",
        "--duration=4",
        "--kill_interval_ms=700",
        "--keys=2000",
    ];
    flags.extend(blobs);
    let (ok, out, err) = stress(&flags);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("crash test passed"), "{out}");

    let db = format!("--db={}", dir.path().join("refused").display());
    let (ok, _, err) = stress(&[
        &db,
        "--duration=1",
        "--blob_garbage_collection_force_threshold=1.5",
    ]);
    assert!(
        !ok && err.contains("blob_garbage_collection_force_threshold is 1.5"),
        "{err}"
    );
}

#[test]
fn crash_mode_kills_and_verifies_with_universal_compaction_and_sync() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (ok, out, err) = stress(&[
        &db,
        "--crash",
        "--duration=6",
        "--kill_interval_ms=800",
        "--keys=2000",
        "--compaction_style=1",
        "--sync=1",
        "--compression_type=lz4",
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("crash test passed"), "{out}");
    let runs: u64 = out
        .split("passed: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(runs >= 3, "{out}");
}

#[test]
fn a_lost_write_is_reported_and_the_evidence_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    let (ok, out, err) = stress(&[&db, "--duration=1", "--keys=500", "--ops=put=1"]);
    assert!(ok, "{out}\n{err}");
    // Lose a write behind the tester's back: delete a key the expected state says is live
    // (one of the default family's: key k lives in family k % 3).
    {
        let options = strata::Options::default();
        let names = strata::Db::list_cfs(&path, &options).unwrap();
        assert_eq!(names.len(), 3, "{names:?}");
        let families = names.iter().map(|n| (n.as_str(), options.cf_options()));
        let d = strata::Db::open_cf(&path, options.clone(), families).unwrap();
        let victim = (0..500u64)
            .step_by(3)
            .map(|k| format!("k{k:08}").into_bytes())
            .find(|k| d.get(k).unwrap().is_some())
            .unwrap();
        d.delete(&victim).unwrap();
        d.close().unwrap();
    }
    let (ok, out, err) = stress(&[&db, "--duration=1", "--keys=500"]);
    assert!(!ok, "{out}");
    assert!(err.contains("holds value id 0; expected"), "{err}");
    assert!(path.exists() && dir.path().join("db.expected").exists());
}

#[test]
fn a_closed_stdout_ends_a_run_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["stress", &db, "--duration=1", "--keys=500"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before the first line
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(status.success(), "{status}: {err}");
}

/// A mix heavy in range deletions (alone and in batches) passes its checks, and a key space
/// the key format cannot sort is refused naming the flag.
#[test]
fn range_deletions_are_checked_and_an_unsortable_key_space_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (ok, out, err) = stress(&[
        &db,
        "--duration=2",
        "--keys=1000",
        "--ops=put=10,merge=3,delete_range=10,batch=10,get=10,iter=5,snapshot=2",
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("reopened and verified 1000 keys"), "{out}");
    let db = format!("--db={}", dir.path().join("big").display());
    let (ok, _, err) = stress(&[&db, "--duration=1", "--keys=100000001"]);
    assert!(
        !ok && err.contains("--keys must be at most 100000000"),
        "{err}"
    );
    assert!(
        !dir.path().join("big").exists(),
        "a refused run creates nothing"
    );
}

/// The number after `label` in `out` (e.g. "deadlocks" in "retried after 3 conflicts, 2
/// deadlocks": the word before it).
fn count_before(out: &str, label: &str) -> u64 {
    let at = out
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {out}"));
    out[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.trim_start_matches('(').parse().ok())
        .unwrap_or_else(|| panic!("no count before {label:?} in {out}"))
}

/// The number after `label` (e.g. "pessimistic" in "(pessimistic 12, ...").
fn count_after(out: &str, label: &str) -> u64 {
    out.split(label)
        .nth(1)
        .and_then(|s| {
            s.split(|c: char| !c.is_ascii_digit())
                .find(|w| !w.is_empty())
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count after {label:?} in {out}"))
}

/// A bank run: every kind of transaction commits transfers, few accounts make them collide
/// (conflicts, deadlocks or lock timeouts, each retried), and the balances verify after
/// reopening.
#[test]
fn a_txn_run_moves_money_in_every_kind_of_transaction_and_verifies_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (ok, out, err) = stress(&[
        &db,
        "--txn",
        "--duration=3",
        "--accounts=8",
        "--threads=4",
        "--column_families=2",
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("reopened and verified 8 accounts"), "{out}");
    for kind in ["pessimistic ", "optimistic ", "two-phase "] {
        assert!(count_after(&out, kind) > 0, "no {kind}transfer: {out}");
    }
    let collisions = count_before(&out, " conflicts")
        + count_before(&out, " deadlocks")
        + count_before(&out, " lock timeouts");
    assert!(collisions > 0, "{out}");
    // A second run goes on from the first one's ledger.
    let (ok, out, err) = stress(&[
        &db,
        "--txn",
        "--duration=1",
        "--accounts=8",
        "--threads=4",
        "--column_families=2",
        "--txn_kind=optimistic",
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("verified 8 accounts before the run"), "{out}");
}

/// Kills between prepare and commit leave prepared transactions; each recovery checks them
/// and the balances, resolves them, and checks again.
#[test]
fn txn_crash_mode_kills_verifies_and_resolves_prepared_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let (ok, out, err) = stress(&[
        &db,
        "--txn",
        "--crash",
        "--duration=8",
        "--kill_interval_ms=800",
        "--accounts=200",
        "--two_phase_one_in=2",
        "--compaction_style=1",
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("crash test passed"), "{out}");
    assert!(count_after(&out, "passed: ") >= 3, "{out}");
    assert!(count_before(&out, " transfers committed") > 0, "{out}");
    assert!(out.contains("prepared transactions recovered"), "{out}");
}

/// A transfer the database lost (its thread's sequence key set back) and money moved behind
/// the ledger's back are both found, and the evidence kept.
#[test]
fn a_lost_transfer_and_moved_money_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    let flags = [
        db.as_str(),
        "--txn",
        "--duration=1",
        "--accounts=30",
        "--threads=2",
    ];
    let (ok, out, err) = stress(&flags);
    assert!(ok, "{out}\n{err}");
    let tamper = |f: &dyn Fn(&strata::Db)| {
        let options = strata::Options::default();
        let names = strata::Db::list_cfs(&path, &options).unwrap();
        let families = names.iter().map(|n| (n.as_str(), options.cf_options()));
        let d = strata::Db::open_cf(&path, options.clone(), families).unwrap();
        f(&d);
        d.close().unwrap();
    };
    tamper(&|d| {
        let seq = u64::from_le_bytes(d.get(b"s00000000").unwrap().unwrap().try_into().unwrap());
        assert!(seq > 0, "thread 0 made no transfer");
        d.put(b"s00000000", (seq - 1).to_le_bytes()).unwrap();
    });
    let (ok, out, err) = stress(&flags);
    assert!(!ok, "{out}");
    assert!(err.contains("thread 0: acknowledged transfer"), "{err}");
    assert!(err.contains("is missing"), "{err}");
    // Put it back, then move one unit between two accounts of the default family.
    tamper(&|d| {
        let seq = u64::from_le_bytes(d.get(b"s00000000").unwrap().unwrap().try_into().unwrap());
        d.put(b"s00000000", (seq + 1).to_le_bytes()).unwrap();
        let get = |k: &[u8]| i64::from_le_bytes(d.get(k).unwrap().unwrap().try_into().unwrap());
        let (a, b) = (get(b"k00000000"), get(b"k00000003"));
        let (from, to, fb, tb) = if a > 0 {
            (b"k00000000", b"k00000003", a, b)
        } else {
            (b"k00000003", b"k00000000", b, a)
        };
        d.put(from, (fb - 1).to_le_bytes()).unwrap();
        d.put(to, (tb + 1).to_le_bytes()).unwrap();
    });
    let (ok, out, err) = stress(&flags);
    assert!(!ok, "{out}");
    assert!(
        err.contains("account 0 holds") || err.contains("account 3 holds"),
        "{err}"
    );
    assert!(path.exists() && dir.path().join("db.expected").exists());
}

/// Flags a bank cannot honour, and state it cannot use, are refused naming them; a refused
/// run creates nothing and changes nothing.
#[test]
fn txn_flags_it_cannot_honour_and_foreign_state_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("new").display());
    for (flags, words) in [
        (&["--txn", "--keys=50"][..], &["--txn", "--keys"][..]),
        (&["--txn", "--ops=put=1"], &["--txn", "--ops"]),
        (
            &["--txn", "--min_value_size=8"],
            &["--txn", "--min_value_size"],
        ),
        (
            &["--txn", "--merge_operator=uint64add"],
            &["--txn", "--merge_operator"],
        ),
        (&["--accounts=50"], &["--txn"]),
        (&["--txn", "--accounts=3"], &["--accounts must be from 4"]),
        (
            &["--txn", "--accounts=1", "--txn_kind=optimistic"],
            &["--accounts must be from 2"],
        ),
        (&["--txn", "--txn_kind=both"], &["--txn_kind=both"]),
        (&["--txn", "--two_phase_one_in=0"], &["--two_phase_one_in"]),
        (
            &["--txn", "--crash", "--sync_fault_injection"],
            &["--sync_fault_injection", "--sync=1"],
        ),
        (
            &[
                "--txn",
                "--crash",
                "--sync_fault_injection",
                "--sync=1",
                "--disable_wal",
            ],
            &["--txn", "--disable_wal"],
        ),
        (&["--txn", "--prefix_size=4"], &["--txn", "--prefix_size"]),
    ] {
        let mut args = vec![db.as_str(), "--duration=1"];
        args.extend_from_slice(flags);
        let (ok, out, err) = stress(&args);
        assert!(!ok, "{flags:?}: {out}");
        for w in words {
            assert!(err.contains(w), "{flags:?}: {err}");
        }
        assert!(
            !dir.path().join("new").exists(),
            "{flags:?} created the database"
        );
    }
    // A database of the plain test, and its expected-state file.
    let plain = dir.path().join("plain");
    let pdb = format!("--db={}", plain.display());
    let (ok, out, err) = stress(&[&pdb, "--duration=1", "--keys=100"]);
    assert!(ok, "{out}\n{err}");
    let (ok, _, err) = stress(&[&pdb, "--txn", "--duration=1"]);
    assert!(!ok && err.contains("is not one of a --txn run"), "{err}");
    let other = format!(
        "--expected_state={}",
        dir.path().join("bank.expected").display()
    );
    let (ok, _, err) = stress(&[&pdb, &other, "--txn", "--duration=1"]);
    assert!(!ok && err.contains("holds data"), "{err}");
    assert!(!dir.path().join("bank.expected").exists());
    // A bank's ledger with other flags.
    let bank = format!("--db={}", dir.path().join("bank").display());
    let (ok, out, err) = stress(&[
        &bank,
        "--txn",
        "--duration=1",
        "--accounts=20",
        "--threads=3",
    ]);
    assert!(ok, "{out}\n{err}");
    let (ok, _, err) = stress(&[
        &bank,
        "--txn",
        "--duration=1",
        "--accounts=20",
        "--threads=2",
    ]);
    assert!(
        !ok && err.contains("--threads=3") && err.contains("--threads=2"),
        "{err}"
    );
}
