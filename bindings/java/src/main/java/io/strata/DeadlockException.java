package io.strata;

/** Waiting for a key's lock would close a cycle of pessimistic transactions waiting for each other; the transaction goes on without that lock. */
public class DeadlockException extends TransactionException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public DeadlockException(String message) {
        super(message);
    }
}
