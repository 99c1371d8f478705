/* The C API's reach into the engine from C: merge operators (built-in and callbacks),
 * comparators, compaction filters and event listeners as callbacks, multi_get, range
 * deletes, optimistic and pessimistic transactions (save points, two-phase commit, updatable
 * cursors), checkpoints, backups, table files and ingest, statistics, prefix extractors, TTL,
 * repair; and the refusal of null pointers with non-zero lengths everywhere. Built and run by
 * tests/c_api.rs, plainly and under AddressSanitizer and UndefinedBehaviorSanitizer (whose
 * leak checker also catches a callback state whose destructor never ran).
 *
 * Usage: engine_test DIR   (DIR must not exist; the test creates databases under it) */

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strata.h"

#include "check.h"
#include "kv.h"
#include "root.h"

/* A path under the test's directory; each call returns a fresh buffer (the caller frees). */
static char *path_of(const char *name) {
    size_t n = strlen(root) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", root, name);
    return p;
}

static strata_t *open_db(strata_options_t *opts, const char *name) {
    char *err = NULL;
    char *path = path_of(name);
    strata_options_set_create_if_missing(opts, 1);
    strata_t *db = strata_open(opts, path, &err);
    CHECK_OK(err);
    CHECK(db != NULL);
    free(path);
    return db;
}

/* ---- null pointers with non-zero lengths ---- */

static void null_pointers_with_lengths_are_refused(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_mergeoperator_t *add = strata_mergeoperator_create_uint64add();
    strata_options_set_merge_operator(opts, add);
    strata_mergeoperator_destroy(add);
    strata_t *db = open_db(opts, "nulls");
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_readoptions_t *ro = strata_readoptions_create();

    strata_put(db, wo, NULL, 3, "v", 1, &err);
    CHECK_ERROR(err, "key is a null pointer with length 3");
    strata_put(db, wo, "k", 1, NULL, 5, &err);
    CHECK_ERROR(err, "value is a null pointer with length 5");
    /* A zero length still allows a null pointer: the empty value. */
    strata_put(db, wo, "k", 1, NULL, 0, &err);
    CHECK_OK(err);
    CHECK(holds(db, "k", 1, "", 0));
    strata_delete(db, wo, NULL, 1, &err);
    CHECK_ERROR(err, "key is a null pointer");
    strata_merge(db, wo, "n", 1, NULL, 8, &err);
    CHECK_ERROR(err, "operand is a null pointer with length 8");
    strata_delete_range(db, wo, "a", 1, NULL, 2, &err);
    CHECK_ERROR(err, "end key is a null pointer");
    size_t len = 7;
    CHECK(strata_get(db, ro, NULL, 2, &len, &err) == NULL);
    CHECK_ERROR(err, "key is a null pointer with length 2");
    CHECK(len == 0);
    strata_compact_range(db, NULL, 0, NULL, 0, &err); /* null bounds are open bounds */
    CHECK_OK(err);

    /* A batch keeps the first refused update and is refused whole. */
    strata_writebatch_t *b = strata_writebatch_create();
    strata_writebatch_put(b, "x", 1, "1", 1);
    strata_writebatch_put(b, NULL, 4, "1", 1);
    strata_writebatch_merge(b, "y", 1, NULL, 8);
    strata_write(db, wo, b, &err);
    CHECK_ERROR(err, "write batch refused: key is a null pointer with length 4");
    CHECK(HOLDS(db, "x", NULL));
    strata_writebatch_clear(b);
    strata_writebatch_put(b, "x", 1, "1", 1);
    strata_write(db, wo, b, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "x", "1"));
    strata_writebatch_destroy(b);

    /* An iterator refuses the seek, says why, and does not move until a seek is accepted. */
    strata_iterator_t *it = strata_create_iterator(db, ro);
    strata_iter_seek_to_first(it);
    CHECK(strata_iter_valid(it));
    strata_iter_seek(it, NULL, 4);
    CHECK(!strata_iter_valid(it));
    strata_iter_next(it);
    CHECK(!strata_iter_valid(it));
    strata_iter_get_error(it, &err);
    CHECK_ERROR(err, "seek key is a null pointer with length 4");
    strata_iter_seek_for_prev(it, NULL, 1);
    CHECK(!strata_iter_valid(it));
    strata_iter_seek(it, "k", 1);
    CHECK(strata_iter_valid(it));
    strata_iter_get_error(it, &err);
    CHECK_OK(err);
    strata_iter_destroy(it);

    /* multi_get refuses only the bad key. */
    const char *keys[2] = {"x", NULL};
    size_t sizes[2] = {1, 3};
    char *values[2];
    size_t vsizes[2];
    char *errs[2];
    strata_multi_get(db, ro, 2, keys, sizes, values, vsizes, errs);
    CHECK(values[0] != NULL && vsizes[0] == 1 && errs[0] == NULL);
    CHECK(values[1] == NULL && errs[1] != NULL);
    CHECK_ERROR(errs[1], "key is a null pointer with length 3");
    strata_free(values[0]);

    /* Table files, transactions and delimiters refuse them too. */
    strata_mergeoperator_t *bad = strata_mergeoperator_create_stringappend(NULL, 2, &err);
    CHECK(bad == NULL);
    CHECK_ERROR(err, "delimiter is a null pointer with length 2");
    strata_transaction_t *txn = strata_optimistictransaction_begin(db, wo);
    strata_transaction_put(txn, NULL, 2, "v", 1, &err);
    CHECK_ERROR(err, "key is a null pointer with length 2");
    strata_transaction_destroy(txn);

    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_close(db);
    strata_options_destroy(opts);
}

/* Every other function taking a pointer and a length refuses a null pointer with a length:
 * each call below passes one and must fail naming the argument. */
#define REFUSED(call, needle) \
    do {                      \
        call;                 \
        CHECK_ERROR(err, needle); \
    } while (0)

/* A batch holding one refused update is refused whole by `strata_write`. */
static void batch_refused(strata_t *db, strata_writebatch_t *b, const char *needle) {
    char *err = NULL;
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_write(db, wo, b, &err);
    CHECK_ERROR(err, needle);
    strata_writebatch_destroy(b);
    strata_writeoptions_destroy(wo);
}

static void null_pointers_with_lengths_are_refused_everywhere(void) {
    char *err = NULL;
    /* No merge operator and no TTL: the arguments are refused before either is needed. */
    strata_options_t *opts = strata_options_create();
    strata_t *db = open_db(opts, "nulls-everywhere");
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_readoptions_t *ro = strata_readoptions_create();
    strata_column_family_t *cf = strata_create_column_family(db, opts, "cf", &err);
    CHECK_OK(err);
    size_t len = 9;

    REFUSED(strata_put_cf(db, wo, cf, NULL, 3, "v", 1, &err), "key is a null pointer with length 3");
    REFUSED(strata_put_cf(db, wo, cf, "k", 1, NULL, 4, &err), "value is a null pointer with length 4");
    REFUSED(strata_delete_cf(db, wo, cf, NULL, 2, &err), "key is a null pointer with length 2");
    REFUSED(strata_merge_cf(db, wo, cf, NULL, 2, "o", 1, &err), "key is a null pointer with length 2");
    REFUSED(strata_merge_cf(db, wo, cf, "k", 1, NULL, 6, &err), "operand is a null pointer with length 6");
    REFUSED(strata_merge(db, wo, NULL, 5, "o", 1, &err), "key is a null pointer with length 5");
    REFUSED(strata_delete_range(db, wo, NULL, 1, "z", 1, &err), "begin key is a null pointer with length 1");
    REFUSED(strata_put_with_ttl(db, NULL, 3, "v", 1, 60, &err), "key is a null pointer with length 3");
    REFUSED(strata_put_with_ttl(db, "k", 1, NULL, 3, 60, &err), "value is a null pointer with length 3");
    REFUSED(CHECK(strata_get_cf(db, ro, cf, NULL, 2, &len, &err) == NULL), "key is a null pointer with length 2");
    CHECK(len == 0);
    REFUSED(CHECK(strata_get_pinned(db, ro, NULL, 2, &err) == NULL), "key is a null pointer with length 2");
    /* A null bound is an open bound, whatever its length. */
    strata_compact_range_cf(db, cf, NULL, 4, NULL, 4, &err);
    CHECK_OK(err);

    /* Nothing of the above was written. */
    CHECK(HOLDS(db, "k", NULL));
    char *v = strata_get_cf(db, ro, cf, "k", 1, &len, &err);
    CHECK_OK(err);
    CHECK(v == NULL);

    strata_writebatch_t *b = strata_writebatch_create();
    strata_writebatch_put_cf(b, cf, "k", 1, NULL, 2);
    batch_refused(db, b, "write batch refused: value is a null pointer with length 2");
    b = strata_writebatch_create();
    strata_writebatch_delete(b, NULL, 3);
    batch_refused(db, b, "write batch refused: key is a null pointer with length 3");
    b = strata_writebatch_create();
    strata_writebatch_delete_cf(b, cf, NULL, 3);
    batch_refused(db, b, "write batch refused: key is a null pointer with length 3");
    b = strata_writebatch_create();
    strata_writebatch_delete_range(b, "a", 1, NULL, 3);
    batch_refused(db, b, "write batch refused: end key is a null pointer with length 3");
    b = strata_writebatch_create();
    strata_writebatch_delete_range_cf(b, cf, NULL, 2, "b", 1);
    batch_refused(db, b, "write batch refused: begin key is a null pointer with length 2");
    b = strata_writebatch_create();
    strata_writebatch_single_delete(b, NULL, 1);
    batch_refused(db, b, "write batch refused: key is a null pointer with length 1");
    b = strata_writebatch_create();
    strata_writebatch_merge_cf(b, cf, "k", 1, NULL, 7);
    batch_refused(db, b, "write batch refused: operand is a null pointer with length 7");

    /* Table files. */
    char *file = path_of("nulls.sst");
    strata_sstfilewriter_t *w = strata_sstfilewriter_create(opts, file, &err);
    CHECK_OK(err);
    REFUSED(strata_sstfilewriter_put(w, NULL, 1, "v", 1, &err), "key is a null pointer with length 1");
    REFUSED(strata_sstfilewriter_put(w, "a", 1, NULL, 2, &err), "value is a null pointer with length 2");
    REFUSED(strata_sstfilewriter_merge(w, "b", 1, NULL, 2, &err), "operand is a null pointer with length 2");
    REFUSED(strata_sstfilewriter_delete(w, NULL, 2, &err), "key is a null pointer with length 2");
    REFUSED(strata_sstfilewriter_delete_range(w, "c", 1, NULL, 1, &err), "end key is a null pointer with length 1");
    strata_sstfilewriter_destroy(w);

    /* Transactions, optimistic and their cursors. */
    strata_transaction_t *txn = strata_optimistictransaction_begin(db, wo);
    REFUSED(strata_transaction_delete(txn, NULL, 2, &err), "key is a null pointer with length 2");
    REFUSED(strata_transaction_merge(txn, "k", 1, NULL, 2, &err), "operand is a null pointer with length 2");
    REFUSED(CHECK(strata_transaction_get(txn, NULL, 2, &len, &err) == NULL), "key is a null pointer with length 2");
    REFUSED(CHECK(strata_transaction_get_for_update(txn, NULL, 2, &len, &err) == NULL), "key is a null pointer with length 2");
    REFUSED(strata_transaction_put_cf(txn, cf, "k", 1, NULL, 3, &err), "value is a null pointer with length 3");
    REFUSED(strata_transaction_delete_cf(txn, cf, NULL, 3, &err), "key is a null pointer with length 3");
    REFUSED(strata_transaction_merge_cf(txn, cf, NULL, 3, "o", 1, &err), "key is a null pointer with length 3");
    REFUSED(CHECK(strata_transaction_get_cf(txn, cf, NULL, 3, 1, &len, &err) == NULL), "key is a null pointer with length 3");
    strata_transaction_put(txn, "t", 1, "1", 1, &err);
    CHECK_OK(err);
    strata_txn_cursor_t *c = strata_transaction_create_cursor(txn, ro, NULL, &err);
    CHECK_OK(err);
    REFUSED(strata_txn_cursor_seek(c, NULL, 2, &err), "seek key is a null pointer with length 2");
    REFUSED(strata_txn_cursor_seek_for_prev(c, NULL, 2, &err), "seek key is a null pointer with length 2");
    strata_txn_cursor_seek_to_first(c);
    CHECK(strata_txn_cursor_valid(c));
    REFUSED(strata_txn_cursor_update(c, NULL, 5, &err), "value is a null pointer with length 5");
    strata_txn_cursor_destroy(c);
    strata_transaction_commit(txn, &err);
    CHECK_OK(err);
    strata_transaction_destroy(txn);
    CHECK(HOLDS(db, "t", "1"));

    strata_column_family_handle_destroy(cf);
    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_close(db);

    /* A transaction database. */
    char *tpath = path_of("nulls-tdb");
    strata_options_set_create_if_missing(opts, 1);
    strata_transactiondb_t *tdb = strata_transactiondb_open(opts, tpath, &err);
    CHECK_OK(err);
    ro = strata_readoptions_create();
    REFUSED(strata_transactiondb_put(tdb, NULL, 2, "v", 1, &err), "key is a null pointer with length 2");
    REFUSED(strata_transactiondb_put(tdb, "k", 1, NULL, 2, &err), "value is a null pointer with length 2");
    REFUSED(strata_transactiondb_delete(tdb, NULL, 2, &err), "key is a null pointer with length 2");
    REFUSED(CHECK(strata_transactiondb_get(tdb, ro, NULL, 2, &len, &err) == NULL), "key is a null pointer with length 2");
    strata_readoptions_destroy(ro);
    strata_transactiondb_close(tdb);
    strata_options_destroy(opts);
    free(tpath);
    free(file);
}

/* ---- compression choices, checksums and ingest behind ---- */

/* The total size of the tables of `db`, from its property. */
static unsigned long long sst_bytes(strata_t *db) {
    char *text = strata_property_value(db, "rocksdb.total-sst-files-size");
    CHECK(text != NULL);
    unsigned long long n = text ? strtoull(text, NULL, 10) : 0;
    strata_free(text);
    return n;
}

/* Whether an OPTIONS file of database `name` holds `needle`. */
static int options_file_holds(const char *name, const char *needle) {
    char *dir = path_of(name);
    DIR *d = opendir(dir);
    int found = 0;
    struct dirent *e;
    while (d && !found && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "OPTIONS-", 8) != 0) continue;
        char file[8192];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        FILE *f = fopen(file, "r");
        char line[1024];
        while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
        if (f) fclose(f);
    }
    if (d) closedir(d);
    free(dir);
    return found;
}

static void compression_choices_and_checksums(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    /* Level 0 uncompressed, every level below zstd with a trained dictionary; the
     * bottommost level zstd at its own level; blocks checksummed by xxh3. */
    strata_options_set_compression(opts, 7); /* compression_per_level overrides it */
    int per_level[2] = {0, 7};
    strata_options_set_compression_per_level(opts, per_level, 2);
    strata_options_set_compression_options(opts, -14, 32767, 0, 4096);
    strata_options_set_compression_options_zstd_max_train_bytes(opts, 40960);
    strata_options_set_bottommost_compression(opts, 7);
    strata_options_set_bottommost_compression_options(opts, -14, 1, 0, 0, 1);
    strata_options_set_bottommost_compression_options_zstd_max_train_bytes(opts, 0, 1);
    strata_options_set_checksum(opts, 4);
    /* Numbers outside RocksDB's leave the settings as they are. */
    strata_options_set_checksum(opts, 9);
    int unknown[1] = {5};
    strata_options_set_compression_per_level(opts, unknown, 1);
    strata_options_set_compression_per_level(opts, NULL, 3);
    strata_options_set_bottommost_compression(opts, 42);
    strata_t *db = open_db(opts, "compressed");
    CHECK(options_file_holds("compressed", "checksum=xxh3"));
    CHECK(options_file_holds("compressed", "compression_opts.max_dict_bytes=4096"));
    CHECK(options_file_holds("compressed", "compression_opts.zstd_max_train_bytes=40960"));

    char key[32], value[256];
    strata_writeoptions_t *wo = strata_writeoptions_create();
    /* Two overlapping flushes, so that the compaction merges them (rather than moving one
     * file down as it is). */
    for (int round = 0; round < 2; round++) {
        for (int i = round; i < 2000; i += 2 - round) {
            snprintf(key, sizeof key, "key%06d", i);
            memset(value, 'a' + i % 3, sizeof value);
            strata_put(db, wo, key, strlen(key), value, sizeof value, &err);
            CHECK_OK(err);
        }
        strata_flush(db, &err);
        CHECK_OK(err);
    }
    unsigned long long flushed = sst_bytes(db);
    strata_compact_all(db, &err);
    CHECK_OK(err);
    unsigned long long compacted = sst_bytes(db);
    /* The flush (level 0) wrote the values as they are, the compaction compressed them. */
    CHECK(flushed > 2000 * 256);
    if (!(compacted * 4 < flushed))
        fprintf(stderr, "flushed %llu bytes, compacted %llu\n", flushed, compacted);
    CHECK(compacted * 4 < flushed);
    memset(value, 'a' + 1234 % 3, sizeof value);
    strata_readoptions_t *ro = strata_readoptions_create();
    size_t len;
    char *v = strata_get(db, ro, "key001234", 9, &len, &err);
    CHECK_OK(err);
    CHECK(v && len == sizeof value && memcmp(v, value, len) == 0);
    strata_free(v);
    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_close(db);

    /* Reopened with crc32c, the tables written by xxh3 still read. */
    strata_options_set_checksum(opts, 1);
    db = open_db(opts, "compressed");
    CHECK(options_file_holds("compressed", "checksum=crc32c"));
    CHECK(HOLDS(db, "key000001", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                                 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                                 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                                 "bbbbbbbbbbbbbbbb"));
    strata_close(db);

    /* A compression level zstd does not have is refused at open, naming it. */
    strata_options_set_compression_options(opts, 0, 99, 0, 0);
    strata_options_set_compression_per_level(opts, NULL, 0);
    strata_options_set_compression(opts, 7);
    char *path = path_of("bad-level");
    CHECK(strata_open(opts, path, &err) == NULL);
    CHECK_ERROR(err, "level");
    free(path);
    strata_options_destroy(opts);
}

/* Writes a table file of `n` keys `key`-`value` pairs to `name` under the test root. */
static char *table_file(strata_options_t *opts, const char *name, const char *key, const char *value) {
    char *err = NULL;
    char *file = path_of(name);
    strata_sstfilewriter_t *w = strata_sstfilewriter_create(opts, file, &err);
    CHECK_OK(err);
    strata_sstfilewriter_put(w, key, strlen(key), value, strlen(value), &err);
    CHECK_OK(err);
    strata_sstfilewriter_finish(w, &err);
    CHECK_OK(err);
    strata_sstfilewriter_destroy(w);
    return file;
}

static void ingest_behind(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_allow_ingest_behind(opts, 1);
    strata_t *db = open_db(opts, "behind");
    put(db, "k", "new");
    strata_ingestexternalfileoptions_t *io = strata_ingestexternalfileoptions_create();
    strata_ingestexternalfileoptions_set_ingest_behind(io, 1);
    char *older = table_file(opts, "older.sst", "k", "old");
    const char *files[1] = {older};
    strata_ingest_external_file(db, files, 1, io, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "k", "new")); /* the data already there shadows the ingested file */
    char *backfill = table_file(opts, "backfill.sst", "m", "filled");
    files[0] = backfill;
    strata_ingest_external_file(db, files, 1, io, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "m", "filled"));
    strata_close(db);

    /* Without the last level reserved, an ingest behind is refused, writing nothing. */
    strata_options_set_allow_ingest_behind(opts, 0);
    db = open_db(opts, "not-behind");
    char *again = table_file(opts, "again.sst", "a", "1");
    files[0] = again;
    strata_ingest_external_file(db, files, 1, io, &err);
    CHECK_ERROR(err, "allow_ingest_behind");
    CHECK(HOLDS(db, "a", NULL));
    strata_close(db);
    strata_ingestexternalfileoptions_destroy(io);
    strata_options_destroy(opts);
    free(older);
    free(backfill);
    free(again);
}

/* ---- live file metadata ---- */

static void live_files(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_t *db = open_db(opts, "livefiles");
    strata_column_family_t *cf = strata_create_column_family(db, opts, "other", &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    put(db, "b", "1");
    put(db, "d", "2");
    strata_delete(db, wo, "c", 1, &err);
    strata_put_cf(db, wo, cf, "x", 1, "y", 1, &err);
    CHECK_OK(err);
    strata_flush(db, &err);
    strata_flush_cf(db, cf, &err);
    CHECK_OK(err);

    strata_livefiles_t *files = strata_livefiles(db);
    CHECK(strata_livefiles_count(files) == 2);
    CHECK(strcmp(strata_livefiles_column_family_name(files, 0), "default") == 0);
    CHECK(strcmp(strata_livefiles_column_family_name(files, 1), "other") == 0);
    const char *name = strata_livefiles_name(files, 0);
    CHECK(name && strlen(name) == 10 && strcmp(name + 6, ".sst") == 0);
    CHECK(strata_livefiles_level(files, 0) == 0);
    CHECK(strata_livefiles_size(files, 0) > 0);
    size_t len = 0;
    const char *k = strata_livefiles_smallestkey(files, 0, &len);
    CHECK(len == 1 && k[0] == 'b');
    k = strata_livefiles_largestkey(files, 0, &len);
    CHECK(len == 1 && k[0] == 'd');
    CHECK(strata_livefiles_entries(files, 0) == 3);
    CHECK(strata_livefiles_deletions(files, 0) == 1);
    CHECK(strata_livefiles_smallest_seqno(files, 0) == 1);
    CHECK(strata_livefiles_largest_seqno(files, 0) == 3);
    /* An index out of range reads as nothing. */
    CHECK(strata_livefiles_name(files, 2) == NULL && strata_livefiles_name(files, -1) == NULL);
    CHECK(strata_livefiles_level(files, 7) == -1 && strata_livefiles_size(files, 7) == 0);
    CHECK(strata_livefiles_smallestkey(files, 7, &len) == NULL && len == 0);
    CHECK(strata_livefiles_entries(files, 7) == 0);
    strata_livefiles_destroy(files);
    CHECK(strata_livefiles(NULL) == NULL && strata_livefiles_count(NULL) == 0);
    strata_livefiles_destroy(NULL);

    strata_compact_all(db, &err);
    CHECK_OK(err);
    files = strata_livefiles(db);
    CHECK(strata_livefiles_count(files) == 2);
    CHECK(strata_livefiles_level(files, 0) == 6); /* moved to the last level */
    strata_livefiles_destroy(files);

    strata_column_family_handle_destroy(cf);
    strata_writeoptions_destroy(wo);
    strata_close(db);
    strata_options_destroy(opts);
}

/* ---- approximate sizes, files dropped by range, single deletes ---- */

static void file_ranges_and_single_deletes(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_t *db = open_db(opts, "ranges");
    strata_column_family_t *cf = strata_create_column_family(db, opts, "other", &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    char key[16], value[512];
    memset(value, 'v', sizeof value);
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "k%04d", i);
        strata_put(db, wo, key, strlen(key), value, sizeof value, &err);
        strata_put_cf(db, wo, cf, key, strlen(key), value, sizeof value, &err);
    }
    CHECK_OK(err);
    strata_compact_all(db, &err); /* flushes, then moves the tables out of level 0 */
    CHECK_OK(err);
    strata_flush_cf(db, cf, &err);
    strata_compact_range_cf(db, cf, NULL, 0, NULL, 0, &err);
    CHECK_OK(err);

    const char *starts[3] = {"k0000", "k0500", "z"};
    const char *limits[3] = {"k0500", "k1000", "zz"};
    size_t lens[3] = {5, 5, 1};
    size_t limit_lens[3] = {5, 5, 2};
    uint64_t sizes[3] = {7, 7, 7};
    strata_approximate_sizes(db, 3, starts, lens, limits, limit_lens, sizes, &err);
    CHECK_OK(err);
    CHECK(sizes[0] > 100000 && sizes[1] > 100000 && sizes[2] == 0);
    uint64_t cf_sizes[3] = {7, 7, 7};
    strata_approximate_sizes_cf(db, cf, 3, starts, lens, limits, limit_lens, cf_sizes, &err);
    CHECK_OK(err);
    CHECK(cf_sizes[0] > 100000 && cf_sizes[2] == 0);
    /* Bad arguments: every size 0 and an error naming the argument. */
    strata_approximate_sizes(db, 3, starts, NULL, limits, limit_lens, sizes, &err);
    CHECK_ERROR(err, "range_start_key_len is a null pointer with 3 ranges");
    CHECK(sizes[0] == 0 && sizes[1] == 0);
    const char *bad[1] = {NULL};
    strata_approximate_sizes(db, 1, bad, lens, limits, limit_lens, sizes, &err);
    CHECK_ERROR(err, "range start key is a null pointer with length 5");
    strata_approximate_sizes(db, -1, starts, lens, limits, limit_lens, sizes, &err);
    CHECK_ERROR(err, "num_ranges -1 is negative");
    strata_approximate_sizes(db, 2, starts, lens, limits, limit_lens, NULL, &err);
    CHECK_ERROR(err, "sizes is a null pointer with 2 ranges");
    strata_approximate_sizes_cf(db, NULL, 1, starts, lens, limits, limit_lens, sizes, &err);
    CHECK_ERROR(err, "column family is a null pointer");

    /* Dropping the files in a range: an open start, and through the family. */
    strata_delete_file_in_range(db, NULL, 0, "k9", 2, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "k0001", NULL));
    strata_delete_file_in_range_cf(db, cf, NULL, 0, NULL, 0, &err);
    CHECK_OK(err);
    size_t len;
    strata_readoptions_t *ro = strata_readoptions_create();
    char *v = strata_get_cf(db, ro, cf, "k0001", 5, &len, &err);
    CHECK_OK(err);
    CHECK(v == NULL);
    strata_delete_file_in_range(db, "k", 1, NULL, 3, &err);
    CHECK_OK(err); /* a null key is an open bound, whatever its length */
    strata_delete_file_in_range_cf(db, NULL, NULL, 0, NULL, 0, &err);
    CHECK_ERROR(err, "column family is a null pointer");

    /* Single deletes. */
    put(db, "once", "1");
    strata_singledelete(db, wo, "once", 4, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "once", NULL));
    strata_put_cf(db, wo, cf, "once", 4, "1", 1, &err);
    strata_singledelete_cf(db, wo, cf, "once", 4, &err);
    CHECK_OK(err);
    v = strata_get_cf(db, ro, cf, "once", 4, &len, &err);
    CHECK(v == NULL);
    strata_singledelete(db, wo, NULL, 2, &err);
    CHECK_ERROR(err, "key is a null pointer with length 2");
    strata_singledelete_cf(db, wo, NULL, "once", 4, &err);
    CHECK_ERROR(err, "column family is a null pointer");

    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_column_family_handle_destroy(cf);
    strata_close(db);
    strata_options_destroy(opts);
}

/* ---- merge operators ---- */

struct merge_state {
    int full_merges;
    int partial_merges;
    int *destroyed;
};

/* Keeps the largest operand (or value), compared as strings. */
static char *max_full_merge(void *state, const char *key, size_t key_length,
                            const char *existing, size_t existing_length,
                            const char *const *operands, const size_t *operand_lengths,
                            int num_operands, unsigned char *success, size_t *new_length) {
    (void)key;
    (void)key_length;
    struct merge_state *s = state;
    s->full_merges++;
    const char *best = existing;
    size_t best_len = existing ? existing_length : 0;
    for (int i = 0; i < num_operands; i++) {
        size_t n = operand_lengths[i] < best_len ? operand_lengths[i] : best_len;
        int c = best ? memcmp(operands[i], best, n) : 1;
        if (!best || c > 0 || (c == 0 && operand_lengths[i] > best_len)) {
            best = operands[i];
            best_len = operand_lengths[i];
        }
    }
    if (best_len >= 5 && memcmp(best, "fail!", 5) == 0) {
        *success = 0;
        return NULL;
    }
    char *out = malloc(best_len + 1);
    memcpy(out, best, best_len);
    *new_length = best_len;
    *success = 1;
    return out;
}

static char *max_partial_merge(void *state, const char *key, size_t key_length,
                               const char *const *operands, const size_t *operand_lengths,
                               int num_operands, unsigned char *success, size_t *new_length) {
    struct merge_state *s = state;
    s->partial_merges++;
    unsigned char ok = 0;
    char *out = max_full_merge(state, key, key_length, NULL, 0, operands, operand_lengths,
                               num_operands, &ok, new_length);
    s->full_merges--;
    *success = ok;
    return out;
}

static void destroy_merge_state(void *state) {
    struct merge_state *s = state;
    (*s->destroyed)++;
    free(s);
}

static void merge_operators(void) {
    char *err = NULL;
    strata_writeoptions_t *wo = strata_writeoptions_create();

    /* uint64add, through puts, merges and batches. */
    strata_options_t *opts = strata_options_create();
    strata_mergeoperator_t *add = strata_mergeoperator_create_uint64add();
    strata_options_set_merge_operator(opts, add);
    strata_mergeoperator_destroy(add); /* the options keep their own share */
    strata_t *db = open_db(opts, "merge-add");
    uint64_t one = 1, five = 5;
    strata_merge(db, wo, "n", 1, (const char *)&one, 8, &err);
    CHECK_OK(err);
    strata_writebatch_t *b = strata_writebatch_create();
    strata_writebatch_merge(b, "n", 1, (const char *)&five, 8);
    strata_write(db, wo, b, &err);
    CHECK_OK(err);
    strata_writebatch_destroy(b);
    uint64_t six = 6;
    CHECK(holds(db, "n", 1, (const char *)&six, 8));
    strata_close(db);
    strata_options_destroy(opts);

    /* stringappend, also in a column family. */
    opts = strata_options_create();
    strata_mergeoperator_t *append = strata_mergeoperator_create_stringappend(",", 1, &err);
    CHECK_OK(err);
    strata_options_set_merge_operator(opts, append);
    db = open_db(opts, "merge-append");
    put(db, "list", "a");
    strata_merge(db, wo, "list", 4, "b", 1, &err);
    strata_merge(db, wo, "list", 4, "c", 1, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "list", "a,b,c"));
    strata_column_family_t *cf = strata_create_column_family(db, opts, "tags", &err);
    CHECK_OK(err);
    b = strata_writebatch_create();
    strata_writebatch_merge_cf(b, cf, "t", 1, "x", 1);
    strata_writebatch_merge_cf(b, cf, "t", 1, "y", 1);
    strata_write(db, wo, b, &err);
    CHECK_OK(err);
    strata_writebatch_destroy(b);
    strata_merge_cf(db, wo, cf, "t", 1, "z", 1, &err);
    CHECK_OK(err);
    strata_merge_cf(db, wo, NULL, "t", 1, "z", 1, &err);
    CHECK_ERROR(err, "column family is a null pointer");
    strata_readoptions_t *ro = strata_readoptions_create();
    size_t len = 0;
    char *v = strata_get_cf(db, ro, cf, "t", 1, &len, &err);
    CHECK_OK(err);
    CHECK(v != NULL && len == 5 && memcmp(v, "x,y,z", 5) == 0);
    strata_free(v);

    /* A transaction across two families, atomically. */
    strata_transaction_t *txn = strata_optimistictransaction_begin(db, wo);
    strata_transaction_put_cf(txn, cf, "p", 1, "1", 1, &err);
    strata_transaction_merge_cf(txn, cf, "t", 1, "w", 1, &err);
    strata_transaction_put(txn, "q", 1, "2", 1, &err);
    strata_transaction_delete_cf(txn, cf, "gone", 4, &err);
    CHECK_OK(err);
    v = strata_transaction_get_cf(txn, cf, "t", 1, 1, &len, &err);
    CHECK_OK(err);
    CHECK(v != NULL && len == 7 && memcmp(v, "x,y,z,w", 7) == 0);
    strata_free(v);
    v = strata_transaction_get_cf(txn, cf, "p", 1, 0, &len, &err);
    CHECK(v != NULL && len == 1);
    strata_free(v);
    CHECK(strata_transaction_get_cf(txn, NULL, "p", 1, 0, &len, &err) == NULL);
    CHECK_ERROR(err, "column family is a null pointer");
    strata_transaction_put_cf(txn, NULL, "p", 1, "1", 1, &err);
    CHECK_ERROR(err, "column family is a null pointer");
    CHECK(HOLDS(db, "q", NULL));
    strata_transaction_commit(txn, &err);
    CHECK_OK(err);
    strata_transaction_destroy(txn);
    CHECK(HOLDS(db, "q", "2"));
    v = strata_get_cf(db, ro, cf, "p", 1, &len, &err);
    CHECK(v != NULL && len == 1 && v[0] == '1');
    strata_free(v);
    strata_readoptions_destroy(ro);
    strata_column_family_handle_destroy(cf);
    strata_close(db);
    strata_options_destroy(opts);
    strata_mergeoperator_destroy(append);

    /* A merge operator of C functions, with a state released once, after the last user. */
    int destroyed = 0;
    struct merge_state *state = calloc(1, sizeof *state);
    state->destroyed = &destroyed;
    strata_mergeoperator_t *max = strata_mergeoperator_create(
        state, destroy_merge_state, max_full_merge, max_partial_merge, "max", &err);
    CHECK_OK(err);
    opts = strata_options_create();
    strata_options_set_merge_operator(opts, max);
    strata_mergeoperator_destroy(max);
    db = open_db(opts, "merge-max");
    strata_options_destroy(opts);
    CHECK(destroyed == 0); /* the database still uses it */
    put(db, "score", "0350");
    strata_merge(db, wo, "score", 5, "0420", 4, &err);
    strata_merge(db, wo, "score", 5, "0390", 4, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "score", "0420"));
    strata_flush(db, &err);
    CHECK_OK(err);
    strata_merge(db, wo, "score", 5, "0100", 4, &err);
    CHECK(HOLDS(db, "score", "0420"));
    CHECK(state->full_merges >= 2);
    /* A merge the function refuses fails the read, naming the operator. */
    strata_merge(db, wo, "bad", 3, "fail!", 5, &err);
    CHECK_OK(err);
    size_t n = 0;
    strata_readoptions_t *ro2 = strata_readoptions_create();
    CHECK(strata_get(db, ro2, "bad", 3, &n, &err) == NULL);
    CHECK_ERROR(err, "max");
    strata_readoptions_destroy(ro2);
    strata_close(db);
    CHECK(destroyed == 1);

    /* Creation refuses a missing function or name, and still releases the state. */
    int destroyed_too = 0;
    struct merge_state *s2 = calloc(1, sizeof *s2);
    s2->destroyed = &destroyed_too;
    CHECK(strata_mergeoperator_create(s2, destroy_merge_state, NULL, NULL, "x", &err) == NULL);
    CHECK_ERROR(err, "full merge function is a null pointer");
    CHECK(destroyed_too == 1);
    CHECK(strata_mergeoperator_create(NULL, NULL, max_full_merge, NULL, NULL, &err) == NULL);
    CHECK_ERROR(err, "name of the merge operator is a null pointer");
    strata_writeoptions_destroy(wo);
}

/* ---- comparators, compaction filters, event listeners ---- */

static int reverse_compare(void *state, const char *a, size_t alen, const char *b, size_t blen) {
    (*(int *)state)++;
    size_t n = alen < blen ? alen : blen;
    int c = memcmp(a, b, n);
    if (c == 0) c = alen < blen ? -1 : alen > blen ? 1 : 0;
    return -c;
}

static void free_state(void *state) { free(state); }

static void user_comparator(void) {
    char *err = NULL;
    int *calls = calloc(1, sizeof *calls);
    strata_comparator_t *cmp =
        strata_comparator_create(calls, free_state, reverse_compare, "test.reverse", &err);
    CHECK_OK(err);
    strata_options_t *opts = strata_options_create();
    strata_options_set_comparator(opts, cmp);
    strata_t *db = open_db(opts, "comparator");
    put(db, "a", "1");
    put(db, "c", "3");
    put(db, "b", "2");
    strata_readoptions_t *ro = strata_readoptions_create();
    strata_iterator_t *it = strata_create_iterator(db, ro);
    char order[4] = {0};
    int i = 0;
    for (strata_iter_seek_to_first(it); strata_iter_valid(it) && i < 3; strata_iter_next(it)) {
        size_t klen;
        order[i++] = strata_iter_key(it, &klen)[0];
    }
    CHECK(strcmp(order, "cba") == 0);
    CHECK(*calls > 0);
    strata_iter_destroy(it);
    strata_readoptions_destroy(ro);
    strata_close(db);
    /* Reopened with another order's name: refused. */
    strata_options_set_comparator(opts, NULL);
    char *path = path_of("comparator");
    CHECK(strata_open(opts, path, &err) == NULL);
    CHECK_ERROR(err, "test.reverse");
    strata_options_set_comparator(opts, cmp);
    db = strata_open(opts, path, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "b", "2"));
    strata_close(db);
    free(path);
    strata_options_destroy(opts);
    strata_comparator_destroy(cmp); /* the last share: frees `calls` */
    CHECK(strata_comparator_create(NULL, NULL, NULL, "x", &err) == NULL);
    CHECK_ERROR(err, "compare function is a null pointer");
}

/* Removes keys under tmp/, upper-cases the first byte of values under up/, counts calls. */
static unsigned char cleanup_filter(void *state, int level, const char *key, size_t key_length,
                                    unsigned char is_merge_operand, const char *value,
                                    size_t value_length, char **new_value,
                                    size_t *new_value_length, unsigned char *value_changed) {
    (void)level;
    (void)is_merge_operand;
    (*(int *)state)++;
    if (key_length >= 4 && memcmp(key, "tmp/", 4) == 0) return 1;
    if (key_length >= 3 && memcmp(key, "up/", 3) == 0 && value_length > 0) {
        char *v = malloc(value_length);
        memcpy(v, value, value_length);
        if (v[0] >= 'a' && v[0] <= 'z') v[0] = (char)(v[0] - 'a' + 'A');
        *new_value = v;
        *new_value_length = value_length;
        *value_changed = 1;
    }
    return 0;
}

static void compaction_filter(void) {
    char *err = NULL;
    int *calls = calloc(1, sizeof *calls);
    strata_compactionfilter_t *f =
        strata_compactionfilter_create(calls, free_state, cleanup_filter, "cleanup", &err);
    CHECK_OK(err);
    strata_options_t *opts = strata_options_create();
    strata_options_set_compaction_filter(opts, f);
    strata_compactionfilter_destroy(f);
    strata_t *db = open_db(opts, "filter");
    strata_options_destroy(opts);
    put(db, "tmp/upload", "partial");
    put(db, "up/name", "alice");
    put(db, "keep", "as is");
    strata_flush(db, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "tmp/upload", "partial")); /* flushes do not filter */
    strata_compact_range(db, NULL, 0, NULL, 0, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "tmp/upload", NULL));
    CHECK(HOLDS(db, "up/name", "Alice"));
    CHECK(HOLDS(db, "keep", "as is"));
    CHECK(*calls >= 3);
    strata_close(db);
    CHECK(strata_compactionfilter_create(NULL, NULL, NULL, "x", &err) == NULL);
    CHECK_ERROR(err, "filter function is a null pointer");
}

struct events {
    int flush_begin, flush_completed, compaction_begin, compaction_completed, created, deleted;
    int default_named;
};

static void on_event(void *state, const strata_event_t *e) {
    struct events *ev = state;
    switch (e->kind) {
    case STRATA_EVENT_FLUSH_BEGIN: ev->flush_begin++; break;
    case STRATA_EVENT_FLUSH_COMPLETED:
        ev->flush_completed++;
        if (e->cf_name_len == 7 && memcmp(e->cf_name, "default", 7) == 0 && e->entries == 2 &&
            e->path != NULL && strstr(e->path, ".sst") != NULL && e->reason != NULL)
            ev->default_named++;
        break;
    case STRATA_EVENT_COMPACTION_BEGIN: ev->compaction_begin++; break;
    case STRATA_EVENT_COMPACTION_COMPLETED:
        if (e->message == NULL && e->reason != NULL && strcmp(e->reason, "Manual") == 0)
            ev->compaction_completed++;
        break;
    case STRATA_EVENT_TABLE_FILE_CREATED: ev->created++; break;
    case STRATA_EVENT_TABLE_FILE_DELETED: ev->deleted++; break;
    default: break;
    }
}

static void event_listener(void) {
    char *err = NULL;
    struct events *ev = calloc(1, sizeof *ev);
    strata_eventlistener_t *l = strata_eventlistener_create(ev, NULL, on_event, &err);
    CHECK_OK(err);
    strata_options_t *opts = strata_options_create();
    strata_options_add_eventlistener(opts, l);
    strata_options_add_eventlistener(opts, NULL); /* ignored */
    strata_t *db = open_db(opts, "events");
    put(db, "a", "1");
    put(db, "b", "2");
    strata_flush(db, &err);
    CHECK_OK(err);
    put(db, "a", "3");
    strata_flush(db, &err);
    strata_compact_range(db, NULL, 0, NULL, 0, &err);
    CHECK_OK(err);
    strata_close(db);
    CHECK(ev->flush_begin == 2);
    CHECK(ev->flush_completed == 2);
    CHECK(ev->default_named == 1);
    CHECK(ev->compaction_begin >= 1);
    CHECK(ev->compaction_completed >= 1);
    CHECK(ev->created >= 3);
    CHECK(ev->deleted >= 2);
    strata_options_destroy(opts);
    strata_eventlistener_destroy(l);
    free(ev); /* no destructor was given: the state stayed the caller's */
    CHECK(strata_eventlistener_create(NULL, NULL, NULL, &err) == NULL);
    CHECK_ERROR(err, "event function is a null pointer");
}

/* ---- reads: multi_get; range deletes ---- */

static void multi_get_and_range_deletes(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_t *db = open_db(opts, "multiget");
    put(db, "a", "1");
    put(db, "b", "2");
    put(db, "c", "3");
    strata_readoptions_t *ro = strata_readoptions_create();
    const char *keys[3] = {"c", "zz", "a"};
    size_t sizes[3] = {1, 2, 1};
    char *values[3];
    size_t vsizes[3];
    char *errs[3];
    strata_multi_get(db, ro, 3, keys, sizes, values, vsizes, errs);
    CHECK(values[0] && vsizes[0] == 1 && values[0][0] == '3' && !errs[0]);
    CHECK(!values[1] && vsizes[1] == 0 && !errs[1]);
    CHECK(values[2] && values[2][0] == '1' && !errs[2]);
    for (int i = 0; i < 3; i++) strata_free(values[i]);

    strata_column_family_t *cf = strata_create_column_family(db, opts, "other", &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_put_cf(db, wo, cf, "a", 1, "cf", 2, &err);
    strata_multi_get_cf(db, ro, cf, 2, keys + 1, sizes + 1, values, vsizes, errs);
    CHECK(!values[0] && !errs[0]);
    CHECK(values[1] && vsizes[1] == 2 && memcmp(values[1], "cf", 2) == 0);
    strata_free(values[1]);
    strata_multi_get_cf(db, ro, NULL, 1, keys, sizes, values, vsizes, errs);
    CHECK(!values[0]);
    CHECK_ERROR(errs[0], "column family is a null pointer");

    strata_delete_range(db, wo, "a", 1, "c", 1, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "a", NULL) && HOLDS(db, "b", NULL) && HOLDS(db, "c", "3"));
    strata_delete_range(db, wo, "z", 1, "a", 1, &err);
    CHECK_ERROR(err, "z");
    strata_writeoptions_destroy(wo);
    strata_column_family_handle_destroy(cf);
    strata_readoptions_destroy(ro);
    strata_close(db);
    strata_options_destroy(opts);
}

/* ---- transactions ---- */

static int txn_holds(strata_transaction_t *txn, const char *key, const char *value) {
    char *err = NULL;
    size_t len = 0;
    char *got = strata_transaction_get(txn, key, strlen(key), &len, &err);
    int ok = err == NULL && (value == NULL ? got == NULL
                                           : got && len == strlen(value) &&
                                                 memcmp(got, value, len) == 0);
    if (err) strata_free(err);
    strata_free(got);
    return ok;
}

static void optimistic_transactions(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_mergeoperator_t *append = strata_mergeoperator_create_stringappend("+", 1, &err);
    strata_options_set_merge_operator(opts, append);
    strata_mergeoperator_destroy(append);
    strata_t *db = open_db(opts, "optimistic");
    strata_writeoptions_t *wo = strata_writeoptions_create();
    put(db, "k1", "v1");
    put(db, "k2", "v2");

    strata_transaction_t *txn = strata_optimistictransaction_begin(db, wo);
    CHECK(txn != NULL);
    strata_transaction_put(txn, "k3", 2, "v3", 2, &err);
    CHECK_OK(err);
    CHECK(txn_holds(txn, "k3", "v3"));
    CHECK(HOLDS(db, "k3", NULL)); /* not visible before commit */
    strata_transaction_set_savepoint(txn, &err);
    CHECK_OK(err);
    strata_transaction_delete(txn, "k1", 2, &err);
    strata_transaction_merge(txn, "k2", 2, "m", 1, &err);
    CHECK_OK(err);
    CHECK(txn_holds(txn, "k1", NULL));
    CHECK(txn_holds(txn, "k2", "v2+m"));
    CHECK(strata_transaction_count(txn) == 3);
    strata_transaction_rollback_to_savepoint(txn, &err);
    CHECK_OK(err);
    CHECK(txn_holds(txn, "k1", "v1"));
    CHECK(strata_transaction_count(txn) == 1);
    strata_transaction_rollback_to_savepoint(txn, &err);
    CHECK_ERROR(err, "save point");

    /* An iterator sees the transaction's writes over the database. */
    strata_readoptions_t *ro = strata_readoptions_create();
    strata_iterator_t *it = strata_transaction_create_iterator(txn, ro, &err);
    CHECK_OK(err);
    int n = 0;
    for (strata_iter_seek_to_first(it); strata_iter_valid(it); strata_iter_next(it)) n++;
    CHECK(n == 3);
    strata_iter_destroy(it);

    /* An updatable cursor: change k1, delete k2. */
    strata_txn_cursor_t *c = strata_transaction_create_cursor(txn, ro, NULL, &err);
    CHECK_OK(err);
    strata_txn_cursor_seek(c, "k1", 2, &err);
    CHECK_OK(err);
    CHECK(strata_txn_cursor_valid(c));
    size_t klen, vlen;
    CHECK(memcmp(strata_txn_cursor_key(c, &klen), "k1", 2) == 0 && klen == 2);
    CHECK(memcmp(strata_txn_cursor_value(c, &vlen), "v1", 2) == 0 && vlen == 2);
    strata_txn_cursor_update(c, "V1", 2, &err);
    CHECK_OK(err);
    CHECK(memcmp(strata_txn_cursor_value(c, &vlen), "V1", 2) == 0);
    strata_txn_cursor_next(c);
    CHECK(memcmp(strata_txn_cursor_key(c, &klen), "k2", 2) == 0);
    strata_txn_cursor_delete(c, &err);
    CHECK_OK(err);
    /* The cursor stays on the deleted key, with an empty value, until it moves. */
    CHECK(memcmp(strata_txn_cursor_key(c, &klen), "k2", 2) == 0);
    strata_txn_cursor_value(c, &vlen);
    CHECK(vlen == 0);
    strata_txn_cursor_next(c);
    CHECK(memcmp(strata_txn_cursor_key(c, &klen), "k3", 2) == 0);
    strata_txn_cursor_seek_to_last(c);
    CHECK(memcmp(strata_txn_cursor_key(c, &klen), "k3", 2) == 0);
    strata_txn_cursor_prev(c); /* the deleted k2 is not shown again */
    CHECK(memcmp(strata_txn_cursor_key(c, &klen), "k1", 2) == 0);
    strata_txn_cursor_seek_for_prev(c, "k2", 2, &err);
    CHECK(memcmp(strata_txn_cursor_key(c, &klen), "k1", 2) == 0);
    strata_txn_cursor_seek_to_first(c);
    CHECK(strata_txn_cursor_valid(c));
    strata_txn_cursor_seek(c, NULL, 3, &err);
    CHECK_ERROR(err, "seek key is a null pointer");
    strata_txn_cursor_seek(c, "zz", 2, &err);
    CHECK(!strata_txn_cursor_valid(c));
    CHECK(strata_txn_cursor_key(c, &klen) == NULL && klen == 0);
    strata_txn_cursor_update(c, "x", 1, &err);
    CHECK_ERROR(err, "the cursor is not at an entry");
    strata_txn_cursor_delete(c, &err);
    CHECK_ERROR(err, "the cursor is not at an entry");
    strata_txn_cursor_get_error(c, &err);
    CHECK_OK(err);
    strata_txn_cursor_destroy(c);

    strata_transaction_commit(txn, &err);
    CHECK_OK(err);
    strata_transaction_destroy(txn);
    CHECK(HOLDS(db, "k1", "V1") && HOLDS(db, "k2", NULL) && HOLDS(db, "k3", "v3"));

    /* A conflict: a key read for update and written by another before the commit. */
    strata_transaction_t *t1 = strata_optimistictransaction_begin(db, wo);
    size_t len;
    char *v = strata_transaction_get_for_update(t1, "k3", 2, &len, &err);
    CHECK_OK(err);
    strata_free(v);
    put(db, "k3", "other");
    strata_transaction_put(t1, "k3", 2, "mine", 4, &err);
    strata_transaction_commit(t1, &err);
    CHECK_ERROR(err, "");
    CHECK(HOLDS(db, "k3", "other"));
    strata_transaction_destroy(t1);

    /* Rollback discards; two-phase commit needs a pessimistic transaction. */
    strata_transaction_t *t2 = strata_optimistictransaction_begin(db, wo);
    strata_transaction_put(t2, "k9", 2, "x", 1, &err);
    strata_transaction_rollback(t2, &err);
    CHECK_OK(err);
    strata_transaction_set_name(t2, "n", &err);
    CHECK_ERROR(err, "two-phase commit needs a pessimistic transaction");
    strata_transaction_prepare(t2, &err);
    CHECK_ERROR(err, "pessimistic");
    CHECK(strata_transaction_get_name(t2) == NULL);
    strata_transaction_destroy(t2);
    CHECK(HOLDS(db, "k9", NULL));

    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_close(db);
    strata_options_destroy(opts);
}

static void pessimistic_transactions(void) {
    char *err = NULL;
    char *path = path_of("pessimistic");
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_transactiondb_t *tdb = strata_transactiondb_open(opts, path, &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_readoptions_t *ro = strata_readoptions_create();
    strata_transaction_options_t *to = strata_transaction_options_create();
    strata_transaction_options_set_lock_timeout(to, 50);
    strata_transaction_options_set_deadlock_detect(to, 1);
    strata_transaction_options_set_expiration(to, 0);
    strata_transaction_options_set_set_snapshot(to, 1);

    strata_transactiondb_put(tdb, "seat", 4, "free", 4, &err);
    CHECK_OK(err);
    strata_transaction_t *first = strata_transaction_begin(tdb, wo, to);
    strata_transaction_put(first, "seat", 4, "alice", 5, &err);
    CHECK_OK(err);
    strata_transaction_t *second = strata_transaction_begin(tdb, wo, to);
    strata_transaction_put(second, "seat", 4, "bob", 3, &err);
    CHECK_ERROR(err, ""); /* the lock times out */
    strata_transactiondb_put(tdb, "seat", 4, "carol", 5, &err);
    CHECK(err != NULL); /* a plain write waits for the lock too */
    strata_free(err);
    err = NULL;
    strata_transaction_commit(first, &err);
    CHECK_OK(err);
    strata_transaction_destroy(first);
    strata_transaction_destroy(second);
    size_t len;
    char *v = strata_transactiondb_get(tdb, ro, "seat", 4, &len, &err);
    CHECK_OK(err);
    CHECK(v && len == 5 && memcmp(v, "alice", 5) == 0);
    strata_free(v);

    strata_writebatch_t *b = strata_writebatch_create();
    strata_writebatch_put(b, "row", 3, "1", 1);
    strata_transactiondb_write(tdb, wo, b, &err);
    CHECK_OK(err);
    strata_writebatch_destroy(b);
    strata_transactiondb_delete(tdb, "row", 3, &err);
    CHECK_OK(err);
    v = strata_transactiondb_get(tdb, ro, "row", 3, &len, &err);
    CHECK(v == NULL && len == 0);

    /* Two-phase commit: prepared, parked when destroyed, handed out again, committed. */
    strata_transaction_t *t = strata_transaction_begin(tdb, wo, to);
    strata_transaction_prepare(t, &err);
    CHECK_ERROR(err, "name");
    strata_transaction_set_name(t, "xa-1", &err);
    CHECK_OK(err);
    char *name = strata_transaction_get_name(t);
    CHECK(name && strcmp(name, "xa-1") == 0);
    strata_free(name);
    strata_transaction_put(t, "order", 5, "paid", 4, &err);
    strata_transaction_set_savepoint(t, &err);
    strata_transaction_put(t, "order2", 6, "x", 1, &err);
    strata_transaction_rollback_to_savepoint(t, &err);
    CHECK_OK(err);
    strata_transaction_prepare(t, &err);
    CHECK_OK(err);
    strata_transaction_destroy(t); /* parked, locks held */
    size_t count = 0;
    strata_transaction_t **prepared = strata_transactiondb_get_prepared_transactions(tdb, &count);
    CHECK(count == 1 && prepared != NULL);
    if (count == 1) {
        char *n = strata_transaction_get_name(prepared[0]);
        CHECK(n && strcmp(n, "xa-1") == 0);
        strata_free(n);
        strata_transaction_commit(prepared[0], &err);
        CHECK_OK(err);
        strata_transaction_destroy(prepared[0]);
    }
    strata_free(prepared);
    v = strata_transactiondb_get(tdb, ro, "order", 5, &len, &err);
    CHECK(v && len == 4);
    strata_free(v);

    /* A prepared transaction survives closing, and is recovered at the next open. */
    t = strata_transaction_begin(tdb, wo, to);
    strata_transaction_set_name(t, "xa-2", &err);
    strata_transaction_put(t, "late", 4, "yes", 3, &err);
    strata_transaction_prepare(t, &err);
    CHECK_OK(err);
    strata_transaction_destroy(t);
    strata_transactiondb_close(tdb);
    tdb = strata_transactiondb_open(opts, path, &err);
    CHECK_OK(err);
    prepared = strata_transactiondb_get_prepared_transactions(tdb, &count);
    CHECK(count == 1);
    if (count == 1) {
        strata_transaction_rollback(prepared[0], &err);
        CHECK_OK(err);
        strata_transaction_destroy(prepared[0]);
    }
    strata_free(prepared);
    v = strata_transactiondb_get(tdb, ro, "late", 4, &len, &err);
    CHECK(v == NULL);
    CHECK(strata_transactiondb_get_prepared_transactions(tdb, &count) == NULL && count == 0);

    /* A cursor in a pessimistic transaction, over a named family. */
    t = strata_transaction_begin(tdb, wo, to);
    strata_txn_cursor_t *c = strata_transaction_create_cursor(t, ro, NULL, &err);
    CHECK_OK(err);
    strata_txn_cursor_seek(c, "order", 5, &err);
    CHECK(strata_txn_cursor_valid(c));
    strata_txn_cursor_update(c, "shipped", 7, &err);
    CHECK_OK(err);
    strata_txn_cursor_destroy(c);
    strata_transaction_commit(t, &err);
    CHECK_OK(err);
    strata_transaction_destroy(t);
    v = strata_transactiondb_get(tdb, ro, "order", 5, &len, &err);
    CHECK(v && len == 7);
    strata_free(v);

    strata_transaction_options_destroy(to);
    strata_readoptions_destroy(ro);
    strata_writeoptions_destroy(wo);
    strata_transactiondb_close(tdb);
    strata_options_destroy(opts);
    free(path);
}

/* ---- checkpoints, backups, table files and ingest ---- */

static void checkpoints_and_backups(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_t *db = open_db(opts, "source");
    put(db, "a", "1");
    char *cp = path_of("checkpoint");
    strata_checkpoint_create(db, cp, 0, &err);
    CHECK_OK(err);
    strata_checkpoint_create(db, cp, 0, &err);
    CHECK_ERROR(err, "");  /* it exists already */
    strata_t *copy = strata_open(opts, cp, &err);
    CHECK_OK(err);
    CHECK(HOLDS(copy, "a", "1"));
    strata_close(copy);

    char *dir = path_of("backups");
    strata_backup_engine_t *be = strata_backup_engine_open(dir, &err);
    CHECK_OK(err);
    uint64_t id1 = strata_backup_engine_create_new_backup(be, db, &err);
    CHECK_OK(err);
    put(db, "b", "2");
    uint64_t id2 = strata_backup_engine_create_new_backup(be, db, &err);
    CHECK_OK(err);
    CHECK(id1 == 1 && id2 == 2);
    const strata_backup_engine_info_t *info = strata_backup_engine_get_backup_info(be);
    CHECK(strata_backup_engine_info_count(info) == 2);
    CHECK(strata_backup_engine_info_backup_id(info, 1) == 2);
    CHECK(strata_backup_engine_info_timestamp(info, 0) > 0);
    CHECK(strata_backup_engine_info_size(info, 0) > 0);
    CHECK(strata_backup_engine_info_number_files(info, 0) > 0);
    CHECK(strata_backup_engine_info_backup_id(info, 5) == 0);
    strata_backup_engine_info_destroy(info);
    strata_backup_engine_verify_backup(be, 1, &err);
    CHECK_OK(err);
    strata_backup_engine_verify_backup(be, 9, &err);
    CHECK_ERROR(err, "9");
    char *restored = path_of("restored");
    strata_backup_engine_restore_db_from_backup(be, 1, restored, &err);
    CHECK_OK(err);
    strata_t *r = strata_open(opts, restored, &err);
    CHECK_OK(err);
    CHECK(HOLDS(r, "a", "1") && HOLDS(r, "b", NULL));
    strata_close(r);
    strata_backup_engine_purge_old_backups(be, 1, &err);
    CHECK_OK(err);
    strata_backup_engine_delete_backup(be, 2, &err);
    CHECK_OK(err);
    info = strata_backup_engine_get_backup_info(be);
    CHECK(strata_backup_engine_info_count(info) == 0);
    strata_backup_engine_info_destroy(info);
    strata_backup_engine_close(be);
    CHECK(strata_backup_engine_open(NULL, &err) == NULL);
    CHECK_ERROR(err, "backup directory is a null pointer");

    strata_close(db);
    strata_options_destroy(opts);
    free(cp);
    free(dir);
    free(restored);
}

static void table_files_and_ingest(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_mergeoperator_t *append = strata_mergeoperator_create_stringappend(",", 1, &err);
    strata_options_set_merge_operator(opts, append);
    strata_mergeoperator_destroy(append);
    strata_t *db = open_db(opts, "ingest");
    put(db, "m", "base");
    put(db, "q", "gone");

    char *file = path_of("bulk.sst");
    strata_sstfilewriter_t *w = strata_sstfilewriter_create(opts, file, &err);
    CHECK_OK(err);
    strata_sstfilewriter_put(w, "a", 1, "1", 1, &err);
    strata_sstfilewriter_put(w, "b", 1, "2", 1, &err);
    CHECK_OK(err);
    strata_sstfilewriter_put(w, "a", 1, "again", 5, &err);
    CHECK_ERROR(err, "order");
    strata_sstfilewriter_delete(w, "c", 1, &err);
    strata_sstfilewriter_merge(w, "m", 1, "more", 4, &err);
    strata_sstfilewriter_delete_range(w, "p", 1, "r", 1, &err);
    CHECK_OK(err);
    CHECK(strata_sstfilewriter_file_size(w) > 0);
    strata_sstfilewriter_finish(w, &err);
    CHECK_OK(err);
    strata_sstfilewriter_finish(w, &err);
    CHECK_ERROR(err, "already finished");
    strata_sstfilewriter_put(w, "z", 1, "1", 1, &err);
    CHECK_ERROR(err, "already finished");
    CHECK(strata_sstfilewriter_file_size(w) == 0);
    strata_sstfilewriter_destroy(w);

    strata_ingestexternalfileoptions_t *io = strata_ingestexternalfileoptions_create();
    strata_ingestexternalfileoptions_set_allow_blocking_flush(io, 1);
    strata_ingestexternalfileoptions_set_move_files(io, 1);
    const char *files[1] = {file};
    strata_ingest_external_file(db, files, 1, io, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "a", "1") && HOLDS(db, "b", "2") && HOLDS(db, "m", "base,more"));
    CHECK(HOLDS(db, "q", NULL));
    struct stat st;
    CHECK(stat(file, &st) != 0); /* moved */
    strata_ingest_external_file(db, files, 1, io, &err);
    CHECK_ERROR(err, "bulk.sst");
    strata_ingest_external_file(db, NULL, 2, io, &err);
    CHECK_ERROR(err, "file_list is a null pointer");

    /* Into a column family. */
    strata_column_family_t *cf = strata_create_column_family(db, opts, "bulk", &err);
    CHECK_OK(err);
    w = strata_sstfilewriter_create(opts, file, &err);
    strata_sstfilewriter_put(w, "x", 1, "cf", 2, &err);
    strata_sstfilewriter_finish(w, &err);
    CHECK_OK(err);
    strata_sstfilewriter_destroy(w);
    strata_ingestexternalfileoptions_set_move_files(io, 0);
    strata_ingest_external_file_cf(db, cf, files, 1, io, &err);
    CHECK_OK(err);
    CHECK(stat(file, &st) == 0); /* copied */
    strata_readoptions_t *ro = strata_readoptions_create();
    size_t len;
    char *v = strata_get_cf(db, ro, cf, "x", 1, &len, &err);
    CHECK(v && len == 2);
    strata_free(v);
    strata_ingest_external_file_cf(db, NULL, files, 1, io, &err);
    CHECK_ERROR(err, "column family is a null pointer");
    strata_readoptions_destroy(ro);
    strata_column_family_handle_destroy(cf);
    strata_ingestexternalfileoptions_destroy(io);
    CHECK(strata_sstfilewriter_create(opts, NULL, &err) == NULL);
    CHECK_ERROR(err, "table file path is a null pointer");
    strata_close(db);
    strata_options_destroy(opts);
    free(file);
}

/* ---- statistics, properties, prefixes, TTL, resume, repair ---- */

static void statistics_and_the_rest(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_prefix_extractor(opts, "fixed:3", &err);
    CHECK_OK(err);
    strata_options_set_prefix_extractor(opts, "sideways:3", &err);
    CHECK_ERROR(err, "sideways:3");
    strata_t *db = open_db(opts, "stats");
    put(db, "aaa1", "x");
    put(db, "aaa2", "x");
    put(db, "bbb1", "x");
    uint64_t value = 0;
    CHECK(strata_statistics_get(db, "keys_written", &value, &err) == 1);
    CHECK_OK(err);
    CHECK(value == 3);
    CHECK(strata_statistics_get(db, "gets", &value, &err) == 1 && value == 0);
    CHECK(HOLDS(db, "aaa1", "x"));
    CHECK(strata_statistics_get(db, "gets", &value, &err) == 1 && value == 1);
    CHECK(strata_statistics_get(db, "no_such", &value, &err) == 0);
    CHECK_ERROR(err, "keys_written");
    strata_statistics_reset(db);
    strata_statistics_get(db, "keys_written", &value, &err);
    CHECK(value == 0);
    char *stats = strata_property_value(db, "strata.stats");
    CHECK(stats != NULL && strlen(stats) > 0);
    strata_free(stats);

    /* prefix_same_as_start stops at the end of the seek's prefix. */
    strata_readoptions_t *ro = strata_readoptions_create();
    strata_readoptions_set_prefix_same_as_start(ro, 1);
    strata_iterator_t *it = strata_create_iterator(db, ro);
    int n = 0;
    for (strata_iter_seek(it, "aaa", 3); strata_iter_valid(it); strata_iter_next(it)) n++;
    CHECK(n == 2);
    strata_iter_destroy(it);
    strata_readoptions_set_prefix_same_as_start(ro, 0);
    strata_readoptions_set_total_order_seek(ro, 1);
    it = strata_create_iterator(db, ro);
    n = 0;
    for (strata_iter_seek(it, "aaa", 3); strata_iter_valid(it); strata_iter_next(it)) n++;
    CHECK(n == 3);
    strata_iter_destroy(it);
    strata_readoptions_destroy(ro);

    /* A value read in place, and the manual compactions of a level and of everything. */
    strata_readoptions_t *pro = strata_readoptions_create();
    strata_pinnableslice_t *pinned = strata_get_pinned(db, pro, "aaa1", 4, &err);
    CHECK_OK(err);
    size_t plen = 0;
    const char *pv = strata_pinnableslice_value(pinned, &plen);
    CHECK(pv != NULL && plen == 1 && pv[0] == 'x');
    strata_pinnableslice_destroy(pinned);
    CHECK(strata_get_pinned(db, pro, "none", 4, &err) == NULL);
    CHECK_OK(err);
    CHECK(strata_get_pinned(db, pro, NULL, 4, &err) == NULL);
    CHECK_ERROR(err, "key is a null pointer");
    CHECK(strata_pinnableslice_value(NULL, &plen) == NULL && plen == 0);
    strata_readoptions_destroy(pro);
    strata_flush(db, &err);
    strata_compact_level(db, 0, &err);
    CHECK_OK(err);
    strata_compact_level(db, -1, &err);
    CHECK_ERROR(err, "level -1 is negative");
    strata_compact_all(db, &err);
    CHECK_OK(err);
    strata_wait_for_compactions(db, 1, &err);
    strata_wait_for_compactions(db, 0, &err); /* 0: returns at once */
    CHECK_OK(err);
    char *shape = strata_tree_shape(db);
    CHECK(shape != NULL && strlen(shape) > 0);
    strata_free(shape);
    CHECK(strata_tree_shape(NULL) == NULL);
    char *l0 = strata_property_value(db, "strata.num-files-at-level0");
    CHECK(l0 != NULL && strcmp(l0, "0") == 0);
    strata_free(l0);
    CHECK(HOLDS(db, "bbb1", "x"));

    strata_put_with_ttl(db, "t", 1, "v", 1, 60, &err);
    CHECK_ERROR(err, "ttl");
    strata_resume(db, &err);
    CHECK_OK(err);
    strata_close(db);

    /* Universal compaction, with its settings. */
    strata_options_t *uni = strata_options_create();
    strata_options_set_compaction_style(uni, 1);
    strata_options_set_universal_size_ratio(uni, 10);
    strata_options_set_universal_min_merge_width(uni, 2);
    strata_options_set_universal_max_merge_width(uni, 8);
    strata_options_set_universal_max_size_amplification_percent(uni, 150);
    db = open_db(uni, "universal");
    for (int i = 0; i < 4; i++) {
        put(db, "u", "x");
        strata_flush(db, &err);
    }
    strata_compact_all(db, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "u", "x"));
    strata_close(db);
    strata_options_destroy(uni);

    /* A TTL database. */
    strata_options_t *ttl = strata_options_create();
    strata_options_set_ttl(ttl, 3600);
    db = open_db(ttl, "ttl");
    strata_put_with_ttl(db, "t", 1, "v", 1, 60, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "t", "v"));
    strata_close(db);
    strata_options_destroy(ttl);

    /* Repair of a closed database keeps its data. */
    char *path = path_of("stats");
    strata_repair_db(opts, path, &err);
    CHECK_OK(err);
    db = strata_open(opts, path, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "bbb1", "x"));
    strata_close(db);
    strata_repair_db(opts, NULL, &err);
    CHECK_ERROR(err, "database path is a null pointer");
    free(path);
    strata_options_destroy(opts);
}

/* ---- the rest of the basic API that the other program leaves out ---- */

static void every_other_setter_and_call(void) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_error_if_exists(opts, 1);
    strata_options_set_create_missing_column_families(opts, 1);
    strata_options_set_block_cache_size(opts, 1 << 20);
    strata_options_set_max_open_files(opts, 100);
    strata_options_set_max_write_buffer_number(opts, 3);
    strata_options_set_max_background_jobs(opts, 2);
    strata_options_set_level0_file_num_compaction_trigger(opts, 2);
    strata_options_set_max_bytes_for_level_base(opts, 1 << 20);
    strata_options_set_target_file_size_base(opts, 1 << 18);
    strata_options_set_num_levels(opts, 5);
    strata_options_set_read_triggered_compaction(opts, 0);
    strata_options_set_disable_auto_compactions(opts, 1);
    strata_t *db = open_db(opts, "setters");
    /* error_if_exists: the second open is refused. */
    char *path = path_of("setters");
    strata_close(db);
    CHECK(strata_open(opts, path, &err) == NULL);
    CHECK_ERROR(err, "");
    strata_options_set_error_if_exists(opts, 0);
    db = strata_open(opts, path, &err);
    CHECK_OK(err);

    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_writeoptions_disable_wal(wo, 1);
    strata_put(db, wo, "nowal", 5, "1", 1, &err);
    CHECK_OK(err);
    strata_writeoptions_disable_wal(wo, 0);
    strata_column_family_t *cf = strata_create_column_family(db, opts, "cf", &err);
    CHECK_OK(err);
    strata_put_cf(db, wo, cf, "k", 1, "v", 1, &err);
    strata_delete_cf(db, wo, cf, "k", 1, &err);
    CHECK_OK(err);
    strata_delete_cf(db, wo, cf, NULL, 1, &err);
    CHECK_ERROR(err, "key is a null pointer");
    strata_readoptions_t *ro = strata_readoptions_create();
    size_t len;
    CHECK(strata_get_cf(db, ro, cf, "k", 1, &len, &err) == NULL);
    CHECK_OK(err);

    strata_writebatch_t *b = strata_writebatch_create();
    strata_writebatch_put(b, "a", 1, "1", 1);
    strata_writebatch_put(b, "b", 1, "2", 1);
    strata_writebatch_put(b, "once", 4, "x", 1);
    strata_write(db, wo, b, &err);
    CHECK_OK(err);
    strata_writebatch_clear(b);
    strata_writebatch_delete_range(b, "a", 1, "b", 1);
    strata_writebatch_single_delete(b, "once", 4);
    strata_write(db, wo, b, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "a", NULL) && HOLDS(db, "b", "2") && HOLDS(db, "once", NULL));
    strata_writebatch_clear(b);
    strata_writebatch_delete_range(b, NULL, 3, "b", 1);
    strata_write(db, wo, b, &err);
    CHECK_ERROR(err, "begin key is a null pointer with length 3");
    strata_writebatch_destroy(b);
    strata_sync_wal(db, &err);
    CHECK_OK(err);

    strata_readoptions_destroy(ro);
    strata_column_family_handle_destroy(cf);
    strata_writeoptions_destroy(wo);
    strata_close(db);
    strata_options_destroy(opts);
    free(path);
}

/* Options changed on an open database, as rocksdb_set_options does: a good change is taken, an
 * unknown or fixed option refused by name. */
static void online_options(void) {
    strata_options_t *opts = strata_options_create();
    strata_t *db = open_db(opts, "online");
    char *err = NULL;
    const char *keys[] = {"write_buffer_size", "disable_auto_compactions"};
    const char *values[] = {"1048576", "true"};
    strata_set_options(db, 2, keys, values, &err);
    CHECK_OK(err);
    const char *unknown[] = {"no_such_option"};
    strata_set_options(db, 1, unknown, values, &err);
    CHECK_ERROR(err, "unknown option \"no_such_option\"");
    const char *fixed[] = {"num_levels"};
    const char *three[] = {"3"};
    strata_set_options(db, 1, fixed, three, &err);
    CHECK_ERROR(err, "cannot be changed on an open database");
    strata_column_family_t *cf = strata_create_column_family(db, opts, "hot", &err);
    CHECK_OK(err);
    const char *trigger[] = {"level0_file_num_compaction_trigger"};
    const char *eight[] = {"8"};
    strata_set_options_cf(db, cf, 1, trigger, eight, &err);
    CHECK_OK(err);
    const char *bad[] = {"x"};
    strata_set_options_cf(db, cf, 1, trigger, bad, &err);
    CHECK_ERROR(err, "level0_file_num_compaction_trigger");
    const char *jobs[] = {"max_background_jobs"};
    strata_set_db_options(db, 1, jobs, three, &err);
    CHECK_OK(err);
    put(db, "k", "v");
    CHECK(HOLDS(db, "k", "v"));
    strata_column_family_handle_destroy(cf);
    strata_close(db);
    strata_options_destroy(opts);
}

/* A secondary instance follows a primary open in the same process: it sees the primary's
 * writes after a catch-up, refuses writes, and a refreshed iterator sees them too. */
static void secondary_instances(void) {
    strata_options_t *opts = strata_options_create();
    strata_t *primary = open_db(opts, "followed");
    put(primary, "a", "1");
    char *err = NULL;
    char *path = path_of("followed");
    char *own = path_of("follower");
    strata_t *secondary = strata_open_as_secondary(opts, path, own, &err);
    CHECK_OK(err);
    CHECK(HOLDS(secondary, "a", "1"));
    strata_readoptions_t *ro = strata_readoptions_create();
    strata_iterator_t *it = strata_create_iterator(secondary, ro);
    put(primary, "b", "2");
    CHECK(HOLDS(secondary, "b", NULL));
    CHECK(strata_get_latest_sequence_number(primary) == 2);
    CHECK(strata_get_latest_sequence_number(secondary) == 1);
    strata_try_catch_up_with_primary(secondary, &err);
    CHECK_OK(err);
    CHECK(strata_get_latest_sequence_number(secondary) == 2);
    CHECK(strata_get_latest_sequence_number(NULL) == 0);
    CHECK(HOLDS(secondary, "b", "2"));
    strata_iter_seek(it, "b", 1);
    CHECK(!strata_iter_valid(it));
    strata_iter_refresh(it, &err);
    CHECK_OK(err);
    strata_iter_seek(it, "b", 1);
    CHECK(strata_iter_valid(it));
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_put(secondary, wo, "c", 1, "3", 1, &err);
    CHECK_ERROR(err, "secondary");
    strata_try_catch_up_with_primary(primary, &err);
    CHECK_ERROR(err, "not open as a secondary");
    char *missing = path_of("no-such-db");
    CHECK(strata_open_as_secondary(opts, missing, own, &err) == NULL);
    CHECK_ERROR(err, "no database");
    strata_writeoptions_destroy(wo);
    strata_iter_destroy(it);
    strata_readoptions_destroy(ro);
    strata_close(secondary);
    strata_close(primary);
    strata_options_destroy(opts);
    free(missing);
    free(own);
    free(path);
}

int main(int argc, char **argv) {
    int usage = take_root(argc, argv);
    if (usage != 0) return usage;
    null_pointers_with_lengths_are_refused();
    null_pointers_with_lengths_are_refused_everywhere();
    merge_operators();
    user_comparator();
    compaction_filter();
    event_listener();
    multi_get_and_range_deletes();
    optimistic_transactions();
    pessimistic_transactions();
    checkpoints_and_backups();
    table_files_and_ingest();
    statistics_and_the_rest();
    every_other_setter_and_call();
    online_options();
    secondary_instances();
    compression_choices_and_checksums();
    ingest_behind();
    live_files();
    file_ranges_and_single_deletes();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
