//! Writing separated values: the blob files of one flush or one compaction key range.
//!
//! A job with key-value separation on (`enable_blob_files`) hands every entry it writes to
//! [`BlobOutput::separate`] before its table: a put whose value has at least `min_blob_size`
//! bytes goes to the job's current blob file, and the table receives, in its place, the same
//! key as a `BlobIndex` entry whose value is the reference. Blob files are cut at
//! `blob_file_size`. A compaction also moves values out of the oldest blob files (garbage
//! collection): a reference into a file below the cutoff number is read and written anew.
//!
//! Order, as for tables: [`BlobOutput::finish`] syncs each blob file and then the directory,
//! before the job's manifest edit names them, so no edit can name a blob file a crash could
//! lose. A job that fails deletes its blob files ([`BlobOutput::abandon`]); one a crash
//! leaves behind is an orphan that the next open removes.

use crate::blob::writer::BlobFileWriter;
use crate::blob::BlobIndex;
use crate::db::DbInner;
use crate::error::Result;
use crate::filename::blob_path;
use crate::fs::{CountedFile, IoClass};
use crate::key::{append_internal_key, ParsedKey, SequenceNumber, ValueKind};
use crate::options::Options;
use crate::table::compression::Compression;
use crate::version::BlobFileMeta;

/// The blob files one job writes.
pub(in crate::db) struct BlobOutput<'a> {
    db: &'a DbInner,
    family: u32,
    min_blob_size: u64,
    blob_file_size: u64,
    compression: Compression,
    class: IoClass,
    /// References into blob files numbered below this are moved (garbage collection); 0 for
    /// none.
    relocate_below: u64,
    /// The references the write path gave the puts it separated, by sequence number (a
    /// flush's, see `at_write`): such a put is written as its reference, not again.
    written_at_put: &'a [(SequenceNumber, BlobIndex)],
    current: Option<BlobFileWriter>,
    finished: Vec<BlobFileMeta>,
    /// Every blob file created, finished or not, to delete if the job fails.
    created: Vec<u64>,
    /// The entry handed back in place of a separated one.
    key: Vec<u8>,
    reference: Vec<u8>,
    /// Values moved out of old blob files, and their bytes.
    pub relocated: u64,
    pub relocated_bytes: u64,
}

impl<'a> BlobOutput<'a> {
    /// The blob output of a job of family `family` with `options`, whose writes are counted
    /// under `class`; `None` when the family does not separate values and moves none.
    /// References into blob files numbered below `relocate_below` are moved into new files.
    pub fn new(
        db: &'a DbInner,
        family: u32,
        options: &Options,
        class: IoClass,
        relocate_below: u64,
    ) -> Option<BlobOutput<'a>> {
        if !options.enable_blob_files && relocate_below == 0 {
            return None;
        }
        Some(BlobOutput {
            db,
            family,
            // With separation off, values moved out of old files come back into the tables.
            min_blob_size: match options.enable_blob_files {
                true => options.min_blob_size,
                false => u64::MAX,
            },
            blob_file_size: options.blob_file_size,
            compression: options.compression,
            class,
            relocate_below,
            written_at_put: &[],
            current: None,
            finished: Vec::new(),
            created: Vec::new(),
            key: Vec::new(),
            reference: Vec::new(),
            relocated: 0,
            relocated_bytes: 0,
        })
    }

    /// Writes each put numbered as in `refs` (ascending) as its reference there: its value is
    /// in a blob file already.
    pub fn with_references_at_put(
        mut self,
        refs: &'a [(SequenceNumber, BlobIndex)],
    ) -> BlobOutput<'a> {
        self.written_at_put = refs;
        self
    }

    /// The entry to write in place of `(ikey, value)`: `None` to write it as it is, or a
    /// blob reference entry for a value this call wrote to a blob file.
    pub fn separate(&mut self, ikey: &[u8], value: &[u8]) -> Result<Option<(&[u8], &[u8])>> {
        let Some(p) = ParsedKey::parse(ikey) else {
            return Ok(None);
        };
        let moved;
        let value = match p.value_kind() {
            Some(ValueKind::Put) => {
                let at_put = self.written_at_put;
                if let Ok(i) = at_put.binary_search_by_key(&p.seq, |&(s, _)| s) {
                    return Ok(Some(self.reference_entry(p.user_key, p.seq, at_put[i].1)));
                }
                value
            }
            Some(ValueKind::BlobIndex) if self.relocate_below > 0 => {
                let index = self.db.blobs.decode(p.user_key, value)?;
                if index.file_number >= self.relocate_below {
                    return Ok(None);
                }
                moved = self.db.blobs.get_uncached(p.user_key, value)?;
                self.relocated += 1;
                self.relocated_bytes += index.size;
                if (moved.len() as u64) < self.min_blob_size {
                    // Back into the table, as the put it stands for.
                    self.key.clear();
                    append_internal_key(&mut self.key, p.user_key, p.seq, ValueKind::Put as u8);
                    self.reference.clear();
                    self.reference.extend_from_slice(&moved);
                    return Ok(Some((&self.key, &self.reference)));
                }
                &moved
            }
            _ => return Ok(None),
        };
        if (value.len() as u64) < self.min_blob_size {
            return Ok(None);
        }
        let index = self.write(p.user_key, value)?;
        Ok(Some(self.reference_entry(p.user_key, p.seq, index)))
    }

    /// The blob reference entry of `user_key` at `seq` for a value at `index`.
    fn reference_entry(
        &mut self,
        user_key: &[u8],
        seq: SequenceNumber,
        index: BlobIndex,
    ) -> (&[u8], &[u8]) {
        self.key.clear();
        append_internal_key(&mut self.key, user_key, seq, ValueKind::BlobIndex as u8);
        self.reference.clear();
        index.encode_to(&mut self.reference);
        (&self.key, &self.reference)
    }

    /// Appends `value` of `user_key` to the current blob file (a new one if there is none
    /// or it is full).
    fn write(&mut self, user_key: &[u8], value: &[u8]) -> Result<BlobIndex> {
        if self
            .current
            .as_ref()
            .is_some_and(|w| w.file_size() >= self.blob_file_size)
        {
            self.finish_current()?;
        }
        let writer = match self.current.take() {
            Some(w) => w,
            None => {
                let db = self.db;
                let number = db.versions.lock().new_file_number();
                let path = blob_path(&db.path, number);
                self.created.push(number);
                let file = if db.options.use_direct_io_for_flush_and_compaction {
                    db.fs.create_writable_direct(&path)?
                } else {
                    db.fs.create_writable(&path)?
                };
                let file = crate::rate_limiter::limit_writes(
                    Box::new(CountedFile::new(file, db.io.clone(), self.class)),
                    db.options.rate_limiter.as_ref(),
                    self.class,
                );
                BlobFileWriter::new(file, &path, number, self.family, self.compression)?
            }
        };
        let writer = self.current.insert(writer);
        writer.add(user_key, value)
    }

    fn finish_current(&mut self) -> Result<()> {
        if let Some(w) = self.current.take() {
            let number = w.number();
            let summary = w.finish()?;
            self.finished.push(BlobFileMeta {
                number,
                records: summary.records,
                file_size: summary.file_size,
                value_bytes: summary.value_bytes,
                ..BlobFileMeta::default()
            });
        }
        Ok(())
    }

    /// Finishes the blob files and makes them durable (each file, then the directory); what
    /// the job's manifest edit adds. On an error every file of the job is deleted.
    pub fn finish(mut self) -> Result<Vec<BlobFileMeta>> {
        let result = self
            .finish_current()
            .and_then(|()| match self.finished.is_empty() {
                true => Ok(()),
                false => self.db.fs.sync_dir(&self.db.path),
            });
        match result {
            Ok(()) => {
                self.created.clear();
                Ok(std::mem::take(&mut self.finished))
            }
            Err(e) => {
                self.abandon();
                Err(e)
            }
        }
    }

    /// Deletes every blob file the job created (the job failed or was cancelled). A failed
    /// delete leaves an orphan that the next open removes.
    pub fn abandon(&mut self) {
        self.current = None;
        for n in self.created.drain(..) {
            let _ = self.db.fs.remove_file(&blob_path(&self.db.path, n));
        }
    }
}

impl Drop for BlobOutput<'_> {
    /// A job dropped without `finish` (an error on the way) leaves nothing behind.
    fn drop(&mut self) {
        self.abandon();
    }
}
