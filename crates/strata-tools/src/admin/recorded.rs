//! Opening a database or a table as its files record it: the built-in comparators rebuilt
//! from the names that manifests and table properties keep, and every column family with the
//! prefix extractor, comparator and ttl its manifest records. Only the built-in orders can be
//! rebuilt from a name, so a family or table of an application's comparator is refused,
//! naming it.

use std::path::Path;
use std::sync::Arc;

use strata::{BytewiseComparator, Comparator, Options, ReverseBytewiseComparator};

use crate::cli::BoxError;

/// Why a table or family of an application's comparator is refused.
pub const BUILT_IN_ONLY: &str = "strata can only read tables of the built-in comparators \
    (leveldb.BytewiseComparator, rocksdb.ReverseBytewiseComparator): a custom comparator \
    cannot be reconstructed from its name";

/// The built-in comparator named `name` as a manifest or a table records it (empty: a table
/// older than the record, bytewise).
pub fn builtin_comparator(name: &str) -> Option<Arc<dyn Comparator>> {
    if name.is_empty() || name == BytewiseComparator.name() {
        Some(Arc::new(BytewiseComparator))
    } else if name == ReverseBytewiseComparator.name() {
        Some(Arc::new(ReverseBytewiseComparator))
    } else {
        None
    }
}

/// Every column family of the database at `dir` with `options`' family fields and the prefix
/// extractor, comparator and ttl its manifest records (an open with others is refused); the
/// default family's comparator and ttl are set in `options` too. Only the built-in extractors
/// and comparators can be rebuilt from their names: another is refused, naming it.
pub fn families_as_recorded(
    dir: &Path,
    options: &mut Options,
) -> Result<Vec<(String, strata::CfOptions)>, BoxError> {
    let families = strata::internals::read_families(dir)
        .map_err(|e| format!("opening {}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for f in families.values() {
        let prefix_extractor = match f.prefix_extractor.as_deref() {
            None | Some("") => None,
            Some(name) => Some(
                strata::parse_prefix_extractor(name)
                    .map_err(|e| format!("column family '{}' of {}: {e}", f.name, dir.display()))?,
            ),
        };
        let comparator = builtin_comparator(&f.comparator).ok_or_else(|| {
            format!(
                "opening {}: column family '{}' orders keys by comparator {:?}, which is not \
                 built in; {}",
                dir.display(),
                f.name,
                f.comparator,
                BUILT_IN_ONLY
            )
        })?;
        let ttl = f.ttl.map(std::time::Duration::from_secs);
        if f.name == "default" {
            options.comparator = comparator.clone();
            options.ttl = ttl;
        }
        let mut cf = options.cf_options();
        cf.prefix_extractor = prefix_extractor;
        cf.comparator = comparator;
        cf.ttl = ttl;
        out.push((f.name.clone(), cf));
    }
    Ok(out)
}
