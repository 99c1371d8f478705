//! [`StrataStorage`]: the database, the transaction open on it (if any), and the reads and
//! writes every GlueSQL trait goes through.
//!
//! Every write happens inside a Strata optimistic transaction. GlueSQL opens one per statement
//! (`begin(autocommit = true)`) or one per `BEGIN ... COMMIT`; a write made outside either
//! (a caller using the storage traits directly) gets a transaction of its own, committed at
//! once. So a statement's rows and index entries reach the database in one atomic batch, or
//! not at all.
//!
//! Reads inside a transaction see its own writes over the snapshot taken when it began
//! (snapshot isolation, which is what GlueSQL's transaction tests ask of a storage: a single
//! session sees its writes, `ROLLBACK` drops them, `COMMIT` makes them durable). Reads outside
//! one see the latest committed state. The storage owns its database, so no other writer
//! can make a commit conflict.

use std::collections::HashMap;
use std::path::Path;

use gluesql_core::data::CustomFunction;
use self_cell::self_cell;
use strata::{
    Db, DbIterator, OptimisticTransaction, Options, ReadOptions, TransactionBase, TxnIterator,
    WriteOptions,
};

use crate::error::{corrupt, engine, refused, Result};
use crate::keys;

type Active<'db> = Option<OptimisticTransaction<'db>>;

self_cell!(
    /// The database and the transaction that borrows it.
    struct Cell {
        owner: Db,
        #[covariant]
        dependent: Active,
    }
);

/// A GlueSQL storage on a Strata database. Build one with [`StrataStorage::open`] and hand it
/// to `gluesql_core::prelude::Glue::new`.
pub struct StrataStorage {
    cell: Cell,
    /// True while the open transaction is one GlueSQL began for a single statement.
    pub(crate) autocommit: bool,
    pub(crate) write_options: WriteOptions,
    /// The custom functions, loaded at open and kept in step with the database: GlueSQL's
    /// `fetch_function` hands out references, so they live here.
    pub(crate) functions: HashMap<String, CustomFunction>,
}

impl std::fmt::Debug for StrataStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrataStorage")
            .field("in_transaction", &self.in_transaction())
            .field("autocommit", &self.autocommit)
            .finish_non_exhaustive()
    }
}

impl StrataStorage {
    /// Opens (creating it if missing) the database in directory `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<StrataStorage> {
        let mut options = Options::default();
        options.create_if_missing = true;
        StrataStorage::open_with(path, options)
    }

    /// Opens the database in `path` with the given engine options.
    pub fn open_with(path: impl AsRef<Path>, options: Options) -> Result<StrataStorage> {
        let db = Db::open(path.as_ref(), options).map_err(engine)?;
        StrataStorage::from_db(db)
    }

    /// Takes over an open database: an empty one gets the format marker, a non-empty one
    /// must carry this format's (a database that holds other data, or a newer format, is
    /// refused rather than misread).
    pub fn from_db(db: Db) -> Result<StrataStorage> {
        match db.get(keys::FORMAT_KEY).map_err(engine)? {
            Some(v) => {
                let version = <[u8; 4]>::try_from(v.as_slice())
                    .map(u32::from_be_bytes)
                    .map_err(|_| {
                        corrupt(format!("format marker of {} bytes, expected 4", v.len()))
                    })?;
                if version != keys::FORMAT_VERSION {
                    return Err(refused(format!(
                        "unknown storage format version {version} (this build reads version {})",
                        keys::FORMAT_VERSION
                    )));
                }
            }
            None => {
                let mut any = db.iter(&ReadOptions::default());
                any.seek_to_first();
                any.status().map_err(engine)?;
                if any.valid() {
                    return Err(refused(
                        "the database holds keys but no SQL format marker: it was not made by this storage",
                    ));
                }
                drop(any);
                db.put(keys::FORMAT_KEY, keys::FORMAT_VERSION.to_be_bytes())
                    .map_err(engine)?;
            }
        }
        let mut storage = StrataStorage {
            cell: Cell::new(db, |_| None),
            autocommit: false,
            write_options: WriteOptions::default(),
            functions: HashMap::new(),
        };
        storage.load_functions()?;
        Ok(storage)
    }

    /// Whether commits wait for the write-ahead log to reach the disk (off by default: a
    /// process crash loses nothing committed either way; a power cut may lose the last
    /// commits, never half of one).
    pub fn set_sync(&mut self, sync: bool) {
        self.write_options.sync = sync;
    }

    /// The database below.
    pub fn db(&self) -> &Db {
        self.cell.borrow_owner()
    }

    /// Drops any open transaction and closes the database.
    pub fn close(self) -> Result<()> {
        self.cell.into_owner().close().map_err(engine)
    }

    /// True while a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.cell.borrow_dependent().is_some()
    }

    /// Begins a transaction at the latest state.
    pub(crate) fn start(&mut self) {
        let write_options = self.write_options;
        self.cell.with_dependent_mut(|db, txn| {
            *txn = Some(db.optimistic_transaction(&write_options));
        });
    }

    /// Commits the open transaction, if any.
    pub(crate) fn commit_active(&mut self) -> Result<()> {
        self.autocommit = false;
        self.cell.with_dependent_mut(|_, txn| match txn.take() {
            Some(mut t) => t.commit().map_err(engine),
            None => Ok(()),
        })
    }

    /// Drops the open transaction's writes, if any.
    pub(crate) fn rollback_active(&mut self) -> Result<()> {
        self.autocommit = false;
        let had = self.cell.with_dependent_mut(|_, txn| match txn.take() {
            Some(mut t) => t.rollback().map(|()| true).map_err(engine),
            None => Ok(false),
        })?;
        if had {
            // The cache may hold functions the rolled-back transaction created or dropped.
            self.load_functions()?;
        }
        Ok(())
    }

    /// The value of `key`: the open transaction's view, or the latest committed one.
    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.cell
            .with_dependent(|db, txn| match txn {
                Some(t) => t.get(key),
                None => db.get(key),
            })
            .map_err(engine)
    }

    /// The values of `keys`, in their order, as [`StrataStorage::get`] sees each, read in
    /// one multi-key lookup.
    pub(crate) fn multi_get(&self, keys: &[&[u8]]) -> Vec<Result<Option<Vec<u8>>>> {
        let values = self.cell.with_dependent(|db, txn| match txn {
            Some(t) => t.multi_get(keys),
            None => db.multi_get(keys),
        });
        values
            .into_iter()
            .map(|value| value.map_err(engine))
            .collect()
    }

    /// The entries with keys in `[lower, upper)` (no upper bound: to the end), ascending or
    /// descending, as the open transaction (or the latest committed state) sees them.
    pub(crate) fn scan(
        &self,
        lower: Vec<u8>,
        upper: Option<Vec<u8>>,
        ascending: bool,
    ) -> Result<Scan> {
        let mut options = ReadOptions::default();
        options.lower_bound = Some(lower);
        options.upper_bound = upper;
        let mut cursor = self.cell.with_dependent(|db, txn| match txn {
            Some(t) => t.iter(&options).map(Cursor::Txn).map_err(engine),
            None => Ok(Cursor::Db(db.iter(&options))),
        })?;
        if ascending {
            cursor.seek_to_first();
        } else {
            cursor.seek_to_last();
        }
        Ok(Scan {
            cursor,
            ascending,
            done: false,
        })
    }

    /// The entries whose keys start with `prefix`, ascending.
    pub(crate) fn scan_prefix(&self, prefix: &[u8]) -> Result<Scan> {
        self.scan(prefix.to_vec(), keys::prefix_end(prefix), true)
    }

    /// Runs `f` on the open transaction, or on one of its own committed when `f` succeeds.
    pub(crate) fn write<T>(
        &mut self,
        f: impl FnOnce(&mut OptimisticTransaction<'_>) -> Result<T>,
    ) -> Result<T> {
        let own = !self.in_transaction();
        if own {
            self.start();
        }
        let result = self.cell.with_dependent_mut(|_, txn| match txn {
            Some(t) => f(t),
            None => Err(refused("no transaction is open")),
        });
        if own {
            match &result {
                Ok(_) => self.commit_active()?,
                Err(_) => self.rollback_active()?,
            }
        }
        result
    }
}

/// A cursor over the database or over a transaction's view of it. One lives per scan, so
/// the size difference between the variants costs nothing worth a box.
#[expect(clippy::large_enum_variant, reason = "one cursor per scan")]
enum Cursor {
    Db(DbIterator),
    Txn(TxnIterator),
}

impl Cursor {
    fn seek_to_first(&mut self) {
        match self {
            Cursor::Db(c) => c.seek_to_first(),
            Cursor::Txn(c) => c.seek_to_first(),
        }
    }

    fn seek_to_last(&mut self) {
        match self {
            Cursor::Db(c) => c.seek_to_last(),
            Cursor::Txn(c) => c.seek_to_last(),
        }
    }

    fn valid(&self) -> bool {
        match self {
            Cursor::Db(c) => c.valid(),
            Cursor::Txn(c) => c.valid(),
        }
    }

    /// The current entry, borrowed from the cursor until it moves.
    fn entry(&self) -> (&[u8], &[u8]) {
        match self {
            Cursor::Db(c) => (c.key(), c.value()),
            Cursor::Txn(c) => (c.key(), c.value()),
        }
    }

    fn step(&mut self, ascending: bool) {
        match (self, ascending) {
            (Cursor::Db(c), true) => c.next(),
            (Cursor::Db(c), false) => c.prev(),
            (Cursor::Txn(c), true) => c.next(),
            (Cursor::Txn(c), false) => c.prev(),
        }
    }

    fn status(&self) -> strata::Result<()> {
        match self {
            Cursor::Db(c) => c.status(),
            Cursor::Txn(c) => c.status(),
        }
    }
}

/// The entries of a range, as an iterator that owns its cursor (it reads the snapshot it
/// was made at, whatever is written meanwhile).
///
/// As an [`Iterator`] it hands out owned copies of each key and value; the scans that run
/// over many entries (a table scan, an index walk) use [`Scan::next_with`] instead, which
/// lends them, so that an entry costs no allocation of its own.
pub(crate) struct Scan {
    cursor: Cursor,
    ascending: bool,
    done: bool,
}

impl Scan {
    /// Calls `f` on the next entry's key and value, borrowed from the cursor, and moves on;
    /// `None` at the end of the range (or after an error, which is returned once).
    pub(crate) fn next_with<T>(&mut self, f: impl FnOnce(&[u8], &[u8]) -> T) -> Option<Result<T>> {
        if self.done {
            return None;
        }
        if !self.cursor.valid() {
            self.done = true;
            return match self.cursor.status() {
                Ok(()) => None,
                Err(e) => Some(Err(engine(e))),
            };
        }
        let (key, value) = self.cursor.entry();
        let out = f(key, value);
        self.cursor.step(self.ascending);
        Some(Ok(out))
    }
}

impl Iterator for Scan {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(|key, value| (key.to_vec(), value.to_vec()))
    }
}
