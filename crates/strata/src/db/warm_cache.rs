//! Compaction outputs that take over their inputs' place in the block cache
//! (`Options::warm_compaction_outputs`).
//!
//! A compaction rewrites blocks that readers may have in the block cache, and the new tables
//! start cold: the next reads of the same keys read every block back from the file, so a
//! read-mostly workload slows down after each compaction for as long as its blocks take to
//! come back. With the option, each output data block whose keys come from input blocks that
//! were cached and read is put in the cache as it is written, so that the cache holds after
//! the compaction what readers used before. Input blocks that were not cached, or that no
//! reader used since the cache's clock last passed them (blocks a flush put there), add
//! nothing: a compaction of cold data does not push hot blocks
//! out, and a workload that only writes puts nothing in the cache.
//!
//! How an output block is judged: each input cursor ([`ProbedInput`]) looks the block cache
//! up (without counting the lookup or marking the entry used) each time it enters a data
//! block, and keeps a shared tally ([`WarmInputs`]): how many such blocks (cached and used)
//! the inputs have entered and left, and how many inputs are on one now. An output block is
//! warm when an input entered or left such a block since the previous output block was
//! written, or an input is still on one: some of its entries came from those blocks. Inputs
//! and outputs of one compaction job run on one thread, in key order, so the tally follows
//! the keys being written.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::table::reader::{BlockCache, TableIterator};

/// The tally of one compaction job's inputs (see the module documentation).
#[derive(Default)]
pub(super) struct WarmInputs {
    /// Used input blocks entered so far.
    entered: AtomicU64,
    /// Used input blocks left so far.
    left: AtomicU64,
    /// Inputs on a cached block now.
    on_cached: AtomicI64,
}

impl WarmInputs {
    /// An input left a block (`cached`: one the cache holds).
    fn left(&self, cached: bool) {
        if cached {
            self.left.fetch_add(1, Ordering::Relaxed);
            self.on_cached.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// An input entered a block.
    fn entered(&self, cached: bool) {
        if cached {
            self.entered.fetch_add(1, Ordering::Relaxed);
            self.on_cached.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A judge of output blocks: called once per data block written, it says whether the
    /// block should go into the cache.
    pub(super) fn judge(self: &Arc<Self>) -> impl FnMut() -> bool + Send + 'static {
        let inputs = self.clone();
        let mut seen = (0, 0);
        move || {
            let now = (
                inputs.entered.load(Ordering::Relaxed),
                inputs.left.load(Ordering::Relaxed),
            );
            let moved = now != seen;
            seen = now;
            moved || inputs.on_cached.load(Ordering::Relaxed) > 0
        }
    }
}

/// A compaction input: a table cursor that tells [`WarmInputs`] when it enters a block the
/// block cache holds.
pub(super) struct ProbedInput {
    inner: TableIterator,
    cache: Arc<BlockCache>,
    /// The table's number: its blocks' key in the block cache.
    number: u64,
    inputs: Arc<WarmInputs>,
    /// The data block the cursor is on, and whether the cache holds it.
    block: Option<(u64, bool)>,
}

impl ProbedInput {
    pub(super) fn new(
        inner: TableIterator,
        cache: Arc<BlockCache>,
        number: u64,
        inputs: Arc<WarmInputs>,
    ) -> ProbedInput {
        ProbedInput {
            inner,
            cache,
            number,
            inputs,
            block: None,
        }
    }

    /// After a move: when the cursor is on another block than before, looks it up.
    fn observe(&mut self) {
        let now = self.inner.current_block_offset();
        if now == self.block.map(|(offset, _)| offset) {
            return;
        }
        if let Some((_, cached)) = self.block {
            self.inputs.left(cached);
        }
        self.block = now.map(|offset| {
            let cached = self.cache.recently_used(&(self.number, offset));
            self.inputs.entered(cached);
            (offset, cached)
        });
    }
}

impl Drop for ProbedInput {
    fn drop(&mut self) {
        if let Some((_, cached)) = self.block {
            self.inputs.left(cached);
        }
    }
}

impl InternalIterator for ProbedInput {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.observe();
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
        self.observe();
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.observe();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target);
        self.observe();
    }
    fn next(&mut self) {
        self.inner.next();
        self.observe();
    }
    fn prev(&mut self) {
        self.inner.prev();
        self.observe();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One input moving on to a block, as `ProbedInput::observe` tells the tally.
    fn enter(inputs: &WarmInputs, on_cached: &mut bool, cached: bool) {
        inputs.left(*on_cached);
        inputs.entered(cached);
        *on_cached = cached;
    }

    #[test]
    fn an_output_block_is_warm_while_its_entries_come_from_cached_input_blocks() {
        // Steps: `c` the input enters a cached block, `u` an uncached one, `w` an output
        // block is written (its verdict in `expected`, in order).
        #[rustfmt::skip]
        let cases = [
            ("w", "-"),
            ("cw", "+"),
            // Still on the cached block: the next output block's entries come from it too.
            ("cww", "++"),
            // Left it for an uncached one: the next output block still has its last
            // entries, the one after that none.
            ("cwuww", "++-"),
            // A cached block entered and left between two output blocks fed the second.
            ("wcuw", "-+"),
            // The last output block, written after the input ran out of blocks.
            ("wcwuw", "-++"),
            ("uwuw", "--"),
            ("uwuww", "---"),
        ];
        for (steps, expected) in cases {
            let inputs = Arc::new(WarmInputs::default());
            let mut judge = inputs.judge();
            let mut on_cached = false;
            let mut got = String::new();
            for step in steps.chars() {
                match step {
                    'c' => enter(&inputs, &mut on_cached, true),
                    'u' => enter(&inputs, &mut on_cached, false),
                    _ => got.push(if judge() { '+' } else { '-' }),
                }
            }
            assert_eq!(got, expected, "steps {steps}");
        }
    }
}
