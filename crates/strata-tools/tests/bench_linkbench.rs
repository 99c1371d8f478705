//! `strata bench`'s Linkbench steps end to end on small graphs: the request mix's shares,
//! the counts and the time index checked after the load and after the requests (with
//! merges, and in both kinds of transactions), and the bad inputs refused.

mod common;

use common::{bench, bench_db, strata};

/// LinkBench's published mix (FBWorkload.properties), in percent.
const MIX: [(&str, f64); 10] = [
    ("add_link", 8.988_660_1),
    ("delete_link", 2.990_766_4),
    ("update_link", 8.012_212_5),
    ("count_link", 4.886_356_7),
    ("multiget_link", 0.526_114_2),
    ("get_link_list", 50.711_914_5),
    ("add_node", 2.573_278_9),
    ("update_node", 7.366_437),
    ("delete_node", 1.011_591_4),
    ("get_node", 12.932_668_3),
];

/// The operations of a step's result line (`NAME : ... N operations; ...`).
fn operations(out: &str, step: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{step:<12} :")) && l.contains("operations;"))
        .unwrap_or_else(|| panic!("no result line for {step}:\n{out}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "operations;").unwrap();
    words[at - 1].parse().unwrap()
}

/// The count column of each operation type of the step tables in `out`, summed over the
/// tables that list it.
fn op_counts(out: &str) -> Vec<(String, u64)> {
    let mut counts: Vec<(String, u64)> = Vec::new();
    for line in out.lines() {
        let Some(rest) = line.trim_start().strip_prefix(": ") else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.len() < 8 || !words[2].ends_with('%') {
            continue;
        }
        let Ok(count) = words[1].parse::<u64>() else {
            continue;
        };
        match counts.iter_mut().find(|(n, _)| n == words[0]) {
            Some(c) => c.1 += count,
            None => counts.push((words[0].to_string(), count)),
        }
    }
    counts
}

#[test]
fn requests_follow_linkbench_s_mix_and_counts_stay_exact() {
    let mut engines = vec!["strata"];
    if cfg!(feature = "rocksdb") {
        engines.push("rocksdb");
    }
    for engine in engines {
        mix_and_counts(engine);
    }
}

fn mix_and_counts(engine: &str) {
    let dir = tempfile::tempdir().unwrap();
    let engine_flag = format!("--engine={engine}");
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            &engine_flag,
            "--benchmarks=linkbench_load,linkbench",
            "--linkbench_nodes=2000",
            "--threads=2",
            "--reads=10000",
            "--verify_workload",
        ],
    );
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(operations(&out, "linkbench"), 20_000, "{out}");
    let loaded = operations(&out, "linkbench_load");
    assert!(
        loaded > 2000 + 4000,
        "2000 nodes and their links: {loaded}\n{out}"
    );
    // The checks of the counts and the index ran after each step.
    assert_eq!(out.matches("verified: ").count(), 2, "{out}");
    let counts = op_counts(&out);
    let requests: u64 = counts
        .iter()
        .filter(|(n, _)| MIX.iter().any(|m| m.0 == n))
        .map(|c| c.1)
        .sum();
    assert_eq!(requests, 20_000, "{counts:?}");
    for (op, share) in MIX {
        let n = counts.iter().find(|c| c.0 == op).map_or(0, |c| c.1);
        let got = 100.0 * n as f64 / requests as f64;
        // 20,000 draws: one standard deviation is at most 0.36 points.
        assert!(
            (got - share).abs() < 1.5,
            "{op}: {got:.2}% against {share}%\n{out}"
        );
    }
    assert!(out.contains("counts kept by uint64add merges"), "{out}");
    assert!(out.contains("write-amp"), "{out}");
}

#[test]
fn transactions_keep_the_counts_in_the_link_s_transaction() {
    let mut runs = vec![
        ("strata", "--transaction_db"),
        ("strata", "--optimistic_transaction_db"),
    ];
    if cfg!(feature = "lmdb") {
        // LMDB runs each operation as one write transaction, whichever flag.
        runs.push(("lmdb", "--transaction_db"));
    }
    if cfg!(feature = "rocksdb") {
        runs.push(("rocksdb", "--transaction_db"));
        runs.push(("rocksdb", "--optimistic_transaction_db"));
    }
    for (engine, flag) in runs {
        let dir = tempfile::tempdir().unwrap();
        let engine_flag = format!("--engine={engine}");
        let (ok, out, err) = bench(
            &dir.path().join("db"),
            &[
                &engine_flag,
                "--benchmarks=linkbench_load,linkbench",
                "--linkbench_nodes=5",
                "--threads=4",
                "--reads=1500",
                "--verify_workload",
                flag,
            ],
        );
        assert!(ok, "{engine} {flag}: stdout:\n{out}\nstderr:\n{err}");
        assert_eq!(
            out.matches("verified: ").count(),
            2,
            "{engine} {flag}: {out}"
        );
        assert!(
            out.contains("transaction per operation"),
            "{engine} {flag}: {out}"
        );
        assert!(out.contains("transactions: "), "{engine} {flag}: {out}");
    }
}

#[test]
fn requests_continue_on_an_existing_graph() {
    let (_dir, db) = bench_db(&["--benchmarks=linkbench_load", "--linkbench_nodes=500"]);
    let (ok, out, err) = bench(
        &db,
        &[
            "--benchmarks=linkbench",
            "--use_existing_db",
            "--reads=3000",
            "--verify_workload",
        ],
    );
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("graph of 500 nodes"), "{out}");
    assert!(out.contains("verified: "), "{out}");
}

#[test]
fn bad_inputs_are_refused_naming_what_is_wrong() {
    let (_linkbench_dir, linkbench_db) =
        bench_db(&["--benchmarks=linkbench_load", "--linkbench_nodes=100"]);
    let (_insert_dir, insert_db) = bench_db(&["--benchmarks=insertbench_l_i0", "--num=100"]);
    let (_ycsb_dir, ycsb_db) = bench_db(&["--benchmarks=ycsb_load", "--ycsb_records=100"]);
    let fresh = tempfile::tempdir().unwrap();
    let fresh_db = fresh.path().join("db");
    let cases: [(&std::path::Path, &[&str], &str); 8] = [
        (
            &ycsb_db,
            &["--benchmarks=linkbench_load", "--use_existing_db"],
            "built by the ycsb workload",
        ),
        (
            &fresh_db,
            &["--benchmarks=linkbench"],
            "was not loaded by linkbench_load",
        ),
        (
            &insert_db,
            &["--benchmarks=linkbench", "--use_existing_db"],
            "built by the insertbench workload",
        ),
        (
            &linkbench_db,
            &["--benchmarks=linkbench_load", "--use_existing_db"],
            "already holds a linkbench graph of 100 nodes",
        ),
        (
            &fresh_db,
            &[
                "--benchmarks=linkbench_load",
                "--merge_operator=stringappend",
            ],
            "--merge_operator=stringappend does not fit",
        ),
        (
            &fresh_db,
            &["--benchmarks=linkbench_load", "--engine=lmdb"],
            "--engine=lmdb has no merge operator",
        ),
        (
            &fresh_db,
            &["--benchmarks=linkbench_load", "--linkbench_nodes=0"],
            "--linkbench_nodes must be at least 1",
        ),
        (
            &fresh_db,
            &["--benchmarks=linkbench_load,insertbench_l_i0"],
            "cannot run on one database",
        ),
    ];
    for (db, flags, message) in cases {
        let (ok, out, err) = bench(db, flags);
        assert!(!ok, "{flags:?} succeeded:\n{out}");
        assert!(err.contains(message), "{flags:?}: {err}");
    }
}

#[test]
fn a_count_that_differs_from_its_links_fails_the_verification() {
    let (_dir, db) = bench_db(&["--benchmarks=linkbench_load", "--linkbench_nodes=50"]);
    let dir = db.to_str().unwrap();
    // A count of 5 for node 1,000,000,000's first link type, which has no link.
    let key = "000000003b9aca0000000000075bcd15";
    let (ok, _, err) = strata(&[
        "put",
        dir,
        key,
        "0500000000000000",
        "--cf",
        "linkbench_count",
        "--hex",
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = bench(
        &db,
        &[
            "--benchmarks=linkbench",
            "--use_existing_db",
            "--reads=10",
            "--verify_workload",
        ],
    );
    assert!(!ok, "{out}");
    assert!(
        err.contains("linkbench: verification failed: count of (1000000000, 123456789) is 5, but it has 0 visible links"),
        "{err}"
    );
}

#[test]
fn a_node_that_is_not_the_workload_s_fails_the_step() {
    let (_dir, db) = bench_db(&["--benchmarks=linkbench_load", "--linkbench_nodes=5"]);
    let dir = db.to_str().unwrap();
    for id in 1..=5 {
        let key = format!("{id:016x}");
        let (ok, _, err) = strata(&["put", dir, &key, "00", "--cf", "linkbench_node", "--hex"]);
        assert!(ok, "{err}");
    }
    let (ok, out, err) = bench(
        &db,
        &[
            "--benchmarks=linkbench",
            "--use_existing_db",
            "--reads=2000",
        ],
    );
    assert!(!ok, "{out}");
    assert!(
        err.contains("linkbench: the node at key [00, 00, 00, 00, 00, 00, 00, 0"),
        "{err}"
    );
    assert!(err.contains("does not parse"), "{err}");
}

#[test]
fn merged_counts_stay_exact_when_threads_write_the_same_links() {
    // Three nodes and four threads: the same few links are added and deleted concurrently,
    // so a count would drift if a link's read and its count's merge could interleave.
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--benchmarks=linkbench_load,linkbench",
            "--linkbench_nodes=3",
            "--threads=4",
            "--reads=5000",
            "--verify_workload",
        ],
    );
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(out.matches("verified: ").count(), 2, "{out}");
}
