//! The records, and their one JSON shape (a JSON Lines file holds one per
//! line; a host's callbacks see the same text):
//!
//! ```text
//! {"kind":"started","run":R,"call":C,"tool":T,"schema":H,"arguments":H}
//! {"kind":"completed", ...the same..., "result":{"outcome","is_error","content","duration_us","parts"?,"structured_content"?}}
//! {"kind":"tools","run":R,"call":C,"tools":[{"name":T,"schema":H},...]}
//! ```
//!
//! A `tools` record's `call` is the first call id of its batch.

use serde_json::{json, Map, Value};

use super::{Fingerprint, JournalError};
use crate::call::ToolResult;

#[derive(Clone, Debug, PartialEq)]
pub enum RecordKind {
    /// The tool's callback is about to run.
    Started(Fingerprint),
    /// The call's result, as the model read it.
    Completed(Fingerprint, ToolResult),
    /// The tools of the registry when a batch began: (name, schema hash).
    Tools(Vec<(String, String)>),
}

/// One record of run `run`, call `call`.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub run: String,
    pub call: String,
    pub kind: RecordKind,
}

/// What `Journal::lookup` found for a call.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub print: Fingerprint,
    /// `None`: only `started` (the process ended before the result, or
    /// is still running it).
    pub result: Option<ToolResult>,
    /// Only `started`, by a process the store knows to be running still
    /// (the SQLite store, for a process of this machine): the call is in
    /// progress there, not of unknown outcome.
    pub elsewhere: bool,
}

impl Record {
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            RecordKind::Started(_) => "started",
            RecordKind::Completed(..) => "completed",
            RecordKind::Tools(_) => "tools",
        }
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), self.kind_name().into());
        m.insert("run".into(), self.run.clone().into());
        m.insert("call".into(), self.call.clone().into());
        match &self.kind {
            RecordKind::Started(p) => print_fields(&mut m, p),
            RecordKind::Completed(p, result) => {
                print_fields(&mut m, p);
                m.insert("result".into(), result_json(result));
            }
            RecordKind::Tools(tools) => {
                let list = tools
                    .iter()
                    .map(|(name, schema)| json!({"name": name, "schema": schema}))
                    .collect();
                m.insert("tools".into(), Value::Array(list));
            }
        }
        Value::Object(m)
    }

    /// One line of a JSON Lines journal (no newline).
    pub fn to_line(&self) -> String {
        self.to_json().to_string()
    }

    /// Reads a record as `to_json` writes it; the error says what is wrong.
    pub fn from_json(value: &Value) -> Result<Record, JournalError> {
        let bad = |why: &str| JournalError(format!("not a journal record: {why}"));
        let obj = value.as_object().ok_or_else(|| bad("not a JSON object"))?;
        let text = |key: &str| -> Result<String, JournalError> {
            match obj.get(key) {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err(bad(&format!("\"{key}\" must be a string"))),
            }
        };
        let run = text("run")?;
        let call = text("call")?;
        let print = || -> Result<Fingerprint, JournalError> {
            Ok(Fingerprint {
                tool: text("tool")?,
                schema: text("schema")?,
                arguments: text("arguments")?,
            })
        };
        let kind = match text("kind")?.as_str() {
            "started" => RecordKind::Started(print()?),
            "completed" => {
                let print = print()?;
                let mut result = obj
                    .get("result")
                    .ok_or_else(|| bad("a completed record needs \"result\""))?
                    .clone();
                let Some(r) = result.as_object_mut() else {
                    return Err(bad("\"result\" must be an object"));
                };
                if !matches!(r.get("outcome"), Some(Value::String(_))) {
                    return Err(bad("\"result\" needs its \"outcome\""));
                }
                r.insert("id".into(), call.clone().into());
                r.insert("name".into(), print.tool.clone().into());
                let result = ToolResult::from_json(&result, 0)
                    .map_err(|e| bad(&format!("\"result\": {e}")))?;
                RecordKind::Completed(print, result)
            }
            "tools" => {
                let Some(Value::Array(items)) = obj.get("tools") else {
                    return Err(bad("\"tools\" must be an array"));
                };
                let mut tools = Vec::with_capacity(items.len());
                for item in items {
                    match (item.get("name"), item.get("schema")) {
                        (Some(Value::String(n)), Some(Value::String(s))) => {
                            tools.push((n.clone(), s.clone()))
                        }
                        _ => return Err(bad("each of \"tools\" needs \"name\" and \"schema\"")),
                    }
                }
                RecordKind::Tools(tools)
            }
            other => return Err(bad(&format!("unknown kind \"{other}\""))),
        };
        Ok(Record { run, call, kind })
    }

    /// Reads one line of a JSON Lines journal.
    pub fn from_line(line: &str) -> Result<Record, JournalError> {
        let value: Value =
            serde_json::from_str(line).map_err(|e| JournalError(format!("not valid JSON: {e}")))?;
        Record::from_json(&value)
    }

    /// What a lookup of this record's key answers (`None` for `tools`).
    pub fn found(&self) -> Option<Found> {
        match &self.kind {
            RecordKind::Started(p) => Some(Found {
                print: p.clone(),
                result: None,
                elsewhere: false,
            }),
            RecordKind::Completed(p, r) => Some(Found {
                print: p.clone(),
                result: Some(r.clone()),
                elsewhere: false,
            }),
            RecordKind::Tools(_) => None,
        }
    }
}

fn print_fields(m: &mut Map<String, Value>, p: &Fingerprint) {
    m.insert("tool".into(), p.tool.clone().into());
    m.insert("schema".into(), p.schema.clone().into());
    m.insert("arguments".into(), p.arguments.clone().into());
}

/// The result without its id and name (the record's key holds them).
pub(crate) fn result_json(result: &ToolResult) -> Value {
    let mut v = result.to_json();
    if let Some(m) = v.as_object_mut() {
        m.remove("id");
        m.remove("name");
    }
    v
}
