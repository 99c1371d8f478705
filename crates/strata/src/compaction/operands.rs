//! Combining merge operands in flushes and compactions.
//!
//! A flush or compaction meets, for one user key and one snapshot stripe (see
//! [`super::visibility`]), a run of merge operands at the head of the stripe, newest first,
//! possibly followed in the same stripe by a put, delete or single-delete (the *base*).
//! [`collapse`] turns the run into what the output keeps, then hands it to the visibility
//! filter like any entry:
//!
//! 1. A base in the stripe: one full merge of the operands onto it (no base value for a delete
//!    or single-delete), written as a put with the newest operand's sequence number. The base
//!    is consumed; older versions of the stripe are then shadowed by the put.
//! 2. No base in the stripe, the key's last version in the input, and the output at the bottom
//!    of the tree (nothing older below): one full merge with no base, written as a put.
//! 3. Otherwise, two or more operands and an operator that merges partially: one operand with
//!    the newest sequence number.
//! 4. Otherwise the operands as they are.
//!
//! A run never extends past a snapshot boundary: a reader at that snapshot must go on seeing
//! the older operands alone. A full merge that fails fails the flush or compaction (as
//! RocksDB's corruption status does), and nothing of it is installed.

use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{append_internal_key, ParsedKey, ValueKind};
use crate::merge::{full_merge, MergeOperator};

use super::filter_stage::{FilterStage, Filtered};
use super::{BlobResolver, Decision, VisibilityFilter};

/// Entries (internal key, value) to write in place of a run, in internal-key order.
pub type Collapsed = Vec<(Vec<u8>, Vec<u8>)>;

/// Combines the run of merge operands at `it` (a merge entry that starts its stripe, as
/// `filter.starts_stripe` says), leaving `it` after the entries consumed. A base kept in a
/// blob file is read through `blobs` (without it, such a base is an error).
pub fn collapse(
    op: &dyn MergeOperator,
    filter: &VisibilityFilter,
    blobs: Option<&BlobResolver<'_>>,
    it: &mut dyn InternalIterator,
) -> Result<Collapsed> {
    let head = it.key().to_vec();
    let Some(p) = ParsedKey::parse(&head) else {
        // Not a merge run: the caller's precondition does not hold; pass it on unchanged.
        let entry = (head.clone(), it.value().to_vec());
        it.next();
        return Ok(vec![entry]);
    };
    let (user_key, head_seq) = (p.user_key.to_vec(), p.seq);
    let stripe = filter.stripe(head_seq);
    // Operands newest first, with their keys (kept as they are in case 4).
    let mut run: Collapsed = vec![(head.clone(), it.value().to_vec())];
    it.next();
    // `Some(base)` once a put (`Some(value)`) or a delete (`None`) ends the run in the stripe.
    let mut base: Option<Option<Vec<u8>>> = None;
    let mut key_ended = true;
    while it.valid() {
        let Some(q) = ParsedKey::parse(it.key()) else {
            key_ended = false;
            break;
        };
        if q.user_key != user_key.as_slice() {
            break;
        }
        key_ended = false;
        if filter.stripe(q.seq) != stripe {
            break;
        }
        match q.value_kind() {
            Some(ValueKind::Merge) => run.push((it.key().to_vec(), it.value().to_vec())),
            Some(ValueKind::Put) => base = Some(Some(it.value().to_vec())),
            Some(ValueKind::BlobIndex) => {
                let resolve = blobs.ok_or_else(|| {
                    Error::Unavailable(format!(
                        "internal error: the blob reference of key {} met a merge with no \
                         blob files to read",
                        crate::util::printable(&user_key)
                    ))
                })?;
                base = Some(Some(resolve(&user_key, it.value())?));
            }
            Some(ValueKind::Delete | ValueKind::SingleDelete) => base = Some(None),
            Some(ValueKind::RangeDeletion) | None => break,
        }
        it.next();
        if base.is_some() {
            break;
        }
        key_ended = true;
    }
    it.status()?;
    let operands: Vec<&[u8]> = run.iter().map(|(_, v)| v.as_slice()).collect();
    let as_put = |value: Vec<u8>| {
        let mut k = Vec::with_capacity(user_key.len() + 8);
        append_internal_key(&mut k, &user_key, head_seq, ValueKind::Put as u8);
        vec![(k, value)]
    };
    if let Some(base) = base {
        let value = full_merge(op, &user_key, base.as_deref(), &operands)?;
        return Ok(as_put(value));
    }
    if key_ended && filter.bottommost() {
        let value = full_merge(op, &user_key, None, &operands)?;
        return Ok(as_put(value));
    }
    if run.len() >= 2 {
        let oldest_first: Vec<&[u8]> = operands.iter().rev().copied().collect();
        if let Some(value) = op.partial_merge(&user_key, &oldest_first) {
            return Ok(vec![(head, value)]);
        }
    }
    Ok(run)
}

/// Feeds `add` the entries of `it`, from its current position, that `filter` keeps, until the
/// iterator ends or `stop` says so for the entry at hand (which is then not consumed). With a
/// merge operator, each run of merge operands heading a stripe is first combined
/// (`compaction::operands`); without one, operands pass as they are.
pub fn write_visible(
    it: &mut dyn InternalIterator,
    filter: &mut VisibilityFilter,
    merge_operator: Option<&dyn MergeOperator>,
    stop: impl FnMut(&[u8]) -> Result<bool>,
    add: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    write_visible_filtered(it, filter, merge_operator, None, None, stop, add)
}

/// [`write_visible`] with a compaction filter stage between the merge-operand collapse and
/// the visibility filter (see [`super::filter_stage`]), and `blobs` to read the separated values
/// that a merge or the filter needs (a compaction meets blob references; a flush does not).
pub fn write_visible_filtered(
    it: &mut dyn InternalIterator,
    filter: &mut VisibilityFilter,
    merge_operator: Option<&dyn MergeOperator>,
    mut stage: Option<&mut FilterStage>,
    blobs: Option<&BlobResolver<'_>>,
    mut stop: impl FnMut(&[u8]) -> Result<bool>,
    mut add: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    while it.valid() {
        if stop(it.key())? {
            break;
        }
        if let Some(op) = merge_operator {
            if is_merge(it.key()) && filter.starts_stripe(it.key()) {
                for (key, value) in collapse(op, filter, blobs, it)? {
                    emit(filter, stage.as_deref_mut(), blobs, &key, &value, &mut add)?;
                }
                continue;
            }
        }
        emit(
            filter,
            stage.as_deref_mut(),
            blobs,
            it.key(),
            it.value(),
            &mut add,
        )?;
        it.next();
    }
    it.status()?;
    if let Some((k, v)) = filter.release() {
        add(&k, &v)?;
    }
    Ok(())
}

/// Passes one entry through the filter stage (if any), then the visibility filter, to `add`.
fn emit(
    filter: &mut VisibilityFilter,
    stage: Option<&mut FilterStage>,
    blobs: Option<&BlobResolver<'_>>,
    key: &[u8],
    value: &[u8],
    add: &mut impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    let replaced;
    let (key, value) = match stage.map(|s| s.apply(key, value, blobs)).transpose()? {
        None | Some(Filtered::Pass) => (key, value),
        Some(Filtered::Replace(k, v)) => {
            replaced = (k, v);
            (replaced.0.as_slice(), replaced.1.as_slice())
        }
        Some(Filtered::Skip) => return Ok(()),
    };
    let (released, decision) = filter.decide(key);
    if let Some((k, v)) = released {
        add(&k, &v)?;
    }
    match decision {
        Decision::Keep => add(key, value)?,
        Decision::KeepZeroed => add(filter.zeroed(key), value)?,
        Decision::Drop => {}
    }
    Ok(())
}

/// True when the internal key is a merge operand (its kind byte, without a full parse).
fn is_merge(ikey: &[u8]) -> bool {
    ikey.len() >= crate::key::TRAILER_LEN
        && ikey[ikey.len() - crate::key::TRAILER_LEN] == ValueKind::Merge as u8
}

#[cfg(test)]
mod tests {
    //! Cases in `testdata/operands.txt`, one a stanza:
    //!
    //! ```text
    //! compact snapshots=(4) bottommost op=append
    //! a#6,MERGE=x a#5,MERGE=y a#3,PUT=z
    //! ----
    //! a#6,MERGE=y,x a#3,PUT=z
    //! ```
    //!
    //! The input is what a flush or compaction reads, in internal-key order, in the
    //! `key#seq,KIND=value` notation; `snapshots` and `bottommost` are as in
    //! `testdata/visibility.txt`. `op` is the merge operator: `append` (string append with
    //! `,`, which merges partially), `append-full-only` (the same without partial merges) or
    //! `none`. The output is what is written (or `(none)`), or the error.
    //!
    //! `REWRITE=1 cargo test -p strata --lib compaction::operands` rewrites the expected
    //! output in place; review the diff before committing it.

    use super::*;
    use crate::merge::StringAppend;
    use crate::testing::lsm::{parse_entries, show_key, VecIter};
    use crate::util::printable;

    /// String append without partial merges.
    struct FullOnly(StringAppend);

    impl MergeOperator for FullOnly {
        fn name(&self) -> &str {
            "append-full-only"
        }
        fn full_merge(
            &self,
            key: &[u8],
            existing: Option<&[u8]>,
            operands: &[&[u8]],
        ) -> std::result::Result<Vec<u8>, String> {
            self.0.full_merge(key, existing, operands)
        }
    }

    fn compact(case: &mut datadriven::TestCase) -> std::result::Result<String, String> {
        let snapshots = case
            .try_take_args::<u64>("snapshots")
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        let bottommost = case.take_flag("bottommost").map_err(|e| e.to_string())?;
        let op_name = case
            .try_take_arg::<String>("op")
            .map_err(|e| e.to_string())?
            .unwrap_or_else(|| "append".into());
        case.expect_empty().map_err(|e| e.to_string())?;
        let append = StringAppend::new(b",");
        let full_only = FullOnly(StringAppend::new(b","));
        let op: Option<&dyn MergeOperator> = match op_name.as_str() {
            "append" => Some(&append),
            "append-full-only" => Some(&full_only),
            "none" => None,
            other => return Err(format!("unknown operator {other:?}")),
        };
        let entries = parse_entries(&case.input)?;
        let mut it = VecIter::new(entries);
        it.seek_to_first();
        let mut filter = VisibilityFilter::new(snapshots, bottommost);
        let mut out = Vec::new();
        let result = write_visible(
            &mut it,
            &mut filter,
            op,
            |_| Ok(false),
            |k, v| {
                out.push(match v.is_empty() {
                    true => show_key(k),
                    false => format!("{}={}", show_key(k), printable(v)),
                });
                Ok(())
            },
        );
        Ok(match result {
            Err(e) => format!("error: {e}\n"),
            Ok(()) if out.is_empty() => "(none)\n".to_string(),
            Ok(()) => out.join(" ") + "\n",
        })
    }

    #[test]
    fn operand_cases() {
        let mut cases = 0;
        datadriven::walk(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/src/compaction/testdata/operands.txt"
            ),
            |f| {
                f.run(|case| -> std::result::Result<String, String> {
                    cases += 1;
                    match case.directive.as_str() {
                        "compact" => compact(case),
                        other => Err(format!("unknown directive {other:?}")),
                    }
                })
            },
        );
        assert!(cases >= 10, "only {cases} cases ran");
    }
}
