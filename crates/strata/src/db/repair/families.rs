//! Repair's families: which family each table belongs to, read from the tables' properties
//! and the old manifests, and the key order and ttl each is repaired with.

use super::{Family, Repairer, Scanned};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::comparator::{BytewiseComparator, Comparator, KeyOrder, ReverseBytewiseComparator};
use crate::error::{Error, Result};
use crate::filename::{self};
use crate::log::LogReader;
use crate::table::TableFamily;
use crate::version::{VersionEdit, DEFAULT_FAMILY_ID, DEFAULT_FAMILY_NAME};

impl Repairer<'_> {
    /// The order a table of `family` whose properties record comparator `recorded` is read
    /// in: that of the family's options if named (the default family's: the repair's
    /// options), else the recorded one if built in. An error if they differ, or if the
    /// recorded order is an application's and the family is not named.
    pub(super) fn order_for(&self, family: &TableFamily, recorded: &str) -> Result<KeyOrder> {
        let recorded = match recorded {
            "" => crate::comparator::BYTEWISE_NAME,
            name => name,
        };
        let given = match self.named.get(&family.name) {
            Some(cf) => Some(&cf.comparator),
            None if family.id == DEFAULT_FAMILY_ID => Some(&self.options.comparator),
            None => None,
        };
        match given {
            Some(c) if c.name() == recorded => Ok(KeyOrder::new(c)),
            Some(c) => Err(Error::InvalidArgument(format!(
                "a table of column family '{}' orders keys by comparator {recorded:?}, but the \
                 family is repaired with {:?}: repair it with the comparator it was created with",
                family.name,
                c.name()
            ))),
            None => KeyOrder::builtin(recorded).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "a table of column family '{}' orders keys by comparator {recorded:?}, which \
                     is not built in: name the family with its comparator (repair_cf)",
                    family.name
                ))
            }),
        }
    }

    /// Decides the families from the tables found (their ids and names) and the named ones:
    /// a name found under several ids keeps the largest (the others were dropped); a named
    /// family not found gets a new id. Checks each family's ttl against its tables'.
    pub(super) fn place_families(
        &mut self,
        scanned: &[Scanned],
        recorded: &BTreeMap<u32, (TableFamily, String)>,
    ) -> Result<()> {
        let mut found: BTreeMap<u32, TableFamily> = BTreeMap::new();
        // A family the manifest names without tables here: its WAL records go to it, if its
        // order is known (a built-in one, or named).
        for (&id, (family, comparator)) in recorded {
            if builtin_comparator(comparator).is_some() || self.named.contains_key(&family.name) {
                found.insert(id, family.clone());
            }
        }
        for s in scanned {
            found.insert(s.family.id, s.family.clone());
        }
        found.entry(DEFAULT_FAMILY_ID).or_insert(TableFamily {
            id: DEFAULT_FAMILY_ID,
            name: DEFAULT_FAMILY_NAME.to_string(),
            ttl: None,
        });
        let mut newest_id: BTreeMap<&str, u32> = BTreeMap::new();
        for (&id, f) in &found {
            let name = match id {
                DEFAULT_FAMILY_ID => DEFAULT_FAMILY_NAME,
                // Only the default family is called that; such tables go to lost/.
                _ if f.name == DEFAULT_FAMILY_NAME => continue,
                _ => f.name.as_str(),
            };
            newest_id.insert(name, id); // ascending ids: the largest stays
        }
        let mut next_id = found.keys().max().map_or(1, |m| m + 1);
        let mut placed = BTreeMap::new();
        for (name, &id) in &newest_id {
            let recorded_ttl = found[&id].ttl;
            let a_table = scanned.iter().find(|s| s.family.id == id);
            let (options, named, ttl) = match self.named.get(*name) {
                Some(cf) => {
                    let ttl = cf.ttl.map(|t| t.as_secs());
                    check_ttl(name, recorded_ttl, ttl, a_table.is_some())?;
                    (self.options.for_family(cf), true, ttl)
                }
                // Its prefix extractor is left unrecorded (`named` false): the next open
                // records its own, whatever options a tool repaired it with.
                None if id == DEFAULT_FAMILY_ID => {
                    let ttl = self.options.ttl.map(|t| t.as_secs());
                    check_ttl(name, recorded_ttl, ttl, a_table.is_some())?;
                    (self.options.clone(), false, ttl)
                }
                None => {
                    let mut options = self.options.clone();
                    options.ttl = recorded_ttl.map(std::time::Duration::from_secs);
                    if options.ttl.is_some() {
                        options.merge_operator = None;
                    }
                    // The tables were read in this order (`order_for`); without tables, the
                    // manifest's.
                    let comparator = match a_table {
                        Some(s) => Some(&s.comparator),
                        None => recorded.get(&id).map(|(_, c)| c),
                    };
                    if let Some(c) = comparator.and_then(|c| builtin_comparator(c)) {
                        options.comparator = c;
                    }
                    (options, false, recorded_ttl)
                }
            };
            placed.insert(
                id,
                Family {
                    name: name.to_string(),
                    options,
                    named,
                    ttl,
                    files: Vec::new(),
                    log_number: 0,
                },
            );
        }
        for (name, cf) in self.named {
            if newest_id.contains_key(name.as_str()) {
                continue;
            }
            placed.insert(
                next_id,
                Family {
                    name: name.clone(),
                    options: self.options.for_family(cf),
                    named: true,
                    ttl: cf.ttl.map(|t| t.as_secs()),
                    files: Vec::new(),
                    log_number: 0,
                },
            );
            next_id += 1;
        }
        self.families = placed;
        Ok(())
    }

    /// The column families (other than the default) that the newest readable manifest
    /// names, by id, each with its comparator's name: what repair knows of a family whose
    /// records are only in WALs. A damaged manifest is read up to its first bad record; its
    /// first records hold the whole state of the database when it was started.
    pub(super) fn families_in_manifest(
        &self,
        manifests: &[u64],
    ) -> BTreeMap<u32, (TableFamily, String)> {
        for &number in manifests.iter().rev() {
            let path = filename::manifest_path(&self.dir, number);
            let Ok(file) = self.fs.open_sequential(&path) else {
                continue;
            };
            let mut reader = LogReader::new(file);
            let mut families = BTreeMap::new();
            let mut read_any = false;
            while let Ok(Some(record)) = reader.read_record() {
                let Ok(edit) = VersionEdit::decode(record) else {
                    break;
                };
                read_any = true;
                let id = edit.column_family;
                if let Some(name) = &edit.add_column_family {
                    let family = TableFamily {
                        id,
                        name: name.clone(),
                        ttl: None,
                    };
                    let bytewise = crate::comparator::BYTEWISE_NAME.to_string();
                    families.insert(id, (family, bytewise));
                }
                if edit.drop_column_family {
                    families.remove(&id);
                }
                if let Some((family, comparator)) = families.get_mut(&id) {
                    if let Some(c) = &edit.comparator {
                        *comparator = crate::version::user_comparator_name(c).to_string();
                    }
                    family.ttl = edit.family_ttl.or(family.ttl);
                }
            }
            if read_any {
                return families;
            }
        }
        BTreeMap::new()
    }

    /// The id that replaced `family`'s, if a newer family took its name.
    pub(super) fn replaced_id(&self, family: &TableFamily) -> Option<u32> {
        if self.families.contains_key(&family.id) {
            return None;
        }
        self.families
            .iter()
            .find(|(_, f)| f.name == family.name)
            .map(|(&id, _)| id)
    }
}

/// Refuses a family repaired with a ttl other than its tables record (`has_tables`: it
/// has some): its values would be read with or without an expiry they do not have.
pub(super) fn check_ttl(
    name: &str,
    recorded: Option<u64>,
    given: Option<u64>,
    has_tables: bool,
) -> Result<()> {
    if !has_tables || recorded == given {
        return Ok(());
    }
    let shown = |t: Option<u64>| t.map_or("no ttl".to_string(), |s| format!("ttl {s}s"));
    Err(Error::InvalidArgument(format!(
        "the tables of column family '{name}' were written with {} but it is repaired with {}: \
         repair it with the ttl it was created with",
        shown(recorded),
        shown(given)
    )))
}

/// The built-in comparator named `name` (empty: bytewise).
pub(super) fn builtin_comparator(name: &str) -> Option<Arc<dyn Comparator>> {
    match name {
        "" | crate::comparator::BYTEWISE_NAME => Some(Arc::new(BytewiseComparator)),
        crate::comparator::REVERSE_BYTEWISE_NAME => Some(Arc::new(ReverseBytewiseComparator)),
        _ => None,
    }
}
