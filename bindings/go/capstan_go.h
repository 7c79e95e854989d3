/* C side of the Go binding: trampolines from capstan into the exported Go
 * functions, and wrappers that turn capstan's opaque handles (call and
 * approval handles are packed integers, not pointers) into uintptr_t so that
 * Go never holds them as pointers. Declarations only: cgo forbids definitions
 * in the preamble of a file that has //export functions. */
#ifndef CAPSTAN_GO_SHIM_H
#define CAPSTAN_GO_SHIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "capstan.h"

/* The last failure on this thread as capstan_error_json's document (or, if
 * that cannot be read, its plain message), malloc'd (free with free), or
 * NULL. Call it on the thread of the failing call. */
char *cg_last_error(void);

capstan_status cg_register(capstan_registry *reg, const char *name, const char *description,
                           const char *parameters, uintptr_t tool, uint32_t timeout_ms,
                           uint32_t max_output_chars, uint32_t flags, const char *mcp_meta, char **err);

/* Room for a tool's answer that the Go side writes for cg_tool_cb to hand to
 * capstan_call_return once the Go function has returned: no cgo call out of
 * the callback for a small result. Lives on cg_tool_cb's stack. */
#define CG_ANSWER_INLINE 1024

typedef struct cg_answer {
    int filled; /* set by Go: text[0..len) is the result, of this kind */
    uint32_t kind;
    size_t len;
    char text[CG_ANSWER_INLINE];
} cg_answer;

/* capstan_batch_submit with results to the Go batch `batch` (a cgo.Handle). While
 * it runs, tools started on this thread learn whether they may run on it
 * (`run_here`). On failure *err gets the message. */
capstan_status cg_submit(capstan_registry *reg, const char *calls, size_t len, uint32_t flags,
                         uint32_t limit, uint32_t timeout_ms, uint32_t deadline_ms,
                         const char *const *approved, size_t approved_count, const char *run_id,
                         size_t run_id_len, uintptr_t batch, int run_here, capstan_batch **out, char **err);

/* Room in cg_one_result for a result's texts: a small result is copied
 * there (no malloc, and no C.free call back from Go). */
#define CG_ONE_INLINE 1024

/* One result of cg_execute_one, copied out of capstan: the id, name,
 * content, parts and structured content back to back, in `inline_buf` when
 * they fit (`buf` NULL), else in `buf` (malloc'd, free with free);
 * has_parts / has_structured say whether those two were given. */
typedef struct cg_one_result {
    char *buf;
    size_t index, id_len, name_len, content_len, parts_len, structured_len;
    int has_parts, has_structured, got;
    uint32_t outcome;
    uint64_t duration_us;
    char inline_buf[CG_ONE_INLINE];
} cg_one_result;

/* A lone call of Execute that nothing can cancel, in one cgo call: submitted
 * with CAPSTAN_EXEC_START_INLINE and poll delivery, its tool run on this
 * thread (run here untimed), waited for (a call that waits for a pump, the
 * approver or a serial predecessor blocks this thread until it ends) and
 * its result copied into *out. No callback into Go but the tool's. On
 * failure *err gets the message. */
capstan_status cg_execute_one(capstan_registry *reg, const char *calls, size_t len, uint32_t flags,
                              const char *const *approved, size_t approved_count, const char *run_id,
                              size_t run_id_len, cg_one_result *out, char **err);

/* capstan_host_batch_begin with these exec options: the host-run calls
 * lent in *handed (valid until capstan_host_batch_free). On failure *err
 * gets the message. */
capstan_status cg_host_begin(capstan_registry *reg, const char *calls, size_t len, uint32_t flags,
                             uint32_t limit, const char *const *approved, size_t approved_count,
                             capstan_host_batch **out, const char **handed, size_t *handed_len, char **err);

/* capstan_host_batch_finish with the answers, waiting with no limit for
 * the pool's calls; the results lent in *results. On failure *err gets the
 * message. */
capstan_status cg_host_finish(capstan_host_batch *batch, const char *answers, size_t len,
                              const char **results, size_t *results_len, char **err);

/* capstan_registry_run_turn with these exec options; tools run on capstan's
 * pool threads. */
capstan_status cg_run_turn(capstan_registry *reg, capstan_format fmt, const char *response, size_t len,
                           uint32_t flags, uint32_t limit, uint32_t timeout_ms, uint32_t deadline_ms,
                           const char *const *approved, size_t approved_count, const char *run_id,
                           size_t run_id_len, char **out, size_t *out_len);

/* capstan_registry_needs_approval with these approved ids. */
capstan_status cg_needs_approval(const capstan_registry *reg, const char *calls, size_t len,
                                 const char *const *approved, size_t approved_count, char **out,
                                 size_t *out_len);

/* capstan_registry_pump; main-thread tools then run on this thread. */
size_t cg_pump(capstan_registry *reg, uint32_t budget_ms);

void cg_cancelled_many(const uintptr_t *calls, size_t n, uint8_t *out);
bool cg_call_cancelled(uintptr_t call);
const char *cg_call_arguments(uintptr_t call, size_t *len);
const char *cg_call_id(uintptr_t call, size_t *len);
capstan_status cg_call_return(uintptr_t call, capstan_content kind, const char *content, size_t len);
capstan_status cg_call_fail(uintptr_t call, const char *message, size_t len);
/* capstan_call_progress; on failure *err gets the message (read on this
 * thread, inside this one cgo call). */
capstan_status cg_call_progress(uintptr_t call, double progress, double total, const char *message,
                                size_t len, char **err);
/* capstan_call_log; on failure *err gets the message. */
capstan_status cg_call_log(uintptr_t call, capstan_log_level level, const char *message, size_t len, char **err);
/* capstan_call_input. */
const char *cg_call_input(uintptr_t call, size_t *len);
/* capstan_call_require_input; on failure *err gets the message (the call
 * is then still open). */
capstan_status cg_call_require_input(uintptr_t call, const char *requests, size_t len, const char *state,
                                     size_t state_len, char **err);

const char *cg_approval_tool(uintptr_t a, size_t *len);
const char *cg_approval_id(uintptr_t a, size_t *len);
const char *cg_approval_arguments(uintptr_t a, size_t *len);
capstan_status cg_approval_decide(uintptr_t a, bool approve, const char *reason, size_t len);

/* capstan_stream_new with a sink whose callbacks reach the Go stream
 * `stream` (a cgo.Handle). On failure *err gets the message. */
capstan_status cg_stream_new(capstan_registry *reg, capstan_format fmt, uint32_t flags, uint32_t limit,
                             uint32_t timeout_ms, uint32_t deadline_ms, const char *const *approved,
                             size_t approved_count, const char *run_id, size_t run_id_len,
                             uintptr_t stream, capstan_stream **out, char **err);

/* Sets the oauth_ callbacks of *opts (those asked for) to trampolines into
 * oauth.go, with the Go hooks `hooks` (a cgo.Handle) as user data, released
 * by oauth_destroy. */
void cg_mount_oauth(capstan_mcp_mount_options *opts, uintptr_t hooks, bool authorize, bool load, bool save,
                    bool assertion);

/* Sets the input_ fields of *opts: input_answer (if `answer`) a trampoline
 * into mountinput.go, with the Go hooks `hooks` (a cgo.Handle) as user
 * data, released by input_destroy. */
void cg_mount_input(capstan_mcp_mount_options *opts, uintptr_t hooks, bool answer, uint32_t methods);

/* capstan_journal_new with callbacks into journalstore.go, the Go store
 * `store` (a cgo.Handle) as user data, released by its destroy (also when
 * this fails). On failure *err gets the message. */
capstan_status cg_journal_new(uintptr_t store, capstan_journal **out, char **err);

/* Trampolines for hooks.go. */
void cg_event_cb(void *user_data, const capstan_event *event);
void cg_notify_cb(void *user_data);
void cg_approver_cb(void *user_data, capstan_approval *approval);
void cg_hook_destroy(void *user_data);

#endif
