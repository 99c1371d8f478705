//! Group commit's handoff: how writers queue, how one of them becomes the leader, how the
//! lead passes on while a group inserts, and how a waiting writer learns its outcome. What
//! a group does in its two stages (the WAL record, the memtable inserts) is the write
//! path's ([`GroupCommit`], implemented in `write/group.rs`); the order in which locks are
//! taken and let go around those stages is this module's.
//!
//! A writer pushes its request, with a [`Slot`] of its own, onto the [`WriteQueue`]. If no
//! leader is active it leads; otherwise it waits on its slot until it is told `Done` (its
//! group was committed by another leader) or `Lead`. A leader takes a group from the
//! queue's front (its own request first), takes the writer lock and runs the WAL stage;
//! then it takes `inserting`, lets go of the writer lock, passes the lead to the first
//! request still queued (or marks the queue leaderless), runs the insert stage, lets go of
//! `inserting`, and sets every other slot of its group `Done` with the shared result.
//!
//! Invariants (checked under loom by the `loom` test module, `scripts/loom.sh`):
//! - At most one leader: the lead is given only under the queue lock, to the queue's
//!   front, or taken by a writer that found `leader_active` false and set it under the same
//!   lock; a leader gives it up in [`pass_lead`] under that lock, handing it on or clearing
//!   `leader_active` in one step (cleared in a step of its own, a writer queued in between
//!   would wait for a leader that never comes).
//! - Groups insert, and publish their sequence numbers, in the order they reached the WAL:
//!   a group takes `inserting` before it lets go of the writer lock, and the next group
//!   can only reach `inserting` through the writer lock. For the same reason nothing
//!   replaces a memtable a group is inserting into: whoever holds the writer lock and
//!   takes `inserting` ([`wait_for_inserts`]) finds no insert in flight, and none can start
//!   until it lets go of the writer lock.
//! - Every request is answered exactly once: it is in exactly one group (taken from the
//!   queue under its lock), its writer either led that group or is set `Done` by the
//!   group's leader after the insert stage, so a write that returns is in the memtables
//!   and published.
//! - No lost wakeup: a slot's state is written under its lock, and the condition variable
//!   notified under it; the waiter checks the state under the lock before each sleep.
//!   `ready` lets a spinning waiter see the change without the lock; it is a hint only (the
//!   state is always read under the lock).
//!
//! A waiting writer first spins, for about as long as a small group commit takes, and only
//! then sleeps on its slot's condition variable: putting a thread to sleep and waking it
//! costs about a group commit again on each side (with two writers taking turns as leader,
//! sleeping at once halved the throughput of one writer alone). It never yields its core: on
//! a machine with more runnable threads than cores, a yield hands the core to another
//! process for the rest of a time slice, milliseconds, and the writer comes back long after
//! its group was done (on a busy machine, Linkbench's writers that reached the yields spent
//! 2-3 ms there on average, which made its p99.9). A sleeper runs again as soon as it is
//! woken and a core is free. For the same reason `inserting`, which the next group's leader
//! may wait for while this one inserts, is a lock that spins and then sleeps without
//! yielding (parking_lot's yields in between). It spins as long as a waiting writer does
//! (tried for 20 us, `lock_order.rs`): an insert holds it for a microsecond or two, and
//! when the WAL stage costs no system call (`manual_wal_flush`) the next leader reaches it
//! almost at once. With the standard library's short spin alone, two writers slept and
//! woke at almost every write and ran at a sixth of one writer's rate.
//!
//! The slot's lock, condition variable and flag, and the spin, come from [`sync`], loom's
//! under `--cfg loom`; the queue's, the writer's and `inserting`'s locks are the
//! implementation's ([`GroupCommit`]), loom's in the models.

use std::collections::VecDeque;
use std::ops::DerefMut;
use std::sync::Arc;

use self::sync::{AtomicBool, AtomicOrdering, Condvar, Mutex};

/// A slot's state.
pub(in crate::db) enum SlotState<T> {
    /// Nothing to do yet.
    Waiting,
    /// The writer leads the next group.
    Lead,
    /// Another leader committed the writer's request, with this outcome.
    Done(T),
}

/// Where a queued writer waits for its outcome.
pub(in crate::db) struct Slot<T> {
    state: Mutex<SlotState<T>>,
    /// True once `state` is no longer `Waiting`: read without the lock while spinning.
    ready: AtomicBool,
    cv: Condvar,
}

impl<T> Slot<T> {
    pub(in crate::db) fn new() -> Slot<T> {
        Slot {
            state: Mutex::new(SlotState::Waiting),
            ready: AtomicBool::new(false),
            cv: Condvar::new(),
        }
    }

    /// Gives the waiter `state`.
    pub(in crate::db) fn set(&self, state: SlotState<T>) {
        let mut guard = self.state.lock();
        *guard = state;
        self.ready.store(true, AtomicOrdering::Release);
        // Under the lock: a waiter that found `ready` false is either before its own check
        // under this lock, or already parked.
        self.cv.notify_one();
    }

    /// Waits for a state other than `Waiting` and takes it, leaving `Waiting` behind.
    pub(in crate::db) fn wait(&self) -> SlotState<T> {
        if !self.ready.load(AtomicOrdering::Acquire) {
            sync::spin_until(|| self.ready.load(AtomicOrdering::Acquire));
        }
        let mut state = self.state.lock();
        while matches!(*state, SlotState::Waiting) {
            state = self.cv.wait(state);
        }
        self.ready.store(false, AtomicOrdering::Relaxed);
        std::mem::replace(&mut *state, SlotState::Waiting)
    }
}

/// A request in the queue: what it asks is the implementation's, the slot its writer waits
/// on is the handoff's.
pub(in crate::db) trait Queued {
    /// What its writer is told.
    type Outcome;

    fn slot(&self) -> &Arc<Slot<Self::Outcome>>;
}

/// The writers waiting to be committed.
pub(in crate::db) struct WriteQueue<R> {
    pending: VecDeque<R>,
    leader_active: bool,
}

impl<R> Default for WriteQueue<R> {
    fn default() -> Self {
        WriteQueue {
            pending: VecDeque::new(),
            leader_active: false,
        }
    }
}

impl<R> WriteQueue<R> {
    /// The request a group would take next.
    pub(in crate::db) fn front(&self) -> Option<&R> {
        self.pending.front()
    }

    /// Takes the request at the front into a group.
    pub(in crate::db) fn pop_front(&mut self) -> Option<R> {
        self.pending.pop_front()
    }

    /// True when no request waits and no leader is active (every write answered).
    #[cfg(all(test, loom))]
    pub(in crate::db) fn is_idle(&self) -> bool {
        self.pending.is_empty() && !self.leader_active
    }
}

/// A write path that commits through the handoff: its locks and its two stages.
pub(in crate::db) trait GroupCommit {
    type Error;
    type Request: Queued<Outcome = Result<(), Self::Error>>;
    /// The queue's guard.
    type Queue<'a>: DerefMut<Target = WriteQueue<Self::Request>>
    where
        Self: 'a;
    /// The writer lock's guard: the WAL stage, memtable switches and whatever must see
    /// every write numbered run under it.
    type Writer<'a>
    where
        Self: 'a;
    /// `inserting`'s guard: held by a group while it inserts.
    type Inserting<'a>
    where
        Self: 'a;
    /// What the WAL stage hands the insert stage.
    type Written;

    fn lock_queue(&self) -> Self::Queue<'_>;
    fn lock_writer(&self) -> Self::Writer<'_>;
    fn lock_inserting(&self) -> Self::Inserting<'_>;
    /// Takes a group from the queue's front; the front request (the leader's) is always
    /// taken.
    fn take_group(&self, queue: &mut WriteQueue<Self::Request>) -> Vec<Self::Request>;
    /// The first stage, under the writer lock: sequence numbers and the WAL record.
    fn write_stage(
        &self,
        writer: &mut Self::Writer<'_>,
        group: &mut [Self::Request],
    ) -> Result<Self::Written, Self::Error>;
    /// The second stage, under `inserting` (and the writer lock perhaps let go): the
    /// memtable inserts, then the group's sequence numbers published.
    fn insert_stage(&self, group: &[Self::Request], written: &Self::Written);
    /// `error` again, for another writer of the group.
    fn duplicate(error: &Self::Error) -> Self::Error;
}

/// Commits `request` through the queue: as part of a group another writer leads, or
/// leading one.
pub(in crate::db) fn commit<C: GroupCommit>(c: &C, request: C::Request) -> Result<(), C::Error> {
    let slot = request.slot().clone();
    let lead = {
        let mut q = c.lock_queue();
        q.pending.push_back(request);
        !std::mem::replace(&mut q.leader_active, true)
    };
    if !lead {
        match slot.wait() {
            SlotState::Done(result) => return result,
            SlotState::Lead => {}
            SlotState::Waiting => unreachable!("wait returns only a new state"),
        }
    }
    lead_group(c, &slot)
}

/// Runs one group commit as leader; `own` is the leader's slot, at the queue's front.
fn lead_group<C: GroupCommit>(
    c: &C,
    own: &Arc<Slot<Result<(), C::Error>>>,
) -> Result<(), C::Error> {
    let mut group = c.take_group(&mut c.lock_queue());
    debug_assert!(Arc::ptr_eq(group[0].slot(), own));
    let result = {
        let mut w = c.lock_writer();
        match c.write_stage(&mut w, &mut group) {
            Ok(written) => {
                // Taken before the writer lock is let go: groups insert, and publish their
                // sequence numbers, in the order they reached the WAL.
                let inserting = c.lock_inserting();
                drop(w);
                // The next group writes its WAL record while this one inserts.
                pass_lead(c);
                c.insert_stage(&group, &written);
                drop(inserting);
                Ok(())
            }
            Err(e) => {
                drop(w);
                pass_lead(c);
                Err(e)
            }
        }
    };
    for req in &group[1..] {
        let shared = match &result {
            Ok(()) => Ok(()),
            Err(e) => Err(C::duplicate(e)),
        };
        req.slot().set(SlotState::Done(shared));
    }
    result
}

/// Hands the lead to the first writer still queued, if any, or leaves the queue leaderless:
/// in one step under the queue lock, so a writer that queues meanwhile either is found
/// here or finds no leader and leads.
fn pass_lead<C: GroupCommit>(c: &C) {
    let mut q = c.lock_queue();
    match q.pending.front() {
        Some(next) => next.slot().set(SlotState::Lead),
        None => q.leader_active = false,
    }
}

/// Commits `group` (WAL, then memtables) with the writer lock `w` held throughout, outside
/// the queue.
pub(in crate::db) fn commit_locked<C: GroupCommit>(
    c: &C,
    w: &mut C::Writer<'_>,
    group: &mut [C::Request],
) -> Result<(), C::Error> {
    let written = c.write_stage(w, group)?;
    let _inserting = c.lock_inserting();
    c.insert_stage(group, &written);
    Ok(())
}

/// Waits until no group is inserting into the memtables. With the writer lock held (the
/// caller's), none can start until it is let go: the memtables then hold every write given
/// a sequence number, and the published last sequence is the writer's.
pub(in crate::db) fn wait_for_inserts<C: GroupCommit>(c: &C) {
    drop(c.lock_inserting());
}

#[cfg(all(test, loom))]
mod loom;
mod sync;
pub(in crate::db) use sync::SPIN_FOR;
