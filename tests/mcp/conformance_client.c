/* A capstan MCP client for the official conformance suite's client mode
 * (make mcp-client-test): `conformance client --command "conformance_client"`
 * runs it with the scenario's server URL as the last argument and the
 * scenario's name in MCP_CONFORMANCE_SCENARIO. It mounts the server
 * (initialize + tools/list), calls what the scenario asks through
 * capstan_registry_execute, and unmounts. Exit status 0 when every step worked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capstan.h"

static int fail(const char *what, capstan_status st) {
    char msg[1024];
    capstan_error_message(msg, sizeof msg);
    fprintf(stderr, "conformance_client: %s: %s: %s\n", what, capstan_status_name(st), msg);
    return 1;
}

/* Calls one mounted tool; prints the result. */
static int call(capstan_registry *reg, const char *calls) {
    char *results = NULL;
    capstan_status st = capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &results, NULL);
    if (st != CAPSTAN_OK) return fail("capstan_registry_execute", st);
    printf("%s\n", results);
    int ok = strstr(results, "\"outcome\":\"ok\"") != NULL;
    capstan_string_free(results);
    return ok ? 0 : 1;
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
    /* The suite (0.1.16) checks for a protocol version it knows. */
    opts.protocol_version = "2025-11-25";
    capstan_mcp_mount *mount = NULL;
    st = capstan_mcp_mount_new(reg, &opts, &mount);
    if (st != CAPSTAN_OK) {
        capstan_registry_free(reg);
        return fail("capstan_mcp_mount_new", st);
    }
    char *info = NULL;
    if (capstan_mcp_mount_info_json(mount, &info, NULL) == CAPSTAN_OK) {
        printf("mounted: %s\n", info);
        capstan_string_free(info);
    }

    int rc = 0;
    if (strcmp(scenario, "tools_call") == 0) {
        rc = call(reg, "{\"id\":\"1\",\"name\":\"add_numbers\",\"arguments\":{\"a\":5,\"b\":3}}");
    } else if (strcmp(scenario, "sse-retry") == 0) {
        rc = call(reg, "{\"id\":\"1\",\"name\":\"test_reconnection\",\"arguments\":{}}");
    } else if (strcmp(scenario, "elicitation-sep1034-client-defaults") == 0) {
        rc = call(reg, "{\"id\":\"1\",\"name\":\"test_client_elicitation_defaults\",\"arguments\":{}}");
    }

    st = capstan_mcp_mount_free(mount);
    if (st != CAPSTAN_OK) rc = fail("capstan_mcp_mount_free", st);
    capstan_registry_free(reg);
    return rc;
}
