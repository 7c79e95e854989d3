/* capstan_mcp_mount_new / capstan_mcp_mount_free from C, run under ASan+UBSan by
 * `make mcp-client-test`: bad options, a mounted Python MCP server
 * (argv[1]: tests/mcp/fastmcp_server.py) called through capstan_registry_execute,
 * unmount with calls in flight, unmount twice and NULL, and unmount after
 * the registry was freed. Every wait is bounded by the tools' timeouts. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capstan.h"

static int failures = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            char msg_[512];                                                    \
            capstan_error_message(msg_, sizeof msg_);                             \
            fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n",      \
                    __FILE__, __LINE__, #cond, msg_);                          \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static const char *script;

/* The interpreter with the MCP SDK: $CAPSTAN_TEST_PYTHON (the Makefile sets
 * it to build/venv's), else python3. */
static const char *python(void) {
    const char *env = getenv("CAPSTAN_TEST_PYTHON");
    return env != NULL && env[0] != '\0' ? env : "python3";
}

static capstan_mcp_mount *mount_python(capstan_registry *reg) {
    const char *argv[] = {python(), script};
    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    opts.argv = argv;
    opts.argc = 2;
    opts.prefix = "py_";
    opts.connect_timeout_ms = 120000; /* python imports slowly on a loaded machine */
    capstan_mcp_mount *mount = NULL;
    capstan_status st = capstan_mcp_mount_new(reg, &opts, &mount);
    CHECK(st == CAPSTAN_OK);
    return st == CAPSTAN_OK ? mount : NULL;
}

static char *run(capstan_registry *reg, const char *calls) {
    char *results = NULL;
    capstan_status st = capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &results, NULL);
    CHECK(st == CAPSTAN_OK);
    return results;
}

static void *slow_calls(void *reg) {
    return run(reg, "[{\"id\":\"1\",\"name\":\"py_slow\",\"arguments\":{\"seconds\":60}},"
                    "{\"id\":\"2\",\"name\":\"py_slow\",\"arguments\":{\"seconds\":60}},"
                    "{\"id\":\"3\",\"name\":\"py_slow\",\"arguments\":{\"seconds\":60}}]");
}

static void test_bad_options_are_clear_errors(capstan_registry *reg) {
    capstan_mcp_mount *mount = NULL;
    CHECK(capstan_mcp_mount_new(reg, NULL, &mount) == CAPSTAN_ERR_NULL_PARAMETER);
    capstan_mcp_mount_options opts = CAPSTAN_MCP_MOUNT_OPTIONS_INIT;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    const char *argv[] = {"/nonexistent/mcp-server"};
    opts.argv = argv;
    opts.argc = 1;
    opts.url = "http://127.0.0.1:1/mcp";
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    opts.url = NULL;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_MCP_CONNECT);
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    CHECK(strstr(msg, "could not start") != NULL);
    opts.struct_size = 4;
    CHECK(capstan_mcp_mount_new(reg, &opts, &mount) == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(mount == NULL);
    CHECK(strcmp(capstan_status_name(CAPSTAN_ERR_MCP_CONNECT), "CAPSTAN_ERR_MCP_CONNECT") == 0);
    CHECK(strcmp(capstan_status_name(CAPSTAN_ERR_UNSUPPORTED), "CAPSTAN_ERR_UNSUPPORTED") == 0);
}

static void test_mounted_tools_answer_through_execute(capstan_registry *reg) {
    capstan_mcp_mount *mount = mount_python(reg);
    if (!mount) return;
    char *info = NULL;
    CHECK(capstan_mcp_mount_info_json(mount, &info, NULL) == CAPSTAN_OK);
    CHECK(info && strstr(info, "\"connected\":true"));
    CHECK(info && strstr(info, "\"py_add\":\"add\"") && strstr(info, "bad.name"));
    capstan_string_free(info);
    char *results = run(reg, "{\"id\":\"1\",\"name\":\"py_add\",\"arguments\":{\"a\":2,\"b\":3}}");
    CHECK(results && strstr(results, "\"content\":\"5\"") && strstr(results, "\"outcome\":\"ok\""));
    capstan_string_free(results);
    results = run(reg, "{\"id\":\"1\",\"name\":\"py_add\",\"arguments\":{\"a\":\"x\",\"b\":3}}");
    CHECK(results && strstr(results, "\"outcome\":\"invalid_arguments\""));
    capstan_string_free(results);
    CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
}

static void test_unmount_with_calls_in_flight_twice_and_null(capstan_registry *reg) {
    capstan_mcp_mount *mount = mount_python(reg);
    if (!mount) return;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, slow_calls, reg) == 0);
    /* Let the calls reach the server (not required: either way they end). */
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
    void *out = NULL;
    CHECK(pthread_join(thread, &out) == 0);
    char *results = out;
    CHECK(results && strstr(results, "\"outcome\":\"ok\"") == NULL);
    CHECK(results && strstr(results, "unmounted"));
    capstan_string_free(results);
    /* Twice: a stale handle, never a crash. NULL: nothing to do. */
    CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_ERR_STALE_HANDLE);
    char *info = NULL;
    CHECK(capstan_mcp_mount_info_json(mount, &info, NULL) == CAPSTAN_ERR_STALE_HANDLE);
    CHECK(capstan_mcp_mount_free(NULL) == CAPSTAN_OK);
    /* Its tools are gone. */
    char *tools = NULL;
    CHECK(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_DESCRIBE, NULL, &tools, NULL, NULL, NULL) == CAPSTAN_OK);
    CHECK(tools && strstr(tools, "py_") == NULL);
    capstan_string_free(tools);
}

static void test_unmount_after_registry_free(void) {
    capstan_registry *reg = NULL;
    CHECK(capstan_registry_new(NULL, &reg) == CAPSTAN_OK);
    capstan_mcp_mount *mount = mount_python(reg);
    capstan_registry_free(reg);
    if (mount) CHECK(capstan_mcp_mount_free(mount) == CAPSTAN_OK);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_mcp_client path/to/fastmcp_server.py\n");
        return 2;
    }
    script = argv[1];
    capstan_registry *reg = NULL;
    CHECK(capstan_registry_new(NULL, &reg) == CAPSTAN_OK);
    test_bad_options_are_clear_errors(reg);
    test_mounted_tools_answer_through_execute(reg);
    test_unmount_with_calls_in_flight_twice_and_null(reg);
    capstan_registry_free(reg);
    test_unmount_after_registry_free();
    if (failures) {
        fprintf(stderr, "test_mcp_client: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_mcp_client: ok\n");
    return 0;
}
