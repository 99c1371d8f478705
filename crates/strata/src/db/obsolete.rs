//! Deleting obsolete files (LevelDB's `RemoveObsoleteFiles`), in the two places it happens:
//!
//! - At open, [`remove_obsolete_files`] lists the directory and deletes every engine file the
//!   recovered state does not need: WALs older than the manifest's log number (their data is
//!   in tables), tables and blob files no version names (a crash between writing one and
//!   recording it, or a blob file no table referred to any more),
//!   manifests other than the live one, temporary files of an interrupted atomic write. Blob
//!   files no version names are returned with the WALs still needed, not deleted: a WAL may
//!   name values in them (see `blob/at_write.rs`). Open deletes those the replay did not read
//!   from, and the flush that deletes the newest WAL naming one of the others deletes it. Files the engine does not name (and the bytes
//!   recovery cut from a WAL, kept for diagnosis) are left alone.
//! - While open, [`DbInner::purge_obsolete_files`] deletes the tables compactions replaced,
//!   and the blob files no table refers to any more, once no version in use names them: an iterator or a running job may hold an older version
//!   whose files must stay readable. It runs after each flush and compaction and at close;
//!   what a reader still held is deleted at the next call, or at the next open. Event
//!   listeners hear of each table it deletes (not of the files removed at open: the database
//!   is not open yet).
//!
//! WALs are deleted by the flush that makes them unnecessary (`flush.rs`), after the manifest
//! records the new log number.

use std::collections::HashSet;
use std::path::Path;

use super::DbInner;
use crate::error::Result;
use crate::filename::{blob_path, parse_file_name, table_path, FileKind};
use crate::fs::FileSystem;
use crate::listener::{TableFileDeletionInfo, TableFileDeletionReason};

/// What the recovered state needs.
pub(super) struct LiveFiles {
    /// Tables the current version names.
    pub tables: HashSet<u64>,
    /// Blob files the current version names.
    pub blobs: HashSet<u64>,
    /// The oldest WAL whose data is not in a table yet.
    pub log_number: u64,
    /// The manifest in use.
    pub manifest_number: u64,
}

impl LiveFiles {
    /// Whether a file of this kind is obsolete.
    fn is_obsolete(&self, kind: FileKind) -> bool {
        match kind {
            FileKind::Wal(n) => n < self.log_number,
            FileKind::Temp => true,
            FileKind::Table(n) => !self.tables.contains(&n),
            // One no version names may hold values a WAL to replay names: open decides after
            // the replay.
            FileKind::Blob(_) => false,
            FileKind::Manifest(n) => n != self.manifest_number,
            FileKind::DroppedWalTail(_) => false,
        }
    }
}

/// Deletes the obsolete files in `dir`; returns the numbers of the WALs to replay, and those
/// of the blob files kept for them (named by no version), ascending.
pub(super) fn remove_obsolete_files(
    fs: &dyn FileSystem,
    dir: &Path,
    live: &LiveFiles,
) -> Result<(Vec<u64>, Vec<u64>)> {
    let (mut wals, mut blobs) = (Vec::new(), Vec::new());
    for name in &fs.list_dir(dir)? {
        let Some(kind) = parse_file_name(name) else {
            continue;
        };
        match kind {
            _ if live.is_obsolete(kind) => fs.remove_file(&dir.join(name))?,
            FileKind::Wal(n) => wals.push(n),
            FileKind::Blob(n) if !live.blobs.contains(&n) => blobs.push(n),
            _ => {}
        }
    }
    wals.sort_unstable();
    blobs.sort_unstable();
    Ok((wals, blobs))
}

impl DbInner {
    /// Deletes the tables compactions replaced that no version in use names any more, then
    /// tells the event listeners (with no lock held).
    pub(super) fn purge_obsolete_files(&self) {
        let in_use = {
            let mut versions = self.versions.lock();
            self.obsolete
                .blobs
                .lock()
                .extend(versions.take_dropped_blob_files());
            versions.files_in_use()
        };
        self.obsolete.blobs.lock().retain(|&n| {
            if in_use.contains(&n) {
                return true;
            }
            self.blobs.evict(n);
            // A failed delete leaves an orphan that the next open removes.
            let _ = self.fs.remove_file(&blob_path(&self.path, n));
            false
        });
        let mut unused = Vec::new();
        self.obsolete.tables.lock().retain(|&n| {
            let keep = in_use.contains(&n);
            if !keep {
                unused.push(n);
            }
            keep
        });
        let mut deleted = Vec::new();
        // Outside the list's lock: erasing a table's blocks from the block cache walks its
        // index.
        for n in unused {
            self.tables.evict(n);
            // A failed delete leaves an orphan that the next open removes.
            if self.fs.remove_file(&table_path(&self.path, n)).is_ok() {
                deleted.push(n);
            }
        }
        if !self.events.enabled() {
            return;
        }
        for n in deleted {
            let info = TableFileDeletionInfo {
                file_number: n,
                path: table_path(&self.path, n),
                reason: TableFileDeletionReason::Obsolete,
            };
            self.notify("on_table_file_deleted", |l| l.on_table_file_deleted(&info));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obsolete_files_by_kind() {
        let live = LiveFiles {
            tables: [7, 9].into_iter().collect(),
            blobs: [10].into_iter().collect(),
            log_number: 12,
            manifest_number: 11,
        };
        let cases = [
            ("000011.log", true),
            ("000012.log", false),
            ("000013.log", false),
            ("000007.sst", false),
            ("000008.sst", true),
            // Blob files wait for the replay: a WAL may name values in any of them.
            ("000010.blob", false),
            ("000008.blob", false),
            ("000013.blob", false),
            ("MANIFEST-000011", false),
            ("MANIFEST-000010", true),
            ("CURRENT.tmp", true),
            ("000005.log.dropped", false),
        ];
        for (name, obsolete) in cases {
            let kind = parse_file_name(name).unwrap();
            assert_eq!(live.is_obsolete(kind), obsolete, "{name}");
        }
    }

    #[test]
    fn removal_at_open_keeps_foreign_files_and_returns_wals_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let names = [
            "000013.log",
            "000012.log",
            "000011.log",
            "000008.sst",
            "000007.sst",
            "000011.blob",
            "000014.blob",
            "MANIFEST-000010",
            "MANIFEST-000011",
            "notes.txt",
            "CURRENT",
        ];
        for n in names {
            std::fs::write(dir.path().join(n), b"x").unwrap();
        }
        let live = LiveFiles {
            tables: [7].into_iter().collect(),
            blobs: Default::default(),
            log_number: 12,
            manifest_number: 11,
        };
        let (wals, blobs) = remove_obsolete_files(&crate::fs::PosixFs, dir.path(), &live).unwrap();
        assert_eq!(wals, [12, 13]);
        assert_eq!(blobs, [11, 14]);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "000007.sst",
                "000011.blob",
                "000012.log",
                "000013.log",
                "000014.blob",
                "CURRENT",
                "MANIFEST-000011",
                "notes.txt"
            ]
        );
    }
}
