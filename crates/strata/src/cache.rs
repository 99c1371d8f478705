//! A sharded LRU cache with a capacity in charge units (bytes for the block cache, open files
//! for the table cache).
//!
//! Each shard is a mutex over a hash map and a recency order (`BTreeMap` from a per-shard
//! tick to the key). Entries are `Arc`s, so an entry evicted while in use stays alive for its
//! users. An entry larger than a shard's capacity is not kept.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

struct Shard<K, V> {
    map: HashMap<K, (Arc<V>, u64, usize)>,
    order: BTreeMap<u64, K>,
    usage: usize,
    capacity: usize,
    tick: u64,
}

impl<K: Hash + Eq + Clone, V> Shard<K, V> {
    fn touch(&mut self, key: &K) -> Option<Arc<V>> {
        self.tick += 1;
        let tick = self.tick;
        let (value, old_tick, _) = self.map.get_mut(key)?;
        let old = std::mem::replace(old_tick, tick);
        let value = value.clone();
        if let Some(k) = self.order.remove(&old) {
            self.order.insert(tick, k);
        }
        Some(value)
    }

    fn insert(&mut self, key: K, value: Arc<V>, charge: usize) {
        if let Some((_, old_tick, old_charge)) = self.map.remove(&key) {
            self.order.remove(&old_tick);
            self.usage -= old_charge;
        }
        if charge > self.capacity {
            return;
        }
        while self.usage + charge > self.capacity {
            let Some((_, victim)) = self.order.pop_first() else {
                break;
            };
            if let Some((_, _, c)) = self.map.remove(&victim) {
                self.usage -= c;
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, key.clone());
        self.map.insert(key, (value, self.tick, charge));
        self.usage += charge;
    }

    fn remove(&mut self, key: &K) {
        if let Some((_, tick, charge)) = self.map.remove(key) {
            self.order.remove(&tick);
            self.usage -= charge;
        }
    }
}

/// The cache.
pub struct LruCache<K, V> {
    shards: Vec<Mutex<Shard<K, V>>>,
    hasher: std::collections::hash_map::RandomState,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Hash + Eq + Clone, V> LruCache<K, V> {
    /// A cache of `capacity` charge units split over `shards` shards (at least 1).
    pub fn new(capacity: usize, shards: usize) -> LruCache<K, V> {
        let shards = shards.max(1);
        LruCache {
            shards: (0..shards)
                .map(|_| {
                    Mutex::new(Shard {
                        map: HashMap::new(),
                        order: BTreeMap::new(),
                        usage: 0,
                        capacity: capacity / shards,
                        tick: 0,
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

    /// The entry for `key`, marked most recently used.
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        let found = self.shard(key).lock().touch(key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Inserts (or replaces) `key`, evicting the least recently used entries to make room.
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
    fn evicts_least_recently_used_within_capacity() {
        let c: LruCache<u32, String> = LruCache::new(3, 1);
        for k in 0..3 {
            c.insert(k, Arc::new(k.to_string()), 1);
        }
        assert!(c.get(&0).is_some()); // 0 is now most recent; 1 is least
        c.insert(3, Arc::new("3".into()), 1);
        assert!(c.get(&1).is_none());
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
    fn usage_never_exceeds_capacity_under_random_use() {
        let c: LruCache<u64, u64> = LruCache::new(1000, 4);
        let mut rng = crate::util::Rng::new(1);
        for i in 0..20_000 {
            let k = rng.below(500);
            if c.get(&k).is_none() {
                c.insert(k, Arc::new(i), 1 + rng.below(40) as usize);
            }
            assert!(c.usage() <= 1000);
        }
    }
}
