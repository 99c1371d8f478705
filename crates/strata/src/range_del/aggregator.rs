//! Range deletions from several sources asked together: the memtables and tables a read or a
//! compaction consults each have a fragmented list; [`RangeDelAggregator`] holds them and
//! decides whether a point entry is deleted.
//!
//! Two modes, with the rules of the `range_del` module documentation:
//!
//! - **read at `r`**: `(key, s)` is deleted when a tombstone with `s < t <= r` covers it;
//! - **compaction with snapshots**: `(key, s)` may be dropped when a tombstone with `t > s`
//!   covers it and no snapshot `S` has `s <= S < t`, that is, when a read at the upper end of
//!   the point's snapshot stripe deletes it.
//!
//! Each question is one binary search per list (`O(L log n)` for `L` lists). The lists stay
//! separate rather than being fragmented together, so building an aggregator for one read
//! costs nothing but the `Arc`s.

use std::sync::Arc;

use crate::key::SequenceNumber;
use crate::range_del::fragment::FragmentedList;

/// Which readers an aggregator answers for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Readers {
    /// One read at this sequence number.
    At(SequenceNumber),
    /// A compaction: every live snapshot (ascending) and the reads of "now".
    Snapshots(Vec<SequenceNumber>),
}

/// The tombstones of several memtables and tables, for a read or a compaction. The sources
/// are of one column family, hence share one key order.
#[derive(Clone)]
pub struct RangeDelAggregator {
    lists: Vec<Arc<FragmentedList>>,
    readers: Readers,
}

impl RangeDelAggregator {
    /// For a read (point lookup or iterator) at `read_seq`.
    pub fn for_read(read_seq: SequenceNumber) -> RangeDelAggregator {
        RangeDelAggregator {
            lists: Vec::new(),
            readers: Readers::At(read_seq),
        }
    }

    /// For a flush or compaction with these live snapshots (any order, repeats allowed).
    pub fn for_compaction(mut snapshots: Vec<SequenceNumber>) -> RangeDelAggregator {
        snapshots.sort_unstable();
        snapshots.dedup();
        RangeDelAggregator {
            lists: Vec::new(),
            readers: Readers::Snapshots(snapshots),
        }
    }

    /// Adds the tombstones of one source (an empty list is not kept).
    pub fn add(&mut self, list: Arc<FragmentedList>) {
        if !list.is_empty() {
            self.lists.push(list);
        }
    }

    /// True if no source has a tombstone: the caller can skip every check.
    pub fn is_empty(&self) -> bool {
        self.lists.is_empty()
    }

    /// The newest tombstone at or below `read_seq` covering `key`, over every source.
    pub fn max_covering_seq(&self, key: &[u8], read_seq: SequenceNumber) -> Option<SequenceNumber> {
        self.lists
            .iter()
            .filter_map(|l| l.max_covering_seq(key, read_seq))
            .max()
    }

    /// True if the point entry `(key, seq)` is deleted by a range deletion: for a read, it
    /// must not be returned (nor hide older versions of the key: they are deleted too); for a
    /// compaction, it may be dropped.
    pub fn should_delete(&self, key: &[u8], seq: SequenceNumber) -> bool {
        let upper = match &self.readers {
            Readers::At(read_seq) => *read_seq,
            // The oldest snapshot that sees the entry bounds the tombstones that may drop it:
            // a newer tombstone leaves that snapshot a version to read.
            Readers::Snapshots(snapshots) => {
                let i = snapshots.partition_point(|&s| s < seq);
                snapshots.get(i).copied().unwrap_or(SequenceNumber::MAX)
            }
        };
        self.max_covering_seq(key, upper).is_some_and(|t| t > seq)
    }

    /// The tombstones a compaction writes to its outputs: every source fragmented together
    /// and reduced for the snapshots (see [`FragmentedList::for_compaction`]). A read
    /// aggregator's lists are reduced as if no snapshot were live.
    pub fn compaction_output(&self, bottommost: bool) -> FragmentedList {
        let all: Vec<_> = self.lists.iter().flat_map(|l| l.tombstones()).collect();
        let snapshots = match &self.readers {
            Readers::Snapshots(s) => s.as_slice(),
            Readers::At(_) => &[],
        };
        let order = self
            .lists
            .first()
            .map(|l| l.order().clone())
            .unwrap_or_default();
        FragmentedList::new_in(&order, &all).for_compaction(snapshots, bottommost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range_del::fragment::tests::random_tombstones;
    use crate::range_del::Tombstone;
    use crate::util::Rng;

    /// `should_delete` agrees with the rules applied to the raw tombstones, for reads and
    /// compactions, with the tombstones spread over several lists.
    #[test]
    fn decisions_match_the_rules_over_several_lists() {
        for seed in 0..200 {
            let mut rng = Rng::new(1000 + seed);
            let n = rng.below(16) as usize;
            let ts = random_tombstones(&mut rng, n);
            let sources = 1 + rng.below(3) as usize;
            let mut parts = vec![Vec::new(); sources];
            for t in &ts {
                parts[rng.below(sources as u64) as usize].push(t.clone());
            }
            let max_seq = 2 * n as u64 + 2;
            let mut snapshots: Vec<u64> = (0..rng.below(4)).map(|_| rng.below(max_seq)).collect();
            let read_seq = rng.below(max_seq + 1);
            let mut read = RangeDelAggregator::for_read(read_seq);
            let mut compaction = RangeDelAggregator::for_compaction(snapshots.clone());
            for p in &parts {
                let list = Arc::new(FragmentedList::new(p));
                read.add(list.clone());
                compaction.add(list);
            }
            snapshots.sort_unstable();
            for _ in 0..200 {
                let key = [b'a' + rng.below(8) as u8];
                let seq = rng.below(max_seq + 1);
                let covering: Vec<&Tombstone> = ts
                    .iter()
                    .filter(|t| !t.is_empty() && t.contains(&key))
                    .collect();
                let read_want =
                    seq <= read_seq && covering.iter().any(|t| seq < t.seq && t.seq <= read_seq);
                if seq <= read_seq {
                    assert_eq!(read.should_delete(&key, seq), read_want, "seed {seed}");
                }
                let compaction_want = covering
                    .iter()
                    .any(|t| t.seq > seq && !snapshots.iter().any(|&s| seq <= s && s < t.seq));
                assert_eq!(
                    compaction.should_delete(&key, seq),
                    compaction_want,
                    "seed {seed} key {key:?} seq {seq} snapshots {snapshots:?} {ts:?}"
                );
            }
        }
    }

    #[test]
    fn an_aggregator_without_tombstones_deletes_nothing() {
        let mut a = RangeDelAggregator::for_read(10);
        a.add(Arc::new(FragmentedList::default()));
        assert!(a.is_empty());
        assert!(!a.should_delete(b"k", 1));
        assert!(a.compaction_output(false).is_empty());
    }
}
