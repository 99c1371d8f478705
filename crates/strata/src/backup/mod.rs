//! Incremental backups of a live database, each file checksummed, restores verified
//! (RocksDB's `BackupEngine`).
//!
//! A backup directory:
//!
//! ```text
//! BACKUP                  marker: "strata backup format=1"; a directory without it is refused
//! LOCK                    held while an engine has the directory open
//! meta/NNNNNN             one metadata file per backup (layout in `meta.rs`)
//! shared/S_C_Z.sst        tables: S the table's name, C its crc32c, Z its size; one copy used
//! shared/S_C_Z.blob       by every backup that holds the same table; blob files alike
//! private/NNNNNN/         every other file of backup NNNNNN: MANIFEST-*, CURRENT, IDENTITY,
//!                         WALs, PREPARED-*.txn
//! staging/, staging.tmp/  the checkpoint a backup is being copied from (removed after)
//! ```
//!
//! Making backup N:
//! 1. remove what an interrupted backup left (staging, `private/` directories and shared
//!    tables no metadata names, `*.tmp` files);
//! 2. `Db::checkpoint` into `staging` (hard links to the tables, copies of the WALs): a
//!    consistent image while writes go on;
//! 3. each table: if `shared/` already holds one of the same name, size and crc32c, use it;
//!    else copy it to `shared/S.sst.tmp` (crc32c computed on the way), sync, rename;
//! 4. every other file: copy into `private/N/` and sync; sync the directories;
//! 5. write `meta/N.tmp`, sync, rename to `meta/N`, sync `meta/`.
//!
//! Invariant: a backup exists exactly when its metadata file does, and every file its
//! metadata names was synced and renamed into place before the metadata was. A crash before
//! step 5's rename leaves files no metadata names, removed by the next backup or delete;
//! after it, the backup is whole. A shared table is removed only when no metadata names it;
//! while any metadata file is unreadable, no shared table is removed.
//!
//! Restore copies every file into an empty directory, checking each size and crc32c as it
//! goes, `IDENTITY` last: until then the directory is refused by `Db::open` (files but no
//! `IDENTITY`), so an interrupted restore never opens as a database.

mod meta;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::codec::crc32c_extend;
use crate::db::Db;
use crate::error::{Error, ErrorKind, Result};
use crate::filename::{parse_file_name, FileKind, IDENTITY, LOCK};
use crate::fs::{write_file_atomically, FileLock, FileSystem, PosixFs};
pub(crate) use meta::Meta;
use meta::{check_name, private_dir, shared_name, FileEntry, Place};

/// Name of the file that marks a backup directory.
const MARKER: &str = "BACKUP";
/// The marker's content. Do not change: it is on disk.
const MARKER_LINE: &str = "strata backup format=1\n";
const STAGING: &str = "staging";
const STAGING_TMP: &str = "staging.tmp";

/// What [`BackupEngine::list_backups`] and [`BackupEngine::create_backup`] tell about a
/// backup.
///
/// # Examples
///
/// ```
/// use strata::{BackupEngine, Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path().join("db"), options)?;
/// let mut backups = BackupEngine::open(dir.path().join("backups"))?;
/// db.put(b"a", b"1")?;
/// db.flush()?;
/// let first = backups.create_backup(&db)?;
/// db.put(b"b", b"2")?;
/// db.flush()?;
/// let second = backups.create_backup(&db)?;
/// assert_eq!((first.id, second.id), (1, 2));
/// assert!(second.shared_bytes > 0); // the first table is stored once, for both
/// assert!(second.copied_bytes < second.size);
/// let ids: Vec<u64> = backups.list_backups().iter().map(|backup| backup.id).collect();
/// assert_eq!(ids, [1, 2]);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupInfo {
    /// The backup's id: 1 for the first, one more than the newest for each next one.
    pub id: u64,
    /// When it was made, in seconds since the Unix epoch.
    pub timestamp: u64,
    /// Files it holds.
    pub num_files: usize,
    /// Bytes of all its files.
    pub size: u64,
    /// Bytes of its tables that another backup in the directory holds too.
    pub shared_bytes: u64,
    /// Bytes copied into the backup directory when it was made (the rest were tables
    /// already there).
    pub copied_bytes: u64,
}

/// A directory of backups of one database. It holds the directory's lock while open.
///
/// ```
/// use strata::{BackupEngine, Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path().join("db"), options)?;
/// db.put(b"k", b"v1")?;
/// let mut backups = BackupEngine::open(dir.path().join("backups"))?;
/// let first = backups.create_backup(&db)?;
/// db.put(b"k", b"v2")?;
/// backups.create_backup(&db)?;
/// backups.verify_backup(first.id)?;
/// backups.restore(first.id, dir.path().join("restored"))?;
/// let restored = Db::open(dir.path().join("restored"), Options::default())?;
/// assert_eq!(restored.get(b"k")?.as_deref(), Some(&b"v1"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BackupEngine {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    _lock: Box<dyn FileLock>,
    /// The backups whose metadata reads, by id.
    backups: BTreeMap<u64, Meta>,
    /// Ids whose metadata file is damaged; they can only be deleted.
    damaged: BTreeSet<u64>,
}

impl std::fmt::Debug for BackupEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupEngine")
            .field("dir", &self.dir)
            .finish()
    }
}

impl BackupEngine {
    /// Opens the backup directory `dir`, creating it if missing. A directory that exists,
    /// holds files and is not a backup directory is refused.
    pub fn open(dir: impl AsRef<Path>) -> Result<BackupEngine> {
        BackupEngine::open_with_fs(dir, Arc::new(PosixFs))
    }

    /// [`BackupEngine::open`] doing its IO through `fs`.
    pub fn open_with_fs(dir: impl AsRef<Path>, fs: Arc<dyn FileSystem>) -> Result<BackupEngine> {
        let dir = dir.as_ref().to_path_buf();
        let marker = dir.join(MARKER);
        if !fs.exists(&dir) || fs.list_dir(&dir)?.is_empty() {
            fs.create_dir_all(&dir)?;
            write_file_atomically(fs.as_ref(), &dir, MARKER, MARKER_LINE.as_bytes())?;
            fs.sync_dir(parent_of(&dir))?;
        } else if !fs.exists(&marker) {
            return Err(Error::InvalidArgument(format!(
                "{} is not empty and is not a Strata backup directory (no {MARKER} file)",
                dir.display()
            )));
        } else {
            let content = read_file(fs.as_ref(), &marker)?;
            if content != MARKER_LINE.as_bytes() {
                return Err(Error::corruption(
                    &marker,
                    0,
                    format!(
                        "not a Strata backup marker (expected '{}')",
                        MARKER_LINE.trim()
                    ),
                ));
            }
        }
        let lock = fs.lock(&dir.join(LOCK)).map_err(|e| match e.kind() {
            ErrorKind::Busy => Error::Busy(format!(
                "backup directory {} is in use by another process or engine",
                dir.display()
            )),
            _ => e,
        })?;
        for sub in ["meta", "shared", "private"] {
            fs.create_dir_all(&dir.join(sub))?;
        }
        let mut engine = BackupEngine {
            dir,
            fs,
            _lock: lock,
            backups: BTreeMap::new(),
            damaged: BTreeSet::new(),
        };
        engine.load()?;
        Ok(engine)
    }

    /// The backup directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads every metadata file; damaged ones are remembered by id. Each call that changes
    /// the directory starts with this, so that a metadata file a failed call left in place
    /// (its rename done, the directory sync failed) is known before anything is removed.
    fn load(&mut self) -> Result<()> {
        self.backups.clear();
        self.damaged.clear();
        for name in self.fs.list_dir(&self.dir.join("meta"))? {
            let Some(id) = parse_id(&name) else {
                continue;
            };
            match self.read_meta(id) {
                Ok(meta) => {
                    self.backups.insert(id, meta);
                }
                Err(e) if e.kind() == ErrorKind::Corruption => {
                    self.damaged.insert(id);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn meta_path(&self, id: u64) -> PathBuf {
        self.dir.join("meta").join(format!("{id:06}"))
    }

    fn read_meta(&self, id: u64) -> Result<Meta> {
        let path = self.meta_path(id);
        let meta = Meta::decode(&path, &read_file(self.fs.as_ref(), &path)?)?;
        if meta.id != id {
            return Err(Error::corruption(
                &path,
                0,
                format!("the file says it is backup {}", meta.id),
            ));
        }
        Ok(meta)
    }

    /// The metadata of backup `id`, read again from disk (so that damage since open is
    /// found), or why there is none.
    fn meta_of(&self, id: u64) -> Result<Meta> {
        if !self.backups.contains_key(&id) && !self.damaged.contains(&id) {
            return Err(Error::NotFound(format!(
                "backup {id} does not exist in {}",
                self.dir.display()
            )));
        }
        self.read_meta(id)
    }

    /// The backups, oldest first. Backups whose metadata is damaged are not listed (see
    /// [`BackupEngine::damaged_backups`]).
    pub fn list_backups(&self) -> Vec<BackupInfo> {
        // How many backups name each shared table.
        let mut users: BTreeMap<PathBuf, usize> = BTreeMap::new();
        for meta in self.backups.values() {
            for f in meta.files.iter().filter(|f| f.place == Place::Shared) {
                *users.entry(f.stored_path(meta.id)).or_default() += 1;
            }
        }
        self.backups
            .values()
            .map(|meta| BackupInfo {
                id: meta.id,
                timestamp: meta.timestamp,
                num_files: meta.files.len(),
                size: meta.size(),
                shared_bytes: meta
                    .files
                    .iter()
                    .filter(|f| {
                        f.place == Place::Shared
                            && users.get(&f.stored_path(meta.id)).is_some_and(|&n| n > 1)
                    })
                    .map(|f| f.size)
                    .sum(),
                copied_bytes: meta.copied,
            })
            .collect()
    }

    /// Ids of the backups whose metadata file is damaged: [`BackupEngine::verify_backup`]
    /// says what is wrong; they can only be deleted.
    pub fn damaged_backups(&self) -> Vec<u64> {
        self.damaged.iter().copied().collect()
    }

    /// Backs up `db` as it stands now, while writes go on; only tables not already in the
    /// backup directory are copied.
    pub fn create_backup(&mut self, db: &Db) -> Result<BackupInfo> {
        self.load()?;
        self.remove_leftovers()?;
        let id = self
            .backups
            .keys()
            .chain(&self.damaged)
            .max()
            .map_or(1, |n| n + 1);
        let staging = self.dir.join(STAGING);
        db.checkpoint(&staging)?;
        let made = self.copy_from_staging(id, &staging);
        // The staging files are links or copies: removing them never touches the database.
        // A failure leaves them for the next backup to remove.
        let _ = remove_dir_all(self.fs.as_ref(), &staging);
        let meta = made?;
        self.backups.insert(id, meta);
        self.list_backups()
            .into_iter()
            .find(|b| b.id == id)
            .ok_or_else(|| Error::NotFound(format!("backup {id} vanished while being made")))
    }

    /// Steps 3 to 5 of the order in the module comment.
    fn copy_from_staging(&self, id: u64, staging: &Path) -> Result<Meta> {
        let fs = self.fs.as_ref();
        let shared_dir = self.dir.join("shared");
        let mut shared: BTreeSet<String> = fs.list_dir(&shared_dir)?.into_iter().collect();
        let private = self.dir.join(private_dir(id));
        fs.create_dir_all(&private)?;
        fs.sync_dir(&self.dir.join("private"))?;
        let mut names = fs.list_dir(staging)?;
        names.sort();
        let mut files = Vec::with_capacity(names.len());
        let mut copied = 0;
        for name in names {
            let from = staging.join(&name);
            let is_table = matches!(
                parse_file_name(&name),
                Some(FileKind::Table(_) | FileKind::Blob(_))
            );
            let place = if is_table {
                Place::Shared
            } else {
                Place::Private
            };
            check_name(&name, place).map_err(|why| {
                Error::InvalidArgument(format!("cannot back up {}: {why}", from.display()))
            })?;
            let entry = if is_table {
                let size = fs.file_size(&from)?;
                let (stem, ext) = name.rsplit_once('.').unwrap_or((&name, ""));
                let (prefix, suffix) = (format!("{stem}_"), format!("_{size}.{ext}"));
                let candidate = shared
                    .iter()
                    .any(|s| s.starts_with(&prefix) && s.ends_with(&suffix));
                let known = if candidate {
                    let (_, crc) = file_crc(fs, &from)?;
                    shared
                        .contains(&shared_name(&name, size, crc))
                        .then_some(crc)
                } else {
                    None
                };
                let (size, crc) = match known {
                    Some(crc) => (size, crc),
                    None => {
                        let tmp = shared_dir.join(format!("{name}.tmp"));
                        let (len, crc) = copy_with_crc(fs, &from, &tmp)?;
                        let stored = shared_name(&name, len, crc);
                        fs.rename(&tmp, &shared_dir.join(&stored))?;
                        shared.insert(stored);
                        copied += len;
                        (len, crc)
                    }
                };
                FileEntry {
                    place,
                    name,
                    size,
                    crc,
                }
            } else {
                let (size, crc) = copy_with_crc(fs, &from, &private.join(&name))?;
                copied += size;
                FileEntry {
                    place,
                    name,
                    size,
                    crc,
                }
            };
            files.push(entry);
        }
        fs.sync_dir(&private)?;
        fs.sync_dir(&shared_dir)?;
        let meta = Meta {
            id,
            timestamp: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            copied,
            files,
        };
        write_file_atomically(
            fs,
            &self.dir.join("meta"),
            &format!("{id:06}"),
            &meta.encode(),
        )?;
        Ok(meta)
    }

    /// Checks that every file of backup `id` is there with the size and crc32c its metadata
    /// records. The error names the file and what is wrong.
    pub fn verify_backup(&self, id: u64) -> Result<()> {
        let meta = self.meta_of(id)?;
        for f in &meta.files {
            let path = self.dir.join(f.stored_path(id));
            if !self.fs.exists(&path) {
                return Err(Error::NotFound(format!(
                    "backup {id}: file {} is missing",
                    path.display()
                )));
            }
            let (size, crc) = file_crc(self.fs.as_ref(), &path)?;
            check_copy(&path, f, size, crc)?;
        }
        Ok(())
    }

    /// Restores backup `id` into `target`, which must not exist or be empty. Each file's size
    /// and crc32c are checked as it is copied; on any error the files copied are removed
    /// again. The result opens with `Db::open` (`Db::open_cf` naming its column families,
    /// `TransactionDb::open`) as the database stood when the backup was made.
    pub fn restore(&self, id: u64, target: impl AsRef<Path>) -> Result<()> {
        let target = target.as_ref();
        let fs = self.fs.as_ref();
        let meta = self.meta_of(id)?;
        let existed = fs.exists(target);
        if existed && !fs.list_dir(target)?.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "restore target {} is not empty: restore into a new or empty directory",
                target.display()
            )));
        }
        fs.create_dir_all(target)?;
        let mut written = Vec::new();
        let result = self.restore_files(&meta, target, &mut written);
        if result.is_err() {
            for path in &written {
                let _ = fs.remove_file(path);
            }
            if !existed {
                let _ = std::fs::remove_dir(target);
            }
        }
        result
    }

    fn restore_files(&self, meta: &Meta, target: &Path, written: &mut Vec<PathBuf>) -> Result<()> {
        let fs = self.fs.as_ref();
        // IDENTITY last: until it is there the directory does not open as a database.
        let (last, first): (Vec<&FileEntry>, Vec<&FileEntry>) =
            meta.files.iter().partition(|f| f.name == IDENTITY);
        for (n, group) in [first, last].into_iter().enumerate() {
            for f in group {
                let from = self.dir.join(f.stored_path(meta.id));
                let to = target.join(&f.name);
                written.push(to.clone());
                let (size, crc) = copy_with_crc(fs, &from, &to)?;
                check_copy(&from, f, size, crc)?;
            }
            if n == 0 {
                fs.sync_dir(target)?;
            }
        }
        fs.sync_dir(target)?;
        fs.sync_dir(parent_of(target))
    }

    /// Deletes backup `id`, and the shared tables no other backup uses.
    pub fn delete_backup(&mut self, id: u64) -> Result<()> {
        self.load()?;
        if !self.backups.contains_key(&id) && !self.damaged.contains(&id) {
            return Err(Error::NotFound(format!(
                "backup {id} does not exist in {}",
                self.dir.display()
            )));
        }
        self.remove_backup(id)?;
        self.remove_unused_shared()
    }

    /// Deletes the oldest backups until at most `keep` remain (damaged ones count), and the
    /// shared tables no remaining backup uses. Returns the ids deleted.
    pub fn purge_old_backups(&mut self, keep: usize) -> Result<Vec<u64>> {
        self.load()?;
        let mut ids: Vec<u64> = self.backups.keys().chain(&self.damaged).copied().collect();
        ids.sort_unstable();
        let extra = ids.len().saturating_sub(keep);
        let doomed = ids[..extra].to_vec();
        for &id in &doomed {
            self.remove_backup(id)?;
        }
        self.remove_unused_shared()?;
        Ok(doomed)
    }

    /// Removes the metadata first (from then on the backup does not exist), then its
    /// private files.
    fn remove_backup(&mut self, id: u64) -> Result<()> {
        let fs = self.fs.as_ref();
        fs.remove_file(&self.meta_path(id))?;
        fs.sync_dir(&self.dir.join("meta"))?;
        self.backups.remove(&id);
        self.damaged.remove(&id);
        remove_dir_all(fs, &self.dir.join(private_dir(id)))
    }

    /// Removes every file of `shared/` no backup's metadata names, unless some metadata is
    /// damaged (it may name any of them).
    fn remove_unused_shared(&self) -> Result<()> {
        if !self.damaged.is_empty() {
            return Ok(());
        }
        let used: BTreeSet<PathBuf> = self
            .backups
            .values()
            .flat_map(|m| {
                m.files
                    .iter()
                    .filter(|f| f.place == Place::Shared)
                    .map(|f| f.stored_path(m.id))
            })
            .collect();
        let shared = self.dir.join("shared");
        for name in self.fs.list_dir(&shared)? {
            if !used.contains(&Path::new("shared").join(&name)) {
                self.fs.remove_file(&shared.join(name))?;
            }
        }
        Ok(())
    }

    /// What an interrupted backup left: staging, private directories and metadata
    /// temporaries of backups that never finished, and shared tables nobody uses.
    fn remove_leftovers(&self) -> Result<()> {
        let fs = self.fs.as_ref();
        for name in [STAGING, STAGING_TMP] {
            let path = self.dir.join(name);
            if fs.exists(&path) {
                remove_dir_all(fs, &path)?;
            }
        }
        for name in fs.list_dir(&self.dir.join("meta"))? {
            if parse_id(&name).is_none() {
                fs.remove_file(&self.dir.join("meta").join(name))?;
            }
        }
        let private = self.dir.join("private");
        for name in fs.list_dir(&private)? {
            let known = parse_id(&name)
                .is_some_and(|id| self.backups.contains_key(&id) || self.damaged.contains(&id));
            if !known {
                remove_dir_all(fs, &private.join(name))?;
            }
        }
        self.remove_unused_shared()
    }
}

/// The id a metadata file's name gives (`000012` is 12); `None` for other names.
fn parse_id(name: &str) -> Option<u64> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok().filter(|&id| id > 0)
}

/// The directory holding `path` (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// An error if a copy of `f` (or the file itself) at `path` did not have its recorded size
/// and crc32c.
fn check_copy(path: &Path, f: &FileEntry, size: u64, crc: u32) -> Result<()> {
    if size != f.size {
        return Err(Error::corruption(
            path,
            size.min(f.size),
            format!("{size} bytes, the backup's metadata says {}", f.size),
        ));
    }
    if crc != f.crc {
        return Err(Error::corruption(
            path,
            0,
            format!("crc32c {crc:08x}, the backup's metadata says {:08x}", f.crc),
        ));
    }
    Ok(())
}

const COPY_BUFFER: usize = 256 * 1024;

/// Copies `from` to a new file `to`, syncs it, and returns its size and crc32c.
fn copy_with_crc(fs: &dyn FileSystem, from: &Path, to: &Path) -> Result<(u64, u32)> {
    let mut src = fs.open_sequential(from)?;
    let mut dst = fs.create_writable(to)?;
    let mut buf = vec![0u8; COPY_BUFFER];
    let (mut len, mut crc) = (0u64, 0u32);
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        dst.append(&buf[..n])?;
        crc = crc32c_extend(crc, &buf[..n]);
        len += n as u64;
    }
    dst.sync()?;
    Ok((len, crc))
}

/// The size and crc32c of the file at `path`.
fn file_crc(fs: &dyn FileSystem, path: &Path) -> Result<(u64, u32)> {
    let mut src = fs.open_sequential(path)?;
    let mut buf = vec![0u8; COPY_BUFFER];
    let (mut len, mut crc) = (0u64, 0u32);
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            return Ok((len, crc));
        }
        crc = crc32c_extend(crc, &buf[..n]);
        len += n as u64;
    }
}

fn read_file(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u8>> {
    let mut src = fs.open_sequential(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Removes directory `dir` with the files in it (backup directories hold no deeper ones).
fn remove_dir_all(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    for name in fs.list_dir(dir)? {
        fs.remove_file(&dir.join(name))?;
    }
    // The file-system trait has no directory removal; an empty directory holds no data.
    std::fs::remove_dir(dir).map_err(|e| Error::io("remove directory", dir, e))
}
