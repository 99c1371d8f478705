//! Whole-file operations on the tree: RocksDB's `DeleteFilesInRange` (dropping the tables
//! that lie inside a key range, as a fast `DROP TABLE` or the removal of a moved region
//! does) and `CompactFiles` (compacting exactly the files named).
//!
//! Both take the tree from compactions first, as a manual compaction does (wait for the
//! running ones, start none until done): no file they look at is being compacted, and the
//! version they decide on is the one their edit applies to.
//!
//! `delete_files_in_range` drops, in one manifest edit, every file of levels 1 and up whose
//! key range lies inside `[begin, end]` and whose removal cannot bring an older version of
//! a key back: a file goes only if every file of the levels below it that overlaps its key
//! range goes too. Level 0 is left alone (as in RocksDB): its files are the newest data and
//! overlap one another. So after the call, each key reads either as before (its newest
//! version is in a memtable, in L0 or in a file that stayed) or as absent (every version
//! of it below L0 was in files dropped). Iterators already open keep the version they read
//! (the files stay on disk until they are done); reads at a snapshot taken before see the
//! tree without the files, as in RocksDB. A crash leaves the edit whole or absent.
//!
//! `compact_files` checks the names, then builds the task: the files given, plus the files
//! of the output level that overlap their key range (the output must not overlap what stays
//! in its level). It refuses, naming the file or level: a name that is not a table of the
//! family; an output level past the last, above an input's level, or 0; a file of a level
//! between the inputs' top level and the output level that overlaps the inputs and is not
//! among them (its data is newer than what would go below it); an L0 file not given that
//! overlaps the inputs and is older than an L0 file given (the same, within L0).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use super::families::ColumnFamilyData;
use super::{Db, DbInner};
use crate::column_family::ColumnFamily;
use crate::compaction::picker::{self, CompactionTask, LevelInputs, Reason};
use crate::comparator::KeyOrder;
use crate::error::{Error, Result};
use crate::filename::{parse_file_name, FileKind};
use crate::key::user_key;
use crate::range_del::ends_before;
use crate::version::{FileMeta, VersionEdit};

impl Db {
    /// Drops the tables of column family `cf` whose keys all lie in `[begin, end]` (`None`
    /// is an open bound), in one manifest edit, without reading them (RocksDB's
    /// `DeleteFilesInRange`). Only whole files go, and only from levels 1 and up; a file goes
    /// only if the files below it that overlap its keys go too, so no older version of a key
    /// comes back. Keys of the range in memtables, in L0 or in files that stay remain: follow
    /// with [`Db::delete_range_cf`] (or a compaction of the range) to remove every key.
    /// Returns the names of the files dropped. Iterators open before keep reading them.
    pub fn delete_files_in_range(
        &self,
        cf: &ColumnFamily,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<Vec<String>> {
        self.inner.check_writable()?;
        let cf = self.inner.family(cf)?;
        self.inner.delete_files_in_range(&cf, begin, end)
    }

    /// Compacts exactly the tables `files` of column family `cf` (names as
    /// [`Db::live_files_metadata`] gives them, `NNNNNN.sst`, or paths ending in one) into
    /// `output_level`, with the files of that level that overlap them (RocksDB's
    /// `CompactFiles`). Waits for running compactions first. Refused, naming the culprit:
    /// an unknown name or a file of another family, an output level past the last one, 0, or
    /// above an input's level, and a choice that would leave newer data above older (a file
    /// of a level in between, or an older L0 file, overlapping the inputs and not given).
    pub fn compact_files<S: AsRef<str>>(
        &self,
        cf: &ColumnFamily,
        files: &[S],
        output_level: usize,
    ) -> Result<()> {
        self.inner.check_writable()?;
        let cf = self.inner.family(cf)?;
        let names: Vec<&str> = files.iter().map(AsRef::as_ref).collect();
        self.inner.compact_files(&cf, &names, output_level)
    }
}

/// The number of the table named `name` (`NNNNNN.sst`, or a path ending in it).
fn table_number(name: &str) -> Result<u64> {
    let base = Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    match parse_file_name(base) {
        Some(FileKind::Table(n)) => Ok(n),
        _ => Err(Error::InvalidArgument(format!(
            "compact_files: {name:?} is not a table file name (NNNNNN.sst)"
        ))),
    }
}

/// Whether `f`'s keys all lie in `[begin, end]`.
fn inside(order: &KeyOrder, f: &FileMeta, begin: Option<&[u8]>, end: Option<&[u8]>) -> bool {
    begin.is_none_or(|b| order.le(b, user_key(&f.smallest)))
        && end.is_none_or(|e| order.le(user_key(&f.largest), e))
}

/// Whether `f` holds keys of `[lo, hi]` (user keys).
fn overlaps(order: &KeyOrder, f: &FileMeta, lo: &[u8], hi: &[u8]) -> bool {
    !ends_before(order, &f.largest, lo) && order.le(user_key(&f.smallest), hi)
}

impl DbInner {
    fn delete_files_in_range(
        &self,
        cf: &Arc<ColumnFamilyData>,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<Vec<String>> {
        let _exclusive = self.begin_manual_compaction()?;
        let version = cf.super_version().version.clone();
        let order = &version.order;
        // From the bottom up: a file can go once every overlapping file below it goes.
        let mut dropping: Vec<Vec<Arc<FileMeta>>> = vec![Vec::new(); version.levels.len()];
        for level in (1..version.levels.len()).rev() {
            for f in &version.levels[level] {
                if !inside(order, f, begin, end) {
                    continue;
                }
                let (lo, hi) = (user_key(&f.smallest), user_key(&f.largest));
                let below_goes = ((level + 1)..version.levels.len()).all(|deeper| {
                    version.levels[deeper]
                        .iter()
                        .filter(|g| overlaps(order, g, lo, hi))
                        .all(|g| dropping[deeper].iter().any(|d| d.number == g.number))
                });
                if below_goes {
                    dropping[level].push(f.clone());
                }
            }
        }
        let mut edit = VersionEdit {
            column_family: cf.id(),
            ..VersionEdit::default()
        };
        for (level, files) in dropping.iter().enumerate() {
            for f in files {
                edit.deleted_files.push((level, f.number));
            }
        }
        drop(version);
        if edit.deleted_files.is_empty() {
            return Ok(Vec::new());
        }
        let numbers: Vec<u64> = edit.deleted_files.iter().map(|&(_, n)| n).collect();
        {
            let mut versions = self.versions.lock();
            if cf.handle.is_dropped() {
                return Err(super::families::dropped_error(&cf.handle));
            }
            let version = versions.log_and_apply(edit)?;
            cf.install_version(version);
        }
        self.obsolete.tables.lock().extend(numbers.iter().copied());
        self.info_log.info(format_args!(
            "delete_files_in_range of family '{}': dropped tables {numbers:?}",
            cf.name()
        ));
        self.purge_obsolete_files();
        Ok(numbers
            .into_iter()
            .map(super::metadata::file_name)
            .collect())
    }

    fn compact_files(
        &self,
        cf: &Arc<ColumnFamilyData>,
        names: &[&str],
        output_level: usize,
    ) -> Result<()> {
        if names.is_empty() {
            return Err(Error::InvalidArgument(
                "compact_files: no file given".into(),
            ));
        }
        let last = cf.options.compaction_levels() - 1;
        if output_level == 0 || output_level > last {
            return Err(Error::InvalidArgument(format!(
                "compact_files: output level {output_level} is not a level 1..={last} of \
                 column family '{}'",
                cf.name()
            )));
        }
        let wanted: BTreeSet<u64> = names
            .iter()
            .map(|n| table_number(n))
            .collect::<Result<_>>()?;
        let _exclusive = self.begin_manual_compaction()?;
        let version = cf.super_version().version.clone();
        let order = &version.order;
        let mut by_level: BTreeMap<usize, Vec<Arc<FileMeta>>> = BTreeMap::new();
        for (level, files) in version.levels.iter().enumerate() {
            for f in files.iter().filter(|f| wanted.contains(&f.number)) {
                by_level.entry(level).or_default().push(f.clone());
            }
        }
        let found: BTreeSet<u64> = by_level.values().flatten().map(|f| f.number).collect();
        if let Some(missing) = wanted.difference(&found).next() {
            return Err(Error::InvalidArgument(format!(
                "compact_files: {} is not a live table of column family '{}'",
                super::metadata::file_name(*missing),
                cf.name()
            )));
        }
        let (Some(&top), Some(&deepest)) = (by_level.keys().next(), by_level.keys().last()) else {
            return Ok(());
        };
        if deepest > output_level {
            return Err(Error::InvalidArgument(format!(
                "compact_files: output level {output_level} is above level {deepest} of an \
                 input file"
            )));
        }
        let all: Vec<Arc<FileMeta>> = by_level.values().flatten().cloned().collect();
        let Some((lo, hi)) = picker::key_range(order, &all) else {
            return Ok(());
        };
        // Newer data must stay above older: what overlaps the inputs between their top
        // level and the output level must be among them.
        let refuse = |f: &FileMeta, level: usize, why: &str| {
            Error::InvalidArgument(format!(
                "compact_files: {} at L{level} overlaps the inputs' keys and is not among \
                 them ({why}); add it or choose other files",
                super::metadata::file_name(f.number)
            ))
        };
        if top == 0 {
            // L0 is newest first: a file after the newest one given is older than it.
            let l0 = &version.levels[0];
            let newest_given = l0.iter().position(|f| found.contains(&f.number));
            if let Some(f) = l0
                .iter()
                .skip(newest_given.unwrap_or(l0.len()))
                .find(|f| !found.contains(&f.number) && overlaps(order, f, &lo, &hi))
            {
                return Err(refuse(f, 0, "it is older than an L0 file given"));
            }
        }
        for level in (top + 1)..output_level {
            if let Some(f) = version.levels[level]
                .iter()
                .find(|f| !found.contains(&f.number) && overlaps(order, f, &lo, &hi))
            {
                return Err(refuse(
                    f,
                    level,
                    "its level lies between the inputs and the output",
                ));
            }
        }
        // The output level's files that overlap the inputs join them.
        let at_output = by_level.entry(output_level).or_default();
        for f in picker::overlapping(order, &version.levels[output_level], &lo, &hi) {
            if !at_output.iter().any(|g| g.number == f.number) {
                at_output.push(f);
            }
        }
        at_output.sort_by(|a, b| order.compare_internal(&a.smallest, &b.smallest));
        if by_level[&output_level].is_empty() {
            by_level.remove(&output_level);
        }
        let task = CompactionTask {
            inputs: by_level
                .into_iter()
                .map(|(level, files)| LevelInputs { level, files })
                .collect(),
            output_level,
            score: 0.0,
            reason: Reason::Manual,
            order: order.clone(),
        };
        self.info_log.info(format_args!(
            "compact_files of family '{}': {} files into L{output_level}",
            cf.name(),
            task.all_inputs().count()
        ));
        // A version held here would keep the inputs on disk past the compaction's purge.
        drop(version);
        self.run_manual(cf, &task)
    }
}
