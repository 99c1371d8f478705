//! `io.strata.Strata`'s point reads: `get` (into a new array, the caller's array or direct
//! buffers) and `multiGet`, each at a snapshot and with the block flags of its
//! `ReadOptions`, in a family or the default one.

use jni::objects::{JByteArray, JObject, JObjectArray};
use jni::sys::{self, jbyteArray, jint, jlong, jobject, jobjectArray};
use jni::EnvUnowned;
use strata::{ColumnFamily, ReadOptions};

use super::{family, read_options, shell};
use crate::convert::bytes;
use crate::error::{run, BindError, Result};
use crate::raw::{run_raw, KeyBuf};

/// Reads `key` in family `cf` at `options`, handing the value to `f` without copying it.
fn read<R>(
    db: &strata::Db,
    cf: Option<&ColumnFamily>,
    key: &[u8],
    options: &ReadOptions,
    f: impl FnOnce(Option<&[u8]>) -> Result<R>,
) -> Result<R> {
    let cf = match cf {
        Some(cf) => cf.clone(),
        None => db.default_cf(),
    };
    let value = db.get_pinned_cf_opt(&cf, key, options)?;
    f(value.as_deref())
}

/// Reads `key` in family handle `cf` at snapshot handle `snap` of database handle `h`,
/// handing the value to `f` without copying it.
///
/// # Safety
/// `h`, `cf` and `snap` as in [`shell`], [`family`] and [`snapshot`].
unsafe fn get_with<R>(
    h: jlong,
    cf: jlong,
    (snap, blocks): (jlong, jint),
    key: &[u8],
    f: impl FnOnce(Option<&[u8]>) -> Result<R>,
) -> Result<R> {
    // SAFETY: the caller's contract.
    let (cf, options) = unsafe { (family(cf)?, read_options(snap, blocks)?) };
    // SAFETY: the caller's contract.
    unsafe { shell(h) }?.with_db(|db| read(db, cf.as_ref(), key, &options, f))
}

/// The value of a key for a read that returns a new array: its size, or -1
/// (`Strata.NOT_FOUND`), the value in the thread's `scratch` array (of `scratch_len` bytes)
/// or, longer, in a new array at `large[0]` (see `raw.rs`). `key_len` is `key.length`, or -1
/// for null.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Strata_nativeGet(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    cf: jlong,
    snap: jlong,
    blocks: jint,
    key: jbyteArray,
    key_len: jint,
    scratch: jbyteArray,
    scratch_len: jint,
    large: jobjectArray,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        // SAFETY: `env` is this call's; `key` an argument of `key_len` bytes, `scratch` of
        // `scratch_len`, `large` a `byte[][]` with an element (the binding's Java code); `h` is
        // `this`'s handle, `cf` and `snap` handles of objects the Java caller passes with them.
        unsafe {
            run_raw(env, |env| {
                let mut buf = KeyBuf::new();
                let key = env.bytes(key, key_len, "key", &mut buf)?;
                get_with(h, cf, (snap, blocks), key, |value| match value {
                    Some(v) => env.value_out(v, scratch, scratch_len, large),
                    None => Ok(-1),
                })
            })
        }
    })
}

/// The value of a key, copied into the caller's array `value` (of `value_len` bytes) as far
/// as it fits; returns its full size, or -1 (`Strata.NOT_FOUND`).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Strata_nativeGetInto(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    cf: jlong,
    snap: jlong,
    blocks: jint,
    key: jbyteArray,
    key_len: jint,
    value: jbyteArray,
    value_len: jint,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        // SAFETY: as `nativeGet`; `value` is an argument of `value_len` bytes.
        unsafe {
            run_raw(env, |env| {
                let mut buf = KeyBuf::new();
                let key = env.bytes(key, key_len, "key", &mut buf)?;
                // Refused before the read, found or not.
                if value_len < 0 || value.is_null() {
                    return Err(BindError::Arg("value is null".into()));
                }
                get_with(h, cf, (snap, blocks), key, |found| match found {
                    Some(v) => env.copy_into(v, value, value_len, "value"),
                    None => Ok(-1),
                })
            })
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Strata_nativeGetDirect(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    cf: jlong,
    snap: jlong,
    blocks: jint,
    key: jobject,
    key_at: jint,
    key_len: jint,
    value: jobject,
    value_at: jint,
    value_len: jint,
) -> jlong {
    // A size comes back as a jlong, never a jint: see `raw.rs`.
    jlong::from({
        // SAFETY: `env` is this call's; both buffers are arguments of this call, and the key's
        // slice ends before the value's is made (the two may be one buffer);
        // `h` is `this`'s handle, `cf` and `snap` handles the Java caller passes with their
        // objects.
        unsafe {
            run_raw(env, |env| {
                let (cf, options) = (family(cf)?, read_options(snap, blocks)?);
                let found = {
                    let key = env.direct(key, key_at, key_len, "key")?;
                    shell(h)?.with_db(|db| {
                        let cf = cf.unwrap_or_else(|| db.default_cf());
                        Ok(db.get_pinned_cf_opt(&cf, key, &options)?)
                    })?
                };
                let Some(found) = found else { return Ok(-1) };
                env.copy_into_direct(&found, value, value_at, value_len, "value")
            })
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeMultiGet<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
    snap: jlong,
    blocks: jint,
    keys: JObjectArray<'l, JByteArray<'l>>,
) -> JObjectArray<'l, JByteArray<'l>> {
    run(env, |env| {
        if keys.is_null() {
            return Err(BindError::Arg("keys is null".into()));
        }
        let mut owned = Vec::with_capacity(keys.len(env)?);
        for i in 0..keys.len(env)? {
            let key = keys.get_element(env, i)?;
            owned.push(bytes(env, &key, &format!("keys[{i}]"))?);
            env.delete_local_ref(key);
        }
        // SAFETY: `cf` and `snap` are handles of objects the Java caller passes with them.
        let (cf, options) = unsafe { (family(cf)?, read_options(snap, blocks)?) };
        // SAFETY: `h` is `this`'s handle.
        let values = unsafe { shell(h) }?.with_db(|db| {
            Ok(match &cf {
                Some(cf) => db.multi_get_cf_opt(cf, &owned, &options),
                None => db.multi_get_opt(&owned, &options),
            })
        })?;
        let out = JObjectArray::<JByteArray>::new(env, values.len(), JByteArray::default())?;
        for (i, value) in values.into_iter().enumerate() {
            if let Some(v) = value? {
                let array = env.byte_array_from_slice(&v)?;
                out.set_element(env, i, &array)?;
                env.delete_local_ref(array);
            }
        }
        Ok(out)
    })
}
