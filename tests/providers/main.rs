//! Provider formats: tool definitions out, calls in, results out.
//!
//! Inputs come from the providers' own specifications
//! (`tests/fixtures/provider-spec`, copied from upstream: see
//! `tests/fixtures/README.md`) and from fixtures written after each API
//! reference (`tests/fixtures/providers`).

use std::path::PathBuf;

use capstan::providers::{
    drop_strict_nulls, export_tools, format_results, name_report, parse_calls, strict_schema,
    ExportNote, ExportOptions, Format,
};
use capstan::{Arguments, CallRequest, Error, Outcome, ToolFlags, ToolResult, ToolSpec};
use serde_json::{json, Value};

mod anthropic;
mod describe;
mod errors;
mod gemini;
mod mcp;
mod names;
mod openai_chat;
mod openai_responses;
mod parts;
mod round_trips;
mod strict;

// --- helpers ----------------------------------------------------------------

fn corpus(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/provider-spec")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/providers")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Same JSON, same key order.
#[track_caller]
fn assert_exact(actual: &Value, expected: &Value) {
    assert_eq!(
        serde_json::to_string_pretty(actual).unwrap(),
        serde_json::to_string_pretty(expected).unwrap()
    );
}

fn tool(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
        flags: ToolFlags::default(),
        timeout_ms: 0,
        max_output_chars: 0,
        warnings: Vec::new(),
        mcp: Default::default(),
    }
}

fn weather_tool() -> ToolSpec {
    tool(
        "get_weather",
        "Current weather",
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["c", "f"], "default": "c"}
            },
            "required": ["city"]
        }),
    )
}

fn call(id: &str, name: &str, args: Value) -> CallRequest {
    CallRequest::new(id, name, args)
}

fn ok(id: &str, name: &str, content: &str) -> ToolResult {
    ToolResult::new(id, name, Outcome::Ok, content)
}

fn failed(id: &str, name: &str, outcome: Outcome, content: &str) -> ToolResult {
    ToolResult::new(id, name, outcome, content)
}

#[track_caller]
fn invalid_response(fmt: Format, body: &Value) -> String {
    match parse_calls(fmt, body) {
        Err(Error::InvalidResponse(message)) => message,
        other => panic!("expected InvalidResponse, got {other:?}"),
    }
}

fn no_options() -> ExportOptions {
    ExportOptions::default()
}

fn strict_options() -> ExportOptions {
    ExportOptions {
        strict: true,
        ..ExportOptions::default()
    }
}

fn lower_options() -> ExportOptions {
    ExportOptions {
        gemini_lower: true,
        ..ExportOptions::default()
    }
}

// --- Format -----------------------------------------------------------------

#[test]
fn format_names_round_trip_and_discriminants_follow_the_c_enum() {
    let expected = [
        (Format::Describe, "describe", 0),
        (Format::OpenAiChat, "openai_chat", 1),
        (Format::OpenAiResponses, "openai_responses", 2),
        (Format::Anthropic, "anthropic", 3),
        (Format::Gemini, "gemini", 4),
        (Format::Mcp, "mcp", 5),
    ];
    assert_eq!(Format::ALL.len(), expected.len());
    for (fmt, name, discriminant) in expected {
        assert_eq!(fmt.name(), name);
        assert_eq!(Format::parse(name), Some(fmt));
        assert_eq!(fmt as u32, discriminant);
    }
    assert_eq!(Format::parse("openai"), None);
    assert_eq!(Format::parse("Gemini"), None);
}
