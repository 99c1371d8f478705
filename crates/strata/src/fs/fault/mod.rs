//! A fault-injecting file system for crash tests: it counts the operations that change
//! files, fails the N-th and every later one (a process crash at that point), and can then
//! simulate a power cut on the files it wrote (`durable.rs` has the model: unsynced bytes,
//! and names not yet made durable by a directory sync, are lost).
//!
//! It also injects transient faults at random rates ([`FaultRates`]): read errors (only in
//! the threads that ask for them, [`FaultFs::read_faults_here`], so that a test can check
//! what its own reads return), write and sync errors and ENOSPC on the files whose names end
//! with one of [`FaultRates::write_fault_files`], and errors of the metadata operations
//! (create, rename, remove, directory sync) on those files. An injected transient fault
//! changes nothing on disk. Every fault is counted ([`FaultCounts`]).
//!
//! It can also stand in for a small disk: with [`FaultFs::set_space_limit`], appends that
//! would take the bytes of the files it wrote past the limit fail with ENOSPC (the file is
//! left as it was), and `available_space` reports what is left.

mod durable;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use durable::Namespace;
pub use durable::{PowerCut, PowerCutReport};

use super::{FileLock, FileSystem, PosixFs, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};
use crate::util::Rng;

/// Rates of transient faults (`one_in` 0: never), as db_stress's flags.
#[derive(Debug, Clone, Default)]
pub struct FaultRates {
    /// One read in N fails (in the threads that called [`FaultFs::read_faults_here`]).
    pub read_fault_one_in: u64,
    /// One append or sync in N of the fault-prone files fails: half of them with EIO, half
    /// with ENOSPC.
    pub write_fault_one_in: u64,
    /// One create, rename, remove or directory sync in N of the fault-prone files fails.
    pub metadata_write_fault_one_in: u64,
    /// The fault-prone files: those whose names end with one of these (say `.sst`).
    pub write_fault_files: Vec<String>,
    /// Seed of the faults.
    pub seed: u64,
}

/// Faults injected so far, by kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FaultCounts {
    /// Reads failed.
    pub read_errors: u64,
    /// Appends failed with EIO.
    pub write_errors: u64,
    /// Syncs failed.
    pub sync_errors: u64,
    /// ENOSPC from the random write faults, from [`FaultFs::set_space_limit`] and from
    /// [`FaultFs::set_full_for`].
    pub enospc: u64,
    /// Creates, renames, removes and directory syncs failed.
    pub metadata_errors: u64,
}

impl FaultCounts {
    /// All faults.
    pub fn total(&self) -> u64 {
        self.read_errors + self.write_errors + self.sync_errors + self.enospc + self.metadata_errors
    }
}

thread_local! {
    static READ_FAULTS_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[derive(Default)]
struct State {
    ops: u64,
    crash_at: Option<u64>,
    crashed: bool,
    names: Namespace,
    /// Bytes of the live files written through this file system.
    used: u64,
    space_limit: Option<u64>,
    /// Appends to files whose name starts or ends with this fail with ENOSPC.
    full_for: Option<String>,
    rates: FaultRates,
    rng: Option<Rng>,
    counts: FaultCounts,
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

    fn fault_prone(&self, path: &Path) -> bool {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        self.rates
            .write_fault_files
            .iter()
            .any(|suffix| name.ends_with(suffix.as_str()))
    }

    fn draw(&mut self, one_in: u64) -> bool {
        one_in > 0
            && self
                .rng
                .get_or_insert_with(|| Rng::new(self.rates.seed))
                .one_in(one_in)
    }

    fn draw_read_fault_one_in(&mut self) -> bool {
        let n = self.rates.read_fault_one_in;
        self.draw(n)
    }

    fn draw_write_fault_one_in(&mut self) -> bool {
        let n = self.rates.write_fault_one_in;
        self.draw(n)
    }

    fn draw_metadata_write_fault_one_in(&mut self) -> bool {
        let n = self.rates.metadata_write_fault_one_in;
        self.draw(n)
    }

    /// A metadata operation on `path`: counts it, then fails it at the metadata fault rate.
    fn metadata_step(&mut self, what: &'static str, path: &Path) -> Result<()> {
        self.step(what, path)?;
        if self.fault_prone(path) && self.draw_metadata_write_fault_one_in() {
            self.counts.metadata_errors += 1;
            return Err(injected(
                what,
                path,
                std::io::Error::other("injected metadata write error"),
            ));
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

fn injected(what: &'static str, path: &Path, e: std::io::Error) -> Error {
    Error::io(what, path, e)
}

fn enospc(path: &Path) -> Error {
    Error::io("append to", path, std::io::Error::from_raw_os_error(28))
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
/// fs.power_loss()?; // unsynced bytes and names are lost
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

    /// Fails every changing operation from now on, as a process that lost its power: what
    /// is on disk stays as it is, for [`FaultFs::write_durable_image`].
    pub fn freeze(&self) {
        self.state.lock().crashed = true;
    }

    /// Sets the rates of transient faults (see [`FaultRates`]).
    pub fn set_fault_rates(&self, rates: FaultRates) {
        let mut s = self.state.lock();
        s.rng = Some(Rng::new(rates.seed));
        s.rates = rates;
    }

    /// Makes reads from this thread fail at [`FaultRates::read_fault_one_in`] (`false`:
    /// never), on every `FaultFs`. Reads of other threads (background jobs) never fail.
    pub fn read_faults_here(on: bool) {
        READ_FAULTS_HERE.with(|c| c.set(on));
    }

    /// Faults injected so far.
    pub fn fault_counts(&self) -> FaultCounts {
        self.state.lock().counts
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
        self.state.lock().counts.enospc
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

    /// Applies a power cut, in place, to the files and directories changed through this file
    /// system: unsynced bytes are cut off; names not made durable by a directory sync are
    /// undone (new files and directories removed, removed files back, renames reverted).
    /// Nothing may have the files open any more; the file system forgets what it tracked.
    pub fn power_loss(&self) -> std::io::Result<()> {
        self.power_loss_with(&PowerCut::clean()).map(|_| ())
    }

    /// [`FaultFs::power_loss`], with unsynced tails treated as `cut` says (some left as
    /// garbage, some partly written).
    pub fn power_loss_with(&self, cut: &PowerCut) -> std::io::Result<PowerCutReport> {
        let mut s = self.state.lock();
        let report = s.names.apply_in_place(cut, &mut Rng::new(cut.seed))?;
        s.names = Namespace::default();
        s.used = 0;
        Ok(report)
    }

    /// Writes into `out` (a directory that must not exist) what a power cut now would leave
    /// of directory `dir` and what lies below it, reading the files as they are: the process
    /// writing them can go on (after a [`FaultFs::freeze`], nothing changes them any more).
    pub fn write_durable_image(
        &self,
        dir: &Path,
        out: &Path,
        cut: &PowerCut,
    ) -> std::io::Result<PowerCutReport> {
        let s = self.state.lock();
        let mut report = PowerCutReport::default();
        s.names
            .write_image(dir, out, cut, &mut Rng::new(cut.seed), &mut report)?;
        Ok(report)
    }
}

struct FaultWritable {
    inner: Box<dyn WritableFile>,
    path: PathBuf,
    inode: u64,
    state: Arc<Mutex<State>>,
}

impl WritableFile for FaultWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.step("append", &self.path)?;
        let n = data.len() as u64;
        let full_here = s.full_for.as_deref().is_some_and(|affix| {
            self.path.file_name().is_some_and(|name| {
                let name = name.to_string_lossy();
                name.starts_with(affix) || name.ends_with(affix)
            })
        });
        if full_here || s.space_limit.is_some_and(|limit| s.used + n > limit) {
            s.counts.enospc += 1;
            return Err(enospc(&self.path));
        }
        if s.fault_prone(&self.path) && s.draw_write_fault_one_in() {
            if s.draw(2) {
                s.counts.enospc += 1;
                return Err(enospc(&self.path));
            }
            s.counts.write_errors += 1;
            return Err(injected(
                "append to",
                &self.path,
                std::io::Error::other("injected write error"),
            ));
        }
        self.inner.append(data)?;
        if let Some(f) = s.names.inodes.get_mut(&self.inode) {
            f.len += n;
            if f.path.is_some() {
                s.used += n;
            }
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.step("sync", &self.path)?;
        if s.fault_prone(&self.path) && s.draw_write_fault_one_in() {
            s.counts.sync_errors += 1;
            return Err(injected(
                "fdatasync",
                &self.path,
                std::io::Error::other("injected sync error"),
            ));
        }
        self.inner.sync()?;
        if let Some(f) = s.names.inodes.get_mut(&self.inode) {
            f.synced_len = f.len;
        }
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }
}

/// A file being read, failing reads at the read fault rate in the threads that asked.
struct FaultReader<R> {
    inner: R,
    path: PathBuf,
    state: Arc<Mutex<State>>,
}

impl<R> FaultReader<R> {
    fn fault(&self) -> Result<()> {
        if !READ_FAULTS_HERE.with(std::cell::Cell::get) {
            return Ok(());
        }
        let mut s = self.state.lock();
        if s.draw_read_fault_one_in() {
            s.counts.read_errors += 1;
            return Err(injected(
                "read",
                &self.path,
                std::io::Error::other("injected read error"),
            ));
        }
        Ok(())
    }
}

impl RandomAccessFile for FaultReader<Box<dyn RandomAccessFile>> {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.fault()?;
        self.inner.read_exact_at(offset, buf)
    }

    fn read_vec_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.fault()?;
        self.inner.read_vec_at(offset, len)
    }

    fn size(&self) -> u64 {
        self.inner.size()
    }

    fn advise_random(&self) {
        self.inner.advise_random();
    }
}

impl SequentialFile for FaultReader<Box<dyn SequentialFile>> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.fault()?;
        self.inner.read(buf)
    }
}

impl FaultFs {
    fn reader<R>(&self, inner: R, path: &Path) -> FaultReader<R> {
        FaultReader {
            inner,
            path: path.to_path_buf(),
            state: self.state.clone(),
        }
    }
}

impl FileSystem for FaultFs {
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        let mut s = self.state.lock();
        s.step("create directory", path)?;
        let missing: Vec<&Path> = path.ancestors().take_while(|p| !p.exists()).collect();
        for p in missing.iter().rev() {
            s.names.note_change(p);
        }
        PosixFs.create_dir_all(path)
    }

    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.metadata_step("create", path)?;
        s.names.note_change(path);
        s.used -= s.names.unlink(path);
        let inner = PosixFs.create_writable(path)?;
        let inode = s.names.create(path);
        Ok(Box::new(FaultWritable {
            inner,
            path: path.to_path_buf(),
            inode,
            state: self.state.clone(),
        }))
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        Ok(Box::new(self.reader(PosixFs.open_sequential(path)?, path)))
    }

    fn open_random(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(self.reader(PosixFs.open_random(path)?, path)))
    }

    fn open_random_mmap(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(self.reader(PosixFs.open_random_mmap(path)?, path)))
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
        if let Some(f) = s
            .names
            .by_path
            .get(path)
            .and_then(|id| s.names.inodes.get_mut(id))
        {
            let new_len = len.min(f.len);
            if f.counted {
                s.used = s.used - f.len + new_len;
            }
            f.len = new_len;
            f.synced_len = new_len;
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.metadata_step("remove", path)?;
        s.names.note_change(path);
        // Kept (if a durable name needs them) before the file is gone.
        s.used -= s.names.unlink(path);
        PosixFs.remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.metadata_step("rename", from)?;
        s.used -= s.names.rename(from, to);
        PosixFs.rename(from, to)
    }

    fn sync_file(&self, path: &Path) -> Result<()> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.step("sync", path)?;
        PosixFs.sync_file(path)?;
        if let Some(f) = s
            .names
            .by_path
            .get(path)
            .and_then(|id| s.names.inodes.get_mut(id))
        {
            f.synced_len = f.len;
        }
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> Result<()> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.step("sync directory", path)?;
        if s.draw_metadata_write_fault_one_in() && !s.rates.write_fault_files.is_empty() {
            s.counts.metadata_errors += 1;
            return Err(injected(
                "fsync directory",
                path,
                std::io::Error::other("injected directory sync error"),
            ));
        }
        PosixFs.sync_dir(path)?;
        s.names.sync_dir(path);
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

#[cfg(test)]
mod tests;
