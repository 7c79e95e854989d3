/* docs/streams.md's streamed OpenAI Chat turn: the body arrives in pieces 200 ms
 * apart (as from a slow HTTP response), each tool call starts as soon as
 * its arguments are complete, and its result is printed before the stream
 * ends. Kept running by `make stream-example` (exits 1 if the first result
 * did not come before the end of the body). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capstan.h"

static void add(void *user_data, capstan_call *call) {
    (void)user_data;
    int a = 0, b = 0;
    sscanf(capstan_call_arguments(call, NULL), "{\"a\":%d,\"b\":%d}", &a, &b);
    char out[32];
    snprintf(out, sizeof out, "%d", a + b);
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, out, CAPSTAN_NTS);
}

static atomic_int results_seen = 0;

static void on_text(void *user_data, const char *text, size_t len) {
    (void)user_data;
    printf("text: %.*s\n", (int)len, text);
}

/* On a pool thread, as each call ends; NULL once, inside finish, at the end. */
static void on_result(void *user_data, const capstan_result *r) {
    (void)user_data;
    if (r == NULL) return;
    printf("result of call %zu (%.*s): %.*s\n", r->index, (int)r->id_len, r->id,
           (int)r->content_len, r->content);
    atomic_fetch_add(&results_seen, 1);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#define CHUNK(s) "data: {\"choices\":[{\"index\":0,\"delta\":" s ",\"finish_reason\":null}]}\n\n"

int main(void) {
    capstan_registry *reg;
    capstan_registry_new(NULL, &reg);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "add";
    def.description = "Add two integers.";
    def.parameters = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                     "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}";
    def.callback = add;
    capstan_registry_add_tool(reg, &def);

    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.flags = CAPSTAN_EXEC_EARLY_DISPATCH;   /* start calls before the end */
    capstan_stream_sink sink = CAPSTAN_STREAM_SINK_INIT;
    sink.on_text = on_text;
    sink.on_result = on_result;
    capstan_stream *stream;
    capstan_stream_new(reg, CAPSTAN_FORMAT_OPENAI_CHAT, &opts, &sink, &stream);

    /* The body of a streamed chat completion, as it arrives (any split works). */
    const char *pieces[] = {
        CHUNK("{\"content\":\"Adding both.\"}")
        CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
              "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\"}}]}"),
        CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"b\\\":3}\"}}]}"),
        CHUNK("{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\",\"type\":\"function\","
              "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":40,\\\"b\\\":2}\"}}]}"),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
        "data: [DONE]\n\n",
    };
    int early = 0;
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        if (i > 0) sleep_ms(200);                  /* the model is still talking */
        if (i == 3) {   /* call_1 started when call_2 began: its result is in (or soon) */
            for (int w = 0; w < 5000 && atomic_load(&results_seen) == 0; w++) sleep_ms(1);
            early = atomic_load(&results_seen) > 0;
        }
        capstan_stream_feed(stream, pieces[i], strlen(pieces[i]));
    }
    printf("stream ended\n");

    char *out;
    if (capstan_stream_finish(stream, &out, NULL) != CAPSTAN_OK) return 1;
    printf("turn: %s\n", out);   /* {"calls", "results", "messages", "text", ...} */
    int ok = early && strstr(out, "\"tool_call_id\":\"call_1\",\"content\":\"5\"") != NULL;
    capstan_string_free(out);
    capstan_stream_free(stream);
    capstan_registry_free(reg);
    return ok ? 0 : 1;
}
