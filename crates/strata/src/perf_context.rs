//! Per-operation statistics of the calling thread (RocksDB's `PerfContext` and `PerfLevel`):
//! counts and times of the work one read or write did, for a program that wants to know
//! why one lookup was slow rather than how the database does on average.
//!
//! Everything is thread-local: [`set_perf_level`] sets the calling thread's level,
//! [`perf_context`] reads what the thread's operations added since [`reset_perf_context`].
//! Nothing is shared, so nothing is atomic.
//!
//! Cost when off: every place that counts first reads the thread's level, one load of a
//! thread-local byte (`const`-initialised, so no lazy-init check) and a branch, and does
//! nothing more at [`PerfLevel::Disable`] (the default). Timers read the clock only at
//! [`PerfLevel::EnableTimeExceptForMutex`] and above.
//!
//! A field is declared once, in the `perf_fields!` list below: that line makes its cell in the
//! thread's context, its field in [`PerfContext`] with its doc, its reset and its name in
//! [`PerfContext::iter`]. Times are nanoseconds.

use std::cell::Cell;
use std::time::Instant;

/// What the calling thread's operations record in its [`PerfContext`] (RocksDB's numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum PerfLevel {
    /// Nothing (the default).
    #[default]
    Disable = 1,
    /// Counts only.
    EnableCount = 2,
    /// Counts and the times of the stages (Strata takes no mutex on the paths timed, so this
    /// and [`PerfLevel::EnableTime`] record the same).
    EnableTimeExceptForMutex = 3,
    /// Counts and times.
    EnableTime = 5,
}

impl PerfLevel {
    /// The level numbered `n` as RocksDB and db_bench's `--perf_level` number them: 0 and 1
    /// disable, 2 counts, 3 and 4 add times except mutex waits, 5 all; `None` above 5.
    pub fn from_number(n: u32) -> Option<PerfLevel> {
        Some(match n {
            0 | 1 => PerfLevel::Disable,
            2 => PerfLevel::EnableCount,
            3 | 4 => PerfLevel::EnableTimeExceptForMutex,
            5 => PerfLevel::EnableTime,
            _ => return None,
        })
    }
}

/// Declares the fields of [`PerfContext`] and the thread's cells that hold them.
macro_rules! perf_fields {
    ( $( $(#[$doc:meta])* $field:ident, )* ) => {
        /// What the calling thread's operations did since its context was last reset, from
        /// [`perf_context`] (a copy: later operations do not change it).
        ///
        /// # Examples
        ///
        /// ```
        /// use strata::{perf_context, reset_perf_context, set_perf_level, Db, Options, PerfLevel};
        ///
        /// let dir = tempfile::tempdir()?;
        /// let mut options = Options::default();
        /// options.create_if_missing = true;
        /// let db = Db::open(dir.path(), options)?;
        /// db.put(b"k", b"v")?;
        /// db.flush()?;
        /// set_perf_level(PerfLevel::EnableTime);
        /// reset_perf_context();
        /// assert_eq!(db.get(b"k")?.as_deref(), Some(&b"v"[..]));
        /// let ctx = perf_context();
        /// assert_eq!(ctx.get_from_memtable_count, 1); // the (empty) memtable was searched
        /// assert_eq!(ctx.get_from_table_count, 1); // then the one table
        /// assert_eq!(ctx.block_read_count + ctx.block_cache_hit_count, 1); // its data block
        /// set_perf_level(PerfLevel::Disable);
        /// db.close()?;
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct PerfContext {
            $( $(#[$doc])* pub $field: u64, )*
        }

        impl PerfContext {
            /// Every field by its name (RocksDB's where RocksDB has one), in declaration order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [$( (stringify!($field), self.$field), )*].into_iter()
            }
        }

        /// The thread's counts, one cell per field of [`PerfContext`].
        pub(crate) struct Cells {
            $( pub(crate) $field: Cell<u64>, )*
        }

        impl Cells {
            const fn new() -> Cells {
                Cells { $( $field: Cell::new(0), )* }
            }

            fn snapshot(&self) -> PerfContext {
                PerfContext { $( $field: self.$field.get(), )* }
            }

            fn reset(&self) {
                $( self.$field.set(0); )*
            }
        }
    };
}

perf_fields! {
    /// Key comparisons in table blocks and memtables (`user_key_comparison_count`).
    user_key_comparison_count,
    /// Blocks found in the block cache.
    block_cache_hit_count,
    /// Blocks read from table files (any kind).
    block_read_count,
    /// Bytes of those blocks, trailers included.
    block_read_byte,
    /// Nanoseconds reading blocks from table files (checksum and decompression included).
    block_read_time,
    /// Nanoseconds verifying block checksums.
    block_checksum_time,
    /// Nanoseconds decompressing blocks.
    block_decompress_time,
    /// Index blocks and partitions read from table files.
    index_block_read_count,
    /// Filter blocks and partitions read from table files.
    filter_block_read_count,
    /// Nanoseconds searching table indexes for the data block of a key (Strata's).
    index_seek_time,
    /// Nanoseconds in table filters (Strata's).
    filter_check_time,
    /// Nanoseconds seeking in data blocks (`block_seek_nanos`).
    block_seek_nanos,
    /// Table filter checks that said "maybe here" (`bloom_sst_hit_count`).
    bloom_sst_hit_count,
    /// Table filter checks that said "not here": reads saved (`bloom_sst_miss_count`).
    bloom_sst_miss_count,
    /// Memtable filter checks that said "maybe here".
    bloom_memtable_hit_count,
    /// Memtable filter checks that said "not here".
    bloom_memtable_miss_count,
    /// Memtables a point lookup searched.
    get_from_memtable_count,
    /// Nanoseconds point lookups spent in memtables.
    get_from_memtable_time,
    /// Tables a point lookup searched (Strata's; RocksDB counts them only per level).
    get_from_table_count,
    /// Nanoseconds point lookups spent in tables (`get_from_output_files_time`).
    get_from_output_files_time,
    /// Bytes of values point lookups returned.
    get_read_bytes,
    /// Bytes of values multi-gets returned.
    multiget_read_bytes,
    /// Bytes of keys and values iterators returned.
    iter_read_bytes,
    /// Memtable seeks by iterators.
    seek_on_memtable_count,
    /// Entries iterators stepped over as older versions or deleted keys
    /// (`internal_key_skipped_count`).
    internal_key_skipped_count,
    /// Nanoseconds writes spent appending to the WAL.
    write_wal_time,
    /// Nanoseconds writes spent inserting into memtables.
    write_memtable_time,
}

thread_local! {
    /// The calling thread's level, as its number (so that the check is one byte's load).
    static LEVEL: Cell<u8> = const { Cell::new(PerfLevel::Disable as u8) };
    /// The calling thread's counts.
    static CELLS: Cells = const { Cells::new() };
}

/// Sets the calling thread's [`PerfLevel`] (RocksDB's `SetPerfLevel`).
pub fn set_perf_level(level: PerfLevel) {
    LEVEL.with(|l| l.set(level as u8));
}

/// The calling thread's [`PerfLevel`].
pub fn perf_level() -> PerfLevel {
    match LEVEL.with(Cell::get) {
        2 => PerfLevel::EnableCount,
        3 => PerfLevel::EnableTimeExceptForMutex,
        5 => PerfLevel::EnableTime,
        _ => PerfLevel::Disable,
    }
}

/// A copy of the calling thread's [`PerfContext`] (RocksDB's `get_perf_context()`).
pub fn perf_context() -> PerfContext {
    CELLS.with(Cells::snapshot)
}

/// Sets every field of the calling thread's [`PerfContext`] back to 0.
pub fn reset_perf_context() {
    CELLS.with(Cells::reset);
}

/// Whether the calling thread counts.
#[inline(always)]
pub(crate) fn counting() -> bool {
    LEVEL.with(Cell::get) >= PerfLevel::EnableCount as u8
}

/// Whether the calling thread times its stages.
#[inline(always)]
pub(crate) fn timing() -> bool {
    LEVEL.with(Cell::get) >= PerfLevel::EnableTimeExceptForMutex as u8
}

/// Adds `n` to the calling thread's cell `field` of [`Cells`]: `perf_count!(block_read_count,
/// 1)`. One thread-local load and a branch when the thread does not count.
macro_rules! perf_count {
    ($field:ident, $n:expr) => {
        if $crate::perf_context::counting() {
            $crate::perf_context::add(|c| &c.$field, $n as u64);
        }
    };
}
pub(crate) use perf_count;

/// Adds `n` to the cell `pick` chooses (for [`perf_count!`]).
#[inline]
pub(crate) fn add(pick: impl FnOnce(&Cells) -> &Cell<u64>, n: u64) {
    CELLS.with(|c| {
        let cell = pick(c);
        cell.set(cell.get().wrapping_add(n));
    });
}

/// A stage's timer: started only when the thread times (`None` otherwise, at the cost of the
/// level check), and added to a field of the context by [`PerfTimer::stop`].
#[derive(Debug)]
#[must_use = "a timer records only when stopped"]
pub(crate) struct PerfTimer(Option<Instant>);

impl PerfTimer {
    /// Starts timing if the thread times.
    #[inline(always)]
    pub(crate) fn start() -> PerfTimer {
        PerfTimer(timing().then(Instant::now))
    }

    /// Adds the nanoseconds since the start to the cell `pick` chooses.
    #[inline(always)]
    pub(crate) fn stop(self, pick: impl FnOnce(&Cells) -> &Cell<u64>) {
        if let Some(start) = self.0 {
            add(pick, start.elapsed().as_nanos() as u64);
        }
    }
}

impl std::fmt::Display for PerfContext {
    /// RocksDB's `ToString(exclude_zero_counters = true)`: `name = value, ...` of the fields
    /// not 0.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (name, value) in self.iter().filter(|(_, v)| *v != 0) {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{name} = {value}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_at_the_levels_that_count() {
        // Each test runs on a thread of its own: the level starts at Disable.
        assert_eq!(perf_level(), PerfLevel::Disable);
        perf_count!(block_read_count, 1);
        assert_eq!(perf_context(), PerfContext::default());
        set_perf_level(PerfLevel::EnableCount);
        perf_count!(block_read_count, 2);
        PerfTimer::start().stop(|c| &c.block_read_time);
        let ctx = perf_context();
        assert_eq!((ctx.block_read_count, ctx.block_read_time), (2, 0));
        set_perf_level(PerfLevel::EnableTime);
        let t = PerfTimer::start();
        std::hint::black_box((0..1000).sum::<u64>());
        t.stop(|c| &c.block_read_time);
        assert!(perf_context().block_read_time > 0);
        reset_perf_context();
        assert_eq!(perf_context(), PerfContext::default());
    }

    #[test]
    fn levels_by_number_as_rocksdb_numbers_them() {
        let cases = [
            (0, Some(PerfLevel::Disable)),
            (1, Some(PerfLevel::Disable)),
            (2, Some(PerfLevel::EnableCount)),
            (3, Some(PerfLevel::EnableTimeExceptForMutex)),
            (4, Some(PerfLevel::EnableTimeExceptForMutex)),
            (5, Some(PerfLevel::EnableTime)),
            (6, None),
        ];
        for (n, level) in cases {
            assert_eq!(PerfLevel::from_number(n), level, "{n}");
            if let Some(level) = level {
                set_perf_level(level);
                assert_eq!(perf_level(), level);
            }
        }
    }

    #[test]
    fn other_threads_are_not_counted() {
        set_perf_level(PerfLevel::EnableCount);
        std::thread::spawn(|| perf_count!(block_read_count, 1))
            .join()
            .unwrap();
        assert_eq!(perf_context().block_read_count, 0);
    }

    #[test]
    fn display_lists_the_fields_not_zero() {
        let ctx = PerfContext {
            block_read_count: 3,
            get_read_bytes: 10,
            ..PerfContext::default()
        };
        assert_eq!(ctx.to_string(), "block_read_count = 3, get_read_bytes = 10");
    }
}
