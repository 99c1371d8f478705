package io.strata;

/**
 * A consistent, read-only view of the database as of the moment {@link Strata#getSnapshot()}
 * was called, used through {@link ReadOptions#snapshot}. Close it to let compactions drop
 * what only it still sees; iterators made with it keep their view after it is closed.
 */
public final class Snapshot extends NativeObject {
    Snapshot(long handle) {
        super(handle, Snapshot::nativeFree);
    }

    /** The sequence number the snapshot reads at. */
    public long sequence() {
        return nativeSequence(handle);
    }

    /** Releases the snapshot; reads through it later throw {@link UnavailableException}. */
    @Override
    public void close() {
        nativeClose(handle);
    }

    private static native void nativeFree(long h);

    private native void nativeClose(long h);

    private native long nativeSequence(long h);
}
