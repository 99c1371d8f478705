//! A sharded CLOCK cache (an approximation of LRU) with a capacity in charge units (bytes for
//! the block cache, open files for the table cache).
//!
//! Each shard is a mutex over a hash map and a ring of keys in insertion order. A hit only
//! sets the entry's reference bit (no reordering, so a hit costs one hash lookup); eviction
//! takes keys from the ring's front, gives a referenced entry a second chance (clears the bit
//! and moves it to the back), and evicts the first unreferenced one. Entries are `Arc`s, so an
//! entry evicted while in use stays alive for its users. An entry larger than a shard's
//! capacity is not kept.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

struct Entry<V> {
    value: Arc<V>,
    charge: usize,
    referenced: bool,
}

struct Shard<K, V> {
    map: HashMap<K, Entry<V>>,
    ring: VecDeque<K>,
    usage: usize,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V> Shard<K, V> {
    fn get(&mut self, key: &K) -> Option<Arc<V>> {
        let e = self.map.get_mut(key)?;
        e.referenced = true;
        Some(e.value.clone())
    }

    fn insert(&mut self, key: K, value: Arc<V>, charge: usize) {
        if let Some(old) = self.map.remove(&key) {
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
            match self.map.get_mut(&k) {
                Some(e) if e.referenced => {
                    e.referenced = false;
                    self.ring.push_back(k);
                }
                Some(_) => {
                    if let Some(e) = self.map.remove(&k) {
                        self.usage -= e.charge;
                    }
                }
                None => {}
            }
        }
        self.ring.push_back(key.clone());
        self.map.insert(
            key,
            Entry {
                value,
                charge,
                referenced: false,
            },
        );
        self.usage += charge;
        if self.ring.len() > 2 * self.map.len() + 16 {
            // Drop ring slots of removed keys so the ring stays proportional to the map.
            let map = &self.map;
            self.ring.retain(|k| map.contains_key(k));
        }
    }

    fn remove(&mut self, key: &K) {
        if let Some(e) = self.map.remove(key) {
            self.usage -= e.charge;
        }
    }
}

/// The cache.
pub struct ClockCache<K, V> {
    shards: Vec<Mutex<Shard<K, V>>>,
    hasher: std::collections::hash_map::RandomState,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Hash + Eq + Clone, V> ClockCache<K, V> {
    /// A cache of `capacity` charge units split over up to `shards` shards (fewer when the
    /// capacity is small, so that each shard can hold several entries).
    pub fn new(capacity: usize, shards: usize) -> ClockCache<K, V> {
        let shards = shards.min(capacity / 8).max(1);
        ClockCache {
            shards: (0..shards)
                .map(|_| {
                    Mutex::new(Shard {
                        map: HashMap::new(),
                        ring: VecDeque::new(),
                        usage: 0,
                        capacity: capacity / shards,
                    })
                })
                .collect(),
            hasher: Default::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn shard(&self, key: &K) -> &Mutex<Shard<K, V>> {
        let h = self.hasher.hash_one(key);
        &self.shards[(h % self.shards.len() as u64) as usize]
    }

    /// The entry for `key`, marked as recently used.
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        let found = self.shard(key).lock().get(key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Inserts (or replaces) `key`, evicting entries not used recently to make room.
    pub fn insert(&self, key: K, value: Arc<V>, charge: usize) {
        self.shard(&key).lock().insert(key, value, charge);
    }

    /// Drops `key` if present.
    pub fn remove(&self, key: &K) {
        self.shard(key).lock().remove(key);
    }

    /// Charge units in use.
    pub fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().usage).sum()
    }

    /// (hits, misses) of `get` since creation.
    pub fn hit_counts(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_entries_not_used_since_the_last_pass() {
        let c: ClockCache<u32, String> = ClockCache::new(3, 1);
        for k in 0..3 {
            c.insert(k, Arc::new(k.to_string()), 1);
        }
        assert!(c.get(&0).is_some()); // 0 referenced: survives the next eviction
        c.insert(3, Arc::new("3".into()), 1);
        assert!(c.get(&1).is_none(), "1 was the oldest unreferenced entry");
        assert!(c.get(&0).is_some() && c.get(&2).is_some() && c.get(&3).is_some());
        assert_eq!(c.usage(), 3);
        c.insert(9, Arc::new("too big".into()), 4);
        assert!(c.get(&9).is_none(), "an entry over capacity is not kept");
        c.remove(&0);
        assert_eq!(c.usage(), 2);
        c.insert(2, Arc::new("two".into()), 2);
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
                c.insert(k, Arc::new(i), 1 + rng.below(40) as usize);
            }
            assert!(c.usage() <= 1000);
            // Key 7777 is read all the time: it must stay once cached.
            if c.get(&7777).is_none() {
                assert!(i < 10, "a constantly used entry was evicted at step {i}");
                c.insert(7777, Arc::new(0), 1);
            }
        }
    }
}
