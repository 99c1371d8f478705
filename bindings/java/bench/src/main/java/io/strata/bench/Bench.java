package io.strata.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The benchmark of the published "RocksDB vs TuplDB" comparison, on three engines: keys loaded in
 * key order over a range that starts small and grows step by step, each new part pre-scanned
 * untimed; at each step, each test runs for a fixed time at each thread count, and its
 * throughput is printed per interval (CSV) and summed up per step (a Markdown table).
 *
 * <pre>
 * java -cp ... io.strata.bench.Bench --engines=strata,rocksdb,tupl --dir=/tmp/bench
 *     --start=1000000 --max=200000000 --growth=2 --threads=1,2 --seconds=60 --interval=5
 *     --memory=8g
 * </pre>
 *
 * Tests: read (one value), scan (100 entries through a cursor), update (a 100-byte value),
 * rmw (first and last bytes changed, through an updatable cursor where the engine has one),
 * mix (90% scans, 10% updates). Every operation is a transaction of its own.
 *
 * <p>Caches: {@code --caches=seed} (the default) sizes them as the comparison did, RocksDB
 * (and Strata, with the same sizes) a third of {@code --memory}, TuplDB three quarters;
 * {@code --caches=equal} gives every engine TuplDB's share, to measure what the split is worth.
 * {@code --bloom-bits=N} gives the two LSM trees bloom filters of N bits a key; the default, 0,
 * is the comparison's (RocksDB had no filter policy).
 */
public final class Bench {
    static final int VALUE_BYTES = 100;
    static final int SCAN_LENGTH = 100;

    private Bench() {}

    /** Key {@code k} as 8 big-endian bytes, so that key order is numeric order. */
    static byte[] key(long k) {
        byte[] out = new byte[8];
        for (int i = 7; i >= 0; i--) {
            out[i] = (byte) k;
            k >>>= 8;
        }
        return out;
    }

    /** The read-modify-write's change: the first and last bytes. */
    static void modify(byte[] value) {
        if (value.length > 0) {
            value[0]++;
            value[value.length - 1]--;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = parse(args);
        List<String> engines = List.of(a.getOrDefault("engines", "strata,rocksdb,tupl")
                .split(","));
        Path dir = Path.of(a.getOrDefault("dir", "/tmp/strata-bench"));
        long start = Long.parseLong(a.getOrDefault("start", "100000"));
        long max = Long.parseLong(a.getOrDefault("max", "1000000"));
        double growth = Double.parseDouble(a.getOrDefault("growth", "2"));
        int[] threads = List.of(a.getOrDefault("threads", "1,2").split(",")).stream()
                .mapToInt(Integer::parseInt).toArray();
        double seconds = Double.parseDouble(a.getOrDefault("seconds", "10"));
        double interval = Double.parseDouble(a.getOrDefault("interval", "1"));
        long memory = bytes(a.getOrDefault("memory", "1g"));
        String caches = a.getOrDefault("caches", "seed");
        int bloomBits = Integer.parseInt(a.getOrDefault("bloom-bits", "0"));
        // "manual": both LSM trees hold WAL records in memory until a megabyte of them
        // (manual_wal_flush), TuplDB's NO_FLUSH durability; "flush": a write() per commit.
        String wal = a.getOrDefault("wal", "flush");
        if (!wal.equals("flush") && !wal.equals("manual")) {
            throw new IllegalArgumentException("--wal is flush or manual, not " + wal);
        }
        boolean heldWal = wal.equals("manual");
        if (!caches.equals("seed") && !caches.equals("equal")) {
            throw new IllegalArgumentException("--caches is seed or equal, not " + caches);
        }
        List<String> tests = List.of(a.getOrDefault("tests", "read,scan,update,rmw,mix")
                .split(","));
        if (start <= 0 || max < start || growth <= 1) {
            throw new IllegalArgumentException("need 0 < start <= max and growth > 1");
        }

        List<String> summary = new ArrayList<>();
        summary.add("| engine | test | keys | threads | ops/s |");
        summary.add("| --- | --- | ---: | ---: | ---: |");
        System.out.println("engine,test,keys,threads,second,ops_per_sec,load1");
        byte[] value = new byte[VALUE_BYTES];
        new SplittableRandom(1).nextBytes(value);
        for (String name : engines) {
            Path engineDir = dir.resolve(name);
            deleteTree(engineDir);
            Files.createDirectories(engineDir);
            try (Engine engine = open(name, engineDir.toString(), memory, caches, bloomBits,
                    heldWal)) {
                long loaded = 0;
                for (long range = start; ; range = Math.min(max, (long) (range * growth))) {
                    long loadBegan = System.nanoTime();
                    engine.load(loaded, range, value);
                    long scanBegan = System.nanoTime();
                    engine.prescan(loaded, range);
                    System.err.printf(Locale.ROOT, "# %s: loaded to %d keys in %.1f s,"
                            + " pre-scanned in %.1f s, load average %s%n", engine.name(), range,
                            (scanBegan - loadBegan) / 1e9, (System.nanoTime() - scanBegan) / 1e9,
                            loadAverage());
                    loaded = range;
                    for (String test : tests) {
                        for (int t : threads) {
                            double rate = run(engine, test, range, t, seconds, interval, value);
                            summary.add(String.format(Locale.ROOT, "| %s | %s | %d | %d | %.0f |",
                                    engine.name(), test, range, t, rate));
                        }
                    }
                    if (range >= max) {
                        break;
                    }
                }
            }
        }
        System.out.println();
        summary.forEach(System.out::println);
    }

    /** Runs one test; prints its throughput per interval; returns its mean throughput. */
    private static double run(Engine engine, String test, long range, int threads,
            double seconds, double interval, byte[] value) throws Exception {
        LongAdder ops = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            long seed = t * 7919L + range;
            workers.add(new Thread(() -> {
                SplittableRandom random = new SplittableRandom(seed);
                byte[] fresh = value.clone();
                try (Engine.Worker w = engine.worker()) {
                    while (!stop.get()) {
                        byte[] key = key(random.nextLong(range));
                        switch (test) {
                            case "read" -> w.read(key);
                            case "scan" -> w.scan(key, SCAN_LENGTH);
                            case "update" -> {
                                fresh[0]++;
                                w.update(key, fresh);
                            }
                            case "rmw" -> w.readModifyWrite(key);
                            case "mix" -> {
                                if (random.nextInt(10) == 0) {
                                    fresh[0]++;
                                    w.update(key, fresh);
                                } else {
                                    w.scan(key, SCAN_LENGTH);
                                }
                            }
                            default -> throw new IllegalArgumentException("unknown test " + test);
                        }
                        ops.increment();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        long began = System.nanoTime();
        workers.forEach(Thread::start);
        long last = 0;
        long lastAt = began;
        long deadline = began + (long) (seconds * 1e9);
        int step = 0;
        while (System.nanoTime() < deadline && failures.isEmpty()) {
            long wake = began + (long) (++step * interval * 1e9);
            Thread.sleep(Math.max(0, (Math.min(wake, deadline) - System.nanoTime()) / 1_000_000));
            long now = ops.sum();
            long at = System.nanoTime();
            // Divided by the interval's measured length: the sleep may overrun, and the last
            // interval is short when the run is not a whole number of them.
            System.out.printf(Locale.ROOT, "%s,%s,%d,%d,%.1f,%.0f,%s%n", engine.name(), test,
                    range, threads, (at - began) / 1e9, (now - last) / ((at - lastAt) / 1e9),
                    loadAverage());
            last = now;
            lastAt = at;
        }
        stop.set(true);
        long total = ops.sum();
        long ended = System.nanoTime();
        for (Thread w : workers) {
            w.join();
        }
        if (!failures.isEmpty()) {
            throw new RuntimeException(engine.name() + " " + test + " failed", failures.get(0));
        }
        return total / ((ended - began) / 1e9);
    }

    private static Engine open(String name, String dir, long memory, String caches,
            int bloomBits, boolean heldWal) throws Exception {
        // The comparison's cache sizes: RocksDB (and Strata, with the same sizes) a third of
        // memory, TuplDB most of it; with "equal", TuplDB's share for all.
        long lsmCache = caches.equals("equal") ? memory * 3 / 4 : memory / 3;
        return switch (name) {
            case "strata" -> new StrataEngine(dir, lsmCache, bloomBits, false, heldWal);
            case "strata-mmap" -> new StrataEngine(dir, lsmCache, bloomBits, true, heldWal);
            case "rocksdb" -> new RocksEngine(dir, lsmCache, bloomBits, false, heldWal);
            case "rocksdb-mmap" -> new RocksEngine(dir, lsmCache, bloomBits, true, heldWal);
            case "tupl" -> new TuplEngine(dir, memory * 3 / 4);
            default -> throw new IllegalArgumentException("unknown engine " + name
                    + " (strata, strata-mmap, rocksdb, rocksdb-mmap or tupl)");
        };
    }

    /** The machine's one-minute load average (the benchmark shares it), or "?" off Linux. */
    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (Exception e) {
            return "?";
        }
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String arg : args) {
            if (!arg.startsWith("--") || !arg.contains("=")) {
                throw new IllegalArgumentException("arguments are --name=value, not " + arg);
            }
            out.put(arg.substring(2, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
        }
        return out;
    }

    private static long bytes(String text) {
        String t = text.toLowerCase(Locale.ROOT);
        long unit = t.endsWith("g") ? 1L << 30 : t.endsWith("m") ? 1L << 20
                : t.endsWith("k") ? 1L << 10 : 1;
        return Long.parseLong(unit == 1 ? t : t.substring(0, t.length() - 1)) * unit;
    }

    private static void deleteTree(Path path) throws Exception {
        if (!Files.exists(path)) {
            return;
        }
        try (var walk = Files.walk(path)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
