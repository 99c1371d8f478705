//! A key a block cursor builds from its prefix-compressed entries: in the cursor itself
//! while it fits (no allocation for a cursor made for one seek), in a kept `Vec` when longer.

/// Bytes of a key a cursor builds without allocating: keys up to this length (db_bench's
/// 16-byte keys with their 8-byte trailer, most applications' keys) are built in the cursor
/// itself, so that a cursor made for one seek allocates no key buffer.
pub(crate) const INLINE_KEY: usize = 48;

/// A key being built: in `inline` while it fits, whole in `heap` when longer.
#[derive(Clone)]
pub(super) struct KeyBuf {
    len: usize,
    inline: [u8; INLINE_KEY],
    /// The key when it is longer than [`INLINE_KEY`] bytes; its capacity is kept for reuse.
    heap: Vec<u8>,
}

impl KeyBuf {
    /// An empty key, with `heap`'s capacity for long ones.
    pub(super) fn new(mut heap: Vec<u8>) -> KeyBuf {
        heap.clear();
        KeyBuf {
            len: 0,
            inline: [0; INLINE_KEY],
            heap,
        }
    }

    /// The buffer of long keys, for reuse by the next cursor.
    pub(super) fn into_heap(self) -> Vec<u8> {
        self.heap
    }

    #[inline]
    pub(super) fn as_slice(&self) -> &[u8] {
        match self.inline.get(..self.len) {
            Some(key) => key,
            None => &self.heap,
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn clear(&mut self) {
        self.len = 0;
        self.heap.clear();
    }

    /// Keeps the first `len` bytes.
    #[inline]
    pub(super) fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        if self.len > INLINE_KEY {
            match self.inline.get_mut(..len) {
                Some(inline) => {
                    inline.copy_from_slice(&self.heap[..len]);
                    self.heap.clear();
                }
                None => self.heap.truncate(len),
            }
        }
        self.len = len;
    }

    /// Appends `bytes`.
    #[inline]
    pub(super) fn extend(&mut self, bytes: &[u8]) {
        let len = self.len + bytes.len();
        match self.inline.get_mut(self.len..len) {
            Some(room) => room.copy_from_slice(bytes),
            None => {
                if self.len <= INLINE_KEY {
                    self.heap.clear();
                    self.heap.extend_from_slice(&self.inline[..self.len]);
                }
                self.heap.extend_from_slice(bytes);
            }
        }
        self.len = len;
    }
}
