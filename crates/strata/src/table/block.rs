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

pub use builder::BlockBuilder;
pub use iter::BlockIter;
pub(crate) use iter::INLINE_KEY;

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

/// The name this type had before it was [`BlockOrder`], beside the public `Comparator` trait
/// it is not. Kept only until the database's and the options' modules name the new one.
pub type Comparator = BlockOrder;

impl BlockOrder {
    /// Whole keys, bytewise: meta-index and properties blocks, tables without a database.
    pub const BYTEWISE: BlockOrder = BlockOrder::Plain(KeyOrder::Bytewise);

    /// Orders two keys.
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
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
}

/// Blocks with at least this many restart points get a word per restart point at their
/// first seek: index blocks (a restart point per entry, thousands in a large table), not
/// data blocks (a few).
const WORDS_FROM_RESTARTS: usize = 64;

/// Where a block's bytes live: a buffer of its own, or a range of a buffer that one read
/// filled with several adjacent blocks (a sequential scan's readahead), shared with them.
enum BlockBytes {
    Owned(Vec<u8>),
    InChunk {
        chunk: Arc<Vec<u8>>,
        start: usize,
        len: usize,
    },
}

impl BlockBytes {
    #[inline]
    fn as_slice(&self) -> &[u8] {
        match self {
            BlockBytes::Owned(v) => v,
            BlockBytes::InChunk { chunk, start, len } => &chunk[*start..*start + *len],
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

    /// A block whose bytes are `chunk[range]`: it keeps the whole chunk alive. Readahead reads
    /// adjacent blocks with one read and gives each its range, so that a scan pays one read
    /// and one allocation per chunk instead of per block.
    pub fn in_chunk(chunk: Arc<Vec<u8>>, range: std::ops::Range<usize>) -> Result<Block, String> {
        if range.start > range.end || range.end > chunk.len() {
            return Err("block range outside its chunk".into());
        }
        Block::checked(BlockBytes::InChunk {
            chunk,
            start: range.start,
            len: range.end - range.start,
        })
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
            Some(Some(w)) => 8 * w.words.len(),
            _ => 0,
        };
        self.bytes().len() + words
    }

    /// The first 8 bytes of each restart point's user key (the key less `trailer_len`
    /// bytes) as a word that orders as they do ([`first_word`]), made at the first call;
    /// `None` for a block with few restart points, for one whose restart entries do not
    /// decode (a seek then reads the entries and reports it), and for another `trailer_len`
    /// than the first call's (a block is read in one order). A binary search then compares
    /// words, and reads a restart key only when its word equals the target's: an index
    /// search touches 8 bytes per probe instead of an entry's header and key.
    fn restart_words(&self, trailer_len: usize) -> Option<&[u64]> {
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
            Some(RestartWords { trailer_len, words })
        });
        made.as_ref()
            .filter(|w| w.trailer_len == trailer_len)
            .map(|w| &*w.words)
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
mod tests;
