//! The expected state of a stress run, kept in a file outside the database so that it
//! survives the process being killed.
//!
//! Layout: a 24-byte header (`STRATAOR`, the number of keys as u64 LE, operations done as u64
//! LE) and then 8 bytes per key: the committed value id (u32 LE, 0 = absent) and the pending
//! one (u32 LE: 0 = no operation in flight, otherwise the id it writes plus 1, so 1 means a
//! delete in flight). A thread marks a key pending before it writes it and commits it after
//! the database acknowledged the write, each with one `pwrite`: after a kill, a key may
//! hold its committed value or its pending one, nothing else.
//!
//! After the keys, [`FAMILY_SLOTS`] slots of 8 bytes: the state of the family thread `t`
//! creates and drops ([`FamilyState`]: u32 LE generation, u32 LE stage). A file written
//! before the slots existed ends at the keys; its slots read as zeros (no family).
//!
//! Values are derived from (key, id), so a read can tell which id it saw.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 8] = b"STRATAOR";
const HEADER: u64 = 24;

/// What a key may hold now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyState {
    /// The value id the database acknowledged last (0 = absent).
    pub committed: u32,
    /// The id of a write in flight, if any (0 = a delete).
    pub pending: Option<u32>,
}

impl KeyState {
    fn encode(self) -> u64 {
        let pending = self.pending.map_or(0, |p| u64::from(p) + 1);
        u64::from(self.committed) | (pending << 32)
    }

    fn decode(v: u64) -> KeyState {
        let pending = (v >> 32) as u32;
        KeyState {
            committed: v as u32,
            pending: pending.checked_sub(1),
        }
    }

    /// True when the database may hold value id `id` (0 = absent).
    pub fn allows(self, id: u32) -> bool {
        id == self.committed || self.pending == Some(id)
    }
}

/// Threads with a family of their own to create and drop (the others have none).
pub const FAMILY_SLOTS: u64 = 64;

/// Where a thread's own family stands: each step is recorded before the call that makes it
/// (`Creating`, `Dropping`) and after it returned (`Live`, `Absent`), so that after a kill
/// the family exists exactly when the stage says it must, or either way while a call was in
/// flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyStage {
    /// Dropped (or never created): the family must not exist.
    Absent,
    /// A create (and its synced write) is in flight.
    Creating,
    /// Created and written with `sync`: the family exists with its keys at `generation`.
    Live,
    /// A drop is in flight.
    Dropping,
}

/// A thread's family: its stage, and the generation its keys' value ids are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilyState {
    pub stage: FamilyStage,
    pub generation: u32,
}

impl FamilyState {
    fn encode(self) -> u64 {
        let stage = match self.stage {
            FamilyStage::Absent => 0u64,
            FamilyStage::Creating => 1,
            FamilyStage::Live => 2,
            FamilyStage::Dropping => 3,
        };
        u64::from(self.generation) | (stage << 32)
    }

    fn decode(v: u64) -> FamilyState {
        let stage = match v >> 32 {
            1 => FamilyStage::Creating,
            2 => FamilyStage::Live,
            3 => FamilyStage::Dropping,
            _ => FamilyStage::Absent,
        };
        FamilyState {
            stage,
            generation: v as u32,
        }
    }
}

/// The expected state, shared by the threads (each writes only its own keys).
pub struct Oracle {
    file: File,
    path: PathBuf,
    states: Vec<AtomicU64>,
    families: Vec<AtomicU64>,
    ops: AtomicU64,
}

impl Oracle {
    /// Opens the file at `path`, or creates it for `keys` absent keys. An existing file for
    /// another number of keys is an error.
    pub fn open(path: &Path, keys: u64) -> Result<Oracle, String> {
        let what = |e: std::io::Error| format!("expected-state file {}: {e}", path.display());
        let exists = path.exists();
        // Beside the database, whose directory the engine creates with its parents: so here.
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(what)?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(what)?;
        let mut oracle = Oracle {
            file,
            path: path.to_path_buf(),
            states: (0..keys).map(|_| AtomicU64::new(0)).collect(),
            families: (0..FAMILY_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            ops: AtomicU64::new(0),
        };
        if !exists || oracle.file.metadata().map_err(what)?.len() == 0 {
            let mut header = Vec::with_capacity(HEADER as usize);
            header.extend_from_slice(MAGIC);
            header.extend_from_slice(&keys.to_le_bytes());
            header.extend_from_slice(&0u64.to_le_bytes());
            oracle.file.write_all_at(&header, 0).map_err(what)?;
            oracle
                .file
                .write_all_at(&vec![0u8; (keys + FAMILY_SLOTS) as usize * 8], HEADER)
                .map_err(what)?;
            return Ok(oracle);
        }
        let mut buf = vec![0u8; (HEADER + keys * 8) as usize];
        oracle
            .file
            .read_exact_at(&mut buf[..HEADER as usize], 0)
            .map_err(what)?;
        let stored = u64::from_le_bytes(buf[8..16].try_into().unwrap());
        if &buf[..8] != MAGIC || stored != keys {
            return Err(format!(
                "expected-state file {} is not one for {keys} keys (it says {stored}); \
                 remove it or pass the same --keys",
                path.display()
            ));
        }
        oracle.file.read_exact_at(&mut buf, 0).map_err(what)?;
        oracle.ops = AtomicU64::new(u64::from_le_bytes(buf[16..24].try_into().unwrap()));
        for (i, s) in oracle.states.iter_mut().enumerate() {
            let at = HEADER as usize + i * 8;
            *s.get_mut() = u64::from_le_bytes(buf[at..at + 8].try_into().unwrap());
        }
        let mut slots = vec![0u8; FAMILY_SLOTS as usize * 8];
        let len = oracle.file.metadata().map_err(what)?.len();
        let at = HEADER + keys * 8;
        let have = len.saturating_sub(at).min(slots.len() as u64) as usize;
        oracle
            .file
            .read_exact_at(&mut slots[..have], at)
            .map_err(what)?;
        for (i, s) in oracle.families.iter_mut().enumerate() {
            *s.get_mut() = u64::from_le_bytes(slots[i * 8..i * 8 + 8].try_into().unwrap());
        }
        Ok(oracle)
    }

    /// Keys covered.
    pub fn keys(&self) -> u64 {
        self.states.len() as u64
    }

    /// The state of key `k`.
    pub fn state(&self, k: u64) -> KeyState {
        KeyState::decode(self.states[k as usize].load(Ordering::Acquire))
    }

    fn store(&self, k: u64, state: KeyState) -> Result<(), String> {
        let v = state.encode();
        self.states[k as usize].store(v, Ordering::Release);
        self.file
            .write_all_at(&v.to_le_bytes(), HEADER + k * 8)
            .map_err(|e| format!("writing {}: {e}", self.path.display()))
    }

    /// Records that a write of id `id` (0 = delete) to `k` is about to be made.
    pub fn begin(&self, k: u64, id: u32) -> Result<(), String> {
        let committed = self.state(k).committed;
        self.store(
            k,
            KeyState {
                committed,
                pending: Some(id),
            },
        )
    }

    /// Records that the database acknowledged the write of `id` to `k`.
    pub fn commit(&self, k: u64, id: u32) -> Result<(), String> {
        self.store(
            k,
            KeyState {
                committed: id,
                pending: None,
            },
        )
    }

    /// The state of thread `t`'s own family (`t < FAMILY_SLOTS`).
    pub fn family(&self, t: u64) -> FamilyState {
        FamilyState::decode(self.families[t as usize].load(Ordering::Acquire))
    }

    /// Records the state of thread `t`'s own family.
    pub fn set_family(&self, t: u64, state: FamilyState) -> Result<(), String> {
        let v = state.encode();
        self.families[t as usize].store(v, Ordering::Release);
        let at = HEADER + self.keys() * 8 + t * 8;
        self.file
            .write_all_at(&v.to_le_bytes(), at)
            .map_err(|e| format!("writing {}: {e}", self.path.display()))
    }

    /// Counts `n` operations done (saved in the header now and then).
    pub fn add_ops(&self, n: u64) -> Result<(), String> {
        let total = self.ops.fetch_add(n, Ordering::Relaxed) + n;
        self.file
            .write_all_at(&total.to_le_bytes(), 16)
            .map_err(|e| format!("writing {}: {e}", self.path.display()))
    }

    /// Operations done in all runs so far.
    pub fn ops(&self) -> u64 {
        self.ops.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_survive_reopening_and_pending_writes_allow_both_outcomes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("oracle");
        let o = Oracle::open(&path, 10).unwrap();
        o.begin(3, 7).unwrap();
        o.commit(3, 7).unwrap();
        o.begin(3, 0).unwrap();
        o.begin(5, 2).unwrap();
        o.add_ops(42).unwrap();
        drop(o);
        let o = Oracle::open(&path, 10).unwrap();
        assert_eq!(o.ops(), 42);
        let s = o.state(3);
        assert!(s.allows(7) && s.allows(0) && !s.allows(8));
        let s = o.state(5);
        assert!(s.allows(0) && s.allows(2) && !s.allows(1));
        assert_eq!(
            o.state(0),
            KeyState {
                committed: 0,
                pending: None
            }
        );
        let e = Oracle::open(&path, 11).err().unwrap();
        assert!(e.contains("--keys"), "{e}");
    }

    #[test]
    fn family_states_survive_reopening_and_old_files_read_as_no_family() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("oracle");
        let o = Oracle::open(&path, 10).unwrap();
        let live = FamilyState {
            stage: FamilyStage::Live,
            generation: 9,
        };
        o.set_family(3, live).unwrap();
        drop(o);
        let o = Oracle::open(&path, 10).unwrap();
        assert_eq!(o.family(3), live);
        assert_eq!(o.family(2).stage, FamilyStage::Absent);
        // A file of the layout before the slots: the header and the keys only.
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(HEADER + 10 * 8).unwrap();
        let o = Oracle::open(&path, 10).unwrap();
        assert_eq!(o.family(3).stage, FamilyStage::Absent);
    }
}
