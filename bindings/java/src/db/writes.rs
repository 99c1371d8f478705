//! `io.strata.Strata`'s writes: `put` (byte arrays or direct buffers), `delete`,
//! `deleteRange`, `merge` and `write` of a batch, each with the sync and WAL flags of its
//! `WriteOptions`.

use jni::objects::{JByteArray, JObject};
use jni::sys::{self, jboolean, jbyteArray, jint, jlong, jobject};
use jni::EnvUnowned;
use strata::ColumnFamily;

use super::{family, shell};
use crate::convert::{bytes, write_options};
use crate::error::{run, Result};
use crate::handle::{self, Closable};
use crate::raw::{run_raw, KeyBuf};

/// Writes one record built by `add` (given the family, the default one for `None`).
///
/// # Safety
/// `h` and `cf` as in [`shell`] and [`family`].
unsafe fn write_one(
    h: jlong,
    cf: jlong,
    sync: jboolean,
    disable_wal: jboolean,
    add: impl FnOnce(&mut strata::WriteBatch, Option<&ColumnFamily>),
) -> Result<()> {
    // SAFETY: the caller's contract.
    let cf = unsafe { family(cf)? };
    let mut batch = strata::WriteBatch::new();
    add(&mut batch, cf.as_ref());
    let options = write_options(sync, disable_wal);
    // SAFETY: the caller's contract.
    unsafe { shell(h) }?.with(|engine| Ok(engine.write(batch, &options)?))
}

/// `key_len` and `value_len` are the arrays' lengths, or -1 for null (see `raw.rs`).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Strata_nativePut(
    env: *mut sys::JNIEnv,
    _this: jobject,
    h: jlong,
    cf: jlong,
    key: jbyteArray,
    key_len: jint,
    value: jbyteArray,
    value_len: jint,
    sync: jboolean,
    disable_wal: jboolean,
) {
    // SAFETY: `env` is this call's; `key` and `value` arguments of the lengths given; `h` is
    // `this`'s handle, `cf` one the caller passes with its object.
    unsafe {
        run_raw(env, |env| {
            let (mut key_buf, mut value_buf) = (KeyBuf::new(), KeyBuf::new());
            let key = env.bytes(key, key_len, "key", &mut key_buf)?;
            let value = env.bytes(value, value_len, "value", &mut value_buf)?;
            write_one(h, cf, sync, disable_wal, |b, cf| {
                match cf {
                    Some(cf) => b.put_cf(cf, key, value),
                    None => b.put(key, value),
                };
            })
        })
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_io_strata_Strata_nativePutDirect(
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
    sync: jboolean,
    disable_wal: jboolean,
) {
    // SAFETY: `env` is this call's; both buffers are arguments of this call, the slices end
    // with it and are only read; `h` is `this`'s handle, `cf` one the caller passes with its
    // object.
    unsafe {
        run_raw(env, |env| {
            let key = env.direct(key, key_at, key_len, "key")?;
            let value = env.direct(value, value_at, value_len, "value")?;
            write_one(h, cf, sync, disable_wal, |b, cf| {
                match cf {
                    Some(cf) => b.put_cf(cf, key, value),
                    None => b.put(key, value),
                };
            })
        })
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeDelete<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
    key: JByteArray<'l>,
    sync: jboolean,
    disable_wal: jboolean,
) {
    run(env, |env| {
        let key = bytes(env, &key, "key")?;
        // SAFETY: `h` is `this`'s handle, `cf` one the caller passes with its object.
        unsafe {
            write_one(h, cf, sync, disable_wal, |b, cf| {
                match cf {
                    Some(cf) => b.delete_cf(cf, &key),
                    None => b.delete(&key),
                };
            })
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeDeleteRange<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
    begin: JByteArray<'l>,
    end: JByteArray<'l>,
    sync: jboolean,
    disable_wal: jboolean,
) {
    run(env, |env| {
        let (begin, end) = (bytes(env, &begin, "begin")?, bytes(env, &end, "end")?);
        // SAFETY: `h` is `this`'s handle, `cf` one the caller passes with its object.
        unsafe {
            write_one(h, cf, sync, disable_wal, |b, cf| {
                match cf {
                    Some(cf) => b.delete_range_cf(cf, &begin, &end),
                    None => b.delete_range(&begin, &end),
                };
            })
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeMerge<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
    key: JByteArray<'l>,
    operand: JByteArray<'l>,
    sync: jboolean,
    disable_wal: jboolean,
) {
    run(env, |env| {
        let (key, operand) = (bytes(env, &key, "key")?, bytes(env, &operand, "operand")?);
        // SAFETY: `h` is `this`'s handle, `cf` one the caller passes with its object.
        unsafe {
            write_one(h, cf, sync, disable_wal, |b, cf| {
                match cf {
                    Some(cf) => b.merge_cf(cf, &key, &operand),
                    None => b.merge(&key, &operand),
                };
            })
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeWrite<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    batch: jlong,
    sync: jboolean,
    disable_wal: jboolean,
) {
    run(env, |_| {
        // SAFETY: `batch` is the handle of the WriteBatch the Java caller passes.
        let batch =
            unsafe { handle::borrow::<Closable<strata::WriteBatch>>(batch, "the write batch")? };
        // The batch is written as it is now, and stays as it was (RocksDB keeps it too).
        let records = batch.cloned()?;
        let options = write_options(sync, disable_wal);
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with(|engine| Ok(engine.write(records, &options)?))
    })
}
