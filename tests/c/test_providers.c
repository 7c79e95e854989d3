/* Provider formats through the C ABI: tools out, calls in, results out, one-call
 * turns for all five formats, and the bad inputs (not JSON, wrong shape, huge). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#include "check.h"

static void add(void *user_data, capstan_call *call) {
    (void)user_data;
    int a = 0, b = 0;
    const char *args = capstan_call_arguments(call, NULL);
    if (args == NULL || sscanf(args, "{\"a\":%d,\"b\":%d}", &a, &b) != 2) {
        capstan_call_fail(call, "bad arguments", CAPSTAN_NTS);
        return;
    }
    char out[32];
    snprintf(out, sizeof out, "%d", a + b);
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, out, CAPSTAN_NTS);
}

static capstan_registry *make_registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = {
        .struct_size = sizeof def,
        .name = "add",
        .description = "Add two integers.",
        .parameters = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                      "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}",
        .callback = add,
    };
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    return reg;
}

struct turn_case {
    capstan_format fmt;
    const char *name;
    const char *response;
    const char *expect_tools;    /* substring of the tool export */
    const char *expect_messages; /* exact messages of the turn */
};

static const struct turn_case CASES[] = {
    {CAPSTAN_FORMAT_OPENAI_CHAT, "openai_chat",
     "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"call_1\","
     "\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"}}]}}]}",
     "{\"type\":\"function\",\"function\":{\"name\":\"add\"",
     "[{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"5\"}]"},
    {CAPSTAN_FORMAT_OPENAI_RESPONSES, "openai_responses",
     "{\"output\":[{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_9\",\"name\":\"add\","
     "\"arguments\":\"{\\\"a\\\":1,\\\"b\\\":1}\"}]}",
     "{\"type\":\"function\",\"name\":\"add\"",
     "[{\"type\":\"function_call_output\",\"call_id\":\"call_9\",\"output\":\"2\"}]"},
    {CAPSTAN_FORMAT_ANTHROPIC, "anthropic",
     "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"adding\"},"
     "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"add\",\"input\":{\"a\":4,\"b\":5}},"
     "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"add\",\"input\":{\"a\":\"x\"}}]}",
     "\"input_schema\"",
     NULL /* checked by substrings below */},
    {CAPSTAN_FORMAT_GEMINI, "gemini",
     "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"add\","
     "\"args\":{\"a\":10,\"b\":20}}}]}}]}",
     "\"functionDeclarations\"",
     "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"add\",\"response\":{\"output\":30}}}]}"},
    {CAPSTAN_FORMAT_MCP, "mcp",
     "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"add\","
     "\"arguments\":{\"a\":3,\"b\":4}}}",
     "\"inputSchema\"",
     NULL},
};

static void test_every_format_exports_tools_and_runs_a_turn(void) {
    capstan_registry *reg = make_registry();
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const struct turn_case *c = &CASES[i];
        char *tools = NULL;
        CHECK_STATUS(capstan_registry_tools_json(reg, c->fmt, NULL, &tools, NULL, NULL, NULL), CAPSTAN_OK);
        CHECK_CONTAINS(tools, c->expect_tools);
        capstan_string_free(tools);

        char *messages = NULL;
        size_t len = 0;
        CHECK_STATUS(capstan_registry_run_turn(reg, c->fmt, c->response, CAPSTAN_NTS, NULL, &messages, &len),
                     CAPSTAN_OK);
        CHECK(messages != NULL && strlen(messages) == len);
        if (c->expect_messages != NULL) {
            CHECK(messages != NULL && strcmp(messages, c->expect_messages) == 0);
            if (messages && strcmp(messages, c->expect_messages) != 0)
                fprintf(stderr, "%s: got %s\n", c->name, messages);
        }
        if (c->fmt == CAPSTAN_FORMAT_ANTHROPIC) {
            /* ONE user message holding every tool_result, the failed one flagged. */
            CHECK_CONTAINS(messages, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"9\"}");
            CHECK_CONTAINS(messages, "\"tool_use_id\":\"toolu_2\"");
            CHECK_CONTAINS(messages, "\"is_error\":true");
        }
        if (c->fmt == CAPSTAN_FORMAT_MCP) {
            CHECK_CONTAINS(messages, "{\"type\":\"text\",\"text\":\"7\"}");
            CHECK_CONTAINS(messages, "\"isError\":false");
        }
        capstan_string_free(messages);
    }
    capstan_registry_free(reg);
}

static void test_parse_calls_normalizes_ids_names_and_keeps_malformed_arguments(void) {
    char *calls = NULL;
    const char *chat = "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                       "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\": 1,\"}}]}";
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_OPENAI_CHAT, chat, CAPSTAN_NTS, &calls, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(calls, "\"id\":\"c1\"");
    CHECK_CONTAINS(calls, "\"arguments\":\"{\\\"a\\\": 1,\"");
    capstan_string_free(calls);

    /* executing it reports the parse error, never runs the tool with {} */
    capstan_registry *reg = make_registry();
    char *messages = NULL;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_OPENAI_CHAT, chat, CAPSTAN_NTS, NULL, &messages, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(messages, "not valid JSON");
    capstan_string_free(messages);

    /* no tool calls: an empty array */
    const char *text_only = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"}}]}";
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_OPENAI_CHAT, text_only, CAPSTAN_NTS, &calls, NULL), CAPSTAN_OK);
    CHECK(calls != NULL && strcmp(calls, "[]") == 0);
    capstan_string_free(calls);
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_ANTHROPIC, "{\"content\":[]}", CAPSTAN_NTS, NULL,
                                  &messages, NULL),
                 CAPSTAN_OK);
    capstan_string_free(messages);
    capstan_registry_free(reg);
}

static void test_format_results_from_normalized_results(void) {
    const char *results = "[{\"id\":\"a\",\"name\":\"add\",\"content\":\"5\",\"is_error\":false,\"outcome\":\"ok\"},"
                          "{\"id\":\"b\",\"name\":\"add\",\"content\":\"boom\",\"is_error\":true,\"outcome\":\"tool_error\"}]";
    char *out = NULL;
    CHECK_STATUS(capstan_format_write_results(CAPSTAN_FORMAT_OPENAI_CHAT, results, CAPSTAN_NTS, &out, NULL), CAPSTAN_OK);
    CHECK(out && strcmp(out, "[{\"role\":\"tool\",\"tool_call_id\":\"a\",\"content\":\"5\"},"
                             "{\"role\":\"tool\",\"tool_call_id\":\"b\",\"content\":\"boom\"}]") == 0);
    capstan_string_free(out);
    CHECK_STATUS(capstan_format_write_results(CAPSTAN_FORMAT_GEMINI, results, CAPSTAN_NTS, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"response\":{\"error\":\"boom\"}");
    capstan_string_free(out);
}

static void test_bad_inputs_are_clear_errors_and_write_nothing(void) {
    capstan_registry *reg = make_registry();
    char *sentinel = (char *)"untouched";
    char *out = sentinel;
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_OPENAI_CHAT, "{not json", CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_ERR_INVALID_RESPONSE);
    CHECK(out == sentinel);
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_ANTHROPIC,
                                     "{\"content\":[{\"type\":\"tool_use\",\"id\":\"x\",\"input\":{}}]}",
                                     CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_ERR_INVALID_RESPONSE);
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "name");
    CHECK(out == sentinel);
    CHECK_STATUS(capstan_format_parse_calls(99, "{}", CAPSTAN_NTS, &out, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_registry_tools_json(reg, 1000, NULL, &out, NULL, NULL, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_registry_tools_json(NULL, CAPSTAN_FORMAT_MCP, NULL, &out, NULL, NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_MCP, NULL, 5, &out, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_MCP, "{\"a\":\"\xff\"}", CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_ERR_INVALID_UTF8);
    CHECK_STATUS(capstan_format_write_results(CAPSTAN_FORMAT_ANTHROPIC, "[{\"id\":1}]", CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_ERR_INVALID_RESULTS);
    CHECK_STATUS(capstan_format_write_results(CAPSTAN_FORMAT_ANTHROPIC, "42", CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_ERR_INVALID_RESULTS);
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_GEMINI, "[", CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_ERR_INVALID_RESPONSE);
    CHECK(out == sentinel);

    /* A huge body: many calls in one response still parse and run, one result each. */
    size_t n = check_small() ? 200 : 5000;
    size_t cap = 64 + n * 128;
    char *body = malloc(cap);
    size_t pos = (size_t)snprintf(body, cap, "{\"role\":\"assistant\",\"content\":[");
    for (size_t i = 0; i < n; i++)
        pos += (size_t)snprintf(body + pos, cap - pos,
                                "%s{\"type\":\"tool_use\",\"id\":\"t%zu\",\"name\":\"add\",\"input\":{\"a\":%zu,\"b\":1}}",
                                i ? "," : "", i, i);
    snprintf(body + pos, cap - pos, "]}");
    char *messages = NULL;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_ANTHROPIC, body, CAPSTAN_NTS, NULL, &messages, NULL),
                 CAPSTAN_OK);
    size_t results = 0;
    for (const char *p = messages; p && (p = strstr(p, "\"tool_result\"")) != NULL; p++) results++;
    CHECK(results == n);
    capstan_string_free(messages);
    free(body);

    /* A huge string that is not JSON: an error, not a crash. */
    size_t big = check_small() ? 100000 : 8 * 1024 * 1024;
    char *junk = malloc(big + 1);
    memset(junk, '[', big);
    junk[big] = 0;
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_OPENAI_CHAT, junk, big, &out, NULL), CAPSTAN_ERR_INVALID_RESPONSE);
    free(junk);
    capstan_registry_free(reg);
}

static void test_strict_export_and_name_report(void) {
    capstan_registry *reg = make_registry();
    capstan_tool_def open_def = {
        .struct_size = sizeof open_def,
        .name = "open_map",
        .parameters = "{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"object\","
                      "\"additionalProperties\":{\"type\":\"string\"}}}}",
        .callback = add,
    };
    CHECK_STATUS(capstan_registry_add_tool(reg, &open_def), CAPSTAN_OK);
    capstan_export_options opts = {.struct_size = sizeof opts, .flags = CAPSTAN_EXPORT_STRICT};
    char *tools = NULL, *report = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_OPENAI_RESPONSES, &opts, &tools, NULL, &report, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(tools, "\"strict\":true");
    CHECK_CONTAINS(tools, "\"additionalProperties\":false");
    CHECK_CONTAINS(report, "open_map");
    capstan_string_free(tools);
    capstan_string_free(report);
    opts.flags = 1u << 30;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_OPENAI_RESPONSES, &opts, &tools, NULL, NULL, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);

    char *names = NULL;
    CHECK_STATUS(capstan_registry_names_json(reg, &names, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(names, "\"name\":\"add\"");
    CHECK_CONTAINS(names, "\"gemini\":true");
    capstan_string_free(names);
    capstan_registry_free(reg);
}

/* Each provider's error body: PROVIDER_ERROR with the provider's own type and
 * message in capstan_error_message, from parse_calls and run_turn alike; nothing
 * written, no call run. */
struct error_case {
    capstan_format fmt;
    const char *body;
    const char *kind;
    const char *message;
};

static const struct error_case ERRORS[] = {
    {CAPSTAN_FORMAT_OPENAI_CHAT,
     "{\"error\":{\"message\":\"Incorrect API key provided\",\"type\":\"invalid_request_error\","
     "\"param\":null,\"code\":\"invalid_api_key\"}}",
     "invalid_request_error", "Incorrect API key provided"},
    {CAPSTAN_FORMAT_OPENAI_RESPONSES,
     "{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"failed\",\"output\":[],"
     "\"error\":{\"code\":\"server_error\",\"message\":\"The server had an error\"}}",
     "server_error", "The server had an error"},
    {CAPSTAN_FORMAT_OPENAI_RESPONSES,
     "{\"type\":\"error\",\"code\":\"ERR_SOMETHING\",\"message\":\"Something went wrong\",\"param\":null}",
     "ERR_SOMETHING", "Something went wrong"},
    {CAPSTAN_FORMAT_ANTHROPIC,
     "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},"
     "\"request_id\":\"req_1\"}",
     "overloaded_error", "Overloaded"},
    {CAPSTAN_FORMAT_GEMINI,
     "{\"error\":{\"code\":429,\"message\":\"Resource has been exhausted\",\"status\":\"RESOURCE_EXHAUSTED\"}}",
     "RESOURCE_EXHAUSTED", "Resource has been exhausted"},
    {CAPSTAN_FORMAT_MCP,
     "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32602,\"message\":\"Unknown tool: nope\"}}",
     "-32602", "Unknown tool: nope"},
};

static atomic_int ran;

static void count_call(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_fetch_add(&ran, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}

static void test_provider_error_bodies_are_provider_errors_not_no_calls(void) {
    capstan_registry *reg = make_registry();
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "count";
    def.callback = count_call;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    char *sentinel = (char *)"untouched";
    for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++) {
        const struct error_case *c = &ERRORS[i];
        char *out = sentinel;
        char msg[512];
        CHECK_STATUS(capstan_format_parse_calls(c->fmt, c->body, CAPSTAN_NTS, &out, NULL), CAPSTAN_ERR_PROVIDER_ERROR);
        capstan_error_message(msg, sizeof msg);
        CHECK_CONTAINS(msg, c->kind);
        CHECK_CONTAINS(msg, c->message);
        CHECK(out == sentinel);
        CHECK_STATUS(capstan_registry_run_turn(reg, c->fmt, c->body, CAPSTAN_NTS, NULL, &out, NULL),
                     CAPSTAN_ERR_PROVIDER_ERROR);
        capstan_error_message(msg, sizeof msg);
        CHECK_CONTAINS(msg, c->message);
        CHECK(out == sentinel);
    }
    CHECK(atomic_load(&ran) == 0);
    CHECK(strcmp(capstan_status_name(CAPSTAN_ERR_PROVIDER_ERROR), "CAPSTAN_ERR_PROVIDER_ERROR") == 0);

    /* Not the provider's shape at all: INVALID_RESPONSE, never "no calls". */
    const capstan_format formats[] = {CAPSTAN_FORMAT_OPENAI_CHAT, CAPSTAN_FORMAT_OPENAI_RESPONSES,
                                      CAPSTAN_FORMAT_ANTHROPIC, CAPSTAN_FORMAT_GEMINI, CAPSTAN_FORMAT_MCP};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        char *out = sentinel;
        CHECK_STATUS(capstan_format_parse_calls(formats[i], "{\"foo\":1}", CAPSTAN_NTS, &out, NULL),
                     CAPSTAN_ERR_INVALID_RESPONSE);
        CHECK_STATUS(capstan_registry_run_turn(reg, formats[i], "{\"foo\":1}", CAPSTAN_NTS, NULL, &out, NULL),
                     CAPSTAN_ERR_INVALID_RESPONSE);
        CHECK(out == sentinel);
    }
    capstan_registry_free(reg);
}

/* One call whose input is 1e400 or nested 300 deep: that call alone is
 * invalid_arguments; the other two still run. */
static void test_one_unreadable_call_fails_alone(void) {
    capstan_registry *reg = make_registry();
    char deep[700];
    memset(deep, '[', 300);
    deep[300] = '1';
    memset(deep + 301, ']', 300);
    deep[601] = 0;
    const char *bad[] = {"1e400", deep};
    for (size_t b = 0; b < 2; b++) {
        char body[2048];
        snprintf(body, sizeof body,
                 "{\"role\":\"assistant\",\"content\":["
                 "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"add\",\"input\":{\"a\":1,\"b\":2}},"
                 "{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"add\",\"input\":{\"a\":%s,\"b\":2}},"
                 "{\"type\":\"tool_use\",\"id\":\"t3\",\"name\":\"add\",\"input\":{\"a\":3,\"b\":4}}]}",
                 bad[b]);
        char *messages = NULL;
        CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_ANTHROPIC, body, CAPSTAN_NTS, NULL, &messages, NULL),
                     CAPSTAN_OK);
        CHECK_CONTAINS(messages, "{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"3\"}");
        CHECK_CONTAINS(messages, "{\"type\":\"tool_result\",\"tool_use_id\":\"t3\",\"content\":\"7\"}");
        CHECK_CONTAINS(messages, "arguments are not valid JSON");
        CHECK_CONTAINS(messages, "\"is_error\":true");
        capstan_string_free(messages);

        char *calls = NULL;
        CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_ANTHROPIC, body, CAPSTAN_NTS, &calls, NULL), CAPSTAN_OK);
        CHECK_CONTAINS(calls, "\"id\":\"t3\"");
        capstan_string_free(calls);
    }
    capstan_registry_free(reg);
}

/* capstan_error_message: per thread, and emptied by a success. */
static void *fail_on_another_thread(void *arg) {
    (void)arg;
    char *out = NULL;
    capstan_format_parse_calls(CAPSTAN_FORMAT_ANTHROPIC, "[", CAPSTAN_NTS, &out, NULL);
    char msg[256];
    size_t n = capstan_error_message(msg, sizeof msg);
    return (void *)(uintptr_t)(n > 0 && strstr(msg, "not valid JSON") != NULL);
}

static void test_last_error_is_per_thread_and_a_success_clears_it(void) {
    char *out = NULL;
    char msg[256];
    CHECK_STATUS(capstan_format_parse_calls(99, "{}", CAPSTAN_NTS, &out, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(capstan_error_message(NULL, 0) > 0);

    /* Another thread's failure does not touch this thread's message. */
    pthread_t t;
    void *seen = NULL;
    CHECK(pthread_create(&t, NULL, fail_on_another_thread, NULL) == 0);
    CHECK(pthread_join(t, &seen) == 0);
    CHECK(seen == (void *)1);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "unknown format 99");

    /* Reading it, status names and the version leave it as it is. */
    CHECK(capstan_error_message(NULL, 0) > 0);
    (void)capstan_status_name(CAPSTAN_OK);
    (void)capstan_version_string();
    capstan_string_free(NULL);
    CHECK(capstan_error_message(NULL, 0) > 0);

    /* A success empties it. */
    CHECK_STATUS(capstan_format_parse_calls(CAPSTAN_FORMAT_ANTHROPIC, "{\"content\":[]}", CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_OK);
    capstan_string_free(out);
    msg[0] = 'x';
    CHECK(capstan_error_message(msg, sizeof msg) == 0);
    CHECK(msg[0] == 0);

    /* So does a success of a function that reports failure as NULL. */
    CHECK(capstan_call_id(NULL, NULL) == NULL);
    CHECK(capstan_error_message(NULL, 0) > 0);
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    CHECK(capstan_error_message(NULL, 0) == 0);
    capstan_registry_free(reg);
}

int main(void) {
    test_every_format_exports_tools_and_runs_a_turn();
    test_parse_calls_normalizes_ids_names_and_keeps_malformed_arguments();
    test_format_results_from_normalized_results();
    test_bad_inputs_are_clear_errors_and_write_nothing();
    test_strict_export_and_name_report();
    test_provider_error_bodies_are_provider_errors_not_no_calls();
    test_one_unreadable_call_fails_alone();
    test_last_error_is_per_thread_and_a_success_clears_it();
    return check_report("test_providers");
}
