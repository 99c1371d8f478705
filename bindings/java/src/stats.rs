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

/// Appends `name=value` for each listed field of `s`.
macro_rules! numbers {
    ($out:expr, $s:expr, $($field:ident),* $(,)?) => {
        $( let _ = writeln!($out, concat!(stringify!($field), "={}"), $s.$field); )*
    };
}

fn encode(s: &DbStats) -> String {
    let mut out = String::new();
    numbers!(
        out,
        s,
        batches,
        write_groups,
        wal_syncs,
        keys_written,
        user_bytes_written,
        gets,
        gets_found,
        memtable_switches,
        flushes,
        write_stalls,
        stall_micros,
        l0_slowdowns,
        l0_stops,
        pending_slowdowns,
        pending_stops,
        subcompactions,
        active_memtable_entries,
        active_memtable_bytes,
        immutable_memtables,
        immutable_memtable_bytes,
        live_snapshots,
        last_sequence,
        pending_compaction_bytes,
        compactions_running,
        bloom_checks,
        bloom_negatives,
        block_cache_hits,
        block_cache_misses,
        block_cache_usage,
        table_bytes_read,
        open_tables,
        table_opens,
        blob_files,
        blob_file_bytes,
        blob_reads,
    );
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
