//! The table cache: open table readers by file number, at most `max_open_files` of them.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cache::ClockCache;
use crate::error::Result;
use crate::filename::table_path;
use crate::fs::FileSystem;
use crate::table::reader::{BlockCache, TableReadStats};
use crate::table::{Table, TableOptions};

pub(crate) struct TableCache {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    options: TableOptions,
    cache_index_and_filter: bool,
    pub block_cache: Option<Arc<BlockCache>>,
    pub stats: Arc<TableReadStats>,
    open: ClockCache<u64, Table>,
}

impl TableCache {
    pub fn new(
        dir: PathBuf,
        fs: Arc<dyn FileSystem>,
        options: TableOptions,
        block_cache_size: usize,
        cache_index_and_filter: bool,
        max_open_files: usize,
    ) -> TableCache {
        TableCache {
            dir,
            fs,
            options,
            cache_index_and_filter,
            block_cache: (block_cache_size > 0)
                .then(|| Arc::new(BlockCache::new(block_cache_size, 16))),
            stats: Arc::new(TableReadStats::default()),
            open: ClockCache::new(max_open_files, 16),
        }
    }

    /// The open table `number`, opening it if needed.
    pub fn get(&self, number: u64) -> Result<Arc<Table>> {
        if let Some(t) = self.open.get(&number) {
            return Ok(t);
        }
        let path = table_path(&self.dir, number);
        let file = self.fs.open_random(&path)?;
        let table = Arc::new(Table::open(
            file,
            &path,
            number,
            self.options,
            self.block_cache.clone(),
            self.cache_index_and_filter,
            self.stats.clone(),
        )?);
        self.open.insert(number, table.clone(), 1);
        Ok(table)
    }

    /// Forgets table `number` (deleted by a compaction).
    pub fn evict(&self, number: u64) {
        self.open.remove(&number);
    }

    /// Number of tables open.
    pub fn open_tables(&self) -> usize {
        self.open.usage()
    }
}
