package io.strata;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Options of {@link Strata#open}, or of a column family ({@link
 * Strata#createColumnFamily(String, Options)}, which accepts the family options only).
 *
 * <p>Every option is named as the field of the engine's {@code Options} ({@code
 * write_buffer_size}, {@code compression}, {@code bloom_bits_per_key}, ...) and can be set
 * with {@link #set(String, Object)}; the common ones have typed setters. Unlike the engine,
 * {@code create_if_missing} defaults to true here. Besides the engine's options:
 * {@code read_only}, {@code transaction_db} (pessimistic transactions, see {@link
 * #transactionDb(boolean)}) and {@code lock_timeout_ms}. An unknown name, or a value that
 * does not parse, is refused at open with an {@link InvalidArgumentException} naming it.
 */
public final class Options {
    private final Map<String, String> values = new LinkedHashMap<>();

    /** Options with {@code create_if_missing} set. */
    public Options() {
        values.put("create_if_missing", "true");
    }

    /** Options for a column family: nothing set. */
    public static Options columnFamily() {
        Options options = new Options();
        options.values.clear();
        return options;
    }

    /**
     * Sets option {@code name} (the engine's field name) to {@code value}'s string form;
     * returns this.
     */
    public Options set(String name, Object value) {
        if (name == null || value == null) {
            throw new InvalidArgumentException("invalid argument: option name and value must "
                    + "not be null (name " + name + ")");
        }
        String text = value.toString();
        if (name.contains("=") || name.contains("\n") || text.contains("\n")) {
            throw new InvalidArgumentException("invalid argument: option " + name
                    + ": names have no '=' and neither names nor values have line breaks");
        }
        values.put(name, text);
        return this;
    }

    /** Creates the database if it is missing (true by default). */
    public Options createIfMissing(boolean value) {
        return set("create_if_missing", value);
    }

    /** Fails to open when the database exists already. */
    public Options errorIfExists(boolean value) {
        return set("error_if_exists", value);
    }

    /** Creates the column families named at open that the database does not have. */
    public Options createMissingColumnFamilies(boolean value) {
        return set("create_missing_column_families", value);
    }

    /** Opens without writing or locking. */
    public Options readOnly(boolean value) {
        return set("read_only", value);
    }

    /**
     * Opens the database with key locks: transactions are pessimistic, and plain writes wait
     * for the keys transactions hold. Without it, transactions are optimistic.
     */
    public Options transactionDb(boolean value) {
        return set("transaction_db", value);
    }

    /** Bytes of a memtable before it is flushed. */
    public Options writeBufferSize(long bytes) {
        return set("write_buffer_size", bytes);
    }

    /** Memtables (the active one and those being flushed) before writes stall. */
    public Options maxWriteBufferNumber(int count) {
        return set("max_write_buffer_number", count);
    }

    /** Files in level 0 that start a compaction into level 1. */
    public Options level0FileNumCompactionTrigger(int files) {
        return set("level0_file_num_compaction_trigger", files);
    }

    /** Levels of the tree. */
    public Options numLevels(int levels) {
        return set("num_levels", levels);
    }

    /** Bytes of level 1; each next level holds {@link #maxBytesForLevelMultiplier} times more. */
    public Options maxBytesForLevelBase(long bytes) {
        return set("max_bytes_for_level_base", bytes);
    }

    /** How much larger each level is than the one above it. */
    public Options maxBytesForLevelMultiplier(double factor) {
        return set("max_bytes_for_level_multiplier", factor);
    }

    /** Bytes of the block cache (0: none). */
    public Options blockCacheSize(long bytes) {
        return set("block_cache_size", bytes);
    }

    /** Keeps index and filter blocks in the block cache rather than beside it. */
    public Options cacheIndexAndFilterBlocks(boolean value) {
        return set("cache_index_and_filter_blocks", value);
    }

    /** Compression of table blocks: {@code none}, {@code snappy}, {@code lz4} or {@code zstd}. */
    public Options compression(String name) {
        return set("compression", name);
    }

    /** Bits per key of the bloom filters (0: none). */
    public Options bloomBitsPerKey(int bits) {
        return set("bloom_bits_per_key", bits);
    }

    /** The merge operator: {@code uint64add}, {@code stringappend} or {@code none}. */
    public Options mergeOperator(String name) {
        return set("merge_operator", name);
    }

    /** Background flush and compaction threads. */
    public Options maxBackgroundJobs(int jobs) {
        return set("max_background_jobs", jobs);
    }

    /** How long a pessimistic transaction waits for a lock by default (with transactionDb). */
    public Options lockTimeoutMillis(long millis) {
        return set("lock_timeout_ms", millis);
    }

    /** The options as the native side reads them: one {@code name=value} per line. */
    String encode() {
        StringBuilder out = new StringBuilder();
        values.forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
        return out.toString();
    }

    @Override
    public String toString() {
        return "Options" + values;
    }
}
