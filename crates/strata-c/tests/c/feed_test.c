/* The change feed from C: strata_get_updates_since and the strata_wal_iter_* functions, and
 * reading batches back with strata_writebatch_iterate, _iterate_cf, _iterate_entries and
 * _iterate_log_data.
 * Batches of every kind of update, in two families, are written across flushes with WALs
 * kept; the feed is replayed from several sequence numbers and compared with a model of
 * what was written (each batch's first sequence number and its updates as text). Built and
 * run by tests/c_api.rs, plainly and under AddressSanitizer.
 *
 * Usage: feed_test DIR   (DIR must not exist; the test creates databases under it) */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"

#include "check.h"

#define BATCHES 12
#define TEXT 512

/* The model: what each batch written holds. */
static uint64_t model_seq[BATCHES];
static char model_text[BATCHES][TEXT];

/* Appends one update, as text, to `out`: KIND CF KEY=VALUE; */
static void describe(char *out, int kind, uint32_t cf, const char *k, size_t klen,
                     const char *v, size_t vlen) {
    static const char *const names[] = {"put", "del", "sdel", "merge", "range"};
    size_t used = strlen(out);
    snprintf(out + used, TEXT - used, "%s %u %.*s=%.*s;",
             kind >= 0 && kind <= 4 ? names[kind] : "?", (unsigned)cf, (int)klen, k,
             (int)vlen, v);
}

static void describe_entry(void *state, int kind, uint32_t cf, const char *k, size_t klen,
                           const char *v, size_t vlen) {
    describe((char *)state, kind, cf, k, klen, v, vlen);
}

/* Appends a log-data blob, as text, to `state`: log BLOB; */
static void describe_log_data(void *state, const char *blob, size_t len) {
    char *out = (char *)state;
    size_t used = strlen(out);
    snprintf(out + used, TEXT - used, "log %.*s;", (int)len, blob);
}

/* Counts for strata_writebatch_iterate and _iterate_cf. */
struct counts {
    int puts, deletes, merges;
    uint32_t last_cf;
};

static void count_put(void *s, const char *k, size_t kl, const char *v, size_t vl) {
    (void)k, (void)kl, (void)v, (void)vl;
    ((struct counts *)s)->puts++;
}
static void count_delete(void *s, const char *k, size_t kl) {
    (void)k, (void)kl;
    ((struct counts *)s)->deletes++;
}
static void count_put_cf(void *s, uint32_t cf, const char *k, size_t kl, const char *v,
                         size_t vl) {
    (void)k, (void)kl, (void)v, (void)vl;
    ((struct counts *)s)->puts++;
    ((struct counts *)s)->last_cf = cf;
}
static void count_delete_cf(void *s, uint32_t cf, const char *k, size_t kl) {
    (void)cf, (void)k, (void)kl;
    ((struct counts *)s)->deletes++;
}
static void count_merge_cf(void *s, uint32_t cf, const char *k, size_t kl, const char *v,
                           size_t vl) {
    (void)cf, (void)k, (void)kl, (void)v, (void)vl;
    ((struct counts *)s)->merges++;
}

/* Replays the feed from `from` and checks it against the model: the batches from the one
 * holding `from` on, each with its sequence number and updates. */
static void check_replay(strata_t *db, uint64_t from) {
    /* Batch i spans model_seq[i] .. model_seq[i + 1] - 1. */
    int first = 0;
    while (first + 1 < BATCHES && model_seq[first + 1] <= from)
        first++;
    char *err = NULL;
    strata_wal_iterator_t *it = strata_get_updates_since(db, from, NULL, &err);
    CHECK_OK(err);
    CHECK(it != NULL);
    int i = first;
    for (; strata_wal_iter_valid(it); strata_wal_iter_next(it), i++) {
        uint64_t seq = 0;
        strata_writebatch_t *b = strata_wal_iter_get_batch(it, &seq);
        CHECK(b != NULL);
        if (i >= BATCHES) {
            CHECK(!"the feed has more batches than were written");
            strata_writebatch_destroy(b);
            break;
        }
        CHECK(seq == model_seq[i]);
        char text[TEXT] = "";
        strata_writebatch_iterate_entries(b, text, describe_entry, &err);
        CHECK_OK(err);
        if (strcmp(text, model_text[i]) != 0) {
            fprintf(stderr, "from %llu, batch %d:\n  got  %s\n  want %s\n",
                    (unsigned long long)from, i, text, model_text[i]);
        }
        CHECK(strcmp(text, model_text[i]) == 0);
        strata_writebatch_destroy(b);
    }
    CHECK(i == BATCHES);
    strata_wal_iter_status(it, &err);
    CHECK_OK(err);
    /* Past the end: no batch, sequence 0. */
    uint64_t seq = 99;
    CHECK(strata_wal_iter_get_batch(it, &seq) == NULL);
    CHECK(seq == 0);
    strata_wal_iter_destroy(it);
}

static void feed_across_flushes(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_options_set_WAL_ttl_seconds(opts, 3600);
    strata_options_set_WAL_size_limit_MB(opts, 64);
    strata_mergeoperator_t *add = strata_mergeoperator_create_uint64add();
    strata_options_set_merge_operator(opts, add);
    strata_mergeoperator_destroy(add);
    strata_t *db = strata_open(opts, path, &err);
    CHECK_OK(err);
    if (db == NULL) {
        strata_options_destroy(opts);
        return;
    }
    strata_column_family_t *other = strata_create_column_family(db, opts, "other", &err);
    CHECK_OK(err);
    uint32_t other_id = strata_column_family_handle_get_id(other);
    CHECK(other_id != 0);
    CHECK(strata_column_family_handle_get_id(NULL) == 0);

    strata_writeoptions_t *wo = strata_writeoptions_create();
    const char one[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < BATCHES; i++) {
        char key[16], prev[16], value[16];
        snprintf(key, sizeof key, "k%02d", i);
        snprintf(prev, sizeof prev, "k%02d", i - 1);
        snprintf(value, sizeof value, "v%02d", i);
        strata_writebatch_t *b = strata_writebatch_create();
        char *text = model_text[i];
        text[0] = '\0';
        /* Every batch has a put; then, by turns, one other kind (4 updates at most). */
        strata_writebatch_put(b, key, 3, value, 3);
        describe(text, STRATA_BATCH_PUT, 0, key, 3, value, 3);
        strata_writebatch_put_cf(b, other, key, 3, value, 3);
        describe(text, STRATA_BATCH_PUT, other_id, key, 3, value, 3);
        switch (i % 4) {
        case 0:
            strata_writebatch_merge(b, "count", 5, one, 8);
            describe(text, STRATA_BATCH_MERGE, 0, "count", 5, one, 8);
            break;
        case 1:
            strata_writebatch_delete(b, prev, 3);
            describe(text, STRATA_BATCH_DELETE, 0, prev, 3, "", 0);
            strata_writebatch_delete_cf(b, other, prev, 3);
            describe(text, STRATA_BATCH_DELETE, other_id, prev, 3, "", 0);
            break;
        case 2:
            strata_writebatch_single_delete(b, prev, 3);
            describe(text, STRATA_BATCH_SINGLE_DELETE, 0, prev, 3, "", 0);
            /* Log data: in the WAL record only, not counted, not an update. */
            strata_writebatch_put_log_data(b, value, 3);
            strata_writebatch_put_log_data(b, key, 3);
            break;
        case 3:
            strata_writebatch_delete_range(b, "a", 1, prev, 3);
            describe(text, STRATA_BATCH_RANGE_DELETION, 0, "a", 1, prev, 3);
            break;
        }
        model_seq[i] = strata_get_latest_sequence_number(db) + 1;
        size_t count = strata_writebatch_count(b);
        strata_write(db, wo, b, &err);
        CHECK_OK(err);
        CHECK(strata_get_latest_sequence_number(db) == model_seq[i] + count - 1);
        strata_writebatch_destroy(b);
        if (i == 4 || i == 8) {
            strata_flush(db, &err);
            CHECK_OK(err);
        }
    }
    /* From the start, mid-batch, a batch after each flush, the last batch, past the end. */
    uint64_t latest = strata_get_latest_sequence_number(db);
    check_replay(db, 1);
    check_replay(db, model_seq[3] + 1);
    check_replay(db, model_seq[5]);
    check_replay(db, model_seq[9]);
    check_replay(db, model_seq[BATCHES - 1]);
    strata_wal_iterator_t *it = strata_get_updates_since(db, latest + 1, NULL, &err);
    CHECK_OK(err);
    CHECK(it != NULL && !strata_wal_iter_valid(it));
    strata_wal_iter_destroy(it);

    /* The RocksDB-style walks: batch 1 has 2 puts and 2 deletes; batch 0 a merge. */
    it = strata_get_updates_since(db, model_seq[0], NULL, &err);
    CHECK_OK(err);
    strata_writebatch_t *b0 = strata_wal_iter_get_batch(it, NULL);
    strata_wal_iter_next(it);
    strata_writebatch_t *b1 = strata_wal_iter_get_batch(it, NULL);
    struct counts c = {0, 0, 0, 0};
    strata_writebatch_iterate(b1, &c, count_put, count_delete);
    CHECK(c.puts == 2 && c.deletes == 2 && c.merges == 0);
    struct counts cf = {0, 0, 0, 0};
    strata_writebatch_iterate_cf(b0, &cf, count_put_cf, count_delete_cf, count_merge_cf);
    CHECK(cf.puts == 2 && cf.deletes == 0 && cf.merges == 1 && cf.last_cf == other_id);
    /* Null callbacks skip their updates. */
    strata_writebatch_iterate_cf(b0, &cf, NULL, NULL, NULL);
    strata_writebatch_iterate(b1, &c, NULL, NULL);
    CHECK(c.puts == 2 && cf.merges == 1);
    strata_writebatch_destroy(b0);
    strata_writebatch_destroy(b1);
    strata_wal_iter_destroy(it);

    /* Log data comes back with its batch from the feed, in order; other batches have none. */
    it = strata_get_updates_since(db, model_seq[2], NULL, &err);
    CHECK_OK(err);
    strata_writebatch_t *b2 = strata_wal_iter_get_batch(it, NULL);
    strata_wal_iter_next(it);
    strata_writebatch_t *b3 = strata_wal_iter_get_batch(it, NULL);
    char logged[TEXT] = "";
    strata_writebatch_iterate_log_data(b2, logged, describe_log_data, &err);
    CHECK_OK(err);
    CHECK(strcmp(logged, "log v02;log k02;") == 0);
    logged[0] = '\0';
    strata_writebatch_iterate_log_data(b3, logged, describe_log_data, &err);
    CHECK_OK(err);
    CHECK(logged[0] == '\0');
    strata_writebatch_iterate_log_data(b2, logged, NULL, &err);
    CHECK_OK(err);
    strata_writebatch_destroy(b2);
    strata_writebatch_destroy(b3);
    strata_wal_iter_destroy(it);

    /* Options must be null. */
    it = strata_get_updates_since(db, 1, (const strata_wal_readoptions_t *)opts, &err);
    CHECK(it == NULL);
    CHECK_ERROR(err, "WAL read options must be null");

    strata_writeoptions_destroy(wo);
    strata_column_family_handle_destroy(other);
    strata_close(db);
    strata_options_destroy(opts);
}

/* Without WALs kept, a flush deletes the WAL: asking for a sequence number it held fails
 * naming the oldest one still available. */
static void feed_older_than_the_wals(const char *path) {
    char *err = NULL;
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_t *db = strata_open(opts, path, &err);
    CHECK_OK(err);
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_put(db, wo, "a", 1, "1", 1, &err);
    CHECK_OK(err);
    strata_flush(db, &err);
    CHECK_OK(err);
    strata_put(db, wo, "b", 1, "2", 1, &err);
    CHECK_OK(err);
    uint64_t latest = strata_get_latest_sequence_number(db);
    strata_wal_iterator_t *it = strata_get_updates_since(db, 1, NULL, &err);
    CHECK(it == NULL);
    CHECK_ERROR(err, "not found: updates_since: sequence 1 is no longer in the WALs");
    it = strata_get_updates_since(db, 1, NULL, &err);
    char want[128];
    snprintf(want, sizeof want, "the oldest sequence available is %llu",
             (unsigned long long)latest);
    CHECK_ERROR(err, want);
    /* The oldest one available works. */
    it = strata_get_updates_since(db, latest, NULL, &err);
    CHECK_OK(err);
    uint64_t seq = 0;
    strata_writebatch_t *b = strata_wal_iter_get_batch(it, &seq);
    CHECK(b != NULL && seq == latest);
    strata_writebatch_destroy(b);
    strata_wal_iter_destroy(it);
    strata_writeoptions_destroy(wo);
    strata_close(db);
    strata_options_destroy(opts);
}

/* Null handles are refused or read as nothing, never followed. */
static void nulls(void) {
    char *err = NULL;
    CHECK(strata_get_updates_since(NULL, 1, NULL, &err) == NULL);
    CHECK_ERROR(err, "database is a null pointer");
    CHECK(!strata_wal_iter_valid(NULL));
    strata_wal_iter_next(NULL);
    strata_wal_iter_status(NULL, &err);
    CHECK_ERROR(err, "WAL iterator is a null pointer");
    uint64_t seq = 5;
    CHECK(strata_wal_iter_get_batch(NULL, &seq) == NULL && seq == 0);
    strata_wal_iter_destroy(NULL);
    strata_writebatch_iterate_entries(NULL, NULL, describe_entry, &err);
    CHECK_ERROR(err, "write batch is a null pointer");
    strata_writebatch_iterate_log_data(NULL, NULL, describe_log_data, &err);
    CHECK_ERROR(err, "write batch is a null pointer");
    strata_writebatch_put_log_data(NULL, "x", 1);
    strata_writebatch_iterate(NULL, NULL, count_put, count_delete);
    strata_writebatch_iterate_cf(NULL, NULL, count_put_cf, count_delete_cf, count_merge_cf);
    CHECK(strata_get_latest_sequence_number(NULL) == 0);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/feed", argv[1]);
    feed_across_flushes(path);
    snprintf(path, sizeof path, "%s/short", argv[1]);
    feed_older_than_the_wals(path);
    nulls();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
