package io.strata.bench;

import io.strata.EntryBatch;
import io.strata.Options;
import io.strata.ReadOptions;
import io.strata.Strata;
import io.strata.StrataIterator;
import io.strata.Transaction;
import io.strata.TransactionCursor;
import io.strata.WriteBatch;
import io.strata.WriteOptions;

/**
 * Strata through its Java binding, pessimistic transactions, with the comparison's RocksDB
 * settings; no bloom filter by default, as RocksDB there had none (Strata's default is 10
 * bits a key). As {@code strata-mmap}, the same with its tables mapped
 * ({@code allow_mmap_reads}, which RocksDB has too): the uncompressed data blocks are read
 * in place from the page cache, and the block cache holds the index blocks only.
 */
final class StrataEngine implements Engine {
    private final Strata db;
    private final boolean mapped;
    private static final WriteOptions WRITE = new WriteOptions();

    StrataEngine(String dir, long cacheBytes, int bloomBits, boolean mapped, boolean heldWal) {
        this.mapped = mapped;
        db = Strata.open(dir, new Options()
                .set("allow_mmap_reads", mapped)
                .set("manual_wal_flush", heldWal)
                .transactionDb(true)
                .compression("none")
                .writeBufferSize(64L << 20)
                .maxWriteBufferNumber(3)
                .level0FileNumCompactionTrigger(8)
                .numLevels(4)
                .maxBytesForLevelBase(512L << 20)
                .maxBytesForLevelMultiplier(8)
                .blockCacheSize(cacheBytes)
                .cacheIndexAndFilterBlocks(true)
                .bloomBitsPerKey(bloomBits));
    }

    @Override
    public String name() {
        return mapped ? "strata-mmap" : "strata";
    }

    @Override
    public void load(long from, long to, byte[] value) {
        WriteOptions noWal = new WriteOptions().disableWal(true);
        try (WriteBatch batch = new WriteBatch()) {
            for (long k = from; k < to; k++) {
                batch.put(Bench.key(k), value);
                if (batch.count() == 10_000) {
                    db.write(batch, noWal);
                    batch.clear();
                }
            }
            db.write(batch, noWal);
        }
        db.flush();
    }

    @Override
    public void prescan(long from, long to) {
        ReadOptions range = new ReadOptions().lowerBound(Bench.key(from)).upperBound(Bench.key(to));
        try (StrataIterator it = db.newIterator(range)) {
            for (boolean on = it.seekToFirst(); on; on = it.next()) {
                it.value();
            }
        }
    }

    @Override
    public Worker worker() {
        ReadOptions all = new ReadOptions();
        return new Worker() {
            /**
             * The worker's transaction object, begun again for each operation once the last
             * one ended (as a RocksJava user passes oldTransaction): no new object, Cleaner
             * registration or registry entry per operation.
             */
            private Transaction txn;

            private Transaction begin() {
                txn = db.beginTransaction(WRITE, txn);
                return txn;
            }

            /** Rolls back a transaction that an exception left running; nothing once ended. */
            private void end(Transaction t, boolean committed) {
                if (!committed) {
                    t.rollback();
                }
            }

            @Override
            public boolean read(byte[] key) {
                Transaction t = begin();
                boolean committed = false;
                try {
                    boolean found = t.get(key) != null;
                    t.commit();
                    committed = true;
                    return found;
                } finally {
                    end(t, committed);
                }
            }

            /** Reused by each scan: its buffer grows once to what a scan needs. */
            private final EntryBatch batch = new EntryBatch();

            @Override
            public int scan(byte[] key, int n) {
                Transaction t = begin();
                boolean committed = false;
                try (StrataIterator it = t.newIterator(null, all)) {
                    int seen = 0;
                    // One native call for the entries after the seek, not three per entry
                    // (next, key, value); each key and value still copied out, as the
                    // other engines' cursors hand out arrays.
                    if (it.seek(key)) {
                        seen = it.readEntries(batch, n);
                        for (int i = 0; i < seen; i++) {
                            batch.key(i);
                            batch.value(i);
                        }
                    }
                    t.commit();
                    committed = true;
                    return seen;
                } finally {
                    end(t, committed);
                }
            }

            @Override
            public void update(byte[] key, byte[] value) {
                Transaction t = begin();
                boolean committed = false;
                try {
                    t.put(key, value);
                    t.commit();
                    committed = true;
                } finally {
                    end(t, committed);
                }
            }

            @Override
            public void readModifyWrite(byte[] key) {
                Transaction t = begin();
                boolean committed = false;
                try {
                    try (TransactionCursor cursor = t.newCursor(null, all)) {
                        if (cursor.seek(key)) {
                            byte[] value = cursor.value();
                            Bench.modify(value);
                            cursor.update(value);
                        }
                    }
                    t.commit();
                    committed = true;
                } finally {
                    end(t, committed);
                }
            }
        };
    }

    @Override
    public void close() {
        db.close();
    }
}
