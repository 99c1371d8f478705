//! The database iterator under the iterator harness, over real databases and over trees
//! built without one, and in data-driven cases (`testdata/iter.txt`).
//!
//! The data-driven file declares a tree with `define`, then walks it with `iter`:
//!
//! ```text
//! define
//! mem: c#9,PUT=c9 b#8,DEL
//! L0: a#5,PUT=a5 c#4,PUT=c4
//! L1: a#1,PUT=a1 b#2,PUT=b2
//! L1: d#3,PUT=d3
//! ----
//! (the tree's shape)
//!
//! iter seq=8 lower=b upper=d
//! first
//! next
//! seek c
//! seek-for-prev c
//! last
//! prev
//! ----
//! first: b=b2
//! ...
//! ```
//!
//! Entries are `key#seq,KIND=value` (KIND: PUT, DEL, SINGLEDEL, MERGE; `\xNN` for other
//! bytes).
//! Each `mem:` line is a memtable, each `L0:` line an L0 table, each `Ln:` line the next
//! table of level n (in key order). `iter` reads at sequence number `seq` (by default, all
//! of it), between `lower` and `upper` when given, with merge operands appended with `,`
//! (`op=none`: no merge operator), and prints where each operation (`first`,
//! `last`, `seek k`, `seek-for-prev k`, `next`, `prev`) leaves it: `key=value`, or `.`
//! past either end.
//!
//! After a deliberate change of behaviour, `REWRITE=1 cargo test -p strata --lib db::iter`
//! rewrites the expected output in place; review the diff before committing it.

use super::*;
use crate::key::ValueKind;
use crate::testing::harness::{
    self, internal_iterator_from_inherent, random_key, Constructor, Entries, Entry, Keys,
};
use crate::testing::lsm::{self, Lsm};
use crate::util::{printable, Rng};
use crate::Options;
use std::collections::{BTreeMap, HashSet};

internal_iterator_from_inherent!(DbIterator, DbIterator::status);

/// One write of a generated history.
enum Write {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    SingleDelete(Vec<u8>),
    /// An operand of [`appender`], which appends it to the value.
    Merge(Vec<u8>, Vec<u8>),
}

impl Write {
    fn key(&self) -> &[u8] {
        match self {
            Write::Put(k, _) | Write::Delete(k) | Write::SingleDelete(k) => k,
            Write::Merge(k, _) => k,
        }
    }
}

/// The merge operator of the histories: appends operands with no delimiter, so that a
/// value split into pieces is reached by merging them in order.
fn appender() -> Arc<dyn MergeOperator> {
    Arc::new(crate::merge::StringAppend::new(b""))
}

/// Writes that leave `key` at `value` whatever came before: a put, or pieces of the value
/// merged onto a put of the first piece, onto a delete, or onto nothing (`fresh`: no
/// earlier write of the key).
fn writes_for_value(key: &[u8], value: &[u8], fresh: bool, rng: &mut Rng) -> Vec<Write> {
    let mode = rng.below(4);
    if mode == 0 {
        return vec![Write::Put(key.to_vec(), value.to_vec())];
    }
    let mut pieces = Vec::new();
    let mut rest = value;
    for _ in 0..rng.below(3) {
        let (piece, tail) = rest.split_at(rng.below(rest.len() as u64 + 1) as usize);
        pieces.push(piece.to_vec());
        rest = tail;
    }
    pieces.push(rest.to_vec());
    let mut out = Vec::new();
    match mode {
        1 => out.push(Write::Put(key.to_vec(), pieces.remove(0))),
        2 if fresh => {}
        _ => out.push(Write::Delete(key.to_vec())),
    }
    out.extend(pieces.into_iter().map(|p| Write::Merge(key.to_vec(), p)));
    out
}

/// Writes after whose first `visible` the database holds `entries` (and the keys outside
/// the bounds, if any), reached through older versions and keys written then deleted.
struct History {
    writes: Vec<Write>,
    visible: usize,
}

fn noise(rng: &mut Rng) -> Vec<u8> {
    format!("old{}", rng.below(1000)).into_bytes()
}

impl History {
    fn new(entries: &Entries, outside: &[Vec<u8>], rng: &mut Rng) -> History {
        let mut taken: HashSet<&[u8]> = entries.iter().map(|e| e.0.as_slice()).collect();
        taken.extend(outside.iter().map(Vec::as_slice));
        // Each key's writes in order; then the keys' writes interleaved at random.
        let mut queues: Vec<Vec<Write>> = Vec::new();
        for (k, v) in entries {
            let mut q = Vec::new();
            for _ in 0..rng.below(3) {
                q.push(Write::Put(k.clone(), noise(rng)));
                if rng.one_in(3) {
                    q.push(Write::Merge(k.clone(), noise(rng)));
                }
                if rng.one_in(3) {
                    q.push(Write::Delete(k.clone()));
                }
            }
            let fresh = q.is_empty();
            q.extend(writes_for_value(k, v, fresh, rng));
            queues.push(q);
        }
        for k in outside {
            queues.push(vec![Write::Put(k.clone(), noise(rng))]);
        }
        let deleted: Vec<Vec<u8>> = (0..entries.len() / 2 + 1)
            .map(|_| random_key(rng))
            .filter(|k| !taken.contains(k.as_slice()))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        for k in deleted {
            let put = Write::Put(k.clone(), noise(rng));
            let delete = match rng.one_in(2) {
                true => Write::SingleDelete(k),
                false => Write::Delete(k),
            };
            queues.push(vec![put, delete]);
        }
        for q in &mut queues {
            q.reverse();
        }
        let mut writes = Vec::new();
        while !queues.is_empty() {
            let i = rng.below(queues.len() as u64) as usize;
            writes.extend(queues[i].pop());
            if queues[i].is_empty() {
                queues.swap_remove(i);
            }
        }
        History {
            visible: writes.len(),
            writes,
        }
    }

    /// Adds writes that a reader at the visible point must not see.
    fn write_after(&mut self, entries: &Entries, rng: &mut Rng) {
        for _ in 0..rng.below(entries.len() as u64 + 2) {
            let key = match entries.get(rng.below(2 * entries.len() as u64 + 1) as usize) {
                Some(e) => e.0.clone(),
                None => random_key(rng),
            };
            self.writes.push(match rng.below(3) {
                0 => Write::Delete(key),
                1 => Write::Merge(key, noise(rng)),
                _ => Write::Put(key, noise(rng)),
            });
        }
    }
}

/// How a constructor's iterator reads.
#[derive(Debug, Clone, Copy)]
struct Reads {
    /// Within bounds, with keys on both sides of them.
    bounds: bool,
    /// At a snapshot, with writes after it.
    snapshot: bool,
}

/// The bounds of a data set, and keys outside them: (lower, upper, outside).
fn bounds(entries: &Entries) -> (Vec<u8>, Vec<u8>, Vec<Vec<u8>>) {
    let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
        return (
            b"m".to_vec(),
            b"n".to_vec(),
            vec![b"a".to_vec(), b"n".to_vec()],
        );
    };
    let lower = first.0.clone();
    let upper = [last.0.as_slice(), b"\0"].concat();
    let mut outside = vec![upper.clone(), [upper.as_slice(), b"z"].concat()];
    if let Some((_, shorter)) = lower.split_last() {
        outside.push(shorter.to_vec());
    }
    (lower, upper, outside)
}

impl Reads {
    /// A history for `entries`, and the bounds to read it with.
    fn history(
        self,
        entries: &Entries,
        rng: &mut Rng,
    ) -> (History, Option<Vec<u8>>, Option<Vec<u8>>) {
        let (lower, upper, outside) = match self.bounds {
            true => {
                let (l, u, o) = bounds(entries);
                (Some(l), Some(u), o)
            }
            false => (None, None, Vec::new()),
        };
        let mut h = History::new(entries, &outside, rng);
        if self.snapshot {
            h.write_after(entries, rng);
        }
        (h, lower, upper)
    }
}

/// A database in a temporary directory, written through its API, flushed at random
/// points (the first flushes compacted down to the last level), read through `Db::iter`.
struct DbConstructor {
    reads: Reads,
    db: Option<(crate::Db, tempfile::TempDir)>,
}

impl Constructor for DbConstructor {
    fn name(&self) -> String {
        format!("database iterator ({:?})", self.reads)
    }
    fn keys(&self) -> Keys {
        Keys::Bytewise
    }
    fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
        self.db = None;
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            create_if_missing: true,
            disable_auto_compactions: true,
            target_file_size_base: 4096,
            block_size: 256,
            merge_operator: Some(appender()),
            ..Options::default()
        };
        let db = crate::Db::open(dir.path(), options).unwrap();
        let (h, lower_bound, upper_bound) = self.reads.history(entries, rng);
        let flush_one_in = h.writes.len() as u64 / 4 + 1;
        let mut flushes = 0;
        let mut snapshot = None;
        for (i, w) in h.writes.iter().enumerate() {
            if i == h.visible && self.reads.snapshot {
                snapshot = Some(db.snapshot());
            }
            if rng.one_in(flush_one_in) {
                db.flush().unwrap();
                flushes += 1;
                if flushes == 2 {
                    db.compact_range(None, None).unwrap();
                }
            }
            match w {
                Write::Put(k, v) => db.put(k, v),
                Write::Delete(k) => db.delete(k),
                Write::SingleDelete(k) => db.single_delete(k),
                Write::Merge(k, v) => db.merge(k, v),
            }
            .unwrap();
        }
        if self.reads.snapshot && snapshot.is_none() {
            snapshot = Some(db.snapshot());
        }
        let it = db.iter(&ReadOptions {
            snapshot,
            lower_bound,
            upper_bound,
            ..ReadOptions::default()
        });
        self.db = Some((db, dir));
        Box::new(it)
    }
}

/// A tree built without a database: the history cut into parts, oldest in the deepest
/// level, newest in memtables, read by a `DbIterator` at the last visible sequence number.
struct TreeConstructor {
    reads: Reads,
    lsm: Option<Lsm>,
}

impl Constructor for TreeConstructor {
    fn name(&self) -> String {
        format!("database iterator over a tree ({:?})", self.reads)
    }
    fn keys(&self) -> Keys {
        Keys::Bytewise
    }
    fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_> {
        let (h, lower, upper) = self.reads.history(entries, rng);
        let internal: Vec<Entry> = h
            .writes
            .iter()
            .zip(1..)
            .map(|(w, seq)| {
                let (kind, value) = match w {
                    Write::Put(_, v) => (ValueKind::Put, v.clone()),
                    Write::Delete(_) => (ValueKind::Delete, Vec::new()),
                    Write::SingleDelete(_) => (ValueKind::SingleDelete, Vec::new()),
                    Write::Merge(_, v) => (ValueKind::Merge, v.clone()),
                };
                let mut ikey = Vec::new();
                append_internal_key(&mut ikey, w.key(), seq, kind as u8);
                (ikey, value)
            })
            .collect();
        // Cut the history into parts, oldest first; each goes to the same place as the one
        // before it or a newer one: L3, L2, L1 (a level gathers its parts into one sorted
        // run of tables), L0 (a table per part), the memtables (one per part).
        let mut lsm = Lsm::new();
        let mut levels: BTreeMap<usize, Vec<Entry>> = BTreeMap::new();
        // 4: L3, 3: L2, 2: L1, 1: L0, 0: a memtable.
        let mut place = 4;
        let mut rest = internal.as_slice();
        while !rest.is_empty() {
            let (part, tail) = rest.split_at(1 + rng.below(rest.len() as u64) as usize);
            rest = tail;
            let step = rng.below(place as u64 + 1).min(1 + rng.below(2));
            place -= step as usize;
            match place {
                0 => lsm.add_memtable(part.to_vec()).unwrap(),
                1 => lsm.add_l0(part.to_vec()).unwrap(),
                _ => levels.entry(place - 1).or_default().extend_from_slice(part),
            }
        }
        for (level, mut run) in levels {
            run.sort_by(|a, b| crate::key::compare_internal(&a.0, &b.0));
            for file in run.chunks(run.len() / 4 + 1) {
                lsm.add_file(level, file.to_vec()).unwrap();
            }
        }
        let read_seq = h.visible as u64;
        let context = IterContext {
            merge_operator: Some(appender()),
            ..IterContext::default()
        };
        let it = DbIterator::new(lsm.iter(), (read_seq, None), (lower, upper), context);
        self.lsm = Some(lsm);
        Box::new(it)
    }
}

const READS: [Reads; 4] = [
    Reads {
        bounds: false,
        snapshot: false,
    },
    Reads {
        bounds: true,
        snapshot: false,
    },
    Reads {
        bounds: false,
        snapshot: true,
    },
    Reads {
        bounds: true,
        snapshot: true,
    },
];

/// A seek key built on the stack is the one `seek_key` builds, up to the longest that
/// fits and past it (on the heap).
#[test]
fn seek_keys_on_the_stack_are_seek_keys() {
    let n = SEEK_KEY_ON_STACK - crate::key::TRAILER_LEN;
    for len in [0, 1, 16, n - 1, n, n + 1, 300] {
        let user_key: Vec<u8> = (0..len).map(|i| i as u8).collect();
        for seq in [0, 7, MAX_SEQUENCE] {
            let (mut on_stack, mut on_heap) = ([0; SEEK_KEY_ON_STACK], Vec::new());
            let key = seek_key_in(&user_key, seq, &mut on_stack, &mut on_heap).to_vec();
            assert_eq!(key, seek_key(&user_key, seq), "length {len}, seq {seq}");
            assert_eq!(on_heap.is_empty(), len <= n, "length {len}");
        }
    }
}

#[test]
fn database_iterators_pass_the_iterator_harness() {
    for reads in READS {
        harness::check(&mut DbConstructor { reads, db: None }, 8);
    }
}

#[test]
fn iterators_over_trees_pass_the_iterator_harness() {
    for reads in READS {
        harness::check(&mut TreeConstructor { reads, lsm: None }, 16);
    }
}

/// A declared tree: its entries, and its range deletions (line `rangedel: b-e#seq ...`),
/// which the iterator is given as one more source of tombstones.
struct Tree {
    lsm: Lsm,
    tombstones: Vec<crate::range_del::Tombstone>,
}

fn parse_tombstone(s: &str) -> Result<crate::range_del::Tombstone, String> {
    let bad = || format!("{s:?}: expected begin-end#seq");
    let (range, seq) = s.rsplit_once('#').ok_or_else(bad)?;
    let (begin, end) = range.split_once('-').ok_or_else(bad)?;
    let seq = seq.parse().map_err(|_| bad())?;
    Ok(crate::range_del::Tombstone::new(
        &lsm::unescape(begin)?,
        &lsm::unescape(end)?,
        seq,
    ))
}

fn define(input: &str) -> Result<Tree, String> {
    let mut tree = Tree {
        lsm: Lsm::new(),
        tombstones: Vec::new(),
    };
    let lsm = &mut tree.lsm;
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let (place, entries) = line
            .split_once(':')
            .ok_or_else(|| format!("{line:?}: expected mem:, L0: or Ln: and entries"))?;
        if place.trim() == "rangedel" {
            for t in entries.split_whitespace() {
                tree.tombstones.push(parse_tombstone(t)?);
            }
            continue;
        }
        let entries = lsm::parse_entries(entries)?;
        match place.trim() {
            "mem" => lsm.add_memtable(entries)?,
            "L0" => lsm.add_l0(entries)?,
            other => {
                let level = other
                    .strip_prefix('L')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| format!("{other:?}: not a level"))?;
                lsm.add_file(level, entries)?
            }
        }
    }
    Ok(tree)
}

/// Runs the operations of `input` (one a line), printing where each leaves `it`.
fn walk(it: &mut DbIterator, input: &str) -> Result<String, String> {
    let mut out = String::new();
    for line in input.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (op, arg) = line.split_once(' ').unwrap_or((line, ""));
        let arg = lsm::unescape(arg.trim())?;
        match op {
            "first" => it.seek_to_first(),
            "last" => it.seek_to_last(),
            "seek" => it.seek(&arg),
            "seek-for-prev" => it.seek_for_prev(&arg),
            "next" => it.next(),
            "prev" => it.prev(),
            _ => return Err(format!("{line:?}: unknown operation")),
        }
        let at = match it.valid() {
            true => format!("{}={}", printable(it.key()), printable(it.value())),
            false => ".".to_string(),
        };
        out.push_str(&format!("{line}: {at}\n"));
        if let Err(e) = it.status() {
            out.push_str(&format!("error: {e}\n"));
        }
    }
    Ok(out)
}

fn iter_case(tree: &Tree, case: &mut datadriven::TestCase) -> Result<String, String> {
    let arg = |case: &mut datadriven::TestCase, name: &str| {
        case.try_take_arg::<String>(name)
            .map_err(|e| e.to_string())?
            .map(|s| lsm::unescape(&s))
            .transpose()
    };
    let seq = match arg(case, "seq")? {
        Some(s) => String::from_utf8_lossy(&s)
            .parse()
            .map_err(|e| format!("seq: {e}"))?,
        None => MAX_SEQUENCE,
    };
    let lower = arg(case, "lower")?;
    let upper = arg(case, "upper")?;
    let op: Option<Arc<dyn MergeOperator>> = match arg(case, "op")?.as_deref() {
        None => Some(Arc::new(crate::merge::StringAppend::new(b","))),
        Some(b"none") => None,
        Some(other) => return Err(format!("op={}: unknown", printable(other))),
    };
    case.expect_empty().map_err(|e| e.to_string())?;
    let mut range_del = RangeDelAggregator::for_read(seq);
    range_del.add(Arc::new(crate::range_del::FragmentedList::new(
        &tree.tombstones,
    )));
    let context = IterContext {
        merge_operator: op,
        range_del: Some(range_del),
        ..IterContext::default()
    };
    let mut it = DbIterator::new(tree.lsm.iter(), (seq, None), (lower, upper), context);
    walk(&mut it, &case.input)
}

#[test]
fn iteration_over_declared_trees() {
    let mut cases = 0;
    datadriven::walk(
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/db/testdata/iter.txt"),
        |f| {
            let mut tree = Tree {
                lsm: Lsm::new(),
                tombstones: Vec::new(),
            };
            f.run(|case| -> Result<String, String> {
                cases += 1;
                match case.directive.as_str() {
                    "define" => {
                        tree = define(&case.input)?;
                        let mut out = tree.lsm.describe();
                        if !tree.tombstones.is_empty() {
                            out += &format!("rangedel: {:?}\n", tree.tombstones);
                        }
                        Ok(out)
                    }
                    "iter" => iter_case(&tree, case),
                    other => Err(format!("unknown directive {other:?}")),
                }
            })
        },
    );
    assert!(cases >= 10, "only {cases} cases ran");
}

/// A backward step that fails between two versions of a key (the older one read, the newer
/// one not yet) ends the walk on the error: the older version is not the key's value.
#[test]
fn a_read_error_in_a_backward_scan_is_an_error_not_an_older_version() {
    let entry = |k: &str, seq: u64, v: &str| {
        let mut key = Vec::new();
        crate::key::append_internal_key(&mut key, k.as_bytes(), seq, ValueKind::Put as u8);
        (key, v.as_bytes().to_vec())
    };
    let newer = vec![entry("b", 9, "new"), entry("d", 9, "new")];
    let older = vec![entry("a", 1, "old"), entry("d", 1, "old")];
    // The older run fails at its first positioning (1), at the step after `d#1` (2), or at
    // the one after `a#1` (3), where `a#1` might as well be shadowed by an unread version.
    for steps in 1..=3 {
        let children: Vec<Box<dyn InternalIterator>> = vec![
            Box::new(lsm::VecIter::new(newer.clone())),
            Box::new(lsm::FailingAfter::new(
                lsm::VecIter::new(older.clone()),
                steps,
            )),
        ];
        let mut it = DbIterator::new(
            MergingIterator::new(children),
            (MAX_SEQUENCE, None),
            (None, None),
            IterContext::default(),
        );
        it.seek_to_last();
        let mut seen = Vec::new();
        while it.valid() && seen.len() < 10 {
            seen.push(format!("{}={}", printable(it.key()), printable(it.value())));
            it.prev();
        }
        assert!(it.status().is_err(), "steps={steps}: {seen:?}");
        let want: &[&str] = match steps {
            1 | 2 => &[],
            _ => &["d=new", "b=new"],
        };
        assert_eq!(seen, want, "steps={steps}");
    }
}
