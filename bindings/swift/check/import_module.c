/* The Swift package's C module, imported the way Swift imports it: through
 * Sources/CCapstan/module.modulemap with clang -fmodules (make
 * swift-modulemap-check). Checks that the module builds, that its functions,
 * types and macros are visible through the import, and runs one tool call so
 * that the library links. */
#pragma clang module import CCapstan

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if !defined(CAPSTAN_NTS) || !defined(CAPSTAN_TOOL_MAIN_THREAD) || !defined(CAPSTAN_OK)
#error "capstan's macros are not visible through the CCapstan module"
#endif

_Static_assert(CAPSTAN_NTS == SIZE_MAX, "CAPSTAN_NTS is SIZE_MAX");

static void hello(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "hello from a module", CAPSTAN_NTS);
}

int main(void) {
    capstan_registry *reg = NULL;
    if (capstan_registry_new(NULL, &reg) != CAPSTAN_OK) return 1;
    capstan_tool_def def;
    memset(&def, 0, sizeof def);
    def.struct_size = sizeof def;
    def.name = "hello";
    def.callback = hello;
    if (capstan_registry_add_tool(reg, &def) != CAPSTAN_OK) return 1;
    char *out = NULL;
    capstan_status st = capstan_registry_execute(reg, "{\"id\":\"1\",\"name\":\"hello\"}", CAPSTAN_NTS, NULL, &out, NULL);
    int ok = st == CAPSTAN_OK && strstr(out, "hello from a module") != NULL;
    capstan_string_free(out);
    capstan_registry_free(reg);
    printf("import_module: CCapstan imported through its module map, one call %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
