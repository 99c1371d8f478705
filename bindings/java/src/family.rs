//! `io.strata.ColumnFamily`: a handle of one column family of a database.
//!
//! The shell is a `Closable<strata::ColumnFamily>` (the engine's handle is a cheap clone
//! that stays valid while the database is open); `close()` empties it, and the engine
//! refuses the family's use once it is dropped or its database closed.

use jni::objects::{JClass, JObject, JString};
use jni::sys::jlong;
use jni::EnvUnowned;
use strata::ColumnFamily;

use crate::error::run;
use crate::handle::{self, Closable};

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_ColumnFamily_nativeFree<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    // SAFETY: called once, by the Cleaner of the unreachable ColumnFamily that held `h`.
    unsafe { handle::release::<Closable<ColumnFamily>>(h) }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_ColumnFamily_nativeClose<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { handle::borrow::<Closable<ColumnFamily>>(h, "the column family")? }.take();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_ColumnFamily_nativeName<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> JString<'l> {
    run(env, |env| {
        // SAFETY: `h` is `this`'s handle.
        let cf = unsafe { handle::borrow::<Closable<ColumnFamily>>(h, "the column family")? }
            .cloned()?;
        Ok(JString::from_str(env, cf.name())?)
    })
}
