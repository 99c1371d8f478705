//! Blob files: values kept apart from the tree (key-value separation, as WiscKey and RocksDB's
//! integrated BlobDB do), so that compactions rewrite small references instead of large
//! values.
//!
//! A blob file `NNNNNN.blob` is written once, front to back, and never changed; it takes its
//! number from the counter every numbered file shares. The tree keeps, in place of a
//! separated value, a [`BlobIndex`]: the file, the offset and the size of the value's record.
//! A reader fetches a record with one positioned read, checks its checksum and that it holds
//! the key it was looked up for, so that a damaged file or a wrong reference is an error
//! naming both, never a wrong value.
//!
//! Byte layout (integers little-endian; varints as in the rest of the formats):
//!
//! ```text
//! header (24 bytes)
//!   magic           8   "STRTBLOB"
//!   format version  4   u32 (1)
//!   column family   4   u32: the family whose values the file holds
//!   compression     1   the compression the writer was asked for (records say their own)
//!   reserved        3   zero
//!   crc             4   masked crc32c of the 20 bytes above
//! records, one per value, back to back (a BlobIndex names the first byte of one)
//!   crc             4   masked crc32c of the rest of the record
//!   compression     1   how this value is stored (none when compressing saved too little)
//!   key length      varint32
//!   value length    varint32 (bytes stored)
//!   key
//!   value
//! footer (28 bytes)
//!   records         8   u64: how many records the file holds
//!   value bytes     8   u64: the values' bytes before compression
//!   crc             4   masked crc32c of the 16 bytes above
//!   magic           8   "STRTBEND"
//! ```
//!
//! A file without its footer was not finished (a crash while writing it): it is never
//! referenced by the tree, since the references are installed only after the file is
//! finished and synced, and it is removed as an orphan. The one exception is a file the
//! write path put values in as it went (`Options::blob_separation_at_write`): the WAL names
//! its records before it is finished, so open keeps it while a WAL to replay reads from it.

pub(crate) mod reader;
pub(crate) mod writer;

use crate::codec::{get_varint64, put_varint64};

/// The first bytes of every blob file.
pub const HEADER_MAGIC: &[u8; 8] = b"STRTBLOB";
/// The last bytes of every finished blob file.
pub const FOOTER_MAGIC: &[u8; 8] = b"STRTBEND";
/// The blob format version this build writes and reads.
pub const BLOB_FORMAT_VERSION: u32 = 1;
/// Bytes of the header.
pub const HEADER_LEN: usize = 24;
/// Bytes of the footer.
pub const FOOTER_LEN: usize = 28;
/// The fixed part of a record before its varints: crc and compression.
pub const RECORD_PREFIX_LEN: usize = 5;
/// The largest record a reader accepts (a corrupt size must not allocate gigabytes): a
/// value of the largest size the database takes, its key, and the record's own bytes.
pub const MAX_RECORD_LEN: u64 =
    (crate::write_batch::MAX_VALUE_LEN + crate::write_batch::MAX_KEY_LEN + 64) as u64;

/// Where a separated value lives: what the tree stores in its place.
///
/// Encoded as three varint64s: file number, offset of the record, size of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlobIndex {
    /// The blob file's number.
    pub file_number: u64,
    /// Offset of the record's first byte in the file.
    pub offset: u64,
    /// Bytes of the whole record, checksum to the value's last byte. Also what dropping the
    /// reference adds to the file's garbage.
    pub size: u64,
}

impl BlobIndex {
    /// Appends the encoding to `dst`.
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.file_number);
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// The encoding as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(30);
        self.encode_to(&mut out);
        out
    }

    /// Decodes a whole reference; `None` if `src` is not exactly one.
    pub fn decode(mut src: &[u8]) -> Option<BlobIndex> {
        let index = BlobIndex {
            file_number: get_varint64(&mut src)?,
            offset: get_varint64(&mut src)?,
            size: get_varint64(&mut src)?,
        };
        src.is_empty().then_some(index)
    }
}

impl std::fmt::Display for BlobIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "blob {:06} at {} ({} bytes)",
            self.file_number, self.offset, self.size
        )
    }
}

/// What a finished blob file holds, as its footer records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileSummary {
    /// Records in the file.
    pub records: u64,
    /// The values' bytes before compression.
    pub value_bytes: u64,
    /// Bytes of the whole file.
    pub file_size: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_round_trips_and_refuses_trailing_or_missing_bytes() {
        let cases = [
            BlobIndex {
                file_number: 7,
                offset: HEADER_LEN as u64,
                size: 40,
            },
            BlobIndex {
                file_number: u64::MAX,
                offset: u64::MAX - 1,
                size: MAX_RECORD_LEN,
            },
        ];
        for index in cases {
            let bytes = index.encode();
            assert_eq!(BlobIndex::decode(&bytes), Some(index));
            let mut longer = bytes.clone();
            longer.push(0);
            assert_eq!(BlobIndex::decode(&longer), None, "{index}");
            assert_eq!(
                BlobIndex::decode(&bytes[..bytes.len() - 1]),
                None,
                "{index}"
            );
        }
        assert_eq!(BlobIndex::decode(&[]), None);
    }
}
