// capstan/registry.hpp: the registry (Registry): tools, execution, hooks, exports, search, turns,
// MCP; each member forwards to the area header that holds its types.
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_REGISTRY
#define CAPSTAN_HPP_REGISTRY

#include "approval.hpp"
#include "execution.hpp"
#include "stream.hpp"
#include "search.hpp"
#include "providers.hpp"
#include "mcp_mount.hpp"
#include "journal.hpp"

namespace capstan {

/// Options of a registry (capstan_registry_options).
struct RegistryOptions {
    Flags<RegistryFlag> flags{};
    /// Bound on one result's content-part data (Output::parts), in decoded
    /// bytes of its image, audio and blob parts together; 0: 10 MiB.
    std::uint64_t max_result_bytes = 0;
};

/// What Registry::check_call found (capstan_registry_check_call).
struct CheckedCall {
    /// ok, invalid_arguments, unknown_tool or cancelled (registry closed).
    Outcome outcome = Outcome::ok;
    /// ok: the validated arguments, compact, defaults filled in; otherwise
    /// the result text a batch would give the call.
    std::string text;
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

    /// Uses `journal` for every batch run with ExecOptions::run_id, from the
    /// next batch on (docs/durable-calls.md): a completed call is answered
    /// from it without running its tool (EventKind::replayed); a changed
    /// tool, schema or arguments fails the call naming it; a call that
    /// started and never completed runs again if its tool is
    /// ToolFlag::idempotent, else ends "Outcome unknown:". The registry keeps
    /// the journal alive; the Journal object may be destroyed first.
    [[nodiscard]] Expected<void> try_set_journal(const Journal &journal, JournalMode mode = JournalMode::record) {
        if (!journal.get()) return Error(CAPSTAN_ERR_NULL_PARAMETER, "this capstan::Journal was moved from");
        return install_none([&](capstan_registry *r) {
            return capstan_registry_set_journal(r, journal.get(), static_cast<std::uint32_t>(mode));
        });
    }
    /// No journal from the next batch on.
    [[nodiscard]] Expected<void> try_clear_journal() {
        return install_none([](capstan_registry *r) { return capstan_registry_set_journal(r, nullptr, 0); });
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
    void set_journal(const Journal &journal, JournalMode mode = JournalMode::record) {
        try_set_journal(journal, mode).value();
    }
    void clear_journal() { try_clear_journal().value(); }
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

}  // namespace capstan

#endif  // CAPSTAN_HPP_REGISTRY
