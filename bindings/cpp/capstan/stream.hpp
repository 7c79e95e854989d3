// capstan/stream.hpp: streams: a provider's streamed response read as it arrives (Stream).
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_STREAM
#define CAPSTAN_HPP_STREAM

#include "execution.hpp"

namespace capstan {

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

}  // namespace capstan

#endif  // CAPSTAN_HPP_STREAM
