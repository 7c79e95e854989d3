/* The MCP server's C lifecycle, run under ASan/UBSan: start on port 0 and
 * read the URL back, bad options, a busy address, stop with calls in flight
 * (cancelled and waited for; or left running past the stop bound), stop
 * twice, stop and free NULL. Speaks raw HTTP to the server on loopback. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../c/check.h"

static atomic_int entered, saw_cancel, finished;
static atomic_int ignore_cancel_ms;

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits (bounded: 20 s) for *flag to reach n. */
static int wait_for(atomic_int *flag, int n) {
    for (int i = 0; i < 2000 && atomic_load(flag) < n; i++) sleep_ms(10);
    return atomic_load(flag) >= n;
}

/* Waits for cancellation (up to 30 s), unless told to ignore it for a while. */
static void slow(void *ud, capstan_call *call) {
    (void)ud;
    atomic_fetch_add(&entered, 1);
    int ignore = atomic_load(&ignore_cancel_ms);
    if (ignore) sleep_ms(ignore);
    for (int i = 0; i < 3000; i++) {
        if (capstan_call_cancelled(call)) {
            atomic_fetch_add(&saw_cancel, 1);
            break;
        }
        sleep_ms(10);
    }
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "slow done", CAPSTAN_NTS);
    atomic_fetch_add(&finished, 1);
}

static capstan_registry *new_registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "slow";
    def.callback = slow;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    return reg;
}

static int port_of(capstan_mcp_server *server) {
    char *url = NULL;
    int port = 0;
    CHECK_STATUS(capstan_mcp_server_url(server, &url, NULL), CAPSTAN_OK);
    if (url) {
        CHECK(strncmp(url, "http://127.0.0.1:", 17) == 0);
        port = atoi(url + 17);
        CHECK(strstr(url, "/mcp") != NULL);
        capstan_string_free(url);
    }
    CHECK(port > 0);
    return port;
}

/* POSTs body to the server; returns the socket (response unread), or -1. */
static int post(int port, const char *session, const char *body) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct timeval tv = {20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return -1;
    }
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                     "Content-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\n"
                     "%s%s%s"
                     "Content-Length: %zu\r\n\r\n%s",
                     port, session ? "Mcp-Session-Id: " : "", session ? session : "",
                     session ? "\r\n" : "", strlen(body), body);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads what arrives until `needle` shows up, the peer closes, or 20 s pass. */
static size_t read_until(int fd, char *buf, size_t cap, const char *needle) {
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r <= 0) break;
        len += (size_t)r;
        buf[len] = 0;
        if (needle && strstr(buf, needle)) break;
    }
    buf[len] = 0;
    return len;
}

/* Initializes a session; writes its id into `session`. */
static int open_session(int port, char *session, size_t cap) {
    int fd = post(port, NULL,
                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                  "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                  "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}");
    if (fd < 0) return 0;
    char buf[8192];
    read_until(fd, buf, sizeof buf, "serverInfo");
    close(fd);
    char lower[8192];
    size_t i = 0;
    for (; buf[i]; i++) /* header names are case-insensitive; values are not */
        lower[i] = (buf[i] >= 'A' && buf[i] <= 'Z') ? (char)(buf[i] - 'A' + 'a') : buf[i];
    lower[i] = 0;
    const char *found = strstr(lower, "mcp-session-id:");
    if (!found) return 0;
    const char *h = buf + (found - lower);
    h += strlen("mcp-session-id:");
    while (*h == ' ') h++;
    size_t n = strcspn(h, "\r\n");
    if (n + 1 > cap) return 0;
    memcpy(session, h, n);
    session[n] = 0;
    fd = post(port, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    if (fd >= 0) {
        read_until(fd, buf, sizeof buf, "\r\n\r\n");
        close(fd);
    }
    return 1;
}

struct caller {
    int port;
    char session[256];
    pthread_t thread;
};

static void *call_slow(void *arg) {
    struct caller *c = arg;
    int fd = post(c->port, c->session,
                  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                  "\"params\":{\"name\":\"slow\",\"arguments\":{}}}");
    if (fd >= 0) {
        char buf[8192];
        read_until(fd, buf, sizeof buf, NULL); /* until the server closes it */
        close(fd);
    }
    return NULL;
}

static void start_calls(struct caller *callers, int n, int port) {
    for (int i = 0; i < n; i++) {
        callers[i].port = port;
        CHECK(open_session(port, callers[i].session, sizeof callers[i].session));
        pthread_create(&callers[i].thread, NULL, call_slow, &callers[i]);
    }
}

static void test_start_on_port_0_and_read_the_url_back(void) {
    capstan_registry *reg = new_registry();
    capstan_mcp_server *server = NULL;
    CHECK_STATUS(capstan_mcp_server_start(reg, NULL, &server), CAPSTAN_OK);
    port_of(server);
    CHECK_STATUS(capstan_mcp_server_stop(server), CAPSTAN_OK);
    port_of(server); /* still readable after stop */
    capstan_mcp_server_free(server);
    capstan_registry_free(reg);
}

static void test_bad_options_are_invalid_argument(void) {
    capstan_registry *reg = new_registry();
    capstan_mcp_server *server = NULL;
    capstan_mcp_server_options opts = CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    opts.address = "not an address";
    CHECK_STATUS(capstan_mcp_server_start(reg, &opts, &server), CAPSTAN_ERR_INVALID_ARGUMENT);
    opts = (capstan_mcp_server_options)CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    opts.tools_meta = "{\"slow\": 3}";
    CHECK_STATUS(capstan_mcp_server_start(reg, &opts, &server), CAPSTAN_ERR_INVALID_ARGUMENT);
    opts.tools_meta = "{not json";
    CHECK_STATUS(capstan_mcp_server_start(reg, &opts, &server), CAPSTAN_ERR_INVALID_ARGUMENT);
    opts = (capstan_mcp_server_options)CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    opts.bearer_token = ""; /* NULL means no token; "" would refuse every request */
    CHECK_STATUS(capstan_mcp_server_start(reg, &opts, &server), CAPSTAN_ERR_INVALID_ARGUMENT);
    opts = (capstan_mcp_server_options)CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    opts.flags = 1u << 7;
    CHECK_STATUS(capstan_mcp_server_start(reg, &opts, &server), CAPSTAN_ERR_INVALID_ARGUMENT);
    opts = (capstan_mcp_server_options)CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    opts.struct_size = 4;
    CHECK_STATUS(capstan_mcp_server_start(reg, &opts, &server), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_mcp_server_start(reg, NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_mcp_server_start(NULL, NULL, &server), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(server == NULL);
    capstan_registry_free(reg);
}

static void test_a_busy_address_is_a_transport_error(void) {
    capstan_registry *reg = new_registry();
    capstan_mcp_server *first = NULL, *second = NULL;
    CHECK_STATUS(capstan_mcp_server_start(reg, NULL, &first), CAPSTAN_OK);
    char address[64];
    snprintf(address, sizeof address, "127.0.0.1:%d", port_of(first));
    capstan_mcp_server_options opts = CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    opts.address = address;
    CHECK_STATUS(capstan_mcp_server_start(reg, &opts, &second), CAPSTAN_ERR_TRANSPORT);
    CHECK(second == NULL);
    capstan_mcp_server_free(first); /* free stops a running server */
    capstan_registry_free(reg);
}

static void test_stop_cancels_calls_in_flight_and_waits_for_them(void) {
    atomic_store(&entered, 0);
    atomic_store(&saw_cancel, 0);
    atomic_store(&finished, 0);
    atomic_store(&ignore_cancel_ms, 0);
    capstan_registry *reg = new_registry();
    capstan_mcp_server *server = NULL;
    CHECK_STATUS(capstan_mcp_server_start(reg, NULL, &server), CAPSTAN_OK);
    struct caller callers[3];
    start_calls(callers, 3, port_of(server));
    CHECK(wait_for(&entered, 3));
    CHECK_STATUS(capstan_mcp_server_stop(server), CAPSTAN_OK);
    CHECK(atomic_load(&saw_cancel) == 3);
    CHECK(atomic_load(&finished) == 3);
    CHECK_STATUS(capstan_mcp_server_stop(server), CAPSTAN_OK); /* twice: OK at once */
    for (int i = 0; i < 3; i++) pthread_join(callers[i].thread, NULL);
    capstan_mcp_server_free(server);
    capstan_registry_free(reg);
}

static void test_stop_returns_timeout_when_a_call_outlives_its_bound(void) {
    atomic_store(&entered, 0);
    atomic_store(&saw_cancel, 0);
    atomic_store(&finished, 0);
    atomic_store(&ignore_cancel_ms, 1500);
    capstan_registry *reg = new_registry();
    capstan_mcp_server *server = NULL;
    capstan_mcp_server_options opts = CAPSTAN_MCP_SERVER_OPTIONS_INIT;
    opts.stop_timeout_ms = 100;
    CHECK_STATUS(capstan_mcp_server_start(reg, &opts, &server), CAPSTAN_OK);
    struct caller callers[1];
    start_calls(callers, 1, port_of(server));
    CHECK(wait_for(&entered, 1));
    CHECK_STATUS(capstan_mcp_server_stop(server), CAPSTAN_ERR_TIMEOUT);
    capstan_mcp_server_free(server);
    pthread_join(callers[0].thread, NULL);
    /* The call still ends well, after the server is gone. */
    CHECK(wait_for(&finished, 1));
    capstan_registry_free(reg);
    atomic_store(&ignore_cancel_ms, 0);
}

static void test_stop_and_free_null(void) {
    CHECK_STATUS(capstan_mcp_server_stop(NULL), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_mcp_server_free(NULL);
    char *url = NULL;
    CHECK_STATUS(capstan_mcp_server_url(NULL, &url, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(url == NULL);
    CHECK_STATUS(capstan_mcp_server_serve_stdio(NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(strcmp(capstan_status_name(CAPSTAN_ERR_UNSUPPORTED), "CAPSTAN_ERR_UNSUPPORTED") == 0);
    CHECK(strcmp(capstan_status_name(CAPSTAN_ERR_TRANSPORT), "CAPSTAN_ERR_TRANSPORT") == 0);
}

int main(void) {
    test_start_on_port_0_and_read_the_url_back();
    test_bad_options_are_invalid_argument();
    test_a_busy_address_is_a_transport_error();
    test_stop_cancels_calls_in_flight_and_waits_for_them();
    test_stop_returns_timeout_when_a_call_outlives_its_bound();
    test_stop_and_free_null();
    return check_report("test_mcp_server");
}
