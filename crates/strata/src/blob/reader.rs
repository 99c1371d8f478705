//! Reading a blob file: one value by its reference, or every record in order (for garbage
//! collection, `verify` and dumps). Layout in the parent module.
//!
//! Opening checks the header and the footer. A value is fetched with one positioned read of
//! the record its [`BlobIndex`] names; the record's checksum, its bounds and its key are
//! checked before the value is handed back, so a damaged file or a reference into the wrong
//! place is a corruption error naming the file, the offset and the reference.

use std::path::{Path, PathBuf};

use super::{
    BlobFileSummary, BlobIndex, BLOB_FORMAT_VERSION, FOOTER_LEN, FOOTER_MAGIC, HEADER_LEN,
    HEADER_MAGIC, MAX_RECORD_LEN, RECORD_PREFIX_LEN,
};
use crate::codec::{crc32c, decode_fixed32, decode_fixed64, get_varint32, unmask_crc};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::table::compression::{decompress_block, Compression};

/// An open, finished blob file.
pub struct BlobFileReader {
    file: Box<dyn RandomAccessFile>,
    path: PathBuf,
    number: u64,
    column_family: u32,
    summary: BlobFileSummary,
    /// Where the footer starts: no record reaches past it.
    records_end: u64,
}

/// The value of `key` at `index` in a blob file that may not be finished: one a write put
/// values in as it went (`Options::blob_separation_at_write`), which a crash left without
/// its footer. The record is checked as [`BlobFileReader::get`] checks it, against the bytes
/// the file has instead of its footer; `path` names the file in errors.
pub fn read_unfinished(
    file: &dyn RandomAccessFile,
    path: &Path,
    key: &[u8],
    index: &BlobIndex,
) -> Result<Vec<u8>> {
    let bad = |reason: String| Error::corruption(path, index.offset, format!("{index}: {reason}"));
    if !fits_before(index, file.size()) {
        return Err(bad(format!(
            "outside the file's {} bytes (the write that put it there was lost?)",
            file.size()
        )));
    }
    let bytes = file.read_vec_at(index.offset, index.size as usize)?;
    let record = decode_record(&bytes, *index).map_err(bad)?;
    if record.key != key {
        return Err(bad(format!(
            "holds the value of key {}, not of {}",
            crate::util::printable(&record.key),
            crate::util::printable(key)
        )));
    }
    Ok(record.value)
}

/// Whether `index` names a record of a possible size that lies after the header and ends at
/// or before `end`.
fn fits_before(index: &BlobIndex, end: u64) -> bool {
    index.offset >= HEADER_LEN as u64
        && index.size > RECORD_PREFIX_LEN as u64
        && index.size <= MAX_RECORD_LEN
        && index
            .offset
            .checked_add(index.size)
            .is_some_and(|e| e <= end)
}

/// One record as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRecord {
    /// Where the record is.
    pub index: BlobIndex,
    /// The key it was written for.
    pub key: Vec<u8>,
    /// The value, decompressed.
    pub value: Vec<u8>,
}

impl BlobFileReader {
    /// Opens blob file `number` read from `file`; `path` names it in errors.
    pub fn open(file: Box<dyn RandomAccessFile>, path: &Path, number: u64) -> Result<Self> {
        let bad = |offset: u64, reason: String| Error::corruption(path, offset, reason);
        let size = file.size();
        if size < (HEADER_LEN + FOOTER_LEN) as u64 {
            return Err(bad(
                0,
                format!("{size} bytes is too short for a blob file (not finished?)"),
            ));
        }
        let header = file.read_vec_at(0, HEADER_LEN)?;
        if &header[..8] != HEADER_MAGIC {
            return Err(bad(0, "not a blob file (bad magic)".into()));
        }
        let stored = decode_fixed32(&header[20..]).unwrap_or_default();
        if unmask_crc(stored) != crc32c(&header[..20]) {
            return Err(bad(0, "blob file header checksum mismatch".into()));
        }
        let version = decode_fixed32(&header[8..]).unwrap_or_default();
        if version != BLOB_FORMAT_VERSION {
            return Err(bad(
                8,
                format!("blob format version {version}; this build reads {BLOB_FORMAT_VERSION}"),
            ));
        }
        let column_family = decode_fixed32(&header[12..]).unwrap_or_default();
        let records_end = size - FOOTER_LEN as u64;
        let footer = file.read_vec_at(records_end, FOOTER_LEN)?;
        if &footer[20..] != FOOTER_MAGIC {
            return Err(bad(
                records_end,
                "blob file has no footer (not finished, or cut short)".into(),
            ));
        }
        let stored = decode_fixed32(&footer[16..]).unwrap_or_default();
        if unmask_crc(stored) != crc32c(&footer[..16]) {
            return Err(bad(
                records_end,
                "blob file footer checksum mismatch".into(),
            ));
        }
        let summary = BlobFileSummary {
            records: decode_fixed64(&footer[..8]).unwrap_or_default(),
            value_bytes: decode_fixed64(&footer[8..]).unwrap_or_default(),
            file_size: size,
        };
        Ok(BlobFileReader {
            file,
            path: path.to_path_buf(),
            number,
            column_family,
            summary,
            records_end,
        })
    }

    /// The file's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The column family whose values the file holds.
    pub fn column_family(&self) -> u32 {
        self.column_family
    }

    /// What the footer says the file holds.
    pub fn summary(&self) -> BlobFileSummary {
        self.summary
    }

    /// The value of `key` at `index`, checked: the reference must point into this file's
    /// records, the record's checksum must hold, and it must be `key`'s.
    pub fn get(&self, key: &[u8], index: &BlobIndex) -> Result<Vec<u8>> {
        let record = self.read_record(index)?;
        if record.key != key {
            return Err(Error::corruption(
                &self.path,
                index.offset,
                format!(
                    "{index} holds the value of key {}, not of {}",
                    crate::util::printable(&record.key),
                    crate::util::printable(key)
                ),
            ));
        }
        Ok(record.value)
    }

    /// The record `index` names, checked as in [`get`](Self::get) except for the key.
    pub fn read_record(&self, index: &BlobIndex) -> Result<BlobRecord> {
        self.check_bounds(index)?;
        let bytes = self.file.read_vec_at(index.offset, index.size as usize)?;
        self.decode(&bytes, index)
    }

    /// Refuses a reference that does not lie within this file's records.
    fn check_bounds(&self, index: &BlobIndex) -> Result<()> {
        let bad = |reason: String| Error::corruption(&self.path, index.offset, reason);
        if index.file_number != self.number {
            return Err(bad(format!("{index} is a reference into another file")));
        }
        if !fits_before(index, self.records_end) {
            return Err(bad(format!(
                "{index} is outside the file's records ({HEADER_LEN}..{})",
                self.records_end
            )));
        }
        Ok(())
    }

    /// The record `bytes` read for `index`, checked; the error names the file and reference.
    fn decode(&self, bytes: &[u8], index: &BlobIndex) -> Result<BlobRecord> {
        decode_record(bytes, *index).map_err(|reason| {
            Error::corruption(&self.path, index.offset, format!("{index}: {reason}"))
        })
    }

    /// Every record in file order, each checked; stops at the first error. The count must
    /// match the footer's.
    pub fn records(&self) -> Records<'_> {
        Records {
            reader: self,
            offset: HEADER_LEN as u64,
            seen: 0,
            failed: false,
            buf: Vec::new(),
            buf_start: 0,
        }
    }

    /// Reads every record and checks it; the summary on success.
    pub fn verify(&self) -> Result<BlobFileSummary> {
        let mut value_bytes = 0u64;
        for record in self.records() {
            value_bytes += record?.value.len() as u64;
        }
        if value_bytes != self.summary.value_bytes {
            return Err(Error::corruption(
                &self.path,
                self.records_end,
                format!(
                    "the records hold {value_bytes} bytes of values, the footer says {}",
                    self.summary.value_bytes
                ),
            ));
        }
        Ok(self.summary)
    }
}

/// The records of a blob file in order (see [`BlobFileReader::records`]).
pub struct Records<'a> {
    reader: &'a BlobFileReader,
    offset: u64,
    seen: u64,
    failed: bool,
    /// File bytes from `buf_start` on, read [`SCAN_CHUNK`] at a time, so that a pass over
    /// the file reads each byte once and in large pieces.
    buf: Vec<u8>,
    buf_start: u64,
}

/// Bytes a pass over the records reads at once.
const SCAN_CHUNK: usize = 256 << 10;

impl Iterator for Records<'_> {
    type Item = Result<BlobRecord>;

    fn next(&mut self) -> Option<Result<BlobRecord>> {
        if self.failed {
            return None;
        }
        let r = self.reader;
        if self.offset == r.records_end {
            if self.seen != r.summary.records {
                self.failed = true;
                return Some(Err(Error::corruption(
                    &r.path,
                    self.offset,
                    format!(
                        "{} records found, the footer says {}",
                        self.seen, r.summary.records
                    ),
                )));
            }
            return None;
        }
        let result = self.read_next();
        match &result {
            Ok(record) => {
                self.offset += record.index.size;
                self.seen += 1;
            }
            Err(_) => self.failed = true,
        }
        Some(result)
    }
}

impl Records<'_> {
    /// `len` bytes of the records at `offset`, from the buffer, refilled when it does not
    /// hold them.
    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        let held = offset >= self.buf_start
            && offset + len as u64 <= self.buf_start + self.buf.len() as u64;
        if !held {
            let r = self.reader;
            let want = (len.max(SCAN_CHUNK) as u64).min(r.records_end - offset) as usize;
            self.buf = r.file.read_vec_at(offset, want)?;
            self.buf_start = offset;
        }
        let at = (offset - self.buf_start) as usize;
        Ok(&self.buf[at..at + len])
    }

    /// The record at `self.offset`: its size comes from its own varints.
    fn read_next(&mut self) -> Result<BlobRecord> {
        let (r, offset) = (self.reader, self.offset);
        // The prefix and both varints fit in 15 bytes.
        let peek = (r.records_end - offset).min(RECORD_PREFIX_LEN as u64 + 10) as usize;
        let head = self.bytes(offset, peek)?;
        let mut src = head.get(RECORD_PREFIX_LEN..).unwrap_or_default();
        let before = src.len();
        let (Some(key_len), Some(value_len)) = (get_varint32(&mut src), get_varint32(&mut src))
        else {
            return Err(Error::corruption(
                &r.path,
                offset,
                "record with a bad length",
            ));
        };
        let size =
            (RECORD_PREFIX_LEN + before - src.len()) as u64 + key_len as u64 + value_len as u64;
        let index = BlobIndex {
            file_number: r.number,
            offset,
            size,
        };
        r.check_bounds(&index)?;
        let record = self.bytes(offset, size as usize)?;
        r.decode(record, &index)
    }
}

/// Parses and checks the record `bytes` read for `index`.
fn decode_record(bytes: &[u8], index: BlobIndex) -> std::result::Result<BlobRecord, String> {
    let stored = decode_fixed32(bytes).ok_or("record shorter than its checksum")?;
    if unmask_crc(stored) != crc32c(&bytes[4..]) {
        return Err("record checksum mismatch".into());
    }
    let kind = Compression::from_byte(bytes[4])
        .ok_or_else(|| format!("unknown compression {}", bytes[4]))?;
    let mut src = &bytes[RECORD_PREFIX_LEN..];
    let key_len = get_varint32(&mut src).ok_or("bad key length")? as usize;
    let value_len = get_varint32(&mut src).ok_or("bad value length")? as usize;
    if key_len.checked_add(value_len) != Some(src.len()) {
        return Err(format!(
            "a key of {key_len} and a value of {value_len} bytes do not fill the record's {}",
            src.len()
        ));
    }
    let (key, stored) = src.split_at(key_len);
    let value = decompress_block(kind, stored)?;
    Ok(BlobRecord {
        index,
        key: key.to_vec(),
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::super::writer::BlobFileWriter;
    use super::*;
    use crate::fs::{FileSystem, PosixFs};
    use crate::util::Rng;

    /// Writes `values` (key i, value) to a blob file; their references.
    fn write(
        dir: &Path,
        compression: Compression,
        values: &[Vec<u8>],
    ) -> (PathBuf, Vec<BlobIndex>) {
        let path = dir.join("000009.blob");
        let mut w = BlobFileWriter::create(&PosixFs, &path, 9, 3, compression).unwrap();
        let refs = values
            .iter()
            .enumerate()
            .map(|(i, v)| w.add(format!("key{i:04}").as_bytes(), v).unwrap())
            .collect();
        let summary = w.finish().unwrap();
        assert_eq!(summary.file_size, std::fs::metadata(&path).unwrap().len());
        (path, refs)
    }

    fn open(path: &Path) -> Result<BlobFileReader> {
        BlobFileReader::open(PosixFs.open_random(path)?, path, 9)
    }

    fn values(rng: &mut Rng) -> Vec<Vec<u8>> {
        // Compressible and random values, an empty one, and one large one.
        let mut out = vec![Vec::new(), vec![b'x'; 100_000]];
        for i in 0..50 {
            let len = rng.below(3000) as usize;
            out.push(if i % 2 == 0 {
                vec![b'a' + (i % 26) as u8; len]
            } else {
                (0..len).map(|_| rng.next_u64() as u8).collect()
            });
        }
        out
    }

    #[test]
    fn every_value_reads_back_by_its_reference_and_in_order() {
        let mut rng = Rng::new(1);
        for compression in [
            Compression::None,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let dir = tempfile::tempdir().unwrap();
            let values = values(&mut rng);
            let (path, refs) = write(dir.path(), compression, &values);
            let reader = open(&path).unwrap();
            assert_eq!(reader.column_family(), 3);
            assert_eq!(reader.summary().records, values.len() as u64);
            for (i, (v, r)) in values.iter().zip(&refs).enumerate() {
                let key = format!("key{i:04}");
                assert_eq!(
                    &reader.get(key.as_bytes(), r).unwrap(),
                    v,
                    "{compression:?}"
                );
            }
            let all: Vec<BlobRecord> = reader.records().map(|r| r.unwrap()).collect();
            assert_eq!(all.len(), values.len());
            for (i, rec) in all.iter().enumerate() {
                assert_eq!(rec.index, refs[i]);
                assert_eq!(rec.value, values[i]);
            }
            reader.verify().unwrap();
            if compression != Compression::None {
                // The long run of one byte was stored compressed.
                assert!(refs[1].size < 20_000, "{compression:?}: {}", refs[1]);
            }
        }
    }

    #[test]
    fn a_reference_to_the_wrong_key_or_place_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let (path, refs) = write(
            dir.path(),
            Compression::None,
            &[b"v0".to_vec(), b"v1".to_vec()],
        );
        let reader = open(&path).unwrap();
        let wrong_key = reader.get(b"key0001", &refs[0]).unwrap_err().to_string();
        assert!(wrong_key.contains("not of key0001"), "{wrong_key}");
        assert!(wrong_key.contains("000009.blob"), "{wrong_key}");
        let cases = [
            (
                "another file",
                BlobIndex {
                    file_number: 8,
                    ..refs[0]
                },
            ),
            (
                "shifted",
                BlobIndex {
                    offset: refs[0].offset + 1,
                    ..refs[0]
                },
            ),
            (
                "too long",
                BlobIndex {
                    size: refs[0].size + 1,
                    ..refs[0]
                },
            ),
            (
                "past the end",
                BlobIndex {
                    offset: refs[1].offset + 10,
                    ..refs[1]
                },
            ),
            (
                "in the header",
                BlobIndex {
                    offset: 0,
                    ..refs[0]
                },
            ),
            (
                "huge",
                BlobIndex {
                    size: u64::MAX,
                    ..refs[0]
                },
            ),
        ];
        for (what, index) in cases {
            let err = reader.get(b"key0000", &index).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::Corruption, "{what}: {err}");
        }
    }

    #[test]
    fn any_damaged_byte_is_an_error_never_a_wrong_value() {
        let dir = tempfile::tempdir().unwrap();
        let values = vec![b"first value".to_vec(), vec![b'z'; 300], b"third".to_vec()];
        let (path, refs) = write(dir.path(), Compression::Snappy, &values);
        let good = std::fs::read(&path).unwrap();
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            std::fs::write(&path, &bad).unwrap();
            let Ok(reader) = open(&path) else {
                continue; // header or footer damage: refused at open
            };
            for (i, r) in refs.iter().enumerate() {
                let key = format!("key{i:04}");
                if let Ok(v) = reader.get(key.as_bytes(), r) {
                    assert_eq!(v, values[i], "byte {at} changed value {i}");
                }
            }
            let touches_a_record = at >= HEADER_LEN && at < good.len() - FOOTER_LEN;
            if touches_a_record {
                assert!(reader.verify().is_err(), "byte {at}: verify passed");
            }
        }
    }

    #[test]
    fn an_unfinished_or_foreign_file_is_refused_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write(dir.path(), Compression::None, &[vec![b'v'; 100]]);
        let good = std::fs::read(&path).unwrap();
        let cases: [(&str, Vec<u8>); 4] = [
            ("empty", Vec::new()),
            (
                "cut before the footer",
                good[..good.len() - FOOTER_LEN].to_vec(),
            ),
            ("cut inside the footer", good[..good.len() - 3].to_vec()),
            ("a table", {
                let mut t = good.clone();
                t[..8].copy_from_slice(b"notablob");
                t
            }),
        ];
        for (what, bytes) in cases {
            std::fs::write(&path, &bytes).unwrap();
            let err = open(&path)
                .err()
                .unwrap_or_else(|| panic!("{what}: opened"));
            assert_eq!(err.kind(), crate::ErrorKind::Corruption, "{what}: {err}");
            assert!(err.to_string().contains("000009.blob"), "{what}: {err}");
        }
    }
}
