//! Log records: the framing of the write-ahead log and of the manifest.
//!
//! A log file is a sequence of 32 KiB blocks. A record is written as one or more fragments;
//! a fragment never crosses a block boundary. Byte layout of a fragment (do not change):
//!
//! ```text
//! +---------------------+----------------+----------+-----------------+
//! | masked crc32c: u32  | length: u16 LE | type: u8 | payload (length) |
//! +---------------------+----------------+----------+-----------------+
//! ```
//!
//! - the crc covers the type byte and the payload, and is masked (`codec::mask_crc`);
//! - type is FULL (1, the whole record), or FIRST (2), MIDDLE (3), LAST (4) for a record split
//!   over blocks; 0 is never written (zero-filled space reads as corruption);
//! - a compressed record starts with COMPRESSED_FULL (5) or COMPRESSED_FIRST (6) instead of
//!   FULL or FIRST, and goes on with MIDDLE and LAST as any record; its payload, once the
//!   fragments are joined, is the algorithm's byte ([`Compression`]'s number) followed by
//!   the record compressed as a table block is (`compression.rs`: varint raw length, then
//!   the compressed bytes). A writer made [`LogWriter::compressing`] stores a record so when
//!   that saves an eighth of it, and as a plain record otherwise. Readers undo it: a record
//!   comes out of [`LogReader::read_record`] as it went in, either way. A build older than
//!   them reads a compressed record as a bad one (an unknown record type), which its
//!   recovery takes for the end of the log; the manifest is never compressed;
//! - when fewer than 7 bytes are left in a block, they are zero-filled and the next fragment
//!   starts the next block.
//!
//! The reader checks every fragment; a torn or corrupt record is reported with the byte offset
//! where it starts, so recovery can apply the point-in-time rule (keep everything before the
//! first bad record, drop everything after it).

use std::path::Path;

use crate::codec::{crc32c, crc32c_extend, decode_fixed32, mask_crc, unmask_crc};
use crate::compression::{decompress_block, Compression, CompressionOptions, Compressor};
use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, SequentialFile, WritableFile};

/// Bytes in a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// Bytes in a fragment header.
pub const HEADER_SIZE: usize = 7;

const FULL: u8 = 1;
const FIRST: u8 = 2;
const MIDDLE: u8 = 3;
const LAST: u8 = 4;
const COMPRESSED_FULL: u8 = 5;
const COMPRESSED_FIRST: u8 = 6;

/// Bytes a writer that holds its records ([`LogWriter::holding`]) gathers before it
/// appends them to the file by itself (RocksDB's WAL buffer, `writable_file_max_buffer_size`).
pub const HOLD_LIMIT: usize = 1 << 20;

/// Appends records to a log file.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    block_offset: usize,
    /// The fragments of one record, so that a record goes to the OS in one append.
    buf: Vec<u8>,
    /// Whether records are held in `held` until [`LogWriter::flush`], a sync or
    /// [`HOLD_LIMIT`] bytes (the WAL under `Options::manual_wal_flush`).
    hold: bool,
    /// Whole records not yet appended to the file, in order.
    held: Vec<u8>,
    /// The algorithm records are compressed with (`None`: stored as given), and the
    /// contexts that compress them.
    compression: Compression,
    compressor: Option<Compressor>,
    /// A compressed record being framed: its algorithm's byte, then the compressed block.
    compressed: Vec<u8>,
    /// Bytes the last record took in the log, headers and padding included.
    last_record_len: usize,
}

impl LogWriter {
    /// A writer appending to `file` (which may already hold records).
    pub fn new(file: Box<dyn WritableFile>) -> LogWriter {
        let block_offset = (file.len() % BLOCK_SIZE as u64) as usize;
        LogWriter {
            file,
            block_offset,
            buf: Vec::new(),
            hold: false,
            held: Vec::new(),
            compression: Compression::None,
            compressor: None,
            compressed: Vec::new(),
            last_record_len: 0,
        }
    }

    /// This writer, compressing each record with `compression` when that saves at least an
    /// eighth of it (module doc); zstd runs at level -1, its fast mode, which leaves the
    /// literals unencoded: a record's frame otherwise builds entropy tables for a few
    /// hundred bytes while writers wait (docs/benchmarks.md, "WAL compression"). Only the WAL is compressed (`Options::wal_compression`).
    pub fn compressing(mut self, compression: Compression) -> LogWriter {
        self.compression = compression;
        self.compressor = (compression != Compression::None).then(|| {
            Compressor::new(CompressionOptions {
                level: -1,
                ..CompressionOptions::default()
            })
        });
        self
    }

    /// This writer, holding its records in memory until [`LogWriter::flush`], a sync or
    /// [`HOLD_LIMIT`] bytes, instead of appending each to the file: one system call per
    /// megabyte of records instead of one per record. A record held is lost if the process
    /// ends before it is appended.
    pub fn holding(mut self, hold: bool) -> LogWriter {
        self.hold = hold;
        self
    }

    /// Appends the held records to the file (nothing to do when none are held). After a
    /// failure the file may hold part of them: as after a failed [`LogWriter::add_record`],
    /// its owner must not append to it again.
    pub fn flush(&mut self) -> Result<()> {
        if !self.held.is_empty() {
            self.file.append(&self.held)?;
            self.held.clear();
            if self.held.capacity() > 2 * HOLD_LIMIT {
                self.held = Vec::new(); // a huge record's room is not kept
            }
        }
        Ok(())
    }

    /// Bytes of records held, not yet appended to the file.
    #[cfg(test)]
    pub fn held_bytes(&self) -> usize {
        self.held.len()
    }

    /// Appends `data` as one record, with one call to the file. The writer's position moves
    /// only when the append succeeds; after a failed append the file may still hold part of
    /// the record, so its owner must not append to it again (the WAL stops the write path,
    /// the manifest moves to a new file).
    pub fn add_record(&mut self, data: &[u8]) -> Result<()> {
        let mut compressed = std::mem::take(&mut self.compressed);
        let (data, first_kinds) = match self.compress(data, &mut compressed) {
            true => (&compressed[..], (COMPRESSED_FULL, COMPRESSED_FIRST)),
            false => (data, (FULL, FIRST)),
        };
        let framed = self.frame(data, first_kinds);
        if compressed.capacity() <= 4 * BLOCK_SIZE {
            self.compressed = compressed; // a huge record's buffer is not kept
        }
        framed
    }

    /// Whether `data` is worth storing compressed, and if so its payload in `out`: the
    /// algorithm's byte, then the compressed block.
    fn compress(&mut self, data: &[u8], out: &mut Vec<u8>) -> bool {
        let Some(compressor) = self.compressor.as_mut() else {
            return false;
        };
        if data.len() > crate::compression::MAX_RAW_BLOCK {
            return false;
        }
        let used = compressor.compress(self.compression, data, out);
        if used == Compression::None {
            return false;
        }
        // The algorithm's byte goes first: one move of bytes already compressed.
        out.insert(0, used as u8);
        true
    }

    /// Frames `data` as one record whose first fragment is of type `first_kinds.0` (whole) or
    /// `first_kinds.1` (split), and appends it (see [`LogWriter::add_record`]).
    fn frame(&mut self, data: &[u8], first_kinds: (u8, u8)) -> Result<()> {
        self.buf.clear();
        let mut left = data;
        let mut begin = true;
        let mut block_offset = self.block_offset;
        loop {
            let leftover = BLOCK_SIZE - block_offset;
            if leftover < HEADER_SIZE {
                self.buf.extend_from_slice(&[0u8; HEADER_SIZE][..leftover]);
                block_offset = 0;
            }
            let avail = BLOCK_SIZE - block_offset - HEADER_SIZE;
            let frag_len = left.len().min(avail);
            let end = frag_len == left.len();
            let kind = match (begin, end) {
                (true, true) => first_kinds.0,
                (true, false) => first_kinds.1,
                (false, true) => LAST,
                (false, false) => MIDDLE,
            };
            let (frag, rest) = left.split_at(frag_len);
            let crc = mask_crc(crc32c_extend(crc32c(&[kind]), frag));
            self.buf.extend_from_slice(&crc.to_le_bytes());
            self.buf.extend_from_slice(&(frag_len as u16).to_le_bytes());
            self.buf.push(kind);
            self.buf.extend_from_slice(frag);
            block_offset += HEADER_SIZE + frag_len;
            left = rest;
            begin = false;
            if end {
                break;
            }
        }
        self.last_record_len = self.buf.len();
        if self.hold {
            self.held.extend_from_slice(&self.buf);
            self.block_offset = block_offset;
            if self.held.len() >= HOLD_LIMIT {
                self.flush()?;
            }
        } else {
            self.file.append(&self.buf)?;
            self.block_offset = block_offset;
        }
        if self.buf.capacity() > 4 * BLOCK_SIZE {
            self.buf = Vec::new(); // do not keep a huge record's buffer alive
        }
        Ok(())
    }

    /// Bytes the last record added took in the log (its fragments' headers, the padding of
    /// a block's end before it, and its payload, compressed or not): what the log grew by.
    pub fn last_record_len(&self) -> usize {
        self.last_record_len
    }

    /// Makes every record added so far durable (the held ones appended first).
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.file.sync()
    }

    /// A handle that syncs the records appended so far from another thread, if the file
    /// gives one (see `fs::WritableFile::background_sync`).
    pub fn background_sync(&self) -> Option<crate::fs::BackgroundSync> {
        self.file.background_sync()
    }
}

/// What went wrong with a record: where it starts and why it is bad.
#[derive(Debug, Clone)]
pub struct BadRecord {
    /// Byte offset of the start of the bad record (or fragment) in the file.
    pub offset: u64,
    /// What was wrong.
    pub reason: String,
}

impl BadRecord {
    /// The corruption error for this bad record in `path`.
    pub fn into_error(self, path: &Path) -> Error {
        Error::corruption(path, self.offset, self.reason)
    }
}

/// Why [`LogReader::read_record`] could not return the next record.
#[derive(Debug)]
pub enum ReadError {
    /// A torn or corrupt record: the good prefix of the file ends at its offset.
    Bad(BadRecord),
    /// The file could not be read.
    Io(Error),
}

impl From<Error> for ReadError {
    fn from(e: Error) -> Self {
        ReadError::Io(e)
    }
}

/// Reads the records of a log file in order.
pub struct LogReader {
    file: Box<dyn SequentialFile>,
    block: Vec<u8>,
    /// Valid bytes in `block`.
    block_len: usize,
    /// Read position in `block`.
    pos: usize,
    /// File offset of `block[0]`.
    block_start: u64,
    eof: bool,
    record: Vec<u8>,
    /// The last record returned, when it was stored compressed: `record` undone.
    plain: Vec<u8>,
    /// Whether the last record returned was stored compressed.
    last_compressed: bool,
    /// File offset just past the last whole record returned.
    end_of_last_record: u64,
    bytes_read: u64,
}

impl LogReader {
    /// A reader of `file` from its start.
    pub fn new(file: Box<dyn SequentialFile>) -> LogReader {
        LogReader {
            file,
            block: vec![0; BLOCK_SIZE],
            block_len: 0,
            pos: 0,
            block_start: 0,
            eof: false,
            record: Vec::new(),
            plain: Vec::new(),
            last_compressed: false,
            end_of_last_record: 0,
            bytes_read: 0,
        }
    }

    /// A reader resuming at `offset` of a log, the end of a whole record an earlier reader
    /// returned (a reader following a log another process appends to). `file` yields the
    /// log's bytes from the start of the block holding `offset` on. A file shorter than that
    /// is a bad record at `offset` on the first read.
    pub fn resume(file: Box<dyn SequentialFile>, offset: u64) -> Result<LogReader> {
        let in_block = (offset % BLOCK_SIZE as u64) as usize;
        let mut reader = LogReader::new(file);
        reader.block_start = offset - in_block as u64;
        reader.end_of_last_record = offset;
        reader.fill_block()?;
        // Past the bytes there are: the next read reports the short file at `offset`.
        reader.pos = in_block.min(reader.block_len);
        Ok(reader)
    }

    /// File offset just past the last whole record returned: the length of the good prefix.
    pub fn end_of_last_record(&self) -> u64 {
        self.end_of_last_record
    }

    /// Whether the last record returned was stored compressed (`wal_compression`).
    pub fn last_record_compressed(&self) -> bool {
        self.last_compressed
    }

    /// Bytes read from the file so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The next record, `Ok(None)` at a clean end of the file.
    pub fn read_record(&mut self) -> std::result::Result<Option<&[u8]>, ReadError> {
        self.record.clear();
        let mut record_start: Option<u64> = None;
        let mut compressed = false;
        loop {
            let frag_offset = self.offset();
            let Some((kind, start, len)) = self.read_fragment()? else {
                return match record_start {
                    Some(offset) => Err(bad(offset, "log ends inside a fragmented record")),
                    None => Ok(None),
                };
            };
            let payload = &self.block[start..start + len];
            match (kind, record_start) {
                (FULL | FIRST | COMPRESSED_FULL | COMPRESSED_FIRST, Some(offset)) => {
                    return Err(bad(
                        offset,
                        "fragmented record not finished before the next one",
                    ))
                }
                (MIDDLE | LAST, None) => {
                    return Err(bad(frag_offset, "record fragment without a first fragment"))
                }
                (FIRST | COMPRESSED_FIRST, None) => {
                    record_start = Some(frag_offset);
                    compressed = kind == COMPRESSED_FIRST;
                    self.record.extend_from_slice(payload);
                }
                (MIDDLE, Some(_)) => self.record.extend_from_slice(payload),
                _ => {
                    // FULL or COMPRESSED_FULL, or LAST of a fragmented record.
                    self.record.extend_from_slice(payload);
                    let start = record_start.unwrap_or(frag_offset);
                    self.last_compressed = compressed || kind == COMPRESSED_FULL;
                    if !self.last_compressed {
                        self.end_of_last_record = self.offset();
                        return Ok(Some(&self.record));
                    }
                    self.plain = decompress_record(&self.record)
                        .map_err(|reason| bad(start, &format!("compressed record: {reason}")))?;
                    self.end_of_last_record = self.offset();
                    return Ok(Some(&self.plain));
                }
            }
        }
    }

    /// Counts the whole, checksummed records that follow a bad one, by resynchronising at
    /// each following block boundary. Used to report what the point-in-time rule dropped.
    pub fn count_records_after_corruption(&mut self) -> Result<u64> {
        let mut count = 0;
        loop {
            if self.eof && self.pos >= self.block_len {
                return Ok(count);
            }
            // Skip the rest of the current block; fragments never cross a boundary.
            self.pos = self.block_len;
            loop {
                let bad_at = match self.read_record() {
                    Ok(Some(_)) => {
                        count += 1;
                        continue;
                    }
                    Ok(None) => return Ok(count),
                    Err(ReadError::Bad(b)) => b.offset,
                    Err(ReadError::Io(e)) => return Err(e),
                };
                // When the reader moved past the bad fragment (a continuation of a record that
                // started before the resync point), keep reading this block.
                if self.offset() <= bad_at {
                    break;
                }
            }
        }
    }

    fn offset(&self) -> u64 {
        self.block_start + self.pos as u64
    }

    fn fill_block(&mut self) -> Result<()> {
        self.block_start += self.block_len as u64;
        self.block_len = 0;
        self.pos = 0;
        while self.block_len < BLOCK_SIZE {
            let n = self.file.read(&mut self.block[self.block_len..])?;
            if n == 0 {
                self.eof = true;
                break;
            }
            self.block_len += n;
        }
        self.bytes_read += self.block_len as u64;
        Ok(())
    }

    /// The next fragment as (type, payload start in `block`, payload length); `None` at a
    /// clean end of file.
    fn read_fragment(&mut self) -> std::result::Result<Option<(u8, usize, usize)>, ReadError> {
        loop {
            let remaining = self.block_len - self.pos;
            if remaining < HEADER_SIZE {
                if self.eof {
                    if remaining == 0 {
                        return Ok(None);
                    }
                    return Err(bad(self.offset(), "log ends inside a record header"));
                }
                if self.block[self.pos..self.block_len].iter().any(|&b| b != 0) {
                    return Err(bad(self.offset(), "non-zero bytes in a block trailer"));
                }
                self.fill_block()?;
                continue;
            }
            let h = &self.block[self.pos..self.pos + HEADER_SIZE];
            let stored_crc = decode_fixed32(h).unwrap_or_default();
            let len = u16::from_le_bytes([h[4], h[5]]) as usize;
            let kind = h[6];
            if HEADER_SIZE + len > remaining {
                let reason = if self.eof {
                    "log ends inside a record"
                } else {
                    "record length runs past its block"
                };
                return Err(bad(self.offset(), reason));
            }
            let start = self.pos + HEADER_SIZE;
            let actual = crc32c_extend(crc32c(&[kind]), &self.block[start..start + len]);
            if unmask_crc(stored_crc) != actual {
                return Err(bad(self.offset(), "record checksum mismatch"));
            }
            if !(FULL..=COMPRESSED_FIRST).contains(&kind) {
                return Err(bad(self.offset(), &format!("unknown record type {kind}")));
            }
            self.pos = start + len;
            return Ok(Some((kind, start, len)));
        }
    }
}

/// A file read sequentially from the start of the log block holding offset `from`, up to
/// the length it had when opened: what [`LogReader::resume`] reads, without reading the
/// bytes before.
pub struct FileFrom {
    file: Box<dyn RandomAccessFile>,
    at: u64,
    end: u64,
}

impl FileFrom {
    /// File `path` from the start of the log block holding `from`.
    pub fn open(fs: &dyn crate::fs::FileSystem, path: &Path, from: u64) -> Result<FileFrom> {
        let file = fs.open_random(path)?;
        let end = file.size();
        let at = from - from % BLOCK_SIZE as u64;
        Ok(FileFrom { file, at, end })
    }
}

impl SequentialFile for FileFrom {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = (self.end.saturating_sub(self.at)).min(buf.len() as u64) as usize;
        self.file.read_exact_at(self.at, &mut buf[..n])?;
        self.at += n as u64;
        Ok(n)
    }
}

/// A compressed record's payload undone (module doc); the error says what is wrong.
fn decompress_record(payload: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let (&byte, contents) = payload.split_first().ok_or("no algorithm byte")?;
    match Compression::from_byte(byte) {
        Some(Compression::None) | None => Err(format!("unknown algorithm {byte}")),
        Some(kind) => decompress_block(kind, contents),
    }
}

fn bad(offset: u64, reason: &str) -> ReadError {
    ReadError::Bad(BadRecord {
        offset,
        reason: reason.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::compress_block_with;
    use crate::fs::{FileSystem, PosixFs};
    use crate::util::Rng;

    fn write_log(path: &Path, records: &[Vec<u8>]) {
        write_log_with(path, records, Compression::None);
    }

    fn write_log_with(path: &Path, records: &[Vec<u8>], compression: Compression) {
        let mut w = LogWriter::new(PosixFs.create_writable(path).unwrap()).compressing(compression);
        for r in records {
            w.add_record(r).unwrap();
        }
        w.sync().unwrap();
    }

    fn read_all(path: &Path) -> (Vec<Vec<u8>>, Option<BadRecord>, u64) {
        let mut r = LogReader::new(PosixFs.open_sequential(path).unwrap());
        let mut out = Vec::new();
        loop {
            match r.read_record() {
                Ok(Some(rec)) => out.push(rec.to_vec()),
                Ok(None) => return (out, None, r.end_of_last_record()),
                Err(ReadError::Bad(b)) => return (out, Some(b), r.end_of_last_record()),
                Err(ReadError::Io(e)) => panic!("{e}"),
            }
        }
    }

    /// A log held in memory, so that tests can read thousands of variants quickly.
    struct MemLog(Vec<u8>, usize);

    impl SequentialFile for MemLog {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
            let n = buf.len().min(self.0.len() - self.1);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    fn read_bytes(bytes: &[u8]) -> (Vec<Vec<u8>>, Option<BadRecord>, u64) {
        let mut r = LogReader::new(Box::new(MemLog(bytes.to_vec(), 0)));
        let mut out = Vec::new();
        loop {
            match r.read_record() {
                Ok(Some(rec)) => out.push(rec.to_vec()),
                Ok(None) => return (out, None, r.end_of_last_record()),
                Err(ReadError::Bad(b)) => return (out, Some(b), r.end_of_last_record()),
                Err(ReadError::Io(e)) => panic!("{e}"),
            }
        }
    }

    fn sample_records() -> Vec<Vec<u8>> {
        let mut rng = Rng::new(7);
        let mut recs = vec![Vec::new(), b"small".to_vec()];
        // Sizes around block and header boundaries, and records spanning several blocks.
        for len in [
            BLOCK_SIZE - 2 * HEADER_SIZE - 5,
            BLOCK_SIZE - HEADER_SIZE,
            BLOCK_SIZE,
            3 * BLOCK_SIZE + 17,
            1,
            100,
        ] {
            recs.push((0..len).map(|_| rng.next_u64() as u8).collect());
        }
        recs
    }

    /// A holding writer leaves the file as it was until a flush, a sync or the hold limit;
    /// then the file reads as a plain writer's of the same records. A plain writer appends
    /// each record at once.
    #[test]
    fn a_holding_writer_appends_its_records_at_a_flush_a_sync_or_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let recs = sample_records();
        let plain = dir.path().join("000001.log");
        write_log(&plain, &recs);
        let on_disk = |p: &Path| std::fs::read(p).unwrap();
        for hold in [false, true] {
            let p = dir.path().join(format!("hold-{hold}.log"));
            let mut w = LogWriter::new(PosixFs.create_writable(&p).unwrap()).holding(hold);
            w.add_record(&recs[1]).unwrap();
            assert_eq!(
                on_disk(&p).is_empty(),
                hold,
                "hold {hold}: one small record"
            );
            for r in &recs[2..] {
                w.add_record(r).unwrap();
            }
            assert_eq!(w.held_bytes() > 0, hold);
            w.flush().unwrap();
            assert_eq!(w.held_bytes(), 0);
            w.add_record(&recs[0]).unwrap();
            w.sync().unwrap();
            let mut expected = recs[1..].to_vec();
            expected.push(recs[0].clone());
            let (read, bad, end) = read_all(&p);
            assert!(bad.is_none(), "hold {hold}");
            assert_eq!(
                (read, end),
                (expected, on_disk(&p).len() as u64),
                "hold {hold}"
            );
        }
        // Past the limit the held records go to the file by themselves.
        let p = dir.path().join("limit.log");
        let mut w = LogWriter::new(PosixFs.create_writable(&p).unwrap()).holding(true);
        let record = vec![7u8; 1000];
        while on_disk(&p).is_empty() {
            w.add_record(&record).unwrap();
            assert!(w.held_bytes() < HOLD_LIMIT);
        }
        assert!(on_disk(&p).len() >= HOLD_LIMIT);
        // The same bytes as a plain writer's.
        let held = dir.path().join("held.log");
        let mut w = LogWriter::new(PosixFs.create_writable(&held).unwrap()).holding(true);
        for r in &recs {
            w.add_record(r).unwrap();
        }
        w.sync().unwrap();
        assert_eq!(on_disk(&held), on_disk(&plain));
    }

    /// A reader resumed at the end of each record (from the start of that record's block,
    /// as a follower of a growing log opens it) reads exactly the records after it; one
    /// resumed on a log cut inside the next record reports it torn at the resume point.
    #[test]
    fn resumed_reader_reads_the_records_after_its_offset() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("000001.log");
        let recs = sample_records();
        write_log(&p, &recs);
        let bytes = std::fs::read(&p).unwrap();
        let mut r = LogReader::new(Box::new(MemLog(bytes.clone(), 0)));
        let mut ends = vec![0];
        while let Ok(Some(_)) = r.read_record() {
            ends.push(r.end_of_last_record());
        }
        for (i, &end) in ends.iter().enumerate() {
            let block = (end - end % BLOCK_SIZE as u64) as usize;
            let from_block = Box::new(MemLog(bytes[block..].to_vec(), 0));
            let mut resumed = LogReader::resume(from_block, end).unwrap();
            let mut got = Vec::new();
            while let Some(rec) = resumed.read_record().unwrap() {
                got.push(rec.to_vec());
            }
            assert_eq!(got, recs[i..], "resumed at {end}");
            if let Some(&next_end) = ends.get(i + 1) {
                let cut = Box::new(MemLog(bytes[block..next_end as usize - 1].to_vec(), 0));
                let mut torn = LogReader::resume(cut, end).unwrap();
                match torn.read_record() {
                    Err(ReadError::Bad(b)) => assert!(b.offset >= end, "{b:?} at {end}"),
                    other => panic!("resumed at {end}: {:?}", other.map(|r| r.map(<[u8]>::len))),
                }
                assert_eq!(torn.end_of_last_record(), end);
            }
        }
    }

    /// Every algorithm a WAL may be compressed with, and none.
    const COMPRESSIONS: [Compression; 4] = [
        Compression::None,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The sample records and records that compress: half random, half runs of one byte,
    /// from a few bytes to a compressed size of more than a block.
    fn mixed_records() -> Vec<Vec<u8>> {
        let mut rng = Rng::new(11);
        let mut recs = sample_records();
        for len in [40, 1000, BLOCK_SIZE + 3, 5 * BLOCK_SIZE] {
            let record = (0..len)
                .map(|i| match (i / 16) % 2 {
                    0 => rng.next_u64() as u8,
                    _ => b'v',
                })
                .collect();
            recs.insert(recs.len() / 2, record);
        }
        recs
    }

    #[test]
    fn records_round_trip_across_block_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let recs = mixed_records();
        let mut plain_size = 0;
        for compression in COMPRESSIONS {
            let p = dir.path().join(format!("{}.log", compression.name()));
            write_log_with(&p, &recs, compression);
            let (got, bad, end) = read_all(&p);
            assert!(bad.is_none(), "{compression:?}: {bad:?}");
            assert_eq!(got, recs, "{compression:?}");
            let size = PosixFs.file_size(&p).unwrap();
            assert_eq!(end, size, "{compression:?}");
            match compression {
                Compression::None => plain_size = size,
                // The compressible half is stored in fewer bytes; the random records as
                // they are.
                _ => assert!(
                    size < plain_size * 9 / 10,
                    "{compression:?}: {size} of {plain_size}"
                ),
            }
        }
    }

    /// A compressed record is framed with the compressed first-fragment types, and one that
    /// would not save an eighth is framed as a plain record.
    #[test]
    fn a_record_is_stored_compressed_only_when_that_saves_an_eighth() {
        let cases: [(&str, Vec<u8>, Compression, u8); 5] = [
            (
                "runs of a byte, lz4",
                vec![b'a'; 500],
                Compression::Lz4,
                COMPRESSED_FULL,
            ),
            (
                "runs of a byte, zstd",
                vec![b'a'; 500],
                Compression::Zstd,
                COMPRESSED_FULL,
            ),
            (
                "runs of a byte, no compression",
                vec![b'a'; 500],
                Compression::None,
                FULL,
            ),
            ("a short record", b"abc".to_vec(), Compression::Zstd, FULL),
            (
                "random bytes",
                {
                    let mut rng = Rng::new(5);
                    (0..500).map(|_| rng.next_u64() as u8).collect()
                },
                Compression::Snappy,
                FULL,
            ),
        ];
        for (name, record, compression, kind) in cases {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("000001.log");
            write_log_with(&p, std::slice::from_ref(&record), compression);
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(bytes[6], kind, "{name}");
            assert_eq!(read_bytes(&bytes).0, vec![record], "{name}");
        }
    }

    /// A compressed record whose payload is damaged under a valid checksum (what only a
    /// fuzzer or a forger makes) is a bad record at its start, naming what is wrong; the
    /// records before it are read.
    #[test]
    fn a_damaged_compressed_payload_is_a_bad_record_naming_the_damage() {
        let mut lz4_too_long = vec![Compression::Lz4 as u8];
        crate::codec::put_varint32(&mut lz4_too_long, 1 << 20);
        lz4_too_long.extend_from_slice(&[0x10, b'a']);
        let mut zstd_cut = vec![Compression::Zstd as u8];
        let mut block = Vec::new();
        compress_block_with(
            Compression::Zstd,
            &CompressionOptions::default(),
            &[b'z'; 4000],
            &mut block,
        );
        zstd_cut.extend_from_slice(&block[..block.len() - 3]);
        let cases: [(&str, Vec<u8>, &str); 5] = [
            ("no payload", Vec::new(), "no algorithm byte"),
            (
                "algorithm none",
                vec![0, 3, b'a', b'b', b'c'],
                "unknown algorithm 0",
            ),
            (
                "an unknown algorithm",
                vec![9, 3, b'a', b'b', b'c'],
                "unknown algorithm 9",
            ),
            (
                "lz4 claiming too many bytes",
                lz4_too_long,
                "claims 1048576 raw bytes",
            ),
            ("a zstd frame cut short", zstd_cut, "zstd"),
        ];
        for (name, payload, reason) in cases {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("000001.log");
            let mut w = LogWriter::new(PosixFs.create_writable(&p).unwrap());
            w.add_record(b"before").unwrap();
            let start = w.last_record_len() as u64;
            w.frame(&payload, (COMPRESSED_FULL, COMPRESSED_FIRST))
                .unwrap();
            w.add_record(b"after").unwrap();
            w.sync().unwrap();
            let (got, bad, end) = read_all(&p);
            assert_eq!(got, vec![b"before".to_vec()], "{name}");
            let bad = bad.unwrap_or_else(|| panic!("{name}: no bad record"));
            assert_eq!((bad.offset, end), (start, start), "{name}");
            assert!(
                bad.reason.starts_with("compressed record: ") && bad.reason.contains(reason),
                "{name}: {}",
                bad.reason
            );
        }
    }

    #[test]
    fn every_truncation_yields_a_prefix_of_whole_records() {
        let dir = tempfile::tempdir().unwrap();
        let recs: Vec<Vec<u8>> = (0..40u32)
            .map(|i| vec![i as u8; (i as usize * 97) % 3000])
            .collect();
        for compression in [Compression::None, Compression::Zstd] {
            let p = dir.path().join(format!("{}.log", compression.name()));
            write_log_with(&p, &recs, compression);
            let full = std::fs::read(&p).unwrap();
            for cut in 0..full.len() {
                let (got, _bad, end) = read_bytes(&full[..cut]);
                assert!(end <= cut as u64);
                assert_eq!(got[..], recs[..got.len()], "{compression:?}: cut at {cut}");
            }
        }
    }

    #[test]
    fn flipped_bytes_are_reported_never_returned_as_data() {
        for compression in COMPRESSIONS {
            flipped_bytes_are_reported(compression);
        }
    }

    fn flipped_bytes_are_reported(compression: Compression) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("000001.log");
        let recs = mixed_records();
        write_log_with(&p, &recs, compression);
        let full = std::fs::read(&p).unwrap();
        let mut rng = Rng::new(99);
        for _ in 0..1000 {
            let mut bytes = full.clone();
            let at = rng.below(bytes.len() as u64) as usize;
            bytes[at] ^= 1 << rng.below(8);
            let (got, bad, _) = read_bytes(&bytes);
            assert_eq!(got[..], recs[..got.len()], "{compression:?}: flip at {at}");
            if got.len() < recs.len() {
                let b = bad.expect("a short read must report why");
                assert!(
                    b.offset <= at as u64,
                    "bad record at {} after flip at {at}",
                    b.offset
                );
            }
        }
    }

    #[test]
    fn records_after_a_corruption_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("000001.log");
        let recs: Vec<Vec<u8>> = (0..20).map(|_| vec![b'x'; 10_000]).collect();
        write_log(&p, &recs);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[HEADER_SIZE + 3] ^= 0xff; // first record's payload
        std::fs::write(&p, &bytes).unwrap();
        let mut r = LogReader::new(PosixFs.open_sequential(&p).unwrap());
        assert!(matches!(r.read_record(), Err(ReadError::Bad(ref b)) if b.offset == 0));
        let after = r.count_records_after_corruption().unwrap();
        // Records whose start lies in the first block are skipped with it.
        assert!((15..20).contains(&after), "{after}");
    }
}
