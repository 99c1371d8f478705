//! Building a table outside any database, for bulk loading with `Db::ingest` (RocksDB's
//! `SstFileWriter`).
//!
//! The file is an ordinary table (layout in `table`), written with a column family's table
//! options: block size, restart interval, bloom filter, compression, prefix extractor, and
//! the family's comparator, whose name the table records (`strata.comparator`) as the tables
//! a database writes do. Each entry is an internal key with sequence number 0: the database
//! gives the file its sequence number when it ingests it (see `db/ingest.rs`).
//!
//! Rules (each refused with an error naming the keys):
//! - point keys (puts, merges, deletes) come in strictly increasing order of the comparator:
//!   a key equal to or before the previous one is refused, naming both;
//! - range deletions `[begin, end)` come in any order, beside the point keys. They do not
//!   delete the point keys of the same file (both have the same sequence number, and a range
//!   deletion covers only older entries), as in RocksDB;
//! - a file with no entry at all is refused by [`SstWriter::finish`].
//!
//! A writer dropped before `finish`, or whose `finish` fails, deletes its file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::comparator::KeyOrder;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::key::{append_internal_key, ValueKind};
use crate::options::{CfOptions, Options};
use crate::table::TableBuilder;
use crate::util::printable;
use crate::write_batch::{MAX_KEY_LEN, MAX_VALUE_LEN};

/// Writes a table of sorted entries that [`Db::ingest`](crate::Db::ingest) can add to a
/// database.
///
/// ```
/// use strata::{Db, IngestOptions, Options, SstWriter};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let sst = dir.path().join("bulk.sst");
/// let mut writer = SstWriter::create(&sst, &options)?;
/// writer.put(b"apple", b"red")?;
/// writer.put(b"banana", b"yellow")?;
/// writer.delete(b"cherry")?;
/// let info = writer.finish()?;
/// assert_eq!((info.entries, info.smallest_key.as_deref()), (3, Some(&b"apple"[..])));
///
/// let db = Db::open(dir.path().join("db"), options)?;
/// db.put(b"cherry", b"dark red")?;
/// db.ingest(&[&sst], &IngestOptions::default())?;
/// assert_eq!(db.get(b"banana")?.as_deref(), Some(&b"yellow"[..]));
/// assert_eq!(db.get(b"cherry")?, None); // the file's delete is newer than the put
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SstWriter {
    /// `None` once finished.
    builder: Option<TableBuilder>,
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    order: KeyOrder,
    /// The first point key added, empty before it.
    smallest: Vec<u8>,
    /// The last point key added.
    last: Vec<u8>,
    entries: u64,
    range_deletions: u64,
    /// The smallest begin and largest end of the range deletions added.
    range_bounds: Option<(Vec<u8>, Vec<u8>)>,
    key_buf: Vec<u8>,
}

/// What [`SstWriter::finish`] wrote (RocksDB's `ExternalSstFileInfo`).
///
/// The example of [`IngestOptions`](crate::IngestOptions) reads one.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SstFileInfo {
    /// The file written.
    pub path: PathBuf,
    /// The first point key (put, merge or delete); `None` if the file holds range deletions
    /// only.
    pub smallest_key: Option<Vec<u8>>,
    /// The last point key.
    pub largest_key: Option<Vec<u8>>,
    /// The smallest begin of the range deletions, if any.
    pub smallest_range_deletion: Option<Vec<u8>>,
    /// The largest (exclusive) end of the range deletions, if any.
    pub largest_range_deletion: Option<Vec<u8>>,
    /// Point entries in the file.
    pub entries: u64,
    /// Range deletions added (empty ones are not stored).
    pub range_deletions: u64,
    /// Bytes in the file.
    pub file_size: u64,
}

impl SstWriter {
    /// Creates the table `path` (replacing a file of that name), to be written with the
    /// table options of `options` (those the default column family uses) and in its
    /// file system.
    pub fn create(path: impl AsRef<Path>, options: &Options) -> Result<SstWriter> {
        SstWriter::create_for(path.as_ref(), options.clone())
    }

    /// Creates the table `path` for the column family whose options are `cf` (its
    /// comparator, block size, filter, compression, prefix extractor); the file system is
    /// that of `options`.
    pub fn create_cf(
        path: impl AsRef<Path>,
        options: &Options,
        cf: &CfOptions,
    ) -> Result<SstWriter> {
        SstWriter::create_for(path.as_ref(), options.for_family(cf))
    }

    fn create_for(path: &Path, options: Options) -> Result<SstWriter> {
        let file = options.fs.create_writable(path)?;
        Ok(SstWriter {
            builder: Some(TableBuilder::new(file, options.table_options(false))),
            fs: options.fs.clone(),
            path: path.to_path_buf(),
            order: options.key_order(),
            smallest: Vec::new(),
            last: Vec::new(),
            entries: 0,
            range_deletions: 0,
            range_bounds: None,
            key_buf: Vec::new(),
        })
    }

    /// Adds `key` = `value`. Keys must come in increasing order, each once.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), value.as_ref(), ValueKind::Put)
    }

    /// Adds a merge operand for `key` (the database needs a merge operator to read it).
    pub fn merge(&mut self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), operand.as_ref(), ValueKind::Merge)
    }

    /// Adds the deletion of `key`: once ingested, older versions of it are gone.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), b"", ValueKind::Delete)
    }

    /// Adds the deletion of every key in `[begin, end)`, in any order relative to other
    /// entries. It deletes what the database held before the ingest, not the point keys of
    /// this file. An empty range (`begin == end`) deletes nothing and is not stored;
    /// `begin` after `end` is refused.
    pub fn delete_range(&mut self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        let (begin, end) = (begin.as_ref(), end.as_ref());
        self.builder()?;
        for (what, key) in [("begin", begin), ("end", end)] {
            if key.len() > MAX_KEY_LEN {
                return Err(self.refuse(format!(
                    "range deletion {what} of {} bytes is over the limit of {MAX_KEY_LEN}",
                    key.len()
                )));
            }
        }
        if self.order.lt(end, begin) {
            return Err(self.refuse(format!(
                "range deletion begin {} is after its end {} (comparator {})",
                printable(begin),
                printable(end),
                self.order.name()
            )));
        }
        if begin == end {
            return Ok(());
        }
        self.builder()?.add_range_tombstone(begin, end, 0)?;
        self.range_deletions += 1;
        let order = &self.order;
        self.range_bounds = Some(match self.range_bounds.take() {
            None => (begin.to_vec(), end.to_vec()),
            Some((lo, hi)) => (order.min(&lo, begin).to_vec(), order.max(&hi, end).to_vec()),
        });
        Ok(())
    }

    fn add(&mut self, key: &[u8], value: &[u8], kind: ValueKind) -> Result<()> {
        self.builder()?;
        if key.len() > MAX_KEY_LEN {
            return Err(self.refuse(format!(
                "key of {} bytes is over the limit of {MAX_KEY_LEN}",
                key.len()
            )));
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(self.refuse(format!(
                "value of key {} has {} bytes, over the limit of {MAX_VALUE_LEN}",
                printable(key),
                value.len()
            )));
        }
        if self.entries > 0 && !self.order.lt(&self.last, key) {
            let how = match self.order.compare(&self.last, key).is_eq() {
                true => "is the same as",
                false => "comes before",
            };
            return Err(self.refuse(format!(
                "key {} {how} the previous key {}: keys must be added in increasing order \
                 of comparator {}, each once",
                printable(key),
                printable(&self.last),
                self.order.name()
            )));
        }
        self.key_buf.clear();
        append_internal_key(&mut self.key_buf, key, 0, kind as u8);
        let key_buf = std::mem::take(&mut self.key_buf);
        let added = self.builder()?.add(&key_buf, value);
        self.key_buf = key_buf;
        added?;
        if self.entries == 0 {
            self.smallest = key.to_vec();
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        self.entries += 1;
        Ok(())
    }

    fn builder(&mut self) -> Result<&mut TableBuilder> {
        let path = &self.path;
        self.builder.as_mut().ok_or_else(|| {
            Error::InvalidArgument(format!("table {} is already finished", path.display()))
        })
    }

    fn refuse(&self, why: String) -> Error {
        Error::InvalidArgument(format!("table {}: {why}", self.path.display()))
    }

    /// Bytes the file will have if finished now (roughly).
    pub fn file_size(&self) -> u64 {
        self.builder.as_ref().map_or(0, |b| b.file_size())
    }

    /// Writes the table's index, filter and properties, syncs the file and returns what it
    /// holds. A table with no entry and no range deletion is refused (and deleted).
    pub fn finish(mut self) -> Result<SstFileInfo> {
        if self.entries == 0 && self.range_deletions == 0 {
            return Err(self.refuse("no entry was added; an empty table cannot be ingested".into()));
        }
        let builder = self.builder.take();
        let (file_size, _) = match builder.map(|b| b.finish()) {
            Some(Ok(done)) => done,
            Some(Err(e)) => {
                let _ = self.fs.remove_file(&self.path);
                return Err(e);
            }
            None => return Err(self.refuse("already finished".into())),
        };
        let points = self.entries > 0;
        let (lo, hi) = self.range_bounds.take().unzip();
        Ok(SstFileInfo {
            path: self.path.clone(),
            smallest_key: points.then(|| std::mem::take(&mut self.smallest)),
            largest_key: points.then(|| std::mem::take(&mut self.last)),
            smallest_range_deletion: lo,
            largest_range_deletion: hi,
            entries: self.entries,
            range_deletions: self.range_deletions,
            file_size,
        })
    }
}

impl Drop for SstWriter {
    /// An unfinished table is of no use: its file goes.
    fn drop(&mut self) {
        if self.builder.take().is_some() {
            let _ = self.fs.remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iterator::InternalIterator;
    use crate::table::reader::TableReadOptions;
    use crate::table::Table;
    use crate::ErrorKind;

    fn options() -> Options {
        Options::default()
    }

    /// Refusals name the keys, and leave the writer usable for keys in order.
    #[test]
    fn refuses_keys_out_of_order_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let mut w = SstWriter::create(&path, &options()).unwrap();
        w.put(b"b", b"1").unwrap();
        let cases: &[(&[u8], &str)] = &[
            (b"b", "key b is the same as the previous key b"),
            (b"a", "key a comes before the previous key b"),
        ];
        for (key, message) in cases {
            let e = w.put(key, b"x").unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.to_string().contains(message), "{e}");
            assert!(e.to_string().contains("t.sst"), "{e}");
        }
        let e = w.delete_range(b"z", b"c").unwrap_err();
        assert!(e.to_string().contains("begin z is after its end c"), "{e}");
        w.delete(b"c").unwrap();
        let info = w.finish().unwrap();
        assert_eq!(info.entries, 2);
        assert_eq!(info.largest_key.as_deref(), Some(&b"c"[..]));
    }

    #[test]
    fn an_empty_table_is_refused_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let w = SstWriter::create(&path, &options()).unwrap();
        let e = w.finish().unwrap_err();
        assert!(e.to_string().contains("no entry was added"), "{e}");
        assert!(!path.exists());
        let w = SstWriter::create(&path, &options()).unwrap();
        drop(w);
        assert!(!path.exists(), "an unfinished table is deleted");
    }

    /// The table holds internal keys at sequence 0 in the family's order, and records the
    /// comparator's name.
    #[test]
    fn writes_the_family_order_and_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let cf = CfOptions {
            comparator: Arc::new(crate::ReverseBytewiseComparator),
            ..CfOptions::default()
        };
        let mut w = SstWriter::create_cf(&path, &options(), &cf).unwrap();
        w.put(b"c", b"3").unwrap();
        w.merge(b"b", b"2").unwrap();
        w.delete(b"a").unwrap();
        w.delete_range(b"z", b"b").unwrap(); // reverse order: z comes first
        let e = w.put(b"d", b"x").unwrap_err();
        assert!(
            e.to_string().contains("rocksdb.ReverseBytewiseComparator"),
            "{e}"
        );
        let info = w.finish().unwrap();
        assert_eq!(info.smallest_range_deletion.as_deref(), Some(&b"z"[..]));
        assert_eq!(info.largest_range_deletion.as_deref(), Some(&b"b"[..]));
        let fs = crate::fs::PosixFs;
        let file = fs.open_random(&path).unwrap();
        let table_options = options().for_family(&cf).table_options(false);
        let table =
            Arc::new(Table::open(file, &path, &TableReadOptions::uncached(table_options)).unwrap());
        assert_eq!(
            table.properties().comparator,
            "rocksdb.ReverseBytewiseComparator"
        );
        let mut it = table.iter();
        it.seek_to_first();
        let mut seen = Vec::new();
        while it.valid() {
            let p = crate::key::ParsedKey::parse(it.key()).unwrap();
            seen.push(format!("{p:?}"));
            it.next();
        }
        assert_eq!(seen, ["c#0,PUT", "b#0,MERGE", "a#0,DEL"]);
        assert_eq!(table.range_tombstones().tombstones().count(), 1);
    }
}
