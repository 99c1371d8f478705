//! Shared budgets: a `RateLimiter` bounding the bytes flushes and compactions write, and a
//! `WriteBufferManager` bounding the memtable memory of several families and databases.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use strata::fs::IoClass;
use strata::{CfOptions, Db, IoPriority, Options, RateLimiter, WriteBufferManager};

fn value(i: u64) -> Vec<u8> {
    // Varied bytes, so tables are about as large as the data.
    (0..1000u64)
        .map(|j| ((i * 31 + j * 7) % 251) as u8)
        .collect()
}

#[test]
fn a_compaction_heavy_run_never_writes_past_the_rate_limit() {
    let rate = 4 << 20;
    let limiter = Arc::new(RateLimiter::new(rate));
    let burst = limiter.single_burst_bytes() as f64;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 256 << 10;
    options.level0_file_num_compaction_trigger = 2;
    options.max_bytes_for_level_base = 1 << 20;
    options.target_file_size_base = 256 << 10;
    options.max_background_jobs = 3;
    options.rate_limiter = Some(limiter.clone());
    let db = Arc::new(Db::open(dir.path(), options).expect("open"));
    let done = Arc::new(AtomicBool::new(false));
    // A monitor checks the limiter's invariant while the run goes on.
    let monitor = {
        let (limiter, done) = (limiter.clone(), done.clone());
        std::thread::spawn(move || {
            let mut checks = 0;
            while !done.load(Ordering::Acquire) {
                let granted = limiter.total_bytes_through(None) as f64;
                let allowed = rate as f64 * limiter.age().as_secs_f64() + burst;
                assert!(granted <= allowed, "{granted} granted, {allowed} allowed");
                checks += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            checks
        })
    };
    // Writes for about 4 seconds (at most 24 MB), overwriting keys so compactions rewrite.
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut i = 0u64;
    while Instant::now() < deadline && i < 24_000 {
        db.put((i % 6000).to_be_bytes(), value(i)).expect("put");
        i += 1;
    }
    done.store(true, Ordering::Release);
    assert!(monitor.join().expect("monitor") > 10);
    let granted = limiter.total_bytes_through(None) as f64;
    let elapsed = limiter.age().as_secs_f64();
    assert!(
        granted <= rate as f64 * elapsed + burst,
        "{granted} in {elapsed} s"
    );
    assert!(
        limiter.total_bytes_through(Some(IoPriority::High)) > 0,
        "no flush asked"
    );
    assert!(
        limiter.total_bytes_through(Some(IoPriority::Low)) > 0,
        "no compaction asked"
    );
    // Every byte flushes and compactions wrote went through the limiter.
    let io = db.stats().io;
    let background = io.written(IoClass::Flush) + io.written(IoClass::Compaction);
    assert!(
        background as f64 <= granted,
        "{background} bytes written by flushes and compactions, {granted} granted"
    );
    drop(db);
}

/// Two databases with two families each write at once under one shared budget; returns
/// the most memory the budget saw held.
fn write_under_a_budget(budget: &Arc<WriteBufferManager>, write_buffer_size: usize) -> usize {
    let dirs: Vec<_> = (0..2)
        .map(|_| tempfile::tempdir().expect("tempdir"))
        .collect();
    let most = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = dirs
        .iter()
        .map(|dir| {
            let mut options = Options::default();
            options.create_if_missing = true;
            options.write_buffer_size = write_buffer_size;
            options.write_buffer_manager = Some(budget.clone());
            let db = Db::open(dir.path(), options).expect("open");
            let mut family = CfOptions::default();
            family.write_buffer_size = write_buffer_size;
            db.create_cf("second", family).expect("family");
            let (budget, most) = (budget.clone(), most.clone());
            std::thread::spawn(move || {
                let second = db.cf("second").expect("second");
                let deadline = Instant::now() + Duration::from_secs(20);
                for i in 0..12000u64 {
                    assert!(
                        Instant::now() < deadline,
                        "writes did not finish: a stall held"
                    );
                    match i % 2 {
                        0 => db.put(i.to_be_bytes(), value(i)).expect("put"),
                        _ => db.put_cf(&second, i.to_be_bytes(), value(i)).expect("put"),
                    }
                    most.fetch_max(budget.memory_usage(), Ordering::Relaxed);
                }
                db.flush().expect("flush");
                assert_eq!(db.get(0u64.to_be_bytes()).expect("get"), Some(value(0)));
                db.close().expect("close");
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    assert_eq!(budget.memory_usage(), 0, "closed databases hold nothing");
    most.load(Ordering::Relaxed)
}

#[test]
fn memtables_of_two_families_and_two_databases_stay_within_a_shared_budget() {
    // An empty 8 MiB memtable holds about 1.2 MB (its first arena block and its bloom
    // filter): the budget must leave room for the four.
    let limit = 6 << 20;
    // Memtables large enough that only the budget makes them flush (each 12 MB database
    // writes 6 MB into each family).
    let budget = Arc::new(WriteBufferManager::new(limit, true));
    let most = write_under_a_budget(&budget, 8 << 20);
    // The budget plus the memtable being switched when it was reached (at most the budget
    // itself, and the memtables each writer filled since).
    assert!(
        most <= 2 * limit,
        "{most} bytes held under a budget of {limit}"
    );
    // Without a budget the same writes hold about 20 MB of memtables.
    let counting = Arc::new(WriteBufferManager::new(0, false));
    let unbounded = write_under_a_budget(&counting, 8 << 20);
    assert!(
        unbounded > 2 * limit,
        "only {unbounded} bytes without a budget (with it: {most})"
    );
}

#[test]
fn db_write_buffer_size_bounds_one_database_s_families() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut options = Options::default();
    options.create_if_missing = true;
    options.db_write_buffer_size = 512 << 10;
    let db = Db::open(dir.path(), options).expect("open");
    let second = db
        .create_cf("second", CfOptions::default())
        .expect("family");
    for i in 0..4000u64 {
        db.put(i.to_be_bytes(), value(i)).expect("put");
        db.put_cf(&second, i.to_be_bytes(), value(i)).expect("put");
    }
    db.wait_for_compactions().expect("wait");
    // About 8 MB written into 64 MiB memtables: only the budget made them flush.
    assert!(db.stats().flushes > 2, "{} flushes", db.stats().flushes);
    db.close().expect("close");
}
