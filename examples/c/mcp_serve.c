/* docs/mcp.md's "serve my tools over MCP" example (its main, between the
 * docs: markers, is the guide's), kept
 * building and running by `make mcp-server-test`: the official Python SDK
 * starts it as a stdio MCP server, lists its tools and calls `add`. */
#include <stdio.h>

#include "capstan.h"

static void add(void *user_data, capstan_call *call) {
    (void)user_data;
    int a = 0, b = 0;
    sscanf(capstan_call_arguments(call, NULL), "{\"a\":%d,\"b\":%d}", &a, &b);
    char out[32];
    snprintf(out, sizeof out, "%d", a + b);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
}

/* docs:begin */
int main(void) {
    capstan_registry *reg;
    capstan_registry_new(NULL, &reg);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "add";
    def.description = "Add two integers.";
    def.parameters = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                     "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}";
    def.callback = add;
    capstan_registry_add_tool(reg, &def);
    capstan_status st = capstan_mcp_server_serve_stdio(reg, NULL); /* until stdin closes */
    capstan_registry_free(reg);
    return st == CAPSTAN_OK ? 0 : 1;
}
/* docs:end */
