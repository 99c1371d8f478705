//! The write path: group commit.
//!
//! Each writer appends a request to the queue and either leads a group or waits to be told
//! its outcome or given the lead (`write/handoff.rs`: the queue, the slots writers wait
//! on, the lead's hand-off and the order of the locks around the two stages, model-checked
//! under loom). A leader takes the requests at the front of the queue (up to
//! `max_write_group_bytes`, all with the same `disable_wal`), writes them as one WAL record
//! under one header with consecutive sequence numbers and calls fdatasync once if any of
//! them asked for `sync` (the WAL stage, under the writer lock); then it takes the
//! `inserting` lock, lets go of the writer lock, passes the lead to the next request in the
//! queue, inserts its group into the memtables, publishes the new last sequence (the insert
//! stage), and wakes its group with the shared result.
//!
//! Two stages make a pipeline: the next group writes its WAL record while this one inserts
//! (two writers on two cores ran 15% faster). Invariants that keep it correct:
//! - Groups insert and publish in the order of their sequence numbers: a group takes
//!   `inserting` before it lets go of the writer lock, and the next group can only reach
//!   `inserting` through the writer lock.
//! - Nothing replaces a memtable a group is inserting into: a memtable switch (under the
//!   writer lock) first waits for `inserting` ([`DbInner::wait_for_inserts`]), as does a
//!   conditional write's check, which must see every write numbered before it.
//!
//! A failed WAL append or sync stops the write path: the WAL may end in a partial record, so
//! every later write fails with the original cause, while reads go on. Nothing of the failed
//! group becomes visible.
//!
//!
//! Why a waiting writer spins before it sleeps, and never yields: `write/handoff.rs`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::db::background::background_error;
use crate::db::blob::at_write::{ActiveBlobFiles, Prewritten};
use crate::db::families::{survey_families, ColumnFamilyData, Families};
use crate::db::lock_order::{Guard, Held, Ranked};
use crate::db::stats::Counter;
use crate::db::write::handoff::{self, GroupCommit, Queued, Slot};
use crate::db::write::stall::{self, StopCause};
use crate::db::write::wal_sync::{ClosedWals, WalSyncQueue, BACKGROUND_SYNC_BYTES};
use crate::db::DbInner;
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, MAX_SEQUENCE};
use crate::listener::FlushReason;
use crate::log::LogWriter;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::write_batch::{encode_header, WriteBatch, HEADER_LEN};

/// A group whose WAL record is written, to be inserted into the memtables.
pub(in crate::db) struct WrittenGroup {
    /// The family set the group was checked against.
    families: Arc<Families>,
    first_seq: SequenceNumber,
    count: u64,
}

pub(in crate::db) struct Request {
    batch: WriteBatch,
    options: WriteOptions,
    slot: Arc<Slot<Result<()>>>,
    /// The batch's values its writer put in blob files before it queued.
    prewritten: Option<Prewritten>,
}

impl Queued for Request {
    type Outcome = Result<()>;

    fn slot(&self) -> &Arc<Slot<Result<()>>> {
        &self.slot
    }
}

/// The writers waiting to be committed.
pub(in crate::db) type WriteQueue = handoff::WriteQueue<Request>;

/// What only the write leader touches.
pub(crate) struct WriterState {
    pub(super) wal: LogWriter,
    /// True when the WAL has appends not yet synced.
    pub(super) wal_dirty: bool,
    last_sequence: SequenceNumber,
    /// The group's WAL record, reused between groups.
    record: Vec<u8>,
    /// The error that stopped the write path, if one did.
    stopped: Option<Error>,
    /// The blob files writes put values in (`Options::blob_separation_at_write`), shared
    /// with the writers that put values there before they queue.
    blobs_at_write: Arc<Ranked<Mutex<ActiveBlobFiles>>>,
    /// WAL bytes appended since the last sync or background sync request.
    pub(super) appended_since_sync: u64,
    /// Bytes appended to the current WAL (for `max_total_wal_size`, `write/wal_limit.rs`).
    pub(super) wal_bytes: u64,
    /// Where the WAL's background syncs are asked for (`write/wal_sync.rs`).
    background_sync: Arc<WalSyncQueue>,
    /// Whether a memtable switch syncs the WAL it closes (see
    /// [`DbInner::switch_memtable`]); the background syncs, which only make that sync
    /// cheaper, run only then.
    pub(in crate::db) sync_at_switch: bool,
    /// The WALs closed at a switch without a sync: synced (before the current one) by the
    /// next synced write or WAL sync.
    pub(super) closed_unsynced: Arc<ClosedWals>,
}

impl WriterState {
    pub fn new(
        wal: LogWriter,
        last_sequence: SequenceNumber,
        background_sync: Arc<WalSyncQueue>,
        sync_at_switch: bool,
        closed_unsynced: Arc<ClosedWals>,
        blobs_at_write: Arc<Ranked<Mutex<ActiveBlobFiles>>>,
    ) -> Self {
        WriterState {
            wal,
            wal_dirty: false,
            last_sequence,
            record: Vec::new(),
            stopped: None,
            blobs_at_write,
            appended_since_sync: 0,
            wal_bytes: 0,
            background_sync,
            sync_at_switch,
            closed_unsynced,
        }
    }

    /// The last sequence number given to a write.
    pub fn last_sequence(&self) -> SequenceNumber {
        self.last_sequence
    }

    /// Records `seq`, above [`WriterState::last_sequence`], as given: an ingest took it for
    /// the keys of its files.
    pub fn set_last_sequence(&mut self, seq: SequenceNumber) {
        debug_assert!(seq > self.last_sequence);
        self.last_sequence = seq;
    }

    /// Fails if an earlier WAL failure stopped the write path.
    pub fn check_stopped(&self) -> Result<()> {
        match &self.stopped {
            Some(e) => Err(stopped_error(e)),
            None => Ok(()),
        }
    }

    /// Stops the write path on `cause`: every later write fails naming it, and no writer
    /// puts values in blob files before it queues (lock order: the writer lock, held by the
    /// caller, before the files').
    pub fn stop(&mut self, cause: &Error) {
        self.stopped = Some(cause.duplicate());
        self.blobs_at_write.lock().stop_writes();
    }

    /// Appends the WAL's held records to its file (`Options::manual_wal_flush`); a failure
    /// stops the write path, as a failed append does.
    pub fn flush_held(&mut self) -> Result<()> {
        self.check_stopped()?;
        if let Err(e) = self.wal.flush() {
            self.stop(&e);
            return Err(e);
        }
        Ok(())
    }

    /// True when a WAL has appends not yet synced: the current one, or one closed unsynced.
    pub fn wal_dirty(&self) -> bool {
        self.wal_dirty || !self.closed_unsynced.is_empty()
    }

    /// Syncs the WALs closed without a sync, oldest first, so that a sync of the current
    /// one makes every earlier write durable too.
    fn sync_closed(&mut self) -> Result<()> {
        if let Err(e) = self.closed_unsynced.sync_all() {
            self.stop(&e);
            return Err(e);
        }
        Ok(())
    }

    /// Syncs the WAL if it has unsynced appends (and first the blob files its records name,
    /// and the WALs closed without a sync).
    pub fn sync_wal(&mut self) -> Result<()> {
        if let Some(e) = &self.stopped {
            return Err(stopped_error(e));
        }
        if let Some(e) = self.background_sync.take_error() {
            self.stop(&e);
            return Err(e);
        }
        self.sync_closed()?;
        if self.wal_dirty {
            // Bound first: the files' guard must be gone before `stop` takes it again.
            let synced = self
                .blobs_at_write
                .lock()
                .sync()
                .and_then(|()| self.wal.sync());
            if let Err(e) = synced {
                self.stop(&e);
                return Err(e);
            }
            self.wal_dirty = false;
            self.appended_since_sync = 0;
        }
        Ok(())
    }

    /// Counts `bytes` appended to the WAL without a sync; past [`BACKGROUND_SYNC_BYTES`],
    /// asks the `strata-wal-sync` thread to sync it.
    fn note_unsynced_append(&mut self, bytes: usize) {
        self.appended_since_sync += bytes as u64;
        if self.sync_at_switch && self.appended_since_sync >= BACKGROUND_SYNC_BYTES {
            self.appended_since_sync = 0;
            if let Some(file) = self.wal.background_sync() {
                self.background_sync.request(file);
            }
        }
    }
}

fn stopped_error(cause: &Error) -> Error {
    Error::Unavailable(format!(
        "writes are stopped after an earlier failure to write the WAL or a value's blob file: \
         {cause}"
    ))
}

impl DbInner {
    pub(in crate::db) fn write(&self, batch: WriteBatch, options: &WriteOptions) -> Result<()> {
        self.check_open()?;
        if let Some(reason) = batch.invalid_reason() {
            return Err(Error::InvalidArgument(reason.to_string()));
        }
        self.check_batch_for_families(&batch)?;
        if batch.is_empty() && !batch.has_log_data() {
            return Ok(());
        }
        let mut request = self.request(batch, options);
        if !options.disable_wal {
            request.prewritten = self.prewrite_blobs(&request.batch)?;
        }
        handoff::commit(self, request)
    }

    /// Refuses a batch that merges into a family without a merge operator, or holds a range
    /// deletion whose begin is after its end in its family's key order, naming both.
    pub(in crate::db) fn check_batch_for_families(&self, batch: &WriteBatch) -> Result<()> {
        // As with merges, only a batch holding a range deletion looks at the families.
        let mut families = None;
        for (cf, begin, end) in batch.range_deletions() {
            let families = families.get_or_insert_with(|| self.families());
            // A family the database does not have is refused with the group.
            if let Some(cf) = families.get(&cf) {
                let order = &cf.sv.read().version.order;
                if order.lt(end, begin) {
                    return Err(Error::InvalidArgument(format!(
                        "delete_range refused: begin key '{}' is after end key '{}' in the \
                         order of column family '{}' ({})",
                        crate::util::printable(begin),
                        crate::util::printable(end),
                        cf.name(),
                        order.name()
                    )));
                }
            }
        }
        // Most batches hold no merge: the family set is only looked at for those that do.
        if !batch.has_merge() {
            return Ok(());
        }
        let families = self.families();
        for (cf, key) in batch.merges() {
            // A family the database does not have is refused with the group
            // (check_families).
            if let Some(cf) = families
                .get(&cf)
                .filter(|f| f.options.merge_operator.is_none())
            {
                return Err(Error::InvalidArgument(format!(
                    "merge of key '{}' refused: no merge operator is configured for \
                     column family '{}' (set merge_operator in its options)",
                    crate::util::printable(key),
                    cf.name()
                )));
            }
        }
        Ok(())
    }

    /// A request to write `batch`, with a slot of its own to wait on.
    pub(in crate::db) fn request(&self, batch: WriteBatch, options: &WriteOptions) -> Request {
        Request {
            batch,
            options: *options,
            slot: Arc::new(Slot::new()),
            prewritten: None,
        }
    }

    /// Writes `group` (WAL, then memtables) with the writer lock `w` held throughout.
    pub(in crate::db) fn commit_locked(
        &self,
        w: &mut Guard<'_, WriterState>,
        group: &mut [Request],
    ) -> Result<()> {
        handoff::commit_locked(self, w, group)
    }

    /// Waits until no group is inserting into the memtables. With the writer lock held, none
    /// can start until it is let go: the memtables then hold every write given a sequence
    /// number, and the published last sequence is the writer's.
    pub(in crate::db) fn wait_for_inserts(&self, _writer: &WriterState) {
        handoff::wait_for_inserts(self);
    }

    /// The first stage of a group's commit, under the writer lock: checks, stalls, memtable
    /// switches, sequence numbers and the WAL record. What [`DbInner::insert_group`] needs
    /// to finish it is returned.
    fn write_wal_stage(
        &self,
        w: &mut Guard<'_, WriterState>,
        group: &mut [Request],
    ) -> Result<WrittenGroup> {
        w.check_stopped()?;
        self.check_open()?;
        self.check_background()?;
        // Families are created and dropped under the writer lock: this set holds for the
        // whole group.
        let families = self.families();
        let multi_family = group.iter().any(|r| r.batch.has_families());
        if multi_family {
            check_families(group, &families)?;
        }
        let mut full: Vec<Arc<ColumnFamilyData>> = Vec::new();
        let mut reports = self.events.stall_reports();
        let stall = survey_families(&families, Some(&mut full), &mut |cf, decision| {
            if let Some(reports) = reports.as_deref_mut() {
                reports.note(cf, decision);
            }
        });
        drop(reports);
        self.throttle_writes(&families, stall)?;
        let reason = match full.is_empty() {
            false => FlushReason::WriteBufferFull,
            true if self.over_memory_budget(&families, &mut full) => {
                FlushReason::WriteBufferManager
            }
            true => FlushReason::WalFull,
        };
        self.families_holding_oldest_wal(w, &families, &mut full);
        if !full.is_empty() {
            self.switch_memtable(w, &families, &full, reason)?;
        }
        self.stall_for_memory_budget(&families);

        let count: u64 = group.iter().map(|r| r.batch.len() as u64).sum();
        let first_seq = w.last_sequence + 1;
        if first_seq + count > MAX_SEQUENCE {
            return Err(Error::InvalidArgument(
                "sequence numbers are exhausted".into(),
            ));
        }
        let use_wal = !group[0].options.disable_wal;
        if use_wal {
            let sync = group.iter().any(|r| r.options.sync);
            let separated = self.separate_group(
                &families,
                group.iter().map(|r| (&r.batch, r.prewritten.as_ref())),
                first_seq,
                count,
                sync,
            );
            let appended = separated.and_then(|separated| {
                self.append_to_wal(w, group, first_seq, count, sync, separated)
            });
            if let Err(e) = appended {
                w.stop(&e);
                return Err(e);
            }
            if sync {
                self.counters.add(Counter::WalSyncs, 1);
            }
        } else {
            self.wal.unpersisted.store(true, Ordering::Release);
        }

        w.last_sequence = first_seq + count - 1;
        Ok(WrittenGroup {
            families,
            first_seq,
            count,
        })
    }

    /// The second stage of a group's commit, with `inserting` held (and the writer lock
    /// perhaps already let go): inserts the group into the active memtables, which no switch
    /// can replace meanwhile (a switch waits for `inserting`), then publishes the group's
    /// last sequence number, making it visible to reads.
    fn insert_group(&self, group: &[Request], written: &WrittenGroup) {
        let families = &written.families;
        let mut seq = written.first_seq;
        let mut payload = 0;
        let default_mem = self.default_cf.sv.read().active.clone();
        // The memtable of the last family written, looked up again only when the family
        // changes: batches mostly write one family at a time.
        let mut current: (u32, Arc<MemTable>) = (0, default_mem.clone());
        for req in group.iter() {
            for entry in req.batch.iter().flatten() {
                if entry.cf != current.0 {
                    let mem = match families.get(&entry.cf) {
                        Some(cf) => cf.sv.read().active.clone(),
                        None => unreachable!("families were checked before the WAL write"),
                    };
                    current = (entry.cf, mem);
                }
                current.1.add(seq, entry.kind, entry.key, entry.value);
                seq += 1;
            }
            payload += req.batch.payload_len() as u64;
        }
        debug_assert_eq!(seq, written.first_seq + written.count);
        self.last_sequence.store(seq - 1, Ordering::Release);

        let c = &self.counters;
        c.add(Counter::WriteGroups, 1);
        c.add(Counter::Batches, group.len() as u64);
        c.add(Counter::KeysWritten, written.count);
        c.add(Counter::UserBytesWritten, payload);
    }

    fn append_to_wal(
        &self,
        w: &mut WriterState,
        group: &mut [Request],
        first_seq: SequenceNumber,
        count: u64,
        sync: bool,
        separated: Option<Vec<u8>>,
    ) -> Result<()> {
        if let Some(record) = separated {
            // Large values went to blob files: the record names them instead.
            w.wal.add_record(&record)?;
        } else if let [only] = group {
            // One batch: its buffer already has room for the header; no copy.
            let rep = only.batch.rep_mut();
            rep[..HEADER_LEN].copy_from_slice(&header_bytes(first_seq, count));
            w.wal.add_record(rep)?;
        } else {
            let mut record = std::mem::take(&mut w.record);
            record.clear();
            encode_header(&mut record, first_seq, count as u32);
            for req in group.iter() {
                record.extend_from_slice(req.batch.records());
            }
            let appended = w.wal.add_record(&record);
            w.record = record;
            appended?;
        }
        // What the WAL grew by (compressed under `wal_compression`): the WAL size limits and
        // the background sync's byte count go by the file's bytes.
        let appended = w.wal.last_record_len();
        w.wal_dirty = true;
        w.wal_bytes += appended as u64;
        if sync {
            // A background sync that failed may have taken the only report of lost bytes.
            if let Some(e) = w.background_sync.take_error() {
                return Err(e);
            }
            w.sync_closed()?;
            w.wal.sync()?;
            w.wal_dirty = false;
            w.appended_since_sync = 0;
        } else {
            w.note_unsynced_append(appended);
        }
        Ok(())
    }

    /// Fails if background work stopped on an error.
    pub(in crate::db) fn check_background(&self) -> Result<()> {
        if self.bg.failed.load(Ordering::Acquire) {
            if let Some(e) = &self.bg.state.lock().error {
                return Err(background_error(e));
            }
        }
        Ok(())
    }

    /// Waits, or stops, as `stall` (the decision of [`survey_families`], see `write/stall.rs`) says
    /// for the family that needs it most, counting each cause with its time.
    fn throttle_writes(&self, families: &Families, mut stall: stall::Stall) -> Result<()> {
        let decide = || {
            let mut reports = self.events.stall_reports();
            survey_families(families, None, &mut |cf, decision| {
                if let Some(reports) = reports.as_deref_mut() {
                    reports.note(cf, decision);
                }
            })
        };
        if stall.stop.is_some() {
            // Stopped: wait for background work, under the lock its progress is signalled on,
            // timing each cause while it holds.
            let mut stopped: Option<(StopCause, std::time::Instant)> = None;
            let mut bg = self.bg.state.lock();
            loop {
                // Decided again under the lock: a job that finished since the decision above
                // has already signalled, and waiting now would wait for the next one.
                stall = decide();
                if stopped.map(|(cause, _)| cause) != stall.stop {
                    if let Some((cause, since)) = stopped.take() {
                        self.count_stop(cause, since.elapsed());
                    }
                    stopped = stall.stop.map(|cause| (cause, std::time::Instant::now()));
                }
                if stopped.is_none() {
                    break;
                }
                if let Some(e) = &bg.error {
                    return Err(background_error(e));
                }
                bg.wait(&self.bg.cv);
            }
        }
        let c = &self.counters;
        if let Some(delay) = stall.l0_delay {
            std::thread::sleep(delay);
            c.add(Counter::L0Slowdowns, 1);
            c.add(Counter::L0SlowdownMicros, delay.as_micros() as u64);
        }
        if let Some(delay) = stall.pending_delay {
            std::thread::sleep(delay);
            c.add(Counter::PendingSlowdowns, 1);
            c.add(Counter::PendingSlowdownMicros, delay.as_micros() as u64);
        }
        Ok(())
    }

    /// Counts a stop that lasted `waited`.
    fn count_stop(&self, cause: StopCause, waited: std::time::Duration) {
        let (count, micros) = match cause {
            StopCause::L0Files => (Counter::L0Stops, Counter::L0StopMicros),
            StopCause::PendingBytes => (Counter::PendingStops, Counter::PendingStopMicros),
            StopCause::Memtables => (Counter::WriteStalls, Counter::StallMicros),
        };
        self.counters.add(count, 1);
        self.counters.add(micros, waited.as_micros() as u64);
    }

    pub(in crate::db) fn sync_wal(&self) -> Result<()> {
        self.check_open()?;
        let mut w = self.commit.writer.lock();
        let synced = w.wal_dirty();
        w.sync_wal()?;
        if synced {
            self.counters.add(Counter::WalSyncs, 1);
        }
        Ok(())
    }

    /// Appends the WAL records held under `Options::manual_wal_flush` to the WAL file
    /// (nothing to do without the option): every write acknowledged so far then survives
    /// the process, not yet the machine.
    pub(in crate::db) fn flush_wal(&self) -> Result<()> {
        self.check_open()?;
        self.commit.writer.lock().flush_held()
    }
}

/// The database's side of the handoff (`write/handoff.rs`): its locks, how a group is
/// taken from the queue, and the two stages.
impl GroupCommit for DbInner {
    type Error = Error;
    type Request = Request;
    type Queue<'a> = Guard<'a, WriteQueue>;
    type Writer<'a> = Guard<'a, WriterState>;
    type Inserting<'a> = Held<std::sync::MutexGuard<'a, ()>>;
    type Written = WrittenGroup;

    fn lock_queue(&self) -> Guard<'_, WriteQueue> {
        self.commit.queue.lock()
    }

    fn lock_writer(&self) -> Guard<'_, WriterState> {
        self.commit.writer.lock()
    }

    /// Takes `inserting`. It guards no data, so a panic while it was held leaves nothing to
    /// repair: a poisoned lock is taken as it is.
    fn lock_inserting(&self) -> Held<std::sync::MutexGuard<'_, ()>> {
        self.commit.inserting.lock_std_spinning(handoff::SPIN_FOR)
    }

    /// The requests at the queue's front, up to `max_write_group_bytes`, all with the
    /// first's `disable_wal`.
    fn take_group(&self, q: &mut WriteQueue) -> Vec<Request> {
        let mut group = Vec::new();
        let mut bytes = 0;
        let wal_mode = q.front().map(|r| r.options.disable_wal);
        while let Some(front) = q.front() {
            let len = front.batch.payload_len();
            let fits = group.is_empty()
                || (bytes + len <= self.options.max_write_group_bytes
                    && Some(front.options.disable_wal) == wal_mode);
            if !fits {
                break;
            }
            bytes += len;
            if let Some(req) = q.pop_front() {
                group.push(req);
            }
        }
        group
    }

    fn write_stage(
        &self,
        w: &mut Guard<'_, WriterState>,
        group: &mut [Request],
    ) -> Result<WrittenGroup> {
        self.write_wal_stage(w, group)
    }

    fn insert_stage(&self, group: &[Request], written: &WrittenGroup) {
        self.insert_group(group, written)
    }

    fn duplicate(error: &Error) -> Error {
        error.duplicate()
    }
}

/// Fails, naming the family, if a batch of the group writes to a family that does not exist
/// (dropped, or never created in this database): nothing of the group is written.
fn check_families(group: &[Request], families: &Families) -> Result<()> {
    for req in group.iter() {
        for cf in req.batch.families() {
            if !families.contains_key(cf) {
                return Err(Error::InvalidArgument(format!(
                    "write batch writes to column family id {cf}, which this database does not \
                     have (it was dropped, or the handle is of another database)"
                )));
            }
        }
    }
    Ok(())
}

fn header_bytes(seq: SequenceNumber, count: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&seq.to_le_bytes());
    h[8..].copy_from_slice(&(count as u32).to_le_bytes());
    h
}
