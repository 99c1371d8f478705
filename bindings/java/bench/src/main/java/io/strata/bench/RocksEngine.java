package io.strata.bench;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Transaction;
import org.rocksdb.TransactionDB;
import org.rocksdb.TransactionDBOptions;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * RocksDB through RocksJava, a TransactionDB with the published comparison's settings: no
 * compression, three 64 MiB write buffers, L0 compaction at 8 files, 4 levels, a 512 MiB base
 * level and a multiplier of 8, the block cache (a third of memory) holding index and filter
 * blocks. The comparison set no filter policy, so there is none (RocksDB's default) unless
 * the run asks for bloom filters. As {@code rocksdb-mmap}, the same with
 * {@code allow_mmap_reads}: the tables are mapped and read through the mapping.
 */
final class RocksEngine implements Engine {
    static {
        // Before any field: every RocksJava object needs the native library.
        RocksDB.loadLibrary();
    }

    private final Options options;
    private final TransactionDBOptions txnOptions = new TransactionDBOptions();
    private final TransactionDB db;
    private final WriteOptions writeOptions = new WriteOptions();
    private final boolean mapped;

    RocksEngine(String dir, long cacheBytes, int bloomBits, boolean mapped, boolean heldWal)
            throws Exception {
        this.mapped = mapped;
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(new LRUCache(cacheBytes))
                .setCacheIndexAndFilterBlocks(true);
        if (bloomBits > 0) {
            table.setFilterPolicy(new BloomFilter(bloomBits));
        }
        options = new Options()
                .setCreateIfMissing(true)
                .setCompressionType(CompressionType.NO_COMPRESSION)
                .setWriteBufferSize(64L << 20)
                .setMaxWriteBufferNumber(3)
                .setLevel0FileNumCompactionTrigger(8)
                .setNumLevels(4)
                .setMaxBytesForLevelBase(512L << 20)
                .setMaxBytesForLevelMultiplier(8)
                .setAllowMmapReads(mapped)
                .setManualWalFlush(heldWal)
                .setTableFormatConfig(table);
        db = TransactionDB.open(options, txnOptions, dir);
    }

    @Override
    public String name() {
        return mapped ? "rocksdb-mmap" : "rocksdb";
    }

    @Override
    public void load(long from, long to, byte[] value) throws Exception {
        try (WriteOptions noWal = new WriteOptions().setDisableWAL(true);
                WriteBatch batch = new WriteBatch()) {
            for (long k = from; k < to; k++) {
                batch.put(Bench.key(k), value);
                if (batch.count() == 10_000) {
                    db.write(noWal, batch);
                    batch.clear();
                }
            }
            db.write(noWal, batch);
        }
        try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
            db.flush(flush);
        }
    }

    @Override
    public void prescan(long from, long to) {
        try (ReadOptions ro = new ReadOptions(); RocksIterator it = db.newIterator(ro)) {
            byte[] end = Bench.key(to);
            for (it.seek(Bench.key(from)); it.isValid(); it.next()) {
                if (java.util.Arrays.compareUnsigned(it.key(), end) >= 0) {
                    break;
                }
                it.value();
            }
        }
    }

    @Override
    public Worker worker() {
        ReadOptions ro = new ReadOptions();
        return new Worker() {
            @Override
            public boolean read(byte[] key) throws Exception {
                try (Transaction txn = db.beginTransaction(writeOptions)) {
                    boolean found = txn.get(ro, key) != null;
                    txn.commit();
                    return found;
                }
            }

            @Override
            public int scan(byte[] key, int n) throws Exception {
                try (Transaction txn = db.beginTransaction(writeOptions);
                        RocksIterator it = txn.getIterator(ro)) {
                    int seen = 0;
                    for (it.seek(key); seen < n && it.isValid(); it.next()) {
                        it.key();
                        it.value();
                        seen++;
                    }
                    txn.commit();
                    return seen;
                }
            }

            @Override
            public void update(byte[] key, byte[] value) throws Exception {
                try (Transaction txn = db.beginTransaction(writeOptions)) {
                    txn.put(key, value);
                    txn.commit();
                }
            }

            @Override
            public void readModifyWrite(byte[] key) throws Exception {
                // RocksDB has no updatable cursor: a read for update and a write.
                try (Transaction txn = db.beginTransaction(writeOptions)) {
                    byte[] value = txn.getForUpdate(ro, key, true);
                    if (value != null) {
                        Bench.modify(value);
                        txn.put(key, value);
                    }
                    txn.commit();
                }
            }

            @Override
            public void close() {
                ro.close();
            }
        };
    }

    @Override
    public void close() {
        db.close();
        txnOptions.close();
        options.close();
        writeOptions.close();
    }
}
