//! `strata server`: one node of the replicated keyspace, over HTTP (axum).
//!
//! Routes (keys are the percent-encoded path segment after `/kv/`, values the raw body):
//!
//! | route | what |
//! | --- | --- |
//! | `PUT /kv/{key}` | 200 once committed on a quorum (synced) and applied here |
//! | `GET /kv/{key}` | 200 with the value or 404; linearizable unless `?consistency=local` |
//! | `DELETE /kv/{key}` | 200 once committed and applied |
//! | `GET /kv?start=&end=&limit=` | a scan: JSON lines `{"key": b64, "value": b64}` |
//! | `POST /txn` | compare-and-set or atomic batch (JSON), the outcome in the reply |
//! | `POST /cluster/init`, `/cluster/learners`, `/cluster/membership` | cluster changes |
//! | `GET /cluster/status`, `GET /metrics` | the node's view, Prometheus text |
//! | `POST /raft/{append,vote,snapshot}` | openraft's RPCs between nodes |
//!
//! A follower answers writes and linearizable reads with `307 Temporary Redirect` to the
//! leader (same path and query; the method and body are kept by 307), with the leader's id in
//! `x-strata-leader`. Redirecting rather than forwarding keeps a follower from holding
//! requests for another node and makes the extra hop visible to clients, which remember the
//! leader. A write carrying `x-strata-client` and `x-strata-seq` is applied once however often
//! it is retried with the same pair.
//!
//! Writes go through the `proposer`: those arriving while earlier ones are being committed are
//! proposed together as one log entry (group commit), each still answered on its own.
//!
//! Linearizable reads: the node gets a read index from openraft (`ensure_linearizable`: the
//! leader confirms with a quorum that it still leads and waits until its state machine has
//! applied everything committed before the read), shared by the reads waiting together (see
//! `read_index`), then reads its own keyspace.
//!
//! The handlers live by concept: `kv` (reads, writes and scans of keys), `txn` (`POST /txn`),
//! `cluster` (membership changes, status, metrics, and openraft's RPCs between nodes).

mod cluster;
mod kv;
mod txn;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use axum::Router;
use openraft::error::ForwardToLeader;
use openraft::BasicNode;

pub use cluster::Status;
pub use kv::{percent_decode, percent_encode};
pub use txn::{Txn, TxnCompare, TxnOp};

use crate::node::Node;
use crate::proposer::Proposer;
use crate::read_index::ReadIndex;

/// Limits on what a request may carry.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest key, in bytes.
    pub max_key: usize,
    /// Longest value (and request body), in bytes.
    pub max_value: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_key: 16 << 10,
            max_value: 1 << 20,
        }
    }
}

struct Shared {
    node: Node,
    id: u64,
    addr: String,
    limits: Limits,
    proposer: Proposer,
    reads: ReadIndex,
}

/// The server's state: the node it serves.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    /// Serves `node`, whose id is `id` and whose advertised address is `addr`. Starts the
    /// proposer's task, so it must be called on a tokio runtime.
    pub fn new(node: Node, id: u64, addr: String, limits: Limits) -> AppState {
        let proposer = Proposer::start(node.raft.clone());
        let reads = ReadIndex::new(node.raft.clone());
        AppState(Arc::new(Shared {
            node,
            id,
            addr,
            limits,
            proposer,
            reads,
        }))
    }
}

/// The routes, ready for `axum::serve`.
pub fn router(state: AppState) -> Router {
    // Bodies beyond a value's limit (plus room for a transaction's JSON or a snapshot chunk)
    // are refused with 413 before they are read whole.
    let body_limit = state.0.limits.max_value.saturating_mul(4).max(8 << 20);
    Router::new()
        .route("/kv", get(kv::scan))
        .route(
            "/kv/{key}",
            get(kv::get_key).put(kv::put_key).delete(kv::delete_key),
        )
        .route("/txn", post(txn::txn))
        .route("/cluster/init", post(cluster::init))
        .route("/cluster/learners", post(cluster::add_learner))
        .route("/cluster/membership", post(cluster::change_membership))
        .route("/cluster/status", get(cluster::status))
        .route("/metrics", get(cluster::metrics))
        .route("/raft/append", post(cluster::raft_append))
        .route("/raft/vote", post(cluster::raft_vote))
        .route("/raft/snapshot", post(cluster::raft_snapshot))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(state)
}

/// An error reply: a status and a one-line message, or a redirect to the leader.
#[derive(Debug)]
pub enum ApiError {
    /// A status with a message.
    Status(StatusCode, String),
    /// 307 to this URL, naming the leader.
    Redirect(String, u64),
}

impl IntoResponse for ApiError {
    fn into_response(self) -> HttpResponse {
        match self {
            ApiError::Status(status, message) => {
                (status, format!("error: {message}\n")).into_response()
            }
            ApiError::Redirect(url, leader) => {
                let mut headers = HeaderMap::new();
                if let Ok(v) = HeaderValue::from_str(&url) {
                    headers.insert(header::LOCATION, v);
                }
                headers.insert("x-strata-leader", HeaderValue::from(leader));
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    headers,
                    format!("leader is node {leader} at {url}\n"),
                )
                    .into_response()
            }
        }
    }
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::Status(StatusCode::BAD_REQUEST, message.into())
}

fn unavailable(message: impl ToString) -> ApiError {
    ApiError::Status(StatusCode::SERVICE_UNAVAILABLE, message.to_string())
}

fn redirect(f: &ForwardToLeader<u64, BasicNode>, uri: &Uri) -> ApiError {
    match (&f.leader_id, &f.leader_node) {
        (Some(id), Some(node)) => {
            let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
            ApiError::Redirect(format!("http://{}{path}", node.addr), *id)
        }
        _ => unavailable("no leader known yet; retry"),
    }
}
