// capstan.hpp: a header-only C++17 wrapper over capstan's C ABI (capstan.h).
//
//   capstan::Registry reg;
//   reg.add({"add", "Add two integers.", schema}, [](std::string_view args) {
//       return capstan::Output::json(...);
//   });
//   std::vector<capstan::Result> results = reg.execute(calls_json);
//
// Ownership and threads follow capstan.h; in C++ terms:
//  - Registry, Batch, Call and Approval are move-only RAII handles.
//  - A tool's callable (and its captures) is owned by capstan from `add` on
//    and destroyed exactly once: when the tool is replaced or removed and its
//    last call is done, when the registry is freed, or at once if `add` fails.
//    It runs on capstan's pool threads (main-thread tools: inside `pump`), so
//    it must be safe to call from any thread, several at a time.
//  - Errors: the throwing functions throw capstan::Error (status + message,
//    plus the provider's error fields and a schema error's JSON Pointer).
//    Every one has a `try_` twin returning capstan::Expected<T> instead, and
//    only those exist when exceptions are disabled (-fno-exceptions).
//  - An exception escaping a tool becomes that call's tool_error result (the
//    model reads "the tool threw: <what()>"); one escaping an approver denies
//    the call. Exceptions never cross into capstan.
#ifndef CAPSTAN_HPP
#define CAPSTAN_HPP

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

/// A failed capstan function: its status and the message capstan gave.
/// What a provider's error body said (Error::provider, for
/// CAPSTAN_ERR_PROVIDER_ERROR), as capstan_error_json reads it. Fields the
/// provider did not send are empty.
struct ProviderError {
    std::string kind;     ///< as the message shows it, e.g. "rate_limit_error"
    std::string message;  ///< the provider's own message
    std::optional<std::string> type;  ///< its error type or status name
    std::optional<std::string> code;  ///< its error code, as text
    std::optional<int> http_status;   ///< an HTTP status the body carries
    std::optional<std::chrono::milliseconds> retry_after;  ///< a retry delay the body carries
};

class Error : public std::runtime_error {
public:
    Error(capstan_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
    Error(capstan_status status, const std::string &message, std::optional<ProviderError> provider,
          std::optional<std::string> schema_pointer)
        : std::runtime_error(message), status_(status), provider_(std::move(provider)),
          schema_pointer_(std::move(schema_pointer)) {}
    capstan_status status() const noexcept { return status_; }
    const char *status_name() const noexcept { return capstan_status_name(status_); }
    /// The provider's error fields (CAPSTAN_ERR_PROVIDER_ERROR only).
    const std::optional<ProviderError> &provider() const noexcept { return provider_; }
    /// The JSON Pointer of the offending place in a tool's schema, "" for its
    /// root (CAPSTAN_ERR_INVALID_SCHEMA only).
    const std::optional<std::string> &schema_pointer() const noexcept { return schema_pointer_; }

private:
    capstan_status status_;
    std::optional<ProviderError> provider_;
    std::optional<std::string> schema_pointer_;
};

namespace detail {

/// Reads the few fields of capstan_error_json's document the Error carries.
/// A minimal JSON reader (objects, strings with escapes, numbers, literals,
/// arrays skipped): the document is capstan's own, so any surprise just
/// leaves the field empty.
class ErrorJsonReader {
public:
    explicit ErrorJsonReader(std::string_view text) : s_(text) {}

    /// The top-level "ok" of a history report; false if absent or not `true`.
    bool read_ok() {
        bool ok = false;
        bool parsed = object([&](const std::string &key) {
            if (key != "ok") return skip();
            ws();
            if (literal("true")) ok = true;
            else if (!literal("false")) return false;
            return true;
        });
        return parsed && ok;
    }

    /// Parses the top-level object; false if it is not one.
    bool read(std::optional<ProviderError> &provider, std::optional<std::string> &pointer) {
        return object([&](const std::string &key) {
            if (key == "pointer") return optional_string(pointer);
            if (key == "provider") {
                ws();
                if (literal("null")) return true;
                ProviderError p;
                bool ok = object([&](const std::string &k) {
                    std::optional<std::string> text;
                    std::optional<long long> number;
                    if (k == "kind" || k == "message" || k == "type" || k == "code") {
                        if (!value_text_or_number(text)) return false;
                        if (k == "kind") p.kind = text.value_or("");
                        else if (k == "message") p.message = text.value_or("");
                        else if (k == "type") p.type = text;
                        else p.code = text;
                        return true;
                    }
                    if (k == "http_status" || k == "retry_after_ms") {
                        if (!optional_number(number)) return false;
                        if (number && k == "http_status") p.http_status = static_cast<int>(*number);
                        if (number && k == "retry_after_ms") p.retry_after = std::chrono::milliseconds(*number);
                        return true;
                    }
                    return skip();
                });
                if (ok) provider = std::move(p);
                return ok;
            }
            return skip();
        });
    }

private:
    std::string_view s_;
    std::size_t i_ = 0;

    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
    }
    bool eat(char c) {
        ws();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    bool literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        return true;
    }
    template <class F> bool object(F &&member) {
        if (!eat('{')) return false;
        if (eat('}')) return true;
        do {
            std::string key;
            if (!string(key) || !eat(':') || !member(key)) return false;
        } while (eat(','));
        return eat('}');
    }
    static void utf8(std::string &out, std::uint32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    bool hex4(std::uint32_t &cp) {
        if (s_.size() - i_ < 4) return false;
        cp = 0;
        for (int k = 0; k < 4; ++k) {
            char c = s_[i_++];
            cp <<= 4;
            if (c >= '0' && c <= '9') cp |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f') cp |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') cp |= static_cast<std::uint32_t>(c - 'A' + 10);
            else return false;
        }
        return true;
    }
    bool string(std::string &out) {
        if (!eat('"')) return false;
        while (i_ < s_.size()) {
            char c = s_[i_++];
            if (c == '"') return true;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= s_.size()) return false;
            char e = s_[i_++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                std::uint32_t cp = 0;
                if (!hex4(cp)) return false;
                if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(i_, 2) == "\\u") {
                    i_ += 2;
                    std::uint32_t lo = 0;
                    if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                utf8(out, cp);
                break;
            }
            default: return false;
            }
        }
        return false;
    }
    bool number(long long &out) {
        ws();
        std::size_t start = i_;
        bool integral = true;
        while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' || s_[i_] == '+' ||
                                  s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) {
            if (!std::isdigit(static_cast<unsigned char>(s_[i_])) && s_[i_] != '-') integral = false;
            ++i_;
        }
        if (i_ == start) return false;
        if (!integral) return true;  // kept empty: capstan's numbers here are integers
        std::string digits(s_.substr(start, i_ - start));
        out = std::strtoll(digits.c_str(), nullptr, 10);
        return true;
    }
    bool optional_string(std::optional<std::string> &out) {
        ws();
        if (literal("null")) return true;
        std::string text;
        if (!string(text)) return false;
        out = std::move(text);
        return true;
    }
    bool optional_number(std::optional<long long> &out) {
        ws();
        if (literal("null")) return true;
        long long n = 0;
        if (!number(n)) return false;
        out = n;
        return true;
    }
    bool value_text_or_number(std::optional<std::string> &out) {
        ws();
        if (i_ < s_.size() && s_[i_] != '"' && s_[i_] != 'n') {
            std::size_t start = i_;
            long long n = 0;
            if (!number(n)) return false;
            out = std::string(s_.substr(start, i_ - start));
            return true;
        }
        return optional_string(out);
    }
    bool skip() {
        ws();
        if (i_ >= s_.size()) return false;
        char c = s_[i_];
        if (c == '"') {
            std::string ignored;
            return string(ignored);
        }
        if (c == '{') return object([&](const std::string &) { return skip(); });
        if (c == '[') {
            ++i_;
            if (eat(']')) return true;
            do {
                if (!skip()) return false;
            } while (eat(','));
            return eat(']');
        }
        if (literal("null") || literal("true") || literal("false")) return true;
        long long ignored = 0;
        return number(ignored);
    }
};

[[noreturn]] inline void raise(const Error &e) {
#if CAPSTAN_HPP_EXCEPTIONS
    throw e;
#else
    std::fprintf(stderr, "capstan: value() of a failed Expected: %s: %s\n", e.status_name(), e.what());
    std::abort();
#endif
}

/// The calling thread's last capstan error, read right after the failing call.
inline Error last_error(capstan_status status) {
    char small[256];
    std::size_t n = capstan_error_message(small, sizeof small);
    std::string message;
    if (n < sizeof small) {
        message.assign(small, n);
    } else {
        message.resize(n + 1);
        n = capstan_error_message(&message[0], message.size());
        message.resize(std::min(n, message.size() - 1));
    }
    if (message.empty()) message = capstan_status_name(status);
    std::optional<ProviderError> provider;
    std::optional<std::string> pointer;
    char *json = nullptr;
    std::size_t json_len = 0;
    if (capstan_error_json(&json, &json_len) == CAPSTAN_OK && json != nullptr) {
        if (!ErrorJsonReader(std::string_view(json, json_len)).read(provider, pointer)) {
            provider.reset();
            pointer.reset();
        }
        capstan_string_free(json);
    }
    return Error(status, message, std::move(provider), std::move(pointer));
}

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

/// Either a value or the Error that prevented it (like C++23 std::expected).
/// value() on an error throws it, or without exceptions prints it and aborts.
template <class T>
class Expected {
public:
    Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    Expected(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

    bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }
    /// Precondition: !has_value().
    const Error &error() const noexcept { return *std::get_if<1>(&v_); }

    T &value() & { check(); return *std::get_if<0>(&v_); }
    const T &value() const & { check(); return *std::get_if<0>(&v_); }
    T &&value() && { check(); return std::move(*std::get_if<0>(&v_)); }
    /// Precondition: has_value().
    T &operator*() & noexcept { return *std::get_if<0>(&v_); }
    T &&operator*() && noexcept { return std::move(*std::get_if<0>(&v_)); }
    T *operator->() noexcept { return std::get_if<0>(&v_); }
    const T *operator->() const noexcept { return std::get_if<0>(&v_); }

private:
    void check() const {
        if (!has_value()) detail::raise(error());
    }
    std::variant<T, Error> v_;
};

template <>
class Expected<void> {
public:
    Expected() = default;
    Expected(Error error) : e_(std::move(error)) {}

    bool has_value() const noexcept { return !e_; }
    explicit operator bool() const noexcept { return has_value(); }
    const Error &error() const noexcept { return *e_; }
    void value() const {
        if (e_) detail::raise(*e_);
    }

private:
    std::optional<Error> e_;
};

/// What a tool hands back: text or JSON for the model, content parts
/// (images, audio, resources), or an error message (a tool_error result). A
/// std::string or const char* converts to text.
class Output {
public:
    /// input_required: the tool asks its caller for input (see
    /// Output::input_required and Call::require_input).
    enum class Kind { text, json, error, parts, input_required };

    Output(std::string text) : kind_(Kind::text), content_(std::move(text)) {}
    Output(std::string_view text) : kind_(Kind::text), content_(text) {}
    Output(const char *text) : kind_(Kind::text), content_(text ? text : "") {}

    static Output text(std::string s) { return Output(Kind::text, std::move(s)); }
    /// Checked by capstan: text that is not JSON becomes a tool_error.
    static Output json(std::string s) { return Output(Kind::json, std::move(s)); }
    /// A failure the model reads (for code built without exceptions).
    static Output error(std::string message) { return Output(Kind::error, std::move(message)); }
    /// Content parts (CAPSTAN_CONTENT_PARTS): the JSON text of an array of MCP
    /// content blocks, e.g. [{"type":"text","text":"..."},{"type":"image",
    /// "data":"<base64>","mimeType":"image/png"}], or of an object
    /// {"content":[...],"structuredContent":{...}}. Checked when the call
    /// completes: bad base64, a wrong MIME type, an unknown block or data
    /// past RegistryOptions::max_result_bytes make the call a tool_error
    /// naming the part. Each provider format renders the parts its way
    /// (format_results, run_turn); Result::content holds their text.
    static Output parts(std::string json) { return Output(Kind::parts, std::move(json)); }
    /// Asks the caller for input instead of answering (MCP 2026-07-28 multi
    /// round-trip requests; Call::require_input, which says what is asked
    /// and who can answer): `requests_json` is a JSON object of requests by
    /// key, `state` the tool's own text, back in the next round's
    /// Call::input() "requestState". When capstan refuses (a caller that
    /// cannot be asked, a request that breaks a rule), the call ends as a
    /// tool_error with capstan's reason.
    static Output input_required(std::string requests_json, std::optional<std::string> state = std::nullopt) {
        Output out(Kind::input_required, std::move(requests_json));
        out.state_ = std::move(state);
        return out;
    }

    Kind kind() const noexcept { return kind_; }
    /// The text, JSON, message or parts; for input_required, the requests.
    const std::string &content() const noexcept { return content_; }
    /// input_required only: the tool's state (none: std::nullopt).
    const std::optional<std::string> &state() const noexcept { return state_; }

private:
    Output(Kind kind, std::string content) : kind_(kind), content_(std::move(content)) {}
    Kind kind_;
    std::string content_;
    std::optional<std::string> state_{};
};

/// Thrown by a tool to ask its caller for input instead of answering (MCP
/// 2026-07-28 multi round-trip requests): the wrapper completes the call
/// with Call::require_input(requests(), state()); when capstan refuses (a
/// caller that cannot be asked, such as a plain execute or a provider
/// turn, or a request that breaks a rule), the call ends as a tool_error
/// whose text is "the tool asked for input: " and capstan's reason.
///
///   reg.add(tool, [](capstan::Call &call) {
///       if (call.input().find("\"inputResponses\"") == std::string_view::npos)
///           throw capstan::InputRequired(R"({"name":{"method":"elicitation/create",
///               "params":{"message":"Your name?","requestedSchema":{"type":"object",
///               "properties":{"name":{"type":"string"}}}}}})", "asked-name");
///       ... read the answer in call.input() ...
///   });
///
/// Without exceptions: return Output::input_required(...) or call
/// Call::require_input.
class InputRequired : public std::runtime_error {
public:
    explicit InputRequired(std::string requests_json, std::optional<std::string> state = std::nullopt)
        : std::runtime_error("the tool asked its caller for input"), requests_(std::move(requests_json)),
          state_(std::move(state)) {}
    /// The requests by key, as JSON text.
    const std::string &requests() const noexcept { return requests_; }
    const std::optional<std::string> &state() const noexcept { return state_; }
    /// The same as a tool's return value.
    Output output() const { return Output::input_required(requests_, state_); }

private:
    std::string requests_;
    std::optional<std::string> state_;
};

/// A tool as the model sees it. Empty `parameters` means {"type":"object"}.
/// Its per-call timeout is `timeout` (std::chrono), or the older
/// `timeout_ms` (deprecated): `timeout` wins when it is non-zero; 0 means
/// none; a negative `timeout` is INVALID_ARGUMENT; past UINT32_MAX ms (49.7
/// days) it is capped there.
struct Tool {
    std::string name{};
    std::string description{};
    std::string parameters{};
    std::uint32_t timeout_ms = 0;        ///< deprecated: use `timeout`
    std::uint32_t max_output_chars = 0;  ///< 0: no cap
    Flags<ToolFlag> flags{};             ///< e.g. ToolFlag::serial | ToolFlag::main_thread
    std::chrono::milliseconds timeout{0};  ///< per-call timeout from the call's start; 0: none
    /// MCP metadata (capstan_tool_def.mcp_meta) as JSON text of an object
    /// with any of "title", "annotations" ({"title"?, "readOnlyHint"?,
    /// "destructiveHint"?, "idempotentHint"?, "openWorldHint"?}),
    /// "outputSchema" (an object schema) and "icons" ([{"src", "mimeType"?,
    /// "sizes"?, "theme"?}], at most 16). Served in MCP tools/list, given by
    /// tools_json(Format::mcp) and as "mcp" in Format::describe. With an
    /// outputSchema, a result whose structured content fails it becomes a
    /// tool_error listing the failing JSON Pointers. Empty: none. Bad JSON or
    /// a mistyped field: INVALID_ARGUMENT naming it; an outputSchema that
    /// does not compile: INVALID_SCHEMA.
    std::string mcp_meta{};
};

/// Options of execute/submit/run_turn/streams (capstan_exec_options).
/// Durations: 0 means none, negative ones are INVALID_ARGUMENT, past
/// UINT32_MAX ms they are capped there.
struct ExecOptions {
    Flags<ExecFlag> flags{};       ///< e.g. ExecFlag::sequential
    std::uint32_t limit = 0;       ///< calls running at once; 0: 8
    std::uint32_t timeout_ms = 0;  ///< deprecated: use `timeout`
    std::vector<std::string> approved_ids;
    /// Overrides every tool's timeout when > 0 (wins over timeout_ms).
    std::chrono::milliseconds timeout{0};
    /// Bounds every call of the batch from the moment it is submitted, waits
    /// included (for a worker, the approver, a pump); a call without a result
    /// by then ends Outcome::timeout saying what it waited for.
    std::chrono::milliseconds deadline{0};
};

/// Options of a registry (capstan_registry_options).
struct RegistryOptions {
    Flags<RegistryFlag> flags{};
    /// Bound on one result's content-part data (Output::parts), in decoded
    /// bytes of its image, audio and blob parts together; 0: 10 MiB.
    std::uint64_t max_result_bytes = 0;
};

/// One call's result, copied out of capstan.
struct Result {
    std::size_t index = 0;  ///< position of the call in its batch
    std::string id;
    std::string name;
    std::string content;  ///< the text for the model
    Outcome outcome = Outcome::ok;
    bool is_error = false;
    std::uint64_t duration_us = 0;
};

/// An event seen by the event hook. The views are valid during the hook only.
struct Event {
    EventKind kind;
    std::string_view tool;
    std::string_view id;
    std::size_t index;
    Outcome outcome;  ///< for finished
    std::uint64_t duration_us;  ///< for finished and timed_out; for progress and log, since the tool started
    double progress = 0;  ///< for progress: the value reported (grows with every report)
    double total = 0;     ///< for progress: the total, 0 when unknown
    std::string_view message{};  ///< for progress: the message, empty when none; for log: the log message
    LogLevel level = LogLevel::debug;  ///< for log: its level
};

/// Output of Registry::tools_export.
struct Export {
    std::string json;
    std::string report;  ///< [{"tool","pointer","message"}]
};

/// Options of Registry::search_json (capstan_search_options).
struct SearchOptions {
    Flags<SearchFlag> flags{};  ///< SearchFlag::regex: the query is a regular expression; else words (BM25)
    std::uint32_t limit = 0;    ///< at most this many results, 1 to 100; 0: 5
};

/// Options of Registry::add_search_tool (capstan_search_tool_options).
struct SearchToolOptions {
    std::string name{};         ///< empty: "tool_search"
    std::string description{};  ///< empty: capstan's default, telling the model how to search
    Flags<SearchFlag> flags{};  ///< how the model's query is read
    std::uint32_t limit = 0;    ///< tools listed per search, 1 to 100; 0: 5
};

/// What Registry::check_call found (capstan_registry_check_call).
struct CheckedCall {
    /// ok, invalid_arguments, unknown_tool or cancelled (registry closed).
    Outcome outcome = Outcome::ok;
    /// ok: the validated arguments, compact, defaults filled in; otherwise
    /// the result text a batch would give the call.
    std::string text;
};

/// What check_history found (capstan_format_check_history).
struct HistoryCheck {
    bool ok = false;     ///< no finding
    std::string report;  ///< {"ok","findings":[{"kind","entry","call_id","message","repair"?}]}
    std::optional<std::string> repaired;  ///< with HistoryFlag::repair: the history, repaired, in its own shape
};

namespace detail {

inline Result to_result(const capstan_result &r) {
    Result out;
    out.index = r.index;
    out.id = view(r.id, r.id_len);
    out.name = view(r.name, r.name_len);
    out.content = view(r.content, r.content_len);
    out.outcome = static_cast<Outcome>(r.outcome);
    out.is_error = r.is_error;
    out.duration_us = r.duration_us;
    return out;
}

struct FreeText {
    void operator()(char *p) const noexcept { capstan_string_free(p); }
};

/// Runs a C function with a (char **out, size_t *out_len) output and copies it.
template <class Fn>
Expected<std::string> text_out(Fn &&fn) {
    char *out = nullptr;
    std::size_t len = 0;
    capstan_status st = fn(&out, &len);
    if (st != CAPSTAN_OK) return last_error(st);
    std::unique_ptr<char, FreeText> guard(out);
    return out ? std::string(out, len) : std::string();
}

/// capstan_exec_options for the duration of one C call.
struct CExecOptions {
    capstan_exec_options raw{};
    std::vector<const char *> ids;
    const char *bad = nullptr;  ///< what is wrong with the options, if anything

    CExecOptions(const ExecOptions &o, std::uint32_t set, std::uint32_t clear) {
        raw.struct_size = sizeof raw;
        raw.flags = (o.flags.bits() | set) & ~clear;
        raw.limit = o.limit;
        bad = pick_ms(o.timeout, o.timeout_ms, "ExecOptions::timeout is negative", raw.timeout_ms);
        if (o.deadline.count() < 0) bad = "ExecOptions::deadline is negative";
        raw.deadline_ms = ms_up(o.deadline, UINT32_MAX);
        for (const std::string &id : o.approved_ids) ids.push_back(id.c_str());
        raw.approved_ids = ids.empty() ? nullptr : ids.data();
        raw.approved_count = ids.size();
    }
    Error invalid() const { return Error(CAPSTAN_ERR_INVALID_ARGUMENT, bad); }
    CExecOptions(const CExecOptions &) = delete;
    CExecOptions &operator=(const CExecOptions &) = delete;
};

/// While a tool or approver callback runs, the handle it was given. An
/// exception unwinding out of the callback destroys the Call/Approval that
/// owns the handle; that destructor then leaves the handle open (instead of
/// failing it with a generic message) and the callback's catch block
/// completes it with the exception's what().
struct Frame {
    const void *handle;
    int uncaught;
    bool left_open;
    Frame *prev;
};

inline Frame *&current_frame() noexcept {
    static thread_local Frame *frame = nullptr;
    return frame;
}

inline bool unwinding_out_of_callback(const void *handle) noexcept {
#if CAPSTAN_HPP_EXCEPTIONS
    Frame *f = current_frame();
    if (f && f->handle == handle && std::uncaught_exceptions() > f->uncaught) {
        f->left_open = true;
        return true;
    }
#else
    (void)handle;
#endif
    return false;
}

struct FrameScope {
    Frame frame;
    explicit FrameScope(const void *handle) noexcept {
#if CAPSTAN_HPP_EXCEPTIONS
        frame = Frame{handle, std::uncaught_exceptions(), false, current_frame()};
#else
        frame = Frame{handle, 0, false, current_frame()};
#endif
        current_frame() = &frame;
    }
    ~FrameScope() { current_frame() = frame.prev; }
    FrameScope(const FrameScope &) = delete;
    FrameScope &operator=(const FrameScope &) = delete;
};

/// "<prefix><what>" in a fixed buffer: building it cannot throw.
struct Message {
    char text[512];
    Message(const char *prefix, const char *what) noexcept {
        std::snprintf(text, sizeof text, "%s%s", prefix, what ? what : "");
    }
};

template <class>
inline constexpr bool always_false = false;

}  // namespace detail

/// One tool call in progress, owned by whoever holds this handle. Move it to
/// another thread to complete the call later. It completes the call exactly
/// once: the first of return_text/return_json/complete/fail wins, later ones
/// return ALREADY_COMPLETED. Destroying a Call that was not completed fails
/// the call ("... dropped without completing it"), so a call is never leaked.
/// id(), tool() and arguments() are copies: valid as long as this object.
class Call {
public:
    Call() noexcept = default;
    /// Takes the handle a capstan_tool_fn received (the wrapper does this).
    explicit Call(capstan_call *raw) : raw_(raw) {
        std::size_t n = 0;
        const char *p = capstan_call_id(raw, &n);
        id_.assign(detail::view(p, n));
        p = capstan_call_tool(raw, &n);
        tool_.assign(detail::view(p, n));
        p = capstan_call_arguments(raw, &n);
        arguments_.assign(detail::view(p, n));
    }
    Call(Call &&o) noexcept
        : raw_(std::exchange(o.raw_, nullptr)), id_(std::move(o.id_)), tool_(std::move(o.tool_)),
          arguments_(std::move(o.arguments_)), input_(std::move(o.input_)) {}
    Call &operator=(Call &&o) noexcept {
        if (this != &o) {
            abandon();
            raw_ = std::exchange(o.raw_, nullptr);
            id_ = std::move(o.id_);
            tool_ = std::move(o.tool_);
            arguments_ = std::move(o.arguments_);
            input_ = std::move(o.input_);
        }
        return *this;
    }
    Call(const Call &) = delete;
    Call &operator=(const Call &) = delete;
    ~Call() { abandon(); }

    /// True while this handle still has to complete the call.
    bool open() const noexcept { return raw_ != nullptr; }
    explicit operator bool() const noexcept { return open(); }

    std::string_view id() const noexcept { return id_; }
    std::string_view tool() const noexcept { return tool_; }
    /// Validated arguments as compact JSON, schema defaults filled in.
    std::string_view arguments() const noexcept { return arguments_; }
    /// True once the call should stop (timed out, batch cancelled, registry
    /// freed), and for a handle that is no longer open.
    bool cancelled() const noexcept { return raw_ ? capstan_call_cancelled(raw_) : true; }

    /// What the caller gave besides the arguments, and what it can be asked
    /// (capstan_call_input), as JSON text: {"canAsk": [...]} (the methods
    /// require_input may ask this caller for, of "elicitation/create",
    /// "sampling/createMessage" and "roots/list"; empty unless an MCP client
    /// calls a served tool, not as a task) and, in a later round,
    /// "inputResponses" (the client's answers by the keys the tool asked
    /// with, as the client sent them: check them) and "requestState" (the
    /// tool's own state from the round before; capstan checked it came back
    /// untampered). Copied on first use, then valid as long as this object;
    /// empty when first read after the call was completed.
    std::string_view input() const {
        if (!input_ && raw_) {
            std::size_t n = 0;
            const char *p = capstan_call_input(raw_, &n);
            input_.emplace(detail::view(p, n));
        }
        return input_ ? std::string_view(*input_) : std::string_view();
    }

    /// Completes the call asking its caller for input (MCP 2026-07-28 multi
    /// round-trip requests; capstan_call_require_input): `requests_json` is
    /// a JSON object of requests by key, each {"method": "elicitation/create"
    /// | "sampling/createMessage" | "roots/list", "params": {...}} (at most
    /// 32); `state` (at most 64 KiB) is the tool's own, sealed by capstan on
    /// its way through the client. At least one request or a state. The
    /// client answers and the tool is called again, input() then holding the
    /// answers and the state. A refusal leaves the call open (this handle
    /// still has to complete it): INVALID_ARGUMENT for requests that are not
    /// JSON or break a rule (the message names the key), UNSUPPORTED when
    /// the caller cannot be asked or lacks a method's capability (input()'s
    /// "canAsk"), INVALID_UTF8. After a timeout or cancellation:
    /// ALREADY_COMPLETED, and the call is over.
    Expected<void> require_input(std::string_view requests_json, std::optional<std::string_view> state = std::nullopt) {
        if (!raw_) return Error(CAPSTAN_ERR_ALREADY_COMPLETED, "this capstan::Call was already completed or moved from");
        capstan_status st = capstan_call_require_input(raw_, detail::ptr(requests_json), requests_json.size(),
                                                       state ? detail::ptr(*state) : nullptr, state ? state->size() : 0);
        if (st == CAPSTAN_OK) {
            raw_ = nullptr;
            return {};
        }
        Error refused = detail::last_error(st);
        if (st == CAPSTAN_ERR_ALREADY_COMPLETED || st == CAPSTAN_ERR_STALE_HANDLE) raw_ = nullptr;
        return refused;
    }

    Expected<void> return_text(std::string_view text) {
        return finish([&](capstan_call *c) { return capstan_call_return(c, CAPSTAN_CONTENT_TEXT, detail::ptr(text), text.size()); });
    }
    Expected<void> return_json(std::string_view json) {
        return finish([&](capstan_call *c) { return capstan_call_return(c, CAPSTAN_CONTENT_JSON, detail::ptr(json), json.size()); });
    }
    /// Content parts (see Output::parts). Parts that fail capstan's checks
    /// complete the call as a tool_error naming the part, and this returns
    /// CAPSTAN_ERR_INVALID_CONTENT.
    Expected<void> return_parts(std::string_view parts_json) {
        return finish(
            [&](capstan_call *c) { return capstan_call_return(c, CAPSTAN_CONTENT_PARTS, detail::ptr(parts_json), parts_json.size()); });
    }
    Expected<void> fail(std::string_view message) {
        return finish([&](capstan_call *c) { return capstan_call_fail(c, detail::ptr(message), message.size()); });
    }
    Expected<void> complete(const Output &out) {
        switch (out.kind()) {
        case Output::Kind::json: return return_json(out.content());
        case Output::Kind::error: return fail(out.content());
        case Output::Kind::parts: return return_parts(out.content());
        case Output::Kind::input_required: {
            std::optional<std::string_view> state;
            if (out.state()) state = *out.state();
            Expected<void> asked = require_input(out.content(), state);
            // Refused: the tool has returned, so the call ends saying why.
            if (!asked && open()) (void)fail(std::string("the tool asked for input: ") + asked.error().what());
            return asked;
        }
        case Output::Kind::text: break;
        }
        return return_text(out.content());
    }

    /// Reports progress (capstan_call_progress): `progress` so far, out of
    /// `total` (0 = unknown), with `message` (empty = none). It reaches the
    /// registry's event hook as EventKind::progress, on this thread before
    /// this returns, and an MCP client that asked for progress as
    /// notifications/progress. Any thread, any number of times while the
    /// call is open. `progress` must be finite, not negative and above the
    /// previous report, `total` finite and not negative, `message` at most
    /// 4096 bytes: else INVALID_ARGUMENT and nothing is reported;
    /// INVALID_UTF8 for a message that is not UTF-8; ALREADY_COMPLETED once
    /// the call has its result (timed out, cancelled) or this handle
    /// completed it.
    Expected<void> progress(double progress, double total = 0, std::string_view message = {}) const {
        if (!raw_) return Error(CAPSTAN_ERR_ALREADY_COMPLETED, "this capstan::Call was already completed or moved from");
        capstan_status st =
            capstan_call_progress(raw_, progress, total, message.empty() ? nullptr : message.data(), message.size());
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    /// Sends a log message (capstan_call_log) at `level`. It reaches the
    /// registry's event hook as EventKind::log, on this thread before this
    /// returns, and an MCP client that asked for logs at `level` or below as
    /// notifications/message (logger: the tool's name). Any thread, any
    /// number of times while the call is open. INVALID_ARGUMENT for a level
    /// that is not a LogLevel or a message over 64 KiB (nothing is sent);
    /// INVALID_UTF8 for a message that is not UTF-8; ALREADY_COMPLETED once
    /// the call has its result (timed out, cancelled) or this handle
    /// completed it.
    Expected<void> log(LogLevel level, std::string_view message) const {
        if (!raw_) return Error(CAPSTAN_ERR_ALREADY_COMPLETED, "this capstan::Call was already completed or moved from");
        capstan_status st = capstan_call_log(raw_, static_cast<capstan_log_level>(level),
                                             message.data() ? message.data() : "", message.size());
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    /// The C handle (for capstan_* functions not wrapped here); NULL once completed.
    capstan_call *get() const noexcept { return raw_; }

private:
    template <class Fn>
    Expected<void> finish(Fn &&fn) {
        if (!raw_) return Error(CAPSTAN_ERR_ALREADY_COMPLETED, "this capstan::Call was already completed or moved from");
        // Released whatever capstan answers: a refused completion (the call
        // timed out or was cancelled) means the call is over all the same.
        capstan_status st = fn(std::exchange(raw_, nullptr));
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }
    void abandon() noexcept {
        if (raw_ && !detail::unwinding_out_of_callback(raw_))
            capstan_call_fail(raw_, "the tool dropped its capstan::Call without completing it", CAPSTAN_NTS);
        raw_ = nullptr;
    }

    capstan_call *raw_ = nullptr;
    std::string id_, tool_, arguments_;
    mutable std::optional<std::string> input_;
};

/// A call waiting for approval, owned by whoever holds this handle (the
/// approver may move it to a UI thread and decide later). Decides exactly
/// once; destroying an undecided Approval denies the call.
class Approval {
public:
    Approval() noexcept = default;
    explicit Approval(capstan_approval *raw) : raw_(raw) {
        std::size_t n = 0;
        const char *p = capstan_approval_tool(raw, &n);
        tool_.assign(detail::view(p, n));
        p = capstan_approval_id(raw, &n);
        id_.assign(detail::view(p, n));
        p = capstan_approval_arguments(raw, &n);
        arguments_.assign(detail::view(p, n));
    }
    Approval(Approval &&o) noexcept
        : raw_(std::exchange(o.raw_, nullptr)), tool_(std::move(o.tool_)), id_(std::move(o.id_)),
          arguments_(std::move(o.arguments_)) {}
    Approval &operator=(Approval &&o) noexcept {
        if (this != &o) {
            abandon();
            raw_ = std::exchange(o.raw_, nullptr);
            tool_ = std::move(o.tool_);
            id_ = std::move(o.id_);
            arguments_ = std::move(o.arguments_);
        }
        return *this;
    }
    Approval(const Approval &) = delete;
    Approval &operator=(const Approval &) = delete;
    ~Approval() { abandon(); }

    bool open() const noexcept { return raw_ != nullptr; }
    explicit operator bool() const noexcept { return open(); }
    std::string_view tool() const noexcept { return tool_; }
    std::string_view id() const noexcept { return id_; }
    std::string_view arguments() const noexcept { return arguments_; }

    Expected<void> approve() { return decide(true, std::string_view()); }
    /// The model reads `reason` (empty: capstan's own text).
    Expected<void> deny(std::string_view reason = std::string_view()) { return decide(false, reason); }

private:
    Expected<void> decide(bool yes, std::string_view reason) {
        if (!raw_) return Error(CAPSTAN_ERR_ALREADY_COMPLETED, "this capstan::Approval was already decided or moved from");
        capstan_approval *a = std::exchange(raw_, nullptr);
        capstan_status st = reason.empty() ? capstan_approval_decide(a, yes, nullptr, 0)
                                           : capstan_approval_decide(a, yes, reason.data(), reason.size());
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }
    void abandon() noexcept {
        if (raw_ && !detail::unwinding_out_of_callback(raw_))
            capstan_approval_decide(raw_, false, "the host dropped the approval request without a decision", CAPSTAN_NTS);
        raw_ = nullptr;
    }

    capstan_approval *raw_ = nullptr;
    std::string tool_, id_, arguments_;
};

namespace detail {

/// Calls a tool's callable with what it takes: Call& or Call (it completes
/// the call itself, now or later) or std::string_view arguments (its return
/// value, an Output or anything that converts to one, completes the call).
template <class F>
void invoke_tool(F &f, Call &call) {
    if constexpr (std::is_invocable_v<F &, Call &>) {
        static_assert(std::is_void_v<std::invoke_result_t<F &, Call &>>,
                      "a tool taking capstan::Call completes the call itself and returns void");
        f(call);
    } else if constexpr (std::is_invocable_v<F &, Call &&>) {
        static_assert(std::is_void_v<std::invoke_result_t<F &, Call &&>>,
                      "a tool taking capstan::Call completes the call itself and returns void");
        f(std::move(call));
    } else if constexpr (std::is_invocable_v<F &, std::string_view>) {
        using R = std::invoke_result_t<F &, std::string_view>;
        static_assert(std::is_constructible_v<Output, R>,
                      "a tool taking std::string_view returns capstan::Output, std::string or const char *");
        Output out(f(call.arguments()));
        (void)call.complete(out);  // refused only when the call already timed out: nothing to do
    } else {
        static_assert(detail::always_false<F>,
                      "a tool is callable as void(capstan::Call&), void(capstan::Call) or R(std::string_view)");
    }
}

template <class F>
struct ToolBox {
    F f;

    static void run(void *user_data, capstan_call *raw) noexcept {
        auto *self = static_cast<ToolBox *>(user_data);
        FrameScope scope(raw);
#if CAPSTAN_HPP_EXCEPTIONS
        bool handed = false;
        try {
            Call call(raw);
            handed = true;
            invoke_tool(self->f, call);
        } catch (const InputRequired &e) {
            if (!handed || scope.frame.left_open) ask(raw, e);
        } catch (const std::exception &e) {
            if (!handed || scope.frame.left_open) {
                Message m("the tool threw: ", e.what());
                capstan_call_fail(raw, m.text, CAPSTAN_NTS);
            }
        } catch (...) {
            if (!handed || scope.frame.left_open)
                capstan_call_fail(raw, "the tool threw an exception that is not a std::exception", CAPSTAN_NTS);
        }
#else
        Call call(raw);
        invoke_tool(self->f, call);
#endif
    }
    static void destroy(void *user_data) noexcept { delete static_cast<ToolBox *>(user_data); }

    /// A thrown InputRequired: asks; a refusal (the call still open) ends
    /// the call with capstan's reason.
    static void ask(capstan_call *raw, const InputRequired &e) noexcept {
        const std::optional<std::string> &state = e.state();
        capstan_status st = capstan_call_require_input(raw, ptr(e.requests()), e.requests().size(),
                                                       state ? ptr(*state) : nullptr, state ? state->size() : 0);
        if (st == CAPSTAN_OK || st == CAPSTAN_ERR_ALREADY_COMPLETED || st == CAPSTAN_ERR_STALE_HANDLE) return;
        char why[400];
        if (capstan_error_message(why, sizeof why) == 0) std::snprintf(why, sizeof why, "%s", capstan_status_name(st));
        Message m("the tool asked for input: ", why);
        capstan_call_fail(raw, m.text, CAPSTAN_NTS);
    }
};

/// State kept for a hook (approver, event hook, notifier).
struct HookBase {
    virtual ~HookBase() = default;
};
inline void destroy_hook(void *user_data) noexcept { delete static_cast<HookBase *>(user_data); }

template <class F>
struct ApproverBox : HookBase {
    F f;
    explicit ApproverBox(F fn) : f(std::move(fn)) {}

    static void invoke(F &f, Approval &a) {
        if constexpr (std::is_invocable_v<F &, Approval &>) {
            using R = std::invoke_result_t<F &, Approval &>;
            if constexpr (std::is_same_v<R, bool>) {
                bool yes = f(a);
                if (a.open()) (void)(yes ? a.approve() : a.deny());
            } else {
                static_assert(std::is_void_v<R>, "an approver returns bool or void (then it decides itself)");
                f(a);
            }
        } else if constexpr (std::is_invocable_v<F &, Approval &&>) {
            static_assert(std::is_void_v<std::invoke_result_t<F &, Approval &&>>,
                          "an approver taking capstan::Approval by value decides itself and returns void");
            f(std::move(a));
        } else {
            static_assert(always_false<F>, "an approver is callable as bool(capstan::Approval&) or void(capstan::Approval)");
        }
    }

    static void run(void *user_data, capstan_approval *raw) noexcept {
        auto *self = static_cast<ApproverBox *>(user_data);
        FrameScope scope(raw);
#if CAPSTAN_HPP_EXCEPTIONS
        bool handed = false;
        try {
            Approval a(raw);
            handed = true;
            invoke(self->f, a);
        } catch (const std::exception &e) {
            if (!handed || scope.frame.left_open) {
                Message m("the approver threw: ", e.what());
                capstan_approval_decide(raw, false, m.text, CAPSTAN_NTS);
            }
        } catch (...) {
            if (!handed || scope.frame.left_open)
                capstan_approval_decide(raw, false, "the approver threw an exception", CAPSTAN_NTS);
        }
#else
        Approval a(raw);
        invoke(self->f, a);
#endif
    }
};

template <class F>
struct EventBox : HookBase {
    F f;
    explicit EventBox(F fn) : f(std::move(fn)) {}
    static void run(void *user_data, const capstan_event *e) noexcept {
        if (!e) return;
        Event ev{static_cast<EventKind>(e->kind), view(e->tool, e->tool_len), view(e->id, e->id_len), e->index,
                 static_cast<Outcome>(e->outcome), e->duration_us, 0, 0, {}};
        if (ev.kind == EventKind::progress) {
            ev.progress = e->progress;
            ev.total = e->total;
            ev.message = view(e->message, e->message_len);
        }
        if (ev.kind == EventKind::log) {
            ev.level = static_cast<LogLevel>(e->level);
            ev.message = view(e->message, e->message_len);
        }
#if CAPSTAN_HPP_EXCEPTIONS
        try {
            static_cast<EventBox *>(user_data)->f(static_cast<const Event &>(ev));
        } catch (...) {
            // An observer's failure must not change the call it observes.
        }
#else
        static_cast<EventBox *>(user_data)->f(static_cast<const Event &>(ev));
#endif
    }
};

template <class F>
struct NotifyBox : HookBase {
    F f;
    explicit NotifyBox(F fn) : f(std::move(fn)) {}
    static void run(void *user_data) noexcept {
#if CAPSTAN_HPP_EXCEPTIONS
        try {
            static_cast<NotifyBox *>(user_data)->f();
        } catch (...) {
        }
#else
        static_cast<NotifyBox *>(user_data)->f();
#endif
    }
};

// ---- The three hook setters of the C API, in one place. ---------------------
// capstan owns each hook box: it calls `destroy` exactly once, after the
// hook's last invocation has returned (on replacement, removal, close or
// free), or before the setter returns when the setter fails.
inline capstan_status c_set_approver(capstan_registry *r, capstan_approver_fn fn, void *ud, capstan_destroy_fn destroy) {
    return capstan_registry_set_approver(r, fn, ud, destroy);
}
inline capstan_status c_set_event_hook(capstan_registry *r, capstan_event_fn fn, void *ud, capstan_destroy_fn destroy) {
    return capstan_registry_set_event_hook(r, fn, ud, destroy);
}
inline capstan_status c_set_notify(capstan_registry *r, capstan_notify_fn fn, void *ud, capstan_destroy_fn destroy) {
    return capstan_registry_set_notify(r, fn, ud, destroy);
}
// ------------------------------------------------------------------------------

/// A result callback of a batch. The callable must not throw: it runs on
/// capstan's threads, where an exception has nowhere to go (std::terminate,
/// as for a std::thread function).
struct SinkBase {
    virtual ~SinkBase() = default;
};

template <class F>
struct Sink : SinkBase {
    F f;
    explicit Sink(F fn) : f(std::move(fn)) {}
    static void deliver(void *user_data, const capstan_result *r) noexcept {
        if (!r) return;  // the end of the batch: Batch::wait/done report it
        Result res = to_result(*r);
        static_cast<Sink *>(user_data)->f(static_cast<const Result &>(res));
    }
};

}  // namespace detail

class Registry;

/// A batch started with Registry::submit or submit_polled. Destroying it
/// frees it: the batch's calls still finish inside capstan, but no result
/// callback runs after the destructor returns.
class Batch {
public:
    Batch() noexcept = default;
    Batch(Batch &&o) noexcept
        : raw_(std::exchange(o.raw_, nullptr)), sink_(std::move(o.sink_)), drained_(std::exchange(o.drained_, false)) {}
    Batch &operator=(Batch &&o) noexcept {
        if (this != &o) {
            reset();
            raw_ = std::exchange(o.raw_, nullptr);
            sink_ = std::move(o.sink_);
            drained_ = std::exchange(o.drained_, false);
        }
        return *this;
    }
    Batch(const Batch &) = delete;
    Batch &operator=(const Batch &) = delete;
    ~Batch() { reset(); }

    /// Waits until every result was handed over (callback delivery) or queued
    /// (poll delivery), up to timeout_ms (capstan::forever: no limit). True
    /// when done. Not from inside the batch's own result callback.
    bool wait(std::uint32_t timeout_ms = forever) const noexcept {
        return raw_ && capstan_batch_wait(raw_, timeout_ms) == CAPSTAN_OK;
    }
    /// The same for a std::chrono duration: rounded up to whole milliseconds
    /// (a positive duration waits at least 1 ms), zero or negative just
    /// checks, past UINT32_MAX - 1 ms it is capped there (only wait()
    /// without a limit waits forever).
    template <class Rep, class Period>
    bool wait(std::chrono::duration<Rep, Period> timeout) const noexcept {
        return wait(detail::ms_up(timeout, UINT32_MAX - 1));
    }
    bool done() const noexcept { return raw_ && capstan_batch_wait(raw_, 0) == CAPSTAN_OK; }
    /// Calls not started end `cancelled`; running ones see Call::cancelled().
    void cancel() noexcept { capstan_batch_cancel(raw_); }

    /// Poll delivery: hands up to `max` queued results to on_result(const
    /// Result&) on this thread, oldest first; returns how many. An exception
    /// from on_result propagates (the result it was given counts as handed over).
    template <class F>
    std::size_t poll(F &&on_result, std::size_t max = SIZE_MAX) {
        if (!raw_) return 0;
        using Fn = std::remove_reference_t<F>;
        struct Ctx {
            Fn *f;
            bool *drained;
#if CAPSTAN_HPP_EXCEPTIONS
            std::exception_ptr error{};
#endif
        };
        Ctx ctx{&on_result, &drained_};
        capstan_result_fn tramp = [](void *ud, const capstan_result *r) {
            auto *c = static_cast<Ctx *>(ud);
            if (!r) {
                *c->drained = true;
                return;
            }
#if CAPSTAN_HPP_EXCEPTIONS
            if (c->error) return;
            try {
                Result res = detail::to_result(*r);
                (*c->f)(static_cast<const Result &>(res));
            } catch (...) {
                c->error = std::current_exception();
            }
#else
            Result res = detail::to_result(*r);
            (*c->f)(static_cast<const Result &>(res));
#endif
        };
#if CAPSTAN_HPP_EXCEPTIONS
        // One result per C call, so that an exception is rethrown before any
        // further result is taken off the queue.
        std::size_t n = 0;
        while (n < max) {
            std::size_t got = capstan_batch_poll(raw_, tramp, &ctx, 1);
            n += got;
            if (ctx.error) std::rethrow_exception(ctx.error);
            if (got == 0) break;
        }
        return n;
#else
        return capstan_batch_poll(raw_, tramp, &ctx, max);
#endif
    }

    /// Poll delivery: the queued results (up to `max`), oldest first.
    std::vector<Result> poll(std::size_t max = SIZE_MAX) {
        std::vector<Result> out;
        poll([&out](const Result &r) { out.push_back(r); }, max);
        return out;
    }

    /// Poll delivery: true once poll() handed over the batch's last result.
    bool drained() const noexcept { return drained_; }

    capstan_batch *get() const noexcept { return raw_; }

private:
    friend class Registry;
    Batch(capstan_batch *raw, std::unique_ptr<detail::SinkBase> sink) noexcept : raw_(raw), sink_(std::move(sink)) {}
    void reset() noexcept {
        if (raw_) capstan_batch_free(std::exchange(raw_, nullptr));
        sink_.reset();  // after capstan_batch_free: no callback uses it any more
        drained_ = false;
    }

    capstan_batch *raw_ = nullptr;
    std::unique_ptr<detail::SinkBase> sink_;
    bool drained_ = false;
};

/// What a stream hands over as it reads (Registry::stream). Either may be
/// empty. Neither may throw (std::terminate: they run inside capstan).
struct StreamCallbacks {
    /// A piece of the model's text (whole UTF-8 characters), on the thread
    /// feeding the stream, inside feed() (or finish(), for the last lines).
    std::function<void(std::string_view)> on_text;
    /// A call's result as it ends (Result::index: the call's position in the
    /// response), on the thread that finished it, possibly several at once.
    std::function<void(const Result &)> on_result;
};

namespace detail {
struct StreamSink {
    StreamCallbacks callbacks;
    static void text(void *ud, const char *p, std::size_t n) noexcept {
        auto *self = static_cast<StreamSink *>(ud);
        if (self->callbacks.on_text) self->callbacks.on_text(view(p, n));
    }
    static void result(void *ud, const capstan_result *r) noexcept {
        auto *self = static_cast<StreamSink *>(ud);
        if (!r || !self->callbacks.on_result) return;  // NULL: the stream's last callback
        Result res = to_result(*r);
        self->callbacks.on_result(static_cast<const Result &>(res));
    }
};
}  // namespace detail

/// A streamed model response read as it arrives (capstan_stream_*): feed()
/// the body's bytes split anywhere, then finish() for the turn. Move-only;
/// one thread at a time may feed or finish it, cancel() may come from any
/// thread. Destroying it frees it: no callback runs after the destructor
/// (or finish()) returned. It keeps what it needs of its Registry: calls fed
/// after the Registry was destroyed end Outcome::cancelled.
class Stream {
public:
    Stream() noexcept = default;
    Stream(Stream &&o) noexcept : raw_(std::exchange(o.raw_, nullptr)), sink_(std::move(o.sink_)) {}
    Stream &operator=(Stream &&o) noexcept {
        if (this != &o) {
            reset();
            raw_ = std::exchange(o.raw_, nullptr);
            sink_ = std::move(o.sink_);
        }
        return *this;
    }
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;
    ~Stream() { reset(); }

    /// The next bytes of the response body. Errors are sticky (every later
    /// feed and the finish return the same): PROVIDER_ERROR (the provider's
    /// error event, fields in Error::provider()), INVALID_RESPONSE,
    /// STREAM_TOO_LARGE; WRONG_CONTEXT after finish or cancel.
    [[nodiscard]] Expected<void> try_feed(std::string_view bytes) {
        if (!raw_) return moved_from();
        capstan_status st = capstan_stream_feed(raw_, bytes.data(), bytes.size());
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }
    /// The body ended: runs what is left, waits for every result and returns
    /// {"calls","results","messages","text","stop_reason","cancelled","cut_calls"}
    /// ("messages": what run_turn returns). Once only; STREAM_TRUNCATED when
    /// the body ended before the response's closing event.
    [[nodiscard]] Expected<std::string> try_finish() {
        if (!raw_) return moved_from();
        return detail::text_out([&](char **out, std::size_t *len) { return capstan_stream_finish(raw_, out, len); });
    }
    /// No call starts any more; running calls see Call::cancelled().
    void cancel() noexcept { capstan_stream_cancel(raw_); }

    capstan_stream *get() const noexcept { return raw_; }

#if CAPSTAN_HPP_EXCEPTIONS
    void feed(std::string_view bytes) { try_feed(bytes).value(); }
    std::string finish() { return try_finish().value(); }
#endif

private:
    friend class Registry;
    Stream(capstan_stream *raw, std::unique_ptr<detail::StreamSink> sink) noexcept : raw_(raw), sink_(std::move(sink)) {}
    static Error moved_from() { return Error(CAPSTAN_ERR_NULL_PARAMETER, "this capstan::Stream was moved from"); }
    void reset() noexcept {
        if (raw_) capstan_stream_free(std::exchange(raw_, nullptr));
        sink_.reset();  // after the free: no callback uses it any more
    }

    capstan_stream *raw_ = nullptr;
    std::unique_ptr<detail::StreamSink> sink_;
};

// ---- MCP: serving a registry's tools, mounting a server's tools ----

/// McpMountOptions::max_reconnects: the mount drops for good when its
/// connection dies.
inline constexpr std::uint32_t never_reconnect = CAPSTAN_MCP_RECONNECT_NEVER;

/// Options of Registry::serve_mcp and serve_mcp_stdio
/// (capstan_mcp_server_options). Empty strings and zero durations mean
/// capstan's defaults; negative durations are INVALID_ARGUMENT.
struct McpServerOptions {
    /// HTTP: the IP:PORT to bind; empty: 127.0.0.1 and a port the OS picks
    /// (read it with McpServer::url). A non-loopback address exposes the
    /// tools to the network: set bearer_token and allowed_hosts then.
    std::string address{};
    /// HTTP: when set, every request must carry "Authorization: Bearer <token>" (else 401).
    std::string bearer_token{};
    /// HTTP: browser origins accepted besides loopback ones, e.g. "https://app.example.com:443" (others: 403).
    std::vector<std::string> allowed_origins{};
    /// HTTP: Host values accepted besides localhost, 127.0.0.1 and ::1 (others: 403).
    std::vector<std::string> allowed_hosts{};
    /// JSON object {"NAME": {"title", "annotations", "outputSchema"}}
    /// replacing fields of the tools' own Tool::mcp_meta (only listed, not enforced).
    std::string tools_meta{};
    std::string name{};  ///< serverInfo.name; empty: "capstan"
    std::uint32_t max_body_bytes = 0;  ///< HTTP: larger POST bodies get 413; 0: 4 MiB
    /// Bounds every call from its arrival, approval wait included; 0: the tools' own timeouts.
    std::chrono::milliseconds call_timeout{0};
    /// How long stopping waits for calls in flight after cancelling them; 0: 5 s.
    std::chrono::milliseconds stop_timeout{0};
};

/// An enterprise identity provider (McpOAuth::identity_provider; the
/// oauth_idp_ fields of capstan_mcp_mount_options), where the user's ID
/// token from McpOAuth::assertion is exchanged for an ID-JAG
/// (enterprise-managed authorization, SEP-990). issuer, token_endpoint and
/// client_id go together (INVALID_ARGUMENT otherwise).
struct McpIdentityProvider {
    std::string issuer{};          ///< its issuer identifier (the ID-JAG's iss)
    std::string token_endpoint{};  ///< where the ID token is exchanged
    std::string client_id{};       ///< the host's client there
    std::string client_secret{};   ///< that client's secret; empty: a public client
};

/// OAuth 2.1 for a mount over HTTP whose server asks for authorization
/// (McpMountOptions::oauth; the oauth_ fields of capstan_mcp_mount_options).
/// capstan runs the MCP authorization flow (discovery, client registration,
/// PKCE, the code exchange, refresh, a step-up on insufficient_scope); the
/// host does what only it can. The callbacks are copied into the mount and
/// destroyed exactly once, after their last call returned, once the mount
/// lets go of them (when the McpMount is unmounted, or when mount_mcp
/// fails). They run on capstan's MCP threads, possibly on several at once:
/// make them safe to call so.
struct McpOAuth {
    /// Shows `authorization_url` to the user (opens a browser, prints it),
    /// waits for the authorization server to send them to `redirect_uri`
    /// and returns that whole URL, with its code and state (at most
    /// CAPSTAN_MCP_REDIRECT_MAX bytes). An empty string refuses (mounting
    /// then fails with MCP_CONNECT saying so); so does an exception, whose
    /// what() the mount's Error then carries. May block, up to the mount's
    /// connect_timeout. Empty: no OAuth unless tokens_load gives tokens.
    std::function<std::string(std::string_view authorization_url)> authorize{};
    std::string redirect_uri{};  ///< where the user is sent back, e.g. "http://127.0.0.1:8976/callback"; required with authorize
    std::string client_id{};            ///< a client registered beforehand; empty: capstan registers one
    std::string client_secret{};        ///< the secret of client_id, for a confidential client
    std::string client_metadata_url{};  ///< HTTPS URL of the host's client-id metadata document
    std::string scopes{};               ///< space-separated; empty: the server's choice
    /// The JSON text tokens_save kept last; "" when none (also the answer
    /// for text past CAPSTAN_MCP_TOKENS_MAX bytes, or an exception).
    /// Empty: tokens live in memory for the mount's life.
    std::function<std::string()> tokens_load{};
    /// Keeps the tokens (JSON text with the access and refresh tokens and
    /// the client id: a secret, keep it as one); "" means forget them.
    std::function<void(std::string_view json)> tokens_save{};

    // Without authorize (no user to ask) the mount still gets tokens: with
    // client_id and client_secret or client_key (the client-credentials
    // grant), or with assertion (the JWT-bearer grant). DPoP (RFC 9449) is
    // automatic when the authorization server offers ES256.

    /// PEM text of client_id's private key (PKCS#8, an EC P-256 key:
    /// ES256): the client authenticates at the token endpoint with a signed
    /// assertion (private_key_jwt) instead of client_secret. Text that is
    /// not such a key, or a key without client_id, is INVALID_ARGUMENT
    /// naming opts.oauth_client_key.
    std::string client_key{};
    /// The issuer identifier of the authorization server client_secret or
    /// client_key belong to: they are sent there only. Empty: only to an
    /// authorization server of the MCP server's own origin (another one
    /// fails the mount with MCP_CONNECT, and nothing is sent).
    std::string client_issuer{};
    /// Returns a JWT the host got elsewhere for `audience`. Without
    /// identity_provider it is the workload's identity token (SEP-1933),
    /// sent in the JWT-bearer grant (RFC 7523) to the server's
    /// authorization server, whose issuer is `audience`; with it, the
    /// user's ID token (`audience` is identity_provider->issuer),
    /// exchanged there for an ID-JAG sent in the JWT-bearer grant as
    /// client_id. An empty string refuses (mounting then fails with
    /// MCP_CONNECT saying so); so does an exception, whose what() the
    /// mount's Error then carries, or a JWT longer than
    /// CAPSTAN_MCP_ASSERTION_MAX. A grant the server refuses fails the
    /// mount with the server's error, and is not tried again. Called for
    /// each authorization; used when authorize is empty.
    std::function<std::string(std::string_view audience)> assertion{};
    /// Enterprise-managed authorization (SEP-990): needs assertion.
    std::optional<McpIdentityProvider> identity_provider{};
};

/// The host's answers to what a mounted server asks while running one of
/// its tools (McpMountOptions::input; the input_ fields of
/// capstan_mcp_mount_options): a form for the user, a completion of the
/// host's model, the host's roots. A 2026-07-28 server asks with an
/// InputRequiredResult (the mount has every request answered, then calls
/// the tool again with the answers, up to 10 rounds a call); an older
/// server (2025-11-25) sends its requests mid-call. `answer` is copied into
/// the mount and destroyed exactly once, after its last call returned, once
/// the mount lets go of it (when the McpMount is unmounted, or when
/// mount_mcp fails). It runs on capstan's MCP threads, possibly on several
/// at once: make it safe to call so.
struct McpInput {
    /// Returns the method's result as JSON text: an ElicitResult
    /// (`{"action":"accept","content":{...}}`, "decline" or "cancel"; the
    /// requested schema's defaults are filled in for fields an accepted
    /// form leaves out), a CreateMessageResult or a ListRootsResult, at most
    /// CAPSTAN_MCP_INPUT_ANSWER_MAX (1 MiB). `tool` is the mounted tool's
    /// local name, empty for an older server's request (made mid-call, it
    /// names no call); `params` the request's params as JSON text. An empty
    /// string, an exception, a longer answer or one that is not the
    /// method's result gives no answer: the call ends as a tool_error
    /// saying so ("the host gave no answer to ..."). May block (a user
    /// answering): capstan stops waiting when the call ends (for an older
    /// server's request, after an hour); it must not unmount the mount.
    std::function<std::string(std::string_view tool, std::string_view method, std::string_view params)> answer{};
    /// What `answer` answers, declared to the server as the client's
    /// capabilities: at least one (none, or methods without `answer`, is
    /// INVALID_ARGUMENT).
    Flags<McpInputMethod> methods{};
};

/// Options of Registry::mount_mcp (capstan_mcp_mount_options): set
/// `command` (a server speaking MCP on stdio, started as a child process)
/// or `url` (streamable HTTP), not both.
struct McpMountOptions {
    std::vector<std::string> command{};  ///< program (looked up in PATH) and arguments
    std::vector<std::string> env{};      ///< "NAME=VALUE" added to the child's inherited environment
    std::string cwd{};                   ///< the child's working directory; empty: ours
    std::string url{};                   ///< e.g. "http://127.0.0.1:3001/mcp"
    std::vector<std::string> headers{};  ///< "Name: value" sent with every HTTP request
    std::string prefix{};                ///< put before every remote tool name ("fs_" mounts read as fs_read)
    std::chrono::milliseconds connect_timeout{0};    ///< connecting plus the first tools/list; 0: 10 s
    std::chrono::milliseconds call_timeout{0};       ///< every mounted tool's own timeout; 0: none
    std::chrono::milliseconds reconnect_backoff{0};  ///< wait before the first reconnect, doubled after each; 0: 200 ms
    std::uint32_t max_reconnects = 0;  ///< in a row after the connection died; 0: 5; never_reconnect: never
    std::string protocol_version{};    ///< the MCP version to ask for; empty: the newest capstan speaks
    std::optional<McpOAuth> oauth{};   ///< url only: OAuth for a server that asks for it
    std::optional<McpInput> input{};   ///< answers what the server asks while running a tool; none: nothing answered
};

namespace detail {

/// The C strings of one options struct, kept for one C call.
struct CStrings {
    std::vector<std::unique_ptr<std::string>> joined;      // stable c_str()s
    std::vector<std::vector<const char *>> lists;  // each data() stays put when moved
    const char *bad = nullptr;

    static const char *str(const std::string &s) noexcept { return s.empty() ? nullptr : s.c_str(); }
    bool check(const std::string &s) {
        if (has_nul(s)) bad = "MCP options must not contain NUL bytes";
        return bad == nullptr;
    }
    /// A comma-separated list (capstan's form); entries must not hold commas.
    const char *join(const std::vector<std::string> &items) {
        std::string out;
        for (const std::string &item : items) {
            if (item.find(',') != std::string::npos) bad = "an allowed origin or host must not contain a comma";
            check(item);
            if (!out.empty()) out += ',';
            out += item;
        }
        if (out.empty()) return nullptr;
        joined.push_back(std::make_unique<std::string>(std::move(out)));
        return joined.back()->c_str();
    }
    const char *const *list(const std::vector<std::string> &items, std::size_t &count) {
        count = items.size();
        if (items.empty()) return nullptr;
        std::vector<const char *> ptrs;
        for (const std::string &item : items) {
            check(item);
            ptrs.push_back(item.c_str());
        }
        lists.push_back(std::move(ptrs));
        return lists.back().data();
    }
    void ms(std::chrono::milliseconds d, const char *what, std::uint32_t &out) {
        if (const char *b = pick_ms(d, 0, what, out)) bad = b;
    }
};

struct CMcpServerOptions : CStrings {
    capstan_mcp_server_options raw{};
    explicit CMcpServerOptions(const McpServerOptions &o) {
        raw.struct_size = sizeof raw;
        for (const std::string *s : {&o.address, &o.bearer_token, &o.tools_meta, &o.name}) check(*s);
        raw.address = str(o.address);
        raw.bearer_token = str(o.bearer_token);
        raw.allowed_origins = join(o.allowed_origins);
        raw.allowed_hosts = join(o.allowed_hosts);
        raw.tools_meta = str(o.tools_meta);
        raw.name = str(o.name);
        raw.max_body_bytes = o.max_body_bytes;
        ms(o.call_timeout, "McpServerOptions::call_timeout is negative", raw.call_timeout_ms);
        ms(o.stop_timeout, "McpServerOptions::stop_timeout is negative", raw.stop_timeout_ms);
    }
};

struct CMcpMountOptions : CStrings {
    capstan_mcp_mount_options raw = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    explicit CMcpMountOptions(const McpMountOptions &o) {
        for (const std::string *s : {&o.cwd, &o.url, &o.prefix, &o.protocol_version}) check(*s);
        raw.argv = list(o.command, raw.argc);
        raw.env = list(o.env, raw.env_count);
        raw.headers = list(o.headers, raw.header_count);
        raw.cwd = str(o.cwd);
        raw.url = str(o.url);
        raw.prefix = str(o.prefix);
        raw.protocol_version = str(o.protocol_version);
        raw.max_reconnects = o.max_reconnects;
        ms(o.connect_timeout, "McpMountOptions::connect_timeout is negative", raw.connect_timeout_ms);
        ms(o.call_timeout, "McpMountOptions::call_timeout is negative", raw.call_timeout_ms);
        ms(o.reconnect_backoff, "McpMountOptions::reconnect_backoff is negative", raw.reconnect_backoff_ms);
        if (o.oauth) {
            const McpOAuth &a = *o.oauth;
            for (const std::string *s :
                 {&a.redirect_uri, &a.client_id, &a.client_secret, &a.client_metadata_url, &a.scopes, &a.client_key,
                  &a.client_issuer})
                check(*s);
            raw.oauth_redirect_uri = str(a.redirect_uri);
            raw.oauth_client_id = str(a.client_id);
            raw.oauth_client_secret = str(a.client_secret);
            raw.oauth_client_metadata_url = str(a.client_metadata_url);
            raw.oauth_scopes = str(a.scopes);
            raw.oauth_client_key = str(a.client_key);
            raw.oauth_client_issuer = str(a.client_issuer);
            if (const auto &idp = a.identity_provider) {
                for (const std::string *s : {&idp->issuer, &idp->token_endpoint, &idp->client_id, &idp->client_secret})
                    check(*s);
                raw.oauth_idp_issuer = str(idp->issuer);
                raw.oauth_idp_token_endpoint = str(idp->token_endpoint);
                raw.oauth_idp_client_id = str(idp->client_id);
                raw.oauth_idp_client_secret = str(idp->client_secret);
            }
        }
    }
};

/// What an OAuth callback threw, for the mount's Error; shared with the
/// box, which capstan may destroy on another thread.
struct OAuthTrouble {
    std::mutex lock;
    std::string what;
    void note(const char *prefix, const char *text) noexcept {
#if CAPSTAN_HPP_EXCEPTIONS
        try {
            std::lock_guard<std::mutex> g(lock);
            if (what.empty()) what = std::string(prefix) + (text ? text : "");
        } catch (...) {
        }
#else
        std::lock_guard<std::mutex> g(lock);
        if (what.empty()) what = std::string(prefix) + (text ? text : "");
#endif
    }
};

/// The host's McpOAuth as capstan's oauth_user_data; capstan runs
/// `destroy` exactly once (also when mounting fails).
struct OAuthBox {
    McpOAuth oauth;
    std::shared_ptr<OAuthTrouble> trouble;

    template <class F>
    static void guarded(OAuthBox *self, const char *what, F &&f) noexcept {
#if CAPSTAN_HPP_EXCEPTIONS
        try {
            f();
        } catch (const std::exception &e) {
            self->trouble->note(what, e.what());
        } catch (...) {
            self->trouble->note(what, "an exception that is not a std::exception");
        }
#else
        (void)self;
        (void)what;
        f();
#endif
    }
    static std::size_t authorize(void *ud, const char *url, char *redirect, std::size_t cap) noexcept {
        auto *self = static_cast<OAuthBox *>(ud);
        std::size_t n = 0;
        guarded(self, "the authorize callback threw: ", [&] {
            std::string to = self->oauth.authorize(url ? std::string_view(url) : std::string_view());
            if (to.size() > cap) {
                self->trouble->note("the authorize callback's redirect URL is longer than ", "CAPSTAN_MCP_REDIRECT_MAX");
                return;
            }
            std::copy(to.begin(), to.end(), redirect);
            n = to.size();
        });
        return n;
    }
    static std::size_t load(void *ud, char *buf, std::size_t cap) noexcept {
        auto *self = static_cast<OAuthBox *>(ud);
        std::size_t n = 0;
        guarded(self, "the tokens_load callback threw: ", [&] {
            std::string json = self->oauth.tokens_load();
            if (json.size() > cap) return;  // as none stored: capstan authorizes again
            std::copy(json.begin(), json.end(), buf);
            n = json.size();
        });
        return n;
    }
    static void save(void *ud, const char *json, std::size_t len) noexcept {
        auto *self = static_cast<OAuthBox *>(ud);
        guarded(self, "the tokens_save callback threw: ", [&] { self->oauth.tokens_save(view(json, len)); });
    }
    static std::size_t assertion(void *ud, const char *audience, char *out, std::size_t cap) noexcept {
        auto *self = static_cast<OAuthBox *>(ud);
        std::size_t n = 0;
        guarded(self, "the assertion callback threw: ", [&] {
            std::string jwt = self->oauth.assertion(audience ? std::string_view(audience) : std::string_view());
            if (jwt.size() > cap) {
                self->trouble->note("the assertion callback's JWT is longer than ", "CAPSTAN_MCP_ASSERTION_MAX");
                return;
            }
            std::copy(jwt.begin(), jwt.end(), out);
            n = jwt.size();
        });
        return n;
    }
    static void destroy(void *ud) noexcept { delete static_cast<OAuthBox *>(ud); }
};

/// The host's McpInput as capstan's input_user_data; capstan runs `destroy`
/// exactly once (also when mounting fails).
struct InputBox {
    McpInput input;

    static std::size_t answer(void *ud, const char *tool, const char *method, const char *params,
                              std::size_t params_len, char *out, std::size_t cap) noexcept {
        auto *self = static_cast<InputBox *>(ud);
        std::size_t n = 0;
        auto run = [&] {
            std::string text = self->input.answer(tool ? std::string_view(tool) : std::string_view(),
                                                   method ? std::string_view(method) : std::string_view(),
                                                   view(params, params_len));
            if (text.size() > cap) return;  // no answer: the call says so
            std::copy(text.begin(), text.end(), out);
            n = text.size();
        };
#if CAPSTAN_HPP_EXCEPTIONS
        try {
            run();
        } catch (...) {
            n = 0;  // an exception is no answer, never a crash
        }
#else
        run();
#endif
        return n;
    }
    static void destroy(void *ud) noexcept { delete static_cast<InputBox *>(ud); }
};

}  // namespace detail

/// A registry's tools served over MCP's streamable HTTP (Registry::serve_mcp),
/// on capstan's threads, until stop() or destruction (move-only). It keeps
/// what it needs of its Registry: destroyed after it, it answers every call
/// cancelled until stopped. The destructor stops and frees it, waiting for
/// calls in flight up to McpServerOptions::stop_timeout.
class McpServer {
public:
    McpServer() noexcept = default;
    McpServer(McpServer &&o) noexcept : raw_(std::exchange(o.raw_, nullptr)), url_(std::move(o.url_)) {}
    McpServer &operator=(McpServer &&o) noexcept {
        if (this != &o) {
            reset();
            raw_ = std::exchange(o.raw_, nullptr);
            url_ = std::move(o.url_);
        }
        return *this;
    }
    McpServer(const McpServer &) = delete;
    McpServer &operator=(const McpServer &) = delete;
    ~McpServer() { reset(); }

    /// The endpoint, e.g. "http://127.0.0.1:41234/mcp" (the port the OS
    /// chose); still readable after stop().
    const std::string &url() const noexcept { return url_; }

    /// Stops serving: no new connection or call, calls in flight cancelled
    /// and waited for up to stop_timeout, connections closed. TIMEOUT when
    /// calls were still running (they finish in the background); a second
    /// stop is OK at once. Any thread, also a tool.
    [[nodiscard]] Expected<void> try_stop() {
        if (!raw_) return Error(CAPSTAN_ERR_NULL_PARAMETER, "this capstan::McpServer was moved from");
        capstan_status st = capstan_mcp_server_stop(raw_);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }
#if CAPSTAN_HPP_EXCEPTIONS
    void stop() { try_stop().value(); }
#endif

    capstan_mcp_server *get() const noexcept { return raw_; }

private:
    friend class Registry;
    McpServer(capstan_mcp_server *raw, std::string url) noexcept : raw_(raw), url_(std::move(url)) {}
    void reset() noexcept {
        if (raw_) capstan_mcp_server_free(std::exchange(raw_, nullptr));
    }
    capstan_mcp_server *raw_ = nullptr;
    std::string url_;
};

/// An MCP server's tools mounted into a registry (Registry::mount_mcp),
/// move-only. Destroying it (or unmount()) disconnects, stops a child
/// process and unregisters the mount's tools: calls of them still in flight
/// end as tool errors saying so. It blocks about 2.5 s at most.
class McpMount {
public:
    McpMount() noexcept = default;
    McpMount(McpMount &&o) noexcept : raw_(std::exchange(o.raw_, nullptr)) {}
    McpMount &operator=(McpMount &&o) noexcept {
        if (this != &o) {
            (void)try_unmount();
            raw_ = std::exchange(o.raw_, nullptr);
        }
        return *this;
    }
    McpMount(const McpMount &) = delete;
    McpMount &operator=(const McpMount &) = delete;
    ~McpMount() { (void)try_unmount(); }

    /// {"connected", "tools": {local: remote}, "problems": [{"remote",
    /// "local","problem"}], "reconnects", "gave_up", "last_error"}.
    /// STALE_HANDLE after unmount().
    [[nodiscard]] Expected<std::string> try_info_json() const {
        if (!raw_) return Error(CAPSTAN_ERR_STALE_HANDLE, "this capstan::McpMount was unmounted or moved from");
        return detail::text_out([&](char **out, std::size_t *len) { return capstan_mcp_mount_info_json(raw_, out, len); });
    }
    /// Unmounts now; a second unmount is OK.
    [[nodiscard]] Expected<void> try_unmount() noexcept {
        if (!raw_) return {};
        capstan_status st = capstan_mcp_mount_free(std::exchange(raw_, nullptr));
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }
#if CAPSTAN_HPP_EXCEPTIONS
    std::string info_json() const { return try_info_json().value(); }
    void unmount() { try_unmount().value(); }
#endif

    capstan_mcp_mount *get() const noexcept { return raw_; }

private:
    friend class Registry;
    explicit McpMount(capstan_mcp_mount *raw) noexcept : raw_(raw) {}
    capstan_mcp_mount *raw_ = nullptr;
};

/// A registry of tools (move-only). Thread-safe like capstan_registry: any
/// member may be used from several threads at once, except destruction and
/// assignment. The destructor frees the registry: calls in flight end
/// cancelled, every tool's callable is destroyed, and no callback of the
/// registry runs after it returns (see capstan_registry_free).
class Registry {
public:
#if CAPSTAN_HPP_EXCEPTIONS
    /// flags: e.g. RegistryFlag::coerce. Throws capstan::Error.
    explicit Registry(Flags<RegistryFlag> flags = {}) : Registry(create(flags).value()) {}
    explicit Registry(const RegistryOptions &options) : Registry(create(options).value()) {}
#endif
    static Expected<Registry> create(Flags<RegistryFlag> flags = {}) {
        RegistryOptions options;
        options.flags = flags;
        return create(options);
    }
    static Expected<Registry> create(const RegistryOptions &options) {
        capstan_registry_options opts{};
        opts.struct_size = sizeof opts;
        opts.flags = options.flags.bits();
        opts.max_result_bytes = options.max_result_bytes;
        capstan_registry *raw = nullptr;
        capstan_status st = capstan_registry_new(&opts, &raw);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return Registry(Adopt{}, raw);
    }

    Registry(Registry &&o) noexcept : raw_(std::exchange(o.raw_, nullptr)) {}
    Registry &operator=(Registry &&o) noexcept {
        if (this != &o) {
            release_all();
            raw_ = std::exchange(o.raw_, nullptr);
        }
        return *this;
    }
    Registry(const Registry &) = delete;
    Registry &operator=(const Registry &) = delete;
    ~Registry() { release_all(); }

    capstan_registry *get() const noexcept { return raw_; }

    // ---- tools ----

    /// Registers (or replaces) a tool. `fn` is one of
    ///   R(std::string_view arguments)   R: Output, std::string, const char*
    ///   void(capstan::Call &call)       completes `call` (or moves it away)
    ///   void(capstan::Call call)        owns the call: complete it now or later
    /// and is destroyed exactly once, also when registration fails.
    template <class F>
    [[nodiscard]] Expected<void> try_add(const Tool &tool, F &&fn) {
        using Box = detail::ToolBox<std::decay_t<F>>;
        if (!raw_) return moved_from();
        if (detail::has_nul(tool.name) || detail::has_nul(tool.description) || detail::has_nul(tool.parameters) ||
            detail::has_nul(tool.mcp_meta))
            return Error(CAPSTAN_ERR_INVALID_ARGUMENT, "tool name, description, parameters and mcp_meta must not contain NUL bytes");
        auto *box = new Box{std::forward<F>(fn)};
        capstan_tool_def def{};
        def.struct_size = sizeof def;
        def.name = tool.name.c_str();
        def.description = tool.description.empty() ? nullptr : tool.description.c_str();
        def.parameters = tool.parameters.empty() ? nullptr : tool.parameters.c_str();
        def.callback = &Box::run;
        def.user_data = box;
        def.destroy = &Box::destroy;  // capstan runs it exactly once, on failure too
        def.max_output_chars = tool.max_output_chars;
        def.flags = tool.flags.bits();
        def.mcp_meta = tool.mcp_meta.empty() ? nullptr : tool.mcp_meta.c_str();
        if (const char *bad = detail::pick_ms(tool.timeout, tool.timeout_ms, "Tool::timeout is negative", def.timeout_ms)) {
            Box::destroy(box);
            return Error(CAPSTAN_ERR_INVALID_ARGUMENT, bad);
        }
        capstan_status st = capstan_registry_add_tool(raw_, &def);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    /// Removes a tool; its calls in flight finish, then its callable is destroyed.
    [[nodiscard]] Expected<void> try_remove(std::string_view name) {
        capstan_status st = capstan_registry_remove_tool(raw_, detail::ptr(name), name.size());
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    // ---- execution ----

    /// Runs calls (one normalized call or an array) and returns their results
    /// in call order. Built on submit_polled + wait, so even a lone call runs
    /// on the pool (execute_json is capstan_registry_execute itself). On a thread that
    /// pumps this registry, the wait runs the batch's main-thread tools
    /// (capstan_batch_wait does), so a game may pump and execute alike.
    [[nodiscard]] Expected<std::vector<Result>> try_execute(std::string_view calls, const ExecOptions &opts = {}) {
        Expected<Batch> b = try_submit_polled(calls, opts);
        if (!b) return b.error();
        b->wait(forever);
        std::vector<Result> out;
        b->poll([&out](const Result &r) {
            if (out.size() <= r.index) out.resize(r.index + 1);
            out[r.index] = r;
        });
        return out;
    }

    /// capstan_registry_execute: the results as normalized JSON, in call order (what
    /// format_results takes).
    [[nodiscard]] Expected<std::string> try_execute_json(std::string_view calls, const ExecOptions &opts = {}) {
        detail::CExecOptions o(opts, 0, 0);
        if (o.bad) return o.invalid();
        return detail::text_out([&](char **out, std::size_t *len) {
            return capstan_registry_execute(raw_, detail::ptr(calls), calls.size(), &o.raw, out, len);
        });
    }

    /// Starts the calls and returns at once; on_result(const Result&) gets
    /// each result as its call finishes, on whichever thread finished it,
    /// possibly several at once. It must not throw (std::terminate).
    template <class F>
    [[nodiscard]] Expected<Batch> try_submit(std::string_view calls, F &&on_result, const ExecOptions &opts = {}) {
        using S = detail::Sink<std::decay_t<F>>;
        auto sink = std::make_unique<S>(std::forward<F>(on_result));
        detail::CExecOptions o(opts, 0, exec_flag::deliver_poll);
        if (o.bad) return o.invalid();
        capstan_batch *b = nullptr;
        capstan_status st = capstan_batch_submit(raw_, detail::ptr(calls), calls.size(), &o.raw, &S::deliver, sink.get(), &b);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return Batch(b, std::move(sink));
    }

    /// Starts the calls and returns at once; results queue up for Batch::poll
    /// on the host's thread (nothing calls back on capstan's threads).
    [[nodiscard]] Expected<Batch> try_submit_polled(std::string_view calls, const ExecOptions &opts = {}) {
        detail::CExecOptions o(opts, exec_flag::deliver_poll, 0);
        if (o.bad) return o.invalid();
        capstan_batch *b = nullptr;
        capstan_status st = capstan_batch_submit(raw_, detail::ptr(calls), calls.size(), &o.raw, nullptr, nullptr, &b);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return Batch(b, nullptr);
    }

    /// Starts reading a streamed response in `fmt` (openai_chat,
    /// openai_responses, anthropic, gemini): the body of its server-sent
    /// events. opts as for execute, plus ExecFlag::early_dispatch (start each
    /// call as soon as its arguments are complete; tools flagged
    /// ToolFlag::wait_for_response still wait for the end).
    [[nodiscard]] Expected<Stream> try_stream(Format fmt, StreamCallbacks callbacks = {}, const ExecOptions &opts = {}) {
        if (!raw_) return moved_from();
        detail::CExecOptions o(opts, 0, 0);
        if (o.bad) return o.invalid();
        auto sink = std::make_unique<detail::StreamSink>(detail::StreamSink{std::move(callbacks)});
        capstan_stream_sink c{};
        c.struct_size = sizeof c;
        c.on_text = &detail::StreamSink::text;
        c.on_result = &detail::StreamSink::result;
        c.user_data = sink.get();
        capstan_stream *st = nullptr;
        capstan_status status = capstan_stream_new(raw_, static_cast<capstan_format>(fmt), &o.raw, &c, &st);
        if (status != CAPSTAN_OK) return detail::last_error(status);
        return Stream(st, std::move(sink));
    }

    /// Runs queued main-thread tools on this thread for about budget_ms (at
    /// least one call if any is queued); returns how many ran.
    std::size_t pump(std::uint32_t budget_ms = 0) noexcept {
        return capstan_registry_pump(raw_, budget_ms);
    }
    /// The same with a std::chrono budget (rounded up to whole milliseconds).
    template <class Rep, class Period>
    std::size_t pump(std::chrono::duration<Rep, Period> budget) noexcept {
        return pump(detail::ms_up(budget, UINT32_MAX));
    }

    /// Which calls would wait for approval: [{"index","id","name"}].
    [[nodiscard]] Expected<std::string> try_needs_approval(std::string_view calls, const ExecOptions &opts = {}) const {
        detail::CExecOptions o(opts, 0, 0);
        if (o.bad) return o.invalid();
        return detail::text_out([&](char **out, std::size_t *len) {
            return capstan_registry_needs_approval(raw_, detail::ptr(calls), calls.size(), &o.raw, out, len);
        });
    }

    // ---- hooks ----

    /// The approver of calls of tools flagged requires_approval: callable as
    /// bool(capstan::Approval&) (true approves), void(capstan::Approval&) or
    /// void(capstan::Approval) (decides itself, now or later, any thread).
    template <class F>
    [[nodiscard]] Expected<void> try_set_approver(F &&approver) {
        using Box = detail::ApproverBox<std::decay_t<F>>;
        auto box = std::make_unique<Box>(std::forward<F>(approver));
        return install(std::move(box), [](capstan_registry *r, void *ud) {
            return detail::c_set_approver(r, &Box::run, ud, &detail::destroy_hook);
        });
    }
    /// Without an approver, calls needing approval end `denied`.
    [[nodiscard]] Expected<void> try_clear_approver() {
        return install_none([](capstan_registry *r) { return detail::c_set_approver(r, nullptr, nullptr, nullptr); });
    }

    /// Observes every call: on_event(const capstan::Event&) runs on the thread
    /// where the event happens, possibly several at once; quick, no blocking.
    template <class F>
    [[nodiscard]] Expected<void> try_set_event_hook(F &&on_event) {
        using Box = detail::EventBox<std::decay_t<F>>;
        auto box = std::make_unique<Box>(std::forward<F>(on_event));
        return install(std::move(box), [](capstan_registry *r, void *ud) {
            return detail::c_set_event_hook(r, &Box::run, ud, &detail::destroy_hook);
        });
    }
    [[nodiscard]] Expected<void> try_clear_event_hook() {
        return install_none([](capstan_registry *r) { return detail::c_set_event_hook(r, nullptr, nullptr, nullptr); });
    }

    /// Wakes an event loop: notify() runs on any thread when a result is
    /// queued for polling or a main-thread call waits for pump(). Quick, and
    /// it must not call into capstan.
    template <class F>
    [[nodiscard]] Expected<void> try_set_notify(F &&notify) {
        using Box = detail::NotifyBox<std::decay_t<F>>;
        auto box = std::make_unique<Box>(std::forward<F>(notify));
        return install(std::move(box), [](capstan_registry *r, void *ud) {
            return detail::c_set_notify(r, &Box::run, ud, &detail::destroy_hook);
        });
    }
    [[nodiscard]] Expected<void> try_clear_notify() {
        return install_none([](capstan_registry *r) { return detail::c_set_notify(r, nullptr, nullptr, nullptr); });
    }

    /// Unix: a file descriptor for epoll/kqueue/poll (an eventfd on Linux and
    /// Android, a pipe elsewhere; see capstan_registry_wake_fd). Windows:
    /// UNSUPPORTED.
    [[nodiscard]] Expected<int> try_wake_fd() {
        std::int32_t fd = -1;
        capstan_status st = capstan_registry_wake_fd(raw_, &fd);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return static_cast<int>(fd);
    }

    /// Windows: an auto-reset event HANDLE for WaitForMultipleObjects (see
    /// capstan_registry_wake_handle). Elsewhere: UNSUPPORTED.
    [[nodiscard]] Expected<void *> try_wake_handle() {
        void *handle = nullptr;
        capstan_status st = capstan_registry_wake_handle(raw_, &handle);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return handle;
    }

    // ---- tools for the model, providers, statistics ----

    [[nodiscard]] Expected<std::string> try_tools_json(Format fmt) const {
        return detail::text_out([&](char **out, std::size_t *len) {
            return capstan_registry_tools_json(raw_, static_cast<capstan_format>(fmt), nullptr, out, len, nullptr, nullptr);
        });
    }

    [[nodiscard]] Expected<Export> try_tools_export(Format fmt, Flags<ExportFlag> flags = {}) const {
        capstan_export_options o{};
        o.struct_size = sizeof o;
        o.flags = flags.bits();
        char *json = nullptr, *report = nullptr;
        std::size_t json_len = 0, report_len = 0;
        capstan_status st =
            capstan_registry_tools_json(raw_, static_cast<capstan_format>(fmt), &o, &json, &json_len, &report, &report_len);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        std::unique_ptr<char, detail::FreeText> g1(json), g2(report);
        Export e;
        if (json) e.json.assign(json, json_len);
        if (report) e.report.assign(report, report_len);
        return e;
    }

    // ---- tool search (deferred tools) ----

    /// The registered tools that best match `query`, best first:
    /// {"query","mode","results":[{"name","description","score"}]}. Any
    /// thread, also inside a tool. INVALID_ARGUMENT for an empty or too long
    /// query (1 to 1024 bytes), a limit past 100, a regex that does not compile.
    [[nodiscard]] Expected<std::string> try_search_json(std::string_view query, const SearchOptions &opts = {}) const {
        capstan_search_options o{};
        o.struct_size = sizeof o;
        o.flags = opts.flags.bits();
        o.limit = opts.limit;
        return detail::text_out([&](char **out, std::size_t *len) {
            return capstan_registry_search_json(raw_, detail::ptr(query), query.size(), &o, out, len);
        });
    }

    /// Registers capstan's search tool (replacing a tool of its name): the
    /// model calls it with {"query": "..."}; every deferred tool
    /// (ToolFlag::deferred) it lists is exported by tools_json from then on,
    /// so export the tools before each request. unload_tools forgets them.
    [[nodiscard]] Expected<void> try_add_search_tool(const SearchToolOptions &opts = {}) {
        if (!raw_) return moved_from();
        if (detail::has_nul(opts.name) || detail::has_nul(opts.description))
            return Error(CAPSTAN_ERR_INVALID_ARGUMENT, "search tool name and description must not contain NUL bytes");
        capstan_search_tool_options o{};
        o.struct_size = sizeof o;
        o.flags = opts.flags.bits();
        o.limit = opts.limit;
        o.name = opts.name.empty() ? nullptr : opts.name.c_str();
        o.description = opts.description.empty() ? nullptr : opts.description.c_str();
        capstan_status st = capstan_registry_add_search_tool(raw_, &o);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    /// Forgets the deferred tools the search tool loaded (a new conversation).
    [[nodiscard]] Expected<void> try_unload_tools() {
        if (!raw_) return moved_from();
        capstan_status st = capstan_registry_unload_tools(raw_);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    /// Looks a call up and validates its arguments without running it (for
    /// hosts that run the tool themselves). flags: none or
    /// ExecFlag::strict_nulls.
    [[nodiscard]] Expected<CheckedCall> try_check_call(std::string_view name, std::string_view arguments,
                                                       Flags<ExecFlag> flags = {}) const {
        capstan_outcome outcome = CAPSTAN_OUTCOME_OK;
        Expected<std::string> text = detail::text_out([&](char **out, std::size_t *len) {
            return capstan_registry_check_call(raw_, detail::ptr(name), name.size(), detail::ptr(arguments), arguments.size(),
                                               flags.bits(), &outcome, out, len);
        });
        if (!text) return text.error();
        return CheckedCall{static_cast<Outcome>(outcome), std::move(*text)};
    }

    [[nodiscard]] Expected<std::string> try_name_report() const {
        return detail::text_out([&](char **out, std::size_t *len) { return capstan_registry_names_json(raw_, out, len); });
    }

    [[nodiscard]] Expected<std::string> try_stats_json() const {
        return detail::text_out([&](char **out, std::size_t *len) { return capstan_registry_stats_json(raw_, out, len); });
    }

    /// One agent turn: parse the calls out of a provider response, run them,
    /// and return the messages to append, in format `fmt`.
    [[nodiscard]] Expected<std::string> try_run_turn(Format fmt, std::string_view response, const ExecOptions &opts = {}) {
        detail::CExecOptions o(opts, 0, 0);
        if (o.bad) return o.invalid();
        return detail::text_out([&](char **out, std::size_t *len) {
            return capstan_registry_run_turn(raw_, static_cast<capstan_format>(fmt), detail::ptr(response), response.size(), &o.raw,
                                    out, len);
        });
    }

    // ---- MCP ----

    /// Serves this registry's tools over MCP (streamable HTTP) on capstan's
    /// threads and returns at once; McpServer::url() is the endpoint.
    /// tools/list is the registry as it is at each request (registering a
    /// tool notifies clients); calls run as execute runs them.
    /// INVALID_ARGUMENT for bad options, TRANSPORT when the address cannot
    /// be bound, UNSUPPORTED without the library's MCP HTTP feature.
    [[nodiscard]] Expected<McpServer> try_serve_mcp(const McpServerOptions &opts = {}) {
        if (!raw_) return moved_from();
        detail::CMcpServerOptions o(opts);
        if (o.bad) return Error(CAPSTAN_ERR_INVALID_ARGUMENT, o.bad);
        capstan_mcp_server *server = nullptr;
        capstan_status st = capstan_mcp_server_start(raw_, &o.raw, &server);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        McpServer out(server, std::string());
        Expected<std::string> url =
            detail::text_out([&](char **p, std::size_t *len) { return capstan_mcp_server_url(server, p, len); });
        if (!url) return url.error();
        out.url_ = std::move(*url);
        return out;
    }

    /// Serves this registry's tools over MCP on this process's stdin and
    /// stdout, blocking, until stdin ends or the registry is closed from
    /// another thread. Nothing else may write to stdout meanwhile.
    /// UNSUPPORTED without the library's MCP server feature.
    [[nodiscard]] Expected<void> try_serve_mcp_stdio(const McpServerOptions &opts = {}) {
        if (!raw_) return moved_from();
        detail::CMcpServerOptions o(opts);
        if (o.bad) return Error(CAPSTAN_ERR_INVALID_ARGUMENT, o.bad);
        capstan_status st = capstan_mcp_server_serve_stdio(raw_, &o.raw);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    /// Connects to an MCP server and registers each of its tools as prefix +
    /// its remote name, with its inputSchema (arguments validated locally).
    /// Remote tools that cannot be mounted are listed in the mount's
    /// info_json() "problems". Blocks until connected, at most about twice
    /// connect_timeout. MCP_CONNECT when the server could not be started,
    /// reached, initialized or listed (the message says which and why).
    /// With McpMountOptions::oauth, a server that asks for OAuth is
    /// authorized through its callbacks; a refused or failed authorization
    /// is MCP_CONNECT, the message naming the step (and what a callback
    /// threw); OAuth with a command, authorize without redirect_uri, a
    /// client_key without client_id or that is no P-256 PKCS#8 PEM, or an
    /// identity_provider without assertion (or with an empty issuer,
    /// token_endpoint or client_id) is INVALID_ARGUMENT. With McpMountOptions::input, what the server asks
    /// while running a tool is answered by McpInput::answer; input without
    /// methods, or methods without answer, is INVALID_ARGUMENT.
    [[nodiscard]] Expected<McpMount> try_mount_mcp(const McpMountOptions &opts) {
        if (!raw_) return moved_from();
        detail::CMcpMountOptions o(opts);
        if (o.bad) return Error(CAPSTAN_ERR_INVALID_ARGUMENT, o.bad);
        std::shared_ptr<detail::OAuthTrouble> trouble;
        if (opts.oauth) {
            trouble = std::make_shared<detail::OAuthTrouble>();
            const McpOAuth &a = *opts.oauth;
            // Handed over: capstan runs OAuthBox::destroy exactly once, also on failure.
            auto *box = new detail::OAuthBox{a, trouble};
            o.raw.oauth_authorize = a.authorize ? &detail::OAuthBox::authorize : nullptr;
            o.raw.oauth_tokens_load = a.tokens_load ? &detail::OAuthBox::load : nullptr;
            o.raw.oauth_tokens_save = a.tokens_save ? &detail::OAuthBox::save : nullptr;
            o.raw.oauth_assertion = a.assertion ? &detail::OAuthBox::assertion : nullptr;
            o.raw.oauth_user_data = box;
            o.raw.oauth_destroy = &detail::OAuthBox::destroy;
        }
        if (opts.input) {
            // Handed over as well: capstan runs InputBox::destroy exactly once.
            o.raw.input_answer = opts.input->answer ? &detail::InputBox::answer : nullptr;
            o.raw.input_methods = opts.input->methods.bits();
            o.raw.input_user_data = new detail::InputBox{*opts.input};
            o.raw.input_destroy = &detail::InputBox::destroy;
        }
        capstan_mcp_mount *mount = nullptr;
        capstan_status st = capstan_mcp_mount_new(raw_, &o.raw, &mount);
        if (st != CAPSTAN_OK) {
            Error e = detail::last_error(st);
            if (trouble) {
                std::lock_guard<std::mutex> g(trouble->lock);
                if (!trouble->what.empty())
                    return Error(st, std::string(e.what()) + " (" + trouble->what + ")", e.provider(), e.schema_pointer());
            }
            return e;
        }
        return McpMount(mount);
    }

    /// Shuts down without freeing, waiting at most timeout_ms for callbacks
    /// on other threads; true when everything finished in time.
    bool close(std::uint32_t timeout_ms) noexcept {
        if (!raw_) return true;
        return capstan_registry_close(raw_, timeout_ms) == CAPSTAN_OK;
    }
    /// The same with a std::chrono timeout (rounded up; capped below forever).
    template <class Rep, class Period>
    bool close(std::chrono::duration<Rep, Period> timeout) noexcept {
        return close(detail::ms_up(timeout, UINT32_MAX - 1));
    }

#if CAPSTAN_HPP_EXCEPTIONS
    // Throwing twins of the try_ functions above (they throw capstan::Error).
    template <class F>
    void add(const Tool &tool, F &&fn) { try_add(tool, std::forward<F>(fn)).value(); }
    void remove(std::string_view name) { try_remove(name).value(); }
    std::vector<Result> execute(std::string_view calls, const ExecOptions &opts = {}) {
        return try_execute(calls, opts).value();
    }
    std::string execute_json(std::string_view calls, const ExecOptions &opts = {}) {
        return try_execute_json(calls, opts).value();
    }
    template <class F>
    Batch submit(std::string_view calls, F &&on_result, const ExecOptions &opts = {}) {
        return try_submit(calls, std::forward<F>(on_result), opts).value();
    }
    Batch submit_polled(std::string_view calls, const ExecOptions &opts = {}) {
        return try_submit_polled(calls, opts).value();
    }
    std::string needs_approval(std::string_view calls, const ExecOptions &opts = {}) const {
        return try_needs_approval(calls, opts).value();
    }
    Stream stream(Format fmt, StreamCallbacks callbacks = {}, const ExecOptions &opts = {}) {
        return try_stream(fmt, std::move(callbacks), opts).value();
    }
    template <class F>
    void set_approver(F &&approver) { try_set_approver(std::forward<F>(approver)).value(); }
    void clear_approver() { try_clear_approver().value(); }
    template <class F>
    void set_event_hook(F &&on_event) { try_set_event_hook(std::forward<F>(on_event)).value(); }
    void clear_event_hook() { try_clear_event_hook().value(); }
    template <class F>
    void set_notify(F &&notify) { try_set_notify(std::forward<F>(notify)).value(); }
    void clear_notify() { try_clear_notify().value(); }
    int wake_fd() { return try_wake_fd().value(); }
    void *wake_handle() { return try_wake_handle().value(); }
    std::string tools_json(Format fmt) const { return try_tools_json(fmt).value(); }
    Export tools_export(Format fmt, Flags<ExportFlag> flags = {}) const { return try_tools_export(fmt, flags).value(); }
    std::string name_report() const { return try_name_report().value(); }
    std::string search_json(std::string_view query, const SearchOptions &opts = {}) const {
        return try_search_json(query, opts).value();
    }
    void add_search_tool(const SearchToolOptions &opts = {}) { try_add_search_tool(opts).value(); }
    void unload_tools() { try_unload_tools().value(); }
    CheckedCall check_call(std::string_view name, std::string_view arguments, Flags<ExecFlag> flags = {}) const {
        return try_check_call(name, arguments, flags).value();
    }
    std::string stats_json() const { return try_stats_json().value(); }
    std::string run_turn(Format fmt, std::string_view response, const ExecOptions &opts = {}) {
        return try_run_turn(fmt, response, opts).value();
    }
    McpServer serve_mcp(const McpServerOptions &opts = {}) { return try_serve_mcp(opts).value(); }
    void serve_mcp_stdio(const McpServerOptions &opts = {}) { try_serve_mcp_stdio(opts).value(); }
    McpMount mount_mcp(const McpMountOptions &opts) { return try_mount_mcp(opts).value(); }
#endif

private:
    struct Adopt {};
    Registry(Adopt, capstan_registry *raw) : raw_(raw) {}

    static Error moved_from() { return Error(CAPSTAN_ERR_NULL_PARAMETER, "this capstan::Registry was moved from"); }

    template <class Box, class Set>
    Expected<void> install(std::unique_ptr<Box> box, Set set) {
        if (!raw_) return moved_from();
        // Handed over: capstan destroys the box (also when the setter fails).
        capstan_status st = set(raw_, static_cast<detail::HookBase *>(box.release()));
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    template <class Set>
    Expected<void> install_none(Set set) {
        if (!raw_) return moved_from();
        capstan_status st = set(raw_);
        if (st != CAPSTAN_OK) return detail::last_error(st);
        return {};
    }

    void release_all() noexcept {
        // Hooks belong to capstan (their destroy runs after their last
        // invocation), so nothing here outlives a free that did not wait.
        if (raw_) capstan_registry_free(std::exchange(raw_, nullptr));
    }

    capstan_registry *raw_ = nullptr;
};

// ---- providers and misc (no registry needed) ----

/// The tool calls of a provider response, as a normalized call array.
[[nodiscard]] inline Expected<std::string> try_parse_calls(Format fmt, std::string_view response) {
    return detail::text_out([&](char **out, std::size_t *len) {
        return capstan_format_parse_calls(static_cast<capstan_format>(fmt), detail::ptr(response), response.size(), out, len);
    });
}

/// Normalized results (execute_json's output) as the messages `fmt` expects.
[[nodiscard]] inline Expected<std::string> try_format_results(Format fmt, std::string_view results_json) {
    return detail::text_out([&](char **out, std::size_t *len) {
        return capstan_format_write_results(static_cast<capstan_format>(fmt), detail::ptr(results_json), results_json.size(),
                                      out, len);
    });
}

/// Checks a conversation the host assembled (an array of messages, input
/// items or contents, or a request body holding one) against the rules `fmt`
/// (openai_chat, openai_responses, anthropic, gemini) sets for tool calls and
/// their results: a call without a result, an orphan or second result, a
/// repeated or illegal call id, results out of order, a missing Gemini
/// thoughtSignature (HistoryFlag::gemini_signatures). With
/// HistoryFlag::repair, `repaired` holds the history mended as run_turn would
/// have answered it. INVALID_ARGUMENT for describe/mcp, text that is not
/// JSON or a history of the wrong shape (the message names the entry).
[[nodiscard]] inline Expected<HistoryCheck> try_check_history(Format fmt, std::string_view history,
                                                              Flags<HistoryFlag> flags = {}) {
    char *report = nullptr, *repaired = nullptr;
    std::size_t report_len = 0, repaired_len = 0;
    capstan_status st = capstan_format_check_history(static_cast<capstan_format>(fmt), detail::ptr(history), history.size(),
                                                     flags.bits(), &report, &report_len, &repaired, &repaired_len);
    if (st != CAPSTAN_OK) return detail::last_error(st);
    std::unique_ptr<char, detail::FreeText> g1(report), g2(repaired);
    HistoryCheck out;
    if (report) out.report.assign(report, report_len);
    if (repaired) out.repaired = std::string(repaired, repaired_len);
    out.ok = detail::ErrorJsonReader(out.report).read_ok();
    return out;
}

/// OK if every provider accepts `name` as a tool name; else why not.
[[nodiscard]] inline Expected<void> try_check_name(std::string_view name) {
    capstan_status st = capstan_name_check(detail::ptr(name), name.size());
    if (st != CAPSTAN_OK) return detail::last_error(st);
    return {};
}

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
inline std::string parse_calls(Format fmt, std::string_view response) { return try_parse_calls(fmt, response).value(); }
inline std::string format_results(Format fmt, std::string_view results_json) {
    return try_format_results(fmt, results_json).value();
}
inline void check_name(std::string_view name) { try_check_name(name).value(); }
inline HistoryCheck check_history(Format fmt, std::string_view history, Flags<HistoryFlag> flags = {}) {
    return try_check_history(fmt, history, flags).value();
}
inline void configure_runtime(const RuntimeOptions& options) { try_configure_runtime(options).value(); }
#endif

}  // namespace capstan

#endif  // CAPSTAN_HPP
