//! Types and constants of the C ABI.

use std::ffi::{c_char, c_void};

use crate::call::Outcome;

/// Status of a fallible call: `CAPSTAN_OK` (0) or one of `CAPSTAN_ERR_*`.
/// An `int32_t` rather than a C enum, so that any value a host passes back
/// (e.g. to `capstan_status_name`) is defined behaviour.
pub type capstan_status = i32;

/// Success.
pub const CAPSTAN_OK: capstan_status = 0;
/// A required pointer argument was NULL.
pub const CAPSTAN_ERR_NULL_PARAMETER: capstan_status = 1;
/// An argument was out of range or malformed (e.g. `struct_size` too small, unknown flags).
pub const CAPSTAN_ERR_INVALID_ARGUMENT: capstan_status = 2;
/// Text that must be UTF-8 was not.
pub const CAPSTAN_ERR_INVALID_UTF8: capstan_status = 3;
/// A tool name outside `^[A-Za-z0-9_-]{1,64}$`.
pub const CAPSTAN_ERR_INVALID_NAME: capstan_status = 4;
/// A parameters schema that is not a valid JSON Schema with an object root.
pub const CAPSTAN_ERR_INVALID_SCHEMA: capstan_status = 5;
/// Calls JSON that is not JSON or not the normalized call shape.
pub const CAPSTAN_ERR_INVALID_CALLS: capstan_status = 6;
/// Results JSON that is not JSON or not the normalized result shape.
pub const CAPSTAN_ERR_INVALID_RESULTS: capstan_status = 7;
/// A provider response body that is not JSON or lacks what its format requires.
pub const CAPSTAN_ERR_INVALID_RESPONSE: capstan_status = 8;
/// Tool content declared `CAPSTAN_CONTENT_JSON` that is not JSON.
pub const CAPSTAN_ERR_INVALID_CONTENT: capstan_status = 9;
/// No tool of that name.
pub const CAPSTAN_ERR_NOT_FOUND: capstan_status = 10;
/// The call was already completed, timed out or cancelled.
pub const CAPSTAN_ERR_ALREADY_COMPLETED: capstan_status = 11;
/// The handle names no live object (completed call, garbage).
pub const CAPSTAN_ERR_STALE_HANDLE: capstan_status = 12;
/// A wait ran out of time.
pub const CAPSTAN_ERR_TIMEOUT: capstan_status = 13;
/// The registry is shutting down.
pub const CAPSTAN_ERR_SHUTTING_DOWN: capstan_status = 14;
/// Not allowed from here (e.g. configuring the pool after it started).
pub const CAPSTAN_ERR_WRONG_CONTEXT: capstan_status = 15;
/// A panic inside capstan was caught at the boundary (a bug: please report it).
pub const CAPSTAN_ERR_PANIC: capstan_status = 16;
/// Internal failure (poisoned lock, pool could not start).
pub const CAPSTAN_ERR_INTERNAL: capstan_status = 17;
/// The provider's response body reports an error instead of an answer: an
/// API error body, a failed response, an error event or a JSON-RPC error (see
/// `capstan_format_parse_calls` for each format's shapes). `capstan_error_message`
/// holds `provider error (KIND): MESSAGE`, with the provider's own type, code
/// or status as KIND and its message as MESSAGE.
pub const CAPSTAN_ERR_PROVIDER_ERROR: capstan_status = 18;

/// The response ended before its closing event (`data: [DONE]` or a
/// `finish_reason`, `message_stop`, `response.completed`/`.incomplete`, a
/// Gemini `finishReason`): the connection closed early. Returned by
/// `capstan_stream_finish`; calls not started were not run (calls started
/// early finished and delivered their results before it returned).
pub const CAPSTAN_ERR_STREAM_TRUNCATED: capstan_status = 20;
/// A stream held more than `CAPSTAN_STREAM_MAX_BUFFERED` bytes at once.
pub const CAPSTAN_ERR_STREAM_TOO_LARGE: capstan_status = 21;
/// The library was built without the feature this function needs (e.g. `mcp`).
pub const CAPSTAN_ERR_UNSUPPORTED: capstan_status = 22;

/// An MCP server's transport failed: its address could not be bound (in use,
/// not an address, not permitted), or stdio could not be served.
pub const CAPSTAN_ERR_TRANSPORT: capstan_status = 23;
/// `capstan_mcp_mount_new` could not start, reach or initialize the MCP server,
/// or list its tools, within the connect timeout; `capstan_error_message` says
/// which step failed and why.
pub const CAPSTAN_ERR_MCP_CONNECT: capstan_status = 24;

// The version constants are literals because cbindgen copies them as
// written; the compile-time check below fails the build when they differ
// from Cargo.toml's version, so bump them together (then `make header`).

/// Major version of this header (the library's is `capstan_version_string()`).
/// `CAPSTAN_VERSION_STRING` (`"MAJOR.MINOR.PATCH"`, equal to what
/// `capstan_version_string()` returns when header and library match) is a literal in
/// cbindgen.toml; tests/header.rs checks it against Cargo.toml.
pub const CAPSTAN_VERSION_MAJOR: u32 = 0;
/// Minor version of this header.
pub const CAPSTAN_VERSION_MINOR: u32 = 4;
/// Patch version of this header.
pub const CAPSTAN_VERSION_PATCH: u32 = 0;

/// This header's version as one number, `MAJOR * 1000000 + MINOR * 1000 +
/// PATCH` (0.4.0 is 4000), for `#if CAPSTAN_VERSION_NUMBER >= ...` and for
/// comparing with `capstan_version_number()`.
pub const CAPSTAN_VERSION_NUMBER: u32 = 4000;

/// Feature bit (`capstan_features_mask`): `capstan_mcp_server_*` serve
/// (else they return CAPSTAN_ERR_UNSUPPORTED). Cargo feature `mcp`.
pub const CAPSTAN_FEATURE_MCP_SERVER: u32 = 1u32 << 0;
/// Feature bit: `capstan_mcp_mount_new` mounts MCP servers (else
/// CAPSTAN_ERR_UNSUPPORTED). Cargo feature `mcp`.
pub const CAPSTAN_FEATURE_MCP_MOUNT: u32 = 1u32 << 1;
/// Feature bit: MCP over streamable HTTP (`capstan_mcp_server_start`,
/// mounts by `url`; plain `http://`, no TLS). Cargo feature `mcp`.
pub const CAPSTAN_FEATURE_MCP_HTTP: u32 = 1u32 << 2;
/// Feature bit: streamed responses (`capstan_stream_*`). Every 0.4 build.
pub const CAPSTAN_FEATURE_STREAM: u32 = 1u32 << 3;

/// The version parts of Cargo.toml as numbers, at compile time.
const fn parse_version_part(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut n = 0u32;
    let mut i = 0;
    while i < b.len() {
        n = n * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    n
}

const _: () = assert!(
    CAPSTAN_VERSION_MAJOR == parse_version_part(env!("CARGO_PKG_VERSION_MAJOR"))
        && CAPSTAN_VERSION_MINOR == parse_version_part(env!("CARGO_PKG_VERSION_MINOR"))
        && CAPSTAN_VERSION_PATCH == parse_version_part(env!("CARGO_PKG_VERSION_PATCH")),
    "CAPSTAN_VERSION_* in src/ffi/types.rs differ from Cargo.toml's version: update them and run `make header`"
);

const _: () = assert!(
    CAPSTAN_VERSION_NUMBER
        == CAPSTAN_VERSION_MAJOR * 1_000_000
            + CAPSTAN_VERSION_MINOR * 1_000
            + CAPSTAN_VERSION_PATCH,
    "CAPSTAN_VERSION_NUMBER in src/ffi/types.rs differs from CAPSTAN_VERSION_MAJOR/MINOR/PATCH"
);

/// Pass as a text length to mean "NUL-terminated".
pub const CAPSTAN_NTS: usize = usize::MAX;

/// Kind of content a tool returns (`capstan_call_return`).
pub type capstan_content = u32;
/// Passed through to the model as is.
pub const CAPSTAN_CONTENT_TEXT: capstan_content = 0;
/// Checked and rendered compact, non-ASCII kept; a JSON string renders as its text.
pub const CAPSTAN_CONTENT_JSON: capstan_content = 1;
/// Content parts: JSON text of an array of MCP content blocks
/// (`{"type":"text","text"}`, `{"type":"image","data":<base64>,"mimeType"}`,
/// `{"type":"audio","data","mimeType"}`, `{"type":"resource_link","uri","name",...}`,
/// `{"type":"resource","resource":{"uri","mimeType"?,"text"|"blob"}}`), or of
/// an object `{"content":[...],"structuredContent":{...}}`. Checked when the
/// call completes: invalid base64, an empty or unknown MIME type (an image
/// part must be `image/...`, audio `audio/...`), an unknown part type or a
/// missing field, or decoded data past the registry's `max_result_bytes`
/// complete the call as a tool error naming the part and why, and return
/// INVALID_CONTENT. `max_output_chars` caps each text part; other parts are
/// bounded by `max_result_bytes` only. The result's `content` text is then
/// the parts' text: each text part as is, every other part a bracketed line
/// (`[image: image/png, 1234 bytes]`, `[audio: audio/wav, N bytes]`,
/// `[resource_link: name uri (mime)]`, `[resource: uri (mime)]` followed by
/// its text, `[resource: uri (mime), N bytes]`), joined by newlines; with no
/// parts, the structuredContent as compact JSON. Normalized results JSON carries
/// the blocks in `"parts"` and the object in `"structured_content"`; each
/// format renders them as its provider takes them (see
/// `capstan_format_write_results`).
pub const CAPSTAN_CONTENT_PARTS: capstan_content = 2;

/// Wire formats: how tools are exported, calls parsed and results formatted.
pub type capstan_format = u32;
/// capstan's own: normalized calls and results; tool descriptions for `capstan_registry_tools_json`.
pub const CAPSTAN_FORMAT_DESCRIBE: capstan_format = 0;
/// OpenAI Chat Completions.
pub const CAPSTAN_FORMAT_OPENAI_CHAT: capstan_format = 1;
/// OpenAI Responses.
pub const CAPSTAN_FORMAT_OPENAI_RESPONSES: capstan_format = 2;
/// Anthropic Messages.
pub const CAPSTAN_FORMAT_ANTHROPIC: capstan_format = 3;
/// Google Gemini.
pub const CAPSTAN_FORMAT_GEMINI: capstan_format = 4;
/// Model Context Protocol.
pub const CAPSTAN_FORMAT_MCP: capstan_format = 5;

/// Tool flag: never runs without approval.
pub const CAPSTAN_TOOL_REQUIRES_APPROVAL: u32 = 1u32 << 0;
/// Tool flag: not parallel-safe; never runs concurrently with itself.
pub const CAPSTAN_TOOL_SERIAL: u32 = 1u32 << 1;
/// Tool flag: runs only inside `capstan_registry_pump`, on the host's thread.
pub const CAPSTAN_TOOL_MAIN_THREAD: u32 = 1u32 << 2;
/// Safe to run twice with the same arguments: with a journal
/// (`capstan_registry_set_journal`), a call of this tool that started in an
/// earlier process and never completed (a crash) runs again; without the
/// flag such a call fails with content beginning "Outcome unknown:".
pub const CAPSTAN_TOOL_IDEMPOTENT: u32 = 1u32 << 7;
/// Registration flag: `capstan_registry_add_tool` replaces a tool of the
/// same name (its destroy runs once its calls in flight are done) instead of
/// failing with INVALID_ARGUMENT. Not kept on the tool: the registered
/// tool's flags (`capstan_registry_describe_json`) do not show it.
pub const CAPSTAN_TOOL_REPLACE: u32 = 1u32 << 8;

/// Registry flag: coerce strings to number/integer/boolean where the schema asks for those.
pub const CAPSTAN_REGISTRY_COERCE: u32 = 1u32 << 0;
/// Registry flag: `capstan_registry_add_tool` refuses (INVALID_SCHEMA, the message names
/// the default's JSON Pointer) a parameters schema with a `default` that fails
/// its own subschema. Without it such a schema registers, the default is never
/// filled in, and the tool's `"warnings"` in `CAPSTAN_FORMAT_DESCRIBE` output
/// (`capstan_registry_tools_json`) say so.
pub const CAPSTAN_REGISTRY_STRICT_DEFAULTS: u32 = 1u32 << 1;
/// Registry flag: `capstan_registry_add_tool` refuses (INVALID_SCHEMA) a
/// parameters schema with a key one or two edits from a JSON Schema keyword
/// (`"requried"`, `"propertes"`, `"tpye"`): the message names the key, where
/// (a JSON Pointer) and the keyword meant. Without it such a schema registers
/// (JSON Schema ignores unknown keywords, so the key checks nothing and the
/// model reads it as written) and the tool's `"warnings"` in
/// `CAPSTAN_FORMAT_DESCRIBE` output say "did you mean". Vendor keys far from
/// every keyword, `x-` keys and OpenAPI's (`nullable`, `example`) are never
/// reported.
pub const CAPSTAN_REGISTRY_STRICT_KEYWORDS: u32 = 1u32 << 2;

/// Exec flag: run the calls one by one, in order (default: in parallel).
pub const CAPSTAN_EXEC_SEQUENTIAL: u32 = 1u32 << 0;
/// Exec flag (`capstan_batch_submit`): queue results for `capstan_batch_poll` on the
/// host's thread instead of calling back on pool threads.
pub const CAPSTAN_EXEC_DELIVER_POLL: u32 = 1u32 << 1;
/// Exec flag (`capstan_batch_submit`): start every call on the calling thread before
/// `capstan_batch_submit` returns, without waiting for calls that a tool completes
/// later. For hosts whose tools hand work to their own event loop (async
/// functions): no pool thread is involved. A tool that blocks blocks the
/// caller; the limit does not apply; timeouts still do. Calls of
/// `CAPSTAN_TOOL_SERIAL` tools still go to the pool (they may have to wait
/// for their own earlier calls), as do main-thread and approval-gated calls.
pub const CAPSTAN_EXEC_START_INLINE: u32 = 1u32 << 3;
/// Exec flag (`capstan_batch_submit`): the host will wait for the batch with
/// `capstan_batch_wait(batch, UINT32_MAX)`, and its calls start on that
/// waiting thread (no hand-off to a pool thread, no wake-up: the cheapest
/// way to run quick calls). Calls no waiting thread took start on pool
/// threads about 50 us after the submit (also when the host never waits).
/// Without it, calls start on pool threads at once. Not with
/// `CAPSTAN_EXEC_START_INLINE` (INVALID_ARGUMENT).
pub const CAPSTAN_EXEC_START_ON_WAIT: u32 = 1u32 << 6;
/// Exec flag: the model was given OpenAI strict-mode schemas, where an optional
/// argument is sent as `null`: such nulls are dropped before validation.
pub const CAPSTAN_EXEC_STRICT_NULLS: u32 = 1u32 << 2;

/// How a call ended (`capstan_result.outcome`).
pub type capstan_outcome = u32;
/// The tool returned content.
pub const CAPSTAN_OUTCOME_OK: capstan_outcome = 0;
/// The tool failed (`capstan_call_fail`, malformed output, panic).
pub const CAPSTAN_OUTCOME_TOOL_ERROR: capstan_outcome = 1;
/// The arguments did not match the schema (or were not JSON).
pub const CAPSTAN_OUTCOME_INVALID_ARGUMENTS: capstan_outcome = 2;
/// No tool of that name.
pub const CAPSTAN_OUTCOME_UNKNOWN_TOOL: capstan_outcome = 3;
/// The tool did not complete in time.
pub const CAPSTAN_OUTCOME_TIMEOUT: capstan_outcome = 4;
/// The batch was cancelled or the registry freed.
pub const CAPSTAN_OUTCOME_CANCELLED: capstan_outcome = 5;
/// Approval was required and not given.
pub const CAPSTAN_OUTCOME_DENIED: capstan_outcome = 6;

/// One call's result, as handed to a `capstan_result_fn`. Borrowed: valid
/// only during the callback. Strings are UTF-8 and NOT NUL-terminated: use
/// the lengths (e.g. `printf("%.*s", (int)r->content_len, r->content)`).
#[repr(C)]
pub struct capstan_result {
    /// Position of the call in its batch.
    pub index: usize,
    pub id: *const c_char,
    pub id_len: usize,
    pub name: *const c_char,
    pub name_len: usize,
    /// The text for the model. For a result with content parts
    /// (`CAPSTAN_CONTENT_PARTS`), their text; the parts themselves are in
    /// `parts_json` (and in the normalized results JSON and each format's
    /// messages).
    pub content: *const c_char,
    pub content_len: usize,
    /// `CAPSTAN_OUTCOME_*`.
    pub outcome: capstan_outcome,
    /// `outcome != CAPSTAN_OUTCOME_OK`.
    pub is_error: bool,
    pub duration_us: u64,
    /// The result's content parts, when it has them (a tool that completed
    /// with `CAPSTAN_CONTENT_PARTS`, a mounted tool returning media): the
    /// JSON array of MCP content blocks the normalized results hold under
    /// `"parts"`, after capstan's checks and caps. NULL and 0 for a text
    /// result. Appended after `duration_us`: capstan owns this struct and
    /// hands it by pointer, so a host built against an older header reads
    /// the fields it knows.
    pub parts_json: *const c_char,
    pub parts_json_len: usize,
    /// The result's structured content (`"structured_content"` of the
    /// normalized results, MCP `structuredContent`) as JSON, or NULL and 0.
    pub structured_json: *const c_char,
    pub structured_json_len: usize,
}

/// Hands `f` a borrowed view of `result` (call `index` of its batch): the
/// one way a `capstan_result` is made, for batches and streams alike. The
/// parts' JSON is written only for a result that has parts.
pub(crate) fn with_result_view<R>(
    index: usize,
    result: &crate::call::ToolResult,
    f: impl FnOnce(&capstan_result) -> R,
) -> R {
    let parts = result.parts.as_ref();
    let parts_json = parts.map(|p| p.blocks_json().to_string());
    let structured_json = parts.and_then(|p| p.structured()).map(|s| s.to_string());
    let (parts_ptr, parts_len) = borrowed(parts_json.as_deref());
    let (structured_ptr, structured_len) = borrowed(structured_json.as_deref());
    let view = capstan_result {
        index,
        id: result.id.as_ptr().cast(),
        id_len: result.id.len(),
        name: result.name.as_ptr().cast(),
        name_len: result.name.len(),
        content: result.content.as_ptr().cast(),
        content_len: result.content.len(),
        outcome: outcome_code(result.outcome),
        is_error: result.is_error(),
        duration_us: result.duration_us,
        parts_json: parts_ptr,
        parts_json_len: parts_len,
        structured_json: structured_ptr,
        structured_json_len: structured_len,
    };
    f(&view)
}

fn borrowed(text: Option<&str>) -> (*const c_char, usize) {
    match text {
        Some(t) => (t.as_ptr().cast(), t.len()),
        None => (std::ptr::null(), 0),
    }
}

/// Receives results of a batch. Called once per call with its result, then
/// once more with `result == NULL`: the batch is done and no further callback
/// of it will come. In callback delivery it runs on the thread that finished
/// the call (a pool thread, a thread running or waiting on the batch, a
/// thread completing a deferred call, one cancelling the batch or closing
/// the registry, a pool thread when the call timed out or the batch's
/// deadline passed, an MCP thread for a mounted tool), possibly on several
/// threads at once; in poll delivery, inside `capstan_batch_poll`. capstan's
/// timer thread runs it only for a timeout or deadline while every pool
/// thread is busy (`capstan_runtime_configure`), without thread hooks; pool
/// threads run the thread hooks (`capstan_runtime_set_thread_hooks`) before it.
pub type capstan_result_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, result: *const capstan_result)>;

/// Wakes an event-loop host: called on any thread when a result is queued for
/// polling or a main-thread call waits for `capstan_registry_pump`. Must be
/// quick and must not call into capstan: post to your loop, nothing more.
/// Its `user_data` is released by the destroy given to
/// `capstan_registry_set_notify`.
pub type capstan_notify_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A registry of tools. Thread-safe: every function taking one may be called
/// from any thread at once, except `capstan_registry_free`.
pub struct capstan_registry {
    _private: [u8; 0],
}

/// One tool call in progress, as its callback sees it. A generation-checked
/// handle, not a pointer to memory: using it after the call completed is an
/// error status, never undefined behaviour.
pub struct capstan_call {
    _private: [u8; 0],
}

/// A call waiting for approval, as the approver sees it. A generation-checked
/// handle: using it after the decision is an error status, never undefined
/// behaviour.
pub struct capstan_approval {
    _private: [u8; 0],
}

/// Decides calls of tools flagged `CAPSTAN_TOOL_REQUIRES_APPROVAL`: must call
/// `capstan_approval_decide` exactly once per approval, now or later, from any
/// thread. Runs on a pool thread (or the thread calling `capstan_registry_execute`).
pub type capstan_approver_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, approval: *mut capstan_approval)>;

/// What an event reports (`capstan_event.kind`).
pub type capstan_event_kind = u32;
/// A tool callback is about to run.
pub const CAPSTAN_EVENT_STARTED: capstan_event_kind = 0;
/// A call has its result (`outcome`, `duration_us` set).
pub const CAPSTAN_EVENT_FINISHED: capstan_event_kind = 1;
/// A call ran past its deadline (its FINISHED with TIMEOUT follows).
pub const CAPSTAN_EVENT_TIMED_OUT: capstan_event_kind = 2;
/// A call ended cancelled (its FINISHED with CANCELLED follows).
pub const CAPSTAN_EVENT_CANCELLED: capstan_event_kind = 3;
/// A running call reported progress (`capstan_call_progress`, or a mounted
/// MCP server's `notifications/progress` for it): `progress`, `total` and
/// `message` set; `duration_us` is the time since its callback started.
/// Hooks written before this kind existed must ignore kinds they do not know.
pub const CAPSTAN_EVENT_PROGRESS: capstan_event_kind = 4;
/// A running call sent a log message (`capstan_call_log`): `level` and
/// `message` set; `duration_us` is the time since its callback started.
pub const CAPSTAN_EVENT_LOG: capstan_event_kind = 5;
/// The call was answered from the registry's journal without running its
/// tool (`capstan_registry_set_journal`); a `FINISHED` event follows.
pub const CAPSTAN_EVENT_REPLAYED: capstan_event_kind = 6;

/// One event. Borrowed: valid during the hook only; strings NOT NUL-terminated.
#[repr(C)]
pub struct capstan_event {
    pub kind: capstan_event_kind,
    pub tool: *const c_char,
    pub tool_len: usize,
    pub id: *const c_char,
    pub id_len: usize,
    /// Position of the call in its batch.
    pub index: usize,
    /// For FINISHED: `CAPSTAN_OUTCOME_*`; otherwise 0.
    pub outcome: capstan_outcome,
    /// For FINISHED and TIMED_OUT: microseconds since the callback started.
    pub duration_us: u64,
    /// For PROGRESS: the value reported (grows with every report); else 0.
    /// Appended: a hook built against an older header does not read it.
    pub progress: f64,
    /// For PROGRESS: the total, 0 when unknown; else 0.
    pub total: f64,
    /// For PROGRESS: the message (NOT NUL-terminated), NULL when none; for
    /// LOG: the log message.
    pub message: *const c_char,
    pub message_len: usize,
    /// For LOG: its `CAPSTAN_LOG_*` level; else 0. Appended: a hook built
    /// against an older header does not read it.
    pub level: capstan_log_level,
}

/// The severity of a log message (`capstan_call_log`): MCP's levels, the
/// syslog severities of RFC 5424, least severe first.
pub type capstan_log_level = u32;
/// Debugging detail.
pub const CAPSTAN_LOG_DEBUG: capstan_log_level = 0;
/// Informational.
pub const CAPSTAN_LOG_INFO: capstan_log_level = 1;
/// Normal but significant.
pub const CAPSTAN_LOG_NOTICE: capstan_log_level = 2;
/// A warning.
pub const CAPSTAN_LOG_WARNING: capstan_log_level = 3;
/// An error.
pub const CAPSTAN_LOG_ERROR: capstan_log_level = 4;
/// A critical condition.
pub const CAPSTAN_LOG_CRITICAL: capstan_log_level = 5;
/// Action must be taken at once.
pub const CAPSTAN_LOG_ALERT: capstan_log_level = 6;
/// The system is unusable.
pub const CAPSTAN_LOG_EMERGENCY: capstan_log_level = 7;

/// Observes calls: runs on the thread where the event happens, possibly on
/// several at once. Must be quick and must not block.
pub type capstan_event_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, event: *const capstan_event)>;

/// A batch started with `capstan_batch_submit`.
pub struct capstan_batch {
    _private: [u8; 0],
}

/// A tool's callback. Runs on a pool thread, or on the thread calling
/// `capstan_registry_execute` for the batch (it runs its own calls first), or on a
/// thread calling `capstan_batch_wait` with no time limit on the call's
/// batch, or for main-thread tools a thread that called
/// `capstan_registry_pump`: inside the pump, or while that thread waits on
/// the call's batch. It must complete `call`
/// exactly once with `capstan_call_return` or `capstan_call_fail`, before or
/// after returning, from any thread. It may call any capstan function, including
/// `capstan_registry_execute` on the same registry.
pub type capstan_tool_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, call: *mut capstan_call)>;

/// Releases a `user_data`. For a tool: called exactly once per registration,
/// when the tool is replaced or removed and its last call is done, when the
/// registry is freed, or when registration fails. For a hook (event hook,
/// notifier, approver): exactly once, after the last invocation of that hook
/// has returned (see `capstan_registry_set_event_hook`).
pub type capstan_destroy_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A tool to register. Strings are NUL-terminated UTF-8, borrowed for the
/// duration of `capstan_registry_add_tool` only.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_tool_def {
    /// `sizeof(capstan_tool_def)`.
    pub struct_size: u32,
    /// `^[A-Za-z0-9_-]{1,64}$`.
    pub name: *const c_char,
    /// What the tool does, for the model. NULL means "".
    pub description: *const c_char,
    /// JSON Schema of the arguments; the root must be an object schema. NULL means `{"type":"object"}`.
    pub parameters: *const c_char,
    /// The callback.
    pub callback: capstan_tool_fn,
    /// Passed to `callback` and `destroy`.
    pub user_data: *mut c_void,
    /// Called exactly once with `user_data` (may be NULL).
    pub destroy: capstan_destroy_fn,
    /// Per-call timeout in milliseconds; 0 = none.
    pub timeout_ms: u32,
    /// Cap on the result text in characters; 0 = none.
    pub max_output_chars: u32,
    /// `CAPSTAN_TOOL_*` flags.
    pub flags: u32,
    /// MCP metadata of the tool, as JSON text of an object with any of the
    /// MCP `Tool` fields `"title"` (string), `"annotations"` (`{"title"?,
    /// "readOnlyHint"?, "destructiveHint"?, "idempotentHint"?,
    /// "openWorldHint"?}`, booleans besides the title), `"outputSchema"` (a
    /// JSON Schema with `"type": "object"`), `"icons"` (up to 16
    /// `{"src", "mimeType"?, "sizes"?: ["48x48"], "theme"?: "light"|"dark"}`)
    /// and `"execution"` (`{"taskSupport": "forbidden"|"optional"|"required"}`,
    /// absent = forbidden: whether capstan's MCP server may run the tool as
    /// an MCP task for a client that declares the Tasks extension
    /// `io.modelcontextprotocol/tasks`; "required" refuses a client that does
    /// not, with -32021). capstan's MCP server sends them in `tools/list`
    /// (all but `"execution"`, which rmcp 3.11's tool list cannot carry);
    /// `capstan_registry_tools_json` gives them in `CAPSTAN_FORMAT_MCP` and
    /// as `"mcp"` in `CAPSTAN_FORMAT_DESCRIBE`. With an `outputSchema`, a
    /// successful result with structured content (a `CAPSTAN_CONTENT_PARTS`
    /// `structuredContent`, or content that is a JSON object) that fails it
    /// completes the call as a tool error listing the failing JSON Pointers,
    /// and `capstan_call_return` returns INVALID_CONTENT. Annotations are
    /// hints for clients and approvers: capstan enforces none of them.
    /// NULL = none. Borrowed for the call only. Bad JSON or an unknown or
    /// mistyped field: INVALID_ARGUMENT naming it; an `outputSchema` that
    /// does not compile: INVALID_SCHEMA. Appended after `flags`: a host built
    /// against an older header passes a smaller `struct_size` and gets none.
    pub mcp_meta: *const c_char,
}

/// Registry options. NULL means defaults.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_registry_options {
    /// `sizeof(capstan_registry_options)`.
    pub struct_size: u32,
    /// `CAPSTAN_REGISTRY_*` flags.
    pub flags: u32,
    /// Bound on one result's content-part data (`CAPSTAN_CONTENT_PARTS`),
    /// counted in decoded bytes of its image, audio and resource blob parts
    /// together; 0 = 10 MiB (10485760). A result past it completes its call
    /// as a tool error; the other calls of the batch are not affected.
    /// Appended after `flags`: a host built against an older header passes a
    /// smaller `struct_size` and gets the default.
    pub max_result_bytes: u64,
}

/// Options of `capstan_registry_tools_json`. NULL means defaults.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_export_options {
    /// `sizeof(capstan_export_options)`.
    pub struct_size: u32,
    /// `CAPSTAN_EXPORT_*` flags.
    pub flags: u32,
    /// How deferred tools (`CAPSTAN_TOOL_DEFERRED`) are exported:
    /// `CAPSTAN_EXPORT_DEFERRED_HIDE` (0, the default) or
    /// `CAPSTAN_EXPORT_DEFERRED_NATIVE`. Appended after `flags`: a host
    /// built against an older header passes a smaller `struct_size` and
    /// gets the default.
    pub deferred: u32,
}

/// `capstan_export_options.deferred`: deferred tools are left out of the
/// provider formats until the search tool finds them (the default).
pub const CAPSTAN_EXPORT_DEFERRED_HIDE: u32 = 0u32;
/// `capstan_export_options.deferred`: the provider's own deferred loading,
/// in `CAPSTAN_FORMAT_OPENAI_RESPONSES` and `CAPSTAN_FORMAT_ANTHROPIC` (the
/// other formats export as with `CAPSTAN_EXPORT_DEFERRED_HIDE`). Every tool
/// is exported, deferred ones with `"defer_loading": true`.
/// OpenAI Responses: the search tool (`capstan_registry_add_search_tool`)
/// is replaced by one `{"type": "tool_search", "execution": "client",
/// "description", "parameters"}` tool (its description and parameters; the
/// defaults without one), added when a tool is deferred; the model's
/// `tool_search_call` items are answered by `capstan_registry_run_turn`
/// with capstan's search, as `tool_search_output` items listing the found
/// tools' full definitions (strict when this export was), each tool defined
/// once per turn. A turn's answers to searches write at most 8 times the
/// response's bytes (1 MiB at least): past that a search is answered with
/// an error (here: no tools, `"status": "incomplete"`), the other calls run.
/// Anthropic: the search tool is exported as a tool; after such an export
/// its results in `capstan_registry_run_turn` are `tool_reference` blocks
/// (`{"type": "tool_reference", "tool_name"}`), which the API loads.
/// The registry remembers the last export per format: exporting again
/// without it returns to JSON search results.
pub const CAPSTAN_EXPORT_DEFERRED_NATIVE: u32 = 1u32;

/// Export flag: OpenAI strict mode (every property required, optional ones
/// nullable, `additionalProperties: false`, no `default`); schemas that cannot
/// be made strict are exported as they are and listed in the report.
pub const CAPSTAN_EXPORT_STRICT: u32 = 1u32 << 0;
/// Export flag (Gemini): lower schemas to the OpenAPI-subset `parameters`
/// field (local `$ref`s inlined, unsupported keywords dropped and reported)
/// instead of `parametersJsonSchema`.
pub const CAPSTAN_EXPORT_GEMINI_LOWER: u32 = 1u32 << 1;

/// Execution options. NULL means defaults (parallel, limit 8, tools' own timeouts).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct capstan_exec_options {
    /// `sizeof(capstan_exec_options)`.
    pub struct_size: u32,
    /// `CAPSTAN_EXEC_*` flags.
    pub flags: u32,
    /// At most this many calls of the batch run at once; 0 = 8.
    pub limit: u32,
    /// Overrides every tool's timeout when > 0 (milliseconds). A timeout,
    /// this one or the tool's own, runs from the call's start (its callback
    /// about to run); time spent waiting before that is not counted.
    pub timeout_ms: u32,
    /// Ids of calls the user already approved (NUL-terminated UTF-8), so their
    /// `CAPSTAN_TOOL_REQUIRES_APPROVAL` tools run without asking the approver.
    /// Read during the call only. NULL when `approved_count` is 0.
    pub approved_ids: *const *const c_char,
    pub approved_count: usize,
    /// Bounds every call of the batch, in milliseconds from the moment it is
    /// submitted, waits included: for a free worker, for the approver's
    /// decision, for a main thread to call `capstan_registry_pump`. 0 = none.
    /// A call without a result by then ends `CAPSTAN_OUTCOME_TIMEOUT`, with
    /// content saying what it was waiting for ("...while it waited for
    /// approval...", "...for the host's main thread to call
    /// capstan_registry_pump...", "...did not finish within the batch
    /// deadline...": a running call is cancelled as at its timeout). A
    /// decision or completion after that returns ALREADY_COMPLETED.
    /// Appended after `approved_count`: a host built against an older header
    /// passes a smaller `struct_size` and gets no deadline.
    pub deadline_ms: u32,
    /// The run (a conversation, a workflow; UTF-8, `run_id_len` bytes or
    /// `CAPSTAN_NTS`) the calls belong to: with a journal on the registry
    /// (`capstan_registry_set_journal`) each call is recorded and answered
    /// under this id plus its call id. NULL: the journal is not used. Read
    /// during the call only. Appended after `deadline_ms` (issue #47).
    pub run_id: *const c_char,
    pub run_id_len: usize,
}

/// The C code of a call's outcome.
pub(crate) fn outcome_code(outcome: Outcome) -> capstan_outcome {
    match outcome {
        Outcome::Ok => CAPSTAN_OUTCOME_OK,
        Outcome::ToolError => CAPSTAN_OUTCOME_TOOL_ERROR,
        Outcome::InvalidArguments => CAPSTAN_OUTCOME_INVALID_ARGUMENTS,
        Outcome::UnknownTool => CAPSTAN_OUTCOME_UNKNOWN_TOOL,
        Outcome::Timeout => CAPSTAN_OUTCOME_TIMEOUT,
        Outcome::Cancelled => CAPSTAN_OUTCOME_CANCELLED,
        Outcome::Denied => CAPSTAN_OUTCOME_DENIED,
    }
}
