package io.strata;

import static io.strata.BasicTest.b;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IteratorTest {
    @TempDir
    Path dir;

    static List<String> forward(StrataIterator it) {
        List<String> keys = new ArrayList<>();
        for (it.seekToFirst(); it.isValid(); it.next()) {
            keys.add(new String(it.key(), UTF_8));
        }
        return keys;
    }

    static List<String> backward(StrataIterator it) {
        List<String> keys = new ArrayList<>();
        for (it.seekToLast(); it.isValid(); it.prev()) {
            keys.add(new String(it.key(), UTF_8));
        }
        return keys;
    }

    private static Strata filled(Path dir) {
        Strata db = Strata.open(dir, new Options());
        for (String k : new String[] {"a", "b", "c", "d", "e"}) {
            db.put(b(k), b("v" + k));
        }
        return db;
    }

    @Test
    void bothDirectionsAndSeeks() {
        try (Strata db = filled(dir); StrataIterator it = db.newIterator()) {
            assertEquals(List.of("a", "b", "c", "d", "e"), forward(it));
            assertEquals(List.of("e", "d", "c", "b", "a"), backward(it));
            assertTrue(it.seek(b("bb")));
            assertArrayEquals(b("c"), it.key());
            assertArrayEquals(b("vc"), it.value());
            assertTrue(it.seekForPrev(b("bb")));
            assertArrayEquals(b("b"), it.key());
            assertFalse(it.seek(b("z")));
        }
    }

    @Test
    void boundsLimitBothDirections() {
        ReadOptions bounded = new ReadOptions().lowerBound(b("b")).upperBound(b("d"));
        try (Strata db = filled(dir); StrataIterator it = db.newIterator(bounded)) {
            assertEquals(List.of("b", "c"), forward(it));
            assertEquals(List.of("c", "b"), backward(it));
        }
    }

    @Test
    void anIteratorReadsAsOfItsSnapshot() {
        try (Strata db = filled(dir); Snapshot snap = db.getSnapshot()) {
            db.delete(b("a"));
            db.put(b("f"), b("vf"));
            try (StrataIterator now = db.newIterator();
                    StrataIterator then = db.newIterator(new ReadOptions().snapshot(snap))) {
                assertEquals(List.of("b", "c", "d", "e", "f"), forward(now));
                assertEquals(List.of("a", "b", "c", "d", "e"), forward(then));
            }
        }
    }

    @Test
    void movingOrReadingOffAnEntryThrows() {
        try (Strata db = filled(dir); StrataIterator it = db.newIterator()) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, it::next);
            assertEquals("invalid argument: next() needs the iterator on an entry (isValid() is "
                    + "false): seek first", e.getMessage());
            assertThrows(InvalidArgumentException.class, it::prev);
            assertThrows(InvalidArgumentException.class, it::key);
            assertThrows(InvalidArgumentException.class, it::value);
            assertThrows(InvalidArgumentException.class, () -> it.seek(null));
        }
    }

    @Test
    void anIteratorThrowsOnceItsDatabaseIsClosed() {
        Strata db = filled(dir);
        StrataIterator it = db.newIterator();
        assertTrue(it.seekToFirst());
        db.close();
        UnavailableException e = assertThrows(UnavailableException.class, it::next);
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
        it.close();
    }

    /** Every entry from the current one on, read one call at a time, as "key=value". */
    private static List<String> walk(StrataIterator it) {
        List<String> entries = new ArrayList<>();
        for (; it.isValid(); it.next()) {
            entries.add(new String(it.key(), UTF_8) + "=" + new String(it.value(), UTF_8));
        }
        return entries;
    }

    /** The same read in batches of at most {@code max} entries into {@code batch}. */
    private static List<String> walkInBatches(StrataIterator it, EntryBatch batch, int max) {
        List<String> entries = new ArrayList<>();
        while (it.readEntries(batch, max) > 0) {
            assertTrue(batch.size() <= max);
            for (int i = 0; i < batch.size(); i++) {
                String key = new String(batch.buffer(), batch.keyOffset(i), batch.keyLength(i), UTF_8);
                assertEquals(key, new String(batch.key(i), UTF_8));
                entries.add(key + "=" + new String(batch.value(i), UTF_8));
            }
        }
        return entries;
    }

    @Test
    void readEntriesReadsWhatNextReadsWhateverTheBatchSize() {
        Random random = new Random(7);
        try (Strata db = Strata.open(dir, new Options().transactionDb(true))) {
            for (int k = 0; k < 300; k++) {
                // Values of 0 to 99 bytes, some longer than a small batch's buffer.
                db.put(b(String.format("k%04d", k)), b("v".repeat(random.nextInt(100))));
            }
            try (Transaction txn = db.beginTransaction()) {
                txn.put(b("k0005"), b("mine"));
                txn.delete(b("k0010"));
                txn.put(b("k1000"), b("new"));
                for (int[] sizes : new int[][] {{0, 1}, {16, 3}, {64, 7}, {4096, 100}, {1 << 16, 1000}}) {
                    EntryBatch batch = new EntryBatch(sizes[0]);
                    ReadOptions bounded = new ReadOptions().lowerBound(b("k0003")).upperBound(b("k0250"));
                    try (StrataIterator one = db.newIterator();
                            StrataIterator many = db.newIterator()) {
                        one.seek(b("k0002"));
                        many.seek(b("k0002"));
                        assertEquals(walk(one), walkInBatches(many, batch, sizes[1]));
                    }
                    try (StrataIterator one = txn.newIterator(null, bounded);
                            StrataIterator many = txn.newIterator(null, bounded)) {
                        one.seekToFirst();
                        many.seekToFirst();
                        List<String> entries = walk(one);
                        assertTrue(entries.contains("k0005=mine"));
                        assertEquals(entries, walkInBatches(many, batch, sizes[1]));
                    }
                }
            }
        }
    }

    @Test
    void readEntriesStopsOnTheFirstEntryNotRead() {
        EntryBatch batch = new EntryBatch();
        try (Strata db = filled(dir); StrataIterator it = db.newIterator()) {
            assertEquals(0, it.readEntries(batch, 5), "off an entry");
            it.seek(b("b"));
            assertEquals(2, it.readEntries(batch, 2));
            assertArrayEquals(b("c"), batch.key(1));
            assertArrayEquals(b("vc"), batch.value(1));
            assertArrayEquals(b("d"), it.key());
            assertEquals(0, it.readEntries(batch, 0));
            assertEquals(0, batch.size());
            assertEquals(2, it.readEntries(batch, 10));
            assertFalse(it.isValid());
            assertThrows(IndexOutOfBoundsException.class, () -> batch.key(2));
            it.seekToFirst();
            InvalidArgumentException e =
                    assertThrows(InvalidArgumentException.class, () -> it.readEntries(batch, -1));
            assertEquals("invalid argument: maxEntries is -1: it must not be negative", e.getMessage());
            it.close();
            assertThrows(UnavailableException.class, () -> it.readEntries(batch, 1));
            InvalidArgumentException negative =
                    assertThrows(InvalidArgumentException.class, () -> new EntryBatch(-1));
            assertEquals("invalid argument: an EntryBatch of -1 bytes: the size must not be negative",
                    negative.getMessage());
        }
    }
}
