//! `io.strata.StrataIterator`: a cursor over a database, column family, snapshot or
//! transaction, with bounds, in both directions.
//!
//! The shell holds the engine's cursor (`DbIterator` or `TxnIterator`, neither borrows)
//! and a share of where it came from: each call first checks that the database is open, or
//! the transaction running, and throws otherwise, so a cursor never outlives its source's
//! state. `next`, `prev`, `key` and `value` off an entry throw instead of panicking.

use std::sync::Arc;

use jni::objects::{JByteArray, JClass, JObject};
use jni::sys::{jboolean, jint, jlong};
use jni::{Env, EnvUnowned};
use strata::{DbIterator, ReadOptions, TxnIterator};

use crate::convert::{bytes, optional_bytes};
use crate::db::{family, read_options, shell as db_shell, DbShell};
use crate::error::{run, BindError, Result};
use crate::handle::{self, Closable};
use crate::txn::TxnShell;

/// The engine's cursor.
pub enum Cursor {
    Db(Box<DbIterator>),
    Txn(Box<TxnIterator>),
}

/// The same call on either kind of cursor.
macro_rules! cursor {
    ($c:expr, $i:ident => $call:expr) => {
        match $c {
            Cursor::Db($i) => $call,
            Cursor::Txn($i) => $call,
        }
    };
}

/// Where a cursor came from, checked at each call.
enum Source {
    Db(Arc<DbShell>),
    /// The transaction's handle and the generation of the transaction the cursor was made
    /// from: the handle may be begun again after that transaction ends.
    Txn(Arc<TxnShell>, u64),
}

pub struct IterShell {
    source: Source,
    cursor: Closable<Cursor>,
}

impl IterShell {
    /// Runs `f` on the cursor, once its source is checked.
    fn with<R>(&self, f: impl FnOnce(&mut Cursor) -> Result<R>) -> Result<R> {
        match &self.source {
            Source::Db(db) => db.with(|_| self.cursor.with_mut(f)),
            Source::Txn(t, generation) => t
                .check_generation(*generation)
                .and_then(|()| self.cursor.with_mut(f)),
        }
    }
}

/// Read options with bounds `lower` (inclusive) and `upper` (exclusive), at `snap`, reading
/// blocks as `blocks` (`ReadOptions.blockFlags()`) says.
///
/// # Safety
/// `snap` is 0 or the handle of the Snapshot the Java caller passes.
pub unsafe fn bounded(
    env: &Env<'_>,
    (snap, blocks): (jlong, jint),
    lower: &JByteArray<'_>,
    upper: &JByteArray<'_>,
) -> Result<ReadOptions> {
    // SAFETY: the caller's contract.
    let mut options = unsafe { read_options(snap, blocks)? };
    options.lower_bound = optional_bytes(env, lower)?;
    options.upper_bound = optional_bytes(env, upper)?;
    Ok(options)
}

/// A handle of a new iterator shell over a transaction's cursor.
pub fn over_transaction(txn: Arc<TxnShell>, generation: u64, iter: TxnIterator) -> jlong {
    handle::into_handle(Arc::new(IterShell {
        source: Source::Txn(txn, generation),
        cursor: Closable::plain(Cursor::Txn(Box::new(iter)), "the iterator"),
    }))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeNewIterator<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
    snap: jlong,
    blocks: jint,
    lower: JByteArray<'l>,
    upper: JByteArray<'l>,
) -> jlong {
    run(env, |env| {
        // SAFETY: `cf` and `snap` are 0 or handles the Java caller passes with their objects,
        // `h` is `this`'s handle.
        let (cf, options) = unsafe { (family(cf)?, bounded(env, (snap, blocks), &lower, &upper)?) };
        let db = unsafe { handle::share::<DbShell>(h, "the database")? };
        // SAFETY: as above.
        let iter = unsafe { db_shell(h) }?.with_db(|db| {
            Ok(match &cf {
                Some(cf) => db.iter_cf(cf, &options)?,
                None => db.iter(&options),
            })
        })?;
        Ok(handle::into_handle(Arc::new(IterShell {
            source: Source::Db(db),
            cursor: Closable::plain(Cursor::Db(Box::new(iter)), "the iterator"),
        })))
    })
}

/// The shell of `this`'s handle.
///
/// # Safety
/// `h` is the handle of the StrataIterator whose method is running.
unsafe fn shell<'a>(h: jlong) -> Result<&'a IterShell> {
    // SAFETY: the caller's contract.
    unsafe { handle::borrow(h, "the iterator") }
}

fn not_on_entry(what: &str) -> BindError {
    BindError::Arg(format!(
        "{what} needs the iterator on an entry (isValid() is false): seek first"
    ))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_StrataIterator_nativeFree<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    // SAFETY: called once, by the Cleaner of the unreachable iterator that held `h`.
    unsafe { handle::release::<IterShell>(h) }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_StrataIterator_nativeClose<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.cursor.take();
        Ok(())
    })
}

/// Movements of `nativeMove` (the Java side's constants).
const FIRST: jint = 0;
const LAST: jint = 1;
const NEXT: jint = 2;
const PREV: jint = 3;
const SEEK: jint = 4;
const SEEK_FOR_PREV: jint = 5;

/// Moves the cursor; returns whether it is on an entry, throwing the error that ended the
/// iteration, if one did.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_StrataIterator_nativeMove<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    how: jint,
    target: JByteArray<'l>,
) -> jboolean {
    run(env, |env| {
        let target = match how {
            SEEK | SEEK_FOR_PREV => bytes(env, &target, "target")?,
            _ => Vec::new(),
        };
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with(|c| {
            match how {
                FIRST => cursor!(c, i => i.seek_to_first()),
                LAST => cursor!(c, i => i.seek_to_last()),
                NEXT | PREV => {
                    if !cursor!(c, i => i.valid()) {
                        return Err(not_on_entry(if how == NEXT { "next()" } else { "prev()" }));
                    }
                    if how == NEXT {
                        cursor!(c, i => i.next())
                    } else {
                        cursor!(c, i => i.prev())
                    }
                }
                SEEK => cursor!(c, i => i.seek(&target)),
                SEEK_FOR_PREV => cursor!(c, i => i.seek_for_prev(&target)),
                _ => return Err(BindError::Arg(format!("unknown movement {how}"))),
            }
            let valid = cursor!(c, i => i.valid());
            if !valid {
                cursor!(c, i => i.status())?;
            }
            Ok(valid)
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_StrataIterator_nativeIsValid<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jboolean {
    // SAFETY: `h` is `this`'s handle.
    run(env, |_| {
        unsafe { shell(h) }?.with(|c| Ok(cursor!(c, i => i.valid())))
    })
}

/// The current key (`value` false) or value (true) as a new array.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_StrataIterator_nativeEntry<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    value: jboolean,
) -> JByteArray<'l> {
    run(env, |env| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with(|c| {
            if !cursor!(c, i => i.valid()) {
                return Err(not_on_entry(if value { "value()" } else { "key()" }));
            }
            let bytes = if value {
                cursor!(c, i => i.value())
            } else {
                cursor!(c, i => i.key())
            };
            Ok(env.byte_array_from_slice(bytes)?)
        })
    })
}

/// Bytes of the length that precedes each key and value in a batch of entries.
const LENGTH_BYTES: usize = 4;

/// Copies entries from the current one on into `buffer` (each: the key's length as 4
/// big-endian bytes, the key, the value's length, the value), at most `max` of them and as
/// many as fit, moving past each one copied. Returns how many; 0 off an entry. When the
/// current entry alone does not fit, copies nothing and returns minus the bytes it needs,
/// so that the caller can grow its buffer and call again. A read error met while moving is
/// thrown (the entries copied before it are then dropped with the call).
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_StrataIterator_nativeReadEntries<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    buffer: JByteArray<'l>,
    max: jint,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        run(env, |env| {
            let capacity = buffer.len(env)?;
            let max = usize::try_from(max).map_err(|_| {
                BindError::Arg(format!("maxEntries is {max}: it must not be negative"))
            })?;
            // SAFETY: `h` is `this`'s handle.
            let (count, bytes) = unsafe { shell(h) }?.with(|c| {
                let mut out: Vec<i8> = Vec::new();
                let mut count = 0usize;
                while count < max && cursor!(c, i => i.valid()) {
                    let (key, value) = cursor!(c, i => (i.key(), i.value()));
                    let need = 2 * LENGTH_BYTES + key.len() + value.len();
                    if out.len() + need > capacity {
                        if count == 0 {
                            let need = jint::try_from(need).map_err(|_| {
                                BindError::Arg(format!("an entry of {need} bytes is too large"))
                            })?;
                            return Ok((-need, out));
                        }
                        break;
                    }
                    for part in [key, value] {
                        let len = u32::try_from(part.len())
                            .map_err(|_| BindError::Arg("an entry is too large".into()))?;
                        out.extend(len.to_be_bytes().iter().map(|&b| b as i8));
                        out.extend(part.iter().map(|&b| b as i8));
                    }
                    count += 1;
                    cursor!(c, i => i.next());
                }
                if !cursor!(c, i => i.valid()) {
                    cursor!(c, i => i.status())?;
                }
                // `count` is at most `max`, a jint.
                Ok((count as jint, out))
            })?;
            if !bytes.is_empty() {
                buffer.set_region(env, 0, &bytes)?;
            }
            Ok(count)
        })
    })
}
