//! Native handles: how a Java object refers to its Rust side.
//!
//! A handle is `Arc::into_raw` of a shell (`Arc<T>`) cast to a `jlong`. Ownership:
//! - The Java object holds one strong count, given by [`into_handle`]. It gives it back once,
//!   through [`release`], called by its `java.lang.ref.Cleaner` action, which runs only when
//!   the Java object is unreachable. Every native method that takes its own handle is an
//!   instance method of the object that holds it (JNI keeps `this` alive for the call), and
//!   where a call takes another object's handle (a column family, a snapshot, a batch), the
//!   Java side keeps that object reachable with `Reference.reachabilityFence` until the call
//!   returns: no call can see a freed shell.
//! - `close()` never frees the shell: it takes the engine state out of it (each shell keeps
//!   that state in an `Option` behind a lock). A call after `close()` finds `None` and
//!   throws; it cannot touch freed memory. Closing twice does nothing.
//! - Another shell may keep a share ([`share`]): an iterator keeps its database's shell, so
//!   it can check, at each call, that the database is still open.
//! - A handle of 0 is never made; 0 from Java means "none" where an argument is optional
//!   (the default column family, no snapshot) and is refused elsewhere.

use std::sync::Arc;

use jni::sys::jlong;

use crate::error::BindError;

/// Gives the Java object its strong count of `shell`.
pub fn into_handle<T>(shell: Arc<T>) -> jlong {
    Arc::into_raw(shell) as jlong
}

/// The shell of `handle`, borrowed for the current native call.
///
/// # Safety
/// `handle` must be 0 or a handle of a `T` made by [`into_handle`] whose Java object is
/// reachable for the whole call (see the module doc), so it is not released meanwhile.
pub unsafe fn borrow<'a, T>(handle: jlong, what: &str) -> Result<&'a T, BindError> {
    if handle == 0 {
        return Err(BindError::Arg(format!("{what} has no native handle")));
    }
    // SAFETY: by the caller's contract the pointer came from `Arc::into_raw` of an `Arc<T>`
    // whose count the live Java object still holds.
    Ok(unsafe { &*(handle as *const T) })
}

/// A new strong count of the shell of `handle`, for another shell to keep.
///
/// # Safety
/// As [`borrow`].
pub unsafe fn share<T>(handle: jlong, what: &str) -> Result<Arc<T>, BindError> {
    if handle == 0 {
        return Err(BindError::Arg(format!("{what} has no native handle")));
    }
    let ptr = handle as *const T;
    // SAFETY: as in `borrow`; the count is incremented before `from_raw` takes one, so the
    // Java object's count is untouched.
    unsafe {
        Arc::increment_strong_count(ptr);
        Ok(Arc::from_raw(ptr))
    }
}

/// Gives back the Java object's strong count; the shell is freed when no other shell shares
/// it.
///
/// # Safety
/// `handle` must be a handle of a `T` made by [`into_handle`], released once only (the
/// Cleaner action runs once), by an object no longer reachable.
pub unsafe fn release<T>(handle: jlong) {
    if handle != 0 {
        // SAFETY: by the caller's contract this is the Java object's count, given back once.
        drop(unsafe { Arc::from_raw(handle as *const T) });
    }
}

/// The native side of a Java object that `close()` empties: its value behind a mutex (a
/// mutex, not a read-write lock, so that values that are `Send` but not `Sync`, such as the
/// engine's iterators, can be used from any Java thread).
pub struct Closable<T> {
    value: parking_lot::Mutex<Option<T>>,
    /// What the object is, for the error of a call after `close()` ("the snapshot").
    what: &'static str,
}

impl<T> Closable<T> {
    pub fn new(value: T, what: &'static str) -> Arc<Closable<T>> {
        Arc::new(Closable::plain(value, what))
    }

    /// A `Closable` to keep inside another shell.
    pub fn plain(value: T, what: &'static str) -> Closable<T> {
        Closable {
            value: parking_lot::Mutex::new(Some(value)),
            what,
        }
    }

    fn closed(&self) -> BindError {
        BindError::Closed(format!("{} is closed", self.what))
    }

    /// Runs `f` on the value; Unavailable after `close()`.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> Result<R, BindError>) -> Result<R, BindError> {
        match &*self.value.lock() {
            Some(v) => f(v),
            None => Err(self.closed()),
        }
    }

    /// Runs `f` on the value, alone; Unavailable after `close()`.
    pub fn with_mut<R>(
        &self,
        f: impl FnOnce(&mut T) -> Result<R, BindError>,
    ) -> Result<R, BindError> {
        match &mut *self.value.lock() {
            Some(v) => f(v),
            None => Err(self.closed()),
        }
    }

    /// Takes the value out (after the calls in flight); later calls throw.
    pub fn take(&self) -> Option<T> {
        self.value.lock().take()
    }
}

impl<T: Clone> Closable<T> {
    /// A copy of the value; Unavailable after `close()`.
    pub fn cloned(&self) -> Result<T, BindError> {
        self.with(|v| Ok(v.clone()))
    }
}
