//! An arena-allocated skiplist of internal keys with lock-free readers.
//!
//! Invariants (what makes the `unsafe` below sound):
//!
//! - Nodes live in memory blocks owned by the list and freed only when the list is dropped;
//!   a node is never moved, changed (but for its tower of next pointers) or freed while the
//!   list lives. Readers hold the list (through an `Arc` of the memtable), so every node
//!   pointer they load stays valid.
//! - One writer at a time: `insert` holds the `writer` mutex for the whole insert, and that
//!   mutex owns the allocator and the splice. Readers take no lock.
//! - The splice (where the last insert went: at each level the node before that place and
//!   the node after it) always brackets a place of the list: `prev[l]` is the head or a node
//!   ordered before `next[l]`, `prev[l]`'s successor at level `l` is `next[l]` (null: the
//!   end), and the brackets nest (a higher level's is at least as wide). Only the writer
//!   links nodes, and it moves the splice onto each node it links, so this holds between
//!   inserts. An insert whose key falls inside the level-0 bracket then needs no search:
//!   keys inserted in order (a sequential load, a batch of increasing keys) cost a couple
//!   of comparisons each instead of a walk from the top (RocksDB's sequential splice).
//!   A run of keys in order that starts elsewhere (two writers' batches of increasing
//!   keys, the later batch inserted first) moves the splice there: once a few inserts in a
//!   row have ascended ([`ASCENDING_RUN`]), one the splice does not bracket is searched for
//!   and linked at once, and a staged node linked outside the splice's bracket leaves the
//!   splice in place (it only narrows the bracket at the levels where it lands inside it).
//!   A key a little out of order (outside the level-0 bracket, inside one of levels 1-3)
//!   is placed at once by a walk down from the bracket that holds it ([`NEARBY_LEVELS`]).
//!   Otherwise every key of such a run would be staged, each insert stepping every search
//!   in flight.
//! - A node is fully written (header, key, value, its own next pointers) before it is linked;
//!   links are published with `Release` stores and read with `Acquire` loads, so a reader that
//!   sees a node sees its contents.
//! - Staged inserts: an insert writes its node and, unless the splice brackets it (then it
//!   is linked at once, as above), stages it: puts it in a free slot of the staging area
//!   (up to [`STAGED`] nodes, each with a 32-bit tag of its user key) and starts its search
//!   from the top. Every insert then moves each search in flight one step, each step asking
//!   for the node that search compares next; a search that reaches level 0 links its node
//!   and frees the slot. A random insert otherwise waits on a dozen cache misses one after
//!   the other; walked this way, a search finds its next node in the cache, asked for one
//!   insert earlier, and no insert waits for a whole batch. A search passes nodes linked
//!   since it started (its place is checked at the link, [`SkipList::link`]), so the list
//!   stays right whatever was linked meanwhile. A node leaves the area (its slot's bit in
//!   `occupied` cleared) only once linked: a reader that looks in the area first
//!   ([`SkipList::find_staged`]) and then searches the list finds every node whose insert
//!   returned before it looked. A get first reads one word of a 256-bit summary of the
//!   staged tags (a bit set while some staged node's tag has it), and most gets stop
//!   there. Slots, tags and the bits are stored with `Release` and
//!   loaded with `Acquire`, so a reader that sees a slot's new node or tag also sees the
//!   links made before the slot was reused. Searches and walks
//!   ([`SkipList::find_greater_or_equal`], [`node_next`]) see linked nodes only: the
//!   memtable's iterator merges in a sorted copy of the area ([`SkipList::staged_nodes`]),
//!   taking a node that is in both (linked since) once. A tag is a hash of the user key's
//!   bytes, so a list whose order may call different bytes equal (a custom comparator)
//!   stages nothing: each insert searches and links at once.
//!
//! Node layout in the arena (the allocation 8-byte aligned):
//!
//! ```text
//! +-------------------------+---------+--------+---------+-----+-----------+-------+
//! | next[height-1]..next[1] | next[0] | height | key_len | key | value_len | value |
//! +-------------------------+---------+--------+---------+-----+-----------+-------+
//!                           ^ the node's address
//! ```
//!
//! Links are 8-byte pointers, the height one byte, the lengths varints.
//!
//! A node's address is that of its level-0 link; the link at level `l` lies `8 * l` bytes
//! below it (RocksDB's layout), so the key starts 9 or 10 bytes past the address whatever
//! the height, and no fixed-width header pads the node to the next 8 bytes: a 24-byte key
//! with a 100-byte value takes 136 bytes with a tower of one, where a header of two `u32`s
//! before the tower took 144, and a memtable of a given size holds 6% more such entries.

use self::sync::{AtomicOrdering, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Mutex};
use std::cmp::Ordering;
use std::ptr;

use crate::comparator::{bytewise_compare, KeyOrder};
use crate::key::TRAILER_LEN;
use crate::util::{prefetch_address, Rng};

use arena::Arena;
#[cfg(test)]
use arena::{HUGE_BLOCK_SIZE, MAX_BLOCK_SIZE, SMALL_BLOCKS_FIRST};
use staging::Staged;

/// The tallest tower. With branching 4, enough for tens of millions of entries.
pub const MAX_HEIGHT: usize = 12;
const BRANCHING: u64 = 4;
const PTR: usize = std::mem::size_of::<usize>();
/// The most nodes staged at once (module doc): searches in flight. A search takes about 30
/// to 40 steps and each insert moves every search one step, so about that many are in
/// flight while random inserts come; a get looks at their tags.
pub const STAGED: usize = 64;
/// Inserts in a row with ascending keys after which one the splice does not bracket is
/// searched for and linked at once instead of staged (module doc): the start of a run of
/// keys in order somewhere else in the list (a batch of increasing keys from a second
/// writer). The splice then lands there, and the run's next keys need no search. Random
/// keys ascend four times in a row for about one insert in 120.
const ASCENDING_RUN: u32 = 4;
/// The levels of the splice an insert it does not bracket at level 0 looks at for a bracket
/// that holds it (1 to 3): found there, the key is near the last insert (keys mostly in
/// order, a few out of place: a link's time index, rows a little out of order), and a walk
/// down from that bracket, through nodes just touched, places it at once. A bracket at
/// level 3 spans about 64 nodes; a random key in a large list is almost never in one, and
/// costs at most six more comparisons of nodes in the cache.
const NEARBY_LEVELS: usize = 4;
/// Inserts in a row that found no order (not bracketed, in no nearby bracket, not the end of
/// an ascending run) after which the list stops looking for one on every insert: it looks
/// on one insert in [`SCATTERED_PROBE`], and on the few after a probe whose key came after
/// the last. Random keys would otherwise pay the comparisons of [`ASCENDING_RUN`] and
/// [`NEARBY_LEVELS`] (up to seven, 2-3% of a random insert) on every insert for nothing; a
/// run of keys in order that starts among them is noticed at most [`SCATTERED_PROBE`]
/// inserts late.
const SCATTERED_RUN: u32 = 16;
/// While keys are scattered, one insert in this many looks for an order (a power of two).
const SCATTERED_PROBE: u32 = 16;

/// A target for a search: an internal key given as its user key and trailer, so that lookups
/// need not build an encoded key.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    /// The user key.
    pub user_key: &'a [u8],
    /// `(seq << 8) | kind`.
    pub trailer: u64,
}

impl<'a> Target<'a> {
    /// The target for an encoded internal key (`None` if too short).
    pub fn from_internal(ikey: &'a [u8]) -> Option<Target<'a>> {
        let split = ikey.len().checked_sub(TRAILER_LEN)?;
        let (user_key, t) = ikey.split_at(split);
        Some(Target {
            user_key,
            trailer: u64::from_le_bytes(t.try_into().ok()?),
        })
    }
}

/// Orders a stored internal key against a target: user key ascending in the order
/// `compare` gives, trailer descending.
#[inline(always)]
fn compare_with(
    compare: impl Fn(&[u8], &[u8]) -> Ordering,
    stored: &[u8],
    target: &Target<'_>,
) -> Ordering {
    let split = stored.len() - TRAILER_LEN;
    crate::perf_context::perf_count!(user_key_comparison_count, 1);
    match compare(&stored[..split], target.user_key) {
        Ordering::Equal => {
            let mut t = [0u8; 8];
            t.copy_from_slice(&stored[split..]);
            target.trailer.cmp(&u64::from_le_bytes(t))
        }
        other => other,
    }
}

/// Where the last insert went, at every level (see the module doc's invariants).
struct Splice {
    /// The node before the place at each level (the head if none).
    prev: [Node; MAX_HEIGHT],
    /// The node after the place at each level (null: the end of the level).
    next: [Node; MAX_HEIGHT],
}

/// What only the writer touches.
struct Writer {
    arena: Arena,
    splice: Splice,
    /// The search of each slot's staged node (module doc).
    searches: Box<[Search; STAGED]>,
    /// The slots in use: the same bits as [`Staged::occupied`], which only the writer stores.
    occupied: u64,
    /// The slot whose search is finished at once when an insert finds no free slot.
    evict: usize,
    /// How many staged nodes have each bit of [`Staged::summary`].
    summary_counts: [u8; 256],
    /// The node of the last insert, linked or staged (null before the first).
    last: Node,
    /// How many inserts in a row had a key after the insert before's (see
    /// [`ASCENDING_RUN`]).
    ascending: u32,
    /// How many inserts in a row found no order (see [`SCATTERED_RUN`]).
    scattered: u32,
}

/// A staged node's search from the top, one step per insert (module doc).
#[derive(Clone, Copy)]
struct Search {
    /// The staged node.
    node: Node,
    /// Its user key (in the node) and trailer, what each step compares with.
    user_key: *const u8,
    user_key_len: usize,
    trailer: u64,
    /// Its tag ([`tag`]).
    tag: u32,
    /// The node the search stands on: the head or a linked node reached at `level`.
    at: Node,
    level: usize,
    /// `at`'s successor at `level` when the last step looked: compared at the next step.
    candidate: Node,
    /// The nodes before and after the staged node at each level passed so far.
    place: Place,
}

impl Search {
    /// The staged node's key as a search target.
    ///
    /// # Safety
    /// The search is in flight: its node is a staged node of a live list.
    unsafe fn target<'a>(&self) -> Target<'a> {
        Target {
            // SAFETY: the key lies in the node (caller).
            user_key: unsafe { std::slice::from_raw_parts(self.user_key, self.user_key_len) },
            trailer: self.trailer,
        }
    }
}

/// The stored key of `node` as a search target: its user key and trailer.
///
/// # Safety
/// As for [`node_key`].
pub unsafe fn node_target<'a>(node: Node) -> Target<'a> {
    // SAFETY: the caller's.
    let key = unsafe { node_key(node) };
    let (user_key, trailer) = key.split_at(key.len() - TRAILER_LEN);
    let mut t = [0u8; TRAILER_LEN];
    t.copy_from_slice(trailer);
    Target {
        user_key,
        trailer: u64::from_le_bytes(t),
    }
}

/// Where a search placed one node at every level: the node before it and the node after it,
/// as they were when the search passed (see [`SkipList::link`]).
#[derive(Clone, Copy)]
struct Place {
    prev: [Node; MAX_HEIGHT],
    next: [Node; MAX_HEIGHT],
}

/// The skiplist. See the module doc for its invariants.
pub struct SkipList {
    head: *mut u8,
    /// The order of user keys.
    order: KeyOrder,
    max_height: AtomicUsize,
    memory: AtomicUsize,
    /// Bytes not yet handed out in the arena's current block (see [`SkipList::block_unused`]).
    unused: AtomicUsize,
    /// The arena's regular block size.
    block_size: usize,
    /// False for an order that may call different bytes equal: nothing is staged (module doc).
    stages: bool,
    writer: Mutex<Writer>,
    staged: Staged,
}

// SAFETY: the raw pointers point into blocks owned by the list; nodes are immutable once
// linked except for their atomic next pointers, and all mutation of the allocator happens
// under the `writer` mutex (see the module doc).
unsafe impl Send for SkipList {}
// SAFETY: as above; readers only perform atomic loads and reads of immutable bytes.
unsafe impl Sync for SkipList {}

/// A node pointer: null means "none" (past the end, or before the start for `head`).
pub type Node = *const u8;

// Accessors. Each is `unsafe`: `node` must be a linked node (or the head) of a live list.

/// Reads the varint (LEB128, as `codec`'s) at `p`: (value, bytes it takes).
///
/// # Safety
/// `p` points at a varint a node was written with (its last byte below 128).
#[inline(always)]
unsafe fn read_varint(p: *const u8) -> (usize, usize) {
    // SAFETY: the bytes up to the varint's last are part of the node (caller).
    let first = unsafe { *p };
    if first < 0x80 {
        return (usize::from(first), 1);
    }
    let mut value = usize::from(first & 0x7f);
    let mut n = 1;
    loop {
        // SAFETY: as above: a byte at or above 128 is followed by another of the varint.
        let b = unsafe { *p.add(n) };
        value |= usize::from(b & 0x7f) << (7 * n);
        n += 1;
        if b < 0x80 {
            return (value, n);
        }
    }
}

/// Writes `value` as a varint at `p`; returns the bytes written.
///
/// # Safety
/// `p` has room for [`varint_len`]`(value)` bytes that the caller owns.
unsafe fn write_varint(p: *mut u8, mut value: usize) -> usize {
    let mut n = 0;
    while value >= 0x80 {
        // SAFETY: within the room the caller gave.
        unsafe { *p.add(n) = (value as u8) | 0x80 };
        value >>= 7;
        n += 1;
    }
    // SAFETY: as above.
    unsafe { *p.add(n) = value as u8 };
    n + 1
}

/// Bytes of `value` as a varint.
fn varint_len(value: usize) -> usize {
    let bits = usize::BITS - (value | 1).leading_zeros();
    (bits as usize).div_ceil(7)
}

/// Bytes of a node with a tower of `height`, a key of `key_len` and a value of `value_len`,
/// from its allocation's start (module doc).
fn node_size(height: usize, key_len: usize, value_len: usize) -> usize {
    PTR * height + 1 + varint_len(key_len) + key_len + varint_len(value_len) + value_len
}

/// The height of `node`'s tower.
#[cfg(test)]
unsafe fn node_height(node: Node) -> usize {
    // SAFETY: the height byte follows the level-0 link (module doc).
    usize::from(unsafe { *node.add(PTR) })
}

unsafe fn tower<'a>(node: Node, level: usize) -> &'a AtomicPtr<u8> {
    // SAFETY: `level < height(node)`, checked by callers: the slot lies inside the node's
    // allocation, below its address, 8-byte aligned (the address is), and was written before
    // the node was linked (the head's: null, when the list was made).
    unsafe { &*(node.sub(PTR * level) as *const AtomicPtr<u8>) }
}

/// The stored internal key of `node`.
///
/// # Safety
/// `node` is a non-head node of a list that outlives `'a`.
#[inline(always)]
pub unsafe fn node_key<'a>(node: Node) -> &'a [u8] {
    // SAFETY: the key length follows the height byte, the key its length (module doc).
    unsafe {
        let (klen, n) = read_varint(node.add(PTR + 1));
        std::slice::from_raw_parts(node.add(PTR + 1 + n), klen)
    }
}

/// The value of `node`.
///
/// # Safety
/// As for [`node_key`].
pub unsafe fn node_value<'a>(node: Node) -> &'a [u8] {
    // SAFETY: the value's length follows the key, the value its length (module doc). The
    // place is reckoned from the node's pointer: one taken from the key's slice may reach
    // only the key's bytes (Miri's Stacked Borrows check found a read past them).
    unsafe {
        let (klen, n) = read_varint(node.add(PTR + 1));
        let at = node.add(PTR + 1 + n + klen);
        let (vlen, m) = read_varint(at);
        std::slice::from_raw_parts(at.add(m), vlen)
    }
}

/// The successor of `node` at level 0 (null at the end).
///
/// # Safety
/// `node` is a node or the head of a live list.
pub unsafe fn node_next(node: Node) -> Node {
    // SAFETY: every node has height >= 1.
    unsafe { tower(node, 0).load(AtomicOrdering::Acquire) }
}

/// Asks for the cache lines of `node` (null: nothing) that a walk along level 0 reads when
/// it gets there: its link and key, and the start of its value. A walk asks for the node
/// after the one it stands on, so that the miss of each step overlaps the work on the entry
/// before instead of following it: nodes sit in the arena in the order they were written,
/// and in a list of random inserts each step of a walk is a cache miss.
#[inline(always)]
pub fn prefetch_for_walk(node: Node) {
    prefetch_node(node, 0);
}

/// Asks for the cache lines a visit of `node` at `level` reads: its link at that level
/// (below its address from level 1 up, in the line before for some nodes), and its key,
/// which starts past its level-0 link and may run into the next line.
#[inline(always)]
fn prefetch_node(node: Node, level: usize) {
    prefetch_address(node);
    prefetch_node_rest(node, level);
}

/// [`prefetch_node`] but for the line at the node's address, being loaded anyway.
#[inline(always)]
fn prefetch_node_rest(node: Node, level: usize) {
    if !node.is_null() {
        if level > 0 {
            prefetch_address(node.wrapping_sub(PTR * level));
        }
        prefetch_address(node.wrapping_add(64));
    }
}

impl SkipList {
    /// An empty list whose arena allocates blocks of `block_size` bytes (at most
    /// [`MAX_BLOCK_SIZE`], or [`HUGE_BLOCK_SIZE`] if it is at least that); the memory usage
    /// grows in such steps.
    #[cfg(test)]
    pub fn new(seed: u64, block_size: usize) -> SkipList {
        SkipList::with_order(seed, block_size, KeyOrder::Bytewise)
    }

    /// [`SkipList::new`] with user keys in `order`.
    pub fn with_order(seed: u64, block_size: usize, order: KeyOrder) -> SkipList {
        let memory = AtomicUsize::new(0);
        let mut arena = Arena::new(block_size, Rng::new(seed));
        let start = arena.alloc(node_size(MAX_HEIGHT, 0, 0), &memory);
        let unused = AtomicUsize::new(arena.remaining);
        let block_size = arena.block_size;
        // SAFETY: fresh memory of the head's size: its tower is null at every level (the
        // empty list), and its height and empty key and value are written once here, before
        // anything can read them.
        let head = unsafe {
            for level in 0..MAX_HEIGHT {
                ptr::write(
                    start.add(PTR * level) as *mut AtomicPtr<u8>,
                    AtomicPtr::new(ptr::null_mut()),
                );
            }
            let head = start.add(PTR * (MAX_HEIGHT - 1));
            *head.add(PTR) = MAX_HEIGHT as u8;
            write_varint(head.add(PTR + 1), 0);
            write_varint(head.add(PTR + 2), 0);
            head
        };
        let stages = matches!(order, KeyOrder::Bytewise | KeyOrder::Reverse);
        let idle = Search {
            node: ptr::null(),
            user_key: ptr::null(),
            user_key_len: 0,
            trailer: 0,
            tag: 0,
            at: ptr::null(),
            level: 0,
            candidate: ptr::null(),
            place: Place {
                prev: [head as Node; MAX_HEIGHT],
                next: [ptr::null(); MAX_HEIGHT],
            },
        };
        SkipList {
            head,
            order,
            max_height: AtomicUsize::new(1),
            memory,
            unused,
            block_size,
            stages,
            staged: Staged {
                occupied: AtomicU64::new(0),
                summary: std::array::from_fn(|_| AtomicU64::new(0)),
                tags: std::array::from_fn(|_| AtomicU32::new(0)),
                nodes: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            },
            writer: Mutex::new(Writer {
                arena,
                // The empty list's one place, at every level.
                splice: Splice {
                    prev: [head as Node; MAX_HEIGHT],
                    next: [ptr::null(); MAX_HEIGHT],
                },
                searches: Box::new([idle; STAGED]),
                occupied: 0,
                evict: 0,
                summary_counts: [0; 256],
                last: ptr::null(),
                ascending: 0,
                scattered: 0,
            }),
        }
    }

    /// Bytes of memory the list has allocated.
    pub fn memory_usage(&self) -> usize {
        self.memory.load(AtomicOrdering::Relaxed)
    }

    /// The arena's regular block size: memory usage grows in such steps.
    pub fn block_size(&self) -> usize {
        self.block_size
    }

    /// Bytes of the arena's current block not handed out yet (a node too large for it gets a
    /// block of its own and leaves this unchanged).
    pub fn block_unused(&self) -> usize {
        self.unused.load(AtomicOrdering::Relaxed)
    }

    /// The head (before the first node).
    pub fn head(&self) -> Node {
        self.head
    }

    /// Inserts the internal key `(user_key, trailer)`, which must not be present, with `value`,
    /// and returns its node, fully written. The node is linked at once if the splice brackets
    /// it, else staged (module doc): gets find it at once, searches and walks once it is
    /// linked.
    pub fn insert(&self, user_key: &[u8], trailer: u64, value: &[u8]) -> Node {
        // One copy of the insert per built-in order, as for the searches.
        match &self.order {
            KeyOrder::Bytewise => self.insert_in(bytewise_compare, user_key, trailer, value),
            KeyOrder::Reverse => {
                self.insert_in(|a, b| bytewise_compare(b, a), user_key, trailer, value)
            }
            KeyOrder::Custom(c) => self.insert_in(|a, b| c.compare(a, b), user_key, trailer, value),
        }
    }

    /// The order of the list's user keys.
    pub fn order(&self) -> &KeyOrder {
        &self.order
    }

    #[inline(always)]
    fn insert_in(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering + Copy,
        user_key: &[u8],
        trailer: u64,
        value: &[u8],
    ) -> Node {
        let key_len = user_key.len() + TRAILER_LEN;
        let mut writer = self.writer.lock();
        let arena = &mut writer.arena;
        let mut height = 1;
        while height < MAX_HEIGHT && arena.rng.one_in(BRANCHING) {
            height += 1;
        }
        let start = arena.alloc(node_size(height, key_len, value.len()), &self.memory);
        self.unused.store(arena.remaining, AtomicOrdering::Relaxed);
        // SAFETY: `start` is fresh, 8-aligned memory of the node's size owned by this list;
        // nothing else sees it until it is staged below. Every field is written inside it
        // (module doc): the tower below the node's address (when it is linked), the rest
        // from it on.
        let node = unsafe {
            let node = start.add(PTR * (height - 1));
            sync::init_tower(node, height);
            *node.add(PTR) = height as u8;
            let mut at = node.add(PTR + 1);
            at = at.add(write_varint(at, key_len));
            ptr::copy_nonoverlapping(user_key.as_ptr(), at, user_key.len());
            let trailer = trailer.to_le_bytes();
            ptr::copy_nonoverlapping(trailer.as_ptr(), at.add(user_key.len()), TRAILER_LEN);
            at = at.add(key_len);
            at = at.add(write_varint(at, value.len()));
            ptr::copy_nonoverlapping(value.as_ptr(), at, value.len());
            node
        };
        let target = Target { user_key, trailer };
        let Writer {
            splice,
            occupied,
            last,
            ascending,
            scattered,
            ..
        } = &mut *writer;
        let bracketed = self.brackets(compare, splice, &target);
        let looks = *scattered < SCATTERED_RUN || *scattered % SCATTERED_PROBE == 0;
        // SAFETY: `last` is null or a node of this list, fully written (linked or staged).
        *ascending = match bracketed
            || (looks
                && !last.is_null()
                && compare_with(compare, unsafe { node_key(*last) }, &target) == Ordering::Less)
        {
            true => ascending.saturating_add(1),
            false => 0,
        };
        *last = node;
        let nearby = match bracketed || !looks {
            true => None,
            false => self.nearby_level(compare, splice, &target),
        };
        *scattered = if bracketed || nearby.is_some() || *ascending >= ASCENDING_RUN {
            0
        } else if *ascending == 1 && *scattered >= SCATTERED_RUN {
            // A probe found a key after the last: the next inserts look, long enough for a
            // run in order to reach `ASCENDING_RUN` (random keys ascend half the time).
            SCATTERED_RUN - ASCENDING_RUN
        } else {
            // Back to 0 after 4 billion: sixteen inserts look again, then the probes go on.
            scattered.wrapping_add(1)
        };
        if bracketed {
            // Right after the last node linked (keys inserted in order): two comparisons and
            // no search, nothing to overlap by staging. The searches in flight step as at
            // any insert.
            self.link_at_splice(node, splice);
            self.step_searches(compare, &mut writer, u64::MAX);
        } else if let Some(level) = nearby {
            self.descend_from(compare, splice, level, &target);
            self.link_at_splice(node, splice);
            self.step_searches(compare, &mut writer, u64::MAX);
        } else if !self.stages || *ascending >= ASCENDING_RUN {
            self.search(compare, &target, Some(&mut splice.prev));
            for (level, (prev, next)) in splice.prev.iter().zip(&mut splice.next).enumerate() {
                // SAFETY: `prev` is the head or a linked node that reaches `level`: the search
                // filled every level below the list's height, and left the head above it.
                *next = unsafe { tower(*prev, level).load(AtomicOrdering::Acquire) };
            }
            self.link_at_splice(node, splice);
            // Nodes staged earlier link where their searches lead, past this one if need be.
            self.step_searches(compare, &mut writer, u64::MAX);
        } else {
            if *occupied == u64::MAX {
                // No free slot: one search goes to its end now (rare: slots outnumber the
                // steps of a search).
                let slot = writer.evict;
                writer.evict = (slot + 1) % STAGED;
                while writer.occupied & (1 << slot) != 0 {
                    self.step_searches(compare, &mut writer, 1 << slot);
                }
            }
            let slot = (!writer.occupied).trailing_zeros() as usize;
            self.stage(&mut writer, slot, node, &target);
            // The new search's first node was just asked for: it steps from the next insert.
            self.step_searches(compare, &mut writer, !(1 << slot));
        }
        node
    }

    fn height(&self) -> usize {
        self.max_height.load(AtomicOrdering::Relaxed)
    }

    /// The first node at or after `target` (null if none). Fills `prev` with the last node
    /// before `target` at each level when asked.
    pub fn find_greater_or_equal(
        &self,
        target: &Target<'_>,
        prev: Option<&mut [Node; MAX_HEIGHT]>,
    ) -> Node {
        // One copy of the search per built-in order: the order is chosen once per search,
        // not once per key compared.
        match &self.order {
            KeyOrder::Bytewise => self.search(bytewise_compare, target, prev),
            KeyOrder::Reverse => self.search(|a, b| bytewise_compare(b, a), target, prev),
            KeyOrder::Custom(c) => self.search(|a, b| c.compare(a, b), target, prev),
        }
    }

    #[inline(always)]
    fn search(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering + Copy,
        target: &Target<'_>,
        mut prev: Option<&mut [Node; MAX_HEIGHT]>,
    ) -> Node {
        let mut x: Node = self.head;
        let mut level = self.height() - 1;
        loop {
            // SAFETY: `x` is the head or a linked node; `level` is below its height because
            // towers are searched top-down from a level `x` was reached at.
            let next = unsafe { tower(x, level).load(AtomicOrdering::Acquire) };
            if level > 0 {
                // Where the level below goes on from `x`, asked for now: if `next` is past the
                // target, the search steps down and compares that node, and its cache miss
                // then overlaps this one instead of following it (random inserts spend most
                // of their time waiting on these misses). A wasted request if it moves right.
                // SAFETY: `x` reaches `level`, so it reaches `level - 1` too.
                let down = unsafe { tower(x, level - 1).load(AtomicOrdering::Relaxed) };
                prefetch_node(down, level - 1);
            }
            prefetch_node_rest(next, level);
            // SAFETY: `next` is a linked, non-head node when non-null.
            if !next.is_null()
                && compare_with(compare, unsafe { node_key(next) }, target) == Ordering::Less
            {
                x = next;
                continue;
            }
            if let Some(p) = prev.as_deref_mut() {
                p[level] = x;
            }
            if level == 0 {
                return next;
            }
            level -= 1;
        }
    }

    /// The last node before `target` (the head if none).
    pub fn find_less_than(&self, target: &Target<'_>) -> Node {
        let mut prev = [self.head as Node; MAX_HEIGHT];
        self.find_greater_or_equal(target, Some(&mut prev));
        prev[0]
    }

    /// The last node (the head if the list is empty).
    pub fn find_last(&self) -> Node {
        let mut x: Node = self.head;
        let mut level = self.height() - 1;
        loop {
            // SAFETY: as in `find_greater_or_equal`.
            let next = unsafe { tower(x, level).load(AtomicOrdering::Acquire) };
            if !next.is_null() {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
    }
}

mod arena;
#[cfg(all(test, loom))]
mod loom;
mod splice;
mod staging;
mod sync;
#[cfg(test)]
mod tests;
