//! Metamorphic test (Pebble's idea): one generated stream of operations (writes, batches,
//! merges, range deletions, reads, iterators with bounds in both directions, snapshots,
//! `multi_get`, flushes, compactions, ingests, checkpoints and reopens) runs on databases of
//! many random configurations, and every read must answer the same in all of them. The
//! options change how and where the data lives (memtable sizes, compaction style and shape,
//! block sizes and formats, filters, compression, blob files, caches, mmap reads), never what
//! a read returns, so any difference is a bug in one configuration's path.
//!
//! Each stream runs first on the default options; the output (one line per read) of every
//! other configuration must equal it. A failure names the stream's seed, the configuration
//! and the first line that differs with the operation that produced it.
//!
//! `STRATA_METAMORPHIC_SEEDS=<n>` runs n streams instead of 3, `STRATA_METAMORPHIC_OPS=<n>`
//! streams of n operations instead of 600.

use std::path::Path;
use std::sync::Arc;

use strata::internals::Rng;
use strata::{
    CompactionStyle, Compression, DataBlockIndexType, Db, IndexType, IngestOptions, Options,
    ReadOptions, Snapshot, SstWriter, StringAppend, WriteBatch, WriteOptions,
};

/// The keys the stream uses: few enough that operations meet the same keys often.
const KEYS: u64 = 200;

fn key(i: u64) -> Vec<u8> {
    format!("k{i:03}").into_bytes()
}

/// One operation of a stream.
#[derive(Debug, Clone)]
enum Op {
    Put(u64, usize),
    Merge(u64, usize),
    Delete(u64),
    DeleteRange(u64, u64),
    Batch(Vec<Op>),
    Get(u64, Option<usize>),
    MultiGet(Vec<u64>, Option<usize>),
    Scan {
        lower: Option<u64>,
        upper: Option<u64>,
        start: u64,
        forward: bool,
        steps: usize,
        snapshot: Option<usize>,
    },
    TakeSnapshot,
    ReleaseSnapshot(usize),
    Flush,
    CompactRange(Option<u64>, Option<u64>),
    /// A table of puts (and deletions, `None`) of increasing keys, ingested.
    Ingest(Vec<(u64, Option<usize>)>),
    /// A checkpoint, opened and read whole.
    Checkpoint,
    Reopen,
}

/// The value of the write at operation `n` of length class `len`: its length spans the blob
/// thresholds the configurations draw.
fn value(n: usize, len: usize) -> Vec<u8> {
    let mut v = format!("v{n}:").into_bytes();
    v.resize(len, b'a' + (n % 26) as u8);
    v
}

fn generate(seed: u64, count: usize) -> Vec<Op> {
    let mut rng = Rng::new(seed);
    let mut ops = Vec::with_capacity(count);
    let mut snapshots = 0usize;
    let len = |rng: &mut Rng| [4, 20, 100, 300][rng.below(4) as usize] + rng.below(8) as usize;
    let snapshot = |rng: &mut Rng, snapshots: usize| {
        (snapshots > 0 && rng.one_in(3)).then(|| rng.below(snapshots as u64) as usize)
    };
    for _ in 0..count {
        let k = rng.below(KEYS);
        let op = match rng.below(100) {
            0..=29 => Op::Put(k, len(&mut rng)),
            30..=37 => Op::Merge(k, len(&mut rng)),
            38..=44 => Op::Delete(k),
            45..=47 => Op::DeleteRange(k, k + 1 + rng.below(20)),
            48..=54 => Op::Batch(
                (0..1 + rng.below(6))
                    .map(|_| {
                        let k = rng.below(KEYS);
                        match rng.below(4) {
                            0 => Op::Delete(k),
                            1 => Op::Merge(k, len(&mut rng)),
                            _ => Op::Put(k, len(&mut rng)),
                        }
                    })
                    .collect(),
            ),
            55..=69 => Op::Get(k, snapshot(&mut rng, snapshots)),
            70..=73 => Op::MultiGet(
                (0..1 + rng.below(8)).map(|_| rng.below(KEYS)).collect(),
                snapshot(&mut rng, snapshots),
            ),
            74..=83 => {
                let lower = rng.one_in(2).then(|| rng.below(KEYS));
                let upper = rng.one_in(2).then(|| rng.below(KEYS + 10));
                Op::Scan {
                    lower,
                    upper,
                    start: rng.below(KEYS + 10),
                    forward: rng.one_in(2),
                    steps: 1 + rng.below(30) as usize,
                    snapshot: snapshot(&mut rng, snapshots),
                }
            }
            84..=86 => {
                snapshots += 1;
                Op::TakeSnapshot
            }
            87 if snapshots > 0 => Op::ReleaseSnapshot(rng.below(snapshots as u64) as usize),
            88..=90 => Op::Flush,
            91..=92 => {
                let a = rng.below(KEYS);
                let b = a + rng.below(KEYS);
                Op::CompactRange(rng.one_in(3).then_some(a), rng.one_in(3).then_some(b))
            }
            93..=95 => {
                let mut k = rng.below(KEYS);
                let mut entries = Vec::new();
                for _ in 0..1 + rng.below(12) {
                    entries.push((k, (!rng.one_in(5)).then(|| len(&mut rng))));
                    k += 1 + rng.below(5);
                }
                Op::Ingest(entries)
            }
            96 => Op::Checkpoint,
            97 => Op::Reopen,
            _ => Op::Put(k, len(&mut rng)),
        };
        ops.push(op);
    }
    ops
}

/// A configuration drawn from `rng` (configuration 0 is the defaults).
fn config(rng: &mut Rng) -> Options {
    let mut o = base_options();
    let pick = |rng: &mut Rng, n: u64| rng.below(n);
    o.write_buffer_size = [4 << 10, 8 << 10, 64 << 10, 4 << 20][pick(rng, 4) as usize];
    o.max_write_buffer_number = 2 + pick(rng, 3) as usize;
    o.compaction_style = match pick(rng, 3) {
        0 => CompactionStyle::Universal,
        _ => CompactionStyle::Leveled,
    };
    o.disable_auto_compactions = rng.one_in(5);
    let trigger = [1, 2, 4, 8][pick(rng, 4) as usize];
    o.level0_file_num_compaction_trigger = trigger;
    o.level0_slowdown_writes_trigger = trigger * 8;
    o.level0_stop_writes_trigger = trigger * 16;
    o.target_file_size_base = [4 << 10, 32 << 10, 2 << 20][pick(rng, 3) as usize];
    o.max_bytes_for_level_base = [16 << 10, 256 << 10, 10 << 20][pick(rng, 3) as usize];
    o.max_bytes_for_level_multiplier = [2.0, 4.0, 10.0][pick(rng, 3) as usize];
    o.num_levels = 3 + pick(rng, 5) as usize;
    o.block_size = [128, 512, 4096, 16384][pick(rng, 4) as usize];
    o.block_restart_interval = [1, 2, 16][pick(rng, 3) as usize];
    o.bloom_bits_per_key = [0, 1, 10][pick(rng, 3) as usize];
    o.compression = [
        Compression::None,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ][pick(rng, 4) as usize];
    o.block_cache_size = [0, 16 << 10, 8 << 20][pick(rng, 3) as usize];
    o.cache_index_and_filter_blocks = rng.one_in(2);
    if rng.one_in(3) {
        o.index_type = IndexType::TwoLevelIndexSearch;
        o.partition_filters = rng.one_in(2);
        o.metadata_block_size = [64, 256, 4096][pick(rng, 3) as usize];
    }
    if rng.one_in(3) {
        o.data_block_index_type = DataBlockIndexType::BinaryAndHash;
    }
    o.allow_mmap_reads = rng.one_in(4);
    o.memtable_prefix_bloom_size_ratio = [0.0, 0.1][pick(rng, 2) as usize];
    o.memtable_point_index_ratio = [0.0, 0.02, 0.125][pick(rng, 3) as usize];
    if rng.one_in(3) {
        o.enable_blob_files = true;
        o.min_blob_size = [0, 16, 200][pick(rng, 3) as usize];
        o.blob_file_size = [1 << 10, 64 << 10][pick(rng, 2) as usize];
        o.blob_separation_at_write = rng.one_in(2);
        o.enable_blob_garbage_collection = rng.one_in(2);
        o.blob_garbage_collection_age_cutoff = [0.25, 1.0][pick(rng, 2) as usize];
    }
    o.max_subcompactions = 1 + pick(rng, 3) as usize;
    o
}

/// What every configuration shares: the merge operator the stream's merges need.
fn base_options() -> Options {
    let mut o = Options::default();
    o.create_if_missing = true;
    o.merge_operator = Some(Arc::new(StringAppend::new(b",")));
    o
}

fn printable(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn shown(v: Option<Vec<u8>>) -> String {
    v.map_or("-".into(), |v| printable(&v))
}

/// Runs `ops` on a database with `options` under `dir`; one output line per read (and per
/// operation that fails).
fn run(ops: &[Op], options: &Options, dir: &Path) -> Vec<String> {
    let path = dir.join("db");
    let mut db = Db::open(&path, options.clone()).unwrap();
    let mut snapshots: Vec<Option<Snapshot>> = Vec::new();
    let mut out = Vec::new();
    let read_at = |snapshots: &[Option<Snapshot>], s: Option<usize>| {
        let mut r = ReadOptions::default();
        r.snapshot = s.and_then(|i| snapshots.get(i).cloned().flatten());
        r
    };
    for (n, op) in ops.iter().enumerate() {
        let line = match op {
            Op::Put(k, len) => db.put(key(*k), value(n, *len)).err().map(|e| e.to_string()),
            Op::Merge(k, len) => db
                .merge(key(*k), value(n, *len))
                .err()
                .map(|e| e.to_string()),
            Op::Delete(k) => db.delete(key(*k)).err().map(|e| e.to_string()),
            Op::DeleteRange(a, b) => db
                .delete_range(key(*a), key(*b))
                .err()
                .map(|e| e.to_string()),
            Op::Batch(writes) => {
                let mut batch = WriteBatch::new();
                for (i, w) in writes.iter().enumerate() {
                    match w {
                        Op::Put(k, len) => batch.put(key(*k), value(n * 16 + i, *len)),
                        Op::Merge(k, len) => batch.merge(key(*k), value(n * 16 + i, *len)),
                        Op::Delete(k) => batch.delete(key(*k)),
                        other => unreachable!("{other:?} in a batch"),
                    };
                }
                db.write(batch, &WriteOptions::default())
                    .err()
                    .map(|e| e.to_string())
            }
            Op::Get(k, s) => Some(match db.get_opt(key(*k), &read_at(&snapshots, *s)) {
                Ok(v) => format!("get {k} {s:?} = {}", shown(v)),
                Err(e) => format!("get {k}: {e}"),
            }),
            Op::MultiGet(keys, s) => {
                let ks: Vec<Vec<u8>> = keys.iter().map(|&k| key(k)).collect();
                let got = db.multi_get_opt(&ks, &read_at(&snapshots, *s));
                let shown: Vec<String> = got
                    .into_iter()
                    .map(|r| match r {
                        Ok(v) => shown(v),
                        Err(e) => format!("error {e}"),
                    })
                    .collect();
                Some(format!("multi_get {keys:?} {s:?} = {shown:?}"))
            }
            Op::Scan {
                lower,
                upper,
                start,
                forward,
                steps,
                snapshot,
            } => {
                let mut r = read_at(&snapshots, *snapshot);
                r.lower_bound = lower.map(key);
                r.upper_bound = upper.map(key);
                let mut it = db.iter(&r);
                match forward {
                    true => it.seek(key(*start)),
                    false => it.seek_for_prev(key(*start)),
                }
                let mut seen = Vec::new();
                while it.valid() && seen.len() < *steps {
                    seen.push(format!("{}={}", printable(it.key()), printable(it.value())));
                    match forward {
                        true => it.next(),
                        false => it.prev(),
                    }
                }
                let status = it.status().err().map(|e| format!(" error {e}"));
                Some(format!(
                    "scan {lower:?}..{upper:?} from {start} {} {snapshot:?}: {}{}",
                    if *forward { "forward" } else { "backward" },
                    seen.join(" "),
                    status.unwrap_or_default()
                ))
            }
            Op::TakeSnapshot => {
                snapshots.push(Some(db.snapshot()));
                None
            }
            Op::ReleaseSnapshot(i) => {
                if let Some(s) = snapshots.get_mut(*i) {
                    *s = None;
                }
                None
            }
            Op::Flush => db.flush().err().map(|e| e.to_string()),
            Op::CompactRange(a, b) => {
                let (a, b) = (a.map(key), b.map(key));
                db.compact_range(a.as_deref(), b.as_deref())
                    .err()
                    .map(|e| e.to_string())
            }
            Op::Ingest(entries) => {
                let file = dir.join(format!("ingest-{n}.sst"));
                let mut w = SstWriter::create(&file, options).unwrap();
                for (i, (k, len)) in entries.iter().enumerate() {
                    match len {
                        Some(len) => w.put(key(*k), value(n * 16 + i, *len)).unwrap(),
                        None => w.delete(key(*k)).unwrap(),
                    }
                }
                w.finish().unwrap();
                db.ingest(&[&file], &IngestOptions::default())
                    .err()
                    .map(|e| format!("ingest: {e}"))
            }
            Op::Checkpoint => {
                let at = dir.join(format!("checkpoint-{n}"));
                db.checkpoint(&at).unwrap();
                let copy = Db::open(&at, options.clone()).unwrap();
                let all = contents(&copy);
                copy.close().unwrap();
                Some(format!("checkpoint {n}: {all}"))
            }
            Op::Reopen => {
                // Snapshots do not survive a reopen.
                snapshots.iter_mut().for_each(|s| *s = None);
                db.close().unwrap();
                db = Db::open(&path, options.clone()).unwrap();
                None
            }
        };
        if let Some(line) = line {
            out.push(format!("{n}: {line}"));
        }
    }
    out.push(format!("end: {}", contents(&db)));
    drop(snapshots);
    db.close().unwrap();
    out
}

/// Every key and value of `db`, as one line.
fn contents(db: &Db) -> String {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut all = Vec::new();
    while it.valid() {
        all.push(format!("{}={}", printable(it.key()), printable(it.value())));
        it.next();
    }
    if let Err(e) = it.status() {
        all.push(format!("error {e}"));
    }
    all.join(" ")
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn every_configuration_reads_the_same() {
    let streams = env_or("STRATA_METAMORPHIC_SEEDS", 3);
    let count = env_or("STRATA_METAMORPHIC_OPS", 600) as usize;
    for seed in 1..=streams {
        let ops = generate(seed, count);
        let dir = tempfile::tempdir().unwrap();
        let reference = run(&ops, &base_options(), &dir.path().join("reference"));
        let mut rng = Rng::new(seed ^ 0x6d65_7461);
        for c in 1..=4 {
            let options = config(&mut rng);
            let dir = tempfile::tempdir().unwrap();
            let got = run(&ops, &options, dir.path());
            if let Some(i) =
                (0..reference.len().max(got.len())).find(|&i| reference.get(i) != got.get(i))
            {
                let n: Option<usize> = got
                    .get(i)
                    .or(reference.get(i))
                    .and_then(|l| l.split(':').next()?.parse().ok());
                panic!(
                    "stream {seed}, configuration {c} reads differently from the defaults\n\
                     operation: {:?}\n defaults: {:?}\n this one: {:?}\n options: {options:?}",
                    n.and_then(|n| ops.get(n)),
                    reference.get(i),
                    got.get(i),
                );
            }
        }
    }
}
