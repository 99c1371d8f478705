package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TransactionTest {
    @TempDir
    Path dir;

    private Strata pessimistic() {
        return Strata.open(dir, new Options().transactionDb(true).lockTimeoutMillis(100));
    }

    @Test
    void optimisticCommitAppliesItsWrites() {
        try (Strata db = Strata.open(dir, new Options())) {
            try (Transaction txn = db.beginTransaction()) {
                txn.put(b("a"), b("1"));
                txn.put(b("b"), b("2"));
                txn.delete(b("b"));
                assertArrayEquals(b("1"), txn.get(b("a")), "reads see the transaction's writes");
                assertNull(db.get(b("a")), "the database does not, before commit");
                txn.commit();
                assertFalse(txn.isActive());
            }
            assertArrayEquals(b("1"), db.get(b("a")));
            assertNull(db.get(b("b")));
        }
    }

    @Test
    void optimisticConflictFailsTheCommitAndWritesNothing() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("balance"), b("100"));
            try (Transaction txn = db.beginTransaction()) {
                txn.getForUpdate(null, b("balance"));
                txn.put(b("other"), b("x"));
                db.put(b("balance"), b("50"));
                TransactionConflictException e = assertThrows(
                        TransactionConflictException.class, txn::commit);
                assertEquals(ErrorKind.BUSY, e.kind());
                assertTrue(e instanceof BusyException);
                assertFalse(txn.isActive());
                InvalidArgumentException after = assertThrows(InvalidArgumentException.class,
                        () -> txn.put(b("k"), b("v")));
                assertEquals("invalid argument: the transaction was already ended by a failed "
                        + "commit: begin a new one", after.getMessage());
            }
            assertNull(db.get(b("other")));
        }
    }

    @Test
    void savePointsUndoTheWritesSince() {
        try (Strata db = Strata.open(dir, new Options());
                Transaction txn = db.beginTransaction()) {
            txn.put(b("kept"), b("1"));
            txn.setSavePoint();
            txn.put(b("undone"), b("2"));
            txn.rollbackToSavePoint();
            assertNull(txn.get(b("undone")));
            assertThrows(NotFoundException.class, txn::rollbackToSavePoint);
            txn.commit();
            assertArrayEquals(b("1"), db.get(b("kept")));
            assertNull(db.get(b("undone")));
        }
    }

    @Test
    void pessimisticLocksTimeOut() {
        try (Strata db = pessimistic();
                Transaction first = db.beginTransaction();
                Transaction second = db.beginTransaction()) {
            first.put(b("seat"), b("alice"));
            LockTimeoutException e = assertThrows(LockTimeoutException.class,
                    () -> second.put(b("seat"), b("bob")));
            assertTrue(e instanceof TransactionException);
            assertTrue(second.isActive(), "a failed lock leaves the transaction running");
            // A plain write waits for the lock too, and times out.
            assertThrows(LockTimeoutException.class, () -> db.put(b("seat"), b("carol")));
            first.commit();
            second.put(b("seat"), b("bob"));
            second.commit();
            assertArrayEquals(b("bob"), db.get(b("seat")));
        }
    }

    @Test
    void pessimisticOptionsNeedATransactionDb() {
        try (Strata db = Strata.open(dir, new Options())) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> db.beginTransaction(new WriteOptions(), new TransactionOptions()));
            assertTrue(e.getMessage().contains("transactionDb"), e.getMessage());
            try (Transaction txn = db.beginTransaction()) {
                assertThrows(InvalidArgumentException.class, () -> txn.setName("t"));
                assertThrows(InvalidArgumentException.class, txn::prepare);
            }
        }
        assertThrows(InvalidArgumentException.class,
                () -> new TransactionOptions().lockTimeoutMillis(-1));
    }

    @Test
    void transactionOpenOptionsThatDoNotFitAreRefused() {
        InvalidArgumentException timeout = assertThrows(InvalidArgumentException.class,
                () -> Strata.open(dir, new Options().lockTimeoutMillis(5)));
        assertEquals("invalid argument: option lock_timeout_ms needs transaction_db: only "
                + "pessimistic transactions take locks", timeout.getMessage());
        InvalidArgumentException readOnly = assertThrows(InvalidArgumentException.class,
                () -> Strata.open(dir, new Options().transactionDb(true).readOnly(true)));
        assertEquals("invalid argument: transaction_db and read_only cannot be combined: a "
                + "read-only database has no transactions", readOnly.getMessage());
    }

    @Test
    void expirationFailsTheCommit() throws InterruptedException {
        try (Strata db = pessimistic();
                Transaction txn = db.beginTransaction(new WriteOptions(),
                        new TransactionOptions().expirationMillis(1))) {
            txn.put(b("k"), b("v"));
            Thread.sleep(20);
            // Another writer takes the expired lock.
            db.put(b("k"), b("other"));
            assertThrows(TransactionExpiredException.class, txn::commit);
            assertArrayEquals(b("other"), db.get(b("k")));
        }
    }

    @Test
    void twoPhaseCommitSurvivesAReopen() {
        try (Strata db = pessimistic()) {
            Transaction txn = db.beginTransaction();
            txn.setName("transfer-1");
            assertEquals("transfer-1", txn.name());
            txn.put(b("k"), b("prepared"));
            txn.prepare();
            txn.close(); // a prepared transaction stays prepared
            assertNull(db.get(b("k")));
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    txn::commit);
            assertTrue(e.getMessage().contains("closed after prepare"), e.getMessage());
            // Closing the database leaves a prepared transaction prepared too.
            Transaction second = db.beginTransaction();
            second.setName("transfer-2");
            second.put(b("k2"), b("prepared"));
            second.prepare();
        }
        try (Strata db = pessimistic()) {
            List<Transaction> recovered = db.recoveredTransactions();
            assertEquals(2, recovered.size());
            for (Transaction txn : recovered) {
                assertTrue(txn.name().startsWith("transfer-"), txn.name());
                txn.commit();
                txn.close();
            }
            assertArrayEquals(b("prepared"), db.get(b("k")));
            assertArrayEquals(b("prepared"), db.get(b("k2")));
            assertTrue(db.recoveredTransactions().isEmpty());
        }
    }

    @Test
    void closeAfterCommitOrRollbackKeepsHowItEnded() {
        try (Strata db = pessimistic()) {
            Transaction committed = db.beginTransaction();
            committed.setName("committed");
            committed.put(b("c"), b("1"));
            committed.prepare();
            committed.commit();
            committed.close(); // committed: not parked as prepared
            committed.close();
            Transaction rolledBack = db.beginTransaction();
            rolledBack.put(b("r"), b("1"));
            rolledBack.rollback();
            rolledBack.close();
            assertThrows(InvalidArgumentException.class, () -> rolledBack.put(b("r"), b("2")));
            // One that never ended: close still rolls it back natively.
            Transaction holder = db.beginTransaction();
            holder.put(b("h"), b("1"));
            holder.close();
            assertNull(db.get(b("h")));
            assertArrayEquals(b("1"), db.get(b("c")));
            assertNull(db.get(b("r")));
            // The locks of all three are released: a plain write of each key goes through.
            db.put(b("c"), b("2"));
            db.put(b("r"), b("2"));
            db.put(b("h"), b("2"));
        }
        try (Strata db = pessimistic()) {
            assertTrue(db.recoveredTransactions().isEmpty());
            assertArrayEquals(b("2"), db.get(b("c")));
        }
    }

    @Test
    void updatableCursorWritesThroughTheTransaction() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("apple"), b("3"));
            db.put(b("pear"), b("4"));
            db.put(b("plum"), b("5"));
            try (Transaction txn = db.beginTransaction()) {
                try (TransactionCursor cursor = txn.newCursor(null, new ReadOptions()
                        .lowerBound(b("p")))) {
                    for (cursor.seekToFirst(); cursor.isValid(); cursor.next()) {
                        int doubled = 2 * Integer.parseInt(new String(cursor.value()));
                        cursor.update(b(Integer.toString(doubled)));
                        assertArrayEquals(b(Integer.toString(doubled)), cursor.value(),
                                "the cursor sees its update at once");
                    }
                    assertTrue(cursor.seek(b("plum")));
                    cursor.delete();
                    assertArrayEquals(new byte[0], cursor.value());
                    // The transaction is held by the cursor.
                    InvalidArgumentException held = assertThrows(
                            InvalidArgumentException.class, () -> txn.get(b("pear")));
                    assertTrue(held.getMessage().contains("close it first"), held.getMessage());
                    assertThrows(InvalidArgumentException.class,
                            () -> txn.newCursor(null, new ReadOptions()));
                }
                assertArrayEquals(b("8"), txn.get(b("pear")));
                txn.commit();
            }
            assertArrayEquals(b("3"), db.get(b("apple")));
            assertArrayEquals(b("8"), db.get(b("pear")));
            assertNull(db.get(b("plum")));
        }
    }

    @Test
    void aCursorIsClosedWhenItsTransactionEnds() {
        try (Strata db = pessimistic()) {
            db.put(b("k"), b("v"));
            Transaction txn = db.beginTransaction();
            TransactionCursor cursor = txn.newCursor(null, new ReadOptions());
            assertTrue(cursor.seekToFirst());
            assertFalse(cursor.prev());
            assertThrows(InvalidArgumentException.class, cursor::prev, "prev off the start");
            txn.commit();
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    cursor::seekToFirst);
            assertTrue(e.getMessage().contains("already committed"), e.getMessage());
            cursor.close();
            cursor.close();
            txn.close();
        }
    }

    @Test
    void transactionIteratorsSeeTheTransactionsWrites() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("a"), b("1"));
            db.put(b("c"), b("3"));
            try (Transaction txn = db.beginTransaction()) {
                txn.put(b("b"), b("2"));
                txn.delete(b("c"));
                try (StrataIterator it = txn.newIterator(null, new ReadOptions())) {
                    assertEquals(List.of("a", "b"), IteratorTest.forward(it));
                    assertEquals(List.of("b", "a"), IteratorTest.backward(it));
                    txn.rollback();
                    assertThrows(InvalidArgumentException.class, it::seekToFirst);
                }
            }
        }
    }

    @Test
    void closingTheDatabaseRollsBackOpenTransactions() {
        Strata db = pessimistic();
        Transaction txn = db.beginTransaction();
        txn.put(b("k"), b("v"));
        db.close();
        UnavailableException e = assertThrows(UnavailableException.class, () -> txn.get(b("k")));
        assertEquals("unavailable: the transaction was rolled back when its database was closed",
                e.getMessage());
        txn.close();
        try (Strata again = pessimistic()) {
            assertNull(again.get(b("k")));
        }
    }
}
