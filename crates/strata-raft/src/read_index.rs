//! Linearizable reads that share their read index: one quorum round for all the reads
//! waiting, not one per read.
//!
//! `Raft::ensure_linearizable` confirms leadership with a round of heartbeats to a quorum and
//! then waits until the state machine has applied up to the commit index it recorded. Called
//! once per read, concurrent reads each pay a round of RPCs to every follower. Here a read
//! joins the waiting list; one task takes the whole list, makes one `ensure_linearizable`
//! call, and gives its outcome to every read in the list, then takes the list that formed
//! meanwhile, and so on (what etcd does for its ReadIndex requests).
//!
//! Why this stays linearizable: a read is answered by a call that began after the read was
//! listed (the list is taken before the call starts, and a read listed later waits for the
//! next call). So the read index comes from a moment after the read began, and every write
//! acknowledged before the read began is at or below it, and applied before the read is
//! served.

use std::sync::{Arc, Mutex};

use openraft::error::{CheckIsLeaderError, ForwardToLeader, RaftError};
use openraft::BasicNode;
use tokio::sync::oneshot;

use crate::node::Raft;

/// Why a read could not be made linearizable here.
#[derive(Clone, Debug)]
pub enum ReadError {
    /// This node is not the leader; the leader, if known.
    Forward(ForwardToLeader<u64, BasicNode>),
    /// Leadership could not be confirmed (no quorum, shutting down).
    Unavailable(String),
}

type Outcome = Result<(), ReadError>;

#[derive(Default)]
struct Waiting {
    reads: Vec<oneshot::Sender<Outcome>>,
    /// A task is taking lists and confirming them.
    confirming: bool,
}

/// The read barrier of one node (cheap to clone).
#[derive(Clone)]
pub struct ReadIndex {
    raft: Raft,
    waiting: Arc<Mutex<Waiting>>,
}

impl ReadIndex {
    /// The read barrier of `raft`.
    pub fn new(raft: Raft) -> ReadIndex {
        ReadIndex {
            raft,
            waiting: Arc::new(Mutex::new(Waiting::default())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        match self.waiting.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Returns once a read of the local state machine is linearizable, or why it is not.
    pub async fn wait(&self) -> Outcome {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut w = self.lock();
            w.reads.push(tx);
            !std::mem::replace(&mut w.confirming, true)
        };
        if start {
            let me = self.clone();
            tokio::spawn(async move { me.confirm_lists().await });
        }
        rx.await
            .unwrap_or_else(|_| Err(ReadError::Unavailable("the node is shutting down".into())))
    }

    async fn confirm_lists(&self) {
        loop {
            let reads = {
                let mut w = self.lock();
                if w.reads.is_empty() {
                    w.confirming = false;
                    return;
                }
                std::mem::take(&mut w.reads)
            };
            let outcome = match self.raft.ensure_linearizable().await {
                Ok(_) => Ok(()),
                Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f))) => {
                    Err(ReadError::Forward(f))
                }
                Err(e) => Err(ReadError::Unavailable(e.to_string())),
            };
            for read in reads {
                let _ = read.send(outcome.clone());
            }
        }
    }
}
