//! Point lookups of keys whose newest visible version is a merge operand.
//!
//! `DbInner::get` answers from the first memtable or table that holds a visible version of
//! the key when that version is a put or a delete. When it is a merge operand, the lookup
//! starts again here: it collects the key's visible versions, newest first, across the
//! memtables (active, then immutable newest first) and the tables (L0 newest first, then one
//! file per level), down to the first put, delete or single-delete, or the bottom of the tree,
//! and resolves them with the merge operator (`merge::resolve`). Each source holds only versions
//! older than those of the sources before it, so the collected order is newest first.
//!
//! A base kept in a blob file (a `BlobIndex` version) is read from it before the merge.
//!
//! Range deletions: each source's tombstones covering the key (at or below the read) are
//! taken before its versions, and the first version older than the newest of them ends the
//! run as a delete would.

use crate::db::families::ColumnFamilyData;
use crate::db::stats::Counter;
use crate::db::{DbInner, SuperVersion};
use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::key::{seek_key, ParsedKey, SequenceNumber, ValueKind};
use crate::table::BlockReads;

/// Versions of one key, newest first, as collected so far.
type Versions = Vec<(ValueKind, Vec<u8>)>;

impl DbInner {
    /// The value of `key` at `seq` when its newest visible version is a merge operand, table
    /// data blocks read as `reads` says.
    pub(in crate::db) fn get_merged(
        &self,
        cf: &ColumnFamilyData,
        sv: &SuperVersion,
        key: &[u8],
        seq: SequenceNumber,
        reads: BlockReads,
    ) -> Result<Option<Vec<u8>>> {
        let target = seek_key(key, seq);
        let mut versions = Versions::new();
        let found_base = |v: &Versions| v.last().is_some_and(|(k, _)| *k != ValueKind::Merge);
        let mut covered = 0;
        for mem in std::iter::once(&sv.active).chain(sv.immutables.iter()) {
            if mem.has_range_tombstones() {
                let t = mem.range_tombstones().max_covering_seq(key, seq);
                covered = covered.max(t.unwrap_or(0));
            }
            collect(&mut mem.iter(), &target, key, covered, &mut versions)?;
            if found_base(&versions) {
                return self.resolve(cf, key, &versions);
            }
        }
        let hash = crate::table::filter::filter_hash(key);
        for (level, f) in sv.version.files_for_key(key) {
            if f.smallest_seq > seq {
                continue; // everything in it is newer than the read
            }
            let table = self.tables.get_for(f, &sv.version.order, level)?;
            let tombstones = table.range_tombstones_ref();
            if !tombstones.is_empty() {
                covered = covered.max(tombstones.max_covering_seq(key, seq).unwrap_or(0));
            }
            // The filter and one block first: most tables hold no version of the key.
            let holds = table
                .get_hashed_entry(&target, hash, reads, |entry| {
                    ParsedKey::parse(entry.key()).is_some_and(|p| p.user_key == key)
                })?
                .unwrap_or(false);
            if !holds {
                continue;
            }
            let mut versions_in_table = table.iter_for_read(0, reads);
            collect(&mut versions_in_table, &target, key, covered, &mut versions)?;
            if found_base(&versions) {
                break;
            }
        }
        self.resolve(cf, key, &versions)
    }

    fn resolve(
        &self,
        cf: &ColumnFamilyData,
        key: &[u8],
        versions: &Versions,
    ) -> Result<Option<Vec<u8>>> {
        // A base kept in a blob file is read first; operands are never separated.
        let resolved;
        let versions = match versions.last() {
            Some((ValueKind::BlobIndex, reference)) => {
                let mut v = versions.clone();
                let value = self.blobs.get(key, reference)?;
                v.pop();
                v.push((ValueKind::Put, value));
                resolved = v;
                &resolved
            }
            _ => versions,
        };
        let value = crate::merge::resolve(
            cf.options.merge_operator.as_deref(),
            cf.name(),
            key,
            versions.iter().map(|(k, v)| (*k, v.as_slice())),
        )?;
        if value.is_some() {
            self.counters.add(Counter::GetsFound, 1);
        }
        Ok(value)
    }
}

/// Appends the versions of `key` that `it` holds from `target` on, newest first, up to and
/// including the first that is not a merge operand. A version older than `covered` (the
/// newest range deletion covering the key, 0 for none) is recorded as a delete.
fn collect(
    it: &mut dyn InternalIterator,
    target: &[u8],
    key: &[u8],
    covered: SequenceNumber,
    versions: &mut Versions,
) -> Result<()> {
    it.seek(target);
    while it.valid() {
        let Some(p) = ParsedKey::parse(it.key()) else {
            break;
        };
        if p.user_key != key {
            break;
        }
        if p.seq < covered {
            versions.push((ValueKind::Delete, Vec::new()));
            break;
        }
        if let Some(kind) = p.value_kind() {
            versions.push((kind, it.value().to_vec()));
            if kind != ValueKind::Merge {
                break;
            }
        }
        it.next();
    }
    it.status()
}
