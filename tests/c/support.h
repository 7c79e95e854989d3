/* Small helpers shared by the C tests (time, waiting, a watchdog). Needs
 * _POSIX_C_SOURCE >= 199309L for nanosleep, defined before any include.
 * Builds with mingw-w64 too (make windows-test): Sleep and a watchdog thread
 * stand in for nanosleep and SIGALRM there. */
#ifndef CAPSTAN_TEST_SUPPORT_H
#define CAPSTAN_TEST_SUPPORT_H

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _WIN32
#include <windows.h>
#endif

static inline void sleep_ms(int ms) {
#ifdef _WIN32
    Sleep((DWORD)ms);
#else
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
#endif
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

/* The suite and test the watchdog names when it fires. */
static inline const char **watchdog_names_(void) {
    static const char *names[2] = {"", ""};
    return names;
}

static inline void watchdog_fire_(int sig) {
    (void)sig;
    const char **names = watchdog_names_();
    static const char msg[] = ": WATCHDOG: a test hung: ";
    ssize_t w = write(2, names[0], strlen(names[0]));
    w = write(2, msg, sizeof msg - 1);
    w = write(2, names[1], strlen(names[1]));
    w = write(2, "\n", 1);
    (void)w;
    _exit(2);
}

/* Arms a watchdog for the next test of a suite that could hang (a deadlock):
 * after CAPSTAN_TEST_WATCHDOG_S seconds (default_s if unset; generous, for
 * Valgrind) the process exits 2 naming the test, so a regression fails
 * instead of hanging CI. */
#ifdef _WIN32
/* Windows has no SIGALRM: alarm() is a thread that sleeps until the deadline
 * (0: none) and then fires as the signal would. Same contract as POSIX
 * alarm(): a later call replaces the deadline, alarm(0) cancels it. */
static inline atomic_llong *watchdog_deadline_ms_(void) {
    static atomic_llong deadline;
    return &deadline;
}

static inline DWORD WINAPI watchdog_thread_(LPVOID arg) {
    (void)arg;
    for (;;) {
        Sleep(100);
        long long deadline = atomic_load(watchdog_deadline_ms_());
        if (deadline != 0 && (long long)GetTickCount64() >= deadline) watchdog_fire_(0);
    }
    return 0;
}

static inline unsigned watchdog_alarm_(unsigned seconds) {
    static atomic_int started;
    atomic_store(watchdog_deadline_ms_(), seconds == 0 ? 0 : (long long)GetTickCount64() + 1000LL * seconds);
    if (seconds != 0 && atomic_exchange(&started, 1) == 0) {
        HANDLE t = CreateThread(NULL, 0, watchdog_thread_, NULL, 0, NULL);
        if (t != NULL) CloseHandle(t);
    }
    return 0;
}
#define alarm(s) watchdog_alarm_(s)
#endif

static inline void watchdog_begin(const char *suite, const char *test, unsigned default_s) {
    const char **names = watchdog_names_();
    names[0] = suite;
    names[1] = test;
#ifndef _WIN32
    signal(SIGALRM, watchdog_fire_);
#endif
    const char *w = getenv("CAPSTAN_TEST_WATCHDOG_S");
    alarm(w != NULL ? (unsigned)atoi(w) : default_s);
}

#endif
