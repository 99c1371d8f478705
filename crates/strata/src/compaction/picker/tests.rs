//! Picker tests driven by `testdata/leveled.txt`.

use super::*;
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

fn describe(task: &Option<CompactionTask>) -> String {
    match task {
        None => "none".into(),
        Some(t) if t.is_trivial_move() => format!(
            "move L{}->L{} file={}",
            t.level, t.output_level, t.inputs[0].number
        ),
        Some(t) => format!(
            "L{}->L{} inputs={} output_inputs={}",
            t.level,
            t.output_level,
            numbers(&t.inputs),
            numbers(&t.output_inputs)
        ),
    }
}

#[test]
fn leveled_picker_cases() {
    let text = include_str!("../testdata/leveled.txt");
    let mut ran = 0;
    for case in text.split("\ncase: ").skip(1) {
        let mut lines = case.lines();
        let name = lines.next().unwrap();
        let mut opts = PickerOptions {
            num_levels: 7,
            level0_file_num_compaction_trigger: 4,
            max_bytes_for_level_base: 1000,
            max_bytes_for_level_multiplier: 10.0,
        };
        let mut edit = VersionEdit::default();
        let mut busy = HashSet::new();
        let mut expect = None;
        let mut expect_targets = None;
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
                            other => panic!("{name}: unknown option {other}"),
                        }
                    }
                }
                "busy" => busy = rest.split(',').map(|n| n.trim().parse().unwrap()).collect(),
                "expect" => expect = Some(rest.to_string()),
                "targets" => expect_targets = Some(rest.to_string()),
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
        let got = describe(&pick(&version, &opts, &busy));
        assert_eq!(got, expect.unwrap(), "case '{name}'");
        ran += 1;
    }
    assert!(ran >= 8);
}
