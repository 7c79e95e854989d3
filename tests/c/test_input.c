/* A tool asking its caller for input through the C ABI (issue #33):
 * capstan_call_input says what the caller gave and can be asked; a caller
 * that cannot answer (here a plain execute, as a provider turn) gets
 * UNSUPPORTED from capstan_call_require_input and the call stays open for
 * the tool to complete; requests that break a rule are INVALID_ARGUMENT
 * (also leaving the call open), bad text INVALID_UTF8; after the host
 * completed the call the handle is stale. (The MCP round trip itself is
 * checked by the conformance suite and tests/mcp_server/input.rs.) */
#include <stdio.h>
#include <string.h>

#include "check.h"

static char input_seen[64];
static capstan_status refused[7];

static void asker(void *user_data, capstan_call *call) {
    (void)user_data;
    size_t len = 0;
    const char *input = capstan_call_input(call, &len);
    CHECK(input != NULL);
    if (input != NULL) {
        CHECK(len == strlen(input));
        snprintf(input_seen, sizeof input_seen, "%s", input);
    }
    const char *ask = "{\"name\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"Who?\"}}}";
    refused[0] = capstan_call_require_input(call, ask, CAPSTAN_NTS, "round-1", CAPSTAN_NTS);
    refused[1] = capstan_call_require_input(call, "{\"name\":", CAPSTAN_NTS, NULL, 0);
    refused[2] = capstan_call_require_input(call, "{\"k\":{\"method\":\"ping\"}}", CAPSTAN_NTS,
                                            NULL, 0);
    refused[3] = capstan_call_require_input(call, "{}", CAPSTAN_NTS, NULL, 0);
    refused[4] = capstan_call_require_input(call, "{}", CAPSTAN_NTS, "\xff", CAPSTAN_NTS);
    refused[5] = capstan_call_require_input(call, NULL, CAPSTAN_NTS, NULL, 0);
    /* Every refusal left the call open: the tool completes it. */
    CHECK_STATUS(capstan_call_fail(call, "cannot ask here", CAPSTAN_NTS), CAPSTAN_OK);
    refused[6] = capstan_call_require_input(call, ask, CAPSTAN_NTS, NULL, 0);
}

static void test_a_caller_that_cannot_answer_leaves_the_call_to_the_tool(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "asker";
    def.callback = asker;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"a\",\"name\":\"asker\"}", CAPSTAN_NTS,
                                          NULL, &results, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(results, "\"content\":\"cannot ask here\"");
    CHECK_CONTAINS(results, "\"is_error\":true");
    capstan_string_free(results);
    CHECK(strcmp(input_seen, "{\"canAsk\":[]}") == 0);
    CHECK(refused[0] == CAPSTAN_ERR_UNSUPPORTED);
    CHECK(refused[1] == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(refused[2] == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(refused[3] == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(refused[4] == CAPSTAN_ERR_INVALID_UTF8);
    CHECK(refused[5] == CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(refused[6] == CAPSTAN_ERR_STALE_HANDLE);
    CHECK(capstan_call_input(NULL, NULL) == NULL);
    capstan_registry_free(reg);
}

int main(void) {
    test_a_caller_that_cannot_answer_leaves_the_call_to_the_tool();
    return check_report("test_input");
}
