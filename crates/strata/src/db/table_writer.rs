//! Writing tables, shared by flush and compaction: [`TableOutput`] is one table being written
//! (its file counted under the job's IO class, its key range tracked, finished into the
//! [`FileMeta`] the manifest records), and `write_visible` (from `compaction::operands`) feeds it
//! the entries of an iterator that some reader can still see.
//!
//! A finished table is durable (the builder syncs the file, then the directory is synced)
//! before its `FileMeta` exists, so no manifest edit can name a table that a crash could lose;
//! event listeners hear of it then. A table that fails or is abandoned is deleted (listeners
//! hear of that too, if the file was there); one a crash leaves behind is an orphan that the
//! next open removes.

use super::DbInner;
pub(super) use crate::compaction::operands::write_visible;
use crate::error::Error;
use crate::error::Result;
use crate::filename::table_path;
use crate::fs::{CountedFile, IoClass};
use crate::listener::{
    TableFileCreationInfo, TableFileCreationReason, TableFileDeletionInfo, TableFileDeletionReason,
};
use crate::options::PrepopulateBlockCache;
use crate::table::block::Block;
use crate::table::reader::CachedBlock;
use crate::table::{TableBuilder, TableOptions};
use crate::version::{BlobRefCounter, FileMeta};
use std::path::PathBuf;
use std::sync::Arc;

/// A table being written.
pub(super) struct TableOutput {
    builder: TableBuilder,
    number: u64,
    /// The column family it belongs to, and why it is written, for its creation event.
    family: String,
    reason: TableFileCreationReason,
    smallest: Vec<u8>,
    largest: Vec<u8>,
    /// The table's path, for errors.
    path: PathBuf,
    /// The blob files the table's entries refer to: (records, bytes) by file number.
    blob_refs: BlobRefCounter,
}

impl TableOutput {
    /// Creates table file `number` of family `family`, written by a flush or a compaction
    /// as `class` says (its writes are counted under it).
    pub fn create(
        db: &DbInner,
        family: &str,
        number: u64,
        class: IoClass,
        options: TableOptions,
    ) -> Result<TableOutput> {
        let path = table_path(&db.path, number);
        let file = if db.options.use_direct_io_for_flush_and_compaction {
            db.fs.create_writable_direct(&path)?
        } else {
            db.fs.create_writable(&path)?
        };
        let file = crate::rate_limiter::limit_writes(
            Box::new(CountedFile::new(file, db.io.clone(), class)),
            db.options.rate_limiter.as_ref(),
            class,
        );
        let mut builder = TableBuilder::new(file, options);
        if class == IoClass::Flush {
            // Writers may be waiting for this flush: its last sync should have little left.
            // A compaction's syncs stay at its end, where they delay no writer and do not
            // add journal commits that the WAL's and the flushes' syncs would queue behind.
            builder.sync_in_background();
        }
        Ok(TableOutput {
            builder,
            number,
            family: family.to_string(),
            reason: match class {
                IoClass::Flush => TableFileCreationReason::Flush,
                _ => TableFileCreationReason::Compaction,
            },
            smallest: Vec::new(),
            largest: Vec::new(),
            path,
            blob_refs: BlobRefCounter::default(),
        })
    }

    /// Puts each data block of this table in the block cache as it is written, if the
    /// database has a cache and `prepopulate_block_cache` asks it of flushes (their caller).
    pub fn prepopulate_block_cache(&mut self, db: &DbInner) {
        if db.options.prepopulate_block_cache == PrepopulateBlockCache::FlushOnly {
            self.cache_data_blocks(db, || true);
        }
    }

    /// Inserts each data block `wanted` accepts, as it is written, into the database's block
    /// cache (none without one), keyed as the table cache's readers look blocks up: (file
    /// number, offset). Flushes accept every block (`prepopulate_block_cache`); compactions
    /// those their judge says replace blocks readers used (`warm_cache.rs`).
    pub fn cache_data_blocks(
        &mut self,
        db: &DbInner,
        mut wanted: impl FnMut() -> bool + Send + 'static,
    ) {
        let Some(cache) = db.tables.block_cache() else {
            return;
        };
        let number = self.number;
        self.builder
            .set_data_block_sink(Box::new(move |offset, contents| {
                if !wanted() {
                    return;
                }
                if let Ok(block) = Block::new(contents) {
                    let size = block.size();
                    cache.insert((number, offset), CachedBlock::Block(Arc::new(block)), size);
                }
            }));
    }

    /// This table, announced to listeners as the rewrite of an ingested file.
    pub fn for_ingest(mut self) -> TableOutput {
        self.reason = TableFileCreationReason::Ingest;
        self
    }

    /// The table's file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Appends an entry; keys come in internal-key order. A blob reference is counted
    /// against its blob file.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.blob_refs.add(key, value).map_err(|user_key| {
            Error::corruption(
                &self.path,
                0,
                format!(
                    "an entry of key {user_key} for this table holds a blob reference that \
                     does not decode"
                ),
            )
        })?;
        self.builder.add(key, value)?;
        if self.smallest.is_empty() {
            self.smallest.extend_from_slice(key);
        }
        self.largest.clear();
        self.largest.extend_from_slice(key);
        Ok(())
    }

    /// Stores range deletions in the table. The file's key range is widened to cover them
    /// when it is finished, so a table may hold tombstones only.
    pub fn add_range_tombstones(
        &mut self,
        tombstones: impl IntoIterator<Item = crate::range_del::Tombstone>,
    ) -> Result<()> {
        for t in tombstones {
            self.builder.add_range_tombstone(&t.begin, &t.end, t.seq)?;
        }
        Ok(())
    }

    /// The last point key added (empty before the first).
    pub fn largest(&self) -> &[u8] {
        &self.largest
    }

    /// Bytes the file will have if finished now (roughly).
    pub fn file_size(&self) -> u64 {
        self.builder.file_size()
    }

    /// Finishes the table and makes it durable: the file (by the builder) and the directory
    /// entry. On an error the file is deleted.
    pub fn finish(self, db: &DbInner) -> Result<FileMeta> {
        let number = self.number;
        let (mut smallest, mut largest) = (self.smallest, self.largest);
        if let Some((lo, hi)) = self.builder.range_tombstone_bounds() {
            let order = self.builder.order();
            crate::range_del::widen_bounds(order, &mut smallest, &mut largest, (&lo, &hi));
        }
        let (family, reason, blob_refs) = (self.family, self.reason, self.blob_refs);
        let finished = (|| {
            let (size, props) = self.builder.finish()?;
            db.fs.sync_dir(&db.path)?;
            Ok(FileMeta {
                number,
                size,
                smallest,
                largest,
                smallest_seq: props.smallest_seq,
                largest_seq: props.largest_seq,
                entries: props.entries,
                deletions: props.deletions,
                blob_refs: blob_refs.into_counts(),
                reader: Default::default(),
            })
        })();
        match &finished {
            Ok(meta) if db.events.enabled() => {
                let info = TableFileCreationInfo {
                    cf_name: family,
                    file_number: number,
                    path: table_path(&db.path, number),
                    bytes: meta.size,
                    entries: meta.entries,
                    reason,
                };
                db.notify("on_table_file_created", |l| l.on_table_file_created(&info));
            }
            Ok(_) => {}
            Err(_) => delete_table(db, number),
        }
        finished
    }
}

/// Deletes table file `number` after a failed or cancelled job. A failed delete leaves an
/// orphan that the next open removes.
pub(super) fn delete_table(db: &DbInner, number: u64) {
    let path = table_path(&db.path, number);
    if db.fs.remove_file(&path).is_ok() && db.events.enabled() {
        let info = TableFileDeletionInfo {
            file_number: number,
            path,
            reason: TableFileDeletionReason::Abandoned,
        };
        db.notify("on_table_file_deleted", |l| l.on_table_file_deleted(&info));
    }
}
