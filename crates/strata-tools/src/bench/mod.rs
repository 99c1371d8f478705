//! `strata bench`: db_bench's benchmarks on a Strata database.
//!
//! Each step of `--benchmarks` runs on `--threads` threads, each doing `--num` (writes) or
//! `--reads` (reads) operations as in db_bench, and prints db_bench's result line followed by
//! lines that explain it: write-amp from the engine's IO accounting, disk IO and CPU time of
//! the process from /proc, latency percentiles with `--histogram`, and the memory state.

mod args;
mod gen;
mod report;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use strata::table::Compression;
use strata::util::Rng;
use strata::{Db, DbStats, Options, ReadOptions, WriteOptions};

pub use args::BenchArgs;
use gen::{fill_key, ValueGen};
use report::{dir_size, mb, result_line, Histogram, ProcSample, ThreadStats};

type BoxError = Box<dyn std::error::Error>;

/// Threads started so far in this process. As in db_bench, thread seeds are
/// `--seed + (number of threads started, this one included)`, so successive steps of one run
/// draw different keys (readrandom after fillrandom finds about 63% of its keys, not all).
static THREADS_STARTED: AtomicU64 = AtomicU64::new(0);

/// What kind of work a step does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    Fill(KeyOrder),
    FillSync,
    Delete(KeyOrder),
    ReadRandom {
        missing: bool,
    },
    ReadSeq {
        reverse: bool,
    },
    SeekRandom,
    /// Readers (random gets, or seeks) while one more thread writes.
    WhileWriting {
        seek: bool,
    },
    Flush,
    Compact(Option<usize>),
    WaitForCompaction,
    Stats,
    LevelStats,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum KeyOrder {
    Sequential,
    Random,
    UniqueRandom,
}

fn parse_step(name: &str) -> Result<Step, String> {
    Ok(match name {
        "fillseq" => Step::Fill(KeyOrder::Sequential),
        "fillrandom" | "overwrite" => Step::Fill(KeyOrder::Random),
        "filluniquerandom" => Step::Fill(KeyOrder::UniqueRandom),
        "fillsync" => Step::FillSync,
        "deleteseq" => Step::Delete(KeyOrder::Sequential),
        "deleterandom" => Step::Delete(KeyOrder::Random),
        "readrandom" => Step::ReadRandom { missing: false },
        "readmissing" => Step::ReadRandom { missing: true },
        "readseq" => Step::ReadSeq { reverse: false },
        "readreverse" => Step::ReadSeq { reverse: true },
        "seekrandom" => Step::SeekRandom,
        "readwhilewriting" => Step::WhileWriting { seek: false },
        "seekrandomwhilewriting" => Step::WhileWriting { seek: true },
        "flush" => Step::Flush,
        "waitforcompaction" => Step::WaitForCompaction,
        "stats" => Step::Stats,
        "levelstats" => Step::LevelStats,
        "compact" | "compactall" => Step::Compact(None),
        "compact0" => Step::Compact(Some(0)),
        "compact1" => Step::Compact(Some(1)),
        other => return Err(format!("unknown benchmark '{other}'")),
    })
}

/// Runs the benchmarks named in `args`.
pub fn run(args: &BenchArgs) -> Result<(), BoxError> {
    if args.key_size == 0 {
        return Err("--key_size must be at least 1".into());
    }
    if args.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if !(0.0..=1.0).contains(&args.compression_ratio) {
        return Err("--compression_ratio must be between 0 and 1".into());
    }
    let steps: Vec<(String, Step)> = args
        .benchmarks
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|name| parse_step(name).map(|s| (name.to_string(), s)))
        .collect::<Result<_, _>>()?;

    let path = args.db.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("strata-bench-{}", std::process::id()))
    });
    if !args.use_existing_db && path.exists() {
        remove_database(&path)?;
    }
    let options = Options {
        create_if_missing: !args.use_existing_db,
        write_buffer_size: args.write_buffer_size,
        max_write_buffer_number: args.max_write_buffer_number,
        compression: Compression::from_name(&args.compression_type)
            .ok_or("--compression_type is not supported")?,
        bloom_bits_per_key: args.bloom_bits.clamp(0, 100) as u32,
        block_cache_size: args.cache_size.max(0) as usize,
        cache_index_and_filter_blocks: args.cache_index_and_filter_blocks,
        block_size: args.block_size,
        target_file_size_base: args.target_file_size_base,
        max_bytes_for_level_base: args.max_bytes_for_level_base,
        max_bytes_for_level_multiplier: args.max_bytes_for_level_multiplier,
        num_levels: args.num_levels,
        level0_file_num_compaction_trigger: args.level0_file_num_compaction_trigger,
        level0_slowdown_writes_trigger: args.level0_slowdown_writes_trigger,
        level0_stop_writes_trigger: args.level0_stop_writes_trigger,
        disable_auto_compactions: args.disable_auto_compactions,
        ..Options::default()
    };
    let db = Db::open(&path, options).map_err(|e| format!("opening {}: {e}", path.display()))?;
    print_header(args, &path, &db);

    for (name, step) in steps {
        run_step(args, &db, &name, step)?;
    }
    db.close()?;
    if args.db.is_none() {
        let _ = std::fs::remove_dir_all(&path);
    }
    Ok(())
}

/// Removes a previous benchmark database, refusing directories that are not one.
fn remove_database(path: &std::path::Path) -> Result<(), BoxError> {
    let is_db = path.join("IDENTITY").exists();
    let is_empty = std::fs::read_dir(path)?.next().is_none();
    if !is_db && !is_empty {
        return Err(format!(
            "{} exists and is not a Strata database; refusing to delete it",
            path.display()
        )
        .into());
    }
    std::fs::remove_dir_all(path)?;
    Ok(())
}

fn print_header(args: &BenchArgs, path: &std::path::Path, db: &Db) {
    let entry = (args.key_size + args.value_size) as u64;
    println!("Strata:     version {}", env!("CARGO_PKG_VERSION"));
    println!("Database:   {}", path.display());
    println!("Keys:       {} bytes each", args.key_size);
    println!(
        "Values:     {} bytes each ({} bytes after compression)",
        args.value_size,
        (args.value_size as f64 * args.compression_ratio) as u64
    );
    println!("Entries:    {}", args.num);
    println!("Threads:    {}", args.threads);
    println!("RawSize:    {} (estimated)", mb(entry * args.num));
    println!(
        "WAL:        {}, sync {}",
        if args.disable_wal {
            "disabled"
        } else {
            "enabled"
        },
        if args.sync { "on" } else { "off" }
    );
    println!(
        "Memtable:   {} write buffer",
        mb(args.write_buffer_size as u64)
    );
    let r = db.recovery_report();
    if r.wal_files > 0 {
        println!(
            "Recovered:  {} entries from {} WAL files ({} read)",
            r.entries,
            r.wal_files,
            mb(r.bytes_read)
        );
    }
    println!("------------------------------------------------");
}

fn run_step(args: &BenchArgs, db: &Db, name: &str, step: Step) -> Result<(), BoxError> {
    match step {
        Step::WaitForCompaction | Step::Compact(_) => {
            let start = Instant::now();
            match step {
                Step::Compact(Some(level)) => db.compact_level(level)?,
                Step::Compact(None) => db.compact_all()?,
                _ => db.wait_for_compactions()?,
            }
            let s = db.stats();
            println!(
                "{:<12} : done in {:.3} seconds; files per level {:?}",
                name,
                start.elapsed().as_secs_f64(),
                s.level_files
            );
            return Ok(());
        }
        Step::Stats => {
            print!("{}", db.property("strata.stats").unwrap_or_default());
            return Ok(());
        }
        Step::LevelStats => {
            print!(
                "{}",
                db.property("strata.compaction-stats").unwrap_or_default()
            );
            return Ok(());
        }
        Step::Flush => {
            let start = Instant::now();
            db.flush()?;
            println!(
                "{:<12} : flushed in {:.3} seconds; {} tables in level 0",
                "flush",
                start.elapsed().as_secs_f64(),
                db.stats().level_files[0]
            );
            return Ok(());
        }
        _ => {}
    }
    let before_db = db.stats();
    let before_proc = ProcSample::now();
    let start = Instant::now();
    // In the *whilewriting steps the threads read (as readrandom or seekrandom) and one more
    // thread writes until they are done; as in db_bench, only the readers are reported.
    let (reader_step, with_writer) = match step {
        Step::WhileWriting { seek: false } => (Step::ReadRandom { missing: false }, true),
        Step::WhileWriting { seek: true } => (Step::SeekRandom, true),
        other => (other, false),
    };
    let readers_done = AtomicBool::new(false);
    let (results, writer_result) = std::thread::scope(|s| {
        let writer = with_writer.then(|| {
            let n = THREADS_STARTED.fetch_add(1, Ordering::Relaxed) + 1;
            let done = &readers_done;
            s.spawn(move || background_writer(args, db, done, n))
        });
        let handles: Vec<_> = (0..args.threads)
            .map(|_| {
                let n = THREADS_STARTED.fetch_add(1, Ordering::Relaxed) + 1;
                s.spawn(move || run_thread(args, db, reader_step, n))
            })
            .collect();
        let results: Vec<Result<ThreadStats, strata::Error>> = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect();
        readers_done.store(true, Ordering::Release);
        let writer_result = writer.map(|w| w.join().expect("writer thread panicked"));
        (results, writer_result)
    });
    let writes = match writer_result {
        Some(r) => Some(r.map_err(|e| format!("{name}: writer: {e}"))?),
        None => None,
    };
    let elapsed = start.elapsed().as_secs_f64();
    let after_proc = ProcSample::now();
    let after_db = db.stats();

    let mut total = ThreadStats::default();
    for r in results {
        total.merge(&r.map_err(|e| format!("{name}: {e}"))?);
    }
    let message = match reader_step {
        Step::ReadRandom { .. } | Step::SeekRandom => {
            format!("({} of {} found)", total.found, total.done)
        }
        _ => String::new(),
    };
    println!("{}", result_line(name, &total, elapsed, &message));
    if let Some(w) = writes {
        println!(
            "             : writer: {w} puts ({:.0}/s) beside the readers",
            w as f64 / elapsed.max(1e-9)
        );
    }
    print_explanation(
        args,
        db,
        &total,
        &before_db,
        &after_db,
        &before_proc,
        &after_proc,
    );
    Ok(())
}

fn print_explanation(
    args: &BenchArgs,
    db: &Db,
    total: &ThreadStats,
    before: &DbStats,
    after: &DbStats,
    before_proc: &ProcSample,
    after_proc: &ProcSample,
) {
    let ops = total.done.max(1) as f64;
    let user = after.user_bytes_written - before.user_bytes_written;
    let engine = after.io.total_written() - before.io.total_written();
    let write_amp = if user > 0 {
        format!("{:.2}", engine as f64 / user as f64)
    } else {
        "-".into()
    };
    println!(
        "             : write-amp {write_amp} (engine wrote {} for {} of user data) | disk write {}, disk read {:.0} B/op (/proc/self/io) | cpu {:.2} us/op",
        mb(engine),
        mb(user),
        mb(after_proc.disk_written.saturating_sub(before_proc.disk_written)),
        after_proc.disk_read.saturating_sub(before_proc.disk_read) as f64 / ops,
        (after_proc.cpu_seconds - before_proc.cpu_seconds) * 1e6 / ops,
    );
    if after.write_groups > before.write_groups {
        let batches = after.batches - before.batches;
        let groups = after.write_groups - before.write_groups;
        println!(
            "             : group commit {:.2} batches/group, {} WAL syncs",
            batches as f64 / groups as f64,
            after.wal_syncs - before.wal_syncs
        );
    }
    let levels: Vec<String> = after
        .level_files
        .iter()
        .zip(&after.level_bytes)
        .enumerate()
        .filter(|(_, (files, _))| **files > 0)
        .map(|(l, (files, bytes))| format!("L{l} {files} files {}", mb(*bytes)))
        .collect();
    println!(
        "             : tree: memtable {} ({} entries), {} immutable ({}), {} | db {} on disk",
        mb(after.active_memtable_bytes),
        after.active_memtable_entries,
        after.immutable_memtables,
        mb(after.immutable_memtable_bytes),
        if levels.is_empty() {
            "no tables".to_string()
        } else {
            levels.join(", ")
        },
        mb(dir_size(db.path())),
    );
    let checks = after.bloom_checks - before.bloom_checks;
    let misses = after.block_cache_misses - before.block_cache_misses;
    let hits = after.block_cache_hits - before.block_cache_hits;
    if checks + misses + hits > 0 {
        println!(
            "             : reads: {:.2} bloom checks/op ({:.1}% negative), block cache {} hits {} misses, {:.0} table bytes read/op",
            checks as f64 / ops,
            100.0 * (after.bloom_negatives - before.bloom_negatives) as f64 / checks.max(1) as f64,
            hits,
            misses,
            (after.table_bytes_read - before.table_bytes_read) as f64 / ops,
        );
    }
    let slowdowns = after.l0_slowdowns - before.l0_slowdowns;
    let stops = after.l0_stops - before.l0_stops;
    let mem_stalls = after.write_stalls - before.write_stalls;
    if slowdowns + stops + mem_stalls > 0 {
        println!(
            "             : write stalls: {} L0 slowdowns ({:.1} ms), {} L0 stops ({:.1} ms), {} memtable waits ({:.1} ms)",
            slowdowns,
            (after.l0_slowdown_micros - before.l0_slowdown_micros) as f64 / 1000.0,
            stops,
            (after.l0_stop_micros - before.l0_stop_micros) as f64 / 1000.0,
            mem_stalls,
            (after.stall_micros - before.stall_micros) as f64 / 1000.0,
        );
    }
    if args.histogram && total.hist.count() > 0 {
        let h = &total.hist;
        println!(
            "             : latency us: p50 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
            h.percentile_us(0.5),
            h.percentile_us(0.99),
            h.percentile_us(0.999),
            h.max_us()
        );
    }
}

/// The key and value generators of the `thread_number`-th thread of the run, seeded with
/// `--seed + thread_number` as in db_bench.
fn thread_generators(args: &BenchArgs, thread_number: u64) -> (Rng, ValueGen) {
    let base = if args.seed == 0 { 1000 } else { args.seed };
    let seed = base.wrapping_add(thread_number);
    (
        Rng::new(seed),
        ValueGen::new(seed, args.compression_ratio, args.value_size),
    )
}

/// One thread's share of a step; `thread_number` counts the threads of the whole run.
fn run_thread(
    args: &BenchArgs,
    db: &Db,
    step: Step,
    thread_number: u64,
) -> strata::Result<ThreadStats> {
    let (mut rng, mut values) = thread_generators(args, thread_number);
    let key_size = match step {
        Step::ReadRandom { missing: true } => args.key_size + 1, // as db_bench: never found
        _ => args.key_size,
    };
    let mut key = vec![0u8; key_size];
    let mut stats = ThreadStats::default();
    let mut hist = Histogram::default();
    let write_options = WriteOptions {
        sync: args.sync || step == Step::FillSync,
        disable_wal: args.disable_wal,
    };
    let num = args.num.max(1);
    let start = Instant::now();
    let mut timed = |stats: &mut ThreadStats, op_start: Option<Instant>| {
        stats.done += 1;
        if let Some(t) = op_start {
            hist.record(t.elapsed());
        }
    };
    let clock = || args.histogram.then(Instant::now);

    match step {
        Step::Fill(order) | Step::Delete(order) => {
            let ops = args.num;
            let permutation = (order == KeyOrder::UniqueRandom).then(|| shuffled(num, &mut rng));
            for i in 0..ops {
                let k = match order {
                    KeyOrder::Sequential => i,
                    KeyOrder::Random => rng.below(num),
                    KeyOrder::UniqueRandom => permutation.as_ref().map_or(i, |p| p[i as usize]),
                };
                fill_key(k, &mut key);
                let t = clock();
                if matches!(step, Step::Delete(_)) {
                    db.delete_opt(&key, &write_options)?;
                    stats.bytes += key_size as u64;
                } else {
                    let value = values.next(args.value_size);
                    db.put_opt(&key, value, &write_options)?;
                    stats.bytes += (key_size + args.value_size) as u64;
                }
                timed(&mut stats, t);
            }
        }
        Step::FillSync => {
            for _ in 0..(args.num / 1000).max(1) {
                fill_key(rng.below(num), &mut key);
                let value = values.next(args.value_size);
                let t = clock();
                db.put_opt(&key, value, &write_options)?;
                stats.bytes += (key_size + args.value_size) as u64;
                timed(&mut stats, t);
            }
        }
        Step::ReadRandom { .. } => {
            for _ in 0..args.reads() {
                fill_key(rng.below(num), &mut key);
                let t = clock();
                if let Some(v) = db.get(&key)? {
                    stats.found += 1;
                    stats.bytes += (key.len() + v.len()) as u64;
                }
                timed(&mut stats, t);
            }
        }
        Step::ReadSeq { reverse } => {
            let mut it = db.iter(ReadOptions::default());
            if reverse {
                it.seek_to_last();
            } else {
                it.seek_to_first();
            }
            let reads = args.reads();
            while it.valid() && stats.done < reads {
                let t = clock();
                stats.bytes += (it.key().len() + it.value().len()) as u64;
                if reverse {
                    it.prev();
                } else {
                    it.next();
                }
                timed(&mut stats, t);
            }
            it.status()?;
        }
        Step::SeekRandom => {
            let mut it = db.iter(ReadOptions::default());
            for _ in 0..args.reads() {
                fill_key(rng.below(num), &mut key);
                let t = clock();
                it.seek(&key);
                if it.valid() && it.key() == key.as_slice() {
                    stats.found += 1;
                }
                for _ in 0..args.seek_nexts {
                    if !it.valid() {
                        break;
                    }
                    stats.bytes += (it.key().len() + it.value().len()) as u64;
                    it.next();
                }
                timed(&mut stats, t);
            }
            it.status()?;
        }
        Step::WaitForCompaction
        | Step::WhileWriting { .. }
        | Step::Compact(_)
        | Step::Stats
        | Step::LevelStats
        | Step::Flush => {}
    }
    stats.seconds = start.elapsed().as_secs_f64();
    stats.hist = hist;
    Ok(stats)
}

/// The writer of the *whilewriting steps: random puts, at most
/// `--benchmark_write_rate_limit` bytes per second, until `done`. Returns the puts done.
fn background_writer(
    args: &BenchArgs,
    db: &Db,
    done: &AtomicBool,
    thread_number: u64,
) -> strata::Result<u64> {
    let (mut rng, mut values) = thread_generators(args, thread_number);
    let mut key = vec![0u8; args.key_size];
    let options = WriteOptions {
        sync: args.sync,
        disable_wal: args.disable_wal,
    };
    let start = Instant::now();
    let mut bytes = 0u64;
    let mut puts = 0;
    while !done.load(Ordering::Acquire) {
        fill_key(rng.below(args.num.max(1)), &mut key);
        db.put_opt(&key, values.next(args.value_size), &options)?;
        puts += 1;
        bytes += (args.key_size + args.value_size) as u64;
        if args.benchmark_write_rate_limit > 0 {
            let due = bytes as f64 / args.benchmark_write_rate_limit as f64;
            let ahead = due - start.elapsed().as_secs_f64();
            if ahead > 0.0 {
                std::thread::sleep(std::time::Duration::from_secs_f64(ahead.min(0.1)));
            }
        }
    }
    Ok(puts)
}

/// 0..n in a random order (Fisher-Yates).
fn shuffled(n: u64, rng: &mut Rng) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}
