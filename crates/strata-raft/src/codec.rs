//! Encoding of what the adapter stores, and conversion of errors into openraft's.
//!
//! Log entries, votes, log ids, memberships and client sessions are stored as JSON (openraft's
//! types derive serde): self-describing, so a stored record can be read by eye with
//! `strata scan`, and a field added later is skipped by an older reader. Log indexes are keys
//! in big-endian order so that the engine's byte order is log order.

use openraft::{AnyError, StorageError, StorageIOError};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The key of log index `index`: 8 bytes, big-endian, so byte order is index order.
pub fn index_key(index: u64) -> [u8; 8] {
    index.to_be_bytes()
}

/// The index of a log key written by [`index_key`].
pub fn key_index(key: &[u8]) -> Result<u64, String> {
    let bytes: [u8; 8] = key
        .try_into()
        .map_err(|_| format!("log key of {} bytes, not 8", key.len()))?;
    Ok(u64::from_be_bytes(bytes))
}

/// Encodes a value for storage.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(value)
}

/// Decodes a stored value.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    serde_json::from_slice(bytes)
}

/// An error of the adapter's own making, given to openraft as a message.
pub fn message(text: impl ToString) -> AnyError {
    AnyError::error(text)
}

/// A read error of the log.
pub fn read_logs(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::read_logs(&e).into()
}

/// A write error of the log.
pub fn write_logs(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::write_logs(&e).into()
}

/// A read error of the vote.
pub fn read_vote(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::read_vote(&e).into()
}

/// A write error of the vote.
pub fn write_vote(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::write_vote(&e).into()
}

/// A read error of the state machine.
pub fn read_sm(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::read_state_machine(&e).into()
}

/// A write error of the state machine.
pub fn write_sm(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::write_state_machine(&e).into()
}

/// A read error of a snapshot.
pub fn read_snapshot(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::read_snapshot(None, &e).into()
}

/// A write error of a snapshot.
pub fn write_snapshot(e: impl std::error::Error + 'static) -> StorageError<u64> {
    StorageIOError::write_snapshot(None, &e).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_keys_sort_as_indexes() {
        let mut keys: Vec<[u8; 8]> = [300u64, 2, 1 << 40, 0, 255, 256]
            .iter()
            .map(|&i| index_key(i))
            .collect();
        keys.sort();
        let back: Vec<u64> = keys.iter().map(|k| key_index(k).unwrap()).collect();
        assert_eq!(back, vec![0, 2, 255, 256, 300, 1 << 40]);
        assert!(key_index(b"short").is_err());
    }
}
