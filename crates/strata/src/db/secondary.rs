//! Secondary instances: a read-only [`Db`] that follows a database another process (the
//! primary) keeps writing, as RocksDB's `OpenAsSecondary` / `TryCatchUpWithPrimary`.
//!
//! A secondary opens the primary's directory as a read-only open does (`open.rs`: it takes
//! no lock and writes nothing there), writes its own `LOG` into a directory of its own, and
//! replays the primary's WALs itself, remembering where it stopped. Each catch-up:
//!
//! 1. reads the manifest edits appended since the last one (or the whole manifest `CURRENT`
//!    names, when the primary started a new one), and updates the family set: families the
//!    primary created appear, dropped ones are marked dropped;
//! 2. replays the WALs from where the last replay stopped, each WAL into memtables of its
//!    own per family. A bad record at the end of what is there (torn, or a record of a
//!    family this manifest read does not know yet) is where the primary is writing: replay
//!    stops there and resumes from it next time; it is not corruption;
//! 3. reads the manifest again: a flush or compaction that ended during step 2 may have
//!    deleted a WAL or table the first read still named;
//! 4. drops the memtables whose WAL is below its family's log number (the primary flushed
//!    them), opens every table of the new versions, and installs one super version per
//!    family; then publishes the last sequence number replayed.
//!
//! Invariants:
//!
//! - Every table and blob file of every version installed was opened before the version was
//!   installed, and stays open while the newest version names it (a secondary keeps every
//!   file open: `max_open_files` is taken as unlimited, and the reader is kept with the
//!   file's metadata). On Linux an open file stays readable after the primary unlinks it, so
//!   a read through the newest view never opens a file the primary may have deleted. A file
//!   that is gone before the secondary opens it means a later manifest edit removed it: step
//!   1 is run again (a few times), then the catch-up fails naming the file, and the caller
//!   catches up again. A table that leaves the newest version stays open for the iterators
//!   that hold its reader; a blob file is closed then, so an iterator made before the
//!   catch-up that reads a value from it fails if the primary has deleted it (`refresh()`).
//! - Each memtable holds the records of one WAL (its log number), so the manifest's log
//!   number of a family tells which memtables the primary has flushed.
//! - Only one catch-up runs at a time (the `tail` lock); readers never wait for it. Entries
//!   added to a memtable readers already hold are above the published last sequence until
//!   the catch-up ends.
//! - Families are not caught up atomically with one another: each family's view is a prefix
//!   of its writes, as in RocksDB.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;

use super::families::ColumnFamilyData;
use super::info_log::InfoLog;
use super::{Db, DbInner, SuperVersion};
use crate::column_family::ColumnFamily;
use crate::error::{Error, ErrorKind, Result};
use crate::filename::{self, parse_file_name, FileKind};
use crate::key::ValueKind;
use crate::log::{FileFrom, LogReader, ReadError};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::version::FamilyState;
use crate::write_batch::DecodedBatch;

/// Rounds of catch-up (manifest, WALs, manifest, tables) tried when a table of the primary
/// vanishes before it is opened, before the catch-up fails.
const CATCH_UP_ROUNDS: usize = 5;

/// What a secondary instance knows of where it is in its primary's files.
pub(super) struct Secondary {
    /// The secondary's own directory (its `LOG`).
    dir: PathBuf,
    /// Catch-ups run one at a time, under this lock.
    tail: Mutex<Tail>,
}

/// Where WAL replay stopped, and the memtables it fills.
struct Tail {
    /// The WAL read last, and the offset just past its last whole record read.
    wal: Option<(u64, u64)>,
    /// The last sequence number replayed.
    last_sequence: u64,
    /// Per family: its memtables, the active one (newest WAL) first.
    mems: BTreeMap<u32, Vec<Arc<MemTable>>>,
    /// The tables of the versions installed, evicted from the table cache when they leave.
    live_tables: HashSet<u64>,
    /// The blob files of the versions installed, closed when they leave.
    live_blobs: HashSet<u64>,
}

/// What replay needs of one family.
struct Target {
    log_number: u64,
    cf: Arc<ColumnFamilyData>,
}

impl Db {
    /// Opens a secondary instance of the database in `primary_dir`, which another process
    /// (the primary) may be writing, as RocksDB's `OpenAsSecondary`. The secondary reads the
    /// primary's manifest and WALs and writes nothing into `primary_dir` (no lock, no
    /// manifest, WAL, OPTIONS or `LOG`); its own `LOG` goes to `secondary_dir`, created if
    /// missing. It sees the primary as of the open; [`Db::try_catch_up_with_primary`] brings
    /// it up to date. Every column family is opened, with the family fields of `options`,
    /// as [`Db::open_read_only`] does; families the primary creates later appear at a
    /// catch-up ([`Db::cf`] finds them by name) and dropped ones are reported dropped.
    /// Writes, flushes and compactions fail with [`ErrorKind::Unavailable`].
    ///
    /// A secondary keeps every table of its tree open (`max_open_files` is taken as
    /// unlimited, as RocksDB recommends for secondaries), so a table the primary deletes
    /// after a compaction stays readable until a catch-up moves past it.
    ///
    /// ```
    /// use strata::{Db, Options};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let (primary_dir, secondary_dir) = (dir.path().join("db"), dir.path().join("follower"));
    /// let mut options = Options::default();
    /// options.create_if_missing = true;
    /// let primary = Db::open(&primary_dir, options)?;
    /// primary.put(b"a", b"1")?;
    ///
    /// let secondary = Db::open_as_secondary(&primary_dir, &secondary_dir, Options::default())?;
    /// assert_eq!(secondary.get(b"a")?.as_deref(), Some(&b"1"[..]));
    /// primary.put(b"b", b"2")?;
    /// assert_eq!(secondary.get(b"b")?, None); // not caught up yet
    /// secondary.try_catch_up_with_primary()?;
    /// assert_eq!(secondary.get(b"b")?.as_deref(), Some(&b"2"[..]));
    /// assert!(secondary.put(b"c", b"3").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// [`ErrorKind::Unavailable`]: crate::ErrorKind::Unavailable
    pub fn open_as_secondary(
        primary_dir: impl AsRef<Path>,
        secondary_dir: impl AsRef<Path>,
        mut options: Options,
    ) -> Result<Db> {
        let (primary, own) = (primary_dir.as_ref(), secondary_dir.as_ref());
        let fs = options.fs.clone();
        if !fs.exists(&primary.join(filename::CURRENT)) {
            return Err(Error::NotFound(format!(
                "no database in {} to open as a secondary (no {} file)",
                primary.display(),
                filename::CURRENT
            )));
        }
        if same_dir(primary, own) {
            return Err(Error::InvalidArgument(format!(
                "the secondary directory {} is the primary's: give the secondary a directory \
                 of its own for its LOG",
                own.display()
            )));
        }
        options.max_open_files = Options::UNLIMITED_OPEN_FILES;
        options.validate()?;
        fs.create_dir_all(own)?;
        let info_log = InfoLog::open(
            fs.clone(),
            own,
            options.max_log_file_size,
            options.keep_log_file_num,
        );
        let inner = super::open::open_read_only_inner(primary, options, false, info_log)?;
        let mems = inner
            .families()
            .iter()
            .map(|(&id, cf)| (id, vec![cf.super_version().active.clone()]))
            .collect();
        let secondary = Secondary {
            dir: own.to_path_buf(),
            tail: Mutex::new(Tail {
                wal: None,
                last_sequence: 0,
                mems,
                live_tables: HashSet::new(),
                live_blobs: HashSet::new(),
            }),
        };
        if inner.secondary.set(secondary).is_err() {
            unreachable!("a database just opened is not a secondary yet");
        }
        let db = Db { inner };
        db.try_catch_up_with_primary()?;
        db.inner.info_log.info(format_args!(
            "opened as a secondary of {} (last sequence {})",
            db.inner.path.display(),
            db.inner.last_sequence.load(Ordering::Acquire)
        ));
        Ok(db)
    }

    /// Brings a secondary instance up to date with its primary, as RocksDB's
    /// `TryCatchUpWithPrimary`: reads the manifest edits and WAL records the primary wrote
    /// since the last catch-up (following it to a new manifest), and installs the result;
    /// reads and new iterators see it afterwards ([`DbIterator::refresh`] moves an existing
    /// iterator). A record the primary is still writing is read at the next catch-up. Fails
    /// on a database not opened with [`Db::open_as_secondary`]. An error leaves the
    /// secondary readable as it was; calling again is the remedy for a primary that deleted
    /// a table before the secondary could open it.
    ///
    /// [`DbIterator::refresh`]: crate::DbIterator::refresh
    pub fn try_catch_up_with_primary(&self) -> Result<()> {
        let inner = &self.inner;
        inner.check_open()?;
        let Some(secondary) = inner.secondary.get() else {
            return Err(Error::InvalidArgument(format!(
                "database {} is not open as a secondary instance: only a database opened \
                 with Db::open_as_secondary catches up with a primary",
                inner.path.display()
            )));
        };
        let mut tail = secondary.tail.lock();
        let result = inner.catch_up(&mut tail);
        if let Err(e) = &result {
            inner
                .info_log
                .info(format_args!("catch-up with the primary failed: {e}"));
        }
        result
    }

    /// The secondary's own directory, for a database opened with
    /// [`Db::open_as_secondary`]; `None` for any other.
    pub fn secondary_path(&self) -> Option<&Path> {
        self.inner.secondary.get().map(|s| s.dir.as_path())
    }
}

impl DbInner {
    /// One catch-up (see the module documentation).
    fn catch_up(&self, tail: &mut Tail) -> Result<()> {
        let mut round = 0;
        loop {
            round += 1;
            self.follow_primary_manifest(tail)?;
            self.replay_wal_tails(tail)?;
            self.follow_primary_manifest(tail)?;
            match self.install_caught_up(tail) {
                Ok(()) => break,
                Err(e) if round < CATCH_UP_ROUNDS && is_not_found(&e) => continue,
                Err(e) if is_not_found(&e) => {
                    return Err(Error::Unavailable(format!(
                        "{e}: the primary deleted a file of its tree (a table or a blob file) before this secondary \
                         could open it (a compaction ended meanwhile); call \
                         try_catch_up_with_primary again"
                    )))
                }
                Err(e) => return Err(e),
            }
        }
        let recorded = self.versions.lock().last_sequence();
        self.last_sequence
            .fetch_max(recorded.max(tail.last_sequence), Ordering::AcqRel);
        Ok(())
    }

    /// Reads the primary's manifest on, and makes the family set match it: families created
    /// get a handle and an empty memtable, dropped ones are marked dropped.
    fn follow_primary_manifest(&self, tail: &mut Tail) -> Result<()> {
        let order_of = super::open::read_only_order(&self.options);
        let mut versions = self.versions.lock();
        if !versions.follow_manifest(order_of)? {
            return Ok(());
        }
        let current = self.families();
        let recorded = versions.families();
        let unchanged = recorded.len() == current.len()
            && recorded
                .iter()
                .all(|(id, f)| current.get(id).is_some_and(|cf| cf.name() == f.name));
        if unchanged {
            return Ok(());
        }
        let mut next = BTreeMap::new();
        for (&id, f) in recorded {
            match current.get(&id) {
                Some(cf) if cf.name() == f.name => {
                    next.insert(id, cf.clone());
                }
                _ => {
                    let options = family_options(&self.options, f);
                    let active = Arc::new(
                        MemTable::with_order(
                            f.log_number,
                            options.write_buffer_size,
                            f.current.order.clone(),
                        )
                        .with_bloom(options.memtable_bloom_bytes())
                        .with_point_index(options.memtable_point_index_bytes()),
                    );
                    tail.mems.insert(id, vec![active.clone()]);
                    let cf = ColumnFamilyData::new(
                        ColumnFamily::new(id, &f.name),
                        options,
                        active,
                        Vec::new(),
                        f.current.clone(),
                    );
                    self.info_log.info(format_args!(
                        "secondary: column family '{}' (id {id}) created by the primary",
                        f.name
                    ));
                    next.insert(id, Arc::new(cf));
                }
            }
        }
        for (id, cf) in current.iter() {
            if next.get(id).is_none_or(|n| !Arc::ptr_eq(n, cf)) {
                cf.handle.mark_dropped();
                tail.mems.remove(id);
                self.info_log.info(format_args!(
                    "secondary: column family '{}' (id {id}) dropped by the primary",
                    cf.name()
                ));
            }
        }
        *self.families.write() = Arc::new(next);
        Ok(())
    }

    /// Replays the primary's WALs from where the last replay stopped into `tail`'s
    /// memtables, up to the end of what is there or the first record that cannot be
    /// applied yet.
    fn replay_wal_tails(&self, tail: &mut Tail) -> Result<()> {
        let (targets, max_column_family, min_log) = {
            let versions = self.versions.lock();
            let families = self.families();
            let targets: BTreeMap<u32, Target> = versions
                .families()
                .iter()
                .filter_map(|(&id, f)| {
                    let cf = families.get(&id)?.clone();
                    Some((
                        id,
                        Target {
                            log_number: f.log_number,
                            cf,
                        },
                    ))
                })
                .collect();
            (
                targets,
                versions.max_column_family(),
                versions.min_log_number(),
            )
        };
        let start = tail.wal.map_or(min_log, |(n, _)| n.max(min_log));
        let mut wals: Vec<u64> = self
            .fs
            .list_dir(&self.path)?
            .iter()
            .filter_map(|n| match parse_file_name(n)? {
                FileKind::Wal(n) if n >= start => Some(n),
                _ => None,
            })
            .collect();
        wals.sort_unstable();
        let mut blobs = super::blob::at_write::WalBlobReader::new(self.fs.as_ref(), &self.path);
        for number in wals {
            let from = match tail.wal {
                Some((n, offset)) if n == number => offset,
                _ => 0,
            };
            let path = filename::wal_path(&self.path, number);
            let mut reader = match FileFrom::open(self.fs.as_ref(), &path, from) {
                // Flushed and deleted since it was listed: the second manifest read names
                // the tables holding its records.
                Err(e) if is_not_found(&e) => continue,
                Err(e) => return Err(e),
                Ok(file) => LogReader::resume(Box::new(file), from)?,
            };
            tail.wal = Some((number, from));
            let whole = self.replay_one_wal(
                number,
                &mut reader,
                tail,
                &targets,
                max_column_family,
                &mut blobs,
            )?;
            self.io
                .add_read(crate::fs::IoClass::Recovery, reader.bytes_read());
            if !whole {
                break;
            }
        }
        Ok(())
    }

    /// Replays the records of WAL `number` from `reader`'s position into `tail`; returns
    /// whether it read to the clean end of what is there.
    fn replay_one_wal(
        &self,
        number: u64,
        reader: &mut LogReader,
        tail: &mut Tail,
        targets: &BTreeMap<u32, Target>,
        max_column_family: u32,
        blobs: &mut super::blob::at_write::WalBlobReader,
    ) -> Result<bool> {
        let mut values: Vec<Vec<u8>> = Vec::new();
        loop {
            let record = match reader.read_record() {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(true),
                // Torn or partly written: where the primary is writing. Read again next time.
                Err(ReadError::Bad(_)) => return Ok(false),
                Err(ReadError::Io(e)) => return Err(e),
            };
            let Ok(batch) = DecodedBatch::parse(record) else {
                return Ok(false);
            };
            if batch.seq <= tail.last_sequence && tail.last_sequence > 0 {
                return Ok(false);
            }
            // Check the whole batch before applying any of it: a batch is all or nothing.
            values.clear();
            for entry in batch.iter() {
                let Ok(e) = entry else {
                    return Ok(false);
                };
                match targets.get(&e.cf) {
                    Some(t) if number >= t.log_number && e.kind == ValueKind::BlobIndex => {
                        match blobs.value(number, e.key, e.value) {
                            Ok(v) => values.push(v),
                            Err(_) => return Ok(false),
                        }
                    }
                    Some(_) => {}
                    None if e.cf <= max_column_family => {}
                    // A family created after the manifest was read: next time.
                    None => return Ok(false),
                }
            }
            let mut values = values.iter();
            let mut seq = batch.seq;
            for e in batch.iter().flatten() {
                if let Some(t) = targets.get(&e.cf).filter(|t| number >= t.log_number) {
                    let (kind, value) = match e.kind {
                        ValueKind::BlobIndex => match values.next() {
                            Some(v) => (ValueKind::Put, &v[..]),
                            None => unreachable!("read above for each blob reference"),
                        },
                        kind => (kind, e.value),
                    };
                    memtable_for(tail, t, number).add(seq, kind, e.key, value);
                }
                seq += 1;
            }
            if batch.count > 0 {
                tail.last_sequence = seq - 1;
            }
            tail.wal = Some((number, reader.end_of_last_record()));
        }
    }

    /// Drops the memtables the primary flushed, opens the tables of the current versions
    /// and installs a super version per family. Nothing is installed if a table cannot be
    /// opened.
    fn install_caught_up(&self, tail: &mut Tail) -> Result<()> {
        let recorded: Vec<(u32, FamilyState)> = self
            .versions
            .lock()
            .families()
            .iter()
            .map(|(&id, f)| (id, f.clone()))
            .collect();
        let mut live_blobs = HashSet::new();
        for (_, f) in &recorded {
            for (level, files) in f.current.levels.iter().enumerate() {
                for file in files {
                    self.tables.get_for(file, &f.current.order, level)?;
                }
            }
            for number in f.current.live_blob_files() {
                self.blobs.open_file(number)?;
                live_blobs.insert(number);
            }
        }
        let families = self.families();
        let mut live = HashSet::new();
        for (id, f) in &recorded {
            let Some(cf) = families.get(id) else {
                continue;
            };
            live.extend(f.current.live_files());
            let mems = tail.mems.entry(*id).or_default();
            mems.retain(|m| m.log_number() >= f.log_number);
            if mems.is_empty() {
                let options = &cf.options;
                let active = MemTable::with_order(
                    f.log_number,
                    options.write_buffer_size,
                    f.current.order.clone(),
                )
                .with_bloom(options.memtable_bloom_bytes())
                .with_point_index(options.memtable_point_index_bytes());
                mems.push(Arc::new(active));
            }
            let sv = SuperVersion::new(mems[0].clone(), mems[1..].to_vec(), f.current.clone());
            cf.note_new_version(&f.current);
            *cf.sv.write() = Arc::new(sv);
        }
        for gone in tail.live_tables.difference(&live) {
            self.tables.evict(*gone);
        }
        tail.live_tables = live;
        for gone in tail.live_blobs.difference(&live_blobs) {
            self.blobs.evict(*gone);
        }
        tail.live_blobs = live_blobs;
        Ok(())
    }
}

/// The memtable of family `t` for the records of WAL `number`: the family's newest, or a
/// new one when the newest holds an older WAL's records.
fn memtable_for<'a>(tail: &'a mut Tail, t: &Target, number: u64) -> &'a Arc<MemTable> {
    let id = t.cf.id();
    let mems = tail.mems.entry(id).or_default();
    if mems.first().is_none_or(|m| m.log_number() != number) {
        let options = &t.cf.options;
        let order = t.cf.super_version().version.order.clone();
        let mem = MemTable::with_order(number, options.write_buffer_size, order)
            .with_bloom(options.memtable_bloom_bytes())
            .with_point_index(options.memtable_point_index_bytes());
        match mems.first() {
            Some(newest) if newest.is_empty() => mems[0] = Arc::new(mem),
            Some(newest) => {
                // It takes no more records: link what it stages for its readers.
                newest.link_staged();
                mems.insert(0, Arc::new(mem));
            }
            None => mems.push(Arc::new(mem)),
        }
    }
    &mems[0]
}

/// The options of family `f` in a secondary opened with `options`: those, with the ttl the
/// manifest records (see `Db::open_read_only`).
fn family_options(options: &Options, f: &FamilyState) -> Options {
    let mut own = options.clone();
    own.ttl = f.ttl.map(std::time::Duration::from_secs);
    if own.ttl.is_some() {
        own.merge_operator = None;
    }
    own
}

/// Whether `e` says a file does not exist.
fn is_not_found(e: &Error) -> bool {
    match e {
        Error::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
        other => other.kind() == ErrorKind::NotFound,
    }
}

/// Whether `a` and `b` name the same directory (`b` may not exist yet).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
