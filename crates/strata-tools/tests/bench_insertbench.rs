//! `strata bench`'s insert benchmark end to end on a small table: every step, with the
//! secondary indexes checked against the primary rows after each, and the bad inputs
//! refused.

mod common;

use common::{bench, bench_db, engines, strata};

/// The `verified: ...` notes of the run, in order.
fn verified(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.split_once("verified: ").map(|(_, v)| v.to_string()))
        .collect()
}

#[test]
fn every_step_keeps_the_indexes_equal_to_the_rows() {
    for engine in engines() {
        every_step_on(engine);
    }
}

fn every_step_on(engine: &str) {
    let dir = tempfile::tempdir().unwrap();
    let engine_flag = format!("--engine={engine}");
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            &engine_flag,
            "--benchmarks=insertbench_l_i0,insertbench_create_index,insertbench_l_i1,\
             insertbench_l_i2,insertbench_qr100,insertbench_qr500,insertbench_qr1000",
            "--num=3000",
            "--writes=1000",
            "--batch_size=50",
            "--threads=2",
            "--reads=300",
            "--verify_workload",
        ],
    );
    assert!(ok, "{engine}: stdout:\n{out}\nstderr:\n{err}");
    let checks = verified(&out);
    assert_eq!(checks.len(), 7, "{engine}: {out}");
    assert_eq!(
        checks[0], "6000 rows; marketsegment 0, registersegment 0, pdc 0 entries",
        "l_i0 writes no index entry"
    );
    let full = |rows: u64| {
        format!("{rows} rows; marketsegment {rows}, registersegment {rows}, pdc {rows} entries")
    };
    assert_eq!(checks[1], full(6000), "create_index");
    assert_eq!(checks[2], full(8000), "l_i1 adds 2 x 1000 rows");
    assert_eq!(checks[3], full(8000), "l_i2 deletes as many as it inserts");
    for check in &checks[4..] {
        assert_eq!(*check, full(8000), "the qr writers keep the size too");
    }
    assert!(out.contains("( rows inserted:2000 deleted:2000 )"), "{out}");
    for target in [100, 500, 1000] {
        assert!(out.contains(&format!("target {target}: ")), "{out}");
    }
    assert!(out.contains("query_marketsegment"), "{out}");
    assert!(out.contains("query_pdc"), "{out}");
}

#[test]
fn transactions_keep_the_indexes_too() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--benchmarks=insertbench_l_i0,insertbench_create_index,insertbench_l_i2",
            "--num=500",
            "--writes=400",
            "--batch_size=10",
            "--threads=3",
            "--transaction_db",
            "--verify_workload",
        ],
    );
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    let checks = verified(&out);
    assert_eq!(checks.len(), 3, "{out}");
    assert!(
        checks[2].starts_with("1500 rows; marketsegment 1500"),
        "{out}"
    );
    assert!(out.contains("pessimistic transaction per batch"), "{out}");
}

#[test]
fn bad_inputs_are_refused_naming_what_is_wrong() {
    let (_dir, loaded) = bench_db(&["--benchmarks=insertbench_l_i0", "--num=100"]);
    let (_idir, indexed) = bench_db(&[
        "--benchmarks=insertbench_l_i0,insertbench_create_index",
        "--num=100",
    ]);
    let (_ldir, linkbench) = bench_db(&["--benchmarks=linkbench_load", "--linkbench_nodes=50"]);
    let (_pdir, plain) = bench_db(&["--benchmarks=fillseq", "--num=10"]);
    let cases: [(&std::path::Path, &str, &str); 6] = [
        (
            &loaded,
            "insertbench_l_i1",
            "the secondary indexes are not built",
        ),
        (&indexed, "insertbench_create_index", "built already"),
        (
            &indexed,
            "insertbench_l_i0",
            "built already: insertbench_l_i1",
        ),
        (
            &linkbench,
            "insertbench_l_i0",
            "built by the linkbench workload",
        ),
        (
            &plain,
            "insertbench_qr100",
            "was not loaded by insertbench_l_i0",
        ),
        (&loaded, "readrandom", "built by the insertbench workload"),
    ];
    for (db, step, message) in cases {
        let steps = format!("--benchmarks={step}");
        let (ok, out, err) = bench(db, &[&steps, "--use_existing_db", "--num=10"]);
        assert!(!ok, "{step} succeeded:\n{out}");
        assert!(err.contains(message), "{step}: {err}");
    }
}

#[test]
fn an_index_entry_without_its_row_fails_the_verification() {
    let (_dir, db) = bench_db(&[
        "--benchmarks=insertbench_l_i0,insertbench_create_index",
        "--num=100",
    ]);
    // A pdc entry (price, dateandtime, customerid, transactionid) for row 999999, which
    // does not exist.
    let key = "c0000000000000010000000200000000000f423f";
    let (ok, _, err) = strata(&[
        "put",
        db.to_str().unwrap(),
        key,
        "",
        "--cf",
        "insertbench_pdc",
        "--hex",
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = bench(
        &db,
        &[
            "--benchmarks=insertbench_l_i1",
            "--use_existing_db",
            "--writes=10",
            "--verify_workload",
        ],
    );
    assert!(!ok, "{out}");
    assert!(
        err.contains("the indexes do not match the rows: pdc: 1 entries without a row, 0 rows without an entry"),
        "{err}"
    );
}
