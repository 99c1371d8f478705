//! Pessimistic transactions (RocksDB's TransactionDB): every key a transaction writes or
//! reads for update is locked first, so its commit cannot conflict.
//!
//! Invariants:
//! - A transaction holds the lock of every key in its batch and every key it read with
//!   `get_for_update`, from the call that touched the key until it ends (commit, rollback,
//!   or drop). Writes through the [`TransactionDb`] (not the inner [`Db`]) take the same
//!   locks, so no write of a locked key lands while the lock is held.
//! - Without a snapshot a transaction reads the latest committed data; a key it locked
//!   cannot change under it afterwards. With `set_snapshot`, it reads at the snapshot taken
//!   when it began, and locking a key written after that snapshot fails with `Busy` (the
//!   transaction would otherwise overwrite a write it never saw).
//! - A transaction whose `expiration` has passed can lose its locks to waiters; its commit
//!   then fails and writes nothing.
//! - Locks of a transaction are released after its batch is written, never before.
//! - Two-phase commit: a named transaction's `prepare` makes its batch durable (see
//!   `db/two_phase.rs`) and keeps its locks; only `commit` or `rollback` may follow. A
//!   prepared transaction dropped without either, or found at open after a crash, is kept
//!   by the `TransactionDb` with its keys locked, and `prepared_transactions` hands it out
//!   again. Names are unique among the transactions of a `TransactionDb`.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::column_family::ColumnFamily;
use crate::db::Db;
use crate::error::{Error, Result, TxnFailure};
use crate::options::{CfOptions, Options, ReadOptions, WriteOptions};
use crate::snapshot::Snapshot;
use crate::write_batch::WriteBatch;

use super::base::{point_read, TransactionBase};
use super::checks::{check_active, check_family, check_merge, State};
use super::indexed_batch::IndexedBatch;
use super::lock_table::{LockKey, LockTable, Locker, TxnId};
use super::overlay::TxnIterator;

/// How a pessimistic transaction locks.
///
/// Built like [`Options`](crate::Options): from `TransactionOptions::default()`, then field
/// by field.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use strata::TransactionBase;
/// use strata::{Options, TransactionDb, TransactionOptions, TxnFailure, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let tdb = TransactionDb::open(dir.path(), options)?;
/// let mut quick = TransactionOptions::default();
/// quick.lock_timeout = Duration::from_millis(10);
/// let mut first = tdb.transaction(&WriteOptions::default(), &quick);
/// first.put(b"seat-12A", b"alice")?; // locks the key
/// let mut second = tdb.transaction(&WriteOptions::default(), &quick);
/// let refused = second.put(b"seat-12A", b"bob").unwrap_err();
/// assert_eq!(refused.txn_failure(), Some(TxnFailure::LockTimeout));
/// first.commit()?;
/// # drop((first, second));
/// # tdb.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TransactionOptions {
    /// How long a lock request waits for another transaction's lock before failing with
    /// `Busy` (RocksDB's `lock_timeout`, 1 s by default).
    pub lock_timeout: Duration,
    /// Refuse a lock wait that would close a cycle of waiting transactions, at once, rather
    /// than let the cycle sit until a timeout (RocksDB's `deadlock_detect`; on by default
    /// here).
    pub deadlock_detect: bool,
    /// After this long, the transaction's locks may be taken by others and its commit fails
    /// (RocksDB's `expiration`; `None`: never).
    pub expiration: Option<Duration>,
    /// Read at a snapshot taken when the transaction begins, and refuse to lock a key
    /// written after it (RocksDB's `set_snapshot`).
    pub set_snapshot: bool,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        TransactionOptions {
            lock_timeout: Duration::from_secs(1),
            deadlock_detect: true,
            expiration: None,
            set_snapshot: false,
        }
    }
}

/// A database whose writes go through key locks: pessimistic transactions, and plain
/// writes that wait for them.
///
/// # Examples
///
/// ```
/// use strata::TransactionBase;
/// use strata::{Options, TransactionDb, TransactionOptions, WriteOptions};
///
/// fn amount(value: Option<Vec<u8>>) -> u64 {
///     value.map_or(0, |v| u64::from_le_bytes(v.try_into().expect("8 bytes")))
/// }
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let tdb = TransactionDb::open(dir.path(), options)?;
/// tdb.put(b"alice", 100u64.to_le_bytes())?;
///
/// // Move 30 from alice to bob: both keys locked until commit, so no update is lost.
/// let mut txn = tdb.transaction(&WriteOptions::default(), &TransactionOptions::default());
/// let alice = amount(txn.get_for_update(b"alice")?);
/// let bob = amount(txn.get_for_update(b"bob")?);
/// txn.put(b"alice", (alice - 30).to_le_bytes())?;
/// txn.put(b"bob", (bob + 30).to_le_bytes())?;
/// txn.commit()?;
///
/// assert_eq!(amount(tdb.db().get(b"alice")?), 70);
/// assert_eq!(amount(tdb.db().get(b"bob")?), 30);
/// # drop(txn);
/// tdb.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TransactionDb {
    db: Db,
    locks: LockTable,
    next_id: AtomicU64,
    /// The names of named transactions that have not ended.
    names: Mutex<HashSet<Vec<u8>>>,
    /// Prepared transactions no handle holds (dropped, or found at open), with their locks.
    parked: Mutex<Vec<Parked>>,
}

/// A prepared transaction kept by the database while no handle holds it.
struct Parked {
    id: TxnId,
    name: Vec<u8>,
    batch: IndexedBatch,
    locked: Vec<LockKey>,
    write_options: WriteOptions,
}

impl TransactionDb {
    /// Wraps an open database. Writes made through `db()` directly do not take locks.
    ///
    /// Prepared transactions the database recovered are taken over with their keys locked
    /// (see [`TransactionDb::prepared_transactions`]).
    pub fn new(db: Db) -> Result<TransactionDb> {
        let tdb = TransactionDb {
            db,
            locks: LockTable::default(),
            next_id: AtomicU64::new(1),
            names: Mutex::new(HashSet::new()),
            parked: Mutex::new(Vec::new()),
        };
        for (name, batch) in tdb.db.take_prepared() {
            let id = tdb.next_id.fetch_add(1, Ordering::Relaxed);
            let batch = IndexedBatch::from_write_batch(batch)?;
            let mut locked: Vec<LockKey> = Vec::new();
            let expired = Arc::new(AtomicBool::new(false));
            let locker = Locker {
                id,
                timeout: Duration::ZERO,
                deadlock_detect: false,
                expires: None,
                expired: &expired,
            };
            for entry in batch.write_batch().iter().flatten() {
                let key = (entry.cf, entry.key.to_vec());
                if !locked.contains(&key) {
                    // Nothing else holds a lock yet: this cannot wait.
                    tdb.locks
                        .lock(&locker, &key, &|| "a recovered key".into())?;
                    locked.push(key);
                }
            }
            tdb.names.lock().insert(name.clone());
            tdb.parked.lock().push(Parked {
                id,
                name,
                batch,
                locked,
                write_options: WriteOptions::default(),
            });
        }
        Ok(tdb)
    }

    /// The prepared transactions no handle holds: those recovered at open and those dropped
    /// after `prepare`. Each is handed out once; commit or roll it back (dropping it again
    /// parks it again).
    pub fn prepared_transactions(&self) -> Vec<Transaction<'_>> {
        std::mem::take(&mut *self.parked.lock())
            .into_iter()
            .map(|p| {
                let locked_set = p.locked.iter().cloned().collect();
                Transaction {
                    tdb: self,
                    id: p.id,
                    options: TransactionOptions::default(),
                    write_options: p.write_options,
                    snapshot: None,
                    expires: None,
                    expired: Arc::new(AtomicBool::new(false)),
                    batch: p.batch,
                    locked: p.locked,
                    locked_set,
                    save_points: Vec::new(),
                    name: Some(p.name),
                    state: State::Prepared,
                }
            })
            .collect()
    }

    /// Opens (or creates, per `options`) the database at `path`.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<TransactionDb> {
        TransactionDb::new(Db::open(path, options)?)
    }

    /// Opens the database at `path` with its column families, as [`Db::open_cf`].
    pub fn open_cf<N: AsRef<str>>(
        path: impl AsRef<Path>,
        options: Options,
        families: impl IntoIterator<Item = (N, CfOptions)>,
    ) -> Result<TransactionDb> {
        TransactionDb::new(Db::open_cf(path, options, families)?)
    }

    /// The database, for reads, families and maintenance. Its write methods bypass the
    /// locks: write through the `TransactionDb` instead.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Begins a transaction committed with `write_options`.
    pub fn transaction(
        &self,
        write_options: &WriteOptions,
        options: &TransactionOptions,
    ) -> Transaction<'_> {
        let now = Instant::now();
        Transaction {
            tdb: self,
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            options: options.clone(),
            write_options: *write_options,
            snapshot: options.set_snapshot.then(|| self.db.snapshot()),
            expires: options.expiration.map(|e| now + e),
            expired: Arc::new(AtomicBool::new(false)),
            batch: IndexedBatch::new(),
            locked: Vec::new(),
            locked_set: HashSet::new(),
            save_points: Vec::new(),
            name: None,
            state: State::Active,
        }
    }

    /// Writes `batch` atomically once it holds the lock of every key the batch writes
    /// (waiting as a transaction with default options would). Range deletions cannot be
    /// locked and are refused.
    pub fn write(&self, batch: WriteBatch, write_options: &WriteOptions) -> Result<()> {
        let mut t = self.transaction(write_options, &TransactionOptions::default());
        let mut keys = Vec::new();
        for entry in batch.iter() {
            let e = entry.map_err(|reason| Error::InvalidArgument(reason.to_string()))?;
            if e.kind == crate::key::ValueKind::RangeDeletion {
                return Err(Error::InvalidArgument(
                    "a range deletion cannot be written through a TransactionDb: its keys \
                     cannot be locked (write it through db() if no transaction can hold \
                     keys of the range)"
                        .into(),
                ));
            }
            keys.push((e.cf, e.key.to_vec()));
        }
        for key in keys {
            t.lock_key(key, None)?;
        }
        let result = self.db.write(batch, write_options);
        t.rollback()?;
        result
    }

    /// Sets `key` to `value` in the default family, under its lock.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        let mut batch = WriteBatch::new();
        batch.put(key, value);
        self.write(batch, &WriteOptions::default())
    }

    /// Deletes `key` in the default family, under its lock.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        let mut batch = WriteBatch::new();
        batch.delete(key);
        self.write(batch, &WriteOptions::default())
    }

    /// Closes the database, reporting what [`Db::close`] reports. Prepared transactions no
    /// handle committed or rolled back stay prepared on disk, offered again at the next open.
    pub fn close(self) -> Result<()> {
        self.db.close()
    }

    /// The database without its locks (no transaction can be running: they borrow the
    /// `TransactionDb`). Prepared transactions it held stay prepared on disk.
    pub fn into_db(self) -> Db {
        self.db
    }

    /// The number of keys locked by running transactions.
    pub fn locked_keys(&self) -> usize {
        self.locks.locked_keys()
    }
}

/// A pessimistic transaction. Begin one with [`TransactionDb::transaction`]. Dropping it
/// rolls it back.
///
/// # Examples
///
/// ```
/// use strata::TransactionBase;
/// use strata::{Options, TransactionDb, TransactionOptions, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let tdb = TransactionDb::open(dir.path(), options)?;
/// let mut txn = tdb.transaction(&WriteOptions::default(), &TransactionOptions::default());
/// txn.put(b"order/1", b"placed")?;
/// txn.set_save_point()?;
/// txn.put(b"order/1/gift-wrap", b"yes")?;
/// txn.rollback_to_save_point()?; // undoes the writes since the save point
/// assert_eq!(txn.get(b"order/1")?.as_deref(), Some(&b"placed"[..])); // its own writes
/// assert_eq!(tdb.db().get(b"order/1")?, None); // not visible before commit
/// txn.commit()?;
/// assert_eq!(tdb.db().get(b"order/1/gift-wrap")?, None);
/// assert!(tdb.db().get(b"order/1")?.is_some());
/// # drop(txn);
/// # tdb.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Transaction<'db> {
    tdb: &'db TransactionDb,
    id: TxnId,
    options: TransactionOptions,
    write_options: WriteOptions,
    snapshot: Option<Snapshot>,
    expires: Option<Instant>,
    /// Set when a waiter took this transaction's locks after its expiration.
    expired: Arc<AtomicBool>,
    batch: IndexedBatch,
    /// The keys locked, in the order they were locked.
    locked: Vec<LockKey>,
    locked_set: HashSet<LockKey>,
    /// Per save point: how many keys were locked when it was set.
    save_points: Vec<usize>,
    /// The name for two-phase commit, once set.
    name: Option<Vec<u8>>,
    state: State,
}

impl<'db> Transaction<'db> {
    fn db(&self) -> &Db {
        &self.tdb.db
    }

    fn check_active(&self) -> Result<()> {
        check_active(self.state)
    }

    /// Locks `key` (family id and user key); with a snapshot, refuses a key written after it.
    /// `cf` names the family in errors (`None`: by id).
    fn lock_key(&mut self, key: LockKey, cf: Option<&ColumnFamily>) -> Result<()> {
        if self.locked_set.contains(&key) {
            return Ok(());
        }
        let describe = || match cf {
            Some(cf) => format!(
                "key '{}' of column family '{}'",
                crate::util::printable(&key.1),
                cf.name()
            ),
            None => format!(
                "key '{}' of column family id {}",
                crate::util::printable(&key.1),
                key.0
            ),
        };
        let locker = Locker {
            id: self.id,
            timeout: self.options.lock_timeout,
            deadlock_detect: self.options.deadlock_detect,
            expires: self.expires,
            expired: &self.expired,
        };
        self.tdb.locks.lock(&locker, &key, &describe)?;
        if let (Some(snapshot), Some(cf)) = (&self.snapshot, cf) {
            if let Some((seq, _)) = self.tdb.db.write_after(cf, &key.1, snapshot.sequence())? {
                self.tdb.locks.unlock(self.id, std::slice::from_ref(&key));
                return Err(Error::txn(
                    TxnFailure::Conflict,
                    format!(
                        "{} was written at sequence {seq}, after the transaction's snapshot \
                         at {}: locking it would overwrite a write the transaction never saw",
                        describe(),
                        snapshot.sequence()
                    ),
                ));
            }
        }
        self.locked_set.insert(key.clone());
        self.locked.push(key);
        Ok(())
    }

    fn lock(&mut self, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
        self.check_active()?;
        check_family(cf)?;
        self.lock_key((cf.id(), key.to_vec()), Some(cf))
    }

    fn read_options(&self) -> ReadOptions {
        ReadOptions {
            snapshot: self.snapshot.clone(),
            ..ReadOptions::default()
        }
    }

    /// Names the transaction, for two-phase commit. The name must be unique among the
    /// transactions of the database that have not ended (prepared ones included).
    pub fn set_name(&mut self, name: &str) -> Result<()> {
        self.check_active()?;
        if self.name.is_some() {
            return Err(Error::InvalidArgument(
                "the transaction already has a name".into(),
            ));
        }
        if name.is_empty() || name.len() > 512 {
            return Err(Error::InvalidArgument(format!(
                "transaction name of {} bytes refused: a name has 1 to 512 bytes",
                name.len()
            )));
        }
        if !self.tdb.names.lock().insert(name.as_bytes().to_vec()) {
            return Err(Error::InvalidArgument(format!(
                "a transaction named '{name}' exists already (running or prepared)"
            )));
        }
        self.name = Some(name.as_bytes().to_vec());
        Ok(())
    }

    /// The transaction's name, if set.
    pub fn name(&self) -> Option<&[u8]> {
        self.name.as_deref()
    }

    /// The first phase of two-phase commit: makes the transaction's writes durable without
    /// applying them, keeping its locks. After a crash, the database offers it again
    /// ([`TransactionDb::prepared_transactions`]). Only `commit` or `rollback` may follow.
    pub fn prepare(&mut self) -> Result<()> {
        self.check_active()?;
        let Some(name) = self.name.clone() else {
            return Err(Error::InvalidArgument(
                "prepare needs a named transaction: call set_name first".into(),
            ));
        };
        if self.expired.load(Ordering::Acquire) {
            return Err(self.expired_error());
        }
        self.tdb
            .db
            .persist_prepared(&name, self.batch.write_batch())?;
        self.state = State::Prepared;
        Ok(())
    }

    fn expired_error(&self) -> Error {
        Error::txn(
            TxnFailure::Expired,
            format!(
                "the transaction expired (expiration {} ms) and other transactions took its \
             locks: nothing was written",
                self.options.expiration.unwrap_or_default().as_millis()
            ),
        )
    }

    fn release(&mut self) {
        self.tdb.locks.unlock(self.id, &self.locked);
        self.locked.clear();
        self.locked_set.clear();
        self.save_points.clear();
        if let Some(name) = self.name.take() {
            self.tdb.names.lock().remove(&name);
        }
    }
}

impl TransactionBase for Transaction<'_> {
    fn default_cf(&self) -> ColumnFamily {
        self.db().default_cf()
    }

    /// The value of `key` in family `cf`, as [`Transaction::get`].
    fn multi_get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        keys: impl IntoIterator<Item = K>,
    ) -> Vec<Result<Option<Vec<u8>>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        if let Err(e) = self.check_active().and_then(|()| check_family(cf)) {
            return keys.iter().map(|_| Err(e.duplicate())).collect();
        }
        self.batch
            .multi_get_from_batch_and_db(self.db(), cf, &keys, &self.read_options())
    }

    fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        options: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.check_active()?;
        check_family(cf)?;
        let read = point_read(options, self.snapshot.clone());
        self.batch.get_from_batch_and_db(self.db(), cf, key, &read)
    }

    fn read_snapshot(&self) -> Snapshot {
        self.snapshot
            .clone()
            .unwrap_or_else(|| self.db().snapshot())
    }

    /// Locks `key` of family `cf`, then reads it.
    fn get_for_update_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        self.lock(cf, key)?;
        // Locked: the latest value is the one no one else can change now.
        self.batch
            .get_from_batch_and_db(self.db(), cf, key, &ReadOptions::default())
    }

    /// Locks `key` and sets it to `value` in family `cf` at commit.
    fn put_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        let key = key.as_ref();
        let value = value.as_ref();
        self.lock(cf, key)?;
        self.batch.put_cf(cf, key, value);
        Ok(())
    }

    /// Locks `key` and deletes it in family `cf` at commit.
    fn delete_cf(&mut self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        self.lock(cf, key)?;
        self.batch.delete_cf(cf, key);
        Ok(())
    }

    /// Locks `key` and merges `operand` into it in family `cf` at commit. The family must
    /// have a merge operator.
    fn merge_cf(
        &mut self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()> {
        let key = key.as_ref();
        let operand = operand.as_ref();
        self.check_active()?;
        check_merge(self.db(), cf, key)?;
        self.lock(cf, key)?;
        self.batch.merge_cf(cf, key, operand);
        Ok(())
    }

    fn check_readable(&self, cf: &ColumnFamily) -> Result<()> {
        self.check_active()?;
        check_family(cf)
    }

    /// A cursor over family `cf`, as [`Transaction::iter`].
    fn iter_cf(&self, cf: &ColumnFamily, options: &ReadOptions) -> Result<TxnIterator> {
        let mut options = options.clone();
        self.check_readable(cf)?;
        if options.snapshot.is_none() {
            options.snapshot = self.snapshot.clone();
        }
        TxnIterator::over(&self.batch, self.db(), cf, options)
    }

    /// Marks the transaction's state; [`Transaction::rollback_to_save_point`] returns to it.
    fn set_save_point(&mut self) -> Result<()> {
        self.check_active()?;
        self.batch.set_save_point();
        self.save_points.push(self.locked.len());
        Ok(())
    }

    /// Undoes the writes since the last save point, releases the locks taken since, and
    /// removes the save point. `NotFound` if there is none.
    fn rollback_to_save_point(&mut self) -> Result<()> {
        self.check_active()?;
        self.batch.rollback_to_save_point()?;
        if let Some(n) = self.save_points.pop() {
            let released: Vec<LockKey> = self.locked.drain(n..).collect();
            for key in &released {
                self.locked_set.remove(key);
            }
            self.tdb.locks.unlock(self.id, &released);
        }
        Ok(())
    }

    /// The number of writes the transaction holds.
    fn len(&self) -> usize {
        self.batch.len()
    }

    /// Writes the transaction's writes atomically, then releases its locks. Fails, writing
    /// nothing, if the transaction expired and lost its locks. Either way it ends. A
    /// prepared transaction's commit is synced and recorded so that recovery does not offer
    /// it again.
    fn commit(&mut self) -> Result<()> {
        if self.state == State::Prepared {
            let name = self.name.clone().unwrap_or_default();
            let batch = self.batch.take_write_batch();
            let result = self
                .tdb
                .db
                .commit_prepared(&name, batch, &self.write_options);
            self.state = if result.is_ok() {
                State::Committed
            } else {
                State::Failed
            };
            self.release();
            return result;
        }
        self.check_active()?;
        let result = if self.expired.load(Ordering::Acquire) {
            Err(self.expired_error())
        } else {
            let batch = self.batch.take_write_batch();
            self.tdb.db.write(batch, &self.write_options)
        };
        self.state = if result.is_ok() {
            State::Committed
        } else {
            State::Failed
        };
        self.release();
        result
    }

    /// Drops the transaction's writes and releases its locks. Allowed in any state (a
    /// second call does nothing). A prepared transaction's durable record is removed; if
    /// that fails, the transaction stays prepared and the error is returned.
    fn rollback(&mut self) -> Result<()> {
        if self.state == State::Prepared {
            let name = self.name.clone().unwrap_or_default();
            self.tdb.db.rollback_prepared(&name)?;
        }
        self.batch.clear();
        self.release();
        if matches!(self.state, State::Active | State::Prepared) {
            self.state = State::RolledBack;
        }
        Ok(())
    }
}

impl Drop for Transaction<'_> {
    /// Rolls back a running transaction; a prepared one is parked in its `TransactionDb`,
    /// locks held, for `prepared_transactions` to hand out again.
    fn drop(&mut self) {
        if self.state == State::Prepared {
            self.tdb.parked.lock().push(Parked {
                id: self.id,
                name: self.name.take().unwrap_or_default(),
                batch: std::mem::take(&mut self.batch),
                locked: std::mem::take(&mut self.locked),
                write_options: self.write_options,
            });
            return;
        }
        let _ = self.rollback();
    }
}
