//! The file-system layer: a small trait the engine does all its IO through, the POSIX
//! implementation (its calls that differ between operating systems are in `platform`), and
//! the IO counters that write-amp and IO-per-operation come from.
//!
//! Tests can plug in another [`FileSystem`] through [`crate::Options::fs`]: [`fault::FaultFs`]
//! crashes at a chosen operation and simulates power loss. Every byte the engine writes or reads is counted in [`IoStats`] by
//! purpose ([`IoClass`]), at the point where the engine knows why it does the IO.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};

pub mod direct;
pub mod fault;
#[cfg(unix)]
mod mmap;
mod platform;

/// A file open for appending. Every `append` reaches the operating system before it returns
/// (no user-space buffering), so a killed process loses nothing appended; `sync` makes it
/// survive a power cut. The one exception is a file created for direct IO
/// ([`FileSystem::create_writable_direct`]), which holds a partial block in memory until its
/// next `sync` (see [`direct`]).
///
/// The example of [`FileSystem`] writes one.
pub trait WritableFile: Send {
    /// Appends all of `data`.
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Makes everything appended durable (fdatasync).
    fn sync(&mut self) -> Result<()>;
    /// Bytes in the file.
    fn len(&self) -> u64;
    /// True when nothing was appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A handle that makes what was appended so far durable from another thread while
    /// appends go on, so that a later [`WritableFile::sync`] has little left to write; `None`
    /// (the default) where the file has none, and only `sync` makes it durable.
    fn background_sync(&self) -> Option<BackgroundSync> {
        None
    }
}

/// Makes a file's appended bytes durable (fdatasync) from another thread: see
/// [`WritableFile::background_sync`]. A file system gives one for its own files with
/// [`BackgroundSync::from_fn`]; [`BackgroundSync::new`] is the one of a file of the operating
/// system's.
pub struct BackgroundSync {
    sync: Box<dyn Fn() -> Result<()> + Send + Sync>,
}

impl BackgroundSync {
    /// A handle syncing `file` (another descriptor of the file being appended to), named
    /// `path` in errors.
    pub fn new(file: File, path: PathBuf) -> BackgroundSync {
        BackgroundSync::from_fn(move || {
            file.sync_data()
                .map_err(|e| Error::io("fdatasync", &path, e))
        })
    }

    /// A handle whose `sync` calls `sync`: for a file system whose files are not the
    /// operating system's.
    pub fn from_fn(sync: impl Fn() -> Result<()> + Send + Sync + 'static) -> BackgroundSync {
        BackgroundSync {
            sync: Box::new(sync),
        }
    }

    /// Makes what was appended before the call durable.
    pub fn sync(&self) -> Result<()> {
        (self.sync)()
    }
}

/// A file read from start to end.
pub trait SequentialFile: Send {
    /// Reads up to `buf.len()` bytes; 0 means end of file.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;
}

/// A file read at arbitrary offsets (tables).
///
/// The example of [`FileSystem`] reads one.
pub trait RandomAccessFile: Send + Sync {
    /// Reads exactly `buf.len()` bytes at `offset`; fails if the file is shorter.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Reads exactly `len` bytes at `offset` into a new buffer; fails if the file is shorter.
    /// Table blocks are read this way. The default zeroes the buffer, then reads into it; a
    /// file system that can fill a buffer without zeroing it first should (zeroing took a
    /// quarter of the instructions of random reads from the page cache).
    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.read_exact_at(offset, &mut buf)?;
        Ok(buf)
    }
    /// Bytes in the file.
    fn size(&self) -> u64;
    /// Hints that this handle reads at random offsets, so the operating system reads no more
    /// than asked (no readahead around each block). Tables opened for user reads take it, as
    /// RocksDB's `advise_random_on_open`: a point read from disk then costs one block's pages,
    /// not a readahead window. Compactions open their own handles and keep readahead. The
    /// default does nothing.
    fn advise_random(&self) {}
    /// The whole file as bytes in memory, shared, when this handle is a memory mapping
    /// (`Options::allow_mmap_reads`): tables then read uncompressed blocks in place instead
    /// of copying them. The default (and any handle that is not a mapping) says `None`.
    fn mapped(&self) -> Option<Arc<dyn MappedBytes>> {
        None
    }
}

/// A file's contents held in memory, immutable while they are held (a read-only memory
/// mapping: see [`RandomAccessFile::mapped`]).
pub trait MappedBytes: Send + Sync {
    /// The whole file.
    fn bytes(&self) -> &[u8];
}

/// A held lock on a database directory; dropping it releases the lock.
pub trait FileLock: Send + Sync {}

/// The operations the engine needs from a file system.
///
/// # Examples
///
/// ```
/// use strata::fs::{FileSystem, PosixFs};
///
/// let dir = tempfile::tempdir()?;
/// let fs = PosixFs; // what `Options::default().fs` is
/// let path = dir.path().join("notes");
/// let mut file = fs.create_writable(&path)?;
/// file.append(b"hello, ")?;
/// file.append(b"world")?;
/// file.sync()?; // durable from here on
/// assert_eq!(file.len(), 12);
/// drop(file);
///
/// let reader = fs.open_random(&path)?;
/// assert_eq!(reader.read_vec_at(7, 5)?, b"world");
/// assert_eq!(fs.list_dir(dir.path())?, ["notes"]);
/// fs.rename(&path, &dir.path().join("renamed"))?;
/// fs.sync_dir(dir.path())?; // makes the rename durable
/// assert!(!fs.exists(&path));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait FileSystem: Send + Sync {
    /// Creates `path` and its parents.
    fn create_dir_all(&self, path: &Path) -> Result<()>;
    /// Creates (or truncates) `path` for appending.
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Opens `path` to read it front to back.
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>>;
    /// Opens `path` for reads at any offset.
    fn open_random(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>>;
    /// Opens `path` for reads at any offset that bypass the operating system's page cache
    /// (`O_DIRECT`; see [`direct`]). The default refuses with an `Unsupported` IO error: a
    /// file system without direct IO says so, and a database opened with direct IO on it
    /// fails at open naming the option.
    fn open_random_direct(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        Err(no_direct_io(path))
    }
    /// Opens `path`, a file nothing writes while it is open, for reads at any offset from a
    /// read-only memory mapping of it (`Options::allow_mmap_reads`). The default opens it
    /// as [`FileSystem::open_random`] does: the reads are the same, only without the mapping.
    fn open_random_mmap(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        self.open_random(path)
    }
    /// Creates (or truncates) `path` for appending with direct IO (see [`direct`]). The
    /// default refuses, as [`FileSystem::open_random_direct`].
    fn create_writable_direct(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Err(no_direct_io(path))
    }
    /// Names (not paths) of the entries in directory `path`.
    fn list_dir(&self, path: &Path) -> Result<Vec<String>>;
    /// True if `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Size of file `path` in bytes.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Shortens file `path` to `len` bytes and makes that durable.
    fn truncate(&self, path: &Path, len: u64) -> Result<()>;
    /// Removes file `path`.
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Atomically renames `from` to `to`.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Makes the directory's entries (created, renamed, removed files) durable.
    fn sync_dir(&self, path: &Path) -> Result<()>;
    /// Makes the contents of the existing file at `path` durable (fdatasync), as a sync of a
    /// writer on it would.
    fn sync_file(&self, path: &Path) -> Result<()>;
    /// Takes an exclusive lock on `path` (created if missing); fails with `Busy` if another
    /// process or handle holds it.
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>>;
    /// Bytes free for an unprivileged writer on the file system holding `path` (a
    /// compaction checks this before it starts).
    fn available_space(&self, path: &Path) -> Result<u64>;
    /// Makes `to` a hard link to the file `from` (a checkpoint shares the tables it copies
    /// this way), or, where the file system cannot link them, a synced copy. The default
    /// copies.
    fn link_or_copy(&self, from: &Path, to: &Path) -> Result<()> {
        copy_file(self, from, to)
    }
}

/// How the engine opens the table and blob files that user reads go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadMode {
    /// Positional reads through the page cache.
    Buffered,
    /// Direct IO around the page cache (`Options::use_direct_reads`).
    Direct,
    /// A read-only memory mapping (`Options::allow_mmap_reads`).
    Mmap,
}

impl ReadMode {
    /// Opens `path` in this mode.
    pub fn open(self, fs: &dyn FileSystem, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        match self {
            ReadMode::Buffered => fs.open_random(path),
            ReadMode::Direct => fs.open_random_direct(path),
            ReadMode::Mmap => fs.open_random_mmap(path),
        }
    }
}

fn no_direct_io(path: &Path) -> Error {
    Error::io(
        "open (O_DIRECT)",
        path,
        std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this file system does not implement direct IO",
        ),
    )
}

/// Copies the file `from` to a new file `to` and syncs the copy.
pub(crate) fn copy_file<F: FileSystem + ?Sized>(fs: &F, from: &Path, to: &Path) -> Result<()> {
    let mut src = fs.open_sequential(from)?;
    let mut dst = fs.create_writable(to)?;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        dst.append(&buf[..n])?;
    }
    dst.sync()
}

/// Reads a small file whole (at most `limit` bytes are kept; the rest is ignored).
pub(crate) fn read_small_file(fs: &dyn FileSystem, path: &Path, limit: usize) -> Result<Vec<u8>> {
    let mut content = Vec::new();
    let mut file = fs.open_sequential(path)?;
    let mut buf = [0u8; 256];
    while content.len() < limit {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        content.extend_from_slice(&buf[..n]);
    }
    content.truncate(limit);
    Ok(content)
}

/// Replaces `dir/name` with `content` atomically and durably: a temporary file written and
/// synced, renamed over the target, then the directory synced.
pub(crate) fn write_file_atomically(
    fs: &dyn FileSystem,
    dir: &Path,
    name: &str,
    content: &[u8],
) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let mut f = fs.create_writable(&tmp)?;
    f.append(content)?;
    f.sync()?;
    drop(f);
    fs.rename(&tmp, &dir.join(name))?;
    fs.sync_dir(dir)
}

/// A writable file that refuses every write: the WAL and manifest of a database opened
/// read-only, so that a write that gets that far fails naming why.
pub(crate) struct ReadOnlyFile {
    path: PathBuf,
}

impl ReadOnlyFile {
    pub fn new(path: PathBuf) -> ReadOnlyFile {
        ReadOnlyFile { path }
    }

    fn refuse(&self) -> Error {
        Error::Unavailable(format!("{} is open read-only", self.path.display()))
    }
}

impl WritableFile for ReadOnlyFile {
    fn append(&mut self, _data: &[u8]) -> Result<()> {
        Err(self.refuse())
    }

    fn sync(&mut self) -> Result<()> {
        Err(self.refuse())
    }

    fn len(&self) -> u64 {
        0
    }
}

/// The real file system, through the standard library (appends, positional reads, fdatasync,
/// flock).
///
/// The example of [`FileSystem`] uses it.
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixFs;

struct PosixWritable {
    file: File,
    path: PathBuf,
    len: u64,
}

impl WritableFile for PosixWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.file
            .write_all(data)
            .map_err(|e| Error::io("append to", &self.path, e))?;
        self.len += data.len() as u64;
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| Error::io("fdatasync", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn background_sync(&self) -> Option<BackgroundSync> {
        // A descriptor of its own (not a duplicate sharing this one's open file): a write-back
        // error is then reported to both syncs, where a shared one reports it to whichever
        // syncs first, and this file's own sync could pass over data lost meanwhile.
        let file = File::open(&self.path).ok()?;
        Some(BackgroundSync::new(file, self.path.clone()))
    }
}

struct PosixSequential {
    file: File,
    path: PathBuf,
}

impl SequentialFile for PosixSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.file.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io("read", &self.path, e)),
            }
        }
    }
}

struct PosixRandom {
    file: File,
    path: PathBuf,
    size: u64,
}

impl RandomAccessFile for PosixRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        platform::read_exact_at(&self.file, buf, offset)
            .map_err(|e| Error::io("read", &self.path, e))
    }

    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        platform::read_vec_at(&self.file, offset, len).map_err(|e| Error::io("read", &self.path, e))
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn advise_random(&self) {
        platform::advise_random(&self.file);
    }
}

struct PosixLock {
    _file: File,
}

impl FileLock for PosixLock {}

impl FileSystem for PosixFs {
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        fs::create_dir_all(path).map_err(|e| Error::io("create directory", path, e))
    }

    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io("create", path, e))?;
        Ok(Box::new(PosixWritable {
            file,
            path: path.to_path_buf(),
            len: 0,
        }))
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        Ok(Box::new(PosixSequential {
            file,
            path: path.to_path_buf(),
        }))
    }

    fn open_random(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
        let size = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        Ok(Box::new(PosixRandom {
            file,
            path: path.to_path_buf(),
            size,
        }))
    }

    fn open_random_direct(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(direct::DirectRandom::open(path)?))
    }

    fn create_writable_direct(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Ok(Box::new(direct::DirectWritable::create(path)?))
    }

    fn open_random_mmap(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        #[cfg(unix)]
        return Ok(Box::new(mmap::SharedMmap::open(path)?));
        #[cfg(not(unix))]
        self.open_random(path)
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        let entries = fs::read_dir(path).map_err(|e| Error::io("list directory", path, e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("list directory", path, e))?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        fs::metadata(path)
            .map(|m| m.len())
            .map_err(|e| Error::io("stat", path, e))
    }

    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io("open for truncate", path, e))?;
        file.set_len(len)
            .map_err(|e| Error::io("truncate", path, e))?;
        file.sync_all().map_err(|e| Error::io("fsync", path, e))
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| Error::io("remove", path, e))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| Error::io("rename", from, e))
    }

    fn sync_file(&self, path: &Path) -> Result<()> {
        let file = File::open(path).map_err(|e| Error::io("open for sync", path, e))?;
        file.sync_data()
            .map_err(|e| Error::io("fdatasync", path, e))
    }

    fn link_or_copy(&self, from: &Path, to: &Path) -> Result<()> {
        match fs::hard_link(from, to) {
            Ok(()) => Ok(()),
            // Another file system (EXDEV), or one without hard links: copy.
            Err(e)
                if e.kind() == std::io::ErrorKind::CrossesDevices
                    || e.kind() == std::io::ErrorKind::Unsupported =>
            {
                copy_file(self, from, to)
            }
            Err(e) => Err(Error::io("hard-link", from, e)),
        }
    }

    fn sync_dir(&self, path: &Path) -> Result<()> {
        platform::sync_dir(path).map_err(|e| Error::io("fsync directory", path, e))
    }

    fn available_space(&self, path: &Path) -> Result<u64> {
        // Where the platform cannot tell, report no limit: compactions then start as if the
        // disk had room (the module doc of `platform` says which platforms).
        let space = platform::available_space(path).map_err(|e| Error::io("statvfs", path, e))?;
        Ok(space.unwrap_or(u64::MAX))
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io("open lock file", path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(Box::new(PosixLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::Busy(format!(
                "{} is locked: the database is open in another process or handle",
                path.display()
            ))),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io("lock", path, e)),
        }
    }
}

/// Why the engine did some IO. The classes are what write-amp and read IO are split by.
///
/// The example of [`IoSnapshot`] reads the bytes of each class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoClass {
    /// Write-ahead log appends.
    Wal,
    /// Tables written by memtable flushes.
    Flush,
    /// Tables written by compactions.
    Compaction,
    /// Manifest and other metadata.
    Meta,
    /// Reads on behalf of a user get or iterator.
    UserRead,
    /// Reads during open and recovery.
    Recovery,
}

const CLASSES: usize = 6;

/// Bytes and syncs counted per [`IoClass`], plus user payload written. Cheap relaxed atomics.
#[derive(Debug, Default)]
pub struct IoStats {
    written: [AtomicU64; CLASSES],
    read: [AtomicU64; CLASSES],
    syncs: [AtomicU64; CLASSES],
}

/// A copy of [`IoStats`] at one moment.
///
/// # Examples
///
/// ```
/// use strata::fs::IoClass;
/// use strata::{Db, Options, WriteOptions};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// let mut durable = WriteOptions::default();
/// durable.sync = true;
/// db.put_opt(b"key", b"value", &durable)?;
/// db.flush()?;
/// let io = db.stats().io;
/// assert!(io.written(IoClass::Wal) > 0); // the WAL record
/// assert!(io.written(IoClass::Flush) > 0); // the table
/// assert!(io.syncs(IoClass::Wal) >= 1);
/// assert!(io.total_written() >= io.written(IoClass::Wal) + io.written(IoClass::Flush));
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct IoSnapshot {
    /// Bytes written per class, indexed by `IoClass as usize`.
    pub written: [u64; CLASSES],
    /// Bytes read per class.
    pub read: [u64; CLASSES],
    /// fdatasync / fsync calls per class.
    pub syncs: [u64; CLASSES],
}

impl IoSnapshot {
    /// Bytes written in `class`.
    pub fn written(&self, class: IoClass) -> u64 {
        self.written[class as usize]
    }
    /// Bytes read in `class`.
    pub fn read(&self, class: IoClass) -> u64 {
        self.read[class as usize]
    }
    /// Syncs in `class`.
    pub fn syncs(&self, class: IoClass) -> u64 {
        self.syncs[class as usize]
    }
    /// All bytes written, every class.
    pub fn total_written(&self) -> u64 {
        self.written.iter().sum()
    }
}

impl IoStats {
    /// Counts `n` bytes written for `class`.
    #[inline]
    pub fn add_written(&self, class: IoClass, n: u64) {
        self.written[class as usize].fetch_add(n, Ordering::Relaxed);
    }
    /// Counts `n` bytes read for `class`.
    #[inline]
    pub fn add_read(&self, class: IoClass, n: u64) {
        self.read[class as usize].fetch_add(n, Ordering::Relaxed);
    }
    /// Counts one sync for `class`.
    #[inline]
    pub fn add_sync(&self, class: IoClass) {
        self.syncs[class as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Sets every count back to zero.
    pub fn reset(&self) {
        for a in self.written.iter().chain(&self.read).chain(&self.syncs) {
            a.store(0, Ordering::Relaxed);
        }
    }

    /// The counters now.
    pub fn snapshot(&self) -> IoSnapshot {
        let load = |a: &[AtomicU64; CLASSES]| std::array::from_fn(|i| a[i].load(Ordering::Relaxed));
        IoSnapshot {
            written: load(&self.written),
            read: load(&self.read),
            syncs: load(&self.syncs),
        }
    }
}

/// A writable file that counts its bytes and syncs into an [`IoStats`] class.
pub(crate) struct CountedFile {
    inner: Box<dyn WritableFile>,
    stats: Arc<IoStats>,
    class: IoClass,
}

impl CountedFile {
    pub fn new(inner: Box<dyn WritableFile>, stats: Arc<IoStats>, class: IoClass) -> Self {
        CountedFile {
            inner,
            stats,
            class,
        }
    }
}

impl WritableFile for CountedFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.inner.append(data)?;
        self.stats.add_written(self.class, data.len() as u64);
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        self.inner.sync()?;
        self.stats.add_sync(self.class);
        Ok(())
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn background_sync(&self) -> Option<BackgroundSync> {
        self.inner.background_sync()
    }
}

#[cfg(test)]
mod tests;
