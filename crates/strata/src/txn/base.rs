//! The interface both kinds of transaction share, as RocksDB's `TransactionBaseImpl`: reads
//! through the transaction's own writes, writes into its batch, save points, cursors, commit
//! and rollback. Each kind supplies the column family forms and what sets it apart (tracked
//! keys checked at commit, or key locks taken as it goes); the default family's forms, the
//! updatable cursor and `is_empty` come with the trait.
//!
//! [`TxnCursor`], the updatable cursor (TuplDB's cursor update): a transaction's cursor whose current entry can
//! be replaced or deleted in place, the change made through the transaction (its locks and
//! conflict tracking apply) and visible to the cursor at once.
//!
//! Invariants: the cursor's view is the transaction's writes made before it was created plus
//! those made through it; writes made through the transaction by other means while the
//! cursor lives are not possible (the cursor borrows the transaction mutably). After
//! `delete`, the cursor stays on the deleted key with an empty value; `next` and `prev`
//! move on from it as from any key, and a later seek does not find it.
//!
//! A cursor reads at one snapshot (the one its options give, else the transaction's, else
//! one taken when it is made). Its seek first reads the target as a point read at that
//! snapshot through the transaction's writes: when the target is there, the cursor stands
//! on it without positioning the merging iterator over the memtables and tables, which a
//! read-modify-write of one key (seek, value, update) never needs; the first move after it
//! positions the iterator (see `overlay.rs`). When the target is absent, the seek is an
//! ordinary one, after the point read. A cursor without bounds does not even make that
//! iterator until a call needs it (a move, a seek whose target is absent, a seek to the
//! first or last key): making one (a super version, a cursor per memtable, L0 table and
//! level, the transaction's writes copied in order) costs about what the point read does.
//! It is made at the cursor's snapshot from the transaction's batch, which then holds every
//! write made through the cursor, so it shows what the cursor showed.

use crate::column_family::ColumnFamily;
use crate::error::{Error, Result};
use crate::options::ReadOptions;
use crate::snapshot::Snapshot;

use super::indexed_batch::Pending;
use super::overlay::TxnIterator;

/// A transaction over a database: [`OptimisticTransaction`](super::OptimisticTransaction)
/// or [`Transaction`](super::Transaction). Bring it into scope (`use strata::TransactionBase`)
/// to call its methods; write code generic over it to serve either kind.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, TransactionBase, WriteOptions};
///
/// /// Moves `amount` from one account to another, in any kind of transaction.
/// fn transfer(txn: &mut impl TransactionBase, from: &[u8], to: &[u8], amount: u64) -> strata::Result<()> {
///     let balance = |v: Option<Vec<u8>>| v.map_or(0, |v| String::from_utf8_lossy(&v).parse().unwrap_or(0));
///     let a = balance(txn.get_for_update(from)?);
///     let b = balance(txn.get_for_update(to)?);
///     txn.put(from, (a - amount).to_string())?;
///     txn.put(to, (b + amount).to_string())?;
///     txn.commit()
/// }
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"alice", b"10")?;
/// transfer(&mut db.optimistic_transaction(&WriteOptions::default()), b"alice", b"bob", 3)?;
/// assert_eq!(db.get(b"bob")?.as_deref(), Some(&b"3"[..]));
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait TransactionBase: Sized {
    /// The handle of the default column family of the transaction's database.
    fn default_cf(&self) -> ColumnFamily;

    /// The value of `key` in family `cf`: the transaction's own write of it if it made one,
    /// else the database's at the transaction's snapshot (or the latest without one).
    fn get_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    /// [`TransactionBase::get_cf`] reading the database at `options.snapshot` when it has
    /// one (RocksDB's `Transaction::Get` with read options); without one, as `get_cf` reads.
    fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<Vec<u8>>>;

    /// The snapshot the transaction's reads see now: its own (taken when it began), else a
    /// new snapshot of the database's latest data. A cursor holds one, so that its reads
    /// stay at one point.
    fn read_snapshot(&self) -> Snapshot;

    /// [`TransactionBase::get_cf`], and the key is the transaction's to write: an optimistic
    /// transaction checks at commit that no one else wrote it since its snapshot; a
    /// pessimistic one locks it now.
    fn get_for_update_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>>;

    /// Sets `key` to `value` in family `cf`, written at commit.
    fn put_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()>;

    /// Removes `key` from family `cf` at commit.
    fn delete_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()>;

    /// Records merge `operand` for `key` in family `cf`, combined by the family's merge
    /// operator; refused when it has none.
    fn merge_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()>;

    /// A cursor over family `cf`: the transaction's writes (made before the cursor) over the
    /// database at the transaction's snapshot (`options.snapshot` if it has none), or the
    /// latest data. Bounds come from `options`.
    fn iter_cf(&self, cf: &ColumnFamily, options: &ReadOptions) -> Result<TxnIterator>;

    /// Refuses what [`TransactionBase::iter_cf`] refuses before it makes an iterator (an
    /// ended transaction, a dropped family): a cursor that makes its iterator later checks
    /// this when it is made, so that it fails where an iterator would.
    #[doc(hidden)]
    fn check_readable(&self, cf: &ColumnFamily) -> Result<()>;

    /// Marks the transaction's state; [`TransactionBase::rollback_to_save_point`] returns to
    /// it.
    fn set_save_point(&mut self) -> Result<()>;

    /// Undoes the writes since the last save point (and what they tracked or locked), and
    /// removes the save point. `NotFound` if there is none.
    fn rollback_to_save_point(&mut self) -> Result<()>;

    /// The number of writes the transaction holds.
    fn len(&self) -> usize;

    /// Writes the transaction's batch atomically; fails (writing nothing) on a conflict.
    fn commit(&mut self) -> Result<()>;

    /// Drops the transaction's writes (and releases what it holds). Allowed in any state: a
    /// second call does nothing.
    fn rollback(&mut self) -> Result<()>;

    /// True when the transaction holds no write.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`TransactionBase::get_cf`] in the default family.
    fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_cf(&self.default_cf(), key)
    }

    /// The values of `keys` in family `cf`, in their order, each as
    /// [`TransactionBase::get_cf`] answers it (RocksDB's `Transaction::MultiGet`). The
    /// transaction kinds read the keys their writes leave to the database in one
    /// [`Db::multi_get_cf_opt`](crate::Db::multi_get_cf_opt).
    fn multi_get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        keys.into_iter().map(|key| self.get_cf(cf, key)).collect()
    }

    /// [`TransactionBase::multi_get_cf`] in the default family.
    fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_cf(&self.default_cf(), keys)
    }

    /// [`TransactionBase::get_for_update_cf`] in the default family.
    fn get_for_update(&mut self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_for_update_cf(&self.default_cf(), key)
    }

    /// [`TransactionBase::put_cf`] in the default family.
    fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_cf(&self.default_cf(), key, value)
    }

    /// [`TransactionBase::delete_cf`] in the default family.
    fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_cf(&self.default_cf(), key)
    }

    /// [`TransactionBase::merge_cf`] in the default family.
    fn merge(&mut self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        self.merge_cf(&self.default_cf(), key, operand)
    }

    /// [`TransactionBase::iter_cf`] over the default family.
    fn iter(&self, options: &ReadOptions) -> Result<TxnIterator> {
        self.iter_cf(&self.default_cf(), options)
    }

    /// A cursor over family `cf` whose current entry can be updated or deleted through this
    /// transaction (see [`TxnCursor`]). Bounds come from `options`, and the snapshot when
    /// they hold one.
    fn cursor_cf(
        &mut self,
        cf: &ColumnFamily,
        options: &ReadOptions,
    ) -> Result<TxnCursor<'_, Self>> {
        self.check_readable(cf)?;
        let mut at = options.clone();
        if at.snapshot.is_none() {
            at.snapshot = Some(self.read_snapshot());
        }
        // Without bounds the iterator waits for the first call that needs one (see the
        // module's doc); with bounds it is made now, to say which seeks they allow.
        let iter = match at.lower_bound.is_some() || at.upper_bound.is_some() {
            true => Some(self.iter_cf(cf, &at)?),
            false => None,
        };
        // The point reads of exact seeks need only the snapshot and how to read blocks.
        let point = point_read(&at, None);
        Ok(TxnCursor::new(self, cf.clone(), iter, at, point))
    }
}

/// The read options of a transaction's point read asked for with `given`: its snapshot, or
/// else `own` (the transaction's), and its way of reading table blocks; bounds and prefix
/// options do not apply to a point read.
pub(crate) fn point_read(given: &ReadOptions, own: Option<Snapshot>) -> ReadOptions {
    ReadOptions {
        snapshot: given.snapshot.clone().or(own),
        fill_cache: given.fill_cache,
        verify_checksums: given.verify_checksums,
        ..ReadOptions::default()
    }
}

/// A cursor over a transaction's view of one column family whose current entry can be
/// updated or deleted, writing through transaction `T`. Made by
/// [`TransactionBase::cursor_cf`], of either kind of transaction.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, ReadOptions, TransactionBase, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// for (key, price) in [("apple", "3"), ("pear", "4"), ("plum", "5")] {
///     db.put(key, price)?;
/// }
/// let mut txn = db.optimistic_transaction(&WriteOptions::default());
/// let cf = db.default_cf();
/// let mut cursor = txn.cursor_cf(&cf, &ReadOptions::default())?;
/// cursor.seek(b"p");
/// while cursor.valid() && cursor.key().starts_with(b"p") {
///     let doubled = 2 * std::str::from_utf8(cursor.value())?.parse::<u32>()?;
///     cursor.update(doubled.to_string())?; // written through the transaction
///     cursor.next();
/// }
/// cursor.status()?;
/// drop(cursor);
/// txn.commit()?;
/// assert_eq!(db.get(b"pear")?.as_deref(), Some(&b"8"[..]));
/// assert_eq!(db.get(b"apple")?.as_deref(), Some(&b"3"[..]));
/// # drop(txn);
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TxnCursor<'t, T: TransactionBase> {
    txn: &'t mut T,
    cf: ColumnFamily,
    /// The merging iterator over the transaction's writes and the database, made by the
    /// first call that needs it; `None` before (see the module's doc).
    iter: Option<TxnIterator>,
    /// Before `iter` is made: the key a seek found by its point read, and its value in the
    /// cursor's view (as updated or deleted through the cursor since).
    placed: Option<(Vec<u8>, Vec<u8>)>,
    /// Why the iterator could not be made, for `status`; the cursor is then invalid.
    error: Option<Error>,
    /// What `iter` is made with: the bounds and the snapshot the cursor reads at.
    options: ReadOptions,
    /// The snapshot alone, for the point reads of seeks.
    point: ReadOptions,
}

impl<'t, T: TransactionBase> TxnCursor<'t, T> {
    pub(crate) fn new(
        txn: &'t mut T,
        cf: ColumnFamily,
        iter: Option<TxnIterator>,
        options: ReadOptions,
        point: ReadOptions,
    ) -> Self {
        TxnCursor {
            txn,
            cf,
            iter,
            placed: None,
            error: None,
            options,
            point,
        }
    }

    /// The iterator, made now if it was not yet, standing where a placed seek left the
    /// cursor; `None` when it cannot be made (the error is kept for `status`).
    fn iter(&mut self) -> Option<&mut TxnIterator> {
        if self.iter.is_none() && self.error.is_none() {
            match self.txn.iter_cf(&self.cf, &self.options) {
                Ok(mut iter) => {
                    // The transaction's writes through this cursor are in the batch the
                    // iterator was made from, so the placed value is the one it would show.
                    if let Some((key, value)) = self.placed.take() {
                        iter.place(&key, value);
                    }
                    self.iter = Some(iter);
                }
                Err(e) => {
                    self.placed = None;
                    self.error = Some(e);
                }
            }
        }
        self.iter.as_mut()
    }

    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        match &self.iter {
            Some(iter) => iter.valid(),
            None => self.error.is_none() && self.placed.is_some(),
        }
    }

    /// The current key. Panics unless `valid()`.
    pub fn key(&self) -> &[u8] {
        match (&self.iter, &self.placed) {
            (Some(iter), _) => iter.key(),
            (None, Some((key, _))) => key,
            (None, None) => panic!("TxnCursor::key on a cursor that is not on an entry"),
        }
    }

    /// The current value (empty after `delete`). Panics unless `valid()`.
    pub fn value(&self) -> &[u8] {
        match (&self.iter, &self.placed) {
            (Some(iter), _) => iter.value(),
            (None, Some((_, value))) => value,
            (None, None) => panic!("TxnCursor::value on a cursor that is not on an entry"),
        }
    }

    /// The error that ended the iteration, if one did.
    pub fn status(&self) -> Result<()> {
        match (&self.error, &self.iter) {
            (Some(e), _) => Err(e.duplicate()),
            (None, Some(iter)) => iter.status(),
            (None, None) => Ok(()),
        }
    }

    /// Positions at the first key at or after `target`. A target that exists is found by a
    /// point read (see the module's doc), at the cursor's snapshot.
    pub fn seek(&mut self, target: impl AsRef<[u8]>) {
        let target = target.as_ref();
        // A cursor whose iterator could not be made stays invalid, its error in `status`.
        if self.error.is_some() {
            return;
        }
        // A cursor without its iterator has no bounds (see `cursor_cf`).
        if self
            .iter
            .as_ref()
            .is_none_or(|iter| iter.within_bounds(target))
        {
            // An error of the point read leaves it to the ordinary seek to meet and report.
            if let Ok(Some(value)) = self.txn.get_cf_opt(&self.cf, target, &self.point) {
                match &mut self.iter {
                    Some(iter) => iter.place(target, value),
                    None => self.placed = Some((target.to_vec(), value)),
                }
                return;
            }
        }
        self.placed = None;
        if let Some(iter) = self.iter() {
            iter.seek(target)
        }
    }

    /// Positions at the last key at or before `target`.
    pub fn seek_for_prev(&mut self, target: impl AsRef<[u8]>) {
        self.placed = None;
        if let Some(iter) = self.iter() {
            iter.seek_for_prev(target.as_ref())
        }
    }

    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        self.placed = None;
        if let Some(iter) = self.iter() {
            iter.seek_to_first()
        }
    }

    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        self.placed = None;
        if let Some(iter) = self.iter() {
            iter.seek_to_last()
        }
    }

    /// Moves to the next key. Panics unless `valid()`.
    pub fn next(&mut self) {
        if let Some(iter) = self.iter() {
            iter.next()
        }
    }

    /// Moves to the previous key. Panics unless `valid()`.
    pub fn prev(&mut self) {
        if let Some(iter) = self.iter() {
            iter.prev()
        }
    }

    /// Sets the current key to `value` through the transaction; the cursor shows it at once.
    /// Panics unless `valid()`.
    pub fn update(&mut self, value: impl AsRef<[u8]>) -> Result<()> {
        let value = value.as_ref();
        let key = self.key().to_vec();
        self.txn.put_cf(&self.cf, &key, value)?;
        self.show(Pending::Value(value.to_vec()));
        Ok(())
    }

    /// Deletes the current key through the transaction. The cursor stays on it with an empty
    /// value. Panics unless `valid()`.
    pub fn delete(&mut self) -> Result<()> {
        let key = self.key().to_vec();
        self.txn.delete_cf(&self.cf, &key)?;
        self.show(Pending::Deleted);
        Ok(())
    }

    /// Shows `pending`, just written through the transaction, as the current entry's value.
    fn show(&mut self, pending: Pending) {
        match (&mut self.iter, &mut self.placed) {
            (Some(iter), _) => iter.patch_current(pending),
            (None, Some((_, value))) => {
                *value = match pending {
                    Pending::Value(v) => v,
                    Pending::Deleted | Pending::Merges { .. } => Vec::new(),
                }
            }
            (None, None) => unreachable!("checked valid by key()"),
        }
    }
}

/// [`TxnCursor`]'s calls without its type parameter, for code that holds a cursor of either
/// kind of transaction behind one handle (the C, Python and Java bindings): the cursor is
/// generic over its transaction, and a handle chosen at run time needs an object-safe view.
pub trait UpdatableCursor {
    /// See [`TxnCursor::valid`].
    fn valid(&self) -> bool;
    /// See [`TxnCursor::key`].
    fn key(&self) -> &[u8];
    /// See [`TxnCursor::value`].
    fn value(&self) -> &[u8];
    /// See [`TxnCursor::status`].
    fn status(&self) -> Result<()>;
    /// See [`TxnCursor::seek`].
    fn seek(&mut self, target: &[u8]);
    /// See [`TxnCursor::seek_for_prev`].
    fn seek_for_prev(&mut self, target: &[u8]);
    /// See [`TxnCursor::seek_to_first`].
    fn seek_to_first(&mut self);
    /// See [`TxnCursor::seek_to_last`].
    fn seek_to_last(&mut self);
    /// See [`TxnCursor::next`].
    fn next(&mut self);
    /// See [`TxnCursor::prev`].
    fn prev(&mut self);
    /// See [`TxnCursor::update`].
    fn update(&mut self, value: &[u8]) -> Result<()>;
    /// See [`TxnCursor::delete`].
    fn delete(&mut self) -> Result<()>;
}

impl<T: TransactionBase> UpdatableCursor for TxnCursor<'_, T> {
    fn valid(&self) -> bool {
        TxnCursor::valid(self)
    }
    fn key(&self) -> &[u8] {
        TxnCursor::key(self)
    }
    fn value(&self) -> &[u8] {
        TxnCursor::value(self)
    }
    fn status(&self) -> Result<()> {
        TxnCursor::status(self)
    }
    fn seek(&mut self, target: &[u8]) {
        TxnCursor::seek(self, target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        TxnCursor::seek_for_prev(self, target)
    }
    fn seek_to_first(&mut self) {
        TxnCursor::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        TxnCursor::seek_to_last(self)
    }
    fn next(&mut self) {
        TxnCursor::next(self)
    }
    fn prev(&mut self) {
        TxnCursor::prev(self)
    }
    fn update(&mut self, value: &[u8]) -> Result<()> {
        TxnCursor::update(self, value)
    }
    fn delete(&mut self) -> Result<()> {
        TxnCursor::delete(self)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::ops::Bound;

    use super::*;
    use crate::{Db, Options, TransactionDb, TransactionOptions, WriteOptions};

    /// A small deterministic generator (xorshift), for reproducible walks.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn key(rng: &mut Rng) -> Vec<u8> {
        format!("k{:02}", rng.below(40)).into_bytes()
    }

    /// Fills `db` with keys in a table, in the memtable and deleted across both.
    fn fill(db: &Db, rng: &mut Rng) {
        for round in 0..2 {
            for _ in 0..25 {
                let k = key(rng);
                if rng.below(5) == 0 {
                    db.delete(&k).unwrap();
                } else {
                    db.put(&k, format!("db{round}-{}", rng.below(100))).unwrap();
                }
            }
            if round == 0 {
                db.flush().unwrap();
            }
        }
    }

    /// What a cursor shows, kept on a map of its view: the current key (`None` off an
    /// entry) and its value (empty after a delete).
    struct Model {
        view: BTreeMap<Vec<u8>, Vec<u8>>,
        at: Option<(Vec<u8>, Vec<u8>)>,
    }

    impl Model {
        fn stand(&mut self, key: Option<Vec<u8>>) {
            self.at = key.map(|k| {
                let v = self.view[&k].clone();
                (k, v)
            });
        }
    }

    /// Random seeks (mostly to keys that exist: the point-read path), moves, updates and
    /// deletes on a cursor and on its model, compared after each step; then the
    /// transaction reads back what the cursor wrote. Writes made by others after the cursor
    /// was made must stay out of its view.
    fn walk<T: TransactionBase>(txn: &mut T, db: &Db, rng: &mut Rng, seed: u64) {
        for _ in 0..8 {
            let k = key(rng);
            if rng.below(4) == 0 {
                txn.delete(&k).unwrap();
            } else {
                txn.put(&k, format!("txn-{}", rng.below(100))).unwrap();
            }
        }
        let mut options = ReadOptions::default();
        if rng.below(2) == 0 {
            options.lower_bound = Some(key(rng));
        }
        if rng.below(2) == 0 {
            options.upper_bound = Some(key(rng));
        }
        let mut view = BTreeMap::new();
        for n in 0..40 {
            let k = format!("k{n:02}").into_bytes();
            let within = options.lower_bound.as_ref().is_none_or(|l| k >= *l)
                && options.upper_bound.as_ref().is_none_or(|u| k < *u);
            if let (true, Some(v)) = (within, txn.get(&k).unwrap()) {
                view.insert(k, v);
            }
        }
        let mut model = Model { view, at: None };
        let mut written = BTreeMap::new();
        {
            let mut cursor = txn.cursor_cf(&db.default_cf(), &options).unwrap();
            for step in 0..300 {
                let ctx = format!("seed {seed} step {step}");
                match rng.below(10) {
                    0..=3 => {
                        let target = key(rng);
                        cursor.seek(&target);
                        let found = model.view.range(target..).next().map(|(k, _)| k.clone());
                        model.stand(found);
                    }
                    4 => {
                        let target = key(rng);
                        cursor.seek_for_prev(&target);
                        let found = model
                            .view
                            .range(..=target)
                            .next_back()
                            .map(|(k, _)| k.clone());
                        model.stand(found);
                    }
                    5 if model.at.is_some() => {
                        let current = model.at.as_ref().unwrap().0.clone();
                        cursor.next();
                        let after = (Bound::Excluded(current), Bound::Unbounded);
                        let found = model.view.range(after).next().map(|(k, _)| k.clone());
                        model.stand(found);
                    }
                    6 if model.at.is_some() => {
                        let current = model.at.as_ref().unwrap().0.clone();
                        cursor.prev();
                        let found = model
                            .view
                            .range(..current)
                            .next_back()
                            .map(|(k, _)| k.clone());
                        model.stand(found);
                    }
                    7 | 8 if model.at.is_some() => {
                        let v = format!("cursor{step}").into_bytes();
                        cursor.update(&v).unwrap();
                        let (k, value) = model.at.as_mut().unwrap();
                        *value = v.clone();
                        model.view.insert(k.clone(), v.clone());
                        written.insert(k.clone(), Some(v));
                    }
                    9 if model.at.is_some() => {
                        cursor.delete().unwrap();
                        let (k, value) = model.at.as_mut().unwrap();
                        value.clear();
                        model.view.remove(k);
                        written.insert(k.clone(), None);
                    }
                    _ => {
                        // Someone else writes: the cursor reads at its snapshot.
                        db.put(key(rng), format!("other{step}")).unwrap();
                    }
                }
                match &model.at {
                    Some((k, v)) => {
                        assert!(cursor.valid(), "{ctx}: on {k:?}");
                        assert_eq!(cursor.key(), k.as_slice(), "{ctx}: key");
                        assert_eq!(cursor.value(), v.as_slice(), "{ctx}: value");
                    }
                    None => assert!(!cursor.valid(), "{ctx}: off an entry"),
                }
                cursor.status().unwrap();
            }
        }
        for (k, v) in written {
            assert_eq!(
                txn.get(&k).unwrap(),
                v,
                "seed {seed}: written through the cursor"
            );
        }
    }

    /// The cursor's exact-key seek (a point read) and the moves after it agree with a
    /// model of the cursor's view, on either kind of transaction.
    #[test]
    fn cursor_seeks_and_moves_match_a_model() {
        for seed in 1..=12u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let dir = tempfile::tempdir().unwrap();
            let options = Options {
                create_if_missing: true,
                ..Options::default()
            };
            if seed % 2 == 0 {
                let db = Db::open(dir.path(), options).unwrap();
                fill(&db, &mut rng);
                let mut txn = db.optimistic_transaction(&WriteOptions::default());
                walk(&mut txn, &db, &mut rng, seed);
            } else {
                let tdb = TransactionDb::open(dir.path(), options).unwrap();
                fill(tdb.db(), &mut rng);
                let mut txn =
                    tdb.transaction(&WriteOptions::default(), &TransactionOptions::default());
                walk(&mut txn, tdb.db(), &mut rng, seed);
            }
        }
    }
}
