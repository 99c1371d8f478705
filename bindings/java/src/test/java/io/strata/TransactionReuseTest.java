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
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Strata#beginTransaction(WriteOptions, Transaction)}: an ended handle begun again. */
class TransactionReuseTest {
    private static final WriteOptions WRITE = new WriteOptions();

    @TempDir
    Path dir;

    @Test
    void anEndedTransactionIsBegunAgainInPlace() {
        try (Strata db = Strata.open(dir, new Options())) {
            Transaction txn = db.beginTransaction(WRITE, (Transaction) null);
            txn.put(b("k0"), b("v0"));
            txn.commit();
            // Each way of ending: commit, rollback, close, a failed commit.
            for (int i = 1; i <= 40; i++) {
                assertSame(txn, db.beginTransaction(WRITE, txn), "no new object");
                assertTrue(txn.isActive());
                assertArrayEquals(b("v" + (i - 1)), txn.get(b("k" + (i - 1))),
                        "reads see the earlier transactions' commits");
                txn.put(b("k" + i), b("v" + i));
                switch (i % 4) {
                    case 0 -> txn.commit();
                    case 1 -> {
                        txn.rollback();
                        db.beginTransaction(WRITE, txn);
                        txn.put(b("k" + i), b("v" + i));
                        txn.commit();
                    }
                    case 2 -> {
                        txn.close();
                        assertFalse(txn.isActive());
                        db.beginTransaction(WRITE, txn);
                        txn.put(b("k" + i), b("v" + i));
                        txn.commit();
                    }
                    default -> {
                        txn.getForUpdate(null, b("hot"));
                        db.put(b("hot"), b("" + i));
                        assertThrows(TransactionConflictException.class, txn::commit);
                        assertNull(db.get(b("k" + i)), "the failed commit wrote nothing");
                        db.beginTransaction(WRITE, txn);
                        txn.put(b("k" + i), b("v" + i));
                        txn.commit();
                    }
                }
                assertFalse(txn.isActive());
                assertArrayEquals(b("v" + i), db.get(b("k" + i)));
            }
            txn.close();
        }
    }

    @Test
    void aPessimisticTransactionIsBegunAgainWithItsOptions() {
        try (Strata db = Strata.open(dir, new Options().transactionDb(true))) {
            TransactionOptions quick = new TransactionOptions().lockTimeoutMillis(50);
            try (Transaction txn = db.beginTransaction(WRITE, quick, null)) {
                txn.put(b("seat"), b("alice"));
                txn.commit();
                assertSame(txn, db.beginTransaction(WRITE, quick, txn));
                txn.put(b("seat"), b("bob"));
                // The new transaction holds the lock: another writer times out.
                assertThrows(LockTimeoutException.class, () -> db.put(b("seat"), b("carol")));
                txn.commit();
            }
            assertArrayEquals(b("bob"), db.get(b("seat")));
        }
    }

    @Test
    void aRunningTransactionIsRefusedAsOldTransaction() {
        try (Strata db = Strata.open(dir, new Options())) {
            try (Transaction txn = db.beginTransaction()) {
                txn.put(b("k"), b("v"));
                InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                        () -> db.beginTransaction(WRITE, txn));
                assertEquals("invalid argument: oldTransaction is still running: commit or roll "
                        + "it back (or close it) before beginning it again", e.getMessage());
                assertTrue(txn.isActive(), "the refused call leaves it running");
                txn.commit();
            }
            assertArrayEquals(b("v"), db.get(b("k")), "and its writes are kept");
        }
    }

    @Test
    void anotherDatabasesTransactionIsRefused() {
        try (Strata one = Strata.open(dir.resolve("one"), new Options());
                Strata two = Strata.open(dir.resolve("two"), new Options())) {
            Transaction txn = one.beginTransaction();
            txn.commit();
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> two.beginTransaction(WRITE, txn));
            assertEquals("invalid argument: oldTransaction belongs to another database: begin a "
                    + "new one of this database", e.getMessage());
            assertFalse(txn.isActive());
        }
    }

    @Test
    void iteratorsOfTheEndedTransactionStayRefused() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("a"), b("1"));
            Transaction txn = db.beginTransaction();
            StrataIterator old = txn.newIterator(null, new ReadOptions());
            assertTrue(old.seekToFirst());
            txn.commit();
            db.beginTransaction(WRITE, txn);
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    old::seekToFirst);
            assertEquals("invalid argument: the transaction this was made from has ended (its "
                    + "Transaction was begun again since): make a new one from the running "
                    + "transaction", e.getMessage());
            txn.put(b("b"), b("2"));
            try (StrataIterator fresh = txn.newIterator(null, new ReadOptions())) {
                assertEquals(List.of("a", "b"), IteratorTest.forward(fresh));
            }
            assertThrows(InvalidArgumentException.class, old::next, "still refused");
            txn.rollback();
            assertThrows(InvalidArgumentException.class, old::seekToFirst);
            old.close();
            txn.close();
        }
    }

    @Test
    void cursorsOfTheEndedTransactionStayRefused() {
        try (Strata db = Strata.open(dir, new Options())) {
            db.put(b("a"), b("1"));
            Transaction txn = db.beginTransaction();
            TransactionCursor old = txn.newCursor(null, new ReadOptions());
            assertTrue(old.seekToFirst());
            txn.commit();
            db.beginTransaction(WRITE, txn);
            assertThrows(UnavailableException.class, old::seekToFirst,
                    "the begun-again transaction lent itself to no cursor");
            try (TransactionCursor fresh = txn.newCursor(null, new ReadOptions())) {
                UnavailableException e = assertThrows(UnavailableException.class,
                        old::seekToFirst, "nor to the old cursor once it lends itself again");
                assertEquals("unavailable: the cursor is closed", e.getMessage());
                assertTrue(fresh.seekToFirst());
                assertArrayEquals(b("a"), fresh.key());
            }
            txn.commit();
            old.close();
            txn.close();
        }
    }

    @Test
    void closingTheDatabaseRollsBackATransactionBegunAgain() {
        Strata db = Strata.open(dir, new Options());
        Transaction txn = db.beginTransaction();
        txn.commit();
        db.beginTransaction(WRITE, txn);
        txn.put(b("k"), b("v"));
        db.close();
        assertThrows(UnavailableException.class, () -> txn.get(b("k")));
        assertThrows(UnavailableException.class, () -> db.beginTransaction(WRITE, txn));
        txn.close();
        try (Strata again = Strata.open(dir, new Options())) {
            assertNull(again.get(b("k")));
        }
    }

    /**
     * An ended transaction whose object is kept for a later begin holds nothing of the engine's
     * transaction: no snapshot (optimistic), no lock (pessimistic), whichever way it ended.
     */
    @Test
    void anEndedTransactionLetsGoOfItsSnapshotAndLocks() {
        try (Strata db = Strata.open(dir.resolve("optimistic"), new Options())) {
            Transaction txn = db.beginTransaction();
            for (int i = 0; i < 6; i++) {
                assertEquals(1, db.getLongProperty("strata.num-snapshots"), "round " + i);
                txn.put(b("k"), b("v" + i));
                switch (i % 3) {
                    case 0 -> txn.commit();
                    case 1 -> txn.rollback();
                    default -> txn.close();
                }
                assertEquals(0, db.getLongProperty("strata.num-snapshots"),
                        "ended in round " + i + ", the object still held");
                db.beginTransaction(WRITE, txn);
            }
            txn.close();
        }
        try (Strata db = Strata.open(dir.resolve("pessimistic"),
                new Options().transactionDb(true).lockTimeoutMillis(50))) {
            Transaction txn = db.beginTransaction();
            for (int i = 0; i < 6; i++) {
                txn.put(b("seat"), b("mine"));
                assertThrows(LockTimeoutException.class, () -> db.put(b("seat"), b("other")));
                switch (i % 3) {
                    case 0 -> txn.commit();
                    case 1 -> txn.rollback();
                    default -> txn.close();
                }
                db.put(b("seat"), b("other " + i));
                db.beginTransaction(WRITE, txn);
            }
            txn.close();
        }
    }

    /**
     * Closing a database whose ended transactions are still held (each keeping its native
     * side for a later begin) closes it whole: it opens again at once, and every held
     * transaction throws rather than reach the closed engine.
     */
    @Test
    void closingTheDatabaseWithEndedTransactionsHeldClosesItWhole() {
        Strata db = Strata.open(dir, new Options());
        List<Transaction> held = new java.util.ArrayList<>();
        for (int i = 0; i < 50; i++) {
            Transaction txn = db.beginTransaction();
            txn.put(b("k" + i), b("v" + i));
            switch (i % 4) {
                case 0 -> txn.commit();
                case 1 -> txn.rollback();
                case 2 -> {
                    txn.commit();
                    db.beginTransaction(WRITE, txn).commit();
                }
                default -> {
                    // Begun again and left running: rolled back by close.
                    txn.commit();
                    db.beginTransaction(WRITE, txn).put(b("k" + i), b("never"));
                }
            }
            held.add(txn);
        }
        db.close();
        try (Strata again = Strata.open(dir, new Options())) {
            for (int i = 0; i < 50; i++) {
                assertArrayEquals(i % 4 == 1 ? null : b("v" + i), again.get(b("k" + i)));
            }
        }
        for (Transaction txn : held) {
            assertThrows(UnavailableException.class, () -> db.beginTransaction(WRITE, txn));
            assertFalse(txn.isActive());
            txn.close();
        }
    }
}
