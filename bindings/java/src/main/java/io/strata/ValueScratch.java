package io.strata;

import java.util.Arrays;

/**
 * Where a read that returns a new array ({@link Strata#get(byte[])}, {@link
 * Transaction#get(byte[])}, {@link Transaction#getAndCommit(byte[])}) has the native side put
 * the value: copied into the calling thread's array when it fits, from which Java copies it
 * into an array of its size; in a new array made by the native side when it does not. Both
 * take one read of the engine.
 *
 * <p>Why: an array made by the native side costs a JNI call into the VM ({@code
 * NewByteArray}, which also zeroes it) and a local reference, about 0.3 µs per read, where
 * {@code Arrays.copyOf} on the Java side costs next to nothing (it allocates in the thread's
 * own buffer and skips the zeroing). The thread's array starts small and grows to the largest
 * value that did not fit, up to {@link #MAX_BYTES}; larger values keep taking the native
 * array.
 */
final class ValueScratch {
    /** The length of a thread's first array. */
    private static final int FIRST_BYTES = 256;

    /** The thread's array grows up to this length, no further. */
    static final int MAX_BYTES = 64 << 10;

    private static final ThreadLocal<ValueScratch> OF_THREAD =
            ThreadLocal.withInitial(ValueScratch::new);

    /** The value, from its start, when it fits (the native side is passed its length). */
    byte[] array = new byte[FIRST_BYTES];

    /** A value longer than {@link #array}: the new array the native side made, at index 0. */
    final byte[][] large = new byte[1][];

    private ValueScratch() {}

    /** The calling thread's. */
    static ValueScratch ofThread() {
        return OF_THREAD.get();
    }

    /**
     * The value whose size the native side returned ({@link Strata#NOT_FOUND}: none): a copy
     * of the start of {@link #array}, or the array in {@link #large}.
     */
    byte[] take(int size) {
        if (size == Strata.NOT_FOUND) {
            return null;
        }
        if (size <= array.length) {
            return Arrays.copyOf(array, size);
        }
        byte[] value = large[0];
        large[0] = null;
        if (size <= MAX_BYTES) {
            // The next value of this size fits.
            array = new byte[Math.min(MAX_BYTES, Math.max(size, 2 * array.length))];
        }
        return value;
    }
}
