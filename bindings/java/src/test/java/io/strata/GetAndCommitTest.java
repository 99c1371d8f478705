package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Transaction#getAndCommit(byte[])}: a transaction's last read and its commit in one
 * call.
 */
class GetAndCommitTest {
    private static final WriteOptions WRITE = new WriteOptions();

    @TempDir
    Path dir;

    /**
     * One transaction, ended by {@code finish} (given it and a key to read): what it read and
     * what the database held afterwards. Keys are prefixed with {@code p}, so that two runs
     * share a database without seeing each other.
     */
    private static List<String> scenario(Strata db, TransactionOptions options, String p,
            BiFunction<Transaction, byte[], byte[]> finish) {
        List<String> seen = new ArrayList<>();
        db.put(b(p + "k"), b("old"));
        Transaction txn = options == null ? db.beginTransaction()
                : db.beginTransaction(WRITE, options);
        txn.put(b(p + "mine"), b("written in the transaction"));
        // Written by someone else after the transaction began.
        db.put(b(p + "k"), b("new"));
        try (Transaction second = options == null ? db.beginTransaction()
                : db.beginTransaction(WRITE, options)) {
            seen.add(text(finish.apply(second, b(p + "mine"))));
        }
        seen.add(text(finish.apply(txn, b(p + "k"))));
        seen.add(String.valueOf(txn.isActive()));
        seen.add(text(db.get(b(p + "mine"))));
        seen.add(text(db.get(b(p + "k"))));
        return seen;
    }

    private static String text(byte[] value) {
        return value == null ? "null" : new String(value, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void readsAndCommitsAsGetThenCommitDo() {
        BiFunction<Transaction, byte[], byte[]> twoCalls = (txn, key) -> {
            byte[] value = txn.get(key);
            txn.commit();
            return value;
        };
        BiFunction<Transaction, byte[], byte[]> oneCall = Transaction::getAndCommit;
        // Optimistic, pessimistic, pessimistic with a snapshot taken at begin.
        try (Strata db = Strata.open(dir.resolve("optimistic"), new Options())) {
            List<String> expected = scenario(db, null, "a/", twoCalls);
            assertEquals(List.of("null", "old", "false", "written in the transaction", "new"),
                    expected, "a transaction reads as of its begin, and its own writes");
            assertEquals(expected, scenario(db, null, "b/", oneCall));
        }
        try (Strata db = Strata.open(dir.resolve("pessimistic"),
                new Options().transactionDb(true).lockTimeoutMillis(100))) {
            for (boolean snapshot : new boolean[] {false, true}) {
                TransactionOptions options = new TransactionOptions().setSnapshot(snapshot);
                assertEquals(scenario(db, options, "a" + snapshot + "/", twoCalls),
                        scenario(db, options, "b" + snapshot + "/", oneCall));
            }
        }
    }

    @Test
    void aConflictFailsTheCommitAndWritesNothing() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("balance"), b("100"));
            try (Transaction txn = db.beginTransaction()) {
                txn.getForUpdate(null, b("balance"));
                txn.put(b("other"), b("x"));
                db.put(b("balance"), b("50"));
                assertThrows(TransactionConflictException.class,
                        () -> txn.getAndCommit(b("balance")));
                assertFalse(txn.isActive(), "a failed commit ends the transaction");
                InvalidArgumentException after = assertThrows(InvalidArgumentException.class,
                        () -> txn.getAndCommit(b("balance")));
                assertEquals("invalid argument: the transaction was already ended by a failed "
                        + "commit: begin a new one", after.getMessage());
            }
            assertNull(db.get(b("other")));
        }
    }

    @Test
    void aPessimisticTransactionsLocksAreReleased() {
        try (Strata db = Strata.open(dir, new Options().transactionDb(true).lockTimeoutMillis(50));
                Transaction first = db.beginTransaction();
                Transaction second = db.beginTransaction()) {
            first.put(b("seat"), b("alice"));
            assertThrows(LockTimeoutException.class, () -> second.put(b("seat"), b("bob")));
            assertArrayEquals(b("alice"), first.getAndCommit(b("seat")));
            second.put(b("seat"), b("bob"));
            second.commit();
            assertArrayEquals(b("bob"), db.get(b("seat")));
        }
    }

    @Test
    void aTransactionBegunAgainEndsEachTimeInOneCall() {
        try (Strata db = Strata.open(dir, new Options())) {
            Transaction txn = db.beginTransaction(WRITE, (Transaction) null);
            txn.commit();
            for (int i = 0; i < 20; i++) {
                db.put(b("k"), b("v" + i));
                assertSame(txn, db.beginTransaction(WRITE, txn));
                txn.put(b("mine" + i), b("m"));
                assertArrayEquals(b("v" + i), txn.getAndCommit(b("k")));
                assertFalse(txn.isActive());
                assertArrayEquals(b("m"), db.get(b("mine" + i)));
            }
            txn.close();
        }
    }

    @Test
    void refusalsNameWhatIsWrongAndABadReadCommitsNothing() {
        Strata db = Strata.open(dir, new Options());
        Transaction txn = db.beginTransaction();
        txn.put(b("k"), b("v"));
        InvalidArgumentException nullKey = assertThrows(InvalidArgumentException.class,
                () -> txn.getAndCommit(null));
        assertEquals("invalid argument: key is null", nullKey.getMessage());
        assertTrue(txn.isActive(), "a refused read commits nothing: the transaction runs on");
        assertNull(db.get(b("k")));
        ColumnFamily users = db.createColumnFamily("users", Options.columnFamily());
        users.close();
        assertThrows(UnavailableException.class, () -> txn.getAndCommit(users, b("k")));
        assertTrue(txn.isActive());
        try (TransactionCursor cursor = txn.newCursor(null, new ReadOptions())) {
            InvalidArgumentException lent = assertThrows(InvalidArgumentException.class,
                    () -> txn.getAndCommit(b("k")));
            assertTrue(lent.getMessage().contains("TransactionCursor"), lent.getMessage());
        }
        assertArrayEquals(b("v"), txn.getAndCommit(b("k")));
        assertArrayEquals(b("v"), db.get(b("k")));
        InvalidArgumentException ended = assertThrows(InvalidArgumentException.class,
                () -> txn.getAndCommit(b("k")));
        assertEquals("invalid argument: the transaction was already committed: begin a new one",
                ended.getMessage());
        txn.close();

        Transaction open = db.beginTransaction();
        db.close();
        UnavailableException closed = assertThrows(UnavailableException.class,
                () -> open.getAndCommit(b("k")));
        assertEquals("unavailable: the transaction was rolled back when its database was closed",
                closed.getMessage());
        open.close();
    }
}
