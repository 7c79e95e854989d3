//! Calls in, results out: the normalized JSON shapes every other module speaks.
//!
//! Call: `{"id": "...", "name": "...", "arguments": {...}}`; `arguments` may be
//! a string holding a JSON object (as OpenAI sends it) and may be absent (`{}`).
//! Result: `{"id", "name", "content", "is_error", "outcome", "duration_us"}`,
//! plus `"parts"` (MCP content blocks) and `"structured_content"` when the
//! tool returned content parts (`crate::parts`); `content` then holds
//! `Parts::text`.

use serde_json::{Map, Value};

use crate::bulk;
use crate::error::Error;
use crate::parts::Parts;
use crate::wire;

/// How a call ended. Every call submitted gets exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Ok,
    ToolError,
    InvalidArguments,
    UnknownTool,
    Timeout,
    Cancelled,
    Denied,
}

/// cbindgen:ignore
impl Outcome {
    pub const ALL: [Outcome; 7] = [
        Outcome::Ok,
        Outcome::ToolError,
        Outcome::InvalidArguments,
        Outcome::UnknownTool,
        Outcome::Timeout,
        Outcome::Cancelled,
        Outcome::Denied,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::InvalidArguments => "invalid_arguments",
            Outcome::UnknownTool => "unknown_tool",
            Outcome::Timeout => "timeout",
            Outcome::Cancelled => "cancelled",
            Outcome::Denied => "denied",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }

    pub fn is_error(self) -> bool {
        self != Outcome::Ok
    }
}

/// The arguments of a call as the model sent them.
#[derive(Clone, Debug, PartialEq)]
pub enum Arguments {
    /// A JSON value (should be an object; validation says so if not).
    Value(Value),
    /// A string that was meant to hold JSON (OpenAI style); parsed at execution,
    /// so a malformed one becomes an `invalid_arguments` result, never `{}`.
    Text(String),
}

impl Arguments {
    /// The arguments as a JSON value, or the parse error text for the model.
    pub fn into_value(self) -> Result<Value, String> {
        match self {
            Arguments::Value(v) => Ok(v),
            Arguments::Text(s) if s.trim().is_empty() => Ok(Value::Object(Map::new())),
            Arguments::Text(s) => {
                serde_json::from_str(&s).map_err(|e| format!("arguments are not valid JSON: {e}"))
            }
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Arguments::Value(v) => v.clone(),
            Arguments::Text(s) => Value::String(s.clone()),
        }
    }
}

/// One tool call requested by a model, in capstan's normalized form.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRequest {
    pub id: String,
    pub name: String,
    pub arguments: Arguments,
}

impl CallRequest {
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        CallRequest {
            id: id.into(),
            name: name.into(),
            arguments: Arguments::Value(arguments),
        }
    }

    /// Reads one normalized call object. `index` names it in error messages.
    pub fn from_json(value: Value, index: usize) -> Result<CallRequest, Error> {
        let Value::Object(mut obj) = value else {
            return Err(Error::InvalidCalls(format!(
                "call {index} is not a JSON object"
            )));
        };
        WireCall {
            id: obj.remove("id"),
            name: obj.remove("name"),
            arguments: obj.remove("arguments"),
            function: obj
                .contains_key("function")
                .then_some(serde::de::IgnoredAny),
            function_call: obj
                .contains_key("functionCall")
                .then_some(serde::de::IgnoredAny),
            input: obj.contains_key("input").then_some(serde::de::IgnoredAny),
            args: obj.contains_key("args").then_some(serde::de::IgnoredAny),
        }
        .into_request(index)
    }

    /// Reads one call object or an array of them.
    pub fn list_from_json(value: Value) -> Result<Vec<CallRequest>, Error> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| CallRequest::from_json(v, i))
                .collect(),
            v @ Value::Object(_) => Ok(vec![CallRequest::from_json(v, 0)?]),
            _ => Err(Error::InvalidCalls(
                "calls must be a call object or an array of call objects".into(),
            )),
        }
    }

    /// Reads calls from JSON text: one call object or an array of them.
    pub fn list_from_str(text: &str) -> Result<Vec<CallRequest>, Error> {
        let bad = |e: serde_json::Error| {
            if e.is_data() {
                Error::InvalidCalls(format!("calls are not of the call shape: {e}"))
            } else {
                Error::InvalidCalls(format!("calls are not valid JSON: {e}"))
            }
        };
        match text.trim_start().as_bytes().first() {
            Some(b'[') => {
                let read = bulk::read_in_two::<WireCall>(text)
                    .map(Ok)
                    .unwrap_or_else(|| serde_json::from_str::<Vec<WireCall>>(text));
                if let Ok(calls) = read {
                    return calls
                        .into_iter()
                        .enumerate()
                        .map(|(i, c)| c.into_request(i))
                        .collect();
                }
                // Again, slowly, to say which call is wrong.
                let calls: Vec<Value> = serde_json::from_str(text).map_err(bad)?;
                // Typed per element, so an error names the call's index.
                calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        Value::Object(_) => serde_json::from_value::<WireCall>(v)
                            .map_err(|e| Error::InvalidCalls(format!("call {i}: {e}")))?
                            .into_request(i),
                        _ => Err(Error::InvalidCalls(format!(
                            "call {i} is not a JSON object"
                        ))),
                    })
                    .collect()
            }
            Some(b'{') => {
                let call: WireCall = serde_json::from_str(text).map_err(bad)?;
                Ok(vec![call.into_request(0)?])
            }
            _ => {
                // Not an object or array: say whether it is JSON at all.
                let _: Value = serde_json::from_str(text).map_err(bad)?;
                Err(Error::InvalidCalls(
                    "calls must be a call object or an array of call objects".into(),
                ))
            }
        }
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), Value::String(self.id.clone()));
        m.insert("name".into(), Value::String(self.name.clone()));
        m.insert("arguments".into(), self.arguments.to_json());
        Value::Object(m)
    }
}

/// The result of one call: the text the model will read and how it ended.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    pub id: String,
    pub name: String,
    pub content: String,
    pub outcome: Outcome,
    pub duration_us: u64,
    /// The content parts the tool returned (`ContentKind::Parts`), if any:
    /// `content` is then their text (`Parts::text`). Shared, not copied,
    /// when a result is cloned.
    pub parts: Option<std::sync::Arc<Parts>>,
    /// The tool asked its caller for input instead of answering
    /// (`Call::require_input`): `content` says what, for anyone else.
    pub input_required: Option<std::sync::Arc<crate::input::InputRequired>>,
}

impl ToolResult {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        outcome: Outcome,
        content: impl Into<String>,
    ) -> Self {
        ToolResult {
            id: id.into(),
            name: name.into(),
            content: content.into(),
            outcome,
            duration_us: 0,
            parts: None,
            input_required: None,
        }
    }

    pub fn is_error(&self) -> bool {
        self.outcome.is_error()
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), Value::String(self.id.clone()));
        m.insert("name".into(), Value::String(self.name.clone()));
        m.insert("content".into(), Value::String(self.content.clone()));
        m.insert("is_error".into(), Value::Bool(self.is_error()));
        m.insert(
            "outcome".into(),
            Value::String(self.outcome.as_str().into()),
        );
        m.insert("duration_us".into(), Value::from(self.duration_us));
        if let Some(parts) = &self.parts {
            m.insert("parts".into(), parts.blocks_json());
            if let Some(s) = parts.structured() {
                m.insert("structured_content".into(), s.clone());
            }
        }
        Value::Object(m)
    }

    /// Reads one normalized result object (as `to_json` writes it). `is_error`
    /// wins over a missing `outcome`; a missing `outcome` with `is_error: true`
    /// is read as `tool_error`.
    pub fn from_json(value: &Value, index: usize) -> Result<ToolResult, Error> {
        let obj = value
            .as_object()
            .ok_or_else(|| Error::InvalidResults(format!("result {index} is not a JSON object")))?;
        let text = |key: &str| -> Result<String, Error> {
            match obj.get(key) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(Error::InvalidResults(format!(
                    "result {index}: \"{key}\" must be a string"
                ))),
                None => Err(Error::InvalidResults(format!(
                    "result {index}: missing \"{key}\""
                ))),
            }
        };
        let id = text("id")?;
        let name = text("name")?;
        let content = match obj.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let is_error = obj.get("is_error").and_then(Value::as_bool);
        let outcome = match obj.get("outcome") {
            Some(Value::String(s)) => Outcome::parse(s).ok_or_else(|| {
                Error::InvalidResults(format!("result {index}: unknown outcome \"{s}\""))
            })?,
            _ if is_error == Some(true) => Outcome::ToolError,
            _ => Outcome::Ok,
        };
        let duration_us = obj.get("duration_us").and_then(Value::as_u64).unwrap_or(0);
        let parts = match (obj.get("parts"), obj.get("structured_content")) {
            (None | Some(Value::Null), None | Some(Value::Null)) => None,
            (blocks, structured) => {
                let mut whole = Map::new();
                whole.insert("content".into(), blocks.cloned().unwrap_or(Value::Null));
                whole.insert(
                    "structuredContent".into(),
                    structured.cloned().unwrap_or(Value::Null),
                );
                // No size bound here: the registry that ran the tool applied its own.
                let parts = Parts::from_value(Value::Object(whole), u64::MAX).map_err(|e| {
                    let message = match e {
                        Error::InvalidContent(m) => m,
                        other => other.to_string(),
                    };
                    Error::InvalidResults(format!("result {index}: {message}"))
                })?;
                Some(std::sync::Arc::new(parts))
            }
        };
        // Content left empty beside parts reads as the parts' text.
        let content = match &parts {
            Some(p) if content.is_empty() => p.text(),
            _ => content,
        };
        Ok(ToolResult {
            id,
            name,
            content,
            outcome,
            duration_us,
            parts,
            input_required: None,
        })
    }

    /// Reads a result object or an array of them.
    pub fn list_from_json(value: &Value) -> Result<Vec<ToolResult>, Error> {
        match value {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| ToolResult::from_json(v, i))
                .collect(),
            v @ Value::Object(_) => Ok(vec![ToolResult::from_json(v, 0)?]),
            _ => Err(Error::InvalidResults(
                "results must be a result object or an array of them".into(),
            )),
        }
    }
}

/// Serializes results as the JSON array capstan hands out.
pub fn results_to_json(results: &[ToolResult]) -> Value {
    Value::Array(results.iter().map(ToolResult::to_json).collect())
}

/// Writes results as the JSON array capstan hands out (the same text as
/// `results_to_json(..).to_string()`), straight into one buffer, by hand
/// (`crate::wire`): the keys as literal bytes, strings copied when they
/// need no escaping.
pub fn results_to_string(results: &[ToolResult]) -> String {
    let size: usize = results.iter().map(result_size).sum();
    let mut out = Vec::with_capacity(size + 2);
    out.push(b'[');
    wire::write_items(&mut out, results, write_result);
    out.push(b']');
    wire::into_string(out)
}

/// `results_to_string`, for results no longer needed: a big batch's are
/// written (and freed) in two halves on two threads (see `bulk`).
pub fn results_into_string(results: Vec<ToolResult>) -> String {
    if results.len() < bulk::SPLIT_RESULTS || !bulk::two_threads() {
        return results_to_string(&results);
    }
    bulk::write_in_two(results, result_size, write_result)
}

/// About how long a result's text is (the buffer is sized by it).
fn result_size(r: &ToolResult) -> usize {
    r.id.len() + r.name.len() + r.content.len() + r.content.len() / 8 + 96
}

/// One result object, keys in `ToolResult::to_json`'s order.
fn write_result(out: &mut Vec<u8>, r: &ToolResult) {
    out.extend_from_slice(b"{\"id\":");
    wire::write_str(out, &r.id);
    out.extend_from_slice(b",\"name\":");
    wire::write_str(out, &r.name);
    out.extend_from_slice(b",\"content\":");
    wire::write_str(out, &r.content);
    out.extend_from_slice(if r.is_error() {
        b",\"is_error\":true,\"outcome\":"
    } else {
        b",\"is_error\":false,\"outcome\":"
    });
    wire::write_str(out, r.outcome.as_str());
    out.extend_from_slice(b",\"duration_us\":");
    wire::write_u64(out, r.duration_us);
    if let Some(parts) = &r.parts {
        out.extend_from_slice(b",\"parts\":");
        wire::write_value(out, &parts.blocks_json());
        if let Some(s) = parts.structured() {
            out.extend_from_slice(b",\"structured_content\":");
            wire::write_value(out, s);
        }
    }
    out.push(b'}');
}

/// The wire shape of a call as hosts and providers send it.
#[derive(serde::Deserialize)]
struct WireCall {
    #[serde(default)]
    id: Option<Value>,
    name: Option<Value>,
    #[serde(default)]
    arguments: Option<Value>,
    // Keys of the providers' own call shapes, read only to say what to do
    // when a provider's call is given here as it came (issue 49).
    #[serde(default)]
    function: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "functionCall")]
    function_call: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    input: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    args: Option<serde::de::IgnoredAny>,
}

/// What a call in a provider's own shape should go to instead.
const PROVIDER_SHAPE_HINT: &str = "capstan's calls are {\"id\", \"name\", \"arguments\"}: \
     pass a provider's response to capstan_registry_run_turn (or its calls to \
     capstan_format_parse_calls), which read its shape";

impl WireCall {
    fn into_request(self, index: usize) -> Result<CallRequest, Error> {
        let name = match self.name {
            Some(Value::String(s)) => s,
            Some(_) => {
                return Err(Error::InvalidCalls(format!(
                    "call {index}: \"name\" must be a string"
                )))
            }
            None => {
                let shape = if self.function.is_some() {
                    " (it looks like an OpenAI Chat tool call, {\"function\": {...}})"
                } else if self.function_call.is_some() {
                    " (it looks like a Gemini part, {\"functionCall\": {...}})"
                } else {
                    ""
                };
                let hint = if shape.is_empty() {
                    String::new()
                } else {
                    format!("; {PROVIDER_SHAPE_HINT}")
                };
                return Err(Error::InvalidCalls(format!(
                    "call {index}: missing \"name\"{shape}{hint}"
                )));
            }
        };
        // A provider's arguments key, without capstan's: the call would run
        // with no arguments; refuse it, saying which key was meant.
        if self.arguments.is_none() {
            let found = if self.input.is_some() {
                Some(("input", "an Anthropic tool_use block"))
            } else if self.args.is_some() {
                Some(("args", "a Gemini functionCall"))
            } else {
                None
            };
            if let Some((key, shape)) = found {
                return Err(Error::InvalidCalls(format!(
                    "call {index}: \"{key}\" without \"arguments\" (it looks like {shape}); {PROVIDER_SHAPE_HINT}"
                )));
            }
        }
        let id = match self.id {
            Some(Value::String(s)) => s,
            Some(Value::Number(n)) => n.to_string(),
            None | Some(Value::Null) => format!("call_{index}"),
            Some(_) => {
                return Err(Error::InvalidCalls(format!(
                    "call {index}: \"id\" must be a string"
                )))
            }
        };
        let arguments = match self.arguments {
            None | Some(Value::Null) => Arguments::Value(Value::Object(Map::new())),
            Some(Value::String(s)) => Arguments::Text(s),
            Some(v) => Arguments::Value(v),
        };
        Ok(CallRequest {
            id,
            name,
            arguments,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_text_matches_the_tree_form() {
        let mut r = ToolResult::new("c\"1", "t", Outcome::ToolError, "ünï\n\"x\"");
        r.duration_us = 42;
        let ok = ToolResult::new("2", "t", Outcome::Ok, "{}");
        let both = [r, ok];
        assert_eq!(results_to_string(&both), results_to_json(&both).to_string());
        assert_eq!(results_to_string(&[]), "[]");
        // Every outcome, a big duration, escapes at every place, parts with
        // and without structured content: the hand-written text is serde's.
        let mut all: Vec<ToolResult> = Outcome::ALL
            .into_iter()
            .enumerate()
            .map(|(i, o)| {
                let mut r = ToolResult::new(
                    format!("id\\{i}\u{1}"),
                    format!("tool_{i}"),
                    o,
                    "line\n\ttab \"q\" 🙂 and a longer tail past eight bytes",
                );
                r.duration_us = u64::MAX - i as u64;
                r
            })
            .collect();
        let blocks = json!([{"type": "text", "text": "a\"b"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]);
        let mut with_parts = ToolResult::new("p", "t", Outcome::Ok, "");
        with_parts.parts = Some(std::sync::Arc::new(
            Parts::from_value(
                json!({"content": blocks.clone(), "structuredContent": {"k": [1, "v"]}}),
                u64::MAX,
            )
            .unwrap(),
        ));
        all.push(with_parts);
        let mut blocks_only = ToolResult::new("q", "t", Outcome::ToolError, "x");
        blocks_only.parts = Some(std::sync::Arc::new(
            Parts::from_value(blocks, u64::MAX).unwrap(),
        ));
        all.push(blocks_only);
        let text = results_to_string(&all);
        assert_eq!(text, results_to_json(&all).to_string());
        assert!(
            text.contains("\"structured_content\":{\"k\":[1,\"v\"]}"),
            "{text}"
        );
    }

    /// Big enough to be read and written in two halves (`bulk`): strings
    /// holding commas and brackets, nested arguments, ids left out (named
    /// by their place in the whole batch), numbers as ids, arguments as text.
    fn big_calls(n: usize, bad_name_at: Option<usize>) -> String {
        let calls: Vec<String> = (0..n)
            .map(|i| match i % 4 {
                _ if Some(i) == bad_name_at => format!(r#"{{"id":"c{i}","name":7}}"#),
                0 => format!(r#"{{"id":"c{i},]","name":"t","arguments":{{"q":"[{{,\"}}]"}}}}"#),
                1 => {
                    format!(r#"{{"name":"t{i}","arguments":{{"d":[[{{"x":[1,{{"y":null}}]}}]]}}}}"#)
                }
                2 => format!(r#"{{"id":{i},"name":"t","arguments":"{{\"a\":1}}"}}"#),
                _ => format!(r#" {{ "name" : "t" , "id" : "ünï{i}" }} "#),
            })
            .collect();
        format!(" [{}]\n", calls.join(","))
    }

    #[test]
    fn a_big_batch_reads_and_writes_as_a_small_one() {
        let text = big_calls(2_000, None);
        assert!(text.len() >= bulk::SPLIT_CALLS_BYTES);
        let values: Vec<Value> = serde_json::from_str(&text).unwrap();
        let one_by_one: Vec<CallRequest> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut c = CallRequest::list_from_str(&v.to_string())
                    .unwrap()
                    .remove(0);
                if v.get("id").is_none() {
                    c.id = format!("call_{i}");
                }
                c
            })
            .collect();
        let calls = CallRequest::list_from_str(&text).unwrap();
        assert!(calls == one_by_one, "the same calls as read one by one");
        // A bad call in either half: the error names its place in the whole.
        for bad in [12, 1_988] {
            match CallRequest::list_from_str(&big_calls(2_000, Some(bad))) {
                Err(Error::InvalidCalls(m)) => {
                    assert!(
                        m.contains(&format!("call {bad}: \"name\" must be a string")),
                        "{m}"
                    )
                }
                other => panic!("{other:?}"),
            }
        }
        let results: Vec<ToolResult> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                ToolResult::new(&c.id, &c.name, Outcome::ALL[i % 7], format!("\"{i}\"\n"))
            })
            .collect();
        assert!(results.len() >= bulk::SPLIT_RESULTS);
        let whole = results_to_string(&results);
        assert!(
            results_into_string(results) == whole,
            "the same text as written whole"
        );
    }

    #[test]
    fn calls_parse_from_one_object_or_an_array() {
        let one = CallRequest::list_from_str(r#" {"name":"a","id":7,"arguments":"{}","extra":1}"#)
            .unwrap();
        assert_eq!(one[0].id, "7");
        assert_eq!(one[0].arguments, Arguments::Text("{}".into()));
        let many = CallRequest::list_from_str(r#"[{"name":"a"},{"name":"b","arguments":{"x":1}}]"#)
            .unwrap();
        assert_eq!(many[0].id, "call_0");
        assert_eq!(many[1].arguments, Arguments::Value(json!({"x": 1})));
    }

    #[test]
    fn malformed_calls_say_which_and_why() {
        let err = |t: &str| match CallRequest::list_from_str(t) {
            Err(Error::InvalidCalls(m)) => m,
            other => panic!("{t}: {other:?}"),
        };
        assert!(err("[{\"name\":\"a\"},{\"id\":\"x\"}]").contains("call 1: missing \"name\""));
        assert!(err("[{\"name\":\"a\"}, 3]").contains("call 1 is not a JSON object"));
        assert!(err("[{\"name\":5}]").contains("\"name\" must be a string"));
        assert!(err("{\"name\":\"a\",\"id\":[1]}").contains("\"id\" must be a string"));
        assert!(err("{\"name\":").contains("not valid JSON"));
        assert!(err("42").contains("call object or an array"));
        assert!(err("").contains("not valid JSON"));
    }

    #[test]
    fn a_provider_shaped_call_says_where_it_belongs() {
        let err = |t: &str| match CallRequest::list_from_str(t) {
            Err(Error::InvalidCalls(m)) => m,
            other => panic!("{t}: {other:?}"),
        };
        let chat = err(r#"{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}}"#);
        assert!(
            chat.contains("call 0: missing \"name\" (it looks like an OpenAI Chat tool call"),
            "{chat}"
        );
        assert!(chat.contains("capstan_registry_run_turn"), "{chat}");
        let anthropic = err(r#"{"type":"tool_use","id":"t1","name":"a","input":{"x":1}}"#);
        assert!(
            anthropic.contains(
                "\"input\" without \"arguments\" (it looks like an Anthropic tool_use block)"
            ),
            "{anthropic}"
        );
        let gemini = err(r#"[{"name":"a","args":{"x":1}}]"#);
        assert!(gemini.contains("Gemini functionCall"), "{gemini}");
        assert!(err(r#"[{"functionCall":{"name":"a"}}]"#).contains("Gemini part"));
        // capstan's own shape with a stray key still parses.
        assert!(CallRequest::list_from_str(r#"{"name":"a","arguments":{},"input":1}"#).is_ok());
    }
}
