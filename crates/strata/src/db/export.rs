//! Moving a column family between databases: RocksDB's `ExportColumnFamily` and
//! `CreateColumnFamilyWithImport`.
//!
//! Export. The family's memtables are flushed, compactions are held off (as for a manual
//! compaction), and each table of its current version is hard-linked (copied across file
//! systems, then synced) into `DIR.tmp`, which is synced and renamed to `DIR`: a crash
//! leaves `DIR.tmp`, never a half export under `DIR`. The returned
//! [`ExportImportFilesMetaData`] names each file with its level, keys and sequence numbers,
//! and the family's comparator. The source database is not changed.
//!
//! Import. Each file named is opened as a table in the new family's comparator and read
//! whole (every block's checksum checked); its key range, sequence numbers and counts are
//! taken from the table itself, and must agree with the metadata (a file that is missing,
//! corrupt or differs is refused, naming it). Files of one level above L0 must not overlap;
//! L0 files are ordered by their sequence numbers, as the tree orders them. The files are
//! brought in under new table numbers (hard links, or synced copies) and the directory
//! synced, then one manifest edit creates the family with them, at their levels: a crash
//! leaves the family whole or absent (tables no edit names are deleted at the next open).
//! Tables holding blob references are refused (their blob files are not exported).
//!
//! Sequence numbers. The imported keys keep theirs. The family is new, so nothing in it can
//! shadow them or be shadowed; but reads see only sequence numbers up to the database's
//! last, so that is raised to the largest imported one (in the same edit, with writes held
//! off): the keys are visible at once, and every later write is newer than all of them.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::metadata::{file_name, LiveFileMetadata};
use super::table_writer::delete_table;
use super::{Db, DbInner};
use crate::column_family::ColumnFamily;
use crate::error::{Error, Result};
use crate::filename::table_path;
use crate::iterator::InternalIterator;
use crate::key::{user_key, ParsedKey, ValueKind};
use crate::listener::FlushReason;
use crate::options::CfOptions;
use crate::table::reader::TableReadOptions;
use crate::table::Table;
use crate::version::{FileMeta, NUM_LEVELS};

/// What [`Db::export_column_family`] wrote, and what
/// [`Db::create_column_family_with_import`] takes (RocksDB's `ExportImportFilesMetaData`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportImportFilesMetaData {
    /// The name of the family's comparator: the importing family must have the same.
    pub db_comparator_name: String,
    /// The tables, each with its level and the directory it is in (the export's).
    pub files: Vec<LiveFileMetadata>,
}

impl Db {
    /// Exports column family `cf` into directory `dir`, which must not exist: its memtables
    /// are flushed, then each of its tables is hard-linked (copied across file systems) into
    /// `dir` (RocksDB's `ExportColumnFamily`). The result names the files, their levels and
    /// their keys: give it to [`Db::create_column_family_with_import`] (of this or another
    /// database) to make a family of them. The database is not changed.
    pub fn export_column_family(
        &self,
        cf: &ColumnFamily,
        dir: impl AsRef<Path>,
    ) -> Result<ExportImportFilesMetaData> {
        self.inner.check_writable()?;
        let cf = self.inner.family(cf)?;
        self.inner.export_family(&cf, dir.as_ref())
    }

    /// Creates column family `name` with `options`, holding the tables `metadata` names at
    /// their levels (RocksDB's `CreateColumnFamilyWithImport`): what
    /// [`Db::export_column_family`] exported. The files are linked (or copied) in; the
    /// export is left as it was. Each file is read whole first: a missing or corrupt file, or
    /// one that differs from the metadata, is refused, naming it, and nothing changes. The
    /// imported keys are readable at once, and writes after the call are newer than them.
    pub fn create_column_family_with_import(
        &self,
        options: CfOptions,
        name: &str,
        metadata: &ExportImportFilesMetaData,
    ) -> Result<ColumnFamily> {
        self.inner.check_writable()?;
        self.inner.import_family(options, name, metadata)
    }
}

/// The tables an import brought in, deleted unless it succeeds.
struct Brought<'a> {
    db: &'a DbInner,
    numbers: Vec<u64>,
    kept: bool,
}

impl Drop for Brought<'_> {
    fn drop(&mut self) {
        if !self.kept {
            for &n in &self.numbers {
                delete_table(self.db, n);
            }
        }
    }
}

impl DbInner {
    fn export_family(
        &self,
        cf: &Arc<super::families::ColumnFamilyData>,
        dir: &Path,
    ) -> Result<ExportImportFilesMetaData> {
        let fs = self.fs.as_ref();
        if fs.exists(dir) {
            return Err(Error::InvalidArgument(format!(
                "export_column_family: directory {} already exists",
                dir.display()
            )));
        }
        self.flush_memtables(Some(cf), FlushReason::Manual)?;
        let mut tmp = dir.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        if fs.exists(&tmp) {
            // A crashed export's leftovers.
            for name in fs.list_dir(&tmp)? {
                fs.remove_file(&tmp.join(name))?;
            }
        }
        fs.create_dir_all(&tmp)?;
        // No compaction deletes a table while it is linked.
        let _exclusive = self.begin_manual_compaction()?;
        let mut files = self.family_files_metadata(cf);
        for f in &mut files {
            let to = tmp.join(&f.name);
            fs.link_or_copy(&table_path(&self.path, f.file_number), &to)?;
            fs.sync_file(&to)?;
            f.directory = dir.to_path_buf();
        }
        fs.sync_dir(&tmp)?;
        fs.rename(&tmp, dir)?;
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs.sync_dir(parent)?;
        }
        self.info_log.info(format_args!(
            "exported column family '{}' into {}: {} tables",
            cf.name(),
            dir.display(),
            files.len()
        ));
        Ok(ExportImportFilesMetaData {
            db_comparator_name: cf.options.comparator.name().to_string(),
            files,
        })
    }

    fn import_family(
        &self,
        options: CfOptions,
        name: &str,
        metadata: &ExportImportFilesMetaData,
    ) -> Result<ColumnFamily> {
        let refuse = |why: String| {
            Error::InvalidArgument(format!("create_column_family_with_import '{name}': {why}"))
        };
        if options.comparator.name() != metadata.db_comparator_name {
            return Err(refuse(format!(
                "the export's comparator is {:?}, the options' {:?}",
                metadata.db_comparator_name,
                options.comparator.name()
            )));
        }
        if options.ttl.is_some() {
            return Err(refuse("a family with a ttl cannot be imported into".into()));
        }
        let family_options = self.options.for_family(&options);
        let order = family_options.key_order();
        let mut brought = Brought {
            db: self,
            numbers: Vec::new(),
            kept: false,
        };
        let mut placed: Vec<(usize, FileMeta)> = Vec::new();
        for f in &metadata.files {
            if f.level >= family_options.num_levels.min(NUM_LEVELS) {
                return Err(refuse(format!(
                    "file {} is at level {}, past the family's last",
                    f.name, f.level
                )));
            }
            if !f.blob_file_references.is_empty() {
                return Err(refuse(format!(
                    "file {} refers to blob files, which are not exported",
                    f.name
                )));
            }
            let source = f.directory.join(&f.name);
            let number = self.versions.lock().new_file_number();
            let to = table_path(&self.path, number);
            self.fs.link_or_copy(&source, &to).map_err(|e| {
                refuse(format!(
                    "file {} cannot be brought in: {e}",
                    source.display()
                ))
            })?;
            brought.numbers.push(number);
            self.fs.sync_file(&to)?;
            let meta = self
                .scan_imported(&family_options, &to, number)
                .map_err(|e| refuse(format!("file {}: {e}", source.display())))?;
            let agrees = meta.entries == f.num_entries
                && meta.smallest_seq == f.smallest_seqno
                && meta.largest_seq == f.largest_seqno
                && user_key(&meta.smallest) == f.smallest_key.as_slice()
                && user_key(&meta.largest) == f.largest_key.as_slice();
            if !agrees {
                return Err(refuse(format!(
                    "file {} is not the table the metadata describes (its keys, sequence \
                     numbers or entries differ)",
                    source.display()
                )));
            }
            placed.push((f.level, meta));
        }
        self.fs.sync_dir(&self.path)?;
        // L0 newest first; other levels by key, and without overlaps.
        placed.sort_by(|(la, a), (lb, b)| {
            la.cmp(lb).then_with(|| match la {
                0 => b.largest_seq.cmp(&a.largest_seq),
                _ => order.compare_internal(&a.smallest, &b.smallest),
            })
        });
        for pair in placed.windows(2) {
            let ((la, a), (lb, b)) = (&pair[0], &pair[1]);
            if la == lb
                && *la > 0
                && !crate::range_del::ends_before(&order, &a.largest, user_key(&b.smallest))
            {
                return Err(refuse(format!(
                    "files {} and {} overlap at level {la}",
                    file_name(a.number),
                    file_name(b.number)
                )));
            }
        }
        let largest_seq = placed.iter().map(|(_, f)| f.largest_seq).max().unwrap_or(0);
        let handle = self.create_family_with_files(name, options, placed, largest_seq, || {
            brought.kept = true;
        })?;
        Ok(handle)
    }

    /// The metadata of table `number` at `path`, read from the table itself: every entry
    /// read (so every block checked).
    fn scan_imported(
        &self,
        options: &crate::options::Options,
        path: &Path,
        number: u64,
    ) -> Result<FileMeta> {
        let order = options.key_order();
        let read = TableReadOptions::uncached(options.table_options(false));
        let file = self.fs.open_random(path)?;
        let table = Arc::new(Table::open(file, path, &read)?);
        let recorded = match table.properties().comparator.as_str() {
            "" => crate::comparator::BYTEWISE_NAME,
            n => n,
        };
        if recorded != order.name() {
            return Err(Error::InvalidArgument(format!(
                "its keys are in the order of comparator {recorded:?}, not {:?}",
                order.name()
            )));
        }
        let mut it = table.iter();
        it.seek_to_first();
        let (mut smallest, mut largest) = (Vec::new(), Vec::new());
        let (mut entries, mut deletions) = (0u64, 0u64);
        let (mut smallest_seq, mut largest_seq) = (u64::MAX, 0u64);
        while it.valid() {
            let p = ParsedKey::parse(it.key())
                .ok_or_else(|| Error::corruption(path, 0, "an entry has no internal key"))?;
            if p.value_kind() == Some(ValueKind::BlobIndex) {
                return Err(Error::InvalidArgument(
                    "it refers to blob files, which are not exported".into(),
                ));
            }
            if entries == 0 {
                smallest = it.key().to_vec();
            }
            largest.clear();
            largest.extend_from_slice(it.key());
            entries += 1;
            deletions += u64::from(matches!(
                p.value_kind(),
                Some(ValueKind::Delete | ValueKind::SingleDelete)
            ));
            smallest_seq = smallest_seq.min(p.seq);
            largest_seq = largest_seq.max(p.seq);
            it.next();
        }
        it.status()?;
        let tombstones: Vec<_> = table.range_tombstones().tombstones().collect();
        for t in &tombstones {
            smallest_seq = smallest_seq.min(t.seq);
            largest_seq = largest_seq.max(t.seq);
        }
        if let Some((lo, hi)) = crate::range_del::tombstone_bounds(&order, tombstones.iter()) {
            crate::range_del::widen_bounds(&order, &mut smallest, &mut largest, (&lo, &hi));
        }
        if smallest.is_empty() {
            return Err(Error::corruption(path, 0, "the table holds no entries"));
        }
        Ok(FileMeta {
            number,
            size: self.fs.file_size(path)?,
            smallest,
            largest,
            smallest_seq,
            largest_seq,
            entries,
            deletions,
            ..FileMeta::default()
        })
    }

    /// Raises the published last sequence number to `seq` if it is below (the caller holds
    /// the writer lock, as `w`).
    pub(super) fn raise_last_sequence(&self, w: &mut super::write::group::WriterState, seq: u64) {
        if seq > w.last_sequence() {
            w.set_last_sequence(seq);
            self.last_sequence.store(seq, Ordering::Release);
        }
    }
}
