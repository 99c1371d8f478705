//! A value handed to the caller without a copy where the engine can hold it: RocksDB's
//! `PinnableSlice`.
//!
//! A value found in a table lives in a data block that the block cache (or, without one, the
//! read that loaded it) holds behind an `Arc`. A [`PinnedValue`] keeps that `Arc` and the
//! value's byte range, so reading it costs no allocation and no copy; the block stays in
//! memory while the value lives, even if the cache evicts it meanwhile (the cache then no
//! longer charges it). A value from a memtable, or one a merge computed, is owned instead:
//! memtables are freed as a whole when flushed, and holding one for a value would keep all of
//! it. Either way the value reads as a byte slice.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

use super::block::Block;

/// A value read by `Db::get_pinned`: a byte slice, in a table block it keeps alive or in a
/// buffer of its own.
///
/// # Examples
///
/// ```
/// use strata::{Db, Options};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// let db = Db::open(dir.path(), options)?;
/// db.put(b"blob", vec![7u8; 4096])?;
/// db.flush()?;
/// let value = db.get_pinned(b"blob")?.expect("written above");
/// assert!(value.is_pinned()); // read in place in its table block: no copy
/// assert_eq!(value.len(), 4096); // derefs to &[u8]
/// assert_eq!(value[0], 7);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct PinnedValue {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    Owned(Vec<u8>),
    InBlock {
        block: Arc<Block>,
        range: Range<usize>,
    },
}

impl PinnedValue {
    /// A value in `block`, at `range` of its bytes.
    pub(crate) fn in_block(block: Arc<Block>, range: Range<usize>) -> PinnedValue {
        debug_assert!(range.end <= block.bytes().len());
        PinnedValue {
            repr: Repr::InBlock { block, range },
        }
    }

    /// True when the value is read in place in a table block (no copy was made).
    pub fn is_pinned(&self) -> bool {
        matches!(self.repr, Repr::InBlock { .. })
    }

    /// The value as an owned vector (a copy, unless it was owned already).
    pub fn into_vec(self) -> Vec<u8> {
        match self.repr {
            Repr::Owned(v) => v,
            Repr::InBlock { block, range } => block.bytes()[range].to_vec(),
        }
    }

    /// Keeps the first `len` bytes (a TTL family's value without its expiry).
    pub(crate) fn truncate(&mut self, len: usize) {
        match &mut self.repr {
            Repr::Owned(v) => v.truncate(len),
            Repr::InBlock { range, .. } => range.end = range.end.min(range.start + len),
        }
    }
}

impl From<Vec<u8>> for PinnedValue {
    fn from(v: Vec<u8>) -> PinnedValue {
        PinnedValue {
            repr: Repr::Owned(v),
        }
    }
}

impl Deref for PinnedValue {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.repr {
            Repr::Owned(v) => v,
            Repr::InBlock { block, range } => &block.bytes()[range.clone()],
        }
    }
}

impl AsRef<[u8]> for PinnedValue {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq for PinnedValue {
    fn eq(&self, other: &PinnedValue) -> bool {
        **self == **other
    }
}

impl Eq for PinnedValue {}

impl PartialEq<[u8]> for PinnedValue {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<&[u8]> for PinnedValue {
    fn eq(&self, other: &&[u8]) -> bool {
        **self == **other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for PinnedValue {
    fn eq(&self, other: &&[u8; N]) -> bool {
        **self == other[..]
    }
}

impl PartialEq<Vec<u8>> for PinnedValue {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

impl fmt::Debug for PinnedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedValue")
            .field("pinned", &self.is_pinned())
            .field("value", &String::from_utf8_lossy(self))
            .finish()
    }
}

/// What a point lookup hands back: an owned vector (`get`) or a [`PinnedValue`]
/// (`get_pinned`). The lookup is written once for both; each form takes the value from where
/// it was found in the cheapest way it can.
pub(crate) trait LookupValue: Sized + AsRef<[u8]> {
    /// A value found in a memtable (or anywhere that lends it only for the call).
    fn from_slice(v: &[u8]) -> Self;
    /// A value found in a table's data block, at `range` of the block's bytes.
    fn from_block(block: &Arc<Block>, range: Range<usize>) -> Self;
    /// A value already owned (a merge result).
    fn from_vec(v: Vec<u8>) -> Self;
    /// Keeps the first `len` bytes.
    fn truncate(&mut self, len: usize);
}

impl LookupValue for Vec<u8> {
    fn from_slice(v: &[u8]) -> Self {
        v.to_vec()
    }
    fn from_block(block: &Arc<Block>, range: Range<usize>) -> Self {
        block.bytes()[range].to_vec()
    }
    fn from_vec(v: Vec<u8>) -> Self {
        v
    }
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len)
    }
}

impl LookupValue for PinnedValue {
    fn from_slice(v: &[u8]) -> Self {
        PinnedValue::from(v.to_vec())
    }
    fn from_block(block: &Arc<Block>, range: Range<usize>) -> Self {
        PinnedValue::in_block(block.clone(), range)
    }
    fn from_vec(v: Vec<u8>) -> Self {
        PinnedValue::from(v)
    }
    fn truncate(&mut self, len: usize) {
        PinnedValue::truncate(self, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::block::BlockBuilder;

    #[test]
    fn a_value_in_a_block_reads_in_place_and_outlives_its_finder() {
        let mut builder = BlockBuilder::new(16);
        builder.add(b"key", b"the value");
        let block = Arc::new(Block::new(builder.finish().to_vec()).unwrap());
        let at = block
            .bytes()
            .windows(9)
            .position(|w| w == b"the value")
            .unwrap();
        let mut pinned = PinnedValue::in_block(block.clone(), at..at + 9);
        drop(block);
        assert!(pinned.is_pinned());
        assert_eq!(pinned, b"the value");
        pinned.truncate(3);
        assert_eq!(&*pinned, b"the");
        assert_eq!(pinned.clone().into_vec(), b"the".to_vec());

        let owned = PinnedValue::from(b"owned".to_vec());
        assert!(!owned.is_pinned());
        assert_eq!(owned, b"owned".to_vec());
        assert_eq!(
            format!("{owned:?}"),
            "PinnedValue { pinned: false, value: \"owned\" }"
        );
    }
}
