/* Writing and reading back keys, for the test programs that check values through the
 * database: put, holds and HOLDS. */

#ifndef STRATA_TEST_KV_H
#define STRATA_TEST_KV_H

#include <stdio.h>
#include <string.h>

#include "strata.h"

#include "check.h"

/* True if `db` holds `value` for `key` (NULL: absent). */
static int holds(strata_t *db, const char *key, size_t klen, const char *value, size_t vlen) {
    strata_readoptions_t *ro = strata_readoptions_create();
    char *err = NULL;
    size_t len = 0;
    char *got = strata_get(db, ro, key, klen, &len, &err);
    strata_readoptions_destroy(ro);
    int ok;
    if (err != NULL) {
        fprintf(stderr, "get: %s\n", err);
        strata_free(err);
        ok = 0;
    } else if (value == NULL) {
        ok = got == NULL;
    } else {
        ok = got != NULL && len == vlen && memcmp(got, value, len) == 0;
    }
    strata_free(got);
    return ok;
}
/* As `holds`, for NUL-terminated key and value. */
static int holds_text(strata_t *db, const char *key, const char *value) {
    return holds(db, key, strlen(key), value, value ? strlen(value) : 0);
}
#define HOLDS(db, key, value) holds_text(db, key, value)

/* Sets `key` to `value`, checking that it worked. */
static void put(strata_t *db, const char *key, const char *value) {
    char *err = NULL;
    strata_writeoptions_t *wo = strata_writeoptions_create();
    strata_put(db, wo, key, strlen(key), value, strlen(value), &err);
    CHECK_OK(err);
    strata_writeoptions_destroy(wo);
}

#endif
