/* 1,000,000 calls of a tool with a one-hour timeout, each completed at once:
 * prints RSS every 100,000 calls. A finished call's timer is cancelled on
 * completion, so RSS stays flat instead of growing until the deadlines.
 * Run with `make timeout-rss`; not part of `make test`. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capstan.h"

static void quick(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", 2);
}

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f == NULL) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv) {
    long total = argc > 1 ? atol(argv[1]) : 1000000;
    const int per_batch = 1000;
    capstan_registry *reg = NULL;
    if (capstan_registry_new(NULL, &reg) != CAPSTAN_OK) return 1;
    capstan_tool_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.name = "quick";
    d.callback = quick;
    d.timeout_ms = 3600 * 1000;
    if (capstan_registry_add_tool(reg, &d) != CAPSTAN_OK) return 1;

    size_t cap = (size_t)per_batch * 40 + 2;
    char *calls = malloc(cap);
    size_t n = 0;
    calls[n++] = '[';
    for (int i = 0; i < per_batch; i++) {
        n += (size_t)snprintf(calls + n, cap - n, "%s{\"id\":\"c%d\",\"name\":\"quick\"}", i ? "," : "", i);
    }
    calls[n++] = ']';
    calls[n] = '\0';

    printf("calls      rss_kb   (tool timeout 1 h, every call completed at once)\n");
    printf("%-10d %ld\n", 0, rss_kb());
    for (long done = 0; done < total;) {
        char *out = NULL;
        if (capstan_registry_execute(reg, calls, n, NULL, &out, NULL) != CAPSTAN_OK) return 1;
        capstan_string_free(out);
        done += per_batch;
        if (done % 100000 == 0) printf("%-10ld %ld\n", done, rss_kb());
    }
    capstan_registry_free(reg);
    free(calls);
    return 0;
}
