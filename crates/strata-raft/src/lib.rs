//! strata-raft: a replicated key-value service built from openraft and Strata.
//!
//! openraft does the consensus; this crate is its storage and its plumbing:
//!
//! - [`types`]: the type configuration, the commands a client proposes and their responses;
//! - [`log_store`]: the Raft log, vote, committed and purged ids in a Strata database
//!   (`RaftLogStorage`);
//! - [`state_machine`]: the replicated keyspace, one `WriteBatch` per applied run of entries
//!   (`RaftStateMachine`);
//! - [`sessions`]: the client sessions of exactly-once retries, and their expiry by log index;
//! - [`snapshot`]: snapshots as checkpoints packed into one file, streamed in chunks and
//!   installed atomically;
//! - [`node`]: a node's directory (log, state machine, identity) opened as one unit;
//! - [`network`] and [`http_client`]: openraft's RPCs over HTTP;
//! - [`server`]: the HTTP API of a node (`strata server`);
//! - [`proposer`] and [`read_index`]: group commit of client writes, and one read index shared
//!   by the linearizable reads waiting together;
//! - [`cli`]: the `strata server`, `strata cluster` and `strata client` commands;
//! - [`bench`]: `strata cluster bench`, one client loop timed against Strata or etcd.
//!
//! The async runtime (tokio) lives here and in the server; the engine stays synchronous. Its
//! calls are short (a synced write of a few entries) except checkpoints and snapshot installs,
//! which run on tokio's blocking pool.
#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod codec;
pub mod error;
pub mod http_client;
pub mod log_store;
pub mod network;
pub mod node;
pub mod proposer;
pub mod read_index;
pub mod server;
pub mod sessions;
pub mod snapshot;
pub mod state_machine;
pub mod types;

pub use error::Error;
pub use log_store::LogStore;
pub use node::{Node, NodeDir, NodeIdentity, Raft};

pub use state_machine::StateMachine;
pub use types::{Command, Compare, Op, Request, Response, TypeConfig};
