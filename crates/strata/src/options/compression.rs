//! Compression options: the compression of each level's tables (`compression`,
//! `compression_per_level`, `bottommost_compression`) and the compressors' options
//! (`compression_opts`, `bottommost_compression_opts`).

use super::Options;
use crate::error::{Error, Result};
use crate::table::{Compression, CompressionOptions};

impl Options {
    /// Checks each compressor's options against every compression they may apply to.
    pub(super) fn validate_compression(&self) -> Result<()> {
        let kinds = std::iter::once(self.compression).chain(self.compression_per_level.clone());
        for kind in kinds.chain(self.bottommost_compression) {
            self.compression_opts
                .check(kind)
                .map_err(|why| Error::InvalidArgument(format!("compression_opts: {why}")))?;
        }
        if let (Some(kind), Some(opts)) = (
            self.bottommost_compression,
            self.bottommost_compression_opts,
        ) {
            opts.check(kind).map_err(|why| {
                Error::InvalidArgument(format!("bottommost_compression_opts: {why}"))
            })?;
        }
        Ok(())
    }

    /// The compression, and its options, of a table written into `level`, the bottommost
    /// level when `bottommost` (RocksDB's choice: `bottommost_compression` there when set,
    /// else `compression_per_level` when not empty, else `compression`).
    pub(crate) fn compression_at(
        &self,
        level: usize,
        bottommost: bool,
    ) -> (Compression, CompressionOptions) {
        match (bottommost, self.bottommost_compression) {
            (true, Some(c)) => (
                c,
                self.bottommost_compression_opts
                    .unwrap_or(self.compression_opts),
            ),
            _ => {
                let per_level = &self.compression_per_level;
                let kind = match per_level.len() {
                    0 => self.compression,
                    n => per_level[level.min(n - 1)],
                };
                (kind, self.compression_opts)
            }
        }
    }
}
