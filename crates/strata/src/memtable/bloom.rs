//! A memtable's bloom filter over the user keys it holds (RocksDB's memtable whole-key
//! filtering): a get for a key the memtable does not hold, the common case of a read that
//! goes on to the tables, skips the skiplist search (a chain of cache misses) for one probe
//! of one cache line.
//!
//! Layout (in memory only): `lines` 64-byte lines of eight `AtomicU64` words. A key's hash
//! (the tables' filter hash of its user key, so that a get computes it once for both) picks
//! a line from its low 32 bits by multiply-shift and [`PROBES`] bits in the line from its
//! high 32 bits, as the tables' filter does (`table/filter.rs`).
//!
//! Concurrency: the write leader sets a key's bits (relaxed `fetch_or`) before it inserts
//! the entry into the skiplist, and the entry becomes visible to readers only when the
//! database publishes its sequence number afterwards (a release store that readers acquire).
//! So a reader that may see an entry also sees its bits: the filter never hides a visible
//! entry. Bits are never cleared; the filter lives as long as its memtable.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bits set per key: RocksDB's memtable bloom uses six as well.
const PROBES: u32 = 6;
const WORDS_PER_LINE: usize = 8;
const LINE_BYTES: usize = WORDS_PER_LINE * 8;

/// A concurrent bloom filter of user-key hashes.
pub struct MemBloom {
    words: Box<[AtomicU64]>,
    lines: u32,
}

impl MemBloom {
    /// A filter of about `bytes` bytes (one line at least, at most 2^32 lines).
    pub fn with_bytes(bytes: usize) -> MemBloom {
        let lines = (bytes / LINE_BYTES).clamp(1, u32::MAX as usize);
        MemBloom {
            words: (0..lines * WORDS_PER_LINE)
                .map(|_| AtomicU64::new(0))
                .collect(),
            lines: lines as u32,
        }
    }

    /// Bytes of memory the filter holds.
    pub fn memory_usage(&self) -> usize {
        self.words.len() * 8
    }

    /// The words of the line `hash` falls in, and the bits of each probe within the line.
    #[inline]
    fn probes(&self, hash: u64) -> (usize, impl Iterator<Item = u32>) {
        let line = ((hash as u32 as u64 * self.lines as u64) >> 32) as usize;
        let mut h = (hash >> 32) as u32;
        let bits = (0..PROBES).map(move |_| {
            let bit = h >> 23; // the top 9 bits: 0..512
            h = h.wrapping_mul(0x9e37_79b9);
            bit
        });
        (line * WORDS_PER_LINE, bits)
    }

    /// Records the key of `hash`.
    pub fn add(&self, hash: u64) {
        let (first, bits) = self.probes(hash);
        for bit in bits {
            self.words[first + (bit / 64) as usize].fetch_or(1 << (bit % 64), Ordering::Relaxed);
        }
    }

    /// Starts loading the line [`MemBloom::may_contain`] will read for `hash`.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        let (first, _) = self.probes(hash);
        if let Some(word) = self.words.get(first) {
            crate::util::prefetch_address(word.as_ptr().cast::<u8>());
        }
    }

    /// False only if no key of `hash` was added.
    #[inline]
    pub fn may_contain(&self, hash: u64) -> bool {
        let (first, mut bits) = self.probes(hash);
        bits.all(|bit| {
            self.words[first + (bit / 64) as usize].load(Ordering::Relaxed) & (1 << (bit % 64)) != 0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::filter::filter_hash;

    #[test]
    fn added_keys_are_always_found_and_few_others_are() {
        // (bytes of filter, keys added, the most false positives in 10,000 other keys)
        let cases = [
            (64, 1, 10),
            (64 << 10, 5_000, 100),
            (1 << 10, 5_000, 10_000),
        ];
        for (bytes, keys, most_false) in cases {
            let bloom = MemBloom::with_bytes(bytes);
            for i in 0..keys {
                bloom.add(filter_hash(format!("key{i}").as_bytes()));
            }
            for i in 0..keys {
                assert!(bloom.may_contain(filter_hash(format!("key{i}").as_bytes())));
            }
            let false_positives = (0..10_000)
                .filter(|i| bloom.may_contain(filter_hash(format!("other{i}").as_bytes())))
                .count();
            assert!(
                false_positives <= most_false,
                "{bytes} bytes, {keys} keys: {false_positives} false positives"
            );
        }
        assert_eq!(MemBloom::with_bytes(0).memory_usage(), LINE_BYTES);
    }
}
