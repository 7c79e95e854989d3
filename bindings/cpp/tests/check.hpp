// Minimal checks for the C++ tests, like tests/c/check.h: a failed CHECK
// prints where and why, the test goes on, and main() returns non-zero.
// Every test program also starts a watchdog: a hang fails the test instead
// of blocking `make test`.
#ifndef CAPSTAN_TEST_CHECK_HPP
#define CAPSTAN_TEST_CHECK_HPP

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

#include "capstan.hpp"

namespace check {

// Atomic: checks also run on tool and worker threads.
inline std::atomic<int> failures{0};
inline std::atomic<int> count{0};

inline void fail(const char *file, int line, const std::string &what) {
    failures++;
    std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what.c_str());
}

inline bool contains(std::string_view haystack, std::string_view needle) {
    return haystack.find(needle) != std::string_view::npos;
}

/// Ends the process with status 2 if it runs longer than `seconds`.
inline void watchdog(int seconds) {
    std::thread([seconds] {
        std::this_thread::sleep_for(std::chrono::seconds(seconds));
        std::fprintf(stderr, "watchdog: test still running after %d s: a hang\n", seconds);
        std::_Exit(2);
    }).detach();
}

inline int report(const char *name) {
    int f = failures.load();
    std::printf("%s: %d passed, %d failed\n", name, count.load() - f, f);
    return f == 0 ? 0 : 1;
}

inline void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

/// Waits (bounded) until pred() holds.
template <class P>
bool wait_until(P pred, int timeout_ms = 5000) {
    for (int i = 0; i < timeout_ms; i++) {
        if (pred()) return true;
        sleep_ms(1);
    }
    return pred();
}

/// Counts live copies of a value captured by a tool's lambda: every copy or
/// move adds one, every destructor removes one. `destroyed_twice` catches a
/// destructor running on an already destroyed object.
struct Probe {
    std::atomic<int> *live;
    std::atomic<int> *destroyed_twice;
    bool alive = true;
    Probe(std::atomic<int> &l, std::atomic<int> &twice) : live(&l), destroyed_twice(&twice) { ++*live; }
    Probe(const Probe &o) : live(o.live), destroyed_twice(o.destroyed_twice) { ++*live; }
    Probe(Probe &&o) noexcept : live(o.live), destroyed_twice(o.destroyed_twice) { ++*live; }
    Probe &operator=(const Probe &) = delete;
    ~Probe() {
        if (!alive) ++*destroyed_twice;
        alive = false;
        --*live;
    }
};

}  // namespace check

#define CHECK(cond)                                                  \
    do {                                                             \
        check::count++;                                              \
        if (!(cond)) check::fail(__FILE__, __LINE__, #cond);         \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                                             \
    do {                                                                                             \
        check::count++;                                                                              \
        std::string h_(haystack);                                                                    \
        if (!check::contains(h_, needle))                                                            \
            check::fail(__FILE__, __LINE__, std::string("expected \"") + (needle) + "\" in: " + h_); \
    } while (0)

// The expression must throw capstan::Error with this status.
#define CHECK_THROWS_STATUS(expr, expected)                                                          \
    do {                                                                                             \
        check::count++;                                                                              \
        try {                                                                                        \
            (void)(expr);                                                                            \
            check::fail(__FILE__, __LINE__, std::string(#expr) + " did not throw");                  \
        } catch (const capstan::Error &e_) {                                                         \
            if (e_.status() != (expected) || std::strlen(e_.what()) == 0)                            \
                check::fail(__FILE__, __LINE__,                                                      \
                            std::string(#expr) + " threw " + e_.status_name() + ": " + e_.what());  \
        }                                                                                            \
    } while (0)

#endif
