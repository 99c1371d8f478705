//! A write batch with an index (RocksDB's WriteBatchWithIndex): the batch to commit, plus an
//! ordered view of what it does to each key, so that reads can see the batch's own writes.
//!
//! Invariants:
//! - `batch` holds every update in the order it was made; it is what gets written.
//! - Once the batch holds [`INDEX_FROM`] updates, `index` holds, per family id and user key,
//!   the net effect of the batch's updates of that key, keys ordered bytewise: a value, a
//!   delete, or merge operands (oldest first) over a base that is a value, a delete, or
//!   whatever the database holds. A smaller batch has no index (`indexed` is false): a read
//!   folds the batch's updates of its key by scanning the batch, which for a handful of
//!   updates costs less than keeping a map (a key copy and a node per update) that most
//!   small transactions never read.
//! - The index is a function of the batch: a rollback to a save point truncates the batch and
//!   rebuilds the index from it (or drops it, below [`INDEX_FROM`] updates).
//!
//! Range deletions are not indexed (RocksDB's index refuses them too): a transaction cannot
//! issue them.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::column_family::ColumnFamily;
use crate::comparator::KeyOrder;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::key::ValueKind;
use crate::merge::MergeOperator;
use crate::options::ReadOptions;
use crate::write_batch::{BatchMark, WriteBatch};

/// What a merge in the batch applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MergeBase {
    /// The value the database holds for the key at the read's snapshot.
    Database,
    /// A value put earlier in the batch.
    Value(Vec<u8>),
    /// A delete earlier in the batch: the operands apply to nothing.
    Deleted,
}

/// The net effect of the batch on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pending {
    /// The key is set to this value.
    Value(Vec<u8>),
    /// The key is deleted.
    Deleted,
    /// Operands (oldest first) applied to `base`.
    Merges {
        base: MergeBase,
        operands: Vec<Vec<u8>>,
    },
}

impl Pending {
    /// The value a reader sees, given the database's value of the key (used only when the
    /// batch merges onto it). `op` resolves merges; without one a merge is an error naming
    /// `family`.
    pub(crate) fn resolve(
        &self,
        key: &[u8],
        database: Option<&[u8]>,
        op: Option<&dyn MergeOperator>,
        family: &str,
    ) -> Result<Option<Vec<u8>>> {
        match self {
            Pending::Value(v) => Ok(Some(v.clone())),
            Pending::Deleted => Ok(None),
            Pending::Merges { base, operands } => {
                let op = op.ok_or_else(|| crate::merge::no_operator_error(family, key))?;
                let base = match base {
                    MergeBase::Database => database,
                    MergeBase::Value(v) => Some(v.as_slice()),
                    MergeBase::Deleted => None,
                };
                let newest_first: Vec<&[u8]> = operands.iter().rev().map(Vec::as_slice).collect();
                crate::merge::full_merge(op, key, base, &newest_first).map(Some)
            }
        }
    }

    /// True when the batch alone decides the key's value (no read of the database needed).
    pub(crate) fn needs_database(&self) -> bool {
        matches!(
            self,
            Pending::Merges {
                base: MergeBase::Database,
                ..
            }
        )
    }
}

/// The number of updates from which a batch keeps an index (see the module doc).
const INDEX_FROM: usize = 16;

/// The net effect of a batch on each key of one family, ordered bytewise.
type FamilyIndex = BTreeMap<Vec<u8>, Pending>;

/// A write batch whose own writes can be read back, alone or over a database.
///
/// # Examples
///
/// ```
/// use strata::{Db, IndexedBatch, Options, ReadOptions, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"a", b"old")?;
/// db.put(b"b", b"old")?;
/// let mut batch = IndexedBatch::new();
/// batch.put(b"a", b"new");
/// batch.delete(b"b");
/// let (cf, read) = (db.default_cf(), ReadOptions::default());
/// assert_eq!(batch.get_from_batch_and_db(&db, &cf, b"a", &read)?.as_deref(), Some(&b"new"[..]));
/// assert_eq!(batch.get_from_batch_and_db(&db, &cf, b"b", &read)?, None);
/// assert_eq!(db.get(b"a")?.as_deref(), Some(&b"old"[..])); // nothing written yet
/// db.write(batch.take_write_batch(), &WriteOptions::default())?;
/// assert_eq!(db.get(b"b")?, None);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct IndexedBatch {
    batch: WriteBatch,
    /// Per family id; empty (and `indexed` false) below [`INDEX_FROM`] updates.
    index: BTreeMap<u32, FamilyIndex>,
    indexed: bool,
    save_points: Vec<BatchMark>,
}

impl IndexedBatch {
    /// An empty batch.
    pub fn new() -> IndexedBatch {
        IndexedBatch::default()
    }

    /// An indexed batch holding the updates of `batch` (its log data aside).
    pub(crate) fn from_write_batch(batch: WriteBatch) -> Result<IndexedBatch> {
        for entry in batch.iter() {
            let e = entry.map_err(|reason| Error::InvalidArgument(reason.to_string()))?;
            if e.kind == ValueKind::RangeDeletion {
                return Err(Error::InvalidArgument(
                    "a range deletion cannot be part of a transaction".into(),
                ));
            }
        }
        let mut indexed = IndexedBatch {
            batch,
            ..IndexedBatch::default()
        };
        indexed.reindex();
        Ok(indexed)
    }

    /// Rebuilds the index from the batch, or drops it if the batch is below [`INDEX_FROM`].
    fn reindex(&mut self) {
        self.index.clear();
        self.indexed = self.batch.len() >= INDEX_FROM;
        if self.indexed {
            for e in self.batch.iter().flatten() {
                fold(&mut self.index, e.cf, e.kind, e.key, e.value);
            }
        }
    }

    /// Sets `key` to `value` in the default family.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        let key = key.as_ref();
        let value = value.as_ref();
        self.record(0, ValueKind::Put, key, value);
    }

    /// Sets `key` to `value` in family `cf`.
    pub fn put_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        let key = key.as_ref();
        let value = value.as_ref();
        self.record(cf.id(), ValueKind::Put, key, value);
    }

    /// Deletes `key` in the default family.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        self.record(0, ValueKind::Delete, key, b"");
    }

    /// Deletes `key` in family `cf`.
    pub fn delete_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        self.record(cf.id(), ValueKind::Delete, key, b"");
    }

    /// Merges `operand` into `key` in the default family.
    pub fn merge(&mut self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.record(0, ValueKind::Merge, key, operand);
    }

    /// Merges `operand` into `key` in family `cf`.
    pub fn merge_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.record(cf.id(), ValueKind::Merge, key, operand);
    }

    /// Adds one update to the batch and folds it into the index.
    fn record(&mut self, cf: u32, kind: ValueKind, key: &[u8], value: &[u8]) {
        let before = self.batch.len();
        self.batch.push_entry(cf, kind, key, value);
        // A refused update (over a size limit) leaves the batch invalid and unchanged; the
        // commit reports why. The index must not show it either.
        if self.batch.len() > before {
            if self.indexed {
                fold(&mut self.index, cf, kind, key, value);
            } else if self.batch.len() >= INDEX_FROM {
                self.reindex();
            }
        }
    }

    /// The number of updates.
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// True when the batch holds no update.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// Removes every update and save point.
    pub fn clear(&mut self) {
        self.batch.clear();
        self.index.clear();
        self.indexed = false;
        self.save_points.clear();
    }

    /// The batch to write.
    pub fn write_batch(&self) -> &WriteBatch {
        &self.batch
    }

    /// Takes the batch to write, leaving this one empty.
    pub fn take_write_batch(&mut self) -> WriteBatch {
        self.index.clear();
        self.indexed = false;
        self.save_points.clear();
        std::mem::take(&mut self.batch)
    }

    /// Marks the current state; [`IndexedBatch::rollback_to_save_point`] returns to it.
    pub fn set_save_point(&mut self) {
        self.save_points.push(self.batch.mark());
    }

    /// Undoes every update since the last save point and removes that save point. Fails
    /// with `NotFound` if there is none.
    pub fn rollback_to_save_point(&mut self) -> Result<()> {
        let mark = self.save_points.pop().ok_or_else(no_save_point)?;
        self.batch.truncate_to(&mark);
        self.reindex();
        Ok(())
    }

    /// Removes the last save point without undoing anything. Fails with `NotFound` if
    /// there is none.
    pub fn pop_save_point(&mut self) -> Result<()> {
        self.save_points.pop().map(drop).ok_or_else(no_save_point)
    }

    /// What the batch does to `key` of family `cf_id`, if it touches it.
    pub(crate) fn pending(&self, cf_id: u32, key: &[u8]) -> Option<Cow<'_, Pending>> {
        if self.indexed {
            return self.index.get(&cf_id)?.get(key).map(Cow::Borrowed);
        }
        let mut pending = None;
        for e in self.batch.iter().flatten() {
            if e.cf == cf_id && e.key == key {
                pending = Some(folded(pending, e.kind, e.value));
            }
        }
        pending.map(Cow::Owned)
    }

    /// The net effect of the batch on each key of family `cf_id`.
    fn family_index(&self, cf_id: u32) -> Cow<'_, FamilyIndex> {
        if self.indexed {
            return match self.index.get(&cf_id) {
                Some(family) => Cow::Borrowed(family),
                None => Cow::Owned(FamilyIndex::new()),
            };
        }
        let mut index = BTreeMap::new();
        for e in self.batch.iter().flatten().filter(|e| e.cf == cf_id) {
            fold(&mut index, e.cf, e.kind, e.key, e.value);
        }
        Cow::Owned(index.remove(&cf_id).unwrap_or_default())
    }

    /// The batch's entries of family `cf_id` with keys in `[lower, upper)` of `order`, in
    /// that order. (The index is bytewise; a family of another order gets its entries
    /// filtered and sorted here.)
    pub(crate) fn entries_in(
        &self,
        cf_id: u32,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        order: &KeyOrder,
    ) -> Vec<(Vec<u8>, Pending)> {
        let family = self.family_index(cf_id);
        let mut entries: Vec<(Vec<u8>, Pending)> = family
            .iter()
            .filter(|(k, _)| {
                lower.is_none_or(|l| !order.lt(k, l)) && upper.is_none_or(|u| order.lt(k, u))
            })
            .map(|(k, p)| (k.clone(), p.clone()))
            .collect();
        if !order.is_bytewise() {
            entries.sort_by(|a, b| order.compare(&a.0, &b.0));
        }
        entries
    }

    /// The value of `key` in family `cf` as the batch leaves it over `db` read with
    /// `options`: the batch's own writes first, the database below them.
    pub fn get_from_batch_and_db(
        &self,
        db: &Db,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        match self.pending(cf.id(), key) {
            None => db.get_cf_opt(cf, key, options),
            Some(p) => {
                let op = db.merge_operator_of(cf)?;
                let database = if p.needs_database() {
                    db.get_cf_opt(cf, key, options)?
                } else {
                    None
                };
                p.resolve(key, database.as_deref(), op.as_deref(), cf.name())
            }
        }
    }

    /// [`IndexedBatch::get_from_batch_and_db`] for many keys of family `cf`, in their order:
    /// the keys the batch settles alone are answered from it, and the database reads the
    /// rest in one [`Db::multi_get_cf_opt`] (which groups them by table block).
    pub fn multi_get_from_batch_and_db<K: AsRef<[u8]>>(
        &self,
        db: &Db,
        cf: &ColumnFamily,
        keys: &[K],
        options: &ReadOptions,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let pending: Vec<Option<Cow<'_, Pending>>> = keys
            .iter()
            .map(|key| self.pending(cf.id(), key.as_ref()))
            .collect();
        let from_database: Vec<&[u8]> = keys
            .iter()
            .zip(&pending)
            .filter(|(_, p)| p.as_ref().is_none_or(|p| p.needs_database()))
            .map(|(key, _)| key.as_ref())
            .collect();
        let mut database = db.multi_get_cf_opt(cf, from_database, options).into_iter();
        let mut merge_operator = None;
        keys.iter()
            .zip(pending)
            .map(|(key, pending)| {
                let key = key.as_ref();
                let read = |database: &mut std::vec::IntoIter<Result<Option<Vec<u8>>>>| {
                    database.next().unwrap_or_else(|| {
                        Err(Error::Unavailable(
                            "multi_get answered fewer keys than it was asked".into(),
                        ))
                    })
                };
                match pending {
                    None => read(&mut database),
                    Some(p) => {
                        let stored = if p.needs_database() {
                            read(&mut database)?
                        } else {
                            None
                        };
                        if merge_operator.is_none() {
                            merge_operator = Some(db.merge_operator_of(cf)?);
                        }
                        let op = merge_operator.as_ref().and_then(|op| op.as_deref());
                        p.resolve(key, stored.as_deref(), op, cf.name())
                    }
                }
            })
            .collect()
    }
}

fn no_save_point() -> Error {
    Error::NotFound(
        "no save point is set (set_save_point was not called since the last rollback to one)"
            .into(),
    )
}

/// Folds one update into the index.
fn fold(
    index: &mut BTreeMap<u32, FamilyIndex>,
    cf: u32,
    kind: ValueKind,
    key: &[u8],
    value: &[u8],
) {
    let family = index.entry(cf).or_default();
    match family.get_mut(key) {
        Some(p) => {
            let before = std::mem::replace(p, Pending::Deleted);
            *p = folded(Some(before), kind, value);
        }
        None => {
            family.insert(key.to_vec(), folded(None, kind, value));
        }
    }
}

/// The net effect of `before` (what earlier updates of the key did) followed by one update.
fn folded(before: Option<Pending>, kind: ValueKind, value: &[u8]) -> Pending {
    match kind {
        ValueKind::Put => Pending::Value(value.to_vec()),
        ValueKind::Delete | ValueKind::SingleDelete => Pending::Deleted,
        ValueKind::Merge => {
            let (base, mut operands) = match before {
                None => (MergeBase::Database, Vec::new()),
                Some(Pending::Merges { base, operands }) => (base, operands),
                Some(Pending::Value(v)) => (MergeBase::Value(v), Vec::new()),
                Some(Pending::Deleted) => (MergeBase::Deleted, Vec::new()),
            };
            operands.push(value.to_vec());
            Pending::Merges { base, operands }
        }
        ValueKind::RangeDeletion => {
            unreachable!("range deletions are not recorded in an indexed batch")
        }
        ValueKind::BlobIndex => unreachable!("batches hold no blob references"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::StringAppend;

    /// Each case: the updates of one key, in order, and what a reader sees over a database
    /// holding `db` for it (string append with ',' resolves merges). Each runs on a batch
    /// without an index and on one with (other keys' updates pushing it past `INDEX_FROM`,
    /// before and after the key's own).
    #[test]
    fn the_index_folds_updates_like_the_database_would() {
        type Case = (
            &'static [(&'static str, &'static str)],
            Option<&'static str>,
            Option<&'static str>,
        );
        let cases: &[Case] = &[
            (&[("put", "a")], None, Some("a")),
            (&[("put", "a"), ("put", "b")], Some("x"), Some("b")),
            (&[("put", "a"), ("del", "")], Some("x"), None),
            (&[("del", ""), ("put", "c")], Some("x"), Some("c")),
            (&[("merge", "1")], Some("x"), Some("x,1")),
            (&[("merge", "1")], None, Some("1")),
            (&[("merge", "1"), ("merge", "2")], Some("x"), Some("x,1,2")),
            (&[("put", "a"), ("merge", "1")], Some("x"), Some("a,1")),
            (&[("del", ""), ("merge", "1")], Some("x"), Some("1")),
            (&[("merge", "1"), ("put", "p")], Some("x"), Some("p")),
            (&[("merge", "1"), ("del", "")], Some("x"), None),
            (
                &[("merge", "1"), ("del", ""), ("merge", "2")],
                Some("x"),
                Some("2"),
            ),
        ];
        let op = StringAppend::new(b",");
        let pad = |b: &mut IndexedBatch, n: usize| {
            for i in 0..n {
                b.put(format!("other{i}").as_bytes(), b"x");
            }
        };
        for (before, after) in [(0, 0), (INDEX_FROM, 0), (0, INDEX_FROM), (3, 3)] {
            for (updates, db, want) in cases {
                let mut b = IndexedBatch::new();
                pad(&mut b, before);
                for (kind, v) in updates.iter() {
                    match *kind {
                        "put" => b.put(b"k", v.as_bytes()),
                        "del" => b.delete(b"k"),
                        "merge" => b.merge(b"k", v.as_bytes()),
                        _ => unreachable!(),
                    }
                }
                pad(&mut b, after);
                assert_eq!(b.indexed, b.len() >= INDEX_FROM);
                let got = b
                    .pending(0, b"k")
                    .unwrap()
                    .resolve(b"k", db.map(str::as_bytes), Some(&op), "default")
                    .unwrap();
                assert_eq!(
                    got.as_deref(),
                    want.map(str::as_bytes),
                    "{updates:?} over {db:?}, {before} updates of other keys before, {after} after"
                );
                assert_eq!(b.pending(0, b"absent"), None);
            }
        }
    }

    #[test]
    fn rollback_to_a_save_point_undoes_later_updates_only() {
        let mut b = IndexedBatch::new();
        b.put(b"a", b"1");
        b.set_save_point();
        b.put(b"a", b"2");
        b.put(b"b", b"3");
        b.set_save_point();
        b.delete(b"a");
        b.rollback_to_save_point().unwrap();
        assert_eq!(
            b.pending(0, b"a").as_deref(),
            Some(&Pending::Value(b"2".to_vec()))
        );
        b.rollback_to_save_point().unwrap();
        assert_eq!(
            b.pending(0, b"a").as_deref(),
            Some(&Pending::Value(b"1".to_vec()))
        );
        assert_eq!(b.pending(0, b"b"), None);
        assert_eq!(b.len(), 1);
        let e = b.rollback_to_save_point().unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::NotFound);
    }

    #[test]
    fn a_rollback_below_the_index_threshold_drops_the_index() {
        let mut b = IndexedBatch::new();
        b.put(b"a", b"1");
        b.set_save_point();
        for i in 0..INDEX_FROM {
            b.put(b"a", format!("{i}").as_bytes());
        }
        assert!(b.indexed);
        b.rollback_to_save_point().unwrap();
        assert!(!b.indexed);
        assert_eq!(
            b.pending(0, b"a").as_deref(),
            Some(&Pending::Value(b"1".to_vec()))
        );
    }

    #[test]
    fn families_are_indexed_apart() {
        for pad in [0, INDEX_FROM] {
            families_are_indexed_apart_with(pad);
        }
    }

    /// With `pad` updates of family 2 first (enough to build the index, or none).
    fn families_are_indexed_apart_with(pad: usize) {
        let mut b = IndexedBatch::new();
        for i in 0..pad {
            b.record(2, ValueKind::Put, format!("{i}").as_bytes(), b"x");
        }
        b.put(b"k", b"default");
        b.record(3, ValueKind::Put, b"k", b"three");
        b.record(3, ValueKind::Put, b"j", b"j3");
        assert_eq!(
            b.pending(0, b"k").as_deref(),
            Some(&Pending::Value(b"default".to_vec()))
        );
        assert_eq!(
            b.pending(3, b"k").as_deref(),
            Some(&Pending::Value(b"three".to_vec()))
        );
        let bytewise = KeyOrder::Bytewise;
        let keys = |order: &KeyOrder| -> Vec<Vec<u8>> {
            b.entries_in(3, None, None, order)
                .into_iter()
                .map(|e| e.0)
                .collect()
        };
        assert_eq!(keys(&bytewise), vec![b"j".to_vec(), b"k".to_vec()]);
        assert_eq!(keys(&KeyOrder::Reverse), vec![b"k".to_vec(), b"j".to_vec()]);
        assert_eq!(b.entries_in(3, Some(b"k"), None, &bytewise).len(), 1);
        assert_eq!(b.entries_in(3, None, Some(b"k"), &bytewise).len(), 1);
        assert!(b.entries_in(1, None, None, &bytewise).is_empty());
        assert_eq!(b.entries_in(2, None, None, &bytewise).len(), pad);
    }
}
