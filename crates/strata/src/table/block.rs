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
//! knows nothing of sequence numbers.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::codec::{decode_fixed32, put_varint32};
use crate::comparator::KeyOrder;

/// How a table orders its keys: whole keys in a user order, or internal keys whose user keys
/// are in a user order. An enum rather than a function pointer so that the built-in orders
/// compare inline.
#[derive(Clone, Debug)]
pub enum Comparator {
    /// Keys are whole user keys.
    Plain(KeyOrder),
    /// Keys are internal keys (`crate::key`): user key in the order, then trailer descending.
    Internal(KeyOrder),
}

impl Comparator {
    /// Whole keys, bytewise: meta-index and properties blocks, tables without a database.
    pub const BYTEWISE: Comparator = Comparator::Plain(KeyOrder::Bytewise);

    /// Orders two keys.
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Comparator::Plain(o) => o.compare(a, b),
            Comparator::Internal(o) => o.compare_internal(a, b),
        }
    }

    /// The user key order.
    pub fn order(&self) -> &KeyOrder {
        match self {
            Comparator::Plain(o) | Comparator::Internal(o) => o,
        }
    }

    /// Shortens `start` to a key in `[start, limit)`, for an index entry (see
    /// [`KeyOrder::find_shortest_separator`]).
    pub fn shorten_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        match self {
            Comparator::Plain(o) => o.find_shortest_separator(start, limit),
            Comparator::Internal(o) => o.shorten_internal_separator(start, limit),
        }
    }
}

/// Builds one block.
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    counter: usize,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// A builder with a restart point every `restart_interval` entries (at least 1).
    pub fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            counter: 0,
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Appends an entry; keys must come in increasing order.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let mut shared = 0;
        if self.counter < self.restart_interval {
            shared = self
                .last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count();
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
        }
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, (key.len() - shared) as u32);
        put_varint32(&mut self.buf, value.len() as u32);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.counter += 1;
        self.entries += 1;
    }

    /// Bytes the block will have when finished.
    pub fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// True when no entry was added.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The last key added.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Appends the restart array and returns the block's contents; then `reset` for reuse.
    pub fn finish(&mut self) -> &[u8] {
        for r in &self.restarts {
            self.buf.extend_from_slice(&r.to_le_bytes());
        }
        self.buf
            .extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        &self.buf
    }

    /// Empties the builder for the next block.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.entries = 0;
    }
}

/// A decoded block, shared by iterators and the block cache.
pub struct Block {
    data: BlockBytes,
    restarts_at: usize,
    num_restarts: usize,
}

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
        let n = decode_fixed32(data.len().checked_sub(4).map_or(&[][..], |at| &data[at..]))
            .ok_or("block shorter than its restart count")? as usize;
        let restarts_at = n
            .checked_mul(4)
            .and_then(|r| data.len().checked_sub(4 + r))
            .ok_or("restart array larger than the block")?;
        if n == 0 {
            return Err("block has no restart point".into());
        }
        Ok(Block {
            data: bytes,
            restarts_at,
            num_restarts: n,
        })
    }

    /// A block with no entries.
    pub fn empty() -> Block {
        Block {
            data: BlockBytes::Owned(vec![0, 0, 0, 0, 1, 0, 0, 0]),
            restarts_at: 0,
            num_restarts: 1,
        }
    }

    /// Bytes of memory the block holds (what the cache charges).
    pub fn size(&self) -> usize {
        self.bytes().len()
    }

    fn restart(&self, i: usize) -> usize {
        decode_fixed32(&self.bytes()[self.restarts_at + 4 * i..]).unwrap_or_default() as usize
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

/// A cursor over one block. On malformed bytes it becomes invalid and `corrupt()` says why.
#[derive(Clone)]
pub struct BlockIter {
    block: Arc<Block>,
    cmp: Comparator,
    /// Offset of the current entry; `restarts_at` when past the end.
    current: usize,
    /// Offset just after the current entry.
    next: usize,
    key: Vec<u8>,
    value: (usize, usize),
    corrupt: Option<String>,
    /// The entries before the current one in its restart interval, as the last backward
    /// scan of the interval decoded them (their keys end to end in `prev_keys`): `prev`
    /// takes the last one instead of decoding the interval again, so a reverse scan decodes
    /// each entry once. Any other move empties it.
    prev_entries: Vec<PrevEntry>,
    prev_keys: Vec<u8>,
}

/// An entry remembered for `prev`: where it lies, its value, where its key ends.
#[derive(Clone, Copy)]
struct PrevEntry {
    current: usize,
    next: usize,
    value: (usize, usize),
    key_end: usize,
}

impl BlockIter {
    /// An unpositioned cursor over `block` ordered by `cmp`.
    pub fn new(block: Arc<Block>, cmp: Comparator) -> BlockIter {
        BlockIter::with_buffer(block, cmp, Vec::new())
    }

    /// As [`BlockIter::new`], decoding keys into `buffer` (its capacity is reused; get it
    /// back with [`BlockIter::into_buffer`]), so that hot paths do not allocate.
    pub fn with_buffer(block: Arc<Block>, cmp: Comparator, mut buffer: Vec<u8>) -> BlockIter {
        buffer.clear();
        let end = block.restarts_at;
        BlockIter {
            block,
            cmp,
            current: end,
            next: end,
            key: buffer,
            value: (0, 0),
            corrupt: None,
            prev_entries: Vec::new(),
            prev_keys: Vec::new(),
        }
    }

    /// Moves this cursor, unpositioned, to `block` (with the same order), keeping its buffers:
    /// a table iterator going from block to block allocates nothing.
    pub fn set_block(&mut self, block: Arc<Block>) {
        let end = block.restarts_at;
        self.block = block;
        self.current = end;
        self.next = end;
        self.key.clear();
        self.value = (0, 0);
        self.corrupt = None;
        self.forget_prev_entries();
    }

    /// The key buffer, for reuse.
    pub fn into_buffer(self) -> Vec<u8> {
        self.key
    }

    /// True when on an entry.
    pub fn valid(&self) -> bool {
        self.current < self.block.restarts_at && self.corrupt.is_none()
    }

    /// The current key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value.
    pub fn value(&self) -> &[u8] {
        &self.block.bytes()[self.value.0..self.value.0 + self.value.1]
    }

    /// Where the current value lies in the block's bytes ([`Block::bytes`]).
    pub fn value_range(&self) -> std::ops::Range<usize> {
        self.value.0..self.value.0 + self.value.1
    }

    /// The block this cursor reads.
    pub fn block(&self) -> &Arc<Block> {
        &self.block
    }

    /// Why the block could not be decoded, if it could not.
    pub fn corrupt(&self) -> Option<&str> {
        self.corrupt.as_deref()
    }

    fn mark_corrupt(&mut self, why: &str) {
        self.corrupt = Some(why.to_string());
        self.current = self.block.restarts_at;
        self.next = self.block.restarts_at;
    }

    /// Decodes the entry at `self.next` into current; false at the end or on corruption.
    fn parse_next(&mut self) -> bool {
        let at = self.next;
        let limit = self.block.restarts_at;
        if at >= limit {
            self.current = limit;
            return false;
        }
        let data = self.block.bytes();
        let Some((shared, unshared, vlen, kat)) = decode_entry(data, at, limit) else {
            self.mark_corrupt("bad entry in block");
            return false;
        };
        if shared > self.key.len() {
            self.mark_corrupt("entry shares more bytes than the previous key has");
            return false;
        }
        self.key.truncate(shared);
        self.key.extend_from_slice(&data[kat..kat + unshared]);
        self.current = at;
        self.value = (kat + unshared, vlen);
        self.next = kat + unshared + vlen;
        true
    }

    fn seek_to_restart(&mut self, index: usize) {
        self.forget_prev_entries();
        self.key.clear();
        self.next = self.block.restart(index);
        if self.next > self.block.restarts_at {
            self.mark_corrupt("restart point past the entries");
        }
    }

    /// Moves to the first entry.
    pub fn seek_to_first(&mut self) {
        if self.corrupt.is_some() {
            return;
        }
        self.seek_to_restart(0);
        self.parse_next();
    }

    /// Moves to the last entry.
    pub fn seek_to_last(&mut self) {
        if self.corrupt.is_some() {
            return;
        }
        self.seek_to_restart(self.block.num_restarts - 1);
        self.scan_interval_to(self.block.restarts_at);
    }

    /// From a restart point, decodes entries up to the one that ends at `end`, remembering
    /// the ones before it for `prev`.
    fn scan_interval_to(&mut self, end: usize) {
        while self.parse_next() && self.next < end {
            self.prev_keys.extend_from_slice(&self.key);
            self.prev_entries.push(PrevEntry {
                current: self.current,
                next: self.next,
                value: self.value,
                key_end: self.prev_keys.len(),
            });
        }
    }

    fn forget_prev_entries(&mut self) {
        self.prev_entries.clear();
        self.prev_keys.clear();
    }

    /// Moves to the first entry with key >= `target`.
    pub fn seek(&mut self, target: &[u8]) {
        if self.corrupt.is_some() {
            return;
        }
        // The last restart point whose key is < target.
        let (mut left, mut right) = (0, self.block.num_restarts - 1);
        while left < right {
            let mid = (left + right).div_ceil(2);
            let at = self.block.restart(mid);
            let Some((shared, unshared, _, kat)) =
                decode_entry(self.block.bytes(), at, self.block.restarts_at)
            else {
                self.mark_corrupt("bad entry at a restart point");
                return;
            };
            if shared != 0 {
                self.mark_corrupt("restart entry shares a prefix");
                return;
            }
            if self
                .cmp
                .compare(&self.block.bytes()[kat..kat + unshared], target)
                == Ordering::Less
            {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        self.seek_to_restart(left);
        while self.parse_next() {
            if self.cmp.compare(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    /// Moves to the last entry with key <= `target`.
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if !self.valid() {
            if self.corrupt.is_none() {
                self.seek_to_last();
            }
            return;
        }
        if self.cmp.compare(&self.key, target) == Ordering::Greater {
            self.prev();
        }
    }

    /// Moves to the next entry.
    pub fn next(&mut self) {
        if self.valid() {
            self.forget_prev_entries();
            self.parse_next();
        }
    }

    /// Moves to the previous entry (invalid before the first).
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        let original = self.current;
        if let Some(e) = self.prev_entries.pop() {
            if e.next == original {
                let key_start = self.prev_entries.last().map_or(0, |p| p.key_end);
                self.key.clear();
                self.key
                    .extend_from_slice(&self.prev_keys[key_start..e.key_end]);
                self.prev_keys.truncate(key_start);
                self.current = e.current;
                self.next = e.next;
                self.value = e.value;
                return;
            }
        }
        // The last restart point strictly before the current entry, by binary search: a
        // forward step then need not track which interval it is in. (`before` counts the
        // restart points found before it; one counted was checked to be.)
        let (mut before, mut after) = (0, self.block.num_restarts);
        while before < after {
            let mid = (before + after) / 2;
            if self.block.restart(mid) < original {
                before = mid + 1;
            } else {
                after = mid;
            }
        }
        if before == 0 {
            self.current = self.block.restarts_at;
            self.next = self.block.restarts_at;
            return;
        }
        self.seek_to_restart(before - 1);
        self.scan_interval_to(original);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iterator::InternalIterator;
    use crate::testing::harness::{
        self, internal_iterator_from_inherent, Constructor, Entries, Entry, Keys,
    };
    use crate::util::Rng;

    const BYTEWISE: Comparator = Comparator::BYTEWISE;

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

    struct BlockConstructor {
        restart_interval: usize,
        keys: Keys,
    }

    impl Constructor for BlockConstructor {
        fn name(&self) -> String {
            format!(
                "block (restart interval {}, {:?})",
                self.restart_interval, self.keys
            )
        }
        fn keys(&self) -> Keys {
            self.keys
        }
        fn build(&mut self, entries: &Entries, _: &mut Rng) -> Box<dyn InternalIterator + '_> {
            let block = build(entries, self.restart_interval);
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
                };
                harness::check(&mut c, 8);
            }
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
        let good = build(&entries, 4).bytes().to_vec();
        for i in 0..good.len() {
            for bit in [0x01u8, 0x80] {
                let mut d = good.clone();
                d[i] ^= bit;
                let Ok(block) = Block::new(d) else { continue };
                let mut it = BlockIter::new(Arc::new(block), BYTEWISE);
                it.seek_to_first();
                let mut steps = 0;
                while it.valid() && steps < 1000 {
                    it.next();
                    steps += 1;
                }
                it.seek(b"ab");
                it.seek_to_last();
                it.prev();
            }
        }
        assert!(Block::new(vec![1, 0]).is_err());
        assert!(Block::new(vec![0, 0, 0, 0]).is_err());
        assert!(Block::new(vec![9, 0, 0, 0]).is_err());
    }
}
