// capstan/hooks.hpp: the registry's hooks as C callbacks: the event hook (Event) and the notifier;
// the approver's box is in approval.hpp.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_HOOKS
#define CAPSTAN_HPP_HOOKS

#include "call.hpp"

namespace capstan {

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

namespace detail {

/// State kept for a hook (approver, event hook, notifier).
struct HookBase {
    virtual ~HookBase() = default;
};
inline void destroy_hook(void *user_data) noexcept { delete static_cast<HookBase *>(user_data); }


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

}  // namespace detail

}  // namespace capstan

#endif  // CAPSTAN_HPP_HOOKS
