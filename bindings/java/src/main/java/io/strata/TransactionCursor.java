package io.strata;

/**
 * An updatable cursor of a {@link Transaction}: it moves as a {@link StrataIterator} over
 * the transaction's view (its writes over the database), and {@link #update(byte[])} or
 * {@link #delete()} write its current entry through the transaction, visible to the cursor
 * at once.
 *
 * <p>While it is open it holds its transaction: the transaction's other methods throw {@link
 * InvalidArgumentException} until the cursor is closed (commit and rollback close it). A
 * deleted entry stays current with an empty value; the moves go on from it.
 */
public final class TransactionCursor extends NativeObject {
    private static final int FIRST = 0;
    private static final int LAST = 1;
    private static final int NEXT = 2;
    private static final int PREV = 3;
    private static final int SEEK = 4;
    private static final int SEEK_FOR_PREV = 5;
    private static final int UPDATE = 6;
    private static final int DELETE = 7;

    TransactionCursor(long handle) {
        super(handle, TransactionCursor::nativeFree);
    }

    /** Moves to the first key; returns whether there is one. */
    public boolean seekToFirst() {
        return nativeMove(handle, FIRST, null);
    }

    /** Moves to the last key; returns whether there is one. */
    public boolean seekToLast() {
        return nativeMove(handle, LAST, null);
    }

    /** Moves to the first key at or after {@code target}; returns whether there is one. */
    public boolean seek(byte[] target) {
        return nativeMove(handle, SEEK, target);
    }

    /** Moves to the last key at or before {@code target}; returns whether there is one. */
    public boolean seekForPrev(byte[] target) {
        return nativeMove(handle, SEEK_FOR_PREV, target);
    }

    /** Moves to the next key; returns whether there is one. */
    public boolean next() {
        return nativeMove(handle, NEXT, null);
    }

    /** Moves to the previous key; returns whether there is one. */
    public boolean prev() {
        return nativeMove(handle, PREV, null);
    }

    /** True when on an entry. */
    public boolean isValid() {
        return nativeIsValid(handle);
    }

    /** The current key (a copy). */
    public byte[] key() {
        return nativeEntry(handle, false);
    }

    /** The current value (a copy). */
    public byte[] value() {
        return nativeEntry(handle, true);
    }

    /**
     * Sets the current key to {@code value} through the transaction (a pessimistic one locks
     * it first, and may throw {@link LockTimeoutException} or {@link DeadlockException}).
     */
    public void update(byte[] value) {
        nativeMove(handle, UPDATE, value);
    }

    /** Deletes the current key through the transaction. */
    public void delete() {
        nativeMove(handle, DELETE, null);
    }

    /** Gives the transaction back; later calls throw {@link UnavailableException}. */
    @Override
    public void close() {
        nativeClose(handle);
    }

    private static native void nativeFree(long h);

    private native void nativeClose(long h);

    private native boolean nativeMove(long h, int how, byte[] arg);

    private native boolean nativeIsValid(long h);

    private native byte[] nativeEntry(long h, boolean value);
}
