/* The C quickstart (docs/c.md), kept compiling and running by `make test`. */
#include <stdio.h>
#include <string.h>

#include "capstan.h"

static void add(void *user_data, capstan_call *call) {
    (void)user_data;
    size_t len;
    const char *args = capstan_call_arguments(call, &len); /* validated JSON */
    int a = 0, b = 0;
    sscanf(args, "{\"a\":%d,\"b\":%d}", &a, &b); /* use a JSON parser in real code */
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
        .callback = add, .timeout_ms = 1000,
    };
    if (capstan_registry_add_tool(reg, &def) != CAPSTAN_OK) {
        char msg[256]; capstan_error_message(msg, sizeof msg); fprintf(stderr, "%s\n", msg);
        return 1;
    }
    const char *calls = "[{\"id\":\"1\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"},"
                        " {\"id\":\"2\",\"name\":\"add\",\"arguments\":{\"a\":\"x\"}}]";
    char *results; size_t n;
    capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &results, &n);
    puts(results);
    int ok = strstr(results, "\"content\":\"5\"") != NULL &&
             strstr(results, "\"outcome\":\"invalid_arguments\"") != NULL;
    capstan_string_free(results);
    capstan_registry_free(reg);
    return ok ? 0 : 1;
}
