// capstan/execution.hpp: running calls: ExecOptions, Result and Batch (execute, submit, poll,
// wait).
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_EXECUTION
#define CAPSTAN_HPP_EXECUTION

#include "tool.hpp"

namespace capstan {

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
    /// The run (a conversation, a workflow) the calls belong to: with a
    /// journal on the registry (Registry::set_journal) each call is recorded
    /// and answered under this id plus its call id. None: no journal.
    std::optional<std::string> run_id{};
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
        if (o.run_id) {
            raw.run_id = detail::ptr(*o.run_id);
            raw.run_id_len = o.run_id->size();
        }
    }
    Error invalid() const { return Error(CAPSTAN_ERR_INVALID_ARGUMENT, bad); }
    CExecOptions(const CExecOptions &) = delete;
    CExecOptions &operator=(const CExecOptions &) = delete;
};


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

}  // namespace capstan

#endif  // CAPSTAN_HPP_EXECUTION
