//! Reads, writes and scans of keys: `GET`, `PUT` and `DELETE /kv/{key}`, `GET /kv`.

use std::fmt::Write as _;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response as HttpResponse};
use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::{bad, redirect, unavailable, ApiError, AppState, Limits, Shared};
use crate::proposer::ProposeError;
use crate::read_index::ReadError;
use crate::types::{ClientSeq, Command, Op, Request, Response};

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

pub(super) fn client_of(headers: &HeaderMap) -> Result<Option<ClientSeq>, ApiError> {
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
pub(super) async fn propose(
    s: &Shared,
    request: Request,
    uri: &Uri,
) -> Result<(u64, Response), ApiError> {
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
pub(super) struct ReadQuery {
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

pub(super) async fn get_key(
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

pub(super) fn write_reply(index: u64, r: Response) -> HttpResponse {
    let reply = WriteReply {
        index,
        succeeded: r.succeeded,
        duplicate: r.duplicate,
    };
    axum::Json(reply).into_response()
}

pub(super) async fn put_key(
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

pub(super) async fn delete_key(
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

pub(super) async fn scan(
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
