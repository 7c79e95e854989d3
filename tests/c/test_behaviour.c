/* The C ABI against tests/fixtures/binding_behaviour.json, the table every
 * binding's suite checks (issue #49.6): format codes, ids of calls without
 * one, the status/outcome and message of the same mistakes. The table has one
 * row a line, read here by plain string search (run from the repository root,
 * as `make c-tests` does). Also the duplicate-registration rule (#49.5): the
 * old tool still runs, the refused def's destroy runs before the call returns. */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "support.h"

#define FIXTURE "tests/fixtures/binding_behaviour.json"

static void reply(void *user_data, capstan_call *call) {
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, user_data ? "new" : "old", CAPSTAN_NTS);
}

static capstan_tool_def def_of(const char *name, int is_new, atomic_int *destroyed) {
    capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
    def.name = name;
    def.callback = reply;
    /* user_data: non-NULL for the "new" handler; destroy counts in `destroyed`. */
    def.user_data = is_new ? (void *)destroyed : NULL;
    def.destroy = is_new ? count_destroy : NULL;
    return def;
}

/* The text of `"key": "..."` in `line` (no escapes in the table's values), or NULL. */
static int field(const char *line, const char *key, char *out, size_t cap) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *at = strstr(line, pat);
    if (!at) return 0;
    at += strlen(pat);
    const char *end = strchr(at, '"');
    if (!end || (size_t)(end - at) >= cap) return 0;
    memcpy(out, at, (size_t)(end - at));
    out[end - at] = '\0';
    return 1;
}

static int int_field(const char *line, const char *key, int *out) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *at = strstr(line, pat);
    if (!at) return 0;
    *out = atoi(at + strlen(pat));
    return 1;
}

static char *execute(capstan_registry *reg, const char *calls, capstan_status *status) {
    char *out = NULL;
    *status = capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &out, NULL);
    return out;
}

static const struct {
    const char *name;
    capstan_format code;
} C_FORMATS[] = {
    {"describe", CAPSTAN_FORMAT_DESCRIBE},
    {"openai_chat", CAPSTAN_FORMAT_OPENAI_CHAT},
    {"openai_responses", CAPSTAN_FORMAT_OPENAI_RESPONSES},
    {"anthropic", CAPSTAN_FORMAT_ANTHROPIC},
    {"gemini", CAPSTAN_FORMAT_GEMINI},
    {"mcp", CAPSTAN_FORMAT_MCP},
};
#define N_FORMATS (sizeof C_FORMATS / sizeof C_FORMATS[0])

static void format_row(capstan_registry *reg, const char *line, int *canonical_seen) {
    char name[64];
    int code;
    CHECK(field(line, "name", name, sizeof name) || strstr(line, "\"name\": \"\"") != NULL);
    if (!strstr(line, "\"canonical\": true")) return; /* C takes formats by code, not by name */
    CHECK(int_field(line, "code", &code));
    int found = 0;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strcmp(C_FORMATS[i].name, name) == 0) {
            CHECK((int)C_FORMATS[i].code == code);
            found = 1;
        }
    if (!found) fprintf(stderr, "format %s of the table has no CAPSTAN_FORMAT_ constant here\n", name);
    CHECK(found);
    char *json = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, (capstan_format)code, NULL, &json, NULL, NULL, NULL), CAPSTAN_OK);
    capstan_string_free(json);
    (*canonical_seen)++;
}

static void id_row(capstan_registry *reg, const char *line) {
    int index;
    char id[32], calls[512] = "[", want[64];
    CHECK(int_field(line, "index", &index) && field(line, "id", id, sizeof id));
    for (int i = 0; i <= index; i++) strcat(calls, i ? ",{\"name\":\"f\"}" : "{\"name\":\"f\"}");
    strcat(calls, "]");
    capstan_status status;
    char *out = execute(reg, calls, &status);
    CHECK_STATUS(status, CAPSTAN_OK);
    snprintf(want, sizeof want, "\"id\":\"%s\"", id);
    CHECK_CONTAINS(out, want);
    capstan_string_free(out);
}

static void check_error(capstan_status status, const char *line, const char *tool) {
    char want[64], fragment[128], message[1024];
    CHECK(field(line, "status", want, sizeof want) && field(line, "fragment", fragment, sizeof fragment));
    CHECK(strcmp(capstan_status_name(status), want) == 0);
    capstan_error_message(message, sizeof message);
    CHECK_CONTAINS(message, fragment);
    if (tool) CHECK_CONTAINS(message, tool);
}

static void check_outcome(capstan_registry *reg, const char *line, const char *calls, const char *tool) {
    char outcome[64], fragment[128], want[96];
    CHECK(field(line, "outcome", outcome, sizeof outcome) && field(line, "fragment", fragment, sizeof fragment));
    capstan_status status;
    char *out = execute(reg, calls, &status);
    CHECK_STATUS(status, CAPSTAN_OK);
    snprintf(want, sizeof want, "\"outcome\":\"%s\"", outcome);
    CHECK_CONTAINS(out, want);
    CHECK_CONTAINS(out, fragment);
    if (tool) CHECK_CONTAINS(out, tool);
    capstan_string_free(out);
}

static void error_row(capstan_registry *reg, const char *line) {
    char mistake[64], text[256];
    CHECK(field(line, "mistake", mistake, sizeof mistake));
    if (strcmp(mistake, "duplicate_registration") == 0) {
        atomic_int destroyed = 0;
        capstan_tool_def def = def_of("f", 1, &destroyed);
        capstan_status status = capstan_registry_add_tool(reg, &def);
        CHECK(atomic_load(&destroyed) == 1); /* refused: its destroy already ran */
        check_error(status, line, "\"f\"");
        char message[1024];
        capstan_error_message(message, sizeof message);
        CHECK_CONTAINS(message, "CAPSTAN_TOOL_REPLACE"); /* says how to replace */
        check_outcome(reg, "{\"outcome\": \"ok\", \"fragment\": \"old\"}", "[{\"name\":\"f\"}]", NULL);
    } else if (strcmp(mistake, "unknown_tool") == 0) {
        check_outcome(reg, line, "[{\"id\":\"a\",\"name\":\"nope\"}]", "nope");
    } else if (strncmp(mistake, "arguments_not_", 14) == 0) {
        char args[64], calls[256];
        CHECK(field(line, "arguments", args, sizeof args));
        snprintf(calls, sizeof calls, "[{\"id\":\"a\",\"name\":\"f\",\"arguments\":\"%s\"}]", args);
        check_outcome(reg, line, calls, NULL);
    } else if (strcmp(mistake, "unknown_format") == 0) {
        char *json = NULL;
        check_error(capstan_registry_tools_json(reg, (capstan_format)99, NULL, &json, NULL, NULL, NULL), line, NULL);
        CHECK(json == NULL);
    } else if (strcmp(mistake, "provider_shaped_call") == 0) {
        const char *call = strstr(line, "\"call\": ");
        const char *end = call ? strstr(call, ", \"status\"") : NULL;
        CHECK(call && end);
        snprintf(text, sizeof text, "[%.*s]", (int)(end - call - 8), call + 8);
        capstan_status status;
        char *out = execute(reg, text, &status);
        CHECK(out == NULL);
        check_error(status, line, NULL);
    } else {
        fprintf(stderr, "unknown mistake %s in " FIXTURE "\n", mistake);
        CHECK(0);
    }
}

static void every_row_of_the_table_holds(void) {
    FILE *f = fopen(FIXTURE, "r");
    CHECK(f != NULL);
    if (!f) return;
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    capstan_tool_def def = def_of("f", 0, NULL);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    char line[2048], section[32] = "";
    int rows = 0, canonical = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "\"formats\": [")) strcpy(section, "formats");
        else if (strstr(line, "\"ids\": [")) strcpy(section, "ids");
        else if (strstr(line, "\"errors\": [")) strcpy(section, "errors");
        else if (strstr(line, "    {") == line) {
            rows++;
            if (strcmp(section, "formats") == 0) format_row(reg, line, &canonical);
            else if (strcmp(section, "ids") == 0) id_row(reg, line);
            else if (strcmp(section, "errors") == 0) error_row(reg, line);
        }
    }
    fclose(f);
    CHECK(rows >= 18);
    CHECK(canonical == (int)N_FORMATS); /* every C format has its row */
    capstan_registry_free(reg);
}

static void replace_flag_replaces_and_the_old_destroy_runs(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    atomic_int old_destroyed = 0, new_destroyed = 0;
    capstan_tool_def def = def_of("f", 1, &old_destroyed);
    def.callback = reply;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    def = def_of("f", 1, &new_destroyed);
    def.flags = CAPSTAN_TOOL_REPLACE;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    CHECK(atomic_load(&old_destroyed) == 1 && atomic_load(&new_destroyed) == 0);
    /* The flag is how to register, not part of the tool. */
    char *json = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_DESCRIBE, NULL, &json, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK(json && strstr(json, "eplace") == NULL);
    capstan_string_free(json);
    /* On a name not yet registered it simply registers. */
    def = def_of("g", 0, NULL);
    def.flags = CAPSTAN_TOOL_REPLACE;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    capstan_registry_free(reg);
    CHECK(atomic_load(&new_destroyed) == 1);
}

int main(void) {
    every_row_of_the_table_holds();
    replace_flag_replaces_and_the_old_destroy_runs();
    return check_report("test_behaviour");
}
