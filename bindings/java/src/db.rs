//! `io.strata.Strata`: an open database.
//!
//! The shell ([`DbShell`]) keeps the engine in a `RwLock<Option<Arc<Engine>>>`: calls share
//! the read lock, `close()` takes the engine out under the write lock, so it waits for the
//! calls in flight and every later call throws `UnavailableException`. The engine is an
//! `Arc` because transactions (`txn.rs`) own a share of it (the engine's transactions borrow
//! the database); `close()` first rolls back the transactions still open and drops the
//! spare cells of ended ones, which drops their shares, so that it closes the engine whole. Iterators keep a share of the shell, not of
//! the engine, and check at each call that the database is open.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong};
use jni::{Env, EnvUnowned};
use parking_lot::{Mutex, RwLock};
use strata::{CfOptions, ColumnFamily, ReadOptions, Snapshot, TransactionOptions, WriteOptions};

use crate::convert::{self, optional_bytes, string};
use crate::error::{run, BindError, Result};
use crate::handle::{self, Closable};
use crate::txn::{self, TxnSlot};

mod reads;
mod writes;

/// The engine behind a `Strata`: a plain database (optimistic transactions), or one whose
/// writes take key locks (opened with `transactionDb`: pessimistic transactions).
pub enum Engine {
    Plain(strata::Db),
    Locking(strata::TransactionDb),
}

impl Engine {
    /// The database, for reads, families and maintenance.
    pub fn db(&self) -> &strata::Db {
        match self {
            Engine::Plain(db) => db,
            Engine::Locking(tdb) => tdb.db(),
        }
    }

    /// Writes `batch`; on a `TransactionDb`, under the locks of its keys, so that a plain
    /// write never lands on a key a transaction holds.
    fn write(&self, batch: strata::WriteBatch, options: &WriteOptions) -> strata::Result<()> {
        match self {
            Engine::Plain(db) => db.write(batch, options),
            Engine::Locking(tdb) => tdb.write(batch, options),
        }
    }

    fn close(self) -> strata::Result<()> {
        match self {
            Engine::Plain(db) => db.close(),
            Engine::Locking(tdb) => tdb.close(),
        }
    }
}

/// The native side of a `Strata`.
pub struct DbShell {
    engine: RwLock<Option<Arc<Engine>>>,
    path: PathBuf,
    /// The family options given to `open`: where new column families' options start.
    family_defaults: CfOptions,
    /// With `transactionDb`: the options of a pessimistic transaction not told otherwise.
    pub transaction_defaults: Option<TransactionOptions>,
    /// The transactions begun, registered under the engine's read lock so that `close()`
    /// finds every one.
    transactions: Mutex<Registry>,
}

/// The transactions of a database that may still be running. Java frees a transaction's
/// shell only when the garbage collector finds it unreachable, so freed ones pile up between
/// collections: they are pruned each time the list doubles, which keeps `begin` amortized
/// O(1). An ended transaction whose shell is alive stays: its handle may be begun again in
/// place, without registering anew (`txn.rs`).
#[derive(Default)]
struct Registry {
    slots: Vec<Weak<TxnSlot>>,
    prune_at: usize,
}

impl Registry {
    fn push(&mut self, slot: &Arc<TxnSlot>) {
        if self.slots.len() >= self.prune_at {
            self.slots.retain(|weak| weak.strong_count() > 0);
            self.prune_at = (self.slots.len() * 2).max(64);
        }
        self.slots.push(Arc::downgrade(slot));
    }
}

impl DbShell {
    fn closed(&self) -> BindError {
        BindError::Closed(format!("database {} is closed", self.path.display()))
    }

    /// Runs `f` on the engine; Unavailable once the database is closed.
    pub fn with<R>(&self, f: impl FnOnce(&Arc<Engine>) -> Result<R>) -> Result<R> {
        match &*self.engine.read() {
            Some(engine) => f(engine),
            None => Err(self.closed()),
        }
    }

    /// Runs `f` on the database; Unavailable once it is closed.
    pub fn with_db<R>(&self, f: impl FnOnce(&strata::Db) -> Result<R>) -> Result<R> {
        self.with(|engine| f(engine.db()))
    }

    /// Registers a transaction for `close()` (call under the engine's read lock, in `with`).
    pub fn register(&self, slot: &Arc<TxnSlot>) {
        self.transactions.lock().push(slot);
    }

    /// Closes: rolls back the open transactions, then closes the engine. Twice is allowed.
    fn close(&self) -> Result<()> {
        let Some(engine) = self.engine.write().take() else {
            return Ok(());
        };
        // No transaction can begin now (the engine is out): end those registered, which
        // drops their shares of the engine.
        let open = std::mem::take(&mut *self.transactions.lock());
        for slot in open.slots.iter().filter_map(Weak::upgrade) {
            txn::end_at_close(&slot);
        }
        // Every other share was a registered slot's, dropped above, or is one whose
        // transaction the Cleaner is freeing at this moment (its slot no longer upgrades but
        // its cell is not dropped yet): that drop is waited for, a short while.
        let deadline = Instant::now() + Duration::from_secs(1);
        let mut engine = engine;
        loop {
            match Arc::try_unwrap(engine) {
                Ok(engine) => return Ok(engine.close()?),
                Err(shared) if Instant::now() < deadline => {
                    engine = shared;
                    std::thread::yield_now();
                }
                Err(_) => {
                    return Err(BindError::Engine(strata::Error::Unavailable(format!(
                        "database {} is still in use by a transaction and was not closed",
                        self.path.display()
                    ))))
                }
            }
        }
    }
}

/// The column family of handle `cf` (0: the default one, `None`).
///
/// # Safety
/// `cf` is 0 or the handle of a `ColumnFamily` passed with its Java object (see `handle.rs`).
pub unsafe fn family(cf: jlong) -> Result<Option<ColumnFamily>> {
    if cf == 0 {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    let shell = unsafe { handle::borrow::<Closable<ColumnFamily>>(cf, "the column family")? };
    Ok(Some(shell.cloned()?))
}

/// The snapshot of handle `snap` (0: none).
///
/// # Safety
/// `snap` is 0 or the handle of a `Snapshot` passed with its Java object.
pub unsafe fn snapshot(snap: jlong) -> Result<Option<Snapshot>> {
    if snap == 0 {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    let shell = unsafe { handle::borrow::<Closable<Snapshot>>(snap, "the snapshot")? };
    Ok(Some(shell.cloned()?))
}

/// `ReadOptions.blockFlags()`: the data blocks read do not go into the block cache.
const NO_FILL_CACHE: jint = 1;
/// `ReadOptions.blockFlags()`: the data blocks read do not have their checksums checked.
const NO_VERIFY_CHECKSUMS: jint = 2;

/// Read options at snapshot handle `snap`, reading blocks as `blocks`
/// (`ReadOptions.blockFlags()`) says.
///
/// # Safety
/// As [`snapshot`].
pub unsafe fn read_options(snap: jlong, blocks: jint) -> Result<ReadOptions> {
    let mut options = ReadOptions::default();
    // SAFETY: the caller's contract.
    options.snapshot = unsafe { snapshot(snap)? };
    options.fill_cache = blocks & NO_FILL_CACHE == 0;
    options.verify_checksums = blocks & NO_VERIFY_CHECKSUMS == 0;
    Ok(options)
}

/// The shell of a `Strata` handle.
///
/// # Safety
/// `h` is the handle of the `Strata` whose instance method is running.
pub unsafe fn shell<'a>(h: jlong) -> Result<&'a DbShell> {
    // SAFETY: the caller's contract.
    unsafe { handle::borrow::<DbShell>(h, "the database") }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeOpen<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    path: JString<'l>,
    options: JString<'l>,
    cf_names: JObjectArray<'l, JString<'l>>,
    cf_options: JObjectArray<'l, JString<'l>>,
) -> jlong {
    run(env, |env| {
        let path = PathBuf::from(string(env, &path, "path")?);
        let parsed = convert::open_options(&string(env, &options, "options")?)?;
        let base = parsed.options.cf_options();
        let mut named: Vec<(String, CfOptions)> = Vec::new();
        if !cf_names.is_null() {
            for i in 0..cf_names.len(env)? {
                let name = cf_names.get_element(env, i)?;
                let name = string(env, &name, "a column family name")?;
                let text = cf_options.get_element(env, i)?;
                let text = string(env, &text, "column family options")?;
                named.push((name.clone(), convert::cf_options(&base, &text)?));
            }
        }
        let options = parsed.options;
        let engine = if parsed.read_only {
            Engine::Plain(strata::Db::open_read_only(&path, options)?)
        } else {
            // Open every family the database has, as the engine requires: those not named
            // take the family options of `options`.
            let existing = match strata::Db::list_cfs(&path, &options) {
                Ok(names) => names,
                Err(e) if e.kind() == strata::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(e.into()),
            };
            for name in existing {
                if !named.iter().any(|(n, _)| *n == name) {
                    named.push((name, options.cf_options()));
                }
            }
            let db = strata::Db::open_cf(&path, options, named)?;
            if parsed.transactions.is_some() {
                Engine::Locking(strata::TransactionDb::new(db)?)
            } else {
                Engine::Plain(db)
            }
        };
        Ok(handle::into_handle(Arc::new(DbShell {
            path: engine.db().path().to_path_buf(),
            engine: RwLock::new(Some(Arc::new(engine))),
            family_defaults: base,
            transaction_defaults: parsed.transactions,
            transactions: Mutex::new(Registry::default()),
        })))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeListColumnFamilies<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    path: JString<'l>,
) -> JObjectArray<'l, JString<'l>> {
    run(env, |env| {
        let path = string(env, &path, "path")?;
        let names = strata::Db::list_cfs(&path, &strata::Options::default())?;
        strings(env, &names)
    })
}

/// A Java `String[]` of `names`.
pub fn strings<'l>(env: &mut Env<'l>, names: &[String]) -> Result<JObjectArray<'l, JString<'l>>> {
    let array = JObjectArray::<JString>::new(env, names.len(), JString::null())?;
    for (i, name) in names.iter().enumerate() {
        let s = JString::from_str(env, name)?;
        array.set_element(env, i, &s)?;
        env.delete_local_ref(s);
    }
    Ok(array)
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeFree<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    // SAFETY: called once, by the Cleaner of the unreachable `Strata` that held `h`.
    unsafe { handle::release::<DbShell>(h) }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeClose<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    // SAFETY (each `shell` below): `h` is the handle of `this`, reachable during the call.
    run(env, |_| unsafe { shell(h) }?.close())
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeIsClosed<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jboolean {
    run(env, |_| Ok(unsafe { shell(h) }?.engine.read().is_none()))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeSnapshot<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jlong {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        let snap = unsafe { shell(h) }?.with_db(|db| Ok(db.snapshot()))?;
        Ok(handle::into_handle(Closable::new(snap, "the snapshot")))
    })
}

/// A new `ColumnFamily` handle of `cf`.
fn family_handle(cf: ColumnFamily) -> jlong {
    handle::into_handle(Closable::new(cf, "the column family handle"))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeCreateColumnFamily<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    name: JString<'l>,
    options: JString<'l>,
) -> jlong {
    run(env, |env| {
        let name = string(env, &name, "name")?;
        let text = string(env, &options, "options")?;
        // SAFETY: `h` is `this`'s handle.
        let shell = unsafe { shell(h) }?;
        let options = convert::cf_options(&shell.family_defaults, &text)?;
        let cf = shell.with_db(|db| Ok(db.create_cf(&name, options)?))?;
        Ok(family_handle(cf))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeColumnFamily<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    name: JString<'l>,
) -> jlong {
    run(env, |env| {
        let name = string(env, &name, "name")?;
        // SAFETY: `h` is `this`'s handle.
        let cf = unsafe { shell(h) }?.with_db(|db| Ok(db.cf(&name)))?;
        Ok(cf.map_or(0, family_handle))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeDropColumnFamily<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
) {
    run(env, |_| {
        // SAFETY: `cf` is the handle of the ColumnFamily the Java caller passes.
        let Some(cf) = (unsafe { family(cf)? }) else {
            return Err(BindError::Arg(
                "the default column family cannot be dropped".into(),
            ));
        };
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with_db(|db| Ok(db.drop_cf(&cf)?))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeColumnFamilyNames<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> JObjectArray<'l, JString<'l>> {
    run(env, |env| {
        // SAFETY: `h` is `this`'s handle.
        let names = unsafe { shell(h) }?.with_db(|db| Ok(db.cf_names()))?;
        strings(env, &names)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeProperty<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
    name: JString<'l>,
) -> JString<'l> {
    run(env, |env| {
        let name = string(env, &name, "name")?;
        // SAFETY: `cf` is 0 or the handle of the ColumnFamily the Java caller passes.
        let cf = unsafe { family(cf)? };
        // SAFETY: `h` is `this`'s handle.
        let value = unsafe { shell(h) }?.with_db(|db| {
            Ok(match &cf {
                Some(cf) => db.property_cf(cf, &name),
                None => db.property(&name),
            })
        })?;
        match value {
            Some(v) => Ok(JString::from_str(env, v)?),
            None => Ok(JString::default()),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeResetStats<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    // SAFETY: `h` is `this`'s handle.
    run(env, |_| {
        unsafe { shell(h) }?.with_db(|db| {
            db.reset_stats();
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeFlushWal<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    sync: jboolean,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with_db(|db| Ok(db.flush_wal(sync)?))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeFlush<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
) {
    run(env, |_| {
        // SAFETY: `cf` is 0 or the handle of the ColumnFamily the Java caller passes.
        let cf = unsafe { family(cf)? };
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with_db(|db| {
            match &cf {
                Some(cf) => db.flush_cf(cf)?,
                None => db.flush()?,
            }
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeCompactRange<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
    begin: JByteArray<'l>,
    end: JByteArray<'l>,
) {
    run(env, |env| {
        let (begin, end) = (optional_bytes(env, &begin)?, optional_bytes(env, &end)?);
        // SAFETY: `cf` is 0 or the handle of the ColumnFamily the Java caller passes.
        let cf = unsafe { family(cf)? };
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with_db(|db| {
            match &cf {
                Some(cf) => db.compact_range_cf(cf, begin.as_deref(), end.as_deref())?,
                None => db.compact_range(begin.as_deref(), end.as_deref())?,
            }
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeCheckpoint<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    dir: JString<'l>,
) {
    run(env, |env| {
        let dir = string(env, &dir, "dir")?;
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with_db(|db| Ok(db.checkpoint(&dir)?))
    })
}
