/*
 * capstan: an embeddable tool runtime for LLM agents.
 * size: the whole C ABI, one section per object (contents below); a host
 * includes one header, and the sections are the cut.
 *
 * Conventions
 *  - Every fallible function returns capstan_status (CAPSTAN_OK = 0); the
 *    message of the last failure on the calling thread is read with
 *    capstan_error_message. Outputs are written only on success.
 *  - The last error is per OS thread, and a success clears it: every
 *    function except capstan_string_free, capstan_status_name,
 *    capstan_version_string, capstan_version_number, capstan_features_mask
 *    and capstan_error_message sets it on failure (including those that report
 *    failure as NULL or false) and empties it on success, so right after a
 *    success capstan_error_message returns 0, and after a failure it describes
 *    that failure. Read it on the thread that made the failing call, before
 *    calling capstan again there: hosts whose tasks move between OS threads
 *    (goroutines, Swift tasks, async runtimes) must read it without yielding
 *    in between (in Go: runtime.LockOSThread around the call and the read).
 *  - Only names starting with capstan_ or CAPSTAN_ are declared here.
 *  - Text in is UTF-8 as (ptr, len); len == CAPSTAN_NTS means NUL-terminated.
 *    Strings inside capstan_tool_def are NUL-terminated. Invalid UTF-8 is an
 *    error status, never undefined behaviour.
 *  - Text out (char **out, size_t *out_len) is NUL-terminated, owned by the
 *    caller, freed with capstan_string_free. out_len may be NULL.
 *  - Option structs start with uint32_t struct_size = sizeof(the struct);
 *    a NULL options pointer means defaults. Zero-filled fields mean defaults.
 *    Fill one with its CAPSTAN_<STRUCT>_INIT macro or, from a host without
 *    a C preprocessor, its capstan_<struct>_init() function (the same
 *    bytes, and as many as this library's struct has: a binding built for
 *    an older header must not call it into its smaller struct, but zero
 *    the struct and set struct_size to its own size itself, as the macro
 *    does). Both directions of version skew are defined: a struct_size
 *    smaller than the library's struct (an older header) reads the missing
 *    fields as zero; a larger one (a newer header) is accepted only if every
 *    byte past what the library knows is zero, else INVALID_ARGUMENT naming
 *    the struct (Linux's copy_struct_from_user rule): a field the library
 *    cannot honour is never ignored silently. struct_size above 4096 is
 *    INVALID_ARGUMENT.
 *  - Initializers: every option struct and capstan_tool_def has a
 *    CAPSTAN_<STRUCT>_INIT macro, for C and for C++ before C++20 (which has
 *    no designated initializers): struct_size set, everything else zero,
 *    i.e. the defaults. Assign the fields you need after:
 *
 *        capstan_tool_def def = CAPSTAN_TOOL_DEF_INIT;
 *        def.name = "add";
 *        def.callback = add;
 *
 *  - One header, in sections (Contents below): a host includes one file,
 *    and the bindings (Go, Swift, Python) read one; the sections give the
 *    per-object reading order an umbrella of per-area headers would, without
 *    the include-order rules between them (tools/header_sections.py orders
 *    cbindgen's output).
 *  - Flags: each function takes only the flags it uses; any other bit is
 *    INVALID_ARGUMENT. When the bit is one of capstan's flags the message
 *    names it (CAPSTAN_EXEC_DELIVER_POLL passed to capstan_registry_execute;
 *    a CAPSTAN_TOOL_* flag in capstan_export_options.flags names every flag
 *    of that value, as families share bit values); other bits are given in
 *    hex.
 *  - Naming: every function is capstan_<object>_<verb>, the object one of
 *    call, registry, batch, approval, stream, mcp_server, mcp_mount (the
 *    opaque types) or runtime, format, error, status, version, string, name,
 *    features (module nouns); a getter's verb is the property
 *    (capstan_call_id); a function writing a JSON document ends in _json;
 *    capstan_<struct>_init fills an options struct.
 *  - Children: a batch, stream, MCP server or mount keeps what it needs
 *    of its registry alive, so capstan_registry_free may come before the
 *    child's own free, also while calls of the child run. The free closes
 *    the registry: running calls see capstan_call_cancelled and, like calls
 *    not yet started (or read by a stream later), end
 *    CAPSTAN_OUTCOME_CANCELLED; a server answers its clients so (a cancelled
 *    result), a mount's calls end so and its server is sent
 *    notifications/cancelled. The child stays usable and is ended and freed
 *    (a server stopped) by its own function as usual.
 *    capstan_mcp_server_serve_stdio holds a share while it serves: freeing
 *    the registry from another thread then stops it as
 *    capstan_registry_close does (it returns OK).
 *  - Versions: CAPSTAN_VERSION_NUMBER (this header) and
 *    capstan_version_number() (the library) are MAJOR*1000000 +
 *    MINOR*1000 + PATCH; capstan_features_mask() says which optional
 *    features (CAPSTAN_FEATURE_*) this build has.
 *
 * Thread safety
 *  - A capstan_registry may be used from any number of threads at once;
 *    only capstan_registry_free must not race with other uses of it.
 *  - Tool callbacks run on capstan's pool threads, or on the host thread
 *    that runs the batch: the thread calling capstan_registry_execute (it runs calls
 *    of its own batch first; pool threads join only when calls are still
 *    waiting to start after tens of microseconds; while every call so far
 *    was of a tool whose recent calls each ended within 20 us, that moment
 *    is checked between calls, so one such call that turns slow holds its
 *    siblings until it returns), a thread calling
 *    capstan_batch_wait with no time limit (UINT32_MAX) on the batch, and
 *    for CAPSTAN_TOOL_MAIN_THREAD tools a thread calling
 *    capstan_registry_pump. user_data must therefore be safe to use from
 *    any thread.
 *  - Result callbacks and the event hook run on the thread where the result
 *    or event arises (capstan_result_fn lists them): for timeouts and
 *    deadlines a pool thread, or capstan's timer thread when every pool
 *    thread is busy (capstan_runtime_configure). Pool threads and MCP
 *    connection threads run the capstan_runtime_set_thread_hooks hooks before
 *    any host code; the timer thread runs none.
 *  - A call is completed exactly once (capstan_call_return or
 *    capstan_call_fail), from any thread, during or after its callback.
 *    Completing twice, after a timeout, or after the registry was freed
 *    returns an error status; it never crashes.
 *  - Callbacks may call back into capstan, including capstan_registry_execute on the
 *    same registry (nested execution). No callback runs while capstan holds
 *    an internal lock.
 *  - Every callback returns (or blocks): none may end its thread, by
 *    pthread_exit, ExitThread, thread cancellation or any other forced
 *    unwind, nor longjmp out of capstan. Such an unwind would cross capstan's frames,
 *    which hold destructors and panic boundaries: undefined behaviour for
 *    Rust (forced unwinding over non-POF frames), an abort in practice, and
 *    "C-unwind" callback types would not make it defined. A host runtime that
 *    ends threads that way (CPython before 3.14 at interpreter exit) must
 *    keep its callbacks out of it; the Python binding parks such threads.
 *    Thread hooks: capstan_runtime_set_thread_hooks.
 *  - capstan never reads files or the network: a JSON Schema $ref resolves
 *    only inside its schema; regular expressions run on a linear-time engine.
 *  - capstan's own threads: at most capstan_runtime_options.threads pool
 *    threads run host callbacks (replacements of stuck callbacks included),
 *    plus the timer thread when it delivers timeouts with every pool thread
 *    busy; besides them only the MCP connection threads do. The cap counts
 *    callbacks running: a call whose callback returned with the call still
 *    open (completed later, an MCP task) holds no thread.
 *    None wakes on a tick: idle costs no wake-up. capstan_runtime_shutdown
 *    ends and joins every one of them (then the library may be unloaded);
 *    capstan starts them again when next needed. It is refused
 *    (CAPSTAN_ERR_WRONG_CONTEXT) inside a callback and on capstan's threads.
 *
 * Platforms (README.md, "Platforms", says what is built and tested where)
 *  - One header for Linux, Android, macOS, iOS, the BSDs and Windows, on 32-
 *    and 64-bit targets. What differs: the object an event loop waits on
 *    (capstan_registry_wake_fd on Unix: an eventfd on Linux and Android, a
 *    pipe elsewhere; capstan_registry_wake_handle on Windows: an event
 *    HANDLE; each is UNSUPPORTED where the other exists), and https:// MCP
 *    mounts, which need a library built with the feature mcp-https.
 *
 * Limits (README.md, "Limits", has the full table)
 *  - Every untrusted input has a bounded cost. Arguments: a validation
 *    budget of 200,000 steps per call (past it: invalid_arguments, "too
 *    complex", never accepted); at most 100 errors per call, 20 shown;
 *    nesting 128 levels. Schemas: nesting 128 levels; a pattern compiles to
 *    at most 256 KiB (else INVALID_SCHEMA saying so). Names: 1-64 characters.
 *    A default that fails its own schema is never filled in and is listed
 *    in the tool's "warnings" (CAPSTAN_FORMAT_DESCRIBE), or refused with
 *    CAPSTAN_REGISTRY_STRICT_DEFAULTS. Gemini lowering writes at most 10,000
 *    subschemas, else exports parametersJsonSchema and reports it.
 *
 * Contract notes (changes from the design card, and why)
 *  - The callback field of capstan_tool_def is named `callback`, not `fn`:
 *    `fn` is a keyword in Rust, Swift and Go bindings.
 *  - capstan_status, capstan_format and capstan_content are integer typedefs
 *    with #defined values rather than C enums, so that any value a host
 *    passes is defined behaviour; unknown values are INVALID_ARGUMENT.
 *  - Booleans in option structs are CAPSTAN_*_ flags in a uint32_t, for the
 *    same reason (and so that a zero-filled struct means defaults).
 */


#ifndef CAPSTAN_H
#define CAPSTAN_H

/* Generated by cbindgen from src/ffi. Do not edit: run `make header`. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* Pass as a text length to mean "NUL-terminated". */
#define CAPSTAN_NTS SIZE_MAX

/*
 * Contents
 *   1. Statuses and errors
 *   2. Text, versions and features
 *   3. Objects
 *   4. Runtime: threads and hooks
 *   5. Provider formats
 *   6. Registry
 *   7. Tools
 *   8. Calls, inside a tool
 *   9. Running calls
 *  10. Batches
 *  11. Host batches
 *  12. Main thread and wake-ups
 *  13. Approvals
 *  14. Events and statistics
 *  15. Durable calls: journals
 *  16. Streams
 *  17. MCP server
 *  18. MCP mounts
 */

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/* ========================================================================
 * 1. Statuses and errors
 *
 * Every fallible function returns a capstan_status (CAPSTAN_OK = 0). The
 * last failure on the calling OS thread is read as text with
 * capstan_error_message, or as structured data (status, provider error kind,
 * code, HTTP status, retry delay, schema pointer) with capstan_error_json.
 * Both read it without changing it; a success empties it.
 * ======================================================================== */

/**
 * Status of a fallible call: `CAPSTAN_OK` (0) or one of `CAPSTAN_ERR_*`.
 * An `int32_t` rather than a C enum, so that any value a host passes back
 * (e.g. to `capstan_status_name`) is defined behaviour.
 */
typedef int32_t capstan_status;

/**
 * Success.
 */
#define CAPSTAN_OK 0

/**
 * A required pointer argument was NULL.
 */
#define CAPSTAN_ERR_NULL_PARAMETER 1

/**
 * An argument was out of range or malformed (e.g. `struct_size` too small, unknown flags).
 */
#define CAPSTAN_ERR_INVALID_ARGUMENT 2

/**
 * Text that must be UTF-8 was not.
 */
#define CAPSTAN_ERR_INVALID_UTF8 3

/**
 * A tool name outside `^[A-Za-z0-9_-]{1,64}$`.
 */
#define CAPSTAN_ERR_INVALID_NAME 4

/**
 * A parameters schema that is not a valid JSON Schema with an object root.
 */
#define CAPSTAN_ERR_INVALID_SCHEMA 5

/**
 * Calls JSON that is not JSON or not the normalized call shape.
 */
#define CAPSTAN_ERR_INVALID_CALLS 6

/**
 * Results JSON that is not JSON or not the normalized result shape.
 */
#define CAPSTAN_ERR_INVALID_RESULTS 7

/**
 * A provider response body that is not JSON or lacks what its format requires.
 */
#define CAPSTAN_ERR_INVALID_RESPONSE 8

/**
 * Tool content declared `CAPSTAN_CONTENT_JSON` that is not JSON.
 */
#define CAPSTAN_ERR_INVALID_CONTENT 9

/**
 * No tool of that name.
 */
#define CAPSTAN_ERR_NOT_FOUND 10

/**
 * The call was already completed, timed out or cancelled.
 */
#define CAPSTAN_ERR_ALREADY_COMPLETED 11

/**
 * The handle names no live object (completed call, garbage).
 */
#define CAPSTAN_ERR_STALE_HANDLE 12

/**
 * A wait ran out of time.
 */
#define CAPSTAN_ERR_TIMEOUT 13

/**
 * The registry is shutting down.
 */
#define CAPSTAN_ERR_SHUTTING_DOWN 14

/**
 * Not allowed from here (e.g. configuring the pool after it started).
 */
#define CAPSTAN_ERR_WRONG_CONTEXT 15

/**
 * A panic inside capstan was caught at the boundary (a bug: please report it).
 */
#define CAPSTAN_ERR_PANIC 16

/**
 * Internal failure (poisoned lock, pool could not start).
 */
#define CAPSTAN_ERR_INTERNAL 17

/**
 * The provider's response body reports an error instead of an answer: an
 * API error body, a failed response, an error event or a JSON-RPC error (see
 * `capstan_format_parse_calls` for each format's shapes). `capstan_error_message`
 * holds `provider error (KIND): MESSAGE`, with the provider's own type, code
 * or status as KIND and its message as MESSAGE.
 */
#define CAPSTAN_ERR_PROVIDER_ERROR 18

/**
 * The response ended before its closing event (`data: [DONE]` or a
 * `finish_reason`, `message_stop`, `response.completed`/`.incomplete`, a
 * Gemini `finishReason`): the connection closed early. Returned by
 * `capstan_stream_finish`; calls not started were not run (calls started
 * early finished and delivered their results before it returned).
 */
#define CAPSTAN_ERR_STREAM_TRUNCATED 20

/**
 * A stream held more than `CAPSTAN_STREAM_MAX_BUFFERED` bytes at once.
 */
#define CAPSTAN_ERR_STREAM_TOO_LARGE 21

/**
 * The library was built without the feature this function needs (e.g. `mcp`).
 */
#define CAPSTAN_ERR_UNSUPPORTED 22

/**
 * An MCP server's transport failed: its address could not be bound (in use,
 * not an address, not permitted), or stdio could not be served.
 */
#define CAPSTAN_ERR_TRANSPORT 23

/**
 * `capstan_mcp_mount_new` could not start, reach or initialize the MCP server,
 * or list its tools, within the connect timeout; `capstan_error_message` says
 * which step failed and why.
 */
#define CAPSTAN_ERR_MCP_CONNECT 24

/**
 * The constant's name of a status (`"CAPSTAN_OK"`, ...), or
 * `"CAPSTAN_UNKNOWN_STATUS"`. Static; never NULL.
 */
const char *capstan_status_name(capstan_status status);

/**
 * Copies the message of the last failure on the calling thread into `buf`
 * (NUL-terminated, truncated on a UTF-8 boundary to fit `cap`; `buf` may be
 * NULL when `cap` is 0). Returns the message's full length in bytes, without
 * the NUL: call again with a bigger buffer if it is >= `cap`. Per OS thread;
 * 0 after a success (header: Conventions). Does not change the message.
 */
size_t capstan_error_message(char *buf,
                             size_t cap);

/**
 * The last failure on the calling thread as structured data, for hosts that
 * branch on it (the message is for people): `*out` (NUL-terminated, owned
 * by the caller, freed with `capstan_string_free`) gets
 *
 * ```text
 * {"status": "CAPSTAN_ERR_PROVIDER_ERROR", "status_code": 18,
 *  "message": "provider error (rate_limit_error): ...",
 *  "provider": {"kind": "rate_limit_error", "message": "...",
 *               "type": "rate_limit_error", "code": null,
 *               "http_status": null, "retry_after_ms": null},
 *  "pointer": null}
 * ```
 *
 * `status`/`status_code`: the failing function's status (name and number;
 * `"CAPSTAN_OK"`/0 when the last call succeeded, the rest then empty or
 * null). `message`: what `capstan_error_message` returns. `provider`
 * (CAPSTAN_ERR_PROVIDER_ERROR only, else null): `kind` as the message shows
 * it, the provider's `message`, and each of `type` (its error type or status
 * name), `code` (text), `http_status` (a number, when the body carries one)
 * and `retry_after_ms` (when the body carries a retry delay) or null where
 * the provider sent none. `pointer` (CAPSTAN_ERR_INVALID_SCHEMA only, else
 * null): the JSON Pointer of the offending place in the tool's schema, `""`
 * for its root. Keys may be added in later versions, never removed.
 *
 * Like `capstan_error_message` it reads and does not change the last error
 * (NULL `out` is NULL_PARAMETER, without recording it). Per OS thread.
 */
capstan_status capstan_error_json(char **out,
                                  size_t *out_len);

/* ========================================================================
 * 2. Text, versions and features
 *
 * Text capstan returns through a char **out is the caller's, freed with
 * capstan_string_free. The version: macros for this header, functions for the
 * library (compare them when loading it dynamically). The feature mask says
 * which optional parts (MCP, streams) this build has.
 * ======================================================================== */

/**
 * Frees text that capstan returned through a `char **out`. NULL is a no-op.
 */
void capstan_string_free(char *ptr);

/* This header's version as text, "MAJOR.MINOR.PATCH" (the numbers are
 * CAPSTAN_VERSION_MAJOR/MINOR/PATCH below): equal to what
 * capstan_version_string() returns when the header and the library match. A
 * plain literal, so that Swift and other importers of simple macros see it. */
#define CAPSTAN_VERSION_STRING "0.4.0"

/**
 * Major version of this header (the library's is `capstan_version_string()`).
 * `CAPSTAN_VERSION_STRING` (`"MAJOR.MINOR.PATCH"`, equal to what
 * `capstan_version_string()` returns when header and library match) is a literal in
 * cbindgen.toml; tests/header.rs checks it against Cargo.toml.
 */
#define CAPSTAN_VERSION_MAJOR 0

/**
 * Minor version of this header.
 */
#define CAPSTAN_VERSION_MINOR 4

/**
 * Patch version of this header.
 */
#define CAPSTAN_VERSION_PATCH 0

/**
 * This header's version as one number, `MAJOR * 1000000 + MINOR * 1000 +
 * PATCH` (0.4.0 is 4000), for `#if CAPSTAN_VERSION_NUMBER >= ...` and for
 * comparing with `capstan_version_number()`.
 */
#define CAPSTAN_VERSION_NUMBER 4000

/**
 * The library's version, e.g. "0.2.0". Static; never NULL.
 */
const char *capstan_version_string(void);

/**
 * The library's version as one number, `MAJOR * 1000000 + MINOR * 1000 +
 * PATCH` (0.4.0 gives 4000): compare with `CAPSTAN_VERSION_NUMBER` (the
 * header's) at run time. Any thread; never fails.
 */
uint32_t capstan_version_number(void);

/**
 * Feature bit (`capstan_features_mask`): `capstan_mcp_server_*` serve
 * (else they return CAPSTAN_ERR_UNSUPPORTED). Cargo feature `mcp`.
 */
#define CAPSTAN_FEATURE_MCP_SERVER (1u << 0)

/**
 * Feature bit: `capstan_mcp_mount_new` mounts MCP servers (else
 * CAPSTAN_ERR_UNSUPPORTED). Cargo feature `mcp`.
 */
#define CAPSTAN_FEATURE_MCP_MOUNT (1u << 1)

/**
 * Feature bit: MCP over streamable HTTP (`capstan_mcp_server_start`,
 * mounts by `url`; plain `http://`, no TLS). Cargo feature `mcp`.
 */
#define CAPSTAN_FEATURE_MCP_HTTP (1u << 2)

/**
 * Feature bit: streamed responses (`capstan_stream_*`). Every 0.4 build.
 */
#define CAPSTAN_FEATURE_STREAM (1u << 3)

/**
 * The optional features this build has, as `CAPSTAN_FEATURE_*` bits: test
 * a bit before using what it names, rather than calling and getting
 * CAPSTAN_ERR_UNSUPPORTED. Bits not defined by this header may be set by a
 * newer library; ignore them. Any thread; never fails.
 */
uint32_t capstan_features_mask(void);

/* ========================================================================
 * 3. Objects
 *
 * The opaque types, each made and freed by its own functions (sections
 * below). A capstan_registry holds tools; everything else belongs to one:
 * a capstan_call is one tool call handed to a tool callback; a capstan_batch
 * is calls submitted to run in the background; a capstan_host_batch is calls
 * whose quick ones the host runs itself; a capstan_approval is a call
 * waiting for the host's decision; a capstan_stream runs calls as a streamed
 * model response arrives; a capstan_mcp_server serves the registry's tools over
 * MCP; a capstan_mcp_mount registers an MCP server's tools in the registry.
 * ======================================================================== */

/**
 * A registry of tools. Thread-safe: every function taking one may be called
 * from any thread at once, except `capstan_registry_free`.
 */
typedef struct capstan_registry capstan_registry;

/**
 * One tool call in progress, as its callback sees it. A generation-checked
 * handle, not a pointer to memory: using it after the call completed is an
 * error status, never undefined behaviour.
 */
typedef struct capstan_call capstan_call;

/**
 * A batch started with `capstan_batch_submit`.
 */
typedef struct capstan_batch capstan_batch;

/**
 * A batch whose `CAPSTAN_TOOL_HOST_RUN` calls the host runs itself. Made by
 * `capstan_host_batch_begin`, freed by `capstan_host_batch_free`; any use
 * after that is CAPSTAN_ERR_STALE_HANDLE (it is a checked handle, not a
 * pointer to memory). It keeps its registry's state alive.
 */
typedef struct capstan_host_batch capstan_host_batch;

/**
 * A call waiting for approval, as the approver sees it. A generation-checked
 * handle: using it after the decision is an error status, never undefined
 * behaviour.
 */
typedef struct capstan_approval capstan_approval;

/**
 * A streamed response being read (`capstan_stream_new`).
 */
typedef struct capstan_stream capstan_stream;

/**
 * An MCP server started with `capstan_mcp_server_start`. Its functions may
 * be called from any thread; `capstan_mcp_server_free` must not race them.
 */
typedef struct capstan_mcp_server capstan_mcp_server;

/**
 * A mounted MCP server: capstan's client connection to it, made by
 * `capstan_mcp_mount_new`. A handle, never reused, not a pointer to memory:
 * using it after `capstan_mcp_mount_free` is CAPSTAN_ERR_STALE_HANDLE, never
 * undefined behaviour.
 */
typedef struct capstan_mcp_mount capstan_mcp_mount;

/* ========================================================================
 * 4. Runtime: threads and hooks
 *
 * Process-wide: capstan's pool of threads, and the hooks its threads run
 * before and after any host code (so a host runtime can attach them). Nothing
 * here belongs to a registry.
 * ======================================================================== */

/**
 * Releases a `user_data`. For a tool: called exactly once per registration,
 * when the tool is replaced or removed and its last call is done, when the
 * registry is freed, or when registration fails. For a hook (event hook,
 * notifier, approver): exactly once, after the last invocation of that hook
 * has returned (see `capstan_registry_set_event_hook`).
 */
typedef void (*capstan_destroy_fn)(void *user_data);

/**
 * A pool thread hook: called with the `user_data` given to
 * `capstan_runtime_set_thread_hooks`, on the pool thread concerned.
 */
typedef void (*capstan_thread_hook_fn)(void *user_data);

/**
 * Options of `capstan_runtime_configure`, process-wide. NULL means
 * defaults; every field 0 means its default too.
 */
typedef struct capstan_runtime_options {
  /**
   * `sizeof(capstan_runtime_options)`.
   */
  uint32_t struct_size;
  /**
   * Cap on pool threads, the threads that run tool and result callbacks
   * (0 = 256): at most this many plus one (the timer thread, see
   * `capstan_runtime_configure`) of capstan's threads run host code,
   * besides the MCP bridge's connection threads and the host's own
   * threads that capstan runs calls on (`capstan_registry_execute`,
   * `capstan_batch_wait`, `capstan_registry_pump`).
   */
  uint32_t threads;
  /**
   * How long an idle pool thread waits for work before it ends, in ms
   * (0 = 10,000). Past one idle thread per core, idle threads end after at
   * most 1,000 ms. Once every pool thread ended, capstan's pool holds no
   * thread until the next call needs one.
   */
  uint32_t keep_alive_ms;
} capstan_runtime_options;

/**
 * Fills `*opts` as `CAPSTAN_RUNTIME_OPTIONS_INIT` does (the defaults: 256
 * pool threads, 10 s keep-alive). NULL_PARAMETER if `opts` is NULL. Any
 * thread.
 */
capstan_status capstan_runtime_options_init(struct capstan_runtime_options *opts);

/**
 * Sets how capstan runs its own threads, process-wide, at any time (also
 * after threads started). Pool threads start on demand, up to
 * `opts->threads`; lowering the cap lets threads over it end once their
 * current callback returns; a new keep-alive applies from each idle
 * thread's next wait.
 *
 * The cap is hard: at most `opts->threads` pool threads exist at once, and
 * at most `opts->threads + 1` threads of capstan's run host code (tool,
 * result and end-of-batch callbacks, event hooks): the pool threads, and
 * capstan's timer thread, which delivers a timeout's or a deadline's results
 * itself (running no thread hook) when every pool thread is busy, since
 * they may all be waiting for them; the MCP bridge's connection threads
 * come on top (2 for every mount together, and those of each MCP server).
 * The replacement of a worker stuck in a timed-out callback waits for a
 * free pool thread, ahead of other queued work; a call that timed out sees
 * `capstan_call_cancelled` at once; a call with a timeout that the waiting
 * caller would hand to a full pool runs on the caller's thread instead. The host's own threads also run calls
 * (`capstan_registry_execute`, `capstan_batch_wait`, `capstan_registry_pump`).
 *
 * NULL restores the defaults. Any thread; OK, or INVALID_ARGUMENT for a
 * `struct_size` smaller than this struct's first version.
 */
capstan_status capstan_runtime_configure(const struct capstan_runtime_options *opts);

/**
 * Stops every thread capstan started and joins it, process-wide: the pool
 * threads (they first finish the work queued and running), the timer
 * thread, and the MCP client's connection threads. Waits up to
 * `timeout_ms` (UINT32_MAX = no limit) for what still runs; cancels
 * nothing itself.
 *
 * OK when no capstan thread is left: the library may then be unloaded
 * (`dlclose`, `FreeLibrary`) once the host holds no capstan object and no
 * call of its runs on another thread. CAPSTAN_ERR_TIMEOUT otherwise, with a
 * message (`capstan_error_message`) naming what still runs: pool threads in a
 * callback, armed timers (a call with a timeout or a batch with a deadline
 * that is still running), mounts not yet freed, MCP servers not yet stopped
 * (`capstan_mcp_server_stop` first). A thread still running then is left
 * running.
 *
 * capstan keeps working after this, whatever it returned: the next call
 * that needs a thread starts it again (and `capstan_runtime_configure`'s
 * options stay in force).
 *
 * Call it from a host thread outside any callback. From inside a tool,
 * result or approval callback capstan runs (on any thread, the host's own
 * included), or on one of capstan's threads (a pool thread, in a thread
 * hook too, the timer thread, an MCP connection thread), it would wait for
 * itself: it returns CAPSTAN_ERR_WRONG_CONTEXT at once, stopping nothing,
 * whatever `timeout_ms`.
 */
capstan_status capstan_runtime_shutdown(uint32_t timeout_ms);

/**
 * Sets the hooks run on capstan's own threads that run host code,
 * process-wide (the pool is): the pool threads and, with MCP, the
 * connection threads of mounted servers and of `capstan_mcp_server_start`
 * servers (they run result callbacks and event hooks for calls an MCP peer
 * answered or cancelled). `on_start` runs on each such thread before the
 * first tool callback, result callback or other host code that thread runs
 * (timeouts and deadlines end calls on pool threads too; capstan's timer
 * thread runs no host code), and again before the next one if the hooks
 * were replaced meanwhile (an MCP connection thread catches up when it next
 * wakes); `on_stop` runs on a thread that ran this `on_start`, when that
 * thread retires (an idle pool thread ends after a while, a server's
 * connection threads when it stops), or once these hooks were replaced or
 * cleared, before that thread runs its next host code (and the new
 * `on_start`). `capstan_runtime_shutdown` ends every such thread, each
 * running its `on_stop`. Threads are not joined at process exit: `on_stop`
 * does not run then. Either hook may be NULL (nothing runs in its place); both NULL
 * clears the hooks. The host's own threads never run them, even when
 * capstan runs host code on them: the caller of `capstan_registry_execute` (on
 * which a lone call may run), or of `capstan_mcp_server_serve_stdio` (which
 * serves on the calling thread).
 *
 * Setting hooks replaces the previous ones; threads that ran the previous
 * `on_start` still run the previous `on_stop` as above, so a host that
 * keeps per-thread state in `on_start` sees it released by the matching
 * `on_stop`, on the same thread. A thread already running a callback when
 * the hooks are set switches before its next one.
 *
 * `destroy` (may be NULL) runs exactly once with `user_data`: before this
 * returns if both hooks are NULL; otherwise once these hooks were replaced
 * or cleared and every thread that ran this `on_start` has run this
 * `on_stop` (on that last thread, or on the thread that replaced them), so
 * possibly never while a pool or MCP connection thread that ran them stays
 * alive.
 *
 * Hooks run with no capstan lock held and may call any capstan function
 * except `capstan_runtime_set_thread_hooks` itself; a hook must return (it must
 * not end its thread). Any thread may call this. Returns OK.
 */
capstan_status capstan_runtime_set_thread_hooks(capstan_thread_hook_fn on_start,
                                                capstan_thread_hook_fn on_stop,
                                                void *user_data,
                                                capstan_destroy_fn destroy);

/**
 * Stops the thread hooks for good, process-wide: from now on no thread runs
 * an `on_start` or `on_stop` again, not even the `on_stop` matching an
 * `on_start` it ran, and their `destroy` never runs. For a host runtime that
 * is ending and must not be entered any more (the Python binding calls it
 * at interpreter exit, while the interpreter is still whole: a thread that
 * entered it after would be ended by a forced unwind). What the hooks kept
 * per thread is left to the process's end.
 *
 * Waits until no thread is inside a hook, up to `timeout_ms` (UINT32_MAX =
 * no limit): OK then, CAPSTAN_ERR_TIMEOUT if one still was (it finishes; no
 * hook starts after this returns either way). Do not call it from inside a
 * hook (it would wait for itself). `capstan_runtime_set_thread_hooks` still returns
 * OK afterwards, but its hooks never run. Any thread may call this.
 */
capstan_status capstan_runtime_abandon_thread_hooks(uint32_t timeout_ms);

/** Initializes a capstan_runtime_options to the defaults (threads 256, keep-alive 10 s). */
#define CAPSTAN_RUNTIME_OPTIONS_INIT {(uint32_t)sizeof(capstan_runtime_options), 0, 0}

/* ========================================================================
 * 5. Provider formats
 *
 * The wire formats capstan reads model responses in and writes tool
 * definitions and results in. The functions here need no registry.
 * ======================================================================== */

/**
 * Wire formats: how tools are exported, calls parsed and results formatted.
 */
typedef uint32_t capstan_format;

/**
 * capstan's own: normalized calls and results; tool descriptions for `capstan_registry_tools_json`.
 */
#define CAPSTAN_FORMAT_DESCRIBE 0

/**
 * OpenAI Chat Completions.
 */
#define CAPSTAN_FORMAT_OPENAI_CHAT 1

/**
 * OpenAI Responses.
 */
#define CAPSTAN_FORMAT_OPENAI_RESPONSES 2

/**
 * Anthropic Messages.
 */
#define CAPSTAN_FORMAT_ANTHROPIC 3

/**
 * Google Gemini.
 */
#define CAPSTAN_FORMAT_GEMINI 4

/**
 * Model Context Protocol.
 */
#define CAPSTAN_FORMAT_MCP 5

/**
 * Reads the tool calls out of a model response in format `fmt` (the whole
 * body or just the message/content). `*calls_json` gets a normalized call
 * array (empty only when the response really asks for no tool).
 *
 * Returns `CAPSTAN_ERR_PROVIDER_ERROR` when the body is the provider's
 * report of an error (below, per format); `capstan_error_message` then reads
 * `provider error (KIND): MESSAGE` with the provider's own type/code/status
 * and message. Returns `CAPSTAN_ERR_INVALID_RESPONSE` when the body is not
 * JSON, is not one of the format's shapes below, or lacks a required field
 * (the message names where, e.g. `content[2]: tool_use block has no "name"`).
 * `*calls_json` is written only on `CAPSTAN_OK`.
 *
 * Accepted shapes (anything else is INVALID_RESPONSE):
 * - `CAPSTAN_FORMAT_DESCRIBE`: a normalized call object or an array of them
 *   (errors are `CAPSTAN_ERR_INVALID_CALLS`).
 * - `CAPSTAN_FORMAT_OPENAI_CHAT`: a chat completion `{"choices": [...]}`
 *   (the first choice's `message`), an assistant message (an object with
 *   `role` or `tool_calls`), its `tool_calls` array, or a list of messages
 *   (the last one's calls if it is the assistant's). Provider error:
 *   `{"error": {"message", "type", "param", "code"}}` (KIND: type, code).
 * - `CAPSTAN_FORMAT_OPENAI_RESPONSES`: a response (an object with `output`
 *   or `"object": "response"`), its `output` array, one output item (an
 *   object with `type`), or a stream event `response.*` holding `response`
 *   or `item`. Provider errors: a response with `"status": "failed"` or a
 *   non-null `error` (`{"code", "message"}`), the error event `{"type":
 *   "error", "code", "message"}`, and `{"error": {"message", "type", ...}}`.
 *   A client-executed `tool_search_call` item (`"execution": "client"`) is
 *   read as a call named `openai:tool_search` (id: its `call_id`), which
 *   `capstan_registry_run_turn` answers with a `tool_search_output` item
 *   (`CAPSTAN_EXPORT_DEFERRED_NATIVE`); a server-executed one is skipped.
 * - `CAPSTAN_FORMAT_ANTHROPIC`: a message (an object with `content`), its
 *   `content` array, or one content block (an object with `type`). Provider
 *   error: `{"type": "error", "error": {"type", "message"}}` (KIND: the inner
 *   type, e.g. `overloaded_error`), as a body or a stream event.
 * - `CAPSTAN_FORMAT_GEMINI`: a `generateContent` response (an object with
 *   `candidates`; the first candidate; none, or only `usageMetadata`, means
 *   no calls), a Content `{"role", "parts"}`, its `parts` array, or one part
 *   (`{"functionCall": ...}`). Provider errors: `{"error": {"code",
 *   "message", "status"}}` (KIND: status, code), also inside an array, and a
 *   prompt blocked before any candidate (`promptFeedback.blockReason`; KIND:
 *   the reason). An array of streamed responses is INVALID_RESPONSE.
 * - `CAPSTAN_FORMAT_MCP`: a JSON-RPC `tools/call` request, its `params`
 *   alone, or an array of either. Provider error: a JSON-RPC error response
 *   `{"jsonrpc": "2.0", "id", "error": {"code", "message"}}` or its bare
 *   error object `{"code", "message"}` (KIND: the code, e.g. `-32602`). A
 *   JSON-RPC result response or another method is INVALID_RESPONSE.
 *
 * A value that is JSON but that capstan cannot hold, a number too big for a
 * double (`1e400`) or nesting 128 levels deep counted from the body's root,
 * does not fail the body when it sits inside one call's arguments: that
 * call's arguments are kept as text (as OpenAI sends them) and, when run, it
 * ends `CAPSTAN_OUTCOME_INVALID_ARGUMENTS` with the reason ("number out of
 * range", "recursion limit exceeded": arguments may nest up to 127 levels
 * counted from their own root); the other calls are read as usual. Such a
 * value in a call's id or name is INVALID_RESPONSE.
 */
capstan_status capstan_format_parse_calls(capstan_format fmt,
                                          const char *response_json,
                                          size_t len,
                                          char **calls_json,
                                          size_t *out_len);

/**
 * Formats normalized results (as `capstan_registry_execute` returns them) as the
 * messages/items format `fmt` expects next. INVALID_RESULTS on bad input
 * (also parts that fail the checks of `CAPSTAN_CONTENT_PARTS`, naming the
 * result and part; no size bound is applied here).
 *
 * Results with content parts (`"parts"`, `"structured_content"`, see
 * `CAPSTAN_CONTENT_PARTS`), as `capstan_registry_run_turn` and streams
 * render them too:
 * - OPENAI_RESPONSES: `output` is an array of `input_text`, `input_image`
 *   (a `data:` URL; PNG, JPEG, GIF, WebP) and `input_file` (a PDF as a
 *   `data:` URL) parts.
 * - OPENAI_CHAT: a `tool` message takes text only, so each tool message
 *   holds the text (with `[image_url sent in the next user message]` where
 *   a part went), and ONE `user` message follows the tool messages with the
 *   media: for each call a text part "Content returned by tool call <id>
 *   (<name>):", then its `image_url`, `input_audio` (WAV, MP3) and `file`
 *   (PDF) parts. This is the documented workaround for images from tools in
 *   Chat Completions; results without parts give tool messages only.
 * - ANTHROPIC: `tool_result.content` is an array of `text`, `image` (base64
 *   source; JPEG, PNG, GIF, WebP) and `document` (a PDF, base64 source)
 *   blocks.
 * - GEMINI: Gemini 3's multimodal function response: the media go in
 *   `functionResponse.parts` as `inlineData` (PNG, JPEG, WebP, PDF, plain
 *   text), and `response.output` holds the text with a line
 *   `[image/png attached as part N]` for each. Models before Gemini 3 do not
 *   take `functionResponse.parts`: for them, send results whose parts are
 *   text only.
 * - MCP: `CallToolResult.content` holds the blocks as the tool gave them,
 *   and `structuredContent` its object.
 *
 * A part a provider cannot take (audio for Anthropic, a BMP image, a ZIP
 * file) becomes a text part `[left out: <kind> (<mime>, N bytes): <provider>
 * takes ...]`, never a silent drop.
 *
 * A result whose id repeats an earlier result's, or is empty or illegal in
 * `fmt`, is written under the id `capstan_registry_run_turn` gives it (see
 * `capstan_format_check_history`); describe and MCP keep ids as given.
 */
capstan_status capstan_format_write_results(capstan_format fmt,
                                            const char *results_json,
                                            size_t len,
                                            char **out,
                                            size_t *out_len);

/**
 * Check flag for `capstan_format_check_history`: also write the repaired
 * history.
 */
#define CAPSTAN_HISTORY_REPAIR (1u << 0)

/**
 * Check flag for `capstan_format_check_history` (Gemini): require a
 * `thoughtSignature` on the first `functionCall` part of each model content,
 * as Gemini 3 models do.
 */
#define CAPSTAN_HISTORY_GEMINI_SIGNATURES (1u << 1)

/**
 * Checks a conversation the host assembled against the rules format `fmt`
 * (OpenAI Chat, OpenAI Responses, Anthropic or Gemini) sets for tool calls
 * and their results, and with `CAPSTAN_HISTORY_REPAIR` repairs it.
 *
 * `history_json` (`len` bytes, or `CAPSTAN_NTS`): an array of messages
 * (Chat, Anthropic), input items (Responses) or contents (Gemini), or a
 * request body holding one under `"messages"`, `"input"` or `"contents"`.
 *
 * `*report_json` gets `{"ok": bool, "findings": [{"kind", "entry",
 * "call_id", "message", "repair"?}]}`; `kind` is one of `missing_result`,
 * `orphan_result`, `duplicate_result`, `duplicate_call_id`, `illegal_id`,
 * `out_of_order`, `missing_signature`; `entry` is the index of the message,
 * item or content; `repair` (with `CAPSTAN_HISTORY_REPAIR`) says what the
 * repair did. With `CAPSTAN_HISTORY_REPAIR`, `*repaired_json` (must not then
 * be NULL) gets the history in the shape it came in, where: a result present
 * but misplaced (after another message, before its call, among another
 * turn's results) is moved right after its call; a call with no result
 * anywhere gets an error result saying it never finished (it is not run);
 * of two results for a call the success is kept over the error (the report
 * says which was dropped); a result no call has is dropped; every entry
 * the repair does not change comes back byte for byte (numbers as
 * written); a repeated or illegal call id is
 * renamed, with its result, as `capstan_registry_run_turn` renames it; results
 * are put in call order (Anthropic: before the message's other blocks); a
 * missing Gemini signature gets Google's documented placeholder
 * `"skip_thought_signature_validator"`. Without the flag `repaired_json` is
 * not used (may be NULL). Both outputs are owned by the caller
 * (`capstan_string_free`) and written only on success.
 *
 * Returns OK when the check ran (damage or not: read `"ok"`);
 * INVALID_ARGUMENT for describe or MCP (no conversations), unknown flags,
 * text that is not JSON (numbers past f64's range and nesting past 128
 * levels included) or a history of the wrong shape, the message naming the
 * entry; INVALID_UTF8, NULL_PARAMETER as usual. Pure: any thread, no
 * registry; cost linear in the history's size.
 */
capstan_status capstan_format_check_history(capstan_format fmt,
                                            const char *history_json,
                                            size_t len,
                                            uint32_t flags,
                                            char **report_json,
                                            size_t *report_len,
                                            char **repaired_json,
                                            size_t *repaired_len);

/* ========================================================================
 * 6. Registry
 *
 * A capstan_registry holds tools and runs their calls. Made by
 * capstan_registry_new, freed by capstan_registry_free (which cancels what
 * still runs and waits for its callbacks). Any number of threads may use one at
 * once; only capstan_registry_free must not race other uses of it.
 * ======================================================================== */

/**
 * Registry options. NULL means defaults.
 */
typedef struct capstan_registry_options {
  /**
   * `sizeof(capstan_registry_options)`.
   */
  uint32_t struct_size;
  /**
   * `CAPSTAN_REGISTRY_*` flags.
   */
  uint32_t flags;
  /**
   * Bound on one result's content-part data (`CAPSTAN_CONTENT_PARTS`),
   * counted in decoded bytes of its image, audio and resource blob parts
   * together; 0 = 10 MiB (10485760). A result past it completes its call
   * as a tool error; the other calls of the batch are not affected.
   * Appended after `flags`: a host built against an older header passes a
   * smaller `struct_size` and gets the default.
   */
  uint64_t max_result_bytes;
} capstan_registry_options;

/** Initializes a capstan_registry_options to the defaults. */
#define CAPSTAN_REGISTRY_OPTIONS_INIT {(uint32_t)sizeof(capstan_registry_options), 0, 0}

/**
 * Registry flag: coerce strings to number/integer/boolean where the schema asks for those.
 */
#define CAPSTAN_REGISTRY_COERCE (1u << 0)

/**
 * Registry flag: `capstan_registry_add_tool` refuses (INVALID_SCHEMA, the message names
 * the default's JSON Pointer) a parameters schema with a `default` that fails
 * its own subschema. Without it such a schema registers, the default is never
 * filled in, and the tool's `"warnings"` in `CAPSTAN_FORMAT_DESCRIBE` output
 * (`capstan_registry_tools_json`) say so.
 */
#define CAPSTAN_REGISTRY_STRICT_DEFAULTS (1u << 1)

/**
 * Registry flag: `capstan_registry_add_tool` refuses (INVALID_SCHEMA) a
 * parameters schema with a key one or two edits from a JSON Schema keyword
 * (`"requried"`, `"propertes"`, `"tpye"`): the message names the key, where
 * (a JSON Pointer) and the keyword meant. Without it such a schema registers
 * (JSON Schema ignores unknown keywords, so the key checks nothing and the
 * model reads it as written) and the tool's `"warnings"` in
 * `CAPSTAN_FORMAT_DESCRIBE` output say "did you mean". Vendor keys far from
 * every keyword, `x-` keys and OpenAPI's (`nullable`, `example`) are never
 * reported.
 */
#define CAPSTAN_REGISTRY_STRICT_KEYWORDS (1u << 2)

/**
 * Fills `*opts` as `CAPSTAN_REGISTRY_OPTIONS_INIT` does (the defaults).
 * NULL_PARAMETER if `opts` is NULL. Any thread.
 */
capstan_status capstan_registry_options_init(struct capstan_registry_options *opts);

/**
 * Creates a registry. `opts` may be NULL (defaults). On success `*out` owns
 * the registry; free it with `capstan_registry_free`.
 */
capstan_status capstan_registry_new(const struct capstan_registry_options *opts,
                                    struct capstan_registry **out);

/**
 * Frees a registry; NULL is a no-op. Calls not yet started are cancelled,
 * calls in flight are reported cancelled (their handles stop resolving), and
 * each tool's destroy runs. Waits, without limit, until no tool or result
 * callback of this registry runs on another thread and every destroy has run:
 * after it returns, no callback of this registry is called. Called from inside
 * one of this registry's own callbacks it does not wait (that would deadlock):
 * the rest finishes after that callback returns. After
 * `capstan_registry_close` it does not wait again: what `close` reported
 * still running may then call back after free returns. Batches stay valid
 * until `capstan_batch_free`. Every call handle of the registry stops
 * resolving, and the text lent by `capstan_call_arguments`, `_id` and
 * `_tool` is freed (see `capstan_call_arguments`). The event hook, notifier
 * and approver are removed; their destroys have run when this returns,
 * unless an invocation of theirs still runs on another thread (after a
 * `close` that timed out), which then runs it.
 */
void capstan_registry_free(struct capstan_registry *reg);

/**
 * Shuts a registry down without freeing it, waiting at most `timeout_ms`
 * (UINT32_MAX: no limit) for callbacks running on other threads: calls not
 * started are cancelled, calls in flight are reported cancelled, tools are
 * destroyed once their callbacks return. OK when everything finished in
 * time, CAPSTAN_ERR_TIMEOUT otherwise (what still runs finishes in the
 * background). Afterwards calls on the registry end `cancelled`, registering
 * is SHUTTING_DOWN, and `capstan_registry_free` must still be called (it
 * then does not wait again). From inside one of the registry's own callbacks
 * it does not wait and returns CAPSTAN_ERR_TIMEOUT. For hosts that must not
 * hang at exit on a stuck tool.
 *
 * May race any other function on the registry (but free): a
 * `capstan_registry_add_tool` that runs at the same time either returns
 * SHUTTING_DOWN (its destroy has run) or registers a tool that this close
 * removes and destroys. It returns as soon as the work is done (never a
 * TIMEOUT for work that finished; with UINT32_MAX it returns once the last
 * callback returned and the last destroy ran). The event hook, notifier and
 * approver are removed, after the cancellations were reported to them; their
 * destroys run once their last invocation has returned; setting one
 * afterwards returns SHUTTING_DOWN. The TIMEOUT message says what was still
 * outstanding (callbacks running, tools not yet destroyed).
 */
capstan_status capstan_registry_close(struct capstan_registry *reg,
                                      uint32_t timeout_ms);

/* ========================================================================
 * 7. Tools
 *
 * A tool is a name, a JSON Schema for its arguments and a callback,
 * registered with capstan_registry_add_tool from a capstan_tool_def (copied;
 * its user_data is released by its destroy once the tool is removed and its
 * last call returned).
 * ======================================================================== */

/**
 * Kind of content a tool returns (`capstan_call_return`).
 */
typedef uint32_t capstan_content;

/**
 * Passed through to the model as is.
 */
#define CAPSTAN_CONTENT_TEXT 0

/**
 * Checked and rendered compact, non-ASCII kept; a JSON string renders as its text.
 */
#define CAPSTAN_CONTENT_JSON 1

/**
 * Content parts: JSON text of an array of MCP content blocks
 * (`{"type":"text","text"}`, `{"type":"image","data":<base64>,"mimeType"}`,
 * `{"type":"audio","data","mimeType"}`, `{"type":"resource_link","uri","name",...}`,
 * `{"type":"resource","resource":{"uri","mimeType"?,"text"|"blob"}}`), or of
 * an object `{"content":[...],"structuredContent":{...}}`. Checked when the
 * call completes: invalid base64, an empty or unknown MIME type (an image
 * part must be `image/...`, audio `audio/...`), an unknown part type or a
 * missing field, or decoded data past the registry's `max_result_bytes`
 * complete the call as a tool error naming the part and why, and return
 * INVALID_CONTENT. `max_output_chars` caps each text part; other parts are
 * bounded by `max_result_bytes` only. The result's `content` text is then
 * the parts' text: each text part as is, every other part a bracketed line
 * (`[image: image/png, 1234 bytes]`, `[audio: audio/wav, N bytes]`,
 * `[resource_link: name uri (mime)]`, `[resource: uri (mime)]` followed by
 * its text, `[resource: uri (mime), N bytes]`), joined by newlines; with no
 * parts, the structuredContent as compact JSON. Normalized results JSON carries
 * the blocks in `"parts"` and the object in `"structured_content"`; each
 * format renders them as its provider takes them (see
 * `capstan_format_write_results`).
 */
#define CAPSTAN_CONTENT_PARTS 2

/**
 * A tool's callback. Runs on a pool thread, or on the thread calling
 * `capstan_registry_execute` for the batch (it runs its own calls first), or on a
 * thread calling `capstan_batch_wait` with no time limit on the call's
 * batch, or for main-thread tools a thread that called
 * `capstan_registry_pump`: inside the pump, or while that thread waits on
 * the call's batch. It must complete `call`
 * exactly once with `capstan_call_return` or `capstan_call_fail`, before or
 * after returning, from any thread. It may call any capstan function, including
 * `capstan_registry_execute` on the same registry.
 */
typedef void (*capstan_tool_fn)(void *user_data,
                                struct capstan_call *call);

/** Initializes a capstan_tool_def (see "Initializers" above). */
#define CAPSTAN_TOOL_DEF_INIT {(uint32_t)sizeof(capstan_tool_def), NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, NULL}

/**
 * Tool flag: never runs without approval.
 */
#define CAPSTAN_TOOL_REQUIRES_APPROVAL (1u << 0)

/**
 * Tool flag: not parallel-safe; never runs concurrently with itself.
 */
#define CAPSTAN_TOOL_SERIAL (1u << 1)

/**
 * Tool flag: runs only inside `capstan_registry_pump`, on the host's thread.
 */
#define CAPSTAN_TOOL_MAIN_THREAD (1u << 2)

/**
 * Tool flag (streams): never start this tool's calls before the whole
 * response arrived, even with `CAPSTAN_EXEC_EARLY_DISPATCH`. For tools with
 * side effects: a response can still fail after one of its calls is
 * complete (a provider error, a dropped connection, the host cancelling),
 * and a host that then asks again would run the side effect twice.
 */
#define CAPSTAN_TOOL_WAIT_FOR_RESPONSE (1u << 3)

/**
 * Tool flag: a deferred tool, left out of `capstan_registry_tools_json` in
 * the provider formats (not in `CAPSTAN_FORMAT_DESCRIBE`) until the search
 * tool (`capstan_registry_add_search_tool`) has found it; it is exported
 * from then on, so the model sees it on its next request. It can be called
 * at any time.
 */
#define CAPSTAN_TOOL_DEFERRED (1u << 4)

/**
 * The tool is quick and its host runs it on its own thread: in a host batch
 * (`capstan_host_batch_begin`) its checked calls are handed to the host
 * instead of running its callback; everywhere else (execute, submit, turns,
 * streams, MCP) its callback runs as usual. For a managed binding's tools
 * that need no thread of their own (Node, Python asyncio, Java, C#).
 */
#define CAPSTAN_TOOL_HOST_RUN (1u << 5)

/**
 * Safe to run twice with the same arguments: with a journal
 * (`capstan_registry_set_journal`), a call of this tool that started in an
 * earlier process and never completed (a crash) runs again; without the
 * flag such a call fails with content beginning "Outcome unknown:".
 */
#define CAPSTAN_TOOL_IDEMPOTENT (1u << 7)

/**
 * Registration flag: `capstan_registry_add_tool` replaces a tool of the
 * same name (its destroy runs once its calls in flight are done) instead of
 * failing with INVALID_ARGUMENT. Not kept on the tool: the registered
 * tool's flags (`capstan_registry_describe_json`) do not show it.
 */
#define CAPSTAN_TOOL_REPLACE (1u << 8)

/**
 * A tool to register. Strings are NUL-terminated UTF-8, borrowed for the
 * duration of `capstan_registry_add_tool` only.
 */
typedef struct capstan_tool_def {
  /**
   * `sizeof(capstan_tool_def)`.
   */
  uint32_t struct_size;
  /**
   * `^[A-Za-z0-9_-]{1,64}$`.
   */
  const char *name;
  /**
   * What the tool does, for the model. NULL means "".
   */
  const char *description;
  /**
   * JSON Schema of the arguments; the root must be an object schema. NULL means `{"type":"object"}`.
   */
  const char *parameters;
  /**
   * The callback.
   */
  capstan_tool_fn callback;
  /**
   * Passed to `callback` and `destroy`.
   */
  void *user_data;
  /**
   * Called exactly once with `user_data` (may be NULL).
   */
  capstan_destroy_fn destroy;
  /**
   * Per-call timeout in milliseconds; 0 = none.
   */
  uint32_t timeout_ms;
  /**
   * Cap on the result text in characters; 0 = none.
   */
  uint32_t max_output_chars;
  /**
   * `CAPSTAN_TOOL_*` flags.
   */
  uint32_t flags;
  /**
   * MCP metadata of the tool, as JSON text of an object with any of the
   * MCP `Tool` fields `"title"` (string), `"annotations"` (`{"title"?,
   * "readOnlyHint"?, "destructiveHint"?, "idempotentHint"?,
   * "openWorldHint"?}`, booleans besides the title), `"outputSchema"` (a
   * JSON Schema with `"type": "object"`), `"icons"` (up to 16
   * `{"src", "mimeType"?, "sizes"?: ["48x48"], "theme"?: "light"|"dark"}`)
   * and `"execution"` (`{"taskSupport": "forbidden"|"optional"|"required"}`,
   * absent = forbidden: whether capstan's MCP server may run the tool as
   * an MCP task for a client that declares the Tasks extension
   * `io.modelcontextprotocol/tasks`; "required" refuses a client that does
   * not, with -32021). capstan's MCP server sends them in `tools/list`
   * (all but `"execution"`, which rmcp 3.11's tool list cannot carry);
   * `capstan_registry_tools_json` gives them in `CAPSTAN_FORMAT_MCP` and
   * as `"mcp"` in `CAPSTAN_FORMAT_DESCRIBE`. With an `outputSchema`, a
   * successful result with structured content (a `CAPSTAN_CONTENT_PARTS`
   * `structuredContent`, or content that is a JSON object) that fails it
   * completes the call as a tool error listing the failing JSON Pointers,
   * and `capstan_call_return` returns INVALID_CONTENT. Annotations are
   * hints for clients and approvers: capstan enforces none of them.
   * NULL = none. Borrowed for the call only. Bad JSON or an unknown or
   * mistyped field: INVALID_ARGUMENT naming it; an `outputSchema` that
   * does not compile: INVALID_SCHEMA. Appended after `flags`: a host built
   * against an older header passes a smaller `struct_size` and gets none.
   */
  const char *mcp_meta;
} capstan_tool_def;

/**
 * Fills `*def` as `CAPSTAN_TOOL_DEF_INIT` does: `struct_size` set, every
 * other field zero/NULL. NULL_PARAMETER if `def` is NULL. Any thread.
 */
capstan_status capstan_tool_def_init(struct capstan_tool_def *def);

/**
 * Checks a tool name without registering it: OK if every provider accepts it
 * (`^[A-Za-z0-9_-]{1,64}$`, the rule of `capstan_registry_add_tool`), else
 * INVALID_NAME with a message saying why (INVALID_UTF8 for bad text).
 */
capstan_status capstan_name_check(const char *name,
                                  size_t len);

/**
 * Registers a tool. A tool of the same name already registered makes it
 * fail with INVALID_ARGUMENT (the message names the tool; the registered
 * tool stays and still runs) unless `def->flags` has
 * `CAPSTAN_TOOL_REPLACE`: then it replaces that tool (the old tool's
 * destroy runs once its calls in flight are done). Whatever the outcome,
 * `def->destroy` runs exactly once for this `def->user_data`: later on
 * success, before this returns on failure (unless `def` itself is NULL, or
 * its `struct_size` does not even reach the `destroy` field).
 * Fails with INVALID_NAME, INVALID_SCHEMA (the message names the problem),
 * INVALID_UTF8, INVALID_ARGUMENT (struct_size, unknown flags, no callback,
 * a `mcp_meta` that is not JSON or has a field of the wrong shape, a name
 * already registered without `CAPSTAN_TOOL_REPLACE`).
 */
capstan_status capstan_registry_add_tool(struct capstan_registry *reg,
                                         const struct capstan_tool_def *def);

/**
 * Removes a tool by name. Its calls in flight finish; its destroy runs after
 * them. NOT_FOUND if no such tool.
 */
capstan_status capstan_registry_remove_tool(struct capstan_registry *reg,
                                            const char *name,
                                            size_t name_len);

/**
 * Options of `capstan_registry_tools_json`. NULL means defaults.
 */
typedef struct capstan_export_options {
  /**
   * `sizeof(capstan_export_options)`.
   */
  uint32_t struct_size;
  /**
   * `CAPSTAN_EXPORT_*` flags.
   */
  uint32_t flags;
  /**
   * How deferred tools (`CAPSTAN_TOOL_DEFERRED`) are exported:
   * `CAPSTAN_EXPORT_DEFERRED_HIDE` (0, the default) or
   * `CAPSTAN_EXPORT_DEFERRED_NATIVE`. Appended after `flags`: a host
   * built against an older header passes a smaller `struct_size` and
   * gets the default.
   */
  uint32_t deferred;
} capstan_export_options;

/** Initializes a capstan_export_options to the defaults. */
#define CAPSTAN_EXPORT_OPTIONS_INIT {(uint32_t)sizeof(capstan_export_options), 0, 0}

/**
 * `capstan_export_options.deferred`: deferred tools are left out of the
 * provider formats until the search tool finds them (the default).
 */
#define CAPSTAN_EXPORT_DEFERRED_HIDE 0u

/**
 * `capstan_export_options.deferred`: the provider's own deferred loading,
 * in `CAPSTAN_FORMAT_OPENAI_RESPONSES` and `CAPSTAN_FORMAT_ANTHROPIC` (the
 * other formats export as with `CAPSTAN_EXPORT_DEFERRED_HIDE`). Every tool
 * is exported, deferred ones with `"defer_loading": true`.
 * OpenAI Responses: the search tool (`capstan_registry_add_search_tool`)
 * is replaced by one `{"type": "tool_search", "execution": "client",
 * "description", "parameters"}` tool (its description and parameters; the
 * defaults without one), added when a tool is deferred; the model's
 * `tool_search_call` items are answered by `capstan_registry_run_turn`
 * with capstan's search, as `tool_search_output` items listing the found
 * tools' full definitions (strict when this export was), each tool defined
 * once per turn. A turn's answers to searches write at most 8 times the
 * response's bytes (1 MiB at least): past that a search is answered with
 * an error (here: no tools, `"status": "incomplete"`), the other calls run.
 * Anthropic: the search tool is exported as a tool; after such an export
 * its results in `capstan_registry_run_turn` are `tool_reference` blocks
 * (`{"type": "tool_reference", "tool_name"}`), which the API loads.
 * The registry remembers the last export per format: exporting again
 * without it returns to JSON search results.
 */
#define CAPSTAN_EXPORT_DEFERRED_NATIVE 1u

/**
 * Export flag: OpenAI strict mode (every property required, optional ones
 * nullable, `additionalProperties: false`, no `default`); schemas that cannot
 * be made strict are exported as they are and listed in the report.
 */
#define CAPSTAN_EXPORT_STRICT (1u << 0)

/**
 * Export flag (Gemini): lower schemas to the OpenAPI-subset `parameters`
 * field (local `$ref`s inlined, unsupported keywords dropped and reported)
 * instead of `parametersJsonSchema`.
 */
#define CAPSTAN_EXPORT_GEMINI_LOWER (1u << 1)

/**
 * Fills `*opts` as `CAPSTAN_EXPORT_OPTIONS_INIT` does (the defaults).
 * NULL_PARAMETER if `opts` is NULL. Any thread.
 */
capstan_status capstan_export_options_init(struct capstan_export_options *opts);

/**
 * The registered tools as the JSON a format's API takes (sorted by name).
 * `CAPSTAN_FORMAT_DESCRIBE`: `[{"name","description","parameters",...}]`.
 * `*out` is owned by the caller (`capstan_string_free`). Options
 * (`CAPSTAN_EXPORT_*`; NULL means none) and a report: `*report` (may be NULL if not wanted; else free with
 * `capstan_string_free`) gets `[{"tool","pointer","message"}]`: what was dropped or
 * could not be made strict, and names the format would refuse.
 */
capstan_status capstan_registry_tools_json(const struct capstan_registry *reg,
                                           capstan_format fmt,
                                           const struct capstan_export_options *opts,
                                           char **out,
                                           size_t *out_len,
                                           char **report,
                                           size_t *report_len);

/**
 * Which registered tool names each provider accepts:
 * `[{"name","openai","anthropic","gemini","mcp","problems":[...]}]`, so a host
 * sees a problem before a request fails. `*out` owned by the caller.
 */
capstan_status capstan_registry_names_json(const struct capstan_registry *reg,
                                           char **out,
                                           size_t *out_len);

/**
 * Options of `capstan_registry_search_json`. NULL means defaults (words,
 * 5 results).
 */
typedef struct capstan_search_options {
  /**
   * `sizeof(capstan_search_options)`.
   */
  uint32_t struct_size;
  /**
   * `CAPSTAN_SEARCH_*` flags.
   */
  uint32_t flags;
  /**
   * At most this many results (1 to 100); 0 = 5.
   */
  uint32_t limit;
} capstan_search_options;

/** Initializes a capstan_search_options to the defaults (words, 5 results). */
#define CAPSTAN_SEARCH_OPTIONS_INIT {(uint32_t)sizeof(capstan_search_options), 0, 0}

/**
 * Fills `*opts` as `CAPSTAN_SEARCH_OPTIONS_INIT` does (the defaults: words,
 * 5 results). NULL_PARAMETER if `opts` is NULL. Any thread.
 */
capstan_status capstan_search_options_init(struct capstan_search_options *opts);

/**
 * Options of `capstan_registry_add_search_tool`. NULL means defaults.
 */
typedef struct capstan_search_tool_options {
  /**
   * `sizeof(capstan_search_tool_options)`.
   */
  uint32_t struct_size;
  /**
   * `CAPSTAN_SEARCH_*` flags: how the model's query is read.
   */
  uint32_t flags;
  /**
   * Tools listed per search (1 to 100); 0 = 5.
   */
  uint32_t limit;
  /**
   * The tool's name (NUL-terminated UTF-8); NULL = "tool_search".
   */
  const char *name;
  /**
   * The tool's description (NUL-terminated UTF-8); NULL = a default that
   * tells the model to search by what a tool does and that found tools
   * are callable from its next turn.
   */
  const char *description;
} capstan_search_tool_options;

/** Initializes a capstan_search_tool_options to the defaults ("tool_search", 5 results). */
#define CAPSTAN_SEARCH_TOOL_OPTIONS_INIT {(uint32_t)sizeof(capstan_search_tool_options), 0, 0, NULL, NULL}

/**
 * Fills `*opts` as `CAPSTAN_SEARCH_TOOL_OPTIONS_INIT` does (the defaults:
 * "tool_search", its default description, 5 results, words).
 * NULL_PARAMETER if `opts` is NULL. Any thread.
 */
capstan_status capstan_search_tool_options_init(struct capstan_search_tool_options *opts);

/**
 * Search flag: the query is a regular expression (Rust `regex` syntax,
 * linear time; `(?i)` for case-insensitive) matched against each tool's
 * name, description and parameter names and descriptions. A match in the
 * name ranks first. Without it the query is words, ranked by BM25.
 */
#define CAPSTAN_SEARCH_REGEX (1u << 0)

/**
 * The registered tools that best match `query` (UTF-8, `query_len` bytes or
 * `CAPSTAN_NTS`), best first:
 * `{"query","mode":"words"|"regex","results":[{"name","description","score"}]}`.
 * Words are matched against tool names (split at `_`, `-`, `.`, case
 * changes and digits), descriptions, and parameter names and descriptions,
 * plurals and -ing/-ed forms meeting their stem; ranked by BM25, a word in
 * the name weighing most. Tools registered, replaced or removed (mounted MCP
 * tools included) are found, or no longer found, by the next search.
 *
 * The index is built on the registry's first search (cost proportional to
 * its tools) and updated with each registration from then on.
 * Bounds (docs/limits.md): a query of 1 to 1024 bytes, at most 100 results,
 * a regular expression compiling to at most 1 MiB.
 *
 * `*out` is owned by the caller (`capstan_string_free`), written only on
 * success. Any thread, also from inside a tool callback.
 * Fails with NULL_PARAMETER (reg, query, out), INVALID_UTF8 (query),
 * INVALID_ARGUMENT (empty or too long query, limit past 100, unknown flag,
 * a pattern that does not compile; the message says which).
 */
capstan_status capstan_registry_search_json(const struct capstan_registry *reg,
                                            const char *query,
                                            size_t query_len,
                                            const struct capstan_search_options *opts,
                                            char **out,
                                            size_t *out_len);

/**
 * Registers the built-in search tool in `reg` (replacing a tool of its
 * name): a tool the model calls, in any format, with `{"query": "..."}` to
 * find tools it was not shown. Its result is `{"tools":[{"name",
 * "description"}]}`: the best matches (as `capstan_registry_search_json`
 * finds them), the search tool itself left out. Every deferred tool
 * (`CAPSTAN_TOOL_DEFERRED`) it lists is loaded: exported by
 * `capstan_registry_tools_json` from then on, so a host that exports the
 * tools before each request (as after `capstan_registry_run_turn`) shows
 * the model what it found on its next turn. Loaded tools are per registry;
 * `capstan_registry_unload_tools` forgets them (a new conversation).
 *
 * Strings are copied. Any thread. Fails with NULL_PARAMETER (reg),
 * INVALID_ARGUMENT (limit past 100, unknown flag, struct_size), INVALID_UTF8,
 * INVALID_NAME (name), SHUTTING_DOWN (closed registry).
 */
capstan_status capstan_registry_add_search_tool(const struct capstan_registry *reg,
                                                const struct capstan_search_tool_options *opts);

/**
 * Forgets the tools the search tool has loaded: deferred tools are left
 * out of the provider exports again until found. Any thread. Fails with
 * NULL_PARAMETER (reg) only.
 */
capstan_status capstan_registry_unload_tools(const struct capstan_registry *reg);

/* ========================================================================
 * 8. Calls, inside a tool
 *
 * A capstan_call is one call of a tool, handed to its callback. It is
 * completed exactly once, with capstan_call_return or capstan_call_fail, from
 * any thread, during or after the callback; its text lives until then.
 * While it runs it can report progress and send log messages.
 * ======================================================================== */

/**
 * The severity of a log message (`capstan_call_log`): MCP's levels, the
 * syslog severities of RFC 5424, least severe first.
 */
typedef uint32_t capstan_log_level;

/**
 * Debugging detail.
 */
#define CAPSTAN_LOG_DEBUG 0

/**
 * Informational.
 */
#define CAPSTAN_LOG_INFO 1

/**
 * Normal but significant.
 */
#define CAPSTAN_LOG_NOTICE 2

/**
 * A warning.
 */
#define CAPSTAN_LOG_WARNING 3

/**
 * An error.
 */
#define CAPSTAN_LOG_ERROR 4

/**
 * A critical condition.
 */
#define CAPSTAN_LOG_CRITICAL 5

/**
 * Action must be taken at once.
 */
#define CAPSTAN_LOG_ALERT 6

/**
 * The system is unusable.
 */
#define CAPSTAN_LOG_EMERGENCY 7

/**
 * The call's validated arguments as compact JSON (schema defaults filled in),
 * NUL-terminated; `*len` (if not NULL) gets the length without the NUL.
 *
 * Lifetime (also of `capstan_call_id` and `capstan_call_tool`): owned by
 * the call, valid until the host completes the call with
 * `capstan_call_return` or `capstan_call_fail` (from any thread; even when
 * that completion is refused because the call already timed out or was
 * cancelled) or until the registry is freed, whichever comes first. A
 * timeout or cancellation does not free it: a tool may hand the pointer to
 * another thread that reads it and completes the call later. Until then the
 * handle keeps resolving (after a timeout `capstan_call_cancelled` is true
 * and a completion returns ALREADY_COMPLETED). So every call must be
 * completed exactly once, even one that timed out, or its memory is held
 * until the registry is freed. NULL if the handle is not live (see
 * `capstan_error_message`).
 */
const char *capstan_call_arguments(const struct capstan_call *call,
                                   size_t *len);

/**
 * The call's id, NUL-terminated; valid until the host completes the call or
 * the registry is freed (see `capstan_call_arguments`). NULL if the handle
 * is not live.
 */
const char *capstan_call_id(const struct capstan_call *call,
                            size_t *len);

/**
 * The called tool's name, NUL-terminated; valid until the host completes the
 * call or the registry is freed (see `capstan_call_arguments`). NULL if the
 * handle is not live.
 */
const char *capstan_call_tool(const struct capstan_call *call,
                              size_t *len);

/**
 * True once the call should stop: it timed out, its batch was cancelled or
 * its registry freed. Also true for a handle that is no longer live.
 */
bool capstan_call_cancelled(const struct capstan_call *call);

/**
 * Completes the call with content for the model (`CAPSTAN_CONTENT_TEXT`,
 * `CAPSTAN_CONTENT_JSON` or `CAPSTAN_CONTENT_PARTS`); `content` is copied. Any thread, any time, once.
 * After a timeout or cancellation: ALREADY_COMPLETED, and the content is
 * dropped; either way the handle then stops resolving and the call's lent
 * text is freed. A second completion: STALE_HANDLE. Content that is not UTF-8 (or, for
 * JSON, not JSON; for PARTS, parts that fail their check) still completes the
 * call, as a tool error the model can read, and returns INVALID_UTF8 /
 * INVALID_CONTENT. An unknown `kind` returns
 * INVALID_ARGUMENT and leaves the call open.
 */
capstan_status capstan_call_return(struct capstan_call *call,
                                   capstan_content kind,
                                   const char *content,
                                   size_t len);

/**
 * Completes the call as a tool error; the model reads `message`. Same rules
 * as `capstan_call_return`; a message that is not UTF-8 is replaced.
 */
capstan_status capstan_call_fail(struct capstan_call *call,
                                 const char *message,
                                 size_t len);

/**
 * What the call's caller gave besides the arguments, and what it can be
 * asked: a JSON object (NUL-terminated; `*len` as in
 * `capstan_call_arguments`, and the same lifetime) with `"canAsk"`, the
 * methods `capstan_call_require_input` may ask this caller for (an array of
 * `"elicitation/create"`, `"sampling/createMessage"`, `"roots/list"`,
 * possibly empty), and, in a later round, `"inputResponses"` (the
 * client's answers by the keys the tool asked with, as the client sent
 * them: the tool checks them) and `"requestState"` (the tool's own state
 * from the previous round, as it gave it; capstan checked it came back
 * untampered). An MCP client calling a served tool can be asked what its
 * capabilities declare: a 2026-07-28 client answers in its next request
 * (with `tasks/update` when the call runs as a task); a 2025-11-25
 * session's client is asked by capstan itself with server-initiated
 * requests (up to 10 rounds a call), so the tool sees the same rounds
 * either way. For every other caller `canAsk` is empty.
 * NULL if the handle is not live.
 */
const char *capstan_call_input(const struct capstan_call *call,
                               size_t *len);

/**
 * Completes the call asking its caller for input (MCP 2026-07-28
 * multi round-trip requests): `requests_json` is a JSON object of requests
 * by key, each `{"method": "elicitation/create" | "sampling/createMessage"
 * | "roots/list", "params": {...}}` (the MCP request's params), at most 32;
 * `state` (NULL = none; `state_len` may be `CAPSTAN_NTS`; at most 64 KiB)
 * is the tool's own, opaque to the client, which capstan seals (HMAC-SHA256
 * with a key of the server's) so a tampered one is refused before the tool
 * runs again. At least one request or a state. The MCP client answers and
 * the tool is called again: `capstan_call_input` then holds the answers
 * and the state. Anyone else reading the result (the event hook, stats) sees a
 * tool error naming what was asked. Same rules as `capstan_call_return`,
 * except that a refusal leaves the call open for the tool to complete
 * another way: INVALID_ARGUMENT for requests that are not JSON or break a
 * rule (the message names the key), UNSUPPORTED when the caller cannot be
 * asked or lacks a method's capability (`canAsk`), INVALID_UTF8. A tool
 * refused for a capability its MCP client did not declare that then fails
 * the call gets that client (2026-07-28) MissingRequiredClientCapability
 * (-32021) naming the capabilities, not its tool error.
 */
capstan_status capstan_call_require_input(struct capstan_call *call,
                                          const char *requests_json,
                                          size_t len,
                                          const char *state,
                                          size_t state_len);

/**
 * Reports the call's progress: `progress` so far, out of `total` (0 =
 * unknown), with `message` (NULL = none; `len` may be `CAPSTAN_NTS`;
 * copied). It reaches the registry's event hook as a
 * `CAPSTAN_EVENT_PROGRESS` event, on this thread before this returns, and,
 * for a call from an MCP client whose request carried a `progressToken`,
 * that client as `notifications/progress`. Any thread, any number of times
 * before the call is completed. `progress` must be finite, not negative
 * and above the call's previous report (MCP's rule), `total` finite and
 * not negative, `message` at most 4096 bytes: else INVALID_ARGUMENT and
 * nothing is reported. INVALID_UTF8 for a message that is not UTF-8;
 * ALREADY_COMPLETED once the call has its result (timed out, cancelled);
 * STALE_HANDLE after the host completed it.
 */
capstan_status capstan_call_progress(const struct capstan_call *call,
                                     double progress,
                                     double total,
                                     const char *message,
                                     size_t len);

/**
 * Sends a log message of the running call: `message` (`len` bytes, or
 * `CAPSTAN_NTS`; copied) at `level` (`CAPSTAN_LOG_*`). It reaches the
 * registry's event hook as a `CAPSTAN_EVENT_LOG` event, on this thread
 * before this returns, and, for a call from an MCP client that asked for
 * logs (`logging/setLevel` in a 2025-11-25 session, `_meta`
 * `io.modelcontextprotocol/logLevel` in a 2026-07-28 request), that
 * client as `notifications/message` (logger: the tool's name) when
 * `level` is at or above the one it asked for. Any thread, any number of
 * times before the call is completed. INVALID_ARGUMENT for an unknown
 * level or a message over 64 KiB (nothing is sent); INVALID_UTF8;
 * ALREADY_COMPLETED once the call has its result (timed out, cancelled);
 * STALE_HANDLE after the host completed it.
 */
capstan_status capstan_call_log(const struct capstan_call *call,
                                capstan_log_level level,
                                const char *message,
                                size_t len);

/* ========================================================================
 * 9. Running calls
 *
 * Calls in the normalized form ({"id","name","arguments"}) run with
 * capstan_registry_execute (blocking), as a capstan_batch (below), or from a
 * provider's response with capstan_registry_run_turn. Each call gets exactly
 * one result; capstan_exec_options shape how they run.
 * ======================================================================== */

/**
 * How a call ended (`capstan_result.outcome`).
 */
typedef uint32_t capstan_outcome;

/**
 * The tool returned content.
 */
#define CAPSTAN_OUTCOME_OK 0

/**
 * The tool failed (`capstan_call_fail`, malformed output, panic).
 */
#define CAPSTAN_OUTCOME_TOOL_ERROR 1

/**
 * The arguments did not match the schema (or were not JSON).
 */
#define CAPSTAN_OUTCOME_INVALID_ARGUMENTS 2

/**
 * No tool of that name.
 */
#define CAPSTAN_OUTCOME_UNKNOWN_TOOL 3

/**
 * The tool did not complete in time.
 */
#define CAPSTAN_OUTCOME_TIMEOUT 4

/**
 * The batch was cancelled or the registry freed.
 */
#define CAPSTAN_OUTCOME_CANCELLED 5

/**
 * Approval was required and not given.
 */
#define CAPSTAN_OUTCOME_DENIED 6

/**
 * One call's result, as handed to a `capstan_result_fn`. Borrowed: valid
 * only during the callback. Strings are UTF-8 and NOT NUL-terminated: use
 * the lengths (e.g. `printf("%.*s", (int)r->content_len, r->content)`).
 */
typedef struct capstan_result {
  /**
   * Position of the call in its batch.
   */
  size_t index;
  const char *id;
  size_t id_len;
  const char *name;
  size_t name_len;
  /**
   * The text for the model. For a result with content parts
   * (`CAPSTAN_CONTENT_PARTS`), their text; the parts themselves are in
   * `parts_json` (and in the normalized results JSON and each format's
   * messages).
   */
  const char *content;
  size_t content_len;
  /**
   * `CAPSTAN_OUTCOME_*`.
   */
  capstan_outcome outcome;
  /**
   * `outcome != CAPSTAN_OUTCOME_OK`.
   */
  bool is_error;
  uint64_t duration_us;
  /**
   * The result's content parts, when it has them (a tool that completed
   * with `CAPSTAN_CONTENT_PARTS`, a mounted tool returning media): the
   * JSON array of MCP content blocks the normalized results hold under
   * `"parts"`, after capstan's checks and caps. NULL and 0 for a text
   * result. Appended after `duration_us`: capstan owns this struct and
   * hands it by pointer, so a host built against an older header reads
   * the fields it knows.
   */
  const char *parts_json;
  size_t parts_json_len;
  /**
   * The result's structured content (`"structured_content"` of the
   * normalized results, MCP `structuredContent`) as JSON, or NULL and 0.
   */
  const char *structured_json;
  size_t structured_json_len;
} capstan_result;

/**
 * Receives results of a batch. Called once per call with its result, then
 * once more with `result == NULL`: the batch is done and no further callback
 * of it will come. In callback delivery it runs on the thread that finished
 * the call (a pool thread, a thread running or waiting on the batch, a
 * thread completing a deferred call, one cancelling the batch or closing
 * the registry, a pool thread when the call timed out or the batch's
 * deadline passed, an MCP thread for a mounted tool), possibly on several
 * threads at once; in poll delivery, inside `capstan_batch_poll`. capstan's
 * timer thread runs it only for a timeout or deadline while every pool
 * thread is busy (`capstan_runtime_configure`), without thread hooks; pool
 * threads run the thread hooks (`capstan_runtime_set_thread_hooks`) before it.
 */
typedef void (*capstan_result_fn)(void *user_data,
                                  const struct capstan_result *result);

/**
 * Execution options. NULL means defaults (parallel, limit 8, tools' own timeouts).
 */
typedef struct capstan_exec_options {
  /**
   * `sizeof(capstan_exec_options)`.
   */
  uint32_t struct_size;
  /**
   * `CAPSTAN_EXEC_*` flags.
   */
  uint32_t flags;
  /**
   * At most this many calls of the batch run at once; 0 = 8.
   */
  uint32_t limit;
  /**
   * Overrides every tool's timeout when > 0 (milliseconds). A timeout,
   * this one or the tool's own, runs from the call's start (its callback
   * about to run); time spent waiting before that is not counted.
   */
  uint32_t timeout_ms;
  /**
   * Ids of calls the user already approved (NUL-terminated UTF-8), so their
   * `CAPSTAN_TOOL_REQUIRES_APPROVAL` tools run without asking the approver.
   * Read during the call only. NULL when `approved_count` is 0.
   */
  const char *const *approved_ids;
  size_t approved_count;
  /**
   * Bounds every call of the batch, in milliseconds from the moment it is
   * submitted, waits included: for a free worker, for the approver's
   * decision, for a main thread to call `capstan_registry_pump`. 0 = none.
   * A call without a result by then ends `CAPSTAN_OUTCOME_TIMEOUT`, with
   * content saying what it was waiting for ("...while it waited for
   * approval...", "...for the host's main thread to call
   * capstan_registry_pump...", "...did not finish within the batch
   * deadline...": a running call is cancelled as at its timeout). A
   * decision or completion after that returns ALREADY_COMPLETED.
   * Appended after `approved_count`: a host built against an older header
   * passes a smaller `struct_size` and gets no deadline.
   */
  uint32_t deadline_ms;
  /**
   * The run (a conversation, a workflow; UTF-8, `run_id_len` bytes or
   * `CAPSTAN_NTS`) the calls belong to: with a journal on the registry
   * (`capstan_registry_set_journal`) each call is recorded and answered
   * under this id plus its call id. NULL: the journal is not used. Read
   * during the call only. Appended after `deadline_ms` (issue #47).
   */
  const char *run_id;
  size_t run_id_len;
} capstan_exec_options;

/** Initializes a capstan_exec_options to the defaults. */
#define CAPSTAN_EXEC_OPTIONS_INIT {(uint32_t)sizeof(capstan_exec_options), 0, 0, 0, NULL, 0, 0, NULL, 0}

/**
 * Exec flag: run the calls one by one, in order (default: in parallel).
 */
#define CAPSTAN_EXEC_SEQUENTIAL (1u << 0)

/**
 * Exec flag (`capstan_batch_submit`): queue results for `capstan_batch_poll` on the
 * host's thread instead of calling back on pool threads.
 */
#define CAPSTAN_EXEC_DELIVER_POLL (1u << 1)

/**
 * Exec flag: the model was given OpenAI strict-mode schemas, where an optional
 * argument is sent as `null`: such nulls are dropped before validation.
 */
#define CAPSTAN_EXEC_STRICT_NULLS (1u << 2)

/**
 * Exec flag (`capstan_batch_submit`): start every call on the calling thread before
 * `capstan_batch_submit` returns, without waiting for calls that a tool completes
 * later. For hosts whose tools hand work to their own event loop (async
 * functions): no pool thread is involved. A tool that blocks blocks the
 * caller; the limit does not apply; timeouts still do. Calls of
 * `CAPSTAN_TOOL_SERIAL` tools still go to the pool (they may have to wait
 * for their own earlier calls), as do main-thread and approval-gated calls.
 */
#define CAPSTAN_EXEC_START_INLINE (1u << 3)

/**
 * Exec flag (streams, and `capstan_registry_needs_approval`'s preview of
 * them; the other functions refuse it, INVALID_ARGUMENT): start each call the
 * moment its arguments are complete, before the response ends, unless its
 * tool is flagged `CAPSTAN_TOOL_WAIT_FOR_RESPONSE`. Off by default: a
 * response can still fail after a call is complete (see that flag), so only
 * the host knows when running early is safe. `limit` also caps the calls
 * started early and still running (the others start when one ends, or at
 * the finish); with `CAPSTAN_EXEC_SEQUENTIAL` a call starts early only once
 * every earlier call has finished.
 */
#define CAPSTAN_EXEC_EARLY_DISPATCH (1u << 4)

/**
 * Exec flag (`capstan_registry_run_turn` only): return the whole turn,
 * the model's own turn first, then the results, as one JSON array of the
 * entries to append: an OpenAI Chat `assistant` message (from
 * `choices[0].message`; `audio` reduced to its `id`) then the `tool`
 * messages; every OpenAI Responses `output` item (`reasoning` items with
 * their `encrypted_content` before the `function_call`s) then the
 * `function_call_output` items; an Anthropic `assistant` message with the
 * response's `content` blocks (`thinking` with its `signature`,
 * `redacted_thinking`, text, `tool_use`) then the `user` message of
 * results; Gemini's `candidates[0].content` (each part's
 * `thoughtSignature` in its position) then the `user` content of results.
 * A response without calls gives the model's turn alone.
 *
 * The model's turn is the response's text, byte for byte (numbers as
 * written), except the ids of calls answered under a new id (a repeated, empty or illegal id, see
 * `capstan_registry_run_turn`):
 * those are renamed in it the same way, so the history passes
 * `capstan_format_check_history`. Strings (signatures, encrypted reasoning)
 * come back as they were sent. Without the flag only the results are
 * returned, as before. INVALID_ARGUMENT (nothing runs) for describe and
 * MCP, and for a response given only as a fragment (a bare block, part or
 * `tool_calls` array).
 */
#define CAPSTAN_EXEC_WHOLE_TURN (1u << 5)

/**
 * Exec flag (`capstan_batch_submit`): the host will wait for the batch with
 * `capstan_batch_wait(batch, UINT32_MAX)`, and its calls start on that
 * waiting thread (no hand-off to a pool thread, no wake-up: the cheapest
 * way to run quick calls). Calls no waiting thread took start on pool
 * threads about 50 us after the submit (also when the host never waits).
 * Without it, calls start on pool threads at once. Not with
 * `CAPSTAN_EXEC_START_INLINE` (INVALID_ARGUMENT).
 */
#define CAPSTAN_EXEC_START_ON_WAIT (1u << 6)

/**
 * Fills `*opts` as `CAPSTAN_EXEC_OPTIONS_INIT` does (the defaults).
 * NULL_PARAMETER if `opts` is NULL. Any thread.
 */
capstan_status capstan_exec_options_init(struct capstan_exec_options *opts);

/**
 * Checks one call without running it: looks the tool up and validates the
 * arguments as `capstan_registry_execute` would before calling the tool, on the
 * calling thread, with no callback, thread or timer. For hosts that then
 * run the tool themselves (e.g. a binding's coroutine on its event loop).
 *
 * `arguments` is the arguments' JSON text, an object, as a model sends it
 * (empty text: `{}`). `flags`: 0, or `CAPSTAN_EXEC_STRICT_NULLS`.
 *
 * On OK, `*outcome` says what was found and `*out` (owned by the caller,
 * freed with `capstan_string_free`; `out_len` may be NULL) holds:
 * - `CAPSTAN_OUTCOME_OK`: the validated arguments, compact JSON, defaults
 *   filled in (coerced where the registry coerces);
 * - `CAPSTAN_OUTCOME_INVALID_ARGUMENTS`, `CAPSTAN_OUTCOME_UNKNOWN_TOOL` or
 *   `CAPSTAN_OUTCOME_CANCELLED` (the registry was closed): the result text a
 *   batch would give the call, word for word.
 *
 * Approval, timeouts, output caps, stats of the run and events are the
 * host's to apply when it runs the tool itself. Fails (outputs untouched)
 * with NULL_PARAMETER, INVALID_UTF8, INVALID_ARGUMENT (unknown flags).
 * Any thread, also inside a callback.
 */
capstan_status capstan_registry_check_call(const struct capstan_registry *reg,
                                           const char *name,
                                           size_t name_len,
                                           const char *arguments,
                                           size_t arguments_len,
                                           uint32_t flags,
                                           capstan_outcome *outcome,
                                           char **out,
                                           size_t *out_len);

/**
 * Checks every call of a batch without running any, as
 * `capstan_registry_check_call` checks one, in one crossing: for hosts that
 * run a batch of tools themselves (a binding's batch of quick tools on the
 * calling thread).
 *
 * `calls_json` is what `capstan_registry_execute` takes: one normalized
 * call `{"id","name","arguments"}` or an array of them (`id` is not used;
 * `arguments` an object or a string holding one). `flags`: 0, or
 * `CAPSTAN_EXEC_STRICT_NULLS`.
 *
 * On OK, `*out` (owned by the caller, freed with `capstan_string_free`;
 * `out_len` may be NULL) is an array with a pair per call, in call order:
 * - `["ok",{...}]`: the validated arguments, defaults filled in (coerced
 *   where the registry coerces);
 * - `["invalid_arguments"|"unknown_tool"|"cancelled","..."]`: the result
 *   text a batch would give the call, word for word (cancelled: the
 *   registry was closed).
 *
 * Invalid calls count in their tool's stats as `capstan_registry_check_call`
 * counts them. Approval, timeouts, output caps, stats of the runs and events
 * are the host's to apply. Fails (outputs untouched) with NULL_PARAMETER,
 * INVALID_UTF8, INVALID_ARGUMENT (unknown flags), INVALID_CALLS (`calls_json`
 * is not calls). Any thread, also inside a callback; linear in the calls,
 * each bounded as in `capstan_registry_check_call` (docs/limits.md).
 */
capstan_status capstan_registry_check_calls(const struct capstan_registry *reg,
                                            const char *calls_json,
                                            size_t len,
                                            uint32_t flags,
                                            char **out,
                                            size_t *out_len);

/**
 * Runs calls and blocks until each has its one result. `calls_json` is one
 * normalized call `{"id","name","arguments"}` or an array of them
 * (`arguments` may be an object or a string holding one). On success
 * `*results_json` (free with `capstan_string_free`) is an array of normalized results
 * `{"id","name","content","is_error","outcome","duration_us"}` in call order.
 * Tool failures, invalid arguments, unknown tools, timeouts are results, not
 * statuses; INVALID_CALLS only when `calls_json` itself is malformed. Any
 * thread, including inside a tool callback (nested execution). On a thread
 * that ever called `capstan_registry_pump` on `reg`, main-thread tools of
 * the batch run on this thread while it waits; from any other thread they
 * wait for a pump: 60 s at most in a batch without `opts->deadline_ms`
 * (then they end `timeout`, saying that no thread called
 * `capstan_registry_pump`), or until the deadline.
 */
capstan_status capstan_registry_execute(struct capstan_registry *reg,
                                        const char *calls_json,
                                        size_t len,
                                        const struct capstan_exec_options *opts,
                                        char **results_json,
                                        size_t *results_len);

/**
 * One agent turn: parses the calls out of `response_json`, runs them (in
 * parallel, per `opts`), and returns in `*messages_json` what to append to
 * the conversation in format `fmt`. Blocks like `capstan_registry_execute`.
 * The response is read exactly as `capstan_format_parse_calls` reads it, with the
 * same statuses: on `CAPSTAN_ERR_PROVIDER_ERROR` or
 * `CAPSTAN_ERR_INVALID_RESPONSE` no call runs and nothing is written. A
 * call with unreadable arguments gets its own `invalid_arguments` result.
 *
 * Every call of the response gets exactly one result, in call order,
 * whatever ends it. Ids: a call whose id repeats an earlier call's of the
 * same response, or that the format refuses (empty; Anthropic: outside
 * `[a-zA-Z0-9_-]`; OpenAI Responses: over 64 characters) is answered under a
 * new id: the id made legal, then `_2`, `_3`... until unique (an empty id
 * becomes `call_{position}`). The model's own message still holds the
 * original ids: `capstan_format_check_history` with
 * `CAPSTAN_HISTORY_REPAIR` renames those calls the same way.
 */
capstan_status capstan_registry_run_turn(struct capstan_registry *reg,
                                         capstan_format fmt,
                                         const char *response_json,
                                         size_t len,
                                         const struct capstan_exec_options *opts,
                                         char **messages_json,
                                         size_t *out_len);

/**
 * Which calls of `calls_json` would wait for approval (their tool is flagged
 * `CAPSTAN_TOOL_REQUIRES_APPROVAL` and their id is not in
 * `opts->approved_ids`): `*out` gets `[{"index","id","name"}]`, owned by the
 * caller. Runs nothing. `opts` are the options the calls will run with, so
 * it takes every flag a function running calls takes (execute, submit, run
 * turn, streams), to be passed the same struct; none changes its answer,
 * and a flag no function takes is INVALID_ARGUMENT.
 */
capstan_status capstan_registry_needs_approval(const struct capstan_registry *reg,
                                               const char *calls_json,
                                               size_t len,
                                               const struct capstan_exec_options *opts,
                                               char **out,
                                               size_t *out_len);

/* ========================================================================
 * 10. Batches
 *
 * A capstan_batch is calls running in the background, made by
 * capstan_batch_submit; results go to a callback or a queue
 * (capstan_batch_poll). Free it with capstan_batch_free at any point: a batch
 * still running finishes internally.
 * ======================================================================== */

/**
 * Starts running calls and returns at once; `*out` (free with
 * `capstan_batch_free`) is the batch. `calls_json` as for `capstan_registry_execute`.
 * Results go to `on_result` (with `user_data`) as each call finishes, each
 * carrying its index; after the last, `on_result` is called once with NULL.
 * With `CAPSTAN_EXEC_DELIVER_POLL` results are queued instead, for
 * `capstan_batch_poll` (and `on_result` here is unused and may be NULL).
 * `on_result` may be NULL: results are dropped, `capstan_batch_wait` still works.
 * Calls start on pool threads at once (up to the batch's limit; while every
 * call so far is of a tool whose last 4 calls each ended within 20 us, on one
 * pool thread, which calls the others in when calls still wait 50 us after
 * it began: two quick calls wake one thread, not two). With
 * `CAPSTAN_EXEC_START_ON_WAIT` they start on the thread that waits with
 * `capstan_batch_wait(batch, UINT32_MAX)` instead (no hand-off: the
 * cheapest way to run a batch of quick calls), or on pool threads about
 * 50 us after the submit for those no waiting thread took by then (a
 * timer: no thread polls for it). With `CAPSTAN_EXEC_START_INLINE` they
 * start on the calling thread before this returns; the two flags together
 * are INVALID_ARGUMENT.
 */
capstan_status capstan_batch_submit(struct capstan_registry *reg,
                                    const char *calls_json,
                                    size_t len,
                                    const struct capstan_exec_options *opts,
                                    capstan_result_fn on_result,
                                    void *user_data,
                                    struct capstan_batch **out);

/**
 * Waits until every result of the batch was handed over (callback delivery:
 * every callback returned, the final `result == NULL` one included, so the
 * callback's `user_data` may be freed once this returns OK; poll delivery:
 * every result is queued), up to
 * `timeout_ms` (0 = just check, UINT32_MAX = no limit). OK when done,
 * CAPSTAN_ERR_TIMEOUT otherwise (the batch keeps running). Do not call from
 * inside the batch's own result callback. With no time limit (UINT32_MAX)
 * this thread runs the batch's calls no pool thread has started yet, rather
 * than sleep (their tool and result callbacks then run here); with a time
 * limit it only waits. On a thread that ever called
 * `capstan_registry_pump` on the batch's registry, the batch's main-thread
 * calls run on this thread while it waits.
 */
capstan_status capstan_batch_wait(struct capstan_batch *batch,
                                  uint32_t timeout_ms);

/**
 * Hands up to `max` queued results (poll delivery) to `on_result` on the
 * calling thread, oldest first; after the last result of the batch it calls
 * `on_result` once with NULL. Returns how many results it handed over (0 for
 * a NULL batch or callback).
 */
size_t capstan_batch_poll(struct capstan_batch *batch,
                          capstan_result_fn on_result,
                          void *user_data,
                          size_t max);

/**
 * Cancels the batch: calls not yet started never start and report
 * `cancelled`; running calls see `capstan_call_cancelled` and still deliver
 * their own result. Every call still gets exactly one result. NULL: no-op.
 */
void capstan_batch_cancel(struct capstan_batch *batch);

/**
 * Frees a batch at any point; NULL is a no-op. A batch still running finishes
 * its calls internally and releases its memory then. When this returns no
 * result callback of the batch is running or will run (called from inside
 * one, that one is the last). Consumes `batch`.
 */
void capstan_batch_free(struct capstan_batch *batch);

/* ========================================================================
 * 11. Host batches
 *
 * A capstan_host_batch is the path of a host that runs its quick tools
 * (flagged CAPSTAN_TOOL_HOST_RUN) on its own thread: one crossing hands out
 * every checked call as one JSON array, one crossing takes every answer back,
 * while the batch's other calls run on the pool. Made by
 * capstan_host_batch_begin, freed by capstan_host_batch_free (a checked
 * handle: a use after the free is CAPSTAN_ERR_STALE_HANDLE).
 * ======================================================================== */

/**
 * Starts a batch whose calls of `CAPSTAN_TOOL_HOST_RUN` tools the host runs
 * itself: one crossing hands out all of them, checked; one crossing
 * (`capstan_host_batch_finish`) takes all their answers.
 *
 * `calls_json` as for `capstan_registry_execute`. Every call is checked
 * here, on this thread, as execute checks it (unknown tool, arguments
 * validated, coerced, defaults filled, approval asked); calls of every
 * other tool (a native callback, a slow or blocking tool) start on the
 * pool at once, under `opts->limit`. On success `*out` is the batch and
 * `*calls_json_out` (length in `*calls_len`, which may be NULL) lends the
 * calls the host must run, by index, as one JSON array
 * `[{"index","id","name","arguments"}]` (`arguments` an object, defaults
 * filled), valid until `capstan_host_batch_free`: do not free it. Calls
 * that cannot run (unknown, invalid, denied) are not in it: they already
 * have their result. A host-run call not checked before this returns (one
 * waiting for an approver's later decision, a `CAPSTAN_TOOL_SERIAL`
 * tool's) runs its tool's callback instead, on a pool thread.
 * `opts` takes `CAPSTAN_EXEC_SEQUENTIAL` (the pool's calls one at a time;
 * the host runs its own as it likes, meanwhile) and
 * `CAPSTAN_EXEC_STRICT_NULLS`; `opts->deadline_ms` bounds the whole batch,
 * the host's answers included: a call unanswered by then ends `timeout`.
 * Any thread; the calls lent are the host's to run on this thread (no
 * hop), and a handed-out call has no `capstan_call` (no progress, log or
 * input requests: a tool that needs them is not `CAPSTAN_TOOL_HOST_RUN`).
 */
capstan_status capstan_host_batch_begin(struct capstan_registry *reg,
                                        const char *calls_json,
                                        size_t len,
                                        const struct capstan_exec_options *opts,
                                        struct capstan_host_batch **out,
                                        const char **calls_json_out,
                                        size_t *calls_len);

/**
 * Hands capstan the host's answers to every handed-out call at once, waits
 * up to `timeout_ms` for the batch's other calls, and lends every result in
 * call order.
 *
 * `answers_json`: one JSON array with one entry per handed-out call, any
 * order: `{"index": N, "text": "..."}`, `{"index": N, "json": <any JSON>}`,
 * `{"index": N, "parts": <MCP content blocks>}` or `{"index": N, "error":
 * "..."}` (a tool error the model reads). capstan renders each as a
 * callback's completion would be (output limits, content kinds). On
 * success `*results_json` lends the results array of
 * `capstan_registry_execute` (length in `*results_len`, may be NULL),
 * valid until `capstan_host_batch_free`: do not free it.
 *
 * `timeout_ms`: how long to wait for the batch's pool calls (0 = not at
 * all, UINT32_MAX = no limit; bounded anyway by their timeouts and the
 * deadline). Still running then: CAPSTAN_ERR_TIMEOUT, the answers kept;
 * call again with `answers_json` NULL to wait again. The registry's
 * notifier and wake fd (`capstan_registry_set_notify`,
 * `capstan_registry_wake_fd`) fire when the pool's calls are done, so an
 * event loop need not block here.
 *
 * The whole answer is checked before any call completes; on any problem
 * nothing changes and the host may answer again: INVALID_RESULTS for
 * malformed JSON (a wrong `len` included), an index not handed out, an
 * index answered twice, a call left unanswered, an entry without exactly
 * one of the four fields, or no answers (NULL) on the first call.
 * ALREADY_COMPLETED for answers given again, or any call once the results
 * were lent; WRONG_CONTEXT while another thread is inside this function on
 * the same batch; STALE_HANDLE for a freed batch. An answer for a call
 * that already ended (its timeout, the deadline,
 * `capstan_host_batch_cancel`) is dropped: its result says why it ended.
 * Any thread.
 */
capstan_status capstan_host_batch_finish(struct capstan_host_batch *batch,
                                         const char *answers_json,
                                         size_t len,
                                         uint32_t timeout_ms,
                                         const char **results_json,
                                         size_t *results_len);

/**
 * Cancels the batch: pool calls not started end `cancelled`, running ones
 * see `capstan_call_cancelled`; handed-out calls without an answer end
 * `cancelled` (a later answer for them is dropped). NULL or freed: no-op.
 */
void capstan_host_batch_cancel(struct capstan_host_batch *batch);

/**
 * Frees the batch and the text it lent; NULL or already freed: no-op.
 * Handed-out calls never answered end `cancelled`; pool calls still
 * running finish internally. A thread inside `capstan_host_batch_finish`
 * on it at the time keeps it alive until that returns (the text it lends
 * then goes with it). Consumes `batch`.
 */
void capstan_host_batch_free(struct capstan_host_batch *batch);

/* ========================================================================
 * 12. Main thread and wake-ups
 *
 * For hosts with a main loop: tools flagged CAPSTAN_TOOL_MAIN_THREAD run
 * when the host calls capstan_registry_pump; a notifier or a wake fd says
 * when there is work.
 * ======================================================================== */

/**
 * Wakes an event-loop host: called on any thread when a result is queued for
 * polling or a main-thread call waits for `capstan_registry_pump`. Must be
 * quick and must not call into capstan: post to your loop, nothing more.
 * Its `user_data` is released by the destroy given to
 * `capstan_registry_set_notify`.
 */
typedef void (*capstan_notify_fn)(void *user_data);

/**
 * Runs main-thread tools (`CAPSTAN_TOOL_MAIN_THREAD`) queued on `reg`, on the
 * calling thread, for about `budget_ms` (at least one call if any is
 * queued). Call it from the host's main thread: a game frame, a UI idle
 * handler. Returns how many calls ran (0 if `reg` is NULL).
 *
 * Every thread that ever called this on `reg` counts as a main thread of
 * `reg` from then on. A main thread that waits on a batch
 * (`capstan_registry_execute`, `capstan_registry_run_turn`, `capstan_batch_wait`, also nested
 * inside a main-thread tool) runs that batch's main-thread calls itself
 * while it waits, so it never deadlocks waiting for a pump that only it
 * would do. Other threads' main-thread calls still wait for a pump (in a
 * batch without a deadline, 60 s at most: then they end `timeout` saying
 * that no thread pumped).
 */
size_t capstan_registry_pump(struct capstan_registry *reg,
                             uint32_t budget_ms);

/**
 * Sets (or with NULL `notify`, removes) the wake-up callback of an event-loop
 * host: called on any thread when a result is queued for polling or a
 * main-thread call waits for `capstan_registry_pump`. Replaces any previous one.
 *
 * `destroy` (may be NULL) runs exactly once with `user_data`, after the last
 * invocation of this `notify` has returned: when it is replaced or removed
 * (NULL `notify`), when the registry is closed or freed, or before this
 * returns if `notify` is NULL or the call fails (NULL_PARAMETER;
 * SHUTTING_DOWN after `capstan_registry_close`). It runs on the thread that
 * replaced, removed or closed, or on the thread of that last invocation.
 */
capstan_status capstan_registry_set_notify(struct capstan_registry *reg,
                                           capstan_notify_fn notify,
                                           void *user_data,
                                           capstan_destroy_fn destroy);

/**
 * `*out` gets a file descriptor that becomes readable when a result is
 * queued for polling or a main-thread call waits for `capstan_registry_pump`.
 * Add it to epoll/kqueue/poll/select; when readable, reset it, then poll your
 * batches and pump. Made on first call; later calls return the same fd.
 * Owned by the registry (closed by `capstan_registry_free`): do not close it.
 * Any thread.
 * - Linux, Android: an eventfd; read 8 bytes to reset it.
 * - macOS, iOS, the BSDs: the read end of a non-blocking pipe; read until
 *   read() fails with EAGAIN to reset it.
 * - Windows: UNSUPPORTED (use `capstan_registry_wake_handle`).
 *
 * Fails with NULL_PARAMETER, INTERNAL if the OS refuses the fd (the message
 * says why).
 */
capstan_status capstan_registry_wake_fd(struct capstan_registry *reg,
                                        int32_t *out);

/**
 * Windows: `*out` gets an event HANDLE (as `void *`) that is set when a
 * result is queued for polling or a main-thread call waits for
 * `capstan_registry_pump`. Wait on it with WaitForMultipleObjects or
 * MsgWaitForMultipleObjects: it is an auto-reset event, so the wait that
 * returns it also resets it; then poll your batches and pump. Made on first
 * call; later calls return the same HANDLE. Owned by the registry (closed by
 * `capstan_registry_free`): do not close it. Any thread.
 * Elsewhere: UNSUPPORTED (use `capstan_registry_wake_fd`).
 *
 * Fails with NULL_PARAMETER, INTERNAL if the OS refuses the event (the
 * message says why).
 */
capstan_status capstan_registry_wake_handle(struct capstan_registry *reg,
                                            void **out);

/* ========================================================================
 * 13. Approvals
 *
 * Calls of tools flagged CAPSTAN_TOOL_REQUIRES_APPROVAL wait for the
 * registry's approver, which gets a capstan_approval and decides it exactly
 * once (now or later, from any thread).
 * ======================================================================== */

/**
 * Decides calls of tools flagged `CAPSTAN_TOOL_REQUIRES_APPROVAL`: must call
 * `capstan_approval_decide` exactly once per approval, now or later, from any
 * thread. Runs on a pool thread (or the thread calling `capstan_registry_execute`).
 */
typedef void (*capstan_approver_fn)(void *user_data,
                                    struct capstan_approval *approval);

/**
 * Sets (NULL `approver`: removes) the registry's approver. It receives every
 * call of a `CAPSTAN_TOOL_REQUIRES_APPROVAL` tool not listed in the batch's
 * `approved_ids`. Without an approver such calls end `denied`.
 *
 * `destroy` (may be NULL) runs exactly once with `user_data`, after the last
 * invocation of this `approver` has returned: when it is replaced or removed
 * (NULL `approver`), when the registry is closed or freed, or before this
 * returns if `approver` is NULL or the call fails (NULL_PARAMETER;
 * SHUTTING_DOWN after `capstan_registry_close`). Approvals the approver
 * still holds stay decidable after its destroy ran. Runs on the thread that
 * replaced the approver or on the thread of that last invocation.
 */
capstan_status capstan_registry_set_approver(struct capstan_registry *reg,
                                             capstan_approver_fn approver,
                                             void *user_data,
                                             capstan_destroy_fn destroy);

/**
 * The waiting call's tool name, id or validated arguments (compact JSON),
 * NUL-terminated; `*len` (if not NULL) gets the length. Valid until the
 * decision. NULL if the handle is not live.
 */
const char *capstan_approval_tool(const struct capstan_approval *approval,
                                  size_t *len);

/**
 * See `capstan_approval_tool`.
 */
const char *capstan_approval_id(const struct capstan_approval *approval,
                                size_t *len);

/**
 * See `capstan_approval_tool`.
 */
const char *capstan_approval_arguments(const struct capstan_approval *approval,
                                       size_t *len);

/**
 * Approves (`approve` true: the call runs) or denies (its result is `denied`,
 * with `reason` for the model; may be NULL) a waiting call. Once, from any
 * thread; a second decision, or one after the call ended otherwise (its
 * batch cancelled, its deadline passed, the registry closed), returns
 * ALREADY_COMPLETED or STALE_HANDLE.
 */
capstan_status capstan_approval_decide(struct capstan_approval *approval,
                                       bool approve,
                                       const char *reason,
                                       size_t len);

/* ========================================================================
 * 14. Events and statistics
 *
 * An event hook sees each call start and end; the statistics are
 * per-tool counters as JSON.
 * ======================================================================== */

/**
 * What an event reports (`capstan_event.kind`).
 */
typedef uint32_t capstan_event_kind;

/**
 * A tool callback is about to run.
 */
#define CAPSTAN_EVENT_STARTED 0

/**
 * A call has its result (`outcome`, `duration_us` set).
 */
#define CAPSTAN_EVENT_FINISHED 1

/**
 * A call ran past its deadline (its FINISHED with TIMEOUT follows).
 */
#define CAPSTAN_EVENT_TIMED_OUT 2

/**
 * A call ended cancelled (its FINISHED with CANCELLED follows).
 */
#define CAPSTAN_EVENT_CANCELLED 3

/**
 * A running call reported progress (`capstan_call_progress`, or a mounted
 * MCP server's `notifications/progress` for it): `progress`, `total` and
 * `message` set; `duration_us` is the time since its callback started.
 * Hooks written before this kind existed must ignore kinds they do not know.
 */
#define CAPSTAN_EVENT_PROGRESS 4

/**
 * A running call sent a log message (`capstan_call_log`): `level` and
 * `message` set; `duration_us` is the time since its callback started.
 */
#define CAPSTAN_EVENT_LOG 5

/**
 * The call was answered from the registry's journal without running its
 * tool (`capstan_registry_set_journal`); a `FINISHED` event follows.
 */
#define CAPSTAN_EVENT_REPLAYED 6

/**
 * One event. Borrowed: valid during the hook only; strings NOT NUL-terminated.
 */
typedef struct capstan_event {
  capstan_event_kind kind;
  const char *tool;
  size_t tool_len;
  const char *id;
  size_t id_len;
  /**
   * Position of the call in its batch.
   */
  size_t index;
  /**
   * For FINISHED: `CAPSTAN_OUTCOME_*`; otherwise 0.
   */
  capstan_outcome outcome;
  /**
   * For FINISHED and TIMED_OUT: microseconds since the callback started.
   */
  uint64_t duration_us;
  /**
   * For PROGRESS: the value reported (grows with every report); else 0.
   * Appended: a hook built against an older header does not read it.
   */
  double progress;
  /**
   * For PROGRESS: the total, 0 when unknown; else 0.
   */
  double total;
  /**
   * For PROGRESS: the message (NOT NUL-terminated), NULL when none; for
   * LOG: the log message.
   */
  const char *message;
  size_t message_len;
  /**
   * For LOG: its `CAPSTAN_LOG_*` level; else 0. Appended: a hook built
   * against an older header does not read it.
   */
  capstan_log_level level;
} capstan_event;

/**
 * Observes calls: runs on the thread where the event happens, possibly on
 * several at once. Must be quick and must not block.
 */
typedef void (*capstan_event_fn)(void *user_data,
                                 const struct capstan_event *event);

/**
 * Sets (NULL `hook`: removes) the registry's event hook. Replaces any
 * previous one; an invocation of the old hook may still be running on
 * another thread when this returns.
 *
 * `destroy` (may be NULL) runs exactly once with `user_data`, after the last
 * invocation of this `hook` has returned: when it is replaced or removed
 * (NULL `hook`), when the registry is closed or freed, or before this returns
 * if `hook` is NULL or the call fails (NULL_PARAMETER; SHUTTING_DOWN after
 * `capstan_registry_close`). It runs on the thread that replaced the hook or
 * on the thread of that last invocation: free `user_data` there, never
 * right after this function returns.
 */
capstan_status capstan_registry_set_event_hook(struct capstan_registry *reg,
                                               capstan_event_fn hook,
                                               void *user_data,
                                               capstan_destroy_fn destroy);

/**
 * Per-tool statistics as JSON, owned by the caller:
 * `{"tools":{"<name>":{"calls","outcomes":{"ok",...},"in_flight","p50_us","p99_us"}}}`.
 * Latency percentiles are bucket bounds (within 25%); null before any call ran.
 */
capstan_status capstan_registry_stats_json(const struct capstan_registry *reg,
                                           char **out,
                                           size_t *out_len);

/* ========================================================================
 * 15. Durable calls: journals
 *
 * A capstan_journal records every call a registry runs under a run id
 * (capstan_exec_options.run_id) and answers a call it has a completed record
 * of without running its tool: a JSON Lines file, an SQLite database (feature
 * journal-sqlite) or the host's own store through callbacks. Opened by
 * capstan_journal_open_* or capstan_journal_new, freed by capstan_journal_free;
 * a registry using it (capstan_registry_set_journal) keeps it alive.
 * ======================================================================== */

/**
 * A journal: where a registry records its calls and finds them again
 * (see `capstan_registry_set_journal`). Opened by a `capstan_journal_open_*`
 * function or `capstan_journal_new`, freed with `capstan_journal_free`;
 * a registry using it keeps what it needs alive, so the two may be freed
 * in any order. Thread-safe.
 */
typedef struct capstan_journal capstan_journal;

/** Initializes a capstan_journal_callbacks (no callbacks: set record, lookup, user_data, destroy after). */
#define CAPSTAN_JOURNAL_CALLBACKS_INIT {(uint32_t)sizeof(capstan_journal_callbacks), NULL, NULL, NULL, NULL}

/**
 * `capstan_registry_set_journal` flag: replay only. No tool runs at all;
 * a call missing from the journal (or whose outcome it left unknown)
 * fails with an error result naming it. Nothing is written.
 */
#define CAPSTAN_JOURNAL_REPLAY 1

/**
 * `capstan_journal_open_sqlite` flag: fsync every commit (SQLite
 * `synchronous=FULL`). Without it (`NORMAL`) a record survives the process
 * ending at any point, but the last ones may be lost if the machine stops.
 */
#define CAPSTAN_JOURNAL_FULL_SYNC 1

/**
 * Where a host's `lookup` callback writes what it found (see
 * `capstan_journal_answer_set`). Valid during that callback only.
 */
typedef struct capstan_journal_answer capstan_journal_answer;

/**
 * Stores one record of a host's journal (see `capstan_journal_callbacks`).
 */
typedef int32_t (*capstan_journal_record_fn)(void *user_data,
                                             const char *record_json,
                                             size_t len);

/**
 * Finds the record of a call in a host's journal (see
 * `capstan_journal_callbacks`); the strings are not NUL-terminated.
 */
typedef int32_t (*capstan_journal_lookup_fn)(void *user_data,
                                             const char *run_id,
                                             size_t run_len,
                                             const char *call_id,
                                             size_t call_len,
                                             struct capstan_journal_answer *answer);

/**
 * A journal kept by the host (its own database or durable engine). Every
 * record is one JSON object (the README's "Durable calls" gives the
 * shape; the same text a JSON Lines journal holds per line).
 *
 * - `record(user_data, record_json, len)`: stores the record durably
 *   before returning; a later `completed` record of a (run, call) key
 *   replaces its `started`. Returns 0 on success; anything else fails the
 *   call (a `started` that fails keeps the tool from running).
 * - `lookup(user_data, run_id, run_len, call_id, call_len, answer)`: if the
 *   key has a record (`completed` if any, else `started`), hands its JSON
 *   to `capstan_journal_answer_set(answer, ...)`; returns 0 (found or not),
 *   anything else fails the call without running it.
 *
 * Both run on the thread running the call (any thread, several at once),
 * must not call into this journal's registry, and are never called while
 * capstan holds a lock. `destroy(user_data)` runs exactly once: when the
 * journal and every registry using it are gone, or at once if
 * `capstan_journal_new` fails.
 */
typedef struct capstan_journal_callbacks {
  /**
   * `sizeof(capstan_journal_callbacks)`.
   */
  uint32_t struct_size;
  capstan_journal_record_fn record;
  capstan_journal_lookup_fn lookup;
  void *user_data;
  capstan_destroy_fn destroy;
} capstan_journal_callbacks;

/**
 * Fills `*cbs` as `CAPSTAN_JOURNAL_CALLBACKS_INIT` does (no callbacks).
 * NULL_PARAMETER if `cbs` is NULL. Any thread.
 */
capstan_status capstan_journal_callbacks_init(struct capstan_journal_callbacks *cbs);

/**
 * Opens (creating it if absent) a JSON Lines journal at `path` (UTF-8,
 * `path_len` or `CAPSTAN_NTS`): record/replay fixtures a test checks in.
 * One process at a time. INVALID_ARGUMENT if the file cannot be opened or
 * holds a line that is not a record (the message names the line; the file
 * is left as it was). On success `*out` owns the journal. Any thread.
 */
capstan_status capstan_journal_open_jsonl(const char *path,
                                          size_t path_len,
                                          struct capstan_journal **out);

/**
 * Opens (creating it if absent) an SQLite journal at `path`: WAL mode, one
 * transaction per record, safe for several processes on one file.
 * `flags`: `CAPSTAN_JOURNAL_FULL_SYNC` or 0. UNSUPPORTED in a library
 * built without the `journal-sqlite` feature; INVALID_ARGUMENT if the
 * database cannot be opened. On success `*out` owns the journal.
 */
capstan_status capstan_journal_open_sqlite(const char *path,
                                           size_t path_len,
                                           uint32_t flags,
                                           struct capstan_journal **out);

/**
 * A journal kept by the host through `cbs` (see
 * `capstan_journal_callbacks`). NULL_PARAMETER if `cbs`, `out` or a
 * callback is NULL (then `cbs->destroy` runs at once, if `cbs` is not
 * NULL). On success `*out` owns the journal. Any thread.
 */
capstan_status capstan_journal_new(const struct capstan_journal_callbacks *cbs,
                                   struct capstan_journal **out);

/**
 * From inside a `lookup` callback: the record found (its JSON, `len` or
 * `CAPSTAN_NTS`; copied). INVALID_ARGUMENT if it is not a record (the
 * lookup then fails the call, saying why). The callback's thread only.
 */
capstan_status capstan_journal_answer_set(struct capstan_journal_answer *answer,
                                          const char *record_json,
                                          size_t len);

/**
 * Frees a journal. NULL is a no-op. Registries using it keep it until
 * they stop (`capstan_registry_set_journal` with NULL, or their free).
 */
void capstan_journal_free(struct capstan_journal *journal);

/**
 * Makes `reg` use `journal` (NULL: none) for every batch run with a run id
 * (`capstan_exec_options.run_id`), from the next batch on: a call whose
 * (run id, call id) has a completed record is answered from it without
 * running its tool (outcome and content as recorded; a
 * `CAPSTAN_EVENT_REPLAYED` event; `"replayed"` in the stats); one whose
 * tool, schema or validated arguments changed fails naming what changed;
 * one that started in an earlier process and never completed is run again
 * if its tool is `CAPSTAN_TOOL_IDEMPOTENT`, else fails with content
 * beginning "Outcome unknown:"; any other call is recorded `started`
 * before its callback runs and `completed` before its result is handed
 * over. `flags`: `CAPSTAN_JOURNAL_REPLAY` or 0. Any thread.
 */
capstan_status capstan_registry_set_journal(struct capstan_registry *reg,
                                            const struct capstan_journal *journal,
                                            uint32_t flags);

/* ========================================================================
 * 16. Streams
 *
 * A capstan_stream reads a streamed model response as it arrives
 * (capstan_stream_feed), passes text deltas on and starts each tool call as
 * soon as it is complete. Made by capstan_stream_new, ended by
 * capstan_stream_finish, freed by capstan_stream_free.
 * ======================================================================== */

/**
 * Receives a piece of the model's text as it streams. `text` is UTF-8 (never
 * a partial character), NOT NUL-terminated, borrowed for the call. Runs on
 * the thread calling `capstan_stream_feed` (or `capstan_stream_finish`, for
 * text in the body's last lines), inside it. It may call
 * `capstan_stream_cancel` but not feed or finish the same stream.
 */
typedef void (*capstan_text_fn)(void *user_data,
                                const char *text,
                                size_t len);

/**
 * Where a stream delivers what it reads. NULL means nothing is delivered.
 */
typedef struct capstan_stream_sink {
  /**
   * `sizeof(capstan_stream_sink)`.
   */
  uint32_t struct_size;
  /**
   * Text deltas (may be NULL).
   */
  capstan_text_fn on_text;
  /**
   * Call results as each call ends (may be NULL), `result->index` being
   * the call's position in the response. Runs on the thread that finished
   * the call (a pool thread for a call started early; see
   * `capstan_result_fn`), possibly on several at once, or inside
   * `capstan_stream_finish`. Every call of the response gets exactly one;
   * then, inside `capstan_stream_finish` (whatever it returns), one last
   * call with `result == NULL`.
   */
  capstan_result_fn on_result;
  /**
   * Passed to both. Must stay valid until `capstan_stream_finish` or
   * `capstan_stream_free` returned: no callback of the stream runs after
   * either. capstan never frees it.
   */
  void *user_data;
} capstan_stream_sink;

/** Initializes a capstan_stream_sink (no callbacks). */
#define CAPSTAN_STREAM_SINK_INIT {(uint32_t)sizeof(capstan_stream_sink), NULL, NULL, NULL}

/**
 * Fills `*sink` as `CAPSTAN_STREAM_SINK_INIT` does (no callbacks).
 * NULL_PARAMETER if `sink` is NULL. Any thread.
 */
capstan_status capstan_stream_sink_init(struct capstan_stream_sink *sink);

/**
 * Cap on the bytes one stream holds at once (16 MiB): the line and event
 * being read, the arguments of calls, the response's text kept for
 * `capstan_stream_finish`. Past it, feed fails with
 * `CAPSTAN_ERR_STREAM_TOO_LARGE` (and so does every later feed and the finish).
 */
#define CAPSTAN_STREAM_MAX_BUFFERED 16777216

/**
 * Starts reading a streamed response in `fmt` (`CAPSTAN_FORMAT_OPENAI_CHAT`,
 * `_OPENAI_RESPONSES`, `_ANTHROPIC` or `_GEMINI`; the others are
 * INVALID_ARGUMENT): the body of a server-sent-events response (Gemini:
 * `streamGenerateContent?alt=sse`). `opts` (NULL: defaults) say how calls
 * run, as for `capstan_registry_execute`, plus `CAPSTAN_EXEC_EARLY_DISPATCH`;
 * any other exec flag is INVALID_ARGUMENT naming it (`DELIVER_POLL`: results
 * go to the sink).
 * `sink` may be NULL. The stream keeps what it needs of `reg` (header:
 * "Children"): `capstan_registry_free` before the stream is defined, and
 * calls fed after it end `CAPSTAN_OUTCOME_CANCELLED`. `*out` (free with
 * `capstan_stream_free`) is written only on OK.
 *
 * One thread at a time may feed or finish a stream; `capstan_stream_cancel`
 * may be called from any thread at any time.
 */
capstan_status capstan_stream_new(struct capstan_registry *reg,
                                  capstan_format fmt,
                                  const struct capstan_exec_options *opts,
                                  const struct capstan_stream_sink *sink,
                                  struct capstan_stream **out);

/**
 * Reads the next `len` bytes of the response body, split anywhere (inside
 * a line, a UTF-8 character, a JSON string). Text deltas go to the sink
 * before it returns; with `CAPSTAN_EXEC_EARLY_DISPATCH` each call whose
 * arguments are complete starts now. `bytes` may be NULL when `len` is 0.
 *
 * Errors, sticky (every later feed and the finish return the same status):
 * PROVIDER_ERROR for an error event of the provider (`capstan_error_message`
 * as for `capstan_format_parse_calls`), INVALID_RESPONSE for a line that is not
 * UTF-8, an event that is not the format's JSON, or (OpenAI Chat, where a
 * call counts as complete once its arguments form a whole JSON object)
 * more than whitespace added to arguments a call already started with,
 * STREAM_TOO_LARGE past
 * `CAPSTAN_STREAM_MAX_BUFFERED`. Calls already started keep running.
 * WRONG_CONTEXT after `capstan_stream_finish` or `capstan_stream_cancel`,
 * or while another feed/finish of the stream runs.
 */
capstan_status capstan_stream_feed(struct capstan_stream *stream,
                                   const void *bytes,
                                   size_t len);

/**
 * The body ended: starts the calls not started yet, waits (like
 * `capstan_registry_execute`) until every call has its result, and writes to `*out`
 * (free with `capstan_string_free`) a JSON object:
 * - `"calls"`: the response's calls in order, normalized as
 *   `capstan_format_parse_calls` gives them for the same response not streamed;
 * - `"results"`: one normalized result per call, in call order;
 * - `"messages"`: those results as the provider's next request takes them
 *   (what `capstan_registry_run_turn` returns);
 * - `"text"`: the response's text; `"stop_reason"`: the provider's stop or
 *   finish reason (or null); `"cancelled"`: whether the stream was cancelled;
 * - `"cut_calls"`: positions of calls the response cut (`finish_reason`
 *   `length`, `stop_reason` `max_tokens`, `response.incomplete`): a cut call
 *   is NEVER run; its result is `CAPSTAN_OUTCOME_INVALID_ARGUMENTS` with
 *   content saying why, and its arguments in `"calls"` are the text that
 *   arrived.
 *
 * Returns the feed's sticky error if one failed; STREAM_TRUNCATED when the
 * body ended before the response's closing event (nothing written; the
 * calls not started are not run). In every case no sink callback runs
 * after it returns, and `on_result(NULL)` was its last. Once only:
 * WRONG_CONTEXT the second time. After `capstan_stream_cancel`, calls not
 * started end `CAPSTAN_OUTCOME_CANCELLED` and the status is OK.
 */
capstan_status capstan_stream_finish(struct capstan_stream *stream,
                                     char **out,
                                     size_t *out_len);

/**
 * Cancels the stream: no call starts any more, running calls see
 * `capstan_call_cancelled`, later feeds return WRONG_CONTEXT. Still call
 * `capstan_stream_finish` to collect the results (calls never started end
 * `CAPSTAN_OUTCOME_CANCELLED`), or just `capstan_stream_free`. Any thread,
 * also inside a sink callback. NULL: no-op.
 */
void capstan_stream_cancel(struct capstan_stream *stream);

/**
 * Frees a stream at any point (not while a feed or finish of it runs);
 * NULL is a no-op. Calls still running finish internally; when this returns
 * no sink callback of the stream is running or will run. Consumes `stream`.
 */
void capstan_stream_free(struct capstan_stream *stream);

/* ========================================================================
 * 17. MCP server
 *
 * Serves a registry's tools over the Model Context Protocol: on stdio
 * (capstan_mcp_server_serve_stdio, blocking) or streamable HTTP
 * (capstan_mcp_server_start makes a capstan_mcp_server; stop it with
 * capstan_mcp_server_stop, free it with capstan_mcp_server_free).
 * ======================================================================== */

/**
 * Options of `capstan_mcp_server_serve_stdio` and `capstan_mcp_server_start`.
 * NULL means defaults; zero/NULL fields mean defaults. Strings are
 * NUL-terminated UTF-8, read during the call only.
 */
typedef struct capstan_mcp_server_options {
  /**
   * `sizeof(capstan_mcp_server_options)`.
   */
  uint32_t struct_size;
  /**
   * Reserved: must be 0.
   */
  uint32_t flags;
  /**
   * HTTP: `IP:PORT` to bind; NULL = `"127.0.0.1:0"` (loopback, a port the
   * OS picks: read it back with `capstan_mcp_server_url`). Binding a
   * non-loopback address exposes the tools to the network: set
   * `bearer_token` and `allowed_hosts` then.
   */
  const char *address;
  /**
   * HTTP: when set, every request must carry `Authorization: Bearer
   * <token>` or gets 401. NULL = no check.
   */
  const char *bearer_token;
  /**
   * HTTP: comma-separated browser origins accepted besides loopback ones
   * (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`), e.g.
   * `"https://app.example.com:443"`. A request with any other `Origin`
   * gets 403 (DNS-rebinding protection); one without `Origin` passes.
   */
  const char *allowed_origins;
  /**
   * HTTP: comma-separated `Host` values accepted besides `localhost`,
   * `127.0.0.1` and `::1` (others get 403).
   */
  const char *allowed_hosts;
  /**
   * JSON object, per tool name, of what MCP clients see beside the tool's
   * name, description and schema: `{"NAME": {"title": "...",
   * "annotations": {"readOnlyHint": true, ...}, "outputSchema": {...}}}`.
   * Each field given replaces the one the tool carries
   * (`capstan_tool_def.mcp_meta`, the better place: it is checked, and an
   * `outputSchema` there is enforced; one given here is only listed).
   * A tool with an `outputSchema` should return `CAPSTAN_CONTENT_JSON`
   * objects: a result whose text is a JSON object is also sent as
   * `structuredContent`. NULL = none. Bad JSON or shape: INVALID_ARGUMENT.
   */
  const char *tools_meta;
  /**
   * `serverInfo.name` sent to clients; NULL = `"capstan"`.
   */
  const char *name;
  /**
   * HTTP: larger POST bodies get 413; 0 = 4 MiB.
   */
  uint32_t max_body_bytes;
  /**
   * Bounds every call from its arrival, approval wait included (as
   * `capstan_exec_options.deadline_ms`); 0 = the tools' own timeouts.
   */
  uint32_t call_timeout_ms;
  /**
   * How long stopping waits for calls in flight after cancelling them;
   * 0 = 5000.
   */
  uint32_t stop_timeout_ms;
} capstan_mcp_server_options;

/** Initializes a capstan_mcp_server_options to the defaults. */
#define CAPSTAN_MCP_SERVER_OPTIONS_INIT {(uint32_t)sizeof(capstan_mcp_server_options), 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0}

/**
 * Fills `*opts` as `CAPSTAN_MCP_SERVER_OPTIONS_INIT` does (the defaults).
 * NULL_PARAMETER if `opts` is NULL. Any thread; also without feature `mcp`.
 */
capstan_status capstan_mcp_server_options_init(struct capstan_mcp_server_options *opts);

/**
 * Serves `reg`'s tools over MCP on this process's stdin and stdout (one
 * client: the process that started this one), blocking the calling thread.
 * Returns OK when stdin reaches end of file (the client went away) or when
 * the host stops it by closing the registry (`capstan_registry_close` from
 * another thread; calls in flight are cancelled and waited for up to
 * `opts->stop_timeout_ms`), or by freeing it from another thread once it
 * serves (header: "Children": it holds its own share of `reg`). Nothing
 * else may write to stdout meanwhile.
 * On POSIX, writing to a pipe or socket whose reader is gone raises
 * SIGPIPE, which ends a process that does not ignore it: capstan's MCP
 * threads (this server's, HTTP servers', mounts') block it for themselves,
 * so such a write fails with EPIPE there, and the host's own threads keep
 * its disposition.
 * tools/list is the registry as it is at each request, and registering or
 * unregistering a tool sends `notifications/tools/list_changed`. Calls run
 * as with `capstan_registry_execute` (validation, timeouts, approval, stats);
 * invalid arguments come back as `isError` results with capstan's text; an
 * unknown tool is a JSON-RPC error (-32602). INVALID_ARGUMENT for bad
 * options, TRANSPORT if stdio cannot be served, UNSUPPORTED without `mcp`.
 */
capstan_status capstan_mcp_server_serve_stdio(struct capstan_registry *reg,
                                              const struct capstan_mcp_server_options *opts);

/**
 * Starts an MCP server over streamable HTTP on `opts->address` (default
 * loopback, a port the OS picks) and returns at once; the server runs on
 * threads of its own until `capstan_mcp_server_stop`. `*out` (written only
 * on success) owns it: free it with `capstan_mcp_server_free`. The endpoint
 * is `capstan_mcp_server_url`. It serves as `capstan_mcp_server_serve_stdio`
 * does, plus HTTP security: `Host` and `Origin` checked (403), bearer token
 * if set (401), body size (413), malformed JSON-RPC answered with a JSON-RPC
 * error. The server keeps what it needs of `reg` (header: "Children"):
 * after `capstan_registry_free` it still answers, every call ending
 * cancelled, until it is stopped and freed. INVALID_ARGUMENT for bad
 * options or an address that is not `IP:PORT`; TRANSPORT when the address
 * cannot be bound (the message says why); UNSUPPORTED without `mcp`.
 */
capstan_status capstan_mcp_server_start(struct capstan_registry *reg,
                                        const struct capstan_mcp_server_options *opts,
                                        struct capstan_mcp_server **out);

/**
 * The server's endpoint, e.g. `"http://127.0.0.1:41234/mcp"` (the port the
 * OS chose for port 0), into `*out` (caller frees with `capstan_string_free`).
 * Still readable after `capstan_mcp_server_stop`.
 */
capstan_status capstan_mcp_server_url(const struct capstan_mcp_server *server,
                                      char **out,
                                      size_t *out_len);

/**
 * Stops the server: no new connection or call is accepted, calls in
 * flight are cancelled (their tools see `capstan_call_cancelled`) and
 * waited for up to `stop_timeout_ms`, then every connection is closed and
 * the server's threads, sockets and memory are released (the handle itself
 * stays until `capstan_mcp_server_free`). Blocks the caller up to about
 * that bound; any thread, also a tool callback. OK when no call was left
 * running; TIMEOUT when some still were (they finish in the background and
 * their results are dropped). A second stop returns OK at once.
 * NULL_PARAMETER for NULL.
 */
capstan_status capstan_mcp_server_stop(struct capstan_mcp_server *server);

/**
 * Stops the server if it still runs (as `capstan_mcp_server_stop`) and
 * frees it. NULL is a no-op. Consumes `server`.
 */
void capstan_mcp_server_free(struct capstan_mcp_server *server);

/* ========================================================================
 * 18. MCP mounts
 *
 * A capstan_mcp_mount connects to an MCP server (a command on stdio or an
 * HTTP URL) and registers its tools in a registry until
 * capstan_mcp_mount_free. A server over HTTP that asks for OAuth is
 * authorized through the host's callbacks (capstan_mcp_authorize_fn, and
 * optionally a token store), or without a user: a client secret or key, or
 * a JWT from the host (capstan_mcp_assertion_fn). What a server asks while running a tool
 * (elicitation, sampling, roots) the host answers through
 * capstan_mcp_input_fn.
 * ======================================================================== */

/**
 * The host's part of an OAuth authorization: show `authorization_url`
 * (NUL-terminated) to the user (open a browser, print it), wait for the
 * authorization server to send them to the redirect URI, and copy that
 * whole URL (with its `code` and `state`) into `redirect` (at most
 * `redirect_cap` = `CAPSTAN_MCP_REDIRECT_MAX` bytes, NUL not needed).
 * Returns the URL's length in bytes; 0 refuses the authorization (while
 * mounting: the mount fails with MCP_CONNECT, saying so). May block, up to the mount's connect timeout (capstan stops
 * waiting then). Runs on a blocking thread of capstan's MCP runtime; it
 * must not free the mount.
 */
typedef size_t (*capstan_mcp_authorize_fn)(void *user_data,
                                           const char *authorization_url,
                                           char *redirect,
                                           size_t redirect_cap);

/**
 * Copies the JSON text last given to `capstan_mcp_tokens_save_fn` into
 * `buf` (at most `cap` = `CAPSTAN_MCP_TOKENS_MAX` bytes) and returns its
 * length; 0: nothing stored. Runs on a blocking thread of capstan's MCP
 * runtime.
 */
typedef size_t (*capstan_mcp_tokens_load_fn)(void *user_data,
                                             char *buf,
                                             size_t cap);

/**
 * Keeps `json` (`len` bytes, not NUL-terminated, borrowed for the call)
 * for `capstan_mcp_tokens_load_fn`; `len == 0` (json NULL): forget what
 * was kept. Runs on a blocking thread of capstan's MCP runtime.
 */
typedef void (*capstan_mcp_tokens_save_fn)(void *user_data,
                                           const char *json,
                                           size_t len);

/**
 * The room `capstan_mcp_authorize_fn` gets for the redirect URL.
 */
#define CAPSTAN_MCP_REDIRECT_MAX 8192

/**
 * The room `capstan_mcp_tokens_load_fn` gets for the stored tokens.
 */
#define CAPSTAN_MCP_TOKENS_MAX 65536

/**
 * Copies a JWT for a grant without a user (see
 * `capstan_mcp_mount_options.oauth_assertion`) for `audience`
 * (NUL-terminated) into `out` (at most `cap` = `CAPSTAN_MCP_ASSERTION_MAX`
 * bytes, NUL not needed) and returns its length; 0: none (the
 * authorization fails, saying so). Runs on a blocking thread of capstan's
 * MCP runtime; it must not free the mount.
 */
typedef size_t (*capstan_mcp_assertion_fn)(void *user_data,
                                           const char *audience,
                                           char *out,
                                           size_t cap);

/**
 * The room `capstan_mcp_assertion_fn` gets for its JWT.
 */
#define CAPSTAN_MCP_ASSERTION_MAX 16384

/**
 * Answers a request a mounted server made: `method` ("elicitation/create",
 * "sampling/createMessage" or "roots/list") with `params` (JSON text,
 * `params_len` bytes, NUL-terminated as well), for a call of the mounted
 * tool `tool` (its local name; NULL for an older server's request made
 * mid-call, which names no call). Copies the method's result as JSON
 * text into `answer` (at most `answer_cap` = `CAPSTAN_MCP_INPUT_ANSWER_MAX`
 * bytes, NUL not needed) and returns its length: an `ElicitResult`
 * (`{"action": "accept", "content": {...}}`, `"decline"` or `"cancel"`;
 * the requested schema's defaults are filled in for fields an accepted
 * answer leaves out), a `CreateMessageResult` or a `ListRootsResult`.
 * 0, or an answer that is not the method's result, gives no answer: the
 * call fails as a tool error saying why (an older server's request gets
 * a JSON-RPC error). May block (a user answering): capstan stops waiting
 * when the call ends (timeout, cancelled) or, for an older server's
 * request, after an hour. Runs on a blocking thread of capstan's MCP
 * runtime; it must not free the mount.
 */
typedef size_t (*capstan_mcp_input_fn)(void *user_data,
                                       const char *tool,
                                       const char *method,
                                       const char *params,
                                       size_t params_len,
                                       char *answer,
                                       size_t answer_cap);

/**
 * The room `capstan_mcp_input_fn` gets for its answer.
 */
#define CAPSTAN_MCP_INPUT_ANSWER_MAX 1048576

/**
 * `capstan_mcp_mount_options.input_methods`: `elicitation/create`.
 */
#define CAPSTAN_MCP_INPUT_ELICITATION (1u << 0)

/**
 * `capstan_mcp_mount_options.input_methods`: `sampling/createMessage`.
 */
#define CAPSTAN_MCP_INPUT_SAMPLING (1u << 1)

/**
 * `capstan_mcp_mount_options.input_methods`: `roots/list`.
 */
#define CAPSTAN_MCP_INPUT_ROOTS (1u << 2)

/**
 * Options of `capstan_mcp_mount_new`. Start from `CAPSTAN_MCP_MOUNT_OPTIONS_INIT`
 * and set exactly one of `argv` (a command line) or `url`.
 */
typedef struct capstan_mcp_mount_options {
  /**
   * `sizeof(capstan_mcp_mount_options)`.
   */
  uint32_t struct_size;
  /**
   * Command line of a server speaking MCP over stdio: `argc` NUL-terminated
   * strings, `argv[0]` the program (looked up in PATH). capstan starts it
   * as a child process (stdin/stdout piped, stderr inherited) and
   * restarts it on reconnect. Copied during the call.
   */
  const char *const *argv;
  /**
   * Number of strings in `argv`.
   */
  size_t argc;
  /**
   * `env_count` "NAME=VALUE" strings added to (or overriding) the
   * inherited environment of the child process. May be NULL.
   */
  const char *const *env;
  /**
   * Number of strings in `env`.
   */
  size_t env_count;
  /**
   * Working directory of the child process; NULL: the caller's.
   */
  const char *cwd;
  /**
   * URL of a streamable-HTTP MCP endpoint (e.g. "http://127.0.0.1:3001/mcp").
   * https:// needs a library built with the cargo feature `mcp-https`
   * (certificates checked by the operating system's verifier); without
   * it the mount fails with UNSUPPORTED.
   */
  const char *url;
  /**
   * `header_count` "Name: value" strings sent with every HTTP request
   * (e.g. "Authorization: Bearer ..."). May be NULL.
   */
  const char *const *headers;
  /**
   * Number of strings in `headers`.
   */
  size_t header_count;
  /**
   * Put before every remote tool name to form the local one (e.g. "fs_"
   * mounts `read` as `fs_read`). NULL or "": none.
   */
  const char *prefix;
  /**
   * Limit on connecting plus the first `tools/list`, in ms; 0 = 10000.
   */
  uint32_t connect_timeout_ms;
  /**
   * Local timeout of every mounted tool, in ms (the tool's `timeout_ms`);
   * 0 = none of its own (the exec options' default applies).
   */
  uint32_t call_timeout_ms;
  /**
   * Reconnect attempts in a row after the connection died; 0 = the
   * default, 5 (0.2 s, then doubling: about 6 s in all);
   * `CAPSTAN_MCP_RECONNECT_NEVER` = never. Why 5: a server restarting
   * (a crash its supervisor restarts, a redeploy) is back within those
   * seconds, and one gone for good is given up on soon after; calls
   * meanwhile fail at once saying the server is not connected, so a
   * host loses nothing by reconnecting by default.
   */
  uint32_t max_reconnects;
  /**
   * Wait before the first reconnect attempt, doubled after each failed
   * one (up to 64 times); 0 = 200 ms.
   */
  uint32_t reconnect_backoff_ms;
  /**
   * The MCP protocol version to ask for ("2026-07-28", "2025-11-25",
   * "2025-06-18", "2025-03-26" or "2024-11-05"). NULL: `server/discover`
   * at 2026-07-28 (stateless), and `initialize` at 2025-11-25 (a
   * session) if the server refuses it or does not answer within 10 s:
   * servers of either era mount. "2026-07-28" never falls back (a
   * server without `server/discover` fails the mount); an older version
   * uses `initialize`, and the server may answer with an older one still.
   * `capstan_mcp_mount_info_json` says what was negotiated.
   */
  const char *protocol_version;
  /**
   * OAuth 2.1 for a `url` whose server asks for authorization (the MCP
   * authorization spec). When a request is refused (401, or 403
   * `insufficient_scope`: a step-up), capstan discovers the server's
   * authorization server (protected resource metadata, then its
   * metadata, with the 2025-03-26 fallbacks), registers a client if none
   * is given (`oauth_client_id`; else a client-id metadata document if
   * the server accepts them, else dynamic registration), picks the
   * scopes (`oauth_scopes`, else the challenge's, else the server's
   * `scopes_supported`), builds the authorization URL (PKCE S256,
   * `state`, `resource`) and calls this with it; then it exchanges the
   * code for tokens, refreshes them when they expire or are refused, and
   * sends the request again. Each authorization is bounded by
   * `connect_timeout_ms`; a request starts at most two (the first and
   * one step-up). NULL: no user to ask; with `oauth_client_id` and
   * `oauth_client_secret` (a client registered beforehand, machine to
   * machine) capstan gets the tokens with the client-credentials grant
   * (SEP-1046: HTTP Basic when the server lists only that, else in the
   * body; `resource` = `url`); without them a 401 fails the mount with
   * MCP_CONNECT unless `oauth_tokens_load` gives usable tokens.
   */
  capstan_mcp_authorize_fn oauth_authorize;
  /**
   * Where the authorization server sends the user back, registered with
   * the client (e.g. "http://127.0.0.1:8976/callback"). Required with
   * `oauth_authorize`. Copied during the call, as all strings here.
   */
  const char *oauth_redirect_uri;
  /**
   * A client registered with the authorization server beforehand
   * (NULL: none, see `oauth_authorize`).
   */
  const char *oauth_client_id;
  /**
   * The secret of `oauth_client_id` for a confidential client (sent as
   * the server's metadata says: HTTP Basic or in the body). NULL: none.
   */
  const char *oauth_client_secret;
  /**
   * HTTPS URL of the host's client-id metadata document (SEP-991), used
   * as the client id by servers that accept them. NULL: none.
   */
  const char *oauth_client_metadata_url;
  /**
   * Space-separated scopes to ask for. NULL or "": the server's choice
   * (its challenge's `scope`, else `scopes_supported`).
   */
  const char *oauth_scopes;
  /**
   * Loads the tokens `oauth_tokens_save` kept, for a new mount (NULL:
   * none; a new mount authorizes again). Either way the mount keeps the
   * tokens it gets in memory for its life.
   */
  capstan_mcp_tokens_load_fn oauth_tokens_load;
  /**
   * Keeps the tokens (JSON text with the access and refresh tokens and
   * the client id: a secret, keep it as one). NULL: in memory only, for
   * the mount's life.
   */
  capstan_mcp_tokens_save_fn oauth_tokens_save;
  /**
   * Passed to the three `oauth_` callbacks and to `oauth_destroy`.
   */
  void *oauth_user_data;
  /**
   * Called exactly once with `oauth_user_data` (may be NULL), after the
   * last call of the `oauth_` callbacks returned, once the mount lets go
   * of them: during or soon after `capstan_mcp_mount_free` or a failed
   * `capstan_mcp_mount_new` (also for bad options), on that thread or on
   * one of capstan's MCP threads; if an `oauth_authorize` call outlived
   * its timeout, when that call returns.
   */
  capstan_destroy_fn oauth_destroy;
  /**
   * The host's answers to what the server asks while running a tool
   * (NULL: the mount answers nothing, and declares nothing). Called for
   * each request of the methods in `input_methods`, declared to the
   * server as the client's capabilities: a 2026-07-28 server asks with
   * an `InputRequiredResult` (the mount answers every request, then
   * calls the tool again with the answers and the server's state, up to
   * 10 rounds a call); an older server sends its requests mid-call. A
   * call from an MCP client of capstan's own server (a gateway) passes
   * the requests on to that client instead.
   */
  capstan_mcp_input_fn input_answer;
  /**
   * The methods `input_answer` answers: `CAPSTAN_MCP_INPUT_ELICITATION`,
   * `CAPSTAN_MCP_INPUT_SAMPLING`, `CAPSTAN_MCP_INPUT_ROOTS`, or'ed; at
   * least one with `input_answer`.
   */
  uint32_t input_methods;
  /**
   * Passed to `input_answer` and to `input_destroy`.
   */
  void *input_user_data;
  /**
   * Called exactly once with `input_user_data` (may be NULL), once the
   * mount lets go of `input_answer` and its last call returned, as
   * `oauth_destroy` is.
   */
  capstan_destroy_fn input_destroy;
  /**
   * PEM text of `oauth_client_id`'s private key (PKCS#8, an EC P-256
   * key: ES256, the one algorithm capstan signs with). The client then
   * authenticates at the token endpoint with a signed assertion
   * (private_key_jwt, RFC 7523) instead of a secret: for the
   * client-credentials grant when there is no `oauth_authorize`
   * (SEP-1046), and for the grants of `oauth_assertion`. Copied during
   * the call; NULL: none. A key that is not such PEM text fails the
   * mount with INVALID_ARGUMENT.
   */
  const char *oauth_client_key;
  /**
   * A grant without a user, from a JWT the host gets elsewhere (NULL:
   * none). Without `oauth_idp_token_endpoint` it is the workload's
   * identity token from its platform (workload identity federation,
   * SEP-1933): capstan sends it in the JWT-bearer grant (RFC 7523) to the
   * server's authorization server, whose issuer is the `audience` asked
   * for. With it, the user's ID token from the enterprise identity
   * provider (enterprise-managed authorization, SEP-990; `audience` is
   * `oauth_idp_issuer`): capstan exchanges it there for an ID-JAG (RFC
   * 8693), then sends that in the JWT-bearer grant, authenticated as
   * `oauth_client_id` (with its secret or key). Called with
   * `oauth_user_data` for each authorization: a refused grant fails the
   * request with the server's error, without retrying or trying another
   * grant. Used when there is no `oauth_authorize`.
   */
  capstan_mcp_assertion_fn oauth_assertion;
  /**
   * The enterprise identity provider's issuer identifier (SEP-990; the
   * ID-JAG's `iss`). Set all three `oauth_idp_` strings or none.
   */
  const char *oauth_idp_issuer;
  /**
   * Its token endpoint, where the ID token is exchanged.
   */
  const char *oauth_idp_token_endpoint;
  /**
   * The host's client id at the identity provider.
   */
  const char *oauth_idp_client_id;
  /**
   * That client's secret (HTTP Basic); NULL: a public client.
   */
  const char *oauth_idp_client_secret;
  /**
   * The issuer identifier of the authorization server that
   * `oauth_client_secret` or `oauth_client_key` belong to: they are sent
   * only to that authorization server (its metadata's `issuer` must be
   * this), never to another one the MCP server names. NULL: only to an
   * authorization server of the MCP server's own origin (its issuer and
   * token endpoint); for any other, the mount fails with MCP_CONNECT
   * naming the authorization server and this field, and nothing is sent.
   * "*": to whichever authorization server the MCP server names (only for
   * a server trusted as far as the credentials). Copied during the call;
   * set without either of them: INVALID_ARGUMENT.
   */
  const char *oauth_client_issuer;
} capstan_mcp_mount_options;

/** Initializes a capstan_mcp_mount_options (set argv or url after). */
#define CAPSTAN_MCP_MOUNT_OPTIONS_INIT {(uint32_t)sizeof(capstan_mcp_mount_options), NULL, 0, NULL, 0, NULL, NULL, NULL, 0, NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}

/**
 * Fills `*opts` as `CAPSTAN_MCP_MOUNT_OPTIONS_INIT` does (no server set
 * yet: set `argv` or `url`). NULL_PARAMETER if `opts` is NULL. Any thread;
 * also without feature `mcp`.
 */
capstan_status capstan_mcp_mount_options_init(struct capstan_mcp_mount_options *opts);

/**
 * `capstan_mcp_mount_options.max_reconnects` meaning "never reconnect":
 * the mount drops for good when its connection dies.
 */
#define CAPSTAN_MCP_RECONNECT_NEVER UINT32_MAX

/**
 * Mounts an MCP server's tools into `reg`: starts the command line (stdio)
 * or connects to the URL (streamable HTTP), initializes, lists the tools
 * and registers each as `prefix + remote name`, with the remote
 * `inputSchema` as its parameters (so arguments are validated locally like
 * any tool's). Blocks until that is done, at most about twice
 * `connect_timeout_ms`. On success `*out` is the mount: free it with
 * `capstan_mcp_mount_free`, before or after `capstan_registry_free` of `reg`
 * (the mount keeps its own reference to the registry's core; once the
 * registry is closed its tools are gone and calls cannot reach them).
 *
 * A remote tool whose local name no provider accepts, that is already
 * registered in `reg` (by the host or another mount), or whose schema does
 * not compile is not mounted (never replaced, never silently dropped): the
 * mount's `problems` (`capstan_mcp_mount_info_json`) list each with why.
 *
 * Calls are forwarded from capstan's MCP thread; the tool callback thread
 * is not held. When the executor ends a call first (timeout, batch
 * cancelled, registry closed), `notifications/cancelled` is sent for it.
 * The mount declares the MCP Tasks extension: a call the server answers
 * with a task is driven to its end (`tasks/get`, `tasks/cancel` when the
 * executor ends the call first) and completes as an ordinary call.
 * The server's `notifications/tools/list_changed` re-lists its tools:
 * new ones are registered, gone ones unregistered. When the connection dies
 * (the command exits, or a call finds the HTTP server unreachable), calls
 * in flight and new calls end as `tool_error` results whose text says
 * that the server is not connected and whether a reconnect will be tried;
 * the mount then reconnects (restarting the command) up to
 * `max_reconnects` times in a row, waiting `reconnect_backoff_ms`, doubled
 * after each failed attempt.
 *
 * Fails with NULL_PARAMETER, INVALID_UTF8, INVALID_ARGUMENT (struct_size,
 * neither or both of argv and url, a malformed env or header entry, an
 * unknown protocol version, `oauth_authorize` without `oauth_redirect_uri`,
 * a client secret without a client id, OAuth fields with a command line),
 * MCP_CONNECT (the server could not be started, reached, initialized or
 * listed in time, or its OAuth authorization failed or was refused: the
 * message says which step and why, naming the endpoint; nothing is
 * registered then), SHUTTING_DOWN (the registry is closed), UNSUPPORTED (built
 * without feature `mcp`, or an https:// url in a build without feature
 * `mcp-https`).
 */
capstan_status capstan_mcp_mount_new(struct capstan_registry *reg,
                                     const struct capstan_mcp_mount_options *opts,
                                     struct capstan_mcp_mount **out);

/**
 * Unmounts: disconnects (calls of the mount still in flight end as
 * `tool_error` results saying it was unmounted), stops the child process
 * (stdin closed, then killed if it has not exited within 0.5 s) and waits
 * for it, unregisters the mount's tools and frees the mount. Safe with
 * calls in flight and from any thread; it blocks about 2.5 s at most
 * whatever the server does (10 s on a starved runtime), and no tool of the
 * mount is registered again once it returned. NULL is a no-op (OK); a
 * mount already unmounted is STALE_HANDLE, never
 * undefined behaviour. UNSUPPORTED without feature `mcp` (for non-NULL).
 */
capstan_status capstan_mcp_mount_free(struct capstan_mcp_mount *mount);

/**
 * The mount's state as JSON text: `{"connected": bool, "tools": {local
 * name: remote name, ...}, "problems": [{"remote", "local", "problem"}],
 * "reconnects": n (successful reconnects so far), "gave_up": bool (the
 * reconnect attempts ran out), "last_error": text ("" if none),
 * "protocol_version": the version the last connection negotiated,
 * "era": "modern" (2026-07-28 and later: `server/discover`, no session)
 * or "legacy" (`initialize`, a session), "server": {"name", "version"} as
 * the server named itself (untrusted) or null}`. `*out` is
 * owned by the caller (`capstan_string_free`). STALE_HANDLE after unmount.
 */
capstan_status capstan_mcp_mount_info_json(const struct capstan_mcp_mount *mount,
                                           char **out,
                                           size_t *out_len);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus
#endif  /* CAPSTAN_H */
