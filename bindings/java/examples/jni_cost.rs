//! The Rust half of the JNI cost measurement: the same operations as the Java half
//! (`io.strata.bench.JniCost` in bench/), on the same database, with the same keys in the
//! same order, straight through the engine's API. Their per-operation times, side by side,
//! are what crossing the JNI boundary costs.
//!
//! ```text
//! cargo run --release --example jni_cost -- DIR KEYS OPS
//! ```
//!
//! DIR is a database that `JniCost create` wrote (KEYS keys, 8 bytes big-endian, 0..KEYS,
//! 100-byte values). It is never opened itself: the reads run on a copy of it, and each
//! write operation on a copy of its own made just before (in DIR-work, as `JniCost` does), so
//! that every operation of either half starts from the same database, whatever ran before
//! it. Each copy is opened as `JniCost` opens it (a `TransactionDb`, no compression, a 256
//! MiB block cache). Each operation runs OPS times after OPS untimed ones (which fill the
//! block cache); one line per operation: `rust,OPERATION,WALL_NS_PER_OP,CPU_NS_PER_OP` (the
//! thread's own CPU time, which leaves out waits for a CPU on a shared machine).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use strata::{Compression, Options, TransactionBase, TransactionDb, TransactionOptions};

/// The key sequence of both halves: SplitMix64, as `JniCost.SplitMix` in Java.
struct SplitMix(u64);

impl SplitMix {
    fn next_key(&mut self, keys: u64) -> [u8; 8] {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % keys).to_be_bytes()
    }
}

/// The calling thread's time on a CPU so far, in ns (the first field of
/// /proc/thread-self/schedstat): unlike the wall clock, it leaves out the time the thread
/// waited for a CPU, which on a shared machine is most of the difference between runs.
/// `None` off Linux.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Runs `op` `ops` times untimed, then `ops` times timed; the mean time of one in ns, on
/// the wall clock and on the thread's CPU clock (0 where there is none).
fn measure(keys: u64, ops: u64, mut op: impl FnMut(&[u8; 8])) -> (f64, f64) {
    let mut warm = SplitMix(7);
    for _ in 0..ops {
        op(&warm.next_key(keys));
    }
    let mut random = SplitMix(1);
    let cpu_began = thread_cpu_ns();
    let began = Instant::now();
    for _ in 0..ops {
        op(&random.next_key(keys));
    }
    let wall = began.elapsed().as_nanos() as f64 / ops as f64;
    let cpu = match (cpu_began, thread_cpu_ns()) {
        (Some(a), Some(b)) => b.saturating_sub(a) as f64 / ops as f64,
        _ => 0.0,
    };
    (wall, cpu)
}

/// Copies directory `from` into `to`, which must not exist.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Opens a fresh copy of the database `template` (at `template`-work, replacing the last
/// one), as `JniCost` opens its copies.
fn open_copy(template: &str) -> Result<TransactionDb, Box<dyn std::error::Error>> {
    let work = PathBuf::from(format!("{template}-work"));
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    copy_dir(Path::new(template), &work)?;
    let mut options = Options::default();
    options.compression = Compression::None;
    options.block_cache_size = 256 << 20;
    Ok(TransactionDb::open(&work, options)?)
}

fn report(op: &str, (wall, cpu): (f64, f64)) {
    println!("rust,{op},{wall:.0},{cpu:.0}");
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, keys, ops] = &args[..] else {
        return Err("usage: jni_cost DIR KEYS OPS".into());
    };
    let keys: u64 = keys.parse()?;
    let ops: u64 = ops.parse()?;

    let value = [7u8; 100];
    let write = strata::WriteOptions::default();
    let txn_options = TransactionOptions::default();

    // The reads, on one copy: none of them writes.
    let tdb = open_copy(dir)?;
    let db = tdb.db();
    report(
        "get",
        measure(keys, ops, |key| {
            let found = db.get_pinned(key).expect("get");
            black_box(found.as_deref().map(<[u8]>::len));
        }),
    );
    report(
        "txn_get",
        measure(keys, ops, |key| {
            let mut txn = tdb.transaction(&write, &txn_options);
            black_box(txn.get(key).expect("transaction get"));
            txn.commit().expect("commit");
        }),
    );
    tdb.close()?;
    // Each write operation on a fresh copy (as the Java half), so that none writes into a
    // memtable and tables the ones before it filled.
    let tdb = open_copy(dir)?;
    report(
        "put",
        measure(keys, ops, |key| tdb.put(key, value).expect("put")),
    );
    tdb.close()?;
    let tdb = open_copy(dir)?;
    report(
        "txn_put",
        measure(keys, ops, |key| {
            let mut txn = tdb.transaction(&write, &txn_options);
            txn.put(key, value).expect("transaction put");
            txn.commit().expect("commit");
        }),
    );
    tdb.close()?;
    Ok(())
}
