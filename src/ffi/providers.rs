//! Provider-format functions of the C ABI.

use std::ffi::c_char;

use super::boundary::*;
use super::exec::exec_options;
use super::registry::registry_ref;
use super::types::*;
use crate::call::ToolResult;
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
    serde_json::from_str(text)
        .map_err(|e| crate::Error::InvalidResponse(format!("{what} is not valid JSON: {e}")))
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

/// Like `capstan_tools_json`, with options (`CAPSTAN_EXPORT_*`; NULL means
/// none) and a report: `*report` (may be NULL if not wanted; else free with
/// `capstan_free`) gets `[{"tool","pointer","message"}]`: what was dropped or
/// could not be made strict, and names the format would refuse.
#[no_mangle]
pub unsafe extern "C" fn capstan_tools_export(
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
        let flags = read_options(opts, std::mem::size_of::<capstan_export_options>(), "opts")?
            .map(|o| o.flags)
            .unwrap_or(0);
        const KNOWN: u32 = CAPSTAN_EXPORT_STRICT | CAPSTAN_EXPORT_GEMINI_LOWER;
        if flags & !KNOWN != 0 {
            return Err(Fail::BadArgument(format!(
                "unknown export flags 0x{:x}",
                flags & !KNOWN
            )));
        }
        let options = ExportOptions {
            strict: flags & CAPSTAN_EXPORT_STRICT != 0,
            gemini_lower: flags & CAPSTAN_EXPORT_GEMINI_LOWER != 0,
        };
        let export = providers::export_tools(&registry.specs(), fmt, &options);
        let tools = export.tools.to_string();
        let notes = export.report_json().to_string();
        // Write both or neither.
        let mut report_buf: *mut c_char = std::ptr::null_mut();
        if !report.is_null() {
            write_text(&notes, &mut report_buf, report_len)?;
        }
        if let Err(e) = write_text(&tools, out, out_len) {
            crate::ffi::capstan_free(report_buf);
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
pub unsafe extern "C" fn capstan_name_report(
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
        write_text(
            &serde_json::Value::Array(json).to_string(),
            calls_json,
            out_len,
        )
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
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            crate::Error::InvalidResults(format!("results are not valid JSON: {e}"))
        })?;
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
        let messages = crate::turn::run_turn(registry, fmt, &body, &options)?;
        write_text(&messages.to_string(), messages_json, out_len)
    })
}
