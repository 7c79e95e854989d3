/* The one child-lifetime rule (header: "Children"): a batch, stream, MCP
 * server (HTTP, and serve_stdio) or mount keeps what it needs of its
 * registry alive, so capstan_registry_free may come before the child's own
 * free. For each kind the registry is freed while the child lives and while
 * one of its calls runs: that call sees capstan_call_cancelled and is
 * reported CAPSTAN_OUTCOME_CANCELLED, calls not started end cancelled, the
 * child is still used, then ended and freed by its own function. Run plain,
 * under ASan/UBSan and under Valgrind (make c-tests): a use after free or a
 * leak fails there. Bounded by a watchdog. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#ifndef _WIN32
#include <signal.h>
#include <unistd.h>
#endif

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

/* OpenAI Chat stream of two calls of "gated": the first part holds call_1
 * whole (so CAPSTAN_EXEC_EARLY_DISPATCH starts it), the rest call_2. */
static const char CHAT_FIRST[] =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
    "{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
    "\"function\":{\"name\":\"gated\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n";
static const char CHAT_REST[] =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
    "{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\",\"type\":\"function\","
    "\"function\":{\"name\":\"gated\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},"
    "\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: [DONE]\n\n";

/* The stream's results by index; on_result may run on pool threads. */
static atomic_int stream_outcome[2];
static atomic_int stream_results;
static atomic_int stream_ends;

static void stream_collect(void *user_data, const capstan_result *r) {
    (void)user_data;
    if (r == NULL) {
        atomic_fetch_add(&stream_ends, 1);
        return;
    }
    if (r->index < 2) atomic_store(&stream_outcome[r->index], (int)r->outcome);
    atomic_fetch_add(&stream_results, 1);
}

static void a_stream_outlives_its_registry(void) {
    watchdog_begin("test_children", "stream", 120u);
    atomic_store(&entered, 0);
    atomic_store(&saw_cancel, 0);
    atomic_store(&stream_results, 0);
    atomic_store(&stream_ends, 0);
    for (int i = 0; i < 2; i++) atomic_store(&stream_outcome[i], -1);
    capstan_registry *reg = registry_with("gated", gated);
    capstan_exec_options opts;
    CHECK_STATUS(capstan_exec_options_init(&opts), CAPSTAN_OK);
    opts.flags = CAPSTAN_EXEC_EARLY_DISPATCH;
    capstan_stream_sink sink;
    CHECK_STATUS(capstan_stream_sink_init(&sink), CAPSTAN_OK);
    sink.on_result = stream_collect;
    capstan_stream *stream = NULL;
    CHECK_STATUS(capstan_stream_new(reg, CAPSTAN_FORMAT_OPENAI_CHAT, &opts, &sink, &stream), CAPSTAN_OK);
    CHECK_STATUS(capstan_stream_feed(stream, CHAT_FIRST, sizeof CHAT_FIRST - 1), CAPSTAN_OK);
    CHECK(wait_flag(&entered, 20000)); /* call_1 runs */
    capstan_registry_free(reg);        /* mid-call: waits for the running tool */
    CHECK(atomic_load(&saw_cancel) == 1);
    /* Fed after the free: call_2 is read and ends cancelled, never started. */
    CHECK_STATUS(capstan_stream_feed(stream, CHAT_REST, sizeof CHAT_REST - 1), CAPSTAN_OK);
    char *out = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_stream_finish(stream, &out, &len), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"call_1\"");
    CHECK_CONTAINS(out, "\"call_2\"");
    capstan_string_free(out);
    CHECK(atomic_load(&stream_results) == 2);
    CHECK(atomic_load(&stream_ends) == 1);
    CHECK(atomic_load(&stream_outcome[0]) == CAPSTAN_OUTCOME_CANCELLED);
    CHECK(atomic_load(&stream_outcome[1]) == CAPSTAN_OUTCOME_CANCELLED);
    CHECK(atomic_load(&entered) == 1);
    capstan_stream_free(stream);
}

/* Runs one call through `reg` as a batch (poll delivery) and returns it. */
static capstan_batch *submit_one(capstan_registry *reg, const char *name) {
    char calls[128];
    snprintf(calls, sizeof calls, "[{\"id\":\"x\",\"name\":\"%s\",\"arguments\":{}}]", name);
    capstan_exec_options opts;
    CHECK_STATUS(capstan_exec_options_init(&opts), CAPSTAN_OK);
    opts.flags = CAPSTAN_EXEC_DELIVER_POLL;
    capstan_batch *batch = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &opts, NULL, NULL, &batch), CAPSTAN_OK);
    return batch;
}

/* The one result of a one-call batch: its outcome, its text copied. */
typedef struct {
    capstan_outcome outcome;
    char content[512];
    int count;
    int ends;
} one_result;

static void keep_one(void *user_data, const capstan_result *r) {
    one_result *o = user_data;
    if (r == NULL) {
        o->ends++;
        return;
    }
    o->outcome = r->outcome;
    size_t n = r->content_len < sizeof o->content - 1 ? r->content_len : sizeof o->content - 1;
    memcpy(o->content, r->content, n);
    o->content[n] = '\0';
    o->count++;
}

static one_result batch_result(capstan_batch *batch) {
    one_result o;
    memset(&o, 0, sizeof o);
    CHECK_STATUS(capstan_batch_wait(batch, 30000), CAPSTAN_OK);
    while (o.ends == 0 && capstan_batch_poll(batch, keep_one, &o, 8) > 0) {
    }
    CHECK(o.count == 1);
    CHECK(o.ends == 1);
    return o;
}

static capstan_mcp_mount *mount_into(capstan_registry *reg, const char *url) {
    capstan_mcp_mount_options mopts;
    CHECK_STATUS(capstan_mcp_mount_options_init(&mopts), CAPSTAN_OK);
    mopts.url = url;
    mopts.prefix = "m_";
    mopts.call_timeout_ms = 30000;
    mopts.connect_timeout_ms = 60000; /* Valgrind on a loaded machine is slow */
    capstan_mcp_mount *mount = NULL;
    CHECK_STATUS(capstan_mcp_mount_new(reg, &mopts, &mount), CAPSTAN_OK);
    return mount;
}

/* A server started from registry A; mounted into registry B, then into C.
 * The mount: B is freed while a call of the mount runs on the server; that
 * call ends cancelled, the server's tool is told (notifications/cancelled),
 * then the mount is freed. The server: A is freed while a call runs in its
 * tool (the tool sees the cancellation, the client gets the cancelled
 * result); later calls still get an answer, cancelled; then the server is
 * stopped and freed. */
static void a_server_and_a_mount_outlive_their_registries(void) {
    watchdog_begin("test_children", "mcp", 180u);
    capstan_registry *a = registry_with("echo", echo);
    capstan_tool_def def;
    CHECK_STATUS(capstan_tool_def_init(&def), CAPSTAN_OK);
    def.name = "gated";
    def.parameters = OBJ;
    def.callback = gated;
    CHECK_STATUS(capstan_registry_add_tool(a, &def), CAPSTAN_OK);
    capstan_mcp_server_options sopts;
    CHECK_STATUS(capstan_mcp_server_options_init(&sopts), CAPSTAN_OK);
    capstan_mcp_server *server = NULL;
    CHECK_STATUS(capstan_mcp_server_start(a, &sopts, &server), CAPSTAN_OK);
    char *url = NULL;
    CHECK_STATUS(capstan_mcp_server_url(server, &url, NULL), CAPSTAN_OK);

    /* The mount outlives B, with a call in flight. */
    atomic_store(&entered, 0);
    atomic_store(&saw_cancel, 0);
    capstan_registry *b = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &b), CAPSTAN_OK);
    capstan_mcp_mount *mount = mount_into(b, url);
    if (mount == NULL) { /* failed above; the rest needs it */
        capstan_registry_free(b);
        capstan_registry_free(a);
        capstan_mcp_server_free(server);
        capstan_string_free(url);
        return;
    }
    capstan_batch *batch = submit_one(b, "m_gated");
    CHECK(wait_flag(&entered, 20000)); /* running in A's tool, on the server */
    capstan_registry_free(b);
    one_result r = batch_result(batch);
    CHECK(r.outcome == CAPSTAN_OUTCOME_CANCELLED);
    capstan_batch_free(batch);
    CHECK(wait_flag(&saw_cancel, 20000)); /* the server was told */
    CHECK_STATUS(capstan_mcp_mount_free(mount), CAPSTAN_OK);

    /* The server outlives A, with a call in flight. */
    atomic_store(&entered, 0);
    atomic_store(&saw_cancel, 0);
    capstan_registry *c = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &c), CAPSTAN_OK);
    mount = mount_into(c, url);
    if (mount == NULL) {
        capstan_registry_free(c);
        capstan_registry_free(a);
        capstan_mcp_server_free(server);
        capstan_string_free(url);
        return;
    }
    batch = submit_one(c, "m_gated");
    CHECK(wait_flag(&entered, 20000));
    capstan_registry_free(a); /* the server keeps answering */
    CHECK(atomic_load(&saw_cancel) == 1);
    r = batch_result(batch);
    /* The server's cancelled result, an error result for the mount. */
    CHECK(r.outcome == CAPSTAN_OUTCOME_TOOL_ERROR);
    CHECK_CONTAINS(r.content, "Cancelled: the tool registry was shut down.");
    capstan_batch_free(batch);
    /* A later call: the server answers it cancelled, never as an unknown
     * tool (-32602). The closed registry also announced list_changed: a
     * mount that has re-listed by now has no tools left, and the call ends
     * unknown_tool here without reaching the server. */
    batch = submit_one(c, "m_echo");
    r = batch_result(batch);
    if (r.outcome != CAPSTAN_OUTCOME_UNKNOWN_TOOL) {
        CHECK(r.outcome == CAPSTAN_OUTCOME_TOOL_ERROR);
        CHECK_CONTAINS(r.content, "Cancelled: the tool registry was shut down.");
    }
    capstan_batch_free(batch);
    CHECK(atomic_load(&entered) == 1);

    capstan_registry_free(c); /* before the mount */
    CHECK_STATUS(capstan_mcp_mount_free(mount), CAPSTAN_OK);
    CHECK_STATUS(capstan_mcp_server_stop(server), CAPSTAN_OK);
    capstan_mcp_server_free(server);
    capstan_string_free(url);
}

#ifndef _WIN32
/* serve_stdio on a thread, its stdin and stdout pipes of this process. */
typedef struct {
    capstan_registry *reg;
    capstan_status status;
} stdio_serve;

static void *serve_thread(void *arg) {
    stdio_serve *s = arg;
    s->status = capstan_mcp_server_serve_stdio(s->reg, NULL);
    return NULL;
}

/* Reads the server's lines until one holds `needle` (or the pipe ends);
 * returns that line, malloc'd, or NULL. */
static char *read_line_with(int fd, const char *needle) {
    char line[8192];
    size_t n = 0;
    for (;;) {
        char ch;
        ssize_t got = read(fd, &ch, 1);
        if (got <= 0) return NULL;
        if (ch != '\n') {
            if (n < sizeof line - 1) line[n++] = ch;
            continue;
        }
        line[n] = '\0';
        n = 0;
        if (strstr(line, needle) != NULL) return strdup(line);
    }
}

static void write_all(int fd, const char *text) {
    size_t len = strlen(text);
    while (len > 0) {
        ssize_t put = write(fd, text, len);
        if (put <= 0) break;
        text += put;
        len -= (size_t)put;
    }
}

/* serve_stdio with a call running in its tool when the registry is freed
 * (from this thread: serve_stdio holds its own share once it serves): the
 * tool sees the cancellation, serve_stdio stops as for capstan_registry_close
 * and returns OK. */
static void serve_stdio_outlives_its_registry(void) {
    watchdog_begin("test_children", "serve_stdio", 120u);
    /* As a host serving stdio does (the header says why): a write capstan
     * makes after this test closed the pipe's reader fails instead of
     * ending the process (seen under Valgrind's timing). */
    signal(SIGPIPE, SIG_IGN);
    atomic_store(&entered, 0);
    atomic_store(&saw_cancel, 0);
    int to_server[2], from_server[2];
    CHECK(pipe(to_server) == 0 && pipe(from_server) == 0);
    fflush(stdout);
    int saved_out = dup(1);
    CHECK(dup2(to_server[0], 0) == 0 && dup2(from_server[1], 1) == 1);
    close(to_server[0]);
    close(from_server[1]);

    stdio_serve s = {registry_with("gated", gated), CAPSTAN_ERR_INTERNAL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve_thread, &s) == 0);
    write_all(to_server[1],
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
              "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"test_children\",\"version\":\"1\"}}}\n");
    char *line = read_line_with(from_server[0], "\"id\":1");
    CHECK_CONTAINS(line, "\"protocolVersion\"");
    free(line);
    write_all(to_server[1],
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"gated\","
              "\"arguments\":{}}}\n");
    CHECK(wait_flag(&entered, 20000));
    capstan_registry_free(s.reg); /* mid-call */
    CHECK(atomic_load(&saw_cancel) == 1);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK_STATUS(s.status, CAPSTAN_OK);

    /* stdin ends (the reader capstan leaves behind sees end of file) and
     * stdout is this process's again; fd 0 stays the ended pipe. */
    close(to_server[1]);
    fflush(stdout);
    dup2(saved_out, 1);
    close(saved_out);
    close(from_server[0]);
}
#endif

int main(void) {
    const uint32_t mcp = CAPSTAN_FEATURE_MCP_SERVER | CAPSTAN_FEATURE_MCP_MOUNT | CAPSTAN_FEATURE_MCP_HTTP;
    a_batch_outlives_its_registry();
    a_stream_outlives_its_registry();
    if ((capstan_features_mask() & mcp) == mcp) {
        a_server_and_a_mount_outlive_their_registries();
#ifndef _WIN32
        serve_stdio_outlives_its_registry();
#endif
    } else {
        printf("test_children: MCP part skipped (library built without feature mcp)\n");
    }
    return check_report("test_children");
}
