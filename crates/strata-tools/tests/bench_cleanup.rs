//! A run without --db removes its temporary database however it ends: interrupted by
//! SIGINT or SIGTERM, or with its stdout closed by the reader (`strata bench | head`).

use std::io::BufRead;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Starts `strata bench FLAGS` with its temporary directory in `tmp`.
fn start_bench(tmp: &Path, flags: &[&str], stdout: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("bench")
        .args(flags)
        .env("TMPDIR", tmp)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits up to a minute for `child` to end.
fn wait(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("strata bench did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut text).unwrap();
    text
}

/// The names in `dir`.
fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_signal_mid_run_removes_the_temporary_database() {
    for (name, number) in [("INT", 2), ("TERM", 15)] {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = start_bench(
            tmp.path(),
            &["--benchmarks=fillrandom", "--num=1000000000"],
            Stdio::null(),
        );
        // Mid-run: once the write-ahead log has grown.
        let db = tmp.path().join(format!("strata-bench-{}", child.id()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !std::fs::read_dir(&db).is_ok_and(|d| {
            d.flatten().any(|e| {
                e.file_name().to_string_lossy().ends_with(".log")
                    && e.metadata().is_ok_and(|m| m.len() > 100_000)
            })
        }) {
            assert!(Instant::now() < deadline, "the run did not start writing");
            std::thread::sleep(Duration::from_millis(20));
        }
        let killed = Command::new("kill")
            .args([format!("-{name}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = wait(&mut child);
        assert_eq!(status.signal(), Some(number), "SIG{name}: {status:?}");
        assert!(!db.exists(), "SIG{name} left {}", db.display());
        assert_eq!(entries(tmp.path()), Vec::<String>::new(), "SIG{name}");
    }
}

#[test]
fn a_closed_stdout_ends_the_run_quietly_and_removes_the_temporary_database() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.csv");
    let report_flag = format!("--report_file={}", report.display());
    // Each step runs for a second, so the reader has gone when the first result is printed.
    let mut child = start_bench(
        tmp.path(),
        &[
            "--benchmarks=fillseq,readrandom",
            "--num=1000",
            "--duration=1",
            "--report_interval_seconds=1",
            &report_flag,
        ],
        Stdio::piped(),
    );
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("Engine:"), "{first}");
    // The reader is dropped here, closing the pipe.
    let status = wait(&mut child);
    let stderr = stderr_of(&mut child);
    assert!(status.success(), "{status:?}: {stderr}");
    assert_eq!(stderr, "", "a closed pipe ends the run without a word");
    let csv = std::fs::read_to_string(&report).unwrap();
    assert!(
        !csv.contains("readrandom,"),
        "the run stopped at the first failed write:\n{csv}"
    );
    assert_eq!(entries(tmp.path()), ["report.csv"]);
}
