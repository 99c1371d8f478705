//! Values put in blob files as they are written (`Options::blob_separation_at_write`), so that
//! a large value is written once instead of twice (to the WAL, then to a blob file at flush).
//!
//! The write leader, holding the writer lock, hands each put of a separating family whose
//! value has at least `min_blob_size` bytes to the family's active blob file, and writes the
//! group's WAL record with a blob-reference record (`write_batch`, kind 17) in the put's
//! place. The memtable still takes the put with its value: reads do not change. Each family
//! has at most one active file, and it belongs to one memtable, the family's active one.
//!
//! Invariants that keep the WAL's references good:
//! - A group's values reach the file (a write call) before its WAL record does, and a synced
//!   group syncs, before the WAL, every active file holding records not yet synced (the WAL
//!   sync makes earlier groups' records durable too, whichever family they wrote). The
//!   directory entry is synced when the file is created, before any WAL record names it.
//! - A memtable switch finishes (footer, sync) the active file of every family whose
//!   memtable it replaces, and syncs the others', before it syncs the old WAL: every WAL but
//!   the newest names only durable records.
//! - The flush of a memtable writes, for each put the write path separated, the reference it
//!   was given (found by sequence number) instead of writing the value again, and adds the
//!   memtable's files to the version in the same edit as its table. A file's records that
//!   the table does not refer to (values overwritten in the memtable) are its garbage.
//! - Until then the files are named by no version. Open deletes a blob file no version names
//!   only after the replay, if no replayed record named it. Recovery reads each referenced
//!   value back (the file may lack its footer) into a plain put; the recovered memtables'
//!   flushes separate them anew, and the old file is deleted once the newest WAL that named
//!   it is (replay gives each WAL its own memtables, so a file's values may be spread over
//!   several of them, and a WAL numbered above the file may name it).

use std::collections::HashMap;
use std::path::Path;

use parking_lot::Mutex;

use super::column_family::{ColumnFamilyData, Families};
use super::DbInner;
use crate::blob::reader::read_unfinished;
use crate::blob::writer::BlobFileWriter;
use crate::blob::BlobIndex;
use crate::error::Result;
use crate::filename::blob_path;
use crate::fs::{CountedFile, FileSystem, IoClass, RandomAccessFile};
use crate::key::{SequenceNumber, ValueKind};
use crate::options::Options;
use crate::version::BlobFileMeta;
use crate::write_batch::{copy_records_separating, encode_header, WriteBatch};

/// Whether a family with `options` separates values as they are written.
pub(super) fn separates_at_write(options: &Options) -> bool {
    options.enable_blob_files && options.blob_separation_at_write
}

/// The blob files the write path appends to: at most one per family, only the leader's.
#[derive(Default)]
pub(crate) struct ActiveBlobFiles {
    by_family: HashMap<u32, ActiveFile>,
}

struct ActiveFile {
    writer: BlobFileWriter,
    /// The memtable whose values the file holds.
    memtable: u64,
    /// Records were added since the last write call.
    unwritten: bool,
    /// Records were added since the last sync.
    unsynced: bool,
}

impl ActiveBlobFiles {
    /// The numbers of the active files.
    pub fn numbers(&self) -> impl Iterator<Item = u64> + '_ {
        self.by_family.values().map(|f| f.writer.number())
    }

    /// Hands what the files hold to the operating system and syncs those with records not
    /// yet synced: before a WAL sync, which makes every record it names durable, whichever
    /// group wrote it.
    pub fn sync(&mut self) -> Result<()> {
        for file in self.by_family.values_mut() {
            file.sync()?;
        }
        Ok(())
    }
}

impl ActiveFile {
    /// Syncs the file if it holds records not yet synced.
    fn sync(&mut self) -> Result<()> {
        if self.unsynced {
            self.writer.sync()?;
            self.unwritten = false;
            self.unsynced = false;
        }
        Ok(())
    }

    /// Finishes the file and hands it to its memtable's flush in `family`.
    fn finish_for_flush(self, family: &ColumnFamilyData) -> Result<()> {
        let meta = finish(self.writer)?;
        family.separated_at_write.add_file(self.memtable, meta);
        Ok(())
    }
}

/// What the write path separated into one memtable's blob files: for its flush.
#[derive(Default)]
pub(crate) struct MemtableBlobs {
    /// The reference given to each separated put, by sequence number, ascending.
    pub refs: Vec<(SequenceNumber, BlobIndex)>,
    /// The memtable's blob files, finished and synced (set by the switch that made the
    /// memtable immutable).
    pub files: Vec<BlobFileMeta>,
}

/// A family's [`MemtableBlobs`], by memtable id.
#[derive(Default)]
pub(crate) struct SeparatedAtWrite {
    by_memtable: Mutex<HashMap<u64, MemtableBlobs>>,
}

impl SeparatedAtWrite {
    /// Takes what memtable `id` has (for its flush).
    pub fn take(&self, id: u64) -> Option<MemtableBlobs> {
        self.by_memtable.lock().remove(&id)
    }

    /// Gives back what [`SeparatedAtWrite::take`] took, for a flush that failed.
    pub fn put_back(&self, id: u64, blobs: MemtableBlobs) {
        self.by_memtable.lock().insert(id, blobs);
    }

    /// The numbers of the finished files of memtables not yet flushed.
    pub fn file_numbers(&self) -> Vec<u64> {
        let by_memtable = self.by_memtable.lock();
        by_memtable
            .values()
            .flat_map(|m| m.files.iter().map(|f| f.number))
            .collect()
    }

    fn add_refs(&self, id: u64, refs: impl Iterator<Item = (SequenceNumber, BlobIndex)>) {
        self.by_memtable
            .lock()
            .entry(id)
            .or_default()
            .refs
            .extend(refs);
    }

    fn add_file(&self, id: u64, meta: BlobFileMeta) {
        self.by_memtable
            .lock()
            .entry(id)
            .or_default()
            .files
            .push(meta);
    }
}

impl DbInner {
    /// The WAL record of a group of `batches` numbered from `first_seq` (`count` updates),
    /// with the large puts of separating families written to their blob files and replaced
    /// by references; `None` when no put of the group is separated (the WAL takes the batches
    /// as they are). With `sync`, the files written are synced.
    pub(super) fn separate_group<'a>(
        &self,
        active: &mut ActiveBlobFiles,
        families: &Families,
        batches: impl Iterator<Item = &'a WriteBatch> + Clone,
        first_seq: SequenceNumber,
        count: u64,
        sync: bool,
    ) -> Result<Option<Vec<u8>>> {
        if !families.values().any(|f| separates_at_write(&f.options)) {
            return Ok(None);
        }
        let separates = |cf: u32, len: usize| {
            families.get(&cf).is_some_and(|f| {
                separates_at_write(&f.options) && len as u64 >= f.options.min_blob_size
            })
        };
        let any = batches.clone().any(|b| {
            b.iter()
                .flatten()
                .any(|e| e.kind == ValueKind::Put && separates(e.cf, e.value.len()))
        });
        if !any {
            return Ok(None);
        }
        let mut record = Vec::new();
        encode_header(&mut record, first_seq, count as u32);
        let mut refs: Vec<(u32, SequenceNumber, BlobIndex)> = Vec::new();
        let mut seq = first_seq;
        for batch in batches {
            copy_records_separating(batch.records(), &mut record, |entry, reference| {
                let this = seq;
                seq += 1;
                if entry.kind != ValueKind::Put || !separates(entry.cf, entry.value.len()) {
                    return Ok(false);
                }
                let index = self.write_blob_at_write(active, families, entry.cf, entry)?;
                index.encode_to(reference);
                refs.push((entry.cf, this, index));
                Ok(true)
            })?;
        }
        debug_assert_eq!(seq, first_seq + count);
        // A synced group's WAL sync makes the earlier groups' records durable too: every file
        // they wrote to is synced, not only this group's.
        match sync {
            true => active.sync()?,
            false => {
                for file in active.by_family.values_mut().filter(|f| f.unwritten) {
                    file.writer.write_out()?;
                    file.unwritten = false;
                }
            }
        }
        // Groups go in sequence order: each memtable's references stay sorted.
        for run in refs.chunk_by(|a, b| a.0 == b.0) {
            let cf = &families[&run[0].0];
            let memtable = active.by_family[&run[0].0].memtable;
            cf.separated_at_write
                .add_refs(memtable, run.iter().map(|&(_, s, i)| (s, i)));
        }
        Ok(Some(record))
    }

    /// Appends the value of `entry` (a put of family `cf`) to the family's active blob file,
    /// created for its active memtable if it has none or the one it has is full.
    fn write_blob_at_write(
        &self,
        active: &mut ActiveBlobFiles,
        families: &Families,
        cf: u32,
        entry: &crate::write_batch::BatchEntry,
    ) -> Result<BlobIndex> {
        let family = &families[&cf];
        // A family's file always belongs to its active memtable: a switch finishes it.
        let full = active
            .by_family
            .get(&cf)
            .is_some_and(|f| f.writer.file_size() >= family.options.blob_file_size);
        if full {
            if let Some(f) = active.by_family.remove(&cf) {
                f.finish_for_flush(family)?;
            }
        }
        let file = match active.by_family.entry(cf) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let number = self.versions.lock().new_file_number();
                let path = blob_path(&self.path, number);
                let file = self.fs.create_writable(&path)?;
                // The WAL will name the file: its entry must outlast a crash first.
                self.fs.sync_dir(&self.path)?;
                let file = CountedFile::new(file, self.io.clone(), IoClass::Wal);
                let writer = BlobFileWriter::new(
                    Box::new(file),
                    &path,
                    number,
                    cf,
                    family.options.compression,
                )?;
                e.insert(ActiveFile {
                    writer,
                    memtable: family.sv.read().active.id(),
                    unwritten: false,
                    unsynced: false,
                })
            }
        };
        file.unwritten = true;
        file.unsynced = true;
        file.writer.add(entry.key, entry.value)
    }

    /// At a memtable switch, before the old WAL is synced: finishes the active file of each
    /// family in `replaced` (whose active memtable the switch replaces), handing it to that
    /// memtable, and syncs the others. A dropped family's file is let go (an orphan the next
    /// open removes once no WAL names it).
    pub(super) fn seal_blobs_at_write(
        &self,
        active: &mut ActiveBlobFiles,
        families: &Families,
        replaced: &[u32],
    ) -> Result<()> {
        let numbers: Vec<u32> = active.by_family.keys().copied().collect();
        for cf in numbers {
            let Some(family) = families.get(&cf) else {
                active.by_family.remove(&cf);
                continue;
            };
            if replaced.contains(&cf) {
                if let Some(f) = active.by_family.remove(&cf) {
                    f.finish_for_flush(family)?;
                }
            } else if let Some(f) = active.by_family.get_mut(&cf) {
                f.sync()?;
            }
        }
        Ok(())
    }
}

impl DbInner {
    /// The blob files no version names that a live WAL may name: the active files, those of
    /// memtables not yet flushed, and those open kept for the WALs it replayed. With the
    /// writer lock held (`active` is the writer's), so that no write adds one meanwhile.
    pub(super) fn blob_files_wals_may_name(&self, active: &ActiveBlobFiles) -> Vec<u64> {
        let mut numbers: Vec<u64> = active.numbers().collect();
        for cf in self.families().values() {
            numbers.extend(cf.separated_at_write.file_numbers());
        }
        numbers.extend(self.blobs_for_wals.lock().iter().map(|&(n, _)| n));
        numbers.sort_unstable();
        numbers.dedup();
        numbers
    }
}

/// Reads the values a WAL's blob-reference records name, for recovery and repair.
pub(crate) struct WalBlobReader<'a> {
    fs: &'a dyn FileSystem,
    dir: &'a Path,
    open: HashMap<u64, Box<dyn RandomAccessFile>>,
    /// The newest WAL that named each file.
    named_by: HashMap<u64, u64>,
}

impl<'a> WalBlobReader<'a> {
    /// A reader of the blob files of database `dir`.
    pub fn new(fs: &'a dyn FileSystem, dir: &'a Path) -> WalBlobReader<'a> {
        WalBlobReader {
            fs,
            dir,
            open: HashMap::new(),
            named_by: HashMap::new(),
        }
    }

    /// The files read from, each with the newest WAL that named it.
    pub fn files_read(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.named_by.iter().map(|(&file, &wal)| (file, wal))
    }

    /// The value of `key` whose reference is `reference`, in a record of WAL `wal`, checked;
    /// why not, as the WAL record's fault (a missing file, a reference past its end, a bad
    /// record).
    pub fn value(
        &mut self,
        wal: u64,
        key: &[u8],
        reference: &[u8],
    ) -> std::result::Result<Vec<u8>, String> {
        let index = BlobIndex::decode(reference)
            .ok_or_else(|| format!("bad blob reference of {}", crate::util::printable(key)))?;
        let newest = self.named_by.entry(index.file_number).or_insert(wal);
        *newest = (*newest).max(wal);
        let path = blob_path(self.dir, index.file_number);
        let file = match self.open.entry(index.file_number) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                self.fs
                    .open_random(&path)
                    .map_err(|err| format!("{index} of {}: {err}", crate::util::printable(key)))?,
            ),
        };
        read_unfinished(file.as_ref(), &path, key, &index).map_err(|e| e.to_string())
    }
}

/// Finishes an active file: footer, sync; what the version will record of it.
fn finish(writer: BlobFileWriter) -> Result<BlobFileMeta> {
    let number = writer.number();
    let summary = writer.finish()?;
    Ok(BlobFileMeta {
        number,
        records: summary.records,
        file_size: summary.file_size,
        value_bytes: summary.value_bytes,
        ..BlobFileMeta::default()
    })
}
