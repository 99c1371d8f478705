package io.strata;

/** A pessimistic transaction outlived its expiration and other transactions took its locks: its commit wrote nothing. */
public class TransactionExpiredException extends TransactionException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public TransactionExpiredException(String message) {
        super(message);
    }
}
