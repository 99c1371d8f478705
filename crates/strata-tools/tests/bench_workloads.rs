//! `strata bench`'s workload steps end to end, at small sizes: YCSB's load and core
//! workloads (operation counts, each mix's proportions, the records they leave), the
//! expanding range's intervals, and the databases and flags they refuse.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{bench, engines};

/// What the report says of one step: its result line's operation count and message, and
/// per operation type the count and whether any found nothing.
#[derive(Debug, Default)]
struct StepReport {
    ops: u64,
    message: String,
    types: BTreeMap<String, (u64, bool)>,
}

/// The workload steps of a run's output, by name.
fn steps(stdout: &str) -> BTreeMap<String, StepReport> {
    let mut steps = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in stdout.lines() {
        let Some((name, rest)) = line.split_once(" : ") else {
            continue;
        };
        let name = name.trim();
        if !name.is_empty() {
            if !rest.contains("micros/op") {
                continue;
            }
            let words: Vec<&str> = rest.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "operations;").unwrap();
            let report = StepReport {
                ops: words[at - 1].parse().unwrap(),
                message: rest.split_once("MB/s").map_or("", |(_, m)| m).trim().into(),
                ..StepReport::default()
            };
            steps.insert(name.to_string(), report);
            current = Some(name.to_string());
            continue;
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        let Some(step) = current.as_ref().and_then(|c| steps.get_mut(c)) else {
            continue;
        };
        // The table: `READ  count  share%  ops/s  p50 p99 p99.9 max [(N found nothing)]`.
        if words.len() >= 8 && words[2].ends_with('%') && words[0] != "operation" {
            if let Ok(count) = words[1].parse() {
                let nothing = rest.contains("found nothing");
                step.types.insert(words[0].to_string(), (count, nothing));
            }
        }
    }
    steps
}

/// The WORKLOAD marker's facts.
fn marker(db: &Path) -> (String, BTreeMap<String, String>) {
    let text = std::fs::read_to_string(db.join("WORKLOAD")).unwrap();
    let mut lines = text.lines();
    let workload = lines.next().unwrap().to_string();
    let facts = lines
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (workload, facts)
}

/// `count` of `total` operations is within 5 standard deviations of a share `p` (percent).
fn near_share(count: u64, total: u64, p: u64) -> bool {
    let p = p as f64 / 100.0;
    let expected = total as f64 * p;
    let sd = (total as f64 * p * (1.0 - p)).sqrt();
    (count as f64 - expected).abs() <= 5.0 * sd + 0.5
}

#[test]
fn ycsb_workloads_run_their_published_mixes_on_every_engine() {
    const RECORDS: u64 = 1000;
    const OPERATIONS: u64 = 3000;
    for engine in engines() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let (ok, out, err) = bench(
            &db,
            &[
                &format!("--engine={engine}"),
                "--benchmarks=ycsb_load,ycsb_a,ycsb_b,ycsb_c,ycsb_d,ycsb_e,ycsb_f",
                &format!("--ycsb_records={RECORDS}"),
                &format!("--ycsb_operations={OPERATIONS}"),
                "--ycsb_fieldcount=4",
                "--ycsb_fieldlength=25",
                "--threads=2",
            ],
        );
        assert!(ok, "{engine}:\n{out}\n{err}");
        let steps = steps(&out);
        let load = &steps["ycsb_load"];
        assert_eq!(load.ops, RECORDS, "{engine}");
        assert_eq!(load.types["INSERT"], (RECORDS, false), "{engine}");
        assert!(
            load.message.contains("records:1000 of 4 fields x 25 bytes"),
            "{}",
            load.message
        );
        // (step, [(type, percent)]): the workload files' proportions.
        let mixes: [(&str, &[(&str, u64)]); 6] = [
            ("ycsb_a", &[("READ", 50), ("UPDATE", 50)]),
            ("ycsb_b", &[("READ", 95), ("UPDATE", 5)]),
            ("ycsb_c", &[("READ", 100)]),
            ("ycsb_d", &[("READ", 95), ("INSERT", 5)]),
            ("ycsb_e", &[("SCAN", 95), ("INSERT", 5)]),
            ("ycsb_f", &[("READ", 50), ("READ-MODIFY-WRITE", 50)]),
        ];
        let mut records = RECORDS;
        for (step, mix) in mixes {
            let report = &steps[step];
            assert_eq!(report.ops, OPERATIONS, "{engine} {step}");
            let counted: u64 = report.types.values().map(|t| t.0).sum();
            assert_eq!(counted, OPERATIONS, "{engine} {step}: {:?}", report.types);
            assert_eq!(
                report.types.len(),
                mix.len(),
                "{engine} {step}: {:?}",
                report.types
            );
            for &(op, percent) in mix {
                let (count, nothing) = report.types[op];
                assert!(
                    near_share(count, OPERATIONS, percent),
                    "{engine} {step}: {count} {op} of {OPERATIONS}, expected {percent}%"
                );
                // Every key chosen is one inserted: reads find their records.
                assert!(!nothing, "{engine} {step}: some {op} found nothing");
            }
            records += report.types.get("INSERT").map_or(0, |t| t.0);
            assert!(
                report.message.contains(&format!("records:{records} ")),
                "{engine} {step}: {}",
                report.message
            );
        }
        assert!(steps["ycsb_d"].message.contains("latest"));
        assert!(steps["ycsb_a"].message.contains("scrambled zipfian"));
        assert_eq!(marker(&db).1["records"], records.to_string(), "{engine}");
    }
}

#[test]
fn the_workload_marker_records_the_ycsb_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let flags = ["--ycsb_records=300", "--ycsb_operations=400"];
    let (ok, out, err) = bench(
        &db,
        &[&["--benchmarks=ycsb_load,ycsb_d"][..], &flags].concat(),
    );
    assert!(ok, "{out}\n{err}");
    let inserts = steps(&out)["ycsb_d"].types["INSERT"].0;
    let (workload, facts) = marker(&db);
    assert_eq!(workload, "ycsb");
    assert_eq!(facts["records"], (300 + inserts).to_string());
    assert_eq!(facts["fieldcount"], "10");
    assert_eq!(facts["fieldlength"], "100");
    // A later run on the same database reads the records the marker counts, inserts included.
    let (ok, out, err) = bench(
        &db,
        &[&["--benchmarks=ycsb_c", "--use_existing_db"][..], &flags].concat(),
    );
    assert!(ok, "{out}\n{err}");
    let c = &steps(&out)["ycsb_c"];
    assert_eq!(c.types["READ"], (400, false));
    assert!(
        c.message.contains(&format!("records:{} ", 300 + inserts)),
        "{}",
        c.message
    );
}

#[test]
fn ycsb_updates_in_transactions_count_their_commits() {
    for txn in ["--transaction_db", "--optimistic_transaction_db"] {
        let dir = tempfile::tempdir().unwrap();
        let (ok, out, err) = bench(
            &dir.path().join("db"),
            &[
                "--benchmarks=ycsb_load,ycsb_a",
                "--ycsb_records=200",
                "--ycsb_operations=600",
                "--threads=2",
                txn,
            ],
        );
        assert!(ok, "{txn}:\n{out}\n{err}");
        let updates = steps(&out)["ycsb_a"].types["UPDATE"].0;
        let line = out
            .lines()
            .skip_while(|l| !l.starts_with("ycsb_a "))
            .find(|l| l.contains("transactions:"))
            .unwrap_or_else(|| panic!("{txn}: no transactions line:\n{out}"));
        assert!(
            line.contains(&format!("transactions: {updates} commits")),
            "{txn}: {line}"
        );
    }
}

#[test]
fn workload_steps_refuse_databases_they_did_not_build() {
    let dir = tempfile::tempdir().unwrap();
    // A db_bench database: ycsb_a finds no ycsb_load behind it.
    let plain = dir.path().join("plain");
    let (ok, out, err) = bench(&plain, &["--benchmarks=fillseq", "--num=100"]);
    assert!(ok, "{out}\n{err}");
    let (ok, _, err) = bench(&plain, &["--benchmarks=ycsb_a", "--use_existing_db"]);
    assert!(!ok && err.contains("ycsb_a: the database at"), "{err}");
    assert!(err.contains("was not loaded by ycsb_load"), "{err}");

    // A database another workload built: every YCSB step refuses it, naming the workload.
    let other = dir.path().join("other");
    let (ok, out, err) = bench(&other, &["--benchmarks=fillseq", "--num=10"]);
    assert!(ok, "{out}\n{err}");
    std::fs::write(other.join("WORKLOAD"), "linkbench\n").unwrap();
    for step in ["ycsb_load", "ycsb_b"] {
        let (ok, _, err) = bench(
            &other,
            &[&format!("--benchmarks={step}"), "--use_existing_db"],
        );
        assert!(
            !ok && err.contains(&format!("{step}: the database at")),
            "{err}"
        );
        assert!(
            err.contains("built by the linkbench workload"),
            "{step}: {err}"
        );
    }

    // A YCSB database: the expanding range (db_bench's keys) refuses it, and so does a YCSB
    // step whose record layout differs from the load's.
    let ycsb = dir.path().join("ycsb");
    let (ok, out, err) = bench(&ycsb, &["--benchmarks=ycsb_load", "--ycsb_records=50"]);
    assert!(ok, "{out}\n{err}");
    let (ok, _, err) = bench(&ycsb, &["--benchmarks=expandingrange", "--use_existing_db"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("expandingrange: the database at")
            && err.contains("built by the ycsb workload"),
        "{err}"
    );
    let (ok, _, err) = bench(
        &ycsb,
        &[
            "--benchmarks=ycsb_c",
            "--use_existing_db",
            "--ycsb_fieldcount=5",
        ],
    );
    assert!(!ok, "{err}");
    assert!(
        err.contains(
            "records have 10 fields of 100 bytes (from ycsb_load), but --ycsb_fieldcount=5"
        ),
        "{err}"
    );
    // Refused runs change nothing: the database is still YCSB's, with its records.
    assert_eq!(marker(&ycsb).1["records"], "50");
}

#[test]
fn workload_flags_that_do_not_fit_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for (flags, error) in [
        (
            &["--benchmarks=ycsb_load", "--num_column_families=2"][..],
            "ycsb_load: --num_column_families=2 does not fit YCSB",
        ),
        (
            &["--benchmarks=ycsb_load", "--ycsb_fieldcount=0"],
            "ycsb_load: --ycsb_fieldcount must be at least 1",
        ),
        (
            &["--benchmarks=ycsb_e", "--ycsb_max_scan_length=0"],
            "ycsb_e: --ycsb_max_scan_length must be at least 1",
        ),
        (
            &[
                "--benchmarks=expandingrange",
                "--num=100",
                "--expand_start=101",
            ],
            "expandingrange: --expand_start (101) must be at most --num (100)",
        ),
        (
            &["--benchmarks=expandingrange", "--expand_step=0"],
            "expandingrange: --expand_step must be at least 1",
        ),
        (
            &["--benchmarks=expandingrange", "--duration=5"],
            "expandingrange: --duration does not apply",
        ),
    ] {
        let (ok, _, err) = bench(&db, flags);
        assert!(!ok && err.contains(error), "{flags:?}: {err}");
        // Refused before anything is created.
        assert!(!db.exists(), "{flags:?}");
    }
}

/// The interval lines of an expanding range: (range, reads, found percent).
fn intervals(stdout: &str) -> Vec<(u64, u64, f64)> {
    stdout
        .lines()
        .filter_map(|l| l.split_once("expandingrange : interval "))
        .map(|(_, rest)| {
            let words: Vec<&str> = rest.split_whitespace().collect();
            let range = words[2].trim_start_matches("0..").parse().unwrap();
            let reads_at = words.iter().position(|w| *w == "reads").unwrap();
            let found_at = words.iter().position(|w| *w == "found,").unwrap();
            (
                range,
                words[reads_at - 1].parse().unwrap(),
                words[found_at - 1].trim_end_matches('%').parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_expanding_range_grows_interval_by_interval_to_every_key() {
    for engine in engines() {
        let dir = tempfile::tempdir().unwrap();
        let plot = dir.path().join("run.svg");
        let (ok, out, err) = bench(
            &dir.path().join("db"),
            &[
                &format!("--engine={engine}"),
                "--benchmarks=fillseq,expandingrange",
                "--num=2000",
                "--expand_start=200",
                "--expand_step=600",
                "--expand_interval_reads=500",
                "--threads=2",
                &format!("--plot={}", plot.display()),
            ],
        );
        assert!(ok, "{engine}:\n{out}\n{err}");
        let seen = intervals(&out);
        let ranges: Vec<u64> = seen.iter().map(|i| i.0).collect();
        assert_eq!(ranges, [200, 800, 1400, 2000], "{engine}:\n{out}");
        // Each interval ends after its reads (the threads may pass the mark a little).
        assert!(seen.iter().all(|i| i.1 >= 500), "{engine}: {seen:?}");
        // fillseq wrote every key of the range: every read finds its key.
        assert!(seen.iter().all(|i| i.2 == 100.0), "{engine}: {seen:?}");
        let report = &steps(&out)["expandingrange"];
        let reads: u64 = seen.iter().map(|i| i.1).sum();
        assert!(report.ops >= reads, "{engine}: {} < {reads}", report.ops);
        assert!(
            report.message.contains("4 intervals from 200 to 2000 keys"),
            "{}",
            report.message
        );
        let chart = std::fs::read_to_string(dir.path().join("run-expandingrange.svg")).unwrap();
        assert!(
            chart.contains("keys in the read range (% of --num)"),
            "{engine}"
        );
        assert_eq!(chart.matches("<polyline").count(), 2, "{engine}");
    }
}

/// Per-second sampling serves the expanding range's lines and charts; it writes the
/// `--report_file` only when `--report_interval_seconds` asks for it, and never complains
/// about a file nobody asked for.
#[test]
fn timed_intervals_write_no_report_file_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("never.csv");
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--benchmarks=fillseq,expandingrange",
            "--num=2000",
            "--expand_start=1000",
            "--expand_step=1000",
            "--expand_interval=1",
            &format!("--report_file={}", report.display()),
            &format!("--plot={}", dir.path().join("run.svg").display()),
        ],
    );
    assert!(ok, "{out}\n{err}");
    assert_eq!(intervals(&out).len(), 2, "{out}");
    assert!(!err.contains("--report_file"), "{err}");
    assert!(!report.exists());
}
