//! Tests of the skiplist: the iterator conformance harness (against a sorted model), the
//! node layout, every level sorted after inserts in any order, readers beside a writer,
//! and lookups while inserts are staged.

use super::*;
use crate::iterator::InternalIterator;
use crate::key::{append_internal_key, compare_internal};
use crate::testing::harness::{self, Constructor, Entries, Keys};
use crate::testing::lsm::shuffled;
use std::sync::Arc;

fn ik(k: u64, seq: u64) -> Vec<u8> {
    let mut v = Vec::new();
    append_internal_key(&mut v, &k.to_be_bytes(), seq, 1);
    v
}

fn insert(list: &SkipList, ikey: &[u8], value: &[u8]) {
    let t = Target::from_internal(ikey).unwrap();
    list.insert(t.user_key, t.trailer, value);
}

pub(super) fn collect(list: &SkipList) -> Vec<Vec<u8>> {
    list.link_staged();
    let mut out = Vec::new();
    // SAFETY: the list is alive for the whole walk.
    unsafe {
        let mut n = node_next(list.head());
        while !n.is_null() {
            out.push(node_key(n).to_vec());
            n = node_next(n);
        }
    }
    out
}

/// A cursor over a bare list, moved by the list's own searches alone.
struct ListCursor {
    list: SkipList,
    /// The current node; null when not valid.
    node: Node,
}

impl ListCursor {
    fn set(&mut self, node: Node) {
        self.node = if node == self.list.head() {
            ptr::null()
        } else {
            node
        };
    }

    /// The last node at or before `ikey`: the last one before its successor.
    fn find_at_or_before(&self, ikey: &[u8]) -> Node {
        let t = Target::from_internal(ikey).unwrap();
        let mut longer = t.user_key.to_vec();
        let successor = match t.trailer.checked_sub(1) {
            Some(trailer) => Target { trailer, ..t },
            None => {
                longer.push(0);
                Target {
                    user_key: &longer,
                    trailer: u64::MAX,
                }
            }
        };
        self.list.find_less_than(&successor)
    }
}

// SAFETY: the node pointer points into `list`, which the cursor owns and which is safe to
// read from any thread (see the module doc).
unsafe impl Send for ListCursor {}

impl InternalIterator for ListCursor {
    fn valid(&self) -> bool {
        !self.node.is_null()
    }
    fn seek_to_first(&mut self) {
        // SAFETY: the list is alive.
        self.set(unsafe { node_next(self.list.head()) });
    }
    fn seek_to_last(&mut self) {
        self.set(self.list.find_last());
    }
    fn seek(&mut self, target: &[u8]) {
        let t = Target::from_internal(target).unwrap();
        self.set(self.list.find_greater_or_equal(&t, None));
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.set(self.find_at_or_before(target));
    }
    fn next(&mut self) {
        if self.valid() {
            // SAFETY: a valid cursor is on a linked node of its live list.
            self.set(unsafe { node_next(self.node) });
        }
    }
    fn prev(&mut self) {
        if self.valid() {
            let t = Target::from_internal(self.key()).unwrap();
            self.set(self.list.find_less_than(&t));
        }
    }
    fn key(&self) -> &[u8] {
        if !self.valid() {
            return &[];
        }
        // SAFETY: as in `next`.
        unsafe { node_key(self.node) }
    }
    fn value(&self) -> &[u8] {
        if !self.valid() {
            return &[];
        }
        // SAFETY: as in `next`.
        unsafe { node_value(self.node) }
    }
}

struct ListConstructor {
    block_size: usize,
}

impl Constructor for ListConstructor {
    fn name(&self) -> String {
        format!("skiplist (arena blocks of {} bytes)", self.block_size)
    }
    fn keys(&self) -> Keys {
        Keys::Internal
    }
    fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
        let list = SkipList::new(rng.next_u64(), self.block_size);
        for (k, v) in shuffled(rng, entries) {
            insert(&list, &k, &v);
        }
        list.link_staged();
        Box::new(ListCursor {
            list,
            node: ptr::null(),
        })
    }
}

#[test]
fn skiplists_pass_the_iterator_harness() {
    for block_size in [1024, MAX_BLOCK_SIZE, HUGE_BLOCK_SIZE] {
        harness::check(&mut ListConstructor { block_size }, 16);
    }
}

/// The block size a list asks for, and the arena blocks it gets: from [`HUGE_BLOCK_SIZE`]
/// up, [`SMALL_BLOCKS_FIRST`] blocks of [`MAX_BLOCK_SIZE`] from the allocator and then
/// mappings of one huge page each, aligned to it so that the kernel can back each with one
/// huge page (on Linux; from the allocator elsewhere); below it, blocks of the size asked
/// for, at most [`MAX_BLOCK_SIZE`], from the allocator.
#[test]
fn lists_of_large_memtables_get_blocks_of_one_huge_page() {
    let on_linux = cfg!(target_os = "linux");
    // (asked for, block size, allocator blocks of that size, huge mappings)
    let cases = [
        (1024, 1024, true, false),
        (MAX_BLOCK_SIZE / 2, MAX_BLOCK_SIZE / 2, true, false),
        (HUGE_BLOCK_SIZE - 1, MAX_BLOCK_SIZE, true, false),
        (HUGE_BLOCK_SIZE, HUGE_BLOCK_SIZE, !on_linux, on_linux),
        (64 << 20, HUGE_BLOCK_SIZE, !on_linux, on_linux),
    ];
    for (asked, block, allocated, mapped) in cases {
        let list = SkipList::new(5, asked);
        // Past the first two blocks and into a third at least.
        let entries = (2 * MAX_BLOCK_SIZE.min(block) + block) / 50;
        for i in 0..entries as u64 {
            insert(&list, &ik(i, i + 1), &[1; 64]);
        }
        assert_eq!(list.block_size(), block, "asked for {asked}");
        let writer = list.writer.lock();
        let arena = &writer.arena;
        let small = usize::from(block == HUGE_BLOCK_SIZE) * SMALL_BLOCKS_FIRST;
        for (i, &(_, layout)) in arena.blocks.iter().enumerate() {
            let want = if i < small { MAX_BLOCK_SIZE } else { block };
            assert_eq!(layout.size(), want, "asked for {asked}: block {i}");
        }
        assert!(
            arena.blocks.len() >= small,
            "asked for {asked}: the small blocks first"
        );
        assert_eq!(arena.blocks.len() > small, allocated, "asked for {asked}");
        assert_eq!(!arena.mapped.is_empty(), mapped, "asked for {asked}");
        for &p in &arena.mapped {
            assert_eq!(p as usize % HUGE_BLOCK_SIZE, 0, "asked for {asked}");
        }
        // Every entry readable, from the small blocks and the mapped ones.
        drop(writer);
        list.link_staged();
        // SAFETY: the list is alive.
        let mut n = unsafe { node_next(list.head()) };
        let mut count = 0;
        while !n.is_null() {
            // SAFETY: as above.
            unsafe {
                assert_eq!(node_value(n), &[1; 64][..]);
                n = node_next(n);
            }
            count += 1;
        }
        assert_eq!(count, entries, "asked for {asked}");
    }
}

#[test]
fn large_nodes_get_their_own_blocks() {
    let list = SkipList::new(2, MAX_BLOCK_SIZE);
    let big = vec![7u8; MAX_BLOCK_SIZE];
    insert(&list, &ik(1, 1), &big);
    insert(&list, &ik(2, 2), b"small");
    list.link_staged();
    assert!(list.memory_usage() > MAX_BLOCK_SIZE);
    // SAFETY: the list is alive.
    unsafe {
        let first = node_next(list.head());
        assert_eq!(node_value(first), &big[..]);
        assert_eq!(node_value(node_next(first)), b"small");
    }
}

#[test]
fn the_largest_key_and_every_height_survive_the_node_layout() {
    let list = SkipList::new(4, MAX_BLOCK_SIZE);
    let mut key = vec![b'k'; crate::write_batch::MAX_KEY_LEN];
    key.extend_from_slice(&9u64.to_le_bytes());
    let value = vec![3u8; 3 << 20];
    insert(&list, &key, &value);
    // Enough entries for towers of many heights.
    for i in 0..50_000u64 {
        insert(&list, &ik(i, i + 10), b"v");
    }
    list.link_staged();
    // SAFETY: the list is alive.
    unsafe {
        let mut n = node_next(list.head());
        let mut count = 0;
        while !n.is_null() {
            let height = node_height(n);
            assert!((1..=MAX_HEIGHT).contains(&height));
            if node_key(n).len() == key.len() {
                assert_eq!(node_key(n), &key[..]);
                assert_eq!(node_value(n), &value[..]);
            }
            count += 1;
            n = node_next(n);
        }
        assert_eq!(count, 50_001);
    }
    assert!(list.height() > 4, "towers grew");
}

/// Every level of `list`, walked from the head: each must be sorted in `order`, and each
/// level's nodes must be among the level below's.
pub(super) fn check_levels(list: &SkipList, order: &KeyOrder) -> Vec<Vec<u8>> {
    list.link_staged();
    let mut below: Option<std::collections::HashSet<Node>> = None;
    for level in 0..MAX_HEIGHT {
        let mut nodes = std::collections::HashSet::new();
        let mut last: Option<&[u8]> = None;
        // SAFETY: the list is alive; every node reached at `level` has a tower that high.
        let mut n = unsafe { tower(list.head(), level).load(AtomicOrdering::Acquire) };
        while !n.is_null() {
            // SAFETY: as above.
            let key = unsafe { node_key(n) };
            if let Some(last) = last {
                assert_eq!(
                    order.compare_internal(last, key),
                    Ordering::Less,
                    "level {level}"
                );
            }
            if let Some(below) = &below {
                assert!(below.contains(&(n as Node)), "level {level} skips below");
            }
            assert!(level < unsafe { node_height(n) });
            nodes.insert(n as Node);
            last = Some(key);
            // SAFETY: as above.
            n = unsafe { tower(n, level).load(AtomicOrdering::Acquire) };
        }
        below = Some(nodes);
    }
    collect(list)
}

/// The splice's invariant (module doc): at every level its previous node is the head or
/// before its next node, whose predecessor it is, and the brackets nest.
pub(super) fn check_splice(list: &SkipList, order: &KeyOrder) {
    let writer = list.writer.lock();
    let splice = &writer.splice;
    for level in 0..MAX_HEIGHT {
        let (prev, next) = (splice.prev[level], splice.next[level]);
        // SAFETY: the splice holds the head and linked nodes of the live list.
        unsafe {
            assert_eq!(
                tower(prev, level).load(AtomicOrdering::Acquire) as Node,
                next
            );
            if prev != list.head() && !next.is_null() {
                assert_eq!(
                    order.compare_internal(node_key(prev), node_key(next)),
                    Ordering::Less
                );
            }
            if level > 0 {
                let (low_prev, low_next) = (splice.prev[level - 1], splice.next[level - 1]);
                if prev != list.head() {
                    assert!(low_prev != list.head(), "level {level} nests");
                    assert_ne!(
                        order.compare_internal(node_key(prev), node_key(low_prev)),
                        Ordering::Greater,
                        "level {level} nests"
                    );
                }
                if !next.is_null() {
                    assert!(!low_next.is_null(), "level {level} nests");
                    assert_ne!(
                        order.compare_internal(node_key(next), node_key(low_next)),
                        Ordering::Less,
                        "level {level} nests"
                    );
                }
            }
        }
    }
}

/// A batch of keys in order that lands below the splice (a second writer's batch, of lower
/// keys, inserted after the first's) is searched for once its keys have ascended a few
/// times, and its other keys follow the splice: only its first few are staged, where every
/// key of it was before (each insert then stepped up to [`STAGED`] searches).
#[test]
fn a_run_of_keys_in_order_below_the_splice_stages_only_its_first_keys() {
    let list = SkipList::new(5, 1 << 16);
    // Under Miri (interpreted) fewer and shorter batches: each still longer than the staging
    // area, which a batch staged whole would fill.
    let (batch, pairs) = if cfg!(miri) {
        (100u64, 3u64)
    } else {
        (1000, 10)
    };
    let mut staged = Vec::new();
    for pair in 0..pairs {
        // The later batch of the pair first, then the earlier one.
        for run in [pair * 2 + 1, pair * 2] {
            let mut count = 0;
            for k in run * batch..(run + 1) * batch {
                let key = ik(k, 1);
                insert(&list, &key, b"v");
                let t = Target::from_internal(&key).unwrap();
                count += usize::from(!list.find_staged(t.user_key, t.trailer).is_null());
            }
            staged.push(count);
        }
    }
    assert!(
        staged.iter().all(|&n| n <= ASCENDING_RUN as usize),
        "keys staged per batch: {staged:?}"
    );
    assert_eq!(
        check_levels(&list, &KeyOrder::Bytewise).len() as u64,
        2 * pairs * batch
    );
}

/// Keys in order but for a few out of place (here each pair of neighbours swapped) are
/// placed from the splice's low brackets at once ([`NEARBY_LEVELS`]), not staged: a staged
/// key's search from the top costs about as many steps as the list has levels times four.
#[test]
fn keys_a_little_out_of_order_are_placed_from_the_splice_not_staged() {
    let list = SkipList::new(6, 1 << 16);
    // Under Miri (interpreted) fewer keys, enough for the list to grow past four levels.
    let n: u64 = if cfg!(miri) { 1000 } else { 5000 };
    let mut staged = 0;
    for i in 0..n {
        let key = ik(i ^ 1, 1);
        insert(&list, &key, b"v");
        let t = Target::from_internal(&key).unwrap();
        staged += usize::from(!list.find_staged(t.user_key, t.trailer).is_null());
    }
    // A key finds no bracket while the list is one level high, or when its neighbour,
    // inserted just before, stands on four levels or more (one node in 64): it is staged
    // then. Every second key was staged before.
    assert!(
        (staged as u64) < n / 50,
        "{staged} of {} keys out of place staged",
        n / 2
    );
    assert_eq!(check_levels(&list, &KeyOrder::Bytewise).len() as u64, n);
}

/// Random keys make the list stop looking for an order on every insert ([`SCATTERED_RUN`]);
/// an order that starts after them is still found, at most a probe's interval late: each
/// pattern below, after 3,000 random keys, stages no more keys than the interval plus the
/// pattern's own allowance (what it stages after no random keys at all). Keys a little out
/// of order are not among them: after random keys the splice is far from them, and they are
/// staged whether or not the list looks on every insert.
#[test]
fn an_order_after_random_keys_is_found_within_a_probe_interval() {
    // (name, key i of the pattern, keys it may stage without random keys before it)
    type Pattern = (&'static str, fn(u64) -> u64, usize);
    let patterns: [Pattern; 3] = [
        // Below the random keys, then above them: the splice brackets neither at first.
        ("ascending below the random keys", |i| i, 0),
        ("ascending above the random keys", |i| (3 << 40) + i, 0),
        // Two writers' batches of 500, the later batch of each pair first.
        (
            "batches in order, each pair's later first",
            |i| ((i / 500) ^ 1) * 500 + i % 500,
            10,
        ),
    ];
    let random = |i: u64| (1 << 40) + (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24);
    for (name, key_of, allowance) in patterns {
        let list = SkipList::new(7, 1 << 16);
        for i in 0..3000 {
            insert(&list, &ik(random(i), 1), b"v");
        }
        let mut staged = 0;
        for i in 0..2500u64 {
            let key = ik(key_of(i), 1);
            insert(&list, &key, b"v");
            let t = Target::from_internal(&key).unwrap();
            staged += usize::from(!list.find_staged(t.user_key, t.trailer).is_null());
        }
        let bound = SCATTERED_PROBE as usize + ASCENDING_RUN as usize + allowance;
        assert!(
            staged <= bound,
            "{name}: {staged} of 2500 keys staged, bound {bound}"
        );
        assert_eq!(
            check_levels(&list, &KeyOrder::Bytewise).len(),
            5500,
            "{name}"
        );
    }
}

/// Inserts in the orders a memtable sees (sorted runs that the splice follows, and
/// jumps that make it search), in each built-in order: the list holds them all, sorted
/// at every level.
#[test]
fn inserts_in_any_order_keep_every_level_sorted() {
    // Under Miri (interpreted) fewer keys: still enough for the splice, the nearby brackets
    // and a run in order to take their paths.
    let n = if cfg!(miri) { 100 } else { 3_000u64 };
    // (name, the (key, seq) of insert i)
    type Pattern = (&'static str, fn(u64, u64) -> (u64, u64));
    let patterns: [Pattern; 11] = [
        ("ascending keys", |i, _| (i, 1)),
        ("descending keys", |i, n| (n - i, 1)),
        ("one key, rising seq", |i, _| (7, i + 1)),
        ("two interleaved runs", |i, n| ((i % 2) * n + i / 2, 1)),
        ("runs of 100 from spread starts", |i, _| {
            ((i / 100) * 7919 % 3001 * 1000 + i % 100, 1)
        }),
        ("ascending keys, two versions each", |i, _| {
            (i / 2, 10 + i % 2)
        }),
        ("random", |i, _| {
            (i.wrapping_mul(2654435761) % 100_000, i + 1)
        }),
        // Two writers' batches of keys in order, the later batch inserted first.
        ("runs of 100, each pair swapped", |i, _| {
            (((i / 100) ^ 1) * 100 + i % 100, 1)
        }),
        ("runs of 50, each below the one before", |i, n| {
            (n - (i / 50 + 1) * 50 + i % 50, 1)
        }),
        ("ascending keys, neighbours swapped", |i, _| (i ^ 1, 1)),
        ("ascending runs of 16, shuffled within", |i, _| {
            ((i & !15) | ((i.wrapping_mul(7) + 3) & 15), 1)
        }),
    ];
    for order in [KeyOrder::Bytewise, KeyOrder::Reverse] {
        for (name, key_of) in patterns {
            let list = SkipList::with_order(9, 4096, order.clone());
            let mut expected = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for i in 0..n {
                let (k, seq) = key_of(i, n);
                let key = ik(k, seq);
                if !seen.insert(key.clone()) {
                    continue;
                }
                insert(&list, &key, &k.to_le_bytes());
                check_splice(&list, &order);
                expected.push(key);
            }
            expected.sort_by(|a, b| order.compare_internal(a, b));
            assert_eq!(check_levels(&list, &order), expected, "{name} in {order:?}");
            for key in &expected {
                let t = Target::from_internal(key).unwrap();
                let found = list.find_greater_or_equal(&t, None);
                // SAFETY: the list is alive.
                assert_eq!(unsafe { node_key(found) }, &key[..], "{name} in {order:?}");
            }
        }
    }
}

#[test]
fn readers_see_a_consistent_sorted_list_while_a_writer_inserts() {
    // Fewer keys under Miri (interpreted), which checks the accesses for data races.
    const N: u64 = if cfg!(miri) { 150 } else { 20_000 };
    let list = Arc::new(SkipList::new(3, 4096));
    let writer = {
        let list = list.clone();
        std::thread::spawn(move || {
            for seq in 0..N {
                insert(&list, &ik(seq.wrapping_mul(2654435761) % 10_000, seq), b"v");
            }
        })
    };
    let mut last_len = 0;
    while !writer.is_finished() {
        let keys = collect(&list);
        assert!(keys.len() >= last_len);
        assert!(keys
            .windows(2)
            .all(|w| compare_internal(&w[0], &w[1]) == Ordering::Less));
        last_len = keys.len();
    }
    writer.join().unwrap();
    assert_eq!(collect(&list).len(), N as usize);
}

/// A writer inserts while readers look up keys whose inserts have returned (the writer
/// publishes how many after each): the staging area then the list must hold every one,
/// whether it is staged, being linked, or linked. Readers also link the area themselves
/// now and then, as a memtable switch does.
#[test]
fn gets_find_every_returned_insert_while_nodes_are_staged_and_linked() {
    use std::sync::atomic::AtomicU64;
    // Fewer keys under Miri (interpreted), which checks the accesses for data races.
    const N: u64 = if cfg!(miri) { 200 } else { 30_000 };
    let list = Arc::new(SkipList::new(5, 4096));
    let published = Arc::new(AtomicU64::new(0));
    let key_of = |i: u64| i.wrapping_mul(2654435761) % 1_000_003;
    let writer = {
        let (list, published) = (list.clone(), published.clone());
        std::thread::spawn(move || {
            for i in 0..N {
                insert(&list, &ik(key_of(i), i + 1), &i.to_le_bytes());
                published.store(i + 1, AtomicOrdering::Release);
            }
        })
    };
    let readers: Vec<_> = (0..2u64)
        .map(|r| {
            let (list, published) = (list.clone(), published.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::new(r);
                let mut lookups = 0u64;
                loop {
                    let done = published.load(AtomicOrdering::Acquire);
                    if done == 0 {
                        continue;
                    }
                    // Mostly the newest inserts, which are the staged ones.
                    let window = if rng.one_in(2) { 40 } else { N };
                    let i = done - 1 - rng.below(done.min(window));
                    let key = ik(key_of(i), i + 1);
                    let t = Target::from_internal(&key).unwrap();
                    let staged = list.find_staged(t.user_key, t.trailer);
                    let linked = list.find_greater_or_equal(&t, None);
                    // SAFETY: the list is alive; found nodes are its nodes.
                    let found = [staged, linked]
                        .into_iter()
                        .any(|n| !n.is_null() && unsafe { node_key(n) } == &key[..]);
                    assert!(found, "insert {i} of {done} returned but is not found");
                    lookups += 1;
                    if rng.one_in(if cfg!(miri) { 20 } else { 500 }) {
                        list.link_staged();
                    }
                    if done == N {
                        return lookups;
                    }
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert_eq!(collect(&list).len(), N as usize);
}

/// Staged nodes are found by [`SkipList::find_staged`] only for their own user key and
/// at or below the trailer asked, newest first; a custom order stages none.
#[test]
fn find_staged_takes_the_newest_version_at_or_below_the_trailer() {
    let list = SkipList::new(6, 4096);
    // Ascending keys go right after the splice: linked at once, and the list grows tall
    // enough that a search takes far more steps than the inserts below make. Those fall
    // before the splice, so they are staged, and still are at the end.
    for k in 100..20_000u64 {
        insert(&list, &ik(k, 1), b"linked");
    }
    assert_eq!(list.staged_nodes().len(), 0);
    for (k, seq) in [(1u64, 3u64), (1, 5), (2, 4), (1, 9)] {
        insert(&list, &ik(k, seq), &seq.to_le_bytes());
    }
    let found = |k: u64, seq: u64| {
        let key = ik(k, seq);
        let t = Target::from_internal(&key).unwrap();
        let n = list.find_staged(t.user_key, t.trailer | 0xff);
        // SAFETY: the list is alive.
        (!n.is_null()).then(|| unsafe { node_value(n) }.to_vec())
    };
    let cases = [
        (1, 10, Some(9)),
        (1, 8, Some(5)),
        (1, 5, Some(5)),
        (1, 2, None),
        (2, 9, Some(4)),
        (3, 9, None),
    ];
    for (k, seq, expect) in cases {
        assert_eq!(
            found(k, seq),
            expect.map(|s: u64| s.to_le_bytes().to_vec()),
            "key {k} at {seq}"
        );
    }
    assert_eq!(list.staged_nodes().len(), 4);
    list.link_staged();
    assert_eq!(found(1, 10), None, "linked nodes leave the staging area");
    assert_eq!(list.staged_nodes().len(), 0);
    assert_eq!(collect(&list).len(), 19_904);

    let custom = SkipList::with_order(
        7,
        4096,
        KeyOrder::Custom(Arc::new(crate::comparator::BytewiseComparator)),
    );
    insert(&custom, &ik(1, 1), b"v");
    let key = ik(1, 1);
    let t = Target::from_internal(&key).unwrap();
    assert!(custom.find_staged(t.user_key, t.trailer).is_null());
    assert!(!custom.find_greater_or_equal(&t, None).is_null());
}
