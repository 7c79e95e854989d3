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
use capstan_core::call::{CallRequest, ToolResult};
use capstan_core::error::Error;
use capstan_core::tool::ToolSpec;

pub(super) fn export(
    tools: &[ToolSpec],
    opts: &ExportOptions,
    report: &mut Vec<ExportNote>,
) -> Value {
    let search = opts
        .search_tool
        .as_deref()
        .filter(|_| opts.native_search)
        .and_then(|name| tools.iter().find(|t| t.name == name));
    let others: Vec<ToolSpec> = tools
        .iter()
        .filter(|t| search.is_none_or(|s| s.name != t.name))
        .cloned()
        .collect();
    let mut defs = functions(&others, opts, report);
    if opts.native_search && others.iter().any(|t| t.flags.deferred()) {
        // The client-executed search tool (ToolSearchToolParam): the model's
        // searches arrive as tool_search_call items, answered by capstan.
        let (description, parameters) = match search {
            Some(s) => (s.description.clone(), super::parameters(s)),
            None => (
                capstan_core::search::DEFAULT_TOOL_DESCRIPTION.to_owned(),
                capstan_core::search::tool_parameters(capstan_core::search::SearchMode::Words),
            ),
        };
        defs.push(json!({
            "type": "tool_search",
            "execution": "client",
            "description": description,
            "parameters": parameters,
        }));
    }
    Value::Array(defs)
}

/// Function tools (FunctionToolParam); under `native_search` a deferred one
/// carries `defer_loading: true`.
pub(super) fn functions(
    tools: &[ToolSpec],
    opts: &ExportOptions,
    report: &mut Vec<ExportNote>,
) -> Vec<Value> {
    let defs = tools.iter().map(|tool| {
        let (parameters, strict) = openai_parameters(tool, opts, report);
        let mut def = json!({
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters,
            "strict": strict,
        });
        if opts.native_search && tool.flags.deferred() {
            def["defer_loading"] = json!(true);
        }
        def
    });
    defs.collect()
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
    let kind = item.get("type").and_then(Value::as_str);
    if kind == Some("tool_search_call") {
        return parse_tool_search(item, path);
    }
    if kind != Some("function_call") {
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

/// A client-executed `tool_search_call` (ResponseToolSearchCall) as a call
/// named `NATIVE_SEARCH_CALL`; id: its `call_id` (else its item `id`). One
/// the server executed (`"execution": "server"`) is skipped: the server
/// already answered it.
fn parse_tool_search(
    item: &serde_json::Map<String, Value>,
    path: &str,
) -> Result<Option<CallRequest>, Error> {
    if item.get("execution").and_then(Value::as_str) != Some("client") {
        return Ok(None);
    }
    let id = match item.get("call_id") {
        Some(Value::String(id)) => id.clone(),
        _ => required_str(
            item,
            "id",
            path,
            "tool_search_call item without \"call_id\"",
        )?,
    };
    Ok(Some(CallRequest {
        id,
        name: super::NATIVE_SEARCH_CALL.to_owned(),
        arguments: text_arguments(item.get("arguments")),
    }))
}

pub(super) fn format(results: &[ToolResult]) -> Value {
    let items = results.iter().map(|r| {
        if r.name == super::NATIVE_SEARCH_CALL {
            // ResponseToolSearchOutputItemParam: the tools found, as their
            // full definitions. The item has no text: a search that could
            // not run, or was past what a turn's searches may write, lists
            // none and is "incomplete".
            let tools = match serde_json::from_str::<Value>(&r.content) {
                Ok(tools @ Value::Array(_)) if !r.is_error() => Some(tools),
                _ => None,
            };
            let status = if tools.is_some() { "completed" } else { "incomplete" };
            return json!({
                "type": "tool_search_output",
                "call_id": r.id,
                "execution": "client",
                "status": status,
                "tools": tools.unwrap_or_else(|| json!([])),
            });
        }
        json!({"type": "function_call_output", "call_id": r.id, "output": super::parts::openai_responses_output(r)})
    });
    Value::Array(items.collect())
}
