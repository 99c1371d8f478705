//! Test-only helpers shared by the unit tests of several modules.
//!
//! - [`harness`]: the iterator conformance harness. Every sorted structure (block, table,
//!   skiplist, memtable, merging and concatenating iterators, the database iterator) is
//!   built from the same random sorted sets of key-value pairs and driven through the same
//!   random operations, checked step by step against the set itself.
//! - [`lsm`]: the `key#seq,KIND=value` text notation of entries, and small trees of
//!   memtables and tables built from it (for data-driven tests and constructors).

pub(crate) mod harness;
pub(crate) mod lsm;
