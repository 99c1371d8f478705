//! Ingesting behind (RocksDB's `IngestExternalFileOptions::ingest_behind`): files placed
//! under all of a family's data, for bulk backfills of old records.
//!
//! The last level (`num_levels - 1`) is reserved for them by
//! [`Options::allow_ingest_behind`](crate::Options::allow_ingest_behind): compaction never
//! writes there (its pickers see one level fewer), so every key in the levels above is
//! newer than what may land in it. The files keep sequence number 0, are linked or copied
//! as they are, and one manifest edit adds them to the last level.
//!
//! Why this is right. Reads take the newest version of a key level by level, top down, so
//! a key of the last level is shadowed by any version, or any deletion, of it above. Two
//! conditions keep that true:
//! - no file of the last level overlaps an ingested file: two files of one level must not
//!   share keys, and both at sequence 0 neither would win;
//! - the levels above keep their deletions: a compaction with the last level reserved is
//!   never the bottom of its keys (see `compact.rs`), so a deletion made before the ingest
//!   stays above it and hides the ingested key, as the caller meant. Data compacted before
//!   the level was reserved may have dropped its deletions and carries sequence number 0;
//!   an ingest overlapping such a file is refused, as RocksDB refuses it.
//!
//! Writes do not wait for anything but the manifest edit (they never reach the last level);
//! compactions are held off while the version is checked and changed, and the writer lock
//! is taken, as a plain ingest takes it, so that no other ingest installs a file meanwhile.

use std::sync::Arc;

use super::{ranges_overlap, Ingested, Made};
use crate::db::families::ColumnFamilyData;
use crate::db::DbInner;
use crate::error::{Error, Result};
use crate::key::user_key;
use crate::options::IngestOptions;
use crate::util::printable;
use crate::version::VersionEdit;

impl DbInner {
    /// Adds the examined `files` (sorted, not overlapping one another) to the reserved last
    /// level of `cf`.
    pub(super) fn ingest_behind(
        &self,
        cf: &Arc<ColumnFamilyData>,
        mut files: Vec<Ingested>,
        options: &IngestOptions,
    ) -> Result<()> {
        if !cf.options.allow_ingest_behind {
            return Err(Error::InvalidArgument(format!(
                "ingest_behind: column family '{}' has no reserved last level; open the \
                 database with allow_ingest_behind",
                cf.name()
            )));
        }
        let last = cf.options.num_levels - 1;
        let mut made = Made {
            db: self,
            numbers: Vec::new(),
            kept: false,
        };
        for f in &mut files {
            let number = self.versions.lock().new_file_number();
            made.numbers.push(number);
            self.bring_in_as_is(f, number, options.move_files)?;
        }
        self.fs.sync_dir(&self.path)?;

        let _no_compactions = self.begin_manual_compaction()?;
        let w = self.commit.writer.lock();
        w.check_stopped()?;
        self.check_open()?;
        self.check_background()?;
        if cf.handle.is_dropped() {
            return Err(crate::db::families::dropped_error(&cf.handle));
        }
        let version = cf.super_version().version.clone();
        for f in &files {
            let refuse = |why: String| {
                Error::InvalidArgument(format!(
                    "ingest_behind: file {} (keys {}..{}) {why}",
                    f.source.display(),
                    printable(user_key(&f.meta.smallest)),
                    printable(user_key(&f.meta.largest)),
                ))
            };
            if let Some(t) = version.levels[last]
                .iter()
                .find(|t| ranges_overlap(&version.order, t, &f.meta))
            {
                return Err(refuse(format!(
                    "overlaps table {} already in the last level (L{last})",
                    t.number
                )));
            }
            if let Some((level, t)) = version.levels[..last]
                .iter()
                .enumerate()
                .flat_map(|(level, tables)| tables.iter().map(move |t| (level, t)))
                .find(|(_, t)| t.smallest_seq == 0 && ranges_overlap(&version.order, t, &f.meta))
            {
                return Err(refuse(format!(
                    "overlaps table {} at L{level}, which holds keys at sequence number 0 \
                     (compacted before the last level was reserved, its deletions may be gone)",
                    t.number
                )));
            }
        }
        let mut edit = VersionEdit {
            column_family: cf.id(),
            ..VersionEdit::default()
        };
        for f in &files {
            edit.new_files.push((last, f.meta.clone()));
        }
        {
            let mut versions = self.versions.lock();
            // As in a plain ingest: once the edit may have reached the manifest, the tables
            // stay (the next open deletes them if no edit names them).
            made.kept = true;
            let version = versions.log_and_apply(edit)?;
            if cfg!(debug_assertions) {
                if let Err(why) = version.check() {
                    panic!("ingest_behind broke the version invariants: {why}\n{version:?}");
                }
            }
            cf.install_version(version);
        }
        drop(w);
        let placed: Vec<String> = files
            .iter()
            .map(|f| format!("table {} ({} entries)", f.meta.number, f.meta.entries))
            .collect();
        self.info_log.info(format_args!(
            "ingest behind the data of family '{}' into L{last}: {}",
            cf.name(),
            placed.join(", ")
        ));
        if options.move_files {
            for f in &files {
                if let Err(e) = self.fs.remove_file(&f.source) {
                    self.info_log
                        .warn(format_args!("ingest: the moved file stays: {e}"));
                }
            }
        }
        Ok(())
    }
}
