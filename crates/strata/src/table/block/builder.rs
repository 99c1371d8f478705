//! Building a block: entries appended in order, their keys prefix-compressed, a restart
//! point every `restart_interval` entries, and a data block's hash index.

use super::*;

/// Builds one block.
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    counter: usize,
    last_key: Vec<u8>,
    entries: usize,
    /// The user keys of a data block of internal keys, for its hash index.
    hash_index: Option<HashIndexBuilder>,
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
            hash_index: None,
        }
    }

    /// A builder of data blocks of internal keys that carry a hash index of their user keys
    /// with `user keys / util_ratio` buckets when they have at most 253 restart points
    /// (`data_block_hash.rs`).
    pub fn with_hash_index(restart_interval: usize, util_ratio: f64) -> BlockBuilder {
        BlockBuilder {
            hash_index: Some(HashIndexBuilder::new(util_ratio)),
            ..BlockBuilder::new(restart_interval)
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
        if let Some(h) = &mut self.hash_index {
            let user_key = &key[..key.len().saturating_sub(TRAILER_LEN)];
            let last = &self.last_key[..self.last_key.len().saturating_sub(TRAILER_LEN)];
            if self.entries == 0 || last != user_key {
                h.add(user_key, self.restarts.len() - 1);
            }
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
        let hash_index = self
            .hash_index
            .as_ref()
            .map_or(0, |h| h.encoded_len(self.restarts.len()));
        self.buf.len() + 4 * self.restarts.len() + hash_index + 4
    }

    /// At least the bytes one more entry of `key_len` and `value_len` bytes would add to
    /// [`BlockBuilder::estimated_size`]: as if its key shared nothing with the last one and
    /// started a restart point, and the hash index (if any) grew by a bucket or two.
    pub fn entry_growth_bound(&self, key_len: usize, value_len: usize) -> usize {
        let varints = 1 + varint_len(key_len as u64) + varint_len(value_len as u64);
        let hash_growth = if self.hash_index.is_some() { 2 } else { 0 };
        varints + key_len + value_len + 4 + hash_growth
    }

    /// True when no entry was added.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The last key added.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Appends the restart array (and the hash index of a builder made
    /// [`BlockBuilder::with_hash_index`], when the block has few enough restart points) and
    /// returns the block's contents; then `reset` for reuse.
    pub fn finish(&mut self) -> &[u8] {
        for r in &self.restarts {
            self.buf.extend_from_slice(&r.to_le_bytes());
        }
        let n = self.restarts.len();
        let hashed = match &self.hash_index {
            Some(h) => h.finish(n, &mut self.buf),
            None => false,
        };
        let count = match hashed {
            true => n as u32 | HASH_INDEX_FLAG,
            false => n as u32,
        };
        self.buf.extend_from_slice(&count.to_le_bytes());
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
        if let Some(h) = &mut self.hash_index {
            h.reset();
        }
    }
}
