/* Main-thread tools and waiting: a thread that pumped and then waits on a
 * batch runs that batch's main-thread calls itself (capstan_registry_execute,
 * capstan_registry_run_turn, capstan_batch_wait, nested execution), and the batch
 * deadline (capstan_exec_options.deadline_ms) bounds waiting for the pump and
 * for approval. Every test is bounded by a watchdog: a regression fails
 * instead of hanging. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "support.h"

static const char *OBJ = "{\"type\":\"object\"}";
/* Arms the watchdog (support.h) for the next test. */
static void begin(const char *name) { watchdog_begin("test_main_thread", name, 120u); }

static pthread_t main_thread;
static atomic_int off_main; /* main-thread tool calls that ran elsewhere */

/* A main-thread tool: answers "main:<ms>" after sleeping "ms" (from its id). */
static void main_tool(void *user_data, capstan_call *call) {
    (void)user_data;
    if (!pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&off_main, 1);
    size_t n = 0;
    const char *id = capstan_call_id(call, &n);
    if (id != NULL && strncmp(id, "slow", 4) == 0) sleep_ms(40);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "main-ran", CAPSTAN_NTS);
}

static void pool_tool(void *user_data, capstan_call *call) {
    (void)user_data;
    sleep_ms(10);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "pool-ran", CAPSTAN_NTS);
}

static capstan_registry *reg;

static void nested_tool(void *user_data, capstan_call *call);

static void add(const char *name, capstan_tool_fn fn, uint32_t flags, uint32_t timeout_ms) {
    capstan_tool_def d = {.struct_size = sizeof d, .name = name, .parameters = OBJ, .callback = fn,
                          .flags = flags, .timeout_ms = timeout_ms};
    CHECK_STATUS(capstan_registry_add_tool(reg, &d), CAPSTAN_OK);
}

static void setup(void) {
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    add("main_tool", main_tool, CAPSTAN_TOOL_MAIN_THREAD, 0);
    add("main_timed", main_tool, CAPSTAN_TOOL_MAIN_THREAD, 60000);
    add("pool_tool", pool_tool, 0, 0);
    add("nested", nested_tool, CAPSTAN_TOOL_MAIN_THREAD, 0);
    atomic_store(&off_main, 0);
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

static char *execute(const char *calls, const capstan_exec_options *opts) {
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, calls, CAPSTAN_NTS, opts, &out, NULL), CAPSTAN_OK);
    return out;
}

/* ------------------------------------------------------------------------ */

static void test_execute_on_the_pump_thread_runs_main_thread_calls_beside_ordinary_ones(void) {
    begin("execute on the pump thread, mixed batch");
    setup();
    CHECK(capstan_registry_pump(reg, 0) == 0); /* this thread is now a main thread */
    for (int round = 0; round < 5; round++) {
        char *out = execute("[{\"id\":\"m\",\"name\":\"main_tool\"},{\"id\":\"p\",\"name\":\"pool_tool\"},"
                            "{\"id\":\"t\",\"name\":\"main_timed\"},{\"id\":\"q\",\"name\":\"pool_tool\"}]",
                            NULL);
        CHECK(count_of(out, "main-ran") == 2);
        CHECK(count_of(out, "pool-ran") == 2);
        capstan_string_free(out);
    }
    CHECK(atomic_load(&off_main) == 0);
    capstan_registry_free(reg);
}

static void test_execute_on_the_pump_thread_runs_a_batch_of_only_main_thread_calls_one_slow(void) {
    begin("only main-thread calls, one slow");
    setup();
    capstan_registry_pump(reg, 0);
    for (int round = 0; round < 3; round++) {
        char *out = execute("[{\"id\":\"slow\",\"name\":\"main_tool\"},{\"id\":\"a\",\"name\":\"main_tool\"},"
                            "{\"id\":\"b\",\"name\":\"main_tool\"},{\"id\":\"slow2\",\"name\":\"main_timed\"}]",
                            NULL);
        CHECK(count_of(out, "main-ran") == 4);
        capstan_string_free(out);
    }
    CHECK(atomic_load(&off_main) == 0);
    capstan_registry_free(reg);
}

/* A main-thread tool that runs a nested batch of a main-thread and an
 * ordinary call on the same registry, from inside its callback. */
static void nested_tool(void *user_data, capstan_call *call) {
    (void)user_data;
    if (!pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&off_main, 1);
    char *out = NULL;
    capstan_status st = capstan_registry_execute(
        reg, "[{\"id\":\"slow\",\"name\":\"main_tool\"},{\"id\":\"p\",\"name\":\"pool_tool\"},{\"id\":\"i\",\"name\":\"main_tool\"}]",
        CAPSTAN_NTS, NULL, &out, NULL);
    int ok = st == CAPSTAN_OK && count_of(out, "main-ran") == 2 && count_of(out, "pool-ran") == 1;
    capstan_string_free(out);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, ok ? "nested-ok" : "nested-bad", CAPSTAN_NTS);
}

static void test_nested_execute_inside_a_main_thread_tool_runs_its_main_thread_calls(void) {
    begin("nested execute inside a main-thread tool");
    setup();
    capstan_registry_pump(reg, 0);
    char *out = execute("[{\"id\":\"n1\",\"name\":\"nested\"},{\"id\":\"p\",\"name\":\"pool_tool\"},"
                        "{\"id\":\"n2\",\"name\":\"nested\"}]",
                        NULL);
    CHECK(count_of(out, "nested-ok") == 2);
    CHECK(count_of(out, "pool-ran") == 1);
    capstan_string_free(out);
    CHECK(atomic_load(&off_main) == 0);
    capstan_registry_free(reg);
}

static void test_run_turn_on_the_pump_thread_runs_main_thread_calls(void) {
    begin("run_turn on the pump thread");
    setup();
    capstan_registry_pump(reg, 0);
    const char *response =
        "{\"choices\":[{\"index\":0,\"finish_reason\":\"tool_calls\",\"message\":{\"role\":\"assistant\","
        "\"content\":null,\"tool_calls\":["
        "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"main_tool\",\"arguments\":\"{}\"}},"
        "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"pool_tool\",\"arguments\":\"{}\"}},"
        "{\"id\":\"slow3\",\"type\":\"function\",\"function\":{\"name\":\"main_tool\",\"arguments\":\"{}\"}}]}}]}";
    char *out = NULL;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_OPENAI_CHAT, response, CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    CHECK(count_of(out, "main-ran") == 2);
    CHECK(count_of(out, "pool-ran") == 1);
    capstan_string_free(out);
    CHECK(atomic_load(&off_main) == 0);
    capstan_registry_free(reg);
}

static void test_batch_wait_on_the_pump_thread_runs_the_batchs_main_thread_calls(void) {
    begin("batch_wait on the pump thread");
    setup();
    capstan_registry_pump(reg, 0);
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, "[{\"id\":\"a\",\"name\":\"main_tool\"},{\"id\":\"p\",\"name\":\"pool_tool\"}]",
                                CAPSTAN_NTS, NULL, NULL, NULL, &b),
                 CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(b, UINT32_MAX), CAPSTAN_OK);
    capstan_batch_free(b);
    CHECK(atomic_load(&off_main) == 0);
    capstan_registry_free(reg);
}

static void *pump_once(void *arg) {
    capstan_registry_pump((capstan_registry *)arg, 0);
    return NULL;
}

static void test_every_thread_that_ever_pumped_counts_as_a_main_thread(void) {
    begin("every thread that pumped is a main thread");
    setup();
    capstan_registry_pump(reg, 0);
    pthread_t other; /* pumps after this thread did */
    pthread_create(&other, NULL, pump_once, reg);
    pthread_join(other, NULL);
    char *out = execute("[{\"id\":\"a\",\"name\":\"main_tool\"},{\"id\":\"p\",\"name\":\"pool_tool\"}]", NULL);
    CHECK(count_of(out, "main-ran") == 1);
    capstan_string_free(out);
    CHECK(atomic_load(&off_main) == 0);
    capstan_registry_free(reg);
}

/* ------------------------------------------------------------------------ */
/* Deadlines and timeouts                                                     */

static void *execute_off_main(void *arg) {
    capstan_exec_options *opts = arg;
    char *out = NULL;
    capstan_registry_execute(reg, "{\"id\":\"a\",\"name\":\"main_tool\"}", CAPSTAN_NTS, opts, &out, NULL);
    return out;
}

static void test_deadline_ends_a_call_waiting_for_the_pump_as_timeout_saying_so(void) {
    begin("deadline while waiting for the pump");
    setup();
    /* Executed from a thread that never pumps; nobody pumps. */
    capstan_exec_options opts = {.struct_size = sizeof opts, .deadline_ms = 50};
    pthread_t t;
    pthread_create(&t, NULL, execute_off_main, &opts);
    void *out = NULL;
    pthread_join(t, &out);
    CHECK(out != NULL);
    CHECK_CONTAINS(out, "\"outcome\":\"timeout\"");
    CHECK_CONTAINS(out, "capstan_registry_pump");
    capstan_string_free(out);
    CHECK(capstan_registry_pump(reg, 0) == 0); /* nothing left queued */
    capstan_registry_free(reg);
}

static capstan_approval *held_approval;
static void holding_approver(void *user_data, capstan_approval *a) {
    (void)user_data;
    held_approval = a; /* decided only after the deadline */
}

static void test_deadline_ends_a_call_waiting_for_approval_as_timeout_saying_so(void) {
    begin("deadline while waiting for approval");
    setup();
    add("guarded", pool_tool, CAPSTAN_TOOL_REQUIRES_APPROVAL, 0);
    CHECK_STATUS(capstan_registry_set_approver(reg, holding_approver, NULL, NULL), CAPSTAN_OK);
    capstan_exec_options opts = {.struct_size = sizeof opts, .deadline_ms = 50};
    char *out = execute("{\"id\":\"g\",\"name\":\"guarded\"}", &opts);
    CHECK_CONTAINS(out, "\"outcome\":\"timeout\"");
    CHECK_CONTAINS(out, "approval");
    capstan_string_free(out);
    capstan_status st = capstan_approval_decide(held_approval, true, NULL, 0);
    CHECK(st == CAPSTAN_ERR_STALE_HANDLE || st == CAPSTAN_ERR_ALREADY_COMPLETED);
    capstan_registry_free(reg);
}

static void slow_tool(void *user_data, capstan_call *call) {
    (void)user_data;
    while (!capstan_call_cancelled(call)) sleep_ms(1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "late", CAPSTAN_NTS);
}

static void test_deadline_cancels_a_running_call_as_timeout(void) {
    begin("deadline while running");
    setup();
    add("slow", slow_tool, 0, 0);
    capstan_exec_options opts = {.struct_size = sizeof opts, .deadline_ms = 30};
    char *out = execute("[{\"id\":\"s\",\"name\":\"slow\"},{\"id\":\"p\",\"name\":\"pool_tool\"}]", &opts);
    CHECK_CONTAINS(out, "\"outcome\":\"timeout\"");
    CHECK_CONTAINS(out, "deadline of 30 ms");
    capstan_string_free(out);
    capstan_registry_free(reg);
}

static void test_deadline_ends_a_call_waiting_for_a_free_worker_as_timeout_saying_so(void) {
    begin("deadline while waiting for a worker");
    setup();
    add("slow", slow_tool, 0, 0);
    capstan_exec_options opts = {.struct_size = sizeof opts, .limit = 1, .deadline_ms = 30};
    char *out = execute("[{\"id\":\"s\",\"name\":\"slow\"},{\"id\":\"w\",\"name\":\"slow\"}]", &opts);
    CHECK(count_of(out, "\"outcome\":\"timeout\"") == 2);
    CHECK_CONTAINS(out, "waited to start");
    capstan_string_free(out);
    capstan_registry_free(reg);
}

static atomic_int last_outcome = -1;
static void record_outcome(void *user_data, const capstan_result *r) {
    (void)user_data;
    if (r != NULL) atomic_store(&last_outcome, (int)r->outcome);
}

static void test_a_tools_timeout_runs_from_its_start_not_while_it_waits_for_the_pump(void) {
    begin("timeout runs from start");
    setup();
    add("main_short", main_tool, CAPSTAN_TOOL_MAIN_THREAD, 500);
    capstan_batch *b = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, "{\"id\":\"x\",\"name\":\"main_short\"}", CAPSTAN_NTS, NULL,
                                record_outcome, NULL, &b),
                 CAPSTAN_OK);
    sleep_ms(1000); /* waits for the pump twice its timeout */
    CHECK(capstan_registry_pump(reg, 0) == 1);
    CHECK_STATUS(capstan_batch_wait(b, UINT32_MAX), CAPSTAN_OK);
    CHECK(atomic_load(&last_outcome) == (int)CAPSTAN_OUTCOME_OK);
    capstan_batch_free(b);
    capstan_registry_free(reg);
}

/* Runs the tests whose name contains argv[1] (all without an argument). */
#define RUN(test)                                                          \
    do {                                                                   \
        if (argc < 2 || strstr(#test, argv[1]) != NULL) test();            \
    } while (0)

int main(int argc, char **argv) {
    main_thread = pthread_self();
    RUN(test_execute_on_the_pump_thread_runs_main_thread_calls_beside_ordinary_ones);
    RUN(test_execute_on_the_pump_thread_runs_a_batch_of_only_main_thread_calls_one_slow);
    RUN(test_nested_execute_inside_a_main_thread_tool_runs_its_main_thread_calls);
    RUN(test_run_turn_on_the_pump_thread_runs_main_thread_calls);
    RUN(test_batch_wait_on_the_pump_thread_runs_the_batchs_main_thread_calls);
    RUN(test_every_thread_that_ever_pumped_counts_as_a_main_thread);
    RUN(test_deadline_ends_a_call_waiting_for_the_pump_as_timeout_saying_so);
    RUN(test_deadline_ends_a_call_waiting_for_approval_as_timeout_saying_so);
    RUN(test_deadline_cancels_a_running_call_as_timeout);
    RUN(test_deadline_ends_a_call_waiting_for_a_free_worker_as_timeout_saying_so);
    RUN(test_a_tools_timeout_runs_from_its_start_not_while_it_waits_for_the_pump);
    alarm(0);
    return check_report("test_main_thread");
}
