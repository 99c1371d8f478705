//! Background work: one thread flushes memtables, `max_background_jobs - 1` threads (at
//! least one) compact, and manual compactions take the tree for themselves.
//!
//! All of it is coordinated under one mutex ([`BgState`]) and its condition variable:
//!
//! - The flush thread waits for an immutable memtable and flushes the oldest. Flushes never
//!   wait for compactions: they free the memory writers may be waiting for.
//! - A compaction thread picks a task the picker allows beside the running ones (no shared
//!   file, no overlapping output in the same level; universal runs one at a time), records
//!   it in [`Busy`], runs it without the lock, and removes it.
//! - A manual compaction announces itself (background threads then start nothing new),
//!   waits until no compaction runs, and runs in the caller's thread.
//! - A compaction skipped for lack of disk space is retried after a second, or sooner when a
//!   flush or compaction changes the tree.
//! - The first background error stops all background work; writes then fail with it. A
//!   panic in a flush or a compaction (a merge operator's, say) is such an error: caught,
//!   so the thread lives on and nothing waits for work it would never finish.
//! - With event listeners, a thread of their own (`strata-events`) delivers write-stall
//!   changes (see `events`); each job's other events are called from its own thread.
//! - Closing cancels running compactions (as RocksDB does): their outputs are deleted and
//!   their inputs stay, so close does not wait for a long merge.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::compact::Ran;
use super::DbInner;
use crate::compaction::picker::Busy;
use crate::error::{Error, Result};
use crate::listener::{BackgroundErrorInfo, BackgroundErrorReason};

/// How often the compaction thread looks for tables that aged past
/// `periodic_compaction_seconds` or `table_ttl_seconds` when nothing else wakes it.
const AGE_CHECK: Duration = Duration::from_secs(10);

/// How long a compaction skipped for lack of space waits before it is tried again.
const SPACE_RETRY: Duration = Duration::from_secs(1);

/// The background threads' shared state.
#[derive(Default)]
pub(crate) struct BgState {
    pub shutdown: bool,
    /// True while the flush thread writes a memtable.
    pub flushing: bool,
    /// Flush jobs finished (successful or not), their event callbacks included.
    pub flushes_finished: u64,
    /// Compactions running, background and manual.
    pub compactions_running: usize,
    /// Files and output ranges of the running compactions, per column family.
    pub busy: HashMap<u32, Busy>,
    /// Manual compactions running or waiting to run.
    pub manual: usize,
    /// Set when a compaction was skipped for lack of disk space: when to try again.
    pub space_retry_at: Option<Instant>,
    /// The error that stopped background work, if one did.
    pub error: Option<Error>,
    /// Compaction threads that may pick work (from `max_background_jobs`, changeable
    /// online): threads numbered at or above it wait.
    pub compaction_threads: usize,
    /// Compaction threads started (never fewer than `compaction_threads` once started).
    pub compaction_threads_started: usize,
}

/// Starts the flush thread and the compaction threads of `inner`.
pub(super) fn spawn(inner: &Arc<DbInner>) -> Result<Vec<JoinHandle<()>>> {
    let mut handles = Vec::new();
    let start = |name: String, job: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name)
            .spawn(job)
            .map_err(|e| Error::io("start a background thread of", &inner.path, e))
    };
    let db = inner.clone();
    handles.push(start(
        "strata-flush".into(),
        Box::new(move || db.flush_loop()),
    )?);
    let threads = inner.options.compaction_threads();
    handles.extend(spawn_compaction_threads(inner, threads)?);
    let db = inner.clone();
    handles.push(start(
        "strata-wal-sync".into(),
        Box::new(move || db.wal.sync.run()),
    )?);
    if let Some(changes) = inner.events.take_stall_receiver() {
        let db = inner.clone();
        handles.push(start(
            "strata-events".into(),
            Box::new(move || db.deliver_stall_changes(changes)),
        )?);
    }
    Ok(handles)
}

/// Lets `threads` compaction threads pick work, starting those not started yet; returns
/// the handles of the threads started.
pub(super) fn spawn_compaction_threads(
    inner: &Arc<DbInner>,
    threads: usize,
) -> Result<Vec<JoinHandle<()>>> {
    let mut handles = Vec::new();
    let mut bg = inner.bg.state.lock();
    bg.compaction_threads = threads;
    while bg.compaction_threads_started < threads {
        let index = bg.compaction_threads_started;
        let db = inner.clone();
        let handle = std::thread::Builder::new()
            .name(format!("strata-compact-{index}"))
            .spawn(move || db.compaction_loop(index))
            .map_err(|e| Error::io("start a background thread of", &inner.path, e))?;
        handles.push(handle);
        bg.compaction_threads_started += 1;
    }
    inner.bg.cv.notify_all();
    Ok(handles)
}

/// Holds the tree for a manual compaction; dropping it lets background compactions go on.
pub(super) struct ManualCompaction<'a> {
    db: &'a DbInner,
}

impl Drop for ManualCompaction<'_> {
    fn drop(&mut self) {
        let mut bg = self.db.bg.state.lock();
        bg.compactions_running -= 1;
        bg.manual -= 1;
        self.db.bg.cv.notify_all();
    }
}

impl DbInner {
    fn flush_loop(&self) {
        loop {
            let cf = {
                let mut bg = self.bg.state.lock();
                loop {
                    if bg.shutdown {
                        return;
                    }
                    if bg.error.is_none() {
                        if let Some(cf) = self.family_to_flush() {
                            bg.flushing = true;
                            break cf;
                        }
                    }
                    bg.wait(&self.bg.cv);
                }
            };
            let result = catch_panic("flush", || match self.options.atomic_flush {
                true => self.flush_all_atomically(),
                false => self.flush_oldest_immutable(&cf),
            });
            let mut bg = self.bg.state.lock();
            bg.flushing = false;
            bg.flushes_finished += 1;
            // The tree changed: a compaction skipped for space may fit now.
            bg.space_retry_at = None;
            let failed = match result {
                Ok(()) => None,
                Err(e) => self.stop_background(&mut bg, "flush", e),
            };
            self.bg.cv.notify_all();
            drop(bg);
            self.after_job(BackgroundErrorReason::Flush, failed);
        }
    }

    /// The loop of compaction thread `index`, which picks work only while `index` is below
    /// the threads `max_background_jobs` allows now.
    fn compaction_loop(&self, index: usize) {
        loop {
            let task = {
                let mut bg = self.bg.state.lock();
                loop {
                    if bg.shutdown {
                        return;
                    }
                    let may_start =
                        bg.error.is_none() && bg.manual == 0 && index < bg.compaction_threads;
                    if may_start {
                        if let Some(at) = bg.space_retry_at.filter(|&t| t > Instant::now()) {
                            bg.wait_until(&self.bg.cv, at);
                            continue;
                        }
                        if let Some((cf, task)) = self.pick_compaction(&bg.busy) {
                            bg.busy.entry(cf.id()).or_default().add(&task);
                            bg.compactions_running += 1;
                            break (cf, task);
                        }
                        if self.picks_by_age() {
                            // Tables age with nothing else happening: look again later.
                            bg.wait_until(&self.bg.cv, Instant::now() + AGE_CHECK);
                            continue;
                        }
                    }
                    bg.wait(&self.bg.cv);
                }
            };
            let (cf, task) = task;
            let result = catch_panic("compaction", || self.run_compaction(&cf, &task));
            let mut bg = self.bg.state.lock();
            if let Some(busy) = bg.busy.get_mut(&cf.id()) {
                busy.remove(&task);
            }
            bg.compactions_running -= 1;
            let failed = match result {
                Ok(Ran::Done) => {
                    bg.space_retry_at = None;
                    None
                }
                Ok(Ran::SkippedForSpace) => {
                    bg.space_retry_at = Some(Instant::now() + SPACE_RETRY);
                    None
                }
                // Cancelled by close: nothing was installed, the inputs stay.
                Err(_) if self.bg.shutting_down.load(Ordering::Acquire) => None,
                Err(e) => self.stop_background(&mut bg, "compaction", e),
            };
            self.bg.cv.notify_all();
            drop(bg);
            self.after_job(BackgroundErrorReason::Compaction, failed);
        }
    }

    /// Records the error that stops background work; returns a copy for the listeners, if
    /// there are any.
    fn stop_background(&self, bg: &mut BgState, what: &str, e: Error) -> Option<Error> {
        self.info_log
            .error(format_args!("{what} failed, background work stopped: {e}"));
        let report = self.events.enabled().then(|| e.duplicate());
        bg.error = Some(e);
        self.bg.failed.store(true, Ordering::Release);
        report
    }

    /// The events of a background job's end, with no lock held: the error that stopped
    /// background work, if it failed, and the stall conditions it may have changed.
    fn after_job(&self, job: BackgroundErrorReason, failed: Option<Error>) {
        if !self.events.enabled() {
            return;
        }
        if let Some(error) = failed {
            self.report_background_error(job, error, true);
        }
        self.note_stall_conditions();
    }

    /// Tells the listeners that a `job` failed with `error`.
    pub(super) fn report_background_error(
        &self,
        job: BackgroundErrorReason,
        error: Error,
        writes_stopped: bool,
    ) {
        let info = BackgroundErrorInfo {
            reason: job,
            error,
            writes_stopped,
        };
        self.notify("on_background_error", |l| l.on_background_error(&info));
    }

    /// Waits until no compaction runs and keeps background compactions from starting until
    /// the returned guard is dropped.
    pub(super) fn begin_manual_compaction(&self) -> Result<ManualCompaction<'_>> {
        let mut bg = self.bg.state.lock();
        if let Some(e) = &bg.error {
            return Err(background_error(e));
        }
        bg.manual += 1;
        while bg.compactions_running > 0 {
            bg.wait(&self.bg.cv);
        }
        bg.compactions_running += 1;
        Ok(ManualCompaction { db: self })
    }

    /// Waits until no flush is pending or running, no compaction runs and the picker finds
    /// nothing to do (or only what does not fit on the disk now).
    pub(super) fn wait_for_compactions(&self) -> Result<()> {
        let mut bg = self.bg.state.lock();
        loop {
            if let Some(e) = &bg.error {
                return Err(background_error(e));
            }
            let picked = || self.pick_compaction(&bg.busy).is_some();
            let idle = !bg.flushing
                && bg.compactions_running == 0
                && self.family_to_flush().is_none()
                && (bg.space_retry_at.is_some() || !picked());
            if idle {
                return Ok(());
            }
            // Work found by age (a clock moved) has woken no one yet.
            self.bg.cv.notify_all();
            bg.wait(&self.bg.cv);
        }
    }

    /// Wakes the background threads.
    pub(super) fn wake_background(&self) {
        let _bg = self.bg.state.lock();
        self.bg.cv.notify_all();
    }
}

/// Runs a background job, a panic in it turned into an error naming `what`: the thread must
/// live on to mark its job finished, or whoever waits for the job would wait forever.
fn catch_panic<T>(what: &str, job: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).unwrap_or_else(|panic| {
        Err(Error::Unavailable(format!(
            "a background {what} panicked: {}",
            crate::util::panic_message(&*panic)
        )))
    })
}

/// The error a write or flush reports once background work has stopped.
pub(super) fn background_error(cause: &Error) -> Error {
    Error::Unavailable(format!(
        "background work stopped after an error; writes are refused: {cause}"
    ))
}
