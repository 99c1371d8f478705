//! The cluster's own routes: membership changes, status, metrics, and openraft's RPCs
//! between nodes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response as HttpResponse};
use openraft::error::{ClientWriteError, InitializeError, RaftError};
use openraft::BasicNode;
use serde::{Deserialize, Serialize};

use super::{bad, redirect, unavailable, ApiError, AppState};

#[derive(Deserialize)]
struct InitBody {
    /// Node id to address; missing: this node alone.
    #[serde(default)]
    nodes: BTreeMap<u64, String>,
}

pub(super) async fn init(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
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

pub(super) async fn add_learner(
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

pub(super) async fn change_membership(
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

pub(super) async fn status(State(state): State<AppState>) -> HttpResponse {
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

pub(super) async fn metrics(State(state): State<AppState>) -> HttpResponse {
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

pub(super) async fn raft_append(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let rpc = serde_json::from_slice(&body).map_err(|e| bad(format!("append JSON: {e}")))?;
    let result = state.0.node.raft.append_entries(rpc).await;
    Ok(axum::Json(result).into_response())
}

pub(super) async fn raft_vote(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let rpc = serde_json::from_slice(&body).map_err(|e| bad(format!("vote JSON: {e}")))?;
    let result = state.0.node.raft.vote(rpc).await;
    Ok(axum::Json(result).into_response())
}

pub(super) async fn raft_snapshot(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<HttpResponse, ApiError> {
    let rpc = serde_json::from_slice(&body).map_err(|e| bad(format!("snapshot JSON: {e}")))?;
    let result = state.0.node.raft.install_snapshot(rpc).await;
    Ok(axum::Json(result).into_response())
}
