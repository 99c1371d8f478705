//! `io.strata.Transaction`: an optimistic or a pessimistic transaction of a `Strata`.
//!
//! The engine's transactions borrow their database (`OptimisticTransaction<'db>`,
//! `Transaction<'db>`), while a Java object must own what it uses. So a transaction is a
//! [`TxnCell`]: a share of the database's engine (`Arc<Engine>`) owned together with the
//! transaction borrowing it (self_cell checks the borrow without unsafe code of ours).
//!
//! Invariants:
//! - A transaction's slot holds its cell while it runs, and the cell holds the engine's
//!   transaction (`Some`). Commit (whether or not it succeeds), rollback and `close()` mark
//!   the slot with how the transaction ended and drop the engine's transaction at once (a
//!   pessimistic one releases its locks, an optimistic one its snapshot, a prepared one is
//!   parked in its database for `recoveredTransactions`), keeping the emptied cell (`None`)
//!   as the slot's spare, with its share of the engine.
//! - Every slot is registered with its database when it begins (under the database's read
//!   lock). `Strata.close()` takes the engine out, then ends each registered slot still
//!   running (`end_at_close`: a rollback) and drops every spare cell, so that afterwards it
//!   holds the only share and closes the engine whole.
//! - A transaction handle whose transaction has ended may be begun again in place
//!   (`Strata.beginTransaction(..., oldTransaction)`): the engine's new transaction goes into
//!   the slot's spare cell (no allocation: RocksJava's reason for `oldTxn`), or a new cell
//!   when there is none, and the slot gets a new `Running` with a
//!   new generation number, drawn from a process-wide counter so it is never reused. An
//!   iterator keeps the generation of the transaction it was made from and throws when the
//!   slot's differs (or the slot has ended); a cursor's loan number does the same for
//!   cursors. The slot stays registered with its database (the registry drops only freed
//!   slots), so `Strata.close()` still finds the re-begun transaction.
//! - While an updatable cursor (`cursor.rs`) is open, the slot lends the transaction to it
//!   and every other call on the transaction throws; ending the transaction closes the
//!   cursor first.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JObject, JString};
use jni::sys::{self, jboolean, jbyteArray, jint, jlong, jlongArray, jobject};
use jni::EnvUnowned;
use parking_lot::Mutex;
use self_cell::self_cell;
use strata::{ColumnFamily, TransactionBase, TransactionOptions, WriteOptions};

use crate::convert::{string, transaction_options, write_options};
use crate::cursor::Lent;
use crate::db::{family, shell as db_shell, DbShell, Engine};
use crate::error::{run, BindError, Result};
use crate::handle;
use crate::iter::{bounded, over_transaction};
use crate::raw::{run_raw, KeyBuf};

mod reads;

/// The engine's transaction: optimistic on a plain database, pessimistic on a
/// `TransactionDb`.
pub enum Txn<'db> {
    Optimistic(strata::OptimisticTransaction<'db>),
    Pessimistic(strata::Transaction<'db>),
}

/// The same call on either kind of transaction.
macro_rules! either {
    ($txn:expr, $t:ident => $call:expr) => {
        match $txn {
            Txn::Optimistic($t) => $call,
            Txn::Pessimistic($t) => $call,
        }
    };
}

impl<'db> Txn<'db> {
    fn rollback(&mut self) -> strata::Result<()> {
        match self {
            Txn::Optimistic(t) => t.rollback(),
            Txn::Pessimistic(t) => t.rollback(),
        }
    }

    fn pessimistic(&mut self, what: &str) -> Result<&mut strata::Transaction<'db>> {
        match self {
            Txn::Pessimistic(t) => Ok(t),
            Txn::Optimistic(_) => Err(BindError::Arg(format!(
                "{what} needs a pessimistic transaction: open the database with \
                 Options.transactionDb(true)"
            ))),
        }
    }
}

/// The transaction of a cell: `Some` while it runs, `None` in a spare cell (see the module
/// doc).
pub type CellTxn<'db> = Option<Txn<'db>>;

self_cell!(
    /// A share of the engine and the transaction that borrows it.
    pub struct TxnCell {
        owner: Arc<Engine>,
        #[covariant]
        dependent: CellTxn,
    }
);

impl TxnCell {
    /// Runs `f` on the transaction, given its engine. A running slot's cell always holds
    /// one (the module doc), so `None` is a broken invariant, reported rather than panicked.
    pub fn with_txn<R>(
        &mut self,
        f: impl for<'db> FnOnce(&mut Txn<'db>, &Arc<Engine>) -> Result<R>,
    ) -> Result<R> {
        self.with_dependent_mut(|engine, txn| match txn {
            Some(t) => f(t, engine),
            None => Err(BindError::Arg(
                "internal error: a running transaction's cell holds no transaction".into(),
            )),
        })
    }
}

/// How a transaction ended.
#[derive(Clone, Copy)]
pub enum Ended {
    Committed,
    /// Its commit failed (a conflict, an expiration, an IO error): nothing was written.
    Failed,
    RolledBack,
    /// Rolled back by `Strata.close()` (or, prepared, left to recovery).
    DbClosed,
    /// Closed after `prepare`: the engine keeps it prepared, for `recoveredTransactions`.
    Parked,
}

impl Ended {
    /// The error of a call on a transaction that ended so.
    fn error(self) -> BindError {
        let what = match self {
            Ended::Committed => "committed",
            Ended::Failed => "ended by a failed commit",
            Ended::RolledBack => "rolled back",
            Ended::Parked => {
                "closed after prepare (it stays prepared: Strata.recoveredTransactions() hands \
                 it out again)"
            }
            Ended::DbClosed => {
                return BindError::Closed(
                    "the transaction was rolled back when its database was closed".into(),
                )
            }
        };
        BindError::Arg(format!(
            "the transaction was already {what}: begin a new one"
        ))
    }
}

/// A running transaction, and the cursor it is lent to, if any. The cursor borrows the
/// transaction inside `cell`, so it is declared first: fields drop in order, the cursor
/// before the transaction it borrows.
pub struct Running {
    pub cursor: Option<Lent>,
    pub cell: TxnCell,
    /// Set by a successful `prepare`: closing the handle then parks the transaction in its
    /// database instead of rolling it back.
    pub prepared: bool,
    /// Which begin of the slot this is (see the module doc): iterators compare it.
    pub generation: u64,
}

/// Generation numbers of running transactions, never reused.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

impl Running {
    fn new(cell: TxnCell, prepared: bool) -> Running {
        Running {
            cursor: None,
            cell,
            prepared,
            generation: NEXT_GENERATION.fetch_add(1, Ordering::Relaxed),
        }
    }
}

pub enum Slot {
    Running(Running),
    /// How the transaction ended, and its cell kept for the next begin in this slot, its
    /// transaction dropped (the spare; none once the database closed).
    Ended(Ended, Option<TxnCell>),
}

impl Slot {
    /// Ends the running transaction as `how`: drops the engine's transaction now (its
    /// snapshot, its locks; a prepared one is parked) and keeps its cell as the spare. The
    /// cursor must be gone already (`Running::cursor` is `None`).
    fn finish(&mut self, how: Ended) {
        if let Slot::Running(running) = std::mem::replace(self, Slot::Ended(how, None)) {
            let Running {
                cursor, mut cell, ..
            } = running;
            drop(cursor);
            cell.with_dependent_mut(|_, txn| *txn = None);
            *self = Slot::Ended(how, Some(cell));
        }
    }
}

/// A transaction's state, shared by its Java object, its database's registry and its
/// iterators.
pub type TxnSlot = Mutex<Slot>;

/// The native side of a `Transaction`.
pub struct TxnShell {
    pub slot: Arc<TxnSlot>,
}

impl TxnShell {
    /// Ok while the transaction runs.
    pub fn check_running(&self) -> Result<()> {
        match &*self.slot.lock() {
            Slot::Running(_) => Ok(()),
            Slot::Ended(how, _) => Err(how.error()),
        }
    }

    /// The generation of the running transaction; throws when it has ended.
    pub fn generation(&self) -> Result<u64> {
        match &*self.slot.lock() {
            Slot::Running(r) => Ok(r.generation),
            Slot::Ended(how, _) => Err(how.error()),
        }
    }

    /// Ok while the transaction of generation `generation` runs: throws once it has ended,
    /// even when the handle was begun again since.
    pub fn check_generation(&self, generation: u64) -> Result<()> {
        match &*self.slot.lock() {
            Slot::Running(r) if r.generation == generation => Ok(()),
            Slot::Running(_) => Err(BindError::Arg(
                "the transaction this was made from has ended (its Transaction was begun again \
                 since): make a new one from the running transaction"
                    .into(),
            )),
            Slot::Ended(how, _) => Err(how.error()),
        }
    }

    /// Runs `f` on the running transaction, given its engine; throws when it has ended or
    /// is lent to a cursor.
    pub fn run<R>(
        &self,
        f: impl for<'db> FnOnce(&mut Txn<'db>, &Arc<Engine>) -> Result<R>,
    ) -> Result<R> {
        let mut slot = self.slot.lock();
        match &mut *slot {
            Slot::Running(Running {
                cursor: Some(_), ..
            }) => Err(BindError::Arg(
                "a TransactionCursor of this transaction is open: close it first (it holds \
                 the transaction until then)"
                    .into(),
            )),
            Slot::Running(r) => r.cell.with_txn(f),
            Slot::Ended(how, _) => Err(how.error()),
        }
    }

    /// Commits; the transaction has ended afterwards whether or not the commit succeeded.
    fn commit(&self) -> Result<()> {
        self.end(
            false,
            |txn| either!(txn, t => t.commit()),
            Ended::Committed,
            Some(Ended::Failed),
        )
    }

    /// Ends the transaction by `f` (commit or rollback), closing its cursor first. Does
    /// nothing, returning Ok, when it has ended already and `quiet`.
    fn end(
        &self,
        quiet: bool,
        f: impl for<'db> FnOnce(&mut Txn<'db>) -> strata::Result<()>,
        ok: Ended,
        failed: Option<Ended>,
    ) -> Result<()> {
        let mut slot = self.slot.lock();
        let Slot::Running(running) = &mut *slot else {
            return match (&*slot, quiet) {
                (Slot::Ended(how, _), false) => Err(how.error()),
                _ => Ok(()),
            };
        };
        running.cursor = None;
        let result = running.cell.with_txn(|txn, _| Ok(f(txn)))?;
        match (&result, failed) {
            (Ok(()), _) => slot.finish(ok),
            (Err(_), Some(how)) => slot.finish(how),
            // A rollback that failed (a prepared transaction whose record could not be
            // removed) leaves it as it was.
            (Err(_), None) => {}
        }
        Ok(result?)
    }
}

/// Begins a transaction of `engine`: optimistic, or pessimistic with `options` on a
/// `TransactionDb`.
fn begin(engine: Arc<Engine>, write: &WriteOptions, options: &TransactionOptions) -> Running {
    let cell = TxnCell::new(engine, |engine| Some(new_txn(engine, write, options)));
    Running::new(cell, false)
}

/// The engine's new transaction of `engine`.
fn new_txn<'db>(
    engine: &'db Engine,
    write: &WriteOptions,
    options: &TransactionOptions,
) -> Txn<'db> {
    match engine {
        Engine::Plain(db) => Txn::Optimistic(db.optimistic_transaction(write)),
        Engine::Locking(tdb) => Txn::Pessimistic(tdb.transaction(write, options)),
    }
}

/// Begins a transaction in the slot of `old`, an ended transaction of this database: no new
/// handle, and the slot is registered already; in the slot's spare cell when it has one of
/// this engine, so that no cell is allocated (see the module doc). Throws, changing
/// nothing, when `old` still runs.
fn begin_again(
    old: &TxnShell,
    engine: Arc<Engine>,
    write: &WriteOptions,
    options: &TransactionOptions,
) -> Result<()> {
    let mut slot = old.slot.lock();
    let spare = match &mut *slot {
        Slot::Running(_) => {
            return Err(BindError::Arg(
                "oldTransaction is still running: commit or roll it back (or close it) before \
                 beginning it again"
                    .into(),
            ))
        }
        Slot::Ended(_, spare) => spare.take(),
    };
    let running = match spare {
        Some(mut cell) if Arc::ptr_eq(cell.borrow_owner(), &engine) => {
            cell.with_dependent_mut(|engine, txn| *txn = Some(new_txn(engine, write, options)));
            Running::new(cell, false)
        }
        _ => begin(engine, write, options),
    };
    *slot = Slot::Running(running);
    Ok(())
}

/// Ends a transaction still running when its database closes: rolls it back, unless it is
/// prepared, which is left to recovery at the next open (its durable record stays). Drops
/// the spare cell of an ended one. Either way the slot keeps no share of the engine.
pub fn end_at_close(slot: &TxnSlot) {
    let mut slot = slot.lock();
    match &mut *slot {
        Slot::Running(running) => {
            running.cursor = None;
            if !running.prepared {
                // The rollback of a transaction that was never prepared cannot fail; dropping
                // the cell below would roll it back anyway.
                let _ = running.cell.with_txn(|txn, _| Ok(txn.rollback()));
            }
            // Dropping the cell (here) parks a prepared transaction in the closing database.
            *slot = Slot::Ended(Ended::DbClosed, None);
        }
        Slot::Ended(_, spare) => *spare = None,
    }
}

/// `Transaction.close()`: rolls back a running transaction; a prepared one is parked in its
/// database (dropping the engine's transaction does that) for `recoveredTransactions`.
fn close(shell: &TxnShell) -> Result<()> {
    {
        let mut slot = shell.slot.lock();
        if let Slot::Running(running) = &mut *slot {
            if running.prepared {
                // Dropping the engine's transaction parks it.
                running.cursor = None;
                slot.finish(Ended::Parked);
                return Ok(());
            }
        }
    }
    shell.end(true, |txn| txn.rollback(), Ended::RolledBack, None)
}

fn new_handle(db: &DbShell, running: Running) -> jlong {
    let slot = Arc::new(Mutex::new(Slot::Running(running)));
    db.register(&slot);
    handle::into_handle(Arc::new(TxnShell { slot }))
}

#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Strata_nativeBeginTransaction(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    old: jlong,
    sync: jboolean,
    disable_wal: jboolean,
    has_options: jboolean,
    lock_timeout_ms: jlong,
    deadlock_detect: jboolean,
    expiration_ms: jlong,
    set_snapshot: jboolean,
) -> jlong {
    // SAFETY: `env` is this call's; `h` is `this`'s handle.
    let begun = unsafe {
        run_raw(env, |_| {
            let db = db_shell(h)?;
            let options = match (&db.transaction_defaults, has_options) {
                (Some(base), true) => transaction_options(
                    base,
                    lock_timeout_ms,
                    deadlock_detect,
                    expiration_ms,
                    set_snapshot,
                ),
                (Some(base), false) => base.clone(),
                (None, true) => {
                    return Err(BindError::Arg(
                        "TransactionOptions apply to pessimistic transactions only: open the \
                     database with Options.transactionDb(true)"
                            .into(),
                    ))
                }
                (None, false) => TransactionOptions::default(),
            };
            let write = write_options(sync, disable_wal);
            db.with(|engine| {
                if old == 0 {
                    return Ok(new_handle(db, begin(Arc::clone(engine), &write, &options)));
                }
                // SAFETY: `old` is the handle of the oldTransaction the Java caller keeps
                // reachable; the Java side checked it belongs to this database.
                let old_shell = shell(old)?;
                begin_again(old_shell, Arc::clone(engine), &write, &options)?;
                Ok(old)
            })
        })
    };
    begun
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeRecoveredTransactions<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jlongArray {
    run(env, |env| {
        // SAFETY: `h` is `this`'s handle.
        let db = unsafe { db_shell(h) }?;
        let handles = db.with(|engine| {
            let mut handles = Vec::new();
            loop {
                // Takes the parked transactions and keeps the first: dropping the others
                // parks them again, for the next turn of the loop.
                let cell = TxnCell::try_new(Arc::clone(engine), |engine| match &**engine {
                    Engine::Locking(tdb) => tdb
                        .prepared_transactions()
                        .into_iter()
                        .next()
                        .map(|t| Some(Txn::Pessimistic(t)))
                        .ok_or(()),
                    Engine::Plain(_) => Err(()),
                });
                let Ok(cell) = cell else { break };
                handles.push(new_handle(db, Running::new(cell, true)));
            }
            Ok(handles)
        })?;
        let array = env.new_long_array(handles.len())?;
        array.set_region(env, 0, &handles)?;
        Ok(array.into_raw())
    })
}

/// The shell of `this`'s handle.
///
/// # Safety
/// `h` is the handle of the Transaction whose method is running.
pub unsafe fn shell<'a>(h: jlong) -> Result<&'a TxnShell> {
    // SAFETY: the caller's contract.
    unsafe { handle::borrow(h, "the transaction") }
}

/// The family of handle `cf`, or the transaction's database's default one.
fn family_or_default(cf: Option<ColumnFamily>, engine: &Engine) -> ColumnFamily {
    cf.unwrap_or_else(|| engine.db().default_cf())
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeFree<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    // SAFETY: called once, by the Cleaner of the unreachable Transaction that held `h`.
    unsafe { handle::release::<TxnShell>(h) }
}

/// Which write `nativeWrite` makes (the Java side's constants).
const PUT: jint = 0;
const DELETE: jint = 1;
const MERGE: jint = 3;

/// `key_len` and `value_len` are the arrays' lengths, or -1 for null (see `raw.rs`).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Transaction_nativeWrite(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    op: jint,
    cf: jlong,
    key: jbyteArray,
    key_len: jint,
    value: jbyteArray,
    value_len: jint,
) {
    // SAFETY: `env` is this call's; `key` and `value` arguments of the lengths given; `h` is
    // `this`'s handle, `cf` 0 or one the Java caller passes with its object.
    unsafe {
        run_raw(env, |env| {
            let (mut key_buf, mut value_buf) = (KeyBuf::new(), KeyBuf::new());
            let key = env.bytes(key, key_len, "key", &mut key_buf)?;
            let value: &[u8] = match op {
                PUT => env.bytes(value, value_len, "value", &mut value_buf)?,
                MERGE => env.bytes(value, value_len, "operand", &mut value_buf)?,
                _ => &[],
            };
            let cf = family(cf)?;
            shell(h)?.run(|txn, engine| {
                let cf = family_or_default(cf, engine);
                match op {
                    PUT => either!(txn, t => t.put_cf(&cf, key, value))?,
                    DELETE => either!(txn, t => t.delete_cf(&cf, key))?,
                    _ => either!(txn, t => t.merge_cf(&cf, key, value))?,
                }
                Ok(())
            })
        })
    }
}

/// Save point operations of `nativeSavePoint` (the Java side's constants).
const SET: jint = 0;
const ROLLBACK_TO: jint = 1;

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeSavePoint<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    op: jint,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.run(|txn, _| {
            match op {
                SET => either!(txn, t => t.set_save_point())?,
                ROLLBACK_TO => either!(txn, t => t.rollback_to_save_point())?,
                _ => return Err(BindError::Arg(format!("unknown save point operation {op}"))),
            }
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeSetName<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    name: JString<'l>,
) {
    run(env, |env| {
        let name = string(env, &name, "name")?;
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.run(|txn, _| Ok(txn.pessimistic("setName")?.set_name(&name)?))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeName<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> JString<'l> {
    run(env, |env| {
        // SAFETY: `h` is `this`'s handle.
        let name = unsafe { shell(h) }?.run(|txn, _| {
            Ok(match txn {
                Txn::Pessimistic(t) => t.name().map(|n| String::from_utf8_lossy(n).into_owned()),
                Txn::Optimistic(_) => None,
            })
        })?;
        match name {
            Some(n) => Ok(JString::from_str(env, n)?),
            None => Ok(JString::default()),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativePrepare<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        let shell = unsafe { shell(h) }?;
        shell.run(|txn, _| Ok(txn.pessimistic("prepare")?.prepare()?))?;
        if let Slot::Running(running) = &mut *shell.slot.lock() {
            running.prepared = true;
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Transaction_nativeCommit(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
) {
    // SAFETY: `env` is this call's; `h` is `this`'s handle.
    unsafe { run_raw(env, |_| shell(h)?.commit()) }
}

/// Rolls back; does nothing when the transaction has ended.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeRollback<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.end(true, |txn| txn.rollback(), Ended::RolledBack, None)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeClose<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    // SAFETY: `h` is `this`'s handle.
    run(env, |_| close(unsafe { shell(h) }?))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeIsActive<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jboolean {
    // SAFETY: `h` is `this`'s handle.
    run(env, |_| Ok(unsafe { shell(h) }?.check_running().is_ok()))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeNewIterator<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
    blocks: jint,
    lower: JByteArray<'l>,
    upper: JByteArray<'l>,
) -> jlong {
    run(env, |env| {
        // SAFETY: `cf` is 0 or the handle the Java caller passes with its object.
        let (cf, options) = unsafe { (family(cf)?, bounded(env, (0, blocks), &lower, &upper)?) };
        // SAFETY: `h` is `this`'s handle.
        let txn = unsafe { handle::share::<TxnShell>(h, "the transaction")? };
        // Read before the iterator is made: were the handle ended and begun again by another
        // thread in between, the iterator would refuse to run, never run on the wrong one.
        let generation = txn.generation()?;
        let iter = txn.run(|t, engine| {
            let cf = family_or_default(cf, engine);
            Ok(either!(t, t => t.iter_cf(&cf, &options))?)
        })?;
        Ok(over_transaction(txn, generation, iter))
    })
}
