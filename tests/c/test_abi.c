/* The ABI rules of 0.4 (issue #25) as a C host meets them: a flag a
 * function does not use is INVALID_ARGUMENT naming the flag (also one of
 * another family: a tool flag given to an export); a struct_size
 * larger than the library knows is accepted only when the unknown tail is
 * zero (else INVALID_ARGUMENT naming the struct); every options struct has an
 * init function equal to its _INIT macro; the version as one number; the
 * feature mask. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>

#include "check.h"
#include "support.h"

static const char *CALL = "{\"id\":\"1\",\"name\":\"echo\",\"arguments\":{}}";

static void echo(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}

static capstan_registry *new_registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "echo";
    def.callback = echo;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    return reg;
}

static void last_error(char *buf, size_t cap) { capstan_error_message(buf, cap); }

/* ------------------------------------------------------------------------ */
/* Flags checked per function                                                 */

static void check_refused(capstan_status st, const char *flag, const char *function) {
    char msg[512];
    last_error(msg, sizeof msg);
    CHECK_STATUS(st, CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(msg, flag);
    CHECK_CONTAINS(msg, function);
}

static void test_a_flag_the_function_does_not_use_is_invalid_argument_naming_it(void) {
    capstan_registry *reg = new_registry();
    char *out = NULL;
    capstan_exec_options o = CAPSTAN_EXEC_OPTIONS_INIT;

    /* execute: no delivery, no inline start, no early dispatch. */
    o.flags = CAPSTAN_EXEC_DELIVER_POLL;
    check_refused(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, &o, &out, NULL), "CAPSTAN_EXEC_DELIVER_POLL",
                  "capstan_registry_execute");
    o.flags = CAPSTAN_EXEC_EARLY_DISPATCH;
    check_refused(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, &o, &out, NULL), "CAPSTAN_EXEC_EARLY_DISPATCH",
                  "capstan_registry_execute");
    o.flags = CAPSTAN_EXEC_START_INLINE;
    check_refused(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, &o, &out, NULL), "CAPSTAN_EXEC_START_INLINE",
                  "capstan_registry_execute");
    CHECK(out == NULL);
    /* The flags it uses still work. */
    o.flags = CAPSTAN_EXEC_SEQUENTIAL | CAPSTAN_EXEC_STRICT_NULLS;
    CHECK_STATUS(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, &o, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    capstan_string_free(out);
    out = NULL;

    /* run_turn: as execute. */
    const char *response = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":[]}}]}";
    o.flags = CAPSTAN_EXEC_DELIVER_POLL;
    check_refused(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_OPENAI_CHAT, response, CAPSTAN_NTS, &o, &out, NULL),
                  "CAPSTAN_EXEC_DELIVER_POLL", "capstan_registry_run_turn");

    /* submit: no early dispatch (a stream's). */
    capstan_batch *b = NULL;
    o.flags = CAPSTAN_EXEC_EARLY_DISPATCH | CAPSTAN_EXEC_DELIVER_POLL;
    check_refused(capstan_batch_submit(reg, CALL, CAPSTAN_NTS, &o, NULL, NULL, &b), "CAPSTAN_EXEC_EARLY_DISPATCH",
                  "capstan_batch_submit");
    CHECK(b == NULL);
    o.flags = CAPSTAN_EXEC_DELIVER_POLL | CAPSTAN_EXEC_START_INLINE | CAPSTAN_EXEC_SEQUENTIAL;
    CHECK_STATUS(capstan_batch_submit(reg, CALL, CAPSTAN_NTS, &o, NULL, NULL, &b), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, UINT32_MAX), CAPSTAN_OK);
    capstan_batch_free(b);

    /* stream: no poll delivery, no inline start. */
    capstan_stream *s = NULL;
    o.flags = CAPSTAN_EXEC_DELIVER_POLL;
    check_refused(capstan_stream_new(reg, CAPSTAN_FORMAT_OPENAI_CHAT, &o, NULL, &s), "CAPSTAN_EXEC_DELIVER_POLL",
                  "capstan_stream_new");
    o.flags = CAPSTAN_EXEC_START_INLINE;
    check_refused(capstan_stream_new(reg, CAPSTAN_FORMAT_OPENAI_CHAT, &o, NULL, &s), "CAPSTAN_EXEC_START_INLINE",
                  "capstan_stream_new");
    CHECK(s == NULL);
    o.flags = CAPSTAN_EXEC_EARLY_DISPATCH;
    CHECK_STATUS(capstan_stream_new(reg, CAPSTAN_FORMAT_OPENAI_CHAT, &o, NULL, &s), CAPSTAN_OK);
    capstan_stream_free(s);

    /* An unknown bit is named by its value. */
    o.flags = 1u << 30;
    check_refused(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, &o, &out, NULL), "0x40000000",
                  "capstan_registry_execute");

    /* needs_approval previews any execution: every exec flag is accepted. */
    o.flags = CAPSTAN_EXEC_DELIVER_POLL | CAPSTAN_EXEC_EARLY_DISPATCH | CAPSTAN_EXEC_START_INLINE;
    CHECK_STATUS(capstan_registry_needs_approval(reg, CALL, CAPSTAN_NTS, &o, &out, NULL), CAPSTAN_OK);
    capstan_string_free(out);
    capstan_registry_free(reg);
}

/* A bit that is a flag of another field (families share bit values) is
 * named with its field; a bit no field knows is given in hex. */
static void check_named(capstan_status st, const char *flag, const char *field) {
    check_refused(st, flag, field);
}

static void test_a_flag_of_another_family_is_named(void) {
    capstan_registry *reg = new_registry();
    char *out = NULL;

    capstan_export_options e;
    CHECK_STATUS(capstan_export_options_init(&e), CAPSTAN_OK);
    e.flags = CAPSTAN_TOOL_DEFERRED;
    check_named(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_OPENAI_CHAT, &e, &out, NULL, NULL, NULL),
                "CAPSTAN_TOOL_DEFERRED", "capstan_export_options.flags");
    CHECK(out == NULL);
    e.flags = CAPSTAN_EXPORT_STRICT | (1u << 20);
    check_named(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_OPENAI_CHAT, &e, &out, NULL, NULL, NULL),
                "unknown export flags 0x100000", "capstan_export_options.flags");

    capstan_registry_options r;
    CHECK_STATUS(capstan_registry_options_init(&r), CAPSTAN_OK);
    r.flags = CAPSTAN_TOOL_WAIT_FOR_RESPONSE;
    capstan_registry *r2 = NULL;
    check_named(capstan_registry_new(&r, &r2), "CAPSTAN_TOOL_WAIT_FOR_RESPONSE", "capstan_registry_options.flags");
    CHECK(r2 == NULL);

    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "whole";
    def.callback = echo;
    /* (CAPSTAN_EXEC_WHOLE_TURN's bit is CAPSTAN_TOOL_IDEMPOTENT's now.) */
    def.flags = CAPSTAN_TOOL_SERIAL | CAPSTAN_EXEC_START_ON_WAIT;
    check_named(capstan_registry_add_tool(reg, &def), "CAPSTAN_EXEC_START_ON_WAIT", "capstan_tool_def.flags");

    capstan_search_options so;
    CHECK_STATUS(capstan_search_options_init(&so), CAPSTAN_OK);
    so.flags = CAPSTAN_HISTORY_GEMINI_SIGNATURES;
    check_named(capstan_registry_search_json(reg, "echo", CAPSTAN_NTS, &so, &out, NULL),
                "CAPSTAN_HISTORY_GEMINI_SIGNATURES", "capstan_search_options.flags");

    check_named(capstan_format_check_history(CAPSTAN_FORMAT_OPENAI_CHAT, "[]", CAPSTAN_NTS, CAPSTAN_TOOL_MAIN_THREAD,
                                             &out, NULL, NULL, NULL),
                "CAPSTAN_TOOL_MAIN_THREAD", "capstan_format_check_history");

    /* check_call and check_calls take exec flags: one they do not use is named. */
    capstan_outcome outcome = CAPSTAN_OUTCOME_OK;
    check_named(capstan_registry_check_call(reg, "echo", CAPSTAN_NTS, "{}", CAPSTAN_NTS, CAPSTAN_EXEC_SEQUENTIAL,
                                            &outcome, &out, NULL),
                "CAPSTAN_EXEC_SEQUENTIAL", "capstan_registry_check_call");
    CHECK_STATUS(capstan_registry_check_call(reg, "echo", CAPSTAN_NTS, "{}", CAPSTAN_NTS, CAPSTAN_EXEC_STRICT_NULLS,
                                             &outcome, &out, NULL),
                 CAPSTAN_OK);
    capstan_string_free(out);
    check_named(capstan_registry_check_calls(reg, "[]", CAPSTAN_NTS, CAPSTAN_EXEC_SEQUENTIAL, &out, NULL),
                "CAPSTAN_EXEC_SEQUENTIAL", "capstan_registry_check_calls");

    if (capstan_features_mask() & CAPSTAN_FEATURE_MCP_SERVER) {
        capstan_mcp_server_options m;
        CHECK_STATUS(capstan_mcp_server_options_init(&m), CAPSTAN_OK);
        m.flags = CAPSTAN_REGISTRY_COERCE;
        capstan_mcp_server *server = NULL;
        check_named(capstan_mcp_server_start(reg, &m, &server), "CAPSTAN_REGISTRY_COERCE",
                    "capstan_mcp_server_options.flags");
        CHECK(server == NULL);
    }
    capstan_registry_free(reg);
}

/* ------------------------------------------------------------------------ */
/* struct_size larger than the library knows                                  */

/* An options struct as a newer header would declare it: one field more. */
struct newer_exec_options {
    capstan_exec_options known;
    uint64_t future_field;
};

struct newer_registry_options {
    capstan_registry_options known;
    uint32_t future_field;
    uint32_t padding;
};

struct newer_tool_def {
    capstan_tool_def known;
    uint64_t future_field;
};

static atomic_int destroyed;

static void test_a_larger_struct_is_accepted_only_when_its_unknown_tail_is_zero(void) {
    capstan_registry *reg = new_registry();
    char *out = NULL;
    char msg[512];

    struct newer_exec_options n;
    memset(&n, 0, sizeof n);
    CHECK_STATUS(capstan_exec_options_init(&n.known), CAPSTAN_OK);
    n.known.struct_size = (uint32_t)sizeof n;
    n.known.flags = CAPSTAN_EXEC_SEQUENTIAL;
    CHECK_STATUS(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, &n.known, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    capstan_string_free(out);
    out = NULL;

    n.future_field = 1;
    CHECK_STATUS(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, &n.known, &out, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    last_error(msg, sizeof msg);
    CHECK_CONTAINS(msg, "capstan_exec_options");
    CHECK(out == NULL);
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, CALL, CAPSTAN_NTS, &n.known, NULL, NULL, &b),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(b == NULL);

    /* A wild struct_size is refused before anything is read past the struct. */
    n.future_field = 0;
    n.known.struct_size = 1u << 20;
    CHECK_STATUS(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, &n.known, &out, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);

    struct newer_registry_options r;
    memset(&r, 0, sizeof r);
    CHECK_STATUS(capstan_registry_options_init(&r.known), CAPSTAN_OK);
    r.known.struct_size = (uint32_t)sizeof r;
    capstan_registry *other = NULL;
    CHECK_STATUS(capstan_registry_new(&r.known, &other), CAPSTAN_OK);
    capstan_registry_free(other);
    other = NULL;
    r.future_field = 7;
    CHECK_STATUS(capstan_registry_new(&r.known, &other), CAPSTAN_ERR_INVALID_ARGUMENT);
    last_error(msg, sizeof msg);
    CHECK_CONTAINS(msg, "capstan_registry_options");
    CHECK(other == NULL);

    /* capstan_tool_def: a set unknown field refuses the tool, and destroy
     * still runs exactly once (the rule of capstan_registry_add_tool). */
    struct newer_tool_def d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(capstan_tool_def_init(&d.known), CAPSTAN_OK);
    d.known.struct_size = (uint32_t)sizeof d;
    d.known.name = "newer";
    d.known.callback = echo;
    d.known.user_data = &destroyed;
    d.known.destroy = count_destroy;
    d.future_field = 1;
    CHECK_STATUS(capstan_registry_add_tool(reg, &d.known), CAPSTAN_ERR_INVALID_ARGUMENT);
    last_error(msg, sizeof msg);
    CHECK_CONTAINS(msg, "capstan_tool_def");
    CHECK(atomic_load(&destroyed) == 1);
    d.future_field = 0;
    CHECK_STATUS(capstan_registry_add_tool(reg, &d.known), CAPSTAN_OK);
    capstan_registry_free(reg);
    CHECK(atomic_load(&destroyed) == 2);
}

/* ------------------------------------------------------------------------ */
/* Init functions, version number, features                                   */

#define SAME_AS_MACRO(type, init_fn, MACRO)                                \
    do {                                                                   \
        type from_macro = MACRO;                                           \
        type from_fn;                                                      \
        memset(&from_fn, 0xA5, sizeof from_fn);                            \
        CHECK_STATUS(init_fn(&from_fn), CAPSTAN_OK);                       \
        CHECK(from_fn.struct_size == sizeof(type));                        \
        CHECK(memcmp(&from_macro, &from_fn, sizeof(type)) == 0);           \
        CHECK_STATUS(init_fn(NULL), CAPSTAN_ERR_NULL_PARAMETER);           \
    } while (0)

static void test_init_functions_equal_the_init_macros(void) {
    /* Byte for byte where the struct has no padding; field by field else. */
    SAME_AS_MACRO(capstan_registry_options, capstan_registry_options_init, CAPSTAN_REGISTRY_OPTIONS_INIT);
    SAME_AS_MACRO(capstan_export_options, capstan_export_options_init, CAPSTAN_EXPORT_OPTIONS_INIT);
    SAME_AS_MACRO(capstan_search_options, capstan_search_options_init, CAPSTAN_SEARCH_OPTIONS_INIT);
    {
        capstan_search_tool_options so;
        memset(&so, 0xA5, sizeof so);
        CHECK_STATUS(capstan_search_tool_options_init(&so), CAPSTAN_OK);
        capstan_search_tool_options so_macro = CAPSTAN_SEARCH_TOOL_OPTIONS_INIT;
        CHECK(so.struct_size == so_macro.struct_size && so.flags == 0 && so.limit == 0 &&
              so.name == NULL && so.description == NULL);
    }
    capstan_tool_def def;
    memset(&def, 0xA5, sizeof def);
    CHECK_STATUS(capstan_tool_def_init(&def), CAPSTAN_OK);
    capstan_tool_def def_macro = CAPSTAN_TOOL_DEF_INIT;
    CHECK(def.struct_size == def_macro.struct_size && def.name == NULL && def.callback == NULL &&
          def.destroy == NULL && def.user_data == NULL && def.flags == 0 && def.timeout_ms == 0);
    capstan_exec_options e;
    memset(&e, 0xA5, sizeof e);
    CHECK_STATUS(capstan_exec_options_init(&e), CAPSTAN_OK);
    CHECK(e.struct_size == sizeof e && e.flags == 0 && e.limit == 0 && e.approved_ids == NULL &&
          e.approved_count == 0 && e.deadline_ms == 0);
    capstan_mcp_mount_options m;
    memset(&m, 0xA5, sizeof m);
    CHECK_STATUS(capstan_mcp_mount_options_init(&m), CAPSTAN_OK);
    CHECK(m.struct_size == sizeof m && m.argv == NULL && m.url == NULL);
    capstan_mcp_server_options so;
    memset(&so, 0xA5, sizeof so);
    CHECK_STATUS(capstan_mcp_server_options_init(&so), CAPSTAN_OK);
    CHECK(so.struct_size == sizeof so && so.flags == 0 && so.address == NULL);
    capstan_stream_sink sink;
    memset(&sink, 0xA5, sizeof sink);
    CHECK_STATUS(capstan_stream_sink_init(&sink), CAPSTAN_OK);
    CHECK(sink.struct_size == sizeof sink && sink.on_text == NULL && sink.on_result == NULL &&
          sink.user_data == NULL);
}

static void test_version_number_and_features(void) {
    CHECK(capstan_version_number() == CAPSTAN_VERSION_NUMBER);
    CHECK(CAPSTAN_VERSION_NUMBER ==
          CAPSTAN_VERSION_MAJOR * 1000000u + CAPSTAN_VERSION_MINOR * 1000u + CAPSTAN_VERSION_PATCH);
    char text[32];
    snprintf(text, sizeof text, "%u.%u.%u", capstan_version_number() / 1000000u,
             capstan_version_number() / 1000u % 1000u, capstan_version_number() % 1000u);
    CHECK(strcmp(text, capstan_version_string()) == 0);
    uint32_t features = capstan_features_mask();
    CHECK(features & CAPSTAN_FEATURE_STREAM);
    /* The default build has MCP; a mount with a bad option then fails for
     * that reason, not UNSUPPORTED. */
    CHECK((features & CAPSTAN_FEATURE_MCP_MOUNT) && (features & CAPSTAN_FEATURE_MCP_SERVER) &&
          (features & CAPSTAN_FEATURE_MCP_HTTP));
}

/* ------------------------------------------------------------------------ */
/* Structured errors                                                          */

static char *error_json(void) {
    char *json = NULL;
    CHECK_STATUS(capstan_error_json(&json, NULL), CAPSTAN_OK);
    return json;
}

static void test_the_last_failure_reads_as_structured_data(void) {
    char *out = NULL;
    const char *gemini = "{\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\",\"message\":\"Quota\","
                         "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\","
                         "\"retryDelay\":\"37s\"}]}}";
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_GEMINI, gemini, CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_ERR_PROVIDER_ERROR);
    char *json = error_json();
    CHECK_CONTAINS(json, "\"status\":\"CAPSTAN_ERR_PROVIDER_ERROR\"");
    CHECK_CONTAINS(json, "\"status_code\":18");
    CHECK_CONTAINS(json, "\"type\":\"RESOURCE_EXHAUSTED\"");
    CHECK_CONTAINS(json, "\"http_status\":429");
    CHECK_CONTAINS(json, "\"retry_after_ms\":37000");
    CHECK_CONTAINS(json, "\"pointer\":null");
    capstan_string_free(json);
    /* Reading it twice gives the same: it does not change the last error. */
    json = error_json();
    CHECK_CONTAINS(json, "\"http_status\":429");
    capstan_string_free(json);
    char msg[256];
    CHECK(capstan_error_message(msg, sizeof msg) > 0);
    CHECK_CONTAINS(msg, "RESOURCE_EXHAUSTED");

    /* A schema error carries the JSON Pointer of the place. */
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def;
    CHECK_STATUS(capstan_tool_def_init(&def), CAPSTAN_OK);
    def.name = "bad";
    def.callback = echo;
    def.parameters = "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"nope\"}}}";
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_SCHEMA);
    json = error_json();
    CHECK_CONTAINS(json, "\"pointer\":\"/properties/x");
    CHECK_CONTAINS(json, "\"provider\":null");
    capstan_string_free(json);

    /* A success clears it. */
    CHECK_STATUS(capstan_name_check("ok", CAPSTAN_NTS), CAPSTAN_OK);
    json = error_json();
    CHECK_CONTAINS(json, "\"status\":\"CAPSTAN_OK\"");
    CHECK_CONTAINS(json, "\"message\":\"\"");
    capstan_string_free(json);
    CHECK_STATUS(capstan_error_json(NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

int main(void) {
    test_a_flag_the_function_does_not_use_is_invalid_argument_naming_it();
    test_a_flag_of_another_family_is_named();
    test_a_larger_struct_is_accepted_only_when_its_unknown_tail_is_zero();
    test_init_functions_equal_the_init_macros();
    test_version_number_and_features();
    test_the_last_failure_reads_as_structured_data();
    return check_report("test_abi");
}
