/* A C program built against an installed capstan only (tests/install/run.sh
 * copies it out of the tree and builds it through pkg-config, shared and
 * static). Makes one real tool call. Usage: consumer EXPECTED_VERSION */
#include <capstan.h>
#include <stdio.h>
#include <string.h>

static void add(void *user_data, capstan_call *call) {
    (void)user_data;
    size_t len;
    const char *args = capstan_call_arguments(call, &len);
    int a = 0, b = 0;
    if (sscanf(args, "{\"a\":%d,\"b\":%d}", &a, &b) != 2) {
        capstan_call_fail(call, "unexpected arguments", CAPSTAN_NTS);
        return;
    }
    char out[32];
    snprintf(out, sizeof out, "%d", a + b);
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, out, CAPSTAN_NTS);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s EXPECTED_VERSION\n", argv[0]);
        return 2;
    }
    if (strcmp(capstan_version_string(), argv[1]) != 0) {
        fprintf(stderr, "capstan_version_string() is %s, Cargo.toml says %s\n", capstan_version_string(), argv[1]);
        return 1;
    }
#if defined(CAPSTAN_VERSION_MAJOR) && defined(CAPSTAN_VERSION_MINOR) && defined(CAPSTAN_VERSION_PATCH)
    char macros[64];
    snprintf(macros, sizeof macros, "%d.%d.%d", (int)CAPSTAN_VERSION_MAJOR, (int)CAPSTAN_VERSION_MINOR,
             (int)CAPSTAN_VERSION_PATCH);
    if (strncmp(macros, argv[1], strlen(macros)) != 0) {
        fprintf(stderr, "the header's version macros say %s, the library %s\n", macros, argv[1]);
        return 1;
    }
#endif
    capstan_registry *reg;
    if (capstan_registry_new(NULL, &reg) != CAPSTAN_OK) {
        fprintf(stderr, "capstan_registry_new failed\n");
        return 1;
    }
    capstan_tool_def def = {
        .struct_size = sizeof def,
        .name = "add",
        .description = "Add two integers.",
        .parameters = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                      "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}",
        .callback = add,
        .timeout_ms = 10000,
    };
    if (capstan_registry_add_tool(reg, &def) != CAPSTAN_OK) {
        char msg[256];
        capstan_error_message(msg, sizeof msg);
        fprintf(stderr, "capstan_registry_add_tool: %s\n", msg);
        capstan_registry_free(reg);
        return 1;
    }
    const char *calls = "[{\"id\":\"1\",\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}]";
    char *results = NULL;
    size_t n = 0;
    int ok = capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &results, &n) == CAPSTAN_OK &&
             strstr(results, "\"content\":\"5\"") != NULL && strstr(results, "\"outcome\":\"ok\"") != NULL;
    printf("capstan %s: %s\n", capstan_version_string(), results ? results : "(no results)");
    capstan_string_free(results);
    capstan_registry_free(reg);
    return ok ? 0 : 1;
}
