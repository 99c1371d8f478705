package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Transaction#get(ByteBuffer, ByteBuffer)} and {@link
 * Transaction#getForUpdate(ColumnFamily, ByteBuffer, ByteBuffer)}: a transaction's read from a
 * key buffer into a value buffer, direct (read and written in place) or on the heap, checked
 * against a model of the database and of the transaction's own writes.
 */
class TransactionDirectBufferTest {
    private static final byte UNTOUCHED = (byte) 0xEE;
    private static final WriteOptions WRITE = new WriteOptions();
    /** Where the key and the value start in their buffers: not at 0, to check positions. */
    private static final int KEY_AT = 3;
    private static final int VALUE_AT = 5;

    @TempDir
    Path dir;

    /** {@code key} at position {@link #KEY_AT} of a buffer with bytes after it too. */
    private static ByteBuffer keyBuffer(byte[] key, boolean direct) {
        ByteBuffer buffer = direct ? ByteBuffer.allocateDirect(KEY_AT + key.length + 4)
                : ByteBuffer.allocate(KEY_AT + key.length + 4);
        buffer.position(KEY_AT);
        buffer.put(key);
        buffer.put(new byte[] {9, 9, 9, 9});
        buffer.position(KEY_AT).limit(KEY_AT + key.length);
        return buffer;
    }

    /** A buffer of {@code capacity} bytes for a value from {@link #VALUE_AT}, filled. */
    private static ByteBuffer valueBuffer(int capacity, boolean direct) {
        int total = VALUE_AT + capacity + 2;
        ByteBuffer buffer = direct ? ByteBuffer.allocateDirect(total) : ByteBuffer.allocate(total);
        for (int i = 0; i < total; i++) {
            buffer.put(i, UNTOUCHED);
        }
        buffer.position(VALUE_AT).limit(VALUE_AT + capacity);
        return buffer;
    }

    /** How a test reads a key into a buffer: plain or for update. */
    private interface BufferRead {
        int read(Transaction txn, ColumnFamily cf, ByteBuffer key, ByteBuffer out);
    }

    private static final BufferRead PLAIN = Transaction::get;
    private static final BufferRead FOR_UPDATE = Transaction::getForUpdate;

    /** The model's read: plain in even rounds, for update in odd ones. */
    private static final TransactionReadModel.Check MODEL_READ = (txn, key, expected, round) ->
            checkRead(txn, null, round % 2 == 0 ? PLAIN : FOR_UPDATE, key, expected);

    /**
     * Reads {@code key} through {@code how} into buffers of several sizes, direct and not, and
     * checks each against {@code expected}: the size returned, the bytes written and none
     * past them, the value buffer's limit, and both positions unmoved.
     */
    private static void checkRead(Transaction txn, ColumnFamily cf, BufferRead how, byte[] key,
            byte[] expected) {
        int size = expected == null ? 0 : expected.length;
        for (boolean direct : new boolean[] {true, false}) {
            for (int capacity : new int[] {0, Math.max(0, size - 1), size, size + 7}) {
                ByteBuffer keys = keyBuffer(key, direct);
                ByteBuffer out = valueBuffer(capacity, direct);
                int got = how.read(txn, cf, keys, out);
                String what = (direct ? "direct" : "heap") + " buffers of " + capacity;
                assertEquals(KEY_AT, keys.position(), what + ": the key's position stays");
                assertEquals(VALUE_AT, out.position(), what + ": the value's position stays");
                int copied = expected == null ? 0 : Math.min(size, capacity);
                if (expected == null) {
                    assertEquals(Strata.NOT_FOUND, got, what + ": a missing key");
                    assertEquals(VALUE_AT + capacity, out.limit(), what + ": limit unchanged");
                } else {
                    assertEquals(size, got, what + ": the full size");
                    assertEquals(VALUE_AT + copied, out.limit(), what + ": limit after it");
                }
                byte[] written = new byte[copied];
                out.duplicate().get(written);
                assertArrayEquals(expected == null ? new byte[0]
                        : Arrays.copyOf(expected, copied), written, what + ": the bytes");
                ByteBuffer whole = out.duplicate().clear();
                for (int i = 0; i < whole.capacity(); i++) {
                    if (i < VALUE_AT || i >= VALUE_AT + copied) {
                        assertEquals(UNTOUCHED, whole.get(i), what + ": nothing else, at " + i);
                    }
                }
            }
        }
    }

    @Test
    void readsIntoBuffersAsAModelSays() {
        try (Strata db = Strata.open(dir.resolve("optimistic"), new Options())) {
            TransactionReadModel.run(db, null, 52, MODEL_READ);
        }
        try (Strata db = Strata.open(dir.resolve("pessimistic"),
                new Options().transactionDb(true))) {
            TransactionReadModel.run(db, new TransactionOptions(), 53, MODEL_READ);
            TransactionReadModel.run(db, new TransactionOptions().setSnapshot(true), 54,
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
                checkRead(txn, users, PLAIN, b("k"), b("old"));
                checkRead(txn, null, PLAIN, b("k"), null);
                txn.put(users, b("k2"), b("mine"));
                checkRead(txn, users, PLAIN, b("k2"), b("mine"));
                txn.commit();
            }
        }
    }

    @Test
    void getForUpdateIntoABufferLocksTheKey() {
        try (Strata db = Strata.open(dir, new Options().transactionDb(true))) {
            db.put(b("seat"), b("alice"));
            TransactionOptions quick = new TransactionOptions().lockTimeoutMillis(50);
            try (Transaction txn = db.beginTransaction(WRITE, quick)) {
                ByteBuffer out = ByteBuffer.allocateDirect(16);
                assertEquals(5, txn.getForUpdate(null, keyBuffer(b("seat"), true), out));
                byte[] got = new byte[out.remaining()];
                out.get(got);
                assertArrayEquals(b("alice"), got);
                assertThrows(LockTimeoutException.class, () -> db.put(b("seat"), b("carol")),
                        "the key read for update is locked");
                txn.commit();
            }
            db.put(b("seat"), b("carol"));
        }
        try (Strata db = Strata.open(dir.resolve("optimistic"), new Options())) {
            db.put(b("hot"), b("0"));
            Transaction txn = db.beginTransaction();
            assertEquals(1, txn.getForUpdate(null, keyBuffer(b("hot"), true),
                    ByteBuffer.allocateDirect(1)));
            db.put(b("hot"), b("1"));
            assertThrows(TransactionConflictException.class, txn::commit,
                    "the key read for update is guarded");
        }
    }

    @Test
    void refusalsNameWhatIsWrong() {
        try (Strata db = Strata.open(dir, new Options().transactionDb(true))) {
            db.put(b("k"), b("v"));
            TransactionOptions quick = new TransactionOptions().lockTimeoutMillis(50);
            Transaction txn = db.beginTransaction(WRITE, quick);
            ByteBuffer key = keyBuffer(b("k"), true);
            InvalidArgumentException nullKey = assertThrows(InvalidArgumentException.class,
                    () -> txn.get((ByteBuffer) null, ByteBuffer.allocateDirect(1)));
            assertTrue(nullKey.getMessage().contains("key"), nullKey.getMessage());
            for (BufferRead how : new BufferRead[] {PLAIN, FOR_UPDATE}) {
                InvalidArgumentException nullValue = assertThrows(
                        InvalidArgumentException.class, () -> how.read(txn, null, key, null));
                assertTrue(nullValue.getMessage().contains("value"), nullValue.getMessage());
                InvalidArgumentException readOnly = assertThrows(
                        InvalidArgumentException.class, () -> how.read(txn, null, key,
                                ByteBuffer.allocateDirect(4).asReadOnlyBuffer()));
                assertEquals("invalid argument: value is a read-only buffer",
                        readOnly.getMessage());
            }
            // The refused reads for update took no lock.
            try (Transaction other = db.beginTransaction(WRITE, quick)) {
                other.put(b("k"), b("w"));
                other.commit();
            }
            assertTrue(txn.isActive(), "refused reads leave the transaction running");
            ByteBuffer heap = ByteBuffer.allocate(4);
            assertEquals(1, txn.get(keyBuffer(b("k"), false), heap), "heap buffers are read");
            txn.rollback();
            InvalidArgumentException ended = assertThrows(InvalidArgumentException.class,
                    () -> txn.get(key, ByteBuffer.allocateDirect(4)));
            assertEquals("invalid argument: the transaction was already rolled back: begin a "
                    + "new one", ended.getMessage());
            txn.close();
        }
    }
}
