//! Group commit of client proposals: the requests that arrive while earlier ones are being
//! committed go into the log together, as one entry.
//!
//! openraft 0.9 hands each `client_write` to the log store as its own append and waits for
//! that append's sync before it takes the next one, on the leader and on every follower. One
//! entry per request therefore means one synced log write per request on every node, however
//! many clients wait. The proposer sits between the HTTP handlers and openraft: handlers queue
//! their request and wait for its answer; one task takes everything queued (up to
//! [`MAX_GROUP_REQUESTS`] requests or [`MAX_GROUP_BYTES`] of keys and values) and proposes it
//! as one [`Command::Group`] entry, keeping at most [`MAX_IN_FLIGHT`] such entries in flight
//! so that a group fills while the previous ones are written and replicated. A lone request
//! is proposed as itself.
//!
//! Invariants:
//!
//! - Every queued request gets exactly one answer: its own response out of the group's
//!   (`Response::each`, in order), or the error of the group's proposal, given to each member.
//! - A group is one log entry, so it is applied atomically, in log order, on every replica,
//!   each of its requests as if alone (its own client session, its own compare-and-set): the
//!   outcome is the one the same requests would have had as consecutive entries.
//! - A request is checked ([`Command::check`]) before it is queued; a group itself carries no
//!   client identity.

use std::sync::Arc;

use openraft::error::{ClientWriteError, ForwardToLeader, RaftError};
use openraft::BasicNode;
use tokio::sync::{mpsc, oneshot, Semaphore};

use crate::node::Raft;
use crate::types::{Command, Op, Request, Response};

/// Most requests in one group.
pub const MAX_GROUP_REQUESTS: usize = 256;
/// Most key and value bytes in one group (a single larger request goes alone).
pub const MAX_GROUP_BYTES: usize = 4 << 20;
/// Most groups proposed and not yet answered: one being written on the leader while the
/// previous one is replicated.
pub const MAX_IN_FLIGHT: usize = 2;

/// Why a proposal was not committed.
#[derive(Clone, Debug)]
pub enum ProposeError {
    /// This node is not the leader; the leader, if known.
    Forward(ForwardToLeader<u64, BasicNode>),
    /// openraft refused the request (e.g. a membership change in progress).
    Refused(String),
    /// The node cannot commit now (shutting down, storage failed).
    Unavailable(String),
}

type Answer = Result<(u64, Response), ProposeError>;

struct Queued {
    request: Request,
    reply: oneshot::Sender<Answer>,
}

/// The key and value bytes of a request, what bounds a group's size.
fn request_bytes(request: &Request) -> usize {
    let op_bytes = |op: &Op| match op {
        Op::Put { key, value } => key.len() + value.len(),
        Op::Delete { key } => key.len(),
        Op::DeleteRange { start, end } => start.len() + end.len(),
    };
    match &request.command {
        Command::Batch(ops) => ops.iter().map(op_bytes).sum(),
        Command::CompareAndSet { compare, ops } => {
            compare
                .iter()
                .map(|c| c.key.len() + c.value.as_ref().map_or(0, Vec::len))
                .sum::<usize>()
                + ops.iter().map(op_bytes).sum::<usize>()
        }
        Command::Group(requests) => requests.iter().map(request_bytes).sum(),
    }
}

/// The handle the HTTP handlers propose through (cheap to clone).
#[derive(Clone)]
pub struct Proposer {
    queue: mpsc::UnboundedSender<Queued>,
}

impl Proposer {
    /// Starts the proposing task on the current tokio runtime. It ends when every handle is
    /// dropped.
    pub fn start(raft: Raft) -> Proposer {
        let (queue, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(raft, rx));
        Proposer { queue }
    }

    /// Proposes `request` (already checked) and waits until it is committed and applied:
    /// the index of its entry and its response.
    pub async fn propose(&self, request: Request) -> Answer {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Queued { request, reply })
            .map_err(|_| ProposeError::Unavailable("the node is shutting down".into()))?;
        answer
            .await
            .map_err(|_| ProposeError::Unavailable("the node is shutting down".into()))?
    }
}

async fn run(raft: Raft, mut rx: mpsc::UnboundedReceiver<Queued>) {
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let mut carried: Option<Queued> = None;
    loop {
        // A slot first: requests arriving while every slot is busy join the next group.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let first = match carried.take() {
            Some(q) => q,
            None => match rx.recv().await {
                Some(q) => q,
                None => return,
            },
        };
        let mut bytes = request_bytes(&first.request);
        let mut group = vec![first];
        while group.len() < MAX_GROUP_REQUESTS {
            let Ok(next) = rx.try_recv() else { break };
            let size = request_bytes(&next.request);
            if bytes + size > MAX_GROUP_BYTES {
                carried = Some(next);
                break;
            }
            bytes += size;
            group.push(next);
        }
        let raft = raft.clone();
        tokio::spawn(async move {
            submit(&raft, group).await;
            drop(slot);
        });
    }
}

fn failure(e: RaftError<u64, ClientWriteError<u64, BasicNode>>) -> ProposeError {
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => ProposeError::Forward(f),
        RaftError::APIError(e) => ProposeError::Refused(e.to_string()),
        e => ProposeError::Unavailable(e.to_string()),
    }
}

async fn submit(raft: &Raft, mut group: Vec<Queued>) {
    if group.len() == 1 {
        let Some(q) = group.pop() else { return };
        let answer = raft
            .client_write(q.request)
            .await
            .map(|r| (r.log_id.index, r.data))
            .map_err(failure);
        let _ = q.reply.send(answer);
        return;
    }
    let (requests, replies): (Vec<Request>, Vec<_>) =
        group.into_iter().map(|q| (q.request, q.reply)).unzip();
    let count = requests.len();
    match raft
        .client_write(Request::new(Command::Group(requests)))
        .await
    {
        Ok(r) if r.data.each.len() == count => {
            let index = r.log_id.index;
            for (reply, response) in replies.into_iter().zip(r.data.each) {
                let _ = reply.send(Ok((index, response)));
            }
        }
        Ok(r) => {
            let e = ProposeError::Unavailable(format!(
                "a group of {count} requests was answered with {} responses",
                r.data.each.len()
            ));
            for reply in replies {
                let _ = reply.send(Err(e.clone()));
            }
        }
        Err(e) => {
            let e = failure(e);
            for reply in replies {
                let _ = reply.send(Err(e.clone()));
            }
        }
    }
}
