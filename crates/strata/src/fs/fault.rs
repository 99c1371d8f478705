//! A fault-injecting file system for crash tests: it counts the operations that change
//! files, fails the N-th and every later one (a process crash at that point), and can then
//! simulate a power cut on the files it wrote.
//!
//! It can also stand in for a small disk: with [`FaultFs::set_space_limit`], appends that
//! would take the bytes of the files it wrote past the limit fail with ENOSPC (the file is
//! left as it was), and `available_space` reports what is left.
//!
//! The power-cut model: every file loses the bytes appended after its last sync; a file
//! created since the last sync of its directory disappears. Renames count as durable once
//! done (as on ext4, which orders a rename after the data it replaces); the engine syncs the
//! directory right after each rename anyway.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{FileLock, FileSystem, PosixFs, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

#[derive(Default)]
struct FileState {
    len: u64,
    synced_len: u64,
    /// True once a directory sync made the file's name durable.
    named: bool,
}

#[derive(Default)]
struct State {
    ops: u64,
    crash_at: Option<u64>,
    crashed: bool,
    files: HashMap<PathBuf, FileState>,
    /// Bytes of the live files written through this file system.
    used: u64,
    space_limit: Option<u64>,
    /// Appends to files whose name starts or ends with this fail with ENOSPC.
    full_for: Option<String>,
    /// Appends refused for lack of space.
    enospc: u64,
}

impl State {
    /// Counts one changing operation; fails it if the crash point is reached.
    fn step(&mut self, what: &str, path: &Path) -> Result<()> {
        if self.crashed {
            return Err(crashed(what, path));
        }
        self.ops += 1;
        if self.crash_at.is_some_and(|n| self.ops >= n) {
            self.crashed = true;
            return Err(crashed(what, path));
        }
        Ok(())
    }
}

fn crashed(what: &str, path: &Path) -> Error {
    Error::io(
        "injected crash",
        path,
        std::io::Error::other(format!("{what} after the simulated crash")),
    )
}

/// The fault-injecting file system (real files underneath, through [`PosixFs`]).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use strata::fs::fault::FaultFs;
/// use strata::{Db, Options, WriteOptions};
///
/// let root = tempfile::tempdir()?;
/// let dir = root.path().join("db");
/// let fs = FaultFs::new();
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.fs = Arc::new(fs.clone());
/// let db = Db::open(&dir, options)?;
/// let mut durable = WriteOptions::default();
/// durable.sync = true;
/// db.put_opt(b"paid", b"yes", &durable)?;
/// db.put(b"draft", b"not synced")?;
/// fs.crash_at(1); // the next changing operation fails, and all after it
/// drop(db); // a dying process: its close fails
/// assert!(fs.has_crashed());
/// fs.power_loss()?; // unsynced bytes are lost
/// let db = Db::open(&dir, Options::default())?;
/// assert_eq!(db.get(b"paid")?.as_deref(), Some(&b"yes"[..]));
/// assert_eq!(db.get(b"draft")?, None);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct FaultFs {
    state: Arc<Mutex<State>>,
}

impl FaultFs {
    /// A file system that never fails until told to.
    pub fn new() -> FaultFs {
        FaultFs::default()
    }

    /// Fails the `n`-th changing operation from now on (counting from 1) and all after it.
    pub fn crash_at(&self, n: u64) {
        let mut s = self.state.lock();
        s.crash_at = Some(s.ops + n);
    }

    /// Limits the bytes of the files written through this file system (`None`: no limit).
    pub fn set_space_limit(&self, limit: Option<u64>) {
        self.state.lock().space_limit = limit;
    }

    /// Makes appends to files whose name starts or ends with `affix` (say `.sst` or
    /// `MANIFEST-`) fail with ENOSPC, as a full disk would, while other files can still be
    /// written; `None` lifts it.
    pub fn set_full_for(&self, affix: Option<&str>) {
        self.state.lock().full_for = affix.map(str::to_string);
    }

    /// Bytes of the live files written through this file system.
    pub fn used_space(&self) -> u64 {
        self.state.lock().used
    }

    /// Appends refused with ENOSPC so far.
    pub fn enospc_errors(&self) -> u64 {
        self.state.lock().enospc
    }

    /// Changing operations done so far.
    pub fn ops(&self) -> u64 {
        self.state.lock().ops
    }

    /// Lets operations through again after a crash, as a restarted process would find the
    /// files (unsynced bytes still there until a [`FaultFs::power_loss`]).
    pub fn restart(&self) {
        let mut s = self.state.lock();
        s.crashed = false;
        s.crash_at = None;
    }

    /// True once the crash point was reached.
    pub fn has_crashed(&self) -> bool {
        self.state.lock().crashed
    }

    /// Applies a power cut to the files written through this file system: unsynced bytes
    /// are cut off and files whose names were never made durable are removed.
    pub fn power_loss(&self) -> std::io::Result<()> {
        let s = self.state.lock();
        for (path, f) in &s.files {
            if !path.exists() {
                continue;
            }
            if !f.named {
                std::fs::remove_file(path)?;
            } else if f.synced_len < f.len {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)?
                    .set_len(f.synced_len)?;
            }
        }
        Ok(())
    }
}

struct FaultWritable {
    inner: Box<dyn WritableFile>,
    path: PathBuf,
    state: Arc<Mutex<State>>,
}

impl WritableFile for FaultWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let mut s = self.state.lock();
        s.step("append", &self.path)?;
        let n = data.len() as u64;
        let full_here = s.full_for.as_deref().is_some_and(|affix| {
            self.path.file_name().is_some_and(|name| {
                let name = name.to_string_lossy();
                name.starts_with(affix) || name.ends_with(affix)
            })
        });
        if full_here || s.space_limit.is_some_and(|limit| s.used + n > limit) {
            s.enospc += 1;
            return Err(Error::io(
                "append to",
                &self.path,
                std::io::Error::from_raw_os_error(28),
            ));
        }
        self.inner.append(data)?;
        s.used += n;
        if let Some(f) = s.files.get_mut(&self.path) {
            f.len += n;
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        let mut s = self.state.lock();
        s.step("sync", &self.path)?;
        self.inner.sync()?;
        if let Some(f) = s.files.get_mut(&self.path) {
            f.synced_len = f.len;
        }
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl FileSystem for FaultFs {
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        self.state.lock().step("create directory", path)?;
        PosixFs.create_dir_all(path)
    }

    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let mut s = self.state.lock();
        s.step("create", path)?;
        let inner = PosixFs.create_writable(path)?;
        if let Some(old) = s.files.insert(path.to_path_buf(), FileState::default()) {
            s.used -= old.len;
        }
        Ok(Box::new(FaultWritable {
            inner,
            path: path.to_path_buf(),
            state: self.state.clone(),
        }))
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        PosixFs.open_sequential(path)
    }

    fn open_random(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        PosixFs.open_random(path)
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        PosixFs.list_dir(path)
    }

    fn exists(&self, path: &Path) -> bool {
        PosixFs.exists(path)
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        PosixFs.file_size(path)
    }

    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.step("truncate", path)?;
        PosixFs.truncate(path, len)?;
        if let Some(f) = s.files.get_mut(path) {
            s.used = s.used - f.len + len.min(f.len);
            f.len = len.min(f.len);
            f.synced_len = f.len;
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let mut s = self.state.lock();
        s.step("remove", path)?;
        PosixFs.remove_file(path)?;
        if let Some(f) = s.files.remove(path) {
            s.used -= f.len;
        }
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut s = self.state.lock();
        s.step("rename", from)?;
        PosixFs.rename(from, to)?;
        if let Some(mut f) = s.files.remove(from) {
            f.named = true;
            if let Some(old) = s.files.insert(to.to_path_buf(), f) {
                s.used -= old.len;
            }
        }
        Ok(())
    }

    fn sync_file(&self, path: &Path) -> Result<()> {
        let mut s = self.state.lock();
        s.step("sync", path)?;
        PosixFs.sync_file(path)?;
        if let Some(f) = s.files.get_mut(path) {
            f.synced_len = f.len;
        }
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> Result<()> {
        let mut s = self.state.lock();
        s.step("sync directory", path)?;
        PosixFs.sync_dir(path)?;
        for (p, f) in s.files.iter_mut() {
            if p.parent() == Some(path) {
                f.named = true;
            }
        }
        Ok(())
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        PosixFs.lock(path)
    }

    fn available_space(&self, path: &Path) -> Result<u64> {
        let s = self.state.lock();
        match s.space_limit {
            Some(limit) => Ok(limit.saturating_sub(s.used)),
            None => PosixFs.available_space(path),
        }
    }
}
