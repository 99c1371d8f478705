package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Strata#get(byte[], byte[])}: a value read into the caller's array; and the keys and
 * values of the native methods on the hot path (copied to the stack up to 128 bytes, to the
 * heap above) of every length around that bound.
 */
class GetIntoArrayTest {
    private static final byte UNTOUCHED = (byte) 0xEE;

    @TempDir
    Path dir;

    /** {@code length} random bytes. */
    private static byte[] bytes(Random random, int length) {
        byte[] out = new byte[length];
        random.nextBytes(out);
        return out;
    }

    /** Reads {@code key} into arrays of several sizes and checks each against {@code expected}. */
    private static void checkInto(Strata db, ColumnFamily cf, ReadOptions options, byte[] key,
            byte[] expected) {
        int size = expected == null ? 0 : expected.length;
        for (int capacity : new int[] {0, Math.max(0, size - 1), size, size + 7}) {
            byte[] out = new byte[capacity];
            Arrays.fill(out, UNTOUCHED);
            int got = db.get(cf, options, key, out);
            if (expected == null) {
                assertEquals(Strata.NOT_FOUND, got, "a missing key is NOT_FOUND");
                assertArrayEquals(filled(capacity), out, "and the array is left alone");
                continue;
            }
            assertEquals(size, got, "the full size, whatever the array's");
            int copied = Math.min(size, capacity);
            assertArrayEquals(Arrays.copyOf(expected, copied), Arrays.copyOf(out, copied),
                    "as much of the value as fits");
            assertArrayEquals(filled(capacity - copied),
                    Arrays.copyOfRange(out, copied, capacity), "and nothing past it");
        }
    }

    private static byte[] filled(int n) {
        byte[] out = new byte[n];
        Arrays.fill(out, UNTOUCHED);
        return out;
    }

    @Test
    void readsIntoTheCallersArrayAsAModelSays() {
        Random random = new Random(42);
        // Lengths around the native side's stack buffer (128), and far above it.
        int[] lengths = {0, 1, 8, 127, 128, 129, 1000, 70_000};
        Map<String, byte[]> model = new TreeMap<>();
        Map<String, byte[]> keys = new TreeMap<>();
        try (Strata db = Strata.open(dir, new Options())) {
            for (int round = 0; round < 300; round++) {
                byte[] key = bytes(random, lengths[random.nextInt(lengths.length)]);
                String name = Arrays.toString(key);
                keys.put(name, key);
                switch (random.nextInt(4)) {
                    case 0 -> {
                        db.delete(key);
                        model.remove(name);
                    }
                    default -> {
                        byte[] value = bytes(random, lengths[random.nextInt(lengths.length)]);
                        db.put(key, value);
                        model.put(name, value);
                    }
                }
                // Every key seen so far, present or deleted, both ways of reading.
                if (round % 50 == 49) {
                    for (Map.Entry<String, byte[]> e : keys.entrySet()) {
                        byte[] expected = model.get(e.getKey());
                        assertArrayEquals(expected, db.get(e.getValue()));
                        checkInto(db, null, new ReadOptions(), e.getValue(), expected);
                    }
                }
            }
            checkInto(db, null, new ReadOptions(), b("never written"), null);
        }
    }

    @Test
    void readsInAFamilyAndAtASnapshot() {
        try (Strata db = Strata.open(dir, new Options());
                ColumnFamily users = db.createColumnFamily("users", Options.columnFamily())) {
            db.put(users, b("k"), b("old"));
            try (Snapshot snap = db.getSnapshot()) {
                db.put(users, b("k"), b("newer"));
                checkInto(db, users, new ReadOptions().snapshot(snap), b("k"), b("old"));
                checkInto(db, users, new ReadOptions(), b("k"), b("newer"));
                byte[] out = new byte[8];
                assertEquals(5, db.get(users, b("k"), out));
                checkInto(db, null, new ReadOptions(), b("k"), null);
            }
        }
    }

    @Test
    void refusalsNameWhatIsWrong() {
        Strata db = Strata.open(dir, new Options());
        db.put(b("k"), b("v"));
        InvalidArgumentException nullKey = assertThrows(InvalidArgumentException.class,
                () -> db.get((byte[]) null, new byte[1]));
        assertEquals("invalid argument: key is null", nullKey.getMessage());
        InvalidArgumentException nullValue = assertThrows(InvalidArgumentException.class,
                () -> db.get(b("k"), (byte[]) null));
        assertEquals("invalid argument: value is null", nullValue.getMessage());
        assertThrows(InvalidArgumentException.class, () -> db.get(b("missing"), (byte[]) null),
                "a null array is refused even for a missing key");
        Snapshot snap = db.getSnapshot();
        snap.close();
        UnavailableException closedSnapshot = assertThrows(UnavailableException.class,
                () -> db.get(null, new ReadOptions().snapshot(snap), b("k"), new byte[1]));
        assertEquals("unavailable: the snapshot is closed", closedSnapshot.getMessage());
        ColumnFamily users = db.createColumnFamily("users", Options.columnFamily());
        users.close();
        assertThrows(UnavailableException.class, () -> db.get(users, b("k"), new byte[1]));
        db.close();
        UnavailableException closed = assertThrows(UnavailableException.class,
                () -> db.get(b("k"), new byte[1]));
        assertEquals("unavailable: database " + dir + " is closed", closed.getMessage());
    }

    @Test
    void transactionWritesOfEveryLengthAreReadBack() {
        Random random = new Random(7);
        int[] lengths = {0, 127, 128, 129, 5000};
        try (Strata db = Strata.open(dir, new Options())) {
            for (int keyLength : lengths) {
                for (int valueLength : lengths) {
                    byte[] key = bytes(random, keyLength);
                    byte[] value = bytes(random, valueLength);
                    try (Transaction txn = db.beginTransaction()) {
                        txn.put(key, value);
                        assertArrayEquals(value, txn.get(key));
                        txn.commit();
                    }
                    assertArrayEquals(value, db.get(key));
                    try (Transaction txn = db.beginTransaction()) {
                        txn.delete(key);
                        assertNull(txn.getAndCommit(key));
                    }
                    assertNull(db.get(key));
                }
            }
        }
    }
}
