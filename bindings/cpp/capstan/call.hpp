// capstan/call.hpp: a tool call in progress (Call), and how a C++ callable becomes a tool's C
// callback.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_CALL
#define CAPSTAN_HPP_CALL

#include "tool.hpp"

namespace capstan {

namespace detail {

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

}  // namespace detail

}  // namespace capstan

#endif  // CAPSTAN_HPP_CALL
