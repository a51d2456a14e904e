/* check.h — the pass/fail counting of kwire's simpler C test programs. */
#ifndef KWIRE_TEST_CHECK_H
#define KWIRE_TEST_CHECK_H

#include <stdio.h>

/* passed and failed count the checks; the program prints them at the end. */
static int passed, failed;

/* check counts one assertion and prints what failed. */
static void check(int ok, const char *what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL: %s\n", what);
    }
}

#endif
