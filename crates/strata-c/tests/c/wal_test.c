/* manual_wal_flush, strata_flush_wal and wal_compression from C. A kill is simulated by copying the open
 * database's directory (its LOCK left out) once its flushes and compactions are done
 * (strata_wait_for_compactions), and opening the copy: that is what a restart after a kill
 * finds. With the option on, a write's WAL record is held in memory: the WAL file does not
 * grow and the copy lacks the write, until strata_flush_wal appends it. Built and run by
 * tests/c_api.rs, plainly and under AddressSanitizer and UndefinedBehaviorSanitizer.
 *
 * Usage: wal_test DIR   (DIR must not exist; the test creates databases under it) */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strata.h"

#include "check.h"
#include "kv.h"
#include "root.h"

/* Whether `name` is a WAL's: digits, then ".log". */
static int is_wal(const char *name) {
    size_t n = strlen(name);
    if (n <= 4 || strcmp(name + n - 4, ".log") != 0) return 0;
    for (size_t i = 0; i < n - 4; i++) {
        if (name[i] < '0' || name[i] > '9') return 0;
    }
    return 1;
}

/* The bytes of the WAL files in `dir`, as the file system has them. */
static long long wal_bytes(const char *dir) {
    long long total = 0;
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!is_wal(e->d_name)) continue;
        char file[8192];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(file, &st) == 0) total += (long long)st.st_size;
    }
    if (d) closedir(d);
    return total;
}

/* Copies file `from` to `to`. A file deleted since the directory was listed is an obsolete
 * one (a WAL that an open replayed into a table), which the copy does without. */
static void copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb");
    if (in == NULL) {
        CHECK(errno == ENOENT);
        return;
    }
    FILE *out = fopen(to, "wb");
    CHECK(out != NULL);
    char buf[65536];
    size_t n;
    while (out && (n = fread(buf, 1, sizeof buf, in)) > 0) CHECK(fwrite(buf, 1, n, out) == n);
    if (out) fclose(out);
    fclose(in);
}

/* What a restart after a kill of `db` (in `dir`) right now finds: a copy of the directory,
 * its LOCK left out, taken once the background work is done, opened. Returns the copy, open;
 * the caller closes it. */
static strata_t *after_a_kill(strata_t *db, const char *dir) {
    static int copies = 0;
    char *err = NULL;
    strata_wait_for_compactions(db, 1, &err);
    CHECK_OK(err);
    char copy[8192];
    snprintf(copy, sizeof copy, "%s/copy%d", root, copies++);
    CHECK(mkdir(copy, 0755) == 0);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, "LOCK") == 0) continue;
        char from[8192], to[16384];
        snprintf(from, sizeof from, "%s/%s", dir, e->d_name);
        snprintf(to, sizeof to, "%s/%s", copy, e->d_name);
        struct stat st;
        if (stat(from, &st) == 0 && S_ISREG(st.st_mode)) copy_file(from, to);
    }
    if (d) closedir(d);
    strata_options_t *opts = strata_options_create();
    strata_t *reopened = strata_open(opts, copy, &err);
    CHECK_OK(err);
    strata_options_destroy(opts);
    return reopened;
}

/* Whether a kill of `db` right now keeps `key` with `value` (NULL: loses it). */
static int kill_leaves(strata_t *db, const char *dir, const char *key, const char *value) {
    strata_t *copy = after_a_kill(db, dir);
    int ok = copy != NULL && HOLDS(copy, key, value);
    strata_close(copy);
    return ok;
}

static void held_writes_reach_the_file_at_flush_wal(void) {
    char *err = NULL;
    char dir[8192];
    snprintf(dir, sizeof dir, "%s/held", root);
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_options_set_manual_wal_flush(opts, 1);
    strata_options_set_manual_wal_flush(NULL, 1); /* a null handle is ignored */
    strata_t *db = strata_open(opts, dir, &err);
    CHECK_OK(err);

    long long empty = wal_bytes(dir);
    put(db, "a", "1");
    put(db, "b", "2");
    CHECK(HOLDS(db, "a", "1")); /* readable at once: only the WAL record is held */
    CHECK(wal_bytes(dir) == empty);
    CHECK(kill_leaves(db, dir, "a", NULL));
    CHECK(kill_leaves(db, dir, "b", NULL));
    strata_flush_wal(db, 0, &err);
    CHECK_OK(err);
    long long flushed = wal_bytes(dir);
    CHECK(flushed > empty);
    CHECK(kill_leaves(db, dir, "a", "1"));
    CHECK(kill_leaves(db, dir, "b", "2"));

    /* Held again after the flush; a synced flush appends (and syncs) them too. */
    put(db, "c", "3");
    CHECK(wal_bytes(dir) == flushed);
    CHECK(kill_leaves(db, dir, "c", NULL));
    strata_flush_wal(db, 1, &err);
    CHECK_OK(err);
    CHECK(wal_bytes(dir) > flushed);
    CHECK(kill_leaves(db, dir, "c", "3"));

    /* Close appends what is still held. */
    put(db, "d", "4");
    CHECK(kill_leaves(db, dir, "d", NULL));
    strata_close(db);
    strata_options_set_manual_wal_flush(opts, 0);
    db = strata_open(opts, dir, &err);
    CHECK_OK(err);
    CHECK(HOLDS(db, "d", "4"));

    /* Without the option every write is in the file at once; flush_wal is harmless. */
    put(db, "e", "5");
    CHECK(kill_leaves(db, dir, "e", "5"));
    strata_flush_wal(db, 0, &err);
    CHECK_OK(err);
    strata_flush_wal(db, 1, &err);
    CHECK_OK(err);
    strata_close(db);
    strata_options_destroy(opts);
}

/* wal_compression: the same writes under each algorithm, a kill after them; the restart
 * (opened without the option) finds them all, and the compressed WALs are smaller. */
static void compressed_wal_replays_after_a_kill(void) {
    static const int kinds[] = {0, 1, 4, 7};
    long long uncompressed = 0;
    char value[1024];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char *err = NULL;
        char dir[8192];
        snprintf(dir, sizeof dir, "%s/compressed-%d", root, kinds[k]);
        strata_options_t *opts = strata_options_create();
        strata_options_set_create_if_missing(opts, 1);
        strata_options_set_wal_compression(opts, kinds[k]);
        strata_options_set_wal_compression(opts, 3); /* no such algorithm: unchanged */
        strata_options_set_wal_compression(NULL, 7); /* a null handle is ignored */
        strata_t *db = strata_open(opts, dir, &err);
        CHECK_OK(err);
        long long empty = wal_bytes(dir);
        for (int i = 0; i < 200; i++) {
            char key[32];
            snprintf(key, sizeof key, "key-%03d", i);
            int n = 0;
            while (n < 600) n += snprintf(value + n, sizeof value - n, "value %d, ", i);
            put(db, key, value);
        }
        strata_t *copy = after_a_kill(db, dir);
        for (int i = 0; i < 200; i += 199) {
            char key[32];
            snprintf(key, sizeof key, "key-%03d", i);
            int n = 0;
            while (n < 600) n += snprintf(value + n, sizeof value - n, "value %d, ", i);
            CHECK(HOLDS(copy, key, value));
        }
        strata_close(copy);
        long long written = wal_bytes(dir) - empty;
        if (kinds[k] == 0) {
            uncompressed = written;
        } else {
            CHECK(written * 2 < uncompressed);
        }
        strata_close(db);
        strata_options_destroy(opts);
    }
}

/* A null database and a read-only one are refused, by name. */
static void refusals(void) {
    char *err = NULL;
    strata_flush_wal(NULL, 0, &err);
    CHECK_ERROR(err, "database is a null pointer");
    strata_flush_wal(NULL, 1, NULL); /* errors ignored: nothing happens */

    char dir[8192];
    snprintf(dir, sizeof dir, "%s/read-only", root);
    strata_options_t *opts = strata_options_create();
    strata_options_set_create_if_missing(opts, 1);
    strata_t *db = strata_open(opts, dir, &err);
    CHECK_OK(err);
    strata_close(db);
    strata_options_set_manual_wal_flush(opts, 1);
    db = strata_open_for_read_only(opts, dir, &err);
    CHECK_OK(err);
    strata_flush_wal(db, 0, &err);
    CHECK_ERROR(err, "open read-only");
    strata_close(db);
    strata_options_destroy(opts);
}

int main(int argc, char **argv) {
    int usage = take_root(argc, argv);
    if (usage != 0) return usage;
    held_writes_reach_the_file_at_flush_wal();
    compressed_wal_replays_after_a_kill();
    refusals();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
