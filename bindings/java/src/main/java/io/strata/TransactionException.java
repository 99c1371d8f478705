package io.strata;

/** A transaction could not go on: the base of the conflict, deadlock, lock timeout and expiration failures (a {@link BusyException}). Running the transaction again from its start usually succeeds. */
public class TransactionException extends BusyException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public TransactionException(String message) {
        super(ErrorKind.BUSY, message);
    }

    /** For subclasses. */
    protected TransactionException(ErrorKind kind, String message) {
        super(kind, message);
    }
}
