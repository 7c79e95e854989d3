// capstan/mcp_mount.hpp: MCP mounts: an MCP server's tools mounted into a registry
// (McpMountOptions, OAuth, input, McpMount).
// Part of capstan.hpp: include that, not this file.

#ifndef CAPSTAN_HPP_MCP_MOUNT
#define CAPSTAN_HPP_MCP_MOUNT

#include "mcp_server.hpp"

namespace capstan {

/// McpMountOptions::max_reconnects: the mount drops for good when its
/// connection dies.
inline constexpr std::uint32_t never_reconnect = CAPSTAN_MCP_RECONNECT_NEVER;

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

}  // namespace capstan

#endif  // CAPSTAN_HPP_MCP_MOUNT
