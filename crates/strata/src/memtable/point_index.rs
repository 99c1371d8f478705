//! A memtable's point index: a hash table from each user key to the node of its newest
//! version, so that a get of a key the memtable holds lands on it with a cache miss or two
//! instead of a skiplist search. A search of a large memtable visits about 30 nodes, most of
//! them cache misses one after the other: a get of a key in a 64 MiB memtable of 100-byte
//! values took about 6 us, against 1.7 us for one answered by a table in the block cache.
//!
//! Layout: a power-of-two array of slots, each one `AtomicU64`, with open addressing and
//! linear probing from the key's home slot (the low bits of its filter hash). A slot is 0
//! (empty) or a node's address in its low 48 bits under a 16-bit tag (the hash's top 16
//! bits) in its high bits: a probe passes a slot of another key by its tag without reading
//! the node, but for one in 65,536. The array is an anonymous mapping of its own on Linux
//! (elsewhere a zeroed allocation): its pages are zero until written, so a memtable that
//! takes few writes holds a page per slot written, not the whole array, and its memory goes
//! back to the system when the memtable is dropped. (Advised for huge pages, it would hold
//! 2 MiB from its first write; gets measured no faster with them.)
//!
//! Invariants:
//! - One writer: the memtable's adds are serialised, and only [`PointIndex::insert`] writes
//!   slots. A slot goes from empty to a node of one user key, and then only to newer nodes
//!   of that same key; it is never emptied. So a key has at most one slot, and every later
//!   insert and every reader probing for it meets it before any empty slot.
//! - A slot holds the newest version (the largest trailer) of its key among those inserted.
//!   The writer stores it with `Release` once the node is fully written (linked or staged in
//!   the list), before the memtable's add returns, and so before the write's sequence
//!   number is published. A reader at sequence `S`, which it read after that publication,
//!   sees for every version of the key at or below `S` that version or a newer one.
//! - A key that finds neither its slot nor an empty one within [`MAX_PROBE`] slots of its
//!   home (a nearly full table) is not indexed, and `complete` is cleared, also before the
//!   add returns: from then on a key the index does not hold may still be in the list.
//! - A node whose address needs more than 48 bits (a tagged pointer) cannot be stored, not
//!   even in its key's slot, which would then keep an older version: `usable` is cleared
//!   before the add returns, and from then on the index answers nothing.
//!
//! So a reader at `S` that finds the key's node at or below `S` has the memtable's answer
//! (the list would find the same node first); a node above `S` (a write newer than the read)
//! or an incomplete index sends it to the list; an empty slot while the index is complete
//! means the memtable holds no version of the key.
//!
//! A comparator that may call different bytes equal (a custom one) gets no index, as it gets
//! no staging in the list: a hash of the bytes would give equal keys different slots.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::skiplist::{node_target, Node};

/// Slots a probe looks at before it gives up on a key: two cache lines, where a table
/// filled to its intended load (under 0.7) almost never has a run that long.
const MAX_PROBE: usize = 16;
/// Bits of a slot that hold the node's address.
const ADDRESS_BITS: u32 = 48;
const ADDRESS_MASK: u64 = (1 << ADDRESS_BITS) - 1;
/// The least number of slots: a memtable too small for this many gets no index.
const MIN_SLOTS: usize = 64;

/// What the index knows of a user key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indexed {
    /// The newest version of the key inserted, as far as a reader can see, and its trailer.
    Newest(Node, u64),
    /// No version of the key is in the memtable.
    Absent,
    /// The index cannot tell: the list must be searched.
    Unknown,
}

/// The hash table of a memtable's user keys (module doc).
pub struct PointIndex {
    slots: *const AtomicU64,
    /// A power of two.
    len: usize,
    /// Whether `slots` is a mapping of [`map_zeroed`] (else a zeroed allocation).
    mapped: bool,
    /// False once a key could not be indexed.
    complete: AtomicBool,
    /// False once a node could not be stored: the index then answers nothing.
    usable: AtomicBool,
}

// SAFETY: the slots are atomics, read and written only through atomic operations; the
// nodes they point to belong to the memtable's list, which is safe to read from any thread.
unsafe impl Send for PointIndex {}
// SAFETY: as above.
unsafe impl Sync for PointIndex {}

impl PointIndex {
    /// An index of at most `bytes` bytes: the largest power of two of slots that fits, or
    /// `None` if fewer than [`MIN_SLOTS`] fit or the memory cannot be had (the memtable
    /// goes without).
    pub fn with_bytes(bytes: usize) -> Option<PointIndex> {
        let slots = bytes / std::mem::size_of::<AtomicU64>();
        if slots < MIN_SLOTS {
            return None;
        }
        let len = 1usize << (usize::BITS - 1 - slots.leading_zeros());
        let size = len * std::mem::size_of::<AtomicU64>();
        let (slots, mapped) = match map_zeroed(size) {
            // Anonymous mappings are zeroed: every slot starts empty.
            Some(p) => (p as *const AtomicU64, true),
            None => {
                let layout = Self::layout(len)?;
                // SAFETY: a layout of non-zero size.
                let p = unsafe { std::alloc::alloc_zeroed(layout) };
                if p.is_null() {
                    return None;
                }
                (p as *const AtomicU64, false)
            }
        };
        Some(PointIndex {
            slots,
            len,
            mapped,
            complete: AtomicBool::new(true),
            usable: AtomicBool::new(true),
        })
    }

    fn layout(len: usize) -> Option<std::alloc::Layout> {
        std::alloc::Layout::array::<AtomicU64>(len).ok()
    }

    /// Bytes of memory the index takes.
    pub fn memory_usage(&self) -> usize {
        self.len * std::mem::size_of::<AtomicU64>()
    }

    fn slot(&self, i: usize) -> &AtomicU64 {
        // SAFETY: `i & (len - 1) < len`, inside the array, which lives as long as `self`.
        unsafe { &*self.slots.add(i & (self.len - 1)) }
    }

    /// Starts loading the home slot of the key whose filter hash is `hash`.
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        crate::util::prefetch_address(self.slot(hash as usize) as *const AtomicU64 as *const u8);
    }

    /// For the writer, before it inserts a node of the key whose filter hash is `hash`: starts
    /// loading the first line of each node whose slot on the key's probe carries its tag,
    /// which [`PointIndex::insert`] compares with the key. An overwrite finds the key's own
    /// slot there, and its node, written long before, is otherwise a cache miss after the
    /// slot's. (The home slot's line should have been asked for a little earlier.)
    #[inline]
    pub fn prefetch_for_insert(&self, hash: u64) {
        let home = hash as usize;
        for step in 0..MAX_PROBE {
            let current = self.slot(home.wrapping_add(step)).load(Ordering::Relaxed);
            if current == 0 {
                return;
            }
            if current & !ADDRESS_MASK == tag_of(hash) {
                crate::util::prefetch_address((current & ADDRESS_MASK) as *const u8);
            }
        }
    }

    /// Records `node`, just inserted into the list as a version of `user_key` (filter hash
    /// `hash`) with `trailer`.
    ///
    /// # Safety
    /// `node` is a fully written node of the list this index belongs to, which outlives the
    /// index, and a version of `user_key` with `trailer`; inserts are serialised (one writer:
    /// the memtable's adds), as a slot is read and then written.
    pub unsafe fn insert(&self, user_key: &[u8], hash: u64, trailer: u64, node: Node) {
        let address = node as u64;
        if address & !ADDRESS_MASK != 0 {
            self.usable.store(false, Ordering::Release);
            return;
        }
        let entry = tag_of(hash) | address;
        let home = hash as usize;
        for step in 0..MAX_PROBE {
            let slot = self.slot(home.wrapping_add(step));
            let current = slot.load(Ordering::Relaxed);
            if current == 0 {
                slot.store(entry, Ordering::Release);
                return;
            }
            if let Some((_, older)) = version_in(current, hash, user_key) {
                if older < trailer {
                    slot.store(entry, Ordering::Release);
                }
                return;
            }
        }
        self.complete.store(false, Ordering::Release);
    }

    /// The newest indexed version of `user_key` (filter hash `hash`), or what the index
    /// knows of it.
    pub fn find(&self, user_key: &[u8], hash: u64) -> Indexed {
        // Read first: a key not indexed clears them before its add returns (module doc).
        if !self.usable.load(Ordering::Acquire) {
            return Indexed::Unknown;
        }
        let complete = self.complete.load(Ordering::Acquire);
        let home = hash as usize;
        for step in 0..MAX_PROBE {
            let current = self.slot(home.wrapping_add(step)).load(Ordering::Acquire);
            if current == 0 {
                return match complete {
                    true => Indexed::Absent,
                    false => Indexed::Unknown,
                };
            }
            if let Some((node, trailer)) = version_in(current, hash, user_key) {
                return Indexed::Newest(node, trailer);
            }
        }
        Indexed::Unknown
    }
}

/// The tag a slot of a key with filter hash `hash` carries.
fn tag_of(hash: u64) -> u64 {
    hash & !ADDRESS_MASK
}

/// The node of slot value `entry` and its trailer, if it is a version of `user_key`
/// (filter hash `hash`).
fn version_in(entry: u64, hash: u64, user_key: &[u8]) -> Option<(Node, u64)> {
    if entry & !ADDRESS_MASK != tag_of(hash) {
        return None;
    }
    let node = (entry & ADDRESS_MASK) as Node;
    // SAFETY: a slot holds only nodes of the memtable's list, fully written before they were
    // stored (module doc), and the list lives as long as the memtable that owns this index.
    let stored = unsafe { node_target(node) };
    (stored.user_key == user_key).then_some((node, stored.trailer))
}

/// A private anonymous mapping of `len` bytes, zero until written; `None` if it fails or
/// elsewhere than Linux (the caller allocates instead).
#[cfg(target_os = "linux")]
fn map_zeroed(len: usize) -> Option<*mut u8> {
    use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
    // SAFETY: a new private anonymous mapping, which nothing else refers to.
    let p = unsafe {
        mmap_anonymous(
            std::ptr::null_mut(),
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE,
        )
    };
    p.ok().map(|p| p.cast::<u8>())
}

#[cfg(not(target_os = "linux"))]
fn map_zeroed(_len: usize) -> Option<*mut u8> {
    None
}

/// Unmaps what [`map_zeroed`] mapped.
///
/// # Safety
/// `p` came from `map_zeroed(len)`, is unmapped once, and nothing uses the range after.
unsafe fn unmap(p: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: the caller's.
    let _ = unsafe { rustix::mm::munmap(p.cast(), len) };
    #[cfg(not(target_os = "linux"))]
    let _ = (p, len);
}

impl Drop for PointIndex {
    fn drop(&mut self) {
        let size = self.memory_usage();
        match self.mapped {
            // SAFETY: mapped by `map_zeroed(size)`, unmapped once, here.
            true => unsafe { unmap(self.slots as *mut u8, size) },
            false => {
                if let Some(layout) = Self::layout(self.len) {
                    // SAFETY: allocated with this layout, freed once, here.
                    unsafe { std::alloc::dealloc(self.slots as *mut u8, layout) };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::pack_trailer;
    use crate::memtable::skiplist::SkipList;

    /// A filter hash whose home is slot `home` and whose tag is `tag`.
    fn hash(home: u64, tag: u64) -> u64 {
        tag << ADDRESS_BITS | home
    }

    /// Each case inserts `(key, hash, seq)` in turn into an index of 64 slots, then looks up
    /// `(key, hash)` and expects the seq of the node found, or the answer named.
    #[test]
    fn lookups_answer_from_the_slot_or_say_they_cannot() {
        #[derive(Debug, PartialEq)]
        enum Want {
            Seq(u64),
            Absent,
            Unknown,
        }
        use Want::*;
        // Keys of one home fill it and the slots after it; the 17th finds no slot within
        // MAX_PROBE and leaves the index incomplete.
        let crowd: Vec<(String, u64, u64)> = (0..17)
            .map(|i| (format!("crowd{i:02}"), hash(40, i + 1), i + 1))
            .collect();
        type Case = (
            &'static str,
            Vec<(String, u64, u64)>,
            Vec<(&'static str, u64, Want)>,
        );
        let cases: Vec<Case> = vec![
            (
                "the newest version wins, whatever the order of the inserts",
                vec![
                    ("a".into(), hash(3, 1), 5),
                    ("a".into(), hash(3, 1), 9),
                    ("a".into(), hash(3, 1), 7),
                ],
                vec![("a", hash(3, 1), Seq(9)), ("b", hash(9, 2), Absent)],
            ),
            (
                "keys of one home and one tag take the next slots, told apart by their bytes",
                vec![
                    ("a".into(), hash(3, 1), 1),
                    ("b".into(), hash(3, 1), 2),
                    ("c".into(), hash(4, 1), 3),
                ],
                vec![
                    ("a", hash(3, 1), Seq(1)),
                    ("b", hash(3, 1), Seq(2)),
                    ("c", hash(4, 1), Seq(3)),
                    ("d", hash(3, 1), Absent),
                ],
            ),
            (
                "a probe runs past the last slot to the first",
                vec![("a".into(), hash(63, 1), 1), ("b".into(), hash(63, 2), 2)],
                vec![("b", hash(63, 2), Seq(2)), ("c", hash(63, 3), Absent)],
            ),
            (
                "a key left out makes every absent key unknown",
                crowd.clone(),
                vec![
                    ("crowd00", hash(40, 1), Seq(1)),
                    ("crowd15", hash(40, 16), Seq(16)),
                    ("crowd16", hash(40, 17), Unknown),
                    ("other", hash(3, 1), Unknown),
                ],
            ),
        ];
        for (name, inserts, lookups) in cases {
            let list = SkipList::new(1, 4096);
            let index = PointIndex::with_bytes(512).expect("64 slots");
            assert_eq!(index.memory_usage(), 512);
            for (key, hash, seq) in &inserts {
                let trailer = pack_trailer(*seq, 1);
                let node = list.insert(key.as_bytes(), trailer, b"v");
                // SAFETY: that node, of a list that outlives the index; one thread.
                unsafe { index.insert(key.as_bytes(), *hash, trailer, node) };
            }
            for (key, hash, want) in lookups {
                let got = match index.find(key.as_bytes(), hash) {
                    Indexed::Newest(_, trailer) => Seq(trailer >> 8),
                    Indexed::Absent => Absent,
                    Indexed::Unknown => Unknown,
                };
                assert_eq!(got, want, "{name}: {key}");
            }
        }
    }

    /// A newer version whose address does not fit 48 bits (a tagged pointer) cannot go in
    /// its key's slot, which would then answer with the older one: the index turns off.
    #[test]
    fn a_node_it_cannot_store_turns_the_index_off() {
        let list = SkipList::new(1, 4096);
        let index = PointIndex::with_bytes(512).expect("64 slots");
        let trailer = pack_trailer(1, 1);
        let node = list.insert(b"a", trailer, b"v");
        // SAFETY: that node, of a list that outlives the index; one thread.
        unsafe { index.insert(b"a", hash(3, 1), trailer, node) };
        assert!(matches!(index.find(b"a", hash(3, 1)), Indexed::Newest(..)));
        let tagged = (node as u64 | 1 << 56) as Node;
        // SAFETY: an address over 48 bits is refused before anything reads it.
        unsafe { index.insert(b"a", hash(3, 1), pack_trailer(2, 1), tagged) };
        assert_eq!(index.find(b"a", hash(3, 1)), Indexed::Unknown);
        assert_eq!(index.find(b"b", hash(9, 1)), Indexed::Unknown);
    }

    #[test]
    fn an_index_is_the_largest_power_of_two_of_slots_that_fits() {
        let cases = [
            (511, None),
            (512, Some(512)),
            (1000, Some(512)),
            (8 << 20, Some(8 << 20)),
        ];
        for (bytes, want) in cases {
            let got = PointIndex::with_bytes(bytes).map(|i| i.memory_usage());
            assert_eq!(got, want, "{bytes} bytes");
        }
    }
}
