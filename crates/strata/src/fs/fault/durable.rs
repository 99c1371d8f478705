//! What a power cut leaves of the files a [`FaultFs`](super::FaultFs) wrote: the model of
//! durability it keeps, and the two ways to apply a cut (in place, or as an image written to
//! a fresh directory while the process that wrote the files keeps running).
//!
//! The model, as POSIX promises and no more:
//! - A file's bytes are durable up to its last sync (`WritableFile::sync`,
//!   `FileSystem::sync_file`); the bytes after it are lost, or reach the disk in part, or
//!   (a torn write) are left as garbage.
//! - A directory entry (a file created, renamed in or out, removed; a directory created) is
//!   durable once its directory is synced. Until then a cut brings back what the name
//!   durably was: a removed file comes back (with its synced bytes), a renamed file is back
//!   under its old name and gone from the new one, a new file or directory is gone.
//!
//! Files are *inodes* here: their length and synced length follow the file across renames.
//! For each directory changed since its last sync, `pending` holds, per changed name, what
//! the name durably is ([`Durable`]); any other name is durably what it is now. A file that
//! loses its last name while a durable name still points to it keeps its synced bytes in
//! memory until that directory is synced.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::util::Rng;

/// One file written through the fault file system (or one it found there and then renamed
/// or removed).
#[derive(Debug, Default)]
pub(super) struct Inode {
    /// Bytes appended (or found).
    pub len: u64,
    /// Bytes made durable.
    pub synced_len: u64,
    /// Its name now (`None` once removed or replaced).
    pub path: Option<PathBuf>,
    /// Its synced bytes, kept when it lost its last name while a durable name still points
    /// to it.
    pub kept: Option<Vec<u8>>,
    /// True when its bytes count in the space used (written through the file system).
    pub counted: bool,
}

/// What a name durably is, while its directory has changes not yet synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Durable {
    Absent,
    File(u64),
    Dir,
}

/// The durability model (see the module's doc).
#[derive(Debug, Default)]
pub(super) struct Namespace {
    pub inodes: HashMap<u64, Inode>,
    pub by_path: HashMap<PathBuf, u64>,
    next_inode: u64,
    /// Per directory changed since its last sync: name -> what it durably is.
    pub pending: HashMap<PathBuf, HashMap<OsString, Durable>>,
}

/// How a power cut treats the unsynced tails of files whose names survive it.
#[derive(Debug, Clone, Copy)]
pub struct PowerCut {
    /// One unsynced tail in this many is left as random garbage bytes (of at most the
    /// unsynced length) instead of being cut; 0: never.
    pub garbage_one_in: u64,
    /// One unsynced tail in this many keeps a random part of its real unsynced bytes (as a
    /// disk that wrote some of them back); 0: never.
    pub partial_one_in: u64,
    /// Seed of the choices.
    pub seed: u64,
}

impl PowerCut {
    /// The strictest cut: every unsynced byte is lost, nothing is left as garbage.
    pub fn clean() -> PowerCut {
        PowerCut {
            garbage_one_in: 0,
            partial_one_in: 0,
            seed: 0,
        }
    }
}

/// What a power cut did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PowerCutReport {
    /// Files whose unsynced tail was cut off (or partly kept).
    pub tails_cut: u64,
    /// Files left with garbage in place of their unsynced tail.
    pub garbage_tails: u64,
    /// Names (files and directories) that were never made durable, gone.
    pub names_dropped: u64,
    /// Names removed or renamed away whose removal was not durable, back.
    pub names_restored: u64,
}

/// A directory as the model keys it (a relative path's empty parent is `.`).
pub(super) fn dir_key(dir: &Path) -> PathBuf {
    match dir.as_os_str().is_empty() {
        true => PathBuf::from("."),
        false => dir.to_path_buf(),
    }
}

fn split(path: &Path) -> (PathBuf, OsString) {
    let dir = dir_key(path.parent().unwrap_or(Path::new("")));
    let name = path.file_name().map(OsString::from).unwrap_or_default();
    (dir, name)
}

/// Where a durable file's bytes come from.
enum Bytes {
    /// The file now at this path (its first `len` bytes, then `garbage` random ones).
    At(PathBuf),
    Kept(Vec<u8>),
}

/// One entry of a directory after the cut.
enum Entry {
    Dir,
    File {
        bytes: Bytes,
        len: u64,
        garbage: u64,
    },
}

impl Namespace {
    fn new_inode(&mut self, inode: Inode) -> u64 {
        self.next_inode += 1;
        self.inodes.insert(self.next_inode, inode);
        self.next_inode
    }

    /// A new, empty file at `path` (its name is recorded as changed first).
    pub fn create(&mut self, path: &Path) -> u64 {
        self.note_change(path);
        self.unlink(path);
        let id = self.new_inode(Inode {
            path: Some(path.to_path_buf()),
            counted: true,
            ..Inode::default()
        });
        self.by_path.insert(path.to_path_buf(), id);
        id
    }

    /// The inode of the file at `path`, adopting a file this file system did not write
    /// (durable as it is) if need be.
    fn inode_at(&mut self, path: &Path) -> Option<u64> {
        if let Some(&id) = self.by_path.get(path) {
            return Some(id);
        }
        let len = std::fs::metadata(path).ok().filter(|m| m.is_file())?.len();
        let id = self.new_inode(Inode {
            len,
            synced_len: len,
            path: Some(path.to_path_buf()),
            ..Inode::default()
        });
        self.by_path.insert(path.to_path_buf(), id);
        Some(id)
    }

    /// Records what `path` durably is, before its first change since its directory's last
    /// sync.
    pub fn note_change(&mut self, path: &Path) {
        let (dir, name) = split(path);
        if self
            .pending
            .get(&dir)
            .is_some_and(|d| d.contains_key(&name))
        {
            return;
        }
        let durable = if path.is_dir() {
            Durable::Dir
        } else {
            match self.inode_at(path) {
                Some(id) => Durable::File(id),
                None => Durable::Absent,
            }
        };
        self.pending.entry(dir).or_default().insert(name, durable);
    }

    /// The file at `path` loses its name (removed, or replaced by a rename or a create): its
    /// synced bytes are kept if a durable name still points to it. Returns the bytes it had
    /// (for the space used).
    pub fn unlink(&mut self, path: &Path) -> u64 {
        let Some(id) = self.by_path.remove(path) else {
            return 0;
        };
        let referenced = self.referenced(id);
        let Some(inode) = self.inodes.get_mut(&id) else {
            return 0;
        };
        inode.path = None;
        let freed = if inode.counted { inode.len } else { 0 };
        if referenced {
            let mut bytes = std::fs::read(path).unwrap_or_default();
            bytes.truncate(inode.synced_len as usize);
            inode.kept = Some(bytes);
        } else {
            self.inodes.remove(&id);
        }
        freed
    }

    fn referenced(&self, id: u64) -> bool {
        self.pending
            .values()
            .any(|d| d.values().any(|&v| v == Durable::File(id)))
    }

    /// `from` is now named `to`.
    pub fn rename(&mut self, from: &Path, to: &Path) -> u64 {
        self.note_change(from);
        self.note_change(to);
        let freed = self.unlink(to);
        if let Some(id) = self.by_path.remove(from) {
            self.by_path.insert(to.to_path_buf(), id);
            if let Some(inode) = self.inodes.get_mut(&id) {
                inode.path = Some(to.to_path_buf());
            }
        }
        freed
    }

    /// The entries of directory `dir` are durable now.
    pub fn sync_dir(&mut self, dir: &Path) {
        if self.pending.remove(&dir_key(dir)).is_some() {
            self.inodes
                .retain(|&id, inode| inode.path.is_some() || Self::any_ref(&self.pending, id));
        }
    }

    fn any_ref(pending: &HashMap<PathBuf, HashMap<OsString, Durable>>, id: u64) -> bool {
        pending
            .values()
            .any(|d| d.values().any(|&v| v == Durable::File(id)))
    }

    /// The entries directory `dir` holds after a cut, by name.
    fn durable_entries(
        &self,
        dir: &Path,
        cut: &PowerCut,
        rng: &mut Rng,
        report: &mut PowerCutReport,
    ) -> std::io::Result<BTreeMap<OsString, Entry>> {
        let pending = self.pending.get(&dir_key(dir));
        let mut out = BTreeMap::new();
        let mut names: Vec<OsString> = std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<std::io::Result<_>>()?;
        if let Some(p) = pending {
            names.extend(p.keys().cloned());
        }
        names.sort();
        names.dedup();
        for name in names {
            let path = dir.join(&name);
            let durable = pending.and_then(|p| p.get(&name).copied());
            let entry = match durable {
                Some(Durable::Absent) => {
                    report.names_dropped += 1;
                    continue;
                }
                Some(Durable::Dir) => Entry::Dir,
                None if path.is_dir() => Entry::Dir,
                None => match self.by_path.get(&path).and_then(|id| self.inodes.get(id)) {
                    Some(inode) => self.file_entry(inode, cut, rng, report),
                    // Not written through this file system: durable as it is.
                    None => Entry::File {
                        len: std::fs::metadata(&path)?.len(),
                        bytes: Bytes::At(path),
                        garbage: 0,
                    },
                },
                Some(Durable::File(id)) => {
                    let Some(inode) = self.inodes.get(&id) else {
                        continue;
                    };
                    if inode.path.as_deref() != Some(&path) {
                        report.names_restored += 1;
                    }
                    self.file_entry(inode, cut, rng, report)
                }
            };
            out.insert(name, entry);
        }
        Ok(out)
    }

    fn file_entry(
        &self,
        inode: &Inode,
        cut: &PowerCut,
        rng: &mut Rng,
        report: &mut PowerCutReport,
    ) -> Entry {
        let bytes = match (&inode.kept, &inode.path) {
            (Some(kept), _) => Bytes::Kept(kept.clone()),
            (None, Some(path)) => Bytes::At(path.clone()),
            (None, None) => Bytes::Kept(Vec::new()),
        };
        let unsynced = inode.len.saturating_sub(inode.synced_len);
        let (mut len, mut garbage) = (inode.synced_len, 0);
        if unsynced > 0 && inode.kept.is_none() {
            if cut.garbage_one_in > 0 && rng.one_in(cut.garbage_one_in) {
                garbage = 1 + rng.below(unsynced);
                report.garbage_tails += 1;
            } else {
                if cut.partial_one_in > 0 && rng.one_in(cut.partial_one_in) {
                    len += rng.below(unsynced);
                }
                report.tails_cut += 1;
            }
        }
        Entry::File {
            bytes,
            len,
            garbage,
        }
    }

    /// Writes what a cut leaves of directory `dir` (and what lies below it) into `out`, a
    /// directory that must not exist yet. The files under `dir` are only read.
    pub fn write_image(
        &self,
        dir: &Path,
        out: &Path,
        cut: &PowerCut,
        rng: &mut Rng,
        report: &mut PowerCutReport,
    ) -> std::io::Result<()> {
        std::fs::create_dir(out)?;
        for (name, entry) in self.durable_entries(dir, cut, rng, report)? {
            match entry {
                Entry::Dir => {
                    self.write_image(&dir.join(&name), &out.join(&name), cut, rng, report)?
                }
                Entry::File {
                    bytes,
                    len,
                    garbage,
                } => {
                    let content = materialize(&bytes, len, garbage, rng)?;
                    std::fs::File::create(out.join(&name))?.write_all(&content)?;
                }
            }
        }
        Ok(())
    }

    /// Applies a cut in place to every directory this file system changed or wrote in. No
    /// file may be open for writing any more.
    pub fn apply_in_place(&self, cut: &PowerCut, rng: &mut Rng) -> std::io::Result<PowerCutReport> {
        let mut report = PowerCutReport::default();
        let mut dirs: Vec<PathBuf> = self.pending.keys().cloned().collect();
        dirs.extend(
            self.inodes
                .values()
                .filter_map(|i| i.path.as_deref()?.parent().map(dir_key)),
        );
        dirs.sort();
        dirs.dedup();
        // Read everything first: a durable name may point to bytes another directory's
        // changes are about to overwrite.
        let mut plans = Vec::new();
        for dir in dirs {
            if !dir.is_dir() {
                continue;
            }
            let entries = self.durable_entries(&dir, cut, rng, &mut report)?;
            let mut files = Vec::new();
            for (name, entry) in &entries {
                if let Entry::File {
                    bytes,
                    len,
                    garbage,
                } = entry
                {
                    files.push((name.clone(), materialize(bytes, *len, *garbage, rng)?));
                }
            }
            plans.push((dir, entries.into_keys().collect::<Vec<_>>(), files));
        }
        for (dir, keep, files) in plans {
            if !dir.is_dir() {
                continue; // under a directory the cut removed
            }
            for e in std::fs::read_dir(&dir)? {
                let e = e?;
                if !keep.contains(&e.file_name()) {
                    if e.file_type()?.is_dir() {
                        std::fs::remove_dir_all(e.path())?;
                    } else {
                        std::fs::remove_file(e.path())?;
                    }
                }
            }
            for (name, content) in files {
                let path = dir.join(name);
                if std::fs::metadata(&path).is_ok_and(|m| m.len() == content.len() as u64)
                    && std::fs::read(&path)? == content
                {
                    continue;
                }
                std::fs::write(path, content)?;
            }
        }
        Ok(report)
    }
}

/// The bytes of a file after the cut: `len` of `bytes`, then `garbage` random ones.
fn materialize(bytes: &Bytes, len: u64, garbage: u64, rng: &mut Rng) -> std::io::Result<Vec<u8>> {
    let mut content = match bytes {
        Bytes::At(path) => std::fs::read(path)?,
        Bytes::Kept(kept) => kept.clone(),
    };
    content.truncate(len as usize);
    content.extend((0..garbage).map(|_| rng.next_u64() as u8));
    Ok(content)
}
