/* The one-turn agent loop of docs/providers-and-turns.md with OpenAI Chat, kept running by `make test`. */
#include <stdio.h>
#include <string.h>

#include "capstan.h"

static void add(void *user_data, capstan_call *call) {
    (void)user_data;
    int a = 0, b = 0;
    sscanf(capstan_call_arguments(call, NULL), "{\"a\":%d,\"b\":%d}", &a, &b);
    char out[32];
    snprintf(out, sizeof out, "%d", a + b);
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, out, CAPSTAN_NTS);
}

int main(void) {
    capstan_registry *reg;
    capstan_registry_new(NULL, &reg);
    capstan_tool_def def = {
        .struct_size = sizeof def, .name = "add", .description = "Add two integers.",
        .parameters = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                      "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}",
        .callback = add,
    };
    capstan_registry_add_tool(reg, &def);

    /* tools for the request */
    char *tools; capstan_registry_tools_json(reg, CAPSTAN_FORMAT_OPENAI_CHAT, NULL, &tools, NULL, NULL, NULL);
    printf("tools: %s\n", tools);
    /* ... send the request with "tools": <tools>, get the response body ... */
    const char *response = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":["
        "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"add\","
        "\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"}}]}}]}";
    char *messages; size_t len;
    int ok = 0;
    if (capstan_registry_run_turn(reg, CAPSTAN_FORMAT_OPENAI_CHAT, response, CAPSTAN_NTS, NULL,
                         &messages, &len) == CAPSTAN_OK) {
        /* [{"role":"tool","tool_call_id":"call_1","content":"5"}]: append to the conversation */
        printf("messages: %s\n", messages);
        ok = strcmp(messages, "[{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"5\"}]") == 0;
        capstan_string_free(messages);
    }
    capstan_string_free(tools);
    capstan_registry_free(reg);
    return ok ? 0 : 1;
}
