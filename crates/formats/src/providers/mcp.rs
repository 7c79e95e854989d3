//! Model Context Protocol (server side of `tools/list` and `tools/call`).
//!
//! Tools: `{name, description, inputSchema}`, plus the `title`,
//! `annotations`, `outputSchema` and `icons` the tool carries (`McpMeta`).
//! No annotation is made up from capstan's flags: none of them says what
//! MCP's hints say (requiring approval does not make a tool destructive,
//! nor does its absence make it read-only).
//! Calls: a JSON-RPC `tools/call` request, its `params` alone, or an array
//! of either. The id is the JSON-RPC id (a number becomes its decimal text);
//! a call without one gets `mcp_call_{index}`.
//! Errors: a JSON-RPC error response `{"jsonrpc": "2.0", "id", "error":
//! {"code", "message", "data"?}}`, or its bare error object `{"code",
//! "message"}`, is `Error::ProviderError` (kind: the code, e.g. `-32602`);
//! in an array, the first one found. A JSON-RPC result response, a request
//! of another method and params without `name` are `Error::InvalidResponse`.
//! Results: always an array of `CallToolResult`, one per result, in order:
//! `{"resultType": "complete", "content": [{"type": "text", "text"}],
//! "structuredContent"?, "isError"}`. `structuredContent` is added when a
//! successful result's content is a JSON object. `resultType` is required by
//! protocol 2026-07-28 and ignored as an extra field by earlier versions.
//! The host wraps each result in its JSON-RPC response; for `unknown_tool`
//! the spec prefers a JSON-RPC error (-32602), which the host may send instead.

use serde_json::{json, Map, Value};

use super::provider_error;
use super::{at, invalid, join, object, parameters, required_str, value_arguments};
use capstan_core::call::{CallRequest, ToolResult};
use capstan_core::error::Error;
use capstan_core::tool::ToolSpec;

pub(super) fn export(tools: &[ToolSpec]) -> Value {
    let defs = tools.iter().map(|tool| {
        let mut m = Map::new();
        m.insert("name".into(), json!(tool.name));
        m.insert("description".into(), json!(tool.description));
        m.insert("inputSchema".into(), parameters(tool));
        tool.mcp.write_mcp(&mut m);
        Value::Object(m)
    });
    Value::Array(defs.collect())
}

pub(super) fn parse(body: &Value) -> Result<Vec<CallRequest>, Error> {
    match body {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_one(item, &at("", i), i))
            .collect(),
        Value::Object(_) => Ok(vec![parse_one(body, "", 0)?]),
        _ => Err(invalid(
            "",
            "expected a tools/call request, its params, or an array of them",
        )),
    }
}

fn parse_one(value: &Value, path: &str, index: usize) -> Result<CallRequest, Error> {
    let obj = object(value, path, "request")?;
    if !obj.contains_key("method") {
        if let Some(error) = obj.get("error").filter(|e| !e.is_null()) {
            return Err(provider_error(Some(error), &["code"], "error"));
        }
        let bare_error = !obj.contains_key("name")
            && obj.get("code").is_some_and(Value::is_number)
            && obj.contains_key("message");
        if bare_error {
            return Err(provider_error(Some(value), &["code"], "error"));
        }
        if obj.contains_key("result") {
            return Err(invalid(
                path,
                "a JSON-RPC result response, not a tools/call request",
            ));
        }
    }
    let is_request = obj.contains_key("method") || obj.contains_key("jsonrpc");
    if !is_request {
        return parse_params(obj, path, format!("mcp_call_{index}"));
    }
    match obj.get("method").and_then(Value::as_str) {
        Some("tools/call") => {}
        Some(other) => {
            return Err(invalid(
                path,
                format!("method is \"{other}\", not \"tools/call\""),
            ))
        }
        None => return Err(invalid(path, "request has no \"method\"")),
    }
    let id = match obj.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        None | Some(Value::Null) => format!("mcp_call_{index}"),
        Some(_) => {
            return Err(invalid(
                path,
                "request: \"id\" must be a string or a number",
            ))
        }
    };
    let ppath = join(path, "params");
    match obj.get("params") {
        Some(params) => parse_params(object(params, &ppath, "params")?, &ppath, id),
        None => Err(invalid(path, "tools/call request has no \"params\"")),
    }
}

fn parse_params(params: &Map<String, Value>, path: &str, id: String) -> Result<CallRequest, Error> {
    let name = required_str(params, "name", path, "tools/call params")?;
    Ok(CallRequest {
        id,
        name,
        arguments: value_arguments(params.get("arguments")),
    })
}

pub(super) fn format(results: &[ToolResult]) -> Value {
    let items = results.iter().map(|r| {
        let mut m = Map::new();
        m.insert("resultType".into(), json!("complete"));
        if super::parts::mcp(r, &mut m) {
            // Blocks and structuredContent as the tool gave them.
        } else {
            m.insert(
                "content".into(),
                json!([{"type": "text", "text": r.content}]),
            );
        }
        if !r.is_error() && r.parts.is_none() {
            if let Ok(structured @ Value::Object(_)) = serde_json::from_str::<Value>(&r.content) {
                m.insert("structuredContent".into(), structured);
            }
        }
        m.insert("isError".into(), json!(r.is_error()));
        Value::Object(m)
    });
    Value::Array(items.collect())
}
