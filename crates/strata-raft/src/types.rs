//! The type configuration given to openraft, and the commands of the replicated keyspace.
//!
//! A [`Request`] is one client proposal: a [`Command`] plus, optionally, the client's id and
//! request number. The state machine remembers the last request number (and its response) of
//! each client, so a request retried after a leader change, which may already be in the log,
//! applies once: a repeat returns the remembered response instead of applying again.

use std::fmt;

use serde::{Deserialize, Serialize};

openraft::declare_raft_types!(
    /// openraft's types for Strata: u64 node ids, nodes addressed by `host:port`, snapshots
    /// in files (streamed in chunks, never whole in memory).
    pub TypeConfig:
        D = Request,
        R = Response,
        NodeId = u64,
        Node = openraft::BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = tokio::fs::File,
        AsyncRuntime = openraft::TokioRuntime,
);

/// One write to the keyspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// Set `key` to `value`.
    Put {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
    /// Remove `key`.
    Delete {
        /// The key.
        key: Vec<u8>,
    },
    /// Remove every key in `[start, end)`.
    DeleteRange {
        /// First key removed.
        start: Vec<u8>,
        /// First key kept.
        end: Vec<u8>,
    },
}

/// A condition of a compare-and-set: `key` holds `value`, or is absent when `value` is `None`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compare {
    /// The key compared.
    pub key: Vec<u8>,
    /// The value it must hold; `None`: it must be absent.
    pub value: Option<Vec<u8>>,
}

/// What a request does to the keyspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    /// Apply the writes atomically (a single put or delete is a batch of one).
    Batch(Vec<Op>),
    /// Apply `ops` atomically if every comparison holds, and nothing otherwise.
    CompareAndSet {
        /// The conditions, all of which must hold.
        compare: Vec<Compare>,
        /// The writes applied when they do.
        ops: Vec<Op>,
    },
    /// Independent requests committed together as one log entry (a server's group commit,
    /// see `proposer`): each is applied in turn as if it were its own entry, with its own
    /// client session, and answered in [`Response::each`]. A group has no client identity
    /// of its own and holds no group.
    Group(Vec<Request>),
}

/// A client's identity for exactly-once application of its retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientSeq {
    /// The client, chosen at random by it (collisions between clients are its problem).
    pub client: u64,
    /// The request number, increasing by one per new request; a retry reuses it.
    pub seq: u64,
}

/// A proposal: the command, and who sent it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Who sent it, if the sender wants retries applied once.
    pub client: Option<ClientSeq>,
    /// What it does.
    pub command: Command,
}

impl Request {
    /// A request without client identity (applied each time it is committed).
    pub fn new(command: Command) -> Request {
        Request {
            client: None,
            command,
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.command {
            Command::Batch(ops) => write!(f, "batch of {}", ops.len()),
            Command::CompareAndSet { compare, ops } => {
                write!(f, "cas of {} on {} keys", ops.len(), compare.len())
            }
            Command::Group(requests) => write!(f, "group of {}", requests.len()),
        }
    }
}

/// The outcome of an applied request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// Whether the writes were applied: always for a batch, and for a compare-and-set only
    /// when its conditions held.
    pub succeeded: bool,
    /// The request repeated one already applied: this is the remembered response and nothing
    /// was applied again.
    pub duplicate: bool,
    /// For a [`Command::Group`], the response of each of its requests, in order; empty
    /// otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub each: Vec<Response>,
}

impl Op {
    /// Whether the engine accepts this write: key and value within its limits, a range with
    /// its start not after its end.
    pub fn check(&self) -> Result<(), String> {
        let key = |k: &[u8]| {
            if k.len() > strata::MAX_KEY_LEN {
                Err(format!(
                    "key of {} bytes (at most {})",
                    k.len(),
                    strata::MAX_KEY_LEN
                ))
            } else {
                Ok(())
            }
        };
        match self {
            Op::Put { key: k, value } => {
                key(k)?;
                if value.len() > strata::MAX_VALUE_LEN {
                    return Err(format!(
                        "value of {} bytes (at most {})",
                        value.len(),
                        strata::MAX_VALUE_LEN
                    ));
                }
                Ok(())
            }
            Op::Delete { key: k } => key(k),
            Op::DeleteRange { start, end } => {
                key(start)?;
                key(end)?;
                if start > end {
                    return Err("delete_range start after its end".into());
                }
                Ok(())
            }
        }
    }
}

impl Command {
    /// Whether every write and comparison is acceptable ([`Op::check`]).
    pub fn check(&self) -> Result<(), String> {
        match self {
            Command::Batch(ops) => ops.iter().try_for_each(Op::check),
            Command::CompareAndSet { compare, ops } => {
                for c in compare {
                    if c.key.len() > strata::MAX_KEY_LEN {
                        return Err(format!("compared key of {} bytes", c.key.len()));
                    }
                }
                ops.iter().try_for_each(Op::check)
            }
            Command::Group(requests) => {
                for r in requests {
                    if matches!(r.command, Command::Group(_)) {
                        return Err("a group inside a group".into());
                    }
                    r.command.check()?;
                }
                Ok(())
            }
        }
    }
}
