//! A child process writes with `sync = true` from several threads and is SIGKILLed at a
//! random moment; after reopening, every write the child saw acknowledged must be there.
//!
//! The child is this test binary itself, started with `STRATA_KILL_CHILD_DIR` set, running
//! only the `child_writer` test.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use strata::internals::Rng;
use strata::{Db, Options, WriteOptions};

const THREADS: usize = 4;

fn options() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    // Small memtables so that kills also land around WAL switches.
    options.write_buffer_size = 64 << 10;
    options
}

/// The child: writes `t-<round>-<i>` keys from THREADS threads, printing each acknowledged
/// key on stdout, until killed.
#[test]
fn child_writer() {
    let Ok(dir) = std::env::var("STRATA_KILL_CHILD_DIR") else {
        return; // not running as a child
    };
    let round: u64 = std::env::var("STRATA_KILL_ROUND").unwrap().parse().unwrap();
    let db = Db::open(&dir, options()).unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let db = &db;
            s.spawn(move || {
                let mut sync = WriteOptions::default();
                sync.sync = true;
                for i in 0.. {
                    let key = format!("{t}-{round}-{i:08}");
                    db.put_opt(key.as_bytes(), [b'v'; 100], &sync).unwrap();
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ack {key}").unwrap();
                    out.flush().unwrap();
                }
            });
        }
    });
}

#[test]
fn sigkill_loses_no_acknowledged_sync_write() {
    if std::env::var("STRATA_KILL_CHILD_DIR").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng::new(0x5eed);
    let mut acked_total = Vec::new();
    for round in 0..6 {
        let mut child = Command::new(&exe)
            .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
            .env("STRATA_KILL_CHILD_DIR", dir.path())
            .env("STRATA_KILL_ROUND", round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (first_ack, flowing) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut acked = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(key) = line.strip_prefix("ack ") {
                    if acked.is_empty() {
                        let _ = first_ack.send(());
                    }
                    acked.push(key.to_string());
                }
            }
            acked
        });
        // Kill at a random moment once writes are flowing: after the first acknowledgement
        // (however long a loaded machine takes to start the child), not after a fixed time.
        let start = Instant::now();
        let started = flowing.recv_timeout(Duration::from_secs(120));
        if started.is_ok() {
            std::thread::sleep(Duration::from_millis(rng.below(400)));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let acked = reader.join().unwrap();
        assert!(
            !acked.is_empty(),
            "round {round}: the child acknowledged nothing in {:?}",
            start.elapsed()
        );

        let db = Db::open(dir.path(), options()).unwrap();
        for key in acked.iter().chain(acked_total.iter()) {
            assert_eq!(
                db.get(key.as_bytes()).unwrap().as_deref(),
                Some(&[b'v'; 100][..]),
                "round {round}: acknowledged key {key} lost"
            );
        }
        // Per thread, the keys present form a prefix (writes of one thread are ordered).
        for t in 0..THREADS {
            let prefix = format!("{t}-{round}-");
            let keys: Vec<Vec<u8>> = db
                .range(prefix.as_bytes().to_vec()..)
                .map(|kv| kv.unwrap().0)
                .take_while(|k| k.starts_with(prefix.as_bytes()))
                .collect();
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(
                    k,
                    format!("{prefix}{i:08}").as_bytes(),
                    "round {round}: gap"
                );
            }
        }
        db.close().unwrap();
        acked_total.extend(acked);
    }
}
