package io.strata;

/** How a write is made durable. */
public final class WriteOptions {
    boolean sync;
    boolean disableWal;

    /** Not synced, through the write-ahead log. */
    public WriteOptions() {}

    /** Returns once the write is on disk (an fdatasync of the log); returns this. */
    public WriteOptions sync(boolean value) {
        this.sync = value;
        return this;
    }

    /** Skips the write-ahead log: the write is lost in a crash before a flush; returns this. */
    public WriteOptions disableWal(boolean value) {
        this.disableWal = value;
        return this;
    }
}
