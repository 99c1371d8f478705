//! Merge operators: read-modify-write without the read, as RocksDB's `MergeOperator`.
//!
//! `Db::merge(key, operand)` stores a *merge record* (kind `MERGE`, byte 2 in the trailer and
//! in batch records) holding the operand. A reader resolves a key whose newest visible version
//! is a merge by collecting the operands, newest first, down to the first put (its value is
//! the *base*), delete or single-delete (no base), or the bottom of the tree (no base), and
//! handing them to [`MergeOperator::full_merge`] oldest first. Flushes and compactions
//! combine operands too, never across a snapshot boundary (see `compaction::operands`).
//!
//! Built-in operators:
//!
//! - [`UInt64Add`] (`uint64add`): operands and values are 8-byte little-endian unsigned
//!   integers, added with wrap-around. As in RocksDB, an operand or base value that is not 8
//!   bytes long counts as 0: a merge never fails, so one bad write cannot stop compactions.
//! - [`StringAppend`] (`stringappend`): the operands appended to the base, oldest first, each
//!   after the delimiter (none before the first piece when there is no base).
//!
//! Both support partial merges (they are associative), so compactions fold operands even when
//! no base is in sight.

use crate::error::{Error, Result};
use crate::key::ValueKind;
use crate::util::printable;

/// Combines merge operands into values. Implementations must be deterministic: the same
/// inputs give the same output whether the merge happens in a read, a flush or a compaction.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, MergeOperator, Options};
///
/// /// Keeps the largest value merged into a key (in byte order): a high score.
/// struct Max;
///
/// impl MergeOperator for Max {
///     fn name(&self) -> &str {
///         "max"
///     }
///
///     fn full_merge(
///         &self,
///         _key: &[u8],
///         existing: Option<&[u8]>,
///         operands: &[&[u8]],
///     ) -> Result<Vec<u8>, String> {
///         let largest = existing.into_iter().chain(operands.iter().copied()).max();
///         Ok(largest.unwrap_or_default().to_vec())
///     }
///
///     fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
///         operands.iter().max().map(|m| m.to_vec()) // associative: operands fold alone
///     }
/// }
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.merge_operator = Some(Arc::new(Max));
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"high-score", b"0350")?;
/// db.merge(b"high-score", b"0420")?;
/// db.flush()?; // merges resolve across memtables and tables alike
/// db.merge(b"high-score", b"0390")?;
/// assert_eq!(db.get(b"high-score")?.as_deref(), Some(&b"0420"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait MergeOperator: Send + Sync {
    /// The operator's name, recorded in error messages.
    fn name(&self) -> &str;

    /// The value of `key` after applying `operands` (oldest first) to `existing` (the value
    /// of the newest put below them, or `None` when the key was deleted or never put). An
    /// `Err` with a reason fails the read, flush or compaction that needed the value.
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> std::result::Result<Vec<u8>, String>;

    /// One operand with the effect of `operands` (two or more, oldest first) applied in
    /// order, if the operator can combine operands without a base. `None` (the default) keeps
    /// the operands as they are.
    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let _ = (key, operands);
        None
    }
}

impl std::fmt::Debug for dyn MergeOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MergeOperator({:?})", self.name())
    }
}

/// Adds 8-byte little-endian unsigned integers (RocksDB's `uint64add`). An operand or base
/// that is not 8 bytes long counts as 0.
///
/// The example of [`CfOptions`](crate::CfOptions) counts with it.
#[derive(Debug, Clone, Copy, Default)]
pub struct UInt64Add;

impl UInt64Add {
    fn decode(bytes: &[u8]) -> u64 {
        bytes.try_into().map(u64::from_le_bytes).unwrap_or(0)
    }

    fn sum<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> u64 {
        values
            .into_iter()
            .fold(0u64, |acc, v| acc.wrapping_add(Self::decode(v)))
    }
}

impl MergeOperator for UInt64Add {
    fn name(&self) -> &str {
        "uint64add"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> std::result::Result<Vec<u8>, String> {
        let sum = Self::sum(existing.into_iter().chain(operands.iter().copied()));
        Ok(sum.to_le_bytes().to_vec())
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        Some(Self::sum(operands.iter().copied()).to_le_bytes().to_vec())
    }
}

/// Appends operands to the value, separated by a delimiter (RocksDB's `stringappend`, whose
/// default delimiter is `,`).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, Options, StringAppend};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.merge_operator = Some(Arc::new(StringAppend::new(b",")));
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"tags", b"rust")?;
/// db.merge(b"tags", b"db")?;
/// db.merge(b"tags", b"lsm")?;
/// assert_eq!(db.get(b"tags")?.as_deref(), Some(&b"rust,db,lsm"[..]));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct StringAppend {
    delimiter: Vec<u8>,
}

impl StringAppend {
    /// An operator that puts `delimiter` (possibly empty) between the pieces.
    pub fn new(delimiter: &[u8]) -> StringAppend {
        StringAppend {
            delimiter: delimiter.to_vec(),
        }
    }

    fn join<'a>(&self, pieces: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, p) in pieces.into_iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(&self.delimiter);
            }
            out.extend_from_slice(p);
        }
        out
    }
}

impl MergeOperator for StringAppend {
    fn name(&self) -> &str {
        "stringappend"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> std::result::Result<Vec<u8>, String> {
        Ok(self.join(existing.into_iter().chain(operands.iter().copied())))
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        Some(self.join(operands.iter().copied()))
    }
}

/// The error for a merge record met without a merge operator.
pub(crate) fn no_operator_error(family: &str, key: &[u8]) -> Error {
    Error::InvalidArgument(format!(
        "a merge record was found for key '{}' but no merge operator is configured for \
         column family '{family}'",
        printable(key)
    ))
}

/// Applies `newest_first` operands to `base` with `op`: the value a reader sees.
pub(crate) fn full_merge<T: AsRef<[u8]>>(
    op: &dyn MergeOperator,
    key: &[u8],
    base: Option<&[u8]>,
    newest_first: &[T],
) -> Result<Vec<u8>> {
    let operands: Vec<&[u8]> = newest_first.iter().rev().map(AsRef::as_ref).collect();
    op.full_merge(key, base, &operands)
        .map_err(|reason| Error::MergeFailed {
            operator: op.name().to_string(),
            key: printable(key),
            reason,
        })
}

/// The value a reader sees for `key` given its visible versions, newest first: the first put,
/// nothing after a delete or single-delete, or the merge of the operands before either. Only
/// the versions up to the first non-merge are read.
///
/// Without an operator, operands are an error naming `family`.
pub(crate) fn resolve<'a>(
    op: Option<&dyn MergeOperator>,
    family: &str,
    key: &[u8],
    versions: impl IntoIterator<Item = (ValueKind, &'a [u8])>,
) -> Result<Option<Vec<u8>>> {
    let mut operands: Vec<&[u8]> = Vec::new();
    let mut base = None;
    for (kind, value) in versions {
        match kind {
            ValueKind::Merge => {
                operands.push(value);
                continue;
            }
            ValueKind::Put => base = Some(value),
            ValueKind::Delete | ValueKind::SingleDelete | ValueKind::RangeDeletion => {}
            // Readers resolve references before merging; one here is the engine's fault.
            ValueKind::BlobIndex => {
                return Err(Error::Unavailable(format!(
                    "internal error: the blob reference of key {} reached a merge unresolved",
                    printable(key)
                )))
            }
        }
        break;
    }
    if operands.is_empty() {
        return Ok(base.map(<[u8]>::to_vec));
    }
    let op = op.ok_or_else(|| no_operator_error(family, key))?;
    full_merge(op, key, base, &operands).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn u64le(n: u64) -> Vec<u8> {
        n.to_le_bytes().to_vec()
    }

    #[test]
    fn uint64add_adds_and_counts_malformed_bytes_as_zero() {
        let op = UInt64Add;
        let (one, two) = (u64le(1), u64le(2));
        assert_eq!(op.full_merge(b"k", None, &[&one, &two]), Ok(u64le(3)));
        assert_eq!(
            op.full_merge(b"k", Some(&u64le(40)), &[&two]),
            Ok(u64le(42))
        );
        // A base or operand of the wrong length counts as 0.
        assert_eq!(op.full_merge(b"k", Some(b"junk"), &[&two]), Ok(u64le(2)));
        assert_eq!(op.full_merge(b"k", None, &[b"123", &one]), Ok(u64le(1)));
        // Wrap-around, as unsigned addition in C++.
        assert_eq!(
            op.full_merge(b"k", Some(&u64le(u64::MAX)), &[&two]),
            Ok(u64le(1))
        );
        assert_eq!(op.partial_merge(b"k", &[&one, &two]), Some(u64le(3)));
    }

    #[test]
    fn stringappend_joins_oldest_first_with_its_delimiter() {
        let op = StringAppend::new(b",");
        assert_eq!(
            op.full_merge(b"k", None, &[b"a", b"b"]),
            Ok(b"a,b".to_vec())
        );
        assert_eq!(
            op.full_merge(b"k", Some(b"x"), &[b"a"]),
            Ok(b"x,a".to_vec())
        );
        assert_eq!(op.full_merge(b"k", Some(b""), &[b"a"]), Ok(b",a".to_vec()));
        assert_eq!(op.partial_merge(b"k", &[b"a", b"b"]), Some(b"a,b".to_vec()));
        let none = StringAppend::new(b"");
        assert_eq!(
            none.full_merge(b"k", Some(b"x"), &[b"y", b"z"]),
            Ok(b"xyz".to_vec())
        );
    }

    /// An operator that fails every full merge and cannot merge partially.
    struct Failing;

    impl MergeOperator for Failing {
        fn name(&self) -> &str {
            "failing"
        }
        fn full_merge(
            &self,
            _: &[u8],
            _: Option<&[u8]>,
            _: &[&[u8]],
        ) -> std::result::Result<Vec<u8>, String> {
            Err("always fails".into())
        }
    }

    /// Parses `PUT:v MERGE:v DEL SINGLEDEL` into versions, newest first.
    fn versions(text: &str) -> Vec<(ValueKind, Vec<u8>)> {
        text.split_whitespace()
            .map(|w| {
                let (kind, value) = w.split_once(':').unwrap_or((w, ""));
                let kind = match kind {
                    "PUT" => ValueKind::Put,
                    "MERGE" => ValueKind::Merge,
                    "DEL" => ValueKind::Delete,
                    "SINGLEDEL" => ValueKind::SingleDelete,
                    other => panic!("unknown kind {other}"),
                };
                (kind, value.as_bytes().to_vec())
            })
            .collect()
    }

    #[test]
    fn resolution_of_versions_newest_first() {
        // (versions newest first, operator, what the reader sees: a value, "-" for no value,
        // or "error: <kind>").
        let cases: &[(&str, &str, &str)] = &[
            ("", "append", "-"),
            ("PUT:a", "append", "a"),
            ("DEL PUT:a", "append", "-"),
            ("SINGLEDEL PUT:a", "append", "-"),
            ("MERGE:b", "append", "b"),
            ("MERGE:c MERGE:b", "append", "b,c"),
            ("MERGE:c MERGE:b PUT:a", "append", "a,b,c"),
            ("MERGE:c MERGE:b PUT:a MERGE:z PUT:y", "append", "a,b,c"),
            ("MERGE:c DEL PUT:a", "append", "c"),
            ("MERGE:c SINGLEDEL MERGE:z", "append", "c"),
            ("MERGE:c PUT:", "append", ",c"),
            ("PUT:a MERGE:b", "append", "a"),
            ("PUT:a MERGE:b", "none", "a"),
            ("DEL MERGE:b", "none", "-"),
            ("MERGE:b PUT:a", "none", "error: InvalidArgument"),
            ("MERGE:b", "failing", "error: Corruption"),
        ];
        let append = StringAppend::new(b",");
        for &(input, op, want) in cases {
            let op: Option<&dyn MergeOperator> = match op {
                "append" => Some(&append),
                "failing" => Some(&Failing),
                _ => None,
            };
            let vs = versions(input);
            let got = match resolve(
                op,
                "default",
                b"k",
                vs.iter().map(|(k, v)| (*k, v.as_slice())),
            ) {
                Ok(Some(v)) => String::from_utf8(v).unwrap(),
                Ok(None) => "-".to_string(),
                Err(e) => format!("error: {:?}", e.kind()),
            };
            assert_eq!(got, want, "versions {input:?}");
        }
    }

    #[test]
    fn errors_name_the_key_and_the_operator() {
        let operand = [(ValueKind::Merge, &b"x"[..])];
        let e = resolve(None, "index", b"key1", operand).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(
            e.to_string(),
            "invalid argument: a merge record was found for key 'key1' but no merge operator \
             is configured for column family 'index'"
        );
        let e = full_merge(&Failing, b"key2", None, &[b"x"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert_eq!(
            e.to_string(),
            "corruption: merge operator 'failing' failed for key 'key2': always fails"
        );
    }
}
