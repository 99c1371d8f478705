//! The calls of [`super::PosixFs`] that differ between operating systems, in one place: reads
//! at an offset, the readahead hint for files read at random, the free space of a file
//! system, and syncing a directory.
//!
//! Unix (Linux, macOS, the BSDs) has them all: `pread` through rustix (into a buffer's spare
//! capacity, without zeroing it first), `statvfs`, and `fsync` on an open directory.
//! Elsewhere each has a portable fallback, stated where it is weaker:
//! - Windows reads at an offset with `seek_read`, which moves the file's cursor; no caller
//!   relies on the cursor of a file opened for random reads, so that is harmless.
//! - The free-space check before compactions needs `statvfs`; without it the space is
//!   reported as unknown ([`available_space`] returns `None`) and every compaction is started,
//!   as if the disk had room.
//! - A directory cannot be opened and synced on Windows; its metadata (a created or renamed
//!   file) is made durable by the file system itself (NTFS journals it), so there the sync is
//!   a no-op.

use std::fs::File;
use std::io;
use std::path::Path;

/// Reads exactly `buf.len()` bytes at `offset`; fails with `UnexpectedEof` if the file is
/// shorter.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match file.seek_read(&mut buf[done..], offset + done as u64) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, offset);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "positional reads are not implemented on this platform",
        ))
    }
}

/// Reads exactly `len` bytes at `offset` into a new buffer.
pub fn read_vec_at(file: &File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    #[cfg(unix)]
    {
        // pread into the vector's spare capacity: no zeroing (a quarter of the instructions
        // of a random read from the page cache), and no unsafe code here (rustix extends the
        // length by what the kernel wrote).
        let mut buf = Vec::with_capacity(len);
        while buf.len() < len {
            let at = offset + buf.len() as u64;
            match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut buf), at) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        buf.truncate(len); // the capacity may have let it read a little more
        Ok(buf)
    }
    #[cfg(not(unix))]
    {
        let mut buf = vec![0u8; len];
        read_exact_at(file, &mut buf, offset)?;
        Ok(buf)
    }
}

/// Tells the kernel that `file` is read at random offsets, so that a read does not bring in
/// the pages after it (readahead). Only for the file descriptor given: another one open on
/// the same file keeps its readahead. A hint: where it fails, or where the platform has no
/// such call, reads are the same, only with readahead.
pub fn advise_random(file: &File) {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::Random);
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
    }
}

/// Bytes available to this process on the file system holding `path`, or `None` where the
/// platform cannot tell.
pub fn available_space(path: &Path) -> io::Result<Option<u64>> {
    #[cfg(unix)]
    {
        let stat = rustix::fs::statvfs(path)?;
        Ok(Some(stat.f_bavail.saturating_mul(stat.f_frsize)))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(None)
    }
}

/// Makes the entries of directory `path` (files created, renamed or removed in it) durable.
pub fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(path)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn positional_reads_read_exactly_what_was_written_and_refuse_past_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        File::create(&path).unwrap().write_all(&data).unwrap();
        let file = File::open(&path).unwrap();

        let mut buf = vec![0u8; 100];
        read_exact_at(&file, &mut buf, 4_000).unwrap();
        assert_eq!(buf, data[4_000..4_100]);
        assert_eq!(read_vec_at(&file, 9_990, 10).unwrap(), data[9_990..]);
        assert_eq!(read_vec_at(&file, 0, 0).unwrap(), Vec::<u8>::new());

        let past = read_vec_at(&file, 9_995, 10).unwrap_err();
        assert_eq!(past.kind(), io::ErrorKind::UnexpectedEof);
        let past = read_exact_at(&file, &mut buf, 9_999).unwrap_err();
        assert_eq!(past.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn free_space_and_directory_sync_work_on_a_real_directory() {
        let dir = tempfile::tempdir().unwrap();
        if cfg!(unix) {
            assert!(available_space(dir.path()).unwrap().unwrap() > 0);
        }
        sync_dir(dir.path()).unwrap();
        assert!(available_space(&dir.path().join("missing")).is_err() || !cfg!(unix));
    }
}
