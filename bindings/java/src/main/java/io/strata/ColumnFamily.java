package io.strata;

/**
 * A handle of one column family of a {@link Strata} (from {@link Strata#columnFamily} or
 * {@link Strata#createColumnFamily}). Closing the handle does not drop the family; it makes
 * the handle unusable.
 */
public final class ColumnFamily extends NativeObject {
    ColumnFamily(long handle) {
        super(handle, ColumnFamily::nativeFree);
    }

    /** The family's name. */
    public String name() {
        return nativeName(handle);
    }

    /** Releases the handle; later uses throw {@link UnavailableException}. */
    @Override
    public void close() {
        nativeClose(handle);
    }

    private static native void nativeFree(long h);

    private native void nativeClose(long h);

    private native String nativeName(long h);
}
