//! Simulator tests. `testdata/sim.txt` pins the simulator's figures for small deterministic
//! runs (data-driven, as the picker tests): `run [num=N] [write_buffer_size=N]
//! [target_file_size_base=N] [max_bytes_for_level_base=N] [multiplier=X] [trigger=N]
//! [style=leveled|universal] [steps=(fillrandom,overwrite,flush,waitforcompaction)] [zipf=X] [seed=N] [speed=X]` with
//! one policy per input line (`strata`, `rocksdb-cut`, `strata+floor`, ...) prints each
//! policy's report. `REWRITE=1 cargo test -p strata --lib compaction::sim` rewrites the
//! expected outputs.

use super::*;
use crate::compaction::style::UniversalOptions;
use crate::version::edit::testdata::{self, take_arg};

/// 116-byte entries in a 141-byte-per-put memtable, as the engine measured; the level and
/// file sizes scaled down from the 2M-key benchmark by 10 (32 MiB base, 8 MiB files and
/// buffers there).
fn small(num: u64) -> SimOptions {
    SimOptions {
        num,
        entry_bytes: 116,
        memtable_entry_bytes: 141,
        write_buffer_size: 838_861,
        target_file_size_base: 838_861,
        max_compaction_bytes: 0,
        picker: PickerOptions {
            num_levels: 7,
            level0_file_num_compaction_trigger: 4,
            max_bytes_for_level_base: 3_355_443,
            max_bytes_for_level_multiplier: 10.0,
            style: CompactionStyle::Leveled,
            universal: UniversalOptions::default(),
            read_triggered: false,
            blob_gc_force: None,
            fifo: Default::default(),
            periodic_compaction_seconds: 0,
            table_ttl_seconds: 0,
        },
        policy: Policy::STRATA,
        distribution: Distribution::Uniform,
        compaction_speed: 0.0,
        level0_stop_writes_trigger: 36,
        seed: 1000,
    }
}

fn run_case(case: &mut datadriven::TestCase) -> Result<String, String> {
    if case.directive != "run" {
        return Err(format!("unknown directive {}", case.directive));
    }
    let e = |e: datadriven::DataDrivenError| e.to_string();
    let mut o = small(200_000);
    take_arg!(case, "num", o.num);
    take_arg!(case, "write_buffer_size", o.write_buffer_size);
    take_arg!(case, "target_file_size_base", o.target_file_size_base);
    take_arg!(
        case,
        "max_bytes_for_level_base",
        o.picker.max_bytes_for_level_base
    );
    take_arg!(case, "multiplier", o.picker.max_bytes_for_level_multiplier);
    take_arg!(case, "trigger", o.picker.level0_file_num_compaction_trigger);
    take_arg!(case, "seed", o.seed);
    take_arg!(case, "speed", o.compaction_speed);
    if let Some(theta) = case.try_take_arg("zipf").map_err(e)? {
        o.distribution = Distribution::Zipfian(theta);
    }
    if let Some(style) = case.try_take_arg::<String>("style").map_err(e)? {
        o.picker.style = match style.as_str() {
            "leveled" => CompactionStyle::Leveled,
            "universal" => CompactionStyle::Universal,
            other => return Err(format!("unknown style {other}")),
        };
    }
    let steps: Vec<String> = case.try_take_args("steps").map_err(e)?.unwrap_or_else(|| {
        ["fillrandom", "overwrite", "flush", "waitforcompaction"]
            .map(String::from)
            .to_vec()
    });
    let steps = steps
        .iter()
        .map(|s| Step::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    case.expect_empty().map_err(e)?;
    let mut out = String::new();
    for spec in case.input.lines().map(str::trim).filter(|l| !l.is_empty()) {
        o.policy = Policy::parse(spec)?;
        out.push_str(&run(&o, &steps).to_string());
    }
    Ok(out)
}

#[test]
fn simulated_runs() {
    let ran = testdata::run("src/compaction/testdata/sim.txt", |case, _: &mut ()| {
        run_case(case)
    });
    assert!(ran >= 4);
}

#[test]
fn policies_parse_and_name_themselves() {
    for (spec, name) in [
        ("strata", "strata"),
        ("rocksdb", "rocksdb"),
        ("strata+floor+cut", "strata+floor"),
        ("rocksdb-expand-scores", "strata+floor"),
        ("strata-cut", "strata-cut"),
        ("rocksdb-cut", "rocksdb-cut"),
        ("strata+floor+scores+expand+cut", "rocksdb"),
        ("rocksdb+roundrobin", "rocksdb+roundrobin"),
        ("strata+tier", "strata+tier"),
        ("strata+lazy", "strata+lazy"),
    ] {
        assert_eq!(Policy::parse(spec).unwrap().name(), name, "{spec}");
    }
    assert!(Policy::parse("leveldb").is_err());
    assert!(Policy::parse("strata+fast").is_err());
}

/// Under the engine's policy the simulator asks `picker::pick`: every task it runs is one
/// the engine's picker chose, so a change of the picker shows in the simulator's figures.
#[test]
fn strata_policy_is_the_engines_picker() {
    assert!(Policy::STRATA.picks_as_engine());
    assert!(!Policy::ROCKSDB.picks_as_engine());
    assert!(Policy::parse("strata+cut").unwrap().picks_as_engine());
}

/// Sequential keys never overlap: every compaction is a move, and each byte is written once.
#[test]
fn sequential_fill_only_moves() {
    let r = run(&small(100_000), &[Step::Sequential, Step::Flush]);
    assert_eq!(r.written(), r.user_bytes);
    assert!(r.levels.iter().all(|l| l.count == l.moves));
    assert_eq!(r.disk_bytes(), r.live_bytes);
}

/// No policy loses a key: once the run has settled, the tree's files hold every key written,
/// with or without compactions taking time (the `lazy` policy's runs in L0 included). One
/// fill, so that most keys are in one flush only and a file dropped unmerged shows.
#[test]
fn every_policy_keeps_every_key() {
    for spec in ["strata", "rocksdb", "strata+tier", "strata+lazy"] {
        for speed in [0.0, 8.0] {
            let mut o = small(200_000);
            o.policy = Policy::parse(spec).unwrap();
            o.compaction_speed = speed;
            let mut sim = Sim::new(&o);
            for step in [Step::Random, Step::Flush, Step::WaitForCompaction] {
                sim.step(step);
            }
            let held: std::collections::HashSet<u32> = sim
                .version
                .levels
                .iter()
                .flatten()
                .flat_map(|f| sim.keys[&f.number].iter().copied())
                .collect();
            let written: Vec<u32> = (0..o.num as u32)
                .filter(|&k| sim.written[k as usize])
                .collect();
            assert_eq!(held.len(), written.len(), "{spec} at speed {speed}");
            assert!(written.iter().all(|k| held.contains(k)), "{spec}");
        }
    }
}

/// The same options and seed give the same run.
#[test]
fn runs_are_deterministic() {
    let o = small(50_000);
    let a = run(&o, &[Step::Random, Step::Flush]).to_string();
    assert_eq!(a, run(&o, &[Step::Random, Step::Flush]).to_string());
}

/// The zipfian generator favours low ranks and stays in range.
#[test]
fn zipfian_ranks_are_skewed() {
    let z = Zipf::new(1000, 0.99);
    let mut rng = Rng::new(7);
    let mut counts = vec![0u32; 1000];
    for _ in 0..100_000 {
        counts[z.rank(&mut rng) as usize] += 1;
    }
    assert!(counts[0] > 10 * counts[100].max(1), "{:?}", &counts[..8]);
    assert!(counts[0] > counts[1] && counts[1] > counts[10]);
}
