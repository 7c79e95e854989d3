//! Anthropic Messages.
//!
//! Tools: `{name, description, input_schema}`.
//! Calls: `tool_use` blocks of `content[]` (`input` is an object); the body
//! may be the whole message, its `content` array, or one block. Other blocks
//! (text, thinking, server-side tool use) are skipped.
//! Errors: an error body or stream event `{"type": "error", "error":
//! {"type", "message"}}` is `Error::ProviderError` (kind: the inner `type`,
//! e.g. `overloaded_error`). An object with neither `content` nor `type` is
//! `Error::InvalidResponse`.
//! Results: ONE user message holding a `tool_result` block per result, in
//! order. `is_error` is written only when true: the API takes it as optional
//! and false by default.

use serde_json::{json, Map, Value};

use super::{invalid, object, parameters, required_str, value_arguments};
use super::{keys_of, provider_error};
use capstan_core::call::{CallRequest, ToolResult};
use capstan_core::error::Error;
use capstan_core::tool::ToolSpec;

pub(super) fn export(tools: &[ToolSpec], opts: &super::ExportOptions) -> Value {
    let defs = tools.iter().map(|tool| {
        let mut def = json!({
            "name": tool.name,
            "description": tool.description,
            "input_schema": parameters(tool),
        });
        // ToolParam.defer_loading: loaded when a tool_reference names it.
        if opts.native_search && tool.flags.deferred() {
            def["defer_loading"] = json!(true);
        }
        def
    });
    Value::Array(defs.collect())
}

pub(super) fn parse(body: &Value) -> Result<Vec<CallRequest>, Error> {
    match body {
        Value::Object(obj) if obj.get("type").and_then(Value::as_str) == Some("error") => {
            Err(provider_error(obj.get("error"), &["type"], "error"))
        }
        Value::Object(obj) if obj.contains_key("content") => match &obj["content"] {
            // A plain-text message has no tool calls.
            Value::String(_) | Value::Null => Ok(Vec::new()),
            Value::Array(blocks) => parse_blocks(blocks, "content"),
            _ => Err(invalid("content", "must be an array of content blocks")),
        },
        Value::Object(obj) if obj.contains_key("type") => {
            Ok(parse_block(body, "")?.into_iter().collect())
        }
        Value::Array(blocks) => parse_blocks(blocks, ""),
        Value::Object(obj) => Err(invalid(
            "",
            format!(
                "expected a message (\"content\") or a content block (\"type\"), got {}",
                keys_of(obj)
            ),
        )),
        _ => Err(invalid(
            "",
            "expected a message, a content array or a content block",
        )),
    }
}

fn parse_blocks(blocks: &[Value], path: &str) -> Result<Vec<CallRequest>, Error> {
    super::calls_among(blocks, path, |_, block, path| parse_block(block, path))
}

fn parse_block(block: &Value, path: &str) -> Result<Option<CallRequest>, Error> {
    let block = object(block, path, "content block")?;
    if block.get("type").and_then(Value::as_str) != Some("tool_use") {
        return Ok(None);
    }
    let id = required_str(block, "id", path, "tool_use block")?;
    let name = required_str(block, "name", path, "tool_use block")?;
    Ok(Some(CallRequest {
        id,
        name,
        arguments: value_arguments(block.get("input")),
    }))
}

pub(super) fn format(results: &[ToolResult]) -> Value {
    let blocks = results.iter().map(|r| {
        let mut b = Map::new();
        b.insert("type".into(), json!("tool_result"));
        b.insert("tool_use_id".into(), json!(r.id));
        b.insert("content".into(), content(r));
        if r.is_error() {
            b.insert("is_error".into(), json!(true));
        }
        Value::Object(b)
    });
    json!({"role": "user", "content": blocks.collect::<Vec<_>>()})
}

/// A result's `tool_result` content: `tool_reference` blocks
/// (ToolReferenceBlockParam) for a search result `run_turn` marked so.
fn content(r: &ToolResult) -> Value {
    if r.name == super::TOOL_REFERENCES && !r.is_error() {
        if let Ok(names) = serde_json::from_str::<Vec<String>>(&r.content) {
            if !names.is_empty() {
                let refs = names
                    .iter()
                    .map(|n| json!({"type": "tool_reference", "tool_name": n}));
                return Value::Array(refs.collect());
            }
        }
    }
    super::parts::anthropic_content(r)
}
