// capstan/runtime.hpp: the runtime, process-wide: configure_runtime and shutdown_runtime.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_RUNTIME
#define CAPSTAN_HPP_RUNTIME

#include "error.hpp"

namespace capstan {

/// How capstan runs its own threads, process-wide (capstan_runtime_options):
/// 0 keeps a field's default.
struct RuntimeOptions {
    std::uint32_t threads = 0;        ///< cap on pool threads (0 = 256)
    std::uint32_t keep_alive_ms = 0;  ///< deprecated: use `keep_alive`
    /// An idle pool thread's keep-alive (0 = 10 s); wins over keep_alive_ms
    /// when non-zero; negative is INVALID_ARGUMENT.
    std::chrono::milliseconds keep_alive{0};
};

/// Sets the runtime's options, process-wide; may change at any time.
[[nodiscard]] inline Expected<void> try_configure_runtime(const RuntimeOptions& options) {
    capstan_runtime_options o = CAPSTAN_RUNTIME_OPTIONS_INIT;
    o.threads = options.threads;
    if (const char *bad = detail::pick_ms(options.keep_alive, options.keep_alive_ms, "RuntimeOptions::keep_alive is negative",
                                          o.keep_alive_ms))
        return Error(CAPSTAN_ERR_INVALID_ARGUMENT, bad);
    capstan_status st = capstan_runtime_configure(&o);
    if (st != CAPSTAN_OK) return detail::last_error(st);
    return {};
}

/// Stops every thread capstan started and joins it, process-wide (pool
/// threads finish their work first; timer thread; MCP connection threads),
/// waiting up to `timeout` (rounded up to milliseconds) and cancelling
/// nothing. OK when no capstan thread is left (the library may then be
/// unloaded once no capstan object is held); TIMEOUT otherwise, the
/// message naming what still runs (a tool in a callback, a call with a
/// timeout, a mount not unmounted, an McpServer not stopped). capstan keeps
/// working afterwards: the next call that needs a thread starts it again,
/// and configure_runtime's options stay. Call it from a host thread, never
/// from inside a tool, result callback or hook (it would wait for itself).
template <class Rep, class Period>
[[nodiscard]] Expected<void> try_shutdown_runtime(std::chrono::duration<Rep, Period> timeout) {
    capstan_status st = capstan_runtime_shutdown(detail::ms_up(timeout, UINT32_MAX - 1));
    if (st != CAPSTAN_OK) return detail::last_error(st);
    return {};
}
/// The same with no time limit.
[[nodiscard]] inline Expected<void> try_shutdown_runtime() {
    capstan_status st = capstan_runtime_shutdown(UINT32_MAX);
    if (st != CAPSTAN_OK) return detail::last_error(st);
    return {};
}

#if CAPSTAN_HPP_EXCEPTIONS
template <class Rep, class Period>
void shutdown_runtime(std::chrono::duration<Rep, Period> timeout) { try_shutdown_runtime(timeout).value(); }
inline void shutdown_runtime() { try_shutdown_runtime().value(); }
inline void configure_runtime(const RuntimeOptions& options) { try_configure_runtime(options).value(); }
#endif

}  // namespace capstan

#endif  // CAPSTAN_HPP_RUNTIME
