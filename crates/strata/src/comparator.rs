//! User key orders: the [`Comparator`] trait, the built-in orders, and [`KeyOrder`], the form
//! in which the engine holds a column family's order.
//!
//! Invariants every comparator must keep (RocksDB's):
//!
//! - `compare` is a total order, and it is the same order for the life of the data: a
//!   family's comparator name is recorded in the manifest and in each table, and opening the
//!   family with a comparator of another name is refused.
//! - Two keys compare `Equal` only if their bytes are equal. Equality stays byte equality
//!   throughout the engine (bloom filters hash the bytes, a read stops at the first entry
//!   whose bytes match), so an order that calls different byte strings equal would lose
//!   entries.
//! - `find_shortest_separator(start, limit)` leaves `start` with `old start <= start < limit`
//!   when `old start < limit`; `find_short_successor(key)` leaves `key >= old key`. Both are
//!   allowed to do nothing, which is always correct; tables use them to keep their index
//!   small.
//!
//! The engine compares keys in its hottest loops (skiplist, block seeks, merging heap), so
//! [`KeyOrder`] compares the built-in orders inline and only calls through the trait object
//! for an order of the application's own.

use std::cmp::Ordering;
use std::sync::Arc;

/// An order of user keys, as RocksDB's `Comparator`: set per column family with
/// [`crate::Options::comparator`] / [`crate::CfOptions::comparator`].
///
/// Keys compare `Equal` only when their bytes are equal (see the module notes). The name
/// identifies the order on disk: a database created with one comparator must be opened with
/// one of the same name, and two comparators with one name must order keys the same way.
/// The names of the built-in orders ([`BytewiseComparator`], [`ReverseBytewiseComparator`])
/// are reserved for them.
///
/// # Examples
///
/// ```
/// use std::cmp::Ordering;
/// use std::sync::Arc;
/// use strata::{Comparator, Db, Options, ReadOptions};
///
/// /// Decimal numbers without leading zeros in numeric order: shorter first, then by bytes.
/// /// Keys compare equal only when their bytes are equal, as the trait requires.
/// struct Numeric;
///
/// impl Comparator for Numeric {
///     fn name(&self) -> &str {
///         "example.Numeric"
///     }
///
///     fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
///         a.len().cmp(&b.len()).then_with(|| a.cmp(b))
///     }
/// }
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.comparator = Arc::new(Numeric);
/// let db = Db::open(dir.path(), options)?;
/// for key in ["100", "9", "10"] {
///     db.put(key, "")?;
/// }
/// let mut iter = db.iter(&ReadOptions::default());
/// iter.seek_to_first();
/// let mut keys = Vec::new();
/// while iter.valid() {
///     keys.push(String::from_utf8(iter.key().to_vec())?);
///     iter.next();
/// }
/// assert_eq!(keys, ["9", "10", "100"]);
/// # drop(iter);
/// # db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Comparator: Send + Sync {
    /// The order's name, recorded in the manifest and in tables.
    fn name(&self) -> &str;

    /// Orders `a` and `b`.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// If `start < limit`, may change `start` to a shorter key in `[start, limit)`. Tables
    /// call it to make the separators of their index. Doing nothing is correct.
    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let _ = (start, limit);
    }

    /// May change `key` to a shorter key at or after it. Doing nothing is correct.
    fn find_short_successor(&self, key: &mut Vec<u8>) {
        let _ = key;
    }
}

impl std::fmt::Debug for dyn Comparator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Comparator({:?})", self.name())
    }
}

/// The name of the bytewise order, RocksDB's (and LevelDB's) default.
pub const BYTEWISE_NAME: &str = "leveldb.BytewiseComparator";

/// The name of the reverse bytewise order, RocksDB's.
pub const REVERSE_BYTEWISE_NAME: &str = "rocksdb.ReverseBytewiseComparator";

/// Keys ordered by their bytes, as unsigned integers, a shorter key before the longer keys
/// it is a prefix of. The default.
#[derive(Debug, Clone, Copy, Default)]
pub struct BytewiseComparator;

/// Keys in the reverse of [`BytewiseComparator`]'s order.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, Options, ReverseBytewiseComparator};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = Options::default();
/// options.create_if_missing = true;
/// options.comparator = Arc::new(ReverseBytewiseComparator); // newest-first time stamps, say
/// let db = Db::open(dir.path(), options)?;
/// for key in ["2024", "2026", "2025"] {
///     db.put(key, "")?;
/// }
/// let keys: Vec<Vec<u8>> = db
///     .range::<&[u8], _>(..)
///     .map(|entry| entry.map(|(key, _)| key))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(keys, [b"2026".to_vec(), b"2025".to_vec(), b"2024".to_vec()]);
/// db.close()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ReverseBytewiseComparator;

impl Comparator for BytewiseComparator {
    fn name(&self) -> &str {
        BYTEWISE_NAME
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        bytewise_compare(a, b)
    }

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        bytewise_separator(start, limit);
    }

    fn find_short_successor(&self, key: &mut Vec<u8>) {
        bytewise_successor(key);
    }
}

impl Comparator for ReverseBytewiseComparator {
    fn name(&self) -> &str {
        REVERSE_BYTEWISE_NAME
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        bytewise_compare(b, a)
    }

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        reverse_separator(start, limit);
    }
}

/// The bytewise order of two keys, as `a.cmp(b)`: the first 8 bytes of each compared as one
/// big-endian word (a key shorter than 8 bytes padded with zeros), the rest (only when those
/// are equal) by memcmp. Keys mostly differ in their first 8 bytes (db_bench's keys begin with
/// their number, big-endian; a table's index holds separators shortened to a few bytes), and
/// a call into memcmp costs several times the word compare: this is the comparison of every
/// memtable and block search.
///
/// Padding keeps the order: where the words first differ, either both keys have a byte there
/// (the order of those bytes is the keys' order) or only one does, a byte above zero, and the
/// other key ended before it (a prefix: the shorter first). Equal words with a key shorter
/// than 8 bytes mean that key is a prefix of the other (or equal to it): the shorter first.
#[inline(always)]
pub fn bytewise_compare(a: &[u8], b: &[u8]) -> Ordering {
    let (x, y) = (first_word(a), first_word(b));
    if x != y {
        return x.cmp(&y);
    }
    if a.len() < 8 || b.len() < 8 {
        return a.len().cmp(&b.len());
    }
    a[8..].cmp(&b[8..])
}

/// The first 8 bytes of `key` as a big-endian word, zeros after the end of a shorter key:
/// loaded whole, or 4, 2 and 1 bytes at a time (no loop, no call into memcpy). Two keys
/// whose words differ are in the order of their words (see [`bytewise_compare`]).
#[inline(always)]
pub fn first_word(key: &[u8]) -> u64 {
    if let Some(word) = key.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    let mut word = 0u64;
    let mut rest = key;
    let mut shift = 64;
    if let Some((four, tail)) = rest.split_first_chunk::<4>() {
        shift -= 32;
        word |= u64::from(u32::from_be_bytes(*four)) << shift;
        rest = tail;
    }
    if let Some((two, tail)) = rest.split_first_chunk::<2>() {
        shift -= 16;
        word |= u64::from(u16::from_be_bytes(*two)) << shift;
        rest = tail;
    }
    if let Some(&one) = rest.first() {
        shift -= 8;
        word |= u64::from(one) << shift;
    }
    word
}

/// RocksDB's bytewise separator: after the common prefix, increment the first differing byte
/// of `start` and cut there. That stays below `limit` when the incremented byte is still below
/// `limit`'s, or when `limit` goes on past that byte (the result is then a proper prefix of
/// it); otherwise the first byte after it that is not 0xff is incremented instead, and the
/// key cut there. (LevelDB's rule increments only below `limit`'s byte: for keys that differ
/// by one in their last differing byte, most neighbours in a table of dense keys, it keeps
/// `start` whole.)
fn bytewise_separator(start: &mut Vec<u8>, limit: &[u8]) {
    let shared = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
    if shared >= start.len().min(limit.len()) {
        return; // one is a prefix of the other: no shorter key in between
    }
    let (byte, limit_byte) = (start[shared], limit[shared]);
    if byte >= limit_byte {
        return; // `start` is not below `limit`
    }
    if byte + 1 < limit_byte || shared + 1 < limit.len() {
        start[shared] = byte + 1;
        start.truncate(shared + 1);
        return;
    }
    if let Some(i) = (shared + 1..start.len()).find(|&i| start[i] < 0xff) {
        start[i] += 1;
        start.truncate(i + 1);
    }
}

/// LevelDB's bytewise successor: the first byte that is not 0xff, incremented, ends the key.
fn bytewise_successor(key: &mut Vec<u8>) {
    if let Some(i) = key.iter().position(|&b| b != 0xff) {
        key[i] += 1;
        key.truncate(i + 1);
    }
}

/// The separator in reverse bytewise order: `start` before `limit` means bytewise above it,
/// so at the first differing byte `start`'s is the larger. `start` cut right after that byte
/// is still bytewise above `limit` (before it in reverse order), and as a prefix of `start` it
/// is bytewise at or below `start` (at or after it in reverse order).
fn reverse_separator(start: &mut Vec<u8>, limit: &[u8]) {
    let shared = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
    if shared >= start.len().min(limit.len()) {
        return;
    }
    // In reverse order start < limit means start > limit bytewise: start[shared] is larger.
    if start[shared] > limit[shared] && shared + 1 < start.len() {
        start.truncate(shared + 1);
    }
}

/// A column family's key order as the engine holds it: the built-in orders as plain variants
/// (compared inline, no call through a pointer), any other through its trait object.
#[derive(Clone, Default)]
pub enum KeyOrder {
    /// [`BytewiseComparator`].
    #[default]
    Bytewise,
    /// [`ReverseBytewiseComparator`].
    Reverse,
    /// An order of the application's.
    Custom(Arc<dyn Comparator>),
}

impl std::fmt::Debug for KeyOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl KeyOrder {
    /// The order of `comparator`; the built-in names map to the built-in variants.
    pub fn new(comparator: &Arc<dyn Comparator>) -> KeyOrder {
        match comparator.name() {
            BYTEWISE_NAME => KeyOrder::Bytewise,
            REVERSE_BYTEWISE_NAME => KeyOrder::Reverse,
            _ => KeyOrder::Custom(comparator.clone()),
        }
    }

    /// The built-in order named `name`, if there is one.
    pub fn builtin(name: &str) -> Option<KeyOrder> {
        match name {
            BYTEWISE_NAME => Some(KeyOrder::Bytewise),
            REVERSE_BYTEWISE_NAME => Some(KeyOrder::Reverse),
            _ => None,
        }
    }

    /// The order's name.
    pub fn name(&self) -> &str {
        match self {
            KeyOrder::Bytewise => BYTEWISE_NAME,
            KeyOrder::Reverse => REVERSE_BYTEWISE_NAME,
            KeyOrder::Custom(c) => c.name(),
        }
    }

    /// True for the bytewise order.
    #[inline]
    pub fn is_bytewise(&self) -> bool {
        matches!(self, KeyOrder::Bytewise)
    }

    /// Orders two user keys. Always inlined: the callers are the merging heap's and the
    /// database iterator's per-entry steps, where a call costs as much as the compare.
    #[inline(always)]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            KeyOrder::Bytewise => bytewise_compare(a, b),
            KeyOrder::Reverse => bytewise_compare(b, a),
            KeyOrder::Custom(c) => c.compare(a, b),
        }
    }

    /// `a < b` in this order.
    #[inline]
    pub fn lt(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare(a, b) == Ordering::Less
    }

    /// `a <= b` in this order.
    #[inline]
    pub fn le(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare(a, b) != Ordering::Greater
    }

    /// The smaller of two keys in this order (`a` if equal).
    pub fn min<'a>(&self, a: &'a [u8], b: &'a [u8]) -> &'a [u8] {
        if self.le(a, b) {
            a
        } else {
            b
        }
    }

    /// The larger of two keys in this order (`a` if equal).
    pub fn max<'a>(&self, a: &'a [u8], b: &'a [u8]) -> &'a [u8] {
        if self.le(b, a) {
            a
        } else {
            b
        }
    }

    /// See [`Comparator::find_shortest_separator`].
    pub fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        match self {
            KeyOrder::Bytewise => bytewise_separator(start, limit),
            KeyOrder::Reverse => reverse_separator(start, limit),
            KeyOrder::Custom(c) => c.find_shortest_separator(start, limit),
        }
    }

    /// See [`Comparator::find_short_successor`].
    pub fn find_short_successor(&self, key: &mut Vec<u8>) {
        match self {
            KeyOrder::Bytewise => bytewise_successor(key),
            KeyOrder::Reverse => {}
            KeyOrder::Custom(c) => c.find_short_successor(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word compare agrees with memcmp order: on the cases where it could go wrong
    /// (shorter than a word, padded, equal first words, a prefix, zero bytes after a
    /// prefix, bytes with the top bit set) and on
    /// random keys of random lengths over a small alphabet (so that prefixes are common).
    #[test]
    fn bytewise_compare_is_memcmp_order() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"", b""),
            (b"", b"a"),
            (b"abc", b"abd"),
            (b"abcdefgh", b"abcdefgh"),
            (b"abcdefgh", b"abcdefghi"),
            (b"abcdefgh1", b"abcdefgh2"),
            (b"abcdefgh", b"abcdefgi"),
            (b"abcdefg", b"abcdefgh"),
            (b"\x80\0\0\0\0\0\0\0", b"\x7f\xff\xff\xff\xff\xff\xff\xff"),
            (
                b"\xff\xff\xff\xff\xff\xff\xff\xff\0",
                b"\xff\xff\xff\xff\xff\xff\xff\xff",
            ),
            (b"\0\0\0\0\0\0\0\x01", b"\x01"),
            // Shorter than a word: padding with zeros must not make a prefix equal.
            (b"a", b"a\0"),
            (b"", b"\0"),
            (b"abc\0\0\0\0", b"abc\0\0\0\0\0"),
            (b"abcdefg", b"abcdefg\0\0"),
            (b"\x01\x02\x03\x04\x05\x06", b"\x01\x02\x03\x04\x05\x07"),
            (b"\x01\x02\x03", b"\x01\x02\x03\x00\x01"),
        ];
        for (a, b) in cases {
            assert_eq!(bytewise_compare(a, b), a.cmp(b), "{a:?} {b:?}");
            assert_eq!(bytewise_compare(b, a), b.cmp(a), "{b:?} {a:?}");
        }
        let mut rng = crate::util::Rng::new(7);
        let key = |rng: &mut crate::util::Rng| -> Vec<u8> {
            let len = rng.below(20) as usize;
            (0..len)
                .map(|_| [0u8, 1, 0x7f, 0x80, 0xff][rng.below(5) as usize])
                .collect()
        };
        for _ in 0..20_000 {
            let (a, b) = (key(&mut rng), key(&mut rng));
            assert_eq!(bytewise_compare(&a, &b), a.cmp(&b), "{a:?} {b:?}");
        }
    }

    /// Fixed-width big-endian u64 keys ordered as numbers, through the trait object path.
    struct Numbers;

    impl Comparator for Numbers {
        fn name(&self) -> &str {
            "test.u64"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
            a.cmp(b)
        }
    }

    fn orders() -> Vec<KeyOrder> {
        vec![
            KeyOrder::new(&(Arc::new(BytewiseComparator) as Arc<dyn Comparator>)),
            KeyOrder::new(&(Arc::new(ReverseBytewiseComparator) as Arc<dyn Comparator>)),
            KeyOrder::new(&(Arc::new(Numbers) as Arc<dyn Comparator>)),
        ]
    }

    #[test]
    fn built_in_names_map_to_the_inline_orders() {
        let o = orders();
        assert!(matches!(o[0], KeyOrder::Bytewise));
        assert!(matches!(o[1], KeyOrder::Reverse));
        assert!(matches!(o[2], KeyOrder::Custom(_)));
        assert_eq!(o[0].name(), "leveldb.BytewiseComparator");
        assert_eq!(o[1].name(), "rocksdb.ReverseBytewiseComparator");
        assert_eq!(o[2].name(), "test.u64");
        assert!(KeyOrder::builtin("test.u64").is_none());
        assert_eq!(
            KeyOrder::builtin(REVERSE_BYTEWISE_NAME).map(|o| o.name().to_string()),
            Some(REVERSE_BYTEWISE_NAME.to_string())
        );
    }

    /// (a, b, bytewise order of a to b): the reverse order must give the opposite, the trait
    /// objects the same as their inline variants.
    #[test]
    fn compare_cases() {
        let cases: &[(&[u8], &[u8], Ordering)] = &[
            (b"", b"", Ordering::Equal),
            (b"", b"a", Ordering::Less),
            (b"a", b"ab", Ordering::Less),
            (b"ab", b"b", Ordering::Less),
            (b"\xff", b"\x00", Ordering::Greater),
            (b"abc", b"abc", Ordering::Equal),
            (b"b", b"abc", Ordering::Greater),
        ];
        let bytewise: Arc<dyn Comparator> = Arc::new(BytewiseComparator);
        let reverse: Arc<dyn Comparator> = Arc::new(ReverseBytewiseComparator);
        for &(a, b, want) in cases {
            assert_eq!(KeyOrder::Bytewise.compare(a, b), want, "{a:?} {b:?}");
            assert_eq!(bytewise.compare(a, b), want, "{a:?} {b:?}");
            assert_eq!(
                KeyOrder::Reverse.compare(a, b),
                want.reverse(),
                "{a:?} {b:?}"
            );
            assert_eq!(reverse.compare(a, b), want.reverse(), "{a:?} {b:?}");
        }
        let o = KeyOrder::Reverse;
        assert_eq!(o.min(b"a", b"b"), b"b");
        assert_eq!(o.max(b"a", b"b"), b"a");
        assert!(o.lt(b"b", b"a") && o.le(b"a", b"a") && !o.lt(b"a", b"a"));
    }

    /// (order, start, limit, separator).
    type SeparatorCase = (KeyOrder, &'static [u8], &'static [u8], &'static [u8]);

    /// Each result is also checked to lie in `[start, limit)`.
    #[test]
    fn separator_cases() {
        let cases: &[SeparatorCase] = &[
            (KeyOrder::Bytewise, b"abcd", b"abzz", b"abd"),
            (KeyOrder::Bytewise, b"abc", b"abd", b"abc"),
            (KeyOrder::Bytewise, b"ab", b"abcd", b"ab"),
            (KeyOrder::Bytewise, b"abc", b"ab", b"abc"),
            (KeyOrder::Bytewise, b"a\xffz", b"b", b"a\xff{"),
            (KeyOrder::Bytewise, b"", b"a", b""),
            // The differing bytes one apart: cut after the incremented byte when `limit` goes
            // on past it (dense keys, as a counter's big-endian bytes make)...
            (
                KeyOrder::Bytewise,
                b"\x00\x05\x41padding",
                b"\x00\x05\x42padding",
                b"\x00\x05\x42",
            ),
            (KeyOrder::Bytewise, b"abc1xx", b"abc2zz", b"abc2"),
            // ...else at the first byte after them that can be incremented.
            (KeyOrder::Bytewise, b"abc1xx", b"abc2", b"abc1y"),
            (KeyOrder::Bytewise, b"abc1\xffx", b"abc2", b"abc1\xffy"),
            (KeyOrder::Bytewise, b"abc1\xff", b"abc2", b"abc1\xff"),
            (KeyOrder::Reverse, b"abzz", b"abcd", b"abz"),
            (KeyOrder::Reverse, b"abd", b"abc", b"abd"),
            (KeyOrder::Reverse, b"abcd", b"ab", b"abcd"),
            (KeyOrder::Reverse, b"b", b"a", b"b"),
        ];
        for (order, start, limit, want) in cases {
            let mut s = start.to_vec();
            order.find_shortest_separator(&mut s, limit);
            assert_eq!(&s[..], *want, "{order:?} {start:?} {limit:?}");
            assert!(order.le(start, &s), "{order:?}: {s:?} before {start:?}");
            if order.lt(start, limit) {
                assert!(order.lt(&s, limit), "{order:?}: {s:?} not before {limit:?}");
            }
        }
    }

    /// (key, successor): bytewise cuts after the first byte it can increment; reverse and
    /// orders that do not override it keep the key.
    #[test]
    fn successor_cases() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"abc", b"b"),
            (b"\xff\xffa", b"\xff\xffb"),
            (b"\xff\xff", b"\xff\xff"),
            (b"", b""),
        ];
        for &(key, want) in cases {
            let mut k = key.to_vec();
            KeyOrder::Bytewise.find_short_successor(&mut k);
            assert_eq!(k, want, "{key:?}");
            assert!(KeyOrder::Bytewise.le(key, &k));
            for order in [KeyOrder::Reverse, orders().remove(2)] {
                let mut k = key.to_vec();
                order.find_short_successor(&mut k);
                assert_eq!(k, key);
            }
        }
    }
}
