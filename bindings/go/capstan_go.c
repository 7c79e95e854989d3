#include <string.h>
#include "capstan_go.h"
#include "_cgo_export.h"

/* Where a tool callback on this thread runs the Go function (run* constants
 * in tool.go): 0 on a pool thread, here; cg_submit and cg_pump set the other
 * values for the callbacks they run on their own thread. */
static _Thread_local int cg_run_here;

char *cg_last_error(void) {
    char *json = NULL;
    size_t n = 0;
    if (capstan_error_json(&json, &n) == CAPSTAN_OK && json != NULL) {
        char *buf = malloc(n + 1);
        if (buf != NULL) {
            memcpy(buf, json, n);
            buf[n] = 0;
        }
        capstan_string_free(json);
        return buf;
    }
    n = capstan_error_message(NULL, 0);
    char *buf = malloc(n + 1);
    if (buf == NULL) return NULL;
    capstan_error_message(buf, n + 1);
    return buf;
}

/* The arguments and the id go to Go with the call: one crossing instead
 * of three. NULL arguments: the call already ended (timed out, cancelled).
 * A tool that ran inside the callback may leave its result in `answer`,
 * completed here after Go returned (no cgo call back out of Go). */
static void cg_tool_cb(void *user_data, capstan_call *call) {
    size_t args_len = 0, id_len = 0;
    const char *args = capstan_call_arguments(call, &args_len);
    const char *id = args != NULL ? capstan_call_id(call, &id_len) : NULL;
    cg_answer answer;
    answer.filled = 0;
    goToolCall((uintptr_t)user_data, (uintptr_t)call, cg_run_here, (char *)args, args_len, (char *)id, id_len,
               &answer);
    if (answer.filled) capstan_call_return(call, answer.kind, answer.text, answer.len);
}

static void cg_tool_destroy(void *user_data) { goReleaseHandle((uintptr_t)user_data); }

static void cg_result_cb(void *user_data, const capstan_result *result) {
    goBatchResult((uintptr_t)user_data, (capstan_result *)result);
}

capstan_status cg_register(capstan_registry *reg, const char *name, const char *description,
                           const char *parameters, uintptr_t tool, uint32_t timeout_ms,
                           uint32_t max_output_chars, uint32_t flags, const char *mcp_meta, char **err) {
    capstan_tool_def def;
    memset(&def, 0, sizeof def);
    def.struct_size = sizeof def;
    def.name = name;
    def.description = description;
    def.parameters = parameters;
    def.callback = cg_tool_cb;
    def.user_data = (void *)tool;
    def.destroy = cg_tool_destroy;
    def.timeout_ms = timeout_ms;
    def.max_output_chars = max_output_chars;
    def.flags = flags;
    def.mcp_meta = mcp_meta;
    capstan_status st = capstan_registry_add_tool(reg, &def);
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}

/* The exec options every entry point passes: one place fills them. */
static capstan_exec_options cg_exec_options(uint32_t flags, uint32_t limit, uint32_t timeout_ms,
                                            uint32_t deadline_ms, const char *const *approved,
                                            size_t approved_count, const char *run_id,
                                            size_t run_id_len) {
    capstan_exec_options o;
    capstan_exec_options_init(&o);
    o.flags = flags;
    o.limit = limit;
    o.timeout_ms = timeout_ms;
    o.deadline_ms = deadline_ms;
    o.approved_ids = approved;
    o.approved_count = approved_count;
    o.run_id = run_id;
    o.run_id_len = run_id_len;
    return o;
}

capstan_status cg_submit(capstan_registry *reg, const char *calls, size_t len, uint32_t flags,
                         uint32_t limit, uint32_t timeout_ms, uint32_t deadline_ms,
                         const char *const *approved, size_t approved_count, const char *run_id,
                         size_t run_id_len, uintptr_t batch, int run_here, capstan_batch **out, char **err) {
    capstan_exec_options o =
        cg_exec_options(flags, limit, timeout_ms, deadline_ms, approved, approved_count, run_id,
                        run_id_len);
    int saved_run_here = cg_run_here;
    cg_run_here = run_here;
    capstan_status st = capstan_batch_submit(reg, calls, len, &o, cg_result_cb, (void *)batch, out);
    cg_run_here = saved_run_here;
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}

static void cg_one_cb(void *user_data, const capstan_result *r) {
    cg_one_result *o = user_data;
    if (r == NULL || o->got) return;
    size_t parts = r->parts_json != NULL ? r->parts_json_len : 0;
    size_t structured = r->structured_json != NULL ? r->structured_json_len : 0;
    size_t n = r->id_len + r->name_len + r->content_len + parts + structured;
    /* o is Go memory: no pointer into it is stored in it (o->buf stays
     * NULL for an inline copy). */
    char *buf = o->inline_buf;
    if (n > sizeof o->inline_buf) {
        buf = malloc(n);
        if (buf == NULL) return; /* o->got stays 0: Go reports it */
        o->buf = buf;
    }
    char *p = buf;
    memcpy(p, r->id, r->id_len);
    p += r->id_len;
    memcpy(p, r->name, r->name_len);
    p += r->name_len;
    memcpy(p, r->content, r->content_len);
    p += r->content_len;
    if (parts > 0) memcpy(p, r->parts_json, parts);
    p += parts;
    if (structured > 0) memcpy(p, r->structured_json, structured);
    o->index = r->index;
    o->id_len = r->id_len;
    o->name_len = r->name_len;
    o->content_len = r->content_len;
    o->parts_len = parts;
    o->structured_len = structured;
    o->has_parts = r->parts_json != NULL;
    o->has_structured = r->structured_json != NULL;
    o->outcome = r->outcome;
    o->duration_us = r->duration_us;
    o->got = 1;
}

capstan_status cg_execute_one(capstan_registry *reg, const char *calls, size_t len, uint32_t flags,
                              const char *const *approved, size_t approved_count, const char *run_id,
                              size_t run_id_len, cg_one_result *out, char **err) {
    capstan_exec_options o = cg_exec_options(
        flags | CAPSTAN_EXEC_START_INLINE | CAPSTAN_EXEC_DELIVER_POLL, 1, 0, 0, approved, approved_count,
        run_id, run_id_len);
    capstan_batch *batch = NULL;
    int saved_run_here = cg_run_here;
    cg_run_here = 1; /* runHereUntimed */
    capstan_status st = capstan_batch_submit(reg, calls, len, &o, NULL, NULL, &batch);
    cg_run_here = saved_run_here;
    if (st != CAPSTAN_OK) {
        *err = cg_last_error();
        return st;
    }
    /* Done already unless the call waits for a pump, the approver or a
     * serial predecessor. A timed wait only waits: it runs no call here. */
    while (capstan_batch_wait(batch, 60000) == CAPSTAN_ERR_TIMEOUT) {
    }
    capstan_batch_poll(batch, cg_one_cb, out, SIZE_MAX);
    capstan_batch_free(batch);
    return CAPSTAN_OK;
}

capstan_status cg_host_begin(capstan_registry *reg, const char *calls, size_t len, uint32_t flags,
                             uint32_t limit, const char *const *approved, size_t approved_count,
                             capstan_host_batch **out, const char **handed, size_t *handed_len, char **err) {
    capstan_exec_options o = cg_exec_options(flags, limit, 0, 0, approved, approved_count, NULL, 0);
    capstan_status st = capstan_host_batch_begin(reg, calls, len, &o, out, handed, handed_len);
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}

capstan_status cg_host_finish(capstan_host_batch *batch, const char *answers, size_t len,
                              const char **results, size_t *results_len, char **err) {
    capstan_status st = capstan_host_batch_finish(batch, answers, len, UINT32_MAX, results, results_len);
    /* Unbounded: a timeout here would only come from a core that gives up
     * waiting; wait again without re-sending the answers. */
    while (st == CAPSTAN_ERR_TIMEOUT) st = capstan_host_batch_finish(batch, NULL, 0, UINT32_MAX, results, results_len);
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}

static void cg_stream_text_cb(void *user_data, const char *text, size_t len) {
    goStreamText((uintptr_t)user_data, (char *)text, len);
}

static void cg_stream_result_cb(void *user_data, const capstan_result *result) {
    goStreamResult((uintptr_t)user_data, (capstan_result *)result);
}

capstan_status cg_stream_new(capstan_registry *reg, capstan_format fmt, uint32_t flags, uint32_t limit,
                             uint32_t timeout_ms, uint32_t deadline_ms, const char *const *approved,
                             size_t approved_count, const char *run_id, size_t run_id_len,
                             uintptr_t stream, capstan_stream **out, char **err) {
    capstan_exec_options o =
        cg_exec_options(flags, limit, timeout_ms, deadline_ms, approved, approved_count, run_id,
                        run_id_len);
    capstan_stream_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.struct_size = sizeof sink;
    sink.on_text = cg_stream_text_cb;
    sink.on_result = cg_stream_result_cb;
    sink.user_data = (void *)stream;
    capstan_status st = capstan_stream_new(reg, fmt, &o, &sink, out);
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}

capstan_status cg_needs_approval(const capstan_registry *reg, const char *calls, size_t len,
                                 const char *const *approved, size_t approved_count, char **out,
                                 size_t *out_len) {
    capstan_exec_options o = cg_exec_options(0, 0, 0, 0, approved, approved_count, NULL, 0);
    return capstan_registry_needs_approval(reg, calls, len, &o, out, out_len);
}

capstan_status cg_run_turn(capstan_registry *reg, capstan_format fmt, const char *response, size_t len,
                           uint32_t flags, uint32_t limit, uint32_t timeout_ms, uint32_t deadline_ms,
                           const char *const *approved, size_t approved_count, const char *run_id,
                           size_t run_id_len, char **out, size_t *out_len) {
    capstan_exec_options o =
        cg_exec_options(flags, limit, timeout_ms, deadline_ms, approved, approved_count, run_id,
                        run_id_len);
    int saved_run_here = cg_run_here;
    cg_run_here = 0;
    capstan_status st = capstan_registry_run_turn(reg, fmt, response, len, &o, out, out_len);
    cg_run_here = saved_run_here;
    return st;
}

size_t cg_pump(capstan_registry *reg, uint32_t budget_ms) {
    int saved_run_here = cg_run_here;
    cg_run_here = 2;
    size_t n = capstan_registry_pump(reg, budget_ms);
    cg_run_here = saved_run_here;
    return n;
}

void cg_cancelled_many(const uintptr_t *calls, size_t n, uint8_t *out) {
    for (size_t i = 0; i < n; i++) out[i] = capstan_call_cancelled((const capstan_call *)calls[i]);
}

bool cg_call_cancelled(uintptr_t call) { return capstan_call_cancelled((const capstan_call *)call); }

const char *cg_call_arguments(uintptr_t call, size_t *len) {
    return capstan_call_arguments((const capstan_call *)call, len);
}

const char *cg_call_id(uintptr_t call, size_t *len) {
    return capstan_call_id((const capstan_call *)call, len);
}

capstan_status cg_call_return(uintptr_t call, capstan_content kind, const char *content, size_t len) {
    return capstan_call_return((capstan_call *)call, kind, content, len);
}

capstan_status cg_call_fail(uintptr_t call, const char *message, size_t len) {
    return capstan_call_fail((capstan_call *)call, message, len);
}

capstan_status cg_call_progress(uintptr_t call, double progress, double total, const char *message,
                                size_t len, char **err) {
    capstan_status st = capstan_call_progress((const capstan_call *)call, progress, total, message, len);
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}

capstan_status cg_call_log(uintptr_t call, capstan_log_level level, const char *message, size_t len, char **err) {
    capstan_status st = capstan_call_log((const capstan_call *)call, level, message, len);
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}

const char *cg_call_input(uintptr_t call, size_t *len) {
    return capstan_call_input((const capstan_call *)call, len);
}

capstan_status cg_call_require_input(uintptr_t call, const char *requests, size_t len, const char *state,
                                     size_t state_len, char **err) {
    capstan_status st = capstan_call_require_input((capstan_call *)call, requests, len, state, state_len);
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}

const char *cg_approval_tool(uintptr_t a, size_t *len) {
    return capstan_approval_tool((const capstan_approval *)a, len);
}

const char *cg_approval_id(uintptr_t a, size_t *len) {
    return capstan_approval_id((const capstan_approval *)a, len);
}

const char *cg_approval_arguments(uintptr_t a, size_t *len) {
    return capstan_approval_arguments((const capstan_approval *)a, len);
}

capstan_status cg_approval_decide(uintptr_t a, bool approve, const char *reason, size_t len) {
    return capstan_approval_decide((capstan_approval *)a, approve, reason, len);
}

void cg_event_cb(void *user_data, const capstan_event *event) {
    goEvent((uintptr_t)user_data, (capstan_event *)event);
}

void cg_notify_cb(void *user_data) { goNotify((uintptr_t)user_data); }

void cg_approver_cb(void *user_data, capstan_approval *approval) {
    goApprove((uintptr_t)user_data, (uintptr_t)approval);
}

void cg_hook_destroy(void *user_data) { goReleaseHandle((uintptr_t)user_data); }

static size_t cg_oauth_authorize(void *user_data, const char *url, char *redirect, size_t cap) {
    return goOAuthAuthorize((uintptr_t)user_data, (char *)url, redirect, cap);
}

static size_t cg_oauth_load(void *user_data, char *buf, size_t cap) {
    return goOAuthLoad((uintptr_t)user_data, buf, cap);
}

static void cg_oauth_save(void *user_data, const char *json, size_t len) {
    goOAuthSave((uintptr_t)user_data, (char *)json, len);
}

static size_t cg_oauth_assertion(void *user_data, const char *audience, char *out, size_t cap) {
    return goOAuthAssertion((uintptr_t)user_data, (char *)audience, out, cap);
}

static void cg_oauth_destroy(void *user_data) { goOAuthDestroy((uintptr_t)user_data); }

void cg_mount_oauth(capstan_mcp_mount_options *opts, uintptr_t hooks, bool authorize, bool load, bool save,
                    bool assertion) {
    opts->oauth_authorize = authorize ? cg_oauth_authorize : NULL;
    opts->oauth_tokens_load = load ? cg_oauth_load : NULL;
    opts->oauth_tokens_save = save ? cg_oauth_save : NULL;
    opts->oauth_assertion = assertion ? cg_oauth_assertion : NULL;
    opts->oauth_user_data = (void *)hooks;
    opts->oauth_destroy = cg_oauth_destroy;
}

static size_t cg_input_answer(void *user_data, const char *tool, const char *method, const char *params,
                              size_t params_len, char *answer, size_t cap) {
    return goInputAnswer((uintptr_t)user_data, (char *)tool, (char *)method, (char *)params, params_len, answer,
                         cap);
}

static void cg_input_destroy(void *user_data) { goInputDestroy((uintptr_t)user_data); }

void cg_mount_input(capstan_mcp_mount_options *opts, uintptr_t hooks, bool answer, uint32_t methods) {
    opts->input_answer = answer ? cg_input_answer : NULL;
    opts->input_methods = methods;
    opts->input_user_data = (void *)hooks;
    opts->input_destroy = cg_input_destroy;
}

static int32_t cg_journal_record(void *user_data, const char *record_json, size_t len) {
    return goJournalRecord((uintptr_t)user_data, (char *)record_json, len);
}

static int32_t cg_journal_lookup(void *user_data, const char *run_id, size_t run_len, const char *call_id,
                                 size_t call_len, capstan_journal_answer *answer) {
    return goJournalLookup((uintptr_t)user_data, (char *)run_id, run_len, (char *)call_id, call_len, answer);
}

static void cg_journal_destroy(void *user_data) { goJournalDestroy((uintptr_t)user_data); }

capstan_status cg_journal_new(uintptr_t store, capstan_journal **out, char **err) {
    capstan_journal_callbacks cbs = CAPSTAN_JOURNAL_CALLBACKS_INIT;
    cbs.record = cg_journal_record;
    cbs.lookup = cg_journal_lookup;
    cbs.user_data = (void *)store;
    cbs.destroy = cg_journal_destroy;
    capstan_status st = capstan_journal_new(&cbs, out);
    if (st != CAPSTAN_OK) *err = cg_last_error();
    return st;
}
