// capstan/approval.hpp: approvals: a call waiting for the approver (Approval) and the approver's C
// callback.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_APPROVAL
#define CAPSTAN_HPP_APPROVAL

#include "hooks.hpp"

namespace capstan {

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

}  // namespace detail

}  // namespace capstan

#endif  // CAPSTAN_HPP_APPROVAL
