//! IO options: how table and blob files are read and written, through the page cache,
//! around it (direct IO) or through a memory mapping. Their fields (`use_direct_reads`,
//! `use_direct_io_for_flush_and_compaction`, `allow_mmap_reads`,
//! `compaction_readahead_size`) are in [`Options`].

use super::Options;
use crate::error::{Error, Result};
use crate::fs::ReadMode;

impl Options {
    /// Checks that user reads ask for one way of reading at most.
    pub(super) fn validate_io(&self) -> Result<()> {
        if self.allow_mmap_reads && self.use_direct_reads {
            return Err(Error::InvalidArgument(
                "allow_mmap_reads and use_direct_reads cannot both be set: a mapping reads \
                 through the page cache that direct reads bypass"
                    .into(),
            ));
        }
        Ok(())
    }

    /// How user reads open table and blob files (validated options ask for one mode at
    /// most).
    pub(crate) fn read_mode(&self) -> ReadMode {
        match (self.use_direct_reads, self.allow_mmap_reads) {
            (true, _) => ReadMode::Direct,
            (false, true) => ReadMode::Mmap,
            (false, false) => ReadMode::Buffered,
        }
    }
}
