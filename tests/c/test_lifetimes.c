/* Lifetimes the host relies on: text lent by a call lives until the host
 * completes it (even after a timeout); hook user_data has a destroy that runs
 * once, after the last invocation; close wins a race with register; capstan
 * never aborts when called from a thread-exit destructor. Bounded by a
 * watchdog: a regression fails instead of hanging. */
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
static void begin(const char *name) { watchdog_begin("test_lifetimes", name, 180u); }

static capstan_registry *new_registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    return reg;
}

static void echo(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}

/* ------------------------------------------------------------------------ */
/* Text lent by a call lives until the host completes it                      */

struct deferred {
    capstan_call *call;
    const char *args, *id, *tool;
    size_t args_len, id_len, tool_len;
    int args_ok, id_ok, tool_ok;
    capstan_status completion, after;
};

static struct deferred handed[4];
static atomic_int handed_count;
static pthread_t readers[4];

static atomic_int executed; /* capstan_registry_execute returned: every call timed out */

static void *read_later(void *arg) {
    struct deferred *d = arg;
    wait_flag(&executed, 60000);
    sleep_ms(50); /* and then some */
    d->args_ok = d->args_len == strlen("{\"n\":7}") && memcmp(d->args, "{\"n\":7}", d->args_len) == 0 &&
                 d->args[d->args_len] == '\0';
    d->id_ok = d->id_len == 2 && memcmp(d->id, "c", 1) == 0 && d->id[d->id_len] == '\0';
    d->tool_ok = d->tool_len == strlen("lend") && strcmp(d->tool, "lend") == 0;
    d->completion = capstan_call_return(d->call, CAPSTAN_CONTENT_TEXT, d->args, d->args_len);
    d->after = capstan_call_return(d->call, CAPSTAN_CONTENT_TEXT, "x", 1);
    return NULL;
}

/* Hands its arguments, id and name to a thread that reads them 50 ms later. */
static void lend(void *user_data, capstan_call *call) {
    (void)user_data;
    int i = atomic_fetch_add(&handed_count, 1);
    struct deferred *d = &handed[i];
    d->call = call;
    d->args = capstan_call_arguments(call, &d->args_len);
    d->id = capstan_call_id(call, &d->id_len);
    d->tool = capstan_call_tool(call, &d->tool_len);
    pthread_create(&readers[i], NULL, read_later, d);
}

static int count_of_timeouts(const char *out) {
    int n = 0;
    for (const char *p = out; p && (p = strstr(p, "\"outcome\":\"timeout\"")) != NULL; p++) n++;
    return n;
}

static void test_lent_call_text_stays_valid_until_the_host_completes_even_after_a_timeout(void) {
    begin("lent text after timeout");
    capstan_registry *reg = new_registry();
    capstan_tool_def d = {.struct_size = sizeof d, .name = "lend", .parameters = OBJ, .callback = lend,
                          .timeout_ms = 5};
    CHECK_STATUS(capstan_registry_add_tool(reg, &d), CAPSTAN_OK);
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg,
                                 "[{\"id\":\"c1\",\"name\":\"lend\",\"arguments\":{\"n\":7}},"
                                 "{\"id\":\"c2\",\"name\":\"lend\",\"arguments\":{\"n\":7}}]",
                                 CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    atomic_store(&executed, 1);
    CHECK(count_of_timeouts(out) == 2);
    capstan_string_free(out);
    int n = atomic_load(&handed_count);
    CHECK(n == 2);
    for (int i = 0; i < n; i++) {
        pthread_join(readers[i], NULL);
        CHECK(handed[i].args_ok);
        CHECK(handed[i].id_ok);
        CHECK(handed[i].tool_ok);
        /* Refused (the call timed out), and that ends the host's use of it. */
        CHECK(handed[i].completion == CAPSTAN_ERR_ALREADY_COMPLETED);
        CHECK(handed[i].after == CAPSTAN_ERR_STALE_HANDLE);
        CHECK(capstan_call_arguments(handed[i].call, NULL) == NULL);
    }
    capstan_registry_free(reg);
}

static capstan_call *abandoned;
static void abandon(void *user_data, capstan_call *call) {
    (void)user_data;
    abandoned = call; /* never completed */
}

static void test_a_timed_out_call_never_completed_is_released_when_the_registry_is_freed(void) {
    begin("abandoned call released at free");
    capstan_registry *reg = new_registry();
    capstan_tool_def d = {.struct_size = sizeof d, .name = "abandon", .parameters = OBJ, .callback = abandon,
                          .timeout_ms = 5};
    CHECK_STATUS(capstan_registry_add_tool(reg, &d), CAPSTAN_OK);
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"a\",\"name\":\"abandon\"}", CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"outcome\":\"timeout\"");
    capstan_string_free(out);
    /* Still the host's until it completes it or frees the registry. */
    CHECK(capstan_call_arguments(abandoned, NULL) != NULL);
    CHECK(capstan_call_cancelled(abandoned));
    capstan_registry_free(reg); /* LSan/Valgrind: nothing of the call is left */
    CHECK(capstan_call_arguments(abandoned, NULL) == NULL);
    CHECK_STATUS(capstan_call_return(abandoned, CAPSTAN_CONTENT_TEXT, "x", 1), CAPSTAN_ERR_STALE_HANDLE);
}

/* ------------------------------------------------------------------------ */
/* Hooks: destroy runs once, after the last invocation                       */

#define HOOK_MAGIC 0x600dcafe
struct hook_data {
    unsigned magic;
    atomic_int active;
};
static atomic_int hook_sets, hook_destroys, hook_violations;

static struct hook_data *hook_data_new(void) {
    struct hook_data *d = malloc(sizeof *d);
    d->magic = HOOK_MAGIC;
    atomic_init(&d->active, 0);
    atomic_fetch_add(&hook_sets, 1);
    return d;
}

static void hook_enter(struct hook_data *d) {
    if (d->magic != HOOK_MAGIC) atomic_fetch_add(&hook_violations, 1); /* ASan: use after free */
    atomic_fetch_add(&d->active, 1);
}

static void hook_leave(struct hook_data *d) { atomic_fetch_sub(&d->active, 1); }

static void hook_destroy(void *user_data) {
    struct hook_data *d = user_data;
    if (d->magic != HOOK_MAGIC || atomic_load(&d->active) != 0) atomic_fetch_add(&hook_violations, 1);
    d->magic = 0;
    atomic_fetch_add(&hook_destroys, 1);
    free(d);
}

static void on_event(void *user_data, const capstan_event *e) {
    (void)e;
    hook_enter(user_data);
    hook_leave(user_data);
}

static void on_notify(void *user_data) {
    hook_enter(user_data);
    hook_leave(user_data);
}

static void on_approve(void *user_data, capstan_approval *a) {
    hook_enter(user_data);
    capstan_approval_decide(a, true, NULL, 0);
    hook_leave(user_data);
}

static void test_hook_destroy_runs_once_on_replace_remove_free_and_failure(void) {
    begin("hook destroy: replace, remove, free, failure");
    atomic_store(&hook_sets, 0);
    atomic_store(&hook_destroys, 0);
    capstan_registry *reg = new_registry();
    CHECK_STATUS(capstan_registry_set_event_hook(reg, on_event, hook_data_new(), hook_destroy), CAPSTAN_OK);
    CHECK(atomic_load(&hook_destroys) == 0);
    CHECK_STATUS(capstan_registry_set_event_hook(reg, on_event, hook_data_new(), hook_destroy), CAPSTAN_OK);
    CHECK(atomic_load(&hook_destroys) == 1); /* replaced, no invocation running */
    CHECK_STATUS(capstan_registry_set_event_hook(reg, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK(atomic_load(&hook_destroys) == 2); /* removed */
    CHECK_STATUS(capstan_registry_set_notify(reg, on_notify, hook_data_new(), hook_destroy), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_approver(reg, on_approve, hook_data_new(), hook_destroy), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_event_hook(reg, on_event, hook_data_new(), hook_destroy), CAPSTAN_OK);
    CHECK(atomic_load(&hook_destroys) == 2);
    capstan_registry_free(reg);
    CHECK(atomic_load(&hook_destroys) == 5); /* freed */

    /* Failures run destroy before returning. */
    CHECK_STATUS(capstan_registry_set_event_hook(NULL, on_event, hook_data_new(), hook_destroy),
                 CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(atomic_load(&hook_destroys) == 6);
    reg = new_registry();
    CHECK_STATUS(capstan_registry_close(reg, UINT32_MAX), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_notify(reg, on_notify, hook_data_new(), hook_destroy),
                 CAPSTAN_ERR_SHUTTING_DOWN);
    CHECK_STATUS(capstan_registry_set_approver(reg, on_approve, hook_data_new(), hook_destroy),
                 CAPSTAN_ERR_SHUTTING_DOWN);
    CHECK(atomic_load(&hook_destroys) == 8);
    capstan_registry_free(reg);
    CHECK(atomic_load(&hook_sets) == atomic_load(&hook_destroys));
    CHECK(atomic_load(&hook_violations) == 0);
}

static atomic_int blocker_in, blocker_go, blocker_destroyed;
static void blocking_hook(void *user_data, const capstan_event *e) {
    (void)user_data;
    if (e->kind != CAPSTAN_EVENT_STARTED) return;
    atomic_store(&blocker_in, 1);
    wait_flag(&blocker_go, 60000);
}

static void *execute_echo(void *arg) {
    char *out = NULL;
    capstan_registry_execute(arg, "{\"id\":\"e\",\"name\":\"echo\"}", CAPSTAN_NTS, NULL, &out, NULL);
    capstan_string_free(out);
    return NULL;
}

static void test_a_replaced_hook_is_destroyed_only_after_its_running_invocation_returns(void) {
    begin("hook destroy waits for the running invocation");
    capstan_registry *reg = new_registry();
    capstan_tool_def d = {.struct_size = sizeof d, .name = "echo", .parameters = OBJ, .callback = echo};
    CHECK_STATUS(capstan_registry_add_tool(reg, &d), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_set_event_hook(reg, blocking_hook, &blocker_destroyed, count_destroy), CAPSTAN_OK);
    pthread_t t;
    pthread_create(&t, NULL, execute_echo, reg);
    CHECK(wait_flag(&blocker_in, 60000));
    CHECK_STATUS(capstan_registry_set_event_hook(reg, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK(atomic_load(&blocker_destroyed) == 0); /* the hook is still running */
    atomic_store(&blocker_go, 1);
    CHECK(wait_flag(&blocker_destroyed, 60000)); /* destroyed as it returned */
    pthread_join(t, NULL);
    CHECK(atomic_load(&blocker_destroyed) == 1);
    capstan_registry_free(reg);
    CHECK(atomic_load(&blocker_destroyed) == 1);
}

static capstan_registry *race_reg;

static void *set_and_fire(void *arg) {
    int me = (int)(intptr_t)arg;
    int rounds = check_small() ? 40 : 200;
    for (int i = 0; i < rounds; i++) {
        switch ((i + me) % 4) {
        case 0:
            capstan_registry_set_event_hook(race_reg, on_event, hook_data_new(), hook_destroy);
            break;
        case 1:
            capstan_registry_set_notify(race_reg, on_notify, hook_data_new(), hook_destroy);
            break;
        case 2:
            capstan_registry_set_approver(race_reg, on_approve, hook_data_new(), hook_destroy);
            break;
        default:
            if (me == 0) capstan_registry_set_event_hook(race_reg, NULL, NULL, NULL);
            break;
        }
        /* Fire all three: events, an approval, a queued result (notify). */
        capstan_batch *b = NULL;
        capstan_exec_options poll = {.struct_size = sizeof poll, .flags = CAPSTAN_EXEC_DELIVER_POLL};
        if (capstan_batch_submit(race_reg, "[{\"id\":\"a\",\"name\":\"echo\"},{\"id\":\"g\",\"name\":\"guarded\"}]",
                           CAPSTAN_NTS, &poll, NULL, NULL, &b) == CAPSTAN_OK) {
            capstan_batch_wait(b, UINT32_MAX);
            capstan_batch_free(b);
        }
    }
    return NULL;
}

static void test_hooks_set_and_replaced_from_8_threads_while_firing_are_destroyed_once_after_their_last_call(void) {
    begin("hook destroy race from 8 threads");
    atomic_store(&hook_sets, 0);
    atomic_store(&hook_destroys, 0);
    atomic_store(&hook_violations, 0);
    race_reg = new_registry();
    capstan_tool_def d = {.struct_size = sizeof d, .name = "echo", .parameters = OBJ, .callback = echo};
    CHECK_STATUS(capstan_registry_add_tool(race_reg, &d), CAPSTAN_OK);
    capstan_tool_def g = {.struct_size = sizeof g, .name = "guarded", .parameters = OBJ, .callback = echo,
                          .flags = CAPSTAN_TOOL_REQUIRES_APPROVAL};
    CHECK_STATUS(capstan_registry_add_tool(race_reg, &g), CAPSTAN_OK);
    pthread_t t[8];
    for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, set_and_fire, (void *)(intptr_t)i);
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    capstan_registry_free(race_reg);
    CHECK(atomic_load(&hook_sets) > 0);
    CHECK(atomic_load(&hook_destroys) == atomic_load(&hook_sets));
    CHECK(atomic_load(&hook_violations) == 0);
}

/* ------------------------------------------------------------------------ */
/* close racing register                                                      */

static atomic_int reg_attempts, reg_destroys, reg_ok, reg_after_close_ok;
static atomic_int closing;

static void *register_until_refused(void *arg) {
    int me = (int)(intptr_t)arg;
    for (int i = 0;; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d_%d", me, i);
        capstan_tool_def d = {.struct_size = sizeof d, .name = name, .parameters = OBJ, .callback = echo,
                              .user_data = &reg_destroys, .destroy = count_destroy};
        int after = atomic_load(&closing) == 2; /* close has returned */
        atomic_fetch_add(&reg_attempts, 1);
        capstan_status st = capstan_registry_add_tool(race_reg, &d);
        if (st == CAPSTAN_OK) {
            atomic_fetch_add(&reg_ok, 1);
            if (after) atomic_fetch_add(&reg_after_close_ok, 1);
        } else if (st == CAPSTAN_ERR_SHUTTING_DOWN) {
            return NULL;
        }
    }
}

static void test_register_racing_close_is_refused_or_removed_and_close_returns_when_done(void) {
    begin("close racing register");
    uint32_t waits[2] = {UINT32_MAX, 3000};
    for (int round = 0; round < 2; round++) {
        atomic_store(&reg_attempts, 0);
        atomic_store(&reg_destroys, 0);
        atomic_store(&reg_ok, 0);
        atomic_store(&reg_after_close_ok, 0);
        atomic_store(&closing, 0);
        race_reg = new_registry();
        pthread_t t[8];
        for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, register_until_refused, (void *)(intptr_t)i);
        while (atomic_load(&reg_ok) < 50) sleep_ms(1);
        atomic_store(&closing, 1);
        CHECK_STATUS(capstan_registry_close(race_reg, waits[round]), CAPSTAN_OK);
        atomic_store(&closing, 2);
        /* Every tool registered before close returned was destroyed by it. */
        int destroyed_at_close = atomic_load(&reg_destroys);
        for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
        CHECK(destroyed_at_close >= atomic_load(&reg_ok));
        CHECK(atomic_load(&reg_after_close_ok) == 0);
        CHECK(atomic_load(&reg_destroys) == atomic_load(&reg_attempts));
        capstan_registry_free(race_reg);
        CHECK(atomic_load(&reg_destroys) == atomic_load(&reg_attempts));
    }
}

/* ------------------------------------------------------------------------ */
/* Calls from a thread-exit destructor                                        */

static pthread_key_t exit_key;
struct exit_calls {
    capstan_registry *reg, *to_close;
    capstan_status unregister_st, execute_st, close_st;
    size_t error_len;
    int result_ok;
};

static void at_thread_exit(void *arg) {
    struct exit_calls *c = arg;
    /* Error recording, after this thread's capstan locals are gone. */
    c->unregister_st = capstan_registry_remove_tool(c->reg, "missing", CAPSTAN_NTS);
    char buf[256];
    c->error_len = capstan_error_message(buf, sizeof buf);
    /* A lone call without a timeout runs its callback on this thread. */
    char *out = NULL;
    c->execute_st = capstan_registry_execute(c->reg, "{\"id\":\"x\",\"name\":\"echo\"}", CAPSTAN_NTS, NULL, &out, NULL);
    c->result_ok = out != NULL && strstr(out, "\"outcome\":\"ok\"") != NULL;
    capstan_string_free(out);
    c->close_st = capstan_registry_close(c->to_close, UINT32_MAX);
}

static void *exiting_thread(void *arg) {
    struct exit_calls *c = arg;
    /* Use capstan's thread locals first, so that they are destroyed at exit
     * (glibc runs them before pthread key destructors). */
    capstan_registry_remove_tool(c->reg, "missing", CAPSTAN_NTS);
    char *out = NULL;
    capstan_registry_execute(c->reg, "{\"id\":\"x\",\"name\":\"echo\"}", CAPSTAN_NTS, NULL, &out, NULL);
    capstan_string_free(out);
    pthread_setspecific(exit_key, c);
    return NULL;
}

static void test_capstan_called_from_a_thread_exit_destructor_does_not_abort(void) {
    begin("thread-exit destructor");
    struct exit_calls c = {0};
    c.reg = new_registry();
    c.to_close = new_registry();
    capstan_tool_def d = {.struct_size = sizeof d, .name = "echo", .parameters = OBJ, .callback = echo};
    CHECK_STATUS(capstan_registry_add_tool(c.reg, &d), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_add_tool(c.to_close, &d), CAPSTAN_OK);
    CHECK(pthread_key_create(&exit_key, at_thread_exit) == 0);
    pthread_t t;
    pthread_create(&t, NULL, exiting_thread, &c);
    pthread_join(t, NULL);
    CHECK(c.unregister_st == CAPSTAN_ERR_NOT_FOUND);
    CHECK(c.error_len > 0);
    CHECK(c.execute_st == CAPSTAN_OK);
    CHECK(c.result_ok);
    CHECK(c.close_st == CAPSTAN_OK);
    pthread_key_delete(exit_key);
    capstan_registry_free(c.to_close);
    capstan_registry_free(c.reg);
}

/* Runs the tests whose name contains argv[1] (all without an argument). */
#define RUN(test)                                                          \
    do {                                                                   \
        if (argc < 2 || strstr(#test, argv[1]) != NULL) test();            \
    } while (0)

int main(int argc, char **argv) {
    RUN(test_lent_call_text_stays_valid_until_the_host_completes_even_after_a_timeout);
    RUN(test_a_timed_out_call_never_completed_is_released_when_the_registry_is_freed);
    RUN(test_hook_destroy_runs_once_on_replace_remove_free_and_failure);
    RUN(test_a_replaced_hook_is_destroyed_only_after_its_running_invocation_returns);
    RUN(test_hooks_set_and_replaced_from_8_threads_while_firing_are_destroyed_once_after_their_last_call);
    RUN(test_register_racing_close_is_refused_or_removed_and_close_returns_when_done);
    RUN(test_capstan_called_from_a_thread_exit_destructor_does_not_abort);
    alarm(0);
    return check_report("test_lifetimes");
}
