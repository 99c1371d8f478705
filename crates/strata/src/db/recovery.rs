//! Recovery: replaying the write-ahead logs into memtables at open.
//!
//! WALs are replayed oldest first, each into a memtable of its own per column family (so that
//! each memtable's writes sit in exactly one WAL). A record is skipped when its family's log
//! number says its data is already in the family's tables, or when its family was dropped (an
//! id the manifest has used but no longer holds); a record naming an id the manifest never
//! gave out is a bad record. A batch is applied whole or not at all. At the first bad
//! record (torn, corrupt, undecodable, or out of sequence order):
//!
//! - in the newest WAL, or with [`WalRecoveryMode::PointInTime`], everything from the bad
//!   record on is dropped: the bytes are copied to `NNNNNN.log.dropped` for diagnosis, the WAL
//!   is truncated to its good prefix (so it reads cleanly as an older WAL later), and with
//!   point-in-time recovery any newer WAL is set aside as `NNNNNN.log.dropped`;
//! - in an older WAL with [`WalRecoveryMode::TolerateCorruptedTail`], open fails with a
//!   corruption error naming the file and offset: the older WALs were then synced when they
//!   were closed, so damage there is not a crash artefact and dropping it silently could lose
//!   acknowledged writes. (Under point-in-time recovery an older WAL may be closed unsynced,
//!   see `write/group.rs`, and a power cut may tear it like the newest.)

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::blob::at_write::WalBlobReader;
use crate::error::{Error, Result};
use crate::filename::{dropped_wal_path, wal_path};
use crate::fs::{FileSystem, IoClass, IoStats};
use crate::key::{SequenceNumber, ValueKind};
use crate::log::{BadRecord, LogReader, ReadError};
use crate::memtable::MemTable;
use crate::options::WalRecoveryMode;
use crate::write_batch::DecodedBatch;

/// What open found in the write-ahead logs.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options, WriteBatch, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"a", b"1")?;
/// let mut batch = WriteBatch::new();
/// batch.put(b"b", b"2").put(b"c", b"3");
/// db.write(batch, &WriteOptions::default())?;
/// db.close()?; // unflushed: the writes are in the WAL only
///
/// let db = Db::open(dir.path(), Options::default())?;
/// let report = db.recovery_report();
/// assert_eq!((report.batches, report.entries), (2, 3));
/// assert_eq!(report.dropped_records, 0);
/// assert!(report.corruption.is_none());
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// WAL files read.
    pub wal_files: usize,
    /// Batches (WAL records) replayed.
    pub batches: u64,
    /// Updates replayed.
    pub entries: u64,
    /// Bytes of WAL read.
    pub bytes_read: u64,
    /// Bytes cut from WALs by the point-in-time rule (kept in `*.log.dropped`).
    pub dropped_bytes: u64,
    /// Records dropped: the bad one and every intact record after it.
    pub dropped_records: u64,
    /// The first bad record met, as "file at offset: reason".
    pub corruption: Option<String>,
    /// Files where dropped bytes or whole dropped WALs were set aside.
    pub set_aside: Vec<PathBuf>,
}

/// What replay needs to know of one column family.
#[derive(Debug, Clone)]
pub(crate) struct FamilyReplay {
    /// WALs below this number hold nothing of the family that is not in its tables.
    pub log_number: u64,
    /// The family's memtable size, for the memtables replay fills.
    pub write_buffer_size: usize,
    /// The family's user key order, for those memtables.
    pub order: crate::comparator::KeyOrder,
    /// Bytes of the memtables' bloom filter: the write path's size when a replayed memtable
    /// may go on as the family's active one (`Options::avoid_flush_during_recovery`), else 0.
    pub bloom_bytes: usize,
    /// Bytes of the memtables' point index, 0 or the write path's as for `bloom_bytes`.
    pub point_index_bytes: usize,
}

/// The column families replay applies records to.
pub(crate) struct ReplayFamilies {
    pub families: BTreeMap<u32, FamilyReplay>,
    /// The largest id the manifest has given out: records of smaller ids that are not in
    /// `families` belong to dropped families.
    pub max_column_family: u32,
}

/// The state rebuilt from the WALs.
pub(crate) struct Recovered {
    /// Per family, memtables with at least one entry, oldest first.
    pub mems: BTreeMap<u32, Vec<Arc<MemTable>>>,
    /// The WALs kept because a memtable holds some of their records, ascending.
    pub kept_wals: Vec<u64>,
    /// The largest sequence number replayed.
    pub last_sequence: SequenceNumber,
    /// The blob files the replayed records named (values written at put), each with the
    /// newest WAL that named it.
    pub blob_files_read: HashMap<u64, u64>,
    /// The names of prepared transactions whose commit marker was replayed.
    pub committed_prepared: HashSet<Vec<u8>>,
    pub report: RecoveryReport,
}

/// Replays WALs `numbers` (ascending) of database `dir`. With `read_only` nothing is
/// written: a bad record ends the replay where the rules above drop the rest, but no bytes
/// are cut or set aside and empty WALs stay (a writer may be appending to the newest one).
pub(crate) fn replay_wals(
    fs: &dyn FileSystem,
    dir: &Path,
    numbers: &[u64],
    mode: WalRecoveryMode,
    families: &ReplayFamilies,
    io: &IoStats,
    read_only: bool,
) -> Result<Recovered> {
    let mut out = Recovered {
        mems: BTreeMap::new(),
        kept_wals: Vec::new(),
        last_sequence: 0,
        committed_prepared: HashSet::new(),
        report: RecoveryReport::default(),
        blob_files_read: HashMap::new(),
    };
    let mut blobs = WalBlobReader::new(fs, dir);
    for (i, &number) in numbers.iter().enumerate() {
        let path = wal_path(dir, number);
        let is_newest = i + 1 == numbers.len();
        let mut mems = WalMemtables {
            number,
            families,
            by_family: HashMap::new(),
        };
        let mut reader = LogReader::new(fs.open_sequential(&path)?);
        let bad = replay_one(&mut reader, &mut mems, &mut out, &mut blobs);
        out.report.wal_files += 1;
        out.report.bytes_read += reader.bytes_read();
        let bad = match bad {
            Ok(None) => None,
            Ok(Some(bad)) => Some(bad),
            Err(e) => return Err(e),
        };
        if let Some(bad) = bad {
            if !is_newest && mode == WalRecoveryMode::TolerateCorruptedTail {
                let mut err = bad.into_error(&path);
                if let Error::Corruption { reason, .. } = &mut err {
                    reason.push_str(
                        "; the WAL is not the newest, so this is not a torn write \
                         (open with WalRecoveryMode::PointInTime to keep only what precedes it)",
                    );
                }
                return Err(err);
            }
            let dropped_records = 1 + reader.count_records_after_corruption()?;
            io.add_read(IoClass::Recovery, reader.bytes_read());
            out.report.dropped_records += dropped_records;
            out.report.corruption = Some(format!(
                "{} at offset {}: {}",
                path.display(),
                bad.offset,
                bad.reason
            ));
            if read_only {
                mems.keep(&mut out);
                out.blob_files_read.extend(blobs.files_read());
                return Ok(out);
            }
            cut_tail(
                fs,
                dir,
                number,
                reader.end_of_last_record(),
                &mut out.report,
            )?;
            keep_or_remove(fs, &path, mems, &mut out)?;
            for &later in &numbers[i + 1..] {
                let from = wal_path(dir, later);
                let to = dropped_wal_path(dir, later);
                out.report.dropped_bytes += fs.file_size(&from)?;
                fs.rename(&from, &to)?;
                out.report.set_aside.push(to);
            }
            fs.sync_dir(dir)?;
            out.blob_files_read.extend(blobs.files_read());
            return Ok(out);
        }
        io.add_read(IoClass::Recovery, reader.bytes_read());
        if read_only {
            mems.keep(&mut out);
        } else {
            keep_or_remove(fs, &path, mems, &mut out)?;
        }
    }
    out.blob_files_read.extend(blobs.files_read());
    Ok(out)
}

/// The memtables one WAL is replayed into, one per family that has records in it.
struct WalMemtables<'a> {
    number: u64,
    families: &'a ReplayFamilies,
    by_family: HashMap<u32, Arc<MemTable>>,
}

/// Where a record of a family goes.
enum Target {
    /// Into the family's memtable.
    Apply(FamilyReplay),
    /// Nowhere: its data is in the family's tables, or the family was dropped.
    Skip,
}

impl WalMemtables<'_> {
    /// Where a record of family `cf` goes; an error for an id the manifest never gave out.
    fn target(&self, cf: u32) -> Result<Target, String> {
        match self.families.families.get(&cf) {
            Some(f) if self.number >= f.log_number => Ok(Target::Apply(f.clone())),
            Some(_) => Ok(Target::Skip),
            None if cf <= self.families.max_column_family => Ok(Target::Skip),
            None => Err(format!(
                "record for column family id {cf}, which the manifest does not know (largest \
                 id given out: {})",
                self.families.max_column_family
            )),
        }
    }

    fn memtable(&mut self, cf: u32, family: FamilyReplay) -> &Arc<MemTable> {
        let number = self.number;
        self.by_family.entry(cf).or_insert_with(|| {
            Arc::new(
                MemTable::with_order(number, family.write_buffer_size, family.order)
                    .with_bloom(family.bloom_bytes)
                    .with_point_index(family.point_index_bytes),
            )
        })
    }

    fn is_empty(&self) -> bool {
        self.by_family.values().all(|m| m.is_empty())
    }

    /// Moves the memtables that hold something into `out`.
    fn keep(self, out: &mut Recovered) {
        let mut kept = false;
        for (cf, mem) in self.by_family {
            if !mem.is_empty() {
                // Its replay is over: the entries it still stages are linked, so that its
                // readers and its flush have none to merge.
                mem.link_staged();
                out.mems.entry(cf).or_default().push(mem);
                kept = true;
            }
        }
        if kept {
            out.kept_wals.push(self.number);
        }
    }
}

/// Applies the records of one WAL to `mems`; returns the first bad record, if any.
fn replay_one(
    reader: &mut LogReader,
    mems: &mut WalMemtables,
    out: &mut Recovered,
    blobs: &mut WalBlobReader,
) -> Result<Option<BadRecord>> {
    // The values of the batch's blob-reference records, in order.
    let mut values: Vec<Vec<u8>> = Vec::new();
    loop {
        let start = reader.end_of_last_record();
        let record = match reader.read_record() {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(None),
            Err(ReadError::Bad(b)) => return Ok(Some(b)),
            Err(ReadError::Io(e)) => return Err(e),
        };
        let bad = |reason: String| {
            Ok(Some(BadRecord {
                offset: start,
                reason,
            }))
        };
        let batch = match DecodedBatch::parse(record) {
            Ok(b) => b,
            Err(reason) => return bad(reason),
        };
        if batch.seq <= out.last_sequence && out.last_sequence > 0 {
            return bad(format!(
                "batch sequence {} is not after the previous batch's last sequence {}",
                batch.seq, out.last_sequence
            ));
        }
        // Check the whole batch before applying any of it: a batch is all or nothing. A value
        // the write path put in a blob file is read back here: a write whose file lost it
        // (a crash of the machine before either was synced) is a bad record.
        values.clear();
        for entry in batch.iter() {
            let applied = entry.and_then(|e| Ok((mems.target(e.cf)?, e)));
            match applied {
                Err(reason) => return bad(reason),
                Ok((Target::Apply(_), e)) if e.kind == ValueKind::BlobIndex => {
                    match blobs.value(mems.number, e.key, e.value) {
                        Ok(value) => values.push(value),
                        Err(reason) => return bad(reason),
                    }
                }
                Ok(_) => {}
            }
        }
        let mut values = values.iter();
        for blob in batch.log_data() {
            if let Some(name) = blob.strip_prefix(super::write::two_phase::COMMIT_MARKER) {
                out.committed_prepared.insert(name.to_vec());
            }
        }
        let mut seq = batch.seq;
        for entry in batch.iter().flatten() {
            if let Ok(Target::Apply(family)) = mems.target(entry.cf) {
                let (kind, value) = match entry.kind {
                    ValueKind::BlobIndex => match values.next() {
                        Some(v) => (ValueKind::Put, &v[..]),
                        None => unreachable!("read above for each blob reference"),
                    },
                    kind => (kind, entry.value),
                };
                mems.memtable(entry.cf, family)
                    .add(seq, kind, entry.key, value);
            }
            seq += 1;
        }
        if batch.count > 0 {
            out.last_sequence = seq - 1;
        }
        out.report.batches += 1;
        out.report.entries += u64::from(batch.count);
    }
}

/// Copies the bytes of WAL `number` after `good_len` to its `.dropped` file, then truncates
/// the WAL to `good_len`.
fn cut_tail(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
    good_len: u64,
    report: &mut RecoveryReport,
) -> Result<()> {
    let path = wal_path(dir, number);
    let len = fs.file_size(&path)?;
    if len <= good_len {
        return Ok(());
    }
    let mut src = fs.open_sequential(&path)?;
    let dropped_path = dropped_wal_path(dir, number);
    let mut dst = fs.create_writable(&dropped_path)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut pos = 0u64;
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let chunk_end = pos + n as u64;
        if chunk_end > good_len {
            let from = good_len.saturating_sub(pos) as usize;
            dst.append(&buf[from..n])?;
        }
        pos = chunk_end;
    }
    dst.sync()?;
    fs.truncate(&path, good_len)?;
    report.dropped_bytes += len - good_len;
    report.set_aside.push(dropped_path);
    Ok(())
}

fn keep_or_remove(
    fs: &dyn FileSystem,
    path: &Path,
    mems: WalMemtables,
    out: &mut Recovered,
) -> Result<()> {
    if mems.is_empty() {
        // Nothing in it is needed: remove it so empty WALs do not pile up across reopens.
        fs.remove_file(path)
    } else {
        mems.keep(out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where replay sends a record of each family, found in WAL 10, with families 0 (log
    /// number 5), 2 (log number 12, so WAL 10 is in its tables) and 3 (log number 10); ids up
    /// to 4 given out, so 1 and 4 were dropped.
    #[test]
    fn records_go_to_their_family_or_are_skipped_or_bad() {
        let family = |log_number| FamilyReplay {
            log_number,
            write_buffer_size: 4096,
            order: Default::default(),
            bloom_bytes: 0,
            point_index_bytes: 0,
        };
        let families = ReplayFamilies {
            families: [(0, family(5)), (2, family(12)), (3, family(10))]
                .into_iter()
                .collect(),
            max_column_family: 4,
        };
        let mems = WalMemtables {
            number: 10,
            families: &families,
            by_family: HashMap::new(),
        };
        let cases = [
            (0, "apply"),
            (1, "skip"), // dropped
            (2, "skip"), // already in the family's tables
            (3, "apply"),
            (4, "skip"), // dropped
            (
                5,
                "bad: record for column family id 5, which the manifest does not know",
            ),
        ];
        for (cf, want) in cases {
            let got = match mems.target(cf) {
                Ok(Target::Apply(_)) => "apply".to_string(),
                Ok(Target::Skip) => "skip".to_string(),
                Err(why) => format!("bad: {why}"),
            };
            assert!(got.starts_with(want), "family {cf}: {got}");
        }
    }
}
