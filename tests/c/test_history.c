/* Conversation integrity through the C ABI (issue #31): a history checked
 * and repaired with capstan_format_check_history, and a turn whose response
 * repeats an id answered so that the repaired history checks clean. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void echo(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS);
}

/* A registry with one tool, "echo", answering "done". */
static capstan_registry *echo_registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = {
        .struct_size = sizeof def,
        .name = "echo",
        .description = "Echo.",
        .parameters = "{\"type\":\"object\"}",
        .callback = echo,
    };
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    return reg;
}

/* An Anthropic conversation: the second tool_use has no tool_result, and a
 * tool_result answers no call. */
static const char *BROKEN =
    "[{\"role\":\"user\",\"content\":\"hi\"},"
    "{\"role\":\"assistant\",\"content\":["
    "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"echo\",\"input\":{}},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"echo\",\"input\":{}}]},"
    "{\"role\":\"user\",\"content\":["
    "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"ok\"},"
    "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_9\",\"content\":\"ghost\"}]}]";

static void test_check_reports_and_repair_fixes(void) {
    char *report = NULL, *repaired = NULL;
    size_t report_len = 0, repaired_len = 0;
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, BROKEN, CAPSTAN_NTS, 0,
                                              &report, &report_len, &repaired, &repaired_len),
                 CAPSTAN_OK);
    CHECK_CONTAINS(report, "\"ok\":false");
    CHECK_CONTAINS(report, "\"kind\":\"missing_result\"");
    CHECK_CONTAINS(report, "\"kind\":\"orphan_result\"");
    CHECK(report != NULL && strlen(report) == report_len);
    CHECK(repaired == NULL); /* no repair asked: not written */
    capstan_string_free(report);
    report = NULL;

    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, BROKEN, CAPSTAN_NTS,
                                              CAPSTAN_HISTORY_REPAIR, &report, NULL, &repaired,
                                              &repaired_len),
                 CAPSTAN_OK);
    CHECK_CONTAINS(report, "\"repair\":\"added an error result");
    CHECK_CONTAINS(report, "\"repair\":\"dropped the result: no call in the history has its id\"");
    CHECK_CONTAINS(repaired, "never finished");
    CHECK(repaired != NULL && strstr(repaired, "ghost") == NULL);
    CHECK(repaired != NULL && strlen(repaired) == repaired_len);

    /* The repaired history checks clean. */
    char *again = NULL;
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, repaired, repaired_len, 0,
                                              &again, NULL, NULL, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(again, "\"ok\":true");
    capstan_string_free(again);
    capstan_string_free(report);
    capstan_string_free(repaired);
}

static void test_a_repeated_id_in_a_response_repairs_onto_run_turn_results(void) {
    capstan_registry *reg = echo_registry();
    const char *assistant =
        "{\"role\":\"assistant\",\"content\":["
        "{\"type\":\"tool_use\",\"id\":\"dup\",\"name\":\"echo\",\"input\":{}},"
        "{\"type\":\"tool_use\",\"id\":\"dup\",\"name\":\"echo\",\"input\":{}}]}";
    char *messages = NULL;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_ANTHROPIC, assistant, CAPSTAN_NTS,
                                           NULL, &messages, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(messages, "\"tool_use_id\":\"dup\"");
    CHECK_CONTAINS(messages, "\"tool_use_id\":\"dup_2\"");
    if (messages != NULL) {
        const char *user = "{\"role\":\"user\",\"content\":\"go\"}";
        size_t n = strlen(user) + strlen(assistant) + strlen(messages) + 8;
        char *history = malloc(n);
        CHECK(history != NULL);
        if (history != NULL) {
            snprintf(history, n, "[%s,%s,%s]", user, assistant, messages);
            char *report = NULL, *repaired = NULL;
            CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, history,
                                                      CAPSTAN_NTS, CAPSTAN_HISTORY_REPAIR, &report,
                                                      NULL, &repaired, NULL),
                         CAPSTAN_OK);
            CHECK_CONTAINS(report, "duplicate_call_id");
            CHECK(report != NULL && strstr(report, "missing_result") == NULL);
            CHECK(report != NULL && strstr(report, "orphan_result") == NULL);
            CHECK_CONTAINS(repaired, "\"id\":\"dup_2\"");
            capstan_string_free(report);
            capstan_string_free(repaired);
            free(history);
        }
    }
    capstan_string_free(messages);
    capstan_registry_free(reg);
}

static void test_gemini_signatures_are_asked_for_only_with_the_flag(void) {
    const char *history =
        "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]},"
        "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"echo\",\"args\":{}}}]},"
        "{\"role\":\"user\",\"parts\":[{\"functionResponse\":{\"name\":\"echo\","
        "\"response\":{\"output\":\"ok\"}}}]}]}";
    char *report = NULL, *repaired = NULL;
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_GEMINI, history, CAPSTAN_NTS, 0,
                                              &report, NULL, NULL, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(report, "\"ok\":true");
    capstan_string_free(report);
    report = NULL;
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_GEMINI, history, CAPSTAN_NTS,
                                              CAPSTAN_HISTORY_REPAIR |
                                                  CAPSTAN_HISTORY_GEMINI_SIGNATURES,
                                              &report, NULL, &repaired, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(report, "missing_signature");
    CHECK_CONTAINS(repaired, "\"thoughtSignature\":\"skip_thought_signature_validator\"");
    CHECK_CONTAINS(repaired, "{\"contents\":[");
    capstan_string_free(report);
    capstan_string_free(repaired);
}

static void test_bad_inputs_are_clear_errors_and_write_nothing(void) {
    char *report = NULL, *repaired = NULL;
    char msg[256];
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_MCP, "[]", CAPSTAN_NTS, 0, &report,
                                              NULL, NULL, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "no conversation history");
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, "[", CAPSTAN_NTS, 0,
                                              &report, NULL, NULL, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, "[1]", CAPSTAN_NTS, 0,
                                              &report, NULL, NULL, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "history[0]");
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, "[]", CAPSTAN_NTS, 1u << 7,
                                              &report, NULL, NULL, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, "[]", CAPSTAN_NTS, 0, NULL,
                                              NULL, NULL, NULL),
                 CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, "[]", CAPSTAN_NTS,
                                              CAPSTAN_HISTORY_REPAIR, &report, NULL, NULL, NULL),
                 CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, "[\"\xff\"]", CAPSTAN_NTS,
                                              0, &report, NULL, NULL, NULL),
                 CAPSTAN_ERR_INVALID_UTF8);
    CHECK(report == NULL && repaired == NULL);
}

/* CAPSTAN_EXEC_WHOLE_TURN: the model's turn (its thinking block and
 * signature unchanged, the repeated id renamed) and then the results, one
 * array that checks clean after the user's message. */
static void test_the_whole_turn_checks_clean(void) {
    capstan_registry *reg = echo_registry();
    const char *response =
        "{\"type\":\"message\",\"role\":\"assistant\",\"content\":["
        "{\"type\":\"thinking\",\"thinking\":\"Two echoes.\",\"signature\":\"c2lnbmF0dXJl+/==\"},"
        "{\"type\":\"tool_use\",\"id\":\"dup\",\"name\":\"echo\",\"input\":{}},"
        "{\"type\":\"tool_use\",\"id\":\"dup\",\"name\":\"echo\",\"input\":{}}],"
        "\"stop_reason\":\"tool_use\"}";
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.flags = CAPSTAN_EXEC_WHOLE_TURN;
    char *turn = NULL;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_ANTHROPIC, response, CAPSTAN_NTS,
                                           &opts, &turn, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(turn, "[{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\","
                         "\"thinking\":\"Two echoes.\",\"signature\":\"c2lnbmF0dXJl+/==\"},");
    CHECK_CONTAINS(turn, "\"id\":\"dup_2\"");
    CHECK_CONTAINS(turn, "\"tool_use_id\":\"dup_2\"");
    if (turn != NULL && turn[0] == '[') {
        const char *user = "{\"role\":\"user\",\"content\":\"go\"}";
        size_t n = strlen(user) + strlen(turn) + 4;
        char *history = malloc(n);
        CHECK(history != NULL);
        if (history != NULL) {
            snprintf(history, n, "[%s,%s", user, turn + 1);
            char *report = NULL;
            CHECK_STATUS(capstan_format_check_history(CAPSTAN_FORMAT_ANTHROPIC, history,
                                                      CAPSTAN_NTS, 0, &report, NULL, NULL, NULL),
                         CAPSTAN_OK);
            CHECK_CONTAINS(report, "\"ok\":true");
            capstan_string_free(report);
            free(history);
        }
    }
    capstan_string_free(turn);
    /* A fragment cannot give the model's turn: refused, nothing written. */
    char *none = NULL;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_ANTHROPIC,
                                           "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"echo\","
                                           "\"input\":{}}",
                                           CAPSTAN_NTS, &opts, &none, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(none == NULL);
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "CAPSTAN_EXEC_WHOLE_TURN");
    /* Other functions refuse the flag by name. */
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "[]", CAPSTAN_NTS, &opts, &results, NULL),
                 CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(results == NULL);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "CAPSTAN_EXEC_WHOLE_TURN");
    capstan_registry_free(reg);
}

int main(void) {
    test_check_reports_and_repair_fixes();
    test_a_repeated_id_in_a_response_repairs_onto_run_turn_results();
    test_gemini_signatures_are_asked_for_only_with_the_flag();
    test_bad_inputs_are_clear_errors_and_write_nothing();
    test_the_whole_turn_checks_clean();
    return check_report("test_history");
}
