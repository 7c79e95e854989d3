/* Argument validation through capstan_registry_execute: what the model reads when its
 * call is wrong, what the tool sees when it is right, and which calls JSON is
 * refused outright. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

#define WEATHER_SCHEMA                                                                   \
    "{\"type\":\"object\","                                                               \
    "\"properties\":{\"city\":{\"type\":\"string\"},"                                     \
    "\"units\":{\"enum\":[\"celsius\",\"fahrenheit\"],\"default\":\"celsius\"}},"         \
    "\"required\":[\"city\"],\"additionalProperties\":false}"

#define TRIP_SCHEMA                                                                      \
    "{\"type\":\"object\",\"properties\":{\"trip\":{\"type\":\"object\","                 \
    "\"properties\":{\"nights\":{\"type\":\"integer\"}}}}}"

static capstan_registry *reg;

/* What the last tool callback saw, and how many callbacks ran. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char seen_args[1024];
static size_t seen_len;
static atomic_int invocations;

static void record_args(void *user_data, capstan_call *call) {
    (void)user_data;
    size_t len = 0;
    const char *args = capstan_call_arguments(call, &len);
    pthread_mutex_lock(&seen_lock);
    snprintf(seen_args, sizeof seen_args, "%s", args ? args : "(null)");
    seen_len = len;
    pthread_mutex_unlock(&seen_lock);
    atomic_fetch_add(&invocations, 1);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "done", CAPSTAN_NTS);
}

static void register_tool(const char *name, const char *schema) {
    capstan_tool_def def;
    memset(&def, 0, sizeof def);
    def.struct_size = sizeof def;
    def.name = name;
    def.description = "test tool";
    def.parameters = schema;
    def.callback = record_args;
    CHECK_STATUS(capstan_registry_add_tool(reg, &def), CAPSTAN_OK);
}

/* The text of `"key":"<value>"` in the first result of `json` (still
 * JSON-escaped), copied into `buf`; "" if absent. */
static const char *field(const char *json, const char *key, char *buf, size_t cap) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    buf[0] = '\0';
    const char *p = json ? strstr(json, pattern) : NULL;
    if (p == NULL) return buf;
    p += strlen(pattern);
    size_t n = 0;
    while (p[n] != '\0' && p[n] != '"' && n + 1 < cap) {
        if (p[n] == '\\' && p[n + 1] != '\0' && n + 2 < cap) n++;
        n++;
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

/* Runs one call and returns its results JSON (caller frees). */
static char *run(const char *calls) {
    char *out = NULL;
    size_t len = 0;
    CHECK_STATUS(capstan_registry_execute(reg, calls, CAPSTAN_NTS, NULL, &out, &len), CAPSTAN_OK);
    CHECK(out != NULL && strlen(out) == len);
    return out;
}

#define CHECK_OUTCOME(json, expected)                                                    \
    do {                                                                                 \
        char o_[64];                                                                     \
        field((json), "outcome", o_, sizeof o_);                                         \
        check_count++;                                                                   \
        if (strcmp(o_, (expected)) != 0) {                                               \
            check_failures++;                                                            \
            fprintf(stderr, "%s:%d: outcome \"%s\", expected \"%s\" in: %s\n", __FILE__, \
                    __LINE__, o_, (expected), (json) ? (json) : "(null)");               \
        }                                                                                \
    } while (0)

/* ------------------------------------------------------------------------ */

static void missing_required_argument_is_named(void) {
    int before = atomic_load(&invocations);
    char *out = run("{\"id\":\"w1\",\"name\":\"get_weather\",\"arguments\":{}}");
    char content[1024];
    CHECK_OUTCOME(out, "invalid_arguments");
    CHECK_CONTAINS(out, "\"is_error\":true");
    CHECK_CONTAINS(out, "\"id\":\"w1\"");
    CHECK_CONTAINS(field(out, "content", content, sizeof content), "city");
    CHECK(atomic_load(&invocations) == before); /* the tool never ran */
    capstan_string_free(out);
}

static void enum_violation_names_the_value_and_the_allowed_values(void) {
    char *out = run("{\"id\":\"w2\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\",\"units\":\"kelvin\"}}");
    char content[1024];
    field(out, "content", content, sizeof content);
    CHECK_OUTCOME(out, "invalid_arguments");
    CHECK_CONTAINS(content, "kelvin");
    CHECK_CONTAINS(content, "celsius");
    CHECK_CONTAINS(content, "fahrenheit");
    capstan_string_free(out);
}

static void unexpected_argument_is_named(void) {
    char *out = run("{\"id\":\"w3\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\",\"windspeed\":3}}");
    char content[1024];
    CHECK_OUTCOME(out, "invalid_arguments");
    CHECK_CONTAINS(field(out, "content", content, sizeof content), "windspeed");
    capstan_string_free(out);
}

static void every_argument_error_is_reported_at_once(void) {
    char *out = run("{\"id\":\"w4\",\"name\":\"get_weather\",\"arguments\":{\"units\":\"kelvin\",\"windspeed\":3}}");
    char content[1024];
    field(out, "content", content, sizeof content);
    CHECK_OUTCOME(out, "invalid_arguments");
    CHECK_CONTAINS(content, "city");
    CHECK_CONTAINS(content, "kelvin");
    CHECK_CONTAINS(content, "windspeed");
    capstan_string_free(out);
}

static void argument_errors_say_where_with_a_json_pointer(void) {
    char *out = run("{\"id\":\"t1\",\"name\":\"book\",\"arguments\":{\"trip\":{\"nights\":\"two\"}}}");
    char content[1024];
    field(out, "content", content, sizeof content);
    CHECK_OUTCOME(out, "invalid_arguments");
    CHECK_CONTAINS(content, "/trip/nights");
    CHECK_CONTAINS(content, "integer");
    capstan_string_free(out);
}

static void defaults_are_filled_in_what_the_callback_sees(void) {
    char *out = run("{\"id\":\"w5\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}");
    CHECK_OUTCOME(out, "ok");
    capstan_string_free(out);
    pthread_mutex_lock(&seen_lock);
    CHECK_CONTAINS(seen_args, "\"city\":\"Oslo\"");
    CHECK_CONTAINS(seen_args, "\"units\":\"celsius\"");
    CHECK(seen_len == strlen(seen_args));
    pthread_mutex_unlock(&seen_lock);

    /* A value given is kept, not overwritten by the default. */
    out = run("{\"id\":\"w6\",\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\",\"units\":\"fahrenheit\"}}");
    CHECK_OUTCOME(out, "ok");
    capstan_string_free(out);
    pthread_mutex_lock(&seen_lock);
    CHECK_CONTAINS(seen_args, "\"units\":\"fahrenheit\"");
    pthread_mutex_unlock(&seen_lock);
}

static void arguments_as_a_json_string_are_accepted(void) {
    char *out = run("{\"id\":\"w7\",\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Bergen\\\"}\"}");
    CHECK_OUTCOME(out, "ok");
    CHECK_CONTAINS(out, "\"content\":\"done\"");
    capstan_string_free(out);
    pthread_mutex_lock(&seen_lock);
    CHECK_CONTAINS(seen_args, "\"city\":\"Bergen\"");
    pthread_mutex_unlock(&seen_lock);
}

/* "ping" has no required argument, so treating a malformed string as {}
 * would run it: it must not. */
static void malformed_argument_string_is_invalid_arguments_never_empty_object(void) {
    const char *calls[] = {
        "{\"id\":\"p1\",\"name\":\"ping\",\"arguments\":\"{\\\"q\\\": \"}",
        "{\"id\":\"p2\",\"name\":\"ping\",\"arguments\":\"not json at all\"}",
        "{\"id\":\"p3\",\"name\":\"ping\",\"arguments\":\"[1,2]\"}",
        "{\"id\":\"p4\",\"name\":\"ping\",\"arguments\":5}",
    };
    int before = atomic_load(&invocations);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char *out = run(calls[i]);
        CHECK_OUTCOME(out, "invalid_arguments");
        CHECK_CONTAINS(out, "\"is_error\":true");
        capstan_string_free(out);
    }
    CHECK(atomic_load(&invocations) == before);
    /* The control: a well-formed string runs it. */
    char *out = run("{\"id\":\"p5\",\"name\":\"ping\",\"arguments\":\"{\\\"q\\\":1}\"}");
    CHECK_OUTCOME(out, "ok");
    capstan_string_free(out);
    CHECK(atomic_load(&invocations) == before + 1);
}

static void unknown_tool_lists_the_closest_match(void) {
    char *out = run("{\"id\":\"u1\",\"name\":\"get_wether\",\"arguments\":{\"city\":\"Oslo\"}}");
    char content[1024];
    field(out, "content", content, sizeof content);
    CHECK_OUTCOME(out, "unknown_tool");
    CHECK_CONTAINS(out, "\"is_error\":true");
    CHECK_CONTAINS(content, "get_wether");
    CHECK_CONTAINS(content, "Did you mean \\\"get_weather\\\"");
    CHECK_CONTAINS(content, "ping"); /* the available tools are listed */
    capstan_string_free(out);

    /* Nothing close: no suggestion, still the list. */
    out = run("{\"id\":\"u2\",\"name\":\"zzzzzz\"}");
    field(out, "content", content, sizeof content);
    CHECK_OUTCOME(out, "unknown_tool");
    CHECK(strstr(content, "Did you mean") == NULL);
    CHECK_CONTAINS(content, "get_weather");
    capstan_string_free(out);
}

static void malformed_calls_json_is_invalid_calls_and_writes_nothing(void) {
    const char *bad[] = {
        "{nope",
        "",
        "42",
        "\"get_weather\"",
        "null",
        "{\"id\":\"1\",\"arguments\":{}}",
        "{\"id\":\"1\",\"name\":7}",
        "[{\"name\":\"ping\"},{\"id\":\"2\"}]",
        "[{\"name\":\"ping\"},3]",
    };
    int before = atomic_load(&invocations);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *sentinel = (char *)&bad;
        char *out = sentinel;
        size_t len = 12345;
        capstan_status st = capstan_registry_execute(reg, bad[i], CAPSTAN_NTS, NULL, &out, &len);
        check_count++;
        if (st != CAPSTAN_ERR_INVALID_CALLS || out != sentinel || len != 12345) {
            check_failures++;
            fprintf(stderr, "%s:%d: calls %s: %s, out %s\n", __FILE__, __LINE__, bad[i],
                    capstan_status_name(st), out == sentinel && len == 12345 ? "untouched" : "written");
            if (st == CAPSTAN_OK) capstan_string_free(out);
        }
        CHECK(capstan_error_message(NULL, 0) > 0);
    }
    /* A missing name is named. */
    CHECK_STATUS(capstan_registry_execute(reg, "{\"id\":\"1\"}", CAPSTAN_NTS, NULL, &(char *){NULL}, NULL),
                 CAPSTAN_ERR_INVALID_CALLS);
    char msg[256];
    capstan_error_message(msg, sizeof msg);
    CHECK_CONTAINS(msg, "name");
    /* Nothing of a rejected batch runs, not even its valid calls. */
    CHECK(atomic_load(&invocations) == before);
}

static void invalid_utf8_calls_are_invalid_utf8(void) {
    char *sentinel = (char *)&sentinel;
    char *out = sentinel;
    size_t len = 999;
    CHECK_STATUS(capstan_registry_execute(reg, "{\"name\":\"ping\",\"arguments\":{\"q\":\"\xff\"}}", CAPSTAN_NTS, NULL,
                                 &out, &len),
                 CAPSTAN_ERR_INVALID_UTF8);
    CHECK(out == sentinel && len == 999);

    /* An explicit length that cuts "é" in half. */
    const char *calls = "{\"name\":\"ping\",\"arguments\":{\"q\":\"\xc3\xa9\"}}";
    size_t cut = (size_t)(strstr(calls, "\xc3\xa9") - calls) + 1;
    CHECK_STATUS(capstan_registry_execute(reg, calls, cut, NULL, &out, &len), CAPSTAN_ERR_INVALID_UTF8);
    CHECK(out == sentinel && len == 999);

    /* The whole of it is fine. */
    CHECK_STATUS(capstan_registry_execute(reg, calls, strlen(calls), NULL, &out, &len), CAPSTAN_OK);
    CHECK(out != sentinel);
    if (out != sentinel) {
        CHECK_OUTCOME(out, "ok");
        capstan_string_free(out);
    }
}

static void null_pointers_are_null_parameter(void) {
    char *out = NULL;
    CHECK_STATUS(capstan_registry_execute(NULL, "{\"name\":\"ping\"}", CAPSTAN_NTS, NULL, &out, NULL),
                 CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_execute(reg, NULL, CAPSTAN_NTS, NULL, &out, NULL), CAPSTAN_ERR_NULL_PARAMETER);
    CHECK_STATUS(capstan_registry_execute(reg, "{\"name\":\"ping\"}", CAPSTAN_NTS, NULL, NULL, NULL),
                 CAPSTAN_ERR_NULL_PARAMETER);
    CHECK(out == NULL);
}

int main(void) {
    CHECK_STATUS(capstan_registry_new(NULL, &reg), CAPSTAN_OK);
    register_tool("get_weather", WEATHER_SCHEMA);
    register_tool("ping", "{\"type\":\"object\"}");
    register_tool("book", TRIP_SCHEMA);

    missing_required_argument_is_named();
    enum_violation_names_the_value_and_the_allowed_values();
    unexpected_argument_is_named();
    every_argument_error_is_reported_at_once();
    argument_errors_say_where_with_a_json_pointer();
    defaults_are_filled_in_what_the_callback_sees();
    arguments_as_a_json_string_are_accepted();
    malformed_argument_string_is_invalid_arguments_never_empty_object();
    unknown_tool_lists_the_closest_match();
    malformed_calls_json_is_invalid_calls_and_writes_nothing();
    invalid_utf8_calls_are_invalid_utf8();
    null_pointers_are_null_parameter();

    capstan_registry_free(reg);
    return check_report("test_validation");
}
