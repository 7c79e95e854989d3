/* Provider-native deferred loading through the C ABI (issue #32):
 * capstan_export_options.deferred = CAPSTAN_EXPORT_DEFERRED_NATIVE exports
 * deferred tools with "defer_loading": true; OpenAI Responses gets one
 * client-executed tool_search tool whose tool_search_call capstan answers
 * with a tool_search_output item; Anthropic search results become
 * tool_reference blocks. Shapes after the openai 3.57.0 and anthropic 2.15.0
 * SDK types (tests/native_search.rs and the Python shape test check them
 * field by field). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static void sunny(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "sunny", CAPSTAN_NTS);
}

static void add(capstan_registry *reg, const char *name, const char *description, uint32_t flags) {
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = name;
    def.description = description;
    def.parameters = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}";
    def.callback = sunny;
    def.flags = flags;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
}

static capstan_registry *make_registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    add(reg, "always_here", "A tool always shown", 0);
    add(reg, "forecast_weather", "Weather forecast for a city", CAPSTAN_TOOL_DEFERRED);
    add(reg, "send_email", "Send an email to someone", CAPSTAN_TOOL_DEFERRED);
    capstan_search_tool_options st = CAPSTAN_SEARCH_TOOL_OPTIONS_INIT;
    st.limit = 1;
    CHECK_STATUS(capstan_registry_add_search_tool(reg, &st), CAPSTAN_OK);
    return reg;
}

static char *export_tools(capstan_registry *reg, capstan_format fmt, const capstan_export_options *opts) {
    char *out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, fmt, opts, &out, NULL, NULL, NULL), CAPSTAN_OK);
    return out;
}

static void openai_tool_search_is_client_executed_by_capstan(void) {
    capstan_registry *reg = make_registry();
    capstan_export_options opts = CAPSTAN_EXPORT_OPTIONS_INIT;
    CHECK(opts.deferred == CAPSTAN_EXPORT_DEFERRED_HIDE);
    opts.deferred = CAPSTAN_EXPORT_DEFERRED_NATIVE;
    char *tools = export_tools(reg, CAPSTAN_FORMAT_OPENAI_RESPONSES, &opts);
    CHECK_CONTAINS(tools, "\"name\":\"forecast_weather\"");
    CHECK_CONTAINS(tools, "\"defer_loading\":true");
    CHECK_CONTAINS(tools, "\"type\":\"tool_search\"");
    CHECK_CONTAINS(tools, "\"execution\":\"client\"");
    /* The search tool is the tool_search tool, not a function. */
    CHECK(tools != NULL && strstr(tools, "\"name\":\"tool_search\"") == NULL);
    capstan_string_free(tools);

    const char *response =
        "{\"output\":["
        "{\"type\":\"tool_search_call\",\"id\":\"tsc_1\",\"call_id\":\"call_S\",\"execution\":\"client\","
        "\"status\":\"completed\",\"arguments\":{\"query\":\"weather forecast\"}},"
        "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_F\",\"name\":\"always_here\","
        "\"arguments\":\"{}\"}]}";
    char *items = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_OPENAI_RESPONSES, response, CAPSTAN_NTS, NULL,
                                           &items, &len),
                 CAPSTAN_OK);
    CHECK_CONTAINS(items, "\"type\":\"tool_search_output\"");
    CHECK_CONTAINS(items, "\"call_id\":\"call_S\"");
    CHECK_CONTAINS(items, "\"name\":\"forecast_weather\"");
    CHECK_CONTAINS(items, "\"type\":\"function_call_output\"");
    CHECK_CONTAINS(items, "\"output\":\"sunny\"");
    CHECK(items != NULL && strstr(items, "send_email") == NULL); /* limit 1 */
    CHECK(items != NULL && strlen(items) == len);
    capstan_string_free(items);
    capstan_registry_free(reg);
}

static void anthropic_search_results_are_tool_references(void) {
    capstan_registry *reg = make_registry();
    capstan_export_options opts = CAPSTAN_EXPORT_OPTIONS_INIT;
    opts.deferred = CAPSTAN_EXPORT_DEFERRED_NATIVE;
    char *tools = export_tools(reg, CAPSTAN_FORMAT_ANTHROPIC, &opts);
    CHECK_CONTAINS(tools, "\"defer_loading\":true");
    CHECK_CONTAINS(tools, "\"name\":\"tool_search\"");
    capstan_string_free(tools);

    const char *response =
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_1\","
        "\"name\":\"tool_search\",\"input\":{\"query\":\"weather forecast\"}}]}";
    char *message = NULL;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_ANTHROPIC, response, CAPSTAN_NTS, NULL,
                                           &message, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(message, "\"content\":[{\"type\":\"tool_reference\",\"tool_name\":\"forecast_weather\"}]");
    capstan_string_free(message);
    capstan_registry_free(reg);
}

static void bad_or_old_options(void) {
    capstan_registry *reg = make_registry();
    capstan_export_options opts = CAPSTAN_EXPORT_OPTIONS_INIT;
    opts.deferred = 2;
    char *out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_ANTHROPIC, &opts, &out, NULL, NULL, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    char msg[256];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "deferred");
    /* A host built before the field passes the older size: deferred tools
     * are left out as before. */
    opts.struct_size = (uint32_t)offsetof(capstan_export_options, deferred);
    out = export_tools(reg, CAPSTAN_FORMAT_ANTHROPIC, &opts);
    CHECK(out != NULL && strstr(out, "forecast_weather") == NULL);
    capstan_string_free(out);
    /* Other formats export as without it. */
    opts.struct_size = sizeof opts;
    opts.deferred = CAPSTAN_EXPORT_DEFERRED_NATIVE;
    out = export_tools(reg, CAPSTAN_FORMAT_GEMINI, &opts);
    CHECK(out != NULL && strstr(out, "forecast_weather") == NULL);
    capstan_string_free(out);
    capstan_export_options filled;
    memset(&filled, 0xff, sizeof filled);
    filled.struct_size = sizeof filled;
    CHECK_STATUS(capstan_export_options_init(&filled), CAPSTAN_OK);
    CHECK(filled.deferred == CAPSTAN_EXPORT_DEFERRED_HIDE && filled.flags == 0);
    capstan_registry_free(reg);
}

int main(void) {
    openai_tool_search_is_client_executed_by_capstan();
    anthropic_search_results_are_tool_references();
    bad_or_old_options();
    return check_report("test_native_search");
}
