// capstan/error.hpp: errors: capstan::Error (status, message, provider fields, schema pointer),
// Expected<T>, the last error read after a failing C call, and text copied out of capstan.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_ERROR
#define CAPSTAN_HPP_ERROR

#include "base.hpp"

namespace capstan {

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

namespace detail {

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

}  // namespace detail

}  // namespace capstan

#endif  // CAPSTAN_HPP_ERROR
