//! Range deletions (RocksDB's `DeleteRange`): tombstones that delete every version of every
//! key in `[begin, end)` older than themselves.
//!
//! A tombstone is `(begin, end, seq)`: user keys compared in the column family's order
//! (`crate::comparator`), `end` exclusive, and the sequence number of the write. It covers a point entry `(key, s)` when
//! `begin <= key < end` and `s < seq`. A tombstone with `begin >= end` covers nothing: the
//! write path refuses `begin > end` and treats `begin == end` as a no-op, and every structure
//! here ignores such a tombstone.
//!
//! The pieces, bottom up:
//!
//! - [`FragmentedList`] (`fragment.rs`): any set of tombstones cut into non-overlapping
//!   fragments sorted by begin key, each with the descending sequence numbers of the
//!   tombstones that cover it (RocksDB's `FragmentedRangeTombstoneList`). Queries are binary
//!   searches. It also drops, for a compaction, the sequence numbers no snapshot can observe.
//! - [`RangeDelAggregator`] (`aggregator.rs`): several fragmented lists (memtables and
//!   tables) asked together whether a point entry is deleted, for a read at a sequence number
//!   or for a compaction with its live snapshots.
//! - [`MemTombstones`] (`mem.rs`): the tombstones of one memtable: appended by the writer,
//!   read as a cached fragmented list.
//!
//! Tables store their tombstones in a range-deletion block (`table::range_del`); the kind
//! byte of the internal keys stored there is [`RANGE_DELETION_KIND`].
//!
//! Invariants of a [`FragmentedList`]: fragments are sorted by begin key and do not overlap
//! (`fragment[i].end <= fragment[i + 1].begin`); each has `begin < end` and at least one
//! sequence number; its sequence numbers are strictly descending. A key that no fragment
//! holds is covered by no tombstone.
//!
//! # The rules
//!
//! A read at sequence `r` sees a point entry `(key, s)` with `s <= r` as deleted when some
//! tombstone with `s < t <= r` covers it.
//!
//! A compaction may drop a point entry `(key, s)` when a tombstone `t > s` covers it and no
//! live snapshot `S` has `s <= S < t`: every reader that could see the entry (one at or above
//! `s`) also sees the tombstone. Equivalently, with the *stripe* of `s` being the oldest
//! snapshot at or above `s` (or "now" if none is), the entry goes when a tombstone covering
//! it has `s < t <= stripe(s)`: a read at the stripe's upper end deletes it.
//!
//! A compaction keeps, of the tombstones covering one fragment, only the newest in each
//! stripe: an older one in the same stripe is seen by exactly the readers that see the newer
//! one, which deletes everything it deletes. At the bottom of the tree (no older version of a
//! key in the range can exist below the output) a tombstone with no snapshot below it deletes
//! only entries that the compaction drops, so it is dropped as well, as a point delete is.
//! The decisions about points must be made against the tombstones of the inputs, not the
//! reduced set written to the outputs: the bottommost rule removes tombstones whose points
//! it relies on being dropped in the same compaction.

pub mod aggregator;
pub mod fragment;
pub mod mem;

use std::cmp::Ordering;

use crate::comparator::KeyOrder;
use crate::key::{append_internal_key, SequenceNumber, MAX_SEQUENCE};

pub use aggregator::RangeDelAggregator;
pub use fragment::{Fragment, FragmentCursor, FragmentedList};
pub use mem::MemTombstones;

/// The kind byte of range deletions in internal keys (RocksDB's `kTypeRangeDeletion`). On
/// disk: do not change. It is `key::ValueKind::RangeDeletion`'s byte, named here for the
/// lower layers' readers (the table's range-deletion block).
pub const RANGE_DELETION_KIND: u8 = crate::key::ValueKind::RangeDeletion as u8;

/// One range deletion: every version older than `seq` of every key in `[begin, end)`.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Tombstone {
    /// The first key deleted.
    pub begin: Vec<u8>,
    /// The first key after the range (exclusive).
    pub end: Vec<u8>,
    /// The sequence number of the deletion.
    pub seq: SequenceNumber,
}

impl Tombstone {
    /// The tombstone deleting `[begin, end)` at `seq`.
    pub fn new(begin: &[u8], end: &[u8], seq: SequenceNumber) -> Tombstone {
        Tombstone {
            begin: begin.to_vec(),
            end: end.to_vec(),
            seq,
        }
    }

    /// True if the range holds no key (`begin >= end`, bytewise): such a tombstone deletes
    /// nothing.
    pub fn is_empty(&self) -> bool {
        self.is_empty_in(&KeyOrder::Bytewise)
    }

    /// True if the range holds no key in `order`.
    pub fn is_empty_in(&self, order: &KeyOrder) -> bool {
        order.le(&self.end, &self.begin)
    }

    /// True if `key` is in the range, bytewise.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_in(&KeyOrder::Bytewise, key)
    }

    /// True if `key` is in the range in `order`.
    pub fn contains_in(&self, order: &KeyOrder, key: &[u8]) -> bool {
        order.le(&self.begin, key) && order.lt(key, &self.end)
    }

    /// The smallest internal key the tombstone touches: `begin#seq,RANGEDEL`.
    pub fn smallest_key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.begin.len() + 8);
        append_internal_key(&mut k, &self.begin, self.seq, RANGE_DELETION_KIND);
        k
    }

    /// The largest internal key bound of the tombstone: `end#MAX_SEQUENCE,RANGEDEL`, the
    /// sentinel RocksDB uses. It sorts before every real entry of `end` (a larger trailer
    /// sorts first), so a file whose largest key it is holds nothing of `end` itself while its
    /// key range still reaches the exclusive end of the deletion.
    pub fn largest_key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.end.len() + 8);
        append_internal_key(&mut k, &self.end, MAX_SEQUENCE, RANGE_DELETION_KIND);
        k
    }
}

impl std::fmt::Debug for Tombstone {
    /// The text notation: `begin-end#seq`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-{}#{}",
            crate::util::printable(&self.begin),
            crate::util::printable(&self.end),
            self.seq
        )
    }
}

/// True if `ikey` is the sentinel `end#MAX_SEQUENCE,RANGEDEL` that ends a file's key range
/// at the exclusive end of a tombstone ([`Tombstone::largest_key`]).
pub fn is_end_sentinel(ikey: &[u8]) -> bool {
    crate::key::ParsedKey::parse(ikey)
        .is_some_and(|p| p.seq == MAX_SEQUENCE && p.kind == RANGE_DELETION_KIND)
}

/// True if a file whose largest internal key is `largest` holds nothing at or after the user
/// key `key` (in `order`): its largest user key is below `key`, or equal to it as the end
/// sentinel of a tombstone, which does not cover `key` itself (the next file of a level may
/// start there).
pub fn ends_before(order: &KeyOrder, largest: &[u8], key: &[u8]) -> bool {
    match order.compare(crate::key::user_key(largest), key) {
        Ordering::Less => true,
        Ordering::Equal => is_end_sentinel(largest),
        Ordering::Greater => false,
    }
}

/// The internal keys bounding `tombstones` in `order`, `None` without any: the smallest
/// begin key at the newest sequence number starting there (`begin#seq,RANGEDEL`), and the
/// largest end key as the sentinel `end#MAX_SEQUENCE,RANGEDEL` (see
/// [`Tombstone::largest_key`]). A table's recorded key range is the union of these and its
/// point entries' first and last keys ([`widen_bounds`]).
pub fn tombstone_bounds<'a>(
    order: &KeyOrder,
    tombstones: impl Iterator<Item = &'a Tombstone> + Clone,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let first = tombstones
        .clone()
        .min_by(|a, b| order.compare(&a.begin, &b.begin).then(b.seq.cmp(&a.seq)))?;
    let last = tombstones.max_by(|a, b| order.compare(&a.end, &b.end))?;
    Some((first.smallest_key(), last.largest_key()))
}

/// Widens a file's internal-key bounds to cover `bounds` (a table builder's
/// `range_tombstone_bounds`), user keys in `order`. Empty `smallest` and `largest` mean the
/// file has no point entries yet.
pub fn widen_bounds(
    order: &KeyOrder,
    smallest: &mut Vec<u8>,
    largest: &mut Vec<u8>,
    bounds: (&[u8], &[u8]),
) {
    let (lo, hi) = bounds;
    if smallest.is_empty() || order.compare_internal(lo, smallest) == Ordering::Less {
        smallest.clear();
        smallest.extend_from_slice(lo);
    }
    if largest.is_empty() || order.compare_internal(hi, largest) == Ordering::Greater {
        largest.clear();
        largest.extend_from_slice(hi);
    }
}

#[cfg(test)]
mod tests {
    //! Cases in `testdata/fragment.txt` and `testdata/compaction.txt`, in the data-driven
    //! format of the compaction picker's tests. A file's cases share the sources the last
    //! `define` made. Notation: a tombstone is `begin-end#seq`, a fragment
    //! `begin-end:{#9,#5}`, a point entry `key#seq`.
    //!
    //! - `define`: one source (a memtable or a table) per input line, its tombstones
    //!   separated by spaces. Prints the fragments of all sources together.
    //! - `covering [read=N]`: for each key of the input, the newest tombstone at or below `N`
    //!   (default: every one) covering it, over all sources.
    //! - `iter`: cursor steps over the fragments of all sources, one a line (`first`, `last`,
    //!   `seek K`, `seek-for-prev K`, `next`, `prev`); prints the fragment reached or `.`.
    //! - `compact [snapshots=(..)] [bottommost]`: the tombstones a compaction writes.
    //! - `read [read=N]`: for each point entry of the input, whether a read at `N` sees it
    //!   deleted (`deleted`) or not (`visible`).
    //! - `drop [snapshots=(..)]`: for each point entry, whether a compaction with these
    //!   snapshots drops it (`drop`) or keeps it (`keep`).
    //!
    //! `REWRITE=1 cargo test -p strata --lib range_del::tests` rewrites the expected output;
    //! review the diff before committing it.

    use super::*;
    use crate::key::{compare_internal, ParsedKey, ValueKind};
    use std::sync::Arc;

    fn parse_tombstone(s: &str) -> Result<Tombstone, String> {
        let (range, seq) = s
            .rsplit_once('#')
            .ok_or(format!("{s:?}: expected b-e#seq"))?;
        let (begin, end) = range
            .split_once('-')
            .ok_or(format!("{s:?}: expected b-e#seq"))?;
        let seq = seq.parse().map_err(|e| format!("{s:?}: {e}"))?;
        Ok(Tombstone::new(begin.as_bytes(), end.as_bytes(), seq))
    }

    fn parse_point(s: &str) -> Result<(Vec<u8>, SequenceNumber), String> {
        let (key, seq) = s
            .rsplit_once('#')
            .ok_or(format!("{s:?}: expected key#seq"))?;
        Ok((key.into(), seq.parse().map_err(|e| format!("{s:?}: {e}"))?))
    }

    fn show(list: &FragmentedList) -> String {
        match list.is_empty() {
            true => "(none)\n".into(),
            false => format!("{list:?}"),
        }
    }

    fn err(e: impl std::fmt::Display) -> String {
        e.to_string()
    }

    /// The sources of the last `define`, one fragmented list each.
    #[derive(Default)]
    struct State {
        sources: Vec<Arc<FragmentedList>>,
    }

    impl State {
        fn all(&self) -> Arc<FragmentedList> {
            let ts: Vec<Tombstone> = self.sources.iter().flat_map(|l| l.tombstones()).collect();
            Arc::new(FragmentedList::new(&ts))
        }

        fn run(&mut self, case: &mut datadriven::TestCase) -> Result<String, String> {
            let mut out = String::new();
            match case.directive.as_str() {
                "define" => {
                    self.sources.clear();
                    for line in case.input.lines() {
                        let ts = line
                            .split_whitespace()
                            .map(parse_tombstone)
                            .collect::<Result<Vec<_>, _>>()?;
                        self.sources.push(Arc::new(FragmentedList::new(&ts)));
                    }
                    out = show(&self.all());
                }
                "covering" => {
                    let read = case.try_take_arg::<u64>("read").map_err(err)?;
                    let mut agg = RangeDelAggregator::for_read(read.unwrap_or(u64::MAX));
                    self.sources.iter().for_each(|l| agg.add(l.clone()));
                    for key in case.input.split_whitespace() {
                        let seq = agg.max_covering_seq(key.as_bytes(), read.unwrap_or(u64::MAX));
                        let seq = seq.map_or("none".to_string(), |s| format!("#{s}"));
                        out += &format!("{key}: {seq}\n");
                    }
                }
                "iter" => {
                    let mut c = self.all().cursor();
                    for line in case.input.lines() {
                        match line.split_whitespace().collect::<Vec<_>>()[..] {
                            ["first"] => c.seek_to_first(),
                            ["last"] => c.seek_to_last(),
                            ["next"] => c.next(),
                            ["prev"] => c.prev(),
                            ["seek", k] => c.seek(k.as_bytes()),
                            ["seek-for-prev", k] => c.seek_for_prev(k.as_bytes()),
                            _ => return Err(format!("bad step {line:?}")),
                        }
                        match c.fragment() {
                            Some(f) => out += &format!("{f:?}\n"),
                            None => out += ".\n",
                        }
                    }
                }
                "compact" => {
                    let snapshots = case.try_take_args::<u64>("snapshots").map_err(err)?;
                    let bottommost = case.take_flag("bottommost").map_err(err)?;
                    let mut agg = RangeDelAggregator::for_compaction(snapshots.unwrap_or_default());
                    self.sources.iter().for_each(|l| agg.add(l.clone()));
                    out = show(&agg.compaction_output(bottommost));
                }
                "read" | "drop" => {
                    let mut agg = match case.directive.as_str() {
                        "read" => {
                            let read = case.try_take_arg::<u64>("read").map_err(err)?;
                            RangeDelAggregator::for_read(read.unwrap_or(u64::MAX))
                        }
                        _ => {
                            let snapshots = case.try_take_args::<u64>("snapshots").map_err(err)?;
                            RangeDelAggregator::for_compaction(snapshots.unwrap_or_default())
                        }
                    };
                    self.sources.iter().for_each(|l| agg.add(l.clone()));
                    let words = match case.directive.as_str() {
                        "read" => ["deleted", "visible"],
                        _ => ["drop", "keep"],
                    };
                    for p in case.input.split_whitespace() {
                        let (key, seq) = parse_point(p)?;
                        let w = words[usize::from(!agg.should_delete(&key, seq))];
                        out += &format!("{p}: {w}\n");
                    }
                }
                other => return Err(format!("unknown directive {other:?}")),
            }
            case.expect_empty().map_err(err)?;
            Ok(out)
        }
    }

    #[test]
    fn data_driven_cases() {
        for (file, at_least) in [("fragment.txt", 8), ("compaction.txt", 8)] {
            let mut cases = 0;
            let path = format!(
                "{}/src/range_del/testdata/{file}",
                env!("CARGO_MANIFEST_DIR")
            );
            datadriven::walk(&path, |f| {
                let mut state = State::default();
                f.run(|case| {
                    cases += 1;
                    state.run(case)
                })
            });
            assert!(cases >= at_least, "{file}: only {cases} cases ran");
        }
    }

    #[test]
    fn bounds_are_begin_at_seq_and_the_end_sentinel() {
        let t = Tombstone::new(b"b", b"d", 7);
        let lo = t.smallest_key();
        let hi = t.largest_key();
        let p = ParsedKey::parse(&lo).unwrap();
        assert_eq!((p.user_key, p.seq, p.kind), (&b"b"[..], 7, 15));
        let p = ParsedKey::parse(&hi).unwrap();
        assert_eq!((p.user_key, p.seq, p.kind), (&b"d"[..], MAX_SEQUENCE, 15));
        // The sentinel sorts before every real entry of `d`, after every entry of `c`.
        let mut d = Vec::new();
        append_internal_key(&mut d, b"d", MAX_SEQUENCE, ValueKind::Put as u8);
        assert_eq!(compare_internal(&hi, &d), Ordering::Less);
        let mut c = Vec::new();
        append_internal_key(&mut c, b"c\xff", 0, ValueKind::Delete as u8);
        assert_eq!(compare_internal(&c, &hi), Ordering::Less);
    }

    #[test]
    fn widen_bounds_takes_the_outer_keys() {
        let key = |k: &[u8], seq| {
            let mut v = Vec::new();
            append_internal_key(&mut v, k, seq, ValueKind::Put as u8);
            v
        };
        let t = Tombstone::new(b"b", b"x", 3);
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        widen_bounds(
            &KeyOrder::Bytewise,
            &mut lo,
            &mut hi,
            (&t.smallest_key(), &t.largest_key()),
        );
        assert_eq!(
            (lo.clone(), hi.clone()),
            (t.smallest_key(), t.largest_key())
        );
        let (mut lo, mut hi) = (key(b"a", 1), key(b"c", 1));
        widen_bounds(
            &KeyOrder::Bytewise,
            &mut lo,
            &mut hi,
            (&t.smallest_key(), &t.largest_key()),
        );
        assert_eq!((lo, hi), (key(b"a", 1), t.largest_key()));
        let (mut lo, mut hi) = (key(b"c", 1), key(b"z", 1));
        widen_bounds(
            &KeyOrder::Bytewise,
            &mut lo,
            &mut hi,
            (&t.smallest_key(), &t.largest_key()),
        );
        assert_eq!((lo, hi), (t.smallest_key(), key(b"z", 1)));
    }

    #[test]
    fn empty_ranges_contain_nothing() {
        assert!(Tombstone::new(b"b", b"b", 1).is_empty());
        assert!(Tombstone::new(b"c", b"b", 1).is_empty());
        let t = Tombstone::new(b"b", b"c", 1);
        assert!(!t.is_empty());
        assert!(t.contains(b"b") && t.contains(b"bzz") && !t.contains(b"c") && !t.contains(b"a"));
        assert_eq!(format!("{t:?}"), "b-c#1");
    }
}
