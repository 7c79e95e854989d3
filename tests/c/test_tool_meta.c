/* MCP metadata on the tool itself (issue #33): capstan_tool_def.mcp_meta
 * carries title, annotations, outputSchema, icons and execution.taskSupport into the MCP and
 * describe exports; a result whose structured content fails the
 * outputSchema is a tool error naming the pointer; bad metadata is refused
 * naming the field; a host built before mcp_meta (a smaller struct_size)
 * still registers. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static const char META[] =
    "{\"title\":\"Addition\","
    "\"annotations\":{\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":true,"
    "\"openWorldHint\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"integer\"}},\"required\":[\"sum\"]},"
    "\"icons\":[{\"src\":\"https://example.com/add.png\",\"mimeType\":\"image/png\",\"sizes\":[\"48x48\"]}]}";

static capstan_status last_return = CAPSTAN_OK;

/* Answers {"sum": 3}, or with "lie" set {"sum": "3"}. */
static void sum(void *user_data, capstan_call *call) {
    (void)user_data;
    const char *args = capstan_call_arguments(call, NULL);
    const char *out = args != NULL && strstr(args, "\"lie\"") != NULL ? "{\"sum\":\"3\"}" : "{\"sum\":3}";
    last_return = capstan_call_return(call, CAPSTAN_CONTENT_JSON, out, CAPSTAN_NTS);
}

static void add(capstan_registry *reg, const char *name, const char *meta, uint32_t struct_size,
                capstan_status expected) {
    capstan_tool_def def;
    CHECK_STATUS(capstan_tool_def_init(&def), CAPSTAN_OK);
    if (struct_size != 0) {
        def.struct_size = struct_size;
    }
    def.name = name;
    def.description = "Adds.";
    def.callback = sum;
    def.mcp_meta = meta;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), expected);
}

static void test_metadata_reaches_the_mcp_and_describe_exports(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    add(reg, "sum", META, 0, CAPSTAN_OK);
    char *out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_MCP, NULL, &out, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"title\":\"Addition\"");
    CHECK_CONTAINS(out, "\"annotations\":{\"readOnlyHint\":true,\"destructiveHint\":false,"
                        "\"idempotentHint\":true,\"openWorldHint\":false}");
    CHECK_CONTAINS(out, "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"integer\"}}");
    CHECK_CONTAINS(out, "\"icons\":[{\"src\":\"https://example.com/add.png\",\"mimeType\":\"image/png\"");
    capstan_string_free(out);
    out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_DESCRIBE, NULL, &out, NULL, NULL, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"flags\":[],\"mcp\":{\"title\":\"Addition\",\"annotations\":{");
    capstan_string_free(out);
    capstan_registry_free(reg);
}

static void test_structured_content_failing_the_output_schema_is_a_tool_error(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    add(reg, "sum", META, 0, CAPSTAN_OK);
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"a\",\"name\":\"sum\"}", CAPSTAN_NTS, NULL, &results, NULL),
                 CAPSTAN_OK);
    CHECK(last_return == CAPSTAN_OK);
    CHECK_CONTAINS(results, "\"content\":\"{\\\"sum\\\":3}\"");
    CHECK_CONTAINS(results, "\"outcome\":\"ok\"");
    capstan_string_free(results);
    results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"b\",\"name\":\"sum\",\"arguments\":{\"lie\":true}}",
                                          CAPSTAN_NTS, NULL, &results, NULL),
                 CAPSTAN_OK);
    CHECK(last_return == CAPSTAN_ERR_INVALID_CONTENT);
    CHECK_CONTAINS(results, "Tool \\\"sum\\\" returned structuredContent that does not match its outputSchema:");
    CHECK_CONTAINS(results, "at /sum:");
    CHECK_CONTAINS(results, "\"outcome\":\"tool_error\"");
    capstan_string_free(results);
    capstan_registry_free(reg);
}

static void test_bad_metadata_is_refused_naming_the_field(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    char msg[512];
    add(reg, "a", "{not json", 0, CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "def.mcp_meta of tool \"a\" is not JSON");
    add(reg, "b", "{\"annotations\":{\"readOnlyHint\":\"yes\"}}", 0, CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "def.mcp_meta.annotations.readOnlyHint must be true or false");
    add(reg, "c", "{\"outputSchema\":{\"type\":\"array\"}}", 0, CAPSTAN_ERR_INVALID_SCHEMA);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "outputSchema must be an object schema");
    add(reg, "d", "{\"icons\":[{\"theme\":\"dark\"}]}", 0, CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "def.mcp_meta.icons[0].src must be a string");
    /* Whether the tool may run as an MCP task (execution.taskSupport). */
    add(reg, "e", "{\"execution\":{\"taskSupport\":\"sometimes\"}}", 0, CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "def.mcp_meta.execution.taskSupport must be \"forbidden\", \"optional\" or \"required\"");
    add(reg, "f", "{\"execution\":{\"taskSupport\":\"optional\"}}", 0, CAPSTAN_OK);
    char *out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_DESCRIBE, NULL, &out, NULL, NULL, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"mcp\":{\"execution\":{\"taskSupport\":\"optional\"}}");
    capstan_string_free(out);
    CHECK_STATUS(capstan_registry_remove_tool(reg, "a", CAPSTAN_NTS), CAPSTAN_ERR_NOT_FOUND);
    capstan_registry_free(reg);
}

static void test_a_host_built_before_mcp_meta_still_registers(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    /* The older struct ends where mcp_meta begins; what lies past it is
     * not read (here: metadata that would be refused). */
    add(reg, "old", "{not json", (uint32_t)offsetof(capstan_tool_def, mcp_meta), CAPSTAN_OK);
    char *out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_MCP, NULL, &out, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"name\":\"old\"");
    CHECK(out != NULL && strstr(out, "\"title\"") == NULL);
    capstan_string_free(out);
    capstan_registry_free(reg);
}

int main(void) {
    test_metadata_reaches_the_mcp_and_describe_exports();
    test_structured_content_failing_the_output_schema_is_a_tool_error();
    test_bad_metadata_is_refused_naming_the_field();
    test_a_host_built_before_mcp_meta_still_registers();
    return check_report("test_tool_meta");
}
