//! Blocks of sorted key-value entries with shared key prefixes and restart points (data,
//! index, meta-index and properties blocks all use this layout).
//!
//! Byte layout of a block's raw contents (on disk; do not change):
//!
//! ```text
//! entry*  | restart offset: u32 LE * n | n: u32 LE
//! entry   := shared: varint32 | unshared: varint32 | value length: varint32
//!            | unshared key bytes | value bytes
//! ```
//!
//! An entry's key is the first `shared` bytes of the previous key followed by its unshared
//! bytes. Every `restart_interval` entries a restart point stores its key whole (`shared` = 0)
//! and its offset goes in the restart array, so a seek binary-searches the restarts and then
//! scans at most one interval. The block layer orders keys with a caller's comparator and
//! knows nothing of sequence numbers: of internal keys it knows only that they end in an
//! 8-byte trailer ordered descending, which the built-in orders' seeks compare in place
//! (see [`BlockIter::seek`]; the restart words of [`Block`] serve their binary search).
//!
//! A data block may also carry a hash index between its restart array and its restart count,
//! the count's top bit then set (layout and meaning in `data_block_hash.rs`): point lookups
//! ([`BlockIter::seek_for_get`]) use it to find their restart interval, every other move
//! ignores it. Blocks built without one are as above, byte for byte.

use std::cmp::Ordering;
use std::sync::{Arc, OnceLock};

use crate::codec::{decode_fixed32, put_varint32, varint_len};
use crate::comparator::{bytewise_compare, first_word, KeyOrder};
use crate::key::TRAILER_LEN;
mod builder;
mod iter;
mod key_buf;

pub use builder::BlockBuilder;
pub use iter::BlockIter;
pub(crate) use key_buf::INLINE_KEY;

use crate::table::data_block_hash::{
    self, HashIndexBuilder, COLLISION, EMPTY, HASH_INDEX_FLAG, MAX_HASHED_RESTARTS,
};

/// How a table orders its keys: whole keys in a user order, or internal keys whose user keys
/// are in a user order. An enum rather than a function pointer so that the built-in orders
/// compare inline.
#[derive(Clone, Debug)]
pub enum BlockOrder {
    /// Keys are whole user keys.
    Plain(KeyOrder),
    /// Keys are internal keys (`crate::key`): user key in the order, then trailer descending.
    Internal(KeyOrder),
}

impl BlockOrder {
    /// Whole keys, bytewise: meta-index and properties blocks, tables without a database.
    pub const BYTEWISE: BlockOrder = BlockOrder::Plain(KeyOrder::Bytewise);

    /// Orders two keys.
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        crate::perf_context::perf_count!(user_key_comparison_count, 1);
        match self {
            BlockOrder::Plain(o) => o.compare(a, b),
            BlockOrder::Internal(o) => o.compare_internal(a, b),
        }
    }

    /// The user key order.
    pub fn order(&self) -> &KeyOrder {
        match self {
            BlockOrder::Plain(o) | BlockOrder::Internal(o) => o,
        }
    }

    /// Shortens `start` to a key in `[start, limit)`, for an index entry (see
    /// [`KeyOrder::find_shortest_separator`]).
    pub fn shorten_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        match self {
            BlockOrder::Plain(o) => o.find_shortest_separator(start, limit),
            BlockOrder::Internal(o) => o.shorten_internal_separator(start, limit),
        }
    }
}

/// True when the finished block `contents` carries a hash index (its last word flagged).
pub fn has_hash_index(contents: &[u8]) -> bool {
    contents.last().is_some_and(|b| b & 0x80 != 0)
}

/// A decoded block, shared by iterators and the block cache.
pub struct Block {
    data: BlockBytes,
    restarts_at: usize,
    num_restarts: usize,
    /// Where the hash index's buckets are in the block's bytes (`data_block_hash.rs`);
    /// empty without one.
    hash_buckets: std::ops::Range<usize>,
    /// A word per restart point for seeks, made by the first one (see
    /// [`Block::restart_words`]).
    restart_words: OnceLock<Option<RestartWords>>,
}

/// The first 8 bytes of the user key of each restart point, as big-endian words padded with
/// zeros ([`first_word`]); user keys are the keys less their last `trailer_len` bytes.
struct RestartWords {
    trailer_len: usize,
    words: Box<[u64]>,
    /// Every [`WORDS_PER_GROUP`]th word (`words[g * WORDS_PER_GROUP]`): a seek searches these
    /// first, a few lines that stay in cache, and then only the group's words, instead of
    /// probing the whole array (an index block of a large table has tens of thousands of
    /// restart points, and each probe of a plain binary search past its first few is a
    /// cache miss of its own).
    groups: Box<[u64]>,
}

/// Restart words per group of [`RestartWords::groups`]: two cache lines of words.
const WORDS_PER_GROUP: usize = 16;

/// Blocks with at least this many restart points get a word per restart point at their
/// first seek: index blocks (a restart point per entry, thousands in a large table), not
/// data blocks (a few).
const WORDS_FROM_RESTARTS: usize = 64;

/// Where a block's bytes live: a buffer of its own, or a range of memory that an owner holds
/// (a table's memory mapping), read in place.
///
/// A cached block never shares a buffer with other blocks (as a readahead window's blocks
/// would, read with one read): the cache charges each block for its own bytes and evicts
/// blocks one by one, and a shared buffer would live on, uncharged, for as long as any one
/// of its blocks stayed cached.
enum BlockBytes {
    Owned(Vec<u8>),
    Borrowed(BorrowedBytes),
}

/// Bytes borrowed from an owner that the block holds.
///
/// Invariant (what makes the `Send`/`Sync` impls and the slice in [`BorrowedBytes::as_slice`]
/// sound): `ptr..ptr + len` is a slice that `bytes_of(&*owner)` returned (see
/// [`Block::borrowing`]). A shared borrow of the owner lends bytes that stay valid and
/// unchanged for as long as the owner lives and is not borrowed mutably; the owner sits
/// behind an `Arc` that this struct holds and never hands out, so neither can end while the
/// struct lives.
struct BorrowedBytes {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    _owner: Arc<dyn std::any::Any + Send + Sync>,
}

// SAFETY: the bytes are immutable and live as long as `_owner` (struct invariant), which is
// itself `Send + Sync`.
unsafe impl Send for BorrowedBytes {}
// SAFETY: as above: shared reads of immutable bytes.
unsafe impl Sync for BorrowedBytes {}

impl BorrowedBytes {
    #[inline]
    fn as_slice(&self) -> &[u8] {
        // SAFETY: a slice the owner lent, still alive and unchanged (struct invariant); the
        // result borrows `self`, which holds the owner.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl BlockBytes {
    #[inline]
    fn as_slice(&self) -> &[u8] {
        match self {
            BlockBytes::Owned(v) => v,
            BlockBytes::Borrowed(b) => b.as_slice(),
        }
    }
}

impl Block {
    /// The block's bytes as stored (entries, then the restart array).
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        self.data.as_slice()
    }

    /// Checks the restart array of `data`; the error says what is wrong.
    pub fn new(data: Vec<u8>) -> Result<Block, String> {
        Block::checked(BlockBytes::Owned(data))
    }

    /// A block whose bytes are `bytes_of(&owner)[range]`, read in place: it holds `owner`
    /// (a table's memory mapping) and copies nothing.
    pub fn borrowing<O: Send + Sync + 'static>(
        owner: Arc<O>,
        bytes_of: for<'a> fn(&'a O) -> &'a [u8],
        range: std::ops::Range<usize>,
    ) -> Result<Block, String> {
        let slice = bytes_of(&owner)
            .get(range)
            .ok_or("block range outside the mapped file")?;
        let (ptr, len) = (std::ptr::NonNull::from(slice).cast::<u8>(), slice.len());
        Block::checked(BlockBytes::Borrowed(BorrowedBytes {
            ptr,
            len,
            _owner: owner,
        }))
    }

    fn checked(bytes: BlockBytes) -> Result<Block, String> {
        let data = bytes.as_slice();
        let count_at = data
            .len()
            .checked_sub(4)
            .ok_or("block shorter than its restart count")?;
        let word = decode_fixed32(&data[count_at..]).unwrap_or_default();
        let n = (word & !HASH_INDEX_FLAG) as usize;
        let mut restarts_end = count_at;
        let mut hash_buckets = 0..0;
        if word & HASH_INDEX_FLAG != 0 {
            if n > MAX_HASHED_RESTARTS {
                return Err(format!(
                    "block of {n} restart points carries a hash index (at most \
                     {MAX_HASHED_RESTARTS})"
                ));
            }
            let m_at = count_at
                .checked_sub(2)
                .ok_or("block shorter than its hash index")?;
            let m = u16::from_le_bytes([data[m_at], data[m_at + 1]]) as usize;
            if m == 0 {
                return Err("hash index has no bucket".into());
            }
            let at = m_at
                .checked_sub(m)
                .ok_or("hash index larger than the block")?;
            hash_buckets = at..m_at;
            restarts_end = at;
        }
        let restarts_at = n
            .checked_mul(4)
            .and_then(|r| restarts_end.checked_sub(r))
            .ok_or("restart array larger than the block")?;
        if n == 0 {
            return Err("block has no restart point".into());
        }
        Ok(Block {
            data: bytes,
            restarts_at,
            num_restarts: n,
            hash_buckets,
            restart_words: OnceLock::new(),
        })
    }

    /// A block with no entries.
    pub fn empty() -> Block {
        Block {
            data: BlockBytes::Owned(vec![0, 0, 0, 0, 1, 0, 0, 0]),
            restarts_at: 0,
            num_restarts: 1,
            hash_buckets: 0..0,
            restart_words: OnceLock::new(),
        }
    }

    /// Bytes of memory the block holds, with its restart words once a seek has made them
    /// (what a pinned index block counts). The block cache charges a block its size when it
    /// is inserted, before any seek: an index block kept there (with
    /// `cache_index_and_filter_blocks`) holds its words uncharged.
    pub fn size(&self) -> usize {
        let words = match self.restart_words.get() {
            Some(Some(w)) => 8 * (w.words.len() + w.groups.len()),
            _ => 0,
        };
        self.held_bytes() + words
    }

    /// Bytes the block's bytes take: their buffer's whole capacity (a buffer allocated
    /// larger than the block holds the rest too), or the range of the mapping they lie in.
    pub fn held_bytes(&self) -> usize {
        match &self.data {
            BlockBytes::Owned(v) => v.capacity(),
            BlockBytes::Borrowed(b) => b.len,
        }
    }

    /// The first 8 bytes of each restart point's user key (the key less `trailer_len`
    /// bytes) as a word that orders as they do ([`first_word`]), made at the first call;
    /// `None` for a block with few restart points, for one whose restart entries do not
    /// decode (a seek then reads the entries and reports it), and for another `trailer_len`
    /// than the first call's (a block is read in one order). A binary search then compares
    /// words, and reads a restart key only when its word equals the target's: an index
    /// search touches 8 bytes per probe instead of an entry's header and key.
    fn restart_words(&self, trailer_len: usize) -> Option<&RestartWords> {
        if self.num_restarts < WORDS_FROM_RESTARTS {
            return None;
        }
        let made = self.restart_words.get_or_init(|| {
            let data = self.bytes();
            let words = (0..self.num_restarts)
                .map(|i| {
                    let (shared, unshared, _, kat) =
                        decode_entry(data, self.restart(i), self.restarts_at)?;
                    let user = unshared.saturating_sub(trailer_len);
                    (shared == 0).then(|| first_word(&data[kat..kat + user]))
                })
                .collect::<Option<Box<[u64]>>>()?;
            let groups = words.iter().step_by(WORDS_PER_GROUP).copied().collect();
            Some(RestartWords {
                trailer_len,
                words,
                groups,
            })
        });
        made.as_ref().filter(|w| w.trailer_len == trailer_len)
    }

    fn restart(&self, i: usize) -> usize {
        decode_fixed32(&self.bytes()[self.restarts_at + 4 * i..]).unwrap_or_default() as usize
    }

    /// Where the restart array starts in memory, for a prefetch.
    pub fn restarts_address(&self) -> *const u8 {
        self.bytes()[self.restarts_at..].as_ptr()
    }

    /// True when the block carries a hash index.
    pub fn has_hash_index(&self) -> bool {
        !self.hash_buckets.is_empty()
    }

    /// The hash index's bucket for a user key's [`filter_hash`](crate::key::filter_hash): a
    /// restart index, [`COLLISION`] or [`EMPTY`] (`None` without a hash index).
    #[inline]
    fn hash_bucket(&self, user_key_hash: u64) -> Option<u8> {
        let buckets = self.bytes().get(self.hash_buckets.clone())?;
        let i = data_block_hash::bucket_of_hash(user_key_hash, buckets.len().max(1));
        buckets.get(i).copied()
    }
}

/// Decodes the entry header at `at`: (shared, unshared, value length, offset of key bytes).
#[inline]
fn decode_entry(data: &[u8], at: usize, limit: usize) -> Option<(usize, usize, usize, usize)> {
    let p = data.get(at..limit)?;
    if p.len() >= 3 && (p[0] | p[1] | p[2]) < 0x80 {
        // Fast path: all three lengths fit in one byte each.
        let (s, u, v) = (p[0] as usize, p[1] as usize, p[2] as usize);
        if u + v > p.len() - 3 {
            return None;
        }
        return Some((s, u, v, at + 3));
    }
    let mut src = p;
    let s = crate::codec::get_varint32(&mut src)? as usize;
    let u = crate::codec::get_varint32(&mut src)? as usize;
    let v = crate::codec::get_varint32(&mut src)? as usize;
    let header = p.len() - src.len();
    if u.checked_add(v)? > src.len() {
        return None;
    }
    Some((s, u, v, at + header))
}

/// The number of leading bytes `a` and `b` have in common, eight at a time.
#[inline]
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while let (Some(x), Some(y)) = (
        a.get(i..n).and_then(|s| s.first_chunk::<8>()),
        b.get(i..n).and_then(|s| s.first_chunk::<8>()),
    ) {
        // Loaded little-endian, the first differing byte is the lowest differing one.
        let diff = u64::from_le_bytes(*x) ^ u64::from_le_bytes(*y);
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::iter::compare_in_byte_order;
    use super::key_buf::KeyBuf;
    use super::*;
    use crate::iterator::InternalIterator;
    use crate::testing::harness::{
        self, internal_iterator_from_inherent, Constructor, Entries, Entry, Keys,
    };
    use crate::util::Rng;

    const BYTEWISE: BlockOrder = BlockOrder::BYTEWISE;

    fn build(entries: &Entries, interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(interval);
        for (k, v) in entries {
            b.add(k, v);
        }
        let est = b.estimated_size();
        let data = b.finish().to_vec();
        assert_eq!(data.len(), est);
        Arc::new(Block::new(data).unwrap())
    }

    internal_iterator_from_inherent!(BlockIter, |it| match it.corrupt() {
        Some(why) => Err(crate::error::Error::corruption("<block>", 0, why)),
        None => Ok(()),
    });

    /// A block of internal keys with a hash index of `ratio` (when it has few enough
    /// restart points).
    fn build_hashed(entries: &Entries, interval: usize, ratio: f64) -> Arc<Block> {
        let mut b = BlockBuilder::with_hash_index(interval, ratio);
        for (k, v) in entries {
            b.add(k, v);
        }
        let est = b.estimated_size();
        let data = b.finish().to_vec();
        assert_eq!(data.len(), est);
        Arc::new(Block::new(data).unwrap())
    }

    struct BlockConstructor {
        restart_interval: usize,
        keys: Keys,
        /// The utilization ratio of a hash index (blocks of internal keys only).
        hash_ratio: Option<f64>,
    }

    impl Constructor for BlockConstructor {
        fn name(&self) -> String {
            format!(
                "block (restart interval {}, {:?}, hash index {:?})",
                self.restart_interval, self.keys, self.hash_ratio
            )
        }
        fn keys(&self) -> Keys {
            self.keys
        }
        fn build(&mut self, entries: &Entries, _: &mut Rng) -> Box<dyn InternalIterator + '_> {
            let block = match self.hash_ratio {
                Some(ratio) => build_hashed(entries, self.restart_interval, ratio),
                None => build(entries, self.restart_interval),
            };
            Box::new(BlockIter::new(block, self.keys.comparator()))
        }
    }

    #[test]
    fn blocks_pass_the_iterator_harness() {
        for restart_interval in [1, 2, 3, 16, 1000] {
            for keys in Keys::ALL {
                let mut c = BlockConstructor {
                    restart_interval,
                    keys,
                    hash_ratio: None,
                };
                harness::check(&mut c, 8);
            }
            // Iterators ignore a hash index: every move works on blocks carrying one.
            for ratio in [0.75, 4.0] {
                let mut c = BlockConstructor {
                    restart_interval,
                    keys: Keys::Internal,
                    hash_ratio: Some(ratio),
                };
                harness::check(&mut c, 8);
            }
        }
    }

    fn ikey(user: &[u8], seq: u64) -> Vec<u8> {
        let mut k = Vec::new();
        crate::key::append_internal_key(&mut k, user, seq, crate::key::ValueKind::Put as u8);
        k
    }

    /// `users` user keys (`u0000`, `u0001`, ...; every other one, so that absent keys fall
    /// between them), each with `versions` versions at sequence numbers 10, 20, ..., in the
    /// order `reverse` says.
    fn versioned_entries(users: usize, versions: u64, reverse: bool) -> Vec<Entry> {
        let mut users: Vec<Vec<u8>> = (0..users)
            .map(|i| format!("u{:04}", 2 * i).into_bytes())
            .collect();
        if reverse {
            users.reverse();
        }
        users
            .iter()
            .flat_map(|u| {
                (1..=versions).rev().map(move |v| {
                    let key = ikey(u, 10 * v);
                    let value = [u.as_slice(), format!("@{v}").as_bytes()].concat();
                    (key, value)
                })
            })
            .collect()
    }

    /// Point lookups through a hash index answer as seeks do: for every user key of the
    /// block (with several versions, over restart intervals) and every snapshot (above,
    /// between and below its versions), and for user keys the block lacks, the lookup is on
    /// the entry a seek finds when that entry is of the target's user key, and elsewhere on
    /// another user key or past the end. Blocks of 254 restart points or more carry no index
    /// and are byte for byte the blocks built without one.
    #[test]
    fn point_lookups_by_hash_answer_as_seeks_do() {
        // (case, user keys, versions each, restart interval, ratio, restarts, hash index)
        #[rustfmt::skip]
        let cases: [(&str, usize, u64, usize, f64, usize, bool); 11] = [
            ("one restart", 10, 1, 16, 0.75, 1, true),
            ("one key", 1, 1, 16, 0.75, 1, true),
            ("many restarts", 200, 1, 4, 0.75, 50, true),
            ("253 restarts", 253, 1, 1, 0.75, 253, true),
            ("254 restarts", 254, 1, 1, 0.75, 254, false),
            ("255 restarts", 255, 1, 1, 0.75, 255, false),
            ("versions over intervals", 40, 5, 2, 0.75, 100, true),
            ("versions in one interval", 40, 3, 16, 0.75, 8, true),
            ("a key over many intervals", 3, 40, 3, 0.75, 40, true),
            ("few buckets: collisions", 100, 2, 4, 8.0, 50, true),
            ("many buckets", 100, 2, 4, 0.1, 50, true),
        ];
        for (case, users, versions, interval, ratio, restarts, hashed) in cases {
            for order in [KeyOrder::Bytewise, KeyOrder::Reverse] {
                let reverse = matches!(order, KeyOrder::Reverse);
                let cmp = BlockOrder::Internal(order);
                let entries = versioned_entries(users, versions, reverse);
                let block = build_hashed(&entries, interval, ratio);
                let plain = build(&entries, interval);
                let what = format!("{case}, {cmp:?}");
                assert_eq!(block.num_restarts, restarts, "{what}");
                assert_eq!(block.has_hash_index(), hashed, "{what}");
                assert_eq!(block.bytes() == plain.bytes(), !hashed, "{what}");
                let mut targets = Vec::new();
                for i in 0..2 * users + 1 {
                    let user = format!("u{i:04}").into_bytes();
                    for seq in (0..=10 * versions + 10).step_by(5) {
                        targets.push(ikey(&user, seq));
                    }
                }
                targets.push(ikey(b"", 7));
                targets.push(ikey(b"v", 7));
                let mut by_hash = BlockIter::new(block.clone(), cmp.clone());
                let mut by_seek = BlockIter::new(plain.clone(), cmp.clone());
                for target in &targets {
                    by_hash.seek_for_get(target);
                    by_seek.seek(target);
                    assert_eq!(by_hash.corrupt(), None, "{what}");
                    let user_key = crate::key::user_key(target);
                    let seek_found =
                        by_seek.valid() && crate::key::user_key(by_seek.key()) == user_key;
                    if seek_found {
                        assert!(by_hash.valid(), "{what}: {target:?} not found");
                        assert_eq!(by_hash.key(), by_seek.key(), "{what}: {target:?}");
                        assert_eq!(by_hash.value(), by_seek.value(), "{what}: {target:?}");
                    } else if by_hash.valid() {
                        assert_ne!(crate::key::user_key(by_hash.key()), user_key, "{what}");
                    }
                    // The block without an index looks up by seeking.
                    let mut unhashed = BlockIter::new(plain.clone(), cmp.clone());
                    unhashed.seek_for_get(target);
                    assert_eq!(unhashed.valid(), by_seek.valid(), "{what}");
                    assert!(
                        !unhashed.valid() || unhashed.key() == by_seek.key(),
                        "{what}"
                    );
                }
            }
        }
    }

    /// A user key the block lacks but which starts the next block (its newer versions in
    /// this one, or none): the lookup leaves this block's entries of other user keys alone
    /// and ends past the last entry when the bucket is empty, as a table needs.
    #[test]
    fn a_user_key_absent_from_the_block_is_not_found_in_it() {
        let entries: Vec<Entry> = (0..20u64)
            .map(|i| (ikey(format!("k{i:02}").as_bytes(), 5), b"v".to_vec()))
            .collect();
        let block = build_hashed(&entries, 4, 0.75);
        let mut it = BlockIter::new(block, BlockOrder::Internal(KeyOrder::Bytewise));
        for absent in [&b"k20"[..], b"k05x", b"a", b"z"] {
            for seq in [1, 5, 9] {
                it.seek_for_get(&ikey(absent, seq));
                assert!(
                    !it.valid() || crate::key::user_key(it.key()) != absent,
                    "{absent:?}"
                );
            }
        }
    }

    /// Iterators read a block carrying a hash index as the same block without one: every
    /// entry forward and backward, and seeks.
    #[test]
    fn iterators_over_hashed_blocks_agree_with_unhashed_ones() {
        for (users, versions, interval) in [(10, 1, 16), (100, 3, 2), (253, 1, 1)] {
            let entries = versioned_entries(users, versions, false);
            let cmp = BlockOrder::Internal(KeyOrder::Bytewise);
            let walk = |block: Arc<Block>| {
                let mut it = BlockIter::new(block, cmp.clone());
                let mut seen = Vec::new();
                it.seek_to_first();
                while it.valid() {
                    seen.push((it.key().to_vec(), it.value().to_vec()));
                    it.next();
                }
                it.seek_to_last();
                while it.valid() {
                    seen.push((it.key().to_vec(), it.value().to_vec()));
                    it.prev();
                }
                for (k, _) in entries.iter().step_by(7) {
                    it.seek(k);
                    seen.push((it.key().to_vec(), it.value().to_vec()));
                    it.seek_for_prev(k);
                    it.prev();
                    seen.push((
                        if it.valid() {
                            it.key().to_vec()
                        } else {
                            Vec::new()
                        },
                        vec![],
                    ));
                }
                seen
            };
            let hashed = build_hashed(&entries, interval, 0.75);
            assert!(hashed.has_hash_index());
            assert_eq!(
                walk(hashed),
                walk(build(&entries, interval)),
                "{users} keys"
            );
        }
    }

    /// Damaged hash index bytes: a bucket naming a restart point past the block's is a
    /// corruption error, any other bucket value gives an answer (never a panic), and a
    /// bucket count of 0, or larger than the block, or a flagged count above the limit,
    /// refuses the block.
    #[test]
    fn damaged_hash_indexes_are_caught_or_harmless() {
        let entries = versioned_entries(30, 2, false);
        let good = build_hashed(&entries, 4, 0.75).bytes().to_vec();
        let n = 15;
        let len = good.len();
        let m = u16::from_le_bytes([good[len - 6], good[len - 5]]) as usize;
        let buckets = len - 6 - m;
        let cmp = BlockOrder::Internal(KeyOrder::Bytewise);
        for value in 0..=255u8 {
            let mut d = good.clone();
            d[buckets..buckets + m].fill(value);
            let mut it = BlockIter::new(Arc::new(Block::new(d).unwrap()), cmp.clone());
            for (k, _) in &entries {
                it.seek_for_get(k);
                let past = (n..COLLISION as usize).contains(&usize::from(value));
                match it.corrupt() {
                    Some(why) => {
                        assert!(past, "bucket {value}: {why}");
                        assert!(why.contains("names restart point"), "{why}");
                    }
                    None => assert!(!past, "bucket {value} not caught"),
                }
                it.set_block(it.block().clone());
            }
        }
        // (what is written over the bucket count and the flagged count, the error)
        let count = |n: u32| (n | HASH_INDEX_FLAG).to_le_bytes();
        #[rustfmt::skip]
        let cases: [(u16, [u8; 4], &str); 3] = [
            (0, count(n as u32), "hash index has no bucket"),
            (u16::MAX, count(n as u32), "hash index larger than the block"),
            (m as u16, count(254), "block of 254 restart points carries a hash index"),
        ];
        for (m, last, why) in cases {
            let mut d = good.clone();
            d[len - 6..len - 4].copy_from_slice(&m.to_le_bytes());
            d[len - 4..].copy_from_slice(&last);
            let err = Block::new(d).err().unwrap_or_default();
            assert!(err.contains(why), "{err}");
        }
    }

    /// Moves mixing directions land where the model says, across restart points and the
    /// block's ends: `prev` takes remembered entries of the interval, which every other
    /// move must forget.
    #[test]
    fn prev_after_any_move_lands_on_the_entry_before() {
        let entries: Vec<Entry> = (0..23u32)
            .map(|i| {
                (
                    format!("key{i:03}").into_bytes(),
                    format!("v{i}").into_bytes(),
                )
            })
            .collect();
        let key = |i: usize| entries[i].0.clone();
        // Each case: moves, then the entry expected (None: invalid).
        enum Move {
            First,
            Last,
            Seek(usize),
            SeekForPrev(usize),
            Next,
            Prev,
        }
        use Move::*;
        #[rustfmt::skip]
        let cases: Vec<(Vec<Move>, Option<usize>)> = vec![
            (vec![Last, Prev], Some(21)),
            (vec![Last, Prev, Prev, Prev, Prev, Prev], Some(17)),
            (vec![Last, Prev, Prev, Next, Prev], Some(20)),
            (vec![Last, Prev, Next], Some(22)),
            (vec![Last, Prev, Next, Next], None),
            (vec![Seek(9), Prev, Prev, Prev], Some(6)),
            (vec![Seek(8), Prev], Some(7)),
            (vec![Seek(8), Prev, Prev, Next, Next, Prev, Prev], Some(6)),
            (vec![SeekForPrev(12), Prev, Seek(3), Prev], Some(2)),
            (vec![Seek(5), Prev, Prev, Seek(15), Prev, Prev], Some(13)),
            (vec![First, Next, Prev, Prev], None),
            (vec![Seek(2), Prev, Prev, Prev], None),
            (vec![Last, Prev, Last], Some(22)),
        ];
        for interval in [1, 2, 3, 4, 16, 100] {
            let block = build(&entries, interval);
            for (i, (moves, expected)) in cases.iter().enumerate() {
                let mut it = BlockIter::new(block.clone(), BYTEWISE);
                for m in moves {
                    match m {
                        First => it.seek_to_first(),
                        Last => it.seek_to_last(),
                        Seek(k) => it.seek(&key(*k)),
                        SeekForPrev(k) => it.seek_for_prev(&key(*k)),
                        Next => it.next(),
                        Prev => it.prev(),
                    }
                }
                let got = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
                let want = expected.map(|e| entries[e].clone());
                assert_eq!(got, want, "interval {interval}, case {i}");
            }
        }
    }

    /// Bytewise order through the application's-comparator path, to check that path
    /// against the built-in one.
    struct ThroughTrait;

    impl crate::comparator::Comparator for ThroughTrait {
        fn name(&self) -> &str {
            "test.bytewise-through-trait"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            a.cmp(b)
        }
    }

    /// Keys over a few bytes, many of them prefixes of others, some of them sharing more
    /// bytes with a neighbour than a target does; internal keys get a trailer whose bytes
    /// (kinds 0, 1, 2, 7 and small sequence numbers) also occur in the user keys, so that a
    /// shared prefix can run from a user key into a trailer.
    fn edge_key(rng: &mut Rng, internal: bool) -> Vec<u8> {
        const BYTES: &[u8] = b"\x00\x01\x02\x07ab\xff";
        let len = rng.below(7) as usize;
        let mut key: Vec<u8> = (0..len)
            .map(|_| BYTES[rng.below(BYTES.len() as u64) as usize])
            .collect();
        if internal {
            let seq = [0, 1, 2, 7, 0x0100, 0x0201][rng.below(6) as usize];
            let kind = [0u8, 1, 2, 7][rng.below(4) as usize];
            crate::key::append_internal_key(&mut key, &[], seq, kind);
        }
        key
    }

    /// The restart point a seek starts from, found by the block's restart words and by its
    /// restart keys (`None` in an application's order, or without words).
    fn restart_found_both_ways(it: &BlockIter, target: &[u8]) -> Option<(usize, usize)> {
        fn both<const INTERNAL: bool, const REVERSE: bool>(
            it: &BlockIter,
            target: &[u8],
        ) -> Option<(usize, usize)> {
            let words = it
                .block
                .restart_words(if INTERNAL { TRAILER_LEN } else { 0 })?;
            let by_words = it.restart_before_by_words::<INTERNAL, REVERSE>(target, words);
            let by_keys = it.restart_before(target, compare_in_byte_order::<INTERNAL, REVERSE>);
            Some((by_words.ok()?, by_keys.ok()?))
        }
        match &it.cmp {
            BlockOrder::Plain(KeyOrder::Bytewise) => both::<false, false>(it, target),
            BlockOrder::Plain(KeyOrder::Reverse) => both::<false, true>(it, target),
            BlockOrder::Internal(KeyOrder::Bytewise) => both::<true, false>(it, target),
            BlockOrder::Internal(KeyOrder::Reverse) => both::<true, true>(it, target),
            _ => None,
        }
    }

    /// Seeks land where a sorted list says, for every order the block layer knows (each
    /// built-in one through its in-place scan, an application's through its comparator),
    /// every restart interval, and targets that are keys, restart keys, prefixes and
    /// extensions of keys, and keys of none: the key and value after the seek, and after
    /// the steps that follow it, are the model's. A block with many restart points is
    /// searched by its restart words, which must find the restart point its keys do.
    #[test]
    fn seeks_in_every_order_agree_with_a_sorted_list() {
        let custom = || KeyOrder::Custom(Arc::new(ThroughTrait));
        let orders = [
            BlockOrder::Plain(KeyOrder::Bytewise),
            BlockOrder::Plain(KeyOrder::Reverse),
            BlockOrder::Plain(custom()),
            BlockOrder::Internal(KeyOrder::Bytewise),
            BlockOrder::Internal(KeyOrder::Reverse),
            BlockOrder::Internal(custom()),
        ];
        let mut rng = Rng::new(11);
        for cmp in orders {
            let internal = matches!(cmp, BlockOrder::Internal(_));
            for round in 0..40 {
                // Up to 60 keys, or (every other round) up to 400: with intervals of 1 and
                // 2, blocks past `WORDS_FROM_RESTARTS` restart points, searched by words.
                let n = 1 + rng.below([60, 400][round % 2]) as usize;
                let mut keys: Vec<Vec<u8>> = (0..n).map(|_| edge_key(&mut rng, internal)).collect();
                keys.sort_by(|a, b| cmp.compare(a, b));
                keys.dedup();
                let entries: Vec<Entry> = keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| (k.clone(), format!("v{i}").into_bytes()))
                    .collect();
                let mut targets: Vec<Vec<u8>> = keys.clone();
                for k in &keys {
                    targets.push(k[..k.len() / 2].to_vec());
                    targets.push([k.as_slice(), b"\x00"].concat());
                    targets.push([k.as_slice(), b"\xff"].concat());
                }
                targets.extend((0..30).map(|_| edge_key(&mut rng, internal)));
                for interval in [1, 2, 3, 16] {
                    let block = build(&entries, interval);
                    let mut it = BlockIter::new(block, cmp.clone());
                    for target in &targets {
                        if let Some((by_words, by_keys)) = restart_found_both_ways(&it, target) {
                            assert_eq!(by_words, by_keys, "{cmp:?} round {round} {target:?}");
                        }
                        it.seek(target);
                        let first = keys.partition_point(|k| cmp.compare(k, target).is_lt());
                        for step in 0..3 {
                            let got = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
                            assert_eq!(
                                got,
                                entries.get(first + step).cloned(),
                                "{cmp:?} round {round} interval {interval} target {target:?} \
                                 step {step}"
                            );
                            it.next();
                        }
                    }
                }
            }
        }
    }

    /// A key built in place and moved to the heap and back (lengths across
    /// [`INLINE_KEY`]) holds what a `Vec` doing the same holds.
    #[test]
    fn key_buffers_hold_what_a_vec_holds_across_the_inline_length() {
        let mut rng = Rng::new(3);
        let mut key = KeyBuf::new(Vec::new());
        let mut model: Vec<u8> = Vec::new();
        for step in 0..20_000 {
            match rng.below(3) {
                0 => {
                    let len = rng.below(model.len() as u64 + 1) as usize;
                    key.truncate(len);
                    model.truncate(len);
                }
                1 => {
                    let bytes: Vec<u8> = (0..rng.below(30)).map(|_| rng.next_u64() as u8).collect();
                    key.extend(&bytes);
                    model.extend_from_slice(&bytes);
                }
                _ if rng.one_in(10) => {
                    key.clear();
                    model.clear();
                }
                _ => {}
            }
            assert_eq!(key.as_slice(), model.as_slice(), "step {step}");
            assert_eq!(key.len(), model.len());
        }
    }

    #[test]
    fn a_64k_key_round_trips() {
        let entries = [
            (vec![b'x'; 65536], b"big".to_vec()),
            (vec![b'x'; 65537], b"bigger".to_vec()),
        ];
        let block = build(&entries, 16);
        let mut it = BlockIter::new(block, BYTEWISE);
        it.seek(&vec![b'x'; 65537]);
        assert_eq!(it.value(), b"bigger");
    }

    #[test]
    fn damaged_blocks_never_panic() {
        let mut rng = Rng::new(5);
        let entries = harness::random_entries(&mut rng, Keys::Bytewise, 60);
        let internal = harness::random_entries(&mut rng, Keys::Internal, 60);
        let blocks = [
            (build(&entries, 4), BYTEWISE),
            (
                build_hashed(&internal, 4, 0.75),
                BlockOrder::Internal(KeyOrder::Bytewise),
            ),
        ];
        for (good, cmp) in blocks {
            let good = good.bytes().to_vec();
            for i in 0..good.len() {
                for bit in [0x01u8, 0x80] {
                    let mut d = good.clone();
                    d[i] ^= bit;
                    let Ok(block) = Block::new(d) else { continue };
                    let mut it = BlockIter::new(Arc::new(block), cmp.clone());
                    it.seek_to_first();
                    let mut steps = 0;
                    while it.valid() && steps < 1000 {
                        it.next();
                        steps += 1;
                    }
                    it.seek(b"ab");
                    it.seek_to_last();
                    it.prev();
                    for (k, _) in internal.iter().step_by(5) {
                        it.seek_for_get(k);
                    }
                }
            }
        }
        assert!(Block::new(vec![1, 0]).is_err());
        assert!(Block::new(vec![0, 0, 0, 0]).is_err());
        assert!(Block::new(vec![9, 0, 0, 0]).is_err());
    }
}
