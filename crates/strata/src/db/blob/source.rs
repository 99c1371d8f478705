//! Reading separated values: what a read does when the tree holds a blob reference
//! (`ValueKind::BlobIndex`) in place of a value.
//!
//! A `BlobSource` keeps blob files open (at most `max_open_files` of them, evicted like the
//! tables) and keeps the values it reads in the block cache, keyed by (blob file number,
//! record offset): blob files take their numbers from the counter the tables use, so the keys
//! never meet a table's blocks, and values and blocks share one memory budget.
//!
//! A reference that does not decode, a blob file that is missing, and a record that is
//! damaged or belongs to another key are all corruption errors naming the key, the reference
//! and the file; a read never returns a wrong value.

use crate::counter::StripedCounter;
use std::path::PathBuf;
use std::sync::Arc;

use crate::blob::reader::BlobFileReader;
use crate::blob::BlobIndex;
use crate::cache::ClockCache;
use crate::error::{Error, Result};
use crate::filename::blob_path;
use crate::fs::{FileSystem, ReadMode};
use crate::table::reader::{BlockCache, CachedBlock};
use crate::util::printable;

/// Counters of blob reads since open.
#[derive(Debug, Default)]
pub(crate) struct BlobReadStats {
    /// Values read from blob files (cache misses).
    pub reads: StripedCounter,
    /// Bytes of records read from blob files.
    pub bytes_read: StripedCounter,
    /// Values found in the cache.
    pub cache_hits: StripedCounter,
}

/// Open blob files and the cache of their values.
pub(crate) struct BlobSource {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    open: ClockCache<u64, Arc<BlobFileReader>>,
    cache: Option<Arc<BlockCache>>,
    /// How blob files are opened: with direct IO or a memory mapping, or neither.
    mode: ReadMode,
    /// Erase a deleted file's values from the cache (`uncache_aggressiveness` above 0).
    uncache: bool,
    pub stats: BlobReadStats,
}

impl BlobSource {
    pub fn new(
        dir: PathBuf,
        fs: Arc<dyn FileSystem>,
        max_open_files: usize,
        cache: Option<Arc<BlockCache>>,
        mode: ReadMode,
        uncache: bool,
    ) -> BlobSource {
        BlobSource {
            dir,
            fs,
            open: ClockCache::new(max_open_files.max(1), 16),
            cache,
            mode,
            uncache,
            stats: BlobReadStats::default(),
        }
    }

    /// The value of `key` that `reference` (an encoded [`BlobIndex`]) names.
    pub fn get(&self, key: &[u8], reference: &[u8]) -> Result<Vec<u8>> {
        let index = self.decode(key, reference)?;
        let cache_key = (index.file_number, index.offset);
        if let Some(CachedBlock::Blob(value)) = self.cache.as_ref().and_then(|c| c.get(&cache_key))
        {
            self.stats.cache_hits.add(1);
            return Ok(value.to_vec());
        }
        let value = self.read(key, &index)?;
        if let Some(cache) = &self.cache {
            let charge = value.len() + 64;
            cache.insert(
                cache_key,
                CachedBlock::Blob(value.as_slice().into()),
                charge,
            );
        }
        Ok(value)
    }

    /// The value of `key` that `reference` names, read from its file without the cache
    /// (garbage collection: a value moved once is not read again).
    pub fn get_uncached(&self, key: &[u8], reference: &[u8]) -> Result<Vec<u8>> {
        let index = self.decode(key, reference)?;
        self.read(key, &index)
    }

    /// The reference, decoded.
    pub fn decode(&self, key: &[u8], reference: &[u8]) -> Result<BlobIndex> {
        BlobIndex::decode(reference).ok_or_else(|| {
            Error::corruption(
                &self.dir,
                0,
                format!(
                    "key {} holds a blob reference that does not decode ({} bytes)",
                    printable(key),
                    reference.len()
                ),
            )
        })
    }

    fn read(&self, key: &[u8], index: &BlobIndex) -> Result<Vec<u8>> {
        let reader = self.reader(key, index)?;
        let value = reader.get(key, index)?;
        self.stats.reads.add(1);
        self.stats.bytes_read.add(index.size);
        Ok(value)
    }

    /// The open blob file `index` names, opened if needed.
    fn reader(&self, key: &[u8], index: &BlobIndex) -> Result<Arc<BlobFileReader>> {
        self.open_file(index.file_number).map_err(|e| match e {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Error::corruption(
                    blob_path(&self.dir, index.file_number),
                    index.offset,
                    format!(
                        "the blob file of key {} ({index}) is missing",
                        printable(key)
                    ),
                )
            }
            other => other,
        })
    }

    /// Blob file `number`, opened now if it is not open yet. A secondary instance opens
    /// every blob file of a version before installing it (as it does the tables), so that
    /// a file the primary deletes later stays readable through the open descriptor; a file
    /// already gone is an IO error of kind `NotFound`.
    pub fn open_file(&self, number: u64) -> Result<Arc<BlobFileReader>> {
        if let Some(r) = self.open.get(&number) {
            return Ok(r);
        }
        let path = blob_path(&self.dir, number);
        let opened = self.mode.open(self.fs.as_ref(), &path).and_then(|file| {
            // Values are read one record at a time, anywhere in the file.
            file.advise_random();
            BlobFileReader::open(file, &path, number)
        })?;
        let reader = Arc::new(opened);
        self.open.insert(number, reader.clone(), 1);
        Ok(reader)
    }

    /// Forgets blob file `number` (deleted), and with `uncache_aggressiveness` erases its
    /// values from the cache. Where they are in the file is not known without reading it, so
    /// the cache is swept for the file's number: a pass over every entry, once per deleted
    /// blob file (garbage collection deletes few, large files).
    pub fn evict(&self, number: u64) {
        self.open.remove(&number);
        if let Some(cache) = self.cache.as_ref().filter(|_| self.uncache) {
            cache.retain(|&(file, _)| file != number);
        }
    }
}
