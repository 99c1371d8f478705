//! `io.strata.Snapshot`: reads as of one moment.
//!
//! The shell is a `Closable<strata::Snapshot>`; `close()` releases the engine's snapshot
//! (once no read or iterator made with it holds a copy), later reads through it throw.

use jni::objects::{JClass, JObject};
use jni::sys::jlong;
use jni::EnvUnowned;
use strata::Snapshot;

use crate::error::run;
use crate::handle::{self, Closable};

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Snapshot_nativeFree<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    // SAFETY: called once, by the Cleaner of the unreachable Snapshot that held `h`.
    unsafe { handle::release::<Closable<Snapshot>>(h) }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Snapshot_nativeClose<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        unsafe { handle::borrow::<Closable<Snapshot>>(h, "the snapshot")? }.take();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Snapshot_nativeSequence<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jlong {
    run(env, |_| {
        // SAFETY: `h` is `this`'s handle.
        let snap = unsafe { handle::borrow::<Closable<Snapshot>>(h, "the snapshot")? };
        snap.with(|s| Ok(s.sequence() as jlong))
    })
}
