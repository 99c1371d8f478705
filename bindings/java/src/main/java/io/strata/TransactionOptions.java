package io.strata;

/**
 * Options of a pessimistic transaction (a database opened with {@link
 * Options#transactionDb(boolean)}); an optimistic database refuses them.
 */
public final class TransactionOptions {
    long lockTimeoutMillis = -1;
    boolean deadlockDetect = true;
    long expirationMillis = -1;
    boolean setSnapshot;

    /** The database's lock timeout, deadlock detection, no expiration, no snapshot. */
    public TransactionOptions() {}

    /** How long a lock request waits before a {@link LockTimeoutException}; returns this. */
    public TransactionOptions lockTimeoutMillis(long millis) {
        if (millis < 0) {
            throw new InvalidArgumentException("invalid argument: lockTimeoutMillis is " + millis
                    + ", it must not be negative");
        }
        this.lockTimeoutMillis = millis;
        return this;
    }

    /** Refuses at once a lock wait that would close a cycle (on by default); returns this. */
    public TransactionOptions deadlockDetect(boolean value) {
        this.deadlockDetect = value;
        return this;
    }

    /**
     * After this long the transaction's locks may be taken by others and its commit fails
     * with {@link TransactionExpiredException}; returns this.
     */
    public TransactionOptions expirationMillis(long millis) {
        if (millis < 0) {
            throw new InvalidArgumentException("invalid argument: expirationMillis is " + millis
                    + ", it must not be negative");
        }
        this.expirationMillis = millis;
        return this;
    }

    /**
     * Reads at a snapshot taken when the transaction begins, and refuses to lock a key
     * written after it ({@link TransactionConflictException}); returns this.
     */
    public TransactionOptions setSnapshot(boolean value) {
        this.setSnapshot = value;
        return this;
    }
}
