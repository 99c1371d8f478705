//! Where a key lies in a table's file, read from the index alone (RocksDB's
//! `ApproximateOffsetOf`): no data block is read, so sizing a key range costs one index
//! seek per table it cuts.
//!
//! The offset is that of the data block a seek for the key would read: every entry before
//! that block is before the key, so the bytes between two keys' offsets are the data
//! blocks between them, to within a block at each end.

use crate::error::Result;
use crate::table::partitioned::IndexIter;
use crate::table::reader::Table;
use std::sync::Arc;

impl Table {
    /// The offset in the file of the data block that would hold `target` (a key as the
    /// table stores them: an internal key in a table of internal keys); `None` when
    /// `target` is past the last block's keys.
    pub fn approximate_offset_of(self: &Arc<Self>, target: &[u8]) -> Result<Option<u64>> {
        let mut index = IndexIter::new(self.clone(), self.index_block()?, self.partitioned_index);
        index.seek(target);
        if let Some(e) = index.error() {
            return Err(e);
        }
        match index.valid() {
            true => Ok(Some(index.handle()?.offset)),
            false => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::fs::{FileSystem, PosixFs};
    use crate::key::{seek_key, MAX_SEQUENCE};
    use crate::table::reader::TableReadOptions;
    use crate::table::{Table, TableBuilder, TableOptions};
    use std::sync::Arc;

    #[test]
    fn offsets_grow_with_keys_and_stop_past_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000001.sst");
        let options = TableOptions {
            block_size: 256,
            ..TableOptions::for_internal_keys()
        };
        let mut b = TableBuilder::new(PosixFs.create_writable(&path).unwrap(), options.clone());
        for i in 0..1000u32 {
            let key = format!("k{i:05}");
            b.add(&seek_key(key.as_bytes(), 1), &[b'v'; 50]).unwrap();
        }
        let (size, props) = b.finish().unwrap();
        let file = PosixFs.open_random(&path).unwrap();
        let t = Arc::new(Table::open(file, &path, &TableReadOptions::uncached(options)).unwrap());
        let at = |k: &str| {
            t.approximate_offset_of(&seek_key(k.as_bytes(), MAX_SEQUENCE))
                .unwrap()
        };
        assert_eq!(at("a"), Some(0));
        let (quarter, half) = (at("k00250").unwrap(), at("k00500").unwrap());
        assert!(
            0 < quarter && quarter < half && half < size,
            "{quarter} {half}"
        );
        // Half the keys are before the middle: half the data blocks (with their 5-byte
        // trailers), to within a block.
        let data = props.data_bytes + 5 * props.data_blocks;
        assert!(half.abs_diff(data / 2) < 256, "{half} of {data}");
        assert_eq!(at("z"), None);
    }
}
