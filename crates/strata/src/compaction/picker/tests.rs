//! Picker tests driven by `testdata/leveled.txt`.

use super::*;
use crate::compaction::style::{CompactionStyle, UniversalOptions};
use crate::key::{append_internal_key, ValueKind};
use crate::version::VersionEdit;

fn ik(k: &str, seq: u64) -> Vec<u8> {
    let mut v = Vec::new();
    append_internal_key(&mut v, k.as_bytes(), seq, ValueKind::Put as u8);
    v
}

fn parse_file(spec: &str) -> FileMeta {
    let mut parts = spec.split(':');
    let number: u64 = parts.next().unwrap().parse().unwrap();
    let (lo, hi) = parts.next().unwrap().split_once('-').unwrap();
    let size: u64 = parts.next().unwrap().parse().unwrap();
    FileMeta {
        number,
        size,
        smallest: ik(lo, number),
        largest: ik(hi, number),
        smallest_seq: number,
        largest_seq: number,
        entries: 1,
        deletions: 0,
    }
}

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
    format!(
        "L{}->L{} inputs={} output_inputs={}",
        t.start_level(),
        t.output_level,
        numbers(t.files_at(t.start_level())),
        numbers(t.files_at(t.output_level))
    )
}

#[test]
fn leveled_picker_cases() {
    assert!(run_cases(include_str!("../testdata/leveled.txt")) >= 10);
}

#[test]
fn universal_picker_cases() {
    assert!(run_cases(include_str!("../testdata/universal.txt")) >= 8);
}

/// Runs every case of a test-data file; returns how many ran.
fn run_cases(text: &str) -> usize {
    let mut ran = 0;
    for case in text.split("\ncase: ").skip(1) {
        let mut lines = case.lines();
        let name = lines.next().unwrap();
        let mut opts = PickerOptions {
            num_levels: 7,
            level0_file_num_compaction_trigger: 4,
            max_bytes_for_level_base: 1000,
            max_bytes_for_level_multiplier: 10.0,
            style: CompactionStyle::Leveled,
            universal: UniversalOptions::default(),
        };
        let mut edit = VersionEdit::default();
        let mut busy = Busy::default();
        let mut expect = None;
        let mut expect_targets = None;
        let mut expect_pending = None;
        for line in lines.filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let (tag, rest) = line.split_once(':').unwrap();
            let rest = rest.trim();
            match tag {
                "options" => {
                    for kv in rest.split_whitespace() {
                        let (k, v) = kv.split_once('=').unwrap();
                        match k {
                            "trigger" => {
                                opts.level0_file_num_compaction_trigger = v.parse().unwrap()
                            }
                            "base" => opts.max_bytes_for_level_base = v.parse().unwrap(),
                            "multiplier" => {
                                opts.max_bytes_for_level_multiplier = v.parse().unwrap()
                            }
                            "levels" => opts.num_levels = v.parse().unwrap(),
                            "style" => {
                                opts.style = match v {
                                    "leveled" => CompactionStyle::Leveled,
                                    "universal" => CompactionStyle::Universal,
                                    other => panic!("{name}: unknown style {other}"),
                                }
                            }
                            "ratio" => opts.universal.size_ratio = v.parse().unwrap(),
                            "min_width" => opts.universal.min_merge_width = v.parse().unwrap(),
                            "max_width" => opts.universal.max_merge_width = v.parse().unwrap(),
                            "amp" => {
                                opts.universal.max_size_amplification_percent = v.parse().unwrap()
                            }
                            other => panic!("{name}: unknown option {other}"),
                        }
                    }
                }
                "busy" => busy.files = rest.split(',').map(|n| n.trim().parse().unwrap()).collect(),
                "running" => {
                    // A running compaction's output: `Ln:lo-hi`.
                    let (level, range) = rest.split_once(':').unwrap();
                    let (lo, hi) = range.split_once('-').unwrap();
                    let level = level.trim_start_matches('L').parse().unwrap();
                    busy.outputs.push((level, lo.into(), hi.into()));
                }
                "expect" => expect = Some(rest.to_string()),
                "targets" => expect_targets = Some(rest.to_string()),
                "pending" => expect_pending = Some(rest.to_string()),
                level if level.starts_with('L') => {
                    let l: usize = level[1..].parse().unwrap();
                    for spec in rest.split_whitespace() {
                        edit.new_files.push((l, parse_file(spec)));
                    }
                }
                other => panic!("{name}: unknown line {other}"),
            }
        }
        let version = Version::default().apply(&edit).unwrap();
        if let Some(t) = expect_targets {
            let got = level_targets(&version, &opts);
            let mut desc = format!("base={}", got.base_level);
            for (l, &target) in got.targets.iter().enumerate() {
                if target > 0 {
                    desc.push_str(&format!(" L{l}={target}"));
                }
            }
            assert_eq!(desc, t, "case '{name}': targets");
        }
        let got = describe(&pick(&version, &opts, &busy), opts.style);
        assert_eq!(got, expect.unwrap(), "case '{name}'");
        if let Some(p) = expect_pending {
            let got = pending_compaction_bytes(&version, &opts);
            assert_eq!(got.to_string(), p, "case '{name}': pending bytes");
        }
        ran += 1;
    }
    ran
}
