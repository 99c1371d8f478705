package io.strata;

/**
 * What a read or an iterator sees: a {@link Snapshot} (by default, the moment of the call)
 * and, for iterators, bounds: keys at or above the lower bound and below the upper bound;
 * and how it reads the data blocks of table files (into the block cache or not, their
 * checksums checked or not).
 */
public final class ReadOptions {
    /** {@link #blockFlags()}: the data blocks read do not go into the block cache. */
    static final int NO_FILL_CACHE = 1;
    /** {@link #blockFlags()}: the data blocks read do not have their checksums checked. */
    static final int NO_VERIFY_CHECKSUMS = 2;

    Snapshot snapshot;
    byte[] lowerBound;
    byte[] upperBound;
    private boolean fillCache = true;
    private boolean verifyChecksums = true;

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

    /**
     * Whether the data blocks this read brings in from table files go into the block cache
     * (RocksJava's {@code setFillCache}; true by default). False suits a scan over data that
     * should not push out what other reads keep cached: each block is used and dropped, a
     * block already cached is still read from the cache, and an iterator reads ahead into a
     * window of its own instead of the cache. Returns this.
     */
    public ReadOptions fillCache(boolean fill) {
        this.fillCache = fill;
        return this;
    }

    /**
     * Whether this read checks the checksum of each data block it brings in from a table
     * file (RocksJava's {@code setVerifyChecksums}; true by default). Unchecked, a damaged
     * block is read as its bytes decode instead of failing with a {@link
     * CorruptionException}. Returns this.
     */
    public ReadOptions verifyChecksums(boolean verify) {
        this.verifyChecksums = verify;
        return this;
    }

    /** The two block settings as the native calls take them: 0 for the defaults. */
    int blockFlags() {
        return (fillCache ? 0 : NO_FILL_CACHE) | (verifyChecksums ? 0 : NO_VERIFY_CHECKSUMS);
    }
}
