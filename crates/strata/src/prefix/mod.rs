//! Prefix extractors (RocksDB's `SliceTransform`): the part of a user key that prefix bloom
//! filters index and that prefix seeks stay within.
//!
//! A column family with an extractor (`CfOptions::prefix_extractor`) adds the prefix of every
//! key in its domain to each table's filter, beside the whole key. A seek whose target is in
//! the domain then asks each table's filter for the target's prefix and skips the tables that
//! cannot hold it; `ReadOptions::prefix_same_as_start` ends the iteration at the first key of
//! another prefix.
//!
//! Invariants an extractor must keep (RocksDB's, the engine relies on them):
//!
//! - `transform(key)` is a prefix of `key`, defined only for keys `in_domain`;
//! - a key's prefix depends on nothing else: the same key always gives the same prefix;
//! - keys with one prefix are contiguous in key order (so a seek inside a prefix finds every
//!   key of it after the target, and a level of sorted tables holds them in a run of files);
//! - `name()` identifies the function: tables and the manifest record it, and a table's
//!   prefixes are used only by an extractor of the same name. Changing what a name means
//!   makes filters lie.
//!
//! Built in, and named so that [`parse_prefix_extractor`] rebuilds them:
//!
//! | Name | Domain | Prefix |
//! | --- | --- | --- |
//! | `fixed:N` | keys of at least N bytes | the first N bytes (RocksDB's `NewFixedPrefixTransform`) |
//! | `capped:N` | every key | the first min(N, length) bytes (RocksDB's `NewCappedPrefixTransform`) |

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

/// Maps a user key to its prefix, as RocksDB's `SliceTransform`. See the module
/// documentation for the rules an implementation must follow.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, Options, PrefixExtractor, ReadOptions};
///
/// /// The part of a key up to its first `:`, which keys without one do not have.
/// struct Table;
///
/// impl PrefixExtractor for Table {
///     fn name(&self) -> &str {
///         "example.UpToColon"
///     }
///     fn in_domain(&self, key: &[u8]) -> bool {
///         key.contains(&b':')
///     }
///     fn transform<'a>(&self, key: &'a [u8]) -> &'a [u8] {
///         let colon = key.iter().position(|&b| b == b':').expect("in the domain");
///         &key[..=colon]
///     }
/// }
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.prefix_extractor = Some(Arc::new(Table));
/// let db = Db::open(dir.path(), options)?;
/// for key in ["order:1", "order:2", "user:1"] {
///     db.put(key, "")?;
/// }
/// db.flush()?; // the table's filter holds the prefixes `order:` and `user:`
/// let mut same_prefix = ReadOptions::default();
/// same_prefix.prefix_same_as_start = true;
/// let mut iter = db.iter(&same_prefix);
/// iter.seek(b"order:");
/// let mut orders = 0;
/// while iter.valid() {
///     orders += 1;
///     iter.next(); // ends at `user:1`, another prefix
/// }
/// iter.status()?;
/// assert_eq!(orders, 2);
/// # drop(iter);
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait PrefixExtractor: Send + Sync {
    /// The name that identifies the function, recorded in tables and the manifest. Not empty.
    fn name(&self) -> &str;

    /// True when `key` has a prefix. Seeks to a key outside the domain ignore prefix filters,
    /// and the keys outside it are not added to them.
    fn in_domain(&self, key: &[u8]) -> bool;

    /// The prefix of `key`, a prefix of it; only called for keys `in_domain`.
    fn transform<'a>(&self, key: &'a [u8]) -> &'a [u8];
}

impl fmt::Debug for dyn PrefixExtractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrefixExtractor({:?})", self.name())
    }
}

/// The first `len` bytes of keys of at least `len` bytes; shorter keys are outside the
/// domain (RocksDB's fixed prefix transform). Named `fixed:LEN`.
///
/// # Examples
///
/// ```
/// use strata::{parse_prefix_extractor, FixedPrefix, PrefixExtractor};
///
/// let by_tenant = FixedPrefix::new(4)?; // keys start with a 4-byte tenant id
/// assert_eq!(by_tenant.name(), "fixed:4");
/// assert_eq!(by_tenant.transform(b"t042/invoice/7"), b"t042");
/// assert!(!by_tenant.in_domain(b"t04")); // too short: no prefix
/// assert!(FixedPrefix::new(0).is_err());
///
/// // The built-in extractors by name, as tables and the manifest record them.
/// let parsed = parse_prefix_extractor("fixed:4")?;
/// assert_eq!(parsed.transform(b"t042/invoice/7"), b"t042");
/// let capped = parse_prefix_extractor("capped:4")?; // every key, at most 4 bytes
/// assert_eq!(capped.transform(b"t0"), b"t0");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FixedPrefix {
    len: usize,
    name: String,
}

impl FixedPrefix {
    /// The extractor of the first `len` bytes (at least 1).
    pub fn new(len: usize) -> Result<FixedPrefix> {
        check_len("fixed", len)?;
        Ok(FixedPrefix {
            len,
            name: format!("fixed:{len}"),
        })
    }
}

impl PrefixExtractor for FixedPrefix {
    fn name(&self) -> &str {
        &self.name
    }
    fn in_domain(&self, key: &[u8]) -> bool {
        key.len() >= self.len
    }
    fn transform<'a>(&self, key: &'a [u8]) -> &'a [u8] {
        &key[..self.len.min(key.len())]
    }
}

/// The first `min(len, key length)` bytes of every key (RocksDB's capped prefix transform).
/// Named `capped:LEN`.
///
/// The example of [`FixedPrefix`] builds one by name.
#[derive(Debug, Clone)]
pub struct CappedPrefix {
    len: usize,
    name: String,
}

impl CappedPrefix {
    /// The extractor of at most the first `len` bytes (at least 1).
    pub fn new(len: usize) -> Result<CappedPrefix> {
        check_len("capped", len)?;
        Ok(CappedPrefix {
            len,
            name: format!("capped:{len}"),
        })
    }
}

impl PrefixExtractor for CappedPrefix {
    fn name(&self) -> &str {
        &self.name
    }
    fn in_domain(&self, _: &[u8]) -> bool {
        true
    }
    fn transform<'a>(&self, key: &'a [u8]) -> &'a [u8] {
        &key[..self.len.min(key.len())]
    }
}

/// The largest prefix length of the built-ins: the largest key.
const MAX_LEN: usize = 1 << 20;

fn check_len(kind: &str, len: usize) -> Result<()> {
    if len == 0 || len > MAX_LEN {
        return Err(Error::InvalidArgument(format!(
            "prefix extractor {kind}:{len} is not valid: the length must be between 1 and \
             {MAX_LEN}"
        )));
    }
    Ok(())
}

/// The built-in extractor named `name` (`fixed:N` or `capped:N`); the error names what is
/// wrong.
///
/// The example of [`FixedPrefix`] calls it.
pub fn parse_prefix_extractor(name: &str) -> Result<Arc<dyn PrefixExtractor>> {
    let bad = || {
        Error::InvalidArgument(format!(
            "prefix extractor {name:?} is not valid: want fixed:N or capped:N, N a length in \
             bytes"
        ))
    };
    let (kind, len) = name.split_once(':').ok_or_else(bad)?;
    let len: usize = match len.parse() {
        Ok(n) if !len.starts_with('+') => n,
        _ => return Err(bad()),
    };
    Ok(match kind {
        "fixed" => Arc::new(FixedPrefix::new(len)?),
        "capped" => Arc::new(CappedPrefix::new(len)?),
        _ => return Err(bad()),
    })
}

/// The name recorded for an optional extractor: its name, or the empty string for none.
pub(crate) fn name_of(extractor: &Option<Arc<dyn PrefixExtractor>>) -> &str {
    extractor.as_ref().map_or("", |e| e.name())
}

/// The prefix of `key` if it is in the extractor's domain.
#[inline]
pub(crate) fn prefix_of<'a>(extractor: &dyn PrefixExtractor, key: &'a [u8]) -> Option<&'a [u8]> {
    extractor.in_domain(key).then(|| extractor.transform(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::printable;

    /// `testdata/extractors.txt`: `extract kind=K len=N` (the extractor named `K:N`) with one
    /// key a line gives each key's
    /// prefix (or `out of domain`); `parse` with one name a line gives the name rebuilt or
    /// the error.
    #[test]
    fn extractors_follow_their_cases() {
        let ran =
            crate::version::edit::testdata::run(
                "src/prefix/testdata",
                |case, _: &mut ()| match case.directive.as_str() {
                    "extract" => {
                        let kind: String = case.take_arg("kind").map_err(|e| e.to_string())?;
                        let len: usize = case.take_arg("len").map_err(|e| e.to_string())?;
                        let name = format!("{kind}:{len}");
                        let e = parse_prefix_extractor(&name).map_err(|e| e.to_string())?;
                        let mut out = String::new();
                        for line in case.input.lines() {
                            let key = line.trim().as_bytes();
                            let shown = match prefix_of(e.as_ref(), key) {
                                Some(p) => {
                                    assert!(key.starts_with(p), "{name}: not a prefix");
                                    format!("{:?}", printable(p))
                                }
                                None => "out of domain".to_string(),
                            };
                            out.push_str(&format!("{:?} -> {shown}\n", printable(key)));
                        }
                        Ok(out)
                    }
                    "parse" => Ok(case
                        .input
                        .lines()
                        .map(|name| match parse_prefix_extractor(name) {
                            Ok(e) => format!("{name:?} -> {}\n", e.name()),
                            Err(err) => format!("{name:?} -> {err}\n"),
                        })
                        .collect()),
                    other => Err(format!("unknown directive {other}")),
                },
            );
        assert!(ran >= 3);
    }

    /// Keys with one prefix are contiguous in key order, for both built-ins over every
    /// short key of a small alphabet: what prefix seeks and level skipping rely on.
    #[test]
    fn keys_with_one_prefix_are_contiguous() {
        // Every key of up to 3 bytes over a small alphabet (0xff tests unsigned order).
        let mut keys: Vec<Vec<u8>> = vec![Vec::new()];
        let mut frontier = keys.clone();
        for _ in 0..3 {
            frontier = frontier
                .iter()
                .flat_map(|k| {
                    [b'a', b'b', 0xff].map(|c| {
                        let mut k = k.clone();
                        k.push(c);
                        k
                    })
                })
                .collect();
            keys.extend(frontier.iter().cloned());
        }
        keys.sort();
        for name in ["fixed:1", "fixed:2", "capped:1", "capped:3"] {
            let e = parse_prefix_extractor(name).unwrap();
            let mut seen_done = std::collections::HashSet::new();
            let mut last: Option<&[u8]> = None;
            for k in &keys {
                let Some(p) = prefix_of(e.as_ref(), k) else {
                    continue;
                };
                if last != Some(p) {
                    assert!(
                        seen_done.insert(p.to_vec()),
                        "{name}: prefix {p:?} comes back"
                    );
                    last = Some(p);
                }
            }
        }
    }
}
