// The C quickstart as a C++ host writes it with the plain C header: no
// designated initializers (C++ has them only from C++20), the CAPSTAN_*_INIT
// macros instead. `make header-cxx` compiles it as C++11 and C++17 with
// -Wall -Wextra -Werror -pedantic and runs it; it exits non-zero if anything is off.
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "capstan.h"

// Flags are unsigned, like the uint32_t fields they go in.
static_assert(std::is_unsigned<decltype(CAPSTAN_TOOL_SERIAL)>::value, "tool flags are unsigned");
static_assert(std::is_unsigned<decltype(CAPSTAN_EXEC_SEQUENTIAL)>::value, "exec flags are unsigned");
static_assert(std::is_unsigned<decltype(CAPSTAN_REGISTRY_COERCE)>::value, "registry flags are unsigned");
static_assert(std::is_unsigned<decltype(CAPSTAN_EXPORT_STRICT)>::value, "export flags are unsigned");

extern "C" void add(void *, capstan_call *call) {
    const char *args = capstan_call_arguments(call, nullptr);  // validated JSON
    int a = 0, b = 0;
    std::sscanf(args, "{\"a\":%d,\"b\":%d}", &a, &b);  // use a JSON parser in real code
    char out[32];
    std::snprintf(out, sizeof out, "%d", a + b);
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, out, CAPSTAN_NTS);
}

int main() {
    if (std::strcmp(capstan_version_string(), CAPSTAN_VERSION_STRING) != 0) {
        std::fprintf(stderr, "header %s, library %s\n", CAPSTAN_VERSION_STRING, capstan_version_string());
        return 1;
    }
    capstan_registry_options reg_opts = CAPSTAN_REGISTRY_OPTIONS_INIT;
    capstan_registry *reg = nullptr;
    if (capstan_registry_new(&reg_opts, &reg) != CAPSTAN_OK) return 1;

    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "add";
    def.description = "Add two integers.";
    def.parameters = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                     "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}";
    def.callback = add;
    def.timeout_ms = 1000;
    if (capstan_registry_add_tool(reg, &def) != CAPSTAN_OK) {
        char msg[256];
        capstan_error_message(msg, sizeof msg);
        std::fprintf(stderr, "%s\n", msg);
        return 1;
    }

    capstan_export_options export_opts = CAPSTAN_EXPORT_OPTIONS_INIT;
    export_opts.flags = CAPSTAN_EXPORT_STRICT;
    char *tools = nullptr;
    if (capstan_registry_tools_json(reg, CAPSTAN_FORMAT_OPENAI_CHAT, &export_opts, &tools, nullptr, nullptr,
                             nullptr) != CAPSTAN_OK)
        return 1;
    capstan_string_free(tools);

    capstan_search_options search_opts = CAPSTAN_SEARCH_OPTIONS_INIT;
    search_opts.limit = 3;
    char *found = nullptr;
    if (capstan_registry_search_json(reg, "add", CAPSTAN_NTS, &search_opts, &found, nullptr) != CAPSTAN_OK)
        return 1;
    capstan_string_free(found);
    capstan_search_tool_options search_tool = CAPSTAN_SEARCH_TOOL_OPTIONS_INIT;
    search_tool.name = "find_tools";
    if (capstan_registry_add_search_tool(reg, &search_tool) != CAPSTAN_OK) return 1;

    capstan_stream_sink sink = CAPSTAN_STREAM_SINK_INIT;
    if (sink.struct_size != sizeof sink || sink.on_text != nullptr) return 1;

    capstan_exec_options exec_opts = CAPSTAN_EXEC_OPTIONS_INIT;
    exec_opts.flags = CAPSTAN_EXEC_SEQUENTIAL;
    const char *calls = "[{\"id\":\"1\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"},"
                        " {\"id\":\"2\",\"name\":\"add\",\"arguments\":{\"a\":\"x\"}}]";
    char *results = nullptr;
    if (capstan_registry_execute(reg, calls, CAPSTAN_NTS, &exec_opts, &results, nullptr) != CAPSTAN_OK) return 1;
    std::puts(results);
    bool ok = std::strstr(results, "\"content\":\"5\"") != nullptr &&
              std::strstr(results, "\"outcome\":\"invalid_arguments\"") != nullptr;
    capstan_string_free(results);
    capstan_mcp_server_options mcp_opts = CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    ok = ok && mcp_opts.struct_size == sizeof mcp_opts && mcp_opts.address == nullptr;
    capstan_registry_free(reg);
    return ok ? 0 : 1;
}
