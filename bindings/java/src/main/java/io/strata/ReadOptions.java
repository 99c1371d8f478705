package io.strata;

/**
 * What a read or an iterator sees: a {@link Snapshot} (by default, the moment of the call)
 * and, for iterators, bounds: keys at or above the lower bound and below the upper bound.
 */
public final class ReadOptions {
    Snapshot snapshot;
    byte[] lowerBound;
    byte[] upperBound;

    /** Reads as of now, unbounded. */
    public ReadOptions() {}

    /** Reads as of {@code snapshot} (null: now); returns this. */
    public ReadOptions snapshot(Snapshot snapshot) {
        this.snapshot = snapshot;
        return this;
    }

    /** Iterators see no key below {@code key} (inclusive; null: none); returns this. */
    public ReadOptions lowerBound(byte[] key) {
        this.lowerBound = key == null ? null : key.clone();
        return this;
    }

    /** Iterators see no key at or above {@code key} (exclusive; null: none); returns this. */
    public ReadOptions upperBound(byte[] key) {
        this.upperBound = key == null ? null : key.clone();
        return this;
    }
}
