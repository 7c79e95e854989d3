/* Durable calls through the C ABI (issue #47): a journal kept by the host
 * (lookup and record callbacks) sees `started` then `completed` for a call
 * of a run; the same call again under the same run id is answered from it
 * without running the tool; replay mode fails a call missing from the
 * recording without running it; a corrupt JSON Lines journal fails to open
 * naming the line; bad flags and NULLs are refused; the host's destroy runs
 * exactly once, after both the journal and the registry are freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_RECORDS 16

struct store {
    int records;
    char *key[MAX_RECORDS]; /* "run\ncall" */
    char *json[MAX_RECORDS];
    int started, completed, tools, destroyed, fail_record;
};

static char *key_of(const char *run, size_t run_len, const char *call, size_t call_len) {
    char *k = malloc(run_len + call_len + 2);
    memcpy(k, run, run_len);
    k[run_len] = '\n';
    memcpy(k + run_len + 1, call, call_len);
    k[run_len + call_len + 1] = 0;
    return k;
}

/* The run and call of a record, by their JSON fields (this test's records
 * have no escapes in them). */
static int field(const char *json, const char *name, const char **at, size_t *len) {
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":\"", name);
    const char *p = strstr(json, pat);
    if (p == NULL) {
        return 0;
    }
    p += strlen(pat);
    const char *end = strchr(p, '"');
    *at = p;
    *len = (size_t)(end - p);
    return 1;
}

static int32_t record(void *user_data, const char *json, size_t len) {
    struct store *s = user_data;
    if (s->fail_record) {
        return 7;
    }
    char *copy = malloc(len + 1);
    memcpy(copy, json, len);
    copy[len] = 0;
    if (strstr(copy, "\"kind\":\"tools\"") != NULL) {
        s->tools++;
        free(copy);
        return 0;
    }
    const char *run, *call;
    size_t run_len, call_len;
    CHECK(field(copy, "run", &run, &run_len) && field(copy, "call", &call, &call_len));
    char *k = key_of(run, run_len, call, call_len);
    if (strstr(copy, "\"kind\":\"started\"") != NULL) {
        s->started++;
    } else {
        s->completed++;
    }
    for (int i = 0; i < s->records; i++) {
        if (strcmp(s->key[i], k) == 0) {
            free(s->json[i]);
            s->json[i] = copy;
            free(k);
            return 0;
        }
    }
    if (s->records == MAX_RECORDS) {
        free(k);
        free(copy);
        return 1;
    }
    s->key[s->records] = k;
    s->json[s->records] = copy;
    s->records++;
    return 0;
}

static int32_t lookup(void *user_data, const char *run, size_t run_len, const char *call,
                      size_t call_len, capstan_journal_answer *answer) {
    struct store *s = user_data;
    char *k = key_of(run, run_len, call, call_len);
    int32_t rc = 0;
    for (int i = 0; i < s->records; i++) {
        if (strcmp(s->key[i], k) == 0) {
            rc = capstan_journal_answer_set(answer, s->json[i], CAPSTAN_NTS) == CAPSTAN_OK ? 0 : 1;
        }
    }
    free(k);
    return rc;
}

static void destroy(void *user_data) {
    struct store *s = user_data;
    s->destroyed++;
}

static int runs = 0;

static void charge(void *user_data, capstan_call *call) {
    (void)user_data;
    runs++;
    CHECK_STATUS(capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "charged", CAPSTAN_NTS), CAPSTAN_OK);
}

static capstan_registry *registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = "charge";
    def.parameters = "{\"type\":\"object\",\"properties\":{\"amount\":{\"type\":\"integer\"}}}";
    def.callback = charge;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    return reg;
}

static char *execute(capstan_registry *reg, const char *run_id, const char *calls) {
    capstan_exec_options opts = CAPSTAN_EXEC_OPTIONS_INIT;
    opts.run_id = run_id;
    opts.run_id_len = CAPSTAN_NTS;
    char *results = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, calls, CAPSTAN_NTS, &opts, &results, NULL), CAPSTAN_OK);
    return results;
}

static const char *CALL = "{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":5}}";

static void test_a_host_journal_records_and_answers_a_completed_call(void) {
    struct store s;
    memset(&s, 0, sizeof s);
    capstan_journal_callbacks cbs = CAPSTAN_JOURNAL_CALLBACKS_INIT;
    cbs.record = record;
    cbs.lookup = lookup;
    cbs.user_data = &s;
    cbs.destroy = destroy;
    capstan_journal *journal = NULL;
    CHECK_STATUS(capstan_journal_new(&cbs, &journal), CAPSTAN_OK);
    capstan_registry *reg = registry();
    CHECK_STATUS(capstan_registry_set_journal(reg, journal, 0), CAPSTAN_OK);
    capstan_journal_free(journal); /* the registry keeps it */
    runs = 0;
    char *first = execute(reg, "run-1", CALL);
    CHECK(runs == 1 && s.started == 1 && s.completed == 1 && s.tools == 1);
    CHECK_CONTAINS(first, "\"content\":\"charged\"");
    char *again = execute(reg, "run-1", CALL);
    CHECK(runs == 1);
    CHECK_CONTAINS(again, "\"content\":\"charged\"");
    CHECK_CONTAINS(again, "\"outcome\":\"ok\"");
    char *stats = NULL;
    CHECK_STATUS(capstan_registry_stats_json(reg, &stats, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(stats, "\"replayed\":1");
    /* Changed arguments: refused, naming what changed, nothing run. */
    char *changed = execute(reg, "run-1", "{\"id\":\"c1\",\"name\":\"charge\",\"arguments\":{\"amount\":6}}");
    CHECK_CONTAINS(changed, "its arguments changed");
    CHECK(runs == 1);
    /* A `started` the host cannot write keeps the tool from running. */
    s.fail_record = 1;
    char *failed = execute(reg, "run-2", CALL);
    CHECK_CONTAINS(failed, "could not record the start");
    CHECK(runs == 1);
    capstan_string_free(first);
    capstan_string_free(again);
    capstan_string_free(stats);
    capstan_string_free(changed);
    capstan_string_free(failed);
    CHECK(s.destroyed == 0);
    capstan_registry_free(reg);
    CHECK(s.destroyed == 1);
    for (int i = 0; i < s.records; i++) {
        free(s.key[i]);
        free(s.json[i]);
    }
}

static void test_replay_mode_fails_a_missing_call_without_running_it(void) {
    const char *path = "capstan_test_journal_replay.jsonl";
    remove(path);
    capstan_journal *journal = NULL;
    CHECK_STATUS(capstan_journal_open_jsonl(path, CAPSTAN_NTS, &journal), CAPSTAN_OK);
    capstan_registry *reg = registry();
    CHECK_STATUS(capstan_registry_set_journal(reg, journal, CAPSTAN_JOURNAL_REPLAY), CAPSTAN_OK);
    runs = 0;
    char *r = execute(reg, "t", CALL);
    CHECK(runs == 0);
    CHECK_CONTAINS(r, "not in the recording");
    CHECK_CONTAINS(r, "\"is_error\":true");
    capstan_string_free(r);
    /* Without a run id the journal is not used: the tool runs. */
    char *plain = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, CALL, CAPSTAN_NTS, NULL, &plain, NULL), CAPSTAN_OK);
    CHECK(runs == 1);
    capstan_string_free(plain);
    capstan_registry_free(reg);
    capstan_journal_free(journal);
    remove(path);
}

static void test_a_corrupt_journal_file_fails_to_open_naming_the_line(void) {
    const char *path = "capstan_test_journal_corrupt.jsonl";
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f == NULL) {
        return;
    }
    fputs("\n{\"kind\":\"started\"}\n", f);
    fclose(f);
    capstan_journal *journal = NULL;
    CHECK_STATUS(capstan_journal_open_jsonl(path, CAPSTAN_NTS, &journal), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(journal == NULL);
    char msg[512];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "record at line 2");
    remove(path);
}

static void test_bad_arguments_are_refused(void) {
    capstan_journal *journal = NULL;
    CHECK_STATUS(capstan_journal_new(NULL, &journal), CAPSTAN_ERR_NULL_PARAMETER);
    struct store s;
    memset(&s, 0, sizeof s);
    capstan_journal_callbacks cbs;
    CHECK_STATUS(capstan_journal_callbacks_init(&cbs), CAPSTAN_OK);
    CHECK(cbs.struct_size == sizeof cbs && cbs.lookup == NULL);
    cbs.record = record;
    cbs.user_data = &s;
    cbs.destroy = destroy;
    CHECK_STATUS(capstan_journal_new(&cbs, &journal), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(s.destroyed == 1); /* destroy runs even when the journal is not made */
    capstan_registry *reg = registry();
    CHECK_STATUS(capstan_registry_set_journal(reg, NULL, 2), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_registry_set_journal(NULL, NULL, 0), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_status st = capstan_journal_open_sqlite("capstan_test_journal.db", CAPSTAN_NTS, 0, &journal);
    CHECK(st == CAPSTAN_OK || st == CAPSTAN_ERR_UNSUPPORTED);
    if (st == CAPSTAN_ERR_UNSUPPORTED) {
        char msg[512];
        capstan_error_message(msg, sizeof msg);
        CHECK_CONTAINS(msg, "journal-sqlite");
    } else {
        capstan_journal_free(journal);
        remove("capstan_test_journal.db");
        remove("capstan_test_journal.db-wal");
        remove("capstan_test_journal.db-shm");
    }
    CHECK_STATUS(capstan_journal_open_sqlite("x.db", CAPSTAN_NTS, 4, &journal), CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_journal_free(NULL);
    capstan_registry_free(reg);
}

int main(void) {
    test_a_host_journal_records_and_answers_a_completed_call();
    test_replay_mode_fails_a_missing_call_without_running_it();
    test_a_corrupt_journal_file_fails_to_open_naming_the_line();
    test_bad_arguments_are_refused();
    return check_report("test_journal");
}
