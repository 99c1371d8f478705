//! The database's figures gathered from its parts: [`DbStats`] with one family's tree and
//! compaction figures, a family's [`TreeShape`], and the named properties of
//! [`Db::property`](super::Db::property) (RocksDB's `GetProperty`).
//!
//! Property names are RocksDB's, under the prefix `rocksdb.` or `strata.` (the same property
//! either way). [`PROPERTY_NAMES`] lists them; `num-files-at-level<N>` takes a level number.

use std::sync::atomic::{AtomicU64, Ordering};

use super::families::ColumnFamilyData;
use super::stats::{format_compaction_table, format_stats, DbStats, LevelShape, TreeShape};
use super::DbInner;
use crate::counter::StripedCounter;
use crate::histogram::StatsLevel;
use crate::version::NUM_LEVELS;

/// The names [`Db::property`](super::Db::property) knows, without their prefix (`rocksdb.`
/// or `strata.`); `num-files-at-level` takes a level number after it.
pub const PROPERTY_NAMES: &[&str] = &[
    "stats",
    "cfstats",
    "compaction-stats",
    "levelstats",
    "num-files-at-level",
    "num-immutable-mem-table",
    "num-entries-active-mem-table",
    "num-entries-imm-mem-tables",
    "cur-size-active-mem-table",
    "cur-size-all-mem-tables",
    "size-all-mem-tables",
    "mem-table-flush-pending",
    "num-running-flushes",
    "num-running-compactions",
    "compaction-pending",
    "estimate-pending-compaction-bytes",
    "estimate-num-keys",
    "estimate-live-data-size",
    "total-sst-files-size",
    "live-sst-files-size",
    "num-snapshots",
    "oldest-snapshot-sequence",
    "last-sequence",
    "block-cache-usage",
    "num-blob-files",
    "total-blob-file-size",
    "live-blob-file-garbage-size",
    "dbstats",
];

/// Property `name` read from `s`, with the histograms' report `histograms` (see
/// [`Db::property`]); `None` for a name not in [`PROPERTY_NAMES`].
pub(super) fn property_of(s: &DbStats, histograms: &str, name: &str) -> Option<String> {
    let name = name
        .strip_prefix("rocksdb.")
        .or_else(|| name.strip_prefix("strata."))?;
    if let Some(level) = name.strip_prefix("num-files-at-level") {
        let level: usize = level.parse().ok()?;
        return s.level_files.get(level).map(|n| n.to_string());
    }
    let flag = |b: bool| u64::from(b).to_string();
    Some(match name {
        "stats" => format_stats(s) + &format_compaction_table(s) + histograms,
        "dbstats" => format_stats(s) + histograms,
        "compaction-stats" | "cfstats" | "levelstats" => format_compaction_table(s),
        "num-immutable-mem-table" => s.immutable_memtables.to_string(),
        "cur-size-active-mem-table" => s.active_memtable_bytes.to_string(),
        "cur-size-all-mem-tables" | "size-all-mem-tables" => {
            (s.active_memtable_bytes + s.immutable_memtable_bytes).to_string()
        }
        "num-entries-active-mem-table" => s.active_memtable_entries.to_string(),
        "num-entries-imm-mem-tables" => s.immutable_memtable_entries.to_string(),
        "mem-table-flush-pending" => flag(s.immutable_memtables > 0),
        "num-running-flushes" => s.flushes_running.to_string(),
        "num-running-compactions" => s.compactions_running.to_string(),
        "compaction-pending" => flag(s.level_scores.iter().any(|&score| score >= 1.0)),
        "estimate-pending-compaction-bytes" => s.pending_compaction_bytes.to_string(),
        "estimate-num-keys" => s.estimated_keys.to_string(),
        "estimate-live-data-size" | "total-sst-files-size" | "live-sst-files-size" => {
            s.table_bytes.to_string()
        }
        "num-snapshots" => s.live_snapshots.to_string(),
        "oldest-snapshot-sequence" => s.oldest_snapshot.unwrap_or(0).to_string(),
        "block-cache-usage" => s.block_cache_usage.to_string(),
        "last-sequence" => s.last_sequence.to_string(),
        "num-blob-files" => s.blob_files.to_string(),
        "total-blob-file-size" => s.blob_file_bytes.to_string(),
        "live-blob-file-garbage-size" => s.blob_garbage_bytes.to_string(),
        _ => return None,
    })
}

impl ColumnFamilyData {
    /// The shape of this family's tree now.
    pub(super) fn tree_shape(&self) -> TreeShape {
        let sv = self.super_version();
        TreeShape {
            active_memtable_entries: sv.active.num_entries(),
            active_memtable_bytes: sv.active.memory_usage() as u64,
            immutable_memtables: sv.immutables.len() as u64,
            immutable_memtable_bytes: sv.immutables.iter().map(|m| m.memory_usage() as u64).sum(),
            levels: sv
                .version
                .levels
                .iter()
                .take(self.options.num_levels)
                .enumerate()
                .map(|(level, files)| LevelShape {
                    files: files.len() as u64,
                    bytes: sv.version.level_bytes(level),
                })
                .collect(),
        }
    }
}

impl DbInner {
    /// Whether gets, writes, seeks and multi-gets are timed in the histograms
    /// (`Options::stats_level`).
    pub(in crate::db) fn times_operations(&self) -> bool {
        self.options.stats_level >= StatsLevel::ExceptDetailedTimers
    }

    /// The database's counters with the tree and compaction figures of family `cf`.
    pub(super) fn stats(&self, cf: &ColumnFamilyData) -> DbStats {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let sv = cf.super_version();
        let t = self.tables.stats();
        let (flushing, compactions_running) = {
            let bg = self.bg.state.lock();
            (bg.flushing, bg.compactions_running)
        };
        let files = sv.version.levels.iter().flatten();
        let (entries, deletions) =
            files.fold((0u64, 0u64), |(e, d), f| (e + f.entries, d + f.deletions));
        let memtable_entries: u64 = std::iter::once(&sv.active)
            .chain(sv.immutables.iter())
            .map(|m| m.num_entries())
            .sum();
        DbStats {
            flushes_running: u64::from(flushing),
            immutable_memtable_entries: sv.immutables.iter().map(|m| m.num_entries()).sum(),
            estimated_keys: (memtable_entries + entries).saturating_sub(2 * deletions),
            table_bytes: (0..NUM_LEVELS).map(|l| sv.version.level_bytes(l)).sum(),
            active_memtable_entries: sv.active.num_entries(),
            active_memtable_bytes: sv.active.memory_usage() as u64,
            immutable_memtables: sv.immutables.len() as u64,
            immutable_memtable_bytes: sv.immutables.iter().map(|m| m.memory_usage() as u64).sum(),
            live_snapshots: self.snapshots.count() as u64,
            oldest_snapshot: self.snapshots.oldest(),
            last_sequence: self.last_sequence.load(Ordering::Acquire),
            pending_compaction_bytes: load(&cf.pending_compaction_bytes),
            compactions_running: compactions_running as u64,
            compactions: cf.compaction_stats.lock().clone(),
            level_files: (0..NUM_LEVELS)
                .map(|l| sv.version.levels[l].len() as u64)
                .collect(),
            level_bytes: (0..NUM_LEVELS).map(|l| sv.version.level_bytes(l)).collect(),
            level_scores: crate::compaction::picker::level_scores(
                &sv.version,
                &cf.current_options().picker_options(),
            ),
            bloom_checks: t.bloom_checks.get(),
            bloom_negatives: t.bloom_negatives.get(),
            prefix_checks: t.prefix_checks.get(),
            prefix_negatives: t.prefix_negatives.get(),
            block_cache_hits: t.cache_hits.iter().map(StripedCounter::get).sum(),
            block_cache_misses: t.cache_misses.iter().map(StripedCounter::get).sum(),
            block_cache_by_kind: std::array::from_fn(|k| {
                (t.cache_hits[k].get(), t.cache_misses[k].get())
            }),
            table_bytes_read: t.bytes_read.get(),
            block_cache_usage: self.tables.block_cache().map_or(0, |c| c.usage() as u64),
            open_tables: self.tables.open_tables() as u64,
            table_opens: self.tables.opens(),
            blob_files: sv.version.blob_files.len() as u64,
            blob_file_bytes: sv.version.blob_files.values().map(|b| b.file_size).sum(),
            blob_garbage_bytes: sv
                .version
                .blob_files
                .values()
                .map(|b| b.garbage_bytes)
                .sum(),
            blob_reads: self.blobs.stats.reads.get(),
            blob_bytes_read: self.blobs.stats.bytes_read.get(),
            blob_cache_hits: self.blobs.stats.cache_hits.get(),
            io: self.io.snapshot(),
            ..DbStats::from_counters(&self.counters)
        }
    }
}
