/* The one child-lifetime rule (header: "Children"): a batch, stream, MCP
 * server or mount keeps what it needs of its registry alive, so
 * capstan_registry_free may come before the child's own free. For each kind:
 * the registry is freed while the child lives (and, for batches and streams,
 * while a call runs), the child is still used, then freed. Run plain, under
 * ASan/UBSan and under Valgrind (make c-tests): a use after free or a leak
 * fails there. Bounded by a watchdog. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "support.h"

static const char *OBJ = "{\"type\":\"object\"}";

static void echo(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}

/* Holds its call until capstan cancels it (the registry is freed), so the
 * free happens mid-call; bounded at 20 s so a broken library fails. */
static atomic_int entered;
static atomic_int saw_cancel;
static void gated(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_fetch_add(&entered, 1);
    for (int waited = 0; waited < 20000 && !capstan_call_cancelled(call); waited++) sleep_ms(1);
    if (capstan_call_cancelled(call)) atomic_fetch_add(&saw_cancel, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS);
}

static capstan_registry *registry_with(const char *name, capstan_tool_fn fn) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def;
    CHECK_STATUS(capstan_tool_def_init(&def), CAPSTAN_OK);
    def.name = name;
    def.description = "a test tool";
    def.parameters = OBJ;
    def.callback = fn;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    return reg;
}

/* Collects results by index (poll delivery). */
typedef struct {
    capstan_outcome outcomes[8];
    int count;
    int ends;
} collected;

static void collect(void *user_data, const capstan_result *r) {
    collected *c = user_data;
    if (r == NULL) {
        c->ends++;
        return;
    }
    if (r->index < 8) c->outcomes[r->index] = r->outcome;
    c->count++;
}

static void a_batch_outlives_its_registry(void) {
    watchdog_begin("test_children", "batch", 120u);
    atomic_store(&entered, 0);
    atomic_store(&saw_cancel, 0);
    capstan_registry *reg = registry_with("gated", gated);
    const char *calls =
        "[{\"id\":\"a\",\"name\":\"gated\",\"arguments\":{}},"
        "{\"id\":\"b\",\"name\":\"gated\",\"arguments\":{}},"
        "{\"id\":\"c\",\"name\":\"gated\",\"arguments\":{}}]";
    capstan_exec_options opts;
    CHECK_STATUS(capstan_exec_options_init(&opts), CAPSTAN_OK);
    opts.flags = CAPSTAN_EXEC_DELIVER_POLL;
    opts.limit = 1; /* one runs, two wait: those end cancelled */
    capstan_batch *batch = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &opts, NULL, NULL, &batch), CAPSTAN_OK);
    CHECK(wait_flag(&entered, 20000));
    capstan_registry_free(reg); /* mid-call: waits for the running tool */
    CHECK(atomic_load(&saw_cancel) == 1);
    CHECK_STATUS(capstan_batch_wait(batch, 20000), CAPSTAN_OK);
    collected c;
    memset(&c, 0, sizeof c);
    while (c.ends == 0 && capstan_batch_poll(batch, collect, &c, 8) > 0) {
    }
    CHECK(c.count == 3);
    CHECK(c.ends == 1);
    /* The running call is reported cancelled, the two never started too. */
    for (int i = 0; i < 3; i++) CHECK(c.outcomes[i] == CAPSTAN_OUTCOME_CANCELLED);
    CHECK(atomic_load(&entered) == 1);
    capstan_batch_free(batch);
}

static const char CHAT_BODY[] =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
    "{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
    "\"function\":{\"name\":\"echo\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},"
    "\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: [DONE]\n\n";

static void a_stream_outlives_its_registry(void) {
    watchdog_begin("test_children", "stream", 120u);
    capstan_registry *reg = registry_with("echo", echo);
    capstan_stream *stream = NULL;
    CHECK_STATUS(capstan_stream_new(reg, CAPSTAN_FORMAT_OPENAI_CHAT, NULL, NULL, &stream), CAPSTAN_OK);
    capstan_registry_free(reg);
    /* Fed after the free: the call is read, ends cancelled, finish is OK. */
    CHECK_STATUS(capstan_stream_feed(stream, CHAT_BODY, sizeof CHAT_BODY - 1), CAPSTAN_OK);
    char *out = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_stream_finish(stream, &out, &len), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"call_1\"");
    CHECK_CONTAINS(out, "\"cancelled\"");
    capstan_string_free(out);
    capstan_stream_free(stream);
}

/* A server from registry A, mounted into registry B: A is freed while the
 * server runs (its calls then end without reaching a tool), B is freed
 * before the mount, then the mount and the server are freed. */
static void a_server_and_a_mount_outlive_their_registries(void) {
    watchdog_begin("test_children", "mcp", 180u);
    capstan_registry *a = registry_with("echo", echo);
    capstan_mcp_server_options sopts;
    CHECK_STATUS(capstan_mcp_server_options_init(&sopts), CAPSTAN_OK);
    capstan_mcp_server *server = NULL;
    CHECK_STATUS(capstan_mcp_server_start(a, &sopts, &server), CAPSTAN_OK);
    char *url = NULL;
    CHECK_STATUS(capstan_mcp_server_url(server, &url, NULL), CAPSTAN_OK);

    capstan_registry *b = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &b), CAPSTAN_OK);
    capstan_mcp_mount_options mopts;
    CHECK_STATUS(capstan_mcp_mount_options_init(&mopts), CAPSTAN_OK);
    mopts.url = url;
    mopts.prefix = "m_";
    mopts.call_timeout_ms = 20000;
    capstan_mcp_mount *mount = NULL;
    CHECK_STATUS(capstan_mcp_mount_new(b, &mopts, &mount), CAPSTAN_OK);

    const char *call = "[{\"id\":\"x\",\"name\":\"m_echo\",\"arguments\":{}}]";
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(b, call, CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    capstan_string_free(out);

    capstan_registry_free(a); /* the server keeps answering */
    out = NULL;
    CHECK_STATUS(capstan_registry_execute(b, call, CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_OK);
    CHECK(out != NULL && strstr(out, "\"outcome\":\"ok\"") == NULL);
    CHECK_CONTAINS(out, "\"id\":\"x\"");
    capstan_string_free(out);

    capstan_registry_free(b); /* before the mount */
    CHECK_STATUS(capstan_mcp_mount_free(mount), CAPSTAN_OK);
    CHECK_STATUS(capstan_mcp_server_stop(server), CAPSTAN_OK);
    capstan_mcp_server_free(server);
    capstan_string_free(url);
}

int main(void) {
    const uint32_t mcp = CAPSTAN_FEATURE_MCP_SERVER | CAPSTAN_FEATURE_MCP_MOUNT | CAPSTAN_FEATURE_MCP_HTTP;
    a_batch_outlives_its_registry();
    a_stream_outlives_its_registry();
    if ((capstan_features_mask() & mcp) == mcp)
        a_server_and_a_mount_outlive_their_registries();
    else
        printf("test_children: MCP part skipped (library built without feature mcp)\n");
    return check_report("test_children");
}
