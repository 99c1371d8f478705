//! Prefix seeks: with a prefix extractor and without `total_order_seek`, a seek skips each
//! table, and each deeper level's cursor, whose prefix filter rules out the seek's prefix.

use std::sync::Arc;

use crate::comparator::KeyOrder;
use crate::error::Result;
use crate::iterator::{FilteredSeek, InternalIterator, SeekHint};
use crate::prefix::PrefixExtractor;
use crate::table::Table;
use crate::version::FileMeta;

/// How an iterator of a family with a prefix extractor seeks.
pub(crate) struct PrefixSeek {
    pub(super) extractor: Arc<dyn PrefixExtractor>,
    /// Armed around the iterator's own seeks; `None` with `total_order_seek`.
    pub(super) hint: Option<Arc<SeekHint>>,
    /// `ReadOptions::prefix_same_as_start`.
    pub(super) same_as_start: bool,
}

impl PrefixSeek {
    /// The prefix seeking of an iterator over a family with `extractor` (`None` without
    /// one), with [`ReadOptions::total_order_seek`] and
    /// [`ReadOptions::prefix_same_as_start`].
    pub(crate) fn new(
        extractor: &Option<Arc<dyn PrefixExtractor>>,
        total_order_seek: bool,
        same_as_start: bool,
    ) -> Option<PrefixSeek> {
        Some(PrefixSeek {
            extractor: extractor.clone()?,
            hint: (!total_order_seek).then(|| Arc::new(SeekHint::default())),
            same_as_start,
        })
    }

    /// The hint the iterator's sources check, `None` when seeks read every source.
    pub(crate) fn hint(&self) -> Option<&Arc<SeekHint>> {
        self.hint.as_ref()
    }

    /// The extractor's name, which a table's properties must carry for its filter to answer.
    pub(crate) fn name(&self) -> Arc<str> {
        self.extractor.name().into()
    }
}

/// The iterator of table `table`, skipped by a prefix seek whose prefix its filter rules out.
pub(crate) fn prefix_filtered_table(
    inner: Box<dyn InternalIterator>,
    hint: &Arc<SeekHint>,
    extractor: Arc<str>,
    table: Arc<Table>,
) -> Box<dyn InternalIterator> {
    Box::new(FilteredSeek::new(
        inner,
        hint.clone(),
        Box::new(move |target, hash, backward| {
            table.prefix_may_match(&extractor, target, hash, backward)
        }),
    ))
}

/// The cursor of one sorted level (`files` in `order`, opened by `open`), skipped by a prefix seek when
/// the file holding the target's position rules the prefix out. Keys with one prefix are
/// contiguous: going forward, if the first file whose largest key is at or after the target
/// holds none of them, no later file holds one after the target (its largest key would lie
/// between two keys of the prefix); going backward (`seek_for_prev`), the same holds of the
/// last file whose smallest key is at or before the target and the files before it. A file
/// with range deletions is not relied on (its bounds may be a deletion's ends rather than
/// keys in its filter). A level with no file in the seek's direction holds nothing to find.
pub(crate) fn prefix_filtered_level(
    inner: Box<dyn InternalIterator>,
    hint: &Arc<SeekHint>,
    extractor: Arc<str>,
    files: Vec<Arc<FileMeta>>,
    order: KeyOrder,
    open: impl Fn(&FileMeta) -> Result<Arc<Table>> + Send + 'static,
) -> Box<dyn InternalIterator> {
    Box::new(FilteredSeek::new(
        inner,
        hint.clone(),
        Box::new(move |target_key, hash, backward| {
            let target = crate::key::user_key(target_key);
            let at = match backward {
                false => {
                    files.partition_point(|f| order.lt(crate::key::user_key(&f.largest), target))
                }
                true => files
                    .partition_point(|f| order.le(crate::key::user_key(&f.smallest), target))
                    .wrapping_sub(1),
            };
            let Some(f) = files.get(at) else {
                return Ok(false);
            };
            let table = open(f)?;
            if !table.range_tombstones_ref().is_empty() {
                return Ok(true);
            }
            table.prefix_may_match(&extractor, target_key, hash, backward)
        }),
    ))
}
