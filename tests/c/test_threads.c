/* Pool thread hooks (capstan_runtime_set_thread_hooks): on_start before a pool
 * thread's first callback, on_stop on the same thread before it runs under
 * other hooks, destroy once after the last on_stop. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "support.h"

#define POOL 2

struct hooks {
    atomic_int starts;
    atomic_int stops;
    atomic_int destroyed;
    atomic_int wrong_thread; /* an on_stop on a thread that did not run this on_start */
};

/* The hooks whose on_start ran on this thread (NULL: none, or stopped). */
static _Thread_local struct hooks *started_here = NULL;

static void on_start(void *user_data) {
    struct hooks *h = user_data;
    started_here = h;
    atomic_fetch_add(&h->starts, 1);
}

static void on_stop(void *user_data) {
    struct hooks *h = user_data;
    if (started_here != h) atomic_fetch_add(&h->wrong_thread, 1);
    started_here = NULL;
    atomic_fetch_add(&h->stops, 1);
}

static void hooks_destroy(void *user_data) { atomic_fetch_add(&((struct hooks *)user_data)->destroyed, 1); }

/* What the tool saw: the hooks started on its thread, per call. */
static struct hooks *seen[POOL];
static atomic_int arrived;

/* Waits until POOL calls run at once (bounded), so that every pool thread
 * runs one call of each batch. */
static void rendezvous(void *user_data, capstan_call *call) {
    (void)user_data;
    int me = atomic_fetch_add(&arrived, 1);
    if (me < POOL) seen[me] = started_here;
    for (int i = 0; i < 5000 && atomic_load(&arrived) < POOL; i++) sleep_ms(1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}

static void on_result(void *user_data, const capstan_result *result) {
    (void)user_data;
    (void)result;
}

/* A batch of POOL calls on pool threads only (capstan_batch_submit: the caller
 * runs none); true if each one met the others. */
static int run_batch(capstan_registry *reg) {
    atomic_store(&arrived, 0);
    for (int i = 0; i < POOL; i++) seen[i] = (struct hooks *)(intptr_t)-1;
    const char *calls = "[{\"id\":\"a\",\"name\":\"meet\"},{\"id\":\"b\",\"name\":\"meet\"}]";
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.limit = POOL;
    capstan_batch *batch = NULL;
    CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &opts, on_result, NULL, &batch), CAPSTAN_OK);
    CHECK_STATUS(capstan_batch_wait(batch, 30000), CAPSTAN_OK);
    capstan_batch_free(batch);
    return atomic_load(&arrived) == POOL;
}

static void test_clearing_hooks_that_were_never_set_runs_destroy_at_once(void) {
    struct hooks h = {0};
    CHECK_STATUS(capstan_runtime_set_thread_hooks(NULL, NULL, &h, hooks_destroy), CAPSTAN_OK);
    CHECK(atomic_load(&h.destroyed) == 1);
    CHECK_STATUS(capstan_runtime_set_thread_hooks(NULL, NULL, NULL, NULL), CAPSTAN_OK);
}

static struct hooks a, b;

static void test_on_start_runs_once_per_pool_thread_before_its_first_callback(capstan_registry *reg) {
    CHECK_STATUS(capstan_runtime_set_thread_hooks(on_start, on_stop, &a, hooks_destroy), CAPSTAN_OK);
    CHECK(atomic_load(&a.starts) == 0); /* on pool threads, not here */
    CHECK(run_batch(reg));
    CHECK(seen[0] == &a && seen[1] == &a);
    CHECK(atomic_load(&a.starts) == POOL);
    CHECK(run_batch(reg));
    CHECK(seen[0] == &a && seen[1] == &a);
    CHECK(atomic_load(&a.starts) == POOL); /* not again for the same threads */
    CHECK(atomic_load(&a.stops) == 0);
    CHECK(atomic_load(&a.destroyed) == 0);
    CHECK(started_here == NULL); /* never on the host's thread */
}

static void test_replaced_hooks_stop_on_their_threads_then_destroy_once(capstan_registry *reg) {
    CHECK_STATUS(capstan_runtime_set_thread_hooks(on_start, on_stop, &b, hooks_destroy), CAPSTAN_OK);
    CHECK(atomic_load(&a.destroyed) == 0); /* its threads have not run on_stop yet */
    CHECK(run_batch(reg));
    CHECK(seen[0] == &b && seen[1] == &b);
    CHECK(atomic_load(&a.stops) == POOL);
    CHECK(atomic_load(&a.wrong_thread) == 0);
    CHECK(atomic_load(&a.destroyed) == 1);
    CHECK(atomic_load(&b.starts) == POOL);
}

static void test_cleared_hooks_stop_before_the_next_callback(capstan_registry *reg) {
    CHECK_STATUS(capstan_runtime_set_thread_hooks(NULL, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK(atomic_load(&b.destroyed) == 0);
    CHECK(run_batch(reg));
    CHECK(seen[0] == NULL && seen[1] == NULL);
    CHECK(atomic_load(&b.stops) == POOL);
    CHECK(atomic_load(&b.wrong_thread) == 0);
    CHECK(atomic_load(&b.destroyed) == 1);
    CHECK(atomic_load(&b.starts) == POOL);
    CHECK(atomic_load(&a.destroyed) == 1);
}

static struct hooks c, d;

/* A host runtime that is ending abandons the hooks: none runs again, not
 * even the on_stop of an on_start that ran, nor destroy; pool threads that
 * retire afterwards run nothing either. */
static void test_abandoned_hooks_never_run_again(capstan_registry *reg) {
    CHECK_STATUS(capstan_runtime_set_thread_hooks(on_start, on_stop, &c, hooks_destroy), CAPSTAN_OK);
    CHECK(run_batch(reg));
    CHECK(atomic_load(&c.starts) == POOL);
    CHECK_STATUS(capstan_runtime_abandon_thread_hooks(UINT32_MAX), CAPSTAN_OK);
    CHECK(run_batch(reg));
    CHECK(seen[0] == &c && seen[1] == &c); /* on_stop did not run */
    /* Hooks set after that return OK but never run. */
    CHECK_STATUS(capstan_runtime_set_thread_hooks(on_start, on_stop, &d, hooks_destroy), CAPSTAN_OK);
    CHECK(run_batch(reg));
    CHECK(seen[0] == &c && seen[1] == &c);
    /* Threads over a lowered cap retire, running no on_stop. */
    CHECK_STATUS(capstan_pool_configure(1), CAPSTAN_OK);
    sleep_ms(300);
    CHECK_STATUS(capstan_pool_configure(POOL), CAPSTAN_OK);
    CHECK_STATUS(capstan_runtime_set_thread_hooks(NULL, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK(run_batch(reg)); /* a new pool thread runs no on_start either */
    CHECK_STATUS(capstan_runtime_abandon_thread_hooks(0), CAPSTAN_OK); /* again: nothing left to wait for */
    CHECK(atomic_load(&c.starts) == POOL && atomic_load(&c.stops) == 0);
    CHECK(atomic_load(&c.destroyed) == 0 && atomic_load(&c.wrong_thread) == 0);
    CHECK(atomic_load(&d.starts) == 0 && atomic_load(&d.stops) == 0 && atomic_load(&d.destroyed) == 0);
}

int main(void) {
    watchdog_begin("test_threads", "all", 300);
    CHECK_STATUS(capstan_pool_configure(POOL), CAPSTAN_OK); /* before the pool starts */
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "meet";
    def.parameters = "{\"type\":\"object\"}";
    def.callback = rendezvous;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    test_clearing_hooks_that_were_never_set_runs_destroy_at_once();
    test_on_start_runs_once_per_pool_thread_before_its_first_callback(reg);
    test_replaced_hooks_stop_on_their_threads_then_destroy_once(reg);
    test_cleared_hooks_stop_before_the_next_callback(reg);
    test_abandoned_hooks_never_run_again(reg);
    capstan_registry_free(reg);
    return check_report("test_threads");
}
