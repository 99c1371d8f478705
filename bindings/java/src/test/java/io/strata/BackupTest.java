package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackupTest {
    @TempDir
    Path dir;

    @Test
    void aCheckpointOpensAsADatabase() {
        String checkpoint = dir.resolve("checkpoint").toString();
        try (Strata db = Strata.open(dir.resolve("db"), new Options())) {
            db.put(b("k"), b("v"));
            db.createCheckpoint(checkpoint);
            db.put(b("k"), b("after"));
        }
        try (Strata copy = Strata.open(checkpoint, new Options().createIfMissing(false))) {
            assertArrayEquals(b("v"), copy.get(b("k")));
        }
    }

    @Test
    void backupsAreListedVerifiedRestoredAndPurged() {
        String backups = dir.resolve("backups").toString();
        String restored = dir.resolve("restored").toString();
        try (Strata db = Strata.open(dir.resolve("db"), new Options());
                BackupEngine engine = BackupEngine.open(backups)) {
            db.put(b("k"), b("v1"));
            BackupInfo first = engine.createBackup(db);
            db.put(b("k"), b("v2"));
            BackupInfo second = engine.createBackup(db);
            assertEquals(1, first.id());
            assertEquals(2, second.id());
            assertTrue(first.numFiles() > 0 && first.size() > 0);
            assertEquals(List.of(1L, 2L), engine.listBackups().stream().map(BackupInfo::id)
                    .toList());
            engine.verifyBackup(1);
            engine.restore(1, restored);
            assertThrows(NotFoundException.class, () -> engine.verifyBackup(9));
            InvalidArgumentException negative = assertThrows(InvalidArgumentException.class,
                    () -> engine.verifyBackup(-1));
            assertEquals("invalid argument: backup id -1 is negative", negative.getMessage());
            assertArrayEquals(new long[] {1}, engine.purgeOldBackups(1));
            assertEquals(1, engine.listBackups().size());
        }
        try (Strata copy = Strata.open(restored, new Options())) {
            assertArrayEquals(b("v1"), copy.get(b("k")));
        }
    }

    @Test
    void aClosedBackupEngineThrows() {
        BackupEngine engine = BackupEngine.open(dir.resolve("backups").toString());
        engine.close();
        assertThrows(UnavailableException.class, engine::listBackups);
        engine.close();
        // Its lock is released: the directory opens again.
        try (BackupEngine again = BackupEngine.open(dir.resolve("backups").toString())) {
            assertTrue(again.listBackups().isEmpty());
        }
    }
}
