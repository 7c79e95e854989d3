/* Host batches against execute (issue 46): a trivial tool called once, 100
 * and 10,000 times per batch, through
 *   - capstan_registry_execute with a native C callback (the tool returns
 *     "ok" with capstan_call_return), and
 *   - capstan_host_batch_begin / the host runs the calls itself /
 *     capstan_host_batch_finish / capstan_host_batch_free, the tool flagged
 *     CAPSTAN_TOOL_HOST_RUN: the host reads each call's index out of the
 *     one calls buffer and writes one answers array, as a binding would.
 * ns per call, wall and process CPU (every thread), medians of 11 rounds of
 * about 20,000 calls, the paths interleaved round by round. The host-batch
 * row also splits its CPU into begin / host / finish+free.
 * Run by `make bench` (and `make bench-host`), never by `make test`.
 * `host_bench --profile-host N [SIZE]` / `--profile-execute N [SIZE]` run N
 * batches of SIZE calls (default 1) of one path and print nothing (for
 * callgrind or perf). */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "host_bench"
#include "bench.h"

#define ROUNDS 11
#define CALLS_PER_ROUND 20000

static void trivial(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", 2);
}

static void add(capstan_registry *reg, const char *name, uint32_t flags) {
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = name;
    def.description = "returns ok";
    def.parameters = "{\"type\":\"object\"}";
    def.callback = trivial;
    def.flags = flags;
    MUST("add tool", capstan_registry_add_tool(reg, &def));
}

static char *calls_json(const char *tool, size_t n) {
    size_t cap = n * 80 + 16, len = 0;
    char *buf = malloc(cap);
    buf[len++] = '[';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s{\"id\":\"c%zu\",\"name\":\"%s\",\"arguments\":{}}",
                                i ? "," : "", i, tool);
    buf[len++] = ']';
    buf[len] = '\0';
    return buf;
}

/* Writes the decimal digits of v at p; returns the end. */
static char *put_uint(char *p, unsigned long v) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}

/* The host's side: every handed-out call's index read from the one buffer,
 * the tool "run" (it answers "ok"), one answers array written. */
static size_t answer_all(const char *calls, char *out) {
    static const char key[] = "{\"index\":";
    static const char tail[] = ",\"text\":\"ok\"}";
    char *p = out;
    *p++ = '[';
    for (const char *c = strstr(calls, key); c; c = strstr(c + 1, key)) {
        unsigned long index = strtoul(c + sizeof key - 1, NULL, 10);
        if (p != out + 1) *p++ = ',';
        memcpy(p, key, sizeof key - 1);
        p = put_uint(p + sizeof key - 1, index);
        memcpy(p, tail, sizeof tail - 1);
        p += sizeof tail - 1;
    }
    *p++ = ']';
    *p = '\0';
    return (size_t)(p - out);
}

struct split {
    double begin, host, finish;
};

/* One host batch; with `s`, its thread CPU split in three (the clock reads
 * cost a few hundred ns each, so the split runs apart from the timed rows,
 * their own cost subtracted). */
static void host_once(capstan_registry *reg, const char *calls, size_t len, char *answers,
                      struct split *s) {
    capstan_host_batch *b = NULL;
    const char *handed = NULL, *results = NULL;
    size_t handed_len = 0, results_len = 0;
    double t0 = s ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
    MUST("begin", capstan_host_batch_begin(reg, calls, len, NULL, &b, &handed, &handed_len));
    double t1 = s ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
    size_t answers_len = answer_all(handed, answers);
    double t2 = s ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
    MUST("finish", capstan_host_batch_finish(b, answers, answers_len, UINT32_MAX, &results, &results_len));
    capstan_host_batch_free(b);
    double t3 = s ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
    if (s) {
        s->begin += t1 - t0;
        s->host += t2 - t1;
        s->finish += t3 - t2;
    }
}

/* What one thread-CPU clock read costs, in ns (median of a few rounds). */
static double clock_read_ns(void) {
    double v[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        for (int i = 0; i < 1000; i++) (void)clock_ns(CLOCK_THREAD_CPUTIME_ID);
        v[r] = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / 1000;
    }
    return median(v, ROUNDS);
}

static void execute_once(capstan_registry *reg, const char *calls, size_t len) {
    char *out = NULL;
    size_t out_len = 0;
    MUST("execute", capstan_registry_execute(reg, calls, len, NULL, &out, &out_len));
    capstan_string_free(out);
}

int main(int argc, char **argv) {
    capstan_registry *reg = NULL;
    MUST("registry", capstan_registry_new(NULL, &reg));
    add(reg, "native_ok", 0);
    add(reg, "host_ok", CAPSTAN_TOOL_HOST_RUN);
    if ((argc == 3 || argc == 4) &&
        (!strcmp(argv[1], "--profile-host") || !strcmp(argv[1], "--profile-execute"))) {
        long n = strtol(argv[2], NULL, 10);
        size_t size = argc == 4 ? (size_t)strtoul(argv[3], NULL, 10) : 1;
        int host = !strcmp(argv[1], "--profile-host");
        char *calls = calls_json(host ? "host_ok" : "native_ok", size ? size : 1);
        char *answers = malloc((size ? size : 1) * 40 + 16);
        for (long i = 0; i < n; i++) {
            if (host)
                host_once(reg, calls, strlen(calls), answers, NULL);
            else
                execute_once(reg, calls, strlen(calls));
        }
        free(calls);
        free(answers);
        capstan_registry_free(reg);
        return 0;
    }
    FILE *f = fopen("/proc/loadavg", "r");
    char load[64] = "?";
    if (f) {
        if (!fgets(load, sizeof load, f)) load[0] = '\0';
        fclose(f);
        load[strcspn(load, "\n")] = '\0';
    }
    printf("host batches vs execute, trivial tool; load average before: %s\n", load);
    double clock_cost = clock_read_ns();
    printf("(one thread-CPU clock read: %.0f ns, subtracted from the split)\n", clock_cost);
    printf("| calls per batch | execute, native callback: wall / cpu ns per call | host batch: wall / cpu ns per call | host batch cpu: begin / host / finish+free |\n");
    printf("|---:|---:|---:|---:|\n");
    const size_t sizes[] = {1, 100, 10000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        char *native = calls_json("native_ok", n), *host = calls_json("host_ok", n);
        size_t native_len = strlen(native), host_len = strlen(host);
        char *answers = malloc(n * 40 + 16);
        size_t iters = CALLS_PER_ROUND / n ? CALLS_PER_ROUND / n : 1;
        double ew[ROUNDS], ec[ROUNDS], hw[ROUNDS], hc[ROUNDS], hb[ROUNDS], hh[ROUNDS], hf[ROUNDS];
        /* warm up both paths (first call of each tool compiles its schema) */
        execute_once(reg, native, native_len);
        host_once(reg, host, host_len, answers, NULL);
        for (int r = 0; r < ROUNDS; r++) {
            double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            for (size_t i = 0; i < iters; i++) execute_once(reg, native, native_len);
            double w1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            for (size_t i = 0; i < iters; i++) host_once(reg, host, host_len, answers, NULL);
            double w2 = clock_ns(CLOCK_MONOTONIC), c2 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            struct split sp = {0, 0, 0};
            for (size_t i = 0; i < iters; i++) host_once(reg, host, host_len, answers, &sp);
            double calls = (double)(iters * n), batches = (double)iters;
            ew[r] = (w1 - w0) / calls;
            ec[r] = (c1 - c0) / calls;
            hw[r] = (w2 - w1) / calls;
            hc[r] = (c2 - c1) / calls;
            /* each part holds the cost of one clock read */
            hb[r] = (sp.begin - batches * clock_cost) / calls;
            hh[r] = (sp.host - batches * clock_cost) / calls;
            hf[r] = (sp.finish - batches * clock_cost) / calls;
        }
        printf("| %zu | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f / %.0f |\n", n, median(ew, ROUNDS),
               median(ec, ROUNDS), median(hw, ROUNDS), median(hc, ROUNDS), median(hb, ROUNDS),
               median(hh, ROUNDS), median(hf, ROUNDS));
        free(native);
        free(host);
        free(answers);
    }
    capstan_registry_free(reg);
    return 0;
}
