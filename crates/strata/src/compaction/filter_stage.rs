//! Applying a column family's compaction filter, and the built-in filter of TTL families, to
//! the entries a compaction writes ([`FilterStage`]).
//!
//! The stage sits between the merge-operand collapse and the [`super::VisibilityFilter`]:
//! it sees every entry the job would write, in internal-key order, and shows a filter only
//!
//! - the first entry of each user key (the newest version in the compaction; older ones are
//!   either shadowed by it or kept for snapshots, and must stay as they are), and
//! - only when no live snapshot is at or above its sequence number (no reader that could see
//!   it pinned it), and
//! - only puts and merge operands.
//!
//! A removed put becomes a delete with the put's sequence number and is then handed to the
//! visibility filter like any delete: dropped at the bottom of the tree when no snapshot is
//! older, kept elsewhere (it hides older versions below the output). A removed merge operand
//! is left out, so the versions below it stand. A changed value replaces the value.
//!
//! In a TTL family (`ttl_now` set) an expired put is removed first, without asking the user
//! filter; otherwise the user filter sees the value without its expiry suffix, and a changed
//! value gets the old suffix back. A value shorter than the suffix is kept as it is (reads
//! report it as corrupt; a compaction is no place to lose it).
//!
//! A filter that returns an error or panics fails the job with an error naming the filter,
//! the family and the key; the panic is caught here so that it cannot unwind through the job.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::compaction_filter::{ttl, CompactionFilter, EntryKind, FilterDecision};
use crate::error::{Error, Result};
use crate::key::{append_internal_key, ParsedKey, SequenceNumber, ValueKind};
use crate::util::printable;

use super::BlobResolver;

/// What the stage does with one entry.
#[derive(Debug, PartialEq, Eq)]
pub enum Filtered {
    /// Write it as it is.
    Pass,
    /// Write this (internal key, value) instead.
    Replace(Vec<u8>, Vec<u8>),
    /// Leave it out.
    Skip,
}

/// The filters of one compaction job.
pub struct FilterStage {
    user: Option<Arc<dyn CompactionFilter>>,
    /// The clock's time at the start of the job, in a TTL family.
    ttl_now: Option<u64>,
    /// The level the job writes to.
    level: usize,
    /// The newest live snapshot: entries at or below it are not shown to the filters.
    newest_snapshot: Option<SequenceNumber>,
    /// The family's name, for errors.
    family: String,
    last_user_key: Vec<u8>,
    has_last: bool,
}

impl FilterStage {
    /// The stage of a job writing to `level` with the live `snapshots`; `None` when the
    /// family has neither a compaction filter nor a ttl.
    pub fn new(
        user: Option<Arc<dyn CompactionFilter>>,
        ttl_now: Option<u64>,
        level: usize,
        snapshots: &[SequenceNumber],
        family: &str,
    ) -> Option<FilterStage> {
        if user.is_none() && ttl_now.is_none() {
            return None;
        }
        Some(FilterStage {
            user,
            ttl_now,
            level,
            newest_snapshot: snapshots.iter().copied().max(),
            family: family.to_string(),
            last_user_key: Vec::new(),
            has_last: false,
        })
    }

    /// Decides on the entry `(ikey, value)`, the next one the job writes. The value of a
    /// blob reference is read through `blobs` for the filter to see; kept, the reference
    /// stays as it is.
    pub fn apply(
        &mut self,
        ikey: &[u8],
        value: &[u8],
        blobs: Option<&BlobResolver<'_>>,
    ) -> Result<Filtered> {
        let Some(p) = ParsedKey::parse(ikey) else {
            return Ok(Filtered::Pass);
        };
        let first = !self.has_last || p.user_key != self.last_user_key.as_slice();
        if !first {
            return Ok(Filtered::Pass);
        }
        self.last_user_key.clear();
        self.last_user_key.extend_from_slice(p.user_key);
        self.has_last = true;
        if self.newest_snapshot.is_some_and(|s| s >= p.seq) {
            return Ok(Filtered::Pass);
        }
        let kind = match p.value_kind() {
            Some(ValueKind::Put | ValueKind::BlobIndex) => EntryKind::Value,
            Some(ValueKind::Merge) => EntryKind::MergeOperand,
            _ => return Ok(Filtered::Pass),
        };
        let separated;
        let value = match (p.value_kind(), blobs) {
            (Some(ValueKind::BlobIndex), Some(resolve)) => {
                separated = resolve(p.user_key, value)?;
                separated.as_slice()
            }
            (Some(ValueKind::BlobIndex), None) => return Ok(Filtered::Pass),
            _ => value,
        };
        let (user_value, expiry) = match self.ttl_now {
            Some(now) => match ttl::split(value) {
                None => return Ok(Filtered::Pass),
                Some((_, expiry)) if kind == EntryKind::Value && ttl::is_expired(expiry, now) => {
                    return Ok(self.remove(p.user_key, p.seq, kind));
                }
                Some((v, expiry)) => (v, Some(expiry)),
            },
            None => (value, None),
        };
        let Some(user) = &self.user else {
            return Ok(Filtered::Pass);
        };
        let decision = catch_unwind(AssertUnwindSafe(|| {
            user.filter(self.level, p.user_key, kind, user_value)
        }))
        .unwrap_or_else(|panic| {
            Err(format!(
                "it panicked: {}",
                crate::util::panic_message(&*panic)
            ))
        })
        .map_err(|why| {
            Error::InvalidArgument(format!(
                "compaction filter '{}' of column family '{}' failed on key '{}': {why}",
                user.name(),
                self.family,
                printable(p.user_key)
            ))
        })?;
        Ok(match decision {
            FilterDecision::Keep => Filtered::Pass,
            FilterDecision::Remove => self.remove(p.user_key, p.seq, kind),
            FilterDecision::ChangeValue(mut v) => {
                if let Some(expiry) = expiry {
                    v.extend_from_slice(&expiry.to_le_bytes());
                }
                // A new value in place of a blob reference is a plain put.
                let mut k = ikey.to_vec();
                if p.value_kind() == Some(ValueKind::BlobIndex) {
                    k.clear();
                    append_internal_key(&mut k, p.user_key, p.seq, ValueKind::Put as u8);
                }
                Filtered::Replace(k, v)
            }
        })
    }

    /// A removed value becomes a delete; a removed merge operand is left out.
    fn remove(&self, user_key: &[u8], seq: SequenceNumber, kind: EntryKind) -> Filtered {
        match kind {
            EntryKind::Value => {
                let mut k = Vec::with_capacity(user_key.len() + crate::key::TRAILER_LEN);
                append_internal_key(&mut k, user_key, seq, ValueKind::Delete as u8);
                Filtered::Replace(k, Vec::new())
            }
            EntryKind::MergeOperand => Filtered::Skip,
        }
    }
}

#[cfg(test)]
mod tests {
    //! The decisions of a filter against the rules of the stage, as a table: each row gives
    //! the decision the filter returns for every entry it is shown, the output level, the
    //! live snapshots, whether the output is the bottom of the tree, the entries a job reads
    //! (`key#seq,KIND=value`), what it writes, and which entries the filter was shown
    //! (`key@level=value`, `:op` for a merge operand).

    use std::sync::Mutex;

    use super::*;
    use crate::compaction::operands::write_visible_filtered;
    use crate::compaction::VisibilityFilter;
    use crate::iterator::InternalIterator;
    use crate::testing::lsm::{parse_entries, show_key, VecIter};

    /// Returns `decision` for everything, and records what it was shown.
    struct Fixed {
        decision: FilterDecision,
        shown: Mutex<Vec<String>>,
    }

    impl CompactionFilter for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn filter(
            &self,
            level: usize,
            key: &[u8],
            kind: EntryKind,
            value: &[u8],
        ) -> std::result::Result<FilterDecision, String> {
            let op = if kind == EntryKind::MergeOperand {
                ":op"
            } else {
                ""
            };
            self.shown.lock().unwrap().push(format!(
                "{}@{level}={}{op}",
                printable(key),
                printable(value)
            ));
            Ok(self.decision.clone())
        }
    }

    /// Runs a job's filtering over `entries`: what it writes, or the error.
    fn run(
        stage: Option<&mut FilterStage>,
        snapshots: &[u64],
        bottommost: bool,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> std::result::Result<String, String> {
        let mut it = VecIter::new(entries);
        it.seek_to_first();
        let mut filter = VisibilityFilter::new(snapshots.to_vec(), bottommost);
        let mut out = Vec::new();
        write_visible_filtered(
            &mut it,
            &mut filter,
            None,
            stage,
            None,
            |_| Ok(false),
            |k, v| {
                out.push(match v.is_empty() {
                    true => show_key(k),
                    false => format!("{}={}", show_key(k), printable(v)),
                });
                Ok(())
            },
        )
        .map_err(|e| e.to_string())?;
        Ok(match out.is_empty() {
            true => "(none)".into(),
            false => out.join(" "),
        })
    }

    /// decision, level, snapshots, bottommost, input, output, shown.
    type Case = (
        FilterDecision,
        usize,
        &'static [u64],
        bool,
        &'static str,
        &'static str,
        &'static str,
    );

    #[test]
    fn filter_decisions() {
        use FilterDecision::{ChangeValue, Keep, Remove};
        let change = || ChangeValue(b"new".to_vec());
        let abc = "a#5,PUT=x a#3,PUT=y b#4,PUT=z";
        #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            // decision, level, snapshots, bottommost, input, output, shown
            (Keep, 1, &[], false, abc, "a#5,PUT=x b#4,PUT=z", "a@1=x b@1=z"),
            (Keep, 6, &[], true, abc, "a#0,PUT=x b#0,PUT=z", "a@6=x b@6=z"),
            // Removed values become deletes above the bottom (older versions may lie below)...
            (Remove, 1, &[], false, abc, "a#5,DEL b#4,DEL", "a@1=x b@1=z"),
            // ...and vanish at the bottom with no snapshot.
            (Remove, 6, &[], true, abc, "(none)", "a@6=x b@6=z"),
            (change(), 2, &[], false, abc, "a#5,PUT=new b#4,PUT=new", "a@2=x b@2=z"),
            (change(), 6, &[], true, abc, "a#0,PUT=new b#0,PUT=new", "a@6=x b@6=z"),
            // A snapshot at 4 sees a#3 and b#4: b is not shown; a#5 is, and its delete stays
            // at the bottom to hide a#3 from readers after the snapshot.
            (Remove, 6, &[4], true, abc, "a#5,DEL a#0,PUT=y b#0,PUT=z", "a@6=x"),
            (Remove, 1, &[4], false, abc, "a#5,DEL a#3,PUT=y b#4,PUT=z", "a@1=x"),
            (change(), 6, &[4], true, abc, "a#5,PUT=new a#0,PUT=y b#0,PUT=z", "a@6=x"),
            (Keep, 6, &[4], true, abc, "a#5,PUT=x a#0,PUT=y b#0,PUT=z", "a@6=x"),
            // A snapshot at or above an entry protects it, whatever the level. (At the bottom
            // the puts at or below the oldest snapshot are written with sequence number 0.)
            (Remove, 6, &[5], true, abc, "a#0,PUT=x b#0,PUT=z", ""),
            (Remove, 1, &[9], false, abc, "a#5,PUT=x b#4,PUT=z", ""),
            (change(), 6, &[2, 9], true, abc, "a#5,PUT=x b#4,PUT=z", ""),
            // Only the newest version of a key is shown; deletes never are.
            (Remove, 1, &[], false, "a#5,DEL a#3,PUT=y", "a#5,DEL", ""),
            (Remove, 6, &[], true, "a#5,DEL a#3,PUT=y", "(none)", ""),
            // A removed merge operand is left out: the version below it stands.
            (Remove, 1, &[], false, "a#5,MERGE=m a#3,PUT=y", "a#3,PUT=y", "a@1=m:op"),
            (Remove, 6, &[], true, "a#5,MERGE=m", "(none)", "a@6=m:op"),
            (change(), 1, &[], false, "a#5,MERGE=m a#3,PUT=y", "a#5,MERGE=new a#3,PUT=y", "a@1=m:op"),
            (Keep, 1, &[], false, "a#5,MERGE=m a#3,PUT=y", "a#5,MERGE=m a#3,PUT=y", "a@1=m:op"),
        ];
        for (decision, level, snapshots, bottommost, input, want, want_shown) in cases {
            let fixed = Arc::new(Fixed {
                decision: decision.clone(),
                shown: Mutex::new(Vec::new()),
            });
            let user: Arc<dyn CompactionFilter> = fixed.clone();
            let mut stage = FilterStage::new(Some(user), None, level, snapshots, "cf").unwrap();
            let got = run(
                Some(&mut stage),
                snapshots,
                bottommost,
                parse_entries(input).unwrap(),
            )
            .unwrap();
            let shown = fixed.shown.lock().unwrap().join(" ");
            let case = format!(
                "{decision:?} L{level} snapshots={snapshots:?} bottommost={bottommost}: {input}"
            );
            assert_eq!(got, want, "output of {case}");
            assert_eq!(shown, want_shown, "entries shown in {case}");
        }
    }

    /// Entries of a TTL family: `(key, seq, kind, value, expiry)`.
    fn ttl_entries(rows: &[(&str, u64, ValueKind, &str, u64)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        rows.iter()
            .map(|&(k, seq, kind, v, expiry)| {
                let mut key = Vec::new();
                append_internal_key(&mut key, k.as_bytes(), seq, kind as u8);
                let mut value = v.as_bytes().to_vec();
                if kind == ValueKind::Put {
                    value.extend_from_slice(&expiry.to_le_bytes());
                }
                (key, value)
            })
            .collect()
    }

    #[test]
    fn ttl_expiry_drops_expired_values_and_hands_the_rest_to_the_user_filter() {
        use ValueKind::Put;
        let now = 100;
        // Expired (99 < 100) and live (100 is not past) values, no user filter.
        let entries = || {
            ttl_entries(&[
                ("a", 5, Put, "old", 99),
                ("a", 3, Put, "older", 500),
                ("b", 4, Put, "live", 100),
            ])
        };
        let mut stage = FilterStage::new(None, Some(now), 6, &[], "t").unwrap();
        let got = run(Some(&mut stage), &[], true, entries()).unwrap();
        assert_eq!(got, "b#0,PUT=lived\\x00\\x00\\x00\\x00\\x00\\x00\\x00");
        let mut stage = FilterStage::new(None, Some(now), 1, &[], "t").unwrap();
        let got = run(Some(&mut stage), &[], false, entries()).unwrap();
        assert!(got.starts_with("a#5,DEL b#4,PUT=live"), "{got}");
        // A snapshot at 5 protects a#5: nothing is dropped (the bottom writes it as a#0).
        let mut stage = FilterStage::new(None, Some(now), 6, &[5], "t").unwrap();
        let got = run(Some(&mut stage), &[5], true, entries()).unwrap();
        assert!(got.starts_with("a#0,PUT=old"), "{got}");

        // The user filter sees live values without the suffix; a changed value keeps it.
        let fixed = Arc::new(Fixed {
            decision: FilterDecision::ChangeValue(b"NEW".to_vec()),
            shown: Mutex::new(Vec::new()),
        });
        let user: Arc<dyn CompactionFilter> = fixed.clone();
        let mut stage = FilterStage::new(Some(user), Some(now), 6, &[], "t").unwrap();
        let got = run(Some(&mut stage), &[], true, entries()).unwrap();
        assert_eq!(got, "b#0,PUT=NEWd\\x00\\x00\\x00\\x00\\x00\\x00\\x00");
        assert_eq!(fixed.shown.lock().unwrap().join(" "), "b@6=live");

        // A value too short for the suffix is kept as it is, not shown to the filter.
        let mut key = Vec::new();
        append_internal_key(&mut key, b"s", 7, Put as u8);
        let mut stage = FilterStage::new(None, Some(now), 6, &[], "t").unwrap();
        let got = run(Some(&mut stage), &[], true, vec![(key, b"abc".to_vec())]).unwrap();
        assert_eq!(got, "s#0,PUT=abc");
    }

    struct Failing(bool);

    impl CompactionFilter for Failing {
        fn name(&self) -> &str {
            "failing"
        }
        fn filter(
            &self,
            _level: usize,
            key: &[u8],
            _kind: EntryKind,
            _value: &[u8],
        ) -> std::result::Result<FilterDecision, String> {
            if key == b"b" {
                if self.0 {
                    panic!("bad key b");
                }
                return Err("cannot decide".into());
            }
            Ok(FilterDecision::Keep)
        }
    }

    #[test]
    fn a_failing_or_panicking_filter_fails_the_job_naming_the_filter_family_and_key() {
        for (panics, reason) in [(false, "cannot decide"), (true, "it panicked: bad key b")] {
            let user: Arc<dyn CompactionFilter> = Arc::new(Failing(panics));
            let mut stage = FilterStage::new(Some(user), None, 1, &[], "users").unwrap();
            let entries = parse_entries("a#5,PUT=x b#4,PUT=z").unwrap();
            let err = run(Some(&mut stage), &[], false, entries).unwrap_err();
            assert_eq!(
                err,
                format!(
                    "invalid argument: compaction filter 'failing' of column family 'users' \
                     failed on key 'b': {reason}"
                )
            );
        }
    }

    #[test]
    fn no_stage_without_a_filter_or_a_ttl() {
        assert!(FilterStage::new(None, None, 1, &[], "cf").is_none());
    }
}
