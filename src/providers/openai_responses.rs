//! OpenAI Responses.
//!
//! Tools: flat `{"type": "function", name, description, parameters, strict}`.
//! `strict` is always written: the API defaults it to true, so a tool that is
//! not strict must say `false`.
//! Calls: `output[]` items of type `function_call`, with `call_id` as the id;
//! the body may be the whole response (an object with `output`, or with
//! `"object": "response"`), its `output` array, one item (an object with
//! `type`), or a stream event `response.*` holding a `response` (e.g.
//! `response.completed`) or an `item` (`response.output_item.done`). Other
//! item types (messages, reasoning, built-in and custom tools) are skipped.
//! Errors (`Error::ProviderError`): a response with `"status": "failed"` or a
//! non-null `error` (`{"code", "message"}`; kind: `code`), the stream's error
//! event `{"type": "error", "code", "message", "param"}`, and an API error
//! body `{"error": {"message", "type", "param", "code"}}` (kind: `type`, then
//! `code`). Any other object is `Error::InvalidResponse`.
//! Results: one `{"type": "function_call_output", "call_id", "output"}` item each.

use serde_json::{json, Value};

use super::{invalid, join, object, openai_parameters, required_str, text_arguments};
use super::{keys_of, provider_error};
use super::{ExportNote, ExportOptions};
use crate::call::{CallRequest, ToolResult};
use crate::error::Error;
use crate::tool::ToolSpec;

pub(super) fn export(
    tools: &[ToolSpec],
    opts: &ExportOptions,
    report: &mut Vec<ExportNote>,
) -> Value {
    let defs = tools.iter().map(|tool| {
        let (parameters, strict) = openai_parameters(tool, opts, report);
        json!({
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters,
            "strict": strict,
        })
    });
    Value::Array(defs.collect())
}

pub(super) fn parse(body: &Value) -> Result<Vec<CallRequest>, Error> {
    parse_at(body, "")
}

fn parse_at(body: &Value, path: &str) -> Result<Vec<CallRequest>, Error> {
    match body {
        Value::Object(obj) => {
            let kind = obj.get("type").and_then(Value::as_str);
            if kind == Some("error") {
                // The stream's error event: {"type": "error", "code", "message", "param"}.
                return Err(provider_error(Some(body), &["code"], "error"));
            }
            if let Some(kind) = kind.filter(|k| k.starts_with("response.")) {
                // A stream event carrying the response or one output item.
                if let Some(response) = obj.get("response") {
                    return parse_at(response, &join(path, "response"));
                }
                if let Some(item) = obj.get("item") {
                    return Ok(parse_item(item, &join(path, "item"))?.into_iter().collect());
                }
                return Err(invalid(
                    path,
                    format!("stream event \"{kind}\" has no \"response\" or \"item\""),
                ));
            }
            let failed = obj.get("status").and_then(Value::as_str) == Some("failed");
            let error = obj.get("error").filter(|e| !e.is_null());
            if obj.contains_key("output")
                || obj.get("object").and_then(Value::as_str) == Some("response")
            {
                if failed || error.is_some() {
                    return Err(provider_error(error, &["code", "type"], "failed"));
                }
                let items = super::optional_array(obj, "output", path)?;
                return parse_items(items, &join(path, "output"));
            }
            if error.is_some() {
                // An API error body: {"error": {"message", "type", "param", "code"}}.
                return Err(provider_error(error, &["type", "code"], "error"));
            }
            if kind.is_some() {
                return Ok(parse_item(body, path)?.into_iter().collect());
            }
            Err(invalid(
                path,
                format!(
                    "expected a response (\"output\"), an output item (\"type\") or a stream event, got {}",
                    keys_of(obj)
                ),
            ))
        }
        Value::Array(items) => parse_items(items, path),
        _ => Err(invalid(
            path,
            "expected a response, an output array or an output item",
        )),
    }
}

fn parse_items(items: &[Value], path: &str) -> Result<Vec<CallRequest>, Error> {
    super::calls_among(items, path, |_, item, path| parse_item(item, path))
}

fn parse_item(item: &Value, path: &str) -> Result<Option<CallRequest>, Error> {
    let item = object(item, path, "output item")?;
    if item.get("type").and_then(Value::as_str) != Some("function_call") {
        return Ok(None);
    }
    let id = required_str(item, "call_id", path, "function_call item")?;
    let name = required_str(item, "name", path, "function_call item")?;
    Ok(Some(CallRequest {
        id,
        name,
        arguments: text_arguments(item.get("arguments")),
    }))
}

pub(super) fn format(results: &[ToolResult]) -> Value {
    let items = results
        .iter()
        .map(|r| json!({"type": "function_call_output", "call_id": r.id, "output": super::parts::openai_responses_output(r)}));
    Value::Array(items.collect())
}
