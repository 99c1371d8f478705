//! Transactions: `POST /txn`, a compare-and-set or an atomic batch given as JSON.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response as HttpResponse;
use serde::{Deserialize, Serialize};

use super::kv::{client_of, propose, write_reply};
use super::{bad, ApiError, AppState};
use crate::types::{Command, Compare, Op, Request};

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

pub(super) async fn txn(
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
