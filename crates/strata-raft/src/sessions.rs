//! Client sessions: the last request number and response of each client, for exactly-once
//! retries, and their expiry.
//!
//! Stored in the state machine's `raft_meta` family, written in the same batch as the data
//! of the entries that change them:
//!
//! ```text
//! client/<client, 8 bytes BE>                        JSON {seq, response, last_index}
//! expiry/<last_index, 8 bytes BE><client, 8 bytes BE>  empty: the sessions in order of last use
//! ```
//!
//! A session's clock is the log: `last_index` is the index of the entry that last used it. A
//! session is expired at index `i` when `last_index + expiry < i`, where `expiry` is a count
//! of entries (every entry counts: blank, membership, and a group of requests as one).
//!
//! Invariants, which make expiry the same on every replica whatever runs the entries were
//! applied in:
//!
//! - An entry at index `i` treats an expired session as absent: the request is applied as a
//!   client's first (and starts a new session), so what it answers depends only on the log.
//! - After a run of entries ending at index `L` is applied, the stored sessions are exactly
//!   those used at or after `L - expiry`: the run deletes every older one (found through the
//!   `expiry/` keys, oldest first) in its own batch. So two replicas that have applied up to
//!   the same index hold the same sessions, and so does a snapshot taken there.
//! - Each stored session has exactly one `expiry/` key, the one of its `last_index`: a new
//!   use deletes the old key in the batch that adds the new one.
//!
//! What expiry costs a client: a retry arriving more than `expiry` entries after its session
//! was last used is applied again, like a new request. The default
//! ([`DEFAULT_EXPIRY_ENTRIES`]) is far beyond any retry a client makes within its timeout.

use std::collections::HashMap;
use std::ops::Bound;

use serde::{Deserialize, Serialize};
use strata::{ColumnFamily, Db, WriteBatch};

use crate::codec::{decode, encode};
use crate::error::Error;
use crate::types::Response;

/// Entries after its last use at which a session expires, unless set otherwise. It must be
/// the same on every replica of a cluster: it decides what a retry is answered.
pub const DEFAULT_EXPIRY_ENTRIES: u64 = 1_000_000;

const CLIENT_PREFIX: &[u8] = b"client/";
const EXPIRY_PREFIX: &[u8] = b"expiry/";

/// The last request of one client and what it was answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Its request number.
    pub seq: u64,
    /// What it was answered.
    pub response: Response,
    /// The index of the entry that carried it.
    #[serde(default)]
    pub last_index: u64,
}

fn client_key(client: u64) -> Vec<u8> {
    let mut key = CLIENT_PREFIX.to_vec();
    key.extend_from_slice(&client.to_be_bytes());
    key
}

fn expiry_key(last_index: u64, client: u64) -> Vec<u8> {
    let mut key = EXPIRY_PREFIX.to_vec();
    key.extend_from_slice(&last_index.to_be_bytes());
    key.extend_from_slice(&client.to_be_bytes());
    key
}

fn parse_expiry_key(key: &[u8]) -> Result<(u64, u64), Error> {
    let rest = key
        .strip_prefix(EXPIRY_PREFIX)
        .filter(|r| r.len() == 16)
        .ok_or_else(|| Error::Corrupt(format!("session expiry key of {} bytes", key.len())))?;
    let mut index = [0; 8];
    let mut client = [0; 8];
    index.copy_from_slice(&rest[..8]);
    client.copy_from_slice(&rest[8..]);
    Ok((u64::from_be_bytes(index), u64::from_be_bytes(client)))
}

/// Every stored session, in order of client id (for tests and inspection).
pub fn stored(db: &Db, meta: &ColumnFamily) -> Result<Vec<(u64, Session)>, Error> {
    let mut out = Vec::new();
    let bounds = (
        Bound::Included(CLIENT_PREFIX.to_vec()),
        Bound::Excluded(b"client0".to_vec()),
    );
    for item in db.range_cf(meta, bounds)? {
        let (key, value) = item?;
        let id = key
            .strip_prefix(CLIENT_PREFIX)
            .and_then(|k| <[u8; 8]>::try_from(k).ok())
            .map(u64::from_be_bytes)
            .ok_or_else(|| Error::Corrupt(format!("session key of {} bytes", key.len())))?;
        let session = decode(&value).map_err(|e| Error::Corrupt(format!("session {id}: {e}")))?;
        out.push((id, session));
    }
    Ok(out)
}

/// The sessions as a run of entries is leaving them: those it wrote over the stored ones.
pub struct RunSessions<'a> {
    db: &'a Db,
    meta: &'a ColumnFamily,
    expiry: u64,
    written: HashMap<u64, Session>,
}

impl<'a> RunSessions<'a> {
    /// The sessions of `db` (family `meta`), expiring after `expiry` entries.
    pub fn new(db: &'a Db, meta: &'a ColumnFamily, expiry: u64) -> RunSessions<'a> {
        RunSessions {
            db,
            meta,
            expiry,
            written: HashMap::new(),
        }
    }

    /// The session of `client` as this run has left it, expired or not.
    pub fn get(&self, client: u64) -> Result<Option<Session>, Error> {
        if let Some(s) = self.written.get(&client) {
            return Ok(Some(s.clone()));
        }
        match self.db.get_cf(self.meta, client_key(client))? {
            None => Ok(None),
            Some(bytes) => decode(&bytes)
                .map(Some)
                .map_err(|e| Error::Corrupt(format!("session {client}: {e}"))),
        }
    }

    /// Whether `session` is expired for the entry at `index`.
    pub fn expired(&self, session: &Session, index: u64) -> bool {
        session.last_index.saturating_add(self.expiry) < index
    }

    /// Records `session` as the last of `client`, whose previous session (if any) was last
    /// used at `previous`.
    pub fn record(
        &mut self,
        batch: &mut WriteBatch,
        client: u64,
        previous: Option<u64>,
        session: &Session,
    ) -> Result<(), Error> {
        if let Some(last) = previous {
            batch.delete_cf(self.meta, expiry_key(last, client));
        }
        batch.put_cf(self.meta, expiry_key(session.last_index, client), b"");
        let bytes = encode(session).map_err(|e| Error::Corrupt(e.to_string()))?;
        batch.put_cf(self.meta, client_key(client), bytes);
        self.written.insert(client, session.clone());
        Ok(())
    }

    /// Deletes, in `batch`, every session expired once the entries up to `applied` are
    /// applied (last used before `applied - expiry`). Returns how many.
    pub fn expire(&self, batch: &mut WriteBatch, applied: u64) -> Result<usize, Error> {
        let Some(before) = applied.checked_sub(self.expiry) else {
            return Ok(0);
        };
        let mut count = 0;
        let mut end = EXPIRY_PREFIX.to_vec();
        end.extend_from_slice(&before.to_be_bytes());
        let bounds = (
            Bound::Included(EXPIRY_PREFIX.to_vec()),
            Bound::Excluded(end),
        );
        for item in self.db.range_cf(self.meta, bounds)? {
            let (key, _) = item?;
            let (_, client) = parse_expiry_key(&key)?;
            // Used again in this run: its stored key is stale and already deleted; whether
            // the new session expires is decided below.
            if self.written.contains_key(&client) {
                continue;
            }
            batch.delete_cf(self.meta, &key);
            batch.delete_cf(self.meta, client_key(client));
            count += 1;
        }
        for (client, session) in &self.written {
            if session.last_index < before {
                batch.delete_cf(self.meta, expiry_key(session.last_index, *client));
                batch.delete_cf(self.meta, client_key(*client));
                count += 1;
            }
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_keys_sort_by_last_use_then_client() {
        let mut keys = [
            expiry_key(300, 1),
            expiry_key(2, 9),
            expiry_key(2, 3),
            expiry_key(1 << 40, 0),
        ];
        keys.sort();
        let parsed: Vec<_> = keys.iter().map(|k| parse_expiry_key(k).unwrap()).collect();
        assert_eq!(parsed, vec![(2, 3), (2, 9), (300, 1), (1 << 40, 0)]);
        assert!(parse_expiry_key(b"expiry/short").is_err());
        assert!(parse_expiry_key(&client_key(1)).is_err());
    }
}
