/* Streaming through the C ABI (capstan_stream_*): every fixture of
 * tests/fixtures/stream fed split at every byte offset gives the calls
 * capstan_format_parse_calls reads from the same response not streamed; text and
 * results reach the sink; early dispatch; cut, dropped and failing streams;
 * freeing a stream whose calls still run. Run from the repository root. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>

#include "check.h"
#include "support.h"

static const char *const FORMATS[] = {"openai_chat", "openai_responses", "anthropic", "gemini"};
static const capstan_format FORMAT_IDS[] = {CAPSTAN_FORMAT_OPENAI_CHAT, CAPSTAN_FORMAT_OPENAI_RESPONSES,
                                            CAPSTAN_FORMAT_ANTHROPIC, CAPSTAN_FORMAT_GEMINI};
static const char *const CASES[] = {"parallel", "text_then_calls", "unicode_escapes"};

static char *read_file(const char *dir, const char *name, const char *ext, size_t *len) {
    char path[256];
    snprintf(path, sizeof path, "tests/fixtures/stream/%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s (run from the repository root)\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) exit(2);
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Valgrind runs every offset far too slowly: a stride there, every offset
 * elsewhere (plain and ASan). */
static size_t offset_stride(void) {
    const char *preload = getenv("LD_PRELOAD");
    return preload != NULL && strstr(preload, "vgpreload") != NULL ? 61 : 1;
}

typedef struct {
    char text[512];
    size_t text_len;
    atomic_int results;
    atomic_int ends;
    atomic_int first_index;
} sink_state;

static void on_text(void *user_data, const char *text, size_t len) {
    sink_state *s = user_data;
    if (s->text_len + len < sizeof s->text) {
        memcpy(s->text + s->text_len, text, len);
        s->text_len += len;
        s->text[s->text_len] = 0;
    }
}

static void on_result(void *user_data, const capstan_result *r) {
    sink_state *s = user_data;
    if (r == NULL) {
        atomic_fetch_add(&s->ends, 1);
        return;
    }
    int expected = -1;
    atomic_compare_exchange_strong(&s->first_index, &expected, (int)r->index);
    atomic_fetch_add(&s->results, 1);
}

/* Feeds body as two chunks split at `cut` and finishes; returns the status. */
static capstan_status split_run(capstan_registry *reg, capstan_format fmt, const char *body, size_t len,
                                size_t cut, char **out) {
    capstan_stream *stream = NULL;
    capstan_status st = capstan_stream_new(reg, fmt, NULL, NULL, &stream);
    if (st != CAPSTAN_OK) return st;
    st = capstan_stream_feed(stream, body, cut);
    if (st == CAPSTAN_OK) st = capstan_stream_feed(stream, body + cut, len - cut);
    capstan_status fin = capstan_stream_finish(stream, out, NULL);
    capstan_stream_free(stream);
    return st != CAPSTAN_OK ? st : fin;
}

static void every_split_offset_gives_the_calls_parse_calls_gives(capstan_registry *reg) {
    size_t stride = offset_stride();
    for (size_t f = 0; f < 4; f++) {
        for (size_t c = 0; c < 3; c++) {
            size_t len = 0, json_len = 0;
            char *body = read_file(FORMATS[f], CASES[c], "sse", &len);
            char *json = read_file(FORMATS[f], CASES[c], "json", &json_len);
            char *want = NULL;
            CHECK_STATUS(capstan_format_parse_calls(FORMAT_IDS[f], json, json_len, &want, NULL), CAPSTAN_OK);
            /* finish's object starts with "calls" (keys sorted). */
            char *prefix = malloc(strlen(want) + 16);
            sprintf(prefix, "{\"calls\":%s,", want);
            int bad = 0;
            for (size_t cut = 0; bad < 3; cut += stride) {
                if (cut > len) cut = len;
                char *out = NULL;
                capstan_status st = split_run(reg, FORMAT_IDS[f], body, len, cut, &out);
                if (st != CAPSTAN_OK || strncmp(out, prefix, strlen(prefix)) != 0) {
                    bad++;
                    fprintf(stderr, "%s/%s cut at %zu: %s %s\n", FORMATS[f], CASES[c], cut,
                            capstan_status_name(st), out ? out : "");
                }
                capstan_string_free(out);
                if (cut == len) break;
            }
            CHECK(bad == 0);
            free(prefix);
            capstan_string_free(want);
            free(body);
            free(json);
        }
    }
}

static void tool(void *user_data, capstan_call *call) {
    atomic_fetch_add((atomic_int *)user_data, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS);
}

static capstan_registry *registry_with_tools(atomic_int *ran, uint32_t flags) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    const char *names[] = {"get_weather", "get_time", "search"};
    for (int i = 0; i < 3; i++) {
        capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
        def.name = names[i];
        def.callback = tool;
        def.user_data = ran;
        def.flags = flags;
        CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    }
    return reg;
}

static void text_and_results_reach_the_sink_and_finish_ends_with_null(void) {
    atomic_int ran = 0;
    capstan_registry *reg = registry_with_tools(&ran, 0);
    for (size_t f = 0; f < 4; f++) {
        sink_state s;
        memset(&s, 0, sizeof s);
        atomic_store(&s.first_index, -1);
        capstan_stream_sink sink = CAPSTAN_STREAM_SINK_INIT;
        sink.on_text = on_text;
        sink.on_result = on_result;
        sink.user_data = &s;
        capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
        opts.flags = CAPSTAN_EXEC_EARLY_DISPATCH;
        capstan_stream *stream = NULL;
        CHECK_STATUS(capstan_stream_new(reg, FORMAT_IDS[f], &opts, &sink, &stream), CAPSTAN_OK);
        size_t len = 0;
        char *body = read_file(FORMATS[f], "text_then_calls", "sse", &len);
        for (size_t at = 0; at < len; at += 3) {
            size_t n = len - at < 3 ? len - at : 3;
            CHECK_STATUS(capstan_stream_feed(stream, body + at, n), CAPSTAN_OK);
        }
        char *out = NULL;
        CHECK_STATUS(capstan_stream_finish(stream, &out, NULL), CAPSTAN_OK);
        CHECK(strcmp(s.text, "Let me check that for you. Un instant\xe2\x80\xa6 \xe2\x98\x95") == 0);
        CHECK(atomic_load(&s.results) == 1);
        CHECK(atomic_load(&s.ends) == 1);
        CHECK_CONTAINS(out, "\"content\":\"done\"");
        capstan_string_free(out);
        capstan_stream_free(stream);
        free(body);
    }
    CHECK(atomic_load(&ran) == 4);
    capstan_registry_free(reg);
}

static void a_cut_call_never_runs_and_a_dropped_stream_is_stream_truncated(void) {
    atomic_int ran = 0;
    capstan_registry *reg = registry_with_tools(&ran, 0);
    for (size_t f = 0; f < 3; f++) {
        size_t len = 0;
        char *body = read_file(FORMATS[f], "truncated", "sse", &len);
        char *out = NULL;
        atomic_store(&ran, 0);
        CHECK_STATUS(split_run(reg, FORMAT_IDS[f], body, len, len / 2, &out), CAPSTAN_OK);
        CHECK_CONTAINS(out, "\"cut_calls\":[1]");
        CHECK_CONTAINS(out, "\"outcome\":\"invalid_arguments\"");
        CHECK(atomic_load(&ran) == 1);
        capstan_string_free(out);
        free(body);
    }
    for (size_t f = 0; f < 4; f++) {
        size_t len = 0;
        char *body = read_file(FORMATS[f], "dropped", "sse", &len);
        char *out = NULL;
        CHECK_STATUS(split_run(reg, FORMAT_IDS[f], body, len, 7, &out), CAPSTAN_ERR_STREAM_TRUNCATED);
        CHECK(out == NULL);
        free(body);
        body = read_file(FORMATS[f], "error", "sse", &len);
        CHECK_STATUS(split_run(reg, FORMAT_IDS[f], body, len, len - 9, &out), CAPSTAN_ERR_PROVIDER_ERROR);
        CHECK(out == NULL);
        free(body);
    }
    capstan_registry_free(reg);
}

/* A tool that waits for a release, so the stream can be freed while it runs. */
static atomic_int gate = 0;
static void slow_tool(void *user_data, capstan_call *call) {
    (void)user_data;
    wait_flag(&gate, 10000);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "late", CAPSTAN_NTS);
}

static void freeing_a_stream_with_calls_running_stops_its_callbacks(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "get_weather";
    def.callback = slow_tool;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    sink_state *s = calloc(1, sizeof *s);
    capstan_stream_sink sink = CAPSTAN_STREAM_SINK_INIT;
    sink.on_result = on_result;
    sink.user_data = s;
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.flags = CAPSTAN_EXEC_EARLY_DISPATCH;
    capstan_stream *stream = NULL;
    CHECK_STATUS(capstan_stream_new(reg, CAPSTAN_FORMAT_GEMINI, &opts, &sink, &stream), CAPSTAN_OK);
    size_t len = 0;
    char *body = read_file("gemini", "parallel", "sse", &len);
    CHECK_STATUS(capstan_stream_feed(stream, body, len), CAPSTAN_OK);
    capstan_stream_cancel(stream);
    CHECK_STATUS(capstan_stream_feed(stream, "x", 1), CAPSTAN_ERR_WRONG_CONTEXT);
    capstan_stream_free(stream);
    free(s); /* no callback may touch it now */
    atomic_store(&gate, 1);
    free(body);
    capstan_registry_free(reg);
}

int main(void) {
    watchdog_begin("test_stream", "all", 600);
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    every_split_offset_gives_the_calls_parse_calls_gives(reg);
    capstan_registry_free(reg);
    text_and_results_reach_the_sink_and_finish_ends_with_null();
    a_cut_call_never_runs_and_a_dropped_stream_is_stream_truncated();
    freeing_a_stream_with_calls_running_stops_its_callbacks();
    return check_report("test_stream");
}
