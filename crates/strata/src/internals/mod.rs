//! Internals opened to the `strata` command, the fuzz targets and the integration tests.
//! Hidden from the documentation and outside the public API: anything here may change in any
//! release.

pub mod fuzzing;

pub use crate::compaction::{sim, PickerOptions};
pub use crate::filename::{parse_file_name, FileKind};
pub use crate::iterator::InternalIterator;
pub use crate::key::{append_internal_key, ParsedKey, ValueKind};
pub use crate::table::block::BlockBuilder;
pub use crate::table::filter::FilterBuilder;
pub use crate::table::reader::{TableReadOptions, TableReadStats};
pub use crate::table::{Table, TableOptions};
pub use crate::util::{printable, Rng};
pub use crate::version::{current_manifest, read_edits, Version, VersionEdit};
