//! The write path: group commit.
//!
//! Each writer appends a request to the queue. If no leader is active it becomes the leader;
//! otherwise it sleeps until the leader has written its batch, or hands it the lead. A leader
//! takes the requests at the front of the queue (up to `max_write_group_bytes`, all with the
//! same `disable_wal`), writes them as one WAL record under one header with consecutive
//! sequence numbers, calls fdatasync once if any of them asked for `sync`, inserts them into
//! the memtable, publishes the new last sequence, then passes the lead to the next request in
//! the queue and wakes its group with the shared result.
//!
//! A failed WAL append or sync stops the write path: the WAL may end in a partial record, so
//! every later write fails with the original cause, while reads go on. Nothing of the failed
//! group becomes visible.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::background::background_error;
use super::{DbInner, SuperVersion};
use crate::error::{Error, Result};
use crate::fs::{CountedFile, IoClass};
use crate::key::{SequenceNumber, MAX_SEQUENCE};
use crate::log::LogWriter;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::write_batch::{encode_header, WriteBatch, HEADER_LEN};

use crate::filename::wal_path;

enum SlotState {
    Waiting,
    Lead,
    Done(Result<()>),
}

/// Where a queued writer waits for its outcome.
struct Slot {
    state: Mutex<SlotState>,
    cv: Condvar,
}

impl Slot {
    fn set(&self, state: SlotState) {
        *self.state.lock() = state;
        self.cv.notify_one();
    }
}

struct Request {
    batch: WriteBatch,
    options: WriteOptions,
    slot: Arc<Slot>,
}

/// The writers waiting to be committed.
#[derive(Default)]
pub(crate) struct WriteQueue {
    pending: VecDeque<Request>,
    leader_active: bool,
}

/// What only the write leader touches.
pub(crate) struct WriterState {
    wal: LogWriter,
    /// True when the WAL has appends not yet synced.
    wal_dirty: bool,
    last_sequence: SequenceNumber,
    /// The group's WAL record, reused between groups.
    record: Vec<u8>,
    /// The error that stopped the write path, if one did.
    stopped: Option<Error>,
}

impl WriterState {
    pub fn new(wal: LogWriter, last_sequence: SequenceNumber) -> Self {
        WriterState {
            wal,
            wal_dirty: false,
            last_sequence,
            record: Vec::new(),
            stopped: None,
        }
    }

    /// Fails if an earlier WAL failure stopped the write path.
    pub fn check_stopped(&self) -> Result<()> {
        match &self.stopped {
            Some(e) => Err(stopped_error(e)),
            None => Ok(()),
        }
    }

    /// Syncs the WAL if it has unsynced appends.
    pub fn sync_wal(&mut self) -> Result<()> {
        if let Some(e) = &self.stopped {
            return Err(stopped_error(e));
        }
        if self.wal_dirty {
            if let Err(e) = self.wal.sync() {
                self.stopped = Some(e.duplicate());
                return Err(e);
            }
            self.wal_dirty = false;
        }
        Ok(())
    }
}

fn stopped_error(cause: &Error) -> Error {
    Error::Unavailable(format!(
        "writes are stopped after an earlier WAL failure: {cause}"
    ))
}

impl DbInner {
    pub(super) fn write(&self, batch: WriteBatch, options: &WriteOptions) -> Result<()> {
        self.check_open()?;
        if let Some(reason) = batch.invalid_reason() {
            return Err(Error::InvalidArgument(reason.to_string()));
        }
        if batch.is_empty() {
            return Ok(());
        }
        let slot = Arc::new(Slot {
            state: Mutex::new(SlotState::Waiting),
            cv: Condvar::new(),
        });
        let lead = {
            let mut q = self.queue.lock();
            q.pending.push_back(Request {
                batch,
                options: *options,
                slot: slot.clone(),
            });
            !std::mem::replace(&mut q.leader_active, true)
        };
        if !lead {
            let mut state = slot.state.lock();
            while matches!(*state, SlotState::Waiting) {
                slot.cv.wait(&mut state);
            }
            match std::mem::replace(&mut *state, SlotState::Waiting) {
                SlotState::Done(result) => return result,
                SlotState::Lead => {}
                SlotState::Waiting => unreachable!("loop exits only on a new state"),
            }
        }
        self.lead_group(&slot)
    }

    /// Runs one group commit as leader; `own` is the leader's slot, at the queue's front.
    fn lead_group(&self, own: &Arc<Slot>) -> Result<()> {
        let mut group = self.take_group();
        debug_assert!(Arc::ptr_eq(&group[0].slot, own));
        let result = self.commit_group(&mut group);
        {
            let mut q = self.queue.lock();
            match q.pending.front() {
                Some(next) => next.slot.set(SlotState::Lead),
                None => q.leader_active = false,
            }
        }
        for req in &group[1..] {
            let shared = match &result {
                Ok(()) => Ok(()),
                Err(e) => Err(e.duplicate()),
            };
            req.slot.set(SlotState::Done(shared));
        }
        result
    }

    fn take_group(&self) -> Vec<Request> {
        let mut q = self.queue.lock();
        let mut group = Vec::new();
        let mut bytes = 0;
        let wal_mode = q.pending.front().map(|r| r.options.disable_wal);
        while let Some(front) = q.pending.front() {
            let len = front.batch.payload_len();
            let fits = group.is_empty()
                || (bytes + len <= self.options.max_write_group_bytes
                    && Some(front.options.disable_wal) == wal_mode);
            if !fits {
                break;
            }
            bytes += len;
            if let Some(req) = q.pending.pop_front() {
                group.push(req);
            }
        }
        group
    }

    fn commit_group(&self, group: &mut [Request]) -> Result<()> {
        let mut w = self.writer.lock();
        w.check_stopped()?;
        self.check_open()?;
        self.check_background()?;
        self.throttle_writes()?;
        let mut mem = self.sv.read().active.clone();
        if mem.memory_usage() >= self.options.write_buffer_size {
            self.wait_for_flush_room()?;
            mem = self.switch_memtable(&mut w)?;
        }

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
            if let Err(e) = self.append_to_wal(&mut w, group, first_seq, count, sync) {
                w.stopped = Some(e.duplicate());
                return Err(e);
            }
            if sync {
                self.counters.wal_syncs.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            self.unpersisted.store(true, Ordering::Release);
        }

        let mut seq = first_seq;
        let mut payload = 0;
        for req in group.iter() {
            for entry in req.batch.iter().flatten() {
                mem.add(seq, entry.kind, entry.key, entry.value);
                seq += 1;
            }
            payload += req.batch.payload_len() as u64;
        }
        w.last_sequence = seq - 1;
        self.last_sequence.store(seq - 1, Ordering::Release);

        let c = &self.counters;
        c.write_groups.fetch_add(1, Ordering::Relaxed);
        c.batches.fetch_add(group.len() as u64, Ordering::Relaxed);
        c.keys_written.fetch_add(count, Ordering::Relaxed);
        c.user_bytes_written.fetch_add(payload, Ordering::Relaxed);
        Ok(())
    }

    fn append_to_wal(
        &self,
        w: &mut WriterState,
        group: &mut [Request],
        first_seq: SequenceNumber,
        count: u64,
        sync: bool,
    ) -> Result<()> {
        if let [only] = group {
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
        w.wal_dirty = true;
        if sync {
            w.wal.sync()?;
            w.wal_dirty = false;
        }
        Ok(())
    }

    /// Fails if background work stopped on an error.
    fn check_background(&self) -> Result<()> {
        if self.bg_failed.load(Ordering::Acquire) {
            if let Some(e) = &self.bg.lock().error {
                return Err(background_error(e));
            }
        }
        Ok(())
    }

    /// Slows writes down, or stops them, while compaction is behind. Causes, each counted
    /// with its time:
    ///
    /// - L0 at `level0_slowdown_writes_trigger` files: a delay per write group of 1 ms per
    ///   file at or above the trigger, at most 20 ms; at `level0_stop_writes_trigger`, writes
    ///   wait until compaction brings L0 below it.
    /// - Pending compaction bytes at the soft limit: a delay growing from 1 ms to 20 ms as
    ///   they approach the hard limit; at the hard limit, writes wait.
    ///
    /// Without background compaction nothing would catch up, so nothing waits.
    fn throttle_writes(&self) -> Result<()> {
        if self.options.disable_auto_compactions {
            return Ok(());
        }
        let o = &self.options;
        let c = &self.counters;
        let l0_files = || self.sv.read().version.levels[0].len();
        let pending = || self.pending_compaction_bytes.load(Ordering::Relaxed);
        let hard = o.hard_pending_compaction_bytes_limit;
        let soft = o.soft_pending_compaction_bytes_limit;
        let l0_stopped = || l0_files() >= o.level0_stop_writes_trigger;
        let pending_stopped = || hard > 0 && pending() >= hard;
        for (stopped, count, micros) in [
            (
                &l0_stopped as &dyn Fn() -> bool,
                &c.l0_stops,
                &c.l0_stop_micros,
            ),
            (&pending_stopped, &c.pending_stops, &c.pending_stop_micros),
        ] {
            if !stopped() {
                continue;
            }
            let started = std::time::Instant::now();
            let mut bg = self.bg.lock();
            while stopped() {
                if let Some(e) = &bg.error {
                    return Err(background_error(e));
                }
                self.bg_cv.wait(&mut bg);
            }
            count.fetch_add(1, Ordering::Relaxed);
            micros.fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
        }
        let l0 = l0_files();
        if l0 >= o.level0_slowdown_writes_trigger {
            let over = (l0 - o.level0_slowdown_writes_trigger + 1) as u64;
            let delay = std::time::Duration::from_millis(over.min(20));
            std::thread::sleep(delay);
            c.l0_slowdowns.fetch_add(1, Ordering::Relaxed);
            c.l0_slowdown_micros
                .fetch_add(delay.as_micros() as u64, Ordering::Relaxed);
        }
        let pending = pending();
        if soft > 0 && pending >= soft {
            // Without a hard limit above the soft one, the delay stays at its least.
            let share = if hard > soft {
                ((pending - soft) as f64 / (hard - soft) as f64).min(1.0)
            } else {
                0.0
            };
            let delay = std::time::Duration::from_micros(1000 + (19_000.0 * share) as u64);
            std::thread::sleep(delay);
            c.pending_slowdowns.fetch_add(1, Ordering::Relaxed);
            c.pending_slowdown_micros
                .fetch_add(delay.as_micros() as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Waits while the immutable memtables reach `max_write_buffer_number - 1`: the next
    /// switch would hold more memtables than allowed. Counted as a write stall.
    fn wait_for_flush_room(&self) -> Result<()> {
        let limit = self.options.max_write_buffer_number.saturating_sub(1);
        let mut started = None;
        let mut bg = self.bg.lock();
        while self.sv.read().immutables.len() >= limit.max(1) {
            if let Some(e) = &bg.error {
                return Err(background_error(e));
            }
            started.get_or_insert_with(std::time::Instant::now);
            self.bg_cv.wait(&mut bg);
        }
        if let Some(t) = started {
            let c = &self.counters;
            c.write_stalls.fetch_add(1, Ordering::Relaxed);
            c.stall_micros
                .fetch_add(t.elapsed().as_micros() as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Makes the active memtable immutable and starts a new one with a new WAL, then wakes
    /// the flush thread. The old WAL is synced first, so that every WAL but the newest is
    /// complete on disk.
    pub(super) fn switch_memtable(&self, w: &mut WriterState) -> Result<Arc<MemTable>> {
        let number = self.versions.lock().new_file_number();
        let path = wal_path(&self.path, number);
        let file = self.fs.create_writable(&path)?;
        self.fs.sync_dir(&self.path)?;
        w.sync_wal()?;
        w.wal = LogWriter::new(Box::new(CountedFile::new(
            file,
            self.io.clone(),
            IoClass::Wal,
        )));
        let fresh = Arc::new(MemTable::new(number, self.options.write_buffer_size));
        {
            let mut current = self.sv.write();
            let mut immutables = Vec::with_capacity(current.immutables.len() + 1);
            immutables.push(current.active.clone());
            immutables.extend(current.immutables.iter().cloned());
            *current = Arc::new(SuperVersion {
                active: fresh.clone(),
                immutables,
                version: current.version.clone(),
            });
        }
        self.counters
            .memtable_switches
            .fetch_add(1, Ordering::Relaxed);
        self.wake_background();
        Ok(fresh)
    }

    pub(super) fn sync_wal(&self) -> Result<()> {
        self.check_open()?;
        let mut w = self.writer.lock();
        let synced = w.wal_dirty;
        w.sync_wal()?;
        if synced {
            self.counters.wal_syncs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

fn header_bytes(seq: SequenceNumber, count: u64) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&seq.to_le_bytes());
    h[8..].copy_from_slice(&(count as u32).to_le_bytes());
    h
}
