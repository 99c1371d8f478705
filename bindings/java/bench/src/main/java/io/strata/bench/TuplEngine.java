package io.strata.bench;

import java.io.File;
import org.cojen.tupl.Cursor;
import org.cojen.tupl.Database;
import org.cojen.tupl.DatabaseConfig;
import org.cojen.tupl.DurabilityMode;
import org.cojen.tupl.Index;
import org.cojen.tupl.Transaction;

/** TuplDB, a B-tree in Java: cache most of memory, NO_FLUSH, as the published comparison. */
final class TuplEngine implements Engine {
    private final Database db;
    private final Index index;

    TuplEngine(String dir, long cacheBytes) throws Exception {
        new File(dir).mkdirs();
        db = Database.open(new DatabaseConfig()
                .baseFile(new File(dir, "tupl"))
                .minCacheSize(cacheBytes)
                .maxCacheSize(cacheBytes)
                .durabilityMode(DurabilityMode.NO_FLUSH));
        index = db.openIndex("bench");
    }

    @Override
    public String name() {
        return "tupl";
    }

    @Override
    public void load(long from, long to, byte[] value) throws Exception {
        for (long k = from; k < to; k++) {
            index.store(Transaction.BOGUS, Bench.key(k), value);
        }
        db.checkpoint();
    }

    @Override
    public void prescan(long from, long to) throws Exception {
        Cursor c = index.newCursor(Transaction.BOGUS);
        try {
            byte[] end = Bench.key(to);
            for (c.find(Bench.key(from)); c.key() != null; c.next()) {
                if (java.util.Arrays.compareUnsigned(c.key(), end) >= 0) {
                    break;
                }
            }
        } finally {
            c.reset();
        }
    }

    @Override
    public Worker worker() {
        return new Worker() {
            @Override
            public boolean read(byte[] key) throws Exception {
                Transaction txn = db.newTransaction();
                try {
                    boolean found = index.load(txn, key) != null;
                    txn.commit();
                    return found;
                } finally {
                    txn.reset();
                }
            }

            @Override
            public int scan(byte[] key, int n) throws Exception {
                Transaction txn = db.newTransaction();
                Cursor c = index.newCursor(txn);
                try {
                    int seen = 0;
                    for (c.find(key); seen < n && c.key() != null; c.next()) {
                        c.value();
                        seen++;
                    }
                    txn.commit();
                    return seen;
                } finally {
                    c.reset();
                    txn.reset();
                }
            }

            @Override
            public void update(byte[] key, byte[] value) throws Exception {
                Transaction txn = db.newTransaction();
                try {
                    index.store(txn, key, value);
                    txn.commit();
                } finally {
                    txn.reset();
                }
            }

            @Override
            public void readModifyWrite(byte[] key) throws Exception {
                Transaction txn = db.newTransaction();
                Cursor c = index.newCursor(txn);
                try {
                    c.find(key);
                    byte[] value = c.value();
                    if (value != null) {
                        Bench.modify(value);
                        c.store(value);
                    }
                    txn.commit();
                } finally {
                    c.reset();
                    txn.reset();
                }
            }
        };
    }

    @Override
    public void close() throws Exception {
        db.close();
    }
}
