//! Writing a blob file front to back (layout in the parent module).
//!
//! The writer hands back each value's [`BlobIndex`] as it appends the record; the references
//! may be installed in the tree only after [`BlobFileWriter::finish`] has written the footer
//! and the file has been synced, which `finish` does (a WAL record may name one once
//! [`BlobFileWriter::write_out`] has handed the record to the file). Records are written in chunks of about
//! 256 KiB, so the file holds whole records only once finished.

use std::path::{Path, PathBuf};

use super::{
    BlobFileSummary, BlobIndex, BLOB_FORMAT_VERSION, FOOTER_MAGIC, HEADER_LEN, HEADER_MAGIC,
    RECORD_PREFIX_LEN,
};
use crate::codec::{crc32c, mask_crc, put_varint32};
use crate::error::{Error, Result};
use crate::fs::{FileSystem, WritableFile};
use crate::table::compression::{compress_block, Compression};
use crate::write_batch::{MAX_KEY_LEN, MAX_VALUE_LEN};

/// Bytes of records gathered before they are written to the file.
const WRITE_CHUNK: usize = 256 << 10;

/// Appends values to a new blob file.
pub struct BlobFileWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    number: u64,
    compression: Compression,
    offset: u64,
    records: u64,
    value_bytes: u64,
    /// Records not yet handed to the file (at most about [`WRITE_CHUNK`] bytes).
    pending: Vec<u8>,
    /// Reused between records.
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
            pending: Vec::new(),
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
        // Records gather in `pending` and go to the file a chunk at a time: a write call per
        // value of a kilobyte would cost more than the value's copy.
        let pending = &mut self.pending;
        let start = pending.len();
        pending.extend_from_slice(&[0; 4]);
        pending.push(kind as u8);
        put_varint32(pending, key.len() as u32);
        put_varint32(pending, stored.len() as u32);
        pending.extend_from_slice(key);
        pending.extend_from_slice(stored);
        let crc = mask_crc(crc32c(&pending[start + 4..]));
        pending[start..start + 4].copy_from_slice(&crc.to_le_bytes());
        let len = (pending.len() - start) as u64;
        debug_assert!(len > RECORD_PREFIX_LEN as u64);
        if pending.len() >= WRITE_CHUNK {
            self.write_pending()?;
        }
        let index = BlobIndex {
            file_number: self.number,
            offset: self.offset,
            size: len,
        };
        self.offset += len;
        self.records += 1;
        self.value_bytes += value.len() as u64;
        Ok(index)
    }

    /// Hands the gathered records to the file.
    fn write_pending(&mut self) -> Result<()> {
        if !self.pending.is_empty() {
            self.file.append(&self.pending)?;
            self.pending.clear();
        }
        Ok(())
    }

    /// Hands every record added so far to the file, so that a reader of the file (or a
    /// process that outlives this one) finds them: what a write that put its values here
    /// does before its WAL record names them.
    pub fn write_out(&mut self) -> Result<()> {
        self.write_pending()
    }

    /// [`BlobFileWriter::write_out`], then syncs the file.
    pub fn sync(&mut self) -> Result<()> {
        self.write_pending()?;
        self.file.sync()
    }

    /// A handle that syncs what was written out so far from another thread (see
    /// [`crate::fs::WritableFile::background_sync`]).
    pub fn background_sync(&self) -> Option<crate::fs::BackgroundSync> {
        self.file.background_sync()
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
        self.pending.extend_from_slice(&footer);
        self.write_pending()?;
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
