//! Keys and values generated as db_bench generates them.
//!
//! A key is the integer's low `min(key_size, 8)` bytes big-endian, padded with ASCII '0' to
//! `key_size` (db_bench's `GenerateKeyFromInt` without prefixes). With `--keys_per_prefix`
//! (and `--prefix_size`), the key starts with a prefix of `prefix_size` bytes made the same way
//! from `v % (num / keys_per_prefix)`, as db_bench does: consecutive integers fall in
//! different prefixes, and each prefix holds about `keys_per_prefix` of the `num` keys. With
//! `--seek_missing_prefix`, seeks go to keys whose byte 8 (inside a prefix longer than 8 bytes,
//! where every written key has '0') is '1': a prefix no key has. Values are slices of a
//! 1 MiB buffer built from 100-byte pieces that each compress to `compression_ratio` of their
//! size: random printable bytes repeated (db_bench's `RandomGenerator`).

use std::sync::atomic::{AtomicU64, Ordering};

use strata::internals::Rng;

/// Which of the keys `0..num` hold a value, as this run wrote them: what space-amp divides
/// by (live keys times key and value size). Unknown when the run began on an existing
/// database, whose keys it did not write.
pub struct LiveKeys {
    bits: Vec<AtomicU64>,
    known: bool,
}

impl LiveKeys {
    /// No key live yet; `known` is false for a run on an existing database.
    pub fn new(num: u64, known: bool) -> LiveKeys {
        LiveKeys {
            bits: (0..num.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            known,
        }
    }

    /// Key `k` was written.
    pub fn put(&self, k: u64) {
        if let Some(w) = self.bits.get((k / 64) as usize) {
            w.fetch_or(1 << (k % 64), Ordering::Relaxed);
        }
    }

    /// Key `k` was deleted.
    pub fn delete(&self, k: u64) {
        if let Some(w) = self.bits.get((k / 64) as usize) {
            w.fetch_and(!(1 << (k % 64)), Ordering::Relaxed);
        }
    }

    /// The number of live keys, if known.
    pub fn count(&self) -> Option<u64> {
        self.known.then(|| {
            self.bits
                .iter()
                .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
                .sum()
        })
    }
}

/// Writes the db_bench key for `v` into `key` (whose length is the key size).
pub fn fill_key(v: u64, key: &mut [u8]) {
    let n = key.len().min(8);
    for (i, b) in key[..n].iter_mut().enumerate() {
        *b = (v >> ((n - i - 1) * 8)) as u8;
    }
    key[n..].fill(b'0');
}

/// How keys are made from integers: db_bench's `GenerateKeyFromInt` and
/// `GenerateKeyFromIntForSeek`.
#[derive(Clone, Copy, Debug)]
pub struct KeyShape {
    /// Bytes of the prefix (`--prefix_size`), used with `keys_per_prefix`.
    pub prefix_size: usize,
    /// Keys per prefix (`--keys_per_prefix`); 0: no prefix of its own.
    pub keys_per_prefix: u64,
    /// Keys in the key space (`--num`).
    pub num: u64,
    /// Seeks go to a prefix no key has (`--seek_missing_prefix`).
    pub seek_missing_prefix: bool,
}

impl KeyShape {
    /// Writes the key for `v` into `key` (whose length is the key size).
    pub fn fill(&self, v: u64, key: &mut [u8]) {
        let mut pos = 0;
        if let Some(prefixes) = self.num.checked_div(self.keys_per_prefix) {
            let prefixes = prefixes.max(1);
            let end = self.prefix_size.min(key.len());
            fill_key(v % prefixes, &mut key[..end]);
            pos = end;
        }
        fill_key(v, &mut key[pos..]);
    }

    /// The key a seek for `v` goes to: [`KeyShape::fill`]'s, in a missing prefix with
    /// `seek_missing_prefix`.
    pub fn fill_for_seek(&self, v: u64, key: &mut [u8]) {
        self.fill(v, key);
        if self.seek_missing_prefix && key.len() > 8 {
            key[8] = b'1';
        }
    }
}

/// A source of compressible values.
pub struct ValueGen {
    data: Vec<u8>,
    pos: usize,
}

impl ValueGen {
    /// A generator seeded with `seed`, for values up to `max_len` bytes.
    pub fn new(seed: u64, compression_ratio: f64, max_len: usize) -> ValueGen {
        let mut rng = Rng::new(seed ^ 301);
        let size = (1 << 20).max(max_len);
        let mut data = Vec::with_capacity(size + 100);
        while data.len() < size {
            let raw_len = ((100.0 * compression_ratio) as usize).clamp(1, 100);
            let raw: Vec<u8> = (0..raw_len).map(|_| b' ' + rng.below(95) as u8).collect();
            let mut piece = Vec::with_capacity(100);
            while piece.len() < 100 {
                let take = raw.len().min(100 - piece.len());
                piece.extend_from_slice(&raw[..take]);
            }
            data.extend_from_slice(&piece);
        }
        ValueGen { data, pos: 0 }
    }

    /// The next value of `len` bytes.
    pub fn next(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        let v = &self.data[self.pos..self.pos + len];
        self.pos += len;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// db_bench's keys for the same integers, written out by hand from its definition.
    #[test]
    fn keys_equal_db_bench_keys() {
        let mut k8 = [0u8; 8];
        fill_key(0x0102_0304_0506_0708, &mut k8);
        assert_eq!(k8, [1, 2, 3, 4, 5, 6, 7, 8]);
        let mut k16 = [0u8; 16];
        fill_key(258, &mut k16);
        assert_eq!(&k16, b"\0\0\0\0\0\0\x01\x0200000000");
        let mut k24 = [0u8; 24];
        fill_key(u64::MAX, &mut k24);
        assert_eq!(&k24[..8], &[0xff; 8]);
        assert_eq!(&k24[8..], b"0000000000000000");
        let mut k4 = [0u8; 4];
        fill_key(0x0102_0304_0506_0708, &mut k4);
        assert_eq!(k4, [5, 6, 7, 8], "short keys keep the low bytes");
        // Order of keys follows the integers for key_size >= 8.
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        fill_key(999, &mut a);
        fill_key(1000, &mut b);
        assert!(a < b);
    }

    /// db_bench's keys with prefixes: key_size 16, prefix_size 12, 10 keys per prefix of 100
    /// (so 10 prefixes, prefix = v % 10), written out by hand from its `GenerateKeyFromInt`.
    #[test]
    fn keys_with_prefixes_equal_db_bench_keys() {
        let shape = KeyShape {
            prefix_size: 12,
            keys_per_prefix: 10,
            num: 100,
            seek_missing_prefix: false,
        };
        let mut k = [0u8; 16];
        shape.fill(23, &mut k);
        // prefix 3 in 8 bytes, '0' to 12 bytes, then v = 23 in the 4 bytes left.
        assert_eq!(&k, b"\0\0\0\0\0\0\0\x030000\0\0\0\x17");
        let mut same_prefix = [0u8; 16];
        shape.fill(93, &mut same_prefix);
        assert_eq!(k[..12], same_prefix[..12]);
        let prefixes: std::collections::BTreeSet<Vec<u8>> = (0..100)
            .map(|v| {
                shape.fill(v, &mut k);
                k[..12].to_vec()
            })
            .collect();
        assert_eq!(prefixes.len(), 10);
        // A short prefix keeps the low bytes, as the key does.
        let short = KeyShape {
            prefix_size: 2,
            ..shape
        };
        let mut k4 = [0u8; 4];
        short.fill(0x0105, &mut k4);
        assert_eq!(
            k4,
            [0, 1, 1, 5],
            "prefix 0x105 % 10 = 1, then the low 2 bytes of v"
        );
        // Seeks to a missing prefix change byte 8, inside the prefix.
        let missing = KeyShape {
            seek_missing_prefix: true,
            ..shape
        };
        missing.fill_for_seek(23, &mut k);
        assert_eq!(&k[..12], b"\0\0\0\0\0\0\0\x031000");
        assert!(!prefixes.contains(&k[..12]));
        // Without keys_per_prefix the key is the plain one.
        let plain = KeyShape {
            keys_per_prefix: 0,
            ..shape
        };
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        plain.fill(258, &mut a);
        fill_key(258, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn values_compress_to_about_the_ratio() {
        let mut g = ValueGen::new(1, 0.5, 100);
        let v = g.next(100).to_vec();
        assert_eq!(v.len(), 100);
        assert_eq!(v[..50], v[50..], "a piece is its random half repeated");
        let w = g.next(100).to_vec();
        assert_ne!(v, w);
    }
}
