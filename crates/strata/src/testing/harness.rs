//! The iterator conformance harness.
//!
//! A [`Constructor`] builds one kind of sorted structure from a sorted set of key-value pairs
//! and returns an iterator over it. [`check`] builds it from random data sets
//! (empty, tiny, up to a thousand entries; empty keys, long keys, the bytes 0x00 and 0xff)
//! and checks the iterator against the data set itself: a scan forward, a scan backward,
//! then a few hundred random operations (seek_to_first, seek_to_last, seek, a seek begun by
//! `prepare_seek` as a merge begins its children's, seek_for_prev, next, prev), comparing
//! validity, key and value after each. Seek targets are present keys, near misses of them and
//! fresh keys.
//!
//! Which keys a structure holds and in what order is its [`Keys`]: any bytes in bytewise or
//! reverse bytewise order (blocks and tables take a comparator), or internal keys in
//! internal-key order (the skiplist, memtables, the merging and concatenating iterators,
//! tables of internal keys).
//!
//! The harness drives every iterator through [`InternalIterator`];
//! [`internal_iterator_from_inherent`] adapts the ones whose methods are their own (block and
//! database iterators). A failure names the constructor, the data set and the operations that
//! led to it.

use std::collections::HashSet;

use crate::comparator::KeyOrder;
use crate::iterator::InternalIterator;
use crate::key::{
    append_internal_key, user_key, ParsedKey, ValueKind, KIND_FOR_SEEK, MAX_SEQUENCE,
};
use crate::table::block::BlockOrder;
use crate::util::{printable, Rng};

/// A key and its value.
pub(crate) type Entry = (Vec<u8>, Vec<u8>);

/// A sorted set of key-value pairs: what a constructor builds from.
pub(crate) type Entries = [Entry];

/// Implements [`InternalIterator`] (what the harness drives) for a type whose inherent
/// methods have the same names; `$status` maps `&$ty` to its status.
macro_rules! internal_iterator_from_inherent {
    ($ty:ty, $status:expr) => {
        impl $crate::iterator::InternalIterator for $ty {
            fn valid(&self) -> bool {
                <$ty>::valid(self)
            }
            fn seek_to_first(&mut self) {
                <$ty>::seek_to_first(self)
            }
            fn seek_to_last(&mut self) {
                <$ty>::seek_to_last(self)
            }
            fn seek(&mut self, target: &[u8]) {
                <$ty>::seek(self, target)
            }
            fn seek_for_prev(&mut self, target: &[u8]) {
                <$ty>::seek_for_prev(self, target)
            }
            fn next(&mut self) {
                <$ty>::next(self)
            }
            fn prev(&mut self) {
                <$ty>::prev(self)
            }
            fn key(&self) -> &[u8] {
                <$ty>::key(self)
            }
            fn value(&self) -> &[u8] {
                <$ty>::value(self)
            }
            fn status(&self) -> $crate::error::Result<()> {
                let status: fn(&$ty) -> $crate::error::Result<()> = $status;
                status(self)
            }
        }
    };
}
pub(crate) use internal_iterator_from_inherent;

/// The keys a structure holds, and their order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keys {
    /// Any bytes, bytewise.
    Bytewise,
    /// Any bytes, reverse bytewise (larger keys first).
    ReverseBytewise,
    /// Internal keys (user key, sequence number, kind) in internal-key order.
    Internal,
}

impl Keys {
    /// Every order, for structures that take a comparator.
    pub(crate) const ALL: [Keys; 3] = [Keys::Bytewise, Keys::ReverseBytewise, Keys::Internal];

    /// The order as a comparator.
    pub(crate) fn comparator(self) -> BlockOrder {
        match self {
            Keys::Bytewise => BlockOrder::Plain(KeyOrder::Bytewise),
            Keys::ReverseBytewise => BlockOrder::Plain(KeyOrder::Reverse),
            Keys::Internal => BlockOrder::Internal(KeyOrder::Bytewise),
        }
    }

    fn show(self, key: &[u8]) -> String {
        match (self, ParsedKey::parse(key)) {
            (Keys::Internal, Some(p)) => format!("{p:?}"),
            _ => format!("\"{}\"", printable(key)),
        }
    }
}

/// Something built from a sorted set of key-value pairs that yields an iterator over them.
pub(crate) trait Constructor {
    /// What it builds, with its options (named in failures).
    fn name(&self) -> String;
    /// The keys it holds and their order.
    fn keys(&self) -> Keys;
    /// Builds the structure holding exactly `entries` (sorted in the order of
    /// [`Constructor::keys`], no two keys equal) and returns an unpositioned iterator over
    /// it. `rng` serves choices that do not change what it holds, such as how the entries are
    /// spread over parts.
    fn build(&mut self, entries: &Entries, rng: &mut Rng) -> Box<dyn InternalIterator + '_>;
}

/// The data-set sizes [`check`] goes through, in turn.
const SIZES: [usize; 8] = [0, 1, 2, 3, 10, 50, 200, 1000];

/// Random operations per data set, after the two scans.
const OPERATIONS: usize = 300;

/// Builds `constructor` from `runs` random data sets and checks each iterator against its
/// data set; panics at the first difference.
pub(crate) fn check(constructor: &mut dyn Constructor, runs: u64) {
    let keys = constructor.keys();
    for run in 0..runs {
        let mut rng = Rng::new(0x5eed ^ run.wrapping_mul(0x9e37_79b9));
        let entries = random_entries(&mut rng, keys, SIZES[run as usize % SIZES.len()]);
        let context = format!(
            "{} on data set {run} ({} entries)",
            constructor.name(),
            entries.len()
        );
        let cursor = constructor.build(&entries, &mut rng);
        let mut c = Checker {
            keys,
            entries: &entries,
            cursor,
            pos: None,
            ops: Vec::new(),
            context,
        };
        c.scans();
        for _ in 0..OPERATIONS {
            c.random_operation(&mut rng);
        }
    }
}

/// A random user key: short keys over a small alphabet (so that keys share prefixes and
/// collide), with the edge bytes 0x00 and 0xff, sometimes empty or 300 bytes long.
pub(crate) fn random_key(rng: &mut Rng) -> Vec<u8> {
    const ALPHABET: &[u8] = b"\x00\x01abcde\xfe\xff";
    let len = match rng.below(40) {
        0 => 0,
        1 => 300,
        _ => 1 + rng.below(8),
    };
    (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize])
        .collect()
}

fn random_value(rng: &mut Rng) -> Vec<u8> {
    let len = if rng.one_in(30) { 3000 } else { rng.below(40) };
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

fn random_seq(rng: &mut Rng) -> u64 {
    match rng.below(20) {
        0 => 0,
        1 => MAX_SEQUENCE,
        _ => rng.below(10_000),
    }
}

/// `n` random entries in the order of `keys`. Data sets of 200 entries or more hold one key
/// over 64 KiB.
pub(crate) fn random_entries(rng: &mut Rng, keys: Keys, n: usize) -> Vec<Entry> {
    let mut seen = HashSet::new();
    let mut entries = Vec::with_capacity(n);
    // Internal keys: a few user keys with many versions each.
    let pool: Vec<Vec<u8>> = (0..n / 3 + 1).map(|_| random_key(rng)).collect();
    while entries.len() < n {
        let mut key = match keys {
            Keys::Internal => pool[rng.below(pool.len() as u64) as usize].clone(),
            _ => random_key(rng),
        };
        if entries.is_empty() && n >= 200 {
            key = vec![b'c'; 65537];
        }
        if keys == Keys::Internal {
            let kind = match rng.below(8) {
                0 => ValueKind::SingleDelete,
                1 | 2 => ValueKind::Delete,
                _ => ValueKind::Put,
            };
            let seq = random_seq(rng);
            // One entry per (user key, sequence number), as the engine writes them.
            if !seen.insert((key.clone(), seq)) {
                continue;
            }
            let mut ikey = Vec::with_capacity(key.len() + 8);
            append_internal_key(&mut ikey, &key, seq, kind as u8);
            key = ikey;
        } else if !seen.insert((key.clone(), 0)) {
            continue;
        }
        entries.push((key, random_value(rng)));
    }
    let cmp = keys.comparator();
    entries.sort_by(|a, b| cmp.compare(&a.0, &b.0));
    entries
}

/// One step of a check.
enum Op {
    SeekToFirst,
    SeekToLast,
    Seek(Vec<u8>),
    /// `prepare_seek` then `seek`, as a merge seeks its children.
    PreparedSeek(Vec<u8>),
    SeekForPrev(Vec<u8>),
    Next,
    /// `next_key`, whose answer must be the key the cursor is then on.
    NextKey,
    Prev,
}

struct Checker<'a, 'c> {
    keys: Keys,
    entries: &'a Entries,
    cursor: Box<dyn InternalIterator + 'c>,
    /// Where the iterator should be: an index into `entries`, or `None` when not valid.
    pos: Option<usize>,
    /// The operations so far, as text for failures.
    ops: Vec<String>,
    context: String,
}

impl Checker<'_, '_> {
    /// A full scan forward (steps of both kinds in turn), then one backward.
    fn scans(&mut self) {
        self.apply(Op::SeekToFirst);
        let mut by_key = false;
        while self.pos.is_some() {
            self.apply(if by_key { Op::NextKey } else { Op::Next });
            by_key = !by_key;
        }
        self.apply(Op::SeekToLast);
        while self.pos.is_some() {
            self.apply(Op::Prev);
        }
    }

    fn random_operation(&mut self, rng: &mut Rng) {
        let roll = match rng.below(10) {
            6..=9 if self.pos.is_none() => 2 + rng.below(4),
            r => r,
        };
        match roll {
            0 => self.apply(Op::SeekToFirst),
            1 => self.apply(Op::SeekToLast),
            2 => self.apply(Op::Seek(self.target(rng))),
            3 => self.apply(Op::PreparedSeek(self.target(rng))),
            4 | 5 => self.apply(Op::SeekForPrev(self.target(rng))),
            6 => self.apply(Op::Next),
            7 => self.apply(Op::NextKey),
            _ => self.apply(Op::Prev),
        }
    }

    /// A seek target: a present key, a near miss of one, or a fresh key.
    fn target(&self, rng: &mut Rng) -> Vec<u8> {
        let present = (!self.entries.is_empty() && !rng.one_in(3)).then(|| {
            self.entries[rng.below(self.entries.len() as u64) as usize]
                .0
                .clone()
        });
        if self.keys == Keys::Internal {
            if let Some(k) = present.as_ref().filter(|_| rng.one_in(2)) {
                return k.clone();
            }
            let user = match &present {
                Some(k) => user_key(k).to_vec(),
                None => random_key(rng),
            };
            let kind = [KIND_FOR_SEEK, 0, ValueKind::Put as u8][rng.below(3) as usize];
            let mut t = Vec::new();
            append_internal_key(&mut t, &user, random_seq(rng), kind);
            return t;
        }
        let Some(mut k) = present else {
            return random_key(rng);
        };
        match rng.below(4) {
            0 => {}
            1 => k.push(rng.next_u64() as u8),
            2 => {
                k.pop();
            }
            _ => match k.last_mut() {
                Some(b) if rng.one_in(2) => *b = b.wrapping_add(1),
                Some(b) => *b = b.wrapping_sub(1),
                None => k.push(0),
            },
        }
        k
    }

    /// Applies `op` to the iterator and to the expected position, then compares them.
    fn apply(&mut self, op: Op) {
        let cmp = self.keys.comparator();
        let n = self.entries.len();
        let c = &mut self.cursor;
        self.pos = match &op {
            Op::SeekToFirst => {
                c.seek_to_first();
                (n > 0).then_some(0)
            }
            Op::SeekToLast => {
                c.seek_to_last();
                n.checked_sub(1)
            }
            Op::Seek(t) | Op::PreparedSeek(t) => {
                if let Op::PreparedSeek(_) = op {
                    c.prepare_seek(t);
                }
                c.seek(t);
                let i = self
                    .entries
                    .partition_point(|(k, _)| cmp.compare(k, t).is_lt());
                (i < n).then_some(i)
            }
            Op::SeekForPrev(t) => {
                c.seek_for_prev(t);
                let i = self
                    .entries
                    .partition_point(|(k, _)| cmp.compare(k, t).is_le());
                i.checked_sub(1)
            }
            Op::Next => {
                c.next();
                self.pos.map(|i| i + 1).filter(|&i| i < n)
            }
            Op::NextKey => {
                let got = c.next_key().map(|k| k.to_vec());
                let pos = self.pos.map(|i| i + 1).filter(|&i| i < n);
                let at = c.valid().then(|| c.key().to_vec());
                assert_eq!(
                    got,
                    at,
                    "{}: next_key answered other than the key it is on, after: {}",
                    self.context,
                    self.ops.join(", ")
                );
                pos
            }
            Op::Prev => {
                c.prev();
                self.pos.and_then(|i| i.checked_sub(1))
            }
        };
        self.ops.push(match op {
            Op::SeekToFirst => "seek_to_first".to_string(),
            Op::SeekToLast => "seek_to_last".to_string(),
            Op::Seek(t) => format!("seek {}", self.keys.show(&t)),
            Op::PreparedSeek(t) => format!("prepare_seek and seek {}", self.keys.show(&t)),
            Op::SeekForPrev(t) => format!("seek_for_prev {}", self.keys.show(&t)),
            Op::Next => "next".to_string(),
            Op::NextKey => "next_key".to_string(),
            Op::Prev => "prev".to_string(),
        });
        self.compare();
    }

    fn compare(&self) {
        let c = &self.cursor;
        let got = c.valid().then(|| (c.key(), c.value()));
        let want = self
            .pos
            .map(|i| (self.entries[i].0.as_slice(), self.entries[i].1.as_slice()));
        if got == want && c.status().is_ok() {
            return;
        }
        let show = |e: Option<(&[u8], &[u8])>| match e {
            Some((k, v)) => format!(
                "{} = \"{}\" ({} bytes)",
                self.keys.show(k),
                printable(&v[..v.len().min(16)]),
                v.len()
            ),
            None => "the end".to_string(),
        };
        let recent = self.ops.len().saturating_sub(12);
        panic!(
            "{}: after {} operations, the last ones:\n    {}\n  expected {}\n  got      {}\n  error    {:?}",
            self.context,
            self.ops.len(),
            self.ops[recent..].join("\n    "),
            show(want),
            show(got),
            c.status().err().map(|e| e.to_string()),
        );
    }
}
