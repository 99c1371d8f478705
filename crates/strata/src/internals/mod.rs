//! Internals opened to the `strata` command, the fuzz targets and the integration tests.
//! The compaction simulator (`sim`) and the fuzz targets' logic (`fuzzing`) are compiled
//! only with the crate's `sim` and `fuzzing` features.
//! Hidden from the documentation and outside the public API: anything here may change in any
//! release.

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod range_del;

pub use crate::blob::reader::{BlobFileReader, BlobRecord};
pub use crate::blob::writer::BlobFileWriter;
pub use crate::blob::{BlobFileSummary, BlobIndex};
#[cfg(feature = "sim")]
pub use crate::compaction::sim;
pub use crate::compaction::PickerOptions;
pub use crate::filename::{is_engine_file as is_strata_file, parse_file_name, FileKind};
pub use crate::iterator::InternalIterator;
pub use crate::key::{append_internal_key, ParsedKey, ValueKind};
pub use crate::log::{LogReader, ReadError};
pub use crate::table::block::BlockBuilder;
pub use crate::table::compression::compress_block;
pub use crate::table::filter::FilterBuilder;
pub use crate::table::reader::{TableReadOptions, TableReadStats};
pub use crate::table::{Table, TableOptions};
pub use crate::util::{printable, utc_datetime, Rng};
pub use crate::version::{
    current_manifest, read_edits, FamilyState, FileMeta, Version, VersionEdit,
};
pub use crate::write_batch::DecodedBatch;

/// The options the compaction pickers read, as the engine derives them from `options`.
pub fn picker_options(options: &crate::Options) -> PickerOptions {
    options.picker_options()
}

/// The column families of the database in `dir` as its manifest describes them, by id.
pub fn read_families(
    dir: &std::path::Path,
) -> crate::Result<std::collections::BTreeMap<u32, FamilyState>> {
    crate::version::VersionSet::read_families(&crate::fs::PosixFs, dir)
}
