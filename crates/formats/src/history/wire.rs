//! Where each format keeps calls and results in a conversation, and how a
//! repaired entry is written back. Pure JSON reading and writing; the rules
//! live in `mod.rs`.

use serde_json::{json, Map, Value};

use super::raw::{self, Step};
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
    /// The result says the call failed (see [`is_error`]).
    pub error: bool,
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
                error: says_error(obj.get("content")),
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
                error: says_error(obj.get("output")),
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
                        error: block.get("is_error") == Some(&Value::Bool(true)),
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
                    let response = resp.get("response");
                    results.push(ResultAt {
                        id: id_of(resp.get("id"), &format!("parts[{sub}].functionResponse.id"))?,
                        name: str_of(resp, "name").to_owned(),
                        sub,
                        error: response.and_then(|r| r.get("error")).is_some()
                            && response.and_then(|r| r.get("output")).is_none(),
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

/// Where the id of the call at `sub` of a model entry is: the array of the
/// entry holding the call (none for a Responses item, which is the call),
/// the path in that array's element `sub`, and the key.
pub(super) fn call_id_at(
    fmt: Format,
) -> (Option<&'static str>, &'static [Step<'static>], &'static str) {
    match fmt {
        Format::OpenAiChat => (Some("tool_calls"), &[], "id"),
        Format::Anthropic => (Some("content"), &[], "id"),
        Format::Gemini => (Some("parts"), &[Step::Key("functionCall")], "id"),
        _ => (None, &[], "call_id"),
    }
}

/// `entry` (JSON text) with the calls at `renames` (sub, new id) renamed
/// in one pass.
pub(super) fn rename_calls(fmt: Format, entry: &str, renames: &[(usize, &str)]) -> String {
    let (array, path, key) = call_id_at(fmt);
    let Some(array) = array else {
        return match renames.last() {
            Some((_, id)) => raw::set_member(entry, key, &raw::string(id)),
            None => entry.to_owned(),
        };
    };
    let edits: Vec<raw::ElementEdit> = renames
        .iter()
        .map(|(sub, id)| raw::ElementEdit {
            index: *sub,
            path,
            key,
            value: raw::string(id),
        })
        .collect();
    raw::set_in_elements(entry, array, &edits)
}

/// Where the id of a result element (a Chat `tool` message, a Responses
/// output item, an Anthropic block, a Gemini part) is.
pub(super) fn result_id_at(fmt: Format) -> (Vec<Step<'static>>, &'static str) {
    match fmt {
        Format::OpenAiChat => (Vec::new(), "tool_call_id"),
        Format::Anthropic => (Vec::new(), "tool_use_id"),
        Format::Gemini => (vec![Step::Key("functionResponse")], "id"),
        _ => (Vec::new(), "call_id"),
    }
}

/// Whether a Chat or Responses result's content says the call failed (these
/// formats have no error flag): its text starts with "Error" in any case,
/// as error results (and the "never finished" stand-in) do.
fn says_error(content: Option<&Value>) -> bool {
    let text = match content {
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Array(parts)) => parts
            .first()
            .and_then(|p| p.get("text"))
            .and_then(Value::as_str)
            .unwrap_or(""),
        _ => "",
    };
    text.trim_start()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("error"))
}

/// Whether the Gemini call part at `sub` carries a thought signature.
pub(super) fn has_signature(entry: &Value, sub: usize) -> bool {
    entry
        .pointer(&format!("/parts/{sub}/thoughtSignature"))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
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
