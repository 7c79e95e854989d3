//! Provider-format functions of the C ABI.

use std::ffi::c_char;

use super::boundary::*;
use super::exec::exec_options;
use super::registry::registry_ref;
use super::types::*;
use crate::call::ToolResult;
use crate::exec;
use crate::providers::{self, ExportOptions, Format};

fn format_of(fmt: capstan_format) -> Result<Format, Fail> {
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

fn parse_json(text: &str, what: &str) -> Result<serde_json::Value, crate::Error> {
    serde_json::from_str(text).map_err(|e| crate::Error::InvalidResponse(format!("{what} is not valid JSON: {e}")))
}

/// The registered tools as the JSON a format's API takes (sorted by name).
/// `CAPSTAN_FORMAT_DESCRIBE`: `[{"name","description","parameters",...}]`.
/// `*out` is owned by the caller (`capstan_free`).
#[no_mangle]
pub unsafe extern "C" fn capstan_tools_json(
    reg: *const capstan_registry,
    fmt: capstan_format,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        let registry = registry_ref(reg)?;
        non_null(out, "out")?;
        let fmt = format_of(fmt)?;
        let export = providers::export_tools(&registry.specs(), fmt, &ExportOptions::default());
        write_text(&export.tools.to_string(), out, out_len)
    })
}

/// Reads the tool calls out of a model response in format `fmt` (the whole
/// body or just the message/content). `*calls_json` gets a normalized call
/// array (empty when the response asks for no tool). INVALID_RESPONSE if
/// the body is not JSON or lacks a required field (the message names it).
#[no_mangle]
pub unsafe extern "C" fn capstan_parse_calls(
    fmt: capstan_format,
    response_json: *const c_char,
    len: usize,
    calls_json: *mut *mut c_char,
    out_len: *mut usize,
) -> capstan_status {
    guard(|| {
        non_null(calls_json, "calls_json")?;
        let fmt = format_of(fmt)?;
        let body = parse_json(text(response_json, len, "response_json")?, "response")?;
        let calls = providers::parse_calls(fmt, &body)?;
        let json: Vec<serde_json::Value> = calls.iter().map(|c| c.to_json()).collect();
        write_text(&serde_json::Value::Array(json).to_string(), calls_json, out_len)
    })
}

/// Formats normalized results (as `capstan_execute` returns them) as the
/// messages/items format `fmt` expects next. INVALID_RESULTS on bad input.
#[no_mangle]
pub unsafe extern "C" fn capstan_format_results(
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
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| crate::Error::InvalidResults(format!("results are not valid JSON: {e}")))?;
        let results = ToolResult::list_from_json(&value)?;
        let formatted = providers::format_results(fmt, &results);
        write_text(&formatted.to_string(), out, out_len)
    })
}

/// One agent turn: parses the calls out of `response_json`, runs them (in
/// parallel, per `opts`), and returns in `*messages_json` what to append to
/// the conversation in format `fmt`. Blocks like `capstan_execute`.
#[no_mangle]
pub unsafe extern "C" fn capstan_run_turn(
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
        let options = exec_options(opts)?;
        let body = parse_json(text(response_json, len, "response_json")?, "response")?;
        let calls = providers::parse_calls(fmt, &body)?;
        let results = exec::execute(registry, calls, &options);
        let formatted = providers::format_results(fmt, &results);
        write_text(&formatted.to_string(), messages_json, out_len)
    })
}
