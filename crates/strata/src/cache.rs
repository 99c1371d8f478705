//! A sharded CLOCK cache (an approximation of LRU) with a capacity in charge units (bytes for
//! the block cache, open files for the table cache).
//!
//! Each shard is a mutex over a hash map and a ring of keys in insertion order. A hit only
//! sets the entry's reference bit (no reordering, so a hit costs one hash lookup); eviction
//! takes keys from the ring's front, gives a referenced entry a second chance (clears the bit
//! and moves it to the back), and evicts the first unreferenced one. A value is cheap to
//! clone (an `Arc`, or an enum of them): a hit hands out a clone, so an entry evicted while
//! in use stays alive for its users, and the value is reached with one reference count, not
//! through a second allocation around it. An entry larger than a shard's capacity is not
//! kept.
//!
//! Keys are the engine's own numbers (file numbers, block offsets), never chosen by a user, so
//! they are hashed with a multiply-rotate hash instead of SipHash, once for the shard and once
//! in the shard's map; the hit and miss counts live in the shards, under the lock a lookup
//! takes anyway, so that threads reading different shards share no cache line.
//!
//! An entry's charge is what its inserter says, plus, for a cache made with
//! [`ClockCache::charging_entries`], a fixed number of bytes for what every entry holds
//! beyond its value's bytes (the map's slot, the ring's key, the value's own headers), as
//! RocksDB charges its handles' metadata: a block cache of 1 GiB of 4 KiB blocks otherwise
//! held about 8% more than its capacity in these.
//!
//! An entry is a slot aligned to a cache line, its key beside its value, its charge and its
//! reference bit, and the map a set of such slots found by their key: a hit reads one line
//! of the map beyond its control bytes. A map of `(key, entry)` pairs is aligned to 16
//! bytes only, so its 64-byte pairs mostly crossed two lines, and a hit on an entry not read
//! for a while waited on both (random hits among 40,000 cached blocks: 78-109 ns a lookup
//! with pairs, 47-50 ns with slots).
//!
//! A value may name the memory its reader touches first beyond the value itself
//! ([`CacheValue::first_read`]: a block's restart array, in a buffer of its own). The entry
//! keeps that address, and a hit asks the CPU for it before taking its reference, so that the
//! two cache misses of a cold hit (the value's reference count, the bytes it points to)
//! overlap instead of following one another. The address is only a hint for a prefetch,
//! valid while the entry holds the value; nothing reads through it.

use std::borrow::Borrow;
use std::cell::Cell;
use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};

use parking_lot::Mutex;

/// One entry of a shard's map: the key and what the cache keeps for it, on one cache line
/// when they fit in 64 bytes (module doc).
#[repr(align(64))]
struct Slot<K, V> {
    key: K,
    value: V,
    charge: usize,
    /// Set by a hit, cleared by eviction's pass (a `Cell`: the map hands out shared
    /// references only, and the shard's lock is held).
    referenced: Cell<bool>,
    /// [`CacheValue::first_read`] of the value, as an address (0: none): an integer, not a
    /// pointer, so that the entry stays `Send`, and since it is only ever prefetched.
    first_read: usize,
}

/// Slots are found, compared and hashed by their key alone.
impl<K, V> Borrow<K> for Slot<K, V> {
    fn borrow(&self) -> &K {
        &self.key
    }
}

impl<K: PartialEq, V> PartialEq for Slot<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<K: Eq, V> Eq for Slot<K, V> {}

impl<K: Hash, V> Hash for Slot<K, V> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

/// What a cache holds: cheap to clone, and possibly pointing at memory read right after a
/// hit.
pub trait CacheValue: Clone {
    /// The first bytes a reader of the value touches outside the value's own allocation;
    /// `None` when there are none worth asking for early.
    fn first_read(&self) -> Option<*const u8> {
        None
    }
}

impl<T: ?Sized> CacheValue for std::sync::Arc<T> {}

/// A fast hash for the engine's integer keys (see the module doc for why not SipHash).
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // A final mix, so that both the low bits (the map's bucket) and the high bits (its
        // tag and the shard) depend on every input bit.
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^ (x >> 33)
    }
}

type IntHash = BuildHasherDefault<IntHasher>;

struct Shard<K, V> {
    map: HashSet<Slot<K, V>, IntHash>,
    ring: VecDeque<K>,
    usage: usize,
    capacity: usize,
    /// Charged for each entry on top of its own charge ([`ClockCache::charging_entries`]).
    entry_charge: usize,
    hits: u64,
    misses: u64,
}

impl<K: Hash + Eq + Clone, V: CacheValue> Shard<K, V> {
    fn get(&mut self, key: &K) -> Option<V> {
        let Some(e) = self.map.get(key) else {
            self.misses += 1;
            return None;
        };
        if e.first_read != 0 {
            crate::util::prefetch_address(e.first_read as *const u8);
        }
        e.referenced.set(true);
        self.hits += 1;
        Some(e.value.clone())
    }

    fn insert(&mut self, key: K, value: V, charge: usize) {
        let charge = charge.saturating_add(self.entry_charge);
        if let Some(old) = self.map.take(&key) {
            self.usage -= old.charge;
            // Its ring slot stays; eviction skips keys no longer in the map.
        }
        if charge > self.capacity {
            return;
        }
        while self.usage + charge > self.capacity {
            let Some(k) = self.ring.pop_front() else {
                break;
            };
            match self.map.get(&k) {
                Some(e) if e.referenced.get() => {
                    e.referenced.set(false);
                    self.ring.push_back(k);
                }
                Some(_) => {
                    if let Some(e) = self.map.take(&k) {
                        self.usage -= e.charge;
                    }
                }
                None => {}
            }
        }
        self.ring.push_back(key.clone());
        let first_read = value.first_read().map_or(0, |p| p as usize);
        self.map.insert(Slot {
            key,
            value,
            charge,
            referenced: Cell::new(false),
            first_read,
        });
        self.usage += charge;
        if self.ring.len() > 2 * self.map.len() + 16 {
            // Drop ring slots of removed keys so the ring stays proportional to the map.
            // A slot's `Cell` is its reference bit, which neither its hash nor its equality
            // reads.
            #[allow(clippy::mutable_key_type)]
            let map = &self.map;
            self.ring.retain(|k| map.contains(k));
        }
    }

    fn remove(&mut self, key: &K) -> Option<V> {
        let e = self.map.take(key)?;
        self.usage -= e.charge;
        Some(e.value)
    }
}

/// The cache.
pub struct ClockCache<K, V> {
    shards: Vec<Mutex<Shard<K, V>>>,
}

impl<K: Hash + Eq + Clone, V: CacheValue> ClockCache<K, V> {
    /// A cache of `capacity` charge units split over up to `shards` shards (fewer when the
    /// capacity is small, so that each shard can hold several entries).
    pub fn new(capacity: usize, shards: usize) -> ClockCache<K, V> {
        let shards = shards.min(capacity / 8).max(1);
        ClockCache {
            shards: (0..shards)
                .map(|_| {
                    Mutex::new(Shard {
                        map: HashSet::default(),
                        ring: VecDeque::new(),
                        usage: 0,
                        capacity: capacity / shards,
                        entry_charge: 0,
                        hits: 0,
                        misses: 0,
                    })
                })
                .collect(),
        }
    }

    /// The cache, charging `bytes` more for each entry than its inserter says: a byte-sized
    /// cache's estimate of what an entry holds beyond its value's bytes (see
    /// [`ClockCache::entry_metadata_bytes`]).
    pub fn charging_entries(self, bytes: usize) -> ClockCache<K, V> {
        for shard in &self.shards {
            shard.lock().entry_charge = bytes;
        }
        self
    }

    /// Bytes the cache itself holds for each entry: its slot in the shard's map (at the
    /// map's 7/8 load, with its control byte) and its key in the ring (which grows to twice
    /// the map's entries before it is trimmed).
    pub const fn entry_metadata_bytes() -> usize {
        (std::mem::size_of::<Slot<K, V>>() + 1) * 8 / 7 + 2 * std::mem::size_of::<K>()
    }

    fn shard(&self, key: &K) -> &Mutex<Shard<K, V>> {
        let h = IntHash::default().hash_one(key);
        &self.shards[((h >> 32) % self.shards.len() as u64) as usize]
    }

    /// The entry for `key`, marked as recently used.
    pub fn get(&self, key: &K) -> Option<V> {
        self.shard(key).lock().get(key)
    }

    /// Inserts (or replaces) `key`, evicting entries not used recently to make room.
    pub fn insert(&self, key: K, value: V, charge: usize) {
        self.shard(&key).lock().insert(key, value, charge);
    }

    /// True when `key` is cached and was read since it was inserted or since eviction last
    /// gave it its second chance; like `contains`, neither marks it used nor counts a lookup.
    pub fn recently_used(&self, key: &K) -> bool {
        let shard = self.shard(key).lock();
        shard.map.get(key).is_some_and(|e| e.referenced.get())
    }

    /// True when `key` is cached; unlike `get`, neither marks it used nor counts a lookup.
    pub fn contains(&self, key: &K) -> bool {
        self.shard(key).lock().map.contains(key)
    }

    /// Drops `key` if present; returns whether it was. The value is dropped (its memory
    /// freed, if no reader holds it) after the shard's lock is released.
    pub fn remove(&self, key: &K) -> bool {
        let removed = self.shard(key).lock().remove(key);
        removed.is_some()
    }

    /// Drops every entry whose key `keep` refuses; returns how many. Looks at every entry of
    /// every shard (each under its lock in turn): for rare, wholesale removals.
    pub fn retain(&self, mut keep: impl FnMut(&K) -> bool) -> usize {
        let mut removed = 0;
        for shard in &self.shards {
            let mut s = shard.lock();
            let (before, mut freed) = (s.map.len(), 0);
            s.map.retain(|e| {
                let kept = keep(&e.key);
                if !kept {
                    freed += e.charge;
                }
                kept
            });
            s.usage -= freed;
            removed += before - s.map.len();
            // The ring's slots of removed keys go as `insert` trims it.
        }
        removed
    }

    /// Charge units in use.
    pub fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().usage).sum()
    }

    /// (hits, misses) of `get` since creation.
    pub fn hit_counts(&self) -> (u64, u64) {
        self.shards.iter().fold((0, 0), |(hits, misses), s| {
            let s = s.lock();
            (hits + s.hits, misses + s.misses)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl CacheValue for String {}
    impl CacheValue for u64 {}

    /// A block cache's slot is one cache line, aligned to one (module doc): a key and a
    /// block value that outgrew 64 bytes would make every slot two lines again.
    #[test]
    fn a_block_cache_slot_is_one_cache_line() {
        use crate::table::reader::CachedBlock;
        assert_eq!(std::mem::size_of::<Slot<(u64, u64), CachedBlock>>(), 64);
        assert_eq!(std::mem::align_of::<Slot<(u64, u64), CachedBlock>>(), 64);
    }

    /// A cache charging its entries counts each at its charge plus the entry charge, in
    /// usage and against the capacity, and gives both back when the entry goes.
    #[test]
    fn entries_are_charged_their_metadata_too() {
        let cache: ClockCache<u64, String> = ClockCache::new(100, 1).charging_entries(15);
        for k in 0..3 {
            cache.insert(k, format!("v{k}"), 10);
        }
        assert_eq!(cache.usage(), 75);
        // A fourth entry takes the usage to 100, a fifth evicts one.
        cache.insert(3, "v3".into(), 10);
        assert_eq!(cache.usage(), 100);
        cache.insert(4, "v4".into(), 10);
        assert_eq!(cache.usage(), 100);
        assert_eq!((0..5).filter(|k| cache.contains(k)).count(), 4);
        assert!(cache.remove(&4));
        assert_eq!(cache.usage(), 75);
        // An entry whose charge with its metadata exceeds the capacity is not kept.
        cache.insert(9, "big".into(), 90);
        assert!(!cache.contains(&9));
        assert!(ClockCache::<u64, String>::entry_metadata_bytes() > 0);
    }

    /// `retain` and `remove` drop what they say, across shards, and give back the charge;
    /// the cache goes on inserting and evicting after them.
    #[test]
    fn retain_and_remove_drop_entries_and_their_charge() {
        let c: ClockCache<(u64, u64), u64> = ClockCache::new(1000, 4);
        for file in 1..=3 {
            for offset in 0..50 {
                c.insert((file, offset), offset, 2);
            }
        }
        assert_eq!(c.usage(), 300);
        assert_eq!(c.retain(|&(file, _)| file != 2), 50);
        assert_eq!(c.usage(), 200);
        assert!(c.get(&(2, 7)).is_none() && c.get(&(1, 7)).is_some());
        assert!(c.remove(&(3, 0)) && !c.remove(&(3, 0)) && !c.remove(&(2, 1)));
        assert_eq!(c.usage(), 198);
        assert_eq!(c.retain(|_| true), 0);
        for offset in 0..500 {
            c.insert((4, offset), offset, 2);
        }
        assert!(c.usage() <= 1000);
    }

    #[test]
    fn evicts_entries_not_used_since_the_last_pass() {
        let c: ClockCache<u32, String> = ClockCache::new(3, 1);
        for k in 0..3 {
            c.insert(k, k.to_string(), 1);
        }
        assert!(!c.recently_used(&0), "inserted, not read yet");
        assert!(c.get(&0).is_some()); // 0 referenced: survives the next eviction
        assert!(c.recently_used(&0) && !c.recently_used(&1));
        c.insert(3, "3".into(), 1);
        assert!(c.get(&1).is_none(), "1 was the oldest unreferenced entry");
        assert!(c.get(&0).is_some() && c.get(&2).is_some() && c.get(&3).is_some());
        assert_eq!(c.usage(), 3);
        c.insert(9, "too big".into(), 4);
        assert!(c.get(&9).is_none(), "an entry over capacity is not kept");
        c.remove(&0);
        assert_eq!(c.usage(), 2);
        c.insert(2, "two".into(), 2);
        assert_eq!(c.usage(), 3);
        assert_eq!(c.get(&2).unwrap().as_str(), "two");
        let (hits, misses) = c.hit_counts();
        assert!(hits >= 5 && misses >= 2);
    }

    #[test]
    fn usage_never_exceeds_capacity_and_hot_keys_stay() {
        let c: ClockCache<u64, u64> = ClockCache::new(1000, 4);
        let mut rng = crate::util::Rng::new(1);
        for i in 0..20_000 {
            let k = rng.below(500);
            if c.get(&k).is_none() {
                c.insert(k, i, 1 + rng.below(40) as usize);
            }
            assert!(c.usage() <= 1000);
            // Key 7777 is read all the time: it must stay once cached.
            if c.get(&7777).is_none() {
                assert!(i < 10, "a constantly used entry was evicted at step {i}");
                c.insert(7777, 0, 1);
            }
        }
    }

    #[test]
    fn block_keys_spread_evenly_over_shards_and_buckets() {
        // Block keys are (file number, offset) with offsets a few KiB apart: regular inputs
        // that a weak hash would pile into a few shards or buckets.
        let counts = |bucket: fn(u64) -> usize, n: usize| {
            let mut counts = vec![0usize; n];
            for file in 1..5u64 {
                for block in 0..4096u64 {
                    counts[bucket(IntHash::default().hash_one((file, block * 4096)))] += 1;
                }
            }
            counts
        };
        let even = |counts: Vec<usize>| {
            let mean = counts.iter().sum::<usize>() / counts.len();
            counts.iter().all(|&c| c > mean / 2 && c < mean * 2)
        };
        assert!(even(counts(|h| ((h >> 32) % 16) as usize, 16)), "shards");
        assert!(even(counts(|h| (h % 256) as usize, 256)), "low bits");
        assert!(even(counts(|h| (h >> 57) as usize, 128)), "top 7 bits");
    }
}
