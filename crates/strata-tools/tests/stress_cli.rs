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
