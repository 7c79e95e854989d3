/* size: one host program the Python conformance tests start in
 *    every mode; its tools and modes share one registry set-up. */
/* A host serving a few tools over MCP, for the Python SDK and conformance
 * tests (tests/mcp/test_server_*.py):
 *
 *   serve_host stdio                 serve on stdin/stdout until stdin closes
 *   serve_host http [TOKEN [MAX]]    serve on 127.0.0.1:<port>; prints the URL,
 *                                    stops when stdin closes
 *   serve_host conformance           http, plus the tools the conformance
 *                                    suite calls (test_simple_text,
 *                                    test_error_handling, and content
 *                                    parts: test_image_content,
 *                                    test_audio_content,
 *                                    test_embedded_resource,
 *                                    test_multiple_content_types; and
 *                                    test_tool_with_progress,
 *                                    test_tool_with_logging,
 *                                    test_logging_tool,
 *                                    test_streaming_elicitation,
 *                                    test_missing_capability,
 *                                    test_trigger_tool_change,
 *                                    json_schema_2020_12_tool,
 *                                    test_custom_header; and for the
 *                                    Tasks extension: greet,
 *                                    slow_compute (task optional),
 *                                    failing_job (task required),
 *                                    confirm_delete, multi_input,
 *                                    test_tool_with_task (tasks that
 *                                    ask for input); and
 *                                    test_input_required_result_*,
 *                                    test_sampling, test_elicitation,
 *                                    test_elicitation_sep1034_defaults,
 *                                    test_elicitation_sep1330_enums (tools
 *                                    that ask the client for input))
 *
 * Tools: echo(text), add(a, b), slow(seconds) (polls capstan_call_cancelled;
 * 300 ms timeout when seconds > 0.25 unless `patient`, which may also run as
 * an MCP task), cancels() (how many slow
 * calls saw their cancellation), guarded(action) (approval required: the
 * approver approves unless action is "delete"), stats() (JSON object, has an
 * outputSchema), grow() / shrink() (register / unregister tool "late"),
 * late(). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capstan.h"

#include <pthread.h>

static capstan_registry *reg;
static atomic_int cancels;

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Runs `body` for `call` on a thread of its own: the callback returns with
 * the call still open, as a long-running tool's does (a deferred
 * completion). capstan's server makes such a call of a task-supporting tool
 * a task at once; one completed inside its callback is answered directly. */
struct later {
    capstan_tool_fn body;
    capstan_call *call;
};

static void *later_main(void *p) {
    struct later l = *(struct later *)p;
    free(p);
    l.body(NULL, l.call);
    return NULL;
}

static void later(capstan_tool_fn body, capstan_call *call) {
    struct later *l = malloc(sizeof *l);
    pthread_t thread;
    if (l == NULL) {
        capstan_call_fail(call, "out of memory", CAPSTAN_NTS);
        return;
    }
    l->body = body;
    l->call = call;
    if (pthread_create(&thread, NULL, later_main, l) != 0) {
        free(l);
        body(NULL, call);
        return;
    }
    pthread_detach(thread);
}

/* The number after "KEY": in compact JSON arguments (the schema made sure it is there). */
static double number_arg(const char *args, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(args, pattern);
    return p ? strtod(p + strlen(pattern), NULL) : 0.0;
}

static void echo(void *ud, capstan_call *call) {
    (void)ud;
    const char *args = capstan_call_arguments(call, NULL);
    const char *p = strstr(args, "\"text\":\"");
    const char *start = p ? p + 8 : "";
    const char *end = strrchr(start, '"');
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, start, end ? (size_t)(end - start) : 0);
}

static void add(void *ud, capstan_call *call) {
    (void)ud;
    const char *args = capstan_call_arguments(call, NULL);
    char out[64];
    snprintf(out, sizeof out, "%g", number_arg(args, "a") + number_arg(args, "b"));
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
}

static void slow(void *ud, capstan_call *call) {
    (void)ud;
    double seconds = number_arg(capstan_call_arguments(call, NULL), "seconds");
    long waited = 0;
    while (waited < (long)(seconds * 1000)) {
        if (capstan_call_cancelled(call)) {
            atomic_fetch_add(&cancels, 1);
            capstan_call_fail(call, "cancelled", CAPSTAN_NTS);
            return;
        }
        sleep_ms(10);
        waited += 10;
    }
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "slow done", CAPSTAN_NTS);
}

static void slow_later(void *ud, capstan_call *call) {
    (void)ud;
    later(slow, call);
}

static void count_cancels(void *ud, capstan_call *call) {
    (void)ud;
    char out[32];
    snprintf(out, sizeof out, "%d", atomic_load(&cancels));
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
}

static void guarded(void *ud, capstan_call *call) {
    (void)ud;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS);
}

static void approver(void *ud, capstan_approval *a) {
    (void)ud;
    const char *args = capstan_approval_arguments(a, NULL);
    if (args && strstr(args, "\"delete\""))
        capstan_approval_decide(a, false, "the user said no to deleting", CAPSTAN_NTS);
    else
        capstan_approval_decide(a, true, NULL, 0);
}

static void stats(void *ud, capstan_call *call) {
    (void)ud;
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, "{\"calls\":3,\"ok\":true}", CAPSTAN_NTS);
}

/* Reports progress 1/3 "one" and 2/3 "two" (capstan_call_progress), then
 * returns how many reports were accepted. */
static void steps(void *ud, capstan_call *call) {
    (void)ud;
    int ok = capstan_call_progress(call, 1, 3, "one", CAPSTAN_NTS) == CAPSTAN_OK;
    ok += capstan_call_progress(call, 2, 3, "two", CAPSTAN_NTS) == CAPSTAN_OK;
    ok += capstan_call_progress(call, 2, 3, "not more", CAPSTAN_NTS) == CAPSTAN_ERR_INVALID_ARGUMENT;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, ok == 3 ? "three steps" : "progress misbehaved",
                        CAPSTAN_NTS);
}

static void late(void *ud, capstan_call *call) {
    (void)ud;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "late here", CAPSTAN_NTS);
}

static void simple_text(void *ud, capstan_call *call) {
    (void)ud;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT,
                        "This is a simple text response for testing.", CAPSTAN_NTS);
}

static void error_handling(void *ud, capstan_call *call) {
    (void)ud;
    capstan_call_fail(call, "This tool intentionally returns an error for testing",
                      CAPSTAN_NTS);
}

/* Content parts (CAPSTAN_CONTENT_PARTS) for the conformance suite's
 * tools-call-image/-audio/-embedded-resource/-mixed-content scenarios. */
#define RED_PIXEL_PNG                                                                      \
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
#define TINY_WAV "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="

static void parts(capstan_call *call, const char *json) {
    capstan_call_return(call, CAPSTAN_CONTENT_PARTS, json, CAPSTAN_NTS);
}

static void image_content(void *ud, capstan_call *call) {
    (void)ud;
    parts(call, "[{\"type\":\"image\",\"data\":\"" RED_PIXEL_PNG "\",\"mimeType\":\"image/png\"}]");
}

static void audio_content(void *ud, capstan_call *call) {
    (void)ud;
    parts(call, "[{\"type\":\"audio\",\"data\":\"" TINY_WAV "\",\"mimeType\":\"audio/wav\"}]");
}

static void embedded_resource(void *ud, capstan_call *call) {
    (void)ud;
    parts(call, "[{\"type\":\"resource\",\"resource\":{\"uri\":\"test://embedded-resource\","
                "\"mimeType\":\"text/plain\",\"text\":\"This is an embedded resource content.\"}}]");
}

static void multiple_content_types(void *ud, capstan_call *call) {
    (void)ud;
    parts(call, "[{\"type\":\"text\",\"text\":\"Multiple content types test:\"},"
                "{\"type\":\"image\",\"data\":\"" RED_PIXEL_PNG "\",\"mimeType\":\"image/png\"},"
                "{\"type\":\"resource\",\"resource\":{\"uri\":\"test://mixed-content-resource\","
                "\"mimeType\":\"application/json\",\"text\":\"{\\\"test\\\":\\\"data\\\",\\\"value\\\":123}\"}}]");
}

/* The Tasks scenarios' fixtures: greet(name) runs as a plain call;
 * slow_compute(seconds, label) may run as a task (waits, polling
 * capstan_call_cancelled); failing_job must run as one and fails after ~1 s. */
static void greet(void *ud, capstan_call *call) {
    (void)ud;
    const char *args = capstan_call_arguments(call, NULL);
    const char *p = strstr(args, "\"name\":\"");
    const char *start = p ? p + 8 : "";
    const char *end = strchr(start, '"');
    char out[256];
    snprintf(out, sizeof out, "Hello, %.*s!", end ? (int)(end - start) : 0, start);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
}

static void failing_job_body(void *ud, capstan_call *call) {
    (void)ud;
    for (int i = 0; i < 100 && !capstan_call_cancelled(call); i++) sleep_ms(10);
    capstan_call_fail(call, "failing_job failed, as it always does", CAPSTAN_NTS);
}

static void failing_job(void *ud, capstan_call *call) {
    (void)ud;
    later(failing_job_body, call);
}

/* Tools that ask the client for input (MCP 2026-07-28 multi round-trip
 * requests: capstan_call_require_input), for the conformance suite's
 * input-required-result scenarios. capstan_call_input gives compact JSON:
 * {"inputResponses":{...},"requestState":"...","canAsk":[...]}. */
#define ELICIT(key, message, prop, type)                                                   \
    "\"" key "\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"" message    \
    "\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"" prop "\":{\"type\":\"" \
    type "\"}},\"required\":[\"" prop "\"]}}}"
#define SAMPLE(key)                                                                        \
    "\"" key "\":{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{\"role\":" \
    "\"user\",\"content\":{\"type\":\"text\",\"text\":\"Generate a greeting\"}}],"          \
    "\"maxTokens\":50}}"
#define ROOTS(key) "\"" key "\":{\"method\":\"roots/list\",\"params\":{}}"

/* Whether the client answered `key` in this round. */
static int answered(const char *input, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":{", key);
    const char *responses = strstr(input, "\"inputResponses\":{");
    return responses && strstr(responses, pattern) != NULL;
}

/* Whether the tool's state from the previous round is `state`. */
static int state_is(const char *input, const char *state) {
    char pattern[96];
    snprintf(pattern, sizeof pattern, "\"requestState\":\"%s\"", state);
    return strstr(input, pattern) != NULL;
}

static void ask(capstan_call *call, const char *requests, const char *state) {
    capstan_status st = capstan_call_require_input(call, requests, CAPSTAN_NTS, state, CAPSTAN_NTS);
    if (st != CAPSTAN_OK) {
        char why[512];
        capstan_error_message(why, sizeof why);
        capstan_call_fail(call, why, CAPSTAN_NTS);
    }
}

static void ask_name(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    if (!answered(input, "user_name")) {
        ask(call, "{" ELICIT("user_name", "What is your name?", "name", "string") "}", NULL);
        return;
    }
    const char *p = strstr(strstr(input, "\"user_name\":{"), "\"name\":\"");
    const char *start = p ? p + 8 : "";
    const char *end = strchr(start, '"');
    char out[256];
    snprintf(out, sizeof out, "Hello, %.*s!", end ? (int)(end - start) : 0, start);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
}

/* The Tasks extension's input scenarios: confirm_delete(filename) runs as a
 * task (it defers) and asks for a confirmation; multi_input, a task too,
 * asks two things at once; test_tool_with_task (task required) asks for a
 * name inside its callback (so the request is answered directly, with an
 * InputRequiredResult), then, given it, greets from a thread of its own (so
 * that call becomes a task). */
static void confirm_ask(void *ud, capstan_call *call) {
    (void)ud;
    ask(call, "{" ELICIT("confirm", "Delete the file?", "confirm", "boolean") "}", NULL);
}

static void confirm_delete(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    if (!answered(input, "confirm"))
        later(confirm_ask, call);
    else
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT,
                            strstr(input, "\"confirm\":true") ? "deleted" : "kept", CAPSTAN_NTS);
}

static void multi_ask(void *ud, capstan_call *call) {
    (void)ud;
    ask(call,
        "{" ELICIT("name", "Your name?", "name", "string") "," ELICIT("confirm", "Go on?", "confirm",
                                                                      "boolean") "}",
        NULL);
}

static void multi_input(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    if (!answered(input, "name") || !answered(input, "confirm"))
        later(multi_ask, call);
    else
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "got both", CAPSTAN_NTS);
}

static void ask_then_task(void *ud, capstan_call *call) {
    (void)ud;
    if (!answered(capstan_call_input(call, NULL), "user_name"))
        ask(call, "{" ELICIT("user_name", "What is your name?", "name", "string") "}", NULL);
    else
        later(ask_name, call);
}

static void ask_sampling(void *ud, capstan_call *call) {
    (void)ud;
    if (!answered(capstan_call_input(call, NULL), "greeting"))
        ask(call, "{" SAMPLE("greeting") "}", NULL);
    else
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "sampled", CAPSTAN_NTS);
}

static void ask_roots(void *ud, capstan_call *call) {
    (void)ud;
    if (!answered(capstan_call_input(call, NULL), "client_roots"))
        ask(call, "{" ROOTS("client_roots") "}", NULL);
    else
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "rooted", CAPSTAN_NTS);
}

/* Asks to confirm with state `ud`; done once the answer and the state came back. */
static void ask_confirm(void *ud, capstan_call *call) {
    const char *input = capstan_call_input(call, NULL);
    if (answered(input, "confirm") && state_is(input, (const char *)ud))
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "confirmed: state-ok", CAPSTAN_NTS);
    else
        ask(call, "{" ELICIT("confirm", "Please confirm", "ok", "boolean") "}", (const char *)ud);
}

static void ask_twice(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    if (answered(input, "step2") && state_is(input, "round-2"))
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "both steps answered", CAPSTAN_NTS);
    else if (answered(input, "step1") && state_is(input, "round-1"))
        ask(call, "{" ELICIT("step2", "Step 2: What is your favorite color?", "color", "string") "}",
            "round-2");
    else
        ask(call, "{" ELICIT("step1", "Step 1: What is your name?", "name", "string") "}",
            "round-1");
}

static void ask_all(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    if (answered(input, "user_name") && answered(input, "greeting") &&
        answered(input, "client_roots") && state_is(input, "multi"))
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "all three answered", CAPSTAN_NTS);
    else
        ask(call,
            "{" ELICIT("user_name", "What is your name?", "name", "string") "," SAMPLE("greeting")
            "," ROOTS("client_roots") "}",
            "multi");
}

/* Asks only what the client declared it can answer (canAsk). */
static void ask_declared(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    if (strstr(input, "\"inputResponses\"")) {
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "answered", CAPSTAN_NTS);
        return;
    }
    char requests[1024] = "{";
    if (strstr(input, "\"sampling/createMessage\"")) strcat(requests, SAMPLE("greeting"));
    if (strstr(input, "\"elicitation/create\"")) {
        if (requests[1]) strcat(requests, ",");
        strcat(requests, ELICIT("user_name", "What is your name?", "name", "string"));
    }
    strcat(requests, "}");
    ask(call, requests, NULL);
}

/* The JSON value starting at `p` (an object or a string, as capstan wrote
 * it: compact, valid), copied whole into `out` ("" if it does not fit). */
static void copy_value(const char *p, char *out, size_t cap) {
    size_t n = 0;
    int depth = 0, in_string = 0;
    out[0] = '\0';
    if (p == NULL) return;
    for (const char *q = p; *q; q++) {
        if (in_string) {
            if (*q == '\\' && q[1]) q++;
            else if (*q == '"') in_string = 0;
        } else if (*q == '"') {
            in_string = 1;
        } else if (*q == '{' || *q == '[') {
            depth++;
        } else if (*q == '}' || *q == ']') {
            depth--;
        }
        n = (size_t)(q - p) + 1;
        if ((!in_string && depth == 0) || n >= cap) break;
    }
    if (n >= cap) return;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* The answer to `key` in this round's input, as JSON ("" if none). */
static void answer_of(const char *input, const char *key, char *out, size_t cap) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *responses = strstr(input, "\"inputResponses\":{");
    const char *p = responses ? strstr(responses, pattern) : NULL;
    copy_value(p ? p + strlen(pattern) : NULL, out, cap);
}

/* The conformance suite's mid-call requests of the 2025-11-25 era
 * (tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults,
 * elicitation-sep1330-enums): capstan asks a session's client itself. */
static void ask_sampling_of(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    char answer[2048], prompt[1024], requests[2048];
    answer_of(input, "llm", answer, sizeof answer);
    if (answer[0]) {
        char out[2200];
        snprintf(out, sizeof out, "LLM response: %s", answer);
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
        return;
    }
    const char *p = strstr(capstan_call_arguments(call, NULL), "\"prompt\":");
    copy_value(p ? p + 9 : "\"\"", prompt, sizeof prompt);
    snprintf(requests, sizeof requests,
             "{\"llm\":{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{\"role\":"
             "\"user\",\"content\":{\"type\":\"text\",\"text\":%s}}],\"maxTokens\":100}}}",
             prompt);
    ask(call, requests, NULL);
}

static void ask_user_of(void *ud, capstan_call *call) {
    (void)ud;
    const char *input = capstan_call_input(call, NULL);
    char answer[2048], message[1024], requests[2048];
    answer_of(input, "user", answer, sizeof answer);
    if (answer[0]) {
        char out[2200];
        snprintf(out, sizeof out, "User response: %s", answer);
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
        return;
    }
    const char *p = strstr(capstan_call_arguments(call, NULL), "\"message\":");
    copy_value(p ? p + 10 : "\"\"", message, sizeof message);
    snprintf(requests, sizeof requests,
             "{\"user\":{\"method\":\"elicitation/create\",\"params\":{\"message\":%s,"
             "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"username\":{\"type\":"
             "\"string\",\"description\":\"User's response\"},\"email\":{\"type\":\"string\","
             "\"description\":\"User's email address\"}},\"required\":[\"username\",\"email\"]}}}}",
             message);
    ask(call, requests, NULL);
}

/* Elicits with the requested schema `ud`, then says what came back. */
static void ask_form(void *ud, capstan_call *call) {
    const char *input = capstan_call_input(call, NULL);
    char answer[2048], requests[4096];
    answer_of(input, "form", answer, sizeof answer);
    if (answer[0]) {
        char out[2200];
        snprintf(out, sizeof out, "Elicitation completed: %s", answer);
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, out, CAPSTAN_NTS);
        return;
    }
    snprintf(requests, sizeof requests,
             "{\"form\":{\"method\":\"elicitation/create\",\"params\":{\"message\":"
             "\"Please fill in the form\",\"requestedSchema\":%s}}}",
             (const char *)ud);
    ask(call, requests, NULL);
}

#define SEP1034_SCHEMA                                                                        \
    "{\"type\":\"object\",\"properties\":{"                                                   \
    "\"name\":{\"type\":\"string\",\"default\":\"John Doe\"},"                                \
    "\"age\":{\"type\":\"integer\",\"default\":30},"                                          \
    "\"score\":{\"type\":\"number\",\"default\":95.5},"                                       \
    "\"status\":{\"type\":\"string\",\"enum\":[\"active\",\"inactive\",\"pending\"],"          \
    "\"default\":\"active\"},"                                                                \
    "\"verified\":{\"type\":\"boolean\",\"default\":true}}}"
#define SEP1330_SCHEMA                                                                        \
    "{\"type\":\"object\",\"properties\":{"                                                   \
    "\"untitledSingle\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\",\"option3\"]},"  \
    "\"titledSingle\":{\"type\":\"string\",\"oneOf\":[{\"const\":\"value1\",\"title\":"        \
    "\"First Option\"},{\"const\":\"value2\",\"title\":\"Second Option\"},{\"const\":"         \
    "\"value3\",\"title\":\"Third Option\"}]},"                                               \
    "\"legacyEnum\":{\"type\":\"string\",\"enum\":[\"opt1\",\"opt2\",\"opt3\"],\"enumNames\":" \
    "[\"Option One\",\"Option Two\",\"Option Three\"]},"                                      \
    "\"untitledMulti\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":"           \
    "[\"option1\",\"option2\",\"option3\"]}},"                                                \
    "\"titledMulti\":{\"type\":\"array\",\"items\":{\"anyOf\":[{\"const\":\"value1\","         \
    "\"title\":\"First Choice\"},{\"const\":\"value2\",\"title\":\"Second Choice\"},"          \
    "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}}}"

static capstan_status reg_task_tool(const char *name, const char *desc, const char *params,
                                    capstan_tool_fn fn, const char *support) {
    char meta[96];
    snprintf(meta, sizeof meta, "{\"execution\":{\"taskSupport\":\"%s\"}}", support);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = name;
    def.description = desc;
    def.parameters = params;
    def.callback = fn;
    def.mcp_meta = meta;
    return capstan_registry_add_tool(reg, &def);
}

static capstan_status reg_tool(const char *name, const char *desc, const char *params,
                               capstan_tool_fn fn, uint32_t timeout_ms, uint32_t flags) {
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = name;
    def.description = desc;
    def.parameters = params;
    def.callback = fn;
    def.timeout_ms = timeout_ms;
    def.flags = flags;
    return capstan_registry_add_tool(reg, &def);
}

static void grow(void *ud, capstan_call *call) {
    (void)ud;
    capstan_status st = reg_tool("late", "Registered by grow.", NULL, late, 0, 0);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, st == CAPSTAN_OK ? "grown" : "failed",
                        CAPSTAN_NTS);
}

static void shrink(void *ud, capstan_call *call) {
    (void)ud;
    capstan_status st = capstan_registry_remove_tool(reg, "late", CAPSTAN_NTS);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, st == CAPSTAN_OK ? "shrunk" : "failed",
                        CAPSTAN_NTS);
}

/* Progress 0, 50 and 100 of 100, about 50 ms apart (tools-call-with-progress). */
static void with_progress(void *ud, capstan_call *call) {
    (void)ud;
    for (int step = 0; step <= 2; step++) {
        if (step) sleep_ms(50);
        capstan_call_progress(call, 50.0 * step, 100, NULL, 0);
    }
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "progress done", CAPSTAN_NTS);
}

/* Three info log messages 50 ms apart (tools-call-with-logging); sent to
 * a client that asked for logs (logging/setLevel, _meta logLevel). */
static void with_logging(void *ud, capstan_call *call) {
    (void)ud;
    const char *steps[] = {"Tool execution started", "Tool processing data",
                           "Tool execution completed"};
    for (int step = 0; step < 3; step++) {
        if (step) sleep_ms(50);
        capstan_call_log(call, CAPSTAN_LOG_INFO, steps[step], CAPSTAN_NTS);
    }
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "logging done", CAPSTAN_NTS);
}

/* Registers `late`, or unregisters it when it is there: a tools/list_changed
 * for the suite's subscriptions/listen checks (server-stateless). */
static void trigger_change(void *ud, capstan_call *call) {
    (void)ud;
    capstan_status st = capstan_registry_remove_tool(reg, "late", CAPSTAN_NTS);
    if (st != CAPSTAN_OK) st = reg_tool("late", "Registered by a trigger.", NULL, late, 0, 0);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, st == CAPSTAN_OK ? "changed" : "failed",
                        CAPSTAN_NTS);
}

static void say_ok(void *ud, capstan_call *call) {
    (void)ud;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}

/* The suite's json-schema-2020-12 scenario: its tool's inputSchema, verbatim. */
#define SCHEMA_2020_12                                                                       \
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","       \
    "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\",\"properties\":"  \
    "{\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},\"properties\":"     \
    "{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"},"              \
    "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"                 \
    "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"                        \
    "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"         \
    "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"                         \
    "\"required\":[\"contactMethod\"]},\"then\":{\"required\":[\"phone\"]},"                    \
    "\"else\":{\"required\":[\"email\"]},\"additionalProperties\":false}"

static int fail(const char *what) {
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    fprintf(stderr, "serve_host: %s: %s\n", what, msg);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: serve_host stdio | http [TOKEN [MAX_BODY]]\n");
        return 2;
    }
    if (capstan_registry_new(NULL, &reg) != CAPSTAN_OK) return fail("registry");
    int bad = 0;
    bad |= reg_tool("echo", "Returns its text.",
                    "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
                    "\"required\":[\"text\"],\"additionalProperties\":false}",
                    echo, 0, 0);
    bad |= reg_tool("add", "Adds two numbers.",
                    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
                    "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}",
                    add, 0, 0);
    bad |= reg_tool("slow", "Waits `seconds` unless cancelled; times out after 300 ms.",
                    "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"number\"}},"
                    "\"required\":[\"seconds\"]}",
                    slow, 300, 0);
    bad |= reg_task_tool("patient", "Waits `seconds` unless cancelled (may run as a task).",
                         "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"number\"}},"
                         "\"required\":[\"seconds\"]}",
                         slow_later, "optional");
    bad |= reg_tool("cancels", "How many slow calls saw their cancellation.", NULL,
                    count_cancels, 0, 0);
    bad |= reg_tool("guarded", "Needs the user's approval.",
                    "{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\"}},"
                    "\"required\":[\"action\"]}",
                    guarded, 0, CAPSTAN_TOOL_REQUIRES_APPROVAL);
    {
        /* MCP metadata carried by the tool itself (capstan_tool_def.mcp_meta). */
        capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
        def.name = "stats";
        def.description = "Call statistics.";
        def.callback = stats;
        def.mcp_meta =
            "{\"title\":\"Statistics\",\"annotations\":{\"readOnlyHint\":true,"
            "\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":false},"
            "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"calls\":{\"type\":"
            "\"integer\"},\"ok\":{\"type\":\"boolean\"}},\"required\":[\"calls\",\"ok\"]},"
            "\"icons\":[{\"src\":\"https://example.com/stats.png\",\"mimeType\":\"image/png\","
            "\"sizes\":[\"48x48\"]}]}";
        bad |= capstan_registry_add_tool(reg, &def);
    }
    bad |= reg_tool("grow", "Registers the tool `late`.", NULL, grow, 0, 0);
    bad |= reg_tool("steps", "Reports progress twice.", NULL, steps, 0, 0);
    bad |= reg_tool("shrink", "Unregisters the tool `late`.", NULL, shrink, 0, 0);
    int conformance = strcmp(argv[1], "conformance") == 0;
    if (conformance) {
        bad |= reg_tool("test_simple_text", "Returns simple text.", NULL, simple_text, 0, 0);
        bad |= reg_tool("test_error_handling", "Always fails.", NULL, error_handling, 0, 0);
        bad |= reg_tool("test_image_content", "Returns an image.", NULL, image_content, 0, 0);
        bad |= reg_tool("test_audio_content", "Returns audio.", NULL, audio_content, 0, 0);
        bad |= reg_tool("test_embedded_resource", "Returns an embedded resource.", NULL,
                        embedded_resource, 0, 0);
        bad |= reg_tool("test_multiple_content_types", "Returns text, an image and a resource.",
                        NULL, multiple_content_types, 0, 0);
        bad |= reg_tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100.", NULL,
                        with_progress, 0, 0);
        bad |= reg_tool("test_tool_with_logging", "Logs three info messages.", NULL,
                        with_logging, 0, 0);
        bad |= reg_tool("test_logging_tool", "Logs three info messages.", NULL, with_logging,
                        0, 0);
        bad |= reg_tool("test_trigger_tool_change", "Changes the tool list.", NULL,
                        trigger_change, 0, 0);
        bad |= reg_tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
                        SCHEMA_2020_12, say_ok, 0, 0);
        /* An argument mirrored into the Mcp-Param-Region header (SEP-2243). */
        bad |= reg_tool("test_custom_header", "Says ok; `region` travels in a header too.",
                        "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":"
                        "\"string\",\"x-mcp-header\":\"Region\"}},\"required\":[\"region\"]}",
                        say_ok, 0, 0);
        bad |= reg_tool("greet", "Says hello to `name`.",
                        "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}",
                        greet, 0, 0);
        bad |= reg_task_tool("slow_compute", "Waits `seconds` unless cancelled (may run as a task).",
                             "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":"
                             "\"number\"},\"label\":{\"type\":\"string\"}},\"required\":[\"seconds\"]}",
                             slow_later, "optional");
        bad |= reg_task_tool("failing_job", "Fails after about a second (runs as a task only).",
                             NULL, failing_job, "required");
        bad |= reg_task_tool("confirm_delete", "Asks to confirm deleting `filename` (a task).",
                             "{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":"
                             "\"string\"}}}",
                             confirm_delete, "optional");
        bad |= reg_task_tool("multi_input", "Asks for a name and a confirmation at once (a task).",
                             NULL, multi_input, "optional");
        bad |= reg_task_tool("test_tool_with_task",
                             "Asks for a name, then greets as a task.", NULL, ask_then_task,
                             "required");
        bad |= reg_tool("test_input_required_result_elicitation", "Asks for a name.", NULL,
                        ask_name, 0, 0);
        /* server-stateless: a modern call that asks gets an InputRequiredResult,
         * never a request of the server's own on its response stream. */
        bad |= reg_tool("test_streaming_elicitation", "Asks for a name.", NULL, ask_name, 0, 0);
        /* Needs sampling: a 2026-07-28 client that did not declare it gets
         * MissingRequiredClientCapability (-32021), as the tool's ask is
         * refused and it fails. */
        bad |= reg_tool("test_missing_capability", "Asks for a sampled greeting.", NULL,
                        ask_sampling, 0, 0);
        bad |= reg_tool("test_input_required_result_sampling", "Asks for a sampled greeting.",
                        NULL, ask_sampling, 0, 0);
        bad |= reg_tool("test_input_required_result_list_roots", "Asks for the client's roots.",
                        NULL, ask_roots, 0, 0);
        bad |= reg_tool("test_input_required_result_multi_round", "Asks twice.", NULL, ask_twice,
                        0, 0);
        bad |= reg_tool("test_input_required_result_multiple_inputs",
                        "Asks for a name, a greeting and the roots at once.", NULL, ask_all, 0, 0);
        bad |= reg_tool("test_input_required_result_capabilities",
                        "Asks only what the client declared.", NULL, ask_declared, 0, 0);
        bad |= reg_tool("test_sampling", "Asks the client's LLM about `prompt`.",
                        "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":"
                        "\"string\"}},\"required\":[\"prompt\"]}",
                        ask_sampling_of, 0, 0);
        bad |= reg_tool("test_elicitation", "Asks the user, showing `message`.",
                        "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":"
                        "\"string\"}},\"required\":[\"message\"]}",
                        ask_user_of, 0, 0);
        {
            capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
            def.description = "Elicits a form whose fields have defaults.";
            def.callback = ask_form;
            def.name = "test_elicitation_sep1034_defaults";
            def.user_data = (void *)SEP1034_SCHEMA;
            bad |= capstan_registry_add_tool(reg, &def);
            def.description = "Elicits a form with every kind of enum.";
            def.name = "test_elicitation_sep1330_enums";
            def.user_data = (void *)SEP1330_SCHEMA;
            bad |= capstan_registry_add_tool(reg, &def);
        }
        {
            capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
            def.description = "Asks to confirm, with a state of its own.";
            def.callback = ask_confirm;
            def.name = "test_input_required_result_request_state";
            def.user_data = (void *)"confirm-state";
            bad |= capstan_registry_add_tool(reg, &def);
            def.name = "test_input_required_result_tampered_state";
            def.user_data = (void *)"tamper-check";
            bad |= capstan_registry_add_tool(reg, &def);
        }
    }
    if (bad) return fail("register");
    if (capstan_registry_set_approver(reg, approver, NULL, NULL) != CAPSTAN_OK)
        return fail("approver");

    capstan_mcp_server_options opts = CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    opts.name = "serve_host";
    /* The older side table still adds to (and overrides) what a tool carries. */
    opts.tools_meta = "{\"add\":{\"title\":\"Addition\"}}";
    int rc = 0;
    if (strcmp(argv[1], "stdio") == 0) {
        if (capstan_mcp_server_serve_stdio(reg, &opts) != CAPSTAN_OK) rc = fail("serve_stdio");
    } else if (strcmp(argv[1], "http") == 0 || conformance) {
        if (argc > 2 && argv[2][0]) opts.bearer_token = argv[2];
        if (argc > 3) opts.max_body_bytes = (uint32_t)strtoul(argv[3], NULL, 10);
        capstan_mcp_server *server = NULL;
        char *url = NULL;
        if (capstan_mcp_server_start(reg, &opts, &server) != CAPSTAN_OK) {
            rc = fail("server_start");
        } else if (capstan_mcp_server_url(server, &url, NULL) != CAPSTAN_OK) {
            rc = fail("server_url");
        } else {
            printf("%s\n", url);
            fflush(stdout);
            capstan_string_free(url);
            while (getchar() != EOF) {
            }
        }
        if (server && capstan_mcp_server_stop(server) != CAPSTAN_OK) rc = fail("server_stop");
        capstan_mcp_server_free(server);
    } else {
        fprintf(stderr, "serve_host: unknown mode %s\n", argv[1]);
        rc = 2;
    }
    capstan_registry_free(reg);
    return rc;
}
