//! Write-ahead log options: what recovery does with a bad record ([`WalRecoveryMode`]) and
//! how many bytes a group commit joins into one WAL write. The WAL archive's options
//! (`wal_ttl_seconds`, `wal_size_limit_mb`) and `max_total_wal_size` are fields of
//! [`Options`] that need no check.

use super::Options;
use crate::error::{Error, Result};

/// What recovery does with a torn or corrupt record in the write-ahead logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WalRecoveryMode {
    /// Drop a torn or corrupt tail of the newest WAL (what a crash mid-write leaves) and
    /// refuse to open with a corruption error anywhere else. For that, every WAL but the
    /// newest is synced when a memtable switch closes it, so damage in an older one is never
    /// a crash's doing.
    TolerateCorruptedTail,
    /// Keep everything before the first bad record of any WAL and drop everything after it,
    /// newer WALs included (they are set aside as `NNNNNN.log.dropped`, not deleted). The
    /// database opens as of a point in time; writes after that point are lost, and none of
    /// them was synced. The default, as in RocksDB: with one column family a memtable switch
    /// leaves the WAL it closes unsynced (a synced write or `sync_wal` syncs it first), so
    /// that a WAL whose memtable is flushed before the kernel writes it back is deleted
    /// without its pages ever reaching the disk.
    #[default]
    PointInTime,
}

impl Options {
    /// Checks the write group's limit.
    pub(super) fn validate_wal(&self) -> Result<()> {
        if self.max_write_group_bytes < 1 {
            return Err(Error::InvalidArgument(
                "max_write_group_bytes must be at least 1".into(),
            ));
        }
        Ok(())
    }
}
