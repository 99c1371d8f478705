//! Checkpoints: an openable copy of the database as of one moment, made beside it while it
//! runs (RocksDB's `Checkpoint::CreateCheckpoint`).
//!
//! Order, each step durable before the next:
//! 1. flush every family, so that the WALs to copy are short (unless they are shorter than
//!    the caller's `log_size_for_flush`, as RocksDB's argument of that name);
//! 2. under the writer lock (no write group in flight, so the WALs end on whole batches) and
//!    the manifest lock (no flush or compaction installs or deletes a table meanwhile):
//!    sync the WAL, hard-link every live table and blob file (a copy across file systems), copy the WALs
//!    recovery would replay (and the blob files not yet in the tree that they may name) and the files of prepared transactions (two-phase commit: a
//!    commit removes its file under the writer lock, so the copies agree with the WALs),
//!    write a manifest of the current state and `CURRENT`, and a new `IDENTITY`, all into
//!    `DIR.tmp`;
//! 3. sync `DIR.tmp`, rename it to `DIR`, sync the parent.
//!
//! The checkpoint opens as the database stood when the locks were taken: every write
//! acknowledged before, in every family (batches across families whole), nothing after, and
//! the transactions prepared but not committed then, offered again by
//! `TransactionDb::prepared_transactions` when the checkpoint is opened.
//! Writes that skipped the WAL after step 1 are not in it, as a crash would lose them.
//! Writes wait during step 2, which links files and copies only the WALs written since the
//! flush. A checkpoint left half made by a crash is the `DIR.tmp` directory, never `DIR`.

use std::path::{Path, PathBuf};

use super::{Db, DbInner};
use crate::error::{Error, Result};
use crate::filename::{blob_path, table_path, wal_path};
use crate::fs::copy_file;

impl Db {
    /// Makes an openable copy of the database in directory `dir`, which must not exist: its
    /// tables are hard links to this database's (copies on another file system), so a
    /// checkpoint costs little space until the database compacts them away. Open it with
    /// [`Db::open_cf`] naming the same column families, or [`Db::open_read_only`].
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        self.checkpoint_opt(dir, 0)
    }

    /// [`Db::checkpoint`], flushing first only if the WALs to copy hold at least
    /// `log_size_for_flush` bytes (0: always, `u64::MAX`: never). Without the flush the
    /// checkpoint copies the WALs and replays them when opened; writes that skipped the WAL
    /// and were not flushed are then not in it.
    pub fn checkpoint_opt(&self, dir: impl AsRef<Path>, log_size_for_flush: u64) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.checkpoint(dir.as_ref(), log_size_for_flush)
    }
}

impl DbInner {
    fn checkpoint(&self, dir: &Path, log_size_for_flush: u64) -> Result<()> {
        let fs = self.fs.as_ref();
        if fs.exists(dir) {
            return Err(Error::InvalidArgument(format!(
                "checkpoint directory {} already exists",
                dir.display()
            )));
        }
        let mut tmp = dir.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        if fs.exists(&tmp) {
            return Err(Error::InvalidArgument(format!(
                "{} exists (left by an interrupted checkpoint?): remove it first",
                tmp.display()
            )));
        }
        let wals: Vec<u64> = self.wal.wals.lock().iter().copied().collect();
        let wal_bytes: u64 = wals
            .iter()
            .filter_map(|&n| fs.file_size(&wal_path(&self.path, n)).ok())
            .sum();
        if wal_bytes >= log_size_for_flush {
            self.flush_memtables(None, crate::listener::FlushReason::Checkpoint)?;
        }
        fs.create_dir_all(&tmp)?;
        if let Err(e) = self.fill_checkpoint(&tmp) {
            // Half a checkpoint is of no use: remove what was made (a failure to is left
            // for the caller to see as the `.tmp` directory).
            if let Ok(names) = fs.list_dir(&tmp) {
                for name in names {
                    let _ = fs.remove_file(&tmp.join(name));
                }
            }
            let _ = std::fs::remove_dir(&tmp);
            return Err(e);
        }
        fs.rename(&tmp, dir)?;
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        fs.sync_dir(parent)?;
        self.info_log
            .info(format_args!("checkpoint made in {}", dir.display()));
        Ok(())
    }

    /// Step 2 of the order above, into `tmp`.
    fn fill_checkpoint(&self, tmp: &Path) -> Result<()> {
        let fs = self.fs.as_ref();
        let mut writer = self.commit.writer.lock();
        writer.sync_wal()?;
        // Writers append to the active blob files before they queue: held while they are
        // copied (lock order: writer, blob files, versions).
        let active_blobs = self.blobs_at_write.active.lock();
        let versions = self.versions.lock();
        let mut tables: Vec<u64> = versions.live_files().into_iter().collect();
        tables.sort_unstable();
        for n in tables {
            fs.link_or_copy(&table_path(&self.path, n), &table_path(tmp, n))?;
        }
        let live_blobs = versions.live_blob_files();
        let mut blobs: Vec<u64> = live_blobs.iter().copied().collect();
        blobs.sort_unstable();
        for &n in &blobs {
            fs.link_or_copy(&blob_path(&self.path, n), &blob_path(tmp, n))?;
        }
        let oldest = versions.min_log_number();
        // Blob files the WALs to copy may name (values written at put, see
        // `blob/at_write.rs`): copied, not linked, as the write path may still append to one.
        for n in self.blob_files_wals_may_name(&active_blobs) {
            if !live_blobs.contains(&n) {
                copy_file(fs, &blob_path(&self.path, n), &blob_path(tmp, n))?;
            }
        }
        let wals: Vec<u64> = self.wal.wals.lock().iter().copied().collect();
        for n in wals.into_iter().filter(|&n| n >= oldest) {
            let from = wal_path(&self.path, n);
            if fs.exists(&from) {
                copy_file(fs, &from, &wal_path(tmp, n))?;
            }
        }
        self.copy_prepared_files(tmp)?;
        versions.write_manifest_into(tmp)?;
        super::open::create_identity(fs, tmp)?;
        fs.sync_dir(tmp)?;
        drop(versions);
        drop(active_blobs);
        drop(writer);
        Ok(())
    }

    /// Copies the file of every prepared transaction into `tmp`. A prepare or a rollback
    /// does not take the writer lock: one that lands during the copy counts as made after
    /// the checkpoint if its file is not there to copy, before it if it is.
    fn copy_prepared_files(&self, tmp: &Path) -> Result<()> {
        let fs = self.fs.as_ref();
        for file in fs.list_dir(&self.path)? {
            if super::write::two_phase::parse_prepared_file_name(&file).is_none() {
                continue;
            }
            let from = self.path.join(&file);
            if let Err(e) = copy_file(fs, &from, &tmp.join(&file)) {
                // Rolled back while being copied: not part of the checkpoint.
                if fs.exists(&from) {
                    return Err(e);
                }
                let _ = fs.remove_file(&tmp.join(&file));
            }
        }
        Ok(())
    }
}
