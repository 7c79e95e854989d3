/* What the ABI-level benchmarks (abi_bench.c, host_bench.c) share: stop on a
 * failed call saying why, read a clock in ns, take a median. Define
 * BENCH_NAME (the program's name, for its messages) before including it. */
#ifndef CAPSTAN_BENCH_H
#define CAPSTAN_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "capstan.h"

#ifndef BENCH_NAME
#error "define BENCH_NAME before including bench.h"
#endif

static void die(const char *what, capstan_status st) {
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    fprintf(stderr, BENCH_NAME ": %s: %s (%s)\n", what, capstan_status_name(st), msg);
    exit(1);
}

#define MUST(what, expr)                  \
    do {                                  \
        capstan_status st_ = (expr);      \
        if (st_ != CAPSTAN_OK)            \
            die((what), st_);             \
    } while (0)

/* `id`'s time in ns: CLOCK_MONOTONIC for wall time, CLOCK_PROCESS_CPUTIME_ID
 * for every thread's CPU (handing work to another thread must not make it
 * look cheaper), CLOCK_THREAD_CPUTIME_ID for this thread's. */
static inline double clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of `v` (sorted in place). */
static inline double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

#endif
