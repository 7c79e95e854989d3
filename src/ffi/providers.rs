//! Provider-format functions of the C ABI.

use std::ffi::c_char;

use super::boundary::*;
use super::exec::read_exec_options;
use super::flags::{
    exec_flags, CAPSTAN_EXEC_WHOLE_TURN, CAPSTAN_HISTORY_GEMINI_SIGNATURES, CAPSTAN_HISTORY_REPAIR,
};
use super::registry::registry_ref;
use super::types::*;
use crate::call::ToolResult;
use crate::export::ExportTools;
use crate::providers::{self, ExportOptions, Format};

pub(crate) fn format_of(fmt: capstan_format) -> Result<Format, Fail> {
    Ok(match fmt {
        CAPSTAN_FORMAT_DESCRIBE => Format::Describe,
        CAPSTAN_FORMAT_OPENAI_CHAT => Format::OpenAiChat,
        CAPSTAN_FORMAT_OPENAI_RESPONSES => Format::OpenAiResponses,
        CAPSTAN_FORMAT_ANTHROPIC => Format::Anthropic,
        CAPSTAN_FORMAT_GEMINI => Format::Gemini,
        CAPSTAN_FORMAT_MCP => Format::Mcp,
        other => return Err(Fail::BadArgument(format!("unknown format {other}"))),
    })
}

/// The registered tools as the JSON a format's API takes (sorted by name).
/// `CAPSTAN_FORMAT_DESCRIBE`: `[{"name","description","parameters",...}]`.
/// `*out` is owned by the caller (`capstan_string_free`). Options
/// (`CAPSTAN_EXPORT_*`; NULL means none) and a report: `*report` (may be NULL if not wanted; else free with
/// `capstan_string_free`) gets `[{"tool","pointer","message"}]`: what was dropped or
/// could not be made strict, and names the format would refuse.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_tools_json(
    reg: *const capstan_registry,
    fmt: capstan_format,
    opts: *const capstan_export_options,
    out: *mut *mut c_char,
    out_len: *mut usize,
    report: *mut *mut c_char,
    report_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        let fmt = format_of(fmt)?;
        let opts = read_options(
            opts,
            std::mem::offset_of!(capstan_export_options, deferred),
            "opts",
        )?;
        let flags = opts.map(|o| o.flags).unwrap_or(0);
        let deferred = opts
            .map(|o| o.deferred)
            .unwrap_or(CAPSTAN_EXPORT_DEFERRED_HIDE);
        if deferred > CAPSTAN_EXPORT_DEFERRED_NATIVE {
            return Err(Fail::BadArgument(format!(
                "opts->deferred is {deferred}; expected CAPSTAN_EXPORT_DEFERRED_HIDE (0) or \
                 CAPSTAN_EXPORT_DEFERRED_NATIVE (1)"
            )));
        }
        super::flags::check(flags, &super::flags::EXPORT)?;
        let options = ExportOptions {
            strict: flags & CAPSTAN_EXPORT_STRICT != 0,
            gemini_lower: flags & CAPSTAN_EXPORT_GEMINI_LOWER != 0,
            native_search: deferred == CAPSTAN_EXPORT_DEFERRED_NATIVE,
            search_tool: None,
        };
        // Deferred tools not yet found by the search tool are not shown to
        // a model (issue #32), or shown as the provider defers them; the
        // host's own description lists them all.
        let export = registry.export_tools(fmt, &options);
        let tools = export.tools.to_string();
        let notes = export.report_json().to_string();
        // Write both or neither.
        let mut report_buf: *mut c_char = std::ptr::null_mut();
        if !report.is_null() {
            write_text(&notes, &mut report_buf, report_len)?;
        }
        if let Err(e) = write_text(&tools, out, out_len) {
            crate::ffi::capstan_string_free(report_buf);
            return Err(e);
        }
        if !report.is_null() {
            *report = report_buf;
        }
        Ok(())
    })
}

/// Which registered tool names each provider accepts:
/// `[{"name","openai","anthropic","gemini","mcp","problems":[...]}]`, so a host
/// sees a problem before a request fails. `*out` owned by the caller.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_names_json(
    reg: *const capstan_registry,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        let names = registry.names();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        write_text(&providers::name_report(&refs).to_string(), out, out_len)
    })
}

/// Reads the tool calls out of a model response in format `fmt` (the whole
/// body or just the message/content). `*calls_json` gets a normalized call
/// array (empty only when the response really asks for no tool).
///
/// Returns `CAPSTAN_ERR_PROVIDER_ERROR` when the body is the provider's
/// report of an error (below, per format); `capstan_error_message` then reads
/// `provider error (KIND): MESSAGE` with the provider's own type/code/status
/// and message. Returns `CAPSTAN_ERR_INVALID_RESPONSE` when the body is not
/// JSON, is not one of the format's shapes below, or lacks a required field
/// (the message names where, e.g. `content[2]: tool_use block has no "name"`).
/// `*calls_json` is written only on `CAPSTAN_OK`.
///
/// Accepted shapes (anything else is INVALID_RESPONSE):
/// - `CAPSTAN_FORMAT_DESCRIBE`: a normalized call object or an array of them
///   (errors are `CAPSTAN_ERR_INVALID_CALLS`).
/// - `CAPSTAN_FORMAT_OPENAI_CHAT`: a chat completion `{"choices": [...]}`
///   (the first choice's `message`), an assistant message (an object with
///   `role` or `tool_calls`), its `tool_calls` array, or a list of messages
///   (the last one's calls if it is the assistant's). Provider error:
///   `{"error": {"message", "type", "param", "code"}}` (KIND: type, code).
/// - `CAPSTAN_FORMAT_OPENAI_RESPONSES`: a response (an object with `output`
///   or `"object": "response"`), its `output` array, one output item (an
///   object with `type`), or a stream event `response.*` holding `response`
///   or `item`. Provider errors: a response with `"status": "failed"` or a
///   non-null `error` (`{"code", "message"}`), the error event `{"type":
///   "error", "code", "message"}`, and `{"error": {"message", "type", ...}}`.
///   A client-executed `tool_search_call` item (`"execution": "client"`) is
///   read as a call named `openai:tool_search` (id: its `call_id`), which
///   `capstan_registry_run_turn` answers with a `tool_search_output` item
///   (`CAPSTAN_EXPORT_DEFERRED_NATIVE`); a server-executed one is skipped.
/// - `CAPSTAN_FORMAT_ANTHROPIC`: a message (an object with `content`), its
///   `content` array, or one content block (an object with `type`). Provider
///   error: `{"type": "error", "error": {"type", "message"}}` (KIND: the inner
///   type, e.g. `overloaded_error`), as a body or a stream event.
/// - `CAPSTAN_FORMAT_GEMINI`: a `generateContent` response (an object with
///   `candidates`; the first candidate; none, or only `usageMetadata`, means
///   no calls), a Content `{"role", "parts"}`, its `parts` array, or one part
///   (`{"functionCall": ...}`). Provider errors: `{"error": {"code",
///   "message", "status"}}` (KIND: status, code), also inside an array, and a
///   prompt blocked before any candidate (`promptFeedback.blockReason`; KIND:
///   the reason). An array of streamed responses is INVALID_RESPONSE.
/// - `CAPSTAN_FORMAT_MCP`: a JSON-RPC `tools/call` request, its `params`
///   alone, or an array of either. Provider error: a JSON-RPC error response
///   `{"jsonrpc": "2.0", "id", "error": {"code", "message"}}` or its bare
///   error object `{"code", "message"}` (KIND: the code, e.g. `-32602`). A
///   JSON-RPC result response or another method is INVALID_RESPONSE.
///
/// A value that is JSON but that capstan cannot hold, a number too big for a
/// double (`1e400`) or nesting 128 levels deep counted from the body's root,
/// does not fail the body when it sits inside one call's arguments: that
/// call's arguments are kept as text (as OpenAI sends them) and, when run, it
/// ends `CAPSTAN_OUTCOME_INVALID_ARGUMENTS` with the reason ("number out of
/// range", "recursion limit exceeded": arguments may nest up to 127 levels
/// counted from their own root); the other calls are read as usual. Such a
/// value in a call's id or name is INVALID_RESPONSE.
#[no_mangle]
pub unsafe extern "C" fn capstan_format_parse_calls(
    fmt: capstan_format,
    response_json: *const c_char,
    len: usize,
    calls_json: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        non_null(calls_json, "calls_json")?;
        let fmt = format_of(fmt)?;
        let body = text(response_json, len, "response_json")?;
        let calls = providers::parse_calls_text(fmt, body)?;
        let json: Vec<serde_json::Value> = calls.iter().map(|c| c.to_json()).collect();
        write_text(
            &serde_json::Value::Array(json).to_string(),
            calls_json,
            out_len,
        )
    })
}

/// Formats normalized results (as `capstan_registry_execute` returns them) as the
/// messages/items format `fmt` expects next. INVALID_RESULTS on bad input
/// (also parts that fail the checks of `CAPSTAN_CONTENT_PARTS`, naming the
/// result and part; no size bound is applied here).
///
/// Results with content parts (`"parts"`, `"structured_content"`, see
/// `CAPSTAN_CONTENT_PARTS`), as `capstan_registry_run_turn` and streams
/// render them too:
/// - OPENAI_RESPONSES: `output` is an array of `input_text`, `input_image`
///   (a `data:` URL; PNG, JPEG, GIF, WebP) and `input_file` (a PDF as a
///   `data:` URL) parts.
/// - OPENAI_CHAT: a `tool` message takes text only, so each tool message
///   holds the text (with `[image_url sent in the next user message]` where
///   a part went), and ONE `user` message follows the tool messages with the
///   media: for each call a text part "Content returned by tool call <id>
///   (<name>):", then its `image_url`, `input_audio` (WAV, MP3) and `file`
///   (PDF) parts. This is the documented workaround for images from tools in
///   Chat Completions; results without parts give tool messages only.
/// - ANTHROPIC: `tool_result.content` is an array of `text`, `image` (base64
///   source; JPEG, PNG, GIF, WebP) and `document` (a PDF, base64 source)
///   blocks.
/// - GEMINI: Gemini 3's multimodal function response: the media go in
///   `functionResponse.parts` as `inlineData` (PNG, JPEG, WebP, PDF, plain
///   text), and `response.output` holds the text with a line
///   `[image/png attached as part N]` for each. Models before Gemini 3 do not
///   take `functionResponse.parts`: for them, send results whose parts are
///   text only.
/// - MCP: `CallToolResult.content` holds the blocks as the tool gave them,
///   and `structuredContent` its object.
///
/// A part a provider cannot take (audio for Anthropic, a BMP image, a ZIP
/// file) becomes a text part `[left out: <kind> (<mime>, N bytes): <provider>
/// takes ...]`, never a silent drop.
///
/// A result whose id repeats an earlier result's, or is empty or illegal in
/// `fmt`, is written under the id `capstan_registry_run_turn` gives it (see
/// `capstan_format_check_history`); describe and MCP keep ids as given.
#[no_mangle]
pub unsafe extern "C" fn capstan_format_write_results(
    fmt: capstan_format,
    results_json: *const c_char,
    len: usize,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        non_null(out, "out")?;
        let fmt = format_of(fmt)?;
        let text = text(results_json, len, "results_json")?;
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            crate::Error::InvalidResults(format!("results are not valid JSON: {e}"))
        })?;
        let results = ToolResult::list_from_json(&value)?;
        let formatted = crate::history::ids::format_results(fmt, results);
        write_text(&formatted.to_string(), out, out_len)
    })
}

/// One agent turn: parses the calls out of `response_json`, runs them (in
/// parallel, per `opts`), and returns in `*messages_json` what to append to
/// the conversation in format `fmt`. Blocks like `capstan_registry_execute`.
/// The response is read exactly as `capstan_format_parse_calls` reads it, with the
/// same statuses: on `CAPSTAN_ERR_PROVIDER_ERROR` or
/// `CAPSTAN_ERR_INVALID_RESPONSE` no call runs and nothing is written. A
/// call with unreadable arguments gets its own `invalid_arguments` result.
///
/// Every call of the response gets exactly one result, in call order,
/// whatever ends it. Ids: a call whose id repeats an earlier call's of the
/// same response, or that the format refuses (empty; Anthropic: outside
/// `[a-zA-Z0-9_-]`; OpenAI Responses: over 64 characters) is answered under a
/// new id: the id made legal, then `_2`, `_3`... until unique (an empty id
/// becomes `call_{position}`). The model's own message still holds the
/// original ids: `capstan_format_check_history` with
/// `CAPSTAN_HISTORY_REPAIR` renames those calls the same way.
#[no_mangle]
pub unsafe extern "C" fn capstan_registry_run_turn(
    reg: *mut capstan_registry,
    fmt: capstan_format,
    response_json: *const c_char,
    len: usize,
    opts: *const capstan_exec_options,
    messages_json: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(messages_json, "messages_json")?;
        let fmt = format_of(fmt)?;
        let (options, flags) =
            read_exec_options(opts, exec_flags::RUN_TURN, "capstan_registry_run_turn")?;
        let body = text(response_json, len, "response_json")?;
        let messages = if flags & CAPSTAN_EXEC_WHOLE_TURN != 0 {
            crate::turn::run_whole_turn_text(registry, fmt, body, &options)?
        } else {
            crate::turn::run_turn_text(registry, fmt, body, &options)?.to_string()
        };
        write_text(&messages, messages_json, out_len)
    })
}

/// Checks a conversation the host assembled against the rules format `fmt`
/// (OpenAI Chat, OpenAI Responses, Anthropic or Gemini) sets for tool calls
/// and their results, and with `CAPSTAN_HISTORY_REPAIR` repairs it.
///
/// `history_json` (`len` bytes, or `CAPSTAN_NTS`): an array of messages
/// (Chat, Anthropic), input items (Responses) or contents (Gemini), or a
/// request body holding one under `"messages"`, `"input"` or `"contents"`.
///
/// `*report_json` gets `{"ok": bool, "findings": [{"kind", "entry",
/// "call_id", "message", "repair"?}]}`; `kind` is one of `missing_result`,
/// `orphan_result`, `duplicate_result`, `duplicate_call_id`, `illegal_id`,
/// `out_of_order`, `missing_signature`; `entry` is the index of the message,
/// item or content; `repair` (with `CAPSTAN_HISTORY_REPAIR`) says what the
/// repair did. With `CAPSTAN_HISTORY_REPAIR`, `*repaired_json` (must not then
/// be NULL) gets the history in the shape it came in, where: a result present
/// but misplaced (after another message, before its call, among another
/// turn's results) is moved right after its call; a call with no result
/// anywhere gets an error result saying it never finished (it is not run);
/// of two results for a call the success is kept over the error (the report
/// says which was dropped); a result no call has is dropped; every entry
/// the repair does not change comes back byte for byte (numbers as
/// written); a repeated or illegal call id is
/// renamed, with its result, as `capstan_registry_run_turn` renames it; results
/// are put in call order (Anthropic: before the message's other blocks); a
/// missing Gemini signature gets Google's documented placeholder
/// `"skip_thought_signature_validator"`. Without the flag `repaired_json` is
/// not used (may be NULL). Both outputs are owned by the caller
/// (`capstan_string_free`) and written only on success.
///
/// Returns OK when the check ran (damage or not: read `"ok"`);
/// INVALID_ARGUMENT for describe or MCP (no conversations), unknown flags,
/// text that is not JSON (numbers past f64's range and nesting past 128
/// levels included) or a history of the wrong shape, the message naming the
/// entry; INVALID_UTF8, NULL_PARAMETER as usual. Pure: any thread, no
/// registry; cost linear in the history's size.
#[no_mangle]
pub unsafe extern "C" fn capstan_format_check_history(
    fmt: capstan_format,
    history_json: *const c_char,
    len: usize,
    flags: u32,
    report_json: *mut *mut c_char,
    report_len: *mut usize,
    repaired_json: *mut *mut c_char,
    repaired_len: *mut usize,
) -> capstan_status {
    guard(|| {
        non_null(report_json, "report_json")?;
        let fmt = format_of(fmt)?;
        super::flags::check(flags, &super::flags::HISTORY)?;
        let repair = flags & CAPSTAN_HISTORY_REPAIR != 0;
        if repair {
            non_null(repaired_json, "repaired_json")?;
        }
        let body = text(history_json, len, "history_json")?;
        let options = crate::history::CheckOptions {
            repair,
            gemini_signatures: flags & CAPSTAN_HISTORY_GEMINI_SIGNATURES != 0,
        };
        let checked = crate::history::check_text(fmt, body, &options)?;
        let report = checked.report_json().to_string();
        let repaired = checked.repaired;
        // Write both or neither.
        let mut repaired_buf: *mut c_char = std::ptr::null_mut();
        if let Some(repaired) = &repaired {
            write_text(repaired, &mut repaired_buf, repaired_len)?;
        }
        if let Err(e) = write_text(&report, report_json, report_len) {
            crate::ffi::capstan_string_free(repaired_buf);
            return Err(e);
        }
        if repaired.is_some() {
            *repaired_json = repaired_buf;
        }
        Ok(())
    })
}
