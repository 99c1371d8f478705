//! What an open refuses before it changes anything: a directory whose manifest is lost, a
//! family opened with another comparator or prefix extractor than it was created with, a
//! `num_levels` below the tree's deepest level, direct IO the file system cannot give. Each
//! refusal names the option or file that is wrong.

use super::*;

/// Refuses to start a new manifest in `path`, whose files are `names`, when it holds tables
/// but no `CURRENT`: the manifest that named them is lost, and only
/// [`crate::repair`] can rebuild it (an open would delete the tables as orphans; a
/// read-only open says so too, rather than that there is no database).
pub(super) fn refuse_lost_manifest(path: &Path, names: &[String]) -> Result<()> {
    let mut found: Vec<&str> = names
        .iter()
        .filter(|n| matches!(parse_file_name(n), Some(FileKind::Table(_))))
        .map(String::as_str)
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    found.sort_unstable();
    let shown = match found.len() {
        1..=3 => found.join(", "),
        n => format!("{}, ... ({n} files)", found[..3].join(", ")),
    };
    Err(Error::corruption(
        path.join(filename::CURRENT),
        0,
        format!(
            "missing, but the directory holds {shown}: the manifest is lost; rebuild it with \
             strata::repair (`strata repair {}`), since an open would start an empty database",
            path.display()
        ),
    ))
}

/// Checks that each family of the manifest is opened with the prefix extractor it was
/// created with (`extractor_for` gives the one it is opened with, by family name, `None` to
/// leave the family unchecked). A family
/// recorded without one must be opened without one, and the other way round: its tables'
/// filters would not hold the prefixes a seek asks for, or would hold prefixes of another
/// function. Families whose manifest predates prefix extractors (nothing recorded) take any.
pub(super) fn check_prefix_extractors<'a>(
    path: &Path,
    found: &BTreeMap<u32, FamilyState>,
    extractor_for: impl Fn(&str) -> Option<&'a Option<Arc<dyn PrefixExtractor>>>,
) -> Result<()> {
    for f in found.values() {
        let (Some(recorded), Some(given)) = (&f.prefix_extractor, extractor_for(&f.name)) else {
            continue;
        };
        let given = prefix::name_of(given);
        if recorded != given {
            let shown = |n: &str| match n {
                "" => "none".to_string(),
                n => format!("'{n}'"),
            };
            return Err(Error::InvalidArgument(format!(
                "column family '{}' of {} was created with prefix extractor {} and is opened \
                 with {}: open it with the prefix extractor it was created with",
                f.name,
                path.display(),
                shown(recorded),
                shown(given)
            )));
        }
    }
    Ok(())
}

/// Records the prefix extractor of each family the manifest has none for (a new database,
/// or one written before prefix extractors existed): from now on it is checked at open.
pub(super) fn record_prefix_extractors(
    versions: &mut VersionSet,
    family_options: &BTreeMap<u32, Options>,
) -> Result<()> {
    let unrecorded: Vec<u32> = versions
        .families()
        .iter()
        .filter(|(_, f)| f.prefix_extractor.is_none())
        .map(|(&id, _)| id)
        .collect();
    for id in unrecorded {
        let name = prefix::name_of(&family_options[&id].prefix_extractor).to_string();
        versions.log_and_apply(crate::version::VersionEdit {
            column_family: id,
            prefix_extractor: Some(name),
            ..Default::default()
        })?;
    }
    Ok(())
}

/// The key order of `comparator` for `family`, or the error refusing it: a family is read in
/// the order it was created with (its comparator's name is in the manifest).
pub(super) fn check_comparator(
    family: &FamilyState,
    comparator: &Arc<dyn Comparator>,
) -> Result<KeyOrder> {
    if comparator.name() != family.comparator {
        return Err(Error::InvalidArgument(format!(
            "column family '{}' was created with comparator {:?} but is opened with {:?}; \
             open it with the comparator it was created with",
            family.name,
            family.comparator,
            comparator.name()
        )));
    }
    Ok(KeyOrder::new(comparator))
}

/// Refuses a family's `num_levels` below the deepest level of its tree that holds files.
pub(super) fn check_num_levels(
    family_options: &BTreeMap<u32, Options>,
    path: &Path,
    versions: &VersionSet,
) -> Result<()> {
    for (id, f) in versions.families() {
        let options = &family_options[id];
        let version = &f.current;
        if let Some(level) =
            (options.num_levels..NUM_LEVELS).find(|&l| !version.levels[l].is_empty())
        {
            return Err(Error::InvalidArgument(format!(
                "num_levels of column family '{}' is {} but {} has files of it in level \
                 {level}; open it with num_levels of at least {}",
                f.name,
                options.num_levels,
                path.display(),
                level + 1
            )));
        }
    }
    Ok(())
}

/// Refuses direct IO options on a file system that cannot open the database's files with
/// direct IO, naming the option, before anything is read or written through them (tables
/// would otherwise fail one by one, at their first read or write).
pub(super) fn check_direct_io(fs: &dyn FileSystem, path: &Path, options: &Options) -> Result<()> {
    let option = if options.use_direct_reads {
        "use_direct_reads"
    } else if options.use_direct_io_for_flush_and_compaction {
        "use_direct_io_for_flush_and_compaction"
    } else {
        return Ok(());
    };
    match fs.open_random_direct(&path.join(filename::IDENTITY)) {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::InvalidArgument(format!(
            "{option} is set, but the files of {} cannot be opened for direct IO: {e}",
            path.display()
        ))),
    }
}
