//! The database's figures gathered from its parts: [`DbStats`] with one family's tree and
//! compaction figures, a family's [`TreeShape`], and the named properties of
//! [`Db::property`](super::Db::property) (RocksDB's `GetProperty`).

use std::sync::atomic::{AtomicU64, Ordering};

use super::families::ColumnFamilyData;
use super::stats::{format_compaction_table, format_stats, DbStats, LevelShape, TreeShape};
use super::DbInner;
use crate::counter::StripedCounter;
use crate::version::NUM_LEVELS;

/// Property `name` read from `s` (see [`Db::property`]).
pub(super) fn property_of(s: &DbStats, name: &str) -> Option<String> {
    if let Some(level) = name.strip_prefix("strata.num-files-at-level") {
        let level: usize = level.parse().ok()?;
        return s.level_files.get(level).map(|n| n.to_string());
    }
    Some(match name {
        "strata.stats" => format_stats(s) + &format_compaction_table(s),
        "strata.compaction-stats" => format_compaction_table(s),
        "strata.num-immutable-mem-table" => s.immutable_memtables.to_string(),
        "strata.cur-size-active-mem-table" => s.active_memtable_bytes.to_string(),
        "strata.num-entries-active-mem-table" => s.active_memtable_entries.to_string(),
        "strata.num-snapshots" => s.live_snapshots.to_string(),
        "strata.block-cache-usage" => s.block_cache_usage.to_string(),
        "strata.last-sequence" => s.last_sequence.to_string(),
        "strata.num-blob-files" => s.blob_files.to_string(),
        "strata.total-blob-file-size" => s.blob_file_bytes.to_string(),
        "strata.live-blob-file-garbage-size" => s.blob_garbage_bytes.to_string(),
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
    /// The database's counters with the tree and compaction figures of family `cf`.
    pub(super) fn stats(&self, cf: &ColumnFamilyData) -> DbStats {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let sv = cf.super_version();
        let t = self.tables.stats();
        DbStats {
            active_memtable_entries: sv.active.num_entries(),
            active_memtable_bytes: sv.active.memory_usage() as u64,
            immutable_memtables: sv.immutables.len() as u64,
            immutable_memtable_bytes: sv.immutables.iter().map(|m| m.memory_usage() as u64).sum(),
            live_snapshots: self.snapshots.count() as u64,
            oldest_snapshot: self.snapshots.oldest(),
            last_sequence: self.last_sequence.load(Ordering::Acquire),
            pending_compaction_bytes: load(&cf.pending_compaction_bytes),
            compactions_running: self.bg.state.lock().compactions_running as u64,
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
