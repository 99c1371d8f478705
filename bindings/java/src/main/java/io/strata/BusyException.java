package io.strata;

/** The database is locked by another process or handle, or a transaction could not go on (kind {@link ErrorKind#BUSY}; see {@link TransactionException}). */
public class BusyException extends StrataException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public BusyException(String message) {
        super(ErrorKind.BUSY, message);
    }

    /** For subclasses. */
    protected BusyException(ErrorKind kind, String message) {
        super(kind, message);
    }
}
