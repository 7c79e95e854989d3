/* Registration rules of the C ABI: what capstan_registry_add_tool refuses and why,
 * when each tool's destroy runs, describing tools, and the error/status/version
 * helpers every host uses. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "support.h"

#define WEATHER_SCHEMA                                                      \
    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},"  \
    "\"required\":[\"city\"]}"

static void reply_ok(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "ok", CAPSTAN_NTS);
}

static void reply_v2(void *user_data, capstan_call *call) {
    (void)user_data;
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "v2", CAPSTAN_NTS);
}

static capstan_tool_def make_def(const char *name, capstan_tool_fn fn, atomic_int *destroyed) {
    capstan_tool_def def;
    memset(&def, 0, sizeof def);
    def.struct_size = sizeof def;
    def.name = name;
    def.description = "a test tool";
    def.parameters = WEATHER_SCHEMA;
    def.callback = fn;
    def.user_data = destroyed;
    def.destroy = destroyed ? count_destroy : NULL;
    return def;
}

static capstan_registry *new_registry(void) {
    capstan_registry *reg = NULL;
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    CHECK(reg != NULL);
    return reg;
}

/* ------------------------------------------------------------------------ */

static void null_registry_or_def_is_null_parameter(void) {
    capstan_registry *reg = new_registry();
    capstan_tool_def def = make_def("tool", reply_ok, NULL);
    CHECK_STATUS(capstan_registry_add_tool(NULL, &def), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_add_tool(reg, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_remove_tool(NULL, "tool", CAPSTAN_NTS), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
    capstan_registry_free(NULL); /* a no-op */
}

static void struct_size_too_small_is_invalid_argument(void) {
    capstan_registry *reg = new_registry();
    capstan_tool_def def = make_def("tool", reply_ok, NULL);
    /* The smallest size accepted is the first layout's (up to `flags`, before
     * the appended `mcp_meta`): one byte less is refused. */
    def.struct_size = (uint32_t)offsetof(capstan_tool_def, mcp_meta) - 1;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_ARGUMENT);
    def.struct_size = 0;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_ARGUMENT);
    char msg[256];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "struct_size");
    capstan_registry_free(reg);
}

static void bad_names_are_invalid_name(void) {
    capstan_registry *reg = new_registry();
    char name65[66], name64[65];
    memset(name65, 'a', 65);
    name65[65] = '\0';
    memset(name64, 'b', 64);
    name64[64] = '\0';
    const char *bad[] = {"", "get weather", name65, "get.weather", "wetter/heute", "caf\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        capstan_tool_def def = make_def(bad[i], reply_ok, NULL);
        CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_NAME);
    }
    /* The limits themselves are accepted. */
    const char *good[] = {name64, "a", "Get_Weather-2"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        capstan_tool_def def = make_def(good[i], reply_ok, NULL);
        CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    }
    capstan_tool_def def = make_def(NULL, reply_ok, NULL);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

static void invalid_utf8_name_is_invalid_utf8(void) {
    capstan_registry *reg = new_registry();
    capstan_tool_def def = make_def("bad\xff\xfename", reply_ok, NULL);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_UTF8);
    def = make_def("tool", reply_ok, NULL);
    def.description = "caf\xc3";
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_UTF8);
    CHECK_STATUS(capstan_registry_remove_tool(reg, "\xc0\xaf", CAPSTAN_NTS), CAPSTAN_ERR_INVALID_UTF8);
    capstan_registry_free(reg);
}

/* Registers a tool with `schema`; the status must be INVALID_SCHEMA and the
 * last error must contain `needle`. */
static void check_schema_rejected(capstan_registry *reg, const char *schema, const char *needle,
                                  int line) {
    capstan_tool_def def = make_def("tool", reply_ok, NULL);
    def.parameters = schema;
    capstan_status st = capstan_registry_add_tool(reg, &def);
    char msg[1024] = "(registered)";
    if (st != CAPSTAN_OK) capstan_error_message(msg, sizeof msg);
    check_count++;
    if (st != CAPSTAN_ERR_INVALID_SCHEMA || strstr(msg, needle) == NULL) {
        check_failures++;
        fprintf(stderr, "%s:%d: schema %s: got %s, message \"%s\", expected INVALID_SCHEMA naming \"%s\"\n",
                __FILE__, line, schema, capstan_status_name(st), msg, needle);
    }
}

static void bad_schemas_are_invalid_schema_naming_the_problem(void) {
    capstan_registry *reg = new_registry();
    check_schema_rejected(reg, "{\"type\":\"object\",", "JSON", __LINE__);
    check_schema_rejected(reg, "{\"type\":\"string\"}", "object", __LINE__);
    check_schema_rejected(reg, "true", "object", __LINE__);
    check_schema_rejected(reg, "[1,2]", "object", __LINE__);
    check_schema_rejected(reg, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"strnig\"}}}",
                          "strnig", __LINE__);
    check_schema_rejected(reg, "{\"type\":\"object\",\"minProperties\":-1}", "-1", __LINE__);
    check_schema_rejected(reg, "{\"type\":\"object\",\"properties\":{\"a\":{\"pattern\":\"(\"}}}", "regular expression",
                          __LINE__);
    /* A root that is only a remote $ref is not an object schema. */
    check_schema_rejected(reg, "{\"$ref\":\"https://example.com/s.json\"}", "object schema", __LINE__);
    check_schema_rejected(reg,
                          "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"https://example.com/a.json\"}}}",
                          "https://example.com/a.json", __LINE__);
    /* A $ref inside the schema itself is fine. */
    capstan_tool_def def = make_def("local_ref", reply_ok, NULL);
    def.parameters =
        "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\"}},\"$defs\":{\"s\":{\"type\":\"string\"}}}";
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    capstan_registry_free(reg);
}

static void unknown_flag_bits_are_invalid_argument(void) {
    capstan_registry *reg = new_registry();
    capstan_tool_def def = make_def("tool", reply_ok, NULL);
    def.flags = 1u << 20;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_ARGUMENT);
    def.flags = CAPSTAN_TOOL_SERIAL | (1u << 31);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_ARGUMENT);
    def.flags = CAPSTAN_TOOL_SERIAL | CAPSTAN_TOOL_REQUIRES_APPROVAL | CAPSTAN_TOOL_MAIN_THREAD;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);

    capstan_registry *r2 = NULL;
    capstan_registry_options opts;
    CHECK_STATUS(capstan_registry_options_init(&opts), CAPSTAN_OK);
    opts.flags = 1u << 9;
    CHECK_STATUS(capstan_registry_new(&opts, &r2), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(r2 == NULL);
    opts.flags = 0;
    opts.struct_size = 2;
    CHECK_STATUS(capstan_registry_new(&opts, &r2), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(r2 == NULL);
    CHECK_STATUS(capstan_registry_new(NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

/* The header: "INVALID_ARGUMENT (struct_size, unknown flags, no callback)". */
static void missing_callback_is_invalid_argument(void) {
    capstan_registry *reg = new_registry();
    atomic_int destroyed = 0;
    capstan_tool_def def = make_def("tool", NULL, &destroyed);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(atomic_load(&destroyed) == 1);
    capstan_registry_free(reg);
}

/* Whatever makes registration fail, destroy runs exactly once, before
 * capstan_registry_add_tool returns. */
static void destroy_runs_once_before_a_failed_register_returns(void) {
    capstan_registry *reg = new_registry();
    struct {
        const char *what;
        capstan_registry *reg;
        const char *name;
        const char *schema;
        uint32_t flags;
    } cases[] = {
        {"NULL registry", NULL, "tool", WEATHER_SCHEMA, 0},
        {"empty name", reg, "", WEATHER_SCHEMA, 0},
        {"name with a dot", reg, "a.b", WEATHER_SCHEMA, 0},
        {"name not UTF-8", reg, "n\xff", WEATHER_SCHEMA, 0},
        {"schema not JSON", reg, "tool", "{", 0},
        {"schema not an object", reg, "tool", "{\"type\":\"array\"}", 0},
        {"remote $ref", reg, "tool", "{\"$ref\":\"https://example.com/s.json\"}", 0},
        {"unknown flags", reg, "tool", WEATHER_SCHEMA, 1u << 12},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        atomic_int destroyed = 0;
        capstan_tool_def def = make_def(cases[i].name, reply_ok, &destroyed);
        def.parameters = cases[i].schema;
        def.flags = cases[i].flags;
        capstan_status st = capstan_registry_add_tool(cases[i].reg, &def);
        check_count++;
        if (st == CAPSTAN_OK) { /* a registration bug, reported by the error tests */
            check_failures++;
            fprintf(stderr, "%s:%d: %s: registration succeeded\n", __FILE__, __LINE__, cases[i].what);
            capstan_registry_remove_tool(cases[i].reg, cases[i].name, CAPSTAN_NTS);
            continue;
        }
        int n = atomic_load(&destroyed);
        check_count++;
        if (n != 1) {
            check_failures++;
            fprintf(stderr, "%s:%d: %s (%s): destroy ran %d times before register returned, expected 1\n",
                    __FILE__, __LINE__, cases[i].what, capstan_status_name(st), n);
        }
    }
    capstan_registry_free(reg);
}

/* struct_size too small for the whole struct, but big enough to hold
 * user_data and destroy: the header promises destroy runs "whatever the
 * outcome ... (unless def itself is NULL)". */
static void destroy_runs_once_when_struct_size_is_too_small(void) {
    capstan_registry *reg = new_registry();
    atomic_int destroyed = 0;
    capstan_tool_def def = make_def("tool", reply_ok, &destroyed);
    def.struct_size = (uint32_t)offsetof(capstan_tool_def, timeout_ms);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(atomic_load(&destroyed) == 1);
    capstan_registry_free(reg);
    CHECK(atomic_load(&destroyed) == 1);
}

/* --- replace: the old tool's destroy waits for its call in flight -------- */

static atomic_uintptr_t held_call;
static atomic_int held_ready;

static void hold_call(void *user_data, capstan_call *call) {
    (void)user_data;
    atomic_store(&held_call, (uintptr_t)call);
    atomic_store(&held_ready, 1);
    /* returns without completing: the main thread completes it later */
}

struct exec_job {
    capstan_registry *reg;
    const char *calls;
    capstan_status status;
    char *results;
};

static void *exec_thread(void *arg) {
    struct exec_job *job = arg;
    job->status = capstan_registry_execute(job->reg, job->calls, CAPSTAN_NTS, NULL, &job->results, NULL);
    return NULL;
}

static void replace_destroys_old_tool_after_its_call_in_flight(void) {
    capstan_registry *reg = new_registry();
    atomic_int old_destroyed = 0, new_destroyed = 0;
    atomic_store(&held_ready, 0);
    capstan_tool_def def = make_def("slow", hold_call, &old_destroyed);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);

    struct exec_job job = {reg, "{\"id\":\"old\",\"name\":\"slow\",\"arguments\":{\"city\":\"Oslo\"}}", -1, NULL};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, exec_thread, &job) == 0);
    CHECK(wait_flag(&held_ready, 10000));

    def = make_def("slow", reply_v2, &new_destroyed);
    def.flags = CAPSTAN_TOOL_REPLACE;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    CHECK(atomic_load(&old_destroyed) == 0); /* its call is still in flight */

    /* New calls already reach the new tool. */
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"new\",\"name\":\"slow\",\"arguments\":{\"city\":\"Oslo\"}}",
                                 CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"content\":\"v2\"");
    capstan_string_free(out);
    CHECK(atomic_load(&old_destroyed) == 0);

    capstan_call *call = (capstan_call *)atomic_load(&held_call);
    CHECK_STATUS(capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "v1", CAPSTAN_NTS), CAPSTAN_OK);
    pthread_join(t, NULL);
    CHECK_STATUS(job.status, CAPSTAN_OK);
    CHECK_CONTAINS(job.results, "\"content\":\"v1\"");
    capstan_string_free(job.results);
    CHECK(atomic_load(&old_destroyed) == 1);
    CHECK(atomic_load(&new_destroyed) == 0);

    capstan_registry_free(reg);
    CHECK(atomic_load(&old_destroyed) == 1);
    CHECK(atomic_load(&new_destroyed) == 1);
}

static void unregister_runs_destroy_once(void) {
    capstan_registry *reg = new_registry();
    atomic_int destroyed = 0;
    capstan_tool_def def = make_def("tool", reply_ok, &destroyed);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    CHECK(atomic_load(&destroyed) == 0);
    CHECK_STATUS(capstan_registry_remove_tool(reg, "tool", CAPSTAN_NTS), CAPSTAN_OK);
    CHECK(atomic_load(&destroyed) == 1);
    /* Once gone it is an unknown tool. */
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"name\":\"tool\"}", CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"outcome\":\"unknown_tool\"");
    capstan_string_free(out);
    capstan_registry_free(reg);
    CHECK(atomic_load(&destroyed) == 1);
}

static void unregister_of_missing_name_is_not_found(void) {
    capstan_registry *reg = new_registry();
    atomic_int destroyed = 0;
    capstan_tool_def def = make_def("tool", reply_ok, &destroyed);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_remove_tool(reg, "other", CAPSTAN_NTS), CAPSTAN_ERR_NOT_FOUND);
    CHECK_STATUS(capstan_registry_remove_tool(reg, "tool", 3), CAPSTAN_ERR_NOT_FOUND); /* "too" */
    CHECK(atomic_load(&destroyed) == 0);
    CHECK_STATUS(capstan_registry_remove_tool(reg, "tool", CAPSTAN_NTS), CAPSTAN_OK);
    CHECK_STATUS(capstan_registry_remove_tool(reg, "tool", CAPSTAN_NTS), CAPSTAN_ERR_NOT_FOUND);
    CHECK(atomic_load(&destroyed) == 1);
    capstan_registry_free(reg);
}

static void registry_free_runs_each_destroy_once(void) {
    capstan_registry *reg = new_registry();
    atomic_int destroyed[3] = {0, 0, 0};
    const char *names[3] = {"one", "two", "three"};
    for (int i = 0; i < 3; i++) {
        capstan_tool_def def = make_def(names[i], reply_ok, &destroyed[i]);
        CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    }
    /* A tool with no destroy is fine too. */
    capstan_tool_def def = make_def("four", reply_ok, NULL);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    for (int i = 0; i < 3; i++) CHECK(atomic_load(&destroyed[i]) == 0);
    capstan_registry_free(reg);
    for (int i = 0; i < 3; i++) CHECK(atomic_load(&destroyed[i]) == 1);
}

static void tools_json_describe_lists_names_descriptions_parameters(void) {
    capstan_registry *reg = new_registry();
    capstan_tool_def def = make_def("zeta_weather", reply_ok, NULL);
    def.description = "Current weather in a city";
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    def = make_def("alpha_time", reply_ok, NULL);
    def.description = "Local time in Z\xc3\xbcrich";
    def.parameters = "{\"type\":\"object\",\"properties\":{\"tz\":{\"type\":\"string\"}}}";
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);

    /* NULL description and parameters mean "" and an object schema. */
    def = make_def("mid_plain", reply_ok, NULL);
    def.description = NULL;
    def.parameters = NULL;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);

    char *out = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_DESCRIBE, NULL, &out, &len, NULL, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "{\"name\":\"mid_plain\",\"description\":\"\",\"parameters\":{\"type\":\"object\"},\"flags\":[]}");
    CHECK(out != NULL && strlen(out) == len);
    CHECK(out != NULL && out[0] == '[');
    CHECK_CONTAINS(out, "\"name\":\"zeta_weather\"");
    CHECK_CONTAINS(out, "\"description\":\"Current weather in a city\"");
    CHECK_CONTAINS(out, "\"name\":\"alpha_time\"");
    CHECK_CONTAINS(out, "\"description\":\"Local time in Z\xc3\xbcrich\"");
    CHECK_CONTAINS(out, "\"parameters\":{");
    CHECK_CONTAINS(out, "\"city\":{\"type\":\"string\"}");
    CHECK_CONTAINS(out, "\"tz\":{\"type\":\"string\"}");
    /* sorted by name */
    const char *a = out ? strstr(out, "alpha_time") : NULL, *z = out ? strstr(out, "zeta_weather") : NULL;
    const char *m = out ? strstr(out, "mid_plain") : NULL;
    CHECK(a != NULL && m != NULL && z != NULL && a < m && m < z);
    capstan_string_free(out);

    /* out_len may be NULL; an empty registry is an empty list. */
    capstan_registry *empty = new_registry();
    out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(empty, CAPSTAN_FORMAT_DESCRIBE, NULL, &out, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK(out != NULL && strcmp(out, "[]") == 0);
    capstan_string_free(out);
    capstan_registry_free(empty);

    /* Failures write nothing. */
    char *sentinel = (char *)&sentinel;
    out = sentinel;
    len = 77;
    CHECK_STATUS(capstan_registry_tools_json(reg, 999, NULL, &out, &len, NULL, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK(out == sentinel && len == 77);
    CHECK_STATUS(capstan_registry_tools_json(NULL, CAPSTAN_FORMAT_DESCRIBE, NULL, &out, &len, NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(out == sentinel && len == 77);
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_DESCRIBE, NULL, NULL, &len, NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

static void last_error_returns_full_length_and_truncates_safely(void) {
    capstan_registry *reg = new_registry();
    /* "é" is two bytes: the message quotes the name, so a cut can land inside it. */
    CHECK_STATUS(capstan_registry_remove_tool(reg, "x\xc3\xa9y", CAPSTAN_NTS), CAPSTAN_ERR_NOT_FOUND);

    size_t full = capstan_error_message(NULL, 0);
    CHECK(full > 0);
    char whole[512];
    CHECK(capstan_error_message(whole, sizeof whole) == full);
    CHECK(strlen(whole) == full);
    CHECK_CONTAINS(whole, "x\xc3\xa9y");

    char small[6];
    memset(small, 'Z', sizeof small);
    CHECK(capstan_error_message(small, sizeof small) == full);
    CHECK(small[5] == '\0');
    CHECK(strncmp(small, whole, 5) == 0);

    char one = 'Z';
    CHECK(capstan_error_message(&one, 1) == full);
    CHECK(one == '\0');

    /* Cut in the middle of "é": the copy stops before it, still NUL-terminated. */
    const char *e = strstr(whole, "\xc3\xa9");
    CHECK(e != NULL);
    if (e != NULL) {
        size_t at = (size_t)(e - whole);
        char cut[512];
        memset(cut, 'Z', sizeof cut);
        CHECK(capstan_error_message(cut, at + 2) == full); /* room for one byte of "é" */
        CHECK(strlen(cut) == at);
        CHECK(strncmp(cut, whole, at) == 0);
    }

    /* Exactly full + 1 holds it all. */
    char *exact = malloc(full + 1);
    CHECK(exact != NULL);
    if (exact != NULL) {
        CHECK(capstan_error_message(exact, full + 1) == full);
        CHECK(strcmp(exact, whole) == 0);
        free(exact);
    }
    capstan_registry_free(reg);
}

static void *fail_on_other_thread(void *arg) {
    (void)arg;
    capstan_registry_add_tool(NULL, NULL);
    return NULL;
}

static void last_error_is_per_thread(void) {
    capstan_registry *reg = new_registry();
    CHECK_STATUS(capstan_registry_remove_tool(reg, "nothing_here", CAPSTAN_NTS), CAPSTAN_ERR_NOT_FOUND);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fail_on_other_thread, NULL) == 0);
    pthread_join(t, NULL);
    char msg[256];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "nothing_here");
    capstan_registry_free(reg);
}

static void status_name_names_every_status(void) {
    static const char *names[] = {
        "CAPSTAN_OK",
        "CAPSTAN_ERR_NULL_PARAMETER",
        "CAPSTAN_ERR_INVALID_ARGUMENT",
        "CAPSTAN_ERR_INVALID_UTF8",
        "CAPSTAN_ERR_INVALID_NAME",
        "CAPSTAN_ERR_INVALID_SCHEMA",
        "CAPSTAN_ERR_INVALID_CALLS",
        "CAPSTAN_ERR_INVALID_RESULTS",
        "CAPSTAN_ERR_INVALID_RESPONSE",
        "CAPSTAN_ERR_INVALID_CONTENT",
        "CAPSTAN_ERR_NOT_FOUND",
        "CAPSTAN_ERR_ALREADY_COMPLETED",
        "CAPSTAN_ERR_STALE_HANDLE",
        "CAPSTAN_ERR_TIMEOUT",
        "CAPSTAN_ERR_SHUTTING_DOWN",
        "CAPSTAN_ERR_WRONG_CONTEXT",
        "CAPSTAN_ERR_PANIC",
        "CAPSTAN_ERR_INTERNAL",
        "CAPSTAN_ERR_PROVIDER_ERROR",
    };
    static const capstan_status values[] = {
        CAPSTAN_OK,
        CAPSTAN_ERR_NULL_PARAMETER,
        CAPSTAN_ERR_INVALID_ARGUMENT,
        CAPSTAN_ERR_INVALID_UTF8,
        CAPSTAN_ERR_INVALID_NAME,
        CAPSTAN_ERR_INVALID_SCHEMA,
        CAPSTAN_ERR_INVALID_CALLS,
        CAPSTAN_ERR_INVALID_RESULTS,
        CAPSTAN_ERR_INVALID_RESPONSE,
        CAPSTAN_ERR_INVALID_CONTENT,
        CAPSTAN_ERR_NOT_FOUND,
        CAPSTAN_ERR_ALREADY_COMPLETED,
        CAPSTAN_ERR_STALE_HANDLE,
        CAPSTAN_ERR_TIMEOUT,
        CAPSTAN_ERR_SHUTTING_DOWN,
        CAPSTAN_ERR_WRONG_CONTEXT,
        CAPSTAN_ERR_PANIC,
        CAPSTAN_ERR_INTERNAL,
        CAPSTAN_ERR_PROVIDER_ERROR,
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        const char *got = capstan_status_name(values[i]);
        check_count++;
        if (got == NULL || strcmp(got, names[i]) != 0) {
            check_failures++;
            fprintf(stderr, "%s:%d: capstan_status_name(%d) = %s, expected %s\n", __FILE__, __LINE__,
                    (int)values[i], got ? got : "(null)", names[i]);
        }
    }
    const capstan_status unknown[] = {-1, 99, 1000, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *got = capstan_status_name(unknown[i]);
        CHECK(got != NULL && strcmp(got, "CAPSTAN_UNKNOWN_STATUS") == 0);
    }
}

static void version_is_a_static_version_string(void) {
    const char *v = capstan_version_string();
    CHECK(v != NULL);
    if (v == NULL) return;
    int major = -1, minor = -1, patch = -1;
    CHECK(sscanf(v, "%d.%d.%d", &major, &minor, &patch) == 3);
    CHECK(major >= 0 && minor >= 0 && patch >= 0);
    CHECK(capstan_version_string() == v);
}

/* Search (issue #32): ranked by words or by a regular expression; bad input
 * is a status and a message naming what was wrong, and writes nothing. */
static void search_finds_tools_by_words_or_pattern(void) {
    capstan_registry *reg = new_registry();
    capstan_tool_def def = make_def("get_weather", reply_ok, NULL);
    def.description = "Current weather in a city";
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    def = make_def("sendEmail", reply_ok, NULL);
    def.description = "Sends a message";
    def.parameters = "{\"type\":\"object\",\"properties\":{\"recipient\":{\"type\":\"string\"}}}";
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);

    char *out = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_registry_search_json(reg, "send email", CAPSTAN_NTS, NULL, &out, &len), CAPSTAN_OK);
    CHECK(out != NULL && strlen(out) == len);
    CHECK_CONTAINS(out, "\"mode\":\"words\",\"results\":[{\"name\":\"sendEmail\",\"description\":\"Sends a message\"");
    capstan_string_free(out);

    /* Added after a search: found by the next one. Regex and a limit. */
    def = make_def("weather_alerts", reply_ok, NULL);
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    capstan_search_options opts = CAPSTAN_SEARCH_OPTIONS_INIT;
    opts.flags = CAPSTAN_SEARCH_REGEX;
    opts.limit = 1;
    out = NULL;
    CHECK_STATUS(capstan_registry_search_json(reg, "^weather", 8, &opts, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"results\":[{\"name\":\"weather_alerts\"");
    CHECK(out != NULL && strstr(out, "get_weather") == NULL);
    capstan_string_free(out);

    char *sentinel = (char *)&sentinel;
    char msg[256];
    out = sentinel;
    CHECK_STATUS(capstan_registry_search_json(reg, "(", CAPSTAN_NTS, &opts, &out, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "pattern is not valid");
    opts.flags = 1u << 20;
    CHECK_STATUS(capstan_registry_search_json(reg, "x", CAPSTAN_NTS, &opts, &out, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "unknown search flags 0x100000");
    opts.flags = 0;
    opts.limit = 101;
    CHECK_STATUS(capstan_registry_search_json(reg, "x", CAPSTAN_NTS, &opts, &out, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_registry_search_json(reg, "", 0, NULL, &out, NULL), CAPSTAN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(capstan_registry_search_json(reg, "\xff", CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_ERR_INVALID_UTF8);
    CHECK_STATUS(capstan_registry_search_json(reg, NULL, 3, NULL, &out, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_search_json(NULL, "x", CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(out == sentinel);
    CHECK_STATUS(capstan_registry_search_json(reg, "x", CAPSTAN_NTS, NULL, NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

/* The search tool (issue #32): deferred tools stay out of the provider
 * export until the model's search finds them; then they are shown. */
static void search_tool_loads_the_deferred_tools_it_finds(void) {
    capstan_registry *reg = new_registry();
    capstan_tool_def def = make_def("forecast_weather", reply_ok, NULL);
    def.description = "Weather forecast for a city";
    def.flags = CAPSTAN_TOOL_DEFERRED;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
    capstan_search_tool_options opts = CAPSTAN_SEARCH_TOOL_OPTIONS_INIT;
    opts.name = "find_tools";
    CHECK_STATUS(capstan_registry_add_search_tool(reg, &opts), CAPSTAN_OK);

    char *out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_ANTHROPIC, NULL, &out, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"name\":\"find_tools\"");
    CHECK(out != NULL && strstr(out, "forecast_weather") == NULL);
    capstan_string_free(out);

    const char *response =
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\","
        "\"name\":\"find_tools\",\"input\":{\"query\":\"weather\"}}]}";
    out = NULL;
    CHECK_STATUS(capstan_registry_run_turn(reg, CAPSTAN_FORMAT_ANTHROPIC, response, CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "forecast_weather");
    capstan_string_free(out);
    out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_ANTHROPIC, NULL, &out, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK_CONTAINS(out, "\"name\":\"forecast_weather\"");
    capstan_string_free(out);

    /* Unloaded: hidden again. Bad options: a status and a message. */
    CHECK_STATUS(capstan_registry_unload_tools(reg), CAPSTAN_OK);
    out = NULL;
    CHECK_STATUS(capstan_registry_tools_json(reg, CAPSTAN_FORMAT_ANTHROPIC, NULL, &out, NULL, NULL, NULL), CAPSTAN_OK);
    CHECK(out != NULL && strstr(out, "forecast_weather") == NULL);
    capstan_string_free(out);
    opts.limit = 101;
    CHECK_STATUS(capstan_registry_add_search_tool(reg, &opts), CAPSTAN_ERR_INVALID_ARGUMENT);
    opts.limit = 0;
    opts.name = "bad name";
    CHECK_STATUS(capstan_registry_add_search_tool(reg, &opts), CAPSTAN_ERR_INVALID_NAME);
    CHECK_STATUS(capstan_registry_add_search_tool(NULL, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_unload_tools(NULL), CAPSTAN_ERR_NULL_PARAMETER);
    capstan_registry_free(reg);
}

int main(void) {
    null_registry_or_def_is_null_parameter();
    struct_size_too_small_is_invalid_argument();
    bad_names_are_invalid_name();
    invalid_utf8_name_is_invalid_utf8();
    bad_schemas_are_invalid_schema_naming_the_problem();
    unknown_flag_bits_are_invalid_argument();
    missing_callback_is_invalid_argument();
    destroy_runs_once_before_a_failed_register_returns();
    destroy_runs_once_when_struct_size_is_too_small();
    replace_destroys_old_tool_after_its_call_in_flight();
    unregister_runs_destroy_once();
    unregister_of_missing_name_is_not_found();
    registry_free_runs_each_destroy_once();
    tools_json_describe_lists_names_descriptions_parameters();
    search_finds_tools_by_words_or_pattern();
    search_tool_loads_the_deferred_tools_it_finds();
    last_error_returns_full_length_and_truncates_safely();
    last_error_is_per_thread();
    status_name_names_every_status();
    version_is_a_static_version_string();
    return check_report("test_registry");
}
