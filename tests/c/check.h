/* Minimal checks for the C tests: every failed CHECK prints where and why,
 * the test keeps going, and main() returns non-zero at the end. */
#ifndef CAPSTAN_TEST_CHECK_H
#define CAPSTAN_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capstan.h"

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        check_count++;                                                     \
        if (!(cond)) {                                                     \
            check_failures++;                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                      \
        }                                                                  \
    } while (0)

/* A status must equal the expected one; on mismatch print the last error. */
#define CHECK_STATUS(expr, expected)                                       \
    do {                                                                   \
        capstan_status st_ = (expr);                                       \
        check_count++;                                                     \
        if (st_ != (expected)) {                                           \
            char msg_[512];                                                \
            capstan_error_message(msg_, sizeof msg_);                         \
            check_failures++;                                              \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n",  \
                    __FILE__, __LINE__, #expr, capstan_status_name(st_),   \
                    capstan_status_name(expected), msg_);                  \
        }                                                                  \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                   \
    do {                                                                   \
        const char *h_ = (haystack);                                       \
        check_count++;                                                     \
        if (h_ == NULL || strstr(h_, (needle)) == NULL) {                  \
            check_failures++;                                              \
            fprintf(stderr, "%s:%d: expected \"%s\" in: %s\n", __FILE__,   \
                    __LINE__, (needle), h_ ? h_ : "(null)");               \
        }                                                                  \
    } while (0)

/* Test scale: CAPSTAN_TEST_SCALE=small under sanitizers and Valgrind. */
static inline int check_small(void) {
    const char *s = getenv("CAPSTAN_TEST_SCALE");
    return s != NULL && strcmp(s, "small") == 0;
}

/* Ends a test program: prints the plain summary line and the exit status. */
static inline int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_count - check_failures,
           check_failures);
    return check_failures == 0 ? 0 : 1;
}

#endif
