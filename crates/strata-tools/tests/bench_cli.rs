//! `strata bench` end to end: every step runs at a small --num, its db_bench result line
//! parses, and the counts are right.

mod common;

use common::{bench, bench_db, engines};

struct Line {
    name: String,
    ops: u64,
    found: Option<(u64, u64)>,
}

fn parse(stdout: &str) -> Vec<Line> {
    stdout
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(" : ")?;
            let name = name.trim();
            if name.is_empty() || !rest.contains("micros/op") {
                return None;
            }
            let words: Vec<&str> = rest.split_whitespace().collect();
            let ops_at = words.iter().position(|w| *w == "operations;")?;
            let ops = words[ops_at - 1].parse().ok()?;
            let found = rest.split_once('(').and_then(|(_, f)| {
                let f: Vec<&str> = f.split_whitespace().collect();
                Some((f.first()?.parse().ok()?, f.get(2)?.parse().ok()?))
            });
            Some(Line {
                name: name.to_string(),
                ops,
                found,
            })
        })
        .collect()
}

/// The line of step `name` among `lines`, parsed from `out`; a panic showing `out` if none.
fn step_line<'a>(lines: &'a [Line], name: &str, out: &str) -> &'a Line {
    lines
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no {name} line in {out}"))
}

#[test]
fn every_step_reports_its_operations_on_every_engine() {
    for engine in engines() {
        every_step_reports_its_operations(engine);
    }
}

fn every_step_reports_its_operations(engine: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    // The rocksdb crate cannot compact one level (no CompactFiles): compactall stands in.
    let compact0 = if engine == "rocksdb" {
        "compactall"
    } else {
        "compact0"
    };
    let steps = format!(
        "--benchmarks=fillseq,readrandom,readmissing,readseq,readreverse,seekrandom,\
         overwrite,fillrandom,filluniquerandom,fillsync,deleterandom,deleteseq,\
         readrandom,flush,readrandom,{compact0},compactall,readrandom,waitforcompaction,\
         levelstats,stats"
    );
    let engine_flag = format!("--engine={engine}");
    let (ok, out, err) = bench(
        &db,
        &[
            &engine_flag,
            "--num=2000",
            &steps,
            "--seek_nexts=3",
            "--histogram=1",
            "--write_buffer_size=65536",
        ],
    );
    assert!(ok, "{engine}: stdout:\n{out}\nstderr:\n{err}");
    let lines = parse(&out);
    let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "fillseq",
            "readrandom",
            "readmissing",
            "readseq",
            "readreverse",
            "seekrandom",
            "overwrite",
            "fillrandom",
            "filluniquerandom",
            "fillsync",
            "deleterandom",
            "deleteseq",
            "readrandom",
            "readrandom",
            "readrandom"
        ]
    );
    let by = |i: usize| &lines[i];
    assert_eq!(by(0).ops, 2000);
    assert_eq!(
        by(1).found,
        Some((2000, 2000)),
        "readrandom after fillseq finds all"
    );
    assert_eq!(by(2).found, Some((0, 2000)), "readmissing finds none");
    assert_eq!(by(3).ops, 2000, "readseq visits every key");
    assert_eq!(by(4).ops, 2000, "readreverse visits every key");
    assert_eq!(by(5).found, Some((2000, 2000)));
    assert_eq!(by(9).ops, 2, "fillsync writes num/1000");
    assert_eq!(
        by(12).found,
        Some((0, 2000)),
        "after deleteseq nothing is found"
    );
    assert!(out.contains("write-amp"), "{out}");
    assert!(out.contains("latency us: p50"), "{out}");
    if engine == "strata" {
        assert!(out.contains("** Strata stats **"), "{out}");
    }
}

#[test]
fn an_engine_not_built_in_is_an_error_naming_the_feature() {
    for engine in ["rocksdb", "lmdb"] {
        if engines().contains(&engine) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let flag = format!("--engine={engine}");
        let (ok, _, err) = bench(&dir.path().join("db"), &[&flag, "--num=10"]);
        assert!(!ok);
        assert!(err.contains(&format!("--features {engine}")), "{err}");
    }
    let (ok, _, err) = bench(std::path::Path::new("db"), &["--engine=leveldb"]);
    assert!(!ok);
    assert!(err.contains("leveldb"), "{err}");
}

#[test]
fn threads_multiply_operations_as_in_db_bench() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--num=500",
            "--threads=4",
            "--benchmarks=fillrandom,readrandom",
            "--sync=1",
        ],
    );
    assert!(ok, "{err}");
    let lines = parse(&out);
    assert_eq!(lines[0].ops, 2000);
    assert_eq!(lines[1].ops, 2000);
    assert!(out.contains("batches/group"), "{out}");
}

#[test]
fn each_step_draws_its_own_keys_as_in_db_bench() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &["--num=4000", "--benchmarks=fillrandom,readrandom"],
    );
    assert!(ok, "{err}");
    // fillrandom covers about 1 - 1/e of the key space; readrandom, with its own seed, finds
    // about that share (it would find all if it replayed fillrandom's keys).
    let (found, reads) = parse(&out)[1].found.unwrap();
    assert!(
        found > reads / 2 && found < reads * 3 / 4,
        "{found} of {reads}"
    );
}

#[test]
fn existing_database_is_reused_and_recovered() {
    let (_dir, db) = bench_db(&["--num=1000", "--benchmarks=fillseq"]);
    let (ok, out, err) = bench(
        &db,
        &[
            "--num=1000",
            "--benchmarks=readrandom",
            "--use_existing_db=1",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(parse(&out)[0].found, Some((1000, 1000)), "{out}");
    assert!(out.contains("Recovered:"), "{out}");
    let opened = out.lines().find(|l| l.starts_with("Opened:")).expect(&out);
    assert!(opened.contains(" s, disk write "), "{opened}");
}

#[test]
fn bad_flags_and_steps_are_errors_that_name_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (ok, _, err) = bench(&db, &["--no_such_flag=1"]);
    assert!(!ok);
    assert!(err.contains("no_such_flag"), "{err}");
    let (ok, _, err) = bench(&db, &["--benchmarks=fillseq,nosuchbench", "--num=10"]);
    assert!(!ok);
    assert!(err.contains("nosuchbench"), "{err}");
    let (ok, _, err) = bench(&db, &["--benchmarks=compact9", "--num=10"]);
    assert!(!ok);
    assert!(err.contains("compact9"), "{err}");
    let (ok, _, err) = bench(&db, &["--use_existing_db=1", "--benchmarks=readrandom"]);
    assert!(!ok);
    assert!(err.contains("no database"), "{err}");
    let (ok, _, err) = bench(&db, &["--benchmarks=mergerandom", "--num=10"]);
    assert!(!ok);
    assert!(err.contains("mergerandom needs a merge operator"), "{err}");
    let (ok, _, err) = bench(&db, &["--benchmarks=mergerandom", "--merge_operator=max"]);
    assert!(!ok);
    assert!(err.contains("max"), "{err}");

    let foreign = dir.path().join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("keep.txt"), "important").unwrap();
    let (ok, _, err) = bench(&foreign, &["--benchmarks=fillseq", "--num=10"]);
    assert!(!ok);
    assert!(err.contains("keep.txt"), "{err}");
    assert!(
        foreign.join("keep.txt").exists(),
        "a foreign directory must never be deleted"
    );
}

#[test]
fn readwhilewriting_reports_the_readers_beside_a_rate_limited_writer() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--num=3000",
            "--threads=2",
            "--benchmarks=fillseq,readwhilewriting,seekrandomwhilewriting",
            "--benchmark_write_rate_limit=100000",
        ],
    );
    assert!(ok, "{err}");
    let lines = parse(&out);
    assert_eq!(lines[1].name, "readwhilewriting");
    // Two readers of 3000 reads each; every key was written by fillseq.
    assert_eq!(lines[1].found, Some((6000, 6000)), "{out}");
    assert_eq!(lines[2].name, "seekrandomwhilewriting");
    assert_eq!(lines[2].ops, 6000);
    assert!(out.contains("writer:"), "{out}");
}

/// The `name:value` fields of a result line's message, as db_bench prints them for the
/// mixed steps: `( reads:9 writes:1 total:10 found:9)`.
fn fields(out: &str, step: &str) -> std::collections::HashMap<String, u64> {
    let line = out
        .lines()
        .find(|l| l.starts_with(step) && l.contains("micros/op"))
        .unwrap_or_else(|| panic!("no {step} line in:\n{out}"));
    let message = line.split_once('(').map_or("", |(_, m)| m);
    message
        .split_whitespace()
        .filter_map(|w| {
            let (k, v) = w.trim_end_matches(')').split_once(':')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

#[test]
fn mixed_steps_count_their_reads_and_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--num=3000",
            "--benchmarks=fillseq,readrandomwriterandom,updaterandom,resetstats,readrandom",
            "--readwritepercent=70",
        ],
    );
    assert!(ok, "{err}");
    let rw = fields(&out, "readrandomwriterandom");
    assert_eq!(rw["reads"] + rw["writes"], 3000, "{out}");
    assert_eq!(rw["total"], 3000);
    assert_eq!(rw["found"], rw["reads"], "every key was written by fillseq");
    let share = rw["reads"] as f64 / 3000.0;
    assert!((0.6..0.8).contains(&share), "{share}");
    let up = fields(&out, "updaterandom");
    assert_eq!((up["updates"], up["found"]), (3000, 3000), "{out}");
    assert!(out.contains("counters and compaction stats reset"), "{out}");
    assert!(out.contains("space-amp"), "{out}");
    let lines = parse(&out);
    assert_eq!(lines.last().unwrap().found, Some((3000, 3000)));
}

#[test]
fn duration_runs_by_time_and_report_file_gets_one_line_per_interval() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.csv");
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--num=2000",
            "--benchmarks=fillseq,readrandom",
            "--duration=2",
            "--report_interval_seconds=1",
            &format!("--report_file={}", report.display()),
        ],
    );
    assert!(ok, "{err}");
    let lines = parse(&out);
    // Two seconds of reads do far more than --num of them.
    assert!(lines[1].ops > 2000, "{out}");
    let csv = std::fs::read_to_string(&report).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "step,secs_elapsed,interval_ops,interval_qps,p99_us,stalls,stall_ms,pending_compaction_bytes"
    );
    let reads: Vec<&str> = rows
        .iter()
        .filter(|r| r.starts_with("readrandom,"))
        .copied()
        .collect();
    assert!(!reads.is_empty(), "{csv}");
    for r in &reads {
        let cols: Vec<&str> = r.split(',').collect();
        assert_eq!(cols.len(), 8, "{r}");
        assert!(cols[2].parse::<u64>().unwrap() > 0, "{r}");
    }
    assert!(out.contains("cv "), "{out}");
}

#[test]
fn universal_compaction_and_background_jobs_run_from_flags() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--num=20000",
            "--benchmarks=fillrandom,waitforcompaction,compactall,readrandom,levelstats",
            "--compaction_style=1",
            "--write_buffer_size=65536",
            "--max_background_jobs=3",
            "--max_subcompactions=2",
        ],
    );
    assert!(ok, "{err}");
    let lines = parse(&out);
    let found = lines[1].found.unwrap();
    assert_eq!(found.1, 20000);
    // fillrandom draws about 63% of the keys; the reads see exactly what was written.
    assert!(found.0 > 10000, "{out}");
    assert!(out.contains("L6 "), "{out}");
    // 2 is FIFO; no style is numbered 3.
    let (ok, _, err) = bench(&dir.path().join("db"), &["--compaction_style=3"]);
    assert!(!ok);
    assert!(err.contains("compaction_style"), "{err}");
}

#[test]
fn plot_draws_each_step_sampled() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("run.svg");
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--num=1000",
            "--benchmarks=fillseq,readrandom",
            "--duration=3",
            &format!("--plot={}", svg.display()),
        ],
    );
    assert!(ok, "{err}");
    assert!(out.contains("plot: "), "{out}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert!(text.contains(">readrandom</text>"), "{text}");
    // Throughput and latency lines for each of the two steps.
    assert_eq!(text.matches("<polyline").count(), 4, "{text}");
    // Beside it, the compaction debt and the stalled time of each step.
    let debt = std::fs::read_to_string(dir.path().join("run-compaction.svg")).unwrap();
    assert!(debt.contains("pending compaction (MiB)"), "{debt}");
    assert_eq!(debt.matches("<polyline").count(), 4, "{debt}");
}

#[test]
fn unusable_values_are_refused_naming_the_flag_or_path() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a database").unwrap();
    let file_flag = format!("--db={}", file.display());
    for (flags, named) in [
        (vec!["--num=0"], vec!["--num"]),
        (vec!["--value_size=0"], vec!["--value_size"]),
        (vec!["--key_size=0"], vec!["--key_size"]),
        (vec!["--threads=0"], vec!["--threads"]),
        (
            vec!["--benchmarks=fillseq,nosuchbench"],
            vec![
                "nosuchbench",
                "fillseq, fillrandom",
                "readrandom",
                "waitforcompaction",
            ],
        ),
        (vec![file_flag.as_str()], vec![file.to_str().unwrap()]),
        (
            vec![file_flag.as_str(), "--use_existing_db=1"],
            vec![file.to_str().unwrap()],
        ),
    ] {
        let mut all = vec!["--benchmarks=fillseq"];
        all.extend(&flags);
        let (ok, out, err) = bench(&db, &all);
        assert!(!ok, "{flags:?} must fail:\n{out}");
        for n in named {
            assert!(err.contains(n), "{flags:?}: {n} not named in: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!db.exists(), "a refused run creates nothing");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a database");
}

#[test]
fn help_says_where_the_defaults_differ_from_the_library_s() {
    let (ok, out, err) = common::strata(&["bench", "--help"]);
    assert!(ok, "{err}");
    for words in [
        "--bloom_bits=-1",
        "10 bits per key",
        "--compression_type=snappy",
        "has none",
    ] {
        assert!(out.contains(words), "{words} missing from:\n{out}");
    }
}

#[test]
fn merge_steps_merge_and_read_back_what_they_merged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for op in ["uint64add", "stringappend"] {
        let flags = [
            "--benchmarks=mergerandom,readrandommergerandom",
            "--num=2000",
            "--merge_keys=100",
            "--value_size=20",
            "--write_buffer_size=65536",
        ];
        let op_flag = format!("--merge_operator={op}");
        let mut all = flags.to_vec();
        all.push(&op_flag);
        let (ok, out, err) = bench(&db, &all);
        assert!(ok, "{op}: {err}");
        assert!(out.contains("mergerandom  :"), "{out}");
        assert!(out.contains("( updates:2000)"), "{out}");
        let line = out
            .lines()
            .find(|l| l.starts_with("readrandommergerandom"))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(line.contains("total:2000"), "{line}");
        // mergerandom merged into each of the 100 keys (2000 merges): every read finds one.
        let field = |name: &str| -> u64 {
            let at = line.find(name).unwrap_or_else(|| panic!("{line}")) + name.len();
            let digits: String = line[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().unwrap()
        };
        assert!(field("reads:") > 0, "{line}");
        assert_eq!(field("reads:"), field("hits:"), "{line}");
    }
}

#[test]
fn writes_batches_and_column_families_shape_the_write_steps() {
    for engine in engines() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let families = if engine == "lmdb" { "1" } else { "4" };
        let (ok, out, err) = bench(
            &db,
            &[
                &format!("--engine={engine}"),
                "--num=1000",
                "--writes=400",
                "--batch_size=16",
                &format!("--num_column_families={families}"),
                "--benchmarks=fillseq,readrandom,readseq,flush,compactall,readseq",
                "--open_files=50",
            ],
        );
        assert!(ok, "{engine}: {err}");
        let lines = parse(&out);
        // 400 sequential keys written in batches of 16; reads of all 1000 keys find those.
        assert_eq!(lines[0].ops, 400, "{engine}:\n{out}");
        assert_eq!(lines[1].ops, 1000, "{engine}:\n{out}");
        let (found, of) = lines[1].found.expect("readrandom says what it found");
        assert_eq!(of, 1000, "{engine}:\n{out}");
        assert!(found > 300 && found < 450, "{engine}: found {found}\n{out}");
        // A scan visits every family's keys, before and after the compaction.
        assert_eq!(lines[2].ops, 400, "{engine}:\n{out}");
        assert_eq!(lines.last().unwrap().ops, 400, "{engine}:\n{out}");
        if engine == "strata" {
            assert!(out.contains("column_family_name_000003: "), "{out}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for (flag, says) in [
        ("--batch_size=0", "--batch_size must be at least 1"),
        (
            "--num_column_families=0",
            "--num_column_families must be at least 1",
        ),
    ] {
        let (ok, _, err) = bench(&dir.path().join("db"), &[flag, "--num=10"]);
        assert!(!ok && err.contains(says), "{flag}: {err}");
    }
    if engines().contains(&"lmdb") {
        let flags = ["--engine=lmdb", "--num_column_families=4", "--num=10"];
        let (ok, _, err) = bench(&dir.path().join("lmdb"), &flags);
        assert!(
            !ok && err.contains("not supported with --engine=lmdb"),
            "{err}"
        );
    }
}

/// The `range tombstones: N written` count of the step named `step`.
fn tombstones_written(out: &str, step: &str) -> u64 {
    let mut lines = out.lines().skip_while(|l| !l.starts_with(step));
    lines
        .find_map(|l| l.split_once("range tombstones: "))
        .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no tombstone count after {step}:\n{out}"))
}

/// Range tombstones over a full database, worked out by hand. fillseq over keys 0..999 with
/// --writes=30 and a tombstone 5 keys wide every 10 writes: keys 0-9 are written, the
/// tombstone draws the next key, 10, and deletes 10-14; keys 11-20 are written again (after
/// it, so they stay), the next tombstone deletes 21-25, keys 22-31 are written, the last
/// deletes 32-36. Keys 10, 21 and 32-36 are gone: a scan finds 993. With two column families
/// a tombstone deletes only its begin key's family: 10, 21, 32, 34 and 36 are gone (995).
/// Batches of 4 are cut where a tombstone comes due, so they change nothing.
#[test]
fn range_tombstones_delete_their_width_after_every_nth_write() {
    let tombstones = [
        "--writes_per_range_tombstone=10",
        "--range_tombstone_width=5",
        "--max_num_range_tombstones=3",
    ];
    for engine in engines() {
        for (families, batch, left) in [("1", "1", 993), ("1", "4", 993), ("2", "1", 995)] {
            if engine == "lmdb" && families != "1" {
                continue;
            }
            let case = format!("{engine}, {families} families, batches of {batch}");
            let engine_flag = format!("--engine={engine}");
            let families_flag = format!("--num_column_families={families}");
            let batch_flag = format!("--batch_size={batch}");
            let common = [engine_flag.as_str(), families_flag.as_str(), "--num=1000"];
            let mut fill = common.to_vec();
            fill.push("--benchmarks=fillseq");
            let (_dir, db) = bench_db(&fill);
            let mut flags = common.to_vec();
            flags.extend([
                "--use_existing_db",
                "--writes=30",
                &batch_flag,
                "--benchmarks=fillseq,readseq",
            ]);
            flags.extend(tombstones);
            let (ok, out, err) = bench(&db, &flags);
            assert!(ok, "{case}: {err}");
            assert!(
                out.contains("RangeDel:   one of 5 keys every 10 writes, at most 3 per thread"),
                "{case}:\n{out}"
            );
            assert_eq!(tombstones_written(&out, "fillseq"), 3, "{case}:\n{out}");
            let lines = parse(&out);
            assert_eq!(lines[0].ops, 30, "tombstones are no operations: {case}");
            assert_eq!(lines[1].ops, left, "{case}:\n{out}");
            if engine == "lmdb" {
                assert!(out.contains("LMDB has no range deletion"), "{out}");
            }
        }
    }
}

/// "readrandom after N range tombstones": db_bench's flags on a fillrandom step, then
/// readrandom. On one thread (whose keys are the same in both runs) the reads find fewer keys
/// than after the same fill without tombstones; on two, each thread writes its own 40 (the
/// maximum is per thread, as db_bench counts it).
#[test]
fn readrandom_after_range_tombstones_finds_fewer_keys() {
    let run = |threads: &str, extra: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let mut flags = vec!["--num=2000", threads, "--benchmarks=fillrandom,readrandom"];
        flags.extend_from_slice(extra);
        let (ok, out, err) = bench(&dir.path().join("db"), &flags);
        assert!(ok, "{err}");
        out
    };
    let tombstones = [
        "--writes_per_range_tombstone=50",
        "--range_tombstone_width=50",
        "--max_num_range_tombstones=40",
    ];
    let plain = run("--threads=1", &[]);
    assert!(!plain.contains("range tombstones"), "{plain}");
    let with = run("--threads=1", &tombstones);
    assert_eq!(tombstones_written(&with, "fillrandom"), 40, "{with}");
    let found = |out: &str| parse(out)[1].found.unwrap();
    let ((plain_found, reads), (with_found, with_reads)) = (found(&plain), found(&with));
    assert_eq!((reads, with_reads), (2000, 2000));
    // 40 tombstones of 50 keys spread over the fill cover the key space once on average; the
    // writes after each put back part of what it deleted.
    assert!(
        with_found < plain_found * 9 / 10,
        "{with_found} vs {plain_found}\n{with}"
    );
    let two = run("--threads=2", &tombstones);
    assert_eq!(tombstones_written(&two, "fillrandom"), 80, "{two}");
    // A tombstone of width 0 would delete nothing: refused, naming the flag.
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = bench(
        &dir.path().join("db"),
        &[
            "--writes_per_range_tombstone=5",
            "--range_tombstone_width=0",
        ],
    );
    assert!(!ok && err.contains("--range_tombstone_width"), "{err}");
}

/// `--prefix_size` and `--keys_per_prefix` (db_bench's key layout and a fixed prefix
/// extractor), seekrandom within a prefix, and `--seek_missing_prefix` seeking prefixes no
/// key has; flags a run cannot use are errors that name them.
#[test]
fn prefix_flags_shape_keys_and_seeks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for (flags, want) in [
        (
            &["--prefix_size=20", "--key_size=16"][..],
            "--prefix_size (20) must be at most --key_size (16)",
        ),
        (
            &["--keys_per_prefix=10"][..],
            "--keys_per_prefix needs --prefix_size",
        ),
        (
            &["--prefix_size=8", "--keys_per_prefix=100", "--num=10"][..],
            "--keys_per_prefix (100) must be at most --num (10)",
        ),
        (
            &["--prefix_size=8", "--seek_missing_prefix"][..],
            "--seek_missing_prefix needs --prefix_size above 8",
        ),
    ] {
        let mut args = vec!["--benchmarks=fillseq"];
        args.extend_from_slice(flags);
        let (ok, _, err) = bench(&db, &args);
        assert!(!ok, "{flags:?}");
        assert!(err.contains(want), "{flags:?}: {err}");
    }
    for engine in engines().into_iter().filter(|&e| e != "lmdb") {
        let engine_flag = format!("--engine={engine}");
        let prefix = [
            engine_flag.as_str(),
            "--num=2000",
            "--key_size=16",
            "--prefix_size=12",
            "--keys_per_prefix=20",
            "--seek_nexts=5",
        ];
        let (ok, out, err) = bench(
            &db,
            &[&prefix[..], &["--benchmarks=fillseq,flush,seekrandom"]].concat(),
        );
        assert!(ok, "{engine}: {err}");
        assert!(out.contains("Prefix:     12 bytes"), "{out}");
        let seek = parse(&out)
            .into_iter()
            .find(|l| l.name == "seekrandom")
            .unwrap();
        assert_eq!(
            seek.found,
            Some((2000, 2000)),
            "{engine}: every key was written"
        );
        let (ok, out, err) = bench(
            &db,
            &[
                &prefix[..],
                &[
                    "--use_existing_db",
                    "--seek_missing_prefix",
                    "--benchmarks=seekrandom",
                ],
            ]
            .concat(),
        );
        assert!(ok, "{engine}: {err}");
        let seek = parse(&out)
            .into_iter()
            .find(|l| l.name == "seekrandom")
            .unwrap();
        assert_eq!(
            seek.found,
            Some((0, 2000)),
            "{engine}: no key has the prefix"
        );
    }
    // The commands that open the database for writing take the extractor its manifest
    // records; its tables then name it.
    let db = db.to_str().unwrap();
    for args in [
        &["put", db, "zzz-new-key-0001", "v"][..],
        &["flush", db],
        &["get", db, "zzz-new-key-0001"],
    ] {
        let (ok, _, err) = common::strata(args);
        assert!(ok, "{args:?}: {err}");
    }
    let table = std::fs::read_dir(db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .max()
        .unwrap();
    let (ok, out, err) = common::strata(&["sst", "dump", table.to_str().unwrap(), "--limit=0"]);
    assert!(ok, "{err}");
    assert!(out.contains("prefix-extractor: fixed:12"), "{out}");
}

/// The counts of a step's `transactions:` line: commits, read-only, conflicts, deadlocks,
/// timeouts, and the rest of the line.
fn txn_counts(out: &str, step: &str) -> ([u64; 5], String) {
    let mut lines = out.lines();
    lines
        .find(|l| l.starts_with(step) && l.contains("micros/op"))
        .unwrap_or_else(|| panic!("no {step} line in:\n{out}"));
    let line = lines
        .find(|l| l.contains("transactions:"))
        .unwrap_or_else(|| panic!("no transactions line after {step} in:\n{out}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let before = |w: &str| -> u64 {
        let at = words
            .iter()
            .position(|x| x.trim_end_matches([',', ';']) == w)
            .unwrap();
        words[at - 1].parse().unwrap()
    };
    (
        [
            before("commits"),
            before("read-only"),
            before("conflicts"),
            before("deadlocks"),
            before("timeouts"),
        ],
        line.to_string(),
    )
}

/// The verification line of randomtransaction: (sum of each set, what the step added).
fn verified(out: &str, sets: u32) -> (u64, u64) {
    let line = out
        .lines()
        .find(|l| l.contains("verified:"))
        .unwrap_or_else(|| panic!("no verification line in:\n{out}"));
    assert!(
        line.contains(&format!("verified: {sets} sets, sums equal")),
        "{line}"
    );
    let words: Vec<&str> = line.split_whitespace().collect();
    let each = words[words.iter().position(|w| *w == "each").unwrap() - 1];
    let added = words.last().unwrap().trim_end_matches(')');
    (
        each.trim_start_matches('(').parse().unwrap(),
        added.parse().unwrap(),
    )
}

#[test]
fn transaction_flags_run_every_write_and_read_in_a_transaction_on_every_engine() {
    let steps = "--benchmarks=fillrandom,readrandom,seekrandom,updaterandom,\
                 readrandomwriterandom,randomtransaction,updaterandomcursor";
    for engine in engines() {
        let engine_flag = format!("--engine={engine}");
        let run = |mode: Option<&str>| {
            let dir = tempfile::tempdir().unwrap();
            let mut flags = vec![engine_flag.as_str(), "--num=500", "--threads=4", steps];
            flags.extend(mode);
            let (ok, out, err) = bench(&dir.path().join("db"), &flags);
            assert!(ok, "{engine} {mode:?}: stdout:\n{out}\nstderr:\n{err}");
            out
        };
        // The reference: the same run without transactions reads what it reads.
        let plain = run(None);
        let plain_lines = parse(&plain);
        for mode in ["--transaction_db=1", "--optimistic_transaction_db"] {
            let out = run(Some(mode));
            let lines = parse(&out);
            for (i, step) in ["fillrandom", "readrandom", "seekrandom"]
                .iter()
                .enumerate()
            {
                assert_eq!(lines[i].name, *step);
                assert_eq!(lines[i].ops, 2000, "{engine} {mode} {step}");
                assert_eq!(
                    lines[i].found, plain_lines[i].found,
                    "{engine} {mode}: {step} must find what it finds without transactions"
                );
            }
            let ([commits, read_only, ..], line) = txn_counts(&out, "fillrandom");
            assert_eq!((commits, read_only), (2000, 0), "{engine} {mode}: {line}");
            let kind = if mode.starts_with("--transaction_db") {
                "pessimistic"
            } else {
                "optimistic"
            };
            assert!(line.contains(&format!("({kind} transactions")), "{line}");
            for step in ["readrandom", "seekrandom"] {
                let ([commits, read_only, ..], line) = txn_counts(&out, step);
                assert_eq!((commits, read_only), (0, 2000), "{engine} {mode}: {line}");
            }
            for step in ["updaterandom", "randomtransaction", "updaterandomcursor"] {
                let ([commits, read_only, ..], line) = txn_counts(&out, step);
                assert_eq!((commits, read_only), (2000, 0), "{engine} {mode}: {line}");
            }
            let ([commits, read_only, ..], line) = txn_counts(&out, "readrandomwriterandom");
            let rw = fields(&out, "readrandomwriterandom");
            assert_eq!(
                (commits, read_only),
                (rw["writes"], rw["reads"]),
                "{engine} {mode}: {line}"
            );
            // Every committed increment landed in every set: none lost to a retry.
            let (each, added) = verified(&out, 2);
            assert_eq!(each, added, "{engine} {mode}:\n{out}");
            let cursor = txn_counts(&out, "updaterandomcursor").1;
            match engine {
                "rocksdb" => assert!(cursor.contains("cursor update emulated"), "{cursor}"),
                _ => assert!(cursor.contains("cursor updated in place"), "{cursor}"),
            }
            assert_eq!(fields(&out, "updaterandomcursor")["updates"], 2000);
        }
    }
}

#[test]
fn randomtransaction_keeps_the_sets_equal_under_contention() {
    // 16 threads on 20 keys per set: pessimistic transactions wait for each other's locks
    // (taken set by set, in one order: no cycle can form), optimistic ones conflict and are
    // retried and counted; either way the sums stay equal to what the commits added.
    for mode in ["--transaction_db=1", "--optimistic_transaction_db=1"] {
        let dir = tempfile::tempdir().unwrap();
        let (ok, out, err) = bench(
            &dir.path().join("db"),
            &[
                "--num=20",
                "--reads=200",
                "--threads=16",
                "--transaction_sets=3",
                "--benchmarks=randomtransaction",
                mode,
            ],
        );
        assert!(ok, "{mode}: {out}\n{err}");
        assert_eq!(parse(&out)[0].ops, 3200);
        let ([commits, _, conflicts, deadlocks, timeouts], line) =
            txn_counts(&out, "randomtransaction");
        assert_eq!(commits, 3200, "{line}");
        if mode.starts_with("--optimistic") {
            assert_eq!(deadlocks + timeouts, 0, "{line}");
        } else {
            assert_eq!(conflicts, 0, "{line}");
        }
        let (each, added) = verified(&out, 3);
        assert_eq!(each, added, "{out}");
    }
}

#[test]
fn randomtransaction_without_a_flag_uses_pessimistic_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--num=300",
            "--benchmarks=randomtransaction,updaterandomcursor,readrandom",
        ],
    );
    assert!(ok, "{err}");
    let (_, line) = txn_counts(&out, "randomtransaction");
    assert!(
        line.contains("pessimistic transactions, as no transaction flag was given"),
        "{line}"
    );
    verified(&out, 2);
    // The plain steps of the run stay plain.
    let readrandom = out
        .lines()
        .skip_while(|l| !l.starts_with("readrandom"))
        .nth(1);
    assert!(!readrandom.unwrap_or("").contains("transactions:"), "{out}");
}

#[test]
fn batches_commit_as_one_transaction_each() {
    for engine in engines() {
        let dir = tempfile::tempdir().unwrap();
        let engine_flag = format!("--engine={engine}");
        let (ok, out, err) = bench(
            &dir.path().join("db"),
            &[
                &engine_flag,
                "--num=1000",
                "--batch_size=10",
                "--benchmarks=fillseq,readrandom",
                "--transaction_db",
            ],
        );
        assert!(ok, "{engine}: {err}");
        let ([commits, ..], line) = txn_counts(&out, "fillseq");
        assert_eq!(commits, 100, "{engine}: {line}");
        assert_eq!(parse(&out)[1].found, Some((1000, 1000)), "{engine}: {out}");
    }
}

#[test]
fn sets_whose_sums_differ_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (ok, _, err) = bench(&db, &["--num=100", "--benchmarks=randomtransaction"]);
    assert!(ok, "{err}");
    // A counter of set 1 that no transaction added to set 2.
    let mut key = b"0001".to_vec();
    key.extend_from_slice(&1_000_000u64.to_be_bytes());
    key.extend_from_slice(b"00000000");
    let options = strata::Options::default();
    let store = strata::Db::open(&db, options).unwrap();
    store.put(&key, 999u64.to_be_bytes()).unwrap();
    store.close().unwrap();
    let (ok, out, err) = bench(
        &db,
        &[
            "--num=100",
            "--use_existing_db",
            "--benchmarks=randomtransaction",
        ],
    );
    assert!(!ok, "{out}");
    assert!(err.contains("verification failed"), "{err}");
    assert!(err.contains("set 1:") && err.contains("set 2:"), "{err}");
}

#[test]
fn bad_transaction_flags_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for (flags, named) in [
        (
            vec!["--transaction_db=1", "--optimistic_transaction_db=1"],
            vec!["--transaction_db", "--optimistic_transaction_db"],
        ),
        (vec!["--transaction_sets=0"], vec!["--transaction_sets"]),
        (
            vec!["--transaction_sets=10000"],
            vec!["--transaction_sets", "9999"],
        ),
        (
            vec!["--transaction_lock_timeout=-1"],
            vec!["--transaction_lock_timeout"],
        ),
        (vec!["--transaction_db=maybe"], vec!["--transaction_db"]),
    ] {
        let mut all = vec!["--benchmarks=randomtransaction", "--num=10"];
        all.extend(&flags);
        let (ok, out, err) = bench(&db, &all);
        assert!(!ok, "{flags:?} must fail:\n{out}");
        for n in named {
            assert!(err.contains(n), "{flags:?}: {n} not named in: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!db.exists(), "a refused run creates nothing");
}

#[test]
fn help_lists_the_transaction_flags_and_steps() {
    let (ok, out, err) = common::strata(&["bench", "--help"]);
    assert!(ok, "{err}");
    for words in [
        "--transaction_db",
        "--optimistic_transaction_db",
        "--transaction_lock_timeout",
        "--transaction_sets",
        "randomtransaction",
        "updaterandomcursor",
    ] {
        assert!(out.contains(words), "{words} missing from:\n{out}");
    }
}

#[test]
fn a_set_key_that_is_not_a_counter_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (ok, _, err) = bench(&db, &["--num=1", "--benchmarks=fillseq"]);
    assert!(ok, "{err}");
    // With --num=1 the only key of set 1 is key 0.
    let mut key = b"0001".to_vec();
    key.extend_from_slice(&0u64.to_be_bytes());
    key.extend_from_slice(b"00000000");
    let store = strata::Db::open(&db, strata::Options::default()).unwrap();
    store.put(&key, b"abc").unwrap();
    store.close().unwrap();
    for mode in ["--transaction_db", "--optimistic_transaction_db"] {
        let (ok, out, err) = bench(
            &db,
            &[
                "--num=1",
                "--use_existing_db",
                "--benchmarks=randomtransaction",
                mode,
            ],
        );
        assert!(!ok, "{out}");
        assert!(err.contains("3-byte value, not an 8-byte counter"), "{err}");
        let store = strata::Db::open(&db, strata::Options::default()).unwrap();
        assert_eq!(store.get(&key).unwrap().as_deref(), Some(&b"abc"[..]));
        store.close().unwrap();
    }
}

#[test]
fn rocksdb_transaction_db_refuses_what_the_crate_lacks() {
    if !engines().contains(&"rocksdb") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (flags, named) in [
        (
            vec![
                "--benchmarks=fillrandom",
                "--writes_per_range_tombstone=10",
                "--max_num_range_tombstones=1",
            ],
            "DeleteRange",
        ),
        (vec!["--benchmarks=fillrandom,compactall"], "CompactRange"),
        (
            vec!["--benchmarks=fillrandom,waitforcompaction"],
            "WaitForCompact",
        ),
        (
            vec!["--benchmarks=fillrandom", "--uncache_aggressiveness=300"],
            "SetOptions",
        ),
    ] {
        let mut all = vec!["--engine=rocksdb", "--num=100", "--transaction_db=1"];
        all.extend(&flags);
        let (ok, out, err) = bench(&dir.path().join("db"), &all);
        assert!(!ok, "{flags:?}: {out}");
        assert!(err.contains(named), "{flags:?}: {err}");
    }
    // The optimistic database has them all.
    let (ok, out, err) = bench(
        &dir.path().join("db"),
        &[
            "--engine=rocksdb",
            "--num=100",
            "--optimistic_transaction_db=1",
            "--benchmarks=fillrandom,compactall,waitforcompaction",
            "--writes_per_range_tombstone=10",
            "--max_num_range_tombstones=1",
            "--uncache_aggressiveness=300",
        ],
    );
    assert!(ok, "{out}\n{err}");
}

#[test]
fn fillseqingest_loads_every_key_through_one_ingested_table() {
    for engine in engines() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let engine_flag = format!("--engine={engine}");
        let steps = "--benchmarks=fillseqingest,readseq,readrandom";
        let (ok, out, err) = bench(&db, &[&engine_flag, steps, "--num=3000"]);
        if engine == "lmdb" {
            assert!(!ok, "{out}");
            assert!(
                err.contains("fillseqingest: this engine has no external table files"),
                "{err}"
            );
            continue;
        }
        assert!(ok, "{engine}: {err}");
        let lines = parse(&out);
        let step = |name: &str| step_line(&lines, name, &out);
        assert_eq!(step("fillseqingest").ops, 3000, "{engine}: {out}");
        assert!(out.contains("ingested in"), "{engine}: {out}");
        assert_eq!(
            step("readseq").ops,
            3000,
            "{engine}: every key is there: {out}"
        );
        assert_eq!(
            step("readrandom").found,
            Some((3000, 3000)),
            "{engine}: {out}"
        );
        assert!(
            !db.join("fillseqingest.sst").exists(),
            "{engine}: the table file was moved into the database"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = bench(
        &dir.path().join("db"),
        &["--benchmarks=fillseqingest", "--threads=2"],
    );
    assert!(!ok && err.contains("--threads=1"), "{err}");
}

/// A read step from tables reports its block cache misses and the pages it read from disk,
/// each per operation: the figures a from-disk comparison needs.
#[test]
fn read_steps_report_cache_misses_and_pages_from_disk_per_operation() {
    let (_dir, db) = bench_db(&[
        "--num=20000",
        "--benchmarks=fillrandom,flush",
        "--bloom_bits=10",
    ]);
    let (ok, out, err) = bench(
        &db,
        &[
            "--num=20000",
            "--benchmarks=readrandom",
            "--use_existing_db=1",
            "--bloom_bits=10",
            "--cache_size=1048576",
        ],
    );
    assert!(ok, "{err}");
    let reads = out
        .lines()
        .find(|l| l.contains(": reads: "))
        .unwrap_or_else(|| panic!("no reads line:\n{out}"));
    let per_op = |what: &str| -> f64 {
        let at = reads
            .find(what)
            .unwrap_or_else(|| panic!("{what}? {reads}"));
        let before = reads[..at].trim_end();
        let number = before.rsplit([' ', '(']).next().unwrap();
        number
            .parse()
            .unwrap_or_else(|_| panic!("{number:?} in {reads}"))
    };
    // 20,000 keys in a 1 MiB cache: some lookups miss it.
    let misses = per_op(" misses/op");
    assert!(misses > 0.0 && misses <= 3.0, "{reads}");
    assert!(per_op(" pages from disk/op") >= 0.0, "{reads}");
}

#[test]
fn blob_flags_reach_every_engine_with_blob_files_and_are_refused_on_lmdb() {
    for engine in engines().into_iter().filter(|&e| e != "lmdb") {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let (ok, out, err) = bench(
            &db,
            &[
                &format!("--engine={engine}"),
                "--num=2000",
                "--benchmarks=fillseq,flush,readrandom",
                "--enable_blob_files",
                "--min_blob_size=50",
                "--blob_file_size=1000000",
                "--enable_blob_garbage_collection",
            ],
        );
        assert!(ok, "{engine}: {err}");
        assert!(
            out.contains(
                "Blob files: values of 50 bytes or more, separated at flush, files cut at 1000000 bytes, garbage \
                 collection of the oldest 25% of the files, forced at 100% garbage\n"
            ),
            "{engine}: {out}"
        );
        let lines = parse(&out);
        assert_eq!(lines[1].found, Some((2000, 2000)), "{engine}: {out}");
        // The tree's shape names its blob files; the reads, the bytes read from them.
        let flushed = out.lines().find(|l| l.starts_with("flush ")).unwrap();
        assert!(flushed.contains(" | blob "), "{engine}: {flushed}");
        assert!(out.contains(" blob bytes read/op"), "{engine}: {out}");
        // Every value went to a blob file at the flush; the size on disk names their share.
        let blob_files = std::fs::read_dir(&db)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "blob")
            })
            .count();
        assert!(blob_files > 0, "{engine}");
        let total = out.lines().find(|l| l.starts_with("run total")).unwrap();
        assert!(
            total.contains(&format!(" in {blob_files} blob files / ")),
            "{engine}: {blob_files} blob files; {total}"
        );
        if engine == "strata" {
            // The table holds references, each the line of a record blob dump shows.
            let dir = db.to_str().unwrap();
            let (ok, tables, err) = common::strata(&["sst", "dump", dir]);
            assert!(ok, "{err}");
            let references: Vec<&str> = tables
                .lines()
                .filter_map(|l| l.split_once(",BLOB => ").map(|(_, r)| r))
                .collect();
            assert_eq!(references.len(), 2000, "{tables}");
            let (ok, blobs, err) = common::strata(&["blob", "dump", dir]);
            assert!(ok, "{err}");
            for r in references {
                assert!(
                    blobs.contains(&format!("\n{r}: key ")),
                    "{r} not in {blobs}"
                );
            }
            let (ok, verified, err) = common::strata(&["blob", "verify", dir]);
            assert!(ok && verified.contains(": OK, "), "{verified}{err}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    for (flags, named) in [
        (
            &["--engine=lmdb", "--enable_blob_files", "--min_blob_size=64"][..],
            &[
                "--enable_blob_files=true, --min_blob_size=64",
                "--engine=lmdb",
            ][..],
        ),
        (
            &["--blob_garbage_collection_age_cutoff=2"][..],
            &["blob_garbage_collection_age_cutoff is 2"][..],
        ),
    ] {
        let mut all = vec!["--benchmarks=fillseq", "--num=10"];
        all.extend(flags);
        let (ok, out, err) = bench(&db, &all);
        assert!(!ok, "{flags:?} must fail:\n{out}");
        for n in named {
            assert!(err.contains(n), "{flags:?}: {n} not named in: {err}");
        }
    }
}

/// `--partition_index_and_filters` writes tables with a partitioned index and filters on
/// every engine that has them (Strata and RocksDB), reads them back through random gets and
/// seeks, and the header says so.
#[test]
fn partitioned_index_and_filters_are_written_and_read_back() {
    for engine in engines().into_iter().filter(|&e| e != "lmdb") {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let (ok, out, err) = bench(
            &db,
            &[
                &format!("--engine={engine}"),
                "--num=3000",
                "--benchmarks=fillrandom,flush,readrandom,seekrandom",
                "--partition_index_and_filters",
                "--metadata_block_size=256",
                "--block_size=256",
                "--bloom_bits=10",
                "--compression_type=none",
            ],
        );
        assert!(ok, "{engine}: {err}");
        assert!(
            out.contains(
                "Index:      two-level index, partitioned filters, 256-byte partitions, top \
                 level pinned\n"
            ),
            "{engine}: {out}"
        );
        let lines = parse(&out);
        let step = |name: &str| step_line(&lines, name, &out);
        assert_eq!(step("fillrandom").ops, 3000, "{engine}");
        // fillrandom draws keys with repeats: about 63% of the key space is written, and
        // readrandom finds every written key it draws.
        let (found, of) = step("readrandom").found.unwrap();
        assert_eq!(of, 3000, "{engine}: {out}");
        assert!((1500..=2400).contains(&found), "{engine}: {found} of {of}");
        let (found, of) = step("seekrandom").found.unwrap();
        assert_eq!(of, 3000, "{engine}: {out}");
        assert!(found > 1500, "{engine}: {found} of {of}");
        if engine == "strata" {
            let (ok, tables, err) =
                common::strata(&["sst", "dump", "--limit", "0", db.to_str().unwrap()]);
            assert!(ok, "{err}");
            assert!(tables.contains("index: two-level, "), "{tables}");
            assert!(tables.contains("filter: partitioned, "), "{tables}");
        }
    }
}

/// `--data_block_index_type=1` writes data blocks with hash indexes on every engine that has
/// them (Strata and RocksDB), random gets find what they find without it, and the header
/// says so; Strata's tables then count their hashed blocks.
#[test]
fn data_block_hash_indexes_are_written_and_read_back() {
    for engine in engines().into_iter().filter(|&e| e != "lmdb") {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let (ok, out, err) = bench(
            &db,
            &[
                &format!("--engine={engine}"),
                "--num=3000",
                "--benchmarks=fillrandom,flush,readrandom",
                "--data_block_index_type=1",
                "--data_block_hash_table_util_ratio=0.5",
                "--block_size=256",
                "--compression_type=none",
            ],
        );
        assert!(ok, "{engine}: {err}");
        assert!(
            out.contains("Index:      data-block hash index (util ratio 0.5)\n"),
            "{engine}: {out}"
        );
        let lines = parse(&out);
        let step = |name: &str| step_line(&lines, name, &out);
        assert_eq!(step("fillrandom").ops, 3000, "{engine}");
        // fillrandom draws keys with repeats: about 63% of the key space is written, and
        // readrandom finds every written key it draws.
        let (found, of) = step("readrandom").found.unwrap();
        assert_eq!(of, 3000, "{engine}: {out}");
        assert!((1500..=2400).contains(&found), "{engine}: {found} of {of}");
        if engine == "strata" {
            let (ok, tables, err) =
                common::strata(&["sst", "dump", "--limit", "0", db.to_str().unwrap()]);
            assert!(ok, "{err}");
            assert!(
                tables.contains("data-block-index: binary_and_hash, "),
                "{tables}"
            );
        }
    }
}

/// `--readahead_size` reaches every engine's iterators: scans both ways and seeks read back
/// every entry with a fixed window.
#[test]
fn a_fixed_readahead_scans_and_seeks_every_entry() {
    for engine in engines() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let (ok, out, err) = bench(
            &db,
            &[
                &format!("--engine={engine}"),
                "--num=3000",
                "--benchmarks=fillseq,flush,readseq,readreverse,seekrandom",
                "--readahead_size=65536",
                "--block_size=256",
                "--compression_type=none",
            ],
        );
        assert!(ok, "{engine}: {err}");
        assert!(
            out.contains("Readahead:  65536 bytes per iterator read\n"),
            "{engine}: {out}"
        );
        let lines = parse(&out);
        let step = |name: &str| step_line(&lines, name, &out);
        assert_eq!(step("readseq").ops, 3000, "{engine}: {out}");
        assert_eq!(step("readreverse").ops, 3000, "{engine}: {out}");
        let (found, of) = step("seekrandom").found.unwrap();
        assert_eq!((found, of), (3000, 3000), "{engine}: {out}");
    }
}
