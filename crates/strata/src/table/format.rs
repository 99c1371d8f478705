//! The framing shared by every block of a table: handles, the block trailer, compression and
//! the footer.
//!
//! Byte layout (on disk; do not change):
//!
//! ```text
//! block      := contents | compression type: u8 | masked crc32c of (contents, type): u32 LE
//! contents   := raw block bytes                         (type 0, none)
//!             | varint32 raw length | compressed bytes   (types 1 snappy, 4 lz4, 7 zstd)
//! handle     := offset: varint64 | size: varint64        (size of contents, trailer excluded)
//! footer     := metaindex handle | index handle | zero padding to 39 bytes
//!               | checksum type: u8                      (0 before version 6: crc32c)
//!               | format version: u32 LE | masked crc32c of the 44 bytes before: u32 LE
//!               | magic: u64 LE                          (56 bytes, at the end of the file)
//! ```
//!
//! The block checksum is the table's [`ChecksumType`] (RocksDB's `BlockBasedTableOptions::
//! checksum`, numbered as RocksDB numbers it): crc32c as above, or xxh3, whose four bytes are
//! the low 32 bits of the 64-bit xxh3 of the contents seeded with the compression type byte,
//! stored little-endian, unmasked. The footer itself is always checked by crc32c, so that
//! it can be read before its checksum type is known. The two handles take at most 28 bytes
//! (a file offset below 2^63 takes 9 varint bytes, a block size below 2^30 five), so byte 39
//! is free in every footer ever written.
//!
//! Format versions: 1 for every table without range deletions, 2 for a table with a
//! range-deletion block (so that builds reading only version 1 refuse it), 3 for a table with
//! a partitioned index, with or without range deletions (its footer's index handle points to
//! a top-level index whose entries name index partitions, which an older build would read as
//! data blocks; see `partitioned.rs`), 4 for a table written with data-block hash indexes
//! (`data_block_hash.rs`), whatever else it holds (an older build would misread the flagged
//! restart counts of its data blocks), 5 for a table whose index block holds user keys
//! (`builder.rs`), whatever else it holds (an older build would compare its index keys as
//! internal keys, taking their last 8 bytes for a trailer), 6 for a table whose footer names
//! a checksum type other than crc32c or whose data blocks are compressed with a dictionary
//! (`compression_dict.rs`), whatever else it holds (an older build would report every block
//! as corrupt, or decompress its data blocks without the dictionary). A table without either
//! is written with the version it had before, so that older builds still read it.
//!
//! Compression type numbers are RocksDB's; compressing a block's contents, and what a reader
//! checks of a compressed block before it allocates for it, is `compression.rs`'s.

use std::path::Path;

use crate::codec::{
    crc32c, crc32c_extend, decode_fixed32, decode_fixed64, get_varint64, mask_crc, put_varint64,
    unmask_crc,
};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::perf_context::PerfTimer;
use crate::table::compression::{decompress_block, Compression, MAX_RAW_BLOCK};
use crate::table::compression_dict::DecompressionDictionary;

/// Bytes after each block's contents: compression type and checksum.
pub const BLOCK_TRAILER_LEN: usize = 5;
/// Bytes of the footer.
pub const FOOTER_LEN: usize = 56;
/// The footer's magic number ("STRATsst" read as little-endian bytes). On disk.
pub const TABLE_MAGIC: u64 = u64::from_le_bytes(*b"STRATsst");
/// The table format version of tables without range deletions (every table written before
/// them, and every table since that has none). On disk.
pub const TABLE_FORMAT_VERSION: u32 = 1;
/// The table format version of tables holding a range-deletion block (`range_del.rs`): a
/// build that reads only version 1 refuses them instead of ignoring their deletions. The
/// On disk.
pub const TABLE_FORMAT_VERSION_RANGE_DEL: u32 = 2;
/// The table format version of tables with a partitioned index (`partitioned.rs`), with or
/// without range deletions: a build that reads only versions 1 and 2 refuses them instead of
/// reading index partitions as data blocks. On disk.
pub const TABLE_FORMAT_VERSION_PARTITIONED: u32 = 3;
/// The table format version of tables written with data-block hash indexes
/// (`data_block_hash.rs`), whatever else they hold (range deletions, a partitioned index): a
/// build that reads only versions 1 to 3 refuses them instead of misreading the restart
/// count of a block that carries one. On disk.
pub const TABLE_FORMAT_VERSION_DATA_BLOCK_HASH: u32 = 4;
/// The table format version of tables whose index block holds user keys
/// (`strata.index-key-is-user-key`), whatever else they hold: a build that reads only
/// versions 1 to 4 refuses them instead of comparing the index keys as internal keys. On
/// disk.
pub const TABLE_FORMAT_VERSION_USER_KEY_INDEX: u32 = 5;
/// The table format version of tables whose footer names their checksum type (one other than
/// crc32c) or whose data blocks are compressed with a dictionary (`compression_dict.rs`),
/// whatever else they hold: a build that reads only versions 1 to 5 refuses them instead of
/// reporting every block as corrupt or decompressing without the dictionary. The newest
/// version this build reads. On disk.
pub const TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT: u32 = 6;
/// The newest table format version this build reads.
pub const NEWEST_TABLE_FORMAT_VERSION: u32 = TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT;
/// Where the footer keeps the checksum type (version 6 on).
const FOOTER_CHECKSUM_AT: usize = 39;

/// How each block's contents are checksummed (RocksDB's `ChecksumType`; the numbers are on
/// disk, in the footer, and are RocksDB's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
#[non_exhaustive]
pub enum ChecksumType {
    /// Masked crc32c (RocksDB's `kCRC32c`): every table before format version 6.
    #[default]
    Crc32c = 1,
    /// The low 32 bits of xxh3-64 (RocksDB's `kXXH3`): faster to compute on large blocks
    /// where the processor has no crc32c instruction.
    Xxh3 = 4,
}

impl ChecksumType {
    /// The checksum type stored as `byte`, if any.
    pub fn from_byte(byte: u8) -> Option<ChecksumType> {
        match byte {
            1 => Some(ChecksumType::Crc32c),
            4 => Some(ChecksumType::Xxh3),
            _ => None,
        }
    }

    /// The name used by options and tools (`crc32c`, `xxh3`).
    pub fn name(self) -> &'static str {
        match self {
            ChecksumType::Crc32c => "crc32c",
            ChecksumType::Xxh3 => "xxh3",
        }
    }

    /// The checksum type with this name.
    pub fn from_name(name: &str) -> Option<ChecksumType> {
        [ChecksumType::Crc32c, ChecksumType::Xxh3]
            .into_iter()
            .find(|c| c.name() == name)
    }

    /// The checksum stored in the trailer of `contents` whose compression type byte is
    /// `kind`.
    pub fn block_checksum(self, contents: &[u8], kind: u8) -> u32 {
        match self {
            ChecksumType::Crc32c => mask_crc(crc32c_extend(crc32c(contents), &[kind])),
            ChecksumType::Xxh3 => {
                xxhash_rust::xxh3::xxh3_64_with_seed(contents, u64::from(kind)) as u32
            }
        }
    }
}

/// What a reader needs to check and decompress a table's blocks: its checksum type and, for
/// its data blocks, its compression dictionary.
#[derive(Clone, Copy, Default)]
pub struct BlockDecoding<'a> {
    /// The table's checksum type (from its footer).
    pub checksum: ChecksumType,
    /// The dictionary the block was compressed with: a data block of a table that has one.
    pub dictionary: Option<&'a DecompressionDictionary>,
    /// Leave the block's checksum unchecked (`ReadOptions::verify_checksums` off): the
    /// compression type byte of its trailer is still read and checked to be known.
    pub skip_checksum: bool,
}

/// Where a block lives in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Bytes of the block's contents, trailer excluded.
    pub size: u64,
}

impl BlockHandle {
    /// Appends the handle's encoding.
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// Takes a handle off the front of `src`.
    pub fn decode_from(src: &mut &[u8]) -> Option<BlockHandle> {
        Some(BlockHandle {
            offset: get_varint64(src)?,
            size: get_varint64(src)?,
        })
    }
}

/// The footer: where the meta-index and index blocks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// The meta-index block (names of the filter and properties blocks).
    pub metaindex: BlockHandle,
    /// The index block.
    pub index: BlockHandle,
    /// The table format version: [`TABLE_FORMAT_VERSION`],
    /// [`TABLE_FORMAT_VERSION_RANGE_DEL`] for a table with range deletions,
    /// [`TABLE_FORMAT_VERSION_PARTITIONED`] for a table with a partitioned index, or
    /// [`TABLE_FORMAT_VERSION_DATA_BLOCK_HASH`] for a table written with data-block hash
    /// indexes, [`TABLE_FORMAT_VERSION_USER_KEY_INDEX`] for one whose index holds user keys,
    /// [`TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT`] for one checksummed by xxh3 or compressed
    /// with a dictionary.
    pub version: u32,
    /// The checksum type of every block (crc32c below version 6).
    pub checksum: ChecksumType,
}

impl Footer {
    /// The 56-byte encoding.
    pub fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut buf = Vec::with_capacity(FOOTER_LEN);
        self.metaindex.encode_to(&mut buf);
        self.index.encode_to(&mut buf);
        debug_assert!(
            buf.len() <= FOOTER_CHECKSUM_AT,
            "handles too long: {self:?}"
        );
        buf.resize(FOOTER_CHECKSUM_AT, 0);
        buf.push(
            match self.version >= TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT {
                true => self.checksum as u8,
                false => 0,
            },
        );
        buf.extend_from_slice(&self.version.to_le_bytes());
        let crc = mask_crc(crc32c(&buf));
        buf.extend_from_slice(&crc.to_le_bytes());
        buf.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        let mut out = [0u8; FOOTER_LEN];
        out.copy_from_slice(&buf);
        out
    }

    /// Decodes and checks a footer; the error says what is wrong.
    pub fn decode(bytes: &[u8]) -> std::result::Result<Footer, String> {
        if bytes.len() != FOOTER_LEN {
            return Err("file too short for a table footer".into());
        }
        if decode_fixed64(&bytes[48..]) != Some(TABLE_MAGIC) {
            return Err("bad magic number: not a Strata table".into());
        }
        let version = decode_fixed32(&bytes[40..]).unwrap_or_default();
        let stored = decode_fixed32(&bytes[44..]).unwrap_or_default();
        if unmask_crc(stored) != crc32c(&bytes[..44]) {
            return Err("footer checksum mismatch".into());
        }
        if version > NEWEST_TABLE_FORMAT_VERSION {
            return Err(format!(
                "table format version {version} is newer than this build reads ({NEWEST_TABLE_FORMAT_VERSION})"
            ));
        }
        let (handles_end, checksum) = match version >= TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT {
            false => (40, ChecksumType::Crc32c),
            true => {
                let byte = bytes[FOOTER_CHECKSUM_AT];
                let checksum = ChecksumType::from_byte(byte)
                    .ok_or_else(|| format!("unknown checksum type {byte} in the footer"))?;
                (FOOTER_CHECKSUM_AT, checksum)
            }
        };
        let mut src = &bytes[..handles_end];
        let metaindex = BlockHandle::decode_from(&mut src).ok_or("bad meta-index handle")?;
        let index = BlockHandle::decode_from(&mut src).ok_or("bad index handle")?;
        Ok(Footer {
            metaindex,
            index,
            version,
            checksum,
        })
    }
}

/// Undoes [`compress_block`], or a compression with `dictionary` (a data block of a table
/// that has one); the error says what is wrong.
pub fn decompress_block_with(
    kind: Compression,
    contents: &[u8],
    dictionary: Option<&DecompressionDictionary>,
) -> std::result::Result<Vec<u8>, String> {
    match dictionary {
        Some(d) if kind == Compression::Zstd => d.decompress_block(contents),
        _ => decompress_block(kind, contents),
    }
}

/// A block's trailer for `contents` stored with `kind`, checksummed by crc32c.
#[cfg(test)]
pub fn block_trailer(contents: &[u8], kind: Compression) -> [u8; BLOCK_TRAILER_LEN] {
    block_trailer_with(contents, kind, ChecksumType::Crc32c)
}

/// A block's trailer for `contents` stored with `kind`, checksummed by `checksum`.
pub fn block_trailer_with(
    contents: &[u8],
    kind: Compression,
    checksum: ChecksumType,
) -> [u8; BLOCK_TRAILER_LEN] {
    let sum = checksum.block_checksum(contents, kind as u8);
    let mut t = [0u8; BLOCK_TRAILER_LEN];
    t[0] = kind as u8;
    t[1..].copy_from_slice(&sum.to_le_bytes());
    t
}

/// Reads, checks (by crc32c) and decompresses the block at `handle` (one compressed without
/// a dictionary). `path` names the file in errors.
#[cfg(test)]
pub fn read_block(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: BlockHandle,
) -> Result<Vec<u8>> {
    read_block_with(file, path, handle, BlockDecoding::default())
}

/// [`read_block`] for a block checksummed and compressed as `decoding` says.
pub fn read_block_with(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: BlockHandle,
    decoding: BlockDecoding<'_>,
) -> Result<Vec<u8>> {
    let len = checked_block_len(file, path, handle)?;
    let mut buf = file.read_vec_at(handle.offset, len + BLOCK_TRAILER_LEN)?;
    match check_block(path, handle, &buf, decoding)? {
        None => {
            buf.truncate(len);
            Ok(buf)
        }
        Some(raw) => Ok(raw),
    }
}

/// The contents length of the block at `handle`, checked to be possible and to end, with its
/// trailer, inside `file`.
pub fn checked_block_len(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: BlockHandle,
) -> Result<usize> {
    let bad = |reason: String| Error::corruption(path, handle.offset, reason);
    let len = usize::try_from(handle.size)
        .ok()
        .filter(|&l| l <= MAX_RAW_BLOCK)
        .ok_or_else(|| bad(format!("block size {} is impossible", handle.size)))?;
    let fits = handle
        .offset
        .checked_add(len as u64 + BLOCK_TRAILER_LEN as u64)
        .is_some_and(|end| end <= file.size());
    if !fits {
        return Err(bad("block runs past the end of the file".into()));
    }
    Ok(len)
}

/// Checks the checksum of `stored` (a block's contents and trailer as read from the file at
/// `handle`, `handle.size + BLOCK_TRAILER_LEN` bytes) and decompresses it, as `decoding`
/// says: `None` when the block is stored raw, so that its contents are
/// `stored[..handle.size]` as they are.
pub fn check_block(
    path: &Path,
    handle: BlockHandle,
    stored: &[u8],
    decoding: BlockDecoding<'_>,
) -> Result<Option<Vec<u8>>> {
    let bad = |reason: String| Error::corruption(path, handle.offset, reason);
    let len = stored
        .len()
        .checked_sub(BLOCK_TRAILER_LEN)
        .filter(|&l| l as u64 == handle.size)
        .ok_or_else(|| bad("block shorter than its handle".into()))?;
    let (contents, trailer) = stored.split_at(len);
    if !decoding.skip_checksum {
        let timer = PerfTimer::start();
        let stored_sum = decode_fixed32(&trailer[1..]).unwrap_or_default();
        let actual = decoding.checksum.block_checksum(contents, trailer[0]);
        timer.stop(|c| &c.block_checksum_time);
        if stored_sum != actual {
            return Err(bad(format!(
                "block checksum mismatch ({})",
                decoding.checksum.name()
            )));
        }
    }
    let kind = Compression::from_byte(trailer[0])
        .ok_or_else(|| bad(format!("unknown compression type {}", trailer[0])))?;
    if kind == Compression::None {
        return Ok(None);
    }
    let timer = PerfTimer::start();
    let raw = decompress_block_with(kind, contents, decoding.dictionary)
        .map(Some)
        .map_err(bad);
    timer.stop(|c| &c.block_decompress_time);
    raw
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trips_and_detects_damage() {
        let f = Footer {
            metaindex: BlockHandle {
                offset: 1234,
                size: 56,
            },
            index: BlockHandle {
                offset: u64::MAX >> 1,
                size: 99,
            },
            version: TABLE_FORMAT_VERSION_RANGE_DEL,
            checksum: ChecksumType::Crc32c,
        };
        let xxh3 = Footer {
            version: TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT,
            checksum: ChecksumType::Xxh3,
            ..f
        };
        for f in [f, xxh3] {
            let bytes = f.encode();
            assert_eq!(Footer::decode(&bytes), Ok(f));
            for i in 0..FOOTER_LEN {
                let mut d = bytes;
                d[i] ^= 0x20;
                assert!(Footer::decode(&d).is_err(), "flip at {i} undetected");
            }
        }
    }

    /// A version 6 footer names its checksum type in byte 39; an unknown one is refused by
    /// name. Before version 6 the byte is padding and the checksum crc32c.
    #[test]
    fn footers_record_the_checksum_type_from_version_6() {
        let footer = |version, checksum| Footer {
            metaindex: BlockHandle {
                offset: (1 << 63) - 1,
                size: (1 << 30) - 1,
            },
            index: BlockHandle {
                offset: (1 << 63) - 1,
                size: (1 << 30) - 1,
            },
            version,
            checksum,
        };
        let v6 = footer(TABLE_FORMAT_VERSION_CHECKSUM_AND_DICT, ChecksumType::Xxh3);
        let mut bytes = v6.encode();
        assert_eq!(bytes[FOOTER_CHECKSUM_AT], 4);
        assert_eq!(Footer::decode(&bytes), Ok(v6));
        bytes[FOOTER_CHECKSUM_AT] = 2; // RocksDB's kxxHash, which Strata does not write
        let crc = mask_crc(crc32c(&bytes[..44]));
        bytes[44..48].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            Footer::decode(&bytes),
            Err("unknown checksum type 2 in the footer".to_string())
        );
        let v5 = footer(TABLE_FORMAT_VERSION_USER_KEY_INDEX, ChecksumType::Crc32c);
        assert_eq!(v5.encode()[FOOTER_CHECKSUM_AT], 0);
        assert_eq!(Footer::decode(&v5.encode()), Ok(v5));
    }

    /// Each checksum type catches a flipped bit of the contents or of the type byte, and
    /// the two disagree (a table read with the wrong one fails).
    #[test]
    fn block_checksums_cover_contents_and_type() {
        let contents = b"some block contents".repeat(20);
        for checksum in [ChecksumType::Crc32c, ChecksumType::Xxh3] {
            let sum = checksum.block_checksum(&contents, 0);
            assert_ne!(sum, checksum.block_checksum(&contents, 7));
            let mut flipped = contents.clone();
            flipped[100] ^= 4;
            assert_ne!(sum, checksum.block_checksum(&flipped, 0));
            assert_eq!(ChecksumType::from_name(checksum.name()), Some(checksum));
            assert_eq!(ChecksumType::from_byte(checksum as u8), Some(checksum));
        }
        assert_ne!(
            ChecksumType::Crc32c.block_checksum(&contents, 0),
            ChecksumType::Xxh3.block_checksum(&contents, 0)
        );
    }

    /// Every version up to the newest this build writes is read; a newer one is refused,
    /// naming both (what a build without data-block hash indexes says of version 4).
    #[test]
    fn footers_of_newer_format_versions_are_refused_naming_the_versions() {
        let footer = |version| Footer {
            metaindex: BlockHandle::default(),
            index: BlockHandle::default(),
            version,
            checksum: ChecksumType::Crc32c,
        };
        for version in 1..=NEWEST_TABLE_FORMAT_VERSION {
            assert_eq!(
                Footer::decode(&footer(version).encode()),
                Ok(footer(version))
            );
        }
        let err = Footer::decode(&footer(7).encode()).unwrap_err();
        assert_eq!(
            err,
            "table format version 7 is newer than this build reads (6)"
        );
    }
}
