/* capstan demo: three tools, one batch of model-style calls run in parallel.
 *
 *   get_weather  an enum and a default, returns JSON
 *   slow_search  takes 300 ms (and one call of it gets a 100 ms timeout)
 *   flaky_db     always fails
 *
 * Results are printed as each call finishes, then in call order. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capstan.h"

static const char *OUTCOMES[] = {"ok", "tool_error", "invalid_arguments", "unknown_tool",
                                 "timeout", "cancelled", "denied"};

static void get_weather(void *user_data, capstan_call *call) {
    (void)user_data;
    size_t len = 0;
    const char *args = capstan_call_arguments(call, &len); /* defaults are filled in */
    char out[512];
    snprintf(out, sizeof out, "{\"forecast\": \"sunny\", \"temperature\": 21, \"request\": %.*s}",
             (int)len, args);
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, out, CAPSTAN_NTS);
}

static void slow_search(void *user_data, capstan_call *call) {
    (void)user_data;
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    if (capstan_call_cancelled(call)) return; /* timed out: nobody is listening */
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "3 documents match", CAPSTAN_NTS);
}

static void flaky_db(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_fail(call, "database is read-only right now; try again later", CAPSTAN_NTS);
}

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_result(void *user_data, const capstan_result *r) {
    (void)user_data;
    pthread_mutex_lock(&print_lock);
    if (r == NULL) {
        printf("-- batch done --\n");
    } else {
        printf("finished #%zu %-12.*s %-18s %7.1f ms  %.*s\n", r->index, (int)r->name_len, r->name,
               OUTCOMES[r->outcome], r->duration_us / 1000.0, (int)r->content_len, r->content);
    }
    pthread_mutex_unlock(&print_lock);
}

static int fail(const char *what, capstan_status st) {
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    fprintf(stderr, "%s failed: %s: %s\n", what, capstan_status_name(st), msg);
    return 1;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void) {
    capstan_registry *reg = NULL;
    capstan_status st = capstan_registry_new(NULL, &reg);
    if (st != CAPSTAN_OK) return fail("capstan_registry_new", st);

    capstan_tool_def weather = {
        .struct_size = sizeof(capstan_tool_def),
        .name = "get_weather",
        .description = "Current weather for a city.",
        .parameters = "{\"type\":\"object\",\"properties\":{"
                      "\"city\":{\"type\":\"string\"},"
                      "\"units\":{\"enum\":[\"celsius\",\"fahrenheit\"],\"default\":\"celsius\"}},"
                      "\"required\":[\"city\"],\"additionalProperties\":false}",
        .callback = get_weather,
    };
    capstan_tool_def search = {
        .struct_size = sizeof(capstan_tool_def),
        .name = "slow_search",
        .description = "Search the documents (slow).",
        .parameters = "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}},"
                      "\"required\":[\"query\"]}",
        .callback = slow_search,
        .timeout_ms = 2000,
    };
    capstan_tool_def db = {
        .struct_size = sizeof(capstan_tool_def),
        .name = "flaky_db",
        .description = "Write a record.",
        .parameters = "{\"type\":\"object\"}",
        .callback = flaky_db,
    };
    capstan_tool_def *defs[] = {&weather, &search, &db};
    for (size_t i = 0; i < 3; i++) {
        st = capstan_registry_add_tool(reg, defs[i]);
        if (st != CAPSTAN_OK) return fail("capstan_registry_add_tool", st);
    }

    /* What a model asked for: arguments as objects or as JSON strings. */
    const char *calls =
        "["
        "{\"id\":\"call_1\",\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Zürich\\\"}\"},"
        "{\"id\":\"call_2\",\"name\":\"slow_search\",\"arguments\":{\"query\":\"capstan\"}},"
        "{\"id\":\"call_3\",\"name\":\"slow_search\",\"arguments\":{\"query\":\"tokio\"}},"
        "{\"id\":\"call_4\",\"name\":\"flaky_db\",\"arguments\":{}},"
        "{\"id\":\"call_5\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\",\"units\":\"kelvin\"}},"
        "{\"id\":\"call_6\",\"name\":\"get_wether\",\"arguments\":{\"city\":\"Rome\"}}"
        "]";

    printf("== 6 calls in parallel, printed as they finish\n");
    double t0 = now_ms();
    capstan_batch *batch = NULL;
    st = capstan_batch_submit(reg, calls, CAPSTAN_NTS, NULL, on_result, NULL, &batch);
    if (st != CAPSTAN_OK) return fail("capstan_batch_submit", st);
    capstan_batch_wait(batch, UINT32_MAX);
    capstan_batch_free(batch);
    printf("wall time %.0f ms (two 300 ms searches ran side by side)\n\n", now_ms() - t0);

    printf("== the same calls with a 100 ms timeout, results in call order (JSON)\n");
    capstan_exec_options opts = {.struct_size = sizeof opts, .timeout_ms = 100};
    char *results = NULL;
    size_t results_len = 0;
    st = capstan_registry_execute(reg, calls, CAPSTAN_NTS, &opts, &results, &results_len);
    if (st != CAPSTAN_OK) return fail("capstan_registry_execute", st);
    /* One result per line for reading. */
    for (char *p = results; *p; p++) {
        putchar(*p);
        if (*p == '}' && p[1] == ',') { putchar(','); putchar('\n'); p++; }
    }
    printf("\n");
    capstan_string_free(results);

    capstan_registry_free(reg);
    return 0;
}
