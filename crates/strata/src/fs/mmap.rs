//! Memory-mapped reads ([`crate::Options::allow_mmap_reads`], RocksDB's option): a table or
//! blob file mapped whole and read-only, so that a block read that misses the block cache is
//! a copy out of the page cache without a system call.
//!
//! Invariants (what makes the `unsafe` below sound):
//! - the mapping is `PROT_READ` and `MAP_SHARED` of a file the engine never writes or
//!   truncates while it is open: tables and blob files are written whole and synced before
//!   any reader opens them, and are only unlinked (a mapping outlives its name) once no
//!   reader holds them. A file changed under the mapping by another process is outside what
//!   the engine promises, as for any file it reads;
//! - the pointer and length stay valid from `mmap` to the `munmap` in `Drop`, and nothing
//!   hands out a slice that outlives `&self`;
//! - the bytes are only read, from any thread (the mapping is immutable), so the file is
//!   `Send` and `Sync`.
//!
//! A handle to a mapping ([`SharedMmap`]) hands out the mapping itself
//! ([`RandomAccessFile::mapped`]) so that a table can keep blocks that borrow it: the mapping
//! is unmapped when the last of them and the handle are gone.
//!
//! An empty file is not mapped (`mmap` refuses a length of 0): it reads as empty.
//!
//! Unix only; elsewhere the file is read with positional reads instead (the default of
//! [`super::FileSystem::open_random_mmap`]), which changes speed and not results.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::fs::{MappedBytes, RandomAccessFile};

/// A file mapped read-only.
pub(crate) struct MmapFile {
    /// Start of the mapping; dangling (never read) when `len` is 0.
    ptr: NonNull<u8>,
    len: usize,
    path: PathBuf,
}

// SAFETY: the mapping is read-only and immutable for its whole life (module invariants).
unsafe impl Send for MmapFile {}
// SAFETY: as above: concurrent reads of immutable memory.
unsafe impl Sync for MmapFile {}

impl MmapFile {
    /// Maps `path` whole, read-only.
    #[cfg(unix)]
    pub fn open(path: &Path) -> Result<MmapFile> {
        use rustix::mm::{mmap, MapFlags, ProtFlags};
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        let size = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        let len = usize::try_from(size).map_err(|_| {
            Error::io(
                "mmap",
                path,
                std::io::Error::other("file larger than the address space"),
            )
        })?;
        let ptr = if len == 0 {
            NonNull::dangling()
        } else {
            // SAFETY: a fresh read-only shared mapping of an open file, at an address the
            // kernel chooses; the module invariants keep the file unchanged while mapped.
            let p = unsafe {
                mmap(
                    std::ptr::null_mut(),
                    len,
                    ProtFlags::READ,
                    MapFlags::SHARED,
                    &file,
                    0,
                )
            }
            .map_err(|e| Error::io("mmap", path, e.into()))?;
            NonNull::new(p.cast::<u8>())
                .ok_or_else(|| Error::io("mmap", path, std::io::Error::other("null mapping")))?
        };
        // The mapping keeps the file's pages reachable; the descriptor is not needed.
        drop(file);
        Ok(MmapFile {
            ptr,
            len,
            path: path.to_path_buf(),
        })
    }

    /// The mapped bytes.
    fn mapped_bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr..ptr + len` is mapped and readable until `Drop` (module invariants),
        // and the slice borrows `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    fn range(&self, offset: u64, len: usize) -> Result<&[u8]> {
        usize::try_from(offset)
            .ok()
            .and_then(|start| self.mapped_bytes().get(start..start.checked_add(len)?))
            .ok_or_else(|| {
                Error::io(
                    "read (mmap)",
                    &self.path,
                    std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
                )
            })
    }
}

impl RandomAccessFile for MmapFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        buf.copy_from_slice(self.range(offset, buf.len())?);
        Ok(())
    }

    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        Ok(self.range(offset, len)?.to_vec())
    }

    fn size(&self) -> u64 {
        self.len as u64
    }

    fn advise_random(&self) {
        #[cfg(target_os = "linux")]
        if self.len > 0 {
            // SAFETY: advice on our own mapping; it changes readahead, never contents.
            let _ = unsafe {
                rustix::mm::madvise(
                    self.ptr.as_ptr().cast(),
                    self.len,
                    rustix::mm::Advice::Random,
                )
            };
        }
    }
}

impl MappedBytes for MmapFile {
    fn bytes(&self) -> &[u8] {
        self.mapped_bytes()
    }
}

/// A mapped file whose mapping can outlive the handle, held by the blocks read from it.
pub(crate) struct SharedMmap(Arc<MmapFile>);

impl SharedMmap {
    /// Maps `path` whole, read-only.
    pub fn open(path: &Path) -> Result<SharedMmap> {
        Ok(SharedMmap(Arc::new(MmapFile::open(path)?)))
    }
}

impl RandomAccessFile for SharedMmap {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.0.read_exact_at(offset, buf)
    }

    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.0.read_vec_at(offset, len)
    }

    fn size(&self) -> u64 {
        self.0.size()
    }

    fn advise_random(&self) {
        self.0.advise_random()
    }

    fn mapped(&self) -> Option<Arc<dyn MappedBytes>> {
        Some(self.0.clone())
    }
}

impl Drop for MmapFile {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping made in `open`, unmapped once; no slice of it outlives
            // `self`.
            let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_at_any_offset_match_the_file_and_past_its_end_fail_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0usize, 1, 4096, 10_000] {
            let path = dir.path().join(format!("f{len}"));
            let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            std::fs::write(&path, &data).unwrap();
            let file = MmapFile::open(&path).unwrap();
            file.advise_random();
            assert_eq!(file.size(), len as u64);
            for (offset, n) in [(0, len), (len / 2, len / 2), (len, 0)] {
                assert_eq!(
                    file.read_vec_at(offset as u64, n).unwrap(),
                    data[offset..offset + n]
                );
                let mut buf = vec![0; n];
                file.read_exact_at(offset as u64, &mut buf).unwrap();
                assert_eq!(buf, data[offset..offset + n]);
            }
            for (offset, n) in [(len as u64, 1), (u64::MAX, 2), (0, len + 1)] {
                let err = file.read_vec_at(offset, n).unwrap_err();
                assert!(err.to_string().contains(&format!("f{len}")), "{err}");
            }
        }
    }

    #[test]
    fn a_file_unlinked_while_mapped_stays_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone");
        std::fs::write(&path, b"still here").unwrap();
        let file = MmapFile::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(file.read_vec_at(6, 4).unwrap(), b"here");
    }
}
