//! Ingesting tables written outside the database (RocksDB's `IngestExternalFile`): the
//! tables of an [`SstWriter`](crate::SstWriter) join a column family's tree whole, without
//! passing through the WAL and the memtables.
//!
//! Order, each step durable before the next:
//! 1. examine every file: it opens as a table in the family's comparator (its recorded name
//!    must be the family's), and every entry is read (so every block's checksum is checked):
//!    user keys strictly increasing, kinds put, merge or delete, sequence numbers 0, range
//!    deletions at 0. The files, sorted by smallest key, must not overlap one another;
//! 2. bring each file into the directory under a new table number and sync the directory:
//!    if a file overlaps the family now, or a snapshot is live (so that a sequence number
//!    will be needed), as a rewrite whose keys carry `E`, the number the next write would
//!    take; otherwise as it is (a hard link with `move_files`, else a synced copy);
//! 3. take the tree from compactions (as a manual compaction does: wait for the running
//!    ones, start none) and stop writes (the writer lock, no insert in flight), so that the
//!    memtables, the version and the last sequence number hold still;
//! 4. if a file overlaps the family's memtables, or would go to L0 (step 6) while they hold
//!    writes, flush them (or, without `allow_blocking_flush`, refuse);
//! 5. choose the sequence number: 0 when every file is in as it is, nothing in the family
//!    overlaps any file and no snapshot is live (the snapshot list is then held, so that
//!    none appears, until the install); otherwise `G`: `E` if the files were rewritten at `E`
//!    and no write has taken `E` since, else the last sequence number plus one, and each file
//!    is rewritten again into a new table whose every key, and every range deletion,
//!    carries `G`;
//! 6. choose each file's level: the deepest level such that no file of it or of any level
//!    above overlaps the file (a file overlapping nothing goes to the last level); with
//!    universal compaction, whose sorted runs are ordered by age, a file at `G` goes to L0;
//! 7. one manifest edit adds every file (and records `G` as the last sequence number), then
//!    the new version is installed and `G` published as the last sequence number;
//! 8. with `move_files`, remove the sources.
//!
//! Why this is right. With `G`, every ingested key is newer than every write before the
//! ingest (all at or below `G - 1`, writes being stopped) and older than every write after
//! (which get `G + 1` on); a snapshot taken before reads at most `G - 1` and skips them. A
//! file at level `L` has no overlapping file in levels `0..=L`, and the memtables hold none
//! of its keys, so every newer version of its keys is above it, as the levels' order
//! requires; older versions below it are shadowed as they should be. A file in L0 has
//! every write before it flushed below it (step 4), so L0 stays ordered by age, each
//! table's sequence numbers above those of the tables under it: a compaction merging a
//! window of adjacent L0 tables (universal compaction's, which a flush may join while it
//! runs) never makes a table that spans the numbers of one left out. At sequence 0 nothing
//! in the family shares a key with the file, so its level and number cannot hide or be hid
//! by anything wrongly.
//!
//! How the sequence number reaches readers: the keys are rewritten (steps 2 and 5), so an
//! ingested table is an ordinary table and nothing in the table or manifest format changes.
//! The cost is a rewrite of the files that overlap the family's data: done before writes
//! stop, it is done again while they wait only if a write came in between; a bulk load
//! into fresh key ranges with no snapshot live is linked or copied as it is.
//!
//! Atomicity: a failure before the manifest edit deletes every table this ingest made and
//! leaves the database as it was. A failed manifest write leaves them (the record may have
//! reached the file; as with a flush, the next open deletes the tables no edit names), and
//! so does a crash. The sources are touched only after the edit.
//!
//! With [`IngestOptions::ingest_behind`] the files go under all the family's data instead,
//! into a reserved last level (see `behind.rs`).
//!
//! Not covered: a `TransactionDb`'s key locks (an ingest takes none, as in RocksDB), and
//! families with a ttl (their values carry a timestamp a file of the writer has not).

mod behind;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::lock_order::Guard;

use super::background::background_error;
use super::families::ColumnFamilyData;
use super::table_writer::{delete_table, TableOutput};
use super::write::group::WriterState;
use super::{Db, DbInner, SuperVersion};
use crate::column_family::ColumnFamily;
use crate::compaction::CompactionStyle;
use crate::comparator::KeyOrder;
use crate::error::{Error, Result};
use crate::filename::table_path;
use crate::fs::IoClass;
use crate::iterator::InternalIterator;
use crate::key::{append_internal_key, seek_key, user_key, ParsedKey, ValueKind, MAX_SEQUENCE};
use crate::listener::FlushReason;
use crate::memtable::MemTable;
use crate::options::IngestOptions;
use crate::range_del::{ends_before, widen_bounds, Tombstone};
use crate::table::reader::TableReadOptions;
use crate::table::Table;
use crate::util::printable;
use crate::version::{FileMeta, Version, VersionEdit};

impl Db {
    /// Adds the tables `files` (written by [`SstWriter`](crate::SstWriter) with this
    /// database's options) to the default column family, atomically: see
    /// [`Db::ingest_cf`].
    pub fn ingest<P: AsRef<Path>>(&self, files: &[P], options: &IngestOptions) -> Result<()> {
        let cf = self.inner.default_cf.clone();
        self.inner.ingest(&cf, files, options)
    }

    /// Adds the tables `files` to column family `cf`, atomically (RocksDB's
    /// `IngestExternalFile`). Each file must be a table in the family's comparator, with
    /// keys in increasing order and every sequence number 0 (what an
    /// [`SstWriter`](crate::SstWriter) writes), and the files must not overlap one another;
    /// a file that is missing, corrupt or breaks these rules is refused, naming it, and
    /// nothing changes.
    ///
    /// The keys of the files read as newer than every write made before the call and older
    /// than every write after it; snapshots taken before it do not see them. Writes wait
    /// while the files are added (and while they are rewritten, when they overlap the
    /// family's data or a snapshot is live: the rewrite gives their keys a new sequence
    /// number); compactions are held off meanwhile. With [`IngestOptions::move_files`] the
    /// sources are hard-linked and removed afterwards; otherwise they are copied and left.
    pub fn ingest_cf<P: AsRef<Path>>(
        &self,
        cf: &ColumnFamily,
        files: &[P],
        options: &IngestOptions,
    ) -> Result<()> {
        let cf = self.inner.family(cf)?;
        self.inner.ingest(&cf, files, options)
    }
}

/// A file to ingest, as examined.
struct Ingested {
    source: PathBuf,
    /// The sequence number of the keys of the table in the directory (`meta.number`), once
    /// there is one: 0 for a copy, the number of a rewrite.
    in_dir: Option<u64>,
    /// What the manifest will record (its number is 0 until the file is in the directory).
    meta: FileMeta,
}

/// The tables an ingest made, deleted unless it succeeds.
struct Made<'a> {
    db: &'a DbInner,
    numbers: Vec<u64>,
    kept: bool,
}

impl Drop for Made<'_> {
    fn drop(&mut self) {
        if !self.kept {
            for &n in &self.numbers {
                delete_table(self.db, n);
            }
        }
    }
}

impl DbInner {
    fn ingest<P: AsRef<Path>>(
        &self,
        cf: &Arc<ColumnFamilyData>,
        files: &[P],
        options: &IngestOptions,
    ) -> Result<()> {
        self.check_writable()?;
        if files.is_empty() {
            return Err(Error::InvalidArgument("ingest: no file given".into()));
        }
        if cf.options.ttl.is_some() {
            return Err(Error::InvalidArgument(format!(
                "ingest: column family '{}' has a ttl; files cannot be ingested into it",
                cf.name()
            )));
        }
        let order = cf.options.key_order();
        // Step 1.
        let mut files = files
            .iter()
            .map(|p| self.examine(cf, p.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        files.sort_by(|a, b| order.compare_internal(&a.meta.smallest, &b.meta.smallest));
        for pair in files.windows(2) {
            if !ends_before(
                &order,
                &pair[0].meta.largest,
                user_key(&pair[1].meta.smallest),
            ) {
                return Err(Error::InvalidArgument(format!(
                    "ingest: files {} and {} overlap (keys {}..{} and {}..{})",
                    pair[0].source.display(),
                    pair[1].source.display(),
                    printable(user_key(&pair[0].meta.smallest)),
                    printable(user_key(&pair[0].meta.largest)),
                    printable(user_key(&pair[1].meta.smallest)),
                    printable(user_key(&pair[1].meta.largest)),
                )));
            }
        }
        if options.ingest_behind {
            return self.ingest_behind(cf, files, options);
        }
        // Step 2. A file that overlaps the family now, or any file while a snapshot is
        // live, will need a sequence number: it is rewritten now, before writes stop, at the
        // number the next write would take. If a write takes that number first, step 5
        // rewrites it again; a copy made when none seemed needed is rewritten there too.
        let mut made = Made {
            db: self,
            numbers: Vec::new(),
            kept: false,
        };
        let likely_rewrite = self.snapshots.count() > 0 || {
            let sv = cf.super_version();
            let mems = memtables(&sv);
            files.iter().any(|f| {
                overlaps_memtables(&mems, &order, &f.meta) || overlaps_version(&sv.version, &f.meta)
            })
        };
        let early_seq = self.last_sequence.load(Ordering::Acquire) + 1;
        if early_seq > MAX_SEQUENCE {
            return Err(Error::InvalidArgument(
                "sequence numbers are exhausted".into(),
            ));
        }
        for f in &mut files {
            let number = self.versions.lock().new_file_number();
            made.numbers.push(number);
            if likely_rewrite {
                f.meta = self.rewrite(cf, &f.source, number, early_seq)?;
                f.in_dir = Some(early_seq);
                continue;
            }
            self.bring_in_as_is(f, number, options.move_files)?;
        }
        self.fs.sync_dir(&self.path)?;

        // Step 3.
        let _no_compactions = self.begin_manual_compaction()?;
        let mut w = self.commit.writer.lock();
        w.check_stopped()?;
        self.check_open()?;
        self.check_background()?;
        if cf.handle.is_dropped() {
            return Err(super::families::dropped_error(&cf.handle));
        }
        self.wait_for_inserts(&w);

        // Step 4.
        let sv = cf.super_version();
        let memtables = memtables(&sv);
        let overlapping = files
            .iter()
            .find(|f| overlaps_memtables(&memtables, &order, &f.meta));
        // A file at a new sequence number in L0 goes above the memtables' data once it is
        // flushed, though that data is partly older: flushed, it would span the file's number,
        // and L0's order by sequence numbers (and the picker's windows of adjacent runs)
        // would no longer follow the age of every key. Flushed first, it cannot.
        let into_l0 = match memtables.iter().any(|m| !m.is_empty()) {
            true => files
                .iter()
                .find(|f| target_level(&sv.version, &cf.options, &f.meta, MAX_SEQUENCE) == 0),
            false => None,
        };
        drop(sv);
        if let Some(f) = overlapping.or(into_l0) {
            if !options.allow_blocking_flush {
                let why = match overlapping.is_some() {
                    true => "overlaps keys in the memtables",
                    false => "goes to L0 above the unflushed writes in the memtables",
                };
                return Err(Error::InvalidArgument(format!(
                    "ingest: file {} {why} of column family '{}', and allow_blocking_flush is \
                     off",
                    f.source.display(),
                    cf.name()
                )));
            }
            self.flush_for_ingest(&mut w, cf)?;
        }

        // Step 5.
        let version = cf.super_version().version.clone();
        let overlap = files.iter().any(|f| overlaps_version(&version, &f.meta));
        let copies = files.iter().all(|f| f.in_dir == Some(0));
        let no_snapshot = match overlap || !copies {
            true => None,
            false => self.snapshots.hold_if_none(),
        };
        let seq = match no_snapshot {
            Some(_) => 0,
            // The early rewrite holds if no write took its number meanwhile.
            None if !copies && w.last_sequence() < early_seq => early_seq,
            None => w.last_sequence() + 1,
        };
        if seq > MAX_SEQUENCE {
            return Err(Error::InvalidArgument(
                "sequence numbers are exhausted".into(),
            ));
        }
        for f in files.iter_mut().filter(|f| f.in_dir != Some(seq)) {
            let number = self.versions.lock().new_file_number();
            made.numbers.push(number);
            let from = table_path(&self.path, f.meta.number);
            f.meta = self.rewrite(cf, &from, number, seq)?;
            f.in_dir = Some(seq);
        }

        // Steps 6 and 7.
        let mut edit = VersionEdit {
            column_family: cf.id(),
            last_sequence: (seq > 0).then_some(seq),
            ..VersionEdit::default()
        };
        for f in &files {
            let level = target_level(&version, &cf.options, &f.meta, seq);
            edit.new_files.push((level, f.meta.clone()));
        }
        let placed: Vec<String> = edit
            .new_files
            .iter()
            .map(|(level, m)| format!("table {} at L{level} ({} entries)", m.number, m.entries))
            .collect();
        {
            let mut versions = self.versions.lock();
            // Whatever happens now, the tables stay: a manifest write that failed may still
            // have reached the file, and the next open deletes them if no edit names them.
            made.kept = true;
            let version = versions.log_and_apply(edit)?;
            if cfg!(debug_assertions) {
                if let Err(why) = version.check() {
                    panic!("ingest broke the version invariants: {why}\n{version:?}");
                }
            }
            cf.install_version(version);
        }
        if seq > 0 {
            w.set_last_sequence(seq);
            self.last_sequence.store(seq, Ordering::Release);
        }
        drop(no_snapshot);
        drop(w);
        // Tables made and then rewritten again are of no use (no version names them).
        for &n in &made.numbers {
            if !files.iter().any(|f| f.meta.number == n) {
                delete_table(self, n);
            }
        }
        self.info_log.info(format_args!(
            "ingest into family '{}' at sequence {seq}: {}",
            cf.name(),
            placed.join(", ")
        ));
        // Step 8. The ingest is done whatever happens here: a source that cannot be removed
        // is only logged.
        if options.move_files {
            for f in &files {
                if let Err(e) = self.fs.remove_file(&f.source) {
                    self.info_log
                        .warn(format_args!("ingest: the moved file stays: {e}"));
                }
            }
        }
        self.wake_background();
        Ok(())
    }

    /// Puts `f` into the directory as it is, as table `number`: hard-linked (or copied where
    /// the file system cannot link) with `move_files`, else a synced copy.
    fn bring_in_as_is(&self, f: &mut Ingested, number: u64, move_files: bool) -> Result<()> {
        let to = table_path(&self.path, number);
        match move_files {
            true => {
                self.fs.link_or_copy(&f.source, &to)?;
                self.fs.sync_file(&to)?;
            }
            false => crate::fs::copy_file(self.fs.as_ref(), &f.source, &to)?,
        }
        f.meta.number = number;
        f.in_dir = Some(0);
        Ok(())
    }

    /// Step 1 for one file: its key range and counts (at sequence 0), or why it cannot be
    /// ingested into `cf`.
    fn examine(&self, cf: &ColumnFamilyData, path: &Path) -> Result<Ingested> {
        let refuse =
            |why: String| Error::InvalidArgument(format!("ingest: file {}: {why}", path.display()));
        let file = self.fs.open_random(path)?;
        let props = Table::read_properties(file.as_ref(), path)?;
        let order = cf.options.key_order();
        let written_in = match props.comparator.as_str() {
            "" => crate::comparator::BYTEWISE_NAME,
            name => name,
        };
        if written_in != order.name() {
            return Err(refuse(format!(
                "its keys are in the order of comparator {written_in:?}, column family '{}' \
                 orders keys by {:?}",
                cf.name(),
                order.name()
            )));
        }
        let read = TableReadOptions::uncached(cf.options.table_options(false));
        let table = Arc::new(Table::open(file, path, &read)?);
        let mut it = table.iter();
        it.seek_to_first();
        let (mut smallest, mut largest) = (Vec::new(), Vec::new());
        let (mut entries, mut deletions) = (0u64, 0u64);
        while it.valid() {
            let key = it.key();
            let Some(p) = ParsedKey::parse(key) else {
                return Err(refuse(format!("entry {entries} has no internal key")));
            };
            match p.value_kind() {
                Some(ValueKind::Put | ValueKind::Merge) => {}
                Some(ValueKind::Delete) => deletions += 1,
                _ => {
                    return Err(refuse(format!(
                        "key {} has kind {}; only puts, merges and deletes can be ingested",
                        printable(p.user_key),
                        p.kind
                    )))
                }
            }
            if p.seq != 0 {
                return Err(refuse(format!(
                    "key {} has sequence number {}; ingested keys must have 0 (as SstWriter \
                     writes them), the database gives them theirs",
                    printable(p.user_key),
                    p.seq
                )));
            }
            if entries > 0 && !order.lt(user_key(&largest), p.user_key) {
                return Err(refuse(format!(
                    "key {} is not after the key before it, {} (comparator {})",
                    printable(p.user_key),
                    printable(user_key(&largest)),
                    order.name()
                )));
            }
            if entries == 0 {
                smallest = key.to_vec();
            }
            largest.clear();
            largest.extend_from_slice(key);
            entries += 1;
            it.next();
        }
        it.status()?;
        if entries != props.entries {
            return Err(refuse(format!(
                "{entries} entries read, its properties say {}",
                props.entries
            )));
        }
        let tombstones: Vec<Tombstone> = table.range_tombstones().tombstones().collect();
        if let Some(t) = tombstones.iter().find(|t| t.seq != 0) {
            return Err(refuse(format!(
                "range deletion {t:?} has sequence number {}; ingested ones must have 0",
                t.seq
            )));
        }
        if let Some((lo, hi)) = tombstone_bounds(&order, &tombstones) {
            widen_bounds(&order, &mut smallest, &mut largest, (&lo, &hi));
        }
        if smallest.is_empty() {
            return Err(refuse("it holds no entry".into()));
        }
        Ok(Ingested {
            source: path.to_path_buf(),
            in_dir: None,
            meta: FileMeta {
                number: 0,
                size: self.fs.file_size(path)?,
                smallest,
                largest,
                smallest_seq: 0,
                largest_seq: 0,
                entries,
                deletions,
                blob_refs: Vec::new(),
                reader: Default::default(),
            },
        })
    }

    /// Step 5 for one file: writes table `number` holding the entries and range deletions of
    /// the table at `from`, each at sequence number `seq`. Counted as flush IO: like a flush,
    /// it brings new data into the tree.
    fn rewrite(
        &self,
        cf: &ColumnFamilyData,
        from: &Path,
        number: u64,
        seq: u64,
    ) -> Result<FileMeta> {
        let file = self.fs.open_random(from)?;
        let read = TableReadOptions::uncached(cf.options.table_options(false));
        let table = Arc::new(Table::open(file, from, &read)?);
        let mut out = TableOutput::create(
            self,
            cf.name(),
            number,
            IoClass::Flush,
            cf.options.table_options(false),
        )?
        .for_ingest();
        let mut it = table.iter();
        it.seek_to_first();
        let mut key = Vec::new();
        while it.valid() {
            let Some(p) = ParsedKey::parse(it.key()) else {
                return Err(Error::corruption(from, 0, "an entry has no internal key"));
            };
            key.clear();
            append_internal_key(&mut key, p.user_key, seq, p.kind);
            out.add(&key, it.value())?;
            it.next();
        }
        it.status()?;
        let tombstones: Vec<Tombstone> = table
            .range_tombstones()
            .tombstones()
            .map(|t| Tombstone::new(&t.begin, &t.end, seq))
            .collect();
        out.add_range_tombstones(tombstones)?;
        out.finish(self)
    }

    /// Step 4: switches the family's active memtable if it holds anything and waits until
    /// the flush thread has written every immutable memtable of it, with writes stopped
    /// (`w` held) so that none lands meanwhile.
    fn flush_for_ingest(
        &self,
        w: &mut Guard<'_, WriterState>,
        cf: &Arc<ColumnFamilyData>,
    ) -> Result<()> {
        if !cf.sv.read().active.is_empty() {
            let families = self.families();
            let reason = FlushReason::ExternalFileIngestion;
            self.switch_memtable(w, &families, std::slice::from_ref(cf), reason)?;
        }
        let mut bg = self.bg.state.lock();
        loop {
            if let Some(e) = &bg.error {
                return Err(background_error(e));
            }
            if bg.shutdown {
                return Err(Error::Unavailable(format!(
                    "database {} was closed while an ingest waited for a flush",
                    self.path.display()
                )));
            }
            if cf.sv.read().immutables.is_empty() {
                return Ok(());
            }
            bg.wait(&self.bg.cv);
        }
    }
}

/// The internal keys bounding `tombstones` (see `TableBuilder::range_tombstone_bounds`).
fn tombstone_bounds(order: &KeyOrder, tombstones: &[Tombstone]) -> Option<(Vec<u8>, Vec<u8>)> {
    let first = tombstones
        .iter()
        .min_by(|a, b| order.compare(&a.begin, &b.begin))?;
    let last = tombstones
        .iter()
        .max_by(|a, b| order.compare(&a.end, &b.end))?;
    Some((first.smallest_key(), last.largest_key()))
}

/// Whether the key ranges of two files (internal-key bounds, user keys in `order`) share a
/// user key.
fn ranges_overlap(order: &KeyOrder, a: &FileMeta, b: &FileMeta) -> bool {
    !ends_before(order, &a.largest, user_key(&b.smallest))
        && !ends_before(order, &b.largest, user_key(&a.smallest))
}

/// Whether some file of `version` overlaps `file`.
fn overlaps_version(version: &Version, file: &FileMeta) -> bool {
    version
        .levels
        .iter()
        .flatten()
        .any(|f| ranges_overlap(&version.order, f, file))
}

/// The memtables of `sv`, active first.
fn memtables(sv: &SuperVersion) -> Vec<Arc<MemTable>> {
    std::iter::once(&sv.active)
        .chain(&sv.immutables)
        .cloned()
        .collect()
}

/// Whether a memtable holds a key, or a range deletion, in the key range of `file`.
fn overlaps_memtables(memtables: &[Arc<MemTable>], order: &KeyOrder, file: &FileMeta) -> bool {
    let lo = user_key(&file.smallest);
    memtables.iter().any(|m| {
        let mut it = m.iter();
        it.seek(&seek_key(lo, MAX_SEQUENCE));
        let point = it.valid() && !ends_before(order, &file.largest, user_key(it.key()));
        point
            || (m.has_range_tombstones()
                && m.range_tombstones()
                    .tombstones()
                    .any(|t| order.lt(lo, &t.end) && !ends_before(order, &file.largest, &t.begin)))
    })
}

/// Step 6: the level for `file`, ingested at sequence number `seq`, in family `version`.
fn target_level(
    version: &Version,
    options: &crate::options::Options,
    file: &FileMeta,
    seq: u64,
) -> usize {
    let last = options.compaction_levels() - 1;
    let overlaps = |level: usize| {
        version.levels[level]
            .iter()
            .any(|f| ranges_overlap(&version.order, f, file))
    };
    if seq > 0 && matches!(options.compaction_style, CompactionStyle::Universal) {
        return 0;
    }
    (0..=last)
        .find(|&level| overlaps(level))
        .map_or(last, |level| level.saturating_sub(1))
}
