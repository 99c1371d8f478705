//! Blob files, the values kept out of the tables (key-value separation): `source` reads them
//! for the read paths, `output` writes them for flushes and compactions, and `at_write`
//! writes them as values are put (`Options::blob_separation_at_write`), before the WAL,
//! keeping what each memtable's values went to in `separated` until its flush.

pub(super) mod at_write;
pub(super) mod output;
pub(super) mod separated;
pub(super) mod source;
