//! Functions a tool callback uses on its `capstan_call`.

use std::ffi::c_char;

use super::boundary::*;
use super::lent::{call_text, Field};
use super::types::*;
use crate::exec::Call;
use crate::render::ContentKind;

fn resolve(call: *const capstan_call) -> Result<Call, Fail> {
    non_null(call, "call")?;
    Ok(Call::from_handle(call as usize)?)
}

unsafe fn write_len(len: *mut usize, value: usize) {
    if !len.is_null() {
        *len = value;
    }
}

/// The call's validated arguments as compact JSON (schema defaults filled in),
/// NUL-terminated; `*len` (if not NULL) gets the length without the NUL.
///
/// Lifetime (also of `capstan_call_id` and `capstan_call_tool`): owned by
/// the call, valid until the host completes the call with
/// `capstan_call_return` or `capstan_call_fail` (from any thread; even when
/// that completion is refused because the call already timed out or was
/// cancelled) or until the registry is freed, whichever comes first. A
/// timeout or cancellation does not free it: a tool may hand the pointer to
/// another thread that reads it and completes the call later. Until then the
/// handle keeps resolving (after a timeout `capstan_call_cancelled` is true
/// and a completion returns ALREADY_COMPLETED). So every call must be
/// completed exactly once, even one that timed out, or its memory is held
/// until the registry is freed. NULL if the handle is not live (see
/// `capstan_error_message`).
#[no_mangle]
pub unsafe extern "C" fn capstan_call_arguments(
    call: *const capstan_call,
    len: *mut usize,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let call = resolve(call)?;
        let bytes = call_text(&call, Field::Arguments)?;
        write_len(len, bytes.len() - 1);
        Ok(bytes.as_ptr().cast::<c_char>())
    })
}

/// The call's id, NUL-terminated; valid until the host completes the call or
/// the registry is freed (see `capstan_call_arguments`). NULL if the handle
/// is not live.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_id(
    call: *const capstan_call,
    len: *mut usize,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let call = resolve(call)?;
        let id = call_text(&call, Field::Id)?;
        write_len(len, id.len() - 1);
        Ok(id.as_ptr().cast::<c_char>())
    })
}

/// The called tool's name, NUL-terminated; valid until the host completes the
/// call or the registry is freed (see `capstan_call_arguments`). NULL if the
/// handle is not live.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_tool(
    call: *const capstan_call,
    len: *mut usize,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let call = resolve(call)?;
        let name = call_text(&call, Field::Tool)?;
        write_len(len, name.len() - 1);
        Ok(name.as_ptr().cast::<c_char>())
    })
}

/// True once the call should stop: it timed out, its batch was cancelled or
/// its registry freed. Also true for a handle that is no longer live.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_cancelled(call: *const capstan_call) -> bool {
    guard_value(true, || {
        Ok(resolve(call).map(|c| c.is_cancelled()).unwrap_or(true))
    })
}

/// Completes the call with content for the model (`CAPSTAN_CONTENT_TEXT`,
/// `CAPSTAN_CONTENT_JSON` or `CAPSTAN_CONTENT_PARTS`); `content` is copied. Any thread, any time, once.
/// After a timeout or cancellation: ALREADY_COMPLETED, and the content is
/// dropped; either way the handle then stops resolving and the call's lent
/// text is freed. A second completion: STALE_HANDLE. Content that is not UTF-8 (or, for
/// JSON, not JSON; for PARTS, parts that fail their check) still completes the
/// call, as a tool error the model can read, and returns INVALID_UTF8 /
/// INVALID_CONTENT. An unknown `kind` returns
/// INVALID_ARGUMENT and leaves the call open.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_return(
    call: *mut capstan_call,
    kind: capstan_content,
    content: *const c_char,
    len: usize,
) -> capstan_status {
    guard(|| {
        let call = resolve(call)?;
        let kind = match kind {
            CAPSTAN_CONTENT_TEXT => ContentKind::Text,
            CAPSTAN_CONTENT_JSON => ContentKind::Json,
            CAPSTAN_CONTENT_PARTS => ContentKind::Parts,
            other => return Err(Fail::BadArgument(format!("unknown content kind {other}"))),
        };
        match text(content, len, "content") {
            Ok(content) => Ok(call.complete(kind, content)?),
            Err(fail) => {
                let what = match &fail {
                    Fail::Null(_) => "no content (NULL)",
                    _ => "content that is not valid UTF-8",
                };
                call.fail(format!("Tool \"{}\" returned {what}.", call.tool()))?;
                Err(fail)
            }
        }
    })
}

/// Completes the call as a tool error; the model reads `message`. Same rules
/// as `capstan_call_return`; a message that is not UTF-8 is replaced.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_fail(
    call: *mut capstan_call,
    message: *const c_char,
    len: usize,
) -> capstan_status {
    guard(|| {
        let call = resolve(call)?;
        match text(message, len, "message") {
            Ok(message) => Ok(call.fail(message)?),
            Err(fail) => {
                call.fail(format!(
                    "Tool \"{}\" failed (its message was not valid UTF-8).",
                    call.tool()
                ))?;
                Err(fail)
            }
        }
    })
}

/// What the call's caller gave besides the arguments, and what it can be
/// asked: a JSON object (NUL-terminated; `*len` as in
/// `capstan_call_arguments`, and the same lifetime) with `"canAsk"`, the
/// methods `capstan_call_require_input` may ask this caller for (an array of
/// `"elicitation/create"`, `"sampling/createMessage"`, `"roots/list"`,
/// possibly empty), and, in a later round, `"inputResponses"` (the
/// client's answers by the keys the tool asked with, as the client sent
/// them: the tool checks them) and `"requestState"` (the tool's own state
/// from the previous round, as it gave it; capstan checked it came back
/// untampered). An MCP client calling a served tool can be asked what its
/// capabilities declare: a 2026-07-28 client answers in its next request
/// (with `tasks/update` when the call runs as a task); a 2025-11-25
/// session's client is asked by capstan itself with server-initiated
/// requests (up to 10 rounds a call), so the tool sees the same rounds
/// either way. For every other caller `canAsk` is empty.
/// NULL if the handle is not live.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_input(
    call: *const capstan_call,
    len: *mut usize,
) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let call = resolve(call)?;
        let text = call_text(&call, Field::Input)?;
        write_len(len, text.len() - 1);
        Ok(text.as_ptr().cast::<c_char>())
    })
}

/// Completes the call asking its caller for input (MCP 2026-07-28
/// multi round-trip requests): `requests_json` is a JSON object of requests
/// by key, each `{"method": "elicitation/create" | "sampling/createMessage"
/// | "roots/list", "params": {...}}` (the MCP request's params), at most 32;
/// `state` (NULL = none; `state_len` may be `CAPSTAN_NTS`; at most 64 KiB)
/// is the tool's own, opaque to the client, which capstan seals (HMAC-SHA256
/// with a key of the server's) so a tampered one is refused before the tool
/// runs again. At least one request or a state. The MCP client answers and
/// the tool is called again: `capstan_call_input` then holds the answers
/// and the state. Anyone else reading the result (the event hook, stats) sees a
/// tool error naming what was asked. Same rules as `capstan_call_return`,
/// except that a refusal leaves the call open for the tool to complete
/// another way: INVALID_ARGUMENT for requests that are not JSON or break a
/// rule (the message names the key), UNSUPPORTED when the caller cannot be
/// asked or lacks a method's capability (`canAsk`), INVALID_UTF8. A tool
/// refused for a capability its MCP client did not declare that then fails
/// the call gets that client (2026-07-28) MissingRequiredClientCapability
/// (-32021) naming the capabilities, not its tool error.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_require_input(
    call: *mut capstan_call,
    requests_json: *const c_char,
    len: usize,
    state: *const c_char,
    state_len: usize,
) -> capstan_status {
    guard(|| {
        let call = resolve(call)?;
        let requests = text(requests_json, len, "requests_json")?;
        let requests: serde_json::Value = serde_json::from_str(requests).map_err(|e| {
            Fail::Core(crate::Error::InvalidArgument(format!(
                "requests_json is not JSON: {e}"
            )))
        })?;
        let state = if state.is_null() {
            None
        } else {
            Some(text(state, state_len, "state")?.to_owned())
        };
        Ok(call.require_input(requests, state)?)
    })
}

/// Reports the call's progress: `progress` so far, out of `total` (0 =
/// unknown), with `message` (NULL = none; `len` may be `CAPSTAN_NTS`;
/// copied). It reaches the registry's event hook as a
/// `CAPSTAN_EVENT_PROGRESS` event, on this thread before this returns, and,
/// for a call from an MCP client whose request carried a `progressToken`,
/// that client as `notifications/progress`. Any thread, any number of times
/// before the call is completed. `progress` must be finite, not negative
/// and above the call's previous report (MCP's rule), `total` finite and
/// not negative, `message` at most 4096 bytes: else INVALID_ARGUMENT and
/// nothing is reported. INVALID_UTF8 for a message that is not UTF-8;
/// ALREADY_COMPLETED once the call has its result (timed out, cancelled);
/// STALE_HANDLE after the host completed it.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_progress(
    call: *const capstan_call,
    progress: f64,
    total: f64,
    message: *const c_char,
    len: usize,
) -> capstan_status {
    guard(|| {
        let call = resolve(call)?;
        let message = if message.is_null() {
            None
        } else {
            Some(text(message, len, "message")?.to_owned())
        };
        call.report_progress(&crate::progress::Progress {
            progress,
            total: (total != 0.0).then_some(total),
            message,
        })?;
        Ok(())
    })
}

/// Sends a log message of the running call: `message` (`len` bytes, or
/// `CAPSTAN_NTS`; copied) at `level` (`CAPSTAN_LOG_*`). It reaches the
/// registry's event hook as a `CAPSTAN_EVENT_LOG` event, on this thread
/// before this returns, and, for a call from an MCP client that asked for
/// logs (`logging/setLevel` in a 2025-11-25 session, `_meta`
/// `io.modelcontextprotocol/logLevel` in a 2026-07-28 request), that
/// client as `notifications/message` (logger: the tool's name) when
/// `level` is at or above the one it asked for. Any thread, any number of
/// times before the call is completed. INVALID_ARGUMENT for an unknown
/// level or a message over 64 KiB (nothing is sent); INVALID_UTF8;
/// ALREADY_COMPLETED once the call has its result (timed out, cancelled);
/// STALE_HANDLE after the host completed it.
#[no_mangle]
pub unsafe extern "C" fn capstan_call_log(
    call: *const capstan_call,
    level: capstan_log_level,
    message: *const c_char,
    len: usize,
) -> capstan_status {
    guard(|| {
        let call = resolve(call)?;
        let Some(level) = crate::log::LogLevel::from_index(level) else {
            return Err(Fail::BadArgument(format!(
                "log level {level} is not one of CAPSTAN_LOG_DEBUG (0) .. CAPSTAN_LOG_EMERGENCY (7)"
            )));
        };
        non_null(message, "message")?;
        let message = text(message, len, "message")?;
        call.log(level, message)?;
        Ok(())
    })
}
