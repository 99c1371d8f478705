/* The C API from C: every function family, its ownership rules and its errors. Built and run
 * by tests/c_api.rs (plainly, and with AddressSanitizer, whose leak checker fails the run if
 * anything handed to C is not released as the header says).
 *
 * Usage: api_test DIR   (DIR must not exist; the test creates databases under it) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#include "check.h"

/* True if `db` holds `value` for `key` (in `cf`, or the default family if null). */
static int holds(strata_t *db, strata_column_family_t *cf, const char *key, const char *value) {
    strata_readoptions_t *ro = strata_readoptions_create();
    char *err = NULL;
    size_t len = 0;
    char *got = cf ? strata_get_cf(db, ro, cf, key, strlen(key), &len, &err)
                   : strata_get(db, ro, key, strlen(key), &len, &err);
    strata_readoptions_destroy(ro);
    int ok;
    if (err != NULL) {
        fprintf(stderr, "get %s: %s\n", key, err);
        strata_free(err);
        ok = 0;
    } else if (value == NULL) {
        ok = got == NULL && len == 0;
    } else {
        ok = got != NULL && len == strlen(value) && memcmp(got, value, len) == 0;
    }
    strata_free(got);
    return ok;
}

static void basic_reads_and_writes(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();

    /* A missing database without create_if_missing. */
    strata_t *db = strata_open(opts, path, &err);
    CHECK(db == NULL);
    CHECK_ERROR(err, "no database in");

    strata_options_set_create_if_missing(opts, 1);
    strata_options_set_write_buffer_size(opts, 64 * 1024);
    strata_options_set_compression(opts, 1);
    strata_options_set_bloom_bits_per_key(opts, 10);
    /* RocksDB's kTolerateCorruptedTailRecords; 1 (kAbsoluteConsistency) is not offered and
       leaves it. The read-only open below takes 2, kPointInTimeRecovery. */
    strata_options_set_wal_recovery_mode(opts, 0);
    strata_options_set_wal_recovery_mode(opts, 1);
    db = strata_open(opts, path, &err);
    CHECK_OK(err);
    CHECK(db != NULL);

    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_writeoptions_set_sync(wo, 1);
    strata_put(db, wo, "apple", 5, "red", 3, &err);
    CHECK_OK(err);
    /* Binary keys and values: embedded NULs are bytes like any other. */
    strata_put(db, wo, "b\0b", 3, "x\0y", 3, &err);
    CHECK_OK(err);
    CHECK(holds(db, NULL, "apple", "red"));
    CHECK(holds(db, NULL, "pear", NULL));

    strata_readoptions_t *ro = strata_readoptions_create();
    size_t len = 0;
    char *v = strata_get(db, ro, "b\0b", 3, &len, &err);
    CHECK_OK(err);
    CHECK(v != NULL && len == 3 && memcmp(v, "x\0y", 3) == 0);
    strata_free(v);

    /* A snapshot keeps the old value. */
    const strata_snapshot_t *snap = strata_create_snapshot(db);
    strata_delete(db, wo, "apple", 5, &err);
    CHECK_OK(err);
    CHECK(holds(db, NULL, "apple", NULL));
    strata_readoptions_set_snapshot(ro, snap);
    v = strata_get(db, ro, "apple", 5, &len, &err);
    CHECK_OK(err);
    CHECK(v != NULL && len == 3 && memcmp(v, "red", 3) == 0);
    strata_free(v);
    strata_readoptions_set_snapshot(ro, NULL);
    strata_release_snapshot(db, snap);

    /* A batch is atomic; it stays the caller's and may be written again. */
    strata_writebatch_t *batch = strata_writebatch_create();
    char key[16];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "k%03d", i);
        strata_writebatch_put(batch, key, strlen(key), "v", 1);
    }
    strata_writebatch_delete(batch, "k050", 4);
    CHECK(strata_writebatch_count(batch) == 101);
    strata_write(db, wo, batch, &err);
    CHECK_OK(err);
    CHECK(strata_writebatch_count(batch) == 101);
    strata_writebatch_clear(batch);
    CHECK(strata_writebatch_count(batch) == 0);
    strata_writebatch_destroy(batch);

    /* One range tombstone removes k090..k094; begin after end is refused naming both. */
    strata_delete_range(db, wo, "k090", 4, "k095", 4, &err);
    CHECK_OK(err);
    CHECK(holds(db, NULL, "k090", NULL) && holds(db, NULL, "k094", NULL));
    CHECK(holds(db, NULL, "k095", "v"));
    strata_delete_range(db, wo, "z", 1, "a", 1, &err);
    CHECK_ERROR(err, "begin key 'z' is after end key 'a'");

    /* Iteration in both directions, with bounds. */
    strata_readoptions_set_iterate_lower_bound(ro, "k010", 4);
    strata_readoptions_set_iterate_upper_bound(ro, "k020", 4);
    strata_readoptions_set_readahead_size(ro, 65536);
    strata_readoptions_set_fill_cache(ro, 0);
    strata_readoptions_set_verify_checksums(ro, 0);
    strata_iterator_t *it = strata_create_iterator(db, ro);
    int n = 0;
    for (strata_iter_seek_to_first(it); strata_iter_valid(it); strata_iter_next(it)) {
        size_t klen = 0, vlen = 0;
        const char *k = strata_iter_key(it, &klen);
        const char *val = strata_iter_value(it, &vlen);
        snprintf(key, sizeof key, "k%03d", 10 + n);
        CHECK(klen == 4 && memcmp(k, key, 4) == 0);
        CHECK(vlen == 1 && val[0] == 'v');
        n++;
    }
    CHECK(n == 10);
    strata_iter_get_error(it, &err);
    CHECK_OK(err);
    strata_iter_seek_for_prev(it, "k015x", 5);
    size_t klen = 0;
    const char *k = strata_iter_key(it, &klen);
    CHECK(strata_iter_valid(it) && klen == 4 && memcmp(k, "k015", 4) == 0);
    strata_iter_prev(it);
    k = strata_iter_key(it, &klen);
    CHECK(strata_iter_valid(it) && memcmp(k, "k014", 4) == 0);
    strata_iter_seek_to_last(it);
    k = strata_iter_key(it, &klen);
    CHECK(strata_iter_valid(it) && memcmp(k, "k019", 4) == 0);
    strata_iter_seek(it, "zzz", 3);
    CHECK(!strata_iter_valid(it));
    CHECK(strata_iter_key(it, &klen) == NULL && klen == 0);
    strata_iter_destroy(it);

    /* Flush, compaction, properties. */
    strata_flush(db, &err);
    CHECK_OK(err);
    strata_compact_range(db, NULL, 0, NULL, 0, &err);
    CHECK_OK(err);
    char *prop = strata_property_value(db, "strata.stats");
    CHECK(prop != NULL && strstr(prop, "Strata stats") != NULL);
    strata_free(prop);
    CHECK(strata_property_value(db, "no.such.property") == NULL);

    /* Errors name what is wrong and leave the database usable. */
    char *big = calloc(1, (1 << 20) + 1);
    strata_put(db, wo, big, (1 << 20) + 1, "v", 1, &err);
    CHECK_ERROR(err, "key of 1048577 bytes");
    free(big);
    strata_put(db, NULL, "a", 1, "b", 1, &err);
    CHECK_ERROR(err, "write options is a null pointer");
    CHECK(holds(db, NULL, "k001", "v"));

    /* A second writer is refused while the first holds the lock. */
    strata_t *second = strata_open(opts, path, &err);
    CHECK(second == NULL);
    CHECK_ERROR(err, "lock");

    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_close(db);

    /* Read-only open: reads work, writes are refused. */
    strata_options_set_wal_recovery_mode(opts, 2);
    db = strata_open_for_read_only(opts, path, &err);
    CHECK_OK(err);
    CHECK(holds(db, NULL, "k099", "v"));
    CHECK(holds(db, NULL, "k092", NULL));
    wo = strata_writeoptions_create();
    strata_put(db, wo, "a", 1, "b", 1, &err);
    CHECK_ERROR(err, "read-only");
    strata_writeoptions_destroy(wo);
    strata_close(db);
    strata_options_destroy(opts);
}

static void column_families(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_t *db = strata_open(opts, path, &err);
    CHECK_OK(err);

    strata_options_t *cf_opts = strata_options_create();
    strata_options_set_write_buffer_size(cf_opts, 16 * 1024);
    strata_options_set_compaction_style(cf_opts, 1);
    strata_column_family_t *index = strata_create_column_family(db, cf_opts, "index", &err);
    CHECK_OK(err);
    strata_column_family_t *again = strata_create_column_family(db, cf_opts, "index", &err);
    CHECK(again == NULL);
    CHECK_ERROR(err, "'index' already exists");
    char *name = strata_column_family_name(index);
    CHECK(name != NULL && strcmp(name, "index") == 0);
    strata_free(name);

    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_put_cf(db, wo, index, "k", 1, "in index", 8, &err);
    CHECK_OK(err);
    strata_writebatch_t *batch = strata_writebatch_create();
    strata_writebatch_put(batch, "k", 1, "in default", 10);
    strata_writebatch_put_cf(batch, index, "k2", 2, "also", 4);
    strata_writebatch_delete_cf(batch, index, "missing", 7);
    strata_writebatch_delete_range_cf(batch, index, "m", 1, "n", 1);
    strata_write(db, wo, batch, &err);
    CHECK_OK(err);
    strata_writebatch_destroy(batch);
    CHECK(holds(db, index, "k", "in index"));
    CHECK(holds(db, index, "k2", "also"));
    CHECK(holds(db, NULL, "k", "in default"));

    strata_readoptions_t *ro = strata_readoptions_create();
    strata_iterator_t *it = strata_create_iterator_cf(db, ro, index, &err);
    CHECK_OK(err);
    int n = 0;
    for (strata_iter_seek_to_first(it); strata_iter_valid(it); strata_iter_next(it)) {
        n++;
    }
    CHECK(n == 2);
    strata_iter_destroy(it);

    strata_column_family_t *doomed = strata_create_column_family(db, cf_opts, "doomed", &err);
    CHECK_OK(err);
    strata_drop_column_family(db, doomed, &err);
    CHECK_OK(err);
    strata_put_cf(db, wo, doomed, "a", 1, "b", 1, &err);
    CHECK_ERROR(err, "'doomed' (id 2) was dropped");
    size_t len = 0;
    CHECK(strata_get_cf(db, ro, doomed, "a", 1, &len, &err) == NULL);
    CHECK_ERROR(err, "was dropped");
    strata_column_family_handle_destroy(doomed);

    strata_flush_cf(db, index, &err);
    CHECK_OK(err);
    strata_compact_range_cf(db, index, NULL, 0, NULL, 0, &err);
    CHECK_OK(err);
    char *prop = strata_property_value_cf(db, index, "strata.num-files-at-level0");
    CHECK(prop != NULL);
    strata_free(prop);

    strata_column_family_handle_destroy(index);
    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_close(db);

    /* The database now has two families: opening without naming "index" fails. */
    size_t count = 0;
    char **names = strata_list_column_families(opts, path, &count, &err);
    CHECK_OK(err);
    CHECK(count == 2 && strcmp(names[0], "default") == 0 && strcmp(names[1], "index") == 0);
    strata_list_column_families_destroy(names, count);
    db = strata_open(opts, path, &err);
    CHECK(db == NULL);
    CHECK_ERROR(err, "not named to open: index");

    const char *cf_names[2] = {"default", "index"};
    const strata_options_t *cf_options[2] = {opts, cf_opts};
    strata_column_family_t *handles[2] = {NULL, NULL};
    db = strata_open_column_families(opts, path, 2, cf_names, cf_options, handles, &err);
    CHECK_OK(err);
    CHECK(handles[0] != NULL && handles[1] != NULL);
    CHECK(holds(db, handles[1], "k2", "also"));
    CHECK(holds(db, handles[0], "k", "in default"));
    strata_column_family_t *found = strata_get_column_family(db, "index");
    CHECK(found != NULL && holds(db, found, "k", "in index"));
    CHECK(strata_get_column_family(db, "nope") == NULL);
    strata_column_family_handle_destroy(found);
    strata_column_family_handle_destroy(handles[0]);
    strata_column_family_handle_destroy(handles[1]);
    strata_close(db);

    strata_options_destroy(cf_opts);
    strata_options_destroy(opts);
}

static void blob_files(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_options_set_enable_blob_files(opts, 1);
    strata_options_set_min_blob_size(opts, 100);
    strata_options_set_blob_file_size(opts, 1 << 20);
    strata_options_set_blob_separation_at_write(opts, 1);
    strata_options_set_enable_blob_garbage_collection(opts, 1);
    strata_options_set_blob_garbage_collection_age_cutoff(opts, 0.5);
    strata_options_set_blob_garbage_collection_force_threshold(opts, 0.9);
    strata_t *db = strata_open(opts, path, &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    char value[500];
    memset(value, 'v', sizeof value);
    strata_put(db, wo, "big", 3, value, sizeof value, &err);
    CHECK_OK(err);
    strata_put(db, wo, "small", 5, "s", 1, &err);
    CHECK_OK(err);
    strata_flush(db, &err);
    CHECK_OK(err);
    char *files = strata_property_value(db, "strata.num-blob-files");
    CHECK(files != NULL && strcmp(files, "1") == 0);
    strata_free(files);
    strata_readoptions_t *ro = strata_readoptions_create();
    size_t len = 0;
    char *v = strata_get(db, ro, "big", 3, &len, &err);
    CHECK_OK(err);
    CHECK(v != NULL && len == sizeof value && memcmp(v, value, len) == 0);
    strata_free(v);
    CHECK(holds(db, NULL, "small", "s"));
    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_close(db);
    /* A cutoff outside 0..1 is refused by name. */
    strata_options_set_blob_garbage_collection_age_cutoff(opts, 2.0);
    CHECK(strata_open(opts, path, &err) == NULL);
    CHECK_ERROR(err, "blob_garbage_collection_age_cutoff");
    strata_options_destroy(opts);
}

static void read_and_write_paths(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_options_set_use_direct_reads(opts, 1);
    strata_options_set_use_direct_io_for_flush_and_compaction(opts, 1);
    strata_options_set_compaction_readahead_size(opts, 1 << 20);
    strata_options_set_memtable_prefix_bloom_size_ratio(opts, 0.1);
    strata_options_set_memtable_whole_key_filtering(opts, 1);
    strata_t *db = strata_open(opts, path, &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_put(db, wo, "direct", 6, "io", 2, &err);
    CHECK_OK(err);
    strata_flush(db, &err);
    CHECK_OK(err);
    strata_compact_range(db, NULL, 0, NULL, 0, &err);
    CHECK_OK(err);
    CHECK(holds(db, NULL, "direct", "io"));
    strata_writeoptions_destroy(wo);
    strata_close(db);
    /* Mapped reads of what direct IO wrote; with direct reads too, refused by name. */
    strata_options_set_use_direct_reads(opts, 0);
    strata_options_set_allow_mmap_reads(opts, 1);
    db = strata_open(opts, path, &err);
    CHECK_OK(err);
    CHECK(holds(db, NULL, "direct", "io"));
    strata_close(db);
    strata_options_set_use_direct_reads(opts, 1);
    CHECK(strata_open(opts, path, &err) == NULL);
    CHECK_ERROR(err, "allow_mmap_reads");
    strata_options_destroy(opts);
}

/* Gets of keys a memtable holds, with its point index made (past 256 entries) and with
 * none; a share over 0.5 is refused by name. */
static void memtable_point_index(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_options_set_memtable_point_index_ratio(opts, 0.75);
    CHECK(strata_open(opts, path, &err) == NULL);
    CHECK_ERROR(err, "memtable_point_index_ratio");
    const double ratios[] = {0.25, 0.0};
    for (int r = 0; r < 2; r++) {
        strata_options_set_memtable_point_index_ratio(opts, ratios[r]);
        strata_t *db = strata_open(opts, path, &err);
        CHECK_OK(err);
        strata_writeoptions_t *wo = strata_writeoptions_create();
        char key[32], value[32];
        for (int i = 0; i < 1000; i++) {
            snprintf(key, sizeof key, "k%05d", (i * 7919) % 1000);
            snprintf(value, sizeof value, "v%d.%d", r, i);
            strata_put(db, wo, key, strlen(key), value, strlen(value), &err);
            CHECK_OK(err);
        }
        for (int i = 0; i < 1000; i++) {
            snprintf(key, sizeof key, "k%05d", (i * 7919) % 1000);
            snprintf(value, sizeof value, "v%d.%d", r, i);
            CHECK(holds(db, NULL, key, value));
        }
        CHECK(holds(db, NULL, "absent", NULL));
        strata_writeoptions_destroy(wo);
        strata_close(db);
    }
    strata_options_destroy(opts);
}

static void partitioned_index_and_filters(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    /* Partitioned filters without the two-level index are refused naming both. */
    strata_options_set_partition_filters(opts, 1);
    CHECK(strata_open(opts, path, &err) == NULL);
    CHECK_ERROR(err, "partition_filters needs index_type");
    strata_options_set_index_type(opts, 2);
    strata_options_set_metadata_block_size(opts, 256);
    strata_options_set_pin_top_level_index_and_filter(opts, 0);
    strata_options_set_cache_index_and_filter_blocks(opts, 1);
    strata_options_set_pin_l0_filter_and_index_blocks_in_cache(opts, 1);
    strata_options_set_prepopulate_block_cache(opts, 1);
    strata_options_set_warm_compaction_outputs(opts, 0);
    strata_options_set_uncache_aggressiveness(opts, 10000);
    strata_options_set_block_size_deviation(opts, 100);
    strata_options_set_block_size(opts, 256);
    strata_t *db = strata_open(opts, path, &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    char key[32], value[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "key%06d", i);
        snprintf(value, sizeof value, "value%d", i);
        strata_put(db, wo, key, strlen(key), value, strlen(value), &err);
        CHECK_OK(err);
    }
    strata_flush(db, &err);
    CHECK_OK(err);
    CHECK(holds(db, NULL, "key001234", "value1234"));
    CHECK(holds(db, NULL, "key001999", "value1999"));
    CHECK(holds(db, NULL, "key001234x", NULL));
    strata_writeoptions_destroy(wo);
    strata_close(db);
    strata_options_destroy(opts);
}

static void data_block_hash_index(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    /* A ratio at or below 0 with the hash index is refused by name. */
    strata_options_set_data_block_index_type(opts, 1);
    strata_options_set_data_block_hash_table_util_ratio(opts, 0.0);
    CHECK(strata_open(opts, path, &err) == NULL);
    CHECK_ERROR(err, "data_block_hash_table_util_ratio is 0");
    strata_options_set_data_block_hash_table_util_ratio(opts, 0.5);
    strata_options_set_block_size(opts, 256);
    strata_t *db = strata_open(opts, path, &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    char key[32], value[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(key, sizeof key, "key%06d", i);
        snprintf(value, sizeof value, "value%d", i);
        strata_put(db, wo, key, strlen(key), value, strlen(value), &err);
        CHECK_OK(err);
    }
    strata_flush(db, &err);
    CHECK_OK(err);
    CHECK(holds(db, NULL, "key001234", "value1234"));
    CHECK(holds(db, NULL, "key000000", "value0"));
    CHECK(holds(db, NULL, "key001234x", NULL));
    strata_writeoptions_destroy(wo);
    strata_close(db);
    strata_options_destroy(opts);
}

static void nulls_are_refused_not_followed(void) {
    char *err = NULL;
    CHECK(strata_open(NULL, "x", &err) == NULL);
    CHECK_ERROR(err, "options is a null pointer");
    strata_options_t *opts = strata_options_create();
    CHECK(strata_open(opts, NULL, &err) == NULL);
    CHECK_ERROR(err, "database path is a null pointer");
    /* A previous message in *errptr is released, not leaked. */
    err = NULL;
    strata_flush(NULL, &err);
    strata_flush(NULL, &err);
    CHECK_ERROR(err, "database is a null pointer");
    /* errptr may be null; destroy functions take null. */
    strata_flush(NULL, NULL);
    strata_close(NULL);
    strata_iter_destroy(NULL);
    strata_writebatch_destroy(NULL);
    strata_free(NULL);
    strata_options_destroy(opts);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/basic", argv[1]);
    basic_reads_and_writes(path);
    snprintf(path, sizeof path, "%s/families", argv[1]);
    column_families(path);
    snprintf(path, sizeof path, "%s/blobs", argv[1]);
    blob_files(path);
    snprintf(path, sizeof path, "%s/direct", argv[1]);
    read_and_write_paths(path);
    snprintf(path, sizeof path, "%s/point_index", argv[1]);
    memtable_point_index(path);
    snprintf(path, sizeof path, "%s/partitioned", argv[1]);
    partitioned_index_and_filters(path);
    snprintf(path, sizeof path, "%s/hashed", argv[1]);
    data_block_hash_index(path);
    nulls_are_refused_not_followed();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
