//! Memtable options (RocksDB's write buffers): their size and number, and the bloom filter
//! and point index each memtable keeps over its user keys.

use super::Options;
use crate::error::{Error, Result};

impl Options {
    /// Checks the memtables' size and number and the shares of their memory their bloom
    /// filter and point index may take.
    pub(super) fn validate_memtable(&self) -> Result<()> {
        if self.write_buffer_size < 4096 {
            return Err(Error::InvalidArgument(format!(
                "write_buffer_size is {}, it must be at least 4096",
                self.write_buffer_size
            )));
        }
        if !(0.0..=0.25).contains(&self.memtable_prefix_bloom_size_ratio) {
            return Err(Error::InvalidArgument(format!(
                "memtable_prefix_bloom_size_ratio is {}, it must be between 0 and 0.25",
                self.memtable_prefix_bloom_size_ratio
            )));
        }
        if !(0.0..=0.5).contains(&self.memtable_point_index_ratio) {
            return Err(Error::InvalidArgument(format!(
                "memtable_point_index_ratio is {}, it must be between 0 and 0.5",
                self.memtable_point_index_ratio
            )));
        }
        if self.max_write_buffer_number < 1 {
            return Err(Error::InvalidArgument(
                "max_write_buffer_number must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// Bytes each memtable's point index may take (0: none).
    pub(crate) fn memtable_point_index_bytes(&self) -> usize {
        (self.write_buffer_size as f64 * self.memtable_point_index_ratio) as usize
    }

    /// Bytes of each memtable's bloom filter (0: none).
    pub(crate) fn memtable_bloom_bytes(&self) -> usize {
        match self.memtable_whole_key_filtering {
            true => {
                (self.write_buffer_size as f64 * self.memtable_prefix_bloom_size_ratio) as usize
            }
            false => 0,
        }
    }
}
