//! Reading ahead for iterators that step from block to block.
//!
//! Through the block cache (the default): on a miss, the blocks after the one wanted along
//! the index (before it, going backward) that are adjacent in the file and not cached come
//! with it in one read; each is checked, copied into a buffer of its own and cached as if
//! read alone, where the next steps find them.
//!
//! Without filling the cache (`ReadOptions::fill_cache` off): the iterator keeps the last
//! read in a [`ReadWindow`] of its own, `readahead` bytes of the file from the wanted block
//! on (back from it, going backward), and the blocks inside it are checked and read in
//! place from there, borrowing the window's bytes, as a mapped table's blocks borrow the
//! mapping. A block the cache holds is still taken from it. A scan that should leave the
//! cache alone then still reads the file in large reads, as RocksDB's iterators read
//! through their own prefetch buffer.

use super::*;

/// Bytes of a table file an iterator read ahead without the block cache, and where they
/// start in the file.
pub struct ReadWindow {
    offset: u64,
    bytes: Arc<Vec<u8>>,
}

impl ReadWindow {
    /// The stored bytes (contents and trailer) of the block at `handle` if the window holds
    /// all of them.
    fn block(&self, handle: BlockHandle) -> Option<&[u8]> {
        let start = usize::try_from(handle.offset.checked_sub(self.offset)?).ok()?;
        self.bytes
            .get(start..start.checked_add(span(handle) as usize)?)
    }
}

/// A block's bytes in its file: its contents and its trailer.
fn span(handle: BlockHandle) -> u64 {
    handle.size + BLOCK_TRAILER_LEN as u64
}

impl Table {
    /// The data block at `handle` (the entry `index` is on), from the cache or the file, and
    /// whether the file was read. On a miss with `readahead` larger than the block, the
    /// blocks after it along the index (before it when not `forward`) come with it in one
    /// read, as long as each is adjacent in the file to the last, not cached, and all fit in
    /// `readahead` bytes; each is checked (unless `reads` says not to) and cached as if read
    /// alone. A later block that fails its check is left out (a read of it alone will report
    /// it). A read that does not fill the cache reads ahead into the iterator's `window`
    /// instead ([`Table::data_block_in_window`]).
    pub(in crate::table) fn data_block_ahead(
        &self,
        handle: BlockHandle,
        index: &IndexIter<Table>,
        (readahead, forward): (usize, bool),
        reads: BlockReads,
        window: &mut Option<ReadWindow>,
    ) -> Result<(Arc<Block>, bool)> {
        // A mapped table's blocks are read in place: nothing to read ahead into.
        if readahead as u64 <= span(handle) || self.mapped.is_some() {
            return self.data_block_read(handle, reads);
        }
        let Some(cache) = self.cache.as_ref().filter(|_| reads.fill_cache) else {
            return self.data_block_in_window(handle, readahead, forward, reads, window);
        };
        if let Some(block) = self.data_block_from_cache(handle) {
            return Ok((block, false));
        }
        checked_block_len(self.file.as_ref(), &self.path, handle)?;
        let mut handles = vec![handle];
        let (mut lo, mut hi) = (handle.offset, handle.offset + span(handle));
        let mut walk = index.clone();
        loop {
            if forward {
                walk.next();
            } else {
                walk.prev();
            }
            let Some(h) = walk.valid().then(|| walk.handle().ok()).flatten() else {
                break;
            };
            let adjacent = if forward {
                h.offset == hi
            } else {
                h.offset.checked_add(span(h)) == Some(lo)
            };
            if !adjacent
                || (hi - lo).saturating_add(span(h)) > readahead as u64
                || checked_block_len(self.file.as_ref(), &self.path, h).is_err()
                || cache.contains(&(self.cache_id, h.offset))
            {
                break;
            }
            if forward {
                hi += span(h);
            } else {
                lo = h.offset;
            }
            handles.push(h);
        }
        let timer = PerfTimer::start();
        // One read for the window; each block is then copied into a buffer of its own, so
        // that the cache's charge for it is all it holds (see `BlockBytes`).
        let chunk = self.file.read_vec_at(lo, (hi - lo) as usize)?;
        timer.stop(|c| &c.block_read_time);
        let mut first = None;
        for h in handles {
            let at = (h.offset - lo) as usize;
            let stored = &chunk[at..at + span(h) as usize];
            let decoding = self.data_decoding(reads);
            let block = check_block(&self.path, h, stored, decoding).and_then(|raw| {
                match raw {
                    None => Block::new(stored[..h.size as usize].to_vec()),
                    Some(raw) => Block::new(raw),
                }
                .map_err(|why| Error::corruption(&self.path, h.offset, why))
            });
            let block = match block {
                Ok(b) => Arc::new(b),
                Err(e) if first.is_none() => return Err(e),
                Err(_) => break,
            };
            self.count_file_read(BlockKind::Data, span(h));
            let size = block.size();
            cache.insert(
                (self.cache_id, h.offset),
                CachedBlock::Block(block.clone()),
                size,
            );
            first.get_or_insert(block);
        }
        first
            .map(|b| (b, true))
            .ok_or_else(|| Error::corruption(&self.path, handle.offset, "readahead read no block"))
    }

    /// The data block at `handle` for an iterator that does not fill the cache: from the
    /// cache if it holds it, else from the iterator's `window`, read anew when it does not
    /// hold the block (`readahead` bytes from the block on, or back from its end when not
    /// `forward`); and whether the file was read. Each block is checked (unless `reads`
    /// says not to) when it is taken from the window.
    fn data_block_in_window(
        &self,
        handle: BlockHandle,
        readahead: usize,
        forward: bool,
        reads: BlockReads,
        window: &mut Option<ReadWindow>,
    ) -> Result<(Arc<Block>, bool)> {
        if let Some(block) = self.data_block_from_cache(handle) {
            return Ok((block, false));
        }
        checked_block_len(self.file.as_ref(), &self.path, handle)?;
        let held = window.as_ref().is_some_and(|w| w.block(handle).is_some());
        if !held {
            let end = handle.offset + span(handle);
            let (lo, hi) = match forward {
                true => (
                    handle.offset,
                    end.max(handle.offset.saturating_add(readahead as u64)),
                ),
                false => (end.saturating_sub(readahead as u64).min(handle.offset), end),
            };
            let hi = hi.min(self.file.size());
            let timer = PerfTimer::start();
            let bytes = self.file.read_vec_at(lo, (hi - lo) as usize)?;
            timer.stop(|c| &c.block_read_time);
            *window = Some(ReadWindow {
                offset: lo,
                bytes: Arc::new(bytes),
            });
        }
        let w = window.as_ref().expect("the window holds the block");
        let stored = w.block(handle).ok_or_else(|| {
            Error::corruption(
                &self.path,
                handle.offset,
                "readahead window short of the block",
            )
        })?;
        self.count_file_read(BlockKind::Data, span(handle));
        let start = (handle.offset - w.offset) as usize;
        let block = match check_block(&self.path, handle, stored, self.data_decoding(reads))? {
            None => Block::borrowing(
                w.bytes.clone(),
                Vec::as_slice,
                start..start + handle.size as usize,
            ),
            Some(raw) => Block::new(raw),
        }
        .map_err(|why| Error::corruption(&self.path, handle.offset, why))?;
        Ok((Arc::new(block), !held))
    }
}
