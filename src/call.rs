//! Calls in, results out: the normalized JSON shapes every other module speaks.
//!
//! Call: `{"id": "...", "name": "...", "arguments": {...}}`; `arguments` may be
//! a string holding a JSON object (as OpenAI sends it) and may be absent (`{}`).
//! Result: `{"id", "name", "content", "is_error", "outcome", "duration_us"}`.

use serde_json::{Map, Value};

use crate::error::Error;

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
        let name = match obj.remove("name") {
            Some(Value::String(s)) => s,
            Some(_) => {
                return Err(Error::InvalidCalls(format!(
                    "call {index}: \"name\" must be a string"
                )))
            }
            None => {
                return Err(Error::InvalidCalls(format!(
                    "call {index}: missing \"name\""
                )))
            }
        };
        let id = match obj.remove("id") {
            Some(Value::String(s)) => s,
            Some(Value::Number(n)) => n.to_string(),
            None | Some(Value::Null) => format!("call_{index}"),
            Some(_) => {
                return Err(Error::InvalidCalls(format!(
                    "call {index}: \"id\" must be a string"
                )))
            }
        };
        let arguments = match obj.remove("arguments") {
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

    /// Reads calls from JSON text.
    pub fn list_from_str(text: &str) -> Result<Vec<CallRequest>, Error> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::InvalidCalls(format!("calls are not valid JSON: {e}")))?;
        CallRequest::list_from_json(value)
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
        Ok(ToolResult {
            id,
            name,
            content,
            outcome,
            duration_us,
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
