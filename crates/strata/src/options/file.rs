//! The OPTIONS file: the options a database runs with, as text, written at open and at every
//! change (`Db::set_options`, `Db::set_db_options`, creating or dropping a column family), and
//! read back by [`Options::load_latest`].
//!
//! Layout (RocksDB's OPTIONS files, with Strata's option names and values; see
//! `options/registry.rs`):
//!
//! ```text
//! # comment lines and blank lines are ignored
//! [Version]
//!   strata_version=0.1.0
//!   options_file_version=1
//!
//! [DBOptions]
//!   max_background_jobs=2
//!   ...
//!
//! [CFOptions "default"]
//!   write_buffer_size=67108864
//!   ...
//!
//! [TableOptions/BlockBasedTable "default"]
//!   block_size=4096
//!   ...
//! ```
//!
//! One `[CFOptions "name"]` section per column family, the default first, each followed by
//! its `[TableOptions/BlockBasedTable "name"]` section. A name is written between double
//! quotes with `\` and `"` escaped by a backslash. Options missing from a section keep their
//! defaults (a file written by an older build reads); an unknown option, a bad value, a line
//! that is neither a section nor `name=value`, or a table section for an unknown family make
//! the file corrupt, and the error names the file, the line and what is wrong.
//!
//! Files are named `OPTIONS-NNNNNN`, numbered upwards from the highest in the directory; each
//! is written to `OPTIONS-NNNNNN.tmp`, synced, renamed into place and the directory synced,
//! so a crash leaves the previous file whole. The two newest are kept, older ones deleted.

use std::path::Path;

use super::registry::{self, Section};
use super::{CfOptions, Options};
use crate::error::{Error, Result};
use crate::fs::{FileSystem, PosixFs};

/// The version of this layout, written in the `[Version]` section.
const OPTIONS_FILE_VERSION: u32 = 1;
/// OPTIONS files kept in the directory (the newest ones).
const KEEP: usize = 2;
/// The largest OPTIONS file read (a corrupt length must not fill memory).
const MAX_FILE_BYTES: usize = 4 << 20;

use crate::filename::{options_file_name as file_name, parse_options_file as parse_file_name};

/// The numbers of the OPTIONS files in `dir`, ascending.
pub(crate) fn numbers(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<u64>> {
    let mut numbers: Vec<u64> = fs
        .list_dir(dir)?
        .iter()
        .filter_map(|name| parse_file_name(name))
        .collect();
    numbers.sort_unstable();
    Ok(numbers)
}

/// The text of an OPTIONS file for database options `db` and the families' options (name
/// and options with the family's fields), the default family first.
pub(crate) fn render(db: &Options, families: &[(String, Options)]) -> String {
    let mut out = String::new();
    out.push_str(
        "# Strata options file: the options the database runs with, one per line.\n\
         # Written at open and at every change; read with Options::load_latest.\n\n",
    );
    out.push_str("[Version]\n");
    out.push_str(&format!("  strata_version={}\n", env!("CARGO_PKG_VERSION")));
    out.push_str(&format!(
        "  options_file_version={OPTIONS_FILE_VERSION}\n\n"
    ));
    out.push_str("[DBOptions]\n");
    for o in registry::in_sections(false) {
        out.push_str(&format!("  {}={}\n", o.name, (o.get)(db)));
    }
    for (name, options) in families {
        for (header, section) in [
            ("CFOptions", Section::Family),
            ("TableOptions/BlockBasedTable", Section::Table),
        ] {
            out.push_str(&format!("\n[{header} {}]\n", quote(name)));
            for o in registry::all().iter().filter(|o| o.section == section) {
                out.push_str(&format!("  {}={}\n", o.name, (o.get)(options)));
            }
        }
    }
    out
}

fn quote(name: &str) -> String {
    let mut q = String::with_capacity(name.len() + 2);
    q.push('"');
    for c in name.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

/// The name between the quotes of `text` (`"name"`), unescaped.
fn unquote(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut name = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.push(chars.next()?),
            '"' => return None,
            c => name.push(c),
        }
    }
    Some(name)
}

/// Where the lines of a section go.
enum Target {
    Version,
    Db,
    Family(usize, Section),
}

/// Reads the text of an OPTIONS file (`file` names it in errors): the database options
/// (with the default family's fields) and every family's name and options, the default
/// first.
pub(crate) fn parse(text: &str, file: &Path) -> Result<(Options, Vec<(String, CfOptions)>)> {
    let mut db = Options::default();
    let mut families: Vec<(String, Options)> = Vec::new();
    let mut target: Option<Target> = None;
    let mut offset = 0u64;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let line_start = offset;
        offset += raw.len() as u64;
        let corrupt = |why: String| Error::Corruption {
            file: file.to_path_buf(),
            offset: line_start,
            reason: format!("line {}: {why}", index + 1),
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header
                .strip_suffix(']')
                .ok_or_else(|| corrupt(format!("section header {line:?} has no closing ]")))?;
            target = Some(section_of(header, &mut families).map_err(corrupt)?);
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| corrupt(format!("{line:?} is neither a section nor name=value")))?;
        let (name, value) = (name.trim(), value.trim());
        match &target {
            None => return Err(corrupt(format!("option {name:?} before any section"))),
            Some(Target::Version) => {
                if name == "options_file_version" {
                    let version: u32 = value
                        .parse()
                        .map_err(|_| corrupt(format!("options_file_version {value:?}")))?;
                    if version > OPTIONS_FILE_VERSION {
                        return Err(corrupt(format!(
                            "options_file_version {version} is newer than this build reads \
                             ({OPTIONS_FILE_VERSION})"
                        )));
                    }
                }
            }
            Some(Target::Db) => set(&mut db, Section::Db, name, value).map_err(corrupt)?,
            Some(Target::Family(i, section)) => {
                set(&mut families[*i].1, *section, name, value).map_err(corrupt)?
            }
        }
    }
    let default = families
        .iter()
        .position(|(name, _)| name == crate::version::DEFAULT_FAMILY_NAME)
        .ok_or_else(|| Error::Corruption {
            file: file.to_path_buf(),
            offset: 0,
            reason: "no [CFOptions \"default\"] section".into(),
        })?;
    let default_options = families[default].1.cf_options();
    let mut loaded = db.for_family(&default_options);
    // The database-wide fields come from [DBOptions], the family fields from the default
    // family's section.
    for o in registry::in_sections(false) {
        (o.set)(&mut loaded, &(o.get)(&db)).map_err(|why| Error::Corruption {
            file: file.to_path_buf(),
            offset: 0,
            reason: format!("{}: {why}", o.name),
        })?;
    }
    let mut out = Vec::with_capacity(families.len());
    let default_entry = families.remove(default);
    out.push((default_entry.0, default_entry.1.cf_options()));
    out.extend(families.into_iter().map(|(n, o)| (n, o.cf_options())));
    Ok((loaded, out))
}

/// The target of section header `header` (without its brackets).
fn section_of(
    header: &str,
    families: &mut Vec<(String, Options)>,
) -> std::result::Result<Target, String> {
    let header = header.trim();
    match header {
        "Version" => return Ok(Target::Version),
        "DBOptions" => return Ok(Target::Db),
        _ => {}
    }
    let (kind, name) = header
        .split_once(' ')
        .ok_or_else(|| format!("unknown section [{header}]"))?;
    let name =
        unquote(name.trim()).ok_or_else(|| format!("section [{header}]: bad family name"))?;
    let found = families.iter().position(|(n, _)| *n == name);
    match kind {
        "CFOptions" => {
            if found.is_some() {
                return Err(format!("family {name:?} has two [CFOptions] sections"));
            }
            families.push((name, Options::default()));
            Ok(Target::Family(families.len() - 1, Section::Family))
        }
        "TableOptions/BlockBasedTable" => match found {
            Some(i) => Ok(Target::Family(i, Section::Table)),
            None => Err(format!(
                "[TableOptions/BlockBasedTable] for family {name:?} before its [CFOptions]"
            )),
        },
        _ => Err(format!("unknown section [{header}]")),
    }
}

/// Sets option `name` of `section` in `options` from `value`.
fn set(
    options: &mut Options,
    section: Section,
    name: &str,
    value: &str,
) -> std::result::Result<(), String> {
    let info = registry::find(name).ok_or_else(|| format!("unknown option {name:?}"))?;
    if info.section != section {
        return Err(format!(
            "option {name:?} belongs in {:?} options, not here",
            info.section
        ));
    }
    (info.set)(options, value).map_err(|why| format!("{name}={value}: expected {why}"))
}

/// Writes `text` as OPTIONS file `number` of `dir` (temporary file, sync, rename, directory
/// sync), then deletes all but the newest [`KEEP`] OPTIONS files.
pub(crate) fn write(fs: &dyn FileSystem, dir: &Path, number: u64, text: &str) -> Result<()> {
    crate::fs::write_file_atomically(fs, dir, &file_name(number), text.as_bytes())?;
    let existing = numbers(fs, dir)?;
    let old = existing.len().saturating_sub(KEEP);
    for n in &existing[..old] {
        fs.remove_file(&dir.join(file_name(*n)))?;
    }
    Ok(())
}

/// Reads the newest OPTIONS file of `dir` through `fs`.
pub(crate) fn load_latest(
    fs: &dyn FileSystem,
    dir: &Path,
) -> Result<(Options, Vec<(String, CfOptions)>)> {
    let newest = numbers(fs, dir)?
        .pop()
        .ok_or_else(|| Error::NotFound(format!("no OPTIONS file in {}", dir.display())))?;
    let path = dir.join(file_name(newest));
    let bytes = crate::fs::read_small_file(fs, &path, MAX_FILE_BYTES + 1)?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(Error::Corruption {
            file: path,
            offset: MAX_FILE_BYTES as u64,
            reason: format!("larger than an OPTIONS file can be ({MAX_FILE_BYTES} bytes)"),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| Error::Corruption {
        file: path.clone(),
        offset: e.utf8_error().valid_up_to() as u64,
        reason: "not UTF-8 text".into(),
    })?;
    parse(&text, &path)
}

impl Options {
    /// Reads the newest OPTIONS file of database directory `dir` (RocksDB's
    /// `LoadLatestOptions`): the database options, with the default family's fields, and
    /// every column family's name and options, the default first, ready for
    /// [`crate::Db::open_cf`]. The objects an OPTIONS file cannot hold (comparator, merge
    /// operator, prefix extractor, compaction filter, file system, listeners, write buffer
    /// manager, rate limiter) are their defaults: set them again before opening.
    ///
    /// Errors: [`Error::NotFound`] without an OPTIONS file, [`Error::Corruption`] naming
    /// the file and line for a file that does not read (an unknown option, a bad value).
    ///
    /// ```
    /// use strata::{CfOptions, Db, Options};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let mut options = Options::default();
    /// options.create_if_missing = true;
    /// options.write_buffer_size = 1 << 20;
    /// let db = Db::open(dir.path(), options)?;
    /// let mut hot = CfOptions::default();
    /// hot.level0_file_num_compaction_trigger = 8;
    /// db.create_cf("hot", hot)?;
    /// db.set_options(&[("disable_auto_compactions", "true")])?;
    /// db.close()?;
    ///
    /// let (options, families) = Options::load_latest(dir.path())?;
    /// assert_eq!(options.write_buffer_size, 1 << 20);
    /// assert!(options.disable_auto_compactions);
    /// assert_eq!(families[1].0, "hot");
    /// assert_eq!(families[1].1.level0_file_num_compaction_trigger, 8);
    /// let db = Db::open_cf(dir.path(), options, families)?;
    /// # db.close()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_latest(dir: impl AsRef<Path>) -> Result<(Options, Vec<(String, CfOptions)>)> {
        load_latest(&PosixFs, dir.as_ref())
    }

    /// [`Options::load_latest`] through file system `fs` (also set in the options it
    /// returns).
    pub fn load_latest_with_fs(
        fs: std::sync::Arc<dyn FileSystem>,
        dir: impl AsRef<Path>,
    ) -> Result<(Options, Vec<(String, CfOptions)>)> {
        let (mut options, families) = load_latest(fs.as_ref(), dir.as_ref())?;
        options.fs = fs;
        Ok((options, families))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn families_of(options: &Options) -> Vec<(String, Options)> {
        vec![("default".to_string(), options.clone())]
    }

    #[test]
    fn every_option_round_trips_through_the_file() {
        // Each option set to its example (in the database section or in a second family),
        // written, read back: the value read is the value written, and no other option moved.
        for o in registry::all() {
            let mut db = Options::default();
            let mut other = Options::default();
            let target = if o.section == Section::Db {
                &mut db
            } else {
                &mut other
            };
            (o.set)(target, o.example).expect("example parses");
            let mut families = families_of(&db);
            families.push(("other \"family\"".to_string(), other.clone()));
            let text = render(&db, &families);
            let (loaded, cfs) = parse(&text, Path::new("OPTIONS-000001")).expect("reads");
            assert_eq!(cfs.len(), 2, "{}", o.name);
            assert_eq!(cfs[1].0, "other \"family\"");
            let read_other = loaded.for_family(&cfs[1].1);
            for p in registry::all() {
                let (want, got) = match p.section {
                    Section::Db => ((p.get)(&db), (p.get)(&loaded)),
                    _ => ((p.get)(&other), (p.get)(&read_other)),
                };
                assert_eq!(want, got, "{} after setting {}", p.name, o.name);
            }
        }
    }

    #[test]
    fn corrupt_files_are_refused_naming_the_line() {
        let good = render(&Options::default(), &families_of(&Options::default()));
        let cases: &[(&str, &str, &str)] = &[
            (
                "write_buffer_size=67108864",
                "write_buffer_size=lots",
                "line",
            ),
            (
                "write_buffer_size=67108864",
                "no_such_option=1",
                "unknown option",
            ),
            ("[DBOptions]", "[DBOptions", "closing"),
            ("[DBOptions]", "[Mystery]", "unknown section"),
            (
                "  max_background_jobs=2",
                "  max_background_jobs 2",
                "neither",
            ),
            (
                "[CFOptions \"default\"]",
                "[CFOptions \"nondefault\"]",
                "default",
            ),
            ("  block_size=4096", "  write_buffer_size=4096", "belongs"),
            ("options_file_version=1", "options_file_version=99", "newer"),
        ];
        for (from, to, says) in cases {
            assert!(good.contains(from), "{from}");
            let bad = good.replacen(from, to, 1);
            let err = parse(&bad, Path::new("OPTIONS-000007")).expect_err(to);
            let message = err.to_string();
            assert!(message.contains("OPTIONS-000007"), "{message}");
            assert!(message.contains(says), "{to}: {message}");
        }
    }

    #[test]
    fn file_names_parse_back() {
        assert_eq!(parse_file_name(&file_name(12)), Some(12));
        assert_eq!(file_name(12), "OPTIONS-000012");
        assert_eq!(parse_file_name("OPTIONS-000012.tmp"), None);
        assert_eq!(parse_file_name("OPTIONS-"), None);
    }
}
