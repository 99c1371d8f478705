//! Calling the application's event listeners (`listener` has the public contract).
//!
//! - Every event is built only when listeners are set ([`Events::enabled`]): without them the
//!   write path and the jobs do no work for events beyond that one check.
//! - Each callback is called with no lock of the database held, in the thread that did the
//!   work, and a panic in it is caught and logged ([`DbInner::notify`]); the next listener
//!   is still called.
//! - Write-stall conditions are decided by the write path (`write/stall.rs`) for each write group,
//!   under the write lock, and again by the background threads after each job. Each decision
//!   is compared, per family, with the last condition reported, under one mutex
//!   ([`StallReports`]), so that each family's reports form a chain (a report's `previous` is
//!   the last one's `current`) in the order the decisions were made. Changes go through a
//!   channel to the `strata-events` thread, which calls the listeners: a writer that sees a
//!   stop waits under the write lock, and a callback made there could not even read the
//!   condition it reports before the stop ended.

use std::collections::HashMap;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use super::families::{survey_families, ColumnFamilyData};
use super::write::stall::{Stall, StopCause};
use super::DbInner;
use crate::listener::{EventListener, WriteStallCause, WriteStallCondition, WriteStallInfo};

/// The listeners of a database and what reporting stall changes needs.
pub(crate) struct Events {
    listeners: Vec<Arc<dyn EventListener>>,
    stalls: Mutex<StallReports>,
    /// The receiving end of the stall channel, until the events thread takes it.
    receiver: Mutex<Option<Receiver<WriteStallInfo>>>,
}

/// The stall condition last reported for each family, and the channel to the events thread
/// (`None` once the database closes).
pub(crate) struct StallReports {
    reported: HashMap<u32, (WriteStallCondition, Option<WriteStallCause>)>,
    sender: Option<Sender<WriteStallInfo>>,
}

impl Events {
    pub fn new(listeners: Vec<Arc<dyn EventListener>>) -> Events {
        let (sender, receiver) = channel();
        Events {
            listeners,
            stalls: Mutex::new(StallReports {
                reported: HashMap::new(),
                sender: Some(sender),
            }),
            receiver: Mutex::new(Some(receiver)),
        }
    }

    /// True when there are listeners to call.
    pub fn enabled(&self) -> bool {
        !self.listeners.is_empty()
    }

    /// The stall reports, locked, for a decision to be noted in; `None` without listeners.
    pub fn stall_reports(&self) -> Option<MutexGuard<'_, StallReports>> {
        self.enabled().then(|| self.stalls.lock())
    }

    /// The receiver of stall changes, for the events thread (once; `None` without listeners).
    pub fn take_stall_receiver(&self) -> Option<Receiver<WriteStallInfo>> {
        if !self.enabled() {
            return None;
        }
        self.receiver.lock().take()
    }

    /// Closes the stall channel: the events thread delivers what is queued and ends.
    pub fn close(&self) {
        self.stalls.lock().sender = None;
    }
}

impl StallReports {
    /// Notes `stall`, the decision for family `cf`; a change from the last one reported
    /// goes to the events thread.
    pub fn note(&mut self, cf: &ColumnFamilyData, stall: &Stall) {
        let now = condition_of(stall);
        let previous = self
            .reported
            .insert(cf.id(), now)
            .unwrap_or((WriteStallCondition::Normal, None));
        if previous == now {
            return;
        }
        if let Some(sender) = &self.sender {
            // The events thread ends only after the sender is dropped: a send cannot fail
            // while it is there.
            let _ = sender.send(WriteStallInfo {
                cf_name: cf.name().to_string(),
                previous: previous.0,
                current: now.0,
                cause: now.1,
            });
        }
    }
}

/// The condition a stall decision puts writes in, with its cause.
fn condition_of(stall: &Stall) -> (WriteStallCondition, Option<WriteStallCause>) {
    if let Some(cause) = stall.stop {
        let cause = match cause {
            StopCause::L0Files => WriteStallCause::L0FileCountLimit,
            StopCause::PendingBytes => WriteStallCause::PendingCompactionBytes,
            StopCause::Memtables => WriteStallCause::MemtableLimit,
        };
        return (WriteStallCondition::Stopped, Some(cause));
    }
    if stall.l0_delay.is_some() {
        return (
            WriteStallCondition::Delayed,
            Some(WriteStallCause::L0FileCountLimit),
        );
    }
    if stall.pending_delay.is_some() {
        return (
            WriteStallCondition::Delayed,
            Some(WriteStallCause::PendingCompactionBytes),
        );
    }
    (WriteStallCondition::Normal, None)
}

impl DbInner {
    /// Calls `call` on every listener, in order; `callback` names the method for the `LOG`
    /// line written when one panics. Call it with no lock of the database held.
    pub(super) fn notify(&self, callback: &str, call: impl Fn(&dyn EventListener)) {
        for listener in &self.events.listeners {
            let called =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call(listener.as_ref())));
            if let Err(panic) = called {
                self.info_log.error(format_args!(
                    "event listener panicked in {callback}: {}",
                    crate::util::panic_message(&*panic)
                ));
            }
        }
    }

    /// Decides every family's stall condition now and reports the changes (after background
    /// work that may have cleared a cause, when no write may come to see it).
    pub(super) fn note_stall_conditions(&self) {
        if let Some(mut reports) = self.events.stall_reports() {
            let families = self.families();
            survey_families(&families, None, &mut |cf, decision| {
                reports.note(cf, decision)
            });
        }
    }

    /// The events thread: calls the listeners for each stall change until the database
    /// closes the channel.
    pub(super) fn deliver_stall_changes(&self, changes: Receiver<WriteStallInfo>) {
        for info in changes {
            self.notify("on_stall_conditions_changed", |l| {
                l.on_stall_conditions_changed(&info)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn conditions_of_stall_decisions() {
        use WriteStallCause::*;
        use WriteStallCondition::*;
        let ms = Some(Duration::from_millis(1));
        let cases = [
            (Stall::default(), (Normal, None)),
            (
                Stall {
                    l0_delay: ms,
                    pending_delay: ms,
                    ..Stall::default()
                },
                (Delayed, Some(L0FileCountLimit)),
            ),
            (
                Stall {
                    pending_delay: ms,
                    ..Stall::default()
                },
                (Delayed, Some(PendingCompactionBytes)),
            ),
            (
                Stall {
                    stop: Some(StopCause::Memtables),
                    ..Stall::default()
                },
                (Stopped, Some(MemtableLimit)),
            ),
            (
                Stall {
                    stop: Some(StopCause::L0Files),
                    l0_delay: ms,
                    ..Stall::default()
                },
                (Stopped, Some(L0FileCountLimit)),
            ),
            (
                Stall {
                    stop: Some(StopCause::PendingBytes),
                    ..Stall::default()
                },
                (Stopped, Some(PendingCompactionBytes)),
            ),
        ];
        for (stall, expected) in cases {
            assert_eq!(condition_of(&stall), expected, "{stall}");
        }
    }
}
