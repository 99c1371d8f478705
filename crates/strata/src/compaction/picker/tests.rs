//! Picker tests driven by `testdata/leveled.txt` and `testdata/universal.txt`, in the
//! data-driven format of CockroachDB and Pebble (the `datadriven` crate): each case is a
//! directive line with arguments, an input, `----`, and the expected output; `#` lines
//! between cases are comments.
//!
//! Directives (a file's cases share the tree the last `define` made):
//! - `define [trigger=N] [base=N] [multiplier=X] [levels=N] [style=leveled|universal]
//!   [ratio=N] [min_width=N] [max_width=N] [amp=N]`: the options and the tree, given as
//!   `Ln: FILE ...` lines in the notation of `version::edit::testdata` (`12:a-f:100` is file
//!   12, keys a to f, 100 bytes, sequence numbers 12). Prints the tree as the version holds it.
//! - `targets`: the base level and each level's target (`base=4 L4=30 L5=300 L6=3000`).
//! - `scores`: each non-zero compaction score, as `level_scores` gives it.
//! - `targets policy=rocksdb`, `scores policy=rocksdb`: the same under RocksDB's rules as
//!   the simulator's experimental policy models them (`compaction::sim`), for comparison;
//!   the engine does not use them.
//! - `pick`: the task picked, or `none`. Input lines `busy: N,N` (files being compacted) and
//!   `running: Ln:lo-hi` (a running compaction's output range) describe running work.
//!   Leveled: `Lx->Ly inputs=.. output_inputs=..` (numbers in the task's order) or
//!   `move Lx->Ly file=N,..`; universal: `reason Lx->Ly inputs=Ln:files Lm:files` with
//!   ` (move)` when no file needs a rewrite.
//!   `pick reads=N`: the same once reads have charged L0's files N bytes, with read-triggered
//!   compaction on (`read-triggered Lx->Ly ...` when that rule picks).
//! - `pending`: the pending compaction bytes estimate.
//!
//! To rewrite the expected outputs from what the code does now (then read the diff):
//! `REWRITE=1 cargo test -p strata --lib compaction::picker`.

use super::*;
use crate::compaction::sim;
use crate::compaction::style::{CompactionStyle, UniversalOptions};
use crate::version::edit::testdata::{self, take_arg};

fn numbers(files: &[Arc<FileMeta>]) -> String {
    files
        .iter()
        .map(|f| f.number.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn describe(task: &Option<CompactionTask>, style: CompactionStyle) -> String {
    let Some(t) = task else {
        return "none".into();
    };
    if style == CompactionStyle::Universal {
        let groups: Vec<String> = t
            .inputs
            .iter()
            .map(|g| format!("L{}:{}", g.level, numbers(&g.files)))
            .collect();
        return format!(
            "{} L{}->L{} inputs={}{}",
            t.reason.name(),
            t.start_level(),
            t.output_level,
            groups.join(" "),
            if t.is_trivial_move() { " (move)" } else { "" }
        );
    }
    if t.is_trivial_move() {
        return format!(
            "move L{}->L{} file={}",
            t.start_level(),
            t.output_level,
            numbers(&t.all_inputs().cloned().collect::<Vec<_>>())
        );
    }
    let why = match t.reason {
        Reason::ReadTriggered => "read-triggered ",
        Reason::Level0Idle => "idle ",
        _ => "",
    };
    format!(
        "{why}L{}->L{} inputs={} output_inputs={}",
        t.start_level(),
        t.output_level,
        numbers(t.files_at(t.start_level())),
        numbers(t.files_at(t.output_level))
    )
}

/// The options a `define` line sets (every argument optional).
fn define_options(case: &mut datadriven::TestCase) -> Result<PickerOptions, String> {
    let mut o = PickerOptions {
        num_levels: 7,
        level0_file_num_compaction_trigger: 4,
        max_bytes_for_level_base: 1000,
        max_bytes_for_level_multiplier: 10.0,
        style: CompactionStyle::Leveled,
        universal: UniversalOptions::default(),
        read_triggered: false,
        blob_gc_force: None,
        fifo: Default::default(),
        periodic_compaction_seconds: 0,
        table_ttl_seconds: 0,
    };
    let e = |e: datadriven::DataDrivenError| e.to_string();
    take_arg!(case, "trigger", o.level0_file_num_compaction_trigger);
    take_arg!(case, "base", o.max_bytes_for_level_base);
    take_arg!(case, "multiplier", o.max_bytes_for_level_multiplier);
    take_arg!(case, "levels", o.num_levels);
    take_arg!(case, "ratio", o.universal.size_ratio);
    take_arg!(case, "min_width", o.universal.min_merge_width);
    take_arg!(case, "max_width", o.universal.max_merge_width);
    take_arg!(case, "amp", o.universal.max_size_amplification_percent);
    if let Some(style) = case.try_take_arg::<String>("style").map_err(e)? {
        o.style = match style.as_str() {
            "leveled" => CompactionStyle::Leveled,
            "universal" => CompactionStyle::Universal,
            other => return Err(format!("unknown style {other}")),
        };
    }
    case.expect_empty().map_err(e)?;
    Ok(o)
}

/// The running work a `pick` input describes.
fn parse_busy(input: &str) -> Result<Busy, String> {
    let mut busy = Busy::default();
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let bad = || format!("bad pick input {line:?}");
        match line.split_once(':').ok_or_else(bad)? {
            ("busy", files) => {
                for n in files.split(',') {
                    busy.files.insert(n.trim().parse().map_err(|_| bad())?);
                }
            }
            ("running", output) => {
                let (level, range) = output.trim().split_once(':').ok_or_else(bad)?;
                let (lo, hi) = range.split_once('-').ok_or_else(bad)?;
                let level = level.trim_start_matches('L').parse().map_err(|_| bad())?;
                busy.outputs.push((level, lo.into(), hi.into()));
            }
            _ => return Err(bad()),
        }
    }
    Ok(busy)
}

/// Runs one case against the tree and options of the last `define`.
fn run_case(
    case: &mut datadriven::TestCase,
    tree: &mut Option<(Version, PickerOptions)>,
) -> Result<String, String> {
    if case.directive == "define" {
        let o = define_options(case)?;
        let version = testdata::parse_version(&case.input)?;
        let out = testdata::format_version(&version);
        *tree = Some((version, o));
        return Ok(out);
    }
    let (version, o) = tree.as_ref().ok_or("no tree: `define` one first")?;
    // RocksDB's rules, as the simulator's experimental policy models them.
    let rocksdb = match case
        .try_take_arg::<String>("policy")
        .map_err(|e| e.to_string())?
    {
        None => false,
        Some(p) if p == "rocksdb" => o.style == CompactionStyle::Leveled,
        Some(p) => return Err(format!("unknown policy {p}")),
    };
    let out = match case.directive.as_str() {
        "targets" => {
            let got = match rocksdb {
                true => sim::rocksdb_targets(version, o).0,
                false => level_targets(version, o),
            };
            let mut desc = format!("base={}", got.base_level);
            for (l, &target) in got.targets.iter().enumerate() {
                if target > 0 {
                    desc.push_str(&format!(" L{l}={target}"));
                }
            }
            desc
        }
        "scores" => {
            let scores = match rocksdb {
                true => {
                    let (targets, unnecessary) = sim::rocksdb_targets(version, o);
                    sim::rocksdb_scores(version, o, &targets, unnecessary)
                }
                false => level_scores(version, o),
            };
            let scores: Vec<String> = scores
                .iter()
                .enumerate()
                .filter(|(_, s)| **s != 0.0)
                .map(|(l, s)| format!("L{l}={s:.2}"))
                .collect();
            if scores.is_empty() {
                "none".into()
            } else {
                scores.join(" ")
            }
        }
        "pick" => {
            // `reads=N`: reads have charged L0 N bytes, and read-triggered compaction is on.
            let reads: Option<u64> = case.try_take_arg("reads").map_err(|e| e.to_string())?;
            // `writes=idle`: every write is flushed (`pending` by default).
            let writes = match case
                .try_take_arg::<String>("writes")
                .map_err(|e| e.to_string())?
            {
                None => Writes::Pending,
                Some(w) if w == "pending" => Writes::Pending,
                Some(w) if w == "idle" => Writes::Idle,
                Some(w) => return Err(format!("unknown writes={w}: idle or pending")),
            };
            let mut o = *o;
            if let Some(bytes) = reads {
                o.read_triggered = true;
                version.read_charge.set(bytes);
            }
            let task = pick(version, &o, &parse_busy(&case.input)?, writes);
            version.read_charge.set(0);
            describe(&task, o.style)
        }
        "pending" => pending_compaction_bytes(version, o).to_string(),
        other => return Err(format!("unknown directive {other}")),
    };
    Ok(out + "\n")
}

#[test]
fn leveled_picker_cases() {
    assert!(testdata::run("src/compaction/testdata/leveled.txt", run_case) >= 30);
}

#[test]
fn universal_picker_cases() {
    assert!(testdata::run("src/compaction/testdata/universal.txt", run_case) >= 24);
}

/// Forced blob garbage collection, case by case: the blob files (number, records, records
/// no table refers to), the tables (level, number, blob files they refer to), the age cutoff
/// and threshold, and the task picked (`Lx->Ly inputs=..`) or `none`.
#[test]
fn forced_blob_gc_rewrites_the_deepest_tables_referring_to_the_oldest_file() {
    use crate::version::{BlobCount, BlobFileMeta, VersionEdit};
    /// A table: level, number, key range, the blob files it refers to.
    type TableSpec = (usize, u64, (&'static str, &'static str), &'static [u64]);
    struct Case {
        name: &'static str,
        /// (number, records, garbage records): 100 bytes a record.
        blobs: &'static [(u64, u64, u64)],
        /// (level, table number, key range, blob files referred to).
        tables: &'static [TableSpec],
        force: Option<(f64, f64)>,
        want: &'static str,
    }
    let cases = [
        Case {
            name: "off",
            blobs: &[(1, 10, 9), (2, 10, 0)],
            tables: &[(6, 10, ("a", "c"), &[1, 2])],
            force: None,
            want: "none",
        },
        Case {
            name: "the oldest half holds 90% garbage: its referrers in L6 are rewritten there",
            blobs: &[(1, 10, 9), (2, 10, 0)],
            tables: &[(6, 10, ("a", "c"), &[1, 2]), (6, 11, ("d", "f"), &[2])],
            force: Some((0.5, 0.8)),
            want: "L6->L6 inputs=10 output_inputs=10",
        },
        Case {
            name: "below the threshold",
            blobs: &[(1, 10, 7), (2, 10, 0)],
            tables: &[(6, 10, ("a", "c"), &[1, 2])],
            force: Some((0.5, 0.8)),
            want: "none",
        },
        Case {
            name: "the cutoff counts the younger files too",
            blobs: &[(1, 10, 10 - 1), (2, 10, 0)],
            tables: &[(6, 10, ("a", "c"), &[1, 2])],
            force: Some((1.0, 0.8)),
            want: "none",
        },
        Case {
            name: "a cutoff below one file forces nothing",
            blobs: &[(1, 10, 9), (2, 10, 0)],
            tables: &[(6, 10, ("a", "c"), &[1, 2])],
            force: Some((0.25, 0.5)),
            want: "none",
        },
        Case {
            name: "every table of the level that refers to the oldest file",
            blobs: &[(1, 30, 24), (2, 10, 0)],
            tables: &[
                (0, 12, ("a", "b"), &[1]),
                (6, 10, ("a", "c"), &[1]),
                (6, 11, ("d", "f"), &[2]),
                (6, 13, ("g", "h"), &[1, 2]),
            ],
            force: Some((0.5, 0.5)),
            want: "L6->L6 inputs=10,13 output_inputs=10,13",
        },
        Case {
            name: "referrers only in L0 are left to L0's compactions",
            blobs: &[(1, 10, 8), (2, 10, 0)],
            tables: &[(0, 12, ("a", "b"), &[1, 2])],
            force: Some((0.5, 0.5)),
            want: "none",
        },
    ];
    for case in cases {
        let header_and_footer = (crate::blob::HEADER_LEN + crate::blob::FOOTER_LEN) as u64;
        let mut v = Version::default();
        let referring = |blob: u64| -> u64 {
            case.blobs
                .iter()
                .find(|b| b.0 == blob)
                .map_or(0, |b| b.1 - b.2)
        };
        let counted: std::collections::HashMap<u64, usize> = case
            .tables
            .iter()
            .flat_map(|t| t.3.iter())
            .fold(Default::default(), |mut m, b| {
                *m.entry(*b).or_default() += 1;
                m
            });
        let mut edit = VersionEdit::default();
        for &(number, records, _) in case.blobs {
            edit.new_blob_files.push(BlobFileMeta {
                number,
                records,
                file_size: header_and_footer + 100 * records,
                value_bytes: 90 * records,
                ..BlobFileMeta::default()
            });
        }
        for &(level, number, (lo, hi), refs) in case.tables {
            let mut f = testdata::parse_file(&format!("{number}:{lo}-{hi}:100")).unwrap();
            // The live records of each blob file, split between the tables referring to it.
            f.blob_refs = refs
                .iter()
                .map(|&b| {
                    let records = referring(b) / counted[&b] as u64;
                    BlobCount {
                        number: b,
                        records,
                        bytes: 100 * records,
                    }
                })
                .collect();
            edit.new_files.push((level, f));
        }
        v = v.apply(&edit).unwrap();
        let o = PickerOptions {
            num_levels: 7,
            level0_file_num_compaction_trigger: 4,
            max_bytes_for_level_base: 1 << 30,
            max_bytes_for_level_multiplier: 10.0,
            style: CompactionStyle::Leveled,
            universal: UniversalOptions::default(),
            read_triggered: false,
            blob_gc_force: case.force,
            fifo: Default::default(),
            periodic_compaction_seconds: 0,
            table_ttl_seconds: 0,
        };
        let got = describe(
            &pick(&v, &o, &Busy::default(), Writes::Pending),
            CompactionStyle::Leveled,
        );
        assert_eq!(got, case.want, "{}", case.name);
    }
}
