/* The directory a test program makes its databases under: its one argument, created if
 * missing. For the programs whose usage is `PROGRAM DIR`. */

#ifndef STRATA_TEST_ROOT_H
#define STRATA_TEST_ROOT_H

#include <stdio.h>
#include <sys/stat.h>

static char root[4096];

/* Takes the directory from the command line into `root` and creates it; 0, or 2 after a
 * usage message when the arguments are not one directory (main returns it). */
static int take_root(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    snprintf(root, sizeof root, "%s", argv[1]);
    mkdir(root, 0755);
    return 0;
}

#endif
