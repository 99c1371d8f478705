//! Compaction: merging table files into the next level, dropping what no reader can see.
//!
//! [`picker`] (leveled), [`universal`] and [`fifo`] (with the leveled picks by age) choose what to compact (pure functions of a
//! version and [`PickerOptions`], returning a [`task`]); [`visibility`] decides entry by entry
//! which versions the merge keeps, after [`operands`] has combined merge operands and
//! [`filter_stage`] has applied the family's compaction filter (and a TTL family's expiry); [`cut`]
//! where its outputs are cut into files; [`style`] holds the user-facing choice of compaction
//! style. The database runs the job and installs the result (`db::compact`).
//! `sim` (with the `sim` feature) runs the pickers on a simulated tree to measure a policy's
//! write-amp and space-amp (`strata sim`).

pub mod covered;
pub mod cut;
pub mod fifo;
pub mod filter_stage;
pub mod operands;
pub mod picker;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
pub mod style;
pub mod task;
pub mod universal;
pub mod visibility;

pub use picker::PickerOptions;

/// Reads the value a blob reference names: `(user key, encoded reference) -> value`. Given to
/// the steps of a compaction that need a separated value itself (a merge onto it, a compaction
/// filter); the database supplies it (`db::blob_source`).
pub type BlobResolver<'a> = dyn Fn(&[u8], &[u8]) -> crate::error::Result<Vec<u8>> + Sync + 'a;
pub use style::{CompactionStyle, FifoOptions, UniversalOptions};
pub use visibility::{Decision, VisibilityFilter};
