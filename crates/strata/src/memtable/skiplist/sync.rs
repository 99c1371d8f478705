//! The skiplist's atomics and writer lock, in one place so that a model checker can stand in
//! for them: std's atomics and parking_lot's mutex in every build, loom's under `--cfg loom`
//! (`scripts/loom.sh`), which then runs the list's threads in every interleaving its bounds
//! allow and lets each load return any value the memory model permits (see the `loom` test
//! module). The names are re-exports or a thin wrapper: a normal build compiles to the same
//! code as with std's types named directly.
//!
//! Under loom an atomic is an object of the model that must be made with `new` before use,
//! and may not be read by a thread to which its making is not visible. The towers of next
//! pointers live in the arena's raw memory, so [`init_tower`] makes a node's slots as soon
//! as the node is written: a thread that reads a tower it could not see being made (a link
//! published without `Release`, or read without `Acquire`) fails the model.

#[cfg(loom)]
pub(super) use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
/// loom takes std's orderings.
pub(super) use std::sync::atomic::Ordering as AtomicOrdering;
#[cfg(not(loom))]
pub(super) use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};

#[cfg(not(loom))]
pub(super) use parking_lot::Mutex;

/// loom's mutex with parking_lot's interface (a guard, no poisoning): a panic in a model
/// fails the model, so a poisoned lock is only ever seen on the way out.
#[cfg(loom)]
pub(super) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(super) fn new(value: T) -> Mutex<T> {
        Mutex(loom::sync::Mutex::new(value))
    }

    pub(super) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

// A tower slot is one pointer wide under loom too (an index into the model's objects): the
// node layout does not change.
const _: () = assert!(
    std::mem::size_of::<AtomicPtr<u8>>() == std::mem::size_of::<usize>()
        && std::mem::align_of::<AtomicPtr<u8>>() <= 8
);

/// Makes the `height` slots of `node`'s tower, each null, before anything can see the node.
/// Nothing in a normal build: each slot is first written when the node is linked
/// ([`super::SkipList::link_at_splice`]), and nothing reads it before.
///
/// # Safety
/// `node` is a node being written, not yet staged or linked, with a tower of `height` slots.
#[inline(always)]
pub(super) unsafe fn init_tower(node: *mut u8, height: usize) {
    #[cfg(loom)]
    for level in 0..height {
        // SAFETY: the slot lies in the node's fresh allocation (caller), 8-byte aligned.
        unsafe {
            std::ptr::write(
                node.sub(super::PTR * level) as *mut AtomicPtr<u8>,
                AtomicPtr::new(std::ptr::null_mut()),
            )
        };
    }
    #[cfg(not(loom))]
    let _ = (node, height);
}
