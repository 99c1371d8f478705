package io.strata;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReadOptions#fillCache(boolean)} and {@link ReadOptions#verifyChecksums(boolean)}
 * reach every read: reads that do not fill the cache leave it as it was, and reads that do
 * not verify return a damaged value where the others throw {@link CorruptionException}.
 */
class ReadOptionsBlocksTest {
    @TempDir
    Path dir;

    private static final int KEYS = 2_000;

    private static byte[] key(int i) {
        return String.format("key%05d", i).getBytes(UTF_8);
    }

    private static byte[] value(int i) {
        return (String.format("value-of-%05d-", i) + "v".repeat(80)).getBytes(UTF_8);
    }

    private static Options options() {
        return new Options().set("compression", "none").set("block_cache_size", 64 << 20);
    }

    /** Writes the keys into one table and closes the database. */
    private void build() {
        try (Strata db = Strata.open(dir, options())) {
            for (int i = 0; i < KEYS; i++) {
                db.put(key(i), value(i));
            }
            db.flush();
        }
    }

    @Test
    void readsThatDoNotFillTheCacheLeaveItAsItWas() {
        build();
        try (Strata db = Strata.open(dir, options())) {
            long before = db.getLongProperty("strata.block-cache-usage");
            ReadOptions noFill = new ReadOptions().fillCache(false);
            List<byte[]> keys = new ArrayList<>();
            for (int i = 0; i < KEYS; i += 5) {
                assertArrayEquals(value(i), db.get(null, noFill, key(i)));
                byte[] into = new byte[200];
                assertEquals(value(i).length, db.get(null, noFill, key(i), into));
                ByteBuffer k = ByteBuffer.allocateDirect(16).put(key(i)).flip();
                assertEquals(value(i).length, db.get(null, noFill, k, ByteBuffer.allocateDirect(200)));
                keys.add(key(i));
            }
            assertEquals(keys.size(), db.multiGet(null, noFill, keys).size());
            try (StrataIterator it = db.newIterator(noFill)) {
                int n = 0;
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    n++;
                }
                assertEquals(KEYS, n);
            }
            assertEquals(before, db.getLongProperty("strata.block-cache-usage"));
            for (int i = 0; i < KEYS; i += 5) {
                db.get(key(i));
            }
            assertTrue(db.getLongProperty("strata.block-cache-usage") > before);
        }
    }

    /** The table file holding {@code needle}, with one of its bytes changed. */
    private void damage(byte[] needle) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path table : files.filter(p -> p.toString().endsWith(".sst")).toList()) {
                byte[] bytes = Files.readAllBytes(table);
                for (int at = 0; at + needle.length <= bytes.length; at++) {
                    int i = 0;
                    while (i < needle.length && bytes[at + i] == needle[i]) {
                        i++;
                    }
                    if (i == needle.length) {
                        bytes[at + 3] ^= 0x20;
                        Files.write(table, bytes);
                        return;
                    }
                }
            }
        }
        throw new AssertionError("no table holds the value");
    }

    @Test
    void aDamagedValueIsReportedOnlyByReadsThatVerify() throws IOException {
        build();
        damage(value(7));
        byte[] damaged = value(7);
        damaged[3] ^= 0x20;
        try (Strata db = Strata.open(dir, options())) {
            ReadOptions unchecked = new ReadOptions().fillCache(false).verifyChecksums(false);
            assertArrayEquals(damaged, db.get(null, unchecked, key(7)));
            assertThrows(CorruptionException.class, () -> db.get(key(7)));
            assertThrows(CorruptionException.class,
                    () -> db.get(null, new ReadOptions().fillCache(false), key(7)));
            assertArrayEquals(damaged, db.multiGet(null, unchecked, List.of(key(7))).get(0));
            try (StrataIterator it = db.newIterator(unchecked)) {
                assertTrue(it.seek(key(7)));
                assertArrayEquals(damaged, it.value());
            }
            try (Transaction txn = db.beginTransaction(new WriteOptions());
                    StrataIterator it = txn.newIterator(null, unchecked)) {
                assertTrue(it.seek(key(7)));
                assertArrayEquals(damaged, it.value());
            }
            try (StrataIterator it = db.newIterator()) {
                assertThrows(CorruptionException.class, () -> it.seek(key(7)));
            }
        }
    }
}
