//! OpenAI Chat Completions stream: `chat.completion.chunk` events whose
//! `choices[0].delta` carries `content` text and `tool_calls` fragments
//! keyed by `index` (the first fragment of a call has its `id`, `type` and
//! `function.name`; later ones add to `function.arguments`), then a
//! `finish_reason`, then `data: [DONE]`.
//!
//! A call is complete as soon as its arguments form a whole JSON object
//! (nothing but whitespace can follow one in valid arguments), else when a
//! call with another index starts (the API streams calls one after the
//! other) or when the choice finishes. A fragment adding more than
//! whitespace to arguments that were already whole is reported as a
//! revision (the stream fails if the call already started). A finish
//! reason of `length` or `content_filter` cuts the call still open. Only the
//! first choice (`index` 0) is read, as in the non-streamed parser. Tool
//! calls of another `type` than `function` are skipped. Error: a chunk
//! `{"error": {...}}` is a provider error, as a non-streamed error body.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::emit::{object, provider_error, Assembler, Emit};
use crate::providers::Format;
use capstan_core::call::{Arguments, CallRequest};
use capstan_core::error::Error;

/// Calls arrive one after the other: only the last one can still grow, so
/// each fragment costs the same however many calls came before it.
#[derive(Default)]
pub(crate) struct Chat {
    /// The `index` of every call before the open one: a fragment for one of
    /// them is refused.
    superseded: HashSet<u64>,
    /// The last call started.
    open: Option<Open>,
}

struct Open {
    /// The `index` the fragments carry.
    key: u64,
    position: Option<usize>,
    id: String,
    name: String,
    /// The arguments received so far, until the call is complete (then
    /// they belong to the call reported ready).
    arguments: String,
    whole: Whole,
    done: bool,
}

/// Finds whether growing argument text is one whole JSON object, looking at
/// each byte once and parsing the text once, when its outer braces close
/// (re-parsing the whole text at every fragment ending in `}` would cost
/// the square of its length).
#[derive(Default)]
struct Whole {
    /// Bytes of the text already looked at.
    scanned: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    shape: Shape,
}

#[derive(Clone, Copy, Default, PartialEq)]
enum Shape {
    /// Only whitespace so far.
    #[default]
    Empty,
    /// Inside the outer object.
    Open,
    /// The outer object closed and parsed, followed by whitespace at most.
    Closed,
    /// Can never be one whole object (another first character, text after
    /// the object, or an object that does not parse).
    Never,
}

impl Whole {
    /// Looks at the bytes added to `text` since the last call.
    fn grew(&mut self, text: &str) -> bool {
        let bytes = text.as_bytes();
        let mut closed_at = None;
        for (i, &b) in bytes.iter().enumerate().skip(self.scanned) {
            match self.shape {
                Shape::Never => break,
                Shape::Empty | Shape::Closed if b.is_ascii_whitespace() => {}
                Shape::Empty if b == b'{' => {
                    self.shape = Shape::Open;
                    self.depth = 1;
                }
                Shape::Empty | Shape::Closed => self.shape = Shape::Never,
                Shape::Open if self.in_string => {
                    if self.escaped {
                        self.escaped = false;
                    } else if b == b'\\' {
                        self.escaped = true;
                    } else if b == b'"' {
                        self.in_string = false;
                    }
                }
                Shape::Open => match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            self.shape = Shape::Closed;
                            closed_at = Some(i + 1);
                        }
                    }
                    _ => {}
                },
            }
        }
        self.scanned = bytes.len();
        if let (Some(end), Shape::Closed) = (closed_at, self.shape) {
            if serde_json::from_str::<serde::de::IgnoredAny>(&text[..end]).is_err() {
                self.shape = Shape::Never;
            }
        }
        self.shape == Shape::Closed
    }
}

impl Chat {
    fn complete(open: &mut Open, emit: &mut Emit) -> Result<(), Error> {
        if open.done {
            return Ok(());
        }
        open.done = true;
        let Some(position) = open.position else {
            return Ok(());
        };
        let path = format!("choices[0].delta.tool_calls (index {})", open.key);
        if open.id.is_empty() {
            return Err(Error::InvalidResponse(format!(
                "{path}: tool call has no \"id\""
            )));
        }
        if open.name.is_empty() {
            return Err(Error::InvalidResponse(format!(
                "{path}: function has no \"name\""
            )));
        }
        emit.ready.push((
            position,
            CallRequest {
                id: std::mem::take(&mut open.id),
                name: std::mem::take(&mut open.name),
                arguments: Arguments::Text(std::mem::take(&mut open.arguments)),
            },
        ));
        Ok(())
    }

    fn fragment(&mut self, call: &Value, emit: &mut Emit) -> Result<(), Error> {
        let Some(call) = call.as_object() else {
            return Err(Error::InvalidResponse(
                "choices[0].delta.tool_calls: a tool call fragment is not a JSON object".into(),
            ));
        };
        let key = match call.get("index").and_then(Value::as_u64) {
            Some(k) => k,
            // Without an index: a new call when it has an id, else the last one.
            None => match &self.open {
                Some(last) if call.get("id").is_none_or(Value::is_null) => last.key,
                Some(last) => last.key + 1,
                None => 0,
            },
        };
        if self.superseded.contains(&key) {
            return Err(Error::InvalidResponse(format!(
                "choices[0].delta.tool_calls: a fragment for call index {key} came after a later call started"
            )));
        }
        if self.open.as_ref().is_none_or(|o| o.key != key) {
            if let Some(mut last) = self.open.take() {
                Self::complete(&mut last, emit)?;
                self.superseded.insert(last.key);
            }
            let function = match call.get("type").and_then(Value::as_str) {
                None | Some("function") => true,
                Some(_) => false,
            };
            self.open = Some(Open {
                key,
                position: function.then(|| emit.open()),
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
                whole: Whole::default(),
                done: false,
            });
        }
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        if let Some(Value::String(id)) = call.get("id") {
            if !id.is_empty() && !open.done {
                open.id.clone_from(id);
            }
        }
        if let Some(function) = call.get("function").and_then(Value::as_object) {
            if let Some(Value::String(name)) = function.get("name") {
                if !open.done {
                    open.name.push_str(name);
                }
            }
            if let Some(Value::String(args)) = function.get("arguments") {
                if open.done {
                    if let Some(position) = open.position {
                        let more = !args.trim().is_empty();
                        emit.revised.push((position, args.clone(), more));
                    }
                } else {
                    open.arguments.push_str(args);
                    if open.whole.grew(&open.arguments) {
                        Self::complete(open, emit)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn choice(&mut self, choice: &Map<String, Value>, emit: &mut Emit) -> Result<(), Error> {
        if let Some(delta) = choice.get("delta").and_then(Value::as_object) {
            if let Some(Value::String(text)) = delta.get("content") {
                emit.text(text);
            }
            if let Some(Value::Array(calls)) = delta.get("tool_calls") {
                for call in calls {
                    self.fragment(call, emit)?;
                }
            }
        }
        if let Some(Value::String(reason)) = choice.get("finish_reason") {
            emit.stop_reason = Some(reason.clone());
            emit.terminal = true;
            if reason == "length" || reason == "content_filter" {
                self.close(emit);
            } else if let Some(open) = self.open.as_mut() {
                Self::complete(open, emit)?;
            }
        }
        Ok(())
    }
}

impl Assembler for Chat {
    fn event(&mut self, _name: &str, data: &str, emit: &mut Emit) -> Result<(), Error> {
        if data.trim() == "[DONE]" {
            emit.terminal = true;
            return Ok(());
        }
        let chunk = object(data)?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(provider_error(
                Format::OpenAiChat,
                &Value::Object(chunk),
                "error chunk",
            ));
        }
        let Some(Value::Array(choices)) = chunk.get("choices") else {
            return Ok(());
        };
        let first = choices
            .iter()
            .filter_map(Value::as_object)
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0);
        match first {
            Some(choice) => self.choice(choice, emit),
            None => Ok(()),
        }
    }

    fn close(&mut self, emit: &mut Emit) {
        let reason = match emit.stop_reason.as_deref() {
            Some(r) => format!("finish_reason \"{r}\""),
            None => "the end of the stream".to_owned(),
        };
        if let Some(open) = self.open.as_mut() {
            if !open.done {
                open.done = true;
                if let Some(position) = open.position {
                    emit.cut(
                        position,
                        &open.id,
                        &open.name,
                        &open.arguments,
                        format!("the response ended ({reason}) before this call's arguments were complete"),
                    );
                }
            }
        }
    }

    fn buffered(&self) -> usize {
        let open = self
            .open
            .as_ref()
            .map_or(0, |c| c.arguments.len() + c.name.len() + c.id.len());
        open + self.superseded.len() * std::mem::size_of::<u64>()
    }
}
