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
//! block, and when the merge takes an entry's value from it while it is on a used block, it
//! says so to a shared tally ([`WarmInputs`]). (The merge reads the values of the entries it
//! writes, and only those; it compares keys of every input.) An output block is warm when
//! one of its entries came so. Inputs and outputs of one compaction job run on one thread,
//! in key order, so the tally follows the entries being written; at a block's edge an entry
//! may count for the block before it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::table::{iter::TableIterator, reader::BlockCache};

/// The tally of one compaction job's inputs (see the module documentation).
#[derive(Default)]
pub(super) struct WarmInputs {
    /// An entry from a block the cache holds and readers used went out since the last
    /// output block was judged.
    supplied: AtomicBool,
}

impl WarmInputs {
    /// The merge took an entry's value from an input; `used`: on a block the cache holds
    /// and readers used.
    fn supplied(&self, used: bool) {
        if used {
            self.supplied.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the output block just written should go into the cache: whether one of its
    /// entries came from a used block.
    pub(super) fn judge_block(&self) -> bool {
        self.supplied.swap(false, Ordering::Relaxed)
    }
}

/// A compaction input: a table cursor that tells [`WarmInputs`] when an entry is taken from
/// it while it is on a block the block cache holds and readers used.
pub(super) struct ProbedInput {
    inner: TableIterator,
    cache: Arc<BlockCache>,
    /// The table's number: its blocks' key in the block cache.
    number: u64,
    inputs: Arc<WarmInputs>,
    /// The data block the cursor is on, and whether the cache holds it, used.
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
        self.block = now.map(|offset| (offset, self.cache.recently_used(&(self.number, offset))));
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
        if let Some((_, used)) = self.block {
            self.inputs.supplied(used);
        }
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_block_is_warm_when_one_of_its_entries_came_from_a_used_block() {
        // Steps: `c` an entry taken from an input on a used block, `u` from one on another
        // block, `w` an output block is written (its verdict in `expected`).
        #[rustfmt::skip]
        let cases = [
            ("w", "-"),
            ("uuw", "-"),
            ("cw", "+"),
            ("uucuw", "+"),
            ("cwuw", "+-"),
            ("cwcwuw", "++-"),
            ("uwcw", "-+"),
        ];
        for (steps, expected) in cases {
            let inputs = WarmInputs::default();
            let mut got = String::new();
            for step in steps.chars() {
                match step {
                    'c' | 'u' => inputs.supplied(step == 'c'),
                    _ => got.push(if inputs.judge_block() { '+' } else { '-' }),
                }
            }
            assert_eq!(got, expected, "steps {steps}");
        }
    }
}
