package io.strata;

import java.lang.ref.Cleaner;
import java.util.function.LongConsumer;

/**
 * The base of every class that owns native state. It holds a handle to its native side;
 * {@link #close()} releases the engine's resources at once (later calls throw {@link
 * UnavailableException}), and a {@link Cleaner} frees the small native shell once the object
 * is unreachable, so a call can never reach freed memory, even after close or from another
 * thread.
 */
public abstract class NativeObject implements AutoCloseable {
    static {
        NativeLibrary.load();
    }

    private static final Cleaner CLEANER = Cleaner.create();

    /** The native handle; never 0. */
    final long handle;

    /**
     * Takes ownership of {@code handle}: {@code free} gives it back once this object is
     * unreachable.
     */
    NativeObject(long handle, LongConsumer free) {
        if (handle == 0) {
            throw new StrataException("the native library returned no handle");
        }
        this.handle = handle;
        // The action must not refer to this object, or it would never become unreachable.
        CLEANER.register(this, () -> free.accept(handle));
    }

    /** The handle of {@code object}, or 0 (the native side's "none") for null. */
    static long handleOf(NativeObject object) {
        return object == null ? 0 : object.handle;
    }

    /**
     * The length of {@code array}, or -1 for null: passed beside each array to the native
     * methods on the hot path, which then need not ask the JVM for it (the native side
     * refuses -1, naming the argument).
     */
    static int lengthOf(byte[] array) {
        return array == null ? -1 : array.length;
    }

    /**
     * Releases the native resources now. Later calls on this object throw {@link
     * UnavailableException}; closing twice does nothing.
     */
    @Override
    public abstract void close();
}
