//! Which versions of a key a merge keeps: the rule applied entry by entry in internal-key
//! order by flushes and compactions ([`VisibilityFilter`]).
//!
//! For the versions of one user key (newest first):
//!
//! - Snapshots cut the sequence space into stripes; a reader at snapshot `s` (or at "now")
//!   sees the newest version with sequence `<= s`. Only the newest version of each stripe
//!   is kept: an older one in the same stripe is visible to no reader.
//! - A delete is dropped at the bottom of the tree (no older version of the key can exist
//!   below the output) when no snapshot is older than it.
//! - A single-delete and the put it removes, meeting in one stripe: the put is dropped; the
//!   single-delete too at the bottom of the tree, else it is kept, since lower levels may
//!   hold older versions it must go on hiding.

use crate::key::{ParsedKey, SequenceNumber, ValueKind};

/// What the merge does with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Write it to the output.
    Keep,
    /// Leave it out.
    Drop,
}

/// Decides, entry by entry in internal-key order, which versions a flush or compaction keeps.
pub struct VisibilityFilter {
    /// Live snapshot sequence numbers, ascending.
    snapshots: Vec<SequenceNumber>,
    bottommost: bool,
    current_key: Vec<u8>,
    has_current: bool,
    /// Stripe of the previous (newer) entry of the current key.
    prev_stripe: Option<SequenceNumber>,
    /// A single-delete held back to see whether the next entry is the put it removes.
    held_single_delete: Option<(Vec<u8>, SequenceNumber)>,
}

/// An entry the filter releases: the held single-delete, or nothing.
pub type Released = Option<(Vec<u8>, Vec<u8>)>;

impl VisibilityFilter {
    /// A filter for a compaction whose output is at the bottom of the tree (for its key
    /// range) when `bottommost`, with the given live snapshots.
    pub fn new(mut snapshots: Vec<SequenceNumber>, bottommost: bool) -> VisibilityFilter {
        snapshots.sort_unstable();
        snapshots.dedup();
        VisibilityFilter {
            snapshots,
            bottommost,
            current_key: Vec::new(),
            has_current: false,
            prev_stripe: None,
            held_single_delete: None,
        }
    }

    /// The stripe of `seq`: the smallest snapshot at or above it, or MAX for "now".
    fn stripe(&self, seq: SequenceNumber) -> SequenceNumber {
        let i = self.snapshots.partition_point(|&s| s < seq);
        self.snapshots
            .get(i)
            .copied()
            .unwrap_or(SequenceNumber::MAX)
    }

    /// Decides on the entry `ikey` (with the value it carries). First returns an entry held
    /// back earlier that must now be written before this one, if any.
    pub fn decide(&mut self, ikey: &[u8]) -> (Released, Decision) {
        let Some(p) = ParsedKey::parse(ikey) else {
            return (self.release(), Decision::Keep); // keep what we cannot read
        };
        let new_key = !self.has_current || p.user_key != self.current_key.as_slice();
        if new_key {
            self.current_key.clear();
            self.current_key.extend_from_slice(p.user_key);
            self.has_current = true;
            self.prev_stripe = None;
        }
        let stripe = self.stripe(p.seq);
        let shadowed = self.prev_stripe == Some(stripe);
        self.prev_stripe = Some(stripe);

        // A held single-delete meets the next version of its key in the same stripe: if it
        // is a put, both go; otherwise the single-delete is written.
        let mut released = None;
        if let Some((held, held_seq)) = self.held_single_delete.take() {
            let meets = !new_key && self.stripe(held_seq) == stripe;
            if meets && p.kind == ValueKind::Put as u8 {
                // The put goes. Older versions of this stripe stay hidden (the single-delete
                // is what readers of the stripe see). The single-delete itself goes only
                // where a delete would: at the bottom with no older snapshot. Above the
                // bottom, lower levels may hold older puts whose delete an earlier compaction
                // dropped as hidden by the put now cancelled; with an older snapshot, that
                // snapshot's version in an older stripe is kept and must stay hidden.
                let droppable =
                    self.bottommost && self.snapshots.first().is_none_or(|&s| s >= held_seq);
                let keep = (!droppable).then_some((held, Vec::new()));
                return (keep, Decision::Drop);
            }
            released = Some((held, Vec::new()));
        }
        if shadowed {
            return (released, Decision::Drop);
        }
        // No snapshot older than this entry: no reader can see what it hides.
        let no_older_snapshot = self.snapshots.first().is_none_or(|&s| s >= p.seq);
        match ValueKind::from_byte(p.kind) {
            Some(ValueKind::Delete) if self.bottommost && no_older_snapshot => {
                (released, Decision::Drop)
            }
            Some(ValueKind::SingleDelete) => {
                if !(self.bottommost && no_older_snapshot) {
                    self.held_single_delete = Some((ikey.to_vec(), p.seq));
                }
                (released, Decision::Drop)
            }
            _ => (released, Decision::Keep),
        }
    }

    /// The single-delete still held at the end of the input, if any: write it.
    pub fn release(&mut self) -> Released {
        self.held_single_delete.take().map(|(k, _)| (k, Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::append_internal_key;

    fn ik(k: &str, seq: u64, kind: ValueKind) -> Vec<u8> {
        let mut v = Vec::new();
        append_internal_key(&mut v, k.as_bytes(), seq, kind as u8);
        v
    }

    /// Runs the filter over entries (already in internal-key order); returns what is kept
    /// in the `key#seq,KIND` notation.
    fn run(snapshots: &[u64], bottommost: bool, entries: &[(&str, u64, ValueKind)]) -> String {
        let mut f = VisibilityFilter::new(snapshots.to_vec(), bottommost);
        let mut out = Vec::new();
        for &(k, seq, kind) in entries {
            let key = ik(k, seq, kind);
            let (released, d) = f.decide(&key);
            if let Some((rk, _)) = released {
                out.push(format!("{:?}", ParsedKey::parse(&rk).unwrap()));
            }
            if d == Decision::Keep {
                out.push(format!("{:?}", ParsedKey::parse(&key).unwrap()));
            }
        }
        if let Some((rk, _)) = f.release() {
            out.push(format!("{:?}", ParsedKey::parse(&rk).unwrap()));
        }
        out.join(" ")
    }

    use ValueKind::{Delete as D, Put as P, SingleDelete as SD};

    #[test]
    fn without_snapshots_only_the_newest_version_stays() {
        let e = [("a", 9, P), ("a", 5, P), ("a", 1, D), ("b", 3, P)];
        assert_eq!(run(&[], false, &e), "a#9,PUT b#3,PUT");
    }

    #[test]
    fn each_snapshot_keeps_the_version_it_sees() {
        let e = [
            ("a", 9, P),
            ("a", 7, P),
            ("a", 5, P),
            ("a", 2, P),
            ("a", 1, P),
        ];
        // Snapshots at 6 and 2: "now" sees 9, snapshot 6 sees 5, snapshot 2 sees 2.
        assert_eq!(run(&[6, 2], true, &e), "a#9,PUT a#5,PUT a#2,PUT");
    }

    #[test]
    fn deletes_drop_at_the_bottom_unless_a_snapshot_needs_what_they_hide() {
        let e = [("a", 9, D), ("a", 5, P)];
        assert_eq!(run(&[], true, &e), "", "nothing left at the bottom");
        assert_eq!(
            run(&[], false, &e),
            "a#9,DEL",
            "above the bottom the delete hides older data"
        );
        assert_eq!(
            run(&[6], true, &e),
            "a#9,DEL a#5,PUT",
            "snapshot 6 still sees the put"
        );
    }

    #[test]
    fn single_delete_cancels_its_put_and_vanishes_at_the_bottom() {
        let e = [("a", 9, SD), ("a", 5, P), ("b", 4, P)];
        assert_eq!(run(&[], true, &e), "b#4,PUT");
        assert_eq!(
            run(&[], false, &e),
            "a#9,SINGLEDEL b#4,PUT",
            "kept above the bottom"
        );
        // A snapshot between them keeps both.
        assert_eq!(run(&[6], false, &e), "a#9,SINGLEDEL a#5,PUT b#4,PUT");
        // With no put to meet, the single-delete is written (above the bottom).
        let e = [("a", 9, SD), ("b", 4, P)];
        assert_eq!(run(&[], false, &e), "a#9,SINGLEDEL b#4,PUT");
        assert_eq!(run(&[], true, &e), "b#4,PUT");
        let e = [("z", 9, SD)];
        assert_eq!(
            run(&[], false, &e),
            "z#9,SINGLEDEL",
            "held to the end, then written"
        );
    }

    /// Found by the model test: put, delete, put, single-delete, with the first put in a
    /// lower level. The single-delete cancels the second put and must stay to hide the first.
    #[test]
    fn a_cancelled_pair_still_hides_what_lies_below() {
        let e = [("a", 9, SD), ("a", 7, P), ("a", 5, D), ("a", 3, D)];
        assert_eq!(run(&[], false, &e), "a#9,SINGLEDEL");
        assert_eq!(
            run(&[], true, &e),
            "",
            "at the bottom nothing is left to hide"
        );
    }

    /// Also found by the model test: put, single-delete, put, single-delete with a snapshot
    /// between the last two. The first compaction keeps both (different stripes) and drops
    /// the older single-delete as hidden by the put. Once the snapshot is gone the pair
    /// meets: the single-delete must stay above the bottom, where the first put may lie.
    #[test]
    fn a_pair_meeting_later_keeps_hiding_older_puts() {
        let first = [("a", 4, SD), ("a", 3, P), ("a", 2, SD)];
        assert_eq!(run(&[3], false, &first), "a#4,SINGLEDEL a#3,PUT");
        let later = [("a", 4, SD), ("a", 3, P)];
        assert_eq!(run(&[], false, &later), "a#4,SINGLEDEL");
    }

    /// Found by the model test (seed 12): at the bottom, with snapshots 524 and 556, a
    /// single-delete and its put meet above an older delete and an older put that snapshot
    /// 524 needs. The put at 520 is kept for that snapshot, so the single-delete must stay,
    /// or the put at 520 would become the newest version for current readers.
    #[test]
    fn a_pair_at_the_bottom_stays_hidden_from_readers_after_an_older_snapshot() {
        let e = [
            ("a", 544, SD),
            ("a", 543, P),
            ("a", 538, D),
            ("a", 520, P),
            ("a", 457, P),
        ];
        assert_eq!(run(&[524, 556], true, &e), "a#544,SINGLEDEL a#520,PUT");
        assert_eq!(run(&[], true, &e), "");
    }
}
