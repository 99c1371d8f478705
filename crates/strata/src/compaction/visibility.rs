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
//! - A merge operand kept as it is hides nothing: the next version of its stripe is what a
//!   reader merges it with, so that version is not dropped as shadowed. (Where a merge
//!   operator is configured, runs of operands are combined before they reach this filter,
//!   see [`super::operands`].)

use crate::key::{pack_trailer, ParsedKey, SequenceNumber, ValueKind, TRAILER_LEN};

/// What the merge does with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Write it to the output.
    Keep,
    /// Write it with sequence number 0 ([`VisibilityFilter::zeroed`] rewrites the key).
    KeepZeroed,
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
    /// The previous entry of the current key was a merge operand that was kept.
    after_kept_merge: bool,
    /// The key [`VisibilityFilter::zeroed`] last rewrote.
    zeroed_key: Vec<u8>,
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
            zeroed_key: Vec::new(),
            current_key: Vec::new(),
            has_current: false,
            prev_stripe: None,
            held_single_delete: None,
            after_kept_merge: false,
        }
    }

    /// True when the output is at the bottom of the tree for its key range.
    pub fn bottommost(&self) -> bool {
        self.bottommost
    }

    /// True when `ikey` is the newest entry of its stripe among those decided so far: the
    /// first of its user key, or the first below a snapshot boundary.
    pub fn starts_stripe(&self, ikey: &[u8]) -> bool {
        let Some(p) = ParsedKey::parse(ikey) else {
            return false;
        };
        !self.has_current
            || p.user_key != self.current_key.as_slice()
            || self.prev_stripe != Some(self.stripe(p.seq))
    }

    /// The stripe of `seq`: the smallest snapshot at or above it, or MAX for "now".
    pub fn stripe(&self, seq: SequenceNumber) -> SequenceNumber {
        let i = self.snapshots.partition_point(|&s| s < seq);
        self.snapshots
            .get(i)
            .copied()
            .unwrap_or(SequenceNumber::MAX)
    }

    /// Decides on the entry `ikey` (with the value it carries). First returns an entry held
    /// back earlier that must now be written before this one, if any.
    pub fn decide(&mut self, ikey: &[u8]) -> (Released, Decision) {
        let (released, decision) = self.decide_inner(ikey);
        self.after_kept_merge = decision == Decision::Keep
            && ParsedKey::parse(ikey).is_some_and(|p| p.kind == ValueKind::Merge as u8);
        (released, decision)
    }

    /// `ikey` with its sequence number set to 0, for an entry decided
    /// [`Decision::KeepZeroed`]. Borrowed from the filter until the next call.
    pub fn zeroed(&mut self, ikey: &[u8]) -> &[u8] {
        self.zeroed_key.clear();
        match ikey.len().checked_sub(TRAILER_LEN) {
            Some(at) => {
                self.zeroed_key.extend_from_slice(&ikey[..at]);
                let kind = ikey[at]; // the trailer's low byte, little-endian
                self.zeroed_key
                    .extend_from_slice(&pack_trailer(0, kind).to_le_bytes());
            }
            None => self.zeroed_key.extend_from_slice(ikey),
        }
        &self.zeroed_key
    }

    fn decide_inner(&mut self, ikey: &[u8]) -> (Released, Decision) {
        let Some(p) = ParsedKey::parse(ikey) else {
            return (self.release(), Decision::Keep); // keep what we cannot read
        };
        let new_key = !self.has_current || p.user_key != self.current_key.as_slice();
        if new_key {
            self.current_key.clear();
            self.current_key.extend_from_slice(p.user_key);
            self.has_current = true;
            self.prev_stripe = None;
            self.after_kept_merge = false;
        }
        let stripe = self.stripe(p.seq);
        let shadowed = self.prev_stripe == Some(stripe) && !self.after_kept_merge;
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
            // The put a key keeps at the bottom below every snapshot (the oldest it keeps):
            // every reader sees it alike, so its number can go.
            Some(ValueKind::Put | ValueKind::BlobIndex)
                if self.bottommost && no_older_snapshot && p.seq != 0 =>
            {
                (released, Decision::KeepZeroed)
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
    //! Cases in `testdata/visibility.txt`, one a stanza:
    //!
    //! ```text
    //! compact snapshots=(6,2) bottommost
    //! a#9,PUT a#7,PUT a#5,PUT a#2,PUT a#1,PUT
    //! ----
    //! a#9,PUT a#5,PUT a#2,PUT
    //! ```
    //!
    //! The input is the entries a flush or compaction reads, in internal-key order, in the
    //! `key#seq,KIND` notation; `snapshots` lists the live snapshots and `bottommost` says the
    //! output is at the bottom of the tree. The output is what the filter keeps, in the order
    //! written (or `(none)`).
    //!
    //! After a deliberate change of the rules, `REWRITE=1 cargo test -p strata --lib
    //! compaction::visibility` rewrites the expected output in place; review the diff before
    //! committing it.

    use super::*;
    use crate::key::compare_internal;
    use crate::testing::lsm::{parse_key, show_key};

    /// Runs the filter over `entries`; returns what it keeps.
    fn run(snapshots: Vec<u64>, bottommost: bool, entries: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut f = VisibilityFilter::new(snapshots, bottommost);
        let mut out = Vec::new();
        for key in entries {
            let (released, d) = f.decide(key);
            out.extend(released.map(|(k, _)| k));
            match d {
                Decision::Keep => out.push(key.clone()),
                Decision::KeepZeroed => out.push(f.zeroed(key).to_vec()),
                Decision::Drop => {}
            }
        }
        out.extend(f.release().map(|(k, _)| k));
        out
    }

    fn compact(case: &mut datadriven::TestCase) -> Result<String, String> {
        let snapshots = case
            .try_take_args::<u64>("snapshots")
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        let bottommost = case.take_flag("bottommost").map_err(|e| e.to_string())?;
        case.expect_empty().map_err(|e| e.to_string())?;
        let entries = case
            .input
            .split_whitespace()
            .map(parse_key)
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(w) = entries
            .windows(2)
            .find(|w| compare_internal(&w[0], &w[1]).is_ge())
        {
            return Err(format!(
                "{} comes before {}",
                show_key(&w[1]),
                show_key(&w[0])
            ));
        }
        let kept: Vec<String> = run(snapshots, bottommost, &entries)
            .iter()
            .map(|k| show_key(k))
            .collect();
        Ok(match kept.is_empty() {
            true => "(none)\n".to_string(),
            false => kept.join(" ") + "\n",
        })
    }

    #[test]
    fn visibility_cases() {
        let mut cases = 0;
        datadriven::walk(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/src/compaction/testdata/visibility.txt"
            ),
            |f| {
                f.run(|case| -> Result<String, String> {
                    cases += 1;
                    match case.directive.as_str() {
                        "compact" => compact(case),
                        other => Err(format!("unknown directive {other:?}")),
                    }
                })
            },
        );
        assert!(cases >= 15, "only {cases} cases ran");
    }
}
