/* Progress through the C ABI (issue #33): capstan_call_progress reaches the
 * registry's event hook as CAPSTAN_EVENT_PROGRESS with its value, total and
 * message, in order; a report that does not grow, is not finite, has a
 * negative total or a message that is not UTF-8 is refused and goes
 * nowhere; after the host completed the call the handle is stale. Log
 * messages the same way: capstan_call_log reaches the hook as
 * CAPSTAN_EVENT_LOG with its level and message; an unknown level, a NULL
 * or non-UTF-8 message is refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define MAX_SEEN 8

struct seen {
    int count;
    double progress[MAX_SEEN];
    double total[MAX_SEEN];
    char message[MAX_SEEN][32];
};

static void hook(void *user_data, const capstan_event *e) {
    struct seen *s = user_data;
    if (e->kind != CAPSTAN_EVENT_PROGRESS || s->count >= MAX_SEEN) {
        return;
    }
    s->progress[s->count] = e->progress;
    s->total[s->count] = e->total;
    snprintf(s->message[s->count], sizeof s->message[0], "%.*s", (int)e->message_len,
             e->message != NULL ? e->message : "");
    s->count++;
}

static capstan_status refused[6];

static void steps(void *user_data, capstan_call *call) {
    (void)user_data;
    CHECK_STATUS(capstan_call_progress(call, 1, 4, "one", CAPSTAN_NTS), CAPSTAN_OK);
    refused[0] = capstan_call_progress(call, 1, 4, "same", CAPSTAN_NTS);
    refused[1] = capstan_call_progress(call, NAN, 0, NULL, 0);
    refused[2] = capstan_call_progress(call, 5, -1, NULL, 0);
    refused[3] = capstan_call_progress(call, 5, 0, "\xff", CAPSTAN_NTS);
    CHECK_STATUS(capstan_call_progress(call, 2.5, 0, NULL, 0), CAPSTAN_OK);
    CHECK_STATUS(capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS), CAPSTAN_OK);
    refused[4] = capstan_call_progress(call, 3, 4, "late", CAPSTAN_NTS);
    refused[5] = capstan_call_progress(NULL, 3, 4, NULL, 0);
}

static void test_progress_reaches_the_event_hook_and_bad_reports_are_refused(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    struct seen seen;
    memset(&seen, 0, sizeof seen);
    CHECK_STATUS(capstan_registry_set_event_hook(reg, hook, &seen, NULL), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "steps";
    def.callback = steps;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"a\",\"name\":\"steps\"}", CAPSTAN_NTS, NULL, &results, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(results, "\"content\":\"done\"");
    capstan_string_free(results);
    CHECK(seen.count == 2);
    CHECK(seen.progress[0] == 1 && seen.total[0] == 4 && strcmp(seen.message[0], "one") == 0);
    CHECK(seen.progress[1] == 2.5 && seen.total[1] == 0 && strcmp(seen.message[1], "") == 0);
    CHECK(refused[0] == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(refused[1] == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(refused[2] == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(refused[3] == CAPSTAN_ERR_INVALID_UTF8);
    CHECK(refused[4] == CAPSTAN_ERR_STALE_HANDLE);
    CHECK(refused[5] == CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

struct logs {
    int count;
    capstan_log_level level[MAX_SEEN];
    char message[MAX_SEEN][32];
};

static void log_hook(void *user_data, const capstan_event *e) {
    struct logs *s = user_data;
    if (e->kind != CAPSTAN_EVENT_LOG || s->count >= MAX_SEEN) {
        return;
    }
    s->level[s->count] = e->level;
    snprintf(s->message[s->count], sizeof s->message[0], "%.*s", (int)e->message_len, e->message);
    s->count++;
}

static capstan_status log_refused[5];

static void chatty(void *user_data, capstan_call *call) {
    (void)user_data;
    CHECK_STATUS(capstan_call_log(call, CAPSTAN_LOG_INFO, "started", CAPSTAN_NTS), CAPSTAN_OK);
    log_refused[0] = capstan_call_log(call, CAPSTAN_LOG_EMERGENCY + 1, "x", CAPSTAN_NTS);
    log_refused[1] = capstan_call_log(call, CAPSTAN_LOG_INFO, NULL, 0);
    log_refused[2] = capstan_call_log(call, CAPSTAN_LOG_INFO, "\xff", CAPSTAN_NTS);
    CHECK_STATUS(capstan_call_log(call, CAPSTAN_LOG_WARNING, "half way, and more", 8), CAPSTAN_OK);
    CHECK_STATUS(capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS), CAPSTAN_OK);
    log_refused[3] = capstan_call_log(call, CAPSTAN_LOG_INFO, "late", CAPSTAN_NTS);
    log_refused[4] = capstan_call_log(NULL, CAPSTAN_LOG_INFO, "none", CAPSTAN_NTS);
}

static void test_log_messages_reach_the_event_hook_and_bad_ones_are_refused(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    struct logs seen;
    memset(&seen, 0, sizeof seen);
    CHECK_STATUS(capstan_registry_set_event_hook(reg, log_hook, &seen, NULL), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "chatty";
    def.callback = chatty;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"a\",\"name\":\"chatty\"}", CAPSTAN_NTS, NULL, &results, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(results, "\"content\":\"done\"");
    capstan_string_free(results);
    CHECK(seen.count == 2);
    CHECK(seen.level[0] == CAPSTAN_LOG_INFO && strcmp(seen.message[0], "started") == 0);
    CHECK(seen.level[1] == CAPSTAN_LOG_WARNING && strcmp(seen.message[1], "half way") == 0);
    CHECK(log_refused[0] == CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(log_refused[1] == CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(log_refused[2] == CAPSTAN_ERR_INVALID_UTF8);
    CHECK(log_refused[3] == CAPSTAN_ERR_STALE_HANDLE);
    CHECK(log_refused[4] == CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

int main(void) {
    test_progress_reaches_the_event_hook_and_bad_reports_are_refused();
    test_log_messages_reach_the_event_hook_and_bad_ones_are_refused();
    return check_report("test_progress");
}
