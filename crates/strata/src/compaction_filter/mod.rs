//! Compaction filters: user code that decides, entry by entry, what a compaction keeps
//! (RocksDB's `CompactionFilter`, its `FilterV2` form), and the clock and value layout of
//! TTL column families ([`ttl`]).
//!
//! A compaction calls [`CompactionFilter::filter`] with the output level, the user key, the
//! entry's kind ([`EntryKind::Value`] for a put, [`EntryKind::MergeOperand`] for a merge
//! operand) and its value, and acts on the [`FilterDecision`]:
//!
//! - `Keep`: the entry is written as it is.
//! - `Remove`: a value becomes a deletion of the key at the entry's sequence number (dropped
//!   outright at the bottom of the tree, where nothing older can lie below); a merge operand
//!   is left out (the older versions below it then stand, as in RocksDB).
//! - `ChangeValue(v)`: the entry is written with value `v`.
//!
//! Invariants the engine keeps (`compaction::filter_stage` applies them):
//!
//! - The filter sees only the newest version of each key in the compaction, and only when no
//!   live snapshot is at or above its sequence number: a version some snapshot reads is never
//!   shown to it, so every snapshot keeps reading what it read.
//! - Flushes do not call it (nor does RocksDB by default); only compactions do.
//! - A filter that returns `Err` or panics fails the compaction: its outputs are deleted,
//!   nothing is installed, and background work stops with the cause as for any background
//!   error (the tree stays as it was; `Db::resume` retries).

pub mod ttl;

/// What a compaction filter is shown of an entry.
///
/// The example of [`CompactionFilter`] matches on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryKind {
    /// A value written by a put.
    Value,
    /// A merge operand not yet combined with a base value.
    MergeOperand,
}

/// What a compaction does with an entry shown to a filter.
///
/// The example of [`CompactionFilter`] returns each of them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterDecision {
    /// Write the entry as it is.
    Keep,
    /// Remove it: a value becomes a deletion of the key, a merge operand is left out.
    Remove,
    /// Write the entry with this value instead.
    ChangeValue(Vec<u8>),
}

/// Decides what compactions keep, entry by entry (RocksDB's `CompactionFilter`). Set one per
/// column family with [`crate::CfOptions::compaction_filter`].
///
/// Implementations must be deterministic in what they remove: the same entry may be shown
/// again by a later compaction if an earlier one failed.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use strata::{CompactionFilter, Db, EntryKind, FilterDecision, Options};
///
/// /// Drops uploads left unfinished (keys under `tmp/`) and trims whitespace from values.
/// struct Cleanup;
///
/// impl CompactionFilter for Cleanup {
///     fn name(&self) -> &str {
///         "cleanup"
///     }
///
///     fn filter(
///         &self,
///         _level: usize,
///         key: &[u8],
///         kind: EntryKind,
///         value: &[u8],
///     ) -> Result<FilterDecision, String> {
///         Ok(match kind {
///             EntryKind::Value if key.starts_with(b"tmp/") => FilterDecision::Remove,
///             EntryKind::Value if value.ends_with(b" ") => {
///                 FilterDecision::ChangeValue(value.trim_ascii_end().to_vec())
///             }
///             _ => FilterDecision::Keep,
///         })
///     }
/// }
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.compaction_filter = Some(Arc::new(Cleanup));
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"tmp/upload-1", b"partial")?;
/// db.put(b"user/1", b"alice  ")?;
/// db.flush()?;
/// assert!(db.get(b"tmp/upload-1")?.is_some()); // flushes do not filter
/// db.compact_range(None, None)?;
/// assert_eq!(db.get(b"tmp/upload-1")?, None);
/// assert_eq!(db.get(b"user/1")?.as_deref(), Some(&b"alice"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait CompactionFilter: Send + Sync {
    /// The filter's name, recorded in error messages.
    fn name(&self) -> &str;

    /// Decides on the newest version of `key` in a compaction writing to `level`, which no
    /// live snapshot can see. An `Err` with a reason fails the compaction.
    fn filter(
        &self,
        level: usize,
        key: &[u8],
        kind: EntryKind,
        value: &[u8],
    ) -> std::result::Result<FilterDecision, String>;
}

impl std::fmt::Debug for dyn CompactionFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CompactionFilter({:?})", self.name())
    }
}
