//! The memtable: recent writes in memory, ordered by internal key.
//!
//! A memtable is an arena skiplist ([`skiplist`]) of internal keys and values. Writes come
//! from one writer at a time (the group-commit leader); reads and iterators take no lock.
//! The newest entries may be staged in the skiplist, not linked yet: a get looks at them
//! before it searches the list, and an iterator merges a sorted copy of them into the list
//! ([`MemTableIterator`]).
//! When it is full ([`MemTable::is_full`]: about `write_buffer_size` bytes of memory, by
//! RocksDB's rule) the database makes it immutable and starts a new one; it is then read-only
//! until it is flushed to a table.
//!
//! Range deletions do not go into the skiplist: [`MemTable::add`] routes them to the
//! memtable's [`MemTombstones`], which readers ask for a fragmented view. They count in the
//! memory usage, not in the point entries, and a memtable holding only range deletions is
//! not empty: it is flushed like any other.
//!
//! With a bloom filter ([`bloom`], `memtable_whole_key_filtering`), a get first asks the
//! filter whether the memtable may hold the key, and skips the skiplist when it cannot.
//! With a point index ([`point_index`], `memtable_point_index_ratio`), a get then finds the
//! newest version of its key by a hash probe, and searches the list only when the index
//! cannot tell (a version newer than the read, a key the full index left out). The index is
//! made once the memtable holds [`INDEX_AFTER`] entries (those are put in it then), so that
//! a memtable that takes few writes (a family written now and then, one just switched in)
//! holds no index memory.
//!
//! A memtable records the number of the WAL that holds its writes (`log_number`): the WAL
//! can be deleted once the memtable is flushed.

pub mod bloom;
pub mod point_index;
pub mod skiplist;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::comparator::KeyOrder;
use crate::iterator::InternalIterator;
use crate::key::{
    filter_hash, pack_trailer, SequenceNumber, ValueKind, KIND_FOR_SEEK, TRAILER_LEN,
};
use crate::range_del::{FragmentedList, MemTombstones};
use bloom::MemBloom;
use point_index::{Indexed, PointIndex};
use skiplist::{node_key, node_next, node_target, node_value, Node, SkipList, Target};

/// Entries a memtable holds before it makes its point index: walking them into it then
/// takes a few microseconds.
pub const INDEX_AFTER: u64 = 256;

/// What a memtable knows about a key at a sequence number.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// The newest visible entry is a put of this value.
    Found(&'a [u8]),
    /// The newest visible entry deletes the key: older tables must not be consulted.
    Deleted,
    /// The memtable has no visible entry for the key.
    Missing,
    /// The newest visible entry is a merge operand: the reader must collect the operands
    /// below it (here and in older memtables and tables) and merge them.
    Merge,
}

/// Recent writes, in memory.
pub struct MemTable {
    /// Unique among the memtables of the process: names it where others keep something of
    /// it (the blob files its values went to as they were written).
    id: u64,
    list: SkipList,
    /// Hashes of the user keys of the entries, when the family asks for a filter.
    bloom: Option<MemBloom>,
    /// The newest node of each user key, once made (module doc): set by the writer, with
    /// every entry added so far in it, before the add that made it returns.
    point_index: std::sync::OnceLock<PointIndex>,
    /// The most bytes the point index may take (0: none).
    point_index_bytes: usize,
    log_number: u64,
    entries: AtomicU64,
    tombstones: MemTombstones,
    /// The addresses of the staged nodes (see `skiplist`) in key order, as the last iterator
    /// sorted them; see [`MemTable::staged_in_order`].
    staged_order: parking_lot::Mutex<Vec<usize>>,
}

impl MemTable {
    /// An empty memtable whose writes are logged in WAL `log_number`, sized for a switch at
    /// `write_buffer_size` bytes (its arena grows in blocks of an eighth of that, as RocksDB's,
    /// at most 1 MiB; from a 16 MiB buffer up, 2 MiB huge pages after the first two: see
    /// `skiplist`).
    #[cfg(test)]
    pub fn new(log_number: u64, write_buffer_size: usize) -> MemTable {
        MemTable::with_order(log_number, write_buffer_size, KeyOrder::Bytewise)
    }

    /// [`MemTable::new`] with user keys in `order` (the column family's).
    pub fn with_order(log_number: u64, write_buffer_size: usize, order: KeyOrder) -> MemTable {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        MemTable {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            list: SkipList::with_order(log_number ^ 0x5eed, write_buffer_size / 8, order.clone()),
            bloom: None,
            point_index: std::sync::OnceLock::new(),
            point_index_bytes: 0,
            log_number,
            entries: AtomicU64::new(0),
            tombstones: MemTombstones::with_order(order),
            staged_order: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// This memtable with a bloom filter of `bytes` bytes over its user keys (none for 0).
    pub fn with_bloom(mut self, bytes: usize) -> MemTable {
        self.bloom = (bytes > 0).then(|| MemBloom::with_bytes(bytes));
        self
    }

    /// This memtable with a point index of at most `bytes` bytes over its user keys, made
    /// once it holds [`INDEX_AFTER`] entries (none for 0, for too few bytes, or for a custom
    /// comparator: see [`point_index`]).
    pub fn with_point_index(mut self, bytes: usize) -> MemTable {
        self.point_index_bytes = match self.list.order() {
            KeyOrder::Custom(_) => 0,
            KeyOrder::Bytewise | KeyOrder::Reverse => bytes,
        };
        self
    }

    /// Makes the point index (if it can be made) and puts every entry added so far in it:
    /// the linked nodes, then those still staged (a node in both is put in twice, which
    /// changes nothing). Called by the writer, so no entry is added meanwhile.
    fn make_point_index(&self) {
        let Some(index) = PointIndex::with_bytes(self.point_index_bytes) else {
            return;
        };
        let put = |node: Node| {
            // SAFETY: a node of `self.list`, which lives as long as `self`.
            let Target { user_key, trailer } = unsafe { node_target(node) };
            // SAFETY: a fully written node of `self.list`, a version of `user_key`.
            unsafe { index.insert(user_key, filter_hash(user_key), trailer, node) };
        };
        // SAFETY: the head and linked nodes of `self.list`.
        let mut node = unsafe { node_next(self.list.head()) };
        while !node.is_null() {
            put(node);
            // SAFETY: as above.
            node = unsafe { node_next(node) };
        }
        self.list.staged_nodes().into_iter().for_each(put);
        // Published with `Release`: a reader that sees the index sees its slots.
        let _ = self.point_index.set(index);
    }

    /// False only if the memtable holds no entry (of any sequence number) for the user key
    /// whose [`filter_hash`] is `hash`; always true
    /// without a bloom filter.
    #[inline]
    pub fn may_contain(&self, hash: u64) -> bool {
        self.bloom.as_ref().is_none_or(|b| b.may_contain(hash))
    }

    /// Starts loading the line of the bloom filter that [`MemTable::may_contain`] will read
    /// for `hash` (nothing without a filter).
    #[inline]
    pub fn prefetch_filter(&self, hash: u64) {
        if let Some(b) = &self.bloom {
            b.prefetch(hash);
        }
        if let Some(index) = self.point_index.get() {
            index.prefetch(hash);
        }
    }

    /// The memtable's id, unique in the process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The WAL that holds this memtable's writes.
    pub fn log_number(&self) -> u64 {
        self.log_number
    }

    /// Adds one entry. Callers serialise adds (the write leader); each `(key, seq)` is new.
    /// A range deletion (`key` its begin, `value` its end) goes to the tombstones.
    pub fn add(&self, seq: SequenceNumber, kind: ValueKind, key: &[u8], value: &[u8]) {
        if kind == ValueKind::RangeDeletion {
            self.tombstones.add(key, value, seq);
            return;
        }
        let index = self.point_index.get();
        let hash = match self.bloom.is_some() || index.is_some() {
            true => filter_hash(key),
            false => 0,
        };
        if let Some(index) = index {
            // Its line loads while the list inserts: a random key's slot is a cache miss.
            index.prefetch(hash);
        }
        if let Some(bloom) = &self.bloom {
            // Before the entry is linked: see `bloom` on why readers then see the bits.
            bloom.add(hash);
        }
        if let Some(index) = index {
            // The slot's line has come meanwhile; an overwrite's older node then loads while
            // the list inserts.
            index.prefetch_for_insert(hash);
        }
        let trailer = pack_trailer(seq, kind as u8);
        let node = self.list.insert(key, trailer, value);
        let entries = self.entries.fetch_add(1, Ordering::Relaxed) + 1;
        match index {
            // SAFETY: the node just written into `self.list`, a version of `key`; adds are
            // serialised (this function's contract).
            Some(index) => unsafe { index.insert(key, hash, trailer, node) },
            None if self.point_index_bytes > 0 && entries == INDEX_AFTER => self.make_point_index(),
            None => {}
        }
    }

    /// The newest entry for `key` with a sequence number at most `seq`.
    #[cfg(test)]
    pub fn get(&self, key: &[u8], seq: SequenceNumber) -> Lookup<'_> {
        self.get_with_seq(key, seq).0
    }

    /// The newest entry for `key` with a sequence number at most `seq`, and its sequence
    /// number (0 for `Missing`): a reader compares it with the range deletions covering the
    /// key.
    pub fn get_with_seq(&self, key: &[u8], seq: SequenceNumber) -> (Lookup<'_>, SequenceNumber) {
        // Only the point index reads the hash. Asked of the setting, not of the index, which
        // may be made between here and the lookup.
        let hash = match self.point_index_bytes > 0 {
            true => filter_hash(key),
            false => 0,
        };
        self.get_hashed(key, hash, seq)
    }

    /// [`MemTable::get_with_seq`] for a key whose [`filter_hash`] is `hash` (which only the
    /// point index reads).
    pub fn get_hashed(
        &self,
        key: &[u8],
        hash: u64,
        seq: SequenceNumber,
    ) -> (Lookup<'_>, SequenceNumber) {
        if let Some(index) = self.point_index.get() {
            match index.find(key, hash) {
                Indexed::Absent => return (Lookup::Missing, 0),
                // The newest version is the answer unless it is newer than the read.
                Indexed::Newest(node, trailer) if trailer >> 8 <= seq => {
                    return self.lookup_of(node, trailer)
                }
                Indexed::Newest(..) | Indexed::Unknown => {}
            }
        }
        let target = Target {
            user_key: key,
            trailer: pack_trailer(seq, KIND_FOR_SEEK),
        };
        // The staging area first, then the list: a node leaves the area only once linked
        // (`skiplist`'s module doc). Each gives a version of `key` or nothing; the newer one
        // (the larger trailer) is the answer.
        let staged = self.list.find_staged(key, target.trailer);
        let linked = self.list.find_greater_or_equal(&target, None);
        let Some((node, trailer)) = [staged, linked]
            .into_iter()
            .filter_map(|node| self.version_of(node, key))
            .max_by_key(|&(_, trailer)| trailer)
        else {
            return (Lookup::Missing, 0);
        };
        self.lookup_of(node, trailer)
    }

    /// What version `node` (with `trailer`) of a key tells a get.
    fn lookup_of(&self, node: Node, trailer: u64) -> (Lookup<'_>, SequenceNumber) {
        let lookup = match ValueKind::from_byte(trailer as u8) {
            // SAFETY: a node of `self.list`, which lives as long as `self`.
            Some(ValueKind::Put) => Lookup::Found(unsafe { node_value(node) }),
            Some(ValueKind::Delete | ValueKind::SingleDelete) => Lookup::Deleted,
            Some(ValueKind::Merge) => Lookup::Merge,
            // Memtables never hold blob references (only flushes and compactions make them).
            Some(ValueKind::RangeDeletion | ValueKind::BlobIndex) | None => Lookup::Missing,
        };
        (lookup, trailer >> 8)
    }

    /// `node` and its trailer if it is a version of `key` (none for null).
    fn version_of(&self, node: Node, key: &[u8]) -> Option<(Node, u64)> {
        if node.is_null() {
            return None;
        }
        // SAFETY: a node of `self.list`, which lives as long as `self`.
        let ikey = unsafe { node_key(node) };
        let (user_key, trailer) = ikey.split_at(ikey.len() - TRAILER_LEN);
        let trailer = u64::from_le_bytes(trailer.try_into().ok()?);
        (user_key == key).then_some((node, trailer))
    }

    /// Bytes of memory used, what the switch to a new memtable is decided on.
    pub fn memory_usage(&self) -> usize {
        self.list.memory_usage()
            + self.tombstones.memory_usage()
            + self.bloom.as_ref().map_or(0, MemBloom::memory_usage)
            + self.point_index.get().map_or(0, PointIndex::memory_usage)
    }

    /// True when the memtable should be switched for a new one, sized for
    /// `write_buffer_size` (RocksDB's rule, so that both engines flush memtables holding about
    /// as many entries; from a 16 MiB buffer up Strata's blocks are 2 MiB where RocksDB's
    /// stay at 1 MiB, which moves the switch by at most a block; the point index, which
    /// RocksDB has not, counts in the memory as the bloom filter does, so at its default
    /// share a memtable holds about an eighth fewer entries than RocksDB's): not while the arena could take one more block and stay within
    /// `write_buffer_size` plus 60% of a block; always once it is past that; in between (the
    /// arena is on its last block), when that block is three-quarters used. Memory counts
    /// whole blocks as they are allocated, so a rule of `memory_usage() >= write_buffer_size`
    /// alone switches as soon as the last block is started, holding about an eighth fewer
    /// entries, and with them flushes and L0 merges more often.
    pub fn is_full(&self, write_buffer_size: usize) -> bool {
        let allocated = self.memory_usage();
        let block = self.list.block_size();
        let limit = write_buffer_size + block * 3 / 5;
        if allocated + block < limit {
            return false;
        }
        if allocated > limit {
            return true;
        }
        self.list.block_unused() < block / 4
    }

    /// True if the memtable holds a range deletion: reads must then consult
    /// [`MemTable::range_tombstones`]. One atomic load, so reads without range deletions pay
    /// nothing more.
    pub fn has_range_tombstones(&self) -> bool {
        !self.tombstones.is_empty()
    }

    /// The range deletions added so far, fragmented.
    pub fn range_tombstones(&self) -> Arc<FragmentedList> {
        self.tombstones.fragmented()
    }

    /// Point entries added (range deletions are not counted).
    pub fn num_entries(&self) -> u64 {
        self.entries.load(Ordering::Relaxed)
    }

    /// True when nothing was added, neither point entries nor range deletions.
    pub fn is_empty(&self) -> bool {
        self.num_entries() == 0 && self.tombstones.is_empty()
    }

    /// Links the entries still staged (see `skiplist`), for a memtable that takes no more
    /// writes: its iterators (the flush's) then have none to merge.
    pub fn link_staged(&self) {
        self.list.link_staged();
    }

    /// An iterator over the memtable's internal keys; it keeps the memtable alive. It sees
    /// every entry added before it was made: the linked ones in the list, and the staged ones
    /// (see `skiplist`) from a sorted copy of the staging area, merged in.
    pub fn iter(self: &Arc<Self>) -> MemTableIterator {
        MemTableIterator {
            mem: self.clone(),
            staged: self.staged_in_order(),
            node: std::ptr::null(),
            at: 0,
            current: std::ptr::null(),
        }
    }

    /// The nodes staged now (see `skiplist`), in key order, for an iterator. While random
    /// inserts come about 64 nodes are staged at any time, and they stay staged after the
    /// last insert until the next or the switch, so every iterator has them to merge; each
    /// sorting them from scratch took a few hundred key comparisons. The order is kept from
    /// one iterator to the next instead: the nodes still staged keep theirs, and only those
    /// staged since are placed, each by a binary search. (A node is staged once and never
    /// moves, so its address names it.) An iterator made while another sorts, sorts alone.
    fn staged_in_order(&self) -> Vec<Node> {
        let mut staged = self.list.staged_nodes();
        let order = self.list.order();
        // SAFETY: staged nodes are nodes of `self.list`, which lives as long as `self`.
        let compare =
            |a: &Node, b: &Node| unsafe { order.compare_internal(node_key(*a), node_key(*b)) };
        if staged.len() < 2 {
            return staged;
        }
        let Some(mut last) = self.staged_order.try_lock() else {
            staged.sort_unstable_by(compare);
            return staged;
        };
        // By address, to look nodes up in.
        staged.sort_unstable();
        let mut in_order: Vec<Node> = Vec::with_capacity(staged.len());
        in_order.extend(
            last.iter()
                .map(|&address| address as Node)
                .filter(|node| staged.binary_search(node).is_ok()),
        );
        let mut kept = in_order.clone();
        kept.sort_unstable();
        for &node in &staged {
            if kept.binary_search(&node).is_err() {
                let at = in_order.partition_point(|other| compare(other, &node).is_lt());
                in_order.insert(at, node);
            }
        }
        last.clear();
        last.extend(in_order.iter().map(|&node| node as usize));
        in_order
    }
}

/// An internal iterator over one memtable: the list merged with the staged entries copied
/// when it was made.
///
/// Invariant while valid: `current` is the entry it is on, `node` the first list node at or
/// after it (null: none) and `staged[at]` the first staged entry at or after it (`at` is the
/// length: none); `current` is one of them, the smaller. Internal keys are unique, so an equal
/// key on both sides is one node (staged, then linked while the iterator lives) and is
/// visited once. Moving back recomputes the invariant from the entry before on each side.
pub struct MemTableIterator {
    mem: Arc<MemTable>,
    /// The staged nodes when the iterator was made, sorted (usually none, or a few).
    staged: Vec<Node>,
    /// The first list node at or after `current`; null when none.
    node: Node,
    /// The index of the first staged node at or after `current`.
    at: usize,
    /// The entry the iterator is on; null when not valid.
    current: Node,
}

// SAFETY: the node pointers point into `mem`'s skiplist, which the iterator keeps alive and
// which is safe to read from any thread (see `skiplist`).
unsafe impl Send for MemTableIterator {}

impl MemTableIterator {
    fn compare(&self, a: Node, b: Node) -> std::cmp::Ordering {
        // SAFETY: both are nodes of the live list.
        unsafe {
            self.mem
                .list
                .order()
                .compare_internal(node_key(a), node_key(b))
        }
    }

    /// A list position as a node: null for the head (before the first).
    fn list_node(&self, node: Node) -> Node {
        if node == self.mem.list.head() {
            std::ptr::null()
        } else {
            node
        }
    }

    /// Makes `current` the smaller of the two sides (the invariant), or null if both ended.
    fn settle_forward(&mut self) {
        let staged = self
            .staged
            .get(self.at)
            .copied()
            .unwrap_or(std::ptr::null());
        self.current = match (self.node.is_null(), staged.is_null()) {
            (true, _) => staged,
            (false, true) => self.node,
            (false, false) => match self.compare(staged, self.node) {
                std::cmp::Ordering::Less => staged,
                _ => self.node,
            },
        };
    }

    /// Moving forward, on a list node: asks for the list node after it, the next step's
    /// (see [`skiplist::prefetch_for_walk`]). Its address is in the node the iterator is on,
    /// whose lines the caller reads next anyway.
    #[inline]
    fn prefetch_next(&self) {
        if !self.node.is_null() && self.node == self.current {
            // SAFETY: a linked node of the live list.
            skiplist::prefetch_for_walk(unsafe { node_next(self.node) });
        }
    }

    /// Lands on the larger of `list_before` (a list node or null) and the staged entry
    /// before index `staged_end` (none if 0), both before the place the iterator moves back
    /// from, with `next_in_list` the first list node after `list_before`: restores the
    /// invariant for that entry.
    fn settle_backward(&mut self, list_before: Node, next_in_list: Node, staged_end: usize) {
        let staged_before = staged_end.checked_sub(1).map(|i| self.staged[i]);
        let take_staged = match staged_before {
            None => false,
            Some(s) => list_before.is_null() || self.compare(s, list_before).is_gt(),
        };
        if take_staged {
            self.at = staged_end - 1;
            self.node = next_in_list;
            self.current = self.staged[self.at];
        } else {
            // An equal staged key is this node: it stays at `staged_end - 1`.
            self.at = match staged_before {
                Some(s) if !list_before.is_null() && self.compare(s, list_before).is_eq() => {
                    staged_end - 1
                }
                _ => staged_end,
            };
            self.node = list_before;
            self.current = list_before;
        }
    }

    /// How many staged entries come first: those whose order against `target` (an internal
    /// key) `before` accepts (`is_lt`: the index of the first at or after it).
    fn staged_before(&self, target: &[u8], before: fn(std::cmp::Ordering) -> bool) -> usize {
        let order = self.mem.list.order();
        // SAFETY: staged nodes of the live list.
        self.staged
            .partition_point(|&n| before(order.compare_internal(unsafe { node_key(n) }, target)))
    }
}

impl InternalIterator for MemTableIterator {
    fn valid(&self) -> bool {
        !self.current.is_null()
    }

    fn seek_to_first(&mut self) {
        // SAFETY: the head of a live list.
        self.node = self.list_node(unsafe { node_next(self.mem.list.head()) });
        self.at = 0;
        self.settle_forward();
    }

    fn seek_to_last(&mut self) {
        let last = self.list_node(self.mem.list.find_last());
        self.settle_backward(last, std::ptr::null(), self.staged.len());
    }

    fn seek(&mut self, target: &[u8]) {
        let Some(t) = Target::from_internal(target) else {
            self.current = std::ptr::null();
            return;
        };
        self.node = self.mem.list.find_greater_or_equal(&t, None);
        self.at = self.staged_before(target, std::cmp::Ordering::is_lt);
        self.settle_forward();
        self.prefetch_next();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        let Some(t) = Target::from_internal(target) else {
            self.current = std::ptr::null();
            return;
        };
        // The last list node <= target: the first node >= target if it equals it, else the
        // one before it.
        let ge = self.mem.list.find_greater_or_equal(&t, None);
        // SAFETY: `ge` is a linked node when non-null.
        let (before, after) = if !ge.is_null() && unsafe { node_key(ge) } == target {
            // SAFETY: as above.
            (ge, unsafe { node_next(ge) })
        } else {
            (self.list_node(self.mem.list.find_less_than(&t)), ge)
        };
        // The staged entries <= target end where those > target start.
        let end = self.staged_before(target, std::cmp::Ordering::is_le);
        self.settle_backward(before, after, end);
    }

    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        // Both sides past the current entry (one node if it is on both).
        if self.node == self.current {
            // SAFETY: a linked node of the live list.
            self.node = unsafe { node_next(self.node) };
        }
        if self.staged.get(self.at) == Some(&self.current) {
            self.at += 1;
        }
        self.settle_forward();
        self.prefetch_next();
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        // SAFETY: as in `next`.
        let key = unsafe { node_key(self.current) };
        let Some(t) = Target::from_internal(key) else {
            self.current = std::ptr::null();
            return;
        };
        let before = self.list_node(self.mem.list.find_less_than(&t));
        // The first list node after `before` is the first at or after the current entry.
        let after = self.node;
        // The staged entries before the current one end at `at` (the first at or after it).
        self.settle_backward(before, after, self.at);
    }

    fn key(&self) -> &[u8] {
        if self.current.is_null() {
            return &[];
        }
        // SAFETY: as in `next`; the slice lives as long as `self.mem`, which outlives `&self`.
        unsafe { node_key(self.current) }
    }

    fn value(&self) -> &[u8] {
        if self.current.is_null() {
            return &[];
        }
        // SAFETY: as in `key`.
        unsafe { node_value(self.current) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::harness::{self, Constructor, Entries, Keys};
    use crate::testing::lsm;
    use crate::util::Rng;
    use std::collections::BTreeMap;

    #[test]
    fn a_bloom_filter_lets_gets_skip_only_keys_the_memtable_lacks() {
        let plain = MemTable::new(1, 1 << 20);
        let filtered = MemTable::new(1, 1 << 20).with_bloom(16 << 10);
        assert!(filtered.memory_usage() >= plain.memory_usage() + (16 << 10));
        for i in 0..2000u64 {
            let key = format!("key{i:05}");
            let kind = [ValueKind::Put, ValueKind::Delete, ValueKind::Merge][i as usize % 3];
            for mem in [&plain, &filtered] {
                mem.add(i + 1, kind, key.as_bytes(), b"v");
            }
        }
        let hash = |k: &str| filter_hash(k.as_bytes());
        for i in 0..2000 {
            let key = format!("key{i:05}");
            assert!(filtered.may_contain(hash(&key)), "{key}");
            assert_eq!(
                filtered.get(key.as_bytes(), 5000),
                plain.get(key.as_bytes(), 5000)
            );
        }
        let skipped = (0..2000)
            .filter(|i| !filtered.may_contain(hash(&format!("absent{i}"))))
            .count();
        assert!(skipped > 1900, "only {skipped} of 2000 absent keys skipped");
        assert!(plain.may_contain(hash("absent0")), "no filter, no skip");
    }

    /// Filled with db_bench's entries until it asks to be switched, a memtable has handed
    /// out nearly all of `write_buffer_size` and allocated at most 60% of a block past it.
    #[test]
    fn a_memtable_is_full_near_its_write_buffer_size() {
        // (write buffer size, value size): blocks of an eighth of the buffer, of the 1 KiB
        // floor, of the 1 MiB ceiling, and huge blocks; values small and a quarter of a
        // block (a block of their own).
        let cases = [
            (8 << 20, 100),
            (4 << 10, 100),
            (12 << 20, 100),
            (16 << 20, 100),
            (1 << 20, 40 << 10),
        ];
        for (write_buffer_size, value_size) in cases {
            let mem = MemTable::new(1, write_buffer_size);
            let block = mem.list.block_size();
            let value = vec![7u8; value_size];
            let mut seq = 0u64;
            while !mem.is_full(write_buffer_size) {
                seq += 1;
                let key = format!("{:016}", seq.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1);
                mem.add(seq, ValueKind::Put, key.as_bytes(), &value);
                assert!(seq < 1 << 20, "never full");
            }
            let allocated = mem.memory_usage();
            let used = allocated - mem.list.block_unused();
            let case = format!("{write_buffer_size} / {value_size}: {used} used, {allocated}");
            assert!(
                allocated <= write_buffer_size + block * 3 / 5 + value_size + 64,
                "{case}"
            );
            // Switching as soon as the last block is started would leave most of a block
            // unused.
            let node = value_size + 64;
            assert!(used + block / 4 + 2 * node >= write_buffer_size, "{case}");
        }
    }

    #[test]
    fn range_deletions_go_to_the_tombstones_not_the_entries() {
        let mem = MemTable::new(1, 1 << 20);
        let before = mem.memory_usage();
        mem.add(5, ValueKind::RangeDeletion, b"a", b"m");
        assert_eq!(mem.num_entries(), 0);
        assert!(
            !mem.is_empty(),
            "a memtable holding a range deletion must be flushed"
        );
        assert!(mem.has_range_tombstones());
        assert!(mem.memory_usage() > before);
        assert_eq!(mem.range_tombstones().max_covering_seq(b"c", 9), Some(5));
        assert_eq!(mem.get(b"a", 9), Lookup::Missing);
        mem.add(6, ValueKind::Put, b"c", b"v");
        assert_eq!(mem.get_with_seq(b"c", 9), (Lookup::Found(b"v"), 6));
    }

    #[test]
    fn get_sees_the_newest_visible_version() {
        let mem = MemTable::new(1, 1 << 20);
        mem.add(1, ValueKind::Put, b"k", b"v1");
        mem.add(2, ValueKind::Put, b"k", b"v2");
        mem.add(3, ValueKind::Delete, b"k", b"");
        mem.add(4, ValueKind::Put, b"k", b"v4");
        assert_eq!(mem.get(b"k", 0), Lookup::Missing);
        assert_eq!(mem.get(b"k", 1), Lookup::Found(b"v1"));
        assert_eq!(mem.get(b"k", 2), Lookup::Found(b"v2"));
        assert_eq!(mem.get(b"k", 3), Lookup::Deleted);
        assert_eq!(mem.get(b"k", 100), Lookup::Found(b"v4"));
        assert_eq!(mem.get(b"j", 100), Lookup::Missing);
        assert_eq!(mem.get(b"kk", 100), Lookup::Missing);
        assert!(!mem.has_range_tombstones());
        assert_eq!(mem.num_entries(), 4);
    }

    struct MemTableConstructor {
        write_buffer_size: usize,
    }

    impl Constructor for MemTableConstructor {
        fn name(&self) -> String {
            format!("memtable (write buffer {} bytes)", self.write_buffer_size)
        }
        fn keys(&self) -> Keys {
            Keys::Internal
        }
        fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
            Box::new(lsm::memtable(entries, rng, self.write_buffer_size).iter())
        }
    }

    #[test]
    fn memtables_pass_the_iterator_harness() {
        // Small arenas give nodes blocks of their own; large ones pack them.
        for write_buffer_size in [1 << 10, 4 << 20] {
            harness::check(&mut MemTableConstructor { write_buffer_size }, 16);
        }
    }

    /// (user key, newest first) -> value, `None` for a delete.
    type VersionModel = BTreeMap<(Vec<u8>, std::cmp::Reverse<u64>), Option<Vec<u8>>>;

    /// Gets against a BTreeMap of (user key, Reverse(seq)) -> value, at random sequence
    /// numbers, between the adds (the newest entries staged, see `skiplist`) and after them;
    /// iterators made now and then must see every entry, staged or linked.
    #[test]
    fn gets_match_a_btreemap_model() {
        let expect = |model: &VersionModel, key: &[u8], at: u64| {
            model
                .range((key.to_vec(), std::cmp::Reverse(at))..)
                .next()
                .filter(|((uk, _), _)| *uk == key)
                .map(|(_, v)| v.clone())
        };
        let got = |mem: &MemTable, key: &[u8], at: u64| match mem.get(key, at) {
            Lookup::Found(v) => Some(Some(v.to_vec())),
            Lookup::Deleted => Some(None),
            Lookup::Missing | Lookup::Merge => None,
        };
        // (bloom bytes, point index bytes): none; an ample index; an index of 64 slots, full
        // before the 100 keys are in (keys it left out are searched for); both.
        let builds = [(0, 0), (0, 64 << 10), (0, 512), (4 << 10, 64 << 10)];
        for (seed, (bloom, index)) in (0..20).zip(builds.into_iter().cycle()) {
            let mut rng = Rng::new(seed);
            let mem = MemTable::new(seed, 1 << 20).with_bloom(bloom);
            let mem = Arc::new(mem.with_point_index(index));
            let mut model: VersionModel = BTreeMap::new();
            let n = 200 + rng.below(800);
            for seq in 1..=n {
                let key = format!("{:03}", rng.below(100)).into_bytes();
                if rng.one_in(4) {
                    mem.add(seq, ValueKind::Delete, &key, b"");
                    model.insert((key, std::cmp::Reverse(seq)), None);
                } else {
                    let v = format!("v{seq}").into_bytes();
                    mem.add(seq, ValueKind::Put, &key, &v);
                    model.insert((key, std::cmp::Reverse(seq)), Some(v));
                }
                if rng.one_in(8) {
                    let key = format!("{:03}", rng.below(101)).into_bytes();
                    let at = seq - rng.below(seq.min(40));
                    let case =
                        format!("seed {seed} ({bloom}, {index}) after {seq}: {key:?} at {at}");
                    assert_eq!(got(&mem, &key, at), expect(&model, &key, at), "{case}");
                }
                if rng.one_in(10) {
                    // Every entry, staged or linked, once and in order: each iterator's
                    // sorted copy of the staging area starts from the one before.
                    let mut it = mem.iter();
                    it.seek_to_first();
                    let mut walked = Vec::new();
                    while it.valid() {
                        let (user_key, trailer) = it.key().split_at(it.key().len() - 8);
                        let seq = u64::from_le_bytes(trailer.try_into().unwrap()) >> 8;
                        walked.push((user_key.to_vec(), std::cmp::Reverse(seq)));
                        it.next();
                    }
                    let want: Vec<_> = model.keys().cloned().collect();
                    assert_eq!(walked, want, "seed {seed} after {seq}");
                }
            }
            for k in 0..101 {
                let key = format!("{k:03}").into_bytes();
                let at = rng.below(n + 2);
                let case = format!("seed {seed} ({bloom}, {index}) key {k} at {at}");
                assert_eq!(got(&mem, &key, at), expect(&model, &key, at), "{case}");
            }
        }
    }

    /// Gets made while a writer adds and overwrites, the point index's slots moving to newer
    /// nodes under the reader: at the sequence published, each key reads the value of its
    /// newest version at or below it, and a key never written reads as missing. Without an
    /// index, with a full one of 64 slots, and with an ample one in either key order.
    #[test]
    fn gets_at_the_published_sequence_while_a_writer_overwrites() {
        use std::sync::atomic::AtomicU64;
        const N: u64 = 30_000;
        const KEYS: u64 = 2_000;
        let key_of = |k: u64| format!("{:08}", k.wrapping_mul(2654435761) % 1_000_003);
        let builds = [
            (KeyOrder::Bytewise, 0),
            (KeyOrder::Bytewise, 512),
            (KeyOrder::Bytewise, 64 << 10),
            (KeyOrder::Reverse, 64 << 10),
        ];
        for (order, index) in builds {
            let mem = MemTable::with_order(1, 64 << 20, order).with_point_index(index);
            let mem = Arc::new(mem);
            let published = Arc::new(AtomicU64::new(0));
            let writer = {
                let (mem, published) = (mem.clone(), published.clone());
                std::thread::spawn(move || {
                    for i in 0..N {
                        let key = key_of(i % KEYS);
                        mem.add(
                            i + 1,
                            ValueKind::Put,
                            key.as_bytes(),
                            &(i + 1).to_le_bytes(),
                        );
                        published.store(i + 1, Ordering::Release);
                    }
                })
            };
            let mut rng = Rng::new(index as u64);
            let mut checked = 0u64;
            loop {
                let at = published.load(Ordering::Acquire);
                for _ in 0..64 {
                    let k = rng.below(KEYS + KEYS / 8);
                    let key = match k < KEYS {
                        true => key_of(k),
                        false => format!("absent{k}"),
                    };
                    // The newest write of key k at or below `at` is that of index i, with
                    // i % KEYS == k and i < at.
                    let newest = (k < KEYS && k < at).then(|| k + KEYS * ((at - 1 - k) / KEYS));
                    let want = newest.map(|i| (i + 1).to_le_bytes());
                    let got = match mem.get(key.as_bytes(), at) {
                        Lookup::Found(v) => Some(<[u8; 8]>::try_from(v).expect("8 bytes")),
                        Lookup::Missing => None,
                        other => panic!("index {index}: {key} at {at}: {other:?}"),
                    };
                    assert_eq!(got, want, "index {index}: {key} at {at}");
                    checked += 1;
                }
                if at == N {
                    break;
                }
            }
            writer.join().unwrap();
            assert!(checked >= 64, "index {index}: {checked} gets");
        }
    }

    /// Iterators made while a writer adds (entries staged, then linked while the iterator
    /// walks): forward and backward, each entry added before the iterator was made is seen
    /// exactly once, in order, and a seek lands on it.
    #[test]
    fn iterators_see_each_entry_once_while_a_writer_adds() {
        use std::sync::atomic::AtomicU64;
        const N: u64 = 20_000;
        let mem = Arc::new(MemTable::new(1, 64 << 20));
        let published = Arc::new(AtomicU64::new(0));
        let key_of = |i: u64| format!("{:08}", i.wrapping_mul(2654435761) % 1_000_003);
        let writer = {
            let (mem, published) = (mem.clone(), published.clone());
            std::thread::spawn(move || {
                for i in 0..N {
                    mem.add(i + 1, ValueKind::Put, key_of(i).as_bytes(), b"v");
                    published.store(i + 1, Ordering::Release);
                }
            })
        };
        let order = KeyOrder::Bytewise;
        let mut rng = Rng::new(3);
        let mut rounds = 0;
        loop {
            let done = published.load(Ordering::Acquire);
            let mut it = mem.iter();
            let backward = rng.one_in(2);
            if backward {
                it.seek_to_last();
            } else {
                it.seek_to_first();
            }
            let (mut seen, mut last): (u64, Option<Vec<u8>>) = (0, None);
            while it.valid() {
                let key = it.key().to_vec();
                if let Some(last) = &last {
                    let step = order.compare_internal(last, &key);
                    let want = if backward {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Less
                    };
                    assert_eq!(step, want, "round {rounds}: out of order or twice");
                }
                let seq = u64::from_le_bytes(key[key.len() - 8..].try_into().unwrap()) >> 8;
                seen += u64::from(seq <= done);
                last = Some(key);
                if backward {
                    it.prev();
                } else {
                    it.next();
                }
            }
            assert_eq!(seen, done, "round {rounds}, backward {backward}");
            if done > 0 {
                let i = done - 1 - rng.below(done.min(40));
                let mut target = key_of(i).into_bytes();
                target.extend_from_slice(&pack_trailer(i + 1, ValueKind::Put as u8).to_le_bytes());
                it.seek(&target);
                assert_eq!(it.key(), &target[..], "seek, round {rounds}");
                it.seek_for_prev(&target);
                assert_eq!(it.key(), &target[..], "seek_for_prev, round {rounds}");
            }
            rounds += 1;
            if done == N {
                break;
            }
        }
        writer.join().unwrap();
        assert!(rounds > 1);
    }
}
