/* Small helpers shared by the C tests (time and waiting). Needs
 * _POSIX_C_SOURCE >= 199309L for nanosleep, defined before any include. */
#ifndef CAPSTAN_TEST_SUPPORT_H
#define CAPSTAN_TEST_SUPPORT_H

#include <stdatomic.h>
#include <time.h>

static inline void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits (bounded, so a broken library fails the test instead of hanging)
 * until *flag is non-zero. */
static inline int wait_flag(atomic_int *flag, int timeout_ms) {
    for (int waited = 0; waited < timeout_ms; waited++) {
        if (atomic_load(flag)) return 1;
        sleep_ms(1);
    }
    return atomic_load(flag) != 0;
}

/* A destroy callback that counts into the atomic_int its user_data points to. */
static inline void count_destroy(void *user_data) { atomic_fetch_add((atomic_int *)user_data, 1); }

#endif
