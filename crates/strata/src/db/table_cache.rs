//! The table cache: open table readers by file number, at most `max_open_files` of them.
//!
//! A table is opened once even when several readers miss it at the same moment: the first
//! one opens it while the others wait on that table's gate, then find it in the cache.
//! Opening reads the footer, index, filter and properties, so opening it once per miss
//! would multiply that IO by the number of readers.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::cache::ClockCache;
use crate::comparator::KeyOrder;
use crate::error::Result;
use crate::filename::table_path;
use crate::fs::{FileSystem, ReadMode};
use crate::options::Options;
use crate::table::block::BlockOrder;
use crate::table::reader::{new_block_cache, BlockCache, TableReadOptions, TableReadStats};
use crate::table::Table;
use crate::version::FileMeta;

pub(crate) struct TableCache {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    read: TableReadOptions,
    /// Keep the index and filter of tables opened in level 0 with the table rather than in
    /// the block cache (`pin_l0_filter_and_index_blocks_in_cache`).
    pin_l0: bool,
    /// How tables are opened: with direct IO or a memory mapping, or neither.
    mode: ReadMode,
    open: ClockCache<u64, Arc<Table>>,
    /// Every table opened stays open (`max_open_files` unlimited): readers are kept with
    /// their files' metadata as well ([`FileMeta::reader`]).
    keep_readers: bool,
    /// One gate per table being opened now; readers that miss the same table wait on it.
    opening: Mutex<HashMap<u64, Arc<Mutex<()>>>>,
    /// Tables opened since the cache was made.
    opens: AtomicU64,
    /// How hard [`TableCache::evict`] tries to erase an obsolete table's blocks from the
    /// block cache (`uncache_aggressiveness`; [`Table::uncache`]).
    uncache_aggressiveness: u32,
}

impl TableCache {
    /// The tables of database directory `dir`, read as `options` say (the table format
    /// defaults, the block cache, where index and filter blocks live, the most files open,
    /// and how files are opened).
    pub fn new(dir: PathBuf, fs: Arc<dyn FileSystem>, options: &Options) -> TableCache {
        let block_cache_size = options.block_cache_size;
        TableCache {
            dir,
            fs,
            read: TableReadOptions {
                block_cache: (block_cache_size > 0)
                    .then(|| Arc::new(new_block_cache(block_cache_size, 16))),
                cache_index_and_filter: options.cache_index_and_filter_blocks,
                pin_top_level_index_and_filter: options.pin_top_level_index_and_filter,
                ..TableReadOptions::uncached(options.table_options(false))
            },
            pin_l0: options.pin_l0_filter_and_index_blocks_in_cache,
            mode: options.read_mode(),
            open: ClockCache::new(options.max_open_files, 16),
            keep_readers: options.max_open_files == Options::UNLIMITED_OPEN_FILES,
            opening: Mutex::new(HashMap::new()),
            opens: AtomicU64::new(0),
            uncache_aggressiveness: options.uncache_aggressiveness,
        }
    }

    /// The block cache, if there is one (blob values are cached in it too).
    pub fn block_cache(&self) -> Option<Arc<BlockCache>> {
        self.read.block_cache.clone()
    }

    /// Where the tables' reads are counted.
    pub fn stats(&self) -> &Arc<TableReadStats> {
        &self.read.stats
    }

    /// The open table `number`, opening it if needed with user keys in `order` (its
    /// family's; the table is refused if it records another). `level` is the table's level
    /// in the version read: an L0 table is opened with its index and filter pinned under
    /// `pin_l0_filter_and_index_blocks_in_cache`.
    pub fn get(&self, number: u64, order: &KeyOrder, level: usize) -> Result<Arc<Table>> {
        if let Some(t) = self.open.get(&number) {
            return Ok(t);
        }
        let gate = self.opening.lock().entry(number).or_default().clone();
        let result = {
            let _opening = gate.lock();
            match self.open.get(&number) {
                Some(t) => Ok(t), // opened by the reader we waited for
                None => self.open_table(number, order, level),
            }
        };
        let mut opening = self.opening.lock();
        // The last reader through the gate removes it (the map holds one more reference).
        if Arc::strong_count(&gate) == 2 {
            opening.remove(&number);
        }
        result
    }

    /// The open table of file `f`, as [`TableCache::get`] gives it, borrowed from `f` once
    /// kept there: with every table kept open, the first lookup of a file keeps its reader
    /// in [`FileMeta::reader`], and later ones reach it without the cache.
    pub fn get_for<'a>(
        &self,
        f: &'a FileMeta,
        order: &KeyOrder,
        level: usize,
    ) -> Result<Cow<'a, Arc<Table>>> {
        if let Some(table) = f.reader.get() {
            return Ok(Cow::Borrowed(table));
        }
        let table = self.get(f.number, order, level)?;
        Ok(match self.keep_readers {
            true => Cow::Borrowed(f.reader.keep(table)),
            false => Cow::Owned(table),
        })
    }

    fn open_table(&self, number: u64, order: &KeyOrder, level: usize) -> Result<Arc<Table>> {
        let path = table_path(&self.dir, number);
        let file = self.mode.open(self.fs.as_ref(), &path)?;
        // User reads land anywhere in a table: readahead around a block only costs IO.
        file.advise_random();
        let mut read = TableReadOptions {
            cache_id: number,
            ..self.read.clone()
        };
        read.table.comparator = BlockOrder::Internal(order.clone());
        if self.pin_l0 && level == 0 {
            read.cache_index_and_filter = false;
        }
        let table = Arc::new(Table::open(file, &path, &read)?);
        self.opens.fetch_add(1, Ordering::Relaxed);
        self.open.insert(number, table.clone(), 1);
        Ok(table)
    }

    /// Forgets table `number`, which is about to be deleted (a compaction replaced it and
    /// no version names it), erasing its blocks from the block cache if it is open
    /// (`uncache_aggressiveness`). A table not open has its blocks left to the cache's
    /// eviction: opening it only to find them would read its index from the file.
    pub fn evict(&self, number: u64) {
        if let Some(table) = self.open.get(&number) {
            table.uncache(self.uncache_aggressiveness);
        }
        self.open.remove(&number);
    }

    /// Number of tables open.
    pub fn open_tables(&self) -> usize {
        self.open.usage()
    }

    /// Tables opened since the cache was made (a table evicted and read again counts twice).
    pub fn opens(&self) -> u64 {
        self.opens.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::PosixFs;
    use crate::key::{append_internal_key, ValueKind};
    use crate::table::TableBuilder;

    #[test]
    fn readers_missing_together_open_a_table_once() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn FileSystem> = Arc::new(PosixFs);
        let db_options = Options {
            block_cache_size: 1 << 20,
            max_open_files: 100,
            ..Options::default()
        };
        let options = db_options.table_options(false);
        let file = fs.create_writable(&table_path(dir.path(), 7)).unwrap();
        let mut builder = TableBuilder::new(file, options.clone());
        let mut key = Vec::new();
        append_internal_key(&mut key, b"k", 1, ValueKind::Put as u8);
        builder.add(&key, b"v").unwrap();
        builder.finish().unwrap();

        let cache = TableCache::new(dir.path().to_path_buf(), fs, &db_options);
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    start.wait();
                    cache.get(7, &KeyOrder::Bytewise, 0).unwrap();
                });
            }
        });
        assert_eq!(cache.opens(), 1);
        assert_eq!(cache.open_tables(), 1);
        assert!(cache.opening.lock().is_empty(), "gates left behind");

        // A missing table is an error for every reader and leaves no gate behind.
        assert!(cache.get(8, &KeyOrder::Bytewise, 0).is_err());
        assert!(cache.opening.lock().is_empty());
    }

    /// A table's reader is kept with its file's metadata only when every table stays open;
    /// a kept reader is the one the next lookup gets, and a copy of the metadata (a new
    /// version's) starts without one.
    #[test]
    fn readers_are_kept_with_the_file_only_without_an_open_file_limit() {
        #[rustfmt::skip]
        let cases = [
            // (max_open_files, reader kept)
            (1, false),
            (1000, false),
            (Options::UNLIMITED_OPEN_FILES, true),
        ];
        for (max_open_files, kept) in cases {
            let dir = tempfile::tempdir().unwrap();
            let fs: Arc<dyn FileSystem> = Arc::new(PosixFs);
            let db_options = Options {
                max_open_files,
                ..Options::default()
            };
            let file = fs.create_writable(&table_path(dir.path(), 7)).unwrap();
            let mut builder = TableBuilder::new(file, db_options.table_options(false));
            let mut key = Vec::new();
            append_internal_key(&mut key, b"k", 1, ValueKind::Put as u8);
            builder.add(&key, b"v").unwrap();
            builder.finish().unwrap();
            let cache = TableCache::new(dir.path().to_path_buf(), fs, &db_options);
            let meta = FileMeta {
                number: 7,
                ..FileMeta::default()
            };

            let first = cache.get_for(&meta, &KeyOrder::Bytewise, 1).unwrap();
            assert_eq!(meta.reader.get().is_some(), kept, "{max_open_files}");
            assert_eq!(matches!(first, Cow::Borrowed(_)), kept);
            let again = cache.get_for(&meta, &KeyOrder::Bytewise, 1).unwrap();
            assert!(Arc::ptr_eq(&first, &again), "the same open table");
            assert_eq!(cache.opens(), 1);
            let copy = meta.clone();
            assert!(copy.reader.get().is_none() && copy == meta);

            // A kept reader outlives the cache's entry: the file stays open with it.
            cache.evict(7);
            let after = cache.get_for(&meta, &KeyOrder::Bytewise, 1).unwrap();
            assert_eq!(Arc::ptr_eq(&first, &after), kept);
            assert_eq!(cache.opens(), if kept { 1 } else { 2 });
        }
    }

    /// With `cache_index_and_filter_blocks`, opening a table puts its index and filter in
    /// the block cache, except for a table opened in level 0 under
    /// `pin_l0_filter_and_index_blocks_in_cache`, which keeps them itself.
    #[test]
    fn level_0_tables_keep_their_index_and_filter_under_pin_l0() {
        #[rustfmt::skip]
        let cases = [
            // (pin_l0, level, index and filter in the cache)
            (false, 0, true),
            (false, 3, true),
            (true, 0, false),
            (true, 1, true),
        ];
        for (pin_l0, level, in_cache) in cases {
            let dir = tempfile::tempdir().unwrap();
            let fs: Arc<dyn FileSystem> = Arc::new(PosixFs);
            let db_options = Options {
                block_cache_size: 1 << 20,
                cache_index_and_filter_blocks: true,
                pin_l0_filter_and_index_blocks_in_cache: pin_l0,
                bloom_bits_per_key: 10,
                ..Options::default()
            };
            let file = fs.create_writable(&table_path(dir.path(), 7)).unwrap();
            let mut builder = TableBuilder::new(file, db_options.table_options(false));
            for i in 0..100u32 {
                let mut key = Vec::new();
                append_internal_key(&mut key, &i.to_be_bytes(), 1, ValueKind::Put as u8);
                builder.add(&key, b"v").unwrap();
            }
            builder.finish().unwrap();
            let cache = TableCache::new(dir.path().to_path_buf(), fs, &db_options);
            cache.get(7, &KeyOrder::Bytewise, level).unwrap();
            let charged = cache.block_cache().unwrap().usage();
            let case = format!("pin_l0 {pin_l0}, level {level}: {charged} bytes cached");
            assert_eq!(charged > 0, in_cache, "{case}");
        }
    }
}
