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

/* Every C function the Swift layer (Sources/Capstan) calls, through the
 * module: a name the module does not export fails to compile here. */
static void *const swift_uses[] = {
    (void *)capstan_approval_arguments, (void *)capstan_approval_decide, (void *)capstan_approval_id,
    (void *)capstan_approval_tool, (void *)capstan_batch_cancel, (void *)capstan_batch_free,
    (void *)capstan_batch_submit, (void *)capstan_call_arguments, (void *)capstan_call_cancelled,
    (void *)capstan_call_fail, (void *)capstan_call_id, (void *)capstan_call_input, (void *)capstan_call_log,
    (void *)capstan_call_progress,
    (void *)capstan_call_require_input,
    (void *)capstan_call_return, (void *)capstan_call_tool, (void *)capstan_error_json,
    (void *)capstan_error_message, (void *)capstan_format_check_history, (void *)capstan_format_parse_calls,
    (void *)capstan_format_write_results, (void *)capstan_mcp_mount_free, (void *)capstan_mcp_mount_info_json,
    (void *)capstan_mcp_mount_new, (void *)capstan_mcp_server_free, (void *)capstan_mcp_server_serve_stdio,
    (void *)capstan_mcp_server_start, (void *)capstan_mcp_server_stop, (void *)capstan_mcp_server_url,
    (void *)capstan_registry_add_search_tool, (void *)capstan_registry_add_tool,
    (void *)capstan_registry_close, (void *)capstan_registry_free, (void *)capstan_registry_needs_approval,
    (void *)capstan_registry_new, (void *)capstan_registry_pump, (void *)capstan_registry_remove_tool,
    (void *)capstan_registry_run_turn, (void *)capstan_registry_search_json,
    (void *)capstan_registry_set_approver, (void *)capstan_registry_set_event_hook,
    (void *)capstan_registry_stats_json, (void *)capstan_registry_tools_json,
    (void *)capstan_registry_unload_tools, (void *)capstan_runtime_configure,
    (void *)capstan_runtime_shutdown, (void *)capstan_status_name, (void *)capstan_stream_cancel,
    (void *)capstan_stream_feed, (void *)capstan_stream_finish, (void *)capstan_stream_free,
    (void *)capstan_stream_new, (void *)capstan_string_free,
};

int main(void) {
    for (size_t i = 0; i < sizeof swift_uses / sizeof swift_uses[0]; i++) {
        if (swift_uses[i] == NULL) return 1;
    }
    /* The fields the Swift layer sets, appended in 0.4. */
    capstan_tool_def meta_def;
    memset(&meta_def, 0, sizeof meta_def);
    meta_def.mcp_meta = "{}";
    capstan_event event;
    memset(&event, 0, sizeof event);
    event.progress = 1.0;
    event.level = CAPSTAN_LOG_WARNING; /* appended after message_len */
    if (meta_def.mcp_meta == NULL || event.progress != 1.0 || event.level != 3) return 1;
    /* The OAuth fields and callback types the Swift layer sets (MCP.swift). */
    capstan_mcp_mount_options mount_opts;
    memset(&mount_opts, 0, sizeof mount_opts);
    capstan_mcp_authorize_fn authorize = NULL;
    capstan_mcp_tokens_load_fn tokens_load = NULL;
    capstan_mcp_tokens_save_fn tokens_save = NULL;
    mount_opts.oauth_authorize = authorize;
    mount_opts.oauth_tokens_load = tokens_load;
    mount_opts.oauth_tokens_save = tokens_save;
    mount_opts.oauth_redirect_uri = "http://127.0.0.1:9/callback";
    mount_opts.oauth_client_id = mount_opts.oauth_client_secret = mount_opts.oauth_client_metadata_url = NULL;
    mount_opts.oauth_scopes = NULL;
    mount_opts.oauth_user_data = NULL;
    mount_opts.oauth_destroy = NULL;
    if (mount_opts.oauth_redirect_uri == NULL || CAPSTAN_MCP_REDIRECT_MAX < 1 || CAPSTAN_MCP_TOKENS_MAX < 1) return 1;
    /* The input fields and callback type the Swift layer sets (MCP.swift). */
    capstan_mcp_input_fn input_answer = NULL;
    mount_opts.input_answer = input_answer;
    mount_opts.input_methods = CAPSTAN_MCP_INPUT_ELICITATION | CAPSTAN_MCP_INPUT_SAMPLING | CAPSTAN_MCP_INPUT_ROOTS;
    mount_opts.input_user_data = NULL;
    mount_opts.input_destroy = NULL;
    if (mount_opts.input_methods != 7 || CAPSTAN_MCP_INPUT_ANSWER_MAX < 1) return 1;
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
