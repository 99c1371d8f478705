//! A cache-local blocked bloom filter: every probe of one key lands in the same 64-byte line,
//! so a lookup costs one cache miss whatever the number of probes.
//!
//! Byte layout of a filter block (on disk; do not change):
//!
//! ```text
//! line * num_lines (64 bytes each) | probes: u8 | num_lines: u32 LE
//! ```
//!
//! A key's 64-bit xxh3 hash picks the line from its low 32 bits (multiply-shift, no modulo)
//! and the bit positions from its high 32 bits: each probe takes the top 9 bits of a 32-bit
//! value that is multiplied by the golden ratio between probes. Measured false-positive rate
//! at 10 bits per key: about 1% (see the test below and docs/benchmarks.md).
//!
//! With a prefix extractor (`crate::prefix`), a table's filter also holds the prefix of each
//! key (RocksDB's full filter with `whole_key_filtering`): prefixes and whole keys are hashed
//! alike into the same lines, and each distinct one costs `bits_per_key`. The layout does not
//! change; the table's properties name the extractor, and only a reader with that extractor
//! asks the filter for prefixes.

const LINE_BYTES: usize = 64;
const LINE_BITS: u32 = 512;
/// Bytes after the lines.
const TRAILER: usize = 5;

pub use crate::key::filter_hash;

/// The number of probes for `bits_per_key`: about `0.69 * bits_per_key`, less a little for
/// the blocked layout, which loses accuracy when probes crowd one line.
fn probes_for(bits_per_key: u32) -> u8 {
    ((bits_per_key * 6 + 5) / 10).clamp(1, 24) as u8
}

/// Collects key hashes and builds a filter block.
pub struct FilterBuilder {
    bits_per_key: u32,
    hashes: Vec<u64>,
    /// The hashes of the last key and the last prefix added: keys and prefixes come
    /// interleaved, each in order, so repeats are dropped per kind.
    last_key: Option<u64>,
    last_prefix: Option<u64>,
}

impl FilterBuilder {
    /// A builder spending `bits_per_key` bits per distinct key (at least 1).
    pub fn new(bits_per_key: u32) -> FilterBuilder {
        FilterBuilder {
            bits_per_key: bits_per_key.max(1),
            hashes: Vec::new(),
            last_key: None,
            last_prefix: None,
        }
    }

    /// Adds a key (consecutive duplicates count once).
    pub fn add(&mut self, key: &[u8]) {
        let h = filter_hash(key);
        if self.last_key != Some(h) {
            self.hashes.push(h);
            self.last_key = Some(h);
        }
    }

    /// Adds a key's prefix (a repeat of the last prefix added counts once, whatever keys
    /// came between).
    pub fn add_prefix(&mut self, prefix: &[u8]) {
        self.add_prefix_hash(filter_hash(prefix));
    }

    /// The hash of the last prefix added, if any.
    pub fn last_prefix_hash(&self) -> Option<u64> {
        self.last_prefix
    }

    /// Adds a prefix by its [`filter_hash`] (as [`FilterBuilder::add_prefix`] does).
    pub fn add_prefix_hash(&mut self, h: u64) {
        if self.last_prefix != Some(h) {
            self.hashes.push(h);
            self.last_prefix = Some(h);
        }
    }

    /// Distinct keys and prefixes added so far.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True before anything is added.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The filter block for the keys added.
    pub fn finish(&self) -> Vec<u8> {
        let bits = self.hashes.len() as u64 * u64::from(self.bits_per_key);
        let num_lines = bits.div_ceil(u64::from(LINE_BITS)).max(1) as u32;
        let probes = probes_for(self.bits_per_key);
        let mut data = vec![0u8; num_lines as usize * LINE_BYTES + TRAILER];
        for &h in &self.hashes {
            let line = line_of(h, num_lines);
            let mut h2 = (h >> 32) as u32;
            for _ in 0..probes {
                let bit = (h2 >> 23) as usize;
                data[line + bit / 8] |= 1 << (bit % 8);
                h2 = h2.wrapping_mul(0x9e37_79b9);
            }
        }
        let t = num_lines as usize * LINE_BYTES;
        data[t] = probes;
        data[t + 1..].copy_from_slice(&num_lines.to_le_bytes());
        data
    }
}

#[inline]
fn line_of(h: u64, num_lines: u32) -> usize {
    (((h & 0xffff_ffff) * u64::from(num_lines)) >> 32) as usize * LINE_BYTES
}

/// A filter block, checked and ready for queries.
pub struct Filter {
    data: Vec<u8>,
    num_lines: u32,
    probes: u8,
}

impl Filter {
    /// Checks the trailer of a filter block; the error says what is wrong.
    pub fn new(data: Vec<u8>) -> Result<Filter, String> {
        let t = data
            .len()
            .checked_sub(TRAILER)
            .ok_or("filter block shorter than its trailer")?;
        let probes = data[t];
        let num_lines = u32::from_le_bytes([data[t + 1], data[t + 2], data[t + 3], data[t + 4]]);
        if num_lines == 0 || num_lines as usize * LINE_BYTES != t {
            return Err(format!(
                "filter block of {} bytes does not hold {num_lines} lines",
                data.len()
            ));
        }
        if probes == 0 || probes > 30 {
            return Err(format!("filter block has {probes} probes"));
        }
        Ok(Filter {
            data,
            num_lines,
            probes,
        })
    }

    /// False only if `key` was certainly not added.
    #[inline]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.may_contain_hash(filter_hash(key))
    }

    /// [`Filter::may_contain`] for a precomputed [`filter_hash`].
    #[inline]
    pub fn may_contain_hash(&self, h: u64) -> bool {
        let line = line_of(h, self.num_lines);
        let mut h2 = (h >> 32) as u32;
        for _ in 0..self.probes {
            let bit = (h2 >> 23) as usize;
            if self.data[line + bit / 8] & (1 << (bit % 8)) == 0 {
                return false;
            }
            h2 = h2.wrapping_mul(0x9e37_79b9);
        }
        true
    }

    /// Starts loading the cache line [`Filter::may_contain_hash`] will read for `h`.
    #[inline]
    pub fn prefetch(&self, h: u64) {
        if let Some(byte) = self.data.get(line_of(h, self.num_lines)) {
            crate::util::prefetch(byte);
        }
    }

    /// Bytes of memory the filter holds.
    pub fn size(&self) -> usize {
        self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp_rate(bits_per_key: u32, n: u64) -> f64 {
        let mut b = FilterBuilder::new(bits_per_key);
        for i in 0..n {
            b.add(format!("key{i:08}").as_bytes());
        }
        let f = Filter::new(b.finish()).unwrap();
        for i in 0..n {
            assert!(
                f.may_contain(format!("key{i:08}").as_bytes()),
                "false negative"
            );
        }
        let probes = 200_000u64;
        let hits = (0..probes)
            .filter(|i| f.may_contain(format!("miss{i:08}").as_bytes()))
            .count();
        hits as f64 / probes as f64
    }

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives_at_10_bits() {
        let rate = fp_rate(10, 100_000);
        assert!(rate < 0.02, "false-positive rate {rate}");
        assert!(fp_rate(20, 50_000) < rate, "more bits must help");
        assert!(fp_rate(5, 50_000) < 0.15);
    }

    #[test]
    fn tiny_and_empty_filters_work_and_bad_trailers_are_refused() {
        let f = Filter::new(FilterBuilder::new(10).finish()).unwrap();
        assert!(!f.may_contain(b"anything") || f.size() > 0);
        let mut b = FilterBuilder::new(10);
        b.add(b"only");
        let data = b.finish();
        assert!(Filter::new(data.clone()).unwrap().may_contain(b"only"));
        let mut bad = data.clone();
        let n = bad.len();
        bad[n - 4] = 7; // wrong line count
        assert!(Filter::new(bad).is_err());
        assert!(Filter::new(vec![1, 2]).is_err());
    }

    /// Keys and prefixes interleave; repeats of either count once, and a filter of keys alone
    /// is the same bytes as before prefixes existed (no prefix added, same hashes).
    #[test]
    fn prefixes_share_the_filter_and_repeats_count_once() {
        let mut plain = FilterBuilder::new(10);
        let mut with = FilterBuilder::new(10);
        for k in ["aa1", "aa1", "aa2", "ab1", "ab1", "ab2"] {
            plain.add(k.as_bytes());
            with.add(k.as_bytes());
            with.add_prefix(&k.as_bytes()[..2]);
        }
        assert_eq!(plain.len(), 4);
        assert_eq!(with.len(), 6, "4 keys and 2 prefixes");
        let f = Filter::new(with.finish()).unwrap();
        for probe in ["aa", "ab", "aa1", "ab2"] {
            assert!(f.may_contain(probe.as_bytes()), "{probe}");
        }
        let absent = (0..1000)
            .filter(|i| f.may_contain(format!("z{i}").as_bytes()))
            .count();
        assert!(absent < 100, "{absent} false positives in 1000");
    }
}
