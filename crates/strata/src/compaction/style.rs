//! The compaction style a database uses and the options of universal compaction. These are
//! user-facing options (re-exported at the crate root); they live here, beside the pickers
//! that read them, so that compaction needs nothing from the layers above it.

/// How the tree is shaped by compaction.
///
/// The example of [`UniversalOptions`] selects the universal style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CompactionStyle {
    /// Levels of sorted, non-overlapping files, each about `max_bytes_for_level_multiplier`
    /// times the one above (dynamic level sizes). Low space-amp and read cost. The default.
    #[default]
    Leveled,
    /// Sorted runs merged by size ratio (tiered): fewer rewrites per byte, more space-amp.
    /// See [`UniversalOptions`].
    Universal,
    /// Every table stays in L0; once they hold more than [`FifoOptions::max_table_files_size`]
    /// bytes the oldest are deleted, and tables older than
    /// [`Options::table_ttl_seconds`](crate::Options::table_ttl_seconds) are deleted too
    /// (RocksDB's FIFO style): for data that ages out, such as logs or metrics, with a write
    /// amplification of 1. Deleting a table drops its keys without a trace, tombstones and
    /// all: an older version of a key deleted or overwritten in a newer table may come back
    /// only if it is in a table newer than the ones deleted, which FIFO never keeps. See
    /// [`FifoOptions`].
    Fifo,
}

/// Options of FIFO compaction, as RocksDB's `CompactionOptionsFIFO`.
///
/// # Examples
///
/// ```
/// use strata::{CompactionStyle, Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.compaction_style = CompactionStyle::Fifo;
/// options.fifo.max_table_files_size = 64 << 20; // keep about the newest 64 MiB
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"event-1", b"...")?;
/// db.flush()?;
/// assert_eq!(db.tree_shape().levels[0].files, 1);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FifoOptions {
    /// Bytes of table files past which the oldest tables are deleted. Default: 1 GiB.
    pub max_table_files_size: u64,
    /// Merge the newest small tables together (intra-L0 compaction) once at least
    /// `level0_file_num_compaction_trigger` of them in a row are each smaller than a quarter
    /// of `max_table_files_size`. Fewer, larger tables make reads cheaper; each byte is then
    /// written twice, and the merged table ages from the merge. Default: false.
    pub allow_compaction: bool,
}

impl Default for FifoOptions {
    fn default() -> Self {
        FifoOptions {
            max_table_files_size: 1 << 30,
            allow_compaction: false,
        }
    }
}

/// Options of universal (tiered) compaction, as RocksDB's `CompactionOptionsUniversal`.
///
/// The sorted runs are each L0 file and each non-empty level below, newest first. Nothing is
/// merged while there are fewer runs than `level0_file_num_compaction_trigger`. Then, in
/// order: if the runs above the oldest hold more than `max_size_amplification_percent` of
/// its size, everything is merged into the last level; otherwise the first window of runs,
/// newest first, in which each next run is at most `size_ratio`% larger than the runs before
/// it together, with between `min_merge_width` and `max_merge_width` runs; otherwise, with
/// more runs than the trigger, the newest runs, enough to bring the count back to it.
///
/// Built like [`Options`](crate::Options): from `UniversalOptions::default()`, then field by
/// field.
///
/// # Examples
///
/// ```
/// use strata::{CompactionStyle, Db, Options, UniversalOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut universal = UniversalOptions::default();
/// universal.size_ratio = 10; // runs within 10% count as alike
/// universal.max_size_amplification_percent = 100; // merge all when newer runs outgrow the oldest
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.compaction_style = CompactionStyle::Universal;
/// options.universal = universal; // or assign options.universal.size_ratio in place
/// options.validate()?;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"k", b"v")?;
/// db.flush()?;
/// assert_eq!(db.tree_shape().sorted_runs(), 2);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct UniversalOptions {
    /// Percent of slack in the size comparison of runs. Default: 1.
    pub size_ratio: u32,
    /// Fewest runs merged at once by size ratio. Default: 2.
    pub min_merge_width: usize,
    /// Most runs merged at once by size ratio. Default: unlimited.
    pub max_merge_width: usize,
    /// Bytes of newer runs, as a percent of the oldest run, that trigger a full merge.
    /// Default: 200.
    pub max_size_amplification_percent: u32,
}

impl Default for UniversalOptions {
    fn default() -> Self {
        UniversalOptions {
            size_ratio: 1,
            min_merge_width: 2,
            max_merge_width: usize::MAX,
            max_size_amplification_percent: 200,
        }
    }
}
