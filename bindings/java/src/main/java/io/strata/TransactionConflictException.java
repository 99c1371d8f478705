package io.strata;

/** A key the transaction wrote or read for update was written by someone else after the transaction's snapshot: an optimistic commit (nothing was written, the transaction ended), or a pessimistic lock with a snapshot. */
public class TransactionConflictException extends TransactionException {
    private static final long serialVersionUID = 1L;

    /** Thrown by the native library with the engine's message. */
    public TransactionConflictException(String message) {
        super(message);
    }
}
