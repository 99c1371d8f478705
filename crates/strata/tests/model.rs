//! The database against a `BTreeMap` model: random puts, deletes, single-deletes, batches,
//! gets, snapshot reads, iterations in both directions with bounds, flushes and reopens, over
//! many seeds, with tiny memtables and level targets so that many flushes and compactions
//! happen (automatic and manual, with snapshots alive), and random table options
//! (compression, block size, restart interval, filters, caches), leveled and universal
//! compaction (the style may change at a reopen), several background jobs and
//! subcompactions. Debug builds check the version invariants after every compaction.
//!
//! A failure prints the seed; rerun one seed with `STRATA_MODEL_SEED=<n>`.

use std::collections::{BTreeMap, HashMap};

use strata::internals::Rng;
use strata::{
    CompactionStyle, Db, Options, ReadOptions, Snapshot, UniversalOptions, WriteBatch, WriteOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

struct Harness {
    rng: Rng,
    model: Model,
    /// Puts since the last delete, per key: single-delete is only legal when this is <= 1.
    puts_since_delete: HashMap<Vec<u8>, u32>,
    snapshots: Vec<(Snapshot, Model)>,
    keyspace: u64,
}

impl Harness {
    fn key(&mut self) -> Vec<u8> {
        if self.rng.one_in(50) {
            return Vec::new();
        }
        format!("k{:04}", self.rng.below(self.keyspace)).into_bytes()
    }

    fn value(&mut self) -> Vec<u8> {
        let max = if self.rng.one_in(20) { 3000 } else { 40 };
        let len = self.rng.below(max);
        (0..len).map(|_| b'a' + self.rng.below(26) as u8).collect()
    }

    /// Adds one random update to `batch` and applies it to `model`.
    fn random_update(&mut self, batch: &mut WriteBatch, model: &mut Model) {
        let key = self.key();
        let roll = self.rng.below(10);
        let puts = self.puts_since_delete.get(&key).copied().unwrap_or(0);
        if roll < 6 {
            let v = self.value();
            batch.put(&key, &v);
            model.insert(key.clone(), v);
            self.puts_since_delete.insert(key, puts + 1);
        } else if roll < 9 || puts > 1 {
            batch.delete(&key);
            model.remove(&key);
            self.puts_since_delete.insert(key, 0);
        } else {
            batch.single_delete(&key);
            model.remove(&key);
            self.puts_since_delete.insert(key, 0);
        }
    }
}

fn options(rng: &mut Rng, num_levels: usize) -> Options {
    use strata::Compression;
    let compression = [
        Compression::None,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ][rng.below(4) as usize];
    Options {
        create_if_missing: true,
        write_buffer_size: 4096 << rng.below(5),
        max_write_buffer_number: 2 + rng.below(3) as usize,
        block_size: 128 << rng.below(6),
        block_restart_interval: 1 + rng.below(16) as usize,
        bloom_bits_per_key: [0, 1, 10][rng.below(3) as usize],
        block_cache_size: [0, 4096, 1 << 20][rng.below(3) as usize],
        cache_index_and_filter_blocks: rng.one_in(2),
        max_open_files: 1 + rng.below(20) as usize,
        level0_file_num_compaction_trigger: 1 + rng.below(4) as usize,
        level0_slowdown_writes_trigger: 8,
        level0_stop_writes_trigger: 12,
        max_bytes_for_level_base: 8192 << rng.below(5),
        max_bytes_for_level_multiplier: [2.0, 4.0, 10.0][rng.below(3) as usize],
        num_levels,
        target_file_size_base: 2048 << rng.below(5),
        disable_auto_compactions: rng.one_in(8),
        compaction_style: if rng.one_in(3) {
            CompactionStyle::Universal
        } else {
            CompactionStyle::Leveled
        },
        universal: UniversalOptions {
            size_ratio: [1, 10, 50][rng.below(3) as usize],
            max_size_amplification_percent: [25, 200][rng.below(2) as usize],
            max_merge_width: [3, usize::MAX][rng.below(2) as usize],
            ..UniversalOptions::default()
        },
        max_background_jobs: 1 + rng.below(4) as usize,
        max_subcompactions: 1 + rng.below(3) as usize,
        max_compaction_bytes: [0, 4096][rng.below(2) as usize],
        compression,
        ..Options::default()
    }
}

/// Checks a random walk of `it` (seeks, then a mix of next and prev) against `model`
/// restricted to the bounds.
fn check_walk(
    rng: &mut Rng,
    it: &mut strata::DbIterator,
    model: &Model,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
    context: &str,
) {
    let in_bounds = |k: &[u8]| lower.is_none_or(|l| k >= l) && upper.is_none_or(|u| k < u);
    let view: Vec<(&Vec<u8>, &Vec<u8>)> = model.iter().filter(|(k, _)| in_bounds(k)).collect();
    let target = format!("k{:04}", rng.below(220)).into_bytes();
    let mut pos: Option<usize> = match rng.below(4) {
        0 => {
            it.seek(&target);
            let i = view.partition_point(|(k, _)| k.as_slice() < target.as_slice());
            (i < view.len()).then_some(i)
        }
        1 => {
            it.seek_for_prev(&target);
            let i = view.partition_point(|(k, _)| k.as_slice() <= target.as_slice());
            i.checked_sub(1)
        }
        2 => {
            it.seek_to_first();
            (!view.is_empty()).then_some(0)
        }
        _ => {
            it.seek_to_last();
            view.len().checked_sub(1)
        }
    };
    for step in 0..rng.below(30) {
        match pos {
            Some(i) => {
                assert!(it.valid(), "{context}: step {step}: iterator ended early");
                assert_eq!(it.key(), view[i].0.as_slice(), "{context}: step {step}");
                assert_eq!(it.value(), view[i].1.as_slice(), "{context}: step {step}");
            }
            None => {
                assert!(
                    !it.valid(),
                    "{context}: step {step}: expected the end, got {:?}",
                    String::from_utf8_lossy(it.key())
                );
                it.status().unwrap();
                return;
            }
        }
        let i = pos.unwrap_or_default();
        if rng.one_in(2) {
            it.next();
            pos = (i + 1 < view.len()).then_some(i + 1);
        } else {
            it.prev();
            pos = i.checked_sub(1);
        }
    }
}

fn run_seed(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(seed);
    // Fixed per database: a database cannot be reopened with fewer levels than it uses.
    let num_levels = 2 + rng.below(6) as usize;
    let mut opts = options(&mut rng, num_levels);
    let mut db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut h = Harness {
        rng: Rng::new(seed ^ 0xabcdef),
        model: Model::new(),
        puts_since_delete: HashMap::new(),
        snapshots: Vec::new(),
        keyspace: 50 + rng.below(200),
    };
    let ops = 1500 + rng.below(1500);
    for op in 0..ops {
        let ctx = format!("seed {seed} op {op}");
        match h.rng.below(100) {
            0..=34 => {
                let mut batch = WriteBatch::new();
                let mut model = h.model.clone();
                h.random_update(&mut batch, &mut model);
                db.write(batch, &WriteOptions::default()).unwrap();
                h.model = model;
            }
            35..=44 => {
                let mut batch = WriteBatch::new();
                let mut model = h.model.clone();
                for _ in 0..1 + h.rng.below(10) {
                    h.random_update(&mut batch, &mut model);
                }
                db.write(batch, &WriteOptions::default()).unwrap();
                h.model = model;
            }
            45..=64 => {
                let key = h.key();
                assert_eq!(db.get(&key).unwrap().as_ref(), h.model.get(&key), "{ctx}");
            }
            65..=69 => {
                if h.snapshots.len() >= 4 {
                    let i = h.rng.below(4) as usize;
                    h.snapshots.swap_remove(i);
                }
                h.snapshots.push((db.snapshot(), h.model.clone()));
            }
            70..=79 if !h.snapshots.is_empty() => {
                let i = h.rng.below(h.snapshots.len() as u64) as usize;
                let key = h.key();
                let (snap, model) = &h.snapshots[i];
                assert_eq!(
                    db.get_at(snap, &key).unwrap().as_ref(),
                    model.get(&key),
                    "{ctx} snapshot read"
                );
                let snap = snap.clone();
                let model = model.clone();
                let mut it = db.iter(ReadOptions {
                    snapshot: Some(snap),
                    ..ReadOptions::default()
                });
                check_walk(&mut h.rng, &mut it, &model, None, None, &ctx);
            }
            80..=94 => {
                let bound = |h: &mut Harness| {
                    h.rng
                        .one_in(2)
                        .then(|| format!("k{:04}", h.rng.below(220)).into_bytes())
                };
                let lower = bound(&mut h);
                let upper = bound(&mut h);
                let mut it = db.iter(ReadOptions {
                    lower_bound: lower.clone(),
                    upper_bound: upper.clone(),
                    ..ReadOptions::default()
                });
                check_walk(
                    &mut h.rng,
                    &mut it,
                    &h.model,
                    lower.as_deref(),
                    upper.as_deref(),
                    &ctx,
                );
            }
            95 => {
                let a = format!("k{:04}", h.rng.below(220)).into_bytes();
                let b = format!("k{:04}", h.rng.below(220)).into_bytes();
                let got: Vec<_> = db
                    .range(a.clone()..=b.clone())
                    .collect::<Result<_, _>>()
                    .unwrap();
                let want: Vec<_> = h
                    .model
                    .iter()
                    .filter(|(k, _)| **k >= a && **k <= b)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(got, want, "{ctx} range");
            }
            96 => {
                let a = format!("k{:04}", h.rng.below(220)).into_bytes();
                let b = format!("k{:04}", h.rng.below(220)).into_bytes();
                match h.rng.below(3) {
                    0 => db.compact_range(Some(&a), Some(&b)).unwrap(),
                    1 if opts.compaction_style == CompactionStyle::Leveled => db
                        .compact_level(h.rng.below(opts.num_levels as u64 - 1) as usize)
                        .unwrap(),
                    1 => db.compact_all().unwrap(),
                    _ => db.wait_for_compactions().unwrap(),
                }
            }
            97 => db.flush().unwrap(),
            _ => {
                // Reopen: every acknowledged write must come back from tables and WALs.
                h.snapshots.clear();
                db.close().unwrap();
                opts = options(&mut rng, num_levels);
                db = Db::open(dir.path(), opts.clone()).unwrap();
                assert_eq!(db.recovery_report().dropped_records, 0, "{ctx}");
                let all: Model = db.range::<&[u8], _>(..).collect::<Result<_, _>>().unwrap();
                if all != h.model {
                    let diff: Vec<String> = all
                        .keys()
                        .chain(h.model.keys())
                        .filter(|k| all.get(*k) != h.model.get(*k))
                        .map(|k| {
                            format!(
                                "{}: db {:?} model {:?}",
                                String::from_utf8_lossy(k),
                                all.get(k).map(|v| String::from_utf8_lossy(v).into_owned()),
                                h.model
                                    .get(k)
                                    .map(|v| String::from_utf8_lossy(v).into_owned())
                            )
                        })
                        .collect();
                    panic!("{ctx} after reopen, differences:\n{}", diff.join("\n"));
                }
            }
        }
    }
    db.close().unwrap();
}

#[test]
fn database_matches_btreemap_model_across_reopens() {
    if let Ok(seed) = std::env::var("STRATA_MODEL_SEED") {
        run_seed(seed.parse().expect("STRATA_MODEL_SEED is a number"));
        return;
    }
    let seeds: u64 = std::env::var("STRATA_MODEL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    for seed in 0..seeds {
        run_seed(seed);
    }
}
