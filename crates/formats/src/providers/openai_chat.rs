//! OpenAI Chat Completions.
//!
//! Tools: `{"type": "function", "function": {name, description, parameters, strict?}}`.
//! Calls: `choices[0].message.tool_calls[]`; the body may be the whole
//! completion (an object with `choices`), the assistant message (an object
//! with `role` or `tool_calls`), its `tool_calls` array, or a list of
//! messages (the calls of the last message, if it is the assistant's).
//! Tool calls of another `type` than `function` (custom tools) are skipped.
//! Errors: an error body `{"error": {"message", "type", "param", "code"}}`
//! is `Error::ProviderError` (kind: `type`, then `code`); any other object
//! is `Error::InvalidResponse`.
//! Results: one `{"role": "tool", "tool_call_id", "content"}` message each.

use serde_json::{json, Map, Value};

use super::{at, invalid, join, object, openai_parameters, required_str, text_arguments};
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
    let defs = tools.iter().map(|tool| {
        let (parameters, strict) = openai_parameters(tool, opts, report);
        let mut function = Map::new();
        function.insert("name".into(), json!(tool.name));
        function.insert("description".into(), json!(tool.description));
        function.insert("parameters".into(), parameters);
        if strict {
            function.insert("strict".into(), json!(true));
        }
        json!({"type": "function", "function": function})
    });
    Value::Array(defs.collect())
}

pub(super) fn parse(body: &Value) -> Result<Vec<CallRequest>, Error> {
    match body {
        Value::Object(obj) if obj.contains_key("choices") => {
            let choices = super::optional_array(obj, "choices", "")?;
            let Some(choice) = choices.first() else {
                return Ok(Vec::new());
            };
            let choice = object(choice, "choices[0]", "choice")?;
            match choice.get("message") {
                Some(message) => parse_message(message, "choices[0].message"),
                None => Err(invalid("choices[0]", "choice has no \"message\"")),
            }
        }
        Value::Object(obj) if obj.get("error").is_some_and(|e| !e.is_null()) => Err(
            provider_error(obj.get("error"), &["type", "code"], "error"),
        ),
        Value::Object(obj) if obj.contains_key("role") || obj.contains_key("tool_calls") => {
            parse_message(body, "")
        }
        Value::Object(obj) => Err(invalid(
            "",
            format!(
                "expected a chat completion (\"choices\") or an assistant message (\"role\", \"tool_calls\"), got {}",
                keys_of(obj)
            ),
        )),
        Value::Array(items) if items.iter().any(|m| m.get("role").is_some()) => {
            let last = items.len() - 1;
            match items[last].get("role").and_then(Value::as_str) {
                Some("assistant") => parse_message(&items[last], &at("", last)),
                _ => Ok(Vec::new()),
            }
        }
        Value::Array(calls) => parse_tool_calls(calls, ""),
        _ => Err(invalid(
            "",
            "expected a chat completion, a message, a tool_calls array or a list of messages",
        )),
    }
}

fn parse_message(message: &Value, path: &str) -> Result<Vec<CallRequest>, Error> {
    let message = object(message, path, "message")?;
    let calls = super::optional_array(message, "tool_calls", path)?;
    parse_tool_calls(calls, &join(path, "tool_calls"))
}

fn parse_tool_calls(calls: &[Value], path: &str) -> Result<Vec<CallRequest>, Error> {
    let mut out = Vec::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        let path = at(path, i);
        let call = object(call, &path, "tool call")?;
        match call.get("type").and_then(Value::as_str) {
            None | Some("function") => {}
            Some(_) => continue,
        }
        let id = required_str(call, "id", &path, "tool call")?;
        let Some(function) = call.get("function") else {
            return Err(invalid(&path, "tool call has no \"function\""));
        };
        let fpath = join(&path, "function");
        let function = object(function, &fpath, "function")?;
        let name = required_str(function, "name", &fpath, "function")?;
        out.push(CallRequest {
            id,
            name,
            arguments: text_arguments(function.get("arguments")),
        });
    }
    Ok(out)
}

pub(super) fn format(results: &[ToolResult]) -> Value {
    if results.iter().any(|r| r.parts.is_some()) {
        // A tool message takes text only: media follow in one user message.
        let (texts, user) = super::parts::openai_chat(results);
        let mut messages: Vec<Value> = results
            .iter()
            .zip(texts)
            .map(|(r, text)| json!({"role": "tool", "tool_call_id": r.id, "content": text}))
            .collect();
        messages.extend(user);
        return Value::Array(messages);
    }
    let messages = results
        .iter()
        .map(|r| json!({"role": "tool", "tool_call_id": r.id, "content": r.content}));
    Value::Array(messages.collect())
}
