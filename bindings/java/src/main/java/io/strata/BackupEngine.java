package io.strata;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;

/**
 * A directory of backups of one database: incremental (tables another backup holds are
 * shared), verifiable, restorable. It holds the directory's lock while open.
 */
public final class BackupEngine extends NativeObject {
    private static final int VERIFY = 0;
    private static final int DELETE = 1;

    private BackupEngine(long handle) {
        super(handle, BackupEngine::nativeFree);
    }

    /** Opens (creating) the backup directory {@code dir}. */
    public static BackupEngine open(String dir) {
        return new BackupEngine(nativeOpen(dir));
    }

    /** Backs up {@code db} as it is now; returns the new backup. */
    public BackupInfo createBackup(Strata db) {
        Strata.requireNonNull(db, "db");
        try {
            return BackupInfo.fromRow(nativeCreate(handle, db.handle), 0);
        } finally {
            Reference.reachabilityFence(db);
        }
    }

    /** The backups in the directory, oldest first. */
    public List<BackupInfo> listBackups() {
        long[] rows = nativeList(handle);
        List<BackupInfo> out = new ArrayList<>();
        for (int at = 0; at + BackupInfo.FIELDS <= rows.length; at += BackupInfo.FIELDS) {
            out.add(BackupInfo.fromRow(rows, at));
        }
        return out;
    }

    /** Checks backup {@code id}'s files (sizes and checksums); throws what is wrong. */
    public void verifyBackup(long id) {
        nativeOnId(handle, VERIFY, id);
    }

    /** Restores backup {@code id} into the directory {@code target} (a database to open). */
    public void restore(long id, String target) {
        nativeRestore(handle, id, target);
    }

    /** Deletes backup {@code id}. */
    public void deleteBackup(long id) {
        nativeOnId(handle, DELETE, id);
    }

    /** Deletes all but the newest {@code keep} backups; returns the ids deleted. */
    public long[] purgeOldBackups(int keep) {
        return nativePurge(handle, keep);
    }

    /** Releases the directory's lock; later calls throw {@link UnavailableException}. */
    @Override
    public void close() {
        nativeClose(handle);
    }

    private static native long nativeOpen(String dir);

    private static native void nativeFree(long h);

    private native void nativeClose(long h);

    private native long[] nativeCreate(long h, long db);

    private native long[] nativeList(long h);

    private native void nativeOnId(long h, int op, long id);

    private native void nativeRestore(long h, long id, String target);

    private native long[] nativePurge(long h, int keep);
}
