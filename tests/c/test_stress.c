/* Stress: many calls in many concurrent batches with random outcomes (ok, tool
 * error, timeout, cancellation, deferred completion from foreign threads,
 * approval granted or denied later). Every call must get exactly one result.
 * 100,000 calls in 50 batches; CAPSTAN_TEST_SCALE=small: 1,000 in 10. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "queue.h"
#include "support.h"

static struct queue deferred, approvals;
static atomic_uint seed_counter;

static void *completer(void *arg) {
    (void)arg;
    unsigned s = atomic_fetch_add(&seed_counter, 7919);
    void *item;
    while ((item = q_pop(&deferred)) != NULL) {
        capstan_call *call = item;
        capstan_status st = (next_rand(&s) % 2)
                                ? capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "later", CAPSTAN_NTS)
                                : capstan_call_fail(call, "failed later", CAPSTAN_NTS);
        /* the batch may have been cancelled or the call timed out meanwhile */
        CHECK(st == CAPSTAN_OK || st == CAPSTAN_ERR_STALE_HANDLE || st == CAPSTAN_ERR_ALREADY_COMPLETED);
    }
    return NULL;
}

static void *decider(void *arg) {
    (void)arg;
    unsigned s = atomic_fetch_add(&seed_counter, 104729);
    void *item;
    while ((item = q_pop(&approvals)) != NULL) {
        capstan_status st = capstan_approval_decide(item, next_rand(&s) % 2, "no", CAPSTAN_NTS);
        /* the batch may have been cancelled meanwhile; the header allows
         * either status for a decision that lost that race */
        CHECK(st == CAPSTAN_OK || st == CAPSTAN_ERR_STALE_HANDLE || st == CAPSTAN_ERR_ALREADY_COMPLETED);
    }
    return NULL;
}

/* The tool: what it does depends on its "mode" argument. */
static void chaos(void *user_data, capstan_call *call) {
    (void)user_data;
    const char *args = capstan_call_arguments(call, NULL);
    int mode = args ? atoi(strchr(args, ':') + 1) : 0;
    switch (mode) {
    case 0: capstan_call_return(call, CAPSTAN_CONTENT_JSON, "{\"ok\":true}", CAPSTAN_NTS); break;
    case 1: capstan_call_fail(call, "boom", CAPSTAN_NTS); break;
    case 2: q_push(&deferred, call); break;     /* completed by a foreign thread */
    case 3: break;                              /* never completes: times out */
    case 4:                                     /* waits for cancellation or its timeout */
        while (!capstan_call_cancelled(call)) sleep_ms(1);
        break;
    default: capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "approved", CAPSTAN_NTS); break;
    }
}

static void approver(void *user_data, capstan_approval *a) {
    (void)user_data;
    q_push(&approvals, a);
}

struct batch_tally {
    atomic_int *seen;
    atomic_int results;
    atomic_int ends;
    int n;
};

static void on_result(void *user_data, const capstan_result *r) {
    struct batch_tally *t = user_data;
    if (r == NULL) {
        atomic_fetch_add(&t->ends, 1);
        return;
    }
    if ((int)r->index < t->n) atomic_fetch_add(&t->seen[r->index], 1);
    atomic_fetch_add(&t->results, 1);
}

int main(void) {
    int small = check_small();
    int batches = small ? 10 : 50;
    int per_batch = small ? 100 : 2000;
    size_t total = (size_t)batches * (size_t)per_batch;
    q_init(&deferred);
    q_init(&approvals);

    capstan_registry *reg;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    const char *schema = "{\"type\":\"object\",\"properties\":{\"mode\":{\"type\":\"integer\"}},"
                         "\"required\":[\"mode\"]}";
    capstan_tool_def chaos_def = {.struct_size = sizeof chaos_def, .name = "chaos", .parameters = schema,
                                  .callback = chaos, .timeout_ms = 20};
    capstan_tool_def guarded_def = {.struct_size = sizeof guarded_def, .name = "guarded", .parameters = schema,
                                    .callback = chaos, .timeout_ms = 20,
                                    .flags = CAPSTAN_TOOL_REQUIRES_APPROVAL};
    CHECK_STATUS(capstan_registry_add_tool(reg, &chaos_def), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_add_tool(reg, &guarded_def), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_approver(reg, approver, NULL, NULL), CAPSTAN_OK);

    pthread_t completers[2], deciders[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&completers[i], NULL, completer, NULL);
        pthread_create(&deciders[i], NULL, decider, NULL);
    }

    struct batch_tally *tallies = calloc((size_t)batches, sizeof *tallies);
    capstan_batch **handles = calloc((size_t)batches, sizeof *handles);
    unsigned s = 42;
    size_t cap = (size_t)per_batch * 64 + 16;
    char *calls = malloc(cap);
    capstan_exec_options opts = {.struct_size = sizeof opts, .limit = 16};
    for (int b = 0; b < batches; b++) {
        size_t pos = (size_t)snprintf(calls, cap, "[");
        for (int i = 0; i < per_batch; i++) {
            unsigned r = next_rand(&s) % 100;
            /* 40% ok, 20% error, 20% deferred, 10% approval, 2% timeout, 8% wait-for-cancel */
            int mode = r < 40 ? 0 : r < 60 ? 1 : r < 80 ? 2 : r < 90 ? 5 : r < 92 ? 3 : 4;
            const char *tool = mode == 5 ? "guarded" : "chaos";
            pos += (size_t)snprintf(calls + pos, cap - pos, "%s{\"id\":\"b%d_%d\",\"name\":\"%s\",\"arguments\":{\"mode\":%d}}",
                                    i ? "," : "", b, i, tool, mode);
        }
        snprintf(calls + pos, cap - pos, "]");
        tallies[b].n = per_batch;
        tallies[b].seen = calloc((size_t)per_batch, sizeof(atomic_int));
        CHECK_STATUS(capstan_batch_submit(reg, calls, CAPSTAN_NTS, &opts, on_result, &tallies[b], &handles[b]),
                     CAPSTAN_OK);
        if (b % 3 == 2) {
            sleep_ms(2);
            capstan_batch_cancel(handles[b]); /* some batches are cancelled midway */
        }
        if (b >= 4) capstan_batch_wait(handles[b - 4], UINT32_MAX); /* at most ~5 in flight */
    }
    for (int b = 0; b < batches; b++) CHECK_STATUS(capstan_batch_wait(handles[b], 120000), CAPSTAN_OK);

    size_t results = 0, once = 0;
    int ends_ok = 1;
    for (int b = 0; b < batches; b++) {
        results += (size_t)atomic_load(&tallies[b].results);
        for (int i = 0; i < per_batch; i++) once += atomic_load(&tallies[b].seen[i]) == 1;
        ends_ok &= atomic_load(&tallies[b].ends) == 1;
        capstan_batch_free(handles[b]);
        free(tallies[b].seen);
    }
    CHECK(results == total);
    CHECK(once == total);
    CHECK(ends_ok);
    printf("stress: %zu calls in %d batches, %zu results, %zu exactly once\n", total, batches, results, once);

    capstan_registry_free(reg);
    q_close(&deferred);
    q_close(&approvals);
    for (int i = 0; i < 2; i++) {
        pthread_join(completers[i], NULL);
        pthread_join(deciders[i], NULL);
    }
    free(deferred.items);
    free(approvals.items);
    free(calls);
    free(tallies);
    free(handles);
    return check_report("test_stress");
}
