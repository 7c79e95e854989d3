/* idle_bench: what capstan costs while the host waits (issue #26), measured
 * through the C ABI as a game or desktop host uses it.
 *
 *   make bench-idle        (not part of `make test`: it prints figures)
 *
 * Counts context switches (voluntary + involuntary, /proc/self/task/T/status)
 * and CPU time (/proc/self/task/T/schedstat, in ns) of every thread of the
 * process except the host's own (this program runs on its main thread only),
 * between two samples. A thread that ends between the samples takes its counts
 * with it: none should (pool threads live 10 s idle by default).
 *
 * Cases:
 *  1. idle after work: 100 ms after the last call, for 2 s: wake-ups/s.
 *  2. a 60 Hz loop: each frame submits 2 trivial calls with poll delivery
 *     and reads the previous frame's results: switches and CPU per frame.
 *  3. one long-running tool (sleeps 3 s, 60 s timeout armed): wake-ups/s of
 *     every capstan thread but the one running the tool, over 2 s.
 *
 * Linux only (/proc, gettid). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capstan.h"

#define MAX_THREADS 1024
#define FRAMES 240

typedef struct {
    int tid;
    unsigned long long switches;
    unsigned long long cpu_ns;
} thread_sample;

typedef struct {
    int n;
    thread_sample t[MAX_THREADS];
} sample;

static int host_tid;

static unsigned long long read_switches(int tid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long total = 0, v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1) total += v;
        if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) total += v;
    }
    fclose(f);
    return total;
}

static unsigned long long read_cpu_ns(int tid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long ns = 0;
    if (fscanf(f, "%llu", &ns) != 1) ns = 0;
    fclose(f);
    return ns;
}

/* Every thread but the host's. */
static void take(sample *s) {
    s->n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && s->n < MAX_THREADS) {
        int tid = atoi(e->d_name);
        if (tid <= 0 || tid == host_tid) continue;
        s->t[s->n].tid = tid;
        s->t[s->n].switches = read_switches(tid);
        s->t[s->n].cpu_ns = read_cpu_ns(tid);
        s->n++;
    }
    closedir(d);
}

/* Growth from a to b, over threads alive in b, leaving out `skip` (0: none).
 * A thread born between the samples counts from zero. */
static void growth(const sample *a, const sample *b, int skip, unsigned long long *switches,
                   unsigned long long *cpu_ns, int *threads) {
    *switches = 0;
    *cpu_ns = 0;
    *threads = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->t[i].tid == skip) continue;
        unsigned long long s0 = 0, c0 = 0;
        for (int j = 0; j < a->n; j++) {
            if (a->t[j].tid == b->t[i].tid) {
                s0 = a->t[j].switches;
                c0 = a->t[j].cpu_ns;
            }
        }
        *switches += b->t[i].switches - s0;
        *cpu_ns += b->t[i].cpu_ns - c0;
        (*threads)++;
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t) {
    double d = t - now_s();
    if (d <= 0) return;
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    nanosleep(&ts, NULL);
}

static void sleep_ms(int ms) { sleep_until(now_s() + ms / 1000.0); }

#define MUST(what, expr)                                                           \
    do {                                                                           \
        capstan_status st_ = (expr);                                               \
        if (st_ != CAPSTAN_OK) {                                                   \
            fprintf(stderr, "idle_bench: %s failed: status %d\n", what, (int)st_); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static void trivial(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", 2);
}

static atomic_int long_tid;

static void long_running(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&long_tid, (int)syscall(SYS_gettid));
    sleep_ms(3000);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", 4);
}

static void reg_tool(capstan_registry *reg, const char *name, capstan_tool_fn f, uint32_t timeout_ms) {
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = name;
    def.callback = f;
    def.timeout_ms = timeout_ms;
    MUST(name, capstan_registry_add_tool(reg, &def));
}

static void count_result(void *user_data, const capstan_result *r) {
    if (r) (*(int *)user_data)++;
}

static const char TWO_CALLS[] =
    "[{\"id\":\"a\",\"name\":\"trivial\",\"arguments\":{}},"
    "{\"id\":\"b\",\"name\":\"trivial\",\"arguments\":{}}]";

static void some_work(capstan_registry *reg) {
    for (int i = 0; i < 100; i++) {
        char *out = NULL;
        size_t len = 0;
        MUST("execute", capstan_registry_execute(reg, TWO_CALLS, CAPSTAN_NTS, NULL, &out, &len));
        capstan_string_free(out);
    }
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.flags = CAPSTAN_EXEC_DELIVER_POLL;
    for (int i = 0; i < 20; i++) {
        capstan_batch *b = NULL;
        MUST("submit", capstan_batch_submit(reg, TWO_CALLS, CAPSTAN_NTS, &opts, NULL, NULL, &b));
        MUST("wait", capstan_batch_wait(b, 1000));
        capstan_batch_free(b);
    }
}

static void idle_after_work(capstan_registry *reg) {
    some_work(reg);
    sleep_ms(100);
    sample a, b;
    take(&a);
    double t0 = now_s();
    sleep_ms(2000);
    double dt = now_s() - t0;
    take(&b);
    unsigned long long sw, cpu;
    int threads;
    growth(&a, &b, 0, &sw, &cpu, &threads);
    printf("idle after work (100 ms after the last call, 2 s)   %8.1f wake-ups/s   %8.1f us CPU/s   (%d capstan threads)\n",
           (double)sw / dt, (double)cpu / 1e3 / dt, threads);
}

static void frame_loop(capstan_registry *reg) {
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.flags = CAPSTAN_EXEC_DELIVER_POLL;
    capstan_batch *prev = NULL;
    int results = 0;
    sample a, b;
    double frame = 1.0 / 60.0;
    /* A second of frames to warm up, then FRAMES measured. */
    double next = now_s();
    for (int f = 0; f < 60 + FRAMES; f++) {
        if (f == 60) take(&a);
        if (prev) {
            capstan_batch_poll(prev, count_result, &results, 16);
            capstan_batch_free(prev);
        }
        MUST("submit", capstan_batch_submit(reg, TWO_CALLS, CAPSTAN_NTS, &opts, NULL, NULL, &prev));
        next += frame;
        sleep_until(next);
    }
    take(&b);
    capstan_batch_poll(prev, count_result, &results, 16);
    capstan_batch_free(prev);
    if (results != 2 * (60 + FRAMES)) /* a batch not done by the next frame is freed unread */
        printf("(%d of %d results were ready by the next frame)\n", results, 2 * (60 + FRAMES));
    unsigned long long sw, cpu;
    int threads;
    growth(&a, &b, 0, &sw, &cpu, &threads);
    printf("60 Hz loop, 2 calls a frame, poll delivery          %8.2f switches/frame %6.1f us CPU/frame (%d capstan threads)\n",
           (double)sw / FRAMES, (double)cpu / 1e3 / FRAMES, threads);
}

static void long_tool(capstan_registry *reg) {
    capstan_batch *b = NULL;
    MUST("submit", capstan_batch_submit(reg, "{\"id\":\"l\",\"name\":\"long_running\",\"arguments\":{}}",
                                  CAPSTAN_NTS, NULL, NULL, NULL, &b));
    while (atomic_load(&long_tid) == 0) sleep_ms(1);
    sleep_ms(100);
    sample a, s;
    take(&a);
    double t0 = now_s();
    sleep_ms(2000);
    double dt = now_s() - t0;
    take(&s);
    MUST("wait", capstan_batch_wait(b, 10000));
    capstan_batch_free(b);
    unsigned long long sw, cpu;
    int threads;
    growth(&a, &s, atomic_load(&long_tid), &sw, &cpu, &threads);
    printf("one tool running 3 s (60 s timeout), other threads  %8.1f wake-ups/s   %8.1f us CPU/s   (%d other capstan threads)\n",
           (double)sw / dt, (double)cpu / 1e3 / dt, threads);
}

int main(void) {
    host_tid = (int)syscall(SYS_gettid);
    capstan_registry *reg = NULL;
    MUST("registry", capstan_registry_new(NULL, &reg));
    reg_tool(reg, "trivial", trivial, 0);
    reg_tool(reg, "long_running", long_running, 60000);
    idle_after_work(reg);
    frame_loop(reg);
    idle_after_work(reg);
    long_tool(reg);
    capstan_registry_free(reg);
    return 0;
}
