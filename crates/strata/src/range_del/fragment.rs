//! Fragmented range tombstones: any set of tombstones cut at every begin and end key into
//! non-overlapping fragments, each with the sequence numbers of the tombstones covering it.
//!
//! ```text
//! tombstones   a-e#5  c-g#9              fragments   a-c:{#5}
//!                                                    c-e:{#9,#5}
//!                                                    e-g:{#9}
//! ```
//!
//! Invariants (checked by `check` in the tests): fragments sorted by begin key, each
//! `begin < end`, `fragment[i].end <= fragment[i + 1].begin`; every fragment has at least one
//! sequence number, strictly descending; two touching fragments never carry the same
//! sequence numbers (they are one fragment). `n` tombstones give at most `2n - 1` fragments:
//! every fragment starts at a distinct begin or end key, and the last key starts none.
//!
//! Fragmenting sorts the tombstones and sweeps their boundary keys once, keeping the
//! tombstones open at the sweep point in a heap by end key and a count per sequence number:
//! `O(n log n)` plus the size of the output. Lookups are binary searches: `O(log n)` to find
//! the fragment of a key, then `O(log k)` in its `k` sequence numbers.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt;
use std::sync::Arc;

use crate::comparator::KeyOrder;
use crate::key::SequenceNumber;
use crate::range_del::Tombstone;

/// One fragment: the keys `[begin, end)` are covered by tombstones with these sequence
/// numbers (newest first).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Fragment<'a> {
    /// The first key of the fragment.
    pub begin: &'a [u8],
    /// The first key after the fragment (exclusive).
    pub end: &'a [u8],
    /// Sequence numbers of the tombstones covering the fragment, strictly descending.
    pub seqs: &'a [SequenceNumber],
}

impl Fragment<'_> {
    /// The newest sequence number at or below `read_seq`: the tombstone a read at
    /// `read_seq` sees here, if any.
    pub fn max_seq_at(&self, read_seq: SequenceNumber) -> Option<SequenceNumber> {
        let i = self.seqs.partition_point(|&s| s > read_seq);
        self.seqs.get(i).copied()
    }

    /// True if `key` is in `[begin, end)`, bytewise.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_in(&KeyOrder::Bytewise, key)
    }

    /// True if `key` is in `[begin, end)` in `order`.
    pub fn contains_in(&self, order: &KeyOrder, key: &[u8]) -> bool {
        order.le(self.begin, key) && order.lt(key, self.end)
    }
}

impl fmt::Debug for Fragment<'_> {
    /// The text notation: `begin-end:{#9,#5}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seqs: Vec<String> = self.seqs.iter().map(|s| format!("#{s}")).collect();
        write!(
            f,
            "{}-{}:{{{}}}",
            crate::util::printable(self.begin),
            crate::util::printable(self.end),
            seqs.join(",")
        )
    }
}

/// A fragment as stored: its keys, and where its sequence numbers are in the shared vector.
#[derive(Clone)]
struct Stored {
    begin: Box<[u8]>,
    end: Box<[u8]>,
    seqs_start: usize,
    seqs_end: usize,
}

/// Non-overlapping fragments of a set of tombstones, sorted by begin key in the list's user
/// key order (layout and invariants in the module documentation). Immutable once built;
/// shared by `Arc`.
#[derive(Clone, Default)]
pub struct FragmentedList {
    order: KeyOrder,
    fragments: Vec<Stored>,
    /// The sequence numbers of every fragment, one run per fragment, so that a fragment
    /// costs no allocation of its own for them.
    seqs: Vec<SequenceNumber>,
}

impl FragmentedList {
    /// Fragments `tombstones`, given in any order and overlapping in any way. Empty
    /// tombstones (`begin >= end`) are ignored; a sequence number given twice for one key
    /// counts once.
    pub fn new<'a>(tombstones: impl IntoIterator<Item = &'a Tombstone>) -> FragmentedList {
        FragmentedList::new_in(&KeyOrder::Bytewise, tombstones)
    }

    /// [`FragmentedList::new`] with user keys in `order`.
    pub fn new_in<'a>(
        order: &KeyOrder,
        tombstones: impl IntoIterator<Item = &'a Tombstone>,
    ) -> FragmentedList {
        let mut ts: Vec<&Tombstone> = tombstones
            .into_iter()
            .filter(|t| !t.is_empty_in(order))
            .collect();
        let mut points: Vec<&[u8]> = ts
            .iter()
            .flat_map(|t| [t.begin.as_slice(), t.end.as_slice()])
            .collect();
        points.sort_unstable_by(|a, b| order.compare(a, b));
        points.dedup();
        // The sweep works on each key's rank among the boundary keys, so that it compares
        // integers, whatever the order.
        let rank = |key: &[u8]| points.partition_point(|p| order.lt(p, key));
        let mut ranked: Vec<(usize, usize, SequenceNumber)> = ts
            .drain(..)
            .map(|t| (rank(&t.begin), rank(&t.end), t.seq))
            .collect();
        ranked.sort_unstable_by_key(|t| t.0);
        let mut out = FragmentedList {
            order: order.clone(),
            ..FragmentedList::default()
        };
        // Tombstones open at the sweep point: by end key (to close them), and a count per
        // sequence number (two tombstones may share one).
        let mut open: BinaryHeap<Reverse<(usize, SequenceNumber)>> = BinaryHeap::new();
        let mut live: BTreeMap<SequenceNumber, usize> = BTreeMap::new();
        let mut next = 0;
        let mut seqs = Vec::new();
        for (lo_rank, w) in points.windows(2).enumerate() {
            let (lo, hi) = (w[0], w[1]);
            while let Some(&Reverse((end, seq))) = open.peek() {
                if end > lo_rank {
                    break;
                }
                open.pop();
                if let Some(n) = live.get_mut(&seq) {
                    *n -= 1;
                    if *n == 0 {
                        live.remove(&seq);
                    }
                }
            }
            while let Some(&(_, end, seq)) = ranked.get(next).filter(|t| t.0 <= lo_rank) {
                open.push(Reverse((end, seq)));
                *live.entry(seq).or_default() += 1;
                next += 1;
            }
            if !live.is_empty() {
                seqs.clear();
                seqs.extend(live.keys().rev());
                out.push(lo, hi, &seqs);
            }
        }
        out
    }

    /// Appends a fragment after the last one, joining the two if they touch and carry the
    /// same sequence numbers.
    fn push(&mut self, begin: &[u8], end: &[u8], seqs: &[SequenceNumber]) {
        debug_assert!(self.order.lt(begin, end) && !seqs.is_empty());
        if let Some(last) = self.fragments.last_mut() {
            debug_assert!(self.order.le(&last.end, begin), "fragments out of order");
            if &*last.end == begin && &self.seqs[last.seqs_start..last.seqs_end] == seqs {
                last.end = end.into();
                return;
            }
        }
        let seqs_start = self.seqs.len();
        self.seqs.extend_from_slice(seqs);
        self.fragments.push(Stored {
            begin: begin.into(),
            end: end.into(),
            seqs_start,
            seqs_end: self.seqs.len(),
        });
    }

    /// Number of fragments.
    pub fn len(&self) -> usize {
        self.fragments.len()
    }

    /// True if no key is covered.
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    /// Fragment `i` (`i < len()`).
    pub fn get(&self, i: usize) -> Fragment<'_> {
        let s = &self.fragments[i];
        Fragment {
            begin: &s.begin,
            end: &s.end,
            seqs: &self.seqs[s.seqs_start..s.seqs_end],
        }
    }

    /// The fragments in key order.
    pub fn fragments(&self) -> impl DoubleEndedIterator<Item = Fragment<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The index of the first fragment that ends after `key`: the one holding `key`, or the
    /// first one after it (`len()` if none).
    fn first_ending_after(&self, key: &[u8]) -> usize {
        self.fragments
            .partition_point(|f| self.order.le(&f.end, key))
    }

    /// The user key order of the list.
    pub fn order(&self) -> &KeyOrder {
        &self.order
    }

    /// The fragment holding `key`, if any.
    pub fn fragment_containing(&self, key: &[u8]) -> Option<Fragment<'_>> {
        let i = self.first_ending_after(key);
        (i < self.len())
            .then(|| self.get(i))
            .filter(|f| self.order.le(f.begin, key))
    }

    /// The largest sequence number at or below `read_seq` of a tombstone covering `key`:
    /// what a read at `read_seq` sees deleting `key`. A point entry of `key` with a smaller
    /// sequence number is deleted for that read.
    pub fn max_covering_seq(&self, key: &[u8], read_seq: SequenceNumber) -> Option<SequenceNumber> {
        self.fragment_containing(key)?.max_seq_at(read_seq)
    }

    /// The largest sequence number of any tombstone (0 if empty).
    pub fn max_seq(&self) -> SequenceNumber {
        self.fragments
            .iter()
            .map(|f| self.seqs[f.seqs_start])
            .max()
            .unwrap_or(0)
    }

    /// Every fragment as tombstones, one per sequence number, in internal-key order (begin
    /// ascending in the list's order, then sequence descending). Fragmenting them again gives this list.
    pub fn tombstones(&self) -> impl Iterator<Item = Tombstone> + '_ {
        self.fragments().flat_map(|f| {
            f.seqs
                .iter()
                .map(move |&seq| Tombstone::new(f.begin, f.end, seq))
        })
    }

    /// The tombstones of [`FragmentedList::tombstones`] cut to `[lower, upper)` (`None`: no
    /// bound): what a compaction writes into an output table that holds that key range.
    pub fn tombstones_within<'a>(
        &'a self,
        lower: Option<&'a [u8]>,
        upper: Option<&'a [u8]>,
    ) -> impl Iterator<Item = Tombstone> + 'a {
        let start = lower.map_or(0, |l| self.first_ending_after(l));
        let order = &self.order;
        self.fragments()
            .skip(start)
            .take_while(move |f| upper.is_none_or(|u| order.lt(f.begin, u)))
            .flat_map(move |f| {
                let begin = match lower {
                    Some(l) if order.lt(f.begin, l) => l,
                    _ => f.begin,
                };
                let end = match upper {
                    Some(u) if order.lt(u, f.end) => u,
                    _ => f.end,
                };
                f.seqs
                    .iter()
                    .map(move |&seq| Tombstone::new(begin, end, seq))
            })
            .filter(move |t| !t.is_empty_in(order))
    }

    /// The list a compaction writes, given the live snapshots (ascending): of each fragment's
    /// sequence numbers only the newest in each snapshot stripe stays, and with `bottommost`
    /// (nothing older than the compaction's inputs lies below its output in this key range)
    /// those with no snapshot below them go too. Why this is safe is in the module
    /// documentation of `range_del`. The compaction decides about its point entries against
    /// the inputs' lists, not this one.
    pub fn for_compaction(&self, snapshots: &[SequenceNumber], bottommost: bool) -> FragmentedList {
        debug_assert!(
            snapshots.windows(2).all(|w| w[0] < w[1]),
            "snapshots unsorted"
        );
        let mut out = FragmentedList {
            order: self.order.clone(),
            ..FragmentedList::default()
        };
        let mut kept = Vec::new();
        for f in self.fragments() {
            kept.clear();
            let mut prev_stripe = None;
            for &seq in f.seqs {
                // Stripe index: the number of snapshots below `seq`. Index 0 means no
                // snapshot is older than the tombstone.
                let stripe = snapshots.partition_point(|&s| s < seq);
                if prev_stripe == Some(stripe) || (bottommost && stripe == 0) {
                    continue;
                }
                prev_stripe = Some(stripe);
                kept.push(seq);
            }
            if !kept.is_empty() {
                out.push(f.begin, f.end, &kept);
            }
        }
        out
    }

    /// Bytes of memory held, roughly.
    pub fn memory_size(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.seqs.capacity() * std::mem::size_of::<SequenceNumber>()
            + self
                .fragments
                .iter()
                .map(|f| std::mem::size_of::<Stored>() + f.begin.len() + f.end.len())
                .sum::<usize>()
    }

    /// A seekable cursor over the fragments, holding the list (for iterators of the read
    /// path, which outlive any borrow).
    pub fn cursor(self: &Arc<Self>) -> FragmentCursor {
        FragmentCursor {
            list: self.clone(),
            pos: None,
        }
    }
}

impl fmt::Debug for FragmentedList {
    /// One fragment per line, in the text notation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for fragment in self.fragments() {
            writeln!(f, "{fragment:?}")?;
        }
        Ok(())
    }
}

/// A cursor over the fragments of a list, forward and backward, with seeks.
#[derive(Clone)]
pub struct FragmentCursor {
    list: Arc<FragmentedList>,
    pos: Option<usize>,
}

impl FragmentCursor {
    fn set(&mut self, i: usize) {
        self.pos = (i < self.list.len()).then_some(i);
    }

    /// True if the cursor is on a fragment.
    pub fn valid(&self) -> bool {
        self.pos.is_some()
    }

    /// The fragment the cursor is on.
    pub fn fragment(&self) -> Option<Fragment<'_>> {
        self.pos.map(|i| self.list.get(i))
    }

    /// To the first fragment.
    pub fn seek_to_first(&mut self) {
        self.set(0);
    }

    /// To the last fragment.
    pub fn seek_to_last(&mut self) {
        self.pos = self.list.len().checked_sub(1);
    }

    /// To the fragment holding `key`, or else the first one after it.
    pub fn seek(&mut self, key: &[u8]) {
        self.set(self.list.first_ending_after(key));
    }

    /// To the fragment holding `key`, or else the last one before it.
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        let order = &self.list.order;
        let i = self
            .list
            .fragments
            .partition_point(|f| order.le(&f.begin, key));
        self.pos = i.checked_sub(1);
    }

    /// To the next fragment (invalid after the last).
    pub fn next(&mut self) {
        if let Some(i) = self.pos {
            self.set(i + 1);
        }
    }

    /// To the previous fragment (invalid before the first).
    pub fn prev(&mut self) {
        self.pos = self.pos.and_then(|i| i.checked_sub(1));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::util::Rng;

    /// Checks the invariants of the module documentation.
    pub(crate) fn check(list: &FragmentedList) {
        for f in list.fragments() {
            assert!(f.begin < f.end, "{f:?}: empty fragment");
            assert!(!f.seqs.is_empty(), "{f:?}: no sequence number");
            assert!(f.seqs.windows(2).all(|w| w[0] > w[1]), "{f:?}: seqs order");
        }
        for i in 1..list.len() {
            let (a, b) = (list.get(i - 1), list.get(i));
            assert!(a.end <= b.begin, "{a:?} overlaps {b:?}");
            assert!(
                a.end < b.begin || a.seqs != b.seqs,
                "{a:?} {b:?} not joined"
            );
        }
    }

    /// The sequence numbers covering `key`, descending, straight from the tombstones.
    fn naive_seqs(ts: &[Tombstone], key: &[u8]) -> Vec<SequenceNumber> {
        let mut v: Vec<SequenceNumber> = ts
            .iter()
            .filter(|t| t.contains(key))
            .map(|t| t.seq)
            .collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.dedup();
        v
    }

    fn random_key(rng: &mut Rng) -> Vec<u8> {
        let len = 1 + rng.below(2) as usize;
        (0..len).map(|_| b'a' + rng.below(8) as u8).collect()
    }

    /// Every key of one or two letters a-h, and the keys around them.
    fn probe_keys() -> Vec<Vec<u8>> {
        let mut keys = vec![Vec::new(), b"z".to_vec()];
        for a in b'a'..=b'h' {
            keys.push(vec![a]);
            keys.push(vec![a, 0]);
            for b in b'a'..=b'h' {
                keys.push(vec![a, b]);
            }
        }
        keys
    }

    pub(crate) fn random_tombstones(rng: &mut Rng, n: usize) -> Vec<Tombstone> {
        (0..n)
            .map(|_| {
                let (a, b) = (random_key(rng), random_key(rng));
                // A few empty and inverted ranges, and repeated sequence numbers.
                Tombstone {
                    begin: a,
                    end: b,
                    seq: 1 + rng.below(2 * n as u64 + 1),
                }
            })
            .collect()
    }

    /// The fragmenter and every query agree with a scan of the raw tombstones, over many
    /// seeds: fragment contents, `max_covering_seq` at every read sequence, cursor seeks,
    /// and the compaction reduction at random snapshots.
    #[test]
    fn fragments_and_queries_match_a_naive_model() {
        let keys = probe_keys();
        for seed in 0..300 {
            let mut rng = Rng::new(seed);
            let n = rng.below(12) as usize;
            let ts = random_tombstones(&mut rng, n);
            let list = Arc::new(FragmentedList::new(&ts));
            check(&list);
            let non_empty = ts.iter().filter(|t| !t.is_empty()).count();
            assert!(
                list.len() <= (2 * non_empty).saturating_sub(1),
                "seed {seed}"
            );
            let max_seq = 2 * n as u64 + 2;
            let mut snapshots: Vec<u64> = (0..rng.below(4)).map(|_| rng.below(max_seq)).collect();
            snapshots.sort_unstable();
            snapshots.dedup();
            let bottommost = rng.one_in(2);
            let compacted = list.for_compaction(&snapshots, bottommost);
            check(&compacted);
            let mut cursor = list.cursor();
            for key in &keys {
                let want = naive_seqs(&ts, key);
                let got = list
                    .fragment_containing(key)
                    .map_or(Vec::new(), |f| f.seqs.to_vec());
                assert_eq!(got, want, "seed {seed} key {key:?}");
                for read in 0..=max_seq {
                    let naive = want.iter().copied().find(|&s| s <= read);
                    assert_eq!(list.max_covering_seq(key, read), naive, "seed {seed}");
                }
                // seek: the fragment holding the key, or the first after it.
                cursor.seek(key);
                let naive = list.fragments().find(|f| f.end > key.as_slice());
                assert_eq!(cursor.fragment(), naive, "seed {seed} seek {key:?}");
                cursor.seek_for_prev(key);
                let naive = list.fragments().rev().find(|f| f.begin <= key.as_slice());
                assert_eq!(
                    cursor.fragment(),
                    naive,
                    "seed {seed} seek_for_prev {key:?}"
                );
                // Compaction: the newest per stripe, and at the bottom none without an older
                // snapshot.
                let mut expect = Vec::new();
                let mut prev = None;
                for &s in &want {
                    let stripe = snapshots.partition_point(|&x| x < s);
                    if prev != Some(stripe) && !(bottommost && stripe == 0) {
                        expect.push(s);
                    }
                    prev = Some(stripe);
                }
                let got = compacted
                    .fragment_containing(key)
                    .map_or(Vec::new(), |f| f.seqs.to_vec());
                assert_eq!(
                    got, expect,
                    "seed {seed} key {key:?} snapshots {snapshots:?}"
                );
                // What matters: every reader (each snapshot and "now") decides as before,
                // except that at the bottom a tombstone no snapshot predates is gone.
                for &reader in snapshots.iter().chain([&u64::MAX]) {
                    let before = list.max_covering_seq(key, reader);
                    let after = compacted.max_covering_seq(key, reader);
                    let dropped = bottommost
                        && before.is_some_and(|t| snapshots.first().is_none_or(|&s| s >= t));
                    if dropped {
                        assert_eq!(after, None, "seed {seed}");
                    } else {
                        assert_eq!(after, before, "seed {seed} key {key:?} reader {reader}");
                    }
                }
            }
            // Walking both ways visits every fragment once.
            let mut forward = Vec::new();
            cursor.seek_to_first();
            while let Some(f) = cursor.fragment() {
                forward.push(format!("{f:?}"));
                cursor.next();
            }
            let mut backward = Vec::new();
            cursor.seek_to_last();
            while let Some(f) = cursor.fragment() {
                backward.push(format!("{f:?}"));
                cursor.prev();
            }
            backward.reverse();
            assert_eq!(forward, backward);
            assert_eq!(forward.len(), list.len());
            // The list's own tombstones fragment back into the list.
            let again = FragmentedList::new(&list.tombstones().collect::<Vec<_>>());
            assert_eq!(format!("{again:?}"), format!("{list:?}"), "seed {seed}");
            // Cutting at a key range keeps exactly the coverage inside it.
            let (lo, hi) = (random_key(&mut rng), random_key(&mut rng));
            let cut = FragmentedList::new(
                &list
                    .tombstones_within(Some(&lo), Some(&hi))
                    .collect::<Vec<_>>(),
            );
            for key in &keys {
                let inside = lo <= *key && *key < hi;
                let want = if inside {
                    naive_seqs(&ts, key)
                } else {
                    Vec::new()
                };
                let got = cut
                    .fragment_containing(key)
                    .map_or(Vec::new(), |f| f.seqs.to_vec());
                assert_eq!(got, want, "seed {seed} cut {lo:?}..{hi:?} key {key:?}");
            }
        }
    }

    /// 1,000 tombstones that all overlap (each starts inside the previous one and ends after
    /// it) give at most 2,000 fragments, as the bound in the module documentation says.
    #[test]
    fn a_thousand_overlapping_tombstones_give_at_most_two_thousand_fragments() {
        let mut rng = Rng::new(7);
        let key = |i: u64| format!("key{i:06}").into_bytes();
        let ts: Vec<Tombstone> = (0..1000u64)
            .map(|i| {
                let begin = i * 10 + rng.below(10);
                Tombstone::new(&key(begin), &key(begin + 5000 + rng.below(5000)), i + 1)
            })
            .collect();
        let list = FragmentedList::new(&ts);
        check(&list);
        assert!(list.len() <= 2000, "{} fragments", list.len());
        assert!(list.len() >= 1000, "{} fragments", list.len());
        // And the nested worst case, every tombstone inside the previous one.
        let nested: Vec<Tombstone> = (0..1000u64)
            .map(|i| Tombstone::new(&key(i), &key(10_000 - i), i + 1))
            .collect();
        let list = FragmentedList::new(&nested);
        check(&list);
        assert_eq!(list.len(), 1999);
        assert_eq!(list.max_covering_seq(&key(5000), u64::MAX), Some(1000));
        assert_eq!(list.max_covering_seq(&key(0), u64::MAX), Some(1));
        // With no snapshot, a compaction keeps one sequence number per fragment.
        let compacted = list.for_compaction(&[], false);
        assert!(compacted.fragments().all(|f| f.seqs.len() == 1));
    }

    #[test]
    fn empty_input_gives_an_empty_list() {
        let list = Arc::new(FragmentedList::new(&[Tombstone::new(b"b", b"a", 4)]));
        assert!(list.is_empty());
        assert_eq!(list.max_covering_seq(b"a", u64::MAX), None);
        assert_eq!(list.max_seq(), 0);
        let mut c = list.cursor();
        c.seek(b"a");
        assert!(!c.valid());
        c.seek_to_last();
        assert!(!c.valid());
    }
}
