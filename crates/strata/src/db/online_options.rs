//! Options changed on an open database (RocksDB's `SetOptions` and `SetDBOptions`), and the
//! OPTIONS file that records the options in force (`options/file.rs`).
//!
//! - A change names options by their names in `options/registry.rs`. It is checked whole
//!   before anything changes: an unknown name, an option of the other kind (database-wide
//!   or per family), an option that cannot change on an open database, a value that does not
//!   parse, or a set of values that fails `Options::validate` refuses the whole call, naming
//!   the option, and leaves every option as it was.
//! - A family's options are swapped as one `Arc` (`ColumnFamilyData::set_current_options`),
//!   so a job sees all of one call's changes or none. Work started before the change keeps
//!   the options it started with: a running compaction its output size, a memtable its
//!   bloom filter. The next flush, compaction pick and write-stall decision read the new
//!   ones; the background threads and stalled writers are woken to decide again.
//! - Changes are serialized by `OnlineOptions::next_file` (not ranked: it is held while
//!   the families' set is read and the OPTIONS file written, and nothing else is taken under
//!   it), so the OPTIONS files are written in the order of the changes, the last one holding
//!   them all. A change whose file cannot be written is in force; the call reports the error.

use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::{background, Db, DbInner};
use crate::column_family::ColumnFamily;
use crate::error::{Error, Result};
use crate::options::registry::{self, Section};
use crate::options::{file, CfOptions, Options};

/// The database-wide options now and the OPTIONS files' numbering.
pub(crate) struct OnlineOptions {
    /// The database's options with the changes made since open (its family fields are the
    /// default family's as opened: read those from the family).
    db: RwLock<Arc<Options>>,
    /// The number of the next OPTIONS file; held while options change.
    next_file: Mutex<u64>,
}

impl OnlineOptions {
    /// The options of a database opened with `options`, whose OPTIONS files are numbered
    /// below `next_file`.
    pub fn new(options: &Options, next_file: u64) -> OnlineOptions {
        OnlineOptions {
            db: RwLock::new(Arc::new(options.clone())),
            next_file: Mutex::new(next_file),
        }
    }

    /// The database-wide options now.
    pub fn db(&self) -> Arc<Options> {
        self.db.read().clone()
    }
}

/// `options` with `changes` made, each checked as a `section` option (family options when
/// `family`) that may change online; the options are not validated together here.
fn apply(options: &Options, family: bool, changes: &[(&str, &str)]) -> Result<Options> {
    if changes.is_empty() {
        return Err(Error::InvalidArgument(
            "no options to set were given".into(),
        ));
    }
    let mut next = options.clone();
    for &(name, value) in changes {
        let info = registry::find(name)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown option {name:?}")))?;
        match (family, info.section) {
            (true, Section::Db) => {
                return Err(Error::InvalidArgument(format!(
                    "option {name:?} is a database option: set it with set_db_options"
                )))
            }
            (false, Section::Family | Section::Table) => {
                return Err(Error::InvalidArgument(format!(
                    "option {name:?} is a column family option: set it with set_options or \
                     set_cf_options"
                )))
            }
            _ => {}
        }
        if !info.mutable {
            return Err(Error::InvalidArgument(format!(
                "option {name:?} cannot be changed on an open database: set it in the \
                 options the database is opened with"
            )));
        }
        (info.set)(&mut next, value).map_err(|why| {
            Error::InvalidArgument(format!(
                "option {name:?}: value {value:?} is not valid, expected {why}"
            ))
        })?;
    }
    if next.ttl.is_some() != options.ttl.is_some() {
        return Err(Error::InvalidArgument(
            "option \"ttl\": a family has a ttl (or none) from its creation; its length may \
             change, but it cannot be set to 0 or from 0"
                .into(),
        ));
    }
    Ok(next)
}

/// The changes as `name=value, ...` for the info log.
fn describe(changes: &[(&str, &str)]) -> String {
    changes
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Db {
    /// Changes options of the default column family on the open database (RocksDB's
    /// `SetOptions`): each `(name, value)` names an option as the OPTIONS file does. See
    /// [`Db::set_cf_options`].
    ///
    /// ```
    /// use strata::{Db, Options};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let mut options = Options::default();
    /// options.create_if_missing = true;
    /// let db = Db::open(dir.path(), options)?;
    /// db.set_options(&[("write_buffer_size", "1048576"), ("level0_slowdown_writes_trigger", "30")])?;
    /// assert_eq!(db.get_options().write_buffer_size, 1 << 20);
    /// // Refused whole: nothing changed.
    /// assert!(db.set_options(&[("write_buffer_size", "2097152"), ("num_levels", "4")]).is_err());
    /// assert_eq!(db.get_options().write_buffer_size, 1 << 20);
    /// # db.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_options(&self, changes: &[(&str, &str)]) -> Result<()> {
        self.set_cf_options(&self.default_cf(), changes)
    }

    /// Changes options of column family `cf` on the open database (RocksDB's `SetOptions`
    /// with a family): the mutable ones of `options/registry.rs`, such as
    /// `write_buffer_size`, `max_write_buffer_number`, the `level0_*` triggers,
    /// `target_file_size_base` and `_multiplier`, `max_bytes_for_level_base` and
    /// `_multiplier`, `disable_auto_compactions`, `compression`, the blob options and `ttl`.
    /// The next memtable, flush, compaction pick and write-stall decision use them; work
    /// already running keeps the options it started with. The OPTIONS file is rewritten.
    ///
    /// All or nothing: an unknown option, a database-wide one, one that cannot change on an
    /// open database (`num_levels`, `compaction_style`, the table format), a bad value or
    /// values that contradict each other refuse the call with
    /// [`crate::ErrorKind::InvalidArgument`] naming the option, and nothing changes.
    pub fn set_cf_options(&self, cf: &ColumnFamily, changes: &[(&str, &str)]) -> Result<()> {
        let inner = &self.inner;
        inner.check_writable()?;
        let family = inner.family(cf)?;
        let mut next_file = inner.online.next_file.lock();
        let next = apply(&family.current_options(), true, changes)?;
        super::families::check_options(family.name(), &next)?;
        family.set_current_options(Arc::new(next));
        // The pending compaction bytes the stall decision reads follow the level targets.
        family.note_new_version(&family.super_version().version);
        inner.info_log.info(format_args!(
            "set options of column family '{}': {}",
            family.name(),
            describe(changes)
        ));
        let written = inner.write_options_file(&mut next_file);
        drop(next_file);
        inner.wake_background();
        written
    }

    /// Changes database-wide options on the open database (RocksDB's `SetDBOptions`):
    /// `max_background_jobs` (compaction threads are started or left idle),
    /// `max_total_wal_size`, `compaction_readahead_size`. All or nothing, as
    /// [`Db::set_cf_options`]; the OPTIONS file is rewritten.
    pub fn set_db_options(&self, changes: &[(&str, &str)]) -> Result<()> {
        let inner = &self.inner;
        inner.check_writable()?;
        let mut next_file = inner.online.next_file.lock();
        let next = apply(&inner.online.db(), false, changes)?;
        next.validate()?;
        let threads = next.compaction_threads();
        *inner.online.db.write() = Arc::new(next);
        let started = background::spawn_compaction_threads(&self.inner, threads);
        match started {
            Ok(handles) => inner.bg.threads.lock().extend(handles),
            Err(e) => return Err(e),
        }
        inner
            .info_log
            .info(format_args!("set database options: {}", describe(changes)));
        let written = inner.write_options_file(&mut next_file);
        drop(next_file);
        inner.wake_background();
        written
    }

    /// The options in force now: the database-wide ones with the default family's (RocksDB's
    /// `GetOptions`), changes made online included.
    pub fn get_options(&self) -> Options {
        let db = self.inner.online.db();
        db.for_family(&self.inner.default_cf.current_options().cf_options())
    }

    /// The options of column family `cf` in force now.
    pub fn get_cf_options(&self, cf: &ColumnFamily) -> Result<CfOptions> {
        Ok(self.inner.family(cf)?.current_options().cf_options())
    }
}

impl DbInner {
    /// Writes the options in force as OPTIONS file `*next_file` (then the next number), the
    /// caller holding `online.next_file`.
    pub(super) fn write_options_file(&self, next_file: &mut u64) -> Result<()> {
        let db = self.online.db();
        let families: Vec<(String, Options)> = self
            .families()
            .values()
            .map(|cf| (cf.name().to_string(), Options::clone(&cf.current_options())))
            .collect();
        let text = file::render(&db, &families);
        let number = *next_file;
        *next_file += 1;
        file::write(self.fs.as_ref(), &self.path, number, &text).map_err(|e| {
            self.info_log
                .error(format_args!("could not write OPTIONS file {number}: {e}"));
            e
        })
    }

    /// Writes the OPTIONS file for the options in force (after open, and after a family is
    /// created or dropped).
    pub(super) fn persist_options(&self) -> Result<()> {
        let mut next_file = self.online.next_file.lock();
        self.write_options_file(&mut next_file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mutable_family_option_can_be_set_and_every_fixed_one_is_refused() {
        // A TTL family, whose ttl may change length.
        let with_ttl = Options {
            ttl: Some(std::time::Duration::from_secs(60)),
            ..Options::default()
        };
        for o in registry::in_sections(true) {
            let got = apply(&with_ttl, true, &[(o.name, o.example)]);
            match (o.mutable, got) {
                (true, Ok(next)) => assert_eq!((o.get)(&next), o.example, "{}", o.name),
                (false, Err(e)) => {
                    assert!(e.to_string().contains(o.name), "{e}");
                    assert!(e.to_string().contains("cannot be changed"), "{e}");
                }
                (mutable, got) => panic!("{}: mutable {mutable}, got {got:?}", o.name),
            }
        }
    }

    #[test]
    fn every_mutable_db_option_can_be_set_and_every_fixed_one_is_refused() {
        for o in registry::in_sections(false) {
            let got = apply(&Options::default(), false, &[(o.name, o.example)]);
            assert_eq!(got.is_ok(), o.mutable, "{}", o.name);
        }
    }

    #[test]
    fn bad_calls_are_refused_naming_the_option() {
        type Changes<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(bool, Changes, &str)] = &[
            (
                true,
                &[("no_such_option", "1")],
                "unknown option \"no_such_option\"",
            ),
            (
                true,
                &[("max_background_jobs", "4")],
                "is a database option",
            ),
            (
                false,
                &[("write_buffer_size", "4096")],
                "is a column family option",
            ),
            (true, &[("num_levels", "4")], "cannot be changed"),
            (
                true,
                &[("write_buffer_size", "big")],
                "option \"write_buffer_size\": value \"big\"",
            ),
            (
                true,
                &[("compression", "gzip")],
                "expected one of none, snappy",
            ),
            (true, &[], "no options"),
            (true, &[("ttl", "60")], "ttl"),
        ];
        for (family, changes, says) in cases {
            let err = apply(&Options::default(), *family, changes).expect_err(says);
            assert!(err.to_string().contains(says), "{says}: {err}");
        }
    }
}
