/* capstan_runtime_shutdown, then dlclose, 20 rounds in one process: each
 * round loads libcapstan with dlopen, uses it (pool threads started, a call
 * with a timeout arms a timer, an MCP HTTP server started on 127.0.0.1 port
 * 0 and stopped), shuts the runtime down, checks that no capstan thread is
 * left, and unloads the library.
 *
 * dlopen/dlsym/dlclose are POSIX (a Windows port would use LoadLibrary and
 * FreeLibrary), and the thread check reads /proc/self/task (Linux): this
 * test runs on POSIX systems only. The library's path comes from the
 * environment (CAPSTAN_LIB, which the Makefile sets); the program is not
 * linked against it, so that dlclose can really unload it.
 *
 * The library is used on a host thread of its own that ends before the
 * round's dlclose: a thread that called into a library keeps it loaded
 * until that thread ends (its thread-local destructors live in it). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capstan.h"
#include "check.h"

#define ROUNDS 20

/* The functions used, looked up in the loaded library. */
struct api {
    capstan_status (*registry_new)(const capstan_registry_options *, capstan_registry **);
    void (*registry_free)(capstan_registry *);
    capstan_status (*reg)(capstan_registry *, const capstan_tool_def *);
    capstan_status (*call_return)(capstan_call *, capstan_content, const char *, size_t);
    capstan_status (*execute)(capstan_registry *, const char *, size_t, const capstan_exec_options *,
                              char **, size_t *);
    void (*free_text)(char *);
    capstan_status (*server_start)(capstan_registry *, const capstan_mcp_server_options *,
                                   capstan_mcp_server **);
    capstan_status (*server_stop)(capstan_mcp_server *);
    void (*server_free)(capstan_mcp_server *);
    capstan_status (*shutdown)(uint32_t);
    size_t (*last_error)(char *, size_t);
};

static void *symbol(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "test_unload: %s not found: %s\n", name, dlerror());
        exit(1);
    }
    return f;
}

static void load_api(void *lib, struct api *a) {
    /* POSIX guarantees that a dlsym result converts to a function pointer. */
#define LOAD(field, name) *(void **)(&a->field) = symbol(lib, name)
    LOAD(registry_new, "capstan_registry_new");
    LOAD(registry_free, "capstan_registry_free");
    LOAD(reg, "capstan_registry_add_tool");
    LOAD(call_return, "capstan_call_return");
    LOAD(execute, "capstan_registry_execute");
    LOAD(free_text, "capstan_string_free");
    LOAD(server_start, "capstan_mcp_server_start");
    LOAD(server_stop, "capstan_mcp_server_stop");
    LOAD(server_free, "capstan_mcp_server_free");
    LOAD(shutdown, "capstan_runtime_shutdown");
    LOAD(last_error, "capstan_error_message");
#undef LOAD
}

static struct api api;

/* CHECK_STATUS through the loaded library (check.h's calls it directly). */
#define CHECK_LOADED(expr, expected)                                                         \
    do {                                                                                     \
        capstan_status st_ = (expr);                                                         \
        check_count++;                                                               \
        if (st_ != (expected)) {                                                             \
            char msg_[512] = {0};                                                            \
            api.last_error(msg_, sizeof msg_);                                               \
            check_failures++;                                                                \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s)\n", __FILE__, __LINE__, \
                    #expr, (int)st_, (int)(expected), msg_);                                 \
        }                                                                                    \
    } while (0)

static void echo(void *user_data, capstan_call *call) {
    (void)user_data;
    api.call_return(call, CAPSTAN_CONTENT_TEXT, "ok", 2);
}

/* Threads of the process whose name starts with "capstan". */
static int capstan_threads(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], name[64] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(name, sizeof name, f) && strncmp(name, "capstan", 7) == 0) n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

/* One round's use of the library, on a host thread of its own. */
static void *use_library(void *arg) {
    int *ok = arg;
    capstan_registry *reg = NULL;
    CHECK_LOADED(api.registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "echo";
    def.callback = echo;
    def.timeout_ms = 60000; /* every call arms a timer */
    CHECK_LOADED(api.reg(reg, &def), CAPSTAN_OK);
    static const char calls[] = "[{\"id\":\"1\",\"name\":\"echo\",\"arguments\":{}},"
                                "{\"id\":\"2\",\"name\":\"echo\",\"arguments\":{}},"
                                "{\"id\":\"3\",\"name\":\"echo\",\"arguments\":{}}]";
    char *out = NULL;
    size_t len = 0;
    CHECK_LOADED(api.execute(reg, calls, CAPSTAN_NTS, NULL, &out, &len), CAPSTAN_OK);
    CHECK(out != NULL && strstr(out, "\"outcome\":\"ok\"") != NULL);
    api.free_text(out);
    /* A pool thread ran calls (the timer thread may not have named itself
     * yet: a new thread's name is set once it first runs). */
    CHECK(capstan_threads() >= 1);

    capstan_mcp_server *server = NULL;
    CHECK_LOADED(api.server_start(reg, NULL, &server), CAPSTAN_OK);
    /* A started server is named in the refusal: shutdown leaves it alone. */
    CHECK_LOADED(api.shutdown(1000), CAPSTAN_ERR_TIMEOUT);
    char msg[256] = {0};
    api.last_error(msg, sizeof msg);
    CHECK(strstr(msg, "MCP server") != NULL);
    CHECK_LOADED(api.server_stop(server), CAPSTAN_OK);
    api.server_free(server);

    api.registry_free(reg);
    CHECK_LOADED(api.shutdown(UINT32_MAX), CAPSTAN_OK);
    CHECK(capstan_threads() == 0);
    *ok = 1;
    return NULL;
}

int main(void) {
    const char *path = getenv("CAPSTAN_LIB");
    if (!path || !*path) {
        fprintf(stderr, "test_unload: set CAPSTAN_LIB to libcapstan's path (the Makefile does)\n");
        return 1;
    }
    for (int round = 0; round < ROUNDS; round++) {
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            fprintf(stderr, "test_unload: dlopen %s: %s\n", path, dlerror());
            return 1;
        }
        load_api(lib, &api);
        int ok = 0;
        pthread_t host;
        CHECK(pthread_create(&host, NULL, use_library, &ok) == 0);
        CHECK(pthread_join(host, NULL) == 0);
        CHECK(ok == 1);
        CHECK(capstan_threads() == 0);
        memset(&api, 0, sizeof api);
        CHECK(dlclose(lib) == 0);
        /* Unloaded for real: nothing keeps it mapped. */
        CHECK(dlopen(path, RTLD_NOW | RTLD_NOLOAD) == NULL);
    }
    printf("test_unload: %d rounds of dlopen, use, capstan_runtime_shutdown, dlclose\n", ROUNDS);
    return check_report("test_unload");
}
