/* A mount's reconnect policy as a C host gets it: zeroed options (the _INIT
 * macro, capstan_mcp_mount_options_init) reconnect by default, and
 * CAPSTAN_MCP_RECONNECT_NEVER drops the mount for good. The server is
 * capstan's own, on 127.0.0.1; it is stopped under the mounts, and the next
 * call through each says what the mount will do. Bounded by a watchdog. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#include "check.h"
#include "support.h"

static void echo(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}

static capstan_mcp_mount *mount(capstan_registry *reg, const char *url, const char *prefix, uint32_t max_reconnects) {
    capstan_mcp_mount_options opts;
    CHECK_STATUS(capstan_mcp_mount_options_init(&opts), CAPSTAN_OK);
    CHECK(opts.max_reconnects == 0); /* zero: the default */
    opts.url = url;
    opts.prefix = prefix;
    opts.max_reconnects = max_reconnects;
    opts.reconnect_backoff_ms = 60000; /* no attempt during the test */
    opts.call_timeout_ms = 20000;
    capstan_mcp_mount *m = NULL;
    CHECK_STATUS(capstan_mcp_mount_new(reg, &opts, &m), CAPSTAN_OK);
    return m;
}

static char *call(capstan_registry *reg, const char *name) {
    char calls[128];
    snprintf(calls, sizeof calls, "[{\"id\":\"c\",\"name\":\"%s\",\"arguments\":{}}]", name);
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_OK);
    return out;
}

int main(void) {
    const uint32_t mcp = CAPSTAN_FEATURE_MCP_SERVER | CAPSTAN_FEATURE_MCP_MOUNT | CAPSTAN_FEATURE_MCP_HTTP;
    if ((capstan_features_mask() & mcp) != mcp) {
        printf("test_mount_policy: skipped (library built without feature mcp)\n");
        return check_report("test_mount_policy");
    }
    watchdog_begin("test_mount_policy", "all", 180u);
    capstan_registry *served = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &served), CAPSTAN_OK);
    capstan_tool_def def;
    CHECK_STATUS(capstan_tool_def_init(&def), CAPSTAN_OK);
    def.name = "echo";
    def.description = "Echo.";
    def.callback = echo;
    CHECK_STATUS(capstan_registry_add_tool(served, &def), CAPSTAN_OK);
    capstan_mcp_server_options sopts;
    CHECK_STATUS(capstan_mcp_server_options_init(&sopts), CAPSTAN_OK);
    capstan_mcp_server *server = NULL;
    CHECK_STATUS(capstan_mcp_server_start(served, &sopts, &server), CAPSTAN_OK);
    char *url = NULL;
    CHECK_STATUS(capstan_mcp_server_url(server, &url, NULL), CAPSTAN_OK);

    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_mcp_mount *by_default = mount(reg, url, "d_", 0);
    capstan_mcp_mount *never = mount(reg, url, "n_", CAPSTAN_MCP_RECONNECT_NEVER);
    char *out = call(reg, "d_echo");
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    capstan_string_free(out);

    CHECK_STATUS(capstan_mcp_server_stop(server), CAPSTAN_OK);
    /* The first call after the stop finds the server gone; the mount then
     * says what it does next, in this call's result or the next one's. */
    for (int i = 0; i < 2; i++) {
        out = call(reg, "d_echo");
        CHECK_CONTAINS(out, "\"outcome\":\"tool_error\"");
        capstan_string_free(out);
        out = call(reg, "n_echo");
        CHECK_CONTAINS(out, "\"outcome\":\"tool_error\"");
        capstan_string_free(out);
    }
    out = call(reg, "d_echo");
    CHECK_CONTAINS(out, "reconnecting");
    capstan_string_free(out);
    out = call(reg, "n_echo");
    CHECK_CONTAINS(out, "no reconnect will be tried");
    capstan_string_free(out);

    CHECK_STATUS(capstan_mcp_mount_free(by_default), CAPSTAN_OK);
    CHECK_STATUS(capstan_mcp_mount_free(never), CAPSTAN_OK);
    capstan_registry_free(reg);
    capstan_mcp_server_free(server);
    capstan_registry_free(served);
    capstan_string_free(url);
    return check_report("test_mount_policy");
}
