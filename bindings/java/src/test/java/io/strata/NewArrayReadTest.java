package io.strata;

import static io.strata.BasicTest.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reads that return a new array ({@code Strata.get}, {@code Transaction.get}, {@code
 * getForUpdate}, {@code getAndCommit}), whose value passes through the calling thread's
 * scratch array when it fits ({@link ValueScratch}): values of every size around the
 * scratch array's first length, its growth and its limit, in random orders, from several
 * threads at once; each returned array is the value, whole, and the caller's own.
 */
class NewArrayReadTest {
    /** Around the first length (256), its doublings, and the limit (64 KiB). */
    private static final int[] SIZES = {0, 1, 255, 256, 257, 511, 512, 513, 1000, 4096,
        ValueScratch.MAX_BYTES - 1, ValueScratch.MAX_BYTES, ValueScratch.MAX_BYTES + 1, 70_000};

    @TempDir
    Path dir;

    /** A read of key {@code k} by one of the four ways. */
    private static byte[] read(Strata db, int way, byte[] k) {
        switch (way) {
            case 0:
                return db.get(k);
            case 1:
                try (Transaction txn = db.beginTransaction()) {
                    byte[] v = txn.get(k);
                    txn.commit();
                    return v;
                }
            case 2:
                try (Transaction txn = db.beginTransaction()) {
                    byte[] v = txn.getForUpdate(null, k);
                    txn.commit();
                    return v;
                }
            default:
                return db.beginTransaction().getAndCommit(k);
        }
    }

    /** Reads every key in a random order, each by a random way, checking what comes back. */
    private static void readAll(Strata db, byte[][] values, long seed) {
        Random random = new Random(seed);
        List<byte[]> returned = new ArrayList<>();
        for (int round = 0; round < 200; round++) {
            int i = random.nextInt(values.length + 1);
            if (i == values.length) {
                assertNull(read(db, random.nextInt(4), b("missing")));
                continue;
            }
            byte[] got = read(db, random.nextInt(4), b("k" + i));
            assertArrayEquals(values[i], got, "value " + i + " of " + values[i].length + " bytes");
            for (byte[] earlier : returned) {
                assertNotSame(earlier, got, "every read returns an array of its own");
            }
            returned.add(got);
        }
        // The arrays returned earlier still hold their values: none is the scratch array.
        Random again = new Random(seed);
        int r = 0;
        for (int round = 0; round < 200; round++) {
            int i = again.nextInt(values.length + 1);
            again.nextInt(4);
            if (i != values.length) {
                assertArrayEquals(values[i], returned.get(r++), "unchanged since it was returned");
            }
        }
    }

    @Test
    void everySizeComesBackWholeFromEveryThread() throws Exception {
        try (Strata db = Strata.open(dir, new Options())) {
            Random random = new Random(1);
            byte[][] values = new byte[SIZES.length][];
            for (int i = 0; i < SIZES.length; i++) {
                values[i] = new byte[SIZES[i]];
                random.nextBytes(values[i]);
                db.put(b("k" + i), values[i]);
                assertEquals(SIZES[i], db.get(b("k" + i)).length);
            }
            readAll(db, values, 7);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    long seed = 100 + t;
                    done.add(pool.submit(() -> readAll(db, values, seed)));
                }
                for (Future<?> f : done) {
                    f.get(2, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /**
     * Enough reads for the JIT to compile the read paths, each size used as an array length
     * (sizes come back from the native side as a long: an int result once reached compiled
     * code with garbage in its register's upper half, and crashed the JVM in Arrays.copyOf).
     */
    @Test
    void sizesStayWholeInCompiledCode() {
        try (Strata db = Strata.open(dir, new Options())) {
            byte[] value = new byte[100];
            java.util.Arrays.fill(value, (byte) 7);
            db.put(b("k"), value);
            byte[] out = new byte[128];
            long total = 0;
            for (int i = 0; i < 30_000; i++) {
                total += db.get(b("k")).length;
                total += java.util.Arrays.copyOf(out, db.get(b("k"), out)).length;
                try (Transaction txn = db.beginTransaction()) {
                    total += java.util.Arrays.copyOf(out, txn.get(b("k"), out)).length;
                    total += txn.getAndCommit(b("k")).length;
                }
            }
            assertEquals(4L * 30_000 * 100, total);
        }
    }
}
