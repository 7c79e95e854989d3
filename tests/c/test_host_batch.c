/* Host batches (capstan_host_batch_*): the path of a host that runs its quick
 * tools (CAPSTAN_TOOL_HOST_RUN) itself. Calls come out checked in one
 * buffer, answers go back in one, the other tools run on the pool, and every
 * bad answer, a freed batch and a second crossing get a status, not a crash. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "support.h"

static capstan_registry *reg;
static atomic_int host_tool_callbacks;
static atomic_int gate_open;
static atomic_int gate_entered;
static pthread_t begin_thread;
static atomic_int native_on_begin_thread;

static capstan_tool_def make_def(const char *name, const char *schema, capstan_tool_fn fn) {
    capstan_tool_def def;
    memset(&def, 0, sizeof def);
    def.struct_size = sizeof def;
    def.name = name;
    def.description = "test tool";
    def.parameters = schema;
    def.callback = fn;
    return def;
}

static void add_tool(capstan_tool_def def) { CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK); }

/* The callback of a host-run tool: runs only outside host batches. */
static void host_tool(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_fetch_add(&host_tool_callbacks, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "from the callback", CAPSTAN_NTS);
}

static void native(void *user_data, capstan_call *call) {
    (void)user_data;
    if (pthread_equal(pthread_self(), begin_thread)) atomic_store(&native_on_begin_thread, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "native:ok", CAPSTAN_NTS);
}

/* A native tool that holds its pool thread until the test opens the gate. */
static void gate(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&gate_entered, 1);
    wait_flag(&gate_open, 20000);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "gate:ok", CAPSTAN_NTS);
}

static const char *ADD_SCHEMA =
    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
    "\"b\":{\"type\":\"integer\",\"default\":2}},\"required\":[\"a\"]}";

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* The result object of call `id` in a results array (up to the next result). */
static const char *result_of(const char *json, const char *id, char *buf, size_t cap) {
    char key[64];
    snprintf(key, sizeof key, "{\"id\":\"%s\"", id);
    buf[0] = '\0';
    const char *p = json ? strstr(json, key) : NULL;
    if (p == NULL) return buf;
    const char *end = strstr(p + 1, "{\"id\":\"");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n >= cap) n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static capstan_host_batch *begin(const char *calls, const capstan_exec_options *opts, const char **out) {
    capstan_host_batch *b = NULL;
    size_t len = 0;
    *out = NULL;
    CHECK_STATUS(capstan_host_batch_begin(reg, calls, CAPSTAN_NTS, opts, &b, out, &len), CAPSTAN_OK);
    CHECK(*out != NULL && strlen(*out) == len);
    return b;
}

static void host_calls_come_out_checked_and_others_run_on_the_pool(void) {
    atomic_store(&host_tool_callbacks, 0);
    begin_thread = pthread_self();
    const char *calls =
        "[{\"id\":\"c0\",\"name\":\"add\",\"arguments\":{\"a\":1}},"
        "{\"id\":\"c1\",\"name\":\"native\",\"arguments\":{}},"
        "{\"id\":\"c2\",\"name\":\"nope\",\"arguments\":{}},"
        "{\"id\":\"c3\",\"name\":\"add\",\"arguments\":{\"a\":\"x\"}},"
        "{\"id\":\"c4\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":5,\\\"b\\\":1}\"}]";
    const char *out = NULL;
    capstan_host_batch *b = begin(calls, NULL, &out);
    /* Only the valid calls of the host-run tool, by index, defaults filled. */
    CHECK_CONTAINS(out, "{\"index\":0,\"id\":\"c0\",\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}");
    CHECK_CONTAINS(out, "{\"index\":4,\"id\":\"c4\",\"name\":\"add\",\"arguments\":{\"a\":5,\"b\":1}}");
    CHECK(count_of(out, "\"index\"") == 2);
    const char *results = NULL;
    size_t rlen = 0;
    const char *answers = "[{\"index\":4,\"json\":{ \"sum\" : 6 }},{\"index\":0,\"text\":\"3\"}]";
    CHECK_STATUS(capstan_host_batch_finish(b, answers, CAPSTAN_NTS, UINT32_MAX, &results, &rlen), CAPSTAN_OK);
    CHECK(results != NULL && strlen(results) == rlen);
    char r[512];
    CHECK(results != NULL && strstr(results, "\"c0\"") < strstr(results, "\"c1\"")); /* call order */
    CHECK_CONTAINS(result_of(results, "c0", r, sizeof r), "\"content\":\"3\",\"is_error\":false,\"outcome\":\"ok\"");
    CHECK_CONTAINS(result_of(results, "c1", r, sizeof r), "\"content\":\"native:ok\"");
    CHECK_CONTAINS(result_of(results, "c2", r, sizeof r), "\"outcome\":\"unknown_tool\"");
    CHECK_CONTAINS(result_of(results, "c3", r, sizeof r), "\"outcome\":\"invalid_arguments\"");
    /* JSON answers are rendered compact, as a callback's would be. */
    CHECK_CONTAINS(result_of(results, "c4", r, sizeof r), "\"content\":\"{\\\"sum\\\":6}\"");
    CHECK(atomic_load(&host_tool_callbacks) == 0);
    CHECK(atomic_load(&native_on_begin_thread) == 0);
    capstan_host_batch_free(b);
}

static void an_error_answer_is_a_tool_error_and_output_is_capped(void) {
    const char *out = NULL;
    capstan_host_batch *b = begin(
        "[{\"id\":\"e\",\"name\":\"add\",\"arguments\":{\"a\":1}},"
        "{\"id\":\"long\",\"name\":\"short_add\",\"arguments\":{\"a\":1}}]",
        NULL, &out);
    CHECK(count_of(out, "\"index\"") == 2);
    const char *results = NULL;
    CHECK_STATUS(capstan_host_batch_finish(
                     b, "[{\"index\":0,\"error\":\"division by zero\"},{\"index\":1,\"text\":\"0123456789abcdef\"}]",
                     CAPSTAN_NTS, UINT32_MAX, &results, NULL),
                 CAPSTAN_OK);
    char r[512];
    result_of(results, "e", r, sizeof r);
    CHECK_CONTAINS(r, "division by zero");
    CHECK_CONTAINS(r, "\"is_error\":true,\"outcome\":\"tool_error\"");
    result_of(results, "long", r, sizeof r);
    CHECK(strstr(r, "0123456789abcdef") == NULL); /* max_output_chars = 8 */
    CHECK_CONTAINS(r, "01234567");
    capstan_host_batch_free(b);
}

static void bad_answers_change_nothing_and_say_why(void) {
    const char *out = NULL;
    capstan_host_batch *b = begin(
        "[{\"id\":\"a\",\"name\":\"add\",\"arguments\":{\"a\":1}},"
        "{\"id\":\"b\",\"name\":\"add\",\"arguments\":{\"a\":2}}]",
        NULL, &out);
    const char *results = NULL;
    char msg[512];
    struct {
        const char *answers;
        size_t len;
        const char *says;
    } bad[] = {
        {"[{\"index\":0,\"text\":\"x\"},{\"index\":7,\"text\":\"y\"}]", CAPSTAN_NTS, "index 7 is not a call"},
        {"[{\"index\":0,\"text\":\"x\"},{\"index\":0,\"text\":\"y\"}]", CAPSTAN_NTS, "a second answer for index 0"},
        {"[{\"index\":0,\"text\":\"x\"}]", CAPSTAN_NTS, "no answer for index 1 (id \"b\""},
        {"[{\"index\":0,\"text\":\"x\"},{\"index\":1,\"text\":\"y\"}]", 20, "not a JSON array"}, /* wrong length */
        {"[{\"index\":0,\"text\":\"x\",\"json\":1},{\"index\":1,\"text\":\"y\"}]", CAPSTAN_NTS, "exactly one of"},
        {"{\"index\":0}", CAPSTAN_NTS, "not a JSON array"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        results = NULL;
        CHECK_STATUS(capstan_host_batch_finish(b, bad[i].answers, bad[i].len, UINT32_MAX, &results, NULL),
                     CAPSTAN_ERR_INVALID_RESULTS);
        capstan_error_message(msg, sizeof msg);
        CHECK_CONTAINS(msg, bad[i].says);
        CHECK(results == NULL); /* outputs only on success */
    }
    /* No answers (NULL) is for waiting again after answers were given. */
    CHECK_STATUS(capstan_host_batch_finish(b, NULL, 0, UINT32_MAX, &results, NULL), CAPSTAN_ERR_INVALID_RESULTS);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "no answers");
    /* Nothing was completed by the bad answers: a good one still lands whole. */
    CHECK_STATUS(capstan_host_batch_finish(b, "[{\"index\":1,\"text\":\"two\"},{\"index\":0,\"text\":\"one\"}]",
                                           CAPSTAN_NTS, UINT32_MAX, &results, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(results, "\"content\":\"one\"");
    CHECK_CONTAINS(results, "\"content\":\"two\"");
    const char *again = NULL;
    CHECK_STATUS(capstan_host_batch_finish(b, "[]", CAPSTAN_NTS, UINT32_MAX, &again, NULL), CAPSTAN_ERR_ALREADY_COMPLETED);
    CHECK(again == NULL);
    capstan_host_batch_free(b);
    /* A freed batch is a stale handle, never a use after free. */
    CHECK_STATUS(capstan_host_batch_finish(b, "[]", CAPSTAN_NTS, UINT32_MAX, &again, NULL), CAPSTAN_ERR_STALE_HANDLE);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "freed");
    capstan_host_batch_cancel(b); /* no-op */
    capstan_host_batch_free(b);   /* no-op */
    capstan_host_batch_free(NULL);
    CHECK_STATUS(capstan_host_batch_finish(NULL, "[]", CAPSTAN_NTS, UINT32_MAX, &again, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    b = begin("[]", NULL, &again);
    CHECK_STATUS(capstan_host_batch_finish(b, "[]", CAPSTAN_NTS, UINT32_MAX, NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_host_batch_free(b);
}

static void bad_calls_and_flags_are_refused_at_begin(void) {
    capstan_host_batch *b = NULL;
    const char *out = NULL;
    CHECK_STATUS(capstan_host_batch_begin(reg, "[{\"id\":", CAPSTAN_NTS, NULL, &b, &out, NULL),
                 CAPSTAN_ERR_INVALID_CALLS);
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.flags = CAPSTAN_EXEC_DELIVER_POLL;
    CHECK_STATUS(capstan_host_batch_begin(reg, "[]", CAPSTAN_NTS, &opts, &b, &out, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(b == NULL && out == NULL);
}

static void approval_is_asked_before_a_call_is_handed_out(void) {
    /* No approver: denied, not handed out; an id the host approved: handed out. */
    const char *calls = "[{\"id\":\"p1\",\"name\":\"guarded\",\"arguments\":{\"a\":1}},"
                        "{\"id\":\"p2\",\"name\":\"guarded\",\"arguments\":{\"a\":2}}]";
    const char *ids[] = {"p2"};
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.approved_ids = ids;
    opts.approved_count = 1;
    const char *out = NULL;
    capstan_host_batch *b = begin(calls, &opts, &out);
    CHECK(count_of(out, "\"index\"") == 1);
    CHECK_CONTAINS(out, "\"id\":\"p2\"");
    const char *results = NULL;
    CHECK_STATUS(capstan_host_batch_finish(b, "[{\"index\":1,\"text\":\"ran\"}]", CAPSTAN_NTS, UINT32_MAX, &results, NULL),
                 CAPSTAN_OK);
    char r[512];
    CHECK_CONTAINS(result_of(results, "p1", r, sizeof r), "\"outcome\":\"denied\"");
    CHECK_CONTAINS(result_of(results, "p2", r, sizeof r), "\"content\":\"ran\"");
    capstan_host_batch_free(b);
}

static void other_paths_run_a_host_run_tools_callback(void) {
    atomic_store(&host_tool_callbacks, 0);
    char *out = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"x\",\"name\":\"add\",\"arguments\":{\"a\":1}}",
                                          CAPSTAN_NTS, NULL, &out, &len),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "from the callback");
    CHECK(atomic_load(&host_tool_callbacks) == 1);
    capstan_string_free(out);
}

static void a_batch_with_nothing_for_the_host_hands_out_an_empty_array(void) {
    const char *out = NULL;
    capstan_host_batch *b = begin("[{\"id\":\"n\",\"name\":\"native\",\"arguments\":{}}]", NULL, &out);
    CHECK(out != NULL && strcmp(out, "[]") == 0);
    const char *results = NULL;
    CHECK_STATUS(capstan_host_batch_finish(b, "[]", CAPSTAN_NTS, UINT32_MAX, &results, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(results, "native:ok");
    capstan_host_batch_free(b);
    b = begin("[]", NULL, &out);
    CHECK(out != NULL && strcmp(out, "[]") == 0);
    CHECK_STATUS(capstan_host_batch_finish(b, "[]", CAPSTAN_NTS, UINT32_MAX, &results, NULL), CAPSTAN_OK);
    CHECK(results != NULL && strcmp(results, "[]") == 0);
    capstan_host_batch_free(b);
}

struct finisher {
    capstan_host_batch *b;
    capstan_status status;
    atomic_int done;
};

static void *finish_on_thread(void *arg) {
    struct finisher *f = arg;
    const char *results = NULL;
    /* The main thread's probing finishes are inside now and then: this one
     * is then refused (WRONG_CONTEXT, nothing changed) and tries again. A
     * slow machine (qemu) meets that window often. */
    do {
        f->status = capstan_host_batch_finish(f->b, "[{\"index\":0,\"text\":\"t\"}]", CAPSTAN_NTS, UINT32_MAX,
                                              &results, NULL);
        if (f->status == CAPSTAN_ERR_WRONG_CONTEXT) sleep_ms(1);
    } while (f->status == CAPSTAN_ERR_WRONG_CONTEXT);
    atomic_store(&f->done, 1);
    return NULL;
}

static void a_second_crossing_while_one_is_in_flight_is_refused(void) {
    atomic_store(&gate_open, 0);
    atomic_store(&gate_entered, 0);
    const char *out = NULL;
    capstan_host_batch *b = begin("[{\"id\":\"h\",\"name\":\"add\",\"arguments\":{\"a\":1}},"
                                  "{\"id\":\"g\",\"name\":\"gate\",\"arguments\":{}}]",
                                  NULL, &out);
    struct finisher f = {.b = b, .status = -1};
    atomic_init(&f.done, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, finish_on_thread, &f) == 0);
    /* The other thread's finish waits for the gate tool. Until it is inside,
     * this thread's (invalid) answer is INVALID_RESULTS and changes nothing;
     * once it is, WRONG_CONTEXT. */
    capstan_status st = CAPSTAN_OK;
    const char *results = NULL;
    for (int i = 0; i < 20000; i++) {
        st = capstan_host_batch_finish(b, "[]", CAPSTAN_NTS, UINT32_MAX, &results, NULL);
        if (st == CAPSTAN_ERR_WRONG_CONTEXT) break;
        sleep_ms(1);
    }
    CHECK_STATUS(st, CAPSTAN_ERR_WRONG_CONTEXT);
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "another thread");
    CHECK(!atomic_load(&f.done));
    atomic_store(&gate_open, 1);
    pthread_join(t, NULL);
    CHECK_STATUS(f.status, CAPSTAN_OK);
    capstan_host_batch_free(b);
}

static void an_unanswered_batch_ends_its_calls_when_cancelled_or_freed(void) {
    const char *out = NULL;
    capstan_host_batch *b = begin("[{\"id\":\"u\",\"name\":\"add\",\"arguments\":{\"a\":1}}]", NULL, &out);
    capstan_host_batch_cancel(b);
    const char *results = NULL;
    /* The answer comes too late: the call's result says it was cancelled. */
    CHECK_STATUS(capstan_host_batch_finish(b, "[{\"index\":0,\"text\":\"late\"}]", CAPSTAN_NTS, UINT32_MAX, &results, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(results, "\"outcome\":\"cancelled\"");
    CHECK(results != NULL && strstr(results, "late") == NULL);
    capstan_host_batch_free(b);
    /* Never answered, just freed: no leak, no hang (Valgrind and ASan runs). */
    b = begin("[{\"id\":\"v\",\"name\":\"add\",\"arguments\":{\"a\":1}},"
              "{\"id\":\"w\",\"name\":\"native\",\"arguments\":{}}]",
              NULL, &out);
    capstan_host_batch_free(b);
}

static atomic_int notified;

static void on_notify(void *user_data) {
    (void)user_data;
    atomic_store(&notified, 1);
}

/* An event loop need not block in finish: with timeout 0 it returns
 * CAPSTAN_ERR_TIMEOUT, the answers kept, and the registry's notifier says
 * when the pool's calls are done. */
static void finish_with_no_wait_returns_and_the_notifier_says_when_to_come_back(void) {
    capstan_registry *loop_reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &loop_reg), CAPSTAN_OK);
    capstan_tool_def def = make_def("add", ADD_SCHEMA, host_tool);
    def.flags = CAPSTAN_TOOL_HOST_RUN;
    CHECK_STATUS(capstan_registry_add_tool(loop_reg, &def), CAPSTAN_OK);
    def = make_def("gate", NULL, gate);
    CHECK_STATUS(capstan_registry_add_tool(loop_reg, &def), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_notify(loop_reg, on_notify, NULL, NULL), CAPSTAN_OK);
    atomic_store(&gate_open, 0);
    atomic_store(&notified, 0);
    capstan_host_batch *b = NULL;
    const char *out = NULL, *results = NULL;
    CHECK_STATUS(capstan_host_batch_begin(loop_reg,
                                          "[{\"id\":\"g\",\"name\":\"gate\",\"arguments\":{}},"
                                          "{\"id\":\"h\",\"name\":\"add\",\"arguments\":{\"a\":1}}]",
                                          CAPSTAN_NTS, NULL, &b, &out, NULL),
                 CAPSTAN_OK);
    const char *answers = "[{\"index\":1,\"text\":\"mine\"}]";
    CHECK_STATUS(capstan_host_batch_finish(b, answers, CAPSTAN_NTS, 0, &results, NULL), CAPSTAN_ERR_TIMEOUT);
    CHECK(results == NULL);
    CHECK_STATUS(capstan_host_batch_finish(b, answers, CAPSTAN_NTS, 0, &results, NULL),
                 CAPSTAN_ERR_ALREADY_COMPLETED); /* answers are taken once */
    atomic_store(&gate_open, 1);
    CHECK(wait_flag(&notified, 20000));
    CHECK_STATUS(capstan_host_batch_finish(b, NULL, 0, 0, &results, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(results, "\"content\":\"gate:ok\"");
    CHECK_CONTAINS(results, "\"content\":\"mine\"");
    capstan_host_batch_free(b);
    capstan_registry_free(loop_reg);
}

int main(void) {
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = make_def("add", ADD_SCHEMA, host_tool);
    def.flags = CAPSTAN_TOOL_HOST_RUN;
    add_tool(def);
    def = make_def("short_add", ADD_SCHEMA, host_tool);
    def.flags = CAPSTAN_TOOL_HOST_RUN;
    def.max_output_chars = 8;
    add_tool(def);
    def = make_def("guarded", ADD_SCHEMA, host_tool);
    def.flags = CAPSTAN_TOOL_HOST_RUN | CAPSTAN_TOOL_REQUIRES_APPROVAL;
    add_tool(def);
    add_tool(make_def("native", NULL, native));
    add_tool(make_def("gate", NULL, gate));

    host_calls_come_out_checked_and_others_run_on_the_pool();
    an_error_answer_is_a_tool_error_and_output_is_capped();
    bad_answers_change_nothing_and_say_why();
    bad_calls_and_flags_are_refused_at_begin();
    approval_is_asked_before_a_call_is_handed_out();
    other_paths_run_a_host_run_tools_callback();
    a_batch_with_nothing_for_the_host_hands_out_an_empty_array();
    a_second_crossing_while_one_is_in_flight_is_refused();
    an_unanswered_batch_ends_its_calls_when_cancelled_or_freed();
    finish_with_no_wait_returns_and_the_notifier_says_when_to_come_back();

    capstan_registry_free(reg);
    return check_report("test_host_batch");
}
