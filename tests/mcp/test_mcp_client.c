/* capstan_mcp_mount_new / capstan_mcp_mount_free from C, run under ASan+UBSan by
 * `make mcp-client-test`: bad options, a mounted Python MCP server
 * (argv[1]: tests/mcp/fastmcp_server.py) called through capstan_registry_execute,
 * unmount with calls in flight, unmount twice and NULL, and unmount after
 * the registry was freed; OAuth mounts of tests/mcp/oauth_server.py (beside
 * it) through the host callbacks: authorized, tokens saved, a refusal, each
 * oauth_destroy run once; a served tool that asks for input, answered by a
 * mount's host through input_answer (both protocol eras, a refusal, bad
 * options, input_destroy run once). Every wait is bounded by the tools' timeouts.
 * POSIX sockets and popen for the OAuth part: this runs on Linux only. */
#define _POSIX_C_SOURCE 200809L
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "capstan.h"

static int failures = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            char msg_[512];                                                    \
            capstan_error_message(msg_, sizeof msg_);                             \
            fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n",      \
                    __FILE__, __LINE__, #cond, msg_);                          \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static const char *script;

/* The interpreter with the MCP SDK: $CAPSTAN_TEST_PYTHON (the Makefile sets
 * it to build/venv's), else python3. */
static const char *python(void) {
    const char *env = getenv("CAPSTAN_TEST_PYTHON");
    return env != NULL && env[0] != '\0' ? env : "python3";
}

static capstan_mcp_mount *mount_python(capstan_registry *reg) {
    const char *argv[] = {python(), script};
    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    opts.argv = argv;
    opts.argc = 2;
    opts.prefix = "py_";
    opts.connect_timeout_ms = 120000; /* python imports slowly on a loaded machine */
    capstan_mcp_mount *mount = NULL;
    capstan_status st = capstan_mcp_mount_new(reg, &opts, &mount);
    CHECK(st == CAPSTAN_OK);
    return st == CAPSTAN_OK ? mount : NULL;
}

static char *run(capstan_registry *reg, const char *calls) {
    char *results = NULL;
    capstan_status st = capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &results, NULL);
    CHECK(st == CAPSTAN_OK);
    return results;
}

static void *slow_calls(void *reg) {
    return run(reg, "[{\"id\":\"1\",\"name\":\"py_slow\",\"arguments\":{\"seconds\":60}},"
                    "{\"id\":\"2\",\"name\":\"py_slow\",\"arguments\":{\"seconds\":60}},"
                    "{\"id\":\"3\",\"name\":\"py_slow\",\"arguments\":{\"seconds\":60}}]");
}

static void test_bad_options_are_clear_errors(capstan_registry *reg) {
    capstan_mcp_mount *mount = NULL;
    CHECK(capstan_mcp_mount_new(reg, NULL, &mount) == CAPSTAN_ERR_NULL_PARAMETER);
    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    const char *argv[] = {"/nonexistent/mcp-server"};
    opts.argv = argv;
    opts.argc = 1;
    opts.url = "http://127.0.0.1:1/mcp";
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    opts.url = NULL;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_MCP_CONNECT);
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    CHECK(strstr(msg, "could not start") != NULL);
    opts.struct_size = 4;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(mount == NULL);
    CHECK(strcmp(capstan_status_name(CAPSTAN_ERR_MCP_CONNECT), "CAPSTAN_ERR_MCP_CONNECT") == 0);
    CHECK(strcmp(capstan_status_name(CAPSTAN_ERR_UNSUPPORTED), "CAPSTAN_ERR_UNSUPPORTED") == 0);
}

static void test_mounted_tools_answer_through_execute(capstan_registry *reg) {
    capstan_mcp_mount *mount = mount_python(reg);
    if (!mount) return;
    char *info = NULL;
    CHECK(capstan_mcp_mount_info_json(mount, &info, NULL) == CAPSTAN_OK);
    CHECK(info && strstr(info, "\"connected\":true"));
    CHECK(info && strstr(info, "\"py_add\":\"add\"") && strstr(info, "bad.name"));
    capstan_string_free(info);
    char *results = run(reg, "{\"id\":\"1\",\"name\":\"py_add\",\"arguments\":{\"a\":2,\"b\":3}}");
    CHECK(results && strstr(results, "\"content\":\"5\"") && strstr(results, "\"outcome\":\"ok\""));
    capstan_string_free(results);
    results = run(reg, "{\"id\":\"1\",\"name\":\"py_add\",\"arguments\":{\"a\":\"x\",\"b\":3}}");
    CHECK(results && strstr(results, "\"outcome\":\"invalid_arguments\""));
    capstan_string_free(results);
    CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
}

static void test_unmount_with_calls_in_flight_twice_and_null(capstan_registry *reg) {
    capstan_mcp_mount *mount = mount_python(reg);
    if (!mount) return;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, slow_calls, reg) == 0);
    /* Let the calls reach the server (not required: either way they end). */
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
    void *out = NULL;
    CHECK(pthread_join(thread, &out) == 0);
    char *results = out;
    CHECK(results && strstr(results, "\"outcome\":\"ok\"") == NULL);
    CHECK(results && strstr(results, "unmounted"));
    capstan_string_free(results);
    /* Twice: a stale handle, never a crash. NULL: nothing to do. */
    CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_ERR_STALE_HANDLE);
    char *info = NULL;
    CHECK(capstan_mcp_mount_info_json(mount, &info, NULL) == CAPSTAN_ERR_STALE_HANDLE);
    CHECK(capstan_mcp_mount_free(NULL) == CAPSTAN_OK);
    /* Its tools are gone. */
    char *tools = NULL;
    CHECK(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_DESCRIBE, NULL, &tools, NULL, NULL, NULL) == CAPSTAN_OK);
    CHECK(tools && strstr(tools, "py_") == NULL);
    capstan_string_free(tools);
}

static void test_unmount_after_registry_free(void) {
    capstan_registry *reg = NULL;
    CHECK(capstan_registry_new(NULL, &reg) == CAPSTAN_OK);
    capstan_mcp_mount *mount = mount_python(reg);
    capstan_registry_free(reg);
    if (mount) CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
}

/* One HTTP/1.0 GET of http://127.0.0.1:port/path; the response (headers
 * and body) in resp, NUL-terminated; 0 on failure. */
static size_t http_get(const char *port, const char *path, char *resp, size_t cap) {
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo("127.0.0.1", port, &hints, &ai) != 0) return 0;
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0) return 0;
    char req[8192];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n", path, port);
    size_t got = 0;
    if (n > 0 && (size_t)n < sizeof req && write(fd, req, (size_t)n) == n) {
        ssize_t r;
        while (got < cap - 1 && (r = read(fd, resp + got, cap - 1 - got)) > 0) got += (size_t)r;
    }
    close(fd);
    resp[got] = 0;
    return got;
}

typedef struct {
    atomic_int destroyed;
    int refuse;
    char tokens[CAPSTAN_MCP_TOKENS_MAX];
    size_t tokens_len;
    char audience[128];
    pthread_mutex_t lock;
} host_oauth;

/* The user's browser: follows the authorization URL (the test server
 * redirects at once) and hands back the Location, unless told to refuse. */
static size_t oauth_authorize(void *ud, const char *url, char *redirect, size_t cap) {
    host_oauth *h = ud;
    if (h->refuse) return 0;
    const char *rest = strncmp(url, "http://127.0.0.1:", 17) == 0 ? url + 17 : NULL;
    if (!rest) return 0;
    char port[16];
    size_t plen = strcspn(rest, "/");
    if (plen >= sizeof port) return 0;
    memcpy(port, rest, plen);
    port[plen] = 0;
    static char resp[16384];
    if (!http_get(port, rest + plen, resp, sizeof resp)) return 0;
    for (char *line = strstr(resp, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "Location: ", 10) == 0) {
            size_t len = strcspn(line + 12, "\r\n");
            if (len > cap) return 0;
            memcpy(redirect, line + 12, len);
            return len;
        }
    }
    return 0;
}

static size_t oauth_load(void *ud, char *buf, size_t cap) {
    host_oauth *h = ud;
    pthread_mutex_lock(&h->lock);
    size_t n = h->tokens_len <= cap ? h->tokens_len : 0;
    memcpy(buf, h->tokens, n);
    pthread_mutex_unlock(&h->lock);
    return n;
}

static void oauth_save(void *ud, const char *json, size_t len) {
    host_oauth *h = ud;
    pthread_mutex_lock(&h->lock);
    h->tokens_len = len < sizeof h->tokens ? len : 0;
    if (json) memcpy(h->tokens, json, h->tokens_len);
    pthread_mutex_unlock(&h->lock);
}

/* A workload identity token, as the test server wants it for `audience`
 * ("workload:" + its issuer); the audience asked for is kept. */
static size_t workload_assertion(void *ud, const char *audience, char *out, size_t cap) {
    host_oauth *h = ud;
    snprintf(h->audience, sizeof h->audience, "%s", audience);
    int n = snprintf(out, cap, "workload:%s", audience);
    return n > 0 && (size_t)n <= cap ? (size_t)n : 0;
}

static void oauth_destroy(void *ud) { atomic_fetch_add(&((host_oauth *)ud)->destroyed, 1); }

/* oauth_destroy may run on one of capstan's threads soon after the mount
 * let go: wait for it, bounded. */
/* `*count` reached 1 and stayed there (bounded wait: a destroy may run on
 * one of capstan's threads, soon after the unmount). */
static int once(atomic_int *count) {
    for (int i = 0; i < 200 && atomic_load(count) == 0; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return atomic_load(count) == 1;
}

static int destroyed_once(host_oauth *h) {
    return once(&h->destroyed);
}

static capstan_status mount_oauth(capstan_registry *reg, const char *port, host_oauth *h,
                                  capstan_mcp_mount **out) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%s/mcp", port);
    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    opts.url = url;
    opts.prefix = "o_";
    opts.protocol_version = "2025-11-25";
    opts.connect_timeout_ms = 60000;
    opts.oauth_authorize = oauth_authorize;
    opts.oauth_redirect_uri = "http://127.0.0.1:9/callback";
    opts.oauth_tokens_load = oauth_load;
    opts.oauth_tokens_save = oauth_save;
    opts.oauth_user_data = h;
    opts.oauth_destroy = oauth_destroy;
    return capstan_mcp_mount_new(reg, &opts, out);
}

static void test_oauth_mounts_through_the_host_callbacks(void) {
    char command[4096], port[16] = "";
    const char *slash = strrchr(script, '/');
    snprintf(command, sizeof command, "exec '%s' '%.*soauth_server.py' 0", python(),
             slash ? (int)(slash - script + 1) : 0, script);
    FILE *server = popen(command, "r");
    CHECK(server != NULL);
    if (!server) return;
    CHECK(fgets(port, sizeof port, server) != NULL);
    port[strcspn(port, "\n")] = 0;

    capstan_registry *reg = NULL;
    CHECK(capstan_registry_new(NULL, &reg) == CAPSTAN_OK);
    static host_oauth agree = {.lock = PTHREAD_MUTEX_INITIALIZER};
    capstan_mcp_mount *mount = NULL;
    CHECK(mount_oauth(reg, port, &agree, &mount) == CAPSTAN_OK);
    if (mount) {
        char *results = run(reg, "{\"id\":\"1\",\"name\":\"o_whoami\",\"arguments\":{}}");
        CHECK(results && strstr(results, "\"outcome\":\"ok\"") && strstr(results, "at-"));
        capstan_string_free(results);
        CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
    }
    CHECK(destroyed_once(&agree));
    CHECK(strstr(agree.tokens, "access_token") != NULL);

    /* A refusal: MCP_CONNECT saying so, nothing mounted, destroy once. */
    static host_oauth refuse = {.refuse = 1, .lock = PTHREAD_MUTEX_INITIALIZER};
    mount = NULL;
    CHECK(mount_oauth(reg, port, &refuse, &mount) == CAPSTAN_ERR_MCP_CONNECT);
    char msg[2048];
    capstan_error_message(msg, sizeof msg);
    CHECK(strstr(msg, "OAuth authorization was refused") != NULL);
    CHECK(mount == NULL);
    CHECK(destroyed_once(&refuse));

    /* Bad options still run oauth_destroy, once. */
    static host_oauth bad = {.lock = PTHREAD_MUTEX_INITIALIZER};
    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    opts.url = "http://127.0.0.1:9/mcp";
    opts.oauth_authorize = oauth_authorize; /* without oauth_redirect_uri */
    opts.oauth_user_data = &bad;
    opts.oauth_destroy = oauth_destroy;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(destroyed_once(&bad));

    /* A grant without a user from the host's JWT (oauth_assertion): the
     * JWT-bearer grant, for the authorization server's issuer. */
    static host_oauth workload = {.lock = PTHREAD_MUTEX_INITIALIZER};
    char url[64], issuer[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%s/mcp", port);
    snprintf(issuer, sizeof issuer, "http://127.0.0.1:%s", port);
    capstan_mcp_mount_options w = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    w.url = url;
    w.prefix = "w_";
    w.protocol_version = "2025-11-25";
    w.connect_timeout_ms = 60000;
    w.oauth_assertion = workload_assertion;
    w.oauth_user_data = &workload;
    w.oauth_destroy = oauth_destroy;
    mount = NULL;
    CHECK(capstan_mcp_mount_new(reg, &w, &mount) == CAPSTAN_OK);
    if (mount) {
        char *results = run(reg, "{\"id\":\"1\",\"name\":\"w_whoami\",\"arguments\":{}}");
        CHECK(results && strstr(results, "\"outcome\":\"ok\""));
        capstan_string_free(results);
        CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
    }
    CHECK(destroyed_once(&workload));
    CHECK(strcmp(workload.audience, issuer) == 0);

    /* The new OAuth fields' rules: INVALID_ARGUMENT naming the field, and
     * oauth_destroy once. */
    static const struct {
        const char *key, *id, *idp_issuer, *why;
        int assertion;
    } rules[] = {
        {"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "c", NULL,
         "opts.oauth_client_key", 0},
        {"k", NULL, NULL, "opts.oauth_client_key needs opts.oauth_client_id", 0},
        {NULL, NULL, "http://idp", "go together", 1},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        static host_oauth ruled[3];
        capstan_mcp_mount_options r = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
        r.url = "http://127.0.0.1:9/mcp";
        r.oauth_client_key = rules[i].key;
        r.oauth_client_id = rules[i].id;
        r.oauth_idp_issuer = rules[i].idp_issuer;
        r.oauth_assertion = rules[i].assertion ? workload_assertion : NULL;
        r.oauth_user_data = &ruled[i];
        r.oauth_destroy = oauth_destroy;
        mount = NULL;
        CHECK(capstan_mcp_mount_new(reg, &r, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
        capstan_error_message(msg, sizeof msg);
        CHECK(strstr(msg, rules[i].why) != NULL);
        CHECK(destroyed_once(&ruled[i]));
    }

    /* A binding built before the OAuth fields passes its smaller size: still
     * accepted (the mount fails only at connecting to a closed port). */
    capstan_mcp_mount_options old = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    old.struct_size = (uint32_t)offsetof(capstan_mcp_mount_options, oauth_authorize);
    old.url = "http://127.0.0.1:9/mcp";
    old.connect_timeout_ms = 2000;
    CHECK(capstan_mcp_mount_new(reg, &old, &mount) == CAPSTAN_ERR_MCP_CONNECT);

    capstan_registry_free(reg);
    char resp[256];
    http_get(port, "/quit", resp, sizeof resp);
    pclose(server);
}

/* A served tool that asks for a name (elicitation) until it gets one. */
static void ask_name(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    const char *name = input ? strstr(input, "\"name\":\"") : NULL;
    if (name == NULL) {
        const char *ask = "{\"who\":{\"method\":\"elicitation/create\",\"params\":{\"message\":"
                          "\"Your name?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":"
                          "{\"name\":{\"type\":\"string\"},\"mood\":{\"type\":\"string\","
                          "\"default\":\"fine\"}}}}}}";
        if (capstan_call_require_input(call, ask, CAPSTAN_NTS, "s1", CAPSTAN_NTS) != CAPSTAN_OK)
            capstan_call_fail(call, "could not ask", CAPSTAN_NTS);
        return;
    }
    /* The default the host left out was filled in by the mount. */
    const char *mood = strstr(input, "\"mood\":\"fine\"") ? "fine" : "?";
    char out[256];
    snprintf(out, sizeof out, "Hello, %.*s (%s)", (int)strcspn(name + 8, "\""), name + 8, mood);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
}

typedef struct {
    atomic_int asked, destroyed, with_tool;
    int refuse;
} host_input;

static size_t input_answer(void *ud, const char *tool, const char *method, const char *params,
                           size_t params_len, char *answer, size_t cap) {
    host_input *h = ud;
    atomic_fetch_add(&h->asked, 1);
    if (tool != NULL && strcmp(tool, "in_ask_name") == 0) atomic_fetch_add(&h->with_tool, 1);
    CHECK(strcmp(method, "elicitation/create") == 0);
    CHECK(params_len == strlen(params) && strstr(params, "Your name?") != NULL);
    CHECK(cap == CAPSTAN_MCP_INPUT_ANSWER_MAX);
    if (h->refuse) return 0;
    const char *accept = "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}";
    memcpy(answer, accept, strlen(accept));
    return strlen(accept);
}

static void input_destroy(void *ud) {
    atomic_fetch_add(&((host_input *)ud)->destroyed, 1);
}


static capstan_status mount_answering(capstan_registry *reg, const char *url, const char *version,
                                      host_input *h, capstan_mcp_mount **out) {
    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    opts.url = url;
    opts.prefix = "in_";
    opts.protocol_version = version;
    opts.connect_timeout_ms = 60000;
    opts.input_answer = input_answer;
    opts.input_methods = CAPSTAN_MCP_INPUT_ELICITATION;
    opts.input_user_data = h;
    opts.input_destroy = input_destroy;
    return capstan_mcp_mount_new(reg, &opts, out);
}

static void test_a_servers_input_request_is_answered_by_the_host(void) {
    capstan_registry *served = NULL, *reg = NULL;
    CHECK(capstan_registry_new(NULL, &served) == CAPSTAN_OK);
    CHECK(capstan_registry_new(NULL, &reg) == CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "ask_name";
    def.description = "Asks for a name.";
    def.parameters = "{\"type\":\"object\"}";
    def.callback = ask_name;
    CHECK(capstan_registry_add_tool(served, &def) == CAPSTAN_OK);
    capstan_mcp_server_options sopts = CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    capstan_mcp_server *server = NULL;
    char *url = NULL;
    CHECK(capstan_mcp_server_start(served, &sopts, &server) == CAPSTAN_OK);
    CHECK(server && capstan_mcp_server_url(server, &url, NULL) == CAPSTAN_OK);
    if (url == NULL) return;

    /* 2026-07-28 (an InputRequiredResult, answered, the call sent again)
     * and 2025-11-25 (elicitation/create mid-call, answered in place). */
    const char *versions[] = {NULL, "2025-11-25"};
    for (int v = 0; v < 2; v++) {
        static host_input agree[2];
        capstan_mcp_mount *mount = NULL;
        CHECK(mount_answering(reg, url, versions[v], &agree[v], &mount) == CAPSTAN_OK);
        char *results = run(reg, "{\"id\":\"1\",\"name\":\"in_ask_name\",\"arguments\":{}}");
        CHECK(results && strstr(results, "Hello, Ada (fine)") && strstr(results, "\"outcome\":\"ok\""));
        capstan_string_free(results);
        CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
        CHECK(atomic_load(&agree[v].asked) == 1);
        /* A 2026-07-28 request belongs to the call; an older one names none. */
        CHECK(atomic_load(&agree[v].with_tool) == (v == 0 ? 1 : 0));
        CHECK(once(&agree[v].destroyed));
    }

    /* A host that gives no answer: the call fails saying so. */
    static host_input refuse = {.refuse = 1};
    capstan_mcp_mount *mount = NULL;
    CHECK(mount_answering(reg, url, NULL, &refuse, &mount) == CAPSTAN_OK);
    char *results = run(reg, "{\"id\":\"1\",\"name\":\"in_ask_name\",\"arguments\":{}}");
    CHECK(results && strstr(results, "\"outcome\":\"tool_error\"") &&
          strstr(results, "the host gave no answer to elicitation/create"));
    capstan_string_free(results);
    CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
    CHECK(once(&refuse.destroyed));

    /* Bad options: INVALID_ARGUMENT naming the field, input_destroy once. */
    static host_input bad;
    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    opts.url = url;
    opts.input_answer = input_answer;
    opts.input_methods = 1u << 30; /* no such method, nor any other field's flag */
    opts.input_user_data = &bad;
    opts.input_destroy = input_destroy;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    CHECK(strstr(msg, "unknown MCP input method flags 0x40000000") != NULL);
    opts.input_methods = 0;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    opts.input_answer = NULL;
    opts.input_methods = CAPSTAN_MCP_INPUT_ROOTS;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK(strstr(msg, "without opts.input_answer") != NULL);
    CHECK(atomic_load(&bad.destroyed) == 3);

    capstan_string_free(url);
    CHECK(capstan_mcp_server_stop(server) == CAPSTAN_OK);
    capstan_mcp_server_free(server);
    capstan_registry_free(reg);
    capstan_registry_free(served);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_mcp_client path/to/fastmcp_server.py\n");
        return 2;
    }
    script = argv[1];
    capstan_registry *reg = NULL;
    CHECK(capstan_registry_new(NULL, &reg) == CAPSTAN_OK);
    test_bad_options_are_clear_errors(reg);
    test_mounted_tools_answer_through_execute(reg);
    test_unmount_with_calls_in_flight_twice_and_null(reg);
    capstan_registry_free(reg);
    test_unmount_after_registry_free();
    test_oauth_mounts_through_the_host_callbacks();
    test_a_servers_input_request_is_answered_by_the_host();
    if (failures) {
        fprintf(stderr, "test_mcp_client: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_mcp_client: ok\n");
    return 0;
}
