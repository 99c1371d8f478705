//! SQL under kills: a child process runs transfers, updates of indexed columns, appends and
//! rolled-back transactions against a database until it is SIGKILLed at a random moment;
//! after each kill the database is reopened and checked:
//!
//! - the money is all there (transfers are atomic: both rows or neither);
//! - every operation the child saw committed is there, and the log of operations has no gap
//!   (statements commit in order, each whole);
//! - every index holds exactly one entry per row, with the row's current value, and no entry
//!   without its row.
//!
//! The child is this test binary itself, started with `STRATA_SQL_CRASH_DIR` set and running
//! only `child_workload`.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use gluesql_core::prelude::{Glue, Payload, Value};
use gluesql_core::store::{Index, Store};
use strata::Options;
use strata_gluesql::StrataStorage;

const ACCOUNTS: i64 = 40;
const OPENING_BALANCE: i64 = 100;
const ROUNDS: u64 = 6;

fn open(dir: &str) -> StrataStorage {
    let mut options = Options::default();
    options.create_if_missing = true;
    // Small memtables so that kills land around flushes and WAL switches too.
    options.write_buffer_size = 64 << 10;
    StrataStorage::open_with(dir, options).unwrap()
}

/// xorshift64*: enough randomness for choosing operations, seeded per round.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn select(glue: &mut Glue<StrataStorage>, sql: &str) -> Vec<Vec<Value>> {
    match glue.execute(sql).unwrap().pop() {
        Some(Payload::Select { rows, .. }) => rows,
        other => panic!("{sql}: not a select: {other:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::I64(n) => *n,
        other => panic!("not an I64: {other:?}"),
    }
}

/// The child: sets the tables up (one transaction) if they are not there, then runs
/// operations numbered after the last one logged, printing `ack N` after each commit.
#[test]
fn child_workload() {
    let Ok(dir) = std::env::var("STRATA_SQL_CRASH_DIR") else {
        return; // not running as a child
    };
    let seed: u64 = std::env::var("STRATA_SQL_CRASH_SEED")
        .unwrap()
        .parse()
        .unwrap();
    let mut rng = Rng(seed | 1);
    let mut glue = Glue::new(open(&dir));
    let exists = glue.storage.fetch_schema("acct").unwrap().is_some();
    if !exists {
        let mut setup = String::from(
            "BEGIN;
             CREATE TABLE acct (id INTEGER PRIMARY KEY, owner TEXT, balance INTEGER);
             CREATE INDEX acct_owner ON acct (owner);
             CREATE INDEX acct_balance ON acct (balance);
             CREATE TABLE oplog (n INTEGER, kind TEXT);
             CREATE INDEX oplog_n ON oplog (n);",
        );
        for id in 0..ACCOUNTS {
            setup.push_str(&format!(
                "INSERT INTO acct VALUES ({id}, 'o{}', {OPENING_BALANCE});",
                id % 7
            ));
        }
        setup.push_str("COMMIT;");
        glue.execute(&setup).unwrap();
    }
    let rows = select(&mut glue, "SELECT MAX(n) FROM oplog");
    let mut n = match &rows[0][0] {
        Value::Null => 0,
        v => int(v) + 1,
    };
    let stdout = std::io::stdout();
    loop {
        let (a, b) = (rng.below(ACCOUNTS as u64), rng.below(ACCOUNTS as u64));
        let amount = rng.below(30);
        let owner = rng.below(11);
        let sql = match rng.below(4) {
            0 | 1 => format!(
                "BEGIN;
                 UPDATE acct SET balance = balance - {amount}, owner = 'o{owner}' WHERE id = {a};
                 UPDATE acct SET balance = balance + {amount} WHERE id = {b};
                 INSERT INTO oplog VALUES ({n}, 'transfer');
                 COMMIT;"
            ),
            2 => format!(
                "BEGIN;
                 UPDATE acct SET owner = 'o{owner}' WHERE balance > {amount};
                 INSERT INTO oplog VALUES ({n}, 'rename');
                 COMMIT;"
            ),
            _ => {
                // Never committed: must leave no trace.
                glue.execute(
                    "BEGIN; UPDATE acct SET balance = 0, owner = 'gone'; \
                     INSERT INTO oplog VALUES (-1, 'rolled back'); ROLLBACK;",
                )
                .unwrap();
                format!("INSERT INTO oplog VALUES ({n}, 'append');")
            }
        };
        glue.execute(&sql).unwrap();
        let mut out = stdout.lock();
        writeln!(out, "ack {n}").unwrap();
        out.flush().unwrap();
        n += 1;
    }
}

/// Every index of `table` against its rows: one entry per row, ordered, each naming a row
/// that exists.
fn check_indexes(storage: &StrataStorage, table: &str) {
    let schema = storage.fetch_schema(table).unwrap().unwrap();
    let rows: Vec<_> = storage
        .scan_data(table)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for index in &schema.indexes {
        let indexed: Vec<_> = storage
            .scan_indexed_data(table, &index.name, Some(true), None)
            .unwrap()
            .map(|r| r.unwrap_or_else(|e| panic!("index {}: {e}", index.name)))
            .collect();
        assert_eq!(
            indexed.len(),
            rows.len(),
            "index {} has {} entries for {} rows",
            index.name,
            indexed.len(),
            rows.len()
        );
        let mut from_index: Vec<_> = indexed.clone();
        from_index.sort_by(|x, y| x.0.cmp(&y.0));
        let mut from_rows = rows.clone();
        from_rows.sort_by(|x, y| x.0.cmp(&y.0));
        assert_eq!(
            from_index, from_rows,
            "index {} and the rows differ",
            index.name
        );
    }
}

#[test]
fn sql_survives_kills_with_rows_and_indexes_consistent() {
    if std::env::var("STRATA_SQL_CRASH_DIR").is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_owned();
    let exe = std::env::current_exe().unwrap();
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("seed {seed}");
    let mut rng = Rng(seed | 1);
    let mut acked_total = BTreeSet::new();
    for round in 0..ROUNDS {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "child_workload",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("STRATA_SQL_CRASH_DIR", &path)
            .env("STRATA_SQL_CRASH_SEED", (seed ^ round).to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut acked = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(n) = line.strip_prefix("ack ") {
                    acked.push(n.parse::<i64>().unwrap());
                }
            }
            acked
        });
        let start = Instant::now();
        std::thread::sleep(Duration::from_millis(150 + rng.below(400)));
        let exited = child.try_wait().unwrap();
        child.kill().unwrap(); // SIGKILL
        let output = child.wait_with_output().unwrap();
        assert!(
            exited.is_none(),
            "round {round}: the child died by itself: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let acked = reader.join().unwrap();
        println!(
            "round {round}: {} operations acknowledged in {:?}",
            acked.len(),
            start.elapsed()
        );
        acked_total.extend(acked);

        let mut glue = Glue::new(open(&path));
        if glue.storage.fetch_schema("acct").unwrap().is_none() {
            assert!(
                acked_total.is_empty(),
                "round {round}: tables lost after acknowledged operations"
            );
            glue.storage.close().unwrap();
            continue;
        }
        let total = select(&mut glue, "SELECT SUM(balance), COUNT(*) FROM acct");
        assert_eq!(
            (int(&total[0][0]), int(&total[0][1])),
            (ACCOUNTS * OPENING_BALANCE, ACCOUNTS),
            "round {round}: money or accounts lost"
        );
        let logged: Vec<i64> = select(&mut glue, "SELECT n FROM oplog")
            .iter()
            .map(|r| int(&r[0]))
            .collect();
        let logged_set: BTreeSet<i64> = logged.iter().copied().collect();
        assert_eq!(
            logged_set.len(),
            logged.len(),
            "round {round}: an operation logged twice"
        );
        assert_eq!(
            logged_set,
            (0..logged.len() as i64).collect(),
            "round {round}: a gap in the log (or a rolled-back row)"
        );
        for n in &acked_total {
            assert!(
                logged_set.contains(n),
                "round {round}: acknowledged operation {n} lost"
            );
        }
        check_indexes(&glue.storage, "acct");
        check_indexes(&glue.storage, "oplog");
        glue.storage.close().unwrap();
    }
    assert!(
        !acked_total.is_empty(),
        "no operation was acknowledged in {ROUNDS} rounds"
    );
}
