//! An iterator over one table: the index (flat, or two-level through
//! [`IndexIter`]) over the data blocks, read through the table's block cache.
//!
//! An iterator stepping from block to block reads ahead: a window of adjacent blocks not yet
//! cached, read with one read (16 KiB, then doubling to 256 KiB); each block is checked,
//! copied into a buffer of its own and cached as if read alone, or, for a read that does not
//! fill the cache, kept in the iterator's own window (`reader/readahead.rs`).

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::table::block::{Block, BlockIter};
use crate::table::partitioned::IndexIter;
use crate::table::reader::{BlockReads, ReadWindow, Table};

impl Table {
    /// An iterator over the table; it keeps the table open.
    pub fn iter(self: &Arc<Self>) -> TableIterator {
        let (index, error) = match self.index_block() {
            Ok(b) => (b, None),
            Err(e) => (Arc::new(Block::empty()), Some(e)),
        };
        TableIterator {
            index: IndexIter::new(self.clone(), index, self.partitioned_index),
            table: self.clone(),
            data: None,
            data_offset: 0,
            readahead: 0,
            fixed_readahead: 0,
            reads: BlockReads::DEFAULT,
            window: None,
            error,
            prepared: false,
        }
    }

    /// An iterator over the table that reads `readahead_size` bytes at a time from the file,
    /// from its first block read on (`ReadOptions::readahead_size`; 0 lets the window grow),
    /// and treats the data blocks it reads as `reads` says.
    pub fn iter_for_read(
        self: &Arc<Self>,
        readahead_size: usize,
        reads: BlockReads,
    ) -> TableIterator {
        // Set in place: the iterator holds three block cursors, too much to copy for a field.
        let mut it = self.iter();
        it.fixed_readahead = readahead_size;
        it.reads = reads;
        it
    }
}

/// Bytes a scan reads ahead after its first block read from the file: the window doubles
/// with each further read, up to [`MAX_READAHEAD`], and a seek starts it over. A scan then
/// pays one read and one allocation per window instead of one per block, while a seek that
/// reads a few entries reads only its block.
const MIN_READAHEAD: usize = 16 << 10;
/// The largest readahead window (RocksDB's default `max_auto_readahead_size`).
const MAX_READAHEAD: usize = 256 << 10;

/// An iterator over one table (index block, or two-level index, over data blocks).
pub struct TableIterator {
    table: Arc<Table>,
    index: IndexIter<Table>,
    data: Option<BlockIter>,
    pub(super) data_offset: u64,
    /// Bytes to read ahead on the next block loaded from the file while stepping from block
    /// to block; 0 until a step has read one.
    readahead: usize,
    /// The caller's fixed readahead (`ReadOptions::readahead_size`): every block read from
    /// the file, a seek's included, brings this many bytes of the blocks after it. 0 leaves
    /// the window to grow on its own (above).
    fixed_readahead: usize,
    /// Whether the data blocks read go into the cache and have their checksums checked.
    reads: BlockReads,
    /// Without filling the cache: the bytes last read ahead, which the next blocks come
    /// from (`reader/readahead.rs`).
    window: Option<ReadWindow>,
    error: Option<Error>,
    /// `prepare_seek` positioned the index and loaded the target's data block.
    prepared: bool,
}

impl TableIterator {
    /// Where in the file the data block under the cursor starts; `None` when the cursor is
    /// on no block.
    pub fn current_block_offset(&self) -> Option<u64> {
        self.data.as_ref().map(|_| self.data_offset)
    }

    fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.data = None;
    }

    /// Loads the data block the index is on; `data` is `None` if the index is not valid.
    /// `forward` is the direction the iterator goes on in; `stepping` is true when it moves
    /// on from the adjacent block, which may read ahead, and false for a seek, which starts
    /// the readahead over (and reads ahead only with a fixed readahead).
    fn load_block(&mut self, forward: bool, stepping: bool) {
        if !self.index.valid() {
            self.data = None;
            if let Some(e) = self.index.error() {
                self.fail(e);
            }
            return;
        }
        if !stepping {
            self.readahead = 0;
        }
        let readahead = match self.fixed_readahead {
            0 if stepping => Some(self.readahead),
            0 => None,
            fixed => Some(fixed),
        };
        let table = &self.table;
        let loaded = self.index.handle().and_then(|h| {
            let (block, read) = match readahead {
                Some(bytes) => table.data_block_ahead(
                    h,
                    &self.index,
                    (bytes, forward),
                    self.reads,
                    &mut self.window,
                )?,
                None => (table.data_block(h, self.reads)?, false),
            };
            Ok((h, block, read))
        });
        match loaded {
            Ok((h, block, read)) => {
                if read {
                    self.readahead = (self.readahead * 2).clamp(MIN_READAHEAD, MAX_READAHEAD);
                }
                self.data_offset = h.offset;
                // The cursor of the block left behind reads the next one, with its buffers,
                // changed in place (a cursor is a few hundred bytes to move).
                match &mut self.data {
                    Some(d) => d.set_block(block),
                    None => {
                        let cmp = self.table.options.comparator.clone();
                        self.data = Some(BlockIter::new(block, cmp));
                    }
                }
            }
            Err(e) => self.fail(e),
        }
    }

    fn check_data(&mut self) -> bool {
        if let Some(why) = self.data.as_ref().and_then(|d| d.corrupt()) {
            let e = Error::corruption(&self.table.path, self.data_offset, why.to_string());
            self.fail(e);
            return false;
        }
        true
    }

    fn skip_forward(&mut self) {
        while self.error.is_none() && self.data.as_ref().is_some_and(|d| !d.valid()) {
            if !self.check_data() {
                return;
            }
            self.index.next();
            self.load_block(true, true);
            if let Some(d) = &mut self.data {
                d.seek_to_first();
            }
        }
        self.check_data();
    }

    fn skip_backward(&mut self) {
        while self.error.is_none() && self.data.as_ref().is_some_and(|d| !d.valid()) {
            if !self.check_data() {
                return;
            }
            self.index.prev();
            self.load_block(false, true);
            if let Some(d) = &mut self.data {
                d.seek_to_last();
            }
        }
        self.check_data();
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        self.error.is_none() && self.data.as_ref().is_some_and(|d| d.valid())
    }

    fn seek_to_first(&mut self) {
        self.prepared = false;
        self.index.seek_to_first();
        self.load_block(true, false);
        if let Some(d) = &mut self.data {
            d.seek_to_first();
        }
        self.skip_forward();
    }

    fn seek_to_last(&mut self) {
        self.prepared = false;
        self.index.seek_to_last();
        self.load_block(false, false);
        if let Some(d) = &mut self.data {
            d.seek_to_last();
        }
        self.skip_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        if !std::mem::take(&mut self.prepared) {
            self.index.seek(target);
            self.load_block(true, false);
        }
        if let Some(d) = &mut self.data {
            d.seek(target);
        }
        self.skip_forward();
    }

    fn prepare_seek(&mut self, target: &[u8]) {
        // The block cache's hit has already asked for the block's restart array
        // (`CacheValue::first_read`), and a block just read from the file is in cache.
        self.index.seek(target);
        self.load_block(true, false);
        self.prepared = true;
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.prepared = false;
        self.index.seek(target);
        if !self.index.valid() && self.index.error().is_none() {
            self.index.seek_to_last();
        }
        self.load_block(false, false);
        if let Some(d) = &mut self.data {
            d.seek_for_prev(target);
        }
        self.skip_backward();
    }

    fn next(&mut self) {
        self.prepared = false;
        if let Some(d) = &mut self.data {
            d.next();
            if d.valid() {
                return; // the usual step: within the block
            }
        }
        self.skip_forward();
    }

    #[inline]
    fn next_key(&mut self) -> Option<&[u8]> {
        self.prepared = false;
        let stepped = match &mut self.data {
            Some(d) => {
                d.next();
                d.valid()
            }
            None => false,
        };
        if !stepped {
            self.skip_forward();
            if !self.valid() {
                return None;
            }
        }
        Some(self.data.as_ref()?.key())
    }

    fn prev(&mut self) {
        self.prepared = false;
        if let Some(d) = &mut self.data {
            d.prev();
            if d.valid() {
                return;
            }
        }
        self.skip_backward();
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }
}
