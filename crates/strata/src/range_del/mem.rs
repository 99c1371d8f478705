//! The range deletions of one memtable: appended by the writer, read as a fragmented list.
//!
//! Writes append to a list behind a mutex held only for the push. Readers ask for the
//! fragmented view ([`MemTombstones::fragmented`]): a cached `Arc<FragmentedList>` that is
//! current while its count of tombstones equals the number appended, which a reader checks
//! with one atomic load and a read lock held for an `Arc` clone. When tombstones were added
//! since, the reader copies the list (one reference count per tombstone, under the mutex)
//! and fragments the copy with no lock held, then offers the result to the cache. Nobody
//! waits for another's fragmenting: two readers that find the cache stale both build, and the
//! newer result stays.
//!
//! Range deletions are rare next to puts, so the cost sits with the reads that follow a
//! range deletion, not with the write path. A read sees every tombstone appended before it
//! loaded the count: the writer publishes the count (release) after the push, and the
//! database publishes the write's sequence number after that.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::comparator::KeyOrder;
use crate::key::SequenceNumber;
use crate::range_del::fragment::FragmentedList;
use crate::range_del::Tombstone;

/// The range deletions of one memtable.
#[derive(Default)]
pub struct MemTombstones {
    /// The user key order of the memtable.
    order: KeyOrder,
    /// Every tombstone appended, in order.
    appended: Mutex<Vec<Arc<Tombstone>>>,
    /// `appended.len()`, published after each push.
    count: AtomicUsize,
    /// Bytes of keys appended, for the memtable's size accounting.
    key_bytes: AtomicUsize,
    /// The fragmented view of the first `.0` tombstones.
    view: RwLock<(usize, Arc<FragmentedList>)>,
}

impl MemTombstones {
    /// An empty set, bytewise.
    pub fn new() -> MemTombstones {
        MemTombstones::default()
    }

    /// An empty set with user keys in `order`.
    pub fn with_order(order: KeyOrder) -> MemTombstones {
        MemTombstones {
            order,
            ..MemTombstones::default()
        }
    }

    /// Appends the deletion of `[begin, end)` at `seq`. An empty range (`begin >= end`)
    /// deletes nothing and is not kept; the write path refuses `begin > end` before it gets
    /// here.
    pub fn add(&self, begin: &[u8], end: &[u8], seq: SequenceNumber) {
        if self.order.le(end, begin) {
            return;
        }
        let t = Arc::new(Tombstone::new(begin, end, seq));
        let mut appended = self.appended.lock();
        appended.push(t);
        self.key_bytes
            .fetch_add(begin.len() + end.len(), Ordering::Relaxed);
        self.count.store(appended.len(), Ordering::Release);
    }

    /// Number of tombstones appended.
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// True if none was appended: reads can skip range deletions altogether.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory held by the appended tombstones, roughly (the cached view aside).
    pub fn memory_usage(&self) -> usize {
        self.len() * (std::mem::size_of::<Tombstone>() + 2 * std::mem::size_of::<usize>())
            + self.key_bytes.load(Ordering::Relaxed)
    }

    /// The fragmented view of every tombstone appended before the call.
    pub fn fragmented(&self) -> Arc<FragmentedList> {
        let wanted = self.len();
        {
            let view = self.view.read();
            if view.0 >= wanted {
                return view.1.clone();
            }
        }
        let copy: Vec<Arc<Tombstone>> = self.appended.lock().clone();
        let list = Arc::new(FragmentedList::new_in(
            &self.order,
            copy.iter().map(|t| &**t),
        ));
        let mut view = self.view.write();
        if view.0 < copy.len() {
            *view = (copy.len(), list.clone());
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn the_view_follows_the_appends() {
        let m = MemTombstones::new();
        assert!(m.is_empty());
        assert!(m.fragmented().is_empty());
        m.add(b"a", b"c", 5);
        m.add(b"b", b"b", 6); // empty: ignored
        assert_eq!(m.len(), 1);
        let first = m.fragmented();
        assert!(Arc::ptr_eq(&first, &m.fragmented()), "cached");
        m.add(b"b", b"d", 7);
        let second = m.fragmented();
        assert_eq!(format!("{second:?}"), "a-b:{#5}\nb-c:{#7,#5}\nc-d:{#7}\n");
        assert_eq!(first.len(), 1, "an old view does not change");
        assert!(m.memory_usage() >= 8);
    }

    /// One writer appends while readers take views: a view always holds every tombstone
    /// whose append finished before the reader asked (a read never misses a published
    /// deletion), and never one that was not appended.
    #[test]
    fn readers_see_every_tombstone_appended_before_they_ask() {
        const N: u64 = 2000;
        let m = Arc::new(MemTombstones::new());
        let published = Arc::new(AtomicU64::new(0));
        let key = |i: u64| format!("k{i:05}").into_bytes();
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 1..=N {
                    m.add(&key(i), &key(i + 1), i);
                    published.store(i, Ordering::Release);
                }
            });
            for r in 0..2u64 {
                let (m, published) = (&m, &published);
                s.spawn(move || {
                    let mut rng = crate::util::Rng::new(r);
                    loop {
                        let p = published.load(Ordering::Acquire);
                        let view = m.fragmented();
                        if p > 0 {
                            let i = 1 + rng.below(p);
                            assert_eq!(view.max_covering_seq(&key(i), u64::MAX), Some(i));
                        }
                        assert!(view.max_seq() <= N);
                        if p == N {
                            break;
                        }
                    }
                });
            }
        });
        assert_eq!(m.fragmented().len(), N as usize);
    }
}
