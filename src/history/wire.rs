//! Where each format keeps calls and results in a conversation, and how a
//! repaired entry is written back. Pure JSON reading and writing; the rules
//! live in `mod.rs`.

use serde_json::{json, Map, Value};

use crate::providers::Format;

/// One call of a model entry: its id ("" when a Gemini call has none), its
/// tool name and the index of its block / part / tool call in the entry.
#[derive(Clone, Debug)]
pub(super) struct CallAt {
    pub id: String,
    pub name: String,
    pub sub: usize,
}

/// One result of an entry, with the index of its block / part.
#[derive(Clone, Debug)]
pub(super) struct ResultAt {
    pub id: String,
    pub name: String,
    pub sub: usize,
}

/// What an entry of the history holds.
pub(super) enum Kind {
    Calls(Vec<CallAt>),
    Results(Vec<ResultAt>),
    Other,
}

/// Gemini's documented placeholder for a function call whose signature was
/// lost (a call made by another model, or written by the client): it tells
/// the API to skip signature validation for that part.
pub(super) const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// The entries of `history` and the key they were found under, if the
/// history came as a request body (`{"messages": [...]}`, `{"input": [...]}`,
/// `{"contents": [...]}`) rather than as a bare array.
pub(super) fn entries(
    fmt: Format,
    history: &Value,
) -> Result<(&[Value], Option<&'static str>), String> {
    let key = match fmt {
        Format::OpenAiChat | Format::Anthropic => "messages",
        Format::OpenAiResponses => "input",
        Format::Gemini => "contents",
        Format::Describe | Format::Mcp => {
            return Err(format!(
                "format {} has no conversation history: use openai_chat, openai_responses, anthropic or gemini",
                fmt.name()
            ))
        }
    };
    match history {
        Value::Array(items) => Ok((items, None)),
        Value::Object(obj) => match obj.get(key) {
            Some(Value::Array(items)) => Ok((items, Some(key))),
            Some(_) => Err(format!("history: \"{key}\" must be an array")),
            None => Err(format!(
                "history must be an array of {} or an object with \"{key}\"",
                what(fmt)
            )),
        },
        _ => Err(format!("history must be an array of {}", what(fmt))),
    }
}

fn what(fmt: Format) -> &'static str {
    match fmt {
        Format::OpenAiResponses => "input items",
        Format::Gemini => "contents",
        _ => "messages",
    }
}

fn str_of<'a>(obj: &'a Map<String, Value>, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Reads what entry `entry` holds. Anything that is not a call or a result
/// (text, reasoning, another role) is `Other`; a call or a result of the
/// wrong shape (an id that is not a string) is an error naming it.
pub(super) fn kind(fmt: Format, entry: &Value, index: usize) -> Result<Kind, String> {
    let Some(obj) = entry.as_object() else {
        return Err(format!("history[{index}] is not a JSON object"));
    };
    let bad = |what: &str| format!("history[{index}]: {what}");
    let id_of = |v: Option<&Value>, what: &str| -> Result<String, String> {
        match v {
            Some(Value::String(s)) => Ok(s.clone()),
            None | Some(Value::Null) => Ok(String::new()),
            Some(_) => Err(bad(&format!("{what} must be a string"))),
        }
    };
    match fmt {
        Format::OpenAiChat => match str_of(obj, "role") {
            "assistant" => {
                let Some(Value::Array(calls)) = obj.get("tool_calls") else {
                    return Ok(Kind::Other);
                };
                let mut out = Vec::new();
                for (sub, call) in calls.iter().enumerate() {
                    let Some(call) = call.as_object() else {
                        return Err(bad(&format!("tool_calls[{sub}] is not a JSON object")));
                    };
                    let name = call
                        .get("function")
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    out.push(CallAt {
                        id: id_of(call.get("id"), &format!("tool_calls[{sub}].id"))?,
                        name: name.to_owned(),
                        sub,
                    });
                }
                Ok(if out.is_empty() {
                    Kind::Other
                } else {
                    Kind::Calls(out)
                })
            }
            "tool" => Ok(Kind::Results(vec![ResultAt {
                id: id_of(obj.get("tool_call_id"), "tool_call_id")?,
                name: String::new(),
                sub: 0,
            }])),
            _ => Ok(Kind::Other),
        },
        Format::OpenAiResponses => match str_of(obj, "type") {
            "function_call" => Ok(Kind::Calls(vec![CallAt {
                id: id_of(obj.get("call_id"), "call_id")?,
                name: str_of(obj, "name").to_owned(),
                sub: 0,
            }])),
            "function_call_output" => Ok(Kind::Results(vec![ResultAt {
                id: id_of(obj.get("call_id"), "call_id")?,
                name: String::new(),
                sub: 0,
            }])),
            _ => Ok(Kind::Other),
        },
        Format::Anthropic => {
            let Some(Value::Array(blocks)) = obj.get("content") else {
                return Ok(Kind::Other);
            };
            let role = str_of(obj, "role");
            let mut calls = Vec::new();
            let mut results = Vec::new();
            for (sub, block) in blocks.iter().enumerate() {
                let Some(block) = block.as_object() else {
                    continue;
                };
                match (role, str_of(block, "type")) {
                    ("assistant", "tool_use") => calls.push(CallAt {
                        id: id_of(block.get("id"), &format!("content[{sub}].id"))?,
                        name: str_of(block, "name").to_owned(),
                        sub,
                    }),
                    ("user", "tool_result") => results.push(ResultAt {
                        id: id_of(
                            block.get("tool_use_id"),
                            &format!("content[{sub}].tool_use_id"),
                        )?,
                        name: String::new(),
                        sub,
                    }),
                    _ => {}
                }
            }
            Ok(classify(calls, results))
        }
        Format::Gemini => {
            let Some(Value::Array(parts)) = obj.get("parts") else {
                return Ok(Kind::Other);
            };
            let role = str_of(obj, "role");
            let mut calls = Vec::new();
            let mut results = Vec::new();
            for (sub, part) in parts.iter().enumerate() {
                let Some(part) = part.as_object() else {
                    continue;
                };
                if let (true, Some(Value::Object(call))) =
                    (role == "model", part.get("functionCall"))
                {
                    calls.push(CallAt {
                        id: id_of(call.get("id"), &format!("parts[{sub}].functionCall.id"))?,
                        name: str_of(call, "name").to_owned(),
                        sub,
                    });
                }
                if let (true, Some(Value::Object(resp))) =
                    (role != "model", part.get("functionResponse"))
                {
                    results.push(ResultAt {
                        id: id_of(resp.get("id"), &format!("parts[{sub}].functionResponse.id"))?,
                        name: str_of(resp, "name").to_owned(),
                        sub,
                    });
                }
            }
            Ok(classify(calls, results))
        }
        Format::Describe | Format::Mcp => Ok(Kind::Other),
    }
}

fn classify(calls: Vec<CallAt>, results: Vec<ResultAt>) -> Kind {
    if !calls.is_empty() {
        Kind::Calls(calls)
    } else if !results.is_empty() {
        Kind::Results(results)
    } else {
        Kind::Other
    }
}

/// The blocks / parts array of an Anthropic or Gemini entry.
pub(super) fn pieces_key(fmt: Format) -> &'static str {
    if fmt == Format::Gemini {
        "parts"
    } else {
        "content"
    }
}

/// Gives the call at `sub` of model entry `entry` the id `id`.
pub(super) fn set_call_id(fmt: Format, entry: &mut Value, sub: usize, id: &str) {
    let (path, key) = match fmt {
        Format::OpenAiChat => (format!("/tool_calls/{sub}"), "id"),
        Format::OpenAiResponses => (String::new(), "call_id"),
        Format::Anthropic => (format!("/content/{sub}"), "id"),
        Format::Gemini => (format!("/parts/{sub}/functionCall"), "id"),
        Format::Describe | Format::Mcp => return,
    };
    set_key(entry, &path, key, id);
}

/// Sets `key` of the object at `path` in `value` (added when absent: a call
/// or result that had no id gets one).
fn set_key(value: &mut Value, path: &str, key: &str, id: &str) {
    if let Some(Value::Object(obj)) = value.pointer_mut(path) {
        obj.insert(key.into(), json!(id));
    }
}

/// Whether the Gemini call part at `sub` carries a thought signature.
pub(super) fn has_signature(entry: &Value, sub: usize) -> bool {
    entry
        .pointer(&format!("/parts/{sub}/thoughtSignature"))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

pub(super) fn set_signature(entry: &mut Value, sub: usize) {
    if let Some(Value::Object(part)) = entry.pointer_mut(&format!("/parts/{sub}")) {
        part.insert("thoughtSignature".into(), json!(SKIP_SIGNATURE));
    }
}

/// The result element (a chat `tool` message, a Responses output item, an
/// Anthropic `tool_result` block, a Gemini `functionResponse` part) at `sub`
/// of `entry`, answering under `id`.
pub(super) fn result_element(fmt: Format, entry: &Value, sub: usize, id: &str) -> Value {
    let mut element = match fmt {
        Format::OpenAiChat | Format::OpenAiResponses => entry.clone(),
        _ => entry
            .get(pieces_key(fmt))
            .and_then(|p| p.get(sub))
            .cloned()
            .unwrap_or(Value::Null),
    };
    let (path, key) = match fmt {
        Format::OpenAiChat => ("", "tool_call_id"),
        Format::OpenAiResponses => ("", "call_id"),
        Format::Anthropic => ("", "tool_use_id"),
        Format::Gemini if id.is_empty() => return element,
        Format::Gemini => ("/functionResponse", "id"),
        Format::Describe | Format::Mcp => return element,
    };
    set_key(&mut element, path, key, id);
    element
}

/// The text of the error result that stands in for a call that never finished.
pub(super) const NEVER_FINISHED: &str =
    "Error: this call never finished: no result was recorded for it (the conversation was interrupted or its result was lost). It was not run again.";

/// A result element saying the call never finished.
pub(super) fn missing_element(fmt: Format, id: &str, name: &str) -> Value {
    match fmt {
        Format::OpenAiChat => {
            json!({"role": "tool", "tool_call_id": id, "content": NEVER_FINISHED})
        }
        Format::OpenAiResponses => {
            json!({"type": "function_call_output", "call_id": id, "output": NEVER_FINISHED})
        }
        Format::Anthropic => json!({
            "type": "tool_result", "tool_use_id": id, "content": NEVER_FINISHED, "is_error": true
        }),
        _ => {
            let mut f = Map::new();
            if !id.is_empty() {
                f.insert("id".into(), json!(id));
            }
            f.insert("name".into(), json!(name));
            f.insert("response".into(), json!({"error": NEVER_FINISHED}));
            json!({"functionResponse": f})
        }
    }
}

/// The entries that carry `elements` (results in call order) after a model
/// turn. Anthropic and Gemini: one user entry, results first, then whatever
/// else `template` (the user entry that followed the call) held besides
/// results; the other formats: one entry per result.
pub(super) fn region_entries(
    fmt: Format,
    elements: Vec<Value>,
    template: Option<&Value>,
    others: Vec<Value>,
) -> Vec<Value> {
    match fmt {
        Format::Anthropic | Format::Gemini => {
            let key = pieces_key(fmt);
            let mut entry = template.cloned().unwrap_or_else(|| json!({"role": "user"}));
            let mut pieces = elements;
            pieces.extend(others);
            if let Value::Object(obj) = &mut entry {
                obj.insert(key.into(), Value::Array(pieces));
            }
            vec![entry]
        }
        _ => elements,
    }
}

/// `entry` without the pieces at `drop` (sorted); `None` when nothing is left.
pub(super) fn without_pieces(fmt: Format, entry: &Value, drop: &[usize]) -> Option<Value> {
    let key = pieces_key(fmt);
    let mut entry = entry.clone();
    let pieces = entry.get_mut(key)?.as_array_mut()?;
    let kept: Vec<Value> = std::mem::take(pieces)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| drop.binary_search(i).is_err())
        .map(|(_, p)| p)
        .collect();
    if kept.is_empty() {
        return None;
    }
    *pieces = kept;
    Some(entry)
}

/// The pieces of a results entry that are not results (Anthropic text or
/// image blocks after the results, Gemini text parts).
pub(super) fn other_pieces(fmt: Format, entry: &Value, results: &[usize]) -> Vec<Value> {
    entry
        .get(pieces_key(fmt))
        .and_then(Value::as_array)
        .map(|pieces| {
            pieces
                .iter()
                .enumerate()
                .filter(|(i, _)| results.binary_search(i).is_err())
                .map(|(_, p)| p.clone())
                .collect()
        })
        .unwrap_or_default()
}
