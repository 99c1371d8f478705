/* The checks the C test programs use: counters, CHECK, CHECK_OK and CHECK_ERROR. Each
 * program is one translation unit, so the static counters are its own. */

#ifndef STRATA_TEST_CHECK_H
#define STRATA_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

#include "strata.h"

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (cond) {                                                        \
            passed++;                                                      \
        } else {                                                           \
            failed++;                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                  \
    } while (0)

/* Fails the check if an error was reported, and releases it. */
#define CHECK_OK(err)                                                      \
    do {                                                                   \
        if (err != NULL) {                                                 \
            failed++;                                                      \
            fprintf(stderr, "%s:%d: unexpected error: %s\n", __FILE__, __LINE__, err); \
            strata_free(err);                                              \
            err = NULL;                                                    \
        } else {                                                           \
            passed++;                                                      \
        }                                                                  \
    } while (0)

/* Checks that an error was reported and mentions `needle`, and releases it. */
static void check_error(char **err, const char *needle, int line) {
    if (*err == NULL) {
        failed++;
        fprintf(stderr, "line %d: expected an error containing \"%s\"\n", line, needle);
        return;
    }
    if (strstr(*err, needle) == NULL) {
        failed++;
        fprintf(stderr, "line %d: error \"%s\" does not contain \"%s\"\n", line, *err, needle);
    } else {
        passed++;
    }
    strata_free(*err);
    *err = NULL;
}
#define CHECK_ERROR(err, needle) check_error(&(err), needle, __LINE__)

#endif
