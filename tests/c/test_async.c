/* Host integration through the C ABI: async submit, polling, main-thread pump,
 * wake-ups, approval, events, stats and shutdown. */
#define _POSIX_C_SOURCE 200809L
#ifdef _WIN32
#include <windows.h>
#else
#include <poll.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "support.h"

static const char *OBJ = "{\"type\":\"object\"}";

static void echo(void *user_data, capstan_call *call) {
    (void)user_data;
    size_t len;
    const char *id = capstan_call_id(call, &len);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, id, len);
}

static atomic_int started;
static void wait_cancel(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_fetch_add(&started, 1);
    while (!capstan_call_cancelled(call)) sleep_ms(1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "stopped", CAPSTAN_NTS);
}

static atomic_int destroyed;

static capstan_registry *registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def e = {.struct_size = sizeof e, .name = "echo", .parameters = OBJ, .callback = echo,
                          .user_data = &destroyed, .destroy = count_destroy};
    CHECK_STATUS(capstan_registry_add_tool(reg, &e), CAPSTAN_OK);
    capstan_tool_def w = {.struct_size = sizeof w, .name = "wait_cancel", .parameters = OBJ,
                          .callback = wait_cancel, .user_data = &destroyed, .destroy = count_destroy};
    CHECK_STATUS(capstan_registry_add_tool(reg, &w), CAPSTAN_OK);
    return reg;
}

static char *calls_json(const char *tool, int n) {
    size_t cap = 64 + (size_t)n * 64;
    char *s = malloc(cap);
    size_t pos = (size_t)snprintf(s, cap, "[");
    for (int i = 0; i < n; i++)
        pos += (size_t)snprintf(s + pos, cap - pos, "%s{\"id\":\"c%d\",\"name\":\"%s\"}", i ? "," : "", i, tool);
    snprintf(s + pos, cap - pos, "]");
    return s;
}

struct tally {
    pthread_mutex_t lock;
    int seen[256];
    int results;
    int ends;
    int bad_order; /* a result after the end */
    int outcomes[8];
};

static void tally_init(struct tally *t) {
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
}

static void on_result(void *user_data, const capstan_result *r) {
    struct tally *t = user_data;
    pthread_mutex_lock(&t->lock);
    if (r == NULL) {
        t->ends++;
    } else {
        if (t->ends) t->bad_order++;
        if (r->index < 256) t->seen[r->index]++;
        if (r->outcome < 8) t->outcomes[r->outcome]++;
        t->results++;
    }
    pthread_mutex_unlock(&t->lock);
}

static void test_submit_delivers_each_result_once_with_its_index_then_null_once(void) {
    capstan_registry *reg = registry();
    char *calls = calls_json("echo", 100);
    struct tally t;
    tally_init(&t);
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, NULL, on_result, &t, &b), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, 10000), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, 0), CAPSTAN_OK);
    CHECK(t.results == 100);
    CHECK(t.ends == 1);
    CHECK(t.bad_order == 0);
    int once = 1;
    for (int i = 0; i < 100; i++) once &= t.seen[i] == 1;
    CHECK(once);
    capstan_batch_free(b);
    free(calls);

    /* an empty batch is done at once, and says so */
    tally_init(&t);
    CHECK_STATUS(capstan_batch_submit(reg, "[]", CAPSTAN_NTS, NULL, on_result, &t, &b), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, 0), CAPSTAN_OK);
    CHECK(t.ends == 1 && t.results == 0);
    capstan_batch_free(b);
    /* bad input writes nothing */
    capstan_batch *sentinel = (capstan_batch *)&t;
    b = sentinel;
    CHECK_STATUS(capstan_batch_submit(reg, "{", CAPSTAN_NTS, NULL, on_result, &t, &b), CAPSTAN_ERR_INVALID_CALLS);
    CHECK(b == sentinel);
    CHECK_STATUS(capstan_batch_wait(NULL, 0), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_batch_free(NULL);
    capstan_batch_cancel(NULL);
    capstan_registry_free(reg);
}

/* The end callback (result == NULL) is part of the batch: wait returns and
 * done turns true only after it has returned, so the host may free what the
 * callback uses right after the wait, and a free after the wait loses no end. */
struct slow_end {
    atomic_int results;
    atomic_int end_entered;
    atomic_int end_returned;
};

static void on_result_slow_end(void *user_data, const capstan_result *r) {
    struct slow_end *e = user_data;
    if (r != NULL) {
        atomic_fetch_add(&e->results, 1);
        return;
    }
    atomic_store(&e->end_entered, 1);
    sleep_ms(100);
    atomic_store(&e->end_returned, 1);
}

static void test_wait_returns_only_after_the_end_callback_returned(void) {
    capstan_registry *reg = registry();
    for (int round = 0; round < 5; round++) {
        struct slow_end e;
        atomic_init(&e.results, 0);
        atomic_init(&e.end_entered, 0);
        atomic_init(&e.end_returned, 0);
        char *calls = calls_json("echo", 8);
        capstan_batch *b = NULL;
        CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, NULL, on_result_slow_end, &e, &b), CAPSTAN_OK);
        CHECK_STATUS(capstan_batch_wait(b, 60000), CAPSTAN_OK);
        CHECK(atomic_load(&e.end_returned) == 1);
        CHECK_STATUS(capstan_batch_wait(b, 0), CAPSTAN_OK);
        capstan_batch_free(b);
        CHECK(atomic_load(&e.results) == 8);
        CHECK(atomic_load(&e.end_entered) == 1);
        free(calls);
    }
    capstan_registry_free(reg);
}

static void test_poll_delivery_hands_results_over_on_the_polling_thread(void) {
    capstan_registry *reg = registry();
    char *calls = calls_json("echo", 10);
    capstan_exec_options o = {.struct_size = sizeof o, .flags = CAPSTAN_EXEC_DELIVER_POLL};
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &o, NULL, NULL, &b), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, 10000), CAPSTAN_OK);
    struct tally t;
    tally_init(&t);
    CHECK(capstan_batch_poll(b, on_result, &t, 3) == 3);
    CHECK(t.ends == 0);
    CHECK(capstan_batch_poll(b, on_result, &t, 100) == 7);
    CHECK(t.ends == 1);
    CHECK(capstan_batch_poll(b, on_result, &t, 100) == 0);
    CHECK(t.ends == 1 && t.results == 10);
    capstan_batch_free(b);
    free(calls);
    capstan_registry_free(reg);
}

static void test_wait_times_out_and_cancel_stops_pending_calls(void) {
    capstan_registry *reg = registry();
    atomic_store(&started, 0);
    char *calls = calls_json("wait_cancel", 12);
    capstan_exec_options o = {.struct_size = sizeof o, .limit = 2};
    struct tally t;
    tally_init(&t);
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &o, on_result, &t, &b), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, 20), CAPSTAN_ERR_TIMEOUT);
    while (atomic_load(&started) < 2) sleep_ms(1);
    capstan_batch_cancel(b);
    CHECK_STATUS(capstan_batch_wait(b, 10000), CAPSTAN_OK);
    CHECK(t.results == 12 && t.ends == 1);
    CHECK(t.outcomes[CAPSTAN_OUTCOME_OK] == atomic_load(&started));
    CHECK(t.outcomes[CAPSTAN_OUTCOME_CANCELLED] == 12 - atomic_load(&started));
    CHECK(atomic_load(&started) <= 4);
    capstan_batch_free(b);
    free(calls);
    capstan_registry_free(reg);
}

static atomic_int late_callbacks;
static atomic_int freed_flag;
static void count_after_free(void *user_data, const capstan_result *r) {
    (void)user_data;
    (void)r;
    if (atomic_load(&freed_flag)) atomic_fetch_add(&late_callbacks, 1);
    sleep_ms(2);
}

static void test_batch_free_while_running_stops_its_callbacks(void) {
    capstan_registry *reg = registry();
    atomic_store(&late_callbacks, 0);
    atomic_store(&freed_flag, 0);
    char *calls = calls_json("echo", 50);
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, NULL, count_after_free, NULL, &b), CAPSTAN_OK);
    capstan_batch_free(b);
    atomic_store(&freed_flag, 1);
    sleep_ms(50);
    CHECK(atomic_load(&late_callbacks) == 0);
    free(calls);
    capstan_registry_free(reg);
}

static pthread_t main_thread;
static atomic_int off_main;
static void on_main(void *user_data, capstan_call *call) {
    (void)user_data;
    if (!pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&off_main, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}
static atomic_int notified;
static void notify(void *user_data) {
    (void)user_data;
    atomic_fetch_add(&notified, 1);
}

static void test_main_thread_tools_run_only_in_pump_and_wake_the_host(void) {
    capstan_registry *reg = registry();
    main_thread = pthread_self();
    capstan_tool_def m = {.struct_size = sizeof m, .name = "ui", .parameters = OBJ, .callback = on_main,
                          .flags = CAPSTAN_TOOL_MAIN_THREAD};
    CHECK_STATUS(capstan_registry_add_tool(reg, &m), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_notify(reg, notify, NULL, NULL), CAPSTAN_OK);
    /* Unix gets a file descriptor, Windows an event HANDLE; each asks for
     * the other's in vain. */
    int fd = -1;
    void *event = NULL;
#ifdef _WIN32
    CHECK_STATUS(capstan_registry_wake_handle(reg, &event), CAPSTAN_OK);
    CHECK(event != NULL);
    void *again = NULL;
    CHECK_STATUS(capstan_registry_wake_handle(reg, &again), CAPSTAN_OK);
    CHECK(again == event);
    CHECK_STATUS(capstan_registry_wake_fd(reg, &fd), CAPSTAN_ERR_UNSUPPORTED);
    CHECK(fd == -1);
    CHECK(WaitForSingleObject(event, 0) == WAIT_TIMEOUT); /* nothing queued yet */
#else
    CHECK_STATUS(capstan_registry_wake_fd(reg, &fd), CAPSTAN_OK);
    CHECK(fd >= 0);
    CHECK_STATUS(capstan_registry_wake_handle(reg, &event), CAPSTAN_ERR_UNSUPPORTED);
    CHECK(event == NULL);
#endif
    char *calls = calls_json("ui", 3);
    capstan_exec_options o = {.struct_size = sizeof o, .flags = CAPSTAN_EXEC_DELIVER_POLL};
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &o, NULL, NULL, &b), CAPSTAN_OK);
#ifdef _WIN32
    CHECK(WaitForSingleObject(event, 5000) == WAIT_OBJECT_0);
#else
    struct pollfd p = {.fd = fd, .events = POLLIN};
    CHECK(poll(&p, 1, 5000) == 1);
    uint64_t v = 0;
    CHECK(read(fd, &v, 8) == 8 && v >= 1);
#endif
    CHECK(atomic_load(&notified) >= 1);
    CHECK_STATUS(capstan_batch_wait(b, 30), CAPSTAN_ERR_TIMEOUT); /* nothing runs without pump */
    size_t ran = 0;
    for (int i = 0; i < 30000 && ran < 3; i++) { /* bound hit only on failure */
        ran += capstan_registry_pump(reg, 5);
        sleep_ms(1);
    }
    CHECK(ran == 3);
    CHECK(atomic_load(&off_main) == 0);
    CHECK_STATUS(capstan_batch_wait(b, 5000), CAPSTAN_OK);
    struct tally t;
    tally_init(&t);
    CHECK(capstan_batch_poll(b, on_result, &t, 10) == 3);
    CHECK(t.outcomes[CAPSTAN_OUTCOME_OK] == 3);
    CHECK(capstan_registry_pump(NULL, 1) == 0);
    capstan_batch_free(b);
    free(calls);
    capstan_registry_free(reg);
}

/* ---- approval ---- */
static atomic_int guarded_ran;
static void guarded(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_fetch_add(&guarded_ran, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "deleted", CAPSTAN_NTS);
}

static void *deny_later(void *arg) {
    capstan_approval *a = arg;
    sleep_ms(5);
    CHECK_STATUS(capstan_approval_decide(a, false, "outside the sandbox", CAPSTAN_NTS), CAPSTAN_OK);
    CHECK_STATUS(capstan_approval_decide(a, true, NULL, 0), CAPSTAN_ERR_STALE_HANDLE);
    CHECK(capstan_approval_tool(a, NULL) == NULL);
    return NULL;
}

static pthread_t deciders[8];
static atomic_int n_deciders;
static void approver(void *user_data, capstan_approval *a) {
    (void)user_data;
    size_t len;
    const char *id = capstan_approval_id(a, &len);
    CHECK_CONTAINS(capstan_approval_tool(a, NULL), "delete_file");
    CHECK_CONTAINS(capstan_approval_arguments(a, NULL), "\"path\":\"/tmp\"");
    if (id && strncmp(id, "yes", 3) == 0) {
        CHECK_STATUS(capstan_approval_decide(a, true, NULL, 0), CAPSTAN_OK);
    } else {
        int i = atomic_fetch_add(&n_deciders, 1);
        pthread_create(&deciders[i], NULL, deny_later, a);
    }
}

static void test_approval_gates_guarded_tools(void) {
    capstan_registry *reg = registry();
    atomic_store(&guarded_ran, 0);
    atomic_store(&n_deciders, 0);
    capstan_tool_def g = {.struct_size = sizeof g, .name = "delete_file",
                          .parameters = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\","
                                        "\"default\":\"/tmp\"}}}",
                          .callback = guarded, .flags = CAPSTAN_TOOL_REQUIRES_APPROVAL};
    CHECK_STATUS(capstan_registry_add_tool(reg, &g), CAPSTAN_OK);
    const char *one = "{\"id\":\"no1\",\"name\":\"delete_file\"}";
    char *out = NULL;
    /* no approver: denied, never run */
    CHECK_STATUS(capstan_registry_execute(reg, one, CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"outcome\":\"denied\"");
    CHECK_CONTAINS(out, "requires approval");
    capstan_string_free(out);
    CHECK(atomic_load(&guarded_ran) == 0);

    CHECK_STATUS(capstan_registry_set_approver(reg, approver, NULL, NULL), CAPSTAN_OK);
    const char *three = "[{\"id\":\"yes1\",\"name\":\"delete_file\"},{\"id\":\"no2\",\"name\":\"delete_file\"},"
                        "{\"id\":\"pre\",\"name\":\"delete_file\"},{\"id\":\"e\",\"name\":\"echo\"}]";
    const char *ids[] = {"pre"};
    capstan_exec_options o = {.struct_size = sizeof o, .approved_ids = ids, .approved_count = 1};
    CHECK_STATUS(capstan_registry_needs_approval(reg, three, CAPSTAN_NTS, &o, &out, NULL), CAPSTAN_OK);
    CHECK(out && strcmp(out, "[{\"index\":0,\"id\":\"yes1\",\"name\":\"delete_file\"},"
                             "{\"index\":1,\"id\":\"no2\",\"name\":\"delete_file\"}]") == 0);
    capstan_string_free(out);
    CHECK_STATUS(capstan_registry_execute(reg, three, CAPSTAN_NTS, &o, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "{\"id\":\"yes1\",\"name\":\"delete_file\",\"content\":\"deleted\"");
    CHECK_CONTAINS(out, "outside the sandbox");
    CHECK_CONTAINS(out, "{\"id\":\"pre\",\"name\":\"delete_file\",\"content\":\"deleted\"");
    capstan_string_free(out);
    CHECK(atomic_load(&guarded_ran) == 2);
    for (int i = 0; i < atomic_load(&n_deciders); i++) pthread_join(deciders[i], NULL);
    CHECK_STATUS(capstan_approval_decide((capstan_approval *)0x4321, true, NULL, 0), CAPSTAN_ERR_STALE_HANDLE);
    capstan_exec_options bad = {.struct_size = sizeof bad, .approved_count = 2};
    CHECK_STATUS(capstan_registry_execute(reg, one, CAPSTAN_NTS, &bad, &out, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

/* ---- events and stats ---- */
static atomic_int ev_counts[4];
static void on_event(void *user_data, const capstan_event *e) {
    (void)user_data;
    if (e->kind < 4) atomic_fetch_add(&ev_counts[e->kind], 1);
}
static void slow(void *user_data, capstan_call *call) {
    (void)user_data;
    (void)call; /* never completes: times out */
}

static void test_events_and_stats_observe_every_call(void) {
    capstan_registry *reg = registry();
    for (int i = 0; i < 4; i++) atomic_store(&ev_counts[i], 0);
    capstan_tool_def s = {.struct_size = sizeof s, .name = "slow", .parameters = OBJ, .callback = slow,
                          .timeout_ms = 20};
    CHECK_STATUS(capstan_registry_add_tool(reg, &s), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_event_hook(reg, on_event, NULL, NULL), CAPSTAN_OK);
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "[{\"id\":\"1\",\"name\":\"echo\"},{\"id\":\"2\",\"name\":\"slow\"},"
                                      "{\"id\":\"3\",\"name\":\"echo\",\"arguments\":7}]",
                                 CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    capstan_string_free(out);
    CHECK(atomic_load(&ev_counts[CAPSTAN_EVENT_STARTED]) == 2);
    CHECK(atomic_load(&ev_counts[CAPSTAN_EVENT_FINISHED]) == 3);
    CHECK(atomic_load(&ev_counts[CAPSTAN_EVENT_TIMED_OUT]) == 1);
    CHECK_STATUS(capstan_registry_stats_json(reg, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"echo\":{\"calls\":2,\"outcomes\":{\"ok\":1,\"tool_error\":0,\"invalid_arguments\":1");
    CHECK_CONTAINS(out, "\"slow\":{\"calls\":1,\"outcomes\":{\"ok\":0,\"tool_error\":0,\"invalid_arguments\":0,"
                        "\"unknown_tool\":0,\"timeout\":1");
    capstan_string_free(out);
    CHECK_STATUS(capstan_registry_set_event_hook(reg, NULL, NULL, NULL), CAPSTAN_OK);
    capstan_registry_free(reg);
}

/* ---- shutdown ---- */
static atomic_int after_free;
static atomic_int registry_freed;
static void shutdown_result(void *user_data, const capstan_result *r) {
    struct tally *t = user_data;
    if (atomic_load(&registry_freed)) atomic_fetch_add(&after_free, 1);
    on_result(t, r);
}

static void test_registry_free_with_batches_in_flight(void) {
    atomic_store(&destroyed, 0);
    atomic_store(&started, 0);
    atomic_store(&after_free, 0);
    atomic_store(&registry_freed, 0);
    capstan_registry *reg = registry();
    char *calls = calls_json("wait_cancel", 30);
    capstan_exec_options o = {.struct_size = sizeof o, .limit = 3};
    struct tally t1, t2;
    tally_init(&t1);
    tally_init(&t2);
    capstan_batch *b1 = NULL, *b2 = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &o, shutdown_result, &t1, &b1), CAPSTAN_OK);
    capstan_exec_options po = {.struct_size = sizeof po, .flags = CAPSTAN_EXEC_DELIVER_POLL, .limit = 3};
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &po, NULL, NULL, &b2), CAPSTAN_OK);
    while (atomic_load(&started) < 6) sleep_ms(1);
    capstan_registry_free(reg);
    atomic_store(&registry_freed, 1);
    CHECK(atomic_load(&destroyed) == 2); /* both tools, exactly once, before free returned */
    CHECK_STATUS(capstan_batch_wait(b1, 0), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b2, 0), CAPSTAN_OK);
    CHECK(t1.results == 30 && t1.ends == 1);
    while (capstan_batch_poll(b2, on_result, &t2, 100) > 0) {}
    CHECK(t2.results == 30 && t2.ends == 1);
    CHECK(t1.outcomes[CAPSTAN_OUTCOME_CANCELLED] + t1.outcomes[CAPSTAN_OUTCOME_OK] == 30);
    sleep_ms(20);
    CHECK(atomic_load(&after_free) == 0);
    capstan_batch_free(b1);
    capstan_batch_free(b2);
    free(calls);
}

static capstan_registry *self_reg;
static void frees_its_registry(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_registry_free(self_reg); /* deferred: must not deadlock */
    CHECK_STATUS(capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "after free", CAPSTAN_NTS),
                 CAPSTAN_ERR_STALE_HANDLE);
}

static void test_free_from_inside_a_callback_does_not_deadlock(void) {
    atomic_store(&destroyed, 0);
    CHECK_STATUS(capstan_registry_new(NULL, &self_reg), CAPSTAN_OK);
    capstan_tool_def d = {.struct_size = sizeof d, .name = "self_free", .parameters = OBJ,
                          .callback = frees_its_registry, .user_data = &destroyed,
                          .destroy = count_destroy};
    CHECK_STATUS(capstan_registry_add_tool(self_reg, &d), CAPSTAN_OK);
    struct tally t;
    tally_init(&t);
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(self_reg, "{\"id\":\"1\",\"name\":\"self_free\"}", CAPSTAN_NTS, NULL, on_result,
                                &t, &b),
                 CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, 10000), CAPSTAN_OK);
    CHECK(t.results == 1 && t.outcomes[CAPSTAN_OUTCOME_CANCELLED] == 1);
    for (int i = 0; i < 30000 && atomic_load(&destroyed) == 0; i++) sleep_ms(1); /* bound hit only on failure */
    CHECK(atomic_load(&destroyed) == 1);
    capstan_batch_free(b);
}

static capstan_call *held_calls[8];
static atomic_int n_held;
static void hold(void *user_data, capstan_call *call) {
    (void)user_data;
    held_calls[atomic_fetch_add(&n_held, 1) % 8] = call;
}

static void test_start_inline_and_v1_options(void) {
    capstan_registry *reg = registry();
    capstan_tool_def h = {.struct_size = sizeof h, .name = "hold", .parameters = OBJ, .callback = hold};
    CHECK_STATUS(capstan_registry_add_tool(reg, &h), CAPSTAN_OK);
    atomic_store(&n_held, 0);
    capstan_exec_options o = {.struct_size = sizeof o, .flags = CAPSTAN_EXEC_START_INLINE | CAPSTAN_EXEC_DELIVER_POLL,
                              .limit = 1};
    capstan_batch *b = NULL;
    char *calls = calls_json("hold", 3);
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &o, NULL, NULL, &b), CAPSTAN_OK);
    CHECK(atomic_load(&n_held) == 3); /* every call started before submit returned */
    CHECK_STATUS(capstan_batch_wait(b, 0), CAPSTAN_ERR_TIMEOUT);
    for (int i = 0; i < 3; i++)
        CHECK_STATUS(capstan_call_return(held_calls[i], CAPSTAN_CONTENT_TEXT, "x", 1), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, 5000), CAPSTAN_OK);
    capstan_batch_free(b);
    free(calls);

    /* START_ON_WAIT: the calls run when the host waits (or on the pool 50 us
     * after the submit); every result arrives either way. */
    struct tally t;
    tally_init(&t);
    capstan_exec_options ow = {.struct_size = sizeof ow, .flags = CAPSTAN_EXEC_START_ON_WAIT};
    char *echoes = calls_json("echo", 4);
    CHECK_STATUS(capstan_batch_submit(reg, echoes, CAPSTAN_NTS, &ow, on_result, &t, &b), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, UINT32_MAX), CAPSTAN_OK);
    CHECK(t.results == 4 && t.ends == 1 && t.outcomes[CAPSTAN_OUTCOME_OK] == 4);
    capstan_batch_free(b);
    tally_init(&t);
    CHECK_STATUS(capstan_batch_submit(reg, echoes, CAPSTAN_NTS, &ow, on_result, &t, &b), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, 10000), CAPSTAN_OK); /* a timed wait runs nothing: the pool does */
    CHECK(t.results == 4 && t.ends == 1);
    capstan_batch_free(b);
    /* ... not with START_INLINE, and only for capstan_batch_submit */
    ow.flags = CAPSTAN_EXEC_START_ON_WAIT | CAPSTAN_EXEC_START_INLINE;
    b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, echoes, CAPSTAN_NTS, &ow, on_result, &t, &b),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(b == NULL);
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "CAPSTAN_EXEC_START_ON_WAIT");
    ow.flags = CAPSTAN_EXEC_START_ON_WAIT;
    char *res = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, echoes, CAPSTAN_NTS, &ow, &res, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "CAPSTAN_EXEC_START_ON_WAIT does not apply to capstan_registry_execute");
    free(echoes);

    /* A host built against the first, 16-byte capstan_exec_options still works. */
    struct {
        uint32_t struct_size, flags, limit, timeout_ms;
    } v1 = {16, CAPSTAN_EXEC_SEQUENTIAL, 0, 0};
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"1\",\"name\":\"echo\"}", CAPSTAN_NTS,
                                 (const capstan_exec_options *)(const void *)&v1, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"outcome\":\"ok\"");
    capstan_string_free(out);
    v1.struct_size = 12;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"1\",\"name\":\"echo\"}", CAPSTAN_NTS,
                                 (const capstan_exec_options *)(const void *)&v1, &out, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_registry_free(reg);
}

static atomic_int stuck_release;
static void stuck(void *user_data, capstan_call *call) {
    (void)user_data;
    while (!atomic_load(&stuck_release)) sleep_ms(1); /* ignores cancellation */
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "late", CAPSTAN_NTS);
}

static void test_close_with_a_timeout_does_not_hang_on_a_stuck_tool(void) {
    capstan_registry *reg = registry();
    capstan_tool_def s = {.struct_size = sizeof s, .name = "stuck", .parameters = OBJ, .callback = stuck};
    CHECK_STATUS(capstan_registry_add_tool(reg, &s), CAPSTAN_OK);
    atomic_store(&stuck_release, 0);
    struct tally t;
    tally_init(&t);
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, "{\"id\":\"1\",\"name\":\"stuck\"}", CAPSTAN_NTS, NULL, on_result, &t, &b),
                 CAPSTAN_OK);
    sleep_ms(20);
    CHECK_STATUS(capstan_registry_close(reg, 50), CAPSTAN_ERR_TIMEOUT);
    CHECK(t.results == 1 && t.outcomes[CAPSTAN_OUTCOME_CANCELLED] == 1); /* reported at close */
    capstan_tool_def again = {.struct_size = sizeof again, .name = "again", .parameters = OBJ, .callback = echo};
    CHECK_STATUS(capstan_registry_add_tool(reg, &again), CAPSTAN_ERR_SHUTTING_DOWN);
    capstan_registry_free(reg); /* does not wait again */
    atomic_store(&stuck_release, 1);
    CHECK_STATUS(capstan_batch_wait(b, 5000), CAPSTAN_OK);
    capstan_batch_free(b);
    sleep_ms(20); /* let the stuck callback return before the process checks for leaks */

    CHECK_STATUS(capstan_name_check("get_weather", CAPSTAN_NTS), CAPSTAN_OK);
    CHECK_STATUS(capstan_name_check("get.weather", CAPSTAN_NTS), CAPSTAN_ERR_INVALID_NAME);
    CHECK_STATUS(capstan_name_check("", 0), CAPSTAN_ERR_INVALID_NAME);
    CHECK_STATUS(capstan_name_check(NULL, 3), CAPSTAN_ERR_NULL_PARAMETER);
}

int main(void) {
    test_submit_delivers_each_result_once_with_its_index_then_null_once();
    test_wait_returns_only_after_the_end_callback_returned();
    test_poll_delivery_hands_results_over_on_the_polling_thread();
    test_wait_times_out_and_cancel_stops_pending_calls();
    test_batch_free_while_running_stops_its_callbacks();
    test_main_thread_tools_run_only_in_pump_and_wake_the_host();
    test_approval_gates_guarded_tools();
    test_events_and_stats_observe_every_call();
    test_registry_free_with_batches_in_flight();
    test_free_from_inside_a_callback_does_not_deadlock();
    test_start_inline_and_v1_options();
    test_close_with_a_timeout_does_not_hang_on_a_stuck_tool();
    return check_report("test_async");
}
