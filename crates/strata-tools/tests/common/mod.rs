//! Running the `strata` binary from the end-to-end tests.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `strata ARGS`; returns (success, stdout, stderr).
pub fn strata(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `strata bench --db=DB FLAGS`.
#[allow(dead_code)] // not every test binary runs the bench
pub fn bench(db: &std::path::Path, flags: &[&str]) -> (bool, String, String) {
    let db = format!("--db={}", db.display());
    let mut args = vec!["bench", db.as_str()];
    args.extend_from_slice(flags);
    strata(&args)
}

/// A database made by `strata bench FLAGS` in a new temporary directory (kept while the
/// returned guard lives): the guard and the database's path.
#[allow(dead_code)] // not every test binary runs the bench
pub fn bench_db(flags: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (ok, out, err) = bench(&db, flags);
    assert!(ok, "strata bench {flags:?} failed:\n{out}\n{err}");
    (dir, db)
}

/// The engines this build of `strata` has.
#[allow(dead_code)] // not every test binary runs the bench
pub fn engines() -> Vec<&'static str> {
    let mut engines = vec!["strata"];
    if cfg!(feature = "rocksdb") {
        engines.push("rocksdb");
    }
    if cfg!(feature = "lmdb") {
        engines.push("lmdb");
    }
    engines
}

/// Runs `strata ARGS` with `input` on standard input; returns (success, stdout, stderr).
#[allow(dead_code)] // not every test binary reads standard input
pub fn strata_with_input(args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that refuses its arguments may exit before it reads its input: the pipe is
    // closed then, and its output says why.
    match child.stdin.take().unwrap().write_all(input.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
