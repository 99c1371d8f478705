//! A sysbench-like SQL workload run through the same GlueSQL engine over three storages:
//! Strata (this crate), GlueSQL's redb storage and its sled storage. Built only with the
//! `bench` feature (which brings redb and sled in); `scripts/sql-bench.sh` runs it.
//!
//! ```text
//! cargo run --release -p strata-gluesql --features bench --example sql_bench -- \
//!     --rows 10000 --ops 2000 --dir /tmp/sqlbench [--storages strata,redb,sled]
//! ```
//!
//! Table `sbtest (id INTEGER PRIMARY KEY, k INTEGER, c TEXT, pad TEXT)` with an index on `k`,
//! loaded with `--rows` rows in transactions of 1,000; then each operation runs `--ops` times
//! with keys from a fixed-seed generator (the same sequence for every storage):
//!
//! | operation    | SQL                                                                |
//! | ------------ | ------------------------------------------------------------------ |
//! | point_select | `SELECT c FROM sbtest WHERE id = ?`                                |
//! | range_select | `SELECT c FROM sbtest WHERE k >= ? AND k < ? + 100` (via the index)|
//! | index_lookup | `SELECT id FROM sbtest WHERE k = ?`                                |
//! | update_index | `UPDATE sbtest SET k = k + 1 WHERE id = ?`                         |
//! | update_plain | `UPDATE sbtest SET c = ? WHERE id = ?`                             |
//! | insert       | `INSERT INTO sbtest VALUES (...)` (new ids)                        |
//! | mix          | `BEGIN`, 10 point selects, 1 range, 1 index update, 1 plain update,|
//! |              | 1 delete, 1 insert, `COMMIT` (one op = one transaction)            |
//!
//! GlueSQL's redb storage implements no index (0.20.0), so on it the `k` operations are full
//! scans; the bench says so when it starts.
//!
//! Printed per storage and operation: operations per second, and the bytes the process wrote
//! during it (`wchar` of /proc/self/io: every write call, background threads included).

use std::time::Instant;

use gluesql_core::prelude::{Glue, Payload};
use gluesql_core::store::{GStore, GStoreMut, Planner};

struct Args {
    rows: u64,
    ops: u64,
    dir: std::path::PathBuf,
    storages: Vec<String>,
}

fn parse_args() -> Args {
    let mut args = Args {
        rows: 10_000,
        ops: 2_000,
        dir: std::env::temp_dir().join("strata-sql-bench"),
        storages: vec!["strata".into(), "redb".into(), "sled".into()],
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--rows" => args.rows = value.parse().unwrap_or_else(|_| usage("--rows N")),
            "--ops" => args.ops = value.parse().unwrap_or_else(|_| usage("--ops N")),
            "--dir" => args.dir = value.into(),
            "--storages" => args.storages = value.split(',').map(str::to_owned).collect(),
            _ => usage(&format!("unknown flag {flag}")),
        }
    }
    args
}

fn usage(problem: &str) -> ! {
    eprintln!("{problem}\nusage: sql_bench [--rows N] [--ops N] [--dir DIR] [--storages strata,redb,sled]");
    std::process::exit(2);
}

/// Bytes this process has passed to write calls so far.
fn bytes_written() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("wchar: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// A fixed-seed generator, so that every storage sees the same keys.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

fn text(rng: &mut Rng, len: usize) -> String {
    (0..len)
        .map(|_| char::from(b'a' + rng.below(26) as u8))
        .collect()
}

/// One operation of the workload: the session, the key generator, the next new id.
type Op<'a, T> = dyn FnMut(&mut Glue<T>, &mut Rng, &mut u64) + 'a;

fn run<T: GStore + GStoreMut + Planner>(name: &str, glue: &mut Glue<T>, args: &Args) {
    let exec = |glue: &mut Glue<T>, sql: &str| -> Vec<Payload> {
        glue.execute(sql)
            .unwrap_or_else(|e| panic!("{name}: {sql}: {e}"))
    };
    let mut rng = Rng(0x5eed_5eed);
    exec(
        glue,
        "CREATE TABLE sbtest (id INTEGER PRIMARY KEY, k INTEGER, c TEXT, pad TEXT)",
    );
    // GlueSQL's redb storage has no indexes: there `k` lookups scan the table.
    if let Err(e) = glue.execute("CREATE INDEX k_idx ON sbtest (k)") {
        println!("{name:<7} no index on k ({e}): range_select and index_lookup scan the table");
    }
    let report = |op: &str, count: u64, start: Instant, written: u64| {
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name:<7} {op:<13} {:>10.0} ops/s {:>12} bytes written",
            count as f64 / secs,
            bytes_written() - written
        );
    };

    let (start, written) = (Instant::now(), bytes_written());
    let mut id = 0;
    while id < args.rows {
        let end = (id + 1000).min(args.rows);
        let values: Vec<String> = (id..end)
            .map(|i| {
                format!(
                    "({i}, {}, '{}', '{}')",
                    rng.below(args.rows),
                    text(&mut rng, 60),
                    text(&mut rng, 40)
                )
            })
            .collect();
        exec(
            glue,
            &format!(
                "BEGIN; INSERT INTO sbtest VALUES {}; COMMIT;",
                values.join(",")
            ),
        );
        id = end;
    }
    report("load", args.rows, start, written);
    let mut next_id = args.rows;

    let ops: [(&str, &mut Op<'_, T>); 7] = [
        ("point_select", &mut |g, r, _| {
            exec(
                g,
                &format!("SELECT c FROM sbtest WHERE id = {}", r.below(args.rows)),
            );
        }),
        ("range_select", &mut |g, r, _| {
            let k = r.below(args.rows);
            exec(
                g,
                &format!("SELECT c FROM sbtest WHERE k >= {k} AND k < {}", k + 100),
            );
        }),
        ("index_lookup", &mut |g, r, _| {
            exec(
                g,
                &format!("SELECT id FROM sbtest WHERE k = {}", r.below(args.rows)),
            );
        }),
        ("update_index", &mut |g, r, _| {
            exec(
                g,
                &format!(
                    "UPDATE sbtest SET k = k + 1 WHERE id = {}",
                    r.below(args.rows)
                ),
            );
        }),
        ("update_plain", &mut |g, r, _| {
            let c = text(r, 60);
            exec(
                g,
                &format!(
                    "UPDATE sbtest SET c = '{c}' WHERE id = {}",
                    r.below(args.rows)
                ),
            );
        }),
        ("insert", &mut |g, r, next| {
            let (k, c, pad) = (r.below(args.rows), text(r, 60), text(r, 40));
            exec(
                g,
                &format!("INSERT INTO sbtest VALUES ({next}, {k}, '{c}', '{pad}')"),
            );
            *next += 1;
        }),
        ("mix", &mut |g, r, next| {
            let mut sql = String::from("BEGIN;");
            for _ in 0..10 {
                sql.push_str(&format!(
                    "SELECT c FROM sbtest WHERE id = {};",
                    r.below(args.rows)
                ));
            }
            let k = r.below(args.rows);
            sql.push_str(&format!(
                "SELECT c FROM sbtest WHERE k >= {k} AND k < {};",
                k + 100
            ));
            sql.push_str(&format!(
                "UPDATE sbtest SET k = k + 1 WHERE id = {};",
                r.below(args.rows)
            ));
            sql.push_str(&format!(
                "UPDATE sbtest SET c = '{}' WHERE id = {};",
                text(r, 60),
                r.below(args.rows)
            ));
            sql.push_str(&format!(
                "DELETE FROM sbtest WHERE id = {};",
                r.below(args.rows)
            ));
            sql.push_str(&format!(
                "INSERT INTO sbtest VALUES ({next}, {k}, '{}', '{}');",
                text(r, 60),
                text(r, 40)
            ));
            *next += 1;
            sql.push_str("COMMIT;");
            exec(g, &sql);
        }),
    ];
    for (op, f) in ops {
        let (start, written) = (Instant::now(), bytes_written());
        for _ in 0..args.ops {
            f(glue, &mut rng, &mut next_id);
        }
        report(op, args.ops, start, written);
    }
}

fn main() {
    let args = parse_args();
    for storage in &args.storages {
        let dir = args.dir.join(storage);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the bench directory");
        match storage.as_str() {
            "strata" => {
                let mut glue = Glue::new(
                    strata_gluesql::StrataStorage::open(dir.join("db")).expect("open strata"),
                );
                run("strata", &mut glue, &args);
                glue.storage.close().expect("close strata");
            }
            "redb" => {
                let storage =
                    gluesql_redb_storage::RedbStorage::new(dir.join("db.redb")).expect("open redb");
                run("redb", &mut Glue::new(storage), &args);
            }
            // Deprecated upstream (to go in GlueSQL 0.21) but still the sled storage of 0.20.
            #[expect(deprecated, reason = "the sled storage is one of the two compared")]
            "sled" => {
                let storage =
                    gluesql_sled_storage::SledStorage::new(dir.join("db")).expect("open sled");
                run("sled", &mut Glue::new(storage), &args);
            }
            other => usage(&format!("unknown storage {other}")),
        }
    }
}
