//! Google Gemini (Gemini API `generateContent`).
//!
//! Tools: one Tool `{"functionDeclarations": [{name, description,
//! parametersJsonSchema}]}`, in an array so it can be used as `tools` as is.
//! With `gemini_lower`, the OpenAPI-subset `parameters` is written instead
//! (see `gemini_schema`); a tool whose lowered schema has no properties gets
//! no `parameters` at all, as the API asks for functions without parameters.
//! Calls: `functionCall` parts of `candidates[0].content.parts[]`; the body may
//! be the whole response, a Content (`{"role", "parts"}`), its `parts` array,
//! or one part. A call keeps its `id` when Gemini sends one; otherwise it gets
//! `gemini_call_{candidate}_{part}` from its position, stable and unique
//! within the response.
//! A response without candidates (only `usageMetadata`, `modelVersion`,
//! `responseId`) has no calls.
//! Errors (`Error::ProviderError`): an error body `{"error": {"code",
//! "message", "status", "details"}}` (kind: `status`, then `code`; also as
//! an element of a streamed array), and a prompt blocked before any
//! candidate (`promptFeedback.blockReason` without `candidates`; kind: the
//! reason). An array of streamed responses is `Error::InvalidResponse` (pass
//! one response, or the merged content); so is any other object.
//! Results: ONE user Content with a `functionResponse` part per result, in
//! order. `response` is `{"output": ...}`, or `{"error": ...}` for a failed
//! call, holding the content parsed as JSON when it is JSON, else the text.
//! Synthesized ids are not sent back: Gemini never issued them.

use serde_json::{json, Map, Value};

use super::gemini_schema::lower;
use super::{at, keys_of, provider_error};
use super::{content_value, invalid, join, object, parameters, required_str, value_arguments};
use super::{ExportNote, ExportOptions};
use capstan_core::call::{CallRequest, ToolResult};
use capstan_core::error::Error;
use capstan_core::tool::ToolSpec;

/// Prefix of the ids capstan makes up for calls Gemini sent without one.
pub(crate) const SYNTHETIC_ID_PREFIX: &str = "gemini_call_";

pub(super) fn export(
    tools: &[ToolSpec],
    opts: &ExportOptions,
    report: &mut Vec<ExportNote>,
) -> Value {
    let decls = tools.iter().map(|tool| {
        let mut decl = Map::new();
        decl.insert("name".into(), json!(tool.name));
        decl.insert("description".into(), json!(tool.description));
        if opts.gemini_lower {
            let (lowered, notes) = lower(&parameters(tool));
            report.extend(notes.into_iter().map(|(pointer, message)| ExportNote {
                tool: tool.name.clone(),
                pointer,
                message,
            }));
            match lowered {
                // Too large to lower (the report says so): the schema as registered.
                None => {
                    decl.insert("parametersJsonSchema".into(), parameters(tool));
                }
                Some(lowered) => {
                    let has_properties = lowered
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| !p.is_empty());
                    if has_properties {
                        decl.insert("parameters".into(), lowered);
                    }
                }
            }
        } else {
            decl.insert("parametersJsonSchema".into(), parameters(tool));
        }
        Value::Object(decl)
    });
    json!([{"functionDeclarations": decls.collect::<Vec<_>>()}])
}

pub(super) fn parse(body: &Value) -> Result<Vec<CallRequest>, Error> {
    match body {
        Value::Object(obj) if obj.get("error").is_some_and(|e| !e.is_null()) => {
            Err(provider_error(obj.get("error"), &["status", "code"], "error"))
        }
        Value::Object(obj) if obj.contains_key("candidates") => {
            let candidates = super::optional_array(obj, "candidates", "")?;
            let Some(candidate) = candidates.first() else {
                return Ok(Vec::new());
            };
            let candidate = object(candidate, "candidates[0]", "candidate")?;
            match candidate.get("content") {
                // A candidate stopped for safety or length may have no content.
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(content) => parse_content(content, "candidates[0].content", 0),
            }
        }
        Value::Object(obj) if obj.contains_key("parts") => parse_content(body, "", 0),
        Value::Object(obj) if obj.contains_key("functionCall") => {
            Ok(parse_part(body, "", 0, 0)?.into_iter().collect())
        }
        Value::Object(obj) if obj.contains_key("promptFeedback") => {
            let feedback = obj.get("promptFeedback").and_then(Value::as_object);
            match feedback.and_then(|f| f.get("blockReason")).and_then(Value::as_str) {
                Some(reason) => {
                    let message = feedback
                        .and_then(|f| f.get("blockReasonMessage"))
                        .and_then(Value::as_str)
                        .unwrap_or("the prompt was blocked before any candidate");
                    Err(Error::ProviderError {
                        kind: reason.to_owned(),
                        message: message.to_owned(),
                        detail: Box::new(capstan_core::error::ProviderDetail {
                            error_type: Some(reason.to_owned()),
                            ..Default::default()
                        }),
                    })
                }
                None => Ok(Vec::new()),
            }
        }
        Value::Object(obj)
            if ["usageMetadata", "modelVersion", "responseId"]
                .iter()
                .any(|k| obj.contains_key(*k)) =>
        {
            Ok(Vec::new())
        }
        Value::Object(obj) => Err(invalid(
            "",
            format!(
                "expected a response (\"candidates\"), a content (\"parts\") or a part (\"functionCall\"), got {}",
                keys_of(obj)
            ),
        )),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if item.get("error").is_some_and(|e| !e.is_null()) {
                    return Err(provider_error(item.get("error"), &["status", "code"], "error"));
                }
                if item.get("candidates").is_some() {
                    return Err(invalid(
                        &at("", i),
                        "a streamed response in an array of parts: pass one response, or the merged content",
                    ));
                }
            }
            parse_parts(items, "", 0)
        }
        _ => Err(invalid(
            "",
            "expected a response, a content, a parts array or a part",
        )),
    }
}

fn parse_content(content: &Value, path: &str, candidate: usize) -> Result<Vec<CallRequest>, Error> {
    let content = object(content, path, "content")?;
    let parts = super::optional_array(content, "parts", path)?;
    parse_parts(parts, &join(path, "parts"), candidate)
}

fn parse_parts(parts: &[Value], path: &str, candidate: usize) -> Result<Vec<CallRequest>, Error> {
    super::calls_among(parts, path, |i, part, path| {
        parse_part(part, path, candidate, i)
    })
}

fn parse_part(
    part: &Value,
    path: &str,
    candidate: usize,
    index: usize,
) -> Result<Option<CallRequest>, Error> {
    let part = object(part, path, "part")?;
    let Some(call) = part.get("functionCall") else {
        return Ok(None);
    };
    let path = join(path, "functionCall");
    let call = object(call, &path, "functionCall")?;
    let name = required_str(call, "name", &path, "functionCall")?;
    let id = match call.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => format!("{SYNTHETIC_ID_PREFIX}{candidate}_{index}"),
    };
    Ok(Some(CallRequest {
        id,
        name,
        arguments: value_arguments(call.get("args")),
    }))
}

pub(super) fn format(results: &[ToolResult]) -> Value {
    let parts = results.iter().map(|r| {
        let key = if r.is_error() { "error" } else { "output" };
        let mut response = Map::new();
        let (text, blobs) = match r.parts {
            Some(_) => super::parts::gemini(r),
            None => (String::new(), Vec::new()),
        };
        if r.parts.is_some() {
            response.insert(key.into(), json!(text));
        } else {
            response.insert(key.into(), content_value(&r.content));
        }
        let mut f = Map::new();
        if !r.id.starts_with(SYNTHETIC_ID_PREFIX) {
            f.insert("id".into(), json!(r.id));
        }
        f.insert("name".into(), json!(r.name));
        f.insert("response".into(), Value::Object(response));
        if !blobs.is_empty() {
            f.insert("parts".into(), Value::Array(blobs));
        }
        json!({"functionResponse": f})
    });
    json!({"role": "user", "parts": parts.collect::<Vec<_>>()})
}
