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
//! way, so each result finds its call. The turn is cut from the response's
//! text: strings (signatures, encrypted content), numbers (`1.10`, `1E2`,
//! integers past 64 bits), key order and spacing come back byte for byte,
//! and a renamed id is spliced in alone.

use serde_json::{json, Value};

use super::raw::{self, Step};
use super::wire::{self, Kind};
use crate::providers::{self, Format};
use capstan_core::call::CallRequest;
use capstan_core::error::Error;

/// The entries of the model's turn in `response` (format `fmt`; `text` its
/// JSON text, `response` as read), as JSON texts cut from `text`: byte for
/// byte but for the calls of `calls` (parsed from it, in order) renamed to
/// `ids` where those differ, each by splicing its id alone. INVALID_ARGUMENT
/// when `fmt` has no conversation, or `response` is only a fragment of a
/// turn (a bare block, part or `tool_calls` array).
pub(crate) fn model_turn(
    fmt: Format,
    text: &str,
    response: &Value,
    calls: &[CallRequest],
    ids: &[String],
) -> Result<Vec<String>, Error> {
    let entries = extract(fmt, response).map_err(Error::InvalidArgument)?;
    // A body serde_json could not read whole (see providers::lenient) has no
    // text to cut from: its entries are written from what was read.
    let mut texts = extract_raw(fmt, text.trim())
        .filter(|t| t.len() == entries.len())
        .unwrap_or_else(|| entries.iter().map(Value::to_string).collect());
    let mut next = 0;
    for (e, (entry, text)) in entries.iter().zip(texts.iter_mut()).enumerate() {
        let Ok(Kind::Calls(found)) = wire::kind(fmt, entry, e) else {
            continue;
        };
        let mut renames: Vec<(usize, &str)> = Vec::new();
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
                renames.push((call.sub, id));
            }
            next += 1;
        }
        if !renames.is_empty() {
            *text = wire::rename_calls(fmt, text, &renames);
        }
    }
    Ok(texts)
}

/// [`extract`] on the response's text: the same entries as slices of it,
/// with only what `extract` changes spliced in. `None` when the text cannot
/// be cut (then the caller writes the entries `extract` read).
fn extract_raw(fmt: Format, text: &str) -> Option<Vec<String>> {
    let has = |t: &str, key: &str| raw::member(t, key).is_some();
    match fmt {
        Format::OpenAiChat => {
            let message = if has(text, "choices") {
                raw::at(
                    text,
                    &[Step::Key("choices"), Step::Index(0), Step::Key("message")],
                )?
            } else {
                text
            };
            let mut message = message.to_owned();
            if raw::member(&message, "role") != Some("\"assistant\"") {
                message = raw::set_member(&message, "role", "\"assistant\"");
            }
            if let Some(audio) = raw::member(&message, "audio").filter(|a| a.starts_with('{')) {
                let id = raw::member(audio, "id").unwrap_or("null");
                let reduced = format!("{{\"id\":{id}}}");
                if raw::members(audio).is_some_and(|m| m.len() != 1 || m[0].0 != "id") {
                    message = raw::set_member(&message, "audio", &reduced);
                }
            }
            Some(vec![message])
        }
        Format::OpenAiResponses => {
            let wrapped = raw::member(text, "type")
                .and_then(|t| serde_json::from_str::<String>(t).ok())
                .is_some_and(|t| t.starts_with("response."));
            let response = if wrapped {
                raw::member(text, "response").unwrap_or(text)
            } else {
                text
            };
            let output = raw::member(response, "output")?;
            Some(
                raw::elements(output)?
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            )
        }
        Format::Anthropic => {
            let content = raw::member(text, "content")?;
            Some(vec![format!(
                "{{\"role\":\"assistant\",\"content\":{content}}}"
            )])
        }
        Format::Gemini => {
            let content = if has(text, "candidates") {
                match raw::at(
                    text,
                    &[
                        Step::Key("candidates"),
                        Step::Index(0),
                        Step::Key("content"),
                    ],
                ) {
                    Some(c) => c,
                    None => return Some(Vec::new()),
                }
            } else {
                text
            };
            if raw::member(content, "role") == Some("\"model\"") {
                Some(vec![content.to_owned()])
            } else {
                Some(vec![raw::set_member(content, "role", "\"model\"")])
            }
        }
        Format::Describe | Format::Mcp => None,
    }
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
