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
//! 100-byte values), opened as `JniCost` opens it (a `TransactionDb`, no compression, a 256
//! MiB block cache). Each operation runs OPS times after OPS untimed ones (which fill the
//! block cache); one line per operation: `rust,OPERATION,NS_PER_OP`.

use std::hint::black_box;
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

/// Runs `op` `ops` times untimed, then `ops` times timed; the mean time of one, in ns.
fn measure(keys: u64, ops: u64, mut op: impl FnMut(&[u8; 8])) -> f64 {
    let mut warm = SplitMix(7);
    for _ in 0..ops {
        op(&warm.next_key(keys));
    }
    let mut random = SplitMix(1);
    let began = Instant::now();
    for _ in 0..ops {
        op(&random.next_key(keys));
    }
    began.elapsed().as_nanos() as f64 / ops as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, keys, ops] = &args[..] else {
        return Err("usage: jni_cost DIR KEYS OPS".into());
    };
    let keys: u64 = keys.parse()?;
    let ops: u64 = ops.parse()?;

    let mut options = Options::default();
    options.compression = Compression::None;
    options.block_cache_size = 256 << 20;
    let tdb = TransactionDb::open(dir, options)?;
    let db = tdb.db();
    let value = [7u8; 100];
    let write = strata::WriteOptions::default();
    let txn_options = TransactionOptions::default();

    let ns = measure(keys, ops, |key| {
        let found = db.get_pinned(key).expect("get");
        black_box(found.as_deref().map(<[u8]>::len));
    });
    println!("rust,get,{ns:.0}");
    let ns = measure(keys, ops, |key| tdb.put(key, value).expect("put"));
    println!("rust,put,{ns:.0}");
    let ns = measure(keys, ops, |key| {
        let mut txn = tdb.transaction(&write, &txn_options);
        black_box(txn.get(key).expect("transaction get"));
        txn.commit().expect("commit");
    });
    println!("rust,txn_get,{ns:.0}");
    let ns = measure(keys, ops, |key| {
        let mut txn = tdb.transaction(&write, &txn_options);
        txn.put(key, value).expect("transaction put");
        txn.commit().expect("commit");
    });
    println!("rust,txn_put,{ns:.0}");
    tdb.close()?;
    Ok(())
}
