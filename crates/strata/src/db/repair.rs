//! Repair: a new manifest for a database whose manifest is lost or damaged, rebuilt from the
//! tables and WALs left in its directory (RocksDB's `RepairDB`; `strata repair DIR`).
//!
//! Steps:
//!
//! 1. **Lock and look.** The database's `LOCK` is taken (a database open elsewhere is
//!    refused) and the directory listed. Nothing is changed until step 3.
//! 2. **Scan the tables.** Each table's properties name its column family
//!    (`strata.column-family*`, written since tables record it; a table without them
//!    belongs to the default family) and key order. The table is opened in that order,
//!    every block read and checked, the keys' order and count checked; its key range (range
//!    deletions included), sequence range and counts make its manifest record. A table that
//!    fails is set aside for `lost/`. A family named twice under two ids (dropped, then
//!    created again) keeps the newer id; the older id's tables go to `lost/`.
//!    Each blob file's header names its family and its footer what it holds; one whose
//!    header or footer cannot be read (a write a crash cut short) is set aside too. Each
//!    table's blob references are counted again, entry by entry.
//! 3. **Set aside** the unreadable tables and blob files: moved to `lost/` (never deleted).
//! 4. **Convert the WALs**, oldest first, each on its own: its records up to the first bad
//!    one (a torn or corrupt tail loses only what follows) go to one memtable per family,
//!    which becomes a table. A record is already in its family's tables, and not written
//!    again, if its sequence number is at or below their largest (a family's memtables are
//!    flushed in sequence order), or if its WAL is numbered below the largest log number
//!    they record (`strata.log-number`: each flush records the WAL its family's next
//!    memtable began in, each compaction the largest of its inputs'). The second rule is
//!    the one that holds once the bottom of the tree has written every number as 0. A
//!    record of a family id that no table names goes to the family the newest readable
//!    manifest (read up to its first bad record) names with that id, if its order is
//!    known; otherwise it is counted and dropped.
//! 5. **Merge where level 0 would mislead a read.** A point read takes the first level-0
//!    table holding the key (largest sequence number first), which is right only if that
//!    table holds the key's newest version. Tables from deeper levels may break that: a
//!    deep file can hold an old version of `k` beside a newer key that makes its largest
//!    sequence number larger than that of a shallower file holding a newer `k`. A family
//!    with two tables overlapping both in keys and in sequence numbers has all its tables
//!    merged into one, every version kept (an internal key found twice is one write seen
//!    twice, kept once); the inputs are deleted once the merged table is durable.
//!    Flushed tables and converted WALs never overlap in sequence numbers, so they are
//!    left alone. Then the WALs, the old manifests and the files of prepared transactions
//!    whose commit a WAL holds move to `lost/`.
//! 6. **Write the manifest**: each family's blob files that its tables refer to (a blob file
//!    no kept table refers to moves to `lost/`: a table set aside may still need it; a
//!    table's references to a blob file that is not there are dropped from its record, and
//!    reading those keys is a corruption error naming the missing file), and every table
//!    in level 0 of its family (level 0 orders files by
//!    largest sequence number, newest first, so newer data wins), each family's log number
//!    past every WAL, next file number and last sequence past everything seen; then
//!    `CURRENT`.
//!
//! At every moment each entry is in a file a second run reads (a table, or a WAL until the
//! tables made from it are durable), so a repair interrupted by a crash is simply run again.
//!
//! What a lost manifest takes with it: the level of each table (all go to level 0, and
//! compaction moves them down again), the name of a family none of whose tables survive
//! (its WAL records are dropped, as said, unless a manifest can still be read), a family's prefix extractor (recorded again at the
//! next open). Tables that a compaction had replaced but not yet deleted come back (as in
//! RocksDB): their keys were also in the replacement, but a key deleted since by a tombstone
//! that a later compaction dropped may reappear.
//!
//! Files: this one runs the steps; `repair/families.rs` places tables in families, and
//! `repair/wal.rs` turns WALs into tables.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::open::{identify, named_families};
use super::write::two_phase::parse_prepared_file_name;
use super::Db;
use crate::blob::reader::BlobFileReader;
use crate::comparator::KeyOrder;
use crate::error::{Error, ErrorKind, Result};
use crate::filename::{self, blob_path, parse_file_name, table_path, wal_path, FileKind};
use crate::fs::{FileSystem, IoStats};
use crate::iterator::{InternalIterator, MergingIterator};
use crate::memtable::MemTable;
use crate::options::{CfOptions, Options};
use crate::table::reader::TableReadOptions;
use crate::table::{Table, TableBuilder, TableFamily, TableOptions};
use crate::version::{
    BlobCount, BlobFileMeta, BlobRefCounter, FamilyState, FileMeta, Version, VersionEdit,
    VersionSet, DEFAULT_FAMILY_ID, DEFAULT_FAMILY_NAME,
};

mod families;
mod wal;

/// The subdirectory where repair puts the files it does not use: unreadable tables, the
/// converted WALs, the old manifests.
pub const LOST_DIR: &str = "lost";

/// What [`repair`] found and did.
///
/// The example of [`repair`] reads one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// Tables in the new manifest, those written from WALs included, ascending.
    pub tables_kept: Vec<u64>,
    /// Tables moved to `lost/`, each with the reason it was not kept.
    pub tables_lost: Vec<(u64, String)>,
    /// WALs converted to tables (and then moved to `lost/`), ascending.
    pub wals_converted: Vec<u64>,
    /// The tables written from WALs, ascending (also in `tables_kept`).
    pub tables_from_wals: Vec<u64>,
    /// Entries in the kept tables (range deletions aside), those written from WALs included:
    /// what the repaired database holds.
    pub entries: u64,
    /// WAL updates written to tables.
    pub wal_entries: u64,
    /// WAL updates found already in their family's tables, not written again.
    pub wal_entries_in_tables: u64,
    /// WAL updates of column family ids that neither a table nor a readable manifest names,
    /// dropped; the ids in `unknown_families`.
    pub wal_entries_dropped: u64,
    /// Column family ids of dropped WAL updates.
    pub unknown_families: Vec<u32>,
    /// For each WAL with a bad record: `file at offset: reason`; that record and what
    /// follows it in the WAL were not converted.
    pub wal_corruptions: Vec<String>,
    /// The column families of the new manifest, by id.
    pub families: BTreeMap<u32, String>,
    /// Families whose tables were merged into one (step 5 of the module notes).
    pub families_merged: Vec<String>,
    /// The tables merged away (and then deleted: all their entries are in the merged ones).
    pub tables_merged: Vec<u64>,
    /// Every file moved to `lost/`, where it now is.
    pub moved_to_lost: Vec<PathBuf>,
    /// Blob files in the new manifest, ascending.
    pub blob_files_kept: Vec<u64>,
    /// Blob files moved to `lost/`, each with the reason it was not kept.
    pub blob_files_lost: Vec<(u64, String)>,
    /// The new manifest's number.
    pub manifest_number: u64,
    /// The last sequence number of the repaired database.
    pub last_sequence: u64,
}

/// Rebuilds the manifest of the database in `path` from its tables and WALs, when the
/// manifest is lost or damaged, as RocksDB's `RepairDB` (the module notes of `db/repair.rs`
/// give the steps). Each table returns to the column family its properties record, with the
/// family's name; the default family is repaired with the family fields of `options` and
/// every other family with them too, except its key order and ttl, which are taken from its
/// tables (built-in comparators only: name a family of an application's comparator with
/// [`repair_cf`]). Unreadable tables, the converted WALs and the old manifests are moved to
/// the `lost/` subdirectory, never deleted. A database open elsewhere is refused (`Busy`,
/// naming its `LOCK` file). Afterwards the database opens (with every family of
/// [`RepairReport::families`] named) and holds every key of the kept tables and converted
/// WALs, the newest version of each winning.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"kept", b"in a table")?;
/// db.flush()?;
/// db.close()?;
/// for entry in std::fs::read_dir(dir.path())? {
///     let path = entry?.path();
///     let name = path.file_name().unwrap_or_default().to_string_lossy();
///     if name.starts_with("MANIFEST") || name == "CURRENT" {
///         std::fs::remove_file(&path)?; // the manifest is lost
///     }
/// }
/// let report = strata::repair(dir.path(), &Options::default())?;
/// assert_eq!(report.tables_kept.len(), 1);
/// assert!(report.tables_lost.is_empty());
/// let db = Db::open(dir.path(), Options::default())?;
/// assert_eq!(db.get(b"kept")?.as_deref(), Some(&b"in a table"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn repair(path: impl AsRef<Path>, options: &Options) -> Result<RepairReport> {
    repair_cf(path, options, std::iter::empty::<(&str, CfOptions)>())
}

/// [`repair`] with column families named with their options, as [`Db::open_cf`] names
/// them: a named family found in the tables is repaired with its options (its comparator
/// must be the one its tables record, and its ttl the one they record); one not found is
/// created empty. The default family may be named too.
pub fn repair_cf<N: AsRef<str>>(
    path: impl AsRef<Path>,
    options: &Options,
    families: impl IntoIterator<Item = (N, CfOptions)>,
) -> Result<RepairReport> {
    options.validate()?;
    let named = named_families(options, families)?;
    let path = path.as_ref();
    let fs = options.fs.clone();
    if !identify(fs.as_ref(), path)? {
        return Err(Error::NotFound(format!(
            "no database in {}",
            path.display()
        )));
    }
    let lock = fs.lock(&path.join(filename::LOCK))?;
    let mut repairer = Repairer {
        fs: fs.clone(),
        dir: path.to_path_buf(),
        options,
        named: &named,
        families: BTreeMap::new(),
        next_file_number: 1,
        blob_files: BTreeMap::new(),
        report: RepairReport::default(),
    };
    repairer.run()?;
    drop(lock);
    Ok(repairer.report)
}

impl Db {
    /// [`repair`]: rebuilds the manifest of the database in `path` from its tables and WALs.
    pub fn repair(path: impl AsRef<Path>, options: &Options) -> Result<RepairReport> {
        repair(path, options)
    }
}

/// A column family as repair rebuilds it.
struct Family {
    name: String,
    /// Its options: those named for it, else the family fields of the repair's options
    /// with the order and ttl its tables record.
    options: Options,
    /// Whether it was named in `repair_cf`: then its prefix extractor is recorded.
    named: bool,
    ttl: Option<u64>,
    files: Vec<FileMeta>,
    /// The largest log number its tables record (`strata.log-number`; 0 without any): its
    /// records in WALs numbered below it are in the tables.
    log_number: u64,
}

impl Family {
    fn order(&self) -> KeyOrder {
        self.options.key_order()
    }

    /// The largest sequence number in its tables (0 without any).
    fn largest_seq(&self) -> u64 {
        self.files.iter().map(|f| f.largest_seq).max().unwrap_or(0)
    }

    fn table_family(&self, id: u32) -> TableFamily {
        TableFamily {
            id,
            name: self.name.clone(),
            ttl: self.ttl,
        }
    }
}

/// A table found in the directory, read.
struct Scanned {
    meta: FileMeta,
    family: TableFamily,
    /// The log number its properties record (0: none).
    log_number: u64,
    /// The comparator its properties record (empty: bytewise).
    comparator: String,
}

struct Repairer<'a> {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    options: &'a Options,
    named: &'a BTreeMap<String, CfOptions>,
    families: BTreeMap<u32, Family>,
    /// The next unused file number: above every numbered file seen.
    next_file_number: u64,
    /// The readable blob files, by the family their header names.
    blob_files: BTreeMap<u32, Vec<BlobFileMeta>>,
    report: RepairReport,
}

/// The blob references among the entries of `it` (a table at `path`), by blob file.
fn count_blob_refs(path: &Path, mut it: impl InternalIterator) -> Result<Vec<BlobCount>> {
    let mut counter = BlobRefCounter::default();
    it.seek_to_first();
    while it.valid() {
        counter.add(it.key(), it.value()).map_err(|user_key| {
            let why = format!("key {user_key} holds a blob reference that does not decode");
            Error::corruption(path, 0, why)
        })?;
        it.next();
    }
    it.status()?;
    Ok(counter.into_counts())
}

impl Repairer<'_> {
    /// Steps 1 to 6.
    fn run(&mut self) -> Result<()> {
        let names = self.fs.list_dir(&self.dir)?;
        let (mut tables, mut wals, mut manifests, mut prepared) = (vec![], vec![], vec![], vec![]);
        let mut blobs = Vec::new();
        for name in &names {
            match parse_file_name(name) {
                Some(FileKind::Table(n)) => tables.push(n),
                Some(FileKind::Blob(n)) => blobs.push(n),
                Some(FileKind::Wal(n)) => wals.push(n),
                Some(FileKind::Manifest(n)) => manifests.push(n),
                _ => {}
            }
            if let Some(
                FileKind::Table(n)
                | FileKind::Blob(n)
                | FileKind::Wal(n)
                | FileKind::Manifest(n)
                | FileKind::DroppedWalTail(n),
            ) = parse_file_name(name)
            {
                self.next_file_number = self.next_file_number.max(n + 1);
            }
            if let Some(txn) = parse_prepared_file_name(name) {
                prepared.push((name.clone(), txn));
            }
        }
        tables.sort_unstable();
        blobs.sort_unstable();
        wals.sort_unstable();
        manifests.sort_unstable();

        // Step 2: read everything; nothing changes if a table cannot be read for a reason
        // that is the caller's (an order or ttl it did not give), rather than the table's.
        let mut scanned = Vec::new();
        let mut lost: Vec<(u64, String)> = Vec::new();
        for &number in &tables {
            match self.scan_table(number, None) {
                Ok(s) => scanned.push(s),
                Err(e) if e.kind() == ErrorKind::InvalidArgument => return Err(e),
                Err(e) => lost.push((number, e.to_string())),
            }
        }
        let recorded = self.families_in_manifest(&manifests);
        self.place_families(&scanned, &recorded)?;
        for s in scanned {
            if let Some(replaced) = self.replaced_id(&s.family) {
                lost.push((
                    s.meta.number,
                    format!(
                        "its column family '{}' (id {}) was dropped and created again as id \
                         {replaced}",
                        s.family.name, s.family.id
                    ),
                ));
                continue;
            }
            if let Some(f) = self.families.get_mut(&s.family.id) {
                f.files.push(s.meta);
                f.log_number = f.log_number.max(s.log_number);
            }
        }

        // The blob files, by family. One that does not open goes to `lost` after step 4: the
        // WALs may name values in it (written at put, before its footer).
        let mut blobs_lost = Vec::new();
        let mut blob_files: BTreeMap<u32, Vec<BlobFileMeta>> = BTreeMap::new();
        for &number in &blobs {
            let path = blob_path(&self.dir, number);
            let opened = self
                .fs
                .open_random(&path)
                .and_then(|file| BlobFileReader::open(file, &path, number));
            match opened {
                Ok(reader) => {
                    let summary = reader.summary();
                    blob_files
                        .entry(reader.column_family())
                        .or_default()
                        .push(BlobFileMeta {
                            number,
                            records: summary.records,
                            file_size: summary.file_size,
                            value_bytes: summary.value_bytes,
                            ..BlobFileMeta::default()
                        });
                }
                Err(e) => blobs_lost.push((number, e.to_string())),
            }
        }
        self.blob_files = blob_files;

        // Step 3.
        lost.sort_unstable();
        for (number, why) in lost {
            self.move_to_lost(&table_path(&self.dir, number))?;
            self.report.tables_lost.push((number, why));
        }

        // Step 4.
        let mut committed = HashSet::new();
        for &number in &wals {
            self.convert_wal(number, &mut committed)?;
            self.report.wals_converted.push(number);
        }
        for (number, why) in blobs_lost {
            self.move_to_lost(&blob_path(&self.dir, number))?;
            self.report.blob_files_lost.push((number, why));
        }
        self.fs.sync_dir(&self.dir)?;

        // Step 5, before the WALs move: until the merged table is durable, they and the
        // merged tables hold every entry.
        let misleading: Vec<u32> = self
            .families
            .iter()
            .filter(|(_, f)| misleads_reads(&f.order(), &f.files))
            .map(|(&id, _)| id)
            .collect();
        for id in misleading {
            self.merge_family(id)?;
        }

        // The end of step 5: nothing in these files is needed any more.
        for &number in &wals {
            self.move_to_lost(&wal_path(&self.dir, number))?;
        }
        for &number in &manifests {
            self.move_to_lost(&filename::manifest_path(&self.dir, number))?;
        }
        for (file, txn) in prepared {
            if committed.contains(&txn) {
                self.move_to_lost(&self.dir.join(file))?;
            }
        }

        // Step 6.
        let mut states = BTreeMap::new();
        let mut last_sequence = 0;
        let mut unreferenced = Vec::new();
        for (&id, f) in &self.families {
            let order = f.order();
            let blobs = self.blob_files.remove(&id).unwrap_or_default();
            let present: HashSet<u64> = blobs.iter().map(|b| b.number).collect();
            let referred: HashSet<u64> = f
                .files
                .iter()
                .flat_map(|m| m.blob_refs.iter().map(|r| r.number))
                .filter(|n| present.contains(n))
                .collect();
            let mut files = f.files.clone();
            for m in &mut files {
                m.blob_refs.retain(|r| present.contains(&r.number));
            }
            let (kept, idle): (Vec<BlobFileMeta>, Vec<BlobFileMeta>) = blobs
                .into_iter()
                .partition(|b| referred.contains(&b.number));
            unreferenced.extend(idle.iter().map(|b| b.number));
            self.report
                .blob_files_kept
                .extend(kept.iter().map(|b| b.number));
            let edit = VersionEdit {
                new_files: files.into_iter().map(|m| (0, m)).collect(),
                new_blob_files: kept,
                ..VersionEdit::default()
            };
            let version = Version::default()
                .with_order(order.clone())
                .apply(&edit)
                .map_err(|why| Error::InvalidArgument(format!("repair: {why}")))?;
            last_sequence = last_sequence.max(f.largest_seq());
            self.report.entries += f.files.iter().map(|m| m.entries).sum::<u64>();
            self.report
                .tables_kept
                .extend(f.files.iter().map(|m| m.number));
            self.report.families.insert(id, f.name.clone());
            let prefix_extractor = f
                .named
                .then(|| crate::prefix::name_of(&f.options.prefix_extractor).to_string());
            states.insert(
                id,
                FamilyState {
                    name: f.name.clone(),
                    comparator: order.name().to_string(),
                    current: Arc::new(version),
                    log_number: self.next_file_number,
                    ttl: f.ttl,
                    prefix_extractor,
                },
            );
        }
        // Blob files of families no table survives in, and those no kept table refers to.
        unreferenced.extend(self.blob_files.values().flatten().map(|b| b.number));
        for number in unreferenced {
            self.move_to_lost(&blob_path(&self.dir, number))?;
            let why = "no table kept refers to it".to_string();
            self.report.blob_files_lost.push((number, why));
        }
        self.report.blob_files_kept.sort_unstable();
        self.report.blob_files_lost.sort_unstable();
        self.report.tables_kept.sort_unstable();
        self.report.last_sequence = self.report.last_sequence.max(last_sequence);
        self.report.manifest_number = VersionSet::write_repaired(
            self.fs.clone(),
            &self.dir,
            Arc::new(IoStats::default()),
            states,
            self.next_file_number,
            self.report.last_sequence,
        )?;
        Ok(())
    }

    /// Reads table `number` whole and makes its manifest record. Its family is the one its
    /// properties record, or `family` for a table just written (the default family for a
    /// table that records none). An `InvalidArgument` error is the caller's: an order or ttl
    /// the table cannot be read in; any other is the table's.
    fn scan_table(&self, number: u64, family: Option<TableFamily>) -> Result<Scanned> {
        let path = table_path(&self.dir, number);
        let file = self.fs.open_random(&path)?;
        let props = Table::read_properties(file.as_ref(), &path)?;
        let family = family
            .or(props.column_family.clone())
            .unwrap_or(TableFamily {
                id: DEFAULT_FAMILY_ID,
                name: DEFAULT_FAMILY_NAME.to_string(),
                ttl: None,
            });
        let order = self.order_for(&family, &props.comparator)?;
        let read = TableReadOptions::uncached(TableOptions {
            comparator: crate::table::block::BlockOrder::Internal(order.clone()),
            ..TableOptions::for_internal_keys()
        });
        let table = Arc::new(Table::open(file, &path, &read)?);
        table.verify()?;
        let (mut smallest, mut largest) = (Vec::new(), Vec::new());
        let mut it = table.iter();
        it.seek_to_first();
        if it.valid() {
            smallest = it.key().to_vec();
            it.seek_to_last();
            largest = it.key().to_vec();
        }
        it.status()?;
        let tombstones: Vec<_> = table.range_tombstones().tombstones().collect();
        if let Some((lo, hi)) = crate::range_del::tombstone_bounds(&order, tombstones.iter()) {
            crate::range_del::widen_bounds(&order, &mut smallest, &mut largest, (&lo, &hi));
        }
        if smallest.is_empty() {
            return Err(Error::corruption(&path, 0, "the table holds no entries"));
        }
        let blob_refs = count_blob_refs(&path, table.iter())?;
        let props = table.properties();
        Ok(Scanned {
            comparator: props.comparator.clone(),
            log_number: props.log_number,
            meta: FileMeta {
                number,
                size: self.fs.file_size(&path)?,
                smallest,
                largest,
                smallest_seq: props.smallest_seq,
                largest_seq: props.largest_seq,
                entries: props.entries,
                deletions: props.deletions,
                blob_refs,
                reader: Default::default(),
            },
            family,
        })
    }

    /// Step 5 for family `id`: merges all its tables into one new table, keeping every
    /// version (no reader's view is known, so none is dropped; an entry found in two tables,
    /// one write seen twice, is kept once), then deletes them.
    fn merge_family(&mut self, id: u32) -> Result<()> {
        let family = &self.families[&id];
        let order = family.order();
        let read = TableReadOptions::uncached(TableOptions {
            comparator: crate::table::block::BlockOrder::Internal(order.clone()),
            ..TableOptions::for_internal_keys()
        });
        let mut inputs: Vec<Box<dyn InternalIterator>> = Vec::new();
        let mut tombstones = Vec::new();
        for f in &family.files {
            let path = table_path(&self.dir, f.number);
            let table = Arc::new(Table::open(self.fs.open_random(&path)?, &path, &read)?);
            tombstones.extend(table.range_tombstones().tombstones());
            inputs.push(Box::new(table.iter()));
        }
        let number = self.next_file_number;
        self.next_file_number += 1;
        let table_family = family.table_family(id);
        let options = TableOptions {
            column_family: Some(table_family.clone()),
            log_number: family.log_number,
            ..family.options.table_options(false)
        };
        let path = table_path(&self.dir, number);
        let written = (|| {
            let mut builder = TableBuilder::new(self.fs.create_writable(&path)?, options);
            for t in &tombstones {
                builder.add_range_tombstone(&t.begin, &t.end, t.seq)?;
            }
            let mut it = MergingIterator::with_order(inputs, order);
            it.seek_to_first();
            let mut last: Vec<u8> = Vec::new();
            while it.valid() {
                // An internal key names one write: the same key twice is one write twice.
                if it.key() != last.as_slice() {
                    builder.add(it.key(), it.value())?;
                    last.clear();
                    last.extend_from_slice(it.key());
                }
                it.next();
            }
            it.status()?;
            builder.finish().map(|_| ())
        })();
        if written.is_err() {
            let _ = self.fs.remove_file(&path);
        }
        written?;
        self.fs.sync_dir(&self.dir)?;
        let merged = self.scan_table(number, Some(table_family))?;
        let Some(family) = self.families.get_mut(&id) else {
            return Ok(());
        };
        let inputs = std::mem::replace(&mut family.files, vec![merged.meta]);
        self.report.families_merged.push(family.name.clone());
        for f in inputs {
            self.fs.remove_file(&table_path(&self.dir, f.number))?;
            self.report.tables_merged.push(f.number);
        }
        self.fs.sync_dir(&self.dir)
    }

    /// Writes every entry and range deletion of `mem` to table `number` (synced); on an
    /// error the file is deleted.
    fn write_table(&self, number: u64, mem: &Arc<MemTable>, options: TableOptions) -> Result<()> {
        let path = table_path(&self.dir, number);
        let written = (|| {
            let mut builder = TableBuilder::new(self.fs.create_writable(&path)?, options);
            let tombstones = mem.range_tombstones();
            builder.add_range_tombstones(&tombstones)?;
            let mut it = mem.iter();
            it.seek_to_first();
            while it.valid() {
                builder.add(it.key(), it.value())?;
                it.next();
            }
            it.status()?;
            builder.finish().map(|_| ())
        })();
        if written.is_err() {
            let _ = self.fs.remove_file(&path);
        }
        written
    }

    /// Moves `path` into `lost/` under its own name (a free name if one is taken), and
    /// syncs both directories.
    fn move_to_lost(&mut self, path: &Path) -> Result<()> {
        let lost = self.dir.join(LOST_DIR);
        self.fs.create_dir_all(&lost)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut to = lost.join(&name);
        let mut n = 1;
        while self.fs.exists(&to) {
            to = lost.join(format!("{name}.{n}"));
            n += 1;
        }
        self.fs.rename(path, &to)?;
        self.fs.sync_dir(&lost)?;
        self.fs.sync_dir(&self.dir)?;
        self.report.moved_to_lost.push(to);
        Ok(())
    }
}

/// Whether a point read in level 0 holding `files` could stop at a table holding an older
/// version of a key than another table: two tables whose key ranges and sequence ranges
/// both overlap (step 5 of the module notes).
fn misleads_reads(order: &KeyOrder, files: &[FileMeta]) -> bool {
    let key = crate::key::user_key;
    files.iter().enumerate().any(|(i, a)| {
        files[i + 1..].iter().any(|b| {
            let keys_overlap = order.le(key(&a.smallest), key(&b.largest))
                && order.le(key(&b.smallest), key(&a.largest));
            let seqs_overlap = a.smallest_seq <= b.largest_seq && b.smallest_seq <= a.largest_seq;
            keys_overlap && seqs_overlap
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{append_internal_key, ValueKind};

    /// A table `number` of keys `a..=b` and sequence numbers `lo..=hi`.
    fn table(number: u64, (a, b): (&str, &str), (lo, hi): (u64, u64)) -> FileMeta {
        let key = |k: &str, seq| {
            let mut v = Vec::new();
            append_internal_key(&mut v, k.as_bytes(), seq, ValueKind::Put as u8);
            v
        };
        FileMeta {
            number,
            size: 1,
            smallest: key(a, hi),
            largest: key(b, lo),
            smallest_seq: lo,
            largest_seq: hi,
            entries: 2,
            deletions: 0,
            blob_refs: Vec::new(),
            reader: Default::default(),
        }
    }

    /// Level 0 reads right only if no two tables overlap both in keys and in sequence
    /// numbers: then the table level 0 puts first (largest sequence number) holds the
    /// newest version of every key it shares with another.
    #[test]
    fn tables_overlapping_in_keys_and_sequences_mislead_level_0_reads() {
        let cases: [(&str, Vec<FileMeta>, bool); 6] = [
            ("one table", vec![table(1, ("a", "z"), (1, 100))], false),
            (
                "flushes: sequence ranges one after the other",
                vec![
                    table(1, ("a", "z"), (1, 50)),
                    table(2, ("a", "z"), (51, 90)),
                ],
                false,
            ),
            (
                "a deep file [1, 100] beside a shallow one [40, 60] over the same keys",
                vec![
                    table(1, ("a", "z"), (1, 100)),
                    table(2, ("c", "d"), (40, 60)),
                ],
                true,
            ),
            (
                "sequences overlap but keys do not",
                vec![
                    table(1, ("a", "c"), (1, 100)),
                    table(2, ("d", "f"), (40, 60)),
                ],
                false,
            ),
            (
                "keys touch at one key, sequences overlap",
                vec![
                    table(1, ("a", "c"), (1, 100)),
                    table(2, ("c", "f"), (40, 60)),
                ],
                true,
            ),
            (
                "the same table twice (a compaction's inputs and output)",
                vec![table(1, ("a", "z"), (1, 9)), table(2, ("a", "z"), (1, 9))],
                true,
            ),
        ];
        for (name, files, want) in cases {
            assert_eq!(misleads_reads(&KeyOrder::Bytewise, &files), want, "{name}");
        }
    }
}
