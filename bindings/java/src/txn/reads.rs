//! `io.strata.Transaction`'s reads: `get` and `getForUpdate` (into a new array, the
//! caller's array or direct buffers) and `getAndCommit`, as the transaction sees the
//! database (its own writes over its snapshot, or over the latest data).

use jni::sys::{self, jboolean, jbyteArray, jint, jlong, jobject, jobjectArray};
use strata::{ColumnFamily, TransactionBase};

use super::{family_or_default, shell, Txn};
use crate::db::{family, Engine};
use crate::error::{BindError, Result};
use crate::raw::{run_raw, KeyBuf};

/// Reads `key` in family handle `cf` (0: the default one) as the transaction sees it, for
/// update when `for_update`.
fn txn_get(
    txn: &mut Txn<'_>,
    engine: &Engine,
    cf: Option<ColumnFamily>,
    key: &[u8],
    for_update: bool,
) -> Result<Option<Vec<u8>>> {
    let cf = family_or_default(cf, engine);
    Ok(match (txn, for_update) {
        (Txn::Optimistic(t), false) => t.get_cf(&cf, key)?,
        (Txn::Optimistic(t), true) => t.get_for_update_cf(&cf, key)?,
        (Txn::Pessimistic(t), false) => t.get_cf(&cf, key)?,
        (Txn::Pessimistic(t), true) => t.get_for_update_cf(&cf, key)?,
    })
}

/// The value for a read that returns a new array, as `Strata.nativeGet`: its size, or -1,
/// the value in `scratch` or at `large[0]` (see `raw.rs`). `key_len` is `key.length`, or -1
/// for null.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Transaction_nativeGet(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    cf: jlong,
    key: jbyteArray,
    key_len: jint,
    scratch: jbyteArray,
    scratch_len: jint,
    large: jobjectArray,
    for_update: jboolean,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        // SAFETY: `env` is this call's; `key` an argument of `key_len` bytes, `scratch` of
        // `scratch_len`, `large` a `byte[][]` with an element (the binding's Java code); `h` is
        // `this`'s handle, `cf` 0 or one the Java caller passes with its object.
        unsafe {
            run_raw(env, |env| {
                let mut buf = KeyBuf::new();
                let key = env.bytes(key, key_len, "key", &mut buf)?;
                let cf = family(cf)?;
                let value =
                    shell(h)?.run(|txn, engine| txn_get(txn, engine, cf, key, for_update))?;
                match value {
                    Some(v) => env.value_out(&v, scratch, scratch_len, large),
                    None => Ok(-1),
                }
            })
        }
    })
}

/// The value of `key` as `nativeGet` reads it (for update when `for_update`), copied into the
/// caller's array `value` (of `value_len` bytes) as far as it fits; returns its full size, or
/// -1 (`Strata.NOT_FOUND`).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Transaction_nativeGetInto(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    cf: jlong,
    key: jbyteArray,
    key_len: jint,
    value: jbyteArray,
    value_len: jint,
    for_update: jboolean,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        // SAFETY: as `nativeGet`; `value` is an argument of `value_len` bytes.
        unsafe {
            run_raw(env, |env| {
                let mut buf = KeyBuf::new();
                let key = env.bytes(key, key_len, "key", &mut buf)?;
                // Refused before the read (which may lock the key), found or not.
                if value_len < 0 || value.is_null() {
                    return Err(BindError::Arg("value is null".into()));
                }
                let cf = family(cf)?;
                let found =
                    shell(h)?.run(|txn, engine| txn_get(txn, engine, cf, key, for_update))?;
                match found {
                    Some(v) => env.copy_into(&v, value, value_len, "value"),
                    None => Ok(-1),
                }
            })
        }
    })
}

/// The value of the key in direct buffer `key` (`key_len` bytes at `key_at`) as `nativeGet`
/// reads it (for update when `for_update`), copied into direct buffer `value` (`value_len`
/// bytes at `value_at`) as far as it fits; returns its full size, or -1
/// (`Strata.NOT_FOUND`).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Transaction_nativeGetDirect(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    cf: jlong,
    key: jobject,
    key_at: jint,
    key_len: jint,
    value: jobject,
    value_at: jint,
    value_len: jint,
    for_update: jboolean,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        // SAFETY: `env` is this call's; both buffers are arguments of this call; the value's
        // first (shared) slice is dropped at once, and the key's ends before the value's
        // mutable one is made (the two may be one buffer); `h` is `this`'s handle, `cf` 0 or
        // one the Java caller passes with its object.
        unsafe {
            run_raw(env, |env| {
                let cf = family(cf)?;
                // The value's buffer is checked before the read, which may lock the key.
                env.direct(value, value_at, value_len, "value")?;
                let found = {
                    let key = env.direct(key, key_at, key_len, "key")?;
                    shell(h)?.run(|txn, engine| txn_get(txn, engine, cf, key, for_update))?
                };
                let Some(found) = found else { return Ok(-1) };
                env.copy_into_direct(&found, value, value_at, value_len, "value")
            })
        }
    })
}

/// Reads `key` as `nativeGet` (not for update), then commits, in one crossing: the value's
/// size or -1, the value handed over as `nativeGet` does. A failed read leaves the transaction running (as a failed `get` does); a failed
/// commit ends it (as `commit` does).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Transaction_nativeGetAndCommit(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    cf: jlong,
    key: jbyteArray,
    key_len: jint,
    scratch: jbyteArray,
    scratch_len: jint,
    large: jobjectArray,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        // SAFETY: as `nativeGet`.
        unsafe {
            run_raw(env, |env| {
                let mut buf = KeyBuf::new();
                let key = env.bytes(key, key_len, "key", &mut buf)?;
                let cf = family(cf)?;
                let txn = shell(h)?;
                let value = txn.run(|t, engine| txn_get(t, engine, cf, key, false))?;
                // The value is handed over before the commit: were a new array refused (no
                // memory), the transaction would still run, as after a failed read.
                let size = match value {
                    Some(v) => env.value_out(&v, scratch, scratch_len, large)?,
                    None => -1,
                };
                txn.commit()?;
                Ok(size)
            })
        }
    })
}
