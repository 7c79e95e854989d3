//! The model's own turn, taken out of its response as the next request needs
//! it: what `run_turn` returns before the results when asked for the whole
//! turn (`CAPSTAN_EXEC_WHOLE_TURN`).
//!
//! Per format (each provider documents "append the response's turn as is"):
//! - OpenAI Chat: `choices[0].message` (or the message given), an
//!   `assistant` message; `audio` becomes `{"id"}`, the only part of it a
//!   request takes.
//! - OpenAI Responses: every item of `output`, in order: `reasoning` items
//!   (with their `encrypted_content`) stay before the `function_call`s.
//! - Anthropic: `{"role": "assistant", "content": <the response's blocks>}`:
//!   `thinking` blocks with their `signature` and `redacted_thinking` blocks
//!   stay before the `tool_use` blocks, untouched.
//! - Gemini: `candidates[0].content`, a `model` content: every part keeps
//!   its `thoughtSignature` in its position (with parallel calls only the
//!   first call part carries one).
//!
//! Nothing is changed but the ids of calls that `run_turn` answers under a
//! new id (see [`super::ids::unique`]): those calls are renamed here the same
//! way, so each result finds its call. Strings (signatures, encrypted
//! content) are written back exactly as they came.

use serde_json::{json, Value};

use super::wire::{self, Kind};
use crate::call::CallRequest;
use crate::error::Error;
use crate::providers::{self, Format};

/// The entries of the model's turn in `response` (format `fmt`), with the
/// calls of `calls` (parsed from it, in order) renamed to `ids` where those
/// differ. INVALID_ARGUMENT when `fmt` has no conversation, or `response` is
/// only a fragment of a turn (a bare block, part or `tool_calls` array).
pub(crate) fn model_turn(
    fmt: Format,
    response: &Value,
    calls: &[CallRequest],
    ids: &[String],
) -> Result<Vec<Value>, Error> {
    let mut entries = extract(fmt, response).map_err(Error::InvalidArgument)?;
    let mut next = 0;
    for (e, entry) in entries.iter_mut().enumerate() {
        let Ok(Kind::Calls(found)) = wire::kind(fmt, entry, e) else {
            continue;
        };
        for call in found {
            let Some(parsed) = calls.get(next) else {
                break;
            };
            // Gemini calls without an id were given a synthetic one when parsed.
            let same_id = call.id == parsed.id
                || (fmt == Format::Gemini
                    && call.id.is_empty()
                    && parsed.id.starts_with(providers::GEMINI_SYNTHETIC_ID_PREFIX));
            if !(same_id && call.name == parsed.name) {
                continue;
            }
            if let Some(id) = ids.get(next).filter(|id| **id != parsed.id) {
                wire::set_call_id(fmt, entry, call.sub, id);
            }
            next += 1;
        }
    }
    Ok(entries)
}

fn extract(fmt: Format, response: &Value) -> Result<Vec<Value>, String> {
    let fragment = |what: &str| {
        format!(
            "CAPSTAN_EXEC_WHOLE_TURN needs the whole {} response (or its {what}) to return the model's turn",
            fmt.name()
        )
    };
    match fmt {
        Format::OpenAiChat => {
            let message = match response {
                Value::Object(obj) if obj.contains_key("choices") => {
                    response.pointer("/choices/0/message")
                }
                Value::Object(obj)
                    if obj.contains_key("role") || obj.contains_key("tool_calls") =>
                {
                    Some(response)
                }
                _ => None,
            };
            let Some(Value::Object(message)) = message else {
                return Err(fragment("assistant message"));
            };
            let mut message = message.clone();
            message.insert("role".into(), json!("assistant"));
            if let Some(Value::Object(audio)) = message.get("audio") {
                let id = audio.get("id").cloned().unwrap_or(Value::Null);
                message.insert("audio".into(), json!({ "id": id }));
            }
            Ok(vec![Value::Object(message)])
        }
        Format::OpenAiResponses => {
            let response = match response {
                Value::Object(obj)
                    if obj
                        .get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.starts_with("response.")) =>
                {
                    obj.get("response").unwrap_or(response)
                }
                _ => response,
            };
            match response.get("output") {
                Some(Value::Array(items)) => Ok(items.clone()),
                _ => Err(fragment("Response object with \"output\"")),
            }
        }
        Format::Anthropic => match response {
            Value::Object(obj) if obj.contains_key("content") => {
                let content = obj.get("content").cloned().unwrap_or(Value::Null);
                Ok(vec![json!({"role": "assistant", "content": content})])
            }
            _ => Err(fragment("message with \"content\"")),
        },
        Format::Gemini => {
            let content = match response {
                Value::Object(obj) if obj.contains_key("candidates") => {
                    response.pointer("/candidates/0/content")
                }
                Value::Object(obj) if obj.contains_key("parts") => Some(response),
                _ => None,
            };
            match content {
                Some(Value::Object(content)) => {
                    let mut content = content.clone();
                    content.insert("role".into(), json!("model"));
                    Ok(vec![Value::Object(content)])
                }
                // A candidate stopped for safety or length may have no content.
                None if response.get("candidates").is_some() => Ok(Vec::new()),
                _ => Err(fragment("Content with \"parts\"")),
            }
        }
        Format::Describe | Format::Mcp => Err(format!(
            "CAPSTAN_EXEC_WHOLE_TURN: format {} has no conversation to return the model's turn for",
            fmt.name()
        )),
    }
}
