package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Transaction#get(byte[], byte[])} and {@link Transaction#getForUpdate(ColumnFamily,
 * byte[], byte[])}: a transaction's read into the caller's array, checked against a model of
 * the database and of the transaction's own writes, with keys and values of every length
 * around the native side's 128-byte stack buffer.
 */
class TransactionGetIntoArrayTest {
    private static final byte UNTOUCHED = (byte) 0xEE;
    private static final WriteOptions WRITE = new WriteOptions();

    @TempDir
    Path dir;

    private static byte[] filled(int n) {
        byte[] out = new byte[n];
        Arrays.fill(out, UNTOUCHED);
        return out;
    }

    /** How a test reads a key into an array: plain or for update. */
    private interface IntoRead {
        int read(Transaction txn, ColumnFamily cf, byte[] key, byte[] out);
    }

    private static final IntoRead PLAIN = Transaction::get;
    private static final IntoRead FOR_UPDATE = Transaction::getForUpdate;

    /** The model's read: plain in even rounds, for update in odd ones. */
    private static final TransactionReadModel.Check MODEL_READ = (txn, key, expected, round) ->
            checkInto(txn, null, round % 2 == 0 ? PLAIN : FOR_UPDATE, key, expected);

    /**
     * Reads {@code key} through {@code how} into arrays of several sizes and checks each
     * against {@code expected}, and against the read that returns a new array.
     */
    private static void checkInto(Transaction txn, ColumnFamily cf, IntoRead how, byte[] key,
            byte[] expected) {
        assertArrayEquals(expected, txn.get(cf, key), "the read into a new array agrees");
        int size = expected == null ? 0 : expected.length;
        for (int capacity : new int[] {0, Math.max(0, size - 1), size, size + 7}) {
            byte[] out = filled(capacity);
            int got = how.read(txn, cf, key, out);
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

    @Test
    void readsIntoTheCallersArrayAsAModelSays() {
        try (Strata db = Strata.open(dir.resolve("optimistic"), new Options())) {
            TransactionReadModel.run(db, null, 42, MODEL_READ);
        }
        try (Strata db = Strata.open(dir.resolve("pessimistic"),
                new Options().transactionDb(true))) {
            TransactionReadModel.run(db, new TransactionOptions(), 43, MODEL_READ);
            TransactionReadModel.run(db, new TransactionOptions().setSnapshot(true), 44,
                    MODEL_READ);
        }
    }

    @Test
    void readsInAFamilyAtTheTransactionsSnapshot() {
        try (Strata db = Strata.open(dir, new Options().transactionDb(true));
                ColumnFamily users = db.createColumnFamily("users", Options.columnFamily())) {
            db.put(users, b("k"), b("old"));
            try (Transaction txn = db.beginTransaction(WRITE,
                    new TransactionOptions().setSnapshot(true))) {
                db.put(users, b("k"), b("newer"));
                checkInto(txn, users, PLAIN, b("k"), b("old"));
                checkInto(txn, null, PLAIN, b("k"), null);
                txn.put(users, b("k2"), b("mine"));
                checkInto(txn, users, PLAIN, b("k2"), b("mine"));
                txn.commit();
            }
        }
    }

    @Test
    void getForUpdateIntoAnArrayLocksTheKey() {
        try (Strata db = Strata.open(dir, new Options().transactionDb(true))) {
            db.put(b("seat"), b("alice"));
            TransactionOptions quick = new TransactionOptions().lockTimeoutMillis(50);
            try (Transaction txn = db.beginTransaction(WRITE, quick)) {
                byte[] out = new byte[16];
                assertEquals(5, txn.getForUpdate(null, b("seat"), out));
                assertArrayEquals(b("alice"), Arrays.copyOf(out, 5));
                assertThrows(LockTimeoutException.class, () -> db.put(b("seat"), b("carol")),
                        "the key read for update is locked");
                txn.commit();
            }
            db.put(b("seat"), b("carol"));
        }
        try (Strata db = Strata.open(dir.resolve("optimistic"), new Options())) {
            db.put(b("hot"), b("0"));
            Transaction txn = db.beginTransaction();
            assertEquals(1, txn.getForUpdate(null, b("hot"), new byte[1]));
            db.put(b("hot"), b("1"));
            assertThrows(TransactionConflictException.class, txn::commit,
                    "the key read for update is guarded");
        }
    }

    @Test
    void refusalsNameWhatIsWrong() {
        Strata db = Strata.open(dir, new Options());
        db.put(b("k"), b("v"));
        Transaction txn = db.beginTransaction();
        InvalidArgumentException nullKey = assertThrows(InvalidArgumentException.class,
                () -> txn.get((byte[]) null, new byte[1]));
        assertEquals("invalid argument: key is null", nullKey.getMessage());
        for (IntoRead how : new IntoRead[] {PLAIN, FOR_UPDATE}) {
            InvalidArgumentException nullValue = assertThrows(InvalidArgumentException.class,
                    () -> how.read(txn, null, b("k"), null));
            assertEquals("invalid argument: value is null", nullValue.getMessage());
            assertThrows(InvalidArgumentException.class,
                    () -> how.read(txn, null, b("missing"), null),
                    "a null array is refused even for a missing key");
        }
        assertTrue(txn.isActive(), "refused reads leave the transaction running");
        ColumnFamily users = db.createColumnFamily("users", Options.columnFamily());
        users.close();
        assertThrows(UnavailableException.class, () -> txn.get(users, b("k"), new byte[1]));
        try (TransactionCursor cursor = txn.newCursor(null, new ReadOptions())) {
            InvalidArgumentException lent = assertThrows(InvalidArgumentException.class,
                    () -> txn.get(b("k"), new byte[1]));
            assertTrue(lent.getMessage().contains("close it first"), lent.getMessage());
        }
        assertEquals(1, txn.get(b("k"), new byte[1]), "usable again once the cursor is closed");
        txn.commit();
        InvalidArgumentException ended = assertThrows(InvalidArgumentException.class,
                () -> txn.get(b("k"), new byte[1]));
        assertEquals("invalid argument: the transaction was already committed: begin a new one",
                ended.getMessage());
        db.beginTransaction(WRITE, txn);
        db.close();
        UnavailableException closed = assertThrows(UnavailableException.class,
                () -> txn.getForUpdate(null, b("k"), new byte[1]));
        assertEquals("unavailable: the transaction was rolled back when its database was closed",
                closed.getMessage());
    }
}
