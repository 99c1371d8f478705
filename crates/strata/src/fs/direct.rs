//! Direct IO: files read and written around the operating system's page cache (`O_DIRECT`),
//! for [`crate::Options::use_direct_reads`] and
//! [`crate::Options::use_direct_io_for_flush_and_compaction`].
//!
//! Why: a database larger than memory caches its hot blocks twice when it reads through the
//! page cache, once in the block cache and once in the kernel's pages, and the page cache's
//! share is charged to the process's memory. With direct reads the block cache is the only
//! cache, and its size is the memory the reads use.
//!
//! Invariants (the kernel refuses any direct IO breaking them with `EINVAL`):
//! - every read and write starts at a file offset that is a multiple of the file's alignment,
//!   moves a multiple of it, and uses a buffer whose address is a multiple of it. The
//!   alignment is what the file system reports for the file (`statx`'s `STATX_DIOALIGN`,
//!   Linux 6.1 and later: usually the device's logical block size, 512 bytes on most disks),
//!   or [`DIRECT_IO_ALIGN`] where it reports nothing. The smaller the alignment, the fewer
//!   bytes a read of one block brings: a 4 KiB block at a random offset spans two 4 KiB
//!   units but only nine 512-byte ones;
//! - a read asks for the aligned span around the bytes wanted, and returns only those; the
//!   file's end may cut the span short (the kernel returns what the file holds);
//! - a write buffers appends in memory and writes only whole aligned chunks. [`sync`] writes
//!   the buffered tail padded with zeros to the next aligned size, truncates the file back to
//!   its length, and keeps the tail's partial block in memory: the next chunk starts at that
//!   block again and rewrites it. So, unlike every other [`WritableFile`], a direct file holds
//!   appended bytes in memory until its next `sync` (or until it is dropped, which writes
//!   them): only tables and blob files are written this way, and the engine syncs each before
//!   anything names it, so a killed process loses only a file no manifest refers to.
//!
//! Direct IO is implemented on Linux. Elsewhere opening a file for it fails with an
//! `Unsupported` error, which a database open reports naming the option.
//!
//! [`sync`]: WritableFile::sync

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, WritableFile};

/// Alignment of offsets, lengths and buffer addresses of direct IO where the file system
/// does not report one: 4096 is the logical block size of 4Kn disks and a multiple of the 512
/// of the others.
pub const DIRECT_IO_ALIGN: usize = 4096;

/// Bytes a direct writer gathers before it writes them (a multiple of the alignment).
const WRITE_CHUNK: usize = 1 << 20;

fn align_down(n: u64, align: usize) -> u64 {
    n / align as u64 * align as u64
}

fn align_up(n: usize, align: usize) -> usize {
    n.div_ceil(align) * align
}

/// A zeroed buffer of `len` bytes whose first byte is at an address aligned to `align`: a
/// vector one alignment longer than asked, used from its first aligned byte on.
struct AlignedBuf {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    fn new(len: usize, align: usize) -> AlignedBuf {
        let bytes = vec![0u8; len + align];
        let start = bytes.as_ptr().align_offset(align);
        debug_assert!(start < align);
        AlignedBuf { bytes, start, len }
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[self.start..self.start + self.len]
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + self.len]
    }
}

/// Opens `path` with `O_DIRECT`: for reading, or created (truncated) for writing.
fn open_direct(path: &Path, write: bool) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut options = std::fs::OpenOptions::new();
        if write {
            options.write(true).create(true).truncate(true);
        } else {
            options.read(true);
        }
        options
            .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
            .open(path)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (path, write);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "direct IO is implemented on Linux only",
        ))
    }
}

/// The alignment direct IO on `file` needs: the larger of the offset and memory alignments
/// the file system reports, or [`DIRECT_IO_ALIGN`] where it reports none. Always a power of
/// two dividing [`WRITE_CHUNK`].
fn alignment_of(file: &File) -> usize {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{statx, AtFlags, StatxFlags};
        if let Ok(st) = statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN) {
            let align = st.stx_dio_offset_align.max(st.stx_dio_mem_align) as usize;
            if st.stx_mask & StatxFlags::DIOALIGN.bits() != 0
                && align.is_power_of_two()
                && align <= WRITE_CHUNK
            {
                return align;
            }
        }
    }
    let _ = file;
    DIRECT_IO_ALIGN
}

/// Reads at `offset` into `buf` until it is full or the file ends; returns the bytes read.
/// Every read but the last moves a multiple of `align`.
fn pread_full(file: &File, buf: &mut [u8], offset: u64, align: usize) -> io::Result<usize> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                // A short read of a direct file ends at the file's end: the next read would
                // start unaligned, so stop here.
                Ok(n) if n % align != 0 => return Ok(done + n),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
    #[cfg(not(unix))]
    {
        let _ = (file, buf, offset, align);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

fn pwrite_all(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.write_all_at(buf, offset)
    }
    #[cfg(not(unix))]
    {
        let _ = (file, buf, offset);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// A file read with direct IO.
pub(crate) struct DirectRandom {
    file: File,
    path: PathBuf,
    size: u64,
    align: usize,
}

impl DirectRandom {
    /// Opens `path` for direct reads.
    pub fn open(path: &Path) -> Result<DirectRandom> {
        Self::open_aligned(path, None)
    }

    /// Opens `path` for direct reads aligned to `align`, or to the file's own alignment.
    fn open_aligned(path: &Path, align: Option<usize>) -> Result<DirectRandom> {
        let file = open_direct(path, false).map_err(|e| Error::io("open (O_DIRECT)", path, e))?;
        let size = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        Ok(DirectRandom {
            align: align.unwrap_or_else(|| alignment_of(&file)),
            file,
            path: path.to_path_buf(),
            size,
        })
    }

    /// The aligned span around `[offset, offset + len)` read into an aligned buffer, and
    /// where the bytes wanted start in it.
    fn read_span(&self, offset: u64, len: usize) -> Result<(AlignedBuf, usize)> {
        let start = align_down(offset, self.align);
        let skip = (offset - start) as usize;
        let mut buf = AlignedBuf::new(align_up(skip + len, self.align), self.align);
        let read = pread_full(&self.file, buf.as_mut_slice(), start, self.align)
            .map_err(|e| Error::io("read (O_DIRECT)", &self.path, e))?;
        if read < skip + len {
            return Err(Error::io(
                "read (O_DIRECT)",
                &self.path,
                io::Error::from(io::ErrorKind::UnexpectedEof),
            ));
        }
        Ok((buf, skip))
    }
}

impl RandomAccessFile for DirectRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let (span, skip) = self.read_span(offset, buf.len())?;
        buf.copy_from_slice(&span.as_slice()[skip..skip + buf.len()]);
        Ok(())
    }

    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let (span, skip) = self.read_span(offset, len)?;
        Ok(span.as_slice()[skip..skip + len].to_vec())
    }

    fn size(&self) -> u64 {
        self.size
    }
}

/// A file written with direct IO (see the module documentation for when bytes reach it).
pub(crate) struct DirectWritable {
    file: File,
    path: PathBuf,
    align: usize,
    buf: AlignedBuf,
    /// Bytes of `buf` holding appended data not yet in the file as whole aligned chunks.
    buffered: usize,
    /// File offset of `buf`'s first byte; a multiple of the alignment.
    buf_offset: u64,
    /// Bytes appended in all.
    len: u64,
    /// True when the file holds every appended byte (at a sync, or when nothing was appended).
    written: bool,
}

impl DirectWritable {
    /// Creates (or truncates) `path` for direct writes.
    pub fn create(path: &Path) -> Result<DirectWritable> {
        Self::create_aligned(path, None)
    }

    /// Creates `path` for direct writes aligned to `align`, or to the file's own alignment.
    fn create_aligned(path: &Path, align: Option<usize>) -> Result<DirectWritable> {
        let file = open_direct(path, true).map_err(|e| Error::io("create (O_DIRECT)", path, e))?;
        let align = align.unwrap_or_else(|| alignment_of(&file));
        Ok(DirectWritable {
            file,
            path: path.to_path_buf(),
            align,
            buf: AlignedBuf::new(WRITE_CHUNK, align),
            buffered: 0,
            buf_offset: 0,
            len: 0,
            written: true,
        })
    }

    /// Writes the buffered bytes padded to the alignment, cuts the file back to its length,
    /// and keeps the last partial block at the front of the buffer.
    fn write_tail(&mut self) -> Result<()> {
        if self.buffered == 0 {
            return Ok(());
        }
        let padded = align_up(self.buffered, self.align);
        self.buf.as_mut_slice()[self.buffered..padded].fill(0);
        pwrite_all(&self.file, &self.buf.as_slice()[..padded], self.buf_offset)
            .map_err(|e| Error::io("write (O_DIRECT)", &self.path, e))?;
        self.file
            .set_len(self.len)
            .map_err(|e| Error::io("truncate", &self.path, e))?;
        let whole = self.buffered / self.align * self.align;
        self.buf.as_mut_slice().copy_within(whole..self.buffered, 0);
        self.buffered -= whole;
        self.buf_offset += whole as u64;
        Ok(())
    }
}

impl WritableFile for DirectWritable {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let room = WRITE_CHUNK - self.buffered;
            let n = room.min(data.len());
            self.buf.as_mut_slice()[self.buffered..self.buffered + n].copy_from_slice(&data[..n]);
            self.buffered += n;
            self.len += n as u64;
            self.written = false;
            data = &data[n..];
            if self.buffered == WRITE_CHUNK {
                pwrite_all(&self.file, self.buf.as_slice(), self.buf_offset)
                    .map_err(|e| Error::io("write (O_DIRECT)", &self.path, e))?;
                self.buf_offset += WRITE_CHUNK as u64;
                self.buffered = 0;
            }
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        if !self.written {
            self.write_tail()?;
            self.written = true;
        }
        self.file
            .sync_data()
            .map_err(|e| Error::io("fdatasync", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }
}

impl Drop for DirectWritable {
    fn drop(&mut self) {
        // Appended bytes reach the file even without a sync, as with the other writers
        // (durability still needs the sync).
        if !self.written {
            let _ = self.write_tail();
        }
    }
}

/// A file read through a readahead buffer: a read outside the buffer reads at least
/// `readahead` bytes from there on, and the reads after it that fall inside are served from
/// memory. For compaction inputs read with direct IO, which gets no readahead from the
/// kernel (RocksDB's `compaction_readahead_size`).
pub(crate) struct ReadaheadFile {
    inner: Box<dyn RandomAccessFile>,
    readahead: usize,
    /// The last window read: its file offset and bytes.
    window: Mutex<(u64, Vec<u8>)>,
}

impl ReadaheadFile {
    pub fn new(inner: Box<dyn RandomAccessFile>, readahead: usize) -> ReadaheadFile {
        ReadaheadFile {
            inner,
            readahead,
            window: Mutex::new((0, Vec::new())),
        }
    }

    fn with_bytes<R>(&self, offset: u64, len: usize, f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        let mut window = self.window.lock();
        let (at, bytes) = &*window;
        let inside = offset >= *at && offset + len as u64 <= at + bytes.len() as u64;
        if !inside {
            if len >= self.readahead {
                return Ok(f(&self.inner.read_vec_at(offset, len)?));
            }
            let ahead = (self.inner.size().saturating_sub(offset) as usize)
                .min(self.readahead)
                .max(len);
            *window = (offset, self.inner.read_vec_at(offset, ahead)?);
        }
        let from = (offset - window.0) as usize;
        Ok(f(&window.1[from..from + len]))
    }
}

impl RandomAccessFile for ReadaheadFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let len = buf.len();
        self.with_bytes(offset, len, |bytes| buf.copy_from_slice(bytes))
    }

    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.with_bytes(offset, len, <[u8]>::to_vec)
    }

    fn size(&self) -> u64 {
        self.inner.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that tell their offset apart: each 4-byte word is its own index.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4096) as u8).collect()
    }

    #[test]
    fn the_file_systems_alignment_is_a_power_of_two_dividing_the_write_chunk() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let align = alignment_of(&File::open(&path).unwrap());
        assert!(
            align.is_power_of_two() && WRITE_CHUNK.is_multiple_of(align),
            "{align}"
        );
    }

    #[test]
    fn writes_of_any_size_read_back_through_direct_and_buffered_reads() {
        // The file system's own alignment, and the fallback's.
        for align in [None, Some(DIRECT_IO_ALIGN)] {
            writes_read_back(align);
        }
    }

    fn writes_read_back(align: Option<usize>) {
        let dir = tempfile::tempdir().unwrap();
        let cases: &[&[usize]] = &[
            &[1],
            &[4096],
            &[4095, 1, 1],
            &[100, 5000, 3, WRITE_CHUNK, 7],
            &[WRITE_CHUNK - 1, 2, WRITE_CHUNK + 4096],
        ];
        for (i, sizes) in cases.iter().enumerate() {
            let path = dir.path().join(format!("f{i}"));
            let total: usize = sizes.iter().sum();
            let data = pattern(total);
            let mut file = DirectWritable::create_aligned(&path, align).unwrap();
            let mut at = 0;
            for (n, &size) in sizes.iter().enumerate() {
                file.append(&data[at..at + size]).unwrap();
                at += size;
                // Sync in the middle too: the partial block kept in memory is rewritten.
                if n % 2 == 0 {
                    file.sync().unwrap();
                    assert_eq!(std::fs::read(&path).unwrap(), data[..at], "case {i}");
                }
            }
            assert_eq!(file.len(), total as u64);
            file.sync().unwrap();
            drop(file);
            assert_eq!(std::fs::read(&path).unwrap(), data, "case {i}");

            let reader = DirectRandom::open_aligned(&path, align).unwrap();
            assert_eq!(reader.size(), total as u64);
            for (offset, len) in [(0, total), (total - 1, 1), (total / 3, total / 2), (1, 0)] {
                let got = reader.read_vec_at(offset as u64, len).unwrap();
                assert_eq!(
                    got,
                    data[offset..offset + len],
                    "case {i} at {offset}+{len}"
                );
                let mut buf = vec![0u8; len];
                reader.read_exact_at(offset as u64, &mut buf).unwrap();
                assert_eq!(buf, data[offset..offset + len]);
            }
            let past = reader.read_vec_at(total as u64 - 1, 2).unwrap_err();
            assert!(past.to_string().contains(&format!("f{i}")), "{past}");
        }
    }

    #[test]
    fn a_dropped_writer_leaves_every_appended_byte_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dropped");
        let data = pattern(10_000);
        let mut file = DirectWritable::create(&path).unwrap();
        file.append(&data).unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), data);
    }

    #[test]
    fn readahead_serves_reads_inside_its_window_and_reads_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ahead");
        let data = pattern(50_000);
        std::fs::write(&path, &data).unwrap();
        let file = ReadaheadFile::new(Box::new(DirectRandom::open(&path).unwrap()), 8192);
        // (offset, len): sequential steps, a step back, one larger than the window, the end.
        for (offset, len) in [
            (0, 100),
            (100, 4000),
            (4100, 5000),
            (50, 10),
            (20_000, 9000),
        ] {
            assert_eq!(
                file.read_vec_at(offset as u64, len).unwrap(),
                data[offset..offset + len]
            );
        }
        assert_eq!(file.read_vec_at(49_990, 10).unwrap(), data[49_990..]);
        assert!(file.read_vec_at(49_995, 10).is_err());
    }
}
