package io.strata.bench;

import io.strata.Options;
import io.strata.Strata;
import io.strata.Transaction;
import io.strata.WriteBatch;
import io.strata.WriteOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The Java half of the JNI cost measurement (the Rust half: examples/jni_cost.rs of the
 * binding): the same operations, keys and order through the Java binding, with byte arrays
 * and with direct buffers.
 *
 * <pre>
 * java ... io.strata.bench.JniCost create DIR KEYS    # writes keys 0..KEYS-1, 100-byte values
 * java ... io.strata.bench.JniCost measure DIR KEYS OPS
 * </pre>
 *
 * DIR itself is never opened by {@code measure}: the reads run on a copy of it, and each
 * write operation on a copy of its own made just before (in DIR-work, as the Rust half
 * does), so that every operation of either half starts from the same database, whatever ran
 * before it. Each operation runs OPS times untimed (to fill the block cache and compile the
 * code), then OPS times timed; one line per operation: {@code java,OPERATION,WALL_NS,CPU_NS}
 * per operation (CPU: the thread's own time on a CPU, without its waits for one).
 */
public final class JniCost {
    private JniCost() {}

    /** SplitMix64, the key sequence of both halves. */
    static final class SplitMix {
        private long state;

        SplitMix(long seed) {
            state = seed;
        }

        long nextKey(long keys) {
            state += 0x9E3779B97F4A7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            z ^= z >>> 31;
            return Long.remainderUnsigned(z, keys);
        }
    }

    interface Op {
        void run(long key) throws Exception;
    }

    /**
     * The calling thread's time on a CPU so far, in ns, as the Rust half reads it (the first
     * field of /proc/thread-self/schedstat); -1 off Linux.
     */
    static long threadCpuNanos() {
        try {
            String text = Files.readString(
                    Path.of("/proc/thread-self/schedstat"));
            return Long.parseLong(text.trim().split("\\s+")[0]);
        } catch (Exception e) {
            return -1;
        }
    }

    /** Wall-clock and thread-CPU ns per operation (CPU 0 where unknown). */
    static double[] measure(long keys, long ops, Op op) throws Exception {
        SplitMix warm = new SplitMix(7);
        for (long i = 0; i < ops; i++) {
            op.run(warm.nextKey(keys));
        }
        SplitMix random = new SplitMix(1);
        long cpuBegan = threadCpuNanos();
        long began = System.nanoTime();
        for (long i = 0; i < ops; i++) {
            op.run(random.nextKey(keys));
        }
        double wall = (System.nanoTime() - began) / (double) ops;
        long cpuEnded = threadCpuNanos();
        double cpu = cpuBegan < 0 || cpuEnded < 0 ? 0 : (cpuEnded - cpuBegan) / (double) ops;
        return new double[] {wall, cpu};
    }

    /**
     * Opens a fresh copy of the database {@code template} (at {@code template}-work, replacing
     * the last one), as the Rust half opens its copies.
     */
    static Strata openCopy(String template) throws IOException {
        Path from = Path.of(template);
        Path work = Path.of(template + "-work");
        if (Files.exists(work)) {
            try (Stream<Path> old = Files.walk(work)) {
                for (Path p : (Iterable<Path>)
                        old.sorted(Comparator.reverseOrder())::iterator) {
                    Files.delete(p);
                }
            }
        }
        try (Stream<Path> files = Files.walk(from)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Files.copy(p, work.resolve(from.relativize(p)));
            }
        }
        return open(work.toString());
    }

    static Strata open(String dir) {
        return Strata.open(dir, new Options()
                .createIfMissing(true)
                .transactionDb(true)
                .compression("none")
                .blockCacheSize(256L << 20));
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            throw new IllegalArgumentException("usage: JniCost create DIR KEYS | measure DIR KEYS OPS");
        }
        String dir = args[1];
        long keys = Long.parseLong(args[2]);
        byte[] value = new byte[Bench.VALUE_BYTES];
        Arrays.fill(value, (byte) 7);
        if (args[0].equals("create")) {
            try (Strata db = open(dir); WriteBatch batch = new WriteBatch()) {
                for (long k = 0; k < keys; k++) {
                    batch.put(Bench.key(k), value);
                    if (batch.count() == 10_000) {
                        db.write(batch, new WriteOptions());
                        batch.clear();
                    }
                }
                db.write(batch, new WriteOptions());
                db.flush();
            }
            return;
        }
        long ops = Long.parseLong(args[3]);
        ByteBuffer keyBuffer = ByteBuffer.allocateDirect(8);
        ByteBuffer valueBuffer = ByteBuffer.allocateDirect(Bench.VALUE_BYTES);
        ByteBuffer valueIn = ByteBuffer.allocateDirect(Bench.VALUE_BYTES);
        valueIn.put(value).flip();
        long[] sink = new long[1];
        WriteOptions write = new WriteOptions();
        // The reads, on one copy: none of them writes.
        try (Strata db = openCopy(dir)) {
            report("get", measure(keys, ops, k -> {
                byte[] found = db.get(Bench.key(k));
                sink[0] += found == null ? 0 : found.length;
            }));
            byte[] valueOut = new byte[Bench.VALUE_BYTES];
            report("get_into", measure(keys, ops, k -> {
                sink[0] += db.get(Bench.key(k), valueOut);
            }));
            // A new array made in Java rather than by the native side: the value read into a
            // reused array, then copied into one of its size (what Strata.get(key) could do
            // for values that fit such an array).
            report("get_into_copy", measure(keys, ops, k -> {
                int size = db.get(Bench.key(k), valueOut);
                byte[] found = size == Strata.NOT_FOUND ? null : Arrays.copyOf(valueOut, size);
                sink[0] += found == null ? 0 : found.length;
            }));
            report("get_direct", measure(keys, ops, k -> {
                keyBuffer.putLong(0, k);
                valueBuffer.clear();
                sink[0] += db.get(keyBuffer, valueBuffer);
            }));
            report("txn_get", measure(keys, ops, k -> {
                try (Transaction txn = db.beginTransaction()) {
                    byte[] found = txn.get(Bench.key(k));
                    sink[0] += found == null ? 0 : found.length;
                    txn.commit();
                }
            }));
            // The same, each transaction begun again in the last one's object (as RocksJava's
            // beginTransaction(writeOptions, oldTransaction)): no new object per operation.
            Transaction[] reused = {null};
            report("txn_get_reuse", measure(keys, ops, k -> {
                Transaction txn = db.beginTransaction(write, reused[0]);
                reused[0] = txn;
                byte[] found = txn.get(Bench.key(k));
                sink[0] += found == null ? 0 : found.length;
                txn.commit();
            }));
            // The same, the value read into the caller's array (Transaction.get(key, value)).
            report("txn_get_into_reuse", measure(keys, ops, k -> {
                Transaction txn = db.beginTransaction(write, reused[0]);
                reused[0] = txn;
                sink[0] += txn.get(Bench.key(k), valueOut);
                txn.commit();
            }));
            // The same, through direct buffers (Transaction.get(ByteBuffer, ByteBuffer)).
            report("txn_get_direct_reuse", measure(keys, ops, k -> {
                Transaction txn = db.beginTransaction(write, reused[0]);
                reused[0] = txn;
                keyBuffer.putLong(0, k);
                valueBuffer.clear();
                sink[0] += txn.get(keyBuffer, valueBuffer);
                txn.commit();
            }));
            // The same, the read and the commit in one call (Transaction.getAndCommit).
            report("txn_get_and_commit", measure(keys, ops, k -> {
                Transaction txn = db.beginTransaction(write, reused[0]);
                reused[0] = txn;
                byte[] found = txn.getAndCommit(Bench.key(k));
                sink[0] += found == null ? 0 : found.length;
            }));
            reused[0].close();
        }
        // Each write operation on a fresh copy (as the Rust half), so that none writes into a
        // memtable and tables the ones before it filled.
        try (Strata db = openCopy(dir)) {
            report("put", measure(keys, ops, k -> db.put(Bench.key(k), value)));
        }
        try (Strata db = openCopy(dir)) {
            report("put_direct", measure(keys, ops, k -> {
                keyBuffer.putLong(0, k);
                db.put(keyBuffer, valueIn);
            }));
        }
        try (Strata db = openCopy(dir)) {
            report("txn_put", measure(keys, ops, k -> {
                try (Transaction txn = db.beginTransaction()) {
                    txn.put(Bench.key(k), value);
                    txn.commit();
                }
            }));
        }
        try (Strata db = openCopy(dir)) {
            Transaction[] reused = {null};
            report("txn_put_reuse", measure(keys, ops, k -> {
                Transaction txn = db.beginTransaction(write, reused[0]);
                reused[0] = txn;
                txn.put(Bench.key(k), value);
                txn.commit();
            }));
            reused[0].close();
        }
        if (sink[0] == 42) {
            System.err.println("(keeps the reads from being optimised away)");
        }
    }

    private static void report(String op, double[] ns) {
        System.out.printf(Locale.ROOT, "java,%s,%.0f,%.0f%n", op, ns[0], ns[1]);
    }
}
