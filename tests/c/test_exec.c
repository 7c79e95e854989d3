/* size: one rule per test function, each short; they share the
 *    recording tools at the top, so the rules of running calls read as one list. */
/* Execution rules: order, limits, sequential and serial runs, timeouts,
 * deferred and double completion, content rendering, output caps, and call
 * handles that outlive their call or never named one. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "support.h"

static capstan_registry *reg;

static capstan_tool_def make_def(const char *name, capstan_tool_fn fn, void *user_data) {
    capstan_tool_def def;
    memset(&def, 0, sizeof def);
    def.struct_size = sizeof def;
    def.name = name;
    def.description = "test tool";
    def.callback = fn;
    def.user_data = user_data;
    return def;
}

static void add_tool(capstan_registry *r, capstan_tool_def def) { CHECK_STATUS(capstan_registry_add_tool(r, &def), CAPSTAN_OK); }

static char *run_opts(const char *calls, const capstan_exec_options *opts) {
    char *out = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_registry_execute(reg, calls, CAPSTAN_NTS, opts, &out, &len), CAPSTAN_OK);
    CHECK(out != NULL && strlen(out) == len);
    return out;
}

static char *run(const char *calls) { return run_opts(calls, NULL); }

/* Copies the i-th result object of a results array into buf ("" if none).
 * `{"id":"` only occurs unescaped at the start of a result. */
static const char *nth_result(const char *json, int i, char *buf, size_t cap) {
    buf[0] = '\0';
    const char *p = json;
    for (int k = 0; p != NULL && k <= i; k++) {
        p = strstr(k == 0 ? p : p + 1, "{\"id\":\"");
    }
    if (p == NULL) return buf;
    const char *end = strstr(p + 1, "{\"id\":\"");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n >= cap) n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Reads an integer argument `"key":N` from the call's arguments JSON. */
static int int_arg(capstan_call *call, const char *key) {
    const char *args = capstan_call_arguments(call, NULL);
    char pattern[32];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = args ? strstr(args, pattern) : NULL;
    return p ? atoi(p + strlen(pattern)) : 0;
}

static int is_late_status(capstan_status st) {
    return st == CAPSTAN_ERR_ALREADY_COMPLETED || st == CAPSTAN_ERR_STALE_HANDLE;
}

/* ------------------------------------------------------------------------ */
/* Order                                                                     */

/* Sleeps "ms" and answers with the call's id and tool as it sees them. */
static void echo_id(void *user_data, capstan_call *call) {
    (void)user_data;
    sleep_ms(int_arg(call, "ms"));
    const char *id = capstan_call_id(call, NULL);
    size_t tool_len = 0;
    const char *tool = capstan_call_tool(call, &tool_len);
    char text[128];
    snprintf(text, sizeof text, "id=%s tool=%s/%zu", id ? id : "?", tool ? tool : "?", tool_len);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, text, CAPSTAN_NTS);
}

static void parallel_results_keep_call_order(void) {
    const int n = check_small() ? 8 : 16;
    char calls[4096] = "[";
    for (int i = 0; i < n; i++) {
        /* later calls finish first */
        char one[128];
        snprintf(one, sizeof one, "%s{\"id\":\"c%d\",\"name\":\"echo\",\"arguments\":{\"ms\":%d}}",
                 i ? "," : "", i, (n - i) * 2);
        strcat(calls, one);
    }
    strcat(calls, "]");
    char *out = run(calls);
    CHECK(count_of(out, "{\"id\":\"") == n);
    for (int i = 0; i < n; i++) {
        char want[64], content[128], result[512];
        nth_result(out, i, result, sizeof result);
        snprintf(want, sizeof want, "{\"id\":\"c%d\",\"name\":\"echo\"", i);
        CHECK_CONTAINS(result, want);
        snprintf(content, sizeof content, "\"content\":\"id=c%d tool=echo/4\"", i);
        CHECK_CONTAINS(result, content);
        CHECK_CONTAINS(result, "\"outcome\":\"ok\"");
    }
    capstan_string_free(out);
}

static void results_have_the_normalized_shape(void) {
    char *out = run("{\"id\":\"s1\",\"name\":\"echo\",\"arguments\":{\"ms\":0}}");
    CHECK(out != NULL && out[0] == '[' && out[strlen(out) - 1] == ']');
    const char *keys[] = {"{\"id\":\"s1\"", ",\"name\":\"echo\"", ",\"content\":\"", ",\"is_error\":false",
                          ",\"outcome\":\"ok\"", ",\"duration_us\":"};
    const char *p = out;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *q = p ? strstr(p, keys[i]) : NULL;
        CHECK_CONTAINS(p, keys[i]); /* and in this order */
        p = q;
    }
    capstan_string_free(out);

    /* An empty batch is an empty array. */
    out = run("[]");
    CHECK(out != NULL && strcmp(out, "[]") == 0);
    capstan_string_free(out);
}

/* ------------------------------------------------------------------------ */
/* Concurrency                                                               */

struct gauge {
    atomic_int running;
    atomic_int peak;
    atomic_int gave_up;
    int wait_for; /* hold each call until this many ran at once (bounded) */
    int sleep_ms;
    pthread_mutex_t lock;
    char order[256];
};

static void gauge_reset(struct gauge *g, int wait_for, int sleep) {
    atomic_store(&g->running, 0);
    atomic_store(&g->peak, 0);
    atomic_store(&g->gave_up, 0);
    g->wait_for = wait_for;
    g->sleep_ms = sleep;
    g->order[0] = '\0';
}

static void measured(void *user_data, capstan_call *call) {
    struct gauge *g = user_data;
    int now = atomic_fetch_add(&g->running, 1) + 1;
    int peak = atomic_load(&g->peak);
    while (now > peak && !atomic_compare_exchange_weak(&g->peak, &peak, now)) {
    }
    pthread_mutex_lock(&g->lock);
    const char *id = capstan_call_id(call, NULL);
    if (strlen(g->order) + 8 < sizeof g->order) {
        strcat(g->order, id ? id : "?");
        strcat(g->order, " ");
    }
    pthread_mutex_unlock(&g->lock);
    /* Overlap on purpose: stay until `wait_for` calls ran at once, so a
     * broken limit shows as a higher peak instead of depending on timing. */
    for (int waited = 0; g->wait_for > 0 && atomic_load(&g->peak) < g->wait_for && !atomic_load(&g->gave_up);
         waited++) {
        if (waited > 3000) atomic_store(&g->gave_up, 1);
        sleep_ms(1);
    }
    sleep_ms(g->sleep_ms);
    atomic_fetch_sub(&g->running, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS);
}

static struct gauge par_gauge = {.lock = PTHREAD_MUTEX_INITIALIZER};
static struct gauge serial_gauge = {.lock = PTHREAD_MUTEX_INITIALIZER};

static char *calls_for(const char *tool, int n, char *buf, size_t cap) {
    snprintf(buf, cap, "[");
    for (int i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s{\"id\":\"m%d\",\"name\":\"%s\"}", i ? "," : "", i, tool);
    }
    strcat(buf, "]");
    return buf;
}

static void limit_caps_concurrency_exactly(void) {
    char calls[2048];
    gauge_reset(&par_gauge, 3, 5);
    capstan_exec_options opts = {.struct_size = sizeof opts, .flags = 0, .limit = 3, .timeout_ms = 0};
    char *out = run_opts(calls_for("measured", 12, calls, sizeof calls), &opts);
    CHECK(count_of(out, "\"outcome\":\"ok\"") == 12);
    CHECK(atomic_load(&par_gauge.peak) == 3);
    CHECK(!atomic_load(&par_gauge.gave_up));
    capstan_string_free(out);

    /* The default limit is 8. */
    gauge_reset(&par_gauge, 8, 5);
    out = run(calls_for("measured", 12, calls, sizeof calls));
    CHECK(count_of(out, "\"outcome\":\"ok\"") == 12);
    CHECK(atomic_load(&par_gauge.peak) == 8);
    capstan_string_free(out);
}

static void sequential_flag_runs_one_at_a_time_in_order(void) {
    char calls[2048];
    gauge_reset(&par_gauge, 0, 2);
    capstan_exec_options opts = {.struct_size = sizeof opts, .flags = CAPSTAN_EXEC_SEQUENTIAL, .limit = 8, .timeout_ms = 0};
    char *out = run_opts(calls_for("measured", 8, calls, sizeof calls), &opts);
    CHECK(count_of(out, "\"outcome\":\"ok\"") == 8);
    CHECK(atomic_load(&par_gauge.peak) == 1);
    CHECK(strcmp(par_gauge.order, "m0 m1 m2 m3 m4 m5 m6 m7 ") == 0);
    capstan_string_free(out);
}

static void serial_tool_never_runs_concurrently_with_itself(void) {
    char calls[2048];
    /* The control: the same callback, not serial, does overlap. */
    gauge_reset(&par_gauge, 2, 5);
    char *out = run(calls_for("measured", 8, calls, sizeof calls));
    CHECK(atomic_load(&par_gauge.peak) >= 2);
    capstan_string_free(out);

    gauge_reset(&serial_gauge, 0, 5);
    out = run(calls_for("serial", 8, calls, sizeof calls));
    CHECK(count_of(out, "\"outcome\":\"ok\"") == 8);
    CHECK(atomic_load(&serial_gauge.peak) == 1);
    capstan_string_free(out);
}

/* ------------------------------------------------------------------------ */
/* Timeouts                                                                  */

static struct {
    atomic_int started;
    atomic_int cancelled_at_start;
    atomic_int saw_cancel;
    atomic_int late_status;
    atomic_int finished;
} watcher;

/* Keeps running until told to stop, then tries to complete anyway. */
static void watch_cancel(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&watcher.cancelled_at_start, capstan_call_cancelled(call));
    atomic_store(&watcher.started, 1);
    for (int waited = 0; waited < 5000 && !capstan_call_cancelled(call); waited++) sleep_ms(1);
    atomic_store(&watcher.saw_cancel, capstan_call_cancelled(call));
    atomic_store(&watcher.late_status, capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "late", CAPSTAN_NTS));
    atomic_store(&watcher.finished, 1);
}

static void tool_timeout_reports_timeout_and_cancels_the_call(void) {
    char *out = run("{\"id\":\"t1\",\"name\":\"watcher\"}");
    CHECK_CONTAINS(out, "\"outcome\":\"timeout\"");
    CHECK_CONTAINS(out, "\"is_error\":true");
    CHECK_CONTAINS(out, "timed out");
    CHECK(strstr(out, "late") == NULL);
    capstan_string_free(out);
    /* The callback is still running: it sees the cancellation, then is refused. */
    CHECK(wait_flag(&watcher.finished, 10000));
    CHECK(atomic_load(&watcher.started) == 1);
    CHECK(atomic_load(&watcher.cancelled_at_start) == 0);
    CHECK(atomic_load(&watcher.saw_cancel) == 1);
    CHECK(is_late_status(atomic_load(&watcher.late_status)));
}

/* Spins until the call reports cancelled (bounded), then answers anyway. */
static struct {
    atomic_int seen_cancel;
    atomic_int finished;
} spin;

static void spin_until_cancelled(void *user_data, capstan_call *call) {
    (void)user_data;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        if (capstan_call_cancelled(call)) {
            atomic_fetch_add(&spin.seen_cancel, 1);
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 5);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "late", CAPSTAN_NTS);
    atomic_fetch_add(&spin.finished, 1);
}

/* Once a callback sees its call cancelled by the timeout, the call is over:
 * what it returns next is refused, and the result is the timeout. No sleep
 * between the check and the answer, so the two race as closely as they can. */
static void completion_after_seeing_cancellation_is_refused(void) {
    const int rounds = check_small() ? 10 : 200; /* spinning threads crawl under Valgrind */
    int answered_ok = 0;
    atomic_store(&spin.seen_cancel, 0);
    atomic_store(&spin.finished, 0);
    for (int i = 0; i < rounds; i++) {
        char *out = run("{\"id\":\"r1\",\"name\":\"spin\"}");
        if (out == NULL || strstr(out, "\"outcome\":\"timeout\"") == NULL) answered_ok++;
        capstan_string_free(out);
    }
    check_count++;
    if (answered_ok != 0) {
        check_failures++;
        fprintf(stderr,
                "%s:%d: %d of %d timed-out calls ended other than \"timeout\": their callback's answer, given "
                "after capstan_call_cancelled() returned true, was accepted\n",
                __FILE__, __LINE__, answered_ok, rounds);
    }
    /* The last callbacks may still be spinning after their result came back. */
    for (int waited = 0; waited < 60000 && atomic_load(&spin.finished) < rounds; waited++) sleep_ms(1);
    CHECK(atomic_load(&spin.finished) == rounds);
    CHECK(atomic_load(&spin.seen_cancel) == rounds);
}

/* A call handed to another thread, which completes it when told to. */
static struct {
    atomic_uintptr_t call;
    atomic_int ready;
    atomic_int go;
    atomic_int status;
    atomic_int fail_status;
    atomic_int cancelled;
    atomic_int done;
} handoff;

static void reset_handoff(void) {
    atomic_store(&handoff.call, 0);
    atomic_store(&handoff.ready, 0);
    atomic_store(&handoff.go, 0);
    atomic_store(&handoff.status, -1);
    atomic_store(&handoff.fail_status, -1);
    atomic_store(&handoff.cancelled, -1);
    atomic_store(&handoff.done, 0);
}

static void hand_off(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&handoff.call, (uintptr_t)call);
    atomic_store(&handoff.ready, 1);
}

/* Completes the handed-off call once told to go, or after 5 s (so that a
 * missing timeout fails the test instead of hanging it). */
static void *late_completer(void *arg) {
    (void)arg;
    wait_flag(&handoff.ready, 10000);
    wait_flag(&handoff.go, 5000);
    capstan_call *call = (capstan_call *)atomic_load(&handoff.call);
    atomic_store(&handoff.cancelled, capstan_call_cancelled(call));
    atomic_store(&handoff.status, capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "late", CAPSTAN_NTS));
    atomic_store(&handoff.fail_status, capstan_call_fail(call, "late failure", CAPSTAN_NTS));
    atomic_store(&handoff.done, 1);
    return NULL;
}

static void exec_timeout_overrides_the_tools_own(void) {
    /* "patient" has a one-minute timeout; the exec options cut it to 30 ms. */
    reset_handoff();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, late_completer, NULL) == 0);
    capstan_exec_options opts = {.struct_size = sizeof opts, .flags = 0, .limit = 0, .timeout_ms = 30};
    char *out = run_opts("{\"id\":\"t2\",\"name\":\"patient\"}", &opts);
    CHECK_CONTAINS(out, "\"outcome\":\"timeout\"");
    CHECK(strstr(out, "late") == NULL);
    capstan_string_free(out);
    atomic_store(&handoff.go, 1);
    pthread_join(t, NULL);
    CHECK(atomic_load(&handoff.cancelled) == 1);
    CHECK(is_late_status(atomic_load(&handoff.status)));
    CHECK(is_late_status(atomic_load(&handoff.fail_status)));

    /* And lengthens it: "hasty" (20 ms) gets 10 s, and its 100 ms answer counts. */
    opts.timeout_ms = 10000;
    out = run_opts("{\"id\":\"t3\",\"name\":\"hasty\"}", &opts);
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    CHECK_CONTAINS(out, "\"content\":\"slow but fine\"");
    capstan_string_free(out);
}

static void slow_answer(void *user_data, capstan_call *call) {
    (void)user_data;
    sleep_ms(100);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "slow but fine", CAPSTAN_NTS);
}

static void late_completion_from_a_thread_after_timeout_is_refused(void) {
    reset_handoff();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, late_completer, NULL) == 0);
    char *out = run("{\"id\":\"t4\",\"name\":\"quick_timeout\"}");
    CHECK_CONTAINS(out, "\"outcome\":\"timeout\"");
    capstan_string_free(out);
    atomic_store(&handoff.go, 1);
    pthread_join(t, NULL);
    CHECK(atomic_load(&handoff.done) == 1);
    CHECK(is_late_status(atomic_load(&handoff.status)));
    CHECK(is_late_status(atomic_load(&handoff.fail_status)));
}

/* ------------------------------------------------------------------------ */
/* Completion                                                                */

#define MAX_DEFERRED 16
static pthread_t deferred_threads[MAX_DEFERRED];
static atomic_int deferred_count;
static atomic_int deferred_after_return;
static atomic_int deferred_ok;

struct deferred {
    capstan_call *call;
    atomic_int returned;
};

static void *complete_later(void *arg) {
    struct deferred *d = arg;
    wait_flag(&d->returned, 10000);
    sleep_ms(5);
    if (atomic_load(&d->returned)) atomic_fetch_add(&deferred_after_return, 1);
    capstan_status st = capstan_call_return(d->call, CAPSTAN_CONTENT_JSON, "{\"done\": true}", CAPSTAN_NTS);
    if (st == CAPSTAN_OK) atomic_fetch_add(&deferred_ok, 1);
    free(d);
    return NULL;
}

static void defer(void *user_data, capstan_call *call) {
    (void)user_data;
    struct deferred *d = calloc(1, sizeof *d);
    d->call = call;
    int i = atomic_fetch_add(&deferred_count, 1);
    if (i >= MAX_DEFERRED || pthread_create(&deferred_threads[i], NULL, complete_later, d) != 0) {
        capstan_call_fail(call, "test could not start a thread", CAPSTAN_NTS);
        free(d);
        return;
    }
    atomic_store(&d->returned, 1); /* from here on the callback only returns */
}

static void deferred_completion_from_a_thread_is_delivered(void) {
    char calls[2048];
    atomic_store(&deferred_count, 0);
    atomic_store(&deferred_after_return, 0);
    atomic_store(&deferred_ok, 0);
    char *out = run(calls_for("defer", 4, calls, sizeof calls));
    CHECK(count_of(out, "\"outcome\":\"ok\"") == 4);
    CHECK(count_of(out, "\"content\":\"{\\\"done\\\":true}\"") == 4);
    capstan_string_free(out);
    int n = atomic_load(&deferred_count);
    CHECK(n == 4);
    for (int i = 0; i < n && i < MAX_DEFERRED; i++) pthread_join(deferred_threads[i], NULL);
    CHECK(atomic_load(&deferred_after_return) == 4);
    CHECK(atomic_load(&deferred_ok) == 4);
}

static atomic_int twice_status[3];

static void complete_twice(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&twice_status[0], capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "first", CAPSTAN_NTS));
    atomic_store(&twice_status[1], capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "second", CAPSTAN_NTS));
    atomic_store(&twice_status[2], capstan_call_fail(call, "third", CAPSTAN_NTS));
}

static void double_completion_is_rejected(void) {
    char *out = run("{\"id\":\"d1\",\"name\":\"twice\"}");
    CHECK_CONTAINS(out, "\"content\":\"first\"");
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    capstan_string_free(out);
    CHECK(atomic_load(&twice_status[0]) == CAPSTAN_OK);
    CHECK(is_late_status(atomic_load(&twice_status[1])));
    CHECK(is_late_status(atomic_load(&twice_status[2])));
}

struct canned {
    capstan_content kind;
    const char *content;
    atomic_int status;
};

static void answer_canned(void *user_data, capstan_call *call) {
    struct canned *c = user_data;
    atomic_store(&c->status, capstan_call_return(call, c->kind, c->content, CAPSTAN_NTS));
}

static struct canned pretty_json = {CAPSTAN_CONTENT_JSON, "{ \"city\" : \"Z\xc3\xbcrich\",\n  \"t\": [1, 2],\n  \"s\": \"\xe2\x98\x83\" }", -1};
static struct canned null_json = {CAPSTAN_CONTENT_JSON, " null ", -1};
static struct canned broken_json = {CAPSTAN_CONTENT_JSON, "{\"city\": ", -1};
static struct canned string_json = {CAPSTAN_CONTENT_JSON, "\"just text\"", -1};

static void json_content_is_compact_and_keeps_non_ascii(void) {
    char *out = run("{\"id\":\"j1\",\"name\":\"pretty\"}");
    CHECK_CONTAINS(out, "\"content\":\"{\\\"city\\\":\\\"Z\xc3\xbcrich\\\",\\\"t\\\":[1,2],\\\"s\\\":\\\"\xe2\x98\x83\\\"}\"");
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    CHECK(atomic_load(&pretty_json.status) == CAPSTAN_OK);
    capstan_string_free(out);

    /* A JSON string renders as its text. */
    out = run("{\"id\":\"j2\",\"name\":\"string_json\"}");
    CHECK_CONTAINS(out, "\"content\":\"just text\"");
    capstan_string_free(out);
}

static void json_null_renders_as_null(void) {
    char *out = run("{\"id\":\"j3\",\"name\":\"null_json\"}");
    CHECK_CONTAINS(out, "\"content\":\"null\"");
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    CHECK(atomic_load(&null_json.status) == CAPSTAN_OK);
    capstan_string_free(out);
}

static void invalid_json_content_completes_as_tool_error(void) {
    char *out = run("{\"id\":\"j4\",\"name\":\"broken_json\"}");
    CHECK_CONTAINS(out, "\"outcome\":\"tool_error\"");
    CHECK_CONTAINS(out, "\"is_error\":true");
    CHECK_CONTAINS(out, "broken_json"); /* the model reads which tool misbehaved */
    CHECK(atomic_load(&broken_json.status) == CAPSTAN_ERR_INVALID_CONTENT);
    capstan_string_free(out);
}

static atomic_int utf8_status[2] = {-1, -1};

static void bad_utf8_content(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&utf8_status[0], capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "caf\xc3(", CAPSTAN_NTS));
}

static void bad_utf8_message(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&utf8_status[1], capstan_call_fail(call, "broken \xff message", CAPSTAN_NTS));
}

/* Text that is not UTF-8 never reaches the model; the call still ends, as a
 * tool error, and the host hears of it through the status. */
static void invalid_utf8_content_completes_as_tool_error(void) {
    char *out = run("{\"id\":\"u1\",\"name\":\"bad_utf8_content\"}");
    CHECK_CONTAINS(out, "\"outcome\":\"tool_error\"");
    CHECK_CONTAINS(out, "bad_utf8_content");
    capstan_string_free(out);
    CHECK(atomic_load(&utf8_status[0]) == CAPSTAN_ERR_INVALID_UTF8);

    out = run("{\"id\":\"u2\",\"name\":\"bad_utf8_message\"}");
    CHECK_CONTAINS(out, "\"outcome\":\"tool_error\"");
    CHECK_CONTAINS(out, "bad_utf8_message");
    capstan_string_free(out);
    CHECK(atomic_load(&utf8_status[1]) == CAPSTAN_ERR_INVALID_UTF8);
}

static atomic_int fail_status = -1;

static void fail_with_message(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&fail_status, capstan_call_fail(call, "disk on fire", CAPSTAN_NTS));
}

static void fail_is_a_tool_error_with_its_message(void) {
    char *out = run("{\"id\":\"f1\",\"name\":\"boom\"}");
    CHECK_CONTAINS(out, "\"content\":\"disk on fire\"");
    CHECK_CONTAINS(out, "\"outcome\":\"tool_error\"");
    CHECK_CONTAINS(out, "\"is_error\":true");
    CHECK(atomic_load(&fail_status) == CAPSTAN_OK);
    capstan_string_free(out);
}

static atomic_int odd_status[2] = {-1, -1};

static void odd_kind(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&odd_status[0], capstan_call_return(call, 7, "before", CAPSTAN_NTS));
    atomic_store(&odd_status[1], capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "after", CAPSTAN_NTS));
}

static void unknown_content_kind_leaves_the_call_open(void) {
    char *out = run("{\"id\":\"k1\",\"name\":\"odd_kind\"}");
    CHECK_CONTAINS(out, "\"content\":\"after\"");
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    capstan_string_free(out);
    CHECK(atomic_load(&odd_status[0]) == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(atomic_load(&odd_status[1]) == CAPSTAN_OK);
}

#define E "\xc3\xa9"
#define E10 E E E E E E E E E E
static char hundred_e[201];
static struct canned long_text = {CAPSTAN_CONTENT_TEXT, hundred_e, -1};
static struct canned exact_text = {CAPSTAN_CONTENT_TEXT, E10, -1};

static void output_cap_truncates_with_a_marker(void) {
    char *out = run("{\"id\":\"o1\",\"name\":\"long_text\"}");
    CHECK_CONTAINS(out, "\"content\":\"" E10 "\\n[truncated: 90 more characters]\"");
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    capstan_string_free(out);
    /* At the cap exactly: untouched. */
    out = run("{\"id\":\"o2\",\"name\":\"exact_text\"}");
    CHECK_CONTAINS(out, "\"content\":\"" E10 "\"");
    CHECK(strstr(out, "truncated") == NULL);
    capstan_string_free(out);
}

/* ------------------------------------------------------------------------ */
/* Handles                                                                   */

static void *complete_after_free(void *arg) {
    (void)arg;
    wait_flag(&handoff.ready, 10000);
    wait_flag(&handoff.go, 10000); /* set once the registry is freed */
    capstan_call *call = (capstan_call *)atomic_load(&handoff.call);
    atomic_store(&handoff.cancelled, capstan_call_cancelled(call));
    atomic_store(&handoff.status, capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "late", CAPSTAN_NTS));
    atomic_store(&handoff.fail_status, capstan_call_fail(call, "late", CAPSTAN_NTS));
    atomic_store(&handoff.done, 1);
    return NULL;
}

struct exec_job {
    capstan_registry *reg;
    capstan_status status;
    char *results;
};

static void *exec_held(void *arg) {
    struct exec_job *job = arg;
    job->status = capstan_registry_execute(job->reg, "{\"id\":\"h1\",\"name\":\"hold\"}", CAPSTAN_NTS, NULL, &job->results,
                                  NULL);
    return NULL;
}

static void completion_after_registry_free_is_an_error(void) {
    capstan_registry *r = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &r), CAPSTAN_OK);
    atomic_int destroyed = 0;
    capstan_tool_def def = make_def("hold", hand_off, &destroyed);
    def.destroy = count_destroy;
    add_tool(r, def);
    reset_handoff();

    pthread_t holder, executor;
    struct exec_job job = {r, -1, NULL};
    CHECK(pthread_create(&holder, NULL, complete_after_free, NULL) == 0);
    CHECK(pthread_create(&executor, NULL, exec_held, &job) == 0);
    CHECK(wait_flag(&handoff.ready, 10000));

    capstan_registry_free(r);
    CHECK(atomic_load(&destroyed) == 1);
    atomic_store(&handoff.go, 1);
    pthread_join(holder, NULL);
    pthread_join(executor, NULL);

    CHECK(is_late_status(atomic_load(&handoff.status)));
    CHECK(is_late_status(atomic_load(&handoff.fail_status)));
    CHECK(atomic_load(&handoff.cancelled) == 1);
    /* The call in flight got its one result: cancelled. */
    CHECK_STATUS(job.status, CAPSTAN_OK);
    CHECK_CONTAINS(job.results, "\"outcome\":\"cancelled\"");
    capstan_string_free(job.results);
}

static void garbage_handle_is_stale_not_a_crash(void) {
    capstan_call *garbage[] = {(capstan_call *)(uintptr_t)0x1234, (capstan_call *)(uintptr_t)0xdeadbeef,
                               (capstan_call *)UINTPTR_MAX};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        capstan_call *g = garbage[i];
        size_t len = 77;
        CHECK_STATUS(capstan_call_return(g, CAPSTAN_CONTENT_TEXT, "x", CAPSTAN_NTS), CAPSTAN_ERR_STALE_HANDLE);
        CHECK_STATUS(capstan_call_fail(g, "x", CAPSTAN_NTS), CAPSTAN_ERR_STALE_HANDLE);
        CHECK(capstan_call_arguments(g, &len) == NULL);
        CHECK(capstan_call_id(g, &len) == NULL);
        CHECK(capstan_call_tool(g, &len) == NULL);
        CHECK(len == 77);
        CHECK(capstan_call_cancelled(g));
    }
    CHECK_STATUS(capstan_call_return(NULL, CAPSTAN_CONTENT_TEXT, "x", CAPSTAN_NTS), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_call_fail(NULL, "x", CAPSTAN_NTS), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(capstan_call_arguments(NULL, NULL) == NULL);
}

static struct {
    int args_live, args_stale, id_stale, tool_stale, cancelled_stale;
    char args[128];
    char error[256];
} stale;

static void use_after_complete(void *user_data, capstan_call *call) {
    (void)user_data;
    const char *args = capstan_call_arguments(call, NULL);
    stale.args_live = args != NULL;
    snprintf(stale.args, sizeof stale.args, "%s", args ? args : "");
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS);
    stale.args_stale = capstan_call_arguments(call, NULL) == NULL;
    capstan_error_message(stale.error, sizeof stale.error);
    stale.id_stale = capstan_call_id(call, NULL) == NULL;
    stale.tool_stale = capstan_call_tool(call, NULL) == NULL;
    stale.cancelled_stale = capstan_call_cancelled(call);
}

static void call_arguments_of_a_completed_call_is_null(void) {
    char *out = run("{\"id\":\"a1\",\"name\":\"stale\",\"arguments\":{\"n\":1}}");
    CHECK_CONTAINS(out, "\"content\":\"done\"");
    capstan_string_free(out);
    CHECK(stale.args_live);
    CHECK_CONTAINS(stale.args, "\"n\":1");
    CHECK(stale.args_stale);
    CHECK(stale.error[0] != '\0');
    CHECK(stale.id_stale);
    CHECK(stale.tool_stale);
    CHECK(stale.cancelled_stale);
}

/* A finished call's handle, kept to try on the next call. */
static atomic_uintptr_t old_handle;
static atomic_int hijack_status = -1;

static void remember_handle(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&old_handle, (uintptr_t)call);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "first call", CAPSTAN_NTS);
}

static void try_old_handle(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call *old = (capstan_call *)atomic_load(&old_handle);
    atomic_store(&hijack_status, capstan_call_return(old, CAPSTAN_CONTENT_TEXT, "hijacked", CAPSTAN_NTS));
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "second call", CAPSTAN_NTS);
}

/* Handles are generation-checked: a finished call's handle never names the
 * call that reuses its slot. */
static void stale_handle_never_reaches_a_newer_call(void) {
    char *out = run("{\"id\":\"g1\",\"name\":\"remember\"}");
    CHECK_CONTAINS(out, "\"content\":\"first call\"");
    capstan_string_free(out);
    for (int i = 0; i < 4; i++) {
        out = run("{\"id\":\"g2\",\"name\":\"try_old\"}");
        CHECK_CONTAINS(out, "\"content\":\"second call\"");
        capstan_string_free(out);
        CHECK(atomic_load(&hijack_status) == CAPSTAN_ERR_STALE_HANDLE);
    }
}

static void bad_exec_options_are_invalid_argument(void) {
    char *sentinel = (char *)&sentinel;
    char *out = sentinel;
    int before = atomic_load(&deferred_count);
    capstan_exec_options opts = {.struct_size = 2, .flags = 0, .limit = 0, .timeout_ms = 0};
    CHECK_STATUS(capstan_registry_execute(reg, "{\"name\":\"defer\"}", CAPSTAN_NTS, &opts, &out, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    opts = (capstan_exec_options){.struct_size = sizeof opts, .flags = 1u << 6, .limit = 0, .timeout_ms = 0};
    CHECK_STATUS(capstan_registry_execute(reg, "{\"name\":\"defer\"}", CAPSTAN_NTS, &opts, &out, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(out == sentinel);
    CHECK(atomic_load(&deferred_count) == before);
}

int main(void) {
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    add_tool(reg, make_def("echo", echo_id, NULL));
    add_tool(reg, make_def("measured", measured, &par_gauge));
    capstan_tool_def def = make_def("serial", measured, &serial_gauge);
    def.flags = CAPSTAN_TOOL_SERIAL;
    add_tool(reg, def);
    def = make_def("watcher", watch_cancel, NULL);
    def.timeout_ms = 50;
    add_tool(reg, def);
    def = make_def("patient", hand_off, NULL);
    def.timeout_ms = 60000;
    add_tool(reg, def);
    def = make_def("hasty", slow_answer, NULL);
    def.timeout_ms = 20;
    add_tool(reg, def);
    def = make_def("quick_timeout", hand_off, NULL);
    def.timeout_ms = 30;
    add_tool(reg, def);
    def = make_def("spin", spin_until_cancelled, NULL);
    def.timeout_ms = 2;
    add_tool(reg, def);
    add_tool(reg, make_def("defer", defer, NULL));
    add_tool(reg, make_def("twice", complete_twice, NULL));
    add_tool(reg, make_def("pretty", answer_canned, &pretty_json));
    add_tool(reg, make_def("null_json", answer_canned, &null_json));
    add_tool(reg, make_def("broken_json", answer_canned, &broken_json));
    add_tool(reg, make_def("string_json", answer_canned, &string_json));
    add_tool(reg, make_def("boom", fail_with_message, NULL));
    add_tool(reg, make_def("odd_kind", odd_kind, NULL));
    for (int i = 0; i < 100; i++) memcpy(hundred_e + 2 * i, E, 2);
    def = make_def("long_text", answer_canned, &long_text);
    def.max_output_chars = 10;
    add_tool(reg, def);
    def = make_def("exact_text", answer_canned, &exact_text);
    def.max_output_chars = 10;
    add_tool(reg, def);
    add_tool(reg, make_def("stale", use_after_complete, NULL));
    add_tool(reg, make_def("bad_utf8_content", bad_utf8_content, NULL));
    add_tool(reg, make_def("bad_utf8_message", bad_utf8_message, NULL));
    add_tool(reg, make_def("remember", remember_handle, NULL));
    add_tool(reg, make_def("try_old", try_old_handle, NULL));

    parallel_results_keep_call_order();
    results_have_the_normalized_shape();
    limit_caps_concurrency_exactly();
    sequential_flag_runs_one_at_a_time_in_order();
    serial_tool_never_runs_concurrently_with_itself();
    tool_timeout_reports_timeout_and_cancels_the_call();
    completion_after_seeing_cancellation_is_refused();
    exec_timeout_overrides_the_tools_own();
    late_completion_from_a_thread_after_timeout_is_refused();
    deferred_completion_from_a_thread_is_delivered();
    double_completion_is_rejected();
    json_content_is_compact_and_keeps_non_ascii();
    json_null_renders_as_null();
    invalid_json_content_completes_as_tool_error();
    fail_is_a_tool_error_with_its_message();
    invalid_utf8_content_completes_as_tool_error();
    unknown_content_kind_leaves_the_call_open();
    output_cap_truncates_with_a_marker();
    completion_after_registry_free_is_an_error();
    garbage_handle_is_stale_not_a_crash();
    call_arguments_of_a_completed_call_is_null();
    stale_handle_never_reaches_a_newer_call();
    bad_exec_options_are_invalid_argument();

    capstan_registry_free(reg);
    return check_report("test_exec");
}
