/* Callbacks that call back into capstan: nested execution on the same
 * registry with a saturated pool, and registering from inside a callback. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "support.h"

#define POOL_THREADS 2
/* main's calls are at depth 1; callbacks at depths 1 to DEPTH-1 each run a
 * nested capstan_registry_execute, so executes nest DEPTH-1 = 3 levels inside callbacks. */
#define DEPTH 4
#define FAN_OUT 3

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

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* ------------------------------------------------------------------------ */

static atomic_int leaves;
static atomic_int nested_failures; /* statuses != OK inside callbacks */

/* The distinct threads that ran "nest" callbacks. */
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t threads_seen[64];
static int threads_count;

static void note_thread(void) {
    pthread_t me = pthread_self();
    pthread_mutex_lock(&threads_lock);
    int known = 0;
    for (int i = 0; i < threads_count && !known; i++) known = pthread_equal(threads_seen[i], me);
    if (!known && threads_count < 64) threads_seen[threads_count++] = me;
    pthread_mutex_unlock(&threads_lock);
}

/* Builds FAN_OUT calls of "nest" at `depth`. */
static void nest_calls(int depth, char *buf, size_t cap) {
    snprintf(buf, cap, "[");
    for (int i = 0; i < FAN_OUT; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s{\"id\":\"d%d_%d\",\"name\":\"nest\",\"arguments\":{\"depth\":%d}}",
                 i ? "," : "", depth, i, depth);
    }
    strcat(buf, "]");
}

/* A leaf answers "leaf"; any other level runs FAN_OUT calls one level
 * deeper on the same registry and answers how many leaves came back. */
static void nest(void *user_data, capstan_call *call) {
    (void)user_data;
    note_thread();
    const char *args = capstan_call_arguments(call, NULL);
    const char *p = args ? strstr(args, "\"depth\":") : NULL;
    int depth = p ? atoi(p + 8) : -1;
    if (depth >= DEPTH) {
        sleep_ms(2); /* keep the pool threads busy */
        atomic_fetch_add(&leaves, 1);
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "leaf", CAPSTAN_NTS);
        return;
    }
    char calls[1024];
    nest_calls(depth + 1, calls, sizeof calls);
    char *out = NULL;
    capstan_status st = capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &out, NULL);
    if (st != CAPSTAN_OK) {
        atomic_fetch_add(&nested_failures, 1);
        capstan_call_fail(call, capstan_status_name(st), CAPSTAN_NTS);
        return;
    }
    /* Each child's leaf count: a leaf says "leaf", an inner node "leaves=N". */
    int got = count_of(out, "\"content\":\"leaf\"");
    for (const char *q = out; (q = strstr(q, "\"content\":\"leaves=")) != NULL; q++) got += atoi(q + 18);
    if (count_of(out, "\"outcome\":\"ok\"") != FAN_OUT) atomic_fetch_add(&nested_failures, 1);
    capstan_string_free(out);
    char text[32];
    snprintf(text, sizeof text, "leaves=%d", got);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, text, CAPSTAN_NTS);
}

struct nesting {
    char *results;
    capstan_status status;
    atomic_int done;
};

static void *run_nesting(void *arg) {
    struct nesting *n = arg;
    char calls[1024];
    nest_calls(1, calls, sizeof calls);
    n->status = capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &n->results, NULL);
    atomic_store(&n->done, 1);
    return NULL;
}

/* FAN_OUT^DEPTH leaves under FAN_OUT top-level calls, while the pool has
 * POOL_THREADS threads: every level's caller is itself a tool callback. */
static int nested_execute_on_a_saturated_pool_completes(void) {
    int expected = 1;
    for (int i = 0; i < DEPTH; i++) expected *= FAN_OUT;
    atomic_store(&leaves, 0);
    struct nesting n = {NULL, -1, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, run_nesting, &n) == 0);
    /* A deadlock must fail the test, not hang it. */
    int finished = wait_flag(&n.done, 30000); /* only spent when it fails */
    CHECK(finished);
    if (!finished) {
        fprintf(stderr, "nested execution deadlocked: %d of %d leaves arrived\n", atomic_load(&leaves), expected);
        return 0;
    }
    pthread_join(t, NULL);
    CHECK_STATUS(n.status, CAPSTAN_OK);
    CHECK(atomic_load(&leaves) == expected);
    CHECK(atomic_load(&nested_failures) == 0);
    /* Each top-level call reports the leaves beneath it. */
    char want[32];
    snprintf(want, sizeof want, "\"content\":\"leaves=%d\"", expected / FAN_OUT);
    CHECK(count_of(n.results, want) == FAN_OUT);
    CHECK(count_of(n.results, "\"outcome\":\"ok\"") == FAN_OUT);
    /* Only the pool's threads and the first caller ran callbacks: the pool
     * really had POOL_THREADS threads for all that work. */
    pthread_mutex_lock(&threads_lock);
    CHECK(threads_count >= 1 && threads_count <= POOL_THREADS + 1);
    pthread_mutex_unlock(&threads_lock);
    capstan_string_free(n.results);
    return 1;
}

/* Sets the pool's cap, the keep-alive left at its default. */
static capstan_status configure_threads(uint32_t threads) {
    capstan_runtime_options opts = CAPSTAN_RUNTIME_OPTIONS_INIT;
    opts.threads = threads;
    return capstan_runtime_configure(&opts);
}

/* A struct_size below the first version's is refused, options unchanged. */
static void configure_refuses_a_short_struct(void) {
    capstan_runtime_options opts = CAPSTAN_RUNTIME_OPTIONS_INIT;
    opts.struct_size = sizeof(uint32_t);
    CHECK_STATUS(capstan_runtime_configure(&opts), CAPSTAN_ERR_INVALID_ARGUMENT);
}

static void pool_configure_works_after_the_pool_started(void) {
    configure_refuses_a_short_struct();
    CHECK_STATUS(configure_threads(POOL_THREADS + 4), CAPSTAN_OK);
    CHECK_STATUS(configure_threads(POOL_THREADS), CAPSTAN_OK);
}

/* ------------------------------------------------------------------------ */

static atomic_int made_destroyed;
static atomic_int maker_status = -1;
static char maker_saw[512];

static void made(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "made it", CAPSTAN_NTS);
}

/* Registers "made", then calls it, from inside its own callback. */
static void maker(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_tool_def def = make_def("made", made, &made_destroyed);
    def.destroy = count_destroy;
    atomic_store(&maker_status, capstan_registry_add_tool(reg, &def));
    char *out = NULL;
    if (capstan_registry_execute(reg, "{\"id\":\"inner\",\"name\":\"made\"}", CAPSTAN_NTS, NULL, &out, NULL) == CAPSTAN_OK) {
        snprintf(maker_saw, sizeof maker_saw, "%s", out);
        capstan_string_free(out);
    }
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "registered", CAPSTAN_NTS);
}

static void callback_can_register_another_tool(void) {
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"m1\",\"name\":\"maker\"}", CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"content\":\"registered\"");
    capstan_string_free(out);
    CHECK(atomic_load(&maker_status) == CAPSTAN_OK);
    CHECK_CONTAINS(maker_saw, "\"content\":\"made it\"");
    /* And it stays registered for later calls. */
    out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"m2\",\"name\":\"made\"}", CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"content\":\"made it\"");
    capstan_string_free(out);
    CHECK(atomic_load(&made_destroyed) == 0);
}

/* ------------------------------------------------------------------------ */

static atomic_int self_destroyed;
static atomic_int self_status = -1;
static atomic_int self_destroyed_inside = -1;

static void replaced(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "new self", CAPSTAN_NTS);
}

/* Replaces its own tool while its call is still running. */
static void replace_self(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_tool_def def = make_def("self", replaced, NULL);
    def.flags = CAPSTAN_TOOL_REPLACE;
    atomic_store(&self_status, capstan_registry_add_tool(reg, &def));
    atomic_store(&self_destroyed_inside, atomic_load(&self_destroyed));
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "old self", CAPSTAN_NTS);
}

static void callback_can_replace_its_own_tool(void) {
    capstan_tool_def def = make_def("self", replace_self, &self_destroyed);
    def.destroy = count_destroy;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"s1\",\"name\":\"self\"}", CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"content\":\"old self\"");
    capstan_string_free(out);
    CHECK(atomic_load(&self_status) == CAPSTAN_OK);
    CHECK(atomic_load(&self_destroyed_inside) == 0); /* not while its callback runs */
    CHECK(atomic_load(&self_destroyed) == 1);
    out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"s2\",\"name\":\"self\"}", CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"content\":\"new self\"");
    capstan_string_free(out);
}

/* ------------------------------------------------------------------------ */
/* Freeing the registry from inside one of its callbacks                     */

static capstan_registry *doomed;
static atomic_int doomed_destroyed[2];
static atomic_int own_destroyed_inside = -1;
static atomic_int return_after_free = -1;

static void free_own_registry(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_registry_free(doomed);
    /* Its own tool is still running this callback: not destroyed yet. */
    atomic_store(&own_destroyed_inside, atomic_load(&doomed_destroyed[0]));
    atomic_store(&return_after_free, capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "x", CAPSTAN_NTS));
}

static void registry_free_inside_its_own_callback_finishes_after_it(void) {
    CHECK_STATUS(capstan_registry_new(NULL, &doomed), CAPSTAN_OK);
    capstan_tool_def def = make_def("free_own", free_own_registry, &doomed_destroyed[0]);
    def.destroy = count_destroy;
    CHECK_STATUS(capstan_registry_add_tool(doomed, &def), CAPSTAN_OK);
    def = make_def("bystander", made, &doomed_destroyed[1]);
    def.destroy = count_destroy;
    CHECK_STATUS(capstan_registry_add_tool(doomed, &def), CAPSTAN_OK);

    char *out = NULL;
    capstan_exec_options seq = {.struct_size = sizeof seq, .flags = CAPSTAN_EXEC_SEQUENTIAL};
    CHECK_STATUS(capstan_registry_execute(doomed, "[{\"id\":\"f\",\"name\":\"free_own\"},{\"id\":\"b\",\"name\":\"bystander\"}]",
                                 CAPSTAN_NTS, &seq, &out, NULL),
                 CAPSTAN_OK);
    /* Every call still got its one result: cancelled. */
    CHECK(count_of(out, "\"outcome\":\"cancelled\"") == 2);
    capstan_string_free(out);
    CHECK(atomic_load(&own_destroyed_inside) == 0);
    CHECK(atomic_load(&return_after_free) == CAPSTAN_ERR_STALE_HANDLE ||
          atomic_load(&return_after_free) == CAPSTAN_ERR_ALREADY_COMPLETED);
    CHECK(atomic_load(&doomed_destroyed[0]) == 1);
    CHECK(atomic_load(&doomed_destroyed[1]) == 1);
}

/* ------------------------------------------------------------------------ */
/* Timeouts on a saturated pool                                              */

#define MAX_HUNG 16
static atomic_uintptr_t hung[MAX_HUNG];
static atomic_int hung_count;

/* Never completes its call: only the timeout can end it. */
static void hang(void *user_data, capstan_call *call) {
    (void)user_data;
    int i = atomic_fetch_add(&hung_count, 1);
    if (i < MAX_HUNG) atomic_store(&hung[i], (uintptr_t)call);
}

struct job {
    const char *calls;
    char *results;
    capstan_status status;
    atomic_int done;
};

static void *run_job(void *arg) {
    struct job *j = arg;
    j->status = capstan_registry_execute(reg, j->calls, CAPSTAN_NTS, NULL, &j->results, NULL);
    atomic_store(&j->done, 1);
    return NULL;
}

/* Calls per batch in the saturation tests: three times the pool. */
#define SATURATING (3 * POOL_THREADS)

static void calls_of(const char *tool, int n, char *buf, size_t cap) {
    snprintf(buf, cap, "[");
    for (int i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s{\"id\":\"%s%d\",\"name\":\"%s\"}", i ? "," : "", tool, i, tool);
    }
    strcat(buf, "]");
}

/* How long a batch may take before it counts as deadlocked: only spent when
 * the test fails, so generous enough for a machine at load average 20. */
static int deadlock_wait_ms(void) { return 30000; }

/* More timed calls than pool threads, each holding its thread: the
 * timeouts must still fire and end every call. */
static void timeouts_fire_while_the_pool_is_saturated(void) {
    atomic_store(&hung_count, 0);
    char calls[1024];
    calls_of("hang", SATURATING, calls, sizeof calls);
    struct job j = {calls, NULL, -1, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, run_job, &j) == 0);
    int in_time = wait_flag(&j.done, deadlock_wait_ms());
    check_count++;
    if (!in_time) {
        check_failures++;
        fprintf(stderr, "%s:%d: %d-thread pool: calls with a 50 ms timeout were still running after %d ms\n",
                __FILE__, __LINE__, POOL_THREADS, deadlock_wait_ms());
        /* Rescue: complete what is held so the batch can end. */
        for (int round = 0; round < 100 && !atomic_load(&j.done); round++) {
            for (int i = 0; i < atomic_load(&hung_count) && i < MAX_HUNG; i++) {
                capstan_call_return((capstan_call *)atomic_load(&hung[i]), CAPSTAN_CONTENT_TEXT, "rescued",
                                    CAPSTAN_NTS);
            }
            sleep_ms(100);
        }
    }
    if (!atomic_load(&j.done)) {
        fprintf(stderr, "%s:%d: the batch never ended; leaving its thread behind\n", __FILE__, __LINE__);
        return;
    }
    pthread_join(t, NULL);
    CHECK_STATUS(j.status, CAPSTAN_OK);
    CHECK(count_of(j.results, "\"outcome\":\"timeout\"") == SATURATING);
    capstan_string_free(j.results);
}

static void quick(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "quick", CAPSTAN_NTS);
}

/* Runs one "timed" call (a quick tool with a timeout) from inside a callback. */
static void outer(void *user_data, capstan_call *call) {
    (void)user_data;
    char *out = NULL;
    capstan_status st = capstan_registry_execute(reg, "{\"id\":\"in\",\"name\":\"timed\"}", CAPSTAN_NTS, NULL, &out, NULL);
    if (st == CAPSTAN_OK && strstr(out, "\"content\":\"quick\"") != NULL) {
        capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "inner ok", CAPSTAN_NTS);
    } else {
        capstan_call_fail(call, out ? out : capstan_status_name(st), CAPSTAN_NTS);
    }
    capstan_string_free(out);
}

/* Nested calls of a tool that has a timeout, from more callbacks than the
 * pool has threads. Returns 0 if it deadlocked (threads are left stuck). */
static int nested_execute_of_a_timed_tool_on_a_saturated_pool_completes(void) {
    char calls[1024];
    calls_of("outer", SATURATING, calls, sizeof calls);
    struct job j = {calls, NULL, -1, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, run_job, &j) == 0);
    int in_time = wait_flag(&j.done, deadlock_wait_ms());
    check_count++;
    if (!in_time) {
        check_failures++;
        fprintf(stderr, "%s:%d: %d-thread pool: nested execution of a tool with a timeout deadlocked\n",
                __FILE__, __LINE__, POOL_THREADS);
        return 0;
    }
    pthread_join(t, NULL);
    CHECK_STATUS(j.status, CAPSTAN_OK);
    CHECK(count_of(j.results, "\"content\":\"inner ok\"") == SATURATING);
    capstan_string_free(j.results);
    return 1;
}

int main(void) {
    /* Before anything starts the pool. */
    configure_refuses_a_short_struct();
    CHECK_STATUS(configure_threads(POOL_THREADS), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = make_def("nest", nest, NULL);
    def.parameters = "{\"type\":\"object\",\"properties\":{\"depth\":{\"type\":\"integer\"}},\"required\":[\"depth\"]}";
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    def = make_def("maker", maker, NULL);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    def = make_def("hang", hang, NULL);
    def.timeout_ms = 50;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    def = make_def("timed", quick, NULL);
    def.timeout_ms = 10000;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    def = make_def("outer", outer, NULL);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);

    if (!nested_execute_on_a_saturated_pool_completes()) {
        /* Threads are stuck inside the registry: freeing it would hang too. */
        return check_report("test_nested");
    }
    pool_configure_works_after_the_pool_started();
    callback_can_register_another_tool();
    callback_can_replace_its_own_tool();
    registry_free_inside_its_own_callback_finishes_after_it();
    timeouts_fire_while_the_pool_is_saturated();
    if (!nested_execute_of_a_timed_tool_on_a_saturated_pool_completes()) {
        return check_report("test_nested");
    }

    capstan_registry_free(reg);
    CHECK(atomic_load(&made_destroyed) == 1);
    return check_report("test_nested");
}
