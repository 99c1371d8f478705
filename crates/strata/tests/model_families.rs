//! Column families against a model: one `BTreeMap` per family. Random puts, deletes and
//! batches that span families, gets and scans in both directions (as of now and as of a held
//! snapshot), flushes of one family or all, compactions, drops and re-creations, and reopens
//! (clean, and after a write that skipped the WAL, which a reopen must still find because
//! close flushes it), over many seeds. The families have different options: tiny memtables
//! for one (flushed all the time), large for another, universal compaction for the third, so
//! that one family's flushes and compactions run while the others keep old WALs alive. The
//! fifth is a TTL family read through a `ManualClock` that the run moves forward: its model
//! keeps each value's expiry and hides the expired ones, with the same clock.
//!
//! `STRATA_MODEL_SEED=<n>` runs one seed; `STRATA_MODEL_SEEDS=<n>` runs seeds 0 to n-1 (12 by
//! default). A failure names the seed and the operation.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use strata::internals::Rng;
use strata::{
    CfOptions, Clock, ColumnFamily, CompactionStyle, Db, ManualClock, Options, ReadOptions,
    Snapshot, WriteBatch, WriteOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// The index of the TTL family in the handles, and its ttl in seconds.
const TTL_FAMILY: usize = 4;
const TTL_SECS: u64 = 20;

/// The expiry (seconds) of each value of the TTL family's model.
type Expiries = BTreeMap<Vec<u8>, u64>;

/// What family `g` shows at time `now`: in the TTL family, the values not yet expired.
fn visible(models: &[Model], expiries: &Expiries, g: usize, now: u64) -> Model {
    let mut m = models[g].clone();
    if g == TTL_FAMILY {
        m.retain(|k, _| expiries.get(k).is_some_and(|&e| now <= e));
    }
    m
}

/// The families besides the default, with their options.
fn families(rng: &mut Rng) -> Vec<(&'static str, CfOptions)> {
    let small = 4096 + rng.below(4) as usize * 2048;
    let mut tiny = CfOptions::default();
    tiny.write_buffer_size = small;
    tiny.level0_file_num_compaction_trigger = 2;
    tiny.target_file_size_base = 16 << 10;
    tiny.max_bytes_for_level_base = 32 << 10;
    let mut large = CfOptions::default();
    large.write_buffer_size = 1 << 20;
    let mut universal = CfOptions::default();
    universal.write_buffer_size = small * 2;
    universal.compaction_style = CompactionStyle::Universal;
    let mut ttl = tiny.clone();
    ttl.ttl = Some(Duration::from_secs(TTL_SECS));
    vec![
        ("tiny", tiny),
        ("large", large),
        ("universal", universal),
        ("ttl", ttl),
    ]
}

fn open(dir: &Path, families: &[(&'static str, CfOptions)], clock: &Arc<ManualClock>) -> Db {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.write_buffer_size = 8192;
    options.clock = clock.clone();
    Db::open_cf(dir, options, families.iter().cloned()).unwrap()
}

/// The handles of the families, the default first.
fn handles(db: &Db) -> Vec<ColumnFamily> {
    let mut out = vec![db.default_cf()];
    for name in ["tiny", "large", "universal", "ttl"] {
        out.push(db.cf(name).unwrap());
    }
    out
}

fn scan(db: &Db, cf: &ColumnFamily, snapshot: Option<&Snapshot>, reverse: bool) -> Model {
    let mut read_options = ReadOptions::default();
    read_options.snapshot = snapshot.cloned();
    let mut it = db.iter_cf(cf, &read_options).unwrap();
    let mut out = Model::new();
    let mut order = Vec::new();
    if reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    while it.valid() {
        order.push(it.key().to_vec());
        out.insert(it.key().to_vec(), it.value().to_vec());
        if reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status().unwrap();
    let mut sorted = order.clone();
    sorted.sort();
    if reverse {
        sorted.reverse();
    }
    assert_eq!(order, sorted, "scan out of order");
    out
}

fn run(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(seed);
    let fams = families(&mut rng);
    let clock = Arc::new(ManualClock::new(1_000_000));
    let mut db = open(dir.path(), &fams, &clock);
    let mut cfs = handles(&db);
    let mut models: Vec<Model> = vec![Model::new(); cfs.len()];
    let mut expiries = Expiries::new();
    let mut held: Option<(Snapshot, Vec<Model>, Expiries)> = None;
    let key = |rng: &mut Rng| format!("k{:03}", rng.below(300)).into_bytes();
    let value = |rng: &mut Rng, op: usize| {
        let len = 10 + rng.below(200) as usize;
        let mut v = format!("v{op}-").into_bytes();
        v.resize(len, b'a' + (op % 26) as u8);
        v
    };
    for op in 0..2500 {
        let ctx = format!("seed {seed} op {op}");
        let f = rng.below(cfs.len() as u64) as usize;
        match rng.below(100) {
            0..=39 => {
                let (k, v) = (key(&mut rng), value(&mut rng, op));
                if f == TTL_FAMILY && rng.below(4) == 0 {
                    let ttl = rng.below(2 * TTL_SECS);
                    db.put_with_ttl_cf(&cfs[f], &k, &v, Duration::from_secs(ttl))
                        .unwrap();
                    expiries.insert(k.clone(), clock.now_secs() + ttl);
                } else if f == TTL_FAMILY {
                    db.put_cf(&cfs[f], &k, &v).unwrap();
                    expiries.insert(k.clone(), clock.now_secs() + TTL_SECS);
                } else {
                    db.put_cf(&cfs[f], &k, &v).unwrap();
                }
                models[f].insert(k, v);
            }
            40..=49 => {
                let k = key(&mut rng);
                db.delete_cf(&cfs[f], &k).unwrap();
                models[f].remove(&k);
                if f == TTL_FAMILY {
                    expiries.remove(&k);
                }
            }
            50..=59 => {
                let mut batch = WriteBatch::new();
                let mut next = models.clone();
                let mut next_expiries = expiries.clone();
                for _ in 0..1 + rng.below(6) {
                    let g = rng.below(cfs.len() as u64) as usize;
                    let k = key(&mut rng);
                    if rng.below(4) == 0 {
                        batch.delete_cf(&cfs[g], &k);
                        next[g].remove(&k);
                        if g == TTL_FAMILY {
                            next_expiries.remove(&k);
                        }
                    } else {
                        let v = value(&mut rng, op);
                        batch.put_cf(&cfs[g], &k, &v);
                        if g == TTL_FAMILY {
                            next_expiries.insert(k.clone(), clock.now_secs() + TTL_SECS);
                        }
                        next[g].insert(k, v);
                    }
                }
                let mut w = WriteOptions::default();
                w.disable_wal = rng.below(10) == 0;
                db.write(batch, &w).unwrap();
                models = next;
                expiries = next_expiries;
            }
            60..=74 => {
                let k = key(&mut rng);
                assert_eq!(
                    db.get_cf(&cfs[f], &k).unwrap().as_ref(),
                    visible(&models, &expiries, f, clock.now_secs()).get(&k),
                    "{ctx}: get {:?} in family {f}",
                    String::from_utf8_lossy(&k)
                );
            }
            75..=79 => {
                let reverse = rng.below(2) == 0;
                assert!(
                    scan(&db, &cfs[f], None, reverse)
                        == visible(&models, &expiries, f, clock.now_secs()),
                    "{ctx}: scan family {f}"
                );
            }
            80..=83 => match &held {
                Some((snap, then, then_expiries)) => {
                    let got = scan(&db, &cfs[f], Some(snap), rng.below(2) == 0);
                    let want = visible(then, then_expiries, f, clock.now_secs());
                    assert!(got == want, "{ctx}: snapshot scan of family {f}");
                    if rng.below(3) == 0 {
                        held = None;
                    }
                }
                None => held = Some((db.snapshot(), models.clone(), expiries.clone())),
            },
            84..=87 => db.flush_cf(&cfs[f]).unwrap(),
            88 => db.flush().unwrap(),
            89..=90 => db.compact_range_cf(&cfs[f], None, None).unwrap(),
            91..=92 if f > 0 => {
                // Drop and create again under the same name: a new, empty family.
                let name = cfs[f].name().to_string();
                db.drop_cf(&cfs[f]).unwrap();
                assert!(
                    db.get_cf(&cfs[f], b"k000").is_err(),
                    "{ctx}: dropped handle"
                );
                let options = fams.iter().find(|(n, _)| *n == name).unwrap().1.clone();
                cfs[f] = db.create_cf(&name, options).unwrap();
                models[f].clear();
                if f == TTL_FAMILY {
                    expiries.clear();
                }
                if let Some((_, then, _)) = &mut held {
                    // The held snapshot cannot read the old family through the new handle.
                    then[f].clear();
                }
            }
            93..=96 => {
                held = None;
                if rng.below(2) == 0 {
                    db.close().unwrap();
                } else {
                    drop(db);
                }
                db = open(dir.path(), &fams, &clock);
                cfs = handles(&db);
                for (g, cf) in cfs.iter().enumerate() {
                    assert!(
                        scan(&db, cf, None, false)
                            == visible(&models, &expiries, g, clock.now_secs()),
                        "{ctx}: family {g} after reopen"
                    );
                }
            }
            97 => clock.advance(Duration::from_secs(rng.below(TTL_SECS / 2))),
            _ => db.wait_for_compactions().unwrap(),
        }
    }
    db.close().unwrap();
    let db = open(dir.path(), &fams, &clock);
    for (g, cf) in handles(&db).iter().enumerate() {
        assert!(
            scan(&db, cf, None, true) == visible(&models, &expiries, g, clock.now_secs()),
            "seed {seed}: family {g} at the end"
        );
    }
}

#[test]
fn families_match_their_models() {
    let seeds: Vec<u64> = match (
        std::env::var("STRATA_MODEL_SEED"),
        std::env::var("STRATA_MODEL_SEEDS"),
    ) {
        (Ok(one), _) => vec![one.parse().expect("STRATA_MODEL_SEED is a number")],
        (_, Ok(n)) => (0..n.parse().expect("STRATA_MODEL_SEEDS is a number")).collect(),
        _ => (0..12).collect(),
    };
    for seed in seeds {
        run(seed);
    }
}
