//! A table's upkeep: erasing its blocks from the block cache before it is deleted, and
//! checking every block and key order (`strata sst verify`).

use super::*;

impl Table {
    /// Erases this table's blocks from the block cache: for a table about to be deleted, so
    /// that its blocks free their memory for live ones at once instead of waiting for the
    /// cache's clock to pass them (RocksDB's `uncache_aggressiveness`, whose meaning
    /// `aggressiveness` has: 0 erases nothing; otherwise data blocks are erased in index
    /// order while the share of attempts that found their block stays at or above
    /// 0.99^(aggressiveness - 1), so 1 stops at the first block not cached and 10,000 goes
    /// through them all). The index and filter blocks the cache holds (partitions, or the
    /// whole blocks with `cache_index_and_filter_blocks`) go too, whatever that share. A
    /// block that cannot be read (a damaged index) ends the walk; nothing is reported, since
    /// the file is going away.
    pub fn uncache(self: &Arc<Self>, aggressiveness: u32) -> Uncached {
        let mut done = Uncached::default();
        let Some(cache) = self.cache.as_ref().filter(|_| aggressiveness > 0) else {
            return done;
        };
        let threshold = 0.99f64.powi(aggressiveness.saturating_sub(1).min(i32::MAX as u32) as i32);
        let worth_trying = |d: &Uncached| (d.erased + 1) as f64 / (d.tried + 1) as f64 >= threshold;
        if let Ok(index) = self.index_block() {
            let mut it = IndexIter::new(self.clone(), index, self.partitioned_index);
            it.seek_to_first();
            while it.valid() && worth_trying(&done) {
                let Ok(h) = it.handle() else { break };
                done.tried += 1;
                done.erased += u64::from(cache.remove(&(self.cache_id, h.offset)));
                it.next();
            }
        }
        for offset in self.metadata_offsets() {
            cache.remove(&(self.cache_id, offset));
        }
        done
    }

    /// The handles of the data blocks, in index order.
    #[cfg(test)]
    pub(crate) fn data_block_handles(self: &Arc<Self>) -> Result<Vec<BlockHandle>> {
        let mut it = IndexIter::new(self.clone(), self.index_block()?, self.partitioned_index);
        let mut handles = Vec::new();
        it.seek_to_first();
        while it.valid() {
            handles.push(it.handle()?);
            it.next();
        }
        match it.error() {
            Some(e) => Err(e),
            None => Ok(handles),
        }
    }

    /// Where the index and filter blocks that may be in the block cache are: the index
    /// and the filter when cached whole, the top-level blocks when cached, and the
    /// partitions of partitioned ones (as far as their top levels can be read).
    fn metadata_offsets(&self) -> Vec<u64> {
        let mut offsets = Vec::new();
        let mut partitions = |top: Result<Arc<Block>>, at: u64, what: &str| {
            let Ok(top) = top else { return };
            let mut it = BlockIter::new(top, self.index_context().1.clone());
            it.seek_to_first();
            while it.valid() {
                match partitioned::decode_handle(it.value(), &self.path, at, what) {
                    Ok(h) => offsets.push(h.offset),
                    Err(_) => break,
                }
                it.next();
            }
        };
        if self.partitioned_index {
            partitions(self.index_block(), self.index_at, "index partition");
        }
        if let Some(TableFilter::Partitioned(top, at)) = &self.filter {
            partitions(self.filter_top_level(top), *at, "top-level filter index");
        }
        if let Part::Cached(h) = &self.index {
            offsets.push(h.offset);
        }
        match &self.filter {
            Some(TableFilter::Whole(Part::Cached(h)))
            | Some(TableFilter::Partitioned(Part::Cached(h), _)) => offsets.push(h.offset),
            _ => {}
        }
        offsets
    }

    /// Reads and checks every block (the filter partitions of a partitioned filter too);
    /// returns the number of entries.
    pub fn verify(self: &Arc<Self>) -> Result<u64> {
        if let Some(TableFilter::Partitioned(top, at)) = &self.filter {
            let mut it =
                BlockIter::new(self.filter_top_level(top)?, self.options.comparator.clone());
            it.seek_to_first();
            let mut partitions = 0;
            while it.valid() {
                let h = partitioned::decode_handle(
                    it.value(),
                    &self.path,
                    *at,
                    "top-level filter index",
                )?;
                self.filter_at(h)?;
                partitions += 1;
                it.next();
            }
            if let Some(why) = it.corrupt() {
                return Err(Error::corruption(
                    &self.path,
                    *at,
                    format!("top-level filter index: {why}"),
                ));
            }
            if partitions != self.properties.filter_partitions {
                return Err(Error::corruption(
                    &self.path,
                    *at,
                    format!(
                        "{partitions} filter partitions found, the properties say {}",
                        self.properties.filter_partitions
                    ),
                ));
            }
        }
        let mut it = self.iter();
        it.seek_to_first();
        let mut n = 0;
        let mut last: Vec<u8> = Vec::new();
        while it.valid() {
            if n > 0 && self.options.comparator.compare(&last, it.key()).is_ge() {
                return Err(Error::corruption(
                    &self.path,
                    it.data_offset,
                    "keys out of order",
                ));
            }
            last.clear();
            last.extend_from_slice(it.key());
            n += 1;
            it.next();
        }
        it.status()?;
        if n != self.properties.entries {
            return Err(Error::corruption(
                &self.path,
                0,
                format!(
                    "{n} entries found, the properties say {}",
                    self.properties.entries
                ),
            ));
        }
        Ok(n)
    }
}
