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

use serde_json::{Map, Value};

use super::emit::{object, provider_error, Assembler, Emit};
use crate::call::{Arguments, CallRequest};
use crate::error::Error;
use crate::providers::Format;

#[derive(Default)]
pub(crate) struct Chat {
    calls: Vec<Open>,
}

struct Open {
    /// The `index` the fragments carry.
    key: u64,
    position: Option<usize>,
    id: String,
    name: String,
    arguments: String,
    done: bool,
    /// Completed because a call with another index started: no fragment may follow.
    superseded: bool,
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
                id: open.id.clone(),
                name: open.name.clone(),
                arguments: Arguments::Text(open.arguments.clone()),
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
            None => match self.calls.last() {
                Some(last) if call.get("id").is_none_or(Value::is_null) => last.key,
                Some(last) => last.key + 1,
                None => 0,
            },
        };
        if !self.calls.iter().any(|c| c.key == key) {
            for open in &mut self.calls {
                Self::complete(open, emit)?;
                open.superseded = true;
                open.arguments = String::new();
            }
            let function = match call.get("type").and_then(Value::as_str) {
                None | Some("function") => true,
                Some(_) => false,
            };
            self.calls.push(Open {
                key,
                position: function.then(|| emit.open()),
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
                done: false,
                superseded: false,
            });
        }
        let Some(open) = self.calls.iter_mut().find(|c| c.key == key) else {
            return Ok(());
        };
        if open.superseded {
            return Err(Error::InvalidResponse(format!(
                "choices[0].delta.tool_calls: a fragment for call index {key} came after a later call started"
            )));
        }
        if let Some(Value::String(id)) = call.get("id") {
            if !id.is_empty() {
                open.id.clone_from(id);
            }
        }
        if let Some(function) = call.get("function").and_then(Value::as_object) {
            if let Some(Value::String(name)) = function.get("name") {
                open.name.push_str(name);
            }
            if let Some(Value::String(args)) = function.get("arguments") {
                open.arguments.push_str(args);
                if open.done {
                    if let Some(position) = open.position {
                        let more = !args.trim().is_empty();
                        emit.revised.push((position, open.arguments.clone(), more));
                    }
                } else if whole_object(&open.arguments) {
                    Self::complete(open, emit)?;
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
            } else {
                for open in &mut self.calls {
                    Self::complete(open, emit)?;
                }
            }
        }
        Ok(())
    }
}

/// The text is one whole JSON object (checked only when it ends with `}`).
fn whole_object(text: &str) -> bool {
    let text = text.trim();
    text.starts_with('{')
        && text.ends_with('}')
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
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
        for open in &mut self.calls {
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
        self.calls
            .iter()
            .filter(|c| !c.done)
            .map(|c| c.arguments.len() + c.name.len() + c.id.len())
            .sum()
    }
}
