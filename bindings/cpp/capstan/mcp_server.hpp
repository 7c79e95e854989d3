// capstan/mcp_server.hpp: MCP server: a registry's tools served over MCP (McpServerOptions,
// McpServer).
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_MCP_SERVER
#define CAPSTAN_HPP_MCP_SERVER

#include "error.hpp"

namespace capstan {

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

}  // namespace capstan

#endif  // CAPSTAN_HPP_MCP_SERVER
