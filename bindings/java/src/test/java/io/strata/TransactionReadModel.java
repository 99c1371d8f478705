package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Random transactions over a database (puts and deletes of keys and values of every length
 * around the native side's 128-byte stack buffer, some committed and some rolled back) that
 * hand every key written so far, and one never written, to a read under test together with
 * the value the transaction must see: the database's model with the transaction's own writes
 * over it. After the last one, the database holds what the committed ones wrote.
 */
final class TransactionReadModel {
    private static final WriteOptions WRITE = new WriteOptions();

    private TransactionReadModel() {}

    /** The read under test: checks that {@code txn} sees {@code expected} (null: absent). */
    interface Check {
        void check(Transaction txn, byte[] key, byte[] expected, int round);
    }

    private static byte[] bytes(Random random, int length) {
        byte[] out = new byte[length];
        random.nextBytes(out);
        return out;
    }

    /** Runs the transactions (optimistic when {@code options} is null) with {@code seed}. */
    static void run(Strata db, TransactionOptions options, long seed, Check check) {
        Random random = new Random(seed);
        int[] lengths = {0, 1, 8, 127, 128, 129, 1000, 70_000};
        Map<String, byte[]> committed = new TreeMap<>();
        Map<String, byte[]> keys = new TreeMap<>();
        Transaction txn = null;
        for (int round = 0; round < 12; round++) {
            txn = options == null ? db.beginTransaction(WRITE, txn)
                    : db.beginTransaction(WRITE, options, txn);
            Map<String, byte[]> seen = new HashMap<>(committed);
            for (int op = 0; op < 5; op++) {
                byte[] key = bytes(random, lengths[random.nextInt(lengths.length)]);
                String name = Arrays.toString(key);
                keys.put(name, key);
                if (random.nextInt(4) == 0) {
                    txn.delete(key);
                    seen.remove(name);
                } else {
                    byte[] value = bytes(random, lengths[random.nextInt(lengths.length)]);
                    txn.put(key, value);
                    seen.put(name, value);
                }
            }
            for (Map.Entry<String, byte[]> e : keys.entrySet()) {
                check.check(txn, e.getValue(), seen.get(e.getKey()), round);
            }
            check.check(txn, b("never written"), null, round);
            if (random.nextInt(3) == 0) {
                txn.rollback();
            } else {
                txn.commit();
                committed = seen;
            }
        }
        txn.close();
        for (Map.Entry<String, byte[]> e : keys.entrySet()) {
            assertArrayEquals(committed.get(e.getKey()), db.get(e.getValue()));
        }
    }
}
