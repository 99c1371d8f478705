//! A small SQL shell: opens (or creates) the database in the directory given as the first
//! argument and runs the statements read from standard input, each ended by `;`.
//!
//! ```text
//! echo "CREATE TABLE t (id INT PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');
//!       SELECT * FROM t;" | cargo run -p strata-gluesql --example sql -- /tmp/sqldb
//! ```
//!
//! A `SELECT` prints its rows tab-separated under a header line; other statements print what
//! they did. An error is printed and the shell goes on (exit status 1 at the end).

use std::io::{BufRead, Write};

use gluesql_core::prelude::{Glue, Payload};
use strata_gluesql::StrataStorage;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: sql DB_DIR < statements.sql");
        std::process::exit(2);
    };
    let mut glue = Glue::new(StrataStorage::open(&path)?);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut pending = String::new();
    let mut failed = false;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        pending.push_str(&line);
        pending.push('\n');
        if !line.trim_end().ends_with(';') {
            continue;
        }
        let sql = std::mem::take(&mut pending);
        match glue.execute(&sql) {
            Ok(payloads) => {
                for payload in payloads {
                    print_payload(&mut out, &payload)?;
                }
            }
            Err(e) => {
                failed = true;
                writeln!(out, "error: {e}")?;
            }
        }
    }
    if !pending.trim().is_empty() {
        match glue.execute(&pending) {
            Ok(payloads) => {
                for payload in payloads {
                    print_payload(&mut out, &payload)?;
                }
            }
            Err(e) => {
                failed = true;
                writeln!(out, "error: {e}")?;
            }
        }
    }
    out.flush()?;
    glue.storage.close()?;
    if failed {
        std::process::exit(1);
    }
    Ok(())
}

fn print_payload(out: &mut impl Write, payload: &Payload) -> std::io::Result<()> {
    match payload {
        Payload::Select { labels, rows } => {
            writeln!(out, "{}", labels.join("\t"))?;
            for row in rows {
                let cells: Vec<String> = row.iter().map(String::from).collect();
                writeln!(out, "{}", cells.join("\t"))?;
            }
            Ok(())
        }
        Payload::Insert(n) => writeln!(out, "{n} row(s) inserted"),
        Payload::Update(n) => writeln!(out, "{n} row(s) updated"),
        Payload::Delete(n) => writeln!(out, "{n} row(s) deleted"),
        other => writeln!(out, "{other:?}"),
    }
}
