//! Point lookups: the memtables newest first, then the tables level by level, each table's
//! filter asked first; the filters' lines of the first tables are loaded together.

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::db::families::ColumnFamilyData;
use crate::db::stats::Counter;
use crate::db::{DbInner, SuperVersion};
use crate::error::Result;
use crate::histogram::Histogram;
use crate::key::{ParsedKey, SequenceNumber, ValueKind};
use crate::memtable::Lookup;
use crate::perf_context::{perf_count, PerfTimer};
use crate::range_del::FragmentedList;
use crate::table::pinned::LookupValue;
use crate::table::{BlockReads, Table};
use crate::version::read_charge::{GET_CHARGE, SEARCH_CHARGE};
use crate::version::{FileMeta, Version};

impl DbInner {
    /// The value of `key` at `snapshot`, or as of now.
    ///
    /// Without a snapshot the super version is loaded before the sequence number. The other
    /// order loses data: a newer version of the key published in between, then flushed or
    /// compacted with no snapshot registered, drops the version the read should see from the
    /// tables of the super version it then loads. In this order the super version holds every
    /// write up to some sequence at or below the one loaded (a memtable switch falls between
    /// write groups), its memtables and files are not changed by later jobs, and the read sees
    /// that consistent prefix, including every write acknowledged before it began.
    ///
    /// The value as stored: `get` (in `ttl`) strips a TTL family's expiry.
    pub(in crate::db) fn get_stored<V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        key: &[u8],
        snapshot: Option<SequenceNumber>,
        reads: BlockReads,
    ) -> Result<Option<V>> {
        self.check_open()?;
        let started = self.times_operations().then(Instant::now);
        let sv = cf.super_version();
        let seq = snapshot.unwrap_or_else(|| self.last_sequence.load(Ordering::Acquire));
        let found: Result<Option<V>> = self.get_stored_at(cf, &sv, key, seq, reads);
        if let Ok(Some(v)) = &found {
            perf_count!(get_read_bytes, v.as_ref().len());
        }
        if let Some(started) = started {
            let micros = started.elapsed().as_micros() as u64;
            self.histograms.record(Histogram::Get, micros);
        }
        found
    }

    /// [`DbInner::get_stored`] in super version `sv` at sequence `seq` (`sv` loaded first, as
    /// that function's doc says), reading table data blocks as `reads` says.
    pub(in crate::db) fn get_stored_at<V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        sv: &SuperVersion,
        key: &[u8],
        seq: SequenceNumber,
        reads: BlockReads,
    ) -> Result<Option<V>> {
        self.counters.add(Counter::Gets, 1);
        // The newest range deletion at or below `seq` covering `key` in the sources read so
        // far (0: none). A version older than it is deleted; sources are newest first, so a
        // tombstone in an older source never hides a version found in a newer one.
        let mut covered = 0;
        // The tables' filter hash of the key, which the memtables' filters take too.
        let hash = crate::table::filter::filter_hash(key);
        let memtables = || std::iter::once(&sv.active).chain(sv.immutables.iter());
        // Every filter line the lookup may read is asked for before any is read, the
        // memtables' and the first tables' (`open_first_tables`), so that their misses
        // overlap with each other and with the memtables' searches. A lookup the memtables
        // answer has opened tables it does not read: cheap next to a skiplist search.
        memtables().for_each(|mem| mem.prefetch_filter(hash));
        let first = self.open_first_tables(sv, key, hash, seq);
        let memtable_timer = PerfTimer::start();
        let found_in_memtables =
            self.get_from_memtables(cf, sv, key, hash, seq, reads, &mut covered);
        memtable_timer.stop(|c| &c.get_from_memtable_time);
        if let Some(found) = found_in_memtables {
            return found;
        }
        let mut target = SEEK_KEY.with(|b| std::mem::take(&mut *b.borrow_mut()));
        target.clear();
        crate::key::append_internal_key(&mut target, key, seq, crate::key::KIND_FOR_SEEK);
        let table_timer = PerfTimer::start();
        let result = self.get_from_tables(cf, sv, key, hash, &target, seq, reads, covered, first);
        table_timer.stop(|c| &c.get_from_output_files_time);
        SEEK_KEY.with(|b| *b.borrow_mut() = target);
        result
    }

    /// The memtable half of a point lookup: the answer if the memtables give one, with
    /// `covered` raised to the newest range deletion covering `key` in them.
    #[expect(
        clippy::too_many_arguments,
        reason = "the lookup's state, as get_from_tables takes it; `reads` is for a merge's table reads"
    )]
    fn get_from_memtables<V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        sv: &SuperVersion,
        key: &[u8],
        hash: u64,
        seq: SequenceNumber,
        reads: BlockReads,
        covered: &mut SequenceNumber,
    ) -> Option<Result<Option<V>>> {
        let memtables = || std::iter::once(&sv.active).chain(sv.immutables.iter());
        for mem in memtables() {
            if mem.has_range_tombstones() {
                let t = mem.range_tombstones().max_covering_seq(key, seq);
                *covered = (*covered).max(t.unwrap_or(0));
            }
            perf_count!(get_from_memtable_count, 1);
            let (lookup, found) = match mem.may_contain(hash) {
                true => {
                    perf_count!(bloom_memtable_hit_count, 1);
                    mem.get_hashed(key, hash, seq)
                }
                false => {
                    perf_count!(bloom_memtable_miss_count, 1);
                    (Lookup::Missing, 0)
                }
            };
            if !matches!(lookup, Lookup::Missing) && found < *covered {
                return Some(Ok(None));
            }
            match lookup {
                Lookup::Found(v) => {
                    self.counters.add(Counter::GetsFound, 1);
                    return Some(Ok(Some(V::from_slice(v))));
                }
                Lookup::Deleted => return Some(Ok(None)),
                Lookup::Merge => {
                    let merged = self.get_merged(cf, sv, key, seq, reads);
                    return Some(merged.map(|v| v.map(V::from_vec)));
                }
                // Every older source holds only versions older than the covering tombstone,
                // which lies in this memtable or a newer one: the key is deleted, and nothing
                // older needs a look (RocksDB stops there too).
                Lookup::Missing if *covered > 0 => return Some(Ok(None)),
                Lookup::Missing => {}
            }
        }
        None
    }

    /// The tables a point lookup of `key` at `seq` may read, in the order it reads them: a
    /// table whose every entry is newer than the read is skipped.
    pub(in crate::db) fn table_candidates<'a>(
        sv: &'a SuperVersion,
        key: &'a [u8],
        seq: SequenceNumber,
    ) -> impl Iterator<Item = (usize, &'a Arc<FileMeta>)> {
        let files = sv.version.files_for_key(key);
        files.filter(move |(_, f)| f.smallest_seq <= seq)
    }

    /// The first [`PREFETCHED_TABLES`] tables a point lookup of `key` may read, opened, each
    /// asked to start loading the line of its filter the lookup will read (`hash` is the
    /// key's filter hash): most lookups read such a line in every table they consult, and
    /// their misses then overlap instead of adding up. A table that fails to open here is
    /// opened again (and its error returned) only if the lookup gets to it.
    pub(in crate::db) fn open_first_tables<'a>(
        &self,
        sv: &'a SuperVersion,
        key: &'a [u8],
        hash: u64,
        seq: SequenceNumber,
    ) -> FirstTables<'a> {
        let mut candidates = Self::table_candidates(sv, key, seq);
        let mut first: FirstTables = [const { None }; PREFETCHED_TABLES];
        for slot in &mut first {
            let Some((level, f)) = candidates.next() else {
                break;
            };
            let table = self.tables.get_for(f, &sv.version.order, level).ok();
            if let Some(t) = &table {
                t.prefetch_filter(hash);
            }
            *slot = Some((level, f, table));
        }
        first
    }

    /// The table half of a point lookup; `hash` is the key's filter hash, `target` the seek
    /// key for `(key, seq)`, `covered` the newest range deletion covering `key` in the
    /// memtables (0: none), and `first` the first tables to read, from
    /// [`DbInner::open_first_tables`].
    #[expect(
        clippy::too_many_arguments,
        reason = "the lookup's state so far, handed on from the memtable half without a struct to fill per read"
    )]
    pub(in crate::db) fn get_from_tables<'a, V: LookupValue>(
        &self,
        cf: &ColumnFamilyData,
        sv: &'a SuperVersion,
        key: &'a [u8],
        hash: u64,
        target: &[u8],
        seq: SequenceNumber,
        reads: BlockReads,
        mut covered: SequenceNumber,
        first: FirstTables<'a>,
    ) -> Result<Option<V>> {
        if covered > 0 {
            // A memtable's tombstone covers the key: every table version is older.
            return Ok(None);
        }
        // The candidates after the first ones (none unless `first` is full).
        let taken = first.iter().flatten().count();
        let rest = Self::table_candidates(sv, key, seq).skip(taken);
        let rest = rest.map(|(level, f)| (level, f, None));
        // What the L0 tables consulted without finding the key cost this read, in bytes of
        // merge input (`version::read_charge`): charged to them whatever the lookup then
        // finds, below or in a later one.
        let charging = cf.options.read_triggered_compaction;
        let mut l0_charge = 0;
        let found = 'lookup: {
            for (level, f, opened) in first.into_iter().flatten().chain(rest) {
                let table = match opened {
                    Some(t) => t,
                    None => self.tables.get_for(f, &sv.version.order, level)?,
                };
                // Before the filter: a table's tombstones cover keys its filter knows nothing of.
                let tombstones = table.range_tombstones_ref();
                if !tombstones.is_empty() {
                    covered = covered.max(tombstones.max_covering_seq(key, seq).unwrap_or(0));
                }
                perf_count!(get_from_table_count, 1);
                let hit = table
                    .get_hashed_entry(target, hash, reads, |entry| {
                        let p = ParsedKey::parse(entry.key())?;
                        let value = || V::from_block(entry.block(), entry.value_range());
                        (p.user_key == key).then(|| (p.kind, p.seq, value()))
                    })?
                    .flatten();
                match hit {
                    Some((_, found, _)) if found < covered => break 'lookup None,
                    Some((kind, _, v)) if kind == ValueKind::Put as u8 => {
                        self.counters.add(Counter::GetsFound, 1);
                        break 'lookup Some(v);
                    }
                    Some((kind, _, _)) if kind == ValueKind::Merge as u8 => {
                        self.charge_l0_reads(&sv.version, l0_charge);
                        return Ok(self.get_merged(cf, sv, key, seq, reads)?.map(V::from_vec));
                    }
                    Some((kind, _, reference)) if kind == ValueKind::BlobIndex as u8 => {
                        self.charge_l0_reads(&sv.version, l0_charge);
                        let value = self.blobs.get(key, reference.as_ref())?;
                        self.counters.add(Counter::GetsFound, 1);
                        return Ok(Some(V::from_vec(value)));
                    }
                    Some(_) => break 'lookup None,
                    None if covered > 0 => {
                        // Every older version of the key, in the levels below, is older than
                        // the covering tombstone: deleted.
                        break 'lookup None;
                    }
                    None if charging && level == 0 => {
                        // A table without a filter was searched; one with a filter most
                        // likely stopped the lookup at it.
                        l0_charge += match table.properties().filter_bytes {
                            0 => SEARCH_CHARGE,
                            _ => GET_CHARGE,
                        };
                    }
                    None => {}
                }
            }
            None
        };
        self.charge_l0_reads(&sv.version, l0_charge);
        Ok(found)
    }

    /// Charges `version`'s L0 files `bytes` for a read that passed some of them (see
    /// `version::read_charge`), and wakes the background threads when that makes their
    /// merge due.
    pub(in crate::db) fn charge_l0_reads(&self, version: &Version, bytes: u64) {
        if version.charge_l0_reads(bytes) {
            self.wake_background();
        }
    }

    /// The range deletions of `sv`'s tables below L0, gathered (opening every table) once
    /// per version; an error if a table fails to open, and then gathered again next time.
    pub(in crate::db) fn deeper_range_tombstones<'a>(
        &self,
        sv: &'a SuperVersion,
    ) -> Result<&'a [Arc<FragmentedList>]> {
        if let Some(lists) = sv.deeper_tombstones.get() {
            return Ok(lists);
        }
        let mut lists = Vec::new();
        let deeper = sv.version.levels.iter().enumerate().skip(1);
        for (level, f) in deeper.flat_map(|(l, files)| files.iter().map(move |f| (l, f))) {
            let tombstones = self
                .tables
                .get_for(f, &sv.version.order, level)?
                .range_tombstones();
            if !tombstones.is_empty() {
                lists.push(tombstones);
            }
        }
        Ok(sv.deeper_tombstones.get_or_init(|| lists))
    }
}

/// How many of the tables a point lookup may read are opened before it reads any, to load
/// their filters' lines together (`DbInner::open_first_tables`).
const PREFETCHED_TABLES: usize = 8;

/// The first tables of a point lookup (`DbInner::open_first_tables`): level, file, and the
/// table if it opened.
type FirstTables<'a> =
    [Option<(usize, &'a Arc<FileMeta>, Option<Cow<'a, Arc<Table>>>)>; PREFETCHED_TABLES];

thread_local! {
    /// The seek key of point lookups, reused by each thread.
    static SEEK_KEY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}
