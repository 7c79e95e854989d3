// capstan.hpp's MCP: a registry served over HTTP on port 0 and mounted in
// another registry, a registry served on stdio by this very program started
// again as a child and mounted as a command, a tool's MCP metadata
// (Tool::mcp_meta) in the exports and through a mount, and a mount of
// tests/mcp/oauth_server.py authorized through McpOAuth's callbacks (also
// without a user: a client key, a workload assertion), and a
// mount whose host answers what the served tool asks (McpInput, both
// protocol eras); against the real library, one function per rule.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>


#include "check.hpp"
#include "http.hpp"

using namespace std::chrono_literals;
using capstan::Format;
using capstan::Outcome;
using capstan::Registry;

static std::string call(const char *id, const char *name, const char *args = "{}") {
    return std::string(R"({"id":")") + id + R"(","name":")" + name + R"(","arguments":)" + args + "}";
}

static const char *add_schema =
    R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]})";

static void add_tool(Registry &reg) {
    reg.add({"add", "Add two integers.", add_schema}, [](std::string_view args) {
        long a = 0, b = 0;
        // {"a":N,"b":M} as capstan validated and compacted it
        if (std::sscanf(std::string(args).c_str(), R"({"a":%ld,"b":%ld})", &a, &b) != 2) return capstan::Output::error("args");
        return capstan::Output::json(std::to_string(a + b));
    });
}

static bool has_mcp() {
    std::uint32_t want = CAPSTAN_FEATURE_MCP_SERVER | CAPSTAN_FEATURE_MCP_MOUNT | CAPSTAN_FEATURE_MCP_HTTP;
    return (capstan_features_mask() & want) == want;
}

static void a_server_on_port_0_is_mounted_in_another_registry() {
    Registry server;
    add_tool(server);
    capstan::McpServerOptions so;
    so.bearer_token = "s3cret";
    so.stop_timeout = 2s;
    capstan::McpServer srv = server.serve_mcp(so);
    CHECK(srv.url().rfind("http://127.0.0.1:", 0) == 0);
    CHECK(srv.url().find(":0/") == std::string::npos);  // the port the OS chose
    Registry client;
    capstan::McpMountOptions mo;
    mo.url = srv.url();
    mo.prefix = "remote_";
    mo.max_reconnects = capstan::never_reconnect;
    mo.connect_timeout = 10s;
    // Without the bearer token the server refuses: an Error, not a crash.
    CHECK_THROWS_STATUS(client.mount_mcp(mo), CAPSTAN_ERR_MCP_CONNECT);
    mo.headers = {"Authorization: Bearer s3cret"};
    {
        capstan::McpMount mount = client.mount_mcp(mo);
        std::string info = mount.info_json();
        CHECK_CONTAINS(info, R"("connected":true)");
        CHECK_CONTAINS(info, R"("remote_add":"add")");
        auto r = client.execute(call("1", "remote_add", R"({"a":2,"b":3})"));
        CHECK(r.at(0).outcome == Outcome::ok && r.at(0).content == "5");
        // the remote schema is checked locally
        CHECK(client.execute(call("2", "remote_add", R"({"a":"x"})")).at(0).outcome == Outcome::invalid_arguments);
        capstan::McpMount moved = std::move(mount);  // the handle moves; the mount stays
        CHECK(client.execute(call("3", "remote_add", R"({"a":1,"b":1})")).at(0).content == "2");
        auto stale = mount.try_info_json();
        CHECK(!stale && stale.error().status() == CAPSTAN_ERR_STALE_HANDLE);
    }  // the mount's destructor unmounts
    CHECK(client.execute(call("4", "remote_add", R"({"a":2,"b":3})")).at(0).outcome == Outcome::unknown_tool);
    srv.stop();
    CHECK(srv.try_stop().has_value());  // a second stop is OK
    CHECK(srv.url().rfind("http://127.0.0.1:", 0) == 0);  // still readable
}

static void bad_options_are_refused_before_capstan_sees_them() {
    Registry reg;
    capstan::McpServerOptions so;
    so.call_timeout = -1ms;
    auto s = reg.try_serve_mcp(so);
    CHECK(!s && s.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(s.error().what(), "call_timeout");
    so = {};
    so.allowed_hosts = {"a,b"};
    CHECK(reg.try_serve_mcp(so).error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    so = {};
    so.address = "not an address";
    CHECK(reg.try_serve_mcp(so).error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan::McpMountOptions mo;  // neither command nor url
    CHECK(reg.try_mount_mcp(mo).error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
}

static const char *meta =
    R"({"title":"Weather now","annotations":{"title":"Weather","readOnlyHint":true,"destructiveHint":false},)"
    R"("outputSchema":{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]},)"
    R"("icons":[{"src":"https://example.com/w.png","mimeType":"image/png","sizes":["48x48"],"theme":"light"}]})";

static void weather_tool(Registry &reg) {
    capstan::Tool t{"weather", "Current weather.", R"({"type":"object","properties":{"city":{"type":"string"}}})"};
    t.mcp_meta = meta;
    reg.add(t, [](std::string_view args) {
        if (args.find("bad") != std::string_view::npos) return capstan::Output::json(R"({"temp":"hot"})");
        return capstan::Output::json(R"({"temp":21.5})");
    });
}

static void mcp_meta_reaches_the_exports_and_the_output_schema_is_checked() {
    Registry reg;
    weather_tool(reg);
    std::string mcp = reg.tools_json(Format::mcp);
    CHECK_CONTAINS(mcp, R"("title":"Weather now")");
    CHECK_CONTAINS(mcp, R"("readOnlyHint":true)");
    CHECK_CONTAINS(mcp, R"("outputSchema":)");
    CHECK_CONTAINS(mcp, R"("src":"https://example.com/w.png")");
    CHECK_CONTAINS(reg.tools_json(Format::describe), R"("mcp":{)");
    CHECK(reg.tools_json(Format::openai_chat).find("Weather now") == std::string::npos);
    CHECK(reg.execute(call("1", "weather", R"({"city":"Lyon"})")).at(0).content == R"({"temp":21.5})");
    auto bad = reg.execute(call("2", "weather", R"({"city":"bad"})")).at(0);
    CHECK(bad.outcome == Outcome::tool_error);
    CHECK_CONTAINS(bad.content, "/temp");
    capstan::Tool t{"bad_icon", "", ""};
    t.mcp_meta = R"({"icons":[{"src":"https://example.com/i.png","theme":"blue"}]})";
    auto added = reg.try_add(t, [](std::string_view) { return ""; });
    CHECK(!added && added.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(added.error().what(), "theme");
    t.mcp_meta = R"({"outputSchema":{"type":"object","properties":{"x":{"type":12}}}})";
    CHECK(reg.try_add(t, [](std::string_view) { return ""; }).error().status() == CAPSTAN_ERR_INVALID_SCHEMA);
    CHECK(reg.tools_json(Format::describe).find("bad_icon") == std::string::npos);
}

// The MCP tools json of a registry that mounted `srv` (once, no reconnects).
static std::string mounted_tools(const capstan::McpServer &srv) {
    Registry client;
    capstan::McpMountOptions mo;
    mo.url = srv.url();
    mo.max_reconnects = capstan::never_reconnect;
    capstan::McpMount mount = client.mount_mcp(mo);
    return client.tools_json(Format::mcp);
}

// The served tools/list carries the metadata: a mount reads it from there
// and capstan lists the mounted tool with it again.
static void mcp_meta_is_served_in_tools_list() {
    Registry server;
    weather_tool(server);
    capstan::McpServer srv = server.serve_mcp();
    std::string mounted = mounted_tools(srv);
    CHECK_CONTAINS(mounted, R"("title":"Weather now")");
    CHECK_CONTAINS(mounted, R"("readOnlyHint":true)");
    CHECK_CONTAINS(mounted, R"("outputSchema":)");
}

static void the_servers_tools_meta_reaches_a_mount_and_bad_meta_is_refused() {
    Registry server;
    add_tool(server);
    capstan::McpServerOptions bad;
    bad.tools_meta = R"({"add":)";
    auto refused = server.try_serve_mcp(bad);
    CHECK(!refused && refused.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan::McpServerOptions so;
    so.tools_meta = R"({"add":{"title":"Adds, per the server","annotations":{"idempotentHint":true}}})";
    capstan::McpServer srv = server.serve_mcp(so);
    std::string mounted = mounted_tools(srv);
    CHECK_CONTAINS(mounted, R"("title":"Adds, per the server")");
    CHECK_CONTAINS(mounted, R"("idempotentHint":true)");
}

static std::string self_exe;

static void a_command_serving_stdio_is_mounted() {
    Registry client;
    capstan::McpMountOptions mo;
    mo.command = {self_exe, "--serve-stdio"};
    mo.env = {"ASAN_OPTIONS=detect_leaks=1"};
    mo.prefix = "child_";
    mo.max_reconnects = capstan::never_reconnect;
    mo.connect_timeout = 20s;
    capstan::McpMount mount = client.mount_mcp(mo);
    CHECK_CONTAINS(mount.info_json(), R"("child_add":"add")");
    auto r = client.execute(call("1", "child_add", R"({"a":20,"b":22})"));
    CHECK(r.at(0).outcome == Outcome::ok && r.at(0).content == "42");
    mount.unmount();
    CHECK(mount.try_info_json().error().status() == CAPSTAN_ERR_STALE_HANDLE);
}

// ---- OAuth (tests/mcp/oauth_server.py: a stdlib-only Python server) ----

// The repository's root, from this file's path as the compiler got it
// (relative to the root when make builds it from there).
static std::string repo_root() {
    std::string here = __FILE__;
    std::size_t at = here.rfind("bindings/cpp/tests/");
    return at == std::string::npos ? std::string() : here.substr(0, at);
}

struct OAuthServer {
    FILE *process = nullptr;
    std::string base;  // http://127.0.0.1:PORT

    OAuthServer() {
        const char *python = std::getenv("CAPSTAN_TEST_PYTHON");
        std::string command = std::string("exec '") + (python && *python ? python : "python3") + "' '" + repo_root() +
                              "tests/mcp/oauth_server.py' 0";
        process = popen(command.c_str(), "r");
        char port[32] = "";
        if (process && std::fgets(port, sizeof port, process)) base = "http://127.0.0.1:" + std::string(port, std::strcspn(port, "\n"));
    }
    ~OAuthServer() {
        if (!base.empty()) (void)http::request("GET", base + "/quit");
        if (process) pclose(process);
    }
    std::string stats() const { return http::request("GET", base + "/stats").body; }
};

// The user's browser: follows the authorization URL (the test server
// redirects at once) and hands back where it was sent.
static std::string follow(std::string_view url) {
    http::Answer a = http::request("GET", std::string(url));
    return a.status == 302 ? http::header(a, "Location") : std::string();
}

struct Kept {
    std::mutex lock;
    std::string tokens;
    int saves = 0;
};

static capstan::McpMountOptions oauth_mount(const OAuthServer &server) {
    capstan::McpMountOptions mo;
    mo.url = server.base + "/mcp";
    mo.prefix = "o_";
    mo.protocol_version = "2025-11-25";  // the test server has no server/discover
    mo.max_reconnects = capstan::never_reconnect;
    mo.connect_timeout = 60s;
    return mo;
}

static void an_oauth_server_is_mounted_through_the_callbacks_and_the_kept_tokens_serve_the_next_mount() {
    OAuthServer server;
    CHECK(!server.base.empty());
    if (server.base.empty()) return;
    std::atomic<int> live{0}, twice{0}, authorizations{0};
    Kept kept;
    {
        capstan::McpMountOptions mo = oauth_mount(server);
        capstan::McpOAuth oauth;
        check::Probe probe(live, twice);
        oauth.authorize = [probe, &authorizations](std::string_view url) {
            ++authorizations;
            return follow(url);
        };
        oauth.redirect_uri = "http://127.0.0.1:9/callback";
        oauth.tokens_load = [&kept] {
            std::lock_guard<std::mutex> g(kept.lock);
            return kept.tokens;
        };
        oauth.tokens_save = [&kept](std::string_view json) {
            std::lock_guard<std::mutex> g(kept.lock);
            kept.tokens = std::string(json);
            ++kept.saves;
        };
        mo.oauth = oauth;
        for (int round = 0; round < 2; round++) {
            Registry reg;
            auto mount = reg.try_mount_mcp(mo);  // not thrown: a failure must not skip ~OAuthServer
            CHECK(mount.has_value());
            if (!mount) {
                std::fprintf(stderr, "round %d: %s\n", round, mount.error().what());
                continue;
            }
            auto r = reg.execute(call("1", "o_whoami"));
            CHECK(r.at(0).outcome == Outcome::ok);
            CHECK(r.at(0).content.rfind("at-", 0) == 0);  // the access token the server issued
        }
    }
    // One registration and one authorization for both mounts: the second
    // used the tokens the first saved.
    std::string stats = server.stats();
    CHECK_CONTAINS(stats, R"("registrations": 1)");
    CHECK_CONTAINS(stats, R"("authorizations": 1)");
    CHECK(authorizations == 1);
    {
        std::lock_guard<std::mutex> g(kept.lock);
        CHECK_CONTAINS(kept.tokens, "access_token");
        CHECK(kept.saves >= 1);
    }
    // Every copy of the callbacks destroyed, none twice (capstan may let
    // go of its copy on one of its threads, soon after the unmount).
    CHECK(check::wait_until([&] { return live == 0; }, 10000));
    CHECK(twice == 0);
}

static void a_refused_or_failed_authorization_fails_the_mount_saying_why() {
    OAuthServer server;
    CHECK(!server.base.empty());
    if (server.base.empty()) return;
    std::atomic<int> live{0}, twice{0};
    Registry reg;
    {
        capstan::McpMountOptions mo = oauth_mount(server);
        capstan::McpOAuth oauth;
        oauth.redirect_uri = "http://127.0.0.1:9/callback";
        check::Probe probe(live, twice);
        oauth.authorize = [probe](std::string_view) -> std::string { throw std::runtime_error("no browser here"); };
        mo.oauth = oauth;
        auto thrown = reg.try_mount_mcp(mo);
        CHECK(!thrown && thrown.error().status() == CAPSTAN_ERR_MCP_CONNECT);
        if (!thrown) {
            CHECK_CONTAINS(thrown.error().what(), "OAuth authorization was refused");
            CHECK_CONTAINS(thrown.error().what(), "the authorize callback threw: no browser here");
        }
        mo.oauth->authorize = [probe](std::string_view) { return std::string(); };
        auto refused = reg.try_mount_mcp(mo);
        CHECK(!refused && refused.error().status() == CAPSTAN_ERR_MCP_CONNECT);
        if (!refused) CHECK_CONTAINS(refused.error().what(), "OAuth authorization was refused");
        // Bad options: capstan refuses them, and still lets go of the callbacks.
        mo.oauth->redirect_uri.clear();
        CHECK(reg.try_mount_mcp(mo).error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
        capstan::McpMountOptions command;
        command.command = {"true"};
        command.oauth = mo.oauth;
        command.oauth->redirect_uri = "http://127.0.0.1:9/callback";
        CHECK(reg.try_mount_mcp(command).error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    }
    CHECK(check::wait_until([&] { return live == 0; }, 10000));
    CHECK(twice == 0);
    CHECK(reg.tools_json(Format::describe).find("o_whoami") == std::string::npos);  // nothing registered
}

// The test-only private key of the test server's client keyed-1.
static std::string client_key() {
    std::string pem;
    if (FILE *f = std::fopen((repo_root() + "tests/fixtures/oauth/client_key.pem").c_str(), "rb")) {
        char buf[512];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) pem.append(buf, n);
        std::fclose(f);
    }
    return pem;
}

static void a_client_key_mounts_with_the_client_credentials_grant_signed_by_it() {
    OAuthServer server;
    CHECK(!server.base.empty());
    if (server.base.empty()) return;
    std::string key = client_key();
    CHECK_CONTAINS(key, "BEGIN PRIVATE KEY");
    {
        Registry reg;
        capstan::McpMountOptions mo = oauth_mount(server);
        capstan::McpOAuth oauth;
        oauth.client_id = "keyed-1";
        oauth.client_key = key;
        mo.oauth = oauth;
        auto mount = reg.try_mount_mcp(mo);
        CHECK(mount.has_value());
        if (!mount) std::fprintf(stderr, "keyed-1: %s\n", mount.error().what());
        auto r = reg.execute(call("1", "o_whoami"));
        CHECK(r.at(0).outcome == Outcome::ok);
        CHECK(r.at(0).content.rfind("at-", 0) == 0);
    }
    // The server checked the ES256 client assertion with keyed-1's public
    // key: no secret, no user, no registration.
    std::string stats = server.stats();
    CHECK_CONTAINS(stats, R"("key_grants": 1)");
    CHECK_CONTAINS(stats, R"("client_credentials_grants": 0)");
    CHECK_CONTAINS(stats, R"("authorizations": 0)");
    CHECK_CONTAINS(stats, R"("registrations": 0)");
}

static void a_workload_assertion_mounts_with_the_jwt_bearer_grant_and_a_refusal_fails_the_mount() {
    OAuthServer server;
    CHECK(!server.base.empty());
    if (server.base.empty()) return;
    std::atomic<int> live{0}, twice{0};
    std::mutex lock;
    std::vector<std::string> audiences;
    {
        Registry reg;
        capstan::McpMountOptions mo = oauth_mount(server);
        capstan::McpOAuth oauth;
        check::Probe probe(live, twice);
        oauth.assertion = [probe, &lock, &audiences](std::string_view audience) {
            std::lock_guard<std::mutex> g(lock);
            audiences.emplace_back(audience);
            return "workload:" + std::string(audience);  // what the test server takes from its issuer's workload
        };
        mo.oauth = oauth;
        {
            auto mount = reg.try_mount_mcp(mo);
            CHECK(mount.has_value());
            if (!mount) std::fprintf(stderr, "workload: %s\n", mount.error().what());
            auto r = reg.execute(call("1", "o_whoami"));
            CHECK(r.at(0).outcome == Outcome::ok);
            CHECK(r.at(0).content.rfind("at-", 0) == 0);
        }
        {
            std::lock_guard<std::mutex> g(lock);
            CHECK(audiences.size() == 1);
            CHECK(!audiences.empty() && audiences[0] == server.base);  // the authorization server's issuer
        }
        std::string stats = server.stats();
        CHECK_CONTAINS(stats, R"("jwt_bearer_grants": 1)");
        CHECK_CONTAINS(stats, R"("key_grants": 0)");
        CHECK_CONTAINS(stats, R"("authorizations": 0)");

        // A grant the authorization server refuses fails the mount with
        // its error, and is not tried again.
        mo.oauth->scopes = "rejected";
        auto refused = reg.try_mount_mcp(mo);
        CHECK(!refused && refused.error().status() == CAPSTAN_ERR_MCP_CONNECT);
        if (!refused) CHECK_CONTAINS(refused.error().what(), "invalid_scope");
        CHECK_CONTAINS(server.stats(), R"("jwt_bearer_grants": 1)");

        // The host refusing: an exception (named in the error) or no JWT.
        mo.oauth->scopes.clear();
        mo.oauth->assertion = [probe](std::string_view) -> std::string { throw std::runtime_error("no platform token"); };
        auto thrown = reg.try_mount_mcp(mo);
        CHECK(!thrown && thrown.error().status() == CAPSTAN_ERR_MCP_CONNECT);
        if (!thrown) CHECK_CONTAINS(thrown.error().what(), "the assertion callback threw: no platform token");
        mo.oauth->assertion = [probe](std::string_view) { return std::string(); };
        auto none = reg.try_mount_mcp(mo);
        CHECK(!none && none.error().status() == CAPSTAN_ERR_MCP_CONNECT);
        if (!none) CHECK_CONTAINS(none.error().what(), "assertion callback returned 0");
        mo.oauth->assertion = [probe](std::string_view) { return std::string(CAPSTAN_MCP_ASSERTION_MAX + 1, 'x'); };
        auto long_one = reg.try_mount_mcp(mo);
        CHECK(!long_one && long_one.error().status() == CAPSTAN_ERR_MCP_CONNECT);
        if (!long_one) CHECK_CONTAINS(long_one.error().what(), "longer than CAPSTAN_MCP_ASSERTION_MAX");
        CHECK_CONTAINS(server.stats(), R"("jwt_bearer_grants": 1)");
        CHECK(reg.tools_json(Format::describe).find("o_whoami") == std::string::npos);  // nothing registered
    }
    CHECK(check::wait_until([&] { return live == 0; }, 10000));
    CHECK(twice == 0);
}

static void grants_without_a_user_refuse_bad_options_naming_the_problem() {
    Registry reg;
    std::atomic<int> live{0}, twice{0};
    {
        check::Probe probe(live, twice);
        capstan::McpIdentityProvider idp;
        idp.issuer = "https://idp.example";
        idp.token_endpoint = "https://idp.example/token";
        idp.client_id = "host";
        struct Case {
            const char *name, *why;
            capstan::McpOAuth oauth;
        };
        std::vector<Case> cases(5);
        cases[0] = {"an identity provider without assertion", "opts.oauth_idp_* needs opts.oauth_assertion", {}};
        cases[0].oauth.client_id = "c";
        cases[0].oauth.client_secret = "s";
        cases[0].oauth.identity_provider = idp;
        cases[1] = {"half an identity provider", "go together", {}};
        cases[1].oauth.client_id = "c";
        cases[1].oauth.assertion = [probe](std::string_view) { return std::string("never asked"); };
        cases[1].oauth.identity_provider = capstan::McpIdentityProvider{};
        cases[1].oauth.identity_provider->issuer = "https://idp.example";
        cases[2] = {"a key without a client id", "opts.oauth_client_key needs opts.oauth_client_id", {}};
        cases[2].oauth.client_key = client_key();
        cases[3] = {"a key that is not PEM", "opts.oauth_client_key: ", {}};
        cases[3].oauth.client_id = "keyed-1";
        cases[3].oauth.client_key = "not a key";
        cases[4] = {"PEM that is no key", "opts.oauth_client_key: ", {}};
        cases[4].oauth.client_id = "keyed-1";
        cases[4].oauth.client_key = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        for (const Case &c : cases) {
            capstan::McpMountOptions mo;
            mo.url = "http://127.0.0.1:9/mcp";
            mo.max_reconnects = capstan::never_reconnect;
            mo.oauth = c.oauth;
            auto m = reg.try_mount_mcp(mo);
            CHECK(!m && m.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
            if (!m) CHECK_CONTAINS(m.error().what(), c.why);
            if (m || std::string(m.error().what()).find(c.why) == std::string::npos) std::fprintf(stderr, "%s\n", c.name);
        }
        capstan::McpMountOptions nul;
        nul.url = "http://127.0.0.1:9/mcp";
        nul.oauth = capstan::McpOAuth{};
        nul.oauth->client_id = "c";
        nul.oauth->client_key = std::string("a\0b", 3);
        CHECK(reg.try_mount_mcp(nul).error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
        nul.oauth->client_key.clear();
        nul.oauth->identity_provider = idp;
        nul.oauth->identity_provider->client_secret = std::string("a\0b", 3);
        CHECK(reg.try_mount_mcp(nul).error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
    }
    // capstan let go of every copy of the callbacks, once.
    CHECK(check::wait_until([&] { return live == 0; }, 10000));
    CHECK(twice == 0);
}

// A served tool that asks for a name (thrown InputRequired) until it gets one.
static const char *ask_name =
    R"({"name":{"method":"elicitation/create","params":{"message":"What is your name?",)"
    R"("requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}})";

static void greeter(Registry &reg) {
    reg.add({"greet", "Greets the user by name, asking for it first.", ""}, [](capstan::Call &call) {
        std::string input(call.input());
        std::string who = http::json_string(input, "name");
        if (input.find(R"("action":"accept")") == std::string::npos || who.empty())
            throw capstan::InputRequired(ask_name, "round-1");
        (void)call.return_text("Hello, " + who + "! (state " + http::json_string(input, "requestState") + ")");
    });
}

// What a host's answer was called with.
struct Asked {
    std::mutex lock;
    std::vector<std::string> tools;
    int bad = 0;  // requests that were not the tool's
    void record(std::string_view tool, std::string_view method, std::string_view params) {
        std::lock_guard<std::mutex> g(lock);
        tools.emplace_back(tool);
        if (method != "elicitation/create" || params.find("What is your name?") == std::string_view::npos) ++bad;
    }
};

static capstan::McpMountOptions answering(const std::string &url, const char *version, capstan::McpInput input) {
    capstan::McpMountOptions mo;
    mo.url = url;
    mo.prefix = "in_";
    mo.protocol_version = version;
    mo.max_reconnects = capstan::never_reconnect;
    mo.connect_timeout = 60s;
    mo.call_timeout = 60s;
    mo.input = std::move(input);
    return mo;
}

static void a_mounts_host_answers_what_the_server_asks_in_both_eras() {
    Registry served;
    greeter(served);
    capstan::McpServer srv = served.serve_mcp({});
    std::atomic<int> live{0}, twice{0};
    {
        Registry reg;
        // "": 2026-07-28 (an InputRequiredResult, answered, the call sent
        // again); 2025-11-25: elicitation/create mid-call, answered in place.
        for (const char *version : {"", "2025-11-25"}) {
            Asked asked;
            check::Probe probe(live, twice);
            capstan::McpInput input;
            input.methods = capstan::McpInputMethod::elicitation;
            input.answer = [probe, &asked](std::string_view tool, std::string_view method, std::string_view params) {
                asked.record(tool, method, params);
                return std::string(R"({"action":"accept","content":{"name":"Ada"}})");
            };
            {
                auto mount = reg.try_mount_mcp(answering(srv.url(), version, std::move(input)));
                CHECK(mount.has_value());
                if (!mount) {
                    std::fprintf(stderr, "%s: %s\n", version, mount.error().what());
                    continue;
                }
                auto r = reg.execute(call("1", "in_greet"));
                CHECK(r.at(0).outcome == Outcome::ok);
                CHECK(r.at(0).content == "Hello, Ada! (state round-1)");
            }  // unmounted
            std::lock_guard<std::mutex> g(asked.lock);
            // A 2026-07-28 request belongs to the call; an older one names none.
            CHECK(asked.tools.size() == 1);
            CHECK(!asked.tools.empty() && asked.tools[0] == (*version ? "" : "in_greet"));
            CHECK(asked.bad == 0);
        }
    }
    CHECK(check::wait_until([&] { return live == 0; }, 10000));
    CHECK(twice == 0);
}

static void a_host_that_gives_no_answer_fails_the_call_without_a_crash() {
    Registry served;
    greeter(served);
    capstan::McpServer srv = served.serve_mcp({});
    std::atomic<int> live{0}, twice{0}, calls{0};
    Registry reg;
    std::string huge = R"({"action":"accept","content":{"name":")" + std::string(CAPSTAN_MCP_INPUT_ANSWER_MAX, 'a') + "\"}}";
    std::vector<std::function<std::string()>> answers = {
        [] { return std::string(); },
        []() -> std::string { throw std::runtime_error("the user closed the form"); },
        []() -> std::string { throw 42; },
        [&huge] { return huge; },
    };
    for (auto &give : answers) {
        check::Probe probe(live, twice);
        capstan::McpInput input;
        input.methods = capstan::McpInputMethod::elicitation | capstan::McpInputMethod::roots;
        input.answer = [probe, &give, &calls](std::string_view, std::string_view, std::string_view) {
            ++calls;
            return give();
        };
        auto mount = reg.try_mount_mcp(answering(srv.url(), "", std::move(input)));
        CHECK(mount.has_value());
        if (!mount) continue;
        auto r = reg.execute(call("1", "in_greet"));
        CHECK(r.at(0).outcome == Outcome::tool_error);
        CHECK_CONTAINS(r.at(0).content, "the host gave no answer to elicitation/create");
    }
    CHECK(calls == 4);
    // Bad options: capstan refuses them, and still lets go of the callback.
    {
        check::Probe probe(live, twice);
        capstan::McpInput input;
        input.methods = capstan::McpInputMethod::sampling;  // and no answer
        auto refused = reg.try_mount_mcp(answering(srv.url(), "", input));
        CHECK(!refused && refused.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
        if (!refused) CHECK_CONTAINS(refused.error().what(), "without opts.input_answer");
        input.methods = {};
        input.answer = [probe](std::string_view, std::string_view, std::string_view) { return std::string("{}"); };
        refused = reg.try_mount_mcp(answering(srv.url(), "", input));
        CHECK(!refused && refused.error().status() == CAPSTAN_ERR_INVALID_ARGUMENT);
        if (!refused) CHECK_CONTAINS(refused.error().what(), "opts.input_methods");
    }
    CHECK(reg.tools_json(Format::describe).find("in_greet") == std::string::npos);  // nothing registered
    CHECK(check::wait_until([&] { return live == 0; }, 10000));
    CHECK(twice == 0);
}

static int serve_stdio() {
    Registry reg;
    add_tool(reg);
    capstan::McpServerOptions so;
    so.name = "cpp-test";
    return reg.try_serve_mcp_stdio(so) ? 0 : 1;
}

int main(int argc, char **argv) {
    // No SIGPIPE handling here on purpose: capstan's MCP threads block it
    // (a client closing its socket while the server writes once killed this
    // test, 1 run in 8 under load).
    if (argc > 1 && std::strcmp(argv[1], "--serve-stdio") == 0) return serve_stdio();
    check::watchdog(120);
    self_exe = argv[0];
    bad_options_are_refused_before_capstan_sees_them();
    mcp_meta_reaches_the_exports_and_the_output_schema_is_checked();
    if (!has_mcp()) {
        std::printf("test_mcp: the library was built without MCP; serving and mounting not tested\n");
        return check::report("test_mcp");
    }
    a_server_on_port_0_is_mounted_in_another_registry();
    mcp_meta_is_served_in_tools_list();
    the_servers_tools_meta_reaches_a_mount_and_bad_meta_is_refused();
    a_command_serving_stdio_is_mounted();
    an_oauth_server_is_mounted_through_the_callbacks_and_the_kept_tokens_serve_the_next_mount();
    a_refused_or_failed_authorization_fails_the_mount_saying_why();
    a_client_key_mounts_with_the_client_credentials_grant_signed_by_it();
    a_workload_assertion_mounts_with_the_jwt_bearer_grant_and_a_refusal_fails_the_mount();
    grants_without_a_user_refuse_bad_options_naming_the_problem();
    a_mounts_host_answers_what_the_server_asks_in_both_eras();
    a_host_that_gives_no_answer_fails_the_call_without_a_crash();
    return check::report("test_mcp");
}
