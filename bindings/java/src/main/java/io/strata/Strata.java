package io.strata;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * An open Strata database: a persistent map from byte strings to byte strings, in key order.
 *
 * <pre>{@code
 * try (Strata db = Strata.open("/tmp/example", new Options())) {
 *     db.put("hello".getBytes(UTF_8), "world".getBytes(UTF_8));
 *     byte[] value = db.get("hello".getBytes(UTF_8)); // null when absent
 * }
 * }</pre>
 *
 * <p>Safe to share between threads. Methods taking a {@link ColumnFamily} read or write that
 * family (null: the default one). Keys and values are {@code byte[]}, or {@link ByteBuffer}s
 * on the hot paths ({@link #get(ByteBuffer, ByteBuffer)}, {@link #put(ByteBuffer,
 * ByteBuffer)}): a direct buffer is read and written in place, without a copy into a Java
 * array. Failures throw a {@link StrataException} of their kind; every call after {@link
 * #close()} throws {@link UnavailableException}.
 */
public final class Strata extends NativeObject {
    /** What {@link #get(ByteBuffer, ByteBuffer)} returns for a missing key. */
    public static final int NOT_FOUND = -1;

    private static final WriteOptions DEFAULT_WRITE = new WriteOptions();
    private static final ReadOptions DEFAULT_READ = new ReadOptions();

    private Strata(long handle) {
        super(handle, Strata::nativeFree);
    }

    /** Opens (by default creating) the database in directory {@code path}. */
    public static Strata open(String path, Options options) {
        return open(path, options, Collections.emptyMap());
    }

    /** Opens (by default creating) the database in directory {@code path}. */
    public static Strata open(Path path, Options options) {
        return open(path.toString(), options);
    }

    /**
     * Opens the database in {@code path} with column families: each named in {@code
     * columnFamilies} is opened with its options (created if missing when the options set
     * {@code create_missing_column_families}); families the database has but that are not
     * named are opened with the family options of {@code options}.
     */
    public static Strata open(String path, Options options, Map<String, Options> columnFamilies) {
        requireNonNull(path, "path");
        requireNonNull(options, "options");
        requireNonNull(columnFamilies, "columnFamilies");
        String[] names = columnFamilies.keySet().toArray(new String[0]);
        String[] encoded = new String[names.length];
        for (int i = 0; i < names.length; i++) {
            Options o = columnFamilies.get(names[i]);
            encoded[i] = o == null ? "" : o.encode();
        }
        return new Strata(nativeOpen(path, options.encode(), names, encoded));
    }

    /** The names of the column families of the database in {@code path}, "default" first. */
    public static List<String> listColumnFamilies(String path) {
        requireNonNull(path, "path");
        return Arrays.asList(nativeListColumnFamilies(path));
    }

    // ---- reads ----

    /** The value of {@code key}, or null when the database does not have it. */
    public byte[] get(byte[] key) {
        return get(null, DEFAULT_READ, key);
    }

    /** The value of {@code key} in {@code cf}, or null. */
    public byte[] get(ColumnFamily cf, byte[] key) {
        return get(cf, DEFAULT_READ, key);
    }

    /** The value of {@code key} in {@code cf} as {@code options} say (a snapshot), or null. */
    public byte[] get(ColumnFamily cf, ReadOptions options, byte[] key) {
        Snapshot snap = options.snapshot;
        try {
            ValueScratch scratch = ValueScratch.ofThread();
            return scratch.take((int) nativeGet(handle, handleOf(cf), handleOf(snap),
                    options.blockFlags(), key, lengthOf(key), scratch.array, scratch.array.length,
                    scratch.large));
        } finally {
            Reference.reachabilityFence(cf);
            Reference.reachabilityFence(snap);
        }
    }

    /**
     * Reads the value of {@code key} into {@code value} from its start, as much of it as fits,
     * without a new array (RocksJava's {@code get(key, value)}). Returns the value's full
     * size, or {@link #NOT_FOUND}: when the size is above {@code value.length}, the value was
     * cut, and a larger array gets it whole. Bytes of {@code value} past the size are left
     * as they were.
     */
    public int get(byte[] key, byte[] value) {
        return get(null, DEFAULT_READ, key, value);
    }

    /** As {@link #get(byte[], byte[])}, in {@code cf} (null: the default family). */
    public int get(ColumnFamily cf, byte[] key, byte[] value) {
        return get(cf, DEFAULT_READ, key, value);
    }

    /**
     * As {@link #get(byte[], byte[])}, in {@code cf} (null: the default family) as {@code
     * options} say (a snapshot).
     */
    public int get(ColumnFamily cf, ReadOptions options, byte[] key, byte[] value) {
        Snapshot snap = options.snapshot;
        try {
            return (int) nativeGetInto(handle, handleOf(cf), handleOf(snap), options.blockFlags(),
                    key, lengthOf(key), value, lengthOf(value));
        } finally {
            Reference.reachabilityFence(cf);
            Reference.reachabilityFence(snap);
        }
    }

    /**
     * Reads the value of the key between {@code key}'s position and limit into {@code value}
     * from its position, without copying through a Java array when both buffers are direct.
     * Returns the value's full size, or {@link #NOT_FOUND}; sets {@code value}'s limit after
     * the bytes written (as many as fit: when the size is above what was remaining, the
     * value was cut). Neither buffer's position moves.
     */
    public int get(ByteBuffer key, ByteBuffer value) {
        return get(null, DEFAULT_READ, key, value);
    }

    /** As {@link #get(ByteBuffer, ByteBuffer)}, in {@code cf} as {@code options} say. */
    public int get(ColumnFamily cf, ReadOptions options, ByteBuffer key, ByteBuffer value) {
        requireNonNull(key, "key");
        requireNonNull(value, "value");
        if (value.isReadOnly()) {
            throw new InvalidArgumentException("invalid argument: value is a read-only buffer");
        }
        Snapshot snap = options.snapshot;
        try {
            int size;
            if (key.isDirect() && value.isDirect()) {
                size = (int) nativeGetDirect(handle, handleOf(cf), handleOf(snap),
                        options.blockFlags(), key, key.position(), key.remaining(), value,
                        value.position(), value.remaining());
            } else {
                byte[] keyBytes = bytesOf(key);
                ValueScratch scratch = ValueScratch.ofThread();
                byte[] found = scratch.take((int) nativeGet(handle, handleOf(cf), handleOf(snap),
                        options.blockFlags(), keyBytes, keyBytes.length, scratch.array,
                        scratch.array.length, scratch.large));
                if (found == null) {
                    return NOT_FOUND;
                }
                value.duplicate().put(found, 0, Math.min(found.length, value.remaining()));
                size = found.length;
            }
            if (size != NOT_FOUND) {
                value.limit(value.position() + Math.min(size, value.remaining()));
            }
            return size;
        } finally {
            Reference.reachabilityFence(cf);
            Reference.reachabilityFence(snap);
        }
    }

    /**
     * The values of {@code keys}, in their order (null for those missing), read at one
     * sequence number for all of them.
     */
    public List<byte[]> multiGet(List<byte[]> keys) {
        return multiGet(null, DEFAULT_READ, keys);
    }

    /** As {@link #multiGet(List)}, in {@code cf} as {@code options} say. */
    public List<byte[]> multiGet(ColumnFamily cf, ReadOptions options, List<byte[]> keys) {
        requireNonNull(keys, "keys");
        Snapshot snap = options.snapshot;
        try {
            return Arrays.asList(nativeMultiGet(handle, handleOf(cf), handleOf(snap),
                    options.blockFlags(), keys.toArray(new byte[0][])));
        } finally {
            Reference.reachabilityFence(cf);
            Reference.reachabilityFence(snap);
        }
    }

    /** An iterator over the whole default family, as of now. Seek it before reading. */
    public StrataIterator newIterator() {
        return newIterator(null, DEFAULT_READ);
    }

    /** An iterator over the default family with {@code options}' bounds and snapshot. */
    public StrataIterator newIterator(ReadOptions options) {
        return newIterator(null, options);
    }

    /** An iterator over {@code cf} with {@code options}' bounds and snapshot. */
    public StrataIterator newIterator(ColumnFamily cf, ReadOptions options) {
        Snapshot snap = options.snapshot;
        try {
            return new StrataIterator(nativeNewIterator(handle, handleOf(cf), handleOf(snap),
                    options.blockFlags(), options.lowerBound, options.upperBound));
        } finally {
            Reference.reachabilityFence(cf);
            Reference.reachabilityFence(snap);
        }
    }

    /** A consistent view as of now, for {@link ReadOptions#snapshot}. Close it when done. */
    public Snapshot getSnapshot() {
        return new Snapshot(nativeSnapshot(handle));
    }

    // ---- writes ----

    /** Sets {@code key} to {@code value}. */
    public void put(byte[] key, byte[] value) {
        put(null, DEFAULT_WRITE, key, value);
    }

    /** Sets {@code key} to {@code value} in {@code cf}. */
    public void put(ColumnFamily cf, byte[] key, byte[] value) {
        put(cf, DEFAULT_WRITE, key, value);
    }

    /** Sets {@code key} to {@code value} in {@code cf}, made durable as {@code options} say. */
    public void put(ColumnFamily cf, WriteOptions options, byte[] key, byte[] value) {
        try {
            nativePut(handle, handleOf(cf), key, lengthOf(key), value, lengthOf(value),
                    options.sync, options.disableWal);
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /**
     * Sets the key between {@code key}'s position and limit to the bytes between {@code
     * value}'s; read in place when the buffers are direct. Positions do not move.
     */
    public void put(ByteBuffer key, ByteBuffer value) {
        put(null, DEFAULT_WRITE, key, value);
    }

    /** As {@link #put(ByteBuffer, ByteBuffer)}, in {@code cf} as {@code options} say. */
    public void put(ColumnFamily cf, WriteOptions options, ByteBuffer key, ByteBuffer value) {
        requireNonNull(key, "key");
        requireNonNull(value, "value");
        try {
            if (key.isDirect() && value.isDirect()) {
                nativePutDirect(handle, handleOf(cf), key, key.position(), key.remaining(),
                        value, value.position(), value.remaining(), options.sync,
                        options.disableWal);
            } else {
                byte[] keyBytes = bytesOf(key);
                byte[] valueBytes = bytesOf(value);
                nativePut(handle, handleOf(cf), keyBytes, keyBytes.length, valueBytes,
                        valueBytes.length, options.sync, options.disableWal);
            }
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /** Removes {@code key} (not an error when it is absent). */
    public void delete(byte[] key) {
        delete(null, DEFAULT_WRITE, key);
    }

    /** Removes {@code key} from {@code cf}. */
    public void delete(ColumnFamily cf, byte[] key) {
        delete(cf, DEFAULT_WRITE, key);
    }

    /** Removes {@code key} from {@code cf}, made durable as {@code options} say. */
    public void delete(ColumnFamily cf, WriteOptions options, byte[] key) {
        try {
            nativeDelete(handle, handleOf(cf), key, options.sync, options.disableWal);
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /**
     * Removes every key with {@code begin <= key < end}, in one record. A begin after the
     * end is an {@link InvalidArgumentException} naming both; an empty range writes nothing.
     */
    public void deleteRange(byte[] begin, byte[] end) {
        deleteRange(null, DEFAULT_WRITE, begin, end);
    }

    /** As {@link #deleteRange(byte[], byte[])}, in {@code cf}. */
    public void deleteRange(ColumnFamily cf, byte[] begin, byte[] end) {
        deleteRange(cf, DEFAULT_WRITE, begin, end);
    }

    /** As {@link #deleteRange(byte[], byte[])}, in {@code cf} as {@code options} say. */
    public void deleteRange(ColumnFamily cf, WriteOptions options, byte[] begin, byte[] end) {
        try {
            nativeDeleteRange(handle, handleOf(cf), begin, end, options.sync, options.disableWal);
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /**
     * Merges {@code operand} into {@code key} with the family's merge operator ({@link
     * Options#mergeOperator}); an {@link InvalidArgumentException} when it has none.
     */
    public void merge(byte[] key, byte[] operand) {
        merge(null, DEFAULT_WRITE, key, operand);
    }

    /** As {@link #merge(byte[], byte[])}, in {@code cf}. */
    public void merge(ColumnFamily cf, byte[] key, byte[] operand) {
        merge(cf, DEFAULT_WRITE, key, operand);
    }

    /** As {@link #merge(byte[], byte[])}, in {@code cf} as {@code options} say. */
    public void merge(ColumnFamily cf, WriteOptions options, byte[] key, byte[] operand) {
        try {
            nativeMerge(handle, handleOf(cf), key, operand, options.sync, options.disableWal);
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /** Applies {@code batch} atomically; the batch is left as it was. */
    public void write(WriteBatch batch) {
        write(batch, DEFAULT_WRITE);
    }

    /** Applies {@code batch} atomically, made durable as {@code options} say. */
    public void write(WriteBatch batch, WriteOptions options) {
        requireNonNull(batch, "batch");
        try {
            nativeWrite(handle, batch.handle, options.sync, options.disableWal);
        } finally {
            Reference.reachabilityFence(batch);
        }
    }

    // ---- column families ----

    /** Creates column family {@code name} with {@code options} (family options only). */
    public ColumnFamily createColumnFamily(String name, Options options) {
        requireNonNull(options, "options");
        return new ColumnFamily(nativeCreateColumnFamily(handle, name, options.encode()));
    }

    /** A handle of column family {@code name}, or null when there is none. */
    public ColumnFamily columnFamily(String name) {
        long cf = nativeColumnFamily(handle, name);
        return cf == 0 ? null : new ColumnFamily(cf);
    }

    /** Drops column family {@code cf} and its data. */
    public void dropColumnFamily(ColumnFamily cf) {
        requireNonNull(cf, "cf");
        try {
            nativeDropColumnFamily(handle, cf.handle);
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /** The names of the open column families, "default" first. */
    public List<String> columnFamilyNames() {
        return Arrays.asList(nativeColumnFamilyNames(handle));
    }

    // ---- transactions ----

    /**
     * Begins a transaction: optimistic (conflicts found at commit), or pessimistic (keys
     * locked as they are written or read for update) when the database was opened with
     * {@link Options#transactionDb(boolean)}.
     */
    public Transaction beginTransaction() {
        return beginTransaction(DEFAULT_WRITE);
    }

    /** Begins a transaction whose commit is made durable as {@code options} say. */
    public Transaction beginTransaction(WriteOptions options) {
        return beginTransaction(options, (Transaction) null);
    }

    /** Begins a pessimistic transaction with {@code txnOptions}. */
    public Transaction beginTransaction(WriteOptions options, TransactionOptions txnOptions) {
        return beginTransaction(options, txnOptions, null);
    }

    /**
     * Begins a transaction in {@code oldTransaction}, an ended transaction of this database
     * (committed, rolled back or closed), and returns it, or in a new one when it is null: a
     * loop of short transactions then makes no new object. Iterators and cursors made from
     * it before stay refused. {@link InvalidArgumentException} when {@code oldTransaction}
     * is still running or belongs to another database.
     */
    public Transaction beginTransaction(WriteOptions options, Transaction oldTransaction) {
        return begin(options, false, -1, true, -1, false, oldTransaction);
    }

    /**
     * Begins a pessimistic transaction with {@code txnOptions} in {@code oldTransaction}, as
     * {@link #beginTransaction(WriteOptions, Transaction)}.
     */
    public Transaction beginTransaction(WriteOptions options, TransactionOptions txnOptions,
            Transaction oldTransaction) {
        requireNonNull(txnOptions, "txnOptions");
        return begin(options, true, txnOptions.lockTimeoutMillis, txnOptions.deadlockDetect,
                txnOptions.expirationMillis, txnOptions.setSnapshot, oldTransaction);
    }

    private Transaction begin(WriteOptions options, boolean hasOptions, long lockTimeoutMillis,
            boolean deadlockDetect, long expirationMillis, boolean setSnapshot,
            Transaction old) {
        if (old == null) {
            return new Transaction(this, nativeBeginTransaction(handle, 0, options.sync,
                    options.disableWal, hasOptions, lockTimeoutMillis, deadlockDetect,
                    expirationMillis, setSnapshot));
        }
        if (old.db != this) {
            throw new InvalidArgumentException(
                    "invalid argument: oldTransaction belongs to another database: begin a new"
                            + " one of this database");
        }
        try {
            nativeBeginTransaction(handle, old.handle, options.sync, options.disableWal,
                    hasOptions, lockTimeoutMillis, deadlockDetect, expirationMillis,
                    setSnapshot);
        } finally {
            Reference.reachabilityFence(old);
        }
        old.begun();
        return old;
    }

    /**
     * The prepared transactions no handle holds (two-phase commit): those recovered at open,
     * and those whose handle was closed after {@link Transaction#prepare()}. Commit or roll
     * back each. Empty for an optimistic database.
     */
    public List<Transaction> recoveredTransactions() {
        List<Transaction> out = new ArrayList<>();
        for (long h : nativeRecoveredTransactions(handle)) {
            out.add(new Transaction(this, h));
        }
        return out;
    }

    // ---- maintenance, properties, statistics ----

    /** Property {@code name} (as {@code strata.stats}, {@code strata.num-files-at-level0}), or null. */
    public String getProperty(String name) {
        return getProperty(null, name);
    }

    /** Property {@code name} of {@code cf}, or null. */
    public String getProperty(ColumnFamily cf, String name) {
        try {
            return nativeProperty(handle, handleOf(cf), name);
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /**
     * A numeric property (as {@code strata.num-snapshots}); an {@link
     * InvalidArgumentException} when there is none of that name or it is not a number.
     */
    public long getLongProperty(String name) {
        String value = getProperty(name);
        try {
            if (value != null) {
                return Long.parseLong(value.trim());
            }
        } catch (NumberFormatException e) {
            // Reported below, naming the property.
        }
        throw new InvalidArgumentException("invalid argument: property " + name
                + " is not a number" + (value == null ? " (no such property)" : ": " + value));
    }

    /** The statistics of the database (flushes, compactions, reads, levels), as text. */
    public String statistics() {
        return getProperty("strata.stats");
    }

    /**
     * The statistics of the database as numbers, by the engine's {@code DbStats} field names
     * ({@code keys_written}, {@code gets}, {@code gets_found}, {@code flushes}, {@code
     * block_cache_hits}, {@code level0_files}, ...), in a stable order.
     */
    public Map<String, Long> statisticsMap() {
        return statisticsMap(null);
    }

    /** As {@link #statisticsMap()}, of column family {@code cf}. */
    public Map<String, Long> statisticsMap(ColumnFamily cf) {
        String text;
        try {
            text = nativeStatistics(handle, handleOf(cf));
        } finally {
            Reference.reachabilityFence(cf);
        }
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                out.put(line.substring(0, eq), Long.parseLong(line.substring(eq + 1)));
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /** Resets the counters {@link #statistics()} reports. */
    public void resetStatistics() {
        nativeResetStats(handle);
    }

    /**
     * Appends the WAL records held in memory under the {@code manual_wal_flush} option to the
     * WAL file, and with {@code sync} makes them durable too (RocksDB's {@code flushWal}).
     * Without the option every write's record is in the file already, and only {@code sync}
     * does anything.
     */
    public void flushWal(boolean sync) {
        nativeFlushWal(handle, sync);
    }

    /** Flushes the default family's memtable to a table file. */
    public void flush() {
        flush(null);
    }

    /** Flushes {@code cf}'s memtable to a table file. */
    public void flush(ColumnFamily cf) {
        try {
            nativeFlush(handle, handleOf(cf));
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /** Compacts every key of the default family. */
    public void compactRange() {
        compactRange(null, null, null);
    }

    /** Compacts the keys of {@code cf} from {@code begin} to {@code end} (null: open ended). */
    public void compactRange(ColumnFamily cf, byte[] begin, byte[] end) {
        try {
            nativeCompactRange(handle, handleOf(cf), begin, end);
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /** Writes a checkpoint, an openable copy of the database (tables hard-linked), in {@code dir}. */
    public void createCheckpoint(String dir) {
        nativeCheckpoint(handle, dir);
    }

    /** True once {@link #close()} has been called. */
    public boolean isClosed() {
        return nativeIsClosed(handle);
    }

    /**
     * Closes the database: waits for the calls in flight, rolls back the transactions still
     * open, makes the log durable and releases the lock. Closing twice does nothing.
     */
    @Override
    public void close() {
        nativeClose(handle);
    }

    static void requireNonNull(Object value, String what) {
        if (value == null) {
            throw new InvalidArgumentException("invalid argument: " + what + " is null");
        }
    }

    /** The bytes between {@code buffer}'s position and limit; its position does not move. */
    static byte[] bytesOf(ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }

    private static native long nativeOpen(String path, String options, String[] cfNames,
            String[] cfOptions);

    private static native String[] nativeListColumnFamilies(String path);

    private static native void nativeFree(long h);

    private native void nativeClose(long h);

    private native boolean nativeIsClosed(long h);

    /**
     * The value's size, or {@link #NOT_FOUND}; the value itself goes to {@code scratch} (of
     * {@code scratchLength} bytes) when it fits, else to {@code large[0]} ({@link
     * ValueScratch}).
     */
    private native long nativeGet(long h, long cf, long snap, int blocks, byte[] key, int keyLength,
            byte[] scratch, int scratchLength, byte[][] large);

    private native long nativeGetInto(long h, long cf, long snap, int blocks, byte[] key,
            int keyLength, byte[] value, int valueLength);

    private native long nativeGetDirect(long h, long cf, long snap, int blocks, ByteBuffer key,
            int keyAt, int keyLen, ByteBuffer value, int valueAt, int valueLen);

    private native void nativePut(long h, long cf, byte[] key, int keyLength, byte[] value,
            int valueLength, boolean sync, boolean disableWal);

    private native void nativePutDirect(long h, long cf, ByteBuffer key, int keyAt, int keyLen,
            ByteBuffer value, int valueAt, int valueLen, boolean sync, boolean disableWal);

    private native void nativeDelete(long h, long cf, byte[] key, boolean sync,
            boolean disableWal);

    private native void nativeDeleteRange(long h, long cf, byte[] begin, byte[] end, boolean sync,
            boolean disableWal);

    private native void nativeMerge(long h, long cf, byte[] key, byte[] operand, boolean sync,
            boolean disableWal);

    private native void nativeWrite(long h, long batch, boolean sync, boolean disableWal);

    private native byte[][] nativeMultiGet(long h, long cf, long snap, int blocks, byte[][] keys);

    private native long nativeSnapshot(long h);

    private native long nativeCreateColumnFamily(long h, String name, String options);

    private native long nativeColumnFamily(long h, String name);

    private native void nativeDropColumnFamily(long h, long cf);

    private native String[] nativeColumnFamilyNames(long h);

    private native String nativeProperty(long h, long cf, String name);

    private native void nativeResetStats(long h);

    private native String nativeStatistics(long h, long cf);

    private native void nativeFlush(long h, long cf);

    private native void nativeFlushWal(long h, boolean sync);

    private native void nativeCompactRange(long h, long cf, byte[] begin, byte[] end);

    private native void nativeCheckpoint(long h, String dir);

    private native long nativeNewIterator(long h, long cf, long snap, int blocks, byte[] lower,
            byte[] upper);

    private native long nativeBeginTransaction(long h, long old, boolean sync, boolean disableWal,
            boolean hasOptions, long lockTimeoutMs, boolean deadlockDetect, long expirationMs,
            boolean setSnapshot);

    private native long[] nativeRecoveredTransactions(long h);
}
