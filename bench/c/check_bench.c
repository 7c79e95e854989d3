/* check_bench: the CPU cost of one capstan_registry_execute call whose
 * arguments take a heavy check: a 10-property schema with enums, bounds, a
 * `pattern` over 10 tags, uniqueItems, a nested object and an anyOf of
 * format uuid / email objects. Process CPU per call, the median of 7 rounds
 * of 20,000 calls. Used to check that the release profile's opt-level for
 * jsonschema (Cargo.toml) leaves the argument check's speed alone
 * (BENCHMARKS.md, Library size): run it on two libraries alternately
 * through LD_LIBRARY_PATH.
 *
 *   cc -std=c11 -O2 -Iinclude bench/c/check_bench.c -Ltarget/release -lcapstan -pthread
 */
#define _GNU_SOURCE
#include "capstan.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void cb(void *u, capstan_call *call) { (void)u; capstan_call_return(call, CAPSTAN_CONTENT_JSON, "1", CAPSTAN_NTS); }
static double now(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(void) {
    capstan_registry *r;
    if (capstan_registry_new(NULL, &r) != CAPSTAN_OK) return 1;
    capstan_tool_def d = {.struct_size = sizeof d, .name = "search", .description = "s", .callback = cb, .timeout_ms = 5000,
      .parameters = "{\"type\":\"object\",\"properties\":{"
    "\"query\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":500},"
    "\"category\":{\"type\":\"string\",\"enum\":[\"books\",\"music\",\"film\",\"games\",\"other\"]},"
    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},"
    "\"sort\":{\"type\":\"string\",\"enum\":[\"relevance\",\"price\",\"date\"]},"
    "\"include_out_of_stock\":{\"type\":\"boolean\"},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"pattern\":\"^[a-z0-9-]+$\"},\"maxItems\":10,\"uniqueItems\":true},"
    "\"price\":{\"type\":\"object\",\"properties\":{\"min\":{\"type\":\"number\",\"minimum\":0},\"max\":{\"type\":\"number\",\"minimum\":0},"
    "\"currency\":{\"type\":\"string\",\"enum\":[\"EUR\",\"USD\",\"GBP\"]}},\"required\":[\"currency\"],\"additionalProperties\":false},"
    "\"items\":{\"type\":\"array\",\"items\":{\"anyOf\":[{\"type\":\"object\",\"properties\":{\"sku\":{\"type\":\"string\",\"format\":\"uuid\"}},\"required\":[\"sku\"]},"
    "{\"type\":\"object\",\"properties\":{\"email\":{\"type\":\"string\",\"format\":\"email\"}},\"required\":[\"email\"]}]}}},"
    "\"required\":[\"query\"],\"additionalProperties\":false}"};
    if (capstan_registry_add_tool(r, &d) != CAPSTAN_OK) { char m[512]; capstan_error_message(m, sizeof m); fprintf(stderr, "%s\n", m); return 1; }
    const char *calls = "[{\"id\":\"1\",\"name\":\"search\",\"arguments\":{\"query\":\"dune first edition\",\"category\":\"books\",\"limit\":25,"
      "\"sort\":\"price\",\"include_out_of_stock\":true,\"tags\":[\"sci-fi\",\"classic\",\"hardcover\",\"signed\",\"first-edition\",\"1965\",\"chilton\",\"herbert\",\"desert\",\"spice\"],"
      "\"price\":{\"min\":10.5,\"max\":900,\"currency\":\"EUR\"},\"items\":[{\"email\":\"a.b@example.com\"},{\"sku\":\"123e4567-e89b-12d3-a456-426614174000\"},"
      "{\"email\":\"c@example.org\"},{\"sku\":\"223e4567-e89b-12d3-a456-426614174000\"}]}}]";
    enum { R = 7, N = 20000 }; double cpu[R];
    for (int k = -1; k < R; k++) {
        double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        for (int i = 0; i < N; i++) { char *res; size_t n;
            if (capstan_registry_execute(r, calls, CAPSTAN_NTS, NULL, &res, &n) != CAPSTAN_OK) return 1;
            if (i == 0 && k == -1 && !strstr(res, "\"ok\"")) { fprintf(stderr, "%s\n", res); return 1; } capstan_string_free(res); }
        if (k >= 0) cpu[k] = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) / N;
    }
    qsort(cpu, R, sizeof *cpu, cmp);
    printf("heavy-argument execute: %.0f ns cpu per call (median of %d x %d)\n", cpu[R / 2], R, N);
    capstan_registry_free(r); return 0;
}
