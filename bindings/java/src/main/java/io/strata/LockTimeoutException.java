package io.strata;

/** A pessimistic transaction waited for a key's lock longer than its lock timeout; the transaction goes on without that lock. */
public class LockTimeoutException extends TransactionException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public LockTimeoutException(String message) {
        super(message);
    }
}
