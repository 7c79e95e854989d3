/* A capstan MCP client for the official conformance suite's client mode
 * (make mcp-client-test): `conformance client --command "conformance_client"`
 * runs it with the scenario's server URL as the last argument and the
 * scenario's name in MCP_CONFORMANCE_SCENARIO. It mounts the server
 * (initialize + tools/list), calls what the scenario asks through
 * capstan_registry_execute, and unmounts. Exit status 0 when every step worked.
 * The suite's CLI ignores that status when given --expected-failures: what
 * capstan itself must do (beyond the suite's checks) is reported as a line
 * "conformance_client: CHECK FAILED: ...", which `make mcp-client-test`
 * looks for in the CLI's output. */
#define _POSIX_C_SOURCE 200809L
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capstan.h"

/* The suite's authorization endpoint redirects at once (no user): the
 * authorize callback plays the user's browser with one plain HTTP GET of
 * the authorization URL and hands back its Location header. POSIX sockets:
 * this program runs only under the suite on Linux. */
static size_t authorize(void *user_data, const char *url, char *redirect, size_t cap) {
    (void)user_data;
    char host[256], port[16] = "80";
    const char *p = strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;
    if (!p) return 0;
    const char *path = strchr(p, '/');
    size_t hostlen = path ? (size_t)(path - p) : strlen(p);
    if (hostlen >= sizeof host) return 0;
    memcpy(host, p, hostlen);
    host[hostlen] = 0;
    char *colon = strrchr(host, ':');
    if (colon) {
        snprintf(port, sizeof port, "%s", colon + 1);
        *colon = 0;
    }
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &ai) != 0) return 0;
    int fd = -1;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        if (fd >= 0) close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0) return 0;
    char req[8192];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s:%s\r\n\r\n", path ? path : "/", host,
                     port);
    if (n < 0 || (size_t)n >= sizeof req || write(fd, req, (size_t)n) != n) {
        close(fd);
        return 0;
    }
    static char resp[65536];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof resp - 1 && (r = read(fd, resp + got, sizeof resp - 1 - got)) > 0) got += (size_t)r;
    close(fd);
    resp[got] = 0;
    for (char *line = strstr(resp, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "Location:", 9) == 0) {
            const char *v = line + 11;
            while (*v == ' ') v++;
            size_t len = strcspn(v, "\r\n");
            if (len > cap) return 0;
            memcpy(redirect, v, len);
            return len;
        }
    }
    return 0;
}

/* The value of "key":"..." in the suite's MCP_CONFORMANCE_CONTEXT (its
 * pre-registered client, keys, tokens), unescaped into out; NULL if absent
 * or longer than cap. */
static const char *context_value(const char *key, char *out, size_t cap) {
    const char *ctx = getenv("MCP_CONFORMANCE_CONTEXT");
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *v = ctx ? strstr(ctx, pat) : NULL;
    if (!v) return NULL;
    size_t n = 0;
    for (v += strlen(pat); *v && *v != '"'; v++) {
        char c = *v;
        if (c == '\\' && v[1]) c = *++v == 'n' ? '\n' : *v;
        if (n + 1 >= cap) return NULL;
        out[n++] = c;
    }
    out[n] = 0;
    return out;
}

/* The JWT the suite gave for a grant without a user (a workload identity
 * token, or an enterprise ID token). */
static char assertion_jwt[8192];

static size_t give_assertion(void *user_data, const char *audience, char *out, size_t cap) {
    (void)user_data;
    (void)audience;
    size_t len = strlen(assertion_jwt);
    if (len == 0 || len > cap) return 0;
    memcpy(out, assertion_jwt, len);
    return len;
}

/* The JSON object or array after "key": in text (strings and escapes
 * skipped while balancing brackets); its length in *len. NULL if absent. */
static const char *json_after(const char *text, const char *key, size_t *len) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *v = text ? strstr(text, pat) : NULL;
    if (!v) return NULL;
    v += strlen(pat);
    while (*v == ' ') v++;
    if (*v != '{' && *v != '[') return NULL;
    int depth = 0, in_string = 0;
    for (const char *p = v; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_string = 0;
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && --depth == 0) {
            *len = (size_t)(p - v) + 1;
            return v;
        }
    }
    return NULL;
}

/* The scenarios' elicitation requests (SEP-2322's rounds, SEP-1034's
 * defaults): the "user" accepts without filling anything in, and capstan
 * fills in the requested schema's defaults. */
static size_t answer(void *user_data, const char *tool, const char *method, const char *params,
                     size_t params_len, char *out, size_t cap) {
    (void)user_data;
    (void)params;
    (void)params_len;
    static const char accept[] = "{\"action\":\"accept\",\"content\":{}}";
    printf("asked %s for %s\n", method, tool ? tool : "(no call)");
    if (strcmp(method, "elicitation/create") != 0 || cap < sizeof accept - 1) return 0;
    memcpy(out, accept, sizeof accept - 1);
    return sizeof accept - 1;
}

static int fail(const char *what, capstan_status st) {
    char msg[1024];
    capstan_error_message(msg, sizeof msg);
    fprintf(stderr, "conformance_client: %s: %s: %s\n", what, capstan_status_name(st), msg);
    return 1;
}

/* Calls mounted tools with exec `flags`; prints the results; 0 if every
 * call succeeded. */
static int call_with(capstan_registry *reg, const char *calls, uint32_t flags) {
    char *results = NULL;
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.flags = flags;
    capstan_status st = capstan_registry_execute(reg, calls, CAPSTAN_NTS, &opts, &results, NULL);
    if (st != CAPSTAN_OK) return fail("capstan_registry_execute", st);
    printf("%s\n", results);
    int ok = strstr(results, "\"outcome\":\"ok\"") != NULL &&
             strstr(results, "\"is_error\":true") == NULL;
    capstan_string_free(results);
    return ok ? 0 : 1;
}

static int call(capstan_registry *reg, const char *calls) {
    return call_with(reg, calls, 0);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: conformance_client [options] SERVER_URL\n");
        return 2;
    }
    const char *scenario = getenv("MCP_CONFORMANCE_SCENARIO");
    if (!scenario) scenario = "";
    capstan_registry *reg = NULL;
    capstan_status st = capstan_registry_new(NULL, &reg);
    if (st != CAPSTAN_OK) return fail("capstan_registry_new", st);

    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    opts.url = argv[argc - 1];
    opts.connect_timeout_ms = 20000;
    opts.call_timeout_ms = 20000;
    /* The suite 0.1.16 checks for a protocol version it knows (2025-11-25);
     * the 2026-07-28 run leaves capstan's default (server/discover first). */
    const char *version = getenv("CAPSTAN_CONFORMANCE_VERSION");
    opts.protocol_version = version == NULL ? "2025-11-25" : (*version ? version : NULL);
    /* OAuth for the suite's auth scenarios (unused by the others). */
    char client_id[256], client_secret[256];
    opts.oauth_authorize = authorize;
    opts.oauth_redirect_uri = "http://localhost:3000/callback";
    opts.oauth_client_metadata_url = "https://conformance-test.local/client-metadata.json";
    opts.oauth_client_id = context_value("client_id", client_id, sizeof client_id);
    opts.oauth_client_secret = context_value("client_secret", client_secret, sizeof client_secret);
    opts.input_answer = answer;
    opts.input_methods = CAPSTAN_MCP_INPUT_ELICITATION;
    /* Grants without a user: a client key (private_key_jwt), a workload
     * identity token, or an enterprise ID token and its identity provider. */
    static char client_key[4096], idp_issuer[256], idp_token_endpoint[256], idp_client_id[256];
    opts.oauth_client_key = context_value("private_key_pem", client_key, sizeof client_key);
    if (context_value("valid_jwt", assertion_jwt, sizeof assertion_jwt) != NULL ||
        context_value("idp_id_token", assertion_jwt, sizeof assertion_jwt) != NULL)
        opts.oauth_assertion = give_assertion;
    opts.oauth_idp_issuer = context_value("idp_issuer", idp_issuer, sizeof idp_issuer);
    opts.oauth_idp_token_endpoint =
        context_value("idp_token_endpoint", idp_token_endpoint, sizeof idp_token_endpoint);
    opts.oauth_idp_client_id = context_value("idp_client_id", idp_client_id, sizeof idp_client_id);
    /* The suite's authorization server runs on a port of its own, which its
     * context does not name: this host trusts the suite's server as far as
     * the suite's client credentials, so they may go where it says. */
    if (opts.oauth_client_secret != NULL || opts.oauth_client_key != NULL) opts.oauth_client_issuer = "*";
    if (strncmp(scenario, "auth/client-credentials", 23) == 0 || opts.oauth_assertion != NULL) {
        /* Machine to machine: no user (SEP-1046, SEP-1933, SEP-990). */
        opts.oauth_authorize = NULL;
        opts.oauth_redirect_uri = NULL;
        opts.oauth_client_metadata_url = NULL;
    }
    capstan_mcp_mount *mount = NULL;
    st = capstan_mcp_mount_new(reg, &opts, &mount);
    if (st != CAPSTAN_OK) {
        int rc = fail("capstan_mcp_mount_new", st); /* before a success empties the message */
        capstan_registry_free(reg);
        return rc;
    }
    char *info = NULL;
    if (capstan_mcp_mount_info_json(mount, &info, NULL) == CAPSTAN_OK) printf("mounted: %s\n", info);

    int rc = 0;
    size_t len = 0;
    const char *tool_calls = json_after(getenv("MCP_CONFORMANCE_CONTEXT"), "toolCalls", &len);
    if (tool_calls != NULL) {
        /* The calls the scenario gives (http-custom-headers): capstan mirrors
         * their x-mcp-header arguments into Mcp-Param-* headers. */
        /* A null for an optional argument is "not given" (strict nulls),
         * so its Mcp-Param header is left out. */
        char *calls = strndup(tool_calls, len);
        rc = calls ? call_with(reg, calls, CAPSTAN_EXEC_STRICT_NULLS) : 1;
        free(calls);
    } else if (strcmp(scenario, "http-invalid-tool-headers") == 0) {
        /* The valid tool is mounted and called; the ones with an invalid
         * x-mcp-header were not mounted, so their calls never leave. */
        rc = call(reg, "{\"id\":\"1\",\"name\":\"valid_tool\",\"arguments\":{\"region\":\"us-west1\"}}");
        const char *invalid[] = {"invalid_empty_header", "invalid_object_header",
                                 "invalid_number_header", "invalid_duplicate_diff_case",
                                 "invalid_space_in_name", "invalid_control_char_name"};
        /* ... and the mount says so: each is among its problems, why named. */
        const char *problems = info ? strstr(info, "\"problems\":[") : NULL;
        for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
            char one[128];
            snprintf(one, sizeof one, "{\"id\":\"x\",\"name\":\"%s\",\"arguments\":{}}", invalid[i]);
            if (call(reg, one) == 0) { /* it must not have run */
                fprintf(stderr, "conformance_client: CHECK FAILED: %s ran\n", invalid[i]);
                rc = 1;
            }
            snprintf(one, sizeof one, "\"remote\":\"%s\"", invalid[i]);
            const char *listed = problems ? strstr(problems, one) : NULL;
            char entry[1024] = ""; /* this tool's problem entry alone */
            if (listed) snprintf(entry, sizeof entry, "%.*s", (int)strcspn(listed, "}"), listed);
            if (strstr(entry, "x-mcp-header") == NULL) {
                fprintf(stderr, "conformance_client: CHECK FAILED: %s is not among the mount's problems\n",
                        invalid[i]);
                rc = 1;
            }
        }
    } else if (strcmp(scenario, "json-schema-2020-12-preservation") == 0) {
        /* The focal tool's inputSchema as capstan exports it, echoed back. */
        char *tools = NULL;
        st = capstan_registry_tools_json(reg, CAPSTAN_FORMAT_MCP, NULL, &tools, NULL, NULL, NULL);
        const char *focal = tools ? strstr(tools, "\"name\":\"json_schema_2020_12_tool\"") : NULL;
        const char *schema = json_after(focal, "inputSchema", &len);
        if (st != CAPSTAN_OK || schema == NULL) {
            rc = 1;
        } else {
            size_t cap = len + 128;
            char *echo = malloc(cap);
            if (echo == NULL) {
                rc = 1;
            } else {
                snprintf(echo, cap, "{\"id\":\"1\",\"name\":\"json_schema_echo\",\"arguments\":{\"schema\":%.*s}}",
                         (int)len, schema);
                rc = call(reg, echo);
                free(echo);
            }
        }
        capstan_string_free(tools);
    } else if (strcmp(scenario, "tools_call") == 0) {
        rc = call(reg, "{\"id\":\"1\",\"name\":\"add_numbers\",\"arguments\":{\"a\":5,\"b\":3}}");
    } else if (strcmp(scenario, "sse-retry") == 0) {
        rc = call(reg, "{\"id\":\"1\",\"name\":\"test_reconnection\",\"arguments\":{}}");
    } else if (strcmp(scenario, "elicitation-sep1034-client-defaults") == 0) {
        rc = call(reg, "{\"id\":\"1\",\"name\":\"test_client_elicitation_defaults\",\"arguments\":{}}");
    } else if (strcmp(scenario, "sep-2322-client-request-state") == 0) {
        /* Two tools that ask (with and without a requestState), one between
         * them that must see nothing of their rounds, one whose result has
         * no resultType (complete). */
        const char *tools[] = {"test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state",
                               "test_mrtr_no_result_type"};
        for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
            char one[128];
            snprintf(one, sizeof one, "{\"id\":\"1\",\"name\":\"%s\",\"arguments\":{}}", tools[i]);
            rc |= call(reg, one);
        }
    } else if (strncmp(scenario, "auth/", 5) == 0) {
        /* The auth servers' one tool; a step-up scenario refuses it until
         * the client asks for more scopes. */
        rc = call(reg, "{\"id\":\"1\",\"name\":\"test-tool\",\"arguments\":{}}");
    }

    capstan_string_free(info);
    st = capstan_mcp_mount_free(mount);
    if (st != CAPSTAN_OK) rc = fail("capstan_mcp_mount_free", st);
    capstan_registry_free(reg);
    return rc;
}
