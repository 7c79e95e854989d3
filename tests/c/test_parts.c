/* Content parts through the C ABI (issue #30): a screenshot tool returns a
 * text part and an image (CAPSTAN_CONTENT_PARTS) and capstan_registry_run_turn
 * renders it for all five formats; bad parts are a tool error for their call
 * only; max_result_bytes bounds a result; an older, smaller
 * capstan_registry_options still works. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The 8-byte PNG signature, base64. */
#define PNG "iVBORw0KGgo="

static capstan_status last_return = CAPSTAN_OK;

static void screenshot(void *user_data, capstan_call *call) {
    (void)user_data;
    static const char parts[] =
        "[{\"type\":\"text\",\"text\":\"the screen, 640x480\"},"
        "{\"type\":\"image\",\"data\":\"" PNG "\",\"mimeType\":\"image/png\"}]";
    capstan_call_return(call, CAPSTAN_CONTENT_PARTS, parts, CAPSTAN_NTS);
}

static void broken(void *user_data, capstan_call *call) {
    (void)user_data;
    static const char parts[] = "[{\"type\":\"image\",\"data\":\"%%%\",\"mimeType\":\"image/png\"}]";
    last_return = capstan_call_return(call, CAPSTAN_CONTENT_PARTS, parts, CAPSTAN_NTS);
}

static capstan_registry *make_registry(const capstan_registry_options *opts) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(opts, &reg), CAPSTAN_OK);
    capstan_tool_def def;
    CHECK_STATUS(capstan_tool_def_init(&def), CAPSTAN_OK);
    def.name = "screenshot";
    def.description = "Take a screenshot.";
    def.callback = screenshot;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    def.name = "broken";
    def.description = "Return bad base64.";
    def.callback = broken;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    return reg;
}

struct turn_case {
    capstan_format fmt;
    const char *name;
    const char *response;
    const char *expect[3]; /* substrings of the turn's messages */
};

static const struct turn_case CASES[] = {
    {CAPSTAN_FORMAT_OPENAI_CHAT, "openai_chat",
     "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
     "\"function\":{\"name\":\"screenshot\",\"arguments\":\"{}\"}}]}}]}",
     {"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"the screen, 640x480\\n[image_url sent in the next "
      "user message]\"}",
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Content returned by tool call c1 (screenshot):\"}",
      "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64," PNG "\"}}"}},
    {CAPSTAN_FORMAT_OPENAI_RESPONSES, "openai_responses",
     "{\"output\":[{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"screenshot\",\"arguments\":\"{}\"}]}",
     {"\"output\":[{\"type\":\"input_text\",\"text\":\"the screen, 640x480\"}",
      "{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64," PNG "\",\"detail\":\"auto\"}", NULL}},
    {CAPSTAN_FORMAT_ANTHROPIC, "anthropic",
     "{\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"screenshot\",\"input\":{}}]}",
     {"\"content\":[{\"type\":\"text\",\"text\":\"the screen, 640x480\"}",
      "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"" PNG "\"}}",
      NULL}},
    {CAPSTAN_FORMAT_GEMINI, "gemini",
     "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"id\":\"c1\","
     "\"name\":\"screenshot\",\"args\":{}}}]}}]}",
     {"\"response\":{\"output\":\"the screen, 640x480\\n[image/png attached as part 0]\"}",
      "\"parts\":[{\"inlineData\":{\"mimeType\":\"image/png\",\"data\":\"" PNG "\"}}]", NULL}},
    {CAPSTAN_FORMAT_MCP, "mcp",
     "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"screenshot\",\"arguments\":{}}}",
     {"\"content\":[{\"type\":\"text\",\"text\":\"the screen, 640x480\"},"
      "{\"type\":\"image\",\"data\":\"" PNG "\",\"mimeType\":\"image/png\"}]",
      "\"isError\":false", NULL}},
};

static void test_an_image_and_a_text_part_through_run_turn_in_every_format(void) {
    capstan_registry *reg = make_registry(NULL);
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const struct turn_case *c = &CASES[i];
        char *messages = NULL;
        size_t len = 0;
        CHECK_STATUS(capstan_registry_run_turn(reg, c->fmt, c->response, CAPSTAN_NTS, NULL, &messages, &len),
                     CAPSTAN_OK);
        for (size_t k = 0; k < 3 && c->expect[k] != NULL; k++) {
            CHECK_CONTAINS(messages, c->expect[k]);
        }
        if (messages != NULL) {
            CHECK(strlen(messages) == len);
        }
        capstan_string_free(messages);
    }
    capstan_registry_free(reg);
}

static void test_bad_parts_fail_their_call_only(void) {
    capstan_registry *reg = make_registry(NULL);
    const char *calls = "[{\"id\":\"a\",\"name\":\"broken\"},{\"id\":\"b\",\"name\":\"screenshot\"}]";
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &results, NULL), CAPSTAN_OK);
    CHECK(last_return == CAPSTAN_ERR_INVALID_CONTENT);
    CHECK_CONTAINS(results, "\"content\":\"Tool \\\"broken\\\" returned content parts that cannot be sent: part 0: "
                            "\\\"data\\\" is not valid base64");
    CHECK_CONTAINS(results, "\"outcome\":\"tool_error\"");
    /* The other call has its parts, in the normalized results too. */
    CHECK_CONTAINS(results, "\"id\":\"b\",\"name\":\"screenshot\",\"content\":\"the screen, 640x480\\n[image: "
                            "image/png, 8 bytes]\",\"is_error\":false");
    CHECK_CONTAINS(results, "\"parts\":[{\"type\":\"text\",\"text\":\"the screen, 640x480\"}");
    capstan_string_free(results);
    capstan_registry_free(reg);
}

static void test_max_result_bytes_bounds_a_result(void) {
    capstan_registry_options opts = CAPSTAN_REGISTRY_OPTIONS_INIT;
    opts.max_result_bytes = 7; /* the image is 8 bytes */
    capstan_registry *reg = make_registry(&opts);
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"a\",\"name\":\"screenshot\"}", CAPSTAN_NTS, NULL,
                                          &results, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(results, "part 1: its data (8 bytes decoded) is past the size limit of this result");
    CHECK_CONTAINS(results, "\"outcome\":\"tool_error\"");
    capstan_string_free(results);
    capstan_registry_free(reg);

    /* A host built before max_result_bytes passes the older, smaller struct:
     * accepted, with the default bound. */
    capstan_registry_options old = CAPSTAN_REGISTRY_OPTIONS_INIT;
    old.struct_size = 8;
    reg = make_registry(&old);
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"a\",\"name\":\"screenshot\"}", CAPSTAN_NTS, NULL,
                                          &results, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(results, "\"outcome\":\"ok\"");
    capstan_string_free(results);
    capstan_registry_free(reg);
}

static void test_format_write_results_renders_and_checks_parts(void) {
    const char *normalized =
        "[{\"id\":\"c1\",\"name\":\"shot\",\"content\":\"\",\"parts\":[{\"type\":\"audio\",\"data\":\"UklGRg==\","
        "\"mimeType\":\"audio/wav\"}]}]";
    char *out = NULL;
    CHECK_STATUS(capstan_format_write_results(CAPSTAN_FORMAT_ANTHROPIC, normalized, CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "[left out: audio (audio/wav, 4 bytes): Anthropic takes no audio in a tool result]");
    capstan_string_free(out);
    out = NULL;
    CHECK_STATUS(capstan_format_write_results(CAPSTAN_FORMAT_ANTHROPIC,
                                              "[{\"id\":\"c1\",\"name\":\"s\",\"parts\":[{\"type\":\"video\"}]}]",
                                              CAPSTAN_NTS, &out, NULL),
                 CAPSTAN_ERR_INVALID_RESULTS);
    CHECK(out == NULL);
    char msg[256];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "result 0: part 0: unknown part type \"video\"");
}

/* The result callback gets the parts themselves (parts_json), not only
 * their text; a text result has none. */
struct seen_parts {
    char parts[512];
    int with_parts;
    int without_parts;
    int done;
};

static void keep_parts(void *user_data, const capstan_result *r) {
    struct seen_parts *seen = user_data;
    if (r == NULL) {
        seen->done++;
        return;
    }
    if (r->parts_json != NULL && r->parts_json_len < sizeof seen->parts) {
        memcpy(seen->parts, r->parts_json, r->parts_json_len);
        seen->parts[r->parts_json_len] = '\0';
        seen->with_parts++;
    } else if (r->parts_json == NULL && r->parts_json_len == 0) {
        seen->without_parts++;
    }
}

static void test_the_result_callback_gets_the_parts(void) {
    capstan_registry *reg = make_registry(NULL);
    struct seen_parts seen;
    memset(&seen, 0, sizeof seen);
    capstan_batch *batch = NULL;
    CHECK_STATUS(capstan_batch_submit(reg,
                                      "[{\"id\":\"a\",\"name\":\"screenshot\",\"arguments\":{}},"
                                      "{\"id\":\"b\",\"name\":\"broken\",\"arguments\":{}}]",
                                      CAPSTAN_NTS, NULL, keep_parts, &seen, &batch),
                 CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(batch, UINT32_MAX), CAPSTAN_OK);
    capstan_batch_free(batch);
    CHECK(seen.done == 1);
    CHECK(seen.with_parts == 1);
    CHECK(seen.without_parts == 1);
    CHECK_CONTAINS(seen.parts, "{\"type\":\"image\",\"data\":\"" PNG "\",\"mimeType\":\"image/png\"}");
    capstan_registry_free(reg);
}

int main(void) {
    test_an_image_and_a_text_part_through_run_turn_in_every_format();
    test_bad_parts_fail_their_call_only();
    test_max_result_bytes_bounds_a_result();
    test_format_write_results_renders_and_checks_parts();
    test_the_result_callback_gets_the_parts();
    return check_report("test_parts");
}
