//! The database's statistics by name, as `Db.statistics()` returns them: the counters and
//! gauges of the engine's `DbStats` that are numbers, named as its fields (the C API uses the
//! same names).

use strata::DbStats;

/// Reads one statistic from a snapshot of the database's statistics.
type Reader = fn(&DbStats) -> u64;

/// Each statistic's name and how to read it, in the order of `DbStats`' fields.
pub const STATISTICS: &[(&str, Reader)] = &[
    ("batches", |s| s.batches),
    ("write_groups", |s| s.write_groups),
    ("wal_syncs", |s| s.wal_syncs),
    ("keys_written", |s| s.keys_written),
    ("user_bytes_written", |s| s.user_bytes_written),
    ("gets", |s| s.gets),
    ("gets_found", |s| s.gets_found),
    ("memtable_switches", |s| s.memtable_switches),
    ("flushes", |s| s.flushes),
    ("write_stalls", |s| s.write_stalls),
    ("stall_micros", |s| s.stall_micros),
    ("l0_slowdowns", |s| s.l0_slowdowns),
    ("l0_slowdown_micros", |s| s.l0_slowdown_micros),
    ("l0_stops", |s| s.l0_stops),
    ("l0_stop_micros", |s| s.l0_stop_micros),
    ("pending_slowdowns", |s| s.pending_slowdowns),
    ("pending_slowdown_micros", |s| s.pending_slowdown_micros),
    ("pending_stops", |s| s.pending_stops),
    ("pending_stop_micros", |s| s.pending_stop_micros),
    ("compactions_skipped_for_space", |s| {
        s.compactions_skipped_for_space
    }),
    ("subcompactions", |s| s.subcompactions),
    ("active_memtable_entries", |s| s.active_memtable_entries),
    ("active_memtable_bytes", |s| s.active_memtable_bytes),
    ("immutable_memtables", |s| s.immutable_memtables),
    ("immutable_memtable_bytes", |s| s.immutable_memtable_bytes),
    ("live_snapshots", |s| s.live_snapshots),
    ("last_sequence", |s| s.last_sequence),
    ("pending_compaction_bytes", |s| s.pending_compaction_bytes),
    ("compactions_running", |s| s.compactions_running),
];
