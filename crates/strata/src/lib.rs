//! Strata: a persistent, ordered key-value store (an LSM tree).
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod codec;
pub mod error;
pub mod fs;
pub mod iterator;
pub mod key;
pub mod log;
pub mod memtable;
pub mod util;
pub mod write_batch;

pub use error::{Error, ErrorKind, Result};
pub use write_batch::WriteBatch;
