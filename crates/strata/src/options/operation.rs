//! Options given with each call rather than at open: [`ReadOptions`] for reads and
//! iterators, [`WriteOptions`] for writes, [`IngestOptions`] for ingesting table files.

#[cfg(doc)]
use super::Options;
use crate::snapshot::Snapshot;

/// Options for one write.
///
/// Built like [`Options`]: from `WriteOptions::default()`, then field by field.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// let mut durable = WriteOptions::default();
/// durable.sync = true;
/// db.put_opt(b"order/17", b"paid", &durable)?; // on disk when it returns
/// assert_eq!(db.stats().wal_syncs, 1);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Return only once the write is durable (fdatasync of the WAL). Without it a write
    /// survives a process crash but may be lost in a power cut; recovery then yields a prefix
    /// of the acknowledged writes.
    pub sync: bool,
    /// Skip the WAL: the write lives only in memory until flushed, and a crash loses it.
    pub disable_wal: bool,
}

/// Options of [`Db::ingest`](crate::Db::ingest) (RocksDB's `IngestExternalFileOptions`).
///
/// RocksDB's `ingest_behind` (placing the files below all data, as the oldest versions) is
/// not offered: ingested keys are always newer than every write before the ingest.
///
/// Built like [`Options`]: from `IngestOptions::default()`, then field by field.
///
/// # Examples
///
/// ```
/// use strata::{Db, IngestOptions, Options, SstWriter};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path().join("db"), options)?;
/// let file = dir.path().join("bulk.sst");
/// let mut writer = SstWriter::create(&file, &Options::default())?;
/// writer.put(b"a", b"1")?;
/// writer.put(b"b", b"2")?;
/// let info = writer.finish()?;
/// assert_eq!(info.largest_key.as_deref(), Some(&b"b"[..]));
/// let mut moving = IngestOptions::default();
/// moving.move_files = true;
/// db.ingest(&[&file], &moving)?;
/// assert!(!file.exists()); // moved into the database
/// assert_eq!(db.get(b"b")?.as_deref(), Some(&b"2"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct IngestOptions {
    /// Move the files into the database instead of copying them: each is hard-linked (copied
    /// where the file system cannot link, as across file systems) and the source is removed
    /// once the ingest has succeeded. Without it the source files stay as they are. Default:
    /// false.
    pub move_files: bool,
    /// When a file overlaps keys still in the family's memtables, or goes to L0 at a new
    /// sequence number while they hold writes (so that L0 stays ordered by age), flush them
    /// first (writes wait meanwhile); without it such an ingest is refused. Default: true.
    pub allow_blocking_flush: bool,
    /// Accepted for RocksDB's sake, and always done: before anything changes, every entry
    /// of each file is read (to check its order, kind and sequence number), which checks the
    /// crc32c of every block. Default: false.
    pub verify_checksums_before_ingest: bool,
    /// Place the files under all the family's data (RocksDB's `ingest_behind`, for bulk
    /// backfills): in the last level, which [`Options::allow_ingest_behind`] must have
    /// reserved, at sequence number 0, so that every key already in the family, and every
    /// deletion, shadows them. No flush, no rewrite, and writes do not wait. Refused when a
    /// file overlaps a file already in the last level, or a file with sequence number 0 in
    /// the levels above (data written before the last level was reserved, whose deletions
    /// may have been dropped). Snapshots see the ingested keys, as data older than them.
    /// Default: false.
    pub ingest_behind: bool,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            move_files: false,
            allow_blocking_flush: true,
            verify_checksums_before_ingest: false,
            ingest_behind: false,
        }
    }
}

/// Options for reads and iterators.
///
/// Built like [`Options`]: from `ReadOptions::default()`, then field by field.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, ReadOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// for key in ["a", "b", "c", "d"] {
///     db.put(key, "v")?;
/// }
/// let before = db.snapshot();
/// db.put("bb", "v")?; // after the snapshot: not seen below
/// let mut read = ReadOptions::default();
/// read.snapshot = Some(before);
/// read.lower_bound = Some(b"b".to_vec()); // inclusive
/// read.upper_bound = Some(b"d".to_vec()); // exclusive
/// let mut iter = db.iter(&read);
/// iter.seek_to_first();
/// let mut keys = Vec::new();
/// while iter.valid() {
///     keys.push(String::from_utf8(iter.key().to_vec())?);
///     iter.next();
/// }
/// iter.status()?;
/// assert_eq!(keys, ["b", "c"]);
/// # drop(iter);
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Read as of this snapshot; by default, as of the start of the read.
    pub snapshot: Option<Snapshot>,
    /// Iterators see no key below this one (inclusive bound).
    pub lower_bound: Option<Vec<u8>>,
    /// Iterators see no key at or above this one (exclusive bound).
    pub upper_bound: Option<Vec<u8>>,
    /// With a prefix extractor: a seek (or `seek_for_prev`, or the first key found by
    /// `seek_to_first` / `seek_to_last`) sets the iterator's prefix, and it becomes invalid at
    /// the first key of another prefix, as RocksDB's option of that name. A seek to a key
    /// outside the extractor's domain sets no prefix. Ignored with `total_order_seek` and
    /// without an extractor. Default: false.
    pub prefix_same_as_start: bool,
    /// Ignore prefix filters: seeks read every table whatever the target's prefix. Without it
    /// (and with a prefix extractor), a seek skips the tables whose filter holds no key with
    /// the target's prefix, so keys of later prefixes are found only in the tables it read:
    /// as in RocksDB, iterating past the target's prefix without `prefix_same_as_start`
    /// may miss keys; set this to scan across prefixes. Default: false.
    pub total_order_seek: bool,
    /// Bytes an iterator reads from a table file at a time, from its first block read on, a
    /// seek's included (RocksDB's option of that name): for scans that read far and seek
    /// rarely. The blocks read ahead go to the block cache, so without one, reads go block
    /// by block. 0 lets each table's window grow on its own: a seek's block and the next are
    /// read alone, then windows of 16 KiB doubling to 256 KiB as the scan goes on.
    /// Point lookups ignore it. Default: 0.
    pub readahead_size: usize,
    /// Put the data blocks this read brings in from table files into the block cache
    /// (RocksDB's option of that name). Off, each is used for this read and dropped: for a
    /// scan or a batch job over data that should not push out what other reads keep in the
    /// cache. A block the cache already holds is still read from it, and index and filter
    /// blocks are cached as always. An iterator that does not fill the cache reads ahead
    /// into a window of its own instead (as RocksDB's iterators read into their prefetch
    /// buffer). Default: true.
    pub fill_cache: bool,
    /// Check the checksum of each data block this read brings in from a table file
    /// (RocksDB's `verify_checksums`). Off, a damaged data block is not reported as such:
    /// the read returns what its bytes decode to, or fails on what does not decode. Blocks
    /// of a mapped table read unchecked are checked by the next read that asks; a block read
    /// unchecked into the block cache is served from it unchecked, as in RocksDB. Index and
    /// filter blocks are checked as always. Default: true.
    pub verify_checksums: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            snapshot: None,
            lower_bound: None,
            upper_bound: None,
            prefix_same_as_start: false,
            total_order_seek: false,
            readahead_size: 0,
            fill_cache: true,
            verify_checksums: true,
        }
    }
}
