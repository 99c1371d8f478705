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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use axum::Router;
use base64::Engine as _;
use openraft::error::{ClientWriteError, ForwardToLeader, InitializeError, RaftError};
use openraft::BasicNode;
use serde::{Deserialize, Serialize};

use crate::node::Node;
use crate::proposer::{ProposeError, Proposer};
use crate::read_index::{ReadError, ReadIndex};
use crate::types::{ClientSeq, Command, Compare, Op, Request, Response};

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
        .route("/kv", get(scan))
        .route("/kv/{key}", get(get_key).put(put_key).delete(delete_key))
        .route("/txn", post(txn))
        .route("/cluster/init", post(init))
        .route("/cluster/learners", post(add_learner))
        .route("/cluster/membership", post(change_membership))
        .route("/cluster/status", get(status))
        .route("/metrics", get(metrics))
        .route("/raft/append", post(raft_append))
        .route("/raft/vote", post(raft_vote))
        .route("/raft/snapshot", post(raft_snapshot))
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

/// Decodes a percent-encoded path segment into bytes.
pub fn percent_decode(s: &str) -> Result<Vec<u8>, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent escape at byte {i} of the key"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// Encodes bytes as a path segment (unreserved characters kept, the rest `%XX`).
pub fn percent_encode(key: &[u8]) -> String {
    let mut out = String::with_capacity(key.len());
    for &b in key {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn key_of(uri: &Uri, limits: &Limits) -> Result<Vec<u8>, ApiError> {
    let raw = uri.path().strip_prefix("/kv/").unwrap_or("");
    let key = percent_decode(raw).map_err(bad)?;
    if key.is_empty() {
        return Err(bad("empty key"));
    }
    if key.len() > limits.max_key {
        return Err(ApiError::Status(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("key of {} bytes; at most {}", key.len(), limits.max_key),
        ));
    }
    Ok(key)
}

fn client_of(headers: &HeaderMap) -> Result<Option<ClientSeq>, ApiError> {
    let field = |name: &str| -> Result<Option<u64>, ApiError> {
        match headers.get(name) {
            None => Ok(None),
            Some(v) => v
                .to_str()
                .ok()
                .and_then(|s| s.parse().ok())
                .map(Some)
                .ok_or_else(|| bad(format!("{name} must be an unsigned integer"))),
        }
    };
    match (field("x-strata-client")?, field("x-strata-seq")?) {
        (Some(client), Some(seq)) => Ok(Some(ClientSeq { client, seq })),
        (None, None) => Ok(None),
        _ => Err(bad("x-strata-client and x-strata-seq go together")),
    }
}

/// Proposes a client's request (grouped with others arriving meanwhile, see `proposer`) and
/// waits until it is committed and applied.
async fn propose(s: &Shared, request: Request, uri: &Uri) -> Result<(u64, Response), ApiError> {
    request.command.check().map_err(bad)?;
    if matches!(request.command, Command::Group(_)) {
        return Err(bad("a group is proposed by the server, not by a client"));
    }
    match s.proposer.propose(request).await {
        Ok(answer) => Ok(answer),
        Err(ProposeError::Forward(f)) => Err(redirect(&f, uri)),
        Err(ProposeError::Refused(e)) => Err(bad(e)),
        Err(ProposeError::Unavailable(e)) => Err(unavailable(e)),
    }
}

/// Waits until a local read is linearizable (sharing the read index with the reads waiting
/// meanwhile, see `read_index`), or says where the leader is.
async fn read_barrier(s: &Shared, uri: &Uri) -> Result<(), ApiError> {
    match s.reads.wait().await {
        Ok(()) => Ok(()),
        Err(ReadError::Forward(f)) => Err(redirect(&f, uri)),
        Err(ReadError::Unavailable(e)) => Err(unavailable(e)),
    }
}

#[derive(Deserialize)]
struct ReadQuery {
    consistency: Option<String>,
    start: Option<String>,
    end: Option<String>,
    limit: Option<usize>,
}

/// Whether the read may be served from local state; anything but `local` or `linearizable`
/// is refused.
fn local_read(q: &ReadQuery) -> Result<bool, ApiError> {
    match q.consistency.as_deref() {
        None | Some("linearizable") => Ok(false),
        Some("local") => Ok(true),
        Some(other) => Err(bad(format!(
            "consistency must be linearizable or local, not {other:?}"
        ))),
    }
}

fn applied_index(s: &Shared) -> u64 {
    s.node
        .raft
        .metrics()
        .borrow()
        .last_applied
        .map_or(0, |id| id.index)
}

fn read_headers(s: &Shared, local: bool) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let consistency = if local { "local" } else { "linearizable" };
    headers.insert(
        "x-strata-consistency",
        HeaderValue::from_static(consistency),
    );
    headers.insert(
        "x-strata-applied-index",
        HeaderValue::from(applied_index(s)),
    );
    headers
}

async fn get_key(
    State(state): State<AppState>,
    uri: Uri,
    Query(q): Query<ReadQuery>,
) -> Result<HttpResponse, ApiError> {
    let s = &state.0;
    let key = key_of(&uri, &s.limits)?;
    let local = local_read(&q)?;
    if !local {
        read_barrier(s, &uri).await?;
    }
    let value = s
        .node
        .keyspace
        .get()
        .get(&key)
        .map_err(|e| ApiError::Status(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let mut headers = read_headers(s, local);
    match value {
        Some(v) => {
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            Ok((StatusCode::OK, headers, v).into_response())
        }
        None => Ok((StatusCode::NOT_FOUND, headers, "not found\n").into_response()),
    }
}

#[derive(Serialize)]
struct WriteReply {
    index: u64,
    succeeded: bool,
    duplicate: bool,
}

fn write_reply(index: u64, r: Response) -> HttpResponse {
    let reply = WriteReply {
        index,
        succeeded: r.succeeded,
        duplicate: r.duplicate,
    };
    axum::Json(reply).into_response()
}

async fn put_key(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let s = &state.0;
    let key = key_of(&uri, &s.limits)?;
    if body.len() > s.limits.max_value {
        return Err(ApiError::Status(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "value of {} bytes; at most {}",
                body.len(),
                s.limits.max_value
            ),
        ));
    }
    let request = Request {
        client: client_of(&headers)?,
        command: Command::Batch(vec![Op::Put {
            key,
            value: body.to_vec(),
        }]),
    };
    let (index, r) = propose(s, request, &uri).await?;
    Ok(write_reply(index, r))
}

async fn delete_key(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<HttpResponse, ApiError> {
    let s = &state.0;
    let key = key_of(&uri, &s.limits)?;
    let request = Request {
        client: client_of(&headers)?,
        command: Command::Batch(vec![Op::Delete { key }]),
    };
    let (index, r) = propose(s, request, &uri).await?;
    Ok(write_reply(index, r))
}

#[derive(Serialize)]
struct Pair {
    key: String,
    value: String,
}

async fn scan(
    State(state): State<AppState>,
    uri: Uri,
    Query(q): Query<ReadQuery>,
) -> Result<HttpResponse, ApiError> {
    let s = &state.0;
    let local = local_read(&q)?;
    let limit = q.limit.unwrap_or(1000);
    if limit == 0 || limit > 100_000 {
        return Err(bad("limit must be between 1 and 100000"));
    }
    let start = percent_decode(q.start.as_deref().unwrap_or("")).map_err(bad)?;
    let end = match q.end.as_deref() {
        Some(e) => Some(percent_decode(e).map_err(bad)?),
        None => None,
    };
    if let Some(e) = &end {
        if *e < start {
            return Err(bad("end before start"));
        }
    }
    if !local {
        read_barrier(s, &uri).await?;
    }
    let pairs = s
        .node
        .keyspace
        .get()
        .scan(&start, end.as_deref(), limit)
        .map_err(|e| ApiError::Status(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut out = String::new();
    for (k, v) in pairs {
        let line = Pair {
            key: b64.encode(k),
            value: b64.encode(v),
        };
        out.push_str(&serde_json::to_string(&line).unwrap_or_default());
        out.push('\n');
    }
    let mut headers = read_headers(s, local);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    Ok((StatusCode::OK, headers, out).into_response())
}

/// One write of a transaction, keys and values as UTF-8 strings.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum TxnOp {
    /// Set a key.
    Put {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Remove a key.
    Delete {
        /// The key.
        key: String,
    },
    /// Remove `[start, end)`.
    DeleteRange {
        /// First key removed.
        start: String,
        /// First key kept.
        end: String,
    },
}

/// A condition: `key` holds `value`, or is absent when `value` is null or missing.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TxnCompare {
    /// The key.
    pub key: String,
    /// The value it must hold.
    #[serde(default)]
    pub value: Option<String>,
}

/// The body of `POST /txn`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Txn {
    /// Conditions that must all hold (none: the writes always apply).
    #[serde(default)]
    pub compare: Vec<TxnCompare>,
    /// Writes applied atomically when they do.
    #[serde(default)]
    pub ops: Vec<TxnOp>,
}

impl Txn {
    /// The command this transaction proposes.
    pub fn command(&self) -> Command {
        let ops = self
            .ops
            .iter()
            .map(|op| match op {
                TxnOp::Put { key, value } => Op::Put {
                    key: key.as_bytes().to_vec(),
                    value: value.as_bytes().to_vec(),
                },
                TxnOp::Delete { key } => Op::Delete {
                    key: key.as_bytes().to_vec(),
                },
                TxnOp::DeleteRange { start, end } => Op::DeleteRange {
                    start: start.as_bytes().to_vec(),
                    end: end.as_bytes().to_vec(),
                },
            })
            .collect();
        if self.compare.is_empty() {
            Command::Batch(ops)
        } else {
            Command::CompareAndSet {
                compare: self
                    .compare
                    .iter()
                    .map(|c| Compare {
                        key: c.key.as_bytes().to_vec(),
                        value: c.value.as_ref().map(|v| v.as_bytes().to_vec()),
                    })
                    .collect(),
                ops,
            }
        }
    }
}

async fn txn(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let s = &state.0;
    let txn: Txn =
        serde_json::from_slice(&body).map_err(|e| bad(format!("transaction JSON: {e}")))?;
    if txn.ops.is_empty() && txn.compare.is_empty() {
        return Err(bad("empty transaction"));
    }
    let too_big = txn.ops.iter().any(|op| match op {
        TxnOp::Put { key, value } => {
            key.len() > s.limits.max_key || value.len() > s.limits.max_value
        }
        TxnOp::Delete { key } => key.len() > s.limits.max_key,
        TxnOp::DeleteRange { start, end } => {
            start.len() > s.limits.max_key || end.len() > s.limits.max_key
        }
    }) || txn.compare.iter().any(|c| c.key.len() > s.limits.max_key);
    if too_big {
        return Err(ApiError::Status(
            StatusCode::PAYLOAD_TOO_LARGE,
            "a key or value of the transaction is over the limit".into(),
        ));
    }
    let request = Request {
        client: client_of(&headers)?,
        command: txn.command(),
    };
    let (index, r) = propose(s, request, &uri).await?;
    Ok(write_reply(index, r))
}

#[derive(Deserialize)]
struct InitBody {
    /// Node id to address; missing: this node alone.
    #[serde(default)]
    nodes: BTreeMap<u64, String>,
}

async fn init(State(state): State<AppState>, body: Bytes) -> Result<HttpResponse, ApiError> {
    let s = &state.0;
    let parsed: InitBody = if body.is_empty() {
        InitBody {
            nodes: BTreeMap::new(),
        }
    } else {
        serde_json::from_slice(&body).map_err(|e| bad(format!("init JSON: {e}")))?
    };
    let mut nodes: BTreeMap<u64, BasicNode> = parsed
        .nodes
        .into_iter()
        .map(|(id, addr)| (id, BasicNode::new(addr)))
        .collect();
    if nodes.is_empty() {
        nodes.insert(s.id, BasicNode::new(s.addr.clone()));
    }
    if !nodes.contains_key(&s.id) {
        return Err(bad(format!(
            "the initial members must include this node ({})",
            s.id
        )));
    }
    match s.node.raft.initialize(nodes).await {
        Ok(()) => Ok((StatusCode::OK, "initialized\n").into_response()),
        Err(RaftError::APIError(InitializeError::NotAllowed(e))) => {
            Err(ApiError::Status(StatusCode::CONFLICT, e.to_string()))
        }
        Err(RaftError::APIError(e)) => Err(bad(e.to_string())),
        Err(e) => Err(unavailable(e)),
    }
}

#[derive(Deserialize)]
struct LearnerBody {
    id: u64,
    addr: String,
}

async fn add_learner(
    State(state): State<AppState>,
    uri: Uri,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let s = &state.0;
    let b: LearnerBody =
        serde_json::from_slice(&body).map_err(|e| bad(format!("learner JSON: {e}")))?;
    match s
        .node
        .raft
        .add_learner(b.id, BasicNode::new(b.addr), true)
        .await
    {
        Ok(r) => Ok(axum::Json(serde_json::json!({"index": r.log_id.index})).into_response()),
        Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => Err(redirect(&f, &uri)),
        Err(RaftError::APIError(e)) => Err(bad(e.to_string())),
        Err(e) => Err(unavailable(e)),
    }
}

#[derive(Deserialize)]
struct MembershipBody {
    voters: Vec<u64>,
}

/// How far behind the leader's log a voter may be and still count as up to date.
const UP_TO_DATE_LAG: u64 = 1000;

async fn change_membership(
    State(state): State<AppState>,
    uri: Uri,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let s = &state.0;
    let b: MembershipBody =
        serde_json::from_slice(&body).map_err(|e| bad(format!("membership JSON: {e}")))?;
    if b.voters.is_empty() {
        return Err(bad("a membership needs at least one voter"));
    }
    let m = s.node.raft.metrics().borrow().clone();
    // Refuse a change whose new voters could not form a quorum now: a majority of them must
    // be this leader or followers whose log is close to the leader's.
    if let Some(replication) = &m.replication {
        let last = m.last_log_index.unwrap_or(0);
        let up = b
            .voters
            .iter()
            .filter(|id| {
                **id == s.id
                    || replication
                        .get(id)
                        .and_then(|matched| *matched)
                        .is_some_and(|matched| matched.index + UP_TO_DATE_LAG >= last)
            })
            .count();
        if up * 2 <= b.voters.len() {
            return Err(ApiError::Status(
                StatusCode::CONFLICT,
                format!(
                    "refused: only {up} of the {} new voters are up to date, so the change would lose quorum (add them as learners first)",
                    b.voters.len()
                ),
            ));
        }
    }
    match s.node.raft.change_membership(b.voters, false).await {
        Ok(r) => Ok(axum::Json(serde_json::json!({"index": r.log_id.index})).into_response()),
        Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => Err(redirect(&f, &uri)),
        Err(RaftError::APIError(e)) => Err(bad(e.to_string())),
        Err(e) => Err(unavailable(e)),
    }
}

/// `GET /cluster/status`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Status {
    /// This node.
    pub id: u64,
    /// Leader, Follower, Candidate or Learner.
    pub role: String,
    /// The current term.
    pub term: u64,
    /// The leader this node knows of.
    pub leader: Option<u64>,
    /// The leader's address, if known.
    pub leader_addr: Option<String>,
    /// Index of the last entry in the log.
    pub last_log_index: Option<u64>,
    /// Index of the last applied entry.
    pub applied_index: Option<u64>,
    /// Index of the last snapshot.
    pub snapshot_index: Option<u64>,
    /// Voter ids.
    pub voters: Vec<u64>,
    /// Every member (voters and learners) and its address.
    pub nodes: BTreeMap<u64, String>,
}

async fn status(State(state): State<AppState>) -> HttpResponse {
    let s = &state.0;
    let m = s.node.raft.metrics().borrow().clone();
    let membership = m.membership_config.membership();
    let nodes: BTreeMap<u64, String> = membership
        .nodes()
        .map(|(id, n)| (*id, n.addr.clone()))
        .collect();
    let status = Status {
        id: s.id,
        role: format!("{:?}", m.state),
        term: m.current_term,
        leader: m.current_leader,
        leader_addr: m.current_leader.and_then(|l| nodes.get(&l).cloned()),
        last_log_index: m.last_log_index,
        applied_index: m.last_applied.map(|id| id.index),
        snapshot_index: m.snapshot.map(|id| id.index),
        voters: membership.voter_ids().collect(),
        nodes,
    };
    axum::Json(status).into_response()
}

async fn metrics(State(state): State<AppState>) -> HttpResponse {
    let s = &state.0;
    let m = s.node.raft.metrics().borrow().clone();
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, value: u64| {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{node=\"{}\"}} {value}",
            s.id
        );
    };
    gauge("strata_raft_term", "Current Raft term.", m.current_term);
    gauge(
        "strata_raft_is_leader",
        "1 if this node is the leader.",
        u64::from(m.state == openraft::ServerState::Leader),
    );
    gauge(
        "strata_raft_last_log_index",
        "Index of the last log entry.",
        m.last_log_index.unwrap_or(0),
    );
    gauge(
        "strata_raft_applied_index",
        "Index of the last applied entry.",
        m.last_applied.map_or(0, |i| i.index),
    );
    gauge(
        "strata_raft_snapshot_index",
        "Index of the last snapshot.",
        m.snapshot.map_or(0, |i| i.index),
    );
    gauge(
        "strata_raft_purged_index",
        "Index of the last purged entry.",
        m.purged.map_or(0, |i| i.index),
    );
    gauge(
        "strata_raft_voters",
        "Voters in the membership.",
        m.membership_config.membership().voter_ids().count() as u64,
    );
    for (which, stats) in [
        ("log", s.node.log.db().stats()),
        ("state", s.node.keyspace.get().db().stats()),
    ] {
        for (name, value) in [
            ("batches", stats.batches),
            ("wal_syncs", stats.wal_syncs),
            ("keys_written", stats.keys_written),
            ("user_bytes_written", stats.user_bytes_written),
            ("gets", stats.gets),
            ("flushes", stats.flushes),
            ("write_stalls", stats.write_stalls),
        ] {
            let _ = writeln!(
                out,
                "strata_engine_{name}{{node=\"{}\",db=\"{which}\"}} {value}",
                s.id
            );
        }
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

async fn raft_append(State(state): State<AppState>, body: Bytes) -> Result<HttpResponse, ApiError> {
    let rpc = serde_json::from_slice(&body).map_err(|e| bad(format!("append JSON: {e}")))?;
    let result = state.0.node.raft.append_entries(rpc).await;
    Ok(axum::Json(result).into_response())
}

async fn raft_vote(State(state): State<AppState>, body: Bytes) -> Result<HttpResponse, ApiError> {
    let rpc = serde_json::from_slice(&body).map_err(|e| bad(format!("vote JSON: {e}")))?;
    let result = state.0.node.raft.vote(rpc).await;
    Ok(axum::Json(result).into_response())
}

async fn raft_snapshot(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let rpc = serde_json::from_slice(&body).map_err(|e| bad(format!("snapshot JSON: {e}")))?;
    let result = state.0.node.raft.install_snapshot(rpc).await;
    Ok(axum::Json(result).into_response())
}
