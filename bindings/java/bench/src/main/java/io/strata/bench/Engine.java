package io.strata.bench;

/**
 * One engine under the benchmark: the published comparison's operations, each a transaction of its own.
 * Keys are 8-byte big-endian numbers, values 100 bytes.
 */
interface Engine extends AutoCloseable {
    /** The engine's name and version, for the report. */
    String name();

    /** Writes keys {@code from..to-1} in key order (untimed). */
    void load(long from, long to, byte[] value) throws Exception;

    /** Reads keys {@code from..to-1} once through a cursor (untimed), as the comparison did. */
    void prescan(long from, long to) throws Exception;

    /** A worker for one thread. */
    Worker worker() throws Exception;

    /** What each benchmark thread calls. */
    interface Worker extends AutoCloseable {
        /** A transactional read of one value; returns whether it was found. */
        boolean read(byte[] key) throws Exception;

        /** A transactional scan of up to {@code n} entries from {@code key}; returns how many. */
        int scan(byte[] key, int n) throws Exception;

        /** A transactional update of one value. */
        void update(byte[] key, byte[] value) throws Exception;

        /**
         * A read-modify-write (first and last bytes changed) through an updatable cursor where
         * the engine has one, else a read for update and a write, in one transaction.
         */
        void readModifyWrite(byte[] key) throws Exception;

        @Override
        default void close() throws Exception {}
    }
}
