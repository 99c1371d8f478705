//! `io.strata.TransactionCursor`: an updatable cursor (the engine's `TxnCursor`): its
//! current entry can be replaced or deleted through its transaction, and it sees the change
//! at once.
//!
//! The engine's cursor borrows its transaction mutably (`TxnCursor<'t, T>`, held here as a `Box<dyn UpdatableCursor + Send>`), and both
//! must live in Java objects. So the transaction *lends* itself: the cursor is stored in
//! the transaction's own slot ([`Lent`], in `txn::Running::cursor`), with its lifetimes
//! erased to `'static`. This is the one place with unsafe code beyond handles; it is sound
//! because of these invariants, kept by `txn.rs`:
//! - The transaction lives in its `TxnCell`, whose dependent sits in a heap allocation of
//!   its own: it does not move while the cell exists, even when the cell is moved. The
//!   cell's transaction is replaced (dropped when the transaction ends, a new one put in
//!   the same cell when its slot is begun again) only once the cursor is gone.
//! - The cursor is dropped before the cell: `Running` declares `cursor` before `cell`
//!   (fields drop in declaration order), and every path that ends the transaction (commit,
//!   rollback, database close) sets `cursor` to `None` first.
//! - While the cursor exists nothing else reaches the transaction: every other call goes
//!   through `TxnShell::run`, which refuses while `cursor` is `Some`, and all of it happens
//!   under the slot's mutex. So the cursor's `&mut` is the only reference in use.
//! - The database the transaction borrows is the `Arc<Engine>` owned by the same cell, so it
//!   outlives the cursor too.
//!
//! A cursor handle names its loan by a number: after the cursor is closed (or its
//! transaction ends) the slot no longer holds that loan and the handle's calls throw.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JObject};
use jni::sys::{jboolean, jint, jlong};
use jni::EnvUnowned;
use strata::{TransactionBase, UpdatableCursor};

use crate::convert::bytes;
use crate::db::family;
use crate::error::{run, BindError, Result};
use crate::handle;
use crate::iter::bounded;
use crate::txn::{Running, Slot, Txn, TxnShell};

/// A transaction's cursor, stored in the transaction's slot (see the module doc).
pub struct Lent {
    cursor: Box<dyn UpdatableCursor + Send>,
    id: u64,
}

/// Numbers of loans, so that a closed cursor's handle cannot reach a newer cursor.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The native side of a `TransactionCursor`: its transaction and the number of its loan.
pub struct CursorShell {
    txn: Arc<TxnShell>,
    id: u64,
}

impl CursorShell {
    /// Runs `f` on the cursor while it is lent; throws once it is closed or its transaction
    /// ended.
    fn with<R>(&self, f: impl FnOnce(&mut dyn UpdatableCursor) -> Result<R>) -> Result<R> {
        let mut slot = self.txn.slot.lock();
        match &mut *slot {
            Slot::Running(Running {
                cursor: Some(lent), ..
            }) if lent.id == self.id => f(lent.cursor.as_mut()),
            Slot::Running(_) => Err(BindError::Closed("the cursor is closed".into())),
            Slot::Ended(..) => {
                drop(slot);
                self.txn.check_running()?;
                Err(BindError::Closed("the cursor is closed".into()))
            }
        }
    }

    /// Ends the loan (if it is still this cursor's).
    fn close(&self) {
        let mut slot = self.txn.slot.lock();
        if let Slot::Running(running) = &mut *slot {
            if running.cursor.as_ref().is_some_and(|l| l.id == self.id) {
                running.cursor = None;
            }
        }
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Transaction_nativeNewCursor<'l>(
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
        // Refuses (throws) when the transaction has ended or already lent itself.
        txn.run(|_, _| Ok(()))?;
        let mut slot = txn.slot.lock();
        let Slot::Running(running) = &mut *slot else {
            return Err(BindError::Closed("the transaction has ended".into()));
        };
        if running.cursor.is_some() {
            return Err(BindError::Arg(
                "a TransactionCursor of this transaction is open: close it first".into(),
            ));
        }
        let cf = match cf {
            Some(cf) => cf,
            None => running.cell.borrow_owner().db().default_cf(),
        };
        let ptr = running
            .cell
            .with_txn(|txn, _| Ok((txn as *mut Txn<'_>).cast::<Txn<'static>>()))?;
        // SAFETY: the transaction stays at this address and is reached by nothing else while
        // the cursor exists, and the cursor is dropped before it (see the module doc).
        let txn_ref: &'static mut Txn<'static> = unsafe { &mut *ptr };
        let cursor: Box<dyn UpdatableCursor + Send> = match txn_ref {
            Txn::Optimistic(t) => Box::new(t.cursor_cf(&cf, &options)?),
            Txn::Pessimistic(t) => Box::new(t.cursor_cf(&cf, &options)?),
        };
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        running.cursor = Some(Lent { cursor, id });
        drop(slot);
        Ok(handle::into_handle(Arc::new(CursorShell { txn, id })))
    })
}

/// The shell of `this`'s handle.
///
/// # Safety
/// `h` is the handle of the TransactionCursor whose method is running.
unsafe fn shell<'a>(h: jlong) -> Result<&'a CursorShell> {
    // SAFETY: the caller's contract.
    unsafe { handle::borrow(h, "the cursor") }
}

fn not_on_entry(what: &str) -> BindError {
    BindError::Arg(format!(
        "{what} needs the cursor on an entry (isValid() is false): seek first"
    ))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_TransactionCursor_nativeFree<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    // SAFETY: called once, by the Cleaner of the unreachable cursor that held `h`.
    unsafe { handle::release::<CursorShell>(h) }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_TransactionCursor_nativeClose<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.close();
        Ok(())
    })
}

/// Movements and writes of `nativeMove` (the Java side's constants).
const FIRST: jint = 0;
const LAST: jint = 1;
const NEXT: jint = 2;
const PREV: jint = 3;
const SEEK: jint = 4;
const SEEK_FOR_PREV: jint = 5;
const UPDATE: jint = 6;
const DELETE: jint = 7;

/// Moves the cursor or writes its entry; returns whether it is on an entry.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_TransactionCursor_nativeMove<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    how: jint,
    arg: JByteArray<'l>,
) -> jboolean {
    run(env, |env| {
        let arg = match how {
            SEEK | SEEK_FOR_PREV => bytes(env, &arg, "target")?,
            UPDATE => bytes(env, &arg, "value")?,
            _ => Vec::new(),
        };
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with(|c| {
            let needs_entry = match how {
                NEXT => Some("next()"),
                PREV => Some("prev()"),
                UPDATE => Some("update()"),
                DELETE => Some("delete()"),
                _ => None,
            };
            if let Some(what) = needs_entry {
                if !c.valid() {
                    return Err(not_on_entry(what));
                }
            }
            match how {
                FIRST => c.seek_to_first(),
                LAST => c.seek_to_last(),
                NEXT => c.next(),
                PREV => c.prev(),
                SEEK => c.seek(&arg),
                SEEK_FOR_PREV => c.seek_for_prev(&arg),
                UPDATE => c.update(&arg)?,
                DELETE => c.delete()?,
                _ => return Err(BindError::Arg(format!("unknown movement {how}"))),
            }
            let valid = c.valid();
            if !valid {
                c.status()?;
            }
            Ok(valid)
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_TransactionCursor_nativeIsValid<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jboolean {
    // SAFETY: `h` is `this`'s handle.
    run(env, |_| unsafe { shell(h) }?.with(|c| Ok(c.valid())))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_TransactionCursor_nativeEntry<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    value: jboolean,
) -> JByteArray<'l> {
    run(env, |env| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with(|c| {
            if !c.valid() {
                return Err(not_on_entry(if value { "value()" } else { "key()" }));
            }
            let bytes = if value { c.value() } else { c.key() };
            Ok(env.byte_array_from_slice(bytes)?)
        })
    })
}
