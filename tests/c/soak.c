/* Soak: many calls through the C ABI with random outcomes (ok, tool error,
 * deferred completion from foreign threads, approval granted or denied on a
 * foreign thread, timeout, cancellation), then a registry close while the last
 * batch runs. Every call must get exactly one result, every batch one end, and
 * resident memory must stay flat: the last sample within 1.5x (+16 MB) of the
 * sample taken after warm-up (10% of the calls).
 *
 * Not part of `make test` at full size (`make soak`: 1,000,000 calls).
 * Environment:
 *   CAPSTAN_SOAK_CALLS=N          number of calls (default 1000000); below
 *                                 200000 RSS is printed but not checked
 *   CAPSTAN_SOAK_LONG_TIMEOUTS=1  the tool that completes (ok, error, deferred)
 *                                 gets a 1-hour timeout instead of 200 ms: a
 *                                 finished call must not keep memory until
 *                                 its deadline. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "queue.h"
#include "support.h"

#define BATCH 1000      /* calls per batch */
#define IN_FLIGHT 4     /* batches running at once */
#define WARMUP_PERCENT 10
#define SAMPLES 20

static struct queue deferred, approvals;
static atomic_uint seed_counter;
static atomic_int bad_completions;

static void *completer(void *arg) {
    (void)arg;
    unsigned s = atomic_fetch_add(&seed_counter, 7919);
    void *item;
    while ((item = q_pop(&deferred)) != NULL) {
        capstan_status st = (next_rand(&s) % 2)
                                ? capstan_call_return(item, CAPSTAN_CONTENT_TEXT, "later", CAPSTAN_NTS)
                                : capstan_call_fail(item, "failed later", CAPSTAN_NTS);
        /* the batch may have been cancelled, or the registry closed, meanwhile */
        if (st != CAPSTAN_OK && st != CAPSTAN_ERR_STALE_HANDLE && st != CAPSTAN_ERR_ALREADY_COMPLETED)
            atomic_fetch_add(&bad_completions, 1);
    }
    return NULL;
}

static void *decider(void *arg) {
    (void)arg;
    unsigned s = atomic_fetch_add(&seed_counter, 104729);
    void *item;
    while ((item = q_pop(&approvals)) != NULL) {
        capstan_status st = capstan_approval_decide(item, next_rand(&s) % 2, "not now", CAPSTAN_NTS);
        /* the call may have been cancelled (batch cancel, close) meanwhile */
        if (st != CAPSTAN_OK && st != CAPSTAN_ERR_STALE_HANDLE && st != CAPSTAN_ERR_ALREADY_COMPLETED)
            atomic_fetch_add(&bad_completions, 1);
    }
    return NULL;
}

/* "work": ok (0), tool error (1) or deferred completion (2), by its "mode". */
static void work(void *user_data, capstan_call *call) {
    (void)user_data;
    const char *args = capstan_call_arguments(call, NULL);
    int mode = args ? atoi(strchr(args, ':') + 1) : 0;
    switch (mode) {
    case 0: capstan_call_return(call, CAPSTAN_CONTENT_JSON, "{\"ok\":true}", CAPSTAN_NTS); break;
    case 1: capstan_call_fail(call, "boom", CAPSTAN_NTS); break;
    default: q_push(&deferred, call); break;
    }
}

/* "hang": never completes; ends by its timeout. */
static void hang(void *user_data, capstan_call *call) {
    (void)user_data;
    (void)call;
}

/* "wait": waits for cancellation (or its timeout), then returns anyway. */
static void wait_cancel(void *user_data, capstan_call *call) {
    (void)user_data;
    while (!capstan_call_cancelled(call)) sleep_ms(1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "too late", CAPSTAN_NTS);
}

static void approver(void *user_data, capstan_approval *a) {
    (void)user_data;
    q_push(&approvals, a);
}

struct tally {
    atomic_int seen[BATCH];
    atomic_int ends;
    int n;
};

static atomic_long outcomes[CAPSTAN_OUTCOME_DENIED + 1];

static void on_result(void *user_data, const capstan_result *r) {
    struct tally *t = user_data;
    if (r == NULL) {
        atomic_fetch_add(&t->ends, 1);
        return;
    }
    if ((int)r->index < t->n) atomic_fetch_add(&t->seen[r->index], 1);
    if (r->outcome <= CAPSTAN_OUTCOME_DENIED) atomic_fetch_add(&outcomes[r->outcome], 1);
}

static double rss_mb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f == NULL) return 0.0;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t env_size(const char *name, size_t fallback) {
    const char *v = getenv(name);
    return v && *v ? (size_t)strtoull(v, NULL, 10) : fallback;
}

/* Checks a finished batch and frees it; returns how many calls had exactly one result. */
static size_t settle(capstan_batch *batch, struct tally *t) {
    CHECK_STATUS(capstan_batch_wait(batch, 120000), CAPSTAN_OK);
    size_t once = 0;
    for (int i = 0; i < t->n; i++) once += atomic_load(&t->seen[i]) == 1;
    CHECK(atomic_load(&t->ends) == 1);
    capstan_batch_free(batch);
    return once;
}

int main(void) {
    size_t total = env_size("CAPSTAN_SOAK_CALLS", 1000000);
    int long_timeouts = env_size("CAPSTAN_SOAK_LONG_TIMEOUTS", 0) != 0;
    uint32_t work_timeout = long_timeouts ? 3600u * 1000u : 200u;
    size_t batches = (total + BATCH - 1) / BATCH;
    q_init(&deferred);
    q_init(&approvals);

    capstan_registry *reg;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    const char *schema = "{\"type\":\"object\",\"properties\":{\"mode\":{\"type\":\"integer\"}},"
                         "\"required\":[\"mode\"]}";
    capstan_tool_def defs[] = {
        {.struct_size = sizeof defs[0], .name = "work", .parameters = schema, .callback = work,
         .timeout_ms = work_timeout},
        {.struct_size = sizeof defs[0], .name = "guarded", .parameters = schema, .callback = work,
         .timeout_ms = work_timeout, .flags = CAPSTAN_TOOL_REQUIRES_APPROVAL},
        {.struct_size = sizeof defs[0], .name = "hang", .callback = hang, .timeout_ms = 5},
        {.struct_size = sizeof defs[0], .name = "wait", .callback = wait_cancel, .timeout_ms = 10},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) CHECK_STATUS(capstan_registry_add_tool(reg, &defs[i]), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_approver(reg, approver, NULL, NULL), CAPSTAN_OK);

    pthread_t completers[2], deciders[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&completers[i], NULL, completer, NULL);
        pthread_create(&deciders[i], NULL, decider, NULL);
    }

    printf("soak: %zu calls in %zu batches of %d, %d at once; completing tools time out after %u ms\n", total,
           batches, BATCH, IN_FLIGHT, work_timeout);
    struct tally *tallies = calloc(IN_FLIGHT, sizeof *tallies);
    capstan_batch *handles[IN_FLIGHT] = {0};
    char *calls = malloc((size_t)BATCH * 64 + 16);
    capstan_exec_options opts = {.struct_size = sizeof opts, .limit = 64};
    unsigned s = 42;
    size_t submitted = 0, once = 0, next_sample = 0, sample_every = total / SAMPLES ? total / SAMPLES : 1;
    size_t warmup_at = total * WARMUP_PERCENT / 100;
    double warm_rss = 0.0, last_rss = 0.0, t0 = now_s();

    for (size_t b = 0; b < batches; b++) {
        size_t slot = b % IN_FLIGHT;
        if (handles[slot]) once += settle(handles[slot], &tallies[slot]);
        int n = (int)(total - submitted < BATCH ? total - submitted : BATCH);
        size_t pos = (size_t)sprintf(calls, "[");
        for (int i = 0; i < n; i++) {
            unsigned r = next_rand(&s) % 100;
            /* 45% ok, 20% error, 20% deferred, 3% approval, 2% timeout, 10% wait for cancel or timeout */
            const char *tool = r < 85 ? "work" : r < 88 ? "guarded" : r < 90 ? "hang" : "wait";
            int mode = r < 45 ? 0 : r < 65 ? 1 : r < 85 ? 2 : 0;
            pos += (size_t)sprintf(calls + pos, "%s{\"id\":\"c%d\",\"name\":\"%s\",\"arguments\":{\"mode\":%d}}",
                                   i ? "," : "", i, tool, mode);
        }
        sprintf(calls + pos, "]");
        memset(&tallies[slot], 0, sizeof tallies[slot]);
        tallies[slot].n = n;
        CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &opts, on_result, &tallies[slot], &handles[slot]),
                     CAPSTAN_OK);
        if (b % 4 == 3) capstan_batch_cancel(handles[slot]); /* every 4th batch cancelled midway */
        submitted += (size_t)n;

        if (submitted >= next_sample || b + 1 == batches) {
            last_rss = rss_mb();
            if (warm_rss == 0.0 && submitted >= warmup_at) warm_rss = last_rss;
            printf("soak: %8zu calls  %6.1f s  rss %7.1f MB\n", submitted, now_s() - t0, last_rss);
            fflush(stdout);
            next_sample += sample_every;
        }
    }
    /* Close while the last batches run: their calls end cancelled, each still once. */
    CHECK_STATUS(capstan_registry_close(reg, 60000), CAPSTAN_OK);
    capstan_tool_def late = {.struct_size = sizeof late, .name = "late", .callback = hang};
    CHECK_STATUS(capstan_registry_add_tool(reg, &late), CAPSTAN_ERR_SHUTTING_DOWN);
    for (size_t i = 0; i < IN_FLIGHT; i++)
        if (handles[i]) once += settle(handles[i], &tallies[i]);
    capstan_registry_free(reg);
    q_close(&deferred);
    q_close(&approvals);
    for (int i = 0; i < 2; i++) {
        pthread_join(completers[i], NULL);
        pthread_join(deciders[i], NULL);
    }

    long results = 0;
    for (int o = 0; o <= CAPSTAN_OUTCOME_DENIED; o++) results += atomic_load(&outcomes[o]);
    printf("soak: %zu calls, %ld results, %zu exactly once, %.1f s\n", total, results, once, now_s() - t0);
    printf("soak: ok %ld, tool_error %ld, timeout %ld, cancelled %ld, denied %ld\n",
           atomic_load(&outcomes[CAPSTAN_OUTCOME_OK]), atomic_load(&outcomes[CAPSTAN_OUTCOME_TOOL_ERROR]),
           atomic_load(&outcomes[CAPSTAN_OUTCOME_TIMEOUT]), atomic_load(&outcomes[CAPSTAN_OUTCOME_CANCELLED]),
           atomic_load(&outcomes[CAPSTAN_OUTCOME_DENIED]));
    CHECK(once == total);
    CHECK((size_t)results == total);
    CHECK(atomic_load(&bad_completions) == 0);
    /* every kind of outcome happened */
    CHECK(atomic_load(&outcomes[CAPSTAN_OUTCOME_OK]) > 0);
    CHECK(atomic_load(&outcomes[CAPSTAN_OUTCOME_TOOL_ERROR]) > 0);
    CHECK(atomic_load(&outcomes[CAPSTAN_OUTCOME_TIMEOUT]) > 0);
    CHECK(atomic_load(&outcomes[CAPSTAN_OUTCOME_CANCELLED]) > 0);
    CHECK(atomic_load(&outcomes[CAPSTAN_OUTCOME_DENIED]) > 0);
    if (total >= 200000) {
        double limit = warm_rss * 1.5 + 16.0;
        printf("soak: rss after warm-up %.1f MB, at the end %.1f MB (limit %.1f MB)\n", warm_rss, last_rss, limit);
        CHECK(last_rss <= limit);
    }
    free(deferred.items);
    free(approvals.items);
    free(calls);
    free(tallies);
    return check_report("soak");
}
