//! The hash index a data block may carry after its restart array (RocksDB's
//! `kDataBlockBinaryAndHash`): a byte per bucket naming the restart interval where the user
//! keys hashed to the bucket are, so that a point lookup scans that interval instead of
//! binary-searching the restart points.
//!
//! Byte layout of a block with a hash index (on disk; do not change):
//!
//! ```text
//! entry* | restart offset: u32 LE * n | bucket: u8 * m | m: u16 LE | n | 1 << 31: u32 LE
//! ```
//!
//! The last word is the restart count with its top bit set ([`HASH_INDEX_FLAG`]); a block
//! without a hash index ends in the plain count, top bit clear (a block's restart count is
//! far below 2^31), and is byte for byte what it was before hash indexes existed. Only
//! blocks of at most [`MAX_HASHED_RESTARTS`] restart points carry one, so that a restart
//! index fits in a bucket byte beside the two markers:
//!
//! - `0..n`: every user key hashed here whose first entry in the block is in restart
//!   interval `i` has it there, and no other user key of the block is hashed here;
//! - [`COLLISION`] (254): user keys whose first entries are in different intervals are
//!   hashed here: a lookup binary-searches the restart points as without the index;
//! - [`EMPTY`] (255): no user key of the block is hashed here.
//!
//! A user key is the key less its 8-byte trailer (the blocks are of internal keys), its
//! hash is [`filter_hash`] (xxh3, 64 bits, what the filters use) and its bucket
//! `(hash >> 32) * m >> 32`: the high half of the hash scaled to `0..m` by a multiplication
//! instead of a division (a lookup's cost is a few nanoseconds), and not the low half, which
//! picks a key's filter line. The builder makes `m` the number of distinct user keys of the block divided
//! by the utilization ratio (`data_block_hash_table_util_ratio`), at least 1, made odd, at
//! most `u16::MAX`.
//!
//! A user key is recorded at its first entry only, so the versions of a key that run over
//! several restart intervals take one bucket value, not a collision: a lookup scanning from
//! the interval of a key's first entry passes only smaller keys before it reaches the key's
//! versions, and goes on across interval ends until the first entry at or after its target.
//!
//! A lookup of a user key whose bucket is empty has nothing to find in the block, and its
//! cursor is left past the last entry. RocksDB, which may look in the next block for the
//! same user key, instead scans the last restart interval; a table here never needs to:
//! its index sends a target to a block only when the target is at most the block's
//! separator, which is before the next block's first key and at or after this block's last.
//! A next block starting with the target's user key would put the separator between two
//! versions of that key, so give it that user key; but a separator is this block's last key,
//! or has a user key strictly between the last key's and the next block's first key's
//! (`KeyOrder::shorten_internal_separator`). So the last key of this block would be a
//! version of the target's user key, whose bucket is not empty.

use crate::key::filter_hash;

/// The top bit of a block's last word: set when the block carries a hash index. On disk.
pub const HASH_INDEX_FLAG: u32 = 1 << 31;
/// The most restart points a block with a hash index has (restart indices 0..=252 fit in a
/// bucket byte below the markers). On disk.
pub const MAX_HASHED_RESTARTS: usize = 253;
/// A bucket where user keys first found in different restart intervals meet. On disk.
pub const COLLISION: u8 = 254;
/// A bucket no user key of the block is hashed to. On disk.
pub const EMPTY: u8 = 255;
/// The utilization ratio RocksDB defaults `data_block_hash_table_util_ratio` to: user keys
/// per bucket.
pub const DEFAULT_UTIL_RATIO: f64 = 0.75;

/// The bucket of a user key's hash among `buckets`: the hash's high half scaled to
/// `0..buckets`. On disk.
#[inline]
pub fn bucket_of_hash(hash: u64, buckets: usize) -> usize {
    (((hash >> 32) * buckets as u64) >> 32) as usize
}

/// Gathers a data block's user keys and the restart intervals of their first entries, and
/// writes the bucket array.
#[derive(Clone)]
pub struct HashIndexBuilder {
    util_ratio: f64,
    /// (hash of a user key, restart interval of its first entry), in block order.
    keys: Vec<(u64, usize)>,
}

impl HashIndexBuilder {
    /// A builder making `user keys / util_ratio` buckets (a ratio above 0: the options check
    /// it; another gives one bucket or the most, never a panic).
    pub fn new(util_ratio: f64) -> HashIndexBuilder {
        HashIndexBuilder {
            util_ratio,
            keys: Vec::new(),
        }
    }

    /// Records a user key at its first entry in the block, in restart interval `restart`.
    pub fn add(&mut self, user_key: &[u8], restart: usize) {
        self.keys.push((filter_hash(user_key), restart));
    }

    fn buckets(&self) -> usize {
        let wanted = (self.keys.len() as f64 / self.util_ratio) as usize;
        (wanted.max(1) | 1).min(u16::MAX as usize)
    }

    /// Bytes [`HashIndexBuilder::finish`] appends to a block of `restarts` restart points.
    pub fn encoded_len(&self, restarts: usize) -> usize {
        match restarts <= MAX_HASHED_RESTARTS {
            true => self.buckets() + 2,
            false => 0,
        }
    }

    /// Appends the bucket array and its length to `out` when the block has at most
    /// [`MAX_HASHED_RESTARTS`] restart points (returning true: the caller then flags its
    /// restart count), nothing otherwise.
    pub fn finish(&self, restarts: usize, out: &mut Vec<u8>) -> bool {
        if restarts > MAX_HASHED_RESTARTS {
            return false;
        }
        let m = self.buckets();
        let mut buckets = vec![EMPTY; m];
        for &(hash, restart) in &self.keys {
            let b = &mut buckets[bucket_of_hash(hash, m)];
            *b = match *b {
                EMPTY => restart as u8,
                same if usize::from(same) == restart => same,
                _ => COLLISION,
            };
        }
        out.extend_from_slice(&buckets);
        out.extend_from_slice(&(m as u16).to_le_bytes());
        true
    }

    /// Forgets the keys, for the next block.
    pub fn reset(&mut self) {
        self.keys.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets hold the interval of a key's first entry, a collision where keys first found
    /// in different intervals meet, and empty elsewhere; their number follows the ratio.
    #[test]
    fn buckets_name_intervals_collisions_and_empties() {
        /// User keys, each with the restart interval of its first entry.
        type Keys<'a> = &'a [(&'a [u8], usize)];
        // (user keys, ratio, buckets expected)
        let cases: [(Keys, f64, usize); 5] = [
            (&[(b"a", 0)], 0.75, 1),
            (&[(b"a", 0), (b"b", 0), (b"c", 1)], 0.75, 5),
            (&[(b"a", 0), (b"b", 1), (b"c", 2)], 1.0, 3),
            (&[(b"a", 0), (b"b", 1)], 100.0, 1),
            (&[(b"a", 0)], f64::MIN_POSITIVE, u16::MAX as usize),
        ];
        for (i, (keys, ratio, want)) in cases.into_iter().enumerate() {
            let mut b = HashIndexBuilder::new(ratio);
            for (k, r) in keys {
                b.add(k, *r);
            }
            let mut out = Vec::new();
            assert!(b.finish(3, &mut out), "case {i}");
            assert_eq!(out.len(), b.encoded_len(3), "case {i}");
            let m = u16::from_le_bytes([out[out.len() - 2], out[out.len() - 1]]) as usize;
            assert_eq!(m, want, "case {i}");
            for (bucket, &value) in out[..m].iter().enumerate() {
                let here: Vec<usize> = keys
                    .iter()
                    .filter(|(k, _)| bucket_of_hash(filter_hash(k), m) == bucket)
                    .map(|&(_, r)| r)
                    .collect();
                let expected = match here.as_slice() {
                    [] => EMPTY,
                    [first, rest @ ..] if rest.iter().all(|r| r == first) => *first as u8,
                    _ => COLLISION,
                };
                assert_eq!(value, expected, "case {i} bucket {bucket}");
            }
        }
    }

    #[test]
    fn blocks_past_the_restart_limit_get_no_index() {
        let mut b = HashIndexBuilder::new(0.75);
        b.add(b"a", 0);
        let mut out = Vec::new();
        assert!(!b.finish(MAX_HASHED_RESTARTS + 1, &mut out));
        assert!(out.is_empty());
        assert_eq!(b.encoded_len(MAX_HASHED_RESTARTS + 1), 0);
        assert!(b.finish(MAX_HASHED_RESTARTS, &mut out));
    }
}
