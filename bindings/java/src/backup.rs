//! `io.strata.BackupEngine`: a directory of backups of one database.
//!
//! The shell is a `Closable<strata::BackupEngine>`; `close()` releases the directory's
//! lock. Backup descriptions cross as `long[]` rows of [`INFO_FIELDS`] numbers, read by the
//! Java `BackupInfo`.

use jni::objects::{JClass, JObject, JString};
use jni::sys::{jint, jlong, jlongArray};
use jni::{Env, EnvUnowned};
use strata::{BackupEngine, BackupInfo};

use crate::convert::string;
use crate::db::shell as db_shell;
use crate::error::{run, BindError, Result};
use crate::handle::{self, Closable};

/// Numbers per backup in the `long[]` rows: id, timestamp, files, size, shared bytes,
/// copied bytes.
const INFO_FIELDS: usize = 6;

fn row(info: &BackupInfo) -> [jlong; INFO_FIELDS] {
    [
        info.id as jlong,
        info.timestamp as jlong,
        info.num_files as jlong,
        info.size as jlong,
        info.shared_bytes as jlong,
        info.copied_bytes as jlong,
    ]
}

fn long_array(env: &mut Env<'_>, values: &[jlong]) -> Result<jlongArray> {
    let array = env.new_long_array(values.len())?;
    array.set_region(env, 0, values)?;
    Ok(array.into_raw())
}

/// The shell of `this`'s handle.
///
/// # Safety
/// `h` is the handle of the BackupEngine whose method is running.
unsafe fn shell<'a>(h: jlong) -> Result<&'a Closable<BackupEngine>> {
    // SAFETY: the caller's contract.
    unsafe { handle::borrow(h, "the backup engine") }
}

/// A backup id from Java: not negative.
fn id(value: jlong) -> Result<u64> {
    u64::try_from(value).map_err(|_| BindError::Arg(format!("backup id {value} is negative")))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_BackupEngine_nativeOpen<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    dir: JString<'l>,
) -> jlong {
    run(env, |env| {
        let dir = string(env, &dir, "dir")?;
        let engine = BackupEngine::open(&dir)?;
        Ok(handle::into_handle(Closable::new(
            engine,
            "the backup engine",
        )))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_BackupEngine_nativeFree<'l>(
    _env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    // SAFETY: called once, by the Cleaner of the unreachable BackupEngine that held `h`.
    unsafe { handle::release::<Closable<BackupEngine>>(h) }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_BackupEngine_nativeClose<'l>(
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

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_BackupEngine_nativeCreate<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    db: jlong,
) -> jlongArray {
    run(env, |env| {
        // SAFETY: `h` is `this`'s handle, `db` the handle of the Strata the caller passes.
        let (backups, db) = unsafe { (shell(h)?, db_shell(db)?) };
        let info = backups.with_mut(|b| db.with_db(|db| Ok(b.create_backup(db)?)))?;
        long_array(env, &row(&info))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_BackupEngine_nativeList<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
) -> jlongArray {
    run(env, |env| {
        // SAFETY: `h` is `this`'s handle.
        let rows: Vec<jlong> =
            unsafe { shell(h) }?.with(|b| Ok(b.list_backups().iter().flat_map(row).collect()))?;
        long_array(env, &rows)
    })
}

/// Backup operations on one id (the Java side's constants).
const VERIFY: jint = 0;
const DELETE: jint = 1;

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_BackupEngine_nativeOnId<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    op: jint,
    backup: jlong,
) {
    run(env, |_| {
        let backup = id(backup)?;
        // SAFETY: `h` is `this`'s handle.
        let engine = unsafe { shell(h) }?;
        match op {
            VERIFY => engine.with(|b| Ok(b.verify_backup(backup)?)),
            DELETE => engine.with_mut(|b| Ok(b.delete_backup(backup)?)),
            _ => Err(BindError::Arg(format!("unknown backup operation {op}"))),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_BackupEngine_nativeRestore<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    backup: jlong,
    target: JString<'l>,
) {
    run(env, |env| {
        let (backup, target) = (id(backup)?, string(env, &target, "target")?);
        // SAFETY: `h` is `this`'s handle.
        unsafe { shell(h) }?.with(|b| Ok(b.restore(backup, &target)?))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_BackupEngine_nativePurge<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    keep: jint,
) -> jlongArray {
    run(env, |env| {
        let keep = usize::try_from(keep)
            .map_err(|_| BindError::Arg(format!("keep is {keep}, it must not be negative")))?;
        // SAFETY: `h` is `this`'s handle.
        let purged = unsafe { shell(h) }?.with_mut(|b| Ok(b.purge_old_backups(keep)?))?;
        let ids: Vec<jlong> = purged.into_iter().map(|i| i as jlong).collect();
        long_array(env, &ids)
    })
}
