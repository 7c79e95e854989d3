/* capstan_registry_check_call: a call checked without running it, with the answers a
 * batch would give a call that cannot run; capstan_registry_check_calls: a
 * batch of them in one crossing. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "support.h"

static atomic_int calls;

static void add(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_fetch_add(&calls, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "3", CAPSTAN_NTS);
}

static const char *SCHEMA =
    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
    "\"b\":{\"type\":\"integer\",\"default\":2}},\"required\":[\"a\"],\"additionalProperties\":false}";

static capstan_registry *registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "add";
    def.parameters = SCHEMA;
    def.callback = add;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    return reg;
}

/* Checks (name, arguments): the status, and on OK the outcome and text. */
static char *check(capstan_registry *reg, const char *name, const char *args, capstan_outcome *outcome) {
    char *out = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_registry_check_call(reg, name, CAPSTAN_NTS, args, CAPSTAN_NTS, 0, outcome, &out, &len), CAPSTAN_OK);
    CHECK(out != NULL && strlen(out) == len);
    return out;
}

static void test_valid_arguments_come_back_validated_with_defaults_filled(capstan_registry *reg) {
    capstan_outcome outcome = 99;
    char *out = check(reg, "add", "{\"a\": 1}", &outcome);
    CHECK(outcome == CAPSTAN_OUTCOME_OK);
    CHECK(out && strcmp(out, "{\"a\":1,\"b\":2}") == 0);
    capstan_string_free(out);
    out = check(reg, "add", "", &outcome); /* empty text: {} */
    CHECK(outcome == CAPSTAN_OUTCOME_INVALID_ARGUMENTS);
    CHECK_CONTAINS(out, "a");
    capstan_string_free(out);
}

static void test_calls_that_cannot_run_get_a_batchs_answer(capstan_registry *reg) {
    capstan_outcome outcome = 99;
    char *out = check(reg, "add", "{\"a\": \"x\"}", &outcome);
    CHECK(outcome == CAPSTAN_OUTCOME_INVALID_ARGUMENTS);
    CHECK_CONTAINS(out, "/a");
    /* The same call through a batch reads the same. */
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"c1\",\"name\":\"add\",\"arguments\":{\"a\":\"x\"}}", CAPSTAN_NTS, NULL,
                                 &results, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(results, "invalid_arguments");
    capstan_string_free(results);
    capstan_string_free(out);

    out = check(reg, "add", "{not json", &outcome);
    CHECK(outcome == CAPSTAN_OUTCOME_INVALID_ARGUMENTS);
    capstan_string_free(out);

    out = check(reg, "ad", "{}", &outcome);
    CHECK(outcome == CAPSTAN_OUTCOME_UNKNOWN_TOOL);
    CHECK_CONTAINS(out, "add");
    capstan_string_free(out);
    CHECK(atomic_load(&calls) == 0); /* checking never runs the tool */
}

static void test_bad_input_fails_with_a_status_and_writes_nothing(capstan_registry *reg) {
    capstan_outcome outcome = 99;
    char *out = (char *)"untouched";
    CHECK_STATUS(capstan_registry_check_call(NULL, "add", CAPSTAN_NTS, "{}", CAPSTAN_NTS, 0, &outcome, &out, NULL),
                 CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_check_call(reg, "add", CAPSTAN_NTS, "{}", CAPSTAN_NTS, 0, NULL, &out, NULL),
                 CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_check_call(reg, "add", CAPSTAN_NTS, "{}", CAPSTAN_NTS, 0, &outcome, NULL, NULL),
                 CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_check_call(reg, "add", CAPSTAN_NTS, "{}", CAPSTAN_NTS, 1u << 9, &outcome, &out, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_registry_check_call(reg, "a\xff", 2, "{}", CAPSTAN_NTS, 0, &outcome, &out, NULL),
                 CAPSTAN_ERR_INVALID_UTF8);
    CHECK_STATUS(capstan_registry_check_call(reg, "add", CAPSTAN_NTS, "{\"a\":\"\xff\"}", CAPSTAN_NTS, 0, &outcome, &out, NULL),
                 CAPSTAN_ERR_INVALID_UTF8);
    CHECK(outcome == 99 && strcmp(out, "untouched") == 0);
}

static void test_a_batch_is_checked_call_by_call_in_order(capstan_registry *reg) {
    int before = atomic_load(&calls);
    char *out = NULL;
    size_t len = 0;
    const char *batch = "[{\"id\":\"c1\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\": 1}\"},"
                        "{\"name\":\"add\",\"arguments\":{\"a\":\"x\"}},"
                        "{\"name\":\"ad\"},"
                        "{\"name\":\"add\",\"arguments\":{\"a\":5,\"b\":6}}]";
    CHECK_STATUS(capstan_registry_check_calls(reg, batch, CAPSTAN_NTS, 0, &out, &len), CAPSTAN_OK);
    CHECK(out != NULL && strlen(out) == len);
    CHECK(strncmp(out, "[[\"ok\",{\"a\":1,\"b\":2}],[\"invalid_arguments\",\"", 44) == 0);
    CHECK_CONTAINS(out, "/a");
    CHECK_CONTAINS(out, "],[\"unknown_tool\",\"");
    CHECK_CONTAINS(out, "],[\"ok\",{\"a\":5,\"b\":6}]]");
    capstan_string_free(out);
    CHECK(atomic_load(&calls) == before); /* checking never runs the tool */

    /* One call object is a batch of one; no calls, an empty array. */
    CHECK_STATUS(capstan_registry_check_calls(reg, "{\"name\":\"add\",\"arguments\":{\"a\":2}}", CAPSTAN_NTS, 0, &out, NULL),
                 CAPSTAN_OK);
    CHECK(strcmp(out, "[[\"ok\",{\"a\":2,\"b\":2}]]") == 0);
    capstan_string_free(out);
    CHECK_STATUS(capstan_registry_check_calls(reg, "[]", CAPSTAN_NTS, 0, &out, NULL), CAPSTAN_OK);
    CHECK(strcmp(out, "[]") == 0);
    capstan_string_free(out);
}

static void test_a_bad_batch_fails_with_a_status_and_writes_nothing(capstan_registry *reg) {
    char *out = (char *)"untouched";
    size_t len = 7;
    CHECK_STATUS(capstan_registry_check_calls(NULL, "[]", CAPSTAN_NTS, 0, &out, &len), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_check_calls(reg, "[]", CAPSTAN_NTS, 0, NULL, &len), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_check_calls(reg, NULL, 2, 0, &out, &len), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_check_calls(reg, "[]", CAPSTAN_NTS, 1u << 9, &out, &len), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_registry_check_calls(reg, "[{\"name\":\"a\xff\"}]", CAPSTAN_NTS, 0, &out, &len),
                 CAPSTAN_ERR_INVALID_UTF8);
    CHECK_STATUS(capstan_registry_check_calls(reg, "[{\"name\":\"add\"", CAPSTAN_NTS, 0, &out, &len),
                 CAPSTAN_ERR_INVALID_CALLS);
    CHECK_STATUS(capstan_registry_check_calls(reg, "[{\"arguments\":{}}]", CAPSTAN_NTS, 0, &out, &len),
                 CAPSTAN_ERR_INVALID_CALLS);
    CHECK(strcmp(out, "untouched") == 0 && len == 7);
}

static void test_a_closed_registry_answers_cancelled(capstan_registry *reg) {
    CHECK_STATUS(capstan_registry_close(reg, 1000), CAPSTAN_OK);
    capstan_outcome outcome = 99;
    char *out = check(reg, "add", "{\"a\": 1}", &outcome);
    CHECK(outcome == CAPSTAN_OUTCOME_CANCELLED);
    CHECK_CONTAINS(out, "shut down");
    capstan_string_free(out);
    CHECK_STATUS(capstan_registry_check_calls(reg, "[{\"name\":\"add\",\"arguments\":{\"a\":1}}]", CAPSTAN_NTS, 0, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "[[\"cancelled\",\"");
    CHECK_CONTAINS(out, "shut down");
    capstan_string_free(out);
}

int main(void) {
    watchdog_begin("test_check", "all", 300);
    capstan_registry *reg = registry();
    test_valid_arguments_come_back_validated_with_defaults_filled(reg);
    test_calls_that_cannot_run_get_a_batchs_answer(reg);
    test_bad_input_fails_with_a_status_and_writes_nothing(reg);
    test_a_batch_is_checked_call_by_call_in_order(reg);
    test_a_bad_batch_fails_with_a_status_and_writes_nothing(reg);
    test_a_closed_registry_answers_cancelled(reg);
    capstan_registry_free(reg);
    return check_report("test_check");
}
