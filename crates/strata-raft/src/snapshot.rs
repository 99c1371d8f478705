//! Snapshot files: a checkpoint of the state machine packed into one file, and the directory
//! of finished snapshots.
//!
//! openraft streams a snapshot between nodes as byte ranges of one seekable file (chunks of
//! `snapshot_max_chunk_size`), so a state machine of any size moves with bounded memory. The
//! file is an archive of the checkpoint's files:
//!
//! ```text
//! magic     "STRATA-SNAPSHOT\n" (16 bytes)
//! record*   name_len u32 BE (> 0) | name (UTF-8, '/'-separated, relative) |
//!           len u64 BE | crc32c u32 BE of the contents | contents (len bytes)
//! end       name_len u32 BE = 0
//! ```
//!
//! A snapshot directory holds `ID.snap` (the archive) and `ID.meta` (openraft's
//! `SnapshotMeta`, JSON). The meta file is written, synced and renamed into place only after
//! its archive is synced, so a meta file names a whole snapshot; files without one are the
//! debris of a crash and are removed when the directory is opened.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Component, Path, PathBuf};

use openraft::SnapshotMeta;

use crate::codec::{decode, encode};
use crate::error::{Error, IoContext};

const MAGIC: &[u8; 16] = b"STRATA-SNAPSHOT\n";
/// Longest file name accepted in an archive.
const MAX_NAME: u32 = 4096;

/// openraft's snapshot metadata for this crate's types.
pub type Meta = SnapshotMeta<u64, openraft::BasicNode>;

/// Packs every file under `dir` into the archive `out`, and syncs it.
pub fn pack(dir: &Path, out: &Path) -> Result<(), Error> {
    let file = File::create(out).context(|| format!("create {}", out.display()))?;
    let mut w = BufWriter::new(file);
    w.write_all(MAGIC)
        .context(|| format!("write {}", out.display()))?;
    let mut files = Vec::new();
    list_files(dir, Path::new(""), &mut files)?;
    for rel in files {
        let name = rel
            .to_str()
            .ok_or_else(|| Error::Invalid(format!("file name {} is not UTF-8", rel.display())))?
            .replace(std::path::MAIN_SEPARATOR, "/");
        let path = dir.join(&rel);
        let len = fs::metadata(&path)
            .context(|| format!("stat {}", path.display()))?
            .len();
        let crc = file_crc(&path)?;
        let write = |w: &mut BufWriter<File>| -> io::Result<()> {
            w.write_all(&(name.len() as u32).to_be_bytes())?;
            w.write_all(name.as_bytes())?;
            w.write_all(&len.to_be_bytes())?;
            w.write_all(&crc.to_be_bytes())?;
            let copied = io::copy(&mut File::open(&path)?.take(len), w)?;
            if copied != len {
                return Err(io::Error::other(format!(
                    "{} shrank while packed",
                    path.display()
                )));
            }
            Ok(())
        };
        write(&mut w).context(|| format!("pack {} into {}", path.display(), out.display()))?;
    }
    w.write_all(&0u32.to_be_bytes())
        .context(|| format!("write {}", out.display()))?;
    let file = w
        .into_inner()
        .map_err(|e| Error::Io(format!("write {}", out.display()), e.into_error()))?;
    file.sync_all()
        .context(|| format!("sync {}", out.display()))
}

fn list_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let dir = root.join(rel);
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .context(|| format!("list {}", dir.display()))?
        .collect::<io::Result<_>>()
        .context(|| format!("list {}", dir.display()))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let kind = entry
            .file_type()
            .context(|| format!("stat {}", entry.path().display()))?;
        let child = rel.join(entry.file_name());
        if kind.is_dir() {
            list_files(root, &child, out)?;
        } else {
            out.push(child);
        }
    }
    Ok(())
}

fn file_crc(path: &Path) -> Result<u32, Error> {
    let mut file = File::open(path).context(|| format!("open {}", path.display()))?;
    let mut buf = vec![0u8; 64 << 10];
    let mut crc = 0u32;
    loop {
        let n = file
            .read(&mut buf)
            .context(|| format!("read {}", path.display()))?;
        if n == 0 {
            return Ok(crc);
        }
        crc = crc32c::crc32c_append(crc, &buf[..n]);
    }
}

/// Unpacks the archive read from `input` into the new directory `dir`, checking every file's
/// checksum and syncing every file and directory. Memory use is one copy buffer.
pub fn unpack(input: impl Read, dir: &Path) -> Result<(), Error> {
    let mut r = BufReader::new(input);
    let bad = |what: String| Error::Corrupt(format!("snapshot archive: {what}"));
    let mut magic = [0u8; 16];
    r.read_exact(&mut magic)
        .context(|| "read snapshot archive".to_string())?;
    if &magic != MAGIC {
        return Err(bad("no magic (not a snapshot archive)".into()));
    }
    fs::create_dir_all(dir).context(|| format!("create {}", dir.display()))?;
    let mut dirs = vec![dir.to_path_buf()];
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let name_len = read_u32(&mut r)?;
        if name_len == 0 {
            break;
        }
        if name_len > MAX_NAME {
            return Err(bad(format!("file name of {name_len} bytes")));
        }
        let mut name = vec![0u8; name_len as usize];
        r.read_exact(&mut name)
            .context(|| "read snapshot archive".to_string())?;
        let name = String::from_utf8(name).map_err(|_| bad("file name not UTF-8".into()))?;
        let rel = safe_relative(&name).ok_or_else(|| bad(format!("unsafe file name {name:?}")))?;
        let len = read_u64(&mut r)?;
        let crc = read_u32(&mut r)?;
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            if !parent.exists() {
                fs::create_dir_all(parent).context(|| format!("create {}", parent.display()))?;
                dirs.push(parent.to_path_buf());
            }
        }
        let mut out = File::create(&path).context(|| format!("create {}", path.display()))?;
        let mut left = len;
        let mut actual = 0u32;
        while left > 0 {
            let want = left.min(buf.len() as u64) as usize;
            r.read_exact(&mut buf[..want])
                .context(|| format!("read {name} from snapshot archive"))?;
            actual = crc32c::crc32c_append(actual, &buf[..want]);
            out.write_all(&buf[..want])
                .context(|| format!("write {}", path.display()))?;
            left -= want as u64;
        }
        if actual != crc {
            return Err(bad(format!("checksum mismatch in {name}")));
        }
        out.sync_all()
            .context(|| format!("sync {}", path.display()))?;
    }
    for d in dirs {
        sync_dir(&d)?;
    }
    Ok(())
}

fn read_u32(r: &mut impl Read) -> Result<u32, Error> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)
        .context(|| "read snapshot archive".to_string())?;
    Ok(u32::from_be_bytes(b))
}

fn read_u64(r: &mut impl Read) -> Result<u64, Error> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)
        .context(|| "read snapshot archive".to_string())?;
    Ok(u64::from_be_bytes(b))
}

/// `name` as a relative path made only of normal components, or `None` (an archive from
/// another node must not write outside the directory it is unpacked into).
fn safe_relative(name: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in name.split('/') {
        let path = Path::new(part);
        match path.components().next() {
            Some(Component::Normal(_)) if path.components().count() == 1 => out.push(part),
            _ => return None,
        }
    }
    Some(out)
}

/// Syncs a directory, so that the names created in it survive a crash.
pub fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .context(|| format!("sync directory {}", dir.display()))
}

/// Writes `bytes` to `path` atomically: a synced temporary file renamed over it, then the
/// directory synced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let write = || -> io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().context(|| format!("write {}", path.display()))?;
    match path.parent() {
        Some(parent) => sync_dir(parent),
        None => Ok(()),
    }
}

/// The directory of finished snapshots of one node.
#[derive(Clone, Debug)]
pub struct SnapshotDir {
    dir: PathBuf,
}

impl SnapshotDir {
    /// Opens (creating) the directory, removing what a crash left half written.
    pub fn open(dir: &Path) -> Result<SnapshotDir, Error> {
        fs::create_dir_all(dir).context(|| format!("create {}", dir.display()))?;
        let snapshots = SnapshotDir {
            dir: dir.to_path_buf(),
        };
        let keep = snapshots.current()?.map(|(meta, _)| meta.snapshot_id);
        snapshots.remove_all_but(keep.as_deref(), true)?;
        Ok(snapshots)
    }

    /// Where the archive of snapshot `id` lives.
    pub fn archive_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.snap"))
    }

    /// A scratch path in the directory, removed at the next open if left behind.
    pub fn scratch_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.tmp"))
    }

    /// Records `meta` as the newest snapshot (its archive must be synced already) and
    /// removes older ones.
    pub fn publish(&self, meta: &Meta) -> Result<(), Error> {
        let bytes = encode(meta).map_err(|e| Error::Corrupt(e.to_string()))?;
        write_atomic(&self.dir.join(format!("{}.meta", meta.snapshot_id)), &bytes)?;
        // Scratch files stay: a build or a receive may be using them now.
        self.remove_all_but(Some(&meta.snapshot_id), false)
    }

    /// Removes the scratch files whose names start with `prefix` (a receive's leftovers,
    /// before the next one starts).
    pub fn remove_scratch(&self, prefix: &str) -> Result<(), Error> {
        for entry in fs::read_dir(&self.dir).context(|| format!("list {}", self.dir.display()))? {
            let entry = entry.context(|| format!("list {}", self.dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(prefix) && name.ends_with(".tmp") {
                let path = entry.path();
                fs::remove_file(&path).context(|| format!("remove {}", path.display()))?;
            }
        }
        Ok(())
    }

    /// The newest finished snapshot: its meta and archive path.
    pub fn current(&self) -> Result<Option<(Meta, PathBuf)>, Error> {
        let mut best: Option<Meta> = None;
        for entry in fs::read_dir(&self.dir).context(|| format!("list {}", self.dir.display()))? {
            let entry = entry.context(|| format!("list {}", self.dir.display()))?;
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".meta")) else {
                continue;
            };
            let bytes =
                fs::read(entry.path()).context(|| format!("read {}", entry.path().display()))?;
            let meta: Meta =
                decode(&bytes).map_err(|e| Error::Corrupt(format!("snapshot meta {id}: {e}")))?;
            if !self.archive_path(id).exists() {
                continue;
            }
            let newer = match &best {
                None => true,
                Some(b) => (meta.last_log_id, &meta.snapshot_id) > (b.last_log_id, &b.snapshot_id),
            };
            if newer {
                best = Some(meta);
            }
        }
        Ok(best.map(|meta| {
            let path = self.archive_path(&meta.snapshot_id);
            (meta, path)
        }))
    }

    fn remove_all_but(&self, keep: Option<&str>, scratch_too: bool) -> Result<(), Error> {
        for entry in fs::read_dir(&self.dir).context(|| format!("list {}", self.dir.display()))? {
            let entry = entry.context(|| format!("list {}", self.dir.display()))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let kept =
                keep.is_some_and(|id| name == format!("{id}.snap") || name == format!("{id}.meta"));
            if kept || (!scratch_too && name.ends_with(".tmp")) {
                continue;
            }
            let path = entry.path();
            // A snapshot being sent keeps its open file; unlinking the name is harmless.
            let removed = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            if let Err(e) = removed {
                if e.kind() != io::ErrorKind::NotFound {
                    return Err(Error::Io(format!("remove {}", path.display()), e));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_then_unpack_gives_the_same_files() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        fs::create_dir_all(src.join("sub")).unwrap();
        fs::write(src.join("a"), b"alpha").unwrap();
        fs::write(src.join("sub/b"), vec![7u8; 200_000]).unwrap();
        fs::write(src.join("empty"), b"").unwrap();
        let archive = tmp.path().join("x.snap");
        pack(&src, &archive).unwrap();
        let dst = tmp.path().join("dst");
        unpack(File::open(&archive).unwrap(), &dst).unwrap();
        assert_eq!(fs::read(dst.join("a")).unwrap(), b"alpha");
        assert_eq!(fs::read(dst.join("sub/b")).unwrap(), vec![7u8; 200_000]);
        assert_eq!(fs::read(dst.join("empty")).unwrap(), b"");
    }

    #[test]
    fn unpack_refuses_corrupt_and_escaping_archives() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        fs::create_dir_all(&src).unwrap();
        fs::write(src.join("a"), b"alpha").unwrap();
        let archive = tmp.path().join("x.snap");
        pack(&src, &archive).unwrap();
        let mut bytes = fs::read(&archive).unwrap();
        let at = bytes.len() - 6;
        bytes[at] ^= 1;
        let err = unpack(&bytes[..], &tmp.path().join("d1")).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");

        let mut evil = MAGIC.to_vec();
        let name = b"../escape";
        evil.extend((name.len() as u32).to_be_bytes());
        evil.extend(name);
        evil.extend(0u64.to_be_bytes());
        evil.extend(0u32.to_be_bytes());
        evil.extend(0u32.to_be_bytes());
        let err = unpack(&evil[..], &tmp.path().join("d2")).unwrap_err();
        assert!(err.to_string().contains("unsafe"), "{err}");
        assert!(!tmp.path().join("escape").exists());
        assert!(unpack(&b"not a snapshot at all"[..], &tmp.path().join("d3")).is_err());
    }
}
