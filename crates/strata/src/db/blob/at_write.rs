//! Values put in blob files as they are written (`Options::blob_separation_at_write`), so that
//! a large value is written once instead of twice (to the WAL, then to a blob file at flush).
//!
//! Each writer puts the large values of its batch (puts of a separating family whose value
//! has at least `min_blob_size` bytes) into the family's active blob file before it joins
//! the write queue ([`DbInner::prewrite_blobs`]), under the files' own lock, so that the
//! value's write call runs beside the WAL stage of the group ahead instead of inside its own
//! group's. The group's leader then writes the WAL record with a blob-reference record
//! (`write_batch`, kind 17) in each such put's place. The memtable still takes the put with
//! its value: reads do not change. Each family has at most one active file, and it belongs to
//! one memtable, the family's active one. A reference the writer got is used only if its
//! file still belongs to the family's active memtable when the leader writes the record (a
//! switch may have come in between); otherwise, and for puts no writer put in a file first
//! (a write checked for conflicts under the writer lock, say), the leader appends the value
//! itself, under the writer lock. A value written first and not used is garbage of its file
//! from the start.
//!
//! Invariants that keep the WAL's references good:
//! - A group's values reach the file (a write call) before its WAL record does, and a synced
//!   group syncs, before the WAL, every active file holding records not yet synced (the WAL
//!   sync makes earlier groups' records durable too, whichever family they wrote), also when
//!   it separated no value itself. The directory entry is synced when the file is created,
//!   before any WAL record names it.
//! - A memtable switch finishes (footer, sync) the active file of every family whose
//!   memtable it replaces, and syncs the others', before it syncs the old WAL: every WAL but
//!   the newest names only durable records. The files' lock is held for each append, so a
//!   switch never finishes a file in the middle of one. (Every 4 MiB a file is also synced
//!   in the background, `write/wal_sync.rs`: that only makes the switch's sync cheaper.) A file that
//!   cannot be finished marks its memtable, whose flush is then refused.
//! - A file is created only for the family's active memtable, under the files' lock, and
//!   never for a memtable a switch has sealed (`ActiveBlobFiles::sealed`): the switch seals
//!   before it replaces the memtable, and a writer that looks in between sees the sealed one
//!   still active and leaves its values to the leader.
//! - After a failed append (a full disk, say) the files take no more: the failing writer's
//!   error stops the write path, and every later append reports it
//!   (`ActiveBlobFiles::failed`), so no WAL record can name bytes after the failure.
//! - Once the write path has stopped for any cause (a failed WAL write too), writers put no
//!   more values in the files before they queue (`ActiveBlobFiles::writes_stopped`): the
//!   leader would refuse their writes, and the values would only be garbage.
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
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::blob::reader::read_unfinished;
use crate::blob::writer::BlobFileWriter;
use crate::blob::BlobIndex;
use crate::db::families::{ColumnFamilyData, Families};
use crate::db::lock_order::Guard;
use crate::db::write::wal_sync::{WalSyncQueue, BACKGROUND_SYNC_BYTES};
use crate::db::DbInner;
use crate::error::Result;
use crate::filename::blob_path;
use crate::fs::{CountedFile, FileSystem, IoClass, RandomAccessFile};
use crate::key::{SequenceNumber, ValueKind};
use crate::options::Options;
use crate::version::BlobFileMeta;
use crate::write_batch::{copy_records_separating, encode_header, WriteBatch};

/// Whether a family with `options` separates values as they are written.
pub(in crate::db) fn separates_at_write(options: &Options) -> bool {
    options.enable_blob_files && options.blob_separation_at_write
}

/// Whether any of `families` separates values as they are written.
pub(in crate::db) fn any_separates_at_write(families: &Families) -> bool {
    families.values().any(|f| separates_at_write(&f.options))
}

impl DbInner {
    /// Notes that `families` is about to be the family set: writes look for values to put in
    /// blob files from then on if one of them separates at write.
    pub(in crate::db) fn note_families(&self, families: &Families) {
        if any_separates_at_write(families) {
            self.blobs_at_write
                .separating
                .store(true, Ordering::Relaxed);
        }
    }
}

/// The blob files the write path appends to: at most one per family, behind one lock
/// (`DbInner::blobs_at_write`) that writers take before they queue and leaders inside the WAL
/// stage. Lock order: the writer lock, then this, then the version set.
pub(crate) struct ActiveBlobFiles {
    by_family: HashMap<u32, ActiveFile>,
    /// Per family, the memtable the last switch sealed the files of: no file is created for
    /// it again while the switch is still replacing it.
    sealed: HashMap<u32, u64>,
    /// The error of a failed append: the files take no more.
    failed: Option<crate::error::Error>,
    /// Set when the write path stops (`WriterState::stop`): writers no longer put values
    /// here before they queue, since the leader refuses their writes.
    writes_stopped: bool,
    /// Where a file that has grown by `BACKGROUND_SYNC_BYTES` is sent to be synced while
    /// writes go on (`write/wal_sync.rs`), so that the switch that finishes it has little left.
    background_sync: Arc<WalSyncQueue>,
}

/// The values a writer put in blob files before joining the queue, for its batch's leader.
pub(crate) struct Prewritten {
    /// Ascending by `update`.
    refs: Vec<PrewrittenRef>,
}

struct PrewrittenRef {
    /// The put's position among the batch's updates.
    update: u32,
    /// The memtable the file belongs to.
    memtable: u64,
    index: BlobIndex,
}

struct ActiveFile {
    writer: BlobFileWriter,
    /// The file's size when it was last sent to be synced in the background.
    sent_to_sync_at: u64,
    /// The memtable whose values the file holds.
    memtable: u64,
    /// Records were added since the last write call.
    unwritten: bool,
    /// Records were added since the last sync.
    unsynced: bool,
}

impl ActiveBlobFiles {
    /// No files yet; grown files are synced in the background through `background_sync`.
    pub fn new(background_sync: Arc<WalSyncQueue>) -> ActiveBlobFiles {
        ActiveBlobFiles {
            by_family: HashMap::new(),
            sealed: HashMap::new(),
            failed: None,
            writes_stopped: false,
            background_sync,
        }
    }

    /// Hands the records added since the last write call to the operating system, and each
    /// file grown by `BACKGROUND_SYNC_BYTES` since it was last sent to the background sync.
    fn write_out(&mut self) -> Result<()> {
        for file in self.by_family.values_mut() {
            file.write_out()?;
            let size = file.writer.file_size();
            if size - file.sent_to_sync_at < BACKGROUND_SYNC_BYTES {
                continue;
            }
            file.sent_to_sync_at = size;
            if let Some(sync) = file.writer.background_sync() {
                self.background_sync.request_blob(sync);
            }
        }
        Ok(())
    }

    /// The numbers of the active files.
    pub fn numbers(&self) -> impl Iterator<Item = u64> + '_ {
        self.by_family.values().map(|f| f.writer.number())
    }

    /// Hands what the files hold to the operating system and syncs those with records not
    /// yet synced: before a WAL sync, which makes every record it names durable, whichever
    /// group wrote it.
    pub fn sync(&mut self) -> Result<()> {
        self.appending(|files| files.by_family.values_mut().try_for_each(ActiveFile::sync))
    }

    /// Writers put no more values here before they queue: the write path has stopped.
    pub fn stop_writes(&mut self) {
        self.writes_stopped = true;
    }

    fn check_failed(&self) -> Result<()> {
        match &self.failed {
            Some(e) => Err(crate::error::Error::Unavailable(format!(
                "blob files take no more values after an earlier failure: {e}"
            ))),
            None => Ok(()),
        }
    }

    /// Runs `append` on the files, remembering its failure.
    fn appending<T>(&mut self, append: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.check_failed()?;
        let result = append(self);
        // A value over the format's limits is refused before anything is written.
        if let Err(e) = &result {
            if !is_refusal(e) {
                self.failed = Some(e.duplicate());
            }
        }
        result
    }
}

impl ActiveFile {
    /// Hands the records added since the last write call to the operating system.
    fn write_out(&mut self) -> Result<()> {
        if self.unwritten {
            self.writer.write_out()?;
            self.unwritten = false;
        }
        Ok(())
    }

    /// Syncs the file if it holds records not yet synced.
    fn sync(&mut self) -> Result<()> {
        if self.unsynced {
            self.writer.sync()?;
            self.unwritten = false;
            self.unsynced = false;
        }
        Ok(())
    }

    /// Finishes the file and hands it to its memtable's flush in `family`. If it cannot be
    /// finished, the memtable's flush is refused: its puts name the file, which the version
    /// could not hold (the WAL still names the values, for the replay of a reopen).
    fn finish_for_flush(self, family: &ColumnFamilyData) -> Result<()> {
        let number = self.writer.number();
        match finish(self.writer) {
            Ok(meta) => {
                family.separated_at_write.add_file(self.memtable, meta);
                Ok(())
            }
            Err(e) => {
                let lost = crate::error::Error::Unavailable(format!(
                    "blob file {number}, holding values written at put, could not be finished: \
                     {e}"
                ));
                family.separated_at_write.add_lost(self.memtable, lost);
                Err(e)
            }
        }
    }
}

impl DbInner {
    /// Puts the large values of `batch` (a write that will use the WAL) into their families'
    /// active blob files, before the batch joins the write queue; `None` when it has none, or
    /// none that could be written yet (a switch is sealing the family's files), which the
    /// leader then writes itself. A failure stops the write path, as a failed WAL write does.
    pub(in crate::db) fn prewrite_blobs(&self, batch: &WriteBatch) -> Result<Option<Prewritten>> {
        if !self.blobs_at_write.separating.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let families = self.families();
        let mut refs = Vec::new();
        let mut guard = None;
        for (update, entry) in batch.iter().flatten().enumerate() {
            let Some(family) = families.get(&entry.cf) else {
                continue;
            };
            if entry.kind != ValueKind::Put
                || !separates(&family.current_options(), entry.value.len())
            {
                continue;
            }
            let files = match guard.as_mut() {
                Some(files) => files,
                None => {
                    let files = guard.insert(self.blobs_at_write.active.lock());
                    // Under the lock that close's last WAL sync takes: no file is created
                    // or appended to after the database is closed.
                    self.check_open()?;
                    if files.writes_stopped {
                        // The leader refuses the write, naming what stopped writes.
                        return Ok(None);
                    }
                    files
                }
            };
            let memtable = family.sv.read().active.id();
            let current = match files.by_family.get(&entry.cf) {
                Some(file) => file.memtable == memtable,
                None => files.sealed.get(&entry.cf) != Some(&memtable),
            };
            if !current {
                continue;
            }
            match files.appending(|files| self.append_blob(files, family, memtable, &entry)) {
                Ok(index) => refs.push(PrewrittenRef {
                    update: update as u32,
                    memtable,
                    index,
                }),
                Err(e) => return Err(self.stop_after_prewrite(guard, e)),
            }
        }
        // One write call per file for the batch's values (only this writer's are unwritten:
        // every append under the lock ends with one).
        if let Some(files) = guard.as_mut() {
            let written = files.appending(ActiveBlobFiles::write_out);
            if let Err(e) = written {
                return Err(self.stop_after_prewrite(guard, e));
            }
        }
        Ok((!refs.is_empty()).then_some(Prewritten { refs }))
    }

    /// Stops the write path on `e`, a failed append before queueing, and returns it.
    fn stop_after_prewrite(
        &self,
        guard: Option<Guard<'_, ActiveBlobFiles>>,
        e: crate::error::Error,
    ) -> crate::error::Error {
        // Lock order: the writer lock before the files'.
        drop(guard);
        if !is_refusal(&e) {
            self.commit.writer.lock().stop(&e);
        }
        e
    }

    /// The WAL record of a group of `batches` (each with the values its writer put in blob
    /// files first) numbered from `first_seq` (`count` updates), with the large puts of
    /// separating families replaced by blob references; `None` when no put of the group is
    /// separated (the WAL takes the batches as they are). The leader appends the values no
    /// writer put in a file, or put in one of a memtable no longer active. With `sync`, the
    /// files are synced.
    pub(in crate::db) fn separate_group<'a>(
        &self,
        families: &Families,
        batches: impl Iterator<Item = (&'a WriteBatch, Option<&'a Prewritten>)> + Clone,
        first_seq: SequenceNumber,
        count: u64,
        sync: bool,
    ) -> Result<Option<Vec<u8>>> {
        if !self.blobs_at_write.separating.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let separable = |cf: u32, len: usize| {
            families
                .get(&cf)
                .is_some_and(|f| separates(&f.current_options(), len))
        };
        let any = batches.clone().any(|(b, _)| {
            b.iter()
                .flatten()
                .any(|e| e.kind == ValueKind::Put && separable(e.cf, e.value.len()))
        });
        if !any {
            // The WAL sync makes earlier groups' references durable: their values must be.
            if sync {
                self.blobs_at_write.active.lock().sync()?;
            }
            return Ok(None);
        }
        // The files' lock is taken only to append or sync: a group whose writers put its
        // values in the files already does not wait for a writer appending now.
        let mut files = None;
        let mut record = Vec::new();
        encode_header(&mut record, first_seq, count as u32);
        let mut refs: Vec<(u32, u64, SequenceNumber, BlobIndex)> = Vec::new();
        let mut seq = first_seq;
        for (batch, prewritten) in batches {
            let mut written = prewritten
                .map_or(&[][..], |p| &p.refs[..])
                .iter()
                .peekable();
            let mut update = 0u32;
            copy_records_separating(batch.records(), &mut record, |entry, reference| {
                let (this, position) = (seq, update);
                seq += 1;
                update += 1;
                // Skipped: a put the family's options no longer separate.
                while written.next_if(|r| r.update < position).is_some() {}
                if entry.kind != ValueKind::Put || !separable(entry.cf, entry.value.len()) {
                    return Ok(false);
                }
                let family = &families[&entry.cf];
                let memtable = family.sv.read().active.id();
                // Used only while its file's memtable is the one the put will go to.
                let given = written
                    .next_if(|r| r.update == position)
                    .filter(|r| r.memtable == memtable);
                let index = match given {
                    Some(r) => r.index,
                    None => files
                        .get_or_insert_with(|| self.blobs_at_write.active.lock())
                        .appending(|files| self.append_blob(files, family, memtable, entry))?,
                };
                index.encode_to(reference);
                refs.push((entry.cf, memtable, this, index));
                Ok(true)
            })?;
        }
        debug_assert_eq!(seq, first_seq + count);
        // A synced group's WAL sync makes the earlier groups' records durable too: every file
        // they wrote to is synced, not only this group's.
        if sync {
            files
                .get_or_insert_with(|| self.blobs_at_write.active.lock())
                .sync()?;
        } else if let Some(files) = files.as_mut() {
            files.appending(ActiveBlobFiles::write_out)?;
        }
        // Groups go in sequence order: each memtable's references stay sorted.
        for run in refs.chunk_by(|a, b| a.0 == b.0) {
            let cf = &families[&run[0].0];
            cf.separated_at_write
                .add_refs(run[0].1, run.iter().map(|&(_, _, s, i)| (s, i)));
        }
        Ok(Some(record))
    }

    /// Appends the value of `entry` (a put of `family`, whose active memtable is `memtable`)
    /// to the family's active blob file, created for that memtable if it has none or the one
    /// it has is full.
    fn append_blob(
        &self,
        files: &mut ActiveBlobFiles,
        family: &ColumnFamilyData,
        memtable: u64,
        entry: &crate::write_batch::BatchEntry,
    ) -> Result<BlobIndex> {
        let cf = entry.cf;
        // A family's file always belongs to its active memtable: a switch finishes it.
        let full = files
            .by_family
            .get(&cf)
            .is_some_and(|f| f.writer.file_size() >= family.current_options().blob_file_size);
        if full {
            if let Some(f) = files.by_family.remove(&cf) {
                f.finish_for_flush(family)?;
            }
        }
        let file = match files.by_family.entry(cf) {
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
                    family.current_options().compression,
                )?;
                e.insert(ActiveFile {
                    writer,
                    sent_to_sync_at: 0,
                    memtable,
                    unwritten: false,
                    unsynced: false,
                })
            }
        };
        debug_assert_eq!(file.memtable, memtable, "a file of a sealed memtable");
        file.unwritten = true;
        file.unsynced = true;
        file.writer.add(entry.key, entry.value)
    }

    /// At a memtable switch, before the old WAL is synced: finishes the active file of each
    /// family in `replaced` (whose active memtable the switch replaces), handing it to that
    /// memtable, and syncs the others. A dropped family's file is let go (an orphan the next
    /// open removes once no WAL names it). A failure leaves the files taking no more values.
    pub(in crate::db) fn seal_blobs_at_write(
        &self,
        files: &mut ActiveBlobFiles,
        families: &Families,
        replaced: &[u32],
    ) -> Result<()> {
        files.appending(|files| {
            files.by_family.retain(|cf, _| families.contains_key(cf));
            files.sealed.retain(|cf, _| families.contains_key(cf));
            for family in families.values() {
                let cf = family.id();
                if !replaced.contains(&cf) {
                    if let Some(f) = files.by_family.get_mut(&cf) {
                        f.sync()?;
                    }
                    continue;
                }
                files.sealed.insert(cf, family.sv.read().active.id());
                if let Some(f) = files.by_family.remove(&cf) {
                    f.finish_for_flush(family)?;
                }
            }
            Ok(())
        })
    }

    /// After a switch replaced the empty memtable `id` of `family` (it is dropped, not
    /// flushed): deletes the blob files of values written ahead for it. No WAL record names
    /// them: a group that wrote one inserted into the memtable before the switch, and the
    /// switch waited for it.
    pub(in crate::db) fn drop_blobs_of_empty_memtable(&self, family: &ColumnFamilyData, id: u64) {
        if let Some(blobs) = family.separated_at_write.take(id) {
            for file in &blobs.files {
                // A failed delete leaves an orphan that the next open removes.
                let _ = self.fs.remove_file(&blob_path(&self.path, file.number));
            }
        }
    }
}

/// Whether `e` refused a value without writing anything (the files stay good).
fn is_refusal(e: &crate::error::Error) -> bool {
    matches!(e, crate::error::Error::InvalidArgument(_))
}

/// Whether a value of `len` bytes of a family with `options` is separated as it is written.
fn separates(options: &Options, len: usize) -> bool {
    separates_at_write(options) && len as u64 >= options.min_blob_size
}

impl DbInner {
    /// The blob files no version names that a live WAL may name: the active files, those of
    /// memtables not yet flushed, and those open kept for the WALs it replayed. With the
    /// writer lock held (`active` is the writer's), so that no write adds one meanwhile.
    pub(in crate::db) fn blob_files_wals_may_name(&self, active: &ActiveBlobFiles) -> Vec<u64> {
        let mut numbers: Vec<u64> = active.numbers().collect();
        for cf in self.families().values() {
            numbers.extend(cf.separated_at_write.file_numbers());
        }
        numbers.extend(self.blobs_at_write.for_wals.lock().iter().map(|&(n, _)| n));
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
