//! `Strata.statisticsMap()`: the engine's `DbStats` numbers, by their field names.
//!
//! They cross as one string of `name=value` lines (parsed by the Java side into a map), so
//! adding a number here needs no change of the native method's signature.

use std::fmt::Write as _;

use jni::objects::{JObject, JString};
use jni::sys::jlong;
use jni::EnvUnowned;
use strata::DbStats;

use crate::db::{family, shell};
use crate::error::run;

fn encode(s: &DbStats) -> String {
    let mut out = String::new();
    // Every statistic the engine names (`DbStats::iter`), so a new one needs no change here.
    for (name, value) in s.iter() {
        let _ = writeln!(out, "{name}={value}");
    }
    for (level, files) in s.level_files.iter().enumerate() {
        let _ = writeln!(out, "level{level}_files={files}");
    }
    for (level, bytes) in s.level_bytes.iter().enumerate() {
        let _ = writeln!(out, "level{level}_bytes={bytes}");
    }
    out
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_strata_Strata_nativeStatistics<'l>(
    env: EnvUnowned<'l>,
    _this: JObject<'l>,
    h: jlong,
    cf: jlong,
) -> JString<'l> {
    run(env, |env| {
        // SAFETY: `cf` is 0 or the handle of the ColumnFamily the Java caller passes.
        let cf = unsafe { family(cf)? };
        // SAFETY: `h` is `this`'s handle.
        let stats = unsafe { shell(h) }?.with_db(|db| {
            Ok(match &cf {
                Some(cf) => db.stats_cf(cf)?,
                None => db.stats(),
            })
        })?;
        Ok(JString::from_str(env, encode(&stats))?)
    })
}
