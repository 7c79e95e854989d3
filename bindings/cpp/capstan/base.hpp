// capstan/base.hpp: the C header, the standard headers the wrapper uses, constants, typed flags
// and enums, and the conversions of text and durations every part uses.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_BASE
#define CAPSTAN_HPP_BASE

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "capstan.h"

#ifndef CAPSTAN_HPP_EXCEPTIONS
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define CAPSTAN_HPP_EXCEPTIONS 1
#else
#define CAPSTAN_HPP_EXCEPTIONS 0
#endif
#endif

namespace capstan {

/// Pass as a text length to mean "NUL-terminated" (C API only; the wrapper
/// always passes lengths).
inline constexpr std::size_t nts = CAPSTAN_NTS;
/// A wait without limit.
inline constexpr std::uint32_t forever = UINT32_MAX;

namespace tool_flag {
inline constexpr std::uint32_t requires_approval = static_cast<std::uint32_t>(CAPSTAN_TOOL_REQUIRES_APPROVAL);
inline constexpr std::uint32_t serial = static_cast<std::uint32_t>(CAPSTAN_TOOL_SERIAL);
inline constexpr std::uint32_t main_thread = static_cast<std::uint32_t>(CAPSTAN_TOOL_MAIN_THREAD);
}  // namespace tool_flag

namespace exec_flag {
inline constexpr std::uint32_t sequential = static_cast<std::uint32_t>(CAPSTAN_EXEC_SEQUENTIAL);
inline constexpr std::uint32_t deliver_poll = static_cast<std::uint32_t>(CAPSTAN_EXEC_DELIVER_POLL);
inline constexpr std::uint32_t strict_nulls = static_cast<std::uint32_t>(CAPSTAN_EXEC_STRICT_NULLS);
inline constexpr std::uint32_t start_inline = static_cast<std::uint32_t>(CAPSTAN_EXEC_START_INLINE);
}  // namespace exec_flag

namespace registry_flag {
inline constexpr std::uint32_t coerce = static_cast<std::uint32_t>(CAPSTAN_REGISTRY_COERCE);
}  // namespace registry_flag

namespace export_flag {
inline constexpr std::uint32_t strict = static_cast<std::uint32_t>(CAPSTAN_EXPORT_STRICT);
inline constexpr std::uint32_t gemini_lower = static_cast<std::uint32_t>(CAPSTAN_EXPORT_GEMINI_LOWER);
}  // namespace export_flag

// ---- typed flags ------------------------------------------------------------
// One enum class per kind of flag, combined with | into a capstan::Flags<E>:
//   tool.flags = capstan::ToolFlag::serial | capstan::ToolFlag::main_thread;
// A flag of another kind does not compile (ExecFlag::sequential is no
// ToolFlag). The raw uint32_t constants above (capstan::tool_flag::... and the
// CAPSTAN_* macros) still convert to Flags, so code written against them
// builds unchanged; they are deprecated in favour of the enums.

enum class ToolFlag : std::uint32_t {
    requires_approval = CAPSTAN_TOOL_REQUIRES_APPROVAL,
    serial = CAPSTAN_TOOL_SERIAL,
    main_thread = CAPSTAN_TOOL_MAIN_THREAD,
    wait_for_response = CAPSTAN_TOOL_WAIT_FOR_RESPONSE,  ///< streams: never start before the response ended
    deferred = CAPSTAN_TOOL_DEFERRED,  ///< left out of provider exports until the search tool finds it
    /// Safe to run twice: with a journal, a call that started in an earlier
    /// process and never completed runs again (else "Outcome unknown:").
    idempotent = CAPSTAN_TOOL_IDEMPOTENT,
    replace = CAPSTAN_TOOL_REPLACE,    ///< replace a tool of the same name (else registering it again throws)
};

enum class ExecFlag : std::uint32_t {
    sequential = CAPSTAN_EXEC_SEQUENTIAL,
    deliver_poll = CAPSTAN_EXEC_DELIVER_POLL,
    strict_nulls = CAPSTAN_EXEC_STRICT_NULLS,
    start_inline = CAPSTAN_EXEC_START_INLINE,
    early_dispatch = CAPSTAN_EXEC_EARLY_DISPATCH,  ///< streams only
    /// run_turn only: the whole turn, the model's own turn (thinking blocks
    /// and signatures, reasoning items, thought signatures, unchanged) then
    /// the results, in one array to append to the history as is.
    whole_turn = CAPSTAN_EXEC_WHOLE_TURN,
};

enum class RegistryFlag : std::uint32_t {
    coerce = CAPSTAN_REGISTRY_COERCE,
    strict_defaults = CAPSTAN_REGISTRY_STRICT_DEFAULTS,
};

enum class ExportFlag : std::uint32_t {
    strict = CAPSTAN_EXPORT_STRICT,
    gemini_lower = CAPSTAN_EXPORT_GEMINI_LOWER,
};

enum class SearchFlag : std::uint32_t {
    regex = CAPSTAN_SEARCH_REGEX,  ///< the query is a regular expression (Rust regex syntax)
};

enum class HistoryFlag : std::uint32_t {
    repair = CAPSTAN_HISTORY_REPAIR,
    gemini_signatures = CAPSTAN_HISTORY_GEMINI_SIGNATURES,
};

/// The requests a mount's host answers (McpInput::methods).
enum class McpInputMethod : std::uint32_t {
    elicitation = CAPSTAN_MCP_INPUT_ELICITATION,  ///< elicitation/create: a form for the user
    sampling = CAPSTAN_MCP_INPUT_SAMPLING,        ///< sampling/createMessage: a completion of the host's model
    roots = CAPSTAN_MCP_INPUT_ROOTS,              ///< roots/list: the host's roots
};

template <class E>
struct is_flag_enum : std::false_type {};
template <> struct is_flag_enum<ToolFlag> : std::true_type {};
template <> struct is_flag_enum<ExecFlag> : std::true_type {};
template <> struct is_flag_enum<RegistryFlag> : std::true_type {};
template <> struct is_flag_enum<ExportFlag> : std::true_type {};
template <> struct is_flag_enum<SearchFlag> : std::true_type {};
template <> struct is_flag_enum<HistoryFlag> : std::true_type {};
template <> struct is_flag_enum<McpInputMethod> : std::true_type {};

/// A set of flags of one kind E (ToolFlag, ExecFlag, ...).
template <class E>
class Flags {
    static_assert(is_flag_enum<E>::value, "capstan::Flags takes one of capstan's flag enums");

public:
    constexpr Flags() noexcept = default;
    constexpr Flags(E flag) noexcept : bits_(static_cast<std::uint32_t>(flag)) {}
    /// A raw CAPSTAN_* bitmask (deprecated: use the enum). Bits capstan does
    /// not know are refused by capstan (INVALID_ARGUMENT), as in C.
    constexpr Flags(std::uint32_t bits) noexcept : bits_(bits) {}

    constexpr std::uint32_t bits() const noexcept { return bits_; }
    constexpr bool has(E flag) const noexcept {
        return (bits_ & static_cast<std::uint32_t>(flag)) == static_cast<std::uint32_t>(flag);
    }
    constexpr bool empty() const noexcept { return bits_ == 0; }

    friend constexpr Flags operator|(Flags a, Flags b) noexcept { return Flags(a.bits_ | b.bits_); }
    friend constexpr Flags operator&(Flags a, Flags b) noexcept { return Flags(a.bits_ & b.bits_); }
    constexpr Flags &operator|=(Flags o) noexcept {
        bits_ |= o.bits_;
        return *this;
    }
    friend constexpr bool operator==(Flags a, Flags b) noexcept { return a.bits_ == b.bits_; }
    friend constexpr bool operator!=(Flags a, Flags b) noexcept { return a.bits_ != b.bits_; }

private:
    std::uint32_t bits_ = 0;
};

template <class E, class = std::enable_if_t<is_flag_enum<E>::value>>
constexpr Flags<E> operator|(E a, E b) noexcept {
    return Flags<E>(a) | Flags<E>(b);
}

enum class Format : capstan_format {
    describe = CAPSTAN_FORMAT_DESCRIBE,
    openai_chat = CAPSTAN_FORMAT_OPENAI_CHAT,
    openai_responses = CAPSTAN_FORMAT_OPENAI_RESPONSES,
    anthropic = CAPSTAN_FORMAT_ANTHROPIC,
    gemini = CAPSTAN_FORMAT_GEMINI,
    mcp = CAPSTAN_FORMAT_MCP,
};

enum class Outcome : capstan_outcome {
    ok = CAPSTAN_OUTCOME_OK,
    tool_error = CAPSTAN_OUTCOME_TOOL_ERROR,
    invalid_arguments = CAPSTAN_OUTCOME_INVALID_ARGUMENTS,
    unknown_tool = CAPSTAN_OUTCOME_UNKNOWN_TOOL,
    timeout = CAPSTAN_OUTCOME_TIMEOUT,
    cancelled = CAPSTAN_OUTCOME_CANCELLED,
    denied = CAPSTAN_OUTCOME_DENIED,
};

enum class EventKind : capstan_event_kind {
    started = CAPSTAN_EVENT_STARTED,
    finished = CAPSTAN_EVENT_FINISHED,
    timed_out = CAPSTAN_EVENT_TIMED_OUT,
    cancelled = CAPSTAN_EVENT_CANCELLED,
    progress = CAPSTAN_EVENT_PROGRESS,  ///< a running call reported progress (Call::progress)
    log = CAPSTAN_EVENT_LOG,            ///< a running call sent a log message (Call::log)
    replayed = CAPSTAN_EVENT_REPLAYED,  ///< answered from the journal without running its tool
};

/// The severity of a log message (Call::log): MCP's levels, the syslog
/// severities of RFC 5424, least severe first.
enum class LogLevel : capstan_log_level {
    debug = CAPSTAN_LOG_DEBUG,
    info = CAPSTAN_LOG_INFO,
    notice = CAPSTAN_LOG_NOTICE,
    warning = CAPSTAN_LOG_WARNING,
    error = CAPSTAN_LOG_ERROR,
    critical = CAPSTAN_LOG_CRITICAL,
    alert = CAPSTAN_LOG_ALERT,
    emergency = CAPSTAN_LOG_EMERGENCY,
};

namespace detail {
inline constexpr const char *log_level_names[] = {"debug", "info",     "notice", "warning",
                                                  "error", "critical", "alert",  "emergency"};
}  // namespace detail

/// The MCP name of a level ("debug" .. "emergency"); "unknown" for a value
/// that is not a level.
inline const char *log_level_name(LogLevel level) noexcept {
    const auto i = static_cast<capstan_log_level>(level);
    return i < 8 ? detail::log_level_names[i] : "unknown";
}

/// The level with MCP's name `name` ("debug" .. "emergency"); nullopt for
/// any other name.
inline std::optional<LogLevel> log_level_from_name(std::string_view name) noexcept {
    for (capstan_log_level i = 0; i < 8; ++i) {
        if (name == detail::log_level_names[i]) return static_cast<LogLevel>(i);
    }
    return std::nullopt;
}

/// The name an outcome has in result JSON ("ok", "tool_error", ...).
inline const char *outcome_name(Outcome o) noexcept {
    switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::tool_error: return "tool_error";
    case Outcome::invalid_arguments: return "invalid_arguments";
    case Outcome::unknown_tool: return "unknown_tool";
    case Outcome::timeout: return "timeout";
    case Outcome::cancelled: return "cancelled";
    case Outcome::denied: return "denied";
    }
    return "unknown";
}

inline const char *status_name(capstan_status status) noexcept { return capstan_status_name(status); }
inline const char *version() noexcept { return capstan_version_string(); }

namespace detail {

/// A pointer capstan accepts for a possibly empty view (never NULL).
inline const char *ptr(std::string_view s) noexcept { return s.data() ? s.data() : ""; }
inline std::string_view view(const char *p, std::size_t len) noexcept {
    return p && len ? std::string_view(p, len) : std::string_view();
}
inline bool has_nul(const std::string &s) noexcept { return s.find('\0') != std::string::npos; }

/// A duration as whole milliseconds for a C argument: rounded up (a positive
/// duration never becomes 0, which capstan reads as "none" or "just check"),
/// at most `cap`; zero and negative durations give 0.
template <class Rep, class Period>
std::uint32_t ms_up(std::chrono::duration<Rep, Period> d, std::uint32_t cap) noexcept {
    using fms = std::chrono::duration<double, std::milli>;
    if (!(d > d.zero())) return 0;
    if (fms(d) >= fms(static_cast<double>(cap))) return cap;
    if constexpr (std::is_floating_point_v<Rep>) {
        return static_cast<std::uint32_t>(std::ceil(fms(d).count()));
    } else {
        return static_cast<std::uint32_t>(std::chrono::ceil<std::chrono::milliseconds>(d).count());
    }
}

/// The C milliseconds of a timeout given both ways: the std::chrono field
/// when non-zero, else the older uint32_t one; nullptr, or what is wrong.
inline const char *pick_ms(std::chrono::milliseconds d, std::uint32_t raw, const char *negative, std::uint32_t &out) noexcept {
    if (d.count() < 0) return negative;
    out = d.count() > 0 ? ms_up(d, UINT32_MAX) : raw;
    return nullptr;
}

}  // namespace detail

}  // namespace capstan

#endif  // CAPSTAN_HPP_BASE
