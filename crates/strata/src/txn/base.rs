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

use crate::column_family::ColumnFamily;
use crate::error::Result;
use crate::options::ReadOptions;

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
    fn get_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>>;

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
    /// transaction (see [`TxnCursor`]). Bounds come from `options`.
    fn cursor_cf(
        &mut self,
        cf: &ColumnFamily,
        options: &ReadOptions,
    ) -> Result<TxnCursor<'_, Self>> {
        let iter = self.iter_cf(cf, options)?;
        Ok(TxnCursor::new(self, cf.clone(), iter))
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
    iter: TxnIterator,
}

impl<'t, T: TransactionBase> TxnCursor<'t, T> {
    pub(crate) fn new(txn: &'t mut T, cf: ColumnFamily, iter: TxnIterator) -> Self {
        TxnCursor { txn, cf, iter }
    }

    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        self.iter.valid()
    }

    /// The current key. Panics unless `valid()`.
    pub fn key(&self) -> &[u8] {
        self.iter.key()
    }

    /// The current value (empty after `delete`). Panics unless `valid()`.
    pub fn value(&self) -> &[u8] {
        self.iter.value()
    }

    /// The error that ended the iteration, if one did.
    pub fn status(&self) -> Result<()> {
        self.iter.status()
    }

    /// Positions at the first key at or after `target`.
    pub fn seek(&mut self, target: impl AsRef<[u8]>) {
        let target = target.as_ref();
        self.iter.seek(target)
    }

    /// Positions at the last key at or before `target`.
    pub fn seek_for_prev(&mut self, target: impl AsRef<[u8]>) {
        let target = target.as_ref();
        self.iter.seek_for_prev(target)
    }

    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        self.iter.seek_to_first()
    }

    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        self.iter.seek_to_last()
    }

    /// Moves to the next key. Panics unless `valid()`.
    pub fn next(&mut self) {
        self.iter.next()
    }

    /// Moves to the previous key. Panics unless `valid()`.
    pub fn prev(&mut self) {
        self.iter.prev()
    }

    /// Sets the current key to `value` through the transaction; the cursor shows it at once.
    /// Panics unless `valid()`.
    pub fn update(&mut self, value: impl AsRef<[u8]>) -> Result<()> {
        let value = value.as_ref();
        let key = self.iter.key().to_vec();
        self.txn.put_cf(&self.cf, &key, value)?;
        self.iter.patch_current(Pending::Value(value.to_vec()));
        Ok(())
    }

    /// Deletes the current key through the transaction. The cursor stays on it with an empty
    /// value. Panics unless `valid()`.
    pub fn delete(&mut self) -> Result<()> {
        let key = self.iter.key().to_vec();
        self.txn.delete_cf(&self.cf, &key)?;
        self.iter.patch_current(Pending::Deleted);
        Ok(())
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
