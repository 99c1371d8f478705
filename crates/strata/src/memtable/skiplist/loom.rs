//! Model checks of the skiplist under loom, run by `scripts/loom.sh` (built with
//! `--cfg loom`; not part of CI, nor of a normal build). loom runs each model's threads in
//! every interleaving of their atomic operations and lock acquisitions, up to a bound on
//! preemptions (`LOOM_MAX_PREEMPTIONS`, 2 unless set), and lets each load return any store
//! the memory model allows it to see, not only the latest.
//!
//! What it checks here: the list's atomics and writer lock come from [`super::sync`], so
//! every link, height, staging slot, tag, summary bit and `occupied` word is a loom atomic,
//! and each node's tower is made when the node is written ([`super::sync::init_tower`]).
//! A reader that reaches a node by a load that does not synchronize with the node's
//! writing fails the model when it reads the node's tower, which [`whole`] does for every
//! node a reader gets hold of (through a link, a staging slot, or a search's answer). The
//! readers also assert what the module doc promises: levels sorted, entries whole, every
//! insert that returned before a get or a walk began found by it (the staging area first,
//! then the list), and after the threads join, every level sorted and nested and the
//! splice bracketing a place.
//!
//! What it cannot check: the keys and values are plain bytes in the arena, which loom does
//! not track; they are covered through the tower made right after them (above). Models are
//! small (a few keys, one or two threads besides the main one), so long searches, a full
//! staging area and towers above a few levels are left to the threaded tests in `tests.rs`.

use super::tests::{check_levels, check_splice};
use super::*;
use ::loom::thread;
use std::sync::Arc;

/// Runs `f` under loom with at most 2 preemptions unless `LOOM_MAX_PREEMPTIONS` says
/// otherwise.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = ::loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(f);
}

/// The value stored with `(key, seq)`: a reader that finds the entry checks it whole.
fn value_of(key: u8, seq: u64) -> [u8; 3] {
    [key, seq as u8, key ^ seq as u8 ^ 0x5a]
}

fn put(list: &SkipList, key: u8, seq: u64) {
    list.insert(&[key], (seq << 8) | 1, &value_of(key, seq));
}

/// The `(key, seq)` of a node a reader got hold of, after loading its tower (loom fails
/// the model if the node's writing is not visible to this thread) and checking its key
/// and value are those of one entry.
fn whole(node: Node) -> (u8, u64) {
    // SAFETY: a non-head node of a live list; every node has a tower of one at least.
    unsafe {
        tower(node, 0).load(AtomicOrdering::Relaxed);
        let key = node_target(node);
        assert_eq!(key.user_key.len(), 1, "a whole key");
        let seq = key.trailer >> 8;
        assert_eq!(
            node_value(node),
            value_of(key.user_key[0], seq),
            "a whole value"
        );
        (key.user_key[0], seq)
    }
}

/// A get as the memtable makes one: the newest version of `key` at or below `seq`, from
/// the staging area and the list.
fn get(list: &SkipList, key: u8, seq: u64) -> Option<u64> {
    let target = Target {
        user_key: &[key],
        trailer: (seq << 8) | 0xff,
    };
    let staged = list.find_staged(&[key], target.trailer);
    let linked = list.find_greater_or_equal(&target, None);
    [staged, linked]
        .into_iter()
        .filter(|node| !node.is_null())
        .map(whole)
        .filter(|&(k, _)| k == key)
        .map(|(_, s)| s)
        .max()
}

/// Entries in the list's order: key ascending, sequence number descending.
fn in_order(a: &(u8, u64), b: &(u8, u64)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 > b.1)
}

/// What a memtable iterator sees: the staging area copied first, then the list walked at
/// level 0, each entry whole and the walk sorted; every level above is walked too and must
/// be sorted. Returns the entries of both, sorted, each once.
fn walk(list: &SkipList) -> Vec<(u8, u64)> {
    let staged: Vec<(u8, u64)> = list.staged_nodes().into_iter().map(whole).collect();
    let mut entries = staged;
    for level in 0..list.height() {
        let mut last: Option<(u8, u64)> = None;
        // SAFETY: the list is alive; the head reaches every level and each node reached at
        // `level` has a tower that high.
        let mut node = unsafe { tower(list.head(), level).load(AtomicOrdering::Acquire) };
        while !node.is_null() {
            let entry = whole(node);
            if let Some(last) = last {
                assert!(in_order(&last, &entry), "level {level} sorted");
            }
            last = Some(entry);
            if level == 0 {
                entries.push(entry);
            }
            // SAFETY: as above.
            node = unsafe { tower(node, level).load(AtomicOrdering::Acquire) };
        }
    }
    // By key, the newest version first.
    entries.sort_by_key(|&(key, seq)| (key, std::cmp::Reverse(seq)));
    entries.dedup();
    entries
}

/// After the threads join: every level sorted and nested, the splice a bracket, and the
/// list exactly `expected`.
fn check_final(list: &SkipList, expected: &[(u8, u64)]) {
    check_splice(list, &KeyOrder::Bytewise);
    let mut expected = expected.to_vec();
    // By key, the newest version first.
    expected.sort_by_key(|&(key, seq)| (key, std::cmp::Reverse(seq)));
    let keys: Vec<(u8, u64)> = check_levels(list, &KeyOrder::Bytewise)
        .iter()
        .map(|k| (k[0], u64::from_le_bytes(k[1..].try_into().unwrap()) >> 8))
        .collect();
    assert_eq!(keys, expected);
    check_splice(list, &KeyOrder::Bytewise);
}

/// Two writers insert at once, in and out of order: the lock orders them, and whichever
/// goes first, the later one's keys land on both sides of the earlier one's (linked at the
/// splice, staged and then linked by the next insert).
#[test]
fn two_writers_with_distinct_keys_in_and_out_of_order() {
    model(|| {
        let list = Arc::new(SkipList::new(1, 1024));
        let writers: Vec<_> = [[2u8, 4], [3, 1]]
            .into_iter()
            .map(|keys| {
                let list = list.clone();
                thread::spawn(move || {
                    for key in keys {
                        put(&list, key, 1);
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        for key in 1..=4 {
            assert_eq!(get(&list, key, 9), Some(1), "key {key}");
        }
        check_final(&list, &[(1, 1), (2, 1), (3, 1), (4, 1)]);
    });
}

/// Two writers insert versions of one user key: a newer version sorts first, so each
/// insert after the first lands before the splice (staged, or linked after the version it
/// follows), and a get at each sequence number takes the newest at or below it.
#[test]
fn two_writers_with_one_user_key() {
    model(|| {
        let list = Arc::new(SkipList::new(1, 1024));
        let writers: Vec<_> = [[1u64, 3], [4, 2]]
            .into_iter()
            .map(|seqs| {
                let list = list.clone();
                thread::spawn(move || {
                    for seq in seqs {
                        put(&list, 5, seq);
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        for seq in 1..=4 {
            assert_eq!(get(&list, 5, seq), Some(seq));
        }
        check_final(&list, &[(5, 1), (5, 2), (5, 3), (5, 4)]);
    });
}

/// One model of a reader beside a writer: the list made with `seed` (which fixes the
/// towers' heights, drawn in insert order), `setup` inserted before the threads start
/// (`staged` of them still staged then), `writes` inserted by the writer thread while the
/// main thread reads.
struct ReaderCase {
    name: &'static str,
    seed: u64,
    setup: &'static [(u8, u64)],
    staged: usize,
    writes: &'static [(u8, u64)],
}

/// The insert paths of the module doc, each raced by a reader. Heights by seed, in insert
/// order: seed 1 all 1; seed 7: 1, 2, 1, 1; seed 3: 2, 1, 3.
const READER_CASES: &[ReaderCase] = &[
    ReaderCase {
        name: "keys in order, linked at the splice",
        seed: 1,
        setup: &[(1, 1), (2, 1)],
        staged: 0,
        writes: &[(3, 1), (4, 1)],
    },
    ReaderCase {
        name: "keys out of order, staged, each linked by the next insert",
        seed: 1,
        setup: &[(2, 1), (4, 1)],
        staged: 0,
        writes: &[(3, 1), (1, 1)],
    },
    ReaderCase {
        name: "a staged node the reader looks for, linked by the writer's insert",
        seed: 1,
        setup: &[(4, 1), (2, 1)],
        staged: 1,
        writes: &[(6, 1)],
    },
    ReaderCase {
        name: "a key placed from the level-1 bracket",
        seed: 7,
        setup: &[(10, 1), (20, 1), (40, 1)],
        staged: 0,
        writes: &[(30, 1)],
    },
    ReaderCase {
        name: "a taller node placed from a low bracket raises the list's height",
        seed: 3,
        setup: &[(10, 1), (30, 1)],
        staged: 0,
        writes: &[(20, 1)],
    },
    ReaderCase {
        name: "a run in order elsewhere, searched for and linked at once",
        seed: 1,
        setup: &[
            (10, 1),
            (11, 1),
            (12, 1),
            (13, 1),
            (1, 1),
            (2, 1),
            (3, 1),
            (4, 1),
        ],
        staged: 2,
        writes: &[(5, 1)],
    },
    ReaderCase {
        name: "versions of one user key, newest staged before the splice",
        seed: 1,
        setup: &[(5, 1), (5, 2)],
        staged: 1,
        writes: &[(5, 3), (6, 1)],
    },
];

/// A reader beside a writer, for each insert path: the reader's gets find every setup
/// entry (whose inserts returned before it began) whole, at its newest version, and its
/// walk sees every setup entry, nothing but inserted ones, every level sorted.
#[test]
fn a_reader_beside_a_writer_sees_whole_entries_and_every_returned_insert() {
    for case in READER_CASES {
        eprintln!("loom: {}", case.name);
        model(move || {
            let list = Arc::new(SkipList::new(case.seed, 1024));
            for &(key, seq) in case.setup {
                put(&list, key, seq);
            }
            assert_eq!(list.staged_nodes().len(), case.staged, "{}", case.name);
            let writer = {
                let list = list.clone();
                thread::spawn(move || {
                    for &(key, seq) in case.writes {
                        put(&list, key, seq);
                    }
                })
            };
            for &(key, seq) in case.setup {
                let found = get(&list, key, seq).unwrap_or(0);
                assert_eq!(found, seq, "{}: get {key}@{seq}", case.name);
            }
            let seen = walk(&list);
            for entry in case.setup {
                assert!(seen.contains(entry), "{}: walk lost {entry:?}", case.name);
            }
            for entry in &seen {
                let inserted = case.setup.contains(entry) || case.writes.contains(entry);
                assert!(inserted, "{}: walk made up {entry:?}", case.name);
            }
            writer.join().unwrap();
            let all: Vec<(u8, u64)> = case.setup.iter().chain(case.writes).copied().collect();
            check_final(&list, &all);
        });
    }
}

/// `link_staged` (a memtable switch) beside an insert: once it returns, a search alone
/// (no look at the staging area) finds every insert that returned before it was called.
#[test]
fn link_staged_beside_an_insert_leaves_earlier_inserts_searchable() {
    model(|| {
        let list = Arc::new(SkipList::new(1, 1024));
        put(&list, 4, 1);
        put(&list, 2, 1);
        assert_eq!(list.staged_nodes().len(), 1);
        let writer = {
            let list = list.clone();
            thread::spawn(move || put(&list, 3, 1))
        };
        list.link_staged();
        for key in [2u8, 4] {
            let target = Target {
                user_key: &[key],
                trailer: (9 << 8) | 0xff,
            };
            let node = list.find_greater_or_equal(&target, None);
            assert!(!node.is_null(), "key {key} searchable");
            assert_eq!(whole(node), (key, 1));
        }
        writer.join().unwrap();
        check_final(&list, &[(2, 1), (3, 1), (4, 1)]);
    });
}

/// Two writers and a reader: the writers' out-of-order keys are staged and step each
/// other's searches (the one staged before the threads start is linked by whichever insert
/// comes first), while the reader's gets and walk find the entries inserted before.
#[test]
fn two_writers_and_a_reader_find_every_earlier_insert() {
    model(|| {
        let list = Arc::new(SkipList::new(1, 1024));
        put(&list, 4, 1);
        put(&list, 2, 1);
        assert_eq!(list.staged_nodes().len(), 1);
        let writers: Vec<_> = [3u8, 1]
            .into_iter()
            .map(|key| {
                let list = list.clone();
                thread::spawn(move || put(&list, key, 1))
            })
            .collect();
        for key in [2u8, 4] {
            assert_eq!(get(&list, key, 9), Some(1), "key {key}");
        }
        let seen = walk(&list);
        assert!(seen.contains(&(2, 1)) && seen.contains(&(4, 1)), "{seen:?}");
        for w in writers {
            w.join().unwrap();
        }
        check_final(&list, &[(1, 1), (2, 1), (3, 1), (4, 1)]);
    });
}
