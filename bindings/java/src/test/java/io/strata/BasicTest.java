package io.strata;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BasicTest {
    @TempDir
    Path dir;

    static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    @Test
    void putGetDeleteAndReopen() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("apple"), b("red"));
            db.put(b("banana"), b("yellow"));
            db.delete(b("banana"));
            assertArrayEquals(b("red"), db.get(b("apple")));
            assertNull(db.get(b("banana")));
            assertNull(db.get(b("cherry")));
        }
        try (Strata db = Strata.open(dir, new Options().createIfMissing(false))) {
            assertArrayEquals(b("red"), db.get(b("apple")));
        }
    }

    @Test
    void directBuffersAreReadAndWrittenInPlace() {
        try (Strata db = Strata.open(dir, new Options())) {
            ByteBuffer key = ByteBuffer.allocateDirect(16);
            ByteBuffer value = ByteBuffer.allocateDirect(16);
            key.put(b("k1")).flip();
            value.put(b("value-1")).flip();
            db.put(key, value);
            assertEquals(0, key.position(), "the key's position does not move");
            assertArrayEquals(b("value-1"), db.get(b("k1")));

            ByteBuffer out = ByteBuffer.allocateDirect(4);
            int size = db.get(key, out);
            assertEquals(7, size, "the full size of the value");
            assertEquals(4, out.limit(), "as many bytes as fit");
            byte[] first = new byte[4];
            out.get(first);
            assertArrayEquals(b("valu"), first);

            ByteBuffer missing = ByteBuffer.allocateDirect(8).put(b("nope")).flip();
            assertEquals(Strata.NOT_FOUND, db.get(missing, ByteBuffer.allocateDirect(8)));

            // One buffer as both key and value: the key is read before the value is written.
            ByteBuffer both = ByteBuffer.allocateDirect(16).put(b("k1")).flip();
            ByteBuffer same = both.duplicate().limit(16);
            assertEquals(7, db.get(both, same));
            byte[] written = new byte[7];
            same.get(written);
            assertArrayEquals(b("value-1"), written);

            InvalidArgumentException readOnly = assertThrows(InvalidArgumentException.class,
                    () -> db.get(key, ByteBuffer.allocateDirect(8).asReadOnlyBuffer()));
            assertEquals("invalid argument: value is a read-only buffer", readOnly.getMessage());
        }
    }

    @Test
    void heapBuffersWorkToo() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(ByteBuffer.wrap(b("heap")), ByteBuffer.wrap(b("value")));
            ByteBuffer out = ByteBuffer.allocate(32);
            assertEquals(5, db.get(ByteBuffer.wrap(b("heap")), out));
            assertEquals(5, out.remaining());
            // A direct key with a heap value: copied through an array.
            ByteBuffer key = ByteBuffer.allocateDirect(4).put(b("heap")).flip();
            assertEquals(5, db.get(key, ByteBuffer.allocate(8)));
        }
    }

    @Test
    void multiGetReturnsNullForMissingKeys() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("a"), b("1"));
            db.put(b("c"), b("3"));
            List<byte[]> values = db.multiGet(Arrays.asList(b("a"), b("b"), b("c")));
            assertArrayEquals(b("1"), values.get(0));
            assertNull(values.get(1));
            assertArrayEquals(b("3"), values.get(2));
        }
    }

    @Test
    void deleteRangeAndMerge() {
        try (Strata db = Strata.open(dir, new Options().mergeOperator("uint64add"))) {
            for (String k : new String[] {"a", "b", "c", "d"}) {
                db.put(b(k), b(k));
            }
            db.deleteRange(b("b"), b("d"));
            assertNull(db.get(b("b")));
            assertNull(db.get(b("c")));
            assertArrayEquals(b("d"), db.get(b("d")));

            byte[] one = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(1).array();
            db.merge(b("counter"), one);
            db.merge(b("counter"), one);
            long total = ByteBuffer.wrap(db.get(b("counter"))).order(ByteOrder.LITTLE_ENDIAN)
                    .getLong();
            assertEquals(2, total);
        }
    }

    @Test
    void writeBatchIsAtomicAndKept() {
        try (Strata db = Strata.open(dir, new Options());
                WriteBatch batch = new WriteBatch()) {
            db.put(b("gone"), b("x"));
            batch.put(b("k1"), b("v1")).put(b("k2"), b("v2")).delete(b("gone"));
            assertEquals(3, batch.count());
            db.write(batch, new WriteOptions().sync(true));
            assertArrayEquals(b("v2"), db.get(b("k2")));
            assertNull(db.get(b("gone")));
            assertEquals(3, batch.count(), "write leaves the batch as it was");
            batch.clear();
            assertEquals(0, batch.count());
        }
    }

    @Test
    void aBatchWithABadRangeWritesNothing() {
        try (Strata db = Strata.open(dir, new Options());
                WriteBatch batch = new WriteBatch()) {
            batch.put(b("k"), b("v")).deleteRange(b("z"), b("a"));
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> db.write(batch));
            assertTrue(e.getMessage().contains("begin key 'z' is after end key 'a'"),
                    e.getMessage());
            assertEquals(ErrorKind.INVALID_ARGUMENT, e.kind());
            assertNull(db.get(b("k")));
        }
    }

    @Test
    void badArgumentsNameWhatIsWrong() {
        try (Strata db = Strata.open(dir, new Options())) {
            InvalidArgumentException nullKey = assertThrows(InvalidArgumentException.class,
                    () -> db.get((byte[]) null));
            assertEquals("invalid argument: key is null", nullKey.getMessage());
            InvalidArgumentException nullValue = assertThrows(InvalidArgumentException.class,
                    () -> db.put(b("k"), null));
            assertEquals("invalid argument: value is null", nullValue.getMessage());
            InvalidArgumentException range = assertThrows(InvalidArgumentException.class,
                    () -> db.deleteRange(b("b"), b("a")));
            assertTrue(range.getMessage().contains("after end key"), range.getMessage());
            InvalidArgumentException merge = assertThrows(InvalidArgumentException.class,
                    () -> db.merge(b("k"), b("1")));
            assertTrue(merge.getMessage().contains("merge operator"), merge.getMessage());
        }
    }

    @Test
    void badOptionsAreRefusedNamingTheOption() {
        InvalidArgumentException unknown = assertThrows(InvalidArgumentException.class,
                () -> Strata.open(dir, new Options().set("write_bufer_size", 1)));
        assertEquals("invalid argument: unknown option 'write_bufer_size'",
                unknown.getMessage());
        InvalidArgumentException value = assertThrows(InvalidArgumentException.class,
                () -> Strata.open(dir, new Options().set("write_buffer_size", "big")));
        assertTrue(value.getMessage().startsWith(
                "invalid argument: option write_buffer_size: cannot read 'big' as a whole number, not negative"),
                value.getMessage());
        InvalidArgumentException choice = assertThrows(InvalidArgumentException.class,
                () -> Strata.open(dir, new Options().compression("gzip")));
        assertEquals("invalid argument: option compression: unknown value 'gzip' "
                + "(none, snappy, lz4 or zstd)", choice.getMessage());
    }

    @Test
    void openingAMissingDatabaseIsNotFound() {
        NotFoundException e = assertThrows(NotFoundException.class,
                () -> Strata.open(dir.resolve("missing"), new Options().createIfMissing(false)));
        assertEquals(ErrorKind.NOT_FOUND, e.kind());
    }

    @Test
    void aSecondOpenIsBusy() {
        try (Strata db = Strata.open(dir, new Options())) {
            BusyException e = assertThrows(BusyException.class,
                    () -> Strata.open(dir, new Options()));
            assertEquals(ErrorKind.BUSY, e.kind());
        }
    }

    @Test
    void callsAfterCloseThrowAndCloseTwiceIsAllowed() {
        Strata db = Strata.open(dir, new Options());
        db.put(b("k"), b("v"));
        Snapshot snap = db.getSnapshot();
        StrataIterator it = db.newIterator();
        WriteBatch batch = new WriteBatch().put(b("x"), b("y"));
        db.close();
        db.close();
        assertTrue(db.isClosed());
        UnavailableException e = assertThrows(UnavailableException.class, () -> db.get(b("k")));
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
        assertThrows(UnavailableException.class, () -> db.put(b("k"), b("v")));
        assertThrows(UnavailableException.class, () -> db.write(batch));
        assertThrows(UnavailableException.class, it::seekToFirst);
        assertThrows(UnavailableException.class, db::getSnapshot);
        assertThrows(UnavailableException.class, () -> db.get(ByteBuffer.allocateDirect(1),
                ByteBuffer.allocateDirect(1)));
        snap.close();
        snap.close();
        assertThrows(UnavailableException.class, snap::sequence);
        batch.close();
        assertThrows(UnavailableException.class, batch::count);
        it.close();
        assertThrows(UnavailableException.class, it::isValid);
        // The database can be opened again: close released its lock.
        try (Strata again = Strata.open(dir, new Options())) {
            assertArrayEquals(b("v"), again.get(b("k")));
        }
    }

    @Test
    void snapshotsReadTheirMoment() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("k"), b("old"));
            try (Snapshot snap = db.getSnapshot()) {
                db.put(b("k"), b("new"));
                ReadOptions at = new ReadOptions().snapshot(snap);
                assertArrayEquals(b("old"), db.get(null, at, b("k")));
                assertArrayEquals(b("new"), db.get(b("k")));
                assertTrue(snap.sequence() > 0);
                assertArrayEquals(b("old"), db.multiGet(null, at, List.of(b("k"))).get(0));
            }
        }
    }

    @Test
    void aClosedSnapshotCannotBeReadThrough() {
        try (Strata db = Strata.open(dir, new Options())) {
            Snapshot snap = db.getSnapshot();
            snap.close();
            UnavailableException e = assertThrows(UnavailableException.class,
                    () -> db.get(null, new ReadOptions().snapshot(snap), b("k")));
            assertEquals("unavailable: the snapshot is closed", e.getMessage());
        }
    }

    @Test
    void propertiesAndStatistics() {
        try (Strata db = Strata.open(dir, new Options())) {
            for (int i = 0; i < 100; i++) {
                db.put(b("key" + i), b("value" + i));
            }
            db.flush();
            assertEquals(1, db.getLongProperty("strata.num-files-at-level0"));
            assertNull(db.getProperty("strata.no-such-property"));
            assertThrows(InvalidArgumentException.class,
                    () -> db.getLongProperty("strata.no-such-property"));
            String stats = db.statistics();
            assertFalse(stats.isEmpty());
            Map<String, Long> numbers = db.statisticsMap();
            assertEquals(100L, numbers.get("keys_written"));
            assertEquals(1L, numbers.get("flushes"));
            assertEquals(1L, numbers.get("level0_files"));
            db.resetStatistics();
            db.compactRange();
            assertArrayEquals(b("value7"), db.get(b("key7")));
        }
    }
}
