/* mount_bench: the cost of one call of a mounted MCP tool over streamable
 * HTTP, the server (capstan_mcp_server_start) and the mount in this one
 * process, so both sides' tokio, hyper, reqwest and rmcp code runs: wall
 * and process CPU per call, the median of 5 rounds of 300 calls. Used to
 * check that the release profile's opt-level choices (Cargo.toml) leave
 * the MCP bridge's speed alone (BENCHMARKS.md, Library size): run it on
 * two libraries alternately through LD_LIBRARY_PATH.
 *
 *   cc -std=c11 -O2 -Iinclude bench/c/mount_bench.c -Ltarget/release -lcapstan -pthread
 */
#define _GNU_SOURCE
#include "capstan.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void add(void *u, capstan_call *call) {
    (void)u;
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, "5", CAPSTAN_NTS);
}
static double now(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
#define CHECK(x) do { if ((x) != CAPSTAN_OK) { char m[512]; capstan_error_message(m, sizeof m); fprintf(stderr, "%s: %s\n", #x, m); return 1; } } while (0)
int main(void) {
    capstan_registry *a, *b;
    CHECK(capstan_registry_new(NULL, &a));
    CHECK(capstan_registry_new(NULL, &b));
    capstan_tool_def def = {.struct_size = sizeof def, .name = "add", .description = "Add.",
        .parameters = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}",
        .callback = add, .timeout_ms = 5000};
    CHECK(capstan_registry_add_tool(a, &def));
    capstan_mcp_server_options so = CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    capstan_mcp_server *srv;
    CHECK(capstan_mcp_server_start(a, &so, &srv));
    char *url; size_t ul;
    CHECK(capstan_mcp_server_url(srv, &url, &ul));
    capstan_mcp_mount_options mo = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    mo.url = url; mo.prefix = "m_";
    capstan_mcp_mount *mnt;
    CHECK(capstan_mcp_mount_new(b, &mo, &mnt));
    const char *calls = "[{\"id\":\"1\",\"name\":\"m_add\",\"arguments\":{\"a\":2,\"b\":3}}]";
    enum { ROUNDS = 5, N = 300 };
    double cpu[ROUNDS], wall[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) {
        double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        for (int i = 0; i < N; i++) {
            char *res; size_t n;
            CHECK(capstan_registry_execute(b, calls, CAPSTAN_NTS, NULL, &res, &n));
            if (!strstr(res, "\"ok\"")) { fprintf(stderr, "bad: %s\n", res); return 1; }
            capstan_string_free(res);
        }
        if (r >= 0) { cpu[r] = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) / N; wall[r] = (now(CLOCK_MONOTONIC) - w0) / N; }
    }
    qsort(cpu, ROUNDS, sizeof *cpu, cmp); qsort(wall, ROUNDS, sizeof *wall, cmp);
    printf("mounted call over HTTP: %.1f us wall, %.1f us process cpu per call (median of %d x %d)\n",
           wall[ROUNDS / 2] / 1e3, cpu[ROUNDS / 2] / 1e3, ROUNDS, N);
    capstan_mcp_mount_free(mnt);
    capstan_mcp_server_stop(srv);
    capstan_mcp_server_free(srv);
    capstan_string_free(url);
    capstan_registry_free(b);
    capstan_registry_free(a);
    return 0;
}
