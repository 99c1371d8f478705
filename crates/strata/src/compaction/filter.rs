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

    /// Decides on the entry `(ikey, value)`, the next one the job writes.
    pub fn apply(&mut self, ikey: &[u8], value: &[u8]) -> Result<Filtered> {
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
            Some(ValueKind::Put) => EntryKind::Value,
            Some(ValueKind::Merge) => EntryKind::MergeOperand,
            _ => return Ok(Filtered::Pass),
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
        .unwrap_or_else(|panic| Err(format!("it panicked: {}", panic_message(&*panic))))
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
                Filtered::Replace(ikey.to_vec(), v)
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

/// The message of a caught panic.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => (*s).to_string(),
        (_, Some(s)) => s.clone(),
        _ => "(no message)".to_string(),
    }
}
