//! Statistics: the counters of the database's work, the [`DbStats`] snapshot of them and of
//! the memory and tree state, the [`TreeShape`], and their text reports.
//!
//! A counter is declared once, in the `stats!` list below: that line makes its [`Counter`]
//! variant, its [`DbStats`] field with its doc, its reset, its read and its name in
//! [`DbStats::iter`]. Counting is `counters.add(Counter::Flushes, 1)`, a relaxed atomic add to
//! the calling thread's stripe of the counter (`crate::counter`). The state fields listed
//! under `numbers` are named in [`DbStats::iter`] too: the one list of named statistics the
//! C API and the Python binding read, so that their names cannot drift apart.

use crate::counter::StripedCounter;

use crate::fs::{IoClass, IoSnapshot};

/// Declares the counters and the fields of [`DbStats`] that are not counters.
macro_rules! stats {
    (
        counters { $( $(#[$cdoc:meta])* $variant:ident => $counter:ident, )* }
        numbers { $( $(#[$ndoc:meta])* $number:ident, )* }
        state { $( $(#[$sdoc:meta])* $field:ident: $ty:ty, )* }
    ) => {
        /// One counter of the database's work since open (or the last reset).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Counter {
            $( $variant, )*
        }

        impl Counter {
            const COUNT: usize = [$( Counter::$variant, )*].len();
        }

        /// A snapshot of the database's counters and memory state, from [`Db::stats`](crate::Db::stats).
        ///
        /// # Examples
        ///
        /// ```
        /// use strata::{Db, Options};
        ///
        /// let dir = tempfile::tempdir()?;
        /// let mut options = Options::default();
        /// options.create_if_missing = true;
        /// let db = Db::open(dir.path(), options)?;
        /// db.put(b"a", b"1")?;
        /// db.put(b"b", b"2")?;
        /// db.flush()?;
        /// let stats = db.stats();
        /// assert_eq!(stats.keys_written, 2);
        /// assert_eq!(stats.flushes, 1);
        /// assert_eq!(stats.level_files[0], 1); // the flushed table, in L0
        /// assert_eq!(stats.active_memtable_entries, 0);
        /// db.close()?;
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[derive(Debug, Clone, Default, PartialEq)]
        #[non_exhaustive]
        pub struct DbStats {
            $( $(#[$cdoc])* pub $counter: u64, )*
            $( $(#[$ndoc])* pub $number: u64, )*
            $( $(#[$sdoc])* pub $field: $ty, )*
        }

        impl DbStats {
            /// Every statistic that is a number, by its name (the field's): the counters, then
            /// the gauges. The one list the C API (`strata_statistics_get`) and the Python
            /// binding (`Db.statistics()`) read. Names are kept as they are once published.
            ///
            /// ```
            /// # let dir = tempfile::tempdir()?;
            /// # let mut options = strata::Options::default();
            /// # options.create_if_missing = true;
            /// let db = strata::Db::open(dir.path(), options)?;
            /// db.put(b"k", b"v")?;
            /// let stats = db.stats();
            /// let named: std::collections::HashMap<_, _> = stats.iter().collect();
            /// assert_eq!(named["keys_written"], 1);
            /// assert_eq!(named["active_memtable_entries"], 1);
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [
                    $( (stringify!($counter), self.$counter), )*
                    $( (stringify!($number), self.$number), )*
                ]
                .into_iter()
            }

            /// The statistic named `name` (one of [`DbStats::iter`]'s), if there is one.
            pub fn get(&self, name: &str) -> Option<u64> {
                self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
            }

            /// The counters' values, every other field at its default.
            pub(crate) fn from_counters(c: &Counters) -> DbStats {
                DbStats {
                    $( $counter: c.get(Counter::$variant), )*
                    ..DbStats::default()
                }
            }
        }
    };
}

stats! {
    counters {
        /// Write batches committed (each `put` and `delete` is one).
        Batches => batches,
        /// Group commits: WAL writes that carried one or more batches.
        WriteGroups => write_groups,
        /// fdatasync calls on the WAL.
        WalSyncs => wal_syncs,
        /// Updates written.
        KeysWritten => keys_written,
        /// Bytes of user keys and values written (the denominator of write-amp).
        UserBytesWritten => user_bytes_written,
        /// Point lookups served.
        Gets => gets,
        /// Point lookups that found a value.
        GetsFound => gets_found,
        /// Times the active memtable became immutable.
        MemtableSwitches => memtable_switches,
        /// Memtables flushed to tables.
        Flushes => flushes,
        /// Writes that waited for a flush (too many immutable memtables).
        WriteStalls => write_stalls,
        /// Microseconds writes spent waiting for flushes.
        StallMicros => stall_micros,
        /// Write groups delayed because L0 reached `level0_slowdown_writes_trigger`.
        L0Slowdowns => l0_slowdowns,
        /// Microseconds of those delays.
        L0SlowdownMicros => l0_slowdown_micros,
        /// Write groups stopped because L0 reached `level0_stop_writes_trigger`.
        L0Stops => l0_stops,
        /// Microseconds of those stops.
        L0StopMicros => l0_stop_micros,
        /// Write groups delayed because pending compaction bytes passed the soft limit.
        PendingSlowdowns => pending_slowdowns,
        /// Microseconds of those delays.
        PendingSlowdownMicros => pending_slowdown_micros,
        /// Write groups stopped because pending compaction bytes reached the hard limit.
        PendingStops => pending_stops,
        /// Microseconds of those stops.
        PendingStopMicros => pending_stop_micros,
        /// Compactions not started because their output might not fit on the disk.
        CompactionsSkippedForSpace => compactions_skipped_for_space,
        /// Key ranges merged in parallel by compactions split with `max_subcompactions`.
        Subcompactions => subcompactions,
    }
    numbers {
        /// Entries in the active memtable.
        active_memtable_entries,
        /// Bytes of memory used by the active memtable.
        active_memtable_bytes,
        /// Number of immutable memtables.
        immutable_memtables,
        /// Bytes of memory used by the immutable memtables.
        immutable_memtable_bytes,
        /// Live snapshot handles.
        live_snapshots,
        /// The last published sequence number.
        last_sequence,
        /// Estimated bytes compaction still has to rewrite.
        pending_compaction_bytes,
        /// Compactions running now.
        compactions_running,
        /// Flushes running now (0 or 1: one thread flushes).
        flushes_running,
        /// Entries in the immutable memtables.
        immutable_memtable_entries,
        /// Estimated keys (RocksDB's `estimate-num-keys`): the memtables' entries and the
        /// tables' entries, less twice the tables' deletions (each deletes itself and one
        /// older version); overwrites counted as often as written.
        estimated_keys,
        /// Bytes of table files of the family (all levels).
        table_bytes,
    }
    state {
        /// The sequence number of the oldest live snapshot, if any.
        oldest_snapshot: Option<u64>,
        /// Compaction work per output level.
        compactions: Vec<LevelCompactionStats>,
        /// Table files per level.
        level_files: Vec<u64>,
        /// Bytes of table files per level.
        level_bytes: Vec<u64>,
        /// Compaction score per level (at 1 or more the level is due; see the picker).
        level_scores: Vec<f64>,
        /// Lookups that consulted a table's bloom filter.
        bloom_checks: u64,
        /// Lookups a bloom filter answered "not in this table".
        bloom_negatives: u64,
        /// Prefix seeks that consulted a table's filter for the target's prefix.
        prefix_checks: u64,
        /// Prefix seeks a filter answered "no key with this prefix in this table" (the table
        /// or level was skipped unread).
        prefix_negatives: u64,
        /// Blocks served by the block cache (all kinds).
        block_cache_hits: u64,
        /// Blocks read from table files after open (all kinds).
        block_cache_misses: u64,
        /// (hits, misses) of the block cache for data, index and filter blocks.
        block_cache_by_kind: [(u64, u64); 3],
        /// Bytes of blocks read from table files by reads.
        table_bytes_read: u64,
        /// Bytes the block cache holds now (blocks and cached blob values, as charged).
        block_cache_usage: u64,
        /// Table files held open.
        open_tables: u64,
        /// Table files opened since the database was opened (each open reads the footer, index,
        /// filter and properties; a table evicted by `max_open_files` and read again counts again).
        table_opens: u64,
        /// Blob files of the family (values kept apart from the tables).
        blob_files: u64,
        /// Bytes of those blob files.
        blob_file_bytes: u64,
        /// Bytes of their records that no table refers to any more (garbage).
        blob_garbage_bytes: u64,
        /// Values read from blob files (the blob cache missed).
        blob_reads: u64,
        /// Bytes of records read from blob files.
        blob_bytes_read: u64,
        /// Values found in the blob cache (the block cache).
        blob_cache_hits: u64,
        /// Bytes read and written by the engine, by purpose.
        io: IoSnapshot,
    }
}

/// Compaction work per output level, for the stats table.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LevelCompactionStats {
    /// Compactions whose output went to this level (moves included).
    pub count: u64,
    /// Of those, files moved down without a rewrite.
    pub moves: u64,
    /// Bytes of input files read.
    pub bytes_read: u64,
    /// Bytes of output files written.
    pub bytes_written: u64,
    /// Microseconds spent.
    pub micros: u64,
}

/// The counters, each striped over threads (`crate::counter`), since the read path adds
/// to some of them on every lookup.
#[derive(Debug)]
pub(crate) struct Counters([StripedCounter; Counter::COUNT]);

impl Default for Counters {
    fn default() -> Self {
        Counters(std::array::from_fn(|_| StripedCounter::default()))
    }
}

impl Counters {
    /// Adds `n` to counter `c`.
    #[inline]
    pub fn add(&self, c: Counter, n: u64) {
        self.0[c as usize].add(n);
    }

    /// The value of counter `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.0[c as usize].get()
    }

    /// Sets every counter back to zero.
    pub fn reset(&self) {
        self.0.iter().for_each(StripedCounter::reset);
    }
}

/// The shape of the tree, from [`Db::tree_shape`](crate::Db::tree_shape).
///
/// # Examples
///
/// ```
/// use strata::{Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"a", b"1")?;
/// assert_eq!(db.tree_shape().active_memtable_entries, 1);
/// db.flush()?;
/// let shape = db.tree_shape();
/// assert_eq!(shape.active_memtable_entries, 0);
/// assert_eq!(shape.levels[0].files, 1);
/// assert_eq!(shape.sorted_runs(), 2); // the (empty) memtable and one L0 table
/// assert!(shape.table_bytes() > 0);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TreeShape {
    /// Entries in the active memtable.
    pub active_memtable_entries: u64,
    /// Bytes of memory used by the active memtable.
    pub active_memtable_bytes: u64,
    /// Immutable memtables waiting for a flush.
    pub immutable_memtables: u64,
    /// Bytes of memory used by them.
    pub immutable_memtable_bytes: u64,
    /// Files and bytes per level, L0 first (each L0 file is one sorted run).
    pub levels: Vec<LevelShape>,
}

/// Files and bytes of one level.
///
/// The example of [`TreeShape`] reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LevelShape {
    /// Table files.
    pub files: u64,
    /// Bytes of them.
    pub bytes: u64,
}

impl TreeShape {
    /// Sorted runs a read may have to consult: memtables, L0 files, non-empty levels below.
    pub fn sorted_runs(&self) -> u64 {
        let l0 = self.levels.first().map_or(0, |l| l.files);
        let deeper = self.levels.iter().skip(1).filter(|l| l.files > 0).count() as u64;
        1 + self.immutable_memtables + l0 + deeper
    }

    /// Bytes of all table files.
    pub fn table_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.bytes).sum()
    }
}

impl std::fmt::Display for TreeShape {
    /// `mem 12.0 MiB (81234 entries) + 1 imm | L0 3 files 24.1 MiB | L5 4 files 98.0 MiB`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = |b: u64| b as f64 / 1048576.0;
        write!(
            f,
            "mem {:.1} MiB ({} entries) + {} imm",
            mib(self.active_memtable_bytes),
            self.active_memtable_entries,
            self.immutable_memtables
        )?;
        for (level, l) in self.levels.iter().enumerate() {
            if l.files > 0 {
                write!(f, " | L{level} {} files {:.1} MiB", l.files, mib(l.bytes))?;
            }
        }
        Ok(())
    }
}

/// The per-level compaction table (`strata.compaction-stats`).
pub(crate) fn format_compaction_table(s: &DbStats) -> String {
    let mut out = String::from(
        "Level Files   Size(MB)  Score  Count  Moves  Read(MB)  Write(MB)  W-Amp   Seconds\n",
    );
    let user = s.user_bytes_written.max(1) as f64;
    for (level, c) in s.compactions.iter().enumerate() {
        let files = s.level_files.get(level).copied().unwrap_or(0);
        let bytes = s.level_bytes.get(level).copied().unwrap_or(0);
        if files == 0 && c.count == 0 {
            continue;
        }
        // L0's writes are the flushes; a level's write-amp is what reached it per user byte.
        let written = if level == 0 {
            s.io.written(IoClass::Flush)
        } else {
            c.bytes_written
        };
        out.push_str(&format!(
            "L{level:<4} {files:>5} {:>10.1} {:>6.2} {:>6} {:>6} {:>9.1} {:>10.1} {:>6.2} {:>9.2}\n",
            bytes as f64 / 1048576.0,
            s.level_scores.get(level).copied().unwrap_or(0.0),
            c.count,
            c.moves,
            c.bytes_read as f64 / 1048576.0,
            written as f64 / 1048576.0,
            written as f64 / user,
            c.micros as f64 / 1e6,
        ));
    }
    out
}

/// The readable report of `strata.stats`, without the compaction table.
pub(crate) fn format_stats(s: &DbStats) -> String {
    let wal = s.io.written(IoClass::Wal);
    let wamp = if s.user_bytes_written > 0 {
        s.io.total_written() as f64 / s.user_bytes_written as f64
    } else {
        0.0
    };
    format!(
        "** Strata stats **\n\
         writes: {} batches, {} keys, {} user bytes, {} groups ({:.2} batches/group), {} WAL syncs\n\
         WAL: {} bytes written; write-amp {:.2}\n\
         reads: {} gets, {} found\n\
         memtables: active {} entries / {} bytes, {} immutable / {} bytes, {} switches\n\
         snapshots: {} live; last sequence {}\n\
         flushes: {}; stalls: memtable {} ({} us), L0 slowdown {} ({} us), L0 stop {} ({} us), pending-bytes slowdown {} ({} us), pending-bytes stop {} ({} us)\n\
         compaction: {} pending bytes, {} running, {} skipped for disk space, {} subcompactions\n\
         tables per level: {:?}; bytes per level: {:?}; {} open\n\
         bloom: {} checks, {} negatives; block cache hits/misses: data {}/{}, index {}/{}, filter {}/{}; {} table bytes read\n\
         blob files: {} files, {} bytes, {} bytes garbage; {} values read ({} bytes), {} cache hits\n",
        s.batches,
        s.keys_written,
        s.user_bytes_written,
        s.write_groups,
        if s.write_groups > 0 { s.batches as f64 / s.write_groups as f64 } else { 0.0 },
        s.wal_syncs,
        wal,
        wamp,
        s.gets,
        s.gets_found,
        s.active_memtable_entries,
        s.active_memtable_bytes,
        s.immutable_memtables,
        s.immutable_memtable_bytes,
        s.memtable_switches,
        s.live_snapshots,
        s.last_sequence,
        s.flushes,
        s.write_stalls,
        s.stall_micros,
        s.l0_slowdowns,
        s.l0_slowdown_micros,
        s.l0_stops,
        s.l0_stop_micros,
        s.pending_slowdowns,
        s.pending_slowdown_micros,
        s.pending_stops,
        s.pending_stop_micros,
        s.pending_compaction_bytes,
        s.compactions_running,
        s.compactions_skipped_for_space,
        s.subcompactions,
        s.level_files,
        s.level_bytes,
        s.open_tables,
        s.bloom_checks,
        s.bloom_negatives,
        s.block_cache_by_kind[0].0,
        s.block_cache_by_kind[0].1,
        s.block_cache_by_kind[1].0,
        s.block_cache_by_kind[1].1,
        s.block_cache_by_kind[2].0,
        s.block_cache_by_kind[2].1,
        s.table_bytes_read,
        s.blob_files,
        s.blob_file_bytes,
        s.blob_garbage_bytes,
        s.blob_reads,
        s.blob_bytes_read,
        s.blob_cache_hits,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_read_and_reset() {
        let c = Counters::default();
        c.add(Counter::Flushes, 2);
        c.add(Counter::Gets, 5);
        let s = DbStats::from_counters(&c);
        assert_eq!((s.flushes, s.gets, s.batches), (2, 5, 0));
        c.reset();
        assert_eq!(DbStats::from_counters(&c), DbStats::default());
    }
}
