//! `io.strata.WriteBatch`: writes collected in memory, applied atomically by
//! `Strata.write`.
//!
//! The shell is a `Closable<strata::WriteBatch>`; `close()` drops the records. Family
//! handles are read when a record is added, so closing a `ColumnFamily` later does not
//! change the batch.

use jni::objects::{JByteArray, JClass, JObject};
use jni::sys::{jint, jlong};
use jni::EnvUnowned;
use strata::WriteBatch;

use crate::convert::bytes;
use crate::db::family;
use crate::error::{run, Result};
use crate::handle::{self, Closable};

/// The shell of `this`'s handle.
///
/// # Safety
/// `h` is the handle of the WriteBatch whose method is running.
unsafe fn shell<'a>(h: jlong) -> Result<&'a Closable<WriteBatch>> {
    // SAFETY: the caller's contract.
    unsafe { handle::borrow(h, "the write batch") }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_WriteBatch_nativeNew<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> jlong {
    handle::into_handle(Closable::new(WriteBatch::new(), "the write batch"))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_WriteBatch_nativeFree<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    // SAFETY: called once, by the Cleaner of the unreachable WriteBatch that held `h`.
    unsafe { handle::release::<Closable<WriteBatch>>(h) }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_WriteBatch_nativeClose<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.take();
        Ok(())
    })
}

/// Which record `nativeAdd` adds (the Java side's constants).
const PUT: jint = 0;
const DELETE: jint = 1;
const DELETE_RANGE: jint = 2;
const MERGE: jint = 3;

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_WriteBatch_nativeAdd<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    op: jint,
    cf: jlong,
    first: JByteArray<'l>,
    second: JByteArray<'l>,
) {
    run(env, |env| {
        // SAFETY: `cf` is 0 or the handle of the ColumnFamily the Java caller passes.
        let cf = unsafe { family(cf)? };
        let (first_name, second_name) = match op {
            DELETE_RANGE => ("begin", "end"),
            MERGE => ("key", "operand"),
            _ => ("key", "value"),
        };
        let a = bytes(env, &first, first_name)?;
        let b = if op == DELETE {
            Vec::new()
        } else {
            bytes(env, &second, second_name)?
        };
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with_mut(|batch| {
            match (op, &cf) {
                (PUT, Some(cf)) => batch.put_cf(cf, &a, &b),
                (PUT, None) => batch.put(&a, &b),
                (DELETE, Some(cf)) => batch.delete_cf(cf, &a),
                (DELETE, None) => batch.delete(&a),
                (DELETE_RANGE, Some(cf)) => batch.delete_range_cf(cf, &a, &b),
                (DELETE_RANGE, None) => batch.delete_range(&a, &b),
                (_, Some(cf)) => batch.merge_cf(cf, &a, &b),
                (_, None) => batch.merge(&a, &b),
            };
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_WriteBatch_nativeCount<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        // SAFETY: `h` is `this`'s handle.
        run(env, |_| unsafe { shell(h) }?.with(|b| Ok(b.len() as jint)))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_WriteBatch_nativeClear<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with_mut(|b| {
            b.clear();
            Ok(())
        })
    })
}
