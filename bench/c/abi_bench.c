/* size: one program printing one table; each figure is a short
 *    function sharing the set-up and the timing helpers (bench.h). */
/* abi_bench: the figures of issue #6, measured through the C ABI exactly as a
 * C host uses it (libcapstan.so, include/capstan.h), printed as one table.
 *
 *   abi_bench [--threads N] [--scaling | --batch-scaling] [--floor-ns-file PATH]
 *   abi_bench --profile-single N | --profile-batch N | --profile-batch-seq N
 *             | --profile-register N
 *
 *   --threads N       capstan_runtime_configure (threads = N) before the pool starts
 *                     (default: capstan's own default).
 *   --scaling         only the throughput figures (single call, batches),
 *                     for comparing pool sizes run by run.
 *   --batch-scaling   only the batch-size scaling table (issue #10), which
 *                     the default run prints after its main table.
 *   --fanout          only the fan-out, lone submit + wait and async round
 *                     trip rows (quick before/after comparisons).
 *   --rows            only the core's BENCH-ROW lines for `make bench-bindings`
 *                     (10,000 trivial calls, parallel beside sequential).
 *   --floor-ns-file   a file holding the floor's wall and CPU ns per call,
 *                     as `cargo bench --bench floor` writes it with
 *                     CAPSTAN_FLOOR_OUT set; gives the floor ratio.
 *   --profile-*       run one path N times and print nothing, for callgrind
 *                     or perf (see BENCHMARKS.md).
 *
 * Times are medians of rounds (CLOCK_MONOTONIC); memory comes from
 * /proc/self/status (VmRSS, VmHWM, the peak reset through clear_refs) and
 * glibc's mallinfo2 (heap in use, summed over all arenas).
 *
 * Each figure is one function filling one row. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "abi_bench"
#include "bench.h"

/* Same fixtures as benches/common/mod.rs, so the floor measures this job. */
static const char WEATHER_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"minLength\":1,"
    "\"description\":\"City name, e.g. Paris\"},\"units\":{\"type\":\"string\","
    "\"enum\":[\"celsius\",\"fahrenheit\"],\"default\":\"celsius\"},\"days\":{\"type\":"
    "\"integer\",\"minimum\":1,\"maximum\":14}},\"required\":[\"city\"],"
    "\"additionalProperties\":false}";
static const char WEATHER_CALL[] =
    "{\"id\":\"call_1\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\",\"days\":3}}";
static const char WEATHER_RESULT[] =
    "{\"city\":\"Paris\",\"temperature\":21.5,\"units\":\"celsius\",\"conditions\":\"partly cloudy\"}";

/* A realistic tool schema (about 1 KB), as realistic_schema() in Rust. */
static const char REALISTIC_SCHEMA_FMT[] =
    "{\"type\":\"object\",\"description\":\"Search the catalogue, variant %d\","
    "\"properties\":{"
    "\"query\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":500,"
    "\"description\":\"Free text to look for (tool %d)\"},"
    "\"category\":{\"type\":\"string\",\"enum\":[\"books\",\"music\",\"film\",\"games\",\"other\"],"
    "\"default\":\"other\",\"description\":\"Restrict to one category\"},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"default\":10,"
    "\"description\":\"How many results to return\"},"
    "\"sort\":{\"type\":\"string\",\"enum\":[\"relevance\",\"price\",\"date\"],\"default\":\"relevance\"},"
    "\"include_out_of_stock\":{\"type\":\"boolean\",\"default\":false},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"pattern\":\"^[a-z0-9-]+$\"},"
    "\"maxItems\":10,\"uniqueItems\":true},"
    "\"price\":{\"type\":\"object\",\"properties\":{\"min\":{\"type\":\"number\",\"minimum\":0},"
    "\"max\":{\"type\":\"number\",\"minimum\":0},"
    "\"currency\":{\"type\":\"string\",\"enum\":[\"EUR\",\"USD\",\"GBP\"]}},"
    "\"required\":[\"currency\"],\"additionalProperties\":false}},"
    "\"required\":[\"query\"],\"additionalProperties\":false}";

#define SINGLE_ROUNDS 21
#define SINGLE_PER_ROUND 9524 /* 21 x 9,524 = 200,004 calls */
#define BATCH_CALLS 10000
#define BATCH_ROUNDS 21
#define FANOUT_CALLS 64
#define FANOUT_SLEEP_MS 20
#define FANOUT_ROUNDS 11
#define REGISTER_TOOLS 10000
#define LEAK_ROUNDS 10
#define LEAK_ROUNDS_MID 30
#define LEAK_ROUNDS_LONG 100

/* ---- plumbing ------------------------------------------------------------ */

static atomic_long callback_failures;

static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* CPU time of the whole process (every thread): handing work to another
 * thread must not make it look cheaper. */
static double process_cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

static double cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* A field of /proc/self/status in kB ("VmRSS:", "VmHWM:"); -1 if absent. */
static long status_kb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0) {
            kb = strtol(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0); false if not allowed. */
static bool reset_peak_rss(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    bool ok;
    if (!f)
        return false;
    ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static size_t heap_in_use(void) {
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static size_t count(const char *haystack, const char *needle) {
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(haystack, needle); p; p = strstr(p + len, needle))
        n++;
    return n;
}

/* ---- the table ------------------------------------------------------------ */

typedef struct row {
    char figure[72];
    char measured[64];
    char goal[40];
    const char *met; /* "yes", "NO", "n/a", "-" (reported, no goal) */
    char ratio[24];
} row;

#define MAX_ROWS 24
static row rows[MAX_ROWS];
static size_t nrows;

static row *add_row(const char *figure) {
    row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->figure, sizeof r->figure, "%s", figure);
    r->met = "-";
    return r;
}

static void fill(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}
#define FILL(field, ...) fill((field), sizeof(field), __VA_ARGS__)

static void print_table(const char *title) {
    printf("\n%s\n", title);
    printf("| %-58s | %-36s | %-24s | %-4s | %-13s |\n", "figure", "measured", "goal", "met?",
           "floor ratio");
    printf("|%.60s|%.38s|%.26s|%.6s|%.15s|\n",
           "------------------------------------------------------------",
           "--------------------------------------", "--------------------------", "------",
           "---------------");
    for (size_t i = 0; i < nrows; i++)
        printf("| %-58s | %-36s | %-24s | %-4s | %-13s |\n", rows[i].figure, rows[i].measured,
               rows[i].goal, rows[i].met, rows[i].ratio);
}

/* ---- tools ------------------------------------------------------------------ */

static void weather_tool(void *user_data, capstan_call *call) {
    (void)user_data;
    if (capstan_call_return(call, CAPSTAN_CONTENT_JSON, WEATHER_RESULT, sizeof WEATHER_RESULT - 1) !=
        CAPSTAN_OK)
        atomic_fetch_add(&callback_failures, 1);
}

static void noop_tool(void *user_data, capstan_call *call) {
    (void)user_data;
    if (capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", 2) != CAPSTAN_OK)
        atomic_fetch_add(&callback_failures, 1);
}

static void sleep_tool(void *user_data, capstan_call *call) {
    struct timespec ts = {0, FANOUT_SLEEP_MS * 1000000L};
    (void)user_data;
    while (nanosleep(&ts, &ts) != 0) {
    }
    if (capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "slept", 5) != CAPSTAN_OK)
        atomic_fetch_add(&callback_failures, 1);
}

static void register_tool(capstan_registry *reg, const char *name, const char *schema,
                          capstan_tool_fn fn) {
    capstan_tool_def def;
    memset(&def, 0, sizeof def);
    def.struct_size = sizeof def;
    def.name = name;
    def.description = "bench tool";
    def.parameters = schema;
    def.callback = fn;
    MUST(name, capstan_registry_add_tool(reg, &def));
}

/* `n` calls to `tool` with empty arguments, as one JSON array (malloc'ed). */
static char *calls_json(const char *tool, size_t n, size_t *len) {
    size_t cap = n * (strlen(tool) + 64) + 16, at = 0;
    char *s = malloc(cap);
    if (!s) {
        fprintf(stderr, "abi_bench: out of memory\n");
        exit(1);
    }
    s[at++] = '[';
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(s + at, cap - at, "%s{\"id\":\"c%zu\",\"name\":\"%s\",\"arguments\":{}}",
                               i ? "," : "", i, tool);
    s[at++] = ']';
    s[at] = '\0';
    *len = at;
    return s;
}

/* Runs `calls` once; checks every result is ok when `expect_ok` > 0. */
static double execute_once(capstan_registry *reg, const char *calls, size_t len,
                           const capstan_exec_options *opts, size_t expect_ok) {
    char *out = NULL;
    size_t out_len = 0;
    double t0 = now_ns();
    MUST("capstan_registry_execute", capstan_registry_execute(reg, calls, len, opts, &out, &out_len));
    double t1 = now_ns();
    if (expect_ok) {
        size_t ok = count(out, "\"outcome\":\"ok\"");
        if (ok != expect_ok) {
            fprintf(stderr, "abi_bench: expected %zu ok results, got %zu: %.300s\n", expect_ok, ok,
                    out);
            exit(1);
        }
    }
    capstan_string_free(out);
    return t1 - t0;
}

/* ---- figures ---------------------------------------------------------------- */

typedef struct bench {
    capstan_registry *reg;
    double floor_ns, floor_cpu_ns; /* wall and thread CPU; 0 when unknown */
    char pool[32];
} bench;

/* sync capstan_registry_execute of one get_weather call to a C callback. The call runs
 * inline on this thread, so its thread CPU time is also taken: on a shared
 * machine it does not count time spent descheduled, and is what the floor
 * ratio uses (the floor is timed the same way). */
static void fig_single_call(bench *b) {
    double wall[SINGLE_ROUNDS], cpu[SINGLE_ROUNDS];
    size_t len = sizeof WEATHER_CALL - 1;
    execute_once(b->reg, WEATHER_CALL, len, NULL, 1); /* checks the result */
    for (int i = 0; i < SINGLE_PER_ROUND; i++)
        execute_once(b->reg, WEATHER_CALL, len, NULL, 0);
    for (int r = 0; r < SINGLE_ROUNDS; r++) {
        double t0 = now_ns(), c0 = cpu_ns();
        for (int i = 0; i < SINGLE_PER_ROUND; i++) {
            char *out = NULL;
            MUST("capstan_registry_execute", capstan_registry_execute(b->reg, WEATHER_CALL, len, NULL, &out, NULL));
            capstan_string_free(out);
        }
        cpu[r] = (cpu_ns() - c0) / SINGLE_PER_ROUND;
        wall[r] = (now_ns() - t0) / SINGLE_PER_ROUND;
    }
    double ns = median(wall, SINGLE_ROUNDS), cpu_ns_call = median(cpu, SINGLE_ROUNDS);
    row *r = add_row("sync execute, 1 get_weather call, C callback");
    FILL(r->measured, "%.0f ns/call (cpu %.0f)", ns, cpu_ns_call);
    FILL(r->goal, "<= 1000 ns, <= 1.5x floor");
    bool ratio_ok = true;
    if (b->floor_cpu_ns > 0) {
        FILL(r->ratio, "%.2fx", cpu_ns_call / b->floor_cpu_ns);
        ratio_ok = cpu_ns_call <= 1.5 * b->floor_cpu_ns;
    } else {
        FILL(r->ratio, "floor unknown");
    }
    r->met = (ns <= 1000.0 && ratio_ok) ? "yes" : "NO";
    if (b->floor_cpu_ns > 0) {
        row *f = add_row("  floor: parse + validate + render (Rust loop)");
        FILL(f->measured, "%.0f ns/call (cpu %.0f)", b->floor_ns, b->floor_cpu_ns);
        FILL(f->goal, "reference");
        FILL(f->ratio, "1.00x");
    }
}

static void batch_row(bench *b, const char *figure, const capstan_exec_options *opts, bool goal) {
    size_t len;
    char *calls = calls_json("noop", BATCH_CALLS, &len);
    double secs[BATCH_ROUNDS];
    execute_once(b->reg, calls, len, opts, BATCH_CALLS); /* warms the pool, checks results */
    for (int r = 0; r < BATCH_ROUNDS; r++)
        secs[r] = execute_once(b->reg, calls, len, opts, 0) / 1e9;
    double rate = BATCH_CALLS / median(secs, BATCH_ROUNDS);
    free(calls);
    row *r = add_row(figure);
    FILL(r->measured, "%.0f calls/s", rate);
    if (goal) {
        FILL(r->goal, ">= 2,000,000 calls/s");
        r->met = rate >= 2e6 ? "yes" : "NO";
    } else {
        FILL(r->goal, "(shape)");
    }
}

/* batch of 10,000 trivial calls through capstan_registry_execute. */
static void fig_batch_execute(bench *b, bool extra) {
    batch_row(b, "batch 10k trivial, capstan_registry_execute (limit 8)", NULL, true);
    if (!extra)
        return;
    capstan_exec_options two = {.struct_size = sizeof two, .limit = 2};
    batch_row(b, "  same, limit 2", &two, false);
    capstan_exec_options seq = {.struct_size = sizeof seq, .flags = CAPSTAN_EXEC_SEQUENTIAL};
    batch_row(b, "  same, CAPSTAN_EXEC_SEQUENTIAL (caller only)", &seq, false);
}

/* `--rows`: the core's rows of `make bench-bindings` (issue #46, item 6): a
 * batch of 10,000 trivial calls run in parallel (limit 8, the default
 * pool) beside the same batch run sequentially, rounds alternating, medians;
 * printed as BENCH-ROW lines (tools/bench_bindings.py). */
static void bench_rows(bench *b) {
    enum { ROUNDS = 15 };
    size_t len;
    char *calls = calls_json("noop", BATCH_CALLS, &len);
    capstan_exec_options seq = {.struct_size = sizeof seq, .flags = CAPSTAN_EXEC_SEQUENTIAL};
    double par_s[ROUNDS], seq_s[ROUNDS];
    execute_once(b->reg, calls, len, NULL, BATCH_CALLS); /* warms the pool, checks results */
    execute_once(b->reg, calls, len, &seq, BATCH_CALLS);
    for (int r = 0; r < ROUNDS; r++) {
        par_s[r] = execute_once(b->reg, calls, len, NULL, 0) / 1e9;
        seq_s[r] = execute_once(b->reg, calls, len, &seq, 0) / 1e9;
    }
    free(calls);
    double par = BATCH_CALLS / median(par_s, ROUNDS), sq = BATCH_CALLS / median(seq_s, ROUNDS);
    printf("BENCH-ROW {\"binding\":\"core\",\"case\":\"10000 calls\",\"tool\":\"trivial\","
           "\"metric\":\"calls/s (%ld cores)\",\"capstan\":%.0f,"
           "\"peer\":\"the same batch, CAPSTAN_EXEC_SEQUENTIAL (one thread)\",\"peer_value\":%.0f,"
           "\"goal\":\">= 1.6x peer\",\"met\":%s}\n",
           sysconf(_SC_NPROCESSORS_ONLN), par, sq, par >= 1.6 * sq ? "true" : "false");
}

/* batch of 10,000 trivial calls through capstan_batch_submit, results to a callback. */
static atomic_size_t submit_ok;
static atomic_int submit_done;
static void count_result(void *user_data, const capstan_result *r) {
    (void)user_data;
    if (r == NULL)
        atomic_store(&submit_done, 1);
    else if (r->outcome == CAPSTAN_OUTCOME_OK)
        atomic_fetch_add(&submit_ok, 1);
}

static double submit_once(capstan_registry *reg, const char *calls, size_t len, size_t expect_ok) {
    capstan_batch *batch = NULL;
    atomic_store(&submit_ok, 0);
    atomic_store(&submit_done, 0);
    double t0 = now_ns();
    MUST("capstan_batch_submit", capstan_batch_submit(reg, calls, len, NULL, count_result, NULL, &batch));
    MUST("capstan_batch_wait", capstan_batch_wait(batch, UINT32_MAX));
    double t1 = now_ns();
    capstan_batch_free(batch);
    if (expect_ok && (atomic_load(&submit_ok) != expect_ok || !atomic_load(&submit_done))) {
        fprintf(stderr, "abi_bench: submit gave %zu ok results of %zu\n", atomic_load(&submit_ok), expect_ok);
        exit(1);
    }
    return t1 - t0;
}

static void fig_batch_submit(bench *b) {
    size_t len;
    char *calls = calls_json("noop", BATCH_CALLS, &len);
    double secs[BATCH_ROUNDS];
    submit_once(b->reg, calls, len, BATCH_CALLS);
    for (int r = 0; r < BATCH_ROUNDS; r++)
        secs[r] = submit_once(b->reg, calls, len, BATCH_CALLS) / 1e9;
    double rate = BATCH_CALLS / median(secs, BATCH_ROUNDS);
    free(calls);
    row *r = add_row("batch 10k trivial, capstan_batch_submit (limit 8)");
    FILL(r->measured, "%.0f calls/s", rate);
    FILL(r->goal, ">= 2,000,000 calls/s");
    r->met = rate >= 2e6 ? "yes" : "NO";
}

/* one async round trip: capstan_batch_submit of 1 call until its result callback runs. */
static _Atomic double round_trip_end;
static void note_result(void *user_data, const capstan_result *r) {
    (void)user_data;
    if (r != NULL) atomic_store(&round_trip_end, now_ns());
}

#define ROUND_TRIPS 2001
static void fig_async_round_trip(bench *b) {
    static double lat[ROUND_TRIPS];
    const char *call = "{\"id\":\"r\",\"name\":\"noop\",\"arguments\":{}}";
    for (int i = 0; i < ROUND_TRIPS; i++) {
        capstan_batch *batch = NULL;
        atomic_store(&round_trip_end, 0.0);
        double t0 = now_ns();
        MUST("capstan_batch_submit", capstan_batch_submit(b->reg, call, CAPSTAN_NTS, NULL, note_result, NULL, &batch));
        double end;
        while ((end = atomic_load(&round_trip_end)) == 0.0) sched_yield();
        lat[i] = end - t0;
        MUST("capstan_batch_wait", capstan_batch_wait(batch, UINT32_MAX));
        capstan_batch_free(batch);
    }
    double p50 = median(lat, ROUND_TRIPS) / 1e3;
    row *r = add_row("async round trip (submit 1, result callback)");
    FILL(r->measured, "%.1f us p50", p50);
    FILL(r->goal, "<= 10 us p50");
    r->met = p50 <= 10.0 ? "yes" : "NO";
}

/* a lone submit + wait round trip: capstan_batch_submit of 1 call, then
 * capstan_batch_wait(UINT32_MAX) and capstan_batch_free. Median of rounds. */
#define LONE_ROUNDS 21
#define LONE_PER_ROUND 2000
static void ignore_result(void *user_data, const capstan_result *r) {
    (void)user_data;
    (void)r;
}

static void fig_lone_submit_wait(bench *b) {
    capstan_exec_options on_wait = {.struct_size = sizeof on_wait, .flags = CAPSTAN_EXEC_START_ON_WAIT};
    const char *call = "{\"id\":\"r\",\"name\":\"noop\",\"arguments\":{}}";
    double wall[LONE_ROUNDS], cpu[LONE_ROUNDS];
    for (int r = -1; r < LONE_ROUNDS; r++) { /* round -1 warms up */
        double t0 = now_ns(), c0 = process_cpu_ns();
        for (int i = 0; i < LONE_PER_ROUND; i++) {
            capstan_batch *batch = NULL;
            MUST("capstan_batch_submit",
                 capstan_batch_submit(b->reg, call, CAPSTAN_NTS, &on_wait, ignore_result, NULL, &batch));
            MUST("capstan_batch_wait", capstan_batch_wait(batch, UINT32_MAX));
            capstan_batch_free(batch);
        }
        if (r >= 0) {
            wall[r] = (now_ns() - t0) / LONE_PER_ROUND;
            cpu[r] = (process_cpu_ns() - c0) / LONE_PER_ROUND;
        }
    }
    double us = median(wall, LONE_ROUNDS) / 1e3, cpu_us = median(cpu, LONE_ROUNDS) / 1e3;
    row *r = add_row("lone submit START_ON_WAIT + wait (1 trivial call)");
    FILL(r->measured, "%.2f us (process cpu %.2f us)", us, cpu_us);
    FILL(r->goal, "<= 3 us");
    r->met = us <= 3.0 ? "yes" : "NO";
}

/* ---- batch-size scaling (issue #10) ---------------------------------------
 * ns per call of a trivial tool at batch sizes 1 to 10,000, limit 8, through
 * capstan_registry_execute, capstan_batch_submit + capstan_batch_wait, and
 * capstan_registry_execute with CAPSTAN_EXEC_SEQUENTIAL (the baseline: one call after
 * the other on the calling thread). Wall time and the CPU time of the whole
 * process, medians of rounds of about SCALE_CALLS calls each. The goal: no
 * size costs more than 1.5x the sequential cost of the same size, wall and
 * CPU (submit from size 2 up; a lone submit has its own row above). */
#define SCALE_ROUNDS 11
#define SCALE_CALLS 20000
static const size_t SCALE_SIZES[] = {1, 2, 4, 8, 16, 64, 1000, 10000};
#define NSIZES (sizeof SCALE_SIZES / sizeof SCALE_SIZES[0])

enum scale_mode { SCALE_EXECUTE, SCALE_SUBMIT, SCALE_SUBMIT_POOL, SCALE_SEQUENTIAL, SCALE_MODES };

/* Median wall and process-CPU ns per call of `mode` at batch size `n`. */
static void scale_measure(bench *b, enum scale_mode mode, size_t n, double *wall_ns,
                          double *cpu_ns_out) {
    size_t len;
    char *calls = calls_json("noop", n, &len);
    capstan_exec_options seq = {.struct_size = sizeof seq, .flags = CAPSTAN_EXEC_SEQUENTIAL};
    /* submit + wait: the host says it waits (caller-runs), or not (the
     * calls start on pool threads at submit). */
    capstan_exec_options on_wait = {.struct_size = sizeof on_wait, .flags = CAPSTAN_EXEC_START_ON_WAIT};
    const capstan_exec_options *submit_opts = mode == SCALE_SUBMIT ? &on_wait : NULL;
    bool submitting = mode == SCALE_SUBMIT || mode == SCALE_SUBMIT_POOL;
    size_t reps = n >= SCALE_CALLS ? 1 : SCALE_CALLS / n;
    double wall[SCALE_ROUNDS], cpu[SCALE_ROUNDS];
    if (submitting)
        submit_once(b->reg, calls, len, n); /* checks the results */
    else
        execute_once(b->reg, calls, len, mode == SCALE_SEQUENTIAL ? &seq : NULL, n);
    for (int r = 0; r < SCALE_ROUNDS; r++) {
        double t0 = now_ns(), c0 = process_cpu_ns();
        for (size_t i = 0; i < reps; i++) {
            if (submitting) {
                capstan_batch *batch = NULL;
                MUST("capstan_batch_submit",
                     capstan_batch_submit(b->reg, calls, len, submit_opts, ignore_result, NULL, &batch));
                MUST("capstan_batch_wait", capstan_batch_wait(batch, UINT32_MAX));
                capstan_batch_free(batch);
            } else {
                char *out = NULL;
                MUST("capstan_registry_execute",
                     capstan_registry_execute(b->reg, calls, len, mode == SCALE_SEQUENTIAL ? &seq : NULL,
                                     &out, NULL));
                capstan_string_free(out);
            }
        }
        wall[r] = (now_ns() - t0) / (double)(reps * n);
        cpu[r] = (process_cpu_ns() - c0) / (double)(reps * n);
    }
    free(calls);
    *wall_ns = median(wall, SCALE_ROUNDS);
    *cpu_ns_out = median(cpu, SCALE_ROUNDS);
}

static void fig_scaling(bench *b) {
    static const char *names[] = {"capstan_registry_execute", "submit START_ON_WAIT + wait",
                                  "submit (pool at once) + wait", "sequential (CAPSTAN_EXEC_SEQUENTIAL)"};
    double wall[SCALE_MODES][NSIZES], cpu[SCALE_MODES][NSIZES];
    /* sizes interleaved, so that a change of load spreads over all of them */
    for (size_t s = 0; s < NSIZES; s++)
        for (int m = 0; m < SCALE_MODES; m++)
            scale_measure(b, (enum scale_mode)m, SCALE_SIZES[s], &wall[m][s], &cpu[m][s]);
    printf("\nbatch-size scaling, trivial tool, limit 8: ns per call, wall / process cpu"
           " (ratio to sequential of the same size, wall / cpu)\n");
    printf("| %-36s |", "batch size");
    for (size_t s = 0; s < NSIZES; s++)
        printf(" %19zu |", SCALE_SIZES[s]);
    printf("\n|%.38s|", "--------------------------------------");
    for (size_t s = 0; s < NSIZES; s++)
        printf("%.21s|", "---------------------");
    printf("\n");
    int worst_ok = 1;
    for (int m = 0; m < SCALE_MODES; m++) {
        printf("| %-36s |", names[m]);
        for (size_t s = 0; s < NSIZES; s++) {
            char cell[32];
            snprintf(cell, sizeof cell, "%.0f / %.0f", wall[m][s], cpu[m][s]);
            printf(" %19s |", cell);
        }
        printf("\n");
        if (m == SCALE_SEQUENTIAL)
            continue;
        printf("| %-36s |", "  ratio to sequential");
        for (size_t s = 0; s < NSIZES; s++) {
            double rw = wall[m][s] / wall[SCALE_SEQUENTIAL][s];
            double rc = cpu[m][s] / cpu[SCALE_SEQUENTIAL][s];
            char cell[32];
            /* a submit the host does not say it waits for pays a hand-off
             * to the pool: shown, no goal */
            bool goal = m == SCALE_EXECUTE || m == SCALE_SUBMIT;
            bool ok = rw <= 1.5 && rc <= 1.5;
            if (goal && !ok)
                worst_ok = 0;
            snprintf(cell, sizeof cell, "%.2fx / %.2fx%s", rw, rc, goal ? (ok ? "" : " NO") : " -");
            printf(" %19s |", cell);
        }
        printf("\n");
    }
    printf("flat per-call cost (every ratio <= 1.5x, wall and cpu): %s\n", worst_ok ? "yes" : "NO");
}

/* fan-out of 64 calls sleeping 20 ms each, at a given limit. */
static void fig_fanout(bench *b, uint32_t limit, double goal_ms) {
    size_t len;
    char *calls = calls_json("sleep20", FANOUT_CALLS, &len);
    capstan_exec_options opts = {.struct_size = sizeof opts, .limit = limit};
    double ms[FANOUT_ROUNDS];
    execute_once(b->reg, calls, len, &opts, FANOUT_CALLS); /* starts the threads */
    for (int r = 0; r < FANOUT_ROUNDS; r++)
        ms[r] = execute_once(b->reg, calls, len, &opts, 0) / 1e6;
    double m = median(ms, FANOUT_ROUNDS);
    free(calls);
    char figure[72];
    snprintf(figure, sizeof figure, "fan-out 64 calls x 20 ms sleep, limit %u", limit);
    row *r = add_row(figure);
    FILL(r->measured, "%.1f ms", m);
    FILL(r->goal, "<= %.0f ms (ideal %.0f)", goal_ms, FANOUT_CALLS / (double)limit * FANOUT_SLEEP_MS);
    r->met = m <= goal_ms ? "yes" : "NO";
}

/* registering 10,000 tools with realistic schemas: time and memory. */
static void fig_register(void) {
    static char schema[2048];
    char name[32];
    capstan_registry *reg = NULL;
    bool peak_ok = reset_peak_rss();
    long rss0 = status_kb("VmRSS:");
    size_t heap0 = heap_in_use();
    double t0 = now_ns();
    MUST("capstan_registry_new", capstan_registry_new(NULL, &reg));
    for (int i = 0; i < REGISTER_TOOLS; i++) {
        snprintf(name, sizeof name, "search_%05d", i);
        snprintf(schema, sizeof schema, REALISTIC_SCHEMA_FMT, i, i);
        register_tool(reg, name, schema, noop_tool);
    }
    double ms = (now_ns() - t0) / 1e6;
    long rss1 = status_kb("VmRSS:");
    long hwm = status_kb("VmHWM:");
    size_t heap1 = heap_in_use();
    double t1 = now_ns();
    capstan_registry_free(reg);
    double free_ms = (now_ns() - t1) / 1e6;

    row *r = add_row("register 10,000 tools, realistic schemas (~1 KB)");
    FILL(r->measured, "%.0f ms (free: %.0f ms)", ms, free_ms);
    FILL(r->goal, "<= 1000 ms");
    r->met = ms <= 1000.0 ? "yes" : "NO";

    double grow_mb = (double)(rss1 - rss0) / 1024.0;
    r = add_row("  RSS growth for those 10,000 tools");
    FILL(r->measured, "%.1f MB (heap %.1f MB)", grow_mb, (double)(heap1 - heap0) / 1048576.0);
    FILL(r->goal, "<= 50 MB");
    r->met = grow_mb <= 50.0 ? "yes" : "NO";
    r = add_row("  process RSS after registering (peak)");
    if (peak_ok)
        FILL(r->measured, "%.1f MB (peak %.1f MB)", rss1 / 1024.0, hwm / 1024.0);
    else
        FILL(r->measured, "%.1f MB (peak not resettable)", rss1 / 1024.0);
    FILL(r->goal, "(context)");
}

/* peak memory for a batch of 10,000 calls, and whether rounds leak. Heap in
 * use (all malloc arenas) is the leak measure. RSS is shown at 1, 10, 30 and
 * 100 rounds: glibc keeps freed memory in its arenas (one per pool thread)
 * and raises its trim and mmap thresholds as it sees big frees, so RSS climbs
 * over the first tens of rounds and then stays flat while heap in use does
 * not move (BENCHMARKS.md). */
static void fig_batch_memory(bench *b) {
    size_t len;
    char *calls = calls_json("noop", BATCH_CALLS, &len);
    bool peak_ok = reset_peak_rss();
    long base = status_kb("VmRSS:");
    long rss[LEAK_ROUNDS_LONG + 1] = {0};
    double heap[LEAK_ROUNDS_LONG + 1] = {0};
    long hwm = 0;
    for (int r = 1; r <= LEAK_ROUNDS_LONG; r++) {
        execute_once(b->reg, calls, len, NULL, BATCH_CALLS);
        if (r == 1)
            hwm = status_kb("VmHWM:");
        rss[r] = status_kb("VmRSS:");
        heap[r] = (double)heap_in_use();
    }
    free(calls);

    row *r = add_row("peak memory, one batch of 10,000 calls");
    if (peak_ok)
        FILL(r->measured, "+%.1f MB over %.1f MB RSS", (hwm - base) / 1024.0, base / 1024.0);
    else
        FILL(r->measured, "peak not resettable");
    FILL(r->goal, "report");
    double calls_between = (double)(LEAK_ROUNDS_LONG - LEAK_ROUNDS) * BATCH_CALLS;
    double leak = (heap[LEAK_ROUNDS_LONG] - heap[LEAK_ROUNDS]) / calls_between;
    r = add_row("  heap in use, round 100 - round 10");
    FILL(r->measured, "%+.0f B (%+.2f B/call)", heap[LEAK_ROUNDS_LONG] - heap[LEAK_ROUNDS], leak);
    FILL(r->goal, "no leak (< 1 B/call)");
    r->met = leak < 1.0 ? "yes" : "NO";
    r = add_row("  heap in use, round 10 - round 1");
    FILL(r->measured, "%+.0f B", heap[LEAK_ROUNDS] - heap[1]);
    FILL(r->goal, "(context)");
    r = add_row("  RSS after rounds 1 / 10 / 30 / 100");
    FILL(r->measured, "%.1f / %.1f / %.1f / %.1f MB", rss[1] / 1024.0, rss[LEAK_ROUNDS] / 1024.0,
         rss[LEAK_ROUNDS_MID] / 1024.0, rss[LEAK_ROUNDS_LONG] / 1024.0);
    FILL(r->goal, "(allocator retention)");
}

/* ---- main ------------------------------------------------------------------ */

/* The floor file holds "WALL_NS CPU_NS" (see benches/floor.rs). */
static void read_floor(bench *b, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "abi_bench: cannot read floor file %s\n", path);
        return;
    }
    if (fscanf(f, "%lf %lf", &b->floor_ns, &b->floor_cpu_ns) != 2)
        b->floor_ns = b->floor_cpu_ns = 0;
    fclose(f);
}

/* Profiling modes: one path, `n` times, nothing else (for callgrind/perf). */
static void profile_single(bench *b, long n) {
    for (long i = 0; i < n; i++) {
        char *out = NULL;
        MUST("capstan_registry_execute",
             capstan_registry_execute(b->reg, WEATHER_CALL, sizeof WEATHER_CALL - 1, NULL, &out, NULL));
        capstan_string_free(out);
    }
}

static void profile_batch(bench *b, long n, bool sequential) {
    size_t len;
    char *calls = calls_json("noop", BATCH_CALLS, &len);
    capstan_exec_options opts = {.struct_size = sizeof opts, .flags = sequential ? CAPSTAN_EXEC_SEQUENTIAL : 0};
    for (long i = 0; i < n; i++)
        execute_once(b->reg, calls, len, &opts, 0);
    free(calls);
}

static void profile_register(long n) {
    static char schema[2048];
    char name[32];
    capstan_registry *reg = NULL;
    MUST("capstan_registry_new", capstan_registry_new(NULL, &reg));
    for (long i = 0; i < n; i++) {
        snprintf(name, sizeof name, "search_%05ld", i);
        snprintf(schema, sizeof schema, REALISTIC_SCHEMA_FMT, (int)i, (int)i);
        register_tool(reg, name, schema, noop_tool);
    }
    capstan_registry_free(reg);
}

static void load_average(char *buf, size_t cap) {
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)cap, f))
            buf[0] = '\0';
        fclose(f);
    }
    /* keep the 1, 5 and 15 minute averages */
    for (size_t i = 0, spaces = 0; buf[i]; i++)
        if (buf[i] == ' ' && ++spaces == 3) {
            buf[i] = '\0';
            break;
        }
}

int main(int argc, char **argv) {
    bench b;
    unsigned threads = 0;
    bool scaling = false, batch_scaling = false, fanout_only = false, rows = false;
    const char *profile = NULL;
    long profile_n = 0;
    char load_before[64], load_after[64];
    memset(&b, 0, sizeof b);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--scaling") == 0)
            scaling = true;
        else if (strcmp(argv[i], "--batch-scaling") == 0)
            batch_scaling = true;
        else if (strcmp(argv[i], "--fanout") == 0)
            fanout_only = true;
        else if (strcmp(argv[i], "--rows") == 0)
            rows = true;
        else if (strcmp(argv[i], "--floor-ns-file") == 0 && i + 1 < argc)
            read_floor(&b, argv[++i]);
        else if (strcmp(argv[i], "--profile-single") == 0 && i + 1 < argc)
            profile_n = strtol(argv[++i], NULL, 10), profile = "single";
        else if (strcmp(argv[i], "--profile-batch") == 0 && i + 1 < argc)
            profile_n = strtol(argv[++i], NULL, 10), profile = "batch";
        else if (strcmp(argv[i], "--profile-batch-seq") == 0 && i + 1 < argc)
            profile_n = strtol(argv[++i], NULL, 10), profile = "batch-seq";
        else if (strcmp(argv[i], "--profile-register") == 0 && i + 1 < argc)
            profile_n = strtol(argv[++i], NULL, 10), profile = "register";
        else {
            fprintf(stderr,
                    "usage: %s [--threads N] [--scaling | --batch-scaling | --fanout | --rows] [--floor-ns-file PATH]\n"
                    "       %s --profile-single N | --profile-batch N | --profile-batch-seq N |"
                    " --profile-register N\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (threads > 0) {
        capstan_runtime_options ro = CAPSTAN_RUNTIME_OPTIONS_INIT;
        ro.threads = threads;
        MUST("capstan_runtime_configure", capstan_runtime_configure(&ro));
        snprintf(b.pool, sizeof b.pool, "%u pool threads", threads);
    } else {
        snprintf(b.pool, sizeof b.pool, "default pool");
    }

    load_average(load_before, sizeof load_before);
    MUST("capstan_registry_new", capstan_registry_new(NULL, &b.reg));
    register_tool(b.reg, "get_weather", WEATHER_SCHEMA, weather_tool);
    register_tool(b.reg, "noop", "{\"type\":\"object\"}", noop_tool);
    register_tool(b.reg, "sleep20", "{\"type\":\"object\"}", sleep_tool);
    if (profile) {
        if (strcmp(profile, "single") == 0)
            profile_single(&b, profile_n);
        else if (strncmp(profile, "batch", 5) == 0)
            profile_batch(&b, profile_n, strcmp(profile, "batch-seq") == 0);
        else
            profile_register(profile_n);
        capstan_registry_free(b.reg);
        return atomic_load(&callback_failures) ? 1 : 0;
    }

    if (rows) {
        bench_rows(&b);
        capstan_registry_free(b.reg);
        return atomic_load(&callback_failures) ? 1 : 0;
    }
    if (fanout_only) {
        fig_fanout(&b, 8, 163.0);
        fig_fanout(&b, 64, 22.0);
        fig_lone_submit_wait(&b);
        fig_async_round_trip(&b);
        print_table("fan-out, lone submit + wait, async round trip");
        capstan_registry_free(b.reg);
        return 0;
    }
    if (!batch_scaling)
        fig_single_call(&b);
    if (!batch_scaling)
        fig_batch_execute(&b, true);
    if (!scaling && !batch_scaling) {
        fig_batch_submit(&b);
        fig_async_round_trip(&b);
        fig_lone_submit_wait(&b);
        fig_fanout(&b, 8, 163.0);
        fig_fanout(&b, 64, 22.0);
        fig_batch_memory(&b);
        fig_register();
    }
    capstan_registry_free(b.reg);

    load_average(load_after, sizeof load_after);
    char title[256];
    snprintf(title, sizeof title, "capstan %s ABI bench, %s%s; load average before: %s, after: %s",
             capstan_version_string(), b.pool, scaling ? " (throughput only)" : "", load_before, load_after);
    if (!batch_scaling)
        print_table(title);
    if (!scaling) {
        /* its own registry, so the rows above leave no state behind */
        MUST("capstan_registry_new", capstan_registry_new(NULL, &b.reg));
        register_tool(b.reg, "noop", "{\"type\":\"object\"}", noop_tool);
        load_average(load_before, sizeof load_before);
        fig_scaling(&b);
        load_average(load_after, sizeof load_after);
        printf("(load average before: %s, after: %s)\n", load_before, load_after);
        capstan_registry_free(b.reg);
    }
    long failures = atomic_load(&callback_failures);
    if (failures) {
        fprintf(stderr, "abi_bench: %ld tool callbacks failed to complete\n", failures);
        return 1;
    }
    return 0;
}
