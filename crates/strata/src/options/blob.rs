//! Blob options (RocksDB's integrated BlobDB): key-value separation (`enable_blob_files`,
//! `min_blob_size`, `blob_file_size`, `blob_separation_at_write`) and the garbage collection
//! of blob files. What the compaction picker reads of them is in `picker_options`.

use super::Options;
use crate::error::{Error, Result};

impl Options {
    /// Checks the size of blob files and the fractions of garbage collection.
    pub(super) fn validate_blob(&self) -> Result<()> {
        if self.blob_file_size < 1 {
            return Err(Error::InvalidArgument(
                "blob_file_size must be at least 1".into(),
            ));
        }
        for (name, fraction) in [
            (
                "blob_garbage_collection_age_cutoff",
                self.blob_garbage_collection_age_cutoff,
            ),
            (
                "blob_garbage_collection_force_threshold",
                self.blob_garbage_collection_force_threshold,
            ),
        ] {
            if !(0.0..=1.0).contains(&fraction) {
                return Err(Error::InvalidArgument(format!(
                    "{name} is {fraction}, it must be between 0 and 1"
                )));
            }
        }
        Ok(())
    }
}
