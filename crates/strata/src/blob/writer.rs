//! Writing a blob file front to back (layout in the parent module).
//!
//! The writer hands back each value's [`BlobIndex`] as it appends the record; the references
//! may be installed in the tree only after [`BlobFileWriter::finish`] has written the footer
//! and the file has been synced, which `finish` does.

use std::path::{Path, PathBuf};

use super::{
    BlobFileSummary, BlobIndex, BLOB_FORMAT_VERSION, FOOTER_MAGIC, HEADER_LEN, HEADER_MAGIC,
    RECORD_PREFIX_LEN,
};
use crate::codec::{crc32c, mask_crc, put_varint32};
use crate::error::{Error, Result};
use crate::fs::{FileSystem, WritableFile};
use crate::table::format::{compress_block, Compression};
use crate::write_batch::{MAX_KEY_LEN, MAX_VALUE_LEN};

/// Appends values to a new blob file.
pub struct BlobFileWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    number: u64,
    compression: Compression,
    offset: u64,
    records: u64,
    value_bytes: u64,
    /// Reused between records.
    record: Vec<u8>,
    compressed: Vec<u8>,
}

impl BlobFileWriter {
    /// Creates blob file `number` at `path` for the values of column family `column_family`,
    /// compressed with `compression` where that saves at least an eighth of a value.
    pub fn create(
        fs: &dyn FileSystem,
        path: &Path,
        number: u64,
        column_family: u32,
        compression: Compression,
    ) -> Result<BlobFileWriter> {
        let file = fs.create_writable(path)?;
        BlobFileWriter::new(file, path, number, column_family, compression)
    }

    /// [`BlobFileWriter::create`] over a file already created (one whose writes are counted,
    /// say); `path` names it in errors.
    pub fn new(
        mut file: Box<dyn WritableFile>,
        path: &Path,
        number: u64,
        column_family: u32,
        compression: Compression,
    ) -> Result<BlobFileWriter> {
        file.append(&encode_header(column_family, compression))?;
        Ok(BlobFileWriter {
            file,
            path: path.to_path_buf(),
            number,
            compression,
            offset: HEADER_LEN as u64,
            records: 0,
            value_bytes: 0,
            record: Vec::new(),
            compressed: Vec::new(),
        })
    }

    /// Appends `value` of `key` and returns where it is.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<BlobIndex> {
        if key.len() > MAX_KEY_LEN || value.len() > MAX_VALUE_LEN {
            return Err(Error::InvalidArgument(format!(
                "blob file {}: a key of {} bytes or a value of {} bytes is over the limits",
                self.path.display(),
                key.len(),
                value.len()
            )));
        }
        let kind = compress_block(self.compression, value, &mut self.compressed);
        let stored: &[u8] = if kind == Compression::None {
            value
        } else {
            &self.compressed
        };
        let record = &mut self.record;
        record.clear();
        record.extend_from_slice(&[0; 4]);
        record.push(kind as u8);
        put_varint32(record, key.len() as u32);
        put_varint32(record, stored.len() as u32);
        record.extend_from_slice(key);
        record.extend_from_slice(stored);
        let crc = mask_crc(crc32c(&record[4..]));
        record[..4].copy_from_slice(&crc.to_le_bytes());
        debug_assert!(record.len() > RECORD_PREFIX_LEN);
        self.file.append(record)?;
        let index = BlobIndex {
            file_number: self.number,
            offset: self.offset,
            size: record.len() as u64,
        };
        self.offset += record.len() as u64;
        self.records += 1;
        self.value_bytes += value.len() as u64;
        Ok(index)
    }

    /// The file's number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Bytes written so far, header included.
    pub fn file_size(&self) -> u64 {
        self.offset
    }

    /// Records added so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes the footer and syncs the file. The directory entry is the caller's to sync,
    /// with the other files of the same step.
    pub fn finish(mut self) -> Result<BlobFileSummary> {
        let footer = encode_footer(self.records, self.value_bytes);
        self.file.append(&footer)?;
        self.file.sync()?;
        Ok(BlobFileSummary {
            records: self.records,
            value_bytes: self.value_bytes,
            file_size: self.offset + footer.len() as u64,
        })
    }
}

/// The header of a file of `column_family`'s values.
pub(super) fn encode_header(column_family: u32, compression: Compression) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(HEADER_MAGIC);
    h[8..12].copy_from_slice(&BLOB_FORMAT_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&column_family.to_le_bytes());
    h[16] = compression as u8;
    let crc = mask_crc(crc32c(&h[..20]));
    h[20..].copy_from_slice(&crc.to_le_bytes());
    h
}

/// The footer of a file of `records` records holding `value_bytes` bytes of values.
pub(super) fn encode_footer(records: u64, value_bytes: u64) -> [u8; super::FOOTER_LEN] {
    let mut f = [0u8; super::FOOTER_LEN];
    f[..8].copy_from_slice(&records.to_le_bytes());
    f[8..16].copy_from_slice(&value_bytes.to_le_bytes());
    let crc = mask_crc(crc32c(&f[..16]));
    f[16..20].copy_from_slice(&crc.to_le_bytes());
    f[20..].copy_from_slice(FOOTER_MAGIC);
    f
}
