package io.strata;

/** A description of one backup in a {@link BackupEngine}'s directory. */
public record BackupInfo(long id, long timestamp, long numFiles, long size, long sharedBytes,
        long copiedBytes) {
    /** Numbers per backup in the native side's rows. */
    static final int FIELDS = 6;

    static BackupInfo fromRow(long[] rows, int at) {
        return new BackupInfo(rows[at], rows[at + 1], rows[at + 2], rows[at + 3], rows[at + 4],
                rows[at + 5]);
    }
}
