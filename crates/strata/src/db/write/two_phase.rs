//! Two-phase commit's durable state: a file per prepared transaction, and a commit marker in
//! the WAL.
//!
//! Byte layout of `PREPARED-<name in hex>.txn` (written to a temporary file, synced, renamed,
//! directory synced):
//!
//! ```text
//! magic "STRATA-PREPARED-1" | name: varint32 len + bytes | count: varint32
//!   | records: varint32 len + bytes (a write batch's records, without its header)
//!   | crc: fixed32 LE, masked crc32c of everything before it
//! ```
//!
//! Protocol and why it is safe:
//! - prepare: the file is made durable; nothing reaches the WAL or a memtable.
//! - commit: the batch goes through the write path with `sync`, carrying a log-data record
//!   `strata.2pc.commit:<name>`; then, still under the writer lock, the file is removed and
//!   the directory synced. No memtable switch (and so no WAL deletion) can come between the
//!   WAL write and the removal, so after any crash either the file is gone or the WAL that
//!   holds the marker is still there. Recovery removes the file of every name whose marker
//!   it replays: a committed transaction is never offered again.
//! - rollback: the file is removed; nothing else was written.
//! - open: every remaining file is a prepared transaction, offered to the caller (through
//!   `TransactionDb::prepared_transactions`) to commit or roll back.

use std::collections::HashSet;

use crate::codec::{
    crc32c, decode_fixed32, get_length_prefixed, get_varint32, mask_crc, put_length_prefixed,
    put_varint32, unmask_crc,
};
use crate::db::DbInner;
use crate::error::{Error, Result};
use crate::options::WriteOptions;
use crate::write_batch::{WriteBatch, MAX_BATCH_LEN};

const MAGIC: &[u8] = b"STRATA-PREPARED-1";

/// The prefix of the log-data record that marks a prepared transaction's commit.
pub(crate) const COMMIT_MARKER: &[u8] = b"strata.2pc.commit:";

/// A prepared transaction found at open.
#[derive(Debug)]
pub(crate) struct PreparedRecord {
    pub name: Vec<u8>,
    pub batch: WriteBatch,
}

/// The file name of prepared transaction `name`.
pub(crate) fn prepared_file_name(name: &[u8]) -> String {
    let hex: String = name.iter().map(|b| format!("{b:02x}")).collect();
    format!("PREPARED-{hex}.txn")
}

/// The transaction name in a prepared file's name, if it is one.
pub(crate) fn parse_prepared_file_name(file: &str) -> Option<Vec<u8>> {
    let hex = file.strip_prefix("PREPARED-")?.strip_suffix(".txn")?;
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The content of the file of prepared transaction `name` holding `batch`.
pub(crate) fn encode(name: &[u8], batch: &WriteBatch) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    put_length_prefixed(&mut out, name);
    put_varint32(&mut out, batch.len() as u32);
    put_length_prefixed(&mut out, batch.records());
    let crc = mask_crc(crc32c(&out));
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Decodes a prepared file's content; the reason if it is not one.
pub(crate) fn decode(content: &[u8]) -> std::result::Result<PreparedRecord, String> {
    let body_len = content
        .len()
        .checked_sub(4)
        .ok_or("shorter than its checksum")?;
    let (body, crc) = content.split_at(body_len);
    let stored = decode_fixed32(crc).ok_or("shorter than its checksum")?;
    if unmask_crc(stored) != crc32c(body) {
        return Err("checksum mismatch".into());
    }
    let mut rest = body.strip_prefix(MAGIC).ok_or("bad magic")?;
    let name = get_length_prefixed(&mut rest).ok_or("bad name")?.to_vec();
    let count = get_varint32(&mut rest).ok_or("bad count")?;
    let records = get_length_prefixed(&mut rest).ok_or("bad records")?;
    if !rest.is_empty() {
        return Err("bytes after the records".into());
    }
    let batch = WriteBatch::from_records(records, count)?;
    Ok(PreparedRecord { name, batch })
}

impl DbInner {
    /// Makes prepared transaction `name` durable.
    pub(in crate::db) fn persist_prepared(&self, name: &[u8], batch: &WriteBatch) -> Result<()> {
        self.check_writable()?;
        crate::fs::write_file_atomically(
            self.fs.as_ref(),
            &self.path,
            &prepared_file_name(name),
            &encode(name, batch),
        )
    }

    /// Writes prepared transaction `name`'s batch with its commit marker, synced, and
    /// removes its file before any other write.
    pub(in crate::db) fn commit_prepared(
        &self,
        name: &[u8],
        mut batch: WriteBatch,
        options: &WriteOptions,
    ) -> Result<()> {
        let mut marker = COMMIT_MARKER.to_vec();
        marker.extend_from_slice(name);
        batch.put_log_data(&marker);
        let options = WriteOptions {
            sync: true,
            ..*options
        };
        let path = self.path.join(prepared_file_name(name));
        self.write_checked_then(batch, &options, &mut |_| Ok(()), &mut || {
            self.fs.remove_file(&path)?;
            self.fs.sync_dir(&self.path)
        })
    }

    /// Forgets prepared transaction `name`: its file is removed.
    pub(in crate::db) fn rollback_prepared(&self, name: &[u8]) -> Result<()> {
        self.check_writable()?;
        self.fs
            .remove_file(&self.path.join(prepared_file_name(name)))?;
        self.fs.sync_dir(&self.path)
    }

    /// Reads the prepared files at open: those whose commit marker `committed` names are
    /// removed (unless `read_only`), the rest returned. A file that does not decode fails
    /// the open, naming it: a prepared transaction cannot be dropped silently.
    pub(in crate::db) fn recover_prepared(
        &self,
        committed: &HashSet<Vec<u8>>,
        read_only: bool,
    ) -> Result<Vec<PreparedRecord>> {
        let mut out = Vec::new();
        let mut removed = false;
        let mut files = self.fs.list_dir(&self.path)?;
        files.sort();
        for file in files {
            let Some(name) = parse_prepared_file_name(&file) else {
                continue;
            };
            let path = self.path.join(&file);
            if committed.contains(&name) {
                if !read_only {
                    self.fs.remove_file(&path)?;
                    removed = true;
                }
                continue;
            }
            // No bigger than the largest batch and a name (a damaged size must not make
            // the read allocate more).
            let limit = MAX_BATCH_LEN + MAGIC.len() + 64 * 1024;
            let content = crate::fs::read_small_file(self.fs.as_ref(), &path, limit)?;
            let record = decode(&content).map_err(|reason| Error::Corruption {
                file: path.clone(),
                offset: 0,
                reason: format!("prepared transaction file: {reason}"),
            })?;
            if record.name != name {
                return Err(Error::Corruption {
                    file: path,
                    offset: 0,
                    reason: "prepared transaction file holds another transaction's name".into(),
                });
            }
            out.push(record);
        }
        if removed {
            self.fs.sync_dir(&self.path)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prepared_file_round_trips_and_damage_is_found() {
        let mut batch = WriteBatch::new();
        batch.put(b"a", b"1").delete(b"b");
        let bytes = encode(b"xa-1", &batch);
        let back = decode(&bytes).unwrap();
        assert_eq!(back.name, b"xa-1");
        assert_eq!(back.batch.len(), 2);
        assert_eq!(back.batch.records(), batch.records());
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert!(decode(&bad).is_err(), "flipped byte {i}");
        }
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "cut at {len}");
        }
    }

    #[test]
    fn file_names_carry_any_transaction_name() {
        for name in [&b"x"[..], b"", b"\x00\xff/..", b"txn-42"] {
            let file = prepared_file_name(name);
            assert!(!file.contains('/'), "{file}");
            assert_eq!(parse_prepared_file_name(&file).as_deref(), Some(name));
        }
        assert_eq!(parse_prepared_file_name("PREPARED-0.txn"), None);
        assert_eq!(parse_prepared_file_name("PREPARED-zz.txn"), None);
        assert_eq!(parse_prepared_file_name("000001.log"), None);
    }
}
