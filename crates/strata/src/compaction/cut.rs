//! Where a compaction cuts its output into files: [`OutputCutter`], a pure function of the
//! keys written so far and the files of the level below the output (the *grandparents*).
//!
//! An output is cut before a key when it has reached its size limit, or, at a boundary of a
//! grandparent file (as RocksDB's `CompactionOutputs::ShouldStopBefore` with its dynamic file
//! sizes):
//!
//! - when the grandparents it overlaps and its own bytes would pass `max_compaction_bytes`
//!   (a later compaction of it would rewrite that much below);
//! - when the key crossed two boundaries (three from inside a file) at once and skipped more
//!   than an eighth of the target size of grandparent data, so that the gap is left between
//!   two outputs instead of inside one;
//! - when it has reached a share of the target size that grows from a half by 5% per
//!   boundary crossed since the output began, to 90%.
//!
//! Cutting at grandparent boundaries makes outputs line up with the files below, so that
//! compacting one of them later rewrites fewer bytes of the next level. The size limit is
//! twice `target_file_size_base` when there are grandparents (RocksDB's
//! `max_output_file_size` above the bottom), the target itself when there are none: an output
//! past 90% of the target is cut at the next boundary, and only one that meets no boundary
//! for another 110% of the target is cut inside a grandparent file. With the limit at the
//! target, most outputs of a random load were cut by size, between two boundaries: each then
//! overlapped one more grandparent file, and compacting it rewrote that file too. Outputs to
//! L0 are never cut, and a cut falls only between two user keys (the caller says where it
//! may).

use std::sync::Arc;

use crate::comparator::KeyOrder;
use crate::key::user_key;
use crate::version::FileMeta;

/// Decides, key by key, where a compaction's output is cut.
pub struct OutputCutter<'a> {
    grandparents: &'a [Arc<FileMeta>],
    /// The order of user keys.
    order: KeyOrder,
    target: u64,
    /// The size at which an output is cut wherever it is.
    limit: u64,
    max_overlap: u64,
    /// The next grandparent file not yet passed.
    index: usize,
    /// Between two grandparent files (or before the first), not inside one.
    in_gap: bool,
    /// Bytes of grandparent files the current output overlaps.
    overlap: u64,
    /// Grandparent boundaries the current output has crossed.
    switches: u64,
    seen_key: bool,
}

impl<'a> OutputCutter<'a> {
    /// A cutter for outputs of about `target` bytes above `grandparents` (sorted, disjoint),
    /// overlapping at most `max_overlap` bytes of them, user keys in `order`.
    pub fn new(
        grandparents: &'a [Arc<FileMeta>],
        target: u64,
        max_overlap: u64,
        order: KeyOrder,
    ) -> Self {
        let target = target.max(1);
        OutputCutter {
            grandparents,
            order,
            target,
            limit: match grandparents.is_empty() {
                true => target,
                false => target.saturating_mul(2),
            },
            max_overlap,
            index: 0,
            in_gap: true,
            overlap: 0,
            switches: 0,
            seen_key: false,
        }
    }

    /// Whether to finish the current output (`size` bytes so far, 0 if none) before the entry
    /// with user key `key`. Called for every entry, in order; `may_cut` is false where no cut
    /// may fall (the same user key as the entry before, or an output to L0).
    pub fn cut_before(&mut self, key: &[u8], size: u64, may_cut: bool) -> bool {
        let before = self.overlap;
        let mut crossed = 0u64;
        while let Some(g) = self.grandparents.get(self.index) {
            if self.in_gap {
                if self.order.lt(key, user_key(&g.smallest)) {
                    break;
                }
                if self.seen_key {
                    crossed += 1;
                    self.overlap += g.size;
                }
                self.in_gap = false;
            } else {
                if self.order.le(key, user_key(&g.largest)) {
                    break;
                }
                if self.seen_key {
                    crossed += 1;
                }
                self.in_gap = true;
                self.index += 1;
            }
        }
        self.switches += crossed;
        if !self.seen_key {
            self.overlap = self.inside();
        }
        self.seen_key = true;
        if !may_cut || size == 0 {
            return false;
        }
        let target = self.target;
        let grown_share = target.div_ceil(100) * (50 + (self.switches * 5).min(40));
        let skipped_much =
            crossed >= if self.in_gap { 2 } else { 3 } && self.overlap - before > target / 8;
        let cut = size >= self.limit
            || crossed > 0
                && (self.overlap + size > self.max_overlap || skipped_much || size >= grown_share);
        if cut {
            self.switches = 0;
            self.overlap = self.inside();
        }
        cut
    }

    /// Bytes of the grandparent file the last key fell inside, if any.
    fn inside(&self) -> u64 {
        match (self.in_gap, self.grandparents.get(self.index)) {
            (false, Some(g)) => g.size,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{append_internal_key, ValueKind};

    fn file(number: u64, lo: &str, hi: &str, size: u64) -> Arc<FileMeta> {
        let ik = |k: &str| {
            let mut v = Vec::new();
            append_internal_key(&mut v, k.as_bytes(), 1, ValueKind::Put as u8);
            v
        };
        Arc::new(FileMeta {
            number,
            size,
            smallest: ik(lo),
            largest: ik(hi),
            smallest_seq: 1,
            largest_seq: 1,
            entries: 1,
            deletions: 0,
            blob_refs: Vec::new(),
            reader: Default::default(),
        })
    }

    /// Feeds keys of `per_key` bytes each; returns the keys each output starts with.
    fn cuts(gps: &[Arc<FileMeta>], keys: &[&str], per_key: u64, target: u64) -> Vec<String> {
        let mut cutter = OutputCutter::new(gps, target, 25 * target, KeyOrder::Bytewise);
        let mut starts = Vec::new();
        let mut size = 0;
        for k in keys {
            if size == 0 || cutter.cut_before(k.as_bytes(), size, true) {
                if size == 0 {
                    cutter.cut_before(k.as_bytes(), 0, true);
                }
                starts.push(k.to_string());
                size = 0;
            }
            size += per_key;
        }
        starts
    }

    #[test]
    fn outputs_are_cut_at_the_target_size_without_grandparents() {
        let keys = ["a", "b", "c", "d", "e", "f", "g"];
        assert_eq!(cuts(&[], &keys, 40, 100), ["a", "d", "g"]);
    }

    #[test]
    fn outputs_past_half_the_target_are_cut_at_a_grandparent_boundary() {
        // Grandparents [a-c] [d-f] [g-i]: an output of 60 bytes reaching d is cut there.
        let gps = [
            file(1, "a", "c", 500),
            file(2, "d", "f", 500),
            file(3, "g", "i", 500),
        ];
        let keys = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        assert_eq!(cuts(&gps, &keys, 20, 100), ["a", "d", "g"]);
        // Outputs under the growing share are not cut: at d 30 bytes against 60, at g 60
        // against 70 (two more boundaries crossed).
        assert_eq!(cuts(&gps, &keys, 10, 100), ["a"]);
    }

    #[test]
    fn above_grandparents_an_output_runs_past_the_target_to_a_boundary_up_to_twice_it() {
        // Grandparents [a-f] [g-z], 30 bytes a key, target 100: the first output passes the
        // target at e inside [a-f] and is cut at g, the boundary (180 bytes); the second
        // stays inside [g-z] and is cut once it has twice the target (210 bytes at n).
        let gps = [file(1, "a", "f", 500), file(2, "g", "z", 500)];
        let keys: Vec<String> = ('a'..='p').map(String::from).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        assert_eq!(cuts(&gps, &keys, 30, 100), ["a", "g", "n"]);
        // Without grandparents the target is the limit.
        assert_eq!(cuts(&[], &keys, 30, 100), ["a", "e", "i", "m"]);
    }

    #[test]
    fn a_key_that_skips_grandparent_data_starts_a_new_output() {
        // From inside [a-b], key z passes [c-d] and [e-f] whole: 400 bytes skipped.
        let gps = [
            file(1, "a", "b", 100),
            file(2, "c", "d", 200),
            file(3, "e", "f", 200),
        ];
        assert_eq!(cuts(&gps, &["a", "b", "z"], 10, 1000), ["a", "z"]);
    }

    #[test]
    fn no_cut_where_the_caller_says_none_may_fall() {
        let mut cutter = OutputCutter::new(&[], 10, 250, KeyOrder::Bytewise);
        cutter.cut_before(b"a", 0, true);
        assert!(!cutter.cut_before(b"a", 100, false));
        assert!(cutter.cut_before(b"b", 100, true));
    }
}
