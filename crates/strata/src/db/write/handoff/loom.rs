//! Model checks of the group commit handoff under loom, run by `scripts/loom.sh` (built with
//! `--cfg loom`; not part of CI, nor of a normal build). loom runs each model's threads in
//! every interleaving of their atomic operations, lock acquisitions and condition variable
//! waits, up to a bound on preemptions (`LOOM_MAX_PREEMPTIONS`, 2 unless set), and fails a
//! model whose threads all block (a lost wakeup, a lead never passed on).
//!
//! The handoff's code ([`commit`], [`commit_locked`], [`wait_for_inserts`], [`Slot`],
//! [`WriteQueue`]) runs as it is, its slot's primitives loom's (`sync`); [`ModelDb`] stands
//! in for the database: loom's locks for the queue, the writer lock and `inserting`, a
//! sequence counter for the WAL stage, and for the insert stage a memtable that records
//! `(writer, seq)` under a lock and a published last sequence. What the models check:
//! - the lead is held by one writer at a time: whoever takes a group is the writer at the
//!   queue's front (its own request), checked as it takes it;
//! - groups insert and publish in the order of their sequence numbers: each group finds
//!   the published sequence just below its first;
//! - a memtable switch (the writer lock, then [`wait_for_inserts`]) never overlaps a
//!   group's inserts, and finds every numbered write published;
//! - every write is answered exactly once, and a write answered `Ok` is in the memtable and
//!   published when its writer looks; a write answered with an error (its group's WAL
//!   stage failed) is nowhere in the memtable;
//! - after the threads join, the queue is empty and leaderless, and the memtable holds
//!   every successful write once, numbered 1, 2, ... in order;
//! - no interleaving deadlocks (loom fails a model whose threads all wait).
//!
//! Shown to fail with bugs planted by hand (each then reverted; the loom row of
//! `docs/reliability.md` says which model caught which):
//! - the lead passed on before `inserting` is taken: groups publish out of order (two and
//!   three writers), a switch or a conditional write finds a numbered write unpublished;
//! - the writer lock let go before `inserting` is taken, or [`wait_for_inserts`] doing
//!   nothing: the switch and conditional-write models fail;
//! - a slot set without the notify, a waiter that sleeps without checking the state under
//!   the lock, `leader_active` cleared in a second hold of the queue lock: loom reports a
//!   deadlock in every model with two writers or more.
//!
//! With the slot's `ready` flag stored and loaded `Relaxed` every model passes: the flag
//! only ends a spin early, the state is always read under the slot's lock.

use super::*;
use ::loom::sync::atomic::{AtomicU64, AtomicUsize};
use ::loom::sync::{Mutex as LoomMutex, MutexGuard as LoomGuard};
use ::loom::thread;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// Runs `f` under loom with at most 2 preemptions unless `LOOM_MAX_PREEMPTIONS` says
/// otherwise.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = ::loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(f);
}

fn lock<T>(m: &LoomMutex<T>) -> LoomGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[derive(Debug, PartialEq)]
struct WalFailed;

struct ModelRequest {
    writer: usize,
    /// The WAL stage of the group holding this request fails.
    fails: bool,
    thread: thread::ThreadId,
    slot: Arc<Slot<Result<(), WalFailed>>>,
}

impl Queued for ModelRequest {
    type Outcome = Result<(), WalFailed>;

    fn slot(&self) -> &Arc<Slot<Result<(), WalFailed>>> {
        &self.slot
    }
}

/// The sequence numbers a group was given.
struct Numbered {
    first: u64,
    count: u64,
}

/// The database as the handoff sees it (module doc).
#[derive(Default)]
struct ModelDb {
    queue: LoomMutex<WriteQueue<ModelRequest>>,
    /// The last sequence number given (the writer's state).
    writer: LoomMutex<u64>,
    inserting: LoomMutex<()>,
    /// The memtable's generation: a switch makes a new one.
    memtable: AtomicUsize,
    /// `(writer, seq)` of each insert, in the order made.
    inserted: LoomMutex<Vec<(usize, u64)>>,
    /// The last sequence number published to reads.
    published: AtomicU64,
}

impl GroupCommit for ModelDb {
    type Error = WalFailed;
    type Request = ModelRequest;
    type Queue<'a> = LoomGuard<'a, WriteQueue<ModelRequest>>;
    type Writer<'a> = LoomGuard<'a, u64>;
    type Inserting<'a> = LoomGuard<'a, ()>;
    type Written = Numbered;

    fn lock_queue(&self) -> Self::Queue<'_> {
        lock(&self.queue)
    }

    fn lock_writer(&self) -> Self::Writer<'_> {
        lock(&self.writer)
    }

    fn lock_inserting(&self) -> Self::Inserting<'_> {
        lock(&self.inserting)
    }

    /// Up to two requests: a group of one and a group of two both happen.
    fn take_group(&self, queue: &mut WriteQueue<ModelRequest>) -> Vec<ModelRequest> {
        let front = queue.front().expect("a leader's own request is queued");
        assert_eq!(
            front.thread,
            thread::current().id(),
            "a writer leads whose request is not at the queue's front (two leaders)"
        );
        let mut group = Vec::new();
        while group.len() < 2 {
            match queue.pop_front() {
                Some(request) => group.push(request),
                None => break,
            }
        }
        group
    }

    fn write_stage(
        &self,
        writer: &mut LoomGuard<'_, u64>,
        group: &mut [ModelRequest],
    ) -> Result<Numbered, WalFailed> {
        if group.iter().any(|r| r.fails) {
            return Err(WalFailed);
        }
        let first = **writer + 1;
        **writer += group.len() as u64;
        Ok(Numbered {
            first,
            count: group.len() as u64,
        })
    }

    fn insert_stage(&self, group: &[ModelRequest], written: &Numbered) {
        let memtable = self.memtable.load(Acquire);
        for (seq, request) in (written.first..).zip(group) {
            lock(&self.inserted).push((request.writer, seq));
        }
        assert_eq!(
            self.memtable.load(Acquire),
            memtable,
            "a memtable switch overlapped a group's inserts"
        );
        assert_eq!(
            self.published.load(Relaxed),
            written.first - 1,
            "groups publish out of sequence order"
        );
        self.published
            .store(written.first + written.count - 1, Release);
    }

    fn duplicate(_: &WalFailed) -> WalFailed {
        WalFailed
    }
}

impl ModelDb {
    /// Writer `writer`'s write through the queue, checked as its writer sees the answer.
    fn write(&self, writer: usize, fails: bool) -> Result<(), WalFailed> {
        let request = ModelRequest {
            writer,
            fails,
            thread: thread::current().id(),
            slot: Arc::new(Slot::new()),
        };
        let result = commit(self, request);
        let seq = lock(&self.inserted)
            .iter()
            .find(|&&(w, _)| w == writer)
            .map(|&(_, seq)| seq);
        match &result {
            Ok(()) => {
                let seq = seq.expect("a write answered Ok is in the memtable");
                assert!(
                    self.published.load(Acquire) >= seq,
                    "a write answered Ok is published"
                );
            }
            Err(WalFailed) => assert_eq!(seq, None, "a failed write is in the memtable"),
        }
        if fails {
            assert_eq!(result, Err(WalFailed), "a failing write answered Ok");
        }
        result
    }

    /// A memtable switch: under the writer lock, waits for the inserts, then replaces the
    /// memtable.
    fn switch_memtable(&self) -> Vec<usize> {
        let writer = lock(&self.writer);
        wait_for_inserts(self);
        assert_eq!(
            self.published.load(Acquire),
            *writer,
            "a switch finds a numbered write unpublished"
        );
        self.memtable.fetch_add(1, Release);
        drop(writer);
        Vec::new()
    }

    /// A conditional write: under the writer lock, waits for the inserts, then commits
    /// outside the queue.
    fn write_locked(&self, writer: usize) -> Vec<usize> {
        let mut w = lock(&self.writer);
        wait_for_inserts(self);
        assert_eq!(self.published.load(Acquire), *w);
        let mut group = [ModelRequest {
            writer,
            fails: false,
            thread: thread::current().id(),
            slot: Arc::new(Slot::new()),
        }];
        assert_eq!(commit_locked(self, &mut w, &mut group), Ok(()));
        vec![writer]
    }

    /// After the threads join: the queue empty and leaderless, each successful write in
    /// the memtable once, numbered in order from 1, and all of it published.
    fn check_end(&self, answered_ok: &[usize]) {
        assert!(lock(&self.queue).is_idle(), "the queue idle at the end");
        let inserted = lock(&self.inserted).clone();
        let mut writers: Vec<usize> = inserted.iter().map(|&(w, _)| w).collect();
        writers.sort_unstable();
        let mut expected = answered_ok.to_vec();
        expected.sort_unstable();
        assert_eq!(writers, expected, "each successful write inserted once");
        for (i, &(_, seq)) in inserted.iter().enumerate() {
            assert_eq!(seq, i as u64 + 1, "inserts in sequence order");
        }
        assert_eq!(self.published.load(Acquire), inserted.len() as u64);
        assert_eq!(*lock(&self.writer), inserted.len() as u64);
    }
}

/// Runs writers `0..writers` (the last on the model's main thread), writer `failing`'s
/// WAL stage failing if given, and `beside` (which returns the writers it committed) on a
/// thread of its own; checks the end state.
fn run_writers(writers: usize, failing: Option<usize>, beside: Option<fn(&ModelDb) -> Vec<usize>>) {
    let db = Arc::new(ModelDb::default());
    let threads: Vec<_> = (0..writers - 1)
        .map(|writer| {
            let db = db.clone();
            thread::spawn(move || db.write(writer, failing == Some(writer)).is_ok())
        })
        .collect();
    let other = beside.map(|f| {
        let db = db.clone();
        thread::spawn(move || f(&db))
    });
    let last = writers - 1;
    let last_ok = db.write(last, failing == Some(last)).is_ok();
    let mut oks: Vec<bool> = threads
        .into_iter()
        .map(|t| t.join().expect("a writer"))
        .collect();
    oks.push(last_ok);
    let mut answered_ok: Vec<usize> = (0..writers).filter(|&w| oks[w]).collect();
    if let Some(other) = other {
        answered_ok.extend(other.join().expect("the other thread"));
    }
    if let Some(failing) = failing {
        assert!(!oks[failing]);
    }
    db.check_end(&answered_ok);
}

#[test]
fn two_writers_commit_through_the_queue() {
    model(|| run_writers(2, None, None));
}

#[test]
fn three_writers_commit_through_the_queue() {
    model(|| run_writers(3, None, None));
}

#[test]
fn a_memtable_switch_waits_for_the_group_inserting() {
    model(|| run_writers(1, None, Some(ModelDb::switch_memtable)));
}

#[test]
fn a_memtable_switch_beside_two_writers() {
    model(|| run_writers(2, None, Some(ModelDb::switch_memtable)));
}

#[test]
fn a_failed_wal_stage_answers_its_whole_group_with_the_error() {
    model(|| run_writers(2, Some(0), None));
}

#[test]
fn a_conditional_write_beside_the_queue() {
    model(|| run_writers(2, None, Some(|db: &ModelDb| db.write_locked(9))));
}
