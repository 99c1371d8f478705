package io.strata;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;

/**
 * A transaction of a {@link Strata}, from {@link Strata#beginTransaction()}: reads see its
 * own writes over the database, and {@link #commit()} applies its writes atomically ({@link
 * #rollback()} drops them).
 *
 * <pre>{@code
 * try (Transaction txn = db.beginTransaction()) {
 *     byte[] balance = txn.getForUpdate(null, key);
 *     txn.put(key, next(balance));
 *     txn.commit(); // TransactionConflictException when someone else wrote key meanwhile
 * } // close() rolls back a transaction not committed
 * }</pre>
 *
 * <p>Optimistic on a database opened as usual, pessimistic with {@link
 * Options#transactionDb(boolean)} (keys locked as they are written or read for update, with
 * {@link #setName(String)}, {@link #prepare()} for two-phase commit). After the transaction
 * ends its methods throw {@link InvalidArgumentException}; after its database closes, {@link
 * UnavailableException}. An ended transaction may be begun again in place with {@link
 * Strata#beginTransaction(WriteOptions, Transaction)} (its iterators and cursors from before
 * stay refused). Not safe for concurrent use from several threads without outside
 * locking (calls are serialized, but their order then is the threads').
 */
public final class Transaction extends NativeObject {
    private static final int PUT = 0;
    private static final int DELETE = 1;
    private static final int MERGE = 3;
    private static final int SET = 0;
    private static final int ROLLBACK_TO = 1;

    /**
     * Set once commit or rollback returned normally: the native transaction has ended for
     * good then (nothing revives it), so close() has nothing to do and skips its native call,
     * one JNI crossing of the four a short transaction makes.
     */
    private boolean ended;

    /** The database: only its own ended transactions may be begun again in it. */
    final Strata db;

    Transaction(Strata db, long handle) {
        super(handle, Transaction::nativeFree);
        this.db = db;
    }

    /** The handle was begun again in place ({@link Strata#beginTransaction(WriteOptions, Transaction)}). */
    void begun() {
        ended = false;
    }

    /** The value of {@code key} as the transaction sees it, or null. */
    public byte[] get(byte[] key) {
        return get((ColumnFamily) null, key);
    }

    /** The value of {@code key} in {@code cf} as the transaction sees it, or null. */
    public byte[] get(ColumnFamily cf, byte[] key) {
        try {
            ValueScratch scratch = ValueScratch.ofThread();
            return scratch.take((int) nativeGet(handle, handleOf(cf), key, lengthOf(key),
                    scratch.array, scratch.array.length, scratch.large, false));
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /**
     * Reads {@code key} in {@code cf} (null: the default family) and guards it: an optimistic
     * commit fails if someone else writes it meanwhile; a pessimistic transaction locks it
     * first (which may throw {@link LockTimeoutException} or {@link DeadlockException}).
     */
    public byte[] getForUpdate(ColumnFamily cf, byte[] key) {
        try {
            ValueScratch scratch = ValueScratch.ofThread();
            return scratch.take((int) nativeGet(handle, handleOf(cf), key, lengthOf(key),
                    scratch.array, scratch.array.length, scratch.large, true));
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /**
     * Reads the value of {@code key} as the transaction sees it into {@code value} from its
     * start, as much of it as fits, without a new array (as {@link Strata#get(byte[], byte[])}
     * does outside a transaction). Returns the value's full size, or {@link Strata#NOT_FOUND}:
     * when the size is above {@code value.length}, the value was cut, and a larger array gets
     * it whole. Bytes of {@code value} past the size are left as they were.
     */
    public int get(byte[] key, byte[] value) {
        return get(null, key, value);
    }

    /** As {@link #get(byte[], byte[])}, in {@code cf} (null: the default family). */
    public int get(ColumnFamily cf, byte[] key, byte[] value) {
        return getInto(cf, key, value, false);
    }

    /**
     * As {@link #getForUpdate(ColumnFamily, byte[])} (the key guarded or locked), reading the
     * value into {@code value} as {@link #get(byte[], byte[])} does: its full size, or {@link
     * Strata#NOT_FOUND}.
     */
    public int getForUpdate(ColumnFamily cf, byte[] key, byte[] value) {
        return getInto(cf, key, value, true);
    }

    private int getInto(ColumnFamily cf, byte[] key, byte[] value, boolean forUpdate) {
        try {
            return (int) nativeGetInto(handle, handleOf(cf), key, lengthOf(key), value,
                    lengthOf(value), forUpdate);
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /**
     * Reads the value of the key between {@code key}'s position and limit, as the transaction
     * sees it, into {@code value} from its position, without copying through a Java array when
     * both buffers are direct (as {@link Strata#get(ByteBuffer, ByteBuffer)} does outside a
     * transaction). Returns the value's full size, or {@link Strata#NOT_FOUND}; sets {@code
     * value}'s limit after the bytes written (as many as fit: when the size is above what was
     * remaining, the value was cut). Neither buffer's position moves.
     */
    public int get(ByteBuffer key, ByteBuffer value) {
        return get(null, key, value);
    }

    /** As {@link #get(ByteBuffer, ByteBuffer)}, in {@code cf} (null: the default family). */
    public int get(ColumnFamily cf, ByteBuffer key, ByteBuffer value) {
        return getBuffer(cf, key, value, false);
    }

    /**
     * As {@link #getForUpdate(ColumnFamily, byte[])} (the key guarded or locked), reading the
     * value into {@code value} as {@link #get(ByteBuffer, ByteBuffer)} does.
     */
    public int getForUpdate(ColumnFamily cf, ByteBuffer key, ByteBuffer value) {
        return getBuffer(cf, key, value, true);
    }

    private int getBuffer(ColumnFamily cf, ByteBuffer key, ByteBuffer value, boolean forUpdate) {
        Strata.requireNonNull(key, "key");
        Strata.requireNonNull(value, "value");
        // Refused before the read, which may lock the key.
        if (value.isReadOnly()) {
            throw new InvalidArgumentException("invalid argument: value is a read-only buffer");
        }
        try {
            int size;
            if (key.isDirect() && value.isDirect()) {
                size = (int) nativeGetDirect(handle, handleOf(cf), key, key.position(),
                        key.remaining(), value, value.position(), value.remaining(), forUpdate);
            } else {
                byte[] keyBytes = Strata.bytesOf(key);
                byte[] found = forUpdate ? getForUpdate(cf, keyBytes) : get(cf, keyBytes);
                if (found == null) {
                    return Strata.NOT_FOUND;
                }
                value.duplicate().put(found, 0, Math.min(found.length, value.remaining()));
                size = found.length;
            }
            if (size != Strata.NOT_FOUND) {
                value.limit(value.position() + Math.min(size, value.remaining()));
            }
            return size;
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /** Sets {@code key} to {@code value} at commit. */
    public void put(byte[] key, byte[] value) {
        write(PUT, null, key, value);
    }

    /** Sets {@code key} to {@code value} in {@code cf} at commit. */
    public void put(ColumnFamily cf, byte[] key, byte[] value) {
        write(PUT, cf, key, value);
    }

    /** Removes {@code key} at commit. */
    public void delete(byte[] key) {
        write(DELETE, null, key, null);
    }

    /** Removes {@code key} from {@code cf} at commit. */
    public void delete(ColumnFamily cf, byte[] key) {
        write(DELETE, cf, key, null);
    }

    /** Merges {@code operand} into {@code key} at commit. */
    public void merge(byte[] key, byte[] operand) {
        write(MERGE, null, key, operand);
    }

    /** Merges {@code operand} into {@code key} of {@code cf} at commit. */
    public void merge(ColumnFamily cf, byte[] key, byte[] operand) {
        write(MERGE, cf, key, operand);
    }

    /**
     * An iterator over the transaction's view of {@code cf} (null: the default family): its
     * writes made before this call over the database, within {@code options}' bounds (its
     * snapshot is the transaction's). It throws once the transaction ends.
     */
    public StrataIterator newIterator(ColumnFamily cf, ReadOptions options) {
        try {
            return new StrataIterator(nativeNewIterator(handle, handleOf(cf),
                    options.blockFlags(), options.lowerBound, options.upperBound));
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /**
     * An updatable cursor over the transaction's view of {@code cf} (null: the default
     * family) within {@code options}' bounds. The transaction is held by the cursor until it
     * is closed.
     */
    public TransactionCursor newCursor(ColumnFamily cf, ReadOptions options) {
        try {
            return new TransactionCursor(nativeNewCursor(handle, handleOf(cf),
                    options.blockFlags(), options.lowerBound, options.upperBound));
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    /** Marks the transaction's state; {@link #rollbackToSavePoint()} returns to it. */
    public void setSavePoint() {
        nativeSavePoint(handle, SET);
    }

    /**
     * Undoes the writes (and, pessimistic, releases the locks taken) since the last save point,
     * and removes it; {@link NotFoundException} when there is none.
     */
    public void rollbackToSavePoint() {
        nativeSavePoint(handle, ROLLBACK_TO);
    }

    /**
     * Names a pessimistic transaction, for two-phase commit; the name is unique among the
     * database's transactions that have not ended.
     */
    public void setName(String name) {
        nativeSetName(handle, name);
    }

    /** The transaction's name, or null. */
    public String name() {
        return nativeName(handle);
    }

    /**
     * The first phase of two-phase commit (a named pessimistic transaction): makes the writes
     * durable without applying them, keeping the locks. After a crash the database offers the
     * transaction again ({@link Strata#recoveredTransactions()}). Only commit or rollback may
     * follow.
     */
    public void prepare() {
        nativePrepare(handle);
    }

    /**
     * Applies the writes atomically and ends the transaction, whether or not it succeeds: an
     * optimistic one throws {@link TransactionConflictException}, writing nothing, when a key
     * it wrote or read for update was written by someone else since it began; a pessimistic
     * one {@link TransactionExpiredException} when it outlived its expiration.
     */
    public void commit() {
        nativeCommit(handle);
        ended = true;
    }

    /**
     * Reads {@code key} as {@link #get(byte[])} does, then commits as {@link #commit()} does,
     * in one call into the native library instead of two: for the last read of a transaction
     * that writes nothing after it (a read-only transaction: begin, get, ..., getAndCommit).
     * The read sees the transaction's snapshot and its own writes, and the commit checks and
     * applies them as {@code commit()} would. Returns the value, or null. When the read fails
     * (a bad argument, say), nothing is committed and the transaction still runs; when the
     * commit fails, it throws as {@code commit()} does and the transaction has ended.
     */
    public byte[] getAndCommit(byte[] key) {
        return getAndCommit(null, key);
    }

    /**
     * As {@link #getAndCommit(byte[])}, reading {@code key} in {@code cf} (null: the default
     * family).
     */
    public byte[] getAndCommit(ColumnFamily cf, byte[] key) {
        ValueScratch scratch = ValueScratch.ofThread();
        int size;
        try {
            size = (int) nativeGetAndCommit(handle, handleOf(cf), key, lengthOf(key), scratch.array,
                    scratch.array.length, scratch.large);
        } finally {
            Reference.reachabilityFence(cf);
        }
        ended = true;
        return scratch.take(size);
    }

    /** Drops the writes (and releases the locks) and ends the transaction; nothing when ended. */
    public void rollback() {
        nativeRollback(handle);
        ended = true;
    }

    /** True until the transaction commits, fails to commit or rolls back. */
    public boolean isActive() {
        return nativeIsActive(handle);
    }

    /**
     * Rolls the transaction back unless it has ended. A prepared transaction is not rolled
     * back: it stays prepared in its database, for {@link Strata#recoveredTransactions()}
     * (closing the database leaves it prepared too, recovered at the next open).
     */
    @Override
    public void close() {
        if (!ended) {
            nativeClose(handle);
        }
    }

    private void write(int op, ColumnFamily cf, byte[] key, byte[] value) {
        try {
            nativeWrite(handle, op, handleOf(cf), key, lengthOf(key), value, lengthOf(value));
        } finally {
            Reference.reachabilityFence(cf);
        }
    }

    private static native void nativeFree(long h);

    /** As {@code Strata.nativeGet}: the size, the value in {@code scratch} or {@code large[0]}. */
    private native long nativeGet(long h, long cf, byte[] key, int keyLength, byte[] scratch,
            int scratchLength, byte[][] large, boolean forUpdate);

    private native long nativeGetInto(long h, long cf, byte[] key, int keyLength, byte[] value,
            int valueLength, boolean forUpdate);

    private native long nativeGetDirect(long h, long cf, ByteBuffer key, int keyAt, int keyLen,
            ByteBuffer value, int valueAt, int valueLen, boolean forUpdate);

    private native long nativeGetAndCommit(long h, long cf, byte[] key, int keyLength,
            byte[] scratch, int scratchLength, byte[][] large);

    private native void nativeWrite(long h, int op, long cf, byte[] key, int keyLength,
            byte[] value, int valueLength);

    private native void nativeSavePoint(long h, int op);

    private native void nativeSetName(long h, String name);

    private native String nativeName(long h);

    private native void nativePrepare(long h);

    private native void nativeCommit(long h);

    private native void nativeRollback(long h);

    private native void nativeClose(long h);

    private native boolean nativeIsActive(long h);

    private native long nativeNewIterator(long h, long cf, int blocks, byte[] lower,
            byte[] upper);

    private native long nativeNewCursor(long h, long cf, int blocks, byte[] lower,
            byte[] upper);
}
