package io.strata;

/**
 * A cursor over the keys of a database, column family, snapshot or transaction, in key order,
 * in both directions, within the bounds of its {@link ReadOptions}. It reads as of the moment
 * it was made. It starts on no entry: seek first.
 *
 * <pre>{@code
 * try (StrataIterator it = db.newIterator()) {
 *     for (it.seekToFirst(); it.isValid(); it.next()) {
 *         use(it.key(), it.value());
 *     }
 * }
 * }</pre>
 *
 * <p>A read error ends the iteration and is thrown by the move that met it. {@link #next()},
 * {@link #prev()}, {@link #key()} and {@link #value()} off an entry throw {@link
 * InvalidArgumentException}; every call throws {@link UnavailableException} once the iterator
 * or its database is closed (or its transaction has ended).
 */
public final class StrataIterator extends NativeObject {
    private static final int FIRST = 0;
    private static final int LAST = 1;
    private static final int NEXT = 2;
    private static final int PREV = 3;
    private static final int SEEK = 4;
    private static final int SEEK_FOR_PREV = 5;

    StrataIterator(long handle) {
        super(handle, StrataIterator::nativeFree);
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
     * Reads entries from the current one on into {@code batch} (replacing what it held), at
     * most {@code maxEntries}, and moves past them: afterwards the iterator stands on the
     * first entry not read, or on none at the end. One native call for them all, where
     * {@link #next()}, {@link #key()} and {@link #value()} cost one each. Returns how many
     * entries it read: 0 off an entry (or with {@code maxEntries} 0). The batch's buffer grows
     * when an entry does not fit. A read error met on the way is thrown, and the batch is
     * then empty.
     */
    public int readEntries(EntryBatch batch, int maxEntries) {
        batch.clear();
        int count;
        while ((count = (int) nativeReadEntries(handle, batch.buffer, maxEntries)) < 0) {
            batch.grow(-count);
        }
        batch.parse(count);
        return count;
    }

    /** Releases the iterator; later calls throw {@link UnavailableException}. */
    @Override
    public void close() {
        nativeClose(handle);
    }

    private static native void nativeFree(long h);

    private native void nativeClose(long h);

    private native boolean nativeMove(long h, int how, byte[] target);

    private native boolean nativeIsValid(long h);

    private native byte[] nativeEntry(long h, boolean value);

    private native long nativeReadEntries(long h, byte[] buffer, int maxEntries);
}
