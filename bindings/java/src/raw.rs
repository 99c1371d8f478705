//! The JNI environment as the JVM passes it, for the native methods on the hot path (a get,
//! a put, a short transaction).
//!
//! The other native methods go through the jni crate's [`EnvUnowned::with_env`]
//! (`error::run`): it pushes a guard level in a thread-local, looks up the `JavaVM` and
//! checks for a pending exception before and after each JNI function it calls. Each of those
//! costs little, but a get makes four or five such calls and the whole crossing is a
//! few hundred ns, so the hot methods take the raw `JNIEnv` pointer instead ([`RawEnv`]) and
//! call the few JNI functions they need straight from its function table:
//! - `GetByteArrayRegion` to copy a key into a buffer on the stack ([`KeyBuf`]; a heap one
//!   above [`KeyBuf::INLINE`] bytes). The copy is one JNI call, where reading the array in
//!   place (`GetPrimitiveArrayCritical` and its release) is two, each a transition into the
//!   VM, for keys that are usually a few dozen bytes. The key's length comes from Java (the
//!   binding's own code passes `key.length`, or -1 for null), which saves `GetArrayLength`.
//! - `SetByteArrayRegion` for a value written into an array of Java's: the caller's, or,
//!   for a read that returns a new array, the calling thread's scratch array
//!   (`ValueScratch` on the Java side, which copies it into a new array of its size: an
//!   array made here costs a call into the VM more, and the zeroing of it). A value longer
//!   than the scratch array goes into a new one (`NewByteArray`, `SetByteArrayRegion`),
//!   handed over by `SetObjectArrayElement` into a one-element `byte[][]` of Java's.
//! - `GetDirectBufferAddress` and `GetDirectBufferCapacity` for direct buffers.
//!
//! None of these can throw with the arguments given here (ranges are inside the arrays,
//! arrays not null, the `byte[][]` has an element 0), except `NewByteArray`, which returns null with an `OutOfMemoryError`
//! pending: only then is there an exception to check for.
//!
//! Every native method that returns a size (an `int` in Java) returns it as a `jlong`, which
//! Java narrows: the x86-64 calling convention leaves the upper half of RAX undefined under a
//! 32-bit result, HotSpot's native wrapper passes an `int` result on as it is, and compiled
//! Java code was seen to use such garbage (a size of 100 with a pointer's upper half read
//! as an array length: the JVM crashed in `Arrays.copyOf`). A `jlong` made by
//! `jlong::from(jint)` has no undefined bits.
//!
//! Failures and panics take the slow path: [`run_raw`] hands them to `error::run`, which
//! throws the same exceptions as every other native method.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use jni::sys::{self, jbyteArray, jint, jobject, jobjectArray, jsize};
use jni::EnvUnowned;

use crate::error::{run, BindError, Result};

/// The `JNIEnv` of the current native call.
#[derive(Clone, Copy)]
pub struct RawEnv {
    env: *mut sys::JNIEnv,
}

/// Runs the body of a hot native method given its raw `JNIEnv`: its errors and panics become
/// pending Java exceptions (through `error::run`) and the method returns `T::default()`.
///
/// # Safety
/// `env` is the `JNIEnv` pointer the JVM passed to the running native method.
pub unsafe fn run_raw<T: Default>(
    env: *mut sys::JNIEnv,
    body: impl FnOnce(RawEnv) -> Result<T>,
) -> T {
    let failure = match catch_unwind(AssertUnwindSafe(|| body(RawEnv { env }))) {
        Ok(Ok(value)) => return value,
        Ok(Err(e)) => Ok(e),
        Err(payload) => Err(payload),
    };
    // SAFETY: `env` is the attachment of this thread for this native call (the contract).
    let unowned = unsafe { EnvUnowned::from_raw(env) };
    run(unowned, |_| match failure {
        Ok(e) => Err(e),
        // Raised again inside `run`, whose handler turns it into a StrataException.
        Err(payload) => resume_unwind(payload),
    })
}

/// The key bytes of a Java array, copied to the stack when short.
pub struct KeyBuf {
    inline: [u8; KeyBuf::INLINE],
    heap: Vec<u8>,
}

impl KeyBuf {
    /// Keys up to this many bytes are copied to the stack, longer ones to the heap.
    pub const INLINE: usize = 128;

    pub fn new() -> KeyBuf {
        KeyBuf {
            inline: [0; KeyBuf::INLINE],
            heap: Vec::new(),
        }
    }
}

impl RawEnv {
    fn table(&self) -> &sys::JNINativeInterface_ {
        // SAFETY: the JVM's `JNIEnv` points at its function table for the whole call.
        unsafe { &**self.env }
    }

    /// The bytes of `array`, whose length the binding's Java code passed as `length` (-1
    /// for null, which is refused, naming `what`).
    ///
    /// # Safety
    /// `array` is null or a `byte[]` argument of the current call whose length is `length`.
    pub unsafe fn bytes<'b>(
        &self,
        array: jbyteArray,
        length: jint,
        what: &str,
        buf: &'b mut KeyBuf,
    ) -> Result<&'b [u8]> {
        let Ok(len) = usize::try_from(length) else {
            return Err(BindError::Arg(format!("{what} is null")));
        };
        if array.is_null() {
            return Err(BindError::Arg(format!("{what} is null")));
        }
        let out: &mut [u8] = if len <= KeyBuf::INLINE {
            &mut buf.inline[..len]
        } else {
            buf.heap.resize(len, 0);
            &mut buf.heap[..]
        };
        // SAFETY: `array` is a live byte[] of `len` bytes (the contract); `out` has `len`
        // bytes. The range is the whole array, so nothing is thrown.
        unsafe {
            (self.table().v1_1.GetByteArrayRegion)(
                self.env,
                array,
                0,
                length,
                out.as_mut_ptr().cast(),
            );
        }
        Ok(out)
    }

    /// A new Java `byte[]` holding `bytes`.
    pub fn new_array(&self, bytes: &[u8]) -> Result<jbyteArray> {
        let length = jsize::try_from(bytes.len()).map_err(|_| {
            BindError::Arg(format!(
                "the value has {} bytes, more than a Java array holds",
                bytes.len()
            ))
        })?;
        // SAFETY: a valid env; a negative length is impossible (checked above).
        let array = unsafe { (self.table().v1_1.NewByteArray)(self.env, length) };
        if array.is_null() {
            // An OutOfMemoryError is pending: `run_raw` leaves it to Java.
            return Err(BindError::Jni(jni::errors::Error::JavaException));
        }
        // SAFETY: the new array has exactly `length` bytes.
        unsafe {
            (self.table().v1_1.SetByteArrayRegion)(
                self.env,
                array,
                0,
                length,
                bytes.as_ptr().cast(),
            );
        }
        Ok(array)
    }

    /// Hands `bytes`, the value of a read that returns a new array, to Java's `ValueScratch`:
    /// copied into `scratch` (of `scratch_len` bytes) when it fits, else into a new array
    /// stored at `large[0]`. Returns the size of `bytes`.
    ///
    /// # Safety
    /// `scratch` is a `byte[]` argument of the current call of `scratch_len` bytes, `large`
    /// a `byte[][]` argument with at least one element (null for either is refused).
    pub unsafe fn value_out(
        &self,
        bytes: &[u8],
        scratch: jbyteArray,
        scratch_len: jint,
        large: jobjectArray,
    ) -> Result<jint> {
        if scratch_len < 0 || scratch.is_null() || large.is_null() {
            return Err(BindError::Arg("the read's scratch array is null".into()));
        }
        let size = jint::try_from(bytes.len()).map_err(|_| {
            BindError::Arg(format!(
                "the value has {} bytes, more than a Java array holds",
                bytes.len()
            ))
        })?;
        if size <= scratch_len {
            // SAFETY: `scratch` has `scratch_len >= size` bytes (the contract), `bytes` has
            // `size`.
            unsafe {
                (self.table().v1_1.SetByteArrayRegion)(
                    self.env,
                    scratch,
                    0,
                    size,
                    bytes.as_ptr().cast(),
                );
            }
        } else {
            let array = self.new_array(bytes)?;
            // SAFETY: `large` is a `byte[][]` with an element 0 (the contract) and `array` a
            // `byte[]`: nothing is thrown.
            unsafe { (self.table().v1_1.SetObjectArrayElement)(self.env, large, 0, array) };
        }
        Ok(size)
    }

    /// Copies as much of `bytes` as fits into `array` (of `capacity` bytes, as the binding's
    /// Java code passed it, -1 for null) from its start; returns the full size of `bytes`.
    ///
    /// # Safety
    /// `array` is null or a `byte[]` argument of the current call of `capacity` bytes.
    pub unsafe fn copy_into(
        &self,
        bytes: &[u8],
        array: jbyteArray,
        capacity: jint,
        what: &str,
    ) -> Result<jint> {
        let size = value_size(bytes)?;
        if capacity < 0 || array.is_null() {
            return Err(BindError::Arg(format!("{what} is null")));
        }
        let n = size.min(capacity);
        // SAFETY: `array` has `capacity` bytes (the contract) and `n <= capacity`; `bytes`
        // has at least `n`.
        unsafe {
            (self.table().v1_1.SetByteArrayRegion)(self.env, array, 0, n, bytes.as_ptr().cast());
        }
        Ok(size)
    }

    /// The address of the `length` bytes at `offset` of direct buffer `buffer`, checked to
    /// be inside it. Null, a heap buffer, or a range past the capacity is refused, naming
    /// `what`.
    fn direct_range(
        &self,
        buffer: jobject,
        offset: jint,
        length: jint,
        what: &str,
    ) -> Result<(*mut u8, usize)> {
        if buffer.is_null() {
            return Err(BindError::Arg(format!("{what} is null")));
        }
        // SAFETY: `buffer` is a live object reference; for an object that is not a direct
        // buffer both functions return null / -1 rather than throw.
        let (address, capacity) = unsafe {
            (
                (self.table().v1_4.GetDirectBufferAddress)(self.env, buffer),
                (self.table().v1_4.GetDirectBufferCapacity)(self.env, buffer),
            )
        };
        let Ok(capacity) = usize::try_from(capacity) else {
            return Err(not_direct(what));
        };
        if address.is_null() {
            return Err(not_direct(what));
        }
        let (Ok(offset), Ok(length)) = (usize::try_from(offset), usize::try_from(length)) else {
            return Err(BindError::Arg(format!(
                "{what}: negative position or length"
            )));
        };
        if offset.checked_add(length).is_none_or(|end| end > capacity) {
            return Err(BindError::Arg(format!(
                "{what}: bytes {offset}..{} are past its capacity {capacity}",
                offset.saturating_add(length)
            )));
        }
        // SAFETY: `offset` is within the buffer's memory (checked above).
        Ok((unsafe { address.cast::<u8>().add(offset) }, length))
    }

    /// The `length` bytes at `offset` of a direct buffer, read in place.
    ///
    /// # Safety
    /// As `convert::direct`: `buffer` is an argument of the current call, the slice does not
    /// outlive it nor live beside a slice from [`RawEnv::direct_mut`] of the same buffer.
    pub unsafe fn direct<'a>(
        &self,
        buffer: jobject,
        offset: jint,
        length: jint,
        what: &str,
    ) -> Result<&'a [u8]> {
        let (address, length) = self.direct_range(buffer, offset, length, what)?;
        // SAFETY: inside the buffer (checked), alive for the call (the caller's contract).
        Ok(unsafe { std::slice::from_raw_parts(address, length) })
    }

    /// The `length` bytes at `offset` of a direct buffer, to write in place.
    ///
    /// # Safety
    /// As [`RawEnv::direct`], and no other slice of the same buffer lives meanwhile.
    pub unsafe fn direct_mut<'a>(
        &self,
        buffer: jobject,
        offset: jint,
        length: jint,
        what: &str,
    ) -> Result<&'a mut [u8]> {
        let (address, length) = self.direct_range(buffer, offset, length, what)?;
        // SAFETY: inside the buffer (checked), alive for the call, not aliased (the contract).
        Ok(unsafe { std::slice::from_raw_parts_mut(address, length) })
    }

    /// Copies `bytes` into the `length` bytes at `offset` of direct buffer `buffer`, as many
    /// as fit (the `direct_mut` checks apply); returns their full size, which the caller
    /// compares with what it had room for. The size is refused first if it is more than an
    /// int, so that nothing is written then.
    ///
    /// # Safety
    /// As [`RawEnv::direct_mut`].
    pub unsafe fn copy_into_direct(
        &self,
        bytes: &[u8],
        buffer: jobject,
        offset: jint,
        length: jint,
        what: &str,
    ) -> Result<jint> {
        let size = value_size(bytes)?;
        // SAFETY: the caller's contract.
        let out = unsafe { self.direct_mut(buffer, offset, length, what)? };
        let n = bytes.len().min(out.len());
        out[..n].copy_from_slice(&bytes[..n]);
        Ok(size)
    }
}

/// `bytes`' length as Java's int, or the error refusing a value longer than an array can be.
fn value_size(bytes: &[u8]) -> Result<jint> {
    jint::try_from(bytes.len()).map_err(|_| {
        BindError::Arg(format!(
            "the value has {} bytes, more than an int",
            bytes.len()
        ))
    })
}

fn not_direct(what: &str) -> BindError {
    BindError::Arg(format!(
        "{what} must be a direct ByteBuffer (ByteBuffer.allocateDirect), or pass a byte[]"
    ))
}
