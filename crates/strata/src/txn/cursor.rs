//! Updatable cursors (TuplDB's cursor update): a transaction's cursor whose current entry can
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

use super::base::TransactionBase;
use super::indexed_batch::Pending;
use super::overlay::TxnIterator;

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
