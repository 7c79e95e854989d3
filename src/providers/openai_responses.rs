//! OpenAI Responses.
//!
//! Tools: flat `{"type": "function", name, description, parameters, strict}`.
//! `strict` is always written: the API defaults it to true, so a tool that is
//! not strict must say `false`.
//! Calls: `output[]` items of type `function_call`, with `call_id` as the id;
//! the body may be the whole response, its `output` array, or one item. Other
//! item types (messages, reasoning, built-in and custom tools) are skipped.
//! Results: one `{"type": "function_call_output", "call_id", "output"}` item each.

use serde_json::{json, Value};

use super::{invalid, object, openai_parameters, required_str, text_arguments};
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
    match body {
        Value::Object(obj) if obj.contains_key("output") => {
            let items = super::optional_array(obj, "output", "")?;
            parse_items(items, "output")
        }
        Value::Object(obj) if obj.contains_key("type") => {
            Ok(parse_item(body, "")?.into_iter().collect())
        }
        Value::Array(items) => parse_items(items, ""),
        _ => Err(invalid(
            "",
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
        .map(|r| json!({"type": "function_call_output", "call_id": r.id, "output": r.content}));
    Value::Array(items.collect())
}
