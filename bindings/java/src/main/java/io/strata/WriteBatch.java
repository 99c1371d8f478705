package io.strata;

import java.lang.ref.Reference;

/**
 * Writes collected in memory and applied atomically by {@link Strata#write}: after a crash,
 * all of them are there or none. Methods taking a {@link ColumnFamily} write that family
 * (null: the default one). Not safe for concurrent use without outside locking.
 */
public final class WriteBatch extends NativeObject {
    private static final int PUT = 0;
    private static final int DELETE = 1;
    private static final int DELETE_RANGE = 2;
    private static final int MERGE = 3;

    /** An empty batch. */
    public WriteBatch() {
        super(nativeNew(), WriteBatch::nativeFree);
    }

    /** Adds: set {@code key} to {@code value}; returns this. */
    public WriteBatch put(byte[] key, byte[] value) {
        return add(PUT, null, key, value);
    }

    /** Adds: set {@code key} to {@code value} in {@code cf}; returns this. */
    public WriteBatch put(ColumnFamily cf, byte[] key, byte[] value) {
        return add(PUT, cf, key, value);
    }

    /** Adds: remove {@code key}; returns this. */
    public WriteBatch delete(byte[] key) {
        return add(DELETE, null, key, null);
    }

    /** Adds: remove {@code key} from {@code cf}; returns this. */
    public WriteBatch delete(ColumnFamily cf, byte[] key) {
        return add(DELETE, cf, key, null);
    }

    /**
     * Adds: remove every key with {@code begin <= key < end}. A begin after the end makes
     * {@link Strata#write} fail, writing nothing of the batch. Returns this.
     */
    public WriteBatch deleteRange(byte[] begin, byte[] end) {
        return add(DELETE_RANGE, null, begin, end);
    }

    /** As {@link #deleteRange(byte[], byte[])}, in {@code cf}. */
    public WriteBatch deleteRange(ColumnFamily cf, byte[] begin, byte[] end) {
        return add(DELETE_RANGE, cf, begin, end);
    }

    /** Adds: merge {@code operand} into {@code key}; returns this. */
    public WriteBatch merge(byte[] key, byte[] operand) {
        return add(MERGE, null, key, operand);
    }

    /** Adds: merge {@code operand} into {@code key} in {@code cf}; returns this. */
    public WriteBatch merge(ColumnFamily cf, byte[] key, byte[] operand) {
        return add(MERGE, cf, key, operand);
    }

    /** The number of records in the batch. */
    public int count() {
        return (int) nativeCount(handle);
    }

    /** Removes every record. */
    public void clear() {
        nativeClear(handle);
    }

    /** Drops the records; later uses throw {@link UnavailableException}. */
    @Override
    public void close() {
        nativeClose(handle);
    }

    private WriteBatch add(int op, ColumnFamily cf, byte[] first, byte[] second) {
        try {
            nativeAdd(handle, op, handleOf(cf), first, second);
        } finally {
            Reference.reachabilityFence(cf);
        }
        return this;
    }

    private static native long nativeNew();

    private static native void nativeFree(long h);

    private native void nativeClose(long h);

    private native void nativeAdd(long h, int op, long cf, byte[] first, byte[] second);

    private native long nativeCount(long h);

    private native void nativeClear(long h);
}
